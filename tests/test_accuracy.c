/*
 * test_accuracy.c: the bands of sim/accuracy.h.  The bands themselves are
 * checked against a fresh leave-one-source-out run by tests/cli_accuracy.sh;
 * here, what is done with them, by hand: a predicted 10 s step whose
 * error (predicted - measured) / measured was -4 .. +8.3 % means a
 * measured 10 / 1.083 = 9.234 s to 10 / 0.96 = 10.417 s; an MFU, the
 * inverse of the time, 0.5 x 0.96 = 0.48 to 0.5 x 1.083 = 0.5415; and
 * which band a GPU without runs borrows.
 */
#include <criterion/criterion.h>

#include "accuracy.h"

Test(accuracy, ranges_by_hand)
{
	struct accuracy a = { .n = 25, .lo_pct = -4.0, .hi_pct = 8.3,
			      .mem_n = 17, .mem_lo_pct = -5.0, .mem_hi_pct = 2.9 };
	double lo, hi;
	accuracy_time(&a, 10.0, &lo, &hi);
	cr_assert_float_eq(lo, 9.2336, 1e-4);
	cr_assert_float_eq(hi, 10.4167, 1e-4);
	accuracy_mfu(&a, 0.5, &lo, &hi);
	cr_assert_float_eq(lo, 0.48, 1e-9);
	cr_assert_float_eq(hi, 0.5415, 1e-9);
	/* 40 GiB predicted, error -5 .. +2.9 %: 40 / 1.029 = 38.873 to 40 / 0.95 = 42.105. */
	accuracy_memory(&a, 40.0, &lo, &hi);
	cr_assert_float_eq(lo, 38.873, 1e-3);
	cr_assert_float_eq(hi, 42.105, 1e-3);
}

/* Own band where the calibration has runs; else the nearest generation
 * of the same precision class (the newer on a tie), said as nearest. */
Test(accuracy, nearest_band)
{
	static const struct {
		enum gpu_arch arch;
		enum precision p;
		enum gpu_arch want;
		int fp8, nearest;
	} rows[] = {
		{ ARCH_HOPPER, PREC_BF16, ARCH_HOPPER, 0, 0 },
		{ ARCH_HOPPER, PREC_FP8, ARCH_HOPPER, 1, 0 },
		{ ARCH_AMPERE, PREC_FP16, ARCH_AMPERE, 0, 0 },
		{ ARCH_AMPERE, PREC_BF16, ARCH_AMPERE, 0, 0 },
		{ ARCH_BLACKWELL, PREC_BF16, ARCH_HOPPER, 0, 1 },
		{ ARCH_BLACKWELL, PREC_FP8, ARCH_HOPPER, 1, 1 },
		{ ARCH_VOLTA, PREC_FP16, ARCH_AMPERE, 0, 1 },
		{ ARCH_PASCAL, PREC_FP16, ARCH_AMPERE, 0, 1 },
		{ ARCH_AMPERE, PREC_FP8, ARCH_HOPPER, 1, 1 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct accuracy a;
		accuracy_for(rows[i].arch, rows[i].p, &a);
		cr_assert_eq(a.arch, rows[i].want, "row %zu: %s", i, gpu_arch_name(a.arch));
		cr_assert_eq(a.fp8, rows[i].fp8, "row %zu", i);
		cr_assert_eq(a.nearest, rows[i].nearest, "row %zu", i);
		cr_assert_gt(a.n, 0, "row %zu", i);
		cr_assert_lt(a.lo_pct, 0, "row %zu", i);
		cr_assert_gt(a.hi_pct, 0, "row %zu", i);
	}
	{
		struct accuracy a;
		accuracy_for(ARCH_CPU, PREC_BF16, &a);
		cr_assert_eq(a.n, 0, "a CPU has no calibration run and no band");
	}
}

/* The flag: above the best published MFU of the GPU and precision (H100
 * bf16: 55.4 %, sim/MODEL.md 10), to the printed tenth of a point. */
Test(accuracy, published_flag)
{
	struct accuracy a;
	accuracy_for(ARCH_HOPPER, PREC_BF16, &a);
	cr_assert_float_eq(a.published_mfu, 0.554, 1e-9);
	cr_assert_not(accuracy_above_published(&a, 0.554));
	cr_assert_not(accuracy_above_published(&a, 0.5544));
	cr_assert(accuracy_above_published(&a, 0.5546));
	cr_assert(accuracy_above_published(&a, 0.574));
	accuracy_for(ARCH_BLACKWELL, PREC_BF16, &a);
	cr_assert_eq(a.published_mfu, 0);
	cr_assert_not(accuracy_above_published(&a, 0.9), "no published figure: nothing to flag against");
}
