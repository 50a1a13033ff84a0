/*
 * cuda_be.h: the state of the CUDA backend shared by its two files,
 * backend_cuda.c (the operations of backend.h) and backend_cuda_open.c
 * (be_cuda_open: loading the module, agreeing across ranks, NCCL's world
 * communicator).  Nothing else includes it.
 */
#ifndef PPLAN_CUDA_BE_H
#define PPLAN_CUDA_BE_H

#include "backend.h"
#include "cuda_api.h"

#define WHY 512
#define CUDA_INIT_TIMEOUT_S 300.0 /* NCCL bring-up, before a watchdog exists */
#define CUDA_WAIT_DEFAULT_S 600.0 /* any wait, when no watchdog is set */
#define P2P_MAX 64                /* transfers in one p2p_begin/p2p_end */

struct be_group {
	void *comm;               /* NCCL; NULL once aborted */
	MPI_Comm mpi;             /* the executor's, freed with the group */
	int rank, size;
	struct be_group *next;
};

struct alloc_rec {
	void *p;
	size_t bytes;
};

struct cuda_be {
	struct backend b;         /* the executor's view; b.impl points here */
	const struct pplan_cuda_api *api;
	struct pplan_cuda_ctx *ctx;
	char where[96];           /* "host h, rank r" for messages */
	char bus[32];             /* the GPU's PCI address */
	void *world;              /* the NCCL communicator over MPI's world */
	struct be_group *groups;
	int aborted;
	void *order_ev;           /* compute -> communication ordering */
	void *sync_ev[2];
	void **pool;              /* idle completion events */
	int npool, cappool;
	void **marks;             /* timing events, recorded in order */
	int nmarks, capmarks;
	struct alloc_rec *allocs;
	int nallocs, capallocs;
	double base_used, alloc_now, alloc_peak, dev_peak; /* bytes */
	int in_p2p, npend, pend_plain;
	struct be_req *pend[P2P_MAX];
	void *p2p_comm[P2P_MAX];
	int np2p;
	enum pplan_status err_st; /* first failure of a call that returns void */
	struct perr err;
};

extern const struct be_ops cuda_be_ops;

/* A poll step: 0 done, PCU_PENDING not yet, -1 failed (why). */
typedef int (*cuda_step_fn)(struct cuda_be *cuda, void *arg, char *why, size_t len);

/* Polls step until done, reading NCCL's asynchronous errors and asking
 * the watchdog (without one: deadline_s); on failure aborts every
 * communicator and returns the status with the sentence in e. */
enum pplan_status cuda_be_poll(struct cuda_be *cuda, cuda_step_fn step, void *arg,
			       const char *what, double deadline_s, struct perr *err);
/* The step that polls a communicator (arg) until it is ready. */
int cuda_be_step_comm(struct cuda_be *cuda, void *comm, char *why, size_t len);
/* ncclCommAbort on every communicator, once. */
void cuda_be_abort(struct cuda_be *cuda);
/* Frees what is set in backend's state (also a half-opened one). */
void cuda_be_close(struct backend *backend);

/* Keeps the first failure of an operation that returns void, for the
 * next wait or sync (cuda_be_pending). */
void cuda_be_note(struct cuda_be *cuda, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
enum pplan_status cuda_be_pending(struct cuda_be *cuda, struct perr *err);
/* The communication stream waits for the compute issued so far. */
enum pplan_status cuda_be_order(struct cuda_be *cuda, struct perr *err);
/* After an operation is issued on the communication stream: req gets its
 * completion event, or (req NULL) it is waited for now. */
enum pplan_status cuda_be_issued(struct cuda_be *cuda, struct be_req *req,
				 const char *what, struct perr *err);
enum pplan_status cuda_be_wait_event(struct cuda_be *cuda, void *ev, const char *what,
				      struct perr *err);
/* Returns a completion event to the idle pool. */
void cuda_be_pool_put(struct cuda_be *cuda, void *ev);

/* The operations of backend_cuda_comm.c (backend.h says what they do). */
enum pplan_status cuda_be_group_create(struct backend *backend, MPI_Comm comm, int color,
				       int key, struct be_group **out, struct perr *err);
void cuda_be_group_free(struct backend *backend, struct be_group *group);
enum pplan_status cuda_be_allreduce(struct backend *backend, struct be_group *group, void *buf,
				    long count, enum kern_dtype dt, enum be_redop op,
				    struct be_req *req, struct perr *err);
enum pplan_status cuda_be_allgather(struct backend *backend, struct be_group *group, void *out,
				    const void *in, long count, enum kern_dtype dt,
				    struct be_req *req, struct perr *err);
enum pplan_status cuda_be_reducescatter(struct backend *backend, struct be_group *group,
					void *out, const void *in, long count,
					enum kern_dtype dt, struct be_req *req,
					struct perr *err);
enum pplan_status cuda_be_broadcast(struct backend *backend, struct be_group *group, void *buf,
				    long count, enum kern_dtype dt, int root,
				    struct be_req *req, struct perr *err);
void cuda_be_p2p_begin(struct backend *backend);
enum pplan_status cuda_be_p2p_end(struct backend *backend, struct perr *err);
enum pplan_status cuda_be_send(struct backend *backend, struct be_group *group, int peer,
			       const void *buf, size_t bytes, int tag,
			       struct be_req *req, struct perr *err);
enum pplan_status cuda_be_recv(struct backend *backend, struct be_group *group, int peer,
			       void *buf, size_t bytes, int tag, struct be_req *req,
			       struct perr *err);
enum pplan_status cuda_be_wait(struct backend *backend, struct be_req *req, struct perr *err);
int cuda_be_test(struct backend *backend, struct be_req *req);

#endif
