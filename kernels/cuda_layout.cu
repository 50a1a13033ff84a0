/*
 * cuda_layout.cu: the layout changes around the attention core and the
 * causal softmax of the three-step attention (kernels.h; CPU twins in
 * kernels/cpu_attn.c).  Layout kernels walk the destination (or the
 * packed qkv rows) one element per thread; the softmax is one block per
 * row of scores.
 */
#include "cuda_common.cuh"

/* qkv (B,T,(H+2G)D) <-> q (B,H,T,D), k and v (B,G,T,D); merge 0 splits,
 * 1 merges.  One thread per element of a qkv row. */
template <typename T, int MERGE>
__global__ void qkv_k(T *qkv, T *q, T *k, T *v, long B, long T_, long H,
		      long G, long D)
{
	long W = (H + 2 * G) * D;
	KCU_FOR(i, B * T_ * W) {
		long bt = i / W, c = i % W, b = bt / T_, t = bt % T_;
		long head = c / D, d = c % D;
		T *p;
		if (head < H)
			p = q + ((b * H + head) * T_ + t) * D + d;
		else if (head < H + G)
			p = k + ((b * G + head - H) * T_ + t) * D + d;
		else
			p = v + ((b * G + head - H - G) * T_ + t) * D + d;
		if (MERGE)
			qkv[i] = *p;
		else
			*p = qkv[i];
	}
}

/* (B,H,T,D) <-> (B,T,H*D); TO_ROWS 1: heads to rows.  One thread per
 * element of the rows tensor. */
template <typename T, int TO_ROWS>
__global__ void heads_k(T *rows, T *heads, long B, long T_, long H, long D)
{
	long HD = H * D;
	KCU_FOR(i, B * T_ * HD) {
		long bt = i / HD, c = i % HD, b = bt / T_, t = bt % T_;
		long h = c / D, d = c % D;
		long j = ((b * H + h) * T_ + t) * D + d;
		if (TO_ROWS)
			rows[i] = heads[j];
		else
			heads[j] = rows[i];
	}
}

/* One block per row (bh, i): softmax over the keys j with k0 + j <= q0 + i
 * of scale * scores, zeros elsewhere.  Each element is read and written by
 * one thread, after the block's reductions: att may alias scores. */
template <typename T>
__global__ void softmax_fwd_k(T *att, const T *scores, long Tq, long Tk, long q0,
			      long k0, float scale)
{
	__shared__ float sh[32];
	long row = blockIdx.x, i = row % Tq;
	const T *s = scores + row * Tk;
	T *a = att + row * Tk;
	long last = q0 + i - k0;
	float mx = -INFINITY, sum = 0;
	if (last >= Tk)
		last = Tk - 1;
	for (long j = threadIdx.x; j <= last; j += blockDim.x)
		mx = fmaxf(mx, scale * ld(s + j));
	mx = block_max(mx, sh);
	for (long j = threadIdx.x; j <= last; j += blockDim.x)
		sum += expf(scale * ld(s + j) - mx);
	sum = block_sum(sum, sh);
	for (long j = threadIdx.x; j < Tk; j += blockDim.x)
		st(a + j, j <= last ? expf(scale * ld(s + j) - mx) / sum : 0.0f);
}

/* dscores = scale * att * (datt - rowsum(datt * att)); may alias datt. */
template <typename T>
__global__ void softmax_bwd_k(T *dscores, const T *datt, const T *att, long Tk,
			      float scale)
{
	__shared__ float sh[32];
	long off = (long)blockIdx.x * Tk;
	float dot = 0;
	for (long j = threadIdx.x; j < Tk; j += blockDim.x)
		dot += ld(datt + off + j) * ld(att + off + j);
	dot = block_sum(dot, sh);
	for (long j = threadIdx.x; j < Tk; j += blockDim.x) {
		float a = ld(att + off + j);
		st(dscores + off + j, scale * a * (ld(datt + off + j) - dot));
	}
}

/* ---- the table's entries ---------------------------------------------- */

template <typename T>
static void qkv_split(kstream *ks, void *q, void *k, void *v, const void *qkv,
		      long B, long T_, long H, long G, long D)
{
	long n = B * T_ * (H + 2 * G) * D;
	if (n > 0)
		qkv_k<T, 0><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)qkv, (T *)q, (T *)k, (T *)v, B, T_, H, G, D);
}

template <typename T>
static void qkv_merge(kstream *ks, void *dqkv, const void *dq, const void *dk,
		      const void *dv, long B, long T_, long H, long G, long D)
{
	long n = B * T_ * (H + 2 * G) * D;
	if (n > 0)
		qkv_k<T, 1><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)dqkv, (T *)dq, (T *)dk, (T *)dv, B, T_, H, G, D);
}

template <typename T>
static void heads_to_rows(kstream *ks, void *out, const void *inp, long B,
			  long T_, long H, long D)
{
	long n = B * T_ * H * D;
	if (n > 0)
		heads_k<T, 1><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, (T *)inp, B, T_, H, D);
}

template <typename T>
static void rows_to_heads(kstream *ks, void *out, const void *inp, long B,
			  long T_, long H, long D)
{
	long n = B * T_ * H * D;
	if (n > 0)
		heads_k<T, 0><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)inp, (T *)out, B, T_, H, D);
}

template <typename T>
static void softmax_causal_fwd(kstream *ks, void *att, const void *scores,
			       long BH, long Tq, long Tk, long q0, long k0,
			       float scale)
{
	if (BH * Tq > 0 && Tk > 0)
		softmax_fwd_k<T><<<(unsigned)(BH * Tq), kcu_row_threads(Tk), 0,
				   kcu_stream(ks)>>>((T *)att, (const T *)scores, Tq,
						     Tk, q0, k0, scale);
}

template <typename T>
static void softmax_causal_bwd(kstream *ks, void *dscores, const void *datt,
			       const void *att, long BH, long Tq, long Tk,
			       float scale)
{
	if (BH * Tq > 0 && Tk > 0)
		softmax_bwd_k<T><<<(unsigned)(BH * Tq), kcu_row_threads(Tk), 0,
				   kcu_stream(ks)>>>((T *)dscores, (const T *)datt,
						     (const T *)att, Tk, scale);
}

void kcu_fill_layout(struct kern_ops *o)
{
	KCU_PICK(o, qkv_split, qkv_split);
	KCU_PICK(o, qkv_merge, qkv_merge);
	KCU_PICK(o, heads_to_rows, heads_to_rows);
	KCU_PICK(o, rows_to_heads, rows_to_heads);
	KCU_PICK(o, softmax_causal_fwd, softmax_causal_fwd);
	KCU_PICK(o, softmax_causal_bwd, softmax_causal_bwd);
}
