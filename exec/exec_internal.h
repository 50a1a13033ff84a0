/*
 * exec_internal.h: the executor's state, shared by the files of exec/
 * (bring-up, parameters, the transformer layer, the op-list replay, the
 * measurement, the check).  Not for use outside exec/: the rest of pplan
 * sees exec.h.
 *
 * One rank holds one pipeline stage: vp model chunks, each a run of
 * transformer layers, plus the embedding on virtual stage 0 and the final
 * norm, LM head and loss on the last virtual stage.  Its parameters live
 * in one arena (docs/design.md, "Shared tables"): the weights used in compute (backend
 * dtype), the fp32 gradients (contiguous, so the data-parallel reduction
 * is one call per bucket), and the fp32 master weights and Adam moments
 * (the rank's shard under the distributed optimizer).  Every tensor is an
 * offset into those buffers.
 */
#ifndef PPLAN_EXEC_INTERNAL_H
#define PPLAN_EXEC_INTERNAL_H

#include <stdint.h>

#include "backend.h"
#include "exec.h"
#include "schedule.h"

/* ---- parameters ---- */

/* Per-layer tensors, in the order a layer's forward uses them. */
enum ptensor {
	PT_LN1_W = 0, PT_LN1_B, PT_QKV_W, PT_QKV_B, PT_PROJ_W, PT_PROJ_B,
	PT_LN2_W, PT_LN2_B, PT_FC1_W, PT_FC1_B, PT_FC2_W, PT_FC2_B,
	PT_LAYER_COUNT
};
/* Tensors outside the layers (ids after the layers'). */
enum gtensor { GT_WTE = 0, GT_WPE, GT_LNF_W, GT_LNF_B, GT_HEAD_W, GT_COUNT };

#define TENSOR_IDS_PER_LAYER 16
/* Global tensor id: the same on every layout (the check compares by it). */
static inline int tensor_layer_id(int layer, enum ptensor k)
{
	return layer * TENSOR_IDS_PER_LAYER + (int)k;
}
static inline int tensor_global_id(int layers, enum gtensor k)
{
	return layers * TENSOR_IDS_PER_LAYER + (int)k;
}

/* How a tensor is split over the tensor-parallel group (Shoeybi et al.). */
enum shard {
	SH_REPLICATED = 0, /* every TP rank holds all of it */
	SH_COLUMN,         /* output columns split (QKV, MLP up, their biases) */
	SH_ROW,            /* input rows split (projection, MLP down) */
	SH_VOCAB,          /* vocabulary rows split (embedding, LM head) */
};

struct xtensor {
	int id;              /* global id (tensor_layer_id / tensor_global_id) */
	char name[40];       /* "layer3.mlp.fc1.weight" */
	int chunk;           /* local model chunk */
	long rows, cols;     /* local shape */
	long grows, gcols;   /* global shape (init and the check) */
	long row0, col0;     /* where the local block sits in the global one */
	/* QKV: columns come in three groups (q, k, v heads) each split by
	 * heads; fc1 gated: two groups (gate, up).  col0 is per group. */
	int col_groups;
	long gcol_group[3], lcol_group[3], col0_group[3];
	long off;            /* element offset in the stage buffers */
	enum shard shard;
	int sp_partial;      /* replicated, but each TP rank sees its share of
			      * the tokens (SP): gradients summed over TP */
	int decay;           /* weight decay applies (matrices, not norms/biases) */
	int norm_owner;      /* this rank counts the tensor in gradient norms */
	float init_std;      /* normal(0, std) when > 0, else init_val */
	float init_val;
	int bucket;
};

struct bucket {
	int chunk;
	long off, len;       /* elements, len a multiple of dp */
	int last_tensor;     /* index in the tensor table of the last one */
	int embedding;       /* the tied word embedding alone (all-reduced
			      * between the first and last stage) */
	int launched;
	struct be_req req;
};

struct layer_params {        /* pointers into the arena, per tensor kind */
	void *w[PT_LAYER_COUNT];   /* compute dtype; NULL where absent (bias) */
	float *g[PT_LAYER_COUNT];  /* fp32 gradients */
};

/* ---- activations ---- */

/* What one layer keeps for its backward, for one microbatch.  Shapes:
 * Tl = tokens this rank holds between TP regions (T/tp with SP), T =
 * tokens of the microbatch, C = hidden, H/G/D = local heads, KV heads,
 * head dim, F = local MLP width, F2 = F or 2F (gated). */
struct layer_act {
	void *x_in;              /* (Tl, C) */
	float *ln1_mean, *ln1_rstd; /* (Tl) */
	void *ln1_out;           /* (Tl, C) */
	void *q, *k, *v;         /* (B,H,T,D), (B,G,T,D), (B,G,T,D) */
	void *att;               /* (B*H, T, T) softmax (three-step, recompute none) */
	void *ctx;               /* (B,H,T,D) attention output (fused backward) */
	float *lse;              /* (B,H,T) (fused) */
	void *ctx_rows;          /* (T, H*D) */
	void *x_mid;             /* (Tl, C) */
	float *ln2_mean, *ln2_rstd;
	void *ln2_out;           /* (Tl, C) */
	void *fc1_out;           /* (T, F2) */
	void *act_out;           /* (T, F) */
	/* zero-bubble: B keeps the output gradients of the four GEMMs, W
	 * consumes them (and gathers the inputs again under SP) */
	void *d_qkv, *d_proj, *d_fc1, *d_fc2; /* (T,(H+2G)D), (T,C), (T,F2), (T,C) */
};

/* One (microbatch, chunk) in flight: its layers' activations plus the
 * chunk's own (tokens, embedding, final norm, logits). */
struct slot {
	int busy, mb, chunk;
	char *mem;               /* this slot's block */
	struct layer_act *layer; /* [layers of the largest chunk] */
	int32_t *tokens, *targets;   /* (B*T) on the first / last chunk */
	void *chunk_out;         /* (Tl, C) input of the final norm */
	float *lnf_mean, *lnf_rstd;
	void *lnf_out;           /* (Tl, C) */
	void *dlogits;           /* (T, Vl): logits, then their gradient */
	double loss_sum;         /* sum of the token losses of this microbatch */
};

/* ---- the rank's view of the layout ---- */

struct dims {
	long B, S;               /* micro-batch (sequences), sequence length */
	long T, Tl;              /* tokens per microbatch; held between TP regions */
	long C;                  /* hidden */
	long H, G, D;            /* local query heads, local KV heads, head dim */
	long Hf, Gf;             /* global heads and KV heads */
	long F, F2, Ff;          /* local MLP width, with gating, global width */
	long V, Vl, v0;          /* vocabulary, the local shard and its start */
	long P;                  /* learned positions (0: none) */
	int gated, rms, bias, tied;
	float eps;
};

/* Scratch buffers shared by every op, never kept between ops (layer.c). */
struct work {
	void *full, *partial, *qkv, *scores, *ctx;
	void *d_a, *d_b, *d_full, *d_ln, *d_fc, *d_act, *d_fc2, *d_ctx_rows;
	void *scratch;           /* (Tl,C): the output of a recomputed layer */
	void *d_ctx, *dq, *dk, *dv, *d_att, *d_qkv, *emb;
	float *rowmax, *sums, *loss;
	struct layer_act re;     /* full recomputation: one layer's activations */
	/* context parallelism: the ring's two buffers of [k | v | dk | dv]
	 * (each T*G*D), a block's output and its gradients */
	void *ring[2];
	void *blk_o, *blk_dq, *blk_dk, *blk_dv;  /* (B,H,c,D), (B,H,c,D), (B,G,c,D) x2 */
	float *blk_l;                            /* (B,H,c) */
};

struct send_buf {            /* a pending non-blocking send */
	void *mem;
	struct be_req req;
	int kind, mb, chunk;     /* what it holds, until sent */
	int filled;
};

/* This rank's log of one step: op records and class segments, both in
 * terms of backend marks (resolved to seconds after the step). */
struct exec_seg {
	int mark;
	int cls;                 /* enum op_class of the time from this mark on */
};
struct exec_oplog {
	int kind, mb, chunk;     /* run_op kinds (sim/run.h) */
	int m0, m1;              /* marks at start and end */
};
/* A blocking collective that ends no sooner than its group's last
 * member arrives (steps.c splits the wait off as idle). */
enum sync_group { SYNC_WORLD, SYNC_DP, SYNC_EMB, SYNC_TP, SYNC_GROUPS };
struct exec_sync {
	int arrive, leave;       /* marks */
	int group;               /* enum sync_group */
	int cls;                 /* the class the wait was counted in */
};
struct exec_timeline {
	struct exec_seg *seg;
	int nseg, cseg;
	struct exec_oplog *op;
	int nop, cop;
	int *post;               /* marks where CP ring passes were posted */
	int npost, cpost;
	struct exec_sync *sync;  /* blocking collectives: arrival and return */
	int nsync, csync;
	int cls;                 /* the class now */
};

struct exec {
	/* inputs */
	struct exec_opts opt;
	struct model_spec m;
	struct layout l;
	struct dims d;
	int chunk_layers;        /* layers per model chunk */
	int first_layer[64];     /* global index of each local chunk's first layer */

	/* MPI and the groups from sim's rank map */
	MPI_Comm world;
	int rank, size, local_rank, local_size;
	struct rank_coords rc;   /* this rank's coordinates */
	int stage;               /* == rc.c[DIM_PP] */
	MPI_Comm tp_comm, dp_comm, pp_comm, emb_comm, cp_comm; /* host-side copies */
	/* dp: the ranks that hold the same weights, dp x cp of them (they
	 * see different samples, or different tokens of one under CP) */
	struct be_group *tp, *dp, *pp, *emb, *cp;
	int dpn, dpr;            /* size of that group, this rank's index in it */
	int has_emb_group;       /* first or last stage with tied embeddings, pp > 1 */

	struct backend *be;
	size_t esize;            /* bytes per element of the backend dtype */

	/* parameters */
	struct xtensor *tensors;
	int ntensors;
	struct bucket *buckets;
	int nbuckets;
	long nparam;             /* elements in the stage buffers (padded) */
	void *w;                 /* compute weights, nparam */
	float *grad;             /* nparam */
	long shard_len;          /* elements this rank's optimizer owns */
	long *shard_off;         /* [nbuckets]: where a bucket's shard starts */
	float *grad_shard;       /* shard_len: the reduced gradients (zero=1);
				  * NULL without the distributed optimizer
				  * (they are reduced in place in grad) */
	float *master, *adam_m, *adam_v; /* shard_len each */
	double *norms_dev;       /* [ntensor_ids] device sums of squares */
	double *norms;           /* [ntensor_ids] host: this step's squared norms */
	int ntensor_ids;
	void *pack;              /* SP-partial gradients packed for one all-reduce */
	long pack_len;
	struct layer_params *lp; /* [vp * chunk_layers] */
	void *wte, *wpe, *lnf_w, *lnf_b, *head;   /* NULL where not on this rank */
	float *g_wte, *g_wpe, *g_lnf_w, *g_lnf_b, *g_head;

	/* activations */
	struct schedule_view {
		struct pipe_schedule *s;
		long first, count;   /* this stage's ops */
	} sched;
	struct slot *slots;
	int nslots;
	size_t slot_bytes;
	struct work work;        /* pointers into work_mem */
	char *work_mem;
	size_t work_bytes;
	int32_t *tok_host;       /* (2, T) tokens and targets, host */
	int slots_peak;          /* most slots busy at once */
	struct send_buf *sends;
	int nsends;
	void *grad_in;           /* (Tl, C) received output gradient */

	/* step state */
	long step;               /* 0-based, warm-up included */
	long microbatches;       /* per pipeline per step */
	int tag_ub;              /* MPI_TAG_UB */
	int opt_overlap_grad;    /* buckets go during the backward */
	int pending_error;       /* a bucket failed to start inside a backward */
	struct perr pending;
	int *bwd_done;           /* [vp] backwards finished this step per chunk */
	double step_loss;        /* this rank's sum of token losses */

	/* measurement */
	struct exec_timeline tl;     /* this step's ops on this rank */
	int *layer_last_tensor;      /* [vp * chunk_layers]: index in tensors */
	int *chunk_last_tensor;      /* [vp] */
	int *head_last_tensor;       /* [vp]: after the head and final norm, -1 */

	/* the watchdog */
	const char *doing;       /* what the rank does now (messages) */
	long doing_op;           /* index in the stage's ops */
	MPI_Comm node;           /* the ranks of this host */
	MPI_Win board_win;       /* the host's heartbeat board */
	struct beat *board;      /* [local_size] */
	double gone_checked;     /* when the watchdog last looked for a gone rank */
	double last_poll_s;      /* when this rank last polled a wait (0: never) */
	int *node_world_rank;    /* [local_size] */
	char host[64];
	char backend_note[256];
	double probe_tflops;     /* the CPU's sgemm probe (0 on CUDA) */
	double probe_gbps;       /* the CPU's memcpy probe */
	/* clocks.c: this rank's clock against rank 0's (add it to read rank
	 * 0's), within clock_bound_s; when this step began on rank 0's clock */
	double clock_to_rank0_s, clock_bound_s, step_origin_s;
	struct grad_snap {       /* --check: step 1's gradients, rank 0 */
		int nids;
		float **val;     /* [nids] the global tensor, NULL where none */
		long *len, *filled;
		char (*names)[40];
	} snap;
	enum exec_fault_kind fault_armed; /* a wrong value due in this step */
	struct integrity {       /* --check: step 1's data, as computed and as sent */
		int on;          /* this step is checked */
		long gemms, messages; /* GEMMs recomputed; messages hashed, sent and received */
		long gemm_bad;   /* GEMMs whose recomputation differs */
		char first_bad[200]; /* the first of them: where and which element */
		/* per pipeline peer (its index in the pp group): order-free sums of
		 * the hashes of what was sent to it and received from it */
		uint64_t *sent, *received;
		int ok;          /* rank 0, after integrity_collect: all agree */
		char verdict[256]; /* rank 0: what disagrees, where ("" when ok) */
	} integ;
};

/* One rank's last sign of life, in a window every rank of the host sees. */
struct beat {
	double t;                /* CLOCK_MONOTONIC seconds, at the op's start */
	long step, op;
	int kind, mb, chunk, state; /* state: 0 running, 1 done, 2 crashed */
	int pid;                 /* the rank's process on this host */
	double wait_t;           /* its last poll of a wait (0: none yet) */
	char what[80];           /* what that wait is for */
};

/* params.c: the global element index of local element (r, c) of t */
uint64_t exec_global_index(const struct xtensor *tensor, long r, long c);
/* grads.c: the part of tensor t in this rank's shard of its bucket: its
 * reduced gradients at *g, the first one's local element index in *first;
 * returns how many (0: none, *g and *first untouched) */
long shard_part(struct exec *exec, const struct xtensor *tensor, float **g, long *first);
/* steps.c: every rank's len bytes to rank 0 (*all, *lens, *offs there) */
enum pplan_status exec_gather_blobs(struct exec *exec, const void *mine, int len,
				    char **all, int **lens, int **offs, struct perr *err);
/* integrity.c: --check's second computation of step 1's data.  Each
 * forward and input-gradient GEMM is computed twice and must match to the
 * bit (the same call on the same inputs: a difference is a wrong value,
 * not rounding); each pipeline message is hashed by its sender before it
 * leaves and by its receiver when it arrives, and the two must match.
 * integrity_begin arms it for a step; integrity_gemm follows a GEMM into
 * c (beta 0) with its recomputation; integrity_sent and
 * integrity_received hash a message (bytes at p) for pp peer `peer` under
 * `tag`; integrity_collect (collective) gathers every rank's sums and
 * mismatches to rank 0, which judges them into exec->integ.ok and
 * .verdict. */
enum pplan_status integrity_begin(struct exec *exec, struct perr *err);
void integrity_gemm(struct exec *exec, int ta, int tb, long m, long n, long k, const void *a,
		    long lda, const void *b, long ldb, const void *c, long ldc, const char *what);
void integrity_sent(struct exec *exec, const void *p, size_t bytes, int peer, int tag);
void integrity_received(struct exec *exec, const void *p, size_t bytes, int peer, int tag);
enum pplan_status integrity_collect(struct exec *exec, struct perr *err);
void integrity_free(struct exec *exec);

/* gradcheck.c: step 1's gradients to rank 0's exec->snap (collective); the
 * rounding bound for the layout and dtype of opts; the element-wise comparison */
enum pplan_status gradcheck_capture(struct exec *exec, struct perr *err);
void gradcheck_free(struct grad_snap *snap);
double gradcheck_bound(const struct exec_opts *opts);
void gradcheck_compare(const struct grad_snap *run, const struct grad_snap *ref, double bound,
		       struct run_check *out);

/* fault.c: at the start of each step (exits, crashes, hangs, sleeps or
 * arms a wrong value); the armed value applied to the middle of buf */
void exec_fault_step(struct exec *exec);
void exec_fault_apply(struct exec *exec, enum exec_fault_kind kind, void *buf, long count);

/* watchdog.c */
enum pplan_status watch_open(struct exec *exec, struct perr *err);
void watch_close(struct exec *exec);
void exec_heartbeat(struct exec *exec, const struct sched_op *op);
enum pplan_status exec_interrupted(struct exec *exec, struct perr *err);
enum pplan_status exec_wait_mpi(struct exec *exec, MPI_Request *r, const char *what,
				struct perr *err);
enum pplan_status exec_barrier(struct exec *exec, struct perr *err);
double exec_now(void);

/* bringup.c: exec_open on any communicator (the check's reference runs
 * on MPI_COMM_SELF) */
enum pplan_status exec_open_comm(const struct exec_opts *opts, MPI_Comm world,
				 exec_t **out, struct perr *err);

/* clocks.c: every rank's clock against rank 0's (collective, at
 * bring-up); now on rank 0's clock */
enum pplan_status exec_clock_sync(struct exec *exec, struct perr *err);
double exec_clock_rank0(const struct exec *exec);

/* replay.c */
enum pplan_status exec_step(struct exec *exec, struct perr *err);

/* probe.c: the CPU as a device the cost model can price */
void probe_cpu(struct exec *exec);
void probe_machine(const struct exec *exec, struct cluster *cluster);

/* timeline.c: the step's log */
void tl_reset(struct exec *exec);
void tl_class(struct exec *exec, int cls);        /* from now on, time is cls */
void tl_post(struct exec *exec);                  /* a CP ring pass is posted now */
int tl_sync_begin(struct exec *exec, int group);   /* entering a blocking collective */
void tl_sync_end(struct exec *exec, int sync);     /* and back from it */
int tl_op_begin(struct exec *exec, int kind, int mb, int chunk, int cls);
void tl_op_end(struct exec *exec, int op);        /* back to idle */

/* grads.c: gradient buckets as the backward pass finishes them, then
 * the reductions it could not overlap, and the update */
void grads_ready(struct exec *exec, int chunk, int upto_tensor);
void grads_poll(struct exec *exec);
enum pplan_status grads_finish(struct exec *exec, struct perr *err);
enum pplan_status grads_update(struct exec *exec, struct perr *err);

/* params.c */
void exec_tensor_name(const struct model_spec *model, int id, char *buf, size_t len);
double exec_gauss(uint64_t seed, uint64_t a, uint64_t b);
long params_shard_begin(const struct exec *exec, const struct bucket *bucket);
long params_shard_len(const struct exec *exec, const struct bucket *bucket);
enum pplan_status params_build(struct exec *exec, struct perr *err);
void params_init(struct exec *exec);
void params_free(struct exec *exec);

/* Where local chunk `chunk` of this stage sits in the model. */
static inline int exec_first_vstage(const struct exec *x, int chunk)
{
	return chunk == 0 && x->stage == 0;
}
static inline int exec_last_vstage(const struct exec *x, int chunk)
{
	return chunk == x->l.vp - 1 && x->stage == x->l.pp - 1;
}

enum bwd_part { BWD_ALL = 0, BWD_INPUT, BWD_WEIGHT };

/* layer.c: one transformer layer, and the tensor-parallel regions
 * around its two halves (kind of tp_coll: 0 all-gather, 1
 * reduce-scatter, 2 all-reduce in place). */
enum pplan_status tp_coll(struct exec *exec, int kind, void *out, const void *in,
			  long count, struct perr *err);
enum pplan_status tp_enter(struct exec *exec, const void *in, void *full,
			   const void **out, struct perr *err);
enum pplan_status tp_exit(struct exec *exec, void *partial, void *out,
			  struct perr *err);
enum pplan_status tp_enter_bwd(struct exec *exec, void *dfull, void *dout,
			       struct perr *err);
enum pplan_status tp_exit_bwd(struct exec *exec, const void *d, void *dfull,
			      const void **out, struct perr *err);
enum pplan_status layer_fwd(struct exec *exec, struct layer_params *params,
			    struct layer_act *acts, void *out, struct perr *err);
/* dout (Tl,C) -> din (Tl,C), which may be dout itself; part BWD_ALL or
 * BWD_INPUT (which keeps the GEMMs' output gradients in a). */
enum pplan_status layer_bwd(struct exec *exec, struct layer_params *params,
			    struct layer_act *acts, const void *dout, void *din,
			    enum bwd_part part, struct perr *err);
/* The four GEMMs' weight gradients from the kept output gradients. */
enum pplan_status layer_wgrad(struct exec *exec, struct layer_params *params,
			      struct layer_act *acts, const void *dqkv,
			      const void *dproj, const void *dfc1,
			      const void *dfc2, struct perr *err);

/* ring.c: context parallelism's attention core, a ring over the cp ranks
 * (q, k, v, ctx, lse of a in the half-major layout of ring.c) */
enum pplan_status ring_attn_fwd(struct exec *exec, struct layer_act *acts, struct perr *err);
enum pplan_status ring_attn_bwd(struct exec *exec, struct layer_act *acts, struct perr *err);

/* chunk.c: forward and backward of one model chunk for one microbatch. */
enum pplan_status chunk_forward(struct exec *exec, struct slot *sl, int chunk,
				const void *in, void *out, struct perr *err);
/* dout: the gradient of the chunk's output (ignored on the last virtual
 * stage, whose slot holds the logits' gradient); din receives the input
 * gradient (ignored on the first).  last_mb: this is the chunk's last
 * backward of the step (its gradients are final: buckets may go). */
enum pplan_status chunk_backward(struct exec *exec, struct slot *sl, int chunk,
				 const void *dout, void *din, enum bwd_part part,
				 int last_mb, struct perr *err);
enum pplan_status acts_build(struct exec *exec, struct perr *err);
void acts_free(struct exec *exec);

#endif
