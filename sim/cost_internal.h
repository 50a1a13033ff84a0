/*
 * cost_internal.h: what cost.c (the assembly of a prediction) shares with
 * cost_layer.c (one transformer layer): the context of one prediction and
 * a layer's costs.  Not part of the cost API (cost.h).
 */
#ifndef PPLAN_COST_INTERNAL_H
#define PPLAN_COST_INTERNAL_H

#include "collective.h"
#include "cost.h"
#include "gemm.h"

struct layer_cost {      /* one layer, one microbatch, one GPU, seconds */
	double gemm_f, gemm_b;   /* backward = data + weight gradients */
	double gemm_bw;          /* weight-gradient part of gemm_b */
	double attn_f, attn_b;
	double elem_f, elem_b;
	double tp_f, tp_b;       /* exposed */
	double cp_f, cp_b;
	double ep_f, ep_b;
	double recompute;        /* added to the backward */
	/* offload_layers: what the host link does not hide of this layer's
	 * activations going out in the forward and back in the backward, if
	 * it is one of the offloaded layers (stage_body takes the share) */
	double off_f, off_b;
};

struct cost_ctx {
	const struct model_spec *m;
	const struct cluster *c;
	const struct layout *l;
	const struct train_opts *o;
	const struct cost_params *k;
	struct gemm_rate run;    /* GEMMs in the run's precision */
	struct gemm_rate half;   /* the attention core's precision (bf16 in fp8 runs) */
	/* Activations move as bf16, fp32 on the CPU backend: ab bytes an
	 * element; the element-wise byte counts are for 2-byte elements and
	 * scale with es = ab / 2. */
	double ab, es;
	double b, s, sl, T, h, t;
	double heads_l, kv_l;    /* query and key/value heads per TP rank */
	struct group_links links;
	struct layer_cost dense, moe; /* one layer of each kind */
	/* the same in bf16: an fp8-class run's bf16 end layers
	 * (train_opts.bf16_first/last; zero without) */
	struct layer_cost dense16, moe16;
	struct layer_mix mix[2];      /* each kind's mean make-up (hybrid stacks) */
};

/* The network and NVLink efficiency scales of the cost parameters
 * applied to a link (capped at 1). */
struct link cost_link_scaled(struct link k, const struct cost_params *cp);
void cost_ctx_init(struct cost_ctx *ctx, const struct model_spec *model,
		   const struct cluster *cluster,
		   const struct layout *layout, const struct train_opts *opts);
/* Forward + data-gradient + weight-gradient time of one linear layer
 * with `tokens` rows, input width k, output width n, added to lc. */
void cost_linear(const struct gemm_rate *rate, double tokens, double n, double k,
		 struct layer_cost *lc);
/* cost_linear for a layer of the model under ctx's training: with LoRA
 * the weight is frozen (no weight gradient) and, where the job's targets
 * include this linear's (enum lora_target; 0: never adapted), its rank-r
 * adapter's two GEMMs run beside it, forward and backward. */
void cost_linear_trained(const struct cost_ctx *ctx, double tokens, double n, double k,
			 unsigned target, struct layer_cost *lc);
/* One collective: from the measured curves where the profile has them
 * for this link class, else the alpha-beta model (collective.h). */
double cost_coll(const struct cost_ctx *ctx, enum coll_op op, double bytes, int n,
		 const struct link *link);
/* One layer: an MoE layer when moe is set, else a dense one. */
void cost_layer(const struct cost_ctx *ctx, int moe, struct layer_cost *lc);
/* out = nd dense layers + nm MoE layers. */
void cost_layers_sum(const struct layer_cost *dense, double nd, const struct layer_cost *moe,
		     double nm, struct layer_cost *out);

#endif
