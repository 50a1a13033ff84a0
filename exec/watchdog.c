/*
 * watchdog.c: no rank waits forever, and a failure names its rank.
 *
 * Every wait of the executor polls (backend.h); while it polls it asks
 * the watchdog, which gives up when the wait has lasted longer than
 * --timeout, a SIGINT/SIGTERM arrived, or a rank of this host is gone.
 * The ranks of a host share a heartbeat board (MPI_Win_allocate_shared):
 * each rank's process id, the op it started last and when, and what it
 * last polled a wait for.  From it a message says what this rank waited
 * for and where it was (step, op) and names the culprit: a rank whose
 * process is gone (kill(pid, 0): the launcher's SIGKILL or the OOM
 * killer), or for a hang the rank that stopped first (its last op the
 * oldest) and what each other stopped rank waits for.  A rank that
 * crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) says so itself and
 * exits 1, so the launcher ends the job with status 1.  The caller then
 * ends the job (exec_abort: MPI_Abort), so every rank stops.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec_internal.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

double exec_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void describe_op(const struct exec *x, long op, char *buf, size_t len)
{
	if (op == x->sched.count) {
		snprintf(buf, len, "the step's end (gradient reduction, optimizer, closing exchanges)");
		return;
	}
	if (op < 0 || op > x->sched.count) {
		snprintf(buf, len, "outside the pipeline ops");
		return;
	}
	{
		const struct sched_op *o = &x->sched.s->ops[x->sched.first + op];
		snprintf(buf, len, "op %ld (%s of microbatch %d, chunk %d)", op + 1,
			 run_op_name(o->kind), o->mb, o->chunk);
	}
}

/* A rank of this host whose process is gone, or that crashed: its index
 * on the board, else -1. */
static int gone_rank(const struct exec *x)
{
	for (int j = 0; x->board && j < x->local_size; j++) {
		const struct beat *bt = &x->board[j];
		if (j == x->local_rank || bt->state == 1 || bt->pid <= 0)
			continue;
		if (bt->state == 2 || (kill(bt->pid, 0) != 0 && errno == ESRCH))
			return j;
	}
	return -1;
}

/* "; rank R (pid P) died in step S at OP" for board entry j. */
static void say_gone(const struct exec *x, int j, char *buf, size_t len)
{
	const struct beat *bt = &x->board[j];
	char op[128];
	describe_op(x, bt->op, op, sizeof op);
	snprintf(buf, len, "; rank %d (pid %d) %s in step %ld at %s", x->node_world_rank[j],
		 bt->pid, bt->state == 2 ? "crashed" : "died (its process is gone)", bt->step + 1,
		 op);
}

/* Is board entry j waiting now (it polled a wait since its op began,
 * within the last second)? */
static int waiting(const struct beat *bt, double now)
{
	return bt->wait_t >= bt->t && now - bt->wait_t < 1.0;
}

/* For a hang: the stopped rank of this host whose last op began first
 * (one not waiting for another rank before one that is), then what each
 * other stopped rank waits for. */
static void say_stopped(const struct exec *x, double now, char *buf, size_t len)
{
	int first = -1;
	size_t used = 0;
	for (int j = 0; x->board && j < x->local_size; j++) {
		const struct beat *bt = &x->board[j], *f = first >= 0 ? &x->board[first] : NULL;
		if (j == x->local_rank || bt->state == 1 || now - bt->t < x->opt.timeout_s / 2)
			continue;
		if (!f || (waiting(f, now) && !waiting(bt, now)) ||
		    (waiting(f, now) == waiting(bt, now) && bt->t < f->t))
			first = j;
	}
	buf[0] = '\0';
	for (int pass = 0; first >= 0 && pass < 2; pass++)
		for (int j = 0; j < x->local_size; j++) {
			const struct beat *bt = &x->board[j];
			char op[128];
			int n;
			if ((pass == 0) != (j == first) || j == x->local_rank || bt->state == 1 ||
			    now - bt->t < x->opt.timeout_s / 2)
				continue;
			describe_op(x, bt->op, op, sizeof op);
			if (j == first && !waiting(bt, now))
				n = snprintf(buf + used, len - used,
					     "; rank %d stopped first: no progress for %.0f s since step %ld, %s, and it waits for no other rank",
					     x->node_world_rank[j], now - bt->t, bt->step + 1, op);
			else
				n = snprintf(buf + used, len - used,
					     "; rank %d %s for %s since step %ld, %s",
					     x->node_world_rank[j],
					     j == first ? "stopped first, waiting" : "waits",
					     bt->what[0] ? bt->what : "another rank", bt->step + 1, op);
			if (n > 0 && (size_t)n < len - used)
				used += (size_t)n;
		}
}

static enum pplan_status check(void *ctx, const char *what, double waited,
			       struct perr *e)
{
	struct exec *x = ctx;
	char here[128], others[640] = "";
	double now = exec_now();
	/* this rank's own pause inside this wait: it did not run (SIGSTOP,
	 * a suspended job, or not scheduled) */
	double paused = x->last_poll_s > 0 ? now - x->last_poll_s : 0;
	int gone;

	x->last_poll_s = now;
	if (got_signal)
		return exec_interrupted(x, e);
	if (x->board) { /* what this rank waits for, for the others' messages */
		struct beat *me = &x->board[x->local_rank];
		me->wait_t = now;
		if (strncmp(me->what, what, sizeof me->what - 1) != 0)
			snprintf(me->what, sizeof me->what, "%s", what);
	}
	if ((gone = now - x->gone_checked >= 0.2 ? gone_rank(x) : -1) >= 0 ||
	    waited >= x->opt.timeout_s) {
		describe_op(x, x->doing_op, here, sizeof here);
		if (gone >= 0) { /* the culprit first */
			say_gone(x, gone, others, sizeof others);
			return perr_set(e, PPLAN_ESYSTEM, "%s; rank %d (%s) was waiting for %s in step %ld at %s",
					others + 2, x->rank, x->host, what, x->step + 1, here);
		}
		if (paused >= x->opt.timeout_s / 2 && paused <= waited + 1.0)
			return perr_set(e, PPLAN_ESYSTEM,
					"rank %d (%s) itself did not run for %.0f s (stopped, as by SIGSTOP or a suspended job, or not scheduled) while it waited for %s in step %ld at %s",
					x->rank, x->host, paused, what, x->step + 1, here);
		say_stopped(x, now, others, sizeof others);
		return perr_set(e, PPLAN_ESYSTEM,
				"rank %d (%s) waited %.0f s for %s in step %ld at %s%s",
				x->rank, x->host, waited, what, x->step + 1, here, others);
	}
	if (now - x->gone_checked >= 0.2)
		x->gone_checked = now;
	return PPLAN_OK;
}

enum pplan_status exec_interrupted(struct exec *x, struct perr *e)
{
	if (!got_signal)
		return PPLAN_OK;
	{
		char here[128], why[160] = "";
		int gone = gone_rank(x); /* the launcher's SIGTERM after a rank died */
		describe_op(x, x->doing_op, here, sizeof here);
		if (gone >= 0)
			say_gone(x, gone, why, sizeof why);
		return perr_set(e, PPLAN_ESYSTEM, "rank %d (%s) stopped by %s in step %ld at %s%s",
				x->rank, x->host, got_signal == SIGINT ? "SIGINT" : "SIGTERM",
				x->step + 1, here, why);
	}
}

/* ---- a crash says so itself ---------------------------------------------------- */

static const struct exec *crash_x;
static char crash_prefix[128];

static size_t put(char *buf, size_t n, size_t cap, const char *s)
{
	while (*s && n + 1 < cap)
		buf[n++] = *s++;
	return n;
}

static size_t put_long(char *buf, size_t n, size_t cap, long v)
{
	char d[24];
	int k = 0;
	if (v < 0)
		v = 0;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) > 0 && k < (int)sizeof d);
	while (k > 0 && n + 1 < cap)
		buf[n++] = d[--k];
	return n;
}

/* Async-signal-safe: the message from pieces made at watch_open, the
 * board marked, exit 1. */
static void on_crash(int sig)
{
	char buf[256];
	size_t n = put(buf, 0, sizeof buf, crash_prefix);
	const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
			   : sig == SIGILL ? "SIGILL" : "SIGABRT";
	n = put(buf, n, sizeof buf, name);
	if (crash_x) {
		n = put(buf, n, sizeof buf, " in step ");
		n = put_long(buf, n, sizeof buf, crash_x->step + 1);
		if (crash_x->doing_op < crash_x->sched.count) {
			n = put(buf, n, sizeof buf, " at op ");
			n = put_long(buf, n, sizeof buf, crash_x->doing_op + 1);
		} else {
			n = put(buf, n, sizeof buf, " after its pipeline ops");
		}
		if (crash_x->board)
			crash_x->board[crash_x->local_rank].state = 2;
	}
	n = put(buf, n, sizeof buf, "; exit 1\n");
	if (write(STDERR_FILENO, buf, n) < 0)
		n = 0;
	exec_release_supervisor();
	_exit(1);
}

static void catch_crashes(const struct exec *x)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa;
	crash_x = x;
	snprintf(crash_prefix, sizeof crash_prefix, "pplan exec: rank %d (%s, pid %d) crashed: ",
		 x->rank, x->host, (int)getpid());
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

void exec_heartbeat(struct exec *x, const struct sched_op *op)
{
	struct beat *b;
	if (!x->board)
		return;
	b = &x->board[x->local_rank];
	b->t = exec_now();
	b->step = x->step;
	b->op = x->doing_op;
	b->kind = op ? op->kind : -1;
	b->mb = op ? op->mb : -1;
	b->chunk = op ? op->chunk : -1;
	b->state = 0;
	b->pid = (int)getpid();
}

enum pplan_status exec_wait_mpi(struct exec *x, MPI_Request *r, const char *what,
				struct perr *e)
{
	struct be_watch w = { check, x };
	return be_mpi_wait(&w, r, what, e);
}

enum pplan_status exec_barrier(struct exec *x, struct perr *e)
{
	MPI_Request r;
	if (MPI_Ibarrier(x->world, &r) != MPI_SUCCESS)
		return perr_set(e, PPLAN_ESYSTEM, "MPI failed to start a barrier");
	return exec_wait_mpi(x, &r, "the other ranks to start the step", e);
}

enum pplan_status watch_open(struct exec *x, struct perr *e)
{
	MPI_Aint size;
	int disp;
	struct beat *base = NULL;
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	got_signal = 0;

	x->be->watch.check = check;
	x->be->watch.ctx = x;
	gethostname(x->host, sizeof x->host - 1);

	if (MPI_Win_allocate_shared((MPI_Aint)sizeof(struct beat), (int)sizeof(struct beat),
				    MPI_INFO_NULL, x->node, &base, &x->board_win) != MPI_SUCCESS)
		return perr_set(e, PPLAN_ESYSTEM, "MPI could not share a heartbeat board on %s", x->host);
	/* the board is the window of local rank 0, one beat per rank */
	if (MPI_Win_shared_query(x->board_win, 0, &size, &disp, &x->board) != MPI_SUCCESS)
		return perr_set(e, PPLAN_ESYSTEM, "MPI could not map the heartbeat board on %s", x->host);
	x->node_world_rank = calloc((size_t)x->local_size, sizeof(int));
	if (!x->node_world_rank)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the heartbeat board");
	MPI_Allgather(&x->rank, 1, MPI_INT, x->node_world_rank, 1, MPI_INT, x->node);
	exec_heartbeat(x, NULL);
	catch_crashes(x);
	return PPLAN_OK;
}

void watch_close(struct exec *x)
{
	if (x->board) {
		x->board[x->local_rank].state = 1;
		MPI_Win_free(&x->board_win);
		x->board = NULL;
	}
	free(x->node_world_rank);
	x->node_world_rank = NULL;
	crash_x = NULL;
	if (x->be)
		x->be->watch.check = NULL;
}
