/*
 * backend_cuda.c: the CUDA backend of backend.h, over pplan's dlopened
 * CUDA module (kernels/cuda_api.h, loaded by kernels/cudamod.h).
 *
 * The module does the CUDA, cuBLAS and NCCL calls; this file does the MPI
 * part (the NCCL unique id broadcast over the world communicator, the
 * agreement of all ranks on whether every one has a GPU) and every wait:
 * completion is a CUDA event, polled with cudaEventQuery while NCCL's
 * asynchronous errors are read on every communicator and the executor's
 * watchdog is asked; when either gives up, every communicator is aborted
 * (ncclCommAbort) so that no kernel stays stuck on the device.
 *
 * This file: polling and failure, stream ordering and completion events,
 * memory, GEMMs, timing marks; backend_cuda_comm.c: groups, collectives
 * and transfers; backend_cuda_open.c: be_cuda_open; cuda_be.h: the state.
 *
 * Streams (backend.h): kernels, GEMMs and copies run on the compute
 * stream; each collective or transfer first makes the communication
 * stream wait for an event recorded on the compute stream, runs there,
 * and records a completion event; wait() makes the compute stream wait
 * for that event.  Groups are NCCL communicators split from the world
 * one with the executor's color and key (ncclCommSplit is collective over
 * world: every rank calls group_create, in the same order, with color
 * MPI_UNDEFINED or < 0 where it takes no part and gets a NULL group).
 * Point-to-point tags are not NCCL's: matching is by issue order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_be.h"

static struct cuda_be *cb(struct backend *b)
{
	return b->impl;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Keeps the first failure of a void call for the next wait or sync. */
void cuda_be_note(struct cuda_be *c, const char *fmt, ...)
{
	va_list ap;
	char msg[WHY];
	if (c->err_st != PPLAN_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->err_st = perr_set(&c->err, PPLAN_ESYSTEM, "%s: %s", c->where, msg);
}

enum pplan_status cuda_be_pending(struct cuda_be *c, struct perr *e)
{
	if (c->err_st != PPLAN_OK && e)
		*e = c->err;
	return c->err_st;
}

/* ---- failure: abort every communicator -------------------------------- */

void cuda_be_abort(struct cuda_be *c)
{
	if (c->aborted)
		return;
	c->aborted = 1;
	for (struct be_group *g = c->groups; g; g = g->next) {
		c->api->nccl_abort(g->comm);
		g->comm = NULL;
	}
	c->api->nccl_abort(c->world);
	c->world = NULL;
}

/* 1 with the sentence when a communicator reports an asynchronous error. */
static int comms_failed(struct cuda_be *c, char *why, size_t len)
{
	char msg[WHY];
	if (c->world && c->api->nccl_poll(c->world, msg, sizeof msg) < 0) {
		snprintf(why, len, "the world communicator: %s", msg);
		return 1;
	}
	for (struct be_group *g = c->groups; g; g = g->next)
		if (g->comm && c->api->nccl_poll(g->comm, msg, sizeof msg) < 0) {
			snprintf(why, len, "a communicator of %d ranks: %s", g->size, msg);
			return 1;
		}
	return 0;
}

/* ---- polling ---------------------------------------------------------- */

static int step_event(struct cuda_be *c, void *ev, char *why, size_t len)
{
	return c->api->event_query(ev, why, len);
}

int cuda_be_step_comm(struct cuda_be *c, void *comm, char *why, size_t len)
{
	return comm ? c->api->nccl_poll(comm, why, len) : 0;
}

/* Polls step until done: spins first (waits are often short and their
 * end is timed), then sleeps in growing naps (BE_WAIT_NAP_MAX_NS at
 * most); reads NCCL's asynchronous
 * errors and asks the watchdog (or, without one, a deadline).  On any
 * failure every communicator is aborted. */
enum pplan_status cuda_be_poll(struct cuda_be *c, cuda_step_fn step, void *arg,
			       const char *what, double deadline_s, struct perr *e)
{
	double t0 = now_s();
	long spins = 0, nap_ns = 2000;
	char why[WHY];

	for (;;) {
		int r = step(c, arg, why, sizeof why);
		double waited;
		if (r == 0)
			return PPLAN_OK;
		if (r < 0) {
			cuda_be_abort(c);
			return perr_set(e, PPLAN_ESYSTEM, "%s: %s, waiting for %s",
					c->where, why, what);
		}
		if (++spins < 1000)
			continue;
		if (comms_failed(c, why, sizeof why)) {
			cuda_be_abort(c);
			return perr_set(e, PPLAN_ESYSTEM, "%s: NCCL failed on %s, waiting for %s",
					c->where, why, what);
		}
		waited = now_s() - t0;
		if (c->b.watch.check) {
			enum pplan_status st = c->b.watch.check(c->b.watch.ctx, what, waited, e);
			if (st != PPLAN_OK) {
				cuda_be_abort(c);
				return st;
			}
		} else if (waited > deadline_s) {
			cuda_be_abort(c);
			return perr_set(e, PPLAN_ESYSTEM, "%s: %s did not finish in %.0f s",
					c->where, what, deadline_s);
		}
		{
			struct timespec ts = { 0, nap_ns };
			nanosleep(&ts, NULL);
			if (nap_ns * 2 <= BE_WAIT_NAP_MAX_NS)
				nap_ns *= 2;
		}
	}
}

enum pplan_status cuda_be_wait_event(struct cuda_be *c, void *ev, const char *what,
				      struct perr *e)
{
	return cuda_be_poll(c, step_event, ev, what, CUDA_WAIT_DEFAULT_S, e);
}

/* ---- completion events ------------------------------------------------ */

static void *pool_get(struct cuda_be *c, char *why, size_t len)
{
	void *ev = NULL;
	if (c->npool > 0)
		return c->pool[--c->npool];
	if (c->api->event_create(&ev, 0, why, len) != 0)
		return NULL;
	return ev;
}

void cuda_be_pool_put(struct cuda_be *c, void *ev)
{
	if (c->npool == c->cappool) {
		int cap = c->cappool ? 2 * c->cappool : 64;
		void **p = realloc(c->pool, (size_t)cap * sizeof *p);
		if (!p) {
			c->api->event_destroy(ev);
			return;
		}
		c->pool = p;
		c->cappool = cap;
	}
	c->pool[c->npool++] = ev;
}

/* The communication stream waits for the compute issued so far. */
enum pplan_status cuda_be_order(struct cuda_be *c, struct perr *e)
{
	char why[WHY];
	if (c->api->event_record(c->ctx, c->order_ev, PCU_COMPUTE, why, sizeof why) != 0 ||
	    c->api->stream_wait(c->ctx, PCU_COMM, c->order_ev, why, sizeof why) != 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	return PPLAN_OK;
}

/* After an operation is issued on the communication stream: the caller's
 * request gets its completion event, or it is waited for now. */
enum pplan_status cuda_be_issued(struct cuda_be *c, struct be_req *req,
				 const char *what, struct perr *e)
{
	char why[WHY];
	enum pplan_status st;
	void *ev = pool_get(c, why, sizeof why);
	if (!ev || c->api->event_record(c->ctx, ev, PCU_COMM, why, sizeof why) != 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	if (req) {
		req->active = 1;
		req->event = ev;
		req->post_s = now_s();
		if (!req->what)
			req->what = what;
		return PPLAN_OK;
	}
	if ((st = cuda_be_wait_event(c, ev, what, e)) != PPLAN_OK)
		return st;
	if (c->api->stream_wait(c->ctx, PCU_COMPUTE, ev, why, sizeof why) != 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	cuda_be_pool_put(c, ev);
	return PPLAN_OK;
}

/* ---- memory ----------------------------------------------------------- */

static void sample_device(struct cuda_be *c)
{
	size_t fr = 0, tot = 0;
	if (c->api->mem_info(c->ctx, &fr, &tot) == 0 && (double)(tot - fr) > c->dev_peak)
		c->dev_peak = (double)(tot - fr);
}

static void *cu_alloc(struct backend *b, size_t bytes)
{
	struct cuda_be *c = cb(b);
	void *p = NULL;
	char why[WHY];
	if (c->nallocs == c->capallocs) {
		int cap = c->capallocs ? 2 * c->capallocs : 64;
		struct alloc_rec *r = realloc(c->allocs, (size_t)cap * sizeof *r);
		if (!r)
			return NULL;
		c->allocs = r;
		c->capallocs = cap;
	}
	if (c->api->mem_alloc(c->ctx, bytes, &p, why, sizeof why) != 0)
		return NULL;
	c->allocs[c->nallocs].p = p;
	c->allocs[c->nallocs++].bytes = bytes;
	c->alloc_now += (double)bytes;
	if (c->alloc_now > c->alloc_peak)
		c->alloc_peak = c->alloc_now;
	sample_device(c);
	return p;
}

static void cu_free(struct backend *b, void *p)
{
	struct cuda_be *c = cb(b);
	if (!p)
		return;
	for (int i = 0; i < c->nallocs; i++)
		if (c->allocs[i].p == p) {
			c->alloc_now -= (double)c->allocs[i].bytes;
			c->allocs[i] = c->allocs[--c->nallocs];
			break;
		}
	c->api->mem_free(c->ctx, p);
}

static void cu_zero(struct backend *b, void *p, size_t bytes)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	if (c->api->mem_zero(c->ctx, p, bytes, why, sizeof why) != 0)
		cuda_be_note(c, "%s", why);
}

/* Host copies are complete on return, so the module synchronizes the
 * compute stream; that stream is drained by polling first, so that a copy
 * queued behind a transfer that never ends cannot block the host where
 * the watchdog cannot see it.  0 when drained. */
static int drain_compute(struct cuda_be *c, const char *what)
{
	char why[WHY];
	struct perr e;
	if (c->err_st != PPLAN_OK)
		return -1;
	if (c->api->event_record(c->ctx, c->sync_ev[0], PCU_COMPUTE, why, sizeof why) != 0) {
		cuda_be_note(c, "%s", why);
		return -1;
	}
	if (cuda_be_wait_event(c, c->sync_ev[0], what, &e) != PPLAN_OK) {
		c->err_st = PPLAN_ESYSTEM;
		c->err = e;
		return -1;
	}
	return 0;
}

static void cu_to_device(struct backend *b, void *dst, const void *src, size_t n)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	if (drain_compute(c, "a copy to the GPU") == 0 &&
	    c->api->mem_copy(c->ctx, dst, src, n, PCU_H2D, why, sizeof why) != 0)
		cuda_be_note(c, "%s", why);
}

/* On failure dst is zeroed (the error comes with the next wait or sync). */
static void cu_to_host(struct backend *b, void *dst, const void *src, size_t n)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	if (drain_compute(c, "a copy to the host") == 0) {
		if (c->api->mem_copy(c->ctx, dst, src, n, PCU_D2H, why, sizeof why) == 0)
			return;
		cuda_be_note(c, "%s", why);
	}
	memset(dst, 0, n);
}

static void cu_copy(struct backend *b, void *dst, const void *src, size_t n)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	if (dst != src && c->api->mem_copy(c->ctx, dst, src, n, PCU_D2D, why, sizeof why) != 0)
		cuda_be_note(c, "%s", why);
}

/* ---- GEMM ------------------------------------------------------------- */

static void cu_gemm_batched(struct backend *b, int ta, int tb, long m, long n,
			    long k, float alpha, const void *A, long lda, long sA,
			    const void *B, long ldb, long sB, float beta, void *C,
			    long ldc, long sC, long batch, enum kern_dtype c_dtype)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	struct pcu_gemm g = {
		.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .alpha = alpha,
		.beta = beta, .A = A, .B = B, .C = C, .lda = lda, .ldb = ldb,
		.ldc = ldc, .sA = sA, .sB = sB, .sC = sC, .batch = batch,
		.ab_dtype = b->dtype, .c_dtype = c_dtype,
	};
	if (c->api->gemm(c->ctx, &g, why, sizeof why) != 0)
		cuda_be_note(c, "%s", why);
}

static void cu_gemm(struct backend *b, int ta, int tb, long m, long n, long k,
		    float alpha, const void *A, long lda, const void *B, long ldb,
		    float beta, void *C, long ldc, enum kern_dtype c_dtype)
{
	cu_gemm_batched(b, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C,
			ldc, 0, 1, c_dtype);
}

/* ---- groups ----------------------------------------------------------- */

static int step_sync(struct cuda_be *c, void *unused, char *why, size_t len)
{
	int a = c->api->event_query(c->sync_ev[0], why, len), b2;
	(void)unused;
	if (a < 0)
		return -1;
	b2 = c->api->event_query(c->sync_ev[1], why, len);
	if (b2 < 0)
		return -1;
	return a == PCU_PENDING || b2 == PCU_PENDING ? PCU_PENDING : 0;
}

static enum pplan_status cu_sync(struct backend *b, struct perr *e)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	enum pplan_status st;
	if (c->api->event_record(c->ctx, c->sync_ev[0], PCU_COMPUTE, why, sizeof why) != 0 ||
	    c->api->event_record(c->ctx, c->sync_ev[1], PCU_COMM, why, sizeof why) != 0)
		return perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	if ((st = cuda_be_poll(c, step_sync, NULL, "the GPU's streams", CUDA_WAIT_DEFAULT_S,
			     e)) != PPLAN_OK)
		return st;
	if (c->api->check(c->ctx, why, sizeof why) != 0)
		cuda_be_note(c, "%s", why);
	return cuda_be_pending(c, e);
}

/* ---- timing ----------------------------------------------------------- */

static void cu_marks_reset(struct backend *b)
{
	cb(b)->nmarks = 0;
}

static int cu_mark(struct backend *b)
{
	struct cuda_be *c = cb(b);
	char why[WHY];
	if (c->nmarks == c->capmarks) {
		int cap = c->capmarks ? 2 * c->capmarks : 1024;
		void **m = realloc(c->marks, (size_t)cap * sizeof *m);
		if (!m) {
			cuda_be_note(c, "out of host memory for timing marks");
			return c->nmarks - 1;
		}
		c->marks = m;
		for (int i = c->capmarks; i < cap; i++)
			if (c->api->event_create(&m[i], 1, why, sizeof why) != 0) {
				cuda_be_note(c, "%s", why);
				c->capmarks = i;
				return c->nmarks - 1;
			}
		c->capmarks = cap;
	}
	if (c->api->event_record(c->ctx, c->marks[c->nmarks], PCU_COMPUTE, why,
				 sizeof why) != 0)
		cuda_be_note(c, "%s", why);
	return c->nmarks++;
}

static double cu_mark_seconds(struct backend *b, int i)
{
	struct cuda_be *c = cb(b);
	double s = 0;
	if (i <= 0 || i >= c->nmarks)
		return 0;
	if (c->api->event_seconds(c->marks[0], c->marks[i], &s) != 0)
		return 0;
	return s;
}

/* ---- the device ------------------------------------------------------- */

/* Used: what the device reports in use now (context, libraries and ours);
 * peak: the larger of the device's high-water mark, sampled at every
 * allocation and here, and the allocator's high-water mark over the
 * device's use before the first allocation. */
static void cu_memory(struct backend *b, struct be_memory *m)
{
	struct cuda_be *c = cb(b);
	size_t fr = 0, tot = 0;
	double used = c->alloc_now + c->base_used;
	if (c->api->mem_info(c->ctx, &fr, &tot) == 0)
		used = (double)(tot - fr);
	if (used > c->dev_peak)
		c->dev_peak = used;
	m->own_now = c->alloc_now;
	m->own_peak = c->alloc_peak;
	m->process_peak = c->dev_peak > c->base_used + c->alloc_peak ? c->dev_peak
								     : c->base_used + c->alloc_peak;
}

void cuda_be_close(struct backend *b)
{
	struct cuda_be *c;
	if (!b)
		return;
	c = cb(b);
	if (!c->api) { /* the module never loaded */
		free(c);
		return;
	}
	while (c->groups)
		cuda_be_group_free(b, c->groups);
	if (c->world)
		c->api->nccl_destroy(c->world);
	for (int i = 0; i < c->npool; i++)
		c->api->event_destroy(c->pool[i]);
	for (int i = 0; i < c->capmarks; i++)
		c->api->event_destroy(c->marks[i]);
	c->api->event_destroy(c->order_ev);
	c->api->event_destroy(c->sync_ev[0]);
	c->api->event_destroy(c->sync_ev[1]);
	for (int i = 0; i < c->nallocs; i++)
		c->api->mem_free(c->ctx, c->allocs[i].p);
	if (c->ctx)
		c->api->ctx_close(c->ctx);
	free(c->pool);
	free(c->marks);
	free(c->allocs);
	free(c);
}

const struct be_ops cuda_be_ops = {
	.name = "cuda",
	.alloc = cu_alloc,
	.free = cu_free,
	.zero = cu_zero,
	.to_device = cu_to_device,
	.to_host = cu_to_host,
	.copy = cu_copy,
	.gemm = cu_gemm,
	.gemm_batched = cu_gemm_batched,
	.group_create = cuda_be_group_create,
	.group_free = cuda_be_group_free,
	.allreduce = cuda_be_allreduce,
	.allgather = cuda_be_allgather,
	.reducescatter = cuda_be_reducescatter,
	.broadcast = cuda_be_broadcast,
	.p2p_begin = cuda_be_p2p_begin,
	.p2p_end = cuda_be_p2p_end,
	.send = cuda_be_send,
	.recv = cuda_be_recv,
	.wait = cuda_be_wait,
	.test = cuda_be_test,
	.sync = cu_sync,
	.marks_reset = cu_marks_reset,
	.mark = cu_mark,
	.mark_seconds = cu_mark_seconds,
	.memory = cu_memory,
	.close = cuda_be_close,
};
