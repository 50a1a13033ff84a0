/*
 * fit.h: fitting the cost model's free constants to measured runs.
 *
 * The objective is the mean absolute log error, |log(predicted /
 * measured)|, of step time over the runs with one, plus the same for
 * memory over the runs with a measured peak, each run weighted so that
 * every source (publication) counts equally, plus a weak pull towards
 * each constant's prior (a tenth of a percent of error for a tenth of its
 * range), which keeps constants that no run constrains where physics put
 * them.  The constants move inside their physical ranges (cost_params.h) by a
 * bounded pattern search: each in turn is tried a step up and a step
 * down, a step that helps is kept, a step that does not is halved, until
 * every step is below a thousandth of its range.  The search is
 * deterministic: the same runs give the same constants.
 */
#ifndef PPLAN_FIT_H
#define PPLAN_FIT_H

#include "cases.h"
#include "cost_params.h"

struct fit_options {
	int max_rounds;        /* passes over the constants (0: 400) */
	double prior_weight;   /* weight of the pull to the priors (< 0: 0.1) */
	int per_case_weights;  /* 1: every run counts the same, not every source */
	/* Per entry of cost_param_table: 1 moves it (NULL: the entries
	 * marked fitted). */
	const unsigned char *moves;
};

void fit_options_default(struct fit_options *fo);

/* The most constants cost_param_table holds (the size of a moves mask). */
#define FIT_MAX_CONSTANTS 64

/* mask[i] = 1 for the table entries named in `list` (comma-separated),
 * 0 for the rest.  An unknown name or an empty list is PPLAN_EINPUT
 * naming it (with "did you mean" for a close one). */
enum pplan_status fit_mask_parse(const char *list, unsigned char mask[FIT_MAX_CONSTANTS],
				 struct perr *err);

struct fit_result {
	struct cost_params params;
	double objective;      /* what was minimised */
	double time_error;     /* weighted mean |log| of step time */
	double memory_error;   /* weighted mean |log| of memory */
	int n_time, n_memory;  /* runs that entered each */
	int n_sources;
	long evaluations;
};

/* Fits the constants on the cases with use[i] != 0 (use NULL: all),
 * starting from `start` (NULL: the priors).  Cases are predicted with
 * their own options (vc->opts.use_des decides the pipeline model); their
 * opts.params is left NULL.  PPLAN_EINPUT if no case has a measurement. */
enum pplan_status fit_run(struct vcase *cases, int n, const unsigned char *use,
			  const struct cost_params *start, const struct fit_options *fo,
			  struct fit_result *out, struct perr *err);

/* The objective's parts for params on the cases in use (no prior term). */
void fit_errors(struct vcase *cases, int n, const unsigned char *use,
		const struct cost_params *params, int per_case_weights,
		struct fit_result *out);

#endif
