/*
 * run_report.h: pplan.report/1, one executed run with its prediction
 * beside it (docs/report-format.md), and the Chrome trace of a measured
 * step.  Builds documents from plain data (sim/run.h); never calls the
 * executor.  Builders return a cJSON tree the caller owns.
 */
#ifndef PPLAN_RUN_REPORT_H
#define PPLAN_RUN_REPORT_H

#include <cjson/cJSON.h>

#include "cost.h"
#include "run.h"

struct run_report {
	const char *status;               /* "ok" or "failed" */
	const char *failure;              /* the reason, NULL when ok */
	const struct model_spec *model;
	const struct cluster *machine;    /* what was priced (and ran) */
	const struct layout *layout;
	const struct train_opts *opts;
	/* the run */
	long steps, warmup;
	unsigned long long seed;
	const char *backend, *dtype, *profile;
	int check_asked;
	/* predicted */
	const struct prediction *pred;    /* NULL when not predicted */
	const struct run_timeline *pred_tl;
	const struct mem_breakdown *pred_stage_mem; /* [pp] */
	/* measured */
	const struct run_measured *meas;
	const struct run_check *check;    /* NULL without --check */
	/* provenance */
	const char *command;              /* the command line as typed */
	const char *version, *git_hash;
};

cJSON *report_run_json(const struct run_report *r);

/* Chrome trace of one measured step: one process per rank (ranks[i] is
 * rank i's ops, its stage in .stage), a compute and a communication
 * track each, ops named as sim's op list names them. */
cJSON *report_run_trace(const struct run_timeline *ranks);

#endif
