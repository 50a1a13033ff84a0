/*
 * cuda_embed.cu: vocabulary-parallel token embedding, learned positions
 * and the vocabulary-parallel cross-entropy of kernels.h (CPU twins in
 * kernels/cpu_embed.c).  The embedding gradient has no atomics: a block
 * owns KCU_EMB_ROWS rows of the table and a slice of the columns and
 * walks every token in order, adding the rows of its own tokens, so a
 * repeated token's sum is the same, to the bit, in every run; the
 * cross-entropy kernels are one block per row of logits.
 */
#include "cuda_common.cuh"

template <typename T>
__global__ void embedding_fwd_k(T *out, const int32_t *tokens, const T *wte,
				long N, long C, long v0, long Vl)
{
	KCU_FOR(i, N * C) {
		long n = i / C, c = i % C, t = (long)tokens[n] - v0;
		st(out + i, t >= 0 && t < Vl ? ld(wte + t * C + c) : 0.0f);
	}
}

#define KCU_EMB_ROWS 256   /* table rows a block owns */
#define KCU_EMB_STAGE 1024 /* tokens staged in shared memory at a time */

/* Grid (column slices, row ranges): thread x owns column c of rows
 * [r0, r0 + KCU_EMB_ROWS) and adds the tokens' rows in token order. */
template <typename T>
__global__ void embedding_bwd_k(float *dwte, const T *dout, const int32_t *tokens,
				long N, long C, long v0, long Vl)
{
	__shared__ int32_t tk[KCU_EMB_STAGE];
	long c = (long)blockIdx.x * blockDim.x + threadIdx.x;
	long r0 = (long)blockIdx.y * KCU_EMB_ROWS, r1 = r0 + KCU_EMB_ROWS;
	if (r1 > Vl)
		r1 = Vl;
	for (long n0 = 0; n0 < N; n0 += KCU_EMB_STAGE) {
		long m = N - n0 < KCU_EMB_STAGE ? N - n0 : KCU_EMB_STAGE;
		__syncthreads();
		for (long i = threadIdx.x; i < m; i += blockDim.x)
			tk[i] = tokens[n0 + i];
		__syncthreads();
		if (c >= C)
			continue;
		for (long i = 0; i < m; i++) {
			long t = (long)tk[i] - v0;
			if (t >= r0 && t < r1)
				dwte[t * C + c] += ld(dout + (n0 + i) * C + c);
		}
	}
}

template <typename T>
__global__ void position_fwd_k(T *out, const T *wpe, long B, long T_, long C,
			       long pos0)
{
	long TC = T_ * C;
	KCU_FOR(i, B * TC)
		st(out + i, ld(out + i) + ld(wpe + pos0 * C + i % TC));
}

/* One thread per (t, c): the sum over the batch, in order. */
template <typename T>
__global__ void position_bwd_k(float *dwpe, const T *dout, long B, long T_,
			       long C, long pos0)
{
	long TC = T_ * C;
	KCU_FOR(i, TC) {
		float s = 0;
		for (long b = 0; b < B; b++)
			s += ld(dout + b * TC + i);
		dwpe[pos0 * C + i] += s;
	}
}

template <typename T>
__global__ void xent_max_k(float *rowmax, const T *logits, long Vl)
{
	__shared__ float sh[32];
	const T *z = logits + blockIdx.x * Vl;
	float m = -INFINITY;
	for (long j = threadIdx.x; j < Vl; j += blockDim.x)
		m = fmaxf(m, ld(z + j));
	m = block_max(m, sh);
	if (threadIdx.x == 0)
		rowmax[blockIdx.x] = m;
}

template <typename T>
__global__ void xent_sums_k(float *sumexp, float *tlogit, const T *logits,
			    const float *rowmax, const int32_t *targets, long Vl,
			    long v0)
{
	__shared__ float sh[32];
	long n = blockIdx.x, t = (long)targets[n] - v0;
	const T *z = logits + n * Vl;
	float mx = rowmax[n], s = 0;
	for (long j = threadIdx.x; j < Vl; j += blockDim.x)
		s += expf(ld(z + j) - mx);
	s = block_sum(s, sh);
	if (threadIdx.x == 0) {
		sumexp[n] = s;
		tlogit[n] = t >= 0 && t < Vl ? ld(z + t) - mx : 0.0f;
	}
}

/* Each logit is read, then its gradient written, by one thread: dlogits
 * may alias logits. */
template <typename T>
__global__ void xent_loss_grad_k(float *loss, T *dlogits, const T *logits,
				 const float *rowmax, const float *sumexp,
				 const float *tlogit, const int32_t *targets,
				 long Vl, long v0, float scale)
{
	long n = blockIdx.x, t = (long)targets[n] - v0;
	float mx = rowmax[n], inv = 1.0f / sumexp[n];
	if (threadIdx.x == 0)
		loss[n] = logf(sumexp[n]) - tlogit[n];
	for (long j = threadIdx.x; j < Vl; j += blockDim.x) {
		float p = expf(ld(logits + n * Vl + j) - mx) * inv;
		st(dlogits + n * Vl + j, scale * (p - (j == t ? 1.0f : 0.0f)));
	}
}

/* ---- the table's entries ---------------------------------------------- */

template <typename T>
static void embedding_fwd(kstream *ks, void *out, const int32_t *tokens,
			  const void *wte, long N, long C, long v0, long Vl)
{
	if (N > 0 && C > 0)
		embedding_fwd_k<T><<<kcu_blocks(N * C), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, tokens, (const T *)wte, N, C, v0, Vl);
}

template <typename T>
static void embedding_bwd(kstream *ks, float *dwte, const void *dout,
			  const int32_t *tokens, long N, long C, long v0, long Vl)
{
	long ranges = (Vl + KCU_EMB_ROWS - 1) / KCU_EMB_ROWS;
	if (N <= 0 || C <= 0 || Vl <= 0)
		return;
	if (ranges > 65535) {
		kcu_fail("embedding_bwd: a shard of %ld rows exceeds the grid (at most %ld)",
			 Vl, 65535L * KCU_EMB_ROWS);
		return;
	}
	embedding_bwd_k<T><<<dim3((unsigned)((C + KCU_THREADS - 1) / KCU_THREADS), (unsigned)ranges),
			     KCU_THREADS, 0, kcu_stream(ks)>>>(dwte, (const T *)dout, tokens,
							     N, C, v0, Vl);
}

template <typename T>
static void position_fwd(kstream *ks, void *out, const void *wpe, long B,
			 long T_, long C, long pos0)
{
	if (B * T_ * C > 0)
		position_fwd_k<T><<<kcu_blocks(B * T_ * C), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, (const T *)wpe, B, T_, C, pos0);
}

template <typename T>
static void position_bwd(kstream *ks, float *dwpe, const void *dout, long B,
			 long T_, long C, long pos0)
{
	if (B * T_ * C > 0)
		position_bwd_k<T><<<kcu_blocks(T_ * C), KCU_THREADS, 0, kcu_stream(ks)>>>(
			dwpe, (const T *)dout, B, T_, C, pos0);
}

template <typename T>
static void xent_max(kstream *ks, float *rowmax, const void *logits, long N,
		     long Vl)
{
	if (N > 0 && Vl > 0)
		xent_max_k<T><<<(unsigned)N, kcu_row_threads(Vl), 0, kcu_stream(ks)>>>(
			rowmax, (const T *)logits, Vl);
}

template <typename T>
static void xent_sums(kstream *ks, float *sumexp, float *tlogit,
		      const void *logits, const float *rowmax,
		      const int32_t *targets, long N, long Vl, long v0)
{
	if (N > 0 && Vl > 0)
		xent_sums_k<T><<<(unsigned)N, kcu_row_threads(Vl), 0, kcu_stream(ks)>>>(
			sumexp, tlogit, (const T *)logits, rowmax, targets, Vl, v0);
}

template <typename T>
static void xent_loss_grad(kstream *ks, float *loss, void *dlogits,
			   const void *logits, const float *rowmax,
			   const float *sumexp, const float *tlogit,
			   const int32_t *targets, long N, long Vl, long v0,
			   float scale)
{
	if (N > 0 && Vl > 0)
		xent_loss_grad_k<T><<<(unsigned)N, kcu_row_threads(Vl), 0, kcu_stream(ks)>>>(
			loss, (T *)dlogits, (const T *)logits, rowmax, sumexp, tlogit,
			targets, Vl, v0, scale);
}

void kcu_fill_embed(struct kern_ops *o)
{
	KCU_PICK(o, embedding_fwd, embedding_fwd);
	KCU_PICK(o, embedding_bwd, embedding_bwd);
	KCU_PICK(o, position_fwd, position_fwd);
	KCU_PICK(o, position_bwd, position_bwd);
	KCU_PICK(o, xent_max, xent_max);
	KCU_PICK(o, xent_sums, xent_sums);
	KCU_PICK(o, xent_loss_grad, xent_loss_grad);
}
