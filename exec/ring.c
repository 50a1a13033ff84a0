/*
 * ring.c: context parallelism's attention core: ring attention over the
 * cp ranks, with the causal load balance of Megatron-Core and
 * TransformerEngine.
 *
 * The sequence is cut into 2 cp chunks of c = S / 2cp tokens; CP rank r
 * holds chunks r and 2cp-1-r, so every rank has the same share of the
 * causal triangle.  Its q, k, v, the attention output and its
 * log-sum-exp are kept half-major: half 0 (chunk r) then half 1 (chunk
 * 2cp-1-r), each a contiguous (B, heads, c, D) block (chunk.c puts the
 * tokens in that order).
 *
 * Forward: the K and V blocks travel around the ring (to rank r+1, from
 * rank r-1), cp steps; at step j the rank holds the block of rank
 * src = r-j, computes its query halves against the visible key chunks
 * with the fused kernel at their absolute positions, and merges each
 * partial result by log-sum-exp; the next block's transfer overlaps the
 * step's compute.  Backward: the same ring carries [K, V, dK, dV]: each
 * rank adds the gradients its queries give the travelling block, the
 * block moves on, and after cp steps every block is back home with the
 * sum of all ranks' contributions; dQ stays local.  The kernel's
 * backward takes the final output and log-sum-exp, so blocks need no
 * rescaling.
 */
#include <math.h>
#include <string.h>

#include "exec_internal.h"

#define AT(x, p, i) ((void *)((char *)(p) + (size_t)(i) * (x)->esize))

struct ring_dims {
	long c;          /* tokens of a chunk */
	long qh, kh;     /* elements of a query half (B,H,c,D), a key half (B,G,c,D) */
	long lh;         /* rows of a half's log-sum-exp (B,H,c) */
	int r, n;        /* cp rank, cp size */
};

static void ring_dims(const struct exec *x, struct ring_dims *g)
{
	const struct dims *d = &x->d;
	g->n = x->l.cp;
	g->r = x->rc.c[DIM_CP];
	g->c = d->S / (2 * g->n);
	g->qh = d->B * d->H * g->c * d->D;
	g->kh = d->B * d->G * g->c * d->D;
	g->lh = d->B * d->H * g->c;
}

/* The chunk of half h of rank src's sequence. */
static long chunk_of(const struct ring_dims *g, int src, int h)
{
	return h == 0 ? src : 2L * g->n - 1 - src;
}

/* Sends buf (n elements) to the next rank and receives the same size
 * from the previous one into in; waits for both when wait is set, else
 * leaves the requests pending. */
static enum pplan_status ring_pass(struct exec *x, const void *out, void *in, long n,
				   struct be_req *rq, struct perr *e)
{
	struct backend *b = x->be;
	struct ring_dims g;
	size_t bytes = (size_t)n * x->esize;
	enum pplan_status st;
	ring_dims(x, &g);
	tl_post(x);
	memset(rq, 0, 2 * sizeof *rq);
	rq[0].what = "the next context-parallel rank to take a key/value block";
	rq[1].what = "a key/value block from the previous context-parallel rank";
	b->ops->p2p_begin(b);
	st = b->ops->send(b, x->cp, (g.r + 1) % g.n, out, bytes, 7, &rq[0], e);
	if (st == PPLAN_OK)
		st = b->ops->recv(b, x->cp, (g.r + g.n - 1) % g.n, in, bytes, 7, &rq[1], e);
	if (st == PPLAN_OK)
		st = b->ops->p2p_end(b, e);
	return st;
}

static enum pplan_status ring_wait(struct exec *x, struct be_req *rq, struct perr *e)
{
	enum pplan_status st;
	int prev = x->tl.cls;
	tl_class(x, OC_CP);
	st = x->be->ops->wait(x->be, &rq[1], e);
	if (st == PPLAN_OK)
		st = x->be->ops->wait(x->be, &rq[0], e);
	tl_class(x, prev);
	return st;
}

enum pplan_status ring_attn_fwd(struct exec *x, struct layer_act *a, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = &x->work;
	struct ring_dims g;
	float scale = (float)(1.0 / sqrt((double)d->D));
	int cur = 0;
	enum pplan_status st = PPLAN_OK;
	struct be_req rq[2];

	ring_dims(x, &g);
	/* the rank's own block: [k | v], both halves each */
	b->ops->copy(b, w->ring[0], a->k, (size_t)(2 * g.kh) * x->esize);
	b->ops->copy(b, AT(x, w->ring[0], 2 * g.kh), a->v, (size_t)(2 * g.kh) * x->esize);
	for (int j = 0; j < g.n && st == PPLAN_OK; j++) {
		int src = (g.r - j + g.n) % g.n;
		const void *kb = w->ring[cur], *vb = AT(x, w->ring[cur], 2 * g.kh);
		if (j + 1 < g.n)
			st = ring_pass(x, w->ring[cur], w->ring[1 - cur], 4 * g.kh, rq, e);
		for (int hq = 0; hq < 2 && st == PPLAN_OK; hq++) {
			long cq = chunk_of(&g, g.r, hq);
			void *o = AT(x, a->ctx, hq * g.qh);
			float *l = a->lse + hq * g.lh;
			const void *q = AT(x, a->q, hq * g.qh);
			/* on the first step the diagonal block starts the result */
			for (int pass = 0; pass < 2; pass++) {
				int hk = j == 0 ? (pass == 0 ? hq : 1 - hq) : pass;
				long ck = chunk_of(&g, src, hk);
				if (ck > cq)
					continue;
				if (j == 0 && pass == 0) {
					b->k->attention_fwd(b->ks, o, l, q, AT(x, kb, hk * g.kh),
							    AT(x, vb, hk * g.kh), d->B, d->H, d->G,
							    g.c, g.c, d->D, cq * g.c, ck * g.c, scale);
				} else {
					b->k->attention_fwd(b->ks, w->blk_o, w->blk_l, q,
							    AT(x, kb, hk * g.kh), AT(x, vb, hk * g.kh),
							    d->B, d->H, d->G, g.c, g.c, d->D, cq * g.c,
							    ck * g.c, scale);
					b->k->attention_merge(b->ks, o, l, w->blk_o, w->blk_l, g.lh, d->D);
				}
			}
		}
		if (j + 1 < g.n && st == PPLAN_OK) {
			st = ring_wait(x, rq, e);
			cur = 1 - cur;
		}
	}
	return st;
}

enum pplan_status ring_attn_bwd(struct exec *x, struct layer_act *a, struct perr *e)
{
	const struct dims *d = &x->d;
	struct backend *b = x->be;
	struct work *w = &x->work;
	struct ring_dims g;
	float scale = (float)(1.0 / sqrt((double)d->D));
	int cur = 0;
	enum pplan_status st = PPLAN_OK;
	struct be_req rq[2];

	ring_dims(x, &g);
	/* [k | v | dk | dv] of the rank's own block, its gradients zero */
	b->ops->copy(b, w->ring[0], a->k, (size_t)(2 * g.kh) * x->esize);
	b->ops->copy(b, AT(x, w->ring[0], 2 * g.kh), a->v, (size_t)(2 * g.kh) * x->esize);
	b->ops->zero(b, AT(x, w->ring[0], 4 * g.kh), (size_t)(4 * g.kh) * x->esize);
	b->ops->zero(b, w->dq, (size_t)(2 * g.qh) * x->esize);
	for (int j = 0; j < g.n && st == PPLAN_OK; j++) {
		int src = (g.r - j + g.n) % g.n;
		void *kb = w->ring[cur], *vb = AT(x, kb, 2 * g.kh);
		void *dkb = AT(x, kb, 4 * g.kh), *dvb = AT(x, kb, 6 * g.kh);
		for (int hq = 0; hq < 2; hq++) {
			long cq = chunk_of(&g, g.r, hq);
			for (int hk = 0; hk < 2; hk++) {
				long ck = chunk_of(&g, src, hk);
				if (ck > cq)
					continue;
				b->k->attention_bwd(b->ks, w->blk_dq, w->blk_dk, w->blk_dv,
						    AT(x, w->d_ctx, hq * g.qh), AT(x, a->ctx, hq * g.qh),
						    a->lse + hq * g.lh, AT(x, a->q, hq * g.qh),
						    AT(x, kb, hk * g.kh), AT(x, vb, hk * g.kh), d->B,
						    d->H, d->G, g.c, g.c, d->D, cq * g.c, ck * g.c, scale);
				b->k->acc(b->ks, AT(x, w->dq, hq * g.qh), w->blk_dq, g.qh);
				b->k->acc(b->ks, AT(x, dkb, hk * g.kh), w->blk_dk, g.kh);
				b->k->acc(b->ks, AT(x, dvb, hk * g.kh), w->blk_dv, g.kh);
			}
		}
		/* the block (and what this rank added to its gradients) moves on;
		 * after the last step every block is home */
		st = ring_pass(x, kb, w->ring[1 - cur], 8 * g.kh, rq, e);
		if (st == PPLAN_OK)
			st = ring_wait(x, rq, e);
		cur = 1 - cur;
	}
	if (st == PPLAN_OK) {
		b->ops->copy(b, w->dk, AT(x, w->ring[cur], 4 * g.kh), (size_t)(2 * g.kh) * x->esize);
		b->ops->copy(b, w->dv, AT(x, w->ring[cur], 6 * g.kh), (size_t)(2 * g.kh) * x->esize);
	}
	return st;
}
