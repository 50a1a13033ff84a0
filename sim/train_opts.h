/*
 * train_opts.h: how a job trains, beside its model, cluster and layout:
 * sequence, precision, memory cap, the framework with the switches set by
 * hand and the behaviour they resolve to, the rank order, the step's
 * pipeline model, the cost model's constants and measured curves.  Plain
 * data that the cost model and memory read (sim/job.h builds it).
 */
#ifndef PPLAN_TRAIN_OPTS_H
#define PPLAN_TRAIN_OPTS_H

#include "cluster.h"
#include "cost_params.h"
#include "framework.h"
#include "layout.h"
#include <stddef.h>

#include "model.h"

struct curve_set;

struct train_opts {
	long seq;                 /* tokens per sequence */
	enum precision precision;
	double max_memory_gib;    /* usable memory per GPU; 0 = the GPU's */
	const struct framework *fw;   /* the software that runs the layout */
	struct fw_switches switches;  /* what the user set by hand */
	struct fw_behaviour b;    /* fw for this precision, switches applied */
	struct rank_order order;  /* rank placement, innermost first (tp-cp-dp-pp) */
	int use_des;              /* step time from the event simulation */
	/* LoRA fine-tuning (PEFT): adapters of this rank beside every linear
	 * layer train, the model's own weights are frozen (model_lora_widths,
	 * sim/MODEL.md 4.7); 0 = every weight trains */
	int lora_rank;
	unsigned lora_targets;    /* the linears adapted (enum lora_target); 0 = LORA_TARGETS_DEFAULT */
	/* An fp8-class run's first and last transformer layers kept in bf16
	 * (Megatron-Core's first_last_layers_bf16 with
	 * num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16; sim/MODEL.md
	 * 3); 0 = every layer in the run's precision */
	int bf16_first, bf16_last;
	const struct cost_params *params; /* the constants; NULL = the embedded defaults */
	const struct curve_set *curves;   /* measured curves (--profile, sim/curves.h);
					   * NULL = the embedded GEMM, bandwidth and
					   * collective model */
};

/* LoRA's rank when a job names none: NeMo's and Megatron-Bridge's
 * default dim. */
#define LORA_DEFAULT_RANK 32
/* A PEFT choice as users write it: "none" or "full" (every weight
 * trains: 0), "lora" (LORA_DEFAULT_RANK) or "lora:R" (R from 1 to
 * 65536) into *rank; -1 for anything else. */
int train_opts_peft_parse(const char *s, int *rank);

/* "F,L" (the first F and the last L layers) or "N" (N of each), each
 * from 0 to 1024, into *first and *last: 0, else -1. */
int train_opts_bf16_layers_parse(const char *s, int *first, int *last);

/* The targets of opts: its own, or LoRA's default. */
unsigned train_opts_lora_targets(const struct train_opts *opts);
/* A target list as users and recipes write it: module names separated by
 * commas, pluses or spaces, with or without their "linear_" prefix
 * ("linear_qkv,linear_proj", "qkv+proj"), or "all" (every linear); into
 * *out.  -1 naming the first word it cannot read in bad (len bytes). */
int lora_targets_parse(const char *s, unsigned *out, char *bad, size_t len);
/* "linear_qkv, linear_proj" (sep between names) into buf. */
const char *lora_targets_format(unsigned targets, const char *sep, char *buf, size_t len);
/* The module name of one target bit. */
const char *lora_target_name(unsigned bit);

/* The constants of opts: opts->params, or the embedded defaults. */
const struct cost_params *train_opts_params(const struct train_opts *opts);

/* bf16, the model's sequence, the default framework (newest
 * megatron-core) and no switches, resolved. */
void train_opts_default(struct train_opts *opts, const struct model_spec *model);

/* Recomputes opts->b from opts->fw, opts->precision and opts->switches: call it after
 * changing any of them.  A switch the framework lacks is PPLAN_EINPUT. */
enum pplan_status train_opts_resolve(struct train_opts *opts, struct perr *err);

/* After train_opts_resolve, for the GPU that runs it: flash attention
 * (FlashAttention-2, Transformer Engine's and cuDNN's fused attention)
 * needs Ampere or newer, so on a Volta or Pascal GPU a framework whose
 * fused attention is one of those runs it unfused, unless the user set
 * the attention by hand.  Returns 1 when it changed opts->b. */
int train_opts_fit_gpu(struct train_opts *opts, const struct gpu_spec *gpu);
/* The same for TP communication overlap: Transformer Engine's userbuffers
 * need Ampere or newer, so a framework's overlap is off on older GPUs
 * unless set by hand.  Returns 1 when it changed opts->b. */
int train_opts_fit_tp_overlap(struct train_opts *opts, const struct gpu_spec *gpu);

/* Does layout run Megatron-Core's 1F1B A2A overlap under opts: switched on, with
 * expert parallelism, no full recomputation, and virtual stages where
 * there is a pipeline (Megatron-Core refuses it otherwise)? */
int train_opts_moe_a2a_overlap(const struct train_opts *opts, const struct layout *layout);

/* The vocabulary the framework of opts builds for a model of vocab tokens on
 * layout: padded to a multiple of the framework's vocab_multiple x tp
 * (Megatron: 128 x tp); vocab where the framework does not pad. */
long train_opts_vocab(const struct train_opts *opts, const struct layout *layout, long vocab);
/* Does layout run Megatron-Core's precision-aware optimizer with bf16 moments
 * under opts: switched on, with the distributed optimizer (zero >= 1)? */
int train_opts_bf16_moments(const struct train_opts *opts, const struct layout *layout);
/* Adam's optimizer-state bytes per parameter of the shard under opts and layout:
 * 12 (fp32 master, m and v; 8 where the fp32 weight is its own master:
 * the CPU's fp32 or FSDP's sharded master), and with the precision-aware
 * optimizer (switched on, a distributed optimizer: zero >= 1, as
 * Megatron-Core requires) bf16 moments and, beside bf16 weights, the
 * master as its 16-bit remainder: 6; 8 with fp8 or fp16 weights
 * (sim/MODEL.md 8.2). */
double train_opts_optimizer_bytes(const struct train_opts *opts, const struct layout *layout);
/* The bytes Adam's step moves per parameter of the shard (sim/MODEL.md 7):
 * 30, 22 with bf16 moments, 20 with the remainder too. */
double train_opts_adam_bytes(const struct train_opts *opts, const struct layout *layout);

#endif
