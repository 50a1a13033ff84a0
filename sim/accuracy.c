/*
 * accuracy.c: the bands of accuracy.h.
 *
 * The table holds, per GPU generation and precision class, the 10th and
 * 90th percentiles (linear between order statistics) of the step-time
 * errors that `pplan validate validation/calibration.json
 * --cross-validate source` gives each case when its source is left out
 * of the fit; tests/cli_accuracy.sh recomputes them from that run's JSON
 * and fails when they drift by more than half a point.  Memory: the
 * same percentiles over the measured peaks of the file.
 */
#include "accuracy.h"

#include <stddef.h>

struct band_row {
	enum gpu_arch arch;
	int fp8;
	int n;
	double lo_pct, hi_pct;
};

static const struct band_row bands[] = {
	{ ARCH_AMPERE, 0, 40, -9.3, 5.6 },
	{ ARCH_HOPPER, 0, 25, -4.0, 8.3 },
	{ ARCH_HOPPER, 1, 32, -15.1, 2.5 },
};

#define MEM_N 17
#define MEM_LO_PCT -5.0
#define MEM_HI_PCT 2.9

/* The best published MFU per generation and precision, recounted with
 * pplan's model FLOPs (sim/MODEL.md 10, "Published MFU"). */
static const struct {
	enum gpu_arch arch;
	enum precision p;
	double mfu;
	const char *run;
} published[] = {
	{ ARCH_HOPPER, PREC_BF16, 0.554,
	  "Nemotron-4 15B on 16 H100, NVIDIA DGX Cloud Benchmarking (NeMo 24.09)" },
	{ ARCH_HOPPER, PREC_FP8, 0.425, "GPT-3 175B on 512 H100, NeMo 24.07" },
	{ ARCH_AMPERE, PREC_FP16, 0.411, "530B PTD-P on 560 A100, Narayanan et al. 2021" },
	{ ARCH_AMPERE, PREC_BF16, 0.720, "GPT-3 2.7B on 8 A100, FlashAttention-2 (Dao 2023)" },
};

/* How far generation b is from a: the distance in the enum's order, the
 * newer one preferred on ties (Volta borrows Ampere's, not Pascal's). */
static int distance(enum gpu_arch a, enum gpu_arch b)
{
	int d = (int)a - (int)b;
	return 2 * (d < 0 ? -d : d) + (b < a);
}

void accuracy_for(enum gpu_arch arch, enum precision p, struct accuracy *out)
{
	int fp8 = p == PREC_FP8, best = -1;
	size_t n = sizeof bands / sizeof bands[0];

	for (size_t i = 0; i < n; i++) {
		int d = distance(arch, bands[i].arch) + 100 * (bands[i].fp8 != fp8);
		if (best < 0 || d < distance(arch, bands[best].arch) +
				     100 * (bands[best].fp8 != fp8))
			best = (int)i;
	}
	*out = (struct accuracy){
		.arch = bands[best].arch, .fp8 = bands[best].fp8,
		.nearest = bands[best].arch != arch || bands[best].fp8 != fp8,
		.n = bands[best].n, .lo_pct = bands[best].lo_pct, .hi_pct = bands[best].hi_pct,
		.mem_n = MEM_N, .mem_lo_pct = MEM_LO_PCT, .mem_hi_pct = MEM_HI_PCT,
	};
	if (arch == ARCH_CPU)
		out->n = 0; /* no calibration run on a CPU: no band */
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++)
		if (published[i].arch == arch && published[i].p == p) {
			out->published_mfu = published[i].mfu;
			out->published_run = published[i].run;
		}
}

/* predicted = measured x (1 + e): measured = predicted / (1 + e). */
void accuracy_time(const struct accuracy *a, double predicted_s, double *lo, double *hi)
{
	*lo = predicted_s / (1 + a->hi_pct / 100);
	*hi = predicted_s / (1 + a->lo_pct / 100);
}

void accuracy_mfu(const struct accuracy *a, double predicted, double *lo, double *hi)
{
	*lo = predicted * (1 + a->lo_pct / 100);
	*hi = predicted * (1 + a->hi_pct / 100);
}

void accuracy_memory(const struct accuracy *a, double predicted, double *lo, double *hi)
{
	*lo = predicted / (1 + a->mem_hi_pct / 100);
	*hi = predicted / (1 + a->mem_lo_pct / 100);
}

int accuracy_above_published(const struct accuracy *a, double mfu)
{
	return a->published_mfu > 0 && mfu > a->published_mfu + 5e-4;
}
