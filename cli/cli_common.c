/*
 * cli_common.c: shared options, their defaults and their resolution
 * (cli_common.h); what the subcommands print from them is in cli_print.c.  Values the user leaves out come from sim/defaults.h
 * (global batch, memory cap), the model (sequence length) and the tables
 * (GPU, preset); each resolved value keeps a note saying which, and
 * cli_print_config echoes them.
 */
#include "cli_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "defaults.h"
#include "jsonio.h"
#include "profile.h"
#include "suggest.h"
#include "units.h"


int cli_fail(enum pplan_status st, const struct perr *e)
{
	fprintf(stderr, "pplan: %s\n", e->msg[0] ? e->msg : status_str(st));
	return status_exit_code(st);
}

void cli_inputs_init(struct cli_inputs *in)
{
	memset(in, 0, sizeof *in);
	fw_switches_none(&in->switches);
}

/* "on"/"off" for the overlap switches; -1 otherwise. */
static int on_off(const char *arg)
{
	if (!strcmp(arg, "on"))
		return 1;
	if (!strcmp(arg, "off"))
		return 0;
	return -1;
}


static int parse_whole(const char *arg, long *out, long max, struct perr *e,
		       const char *what)
{
	if (units_parse_whole(arg, out) != 0 || *out > max)
		return perr_set(e, PPLAN_EINPUT, "%s, got '%s'", what, arg), -1;
	return 1;
}

int cli_common_option(struct cli_inputs *in, int opt, const char *arg,
		      struct perr *e)
{
	char *end;
	switch (opt) {
	case OPT_MODEL: in->model_arg = arg; return 1;
	case OPT_PARAMS: in->params_arg = arg; return 1;
	case OPT_GPUS:
		if (units_parse_whole(arg, &in->gpus) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--gpus must be a positive whole number, got '%s'",
					arg), -1;
		if (in->gpus > CLUSTER_MAX_GPUS)
			return perr_set(e, PPLAN_EINPUT,
					"--gpus: %ld GPUs is more than pplan plans for (%ld)",
					in->gpus, (long)CLUSTER_MAX_GPUS), -1;
		return 1;
	case OPT_NODES:
		return parse_whole(arg, &in->nodes, CLUSTER_MAX_GPUS, e,
				   "--nodes must be a positive whole number of nodes");
	case OPT_GPUS_PER_NODE:
		return parse_whole(arg, &in->gpus_per_node, CLUSTER_MAX_NODE_GPUS, e,
				   "--gpus-per-node must be a whole number from 1 to 16");
	case OPT_CLUSTER: in->cluster_arg = arg; return 1;
	case OPT_GPU: in->gpu_arg = arg; return 1;
	case OPT_SEQ:
		return parse_whole(arg, &in->seq, 1L << 24, e,
				   "--seq must be a positive number of tokens up to 16Mi");
	case OPT_GLOBAL_BATCH:
		return parse_whole(arg, &in->gbs, 1L << 40, e,
				   "--global-batch must be a positive number of sequences");
	case OPT_TOKENS_PER_STEP:
		return parse_whole(arg, &in->tokens_per_step, 1L << 50, e,
				   "--tokens-per-step must be a positive number of tokens");
	case OPT_PRECISION: in->precision_arg = arg; return 1;
	case OPT_MAX_MEMORY:
		errno = 0;
		in->max_memory_gib = strtod(arg, &end);
		if (errno || end == arg || *end || !(in->max_memory_gib > 0) ||
		    !isfinite(in->max_memory_gib))
			return perr_set(e, PPLAN_EINPUT,
					"--max-memory-gib must be a positive number of GiB, got '%s'",
					arg), -1;
		return 1;
	case OPT_JSON:
		if (strcmp(arg, "-") != 0 && output_check(arg, "--json", e) != PPLAN_OK)
			return -1;
		in->json_path = arg;
		return 1;
	case OPT_RANK_ORDER: in->order_arg = arg; return 1;
	case OPT_FRAMEWORK: in->framework_arg = arg; return 1;
	case OPT_PROFILE: in->profile_arg = arg; return 1;
	case OPT_TP_COMM_OVERLAP:
		if (!strcmp(arg, "bulk"))
			in->switches.tp_overlap = FW_TPO_BULK;
		else if (!strcmp(arg, "pipelined") || !strcmp(arg, "on"))
			in->switches.tp_overlap = FW_TPO_PIPELINED;
		else if (!strcmp(arg, "off"))
			in->switches.tp_overlap = FW_TPO_NONE;
		else
			return perr_set(e, PPLAN_EINPUT,
					"--tp-comm-overlap must be on, off, bulk or pipelined, got '%s'",
					arg), -1;
		in->tp_overlap_arg = arg;
		return 1;
	case OPT_NO_FLASH: in->switches.flash = 0; return 1;
	case OPT_GRAD_REDUCE_DTYPE:
		if (!strcmp(arg, "fp32"))
			in->switches.grad_bytes = 4;
		else if (!strcmp(arg, "bf16") || !strcmp(arg, "fp16"))
			in->switches.grad_bytes = 2;
		else
			return perr_set(e, PPLAN_EINPUT,
					"--grad-reduce-dtype must be fp32, bf16 or fp16, got '%s'",
					arg), -1;
		return 1;
	case OPT_OVERLAP_GRAD_REDUCE:
	case OPT_OVERLAP_PARAM_GATHER: {
		int v = on_off(arg);
		if (v < 0)
			return perr_set(e, PPLAN_EINPUT, "--%s must be on or off, got '%s'",
					opt == OPT_OVERLAP_GRAD_REDUCE ? "overlap-grad-reduce"
								       : "overlap-param-gather",
					arg), -1;
		if (opt == OPT_OVERLAP_GRAD_REDUCE)
			in->switches.overlap_grad_reduce = v;
		else
			in->switches.overlap_param_gather = v;
		return 1;
	}
	case OPT_TRAIN_TOKENS:
		if (units_parse_count_binary(arg, &in->train_tokens) != 0 ||
		    !(in->train_tokens >= 1) || in->train_tokens > 1e18)
			return perr_set(e, PPLAN_EINPUT,
					"--train-tokens must be a positive number of tokens (e.g. 15T), got '%s'",
					arg), -1;
		return 1;
	default: return 0;
	}
}

/* ---- resolution, one value at a time ----------------------------------------- */

/* The dense zoo model nearest n parameters, in ratio; NULL if the zoo has
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
		if (z[i].num_experts > 1)
			continue; /* an MoE model is asked for by name */
		if (r < best_r) {
			best_r = r;
			best = &z[i];
		}
	}
	*nearest = best;
	return best_r <= PARAMS_MAX_RATIO ? best : NULL;
}

static enum pplan_status resolve_model(struct cli_inputs *in, struct perr *e)
{
	double n;
	const struct model_spec *m, *near;
	char a[32], b[32];

	if (in->model_arg && in->params_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--model and --params conflict: give one of them");
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
static enum pplan_status size_cluster(struct cli_inputs *in, struct perr *e)
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

static enum pplan_status resolve_cluster(struct cli_inputs *in, int need_gpus,
					 struct perr *e)
{
	enum pplan_status st;
	int is_file = in->cluster_arg && (strchr(in->cluster_arg, '/') ||
					  strstr(in->cluster_arg, ".json"));

	if (in->cluster_arg && in->gpu_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--cluster and --gpu conflict: a cluster names its GPU");
	if (need_gpus && !in->gpus && !in->nodes && !is_file)
		return perr_set(e, PPLAN_EINPUT,
				"--gpus is required (e.g. --gpus 512), or --nodes N");
	if (in->gpu_arg) {
		const struct gpu_spec *g = gpu_find(in->gpu_arg);
		const char *preset;
		if (!g) {
			char list[256], dym[96];
			int n;
			const struct gpu_spec *t = gpu_table(&n);
			cli_gpu_list(list, sizeof list, ", ");
			return perr_set(e, PPLAN_EINPUT, "unknown GPU '%s'%s (%s)",
					in->gpu_arg,
					suggest_phrase(dym, sizeof dym,
						       suggest_table(in->gpu_arg, t, (size_t)n,
								     sizeof *t, 1)),
					list);
		}
		preset = cluster_preset_for_gpu(g->name);
		st = cluster_preset(preset ? preset : "dgx-h100", 0, &in->cluster, e);
		if (st != PPLAN_OK)
			return st;
		in->cluster.gpu = *g;
		in->cluster.nvlink.bw_gbps = g->nvlink_gbps;
		if (!preset) {
			snprintf(in->cluster.name, sizeof in->cluster.name,
				 "%s nodes", g->name);
			snprintf(in->cluster.source, sizeof in->cluster.source,
				 "--gpu %s: no preset of its own; 8 per node, NVSwitch and network of dgx-h100",
				 g->name);
		}
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

static enum pplan_status resolve_training(struct cli_inputs *in, struct perr *e)
{
	const struct gpu_spec *g = &in->cluster.gpu;
	enum pplan_status st;

	train_opts_default(&in->opts, &in->model);
	if (in->seq) {
		in->opts.seq = in->seq;
		in->model.seq = in->seq; /* layout_check divides this one */
		snprintf(in->seq_note, sizeof in->seq_note, "--seq");
	} else {
		snprintf(in->seq_note, sizeof in->seq_note, "the model's");
	}
	if (in->cpu_profile)
		in->opts.precision = PREC_FP32;
	else if (in->precision_arg &&
	    precision_parse(in->precision_arg, &in->opts.precision) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"--precision must be bf16, fp16 or fp8, got '%s'",
				in->precision_arg);
	if (g->peak_tflops[in->opts.precision] <= 0) {
		char has[64] = "";
		for (int p = 0; p < PREC_COUNT; p++)
			if (g->peak_tflops[p] > 0)
				snprintf(has + strlen(has), sizeof has - strlen(has), "%s%s",
					 has[0] ? ", " : "", precision_name((enum precision)p));
		return perr_set(e, PPLAN_EINPUT,
				"%s has no %s tensor-core rate, so pplan cannot price %s on it; it has %s (--precision)",
				g->name, precision_name(in->opts.precision),
				precision_name(in->opts.precision), has[0] ? has : "none");
	}
	if (in->framework_arg) {
		st = framework_parse(in->framework_arg, &in->opts.fw, e);
		if (st != PPLAN_OK) {
			perr_prefix(e, "--framework");
			return st;
		}
	}
	in->opts.switches = in->switches;
	if (in->cpu_profile && !in->framework_arg) {
		/* CPU ranks are priced as pplan exec runs them: three-step
		 * attention, fp32 gradients reduced during the backward, no
		 * TP overlap (unless switched by hand). */
		struct fw_switches *w = &in->opts.switches;
		if (w->flash < 0)
			w->flash = 0;
		if (!w->grad_bytes)
			w->grad_bytes = 4;
		if (w->overlap_grad_reduce < 0)
			w->overlap_grad_reduce = 1;
		if (w->tp_overlap < 0)
			w->tp_overlap = FW_TPO_NONE;
	}
	st = train_opts_resolve(&in->opts, e);
	if (st != PPLAN_OK)
		return st;
	if (train_opts_fit_gpu(&in->opts, g))
		snprintf(in->attention_note, sizeof in->attention_note,
			 "; flash attention needs Ampere or newer, so unfused on the %s", g->name);
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

static enum pplan_status resolve_batch(struct cli_inputs *in, struct perr *e)
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
		defaults_global_batch(&in->model, seq, cluster_gpus(&in->cluster), &d);
		in->global_batch = d.sequences;
		snprintf(in->gbs_note, sizeof in->gbs_note, "%s", d.origin);
	}
	return PPLAN_OK;
}

/* --profile: its constants and measured curves; a CPU profile (device
 * "cpu", what `pplan calibrate --backend cpu` writes) is also the machine:
 * as many CPU ranks on its host as the GPUs asked for, priced in fp32.
 * Any other profile must describe the cluster's GPU. */
static enum pplan_status resolve_profile(struct cli_inputs *in, int need_gpus,
					 struct perr *e)
{
	struct profile pr;
	enum pplan_status st;
	if (!in->profile_arg)
		return resolve_cluster(in, need_gpus, e);
	if ((st = profile_load(in->profile_arg, &pr, e)) != PPLAN_OK)
		return st;
	in->cpu_profile = !strcmp(pr.device_name, "cpu");
	if (in->cpu_profile && (in->cluster_arg || in->gpu_arg))
		st = perr_set(e, PPLAN_EINPUT,
			      "%s describes CPU ranks, the machine itself: leave out %s",
			      in->profile_arg, in->cluster_arg ? "--cluster" : "--gpu");
	else if (in->cpu_profile && need_gpus && !in->gpus)
		st = perr_set(e, PPLAN_EINPUT, "--gpus is required: the CPU ranks to price");
	else if (in->cpu_profile && (in->nodes > 1 || in->gpus_per_node))
		st = perr_set(e, PPLAN_EINPUT,
			      "%s describes the CPU ranks of one host: --nodes and --gpus-per-node do not apply",
			      in->profile_arg);
	else if (in->cpu_profile)
		st = curve_cpu_cluster(&pr, in->gpus ? in->gpus : 1, &in->cluster, e);
	else
		st = resolve_cluster(in, need_gpus, e);
	if (st == PPLAN_OK && in->cpu_profile && in->precision_arg &&
	    strcmp(in->precision_arg, "fp32") != 0)
		st = perr_set(e, PPLAN_EINPUT,
			      "%s describes CPU ranks, which compute in fp32, not --precision %s",
			      in->profile_arg, in->precision_arg);
	if (st == PPLAN_OK)
		st = profile_check_device(&pr, in->profile_arg, &in->cluster, in->cpu_profile, e);
	if (st == PPLAN_OK) {
		in->profile_constants = pr.constants;
		curve_set_from_profile(&in->curves, &pr);
	}
	profile_free(&pr);
	return st;
}

enum pplan_status cli_resolve(struct cli_inputs *in, int need_gpus,
			      struct perr *e)
{
	enum pplan_status st;
	if ((st = resolve_model(in, e)) != PPLAN_OK ||
	    (st = resolve_profile(in, need_gpus, e)) != PPLAN_OK ||
	    (st = resolve_training(in, e)) != PPLAN_OK ||
	    (st = resolve_batch(in, e)) != PPLAN_OK)
		return st;
	return PPLAN_OK;
}

enum pplan_status cli_resolve_layout(struct cli_inputs *in,
				     const char *layout_arg, struct layout *l,
				     struct perr *e)
{
	unsigned set = 0;
	enum reject why = REJECT_NONE;
	enum pplan_status st = layout_parse(layout_arg, l, &set, e);

	if (st != PPLAN_OK)
		return st;
	if (!in->gpus && !in->nodes && !in->cluster_arg) {
		long dp = (set & LK_DP) ? l->dp : 1;
		in->gpus = (long)l->tp * l->pp * l->cp * dp;
	}
	st = cli_resolve(in, 1, e);
	if (st != PPLAN_OK)
		return st;
	layout_complete(l, set, cluster_gpus(&in->cluster));
	/* The framework's defaults for what the string leaves out. */
	if (!(set & LK_SP))
		l->sp = in->opts.fw->layout.sp && l->tp > 1;
	if (!(set & LK_ZERO))
		l->zero = l->dp * l->cp > 1 ? in->opts.fw->layout.zero : 0;
	if (!(set & LK_RECOMPUTE))
		l->recompute = in->opts.fw->layout.recompute;
	if (!(set & LK_GBS)) {
		l->gbs = in->global_batch;
	} else if (!in->gbs && !in->tokens_per_step) {
		in->global_batch = l->gbs;
		snprintf(in->gbs_note, sizeof in->gbs_note, "gbs in --layout");
	} else {
		return perr_set(e, PPLAN_EINPUT,
				"gbs in --layout and --global-batch/--tokens-per-step conflict: give one");
	}
	return layout_check_part(l, &in->model, cluster_gpus(&in->cluster),
				 in->opts.b.partition, &why, e);
}
