/*
 * backend_cuda_comm.c: the communication of the CUDA backend (backend.h):
 * groups as NCCL communicators split from the world one, collectives,
 * grouped point-to-point transfers, and waiting for them.  The stream
 * ordering, the polling and the failure handling it uses are in
 * backend_cuda.c (cuda_be.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_be.h"

static struct cuda_be *cb(struct backend *b)
{
	return b->impl;
}

/* The communicators of the current point-to-point group. */
static int step_p2p(struct cuda_be *c, void *unused, char *why, size_t len)
{
	int rc = 0;
	(void)unused;
	for (int i = 0; i < c->np2p; i++) {
		int r = c->api->nccl_poll(c->p2p_comm[i], why, len);
		if (r < 0)
			return -1;
		if (r == PCU_PENDING)
			rc = PCU_PENDING;
	}
	return rc;
}

/* arg: the new communicator's handle, which NCCL may store late; a
 * member's is pending until it is there (the poll's deadline bounds it). */
struct split_wait {
	void **comm;
	int member;
	double parent_done; /* when the parent polled ready (0: not yet) */
};

#define SPLIT_LATE_S 10.0 /* the new handle's wait once the parent is ready */

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int step_split(struct cuda_be *c, void *arg, char *why, size_t len)
{
	struct split_wait *w = arg;
	int a = cuda_be_step_comm(c, c->world, why, len), b2;
	if (a < 0)
		return -1;
	if (!*w->comm) {
		if (!w->member || a == PCU_PENDING)
			return a;
		if (w->parent_done == 0)
			w->parent_done = mono_s();
		if (mono_s() - w->parent_done < SPLIT_LATE_S)
			return PCU_PENDING;
		snprintf(why, len, "NCCL's split gave this rank no communicator %.0f s after its parent was ready",
			 SPLIT_LATE_S);
		return -1;
	}
	b2 = cuda_be_step_comm(c, *w->comm, why, len);
	if (b2 < 0)
		return -1;
	return a == PCU_PENDING || b2 == PCU_PENDING ? PCU_PENDING : 0;
}

enum pplan_status cuda_be_group_create(struct backend *b, MPI_Comm comm,
					 int color, int key,
					 struct be_group **out, struct perr *e)
{
	struct cuda_be *c = cb(b);
	struct be_group *g;
	void *nc = NULL;
	struct split_wait wait;
	char why[WHY];
	int r, mrank = -1, msize = 0;
	enum pplan_status st;

	*out = NULL;
	if (!c->world)
		return perr_set(e, PPLAN_ESYSTEM, "%s: NCCL was aborted", c->where);
	if (color == MPI_UNDEFINED || color < 0)
		color = -1;
	r = c->api->nccl_split(c->world, color, key, &nc, why, sizeof why);
	if (r < 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	wait.comm = &nc;
	wait.member = color >= 0;
	wait.parent_done = 0;
	if ((st = cuda_be_poll(c, step_split, &wait, "an NCCL communicator split",
			     CUDA_INIT_TIMEOUT_S, e)) != PPLAN_OK)
		return st;
	if (!nc) {
		if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
			MPI_Comm_free(&comm);
		return PPLAN_OK;
	}
	if (comm != MPI_COMM_NULL) {
		MPI_Comm_rank(comm, &mrank);
		MPI_Comm_size(comm, &msize);
	}
	g = calloc(1, sizeof *g);
	if (!g) {
		c->api->nccl_destroy(nc);
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for a communicator");
	}
	g->comm = nc;
	g->mpi = comm;
	if (c->api->nccl_rank(nc, &g->rank, &g->size) != 0 || g->rank != mrank ||
	    g->size != msize) {
		c->api->nccl_destroy(nc);
		free(g);
		return perr_set(e, PPLAN_ESYSTEM,
				"%s: the NCCL split (color %d, key %d) disagrees with MPI's (rank %d of %d)",
				c->where, color, key, mrank, msize);
	}
	g->next = c->groups;
	c->groups = g;
	*out = g;
	return PPLAN_OK;
}

void cuda_be_group_free(struct backend *b, struct be_group *g)
{
	struct cuda_be *c = cb(b);
	if (!g)
		return;
	for (struct be_group **p = &c->groups; *p; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	if (g->comm)
		c->api->nccl_destroy(g->comm);
	if (g->mpi != MPI_COMM_NULL && g->mpi != MPI_COMM_WORLD)
		MPI_Comm_free(&g->mpi);
	free(g);
}

/* ---- collectives ------------------------------------------------------ */

static enum pplan_status coll(struct backend *b, struct be_group *g,
			      enum pcu_coll op, void *out, const void *in,
			      long count, enum kern_dtype dt, enum be_redop rop,
			      int root, struct be_req *req, const char *what,
			      struct perr *e)
{
	struct cuda_be *c = cb(b);
	struct pcu_coll_args a = {
		.op = op, .out = out, .in = in, .count = count, .dtype = dt,
		.redop = rop == BE_MAX ? PCU_MAX : PCU_SUM, .root = root,
	};
	char why[WHY];
	enum pplan_status st;
	int r;

	if (req)
		req->active = 0;
	if ((st = cuda_be_pending(c, e)) != PPLAN_OK)
		return st;
	if (!g || !g->comm)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s on a group this rank is not in, or one aborted",
				c->where, what);
	if ((st = cuda_be_order(c, e)) != PPLAN_OK)
		return st;
	r = c->api->nccl_coll(c->ctx, g->comm, &a, why, sizeof why);
	if (r < 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	if (r == PCU_PENDING &&
	    (st = cuda_be_poll(c, cuda_be_step_comm, g->comm, what, CUDA_WAIT_DEFAULT_S, e)) != PPLAN_OK)
		return st;
	return cuda_be_issued(c, req, what, e);
}

enum pplan_status cuda_be_allreduce(struct backend *b, struct be_group *g,
				      void *buf, long count, enum kern_dtype dt,
				      enum be_redop op, struct be_req *req,
				      struct perr *e)
{
	return coll(b, g, PCU_ALLREDUCE, buf, buf, count, dt, op, 0, req,
		    "an all-reduce", e);
}

enum pplan_status cuda_be_allgather(struct backend *b, struct be_group *g,
				      void *out, const void *in, long count,
				      enum kern_dtype dt, struct be_req *req,
				      struct perr *e)
{
	return coll(b, g, PCU_ALLGATHER, out, in, count, dt, BE_SUM, 0, req,
		    "an all-gather", e);
}

enum pplan_status cuda_be_reducescatter(struct backend *b, struct be_group *g,
					  void *out, const void *in, long count,
					  enum kern_dtype dt, struct be_req *req,
					  struct perr *e)
{
	return coll(b, g, PCU_REDUCESCATTER, out, in, count, dt, BE_SUM, 0, req,
		    "a reduce-scatter", e);
}

enum pplan_status cuda_be_broadcast(struct backend *b, struct be_group *g,
				      void *buf, long count, enum kern_dtype dt,
				      int root, struct be_req *req, struct perr *e)
{
	return coll(b, g, PCU_BROADCAST, buf, buf, count, dt, BE_SUM, root, req,
		    "a broadcast", e);
}

/* ---- point-to-point --------------------------------------------------- */

void cuda_be_p2p_begin(struct backend *b)
{
	struct cuda_be *c = cb(b);
	struct perr e;
	char why[WHY];
	c->in_p2p = 1;
	c->npend = c->np2p = c->pend_plain = 0;
	if (cuda_be_order(c, &e) != PPLAN_OK) {
		cuda_be_note(c, "%s", e.msg);
		return;
	}
	if (c->api->nccl_group(1, why, sizeof why) < 0)
		cuda_be_note(c, "%s", why);
}

enum pplan_status cuda_be_p2p_end(struct backend *b, struct perr *e)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	enum pplan_status st;
	int r;

	if (!c->in_p2p)
		return PPLAN_OK;
	c->in_p2p = 0;
	r = c->api->nccl_group(0, why, sizeof why);
	if ((st = cuda_be_pending(c, e)) != PPLAN_OK)
		return st;
	if (r < 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	if (r == PCU_PENDING &&
	    (st = cuda_be_poll(c, step_p2p, NULL, "a group of transfers",
			     CUDA_WAIT_DEFAULT_S, e)) != PPLAN_OK)
		return st;
	for (int i = 0; i < c->npend; i++)
		if ((st = cuda_be_issued(c, c->pend[i], c->pend[i]->what, e)) != PPLAN_OK)
			return st;
	if (c->pend_plain)
		return cuda_be_issued(c, NULL, "a transfer", e);
	return PPLAN_OK;
}

/* Queues one transfer in the open group. */
static enum pplan_status p2p_queue(struct cuda_be *c, struct be_group *g, int peer,
				   void *buf, size_t bytes, int send,
				   struct be_req *req, const char *what,
				   struct perr *e)
{
	char why[WHY];
	enum pplan_status st;
	int seen = 0;

	if ((st = cuda_be_pending(c, e)) != PPLAN_OK)
		return st;
	if (c->npend == P2P_MAX)
		return perr_set(e, PPLAN_EINPUT, "%s: more than %d transfers in one group",
				c->where, P2P_MAX);
	if (c->api->nccl_p2p(c->ctx, g->comm, send, buf, bytes, peer, why, sizeof why) < 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s, %s rank %d of the group",
				c->where, why, send ? "sending to" : "receiving from", peer);
	for (int i = 0; i < c->np2p; i++)
		seen |= c->p2p_comm[i] == g->comm;
	if (!seen)
		c->p2p_comm[c->np2p++] = g->comm;
	if (req) {
		if (!req->what)
			req->what = what;
		c->pend[c->npend++] = req;
	} else {
		c->pend_plain = 1;
	}
	return PPLAN_OK;
}

/* A transfer outside p2p_begin/p2p_end is a group of its own. */
static enum pplan_status p2p(struct backend *b, struct be_group *g, int peer,
			     void *buf, size_t bytes, int send,
			     struct be_req *req, struct perr *e)
{
	struct cuda_be *c = cb(b);
	const char *what = send ? "a send" : "a receive";
	enum pplan_status st, end;
	int alone = !c->in_p2p;

	if (req)
		req->active = 0;
	if (!g || !g->comm)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s on a group this rank is not in, or one aborted",
				c->where, what);
	if (alone)
		cuda_be_p2p_begin(b);
	st = p2p_queue(c, g, peer, buf, bytes, send, req, what, e);
	if (!alone)
		return st;
	if (st != PPLAN_OK) {
		c->npend = c->pend_plain = 0; /* close the group, report the first error */
		cuda_be_p2p_end(b, NULL);
		return st;
	}
	end = cuda_be_p2p_end(b, e);
	return end;
}

enum pplan_status cuda_be_send(struct backend *b, struct be_group *g, int peer,
				 const void *buf, size_t bytes, int tag,
				 struct be_req *req, struct perr *e)
{
	(void)tag;
	return p2p(b, g, peer, (void *)buf, bytes, 1, req, e);
}

enum pplan_status cuda_be_recv(struct backend *b, struct be_group *g, int peer,
				 void *buf, size_t bytes, int tag,
				 struct be_req *req, struct perr *e)
{
	(void)tag;
	return p2p(b, g, peer, buf, bytes, 0, req, e);
}

/* ---- completion ------------------------------------------------------- */

enum pplan_status cuda_be_wait(struct backend *b, struct be_req *req,
				 struct perr *e)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	enum pplan_status st;
	if (!req || !req->active)
		return cuda_be_pending(c, e);
	req->active = 0;
	st = cuda_be_wait_event(c, req->event, req->what ? req->what : "a transfer", e);
	if (st != PPLAN_OK)
		return st;
	if (c->api->stream_wait(c->ctx, PCU_COMPUTE, req->event, why, sizeof why) != 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	cuda_be_pool_put(c, req->event);
	req->event = NULL;
	return cuda_be_pending(c, e);
}

int cuda_be_test(struct backend *b, struct be_req *req)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	int r;
	if (!req->active)
		return 1;
	r = c->api->event_query(req->event, why, sizeof why);
	if (r == PCU_PENDING)
		return 0;
	req->active = 0;
	if (r < 0) {
		cuda_be_note(c, "%s, waiting for %s", why, req->what ? req->what : "a transfer");
		return 1;
	}
	if (c->api->stream_wait(c->ctx, PCU_COMPUTE, req->event, why, sizeof why) != 0)
		cuda_be_note(c, "%s", why);
	cuda_be_pool_put(c, req->event);
	req->event = NULL;
	return 1;
}

