/*
 * watchdog.c: no rank waits forever.
 *
 * Every wait of the executor polls (backend.h); while it polls it asks
 * the watchdog, which gives up when the wait has lasted longer than
 * --timeout or a SIGINT/SIGTERM arrived.  Its message says what this rank
 * waited for and where it was (step, op), and names the ranks of this
 * host that stopped making progress, read from a heartbeat board in
 * shared memory (MPI_Win_allocate_shared) that every rank updates at
 * each op.  The caller then ends the job (exec_abort: MPI_Abort), so
 * every rank stops; a rank that died is noticed by the launcher, which
 * ends the others.
 */
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
	if (op < 0 || op >= x->sched.count) {
		snprintf(buf, len, "outside the pipeline ops");
		return;
	}
	{
		const struct sched_op *o = &x->sched.s->ops[x->sched.first + op];
		snprintf(buf, len, "op %ld (%s of microbatch %d, chunk %d)", op + 1,
			 run_op_name(o->kind), o->mb, o->chunk);
	}
}

static enum pplan_status check(void *ctx, const char *what, double waited,
			       struct perr *e)
{
	struct exec *x = ctx;
	char here[96], others[512] = "";
	size_t used = 0;
	double now;

	if (got_signal)
		return exec_interrupted(x, e);
	if (waited < x->opt.timeout_s)
		return PPLAN_OK;
	now = exec_now();
	describe_op(x, x->doing_op, here, sizeof here);
	for (int j = 0; x->board && j < x->local_size; j++) {
		const struct beat *bt = &x->board[j];
		char op[96];
		int n;
		if (j == x->local_rank || bt->state == 1 || now - bt->t < x->opt.timeout_s / 2)
			continue;
		describe_op(x, bt->op, op, sizeof op);
		n = snprintf(others + used, sizeof others - used,
			     "; rank %d has made no progress for %.0f s (step %ld, %s)",
			     x->node_world_rank[j], now - bt->t, bt->step + 1, op);
		if (n > 0 && (size_t)n < sizeof others - used)
			used += (size_t)n;
	}
	return perr_set(e, PPLAN_ESYSTEM,
			"rank %d (%s) waited %.0f s for %s in step %ld at %s%s",
			x->rank, x->host, waited, what, x->step + 1, here, others);
}

enum pplan_status exec_interrupted(struct exec *x, struct perr *e)
{
	if (!got_signal)
		return PPLAN_OK;
	{
		char here[96];
		describe_op(x, x->doing_op, here, sizeof here);
		return perr_set(e, PPLAN_ESYSTEM, "rank %d (%s) stopped by %s in step %ld at %s",
				x->rank, x->host, got_signal == SIGINT ? "SIGINT" : "SIGTERM",
				x->step + 1, here);
	}
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
	if (x->be)
		x->be->watch.check = NULL;
}
