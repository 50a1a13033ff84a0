/*
 * accuracy.h: how far to trust a prediction.  Each figure pplan prints
 * comes with the band its step time, MFU and memory fall in, taken from
 * the leave-one-source-out errors of the calibration runs
 * (`pplan validate validation/calibration.json --cross-validate source`)
 * on the job's GPU generation and precision class, or on the nearest ones
 * that have runs (and then it says so); and with the best MFU published
 * for that generation and precision, so that a prediction above it is
 * flagged rather than printed plainly.  sim/MODEL.md 10, "Accuracy".
 */
#ifndef PPLAN_ACCURACY_H
#define PPLAN_ACCURACY_H

#include "gpu.h"

struct accuracy {
	enum gpu_arch arch;      /* the generation the band comes from */
	int fp8;                 /* its precision class: fp8, or bf16/fp16 */
	int nearest;             /* 1: the job's own generation and class have no run */
	int n;                   /* leave-one-source-out errors it rests on; 0: no band (a CPU) */
	/* 10th and 90th percentiles of (predicted - measured) / measured of
	 * step time, in %: 80 % of the held-out runs fell within them. */
	double lo_pct, hi_pct;
	int mem_n;               /* measured memory peaks */
	double mem_lo_pct, mem_hi_pct;
	/* The best MFU published for the job's own generation and precision
	 * (pplan's count of model FLOPs), 0 where none is known; and the run. */
	double published_mfu;
	const char *published_run;
};

/* The band for a job on arch at precision prec. */
void accuracy_for(enum gpu_arch arch, enum precision prec, struct accuracy *out);

/* The measured value a predicted one falls within, 80 % of the time:
 * step time (or any time), MFU (its inverse) and memory. */
void accuracy_time(const struct accuracy *acc, double predicted_s, double *lo, double *hi);
void accuracy_mfu(const struct accuracy *acc, double predicted, double *lo, double *hi);
void accuracy_memory(const struct accuracy *acc, double predicted, double *lo, double *hi);

/* Is a predicted MFU above the best published for its GPU and precision? */
int accuracy_above_published(const struct accuracy *acc, double mfu);

#endif
