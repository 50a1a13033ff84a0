/*
 * cuda_backend.cu: the module's half of the executor's CUDA backend, the
 * version-2 entries of cuda_api.h: a device context (two non-blocking
 * streams, a cuBLAS handle with its workspace), device memory, row-major
 * GEMMs through cuBLAS, events, and NCCL on nonblocking communicators.
 * Everything that waits is left to the caller (exec/backend_cuda.c),
 * which polls with its watchdog; nothing here blocks on the network.
 *
 * Errors come back as -1 and one sentence naming the call, its file:line
 * and the library's message (CUDA_TRY, CUBLAS_TRY, NCCL_TRY).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"
#include "cuda_common.cuh"

static_assert(sizeof(ncclUniqueId) == PPLAN_NCCL_ID_BYTES,
	      "PPLAN_NCCL_ID_BYTES must be sizeof(ncclUniqueId)");

#define CUBLAS_WORKSPACE_BYTES (32u << 20) /* Hopper's recommended size */

struct pplan_cuda_ctx {
	int dev;
	cudaStream_t s[2];       /* PCU_COMPUTE, PCU_COMM */
	cublasHandle_t blas;
	void *ws;                /* cuBLAS workspace */
};

static void say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	if (!why || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

#define CUDA_TRY(call)                                                         \
	do {                                                                   \
		cudaError_t rc_ = (call);                                      \
		if (rc_ != cudaSuccess) {                                      \
			say(why, len, "%s (%s:%d): %s", #call, __FILE__, __LINE__, \
			    cudaGetErrorString(rc_));                          \
			return -1;                                             \
		}                                                              \
	} while (0)

#define CUBLAS_TRY(call)                                                       \
	do {                                                                   \
		cublasStatus_t rc_ = (call);                                   \
		if (rc_ != CUBLAS_STATUS_SUCCESS) {                            \
			say(why, len, "%s (%s:%d): %s", #call, __FILE__, __LINE__, \
			    cublasGetStatusString(rc_));                       \
			return -1;                                             \
		}                                                              \
	} while (0)

/* NCCL calls on nonblocking communicators may answer ncclInProgress. */
static int nccl_result(ncclResult_t r, const char *call, int line, char *why,
		       size_t len)
{
	if (r == ncclSuccess)
		return 0;
	if (r == ncclInProgress)
		return PCU_PENDING;
	say(why, len, "%s (%s:%d): %s (%s)", call, __FILE__, line,
	    ncclGetErrorString(r), ncclGetLastError(NULL));
	return -1;
}
#define NCCL_TRY(call) nccl_result((call), #call, __LINE__, why, len)

/* ---- context ---------------------------------------------------------- */

static void ctx_close(struct pplan_cuda_ctx *c)
{
	if (!c)
		return;
	if (c->blas)
		cublasDestroy(c->blas);
	if (c->ws)
		cudaFree(c->ws);
	for (int i = 0; i < 2; i++)
		if (c->s[i])
			cudaStreamDestroy(c->s[i]);
	free(c);
}

static int ctx_setup(struct pplan_cuda_ctx *c, char *why, size_t len)
{
	int lo = 0, hi = 0;
	CUDA_TRY(cudaSetDevice(c->dev));
	CUDA_TRY(cudaFree(0)); /* creates the context: fails here without a driver */
	CUDA_TRY(cudaStreamCreateWithFlags(&c->s[PCU_COMPUTE], cudaStreamNonBlocking));
	/* Communication gets the higher priority, so that its kernels start
	 * beside long-running compute (Megatron does the same for NCCL). */
	CUDA_TRY(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CUDA_TRY(cudaStreamCreateWithPriority(&c->s[PCU_COMM], cudaStreamNonBlocking, hi));
	CUBLAS_TRY(cublasCreate(&c->blas));
	CUBLAS_TRY(cublasSetStream(c->blas, c->s[PCU_COMPUTE]));
	CUBLAS_TRY(cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH)); /* no TF32 */
	CUDA_TRY(cudaMalloc(&c->ws, CUBLAS_WORKSPACE_BYTES));
	CUBLAS_TRY(cublasSetWorkspace(c->blas, c->ws, CUBLAS_WORKSPACE_BYTES));
	return 0;
}

static int ctx_open(int dev, struct pplan_cuda_ctx **out, char *why, size_t len)
{
	struct pplan_cuda_ctx *c = (struct pplan_cuda_ctx *)calloc(1, sizeof *c);
	*out = NULL;
	if (!c) {
		say(why, len, "out of host memory");
		return -1;
	}
	c->dev = dev;
	if (ctx_setup(c, why, len) != 0) {
		ctx_close(c);
		return -1;
	}
	*out = c;
	return 0;
}

static void *stream(struct pplan_cuda_ctx *c, int which)
{
	return (void *)c->s[which == PCU_COMM ? PCU_COMM : PCU_COMPUTE];
}

/* ---- memory ----------------------------------------------------------- */

static int mem_alloc(struct pplan_cuda_ctx *c, size_t bytes, void **out,
		     char *why, size_t len)
{
	void *p = NULL;
	*out = NULL;
	CUDA_TRY(cudaMalloc(&p, bytes ? bytes : 256));
	if (cudaMemsetAsync(p, 0, bytes, c->s[PCU_COMPUTE]) != cudaSuccess) {
		cudaFree(p);
		say(why, len, "cudaMemsetAsync of a new allocation failed");
		return -1;
	}
	*out = p;
	return 0;
}

static void mem_free(struct pplan_cuda_ctx *c, void *p)
{
	(void)c;
	if (p)
		cudaFree(p);
}

static int mem_zero(struct pplan_cuda_ctx *c, void *p, size_t bytes, char *why,
		    size_t len)
{
	CUDA_TRY(cudaMemsetAsync(p, 0, bytes, c->s[PCU_COMPUTE]));
	return 0;
}

static int mem_copy(struct pplan_cuda_ctx *c, void *dst, const void *src,
		    size_t bytes, int dir, char *why, size_t len)
{
	cudaStream_t s = c->s[PCU_COMPUTE];
	if (bytes == 0)
		return 0;
	switch (dir) {
	case PCU_H2D:
		CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
		CUDA_TRY(cudaStreamSynchronize(s));
		return 0;
	case PCU_D2H:
		CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
		CUDA_TRY(cudaStreamSynchronize(s));
		return 0;
	case PCU_D2D:
		CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
		return 0;
	}
	say(why, len, "mem_copy: unknown direction %d", dir);
	return -1;
}

static int mem_info(struct pplan_cuda_ctx *c, size_t *free_bytes,
		    size_t *total_bytes)
{
	(void)c;
	return cudaMemGetInfo(free_bytes, total_bytes) == cudaSuccess ? 0 : -1;
}

/* ---- GEMM ------------------------------------------------------------- */

static const char *type_name(int d)
{
	return d == KD_F32 ? "fp32" : d == KD_BF16 ? "bf16" : d == KD_F16 ? "fp16" : "?";
}

static int cuda_type(int d, cudaDataType *t)
{
	switch (d) {
	case KD_F32: *t = CUDA_R_32F; return 0;
	case KD_BF16: *t = CUDA_R_16BF; return 0;
	case KD_F16: *t = CUDA_R_16F; return 0;
	}
	return -1;
}

/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: a
 * row-major matrix with row stride ld is its transpose column-major with
 * leading dimension ld, so cuBLAS gets B before A, n before m, and each
 * operand's own transpose flag. */
static int gemm(struct pplan_cuda_ctx *c, const struct pcu_gemm *g, char *why,
		size_t len)
{
	cudaDataType ab, ct;
	cublasOperation_t oa = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t ob = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	long dims[7] = { g->m, g->n, g->k, g->lda, g->ldb, g->ldc, g->batch };

	if (cuda_type(g->ab_dtype, &ab) != 0 || cuda_type(g->c_dtype, &ct) != 0 ||
	    (g->c_dtype != g->ab_dtype && g->c_dtype != KD_F32)) {
		say(why, len, "gemm: %s inputs with a %s output are not supported",
		    type_name(g->ab_dtype), type_name(g->c_dtype));
		return -1;
	}
	for (int i = 0; i < 7; i++)
		if (dims[i] < 0 || dims[i] > INT_MAX) {
			say(why, len, "gemm: size %ld outside cuBLAS's int range", dims[i]);
			return -1;
		}
	if (g->m == 0 || g->n == 0 || g->batch == 0)
		return 0;
	if (g->batch <= 1)
		CUBLAS_TRY(cublasGemmEx(c->blas, ob, oa, (int)g->n, (int)g->m, (int)g->k,
					&g->alpha, g->B, ab, (int)g->ldb, g->A, ab,
					(int)g->lda, &g->beta, g->C, ct, (int)g->ldc,
					CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	else
		CUBLAS_TRY(cublasGemmStridedBatchedEx(
			c->blas, ob, oa, (int)g->n, (int)g->m, (int)g->k, &g->alpha,
			g->B, ab, (int)g->ldb, g->sB, g->A, ab, (int)g->lda, g->sA,
			&g->beta, g->C, ct, (int)g->ldc, g->sC, (int)g->batch,
			CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	return 0;
}

/* ---- events ----------------------------------------------------------- */

static int event_create(void **ev, int timing, char *why, size_t len)
{
	cudaEvent_t e;
	*ev = NULL;
	CUDA_TRY(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault
						     : cudaEventDisableTiming));
	*ev = (void *)e;
	return 0;
}

static void event_destroy(void *ev)
{
	if (ev)
		cudaEventDestroy((cudaEvent_t)ev);
}

static int event_record(struct pplan_cuda_ctx *c, void *ev, int s, char *why,
			size_t len)
{
	CUDA_TRY(cudaEventRecord((cudaEvent_t)ev, c->s[s == PCU_COMM]));
	return 0;
}

static int event_query(void *ev, char *why, size_t len)
{
	cudaError_t rc = cudaEventQuery((cudaEvent_t)ev);
	if (rc == cudaSuccess)
		return 0;
	if (rc == cudaErrorNotReady)
		return PCU_PENDING;
	say(why, len, "the GPU failed: %s", cudaGetErrorString(rc));
	return -1;
}

static int event_seconds(void *a, void *b, double *seconds)
{
	float ms = 0;
	if (cudaEventElapsedTime(&ms, (cudaEvent_t)a, (cudaEvent_t)b) != cudaSuccess)
		return -1;
	*seconds = ms * 1e-3;
	return 0;
}

static int stream_wait(struct pplan_cuda_ctx *c, int s, void *ev, char *why,
		       size_t len)
{
	CUDA_TRY(cudaStreamWaitEvent(c->s[s == PCU_COMM], (cudaEvent_t)ev, 0));
	return 0;
}

static int check(struct pplan_cuda_ctx *c, char *why, size_t len)
{
	cudaError_t rc;
	(void)c;
	if (kcu_error_take(why, len))
		return -1;
	rc = cudaGetLastError();
	if (rc != cudaSuccess && rc != cudaErrorNotReady) {
		say(why, len, "a kernel launch failed: %s", cudaGetErrorString(rc));
		return -1;
	}
	return 0;
}

/* ---- NCCL ------------------------------------------------------------- */

static int nccl_unique_id(void *id, char *why, size_t len)
{
	return NCCL_TRY(ncclGetUniqueId((ncclUniqueId *)id));
}

static int nccl_init(struct pplan_cuda_ctx *c, const void *id, int nranks,
		     int rank, void **comm, char *why, size_t len)
{
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	ncclUniqueId u;
	ncclComm_t nc = NULL;
	int rc;
	cfg.blocking = 0;
	memcpy(&u, id, sizeof u);
	CUDA_TRY(cudaSetDevice(c->dev));
	rc = NCCL_TRY(ncclCommInitRankConfig(&nc, nranks, u, rank, &cfg));
	*comm = rc < 0 ? NULL : (void *)nc;
	return rc;
}

static int nccl_split(void *parent, int color, int key, void **comm, char *why,
		      size_t len)
{
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	int rc;
	cfg.blocking = 0;
	/* Nonblocking, NCCL may store the new communicator after it returns:
	 * through the caller's pointer, which lives until the split is done
	 * (cuda_api.h). */
	*comm = NULL;
	rc = NCCL_TRY(ncclCommSplit((ncclComm_t)parent,
				    color < 0 ? NCCL_SPLIT_NOCOLOR : color, key,
				    (ncclComm_t *)comm, &cfg));
	if (rc < 0)
		*comm = NULL;
	return rc;
}

static int nccl_poll(void *comm, char *why, size_t len)
{
	ncclResult_t st = ncclSuccess;
	ncclResult_t r = ncclCommGetAsyncError((ncclComm_t)comm, &st);
	if (r != ncclSuccess) {
		say(why, len, "ncclCommGetAsyncError: %s", ncclGetErrorString(r));
		return -1;
	}
	if (st == ncclSuccess)
		return 0;
	if (st == ncclInProgress)
		return PCU_PENDING;
	say(why, len, "NCCL: %s (%s)", ncclGetErrorString(st),
	    ncclGetLastError((ncclComm_t)comm));
	return -1;
}

static int nccl_rank(void *comm, int *rank, int *count)
{
	if (ncclCommUserRank((ncclComm_t)comm, rank) != ncclSuccess ||
	    ncclCommCount((ncclComm_t)comm, count) != ncclSuccess)
		return -1;
	return 0;
}

static int nccl_type(int d, ncclDataType_t *t)
{
	switch (d) {
	case KD_F32: *t = ncclFloat32; return 0;
	case KD_BF16: *t = ncclBfloat16; return 0;
	case KD_F16: *t = ncclFloat16; return 0;
	}
	return -1;
}

static int nccl_coll(struct pplan_cuda_ctx *c, void *comm,
		     const struct pcu_coll_args *a, char *why, size_t len)
{
	ncclComm_t nc = (ncclComm_t)comm;
	cudaStream_t s = c->s[PCU_COMM];
	ncclDataType_t t;
	ncclRedOp_t op = a->redop == PCU_MAX ? ncclMax : ncclSum;
	const void *in = a->in ? a->in : a->out;
	size_t n = (size_t)a->count;

	if (nccl_type(a->dtype, &t) != 0 || a->count < 0) {
		say(why, len, "collective: dtype %d or count %ld not supported",
		    a->dtype, a->count);
		return -1;
	}
	switch (a->op) {
	case PCU_ALLREDUCE:
		return NCCL_TRY(ncclAllReduce(in, a->out, n, t, op, nc, s));
	case PCU_ALLGATHER:
		return NCCL_TRY(ncclAllGather(in, a->out, n, t, nc, s));
	case PCU_REDUCESCATTER:
		return NCCL_TRY(ncclReduceScatter(in, a->out, n, t, op, nc, s));
	case PCU_BROADCAST:
		return NCCL_TRY(ncclBroadcast(in, a->out, n, t, a->root, nc, s));
	}
	say(why, len, "collective: unknown operation %d", (int)a->op);
	return -1;
}

static int nccl_group(int start, char *why, size_t len)
{
	return start ? NCCL_TRY(ncclGroupStart()) : NCCL_TRY(ncclGroupEnd());
}

static int nccl_p2p(struct pplan_cuda_ctx *c, void *comm, int send, void *buf,
		    size_t bytes, int peer, char *why, size_t len)
{
	ncclComm_t nc = (ncclComm_t)comm;
	cudaStream_t s = c->s[PCU_COMM];
	if (send)
		return NCCL_TRY(ncclSend(buf, bytes, ncclUint8, peer, nc, s));
	return NCCL_TRY(ncclRecv(buf, bytes, ncclUint8, peer, nc, s));
}

static void nccl_abort(void *comm)
{
	if (comm)
		ncclCommAbort((ncclComm_t)comm);
}

/* Finalize flushes what was issued; on a nonblocking communicator it
 * answers at once and the state is polled, here for at most 10 s. */
static void nccl_destroy(void *comm)
{
	ncclComm_t nc = (ncclComm_t)comm;
	ncclResult_t r, st = ncclInProgress;
	if (!nc)
		return;
	r = ncclCommFinalize(nc);
	if (r == ncclSuccess || r == ncclInProgress) {
		struct timespec t0, t, nap = { 0, 1000000 };
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			if (ncclCommGetAsyncError(nc, &st) != ncclSuccess ||
			    st != ncclInProgress)
				break;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 10)
				break;
			nanosleep(&nap, NULL);
		}
	}
	if (r == ncclSuccess || r == ncclInProgress) {
		if (st == ncclSuccess) {
			ncclCommDestroy(nc);
			return;
		}
	}
	ncclCommAbort(nc);
}

static void versions(char *buf, size_t len)
{
	int rt = 0, drv = 0, bmaj = 0, bmin = 0, bpat = 0, nv = 0;
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	cublasGetProperty(MAJOR_VERSION, &bmaj);
	cublasGetProperty(MINOR_VERSION, &bmin);
	cublasGetProperty(PATCH_LEVEL, &bpat);
	ncclGetVersion(&nv);
	snprintf(buf, len, "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d, NCCL %d.%d.%d",
		 rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10, bmaj, bmin,
		 bpat, nv / 10000, nv % 10000 / 100, nv % 100);
}

void kcu_fill_api(struct pplan_cuda_api *a)
{
	a->versions = versions;
	a->kernels = kcu_kernels;
	a->ctx_open = ctx_open;
	a->ctx_close = ctx_close;
	a->stream = stream;
	a->mem_alloc = mem_alloc;
	a->mem_free = mem_free;
	a->mem_zero = mem_zero;
	a->mem_copy = mem_copy;
	a->mem_info = mem_info;
	a->gemm = gemm;
	a->event_create = event_create;
	a->event_destroy = event_destroy;
	a->event_record = event_record;
	a->event_query = event_query;
	a->event_seconds = event_seconds;
	a->stream_wait = stream_wait;
	a->check = check;
	a->nccl_unique_id = nccl_unique_id;
	a->nccl_init = nccl_init;
	a->nccl_split = nccl_split;
	a->nccl_poll = nccl_poll;
	a->nccl_rank = nccl_rank;
	a->nccl_coll = nccl_coll;
	a->nccl_group = nccl_group;
	a->nccl_p2p = nccl_p2p;
	a->nccl_abort = nccl_abort;
	a->nccl_destroy = nccl_destroy;
}
