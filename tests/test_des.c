/*
 * test_des.c: the pipeline event simulator against the closed forms of
 * the papers (uniform durations, free communication), against timelines
 * worked out by hand (p2p cost, DP reduction, optimizer), dependency
 * order of the simulated times, and the Chrome trace it writes.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "des.h"
#include "jsonio.h"
#include "trace.h"

static struct pipe_schedule *build(enum schedule k, int pp, int vp, long m)
{
	struct layout l;
	struct pipe_schedule *s = NULL;
	struct perr e = { "" };
	layout_default(&l);
	l.schedule = k;
	l.pp = pp;
	l.vp = vp;
	cr_assert_eq(schedule_build(&l, m, 4096, &s, &e), PPLAN_OK, "%s", e.msg);
	return s;
}

/* F = 1, B = 2 per chunk (W = 1 of B for zb-h1), everything else free. */
static struct des_costs uniform(enum schedule k)
{
	struct des_costs c;
	memset(&c, 0, sizeof c);
	c.fwd_s = 1;
	c.bwd_s = 2;
	c.bwd_w_s = k == SCHED_ZB_H1 ? 1 : 0;
	c.dp_buckets = 1;
	c.dp_overlap = 1;
	return c;
}

static void run(const struct pipe_schedule *s, const struct des_costs *c,
		unsigned flags, struct des_result *r)
{
	struct perr e = { "" };
	cr_assert_eq(des_run(s, c, flags, r, &e), PPLAN_OK, "%s", e.msg);
}

struct form_case {
	enum schedule kind;
	int pp, vp, m;
};

ParameterizedTestParameters(des, closed_forms_exact)
{
	static struct form_case cases[] = {
		{ SCHED_GPIPE, 2, 1, 4 },  { SCHED_GPIPE, 4, 1, 8 },
		{ SCHED_GPIPE, 8, 1, 3 },  { SCHED_1F1B, 2, 1, 4 },
		{ SCHED_1F1B, 4, 1, 4 },   { SCHED_1F1B, 4, 1, 16 },
		{ SCHED_1F1B, 8, 1, 32 },  { SCHED_1F1B, 16, 1, 128 },
		{ SCHED_INTERLEAVED, 2, 2, 4 },  { SCHED_INTERLEAVED, 4, 2, 8 },
		{ SCHED_INTERLEAVED, 4, 4, 16 }, { SCHED_INTERLEAVED, 8, 3, 32 },
		{ SCHED_INTERLEAVED, 16, 8, 128 }, { SCHED_ZB_H1, 2, 1, 2 },
		{ SCHED_ZB_H1, 4, 1, 4 },  { SCHED_ZB_H1, 4, 1, 12 },
		{ SCHED_ZB_H1, 8, 1, 32 },
	};
	return cr_make_param_array(struct form_case, cases,
				   sizeof cases / sizeof cases[0]);
}

/* Uniform F = 1, B = 2 per model chunk (zb-h1: B = W = 1), free
 * communication: every stage idles exactly the closed form's share of
 * the pipeline span (p-1)/(m+p-1), (p-1)/(v*m+p-1) or (p-1)/(3m+p-1). */
ParameterizedTest(struct form_case *c, des, closed_forms_exact)
{
	struct pipe_schedule *s = build(c->kind, c->pp, c->vp, c->m);
	struct des_costs k = uniform(c->kind);
	struct des_result r;
	double want = des_bubble_closed_form(c->kind, c->pp, c->m, c->vp);
	run(s, &k, 0, &r);
	for (int i = 0; i < c->pp; i++)
		cr_expect_float_eq(r.stage[i].bubble_fraction, want, 1e-12,
				   "%s p=%d v=%d m=%d stage %d: %.15g vs %.15g",
				   schedule_name(c->kind), c->pp, c->vp, c->m, i,
				   r.stage[i].bubble_fraction, want);
	cr_expect_float_eq(r.bubble_fraction, want, 1e-12);
	/* the span: busy 3*v*m plus the closed form's bubble */
	cr_expect_float_eq(r.pipeline_span_s,
			   3.0 * c->vp * c->m / (1 - want), 1e-9);
	cr_expect_float_eq(r.step_time_s, r.pipeline_span_s, 1e-12);
	des_result_free(&r);
	schedule_free(s);
}

Test(des, interleaved_bubble_relative_to_ideal_is_p_minus_1_over_v_m)
{
	/* Megatron-LM: bubble time / ideal time = (1/v) (p-1)/m */
	struct pipe_schedule *s = build(SCHED_INTERLEAVED, 4, 4, 8);
	struct des_costs k = uniform(SCHED_INTERLEAVED);
	struct des_result r;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.stage[0].idle_s / r.stage[0].busy_s,
			   (4 - 1.0) / (4 * 8), 1e-12);
	des_result_free(&r);
	schedule_free(s);
}

Test(des, zb_h1_bubble_is_a_third_of_1f1b)
{
	/* Same work per microbatch: 1F1B F=1, B=2 (B and W fused); ZB-H1
	 * F=B=W=1.  Idle time per stage: 1F1B (p-1)(F+B) = 3(p-1), ZB-H1
	 * (p-1)(F+B-W) = p-1 (Qi et al., section 3), a third exactly. */
	for (int p = 2; p <= 8; p *= 2) {
		struct pipe_schedule *a = build(SCHED_1F1B, p, 1, 4 * p);
		struct pipe_schedule *z = build(SCHED_ZB_H1, p, 1, 4 * p);
		struct des_costs ka = uniform(SCHED_1F1B), kz = uniform(SCHED_ZB_H1);
		struct des_result ra, rz;
		run(a, &ka, 0, &ra);
		run(z, &kz, 0, &rz);
		cr_expect_float_eq(ra.bubble_s, 3.0 * (p - 1), 1e-12);
		cr_expect_float_eq(rz.bubble_s, 1.0 * (p - 1), 1e-12);
		des_result_free(&ra);
		des_result_free(&rz);
		schedule_free(a);
		schedule_free(z);
	}
}

/*
 * 1F1B, p=2, m=4, F=1, B=2, p2p=0.5 (times in s; "a0" = activation of
 * microbatch 0 arrives, "g0" = its gradient arrives):
 *
 *   stage 0: F0 0-1, F1 1-2 (a0 1.5, a1 2.5: link busy until 1.5 then 2.5)
 *            wait g0 (5.0)  B0 5-7, F2 7-8 (a2 8.5), B1 8-10 (g1 at 8),
 *            F3 10-11 (a3 11.5), B2 12-14 (g2 12), B3 15-17 (g3 15)
 *   stage 1: F0 1.5-2.5, B0 2.5-4.5 (g0 5.0), F1 4.5-5.5, B1 5.5-7.5
 *            (g1 8), F2 8.5-9.5, B2 9.5-11.5 (g2 12), F3 11.5-12.5,
 *            B3 12.5-14.5 (g3 15)
 *
 * Span 17 s against the closed form's (m+p-1)(F+B) = 15 s: each stage
 * computes 12 s, bubble 5/17 = 0.294 instead of 1/5 = 0.2.  Stage 1's
 * own window 1.5-14.5 has 1 s idle: 1/13.
 *
 * DP reduction 2 s in 2 buckets, overlapped: stage 0's buckets ready at
 * 16 and 17 (halfway through B3 15-17 and at its end): 16-17, 17-18,
 * exposed 1 s; optimizer 0.5 s: stage 0 ends at 18.5.  Stage 1: B3
 * 12.5-14.5, buckets 13.5-14.5, 14.5-15.5, ends at 16.  Step 18.5 s.
 * Without overlap stage 0 reduces 17-19 and the step is 19.5 s.
 */
Test(des, hand_worked_1f1b_p2_m4_with_p2p_dp_and_optimizer)
{
	struct pipe_schedule *s = build(SCHED_1F1B, 2, 1, 4);
	struct des_costs k = uniform(SCHED_1F1B);
	struct des_result r;

	k.p2p_s = 0.5;
	run(s, &k, DES_TIMES, &r);
	cr_expect_float_eq(r.pipeline_span_s, 17.0, 1e-12);
	cr_expect_float_eq(r.stage[0].busy_s, 12.0, 1e-12);
	cr_expect_float_eq(r.stage[0].bubble_fraction, 5.0 / 17, 1e-12);
	cr_expect_float_eq(r.stage[1].bubble_fraction, 5.0 / 17, 1e-12);
	cr_expect_float_eq(r.bubble_fraction - des_bubble_closed_form(SCHED_1F1B, 2, 4, 1),
			   5.0 / 17 - 0.2, 1e-12);
	cr_expect_float_eq(r.stage[1].first_fwd_start_s, 1.5, 1e-12);
	cr_expect_float_eq(r.stage[1].last_bwd_end_s, 14.5, 1e-12);
	cr_expect_float_eq(r.stage[1].own_window_bubble_fraction, 1.0 / 13, 1e-12);
	/* stage 0's B0 starts when g0 arrives at 5.0 */
	for (long i = s->first[0]; i < s->first[1]; i++)
		if (s->ops[i].kind == OP_BWD && s->ops[i].mb == 0)
			cr_expect_float_eq(r.op_start_s[i], 5.0, 1e-12);
	des_result_free(&r);

	k.dp_reduce_s = 2;
	k.dp_buckets = 2;
	k.optimizer_s = 0.5;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.stage[0].dp_end_s, 18.0, 1e-12);
	cr_expect_float_eq(r.stage[0].dp_exposed_s, 1.0, 1e-12);
	cr_expect_float_eq(r.stage[1].end_s, 16.0, 1e-12);
	cr_expect_float_eq(r.step_time_s, 18.5, 1e-12);
	des_result_free(&r);

	k.dp_overlap = 0;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.step_time_s, 19.5, 1e-12);
	des_result_free(&r);
	schedule_free(s);
}

/* The tied embedding's all-reduce runs on the first and the last stage
 * only, after their gradient reduction: those two end dp_emb_s later,
 * the middle ones not; 1F1B's first stage ends last, so the step is
 * that much longer.  The exposed gather (dp_after_s) counts as exposed
 * DP time on every stage. */
Test(des, tied_embedding_on_the_end_stages)
{
	struct pipe_schedule *s = build(SCHED_1F1B, 4, 1, 8);
	struct des_costs k = uniform(SCHED_1F1B);
	struct des_result a, b;
	run(s, &k, 0, &a);
	k.dp_emb_s = 0.7;
	k.dp_after_s = 0.2;
	run(s, &k, 0, &b);
	for (int i = 0; i < 4; i++) {
		double emb = i == 0 || i == 3 ? 0.7 : 0.0;
		cr_expect_float_eq(b.stage[i].end_s - a.stage[i].end_s, emb + 0.2, 1e-12, "stage %d", i);
		cr_expect_float_eq(b.stage[i].dp_exposed_s - a.stage[i].dp_exposed_s, emb + 0.2, 1e-12,
				   "stage %d", i);
	}
	cr_expect_float_eq(b.step_time_s - a.step_time_s, 0.9, 1e-12);
	des_result_free(&a);
	des_result_free(&b);
	schedule_free(s);
}

/*
 * ZB-H1, p=2, m=2, F=B=W=1, free communication:
 *   stage 0: F0 0-1, F1 1-2, (wait) B0 3-4, W0 4-5, B1 5-6, W1 6-7
 *   stage 1: F0 1-2, B0 2-3, F1 3-4, B1 4-5, W0 5-6, W1 6-7
 * span 7, busy 6: bubble 1/7 = (p-1)/(3m+p-1).  With the LM head on the
 * last stage (last_extra_fwd 1, last_extra_bwd 1, on F and B):
 *   stage 1: F0 1-3, B0 3-5, F1 5-7, B1 7-9, W0 9-10, W1 10-11
 *   stage 0: F0 0-1, F1 1-2, B0 5-6, W0 6-7, B1 9-10, W1 10-11
 * span 11; stage 0 busy 6 (5/11 idle), stage 1 busy 10 (1/11); the
 * closed form, blind to the uneven stage, still says 1/7.
 */
Test(des, hand_worked_zb_h1_uneven_last_stage)
{
	struct pipe_schedule *s = build(SCHED_ZB_H1, 2, 1, 2);
	struct des_costs k = uniform(SCHED_ZB_H1);
	struct des_result r;
	k.fwd_s = 1;
	k.bwd_s = 2;
	k.bwd_w_s = 1;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.pipeline_span_s, 7.0, 1e-12);
	cr_expect_float_eq(r.bubble_fraction, 1.0 / 7, 1e-12);
	des_result_free(&r);

	k.last_extra_fwd_s = 1;
	k.last_extra_bwd_s = 1;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.pipeline_span_s, 11.0, 1e-12);
	cr_expect_float_eq(r.stage[0].bubble_fraction, 5.0 / 11, 1e-12);
	cr_expect_float_eq(r.stage[1].bubble_fraction, 1.0 / 11, 1e-12);
	cr_expect_float_eq(r.bubble_fraction, 3.0 / 11, 1e-12);
	des_result_free(&r);
	schedule_free(s);
}

/* Simulated in-flight peaks equal the order-only count of schedule.c. */
Test(des, peak_inflight_matches_schedule)
{
	static const struct { enum schedule k; int p, v, m; } cases[] = {
		{ SCHED_1F1B, 4, 1, 8 }, { SCHED_GPIPE, 4, 1, 6 },
		{ SCHED_INTERLEAVED, 4, 2, 8 }, { SCHED_ZB_H1, 4, 1, 8 },
	};
	for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
		struct pipe_schedule *s = build(cases[n].k, cases[n].p, cases[n].v,
						cases[n].m);
		struct des_costs k = uniform(cases[n].k);
		struct des_result r;
		k.p2p_s = 0.3;
		run(s, &k, 0, &r);
		for (int i = 0; i < cases[n].p; i++) {
			cr_expect_eq(r.stage[i].peak_inflight_chunks,
				     schedule_peak_inflight(s, i));
			cr_expect_float_eq(r.stage[i].peak_inflight,
					   (double)schedule_peak_inflight(s, i) / cases[n].v,
					   1e-12);
		}
		if (cases[n].k == SCHED_1F1B)
			for (int i = 0; i < cases[n].p; i++)
				cr_expect_eq(r.stage[i].peak_inflight_chunks,
					     cases[n].p - i);
		des_result_free(&r);
		schedule_free(s);
	}
}

/* Dependencies in simulated time: forward of (mb, k) after the forward
 * of (mb, k-1) and its transfer; backward of (mb, k) after its own
 * forward and after the backward of (mb, k+1) and its transfer; every
 * receive done no earlier than the matching send's arrival. */
Test(des, simulated_times_respect_dependencies)
{
	static const struct { enum schedule k; int p, v, m; } cases[] = {
		{ SCHED_1F1B, 4, 1, 8 }, { SCHED_GPIPE, 3, 1, 5 },
		{ SCHED_INTERLEAVED, 4, 3, 8 }, { SCHED_ZB_H1, 4, 1, 8 },
	};
	for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
		struct pipe_schedule *s = build(cases[n].k, cases[n].p, cases[n].v,
						cases[n].m);
		struct des_costs k = uniform(cases[n].k);
		struct des_result r;
		int nv = s->pp * s->vp;
		long m = s->microbatches, cells = nv * m;
		double *t = calloc((size_t)(6 * cells), sizeof *t);
		double *fs = t, *fe = t + cells, *bs = fe + cells, *be = bs + cells,
		       *sa = be + cells, *sg = sa + cells;
		k.p2p_s = 0.25;
		k.last_extra_fwd_s = 0.7;
		run(s, &k, DES_TIMES, &r);
		for (int st = 0; st < s->pp; st++)
			for (long i = s->first[st]; i < s->first[st + 1]; i++) {
				const struct sched_op *op = &s->ops[i];
				long c = (long)schedule_vstage(s, st, op->chunk) * m + op->mb;
				switch (op->kind) {
				case OP_FWD: fs[c] = r.op_start_s[i]; fe[c] = r.op_end_s[i]; break;
				case OP_BWD: case OP_BWD_INPUT:
					bs[c] = r.op_start_s[i]; be[c] = r.op_end_s[i]; break;
				case OP_SEND_ACT: sa[c + m] = r.op_end_s[i]; break;
				case OP_SEND_GRAD: sg[c - m] = r.op_end_s[i]; break;
				default: break;
				}
			}
		for (long c = 0; c < cells; c++) {
			int vs = (int)(c / m);
			cr_expect_geq(bs[c], fe[c] - 1e-12);
			if (vs > 0) {
				cr_expect_geq(sa[c], fe[c - m] + k.p2p_s - 1e-12);
				cr_expect_geq(fs[c], sa[c] - 1e-12);
			}
			if (vs < nv - 1) {
				cr_expect_geq(sg[c], be[c + m] + k.p2p_s - 1e-12);
				cr_expect_geq(bs[c], sg[c] - 1e-12);
			}
		}
		free(t);
		des_result_free(&r);
		schedule_free(s);
	}
}

Test(des, deadlock_is_reported)
{
	/* 1F1B p=2 m=1, stage 0: F0 send | recv_grad B0 -> recv_grad B0 F0
	 * send: stage 0 waits for a gradient, stage 1 for an activation. */
	struct pipe_schedule *s = build(SCHED_1F1B, 2, 1, 1);
	struct des_costs k = uniform(SCHED_1F1B);
	struct des_result r;
	struct perr e = { "" };
	struct sched_op a = s->ops[0], b = s->ops[1];
	s->ops[0] = s->ops[2];
	s->ops[1] = s->ops[3];
	s->ops[2] = a;
	s->ops[3] = b;
	cr_expect_eq(des_run(s, &k, 0, &r, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "deadlock") != NULL, "%s", e.msg);
	cr_expect_null(r.stage);
	schedule_free(s);
}

Test(des, bad_costs_are_rejected)
{
	struct pipe_schedule *s = build(SCHED_1F1B, 2, 1, 2);
	struct des_costs k = uniform(SCHED_1F1B);
	struct des_result r;
	struct perr e = { "" };
	k.bwd_w_s = 5;
	cr_expect_eq(des_run(s, &k, 0, &r, &e), PPLAN_EINPUT);
	k = uniform(SCHED_1F1B);
	k.fwd_s = NAN;
	cr_expect_eq(des_run(s, &k, 0, &r, &e), PPLAN_EINPUT);
	schedule_free(s);
}

Test(des, costs_from_prediction)
{
	struct prediction p;
	struct des_costs c;
	memset(&p, 0, sizeof p);
	p.chunk.fwd_s = 1;
	p.chunk.bwd_s = 2;
	p.chunk.bwd_w_s = 0.9;
	p.first_extra_fwd_s = 0.1;
	p.last_extra_bwd_s = 0.4;
	p.p2p_s = 0.05;
	p.dp_reduce_s = 3;
	p.optimizer_s = 0.2;
	des_costs_from_prediction(&p, &c);
	cr_expect_eq(c.fwd_s, 1);
	cr_expect_eq(c.bwd_w_s, 0.9);
	cr_expect_eq(c.first_extra_fwd_s, 0.1);
	cr_expect_eq(c.last_extra_bwd_s, 0.4);
	cr_expect_eq(c.p2p_s, 0.05);
	cr_expect_eq(c.dp_reduce_s, 3);
	cr_expect_eq(c.optimizer_s, 0.2);
	cr_expect_geq(c.dp_buckets, 1);
}

Test(des, simulate_convenience_and_405b_sized_schedule)
{
	/* pp=16, v=8, m=128: the benchmark's shape; every op simulated */
	struct layout l;
	struct des_costs k = uniform(SCHED_INTERLEAVED);
	struct des_result r;
	struct perr e = { "" };
	layout_default(&l);
	l.pp = 16;
	l.vp = 8;
	l.schedule = SCHED_INTERLEAVED;
	cr_assert_eq(des_simulate(&l, 128, &k, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_gt(r.ops, 16L * 8 * 128 * 2);
	cr_expect_float_eq(r.bubble_fraction,
			   des_bubble_closed_form(SCHED_INTERLEAVED, 16, 128, 8),
			   1e-12);
	des_result_free(&r);
}

Test(des, trace_round_trips_through_cjson)
{
	struct pipe_schedule *s = build(SCHED_INTERLEAVED, 2, 2, 4);
	struct des_costs k = uniform(SCHED_INTERLEAVED);
	struct des_result r;
	struct perr e = { "" };
	char path[] = "/tmp/pplan_trace_XXXXXX";
	cJSON *doc = NULL, *events;
	long compute = 0, sends = 0, x = 0, meta = 0;
	int fd;

	k.p2p_s = 0.1;
	k.dp_reduce_s = 1;
	k.dp_buckets = 2;
	k.optimizer_s = 0.5;
	run(s, &k, DES_TIMES, &r);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(trace_write(path, s, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(json_read_file(path, &doc, &e), PPLAN_OK, "%s", e.msg);
	unlink(path);

	cr_expect_str_eq(cJSON_GetObjectItem(doc, "schema")->valuestring,
			 "pplan.trace/1");
	events = cJSON_GetObjectItem(doc, "traceEvents");
	cr_assert(cJSON_IsArray(events));
	for (long i = 0; i < s->nops; i++) {
		compute += op_is_compute((enum op_kind)s->ops[i].kind);
		sends += s->ops[i].kind == OP_SEND_ACT || s->ops[i].kind == OP_SEND_GRAD;
	}
	for (cJSON *ev = events->child; ev; ev = ev->next) {
		const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(ev, "pid")));
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(ev, "tid")));
		if (strcmp(ph, "X") == 0) {
			cr_expect_geq(cJSON_GetObjectItem(ev, "ts")->valuedouble, 0);
			cr_expect_geq(cJSON_GetObjectItem(ev, "dur")->valuedouble, 0);
			x++;
		} else {
			cr_expect_str_eq(ph, "M");
			meta++;
		}
	}
	/* compute and sends, 2 stages x (2 chunks x 2 buckets + optimizer) */
	cr_expect_eq(x, compute + sends + 2 * (4 + 1));
	cr_expect_eq(meta, 2 * 5);
	cJSON_Delete(doc);
	des_result_free(&r);
	schedule_free(s);
}

Test(des, trace_needs_times)
{
	struct pipe_schedule *s = build(SCHED_1F1B, 2, 1, 2);
	struct des_costs k = uniform(SCHED_1F1B);
	struct des_result r;
	struct perr e = { "" };
	run(s, &k, 0, &r);
	cr_expect_null(trace_build(s, &r, &e));
	cr_expect(strlen(e.msg) > 0);
	des_result_free(&r);
	schedule_free(s);
}

Test(des, text_timeline_of_1f1b)
{
	/* p=2 m=3, F=1, B=2, one column per second:
	 *   stage 0: 0 1 . . a a 2 b b . c c   (waits for g0 until 4)
	 *   stage 1: . 0 a a 1 b b 2 c c . .                            */
	struct pipe_schedule *s = build(SCHED_1F1B, 2, 1, 3);
	struct des_costs k = uniform(SCHED_1F1B);
	struct des_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	run(s, &k, DES_TIMES, &r);
	trace_timeline_print(f, s, &r, 200);
	fclose(f);
	cr_expect(strstr(buf, "stage  0 |01..aa2bb.cc|") != NULL, "%s", buf);
	cr_expect(strstr(buf, "stage  1 |.0aa1bb2cc..|") != NULL, "%s", buf);
	free(buf);
	des_result_free(&r);
	schedule_free(s);
}

/* Uneven stages: 6 layers on 2 stages with pp_first = 2, the chunk priced
 * on the 4-layer stage (F = 1, B = 2).  Stage 0's ops take half as long.
 * GPipe, one microbatch, by hand: F0 = 0.5, F1 = 1, B1 = 2, B0 = 1, all
 * in sequence: the span is 4.5; the bubble of stage 0 is (4.5 - 1.5) /
 * 4.5 and of stage 1 (4.5 - 3) / 4.5.  A fixed 0.25 per op (the blocking
 * transfer) is not scaled: each op of both stages gains it. */
Test(des, uneven_stages_scale_their_ops)
{
	struct pipe_schedule *s = build(SCHED_GPIPE, 2, 1, 1);
	struct des_costs k = uniform(SCHED_GPIPE);
	struct des_result r;

	k.split.layers = 6;
	k.split.ref = 4;
	k.split.partition = PART_FIRST_LAST;
	k.split.pp_first = 2;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.pipeline_span_s, 4.5, 1e-12, "span %g", r.pipeline_span_s);
	cr_expect_float_eq(r.stage[0].busy_s, 1.5, 1e-12);
	cr_expect_float_eq(r.stage[1].busy_s, 3.0, 1e-12);
	des_result_free(&r);
	k.op_fixed_s = 0.25;
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.pipeline_span_s, 4.5 + 4 * 0.25, 1e-12, "span %g", r.pipeline_span_s);
	des_result_free(&r);
	schedule_free(s);
}

/* A layout string's chunks each take their own layers, not their
 * stage's mean.  pp 2 x vp 2, two microbatches, forwards only (B = 0),
 * a layer 0.5 s (the reference stage's 4 layers over vp 2 = 1 s a
 * chunk).  Chunks of 1, 3, 3, 1 layers (virtual stages 0-3; ranks of 4
 * each, as 2, 2, 2, 2), by hand in layers: rank 0 runs mb0 and mb1 on
 * v0 in [0,1] and [1,2]; rank 1 on v1 in [1,4] and [4,7]; rank 0 on v2
 * in [4,7] and [7,10]; rank 1 on v3 in [7,8] and [10,11]: 11 layers,
 * 5.5 s.  Chunks of 2: [0,2] [2,4]; [2,4] [4,6]; [4,6] [6,8]; [6,8]
 * [8,10]: 10 layers, 5 s.  Each stage's mean would price both alike. */
Test(des, free_form_chunks_take_their_own_layers)
{
	struct pipe_schedule *s = build(SCHED_INTERLEAVED, 2, 2, 2);
	struct des_costs k = uniform(SCHED_INTERLEAVED);
	struct des_result r;
	int uneven[4] = { 1, 3, 3, 1 }, even[4] = { 2, 2, 2, 2 };

	k.bwd_s = 0;
	k.split.layers = 8;
	k.split.ref = 4;
	k.split.vp = 2;
	k.split.partition = PART_FIRST_LAST;
	k.split.pp_table = pp_table_intern(2, 2, uneven);
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.pipeline_span_s, 5.5, 1e-12, "span %g", r.pipeline_span_s);
	cr_expect_float_eq(r.stage[0].busy_s, 4.0, 1e-12);
	cr_expect_float_eq(r.stage[1].busy_s, 4.0, 1e-12);
	des_result_free(&r);
	k.split.pp_table = pp_table_intern(2, 2, even);
	run(s, &k, 0, &r);
	cr_expect_float_eq(r.pipeline_span_s, 5.0, 1e-12, "span %g", r.pipeline_span_s);
	des_result_free(&r);
	schedule_free(s);
}
