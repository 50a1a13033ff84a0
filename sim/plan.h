/*
 * plan.h: the inverse questions.  How many GPUs of a cluster train a
 * model on so many tokens within a deadline, and at what cost?  The
 * same job (the one job resolver, sim/job.h) is searched at each size of
 * a ladder of GPU counts (whole nodes: 1, 2, 3, 4, 6, 8, 12, ... of
 * them, and the powers of two within one node); each size's best layout
 * gives its days with the goodput of that size (sim/goodput.h), its
 * GPU-hours and its cost.  With a deadline the answer is the fewest GPUs
 * that meet it.  With a size given, one rung: its best layouts.
 */
#ifndef PPLAN_PLAN_H
#define PPLAN_PLAN_H

#include "job.h"
#include "search.h"

struct plan_request {
	double days;          /* the deadline; 0: none */
	long max_gpus;        /* the ladder's top */
	int top_k;            /* layouts kept per size */
	int closed_form;      /* price layouts in closed form, not simulated */
	int rungs_after;      /* sizes priced past the answer (to show the trade) */
	double tolerance;     /* search_params.tolerance */
};

/* One size of the ladder. */
struct plan_rung {
	struct job *job;              /* resolved for this size (its own) */
	struct search_result r;       /* its search (r.n_top 0: nothing fits) */
	struct job_train_time t;      /* of its best layout */
	int meets;                    /* within the deadline */
	char why[256];                /* nothing fits: why */
};

struct plan_result {
	struct plan_rung *rungs;
	int n;
	int answer;      /* the fewest GPUs that meet the deadline; -1: none (or no deadline) */
	int fastest;     /* fewest days; -1: nothing fits anywhere */
	int cheapest;    /* fewest GPU-hours; -1: nothing fits anywhere */
};

/* The ladder of GPU counts for nodes of `gpn` GPUs up to max_gpus, into
 * out[0..cap); returns how many. */
int plan_sizes(long gpn, long max_gpus, long *out, int cap);

/* Prices `given` (as given: its size fields are ignored unless it names
 * one, which makes a ladder of one size) at each size.  given->train_tokens
 * must be set.  PPLAN_EINPUT for what the job's resolver refuses at every
 * size (an unknown model, a conflict). */
enum pplan_status plan_run(const struct job *given, const struct plan_request *rq,
			   struct plan_result *out, struct perr *err);

void plan_free(struct plan_result *res);

#endif
