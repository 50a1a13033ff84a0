/*
 * backend.h: what the executor asks of a machine, behind one table.
 *
 * Two implementations, chosen by the build and at run time, never by an
 * #ifdef at a call site:
 *  - cpu  (exec/backend_cpu.c): host memory, OpenBLAS sgemm, the C kernels
 *    of kernels/, MPI collectives and point-to-point (non-blocking, polled);
 *  - cuda (exec/backend_cuda.c, over the dlopened CUDA module): device
 *    memory, cuBLAS GEMMs (bf16/fp16 in, fp32 accumulate; or fp32), the
 *    CUDA kernels, NCCL collectives and grouped ncclSend/ncclRecv on a
 *    communication stream beside the compute stream, CUDA events.
 *
 * Streams.  Compute runs in order on the compute stream.  Communication
 * runs on the communication stream: a collective or transfer issued with
 * a request starts once the compute issued before it is done (an event
 * on the compute stream that the communication stream waits for), and
 * be_ops.wait makes the compute stream (and, for the CPU, the caller)
 * wait for its completion.  Without a request it is complete on return.
 * The CPU backend has no streams: compute is synchronous, communication
 * is an MPI request that wait polls.
 *
 * Waiting never blocks forever: every wait polls, and gives up with
 * PPLAN_ESYSTEM when the executor's watchdog (struct be_watch) says so
 * (timeout, a signal, a failed peer), naming what it waited for.
 *
 * Timing.  mark() records a point on the compute stream (the host clock
 * on the CPU, a CUDA event on CUDA); after sync(), mark_seconds() gives
 * each point in seconds since the step's first mark.
 *
 * Ownership: the executor owns the struct backend (be_open/be_close);
 * memory from alloc is freed with free; groups with group_free.
 */
#ifndef PPLAN_BACKEND_H
#define PPLAN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "kernels.h"
#include "status.h"

enum be_kind { BE_CPU = 0, BE_CUDA };

/* The longest nap of a backend's wait loop, ns: a waiter notices its
 * transfer at most that late.  (Naps of up to 1.3 ms had added 0.5-1.2
 * ms to each pipeline receive that waited through a peer's microbatch,
 * against a 0.1 ms transfer, and the report counted it as communication.) */
#define BE_WAIT_NAP_MAX_NS 50000L
enum be_redop { BE_SUM = 0, BE_MAX };

struct backend;
struct be_group; /* a communicator over some ranks */

/* A pending communication.  Plain data the caller keeps until wait. */
struct be_req {
	int active;
	MPI_Request mpi;      /* cpu */
	void *event;          /* cuda: completion event on the comm stream */
	double post_s;        /* host time when issued (trace of comm ops) */
	const char *what;     /* what is being waited for, for messages */
};

/* The executor's watchdog: a wait asks it whether to give up. */
struct be_watch {
	/* 0 to keep waiting; else a status and a sentence in e. */
	enum pplan_status (*check)(void *ctx, const char *what, double waited_s,
				   struct perr *e);
	void *ctx;
};

/* What memory holds, in bytes (backend ops memory). */
struct be_memory {
	double own_now, own_peak;  /* pplan's own buffers */
	double process_peak;       /* the device's or the process's high-water mark */
};

struct be_ops {
	const char *name;        /* "cpu", "cuda" */

	/* ---- memory ---- */
	void *(*alloc)(struct backend *backend, size_t bytes);  /* zeroed; NULL: none left */
	void (*free)(struct backend *backend, void *p);
	void (*zero)(struct backend *backend, void *p, size_t bytes);
	void (*to_device)(struct backend *backend, void *dst, const void *src, size_t n);
	void (*to_host)(struct backend *backend, void *dst, const void *src, size_t n);
	void (*copy)(struct backend *backend, void *dst, const void *src, size_t n);

	/* ---- GEMM, row-major ----
	 * C (m,n) = alpha * op(A) (m,k) * op(B) (k,n) + beta * C, op = transpose
	 * when ta/tb; lda, ldb, ldc are the row strides of A, B, C as stored.
	 * A and B are of the backend's dtype; C of c_dtype (the dtype, or
	 * KD_F32 for fp32 weight gradients); fp32 accumulation. */
	void (*gemm)(struct backend *backend, int ta, int tb, long m, long n, long k,
		     float alpha, const void *A, long lda, const void *B, long ldb,
		     float beta, void *C, long ldc, enum kern_dtype c_dtype);
	/* batch GEMMs, matrix i at A + i*sA elements (likewise B, C). */
	void (*gemm_batched)(struct backend *backend, int ta, int tb, long m, long n,
			     long k, float alpha, const void *A, long lda, long sA,
			     const void *B, long ldb, long sB, float beta, void *C,
			     long ldc, long sC, long batch, enum kern_dtype c_dtype);

	/* ---- groups ----
	 * A communicator over the ranks of `comm` (made by the executor with
	 * MPI_Comm_split from sim's rank map; color and key as given there, so
	 * that NCCL splits the same way).  Collective over the world: every
	 * rank calls it for every split, in the same order; a rank outside the
	 * group passes color < 0 (comm MPI_COMM_NULL) and gets *out = NULL.
	 * The group owns comm (group_free frees it). */
	enum pplan_status (*group_create)(struct backend *backend, MPI_Comm comm,
					  int color, int key,
					  struct be_group **out, struct perr *err);
	void (*group_free)(struct backend *backend, struct be_group *group);

	/* ---- collectives on a group ----
	 * counts are elements of dtype; allgather/reducescatter counts are
	 * per rank (in and out of the local shard).  req NULL: complete on
	 * return (still polled). */
	enum pplan_status (*allreduce)(struct backend *backend, struct be_group *group,
				       void *buf, long count, enum kern_dtype dt,
				       enum be_redop op, struct be_req *req,
				       struct perr *err);
	enum pplan_status (*allgather)(struct backend *backend, struct be_group *group,
				       void *out, const void *in, long count,
				       enum kern_dtype dt, struct be_req *req,
				       struct perr *err);
	enum pplan_status (*reducescatter)(struct backend *backend, struct be_group *group,
					   void *out, const void *in, long count,
					   enum kern_dtype dt, struct be_req *req,
					   struct perr *err);
	enum pplan_status (*broadcast)(struct backend *backend, struct be_group *group,
				       void *buf, long count, enum kern_dtype dt,
				       int root, struct be_req *req, struct perr *err);

	/* ---- point-to-point on a group (peer = rank in the group) ----
	 * Sends and receives issued between p2p_begin and p2p_end go out
	 * together (ncclGroupStart/End, as Megatron batches them). */
	void (*p2p_begin)(struct backend *backend);
	enum pplan_status (*p2p_end)(struct backend *backend, struct perr *err);
	enum pplan_status (*send)(struct backend *backend, struct be_group *group, int peer,
				  const void *buf, size_t bytes, int tag,
				  struct be_req *req, struct perr *err);
	enum pplan_status (*recv)(struct backend *backend, struct be_group *group, int peer,
				  void *buf, size_t bytes, int tag,
				  struct be_req *req, struct perr *err);

	/* ---- completion ---- */
	/* Waits for req (polling; the watchdog may end it). */
	enum pplan_status (*wait)(struct backend *backend, struct be_req *req,
				  struct perr *err);
	/* 1 if req is complete (then it is finished as by wait), else 0. */
	int (*test)(struct backend *backend, struct be_req *req);
	/* Waits for everything issued on both streams. */
	enum pplan_status (*sync)(struct backend *backend, struct perr *err);

	/* ---- timing ---- */
	/* Clears the marks: the next mark is the step's origin. */
	void (*marks_reset)(struct backend *backend);
	/* Records a point on the compute stream; returns its index. */
	int (*mark)(struct backend *backend);
	/* Seconds from the origin to mark i (after sync). */
	double (*mark_seconds)(struct backend *backend, int i);

	/* ---- the device ---- */
	/* Bytes: pplan's own buffers (what alloc handed out) now and at
	 * their peak, and the device's or the process's high-water mark,
	 * which holds the runtime's buffers too (MPI, BLAS, the CUDA
	 * context, cuBLAS's and NCCL's). */
	void (*memory)(struct backend *backend, struct be_memory *mem);
	void (*close)(struct backend *backend);
};

struct backend {
	const struct be_ops *ops;
	const struct kern_ops *k;    /* the kernels, of dtype below */
	kstream *ks;                 /* the stream to pass them: the compute
				      * stream (NULL on the CPU) */
	enum kern_dtype dtype;       /* activations and compute weights */
	enum be_kind kind;
	struct be_watch watch;
	char device[128];            /* "cpu: 2 cores, ...", "NVIDIA H200 (0000:19:00.0)" */
	char libraries[256];         /* "OpenBLAS 0.3.21, Open MPI 4.1.4" */
	double device_bytes;         /* the GPU's memory (CUDA); 0 on the CPU */
	int local_rank;
	void *impl;                  /* the implementation's state */
};

/* Waits for an MPI request the way every wait here does: polling (spin,
 * then yield, then sleep in growing steps), asking the watchdog watch (may
 * be NULL) now and then; `what` names it in the watchdog's message. */
enum pplan_status be_mpi_wait(const struct be_watch *watch, MPI_Request *r,
			      const char *what, struct perr *err);

/* The CPU backend (fp32).  *out is the caller's (b->ops->close). */
enum pplan_status be_cpu_open(int local_rank, struct backend **out,
			      struct perr *err);

/* The CUDA backend, one GPU per rank of the node communicator `node` (the
 * node-local rank's, or the one GPU a launcher left each rank), with
 * `dtype` compute precision; collective over world.  PPLAN_ENOTFOUND with
 * the reason in e where no module, driver or GPU answers, or where ranks
 * would share a GPU (the caller may fall back to the CPU). */
enum pplan_status be_cuda_open(MPI_Comm node, enum kern_dtype dtype,
			       MPI_Comm world, struct backend **out,
			       struct perr *err);

/* ---- the MPI side every rank program shares (exec/bringup.c): pplan exec
 * and pplan calibrate bring MPI up with exec_mpi_init (exec.h) and agree
 * on a status with this one function. */

/* Every rank's status becomes the worst of them, with the sentence of the
 * lowest rank that failed; collective over comm. */
enum pplan_status exec_agree_comm(MPI_Comm comm, enum pplan_status st,
				  struct perr *err);

#endif
