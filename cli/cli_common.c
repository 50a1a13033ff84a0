/* cli_common.c: shared options and their resolution (cli_common.h). */
#include "cli_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonio.h"
#include "suggest.h"

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

int cli_parse_long(const char *s, long *out)
{
	double v;
	if (parse_count(s, &v) != 0 || v != floor(v) || v < 1 || v > 1e15)
		return -1;
	*out = (long)v;
	return 0;
}

int cli_common_option(struct cli_inputs *in, int opt, const char *arg,
		      struct perr *e)
{
	char *end;
	switch (opt) {
	case 1000: in->model_arg = arg; return 1;
	case 1001: in->params_arg = arg; return 1;
	case 1002:
		if (cli_parse_long(arg, &in->gpus) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--gpus must be a positive whole number, got '%s'",
					arg), -1;
		if (in->gpus > CLUSTER_MAX_GPUS)
			return perr_set(e, PPLAN_EINPUT,
					"--gpus: %ld GPUs is more than pplan plans for (%ld)",
					in->gpus, (long)CLUSTER_MAX_GPUS), -1;
		return 1;
	case 1003: in->cluster_arg = arg; return 1;
	case 1004: in->gpu_arg = arg; return 1;
	case 1005:
		if (cli_parse_long(arg, &in->seq) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--seq must be a positive number of tokens, got '%s'",
					arg), -1;
		return 1;
	case 1006:
		if (cli_parse_long(arg, &in->gbs) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--global-batch must be a positive number of sequences, got '%s'",
					arg), -1;
		return 1;
	case 1007:
		if (cli_parse_long(arg, &in->tokens_per_step) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--tokens-per-step must be a positive number of tokens, got '%s'",
					arg), -1;
		return 1;
	case 1008: in->precision_arg = arg; return 1;
	case 1009:
		errno = 0;
		in->max_memory_gib = strtod(arg, &end);
		if (errno || end == arg || *end || !(in->max_memory_gib > 0) ||
		    !isfinite(in->max_memory_gib))
			return perr_set(e, PPLAN_EINPUT,
					"--max-memory-gib must be a positive number of GiB, got '%s'",
					arg), -1;
		return 1;
	case 1010:
		if (output_check(arg, "--json", e) != PPLAN_OK)
			return -1;
		in->json_path = arg;
		return 1;
	case 1011: in->order_arg = arg; return 1;
	case 1012: in->framework_arg = arg; return 1;
	case 1013:
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
		return 1;
	case 1014: in->switches.flash = 0; return 1;
	case 1015:
		if (!strcmp(arg, "fp32"))
			in->switches.grad_bytes = 4;
		else if (!strcmp(arg, "bf16") || !strcmp(arg, "fp16"))
			in->switches.grad_bytes = 2;
		else
			return perr_set(e, PPLAN_EINPUT,
					"--grad-reduce-dtype must be fp32, bf16 or fp16, got '%s'",
					arg), -1;
		return 1;
	case 1016:
	case 1017: {
		int v = on_off(arg);
		if (v < 0)
			return perr_set(e, PPLAN_EINPUT, "--%s must be on or off, got '%s'",
					opt == 1016 ? "overlap-grad-reduce" : "overlap-param-gather",
					arg), -1;
		if (opt == 1016)
			in->switches.overlap_grad_reduce = v;
		else
			in->switches.overlap_param_gather = v;
		return 1;
	}
	default: return 0;
	}
}

enum pplan_status cli_resolve(struct cli_inputs *in, int need_gpus,
			      struct perr *e)
{
	enum pplan_status st;

	/* Model. */
	if (in->model_arg && in->params_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--model and --params conflict: give one of them");
	if (in->model_arg) {
		st = model_resolve(in->model_arg, &in->model, e);
		if (st != PPLAN_OK)
			return st;
	} else if (in->params_arg) {
		double n;
		const struct model_spec *m;
		if (parse_count(in->params_arg, &n) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--params must be a positive count like 70B, 405B or 1.5T, got '%s'",
					in->params_arg);
		m = model_nearest(n);
		/* Nearest, not any: 10^15 parameters would otherwise plan a
		 * 1T model without a word. */
		if (n > 2.0 * model_params_total(m) || 2.0 * n < model_params_total(m))
			return perr_set(e, PPLAN_EINPUT,
					"--params %s: the nearest zoo model, %s, has %.3g parameters, not within a factor of 2 of %.3g; give --model FILE for a model of that size",
					in->params_arg, m->name, model_params_total(m), n);
		in->model = *m;
		snprintf(in->model_note, sizeof in->model_note,
			 "--params %s: nearest zoo model is %s (%.1f B parameters)",
			 in->params_arg, m->name, model_params_total(m) / 1e9);
	} else {
		return perr_set(e, PPLAN_EINPUT,
				"no model: give --model NAME|FILE or --params N (e.g. --params 70B)");
	}

	/* Cluster. */
	if (in->cluster_arg && in->gpu_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--cluster and --gpu conflict: a cluster names its GPU");
	if (need_gpus && !in->gpus && !(in->cluster_arg &&
					(strchr(in->cluster_arg, '/') ||
					 strstr(in->cluster_arg, ".json"))))
		return perr_set(e, PPLAN_EINPUT, "--gpus is required (e.g. --gpus 512)");
	if (in->gpu_arg) {
		const struct gpu_spec *g = gpu_find(in->gpu_arg);
		const char *preset;
		if (!g) {
			int ng;
			const struct gpu_spec *gt = gpu_table(&ng);
			char dym[96];
			return perr_set(e, PPLAN_EINPUT,
					"unknown GPU '%s'%s (a100-40gb, a100-80gb, h100-sxm, h100-96gb, h800, h200, b200)",
					in->gpu_arg,
					suggest_phrase(dym, sizeof dym,
						       suggest_table(in->gpu_arg, gt, (size_t)ng,
								     sizeof *gt, 1)));
		}
		preset = cluster_preset_for_gpu(g->name);
		st = cluster_preset(preset ? preset : "dgx-h100", in->gpus,
				    &in->cluster, e);
		if (st != PPLAN_OK)
			return st;
		in->cluster.gpu = *g;
		in->cluster.nvlink.bw_gbps = g->nvlink_gbps;
		if (!preset)
			snprintf(in->cluster.name, sizeof in->cluster.name,
				 "8x %s nodes", g->name);
	} else {
		st = cluster_resolve(in->cluster_arg ? in->cluster_arg : "dgx-h100",
				     in->gpus, &in->cluster, e);
		if (st != PPLAN_OK)
			return st;
	}

	/* Training options. */
	train_opts_default(&in->opts, &in->model);
	if (in->seq)
		in->opts.seq = in->seq;
	if (in->precision_arg &&
	    precision_parse(in->precision_arg, &in->opts.precision) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"--precision must be bf16, fp16 or fp8, got '%s'",
				in->precision_arg);
	if (in->cluster.gpu.peak_tflops[in->opts.precision] <= 0)
		return perr_set(e, PPLAN_EINPUT, "%s does not support %s",
				in->cluster.gpu.name,
				precision_name(in->opts.precision));
	if (in->framework_arg) {
		st = framework_parse(in->framework_arg, &in->opts.fw, e);
		if (st != PPLAN_OK) {
			perr_prefix(e, "--framework");
			return st;
		}
	}
	in->opts.switches = in->switches;
	st = train_opts_resolve(&in->opts, e);
	if (st != PPLAN_OK)
		return st;
	if (in->order_arg) {
		st = rank_order_parse(in->order_arg, &in->opts.order, e);
		if (st != PPLAN_OK)
			return st;
	}
	in->opts.max_memory_gib = in->max_memory_gib;
	if (in->max_memory_gib > in->cluster.gpu.mem_gib)
		return perr_set(e, PPLAN_EINPUT,
				"--max-memory-gib %.1f is more than the %.1f GiB of a %s",
				in->max_memory_gib, in->cluster.gpu.mem_gib,
				in->cluster.gpu.name);

	/* Global batch: sequences, from tokens, or about 4M tokens. */
	if (in->gbs && in->tokens_per_step)
		return perr_set(e, PPLAN_EINPUT,
				"--global-batch and --tokens-per-step conflict: give one of them");
	if (in->gbs) {
		in->global_batch = in->gbs;
		snprintf(in->gbs_note, sizeof in->gbs_note, "--global-batch");
	} else if (in->tokens_per_step) {
		if (in->tokens_per_step % in->opts.seq != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--tokens-per-step %ld is not a multiple of the sequence length %ld",
					in->tokens_per_step, in->opts.seq);
		in->global_batch = in->tokens_per_step / in->opts.seq;
		snprintf(in->gbs_note, sizeof in->gbs_note, "--tokens-per-step");
	} else {
		long g = (4L << 20) / in->opts.seq;
		in->global_batch = g > 0 ? g : 1;
		snprintf(in->gbs_note, sizeof in->gbs_note, "default, about 4M tokens");
	}
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
	if (!in->gpus && !in->cluster_arg) {
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
	return layout_check(l, &in->model, cluster_gpus(&in->cluster), &why, e);
}

void cli_print_config(FILE *f, const char *cmd, const struct cli_inputs *in)
{
	const struct model_spec *m = &in->model;
	const struct cluster *c = &in->cluster;
	fprintf(f, "# pplan %s\n", cmd);
	if (in->model_note[0])
		fprintf(f, "# %s\n", in->model_note);
	fprintf(f, "# model     %s: %.2f B parameters (%.2f B active), %d layers, hidden %ld, ffn %ld, %d heads (%d kv), vocab %ld, %s\n",
		m->name, model_params_total(m) / 1e9, model_params_active(m) / 1e9,
		m->layers, m->hidden, m->ffn, m->heads, m->kv_heads, m->vocab,
		mlp_kind_name(m->mlp));
	if (m->num_experts > 1)
		fprintf(f, "# experts   %d, top-%d\n", m->num_experts, m->top_k);
	fprintf(f, "# cluster   %s: %ld x %s (%d nodes of %d), NVLink %.0f GB/s, network %.1f GB/s per GPU (%s)\n",
		c->name, cluster_gpus(c), c->gpu.name, c->num_nodes,
		c->gpus_per_node, c->nvlink.bw_gbps, c->net.bw_gbps, c->source);
	fprintf(f, "# training  seq %ld tokens, global batch %ld sequences (%.2f M tokens, %s), %s, memory cap %.1f GiB per GPU\n",
		in->opts.seq, in->global_batch,
		(double)in->global_batch * in->opts.seq / 1048576.0, in->gbs_note,
		precision_name(in->opts.precision),
		in->opts.max_memory_gib > 0 ? in->opts.max_memory_gib : c->gpu.mem_gib);
	{
		char what[320];
		framework_describe(&in->opts.b, what, sizeof what);
		fprintf(f, "# framework %s%s: %s\n", in->opts.fw->label,
			in->framework_arg ? "" : " (default)", what);
	}
}

void cli_common_usage(FILE *f)
{
	char names[512];
	framework_names(names, sizeof names);
	fprintf(f,
		"  --model NAME|FILE      zoo model, pplan.model/1 JSON or HF config.json\n"
		"  --params N             or: the zoo model nearest N parameters (70B, 405B, 1.5T)\n"
		"  --gpus N               number of GPUs (whole nodes)\n"
		"  --cluster NAME|FILE    dgx-a100, dgx-h100 (default), dgx-h200, hgx-b200, or pplan.cluster/1\n"
		"  --gpu TYPE             a100-40gb a100-80gb h100-sxm h100-96gb h800 h200 b200 (its node preset)\n"
		"  --seq N                tokens per sequence (default: the model's)\n"
		"  --global-batch N       sequences per step (default: about 4M tokens)\n"
		"  --tokens-per-step N    or: tokens per step\n"
		"  --precision P          bf16 (default), fp16, fp8\n"
		"  --max-memory-gib X     usable memory per GPU (default: the GPU's)\n"
		"  --rank-order ORDER     rank placement, innermost first (default tp-cp-dp-pp)\n"
		"  --framework NAME[:V]   the training software (default %s); known: %s\n"
		"  --tp-comm-overlap on|off|bulk|pipelined   TP communication overlap (default: the framework's)\n"
		"  --no-flash-attention   unfused attention (the s x s scores in memory)\n"
		"  --grad-reduce-dtype fp32|bf16|fp16        gradient dtype, reduced and stored (default: the framework's)\n"
		"  --overlap-grad-reduce on|off, --overlap-param-gather on|off   (default: the framework's)\n"
		"  --json FILE            write the JSON report\n",
		framework_default()->label, names);
}
