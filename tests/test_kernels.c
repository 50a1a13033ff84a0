/*
 * test_kernels.c: the CPU kernels of kernels.h (the oracle of every other
 * backend) against numbers computed independently of them: small cases
 * worked by hand (values to 12 digits from bc -l, shown beside each), and
 * central finite differences of a scalar loss L = <out, R> for every
 * backward kernel.  Attention and the causal softmax are in
 * test_kernels_attn.c.
 *
 * Finite differences run in fp32 with step h = 1e-2 on O(1) inputs: the
 * truncation error (h^2/6 f''') and the rounding error (1e-7 |L| / h) are
 * both near 1e-5, so 1e-3 tolerances pass with a wide margin while a wrong
 * term in a formula fails by O(1).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "kerntest.h"

#define FD_H 1e-2f
#define FD_ATOL 1e-3
#define FD_RTOL 1e-3

/* ---- the table ------------------------------------------------------- */

Test(kernels, cpu_table_is_complete)
{
	const struct kern_ops *k = kern_cpu_ops();
	cr_assert_eq(k->version, PPLAN_KERNELS_VERSION);
	cr_assert_eq(k->dtype, KD_F32);
	/* Every entry after the two leading ints is a function pointer. */
	const char *p = (const char *)&k->layernorm_fwd;
	const char *end = (const char *)(k + 1);
	int n = 0;
	for (; p + sizeof(void (*)(void)) <= end; p += sizeof(void (*)(void)), n++) {
		void (*fn)(void);
		memcpy(&fn, p, sizeof fn);
		cr_expect(fn != NULL, "kern_ops entry %d is NULL", n);
	}
	cr_expect_eq(n, 33, "kern_ops has %d entries, this test knows 33", n);
	cr_expect_str_eq(kern_dtype_name(KD_BF16), "bf16");
	cr_expect_eq(kern_dtype_size(KD_F32), 4);
	cr_expect_eq(kern_dtype_size(KD_F16), 2);
}

/* ---- LayerNorm ------------------------------------------------------- */

/* x = [1 2 3 4]: mean 2.5, variance 1.25, rstd = 1/sqrt(1.25 + 1e-5) =
 * 0.894423613313; out = (x - 2.5) * rstd * w + b. */
Test(kernels, layernorm_fwd_by_hand)
{
	float x[4] = { 1, 2, 3, 4 }, w[4] = { 0.5f, 1, 2, -1 };
	float b[4] = { 0.1f, 0, -0.2f, 0.3f }, out[4], mean, rstd;
	double want[4] = { -0.570817709984, -0.447211806656, 0.694423613313,
			   -1.041635419969 };
	kern_layernorm_fwd(NULL, out, &mean, &rstd, x, w, b, 1, 4, 1e-5f);
	kt_close(out, want, 4, 1e-6, 1e-6, "layernorm out");
	cr_expect_float_eq(mean, 2.5f, 1e-7);
	cr_expect_float_eq(rstd, 0.894423613313f, 1e-6);
}

struct ln_ctx {
	float *x, *w, *b, *out, *mean, *rstd, *r;
	long N, C;
	int rms;
};

static double ln_loss(void *vc)
{
	struct ln_ctx *c = vc;
	if (c->rms)
		kern_rmsnorm_fwd(NULL, c->out, c->rstd, c->x, c->w, c->N, c->C, 1e-5f);
	else
		kern_layernorm_fwd(NULL, c->out, c->mean, c->rstd, c->x, c->w, c->b,
				   c->N, c->C, 1e-5f);
	return kt_dot(c->out, c->r, c->N * c->C);
}

static void norm_bwd_fd(int rms)
{
	enum { N = 3, C = 7 };
	struct krng rng = { 7 };
	float x[N * C], w[C], b[C], out[N * C], mean[N], rstd[N], r[N * C];
	float dx[N * C], dw[C], db[C];
	double gx[N * C], gw[C], gb[C];
	struct ln_ctx c = { x, w, b, out, mean, rstd, r, N, C, rms };

	kt_fill(&rng, x, N * C, -2, 2);
	kt_fill(&rng, w, C, 0.5f, 1.5f);
	kt_fill(&rng, b, C, -0.5f, 0.5f);
	kt_fill(&rng, r, N * C, -1, 1);
	kt_fd(x, N * C, FD_H, ln_loss, &c, gx);
	kt_fd(w, C, FD_H, ln_loss, &c, gw);
	if (!rms)
		kt_fd(b, C, FD_H, ln_loss, &c, gb);

	/* The backward accumulates: start from known values. */
	for (int i = 0; i < N * C; i++) {
		dx[i] = 0.25f;
		gx[i] += 0.25;
	}
	for (int i = 0; i < C; i++) {
		dw[i] = db[i] = -1.0f;
		gw[i] -= 1.0;
		gb[i] -= 1.0;
	}
	ln_loss(&c); /* mean and rstd of the unperturbed input */
	if (rms) {
		kern_rmsnorm_bwd(NULL, dx, dw, r, x, w, rstd, N, C);
	} else {
		kern_layernorm_bwd(NULL, dx, dw, db, r, x, w, mean, rstd, N, C);
		kt_close(db, gb, C, FD_ATOL, FD_RTOL, "db");
	}
	kt_close(dx, gx, N * C, FD_ATOL, FD_RTOL, "dinp");
	kt_close(dw, gw, C, FD_ATOL, FD_RTOL, "dw");
}

Test(kernels, layernorm_bwd_finite_differences) { norm_bwd_fd(0); }

/* ---- RMSNorm --------------------------------------------------------- */

/* x = [1 -2 2 -4]: mean(x^2) = 25/4, rstd = 1/sqrt(6.25) = 0.4 (eps 0);
 * out = x * 0.4 * w. */
Test(kernels, rmsnorm_fwd_by_hand)
{
	float x[4] = { 1, -2, 2, -4 }, w[4] = { 1, 0.5f, 2, 1 }, out[4], rstd;
	double want[4] = { 0.4, -0.4, 1.6, -1.6 };
	kern_rmsnorm_fwd(NULL, out, &rstd, x, w, 1, 4, 0.0f);
	kt_close(out, want, 4, 1e-7, 1e-6, "rmsnorm out");
	cr_expect_float_eq(rstd, 0.4f, 1e-7);
}

Test(kernels, rmsnorm_bwd_finite_differences) { norm_bwd_fd(1); }

/* ---- GeLU and SwiGLU ------------------------------------------------- */

/* gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
Test(kernels, gelu_fwd_by_hand)
{
	float x[6] = { 0, 1, -1, 2, -3, 0.5f }, out[6];
	double want[6] = { 0, 0.841191990608, -0.158808009392, 1.954597694088,
			   -0.003637392082, 0.345714009825 };
	kern_gelu_fwd(NULL, out, x, 6);
	kt_close(out, want, 6, 1e-7, 1e-6, "gelu");
}

struct act_ctx {
	float *x, *out, *r;
	long N, F;
	int swiglu;
};

static double act_loss(void *vc)
{
	struct act_ctx *c = vc;
	if (c->swiglu)
		kern_swiglu_fwd(NULL, c->out, c->x, c->N, c->F);
	else
		kern_gelu_fwd(NULL, c->out, c->x, c->N * c->F);
	return kt_dot(c->out, c->r, c->N * c->F);
}

Test(kernels, gelu_bwd_finite_differences)
{
	enum { n = 24 };
	struct krng rng = { 11 };
	float x[n], out[n], r[n], d[n];
	double g[n];
	struct act_ctx c = { x, out, r, 1, n, 0 };
	kt_fill(&rng, x, n, -4, 4);
	kt_fill(&rng, r, n, -1, 1);
	kt_fd(x, n, FD_H, act_loss, &c, g);
	memcpy(d, r, sizeof d);
	kern_gelu_bwd(NULL, d, x, d, n); /* dinp may alias dout */
	kt_close(d, g, n, FD_ATOL, FD_RTOL, "gelu dinp");
}

/* silu(g) * u: silu(1) * 2 = 2 / (1 + e^-1) = 1.462117157260;
 * silu(-2) * 0.5 = -1 / (1 + e^2) = -0.119202922022; silu(0) * 3 = 0. */
Test(kernels, swiglu_fwd_by_hand)
{
	float inp[6] = { 1, -2, 0, 2, 0.5f, 3 }, out[3];
	double want[3] = { 1.462117157260, -0.119202922022, 0 };
	kern_swiglu_fwd(NULL, out, inp, 1, 3);
	kt_close(out, want, 3, 1e-7, 1e-6, "swiglu");
}

Test(kernels, swiglu_bwd_finite_differences)
{
	enum { N = 3, F = 5 };
	struct krng rng = { 13 };
	float x[N * 2 * F], out[N * F], r[N * F], d[N * 2 * F];
	double g[N * 2 * F];
	struct act_ctx c = { x, out, r, N, F, 1 };
	kt_fill(&rng, x, N * 2 * F, -3, 3);
	kt_fill(&rng, r, N * F, -1, 1);
	kt_fd(x, N * 2 * F, FD_H, act_loss, &c, g);
	kern_swiglu_bwd(NULL, d, x, r, N, F);
	kt_close(d, g, N * 2 * F, FD_ATOL, FD_RTOL, "swiglu dinp");
}

/* ---- element-wise ---------------------------------------------------- */

Test(kernels, bias_add_acc_by_hand)
{
	float out[6] = { 1, 2, 3, 4, 5, 6 }, bias[3] = { 10, 20, 30 };
	float db[3] = { 1, 1, 1 }, a[3] = { 1, 2, 3 }, b[3] = { 0.5f, -2, 4 };
	double w1[6] = { 11, 22, 33, 14, 25, 36 }, w2[3] = { 26, 48, 70 };
	double w3[3] = { 1.5, 0, 7 }, w5[3] = { 2, -2, 11 };
	kern_bias_add(NULL, out, bias, 2, 3);
	kt_close(out, w1, 6, 0, 0, "bias_add");
	kern_bias_bwd(NULL, db, out, 2, 3); /* 1 + 11 + 14, 1 + 22 + 25, ... */
	kt_close(db, w2, 3, 0, 0, "bias_bwd");
	kern_add(NULL, a, a, b, 3);
	kt_close(a, w3, 3, 0, 0, "add");
	kern_acc(NULL, a, a + 0, 0); /* n = 0 touches nothing */
	kern_acc(NULL, b, a, 3);
	kt_close(b, w5, 3, 0, 0, "acc");
}

Test(kernels, sumsq_scale_convert)
{
	float x[4] = { 1, -2, 3, 0.5f }, y[4];
	double acc = 1.0;
	kern_sumsq(NULL, &acc, x, 4); /* 1 + (1 + 4 + 9 + 0.25) */
	cr_expect_float_eq(acc, 15.25, 1e-12);
	kern_scale(NULL, x, -2.0f, 4);
	double w[4] = { -2, 4, -6, -1 };
	kt_close(x, w, 4, 0, 0, "scale");
	kern_to_f32(NULL, y, x, 4);
	kt_close(y, w, 4, 0, 0, "to_f32");
	kern_from_f32(NULL, y, y, 4);
	kt_close(y, w, 4, 0, 0, "from_f32 in place");
}

/* ---- attention layout ------------------------------------------------ */

/* Each qkv entry encodes its own coordinates, b*1000 + t*100 + column. */
Test(kernels, qkv_split_merge_and_heads)
{
	enum { B = 2, T = 3, H = 4, G = 2, D = 2, W = (H + 2 * G) * D };
	float qkv[B * T * W], q[B * H * T * D], k[B * G * T * D], v[B * G * T * D];
	float back[B * T * W], rows[B * T * H * D], heads[B * H * T * D];
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			for (int c = 0; c < W; c++)
				qkv[(b * T + t) * W + c] = (float)(b * 1000 + t * 100 + c);
	kern_qkv_split(NULL, q, k, v, qkv, B, T, H, G, D);
	/* q head 3, batch 1, t 2, d 1: column 3*2+1 = 7. */
	cr_expect_float_eq(q[((1 * H + 3) * T + 2) * D + 1], 1207.0f, 0);
	/* k head 1, batch 0, t 1, d 0: column (H + 1) * D = 10. */
	cr_expect_float_eq(k[((0 * G + 1) * T + 1) * D + 0], 110.0f, 0);
	/* v head 0, batch 1, t 0, d 1: column (H + G) * D + 1 = 13. */
	cr_expect_float_eq(v[((1 * G + 0) * T + 0) * D + 1], 1013.0f, 0);
	kern_qkv_merge(NULL, back, q, k, v, B, T, H, G, D);
	kt_closef(back, qkv, B * T * W, 0, 0, "merge(split(qkv))");

	kern_heads_to_rows(NULL, rows, q, B, T, H, D);
	/* rows (B,T,H*D) is exactly the q part of each qkv row. */
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			kt_closef(rows + (b * T + t) * H * D, qkv + (b * T + t) * W,
				  H * D, 0, 0, "heads_to_rows");
	kern_rows_to_heads(NULL, heads, rows, B, T, H, D);
	kt_closef(heads, q, B * H * T * D, 0, 0, "rows_to_heads(heads_to_rows)");
}

/* ---- embeddings ------------------------------------------------------ */

/* Vocabulary 6 split in shards [0,3) and [3,6); C = 2, wte row v = (v, -v). */
Test(kernels, embedding_vocab_parallel_by_hand)
{
	int32_t tok[4] = { 4, 1, 5, 4 };
	float wte[12], out0[8], out1[8], sum[8];
	float d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, dw1[6] = { 0 }, dw0[6] = { 0 };
	for (int v = 0; v < 6; v++) {
		wte[2 * v] = (float)v;
		wte[2 * v + 1] = (float)-v;
	}
	memset(out0, 0x7f, sizeof out0); /* overwritten, not accumulated */
	kern_embedding_fwd(NULL, out0, tok, wte, 4, 2, 0, 3);
	kern_embedding_fwd(NULL, out1, tok, wte + 6, 4, 2, 3, 3);
	double w0[8] = { 0, 0, 1, -1, 0, 0, 0, 0 };
	double w1[8] = { 4, -4, 0, 0, 5, -5, 4, -4 };
	double ws[8] = { 4, -4, 1, -1, 5, -5, 4, -4 };
	kt_close(out0, w0, 8, 0, 0, "shard 0");
	kt_close(out1, w1, 8, 0, 0, "shard 1");
	kern_add(NULL, sum, out0, out1, 8); /* the tensor-parallel all-reduce */
	kt_close(sum, ws, 8, 0, 0, "sum of shards");

	/* Backward: token 4 twice (rows 0 and 3), token 5 once, token 1 once. */
	kern_embedding_bwd(NULL, dw1, d, tok, 4, 2, 3, 3);
	kern_embedding_bwd(NULL, dw0, d, tok, 4, 2, 0, 3);
	double g1[6] = { 0, 0, 1 + 7, 2 + 8, 5, 6 };
	double g0[6] = { 0, 0, 3, 4, 0, 0 };
	kt_close(dw1, g1, 6, 0, 0, "dwte shard 1");
	kt_close(dw0, g0, 6, 0, 0, "dwte shard 0");
}

/* B = 2, T = 2, C = 1, positions from pos0 = 1 of wpe = (10, 20, 30). */
Test(kernels, position_by_hand)
{
	float out[4] = { 1, 2, 3, 4 }, wpe[3] = { 10, 20, 30 };
	float d[4] = { 1, 2, 3, 4 }, dw[3] = { 0.5f, 0.5f, 0.5f };
	double w[4] = { 21, 32, 23, 34 }, g[3] = { 0.5, 0.5 + 1 + 3, 0.5 + 2 + 4 };
	kern_position_fwd(NULL, out, wpe, 2, 2, 1, 1);
	kt_close(out, w, 4, 0, 0, "position_fwd");
	kern_position_bwd(NULL, dw, d, 2, 2, 1, 1);
	kt_close(dw, g, 3, 0, 0, "position_bwd");
}

/* ---- vocabulary-parallel cross-entropy ------------------------------- */

/* One full-vocabulary shard: the three kernels with nothing to reduce. */
static void xent_one(float *loss, float *dl, const float *logits,
		     const int32_t *tg, long N, long V, float scale)
{
	float mx[8], se[8], tl[8];
	kern_xent_max(NULL, mx, logits, N, V);
	kern_xent_sums(NULL, se, tl, logits, mx, tg, N, V, 0);
	kern_xent_loss_grad(NULL, loss, dl, logits, mx, se, tl, tg, N, V, 0, scale);
}

/* logits (1, 2, 3): log(e + e^2 + e^3) - z_t = log(1 + e^-1 + e^-2) +
 * (3 - z_t), log(1 + e^-1 + e^-2) = 0.407605964444. */
Test(kernels, xent_by_hand)
{
	float z[6] = { 1, 2, 3, 1, 2, 3 }, loss[2], dl[6];
	int32_t tg[2] = { 2, 0 };
	double want[2] = { 0.407605964444, 2.407605964444 };
	xent_one(loss, dl, z, tg, 2, 3, 1.0f);
	kt_close(loss, want, 2, 1e-6, 1e-6, "loss");
	/* softmax(1,2,3) = (1, e, e^2) / (1 + e + e^2) */
	double s = 1 + exp(1.0) + exp(2.0);
	double g[6] = { 1 / s, exp(1.0) / s, exp(2.0) / s - 1,
			1 / s - 1, exp(1.0) / s, exp(2.0) / s };
	kt_close(dl, g, 6, 1e-6, 1e-6, "dlogits");
}

/* Vocabulary 7 split 3 + 4 over two tensor-parallel ranks (uneven on
 * purpose): the all-reduces (MAX of the row maxima, SUM of sumexp and of
 * the target logit) done by hand between the kernels, against one shard. */
Test(kernels, xent_two_shards_match_one)
{
	enum { N = 5, V = 7, V0 = 3, V1 = 4 };
	struct krng rng = { 17 };
	float z[N * V], z0[N * V0], z1[N * V1], loss[N], dl[N * V];
	float mx0[N], mx1[N], se0[N], se1[N], tl0[N], tl1[N], l0[N], l1[N];
	float d0[N * V0], d1[N * V1];
	int32_t tg[N] = { 0, 2, 3, 6, 4 };
	kt_fill(&rng, z, N * V, -5, 5);
	z[1 * V + 5] = 40; /* a dominant logit in shard 1, away from the target */
	for (int n = 0; n < N; n++) {
		memcpy(z0 + n * V0, z + n * V, V0 * sizeof(float));
		memcpy(z1 + n * V1, z + n * V + V0, V1 * sizeof(float));
	}
	xent_one(loss, dl, z, tg, N, V, 1.0f / N);

	kern_xent_max(NULL, mx0, z0, N, V0);
	kern_xent_max(NULL, mx1, z1, N, V1);
	for (int n = 0; n < N; n++)
		mx0[n] = mx1[n] = fmaxf(mx0[n], mx1[n]);          /* MAX */
	kern_xent_sums(NULL, se0, tl0, z0, mx0, tg, N, V0, 0);
	kern_xent_sums(NULL, se1, tl1, z1, mx1, tg, N, V1, V0);
	for (int n = 0; n < N; n++) {
		se0[n] = se1[n] = se0[n] + se1[n];                 /* SUM */
		tl0[n] = tl1[n] = tl0[n] + tl1[n];
	}
	kern_xent_loss_grad(NULL, l0, d0, z0, mx0, se0, tl0, tg, N, V0, 0, 1.0f / N);
	memcpy(d1, z1, sizeof d1); /* dlogits may alias logits */
	kern_xent_loss_grad(NULL, l1, d1, d1, mx1, se1, tl1, tg, N, V1, V0, 1.0f / N);
	kt_closef(l0, loss, N, 1e-6, 1e-5, "shard 0 loss");
	kt_closef(l1, loss, N, 1e-6, 1e-5, "shard 1 loss");
	for (int n = 0; n < N; n++) {
		kt_closef(d0 + n * V0, dl + n * V, V0, 1e-7, 1e-5, "shard 0 dlogits");
		kt_closef(d1 + n * V1, dl + n * V + V0, V1, 1e-7, 1e-5, "shard 1 dlogits");
	}
}

struct xent_ctx {
	float *z, *loss, *dl;
	int32_t *tg;
	long N, V;
};

static double xent_loss(void *vc)
{
	struct xent_ctx *c = vc;
	double s = 0;
	xent_one(c->loss, c->dl, c->z, c->tg, c->N, c->V, 1.0f);
	for (long n = 0; n < c->N; n++)
		s += c->loss[n];
	return s / (double)c->N;
}

/* The mean loss over N rows: its gradient is dlogits with scale 1/N. */
Test(kernels, xent_grad_finite_differences)
{
	enum { N = 4, V = 6 };
	struct krng rng = { 19 };
	float z[N * V], loss[N], dl[N * V], d[N * V];
	int32_t tg[N] = { 5, 0, 3, 3 };
	double g[N * V];
	struct xent_ctx c = { z, loss, dl, tg, N, V };
	kt_fill(&rng, z, N * V, -3, 3);
	kt_fd(z, N * V, FD_H, xent_loss, &c, g);
	xent_one(loss, d, z, tg, N, V, 1.0f / N);
	kt_close(d, g, N * V, FD_ATOL, FD_RTOL, "dlogits");
}

/* ---- AdamW ----------------------------------------------------------- */

/* The betas reach the kernel as floats: 1 - 0.9f and 1 - 0.999f differ
 * from 0.1 and 0.001 by 2.4e-7 and 1.3e-5 relative, so the moments are
 * compared with relative tolerances above those; the bias corrections use
 * the same floats and cancel them in the parameters. */
static void expect_rel(double got, double want, double rtol, const char *what)
{
	cr_expect(fabs(got - want) <= rtol * fabs(want),
		  "%s: got %.10g, want %.10g", what, got, want);
}

/* Kingma and Ba's Algorithm 1 by hand, lr 0.1, beta (0.9, 0.999), eps 1e-8:
 * step 1, g = 0.5: m = 0.05, v = 0.00025, mhat = 0.5, vhat = 0.25,
 *   p = 1 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.900000002;
 * step 2, g = -0.25: m = 0.045 - 0.025 = 0.02, v = 0.00024975 + 0.0000625 =
 *   0.00031225, mhat = 0.02 / 0.19 = 0.105263157895, vhat = 0.00031225 /
 *   0.001999 = 0.156203101551, sqrt = 0.395225380702,
 *   p = 0.900000002 - 0.1 * 0.266337... = 0.873366298708. */
Test(kernels, adamw_two_steps_by_hand)
{
	float p = 1, m = 0, v = 0, g1 = 0.5f, g2 = -0.25f, lp = 0;
	kern_adamw(NULL, &p, &m, &v, &g1, &lp, 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0, 1, 1);
	cr_expect_float_eq(p, 0.900000002f, 1e-7);
	expect_rel(m, 0.05, 1e-6, "m1");
	expect_rel(v, 0.00025, 2e-5, "v1");
	cr_expect_eq(lp, p, "the compute copy follows the master weight");
	kern_adamw(NULL, &p, &m, &v, &g2, NULL, 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0, 2, 1);
	expect_rel(m, 0.02, 2e-6, "m2");
	expect_rel(v, 0.00031225, 2e-5, "v2");
	cr_expect_float_eq(p, 0.873366298708f, 2e-7);
}

/* Decoupled decay (Loshchilov and Hutter) and a gradient scale, lr 0.01,
 * wd 0.1, gscale 2 (raw gradients 0.3 then -0.1, so 0.6 and -0.2):
 * step 1: mhat/(sqrt(vhat)+eps) = 0.6/0.60000001, p = 2 - 0.01 * (0.99999998 +
 *   0.1 * 2) = 1.988000000167;
 * step 2: m = 0.034, v = 0.00039964, mhat = 0.178947368421, vhat =
 *   0.199919959980, ratio = 0.400218563003, p = 1.988 - 0.01 * (0.400218563 +
 *   0.1988) = 1.982009814536. */
Test(kernels, adamw_decay_and_gscale_by_hand)
{
	float p[2] = { 2, 2 }, m[2] = { 0 }, v[2] = { 0 }, g[2] = { 0.3f, 0.3f };
	kern_adamw(NULL, p, m, v, g, NULL, 2, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, 1, 2);
	cr_expect_float_eq(p[0], 1.988000000167f, 2e-7);
	g[0] = g[1] = -0.1f;
	kern_adamw(NULL, p, m, v, g, NULL, 2, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, 2, 2);
	expect_rel(m[1], 0.034, 2e-6, "m2");
	expect_rel(v[1], 0.00039964, 2e-5, "v2");
	cr_expect_float_eq(p[0], 1.982009814536f, 2e-7);
	cr_expect_float_eq(p[1], 1.982009814536f, 2e-7);
}

/* ---- bf16 ------------------------------------------------------------ */

static float f_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* bf16 keeps the top 16 bits of an fp32; the lower 16 decide the
 * rounding, to nearest with ties to the even bf16 (bit 16 clear). */
Test(kernels, bf16_round_to_nearest_even)
{
	struct { uint32_t in; uint16_t out; const char *what; } c[] = {
		{ 0x3f800000u, 0x3f80, "1.0 exactly" },
		{ 0x3f808000u, 0x3f80, "1 + 2^-8: tie, 0x3f80 is even, stays" },
		{ 0x3f818000u, 0x3f82, "1 + 3*2^-8: tie, 0x3f81 is odd, goes up" },
		{ 0x3f808001u, 0x3f81, "just above the tie goes up" },
		{ 0x3f807fffu, 0x3f80, "just below the tie goes down" },
		{ 0xbf818000u, 0xbf82, "negative tie, odd: away from zero" },
		{ 0x80000000u, 0x8000, "-0 keeps its sign" },
		{ 0x00000001u, 0x0000, "smallest fp32 subnormal rounds to +0" },
		{ 0x00018000u, 0x0002, "subnormal tie, odd: up" },
		{ 0x00008000u, 0x0000, "subnormal tie, even: down" },
		{ 0x7f7f7fffu, 0x7f7f, "below the tie at bf16's max stays finite" },
		{ 0x7f7f8000u, 0x7f80, "tie at bf16's max (odd) overflows to +inf" },
		{ 0x7f7fffffu, 0x7f80, "FLT_MAX rounds to +inf" },
		{ 0xff7fffffu, 0xff80, "-FLT_MAX rounds to -inf" },
		{ 0x7f800000u, 0x7f80, "+inf" },
		{ 0xff800000u, 0xff80, "-inf" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		uint16_t got = kern_f32_to_bf16(f_of(c[i].in));
		cr_expect_eq(got, c[i].out, "%s: 0x%08x -> 0x%04x, want 0x%04x",
			     c[i].what, c[i].in, got, c[i].out);
	}
	/* NaNs stay NaN, also a payload that lives only in the low 16 bits
	 * (truncating it would give inf). */
	uint32_t nans[3] = { 0x7fc00000u, 0x7f800001u, 0xffffffffu };
	for (int i = 0; i < 3; i++) {
		uint16_t got = kern_f32_to_bf16(f_of(nans[i]));
		cr_expect((got & 0x7f80) == 0x7f80 && (got & 0x7f),
			  "NaN 0x%08x -> 0x%04x is not a NaN", nans[i], got);
		cr_expect(isnan(kern_bf16_to_f32(got)));
	}
	/* Widening is exact: every bf16 comes back as its fp32. */
	cr_expect_eq(kern_bf16_to_f32(0x3f81), 1.0078125f);
	cr_expect_eq(kern_bf16_to_f32(0xc2f7), -123.5f);
	cr_expect_eq(kern_bf16_to_f32(0x0001), f_of(0x00010000u));
	cr_expect(isinf(kern_bf16_to_f32(0xff80)) && kern_bf16_to_f32(0xff80) < 0);
}
