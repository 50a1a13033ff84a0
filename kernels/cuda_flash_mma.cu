/*
 * cuda_flash_mma.cu: the fused causal attention forward on tensor cores
 * (kernels.h's attention_fwd for bf16 and fp16 storage, head sizes 16 to
 * 128 in steps of 16, on Ampere and newer), FlashAttention-2's forward
 * (Dao, 2023) with WMMA 16 x 16 x 16 products accumulating in fp32:
 *
 *  - a block is MA_W warps, a warp owns 16 query rows of one (batch,
 *    head); tiles of MA_BC = 32 keys and values stream through shared
 *    memory, in the storage type;
 *  - S = Q K^T of the warp's rows by tensor cores into fp32 (shared
 *    memory), the online softmax on it by two lanes per row (running max
 *    m and sum l in fp32, masked keys -INFINITY, as cuda_flash.cu), the
 *    probabilities rounded to the storage type as FlashAttention does;
 *  - O (fp32, shared memory) is scaled by the softmax's correction row by
 *    row and O += P V by tensor cores;
 *  - out = O / l in the storage type, lse = m + log l.
 *
 * The backward stays cuda_flash.cu's (it recomputes P from lse, so the
 * two agree to the rounding of P).  Masking, offsets (q0, k0) and GQA are
 * kernels.h's; the CPU twin (kernels/cpu_attn.c) is the oracle in
 * tests/cuda_kernels.c.  Returns 0 where the shape or the GPU is not one
 * it runs (the caller runs cuda_flash.cu's kernel).
 */
#include "cuda_common.cuh"

#include <mma.h>

#define MA_W 4
#define MA_BR (MA_W * 16)
#define MA_BC 32

namespace wm = nvcuda::wmma;

template <typename T, int ND>
__global__ void __launch_bounds__(MA_W * 32)
mma_fwd_k(T *out, float *lse, const T *q, const T *k, const T *v, int H, int G,
	  long Tq, long Tk, long q0, long k0, float scale, long ntiles)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
	constexpr int D = ND * 16;
	extern __shared__ __align__(128) unsigned char raw[];
	T *Qs = (T *)raw;                          /* [MA_BR][D] */
	T *Ks = Qs + MA_BR * D;                    /* [MA_BC][D] */
	T *Vs = Ks + MA_BC * D;                    /* [MA_BC][D] */
	T *Ps = Vs + MA_BC * D;                    /* [MA_BR][MA_BC] */
	float *Ss = (float *)(Ps + MA_BR * MA_BC); /* [MA_BR][MA_BC] */
	float *Os = Ss + MA_BR * MA_BC;            /* [MA_BR][D] */
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	int r = lane >> 1, half = lane & 1;       /* this lane's row and half of it */
	/* Heaviest tiles (the last query rows see the most keys) first. */
	long bh = blockIdx.x / ntiles, tile = ntiles - 1 - blockIdx.x % ntiles;
	long b = bh / H, h = bh % H, g = h / (H / G);
	long i0 = tile * MA_BR, i = i0 + w * 16 + r;
	const T *Q = q + bh * Tq * D;
	const T *K = k + (b * G + g) * Tk * D;
	const T *V = v + (b * G + g) * Tk * D;
	float m = -INFINITY, l = 0;
	float *srow = Ss + (w * 16 + r) * MA_BC, *orow = Os + (w * 16 + r) * D;
	T *prow = Ps + (w * 16 + r) * MA_BC;

	for (int e = threadIdx.x; e < MA_BR * D; e += blockDim.x) {
		long ii = i0 + e / D;
		if (ii < Tq)
			Qs[e] = Q[ii * D + e % D];
		else
			st(Qs + e, 0.0f);
		Os[e] = 0;
	}
	long imax = (i0 + MA_BR < Tq ? i0 + MA_BR : Tq) - 1;
	long jend = q0 + imax - k0 + 1; /* keys [0, jend) are seen by some row */
	if (jend > Tk)
		jend = Tk;

	for (long j0 = 0; j0 < jend; j0 += MA_BC) {
		__syncthreads(); /* the previous tile is consumed; Qs is stored */
		for (int e = threadIdx.x; e < MA_BC * D; e += blockDim.x) {
			long j = j0 + e / D;
			if (j < Tk) {
				Ks[e] = K[j * D + e % D];
				Vs[e] = V[j * D + e % D];
			} else {
				st(Ks + e, 0.0f);
				st(Vs + e, 0.0f);
			}
		}
		__syncthreads();

		/* S (16 x MA_BC) of the warp's rows */
		for (int n = 0; n < MA_BC / 16; n++) {
			wm::fragment<wm::accumulator, 16, 16, 16, float> sacc;
			wm::fill_fragment(sacc, 0.0f);
#pragma unroll
			for (int kk = 0; kk < ND; kk++) {
				wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
				wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::col_major> fb;
				wm::load_matrix_sync(fa, Qs + w * 16 * D + kk * 16, D);
				wm::load_matrix_sync(fb, Ks + n * 16 * D + kk * 16, D);
				wm::mma_sync(sacc, fa, fb, sacc);
			}
			wm::store_matrix_sync(Ss + w * 16 * MA_BC + n * 16, sacc, MA_BC,
					      wm::mem_row_major);
		}
		__syncwarp();

		/* the online softmax: two lanes a row, 16 keys each */
		float x[16], mx = -INFINITY, ps = 0;
#pragma unroll
		for (int c = 0; c < 16; c++) {
			long j = j0 + half * 16 + c;
			bool vis = i < Tq && j < Tk && k0 + j <= q0 + i;
			x[c] = vis ? srow[half * 16 + c] * scale : -INFINITY;
			mx = fmaxf(mx, x[c]);
		}
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		float mn = fmaxf(m, mx);
		float corr = m == -INFINITY ? 0.0f : expf(m - mn);
#pragma unroll
		for (int c = 0; c < 16; c++) {
			float p = x[c] == -INFINITY ? 0.0f : expf(x[c] - mn);
			ps += p;
			st(prow + half * 16 + c, p);
		}
		ps += __shfl_xor_sync(0xffffffffu, ps, 1);
		l = l * corr + ps;
		m = mn;
		for (int d = half; d < D; d += 2)
			orow[d] *= corr;
		__syncwarp();

		/* O (16 x D) += P V */
#pragma unroll
		for (int n = 0; n < ND; n++) {
			wm::fragment<wm::accumulator, 16, 16, 16, float> oacc;
			wm::load_matrix_sync(oacc, Os + w * 16 * D + n * 16, D, wm::mem_row_major);
#pragma unroll
			for (int kk = 0; kk < MA_BC / 16; kk++) {
				wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
				wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::row_major> fb;
				wm::load_matrix_sync(fa, Ps + w * 16 * MA_BC + kk * 16, MA_BC);
				wm::load_matrix_sync(fb, Vs + kk * 16 * D + n * 16, D);
				wm::mma_sync(oacc, fa, fb, oacc);
			}
			wm::store_matrix_sync(Os + w * 16 * D + n * 16, oacc, D, wm::mem_row_major);
		}
		__syncwarp();
	}

	if (i < Tq) {
		float inv = l > 0 ? 1.0f / l : 0.0f;
		for (int d = half; d < D; d += 2)
			st(out + (bh * Tq + i) * D + d, orow[d] * inv);
		if (half == 0)
			lse[bh * Tq + i] = l > 0 ? m + logf(l) : -INFINITY;
	}
#endif
}

static size_t mma_smem(int D, size_t es)
{
	return es * ((size_t)(MA_BR + 2 * MA_BC) * D + MA_BR * MA_BC) +
	       sizeof(float) * ((size_t)MA_BR * MA_BC + (size_t)MA_BR * D);
}

/* Whether the current device has bf16/fp16 tensor cores WMMA can use
 * (compute capability 8.0 or newer), asked once per device. */
static int mma_device(void)
{
	static int known[64], major[64];
	int dev = 0;
	if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
		return 0;
	if (!known[dev]) {
		if (cudaDeviceGetAttribute(&major[dev], cudaDevAttrComputeCapabilityMajor, dev) !=
		    cudaSuccess)
			major[dev] = 0;
		known[dev] = 1;
	}
	return major[dev] >= 8;
}

template <typename T, int ND>
static int mma_launch(cudaStream_t s, T *out, float *lse, const T *q, const T *k,
		      const T *v, long B, long H, long G, long Tq, long Tk, long q0,
		      long k0, float scale)
{
	long ntiles = (Tq + MA_BR - 1) / MA_BR;
	size_t sm = mma_smem(ND * 16, sizeof(T));
	if (sm > 48 * 1024 &&
	    cudaFuncSetAttribute(mma_fwd_k<T, ND>, cudaFuncAttributeMaxDynamicSharedMemorySize,
				 (int)sm) != cudaSuccess) {
		(void)cudaGetLastError(); /* not sticky: the caller runs the other kernel */
		return 0;
	}
	mma_fwd_k<T, ND><<<(unsigned)(B * H * ntiles), MA_W * 32, sm, s>>>(
		out, lse, q, k, v, (int)H, (int)G, Tq, Tk, q0, k0, scale, ntiles);
	return 1;
}

template <typename T>
static int mma_fwd(cudaStream_t s, T *out, float *lse, const T *q, const T *k,
		   const T *v, long B, long H, long G, long Tq, long Tk, long D,
		   long q0, long k0, float scale)
{
	if (D % 16 != 0 || D < 16 || D > 128 || B * H * ((Tq + MA_BR - 1) / MA_BR) > 0x7fffffffL ||
	    !mma_device())
		return 0;
#define MA_CASE(N)                                                                      \
	case N:                                                                         \
		return mma_launch<T, N>(s, out, lse, q, k, v, B, H, G, Tq, Tk, q0, k0, scale)
	switch (D / 16) {
		MA_CASE(1);
		MA_CASE(2);
		MA_CASE(3);
		MA_CASE(4);
		MA_CASE(5);
		MA_CASE(6);
		MA_CASE(7);
		MA_CASE(8);
	}
#undef MA_CASE
	return 0;
}

int kcu_mma_attention_fwd(cudaStream_t s, int dtype, void *out, float *lse,
			  const void *q, const void *k, const void *v, long B, long H,
			  long G, long Tq, long Tk, long D, long q0, long k0, float scale)
{
	if (dtype == KD_BF16)
		return mma_fwd<bf16>(s, (bf16 *)out, lse, (const bf16 *)q, (const bf16 *)k,
				     (const bf16 *)v, B, H, G, Tq, Tk, D, q0, k0, scale);
	if (dtype == KD_F16)
		return mma_fwd<f16>(s, (f16 *)out, lse, (const f16 *)q, (const f16 *)k,
				    (const f16 *)v, B, H, G, Tq, Tk, D, q0, k0, scale);
	return 0;
}
