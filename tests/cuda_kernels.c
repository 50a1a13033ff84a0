/*
 * cuda_kernels.c: every CUDA kernel of the module (kernels.h's table, for
 * fp32, bf16 and fp16 storage) against its CPU twin, the oracle, on the
 * same (storage-rounded) inputs; tolerances as cudatest.h states them.
 * Shapes are odd on purpose (not multiples of the block or tile sizes);
 * the attention runs cover head sizes of all three register widths of the
 * flash kernels (D <= 64, <= 128, <= 256), GQA, offsets and rows that see
 * no key; the in-place calls the executor makes are made in place here.
 * Prints "skipped: no GPU" and exits 77 (ctest: skipped) where no GPU answers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cudatest.h"

#define TOL32 1e-5 /* fp32 outputs (statistics, gradients of parameters) */

static void norms(struct ct *t, enum kern_dtype dt)
{
	enum { N = 37, C = 300 };
	const struct kern_ops *k = t->k[dt];
	float *x = ct_host(t, N * C), *w = ct_host(t, C), *b = ct_host(t, C);
	float *dy = ct_host(t, N * C), *dx = ct_host(t, N * C), *dw = ct_host(t, C);
	float *db = ct_host(t, C), *out = ct_host(t, N * C), *mean = ct_host(t, N);
	float *rstd = ct_host(t, N), *g = ct_host(t, N * C);
	void *X, *W, *B, *DY, *DX, *DW, *DB, *OUT, *MEAN, *RSTD;
	size_t es = (size_t)kern_dtype_size(dt);

	for (int rms = 0; rms < 2; rms++) {
		const char *name = rms ? "rmsnorm" : "layernorm";
		char what[64];
		ct_fill(t, x, N * C, -2, 3);
		ct_fill(t, w, C, 0.5f, 1.5f);
		ct_fill(t, b, C, -0.5f, 0.5f);
		X = ct_dev(t, dt, x, N * C);
		W = ct_dev(t, dt, w, C);
		B = ct_dev(t, dt, b, C);
		OUT = ct_bytes(t, NULL, N * C * es);
		MEAN = ct_bytes(t, NULL, N * sizeof(float));
		RSTD = ct_bytes(t, NULL, N * sizeof(float));
		if (rms) {
			k->rmsnorm_fwd(t->b->ks, OUT, RSTD, X, W, N, C, 1e-5f);
			kern_rmsnorm_fwd(NULL, out, rstd, x, w, N, C, 1e-5f);
		} else {
			k->layernorm_fwd(t->b->ks, OUT, MEAN, RSTD, X, W, B, N, C, 1e-5f);
			kern_layernorm_fwd(NULL, out, mean, rstd, x, w, b, N, C, 1e-5f);
		}
		ct_sync(t, name);
		snprintf(what, sizeof what, "%s_fwd out", name);
		ct_get(t, dt, OUT, N * C, g);
		ct_check(t, what, dt, g, out, N * C, ct_tol(dt));
		snprintf(what, sizeof what, "%s_fwd rstd", name);
		ct_get(t, KD_F32, RSTD, N, g);
		ct_check(t, what, dt, g, rstd, N, TOL32);
		if (!rms) {
			ct_get(t, KD_F32, MEAN, N, g);
			ct_check(t, "layernorm_fwd mean", dt, g, mean, N, TOL32);
		}

		/* Backward from the CPU's statistics; dinp, dw, db accumulate. */
		ct_fill(t, dy, N * C, -1, 1);
		ct_fill(t, dx, N * C, -1, 1);
		ct_fill(t, dw, C, -1, 1);
		ct_fill(t, db, C, -1, 1);
		DY = ct_dev(t, dt, dy, N * C);
		DX = ct_dev(t, dt, dx, N * C);
		DW = ct_dev(t, KD_F32, dw, C);
		DB = ct_dev(t, KD_F32, db, C);
		MEAN = ct_dev(t, KD_F32, mean, N);
		RSTD = ct_dev(t, KD_F32, rstd, N);
		if (rms) {
			k->rmsnorm_bwd(t->b->ks, DX, DW, DY, X, W, RSTD, N, C);
			kern_rmsnorm_bwd(NULL, dx, dw, dy, x, w, rstd, N, C);
		} else {
			k->layernorm_bwd(t->b->ks, DX, DW, DB, DY, X, W, MEAN, RSTD, N, C);
			kern_layernorm_bwd(NULL, dx, dw, db, dy, x, w, mean, rstd, N, C);
		}
		ct_sync(t, name);
		snprintf(what, sizeof what, "%s_bwd dinp", name);
		ct_get(t, dt, DX, N * C, g);
		ct_check(t, what, dt, g, dx, N * C, ct_tol(dt));
		snprintf(what, sizeof what, "%s_bwd dw", name);
		ct_get(t, KD_F32, DW, C, g);
		ct_check(t, what, dt, g, dw, C, TOL32);
		if (!rms) {
			ct_get(t, KD_F32, DB, C, g);
			ct_check(t, "layernorm_bwd db", dt, g, db, C, TOL32);
		}
	}
	ct_release(t);
}

static void activations(struct ct *t, enum kern_dtype dt)
{
	enum { n = 1000, N = 7, F = 130, C = 70 };
	const struct kern_ops *k = t->k[dt];
	size_t es = (size_t)kern_dtype_size(dt);
	float *x = ct_host(t, n), *d = ct_host(t, n), *o = ct_host(t, n);
	float *s = ct_host(t, N * 2 * F), *ds = ct_host(t, N * 2 * F), *g = ct_host(t, n * 2);
	float *bias = ct_host(t, C), *db = ct_host(t, C);
	void *X, *D, *O;

	ct_fill(t, x, n, -5, 5);
	ct_fill(t, d, n, -1, 1);
	X = ct_dev(t, dt, x, n);
	D = ct_dev(t, dt, d, n);
	O = ct_bytes(t, NULL, n * es);
	k->gelu_fwd(t->b->ks, O, X, n);
	k->gelu_bwd(t->b->ks, D, X, D, n); /* in place, as allowed */
	kern_gelu_fwd(NULL, o, x, n);
	kern_gelu_bwd(NULL, d, x, d, n);
	ct_sync(t, "gelu");
	ct_get(t, dt, O, n, g);
	ct_check(t, "gelu_fwd", dt, g, o, n, ct_tol(dt));
	ct_get(t, dt, D, n, g);
	ct_check(t, "gelu_bwd (in place)", dt, g, d, n, ct_tol(dt));

	ct_fill(t, s, N * 2 * F, -4, 4);
	ct_fill(t, d, N * F, -1, 1);
	X = ct_dev(t, dt, s, N * 2 * F);
	D = ct_dev(t, dt, d, N * F);
	O = ct_bytes(t, NULL, N * 2 * F * es);
	k->swiglu_fwd(t->b->ks, O, X, N, F);
	kern_swiglu_fwd(NULL, o, s, N, F);
	ct_sync(t, "swiglu");
	ct_get(t, dt, O, N * F, g);
	ct_check(t, "swiglu_fwd", dt, g, o, N * F, ct_tol(dt));
	k->swiglu_bwd(t->b->ks, O, X, D, N, F);
	kern_swiglu_bwd(NULL, ds, s, d, N, F);
	ct_sync(t, "swiglu");
	ct_get(t, dt, O, N * 2 * F, g);
	ct_check(t, "swiglu_bwd", dt, g, ds, N * 2 * F, ct_tol(dt));

	/* bias_add, bias_bwd (accumulates), add (aliasing a), acc */
	ct_fill(t, x, N * C, -2, 2);
	ct_fill(t, bias, C, -1, 1);
	ct_fill(t, db, C, -1, 1);
	X = ct_dev(t, dt, x, N * C);
	D = ct_dev(t, dt, bias, C);
	O = ct_dev(t, KD_F32, db, C);
	k->bias_add(t->b->ks, X, D, N, C);
	kern_bias_add(NULL, x, bias, N, C);
	ct_round(dt, x, N * C); /* the GPU stores the sum */
	k->bias_bwd(t->b->ks, O, X, N, C);
	kern_bias_bwd(NULL, db, x, N, C);
	ct_sync(t, "bias");
	ct_get(t, dt, X, N * C, g);
	ct_check(t, "bias_add", dt, g, x, N * C, ct_tol(dt));
	ct_get(t, KD_F32, O, C, g);
	ct_check(t, "bias_bwd", dt, g, db, C, TOL32);

	ct_fill(t, x, n, -2, 2);
	ct_fill(t, d, n, -2, 2);
	X = ct_dev(t, dt, x, n);
	D = ct_dev(t, dt, d, n);
	k->add(t->b->ks, X, X, D, n);
	kern_add(NULL, x, x, d, n);
	ct_round(dt, x, n);
	k->acc(t->b->ks, D, X, n);
	kern_acc(NULL, d, x, n);
	ct_sync(t, "add");
	ct_get(t, dt, X, n, g);
	ct_check(t, "add (out aliases a)", dt, g, x, n, ct_tol(dt));
	ct_get(t, dt, D, n, g);
	ct_check(t, "acc", dt, g, d, n, ct_tol(dt));
	ct_release(t);
}

static void layouts(struct ct *t, enum kern_dtype dt)
{
	enum { B = 2, T = 5, H = 4, G = 2, D = 24, W = (H + 2 * G) * D };
	const struct kern_ops *k = t->k[dt];
	size_t es = (size_t)kern_dtype_size(dt);
	float *qkv = ct_host(t, B * T * W), *q = ct_host(t, B * H * T * D);
	float *kk = ct_host(t, B * G * T * D), *v = ct_host(t, B * G * T * D);
	float *rows = ct_host(t, B * T * H * D), *g = ct_host(t, B * T * W);
	void *QKV, *Q, *K, *V, *R;

	ct_fill(t, qkv, B * T * W, -3, 3);
	QKV = ct_dev(t, dt, qkv, B * T * W);
	Q = ct_bytes(t, NULL, B * H * T * D * es);
	K = ct_bytes(t, NULL, B * G * T * D * es);
	V = ct_bytes(t, NULL, B * G * T * D * es);
	R = ct_bytes(t, NULL, B * T * W * es);
	k->qkv_split(t->b->ks, Q, K, V, QKV, B, T, H, G, D);
	kern_qkv_split(NULL, q, kk, v, qkv, B, T, H, G, D);
	ct_sync(t, "qkv_split");
	ct_get(t, dt, Q, B * H * T * D, g);
	ct_check(t, "qkv_split q", dt, g, q, B * H * T * D, 0);
	ct_get(t, dt, K, B * G * T * D, g);
	ct_check(t, "qkv_split k", dt, g, kk, B * G * T * D, 0);
	ct_get(t, dt, V, B * G * T * D, g);
	ct_check(t, "qkv_split v", dt, g, v, B * G * T * D, 0);
	k->qkv_merge(t->b->ks, R, Q, K, V, B, T, H, G, D);
	ct_sync(t, "qkv_merge");
	ct_get(t, dt, R, B * T * W, g);
	ct_check(t, "qkv_merge", dt, g, qkv, B * T * W, 0);

	k->heads_to_rows(t->b->ks, R, Q, B, T, H, D);
	kern_heads_to_rows(NULL, rows, q, B, T, H, D);
	ct_sync(t, "heads_to_rows");
	ct_get(t, dt, R, B * T * H * D, g);
	ct_check(t, "heads_to_rows", dt, g, rows, B * T * H * D, 0);
	k->rows_to_heads(t->b->ks, Q, R, B, T, H, D);
	ct_sync(t, "rows_to_heads");
	ct_get(t, dt, Q, B * H * T * D, g);
	ct_check(t, "rows_to_heads", dt, g, q, B * H * T * D, 0);
	ct_release(t);
}

static void softmax(struct ct *t, enum kern_dtype dt)
{
	static const long c[2][5] = { { 6, 40, 70, 30, 0 }, { 3, 20, 33, 0, 10 } };
	const struct kern_ops *k = t->k[dt];
	for (int i = 0; i < 2; i++) {
		long BH = c[i][0], Tq = c[i][1], Tk = c[i][2], q0 = c[i][3], k0 = c[i][4];
		long n = BH * Tq * Tk;
		float *s = ct_host(t, n), *a = ct_host(t, n), *da = ct_host(t, n);
		float *g = ct_host(t, n);
		void *S, *DA;
		ct_fill(t, s, n, -8, 8);
		S = ct_dev(t, dt, s, n);
		k->softmax_causal_fwd(t->b->ks, S, S, BH, Tq, Tk, q0, k0, 0.125f);
		kern_softmax_causal_fwd(NULL, a, s, BH, Tq, Tk, q0, k0, 0.125f);
		ct_sync(t, "softmax");
		ct_get(t, dt, S, n, g);
		ct_check(t, i ? "softmax_fwd (k0, masked rows)" : "softmax_fwd (q0, in place)",
			 dt, g, a, n, ct_tol(dt));
		ct_fill(t, da, n, -1, 1);
		S = ct_dev(t, dt, a, n);
		DA = ct_dev(t, dt, da, n);
		k->softmax_causal_bwd(t->b->ks, DA, DA, S, BH, Tq, Tk, 0.125f);
		kern_softmax_causal_bwd(NULL, da, da, a, BH, Tq, Tk, 0.125f);
		ct_sync(t, "softmax");
		ct_get(t, dt, DA, n, g);
		ct_check(t, "softmax_bwd (in place)", dt, g, da, n, ct_tol(dt));
	}
	ct_release(t);
}

static void attention(struct ct *t, enum kern_dtype dt)
{
	/* B, H, G, Tq, Tk, D, q0, k0 */
	static const long c[][8] = {
		{ 2, 4, 2, 70, 70, 64, 0, 0 },    /* GQA, D in the first width */
		{ 1, 8, 1, 33, 50, 128, 17, 0 },  /* one KV head, later queries */
		{ 1, 2, 2, 20, 37, 80, 0, 5 },    /* rows 0..4 see no key */
		{ 1, 3, 3, 19, 19, 256, 0, 0 },   /* the widest head */
		{ 2, 6, 3, 45, 29, 40, 20, 30 },  /* both offsets */
		{ 1, 4, 2, 200, 230, 128, 0, 30 }, /* many tiles of both (tensor cores) */
	};
	const struct kern_ops *k = t->k[dt];
	size_t es = (size_t)kern_dtype_size(dt);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		long B = c[i][0], H = c[i][1], G = c[i][2], Tq = c[i][3], Tk = c[i][4];
		long D = c[i][5], q0 = c[i][6], k0 = c[i][7];
		long nq = B * H * Tq * D, nk = B * G * Tk * D, nl = B * H * Tq;
		float sc = 1.0f / sqrtf((float)D);
		float *q = ct_host(t, nq), *kk = ct_host(t, nk), *v = ct_host(t, nk);
		float *o = ct_host(t, nq), *l = ct_host(t, nl), *dout = ct_host(t, nq);
		float *dq = ct_host(t, nq), *dk = ct_host(t, nk), *dv = ct_host(t, nk);
		float *g = ct_host(t, nq > nk ? nq : nk);
		void *Q, *K, *V, *O, *L, *DO, *DQ, *DK, *DV;
		char what[96];

		ct_fill(t, q, nq, -1, 1);
		ct_fill(t, kk, nk, -1, 1);
		ct_fill(t, v, nk, -1, 1);
		ct_fill(t, dout, nq, -1, 1);
		Q = ct_dev(t, dt, q, nq);
		K = ct_dev(t, dt, kk, nk);
		V = ct_dev(t, dt, v, nk);
		DO = ct_dev(t, dt, dout, nq);
		O = ct_bytes(t, NULL, nq * es);
		L = ct_bytes(t, NULL, nl * sizeof(float));
		k->attention_fwd(t->b->ks, O, L, Q, K, V, B, H, G, Tq, Tk, D, q0, k0, sc);
		kern_attention_fwd(NULL, o, l, q, kk, v, B, H, G, Tq, Tk, D, q0, k0, sc);
		ct_sync(t, "attention_fwd");
		snprintf(what, sizeof what, "attention_fwd out, case %zu", i);
		ct_get(t, dt, O, nq, g);
		ct_check(t, what, dt, g, o, nq, ct_tol(dt));
		snprintf(what, sizeof what, "attention_fwd lse, case %zu", i);
		ct_get(t, KD_F32, L, nl, g);
		ct_check(t, what, dt, g, l, nl, TOL32);

		/* Backward from the CPU's out and lse, as both sides see them. */
		O = ct_dev(t, dt, o, nq);
		L = ct_dev(t, KD_F32, l, nl);
		DQ = ct_bytes(t, NULL, nq * es);
		DK = ct_bytes(t, NULL, nk * es);
		DV = ct_bytes(t, NULL, nk * es);
		k->attention_bwd(t->b->ks, DQ, DK, DV, DO, O, L, Q, K, V, B, H, G, Tq, Tk,
				 D, q0, k0, sc);
		kern_attention_bwd(NULL, dq, dk, dv, dout, o, l, q, kk, v, B, H, G, Tq,
				   Tk, D, q0, k0, sc);
		ct_sync(t, "attention_bwd");
		snprintf(what, sizeof what, "attention_bwd dq, case %zu", i);
		ct_get(t, dt, DQ, nq, g);
		ct_check(t, what, dt, g, dq, nq, ct_tol(dt));
		snprintf(what, sizeof what, "attention_bwd dk, case %zu", i);
		ct_get(t, dt, DK, nk, g);
		ct_check(t, what, dt, g, dk, nk, ct_tol(dt));
		snprintf(what, sizeof what, "attention_bwd dv, case %zu", i);
		ct_get(t, dt, DV, nk, g);
		ct_check(t, what, dt, g, dv, nk, ct_tol(dt));
		ct_release(t);
	}
}

static void embeddings(struct ct *t, enum kern_dtype dt)
{
	enum { N = 50, C = 64, V = 80, V0 = 20, VL = 40, B = 3, T = 10, P0 = 5 };
	const struct kern_ops *k = t->k[dt];
	size_t es = (size_t)kern_dtype_size(dt);
	int32_t tok[N];
	float *wte = ct_host(t, VL * C), *o = ct_host(t, N * C), *d = ct_host(t, N * C);
	float *dw = ct_host(t, VL * C), *wpe = ct_host(t, (P0 + T) * C);
	float *dp = ct_host(t, (P0 + T) * C), *g = ct_host(t, N * C), *r = ct_host(t, N);
	void *TOK, *WTE, *O, *D, *DW;

	ct_fill(t, r, N, 0, V);
	for (int i = 0; i < N; i++)
		tok[i] = (int32_t)r[i];
	tok[0] = tok[7] = V0 + 3; /* a repeated token in the shard */
	ct_fill(t, wte, VL * C, -1, 1);
	ct_fill(t, d, N * C, -1, 1);
	ct_fill(t, dw, VL * C, -1, 1);
	TOK = ct_bytes(t, tok, sizeof tok);
	WTE = ct_dev(t, dt, wte, VL * C);
	D = ct_dev(t, dt, d, N * C);
	DW = ct_dev(t, KD_F32, dw, VL * C);
	O = ct_bytes(t, NULL, N * C * es);
	k->embedding_fwd(t->b->ks, O, TOK, WTE, N, C, V0, VL);
	k->embedding_bwd(t->b->ks, DW, D, TOK, N, C, V0, VL);
	kern_embedding_fwd(NULL, o, tok, wte, N, C, V0, VL);
	kern_embedding_bwd(NULL, dw, d, tok, N, C, V0, VL);
	ct_sync(t, "embedding");
	ct_get(t, dt, O, N * C, g);
	ct_check(t, "embedding_fwd", dt, g, o, N * C, 0);
	ct_get(t, KD_F32, DW, VL * C, g);
	ct_check(t, "embedding_bwd", dt, g, dw, VL * C, TOL32);

	ct_fill(t, o, B * T * C, -1, 1);
	ct_fill(t, wpe, (P0 + T) * C, -1, 1);
	ct_fill(t, dp, (P0 + T) * C, -1, 1);
	O = ct_dev(t, dt, o, B * T * C);
	WTE = ct_dev(t, dt, wpe, (P0 + T) * C);
	DW = ct_dev(t, KD_F32, dp, (P0 + T) * C);
	k->position_fwd(t->b->ks, O, WTE, B, T, C, P0);
	kern_position_fwd(NULL, o, wpe, B, T, C, P0);
	k->position_bwd(t->b->ks, DW, D, B, T, C, P0);
	kern_position_bwd(NULL, dp, d, B, T, C, P0);
	ct_sync(t, "position");
	ct_get(t, dt, O, B * T * C, g);
	ct_check(t, "position_fwd", dt, g, o, B * T * C, ct_tol(dt));
	ct_get(t, KD_F32, DW, (P0 + T) * C, g);
	ct_check(t, "position_bwd", dt, g, dp, (P0 + T) * C, TOL32);
	ct_release(t);
}

static void xent(struct ct *t, enum kern_dtype dt)
{
	enum { N = 9, VL = 1000, V0 = 500 };
	const struct kern_ops *k = t->k[dt];
	int32_t tg[N];
	float *z = ct_host(t, N * VL), *dl = ct_host(t, N * VL), *g = ct_host(t, N * VL);
	float *mx = ct_host(t, N), *se = ct_host(t, N), *tl = ct_host(t, N);
	float *loss = ct_host(t, N), *r = ct_host(t, N);
	void *Z, *TG, *MX, *SE, *TL, *LOSS;

	ct_fill(t, r, N, 0, 2000);
	for (int i = 0; i < N; i++)
		tg[i] = (int32_t)r[i];
	tg[0] = V0; /* the first and last entries of the shard */
	tg[1] = V0 + VL - 1;
	ct_fill(t, z, N * VL, -6, 6);
	Z = ct_dev(t, dt, z, N * VL);
	TG = ct_bytes(t, tg, sizeof tg);
	MX = ct_bytes(t, NULL, N * sizeof(float));
	SE = ct_bytes(t, NULL, N * sizeof(float));
	TL = ct_bytes(t, NULL, N * sizeof(float));
	LOSS = ct_bytes(t, NULL, N * sizeof(float));
	kern_xent_max(NULL, mx, z, N, VL);
	kern_xent_sums(NULL, se, tl, z, mx, tg, N, VL, V0);
	kern_xent_loss_grad(NULL, loss, dl, z, mx, se, tl, tg, N, VL, V0, 0.25f);
	k->xent_max(t->b->ks, MX, Z, N, VL);
	ct_sync(t, "xent_max");
	ct_get(t, KD_F32, MX, N, g);
	ct_check(t, "xent_max", dt, g, mx, N, TOL32);
	MX = ct_dev(t, KD_F32, mx, N);
	k->xent_sums(t->b->ks, SE, TL, Z, MX, TG, N, VL, V0);
	ct_sync(t, "xent_sums");
	ct_get(t, KD_F32, SE, N, g);
	ct_check(t, "xent_sums sumexp", dt, g, se, N, TOL32);
	ct_get(t, KD_F32, TL, N, g);
	ct_check(t, "xent_sums tlogit", dt, g, tl, N, TOL32);
	SE = ct_dev(t, KD_F32, se, N);
	TL = ct_dev(t, KD_F32, tl, N);
	k->xent_loss_grad(t->b->ks, LOSS, Z, Z, MX, SE, TL, TG, N, VL, V0, 0.25f);
	ct_sync(t, "xent_loss_grad");
	ct_get(t, KD_F32, LOSS, N, g);
	ct_check(t, "xent_loss_grad loss", dt, g, loss, N, TOL32);
	ct_get(t, dt, Z, N * VL, g);
	ct_check(t, "xent_loss_grad (in place)", dt, g, dl, N * VL, ct_tol(dt));
	ct_release(t);
}

static void optim(struct ct *t, enum kern_dtype dt)
{
	enum { n = 1000 };
	const struct kern_ops *k = t->k[dt];
	size_t es = (size_t)kern_dtype_size(dt);
	float *p = ct_host(t, n), *m = ct_host(t, n), *v = ct_host(t, n);
	float *gr = ct_host(t, n), *g = ct_host(t, n), *lp = ct_host(t, n);
	void *P, *M, *V, *GR, *LP;
	double acc = 2.0, gacc = 0;
	float w[1], gw[1];

	ct_fill(t, p, n, -1, 1);
	ct_fill(t, m, n, -0.1f, 0.1f);
	ct_fill(t, v, n, 0, 0.01f);
	ct_fill(t, gr, n, -1, 1);
	P = ct_dev(t, KD_F32, p, n);
	M = ct_dev(t, KD_F32, m, n);
	V = ct_dev(t, KD_F32, v, n);
	GR = ct_dev(t, KD_F32, gr, n);
	LP = ct_bytes(t, NULL, n * es);
	k->adamw(t->b->ks, P, M, V, GR, LP, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 3, 0.5f);
	kern_adamw(NULL, p, m, v, gr, lp, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 3, 0.5f);
	ct_sync(t, "adamw");
	ct_get(t, KD_F32, P, n, g);
	ct_check(t, "adamw p", dt, g, p, n, TOL32);
	ct_get(t, KD_F32, M, n, g);
	ct_check(t, "adamw m", dt, g, m, n, TOL32);
	ct_get(t, KD_F32, V, n, g);
	ct_check(t, "adamw v", dt, g, v, n, TOL32);
	ct_get(t, dt, LP, n, g);
	ct_check(t, "adamw compute copy", dt, g, lp, n, ct_tol(dt));

	/* sumsq accumulates into one device double; scale; conversions */
	V = ct_bytes(t, &acc, sizeof acc);
	k->sumsq(t->b->ks, V, GR, n);
	kern_sumsq(NULL, &acc, gr, n);
	k->scale(t->b->ks, GR, -0.3f, n);
	kern_scale(NULL, gr, -0.3f, n);
	k->from_f32(t->b->ks, LP, GR, n);
	ct_sync(t, "sumsq");
	t->b->ops->to_host(t->b, &gacc, V, sizeof gacc);
	w[0] = (float)acc;
	gw[0] = (float)gacc;
	ct_check(t, "sumsq", dt, gw, w, 1, TOL32);
	ct_get(t, KD_F32, GR, n, g);
	ct_check(t, "scale", dt, g, gr, n, TOL32);
	memcpy(lp, gr, n * sizeof(float));
	ct_round(dt, lp, n);
	ct_get(t, dt, LP, n, g);
	ct_check(t, "from_f32 (rounds to nearest even)", dt, g, lp, n, 0);
	k->to_f32(t->b->ks, P, LP, n);
	ct_sync(t, "to_f32");
	ct_get(t, KD_F32, P, n, g);
	ct_check(t, "to_f32 (exact)", dt, g, lp, n, 0);
	ct_release(t);
}

/*
 * The sums that many threads feed (weight and bias gradients of the
 * norms, the embedding gradient with repeated tokens, the sum of squares
 * behind the gradient norm) are the same to the bit when run twice on
 * the same inputs, at sizes that span many blocks (several row ranges
 * and token stages of the embedding, a capped grid of sumsq), and agree
 * with the CPU's serial sums.
 */
static void twice_same(struct ct *t, const char *what, enum kern_dtype dt,
		       const float *a, const float *b, long n)
{
	if (memcmp(a, b, (size_t)n * sizeof *a) != 0) {
		long i = 0;
		while (i < n && memcmp(a + i, b + i, sizeof *a) == 0)
			i++;
		t->failed++;
		printf("FAIL %-28s %s: [%ld] is %.9g in one run and %.9g in the other\n",
		       what, kern_dtype_name(dt), i, a[i], b[i]);
	} else {
		t->passed++;
	}
}

static void determinism(struct ct *t, enum kern_dtype dt)
{
	enum { N = 4099, C = 333, NT = 5000, CE = 300, VL = 700, NS = 3000001 };
	const struct kern_ops *k = t->k[dt];
	float *x = ct_host(t, N * C), *dy = ct_host(t, N * C), *w = ct_host(t, C);
	float *mean = ct_host(t, N), *rstd = ct_host(t, N), *dx = ct_host(t, N * C);
	float *dw = ct_host(t, C), *db = ct_host(t, C), *g[2], *h[2];
	float *d = ct_host(t, NT * CE), *dwte = ct_host(t, VL * CE), *r = ct_host(t, NT);
	float *sq = ct_host(t, NS);
	int32_t *tok = (int32_t *)ct_host(t, NT);
	double s[2] = { 0, 0 }, want = 0;
	void *X, *DY, *W, *MEAN, *RSTD, *DX, *DW, *DB, *TOK, *D, *DWTE, *SQ, *S;

	ct_fill(t, x, N * C, -2, 3);
	ct_fill(t, dy, N * C, -1, 1);
	ct_fill(t, w, C, 0.5f, 1.5f);
	ct_round(dt, x, N * C);
	ct_round(dt, dy, N * C);
	ct_round(dt, w, C);
	kern_layernorm_fwd(NULL, dx, mean, rstd, x, w, NULL, N, C, 1e-5f);
	X = ct_dev(t, dt, x, N * C);
	DY = ct_dev(t, dt, dy, N * C);
	W = ct_dev(t, dt, w, C);
	MEAN = ct_dev(t, KD_F32, mean, N);
	RSTD = ct_dev(t, KD_F32, rstd, N);
	for (int run = 0; run < 2; run++) {
		g[run] = ct_host(t, C);
		h[run] = ct_host(t, C);
		DX = ct_dev(t, dt, ct_host(t, N * C), N * C); /* zeros: they accumulate */
		DW = ct_dev(t, KD_F32, ct_host(t, C), C);
		DB = ct_dev(t, KD_F32, ct_host(t, C), C);
		k->layernorm_bwd(t->b->ks, DX, DW, DB, DY, X, W, MEAN, RSTD, N, C);
		ct_sync(t, "layernorm_bwd (twice)");
		ct_get(t, KD_F32, DW, C, g[run]);
		ct_get(t, KD_F32, DB, C, h[run]);
	}
	twice_same(t, "layernorm_bwd dw, twice", dt, g[0], g[1], C);
	twice_same(t, "layernorm_bwd db, twice", dt, h[0], h[1], C);
	memset(dx, 0, (size_t)N * C * sizeof *dx);
	kern_layernorm_bwd(NULL, dx, dw, db, dy, x, w, mean, rstd, N, C);
	ct_check(t, "layernorm_bwd dw, 4099 rows", dt, g[0], dw, C, 1e-4);
	ct_check(t, "layernorm_bwd db, 4099 rows", dt, h[0], db, C, 1e-4);

	/* 5000 tokens (five stages) among 40 rows of three row ranges */
	ct_fill(t, r, NT, 0, 40);
	for (int i = 0; i < NT; i++)
		tok[i] = (int32_t)r[i] * 17; /* rows 0 .. 663 */
	ct_fill(t, d, NT * CE, -1, 1);
	ct_round(dt, d, NT * CE);
	TOK = ct_bytes(t, tok, NT * sizeof *tok);
	D = ct_dev(t, dt, d, NT * CE);
	for (int run = 0; run < 2; run++) {
		g[run] = ct_host(t, VL * CE);
		DWTE = ct_dev(t, KD_F32, ct_host(t, VL * CE), VL * CE);
		k->embedding_bwd(t->b->ks, DWTE, D, TOK, NT, CE, 0, VL);
		ct_sync(t, "embedding_bwd (twice)");
		ct_get(t, KD_F32, DWTE, VL * CE, g[run]);
	}
	twice_same(t, "embedding_bwd, twice", dt, g[0], g[1], VL * CE);
	kern_embedding_bwd(NULL, dwte, d, tok, NT, CE, 0, VL);
	ct_check(t, "embedding_bwd, 5000 tokens", dt, g[0], dwte, VL * CE, 1e-4);

	ct_fill(t, sq, NS, -1, 1);
	SQ = ct_dev(t, KD_F32, sq, NS);
	for (int run = 0; run < 2; run++) {
		S = ct_bytes(t, &s[run], sizeof s[run]);
		k->sumsq(t->b->ks, S, SQ, NS);
		ct_sync(t, "sumsq (twice)");
		t->b->ops->to_host(t->b, &s[run], S, sizeof s[run]);
	}
	if (memcmp(&s[0], &s[1], sizeof s[0]) != 0) {
		t->failed++;
		printf("FAIL %-28s %s: %.17g in one run and %.17g in the other\n",
		       "sumsq, twice", kern_dtype_name(dt), s[0], s[1]);
	} else {
		t->passed++;
	}
	kern_sumsq(NULL, &want, sq, NS);
	if (fabs(s[0] - want) > 1e-9 * want) {
		t->failed++;
		printf("FAIL %-28s %s: %.17g, want %.17g\n", "sumsq, 3000001 values",
		       kern_dtype_name(dt), s[0], want);
	} else {
		t->passed++;
	}
	ct_release(t);
}

int main(int argc, char **argv)
{
	struct ct t;
	int rc = ct_open(&t, &argc, &argv, KD_F32);
	if (rc != 0)
		return rc > 0 ? ct_finish(&t) : (ct_finish(&t), 1);
	for (int dt = KD_F32; dt <= KD_F16; dt++) {
		norms(&t, dt);
		activations(&t, dt);
		layouts(&t, dt);
		softmax(&t, dt);
		attention(&t, dt);
		embeddings(&t, dt);
		xent(&t, dt);
		optim(&t, dt);
		determinism(&t, dt);
	}
	return ct_finish(&t);
}
