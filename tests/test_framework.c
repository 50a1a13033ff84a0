/*
 * test_framework.c: the frameworks table as data.
 *
 * Lookups by version and by year, versions as users write them (patch
 * releases, release candidates, containers, newer and older than every
 * row, each with its note), the errors for unknown names and versions,
 * the precision-dependent facts (Megatron reduces fp32 main
 * gradients in bf16 runs and fp16 gradients in fp16 runs: 4 and 2 bytes),
 * switches a framework lacks, what a framework cannot run, and two
 * consequences in the cost model checked against hand arithmetic: the
 * gradient dtype is the same on the wire and in memory, and TP overlap
 * hides communication (pipelined both ways, bulk only backward).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cost.h"
#include "framework.h"
#include "memory.h"

static const struct framework *find(const char *name, const char *version, int year)
{
	const struct framework *fw = NULL;
	struct perr e = { "" };
	cr_assert_eq(framework_find(name, version, year, &fw, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_not_null(fw);
	return fw;
}

Test(framework, lookups_by_version_and_year)
{
	const struct framework *a = find("megatron-lm", NULL, 2021);
	const struct framework *b = find("megatron-lm", "v2.5", 0);
	const struct framework *c = find("megatron-core", NULL, 0);
	const struct framework *d = find("megatron-core", "0.8", 0);
	const struct framework *o = find("other", NULL, 2024);

	cr_assert_eq(a, b, "year 2021 and version 2.5 are one row");
	cr_assert_eq(a->attention, FW_ATTN_UNFUSED);
	cr_assert_eq(c, framework_default(), "no version: the newest row");
	cr_assert_eq(c->partition, PART_FIRST_LAST);
	cr_assert_eq(d->partition, PART_EVEN, "0.8 predates the first/last stage flags");
	cr_assert_eq(o->attention, FW_ATTN_FLASH);
	/* A year outside every row: the nearest (megatron-lm 2019 is the
	 * 2021 row, 2031 the newest). */
	cr_assert_eq(find("megatron-lm", NULL, 2018), a);
	cr_assert_eq(find("other", NULL, 2031), find("other", NULL, 0));
	/* Names are case-insensitive. */
	cr_assert_eq(find("Megatron-Core", "0.8", 0), d);
}

Test(framework, unknown_names_and_versions_say_what_is_known)
{
	const struct framework *fw = NULL;
	struct perr e = { "" };
	cr_assert_eq(framework_find("megatron-xl", NULL, 0, &fw, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "megatron-xl") && strstr(e.msg, "torchtitan"), "%s", e.msg);
	/* framework_find takes only what a row lists ... */
	cr_assert_eq(framework_find("megatron-core", "0.99", 0, &fw, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "0.99") && strstr(e.msg, "0.8"), "%s", e.msg);
	/* ... framework_parse prices 0.99 as the newest row */
	cr_assert_eq(framework_parse("megatron-core:0.99", &fw, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(fw, framework_default());
	cr_assert_eq(framework_parse("nemo:", &fw, &e), PPLAN_EINPUT);
	cr_assert_eq(framework_parse("nemo:24.07", &fw, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_str_eq(fw->name, "nemo");
	cr_assert(!framework_known("megatron-xl"));
}

/* framework_lookup's row (by label) and note for one version. */
struct lookup_case {
	const char *name, *version, *label, *note; /* note: a part of it; "" = none */
};

static void check_lookup(const struct lookup_case *c)
{
	const struct framework *fw = NULL;
	struct perr e = { "" };
	char note[256];
	cr_assert_eq(framework_lookup(c->name, c->version, 0, &fw, note, sizeof note, &e),
		     PPLAN_OK, "%s:%s: %s", c->name, c->version, e.msg);
	cr_assert_str_eq(fw->label, c->label, "%s:%s", c->name, c->version);
	if (!c->note[0])
		cr_assert_str_eq(note, "", "%s:%s noted '%s'", c->name, c->version, note);
	else
		cr_assert(strstr(note, c->note), "%s:%s: want '%s' in '%s'", c->name,
			  c->version, c->note, note);
	cr_assert(!strchr(note, '\n'));
}

Test(framework, versions_as_users_write_them)
{
	static const struct lookup_case cases[] = {
		/* listed: no note, a leading v allowed */
		{ "megatron-core", "0.14", "Megatron-Core 0.10-0.19", "" },
		{ "megatron-core", "v0.19", "Megatron-Core 0.10-0.19", "" },
		{ "nemo", "24.07", "NeMo 1.x (23.05-24.07)", "" },
		/* patch releases, release candidates and suffixes: read as */
		{ "megatron-core", "0.14.1", "Megatron-Core 0.10-0.19", "Megatron-Core 0.14.1 read as 0.14" },
		{ "megatron-core", "0.13.0rc1", "Megatron-Core 0.10-0.19", "Megatron-Core 0.13.0rc1 read as 0.13" },
		{ "megatron-core", "0.9.1", "Megatron-Core 0.4-0.9", "read as 0.9" },
		{ "nemo", "25.04.rc2", "NeMo 2.0 (24.09-25.07)", "NeMo 25.04.rc2 read as 25.04" },
		{ "nemo", "26.04-py3", "NeMo on Megatron-Bridge (25.09-26.04)", "NeMo 26.04-py3 read as 26.04" },
		{ "megatron-bridge", "0.2.0.dev0", "Megatron-Bridge 0.1-0.6", "Megatron-Bridge 0.2.0.dev0 read as 0.2" },
		{ "megatron-bridge", "v0.6.1", "Megatron-Bridge 0.1-0.6", "read as 0.6" },
		{ "megatron-lm", "3.0.1", "Megatron-LM 2022 (v3)", "" },
		/* NeMo containers from 25.09 run Megatron-Bridge */
		{ "nemo", "25.09", "NeMo on Megatron-Bridge (25.09-26.04)", "" },
		{ "nemo", "25.11", "NeMo on Megatron-Bridge (25.09-26.04)", "" },
		/* newer than every row: the newest, said */
		{ "megatron-core", "0.21", "Megatron-Core 0.10-0.19",
		  "Megatron-Core 0.21 is newer than any row pplan knows: priced as 0.19 (Megatron-Core 0.10-0.19)" },
		{ "megatron-core", "1.0", "Megatron-Core 0.10-0.19", "newer than any row" },
		{ "nemo", "26.08", "NeMo on Megatron-Bridge (25.09-26.04)", "priced as 26.04" },
		{ "megatron-bridge", "0.7", "Megatron-Bridge 0.1-0.6", "priced as 0.6" },
		/* between listed ones: the nearest earlier, said */
		{ "megatron-lm", "2.7", "Megatron-LM 2021 (v2)", "between the versions pplan knows: priced as 2.6" },
		{ "nemo", "24.08", "NeMo 1.x (23.05-24.07)", "priced as 24.07, the nearest earlier" },
		{ "nemo", "25.08", "NeMo 2.0 (24.09-25.07)", "priced as 25.07" },
		/* older than every row: the oldest, said */
		{ "megatron-core", "0.3", "Megatron-Core 0.4-0.9",
		  "Megatron-Core 0.3 is older than any row pplan knows: priced as 0.4 (Megatron-Core 0.4-0.9)" },
		{ "megatron-lm", "0.9", "Megatron-LM 2021 (v2)", "older than any row pplan knows: priced as 1.0" },
		/* Megatron-Bridge's NeMo containers: the release each ships */
		{ "megatron-bridge", "25.09", "Megatron-Bridge 0.1-0.6",
		  "Megatron-Bridge 25.09 is the NeMo 25.09 container: priced as 0.1" },
		{ "megatron-bridge", "25.11", "Megatron-Bridge 0.1-0.6",
		  "Megatron-Bridge 25.11 is the NeMo 25.11 container: priced as 0.2" },
		{ "megatron-bridge", "26.02", "Megatron-Bridge 0.1-0.6", "priced as 0.3" },
		{ "megatron-bridge", "26.04", "Megatron-Bridge 0.1-0.6", "priced as 0.4" },
		{ "megatron-bridge", "25.09.01", "Megatron-Bridge 0.1-0.6",
		  "read as the NeMo 25.09 container's 0.1" },
		{ "megatron-bridge", "26.06", "Megatron-Bridge 0.1-0.6",
		  "between the NeMo containers pplan knows: priced as the NeMo 26.04 container's 0.4" },
		{ "megatron-bridge", "27.01", "Megatron-Bridge 0.1-0.6",
		  "newer than any NeMo container pplan knows" },
		/* Megatron-LM's release tags name the Megatron-Core they ship */
		{ "megatron-lm", "core_r0.13.0", "Megatron-Core 0.10-0.19",
		  "megatron-lm core_r0.13.0 is Megatron-Core 0.13.0; Megatron-Core 0.13.0 read as 0.13" },
		{ "megatron-lm", "core_v0.8.0", "Megatron-Core 0.4-0.9", "is Megatron-Core 0.8.0" },
		/* a framework that lists no versions: its newest row, said */
		{ "megatron-deepspeed", "1.0", "Megatron-DeepSpeed", "lists no versions" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_lookup(&cases[i]);
}

/* Framework names as papers and tables write them. */
Test(framework, names_as_written)
{
	static const struct { const char *s, *want; } cases[] = {
		{ "nemo", "nemo" }, { "NeMo Framework", "nemo" }, { "NVIDIA NeMo", "nemo" },
		{ "Megatron Bridge", "megatron-bridge" }, { "Megatron-Core", "megatron-core" },
		{ "MCore", "megatron-core" }, { "Megatron-LM", "megatron-lm" },
		{ "LLM Foundry", "composer" }, { "GPT-NeoX", "gpt-neox" }, { "TorchTitan", "torchtitan" },
		{ "HAI-LLM", NULL }, { "", NULL },
	};
	const struct framework *f = NULL;
	struct perr e = { "" };

	/* --framework reads them too */
	cr_assert_eq(framework_parse("mcore:0.14", &f, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(f->label, "Megatron-Core 0.10-0.19");
	cr_assert_eq(framework_parse("NeMo Framework:25.04", &f, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(f->label, "NeMo 2.0 (24.09-25.07)");
	cr_expect_eq(framework_parse("hai-llm", &f, &e), PPLAN_EINPUT);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = framework_canonical(cases[i].s);
		if (!cases[i].want)
			cr_expect_null(got, "'%s' read as %s", cases[i].s, got ? got : "");
		else
			cr_expect(got && !strcmp(got, cases[i].want), "'%s' read as %s, want %s",
				  cases[i].s, got ? got : "(none)", cases[i].want);
	}
}

Test(framework, versions_compare_as_numbers)
{
	/* 0.10 is after 0.9, not before it as a string would be */
	static const struct lookup_case cases[] = {
		{ "megatron-core", "0.9.5", "Megatron-Core 0.4-0.9", "read as 0.9" },
		{ "megatron-core", "0.10.0", "Megatron-Core 0.10-0.19", "read as 0.10" },
		{ "megatron-core", "0.1", "Megatron-Core 0.4-0.9", "older than any row" },
		{ "megatron-core", "0.100", "Megatron-Core 0.10-0.19", "newer than any row pplan knows: priced as 0.19" },
		{ "megatron-core", "0.19.2", "Megatron-Core 0.10-0.19", "read as 0.19" },
		/* 2 is 2.0, 25.4 is 25.04 */
		{ "megatron-lm", "2", "Megatron-LM 2021 (v2)", "read as 2.0" },
		{ "nemo", "25.4", "NeMo 2.0 (24.09-25.07)", "read as 25.04" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_lookup(&cases[i]);
}

Test(framework, every_container_release_is_listed)
{
	/* each container's release is a row's version, so it is read exactly */
	static const char *const bridge[] = { "25.09", "25.11", "26.02", "26.04", "26.08" };
	for (size_t i = 0; i < sizeof bridge / sizeof bridge[0]; i++)
		check_lookup(&(struct lookup_case){ "megatron-bridge", bridge[i],
						    "Megatron-Bridge 0.1-0.6", "is the NeMo" });
}

Test(framework, what_is_not_a_version_is_refused)
{
	static const char *const bad[] = { "banana", "", "v", ".14", "0.14 1", "0.14/2", "x0.14" };
	const struct framework *fw = NULL;
	struct perr e = { "" };
	char note[256];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(framework_lookup("megatron-core", bad[i], 0, &fw, note, sizeof note, &e),
			     PPLAN_EINPUT, "'%s'", bad[i]);
		cr_assert_null(fw);
		cr_assert(strstr(e.msg, "megatron-core") && strstr(e.msg, "0.19") &&
			  strstr(e.msg, "not a version number"), "%s", e.msg);
		cr_assert(!strstr(e.msg, ". ") && !strchr(e.msg, '\n'), "one sentence: %s", e.msg);
	}
	/* the bridge's refusal lists its containers too */
	cr_assert_eq(framework_lookup("megatron-bridge", "banana", 0, &fw, note, sizeof note, &e),
		     PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "0.6") && strstr(e.msg, "25.11"), "%s", e.msg);
	/* an unknown name stays unknown, with or without a version */
	cr_assert_eq(framework_lookup("megatron-xl", "0.1", 0, &fw, note, sizeof note, &e),
		     PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "unknown framework 'megatron-xl'"), "%s", e.msg);
	/* no version: by year, no note */
	cr_assert_eq(framework_lookup("nemo", NULL, 2024, &fw, note, sizeof note, &e), PPLAN_OK);
	cr_assert_str_eq(fw->label, "NeMo 1.x (23.05-24.07)");
	cr_assert_str_eq(note, "");
	/* framework_parse_note: the same, through "NAME:VERSION" */
	cr_assert_eq(framework_parse_note("megatron-core:banana", &fw, note, sizeof note, &e),
		     PPLAN_EINPUT);
	cr_assert_eq(framework_parse_note("megatron-core:0.21", &fw, note, sizeof note, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_assert(strstr(note, "newer than any row"), "%s", note);
	cr_assert_eq(framework_parse_note("nemo", &fw, note, sizeof note, &e), PPLAN_OK);
	cr_assert_str_eq(note, "");
}

Test(framework, nemo_on_megatron_bridge_is_the_bridge)
{
	/* NeMo's 25.09+ containers train through Megatron-Bridge: one behaviour */
	const struct framework *n = find("nemo", "25.11", 0);
	const struct framework *b = find("megatron-bridge", "0.2", 0);
	const struct framework *old = find("nemo", "25.07", 0);
	struct fw_behaviour bn, bb;
	memset(&bn, 0, sizeof bn); /* padding too: compared whole */
	memset(&bb, 0, sizeof bb);
	framework_resolve(n, PREC_BF16, NULL, &bn, NULL);
	framework_resolve(b, PREC_BF16, NULL, &bb, NULL);
	cr_assert_eq(memcmp(&bn, &bb, sizeof bn), 0);
	cr_assert_eq(n->max_zero, b->max_zero);
	cr_assert_eq(n->max_zero, 3, "Megatron FSDP");
	cr_assert_eq(old->max_zero, 1, "NeMo 2.0: the distributed optimizer");
	/* a year: 2025 is NeMo 2.0's, 2026 on the bridge's */
	cr_assert_eq(find("nemo", NULL, 2025), old);
	cr_assert_eq(find("nemo", NULL, 2026), n);
	cr_assert_eq(find("nemo", NULL, 0), n);
}

Test(framework, gradient_dtype_by_precision)
{
	struct fw_behaviour b;
	const struct framework *core = find("megatron-core", NULL, 0);
	const struct framework *ds = find("megatron-deepspeed", NULL, 2022);
	cr_assert_eq(framework_resolve(core, PREC_BF16, NULL, &b, NULL), PPLAN_OK);
	cr_assert_eq(b.grad_bytes, 4);
	framework_resolve(core, PREC_FP16, NULL, &b, NULL);
	cr_assert_eq(b.grad_bytes, 2);
	/* DeepSpeed's bf16 optimizer: fp32 accumulation plus the bf16 .grad. */
	framework_resolve(ds, PREC_BF16, NULL, &b, NULL);
	cr_assert_eq(b.grad_bytes, 4);
	cr_assert(b.half_grad_copy);
	framework_resolve(ds, PREC_FP16, NULL, &b, NULL);
	cr_assert_eq(b.grad_bytes, 2);
	cr_assert(!b.half_grad_copy);
	cr_assert_eq(b.pipe, FW_PIPE_DEEPSPEED);
}

Test(framework, switches)
{
	struct fw_behaviour b;
	struct fw_switches s;
	struct perr e = { "" };
	const struct framework *old = find("megatron-lm", NULL, 2021);
	const struct framework *core = find("megatron-core", NULL, 0);

	fw_switches_none(&s);
	s.tp_overlap = FW_TPO_PIPELINED;
	cr_assert_eq(framework_resolve(old, PREC_FP16, &s, &b, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "TP communication overlap"), "%s", e.msg);
	s.tp_overlap = FW_TPO_NONE; /* switching off is always possible */
	cr_assert_eq(framework_resolve(old, PREC_FP16, &s, &b, &e), PPLAN_OK);

	fw_switches_none(&s);
	cr_assert_eq(framework_resolve(core, PREC_BF16, &s, &b, &e), PPLAN_OK);
	cr_assert_eq(b.tp_overlap, FW_TPO_PIPELINED, "a framework fact for every precision");
	s.flash = 0;
	s.grad_bytes = 2;
	s.tp_overlap = FW_TPO_BULK;
	cr_assert_eq(framework_resolve(core, PREC_BF16, &s, &b, &e), PPLAN_OK);
	cr_assert_eq(b.attention, FW_ATTN_UNFUSED);
	cr_assert_eq(b.grad_bytes, 2);
	cr_assert_eq(b.tp_overlap, FW_TPO_BULK);
}

/* A split of any shape is a --pipeline-model-parallel-layout string:
 * Megatron-Core 0.13 on and Megatron-Bridge take one, NeMo 2.0's
 * recipes (on older Megatron-Core) and the other frameworks do not. */
Test(framework, a_pipeline_layout_string_where_the_framework_takes_one)
{
	struct layout l;
	layout_default(&l);
	l.pp = 4;
	l.vp = 4;
	l.dp = 2;
	l.schedule = SCHED_INTERLEAVED;
	l.pp_table = pp_table_balanced(61, 4, 4);
	cr_assert(l.pp_table);
	cr_expect_eq(framework_check_layout(find("megatron-core", "0.14", 0), PREC_BF16, &l), REJECT_NONE);
	cr_expect_eq(framework_check_layout(find("megatron-bridge", "0.2", 0), PREC_BF16, &l), REJECT_NONE);
	cr_expect_eq(framework_check_layout(find("nemo", "25.11", 0), PREC_BF16, &l), REJECT_NONE);
	cr_expect_eq(framework_check_layout(find("nemo", "25.04", 0), PREC_BF16, &l), REJECT_FW_PP_LAYOUT);
	cr_expect_eq(framework_check_layout(find("megatron-core", "0.8", 0), PREC_BF16, &l), REJECT_FW_PP_LAYOUT);
	l.pp_table = NULL;
	cr_expect_eq(framework_check_layout(find("nemo", "25.04", 0), PREC_BF16, &l), REJECT_NONE);
}

Test(framework, what_a_framework_cannot_run)
{
	struct layout l;
	layout_default(&l);
	l.pp = 4;
	l.dp = 2;
	l.schedule = SCHED_ZB_H1;
	cr_assert_eq(framework_check_layout(find("megatron-core", NULL, 0), PREC_BF16, &l),
		     REJECT_FW_SCHEDULE);
	/* torchtitan's zero-bubble schedules need two stages per rank (not
	 * ZB-H1's one), and its DDP (zero 0) runs only on its own: "DDP has
	 * not supported > 1D parallelism" */
	l.zero = 0;
	cr_assert_eq(framework_check_layout(find("torchtitan", NULL, 0), PREC_BF16, &l),
		     REJECT_FW_ZERO, "DDP with a pipeline");
	l.zero = 3;
	cr_assert_eq(framework_check_layout(find("torchtitan", NULL, 0), PREC_BF16, &l),
		     REJECT_FW_SCHEDULE, "ZB-H1");
	{
		struct layout ddp;
		layout_default(&ddp);
		ddp.dp = 8;
		ddp.zero = 0;
		cr_assert_eq(framework_check_layout(find("torchtitan", NULL, 0), PREC_BF16, &ddp),
			     REJECT_NONE, "DDP alone");
	}
	l.zero = 0;
	l.schedule = SCHED_1F1B;
	cr_assert_eq(framework_check_layout(find("metaseq", NULL, 2022), PREC_FP16, &l),
		     REJECT_FW_PIPELINE);
	cr_assert_eq(framework_check_layout(find("megatron-lm", NULL, 2021), PREC_FP8, &l),
		     REJECT_FW_PRECISION);
	l.zero = 3; /* FSDP combines with pipelines; Megatron's and DeepSpeed's ZeRO-3 do not */
	cr_assert_eq(framework_check_layout(find("torchtitan", NULL, 0), PREC_BF16, &l),
		     REJECT_NONE);
	cr_assert_eq(framework_check_layout(find("megatron-core", NULL, 0), PREC_BF16, &l),
		     REJECT_ZERO_PP);
	l.zero = 1;
	l.cp = 2;
	cr_assert_eq(framework_check_layout(find("megatron-lm", NULL, 2022), PREC_BF16, &l),
		     REJECT_FW_CP);
	/* PyTorch FSDP has no optimizer-only sharding: zero 1 is Megatron's
	 * distributed optimizer or DeepSpeed's stage 1, not FSDP's. */
	cr_assert_eq(framework_check_layout(find("torchtitan", NULL, 0), PREC_BF16, &l),
		     REJECT_FW_ZERO);
	l.pp = 1;
	l.cp = 1; /* composer has no CP */
	cr_assert_eq(framework_check_layout(find("composer", NULL, 0), PREC_BF16, &l),
		     REJECT_FW_ZERO);
	cr_assert_eq(framework_check_layout(find("megatron-core", NULL, 0), PREC_BF16, &l),
		     REJECT_NONE);
	l.zero = 2;
	cr_assert_eq(framework_check_layout(find("torchtitan", NULL, 0), PREC_BF16, &l),
		     REJECT_NONE);
}

/* Llama 2 70B, tp 8, dp 8, plain DP (zero 0): every GPU all-reduces its
 * 70B/8 parameters' gradients over 8 ranks, in the network.  With 2-byte
 * instead of 4-byte gradients both the gradient memory and the bus bytes
 * halve; the time halves up to the 14 latency steps (2(n-1) x 6 us). */
Test(framework, gradient_bytes_on_the_wire_and_in_memory)
{
	const struct model_spec *m = model_find("llama2-70b");
	struct cluster c;
	struct layout l;
	struct train_opts o;
	struct prediction p4, p2;
	struct perr e = { "" };

	cr_assert_eq(cluster_preset("dgx-h100", 64, &c, &e), PPLAN_OK, "%s", e.msg);
	layout_default(&l);
	l.tp = 8;
	l.dp = 8;
	l.sp = 1;
	l.gbs = 64;
	train_opts_default(&o, m);
	o.use_des = 0;
	cr_assert_eq(cost_predict(m, &c, &l, &o, &p4, &e), PPLAN_OK, "%s", e.msg);
	o.switches.grad_bytes = 2;
	cr_assert_eq(train_opts_resolve(&o, &e), PPLAN_OK);
	cr_assert_eq(cost_predict(m, &c, &l, &o, &p2, &e), PPLAN_OK, "%s", e.msg);
	cr_assert(fabs(p2.mem.gradients / p4.mem.gradients - 0.5) < 1e-12,
		  "memory %.6g / %.6g", p2.mem.gradients, p4.mem.gradients);
	cr_assert(fabs((p2.time.dp_comm_total - 14 * 6e-6) /
		       (p4.time.dp_comm_total - 14 * 6e-6) - 0.5) < 1e-9,
		  "wire %.6g / %.6g", p2.time.dp_comm_total, p4.time.dp_comm_total);
}

/* TP overlap: none >= bulk >= pipelined exposed TP time; bulk leaves the
 * forward's collectives as they are. */
Test(framework, tp_overlap_kinds)
{
	const struct model_spec *m = model_find("llama2-70b");
	struct cluster c;
	struct layout l;
	struct train_opts o;
	struct prediction none, bulk, pipe;
	struct perr e = { "" };

	cr_assert_eq(cluster_preset("dgx-h100", 8, &c, &e), PPLAN_OK, "%s", e.msg);
	layout_default(&l);
	l.tp = 8;
	l.sp = 1;
	l.mbs = 1;
	l.gbs = 8;
	l.recompute = RECOMPUTE_FULL;
	train_opts_default(&o, m);
	o.use_des = 0;
	o.switches.tp_overlap = FW_TPO_NONE;
	train_opts_resolve(&o, NULL);
	cost_predict(m, &c, &l, &o, &none, &e);
	o.switches.tp_overlap = FW_TPO_BULK;
	train_opts_resolve(&o, NULL);
	cost_predict(m, &c, &l, &o, &bulk, &e);
	o.switches.tp_overlap = FW_TPO_PIPELINED;
	train_opts_resolve(&o, NULL);
	cost_predict(m, &c, &l, &o, &pipe, &e);
	cr_assert_gt(none.time.tp_comm, bulk.time.tp_comm);
	cr_assert_gt(bulk.time.tp_comm, pipe.time.tp_comm);
	cr_assert_gt(pipe.time.tp_comm, 0.0, "a residual share stays exposed");
	cr_assert_lt(pipe.step_time_s, none.step_time_s);
}
