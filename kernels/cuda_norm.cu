/*
 * cuda_norm.cu: LayerNorm and RMSNorm forward and backward, and the
 * column sums behind their weight gradients and bias_bwd (kernels.h; the
 * CPU twins are kernels/cpu_norm.c and cpu_act.c).
 *
 * Forward and the input gradient: one block per row, statistics reduced
 * over the block in fp32.  Weight gradients sum over rows: a block owns
 * 32 columns and every row, its 16 warps take every 16th row and their
 * sums are added in warp order, so a column's sum is the same, to the
 * bit, in every run (no atomics).
 */
#include "cuda_common.cuh"

#define KCU_COL_WARPS 16

enum { COL_PLAIN = 0, COL_LN = 1, COL_RMS = 2 };

template <typename T>
__global__ void layernorm_fwd_k(T *out, float *mean, float *rstd, const T *inp,
				const T *w, const T *b, long C, float eps)
{
	__shared__ float sh[32];
	const T *x = inp + blockIdx.x * C;
	T *y = out + blockIdx.x * C;
	float s = 0, ss = 0;
	for (long c = threadIdx.x; c < C; c += blockDim.x)
		s += ld(x + c);
	float mu = block_sum(s, sh) / (float)C;
	for (long c = threadIdx.x; c < C; c += blockDim.x) {
		float d = ld(x + c) - mu;
		ss += d * d;
	}
	float r = 1.0f / sqrtf(block_sum(ss, sh) / (float)C + eps);
	for (long c = threadIdx.x; c < C; c += blockDim.x)
		st(y + c, (ld(x + c) - mu) * r * ld(w + c) + (b ? ld(b + c) : 0.0f));
	if (threadIdx.x == 0) {
		mean[blockIdx.x] = mu;
		rstd[blockIdx.x] = r;
	}
}

/* dx = r (g - mean(g) - xhat mean(g xhat)), g = dy w; accumulates. */
template <typename T>
__global__ void layernorm_dx_k(T *dinp, const T *dout, const T *inp, const T *w,
			       const float *mean, const float *rstd, long C)
{
	__shared__ float sh[32];
	long n = blockIdx.x;
	const T *dy = dout + n * C, *x = inp + n * C;
	T *dx = dinp + n * C;
	float mu = mean[n], r = rstd[n], m1 = 0, m2 = 0;
	for (long c = threadIdx.x; c < C; c += blockDim.x) {
		float g = ld(dy + c) * ld(w + c);
		m1 += g;
		m2 += g * (ld(x + c) - mu) * r;
	}
	m1 = block_sum(m1, sh) / (float)C;
	m2 = block_sum(m2, sh) / (float)C;
	for (long c = threadIdx.x; c < C; c += blockDim.x) {
		float g = ld(dy + c) * ld(w + c), xh = (ld(x + c) - mu) * r;
		st(dx + c, ld(dx + c) + r * (g - m1 - xh * m2));
	}
}

template <typename T>
__global__ void rmsnorm_fwd_k(T *out, float *rstd, const T *inp, const T *w,
			      long C, float eps)
{
	__shared__ float sh[32];
	const T *x = inp + blockIdx.x * C;
	T *y = out + blockIdx.x * C;
	float ss = 0;
	for (long c = threadIdx.x; c < C; c += blockDim.x) {
		float v = ld(x + c);
		ss += v * v;
	}
	float r = 1.0f / sqrtf(block_sum(ss, sh) / (float)C + eps);
	for (long c = threadIdx.x; c < C; c += blockDim.x)
		st(y + c, ld(x + c) * r * ld(w + c));
	if (threadIdx.x == 0)
		rstd[blockIdx.x] = r;
}

/* dx = r (g - x r^2 mean(g x)), g = dy w; accumulates. */
template <typename T>
__global__ void rmsnorm_dx_k(T *dinp, const T *dout, const T *inp, const T *w,
			     const float *rstd, long C)
{
	__shared__ float sh[32];
	long n = blockIdx.x;
	const T *dy = dout + n * C, *x = inp + n * C;
	T *dx = dinp + n * C;
	float r = rstd[n], m = 0;
	for (long c = threadIdx.x; c < C; c += blockDim.x)
		m += ld(dy + c) * ld(w + c) * ld(x + c);
	m = block_sum(m, sh) / (float)C;
	for (long c = threadIdx.x; c < C; c += blockDim.x) {
		float g = ld(dy + c) * ld(w + c);
		st(dx + c, ld(dx + c) + r * (g - ld(x + c) * r * r * m));
	}
}

/* da[c] += sum over rows of the term of MODE; db[c] += sum of dy (COL_LN).
 * Block (32, KCU_COL_WARPS): x walks columns (coalesced), y rows; one
 * block per 32 columns, so the order of the additions is fixed. */
template <typename T, int MODE>
__global__ void colsum_k(float *da, float *db, const T *dout, const T *inp,
			 const float *mean, const float *rstd, long N, long C)
{
	__shared__ float sa[KCU_COL_WARPS][33], sb[KCU_COL_WARPS][33];
	long c = (long)blockIdx.x * 32 + threadIdx.x;
	float a = 0, b = 0;
	if (c < C)
		for (long n = threadIdx.y; n < N; n += KCU_COL_WARPS) {
			float dy = ld(dout + n * C + c);
			if (MODE == COL_PLAIN)
				a += dy;
			else if (MODE == COL_LN) {
				a += dy * (ld(inp + n * C + c) - mean[n]) * rstd[n];
				b += dy;
			} else
				a += dy * ld(inp + n * C + c) * rstd[n];
		}
	sa[threadIdx.y][threadIdx.x] = a;
	sb[threadIdx.y][threadIdx.x] = b;
	__syncthreads();
	if (threadIdx.y != 0 || c >= C)
		return;
	for (int y = 1; y < KCU_COL_WARPS; y++) {
		a += sa[y][threadIdx.x];
		b += sb[y][threadIdx.x];
	}
	da[c] += a;
	if (MODE == COL_LN && db)
		db[c] += b;
}

template <typename T, int MODE>
static void colsum(cudaStream_t s, float *da, float *db, const T *dout,
		   const T *inp, const float *mean, const float *rstd, long N, long C)
{
	if (N <= 0 || C <= 0)
		return;
	colsum_k<T, MODE><<<(unsigned)((C + 31) / 32), dim3(32, KCU_COL_WARPS), 0, s>>>(
		da, db, dout, inp, mean, rstd, N, C);
}

/* ---- the table's entries ---------------------------------------------- */

template <typename T>
static void layernorm_fwd(kstream *ks, void *out, float *mean, float *rstd,
			  const void *inp, const void *w, const void *b, long N,
			  long C, float eps)
{
	if (N <= 0 || C <= 0)
		return;
	layernorm_fwd_k<T><<<(unsigned)N, kcu_row_threads(C), 0, kcu_stream(ks)>>>(
		(T *)out, mean, rstd, (const T *)inp, (const T *)w, (const T *)b, C, eps);
}

template <typename T>
static void layernorm_bwd(kstream *ks, void *dinp, float *dw, float *db,
			  const void *dout, const void *inp, const void *w,
			  const float *mean, const float *rstd, long N, long C)
{
	if (N <= 0 || C <= 0)
		return;
	layernorm_dx_k<T><<<(unsigned)N, kcu_row_threads(C), 0, kcu_stream(ks)>>>(
		(T *)dinp, (const T *)dout, (const T *)inp, (const T *)w, mean, rstd, C);
	colsum<T, COL_LN>(kcu_stream(ks), dw, db, (const T *)dout, (const T *)inp,
			  mean, rstd, N, C);
}

template <typename T>
static void rmsnorm_fwd(kstream *ks, void *out, float *rstd, const void *inp,
			const void *w, long N, long C, float eps)
{
	if (N <= 0 || C <= 0)
		return;
	rmsnorm_fwd_k<T><<<(unsigned)N, kcu_row_threads(C), 0, kcu_stream(ks)>>>(
		(T *)out, rstd, (const T *)inp, (const T *)w, C, eps);
}

template <typename T>
static void rmsnorm_bwd(kstream *ks, void *dinp, float *dw, const void *dout,
			const void *inp, const void *w, const float *rstd, long N,
			long C)
{
	if (N <= 0 || C <= 0)
		return;
	rmsnorm_dx_k<T><<<(unsigned)N, kcu_row_threads(C), 0, kcu_stream(ks)>>>(
		(T *)dinp, (const T *)dout, (const T *)inp, (const T *)w, rstd, C);
	colsum<T, COL_RMS>(kcu_stream(ks), dw, NULL, (const T *)dout, (const T *)inp,
			   NULL, rstd, N, C);
}

template <typename T>
static void bias_bwd(kstream *ks, float *dbias, const void *dout, long N, long C)
{
	colsum<T, COL_PLAIN>(kcu_stream(ks), dbias, NULL, (const T *)dout, NULL,
			     NULL, NULL, N, C);
}

void kcu_fill_norm(struct kern_ops *o)
{
	KCU_PICK(o, layernorm_fwd, layernorm_fwd);
	KCU_PICK(o, layernorm_bwd, layernorm_bwd);
	KCU_PICK(o, rmsnorm_fwd, rmsnorm_fwd);
	KCU_PICK(o, rmsnorm_bwd, rmsnorm_bwd);
	KCU_PICK(o, bias_bwd, bias_bwd);
}
