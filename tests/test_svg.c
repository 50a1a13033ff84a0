/*
 * test_svg.c: the axes of the report pages (reports/svg.h): round ticks,
 * widened ranges and pixel mapping, against values worked out by hand;
 * and HTML escaping.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "svg.h"

Test(svg, linear_ticks_are_round)
{
	/* 0..250 ms in at most 9 ticks: step 250/8 = 31.25 -> 50: 0, 50, ..., 250 */
	struct axis a = { 0, 250, 100, 1100, 0 };
	double t[16];
	int n = axis_ticks(&a, 9, t, 16);
	cr_assert_eq(n, 6);
	for (int i = 0; i < n; i++)
		cr_expect_float_eq(t[i], 50.0 * i, 1e-9);
	/* 0..0.3 in at most 7: raw 0.05 -> step 0.05, 7 ticks */
	a = (struct axis){ 0, 0.3, 0, 1, 0 };
	n = axis_ticks(&a, 7, t, 16);
	cr_assert_eq(n, 7);
	cr_expect_float_eq(t[6], 0.3, 1e-12);
}

Test(svg, nice_widens_to_ticks)
{
	double lo = 0, hi = 237.5;   /* step for 6 ticks: 47.5 -> 50; hi -> 250 */
	axis_nice(&lo, &hi, 0);
	cr_expect_float_eq(lo, 0, 1e-12);
	cr_expect_float_eq(hi, 250, 1e-9);
	lo = 7.9, hi = 505;          /* log: 5 .. 1000 (1, 2, 5 marks) */
	axis_nice(&lo, &hi, 1);
	cr_expect_float_eq(lo, 5, 1e-12);
	cr_expect_float_eq(hi, 1000, 1e-9);
	lo = 12, hi = 79.2;          /* 10 .. 100 */
	axis_nice(&lo, &hi, 1);
	cr_expect_float_eq(lo, 10, 1e-12);
	cr_expect_float_eq(hi, 100, 1e-9);
}

Test(svg, log_ticks_and_pixels)
{
	/* 5 .. 1000: two and a bit decades -> 5, 10, 20, 50, 100, 200, 500, 1000 */
	struct axis a = { 5, 1000, 470, 46, 1 };
	static const double want[] = { 5, 10, 20, 50, 100, 200, 500, 1000 };
	double t[32];
	int n = axis_ticks(&a, 7, t, 32);
	cr_assert_eq(n, 8);
	for (int i = 0; i < n; i++)
		cr_expect_float_eq(t[i], want[i], 1e-9);
	/* a y axis pointing up: lo at the bottom, hi at the top, and 10 at
	 * log(10/5)/log(1000/5) = 0.1308 of the way up */
	cr_expect_float_eq(axis_px(&a, 5), 470, 1e-9);
	cr_expect_float_eq(axis_px(&a, 1000), 46, 1e-9);
	cr_expect_float_eq(axis_px(&a, 10), 470 - 424 * log10(2) / log10(200), 1e-9);
}

Test(svg, labels_and_escaping)
{
	char buf[32];
	struct sbuf b = { 0 };
	axis_label(0.05, buf, sizeof buf);
	cr_expect_str_eq(buf, "0.05");
	axis_label(20000, buf, sizeof buf);
	cr_expect_str_eq(buf, "20k");
	axis_label(0, buf, sizeof buf);
	cr_expect_str_eq(buf, "0");
	sbuf_esc(&b, "a<b & \"c\">");
	cr_expect_str_eq(b.s, "a&lt;b &amp; &quot;c&quot;&gt;");
	for (int i = 0; i < 2000; i++)
		sbuf_printf(&b, "%04d", i);
	cr_expect_eq(b.len, strlen("a&lt;b &amp; &quot;c&quot;&gt;") + 8000);
	cr_expect_eq(b.failed, 0);
	sbuf_free(&b);
}
