/*
 * layer.c: one model chunk's forward and backward for one microbatch, as
 * Megatron-LM computes it, on the backend's GEMMs and kernels.
 *
 * A transformer layer (pre-norm):
 *     x_mid = x_in + proj(attention(qkv(norm1(x_in))))
 *     x_out = x_mid + fc2(act(fc1(norm2(x_mid))))
 * Tensor parallelism (Shoeybi et al. 2019): QKV and fc1 are column-
 * parallel, proj and fc2 row-parallel, so each half needs one collective
 * forward and one backward.  Without sequence parallelism the block
 * input is replicated and the row-parallel outputs are all-reduced;
 * with it (Korthikanti et al. 2022) the activations between the blocks
 * are split by tokens, all-gathered before QKV and fc1 and
 * reduce-scattered after proj and fc2, and the backward does the reverse
 * (gathering the inputs again for the weight gradients).  The embedding
 * is vocabulary-parallel (a partial sum, reduced like a row-parallel
 * output); the LM head is column-parallel over the vocabulary with the
 * cross-entropy of Megatron's vocab_parallel_cross_entropy.
 *
 * Attention core: the fused kernel (CUDA: flash-style; keeps only its
 * output and log-sum-exp) or three steps, QK^T as a batched GEMM per
 * KV-head group, the causal softmax kernel, times V (the CPU's way).
 * Recomputation: selective drops the three-step softmax and recomputes
 * it in the backward; full keeps only each layer's input and recomputes
 * the layer's forward in the backward.
 *
 * Zero-bubble (Qi et al. 2023): BWD_INPUT computes the input gradients
 * (norm and bias gradients too) and keeps the output gradients of the
 * four GEMMs; BWD_WEIGHT computes the weight gradients from them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define AT(x, p, i) ((void *)((char *)(p) + (size_t)(i) * (x)->esize))

/* ---- GEMM shapes (row-major; W is (K, N), Y = X W) ---- */

/* y (R,N) = x (R,K) w (K,N) */
static void mm_fwd(struct exec *x, void *y, const void *in, const void *w,
		   long R, long K, long N)
{
	x->be->ops->gemm(x->be, 0, 0, R, N, K, 1.0f, in, K, w, N, 0.0f, y, N,
			 x->be->dtype);
	exec_fault_apply(x, FAULT_GEMM, y, R * N);
	integrity_gemm(x, 0, 0, R, N, K, in, K, w, N, y, N, "a forward");
}

/* dx (R,K) = dy (R,N) w^T */
static void mm_dgrad(struct exec *x, void *dx, const void *dy, const void *w,
		     long R, long K, long N)
{
	x->be->ops->gemm(x->be, 0, 1, R, K, N, 1.0f, dy, N, w, N, 0.0f, dx, K,
			 x->be->dtype);
	integrity_gemm(x, 0, 1, R, K, N, dy, N, w, N, dx, K, "an input-gradient");
}

/* dw (K,N) += x^T (K,R) dy (R,N), fp32 */
static void mm_wgrad(struct exec *x, float *dw, const void *in, const void *dy,
		     long R, long K, long N)
{
	x->be->ops->gemm(x->be, 1, 0, K, N, R, 1.0f, in, K, dy, N, 1.0f, dw, N,
			 KD_F32);
}

/* ---- tensor-parallel regions ---- */

enum pplan_status tp_coll(struct exec *x, int kind, void *out,
				 const void *in, long count, struct perr *e)
{
	struct backend *b = x->be;
	enum pplan_status st;
	int prev = x->tl.cls;
	tl_class(x, OC_TP);
	if (kind == 0)
		st = b->ops->allgather(b, x->tp, out, in, count, b->dtype, NULL, e);
	else if (kind == 1)
		st = b->ops->reducescatter(b, x->tp, out, in, count, b->dtype, NULL, e);
	else
		st = b->ops->allreduce(b, x->tp, out, count, b->dtype, BE_SUM, NULL, e);
	tl_class(x, prev);
	return st;
}

/* Into a TP region: (Tl,C) -> (T,C).  Returns the full tensor (`full`,
 * or `in` itself without SP). */
enum pplan_status tp_enter(struct exec *x, const void *in, void *full,
				  const void **out, struct perr *e)
{
	if (x->l.tp > 1 && x->l.sp) {
		*out = full;
		return tp_coll(x, 0, full, in, x->d.Tl * x->d.C, e);
	}
	*out = in;
	return PPLAN_OK;
}

/* Out of a TP region: the partial (T,C) -> (Tl,C) in `out` (may be
 * `partial` itself without SP). */
enum pplan_status tp_exit(struct exec *x, void *partial, void *out,
				 struct perr *e)
{
	if (x->l.tp == 1) {
		if (out != partial)
			x->be->ops->copy(x->be, out, partial, (size_t)x->d.T * x->d.C * x->esize);
		return PPLAN_OK;
	}
	if (x->l.sp)
		return tp_coll(x, 1, out, partial, x->d.Tl * x->d.C, e);
	{
		enum pplan_status st = tp_coll(x, 2, partial, NULL, x->d.T * x->d.C, e);
		if (st == PPLAN_OK && out != partial)
			x->be->ops->copy(x->be, out, partial, (size_t)x->d.T * x->d.C * x->esize);
		return st;
	}
}

/* Backward of tp_enter: the gradient of the full input (T,C) -> (Tl,C). */
enum pplan_status tp_enter_bwd(struct exec *x, void *dfull, void *dout,
				      struct perr *e)
{
	return tp_exit(x, dfull, dout, e);
}

/* Backward of tp_exit: (Tl,C) -> (T,C). */
enum pplan_status tp_exit_bwd(struct exec *x, const void *d, void *dfull,
				     const void **out, struct perr *e)
{
	return tp_enter(x, d, dfull, out, e);
}

/* ---- workspace (struct work, exec_internal.h) ---- */

static struct work *W(struct exec *x)
{
	return &x->work;
}

/* ---- one layer ---- */

/* The attention layout changes, once per half of the rank's sequence
 * under context parallelism (ring.c: the tokens come as two chunks, each
 * a contiguous block of rows and of heads), once otherwise. */
static void halves(const struct exec *x, long *n, long *len)
{
	*n = x->l.cp > 1 ? 2 : 1;
	*len = x->d.S / x->l.cp / *n;
}

static void split_heads(struct exec *x, struct layer_act *a, const void *qkv)
{
	const struct dims *d = &x->d;
	long n, len, W = (d->H + 2 * d->G) * d->D;
	halves(x, &n, &len);
	for (long h = 0; h < n; h++)
		x->be->k->qkv_split(x->be->ks, AT(x, a->q, h * d->B * d->H * len * d->D),
				    AT(x, a->k, h * d->B * d->G * len * d->D),
				    AT(x, a->v, h * d->B * d->G * len * d->D),
				    AT(x, qkv, h * d->B * len * W), d->B, len, d->H, d->G, d->D);
}

static void merge_heads(struct exec *x, void *dqkv, const void *dq, const void *dk,
			const void *dv)
{
	const struct dims *d = &x->d;
	long n, len, W = (d->H + 2 * d->G) * d->D;
	halves(x, &n, &len);
	for (long h = 0; h < n; h++)
		x->be->k->qkv_merge(x->be->ks, AT(x, dqkv, h * d->B * len * W),
				    AT(x, dq, h * d->B * d->H * len * d->D),
				    AT(x, dk, h * d->B * d->G * len * d->D),
				    AT(x, dv, h * d->B * d->G * len * d->D), d->B, len, d->H,
				    d->G, d->D);
}

static void heads_rows(struct exec *x, void *rows, const void *heads, int to_rows)
{
	const struct dims *d = &x->d;
	long n, len, HD = d->H * d->D;
	halves(x, &n, &len);
	for (long h = 0; h < n; h++) {
		void *r = AT(x, rows, h * d->B * len * HD);
		void *hh = AT(x, heads, h * d->B * d->H * len * d->D);
		if (to_rows)
			x->be->k->heads_to_rows(x->be->ks, r, hh, d->B, len, d->H, d->D);
		else
			x->be->k->rows_to_heads(x->be->ks, hh, r, d->B, len, d->H, d->D);
	}
}

static enum pplan_status attn_core_fwd(struct exec *x, struct layer_act *a,
				       void *att, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	long rep = d->H / d->G, S = d->S, D = d->D;
	float scale = (float)(1.0 / sqrt((double)D));

	if (x->l.cp > 1)
		return ring_attn_fwd(x, a, e);
	if (x->opt.fused_attention) {
		b->k->attention_fwd(b->ks, a->ctx, a->lse, a->q, a->k, a->v, d->B, d->H,
				    d->G, S, S, D, 0, 0, scale);
		return PPLAN_OK;
	}
	/* scores (rep*S, S) = Q_group (rep*S, D) K^T per (batch, KV head) */
	b->ops->gemm_batched(b, 0, 1, rep * S, S, D, 1.0f, a->q, D, rep * S * D,
			     a->k, D, S * D, 0.0f, att, S, rep * S * S, d->B * d->G,
			     b->dtype);
	b->k->softmax_causal_fwd(b->ks, att, att, d->B * d->H, S, S, 0, 0, scale);
	/* ctx (rep*S, D) = att (rep*S, S) V (S, D) */
	b->ops->gemm_batched(b, 0, 0, rep * S, D, S, 1.0f, att, S, rep * S * S,
			     a->v, D, S * D, 0.0f, a->ctx, D, rep * S * D,
			     d->B * d->G, b->dtype);
	return PPLAN_OK;
}

enum pplan_status layer_fwd(struct exec *x, struct layer_params *p,
				   struct layer_act *a, void *out, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = W(x);
	const struct kern_ops *k = b->k;
	long T = d->T, Tl = d->Tl, C = d->C;
	long QKV = (d->H + 2 * d->G) * d->D, HD = d->H * d->D;
	const void *full;
	void *att = a->att ? a->att : w->scores;
	enum pplan_status st;

	/* attention block */
	if (d->rms)
		k->rmsnorm_fwd(b->ks, a->ln1_out, a->ln1_rstd, a->x_in, p->w[PT_LN1_W], Tl, C, d->eps);
	else
		k->layernorm_fwd(b->ks, a->ln1_out, a->ln1_mean, a->ln1_rstd, a->x_in,
				 p->w[PT_LN1_W], p->w[PT_LN1_B], Tl, C, d->eps);
	if ((st = tp_enter(x, a->ln1_out, w->full, &full, e)) != PPLAN_OK)
		return st;
	mm_fwd(x, w->qkv, full, p->w[PT_QKV_W], T, C, QKV);
	if (p->w[PT_QKV_B])
		k->bias_add(b->ks, w->qkv, p->w[PT_QKV_B], T, QKV);
	split_heads(x, a, w->qkv);
	if ((st = attn_core_fwd(x, a, att, e)) != PPLAN_OK)
		return st;
	heads_rows(x, a->ctx_rows, a->ctx, 1);
	mm_fwd(x, w->partial, a->ctx_rows, p->w[PT_PROJ_W], T, HD, C);
	if ((st = tp_exit(x, w->partial, a->x_mid, e)) != PPLAN_OK)
		return st;
	if (p->w[PT_PROJ_B])
		k->bias_add(b->ks, a->x_mid, p->w[PT_PROJ_B], Tl, C);
	k->add(b->ks, a->x_mid, a->x_mid, a->x_in, Tl * C);

	/* MLP block */
	if (d->rms)
		k->rmsnorm_fwd(b->ks, a->ln2_out, a->ln2_rstd, a->x_mid, p->w[PT_LN2_W], Tl, C, d->eps);
	else
		k->layernorm_fwd(b->ks, a->ln2_out, a->ln2_mean, a->ln2_rstd, a->x_mid,
				 p->w[PT_LN2_W], p->w[PT_LN2_B], Tl, C, d->eps);
	if ((st = tp_enter(x, a->ln2_out, w->full, &full, e)) != PPLAN_OK)
		return st;
	mm_fwd(x, a->fc1_out, full, p->w[PT_FC1_W], T, C, d->F2);
	if (p->w[PT_FC1_B])
		k->bias_add(b->ks, a->fc1_out, p->w[PT_FC1_B], T, d->F2);
	if (d->gated)
		k->swiglu_fwd(b->ks, a->act_out, a->fc1_out, T, d->F);
	else
		k->gelu_fwd(b->ks, a->act_out, a->fc1_out, T * d->F);
	mm_fwd(x, w->partial, a->act_out, p->w[PT_FC2_W], T, d->F, C);
	if ((st = tp_exit(x, w->partial, out, e)) != PPLAN_OK)
		return st;
	if (p->w[PT_FC2_B])
		k->bias_add(b->ks, out, p->w[PT_FC2_B], Tl, C);
	k->add(b->ks, out, out, a->x_mid, Tl * C);
	grads_poll(x);
	return PPLAN_OK;
}

/* The weight gradients of the four GEMMs (and nothing else), from the
 * output gradients dqkv, dproj, dfc1, dfc2. */
enum pplan_status layer_wgrad(struct exec *x, struct layer_params *p,
				     struct layer_act *a, const void *dqkv,
				     const void *dproj, const void *dfc1,
				     const void *dfc2, struct perr *e)
{
	const struct dims *d = &x->d;
	struct work *w = W(x);
	long T = d->T, C = d->C;
	long QKV = (d->H + 2 * d->G) * d->D, HD = d->H * d->D;
	const void *full;
	enum pplan_status st;

	mm_wgrad(x, p->g[PT_FC2_W], a->act_out, dfc2, T, d->F, C);
	if ((st = tp_enter(x, a->ln2_out, w->full, &full, e)) != PPLAN_OK)
		return st;
	mm_wgrad(x, p->g[PT_FC1_W], full, dfc1, T, C, d->F2);
	mm_wgrad(x, p->g[PT_PROJ_W], a->ctx_rows, dproj, T, HD, C);
	if ((st = tp_enter(x, a->ln1_out, w->full, &full, e)) != PPLAN_OK)
		return st;
	mm_wgrad(x, p->g[PT_QKV_W], full, dqkv, T, C, QKV);
	return PPLAN_OK;
}

static enum pplan_status attn_core_bwd(struct exec *x, struct layer_act *a,
				       void *att, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = W(x);
	long rep = d->H / d->G, S = d->S, D = d->D;
	float scale = (float)(1.0 / sqrt((double)D));

	if (x->l.cp > 1)
		return ring_attn_bwd(x, a, e);
	if (x->opt.fused_attention) {
		b->k->attention_bwd(b->ks, w->dq, w->dk, w->dv, w->d_ctx, a->ctx, a->lse,
				    a->q, a->k, a->v, d->B, d->H, d->G, S, S, D, 0, 0,
				    scale);
		return PPLAN_OK;
	}
	if (!a->att) {
		/* selective recomputation: the softmax again */
		int prev = x->tl.cls;
		tl_class(x, OC_RECOMPUTE);
		b->ops->gemm_batched(b, 0, 1, rep * S, S, D, 1.0f, a->q, D, rep * S * D,
				     a->k, D, S * D, 0.0f, att, S, rep * S * S,
				     d->B * d->G, b->dtype);
		b->k->softmax_causal_fwd(b->ks, att, att, d->B * d->H, S, S, 0, 0, scale);
		tl_class(x, prev);
	}
	/* d_att (rep*S, S) = d_ctx (rep*S, D) V^T */
	b->ops->gemm_batched(b, 0, 1, rep * S, S, D, 1.0f, w->d_ctx, D, rep * S * D,
			     a->v, D, S * D, 0.0f, w->d_att, S, rep * S * S,
			     d->B * d->G, b->dtype);
	/* dV (S, D) = att^T (S, rep*S) d_ctx (rep*S, D) */
	b->ops->gemm_batched(b, 1, 0, S, D, rep * S, 1.0f, att, S, rep * S * S,
			     w->d_ctx, D, rep * S * D, 0.0f, w->dv, D, S * D,
			     d->B * d->G, b->dtype);
	b->k->softmax_causal_bwd(b->ks, w->d_att, w->d_att, att, d->B * d->H, S, S, scale);
	/* dQ (rep*S, D) = dS (rep*S, S) K (S, D) */
	b->ops->gemm_batched(b, 0, 0, rep * S, D, S, 1.0f, w->d_att, S, rep * S * S,
			     a->k, D, S * D, 0.0f, w->dq, D, rep * S * D,
			     d->B * d->G, b->dtype);
	/* dK (S, D) = dS^T (S, rep*S) Q (rep*S, D) */
	b->ops->gemm_batched(b, 1, 0, S, D, rep * S, 1.0f, w->d_att, S, rep * S * S,
			     a->q, D, rep * S * D, 0.0f, w->dk, D, S * D,
			     d->B * d->G, b->dtype);
	return PPLAN_OK;
}

/* dout (Tl,C) -> din (Tl,C).  part BWD_ALL or BWD_INPUT. */
enum pplan_status layer_bwd(struct exec *x, struct layer_params *p,
				   struct layer_act *a, const void *dout,
				   void *din, enum bwd_part part, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = W(x);
	const struct kern_ops *k = b->k;
	long T = d->T, Tl = d->Tl, C = d->C;
	long QKV = (d->H + 2 * d->G) * d->D, HD = d->H * d->D;
	int keep = part == BWD_INPUT;
	void *dfc2 = keep ? a->d_fc2 : w->d_fc2;
	void *dfc1 = keep ? a->d_fc1 : w->d_fc;
	void *dproj = keep ? a->d_proj : w->d_full;
	void *dqkv = keep ? a->d_qkv : w->d_qkv;
	void *att = a->att ? a->att : w->scores;
	const void *g;
	enum pplan_status st;

	/* MLP block */
	if (p->g[PT_FC2_B])
		k->bias_bwd(b->ks, p->g[PT_FC2_B], dout, Tl, C);
	if ((st = tp_exit_bwd(x, dout, dfc2, &g, e)) != PPLAN_OK)
		return st;
	if (g != dfc2)
		b->ops->copy(b, dfc2, g, (size_t)T * C * x->esize);
	mm_dgrad(x, w->d_act, dfc2, p->w[PT_FC2_W], T, d->F, C);
	if (d->gated)
		k->swiglu_bwd(b->ks, dfc1, a->fc1_out, w->d_act, T, d->F);
	else
		k->gelu_bwd(b->ks, dfc1, a->fc1_out, w->d_act, T * d->F);
	if (p->g[PT_FC1_B])
		k->bias_bwd(b->ks, p->g[PT_FC1_B], dfc1, T, d->F2);
	mm_dgrad(x, w->d_full, dfc1, p->w[PT_FC1_W], T, C, d->F2);
	if ((st = tp_enter_bwd(x, w->d_full, w->d_ln, e)) != PPLAN_OK)
		return st;
	/* d x_mid = dout + norm2's backward */
	b->ops->copy(b, w->d_b, dout, (size_t)Tl * C * x->esize);
	if (d->rms)
		k->rmsnorm_bwd(b->ks, w->d_b, p->g[PT_LN2_W], w->d_ln, a->x_mid,
			       p->w[PT_LN2_W], a->ln2_rstd, Tl, C);
	else
		k->layernorm_bwd(b->ks, w->d_b, p->g[PT_LN2_W], p->g[PT_LN2_B], w->d_ln,
				 a->x_mid, p->w[PT_LN2_W], a->ln2_mean, a->ln2_rstd, Tl, C);

	/* attention block */
	if (p->g[PT_PROJ_B])
		k->bias_bwd(b->ks, p->g[PT_PROJ_B], w->d_b, Tl, C);
	if ((st = tp_exit_bwd(x, w->d_b, dproj, &g, e)) != PPLAN_OK)
		return st;
	if (g != dproj)
		b->ops->copy(b, dproj, g, (size_t)T * C * x->esize);
	mm_dgrad(x, w->d_ctx_rows, dproj, p->w[PT_PROJ_W], T, HD, C);
	heads_rows(x, w->d_ctx_rows, w->d_ctx, 0);
	if ((st = attn_core_bwd(x, a, att, e)) != PPLAN_OK)
		return st;
	merge_heads(x, dqkv, w->dq, w->dk, w->dv);
	if (p->g[PT_QKV_B])
		k->bias_bwd(b->ks, p->g[PT_QKV_B], dqkv, T, QKV);
	if (!keep) {
		/* weight gradients now (the inputs are gathered again under SP) */
		st = layer_wgrad(x, p, a, dqkv, dproj, dfc1, dfc2, e);
		if (st != PPLAN_OK)
			return st;
	}
	mm_dgrad(x, w->d_full, dqkv, p->w[PT_QKV_W], T, C, QKV);
	if ((st = tp_enter_bwd(x, w->d_full, w->d_ln, e)) != PPLAN_OK)
		return st;
	b->ops->copy(b, din, w->d_b, (size_t)Tl * C * x->esize);
	if (d->rms)
		k->rmsnorm_bwd(b->ks, din, p->g[PT_LN1_W], w->d_ln, a->x_in,
			       p->w[PT_LN1_W], a->ln1_rstd, Tl, C);
	else
		k->layernorm_bwd(b->ks, din, p->g[PT_LN1_W], p->g[PT_LN1_B], w->d_ln,
				 a->x_in, p->w[PT_LN1_W], a->ln1_mean, a->ln1_rstd, Tl, C);
	grads_poll(x);
	return PPLAN_OK;
}

