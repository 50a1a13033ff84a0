/*
 * fake_cuda_exec.c: the executor's entries of cuda_api.h (version 2) for
 * the fake CUDA module, on host memory, so that exec/backend_cuda*.c runs
 * in the tests without a GPU: memory is malloc, GEMMs are plain fp32
 * loops, events complete after FAKE_LAG polls (the waits really poll),
 * NCCL communicators are single-rank (init and split answer "in progress"
 * for a few polls first, as nonblocking NCCL does; collectives copy;
 * grouped sends are matched with receives at the group's end).  A
 * communicator of more than one rank can be made, not used.  Kernels: the
 * CPU twins' fp32 table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"

#define FAKE_LAG 3           /* polls before an event or a communicator is ready */
#define FAKE_TOTAL (80.0 * 1073741824.0)
#define FAKE_GROUP 64

struct pplan_cuda_ctx {
	double used;             /* bytes allocated */
};

struct fake_event {
	int polls;               /* left until done */
	double t;                /* host time of the record */
};

struct fake_comm {
	int nranks, rank, polls;
};

struct fake_p2p {
	int send;
	void *buf;
	size_t bytes;
};

static struct fake_p2p group[FAKE_GROUP];
static int ngroup, in_group;

static void why_set(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
}

static void versions(char *buf, size_t len)
{
	snprintf(buf, len, "fake CUDA (host memory)");
}

/* The CPU twins stand in for the GPU's fp32 kernels (compiled into this
 * module); bf16 and fp16 have none. */
static const struct kern_ops *kernels(int dtype)
{
	return dtype == KD_F32 ? kern_cpu_ops() : NULL;
}

static int ctx_open(int dev, struct pplan_cuda_ctx **out, char *why, size_t len)
{
	(void)dev;
	*out = calloc(1, sizeof **out);
	if (!*out)
		why_set(why, len, "out of memory");
	return *out ? 0 : -1;
}

static void ctx_close(struct pplan_cuda_ctx *c)
{
	free(c);
}

static void *stream(struct pplan_cuda_ctx *c, int which)
{
	(void)c;
	(void)which;
	return NULL;
}

/* Each block carries its size in front, for mem_info. */
static int mem_alloc(struct pplan_cuda_ctx *c, size_t bytes, void **out,
		     char *why, size_t len)
{
	size_t *p = calloc(1, bytes + 16);
	*out = NULL;
	if (!p) {
		why_set(why, len, "out of memory");
		return -1;
	}
	p[0] = bytes;
	c->used += (double)bytes;
	*out = (char *)p + 16;
	return 0;
}

static void mem_free(struct pplan_cuda_ctx *c, void *p)
{
	size_t *h;
	if (!p)
		return;
	h = (size_t *)((char *)p - 16);
	c->used -= (double)h[0];
	free(h);
}

static int mem_zero(struct pplan_cuda_ctx *c, void *p, size_t bytes, char *why,
		    size_t len)
{
	(void)c;
	(void)why;
	(void)len;
	memset(p, 0, bytes);
	return 0;
}

static int mem_copy(struct pplan_cuda_ctx *c, void *dst, const void *src,
		    size_t bytes, int dir, char *why, size_t len)
{
	(void)c;
	(void)dir;
	(void)why;
	(void)len;
	memmove(dst, src, bytes);
	return 0;
}

static int mem_info(struct pplan_cuda_ctx *c, size_t *free_bytes, size_t *total_bytes)
{
	*total_bytes = (size_t)FAKE_TOTAL;
	*free_bytes = (size_t)(FAKE_TOTAL - c->used - 512.0 * 1048576.0); /* a context */
	return 0;
}

static int gemm(struct pplan_cuda_ctx *c, const struct pcu_gemm *g, char *why,
		size_t len)
{
	(void)c;
	if (g->ab_dtype != KD_F32 || g->c_dtype != KD_F32) {
		why_set(why, len, "the fake GEMM is fp32 only");
		return -1;
	}
	for (long b = 0; b < (g->batch > 1 ? g->batch : 1); b++) {
		const float *A = (const float *)g->A + b * g->sA;
		const float *B = (const float *)g->B + b * g->sB;
		float *C = (float *)g->C + b * g->sC;
		for (long i = 0; i < g->m; i++)
			for (long j = 0; j < g->n; j++) {
				double s = 0;
				for (long p = 0; p < g->k; p++)
					s += (double)(g->ta ? A[p * g->lda + i] : A[i * g->lda + p]) *
					     (g->tb ? B[j * g->ldb + p] : B[p * g->ldb + j]);
				C[i * g->ldc + j] = (float)(g->alpha * s + g->beta * C[i * g->ldc + j]);
			}
	}
	return 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int event_create(void **ev, int timing, char *why, size_t len)
{
	(void)timing;
	*ev = calloc(1, sizeof(struct fake_event));
	if (!*ev)
		why_set(why, len, "out of memory");
	return *ev ? 0 : -1;
}

static void event_destroy(void *ev)
{
	free(ev);
}

static int event_record(struct pplan_cuda_ctx *c, void *ev, int s, char *why,
			size_t len)
{
	struct fake_event *e = ev;
	(void)c;
	(void)s;
	(void)why;
	(void)len;
	e->polls = FAKE_LAG;
	e->t = now_s();
	return 0;
}

static int event_query(void *ev, char *why, size_t len)
{
	struct fake_event *e = ev;
	(void)why;
	(void)len;
	if (e->polls > 0) {
		e->polls--;
		return PCU_PENDING;
	}
	return 0;
}

static int event_seconds(void *a, void *b, double *seconds)
{
	*seconds = ((struct fake_event *)b)->t - ((struct fake_event *)a)->t;
	return 0;
}

static int stream_wait(struct pplan_cuda_ctx *c, int s, void *ev, char *why,
		       size_t len)
{
	(void)c;
	(void)s;
	(void)ev;
	(void)why;
	(void)len;
	return 0;
}

static int check(struct pplan_cuda_ctx *c, char *why, size_t len)
{
	(void)c;
	(void)why;
	(void)len;
	return 0;
}

static int nccl_unique_id(void *id, char *why, size_t len)
{
	(void)why;
	(void)len;
	memset(id, 0x5a, PPLAN_NCCL_ID_BYTES);
	return 0;
}

static struct fake_comm *comm_new(int nranks, int rank)
{
	struct fake_comm *f = calloc(1, sizeof *f);
	if (f) {
		f->nranks = nranks;
		f->rank = rank;
		f->polls = FAKE_LAG;
	}
	return f;
}

static int nccl_init(struct pplan_cuda_ctx *c, const void *id, int nranks,
		     int rank, void **comm, char *why, size_t len)
{
	const unsigned char *u = id;
	(void)c;
	if (u[0] != 0x5a || u[PPLAN_NCCL_ID_BYTES - 1] != 0x5a) {
		why_set(why, len, "the unique id did not arrive whole");
		return -1;
	}
	*comm = comm_new(nranks, rank);
	return *comm ? PCU_PENDING : -1;
}

/* Single-rank semantics: color < 0 is no part, otherwise a one-rank copy. */
static int nccl_split(void *parent, int color, int key, void **comm, char *why,
		      size_t len)
{
	struct fake_comm *p = parent;
	(void)key;
	*comm = NULL;
	if (p->polls > 0) {
		why_set(why, len, "split before the parent was ready");
		return -1;
	}
	if (color < 0)
		return 0;
	*comm = comm_new(1, 0);
	return PCU_PENDING;
}

static int nccl_poll(void *comm, char *why, size_t len)
{
	struct fake_comm *f = comm;
	(void)why;
	(void)len;
	if (f->polls > 0) {
		f->polls--;
		return PCU_PENDING;
	}
	return 0;
}

static int nccl_rank(void *comm, int *rank, int *count)
{
	struct fake_comm *f = comm;
	*rank = f->rank;
	*count = f->nranks;
	return 0;
}

static int nccl_coll(struct pplan_cuda_ctx *c, void *comm,
		     const struct pcu_coll_args *a, char *why, size_t len)
{
	struct fake_comm *f = comm;
	size_t es = a->dtype == KD_F32 ? 4 : 2;
	(void)c;
	if (f->nranks != 1 || f->polls > 0) {
		why_set(why, len, "fake collectives need a ready one-rank communicator");
		return -1;
	}
	if (a->in && a->in != a->out)
		memmove(a->out, a->in, (size_t)a->count * es);
	return 0;
}

static int nccl_group(int start, char *why, size_t len)
{
	if (start) {
		in_group = 1;
		ngroup = 0;
		return 0;
	}
	/* Match the i-th send with the i-th receive, as NCCL orders them. */
	for (int s = 0, r = 0;; s++, r++) {
		while (s < ngroup && !group[s].send)
			s++;
		while (r < ngroup && group[r].send)
			r++;
		if (s >= ngroup || r >= ngroup)
			break;
		if (group[s].bytes != group[r].bytes) {
			why_set(why, len, "a send and its receive differ in size");
			return -1;
		}
		memcpy(group[r].buf, group[s].buf, group[s].bytes);
	}
	in_group = 0;
	return PCU_PENDING;
}

static int nccl_p2p(struct pplan_cuda_ctx *c, void *comm, int send, void *buf,
		    size_t bytes, int peer, char *why, size_t len)
{
	struct fake_comm *f = comm;
	(void)c;
	if (!in_group || ngroup == FAKE_GROUP || peer != 0 || f->nranks != 1) {
		why_set(why, len, "fake transfers go to rank 0 of a one-rank group, inside a group");
		return -1;
	}
	group[ngroup].send = send;
	group[ngroup].buf = buf;
	group[ngroup++].bytes = bytes;
	f->polls = 1; /* the group's end is polled on this communicator */
	return 0;
}

static void nccl_abort(void *comm)
{
	free(comm);
}

static void nccl_destroy(void *comm)
{
	free(comm);
}

void fake_cuda_exec_fill(struct pplan_cuda_api *a);

void fake_cuda_exec_fill(struct pplan_cuda_api *a)
{
	a->versions = versions;
	a->kernels = kernels;
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
