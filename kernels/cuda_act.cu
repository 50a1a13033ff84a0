/*
 * cuda_act.cu: the MLP activations (GeLU, tanh approximation; SwiGLU) and
 * the element-wise helpers of kernels.h (CPU twins: kernels/cpu_act.c),
 * grid-stride loops with fp32 math.
 */
#include "cuda_common.cuh"

#define GELU_K 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_C 0.044715f

template <typename T>
__global__ void gelu_fwd_k(T *out, const T *inp, long n)
{
	KCU_FOR(i, n) {
		float x = ld(inp + i);
		st(out + i, 0.5f * x * (1.0f + tanhf(GELU_K * (x + GELU_C * x * x * x))));
	}
}

template <typename T>
__global__ void gelu_bwd_k(T *dinp, const T *inp, const T *dout, long n)
{
	KCU_FOR(i, n) {
		float x = ld(inp + i);
		float t = tanhf(GELU_K * (x + GELU_C * x * x * x));
		float du = GELU_K * (1.0f + 3.0f * GELU_C * x * x);
		float d = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
		st(dinp + i, d * ld(dout + i));
	}
}

/* Row r of inp is [gate (F) | up (F)]. */
template <typename T>
__global__ void swiglu_fwd_k(T *out, const T *inp, long N, long F)
{
	KCU_FOR(i, N * F) {
		long r = i / F, f = i % F;
		float g = ld(inp + r * 2 * F + f), u = ld(inp + r * 2 * F + F + f);
		st(out + i, g / (1.0f + expf(-g)) * u);
	}
}

template <typename T>
__global__ void swiglu_bwd_k(T *dinp, const T *inp, const T *dout, long N, long F)
{
	KCU_FOR(i, N * F) {
		long r = i / F, f = i % F;
		float g = ld(inp + r * 2 * F + f), u = ld(inp + r * 2 * F + F + f);
		float sg = 1.0f / (1.0f + expf(-g)), dy = ld(dout + i);
		st(dinp + r * 2 * F + f, dy * u * sg * (1.0f + g * (1.0f - sg)));
		st(dinp + r * 2 * F + F + f, dy * g * sg);
	}
}

template <typename T>
__global__ void bias_add_k(T *out, const T *bias, long N, long C)
{
	KCU_FOR(i, N * C)
		st(out + i, ld(out + i) + ld(bias + i % C));
}

template <typename T>
__global__ void add_k(T *out, const T *a, const T *b, long n)
{
	KCU_FOR(i, n)
		st(out + i, ld(a + i) + ld(b + i));
}

template <typename T>
__global__ void acc_k(T *dst, const T *src, long n)
{
	KCU_FOR(i, n)
		st(dst + i, ld(dst + i) + ld(src + i));
}

/* ---- the table's entries ---------------------------------------------- */

template <typename T>
static void gelu_fwd(kstream *ks, void *out, const void *inp, long n)
{
	if (n > 0)
		gelu_fwd_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, (const T *)inp, n);
}

template <typename T>
static void gelu_bwd(kstream *ks, void *dinp, const void *inp, const void *dout,
		     long n)
{
	if (n > 0)
		gelu_bwd_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)dinp, (const T *)inp, (const T *)dout, n);
}

template <typename T>
static void swiglu_fwd(kstream *ks, void *out, const void *inp, long N, long F)
{
	if (N > 0 && F > 0)
		swiglu_fwd_k<T><<<kcu_blocks(N * F), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, (const T *)inp, N, F);
}

template <typename T>
static void swiglu_bwd(kstream *ks, void *dinp, const void *inp,
		       const void *dout, long N, long F)
{
	if (N > 0 && F > 0)
		swiglu_bwd_k<T><<<kcu_blocks(N * F), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)dinp, (const T *)inp, (const T *)dout, N, F);
}

template <typename T>
static void bias_add(kstream *ks, void *out, const void *bias, long N, long C)
{
	if (N > 0 && C > 0)
		bias_add_k<T><<<kcu_blocks(N * C), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, (const T *)bias, N, C);
}

template <typename T>
static void add(kstream *ks, void *out, const void *a, const void *b, long n)
{
	if (n > 0)
		add_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)out, (const T *)a, (const T *)b, n);
}

template <typename T>
static void acc(kstream *ks, void *dst, const void *src, long n)
{
	if (n > 0)
		acc_k<T><<<kcu_blocks(n), KCU_THREADS, 0, kcu_stream(ks)>>>(
			(T *)dst, (const T *)src, n);
}

void kcu_fill_act(struct kern_ops *o)
{
	KCU_PICK(o, gelu_fwd, gelu_fwd);
	KCU_PICK(o, gelu_bwd, gelu_bwd);
	KCU_PICK(o, swiglu_fwd, swiglu_fwd);
	KCU_PICK(o, swiglu_bwd, swiglu_bwd);
	KCU_PICK(o, bias_add, bias_add);
	KCU_PICK(o, add, add);
	KCU_PICK(o, acc, acc);
}
