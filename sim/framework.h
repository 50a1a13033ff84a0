/*
 * framework.h: training frameworks as data.
 *
 * One row per framework and version range says what that software does
 * where a layout does not say: the attention kernel, tensor-parallel
 * communication overlap (and for which precisions it is on), overlap of
 * the data-parallel gradient reduction and of the parameter all-gather,
 * the gradient dtype (the same on the wire and in memory), the pipeline
 * engine, the default recomputation, SP and sharding, what "zero" means
 * (Megatron's distributed optimizer, DeepSpeed's ZeRO, FSDP with sharded
 * fp32 master weights), and what the framework cannot do at all.  The
 * rows and the facts behind them are in sim/MODEL.md, "Frameworks".
 *
 * The cost model reads only the resolved struct fw_behaviour in
 * train_opts; nothing anywhere keys on a framework's name.  Rows are
 * static data: pointers to them stay valid for the program's life.
 */
#ifndef PPLAN_FRAMEWORK_H
#define PPLAN_FRAMEWORK_H

#include <stdio.h>

#include "gpu.h"
#include "layout.h"
#include "status.h"

enum fw_attention { FW_ATTN_UNFUSED = 0, FW_ATTN_FLASH };
enum fw_tp_overlap { FW_TPO_NONE = 0, FW_TPO_BULK, FW_TPO_PIPELINED };
enum fw_pipe {
	FW_PIPE_MEGATRON = 0, /* p2p of the TP/SP shard, blocking isend/irecv */
	FW_PIPE_DEEPSPEED,    /* PipelineEngine: whole activation, one instruction per transfer */
	FW_PIPE_TORCH,        /* torch.distributed.pipelining */
	FW_PIPE_NONE,         /* no pipeline parallelism */
};
enum fw_sharding {
	FW_SHARD_MEGATRON = 0, /* zero 1 = distributed optimizer, 3 = Megatron FSDP */
	FW_SHARD_DEEPSPEED,    /* DeepSpeed ZeRO stages 1-3 (buckets, live-parameter cap) */
	FW_SHARD_FSDP,         /* zero 3 = FSDP/FSDP2: fp32 master weights sharded */
};

/* Everything the cost and memory model ask of the framework. */
struct fw_behaviour {
	enum fw_attention attention;
	enum fw_tp_overlap tp_overlap;   /* for this run's precision */
	int overlap_grad_reduce;         /* DP reduction in buckets during backward */
	int overlap_param_gather;        /* ZeRO parameter all-gather during forward */
	int grad_bytes;                  /* gradient buffer and DP reduction dtype, bytes */
	int half_grad_copy;              /* a 2-byte .grad beside a 4-byte accumulation buffer */
	int fp8_weights;                 /* fp8 runs keep and gather the weights in fp8 */
	/* fp8 runs: the scaling recipe (never FP8_FRAMEWORK), and the bytes
	 * of one fp8 element kept in memory or sent: 1, or 1 + 1/32 under
	 * MXFP8 (an E8M0 scale byte per block of 32). */
	enum fp8_recipe fp8_recipe;
	double fp8_bytes;
	int fp32_master;                 /* fp32 runs keep an fp32 master shard too */
	int bare_step;                   /* no per-step overhead beyond the ops (pplan exec) */
	/* The ring attention's backward moves each K, V block with its
	 * gradients as one message, c times, each posted after that step's
	 * compute and waited for at once (pplan exec, exec/ring.c); else
	 * Transformer Engine's ring (sim/MODEL.md 5.1). */
	int cp_joint_grads;
	enum fw_pipe pipe;
	enum fw_sharding sharding;
	int reshard_after_forward;       /* FSDP: gather again for the backward */
	enum stage_partition partition;
	/* recompute=selective is op-level selective activation checkpointing
	 * (torchtitan): every other matmul's and the attention's outputs
	 * kept, the rest recomputed; else Megatron's (the attention core). */
	int selective_ops;
	/* Bytes per logit the loss holds at its peak on the last stage. */
	double loss_bytes;
	/* MoE token dispatch: 0 Megatron's alltoall (every one of a token's
	 * k copies to its expert's rank), 1 the flex dispatcher (DeepEP,
	 * HybridEP: a token crosses the network once per remote node that
	 * hosts one of its experts, then fans out over NVLink). */
	int moe_flex;
	/* Megatron's allgather dispatcher (its argparse default): every rank
	 * of the TP x EP group all-gathers the group's tokens, keeps those of
	 * its experts, and reduce-scatters the outputs back. */
	int moe_allgather;
	/* MoE overlaps (Megatron-Core): 1F1B A2A overlap, each microbatch's
	 * dispatch and combine under the other microbatch's compute
	 * (--overlap-moe-expert-parallel-comm); the shared experts' forward
	 * under the dispatch (--moe-shared-expert-overlap). */
	int moe_a2a_overlap, moe_shared_overlap;
	/* Megatron-Core's precision-aware optimizer (--use-precision-aware-
	 * optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16): Adam's
	 * moments in bf16, the fp32 master kept as its 16-bit remainder
	 * beside bf16 weights (sim/MODEL.md 7, 8.2). */
	int bf16_moments;
};

/* Layout defaults for fields a run or a layout string leaves unset. */
struct fw_layout_defaults {
	enum recompute recompute;
	int sp;                          /* SP when tp > 1 */
	int zero;                        /* when dp*cp > 1 */
};

#define FW_SCHED_BIT(s) (1u << (s))
#define FW_PREC_BIT(p) (1u << (p))

enum fw_offload { FW_OFFLOAD_NONE = 0, FW_OFFLOAD_MEGATRON, FW_OFFLOAD_DEEPSPEED };

struct framework {
	const char *name;                /* "megatron-core" */
	const char *versions;            /* space-separated versions of this row */
	int year_from, year_to;          /* the years the row stands for */
	const char *label;               /* "Megatron-Core 0.10-0.19" */
	enum fw_attention attention;
	enum fw_tp_overlap tp_overlap;   /* the kind when it is on */
	unsigned tp_overlap_on;          /* FW_PREC_BIT set: on by default for that precision */
	int overlap_grad_reduce, overlap_param_gather;
	int grad_bytes[PREC_COUNT];      /* by run precision */
	int half_grad_copy;
	int fp8_weights;                 /* in fp8 runs (fp8 parameters) */
	enum fp8_recipe fp8_recipe;      /* its fp8 recipe; FP8_FRAMEWORK: delayed scaling */
	int fp32_master;                 /* an fp32 master shard even beside fp32 weights */
	/* A step is its ops and nothing else: no data loader, logging or
	 * framework bookkeeping (step_fixed_ms does not apply). */
	int bare_step;
	int cp_joint_grads;
	enum fw_pipe pipe;
	enum fw_sharding sharding;
	int reshard_after_forward;
	enum stage_partition partition;
	int selective_ops;
	double loss_bytes;               /* per logit at the loss's peak; 0: 6 */
	/* Its fused attention is PyTorch's SDPA, whose memory-efficient
	 * kernel also runs before Ampere; else flash attention (FlashAttention-2,
	 * Transformer Engine, cuDNN) needs an Ampere or newer GPU. */
	int sdpa_attention;
	struct fw_layout_defaults layout;
	/* The default global batch: this many microbatches per pipeline
	 * stage and data-parallel replica (a measuring run's); 0: the
	 * planning default of sim/defaults.h. */
	int batch_microbatches;
	/* What the framework can do at all. */
	/* Optimizer CPU offload (layout.optimizer_offload): none, Megatron-Core's
	 * HybridDeviceOptimizer (gradients stay on the GPU), or DeepSpeed's
	 * ZeRO-Offload (reduced gradients stream to host memory). */
	enum fw_offload optim_offload;
	int can_flash, can_tp_overlap, can_dp_overlap, can_sp, can_cp, can_ep;
	unsigned precisions;             /* FW_PREC_BIT */
	unsigned schedules;              /* FW_SCHED_BIT */
	int max_zero;                    /* highest zero stage */
	int ddp_alone;                   /* replicated DP (zero 0) only without tp, pp, cp, ep
					  * (torchtitan: "DDP has not supported > 1D parallelism") */
	int zero_with_pp;                /* highest zero stage that combines with pp > 1 */
	/* Megatron's --recompute-method block --recompute-num-layers
	 * (layout recompute_layers) and Megatron-Core's --cpu-offloading
	 * --cpu-offloading-num-layers (layout offload_layers). */
	int can_recompute_layers, can_offload_layers;
	/* --overlap-moe-expert-parallel-comm (Megatron-Core 0.14 on) and
	 * --moe-shared-expert-overlap. */
	int can_moe_overlap;
	/* --use-precision-aware-optimizer (Megatron-Core 0.11 and later). */
	int can_precision_aware_opt;
	/* --pipeline-model-parallel-layout (Megatron-Core 0.13 and later,
	 * Megatron-Bridge): a split of any shape (layout.pp_table). */
	int can_pp_layout;
	/* The vocabulary as the framework builds it: padded to a multiple of
	 * vocab_multiple x tp (Megatron's --make-vocab-size-divisible-by,
	 * 128 by default, in every framework on Megatron's model code); 0:
	 * as the tokenizer gives it. */
	int vocab_multiple;
};

/* Switches a user sets by hand; -1 (or 0 for grad_bytes) = the framework's. */
struct fw_switches {
	int tp_overlap;       /* -1, or enum fw_tp_overlap */
	int flash;            /* -1, 0, 1 */
	int grad_bytes;       /* 0, 2 or 4 */
	int overlap_grad_reduce, overlap_param_gather; /* -1, 0, 1 */
	int moe_dispatcher;   /* -1, 0 alltoall, 1 flex (DeepEP / HybridEP), 2 allgather */
	int moe_a2a_overlap, moe_shared_overlap; /* -1, 0, 1 */
	int precision_aware_opt;               /* -1, 0, 1 */
	enum fp8_recipe fp8_recipe;            /* FP8_FRAMEWORK: the framework's */
};

void fw_switches_none(struct fw_switches *switches);

/* b->fp8_bytes, or 1 where b was not resolved (framework_resolve). */
double fw_fp8_bytes(const struct fw_behaviour *b);

/* A MoE dispatcher's name: "alltoall" 0, "flex" (or its backends
 * "deepep", "hybridep") 1, "allgather" 2; -1 for any other. */
int fw_moe_dispatcher_parse(const char *s);
/* Its name again: "alltoall", "flex", "allgather". */
const char *fw_moe_dispatcher_name(int d);

const struct framework *framework_table(int *n);
/* The CLI's default: the newest megatron-core row. */
const struct framework *framework_default(void);
/* pplan exec's own row ("pplan-exec"): how the executor trains. */
const struct framework *framework_executor(void);

/* Finds the row of `name` for `version` as users write it ("v0.14",
 * "0.14.1", "25.04.rc2", "0.13.0rc1", "26.04-py3"; for megatron-bridge
 * also a NeMo container, "25.11"): the row listing it, else the row of
 * the longest listed version it extends ("0.14.1": 0.14), else of the
 * nearest earlier listed one (numerically: 0.9 < 0.10), else the oldest.
 * `note` gets "" when a row lists the version as given, else one
 * sentence on what it was priced as ("Megatron-Core 0.21 is newer than
 * any row pplan knows: priced as 0.19 (Megatron-Core 0.10-0.19)").
 * version NULL: by `year` as framework_find.  An unknown name, or a
 * version that is no version number at all ("banana", ""), is
 * PPLAN_EINPUT with a sentence listing what is known. */
enum pplan_status framework_lookup(const char *name, const char *version, int year,
				   const struct framework **out, char *note,
				   size_t note_len, struct perr *err);

/* As framework_lookup, but a version no row lists as given is
 * PPLAN_EINPUT with a sentence listing the known versions (NULL: by
 * `year`; year <= 0: the newest row). */
enum pplan_status framework_find(const char *name, const char *version,
				 int year, const struct framework **out,
				 struct perr *err);

/* Parses "NAME[:VERSION]" and looks it up (framework_lookup); `note` as
 * there.  framework_parse drops the note. */
enum pplan_status framework_parse_note(const char *arg, const struct framework **out,
				       char *note, size_t note_len, struct perr *err);
enum pplan_status framework_parse(const char *arg,
				  const struct framework **out, struct perr *err);

/* True when `name` names some row. */
int framework_known(const char *name);
/* The table's name for a framework as people write it ("NeMo
 * Framework", "Megatron Bridge", "MCore", "LLM Foundry"); NULL if none. */
const char *framework_canonical(const char *name);

/* The behaviour of fw for a run in precision prec with switches s.  A switch
 * the framework does not have is PPLAN_EINPUT with a sentence. */
enum pplan_status framework_resolve(const struct framework *fw,
				    enum precision prec,
				    const struct fw_switches *switches,
				    struct fw_behaviour *out, struct perr *err);

/* Writes the known names ("megatron-lm, megatron-core, ...") into buf. */
void framework_names(char *buf, size_t len);

/* One line of what behaviour does ("flash attention, TP overlap pipelined, ..."). */
void framework_describe(const struct fw_behaviour *behaviour, char *buf, size_t len);

/* The framework's defaults for what a layout leaves out, `given` its
 * LK_ keys (layout.h): sequence parallelism (with tp > 1), the ZeRO stage
 * (with dp x cp > 1) and recomputation, which recompute_modules makes
 * selective, recompute_layers full (the block method) and offload_layers
 * none (offloading excludes it).  Every command's job (job.c) and every
 * validation case (cases.c) is completed by it. */
void framework_fill_layout(const struct framework *fw, unsigned given, struct layout *layout);

/* What fw cannot run of layout in precision prec (REJECT_NONE: it can). */
enum reject framework_check_layout(const struct framework *fw, enum precision prec,
				   const struct layout *layout);

const char *fw_attention_name(enum fw_attention attention);
const char *fw_tp_overlap_name(enum fw_tp_overlap overlap);
const char *fw_pipe_name(enum fw_pipe pipe);
const char *fw_sharding_name(enum fw_sharding sharding);
/* "fp32", "bf16" or "fp16" for a gradient dtype in bytes. */
const char *fw_grad_dtype_name(int bytes, enum precision prec);

#endif
