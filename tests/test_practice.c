/*
 * test_practice.c: answers a practitioner can act on (issue 10).
 *
 *   defaults     the global batch rule, worked by hand from its sources
 *                (defaults.h), and the memory cap with its headroom
 *   no impossible number: every GPU x precision x cluster preset x zoo
 *                model searched on 8 and 64 GPUs; search_run stops with
 *                PPLAN_EINTERNAL at the first impossible prediction
 *   CP           tried only where it pays, and after all where nothing fits
 *   reports      `--json -` puts only JSON on stdout; --emit torchtitan is
 *                a torchrun line and --emit deepspeed JSON that parse, with degrees
 *                that multiply to the GPU count
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "defaults.h"
#include "predict.h"
#include "search.h"
#include "testutil.h"
#include "units.h"


/* ---- the global batch rule -------------------------------------------------- */

Test(defaults, global_batch)
{
	struct batch_default d;
	/* Llama 3 405B: 16M tokens = 2048 sequences of 8192 (Dubey et al.). */
	defaults_global_batch(model_find("llama3.1-405b"), 8192, 16384, &d);
	cr_assert_eq(d.sequences, 2048);
	cr_assert(strstr(d.origin, "published") && strstr(d.origin, "Llama 3"), "%s", d.origin);
	/* The same model at 4096 tokens keeps the 16.78 M tokens: 4096 sequences. */
	defaults_global_batch(model_find("llama3.1-405b"), 4096, 16384, &d);
	cr_assert_eq(d.sequences, 4096);
	/* GPT-3 175B: 1536 sequences of 2048 (Brown et al. Table 2.1: 3.2M). */
	defaults_global_batch(model_find("gpt3-175b"), 2048, 1024, &d);
	cr_assert_eq(d.sequences, 1536);
	/* Llama 2: 4M tokens of 4096 = 1024 sequences for every size. */
	defaults_global_batch(model_find("llama2-13b"), 4096, 64, &d);
	cr_assert_eq(d.sequences, 1024);
	/* No published batch: 1024 tokens per GPU, at least 2^22 tokens.
	 * 512 GPUs: 524,288 < 4,194,304, so 4,194,304 / 8192 = 512. */
	defaults_global_batch(model_find("llama3-70b"), 8192, 512, &d);
	cr_assert_eq(d.sequences, 512);
	cr_assert(strstr(d.origin, "1024 tokens per GPU"), "%s", d.origin);
	/* 8192 GPUs: 8,388,608 tokens = 1024 sequences: it grows with the
	 * cluster. */
	defaults_global_batch(model_find("llama3-8b"), 8192, 8192, &d);
	cr_assert_eq(d.sequences, 1024);
	/* 128K tokens per sequence: 4,194,304 / 131072 = 32. */
	defaults_global_batch(model_find("llama3-70b"), 131072, 512, &d);
	cr_assert_eq(d.sequences, 32);
	/* Rounding to a power of two, the nearer in ratio: 3000 tokens per
	 * sequence, 2^22 tokens = 1398.1 sequences: 1024 is 1.37x off,
	 * 2048 1.46x: 1024. */
	cr_assert_eq(defaults_round_sequences(4194304.0, 3000, 64), 1024);
	cr_assert_eq(defaults_round_sequences(100.0, 3000, 64), 1);
	/* 12 GPUs (odd part 3): 512 wanted, 3 x 128 = 384 is 1.33x off and
	 * 3 x 256 = 768 1.5x: 384, which dp = 3, 6 and 12 divide. */
	cr_assert_eq(defaults_round_sequences(4194304.0, 8192, 12), 384);
	/* but 384 x 8192 = 3.15 M tokens is under the 4.19 M floor the
	 * default promises: the next batch the GPUs divide, 768 (6.29 M). */
	defaults_global_batch(model_find("llama3-8b"), 8192, 12, &d);
	cr_assert_eq(d.sequences, 768);
	/* 1000 GPUs (odd part 125): 512 wanted: 500. */
	cr_assert_eq(defaults_round_sequences(4194304.0, 8192, 1000), 500);
}

/* A LoRA fine-tuning's default: NeMo 2.0's fine-tuning batch of 128
 * sequences, as many tokens as 128 of them, rounded as above: 128 on 8 or
 * 32 GPUs, 3 x 2^5 = 96 on 24 (128/96 is nearer than 192/128 in ratio). */
Test(defaults, finetune_batch)
{
	struct batch_default d;
	defaults_finetune_batch(4096, 8, &d);
	cr_expect_eq(d.sequences, 128);
	defaults_finetune_batch(4096, 32, &d);
	cr_expect_eq(d.sequences, 128);
	defaults_finetune_batch(2048, 24, &d);
	cr_expect_eq(d.sequences, 96);
	cr_expect(strstr(d.origin, "fine-tuning") != NULL, "%s", d.origin);
}

Test(defaults, memory_cap)
{
	const struct gpu_spec *h = gpu_find("h100-sxm");
	/* 90 % of 79.19 GiB. */
	cr_assert_float_eq(defaults_memory_cap_gib(h), 0.9 * h->mem_gib, 1e-12);
	cr_assert_lt(defaults_memory_cap_gib(h), h->mem_gib - 7.0);
}

/* ---- no impossible number --------------------------------------------------- */

static void sweep_one(const struct model_spec *m, const struct cluster *c,
		      enum precision p)
{
	struct train_opts o;
	struct search_params sp;
	struct search_result r;
	struct perr e = { "" };
	enum pplan_status st;
	struct batch_default d;

	train_opts_default(&o, m);
	o.precision = p;
	o.max_memory_gib = defaults_memory_cap_gib(&c->gpu);
	search_params_default(&sp);
	defaults_global_batch(m, o.seq, cluster_gpus(c), &d);
	sp.gbs = d.sequences;
	sp.top_k = 3;
	st = search_run(m, c, &o, &sp, &r, &e);
	cr_assert_neq(st, PPLAN_EINTERNAL, "%s on %ld x %s, %s: %s", m->name,
		      cluster_gpus(c), c->gpu.name, precision_name(p), e.msg);
	cr_assert_eq(st, PPLAN_OK, "%s", e.msg);
	for (int i = 0; i < r.n_top; i++) {
		cr_assert_eq(predict_check(&r.top_layouts[i], &r.top_preds[i], &e), PPLAN_OK,
			     "%s", e.msg);
		cr_assert_leq(r.top_preds[i].mem.total, o.max_memory_gib * GIB * (1 + 1e-12));
	}
	for (int f = 0; f < FAM_COUNT; f++)
		if (r.family[f].found)
			cr_assert_eq(predict_check(&r.family[f].layout, &r.family[f].pred, &e),
				     PPLAN_OK, "%s", e.msg);
	search_free(&r);
}

/* Every GPU of the table on its node (or dgx-h100's, where it has no
 * preset) with every precision it has a rate for, every zoo model, 8 and
 * 64 GPUs: one test per GPU. */
ParameterizedTestParameters(impossible, every_gpu_precision_model)
{
	static int idx[32];
	int ng;
	gpu_table(&ng);
	for (int i = 0; i < ng && i < 32; i++)
		idx[i] = i;
	return cr_make_param_array(int, idx, (size_t)(ng < 32 ? ng : 32));
}

ParameterizedTest(int *gi, impossible, every_gpu_precision_model, .timeout = 600)
{
	int ng, nm;
	const struct gpu_spec *g = &gpu_table(&ng)[*gi];
	const struct model_spec *z = model_zoo(&nm);
	long sizes[] = { 8, 64 };
	for (int p = 0; p < PREC_COUNT; p++) {
		if (g->peak_tflops[p] <= 0)
			continue;
		for (size_t si = 0; si < 2; si++) {
			struct cluster c;
			const char *preset = cluster_preset_for_gpu(g->name);
			cr_assert_eq(cluster_preset(preset ? preset : "dgx-h100", sizes[si], &c,
						    NULL), PPLAN_OK);
			c.gpu = *g;
			c.nvlink.bw_gbps = g->nvlink_gbps;
			for (int mi = 0; mi < nm; mi++)
				sweep_one(&z[mi], &c, (enum precision)p);
		}
	}
}

/* Every cluster preset with every precision of its GPU: the larger
 * models on 512 GPUs. */
Test(impossible, every_preset, .timeout = 600)
{
	const char *const *names = cluster_preset_names();
	const char *models[] = { "llama3-70b", "gpt3-175b", "mixtral-8x7b",
				 "llama3.1-405b" };
	for (int i = 0; names[i]; i++)
		for (int p = 0; p < PREC_COUNT; p++) {
			struct cluster c;
			cr_assert_eq(cluster_preset(names[i], 512, &c, NULL), PPLAN_OK);
			if (c.gpu.peak_tflops[p] <= 0)
				continue;
			for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
				sweep_one(model_find(models[k]), &c, (enum precision)p);
		}
}

/* The check itself: each impossible value is named. */
Test(impossible, predict_check_names_the_term)
{
	const struct model_spec *m = model_find("llama3-8b");
	struct cluster c;
	struct train_opts o;
	struct layout l;
	struct prediction p, q;
	struct perr e = { "" };

	cluster_preset("dgx-h100", 8, &c, NULL);
	train_opts_default(&o, m);
	layout_default(&l);
	l.tp = 8;
	l.sp = 1;
	l.gbs = 8;
	cr_assert_eq(cost_predict(m, &c, &l, &o, &p, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(predict_check(&l, &p, &e), PPLAN_OK, "%s", e.msg);
	q = p;
	q.time.compute = NAN;
	cr_assert_eq(predict_check(&l, &q, &e), PPLAN_EINTERNAL);
	cr_assert(strstr(e.msg, "compute time") && strstr(e.msg, "nan"), "%s", e.msg);
	q = p;
	q.step_time_s = INFINITY;
	cr_assert_eq(predict_check(&l, &q, &e), PPLAN_EINTERNAL);
	cr_assert(strstr(e.msg, "step time"), "%s", e.msg);
	q = p;
	q.mfu = 1.2;
	cr_assert_eq(predict_check(&l, &q, &e), PPLAN_EINTERNAL);
	cr_assert(strstr(e.msg, "MFU"), "%s", e.msg);
	q = p;
	q.mem.total = 0.5 * q.mem.weights;
	cr_assert_eq(predict_check(&l, &q, &e), PPLAN_EINTERNAL);
	cr_assert(strstr(e.msg, "below the weights"), "%s", e.msg);
	q = p;
	q.time.bubble = -1e-3;
	cr_assert_eq(predict_check(&l, &q, &e), PPLAN_EINTERNAL);
	cr_assert(strstr(e.msg, "bubble time"), "%s", e.msg);
	q = p;
	q.tokens_per_s = 0;
	cr_assert_eq(predict_check(&l, &q, &e), PPLAN_EINTERNAL);
	cr_assert(strstr(e.msg, "throughput"), "%s", e.msg);
}

/* ---- context parallelism only where it pays ------------------------------------------ */

/* GPT-3 175B at 2048 tokens: any cp leaves fewer than 4096 tokens per
 * rank, so no layout with cp > 1 is priced, the family says why, and the
 * count is the number of (tp, pp, cp) shapes left out. */
Test(cp, not_tried_where_it_does_not_pay)
{
	const struct model_spec *m = model_find("gpt3-175b");
	struct cluster c;
	struct train_opts o;
	struct search_params sp;
	struct search_result r;
	struct perr e = { "" };

	cluster_preset("dgx-a100", 1024, &c, NULL);
	train_opts_default(&o, m);
	o.max_memory_gib = defaults_memory_cap_gib(&c.gpu);
	search_params_default(&sp);
	sp.gbs = 1536;
	cr_assert_eq(sp.cp_min_tokens, DEFAULT_CP_MIN_TOKENS);
	cr_assert_eq(search_run(m, &c, &o, &sp, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_gt(r.n_top, 0);
	for (int i = 0; i < r.n_top; i++)
		cr_assert_eq(r.top_layouts[i].cp, 1);
	cr_assert_eq(r.family[FAM_CP].found, 0);
	cr_assert_eq(r.family[FAM_CP].why, REJECT_CP_SHORT);
	cr_assert(strstr(r.family[FAM_CP].why_msg, "1024 tokens per rank"), "%s",
		  r.family[FAM_CP].why_msg);
	cr_assert_gt(r.rejected[REJECT_CP_SHORT], 0);
	cr_assert_eq(r.cp_widened, 0);
	search_free(&r);
}

/* Where nothing fits without it, the CP layouts are priced after all:
 * a 1 GiB cap fits nothing, so the short-sequence CP layouts are tried
 * (and run out of memory too), and none is left counted as skipped. */
Test(cp, widened_when_nothing_fits)
{
	const struct model_spec *m = model_find("llama3-8b");
	struct cluster c;
	struct train_opts o;
	struct search_params sp;
	struct search_result r;
	struct perr e = { "" };

	cluster_preset("dgx-h100", 8, &c, NULL);
	train_opts_default(&o, m);
	o.seq = 4096;
	o.max_memory_gib = 1.0;
	search_params_default(&sp);
	sp.gbs = 64;
	cr_assert_eq(search_run(m, &c, &o, &sp, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(r.n_top, 0);
	cr_assert_eq(r.cp_widened, 1);
	cr_assert_eq(r.rejected[REJECT_CP_SHORT], 0);
	cr_assert_eq(r.family[FAM_CP].why, REJECT_OOM);
	search_free(&r);
}

/* ---- families that are impossible because the batch is too small ------------------- */

/* GPT-3 1.3B on 8 GPUs with one sequence per step: every family with
 * dp > 1 is ruled out by the batch, not by anything else. */
Test(families, batch_binds_every_dp_family)
{
	const struct model_spec *m = model_find("gpt3-1.3b");
	struct cluster c;
	struct train_opts o;
	struct search_params sp;
	struct search_result r;
	struct perr e = { "" };
	enum family dp_fams[] = { FAM_DP, FAM_TP_DP, FAM_PP_DP, FAM_3D };

	cluster_preset("dgx-h100", 8, &c, NULL);
	train_opts_default(&o, m);
	search_params_default(&sp);
	sp.gbs = 1;
	cr_assert_eq(search_run(m, &c, &o, &sp, &r, &e), PPLAN_OK, "%s", e.msg);
	for (size_t i = 0; i < sizeof dp_fams / sizeof dp_fams[0]; i++) {
		const struct search_family_result *f = &r.family[dp_fams[i]];
		cr_assert_eq(f->found, 0, "%s", family_name(dp_fams[i]));
		cr_assert_eq(f->why, REJECT_DP_GBS, "%s: %s", family_name(dp_fams[i]),
			     reject_key(f->why));
		cr_assert(strstr(f->why_msg, "at least"), "%s", f->why_msg);
	}
	/* tp8 (16 heads), pp8 (24 layers), tp2 x pp4 need no batch. */
	cr_assert(r.family[FAM_TP].found);
	cr_assert(r.family[FAM_PP].found);
	cr_assert(r.family[FAM_TP_PP].found);
	search_free(&r);
}

/* ---- stdout carries only the JSON with --json - ------------------------------------ */

static cJSON *run_json(char *const argv[], const char *out)
{
	char *text;
	cJSON *doc;
	const char *end = NULL;
	cr_assert_eq(run_pplan_to(argv, out, NULL), 0);
	text = slurp(out);
	doc = cJSON_ParseWithOpts(text, &end, 0);
	cr_assert_not_null(doc, "stdout is not JSON: %.200s", text);
	while (end && isspace((unsigned char)*end))
		end++;
	cr_assert(end && *end == '\0', "more than the JSON on stdout: %.200s", end ? end : "");
	free(text);
	return doc;
}

Test(reports, json_dash_is_only_json)
{
	char out[] = "/tmp/pplan-json-XXXXXX";
	int fd = mkstemp(out);
	char *s[] = { "pplan", "search", "--model", "llama3-8b", "--gpus", "16", "--top", "3",
		      "--json", "-", NULL };
	char *p[] = { "pplan", "predict", "--model", "llama3-8b", "--gpus", "16",
		      "--layout", "tp=2,pp=2,dp=4,gbs=64", "--json", "-", NULL };
	char *m[] = { "pplan", "simulate", "--model", "llama3-8b", "--gpus", "16",
		      "--layout", "tp=2,pp=2,dp=4,gbs=64", "--json", "-", NULL };
	cJSON *doc;
	cr_assert_geq(fd, 0);
	close(fd);
	doc = run_json(s, out);
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "schema")->valuestring, "pplan.search/1");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "layouts")), 3);
	cJSON_Delete(doc);
	doc = run_json(p, out);
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "schema")->valuestring, "pplan.prediction/1");
	cJSON_Delete(doc);
	doc = run_json(m, out);
	cr_assert_not_null(cJSON_GetObjectItem(doc, "stages"));
	cJSON_Delete(doc);
	unlink(out);
}

/* ---- emitted configs parse and multiply to the GPU count ------------------------------- */

/* A strict reader for the torchtitan 0.3 launch line pplan writes:
 * comment lines, then one command continued with " \\": torchrun's own
 * options, -m torchtitan.train, then --section.key value pairs and
 * --section.flag / --section.no_flag booleans (tyro's spelling), ending in
 * the activation_checkpoint:MODE subcommand.  A repeated key, a key
 * outside a section or a token after the subcommand is an error.
 * Returns the number of keys, -1 on a syntax error. */
#define LINE_MAX_KEYS 64
struct launch { char key[LINE_MAX_KEYS][96]; char val[LINE_MAX_KEYS][64]; int n;
		long nnodes, nproc; char ac[32]; };

static int launch_key_ok(const char *k)
{
	const char *dot = strchr(k, '.');
	if (!dot || dot == k || strchr(dot + 1, '.') || !dot[1])
		return 0;
	for (const char *c = k; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '_' &&
		    *c != '.')
			return 0;
	return 1;
}

static int launch_add(struct launch *t, const char *k, const char *v)
{
	if (!launch_key_ok(k) || t->n == LINE_MAX_KEYS)
		return -1;
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->key[i], k))
			return -1;
	snprintf(t->key[t->n], sizeof t->key[0], "%s", k);
	snprintf(t->val[t->n], sizeof t->val[0], "%s", v);
	t->n++;
	return 0;
}

static int launch_args(char **tok, int n, struct launch *t)
{
	int i = 0;
	if (n < 4 || strcmp(tok[0], "torchrun"))
		return -1;
	for (i = 1; i < n && strcmp(tok[i], "-m"); i++)
		if (!strcmp(tok[i], "--nnodes") && i + 1 < n)
			t->nnodes = atol(tok[++i]);
		else if (!strcmp(tok[i], "--nproc-per-node") && i + 1 < n)
			t->nproc = atol(tok[++i]);
		else
			return -1;
	if (i + 1 >= n || strcmp(tok[++i], "torchtitan.train"))
		return -1;
	for (i++; i < n; i++) {
		const char *k = tok[i];
		if (!strncmp(k, "activation_checkpoint:", 22))
			return i == n - 1 ? snprintf(t->ac, sizeof t->ac, "%s", k + 22), t->n : -1;
		if (strncmp(k, "--", 2))
			return -1;
		if (!strcmp(k, "--module") || !strcmp(k, "--config")) {
			if (i + 1 >= n || launch_add(t, k[2] == 'm' ? "x.module" : "x.config", tok[++i]))
				return -1;
		} else if (i + 1 < n && strncmp(tok[i + 1], "--", 2) &&
			   strncmp(tok[i + 1], "activation_checkpoint:", 22)) {
			if (launch_add(t, k + 2, tok[++i]))
				return -1;
		} else {
			const char *dot = strchr(k, '.');
			char key[96];
			int neg = dot && !strncmp(dot + 1, "no_", 3);
			if (!dot)
				return -1;
			snprintf(key, sizeof key, "%.*s%s", (int)(dot + 1 - (k + 2)), k + 2,
				 dot + 1 + (neg ? 3 : 0));
			if (launch_add(t, key, neg ? "false" : "true"))
				return -1;
		}
	}
	return -1; /* no activation_checkpoint subcommand */
}

static int launch_parse(const char *text, struct launch *t)
{
	char *buf = malloc(strlen(text) + 1), *tok[256], *line, *save = NULL;
	size_t len = 0;
	int n = 0, r;
	memset(t, 0, sizeof *t);
	for (line = strtok_r(strcpy(buf, text), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strlen(line);
		if (line[0] == '#')
			continue;
		memmove(buf + len, line, l); /* joined in place: buf + len <= line */
		len += l;
		if (len >= 2 && buf[len - 1] == '\\' && buf[len - 2] == ' ')
			len -= 1;
		else
			break; /* the command's last line */
	}
	buf[len] = '\0';
	for (char *s = strtok_r(buf, " ", &save); s && n < 256; s = strtok_r(NULL, " ", &save))
		tok[n++] = s;
	r = launch_args(tok, n, t);
	free(buf);
	return r;
}

static long launch_long(const struct launch *t, const char *key)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->key[i], key))
			return atol(t->val[i]);
	cr_assert_fail("no --%s on the launch line", key);
	return 0;
}

static void emit_to(const char *fmt, char *const extra[], const char *out)
{
	char *argv[32] = { "pplan", "search", "--emit", (char *)fmt };
	int n = 4;
	for (int i = 0; extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	cr_assert_eq(run_pplan_to(argv, out, NULL), 0, "pplan search --emit %s", fmt);
}

Test(emit, torchtitan_launch_line_parses)
{
	char out[] = "/tmp/pplan-titan-XXXXXX";
	int fd = mkstemp(out);
	char *cases[][12] = {
		{ "--params", "70B", "--gpus", "512", NULL },
		{ "--model", "llama3-8b", "--gpus", "64", "--precision", "fp8", NULL },
		{ "--model", "mixtral-8x7b", "--gpus", "64", NULL },
		{ "--params", "70B", "--gpus", "512", "--seq", "131072", NULL },
		{ "--model", "qwen3-30b-a3b", "--gpus", "16", NULL },
	};
	long gpus[] = { 512, 64, 64, 512, 16 };
	close(fd);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct launch t;
		char *text;
		long prod, dp;
		emit_to("torchtitan", cases[i], out);
		text = slurp(out);
		cr_assert_gt(launch_parse(text, &t), 0, "case %zu does not parse:\n%s", i, text);
		dp = launch_long(&t, "parallelism.data_parallel_replicate_degree") *
		     launch_long(&t, "parallelism.data_parallel_shard_degree");
		prod = dp * launch_long(&t, "parallelism.context_parallel_degree") *
		       launch_long(&t, "parallelism.tensor_parallel_degree") *
		       launch_long(&t, "parallelism.pipeline_parallel_degree");
		cr_assert_eq(prod, gpus[i], "case %zu: degrees multiply to %ld", i, prod);
		cr_assert_eq(t.nnodes * t.nproc, gpus[i], "case %zu: torchrun starts %ld x %ld", i,
			     t.nnodes, t.nproc);
		cr_assert_eq(launch_long(&t, "training.global_batch_size") %
				     (launch_long(&t, "training.local_batch_size") * dp), 0);
		cr_assert(!strcmp(t.ac, "none") || !strcmp(t.ac, "selective") || !strcmp(t.ac, "full"),
			  "case %zu: activation_checkpoint:%s", i, t.ac);
		free(text);
	}
	unlink(out);
}

Test(emit, deepspeed_json_parses)
{
	char out[] = "/tmp/pplan-ds-XXXXXX";
	int fd = mkstemp(out);
	char *cases[][12] = {
		{ "--params", "70B", "--gpus", "512", NULL },
		{ "--model", "llama3-8b", "--gpus", "64", NULL },
		{ "--model", "gpt3-1.3b", "--gpus", "16", "--precision", "fp16", NULL },
	};
	long gpus[] = { 512, 64, 16 };
	close(fd);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text;
		cJSON *doc;
		long tp, pp, cp = 1, gbs, mbs, gas, dp;
		const cJSON *x;
		emit_to("deepspeed", cases[i], out);
		text = slurp(out);
		doc = cJSON_Parse(text);
		cr_assert_not_null(doc, "case %zu is not JSON:\n%s", i, text);
		tp = (long)cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "tensor_parallel"),
					       "autotp_size")->valuedouble;
		pp = (long)cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "pipeline"),
					       "stages")->valuedouble;
		if ((x = cJSON_GetObjectItem(doc, "sequence_parallel_size")))
			cp = (long)x->valuedouble;
		gbs = (long)cJSON_GetObjectItem(doc, "train_batch_size")->valuedouble;
		mbs = (long)cJSON_GetObjectItem(doc, "train_micro_batch_size_per_gpu")->valuedouble;
		gas = (long)cJSON_GetObjectItem(doc, "gradient_accumulation_steps")->valuedouble;
		cr_assert_eq(gpus[i] % (tp * pp * cp), 0);
		dp = gpus[i] / (tp * pp * cp);
		/* DeepSpeed's own check: batch = micro x accumulation x dp. */
		cr_assert_eq(gbs, mbs * gas * dp, "case %zu: %ld != %ld x %ld x %ld", i, gbs,
			     mbs, gas, dp);
		cr_assert_not_null(cJSON_GetObjectItem(doc, "zero_optimization"));
		cJSON_Delete(doc);
		free(text);
	}
	unlink(out);
}
