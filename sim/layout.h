/*
 * layout.h: a parallel layout and the one rank map.
 *
 * A layout is plain data: degrees of tensor (tp), pipeline (pp), data (dp),
 * context (cp) and expert (ep) parallelism, virtual pipeline stages per
 * rank (vp), micro- and global batch, sequence parallelism, recomputation,
 * ZeRO stage and pipeline schedule.  Layout strings are the stable user
 * syntax "tp=8,pp=4,dp=16,mbs=1,vp=2,sp=on,recompute=selective,zero=1,
 * schedule=interleaved".
 *
 * The rank map places tp innermost, then cp, dp, pp (Megatron-LM's order)
 * unless another order is given; the executor builds its process groups
 * from it and the cost model asks it which link each group uses.
 */
#ifndef PPLAN_LAYOUT_H
#define PPLAN_LAYOUT_H

#include "model.h"
#include "status.h"

enum recompute { RECOMPUTE_NONE = 0, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL };
/* Megatron-Core's --recompute-modules (recompute=selective): which parts
 * of a layer its backward recomputes; none set = core_attn alone. */
enum recompute_module {
	RM_CORE_ATTN = 1 << 0,   /* the attention core */
	RM_LAYERNORM = 1 << 1,   /* the two norms (their outputs not kept) */
	RM_MLP = 1 << 2,         /* a dense layer's MLP */
	RM_MOE = 1 << 3,         /* an MoE layer's whole MLP: router, dispatch, experts */
	RM_MOE_ACT = 1 << 4,     /* the experts' activation function */
	RM_SHARED = 1 << 5,      /* the shared experts */
	RM_MLA_UP = 1 << 6,      /* MLA's up projections */
	RM_ALL = (1 << 7) - 1,
};
/* Megatron-Core's --fine-grained-activation-offloading --offload-modules:
 * the kept tensors it moves to host memory between a layer's forward and
 * its backward. */
enum offload_module {
	OM_ATTN_NORM = 1 << 0,   /* the attention norm's input */
	OM_QKV_LINEAR = 1 << 1,  /* the QKV projection's input */
	OM_CORE_ATTN = 1 << 2,   /* Q, K, V */
	OM_ATTN_PROJ = 1 << 3,   /* the output projection's input */
	OM_MLP_NORM = 1 << 4,    /* the MLP norm's input */
	OM_EXPERT_FC1 = 1 << 5,  /* the experts' fc1 input: the permuted token copies */
	OM_MOE_ACT = 1 << 6,     /* the experts' activation input: the fc1 output */
};
int offload_modules_parse(const char *s, unsigned *out, char *bad, size_t bad_len);
void offload_modules_format(unsigned mods, char *buf, size_t len, const char *sep);

/* "core_attn", "moe_act" ...; the modules of a "+"- or space-separated
 * list into *out (0 and -1 for a name it does not know). */
const char *recompute_module_name(enum recompute_module module);
int recompute_modules_parse(const char *s, unsigned *out, char *bad, size_t bad_len);
/* "layernorm+moe_act" (the names in the bits' order). */
void recompute_modules_format(unsigned mods, char *buf, size_t len, const char *sep);
/* SCHED_DUALPIPE: DeepSeek's bidirectional pipeline (DeepSeek-V3 report,
 * 3.2.1), priced by its closed form (sim/MODEL.md 6.2). */
enum schedule { SCHED_GPIPE = 0, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZB_H1, SCHED_DUALPIPE };
#define SCHED_LAST SCHED_DUALPIPE
/* The names schedule_parse takes, for messages. */
#define SCHEDULE_NAMES "gpipe, 1f1b, interleaved, zb-h1 or dualpipe"
/* How a framework splits the layers over pipeline stages. */
enum stage_partition {
	PART_EVEN = 0,      /* pp divides the layers */
	PART_FIRST_LAST,    /* or the first/last stage layer counts differ (Megatron) */
	PART_DEEPSPEED,     /* partition_uniform over layers + 2 embedding units */
};

const char *recompute_name(enum recompute recompute);
const char *schedule_name(enum schedule sched);
int recompute_parse(const char *s, enum recompute *out);
int schedule_parse(const char *s, enum schedule *out);

/* The largest degree (tp, pp, dp, cp, ep, vp) or micro-batch a layout
 * takes, and the largest global batch in sequences (docs/limits.md). */
#define LAYOUT_MAX_DEGREE (1L << 20)
#define LAYOUT_MAX_GBS (1L << 40)

struct pp_table;

struct layout {
	int tp, pp, dp, cp, ep;
	int etp;                /* expert tensor parallelism; 0 = tp (experts split like the rest) */
	int vp;                 /* virtual stages (model chunks) per pipeline rank */
	int pp_first, pp_last;  /* transformer layers on the first / last pipeline
				 * stage; 0 = as many as the others (Megatron's
				 * --decoder-first/last-pipeline-num-layers) */
	int pp_embed, pp_loss;  /* 1: the embedding / the loss counts as one layer
				 * of the even split over pp x vp chunks (Megatron's
				 * --account-for-embedding/loss-in-pipeline-split) */
	/* A split of any shape: each virtual stage's layers as a layout
	 * string gives them (Megatron-Core's --pipeline-model-parallel-
	 * layout); NULL = the split the fields above give. */
	const struct pp_table *pp_table;
	int mbs;                /* micro-batch size, sequences */
	long gbs;               /* global batch, sequences; 0 = not set */
	int sp;                 /* sequence parallelism (needs tp > 1) */
	enum recompute recompute;
	unsigned recompute_modules; /* enum recompute_module bits (selective); 0 = core_attn */
	unsigned offload_modules;   /* enum offload_module bits; 0 = none offloaded */
	/* 1: fp32 master weights and Adam's moments in host memory, the step
	 * on the CPU (Megatron-Core's --optimizer-cpu-offload, DeepSpeed's
	 * ZeRO-Offload); needs zero >= 1 (sim/MODEL.md 7) */
	int optimizer_offload;
	/* recompute=full: the layers of each model chunk whose forward the
	 * backward replays (Megatron's --recompute-method block
	 * --recompute-num-layers N; the others keep their activations);
	 * 0 = every layer (uniform, one layer per checkpoint) */
	int recompute_layers;
	/* layers whose activations go to host memory after their forward and
	 * come back for their backward (Megatron-Core's --cpu-offloading
	 * --cpu-offloading-num-layers N, activations only); 0 = none */
	int offload_layers;
	int zero;               /* 0 plain DP, 1 optimizer sharded, 2 +grads, 3 +weights */
	enum schedule schedule;
};

/* Which keys a parsed string set, so callers can fill the others. */
enum layout_key {
	LK_TP = 1 << 0, LK_PP = 1 << 1, LK_DP = 1 << 2, LK_CP = 1 << 3,
	LK_EP = 1 << 4, LK_VP = 1 << 5, LK_MBS = 1 << 6, LK_GBS = 1 << 7,
	LK_SP = 1 << 8, LK_RECOMPUTE = 1 << 9, LK_ZERO = 1 << 10,
	LK_SCHEDULE = 1 << 11, LK_ETP = 1 << 12, LK_PP_FIRST = 1 << 13,
	LK_PP_LAST = 1 << 14, LK_PP_EMBED = 1 << 15, LK_PP_LOSS = 1 << 16,
	LK_RECOMPUTE_MODULES = 1 << 17, LK_OFFLOAD = 1 << 18,
	LK_OPTIMIZER_OFFLOAD = 1 << 19, LK_RECOMPUTE_LAYERS = 1 << 20,
	LK_OFFLOAD_LAYERS = 1 << 21,
};

/* Defaults: degrees 1, mbs 1, sp on when tp > 1, recompute none, zero 1
 * when dp > 1, schedule 1f1b (interleaved when vp > 1). */
void layout_default(struct layout *layout);

/* Megatron-Core's --pipeline-model-parallel-layout, read over pp ranks:
 * "Et|(tt|)*30mL" is E the embedding, t a transformer layer, m an MTP
 * layer, L the loss, '|' between the pp x vp virtual stages (stage v on
 * rank v mod pp), "(..)*n" and "x*n" repeated, commas cosmetic
 * (pipeline_parallel_layer_layout.py).  pplan prices it as its stage
 * totals: the first and last ranks' layers, the others' alike. */
#define PP_LAYOUT_MAX 8192          /* characters, unrolled */
#define LAYOUT_PP_LAYOUT_RANKS 1024 /* pipeline ranks */
struct pp_layout {
	int vp;             /* stages / pp */
	int first, mid, last; /* transformer layers on rank 0, 1..pp-2, pp-1 */
	int layers, mtp;    /* transformer and MTP layers in all */
	int uneven_chunks;  /* a rank's chunks hold different numbers of layers */
	int mtp_as_layers;  /* the split counts the MTP layers as layers: the
			     * model must have layers + mtp to be priced so */
};
/* A pipeline split of any shape: the transformer layers of each of the
 * pp x vp virtual stages (stage v = chunk * pp + rank, in the model's
 * order), the embedding on the first and the loss on the last.  Tables
 * are interned: one copy of each, never freed, so layouts share them by
 * pointer. */
#define PP_TABLE_MAX_CHUNKS 4096
struct pp_table {
	int pp, vp, layers;
	const char *text;   /* Megatron's layout string for it */
	const int *chunk;   /* [pp * vp] */
	const int *first;   /* [pp * vp]: the layers before virtual stage v */
};
/* The interned table of these chunks (NULL: pp x vp out of range or no
 * memory); its text is written from the chunks. */
const struct pp_table *pp_table_intern(int pp, int vp, const int *chunk);
/* Megatron's layout string of the chunks: E first, L last, runs of like
 * chunks as (..)*n and of layers as t*n.  0, or -1 when it does not fit
 * in len. */
int pp_table_format(int pp, int vp, const int *chunk, char *buf, size_t len);
/* The balanced split of `layers` over pp x vp chunks with the embedding
 * and the loss counted as one layer each (what NVIDIA's recipes write for
 * DeepSeek-V3 and Kimi K2 where nothing even exists): the units as even
 * as they go, the extra ones spread over the pipeline ranks from rank 1
 * on, so ranks differ by at most one.  NULL when a chunk count or a rank
 * would go without a layer. */
const struct pp_table *pp_table_balanced(int layers, int pp, int vp);

/* 0, or -1 with the reason in why. */
int layout_pp_layout(const char *s, int pp, struct pp_layout *out, char *why, size_t len);
/* The layout string s as layout's split of a model of `layers` over layout->pp:
 * layout->vp from its stages, then the split pplan prices that puts every
 * virtual stage's layers where s does: even, the embedding and the loss
 * counted as layers (pp_embed, pp_loss), or uneven first and last stages
 * (pp_first, pp_last) with each stage's chunks alike; a string with MTP
 * layers (m) only as the edge split of the layers and the MTP layers
 * together (out->mtp_as_layers).  0, or -1 with the reason in why (a
 * split none of them gives). */
int layout_apply_pp_layout(const char *s, int layers, struct layout *layout, struct pp_layout *out,
			   char *why, size_t len);

/* Parses a layout string; *set receives the LK_ bits given.  Unknown keys,
 * repeated keys and bad values give a sentence and PPLAN_EINPUT. */
enum pplan_status layout_parse(const char *s, struct layout *layout, unsigned *set,
			       struct perr *err);

/* Fills the keys not in `set` (dp from gpus, sp, schedule ...) so that the
 * layout is complete for `gpus` GPUs. */
void layout_complete(struct layout *layout, unsigned set, long gpus);

/* Writes the canonical string (every key) into buf. */
void layout_format(const struct layout *layout, char *buf, size_t len);

long layout_gpus(const struct layout *layout);
/* The modules a selective layout recomputes (core_attn when none given);
 * 0 unless recompute=selective. */
unsigned layout_recompute_modules(const struct layout *layout);

/* Of a pipeline stage's n transformer layers, those whose forward the
 * backward replays in full (n with recompute=full, recompute_layers per
 * chunk with the block method, 0 otherwise), and those whose
 * activations are offloaded to host memory. */
int layout_recomputed_layers(const struct layout *layout, int n);
int layout_offloaded_layers(const struct layout *layout, int n);

/* The expert tensor-parallel degree (etp, or tp when etp is 0). */
int layout_etp(const struct layout *layout);
/* The replicas of each expert shard: tp*dp*cp / (ep*etp), the group its
 * gradients are reduced over. */
double layout_expert_dp(const struct layout *layout);

/* Transformer layers on pipeline stage `stage` for a model of `layers`
 * layers split as `part` says: evenly; with pp_first / pp_last set, those
 * on the edge stages and the rest evenly over the others (Megatron); or
 * DeepSpeed's partition_uniform over the layers and the two embeddings.
 * 0 for a split that does not add up (layout_check rejects it). */
/* Megatron's uneven split for a pp that does not divide the layers: the
 * middle stages the mean rounded up to a multiple of vp, the first and
 * last stage the rest (the last the smaller half), all multiples of vp.
 * -1 (and 0, 0) when there is none. */
int layout_split_uneven(int layers, int pp, int vp, int *first, int *last);

int layout_stage_layers(const struct layout *layout, int layers, enum stage_partition part,
			int stage);
/* With pp_embed / pp_loss: the transformer layers of virtual stage v
 * (chunk c of stage i is v = c*pp + i) and the first of them; 0 when
 * the units do not split evenly. */
int layout_edge_chunk(const struct layout *layout, int layers, int v, int *first);
/* Does layers + pp_embed + pp_loss split evenly over pp x vp chunks? */
int layout_edge_split_ok(const struct layout *layout, int layers);
/* Whether layout's pp_table is the split of `layers` over its pp x vp. */
int layout_table_ok(const struct layout *layout, int layers);
/* The transformer layers of virtual stage v and the first of them, under
 * the table or the embedding/loss split; 0 where neither is set. */
int layout_chunk_layers(const struct layout *layout, int layers, int v, int *first);

/* The other stage the GPU of pipeline rank `stage` holds: pp-1-stage under
 * DualPipe (the second direction's), else -1. */
int layout_mirror_stage(const struct layout *layout, int stage);

enum megatron_split { SPLIT_EVEN = 0, SPLIT_EDGES, SPLIT_UNEVEN, SPLIT_NONE };
/* How Megatron splits `layers` over layout's pp x vp chunks, set in layout: evenly
 * (nothing set), else with the embedding and the loss as layers of the
 * split (pp_embed, pp_loss), else with uneven first and last stages
 * (pp_first, pp_last) where pp does not divide the layers; SPLIT_NONE
 * (and nothing set) when none of them does. */
enum megatron_split layout_split_megatron(struct layout *layout, int layers);
/* Microbatches per step per pipeline (gbs / (mbs * dp)). */
long layout_microbatches(const struct layout *layout);

/* Why a layout is rejected.  Each reason has a stable key (JSON, tests:
 * reject_key) and a sentence with the layout's numbers (reject_describe);
 * neither names a command-line option, which is the CLI's to word. */
enum reject {
	REJECT_NONE = 0,
	REJECT_DEGREE,           /* a degree or mbs below 1 */
	REJECT_TOO_MANY_GPUS,    /* tp*pp*dp*cp beyond INT_MAX */
	REJECT_GPU_COUNT,        /* degrees do not multiply to the GPU count */
	REJECT_TP_HEADS,         /* tp does not divide the attention heads */
	REJECT_TP_KV_HEADS,      /* tp and the kv heads do not divide one another */
	REJECT_PP_LAYERS,        /* pp does not divide the layers */
	REJECT_VP_LAYERS,        /* vp does not divide the layers per stage */
	REJECT_VP_NEEDS_PP,
	REJECT_VP_NEEDS_INTERLEAVED,
	REJECT_INTERLEAVED_NEEDS_VP,
	REJECT_SP_NEEDS_TP,
	REJECT_NO_GBS,           /* the global batch is not set */
	REJECT_DP_GBS,           /* dp does not divide the global batch */
	REJECT_MBS_GBS,          /* mbs*dp does not divide the global batch */
	REJECT_INTERLEAVED_MICRO,/* interleaving needs microbatches % pp == 0 */
	REJECT_DUALPIPE,         /* DualPipe: even pp, vp 1, even microbatches >= 2*pp */
	REJECT_CP_SEQ,           /* the sequence is not a multiple of 2*cp */
	REJECT_TP_SEQ,           /* sp: the per-cp sequence is not a multiple of tp */
	REJECT_EP_NO_EXPERTS,
	REJECT_EP_EXPERTS,       /* ep does not divide the experts */
	REJECT_EP_DP,            /* ep*etp does not divide tp*dp*cp */
	REJECT_ETP,              /* etp does not divide the expert ffn */
	REJECT_STAGE_LAYERS,     /* pp_first/pp_last leave layers that do not split evenly */
	REJECT_EDGE_SPLIT,       /* layers + embedding + loss do not split over pp x vp chunks */
	REJECT_TABLE_SPLIT,      /* a pipeline layout string's chunks are not the model's layers */
	REJECT_MODULES_SELECTIVE,/* recompute_modules without recompute=selective */
	REJECT_ZERO_DP,          /* zero > 0 without data parallelism */
	REJECT_ZERO_PP,          /* zero 2/3 with pipeline parallelism (the framework's) */
	REJECT_OFFLOAD_ZERO,     /* optimizer_offload without zero >= 1 */
	REJECT_RECOMPUTE_LAYERS, /* recompute_layers without recompute=full */
	REJECT_OFFLOAD_LAYERS,   /* offload_layers with pp > 1, recompute, offload= or too many layers */
	REJECT_CP_SHORT,         /* search: cp leaves too few tokens per rank to pay */
	REJECT_CP_HYBRID,        /* cp with Mamba-2 or Gated DeltaNet mixers */
	/* framework_check_layout: what the training framework cannot run */
	REJECT_FW_PRECISION,
	REJECT_FW_SP,
	REJECT_FW_CP,
	REJECT_FW_EP,
	REJECT_FW_ZERO,
	REJECT_FW_PIPELINE,
	REJECT_FW_SCHEDULE,
	REJECT_FW_UNEVEN,
	REJECT_FW_PP_LAYOUT,     /* a free-form split where the framework takes none */
	REJECT_FW_OFFLOAD,       /* the framework has no optimizer CPU offload */
	REJECT_FW_LAYERS,        /* the framework has no block recompute / layer offloading */
	REJECT_PRECISION,        /* cost: the GPU has no rate for the precision */
	REJECT_BF16_LAYERS,      /* cost: more bf16 end layers than a pipeline stage holds */
	REJECT_OOM,              /* cost: out of memory */
	REJECT_HOST_OOM,         /* cost: the offloaded states exceed the node's host memory */
	REJECT_COUNT
};

/* The stable short key ("tp does not divide heads" ...). */
const char *reject_key(enum reject reason);

/* The sentence that says `reason` of layout and model on `gpus` GPUs (the
 * numbers that do not divide), written into buf. */
void reject_describe(enum reject reason, const struct layout *layout,
		     const struct model_spec *model, long gpus, char *buf,
		     size_t len);

/* Checks the layout against the model and the GPU count: products, what
 * must divide what, schedule constraints.  On failure writes one sentence
 * (reject_describe) into e; if why is not NULL it receives the reason
 * (search counts rejections by it).  layout_check splits the layers as
 * Megatron does (PART_FIRST_LAST); layout_check_part as `part` says.
 * What a framework cannot run (zero-2/3 with pipelines, a schedule ...)
 * is framework_check_layout's (framework.h). */
enum pplan_status layout_check(const struct layout *layout,
			       const struct model_spec *model, long gpus,
			       enum reject *why, struct perr *err);
enum pplan_status layout_check_part(const struct layout *layout,
				    const struct model_spec *model, long gpus,
				    enum stage_partition part,
				    enum reject *why, struct perr *err);

/* ---- the rank map ---- */
enum dim { DIM_TP = 0, DIM_CP, DIM_DP, DIM_PP, DIM_COUNT };

struct rank_order {
	enum dim inner_to_outer[DIM_COUNT];
};

/* "tp-cp-dp-pp" (the default, innermost first). */
void rank_order_default(struct rank_order *order);
/* "tp-cp-dp-pp" into buf. */
void rank_order_format(const struct rank_order *order, char *buf, size_t len);
int rank_order_eq(const struct rank_order *a, const struct rank_order *b);
enum pplan_status rank_order_parse(const char *s, struct rank_order *order,
				   struct perr *err);

struct rank_coords {
	int c[DIM_COUNT]; /* indexed by enum dim */
};

void layout_rank_coords(const struct layout *layout, const struct rank_order *order,
			long rank, struct rank_coords *out);
long layout_coords_rank(const struct layout *layout, const struct rank_order *order,
			const struct rank_coords *rc);
/* Distance in ranks between neighbours of one group of dimension d. */
long layout_dim_stride(const struct layout *layout, const struct rank_order *order,
		       enum dim dim);
int layout_dim_size(const struct layout *layout, enum dim dim);

#endif
