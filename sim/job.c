/*
 * job.c: the one job resolver (job.h).  Values the user leaves out come
 * from sim/defaults.h (global batch, memory cap), the model (sequence
 * length), the framework row (layout defaults, switches) and the tables
 * (GPU, preset); each resolved value keeps a note saying which, for the
 * commands to echo.
 */
#include "job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defaults.h"
#include "des.h"
#include "predict.h"
#include "profile.h"
#include "schedule.h"
#include "suggest.h"
#include "units.h"

void job_init(struct job *j)
{
	memset(j, 0, sizeof *j);
	fw_switches_none(&j->switches);
	j->profile_cond.ranks = j->profile_cond.ranks_per_host = -1;
	j->profile_cond.load_1m = j->profile_cond.cpu_mhz = NAN;
}

/* ---- resolution, one value at a time ----------------------------------------- */

/* The dense transformer of the zoo nearest n parameters, in ratio; NULL if the zoo has
 * none within PARAMS_MAX_RATIO (then *nearest is the closest anyway). */
static const struct model_spec *nearest_dense(double n,
					      const struct model_spec **nearest)
{
	int count;
	const struct model_spec *z = model_zoo(&count), *best = NULL;
	double best_r = INFINITY;
	for (int i = 0; i < count; i++) {
		double p = model_params_total(&z[i]);
		double r = p > n ? p / n : n / p;
		if (z[i].num_experts > 1 || model_is_hybrid(&z[i]))
			continue; /* an MoE or a hybrid model is asked for by name */
		if (r < best_r) {
			best_r = r;
			best = &z[i];
		}
	}
	*nearest = best;
	return best_r <= PARAMS_MAX_RATIO ? best : NULL;
}

static enum pplan_status resolve_model(struct job *in, struct perr *e)
{
	double n;
	const struct model_spec *m, *near;
	char a[32], b[32];

	if (in->model_arg && in->params_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--model and --params conflict: give one of them");
	if (in->model_given) {
		in->model = *in->model_given;
		snprintf(in->model_note, sizeof in->model_note, "%s",
			 in->model_given_note ? in->model_given_note : "");
		return PPLAN_OK;
	}
	if (in->model_arg) {
		enum pplan_status st = model_resolve(in->model_arg, &in->model, e);
		size_t len = strlen(in->model_arg), used = strlen(e->msg);
		int file = strchr(in->model_arg, '/') ||
			   (len > 5 && strcmp(in->model_arg + len - 5, ".json") == 0);
		if (st != PPLAN_OK && !file && used < sizeof e->msg)
			snprintf(e->msg + used, sizeof e->msg - used,
				 " (see pplan search --list-models)");
		return st;
	}
	if (!in->params_arg)
		return perr_set(e, PPLAN_EINPUT,
				"no model: give --model NAME|FILE or --params N (e.g. --params 70B)");
	if (units_parse_count_binary(in->params_arg, &n) != 0 || !(n >= 1e6) || !isfinite(n))
		return perr_set(e, PPLAN_EINPUT,
				"--params must be a parameter count of at least 1M, like 70B, 405B or 1.5T, got '%s'",
				in->params_arg);
	m = nearest_dense(n, &near);
	units_format_count(a, sizeof a, n);
	units_format_count(b, sizeof b, model_params_total(near));
	if (!m)
		return perr_set(e, PPLAN_EINPUT,
				"--params %s: no dense zoo model is within %.0f %% of %s parameters (the nearest is %s with %s); give the model itself with --model FILE",
				in->params_arg, 100 * (PARAMS_MAX_RATIO - 1), a,
				near->name, b);
	in->model = *m;
	snprintf(in->model_note, sizeof in->model_note,
		 "the dense zoo model nearest --params %s", in->params_arg);
	return PPLAN_OK;
}

/* Nodes and GPUs per node from --gpus, --nodes and --gpus-per-node. */
static enum pplan_status size_cluster(struct job *in, struct perr *e)
{
	struct cluster *c = &in->cluster;
	long node = c->gpus_per_node, gpn = in->gpus_per_node, nodes = in->nodes;

	if (!in->gpus && !nodes && !gpn)
		return PPLAN_OK;
	if (!gpn) {
		if (in->gpus && !nodes && in->gpus < node)
			gpn = in->gpus; /* part of one node */
		else if (in->gpus && nodes && in->gpus % nodes == 0)
			gpn = in->gpus / nodes;
		else
			gpn = node;
	}
	if (!nodes) {
		if (in->gpus && in->gpus % gpn != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--gpus %ld is not a whole number of %s nodes of %ld GPUs; give --nodes N and --gpus-per-node G for a cluster that is not",
					in->gpus, c->name, gpn);
		nodes = in->gpus ? in->gpus / gpn : 1;
	}
	if (in->gpus && in->gpus != nodes * gpn)
		return perr_set(e, PPLAN_EINPUT,
				"--gpus %ld conflicts with %ld nodes of %ld GPUs: give --gpus, or --nodes and --gpus-per-node",
				in->gpus, nodes, gpn);
	if (gpn > node)
		return perr_set(e, PPLAN_EINPUT,
				"--gpus-per-node %ld: a %s node has %ld GPUs", gpn,
				c->name, node);
	if (gpn < node)
		snprintf(in->cluster_note, sizeof in->cluster_note,
			 "%ld of each node's %ld GPUs", gpn, node);
	return cluster_size(c, nodes, (int)gpn, e);
}

static int cluster_is_file(const struct job *in)
{
	return in->cluster_arg && (strchr(in->cluster_arg, '/') || strstr(in->cluster_arg, ".json"));
}

int job_names_size(const struct job *j)
{
	return j->gpus || j->nodes || cluster_is_file(j) || j->profile_arg;
}

static enum pplan_status resolve_cluster(struct job *in, int need_gpus,
					 struct perr *e)
{
	enum pplan_status st;
	int is_file = cluster_is_file(in);

	if (in->cluster_arg && in->gpu_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--cluster and --gpu conflict: a cluster names its GPU");
	if (need_gpus && !in->gpus && !in->nodes && !is_file)
		return perr_set(e, PPLAN_EINPUT,
				"--gpus is required (e.g. --gpus 512), or --nodes N");
	if (in->gpu_arg) {
		int approx = 0;
		const struct gpu_spec *g = gpu_find_loose(in->gpu_arg, &approx);
		if (!g) {
			char list[256], dym[96];
			int n;
			const struct gpu_spec *t = gpu_table(&n);
			gpu_list_names(list, sizeof list, ", ");
			return perr_set(e, PPLAN_EINPUT, "unknown GPU '%s'%s (%s)",
					in->gpu_arg,
					suggest_phrase(dym, sizeof dym,
						       suggest_table(in->gpu_arg, t, (size_t)n,
								     sizeof *t, 1)),
					list);
		}
		st = cluster_for_gpu(g, &in->cluster, e);
		if (st != PPLAN_OK)
			return st;
		if (approx) /* a PCIe or NVL card: its chip's SXM part */
			snprintf(in->cluster.source, sizeof in->cluster.source,
				 "--gpu %s priced as the SXM %s: pplan has no PCIe or NVL parts",
				 in->gpu_arg, g->name);
	} else {
		st = cluster_resolve(in->cluster_arg ? in->cluster_arg : "dgx-h100",
				     0, &in->cluster, e);
		if (st != PPLAN_OK)
			return st;
		if (!in->cluster_arg)
			snprintf(in->cluster.source, sizeof in->cluster.source,
				 "preset dgx-h100, the default");
	}
	return size_cluster(in, e);
}

/* --bf16-layers: an fp8-class run's end layers in bf16, as
 * Megatron-Core's first_last_layers_bf16 keeps them; refused where
 * Megatron-Core refuses them (delayed scaling) or where they mean nothing
 * (a bf16 run, more layers than the model). */
static enum pplan_status job_bf16_layers(struct job *in, struct perr *e)
{
	const char *who = in->bf16_where ? in->bf16_where : "--bf16-layers";
	in->opts.bf16_first = in->opts.bf16_last = 0;
	if (!in->bf16_given || (in->bf16_first == 0 && in->bf16_last == 0))
		return PPLAN_OK;
	if (in->opts.precision != PREC_FP8)
		return perr_set(e, PPLAN_EINPUT,
				"%s keeps the end layers of an fp8, mxfp8 or nvfp4 run in bf16, and this run is %s already",
				who, precision_name(in->opts.precision));
	if (in->opts.b.fp8_recipe == FP8_DELAYED)
		return perr_set(e, PPLAN_EINPUT,
				"%s with fp8 delayed scaling: Megatron-Core keeps no layer in bf16 under it (give a recipe: fp8-cs, fp8-blockwise, mxfp8, nvfp4)",
				who);
	if ((long)in->bf16_first + in->bf16_last > in->model.layers)
		return perr_set(e, PPLAN_EINPUT,
				"%s %d,%d: %d layers in bf16, more than the %ld of %s", who,
				in->bf16_first, in->bf16_last, in->bf16_first + in->bf16_last,
				(long)in->model.layers, in->model.name);
	in->opts.bf16_first = in->bf16_first;
	in->opts.bf16_last = in->bf16_last;
	return PPLAN_OK;
}

static enum pplan_status resolve_training(struct job *in, struct perr *e)
{
	const struct gpu_spec *g = &in->cluster.gpu;
	const char *pnote = NULL;
	char why[256];
	enum pplan_status st;

	train_opts_default(&in->opts, &in->model);
	if (in->lora_rank >= in->model.hidden)
		return perr_set(e, PPLAN_EINPUT,
				"LoRA rank %d is not below the hidden size of %s (%ld): no low-rank adapter",
				in->lora_rank, in->model.name, in->model.hidden);
	in->opts.lora_rank = in->lora_rank;
	if (in->lora_targets && in->lora_rank <= 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s names the linears LoRA adapts, but the job trains every weight%s",
				in->targets_where ? in->targets_where : "--lora-targets",
				in->targets_where ? " (no LoRA)" : ": give --peft lora");
	if (in->lora_rank > 0) {
		unsigned t = in->lora_targets ? in->lora_targets : LORA_TARGETS_DEFAULT;
		unsigned has = model_lora_present(&in->model, t);
		char asked[192], all[192];
		if (!has)
			return perr_set(e, PPLAN_EINPUT,
					"LoRA on %s adapts no linear of %s (its linears: %s)",
					lora_targets_format(t, ", ", asked, sizeof asked), in->model.name,
					lora_targets_format(model_lora_present(&in->model, LORA_TARGET_ALL),
							    ", ", all, sizeof all));
		in->opts.lora_targets = has; /* what is priced, and emitted */
	}
	if (in->seq) {
		in->opts.seq = in->seq;
		in->model.seq = in->seq; /* layout_check divides this one */
		snprintf(in->seq_note, sizeof in->seq_note, "%s", in->from_where ? in->from_where : "--seq");
	} else {
		snprintf(in->seq_note, sizeof in->seq_note, "the model's");
	}
	snprintf(in->precision_note, sizeof in->precision_note, "%s",
		 in->from_where && in->precision_arg ? in->from_where
		 : in->precision_arg ? "--precision" : "default");
	if (in->cpu_ranks)
		in->opts.precision = PREC_FP32;
	else if (in->precision_arg &&
	    precision_parse_recipe(in->precision_arg, &in->opts.precision, &pnote) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"--precision must be bf16, fp16 or fp8 (or an fp8 recipe: fp8-cs, mxfp8, ...; nvfp4), got '%s'",
				in->precision_arg);
	if (pnote)
		snprintf(in->precision_note, sizeof in->precision_note, "%s", pnote);
	if (in->precision_arg && fp8_recipe_of(in->precision_arg) != FP8_FRAMEWORK)
		in->switches.fp8_recipe = fp8_recipe_of(in->precision_arg);
	/* a GPU without bf16 (V100, P100) trains in fp16 by default */
	if (!in->cpu_ranks && !in->precision_arg && g->peak_tflops[PREC_BF16] <= 0 &&
	    g->peak_tflops[PREC_FP16] > 0) {
		in->opts.precision = PREC_FP16;
		snprintf(in->precision_note, sizeof in->precision_note,
			 "default: the %s has no bf16", g->name);
	}
	if (g->peak_tflops[in->opts.precision] <= 0) {
		char has[64] = "";
		for (int p = 0; p < PREC_COUNT; p++)
			if (g->peak_tflops[p] > 0)
				snprintf(has + strlen(has), sizeof has - strlen(has), "%s%s",
					 has[0] ? ", " : "", precision_name((enum precision)p));
		snprintf(in->unpriced, sizeof in->unpriced,
			 "%s has no %s tensor-core rate, so pplan cannot price %s on it; it has %s (--precision)",
			 g->name, precision_name(in->opts.precision),
			 precision_name(in->opts.precision), has[0] ? has : "none");
		/* pplan exec still runs it, unpriced (job_price says why) */
		if (in->ranks != JOB_EXEC_GPU)
			return perr_set(e, PPLAN_EINPUT, "%s", in->unpriced);
	} else if (!in->cpu_ranks && in->precision_arg &&
		   fp8_recipe_refused(g, fp8_recipe_of(in->precision_arg), why, sizeof why)) {
		/* refused once here, not by every layout of a search */
		return perr_set(e, PPLAN_EINPUT, "--precision %s: %s", in->precision_arg, why);
	} else {
		in->unpriced[0] = '\0';
	}
	/* the framework line's notes, said afresh on every resolution: how
	 * --framework's version was read, then the GPU's limits below */
	in->attention_note[0] = '\0';
	if (in->framework_arg) {
		char note[192];
		st = framework_parse_note(in->framework_arg, &in->opts.fw, note, sizeof note, e);
		if (st != PPLAN_OK) {
			perr_prefix(e, "--framework");
			return st;
		}
		if (note[0])
			snprintf(in->attention_note, sizeof in->attention_note, "; %s", note);
	}
	if (in->framework_given)
		in->opts.fw = in->framework_given;
	/* pplan exec's job, and CPU ranks (which only pplan exec runs), are
	 * priced as the executor trains: its framework row. */
	if (!in->framework_arg && !in->framework_given &&
	    (in->ranks != JOB_PLANNED || in->cpu_ranks))
		in->opts.fw = framework_executor();
	in->opts.switches = in->switches;
	/* CPU ranks run the three-step attention unless set by hand or by
	 * --framework (ring attention fuses it: job_resolve_layout, once cp
	 * is known). */
	if (in->cpu_ranks && !in->framework_arg && in->opts.switches.flash < 0)
		in->opts.switches.flash = in->layout_cp > 1;
	st = train_opts_resolve(&in->opts, e);
	if (st != PPLAN_OK)
		return st;
	st = job_bf16_layers(in, e);
	if (st != PPLAN_OK)
		return st;
	if (train_opts_fit_gpu(&in->opts, g)) {
		size_t n = strlen(in->attention_note);
		snprintf(in->attention_note + n, sizeof in->attention_note - n,
			 "; flash attention needs Ampere or newer, so unfused on the %s", g->name);
	}
	if (train_opts_fit_tp_overlap(&in->opts, g)) {
		size_t n = strlen(in->attention_note);
		snprintf(in->attention_note + n, sizeof in->attention_note - n,
			 "; TP overlap needs Ampere or newer, so off on the %s", g->name);
	}
	if (in->profile_arg) {
		in->opts.params = &in->profile_constants;
		if (!curve_set_empty(&in->curves))
			in->opts.curves = &in->curves;
	}
	if (in->order_arg) {
		st = rank_order_parse(in->order_arg, &in->opts.order, e);
		if (st != PPLAN_OK)
			return st;
	}
	if (in->max_memory_gib > g->mem_gib)
		return perr_set(e, PPLAN_EINPUT,
				"--max-memory-gib %.1f is more than the %.1f GiB of a %s",
				in->max_memory_gib, g->mem_gib, g->name);
	if (in->max_memory_gib > 0) {
		in->opts.max_memory_gib = in->max_memory_gib;
		snprintf(in->mem_note, sizeof in->mem_note, "--max-memory-gib");
	} else {
		in->opts.max_memory_gib = defaults_memory_cap_gib(g);
		snprintf(in->mem_note, sizeof in->mem_note,
			 "default: %.0f %% of the %s's %.1f GiB, the rest headroom for allocator fragmentation spikes and communicator buffers",
			 100 * DEFAULT_MEMORY_FRACTION, g->name, g->mem_gib);
	}
	return PPLAN_OK;
}

static enum pplan_status resolve_batch(struct job *in, struct perr *e)
{
	long seq = in->opts.seq;
	if (in->gbs && in->tokens_per_step)
		return perr_set(e, PPLAN_EINPUT,
				"--global-batch and --tokens-per-step conflict: give one of them");
	if (in->gbs) {
		in->global_batch = in->gbs;
		snprintf(in->gbs_note, sizeof in->gbs_note, "--global-batch");
	} else if (in->tokens_per_step) {
		long n = (in->tokens_per_step + seq / 2) / seq;
		char a[32];
		if (n < 1)
			return perr_set(e, PPLAN_EINPUT,
					"--tokens-per-step %ld is less than one sequence of %ld tokens",
					in->tokens_per_step, seq);
		in->global_batch = n;
		units_format_count(a, sizeof a, (double)in->tokens_per_step);
		if (n * seq == in->tokens_per_step)
			snprintf(in->gbs_note, sizeof in->gbs_note, "--tokens-per-step");
		else
			snprintf(in->gbs_note, sizeof in->gbs_note,
				 "--tokens-per-step %s rounded to whole %ld-token sequences", a,
				 seq);
	} else {
		struct batch_default d;
		if (in->opts.lora_rank > 0)
			defaults_finetune_batch(seq, cluster_gpus(&in->cluster), &d);
		else
			defaults_global_batch(&in->model, seq, cluster_gpus(&in->cluster), &d);
		in->global_batch = d.sequences;
		snprintf(in->gbs_note, sizeof in->gbs_note, "%s", d.origin);
	}
	return PPLAN_OK;
}

/* pplan exec's CPU ranks before it has measured them: one host of
 * `ranks` CPU ranks at placeholder rates, enough to complete and check a
 * layout; job_set_cpu_machine puts the measured machine in its place. */
static void cpu_ranks_unmeasured(long ranks, struct cluster *c)
{
	struct cpu_ranks r = {
		.per_host = (int)(ranks < CLUSTER_MAX_NODE_GPUS ? ranks : CLUSTER_MAX_NODE_GPUS),
		.hosts = 1, .tflops = 1.0, .gbps = 10.0, .shm_gbps = 2.5, .shm_latency_s = 2e-6,
		.mem_gib = 1e6, .description = "",
		.source = "this host's CPU ranks, not yet measured" };
	cluster_cpu_ranks(&r, c);
}

/* --profile: its constants and measured curves; a CPU profile (device
 * "cpu", what `pplan calibrate --backend cpu` writes) is also the machine:
 * as many CPU ranks on its host as the GPUs asked for, priced in fp32.
 * Any other profile must describe the cluster's GPU. */
static enum pplan_status resolve_profile(struct job *in, int need_gpus,
					 struct perr *e)
{
	struct profile pr;
	enum pplan_status st;
	if (!in->profile_arg) {
		in->cpu_ranks = in->ranks == JOB_EXEC_CPU;
		if (in->cluster_given)
			in->cluster = *in->cluster_given;
		else if (in->have_machine)
			in->cluster = in->machine;
		else if (in->cpu_ranks)
			cpu_ranks_unmeasured(in->gpus ? in->gpus : 1, &in->cluster);
		else
			return resolve_cluster(in, need_gpus, e);
		return PPLAN_OK;
	}
	if ((st = profile_load(in->profile_arg, &pr, e)) != PPLAN_OK)
		return st;
	in->profile_cond = pr.cond;
	in->profile_cores = pr.has_host ? pr.cores : 0;
	in->cpu_ranks = !strcmp(pr.device_name, "cpu");
	if (in->ranks != JOB_PLANNED && in->cpu_ranks != (in->ranks == JOB_EXEC_CPU)) {
		st = perr_set(e, PPLAN_EINPUT, "%s: the profile describes %s, but %s",
			      in->profile_arg, in->cpu_ranks ? "CPU ranks" : pr.device_name,
			      in->ranks == JOB_EXEC_CPU ? "--backend cpu runs on CPU ranks"
							: "the run is on GPUs");
		profile_free(&pr);
		return st;
	}
	if (in->cpu_ranks && (in->cluster_arg || in->gpu_arg))
		st = perr_set(e, PPLAN_EINPUT,
			      "%s describes CPU ranks, the machine itself: leave out %s",
			      in->profile_arg, in->cluster_arg ? "--cluster" : "--gpu");
	else if (in->cpu_ranks && need_gpus && !in->gpus)
		st = perr_set(e, PPLAN_EINPUT, "--gpus is required: the CPU ranks to price");
	else if (in->cpu_ranks && (in->nodes > 1 || in->gpus_per_node))
		st = perr_set(e, PPLAN_EINPUT,
			      "%s describes the CPU ranks of one host: --nodes and --gpus-per-node do not apply",
			      in->profile_arg);
	else if (in->cpu_ranks)
		st = curve_cpu_cluster(&pr, in->gpus ? in->gpus : 1, &in->cluster, e);
	else
		st = resolve_cluster(in, need_gpus, e);
	if (st == PPLAN_OK && in->cpu_ranks && in->precision_arg &&
	    strcmp(in->precision_arg, "fp32") != 0)
		st = perr_set(e, PPLAN_EINPUT,
			      "%s describes CPU ranks, which compute in fp32, not --precision %s",
			      in->profile_arg, in->precision_arg);
	/* pplan exec's GPU is known once it answers (job_set_gpu_found) */
	if (st == PPLAN_OK && !(in->ranks == JOB_EXEC_GPU && !in->gpu_arg))
		st = profile_check_device(&pr, in->profile_arg, &in->cluster, in->cpu_ranks, e);
	if (st == PPLAN_OK) {
		in->profile_constants = pr.constants;
		curve_set_from_profile(&in->curves, &pr);
	}
	profile_free(&pr);
	return st;
}

enum pplan_status job_resolve(struct job *in, int need_gpus, struct perr *e)
{
	enum pplan_status st;
	if ((st = resolve_model(in, e)) != PPLAN_OK ||
	    (st = resolve_profile(in, need_gpus, e)) != PPLAN_OK ||
	    (st = resolve_training(in, e)) != PPLAN_OK ||
	    (st = resolve_batch(in, e)) != PPLAN_OK)
		return st;
	if (cluster_gpus(&in->cluster) > 0)
		/* a LoRA run checkpoints its adapters (NeMo's PEFT checkpoints) */
		return goodput_compute(&in->goodput_opts, cluster_gpus(&in->cluster),
				       in->opts.lora_rank > 0
					       ? model_lora_params(&in->model, in->opts.lora_rank,
								   in->opts.lora_targets)
					       : model_params_total(&in->model),
				       &in->goodput, e);
	return PPLAN_OK;
}

enum pplan_status job_resolve_layout(struct job *in, const char *layout_arg,
				     struct layout *l, struct perr *e)
{
	unsigned set = 0;
	enum pplan_status st = layout_parse(layout_arg, l, &set, e);
	return st != PPLAN_OK ? st : job_resolve_parsed(in, l, set, e);
}

/* --pipeline-layout over the resolved model: vp and the split that puts
 * every virtual stage's layers where the string does (layout.h); MTP
 * layers it counts as layers of the split become transformer layers
 * after the model's (sim/MODEL.md 9), said in pp_layout_note. */
static enum pplan_status apply_pp_layout(struct job *in, struct layout *l, unsigned *set,
					 struct perr *e)
{
	struct pp_layout pl;
	char why[400];
	const unsigned split = LK_VP | LK_PP_FIRST | LK_PP_LAST | LK_PP_EMBED | LK_PP_LOSS;
	int vp_given = (*set & LK_VP) ? l->vp : 0;
	if (*set & (split & ~LK_VP))
		return perr_set(e, PPLAN_EINPUT,
				"--pipeline-layout and pp_first, pp_last, pp_embed or pp_loss in --layout conflict: the layout string is the split");
	if (in->model.mixers[0] || in->model.ffns[0])
		return perr_set(e, PPLAN_EINPUT,
				"--pipeline-layout: %s is a hybrid stack, whose layers the string's t does not name",
				in->model.name);
	if (layout_apply_pp_layout(in->pp_layout_arg, in->model.layers, l, &pl, why, sizeof why) != 0)
		return perr_set(e, PPLAN_EINPUT, "--pipeline-layout %s", why);
	if (vp_given && vp_given != l->vp)
		return perr_set(e, PPLAN_EINPUT,
				"vp=%d in --layout and --pipeline-layout's %d virtual stages per pipeline rank conflict",
				vp_given, l->vp);
	*set |= split;
	in->pp_layout = in->pp_layout_arg;
	in->pp_layout_note[0] = '\0';
	if (pl.mtp_as_layers) {
		char note[sizeof in->pp_layout_note - 8];
		if (model_add_mtp_layers(&in->model, pl.mtp, note, sizeof note, e) != PPLAN_OK) {
			perr_prefix(e, "--pipeline-layout");
			return PPLAN_EINPUT;
		}
		in->mtp_layers = pl.mtp;
		snprintf(in->pp_layout_note, sizeof in->pp_layout_note, "its %s", note);
	} else if (pl.mtp > 0) {
		snprintf(in->pp_layout_note, sizeof in->pp_layout_note,
			 "its %d multi-token-prediction layer%s (m) not priced", pl.mtp,
			 pl.mtp == 1 ? "" : "s");
	}
	return PPLAN_OK;
}

enum pplan_status job_resolve_parsed(struct job *in, struct layout *l, unsigned set,
				     struct perr *e)
{
	enum pplan_status st;

	if (!in->gpus && !in->nodes && !in->cluster_arg && !in->cluster_given) {
		long dp = (set & LK_DP) ? l->dp : 1;
		in->gpus = (long)l->tp * l->pp * l->cp * dp;
	}
	st = job_resolve(in, 1, e);
	if (st != PPLAN_OK || (in->pp_layout_arg && (st = apply_pp_layout(in, l, &set, e)) != PPLAN_OK))
		return st;
	return job_complete_layout(in, l, set, e);
}

enum pplan_status job_complete_layout(struct job *in, struct layout *l, unsigned set,
				      struct perr *e)
{
	enum reject why = REJECT_NONE;
	enum pplan_status st;

	layout_complete(l, set, cluster_gpus(&in->cluster));
	if (in->ranks != JOB_PLANNED && layout_gpus(l) != in->gpus)
		return perr_set(e, PPLAN_EINPUT,
				"the layout uses %ld ranks (tp %d x pp %d x dp %d x cp %d) but %ld were started: run it with mpirun -np %ld",
				layout_gpus(l), l->tp, l->pp, l->dp, l->cp, in->gpus, layout_gpus(l));
	framework_fill_layout(in->opts.fw, set, l);
	if (!(set & LK_GBS) && in->opts.fw->batch_microbatches > 0 && !in->gbs &&
	    !in->tokens_per_step) {
		l->gbs = (long)l->mbs * l->dp * l->pp * in->opts.fw->batch_microbatches;
		in->global_batch = l->gbs;
		snprintf(in->gbs_note, sizeof in->gbs_note,
			 "default of %s: %d microbatches per pipeline stage and replica",
			 in->opts.fw->label, in->opts.fw->batch_microbatches);
	} else if (!(set & LK_GBS)) {
		l->gbs = in->global_batch;
	} else if (!in->gbs && !in->tokens_per_step) {
		in->global_batch = l->gbs;
		snprintf(in->gbs_note, sizeof in->gbs_note, "%s",
			 in->from_where ? in->from_where : "gbs in --layout");
	} else {
		return perr_set(e, PPLAN_EINPUT,
				"gbs in --layout and --global-batch/--tokens-per-step conflict: give one");
	}
	in->layout_cp = l->cp;
	if (l->cp > 1 && in->cpu_ranks && !in->framework_arg &&
	    (st = resolve_training(in, e)) != PPLAN_OK)
		return st;
	return layout_check_part(l, &in->model, cluster_gpus(&in->cluster),
				 in->opts.b.partition, &why, e);
}

static enum pplan_status resolve_machine(struct job *j, struct perr *e);

enum pplan_status job_set_cpu_machine(struct job *j, const struct cluster *measured,
				      struct perr *e)
{
	j->ranks = JOB_EXEC_CPU;
	if (j->profile_arg && j->cpu_ranks)
		return PPLAN_OK; /* the profile describes the ranks */
	j->machine = *measured;
	j->have_machine = 1;
	return resolve_machine(j, e);
}

enum pplan_status job_set_gpu_found(struct job *j, const char *device, long ranks,
				    struct perr *e)
{
	const struct gpu_spec *g;
	j->ranks = JOB_EXEC_GPU;
	if (j->gpu_arg)
		return PPLAN_OK;
	if (!(g = gpu_find_in_description(device)))
		return perr_set(e, PPLAN_EINPUT, "cannot tell which GPU '%s' is: give --gpu", device);
	snprintf(j->gpu_found, sizeof j->gpu_found, "%s", g->name);
	j->gpu_arg = j->gpu_found;
	j->gpus = ranks;
	return resolve_machine(j, e);
}

/* The machine again, and the training options for it. */
static enum pplan_status resolve_machine(struct job *j, struct perr *e)
{
	enum pplan_status st = resolve_profile(j, 1, e);
	return st != PPLAN_OK ? st : resolve_training(j, e);
}

enum pplan_status job_price(const struct job *j, const struct layout *l, int timeline,
			    struct job_price *out, struct perr *e)
{
	enum pplan_status st;
	struct des_costs k;
	struct des_result r;
	struct pipe_schedule *s = NULL;

	memset(out, 0, sizeof *out);
	if (j->unpriced[0])
		return perr_set(e, PPLAN_EINPUT, "%s", j->unpriced);
	if ((st = predict_layout(&j->model, &j->cluster, l, &j->opts, &out->p, e)) != PPLAN_OK ||
	    (st = predict_check(l, &out->p, e)) != PPLAN_OK || !timeline)
		return st;
	if (!(out->stage_mem = calloc((size_t)l->pp, sizeof *out->stage_mem)))
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the prediction");
	for (int i = 0; i < l->pp; i++)
		memory_stage(&j->model, &j->cluster, l, &j->opts, i, &out->stage_mem[i]);
	predict_des_costs(l, &j->opts, &out->p, &k);
	st = schedule_build(l, out->p.microbatches,
			    schedule_act_bytes(l, j->model.hidden, j->model.seq,
					       precision_bytes(j->opts.precision)),
			    &s, e);
	if (st == PPLAN_OK)
		st = des_run(s, &k, DES_TIMES, &r, e);
	if (st == PPLAN_OK) {
		st = run_timeline_predicted(&out->p, s, &r, &out->tl, e);
		des_result_free(&r);
	}
	schedule_free(s);
	return st;
}

void job_price_free(struct job_price *pr)
{
	run_timeline_free(&pr->tl);
	free(pr->stage_mem);
	pr->stage_mem = NULL;
}

struct job_train_time job_train_time(const struct job *j, const struct prediction *p)
{
	struct job_train_time t = { 0 };
	t.seconds = goodput_train_seconds(&j->goodput, j->train_tokens, p->tokens_per_s);
	t.gpu_hours = t.seconds * (double)cluster_gpus(&j->cluster) / 3600.0;
	t.cost = t.gpu_hours * j->goodput_opts.gpu_hour_cost;
	return t;
}
