/*
 * tune_out.h: the writer of pplan.tune/1 (docs/design.md, "JSON
 * contracts"): the layouts `pplan tune` ran, each with its predicted and
 * measured step time and ranks, the constants refitted on them, and the
 * layout it would now book.  cli/cmd_tune.c runs the loop.
 */
#ifndef PPLAN_TUNE_OUT_H
#define PPLAN_TUNE_OUT_H

#include <cjson/cJSON.h>

#include "fit.h"
#include "job.h"
#include "search.h"

#define TUNE_MAX_RUNS 16

/* One layout run. */
struct tune_run {
	struct layout layout;
	struct prediction pred;      /* the search's */
	enum family fam;
	int rank_before;             /* 1-based: its place in the predicted order */
	char report[600], log[600];
	int ran, ok;
	char why[256];
	double measured_s, refit_s;
	int rank_after;              /* 1-based among the measured; 0: not measured */
};

/* What the runs gave. */
struct tune_outcome {
	int n, measured, booked;         /* booked: index of the fastest measured, -1 */
	int moved;                       /* runs whose measured rank is not their predicted one */
	int best_pred_rank;              /* the predicted best's measured rank (0: not measured) */
	struct fit_result before, after;
	unsigned char mask[FIT_MAX_CONSTANTS];
	const struct cost_params *start;
	char refit_best[256];            /* the refitted model's best of the whole search */
	double refit_best_s;
	int refit_best_run;              /* its run, -1: not run */
};

/* The document's inputs: the job, the command as typed, and how it ran. */
struct tune_doc {
	const struct job *job;
	const char *command;       /* "pplan tune ..." */
	const char *launcher;      /* "mpirun -np", ... */
	int families;              /* --families (else the best K) */
	long steps, warmup;
	const struct tune_run *runs; /* [outcome->n] */
	const struct tune_outcome *outcome;
};

/* The document (the caller's, cJSON_Delete; NULL out of memory). */
cJSON *tune_out_json(const struct tune_doc *doc);

/* (predicted / measured - 1) in %, NAN unless both are positive. */
double tune_err_pct(double predicted, double measured);

#endif
