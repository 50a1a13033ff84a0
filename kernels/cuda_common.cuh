/*
 * cuda_common.cuh: what the CUDA kernel files of the module share, and
 * nothing else includes.  Storage types (fp32, bf16, fp16) are read and
 * written through ld/st, so each kernel is one template over the storage
 * type with fp32 math inside; reductions over a warp and a block; the
 * launch shapes; and the module's sticky kernel error (kcu_fail), which
 * the kernels' void signatures cannot return and the backend reads with
 * cuda_api.h's check().
 *
 * Every kernel file exports one function that fills its entries of a
 * struct kern_ops for the table's dtype (kcu_fill_*); cuda_ops.cu makes
 * the three tables from them.
 */
#ifndef PPLAN_CUDA_COMMON_CUH
#define PPLAN_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>

#include "kernels.h"

typedef __nv_bfloat16 bf16;
typedef __half f16;

/* ---- storage <-> fp32 ------------------------------------------------- */

__device__ __forceinline__ float ld(const float *p) { return *p; }
__device__ __forceinline__ float ld(const bf16 *p) { return __bfloat162float(*p); }
__device__ __forceinline__ float ld(const f16 *p) { return __half2float(*p); }
__device__ __forceinline__ void st(float *p, float v) { *p = v; }
__device__ __forceinline__ void st(bf16 *p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void st(f16 *p, float v) { *p = __float2half_rn(v); }

/* ---- reductions ------------------------------------------------------- */

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

__device__ __forceinline__ double warp_sum_d(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* Sum (max) over the block, returned to every thread.  blockDim.x is a
 * multiple of 32, at most 1024; sh holds 32 floats.  The first barrier
 * lets the block call these back to back with the same sh. */
__device__ __forceinline__ float block_sum(float v, float *sh)
{
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	v = warp_sum(v);
	__syncthreads();
	if (lane == 0)
		sh[w] = v;
	__syncthreads();
	v = lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.0f;
	return warp_sum(v);
}

__device__ __forceinline__ float block_max(float v, float *sh)
{
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	v = warp_max(v);
	__syncthreads();
	if (lane == 0)
		sh[w] = v;
	__syncthreads();
	v = lane < (int)(blockDim.x >> 5) ? sh[lane] : -INFINITY;
	return warp_max(v);
}

/* ---- launch shapes ---------------------------------------------------- */

#define KCU_THREADS 256

/* Blocks for a grid-stride loop over n elements. */
static inline unsigned kcu_blocks(long n)
{
	long b = (n + KCU_THREADS - 1) / KCU_THREADS;
	if (b > 65536L * 16)
		b = 65536L * 16;
	return (unsigned)(b < 1 ? 1 : b);
}

/* Threads for a block that walks one row of C elements: a power of two
 * from 32 to 512. */
static inline unsigned kcu_row_threads(long C)
{
	unsigned t = 32;
	while (t < 512 && (long)t < C)
		t *= 2;
	return t;
}

static inline cudaStream_t kcu_stream(kstream *ks)
{
	return (cudaStream_t)ks;
}

#define KCU_FOR(i, n) \
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
	     i += (long)gridDim.x * blockDim.x)

/* ---- the module's sticky error (cuda_ops.cu) -------------------------- */

/* Records the first failure (a sentence) until kcu_error_take. */
void kcu_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 and the sentence (then cleared), or 0. */
int kcu_error_take(char *why, size_t len);

/* ---- the tensor-core attention forward (cuda_flash_mma.cu) ------------ */

/* attention_fwd of kernels.h for storage dtype (enum kern_dtype) on
 * tensor cores: 1 when it ran, 0 where the dtype, the head size or the
 * GPU is not one it runs (nothing was launched). */
int kcu_mma_attention_fwd(cudaStream_t s, int dtype, void *out, float *lse,
			  const void *q, const void *k, const void *v, long B, long H,
			  long G, long Tq, long Tk, long D, long q0, long k0, float scale);

/* ---- the tables (cuda_ops.cu) and each kernel file's part -------------- */

/* The table of storage type dtype (enum kern_dtype), or NULL. */
const struct kern_ops *kcu_kernels(int dtype);
/* The version-2 entries of cuda_api.h (cuda_backend.cu). */
struct pplan_cuda_api;
void kcu_fill_api(struct pplan_cuda_api *a);

void kcu_fill_norm(struct kern_ops *o);
void kcu_fill_act(struct kern_ops *o);
void kcu_fill_layout(struct kern_ops *o);
void kcu_fill_flash(struct kern_ops *o);
void kcu_fill_embed(struct kern_ops *o);
void kcu_fill_optim(struct kern_ops *o);

/* Instantiates F<T> for the storage type of dtype d (o->dtype). */
#define KCU_PICK(o, field, F)                                             \
	do {                                                              \
		switch ((o)->dtype) {                                     \
		case KD_F32: (o)->field = F<float>; break;                \
		case KD_BF16: (o)->field = F<bf16>; break;                \
		case KD_F16: (o)->field = F<f16>; break;                  \
		}                                                         \
	} while (0)

#endif
