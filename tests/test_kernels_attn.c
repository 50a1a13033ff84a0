/*
 * test_kernels_attn.c: the causal softmax and the fused attention of the
 * CPU kernels (kernels.h) against independent numbers: softmax rows worked
 * by hand, finite differences of L = <out, R> for both backwards, and the
 * three-step attention (naive scores here, the causal softmax, naive times
 * V), which the fused forward and backward must reproduce, with GQA
 * (H != G), offset blocks (q0, k0, context parallelism) and rows that see
 * no key.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "kerntest.h"

#define FD_H 1e-2f
#define FD_ATOL 1e-3
#define FD_RTOL 1e-3

/* ---- causal softmax, by hand ---------------------------------------- */

/* Scores (0, ln2/2, ln3/2) at scale 2 are (0, ln2, ln3): softmax over the
 * first j+1 of them is (1), (1/3, 2/3), (1/6, 2/6, 3/6). */
Test(softmax, causal_by_hand)
{
	float s[9], a[9];
	for (int i = 0; i < 3; i++) {
		s[3 * i] = 0;
		s[3 * i + 1] = (float)(log(2.0) / 2);
		s[3 * i + 2] = (float)(log(3.0) / 2);
	}
	double want[9] = { 1, 0, 0, 1.0 / 3, 2.0 / 3, 0, 1.0 / 6, 2.0 / 6, 3.0 / 6 };
	kern_softmax_causal_fwd(NULL, a, s, 1, 3, 3, 0, 0, 2.0f);
	kt_close(a, want, 9, 1e-7, 1e-6, "att");
	kern_softmax_causal_fwd(NULL, s, s, 1, 3, 3, 0, 0, 2.0f); /* in place */
	kt_close(s, want, 9, 1e-7, 1e-6, "att in place");
}

/* Keys start at k0 = 2, queries at q0 = 0: query rows 0 and 1 see no key
 * (all zeros), row 2 sees key 0, row 3 keys 0 and 1.  Masked scores hold
 * 100, which must not leak in. */
Test(softmax, causal_offsets_and_masked_rows)
{
	float s[12], a[12];
	for (int i = 0; i < 12; i++)
		s[i] = 100;
	s[2 * 3 + 0] = 5;
	s[3 * 3 + 0] = 0;
	s[3 * 3 + 1] = (float)(log(2.0) / 2);
	double want[12] = { 0, 0, 0, 0, 0, 0, 1, 0, 0, 1.0 / 3, 2.0 / 3, 0 };
	kern_softmax_causal_fwd(NULL, a, s, 1, 4, 3, 0, 2, 2.0f);
	kt_close(a, want, 12, 1e-7, 1e-6, "att, k0 = 2");

	/* Queries at q0 = 5 see all of keys 0..3: plain softmax rows. */
	float s2[8] = { 1, 2, 3, 4, 0, 0, 0, 0 }, a2[8];
	double z = exp(1.0) + exp(2.0) + exp(3.0) + exp(4.0);
	double want2[8] = { exp(1.0) / z, exp(2.0) / z, exp(3.0) / z, exp(4.0) / z,
			    0.25, 0.25, 0.25, 0.25 };
	kern_softmax_causal_fwd(NULL, a2, s2, 1, 2, 4, 5, 0, 1.0f);
	kt_close(a2, want2, 8, 1e-7, 1e-6, "att, q0 = 5");
}

struct sm_ctx {
	float *s, *a, *r;
	long BH, Tq, Tk, q0, k0;
	float scale;
};

static double sm_loss(void *vc)
{
	struct sm_ctx *c = vc;
	kern_softmax_causal_fwd(NULL, c->a, c->s, c->BH, c->Tq, c->Tk, c->q0,
				c->k0, c->scale);
	return kt_dot(c->a, c->r, c->BH * c->Tq * c->Tk);
}

static void softmax_fd(long q0, long k0)
{
	enum { BH = 2, Tq = 4, Tk = 5, n = BH * Tq * Tk };
	struct krng rng = { 23 };
	float s[n], a[n], r[n], d[n];
	double g[n];
	struct sm_ctx c = { s, a, r, BH, Tq, Tk, q0, k0, 0.7f };
	kt_fill(&rng, s, n, -2, 2);
	kt_fill(&rng, r, n, -1, 1);
	kt_fd(s, n, FD_H, sm_loss, &c, g);
	sm_loss(&c);
	memcpy(d, r, sizeof d);
	kern_softmax_causal_bwd(NULL, d, d, a, BH, Tq, Tk, 0.7f); /* aliased */
	kt_close(d, g, n, FD_ATOL, FD_RTOL, "dscores");
}

Test(softmax, bwd_finite_differences) { softmax_fd(0, 0); }
Test(softmax, bwd_finite_differences_q0) { softmax_fd(1, 0); }
Test(softmax, bwd_finite_differences_masked_rows) { softmax_fd(0, 2); }

/* ---- the three-step reference ---------------------------------------- */

struct attn_case {
	long B, H, G, Tq, Tk, D, q0, k0;
};

static const struct attn_case cases[] = {
	{ 1, 2, 2, 5, 5, 4, 0, 0 },  /* multi-head, square */
	{ 2, 4, 2, 4, 6, 3, 2, 0 },  /* GQA, queries later than keys */
	{ 1, 4, 1, 6, 4, 5, 0, 2 },  /* one KV head; rows 0 and 1 see nothing */
	{ 1, 3, 3, 3, 7, 2, 10, 0 }, /* every key visible to every row */
	{ 1, 2, 1, 3, 3, 4, 0, 5 },  /* every row masked */
	{ 2, 6, 3, 7, 5, 8, 3, 4 },  /* GQA 2:1, both offsets */
};
#define NCASES (sizeof cases / sizeof cases[0])

struct attn_bufs {
	float *q, *k, *v, *out, *lse, *dout, *dq, *dk, *dv;
	float *ref_out, *ref_dq, *ref_dk, *ref_dv;
};

static void attn_alloc(const struct attn_case *c, struct attn_bufs *t,
		       unsigned seed)
{
	long nq = c->B * c->H * c->Tq * c->D, nk = c->B * c->G * c->Tk * c->D;
	struct krng rng = { seed };
	t->q = malloc(nq * sizeof(float));
	t->out = malloc(nq * sizeof(float));
	t->dout = malloc(nq * sizeof(float));
	t->dq = malloc(nq * sizeof(float));
	t->ref_out = malloc(nq * sizeof(float));
	t->ref_dq = malloc(nq * sizeof(float));
	t->lse = malloc(c->B * c->H * c->Tq * sizeof(float));
	t->k = malloc(nk * sizeof(float));
	t->v = malloc(nk * sizeof(float));
	t->dk = malloc(nk * sizeof(float));
	t->dv = malloc(nk * sizeof(float));
	t->ref_dk = malloc(nk * sizeof(float));
	t->ref_dv = malloc(nk * sizeof(float));
	kt_fill(&rng, t->q, nq, -1, 1);
	kt_fill(&rng, t->k, nk, -1, 1);
	kt_fill(&rng, t->v, nk, -1, 1);
	kt_fill(&rng, t->dout, nq, -1, 1);
}

static void attn_free(struct attn_bufs *t)
{
	float **p = &t->q;
	for (size_t i = 0; i < sizeof *t / sizeof(float *); i++)
		free(p[i]);
}

/* Scores (BH, Tq, Tk) = Q K^T by plain loops, the causal softmax kernel,
 * then out = att V by plain loops; backward by the chain rule through the
 * same three steps.  dk, dv sum over the H/G query heads of a KV head. */
static void attn_three_step(const struct attn_case *c, struct attn_bufs *t)
{
	long B = c->B, H = c->H, G = c->G, Tq = c->Tq, Tk = c->Tk, D = c->D;
	long rep = H / G, ns = B * H * Tq * Tk;
	float scale = 1.0f / sqrtf((float)D);
	float *s = malloc(ns * sizeof(float)), *a = malloc(ns * sizeof(float));
	float *da = malloc(ns * sizeof(float));

	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++) {
			const float *Q = t->q + (b * H + h) * Tq * D;
			const float *K = t->k + (b * G + h / rep) * Tk * D;
			for (long i = 0; i < Tq; i++)
				for (long j = 0; j < Tk; j++) {
					double x = 0;
					for (long d = 0; d < D; d++)
						x += (double)Q[i * D + d] * K[j * D + d];
					s[((b * H + h) * Tq + i) * Tk + j] = (float)x;
				}
		}
	kern_softmax_causal_fwd(NULL, a, s, B * H, Tq, Tk, c->q0, c->k0, scale);
	memset(t->ref_dk, 0, B * G * Tk * D * sizeof(float));
	memset(t->ref_dv, 0, B * G * Tk * D * sizeof(float));
	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++) {
			long bh = b * H + h, bg = b * G + h / rep;
			const float *A = a + bh * Tq * Tk, *V = t->v + bg * Tk * D;
			const float *dO = t->dout + bh * Tq * D;
			float *O = t->ref_out + bh * Tq * D, *dA = da + bh * Tq * Tk;
			for (long i = 0; i < Tq; i++)
				for (long d = 0; d < D; d++) {
					double x = 0;
					for (long j = 0; j < Tk; j++)
						x += (double)A[i * Tk + j] * V[j * D + d];
					O[i * D + d] = (float)x;
				}
			/* datt = dO V^T; dV += att^T dO */
			for (long i = 0; i < Tq; i++)
				for (long j = 0; j < Tk; j++) {
					double x = 0;
					for (long d = 0; d < D; d++)
						x += (double)dO[i * D + d] * V[j * D + d];
					dA[i * Tk + j] = (float)x;
				}
			for (long j = 0; j < Tk; j++)
				for (long d = 0; d < D; d++) {
					double x = 0;
					for (long i = 0; i < Tq; i++)
						x += (double)A[i * Tk + j] * dO[i * D + d];
					t->ref_dv[(bg * Tk + j) * D + d] += (float)x;
				}
		}
	kern_softmax_causal_bwd(NULL, da, da, a, B * H, Tq, Tk, scale);
	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++) {
			long bh = b * H + h, bg = b * G + h / rep;
			const float *dS = da + bh * Tq * Tk;
			const float *Q = t->q + bh * Tq * D, *K = t->k + bg * Tk * D;
			for (long i = 0; i < Tq; i++)
				for (long d = 0; d < D; d++) {
					double x = 0;
					for (long j = 0; j < Tk; j++)
						x += (double)dS[i * Tk + j] * K[j * D + d];
					t->ref_dq[(bh * Tq + i) * D + d] = (float)x;
				}
			for (long j = 0; j < Tk; j++)
				for (long d = 0; d < D; d++) {
					double x = 0;
					for (long i = 0; i < Tq; i++)
						x += (double)dS[i * Tk + j] * Q[i * D + d];
					t->ref_dk[(bg * Tk + j) * D + d] += (float)x;
				}
		}
	free(s);
	free(a);
	free(da);
}

/* lse of row i: log sum over visible keys of exp(scale q.k), in double. */
static double naive_lse(const struct attn_case *c, const struct attn_bufs *t,
			long b, long h, long i)
{
	long D = c->D, rep = c->H / c->G;
	const float *Q = t->q + ((b * c->H + h) * c->Tq + i) * D;
	const float *K = t->k + (b * c->G + h / rep) * c->Tk * D;
	double mx = -INFINITY, sum = 0, sc = 1.0f / sqrtf((float)D);
	double *x = malloc((c->Tk ? c->Tk : 1) * sizeof(double));
	long n = 0;
	for (long j = 0; j < c->Tk && c->k0 + j <= c->q0 + i; j++, n++) {
		double s = 0;
		for (long d = 0; d < D; d++)
			s += (double)Q[d] * K[j * D + d];
		x[j] = sc * s;
		mx = fmax(mx, x[j]);
	}
	for (long j = 0; j < n; j++)
		sum += exp(x[j] - mx);
	free(x);
	return n ? mx + log(sum) : -INFINITY;
}

Test(attention, fused_matches_three_step)
{
	for (size_t ci = 0; ci < NCASES; ci++) {
		const struct attn_case *c = &cases[ci];
		struct attn_bufs t;
		long nq = c->B * c->H * c->Tq * c->D, nk = c->B * c->G * c->Tk * c->D;
		float scale = 1.0f / sqrtf((float)c->D);
		char what[64];
		attn_alloc(c, &t, 29 + ci);
		attn_three_step(c, &t);
		kern_attention_fwd(NULL, t.out, t.lse, t.q, t.k, t.v, c->B, c->H, c->G,
				   c->Tq, c->Tk, c->D, c->q0, c->k0, scale);
		memset(t.dk, 0x7f, nk * sizeof(float)); /* overwritten, not added */
		kern_attention_bwd(NULL, t.dq, t.dk, t.dv, t.dout, t.out, t.lse, t.q,
				   t.k, t.v, c->B, c->H, c->G, c->Tq, c->Tk, c->D,
				   c->q0, c->k0, scale);
		snprintf(what, sizeof what, "case %zu out", ci);
		kt_closef(t.out, t.ref_out, nq, 1e-6, 1e-5, what);
		snprintf(what, sizeof what, "case %zu dq", ci);
		kt_closef(t.dq, t.ref_dq, nq, 1e-6, 1e-5, what);
		snprintf(what, sizeof what, "case %zu dk", ci);
		kt_closef(t.dk, t.ref_dk, nk, 1e-6, 1e-5, what);
		snprintf(what, sizeof what, "case %zu dv", ci);
		kt_closef(t.dv, t.ref_dv, nk, 1e-6, 1e-5, what);
		for (long b = 0; b < c->B; b++)
			for (long h = 0; h < c->H; h++)
				for (long i = 0; i < c->Tq; i++) {
					double want = naive_lse(c, &t, b, h, i);
					snprintf(what, sizeof what, "case %zu lse (%ld,%ld,%ld)",
						 ci, b, h, i);
					kt_close(t.lse + (b * c->H + h) * c->Tq + i, &want, 1,
						 1e-6, 1e-6, what);
				}
		attn_free(&t);
	}
}

/* Rows that see no key: zeros out, -inf lse, zero dq; keys no query sees
 * get zero dk and dv. */
Test(attention, masked_rows_and_keys_are_zero)
{
	const struct attn_case *c = &cases[2]; /* k0 = 2: rows 0, 1 masked */
	struct attn_bufs t;
	float scale = 1.0f / sqrtf((float)c->D);
	attn_alloc(c, &t, 31);
	kern_attention_fwd(NULL, t.out, t.lse, t.q, t.k, t.v, c->B, c->H, c->G,
			   c->Tq, c->Tk, c->D, c->q0, c->k0, scale);
	kern_attention_bwd(NULL, t.dq, t.dk, t.dv, t.dout, t.out, t.lse, t.q, t.k,
			   t.v, c->B, c->H, c->G, c->Tq, c->Tk, c->D, c->q0, c->k0,
			   scale);
	for (long h = 0; h < c->H; h++)
		for (long i = 0; i < 2; i++) {
			long r = h * c->Tq + i;
			cr_expect(isinf(t.lse[r]) && t.lse[r] < 0, "lse row %ld", r);
			for (long d = 0; d < c->D; d++) {
				cr_expect_eq(t.out[r * c->D + d], 0.0f);
				cr_expect_eq(t.dq[r * c->D + d], 0.0f);
			}
		}
	/* Tq = 6, k0 = 2: the last row (position 5) sees keys 0..3, all of
	 * them; with k0 = 5 (case 4) no key is seen at all. */
	attn_free(&t);
	c = &cases[4];
	attn_alloc(c, &t, 37);
	scale = 1.0f / sqrtf((float)c->D);
	kern_attention_fwd(NULL, t.out, t.lse, t.q, t.k, t.v, c->B, c->H, c->G,
			   c->Tq, c->Tk, c->D, c->q0, c->k0, scale);
	kern_attention_bwd(NULL, t.dq, t.dk, t.dv, t.dout, t.out, t.lse, t.q, t.k,
			   t.v, c->B, c->H, c->G, c->Tq, c->Tk, c->D, c->q0, c->k0,
			   scale);
	for (long i = 0; i < c->B * c->G * c->Tk * c->D; i++) {
		cr_expect_eq(t.dk[i], 0.0f);
		cr_expect_eq(t.dv[i], 0.0f);
	}
	attn_free(&t);
}

struct fa_ctx {
	const struct attn_case *c;
	struct attn_bufs *t;
	float *r;
};

static double fa_loss(void *vc)
{
	struct fa_ctx *x = vc;
	const struct attn_case *c = x->c;
	kern_attention_fwd(NULL, x->t->out, x->t->lse, x->t->q, x->t->k, x->t->v,
			   c->B, c->H, c->G, c->Tq, c->Tk, c->D, c->q0, c->k0,
			   1.0f / sqrtf((float)c->D));
	return kt_dot(x->t->out, x->r, c->B * c->H * c->Tq * c->D);
}

/* The fused backward against finite differences of the fused forward,
 * GQA with both offsets (case 1 and case 5). */
Test(attention, bwd_finite_differences)
{
	size_t which[2] = { 1, 5 };
	for (int w = 0; w < 2; w++) {
		const struct attn_case *c = &cases[which[w]];
		struct attn_bufs t;
		long nq = c->B * c->H * c->Tq * c->D, nk = c->B * c->G * c->Tk * c->D;
		double *gq = malloc(nq * sizeof(double)), *gk = malloc(nk * sizeof(double));
		double *gv = malloc(nk * sizeof(double));
		struct fa_ctx x = { c, &t, NULL };
		attn_alloc(c, &t, 41 + w);
		x.r = t.dout;
		kt_fd(t.q, nq, FD_H, fa_loss, &x, gq);
		kt_fd(t.k, nk, FD_H, fa_loss, &x, gk);
		kt_fd(t.v, nk, FD_H, fa_loss, &x, gv);
		fa_loss(&x);
		kern_attention_bwd(NULL, t.dq, t.dk, t.dv, t.dout, t.out, t.lse, t.q,
				   t.k, t.v, c->B, c->H, c->G, c->Tq, c->Tk, c->D,
				   c->q0, c->k0, 1.0f / sqrtf((float)c->D));
		kt_close(t.dq, gq, nq, FD_ATOL, FD_RTOL, "dq");
		kt_close(t.dk, gk, nk, FD_ATOL, FD_RTOL, "dk");
		kt_close(t.dv, gv, nk, FD_ATOL, FD_RTOL, "dv");
		free(gq);
		free(gk);
		free(gv);
		attn_free(&t);
	}
}

/* Ring attention's merge: attention over keys [0, 8) equals the two
 * blocks [0, 4) (k0 = 0) and [4, 8) (k0 = 4) combined by their lse:
 * lse = log(e^lse1 + e^lse2), out = e^(lse1-lse) out1 + e^(lse2-lse) out2.
 * Queries at q0 = 2 make block 2 partly and wholly masked for early rows. */
Test(attention, blocks_merge_by_lse)
{
	enum { H = 2, T = 6, K = 8, D = 4 };
	struct krng rng = { 43 };
	float q[H * T * D], k[K * D], v[K * D], o[H * T * D], l[H * T];
	float o1[H * T * D], l1[H * T], o2[H * T * D], l2[H * T];
	float k2[4 * D], v2[4 * D];
	float sc = 0.5f;
	kt_fill(&rng, q, H * T * D, -1, 1);
	kt_fill(&rng, k, K * D, -1, 1);
	kt_fill(&rng, v, K * D, -1, 1);
	kern_attention_fwd(NULL, o, l, q, k, v, 1, H, 1, T, K, D, 2, 0, sc);
	kern_attention_fwd(NULL, o1, l1, q, k, v, 1, H, 1, T, 4, D, 2, 0, sc);
	memcpy(k2, k + 4 * D, sizeof k2);
	memcpy(v2, v + 4 * D, sizeof v2);
	kern_attention_fwd(NULL, o2, l2, q, k2, v2, 1, H, 1, T, 4, D, 2, 4, sc);
	for (int r = 0; r < H * T; r++) {
		double m = fmax(l1[r], l2[r]);
		double lse = m + log(exp(l1[r] - m) + exp(l2[r] - m));
		double w[D];
		for (int d = 0; d < D; d++)
			w[d] = exp(l1[r] - lse) * o1[r * D + d] +
			       (isinf(l2[r]) ? 0 : exp(l2[r] - lse) * o2[r * D + d]);
		kt_close(o + r * D, w, D, 1e-6, 1e-5, "merged out");
		kt_close(l + r, &lse, 1, 1e-6, 1e-6, "merged lse");
	}
}

/* The merge kernel does the same: block [0, 4) then block [4, 8) merged
 * into it equals attention over [0, 8); a block whose rows see no key
 * (lse -inf) leaves those rows as they are. */
Test(attention, merge_kernel_matches_whole)
{
	enum { H = 2, T = 6, K = 8, D = 4 };
	struct krng rng = { 47 };
	float q[H * T * D], k[K * D], v[K * D], o[H * T * D], l[H * T];
	float o1[H * T * D], l1[H * T], o2[H * T * D], l2[H * T];
	float k2[4 * D], v2[4 * D];
	double ow[H * T * D], lw[H * T];
	float sc = 0.5f;
	kt_fill(&rng, q, H * T * D, -1, 1);
	kt_fill(&rng, k, K * D, -1, 1);
	kt_fill(&rng, v, K * D, -1, 1);
	kern_attention_fwd(NULL, o, l, q, k, v, 1, H, 1, T, K, D, 2, 0, sc);
	kern_attention_fwd(NULL, o1, l1, q, k, v, 1, H, 1, T, 4, D, 2, 0, sc);
	memcpy(k2, k + 4 * D, sizeof k2);
	memcpy(v2, v + 4 * D, sizeof v2);
	kern_attention_fwd(NULL, o2, l2, q, k2, v2, 1, H, 1, T, 4, D, 2, 4, sc);
	kern_attention_merge(NULL, o1, l1, o2, l2, H * T, D);
	for (int i = 0; i < H * T * D; i++)
		ow[i] = o[i];
	for (int i = 0; i < H * T; i++)
		lw[i] = l[i];
	kt_close(o1, ow, H * T * D, 1e-6, 1e-5, "merge kernel out");
	kt_close(l1, lw, H * T, 1e-6, 1e-6, "merge kernel lse");
}
