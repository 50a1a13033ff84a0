/*
 * test_curves.c: measured curves turned into times (sim/curves.h), on
 * points and answers worked out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "curves.h"

static void near(double got, double want, double rel, const char *what)
{
	cr_expect(fabs(got - want) <= rel * fabs(want), "%s: got %.9g, want %.9g", what, got, want);
}

Test(curves, tile_fit)
{
	struct curve_tiles t = { 128, 128, 32 };
	/* 96 of a 128 tile: 0.75; 256 and 64 fill theirs */
	near(curve_tile_fit(&t, 96, 256, 64), 0.75, 1e-12, "96x256x64");
	/* 200 rows take two tiles: 200/256 */
	near(curve_tile_fit(&t, 200, 128, 32), 200.0 / 256, 1e-12, "200x128x32");
}

Test(curves, gemm_exact_and_between)
{
	struct curve_tiles none = { 1, 1, 1 };
	struct curve_gemm_pt p[2] = { { 1000, 1000, 1000, 10 }, { 8000, 8000, 8000, 20 } };
	/* a measured shape is its measurement: 2e9 FLOP at 10 TFLOP/s */
	near(curve_gemm_time(p, 2, &none, 1000, 1000, 1000), 2e-4, 1e-12, "exact");
	/* 2000^3 is ln 2 x sqrt 3 from the first and twice that from the
	 * second: weights 4 : 1 in the log of the rate, 10 x 2^(1/5) TFLOP/s */
	near(curve_gemm_time(p, 2, &none, 2000, 2000, 2000),
	     2 * 8e9 / (10e12 * pow(2, 0.2)), 1e-9, "between");
	/* 16000^3 is ln 2 x sqrt 3 from the second and 4 ln 2 x sqrt 3 from
	 * the first: weights 16 : 1, 20 x 2^(-1/17) TFLOP/s */
	near(curve_gemm_time(p, 2, &none, 16000, 16000, 16000),
	     2 * 4096e9 / (20e12 * pow(2, -1.0 / 17)), 1e-9, "beyond");
}

Test(curves, gemm_tiles_and_floor)
{
	struct curve_tiles t = { 128, 128, 128 };
	struct curve_gemm_pt p[1] = { { 128, 128, 128, 10 } };
	/* 96 rows still cost a whole 128-row tile: the same time as 128 */
	near(curve_gemm_time(p, 1, &t, 96, 128, 128), 2 * 128.0 * 128 * 128 / 10e12, 1e-9,
	     "tile-bound");
	/* a tiny GEMM takes no less than the smallest measured call */
	near(curve_gemm_time(p, 1, &t, 8, 8, 8), 2 * 128.0 * 128 * 128 / 10e12, 1e-9, "floor");
}

Test(curves, stream)
{
	struct curve_bw_pt p[2] = { { 1e3, 1 }, { 1e6, 10 } };
	near(curve_stream_time(p, 2, 1e3), 1e-6, 1e-12, "first point");
	near(curve_stream_time(p, 2, 10), 1e-6, 1e-12, "below: the launch floor");
	/* 10^4.5 B is half way in log bytes: 5.5 GB/s */
	near(curve_stream_time(p, 2, pow(10, 4.5)), pow(10, 4.5) / 5.5e9, 1e-9, "between");
	near(curve_stream_time(p, 2, 1e7), 1e-3, 1e-12, "beyond: the last bandwidth");
}

Test(curves, collectives)
{
	struct curve_coll_pt p[2] = { { 1e3, 1e-5 }, { 1e6, 1e-3 } };
	/* half way in log bytes between 1e-5 and 1e-3 s: 1e-4 s */
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 4, pow(10, 4.5)), 1e-4, 1e-9,
	     "log-log");
	/* 1e6 B past the last point at busbw 1.5 GB/s, factor 2 x 3/4: +1 ms */
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 4, 2e6), 2e-3, 1e-9, "beyond");
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 4, 8), 1e-5, 1e-12, "below");
	/* 2 ranks from a 4-rank fit: alpha x 2/6 ring steps, factor 1 */
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 2, 1e6), 1e-5 / 3 + 1e6 / 1.5e9,
	     1e-9, "other group size");
	cr_expect_eq(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 1, 1e6), 0, "one rank");
}
