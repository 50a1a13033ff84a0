/*
 * kernels.h: the executor's compute kernels behind one C table.
 *
 * Every kernel exists twice with one parameter list: a plain C version
 * (kernels/cpu_*.c, always built, fp32) that is the oracle in tests, and
 * a CUDA version in the dlopened CUDA module (kernels/ CUDA sources) that runs on
 * the stream it is given.  The executor never calls either directly: it
 * calls the table of its backend (exec/backend.h), so no call site knows
 * which one runs.
 *
 * Conventions (llm.c's): tensors are row-major and contiguous; shapes in
 * the comments name the dimensions, N = tokens (rows), C = channels.
 * "Activation" tensors (inputs, outputs, weights used in compute) are of
 * the table's dtype (`struct kern_ops.dtype`: fp32 on the CPU, bf16, fp16
 * or fp32 on CUDA) and passed as void pointers; math is fp32 inside.
 * Gradients of parameters, norm statistics, losses and optimizer states
 * are always fp32 (float *), reductions accumulate in fp32 or better.
 * A kernel that "accumulates" adds into its output (+=); otherwise it
 * overwrites.  Pointers are device pointers of the backend; `ks` is the
 * backend's stream (NULL on the CPU).  Kernels allocate nothing.
 *
 * Attention is causal.  Blocks may be offset (context parallelism): query
 * row i has absolute position q0 + i, key column j has k0 + j, and a key
 * is visible when k0 + j <= q0 + i.  A row that sees no key gives zeros
 * (and lse = -INFINITY).  GQA: query head h reads KV head h / (H / G).
 */
#ifndef PPLAN_KERNELS_H
#define PPLAN_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PPLAN_KERNELS_VERSION 1

enum kern_dtype { KD_F32 = 0, KD_BF16, KD_F16 };

const char *kern_dtype_name(enum kern_dtype dtype);
int kern_dtype_size(enum kern_dtype dtype);

typedef void kstream; /* a backend's stream; NULL on the CPU */

struct kern_ops {
	int version;            /* PPLAN_KERNELS_VERSION */
	enum kern_dtype dtype;  /* of every void * tensor below */

	/* ---- norms ---- */
	/* out (N,C) = (inp - mean) * rstd * w + b; mean, rstd (N) saved. */
	void (*layernorm_fwd)(kstream *ks, void *out, float *mean, float *rstd,
			      const void *inp, const void *w, const void *b,
			      long N, long C, float eps);
	/* dinp (N,C) accumulates; dw, db (C) accumulate. */
	void (*layernorm_bwd)(kstream *ks, void *dinp, float *dw, float *db,
			      const void *dout, const void *inp, const void *w,
			      const float *mean, const float *rstd, long N, long C);
	/* out (N,C) = inp * rstd * w, rstd = 1/sqrt(mean(inp^2) + eps). */
	void (*rmsnorm_fwd)(kstream *ks, void *out, float *rstd, const void *inp,
			    const void *w, long N, long C, float eps);
	/* dinp (N,C) accumulates; dw (C) accumulates. */
	void (*rmsnorm_bwd)(kstream *ks, void *dinp, float *dw, const void *dout,
			    const void *inp, const void *w, const float *rstd,
			    long N, long C);

	/* ---- MLP activations ---- */
	/* out = gelu(inp) (tanh approximation), n elements. */
	void (*gelu_fwd)(kstream *ks, void *out, const void *inp, long n);
	/* dinp = dout * gelu'(inp); dinp may alias dout. */
	void (*gelu_bwd)(kstream *ks, void *dinp, const void *inp,
			 const void *dout, long n);
	/* inp (N, 2F): each row is [gate (F) | up (F)]; out (N,F) =
	 * silu(gate) * up. */
	void (*swiglu_fwd)(kstream *ks, void *out, const void *inp, long N, long F);
	/* dinp (N, 2F) from dout (N,F). */
	void (*swiglu_bwd)(kstream *ks, void *dinp, const void *inp,
			   const void *dout, long N, long F);

	/* ---- element-wise ---- */
	/* out (N,C) += bias (C). */
	void (*bias_add)(kstream *ks, void *out, const void *bias, long N, long C);
	/* dbias (C) accumulates the column sums of dout (N,C). */
	void (*bias_bwd)(kstream *ks, float *dbias, const void *dout, long N, long C);
	/* out = a + b, n elements; out may alias a or b. */
	void (*add)(kstream *ks, void *out, const void *a, const void *b, long n);
	/* dst += src, n elements. */
	void (*acc)(kstream *ks, void *dst, const void *src, long n);

	/* ---- attention layout ---- */
	/* qkv (B,T,(H+2G)*D), each row [q heads | k heads | v heads] ->
	 * q (B,H,T,D), k (B,G,T,D), v (B,G,T,D). */
	void (*qkv_split)(kstream *ks, void *q, void *k, void *v, const void *qkv,
			  long B, long T, long H, long G, long D);
	/* The inverse: dqkv (B,T,(H+2G)*D) from dq, dk, dv. */
	void (*qkv_merge)(kstream *ks, void *dqkv, const void *dq, const void *dk,
			  const void *dv, long B, long T, long H, long G, long D);
	/* inp (B,H,T,D) -> out (B,T,H*D). */
	void (*heads_to_rows)(kstream *ks, void *out, const void *inp, long B,
			      long T, long H, long D);
	/* inp (B,T,H*D) -> out (B,H,T,D). */
	void (*rows_to_heads)(kstream *ks, void *out, const void *inp, long B,
			      long T, long H, long D);

	/* ---- attention core, three steps (scores by GEMM) ---- */
	/* att (BH,Tq,Tk) = causal softmax over k of scale * scores; masked
	 * entries 0; att may alias scores. */
	void (*softmax_causal_fwd)(kstream *ks, void *att, const void *scores,
				   long BH, long Tq, long Tk, long q0, long k0,
				   float scale);
	/* dscores = scale * att * (datt - rowsum(datt * att)); may alias datt. */
	void (*softmax_causal_bwd)(kstream *ks, void *dscores, const void *datt,
				   const void *att, long BH, long Tq, long Tk,
				   float scale);

	/* ---- attention core, fused (flash-style on CUDA; a plain loop on
	 * the CPU, the oracle) ---- */
	/* out (B,H,Tq,D), lse (B,H,Tq) = log sum exp of the scaled scores. */
	void (*attention_fwd)(kstream *ks, void *out, float *lse, const void *q,
			      const void *k, const void *v, long B, long H, long G,
			      long Tq, long Tk, long D, long q0, long k0,
			      float scale);
	/* dq (B,H,Tq,D), dk, dv (B,G,Tk,D) overwritten. */
	void (*attention_bwd)(kstream *ks, void *dq, void *dk, void *dv,
			      const void *dout, const void *out, const float *lse,
			      const void *q, const void *k, const void *v, long B,
			      long H, long G, long Tq, long Tk, long D, long q0,
			      long k0, float scale);
	/* Ring attention's merge of one more key block into a partial
	 * result: rows (of D values) of out with log-sum-exp lse, and o, l
	 * of the new block: lse' = log(e^lse + e^l), out' = out e^(lse-lse')
	 * + o e^(l-lse').  A row with l = -INFINITY is left as it is. */
	void (*attention_merge)(kstream *ks, void *out, float *lse, const void *o,
				const float *l, long rows, long D);

	/* ---- embeddings (vocabulary-parallel: this shard holds rows
	 * [v0, v0 + Vl) of the table) ---- */
	/* out (N,C) = wte[tok - v0] for tokens in the shard, else 0. */
	void (*embedding_fwd)(kstream *ks, void *out, const int32_t *tokens,
			      const void *wte, long N, long C, long v0, long Vl);
	/* dwte (Vl,C) accumulates dout rows of the shard's tokens. */
	void (*embedding_bwd)(kstream *ks, float *dwte, const void *dout,
			      const int32_t *tokens, long N, long C, long v0, long Vl);
	/* out (B,T,C) += wpe rows pos0 .. pos0+T-1 (learned positions). */
	void (*position_fwd)(kstream *ks, void *out, const void *wpe, long B,
			     long T, long C, long pos0);
	/* dwpe rows pos0 .. accumulate the sums over B of dout (B,T,C). */
	void (*position_bwd)(kstream *ks, float *dwpe, const void *dout, long B,
			     long T, long C, long pos0);

	/* ---- cross-entropy over a vocabulary-parallel logits shard ----
	 * logits (N,Vl) hold vocabulary [v0, v0+Vl).  Three kernels around
	 * two all-reduces over the tensor-parallel group (Megatron's
	 * vocab_parallel_cross_entropy): the row max (MAX), then the sums
	 * (SUM) of exp and of the target's logit. */
	/* rowmax (N) = max over the shard. */
	void (*xent_max)(kstream *ks, float *rowmax, const void *logits, long N,
			 long Vl);
	/* sumexp (N) = sum exp(logit - rowmax); tlogit (N) = the target's
	 * logit - rowmax where the target is in the shard, else 0. */
	void (*xent_sums)(kstream *ks, float *sumexp, float *tlogit,
			  const void *logits, const float *rowmax,
			  const int32_t *targets, long N, long Vl, long v0);
	/* loss (N) = log(sumexp) - tlogit; dlogits (N,Vl) = scale *
	 * (softmax - onehot(target)); dlogits may alias logits. */
	void (*xent_loss_grad)(kstream *ks, float *loss, void *dlogits,
			       const void *logits, const float *rowmax,
			       const float *sumexp, const float *tlogit,
			       const int32_t *targets, long N, long Vl, long v0,
			       float scale);

	/* ---- optimizer and reductions (fp32) ---- */
	/* AdamW step t (from 1) on n parameters: g is scaled by gscale
	 * (clipping), p -= lr * (mhat / (sqrt(vhat) + eps) + wd * p); the
	 * compute copy p_lp (table dtype) is written when not NULL. */
	void (*adamw)(kstream *ks, float *p, float *m, float *v, const float *g,
		      void *p_lp, long n, float lr, float beta1, float beta2,
		      float eps, float wd, long t, float gscale);
	/* *out (one double, device memory) += sum of x[i]^2. */
	void (*sumsq)(kstream *ks, double *out, const float *x, long n);
	/* x *= a. */
	void (*scale)(kstream *ks, float *x, float a, long n);
	/* Conversions between the table dtype and fp32. */
	void (*to_f32)(kstream *ks, float *out, const void *in, long n);
	void (*from_f32)(kstream *ks, void *out, const float *in, long n);
};

/* The CPU table (fp32), always built. */
const struct kern_ops *kern_cpu_ops(void);

/* bf16 <-> fp32 on the host, round to nearest even (tests and the CPU
 * side of the CUDA backend). */
uint16_t kern_f32_to_bf16(float x);
float kern_bf16_to_f32(uint16_t x);

#ifdef __cplusplus
}
#endif

#endif
