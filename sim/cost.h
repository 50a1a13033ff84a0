/*
 * cost.h: the cost model.  Given a model, a cluster, a layout and the
 * training options, predicts per-GPU memory (term by term, on the
 * most-loaded pipeline stage) and step time (term by term).  The formulas
 * and their sources are in sim/MODEL.md; this header only names them.
 * Everything here is plain data; cost_predict allocates nothing.
 */
#ifndef PPLAN_COST_H
#define PPLAN_COST_H

#include "cluster.h"
#include "layout.h"
#include "memory.h"
#include "model.h"
#include "train_opts.h"

struct time_breakdown {       /* seconds per step on the critical path */
	double compute, recompute, tp_comm, cp_comm, ep_comm, pp_comm;
	double dp_comm_exposed, bubble, optimizer;
	double dp_comm_total;     /* before overlap, for the report */
};

/* Durations of one microbatch on one model chunk (layers of one virtual
 * stage) on one GPU, seconds.  The event simulator consumes these. */
struct chunk_cost {
	double fwd_s;       /* forward incl. TP/CP/EP communication not hidden */
	double bwd_s;       /* backward (input + weight grads) incl. recompute */
	double bwd_w_s;     /* the weight-gradient GEMM part of bwd_s */
	double recompute_s; /* the recomputation part of bwd_s */
};

struct prediction {
	int feasible;
	enum reject reject;            /* REJECT_NONE if feasible */
	char reject_msg[256];          /* the sentence for the user */
	long microbatches;             /* per pipeline per step */
	double step_time_s;
	double tokens_per_s;
	double tflops_per_gpu;         /* model FLOPs */
	double mfu;                    /* fraction, 0..1 */
	double hfu;
	double bubble_fraction;        /* mean over stages */
	double model_flops;            /* per step, whole cluster */
	double hw_flops;               /* incl. recompute */
	struct mem_breakdown mem;
	struct time_breakdown time;
	/* Per model chunk: chunk_cost for the body chunk, and the extra
	 * forward/backward of the first stage (embedding) and last stage
	 * (LM head, loss). */
	struct chunk_cost chunk;
	int split_layers, split_ref;   /* the model's layers, and the layers of the
					* stage `chunk` was priced on (vp chunks) */
	double first_extra_fwd_s, first_extra_bwd_s;
	double last_extra_fwd_s, last_extra_bwd_s;
	double p2p_s;                  /* one activation send between stages */
	double dp_reduce_s;            /* one stage's gradient reduction (reduce-scatter
					* or all-reduce), overlapped with the backward */
	double dp_gather_exposed_s;    /* the ZeRO-1/2 parameter all-gather's part that
					* the next step's forward does not hide */
	double dp_emb_s;               /* the tied embedding's gradient all-reduce
					* between the first and last stage, exposed
					* (in dp_comm_exposed) */
	double optimizer_s;
	/* Optimizer offload's terms (0 without): the gradient shard to host
	 * memory, CPU Adam, the updated weights back (optimizer_s holds the
	 * exposed ones). */
	double offload_d2h_s, offload_adam_s, offload_h2d_s;
};

/* Predicts layout for model on cluster.  Infeasible layouts (out of memory, invalid)
 * give PPLAN_OK with pred->feasible = 0 and a reason; PPLAN_EINPUT only for
 * requests that make no sense (e.g. a layout for another GPU count). */
enum pplan_status cost_predict(const struct model_spec *model,
			       const struct cluster *cluster,
			       const struct layout *layout,
			       const struct train_opts *opts,
			       struct prediction *pred, struct perr *err);

/* The links the layout's groups use under opts->order (sim/MODEL.md,
 * "Collectives"): tp, cp, the dp x cp gradient reduction, pp and ep. */
struct group_links {
	struct link tp, cp, dp, pp, ep;
	long tp_stride, cp_stride, dp_stride, pp_stride, ep_stride;
};
void cost_group_links(const struct cluster *cluster, const struct layout *layout,
		      const struct train_opts *opts, struct group_links *out);

/* Bytes the forward element-wise kernels of one dense layer move for
 * `tokens` tokens (norms, residuals, bias and activation, Q/K/V layout:
 * sim/MODEL.md 4.3), as the cost model counts them; the backward counts
 * twice that.  `pplan calibrate` states the measured rate of those
 * kernels in these bytes. */
double cost_layer_elementwise_bytes(const struct model_spec *model, double tokens, int tp,
				    int sp, enum precision prec);

/* Model FLOPs of one step (forward + backward, no recompute), generalised
 * for GQA, gated MLPs, MoE and MLA (sim/MODEL.md section 2). */
double cost_model_flops(const struct model_spec *model, long seq, long gbs);
/* The model FLOPs of one step of the training opts describes: as above,
 * or under LoRA the forward, the data gradients and the attention core's
 * backward (no weight gradients; sim/MODEL.md 4.7). */
double cost_train_flops(const struct model_spec *model, const struct train_opts *opts,
			long gbs);

/* The share of full causal attention work that sliding windows keep,
 * over the layers of model at sequence length s (1: no window).  Model
 * FLOPs (and so MFU) count full attention, as Megatron-LM does. */
double cost_window_share(const struct model_spec *model, double s);

#endif
