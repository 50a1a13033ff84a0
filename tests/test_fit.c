/*
 * test_fit.c: pplan fit's search finds constants it is given.
 *
 * The second method is the cost model itself: the runs of one source of
 * the calibration set (NVIDIA's DGX Cloud H100 tables, bf16 and fp8) are
 * given "measured" step times that the model predicts with two constants
 * moved away from their priors (the Hopper GEMM ceiling to 0.55, the fixed
 * cost per step to 60 ms) and every other at its prior.  Fitting from the
 * priors must find the ceiling again (the fixed cost, which trades
 * against other small terms on these runs, only moves the right way) and
 * leave the error near zero; it must be
 * deterministic; and a fit never ends worse than where it started.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

#define CALIBRATION PPLAN_SOURCE_DIR "/validation/calibration.json"

static struct vcase *synthetic(int *n, unsigned char **use, const struct cost_params *truth)
{
	struct vcase *cs = NULL;
	struct perr e = { "" };
	cr_assert_eq(cases_load(CALIBRATION, &cs, n, &e), PPLAN_OK, "%s", e.msg);
	*use = calloc((size_t)*n, 1);
	for (int i = 0; i < *n; i++) {
		struct prediction p;
		struct vcase *vc = &cs[i];
		vc->opts.use_des = 0;
		vc->measured_mem_gib = NAN;
		if (!vc->predictable || strncmp(vc->id, "dgxc-", 5) != 0)
			continue;
		vc->opts.params = truth;
		cr_assert_eq(vcase_predict(vc, &p, &e), PPLAN_OK, "%s", e.msg);
		vc->opts.params = NULL;
		vc->measured_step_s = p.step_time_s;
		(*use)[i] = 1;
	}
	return cs;
}

Test(fit, finds_the_constants_it_was_given, .timeout = 120)
{
	struct cost_params truth;
	struct fit_result r;
	struct fit_options fo;
	unsigned char *use;
	int n;
	struct vcase *cs;
	struct perr e = { "" };

	cost_params_prior(&truth);
	truth.gemm_ceiling[ARCH_HOPPER] = 0.55;
	truth.step_fixed_ms = 60.0;
	cs = synthetic(&n, &use, &truth);
	fit_options_default(&fo);
	cr_assert_eq(fit_run(cs, n, use, NULL, &fo, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(r.n_time, 32);
	cr_expect_eq(r.n_sources, 1);
	cr_expect(fabs(r.params.gemm_ceiling[ARCH_HOPPER] - 0.55) < 0.01,
		  "hopper ceiling %g", r.params.gemm_ceiling[ARCH_HOPPER]);
	/* A fixed cost per step trades against other small terms on these
	 * runs (2 to 17 s steps): only its sign of change is identified. */
	cr_expect_gt(r.params.step_fixed_ms, truth.step_fixed_ms > 10 ? 10.0 : 0.0,
		     "step fixed %g ms", r.params.step_fixed_ms);
	cr_expect_lt(r.time_error, 0.005, "mean |log| %g", r.time_error);
	/* Constants no run here constrains stay at their priors. */
	cr_expect_eq(r.params.gemm_ceiling[ARCH_AMPERE], truth.gemm_ceiling[ARCH_AMPERE]);
	cr_expect_eq(r.params.ds_pipe_step_ms, truth.ds_pipe_step_ms);
	free(use);
	free(cs);
}

Test(fit, deterministic_and_never_worse, .timeout = 120)
{
	struct cost_params truth, prior;
	struct fit_result a, b, start;
	struct fit_options fo;
	unsigned char *use;
	int n;
	struct vcase *cs;

	cost_params_prior(&truth);
	truth.attn_fwd_rel = 0.6;
	cs = synthetic(&n, &use, &truth);
	fit_options_default(&fo);
	fo.max_rounds = 10;
	cost_params_prior(&prior);
	fit_errors(cs, n, use, &prior, 0, &start);
	cr_assert_eq(fit_run(cs, n, use, NULL, &fo, &a, NULL), PPLAN_OK);
	cr_assert_eq(fit_run(cs, n, use, NULL, &fo, &b, NULL), PPLAN_OK);
	cr_expect_eq(memcmp(&a.params, &b.params, sizeof a.params), 0, "same runs, same constants");
	cr_expect_leq(a.objective, start.objective + 1e-12);
	cr_expect_lt(a.time_error, start.time_error);
	free(use);
	free(cs);
}

Test(fit, nothing_to_fit_is_an_input_error)
{
	unsigned char none[1] = { 0 };
	struct vcase *cs = NULL;
	int n;
	struct fit_result r;
	struct perr e = { "" };
	cr_assert_eq(cases_load(CALIBRATION, &cs, &n, &e), PPLAN_OK);
	cr_expect_eq(fit_run(cs, 1, none, NULL, NULL, &r, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "no run") != NULL, "%s", e.msg);
	free(cs);
}

/* --constants (fit_options.moves): only the named constants move.  The
 * runs are predicted with the Hopper ceiling at 0.55 and nothing else
 * changed; fitting the ceiling alone finds it, and every other constant,
 * fitted ones included, stays where the fit started. */
Test(fit, moves_only_the_named_constants, .timeout = 120)
{
	struct cost_params truth, prior;
	struct fit_result r;
	struct fit_options fo;
	unsigned char mask[FIT_MAX_CONSTANTS], *use;
	int n, nt;
	const struct cost_param_info *t = cost_param_table(&nt);
	struct vcase *cs;
	struct perr e = { "" };

	cost_params_prior(&truth);
	cost_params_prior(&prior);
	truth.gemm_ceiling[ARCH_HOPPER] = 0.55;
	cs = synthetic(&n, &use, &truth);
	cr_assert_eq(fit_mask_parse("gemm_ceiling.hopper", mask, &e), PPLAN_OK, "%s", e.msg);
	fit_options_default(&fo);
	fo.moves = mask;
	cr_assert_eq(fit_run(cs, n, use, NULL, &fo, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_expect(fabs(r.params.gemm_ceiling[ARCH_HOPPER] - 0.55) < 0.005, "hopper ceiling %g",
		  r.params.gemm_ceiling[ARCH_HOPPER]);
	for (int i = 0; i < nt; i++)
		if (strcmp(t[i].name, "gemm_ceiling.hopper"))
			cr_expect_eq(cost_param_get(&r.params, &t[i]), cost_param_get(&prior, &t[i]),
				     "%s moved", t[i].name);
	/* a constant no fit moves by default moves when named */
	cr_assert_eq(fit_mask_parse("measured_compute_scale,hbm_eff", mask, &e), PPLAN_OK);
	cr_expect_eq(mask[cost_param_find("hbm_eff") - t], 1);
	cr_expect_eq(mask[cost_param_find("gemm_half_us") - t], 0);
	cr_expect_eq(fit_mask_parse("gemm_ceiling.hoper", mask, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "did you mean gemm_ceiling.hopper") != NULL, "%s", e.msg);
	cr_expect_eq(fit_mask_parse("", mask, &e), PPLAN_EINPUT);
	cr_expect_eq(fit_mask_parse("hbm_eff,,attn_fwd_rel", mask, &e), PPLAN_EINPUT);
	free(use);
	free(cs);
}
