/*
 * cuda_api.h: the C interface of the CUDA module (libpplan_cuda.so).
 *
 * All CUDA code is built into one shared module that pplan dlopens at run
 * time (docs/install.md): the module exports one extern "C" function,
 * pplan_cuda_get_api(version), returning a table of plain C function
 * pointers.  Where the module, the driver or a GPU is missing, the loader
 * (topology/cudamod.h) says why and pplan runs its CPU paths.  This header
 * includes no CUDA header, so plain C code (topology/, exec/) may use it.
 *
 * Version 1 held what topology discovery needs when NVML is absent:
 * device identities and peer-to-peer attributes.  Version 2 adds what the
 * executor's CUDA backend (exec/backend_cuda.c) needs: the kernels of
 * kernels.h for each storage type, a device context with a compute and a
 * communication stream and a cuBLAS handle, device memory, GEMMs, events,
 * and NCCL.  The module links cudart (static), cuBLAS and NCCL, never
 * libcuda and never MPI: the C side does the MPI part (broadcasting the
 * NCCL unique id) and every wait, so that the executor's watchdog decides
 * when to give up.
 *
 * Conventions of the version-2 entries: an int result is 0 when done,
 * PCU_PENDING when the operation is in progress (NCCL's nonblocking
 * communicators: poll nccl_poll on the communicator until it is not
 * pending before the next NCCL call on it), -1 on failure with one
 * sentence in why (why may be NULL when the caller does not want it).
 * Pointers named ev are CUDA events, comm NCCL communicators, stream
 * selects PCU_COMPUTE or PCU_COMM of the context.
 */
#ifndef PPLAN_CUDA_API_H
#define PPLAN_CUDA_API_H

#include <stddef.h>

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PPLAN_CUDA_API_VERSION 2
#define PPLAN_CUDA_ENTRY "pplan_cuda_get_api"
#define PPLAN_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */
#define PCU_PENDING 1

struct pplan_cuda_p2p {
	int access;          /* cudaDeviceCanAccessPeer */
	int native_atomics;  /* cudaDevP2PAttrNativeAtomicSupported: NVLink, not PCIe */
	int perf_rank;       /* cudaDevP2PAttrPerformanceRank, 0 = best */
};

/* One device's state in the module: the device, a compute and a
 * communication stream, a cuBLAS handle and its workspace.  Opaque. */
struct pplan_cuda_ctx;

enum pcu_stream { PCU_COMPUTE = 0, PCU_COMM = 1 };
enum pcu_copy { PCU_H2D = 0, PCU_D2H, PCU_D2D };
enum pcu_coll { PCU_ALLREDUCE = 0, PCU_ALLGATHER, PCU_REDUCESCATTER, PCU_BROADCAST };
enum pcu_redop { PCU_SUM = 0, PCU_MAX };

/* A row-major GEMM as exec/backend.h states it: C (m,n) = alpha op(A)
 * op(B) + beta C; batch > 1 makes it strided batched (matrix i at A + i*sA
 * elements, likewise B, C).  A and B of ab_dtype, C of c_dtype (enum
 * kern_dtype); fp32 accumulation, no TF32. */
struct pcu_gemm {
	int ta, tb;
	long m, n, k;
	float alpha, beta;
	const void *A, *B;
	void *C;
	long lda, ldb, ldc;
	long sA, sB, sC;
	long batch;
	int ab_dtype, c_dtype;
};

/* A collective on the communication stream.  count: elements of dtype;
 * for all-gather the elements each rank sends, for reduce-scatter the
 * elements each rank receives.  root: broadcast only. */
struct pcu_coll_args {
	enum pcu_coll op;
	void *out;
	const void *in;
	long count;
	int dtype;     /* enum kern_dtype */
	enum pcu_redop redop;
	int root;
};

struct pplan_cuda_api {
	int version;

	/* ---- devices (version 1) ---- */
	/* Number of devices (>= 0), or -1 with one sentence in why. */
	int (*device_count)(char *why, size_t len);
	/* 0 and the PCI bus id ("0000:34:00.0") and name of device dev. */
	int (*device_info)(int dev, char *bus_id, size_t bus_len, char *name,
			   size_t name_len);
	/* 0 and the peer-to-peer attributes from src to dst. */
	int (*p2p)(int src, int dst, struct pplan_cuda_p2p *out);

	/* ---- the executor's backend (version 2) ---- */
	/* "CUDA runtime 13.0, driver 12.8, cuBLAS 13.1.0, NCCL 2.28.9". */
	void (*versions)(char *buf, size_t len);
	/* The kernels of kernels.h storing dtype (enum kern_dtype), or NULL. */
	const struct kern_ops *(*kernels)(int dtype);

	/* Makes dev current in this thread and opens its context; *out is
	 * the caller's (ctx_close). */
	int (*ctx_open)(int dev, struct pplan_cuda_ctx **out, char *why, size_t len);
	void (*ctx_close)(struct pplan_cuda_ctx *ctx);
	/* The cudaStream_t of a stream, for the kernels' kstream. */
	void *(*stream)(struct pplan_cuda_ctx *ctx, int stream);

	/* Device memory: zeroed on allocation; mem_zero and PCU_D2D copies
	 * are ordered on the compute stream, PCU_H2D and PCU_D2H copies are
	 * complete on return (after the compute stream's earlier work). */
	int (*mem_alloc)(struct pplan_cuda_ctx *ctx, size_t bytes, void **out,
			 char *why, size_t len);
	void (*mem_free)(struct pplan_cuda_ctx *ctx, void *p);
	int (*mem_zero)(struct pplan_cuda_ctx *ctx, void *p, size_t bytes, char *why,
			size_t len);
	int (*mem_copy)(struct pplan_cuda_ctx *ctx, void *dst, const void *src,
			size_t bytes, int dir, char *why, size_t len);
	/* cudaMemGetInfo. */
	int (*mem_info)(struct pplan_cuda_ctx *ctx, size_t *free_bytes,
			size_t *total_bytes);

	/* cuBLAS on the compute stream. */
	int (*gemm)(struct pplan_cuda_ctx *ctx, const struct pcu_gemm *g, char *why,
		    size_t len);

	/* Events: timing ones for marks, the others for completion. */
	int (*event_create)(void **ev, int timing, char *why, size_t len);
	void (*event_destroy)(void *ev);
	int (*event_record)(struct pplan_cuda_ctx *ctx, void *ev, int stream,
			    char *why, size_t len);
	/* 0 done, PCU_PENDING not yet, -1 failed (the device's sticky error). */
	int (*event_query)(void *ev, char *why, size_t len);
	/* Seconds from event a to event b, both done. */
	int (*event_seconds)(void *a, void *b, double *seconds);
	/* Work issued later on stream waits for ev. */
	int (*stream_wait)(struct pplan_cuda_ctx *ctx, int stream, void *ev,
			   char *why, size_t len);
	/* The first kernel argument or launch error since the last call
	 * (then cleared): -1 with the sentence, else 0. */
	int (*check)(struct pplan_cuda_ctx *ctx, char *why, size_t len);

	/* NCCL.  Communicators are nonblocking: init, split, collectives and
	 * group ends may return PCU_PENDING. */
	int (*nccl_unique_id)(void *id, char *why, size_t len);
	int (*nccl_init)(struct pplan_cuda_ctx *ctx, const void *id, int nranks,
			 int rank, void **comm, char *why, size_t len);
	/* color < 0: this rank takes no part (*comm NULL); ranks ordered by
	 * key, then by rank in the parent, as MPI_Comm_split orders them.
	 * Nonblocking: *comm may be stored after the call returns, so it must
	 * live until the parent and the new communicator poll ready. */
	int (*nccl_split)(void *parent, int color, int key, void **comm,
			  char *why, size_t len);
	/* The communicator's state: 0 ready, PCU_PENDING, -1 an (asynchronous)
	 * error. */
	int (*nccl_poll)(void *comm, char *why, size_t len);
	int (*nccl_rank)(void *comm, int *rank, int *count);
	int (*nccl_coll)(struct pplan_cuda_ctx *ctx, void *comm,
			 const struct pcu_coll_args *args, char *why, size_t len);
	/* start 1: ncclGroupStart; 0: ncclGroupEnd. */
	int (*nccl_group)(int start, char *why, size_t len);
	/* send 1: ncclSend, 0: ncclRecv; bytes as ncclUint8 elements. */
	int (*nccl_p2p)(struct pplan_cuda_ctx *ctx, void *comm, int send, void *buf,
			size_t bytes, int peer, char *why, size_t len);
	/* Ends the communicator now, pending operations included. */
	void (*nccl_abort)(void *comm);
	/* Finalizes and frees it (aborts it if finalizing does not end). */
	void (*nccl_destroy)(void *comm);
};

typedef const struct pplan_cuda_api *(*pplan_cuda_get_api_fn)(int version);

/* The module's entry point: the table for `version`, or NULL. */
const struct pplan_cuda_api *pplan_cuda_get_api(int version);

#ifdef __cplusplus
}
#endif

#endif
