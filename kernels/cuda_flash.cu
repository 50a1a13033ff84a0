/*
 * cuda_flash.cu: fused causal attention, forward and backward, flash-style
 * (Dao et al., FlashAttention-2): tiles of keys and values stream through
 * shared memory, the softmax is computed online (running max and sum per
 * query row), the forward saves lse = log sum exp of the scaled scores,
 * and the backward recomputes the probabilities from it, so no (T x T)
 * tensor is ever stored.  Masking, offsets (q0, k0) and GQA are those of
 * kernels.h; the CPU twin (kern_attention_* in kernels/cpu_attn.c) is the
 * oracle.
 *
 * bf16 and fp16 forwards with head sizes of 16 to 128 (multiples of 16)
 * run on tensor cores on Ampere and newer (cuda_flash_mma.cu); the rest
 * here.  Work split (fp32 math on CUDA cores, any storage type):
 *  - forward: a block is FA_W warps, a warp owns FA_R query rows of one
 *    (batch, head); for each tile of FA_BC = 32 keys lane j computes the
 *    scores of key j against the warp's rows, the warp reduces max and sum
 *    with shuffles, and each lane accumulates the output columns
 *    d = lane + 32c (c < DCH, so D <= 32 DCH).
 *  - backward, two kernels, no atomics and no scratch memory: dq is
 *    computed query-major as the forward (lanes over keys, then over
 *    columns); dk and dv key-major, a warp owning FA_R keys of one KV head
 *    and looping over the query rows of all H/G heads that share it (the
 *    GQA sum stays in registers).  D_i = dO_i . O_i is recomputed where it
 *    is needed.  Scores are recomputed in both: about 7 matrix products
 *    of work where FlashAttention-2 does 5 with atomics on dq.
 * Shared-memory rows read one per lane are padded to D + 1 floats.
 */
#include "cuda_common.cuh"

#define FA_W 4
#define FA_R 4
#define FA_BC 32
#define FA_ROWS (FA_W * FA_R)
#define FA_SMEM_DEFAULT (48 * 1024)

/* ---- forward ---------------------------------------------------------- */

template <typename T, int DCH>
__global__ void __launch_bounds__(FA_W * 32)
flash_fwd_k(T *out, float *lse, const T *q, const T *k, const T *v, int H,
	    int G, long Tq, long Tk, int D, long q0, long k0, float scale,
	    long ntiles)
{
	extern __shared__ float smem[];
	const int DP = D + 1;
	float *Ks = smem;               /* [FA_BC][DP] */
	float *Vs = Ks + FA_BC * DP;    /* [FA_BC][DP] */
	float *Qs = Vs + FA_BC * DP;    /* [FA_ROWS][D] */
	float *Ps = Qs + FA_ROWS * D;   /* [FA_ROWS][FA_BC] */
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	/* Heaviest tiles (the last query rows see the most keys) first. */
	long bh = blockIdx.x / ntiles, tile = ntiles - 1 - blockIdx.x % ntiles;
	long b = bh / H, h = bh % H, g = h / (H / G);
	long i0 = tile * FA_ROWS;
	const T *Q = q + bh * Tq * D;
	const T *K = k + (b * G + g) * Tk * D;
	const T *V = v + (b * G + g) * Tk * D;
	float m[FA_R], l[FA_R], acc[FA_R][DCH];

	for (int e = threadIdx.x; e < FA_ROWS * D; e += blockDim.x) {
		long i = i0 + e / D;
		Qs[e] = i < Tq ? ld(Q + i * D + e % D) : 0.0f;
	}
#pragma unroll
	for (int r = 0; r < FA_R; r++) {
		m[r] = -INFINITY;
		l[r] = 0;
#pragma unroll
		for (int c = 0; c < DCH; c++)
			acc[r][c] = 0;
	}
	long imax = (i0 + FA_ROWS < Tq ? i0 + FA_ROWS : Tq) - 1;
	long jend = q0 + imax - k0 + 1; /* keys [0, jend) are seen by some row */
	if (jend > Tk)
		jend = Tk;

	for (long j0 = 0; j0 < jend; j0 += FA_BC) {
		__syncthreads(); /* the previous tile is consumed; Qs is stored */
		for (int e = threadIdx.x; e < FA_BC * D; e += blockDim.x) {
			int jj = e / D, d = e % D;
			long j = j0 + jj;
			Ks[jj * DP + d] = j < Tk ? ld(K + j * D + d) : 0.0f;
			Vs[jj * DP + d] = j < Tk ? ld(V + j * D + d) : 0.0f;
		}
		__syncthreads();

		float s[FA_R];
		const float *kr = Ks + lane * DP, *qw = Qs + w * FA_R * D;
#pragma unroll
		for (int r = 0; r < FA_R; r++)
			s[r] = 0;
		for (int d = 0; d < D; d++) {
			float kd = kr[d];
#pragma unroll
			for (int r = 0; r < FA_R; r++)
				s[r] += qw[r * D + d] * kd;
		}
		long j = j0 + lane;
#pragma unroll
		for (int r = 0; r < FA_R; r++) {
			long i = i0 + w * FA_R + r;
			bool vis = i < Tq && j < Tk && k0 + j <= q0 + i;
			float x = vis ? s[r] * scale : -INFINITY;
			float mn = fmaxf(m[r], warp_max(x));
			float p = vis ? expf(x - mn) : 0.0f;
			float corr = m[r] == -INFINITY ? 0.0f : expf(m[r] - mn);
			l[r] = l[r] * corr + warp_sum(p);
#pragma unroll
			for (int c = 0; c < DCH; c++)
				acc[r][c] *= corr;
			m[r] = mn;
			Ps[(w * FA_R + r) * FA_BC + lane] = p;
		}
		__syncwarp();
		for (int jj = 0; jj < FA_BC; jj++) {
			const float *vr = Vs + jj * DP;
			float pr[FA_R];
#pragma unroll
			for (int r = 0; r < FA_R; r++)
				pr[r] = Ps[(w * FA_R + r) * FA_BC + jj];
#pragma unroll
			for (int c = 0; c < DCH; c++) {
				int d = lane + 32 * c;
				float vd = d < D ? vr[d] : 0.0f;
#pragma unroll
				for (int r = 0; r < FA_R; r++)
					acc[r][c] += pr[r] * vd;
			}
		}
		__syncwarp(); /* Ps is read before the next tile writes it */
	}

#pragma unroll
	for (int r = 0; r < FA_R; r++) {
		long i = i0 + w * FA_R + r;
		if (i >= Tq)
			continue;
		float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;
#pragma unroll
		for (int c = 0; c < DCH; c++) {
			int d = lane + 32 * c;
			if (d < D)
				st(out + (bh * Tq + i) * D + d, acc[r][c] * inv);
		}
		if (lane == 0)
			lse[bh * Tq + i] = l[r] > 0 ? m[r] + logf(l[r]) : -INFINITY;
	}
}

/* ---- backward: dq, query-major ---------------------------------------- */

template <typename T, int DCH>
__global__ void __launch_bounds__(FA_W * 32)
flash_dq_k(T *dq, const T *dout, const T *out, const float *lse, const T *q,
	   const T *k, const T *v, int H, int G, long Tq, long Tk, int D,
	   long q0, long k0, float scale, long ntiles)
{
	extern __shared__ float smem[];
	const int DP = D + 1;
	float *Ks = smem;                /* [FA_BC][DP] */
	float *Vs = Ks + FA_BC * DP;     /* [FA_BC][DP] */
	float *Qs = Vs + FA_BC * DP;     /* [FA_ROWS][D] */
	float *dOs = Qs + FA_ROWS * D;   /* [FA_ROWS][D] */
	float *dSs = dOs + FA_ROWS * D;  /* [FA_ROWS][FA_BC] */
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	long bh = blockIdx.x / ntiles, tile = ntiles - 1 - blockIdx.x % ntiles;
	long b = bh / H, h = bh % H, g = h / (H / G);
	long i0 = tile * FA_ROWS;
	const T *K = k + (b * G + g) * Tk * D;
	const T *V = v + (b * G + g) * Tk * D;
	float Li[FA_R], Di[FA_R], acc[FA_R][DCH];

	/* Each warp loads its own rows and their D_i = dO_i . O_i. */
#pragma unroll
	for (int r = 0; r < FA_R; r++) {
		int row = w * FA_R + r;
		long i = i0 + row;
		float part = 0;
		for (int d = lane; d < D; d += 32) {
			float qv = 0, dov = 0;
			if (i < Tq) {
				qv = ld(q + (bh * Tq + i) * D + d);
				dov = ld(dout + (bh * Tq + i) * D + d);
				part += dov * ld(out + (bh * Tq + i) * D + d);
			}
			Qs[row * D + d] = qv;
			dOs[row * D + d] = dov;
		}
		Di[r] = warp_sum(part);
		Li[r] = i < Tq ? lse[bh * Tq + i] : -INFINITY;
#pragma unroll
		for (int c = 0; c < DCH; c++)
			acc[r][c] = 0;
	}
	long imax = (i0 + FA_ROWS < Tq ? i0 + FA_ROWS : Tq) - 1;
	long jend = q0 + imax - k0 + 1;
	if (jend > Tk)
		jend = Tk;

	for (long j0 = 0; j0 < jend; j0 += FA_BC) {
		__syncthreads();
		for (int e = threadIdx.x; e < FA_BC * D; e += blockDim.x) {
			int jj = e / D, d = e % D;
			long j = j0 + jj;
			Ks[jj * DP + d] = j < Tk ? ld(K + j * D + d) : 0.0f;
			Vs[jj * DP + d] = j < Tk ? ld(V + j * D + d) : 0.0f;
		}
		__syncthreads();

		float s[FA_R], dp[FA_R];
		const float *kr = Ks + lane * DP, *vr = Vs + lane * DP;
		const float *qw = Qs + w * FA_R * D, *ow = dOs + w * FA_R * D;
#pragma unroll
		for (int r = 0; r < FA_R; r++)
			s[r] = dp[r] = 0;
		for (int d = 0; d < D; d++) {
			float kd = kr[d], vd = vr[d];
#pragma unroll
			for (int r = 0; r < FA_R; r++) {
				s[r] += qw[r * D + d] * kd;
				dp[r] += ow[r * D + d] * vd;
			}
		}
		long j = j0 + lane;
#pragma unroll
		for (int r = 0; r < FA_R; r++) {
			long i = i0 + w * FA_R + r;
			bool vis = i < Tq && j < Tk && k0 + j <= q0 + i;
			float p = vis ? expf(s[r] * scale - Li[r]) : 0.0f;
			dSs[(w * FA_R + r) * FA_BC + lane] = p * (dp[r] - Di[r]);
		}
		__syncwarp();
		for (int jj = 0; jj < FA_BC; jj++) {
			const float *kj = Ks + jj * DP;
			float ds[FA_R];
#pragma unroll
			for (int r = 0; r < FA_R; r++)
				ds[r] = dSs[(w * FA_R + r) * FA_BC + jj];
#pragma unroll
			for (int c = 0; c < DCH; c++) {
				int d = lane + 32 * c;
				float kd = d < D ? kj[d] : 0.0f;
#pragma unroll
				for (int r = 0; r < FA_R; r++)
					acc[r][c] += ds[r] * kd;
			}
		}
		__syncwarp();
	}

#pragma unroll
	for (int r = 0; r < FA_R; r++) {
		long i = i0 + w * FA_R + r;
		if (i >= Tq)
			continue;
#pragma unroll
		for (int c = 0; c < DCH; c++) {
			int d = lane + 32 * c;
			if (d < D)
				st(dq + (bh * Tq + i) * D + d, acc[r][c] * scale);
		}
	}
}

/* ---- backward: dk and dv, key-major ----------------------------------- */

template <typename T, int DCH>
__global__ void __launch_bounds__(FA_W * 32)
flash_dkv_k(T *dk, T *dv, const T *dout, const T *out, const float *lse,
	    const T *q, const T *k, const T *v, int H, int G, long Tq, long Tk,
	    int D, long q0, long k0, float scale, long ntiles)
{
	extern __shared__ float smem[];
	const int DP = D + 1;
	float *Kb = smem;                 /* [FA_ROWS][D]: the block's keys */
	float *Vb = Kb + FA_ROWS * D;     /* [FA_ROWS][D] */
	float *Qt = Vb + FA_ROWS * D;     /* [FA_BC][DP]: a tile of queries */
	float *dOt = Qt + FA_BC * DP;     /* [FA_BC][DP] */
	float *Lt = dOt + FA_BC * DP;     /* [FA_BC] */
	float *Dt = Lt + FA_BC;           /* [FA_BC] */
	float *Ps = Dt + FA_BC;           /* [FA_ROWS][FA_BC] */
	float *dSs = Ps + FA_ROWS * FA_BC; /* [FA_ROWS][FA_BC] */
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, rep = H / G;
	long bg = blockIdx.x / ntiles, tile = blockIdx.x % ntiles;
	long b = bg / G, g = bg % G;
	long jb = tile * FA_ROWS;
	float akd[FA_R][DCH], avd[FA_R][DCH];

	for (int e = threadIdx.x; e < FA_ROWS * D; e += blockDim.x) {
		long j = jb + e / D;
		Kb[e] = j < Tk ? ld(k + (bg * Tk + j) * D + e % D) : 0.0f;
		Vb[e] = j < Tk ? ld(v + (bg * Tk + j) * D + e % D) : 0.0f;
	}
#pragma unroll
	for (int r = 0; r < FA_R; r++)
#pragma unroll
		for (int c = 0; c < DCH; c++)
			akd[r][c] = avd[r][c] = 0;
	/* The first query row that sees key jb. */
	long ifirst = k0 + jb - q0;
	if (ifirst < 0)
		ifirst = 0;

	for (int hh = 0; hh < rep; hh++) {
		long bh = b * H + g * rep + hh;
		for (long it = ifirst / FA_BC * FA_BC; it < Tq; it += FA_BC) {
			__syncthreads(); /* Kb, Vb stored; the last tile consumed */
			for (int e = threadIdx.x; e < FA_BC * D; e += blockDim.x) {
				int ii = e / D, d = e % D;
				long i = it + ii;
				Qt[ii * DP + d] = i < Tq ? ld(q + (bh * Tq + i) * D + d) : 0.0f;
				dOt[ii * DP + d] = i < Tq ? ld(dout + (bh * Tq + i) * D + d) : 0.0f;
			}
			/* D_i of the tile's rows, FA_BC / FA_W rows per warp. */
			for (int ii = w; ii < FA_BC; ii += FA_W) {
				long i = it + ii;
				float part = 0;
				if (i < Tq)
					for (int d = lane; d < D; d += 32)
						part += ld(dout + (bh * Tq + i) * D + d) *
							ld(out + (bh * Tq + i) * D + d);
				part = warp_sum(part);
				if (lane == 0) {
					Dt[ii] = part;
					Lt[ii] = i < Tq ? lse[bh * Tq + i] : -INFINITY;
				}
			}
			__syncthreads();

			/* Lane l: query row it + l against the warp's keys. */
			float s[FA_R], dp[FA_R];
			const float *ql = Qt + lane * DP, *ol = dOt + lane * DP;
			const float *kw = Kb + w * FA_R * D, *vw = Vb + w * FA_R * D;
#pragma unroll
			for (int r = 0; r < FA_R; r++)
				s[r] = dp[r] = 0;
			for (int d = 0; d < D; d++) {
				float qd = ql[d], od = ol[d];
#pragma unroll
				for (int r = 0; r < FA_R; r++) {
					s[r] += qd * kw[r * D + d];
					dp[r] += od * vw[r * D + d];
				}
			}
			long i = it + lane;
#pragma unroll
			for (int r = 0; r < FA_R; r++) {
				long j = jb + w * FA_R + r;
				bool vis = i < Tq && j < Tk && k0 + j <= q0 + i;
				float p = vis ? expf(s[r] * scale - Lt[lane]) : 0.0f;
				Ps[(w * FA_R + r) * FA_BC + lane] = p;
				dSs[(w * FA_R + r) * FA_BC + lane] = p * (dp[r] - Dt[lane]);
			}
			__syncwarp();
			for (int ii = 0; ii < FA_BC; ii++) {
				const float *qi = Qt + ii * DP, *oi = dOt + ii * DP;
				float pr[FA_R], ds[FA_R];
#pragma unroll
				for (int r = 0; r < FA_R; r++) {
					pr[r] = Ps[(w * FA_R + r) * FA_BC + ii];
					ds[r] = dSs[(w * FA_R + r) * FA_BC + ii];
				}
#pragma unroll
				for (int c = 0; c < DCH; c++) {
					int d = lane + 32 * c;
					float qd = d < D ? qi[d] : 0.0f;
					float od = d < D ? oi[d] : 0.0f;
#pragma unroll
					for (int r = 0; r < FA_R; r++) {
						avd[r][c] += pr[r] * od;
						akd[r][c] += ds[r] * qd;
					}
				}
			}
			__syncwarp();
		}
	}

#pragma unroll
	for (int r = 0; r < FA_R; r++) {
		long j = jb + w * FA_R + r;
		if (j >= Tk)
			continue;
#pragma unroll
		for (int c = 0; c < DCH; c++) {
			int d = lane + 32 * c;
			if (d < D) {
				st(dk + (bg * Tk + j) * D + d, akd[r][c] * scale);
				st(dv + (bg * Tk + j) * D + d, avd[r][c]);
			}
		}
	}
}

/* ---- launchers -------------------------------------------------------- */

static size_t fwd_smem(int D)
{
	return sizeof(float) * (2 * FA_BC * (D + 1) + FA_ROWS * D + FA_ROWS * FA_BC);
}

static size_t dq_smem(int D)
{
	return sizeof(float) * (2 * FA_BC * (D + 1) + 2 * FA_ROWS * D + FA_ROWS * FA_BC);
}

static size_t dkv_smem(int D)
{
	return sizeof(float) * (2 * FA_ROWS * D + 2 * FA_BC * (D + 1) + 2 * FA_BC +
				2 * FA_ROWS * FA_BC);
}

/* Above 48 KiB a kernel must opt in to more dynamic shared memory. */
template <typename F>
static int smem_optin(F *fn, size_t bytes)
{
	if (bytes <= FA_SMEM_DEFAULT)
		return 0;
	cudaError_t rc = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
					      (int)bytes);
	if (rc != cudaSuccess) {
		kcu_fail("attention: %zu bytes of shared memory refused: %s", bytes,
			 cudaGetErrorString(rc));
		return -1;
	}
	return 0;
}

static int shape_ok(const char *what, long B, long H, long G, long D)
{
	if (D < 1 || D > 32 * 8 || G < 1 || H % G != 0) {
		kcu_fail("%s: head size %ld (1 to 256) or heads %ld over KV heads %ld (a multiple) not supported",
			 what, D, H, G);
		return 0;
	}
	return B > 0 && H > 0;
}

template <typename T, int DCH>
static void fwd_run(cudaStream_t s, T *out, float *lse, const T *q, const T *k,
		    const T *v, long B, long H, long G, long Tq, long Tk, long D,
		    long q0, long k0, float scale)
{
	long ntiles = (Tq + FA_ROWS - 1) / FA_ROWS;
	size_t sm = fwd_smem((int)D);
	if (smem_optin(flash_fwd_k<T, DCH>, sm) != 0)
		return;
	flash_fwd_k<T, DCH><<<(unsigned)(B * H * ntiles), FA_W * 32, sm, s>>>(
		out, lse, q, k, v, (int)H, (int)G, Tq, Tk, (int)D, q0, k0, scale, ntiles);
}

template <typename T, int DCH>
static void bwd_run(cudaStream_t s, T *dq, T *dk, T *dv, const T *dout,
		    const T *out, const float *lse, const T *q, const T *k,
		    const T *v, long B, long H, long G, long Tq, long Tk, long D,
		    long q0, long k0, float scale)
{
	long qt = (Tq + FA_ROWS - 1) / FA_ROWS, kt = (Tk + FA_ROWS - 1) / FA_ROWS;
	size_t s1 = dq_smem((int)D), s2 = dkv_smem((int)D);
	if (smem_optin(flash_dq_k<T, DCH>, s1) != 0 ||
	    smem_optin(flash_dkv_k<T, DCH>, s2) != 0)
		return;
	if (qt > 0)
		flash_dq_k<T, DCH><<<(unsigned)(B * H * qt), FA_W * 32, s1, s>>>(
			dq, dout, out, lse, q, k, v, (int)H, (int)G, Tq, Tk, (int)D,
			q0, k0, scale, qt);
	if (kt > 0)
		flash_dkv_k<T, DCH><<<(unsigned)(B * G * kt), FA_W * 32, s2, s>>>(
			dk, dv, dout, out, lse, q, k, v, (int)H, (int)G, Tq, Tk, (int)D,
			q0, k0, scale, kt);
}

static inline int dtype_of(const float *) { return KD_F32; }
static inline int dtype_of(const bf16 *) { return KD_BF16; }
static inline int dtype_of(const f16 *) { return KD_F16; }

template <typename T>
static void attention_fwd(kstream *ks, void *out, float *lse, const void *q,
			  const void *k, const void *v, long B, long H, long G,
			  long Tq, long Tk, long D, long q0, long k0, float scale)
{
	cudaStream_t s = kcu_stream(ks);
	if (!shape_ok("attention_fwd", B, H, G, D) || Tq <= 0)
		return;
	if (kcu_mma_attention_fwd(s, dtype_of((const T *)q), out, lse, q, k, v, B, H, G, Tq,
				  Tk, D, q0, k0, scale))
		return; /* bf16 and fp16 on tensor cores (cuda_flash_mma.cu) */
	if (D <= 64)
		fwd_run<T, 2>(s, (T *)out, lse, (const T *)q, (const T *)k, (const T *)v,
			      B, H, G, Tq, Tk, D, q0, k0, scale);
	else if (D <= 128)
		fwd_run<T, 4>(s, (T *)out, lse, (const T *)q, (const T *)k, (const T *)v,
			      B, H, G, Tq, Tk, D, q0, k0, scale);
	else
		fwd_run<T, 8>(s, (T *)out, lse, (const T *)q, (const T *)k, (const T *)v,
			      B, H, G, Tq, Tk, D, q0, k0, scale);
}

template <typename T>
static void attention_bwd(kstream *ks, void *dq, void *dk, void *dv,
			  const void *dout, const void *out, const float *lse,
			  const void *q, const void *k, const void *v, long B,
			  long H, long G, long Tq, long Tk, long D, long q0,
			  long k0, float scale)
{
	cudaStream_t s = kcu_stream(ks);
	if (!shape_ok("attention_bwd", B, H, G, D))
		return;
#define FA_BWD(DCH)                                                             \
	bwd_run<T, DCH>(s, (T *)dq, (T *)dk, (T *)dv, (const T *)dout,         \
			(const T *)out, lse, (const T *)q, (const T *)k,       \
			(const T *)v, B, H, G, Tq, Tk, D, q0, k0, scale)
	if (D <= 64)
		FA_BWD(2);
	else if (D <= 128)
		FA_BWD(4);
	else
		FA_BWD(8);
#undef FA_BWD
}

/* Ring attention's merge (kernels.h): one thread block per row. */
template <typename T>
__global__ void merge_k(T *out, float *lse, const T *o, const float *l, long rows, long D)
{
	long r = blockIdx.x;
	float a, b, m, n, wa, wb;
	if (r >= rows)
		return;
	a = lse[r];
	b = l[r];
	if (b == -INFINITY)
		return;
	m = fmaxf(a, b);
	n = m + logf(expf(a - m) + expf(b - m));
	wa = a == -INFINITY ? 0.0f : expf(a - n);
	wb = expf(b - n);
	for (long d = threadIdx.x; d < D; d += blockDim.x)
		st(out + r * D + d, wa * ld(out + r * D + d) + wb * ld(o + r * D + d));
	__syncthreads();
	if (threadIdx.x == 0)
		lse[r] = n;
}

template <typename T>
static void attention_merge(kstream *ks, void *out, float *lse, const void *o,
			    const float *l, long rows, long D)
{
	if (rows > 0 && D > 0)
		merge_k<T><<<(unsigned)rows, 64, 0, kcu_stream(ks)>>>((T *)out, lse,
								   (const T *)o, l, rows, D);
}

void kcu_fill_flash(struct kern_ops *o)
{
	KCU_PICK(o, attention_fwd, attention_fwd);
	KCU_PICK(o, attention_bwd, attention_bwd);
	KCU_PICK(o, attention_merge, attention_merge);
}
