/*
 * test_calibrate_fit.c: pplan calibrate's alpha-beta fit of a measured
 * collective (cal_fit, calibrate/calibrate.h) on curves worked by hand,
 * and no fit where the points give a bandwidth no profile may state.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "calibrate.h"
#include "profile.h"

static void point(struct cal_coll *c, double bytes, double t)
{
	struct cal_coll_point *p = &c->pts[c->n++];
	p->bytes = bytes;
	p->time_s = t;
	p->algbw_gbps = bytes / t / 1e9;
	p->busbw_gbps = p->algbw_gbps * 2.0 * (c->ranks - 1) / c->ranks;
}

/* all_reduce over 4 ranks (factor 2 x 3/4 = 1.5), alpha 10 us, busbw
 * 50 GB/s: t = 10 us + 1.5 bytes / 50e9.  The 1 KiB point sets alpha (the
 * smallest time up to 4 KiB: 10 us + 30.72 ns); the three points of at
 * least 1 MiB give busbw back within the 31 ns alpha is off by. */
Test(calibrate_fit, alpha_beta_by_hand)
{
	struct cal_coll c = { .op = COLL_ALLREDUCE, .ranks = 4 };
	double sizes[] = { 1024, 65536, 1048576, 16777216, 268435456 };
	for (int i = 0; i < 5; i++)
		point(&c, sizes[i], 10e-6 + 1.5 * sizes[i] / 50e9);
	cal_fit(&c);
	cr_expect_float_eq(c.alpha_s, 10e-6 + 1.5 * 1024 / 50e9, 1e-15);
	cr_expect_float_eq(c.busbw_gbps, 50.0, 0.01, "%g", c.busbw_gbps);
}

/* Times that do not grow with size (noise on a loaded machine, all
 * points under 1 MiB) would fit an infinite or a 1e9 GB/s bandwidth:
 * no fit, and the profile says null. */
Test(calibrate_fit, flat_times_are_no_fit)
{
	struct cal_coll c = { .op = COLL_ALLREDUCE, .ranks = 2 };
	point(&c, 8, 5e-6);
	point(&c, 65536, 5e-6 + 1e-12);
	cal_fit(&c);
	cr_expect_float_eq(c.alpha_s, 5e-6, 1e-15);
	cr_expect(isnan(c.busbw_gbps), "busbw %g GB/s", c.busbw_gbps);
}

/* A small message that took seconds, beyond a latency a profile states. */
Test(calibrate_fit, a_latency_of_seconds_is_no_fit)
{
	struct cal_coll c = { .op = COLL_ALLGATHER, .ranks = 2 };
	point(&c, 8, 2.5);
	point(&c, 16, 2.6);
	cal_fit(&c);
	cr_expect(isnan(c.alpha_s), "alpha %g s, more than %g s", c.alpha_s, PROFILE_ALPHA_MAX_S);
}
