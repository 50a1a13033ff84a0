/*
 * chunk.c: one model chunk for one microbatch: the synthetic batch, the
 * vocabulary-parallel embedding (and learned positions) on the first
 * virtual stage, the chunk's layers (layer.c), and on the last virtual
 * stage the final norm, the LM head and the vocabulary-parallel
 * cross-entropy; then the same backward, with the gradient buckets told
 * as each part's gradients become final.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define AT(x, p, i) ((void *)((char *)(p) + (size_t)(i) * (x)->esize))

static struct work *W(struct exec *x)
{
	return &x->work;
}

/* The tokens of microbatch mb on this data-parallel rank: samples
 * dp_rank * (gbs / dp) + mb * mbs + b of the step, S + 1 tokens each
 * (inputs are the first S, targets the last S).  A noisy affine
 * recurrence, so that the model has something to learn and the loss
 * falls; the same for every layout.  Under context parallelism the
 * sequence is cut into 2 cp chunks and this rank keeps chunks cp_rank and
 * 2 cp - 1 - cp_rank (the causal load balance of Megatron-Core), in the
 * order (chunk, sample, token): each half is one contiguous block. */
/* The row of this rank's tokens that position t of sample bi goes to,
 * or -1 when another context-parallel rank holds it. */
static long local_row(const struct exec *x, long bi, long t)
{
	const struct dims *d = &x->d;
	int cp = x->l.cp, cr = x->rc.c[DIM_CP];
	long c = d->S / (2 * cp), k = t / c, half;
	if (cp == 1)
		return bi * d->S + t;
	if (k == cr)
		half = 0;
	else if (k == 2L * cp - 1 - cr)
		half = 1;
	else
		return -1;
	return (half * d->B + bi) * c + t % c;
}

static void make_tokens(const struct exec *x, long step, int mb, int32_t *in,
			int32_t *tgt)
{
	const struct dims *d = &x->d;
	long per_dp = x->l.gbs / x->l.dp;
	for (long bi = 0; bi < d->B; bi++) {
		long sample = (long)x->rc.c[DIM_DP] * per_dp + (long)mb * d->B + bi;
		uint64_t h = (uint64_t)x->opt.seed * 0x9e3779b97f4a7c15ULL ^
			     ((uint64_t)step << 32) ^ (uint64_t)sample;
		long tok = (long)(fabs(exec_gauss(x->opt.seed, 0x746f6b656eULL ^ h, 0)) *
				  1e6) % d->V;
		for (long t = 0; t <= d->S; t++) {
			/* token t is the input at position t, the target at t-1 */
			long ri = t < d->S ? local_row(x, bi, t) : -1;
			long rt = t > 0 ? local_row(x, bi, t - 1) : -1;
			double g = exec_gauss(x->opt.seed, h, (uint64_t)t + 1);
			if (ri >= 0)
				in[ri] = (int32_t)tok;
			if (rt >= 0)
				tgt[rt] = (int32_t)tok;
			tok = (tok * 31 + 7 + (g > 1.0 ? 2 : g > 0.0 ? 1 : 0)) % d->V;
		}
	}
}

/* The position of row r of a rank's tokens: rows are (sample, token),
 * or under context parallelism (half, sample, token) with half h
 * holding chunk cp_rank or 2 cp - 1 - cp_rank (make_tokens). */
static long row_position(const struct exec *x, long r)
{
	const struct dims *d = &x->d;
	int cp = x->l.cp, cr = x->rc.c[DIM_CP];
	long c, half, t;
	if (cp == 1)
		return r % d->S;
	c = d->S / (2 * cp);
	half = r / (d->B * c);
	t = r % c;
	return (half == 0 ? cr : 2L * cp - 1 - cr) * c + t;
}

/* Learned positions for rows [r0, r0+n) of out (rows r0.. of the rank's
 * tokens), one kernel call per run of consecutive positions. */
static void positions(struct exec *x, void *buf, long r0, long n, int backward)
{
	const struct dims *d = &x->d;
	long r = 0;
	while (r < n) {
		long pos = row_position(x, r0 + r), len = 1;
		while (r + len < n && row_position(x, r0 + r + len) == pos + len)
			len++;
		if (backward)
			x->be->k->position_bwd(x->be->ks, x->g_wpe, AT(x, buf, r * d->C), 1, len,
					       d->C, pos);
		else
			x->be->k->position_fwd(x->be->ks, AT(x, buf, r * d->C), x->wpe, 1, len,
					       d->C, pos);
		r += len;
	}
}

/* First row of this rank's token shard (SP), else 0. */
static long shard_row0(const struct exec *x)
{
	return x->l.tp > 1 && x->l.sp ? (long)x->rc.c[DIM_TP] * x->d.Tl : 0;
}

static enum pplan_status embed_fwd(struct exec *x, struct slot *sl, void *out,
				   struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	enum pplan_status st;
	/* tokens live on the host; the backend gets a copy */
	int32_t *tok = sl->tokens;
	b->k->embedding_fwd(b->ks, W(x)->emb, tok, x->wte, d->T, d->C, d->v0, d->Vl);
	if ((st = tp_exit(x, W(x)->emb, out, e)) != PPLAN_OK)
		return st;
	if (x->wpe)
		positions(x, out, shard_row0(x), d->Tl, 0);
	return PPLAN_OK;
}

static enum pplan_status embed_bwd(struct exec *x, struct slot *sl,
				   const void *dout, struct perr *e)
{
	const struct dims *d = &x->d;
	const void *g;
	enum pplan_status st;
	if (x->wpe)
		positions(x, (void *)dout, shard_row0(x), d->Tl, 1);
	if ((st = tp_exit_bwd(x, dout, W(x)->d_full, &g, e)) != PPLAN_OK)
		return st;
	x->be->k->embedding_bwd(x->be->ks, x->g_wte, g, sl->tokens, d->T, d->C, d->v0, d->Vl);
	return PPLAN_OK;
}

/* Final norm, LM head and the vocabulary-parallel cross-entropy; keeps
 * the logits' gradient for the backward.  Adds the microbatch's token
 * losses to sl->loss_sum. */
static enum pplan_status head_fwd(struct exec *x, struct slot *sl,
				  struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = W(x);
	const void *full;
	enum pplan_status st;
	float *host = NULL;
	/* the loss averages over every token of the global batch */
	float scale = (float)(1.0 / ((double)x->l.gbs * (double)d->S));

	if (d->rms)
		b->k->rmsnorm_fwd(b->ks, sl->lnf_out, sl->lnf_rstd, sl->chunk_out, x->lnf_w,
				  d->Tl, d->C, d->eps);
	else
		b->k->layernorm_fwd(b->ks, sl->lnf_out, sl->lnf_mean, sl->lnf_rstd,
				    sl->chunk_out, x->lnf_w, x->lnf_b, d->Tl, d->C, d->eps);
	if ((st = tp_enter(x, sl->lnf_out, w->full, &full, e)) != PPLAN_OK)
		return st;
	/* logits (T, Vl) = full (T, C) head^T */
	b->ops->gemm(b, 0, 1, d->T, d->Vl, d->C, 1.0f, full, d->C, x->head, d->C,
		     0.0f, sl->dlogits, d->Vl, b->dtype);
	b->k->xent_max(b->ks, w->rowmax, sl->dlogits, d->T, d->Vl);
	if (x->l.tp > 1) {
		int prev = x->tl.cls;
		tl_class(x, OC_TP);
		st = b->ops->allreduce(b, x->tp, w->rowmax, d->T, KD_F32, BE_MAX, NULL, e);
		tl_class(x, prev);
		if (st != PPLAN_OK)
			return st;
	}
	b->k->xent_sums(b->ks, w->sums, w->sums + d->T, sl->dlogits, w->rowmax,
			sl->targets, d->T, d->Vl, d->v0);
	if (x->l.tp > 1) {
		int prev = x->tl.cls;
		tl_class(x, OC_TP);
		st = b->ops->allreduce(b, x->tp, w->sums, 2 * d->T, KD_F32, BE_SUM, NULL, e);
		tl_class(x, prev);
		if (st != PPLAN_OK)
			return st;
	}
	b->k->xent_loss_grad(b->ks, w->loss, sl->dlogits, sl->dlogits, w->rowmax, w->sums,
			     w->sums + d->T, sl->targets, d->T, d->Vl, d->v0, scale);
	host = malloc((size_t)d->T * sizeof *host);
	if (!host)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the losses");
	b->ops->to_host(b, host, w->loss, (size_t)d->T * sizeof *host);
	for (long i = 0; i < d->T; i++)
		sl->loss_sum += host[i];
	free(host);
	return PPLAN_OK;
}

/* The gradient of the chunk output (Tl,C) from the logits' gradient,
 * into dcur; with `weights`, the head's weight gradient too. */
static enum pplan_status head_bwd(struct exec *x, struct slot *sl, void *dcur,
				  int inputs, int weights, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = W(x);
	enum pplan_status st;

	if (weights) {
		const void *full;
		if ((st = tp_enter(x, sl->lnf_out, w->full, &full, e)) != PPLAN_OK)
			return st;
		/* dhead (Vl, C) += dlogits^T (Vl, T) full (T, C) */
		b->ops->gemm(b, 1, 0, d->Vl, d->C, d->T, 1.0f, sl->dlogits, d->Vl, full,
			     d->C, 1.0f, x->g_head, d->C, KD_F32);
	}
	if (!inputs)
		return PPLAN_OK;
	/* d full (T, C) = dlogits (T, Vl) head (Vl, C) */
	b->ops->gemm(b, 0, 0, d->T, d->C, d->Vl, 1.0f, sl->dlogits, d->Vl, x->head,
		     d->C, 0.0f, w->d_full, d->C, b->dtype);
	if ((st = tp_enter_bwd(x, w->d_full, w->d_ln, e)) != PPLAN_OK)
		return st;
	b->ops->zero(b, dcur, (size_t)d->Tl * d->C * x->esize);
	if (d->rms)
		b->k->rmsnorm_bwd(b->ks, dcur, x->g_lnf_w, w->d_ln, sl->chunk_out, x->lnf_w,
				  sl->lnf_rstd, d->Tl, d->C);
	else
		b->k->layernorm_bwd(b->ks, dcur, x->g_lnf_w, x->g_lnf_b, w->d_ln,
				    sl->chunk_out, x->lnf_w, sl->lnf_mean, sl->lnf_rstd,
				    d->Tl, d->C);
	return PPLAN_OK;
}

static struct layer_act *act_of(struct exec *x, struct slot *sl, int i)
{
	if (x->l.recompute == RECOMPUTE_FULL) {
		/* only the input is kept; the rest lives in the workspace */
		struct layer_act *re = &W(x)->re;
		re->x_in = sl->layer[i].x_in;
		return re;
	}
	return &sl->layer[i];
}

enum pplan_status chunk_forward(struct exec *x, struct slot *sl, int chunk,
				const void *in, void *out, struct perr *e)
{
	int n = x->chunk_layers;
	enum pplan_status st;
	struct layer_params *lp = &x->lp[chunk * n];

	sl->loss_sum = 0;
	if (exec_first_vstage(x, chunk) || exec_last_vstage(x, chunk)) {
		long T = x->d.T;
		make_tokens(x, x->step, sl->mb, x->tok_host, x->tok_host + T);
		x->be->ops->to_device(x->be, sl->tokens, x->tok_host, (size_t)T * sizeof(int32_t));
		x->be->ops->to_device(x->be, sl->targets, x->tok_host + T, (size_t)T * sizeof(int32_t));
	}
	if (exec_first_vstage(x, chunk)) {
		if ((st = embed_fwd(x, sl, sl->layer[0].x_in, e)) != PPLAN_OK)
			return st;
	} else if (in != sl->layer[0].x_in) {
		x->be->ops->copy(x->be, sl->layer[0].x_in, in,
				 (size_t)x->d.Tl * x->d.C * x->esize);
	}
	for (int i = 0; i < n; i++) {
		void *dst = i + 1 < n ? sl->layer[i + 1].x_in
				      : exec_last_vstage(x, chunk) ? sl->chunk_out : out;
		if ((st = layer_fwd(x, &lp[i], act_of(x, sl, i), dst, e)) != PPLAN_OK)
			return st;
	}
	if (exec_last_vstage(x, chunk))
		return head_fwd(x, sl, e);
	return PPLAN_OK;
}

enum pplan_status chunk_backward(struct exec *x, struct slot *sl, int chunk,
				 const void *dout, void *din, enum bwd_part part,
				 int last_mb, struct perr *e)
{
	int n = x->chunk_layers;
	struct layer_params *lp = &x->lp[chunk * n];
	struct work *w = W(x);
	void *dcur = w->d_a, *dnext;
	enum pplan_status st;
	int inputs = part != BWD_WEIGHT, weights = part != BWD_INPUT;

	if (exec_last_vstage(x, chunk)) {
		if ((st = head_bwd(x, sl, dcur, inputs, weights, e)) != PPLAN_OK)
			return st;
		if (weights && last_mb)
			grads_ready(x, chunk, x->head_last_tensor[chunk]);
	} else if (inputs) {
		x->be->ops->copy(x->be, dcur, dout, (size_t)x->d.Tl * x->d.C * x->esize);
	}
	for (int i = n - 1; i >= 0; i--) {
		struct layer_act *a = &sl->layer[i];
		if (part == BWD_WEIGHT) {
			st = layer_wgrad(x, &lp[i], a, a->d_qkv, a->d_proj, a->d_fc1,
					 a->d_fc2, e);
		} else {
			if (x->l.recompute == RECOMPUTE_FULL) {
				/* the layer's forward again, from its input */
				int prev = x->tl.cls;
				tl_class(x, OC_RECOMPUTE);
				a = act_of(x, sl, i);
				st = layer_fwd(x, &lp[i], a, w->scratch, e);
				tl_class(x, prev);
				if (st != PPLAN_OK)
					return st;
			}
			/* in place: layer_bwd reads dout before it writes din */
			dnext = (i == 0 && din && !exec_first_vstage(x, chunk)) ? din : dcur;
			st = layer_bwd(x, &lp[i], a, dcur, dnext, part, e);
			dcur = dnext;
		}
		if (st != PPLAN_OK)
			return st;
		if (weights && last_mb)
			grads_ready(x, chunk, x->layer_last_tensor[chunk * n + i]);
	}
	if (exec_first_vstage(x, chunk) && inputs) {
		if ((st = embed_bwd(x, sl, dcur, e)) != PPLAN_OK)
			return st;
	}
	if (weights && last_mb)
		grads_ready(x, chunk, x->chunk_last_tensor[chunk]);
	return PPLAN_OK;
}
