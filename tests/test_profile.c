/*
 * test_profile.c: pplan.profile/1 read, checked and written
 * (docs/profile-format.md), and the constants table behind it.
 *
 * tests/fixtures/profile/good.json has every section; each bad-*.json
 * breaks one rule and must be refused with a sentence naming the file and
 * the key.  A profile written and read back gives the same numbers.  The
 * embedded defaults are the fit in validation/calibration-fit.json (to the
 * four significant digits sim/cost_params.c keeps).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

#define FIX PPLAN_SOURCE_DIR "/tests/fixtures/profile/"

Test(profile, good_has_every_section)
{
	struct profile p;
	struct perr e = { "" };
	cr_assert_eq(profile_load(FIX "good.json", &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(p.kind, PROFILE_MEASURED);
	cr_expect_str_eq(p.device_name, "h100-sxm");
	cr_expect_str_eq(p.backend, "cuda");
	cr_expect_eq(p.peak_tflops[PREC_BF16], 989);
	cr_expect(isnan(p.peak_tflops[PREC_FP32]), "null stays NAN");
	cr_expect(p.has_host && p.cores == 112);
	cr_expect_eq(p.n_gemm, 4);
	cr_expect_eq(p.gemm[3].precision, PREC_FP8);
	cr_expect_eq(p.n_elementwise, 2);
	cr_expect_eq(p.n_attention, 1);
	cr_expect(p.attention[0].causal && p.attention[0].fused);
	cr_expect_eq(p.n_collectives, 1);
	cr_expect_eq(p.collectives[0].n_points, 2);
	cr_expect_str_eq(p.collectives[0].link, "nvswitch");
	cr_expect(p.has_constants);
	cr_expect_eq(p.constants.gemm_ceiling[ARCH_HOPPER], 0.66);
	cr_expect_eq(p.constants.mem_context_gib, 1.5);
	/* What the file does not name keeps the embedded value. */
	cr_expect_eq(p.constants.gemm_ceiling[ARCH_AMPERE],
		     cost_params_default()->gemm_ceiling[ARCH_AMPERE]);
	cr_expect(!p.has_fit);
	cr_expect_eq(p.n_libs, 2);
	profile_free(&p);
}

struct bad_profile {
	char file[40];
	char needle[96];
};

ParameterizedTestParameters(profile, bad_files)
{
	static struct bad_profile cases[] = {
		{ "bad-schema.json", "schema must be \"pplan.profile/1\"" },
		{ "bad-kind.json", "kind must be measured, fitted or published" },
		{ "bad-constant-name.json", "did you mean gemm_ceiling.hopper" },
		{ "bad-constant-range.json", "gemm_ceiling.hopper must be within [0.3, 0.95]" },
		{ "bad-gemm-monotone.json", "non-monotonic" },
		{ "bad-gemm-shape.json", "gemm[0]: m must be a whole number from 1 to 2147483647 elements" },
		/* fuzz findings F15, F16: denormals once priced a negative and a NaN step */
		{ "bad-gemm-denormal.json", "n must be a whole number from 1 to 2147483647 elements, got 9.99989e-321" },
		{ "bad-bandwidth-denormal.json", "gbps must be a number from 1e-06 to 1000000 GB/s, got 4.94066e-324" },
		{ "bad-elementwise-order.json", "sorted by bytes" },
		{ "bad-points-order.json", "collectives[0].points[1]" },
		{ "bad-host-load.json", "host: load_avg_1m must be a number from 0 to 1000000 (load average), got -0.5" },
		{ "bad-collective-time.json", "time_s must be a number from 1e-09 to 100000 s" },
		{ "bad-collective-op.json", "all_scatter" },
		{ "bad-device.json", "device must be an object" },
	};
	return cr_make_param_array(struct bad_profile, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_profile *c, profile, bad_files)
{
	char path[512];
	struct profile p;
	struct perr e = { "" };
	snprintf(path, sizeof path, "%s%s", FIX, c->file);
	cr_assert_eq(profile_load(path, &p, &e), PPLAN_EINPUT, "%s was accepted", c->file);
	cr_expect(strstr(e.msg, c->file) != NULL, "names the file: %s", e.msg);
	cr_expect(strstr(e.msg, c->needle) != NULL, "'%s' not in: %s", c->needle, e.msg);
	cr_expect(strchr(e.msg, '\n') == NULL, "one line: %s", e.msg);
	cr_expect_null(p.gemm, "nothing left to free");
}

/* p saved to a temporary file and read back into q. */
static void save_and_load(const struct profile *p, struct profile *q)
{
	struct perr e = { "" };
	char path[] = "/tmp/pplan-profile-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(profile_save(p, path, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(profile_load(path, q, &e), PPLAN_OK, "%s", e.msg);
	unlink(path);
}

Test(profile, round_trip)
{
	struct profile p, q;
	struct perr e = { "" };
	cr_assert_eq(profile_load(FIX "good.json", &p, &e), PPLAN_OK, "%s", e.msg);
	save_and_load(&p, &q);
	cr_expect_str_eq(q.device_name, p.device_name);
	cr_expect_eq(q.n_gemm, p.n_gemm);
	for (int i = 0; i < p.n_gemm; i++)
		cr_expect_eq(q.gemm[i].tflops, p.gemm[i].tflops);
	cr_expect_eq(q.collectives[0].points[1].time_s, p.collectives[0].points[1].time_s);
	cr_expect_eq(q.constants.gemm_ceiling[ARCH_HOPPER], 0.66);
	cr_expect_eq(q.constants.mem_context_gib, 1.5);
	cr_expect_str_eq(q.lib_version[1], p.lib_version[1]);
	profile_free(&p);
	profile_free(&q);
}

Test(profile, device_must_be_the_clusters)
{
	struct profile p;
	struct cluster a100, h100;
	struct perr e = { "" };
	cr_assert_eq(cluster_preset("dgx-a100", 8, &a100, &e), PPLAN_OK);
	cr_assert_eq(cluster_preset("dgx-h100", 8, &h100, &e), PPLAN_OK);
	cr_assert_eq(profile_load(FIX "good.json", &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(profile_check_device(&p, "good.json", &h100, 0, &e), PPLAN_OK);
	cr_expect_eq(profile_check_device(&p, "good.json", &a100, 0, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "h100-sxm") && strstr(e.msg, "a100-80gb"), "%s", e.msg);
	profile_free(&p);
	/* A fit over several GPU types applies to any. */
	cr_assert_eq(profile_load(FIX "fitted-any.json", &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(p.kind, PROFILE_FITTED);
	cr_expect(p.has_fit && p.fit_cases == 10 && p.n_fit_sources == 2);
	cr_expect_eq(profile_check_device(&p, "fitted-any.json", &a100, 0, &e), PPLAN_OK);
	profile_free(&p);
}

/* ---- the constants ----------------------------------------------------------- */

Test(params, table_is_sane)
{
	int n;
	const struct cost_param_info *t = cost_param_table(&n);
	struct cost_params prior;
	cost_params_prior(&prior);
	cr_assert_gt(n, 10);
	for (int i = 0; i < n; i++) {
		double d = cost_param_get(cost_params_default(), &t[i]);
		cr_expect(t[i].min < t[i].max, "%s: range", t[i].name);
		cr_expect(t[i].prior >= t[i].min && t[i].prior <= t[i].max, "%s: prior in range",
			  t[i].name);
		cr_expect(d >= t[i].min && d <= t[i].max, "%s: default %g in range", t[i].name, d);
		cr_expect_eq(cost_param_get(&prior, &t[i]), t[i].prior, "%s", t[i].name);
		cr_expect_eq(cost_param_find(t[i].name), &t[i]);
		for (int j = 0; j < i; j++)
			cr_expect_str_neq(t[i].name, t[j].name);
	}
	/* Not fitted: the default is the prior. */
	for (int i = 0; i < n; i++)
		if (!t[i].fitted)
			cr_expect_eq(cost_param_get(cost_params_default(), &t[i]), t[i].prior,
				     "%s", t[i].name);
}

Test(params, set_refuses_unknown_and_out_of_range)
{
	struct cost_params p = *cost_params_default();
	struct perr e = { "" };
	cr_expect_eq(cost_param_set(&p, "step_fixed_ms", 12.5, "x", &e), PPLAN_OK);
	cr_expect_eq(p.step_fixed_ms, 12.5);
	cr_expect_eq(cost_param_set(&p, "step_fixd_ms", 1, "x", &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "did you mean step_fixed_ms"), "%s", e.msg);
	cr_expect_eq(cost_param_set(&p, "warp_speed", 1, "x", &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "known:") && strstr(e.msg, "gemm_half_us"), "%s", e.msg);
	cr_expect_eq(cost_param_set(&p, "hbm_eff", 1.5, "x", &e), PPLAN_EINPUT);
	cr_expect_eq(cost_param_set(&p, "hbm_eff", NAN, "x", &e), PPLAN_EINPUT);
}

/* The embedded defaults are the committed fit (4 significant digits). */
Test(params, defaults_are_the_committed_fit)
{
	struct profile p;
	struct perr e = { "" };
	int n;
	const struct cost_param_info *t = cost_param_table(&n);
	cr_assert_eq(profile_load(PPLAN_SOURCE_DIR "/validation/calibration-fit.json", &p, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_assert(p.has_constants && p.has_fit);
	for (int i = 0; i < n; i++) {
		double want = cost_param_get(&p.constants, &t[i]);
		double got = cost_param_get(cost_params_default(), &t[i]);
		cr_expect(fabs(got - want) <= 5e-4 * fabs(want) + 1e-12,
			  "%s: embedded %g, fit %g", t[i].name, got, want);
	}
	profile_free(&p);
}

/* ---- what is measured is readable, what is written is readable ---------------
 * A CI run on a loaded two-core machine measured an 8-byte all_gather in
 * 4 ms: a bus bandwidth of 4 B x 1/2 / 4.006 ms = 9.99e-7 GB/s, below the
 * range of a device's bandwidth; the file pplan calibrate wrote was then
 * refused by every command.  A point's rates are its bytes over its time. */
Test(profile, slow_small_message_is_a_point)
{
	struct profile p;
	struct perr e = { "" };
	cr_assert_eq(profile_load(FIX "slow-point.json", &p, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(p.n_collectives, 2);
	cr_expect_float_eq(p.collectives[1].points[0].busbw_gbps, 9.98685e-07, 1e-12);
	cr_expect(isnan(p.collectives[1].busbw_gbps), "no fit: null");
	profile_free(&p);
}

Test(profile, save_refuses_what_load_would)
{
	struct profile p;
	struct perr e = { "" };
	char dir[] = "/tmp/pplan-profile-XXXXXX", path[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out.json", dir);
	cr_assert_eq(profile_load(FIX "good.json", &p, &e), PPLAN_OK, "%s", e.msg);
	p.collectives[0].busbw_gbps = 1e-9; /* below PROFILE_GBPS_MIN */
	cr_expect_eq(profile_save(&p, path, &e), PPLAN_EINTERNAL);
	cr_expect(strstr(e.msg, "busbw_gbps must be a number from 1e-06") != NULL, "%s", e.msg);
	cr_expect(strstr(e.msg, "nothing was written") != NULL, "%s", e.msg);
	cr_expect_neq(access(path, F_OK), 0, "no file");
	profile_free(&p);
	rmdir(dir);
}

/* The conditions a profile was measured under, against a run's: the
 * thresholds of sim/profile.h worked by hand. */
Test(profile, conditions_differ)
{
	struct run_conditions then = { 2, 2, 0.2, 2100 }, now = then, none = { -1, -1, NAN, NAN };
	char msg[400];
	cr_expect_eq(run_conditions_differ(&then, 2, &now, 2, msg, sizeof msg), 0, "the same: %s", msg);
	cr_expect_str_eq(msg, "");
	/* a load within 0.5 + 25 % of the larger: 0.2 against 0.9 (|0.7| <= 0.725) */
	now.load_1m = 0.9;
	cr_expect_eq(run_conditions_differ(&then, 2, &now, 2, msg, sizeof msg), 0, "%s", msg);
	/* 0.2 against 1.0: 0.8 > 0.75 */
	now.load_1m = 1.0;
	cr_expect_eq(run_conditions_differ(&then, 2, &now, 2, msg, sizeof msg), 1);
	cr_expect_str_eq(msg, "the profile was measured with 2 ranks (2 per host, 1 per core), load 0.2, 2100 MHz; "
			      "this run has 2 ranks (2 per host, 1 per core), load 1, 2100 MHz");
	/* a clock within 5 %: 2100 against 2200 (4.8 %); 2000 against 2100 is 5 % of 2100 */
	now = then;
	now.cpu_mhz = 2200;
	cr_expect_eq(run_conditions_differ(&then, 2, &now, 2, msg, sizeof msg), 0, "%s", msg);
	now.cpu_mhz = 2300;
	cr_expect_eq(run_conditions_differ(&then, 2, &now, 2, msg, sizeof msg), 1);
	/* four ranks on the two cores: two per core */
	now = then;
	now.ranks = now.ranks_per_host = 4;
	cr_expect_eq(run_conditions_differ(&then, 2, &now, 2, msg, sizeof msg), 1);
	cr_expect(strstr(msg, "this run has 4 ranks (4 per host, 2 per core)") != NULL, "%s", msg);
	/* nothing recorded: nothing to say (the caller says it was not recorded) */
	cr_expect_eq(run_conditions_known(&none), 0);
	cr_expect_eq(run_conditions_differ(&none, 0, &now, 2, msg, sizeof msg), 0);
}

Test(profile, conditions_round_trip)
{
	struct profile p, q;
	struct perr e = { "" };
	cr_assert_eq(profile_load(FIX "good.json", &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(run_conditions_known(&p.cond), 0, "good.json records none");
	p.has_host = 1;
	p.cond = (struct run_conditions){ 4, 2, 1.5, 2450.5 };
	save_and_load(&p, &q);
	cr_expect_eq(q.cond.ranks, 4);
	cr_expect_eq(q.cond.ranks_per_host, 2);
	cr_expect_eq(q.cond.load_1m, 1.5);
	cr_expect_eq(q.cond.cpu_mhz, 2450.5);
	profile_free(&p);
	profile_free(&q);
}

/* A send/receive point's exposed wait: kept through a save and a load,
 * absent where it is 0, and a negative one refused by the writer as the
 * reader would refuse it. */
Test(profile, exposed_wait_round_trip_and_range)
{
	struct profile p, q;
	struct perr e = { "" };
	char dir[] = "/tmp/pplan-profile-XXXXXX", path[64];
	cr_assert_eq(profile_load(FIX "good.json", &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect(!(p.collectives[0].points[1].exposed_s > 0), "absent");
	p.collectives[0].points[1].exposed_s = 2.5e-4;
	save_and_load(&p, &q);
	cr_expect_eq(q.collectives[0].points[1].exposed_s, 2.5e-4);
	cr_expect(!(q.collectives[0].points[0].exposed_s > 0), "still absent");
	profile_free(&q);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out.json", dir);
	p.collectives[0].points[1].exposed_s = 1e6;
	cr_expect_eq(profile_save(&p, path, &e), PPLAN_EINTERNAL);
	cr_expect(strstr(e.msg, "exposed_s must be a number from") != NULL, "%s", e.msg);
	cr_expect_neq(access(path, F_OK), 0, "no file");
	profile_free(&p);
	rmdir(dir);
}
