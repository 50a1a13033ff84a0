/*
 * cpu_ops.c: the CPU kernel table.  Each entry adapts the table's void
 * tensors (fp32 on the CPU) to the typed CPU twin of the same name.
 */
#include "cpu_kernels.h"

const char *kern_dtype_name(enum kern_dtype d)
{
	switch (d) {
	case KD_F32: return "fp32";
	case KD_BF16: return "bf16";
	case KD_F16: return "fp16";
	}
	return "?";
}

int kern_dtype_size(enum kern_dtype d)
{
	return d == KD_F32 ? 4 : 2;
}

static void layernorm_fwd(kstream *ks, void *out, float *mean, float *rstd,
			  const void *inp, const void *w, const void *b, long N,
			  long C, float eps)
{
	kern_layernorm_fwd(ks, out, mean, rstd, inp, w, b, N, C, eps);
}

static void layernorm_bwd(kstream *ks, void *dinp, float *dw, float *db,
			  const void *dout, const void *inp, const void *w,
			  const float *mean, const float *rstd, long N, long C)
{
	kern_layernorm_bwd(ks, dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}

static void rmsnorm_fwd(kstream *ks, void *out, float *rstd, const void *inp,
			const void *w, long N, long C, float eps)
{
	kern_rmsnorm_fwd(ks, out, rstd, inp, w, N, C, eps);
}

static void rmsnorm_bwd(kstream *ks, void *dinp, float *dw, const void *dout,
			const void *inp, const void *w, const float *rstd,
			long N, long C)
{
	kern_rmsnorm_bwd(ks, dinp, dw, dout, inp, w, rstd, N, C);
}

static void gelu_fwd(kstream *ks, void *out, const void *inp, long n)
{
	kern_gelu_fwd(ks, out, inp, n);
}

static void gelu_bwd(kstream *ks, void *dinp, const void *inp,
		     const void *dout, long n)
{
	kern_gelu_bwd(ks, dinp, inp, dout, n);
}

static void swiglu_fwd(kstream *ks, void *out, const void *inp, long N, long F)
{
	kern_swiglu_fwd(ks, out, inp, N, F);
}

static void swiglu_bwd(kstream *ks, void *dinp, const void *inp,
		       const void *dout, long N, long F)
{
	kern_swiglu_bwd(ks, dinp, inp, dout, N, F);
}

static void bias_add(kstream *ks, void *out, const void *bias, long N, long C)
{
	kern_bias_add(ks, out, bias, N, C);
}

static void bias_bwd(kstream *ks, float *dbias, const void *dout, long N, long C)
{
	kern_bias_bwd(ks, dbias, dout, N, C);
}

static void add(kstream *ks, void *out, const void *a, const void *b, long n)
{
	kern_add(ks, out, a, b, n);
}

static void acc(kstream *ks, void *dst, const void *src, long n)
{
	kern_acc(ks, dst, src, n);
}

static void qkv_split(kstream *ks, void *q, void *k, void *v, const void *qkv,
		      long B, long T, long H, long G, long D)
{
	kern_qkv_split(ks, q, k, v, qkv, B, T, H, G, D);
}

static void qkv_merge(kstream *ks, void *dqkv, const void *dq, const void *dk,
		      const void *dv, long B, long T, long H, long G, long D)
{
	kern_qkv_merge(ks, dqkv, dq, dk, dv, B, T, H, G, D);
}

static void heads_to_rows(kstream *ks, void *out, const void *inp, long B,
			  long T, long H, long D)
{
	kern_heads_to_rows(ks, out, inp, B, T, H, D);
}

static void rows_to_heads(kstream *ks, void *out, const void *inp, long B,
			  long T, long H, long D)
{
	kern_rows_to_heads(ks, out, inp, B, T, H, D);
}

static void softmax_fwd(kstream *ks, void *att, const void *scores, long BH,
			long Tq, long Tk, long q0, long k0, float scale)
{
	kern_softmax_causal_fwd(ks, att, scores, BH, Tq, Tk, q0, k0, scale);
}

static void softmax_bwd(kstream *ks, void *dscores, const void *datt,
			const void *att, long BH, long Tq, long Tk, float scale)
{
	kern_softmax_causal_bwd(ks, dscores, datt, att, BH, Tq, Tk, scale);
}

static void attention_fwd(kstream *ks, void *out, float *lse, const void *q,
			  const void *k, const void *v, long B, long H, long G,
			  long Tq, long Tk, long D, long q0, long k0, float scale)
{
	kern_attention_fwd(ks, out, lse, q, k, v, B, H, G, Tq, Tk, D, q0, k0, scale);
}

static void attention_bwd(kstream *ks, void *dq, void *dk, void *dv,
			  const void *dout, const void *out, const float *lse,
			  const void *q, const void *k, const void *v, long B,
			  long H, long G, long Tq, long Tk, long D, long q0,
			  long k0, float scale)
{
	kern_attention_bwd(ks, dq, dk, dv, dout, out, lse, q, k, v, B, H, G, Tq,
			   Tk, D, q0, k0, scale);
}

static void attention_merge(kstream *ks, void *out, float *lse, const void *o,
			    const float *l, long rows, long D)
{
	kern_attention_merge(ks, out, lse, o, l, rows, D);
}

static void embedding_fwd(kstream *ks, void *out, const int32_t *tokens,
			  const void *wte, long N, long C, long v0, long Vl)
{
	kern_embedding_fwd(ks, out, tokens, wte, N, C, v0, Vl);
}

static void embedding_bwd(kstream *ks, float *dwte, const void *dout,
			  const int32_t *tokens, long N, long C, long v0, long Vl)
{
	kern_embedding_bwd(ks, dwte, dout, tokens, N, C, v0, Vl);
}

static void position_fwd(kstream *ks, void *out, const void *wpe, long B,
			 long T, long C, long pos0)
{
	kern_position_fwd(ks, out, wpe, B, T, C, pos0);
}

static void position_bwd(kstream *ks, float *dwpe, const void *dout, long B,
			 long T, long C, long pos0)
{
	kern_position_bwd(ks, dwpe, dout, B, T, C, pos0);
}

static void xent_max(kstream *ks, float *rowmax, const void *logits, long N,
		     long Vl)
{
	kern_xent_max(ks, rowmax, logits, N, Vl);
}

static void xent_sums(kstream *ks, float *sumexp, float *tlogit,
		      const void *logits, const float *rowmax,
		      const int32_t *targets, long N, long Vl, long v0)
{
	kern_xent_sums(ks, sumexp, tlogit, logits, rowmax, targets, N, Vl, v0);
}

static void xent_loss_grad(kstream *ks, float *loss, void *dlogits,
			   const void *logits, const float *rowmax,
			   const float *sumexp, const float *tlogit,
			   const int32_t *targets, long N, long Vl, long v0,
			   float scale)
{
	kern_xent_loss_grad(ks, loss, dlogits, logits, rowmax, sumexp, tlogit,
			    targets, N, Vl, v0, scale);
}

static void adamw(kstream *ks, float *p, float *m, float *v, const float *g,
		  void *p_lp, long n, float lr, float beta1, float beta2,
		  float eps, float wd, long t, float gscale)
{
	kern_adamw(ks, p, m, v, g, p_lp, n, lr, beta1, beta2, eps, wd, t, gscale);
}

static void to_f32(kstream *ks, float *out, const void *in, long n)
{
	kern_to_f32(ks, out, in, n);
}

static void from_f32(kstream *ks, void *out, const float *in, long n)
{
	kern_from_f32(ks, out, in, n);
}

static const struct kern_ops cpu_ops = {
	.version = PPLAN_KERNELS_VERSION,
	.dtype = KD_F32,
	.layernorm_fwd = layernorm_fwd,
	.layernorm_bwd = layernorm_bwd,
	.rmsnorm_fwd = rmsnorm_fwd,
	.rmsnorm_bwd = rmsnorm_bwd,
	.gelu_fwd = gelu_fwd,
	.gelu_bwd = gelu_bwd,
	.swiglu_fwd = swiglu_fwd,
	.swiglu_bwd = swiglu_bwd,
	.bias_add = bias_add,
	.bias_bwd = bias_bwd,
	.add = add,
	.acc = acc,
	.qkv_split = qkv_split,
	.qkv_merge = qkv_merge,
	.heads_to_rows = heads_to_rows,
	.rows_to_heads = rows_to_heads,
	.softmax_causal_fwd = softmax_fwd,
	.softmax_causal_bwd = softmax_bwd,
	.attention_fwd = attention_fwd,
	.attention_bwd = attention_bwd,
	.attention_merge = attention_merge,
	.embedding_fwd = embedding_fwd,
	.embedding_bwd = embedding_bwd,
	.position_fwd = position_fwd,
	.position_bwd = position_bwd,
	.xent_max = xent_max,
	.xent_sums = xent_sums,
	.xent_loss_grad = xent_loss_grad,
	.adamw = adamw,
	.sumsq = kern_sumsq,
	.scale = kern_scale,
	.to_f32 = to_f32,
	.from_f32 = from_f32,
};

const struct kern_ops *kern_cpu_ops(void)
{
	return &cpu_ops;
}
