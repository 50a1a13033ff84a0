/*
 * cuda_optim.cu: AdamW, the sum of squares behind gradient norms, scaling
 * and dtype conversions of kernels.h (CPU twins in kernels/cpu_optim.c).
 * The bias corrections 1 - beta^t are computed once on the host in double.
 * The sum of squares accumulates in double per thread and per block;
 * the blocks' sums go to a table in the module's memory and the last
 * block to finish adds them in block order, so the result is the same,
 * to the bit, in every run (the ticket is the only atomic).  The table
 * serves one stream at a time: the executor runs every kernel of a
 * process on its one compute stream.
 */
#include "cuda_common.cuh"

#include <math.h>

template <typename T>
__global__ void adamw_k(float *p, float *m, float *v, const float *g, T *p_lp,
			long n, float lr, float b1, float b2, float eps, float wd,
			float c1, float c2, float gscale)
{
	KCU_FOR(i, n) {
		float gi = g[i] * gscale;
		float mi = b1 * m[i] + (1.0f - b1) * gi;
		float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
		float pi = p[i];
		pi -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * pi);
		m[i] = mi;
		v[i] = vi;
		p[i] = pi;
		if (p_lp)
			st(p_lp + i, pi);
	}
}

#define KCU_SUMSQ_BLOCKS 1024

__device__ double kcu_sumsq_part[KCU_SUMSQ_BLOCKS];
__device__ unsigned int kcu_sumsq_ticket;

__global__ void sumsq_k(double *out, const float *x, long n)
{
	__shared__ double sh[32];
	__shared__ bool last;
	double s = 0;
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	KCU_FOR(i, n)
		s += (double)x[i] * x[i];
	s = warp_sum_d(s);
	if (lane == 0)
		sh[w] = s;
	__syncthreads();
	if (w == 0) {
		s = lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.0;
		s = warp_sum_d(s);
		if (lane == 0) {
			kcu_sumsq_part[blockIdx.x] = s;
			__threadfence();
			last = atomicAdd(&kcu_sumsq_ticket, 1u) == gridDim.x - 1;
		}
	}
	__syncthreads();
	if (!last || threadIdx.x != 0)
		return;
	__threadfence();
	s = 0;
	for (unsigned b = 0; b < gridDim.x; b++)
		s += ((volatile double *)kcu_sumsq_part)[b];
	*out += s;
	kcu_sumsq_ticket = 0;
}

__global__ void scale_k(float *x, float a, long n)
{
	KCU_FOR(i, n)
		x[i] *= a;
}

template <typename T>
__global__ void to_f32_k(float *out, const T *in, long n)
{
	KCU_FOR(i, n)
		out[i] = ld(in + i);
}

template <typename T>
__global__ void from_f32_k(T *out, const float *in, long n)
{
	KCU_FOR(i, n)
		st(out + i, in[i]);
}

/* ---- the table's entries ---------------------------------------------- */

template <typename T>
static void adamw(kstream *ks, float *p, float *m, float *v, const float *g,
		  void *p_lp, long n, float lr, float beta1, float beta2,
		  float eps, float wd, long t, float gscale)
{
	double c1 = 1.0 - pow((double)beta1, (double)t);
	double c2 = 1.0 - pow((double)beta2, (double)t);
	if (n <= 0)
		return;
	if (t < 1) {
		kcu_fail("adamw: step %ld, steps count from 1", t);
		return;
	}
	adamw_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
		p, m, v, g, (T *)p_lp, n, lr, beta1, beta2, eps, wd, (float)c1,
		(float)c2, gscale);
}

static void sumsq(kstream *ks, double *out, const float *x, long n)
{
	unsigned blocks = kcu_blocks(n);
	if (n <= 0)
		return;
	if (blocks > KCU_SUMSQ_BLOCKS)
		blocks = KCU_SUMSQ_BLOCKS;
	sumsq_k<<<blocks, KCU_THREADS, 0, kcu_stream(ks)>>>(out, x, n);
}

static void scale(kstream *ks, float *x, float a, long n)
{
	if (n > 0)
		scale_k<<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(x, a, n);
}

template <typename T>
static void to_f32(kstream *ks, float *out, const void *in, long n)
{
	if (n <= 0)
		return;
	if ((const void *)out == in) {
		if (sizeof(T) != sizeof(float))
			kcu_fail("to_f32: a %zu-byte type cannot be widened in place", sizeof(T));
		return;
	}
	to_f32_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(out, (const T *)in, n);
}

template <typename T>
static void from_f32(kstream *ks, void *out, const float *in, long n)
{
	if (n <= 0)
		return;
	if (out == (const void *)in) {
		if (sizeof(T) != sizeof(float))
			kcu_fail("from_f32: a %zu-byte type cannot be narrowed in place", sizeof(T));
		return;
	}
	from_f32_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>((T *)out, in, n);
}

void kcu_fill_optim(struct kern_ops *o)
{
	KCU_PICK(o, adamw, adamw);
	o->sumsq = sumsq;
	o->scale = scale;
	KCU_PICK(o, to_f32, to_f32);
	KCU_PICK(o, from_f32, from_f32);
}
