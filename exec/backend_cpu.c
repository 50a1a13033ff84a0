/*
 * backend_cpu.c: the CPU backend of backend.h.  Host memory, OpenBLAS
 * sgemm (fp32), the C kernels of kernels/, and MPI for communication:
 * every collective and transfer is a non-blocking MPI request that wait
 * polls, so that a rank never blocks forever (the watchdog decides) and
 * gradient buckets progress while the backward pass goes on (the
 * executor calls test between layers: Open MPI progresses requests only
 * inside MPI calls).  Timing marks are CLOCK_MONOTONIC readings.
 */
#include "backend.h"
#include "jsonio.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#define CPU_MAX_MARKS 65536
#define CPU_GEMM_SHAPES 256

struct be_group {
	MPI_Comm comm;
	int size, rank;
};

/* Time spent in sgemm per shape, for the benchmark that compares the
 * executor's GEMM rate with a standalone sgemm of the same shapes
 * (PPLAN_EXEC_GEMM_STATS=FILE writes it at close).  The calling thread's
 * CPU time (OpenBLAS on one thread computes on it): what the GEMM cost,
 * whatever else the machine runs meanwhile. */
struct gemm_shape {
	int ta, tb;
	long m, n, k, calls;
	double seconds;
};

struct cpu_state {
	double used, peak;               /* bytes from alloc */
	double marks[CPU_MAX_MARKS];
	int nmarks;
	int stats;                       /* record gemm shapes */
	struct gemm_shape shapes[CPU_GEMM_SHAPES];
	int nshapes;
};

static double now_s(void);

static double thread_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void gemm_record(struct cpu_state *s, int ta, int tb, long m, long n,
			long k, double seconds)
{
	for (int i = 0; i < s->nshapes; i++) {
		struct gemm_shape *g = &s->shapes[i];
		if (g->ta == ta && g->tb == tb && g->m == m && g->n == n && g->k == k) {
			g->calls++;
			g->seconds += seconds;
			return;
		}
	}
	if (s->nshapes < CPU_GEMM_SHAPES)
		s->shapes[s->nshapes++] = (struct gemm_shape){ ta, tb, m, n, k, 1, seconds };
}

/* Each allocation carries its size in front, for the accounting. */
#define HDR 64

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static struct cpu_state *st(struct backend *b)
{
	return b->impl;
}

static void *cpu_alloc(struct backend *b, size_t bytes)
{
	char *p;
	if (bytes > SIZE_MAX - HDR)
		return NULL;
	p = aligned_alloc(HDR, ((bytes + HDR) + HDR - 1) / HDR * HDR);
	if (!p)
		return NULL;
	memset(p, 0, bytes + HDR);
	memcpy(p, &bytes, sizeof bytes);
	st(b)->used += (double)bytes;
	if (st(b)->used > st(b)->peak)
		st(b)->peak = st(b)->used;
	return p + HDR;
}

static void cpu_free(struct backend *b, void *ptr)
{
	size_t bytes;
	char *p = ptr;
	if (!p)
		return;
	p -= HDR;
	memcpy(&bytes, p, sizeof bytes);
	st(b)->used -= (double)bytes;
	free(p);
}

static void cpu_zero(struct backend *b, void *p, size_t n)
{
	(void)b;
	memset(p, 0, n);
}

static void cpu_copy(struct backend *b, void *dst, const void *src, size_t n)
{
	(void)b;
	if (dst != src)
		memmove(dst, src, n);
}

static void cpu_gemm(struct backend *b, int ta, int tb, long m, long n, long k,
		     float alpha, const void *A, long lda, const void *B, long ldb,
		     float beta, void *C, long ldc, enum kern_dtype c_dtype)
{
	double t0 = st(b)->stats ? thread_s() : 0;
	(void)c_dtype; /* always fp32 here */
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		    tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
		    (blasint)k, alpha, A, (blasint)lda, B, (blasint)ldb, beta, C,
		    (blasint)ldc);
	if (st(b)->stats)
		gemm_record(st(b), ta, tb, m, n, k, thread_s() - t0);
}

static void cpu_gemm_batched(struct backend *b, int ta, int tb, long m, long n,
			     long k, float alpha, const void *A, long lda,
			     long sA, const void *B, long ldb, long sB, float beta,
			     void *C, long ldc, long sC, long batch,
			     enum kern_dtype c_dtype)
{
	const float *a = A, *bb = B;
	float *c = C;
	for (long i = 0; i < batch; i++)
		cpu_gemm(b, ta, tb, m, n, k, alpha, a + i * sA, lda, bb + i * sB,
			 ldb, beta, c + i * sC, ldc, c_dtype);
}

static enum pplan_status cpu_group_create(struct backend *b, MPI_Comm comm,
					  int color, int key,
					  struct be_group **out, struct perr *e)
{
	struct be_group *g;
	(void)b;
	(void)color;
	(void)key;
	*out = NULL;
	if (comm == MPI_COMM_NULL) /* not a member (color < 0) */
		return PPLAN_OK;
	g = calloc(1, sizeof *g);
	if (!g)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for a communicator");
	g->comm = comm;
	MPI_Comm_size(comm, &g->size);
	MPI_Comm_rank(comm, &g->rank);
	*out = g;
	return PPLAN_OK;
}

static void cpu_group_free(struct backend *b, struct be_group *g)
{
	(void)b;
	if (!g)
		return;
	if (g->comm != MPI_COMM_NULL && g->comm != MPI_COMM_WORLD)
		MPI_Comm_free(&g->comm);
	free(g);
}

static MPI_Datatype mpi_type(enum kern_dtype dt)
{
	(void)dt; /* the CPU backend computes in fp32 only */
	return MPI_FLOAT;
}

static int too_big(long count)
{
	return count < 0 || count > INT_MAX;
}

static enum pplan_status cpu_wait(struct backend *b, struct be_req *r,
				  struct perr *e);

/* Finishes a freshly posted request: the caller's, or waited for now. */
static enum pplan_status posted(struct backend *b, int rc, MPI_Request mr,
				struct be_req *req, const char *what,
				struct perr *e)
{
	struct be_req local;
	if (rc != MPI_SUCCESS)
		return perr_set(e, PPLAN_ESYSTEM, "MPI failed to start %s (error %d)",
				what, rc);
	if (req) {
		req->active = 1;
		req->mpi = mr;
		req->post_s = now_s();
		if (!req->what)
			req->what = what;
		return PPLAN_OK;
	}
	memset(&local, 0, sizeof local);
	local.active = 1;
	local.mpi = mr;
	local.what = what;
	return cpu_wait(b, &local, e);
}

static enum pplan_status cpu_allreduce(struct backend *b, struct be_group *g,
				       void *buf, long count, enum kern_dtype dt,
				       enum be_redop op, struct be_req *req,
				       struct perr *e)
{
	MPI_Request mr = MPI_REQUEST_NULL;
	int rc;
	if (too_big(count))
		return perr_set(e, PPLAN_EINPUT, "an all-reduce of %ld elements is too large for MPI", count);
	rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, mpi_type(dt),
					op == BE_MAX ? MPI_MAX : MPI_SUM, g->comm, &mr);
	return posted(b, rc, mr, req, "an all-reduce", e);
}

static enum pplan_status cpu_allgather(struct backend *b, struct be_group *g,
				       void *out, const void *in, long count,
				       enum kern_dtype dt, struct be_req *req,
				       struct perr *e)
{
	MPI_Request mr = MPI_REQUEST_NULL;
	int rc;
	const void *src = in;
	if (too_big(count) || too_big(count * g->size))
		return perr_set(e, PPLAN_EINPUT, "an all-gather of %ld elements is too large for MPI", count);
	if ((const char *)in == (const char *)out + (size_t)g->rank * (size_t)count * sizeof(float))
		src = MPI_IN_PLACE;
	rc = MPI_Iallgather(src, (int)count, mpi_type(dt), out, (int)count,
					mpi_type(dt), g->comm, &mr);
	return posted(b, rc, mr, req, "an all-gather", e);
}

static enum pplan_status cpu_reducescatter(struct backend *b, struct be_group *g,
					   void *out, const void *in, long count,
					   enum kern_dtype dt, struct be_req *req,
					   struct perr *e)
{
	MPI_Request mr = MPI_REQUEST_NULL;
	int rc;
	if (too_big(count) || too_big(count * g->size))
		return perr_set(e, PPLAN_EINPUT, "a reduce-scatter of %ld elements is too large for MPI", count);
	rc = MPI_Ireduce_scatter_block(in, out, (int)count, mpi_type(dt),
						   MPI_SUM, g->comm, &mr);
	return posted(b, rc, mr, req, "a reduce-scatter", e);
}

static enum pplan_status cpu_broadcast(struct backend *b, struct be_group *g,
				       void *buf, long count, enum kern_dtype dt,
				       int root, struct be_req *req, struct perr *e)
{
	MPI_Request mr = MPI_REQUEST_NULL;
	int rc;
	if (too_big(count))
		return perr_set(e, PPLAN_EINPUT, "a broadcast of %ld elements is too large for MPI", count);
	rc = MPI_Ibcast(buf, (int)count, mpi_type(dt), root, g->comm, &mr);
	return posted(b, rc, mr, req, "a broadcast", e);
}

static void cpu_p2p_begin(struct backend *b)
{
	(void)b; /* MPI requests need no grouping */
}

static enum pplan_status cpu_p2p_end(struct backend *b, struct perr *e)
{
	(void)b;
	(void)e;
	return PPLAN_OK;
}

static enum pplan_status cpu_send(struct backend *b, struct be_group *g, int peer,
				  const void *buf, size_t bytes, int tag,
				  struct be_req *req, struct perr *e)
{
	MPI_Request mr = MPI_REQUEST_NULL;
	int rc;
	if (bytes > INT_MAX)
		return perr_set(e, PPLAN_EINPUT, "a send of %zu bytes is too large for MPI", bytes);
	rc = MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, g->comm, &mr);
	return posted(b, rc, mr, req, "a send", e);
}

static enum pplan_status cpu_recv(struct backend *b, struct be_group *g, int peer,
				  void *buf, size_t bytes, int tag,
				  struct be_req *req, struct perr *e)
{
	MPI_Request mr = MPI_REQUEST_NULL;
	int rc;
	if (bytes > INT_MAX)
		return perr_set(e, PPLAN_EINPUT, "a receive of %zu bytes is too large for MPI", bytes);
	rc = MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, g->comm, &mr);
	return posted(b, rc, mr, req, "a receive", e);
}

static int cpu_test(struct backend *b, struct be_req *r)
{
	int flag = 0;
	(void)b;
	if (!r->active)
		return 1;
	if (MPI_Test(&r->mpi, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return 0;
	if (flag)
		r->active = 0;
	return flag;
}

/* Polls: spins briefly, then yields the core (ranks may share cores)
 * while staying runnable, and only after a while sleeps in growing
 * steps of at most BE_WAIT_NAP_MAX_NS; asks the watchdog now and then. */
enum pplan_status be_mpi_wait(const struct be_watch *w, MPI_Request *r,
			      const char *what, struct perr *e)
{
	double start = now_s(), last_check = start;
	long spins = 0, nap_ns = 10000;
	int flag = 0;

	for (;;) {
		double t;
		if (MPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return perr_set(e, PPLAN_ESYSTEM, "MPI failed while waiting for %s", what);
		if (flag)
			return PPLAN_OK;
		t = now_s();
		if (spins < 200) {
			spins++;
		} else if (t - start < 0.02) {
			sched_yield();
		} else {
			struct timespec ts = { 0, nap_ns };
			nanosleep(&ts, NULL);
			if (nap_ns * 2 <= BE_WAIT_NAP_MAX_NS)
				nap_ns *= 2;
		}
		if (w && w->check && t - last_check > 0.01) {
			enum pplan_status s;
			last_check = t;
			s = w->check(w->ctx, what, t - start, e);
			if (s != PPLAN_OK)
				return s;
		}
	}
}

static enum pplan_status cpu_wait(struct backend *b, struct be_req *r,
				  struct perr *e)
{
	enum pplan_status st;
	if (!r->active)
		return PPLAN_OK;
	st = be_mpi_wait(&b->watch, &r->mpi, r->what ? r->what : "a transfer", e);
	if (st == PPLAN_OK)
		r->active = 0;
	return st;
}

static enum pplan_status cpu_sync(struct backend *b, struct perr *e)
{
	(void)b;
	(void)e;
	return PPLAN_OK;
}

static void cpu_marks_reset(struct backend *b)
{
	st(b)->nmarks = 0;
}

static int cpu_mark(struct backend *b)
{
	struct cpu_state *s = st(b);
	if (s->nmarks >= CPU_MAX_MARKS)
		return CPU_MAX_MARKS - 1;
	s->marks[s->nmarks] = now_s();
	return s->nmarks++;
}

static double cpu_mark_seconds(struct backend *b, int i)
{
	struct cpu_state *s = st(b);
	if (i < 0 || i >= s->nmarks || s->nmarks == 0)
		return 0;
	return s->marks[i] - s->marks[0];
}

/* The executor's own allocations, and the process's peak resident set
 * (what a CPU run really used, MPI's and OpenBLAS's buffers and the
 * program itself included). */
static void cpu_memory(struct backend *b, struct be_memory *m)
{
	struct rusage ru;
	m->own_now = st(b)->used;
	m->own_peak = st(b)->peak;
	m->process_peak = m->own_peak;
	if (getrusage(RUSAGE_SELF, &ru) == 0 && (double)ru.ru_maxrss * 1024.0 > m->process_peak)
		m->process_peak = (double)ru.ru_maxrss * 1024.0;
}

/* "ta tb m n k calls seconds" per shape, one line each. */
static void gemm_stats_write(const struct cpu_state *s, int rank)
{
	const char *path = getenv("PPLAN_EXEC_GEMM_STATS");
	char name[4096], *buf = NULL;
	size_t len = 0;
	struct perr e;
	FILE *f;
	if (!path || !*path || s->nshapes == 0)
		return;
	snprintf(name, sizeof name, "%s.rank%d", path, rank);
	/* Built in memory, written as every pplan file is (jsonio.h). */
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	for (int i = 0; i < s->nshapes; i++)
		fprintf(f, "%d %d %ld %ld %ld %ld %.9f\n", s->shapes[i].ta, s->shapes[i].tb,
			s->shapes[i].m, s->shapes[i].n, s->shapes[i].k, s->shapes[i].calls,
			s->shapes[i].seconds);
	if (fclose(f) == 0 && text_write_atomic(name, buf, &e) != PPLAN_OK)
		fprintf(stderr, "pplan exec: %s\n", e.msg);
	free(buf);
}

static void cpu_close(struct backend *b)
{
	int rank = 0, done = 0;
	if (!b)
		return;
	MPI_Finalized(&done);
	if (!done)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	gemm_stats_write(st(b), rank);
	free(b->impl);
	free(b);
}

static const struct be_ops cpu_ops = {
	.name = "cpu",
	.alloc = cpu_alloc,
	.free = cpu_free,
	.zero = cpu_zero,
	.to_device = cpu_copy,
	.to_host = cpu_copy,
	.copy = cpu_copy,
	.gemm = cpu_gemm,
	.gemm_batched = cpu_gemm_batched,
	.group_create = cpu_group_create,
	.group_free = cpu_group_free,
	.allreduce = cpu_allreduce,
	.allgather = cpu_allgather,
	.reducescatter = cpu_reducescatter,
	.broadcast = cpu_broadcast,
	.p2p_begin = cpu_p2p_begin,
	.p2p_end = cpu_p2p_end,
	.send = cpu_send,
	.recv = cpu_recv,
	.wait = cpu_wait,
	.test = cpu_test,
	.sync = cpu_sync,
	.marks_reset = cpu_marks_reset,
	.mark = cpu_mark,
	.mark_seconds = cpu_mark_seconds,
	.memory = cpu_memory,
	.close = cpu_close,
};

enum pplan_status be_cpu_open(int local_rank, struct backend **out,
			      struct perr *e)
{
	struct backend *b = calloc(1, sizeof *b);
	char mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	if (!b || !(b->impl = calloc(1, sizeof(struct cpu_state)))) {
		free(b);
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the CPU backend");
	}
	/* the wait loop's naps as asked, not the kernel's default 50 us
	 * later (BE_WAIT_NAP_MAX_NS) */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	b->ops = &cpu_ops;
	b->k = kern_cpu_ops();
	((struct cpu_state *)b->impl)->stats = getenv("PPLAN_EXEC_GEMM_STATS") != NULL;
	b->dtype = KD_F32;
	b->kind = BE_CPU;
	b->local_rank = local_rank;
	snprintf(b->device, sizeof b->device, "cpu (%ld cores online, OpenBLAS %d threads)",
		 cores, openblas_get_num_threads());
	MPI_Get_library_version(mpi_lib, &len);
	{
		char *nl = strchr(mpi_lib, ',');
		if (nl)
			*nl = '\0';
	}
	snprintf(b->libraries, sizeof b->libraries, "OpenBLAS (%s); %s",
		 openblas_get_config(), mpi_lib);
	*out = b;
	return PPLAN_OK;
}
