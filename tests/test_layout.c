/*
 * test_layout.c: layout strings, their defaults, layout_check's reasons
 * and the one rank map.
 *
 * The syntax and the defaults are docs/commands/predict.md's and
 * layout.h's: degrees 1, mbs 1, sp on when tp > 1, recompute none, zero 1
 * (the distributed optimizer) when there is data parallelism, schedule
 * 1f1b, interleaved when vp > 1.  The checks are Megatron-LM's: tp divides
 * the heads, pp*vp the layers, mbs*dp the global batch, interleaving
 * needs the microbatches to be a multiple of pp, ep divides the experts.
 * The rank map is Megatron-LM's order, tp innermost, then cp, dp, pp:
 *   rank = tp_i + tp*(cp_i + cp*(dp_i + dp*pp_i)).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

/* ---- Parsing and defaults ------------------------------------------------ */

Test(layout_parse, defaults)
{
	struct layout l;
	layout_default(&l);
	cr_assert_eq(l.tp, 1);
	cr_assert_eq(l.pp, 1);
	cr_assert_eq(l.dp, 1);
	cr_assert_eq(l.cp, 1);
	cr_assert_eq(l.ep, 1);
	cr_assert_eq(l.vp, 1);
	cr_assert_eq(l.mbs, 1);
	cr_assert_eq(l.gbs, 0);
	cr_assert_eq(l.sp, 0);
	cr_assert_eq(l.recompute, RECOMPUTE_NONE);
	cr_assert_eq(l.zero, 0);
	cr_assert_eq(l.schedule, SCHED_1F1B);
}

Test(layout_parse, full_syntax)
{
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	enum pplan_status st = layout_parse(
		"tp=8,pp=4,dp=16,cp=2,ep=1,mbs=2,gbs=1024,vp=2,sp=on,"
		"recompute=selective,zero=1,schedule=interleaved",
		&l, &set, &e);
	cr_assert_eq(st, PPLAN_OK, "%s", e.msg);
	cr_assert_eq(l.tp, 8);
	cr_assert_eq(l.pp, 4);
	cr_assert_eq(l.dp, 16);
	cr_assert_eq(l.cp, 2);
	cr_assert_eq(l.ep, 1);
	cr_assert_eq(l.vp, 2);
	cr_assert_eq(l.mbs, 2);
	cr_assert_eq(l.gbs, 1024);
	cr_assert_eq(l.sp, 1);
	cr_assert_eq(l.recompute, RECOMPUTE_SELECTIVE);
	cr_assert_eq(l.zero, 1);
	cr_assert_eq(l.schedule, SCHED_INTERLEAVED);
	cr_assert_eq(set, (unsigned)(LK_TP | LK_PP | LK_DP | LK_CP | LK_EP |
				     LK_VP | LK_MBS | LK_GBS | LK_SP |
				     LK_RECOMPUTE | LK_ZERO | LK_SCHEDULE));
	cr_assert_eq(layout_gpus(&l), 8L * 4 * 16 * 2);
	/* 1024 sequences / (mbs 2 * dp 16) = 32 microbatches per pipeline. */
	cr_assert_eq(layout_microbatches(&l), 32);
}

Test(layout_parse, value_spellings)
{
	struct layout l;
	unsigned set;
	struct perr e = { "" };
	cr_assert_eq(layout_parse("tp=2,sp=off,recompute=full,zero=3,schedule=gpipe",
				  &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(l.sp, 0);
	cr_assert_eq(l.recompute, RECOMPUTE_FULL);
	cr_assert_eq(l.zero, 3);
	cr_assert_eq(l.schedule, SCHED_GPIPE);
	cr_assert_eq(layout_parse("pp=2,schedule=zb-h1,recompute=none,zero=0",
				  &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(l.schedule, SCHED_ZB_H1);
	cr_assert_eq(l.zero, 0);
	cr_assert_eq(l.recompute, RECOMPUTE_NONE);
	cr_assert_eq(layout_parse("pp=2,vp=2,schedule=1f1b", &l, &set, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_assert_eq(l.schedule, SCHED_1F1B);
}

/* Large but countable layouts parse: 8 x 16 x 1024 x 2 = 262,144 GPUs;
 * 2^20 on one degree alone is allowed. */
Test(layout_parse, large_layouts)
{
	struct layout l;
	unsigned set;
	struct perr e = { "" };
	cr_assert_eq(layout_parse("tp=8,pp=16,dp=1024,cp=2", &l, &set, &e), PPLAN_OK,
		     "%s", e.msg);
	cr_assert_eq(layout_gpus(&l), 262144);
	cr_assert_eq(layout_parse("dp=1048576", &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(layout_gpus(&l), 1048576);
	cr_assert_eq(layout_parse("dp=1048577", &l, &set, &e), PPLAN_EINPUT);
}

/* Only the keys given are marked; the others keep the defaults. */
Test(layout_parse, set_bits_and_defaults)
{
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	cr_assert_eq(layout_parse("tp=8", &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(set, (unsigned)LK_TP);
	cr_assert_eq(l.tp, 8);
	cr_assert_eq(l.pp, 1);
	cr_assert_eq(l.dp, 1);
	cr_assert_eq(l.mbs, 1);
	cr_assert_eq(l.gbs, 0);
}

struct complete_case {
	char str[96];
	long gpus;
	int dp, sp, zero;
	enum schedule sched;
};

ParameterizedTestParameters(layout_complete, defaults)
{
	static struct complete_case cases[] = {
		/* dp fills the GPUs: 64 / 8 = 8; sp on (tp > 1); zero 1 (dp > 1). */
		{ "tp=8", 64, 8, 1, 1, SCHED_1F1B },
		/* One node of TP: dp 1, so plain optimizer (zero 0). */
		{ "tp=8", 8, 1, 1, 0, SCHED_1F1B },
		/* tp 1: sp stays off; 32 / 4 = 8 replicas; vp > 1: interleaved. */
		{ "pp=4,vp=2", 32, 8, 0, 1, SCHED_INTERLEAVED },
		/* 512 / (tp 8 * pp 4 * cp 2) = 8. */
		{ "tp=8,pp=4,cp=2", 512, 8, 1, 1, SCHED_1F1B },
		/* Keys given are kept: sp off, zero 0, schedule gpipe. */
		{ "tp=8,sp=off,zero=0,pp=2,schedule=gpipe", 64, 4, 0, 0, SCHED_GPIPE },
		/* dp given explicitly wins over the GPU count. */
		{ "tp=2,dp=2", 64, 2, 1, 1, SCHED_1F1B },
		/* Nothing divides: dp falls back to 1 (layout_check reports it). */
		{ "tp=3", 8, 1, 1, 0, SCHED_1F1B },
	};
	return cr_make_param_array(struct complete_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct complete_case *c, layout_complete, defaults)
{
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	cr_assert_eq(layout_parse(c->str, &l, &set, &e), PPLAN_OK, "%s", e.msg);
	layout_complete(&l, set, c->gpus);
	cr_assert_eq(l.dp, c->dp, "%s on %ld GPUs: dp %d, want %d", c->str,
		     c->gpus, l.dp, c->dp);
	cr_assert_eq(l.sp, c->sp, "%s: sp %d, want %d", c->str, l.sp, c->sp);
	cr_assert_eq(l.zero, c->zero, "%s: zero %d, want %d", c->str, l.zero,
		     c->zero);
	cr_assert_eq(l.schedule, c->sched, "%s: schedule %s, want %s", c->str,
		     schedule_name(l.schedule), schedule_name(c->sched));
}

/* layout_format writes every key; parsing it back gives the same layout. */
Test(layout_parse, format_round_trip)
{
	static const char *const strs[] = {
		"tp=8,pp=4,dp=16,mbs=1,vp=2,sp=on,recompute=selective,zero=1,schedule=interleaved,gbs=512",
		"tp=1,pp=1,dp=64,gbs=64,zero=3,recompute=full",
		"tp=2,pp=8,dp=2,cp=4,ep=2,mbs=4,gbs=256,sp=off,schedule=zb-h1",
		"tp=1,pp=2,dp=32,gbs=64,recompute_layers=3",
		"dp=8,gbs=8,offload_layers=5",
	};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		struct layout a, b;
		unsigned set;
		char buf[256];
		struct perr e = { "" };
		cr_assert_eq(layout_parse(strs[i], &a, &set, &e), PPLAN_OK, "%s", e.msg);
		layout_format(&a, buf, sizeof buf);
		cr_assert_eq(layout_parse(buf, &b, &set, &e), PPLAN_OK,
			     "'%s': %s", buf, e.msg);
		cr_assert_eq(set & 0xfffu, 0xfffu, "'%s' does not name every key", buf);
		cr_assert(memcmp(&a, &b, sizeof a) == 0, "'%s' -> '%s' differs",
			  strs[i], buf);
	}
}

struct bad_case {
	char str[80];
	char needle[48]; /* a word the sentence must contain */
};

ParameterizedTestParameters(layout_parse, errors)
{
	static struct bad_case cases[] = {
		{ "foo=1", "unknown key 'foo'" },
		{ "tp=2,TP=2", "unknown key 'TP'" },
		{ "tp=2,pp=2,tp=2", "'tp' given twice" },
		{ "mbs=1,mbs=2", "'mbs' given twice" },
		{ "tp=0", "tp must be a positive whole number" },
		{ "tp=-8", "tp must be a positive whole number" },
		{ "pp=abc", "pp must be a positive whole number" },
		{ "dp=2.5", "dp must be a positive whole number" },
		{ "mbs=1e3", "mbs must be a positive whole number" },
		{ "vp=", "not key=value" },
		{ "tp", "not key=value" },
		{ "=4", "not key=value" },
		{ "gbs=0", "gbs must be a positive" },
		{ "sp=maybe", "sp must be on or off" },
		{ "recompute=some", "recompute must be none, selective or full" },
		{ "zero=4", "zero must be 0, 1, 2 or 3" },
		{ "zero=-1", "zero must be 0, 1, 2 or 3" },
		{ "zero=12", "zero must be 0, 1, 2 or 3" },
		{ "schedule=pipedream", "schedule must be" },
		{ "tp=1,sp=on", "sp=on needs tp > 1" },
		{ "recompute_layers=0", "recompute_layers must be a positive" },
		{ "offload_layers=-2", "offload_layers must be a positive" },
		{ "recompute_layer=2", "did you mean recompute_layers" },
		{ "sp=on,tp=1", "sp=on needs tp > 1" },
		{ "", "empty" },
		/* Degrees up to 2^20 each, but not a product past INT_MAX GPUs
		 * (2^80 would overflow layout_gpus, 2^32 the int dp * cp). */
		{ "tp=1048576,pp=1048576,dp=1048576,cp=1048576", "is more than" },
		{ "dp=65536,cp=65536", "is more than" },
		{ "tp=1024,pp=1024,dp=2048", "is more than" },
	};
	return cr_make_param_array(struct bad_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, layout_parse, errors)
{
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	enum pplan_status st = layout_parse(c->str, &l, &set, &e);
	cr_assert_eq(st, PPLAN_EINPUT, "'%s' was accepted", c->str);
	cr_assert(strstr(e.msg, c->needle) != NULL,
		  "'%s': message '%s' lacks '%s'", c->str, e.msg, c->needle);
	cr_assert(strchr(e.msg, '\n') == NULL, "one line: '%s'", e.msg);
}

/* ---- layout_check -------------------------------------------------------- */

struct check_case {
	char model[32];
	char str[96];
	long gpus;
	char reason[96]; /* "" = valid */
};

ParameterizedTestParameters(layout_check, reasons)
{
	/* llama3-8b: 32 layers, 32 heads, 8 kv heads, seq 8192.
	 * nemotron4-15b: 48 heads, 8 kv heads.  mixtral-8x7b: 8 experts. */
	static struct check_case cases[] = {
		/* Valid layouts. */
		{ "llama3-8b", "tp=8,dp=1,gbs=8", 8, "" },
		{ "llama3-8b", "tp=2,pp=4,dp=8,vp=2,schedule=interleaved,gbs=64", 64, "" },
		{ "llama3-8b", "tp=16,dp=1,gbs=4", 16, "" }, /* 16 % 8 kv == 0 */
		{ "llama3-8b", "tp=4,cp=2,dp=2,sp=on,zero=1,gbs=16", 16, "" },
		{ "mixtral-8x7b", "tp=1,dp=8,ep=8,gbs=64,zero=1", 8, "" },
		/* 3 * 1 * 1 * 1 = 3 GPUs, not 8. */
		{ "llama3-8b", "tp=3,gbs=8", 8, "degrees do not multiply to the GPU count" },
		{ "llama3-8b", "tp=2,dp=2,gbs=8", 8, "degrees do not multiply to the GPU count" },
		/* 32 heads % 3 = 2. */
		{ "llama3-8b", "tp=3,gbs=8", 3, "tp does not divide heads" },
		{ "gpt3-175b", "tp=64,gbs=8", 64, "tp does not divide heads" }, /* 96 % 64 */
		/* 48 % 6 = 0 heads, but 8 % 6 and 6 % 8 are both nonzero. */
		{ "nemotron4-15b", "tp=6,gbs=8", 6, "tp does not divide kv heads" },
		/* 32 layers % 7 = 4. */
		{ "llama3-8b", "pp=7,gbs=8", 7, "pp does not divide layers" },
		/* 32 / 4 = 8 layers per stage, % 3 = 2. */
		{ "llama3-8b", "pp=4,vp=3,schedule=interleaved,gbs=8", 4,
		  "vp does not divide layers per stage" },
		{ "llama3-8b", "vp=2,schedule=interleaved,gbs=8", 1, "vp needs pp > 1" },
		{ "llama3-8b", "pp=4,vp=2,schedule=1f1b,gbs=8", 4,
		  "vp needs the interleaved schedule" },
		{ "llama3-8b", "pp=4,schedule=interleaved,gbs=8", 4,
		  "interleaved needs vp >= 2" },
		/* gbs 6 / (mbs 1 * dp 1) = 6 microbatches, 6 % pp 4 = 2. */
		{ "llama3-8b", "pp=4,vp=2,schedule=interleaved,gbs=6", 4,
		  "interleaved needs microbatches divisible by pp" },
		/* mbs 2 * dp 8 = 16 does not divide 24. */
		{ "llama3-8b", "dp=8,mbs=2,gbs=24", 8, "mbs*dp does not divide gbs" },
		{ "llama3-8b", "dp=8,mbs=1,gbs=4", 8, "dp does not divide the global batch" },
		{ "llama3-8b", "dp=8", 8, "no global batch" },
		/* 8192 % (2 * 3) = 2: load-balanced ring attention needs 2*cp. */
		{ "llama3-8b", "cp=3,gbs=8", 3, "cp does not divide seq" },
		/* 8 experts % 3 = 2. */
		{ "mixtral-8x7b", "dp=6,ep=3,gbs=6", 6, "ep does not divide experts" },
		/* ep 4 does not divide dp*cp = 2. */
		{ "mixtral-8x7b", "tp=4,dp=2,ep=4,gbs=8", 8, "ep does not divide dp*cp" },
		{ "llama3-8b", "dp=2,ep=2,gbs=8", 2, "ep needs experts" },
		{ "llama3-8b", "tp=8,zero=1,gbs=8", 8, "zero needs dp > 1" },
		/* Block recomputation is a kind of full recomputation; whole-layer
		 * offloading runs only without pipelines and recomputation, for
		 * fewer layers than the model's 32 (Megatron-Core's checks). */
		{ "llama3-8b", "dp=8,gbs=8,recompute_layers=4", 8, "" },
		{ "llama3-8b", "pp=2,dp=4,gbs=8,recompute=full,recompute_layers=4", 8, "" },
		{ "llama3-8b", "dp=8,gbs=8,recompute=selective,recompute_layers=4", 8,
		  "recompute_layers needs recompute=full" },
		{ "llama3-8b", "dp=8,gbs=8,offload_layers=31", 8, "" },
		{ "llama3-8b", "dp=8,gbs=8,offload_layers=32", 8,
		  "offload_layers needs pp=1, no recompute and fewer layers than the model" },
		{ "llama3-8b", "pp=2,dp=4,gbs=8,offload_layers=4", 8,
		  "offload_layers needs pp=1, no recompute and fewer layers than the model" },
		{ "llama3-8b", "dp=8,gbs=8,recompute=full,offload_layers=4", 8,
		  "offload_layers needs pp=1, no recompute and fewer layers than the model" },
		{ "llama3-8b", "dp=8,gbs=8,offload=attn_norm,offload_layers=4", 8,
		  "offload_layers needs pp=1, no recompute and fewer layers than the model" },
		/* sp=on without tp passes the parser (tp not given) but not the check. */
		{ "llama3-8b", "sp=on,dp=8,gbs=8", 8, "sp needs tp > 1" },
	};
	return cr_make_param_array(struct check_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct check_case *c, layout_check, reasons)
{
	const struct model_spec *m = model_find(c->model);
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	enum reject why = REJECT_COUNT;
	enum pplan_status st;

	cr_assert_not_null(m, "%s is not in the zoo", c->model);
	cr_assert_eq(layout_parse(c->str, &l, &set, &e), PPLAN_OK, "%s", e.msg);
	/* Fill only what the string left out, without moving dp. */
	layout_complete(&l, set | LK_DP, c->gpus);
	st = layout_check(&l, m, c->gpus, &why, &e);
	if (!c->reason[0]) {
		cr_assert_eq(st, PPLAN_OK, "%s %s on %ld GPUs: %s", c->model,
			     c->str, c->gpus, e.msg);
		cr_assert_eq(why, REJECT_NONE);
		return;
	}
	cr_assert_eq(st, PPLAN_EINPUT, "%s %s on %ld GPUs was accepted",
		     c->model, c->str, c->gpus);
	cr_assert_neq(why, REJECT_NONE);
	cr_assert_str_eq(reject_key(why), c->reason, "%s %s: reason '%s', want '%s' (%s)",
			 c->model, c->str, reject_key(why), c->reason, e.msg);
	cr_assert(e.msg[0] != '\0' && strchr(e.msg, '\n') == NULL,
		  "one sentence, got '%s'", e.msg);
}

/* The sentence names the numbers that do not divide. */
Test(layout_check, sentences_name_numbers)
{
	const struct model_spec *m = model_find("llama3-8b");
	struct layout l;
	unsigned set;
	struct perr e = { "" };
	enum reject why = REJECT_NONE;

	layout_parse("tp=3,gbs=8", &l, &set, &e);
	cr_assert_eq(layout_check(&l, m, 3, &why, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "tp=3") && strstr(e.msg, "32"), "%s", e.msg);
	layout_parse("pp=7,gbs=8", &l, &set, &e);
	cr_assert_eq(layout_check(&l, m, 7, &why, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "pp=7") && strstr(e.msg, "32"), "%s", e.msg);
	/* reason_id may be NULL. */
	cr_assert_eq(layout_check(&l, m, 7, NULL, &e), PPLAN_EINPUT);
}

/* ---- The rank map -------------------------------------------------------- */

static void permutation(int k, enum dim out[DIM_COUNT])
{
	/* The k-th (0..23) permutation of tp, cp, dp, pp (factorial base). */
	enum dim pool[DIM_COUNT] = { DIM_TP, DIM_CP, DIM_DP, DIM_PP };
	int n = DIM_COUNT;
	for (int i = 0; i < DIM_COUNT; i++) {
		int fact = 1, j;
		for (j = 2; j < n; j++)
			fact *= j;
		j = k / fact;
		k %= fact;
		out[i] = pool[j];
		for (int t = j; t < n - 1; t++)
			pool[t] = pool[t + 1];
		n--;
	}
}

static const char *const dim_names[DIM_COUNT] = { "tp", "cp", "dp", "pp" };

/* Every rank -> coords -> rank, every coords -> rank -> coords, and the
 * strides, for all (tp, pp, dp, cp) <= 4x4x4x2 under all 24 orders given
 * as strings to rank_order_parse. */
Test(rank_map, round_trips_all_orders)
{
	long layouts = 0;
	for (int k = 0; k < 24; k++) {
		enum dim perm[DIM_COUNT];
		char str[32];
		struct rank_order o;
		struct perr e = { "" };

		permutation(k, perm);
		snprintf(str, sizeof str, "%s-%s-%s-%s", dim_names[perm[0]],
			 dim_names[perm[1]], dim_names[perm[2]], dim_names[perm[3]]);
		cr_assert_eq(rank_order_parse(str, &o, &e), PPLAN_OK, "%s: %s", str,
			     e.msg);
		for (int i = 0; i < DIM_COUNT; i++)
			cr_assert_eq(o.inner_to_outer[i], perm[i], "%s", str);

		for (int tp = 1; tp <= 4; tp++)
		for (int pp = 1; pp <= 4; pp++)
		for (int dp = 1; dp <= 4; dp++)
		for (int cp = 1; cp <= 2; cp++) {
			struct layout l;
			long n, stride[DIM_COUNT], expect = 1;
			layout_default(&l);
			l.tp = tp; l.pp = pp; l.dp = dp; l.cp = cp;
			n = layout_gpus(&l);
			layouts++;
			/* Stride of a dimension = product of the sizes inside it. */
			for (int i = 0; i < DIM_COUNT; i++) {
				stride[perm[i]] = layout_dim_stride(&l, &o, perm[i]);
				cr_assert_eq(stride[perm[i]], expect,
					     "%s tp%d pp%d dp%d cp%d: stride of %s %ld, want %ld",
					     str, tp, pp, dp, cp, dim_names[perm[i]],
					     stride[perm[i]], expect);
				expect *= layout_dim_size(&l, perm[i]);
			}
			cr_assert_eq(expect, n);
			for (long r = 0; r < n; r++) {
				struct rank_coords rc, rc2;
				long back = 0;
				layout_rank_coords(&l, &o, r, &rc);
				for (int d = 0; d < DIM_COUNT; d++) {
					cr_assert(rc.c[d] >= 0 &&
						  rc.c[d] < layout_dim_size(&l, (enum dim)d),
						  "%s rank %ld: %s coord %d out of range",
						  str, r, dim_names[d], rc.c[d]);
					back += rc.c[d] * stride[d];
				}
				cr_assert_eq(back, r, "%s: sum of coords x strides", str);
				cr_assert_eq(layout_coords_rank(&l, &o, &rc), r,
					     "%s tp%d pp%d dp%d cp%d: rank %ld does not round-trip",
					     str, tp, pp, dp, cp, r);
				/* Neighbour along each dimension is stride ranks away. */
				for (int d = 0; d < DIM_COUNT; d++) {
					if (rc.c[d] + 1 >= layout_dim_size(&l, (enum dim)d))
						continue;
					rc2 = rc;
					rc2.c[d]++;
					cr_assert_eq(layout_coords_rank(&l, &o, &rc2),
						     r + stride[d]);
				}
			}
		}
	}
	cr_assert_eq(layouts, 24L * 4 * 4 * 4 * 2);
}

/* The default order: tp innermost, ranks 0..tp-1 share the other
 * coordinates; then cp, dp, pp. */
Test(rank_map, default_tp_innermost)
{
	struct rank_order o, parsed;
	struct perr e = { "" };
	struct layout l;

	rank_order_default(&o);
	cr_assert_eq(rank_order_parse("tp-cp-dp-pp", &parsed, &e), PPLAN_OK);
	cr_assert(memcmp(&o, &parsed, sizeof o) == 0);
	for (int tp = 1; tp <= 8; tp *= 2)
	for (int pp = 1; pp <= 4; pp++)
	for (int dp = 1; dp <= 4; dp++) {
		layout_default(&l);
		l.tp = tp; l.pp = pp; l.dp = dp; l.cp = 2;
		cr_assert_eq(layout_dim_stride(&l, &o, DIM_TP), 1);
		cr_assert_eq(layout_dim_stride(&l, &o, DIM_CP), tp);
		cr_assert_eq(layout_dim_stride(&l, &o, DIM_DP), 2L * tp);
		cr_assert_eq(layout_dim_stride(&l, &o, DIM_PP), 2L * tp * dp);
		for (long g = 0; g < layout_gpus(&l) / tp; g++) {
			struct rank_coords first;
			layout_rank_coords(&l, &o, g * tp, &first);
			for (int t = 0; t < tp; t++) {
				struct rank_coords rc;
				layout_rank_coords(&l, &o, g * tp + t, &rc);
				cr_assert_eq(rc.c[DIM_TP], t);
				cr_assert_eq(rc.c[DIM_CP], first.c[DIM_CP]);
				cr_assert_eq(rc.c[DIM_DP], first.c[DIM_DP]);
				cr_assert_eq(rc.c[DIM_PP], first.c[DIM_PP]);
			}
		}
	}
}

struct coord_case {
	int tp, cp, dp, pp;
	char order[16];
	long rank;
	int c[DIM_COUNT]; /* tp, cp, dp, pp */
};

ParameterizedTestParameters(rank_map, by_hand)
{
	static struct coord_case cases[] = {
		/* tp2 dp2 pp2, default order: rank = tp + 2 dp + 4 pp.
		 * 5 = 1 + 0*2 + 1*4. */
		{ 2, 1, 2, 2, "tp-cp-dp-pp", 5, { 1, 0, 0, 1 } },
		/* 6 = 0 + 1*2 + 1*4. */
		{ 2, 1, 2, 2, "tp-cp-dp-pp", 6, { 0, 0, 1, 1 } },
		/* Megatron 3D example: tp8 pp4 dp16 (512 GPUs): rank 300 =
		 * 4 + 8*(5 + 16*2) -> tp 4, dp 5, pp 2. */
		{ 8, 1, 16, 4, "tp-cp-dp-pp", 300, { 4, 0, 5, 2 } },
		/* With cp 2: rank = tp + 8 cp + 16 dp + 64 pp;
		 * 100 = 4 + 8*0 + 16*2 + 64*1. */
		{ 8, 2, 4, 2, "tp-cp-dp-pp", 100, { 4, 0, 2, 1 } },
		/* DeepSpeed-style dp innermost: rank = dp + 4 tp + 8 pp
		 * (cp = 1); 13 = 1 + 4*1 + 8*1. */
		{ 2, 1, 4, 2, "dp-tp-cp-pp", 13, { 1, 0, 1, 1 } },
		/* pp innermost: rank = pp + 4 tp + 8 dp; 27 = 3 + 4*0 + 8*3. */
		{ 2, 1, 4, 4, "pp,tp,cp,dp", 27, { 0, 0, 3, 3 } },
	};
	return cr_make_param_array(struct coord_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct coord_case *c, rank_map, by_hand)
{
	struct layout l;
	struct rank_order o;
	struct rank_coords rc;
	struct perr e = { "" };

	layout_default(&l);
	l.tp = c->tp; l.cp = c->cp; l.dp = c->dp; l.pp = c->pp;
	cr_assert_eq(rank_order_parse(c->order, &o, &e), PPLAN_OK, "%s", e.msg);
	layout_rank_coords(&l, &o, c->rank, &rc);
	for (int d = 0; d < DIM_COUNT; d++)
		cr_assert_eq(rc.c[d], c->c[d], "%s rank %ld: %s %d, want %d",
			     c->order, c->rank, dim_names[d], rc.c[d], c->c[d]);
	for (int d = 0; d < DIM_COUNT; d++)
		rc.c[d] = c->c[d];
	cr_assert_eq(layout_coords_rank(&l, &o, &rc), c->rank);
}

Test(rank_map, order_errors)
{
	static const char *const bad[] = {
		"tp-cp-dp", "tp-tp-dp-pp", "tp-cp-dp-pp-tp", "ep-tp-cp-dp",
		"", "tp cp dp pp", "TP-CP-DP-PP",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct rank_order o;
		struct perr e = { "" };
		cr_assert_eq(rank_order_parse(bad[i], &o, &e), PPLAN_EINPUT,
			     "'%s' was accepted", bad[i]);
		cr_assert(strstr(e.msg, "tp, cp, dp and pp") != NULL, "%s", e.msg);
	}
}

Test(layout_names, round_trip)
{
	for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_FULL; r++) {
		enum recompute x;
		cr_assert_eq(recompute_parse(recompute_name((enum recompute)r), &x), 0);
		cr_assert_eq(x, (enum recompute)r);
	}
	for (int s = SCHED_GPIPE; s <= SCHED_LAST; s++) {
		enum schedule x;
		cr_assert_eq(schedule_parse(schedule_name((enum schedule)s), &x), 0);
		cr_assert_eq(x, (enum schedule)s);
	}
	cr_assert_str_eq(recompute_name(RECOMPUTE_SELECTIVE), "selective");
	cr_assert_str_eq(schedule_name(SCHED_ZB_H1), "zb-h1");
}

/* ---- uneven stages and expert TP ---------------------------------------------- */

/* Llama 3.1 405B's 126 layers on 16 stages, as Megatron runs it:
 * --decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 7
 * leave 112 = 14 x 8 for the middle stages. */
Test(layout_stages, first_and_last_counts)
{
	const struct model_spec *m = model_find("llama3.1-405b");
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	enum reject why = REJECT_COUNT;
	char buf[256];
	int sum = 0;

	cr_assert_not_null(m);
	cr_assert_eq(layout_parse("tp=8,pp=16,dp=1,pp_first=7,pp_last=7,gbs=16", &l, &set, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_expect(set & LK_PP_FIRST && set & LK_PP_LAST);
	cr_expect_eq(layout_check(&l, m, 128, &why, &e), PPLAN_OK, "%s", e.msg);
	for (int i = 0; i < 16; i++) {
		int n = layout_stage_layers(&l, m->layers, PART_FIRST_LAST, i);
		cr_expect_eq(n, i == 0 || i == 15 ? 7 : 8, "stage %d: %d", i, n);
		sum += n;
	}
	cr_expect_eq(sum, 126);
	layout_format(&l, buf, sizeof buf);
	cr_expect(strstr(buf, ",pp_first=7,pp_last=7") != NULL, "%s", buf);
	/* Without them 126 does not split over 16. */
	l.pp_first = l.pp_last = 0;
	cr_expect_eq(layout_check(&l, m, 128, &why, &e), PPLAN_EINPUT);
	cr_expect_eq(why, REJECT_PP_LAYERS);
	/* Only the first: 119 over 15 stages does not split. */
	l.pp_first = 7;
	cr_expect_eq(layout_check(&l, m, 128, &why, &e), PPLAN_EINPUT);
	cr_expect_eq(why, REJECT_STAGE_LAYERS);
	cr_expect(strstr(e.msg, "pp_first=7") && strstr(e.msg, "119"), "%s", e.msg);
	/* 6 + 8 x 15 = 126: the first stage lighter, the rest even. */
	l.pp_first = 6;
	cr_expect_eq(layout_check(&l, m, 128, &why, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(layout_stage_layers(&l, m->layers, PART_FIRST_LAST, 15), 8);
	/* Interleaving needs every stage to split into vp chunks: 6 / 4 does not. */
	l.vp = 4;
	l.schedule = SCHED_INTERLEAVED;
	cr_expect_eq(layout_check(&l, m, 128, &why, &e), PPLAN_EINPUT);
	cr_expect_eq(why, REJECT_VP_LAYERS);
}

/* DeepSpeed's partition_uniform of BLOOM's 70 layers and 2 embeddings on
 * 12 stages: 72 / 12 = 6 units each; the first and last give one to an
 * embedding: 5, 6 x 10, 5.  A Megatron split never does this. */
Test(layout_stages, deepspeed_partition)
{
	struct layout l;
	int sum = 0;
	layout_default(&l);
	l.pp = 12;
	for (int i = 0; i < 12; i++) {
		int n = layout_stage_layers(&l, 70, PART_DEEPSPEED, i);
		cr_expect_eq(n, i == 0 || i == 11 ? 5 : 6, "stage %d: %d", i, n);
		sum += n;
	}
	cr_expect_eq(sum, 70);
	/* 31 layers + 2 on 6 stages: 33 / 6 = 5 r 3: 6-1, 6, 6, 5, 5, 5-1. */
	l.pp = 6;
	cr_expect_eq(layout_stage_layers(&l, 31, PART_DEEPSPEED, 0), 5);
	cr_expect_eq(layout_stage_layers(&l, 31, PART_DEEPSPEED, 2), 6);
	cr_expect_eq(layout_stage_layers(&l, 31, PART_DEEPSPEED, 3), 5);
	cr_expect_eq(layout_stage_layers(&l, 31, PART_DEEPSPEED, 5), 4);
	/* pp dividing the layers splits evenly. */
	cr_expect_eq(layout_stage_layers(&l, 30, PART_DEEPSPEED, 5), 5);
}

/* Expert TP: experts split etp ways, ep x etp ranks of the tp*dp*cp
 * plane.  Mixtral (8 experts, ffn 14336) on tp=4, dp=2: ep=8 with etp=1
 * uses all 8 ranks; with etp = tp = 4 it needs 32. */
Test(layout_stages, expert_tensor_parallel)
{
	const struct model_spec *m = model_find("mixtral-8x7b");
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	enum reject why = REJECT_COUNT;
	cr_assert_not_null(m);
	cr_assert_eq(layout_parse("tp=4,dp=2,ep=8,etp=1,gbs=16", &l, &set, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(layout_etp(&l), 1);
	cr_expect_eq(layout_check(&l, m, 8, &why, &e), PPLAN_OK, "%s", e.msg);
	l.etp = 0;
	cr_expect_eq(layout_etp(&l), 4);
	cr_expect_eq(layout_check(&l, m, 8, &why, &e), PPLAN_EINPUT);
	cr_expect_eq(why, REJECT_EP_DP);
	l.etp = 3; /* 14336 % 3 != 0, and 8 % 3 */
	l.ep = 1;
	cr_expect_eq(layout_check(&l, m, 8, &why, &e), PPLAN_EINPUT);
}

/* Megatron-style uneven splits, by hand: the middle stages ceil(L/pp)
 * rounded up to a multiple of vp, the edges the rest, the last stage the
 * smaller half.
 *   126 on 16, vp 1: mid 8, rest 126 - 14*8 = 14: 7 and 7
 *   126 on 16, vp 2: mid 8, rest 14: last 6 (7 down to a multiple of 2), first 8
 *   126 on 8, vp 9: mid 16 -> 18, rest 126 - 6*18 = 18: 9 and 9
 *   80 on 3, vp 1: mid 27, rest 53: last 26, first 27
 *   61 on 32: mid 2, rest 61 - 60 = 1: an edge would be empty, none. */
Test(layout, split_uneven)
{
	int f, l;
	cr_expect_eq(layout_split_uneven(126, 16, 1, &f, &l), 0);
	cr_expect(f == 7 && l == 7, "%d %d", f, l);
	cr_expect_eq(layout_split_uneven(126, 16, 2, &f, &l), 0);
	cr_expect(f == 8 && l == 6, "%d %d", f, l);
	cr_expect_eq(layout_split_uneven(126, 8, 9, &f, &l), 0);
	cr_expect(f == 9 && l == 9, "%d %d", f, l);
	cr_expect_eq(layout_split_uneven(80, 3, 1, &f, &l), 0);
	cr_expect(f == 27 && l == 26, "%d %d", f, l);
	cr_expect_eq(layout_split_uneven(61, 32, 1, &f, &l), -1);
	cr_expect(f == 0 && l == 0);
	cr_expect_eq(layout_split_uneven(61, 1, 1, &f, &l), -1);
}

/* The embedding and the loss as layers of the split (Megatron's
 * --account-for-embedding/loss-in-pipeline-split), by hand:
 *   Llama 3.1 405B, 126 layers + 2 = 128 units over pp 8 x vp 8 = 64
 *   chunks of 2: chunk 0 the embedding and 1 layer, chunk 63 one layer
 *   and the loss; stage 0 holds chunks 0, 8, ..., 56: 1 + 7 x 2 = 15
 *   layers, stage 7 likewise 15, the others 16.  15 + 6 x 16 + 15 = 126.
 *   Qwen3-235B, 94 + 2 = 96 over pp 8 x vp 4: chunks of 3; stages 0 and 7
 *   hold 11, the others 12.
 *   DeepSeek-V3, 61 + 2 = 63 over pp 4 x vp 4 = 16: no even split. */
Test(layout_stages, embedding_and_loss_in_the_split)
{
	const struct model_spec *m = model_find("llama3.1-405b");
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	enum reject why = REJECT_COUNT;
	char buf[256];
	int sum = 0, first;

	cr_assert_not_null(m);
	cr_assert_eq(layout_parse("tp=8,pp=8,dp=2,vp=8,pp_embed=on,pp_loss=on,gbs=64", &l, &set, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_expect(set & LK_PP_EMBED && set & LK_PP_LOSS);
	layout_complete(&l, set, 128);
	cr_expect_eq(layout_check(&l, m, 128, &why, &e), PPLAN_OK, "%s", e.msg);
	for (int i = 0; i < 8; i++) {
		int n = layout_stage_layers(&l, m->layers, PART_FIRST_LAST, i);
		cr_expect_eq(n, i == 0 || i == 7 ? 15 : 16, "stage %d: %d", i, n);
		sum += n;
	}
	cr_expect_eq(sum, 126);
	cr_expect_eq(layout_edge_chunk(&l, m->layers, 0, &first), 1);
	cr_expect_eq(first, 0);
	cr_expect_eq(layout_edge_chunk(&l, m->layers, 1, &first), 2);
	cr_expect_eq(first, 1, "chunk 1 starts after the embedding's chunk");
	cr_expect_eq(layout_edge_chunk(&l, m->layers, 63, &first), 1);
	cr_expect_eq(first, 125);
	layout_format(&l, buf, sizeof buf);
	cr_expect(strstr(buf, ",pp_embed=on,pp_loss=on") != NULL, "%s", buf);

	l.vp = 4; /* 128 over 32 chunks of 4: stages 15 / 16 again */
	cr_expect_eq(layout_stage_layers(&l, m->layers, PART_FIRST_LAST, 0), 15);
	l.pp_embed = l.pp_loss = 0;
	l.vp = 1;
	{
		struct model_spec q = *m;
		q.layers = 94;
		l.vp = 4;
		l.pp_embed = l.pp_loss = 1;
		for (int i = 0; i < 8; i++)
			cr_expect_eq(layout_stage_layers(&l, 94, PART_FIRST_LAST, i),
				     i == 0 || i == 7 ? 11 : 12, "94 layers, stage %d", i);
		q.layers = 61;
		l.pp = 4;
		l.dp = 4;
		cr_expect_eq(layout_check(&l, &q, 128, &why, &e), PPLAN_EINPUT);
		cr_expect_eq(why, REJECT_EDGE_SPLIT);
		cr_expect(strstr(e.msg, "63 units") != NULL, "%s", e.msg);
		l.pp_first = 16;
		cr_expect_eq(layout_check(&l, &q, 128, &why, &e), PPLAN_EINPUT);
		cr_expect(strstr(e.msg, "do not combine") != NULL, "%s", e.msg);
	}
}

/* --recompute-modules: names both ways, only under recompute=selective. */
Test(layout_parse, recompute_modules)
{
	struct layout l;
	unsigned set = 0, mods = 0;
	struct perr e = { "" };
	char buf[256], bad[80];

	cr_assert_eq(layout_parse("recompute_modules=moe_act+layernorm", &l, &set, &e), PPLAN_OK,
		     "%s", e.msg);
	cr_expect_eq(l.recompute_modules, (unsigned)(RM_MOE_ACT | RM_LAYERNORM));
	cr_expect(set & LK_RECOMPUTE_MODULES);
	l.recompute = RECOMPUTE_SELECTIVE;
	layout_format(&l, buf, sizeof buf);
	cr_expect(strstr(buf, "recompute_modules=layernorm+moe_act") != NULL, "%s", buf);
	cr_expect_eq(layout_recompute_modules(&l), (unsigned)(RM_MOE_ACT | RM_LAYERNORM));
	l.recompute_modules = 0;
	cr_expect_eq(layout_recompute_modules(&l), (unsigned)RM_CORE_ATTN, "selective alone");
	l.recompute = RECOMPUTE_FULL;
	cr_expect_eq(layout_recompute_modules(&l), 0u);
	cr_expect_eq(recompute_modules_parse("core_attn mla_up_proj", &mods, bad, sizeof bad), 0);
	cr_expect_eq(mods, (unsigned)(RM_CORE_ATTN | RM_MLA_UP));
	cr_expect_eq(recompute_modules_parse("moe+attention", &mods, bad, sizeof bad), -1);
	cr_expect_str_eq(bad, "attention");
	cr_expect_eq(layout_parse("recompute_modules=attention", &l, &set, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "moe_act") != NULL, "%s", e.msg);
}

/* Megatron-Core's --pipeline-model-parallel-layout, unrolled and split as
 * pipeline_parallel_layer_layout.py does (commas dropped, "(X)*n" then
 * "x*n" written out, '|' between virtual stages, stage v on rank v mod
 * pp), and the split pplan prices for it. */
Test(pp_layout, counts_by_hand)
{
	struct pp_layout pl;
	char why[400];
	/* DeepSeek-V3's H100 layout: 32 stages over pp 16 (vp 2); rank 0
	 * holds "Et" and the 17th stage "tt" (3 layers), rank 15 the 16th
	 * "tt" and "mL" (2 layers and the MTP layer); 1 + 30 x 2 = 61 */
	cr_assert_eq(layout_pp_layout("Et|(tt|)*30mL", 16, &pl, why, sizeof why), 0, "%s", why);
	cr_expect_eq(pl.vp, 2);
	cr_expect_eq(pl.layers, 61);
	cr_expect_eq(pl.mtp, 1);
	cr_expect_eq(pl.first, 3);
	cr_expect_eq(pl.mid, 4);
	cr_expect_eq(pl.last, 2);
	cr_expect_eq(pl.uneven_chunks, 1);
	/* "t*3", commas, a repeat starting with '|' */
	cr_assert_eq(layout_pp_layout("Et*3|t*4,(|t*4)*6L", 8, &pl, why, sizeof why), 0, "%s", why);
	cr_expect_eq(pl.vp, 1);
	cr_expect_eq(pl.layers, 31);
	cr_expect_eq(pl.first, 3);
	cr_expect_eq(pl.last, 4);
	cr_expect_eq(layout_pp_layout("Et|tt|tL", 2, &pl, why, sizeof why), -1, "3 stages over pp 2");
	cr_expect(strstr(why, "not a multiple of pp=2"), "%s", why);
	cr_expect_eq(layout_pp_layout("tE|ttL", 2, &pl, why, sizeof why), -1);
	cr_expect(strstr(why, "must come first"), "%s", why);
	cr_expect_eq(layout_pp_layout("Et|tx|tL", 3, &pl, why, sizeof why), -1);
	cr_expect(strstr(why, "'x' is not a layer"), "%s", why);
	cr_expect_eq(layout_pp_layout("E(t)*99999999|L", 2, &pl, why, sizeof why), -1, "unrolled past the bound");
	/* ranks 1 and 2 differ: read, only a table of the chunks prices it */
	cr_expect_eq(layout_pp_layout("Ett|t|tt|ttL", 4, &pl, why, sizeof why), 0, "%s", why);
	cr_expect_eq(pl.uneven_chunks, 1);
}

Test(pp_layout, the_split_pplan_prices)
{
	struct layout l;
	struct pp_layout pl;
	char why[400];
	layout_default(&l);
	l.pp = 16;
	/* E and L each take a layer's place: 62 + 2 units, 2 a chunk */
	cr_assert_eq(layout_apply_pp_layout("Et|(tt|)*30tL", 62, &l, &pl, why, sizeof why), 0, "%s", why);
	cr_expect(l.vp == 2 && l.pp_embed && l.pp_loss && !l.pp_first && !l.pp_last);
	/* even: 64 layers, 2 a chunk */
	cr_assert_eq(layout_apply_pp_layout("E(tt|)*31ttL", 64, &l, &pl, why, sizeof why), 0, "%s", why);
	cr_expect(l.vp == 2 && !l.pp_embed && !l.pp_loss && !l.pp_first && !l.pp_last);
	/* uneven edges: 2 + 6 x 5 + 3 over pp 8 */
	l.pp = 8;
	cr_assert_eq(layout_apply_pp_layout("Ett|(ttttt|)*6tttL", 35, &l, &pl, why, sizeof why), 0, "%s", why);
	cr_expect(l.vp == 1 && l.pp_first == 2 && l.pp_last == 3 && !l.pp_embed);
	/* DeepSeek-V3's: its MTP layer counted as a layer, 61 + 1 + 2 = 64
	 * units over 32 chunks, 2 a chunk: "Et" (E takes a place), 30 x "tt",
	 * "mL" (L takes a place) */
	l.pp = 16;
	cr_assert_eq(layout_apply_pp_layout("Et|(tt|)*30mL", 61, &l, &pl, why, sizeof why), 0, "%s", why);
	cr_expect(l.vp == 2 && l.pp_embed && l.pp_loss && !l.pp_first && !l.pp_last);
	cr_expect_eq(pl.mtp_as_layers, 1);
	cr_expect_eq(pl.mtp, 1);
	/* the MTP layer on the first stage instead: rank 0's chunks hold 2
	 * units (m, t) and 2 (tt), rank 15's 2 and 1: no even, edge or
	 * first/last split gives it, a table of the chunks does, the MTP
	 * layer counted as a layer of its chunk */
	l = (struct layout){ 0 };
	layout_default(&l);
	l.pp = 16;
	cr_assert_eq(layout_apply_pp_layout("Emt|(tt|)*30L", 61, &l, &pl, why, sizeof why), 0, "%s", why);
	cr_assert(l.pp_table);
	cr_expect(l.vp == 2 && !l.pp_embed && !l.pp_loss && !l.pp_first && !l.pp_last);
	cr_expect_eq(pl.mtp_as_layers, 1);
	cr_expect_eq(l.pp_table->chunk[0], 2);
	cr_expect_eq(l.pp_table->chunk[1], 2);
	cr_expect_eq(l.pp_table->chunk[31], 0, "the loss alone");
	cr_expect_eq(layout_stage_layers(&l, 62, PART_FIRST_LAST, 0), 4);
	cr_expect_eq(layout_stage_layers(&l, 62, PART_FIRST_LAST, 15), 2);
	cr_expect_eq(layout_stage_layers(&l, 62, PART_FIRST_LAST, 7), 4);
	layout_default(&l);
	l.pp = 16;
	cr_expect_eq(layout_apply_pp_layout("Et|(tt|)*30tL", 61, &l, &pl, why, sizeof why), -1);
	cr_expect(strstr(why, "places 62 transformer layers, the model has 61"), "%s", why);
}

/* The balanced split NVIDIA's recipes write where nothing even exists,
 * worked by hand for Kimi K2's 61 layers over pp 4 x vp 4: 63 units (the
 * embedding and the loss one each) over 16 chunks is 3 each and 15 left;
 * they go to ranks 1, 2, 3, 0, 1, ... chunk 0 first, so every chunk has 4
 * units but rank 0's last (v = 12); less the embedding in v = 0 and the
 * loss in v = 15: 3, 4 x 11, 3, 4, 4, 3 layers; ranks 14, 16, 16, 15. */
Test(pp_layout, balanced_by_hand)
{
	const struct pp_table *t = pp_table_balanced(61, 4, 4);
	static const int want[16] = { 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 4, 4, 3 };
	struct layout l;
	struct pp_layout pl;
	char why[400];

	cr_assert(t);
	cr_expect_eq(t->pp, 4);
	cr_expect_eq(t->vp, 4);
	cr_expect_eq(t->layers, 61);
	for (int v = 0; v < 16; v++)
		cr_expect_eq(t->chunk[v], want[v], "chunk %d: %d", v, t->chunk[v]);
	layout_default(&l);
	l.pp = 4;
	l.vp = 4;
	l.pp_table = t;
	cr_expect_eq(layout_stage_layers(&l, 61, PART_FIRST_LAST, 0), 14);
	cr_expect_eq(layout_stage_layers(&l, 61, PART_FIRST_LAST, 1), 16);
	cr_expect_eq(layout_stage_layers(&l, 61, PART_FIRST_LAST, 2), 16);
	cr_expect_eq(layout_stage_layers(&l, 61, PART_FIRST_LAST, 3), 15);
	cr_expect_eq(layout_stage_layers(&l, 60, PART_FIRST_LAST, 3), 0, "not this model's split");
	/* its string reads back to the same chunks: the same interned table */
	layout_default(&l);
	l.pp = 4;
	cr_assert_eq(layout_apply_pp_layout(t->text, 61, &l, &pl, why, sizeof why), 0, "%s: %s", t->text, why);
	cr_expect_eq(l.pp_table, t, "%s", t->text);
	cr_expect_eq(l.vp, 4);
	/* where an even, edge or first/last split exists the string gives
	 * that instead (priced the same, the framework's own flags) */
	layout_default(&l);
	l.pp = 8;
	cr_assert_eq(layout_apply_pp_layout(pp_table_balanced(126, 8, 8)->text, 126, &l, &pl, why, sizeof why), 0,
		     "%s", why);
	cr_expect(!l.pp_table && l.pp_embed && l.pp_loss, "128 units over 64 chunks");
	/* nothing to balance: more chunks than units leave a rank empty */
	cr_expect_null(pp_table_balanced(5, 4, 4));
	cr_expect_null(pp_table_balanced(61, 1, 1));
	/* the string as Megatron writes such layouts: runs folded */
	{
		static const int c[6] = { 1, 2, 2, 2, 2, 0 };
		char buf[64];
		cr_assert_eq(pp_table_format(3, 2, c, buf, sizeof buf), 0);
		cr_expect_str_eq(buf, "Et(|tt)*4|L");
		cr_expect_eq(pp_table_format(3, 2, c, buf, 8), -1, "too short a buffer");
	}
}
