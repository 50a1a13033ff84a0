/*
 * test_schedule.c: the op lists of GPipe, 1F1B, interleaved 1F1B and
 * ZB-H1.  Orders written out by hand from Megatron-LM's schedules.py
 * (warm-up counts, the virtual-microbatch -> (microbatch, chunk) map) and
 * the zero-bubble authors' ZB-H1 schedule; in-flight peaks from the
 * Megatron-LM memory formulas.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "schedule.h"

static struct layout mk(enum schedule k, int pp, int vp)
{
	struct layout l;
	layout_default(&l);
	l.schedule = k;
	l.pp = pp;
	l.vp = vp;
	return l;
}

static struct pipe_schedule *build(enum schedule k, int pp, int vp, long m)
{
	struct layout l = mk(k, pp, vp);
	struct pipe_schedule *s = NULL;
	struct perr e = { "" };
	enum pplan_status st = schedule_build(&l, m, 1000, &s, &e);
	cr_assert_eq(st, PPLAN_OK, "%s", e.msg);
	return s;
}

/* The compute ops of one stage as "F0 B0 ..." ("F2.1" with chunks). */
static void compute_string(const struct pipe_schedule *s, int stage,
			   char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (long i = s->first[stage]; i < s->first[stage + 1]; i++) {
		const struct sched_op *op = &s->ops[i];
		if (!op_is_compute((enum op_kind)op->kind))
			continue;
		if (s->vp > 1)
			n += (size_t)snprintf(buf + n, len - n, "%s%s%d.%d",
					      n ? " " : "",
					      op_kind_name((enum op_kind)op->kind),
					      op->mb, op->chunk);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%s%d",
					      n ? " " : "",
					      op_kind_name((enum op_kind)op->kind),
					      op->mb);
		cr_assert_lt(n, len);
	}
}

struct order_case {
	enum schedule kind;
	int pp, vp, m, stage;
	char want[160];
};

ParameterizedTestParameters(schedule, order)
{
	static struct order_case cases[] = {
		{ SCHED_GPIPE, 2, 1, 3, 0, "F0 F1 F2 B0 B1 B2" },
		{ SCHED_GPIPE, 2, 1, 3, 1, "F0 F1 F2 B0 B1 B2" },
		/* 1F1B: p-s-1 warm-up forwards, then F/B pairs, cool-down */
		{ SCHED_1F1B, 4, 1, 6, 0, "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5" },
		{ SCHED_1F1B, 4, 1, 6, 1, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5" },
		{ SCHED_1F1B, 4, 1, 6, 3, "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5" },
		{ SCHED_1F1B, 4, 1, 2, 0, "F0 F1 B0 B1" }, /* m < p */
		/* interleaved p=2 v=2 m=4: stage 0 warms up 2*(2-0-1)+(2-1)*2
		 * = 4 virtual microbatches, stage 1 2 of them; virtual mb k
		 * is chunk (k%4)/2 (reversed backward), mb (k/4)*2 + k%2 */
		{ SCHED_INTERLEAVED, 2, 2, 4, 0,
		  "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 "
		  "B2.1 B3.1 B2.0 B3.0" },
		{ SCHED_INTERLEAVED, 2, 2, 4, 1,
		  "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 "
		  "F3.1 B3.1 B2.0 B3.0" },
		/* m == p: all forwards first (Megatron's all-warm-up case) */
		{ SCHED_INTERLEAVED, 2, 2, 2, 1,
		  "F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0" },
		/* ZB-H1 p=3 m=4: stage s defers s W passes to the end */
		{ SCHED_ZB_H1, 3, 1, 4, 0, "F0 F1 F2 Bi0 W0 F3 Bi1 W1 Bi2 W2 Bi3 W3" },
		{ SCHED_ZB_H1, 3, 1, 4, 1, "F0 F1 Bi0 F2 Bi1 W0 F3 Bi2 W1 Bi3 W2 W3" },
		{ SCHED_ZB_H1, 3, 1, 4, 2, "F0 Bi0 F1 Bi1 F2 Bi2 W0 F3 Bi3 W1 W2 W3" },
	};
	return cr_make_param_array(struct order_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct order_case *c, schedule, order)
{
	char got[512];
	struct pipe_schedule *s = build(c->kind, c->pp, c->vp, c->m);
	compute_string(s, c->stage, got, sizeof got);
	cr_expect_str_eq(got, c->want, "%s p=%d v=%d m=%d stage %d",
			 schedule_name(c->kind), c->pp, c->vp, c->m, c->stage);
	schedule_free(s);
}

struct count_case {
	enum schedule kind;
	int pp, vp, m;
};

ParameterizedTestParameters(schedule, counts_and_invariants)
{
	static struct count_case cases[] = {
		{ SCHED_GPIPE, 1, 1, 1 },  { SCHED_GPIPE, 4, 1, 8 },
		{ SCHED_1F1B, 1, 1, 5 },   { SCHED_1F1B, 4, 1, 3 },
		{ SCHED_1F1B, 8, 1, 32 },  { SCHED_INTERLEAVED, 2, 2, 2 },
		{ SCHED_INTERLEAVED, 4, 2, 8 }, { SCHED_INTERLEAVED, 4, 3, 12 },
		{ SCHED_INTERLEAVED, 8, 4, 64 }, { SCHED_ZB_H1, 2, 1, 2 },
		{ SCHED_ZB_H1, 4, 1, 2 },  { SCHED_ZB_H1, 6, 1, 24 },
	};
	return cr_make_param_array(struct count_case, cases,
				   sizeof cases / sizeof cases[0]);
}

/* Every (mb, chunk) has one forward and one backward (B and W), a receive
 * unless it is the first (last) virtual stage, a send unless the last
 * (first); schedule_check verifies order and matching sends. */
ParameterizedTest(struct count_case *c, schedule, counts_and_invariants)
{
	struct pipe_schedule *s = build(c->kind, c->pp, c->vp, c->m);
	struct perr e = { "" };
	int split = c->kind == SCHED_ZB_H1, nv = c->pp * c->vp;
	long total = 0;

	cr_assert_eq(schedule_check(s, &e), PPLAN_OK, "%s", e.msg);
	for (int st = 0; st < c->pp; st++) {
		long n[OP_KIND_COUNT] = { 0 };
		long want_recv_act = 0, want_recv_grad = 0;
		for (long i = s->first[st]; i < s->first[st + 1]; i++)
			n[s->ops[i].kind]++;
		for (int j = 0; j < c->vp; j++) {
			int vs = j * c->pp + st;
			want_recv_act += vs > 0 ? c->m : 0;
			want_recv_grad += vs < nv - 1 ? c->m : 0;
		}
		cr_expect_eq(n[OP_FWD], (long)c->vp * c->m);
		cr_expect_eq(n[split ? OP_BWD_INPUT : OP_BWD], (long)c->vp * c->m);
		cr_expect_eq(n[OP_BWD_WEIGHT], split ? (long)c->m : 0);
		cr_expect_eq(n[split ? OP_BWD : OP_BWD_INPUT], 0);
		cr_expect_eq(n[OP_RECV_ACT], want_recv_act);
		cr_expect_eq(n[OP_SEND_GRAD], want_recv_act);
		cr_expect_eq(n[OP_RECV_GRAD], want_recv_grad);
		cr_expect_eq(n[OP_SEND_ACT], want_recv_grad);
		total += s->first[st + 1] - s->first[st];
	}
	cr_expect_eq(total, s->nops);
	schedule_free(s);
}

Test(schedule, comm_ops_sit_around_their_compute_op)
{
	/* 1F1B p=2 m=2, stage 0: warm-up F0; then F1, B0; cool-down B1 */
	static const struct { int kind, mb, peer; } want[] = {
		{ OP_FWD, 0, -1 },       { OP_SEND_ACT, 0, 1 },
		{ OP_FWD, 1, -1 },       { OP_SEND_ACT, 1, 1 },
		{ OP_RECV_GRAD, 0, 1 },  { OP_BWD, 0, -1 },
		{ OP_RECV_GRAD, 1, 1 },  { OP_BWD, 1, -1 },
	};
	struct pipe_schedule *s = build(SCHED_1F1B, 2, 1, 2);
	cr_assert_eq(s->first[1] - s->first[0], 8);
	for (int i = 0; i < 8; i++) {
		const struct sched_op *op = &s->ops[s->first[0] + i];
		cr_expect_eq(op->kind, want[i].kind, "op %d", i);
		cr_expect_eq(op->mb, want[i].mb, "op %d", i);
		cr_expect_eq(op->peer, want[i].peer, "op %d", i);
		cr_expect_eq(op->bytes, op->peer < 0 ? 0 : 1000, "op %d", i);
	}
	schedule_free(s);
}

Test(schedule, interleaved_wraps_from_last_stage_to_first)
{
	/* p=2 v=2: stage 1 chunk 0 (virtual stage 1) sends to stage 0 chunk 1 */
	struct pipe_schedule *s = build(SCHED_INTERLEAVED, 2, 2, 2);
	int seen = 0;
	for (long i = s->first[1]; i < s->first[2]; i++)
		if (s->ops[i].kind == OP_SEND_ACT) {
			cr_expect_eq(s->ops[i].chunk, 0);
			cr_expect_eq(s->ops[i].peer, 0);
			seen++;
		}
	cr_expect_eq(seen, 2);
	cr_expect_eq(schedule_vstage(s, 1, 0), 1);
	cr_expect_eq(schedule_vstage(s, 0, 1), 2);
	schedule_free(s);
}

struct inflight_case {
	enum schedule kind;
	int pp, vp, m, stage;
	long want;    /* (mb, chunk) activations at the peak */
};

ParameterizedTestParameters(schedule, peak_inflight)
{
	static struct inflight_case cases[] = {
		/* 1F1B: stage s holds p - s microbatches */
		{ SCHED_1F1B, 4, 1, 8, 0, 4 }, { SCHED_1F1B, 4, 1, 8, 1, 3 },
		{ SCHED_1F1B, 4, 1, 8, 3, 1 }, { SCHED_1F1B, 8, 1, 64, 2, 6 },
		{ SCHED_1F1B, 4, 1, 2, 0, 2 }, /* capped by m */
		/* GPipe: all m */
		{ SCHED_GPIPE, 4, 1, 8, 0, 8 }, { SCHED_GPIPE, 4, 1, 8, 3, 8 },
		/* interleaved: warm-up 2(p-s-1) + (v-1)p, plus one: stage 0
		 * holds p*v + p - 1 chunk-microbatches = p(1 + (p-1)/(p*v))
		 * full-stage microbatches (Megatron-LM's factor) */
		{ SCHED_INTERLEAVED, 4, 2, 8, 0, 11 },
		{ SCHED_INTERLEAVED, 4, 2, 8, 3, 5 },
		{ SCHED_INTERLEAVED, 8, 4, 64, 0, 39 },
		{ SCHED_INTERLEAVED, 8, 4, 64, 5, 29 },
		{ SCHED_INTERLEAVED, 2, 2, 2, 0, 4 }, /* m == p: all of them */
		/* ZB-H1 counts F done, W not done: p on every stage (stage s
		 * defers s W passes); the paper's memory bound p*M_B of 1F1B
		 * holds because a W-pending microbatch keeps only part */
		{ SCHED_ZB_H1, 4, 1, 8, 0, 4 }, { SCHED_ZB_H1, 4, 1, 8, 3, 4 },
	};
	return cr_make_param_array(struct inflight_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct inflight_case *c, schedule, peak_inflight)
{
	struct pipe_schedule *s = build(c->kind, c->pp, c->vp, c->m);
	cr_expect_eq(schedule_peak_inflight(s, c->stage), c->want,
		     "%s p=%d v=%d m=%d stage %d: got %ld",
		     schedule_name(c->kind), c->pp, c->vp, c->m, c->stage,
		     schedule_peak_inflight(s, c->stage));
	schedule_free(s);
}

Test(schedule, interleaved_stage0_matches_megatron_memory_factor)
{
	for (int p = 2; p <= 16; p *= 2)
		for (int v = 2; v <= 8; v *= 2) {
			struct pipe_schedule *s = build(SCHED_INTERLEAVED, p, v, 4 * p);
			double full = (double)schedule_peak_inflight(s, 0) / v;
			cr_expect_float_eq(full, p * (1.0 + (p - 1.0) / (p * v)),
					   1e-12, "p=%d v=%d", p, v);
			schedule_free(s);
		}
}

struct bad_case {
	enum schedule kind;
	int pp, vp;
	long m;
	char needle[32];
};

ParameterizedTestParameters(schedule, bad_input)
{
	static struct bad_case cases[] = {
		{ SCHED_INTERLEAVED, 4, 1, 8, "vp >= 2" },
		{ SCHED_INTERLEAVED, 4, 2, 6, "multiple of pp=4" },
		{ SCHED_INTERLEAVED, 1, 2, 4, "pp >= 2" },
		{ SCHED_1F1B, 4, 2, 8, "schedule=interleaved" },
		{ SCHED_GPIPE, 4, 2, 8, "schedule=interleaved" },
		{ SCHED_ZB_H1, 4, 2, 8, "schedule=interleaved" },
		{ SCHED_1F1B, 4, 1, 0, "at least one microbatch" },
	};
	return cr_make_param_array(struct bad_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, schedule, bad_input)
{
	struct layout l = mk(c->kind, c->pp, c->vp);
	static struct pipe_schedule dummy;
	struct pipe_schedule *s = &dummy; /* schedule_build must reset it */
	struct perr e = { "" };
	cr_expect_eq(schedule_build(&l, c->m, 0, &s, &e), PPLAN_EINPUT);
	cr_expect_null(s);
	cr_expect(strstr(e.msg, c->needle) != NULL, "message: %s", e.msg);
}

Test(schedule, check_catches_backward_before_forward)
{
	struct pipe_schedule *s = build(SCHED_GPIPE, 1, 1, 2);
	struct perr e = { "" };
	struct sched_op tmp = s->ops[0]; /* F0 F1 B0 B1 -> B0 F1 F0 B1 */
	s->ops[0] = s->ops[2];
	s->ops[2] = tmp;
	cr_expect_eq(schedule_check(s, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "before its forward") != NULL, "%s", e.msg);
	schedule_free(s);
}

Test(schedule, act_bytes)
{
	struct layout l;
	layout_default(&l);
	l.tp = 8;
	l.sp = 1;
	l.cp = 2;
	l.mbs = 2;
	/* 2 * 8192 / 2 / 8 tokens * 16384 * 2 bytes */
	cr_expect_eq(schedule_act_bytes(&l, 16384, 8192, 2), 1024L * 16384 * 2);
	/* Without SP Megatron-LM still sends 1/tp of the activation and
	 * all-gathers it on arrival (pipeline scatter/gather). */
	l.sp = 0;
	cr_expect_eq(schedule_act_bytes(&l, 16384, 8192, 2), 1024L * 16384 * 2);
	l.tp = 1;
	cr_expect_eq(schedule_act_bytes(&l, 16384, 8192, 2), 8192L * 16384 * 2);
}
