/*
 * test_search_points.c: the priced layouts the search keeps for
 * `pplan report html`'s step-time-against-memory plot
 * (search_params.keep_points).  Every layout the cost model priced is a
 * point: the feasible ones and those out of memory, as the counts say;
 * a point is feasible exactly when its memory is within the cap.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "search.h"

static void points_of(const char *model, long gpus, long gbs, int keep,
		      struct search_result *r, double *cap_gib)
{
	const struct model_spec *m = model_find(model);
	struct cluster c;
	struct train_opts o;
	struct search_params sp;
	struct perr e = { "" };
	cr_assert_not_null(m);
	cr_assert_eq(cluster_preset("dgx-h100", gpus, &c, &e), PPLAN_OK, "%s", e.msg);
	train_opts_default(&o, m);
	o.use_des = 1;
	search_params_default(&sp);
	sp.gbs = gbs;
	sp.keep_points = keep;
	cr_assert_eq(search_run(m, &c, &o, &sp, r, &e), PPLAN_OK, "%s", e.msg);
	*cap_gib = o.max_memory_gib > 0 ? o.max_memory_gib : c.gpu.mem_gib;
}

Test(search_points, every_priced_layout_once)
{
	struct search_result r;
	double cap;
	long feasible = 0;
	/* Llama 3 70B on 64 GPUs: some layouts fit, many do not. */
	points_of("llama3-70b", 64, 256, 1, &r, &cap);
	cr_assert_gt(r.feasible, 0);
	cr_assert_gt(r.rejected[REJECT_OOM], 0);
	cr_expect_eq(r.points_incomplete, 0);
	cr_expect_eq(r.n_points, r.feasible + r.rejected[REJECT_OOM],
		     "%ld points, %ld feasible + %ld out of memory", r.n_points,
		     r.feasible, r.rejected[REJECT_OOM]);
	for (long i = 0; i < r.n_points; i++) {
		const struct search_point *p = &r.points[i];
		feasible += p->feasible;
		cr_assert(p->step_time_s > 0 && isfinite(p->step_time_s));
		/* float rounding of the memory: a relative 1e-6 */
		if (p->feasible)
			cr_assert_leq(p->mem_gib, cap * (1 + 1e-6), "point %ld", i);
		else
			cr_assert_gt(p->mem_gib, cap * (1 - 1e-6), "point %ld", i);
		cr_assert_lt(p->family, FAM_COUNT);
	}
	cr_expect_eq(feasible, r.feasible);
	search_free(&r);
	cr_expect_null(r.points);
}

Test(search_points, off_by_default)
{
	struct search_result r;
	double cap;
	points_of("llama3-8b", 8, 64, 0, &r, &cap);
	cr_expect_eq(r.n_points, 0);
	cr_expect_null(r.points);
	search_free(&r);
}
