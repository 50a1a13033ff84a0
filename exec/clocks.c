/*
 * clocks.c: every rank's clock read against rank 0's, once at bring-up,
 * so that a step's ops on different ranks fall on one time axis.
 *
 * Each step starts when a rank leaves the step's barrier, and the ranks
 * leave it at different moments (a rank descheduled on a busy host, a
 * barrier's last message arriving late): with each rank's times counted
 * from its own exit, a receive that waited on a sender looks shorter or
 * longer than it was, and the pipeline's span (first forward to last
 * backward, the bubble's denominator) takes in the skew.  So each rank
 * tells rank 0 when, on rank 0's clock, its step began.
 *
 * The offset is Cristian's (1989): rank r reads its clock (t1), asks
 * rank 0 for its clock (t0) and reads its own again when the answer comes
 * (t2); rank 0's clock read t0 somewhere inside [t1, t2], so
 * offset = t0 - (t1 + t2) / 2 is within (t2 - t1) / 2 of the truth.  The
 * round trip with the shortest time of CLOCK_ROUNDS gives the tightest
 * bound; that bound is kept and reported.  Ranks on one host share
 * CLOCK_MONOTONIC, so their measured offsets are within that bound of 0
 * (the test); across hosts they are what their clocks differ by.
 */
#include <math.h>

#include "exec_internal.h"

#define CLOCK_ROUNDS 16
#define CLOCK_TAG 7771

/* Rank 0: answers CLOCK_ROUNDS questions of rank r with its clock. */
static enum pplan_status answer(struct exec *x, int r, struct perr *e)
{
	for (int k = 0; k < CLOCK_ROUNDS; k++) {
		MPI_Request q;
		char ask = 0;
		double t0;
		enum pplan_status st;
		MPI_Irecv(&ask, 1, MPI_CHAR, r, CLOCK_TAG, x->world, &q);
		if ((st = exec_wait_mpi(x, &q, "the other ranks' clocks", e)) != PPLAN_OK)
			return st;
		t0 = exec_now();
		MPI_Isend(&t0, 1, MPI_DOUBLE, r, CLOCK_TAG, x->world, &q);
		if ((st = exec_wait_mpi(x, &q, "the other ranks' clocks", e)) != PPLAN_OK)
			return st;
	}
	return PPLAN_OK;
}

/* Rank r != 0: asks CLOCK_ROUNDS times, keeps the tightest answer. */
static enum pplan_status ask(struct exec *x, struct perr *e)
{
	double best_rtt = INFINITY;
	for (int k = 0; k < CLOCK_ROUNDS; k++) {
		MPI_Request q[2];
		char question = 1;
		double t0 = 0, t1, t2;
		enum pplan_status st;
		MPI_Irecv(&t0, 1, MPI_DOUBLE, 0, CLOCK_TAG, x->world, &q[1]);
		t1 = exec_now();
		MPI_Isend(&question, 1, MPI_CHAR, 0, CLOCK_TAG, x->world, &q[0]);
		if ((st = exec_wait_mpi(x, &q[0], "rank 0's clock", e)) != PPLAN_OK ||
		    (st = exec_wait_mpi(x, &q[1], "rank 0's clock", e)) != PPLAN_OK)
			return st;
		t2 = exec_now();
		if (t2 - t1 < best_rtt) {
			best_rtt = t2 - t1;
			x->clock_to_rank0_s = t0 - 0.5 * (t1 + t2);
		}
	}
	x->clock_bound_s = 0.5 * best_rtt;
	return PPLAN_OK;
}

enum pplan_status exec_clock_sync(struct exec *x, struct perr *e)
{
	enum pplan_status st = PPLAN_OK;
	x->clock_to_rank0_s = 0;
	x->clock_bound_s = 0;
	if (x->rank == 0) {
		for (int r = 1; r < x->size && st == PPLAN_OK; r++)
			st = answer(x, r, e);
	} else {
		st = ask(x, e);
	}
	return st;
}

double exec_clock_rank0(const struct exec *x)
{
	return exec_now() + x->clock_to_rank0_s;
}
