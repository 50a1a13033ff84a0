/*
 * test_bounds.c: arithmetic that cannot overflow or divide by zero
 * (issue 11).  A layout with a zero degree is refused by layout_check and
 * by cost_predict, whoever built it (F02, F03 reached a division by zero
 * from case files); schedules are bounded (F10); degrees past the bound
 * are refused where a string is read.  Bounds: docs/limits.md.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cost.h"
#include "schedule.h"

static struct layout base(void)
{
	struct layout l;
	layout_default(&l);
	l.dp = 8;
	l.gbs = 64;
	l.zero = 1;
	return l;
}

Test(bounds, zero_degrees_are_refused_before_any_division)
{
	const struct model_spec *m = model_find("llama3-8b");
	struct cluster c;
	struct train_opts o;
	struct prediction p;
	struct perr e;
	int *fields[7];
	struct layout l = base();


	cr_assert_eq(cluster_preset("dgx-h100", 8, &c, &e), PPLAN_OK);
	train_opts_default(&o, m);
	cr_assert_eq(layout_check(&l, m, 8, NULL, &e), PPLAN_OK, "%s", e.msg);
	for (int i = 0; i < 7; i++) {
		l = base();
		fields[0] = &l.tp; fields[1] = &l.pp; fields[2] = &l.dp; fields[3] = &l.cp;
		fields[4] = &l.ep; fields[5] = &l.vp; fields[6] = &l.mbs;
		*fields[i] = 0;
		cr_assert_eq(layout_check(&l, m, 0, NULL, &e), PPLAN_EINPUT, "field %d", i);
		cr_assert(strstr(e.msg, "at least 1"), "%s", e.msg);
		cr_assert_eq(cost_predict(m, &c, &l, &o, &p, &e), PPLAN_EINPUT, "field %d", i);
	}
}

Test(bounds, degree_products_are_bounded_where_read)
{
	struct layout l;
	struct perr e;
	unsigned set;
	/* 2^20 each is the bound of one degree; their product must still fit. */
	cr_assert_eq(layout_parse("dp=1048576", &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(layout_parse("dp=1048577", &l, &set, &e), PPLAN_EINPUT);
	cr_assert_eq(layout_parse("tp=65536,dp=65536", &l, &set, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "4294967296 GPUs is more than"), "%s", e.msg);
	cr_assert_eq(layout_parse("gbs=1099511627776", &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(layout_parse("gbs=1099511627777", &l, &set, &e), PPLAN_EINPUT);
}

Test(bounds, schedules_are_bounded)
{
	struct layout l = base();
	struct pipe_schedule *s = NULL;
	struct perr e;

	l.pp = 4;
	l.dp = 2;
	/* 4 x 1 x 65536 = 2^18 chunk-microbatches: the largest built. */
	cr_assert_eq(schedule_chunk_microbatches(&l, 65536), SCHEDULE_MAX_CHUNK_MBS);
	cr_assert_eq(schedule_build(&l, 65536, 0, &s, &e), PPLAN_OK, "%s", e.msg);
	schedule_free(s);
	cr_assert_eq(schedule_build(&l, 65537, 0, &s, &e), PPLAN_EINPUT);
	cr_assert_null(s);
	cr_assert(strstr(e.msg, "262144 chunk-microbatches"), "%s", e.msg);
	/* No overflow in the product for any microbatch count. */
	cr_assert(schedule_chunk_microbatches(&l, 1L << 62) > SCHEDULE_MAX_CHUNK_MBS);
}
