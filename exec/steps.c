/*
 * steps.c: warm-up and timed steps, measured as nccl-tests measures:
 * warm-up steps excluded, every op of the op list timed, the step time
 * of a step from the first rank's start to the last rank's end on rank
 * 0's clock (clocks.c), the median and the spread over the timed steps,
 * results reduced across ranks and gathered on rank 0.
 *
 * Per step every rank resolves its log (timeline.c) into op times and
 * op classes; the first rank of each pipeline stage (tp = dp = 0) sends
 * its timeline to rank 0, which splits each receive's wait into the part
 * before the sender posted (idle: the bubble) and the transfer (pipeline
 * communication), using the sender's own times.  Every gather is
 * non-blocking and polled, so a dead rank cannot hang the others here
 * either.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_internal.h"

static int op_class_of(int kind)
{
	switch (kind) {
	case OP_FWD: return OC_FORWARD;
	case OP_BWD:
	case OP_BWD_INPUT:
	case OP_BWD_WEIGHT: return OC_BACKWARD;
	case RUN_OP_DP: return OC_DP;
	case RUN_OP_OPTIMIZER: return OC_OPTIMIZER;
	default: return OC_PP;
	}
}

/* This rank's step in seconds: its ops, its classes, its step time and
 * the time outside every op, counted from origin_s, when the step began
 * on rank 0's clock (clocks.c). */
struct local_step {
	long nops;
	double step_s, outside_s, origin_s;
	double classes[OC_COUNT];
	struct run_op ops[];
};

static struct local_step *resolve(struct exec *x)
{
	struct backend *b = x->be;
	const struct exec_timeline *t = &x->tl;
	struct local_step *ls = calloc(1, sizeof *ls + (size_t)t->nop * sizeof(struct run_op));
	double covered = 0, prev_end = 0;
	if (!ls)
		return NULL;
	for (int i = 0; i + 1 < t->nseg; i++) {
		double t0 = b->ops->mark_seconds(b, t->seg[i].mark);
		double t1 = b->ops->mark_seconds(b, t->seg[i + 1].mark);
		if (t->seg[i].cls >= 0 && t->seg[i].cls < OC_COUNT)
			ls->classes[t->seg[i].cls] += t1 - t0;
	}
	ls->step_s = t->nseg > 0 ? b->ops->mark_seconds(b, t->seg[t->nseg - 1].mark) : 0;
	ls->origin_s = x->step_origin_s;
	ls->nops = t->nop;
	for (int i = 0; i < t->nop; i++) {
		struct run_op *o = &ls->ops[i];
		o->kind = t->op[i].kind;
		o->mb = t->op[i].mb;
		o->chunk = t->op[i].chunk;
		o->cls = op_class_of(o->kind);
		o->start_s = b->ops->mark_seconds(b, t->op[i].m0);
		o->end_s = b->ops->mark_seconds(b, t->op[i].m1);
		if (o->end_s > prev_end) {
			covered += o->end_s - (o->start_s > prev_end ? o->start_s : prev_end);
			prev_end = o->end_s;
		}
	}
	ls->outside_s = ls->step_s > covered ? ls->step_s - covered : 0;
	return ls;
}

/* A rank's ops onto the common axis: `by` seconds after the step's
 * first origin. */
static void shift_ops(struct run_op *ops, long n, double by)
{
	for (long i = 0; i < n; i++) {
		ops[i].start_s += by;
		ops[i].end_s += by;
	}
}

/* The earliest origin of n gathered steps. */
static double first_origin(const char *all, const int *offs, int n)
{
	double first = INFINITY;
	for (int r = 0; r < n; r++) {
		const struct local_step *q = (const void *)(all + offs[r]);
		if (q->origin_s < first)
			first = q->origin_s;
	}
	return first;
}

/* The runs of `cls` segments on this rank's log, each one exchange: their
 * starts on rank 0's clock (clocks.c) and lengths into start and len (room
 * for one a segment); the count. */
static int class_runs(struct exec *x, const struct local_step *ls, int cls, double *start,
		      double *len)
{
	struct backend *b = x->be;
	const struct exec_timeline *t = &x->tl;
	int n = 0;
	for (int i = 0; i + 1 < t->nseg; i++) {
		int j = i;
		if (t->seg[i].cls != cls || (i > 0 && t->seg[i - 1].cls == cls))
			continue;
		while (j + 2 < t->nseg && t->seg[j + 1].cls == cls)
			j++;
		start[n] = ls->origin_s + b->ops->mark_seconds(b, t->seg[i].mark);
		len[n] = b->ops->mark_seconds(b, t->seg[j + 1].mark) -
			 b->ops->mark_seconds(b, t->seg[i].mark);
		n++;
	}
	return n;
}

/* `wait` seconds of cls waited for a peer: they move to idle (no more
 * than cls holds). */
static void move_wait(struct local_step *ls, int cls, double wait)
{
	if (wait > ls->classes[cls])
		wait = ls->classes[cls];
	if (wait > 0 && cls != OC_IDLE) {
		ls->classes[cls] -= wait;
		ls->classes[OC_IDLE] += wait;
	}
}

/* Each exchange's part before `ready` (when its peers had arrived or
 * posted) waits for a peer. */
static void move_waits(struct local_step *ls, int cls, int n, const double *start,
		       const double *len, const double *ready)
{
	for (int k = 0; k < n; k++)
		move_wait(ls, cls, fmin(ready[k] - start[k], len[k]));
}

/* The same count `n` on every member of comm (or -1 here), agreed. */
static enum pplan_status same_count(struct exec *x, MPI_Comm comm, int n, int *agreed,
				    struct perr *e)
{
	int span[2] = { n, -n }, got[2];
	MPI_Request rq;
	enum pplan_status st;
	MPI_Iallreduce(span, got, 2, MPI_INT, MPI_MAX, comm, &rq);
	st = exec_wait_mpi(x, &rq, "the group's exchange count", e);
	*agreed = st == PPLAN_OK && n >= 0 && got[0] == -got[1];
	return st;
}

/* A collective ends when its last member arrives, and a ring exchange
 * cannot before its neighbours have posted their halves: the time a rank
 * spends in one before then waits for a peer (imbalance), not the
 * transfer the cost model prices.  It moves to idle, as a receive's wait
 * for its sender does (split_receives).  TP: each run of tp_comm
 * segments is one collective, in the same order on every member; the
 * starts are exchanged.  CP: each run of cp_comm segments waits for one
 * ring pass (ring.c), posted to the next rank and from the previous one;
 * the posts and the waits' starts are exchanged.  The previous rank's
 * half is ready at its post.  The next rank's is ready at its post on a
 * GPU (NCCL moves data on its own); on the CPU at the start of its wait:
 * MPI without a progress thread hands a large message over (the receiver
 * copies it) only once the receiver calls into MPI, so the sender's half
 * ends no sooner.  Where the counts differ between
 * members, nothing moves. */
static enum pplan_status split_peer_waits(struct exec *x, struct local_step *ls, int cls,
					  MPI_Comm comm, int size, struct perr *e)
{
	struct backend *b = x->be;
	int n, agreed = 0, ring = cls == OC_CP, me = x->rc.c[DIM_CP];
	double *start = NULL, *len = NULL, *mine = NULL, *all = NULL, *ready = NULL;
	MPI_Request rq;
	enum pplan_status st;

	if (size <= 1)
		return PPLAN_OK;
	/* at most one run per segment */
	n = x->tl.nseg > 0 ? x->tl.nseg : 1;
	start = malloc((size_t)n * sizeof *start);
	len = malloc((size_t)n * sizeof *len);
	ready = malloc((size_t)n * sizeof *ready);
	all = malloc((size_t)n * 2 * (size_t)size * sizeof *all);
	/* a ring's posts, then its waits' starts; a collective's starts */
	mine = ring ? malloc((size_t)n * 2 * sizeof *mine) : start;
	n = start && len ? class_runs(x, ls, cls, start, len) : -1;
	if (ring && n != x->tl.npost)
		n = -1;
	st = same_count(x, comm, ready && all && mine ? n : -1, &agreed, e);
	if (st != PPLAN_OK || !agreed || n == 0)
		goto out;
	for (int k = 0; ring && k < n; k++) {
		mine[k] = ls->origin_s + b->ops->mark_seconds(b, x->tl.post[k]);
		mine[n + k] = start[k];
	}
	MPI_Iallgather(mine, ring ? 2 * n : n, MPI_DOUBLE, all, ring ? 2 * n : n, MPI_DOUBLE,
		       comm, &rq);
	st = exec_wait_mpi(x, &rq, ring ? "the ring's posts" : "the group's collective starts", e);
	for (int k = 0; st == PPLAN_OK && k < n; k++) {
		if (ring) {
			const double *prev = all + ((me + size - 1) % size) * 2 * n;
			const double *next = all + ((me + 1) % size) * 2 * n;
			double from = prev[k], to = b->kind == BE_CPU ? next[n + k] : next[k];
			ready[k] = from > to ? from : to;
		} else {
			ready[k] = start[k];
			for (int r = 0; r < size; r++)
				if (all[r * n + k] > ready[k])
					ready[k] = all[r * n + k];
		}
	}
	if (st == PPLAN_OK)
		move_waits(ls, cls, n, start, len, ready);
out:
	if (mine != start)
		free(mine);
	free(start);
	free(len);
	free(ready);
	free(all);
	return st;
}

/* The blocking collectives of the step's end (timeline.c's syncs: the
 * gradient buckets' last wait, the tied embedding's and the
 * sequence-parallel gradients' all-reduces, the gradient norm's over
 * every rank, the first weight gather) end no sooner than their group's
 * last member arrives; the time before waits for a peer (a stage that
 * ends its backward later, a slower replica) and moves from the class
 * it was counted in to idle, as split_peer_waits does for TP and CP.
 * Each group in turn, in the same order on every rank; members only. */
static enum pplan_status split_sync_waits(struct exec *x, struct local_step *ls,
					  struct perr *e)
{
	struct backend *b = x->be;
	const struct exec_timeline *t = &x->tl;
	MPI_Comm comms[SYNC_GROUPS] = { x->world, x->dp_comm, x->emb_comm, x->tp_comm };
	int cap = t->nsync > 0 ? t->nsync : 1;
	double *mine = malloc((size_t)cap * sizeof *mine), *last = malloc((size_t)cap * sizeof *last);
	int *idx = malloc((size_t)cap * sizeof *idx);
	enum pplan_status st = PPLAN_OK;

	for (int g = 0; g < SYNC_GROUPS && st == PPLAN_OK; g++) {
		int size = 1, n = 0, agreed = 0;
		MPI_Request rq;
		if (comms[g] == MPI_COMM_NULL)
			continue;
		MPI_Comm_size(comms[g], &size);
		if (size <= 1)
			continue;
		for (int i = 0; mine && last && idx && i < t->nsync; i++)
			if (t->sync[i].group == g) {
				idx[n] = i;
				mine[n++] = ls->origin_s + b->ops->mark_seconds(b, t->sync[i].arrive);
			}
		st = same_count(x, comms[g], mine && last && idx ? n : -1, &agreed, e);
		if (st != PPLAN_OK || !agreed || n == 0)
			continue;
		MPI_Iallreduce(mine, last, n, MPI_DOUBLE, MPI_MAX, comms[g], &rq);
		st = exec_wait_mpi(x, &rq, "the group's arrivals", e);
		for (int k = 0; st == PPLAN_OK && k < n; k++) {
			const struct exec_sync *y = &t->sync[idx[k]];
			double in = b->ops->mark_seconds(b, y->leave) -
				    b->ops->mark_seconds(b, y->arrive);
			move_wait(ls, y->cls, fmin(last[k] - mine[k], in));
		}
	}
	free(mine);
	free(last);
	free(idx);
	return st;
}

static size_t local_bytes(const struct local_step *ls)
{
	return sizeof *ls + (size_t)ls->nops * sizeof(struct run_op);
}

/* The rank of stage s's first member. */
static int stage_rank(const struct exec *x, int s)
{
	struct rank_coords rc;
	memset(&rc, 0, sizeof rc);
	rc.c[DIM_PP] = s;
	return (int)layout_coords_rank(&x->l, &x->opt.order, &rc);
}

static int representative(const struct exec *x)
{
	return x->rc.c[DIM_TP] == 0 && x->rc.c[DIM_DP] == 0 && x->rc.c[DIM_CP] == 0;
}

/* Gathers a byte blob of every rank (0 bytes from most) on rank 0. */
enum pplan_status exec_gather_blobs(struct exec *x, const void *mine, int len,
				      char **all, int **lens, int **offs,
				      struct perr *e)
{
	MPI_Request r;
	enum pplan_status st;
	int total = 0;
	*all = NULL;
	*lens = *offs = NULL;
	if (x->rank == 0) {
		*lens = calloc((size_t)x->size, sizeof(int));
		*offs = calloc((size_t)x->size, sizeof(int));
		if (!*lens || !*offs)
			return perr_set(e, PPLAN_ENOMEM, "out of host memory for the gather");
	}
	MPI_Igather(&len, 1, MPI_INT, x->rank == 0 ? *lens : NULL, 1, MPI_INT, 0, x->world, &r);
	if ((st = exec_wait_mpi(x, &r, "the other ranks' measurements", e)) != PPLAN_OK)
		return st;
	if (x->rank == 0) {
		for (int i = 0; i < x->size; i++) {
			(*offs)[i] = total;
			total += (*lens)[i];
		}
		*all = malloc((size_t)(total > 0 ? total : 1));
		if (!*all)
			return perr_set(e, PPLAN_ENOMEM, "out of host memory for the gather");
	}
	MPI_Igatherv(mine, len, MPI_BYTE, *all, *lens, *offs, MPI_BYTE, 0, x->world, &r);
	return exec_wait_mpi(x, &r, "the other ranks' measurements", e);
}

static int vstage(const struct exec *x, int stage, int chunk)
{
	return chunk * x->l.pp + stage;
}

/* Rank 0: the part of each receive's wait before its sender posted the
 * transfer is idle time, not communication. */
static void split_receives(const struct exec *x, struct run_timeline *t)
{
	for (int s = 0; s < t->stages; s++) {
		struct run_stage *rs = &t->stage[s];
		for (long i = 0; i < rs->nops;) {
			long j = i;
			double posted = -INFINITY, start = rs->ops[i].start_s, end = rs->ops[i].end_s;
			int any = 0;
			while (j < rs->nops && rs->ops[j].start_s == start && rs->ops[j].end_s == end &&
			       rs->ops[j].cls == OC_PP && rs->ops[j].kind < OP_KIND_COUNT &&
			       !op_is_compute((enum op_kind)rs->ops[j].kind)) {
				const struct run_op *o = &rs->ops[j];
				if (o->kind == OP_RECV_ACT || o->kind == OP_RECV_GRAD) {
					int grad = o->kind == OP_RECV_GRAD;
					int pv = vstage(x, s, o->chunk) + (grad ? 1 : -1);
					int ps = pv % x->l.pp, pc = pv / x->l.pp;
					int want = grad ? OP_SEND_GRAD : OP_SEND_ACT;
					any = 1;
					if (ps >= 0 && ps < t->stages)
						for (long k = 0; k < t->stage[ps].nops; k++) {
							const struct run_op *q = &t->stage[ps].ops[k];
							if (q->kind == want && q->mb == o->mb && q->chunk == pc) {
								if (q->start_s > posted)
									posted = q->start_s;
								break;
							}
						}
				}
				j++;
			}
			if (j == i)
				j = i + 1;
			if (any && posted > start) {
				double cut = posted < end ? posted : end, idle = cut - start;
				rs->classes_s[OC_PP] -= idle;
				rs->classes_s[OC_IDLE] += idle;
				if (rs->classes_s[OC_PP] < 0)
					rs->classes_s[OC_PP] = 0;
				/* in the timeline the wait shows as idle: the receive
				 * itself starts when its sender posted; the sends of
				 * the group were posted (not blocked) at its start */
				for (long k = i; k < j; k++) {
					struct run_op *o = &rs->ops[k];
					if (o->kind == OP_RECV_ACT || o->kind == OP_RECV_GRAD)
						o->start_s = cut;
					else
						o->end_s = o->start_s;
				}
			}
			i = j;
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Measured memory of one rank: the model's (pplan's own buffers at their
 * peak, split by what holds them) and the process's or device's peak. */
struct rank_memory {
	struct mem_breakdown held;
	double process_peak;
};

static void local_memory(const struct exec *x, struct rank_memory *rm)
{
	struct mem_breakdown *m = &rm->held;
	struct be_memory bm = { 0, 0, 0 };
	double peak;
	memset(rm, 0, sizeof *rm);
	x->be->ops->memory(x->be, &bm);
	peak = bm.own_peak;
	rm->process_peak = bm.process_peak > peak ? bm.process_peak : peak;
	m->weights = (double)x->nparam * (double)x->esize;
	m->gradients = (double)x->nparam * 4.0 + (x->grad_shard ? (double)x->shard_len * 4.0 : 0);
	m->optimizer = 3.0 * (double)x->shard_len * 4.0;
	m->activations = (double)x->slots_peak * (double)x->slot_bytes + (double)x->work_bytes +
			 (double)(x->nsends + 1) * (double)x->d.Tl * (double)x->d.C * (double)x->esize;
	m->total = peak;
	m->other = peak - m->weights - m->gradients - m->optimizer - m->activations;
	if (m->other < 0)
		m->other = 0;
	m->stage = x->stage;
	m->inflight = x->slots_peak;
}

static enum pplan_status finish(struct exec *x, struct run_measured *r,
				struct run_timeline *steps, long total,
				struct perr *e)
{
	enum pplan_status st;
	struct rank_memory mine;
	char *all = NULL;
	int *lens = NULL, *offs = NULL;
	char host[64] = "";

	/* the clocks: the largest offset from rank 0's and its bound */
	{
		double mine_c[2] = { fabs(x->clock_to_rank0_s), x->clock_bound_s }, most[2] = { 0, 0 };
		MPI_Request rq;
		MPI_Ireduce(mine_c, most, 2, MPI_DOUBLE, MPI_MAX, 0, x->world, &rq);
		if ((st = exec_wait_mpi(x, &rq, "the other ranks' clocks", e)) != PPLAN_OK)
			return st;
		r->clock_offset_max_s = most[0];
		r->clock_bound_max_s = most[1];
	}

	/* memory: every rank's peak; each stage's breakdown from its first rank */
	local_memory(x, &mine);
	st = exec_gather_blobs(x, &mine, (int)sizeof mine, &all, &lens, &offs, e);
	if (st == PPLAN_OK && x->rank == 0) {
		r->rank_mem_peak = calloc((size_t)x->size, sizeof(double));
		r->rank_process_peak = calloc((size_t)x->size, sizeof(double));
		r->stage_mem = calloc((size_t)x->l.pp, sizeof *r->stage_mem);
		if (!r->rank_mem_peak || !r->rank_process_peak || !r->stage_mem)
			st = perr_set(e, PPLAN_ENOMEM, "out of host memory for the results");
		for (int i = 0; st == PPLAN_OK && i < x->size; i++) {
			const struct rank_memory *m = (const void *)(all + offs[i]);
			r->rank_mem_peak[i] = m->held.total;
			r->rank_process_peak[i] = m->process_peak;
			if (m->held.total > r->mem_peak_bytes)
				r->mem_peak_bytes = m->held.total;
			if (m->process_peak > r->mem_process_peak_bytes)
				r->mem_process_peak_bytes = m->process_peak;
		}
		for (int s = 0; st == PPLAN_OK && s < x->l.pp; s++) {
			const struct rank_memory *m = (const void *)(all + offs[stage_rank(x, s)]);
			r->stage_mem[s] = m->held;
		}
	}
	free(all);
	free(lens);
	free(offs);
	all = NULL;
	lens = offs = NULL;
	if (st != PPLAN_OK)
		return st;

	/* hosts */
	snprintf(host, sizeof host, "%s", x->host);
	st = exec_gather_blobs(x, host, (int)sizeof host, &all, &lens, &offs, e);
	if (st == PPLAN_OK && x->rank == 0) {
		r->hosts = calloc((size_t)x->size, sizeof(char *));
		for (int i = 0; r->hosts && i < x->size; i++)
			r->hosts[i] = strdup(all + offs[i]);
	}
	free(all);
	free(lens);
	free(offs);
	if (st != PPLAN_OK || x->rank != 0)
		return st;

	/* the timed steps: median, spread, the median step's timeline */
	{
		long n = x->opt.steps, w = x->opt.warmup;
		double *sorted = malloc((size_t)n * sizeof *sorted);
		long med = w;
		if (!sorted)
			return perr_set(e, PPLAN_ENOMEM, "out of host memory for the results");
		memcpy(sorted, r->step_times_s, (size_t)n * sizeof *sorted);
		qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
		r->step_time_s = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
		r->step_min_s = sorted[0];
		r->step_max_s = sorted[n - 1];
		for (long i = 0; i < n; i++)
			if (r->step_times_s[i] == sorted[(n - 1) / 2]) {
				med = w + i;
				break;
			}
		free(sorted);
		r->median_step = med;
		memset(r->classes_s, 0, sizeof r->classes_s);
		r->bubble_fraction = 0;
		for (long i = w; i < total; i++) {
			for (int c = 0; c < OC_COUNT; c++)
				r->classes_s[c] += steps[i].classes_s[c] / n;
			r->bubble_fraction += steps[i].bubble_fraction / n;
		}
		r->timeline = steps[med];
		memset(&steps[med], 0, sizeof steps[med]);
	}
	r->ranks = x->size;
	snprintf(r->device, sizeof r->device, "%s", x->be->device);
	snprintf(r->libraries, sizeof r->libraries, "%s", x->be->libraries);
	r->backend = x->be->ops->name;
	r->precision = x->opt.precision;
	if (x->be->kind == BE_CPU) {
		r->peak_tflops = x->probe_tflops;
		r->peak_source = "sgemm probe";
		probe_machine(x, &r->machine);
	} else {
		r->peak_source = "gpu table";
	}
	return PPLAN_OK;
}

enum pplan_status exec_run(exec_t *x, struct run_measured *r, struct perr *e)
{
	long total = x->opt.warmup + x->opt.steps;
	struct run_timeline *steps = NULL;
	enum pplan_status st = PPLAN_OK;
	double *harness = NULL;

	memset(r, 0, sizeof *r);
	if (x->rank == 0) {
		r->step_times_s = calloc((size_t)x->opt.steps, sizeof(double));
		r->losses = calloc((size_t)total, sizeof(double));
		r->ntensor_ids = x->ntensor_ids;
		r->grad_norms = calloc((size_t)total * (size_t)x->ntensor_ids, sizeof(double));
		steps = calloc((size_t)total, sizeof *steps);
		harness = calloc((size_t)total, sizeof *harness);
		if (!r->step_times_s || !r->losses || !r->grad_norms || !steps || !harness)
			st = perr_set(e, PPLAN_ENOMEM, "out of host memory for the results");
	}
	if ((st = exec_agree_comm(x->world, st, e)) != PPLAN_OK)
		goto out;

	for (long s = 0; s < total && st == PPLAN_OK; s++) {
		struct local_step *ls;
		double v[2], w[2], ends[2] = { 0, 0 }, first = 0;
		MPI_Request rq;
		char *all = NULL;
		int *lens = NULL, *offs = NULL;

		x->step = s;
		if ((st = exec_step(x, e)) != PPLAN_OK)
			break;
		ls = resolve(x);
		if (!ls) {
			st = perr_set(e, PPLAN_ENOMEM, "out of host memory for the step's log");
			break;
		}
		/* the TP collectives' and CP ring passes' waits for a peer: idle */
		if ((st = split_peer_waits(x, ls, OC_TP, x->tp_comm, x->l.tp, e)) != PPLAN_OK ||
		    (st = split_peer_waits(x, ls, OC_CP, x->cp_comm, x->l.cp, e)) != PPLAN_OK ||
		    (st = split_sync_waits(x, ls, e)) != PPLAN_OK) {
			free(ls);
			break;
		}
		/* the loss over every token */
		v[0] = ls->step_s;
		v[1] = x->step_loss;
		MPI_Ireduce(v, w, 2, MPI_DOUBLE, MPI_SUM, 0, x->world, &rq);
		st = exec_wait_mpi(x, &rq, "the step's loss", e);
		if (st == PPLAN_OK) {
			/* from the first rank's start to the last rank's end, on
			 * rank 0's clock */
			double span[2] = { ls->origin_s + ls->step_s, -ls->origin_s }, tmax;
			MPI_Ireduce(span, ends, 2, MPI_DOUBLE, MPI_MAX, 0, x->world, &rq);
			st = exec_wait_mpi(x, &rq, "the step time", e);
			tmax = ends[0] + ends[1];
			first = -ends[1];
			if (st == PPLAN_OK && x->rank == 0) {
				r->losses[s] = w[1] / ((double)x->l.gbs * (double)x->d.S);
				for (int i = 0; i < x->ntensor_ids; i++)
					r->grad_norms[s * x->ntensor_ids + i] =
						x->norms[i] > 0 ? sqrt(x->norms[i]) : NAN;
				if (s >= x->opt.warmup)
					r->step_times_s[s - x->opt.warmup] = tmax;
			}
		}
		if (st == PPLAN_OK)
			st = exec_gather_blobs(x, ls, representative(x) ? (int)local_bytes(ls) : 0, &all,
					  &lens, &offs, e);
		if (st == PPLAN_OK && x->rank == 0) {
			struct run_timeline *t = &steps[s];
			t->stages = x->l.pp;
			t->stage = calloc((size_t)x->l.pp, sizeof *t->stage);
			for (int p = 0; t->stage && p < x->l.pp; p++) {
				const struct local_step *q = (const void *)(all + offs[stage_rank(x, p)]);
				struct run_stage *rs = &t->stage[p];
				rs->stage = p;
				rs->nops = q->nops;
				rs->ops = malloc((size_t)(q->nops > 0 ? q->nops : 1) * sizeof *rs->ops);
				if (rs->ops) {
					memcpy(rs->ops, q->ops, (size_t)q->nops * sizeof *rs->ops);
					shift_ops(rs->ops, q->nops, q->origin_s - first);
				}
				memcpy(rs->classes_s, q->classes, sizeof rs->classes_s);
				harness[s] += q->outside_s / (q->step_s > 0 ? q->step_s : 1) / x->l.pp;
			}
			t->step_time_s = s >= x->opt.warmup ? r->step_times_s[s - x->opt.warmup] : ends[0] + ends[1];
			split_receives(x, t);
			run_timeline_summarise(t);
		}
		free(all);
		free(lens);
		free(offs);
		free(ls);
		r->steps_done = s + 1;
	}
	if (st == PPLAN_OK)
		st = finish(x, r, steps, total, e);
	if (st == PPLAN_OK && x->rank == 0) {
		r->harness_overhead = 0;
		for (long s = x->opt.warmup; s < total; s++)
			r->harness_overhead += harness[s] / x->opt.steps;
		if (r->mem_peak_bytes <= 0)
			r->mem_peak_bytes = NAN;
		if (r->mem_process_peak_bytes <= 0)
			r->mem_process_peak_bytes = NAN;
		r->ntensor_ids = x->ntensor_ids;
		r->tensor_names = calloc((size_t)x->ntensor_ids, sizeof *r->tensor_names);
		for (int i = 0; r->tensor_names && i < x->ntensor_ids; i++)
			exec_tensor_name(&x->m, i, r->tensor_names[i], sizeof r->tensor_names[i]);
	}
out:
	for (long s = 0; steps && s < total; s++)
		run_timeline_free(&steps[s]);
	free(steps);
	free(harness);
	return st;
}


enum pplan_status exec_trace(exec_t *x, struct run_timeline *out, struct perr *e)
{
	struct local_step *ls = resolve(x);
	char *all = NULL;
	int *lens = NULL, *offs = NULL;
	enum pplan_status st;

	memset(out, 0, sizeof *out);
	if (!ls)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the trace");
	st = exec_gather_blobs(x, ls, (int)local_bytes(ls), &all, &lens, &offs, e);
	if (st == PPLAN_OK && x->rank == 0) {
		double first = first_origin(all, offs, x->size);
		out->stages = x->size;
		out->stage = calloc(x->size > 0 ? (size_t)x->size : 1, sizeof *out->stage);
		for (int r = 0; out->stage && r < x->size; r++) {
			const struct local_step *q = (const void *)(all + offs[r]);
			struct rank_coords rc;
			layout_rank_coords(&x->l, &x->opt.order, r, &rc);
			out->stage[r].stage = rc.c[DIM_PP];
			out->stage[r].nops = q->nops;
			out->stage[r].ops = malloc((size_t)(q->nops > 0 ? q->nops : 1) * sizeof(struct run_op));
			if (out->stage[r].ops) {
				memcpy(out->stage[r].ops, q->ops, (size_t)q->nops * sizeof(struct run_op));
				shift_ops(out->stage[r].ops, q->nops, q->origin_s - first);
			}
		}
		if (!out->stage)
			st = perr_set(e, PPLAN_ENOMEM, "out of host memory for the trace");
	}
	free(all);
	free(lens);
	free(offs);
	free(ls);
	return st;
}
