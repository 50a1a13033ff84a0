/*
 * run_report.h: pplan.report/1, one executed run with its prediction
 * beside it (docs/report-format.md): the format's one home, its writer
 * (run_report_json, from plain data, sim/run.h) and its reader
 * (runreport_load, the document as data), and the Chrome trace of a
 * measured step.  `pplan exec --report` writes these; `pplan report
 * compare` and `pplan report html` read them through the reader and never
 * through the executor, so reports/ does not depend on exec/.  Builders
 * return a cJSON tree the caller owns.
 *
 * Read: numbers a report leaves out or gives as null are NAN.  Strings
 * are copied (truncated to their buffers); arrays are the reader's: one
 * runreport_free releases everything runreport_load allocated.
 */
#ifndef PPLAN_RUN_REPORT_H
#define PPLAN_RUN_REPORT_H

#include <cjson/cJSON.h>

#include "cost.h"
#include "profile.h"  /* struct run_conditions */
#include "run.h"      /* enum op_class, its keys and names */
#include "status.h"

/* ---- writing ------------------------------------------------------------ */

struct run_report {
	const char *status;               /* "ok", "check_failed" or "failed" */
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
	const struct run_conditions *conditions; /* this run's, NULL unknown */
	const char *profile_note;         /* how the profile's conditions differ, NULL if not */
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

cJSON *report_run_json(const struct run_report *report);

/* Chrome trace of one measured step: one process per rank (ranks[i] is
 * rank i's ops, its stage in .stage), a compute and a communication
 * track each, ops named as sim's op list names them. */
cJSON *report_run_trace(const struct run_timeline *ranks);

/* ---- reading ------------------------------------------------------------ */

#define RUNREPORT_SCHEMA "pplan.report/1"

/* Memory of one rank, GiB (NAN where absent). */
struct rr_mem {
	double total, weights, gradients, optimizer, activations, other;
};

struct rr_stage {
	int stage;
	double busy_s, idle_s, bubble_fraction;
	struct rr_mem mem;
};

/* One op of a timeline lane: times in seconds from the step's start. */
struct rr_op {
	char name[16];          /* sim's op name: F, B, Bi, W, send_act, ... */
	enum op_class cls;
	int mb, chunk;          /* -1 where absent */
	double start_s, end_s;
};

struct rr_lane {
	int stage;
	int n_ops;
	struct rr_op *ops;
};

/* One side of the report: what sim predicted, or what exec measured. */
struct rr_side {
	double step_time_s, tokens_per_s, tflops_per_gpu, mfu, bubble_fraction;
	double memory_gib;      /* predicted: memory_gib.total; measured: memory_gib_peak */
	struct rr_mem mem;      /* predicted: the most-loaded rank's split (measured: NAN) */
	double op_classes_s[OC_COUNT];
	int n_stages;
	struct rr_stage *stages;
	int n_lanes;            /* timeline lanes, one per stage */
	struct rr_lane *lanes;
};

struct runreport {
	char path[512];
	int ok;                 /* status "ok" or "check_failed": it ran (else "failed") */
	int check_failed;       /* status "check_failed": ran, but --check failed */
	char failure[256];      /* the failure's reason, "" when ok */
	double check_tolerance_rel, check_loss_err, check_grad_err; /* NAN when absent */
	long steps_completed;

	char model[96];         /* model.name */
	char cluster[96];       /* cluster.name */
	char gpu[64];           /* cluster.gpu: the device ("cpu" on the CPU backend) */
	long gpus;              /* cluster.gpus, -1 when absent */
	char layout[256];       /* layout.string */
	int pp, vp;             /* from the layout, 1 when absent */
	char schedule[24];

	char backend[16], dtype[8];
	long steps, warmup, ranks, microbatches;

	struct rr_side pred, meas;
	double step_min_s, step_max_s;
	int n_step_times;
	double *step_times_s;
	double peak_tflops;
	char peak_source[64];
	long timeline_step;     /* -1 when there is no timeline */

	char version[32], git_hash[48], date[40];
	char hosts[256];        /* provenance.hosts joined by ", " */
	char devices[256];      /* provenance.devices joined by ", " */
};

/* Reads and checks the file at path into *report (zeroed first).  A file that
 * is not a pplan.report/1 document, or has a key of the wrong type, gives
 * one sentence naming the file and the key, PPLAN_EINPUT.  On failure *report
 * holds nothing to free. */
enum pplan_status runreport_load(const char *path, struct runreport *report,
				 struct perr *err);

void runreport_free(struct runreport *report);

#endif
