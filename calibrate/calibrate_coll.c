/*
 * calibrate_coll.c: the collectives of `pplan calibrate` (calibrate.h),
 * measured as nccl-tests measures them.
 *
 * Sizes and bus bandwidth follow sim/collective.h (the one table of
 * collectives): size S is the whole buffer for all-reduce and broadcast,
 * the gathered output for all-gather, the input for reduce-scatter, what
 * one rank sends in all for all-to-all, the message for send/receive;
 * algbw = S / t, busbw = algbw x factor(n).  Elements are float; the sum
 * is the reduction.  All-to-all is one send and one receive per peer
 * issued between p2p_begin and p2p_end, as NCCL builds it; send/receive
 * is a ring (rank r sends to r+1 and receives from r-1).
 *
 * For each size: a barrier, warm-up calls, the check (known values in,
 * the result compared element by element, the mismatches of all ranks
 * summed into #wrong), one call to size the loop, a barrier, the timed
 * loop on the host clock ended by the backend's sync, and the slowest
 * rank's mean time per call.
 */
#include "calibrate_internal.h"
#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[COLL_COUNT] = {
	[COLL_ALLREDUCE] = "all_reduce", [COLL_ALLGATHER] = "all_gather",
	[COLL_REDUCESCATTER] = "reduce_scatter", [COLL_ALLTOALL] = "all_to_all",
	[COLL_BROADCAST] = "broadcast", [COLL_REDUCE] = "reduce",
	[COLL_SENDRECV] = "send_recv",
};

const char *cal_coll_name(enum coll_op op)
{
	return op >= 0 && op < COLL_COUNT ? names[op] : "?";
}

/* One collective at one size, over the group g of n ranks. */
struct coll_ctx {
	enum coll_op op;
	struct be_group *g;
	int n, me;            /* group size, rank in the group */
	long count;           /* per-rank element count (see elements_of) */
	float *send, *recv;   /* device buffers */
	struct be_req *reqs;  /* 2n for all-to-all and send/receive */
	enum pplan_status st;
	struct perr err;
};

/* Elements of the send and receive buffers for per-rank count c. */
static void elements_of(enum coll_op op, int n, long c, long *ns, long *nr)
{
	switch (op) {
	case COLL_ALLGATHER: *ns = 0, *nr = n * c; break;      /* in place: out + me*c */
	case COLL_REDUCESCATTER: *ns = n * c, *nr = c; break;
	case COLL_ALLTOALL: *ns = n * c, *nr = n * c; break;
	case COLL_SENDRECV: *ns = c, *nr = c; break;
	default: *ns = 0, *nr = c; break;                     /* in place */
	}
}

/* The per-rank count for nccl-tests size `bytes`, and back. */
static long count_of(enum coll_op op, int n, double bytes)
{
	long c = (long)(bytes / sizeof(float));
	if (op == COLL_ALLGATHER || op == COLL_REDUCESCATTER || op == COLL_ALLTOALL)
		c /= n;
	return c < 1 ? 1 : c;
}

static double size_of(enum coll_op op, int n, long c)
{
	double b = (double)c * sizeof(float);
	return (op == COLL_ALLGATHER || op == COLL_REDUCESCATTER || op == COLL_ALLTOALL) ? b * n : b;
}

static void run_one(struct cal_session *s, struct coll_ctx *x)
{
	const struct be_ops *o = s->b->ops;
	struct backend *b = s->b;
	struct perr *e = &x->err;
	enum pplan_status st = PPLAN_OK;
	if (x->st != PPLAN_OK)
		return;
	switch (x->op) {
	case COLL_ALLREDUCE:
		st = o->allreduce(b, x->g, x->recv, x->count, KD_F32, BE_SUM, NULL, e);
		break;
	case COLL_ALLGATHER:
		st = o->allgather(b, x->g, x->recv, x->recv + (size_t)x->me * x->count, x->count,
				  KD_F32, NULL, e);
		break;
	case COLL_REDUCESCATTER:
		st = o->reducescatter(b, x->g, x->recv, x->send, x->count, KD_F32, NULL, e);
		break;
	case COLL_BROADCAST:
		st = o->broadcast(b, x->g, x->recv, x->count, KD_F32, 0, NULL, e);
		break;
	case COLL_ALLTOALL: {
		size_t chunk = (size_t)x->count * sizeof(float);
		int k = 0;
		o->p2p_begin(b);
		for (int p = 0; p < x->n && st == PPLAN_OK; p++) {
			if (p == x->me)
				continue;
			memset(&x->reqs[k], 0, 2 * sizeof x->reqs[0]);
			st = o->send(b, x->g, p, x->send + (size_t)p * x->count, chunk, 7, &x->reqs[k], e);
			if (st == PPLAN_OK)
				st = o->recv(b, x->g, p, x->recv + (size_t)p * x->count, chunk, 7,
					     &x->reqs[k + 1], e);
			k += 2;
		}
		if (st == PPLAN_OK)
			st = o->p2p_end(b, e);
		o->copy(b, x->recv + (size_t)x->me * x->count, x->send + (size_t)x->me * x->count,
			chunk);
		for (int i = 0; i < k && st == PPLAN_OK; i++)
			st = o->wait(b, &x->reqs[i], e);
		break;
	}
	case COLL_SENDRECV: {
		size_t bytes = (size_t)x->count * sizeof(float);
		int to = (x->me + 1) % x->n, from = (x->me + x->n - 1) % x->n;
		memset(x->reqs, 0, 2 * sizeof x->reqs[0]);
		o->p2p_begin(b);
		st = o->send(b, x->g, to, x->send, bytes, 8, &x->reqs[0], e);
		if (st == PPLAN_OK)
			st = o->recv(b, x->g, from, x->recv, bytes, 8, &x->reqs[1], e);
		if (st == PPLAN_OK)
			st = o->p2p_end(b, e);
		if (st == PPLAN_OK)
			st = o->wait(b, &x->reqs[0], e);
		if (st == PPLAN_OK)
			st = o->wait(b, &x->reqs[1], e);
		break;
	}
	default:
		st = perr_set(e, PPLAN_EINPUT, "calibrate does not measure %s", cal_coll_name(x->op));
	}
	x->st = st;
}

/* ---- the check ------------------------------------------------------------------ */

/* Small whole numbers, exact in float and in their sums over a few
 * thousand ranks. */
static float val(int rank, long i)
{
	return (float)((rank + 1) * ((i % 13) + 1));
}

/* Fills the inputs with known values, runs once, and counts the elements
 * of the output that differ from what the collective must give. */
static long check(struct cal_session *s, struct coll_ctx *x)
{
	long ns, nr, wrong = 0, tri = (long)x->n * (x->n + 1) / 2;
	float *hs, *hr;
	elements_of(x->op, x->n, x->count, &ns, &nr);
	hs = calloc((size_t)(ns > 0 ? ns : 1), sizeof *hs);
	hr = calloc((size_t)nr, sizeof *hr);
	if (!hs || !hr) {
		free(hs);
		free(hr);
		return nr; /* unchecked counts as wrong */
	}
	for (long i = 0; i < ns; i++)
		hs[i] = x->op == COLL_ALLTOALL ? (float)(x->me * 1000 + i / x->count) : val(x->me, i);
	for (long i = 0; i < nr; i++)
		hr[i] = (x->op == COLL_ALLGATHER && i / x->count == x->me) ? val(x->me, i % x->count + 7) :
			(x->op == COLL_BROADCAST && x->me != 0) ? -1.0f :
			(x->op == COLL_ALLREDUCE || x->op == COLL_BROADCAST) ? val(x->me, i) : -1.0f;
	if (ns > 0)
		s->b->ops->to_device(s->b, x->send, hs, (size_t)ns * sizeof(float));
	s->b->ops->to_device(s->b, x->recv, hr, (size_t)nr * sizeof(float));
	run_one(s, x);
	s->b->ops->sync(s->b, NULL);
	s->b->ops->to_host(s->b, hr, x->recv, (size_t)nr * sizeof(float));
	for (long i = 0; i < nr; i++) {
		float want;
		switch (x->op) {
		case COLL_ALLREDUCE: want = (float)(tri * ((i % 13) + 1)); break;
		case COLL_ALLGATHER: want = val((int)(i / x->count), i % x->count + 7); break;
		case COLL_REDUCESCATTER:
			want = (float)(tri * (((x->me * x->count + i) % 13) + 1));
			break;
		case COLL_ALLTOALL: want = (float)((i / x->count) * 1000 + x->me); break;
		case COLL_BROADCAST: want = val(0, i); break;
		case COLL_SENDRECV: want = val((x->me + x->n - 1) % x->n, i); break;
		default: want = NAN;
		}
		wrong += hr[i] != want;
	}
	free(hs);
	free(hr);
	return wrong;
}

/* ---- the measurement ------------------------------------------------------------ */

static double time_coll(struct cal_session *s, struct coll_ctx *x, long *iters)
{
	double t0, one;
	MPI_Barrier(s->world);
	for (int i = 0; i < s->cfg.warmup; i++)
		run_one(s, x);
	s->b->ops->sync(s->b, NULL);
	MPI_Barrier(s->world);
	t0 = cal_now();
	run_one(s, x);
	s->b->ops->sync(s->b, NULL);
	one = cal_max(s, cal_now() - t0);
	*iters = cal_iters(s, one);
	MPI_Barrier(s->world);
	t0 = cal_now();
	for (long i = 0; i < *iters; i++)
		run_one(s, x);
	s->b->ops->sync(s->b, NULL);
	return cal_max(s, (cal_now() - t0) / (double)*iters);
}

/* ---- a send/receive as a CPU step meets it ----------------------------------------- */

/* MPI on a CPU moves a message only inside its calls, beside the peer's
 * compute on the same memory, and a back-to-back loop (both ranks inside
 * MPI, everything in cache) is not how a step meets it.  A step either
 *  - posts a pipeline transfer and goes back to compute while the
 *    receiver waits (on the development machine 256 KiB took 25-43 us in
 *    the loop, 50-75 us so), or
 *  - posts a ring attention's exchange both ways and computes on both
 *    ranks, and the transfer runs only at the wait, from and to buffers
 *    the compute pushed out of the caches (90-120 us).
 * So on the CPU each send/receive point is timed both ways, ranks in
 * pairs, for BUSY_FACTOR times the loop's time (at least BUSY_MIN_S, at
 * most BUSY_MAX_S):
 *  - time_s: one rank sends and multiplies matrices (the next layer's
 *    GEMMs), the other times its receive from its post; the roles swap
 *    every call; the median of a rank's receives, the slowest rank's;
 *  - exposed_s: both post, walk memory (BUSY_WALK_BYTES at least once,
 *    past the caches), then time what is left to wait; per
 *    call the shorter of the pair's two waits (the later arriver's: the
 *    other also waited for its peer's compute to end); the median, the
 *    slowest rank's.
 * BUSY_CALLS calls each (BUSY_CALLS_LONG where one takes over BUSY_LONG_S). */
#define BUSY_FACTOR 4.0
#define BUSY_MIN_S 200e-6
#define BUSY_MAX_S 0.05
#define BUSY_CALLS 20
#define BUSY_CALLS_LONG 6
#define BUSY_LONG_S 0.01
#define BUSY_WALK_BYTES (64.0 * 1048576.0)
#define BUSY_GEMM_DIM 256

struct busy_walk {
	float *buf;
	size_t n;            /* floats */
	size_t at;
	float *gemm;         /* three BUSY_GEMM_DIM^2 matrices */
};

/* Reads and writes one float a cache line, over the whole buffer (twice
 * the caches: what the step's compute leaves) and on for s seconds. */
static void walk_for(struct busy_walk *w, double s)
{
	double t0 = cal_now();
	size_t lines = w->n / 16, done = 0;
	do {
		for (int k = 0; k < 4096; k++) {
			w->buf[w->at] += 1.0f;
			w->at = (w->at + 16) % w->n;
		}
		done += 4096;
	} while (done < lines || cal_now() - t0 < s);
}

/* Multiplies BUSY_GEMM_DIM^2 matrices for s seconds: a sender's next
 * layer, compute-bound and in cache. */
static void gemm_for(struct cal_session *s, struct busy_walk *w, double secs)
{
	const long d = BUSY_GEMM_DIM;
	double t0 = cal_now();
	do
		s->b->ops->gemm(s->b, 0, 0, d, d, d, 1.0f, w->gemm, d, w->gemm + d * d, d, 0.0f,
				w->gemm + 2 * d * d, d, KD_F32);
	while (cal_now() - t0 < secs);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of t[0..n), the slowest rank's. */
static double median_max(struct cal_session *s, double *t, int n)
{
	if (n == 0)
		return cal_max(s, 0);
	qsort(t, (size_t)n, sizeof t[0], cmp_double);
	return cal_max(s, t[n / 2]);
}

/* One call: both = 0, this rank sends and multiplies matrices, or
 * receives and times it (by the call's parity); both = 1, both post,
 * walk memory and time the wait. */
static double busy_call(struct cal_session *s, struct coll_ctx *x, struct busy_walk *w,
			double busy, int i, int both)
{
	const struct be_ops *o = s->b->ops;
	size_t bytes = (size_t)x->count * sizeof(float);
	int peer = x->me ^ 1, sender = both || (x->me & 1) == (i & 1);
	struct be_req rq[2];
	double t0 = 0;
	memset(rq, 0, sizeof rq);
	if (sender)
		o->zero(s->b, x->send, bytes); /* the activation just written */
	MPI_Barrier(s->world);
	if (sender)
		x->st = o->send(s->b, x->g, peer, x->send, bytes, 9, &rq[0], &x->err);
	if (!sender)
		t0 = cal_now();
	if (x->st == PPLAN_OK && (both || !sender))
		x->st = o->recv(s->b, x->g, peer, x->recv, bytes, 9, &rq[1], &x->err);
	if (both)
		walk_for(w, busy);
	else if (sender)
		gemm_for(s, w, busy);
	if (both)
		t0 = cal_now();
	if (x->st == PPLAN_OK && (both || !sender))
		x->st = o->wait(s->b, &rq[1], &x->err);
	if (!both && !sender)
		return cal_now() - t0;
	if (x->st == PPLAN_OK)
		x->st = o->wait(s->b, &rq[0], &x->err);
	return both ? cal_now() - t0 : -1;
}

static void time_sendrecv_busy(struct cal_session *s, struct coll_ctx *x, struct busy_walk *w,
			       struct cal_coll_point *p)
{
	double busy = fmin(BUSY_MAX_S, fmax(BUSY_MIN_S, BUSY_FACTOR * p->loop_s));
	int calls = busy + p->loop_s > BUSY_LONG_S ? BUSY_CALLS_LONG : BUSY_CALLS;
	double t[BUSY_CALLS], peer_t[BUSY_CALLS];
	int got = 0;

	for (int i = -2; i < calls && x->st == PPLAN_OK; i++) {
		double v = busy_call(s, x, w, busy, i, 0);
		if (i >= 0 && v >= 0)
			t[got++] = v;
	}
	p->time_s = fmax(p->loop_s, median_max(s, t, got));
	got = 0;
	for (int i = -1; i < calls && x->st == PPLAN_OK; i++) {
		double v = busy_call(s, x, w, busy, i, 1);
		if (i >= 0)
			t[got++] = v;
	}
	/* of a call's two waits the later arriver's is the transfer */
	MPI_Sendrecv(t, got, MPI_DOUBLE, s->rank ^ 1, 11, peer_t, got, MPI_DOUBLE, s->rank ^ 1,
		     11, s->world, MPI_STATUS_IGNORE);
	for (int i = 0; i < got; i++)
		t[i] = fmin(t[i], peer_t[i]);
	p->exposed_s = median_max(s, t, got);
}

/* ---- a collective as a CPU step meets it -------------------------------------------- */

/* A step reaches each of its blocking collectives (the TP all-gathers and
 * reduce-scatters, an MoE all-to-all) from a layer's compute, the ranks
 * at different moments.  Measured with throw-away MPI programs on the
 * development machine, a 256 KiB all-gather took 13 us in the
 * back-to-back loop, 19 us from the last arrival after one 256^3 sgemm
 * and 33 us after 6 ms of them (reduce-scatter 61, 95 and 115 us); the
 * executor's small GPT at tp=2 computes about 1.6 ms between two of its
 * collectives.  So on the CPU each collective point up to COMPUTE_MAX_BYTES
 * is also timed after COLL_COMPUTE_S of 256^3 sgemms on every rank (at
 * least BUSY_FACTOR times the loop's time): each rank times the call
 * from its post; per call the shortest of the group's times (the last
 * arriver's: the others also waited for it); the median, the slowest
 * group's, at least the loop's (exposed_s).  Larger buffers do not fit
 * the caches in the loop either. */
#define COMPUTE_MAX_BYTES (8.0 * 1048576.0)
#define COLL_COMPUTE_S 2e-3

static void time_coll_after_compute(struct cal_session *s, struct coll_ctx *x, MPI_Comm comm,
				    struct busy_walk *w, struct cal_coll_point *p)
{
	double busy = fmin(BUSY_MAX_S, fmax(COLL_COMPUTE_S, BUSY_FACTOR * p->loop_s));
	int calls = busy + p->loop_s > BUSY_LONG_S ? BUSY_CALLS_LONG : BUSY_CALLS;
	double t[BUSY_CALLS];
	int got = 0;

	for (int i = -1; i < calls && x->st == PPLAN_OK; i++) {
		double t0;
		MPI_Barrier(s->world);
		gemm_for(s, w, busy);
		t0 = cal_now();
		run_one(s, x);
		s->b->ops->sync(s->b, NULL);
		if (i >= 0)
			t[got++] = cal_now() - t0;
	}
	/* of a call's times the last arriver's is the collective's own */
	MPI_Allreduce(MPI_IN_PLACE, t, got, MPI_DOUBLE, MPI_MIN, comm);
	p->exposed_s = fmax(p->loop_s, median_max(s, t, got));
}

/* The link class of the group: one host, or several. */
static void group_link(struct cal_session *s, MPI_Comm comm, char *link, size_t len)
{
	int node_id = 0, lo = 0, hi = 0;
	/* a host's id: the world rank of its first rank */
	int mine = s->rank;
	MPI_Allreduce(&mine, &node_id, 1, MPI_INT, MPI_MIN, s->node);
	MPI_Allreduce(&node_id, &lo, 1, MPI_INT, MPI_MIN, comm);
	MPI_Allreduce(&node_id, &hi, 1, MPI_INT, MPI_MAX, comm);
	if (lo != hi)
		snprintf(link, len, "net");
	else
		snprintf(link, len, "%s", s->b->kind == BE_CPU ? "shm" : "nvlink");
}

enum pplan_status cal_collective(struct cal_session *s, enum coll_op op, int ranks,
				 const double *bytes, int n, struct cal_coll *out,
				 struct perr *e)
{
	struct coll_ctx x;
	struct busy_walk walk = { NULL, 0, 0, NULL };
	MPI_Comm comm = MPI_COMM_NULL;
	enum pplan_status st = PPLAN_OK;
	double budget = cal_mem_budget(s); /* the smallest rank's, agreed at open */

	memset(out, 0, sizeof *out);
	memset(&x, 0, sizeof x);
	out->op = op;
	out->ranks = ranks;
	if (ranks < 1 || ranks > s->size || s->size % ranks || n > CAL_MAX_SIZES ||
	    (op == COLL_SENDRECV && ranks < 2) || (op == COLL_REDUCE))
		return perr_set(e, PPLAN_EINPUT, "cannot measure %s over groups of %d of %d ranks",
				cal_coll_name(op), ranks, s->size);
	out->groups = s->size / ranks;
	MPI_Comm_split(s->world, s->rank / ranks, s->rank, &comm);
	group_link(s, comm, out->link, sizeof out->link);
	st = s->b->ops->group_create(s->b, comm, s->rank / ranks, s->rank, &x.g, e);
	if (st != PPLAN_OK)
		MPI_Comm_free(&comm);
	st = cal_agree(s, st, e);
	if (st != PPLAN_OK)
		return st;
	x.op = op;
	x.n = ranks;
	x.me = s->rank % ranks;
	x.reqs = calloc((size_t)(2 * ranks), sizeof *x.reqs);
	/* the compute a step puts before its transfers: GEMMs for every
	 * collective a step waits on, a memory walk too for send/receive
	 * (without them, the loop's times only) */
	if (s->b->kind == BE_CPU && ranks > 1 && op != COLL_BROADCAST &&
	    (op != COLL_SENDRECV || ranks % 2 == 0)) {
		walk.gemm = calloc(3 * BUSY_GEMM_DIM * BUSY_GEMM_DIM, sizeof(float));
		if (walk.gemm && op == COLL_SENDRECV) {
			walk.n = (size_t)(fmin(BUSY_WALK_BYTES, budget / 4) / sizeof(float));
			walk.buf = walk.n >= 4096 ? calloc(walk.n, sizeof(float)) : NULL;
			if (!walk.buf) {
				free(walk.gemm);
				walk.gemm = NULL;
			}
		}
	}
	for (int i = 0; i < n && st == PPLAN_OK; i++) {
		struct cal_coll_point *p = &out->pts[out->n];
		long ns, nr, wrong = 0;
		x.count = count_of(op, ranks, bytes[i]);
		elements_of(op, ranks, x.count, &ns, &nr);
		if ((double)(ns + nr) * sizeof(float) > budget)
			break; /* the sizes beyond what memory allows */
		x.send = ns ? s->b->ops->alloc(s->b, (size_t)ns * sizeof(float)) : NULL;
		x.recv = s->b->ops->alloc(s->b, (size_t)nr * sizeof(float));
		x.st = (!x.recv || (ns && !x.send) || !x.reqs)
			       ? perr_set(&x.err, PPLAN_ENOMEM, "out of memory for %s of %.0f bytes",
					  cal_coll_name(op), bytes[i])
			       : PPLAN_OK;
		st = cal_agree(s, x.st, &x.err);
		if (st == PPLAN_OK) {
			wrong = check(s, &x);
			MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, s->world);
			st = cal_agree(s, x.st, &x.err);
		}
		if (st == PPLAN_OK) {
			p->time_s = p->loop_s = time_coll(s, &x, &p->iters);
			if (walk.gemm && op == COLL_SENDRECV)
				time_sendrecv_busy(s, &x, &walk, p);
			else if (walk.gemm && bytes[i] <= COMPUTE_MAX_BYTES)
				time_coll_after_compute(s, &x, comm, &walk, p);
			st = cal_agree(s, x.st, &x.err);
		}
		if (st == PPLAN_OK) {
			p->count = x.count * (op == COLL_ALLGATHER || op == COLL_REDUCESCATTER ||
						      op == COLL_ALLTOALL ? ranks : 1);
			p->bytes = size_of(op, ranks, x.count);
			p->algbw_gbps = p->bytes / p->time_s / 1e9;
			p->busbw_gbps = p->algbw_gbps * coll_busbw_factor(op, ranks);
			p->wrong = wrong;
			out->n++;
		} else {
			*e = x.err;
		}
		s->b->ops->free(s->b, x.send);
		s->b->ops->free(s->b, x.recv);
		x.send = x.recv = NULL;
	}
	free(x.reqs);
	free(walk.buf);
	free(walk.gemm);
	s->b->ops->group_free(s->b, x.g);
	if (st == PPLAN_OK)
		cal_fit(out);
	return st;
}

long cal_coll_wrong(const struct cal_coll *c)
{
	long w = 0;
	for (int i = 0; i < c->n; i++)
		w += c->pts[i].wrong;
	return w;
}

void cal_fit(struct cal_coll *c)
{
	double f = coll_busbw_factor(c->op, c->ranks), alpha = INFINITY, sxy = 0, sxx = 0,
	       sum = 0;
	int any_big = 0;
	c->alpha_s = c->busbw_gbps = c->avg_busbw_gbps = NAN;
	if (c->n == 0)
		return;
	for (int i = 0; i < c->n; i++) {
		if (c->pts[i].bytes <= 4096 && c->pts[i].time_s < alpha)
			alpha = c->pts[i].time_s;
		any_big |= c->pts[i].bytes >= 1048576;
		sum += c->pts[i].busbw_gbps;
	}
	if (!isfinite(alpha))
		alpha = c->pts[0].time_s;
	for (int i = 0; i < c->n; i++) {
		double x = c->pts[i].bytes * f, y = c->pts[i].time_s - alpha;
		if (any_big && c->pts[i].bytes < 1048576)
			continue;
		sxy += x * y;
		sxx += x * x;
	}
	/* a fit beyond what a profile may state (noise on a loaded machine:
	 * times that barely grow, or a tiny message that took seconds) is no
	 * fit: null in the profile, the points still there */
	c->alpha_s = alpha <= PROFILE_ALPHA_MAX_S ? alpha : NAN;
	c->busbw_gbps = sxy > 0 ? sxx / sxy / 1e9 : NAN;
	if (!(c->busbw_gbps >= PROFILE_GBPS_MIN && c->busbw_gbps <= PROFILE_GBPS_MAX))
		c->busbw_gbps = NAN;
	c->avg_busbw_gbps = sum / c->n;
}
