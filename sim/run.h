/*
 * run.h: one training step as a timeline of ops per pipeline stage, and
 * its split into op classes, predicted (from the event simulation) or
 * measured (by the executor).  Plain data that exec/ fills, sim/ predicts
 * and reports/ writes and reads (pplan.report/1), so that the two sides
 * mean the same thing by every number (docs/report-format.md).
 */
#ifndef PPLAN_RUN_H
#define PPLAN_RUN_H

#include "cluster.h"
#include "cost.h"
#include "des.h"
#include "schedule.h"

/* Where a rank's step time goes; the classes of one rank sum to its step. */
enum op_class {
	OC_FORWARD = 0,   /* forward compute */
	OC_BACKWARD,      /* backward compute (input and weight gradients) */
	OC_RECOMPUTE,     /* recomputed forward inside a backward */
	OC_TP,            /* tensor-parallel collectives inside F/B/W, from the
			   * group's last arrival (the wait before it: idle) */
	OC_CP,            /* context-parallel exchange, from its neighbours'
			   * posts (the wait before them: idle) */
	OC_PP,            /* pipeline transfers (blocked on a send/receive) */
	OC_DP,            /* gradient reduction and parameter gathers left exposed */
	OC_OPTIMIZER,     /* gradient norm, clipping, Adam */
	OC_IDLE,          /* the bubble and every other wait */
	OC_COUNT
};

/* JSON key of a class: "forward", "tp_comm", "dp_comm_exposed", ... */
const char *op_class_key(enum op_class cls);
/* Short label for tables: "fwd", "tp", "dp_exp", ... */
const char *op_class_label(enum op_class cls);
/* Its name for people, in reports and pages: "forward", "TP comm", ... */
const char *op_class_name(enum op_class cls);
/* The class of a JSON key, or OC_COUNT when it is none. */
enum op_class op_class_from_key(const char *key);

/* Ops beyond the schedule's (enum op_kind) that a step also runs. */
enum { RUN_OP_DP = OP_KIND_COUNT, RUN_OP_OPTIMIZER, RUN_OP_KIND_COUNT };
/* "F", "B", "Bi", "W", "send_act", ..., "dp", "optimizer". */
const char *run_op_name(int kind);

struct run_op {
	int kind;            /* enum op_kind, RUN_OP_DP, RUN_OP_OPTIMIZER */
	int mb, chunk;
	int cls;             /* enum op_class */
	double start_s, end_s;
};

struct run_stage {
	int stage;
	double busy_s;            /* F, B, W compute (their collectives included) */
	double idle_s;            /* pipeline span - busy */
	double bubble_fraction;   /* idle / pipeline span (sim/MODEL.md section 1) */
	double classes_s[OC_COUNT];
	struct mem_breakdown mem; /* bytes */
	long nops;
	struct run_op *ops;       /* [nops], owned */
};

struct run_timeline {
	double step_time_s;
	double pipeline_span_s;
	double bubble_fraction;   /* mean over stages */
	double classes_s[OC_COUNT];   /* mean over stages */
	int stages;
	struct run_stage *stage;  /* [stages], owned */
};

void run_timeline_free(struct run_timeline *timeline);

/* What a run measured (rank 0 of `pplan exec`): plain data, owned by the
 * struct (run_measured_free). */
struct run_measured {
	long steps_done;             /* warm-up included */
	double *step_times_s;        /* [steps]: slowest rank, timed steps */
	double *losses;              /* [warmup + steps] */
	double *grad_norms;          /* [(warmup + steps) * ntensor_ids], NaN where absent */
	int ntensor_ids;
	char (*tensor_names)[40];    /* [ntensor_ids] */
	double step_time_s;          /* median of step_times_s */
	double step_min_s, step_max_s;
	long median_step;            /* index (warm-up included) of the median step */
	struct run_timeline timeline;    /* the median step, every stage */
	double classes_s[OC_COUNT];  /* mean over timed steps */
	double bubble_fraction;      /* mean over timed steps */
	double harness_overhead;     /* share of the step outside timed ops */
	double clock_offset_max_s;   /* the largest |offset| of a rank's clock from rank 0's */
	double clock_bound_max_s;    /* the largest bound on a measured offset's error */
	double mem_peak_bytes;       /* the model's: the largest rank's own buffers at their peak */
	double *rank_mem_peak;       /* [ranks] the same, each rank's */
	double mem_process_peak_bytes; /* the largest process's (device's) high-water mark:
					* the model's and the runtime's (MPI, BLAS, CUDA) */
	double *rank_process_peak;   /* [ranks] */
	struct mem_breakdown *stage_mem; /* [pp] measured on each stage's first rank */
	int ranks;
	char **hosts;                /* [ranks] */
	char device[128];            /* rank 0's device */
	char libraries[256];
	const char *backend;         /* "cpu", "cuda" */
	enum precision precision;
	double peak_tflops;          /* per device: the GPU table or the sgemm probe */
	const char *peak_source;
	struct cluster machine;      /* what the prediction should price */
};

void run_measured_free(struct run_measured *measured);

/* `pplan exec --check`: the run against one rank computing the same. */
struct run_check {
	int passed;
	double tolerance_rel;
	double max_loss_rel_err, max_grad_rel_err;
	/* step 1's gradients element by element (exec/gradcheck.c): the
	 * largest |g - g_ref| / (|g_ref| + rms), its bound, how many */
	double max_elem_err, elem_bound;
	long elements;
	char elem_worst[160];
	/* step 1's data where it is made (exec/integrity.c): GEMMs computed
	 * twice and pipeline messages hashed at both ends, which must agree
	 * to the bit; integrity says what did not ("" when all did) */
	long gemms_recomputed, messages_hashed;
	char integrity[256];
	char worst[224];
	long steps;
};


/* Fills per-stage busy, idle and bubble from the ops (F/B/Bi/W count as
 * busy; the span runs from the first forward to the last backward of
 * any stage), and the classes' means over stages. */
void run_timeline_summarise(struct run_timeline *timeline);

/* The predicted timeline of prediction pred: the schedule s simulated with
 * DES_TIMES into result; each op's class split by the prediction's terms. */
enum pplan_status run_timeline_predicted(const struct prediction *pred,
					 const struct pipe_schedule *sched,
					 const struct des_result *result,
					 struct run_timeline *out,
					 struct perr *err);

#endif
