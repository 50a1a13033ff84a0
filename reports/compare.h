/*
 * compare.h: predicted against measured, for one or several executed runs
 * (pplan.report/1 read by run_report.h): step time, tokens/s, MFU, bubble
 * fraction, peak memory and the time of each op class, with the error in
 * percent; over several reports the mean absolute percentage error (MAPE)
 * and the worst case.  The errors are computed here from the two sides,
 * not copied from the report's own "error" section, so that every report
 * is judged by the same definition:
 *
 *   error_pct = 100 * (predicted - measured) / measured   (null: measured 0 or absent)
 *   diff      = predicted - measured, in the quantity's unit
 *               (for the bubble fraction: percentage points)
 *
 * Output: an nccl-tests style table (compare_print) and pplan.comparison/1
 * (compare_json).  The comparison does not own the reports.
 */
#ifndef PPLAN_COMPARE_H
#define PPLAN_COMPARE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "run_report.h"

#define COMPARISON_SCHEMA "pplan.comparison/1"

/* The quantities compared: five headline numbers, then the op classes. */
enum cmp_qty {
	CQ_STEP_TIME = 0, CQ_TOKENS_PER_S, CQ_MFU, CQ_BUBBLE, CQ_MEMORY,
	CQ_CLASS0,                           /* + enum op_class */
	CQ_COUNT = CQ_CLASS0 + OC_COUNT
};

const char *cmp_qty_key(enum cmp_qty qty);    /* JSON key: "step_time_s" */
const char *cmp_qty_label(enum cmp_qty qty);  /* table: "step time" */
const char *cmp_qty_unit(enum cmp_qty qty);   /* table unit: "s", "%" */

struct cmp_value {
	double predicted, measured;   /* in the JSON unit (fractions 0..1) */
	double diff;                  /* predicted - measured */
	double error_pct;             /* NAN where it is not defined, and for the
				       * bubble fraction, a share compared in
				       * percentage points (diff) only */
};

struct cmp_summary {
	int n;                /* reports with an error for this quantity */
	double mape_pct;      /* mean |error_pct|, NAN when n == 0 */
	double worst_pct;     /* the signed error of largest magnitude */
	int worst_report;     /* its index (0-based), -1 when n == 0 */
	double mean_abs_diff, worst_diff; /* in the quantity's unit */
	int n_diff;           /* reports with a diff */
	int worst_diff_report;/* the report of worst_diff, -1 when n_diff == 0 */
};

struct comparison {
	int n;
	const struct runreport *reports;   /* the caller's */
	struct cmp_value (*values)[CQ_COUNT];  /* [n][CQ_COUNT] */
	struct cmp_summary summary[CQ_COUNT];
	/* Differences between the reports' models or machines, one sentence
	 * each ("the reports are of different models: [1] a, [2] b"). */
	int n_warnings;
	char warnings[4][512];
};

/* Computes the comparison of n >= 1 reports; *cmp is the caller's
 * (compare_free).  Fails only for lack of memory. */
enum pplan_status compare_build(const struct runreport *reports, int n,
				struct comparison *cmp, struct perr *err);
void compare_free(struct comparison *cmp);

/* Scale of a quantity from its JSON unit to the table's (100 for
 * fractions shown in percent, else 1). */
double cmp_qty_scale(enum cmp_qty qty);

/* The table: '#' provenance lines (pplan version and git hash, the
 * command, one line per report), a names and a units row, one row per
 * report and quantity, then the summary over the reports. */
void compare_print(FILE *f, const struct comparison *cmp, const char *command);

/* pplan.comparison/1; the caller owns the tree (cJSON_Delete). */
cJSON *compare_json(const struct comparison *cmp, const char *command);

#endif
