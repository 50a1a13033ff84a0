/*
 * test_cases.c: reading published runs (pplan.cases/1).
 *
 * The counts below were taken from validation/calibration.json itself,
 * independently of pplan, with a one-off
 *   python3 -c 'import json; c = json.load(open(...))["cases"]; ...'
 * (not a test dependency):
 *   101 cases; 79 with a measured step_time_s, 9 more with only
 *   tflops_per_gpu and a layout; 17 with memory_gib;
 *   2 with oom true (the two BigScience 181B layouts);
 *   30 with micro_batch_size null; 2 without tp/pp/dp
 *   (megatron-r080-h100-gpt177b-strong-{96,4608}gpu); 9 without a
 *   global batch (nemo-longseq-llama2-7b-*), which give TFLOP/s only and
 *   so are compared at pplan's default batch: 1024 tokens per GPU, at
 *   least 2^22 tokens, whole sequences (4096-token sequences on 4 GPUs:
 *   2^22 / 4096 = 1024 sequences; 131072 on 128 GPUs: 32).
 * Null fields must be filled with the source framework's default and
 * the assumption recorded ("mbs=1 ..."); bad files give PPLAN_EINPUT and
 * one sentence that names the file (fixtures in tests/fixtures/bad/).
 * Last, `pplan validate --json` of a one-case fixture, parsed.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases.h"
#include "validation.h"
#include "predict.h"
#include "jsonio.h"
#include "testutil.h"

#define CALIBRATION PPLAN_SOURCE_DIR "/validation/calibration.json"
#define BAD PPLAN_SOURCE_DIR "/tests/fixtures/bad/"

static struct vcase *load(const char *path, int *n)
{
	struct vcase *cs = NULL;
	struct perr e = { "" };
	cr_assert_eq(cases_load(path, &cs, n, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_not_null(cs);
	return cs;
}

static const struct vcase *find(const struct vcase *cs, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cs[i].id, id))
			return &cs[i];
	cr_assert_fail("case %s not found", id);
	return NULL;
}

Test(cases, calibration_counts)
{
	int n = 0, steps = 0, derived = 0, mems = 0, ooms = 0, mbs_assumed = 0;
	struct vcase *cs = load(CALIBRATION, &n);

	cr_assert_eq(n, 101);
	for (int i = 0; i < n; i++) {
		if (cs[i].step_from_throughput)
			derived++;
		else if (isfinite(cs[i].measured_step_s)) {
			steps++;
			cr_assert_gt(cs[i].measured_step_s, 0, "%s", cs[i].id);
		}
		if (isfinite(cs[i].measured_mem_gib))
			mems++;
		if (cs[i].measured_oom)
			ooms++;
		if (strstr(cs[i].assumed, "mbs=1 ("))
			mbs_assumed++;
		cr_assert(cs[i].id[0] != '\0');
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(cs[i].id, cs[j].id, "duplicate id");
	}
	cr_assert_eq(steps, 79);
	/* The nine Megatron-LM README weak-scaling rows and the nine NeMo
	 * long-sequence rows give TFLOP/s only, its two strong-scaling rows
	 * MFU only. */
	cr_assert_eq(derived, 20);
	cr_assert_eq(mems, 17);
	cr_assert_eq(ooms, 2);
	cr_assert_eq(mbs_assumed, 28, "%d cases assumed mbs=1", mbs_assumed);
	free(cs);
}

/* The first case leaves micro-batch, gpus_per_node, SP, recompute, zero
 * and precision null: each default is named in `assumed`. */
Test(cases, null_fields_are_assumed_and_said)
{
	int n = 0;
	struct vcase *cs = load(CALIBRATION, &n);
	const struct vcase *c = find(cs, n, "megatron-r080-h100-gpt1.7b-48gpu");

	cr_assert(strstr(c->assumed, "mbs=1") != NULL, "assumed: %s", c->assumed);
	cr_assert(strstr(c->assumed, "gpus_per_node=8") != NULL, "assumed: %s", c->assumed);
	cr_assert(strstr(c->assumed, "recompute=none") != NULL, "assumed: %s", c->assumed);
	cr_assert(strstr(c->assumed, "precision=bf16") != NULL, "assumed: %s", c->assumed);
	cr_assert(strstr(c->assumed, "zero=") != NULL, "assumed: %s", c->assumed);
	cr_assert(strstr(c->assumed, "sp=") != NULL, "assumed: %s", c->assumed);
	/* ffn_hidden_size null with gelu: 4 x 2048 = 8192. */
	cr_assert_eq(c->model.ffn, 4 * 2048);
	cr_assert(strstr(c->assumed, "ffn_hidden_size") != NULL, "assumed: %s",
		  c->assumed);
	/* What the source gave is used as given: tp 1, pp 1, dp 48, gbs 192,
	 * seq 4096, 48 H100s in nodes of 8. */
	cr_assert_eq(c->layout.tp, 1);
	cr_assert_eq(c->layout.pp, 1);
	cr_assert_eq(c->layout.dp, 48);
	cr_assert_eq(c->layout.gbs, 192);
	cr_assert_eq(c->layout.mbs, 1);
	cr_assert_eq(c->opts.seq, 4096);
	cr_assert_eq(cluster_gpus(&c->cluster), 48);
	cr_assert_eq(c->cluster.gpus_per_node, 8);
	cr_assert_str_eq(c->cluster.gpu.name, "h100-sxm");
	cr_assert_eq(c->opts.precision, PREC_BF16);
	cr_assert(c->predictable, "%s", c->skip_reason);
	/* Only TFLOP/s given (408.8 per GPU, Megatron's model FLOPs): the
	 * step is derived from it.  By hand, 72*l*h^2*(1 + s/6h + V/12lh)
	 * per token with l=24, h=2048, s=4096, V=131072 is 7,247,757,312 x
	 * (1 + 1/3 + 2/9) = 11,274,289,152; x 192*4096 tokens = 8.86650e15
	 * FLOPs; / (408.8e12 x 48 GPUs) = 0.451863 s. */
	cr_assert(c->step_from_throughput);
	cr_assert(fabs(c->measured_step_s - 0.451863) < 1e-5, "%.6f", c->measured_step_s);
	cr_assert(strstr(c->assumed, "throughput") != NULL, "assumed: %s", c->assumed);
	free(cs);
}

/* A fully specified Narayanan et al. case keeps its values. */
Test(cases, given_fields_are_kept)
{
	int n = 0;
	struct vcase *cs = load(CALIBRATION, &n);
	const struct vcase *c = find(cs, n, "narayanan21-t1-gpt1.7b-32gpu");

	cr_assert_str_eq(c->label, "Narayanan et al.");
	cr_assert_str_eq(c->opts.fw->name, "megatron-lm");
	cr_assert_eq(c->model.layers, 24);
	cr_assert_eq(c->model.hidden, 2304);
	cr_assert_eq(c->model.heads, 24);
	cr_assert_eq(c->model.vocab, 51200);
	cr_assert_eq(c->layout.dp, 32);
	cr_assert_eq(c->layout.gbs, 512);
	cr_assert_eq(c->layout.recompute, RECOMPUTE_FULL);
	cr_assert_eq(c->opts.precision, PREC_FP16);
	cr_assert_str_eq(c->cluster.gpu.name, "a100-80gb");
	/* 200 Gb/s per GPU = 25 GB/s. */
	cr_assert(fabs(c->cluster.net.bw_gbps - 25.0) < 1e-9);
	cr_assert(fabs(c->measured_step_s - 3.53) < 1e-12);
	/* Null micro-batch still assumed, and the era's framework said. */
	cr_assert(strstr(c->assumed, "mbs=1") != NULL, "assumed: %s", c->assumed);
	cr_assert(strstr(c->assumed, "unfused attention") != NULL, "assumed: %s",
		  c->assumed);
	cr_assert_eq(c->opts.b.attention, FW_ATTN_UNFUSED);
	/* Megatron-LM 2021 reduces fp16 gradients in fp16. */
	cr_assert_eq(c->opts.b.grad_bytes, 2);
	free(cs);
}

/* Cases that lack what pplan cannot assume are loaded, but marked; a
 * throughput without its batch is compared at pplan's default batch; the
 * strong-scaling rows, which give no layout, at search's best one. */
Test(cases, unpredictable_cases_say_why)
{
	int n = 0;
	struct vcase *cs = load(CALIBRATION, &n);
	const struct vcase *a = find(cs, n, "megatron-r080-h100-gpt177b-strong-96gpu");
	const struct vcase *b = find(cs, n, "nemo-longseq-llama2-7b-seq4k-4gpu-cp1");
	const struct vcase *c = find(cs, n, "nemo-longseq-llama2-7b-seq128k-128gpu-cp4");
	int longseq = 0;

	cr_assert_eq(a->predictable, 1, "%s", a->skip_reason);
	cr_assert(a->layout_searched);
	cr_assert(strstr(a->assumed, "no tp/pp/dp given") != NULL, "%s", a->assumed);
	cr_assert_eq(b->predictable, 1, "%s", b->skip_reason);
	cr_assert_eq(b->layout.gbs, 1024);
	cr_assert(strstr(b->assumed, "gbs=1024 (none given") != NULL, "%s", b->assumed);
	cr_assert_eq(c->layout.gbs, 32);
	for (int i = 0; i < n; i++)
		if (!strncmp(cs[i].id, "nemo-longseq-", 13)) {
			longseq++;
			cr_assert(cs[i].step_from_throughput, "%s", cs[i].id);
		}
	cr_assert_eq(longseq, 9);
	/* The BigScience OOM layouts are there and measured as OOM. */
	cr_assert(find(cs, n, "bigscience-02-25-181b-dp32-tp2-pp6-mbs1-h64")->measured_oom);
	cr_assert(find(cs, n, "bigscience-02-25-181b-dp48-tp8-pp1-mbs1-h64")->measured_oom);
	free(cs);
}

/* The held-out file: LLM Foundry's MPT benchmark tables, 52 H100 and
 * 42 A100 80GB rows (scripts/train/benchmarking/README.md), run by
 * Composer's FSDP.  Step times are the rows' global batch tokens over
 * their Throughput (T/s), e.g. 13B on 8 A100s: 48 x 2048 / 18097 =
 * 5.4319 s. */
/* Every row of a held-out file: predicted, under framework fw, ZeRO-3,
 * trained without dropout (MPT and Llama say 0). */
static void expect_fsdp_rows(const struct vcase *cs, int n, const char *fw)
{
	for (int i = 0; i < n; i++) {
		cr_assert(cs[i].predictable, "%s: %s", cs[i].id, cs[i].skip_reason);
		cr_assert_str_eq(cs[i].opts.fw->name, fw, "%s", cs[i].id);
		cr_assert_eq(cs[i].layout.zero, 3, "%s", cs[i].id);
		cr_assert(cs[i].model.no_dropout, "%s", cs[i].id);
	}
}

Test(cases, holdout_llm_foundry)
{
	int n = 0, h100 = 0, full = 0;
	struct vcase *cs = load(PPLAN_SOURCE_DIR "/validation/holdout/llm-foundry.json", &n);
	const struct vcase *c = find(cs, n, "llmfoundry-a100-mpt13b-s2048-8gpu-mbs2");

	cr_assert_eq(n, 94);
	expect_fsdp_rows(cs, n, "composer");
	for (int i = 0; i < n; i++) {
		if (!strncmp(cs[i].id, "llmfoundry-h100-", 16))
			h100++;
		if (cs[i].layout.recompute == RECOMPUTE_FULL)
			full++;
	}
	cr_assert_eq(h100, 52);
	cr_assert_eq(full, 40, "%d rows with activation checkpointing", full);
	cr_assert(fabs(c->measured_step_s - 48.0 * 2048 / 18097) < 1e-3, "%g", c->measured_step_s);
	cr_assert_eq(c->layout.gbs, 48);
	cr_assert_eq(c->layout.mbs, 2);
	free(cs);
}

/* The torchtitan rows: 3 cases, FSDP2 (zero 3) under the torchtitan
 * framework row; the 8B A100 step time by hand, 64 x 8192 tokens /
 * (2973 tokens/s x 64 GPUs) = 2.75547 s. */
Test(cases, holdout_torchtitan)
{
	int n = 0;
	struct vcase *cs = load(PPLAN_SOURCE_DIR "/validation/holdout/torchtitan.json", &n);
	const struct vcase *c = find(cs, n, "torchtitan-a100-llama3-8b-64gpu-sac-op");

	cr_assert_eq(n, 3);
	expect_fsdp_rows(cs, n, "torchtitan");
	cr_assert(fabs(c->measured_step_s - 64.0 * 8192 / (2973.0 * 64)) < 1e-4, "%g",
		  c->measured_step_s);
	cr_assert_eq(c->layout.recompute, RECOMPUTE_SELECTIVE);
	free(cs);
}

/* A case's dropout is the source's when given; else GeLU models keep
 * Megatron-LM's 0.1 (the BigScience rows) and gated ones train without
 * (NeMo's Llama 2 rows); a probability of 1 or more is refused. */
Test(cases, dropout_given_or_by_family)
{
	int n = 0, fd;
	struct vcase *cs = load(CALIBRATION, &n);
	char path[] = "/tmp/pplan-cases-XXXXXX";
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": [{\"id\": \"x\", \"source\": \"s\","
		" \"model\": {\"num_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4,"
		" \"vocab_size\": 100, \"seq_length\": 128, \"mlp\": \"gelu\", \"dropout\": 1.0},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 8},"
		" \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8},"
		" \"measured\": {\"step_time_s\": 2.0}}]}";
	struct perr e = { "" };
	struct vcase *bad = NULL;

	cr_assert(!find(cs, n, "bigscience-02-28-176b-dp4-tp8-pp12-mbs2-h64")->model.no_dropout);
	cr_assert(find(cs, n, "nemo-longseq-llama2-7b-seq4k-4gpu-cp1")->model.no_dropout);
	free(cs);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	cr_assert_eq(cases_load(path, &bad, &n, &e), PPLAN_OK, "%s", e.msg);
	unlink(path);
	cr_assert_eq(n, 1);
	cr_assert_eq(bad[0].predictable, 0);
	cr_assert(strstr(bad[0].skip_reason, "dropout must be a probability") != NULL, "%s",
		  bad[0].skip_reason);
	free(bad);
}

/* A step time says nothing without the batch it took: that case is
 * skipped, with the reason. */
Test(cases, step_time_without_batch_is_skipped)
{
	char path[] = "/tmp/pplan-cases-XXXXXX";
	int fd = mkstemp(path), n = 0;
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": [{\"id\": \"x\", \"source\": \"s\","
		" \"framework\": {\"name\": \"megatron-core\", \"version\": \"0.8\", \"year\": 2024},"
		" \"model\": {\"num_layers\": 32, \"hidden_size\": 4096, \"num_attention_heads\": 32,"
		" \"vocab_size\": 32000, \"seq_length\": 4096, \"mlp\": \"swiglu\", \"ffn_hidden_size\": 11008},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 8},"
		" \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8},"
		" \"measured\": {\"step_time_s\": 2.0, \"tflops_per_gpu\": 400,"
		" \"flops_convention\": \"model FLOPs\"}}]}";
	struct vcase *cs;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	cs = load(path, &n);
	unlink(path);
	cr_assert_eq(n, 1);
	cr_assert_eq(cs[0].predictable, 0);
	cr_assert(strstr(cs[0].skip_reason, "global batch") != NULL, "%s", cs[0].skip_reason);
	free(cs);
}

/* The hand-written fixture: one case, read as given. */
Test(cases, good_fixture)
{
	int n = 0;
	struct vcase *cs = load(BAD "cases-good.json", &n);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(cs[0].id, "tiny-gpt-8gpu");
	cr_assert_eq(cs[0].layout.dp, 8);
	cr_assert_eq(cs[0].layout.mbs, 1);
	cr_assert(strstr(cs[0].assumed, "mbs=1") != NULL, "%s", cs[0].assumed);
	cr_assert(strstr(cs[0].assumed, "zero=0") != NULL, "%s", cs[0].assumed);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	free(cs);
}

struct bad_case {
	char file[48];
	char needle[48]; /* besides the file name */
};

ParameterizedTestParameters(cases, bad_files)
{
	static struct bad_case cases[] = {
		{ "cases-no-schema.json", "schema" },
		{ "cases-wrong-schema.json", "pplan.cases/1" },
		{ "cases-empty.json", "non-empty" },
		{ "cases-not-array.json", "array" },
		{ "cases-malformed.json", "malformed JSON" },
		{ "cases-truncated.json", "malformed JSON" },
		{ "cases-empty-file.json", "empty" },
		{ "no-such-file.json", "cannot open" },
	};
	return cr_make_param_array(struct bad_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, cases, bad_files)
{
	char path[512];
	struct vcase *cs = (struct vcase *)1;
	int n = -1;
	struct perr e = { "" };
	enum pplan_status st;

	snprintf(path, sizeof path, "%s%s", BAD, c->file);
	st = cases_load(path, &cs, &n, &e);
	cr_assert_eq(st, PPLAN_EINPUT, "%s: status %d (%s)", c->file, st, e.msg);
	cr_assert_null(cs, "%s: no cases on failure", c->file);
	cr_assert_eq(n, 0);
	cr_assert(strstr(e.msg, c->file) != NULL, "%s: message '%s' does not name the file",
		  c->file, e.msg);
	cr_assert(strstr(e.msg, c->needle) != NULL, "%s: message '%s' lacks '%s'",
		  c->file, e.msg, c->needle);
	cr_assert(strchr(e.msg, '\n') == NULL, "one line: '%s'", e.msg);
}

/* One case pplan cannot read is that case's "not predicted", with the
 * sentence that names the problem; the file loads (issue 18, item 7). */
ParameterizedTestParameters(cases, unreadable_case)
{
	static struct bad_case cases[] = {
		{ "cases-not-object.json", "not an object" },
		{ "cases-no-id.json", "no id" },
		{ "cases-unknown-gpu.json", "unknown GPU 'Z9000-imaginary'" },
		{ "cases-bad-recompute.json", "sometimes" },
		{ "cases-bad-type.json", "num_layers" },
	};
	return cr_make_param_array(struct bad_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, cases, unreadable_case)
{
	char path[512];
	struct vcase *cs = NULL;
	int n = -1;
	struct perr e = { "" };

	snprintf(path, sizeof path, "%s%s", BAD, c->file);
	cr_assert_eq(cases_load(path, &cs, &n, &e), PPLAN_OK, "%s: %s", c->file, e.msg);
	cr_assert_eq(n, 1, "%s", c->file);
	cr_assert_eq(cs[0].predictable, 0, "%s", c->file);
	cr_assert(strstr(cs[0].skip_reason, c->needle) != NULL, "%s: reason '%s' lacks '%s'",
		  c->file, cs[0].skip_reason, c->needle);
	cr_assert(strchr(cs[0].skip_reason, '\n') == NULL);
	free(cs);
}

static struct vcase *load_text(const char *text, int *n)
{
	char path[] = "/tmp/pplan-cases-XXXXXX";
	int fd = mkstemp(path);
	struct vcase *cs;
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	cs = load(path, n);
	unlink(path);
	return cs;
}

#define CASE_REST \
	"\"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 16}," \
	" \"layout\": {\"tp\": 1, \"pp\": 2, \"dp\": 8, \"ep\": 8, \"global_batch_size\": 512}," \
	" \"measured\": {\"step_time_s\": 2.0}}"

/* Qwen3-30B-A3B from its config.json keys (hf_config) and from the flat
 * keys with the moe object's widths: 30.53 B parameters either way, by
 * hand: embedding and head 2 x 151,936 x 2,048 = 622.3 M; a layer's
 * attention 2,048 x (4,096 + 2 x 512) + 4,096 x 2,048 = 18.87 M, its
 * 128 experts 128 x 3 x 2,048 x 768 = 603.98 M, router 0.26 M: 623.1 M
 * x 48 = 29.91 B.  The model card says 30.5 B.  A case whose
 * params_billion the architecture misses by more than 5 % is warned. */
Test(cases, moe_architecture_read_whole)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"hf\", \"source\": \"s\", \"model\": {\"params_billion\": 30.5,"
		" \"seq_length\": 4096, \"hf_config\": {\"model_type\": \"qwen3_moe\","
		" \"hidden_size\": 2048, \"intermediate_size\": 6144, \"moe_intermediate_size\": 768,"
		" \"num_hidden_layers\": 48, \"num_attention_heads\": 32, \"num_key_value_heads\": 4,"
		" \"head_dim\": 128, \"vocab_size\": 151936, \"num_experts\": 128,"
		" \"num_experts_per_tok\": 8, \"max_position_embeddings\": 40960,"
		" \"tie_word_embeddings\": false, \"decoder_sparse_step\": 1}}, " CASE_REST ","
		"{\"id\": \"flat\", \"source\": \"s\", \"model\": {\"params_billion\": 30.5,"
		" \"seq_length\": 4096, \"num_layers\": 48, \"hidden_size\": 2048,"
		" \"ffn_hidden_size\": 6144, \"num_attention_heads\": 32, \"num_kv_heads\": 4,"
		" \"head_dim\": 128, \"vocab_size\": 151936, \"mlp\": \"swiglu\","
		" \"moe\": {\"num_experts\": 128, \"top_k\": 8, \"moe_ffn_hidden_size\": 768}}, " CASE_REST ","
		"{\"id\": \"dropped\", \"source\": \"s\", \"model\": {\"params_billion\": 30.5,"
		" \"seq_length\": 4096, \"num_layers\": 48, \"hidden_size\": 2048,"
		" \"ffn_hidden_size\": 6144, \"num_attention_heads\": 32, \"num_kv_heads\": 4,"
		" \"vocab_size\": 151936, \"mlp\": \"swiglu\","
		" \"moe\": {\"num_experts\": 128, \"top_k\": 8}}, " CASE_REST ","
		"{\"id\": \"hf-keys-flat\", \"source\": \"s\", \"model\": {\"params_billion\": 30.5,"
		" \"seq_length\": 4096, \"num_hidden_layers\": 48, \"hidden_size\": 2048,"
		" \"intermediate_size\": 6144, \"num_attention_heads\": 32, \"num_key_value_heads\": 4,"
		" \"head_dim\": 128, \"vocab_size\": 151936, \"hidden_act\": \"silu\","
		" \"num_experts\": 128, \"num_experts_per_tok\": 8, \"moe_intermediate_size\": 768}, "
		CASE_REST "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	double hf, flat;

	cr_assert_eq(n, 4);
	hf = model_params_total(&cs[0].model) / 1e9;
	flat = model_params_total(&cs[1].model) / 1e9;
	cr_assert(cs[0].predictable && cs[1].predictable, "%s / %s", cs[0].skip_reason,
		  cs[1].skip_reason);
	cr_assert_float_eq(hf, 30.53, 0.01, "%.4f B", hf);
	cr_assert_float_eq(flat, hf, 0.001 * hf, "flat %.4f B, hf %.4f B", flat, hf);
	cr_assert_eq(cs[0].model.seq, 4096, "the run's sequence, not the config's 40960");
	cr_assert_eq(cs[0].layout.ep, 8);
	cr_assert_str_empty(cs[0].warning, "%s", cs[0].warning);
	/* The expert width dropped: 3 x 2048 x 6144 per expert, 8x the experts. */
	cr_assert(strstr(cs[2].warning, "the case says 30.50 B") != NULL, "%s", cs[2].warning);
	/* the config's key names beside each other, without hf_config: the
	 * same model (Q/K norms aside: 48 x 2 x 128 weights) */
	cr_assert(cs[3].predictable, "%s", cs[3].skip_reason);
	cr_assert_float_eq(model_params_total(&cs[3].model) / 1e9, hf, 1e-4, "%.6f B",
			   model_params_total(&cs[3].model) / 1e9);
	cr_assert_eq(cs[3].model.num_experts, 128);
	cr_assert_eq(cs[3].model.kv_heads, 4);
	cr_assert_eq(cs[3].model.mlp, MLP_SWIGLU);
	free(cs);
}

/* A case that leaves gpus_per_node out takes its GPU's node: a GB200
 * tray holds 4 GPUs of a 72-GPU NVLink domain (NVIDIA's GB200 NVL72 data
 * sheet), an H100's DGX board 8 in an 8-GPU domain. */
Test(cases, node_from_the_gpu_when_not_given)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"gb200\", \"source\": \"s\", \"model\": {\"name\": \"llama3-8b\"},"
		" \"hardware\": {\"gpu\": \"GB200\", \"num_gpus\": 64},"
		" \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 64, \"global_batch_size\": 128},"
		" \"measured\": {\"step_time_s\": 2.0}},"
		"{\"id\": \"h100\", \"source\": \"s\", \"model\": {\"name\": \"llama3-8b\"},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 64},"
		" \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 64, \"global_batch_size\": 128},"
		" \"measured\": {\"step_time_s\": 2.0}}]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);

	cr_assert_eq(n, 2);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	cr_expect_eq(cs[0].cluster.gpus_per_node, 4);
	cr_expect_eq(cs[0].cluster.num_nodes, 16);
	cr_expect_eq(cs[0].cluster.nvlink_domain, 64, "the 64 GPUs in one NVL72 domain");
	cr_expect(strstr(cs[0].assumed, "gpus_per_node=4") != NULL, "%s", cs[0].assumed);
	cr_expect_eq(cs[1].cluster.gpus_per_node, 8);
	cr_expect_eq(cs[1].cluster.nvlink_domain, 8);
	free(cs);
}

/* Cells as published tables give them.  Each case is the B200 Llama 3 8B
 * row (8 GPUs, tp1 pp1, mbs 2, gbs 128, seq 8192) with one cell written
 * another way; the expected numbers are worked here, not taken from
 * pplan: 31,357 tokens/s per GPU is a step of 128 x 8192 / (31,357 x 8)
 * = 4.1798 s. */
#define ROW_MODEL "\"model\": {\"name\": \"Meta-Llama-3-8B\", \"seq_length\": 8192}, "
#define ROW_HW "\"hardware\": {\"gpu\": \"DGX-B200\", \"num_gpus\": 8}, "
#define ROW_LAYOUT "\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, \"global_batch_size\": 128, \"precision\": \"FP8-CS\"}, "
#define ROW_STEP "\"measured\": {\"step_time_s\": 4.37}}"
Test(cases, cells_as_tables_write_them)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"tokens\", \"source\": \"s\", \"framework\": \"megatron-bridge 25.09\", "
		ROW_MODEL ROW_HW ROW_LAYOUT "\"measured\": {\"tokens_per_sec_per_gpu\": 31357}},"
		"{\"id\": \"tflops\", \"source\": \"s\", \"framework\": {\"name\": \"Megatron Bridge\", \"version\": 25.09}, "
		ROW_MODEL ROW_HW ROW_LAYOUT "\"measured\": {\"tflops_per_gpu\": 1614}},"
		"{\"id\": \"cells\", \"source\": \"s\", " ROW_MODEL
		"\"hardware\": {\"gpu\": \"HGX B200\"}, "
		"\"layout\": {\"tp\": \"1\", \"pp\": 1, \"vp\": \"n/a\", \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"zero\": \"FSDP\", \"precision\": \"FP8-CS\"}, "
		"\"measured\": {\"step_time_s\": \"4.37\"}},"
		"{\"id\": \"no-dp\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"micro_batch_size\": 2, \"global_batch_size\": 128}, " ROW_STEP ","
		"{\"id\": \"unnamed\", \"source\": \"s\", \"model\": {\"name\": \"Some-New-Model\", \"seq_length\": 8192}, "
		ROW_HW ROW_LAYOUT ROW_STEP ","
		"{\"id\": \"mfu\", \"source\": \"s\", " ROW_MODEL ROW_HW ROW_LAYOUT
		"\"measured\": {\"mfu_pct\": 30}},"
		"{\"id\": \"nodes\", \"source\": \"s\", " ROW_MODEL
		"\"hardware\": {\"gpu\": \"GB200\", \"num_nodes\": 2}, "
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"micro_batch_size\": 2, \"global_batch_size\": 128}, " ROW_STEP "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	const struct model_spec *z = model_find("llama3-8b");

	cr_assert_eq(n, 7);
	for (int i = 0; i < 4; i++) {
		cr_assert(cs[i].predictable, "%s: %s", cs[i].id, cs[i].skip_reason);
		cr_expect_eq(model_params_total(&cs[i].model), model_params_total(z),
			     "%s: the zoo's Llama 3 8B by its name", cs[i].id);
		cr_expect_str_eq(cs[i].cluster.gpu.name, "b200", "%s", cs[i].id);
		cr_expect_eq(cs[i].model.seq, 8192);
	}
	/* tokens/s per GPU: no FLOP convention needed */
	cr_expect_float_eq(cs[0].measured_step_s, 128.0 * 8192 / (31357.0 * 8), 1e-9);
	cr_expect(strstr(cs[0].framework_given, "megatron-bridge 25.09") != NULL, "%s",
		  cs[0].framework_given);
	/* TFLOP/s without a convention: model FLOPs, 6 x params x tokens +
	 * attention (MODEL.md 2), said */
	cr_expect(isfinite(cs[1].measured_step_s));
	cr_expect_float_eq(cs[1].measured_step_s,
			   cost_model_flops(&cs[1].model, 8192, 128) / (1614e12 * 8), 1e-9);
	cr_expect(strstr(cs[1].assumed, "read as model FLOPs") != NULL, "%s", cs[1].assumed);
	cr_expect(strstr(cs[1].assumed, "priced as 0.1") != NULL, "%s", cs[1].assumed);
	/* "1", "n/a", "FSDP", "4.37" and a missing num_gpus */
	cr_expect_eq(cs[2].layout.tp, 1);
	cr_expect_eq(cs[2].layout.vp, 1);
	cr_expect_eq(cs[2].layout.zero, 3);
	cr_expect_float_eq(cs[2].measured_step_s, 4.37, 1e-12);
	cr_expect_eq(cluster_gpus(&cs[2].cluster), 8);
	/* dp from the GPUs the others leave */
	cr_expect_eq(cs[3].layout.dp, 8);
	/* MFU alone: over the B200's dense bf16 peak, 2,250 TFLOP/s (30 %:
	 * 675), model FLOPs, even in an fp8 run */
	cr_assert(cs[5].predictable, "%s", cs[5].skip_reason);
	cr_expect_float_eq(cs[5].measured_step_s,
			   cost_model_flops(&cs[5].model, 8192, 128) / (675e12 * 8), 1e-9);
	/* two GB200 trays: 8 GPUs, dp 8 */
	cr_assert(cs[6].predictable, "%s", cs[6].skip_reason);
	cr_expect_eq(cluster_gpus(&cs[6].cluster), 8);
	cr_expect_eq(cs[6].layout.dp, 8);
	/* a name the zoo does not know and nothing else: not predicted */
	cr_expect(!cs[4].predictable);
	cr_expect(strstr(cs[4].skip_reason, "architecture is incomplete") != NULL, "%s",
		  cs[4].skip_reason);
	free(cs);
}

/* Llama 4 Maverick two ways: the flat keys with the moe block as the
 * DGX Cloud case writes it (128 experts of 8192, one shared, every second
 * layer MoE, dense layers of 16384), and hf_config naming the config.json
 * file.  The two readers share no code path for these keys: the same
 * parameters, the same per-layer widths.  A name that is neither a file
 * nor a zoo model is not predicted. */
Test(cases, hf_config_by_reference)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"flat\", \"source\": \"s\", \"model\": {\"seq_length\": 8192,"
		" \"num_layers\": 48, \"hidden_size\": 5120, \"ffn_hidden_size\": 16384,"
		" \"num_attention_heads\": 40, \"num_kv_heads\": 8, \"vocab_size\": 202048,"
		" \"head_dim\": 128, \"mlp\": \"swiglu\", \"moe\": {\"num_experts\": 128, \"top_k\": 1,"
		" \"moe_ffn_hidden_size\": 8192, \"shared_experts\": 1,"
		" \"shared_expert_ffn_hidden_size\": 8192, \"moe_every\": 2}}, " CASE_REST ","
		"{\"id\": \"file\", \"source\": \"s\", \"model\": {\"seq_length\": 8192, \"hf_config\": \""
		PPLAN_SOURCE_DIR "/tests/fixtures/hf/Llama-4-Maverick-17B-128E.json\"}, " CASE_REST ","
		"{\"id\": \"missing\", \"source\": \"s\", \"model\": {\"hf_config\": \"no-such-config.json\"}, "
		CASE_REST "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);

	cr_assert_eq(n, 3);
	cr_assert(cs[0].predictable && cs[1].predictable, "%s / %s", cs[0].skip_reason,
		  cs[1].skip_reason);
	cr_expect_eq(model_params_total(&cs[1].model), model_params_total(&cs[0].model),
		     "file %.0f, flat %.0f", model_params_total(&cs[1].model),
		     model_params_total(&cs[0].model));
	cr_expect_eq(model_params_active(&cs[1].model), model_params_active(&cs[0].model));
	cr_expect_eq(cs[1].model.moe_every, 2);
	cr_expect_eq(cs[1].model.seq, 8192);
	cr_expect(!cs[2].predictable);
	cr_expect(strstr(cs[2].skip_reason, "neither a readable file") != NULL, "%s",
		  cs[2].skip_reason);
	free(cs);
}

/* An ep no pipeline stage can hold (16 expert ranks, 8 GPUs a stage:
 * pp 2 of 16 GPUs) is priced at the largest that fits, 8, and said. */
Test(cases, ep_beyond_a_stage_is_fitted)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"ep16\", \"source\": \"s\", \"model\": {\"name\": \"Qwen3-30B-A3B\"},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 16},"
		" \"layout\": {\"tp\": 1, \"pp\": 2, \"dp\": 8, \"ep\": 16, \"global_batch_size\": 512},"
		" \"measured\": {\"step_time_s\": 2.0}}]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);

	cr_assert_eq(n, 1);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	cr_expect_eq(cs[0].layout.ep, 8);
	cr_expect(strstr(cs[0].assumed, "the source's ep=16") != NULL, "%s", cs[0].assumed);
	free(cs);
}

/* No parallel degrees at all: the layout pplan's search ranks first is
 * priced, said, and kept out of the fit (a guessed layout is no test of
 * the constants).  The search's layout must use the case's 64 GPUs and
 * batch. */
Test(cases, no_layout_takes_the_search_best)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"none\", \"source\": \"s\", \"model\": {\"name\": \"llama3-70b\", \"seq_length\": 8192},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 64},"
		" \"layout\": {\"tp\": null, \"pp\": null, \"dp\": null, \"global_batch_size\": 128},"
		" \"measured\": {\"step_time_s\": 10.0}},"
		"{\"id\": \"partial\", \"source\": \"s\", \"model\": {\"name\": \"llama3-70b\"},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 64},"
		" \"layout\": {\"dp\": 8, \"global_batch_size\": 128},"
		" \"measured\": {\"step_time_s\": 10.0}}]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	const struct layout *l = &cs[0].layout;

	cr_assert_eq(n, 2);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	cr_expect(cs[0].layout_searched);
	cr_expect_eq((long)l->tp * l->pp * l->dp * l->cp, 64, "tp %d pp %d dp %d cp %d", l->tp,
		     l->pp, l->dp, l->cp);
	cr_expect_eq(l->gbs, 128);
	cr_expect(strstr(cs[0].assumed, "pplan search's best layout") != NULL, "%s", cs[0].assumed);
	/* a source that gives some degrees but not tp and pp: not guessed */
	cr_expect(!cs[1].predictable);
	cr_expect(!cs[1].layout_searched);
	{
		/* its error is reported apart, not in the file's MAPE */
		struct case_outcome out[2];
		struct validation_summary sum;
		memset(out, 0, sizeof out);
		memset(&sum, 0, sizeof sum);
		validation_predict(cs, n, NULL, 1, out);
		validation_summarise(cs, n, out, &sum);
		cr_expect(out[0].compared);
		cr_expect_eq(sum.all.n, 0);
		cr_expect_eq(sum.searched.n, 1);
		cr_expect_eq(sum.npred, 1);
		cr_expect_eq(sum.oom_total, 0);
	}
	free(cs);
}

/* One unreadable case next to a good one: the good one is predicted. */
Test(cases, one_bad_case_leaves_the_rest)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": [7,"
		"{\"id\": \"top-k-alone\", \"source\": \"s\", \"model\": {\"num_layers\": 4,"
		" \"hidden_size\": 512, \"num_attention_heads\": 8, \"vocab_size\": 1000,"
		" \"moe\": {\"top_k\": 2}}, " CASE_REST ","
		"{\"id\": \"ok\", \"source\": \"s\", \"model\": {\"num_layers\": 4,"
		" \"hidden_size\": 512, \"num_attention_heads\": 8, \"vocab_size\": 1000,"
		" \"moe\": {\"num_experts\": 8, \"top_k\": 2}}, "
		CASE_REST "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);

	cr_assert_eq(n, 3);
	cr_assert_str_eq(cs[0].id, "case-0");
	cr_assert_eq(cs[0].predictable, 0);
	cr_assert_eq(cs[1].predictable, 0);
	cr_assert(strstr(cs[1].skip_reason, "top_k 2 needs num_experts") != NULL, "%s",
		  cs[1].skip_reason);
	cr_assert(cs[2].predictable, "%s", cs[2].skip_reason);
	free(cs);
}

/* ---- pplan validate --json, parsed ------------------------------------------ */


static const cJSON *member(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	cr_assert_not_null(x, "no member '%s'", key);
	return x;
}

/* The pplan.validation/1 document of the one-case fixture: the keys
 * pplan.validation/1 has (docs/design.md), numbers where there are numbers, null where the
 * source gives none (memory), the error computed from the two times. */
Test(cases, validation_report_json)
{
	char dir[] = "/tmp/pplan-test-XXXXXX", out[64];
	char *argv[] = { "pplan", "validate", BAD "cases-good.json", "--json", out, NULL };
	cJSON *root = NULL;
	struct perr e = { "" };
	const cJSON *cs, *c, *sum;
	double pred, err;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/v.json", dir);
	cr_assert_eq(run_pplan(argv), 0);
	cr_assert_eq(json_read_file(out, &root, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_str_eq(member(root, "schema")->valuestring, "pplan.validation/1");
	cs = member(root, "cases");
	cr_assert(cJSON_IsArray(cs));
	cr_assert_eq(cJSON_GetArraySize(cs), 1);
	c = cJSON_GetArrayItem(cs, 0);
	cr_assert_str_eq(member(c, "id")->valuestring, "tiny-gpt-8gpu");
	cr_assert(cJSON_IsNumber(member(c, "predicted_step_time_s")));
	pred = member(c, "predicted_step_time_s")->valuedouble;
	cr_assert_gt(pred, 0);
	cr_assert_eq(member(c, "measured_step_time_s")->valuedouble, 1.0);
	err = member(c, "step_time_error_pct")->valuedouble;
	cr_assert(fabs(err - 100.0 * (pred - 1.0) / 1.0) < 1e-9 * fabs(err) + 1e-12,
		  "error %g %% for %g s against 1 s", err, pred);
	cr_assert(cJSON_IsNumber(member(c, "predicted_memory_gib")));
	cr_assert(cJSON_IsNull(member(c, "measured_memory_gib")), "missing is null");
	cr_assert(cJSON_IsNull(member(c, "memory_error_pct")), "missing is null");
	cr_assert(cJSON_IsBool(member(c, "predicted_oom")));
	cr_assert(cJSON_IsFalse(member(c, "measured_oom")));
	cr_assert(strstr(member(c, "assumed")->valuestring, "mbs=1") != NULL);
	sum = member(root, "summary");
	cr_assert(fabs(member(sum, "step_time_mape_pct")->valuedouble - fabs(err)) <
		  1e-9 * fabs(err) + 1e-12);
	cr_assert_eq(member(sum, "n_step_time")->valuedouble, 1);
	cr_assert_eq(member(sum, "n_memory")->valuedouble, 0);
	cr_assert(cJSON_IsNull(member(sum, "memory_mape_pct")));
	cr_assert(cJSON_IsNumber(member(sum, "oom_agreement")));
	cJSON_Delete(root);
	remove(out);
	rmdir(dir);
}

/* A pp that does not divide the layers: a Megatron-family case is split
 * as Megatron splits it (126 on 16: 7 + 14 x 8 + 7, by hand), a
 * Megatron-DeepSpeed case by DeepSpeed's partition (no first/last
 * counts); both are predicted, and each says how. */
Test(cases, uneven_stages_by_framework)
{
	struct vcase *cs = NULL;
	struct perr e = { "" };
	int n = 0;
	char path[512];

	snprintf(path, sizeof path, "%s/tests/fixtures/cases/uneven.json", PPLAN_SOURCE_DIR);
	cr_assert_eq(cases_load(path, &cs, &n, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(n, 2);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	/* 126 layers + the embedding and the loss = 128 units over 16
	 * stages: 7 on the first and last, 8 on the others (NVIDIA's split,
	 * which Megatron's uneven 7/7 equals here). */
	cr_expect(cs[0].layout.pp_embed && cs[0].layout.pp_loss);
	cr_expect_eq(layout_stage_layers(&cs[0].layout, 126, PART_FIRST_LAST, 0), 7);
	cr_expect_eq(layout_stage_layers(&cs[0].layout, 126, PART_FIRST_LAST, 1), 8);
	cr_expect_eq(layout_stage_layers(&cs[0].layout, 126, PART_FIRST_LAST, 15), 7);
	cr_expect(strstr(cs[0].assumed, "embedding and loss as pipeline layers") != NULL, "%s",
		  cs[0].assumed);
	cr_assert(cs[1].predictable, "%s", cs[1].skip_reason);
	cr_expect_eq(cs[1].layout.pp_first + cs[1].layout.pp_last, 0);
	cr_expect(strstr(cs[1].assumed, "DeepSpeed partitions 126 layers") != NULL, "%s",
		  cs[1].assumed);
	for (int i = 0; i < n; i++) {
		struct prediction p;
		cr_assert_eq(vcase_predict(&cs[i], &p, &e), PPLAN_OK, "%s", e.msg);
		cr_expect(p.step_time_s > 0);
	}
	free(cs);
}

/* A run that fitted where its layout with the framework's default (no
 * recomputation) does not: Llama 3 70B with Megatron FSDP on 64 GB200s
 * at 2 x 8192 tokens (Megatron-Bridge's recipe, which offloads 40 layers'
 * activations), and the same model pipelined (pp 4, vp 5), where
 * offloading is not allowed.  Each takes the framework's knob at its
 * least setting that fits: one layer fewer does not fit, and the case is
 * priced as predict prices that layout. */
#define LLAMA70B_GB200(layout) \
	"{\"id\": \"x\", \"source\": \"s\", \"framework\": {\"name\": \"megatron-bridge\"," \
	" \"version\": \"25.11\"}, \"model\": {\"name\": \"llama3-70b\", \"seq_length\": 8192," \
	" \"num_layers\": 80, \"hidden_size\": 8192, \"ffn_hidden_size\": 28672," \
	" \"num_attention_heads\": 64, \"num_kv_heads\": 8, \"vocab_size\": 128256," \
	" \"mlp\": \"swiglu\"}, \"hardware\": {\"gpu\": \"GB200\", \"num_gpus\": 64," \
	" \"gpus_per_node\": 4}, \"layout\": {" layout ", \"precision\": \"fp8\"}," \
	" \"measured\": {\"step_time_s\": 7.6}}"

static void expect_least_that_fits(struct vcase *vc, int *knob, const char *what)
{
	struct prediction p, q;
	struct perr e = { "" };
	cr_assert_eq(vcase_predict(vc, &p, &e), PPLAN_OK, "%s", e.msg);
	cr_assert(p.feasible, "%s: %s", what, p.reject_msg);
	cr_assert_gt(*knob, 0, "%s: %s", what, vc->assumed);
	cr_assert(strstr(vc->assumed, what) != NULL && strstr(vc->assumed, "instead") != NULL,
		  "%s", vc->assumed);
	cr_assert_eq(predict_layout(&vc->model, &vc->cluster, &vc->layout, &vc->opts, &q, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_assert_float_eq(q.step_time_s, p.step_time_s, 1e-12 * p.step_time_s);
	/* One layer fewer; none at all is the default, no recomputation. */
	if (--*knob == 0)
		vc->layout.recompute = RECOMPUTE_NONE;
	cr_assert_eq(predict_layout(&vc->model, &vc->cluster, &vc->layout, &vc->opts, &q, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_assert_not(q.feasible, "%s: one layer fewer fits too", what);
}

Test(cases, fallback_takes_the_least_knob_that_fits)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		LLAMA70B_GB200("\"tp\": 1, \"pp\": 1, \"dp\": 64, \"micro_batch_size\": 2,"
			       " \"global_batch_size\": 256, \"zero\": 3") ","
		LLAMA70B_GB200("\"tp\": 2, \"pp\": 4, \"dp\": 8, \"vp\": 5, \"micro_batch_size\": 2,"
			       " \"global_batch_size\": 128") ","
		LLAMA70B_GB200("\"tp\": 2, \"pp\": 4, \"dp\": 8, \"vp\": 5, \"micro_batch_size\": 2,"
			       " \"global_batch_size\": 128, \"recompute_num_layers\": 2") "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);

	cr_assert_eq(n, 3);
	for (int i = 0; i < n; i++)
		cr_assert(cs[i].predictable, "%s", cs[i].skip_reason);
	expect_least_that_fits(&cs[0], &cs[0].layout.offload_layers, "offload_layers=");
	expect_least_that_fits(&cs[1], &cs[1].layout.recompute_layers, "recompute_layers=");
	cr_assert_eq(cs[1].layout.offload_layers, 0, "no offloading with pp > 1");
	/* Given: Megatron's recompute_num_layers is the block method. */
	cr_assert_eq(cs[2].layout.recompute, RECOMPUTE_FULL);
	cr_assert_eq(cs[2].layout.recompute_layers, 2);
	cr_assert_not(cs[2].recompute_unknown);
	free(cs);
}

/* 61 layers on pp 4 x vp 4: no even split (61 is prime), no edge split
 * (63 units over 16 chunks), no Megatron first/last split (a middle of
 * 16, edges of 17 and 12, are not multiples of vp); Megatron-Bridge
 * runs it with a layout string, and the case is priced at the balanced
 * one (sim/MODEL.md 6.1: ranks of 14, 16, 16 and 15 layers), said;
 * NeMo 2.0 (25.04), which takes no string, leaves it unpredicted. */
#define LAYERS61(fw, ver) LAYERS61_WITH(fw, ver, "")
#define LAYERS61_WITH(fw, ver, more) \
	"{\"id\": \"" ver "\", \"source\": \"s\", \"framework\": {\"name\": \"" fw "\"," \
	" \"version\": \"" ver "\"}, \"model\": {\"name\": \"l61\", \"seq_length\": 4096," \
	" \"num_layers\": 61, \"hidden_size\": 4096, \"ffn_hidden_size\": 14336," \
	" \"num_attention_heads\": 32, \"num_kv_heads\": 8, \"vocab_size\": 128256," \
	" \"mlp\": \"swiglu\"}, \"hardware\": {\"gpu\": \"B200\", \"num_gpus\": 64}," \
	" \"layout\": {\"tp\": 1, \"pp\": 4, \"vp\": 4, \"dp\": 16, \"micro_batch_size\": 1," \
	" \"global_batch_size\": 256, \"precision\": \"bf16\"" more "}, \"measured\": {\"step_time_s\": 5.0}}"
Test(cases, no_split_takes_the_balanced_layout_string)
{
	static const char text[] = "{\"schema\": \"pplan.cases/1\", \"cases\": ["
		LAYERS61("megatron-bridge", "25.11") "," LAYERS61("nemo", "25.04") ","
		LAYERS61_WITH("megatron-bridge", "25.09",
			      ", \"pipeline_model_parallel_layout\": \"Et*3(|t*4)*11|t*3(|t*4)*2|t*3L\"") ","
		LAYERS61_WITH("megatron-bridge", "0.2",
			      ", \"pipeline_model_parallel_layout\": \"Et*3(|t*4)*11|t*3(|t*4)*2|t*4L\"") "]}";
	struct prediction q;
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	struct prediction p;
	struct perr e = { "" };

	cr_assert_eq(n, 4);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	cr_assert_eq(cs[0].layout.pp_table, pp_table_balanced(61, 4, 4));
	cr_expect_eq(layout_stage_layers(&cs[0].layout, 61, PART_FIRST_LAST, 0), 14);
	cr_expect_eq(layout_stage_layers(&cs[0].layout, 61, PART_FIRST_LAST, 3), 15);
	cr_expect(strstr(cs[0].assumed, "balanced pipeline layout 'Et*3(|t*4)*11|t*3(|t*4)*2|t*3L'"),
		  "%s", cs[0].assumed);
	cr_assert_eq(vcase_predict(&cs[0], &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_gt(p.step_time_s, 0);
	/* the same string given by the case: the same table and step */
	cr_assert(cs[2].predictable, "%s", cs[2].skip_reason);
	cr_expect_eq(cs[2].layout.pp_table, cs[0].layout.pp_table);
	cr_expect(strstr(cs[2].assumed, "the split of its pipeline layout"), "%s", cs[2].assumed);
	cr_assert_eq(vcase_predict(&cs[2], &q, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_float_eq(q.step_time_s, p.step_time_s, 1e-12 * p.step_time_s);
	/* one layer too many: that case alone not predicted, with the count */
	cr_expect_not(cs[3].predictable);
	cr_expect(strstr(cs[3].skip_reason, "places 62 transformer layers, the model has 61"), "%s",
		  cs[3].skip_reason);
	cr_expect_not(cs[1].predictable, "NeMo 2.0 takes no layout string");
	cr_expect(strstr(cs[1].skip_reason, "pp does not divide layers") ||
		  strstr(cs[1].skip_reason, "pipeline layout"), "%s", cs[1].skip_reason);
	free(cs);
}

/* A case's hf_config without head_dim (Mixtral's config.json has none)
 * takes hidden / heads, as a config.json file does: the same step as the
 * flat keys, not the NaN a zero head width gave; and a precision written
 * as its recipe (FP8-CS) is fp8 with that recipe, and NVFP4 or MXFP8 on an
 * H100 that case alone unpredicted (Transformer Engine's NVFP4 needs fp4
 * tensor cores, its MXFP8 Blackwell). */
#define MIXTRAL_REST(prec) \
	"\"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 64}," \
	" \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 64, \"ep\": 8, \"global_batch_size\": 512," \
	" \"precision\": \"" prec "\"}, \"measured\": {\"step_time_s\": 2.0}}"
Test(cases, hf_config_without_head_dim)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"hf\", \"source\": \"s\", \"model\": {\"seq_length\": 4096, \"hf_config\":"
		" {\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336,"
		" \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8,"
		" \"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000,"
		" \"hidden_act\": \"silu\"}}, " MIXTRAL_REST("FP8-CS") ","
		"{\"id\": \"flat\", \"source\": \"s\", \"model\": {\"seq_length\": 4096, \"num_layers\": 32,"
		" \"hidden_size\": 4096, \"ffn_hidden_size\": 14336, \"num_attention_heads\": 32,"
		" \"num_kv_heads\": 8, \"vocab_size\": 32000, \"mlp\": \"swiglu\","
		" \"moe\": {\"num_experts\": 8, \"top_k\": 2}}, " MIXTRAL_REST("fp8") ","
		"{\"id\": \"fp4\", \"source\": \"s\", \"model\": {\"seq_length\": 4096, \"num_layers\": 32,"
		" \"hidden_size\": 4096, \"ffn_hidden_size\": 14336, \"num_attention_heads\": 32,"
		" \"num_kv_heads\": 8, \"vocab_size\": 32000, \"mlp\": \"swiglu\","
		" \"moe\": {\"num_experts\": 8, \"top_k\": 2}}, " MIXTRAL_REST("NVFP4") ","
		"{\"id\": \"mx\", \"source\": \"s\", \"model\": {\"seq_length\": 4096, \"num_layers\": 32,"
		" \"hidden_size\": 4096, \"ffn_hidden_size\": 14336, \"num_attention_heads\": 32,"
		" \"num_kv_heads\": 8, \"vocab_size\": 32000, \"mlp\": \"swiglu\","
		" \"moe\": {\"num_experts\": 8, \"top_k\": 2}}, " MIXTRAL_REST("FP8-MX") "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	struct prediction a, b;
	struct perr e = { "" };

	cr_assert_eq(n, 4);
	cr_assert(cs[0].predictable && cs[1].predictable);
	cr_assert_eq(cs[0].model.head_dim, 128);
	cr_assert_eq(cs[0].opts.precision, PREC_FP8);
	cr_assert_eq(cs[0].opts.b.fp8_recipe, FP8_TENSORWISE);
	cr_assert_eq(cs[1].opts.b.fp8_recipe, FP8_DELAYED, "Megatron-Core's own");
	cr_assert_not(cs[3].predictable);
	cr_assert(strstr(cs[3].skip_reason, "MXFP8 needs a Blackwell GPU") != NULL, "%s",
		  cs[3].skip_reason);
	cr_assert_eq(cs[2].opts.precision, PREC_FP8);
	cr_assert_not(cs[2].predictable);
	cr_assert(strstr(cs[2].skip_reason, "NVFP4 needs a GPU with fp4 tensor cores") != NULL, "%s",
		  cs[2].skip_reason);
	cr_assert_eq(vcase_predict(&cs[0], &a, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(vcase_predict(&cs[1], &b, &e), PPLAN_OK, "%s", e.msg);
	cr_assert(a.step_time_s > 0 && isfinite(a.step_time_s), "%g", a.step_time_s);
	cr_assert_float_eq(a.step_time_s, b.step_time_s, 1e-9 * b.step_time_s);
	free(cs);
}

/* layout.schedule: the source's pipeline schedule (DeepSeek's DualPipe
 * for a run of their own), kept; a name pplan does not know leaves that
 * case alone unpredicted, saying so. */
Test(cases, schedule_given)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"dual\", \"source\": \"s\", \"framework\": {\"name\": \"other\", \"year\": 2024},"
		" \"model\": {\"num_layers\": 4, \"hidden_size\": 512, \"num_attention_heads\": 8,"
		" \"vocab_size\": 1000}, \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 16},"
		" \"layout\": {\"tp\": 1, \"pp\": 2, \"dp\": 8, \"global_batch_size\": 512,"
		" \"schedule\": \"dualpipe\"}, \"measured\": {\"step_time_s\": 2.0}},"
		"{\"id\": \"odd\", \"source\": \"s\", \"model\": {\"num_layers\": 4,"
		" \"hidden_size\": 512, \"num_attention_heads\": 8, \"vocab_size\": 1000},"
		" \"hardware\": {\"gpu\": \"H100-SXM5-80GB\", \"num_gpus\": 16},"
		" \"layout\": {\"tp\": 1, \"pp\": 2, \"dp\": 8, \"global_batch_size\": 512,"
		" \"schedule\": \"zigzag\"}, \"measured\": {\"step_time_s\": 2.0}}]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);

	cr_assert_eq(n, 2);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	cr_expect_eq(cs[0].layout.schedule, SCHED_DUALPIPE);
	cr_assert_eq(cs[1].predictable, 0);
	cr_expect(strstr(cs[1].skip_reason, "layout.schedule 'zigzag'") != NULL, "%s",
		  cs[1].skip_reason);
	free(cs);
}

/* A fine-tuning run: layout.peft as --peft takes it, or the rank alone
 * (NeMo's and Megatron-Bridge's dim); a method pplan does not price
 * leaves that case unpredicted, as does a method it cannot read.  Its LoRA prices as the job with
 * --peft lora:16 (sim/MODEL.md 4.7): only the adapters' gradients. */
Test(cases, peft_given)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"lora\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"peft\": \"lora:16\"}, " ROW_STEP ","
		"{\"id\": \"dim\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"lora_dim\": 16}, " ROW_STEP ","
		"{\"id\": \"sft\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"peft\": \"full\"}, " ROW_STEP ","
		"{\"id\": \"dora\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"peft\": \"dora\"}, " ROW_STEP ","
		"{\"id\": \"cell\", \"source\": \"s\", \"finetuning\": \"LoRA\", " ROW_MODEL ROW_HW
		ROW_LAYOUT ROW_STEP ","
		"{\"id\": \"name\", \"source\": \"s\", "
		"\"model\": {\"name\": \"LLAMA3-8B LoRA\", \"seq_length\": 8192}, " ROW_HW
		ROW_LAYOUT ROW_STEP ","
		"{\"id\": \"sft\", \"source\": \"s\", \"task\": \"SFT\", "
		"\"model\": {\"name\": \"Llama-3-8B-SFT\", \"seq_length\": 8192}, " ROW_HW
		ROW_LAYOUT ROW_STEP ","
		"{\"id\": \"peft\", \"source\": \"s\", "
		"\"model\": {\"name\": \"Llama3 8B PEFT\", \"seq_length\": 8192}, " ROW_HW
		ROW_LAYOUT ROW_STEP ","
		"{\"id\": \"cpt\", \"source\": \"s\", \"task\": \"continued pretraining\", "
		"\"model\": {\"name\": \"LLAMA3-8B LoRA\", \"seq_length\": 8192}, " ROW_HW
		ROW_LAYOUT ROW_STEP ","
		"{\"id\": \"odd\", \"source\": \"s\", \"task\": \"distillation\", " ROW_MODEL ROW_HW
		ROW_LAYOUT ROW_STEP "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	struct prediction p[3];
	struct perr e = { "" };

	cr_assert_eq(n, 10);
	for (int i = 0; i < 3; i++) {
		cr_assert(cs[i].predictable, "%s: %s", cs[i].id, cs[i].skip_reason);
		cr_assert_eq(vcase_predict(&cs[i], &p[i], &e), PPLAN_OK, "%s", e.msg);
	}
	cr_expect_eq(cs[0].opts.lora_rank, 16);
	cr_expect_eq(cs[1].opts.lora_rank, 16);
	cr_expect_eq(cs[2].opts.lora_rank, 0);
	/* Llama 3 8B's adapters at rank 16: 69,632 x 16 x 32 layers =
	 * 35,651,584, fp32 gradients */
	cr_expect_float_eq(p[0].mem.gradients, 4.0 * 35651584, 1e-6);
	cr_expect_float_eq(p[1].mem.gradients, p[0].mem.gradients, 1e-12);
	cr_expect_gt(p[2].mem.gradients, 100 * p[0].mem.gradients, "full fine-tuning: every weight");
	cr_expect_eq(cs[3].predictable, 0);
	cr_expect(strstr(cs[3].skip_reason, "layout.peft 'dora'") != NULL, "%s", cs[3].skip_reason);
	/* the method as a table's cell or a word of the model's name: LoRA at
	 * NeMo's default dim, on the zoo's Llama 3 8B; SFT trains every weight */
	for (int i = 4; i < 7; i++) {
		cr_assert(cs[i].predictable, "%s: %s", cs[i].id, cs[i].skip_reason);
		cr_expect_eq(model_params_total(&cs[i].model), model_params_total(model_find("llama3-8b")),
			     "%s", cs[i].id);
	}
	cr_expect_eq(cs[4].opts.lora_rank, 32);
	cr_expect_eq(cs[5].opts.lora_rank, 32);
	cr_expect_eq(cs[6].opts.lora_rank, 0);
	/* "PEFT" alone is LoRA (NeMo's and Bridge's default scheme); a task
	 * cell outranks the name's words; a cell pplan cannot read leaves
	 * that case alone unpredicted */
	cr_assert(cs[7].predictable, "%s", cs[7].skip_reason);
	cr_expect_eq(cs[7].opts.lora_rank, 32);
	cr_assert(cs[8].predictable, "%s", cs[8].skip_reason);
	cr_expect_eq(cs[8].opts.lora_rank, 0, "continued pretraining trains every weight");
	cr_expect_eq(cs[9].predictable, 0);
	cr_expect(strstr(cs[9].skip_reason, "task 'distillation' is not a method") != NULL, "%s",
		  cs[9].skip_reason);
	free(cs);
}

/* The linears a LoRA run adapts (layout.lora_target_modules, as the
 * recipes' target_modules): linear_qkv alone on Llama 3 8B at rank 16 is
 * 16 x 32 layers x (4096 + 6144) = 5,242,880 adapters, fp32 gradients.
 * Targets without LoRA, or a name pplan does not price, leave that case
 * unpredicted. */
Test(cases, lora_target_modules)
{
	static const char text[] =
		"{\"schema\": \"pplan.cases/1\", \"cases\": ["
		"{\"id\": \"qkv\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"peft\": \"lora:16\", "
		"\"lora_target_modules\": [\"linear_qkv\"]}, " ROW_STEP ","
		"{\"id\": \"full\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"lora_target_modules\": [\"linear_qkv\"]}, " ROW_STEP ","
		"{\"id\": \"router\", \"source\": \"s\", " ROW_MODEL ROW_HW
		"\"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"micro_batch_size\": 2, "
		"\"global_batch_size\": 128, \"peft\": \"lora\", "
		"\"lora_target_modules\": [\"router\"]}, " ROW_STEP "]}";
	int n = 0;
	struct vcase *cs = load_text(text, &n);
	struct prediction p;
	struct perr e = { "" };

	cr_assert_eq(n, 3);
	cr_assert(cs[0].predictable, "%s", cs[0].skip_reason);
	cr_assert_eq(vcase_predict(&cs[0], &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(cs[0].opts.lora_targets, LORA_QKV);
	cr_expect_float_eq(p.mem.gradients, 4.0 * 5242880, 1e-6);
	cr_expect_eq(cs[1].predictable, 0);
	cr_expect(strstr(cs[1].skip_reason, "layout.lora_target_modules names the linears LoRA adapts") != NULL,
		  "%s", cs[1].skip_reason);
	cr_expect_eq(cs[2].predictable, 0);
	cr_expect(strstr(cs[2].skip_reason, "'router' is not a module") != NULL, "%s", cs[2].skip_reason);
	free(cs);
}
