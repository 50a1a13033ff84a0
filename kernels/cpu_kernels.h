/*
 * cpu_kernels.h: the CPU twins of kernels.h, with fp32 types.  Same
 * parameters in the same order as the table's entries; kern_cpu_ops()
 * puts them behind the table.  Tests call these directly as the oracle.
 */
#ifndef PPLAN_CPU_KERNELS_H
#define PPLAN_CPU_KERNELS_H

#include "kernels.h"

void kern_layernorm_fwd(kstream *ks, float *out, float *mean, float *rstd,
			const float *inp, const float *w, const float *b,
			long N, long C, float eps);
void kern_layernorm_bwd(kstream *ks, float *dinp, float *dw, float *db,
			const float *dout, const float *inp, const float *w,
			const float *mean, const float *rstd, long N, long C);
void kern_rmsnorm_fwd(kstream *ks, float *out, float *rstd, const float *inp,
		      const float *w, long N, long C, float eps);
void kern_rmsnorm_bwd(kstream *ks, float *dinp, float *dw, const float *dout,
		      const float *inp, const float *w, const float *rstd,
		      long N, long C);
void kern_gelu_fwd(kstream *ks, float *out, const float *inp, long n);
void kern_gelu_bwd(kstream *ks, float *dinp, const float *inp,
		   const float *dout, long n);
void kern_swiglu_fwd(kstream *ks, float *out, const float *inp, long N, long F);
void kern_swiglu_bwd(kstream *ks, float *dinp, const float *inp,
		     const float *dout, long N, long F);
void kern_bias_add(kstream *ks, float *out, const float *bias, long N, long C);
void kern_bias_bwd(kstream *ks, float *dbias, const float *dout, long N, long C);
void kern_add(kstream *ks, float *out, const float *a, const float *b, long n);
void kern_acc(kstream *ks, float *dst, const float *src, long n);
void kern_qkv_split(kstream *ks, float *q, float *k, float *v, const float *qkv,
		    long B, long T, long H, long G, long D);
void kern_qkv_merge(kstream *ks, float *dqkv, const float *dq, const float *dk,
		    const float *dv, long B, long T, long H, long G, long D);
void kern_heads_to_rows(kstream *ks, float *out, const float *inp, long B,
			long T, long H, long D);
void kern_rows_to_heads(kstream *ks, float *out, const float *inp, long B,
			long T, long H, long D);
void kern_softmax_causal_fwd(kstream *ks, float *att, const float *scores,
			     long BH, long Tq, long Tk, long q0, long k0,
			     float scale);
void kern_softmax_causal_bwd(kstream *ks, float *dscores, const float *datt,
			     const float *att, long BH, long Tq, long Tk,
			     float scale);
void kern_attention_fwd(kstream *ks, float *out, float *lse, const float *q,
			const float *k, const float *v, long B, long H, long G,
			long Tq, long Tk, long D, long q0, long k0, float scale);
void kern_attention_bwd(kstream *ks, float *dq, float *dk, float *dv,
			const float *dout, const float *out, const float *lse,
			const float *q, const float *k, const float *v, long B,
			long H, long G, long Tq, long Tk, long D, long q0, long k0,
			float scale);
void kern_attention_merge(kstream *ks, float *out, float *lse, const float *o,
			  const float *l, long rows, long D);
void kern_embedding_fwd(kstream *ks, float *out, const int32_t *tokens,
			const float *wte, long N, long C, long v0, long Vl);
void kern_embedding_bwd(kstream *ks, float *dwte, const float *dout,
			const int32_t *tokens, long N, long C, long v0, long Vl);
void kern_position_fwd(kstream *ks, float *out, const float *wpe, long B,
		       long T, long C, long pos0);
void kern_position_bwd(kstream *ks, float *dwpe, const float *dout, long B,
		       long T, long C, long pos0);
void kern_xent_max(kstream *ks, float *rowmax, const float *logits, long N,
		   long Vl);
void kern_xent_sums(kstream *ks, float *sumexp, float *tlogit,
		    const float *logits, const float *rowmax,
		    const int32_t *targets, long N, long Vl, long v0);
void kern_xent_loss_grad(kstream *ks, float *loss, float *dlogits,
			 const float *logits, const float *rowmax,
			 const float *sumexp, const float *tlogit,
			 const int32_t *targets, long N, long Vl, long v0,
			 float scale);
void kern_adamw(kstream *ks, float *p, float *m, float *v, const float *g,
		float *p_lp, long n, float lr, float beta1, float beta2,
		float eps, float wd, long t, float gscale);
void kern_sumsq(kstream *ks, double *out, const float *x, long n);
void kern_scale(kstream *ks, float *x, float a, long n);
void kern_to_f32(kstream *ks, float *out, const float *in, long n);
void kern_from_f32(kstream *ks, float *out, const float *in, long n);

#endif
