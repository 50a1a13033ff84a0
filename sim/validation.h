/*
 * validation.h: `pplan validate`'s arithmetic over a file of published
 * runs (cases.h): each case predicted and compared with what was
 * measured, the constant-MFU rule of thumb beside it, leave one source
 * out (each source predicted with constants fitted on the others), and
 * the file's summary by source, precision class and overall.  Printing
 * is cli/cmd_validate.c's; pplan.validation/1 is reports/validation_out.c's.
 */
#ifndef PPLAN_VALIDATION_H
#define PPLAN_VALIDATION_H

#include "cases.h"

#define VALIDATION_MAX_SOURCES 64
#define VALIDATION_MAX_REASONS 32

/* Signed percentage errors of one group of cases: their mean absolute
 * value (MAPE) and the worst. */
struct err_tally {
	char key[48];   /* the group: a source, "overall", "bf16/fp16", "fp8" */
	double sum_abs;
	int n;
	double worst;   /* the error of largest magnitude, signed */
};
void err_tally_add(struct err_tally *tally, double err_pct);
double err_tally_mape(const struct err_tally *tally); /* NAN when empty */

/* What one case gave. */
struct case_outcome {
	struct prediction pred;
	double err, merr, pmem;      /* step-time and memory error (%), predicted GiB */
	double base_step, base_err;  /* the constant-MFU rule (s, %) */
	double cv_step, cv_err;      /* predicted with the others' fit (s, %) */
	int compared;                /* a step time (measured or derived) to compare */
};

/* The file's figures. */
struct validation_summary {
	struct err_tally src[VALIDATION_MAX_SOURCES];  /* pplan, per source */
	struct err_tally base[VALIDATION_MAX_SOURCES]; /* the constant-MFU rule */
	struct err_tally cv[VALIDATION_MAX_SOURCES];   /* leave one source out */
	int nsrc;
	struct err_tally all, half, fp8, mem, base_all, cv_all;
	struct err_tally base_half, base_fp8, cv_half, cv_fp8;
	struct err_tally searched;        /* runs without a layout, priced at search's best:
					   * not in the figures above (a guessed layout
					   * is no test of the cost model) */
	int oom_total, oom_agree, npred;  /* out-of-memory verdicts; cases predicted */
	char reason[VALIDATION_MAX_REASONS][256]; /* why cases were not predicted */
	int reason_n[VALIDATION_MAX_REASONS], nreason;
	double mfu;                       /* the constant-MFU rule's MFU (fraction) */
};

/* Predicts each case with `constants` (NULL: the embedded ones), by the
 * event simulation unless `closed_form`; out[n] receives what each gave.
 * A case whose prediction fails becomes not predicted, with the reason. */
void validation_predict(struct vcase *cases, int n, const struct cost_params *constants,
			int closed_form, struct case_outcome *out);

/* The rule of thumb: step = model FLOPs / (GPUs x peak x MFU), with the
 * MFU that minimises the mean absolute log error over the file (the
 * geometric median of the runs' own MFUs), written to out[].base_*.
 * Returns that MFU (NAN when no case is compared). */
double validation_constant_mfu(struct vcase *cases, int n, struct case_outcome *out);

/* Leave one source out: for each source, fit the constants on the others
 * from the priors (fit.h) and predict it, into out[].cv_*. */
enum pplan_status validation_cross_validate(struct vcase *cases, int n, int closed_form,
					    struct case_outcome *out, struct perr *err);

/* The summary of what validation_predict (and the two above) gave. */
void validation_summarise(const struct vcase *cases, int n, const struct case_outcome *out,
			  struct validation_summary *summary);

#endif
