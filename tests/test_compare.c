/*
 * test_compare.c: the pplan.report/1 reader and `pplan report compare`'s
 * arithmetic, on the hand-written reports of tests/fixtures/reports/
 * (README there).  Every expected number below is worked out by hand from
 * the fixtures' predicted and measured values, not taken from a run.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "run_report.h"

#define FIX PPLAN_SOURCE_DIR "/tests/fixtures/reports/"

static void load(const char *name, struct runreport *r)
{
	struct perr e = { { 0 } };
	enum pplan_status st = runreport_load(name, r, &e);
	cr_assert_eq(st, PPLAN_OK, "%s: %s", name, e.msg);
}

static void near(double got, double want, double tol, const char *what)
{
	cr_expect(fabs(got - want) <= tol, "%s: got %.9g, want %.9g", what, got, want);
}

Test(runreport, reads_the_pipeline_fixture)
{
	struct runreport r;
	load(FIX "cpu-pp2-1f1b.json", &r);
	cr_expect(r.ok);
	cr_expect_str_eq(r.model, "gpt-tiny");
	cr_expect_str_eq(r.gpu, "cpu");
	cr_expect_eq(r.pp, 2);
	cr_expect_eq(r.microbatches, 4);
	cr_expect_eq(r.steps, 10);
	cr_expect_eq(r.warmup, 3);
	near(r.pred.step_time_s, 0.200, 1e-12, "predicted step");
	near(r.meas.step_time_s, 0.250, 1e-12, "measured step");
	near(r.meas.memory_gib, 1.20, 1e-12, "measured memory_gib_peak");
	near(r.pred.memory_gib, 1.50, 1e-12, "predicted memory_gib.total");
	near(r.pred.op_classes_s[OC_PP], 0.008, 1e-12, "pp_comm");
	cr_expect_eq(r.n_step_times, 10);
	cr_expect_eq(r.pred.n_stages, 2);
	cr_expect_eq(r.meas.n_stages, 2);
	cr_expect(isnan(r.meas.stages[0].mem.weights), "null reads as NAN");
	/* 1F1B, p = 2, m = 4: stage 0 runs 4 F, 4 B, 4 send_act, 4 recv_grad
	 * and the optimizer; stage 1 the same with recv_act and send_grad. */
	cr_assert_eq(r.meas.n_lanes, 2);
	cr_expect_eq(r.meas.lanes[0].n_ops, 17);
	cr_expect_eq(r.meas.lanes[1].n_ops, 17);
	cr_expect_str_eq(r.meas.lanes[0].ops[0].name, "F");
	cr_expect_eq(r.meas.lanes[0].ops[16].cls, OC_OPTIMIZER);
	cr_expect_eq(r.meas.lanes[0].ops[16].mb, -1, "mb null reads as -1");
	near(r.meas.lanes[0].ops[16].end_s, 0.250, 1e-12, "the step ends with the optimizer");
	cr_expect_str_eq(r.hosts, "node-a");
	runreport_free(&r);
}

Test(runreport, failed_run_without_measurements)
{
	struct runreport r;
	load(FIX "failed.json", &r);
	cr_expect(!r.ok);
	cr_expect(strstr(r.failure, "rank 1 stopped answering") != NULL);
	cr_expect_eq(r.steps_completed, 2);
	cr_expect(isnan(r.meas.step_time_s));
	cr_expect_eq(r.meas.n_lanes, 0);
	runreport_free(&r);
}

/* One sentence naming the file and what is wrong. */
static void refused(const char *name, const char *needle)
{
	struct runreport r;
	struct perr e = { { 0 } };
	char path[512];
	snprintf(path, sizeof path, FIX "%s", name);
	cr_expect_eq(runreport_load(path, &r, &e), PPLAN_EINPUT, "%s accepted", name);
	cr_expect(strstr(e.msg, name) != NULL, "%s: message does not name the file: %s",
		  name, e.msg);
	cr_expect(strstr(e.msg, needle) != NULL, "%s: no '%s' in: %s", name, needle, e.msg);
	cr_expect(strchr(e.msg, '\n') == NULL, "one line: %s", e.msg);
}

Test(runreport, refuses_bad_documents)
{
	refused("bad-schema-version.json", "pplan.report/2");
	refused("bad-prediction.json", "pplan.prediction/1");
	refused("bad-type.json", "measured.step_time_s must be a number");
	refused("bad-op-class.json", "'waiting' is not an op class");
	refused("bad-op-order.json", "ends (0.224 s) before it starts");
	refused("bad-truncated.json", "malformed JSON");
	refused("no-such-file.json", "cannot open");
}

/* Report 1 (pp=2 1F1B) and report 2 (tp=2), errors by hand:
 *   step     (0.200-0.250)/0.250 = -20 %;  (0.300-0.240)/0.240 = +25 %
 *   tokens/s (5120-4096)/4096 = +25 %;     (3413.33-4266.67)/4266.67 = -20 %
 *   MFU      (0.40-0.32)/0.32 = +25 %;     (0.20-0.25)/0.25 = -20 %
 *   bubble   0.144063-0.184009 = -3.9946 pts, no percentage (a share
 *            near 0 has none that means anything); report 2: 0 - 0, diff 0
 *   memory   (1.50-1.20)/1.20 = +25 %;     (1.00-1.25)/1.25 = -20 %
 *   classes  1: forward -20, backward -20, pp_comm (0.008-0.020)/0.020 = -60,
 *               optimizer (0.042-0.0425)/0.0425 = -1.17647, idle -20
 *            2: forward, backward, tp_comm, optimizer +25; idle 0/0 */
Test(compare, two_reports_by_hand)
{
	struct runreport r[2];
	struct comparison c;
	struct perr e = { { 0 } };
	load(FIX "cpu-pp2-1f1b.json", &r[0]);
	load(FIX "cpu-tp2.json", &r[1]);
	cr_assert_eq(compare_build(r, 2, &c, &e), PPLAN_OK);

	near(c.values[0][CQ_STEP_TIME].error_pct, -20.0, 1e-9, "step 1");
	near(c.values[1][CQ_STEP_TIME].error_pct, 25.0, 1e-9, "step 2");
	near(c.values[0][CQ_TOKENS_PER_S].error_pct, 25.0, 1e-9, "tok 1");
	near(c.values[1][CQ_TOKENS_PER_S].error_pct, -20.0, 1e-5, "tok 2");
	near(c.values[0][CQ_MFU].error_pct, 25.0, 1e-9, "mfu 1");
	near(c.values[0][CQ_BUBBLE].diff, -0.039946, 1e-9, "bubble diff 1");
	cr_expect(isnan(c.values[0][CQ_BUBBLE].error_pct), "the bubble in points only");
	cr_expect(isnan(c.values[1][CQ_BUBBLE].error_pct), "no percentage of a 0 bubble");
	near(c.values[1][CQ_BUBBLE].diff, 0, 1e-12, "bubble diff 2");
	near(c.values[0][CQ_MEMORY].error_pct, 25.0, 1e-9, "mem 1");
	near(c.values[1][CQ_MEMORY].error_pct, -20.0, 1e-9, "mem 2");
	near(c.values[0][CQ_CLASS0 + OC_PP].error_pct, -60.0, 1e-9, "pp 1");
	near(c.values[0][CQ_CLASS0 + OC_OPTIMIZER].error_pct, -1.17647, 1e-4, "opt 1");
	near(c.values[1][CQ_CLASS0 + OC_TP].error_pct, 25.0, 1e-9, "tp 2");
	cr_expect(isnan(c.values[1][CQ_CLASS0 + OC_IDLE].error_pct), "idle 0/0");

	/* MAPE and the worst case over the two. */
	near(c.summary[CQ_STEP_TIME].mape_pct, 22.5, 1e-9, "step MAPE");
	near(c.summary[CQ_STEP_TIME].worst_pct, 25.0, 1e-9, "step worst");
	cr_expect_eq(c.summary[CQ_STEP_TIME].worst_report, 1);
	cr_expect_eq(c.summary[CQ_TOKENS_PER_S].worst_report, 0);
	cr_expect_eq(c.summary[CQ_BUBBLE].n, 0);
	cr_expect(isnan(c.summary[CQ_BUBBLE].mape_pct), "no bubble MAPE");
	cr_expect_eq(c.summary[CQ_BUBBLE].n_diff, 2);
	near(c.summary[CQ_BUBBLE].mean_abs_diff, 0.019973, 1e-9, "bubble mean |diff|");
	near(c.summary[CQ_BUBBLE].worst_diff, -0.039946, 1e-9, "bubble worst diff");
	cr_expect_eq(c.summary[CQ_BUBBLE].worst_diff_report, 0);
	/* optimizer: |-1.17647| and |+25| -> 13.0882 */
	near(c.summary[CQ_CLASS0 + OC_OPTIMIZER].mape_pct, 13.08824, 1e-4, "opt MAPE");
	cr_expect_eq(c.summary[CQ_CLASS0 + OC_RECOMPUTE].n, 0);
	cr_expect(isnan(c.summary[CQ_CLASS0 + OC_RECOMPUTE].mape_pct));
	cr_expect_eq(c.n_warnings, 0, "same model, same machine: %s",
		     c.n_warnings ? c.warnings[0] : "");
	compare_free(&c);
	runreport_free(&r[0]);
	runreport_free(&r[1]);
}

Test(compare, warns_about_other_models_and_machines)
{
	struct runreport r[3];
	struct comparison c;
	struct perr e = { { 0 } };
	load(FIX "cpu-pp2-1f1b.json", &r[0]);
	load(FIX "other-model.json", &r[1]);
	load(FIX "failed.json", &r[2]);
	cr_assert_eq(compare_build(r, 3, &c, &e), PPLAN_OK);
	cr_assert_eq(c.n_warnings, 2);
	cr_expect(strstr(c.warnings[0], "different models") &&
		  strstr(c.warnings[0], "[2] gpt-small"), "%s", c.warnings[0]);
	cr_expect(strstr(c.warnings[1], "different machines") &&
		  strstr(c.warnings[1], "[3] cpu on node-b"), "%s", c.warnings[1]);
	/* The failed run measured nothing: it has no error and does not
	 * count in the MAPE (reports 1 and 2 are both -20 %). */
	cr_expect(isnan(c.values[2][CQ_STEP_TIME].error_pct));
	cr_expect_eq(c.summary[CQ_STEP_TIME].n, 2);
	near(c.summary[CQ_STEP_TIME].mape_pct, 20.0, 1e-9, "MAPE of the two");
	compare_free(&c);
	for (int i = 0; i < 3; i++)
		runreport_free(&r[i]);
}

Test(compare, json_document)
{
	struct runreport r;
	struct comparison c;
	struct perr e = { { 0 } };
	cJSON *doc, *rep, *q;
	load(FIX "cpu-pp2-1f1b.json", &r);
	cr_assert_eq(compare_build(&r, 1, &c, &e), PPLAN_OK);
	doc = compare_json(&c, "pplan report compare x");
	cr_expect_str_eq(cJSON_GetObjectItem(doc, "schema")->valuestring,
			 "pplan.comparison/1");
	cr_expect(cJSON_IsString(cJSON_GetObjectItem(
		cJSON_GetObjectItem(doc, "provenance"), "git_hash")));
	rep = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "reports"), 0);
	q = cJSON_GetObjectItem(rep, "step_time_s");
	near(cJSON_GetObjectItem(q, "error_pct")->valuedouble, -20.0, 1e-9, "json step");
	q = cJSON_GetObjectItem(rep, "bubble_fraction");
	near(cJSON_GetObjectItem(q, "diff_pts")->valuedouble, -3.9946, 1e-6, "json pts");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(q, "error_pct")), "a bubble has no % error");
	q = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "bubble_fraction");
	cr_expect_eq(cJSON_GetObjectItem(q, "reports")->valueint, 1);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(q, "mape_pct")), "no bubble MAPE");
	near(cJSON_GetObjectItem(q, "worst_diff_pts")->valuedouble, -3.9946, 1e-6, "json worst pts");
	cr_expect_eq(cJSON_GetObjectItem(q, "worst_report")->valueint, 0);
	q = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "op_classes_s"), "recompute");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(q, "error_pct")), "0/0 is null");
	q = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "step_time_s");
	near(cJSON_GetObjectItem(q, "mape_pct")->valuedouble, 20.0, 1e-9, "json MAPE");
	cJSON_Delete(doc);
	compare_free(&c);
	runreport_free(&r);
}
