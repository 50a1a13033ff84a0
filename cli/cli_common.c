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
#include <stddef.h>
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

/* A positive finite number no larger than max, times scale, into *out. */
static int parse_positive(const char *arg, double max, double scale, double *out,
			  struct perr *e, const char *what)
{
	char *end;
	double v;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || !(v <= max))
		return perr_set(e, PPLAN_EINPUT, "%s, got '%s'", what, arg), -1;
	*out = v * scale;
	return 1;
}

static int goodput_option(struct goodput_opts *g, int opt, const char *arg, struct perr *e)
{
	switch (opt) {
	case OPT_GOODPUT:
		return parse_positive(arg, 1.0, 1.0, &g->fixed, e,
				      "--goodput must be a fraction of wall-clock time above 0 and at most 1 (0.9)");
	case OPT_GPU_MTBI:
		return parse_positive(arg, 1e9, 1.0, &g->gpu_mtbi_hours, e,
				      "--gpu-mtbi-hours must be a positive number of GPU-hours between interruptions");
	case OPT_RESTART_MIN:
		return parse_positive(arg, 1e6, 60.0, &g->restart_s, e,
				      "--restart-min must be a positive number of minutes");
	case OPT_CKPT_INTERVAL_MIN:
		return parse_positive(arg, 1e6, 60.0, &g->interval_s, e,
				      "--checkpoint-interval-min must be a positive number of minutes");
	case OPT_STORAGE_GBS:
		return parse_positive(arg, 1e9, 1e9, &g->storage_bps, e,
				      "--storage-gbs must be a positive checkpoint write bandwidth in GB/s");
	case OPT_GPU_HOUR_COST:
		return parse_positive(arg, 1e6, 1.0, &g->gpu_hour_cost, e,
				      "--gpu-hour-cost must be a positive price per GPU-hour (2.5)");
	default: return 0;
	}
}

/* The framework switches that take on or off. */
static int on_off_switch(struct job *in, int opt, const char *arg, struct perr *e)
{
	static const struct { int opt; const char *name; size_t off; } sw[] = {
		{ OPT_OVERLAP_GRAD_REDUCE, "overlap-grad-reduce",
		  offsetof(struct fw_switches, overlap_grad_reduce) },
		{ OPT_OVERLAP_PARAM_GATHER, "overlap-param-gather",
		  offsetof(struct fw_switches, overlap_param_gather) },
		{ OPT_MOE_A2A_OVERLAP, "moe-a2a-overlap", offsetof(struct fw_switches, moe_a2a_overlap) },
		{ OPT_MOE_SHARED_OVERLAP, "moe-shared-expert-overlap",
		  offsetof(struct fw_switches, moe_shared_overlap) },
		{ OPT_PRECISION_AWARE_OPT, "precision-aware-optimizer",
		  offsetof(struct fw_switches, precision_aware_opt) },
	};
	int v = on_off(arg);
	for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
		if (sw[i].opt != opt)
			continue;
		if (v < 0)
			return perr_set(e, PPLAN_EINPUT, "--%s must be on or off, got '%s'",
					sw[i].name, arg), -1;
		*(int *)((char *)&in->switches + sw[i].off) = v;
		return 1;
	}
	return 0;
}

int cli_common_option(struct job *in, int opt, const char *arg,
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
	case OPT_PEFT:
		if (train_opts_peft_parse(arg, &in->lora_rank) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--peft must be none, lora or lora:RANK with a rank from 1 to 65536, got '%s'",
					arg), -1;
		return 1;
	case OPT_LORA_TARGETS: {
		char bad[64];
		if (lora_targets_parse(arg, &in->lora_targets, bad, sizeof bad) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--lora-targets must name Megatron-Core linears (linear_qkv, linear_proj, linear_fc1, linear_fc2, linear_q_proj, linear_q_down_proj, linear_q_up_proj, linear_kv_down_proj, linear_kv_up_proj, in_proj, out_proj) or all, got '%s'",
					bad), -1;
		return 1;
	}
	case OPT_BF16_LAYERS:
		if (train_opts_bf16_layers_parse(arg, &in->bf16_first, &in->bf16_last) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"--bf16-layers must be F,L (the first F and the last L layers in bf16) or N (N of each), whole numbers from 0 to 1024, got '%s'",
					arg), -1;
		in->bf16_given = 1;
		return 1;
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
	case OPT_MOE_DISPATCHER:
		if ((in->switches.moe_dispatcher = fw_moe_dispatcher_parse(arg)) < 0)
			return perr_set(e, PPLAN_EINPUT,
					"--moe-dispatcher must be alltoall, allgather or flex (deepep, hybridep), got '%s'",
					arg), -1;
		return 1;
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
	case OPT_OVERLAP_PARAM_GATHER:
	case OPT_MOE_A2A_OVERLAP:
	case OPT_MOE_SHARED_OVERLAP:
	case OPT_PRECISION_AWARE_OPT:
		return on_off_switch(in, opt, arg, e);
	case OPT_TRAIN_TOKENS:
		if (units_parse_count_binary(arg, &in->train_tokens) != 0 ||
		    !(in->train_tokens >= 1) || in->train_tokens > 1e18)
			return perr_set(e, PPLAN_EINPUT,
					"--train-tokens must be a positive number of tokens (e.g. 15T), got '%s'",
					arg), -1;
		return 1;
	default: return goodput_option(&in->goodput_opts, opt, arg, e);
	}
}

