/*
 * tune.h: `pplan tune`'s closed loop, calibration on whole runs: the
 * search's best layouts (or the best member of each strategy family) are
 * run for a few steps as `pplan exec` under the launcher, each with its
 * report and log; the cost model's constants are refitted on what they
 * measured (sim/fit.h) and written as a profile; the runs are ranked by
 * what they measured beside the refitted predictions.  The runs and their
 * outcome are the data of pplan.tune/1 (reports/tune_out.h);
 * cli/cmd_tune.c reads the options and prints.
 */
#ifndef PPLAN_TUNE_H
#define PPLAN_TUNE_H

#include "job.h"
#include "search.h"
#include "tune_out.h"

/* What the refit moves with measured curves (their scales, and the DP
 * overlap no curve prices), and without (the ceilings of the model). */
#define TUNE_CONSTANTS_CURVES "measured_compute_scale,measured_comm_scale,dp_overlap_unhidden"
#define TUNE_CONSTANTS_MODEL "gemm_ceiling.%s,net_eff_scale,step_fixed_ms"

/* What the user asked of the loop. */
struct tune_request {
	struct search_params sp;   /* the search the runs are chosen from */
	int best_k, families;      /* the best K layouts, or each family's best */
	long steps, warmup;        /* per run: timed steps, untimed before them */
	double timeout_s;          /* per run: pplan exec --timeout, s */
	const char *backend;       /* pplan exec --backend */
	const char *launcher;      /* "mpirun -np {ranks}", ... */
	const char *dir;           /* where the reports, logs and outputs go */
	const char *constants;     /* the constants to refit (NULL: by the profile) */
	int fault_run, fault_rank; /* --fault: run (1-based, 0 none) and rank ... */
	long fault_ms;             /* ... made slow by this many ms per step */
};

/* The runs to make from the search's result r, into runs[] (at most
 * TUNE_MAX_RUNS), each with its predicted rank; returns how many.  Layouts
 * that differ only in ZeRO stage count once. */
int tune_pick_runs(const struct search_result *r, const struct tune_request *req,
		   struct tune_run *runs);

/* Runs run `index` (1-based) under the launcher as `self exec ...`, its
 * output in run->log, its report in run->report; run->ok and
 * run->measured_s from the report, run->why when it failed. */
void tune_run_one(const struct job *job, const struct tune_request *req, const char *launcher,
		  const char *self, int index, struct tune_run *run);

/* Measured ranks, the booked run, the runs whose rank moved. */
void tune_summarise(struct tune_run *runs, struct tune_outcome *outcome);

/* Refits the constants (the request's, else by whether the job has
 * measured curves) from `start` on the measured runs: the errors before
 * and after, mask the constants moved, runs[].refit_s the refitted
 * predictions. */
enum pplan_status tune_refit(const struct job *job, const struct tune_request *req,
			     struct tune_run *runs, int n, const struct cost_params *start,
			     struct fit_result *before, struct fit_result *after,
			     unsigned char *mask, struct perr *err);

/* The refitted model's best layout of the whole search, and its run. */
void tune_refit_search(const struct job *job, const struct tune_request *req,
		       const struct tune_run *runs, struct tune_outcome *outcome);

/* The refitted constants as a profile at path: the job's profile with
 * them, or a fitted profile of its GPU. */
enum pplan_status tune_write_profile(const struct job *job, const char *path,
				     const struct fit_result *fit, const struct tune_run *runs,
				     int n, struct perr *err);

#endif
