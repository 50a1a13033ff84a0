/*
 * calibrate_plan.h: what `pplan calibrate` measures (the GEMM shapes of a
 * model under TP 1..8 and micro-batch 1..8, or a default grid; streaming
 * sizes; attention shapes; collective sizes and group sizes), and the
 * pplan.profile/1 it writes from the results.  Plain data; the plan owns
 * nothing outside itself (calibrate_plan_free).
 */
#ifndef PPLAN_CALIBRATE_PLAN_H
#define PPLAN_CALIBRATE_PLAN_H

#include <stdio.h>

#include "calibrate.h"
#include "model.h"

#define CAL_MAX_GEMM 512
#define CAL_MAX_BW 32
#define CAL_MAX_ATTN 32
#define CAL_MAX_COLL 64

struct cal_plan_opts {
	int quick;
	const char *model_arg;    /* NULL: the default grid */
	long seq;                 /* 0: the model's */
	double max_bytes;         /* 0: 1 GiB (quick 16 MiB) */
	int max_tp, max_mbs;      /* a model's TP and micro-batch sizes up to these; 0: 8 (quick 2) */
	enum precision precision; /* of GEMMs and attention */
};

struct cal_plan {
	struct cal_plan_opts opts;
	struct model_spec model;
	struct cal_gemm_point gemm[CAL_MAX_GEMM];
	char gemm_what[CAL_MAX_GEMM][48];   /* "mlp-down tp2 mbs4", "grid" */
	int n_gemm, n_gemm_skipped;
	double gemm_flop_cap;               /* FLOPs of the largest GEMM measured */
	struct cal_layer layer;              /* whose element-wise kernels are measured */
	struct cal_bw_point bw[CAL_ELEM_COUNT][CAL_MAX_BW];   /* by enum cal_elem */
	int n_bw[CAL_ELEM_COUNT];
	int n_bw_skipped[CAL_ELEM_COUNT];    /* points past the memory budget, left out */
	double mem_budget;                   /* bytes one point may use (cal_mem_budget) */
	struct cal_attn_point attn[CAL_MAX_ATTN];
	int n_attn;
	double sizes[CAL_MAX_SIZES];        /* collective sizes, bytes */
	int n_sizes;
	enum coll_op coll_op[CAL_MAX_COLL];
	int coll_ranks[CAL_MAX_COLL];
	struct cal_coll coll[CAL_MAX_COLL];
	int n_coll;
};

/* The kern_dtype of a precision (fp32, bf16, fp16). */
int calibrate_plan_dtype(enum precision prec);

/* The shapes of opts (the model read here); *out is the caller's. */
enum pplan_status calibrate_plan_new(const struct cal_plan_opts *opts, struct cal_plan **out,
				     struct perr *err);
/* What the session allows: GEMM shapes within the memory budget, the
 * collective sizes and the group sizes for this many ranks. */
void calibrate_plan_sizes(struct cal_plan *plan, struct cal_session *session);
void calibrate_plan_free(struct cal_plan *plan);

struct profile;

/* The measured profile (kind measured, this host, the curves, provenance);
 * *pr is the caller's to profile_free. */
enum pplan_status calibrate_plan_profile(const struct cal_plan *plan,
					 const struct cal_session *session,
					 double peak_tflops, const char *command,
					 struct profile *pr, struct perr *err);
/* The GEMM points the profile leaves out (a rate below a smaller GEMM of
 * the same aspect), one line each. */
void calibrate_plan_print_dropped(FILE *f, const struct cal_plan *plan);
/* calibrate_plan_profile, written by profile_save to path (rank 0 only). */
enum pplan_status calibrate_plan_save(const struct cal_plan *plan,
				      const struct cal_session *session,
				      double peak_tflops, const char *command,
				      const char *path, struct perr *err);

/* One collective's table in the nccl-tests columns. */
void calibrate_print_coll(FILE *f, const struct cal_coll *coll);

#endif
