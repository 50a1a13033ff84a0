/*
 * test_cost.c: model FLOPs against the papers, and the predictions'
 * consistency.
 *
 * Model FLOPs of a GPT step (Narayanan et al. 2021, Section 5.1, no
 * recomputation counted):
 *   F = 72 B s l h^2 (1 + s / 6h + V / 12 l h)
 * which is 3 (forward + backward) x s B tokens x the forward FLOPs per
 * token, l (24 h^2 + 4 s h) + 2 h V.  Generalised (sim/MODEL.md section 2): QKV
 * 2 h (a + 2g) dh, output projection 2 a dh h, MLP 2 x (2 or 3 matrices)
 * x h f x top-k, attention scores and values 4 s a dh, LM head 2 h V.
 * MFU = model FLOPs / (step time x GPUs x dense peak of the precision).
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

#include "cost.h"
#include "cost_internal.h"
#include "jsonio.h"
#include "testutil.h"
#include "memory.h"
#include "framework.h"
#include "predict.h"
#include "units.h"


static void expect_rel(double got, double want, double tol, const char *what)
{
	double err = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1.0);
	cr_expect(err <= tol, "%s: got %.15g, want %.15g (rel err %.2g)", what,
		  got, want, err);
}

static const struct model_spec *zoo(const char *name)
{
	const struct model_spec *m = model_find(name);
	cr_assert_not_null(m, "%s is not in the zoo", name);
	return m;
}

/* ---- Model FLOPs ---------------------------------------------------------- */

Test(model_flops, gpt3_175b_megatron_formula)
{
	/* GPT-3 175B as Narayanan et al. count it: h 12288, l 96, a 96,
	 * s 2048, V 51200, batch 1536. */
	struct model_spec m;
	/* 72 B s l h^2 (1 + s/6h + V/12lh), term by term below */
	double want = 3283124128353091584.0 + 91197892454252544.0 + 11874725579980800.0;

	memset(&m, 0, sizeof m);
	strcpy(m.name, "gpt3-175b by hand");
	m.layers = 96;
	m.hidden = 12288;
	m.ffn = 4 * 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.head_dim = 128;
	m.vocab = 51200;
	m.seq = 2048;
	m.mlp = MLP_GELU;
	m.norm = NORM_LAYERNORM;
	m.tied_embeddings = 1;
	m.linear_bias = 1;
	/* 72 B s l h^2 = 3,283,124,128,353,091,584; the s/6h term adds
	 * 12 B s^2 l h = 91,197,892,454,252,544; the V/12lh term
	 * 6 B s h V = 11,874,725,579,980,800: 3.386197e18 FLOPs. */
	expect_rel(cost_model_flops(&m, 2048, 1536), want, 1e-9, "by-hand spec");
	expect_rel(cost_model_flops(zoo("gpt3-175b"), 2048, 1536), want, 1e-9,
		   "zoo gpt3-175b");
}

/* Linear in the batch; in s, the attention term grows as s^2. */
Test(model_flops, scaling)
{
	const struct model_spec *m = zoo("gpt3-175b");
	double h = 12288, l = 96, V = 51200;
	expect_rel(cost_model_flops(m, 2048, 3072), 2 * cost_model_flops(m, 2048, 1536),
		   1e-12, "linear in B");
	for (double s = 1024; s <= 8192; s *= 2)
		expect_rel(cost_model_flops(m, (long)s, 8),
			   72.0 * 8 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)),
			   1e-9, "formula at other s");
}

/* Llama 2 70B (GQA, SwiGLU), forward FLOPs per token at s = 4096:
 *   QKV   2 h (a + 2g) dh = 2 * 8192 * 80 * 128     =   167,772,160
 *   proj  2 a dh h        = 2 * 8192 * 8192          =   134,217,728
 *   MLP   2 * 3 * h f     = 6 * 8192 * 28672         = 1,409,286,144
 *   attn  4 s a dh        = 4 * 4096 * 8192          =   134,217,728
 *   layer                                            = 1,845,493,760
 *   x 80 layers = 147,639,500,800; LM head 2 h V = 2 * 8192 * 32000
 *   = 524,288,000; per token 148,163,788,800 (about 2 x 69B params
 *   without the input embedding, plus attention). */
Test(model_flops, llama2_70b_per_token)
{
	const struct model_spec *m = zoo("llama2-70b");
	double per_token = cost_model_flops(m, 4096, 1) / (3.0 * 4096);
	expect_rel(per_token, 148163788800.0, 1e-12, "forward FLOPs per token");
}

/* GQA: 8 kv heads instead of 64 saves 2 h x 2 (a - g) dh per layer and
 * token: 2 * 8192 * 2 * 56 * 128 = 234,881,024; x 80 = 18,790,481,920.
 * SwiGLU's third matrix costs 2 h f = 469,762,048 per layer and token,
 * x 80 = 37,580,963,840. */
Test(model_flops, gqa_and_gated_mlp)
{
	struct model_spec mha = *zoo("llama2-70b"), gelu = mha;
	const struct model_spec *gqa = zoo("llama2-70b");
	double tok = 3.0 * 4096 * 16; /* s 4096, batch 16 */
	mha.kv_heads = mha.heads;
	expect_rel(cost_model_flops(&mha, 4096, 16) - cost_model_flops(gqa, 4096, 16),
		   18790481920.0 * tok, 1e-12, "MHA - GQA");
	gelu.mlp = MLP_GELU;
	expect_rel(cost_model_flops(gqa, 4096, 16) - cost_model_flops(&gelu, 4096, 16),
		   37580963840.0 * tok, 1e-12, "SwiGLU - GeLU");
}

/* Megatron-LM's own count (training.py num_floating_point_operations, as
 * validation/calibration.json quotes it), an independent formula:
 *   12 B s L h^2 [(1 + g/a + s/h) + (f/h) x 1.5 (gated) + V / (2 L h)]
 * Llama 3 70B: h 8192, L 80, a 64, g 8, f 28672, V 128256, s 8192. */
Test(model_flops, megatron_gqa_formula)
{
	const struct model_spec *m = zoo("llama3-70b");
	double B = 512, s = 8192, L = 80, h = 8192, a = 64, g = 8, f = 28672,
	       V = 128256;
	double want = 12 * B * s * L * h * h *
		      ((1 + g / a + s / h) + f / h * 1.5 + V / (2 * L * h));
	expect_rel(cost_model_flops(m, 8192, 512), want, 1e-12, "llama3-70b");
}

/* Mixtral 8x7B, top-2 of 8 experts, s 4096, per token forward:
 *   QKV 2 * 4096 * 48 * 128 = 50,331,648; proj 2 * 4096^2 = 33,554,432;
 *   MLP 2 * 3 * 4096 * 14336 * 2 experts = 704,643,072;
 *   attn 4 * 4096 * 32 * 128 = 67,108,864; layer 855,638,016, x 32 =
 *   27,380,416,512; head 2 * 4096 * 32000 = 262,144,000;
 *   total 27,642,560,512 (the router's 2 h E is not counted). */
Test(model_flops, moe_counts_active_experts)
{
	const struct model_spec *m = zoo("mixtral-8x7b");
	cr_assert_eq(m->num_experts, 8);
	cr_assert_eq(m->top_k, 2);
	expect_rel(cost_model_flops(m, 4096, 1) / (3.0 * 4096), 27642560512.0,
		   1e-12, "mixtral forward FLOPs per token");
}

/* ---- Predictions ------------------------------------------------------------ */

struct setup {
	const struct model_spec *m;
	struct cluster c;
	struct layout l;
	struct train_opts o;
};

static void setup(struct setup *s, const char *model, const char *preset,
		  long gpus, const char *layout)
{
	struct perr e = { "" };
	unsigned set = 0;
	s->m = zoo(model);
	cr_assert_eq(cluster_preset(preset, gpus, &s->c, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(layout_parse(layout, &s->l, &set, &e), PPLAN_OK, "%s", e.msg);
	layout_complete(&s->l, set, gpus);
	cr_assert_eq(layout_check(&s->l, s->m, gpus, NULL, &e), PPLAN_OK,
		     "%s %s: %s", model, layout, e.msg);
	train_opts_default(&s->o, s->m);
}

static struct prediction predict(const struct setup *s)
{
	struct prediction p;
	struct perr e = { "" };
	enum pplan_status st = cost_predict(s->m, &s->c, &s->l, &s->o, &p, &e);
	cr_assert_eq(st, PPLAN_OK, "%s", e.msg);
	cr_assert(isfinite(p.step_time_s) && p.step_time_s > 0, "step %g",
		  p.step_time_s);
	return p;
}

struct sanity_case {
	char model[32];
	long gpus;
	char layout[128];
};

ParameterizedTestParameters(predict, consistent)
{
	static struct sanity_case cases[] = {
		{ "llama3-8b", 8, "tp=2,dp=4,gbs=64" },
		{ "llama3-8b", 8, "tp=1,dp=8,gbs=64,zero=1,recompute=full" },
		{ "llama3-70b", 64, "tp=8,pp=4,dp=2,vp=5,gbs=64" },
		{ "gpt3-175b", 64, "tp=8,pp=8,gbs=32,recompute=selective" },
		{ "gpt3-175b", 64, "tp=8,pp=8,gbs=32,schedule=gpipe" },
		{ "llama2-7b", 16, "tp=2,pp=2,dp=4,cp=1,gbs=64,schedule=zb-h1" },
		{ "llama3-8b", 16, "tp=2,cp=2,dp=4,gbs=32" },
		{ "mixtral-8x7b", 16, "tp=2,dp=8,ep=8,gbs=64" },
		{ "llama3-70b", 64, "tp=8,pp=2,dp=4,gbs=64,zero=2" },
	};
	return cr_make_param_array(struct sanity_case, cases,
				   sizeof cases / sizeof cases[0]);
}

/* Every prediction, closed form (cost_predict) and with the pipeline
 * simulated (predict_layout, what `pplan predict` reports): model FLOPs
 * as the formula, MFU, TFLOP/s and tokens/s from the step time, the time
 * terms adding up to the step, the memory terms to the total. */
static void check_consistent(const struct sanity_case *c, const struct setup *s,
			     const struct prediction *p, const char *how)
{
	double gpus = (double)c->gpus;
	double peak = s->c.gpu.peak_tflops[s->o.precision] * 1e12;
	double terms;
	char what[160];

#define WHAT(x) (snprintf(what, sizeof what, "%s %s %s: %s", c->model, c->layout, how, x), what)
	cr_assert(isfinite(p->step_time_s) && p->step_time_s > 0, "%s",
		  WHAT("step time"));
	expect_rel(p->model_flops, cost_model_flops(s->m, s->o.seq, s->l.gbs), 1e-12,
		   WHAT("model FLOPs"));
	expect_rel(p->mfu, p->model_flops / (p->step_time_s * gpus * peak), 1e-12,
		   WHAT("MFU"));
	expect_rel(p->tflops_per_gpu * 1e12, p->mfu * peak, 1e-12,
		   WHAT("TFLOP/s per GPU"));
	expect_rel(p->tokens_per_s, (double)s->l.gbs * s->o.seq / p->step_time_s,
		   1e-12, WHAT("tokens/s"));
	cr_expect(p->mfu > 0.05 && p->mfu < 1.0, "%s %.3f", WHAT("MFU"), p->mfu);
	cr_expect_geq(p->hfu, p->mfu, "%s", WHAT("HFU >= MFU"));
	cr_expect_eq(p->microbatches, layout_microbatches(&s->l));
	terms = p->time.compute + p->time.recompute + p->time.tp_comm +
		p->time.cp_comm + p->time.ep_comm + p->time.pp_comm +
		p->time.dp_comm_exposed + p->time.bubble + p->time.optimizer;
	expect_rel(terms, p->step_time_s, 1e-9, WHAT("time terms add up to the step"));
	expect_rel(p->mem.weights + p->mem.gradients + p->mem.optimizer +
			   p->mem.activations + p->mem.other,
		   p->mem.total, 1e-12, WHAT("memory terms add up"));
	cr_expect(p->bubble_fraction >= 0 && p->bubble_fraction < 1, "%s %g",
		  WHAT("bubble fraction"), p->bubble_fraction);
	if (s->l.pp == 1)
		cr_expect_eq(p->time.bubble, 0.0, "%s", WHAT("no bubble without pp"));
	if (s->l.tp == 1)
		cr_expect_eq(p->time.tp_comm, 0.0, "%s", WHAT("no TP time without tp"));
#undef WHAT
}

ParameterizedTest(struct sanity_case *c, predict, consistent)
{
	struct setup s;
	struct prediction closed, sim;
	struct perr e = { "" };

	setup(&s, c->model, "dgx-h100", c->gpus, c->layout);
	closed = predict(&s);
	check_consistent(c, &s, &closed, "closed form");
	s.o.use_des = 1;
	cr_assert_eq(predict_layout(s.m, &s.c, &s.l, &s.o, &sim, &e), PPLAN_OK,
		     "%s", e.msg);
	check_consistent(c, &s, &sim, "simulated");
	/* The simulation re-times the pipeline, not the memory. */
	expect_rel(sim.mem.total, closed.mem.total, 1e-12, "same memory");
	cr_expect_eq(sim.feasible, closed.feasible);
}

/* Fixed global batch, more data-parallel replicas: each does less work,
 * so the step gets shorter. */
Test(predict, more_dp_shorter_step)
{
	double prev = INFINITY;
	for (long dp = 4; dp <= 64; dp *= 2) {
		struct setup s;
		struct prediction p;
		char lay[64];
		snprintf(lay, sizeof lay, "tp=2,dp=%ld,gbs=256", dp);
		setup(&s, "llama2-7b", "dgx-h100", 2 * dp, lay);
		p = predict(&s);
		cr_expect_lt(p.step_time_s, prev, "dp=%ld: %.3f s, not below %.3f s",
			     dp, p.step_time_s, prev);
		prev = p.step_time_s;
	}
}

/* ZeRO-2 shards the gradients, so every microbatch's backward
 * reduce-scatters its own (DeepSpeed ZeRO-2, FSDP SHARD_GRAD_OP,
 * Megatron-FSDP optim_grads); ZeRO-1 reduces once per step.  Checked
 * against ZeRO-1 of the same layout: one microbatch costs the same, each
 * further one adds one reduce-scatter (measured as the difference of 8
 * and 4 microbatches), and what each backward leaves exposed adds up. */
Test(predict, zero2_reduces_every_microbatch)
{
	struct prediction z1[3], z2[3];
	const long gbs[3] = { 8, 32, 64 }, m[3] = { 1, 4, 8 };
	double rs, tol = 1e-9, copy, e1, b1, u;

	for (int i = 0; i < 3; i++) {
		struct setup s;
		char lay[96];
		snprintf(lay, sizeof lay, "tp=8,dp=8,mbs=1,gbs=%ld,zero=1", gbs[i]);
		setup(&s, "llama3-70b", "dgx-h100", 64, lay);
		s.c.net.bw_gbps /= 8; /* one NIC per node: the reduction shows */
		z1[i] = predict(&s);
		s.l.zero = 2;
		z2[i] = predict(&s);
		cr_assert_eq(z2[i].microbatches, m[i]);
	}
	rs = (z2[2].time.dp_comm_total - z2[1].time.dp_comm_total) / 4.0;
	cr_assert_gt(rs, 0);
	expect_rel(z2[0].time.dp_comm_total, z1[0].time.dp_comm_total, tol, "m=1 total");
	for (int i = 0; i < 3; i++) {
		expect_rel(z1[i].time.dp_comm_total, z1[0].time.dp_comm_total, tol,
			   "ZeRO-1 total");
		expect_rel(z2[i].time.dp_comm_total - z1[i].time.dp_comm_total + rs,
			   (double)m[i] * rs, 1e-6, "ZeRO-2 extra reduce-scatters");
	}
	cr_assert_gt(z1[2].time.dp_comm_exposed, 0, "the reduction must show");
	/* ZeRO-1's one reduce-scatter overlaps the last backward B1 and
	 * leaves E1 = rs - B1 exposed (the once-per-step share fits to 0).
	 * Each ZeRO-2 backward is longer by its gradient copy, c = 80 layers
	 * x 6 B x 106,956,800 parameters at 2847.5 GB/s (the next test), and
	 * its layer-by-layer reduce-scatter leaves, as ZeRO-3's does, the
	 * part beyond the backward plus the share u of what overlaps it:
	 * 8 exposures of (E1 - c) + u (B1 + c) against ZeRO-1's one of E1. */
	copy = 80 * 6.0 * (855654400.0 / 8) / (3350e9 * 0.85);
	u = cost_params_default()->zero3_unhidden;
	cr_assert_eq(cost_params_default()->dp_overlap_unhidden, 0.0);
	e1 = z1[2].time.dp_comm_exposed - z1[2].dp_gather_exposed_s;
	b1 = rs - e1;
	cr_assert_gt(e1, copy);
	cr_assert_gt(b1, 0);
	expect_rel(z2[2].time.dp_comm_exposed - z1[2].time.dp_comm_exposed,
		   7.0 * e1 - 8.0 * copy + 8.0 * u * (b1 + copy), 1e-6,
		   "ZeRO-2 exposure per microbatch");
}

/* PyTorch FSDP's ZeRO-2 (SHARD_GRAD_OP; FSDP2 without resharding after the
 * forward) reshards the weights after every backward, so each microbatch
 * gathers them and reduce-scatters its gradients: the DP traffic of m
 * microbatches is m times one's.  Megatron FSDP's optim_grads keeps the
 * weights whole and gathers once per step: m reduce-scatters and one
 * gather, less than m times. */
Test(predict, fsdp_zero2_gathers_every_microbatch)
{
	double total[2][2];
	const char *fw[2] = { "torchtitan", "megatron-core" };
	const long gbs[2] = { 8, 32 };

	for (int f = 0; f < 2; f++)
		for (int i = 0; i < 2; i++) {
			struct setup s;
			char lay[96];
			snprintf(lay, sizeof lay, "tp=1,dp=8,mbs=1,gbs=%ld,zero=2,recompute=full", gbs[i]);
			setup(&s, "llama3-8b", "dgx-h100", 8, lay);
			use_framework(&s.o, fw[f], 2025);
			total[f][i] = predict(&s).time.dp_comm_total;
		}
	expect_rel(total[0][1], 4.0 * total[0][0], 1e-9, "FSDP: 4 gathers and 4 reduce-scatters");
	cr_assert_lt(total[1][1], 4.0 * total[1][0] * 0.99, "Megatron FSDP: one gather per step");
}

/* Sharded gradients are copied, cast to the reduction dtype, into the
 * buffer each microbatch's reduce-scatter sends; Megatron's buffers with
 * gradient-accumulation fusion (ZeRO-1) take the GEMM output in place.
 * Llama 3 70B, tp 8, 4 microbatches, Megatron-Core (4-byte gradients):
 * a layer holds 855,654,400 parameters (attention 150,994,944, SwiGLU
 * MLP 704,643,072, two norms 16,384), 106,956,800 per GPU; each
 * microbatch reads them in bf16 and writes them in fp32, 6 B each, at
 * 85 % of the H100's 3350 GB/s: 641,740,800 B / 2847.5 GB/s = 225.37 us
 * per layer, x 80 layers x 4 microbatches = 72.12 ms more compute. */
Test(predict, zero2_copies_gradients_each_microbatch)
{
	struct setup s;
	struct prediction z1, z2;
	double want = 4 * 80 * 6.0 * (855654400.0 / 8) / (3350e9 * 0.85);

	setup(&s, "llama3-70b", "dgx-h100", 64, "tp=8,dp=8,mbs=1,gbs=32,zero=1");
	cr_assert_eq(model_params_layer(s.m), 855654400.0);
	z1 = predict(&s);
	s.l.zero = 2;
	z2 = predict(&s);
	cr_assert_eq(z2.microbatches, 4);
	expect_rel(z2.time.compute - z1.time.compute, want, 1e-6, "the gradient copies");
}

/* torchtitan's op-level selective checkpointing replays, in each layer's
 * backward, the matmuls it does not keep (wk, wo and w3 of Llama 3 8B:
 * 4096 x 1024 + 4096 x 4096 + 4096 x 14336 = 79,691,776 of the layer's
 * 4096 x 6144 + 4096 x 4096 + 3 x 4096 x 14336 = 218,103,808 weights,
 * 36.54 % of its forward GEMM FLOPs), every element-wise op and, with TP,
 * the all-gathers; not the attention.  At 8192 tokens per microbatch the
 * GEMMs run near the ceiling, so their share of the forward GEMM time is
 * close to the FLOP share; Megatron's selective replays the attention
 * core alone. */
Test(predict, op_level_selective_replays_the_unkept_ops)
{
	struct setup s;
	struct layer_cost mega, op;
	struct cost_ctx x;
	double share = 79691776.0 / 218103808.0;

	setup(&s, "llama3-8b", "dgx-h100", 8, "tp=1,dp=8,mbs=1,gbs=8,zero=3,recompute=selective");
	cost_ctx_init(&x, s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &mega);
	expect_rel(mega.recompute, mega.attn_f, 1e-12, "Megatron: the attention core");
	use_framework(&s.o, "torchtitan", 2025);
	cost_ctx_init(&x, s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &op);
	cr_assert_eq(op.tp_f, 0);
	expect_rel((op.recompute - op.elem_f) / op.gemm_f, share, 0.03, "the unkept matmuls");
	cr_assert_gt(op.recompute, op.elem_f);
}

/* FlashAttention-2, Transformer Engine's and cuDNN's fused attention need
 * Ampere or newer: on a V100 the Megatron-Core default runs attention
 * unfused and keeps the scores (2 a s bytes per token for a model without
 * dropout: Llama 2 7B at 4096 tokens, 2 x 32 x 4096 = 262,144 more per
 * token and layer), unless the user set the attention by hand; PyTorch's
 * SDPA (torchtitan) has a memory-efficient kernel there; an A100 keeps
 * flash. */
Test(predict, flash_attention_needs_ampere)
{
	const struct model_spec *m = model_find("llama2-7b");
	struct perr e = { "" };
	struct train_opts o;
	struct layout l;
	double flash;

	cr_assert_not_null(m);
	train_opts_default(&o, m);
	layout_default(&l);
	flash = memory_layer_activations(m, &l, &o, 0);
	cr_assert_eq(train_opts_fit_gpu(&o, gpu_find("a100-80gb")), 0);
	cr_assert_eq(o.b.attention, FW_ATTN_FLASH);
	cr_assert_eq(train_opts_fit_gpu(&o, gpu_find("v100-sxm2")), 1);
	cr_assert_eq(o.b.attention, FW_ATTN_UNFUSED);
	expect_rel(memory_layer_activations(m, &l, &o, 0) - flash, 262144.0 * 4096, 1e-12,
		   "the scores");

	o.switches.flash = 1;
	cr_assert_eq(train_opts_resolve(&o, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(train_opts_fit_gpu(&o, gpu_find("v100-sxm2")), 0, "set by hand");
	fw_switches_none(&o.switches);
	use_framework(&o, "torchtitan", 2025);
	cr_assert_eq(train_opts_fit_gpu(&o, gpu_find("v100-sxm2")), 0, "SDPA");
	cr_assert_eq(o.b.attention, FW_ATTN_FLASH);
}

/* Transformer Engine's TP overlap (userbuffers) needs Ampere or newer:
 * off on a V100 unless set by hand, kept on an H100. */
Test(predict, tp_overlap_needs_ampere)
{
	const struct model_spec *m = model_find("llama3-8b");
	struct perr e = { "" };
	struct train_opts o;

	cr_assert_not_null(m);
	train_opts_default(&o, m);
	o.switches.tp_overlap = -1;
	o.b.tp_overlap = FW_TPO_PIPELINED;
	cr_assert_eq(train_opts_fit_tp_overlap(&o, gpu_find("h100-sxm")), 0);
	cr_assert_eq(o.b.tp_overlap, FW_TPO_PIPELINED);
	cr_assert_eq(train_opts_fit_tp_overlap(&o, gpu_find("v100-sxm2")), 1);
	cr_assert_eq(o.b.tp_overlap, FW_TPO_NONE);
	o.switches.tp_overlap = FW_TPO_PIPELINED;
	cr_assert_eq(train_opts_resolve(&o, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(train_opts_fit_tp_overlap(&o, gpu_find("v100-sxm2")), 0, "set by hand");
}

/* ZeRO-3 across nodes: DeepSpeed's per-parameter gathers run on one rail
 * per GPU, FSDP's per-layer flat buffers on all of a node's rails (the
 * LLM Foundry runs of validation/holdout: 13B on 16-64 H100s as fast per
 * step as on 8).  Two DGX H100 nodes have 8 rails each: DeepSpeed's
 * traffic takes several times FSDP's, and FSDP's on two nodes is not far
 * from its NVLink time in one. */
static double zero3_total(const char *fw, long gpus)
{
	struct setup s;
	char lay[96];
	struct prediction p;

	snprintf(lay, sizeof lay, "tp=1,dp=%ld,mbs=1,gbs=%ld,zero=3,recompute=none", gpus,
		 4 * gpus);
	setup(&s, "llama2-13b", "dgx-h100", gpus, lay);
	use_framework(&s.o, fw, 2024);
	p = predict(&s);
	cr_assert_gt(p.time.dp_comm_total, 0);
	return p.time.dp_comm_total;
}

Test(predict, zero3_gathers_by_framework)
{
	double fsdp1 = zero3_total("torchtitan", 8), fsdp2 = zero3_total("torchtitan", 16);
	double ds2 = zero3_total("deepspeed", 16);

	cr_expect_gt(ds2, 4.0 * fsdp2, "DeepSpeed %.3f s, FSDP %.3f s on 2 nodes", ds2, fsdp2);
	cr_expect_lt(fsdp2, 2.0 * fsdp1, "FSDP %.3f s on 2 nodes, %.3f s on 1", fsdp2, fsdp1);
}

/* Full recomputation runs the forward again (longer step, HFU > MFU)
 * and keeps only layer inputs (less memory). */
Test(predict, full_recompute_trades_time_for_memory)
{
	struct setup s;
	struct prediction none, full;
	setup(&s, "llama3-8b", "dgx-h100", 8, "tp=2,dp=4,gbs=64,recompute=none");
	none = predict(&s);
	s.l.recompute = RECOMPUTE_FULL;
	full = predict(&s);
	cr_assert_gt(full.step_time_s, none.step_time_s);
	cr_assert_lt(full.mem.total, none.mem.total);
	cr_assert_lt(full.mem.activations, none.mem.activations);
	cr_assert_eq(none.time.recompute, 0.0);
	cr_assert_gt(full.time.recompute, 0.0);
	expect_rel(full.model_flops, none.model_flops, 1e-12, "same model FLOPs");
	cr_assert_gt(full.hfu, full.mfu);
	/* Recomputing the forward is a third of forward + backward. */
	expect_rel(full.hw_flops, full.model_flops * 4.0 / 3.0, 1e-12, "HW FLOPs");
	cr_assert_lt(full.mfu, none.mfu);
}

/* A tensor-parallel group of 16 on 8-GPU nodes runs its per-layer
 * collectives over the NICs: slower than tp = 8 inside a node on the same
 * 16 GPUs, and slower than the same tp = 16 inside one 16-GPU NVLink
 * domain. */
Test(predict, tp_across_nodes_is_slower)
{
	struct setup in, out, dom;
	struct prediction p_in, p_out, p_dom;
	setup(&out, "llama2-70b", "dgx-h100", 16, "tp=16,dp=1,gbs=64");
	setup(&in, "llama2-70b", "dgx-h100", 16, "tp=8,dp=2,gbs=64");
	p_out = predict(&out);
	p_in = predict(&in);
	cr_assert_gt(p_out.step_time_s, p_in.step_time_s,
		     "tp=16 across nodes %.3f s, tp=8 in a node %.3f s",
		     p_out.step_time_s, p_in.step_time_s);
	cr_assert_gt(p_out.time.tp_comm, p_in.time.tp_comm);
	dom = out;
	dom.c.gpus_per_node = 16;
	dom.c.nvlink_domain = 16;
	dom.c.num_nodes = 1;
	cr_assert_eq(cluster_gpus(&dom.c), 16);
	p_dom = predict(&dom);
	cr_assert_gt(p_out.step_time_s, p_dom.step_time_s,
		     "tp=16 across nodes %.3f s, inside one domain %.3f s",
		     p_out.step_time_s, p_dom.step_time_s);
	cr_assert_gt(p_out.time.tp_comm, p_dom.time.tp_comm);
}

/* Pipeline bubbles (Narayanan et al. 2021, Section 2.2): 1F1B idles
 * (p-1) microbatch times t_mb per step, the interleaved schedule with v
 * chunks (p-1) t_mb / v.  As a share of the step, (p-1)/(m+p-1) and
 * ((p-1)/v)/(m+(p-1)/v) when all stages take equally long; here the last
 * stage also runs the LM head and the loss, so the others idle a little
 * more and the fraction lies slightly above the ideal, never below. */
static double mb_time(const struct prediction *p, int v)
{
	/* One microbatch through one pipeline stage, its layers only. */
	return v * (p->chunk.fwd_s + p->chunk.bwd_s);
}

Test(predict, bubble_fractions)
{
	struct setup s;
	struct prediction a, b, c;
	/* GPT-3 175B, tp 8, pp 8, m = 32: ideal 7/39 = 0.179. */
	setup(&s, "gpt3-175b", "dgx-h100", 64, "tp=8,pp=8,gbs=32");
	a = predict(&s);
	expect_rel(a.time.bubble, 7 * mb_time(&a, 1), 0.05, "1F1B bubble = (p-1) t_mb");
	cr_expect(a.bubble_fraction >= 7.0 / 39.0 &&
		  a.bubble_fraction <= 7.0 / 39.0 + 0.03,
		  "1F1B p8 m32: %.4f, ideal %.4f", a.bubble_fraction, 7.0 / 39.0);
	/* m = 128: ideal 7/135 = 0.052; the same bubble time. */
	s.l.gbs = 128;
	b = predict(&s);
	cr_expect(b.bubble_fraction >= 7.0 / 135.0 &&
		  b.bubble_fraction <= 7.0 / 135.0 + 0.03,
		  "1F1B p8 m128: %.4f, ideal %.4f", b.bubble_fraction, 7.0 / 135.0);
	expect_rel(b.time.bubble, a.time.bubble, 1e-9, "bubble time independent of m");
	cr_assert_lt(b.bubble_fraction, a.bubble_fraction);
	/* Interleaved, v = 2, m = 32: (p-1)/v = 3.5 microbatch times, half
	 * of 1F1B's; share 3.5 / 35.5 = 0.099. */
	s.l.gbs = 32;
	s.l.vp = 2;
	s.l.schedule = SCHED_INTERLEAVED;
	c = predict(&s);
	expect_rel(c.time.bubble, 3.5 * mb_time(&c, 2), 0.05,
		   "interleaved bubble = (p-1) t_mb / v");
	expect_rel(c.time.bubble, a.time.bubble / 2, 0.05, "interleaving halves it");
	cr_expect(c.bubble_fraction >= 3.5 / 35.5 &&
		  c.bubble_fraction <= 3.5 / 35.5 + 0.03,
		  "interleaved p8 v2 m32: %.4f, ideal %.4f", c.bubble_fraction,
		  3.5 / 35.5);
	cr_assert_lt(c.bubble_fraction, a.bubble_fraction);
}

/* A100s have no fp8 tensor cores: the request is rejected. */
Test(predict, fp8_on_a100_is_rejected)
{
	struct setup s;
	struct prediction p;
	struct perr e = { "" };
	setup(&s, "llama3-8b", "dgx-a100", 8, "tp=2,dp=4,gbs=64");
	s.o.precision = PREC_FP8;
	cr_assert_eq(cost_predict(s.m, &s.c, &s.l, &s.o, &p, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "fp8") != NULL, "%s", e.msg);
	cr_assert_eq(p.feasible, 0);
	/* bf16 on the same cluster is fine; fp8 on H100 is faster than bf16. */
	s.o.precision = PREC_BF16;
	cr_assert_eq(cost_predict(s.m, &s.c, &s.l, &s.o, &p, &e), PPLAN_OK, "%s", e.msg);
	{
		struct setup h;
		struct prediction pb, p8;
		setup(&h, "llama3-8b", "dgx-h100", 8, "tp=2,dp=4,gbs=64");
		pb = predict(&h);
		h.o.precision = PREC_FP8;
		p8 = predict(&h);
		cr_assert_lt(p8.step_time_s, pb.step_time_s);
	}
}

/* Llama 3 70B with plain data parallelism on 8 GPUs needs the whole model
 * state on each: 18 x 70.55e9 = 1.27e12 bytes = 1,183 GiB > 79 GiB. */
Test(predict, out_of_memory)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-70b", "dgx-h100", 8, "dp=8,zero=0,gbs=8");
	p = predict(&s);
	cr_assert_eq(p.feasible, 0);
	cr_assert_eq(p.reject, REJECT_OOM);
	cr_assert_str_eq(reject_key(p.reject), "out of memory");
	cr_assert(strstr(p.reject_msg, "GiB") != NULL, "%s", p.reject_msg);
	cr_assert_gt(p.mem.total, 18.0 * 70.55e9);
	cr_assert_gt(p.mem.total, s.c.gpu.mem_gib * GIB);
	/* A layout that fits, under a cap it does not fit. */
	setup(&s, "llama3-8b", "dgx-h100", 8, "tp=8,gbs=8");
	p = predict(&s);
	cr_assert_eq(p.feasible, 1, "%s", p.reject_msg);
	cr_assert_eq(p.reject, REJECT_NONE);
	s.o.max_memory_gib = 4.0;
	p = predict(&s);
	cr_assert_eq(p.feasible, 0);
	cr_assert_str_eq(reject_key(p.reject), "out of memory");
}

/* A layout for another GPU count makes no sense on this cluster. */
Test(predict, gpu_count_mismatch)
{
	struct setup s;
	struct prediction p;
	struct perr e = { "" };
	setup(&s, "llama3-8b", "dgx-h100", 8, "tp=2,dp=4,gbs=64");
	s.l.dp = 8;
	cr_assert_eq(cost_predict(s.m, &s.c, &s.l, &s.o, &p, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "16") && strstr(e.msg, "8"), "%s", e.msg);
}


static const cJSON *member(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	cr_assert_not_null(x, "no member '%s'", key);
	return x;
}

/* `pplan predict --json` is the library's prediction, written as
 * pplan.prediction/1 with memory in GiB and time in seconds. */
Test(predict, prediction_report_json)
{
	char dir[] = "/tmp/pplan-test-XXXXXX", out[64], out2[64];
	char *argv[] = { "pplan", "predict", "--model", "llama3-8b", "--gpus", "8",
			 "--layout", "tp=2,dp=4,gbs=64", "--json", out, NULL };
	char *oom[] = { "pplan", "predict", "--model", "llama3-70b", "--gpus", "8",
			"--layout", "dp=8,zero=0,gbs=8", "--json", out2, NULL };
	cJSON *root = NULL;
	struct perr e = { "" };
	struct setup s;
	struct prediction p;
	const cJSON *mem, *t;
	char buf[256];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/p.json", dir);
	snprintf(out2, sizeof out2, "%s/oom.json", dir);
	cr_assert_eq(run_pplan(argv), 0);
	cr_assert_eq(json_read_file(out, &root, &e), PPLAN_OK, "%s", e.msg);
	setup(&s, "llama3-8b", "dgx-h100", 8, "tp=2,dp=4,gbs=64");
	cr_assert_eq(predict_layout(s.m, &s.c, &s.l, &s.o, &p, &e), PPLAN_OK, "%s", e.msg);

	cr_assert_str_eq(member(root, "schema")->valuestring, "pplan.prediction/1");
	cr_assert_str_eq(member(member(root, "model"), "name")->valuestring, "llama3-8b");
	layout_format(&s.l, buf, sizeof buf);
	cr_assert_str_eq(member(member(root, "layout"), "string")->valuestring, buf);
	cr_assert(cJSON_IsTrue(member(root, "feasible")));
	cr_assert(cJSON_IsNull(member(root, "reject_reason")));
	expect_rel(member(root, "step_time_s")->valuedouble, p.step_time_s, 1e-12, "step");
	expect_rel(member(root, "mfu")->valuedouble, p.mfu, 1e-12, "mfu");
	expect_rel(member(root, "tokens_per_s")->valuedouble, p.tokens_per_s, 1e-12,
		   "tokens/s");
	mem = member(root, "memory_gib");
	expect_rel(member(mem, "total")->valuedouble, p.mem.total / GIB, 1e-12, "total");
	expect_rel(member(mem, "weights")->valuedouble, p.mem.weights / GIB, 1e-12, "weights");
	expect_rel(member(mem, "gradients")->valuedouble, p.mem.gradients / GIB, 1e-12,
		   "gradients");
	expect_rel(member(mem, "optimizer")->valuedouble, p.mem.optimizer / GIB, 1e-12,
		   "optimizer");
	expect_rel(member(mem, "activations")->valuedouble, p.mem.activations / GIB,
		   1e-12, "activations");
	expect_rel(member(mem, "other")->valuedouble, p.mem.other / GIB, 1e-12, "other");
	t = member(root, "time_s");
	expect_rel(member(t, "compute")->valuedouble, p.time.compute, 1e-12, "compute");
	expect_rel(member(t, "tp_comm")->valuedouble, p.time.tp_comm, 1e-12, "tp_comm");
	expect_rel(member(t, "dp_comm_exposed")->valuedouble, p.time.dp_comm_exposed,
		   1e-12, "dp_comm_exposed");
	expect_rel(member(t, "optimizer")->valuedouble, p.time.optimizer, 1e-12,
		   "optimizer");
	static const char *const keys[] = { "compute", "recompute", "tp_comm",
		"cp_comm", "ep_comm", "pp_comm", "dp_comm_exposed", "bubble", "optimizer" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		cr_assert(cJSON_IsNumber(member(t, keys[i])), "time_s.%s", keys[i]);
	cJSON_Delete(root);

	/* A layout that does not fit is still predicted (exit 0), and says so. */
	cr_assert_eq(run_pplan(oom), 0);
	cr_assert_eq(json_read_file(out2, &root, &e), PPLAN_OK, "%s", e.msg);
	cr_assert(cJSON_IsFalse(member(root, "feasible")));
	cr_assert(cJSON_IsString(member(root, "reject_reason")));
	cr_assert(strstr(member(root, "reject_reason")->valuestring, "GiB") != NULL);
	cJSON_Delete(root);
	remove(out);
	remove(out2);
	rmdir(dir);
}

/* --recompute-modules, Qwen3-30B-A3B on 8 H100s with ep 8: each module
 * adds its forward to the backward.  The moe module replays the router,
 * the experts and both all-to-alls, so it recomputes more than moe_act
 * (an element-wise pass) and more than twice the layer's EP traffic
 * alone; layernorm + moe_act more than core_attn alone; memory falls the
 * other way (test_memory gives the bytes). */
Test(predict, recompute_modules_price_their_forward)
{
	struct setup s;
	struct prediction base, act, moe, ln_act;
	setup(&s, "qwen3-30b-a3b", "dgx-h100", 8, "ep=8,gbs=64,recompute=selective");
	base = predict(&s);
	s.l.recompute_modules = RM_MOE_ACT;
	act = predict(&s);
	s.l.recompute_modules = RM_MOE_ACT | RM_LAYERNORM | RM_CORE_ATTN;
	ln_act = predict(&s);
	s.l.recompute_modules = RM_MOE;
	moe = predict(&s);
	cr_expect_gt(act.chunk.recompute_s, 0);
	cr_expect_gt(ln_act.chunk.recompute_s, base.chunk.recompute_s);
	cr_expect_gt(moe.chunk.recompute_s, act.chunk.recompute_s);
	cr_expect_gt(moe.step_time_s, ln_act.step_time_s);
	cr_expect_lt(moe.mem.activations, ln_act.mem.activations);
	cr_expect_lt(ln_act.mem.activations, base.mem.activations);
}

/* Offloading costs what the host link cannot hide behind the layer's
 * GEMMs and attention.  Qwen3-30B-A3B's 8 expert copies of 4096 tokens
 * are 134 MB a layer and microbatch: 0.13 ms on a 1 TB/s link, hidden;
 * 2.4 ms on the preset's PCIe 5.0 (55 GB/s), more than the layer's
 * compute, so partly exposed; 134 ms at 1 GB/s. */
Test(predict, offload_exposes_what_the_host_link_cannot_hide)
{
	struct setup s;
	struct prediction base, fast, pcie, slow;
	setup(&s, "qwen3-30b-a3b", "dgx-h100", 8, "ep=8,gbs=64");
	base = predict(&s);
	s.l.offload_modules = OM_EXPERT_FC1;
	pcie = predict(&s);
	s.c.host_gbps = 1000.0;
	fast = predict(&s);
	s.c.host_gbps = 1.0;
	slow = predict(&s);
	cr_expect_lt(fast.mem.activations, base.mem.activations);
	cr_expect_float_eq(fast.step_time_s, base.step_time_s, 1e-9 * base.step_time_s);
	cr_expect_gt(pcie.step_time_s, base.step_time_s);
	cr_expect_gt(slow.step_time_s, 2.0 * pcie.step_time_s);
}

/* Block recomputation replays N of each chunk's layers: on one stage of
 * Llama 3 8B's 32 layers, recompute_layers=8 costs 8/32 of full
 * recomputation's time, and HFU counts 1 + (1/4)/3 forwards. */
Test(predict, block_recompute_is_its_share_of_full)
{
	struct setup s;
	struct prediction full, block;
	setup(&s, "llama3-8b", "dgx-h100", 8, "dp=8,gbs=64,recompute=full");
	full = predict(&s);
	s.l.recompute_layers = 8;
	block = predict(&s);
	cr_expect_float_eq(block.time.recompute, full.time.recompute * 8.0 / 32.0,
			   1e-9 * full.time.recompute);
	cr_expect_float_eq(block.hfu, block.mfu * (1.0 + 0.25 / 3.0), 1e-12);
	cr_expect_float_eq(full.hfu, full.mfu * 4.0 / 3.0, 1e-12);
}

/* Offloading N whole layers exposes, per layer, microbatch and
 * direction, what the host link does not hide behind the next layer's
 * GEMMs and attention: max(0, A/B_host - compute).  On links slow enough
 * that nothing is hidden, the compute cancels between two speeds:
 * Llama 3 8B keeps A = 139,264 B x 8,192 tokens = 1,140,850,688 B a layer
 * (test_memory); 8 microbatches (gbs 64 over dp 8) x 4 layers x 2
 * directions x A x (1/0.5 - 1/1) s/GB = 73.0144 s. */
Test(predict, layer_offload_exposes_what_the_host_link_cannot_hide)
{
	struct setup s;
	struct prediction base, slow, slower;
	setup(&s, "llama3-8b", "dgx-h100", 8, "dp=8,gbs=64");
	base = predict(&s);
	s.l.offload_layers = 4;
	s.c.host_gbps = 1000.0;
	cr_expect_float_eq(predict(&s).step_time_s, base.step_time_s, 1e-9 * base.step_time_s);
	s.c.host_gbps = 1.0;
	slow = predict(&s);
	s.c.host_gbps = 0.5;
	slower = predict(&s);
	cr_expect_float_eq(slower.step_time_s - slow.step_time_s,
			   8.0 * 4 * 2 * 1140850688.0 * (1 / 0.5e9 - 1 / 1e9), 1e-9);
	cr_expect_lt(slow.mem.activations, base.mem.activations);
}

/* NVIDIA's DeepSeek-V3 recipe as it ran: tp 2, pp 16 (61 layers: 3 on the
 * first stage, 2 on the last, 4 on each other), ep 64 with unsplit
 * experts (etp 1, folded into tp x dp = 64), 1024 H100s.  Refused before
 * MoE parallel folding ("ep=64 must divide dp*cp = 32"); priced now, with
 * the layout's own expert data parallelism of tp x dp / ep = 1. */
Test(predict, deepseek_v3_recipe_priced)
{
	struct setup s;
	struct prediction p;
	setup(&s, "deepseek-v3", "dgx-h100", 1024,
	      "tp=2,pp=16,ep=64,etp=1,pp_first=3,pp_last=2,gbs=1024");
	cr_assert_eq(s.l.dp, 32);
	cr_expect_float_eq(layout_expert_dp(&s.l), 1.0, 1e-12);
	p = predict(&s);
	cr_expect_gt(p.step_time_s, 0);
	cr_expect_gt(p.time.ep_comm, 0);
}

/* ---- free-form pipeline splits (a layout string's table of chunks) ---------- */

/* s priced and simulated (what `pplan predict` reports). */
static struct prediction simulated(const struct setup *s)
{
	struct setup x = *s;
	struct prediction p;
	struct perr e = { "" };
	x.o.use_des = 1;
	cr_assert_eq(predict_layout(x.m, &x.c, &x.l, &x.o, &p, &e), PPLAN_OK, "%s", e.msg);
	return p;
}

static void expect_same(const struct setup *a, const struct setup *b, const char *what)
{
	struct prediction p = simulated(a), q = simulated(b);
	expect_rel(q.step_time_s, p.step_time_s, 1e-12, what);
	expect_rel(q.mem.total, p.mem.total, 1e-12, what);
	expect_rel(q.time.bubble + 1e-30, p.time.bubble + 1e-30, 1e-12, what);
	expect_rel(q.time.compute, p.time.compute, 1e-12, what);
}

/* A table of chunks is priced by its own code path (layout_chunk_layers,
 * the DES's per-stage scale from it); where the same split has another
 * form (even, first/last stage counts, the embedding and the loss as
 * layers), both must give the same step, memory and bubble: the second
 * method the table is checked by. */
Test(predict, pipeline_table_prices_as_the_split_it_repeats)
{
	struct setup a, b;
	int chunk[64];

	/* even: Llama 3 70B, 80 layers over pp 4 x vp 5, 4 a chunk */
	setup(&a, "llama3-70b", "dgx-h100", 64, "tp=8,pp=4,vp=5,gbs=64");
	b = a;
	for (int v = 0; v < 20; v++)
		chunk[v] = 4;
	b.l.pp_table = pp_table_intern(4, 5, chunk);
	cr_assert(b.l.pp_table);
	expect_same(&a, &b, "even");

	/* first/last: NVIDIA's DeepSeek-V3 recipe, 3 + 14 x 4 + 2 */
	setup(&a, "deepseek-v3", "dgx-h100", 1024,
	      "tp=2,pp=16,ep=64,etp=1,pp_first=3,pp_last=2,gbs=1024");
	b = a;
	b.l.pp_first = b.l.pp_last = 0;
	for (int v = 0; v < 16; v++)
		chunk[v] = v == 0 ? 3 : v == 15 ? 2 : 4;
	b.l.pp_table = pp_table_intern(16, 1, chunk);
	expect_same(&a, &b, "first/last");

	/* the embedding and the loss as layers: Llama 3.1 405B, 126 layers
	 * + 2 over pp 8 x vp 8, 2 a chunk but the edge ones */
	setup(&a, "llama3.1-405b", "dgx-h100", 1024, "tp=8,pp=8,vp=8,pp_embed=on,pp_loss=on,gbs=512");
	b = a;
	b.l.pp_embed = b.l.pp_loss = 0;
	for (int v = 0; v < 64; v++)
		chunk[v] = v == 0 || v == 63 ? 1 : 2;
	b.l.pp_table = pp_table_intern(8, 8, chunk);
	expect_same(&a, &b, "embedding and loss");
}

/* A stage with more layers than the others sets the pace: 32 layers on
 * pp 2 as 10 + 22 against 16 + 16.  The heavy stage's body is 22/16 of
 * the balanced one's, so the simulated step grows, and by no more than
 * that ratio.  Memory: under 1F1B stage 0 holds 2 microbatches in
 * flight and stage 1 one, so the balanced split's peak is stage 0's 2 x
 * 16 = 32 layer-microbatches of activations, the uneven one's
 * max(2 x 10, 22) = 22: less. */
Test(predict, pipeline_table_uneven_stage_sets_the_pace)
{
	struct setup a, b;
	struct prediction p, q;
	int chunk[2] = { 10, 22 };
	setup(&a, "llama3-8b", "dgx-h100", 16, "tp=1,pp=2,gbs=64");
	b = a;
	b.l.pp_table = pp_table_intern(2, 1, chunk);
	p = simulated(&a);
	q = simulated(&b);
	cr_expect_gt(q.step_time_s, p.step_time_s * 1.2, "%g against %g", q.step_time_s, p.step_time_s);
	cr_expect_lt(q.step_time_s, p.step_time_s * 22.0 / 16.0 * 1.01);
	cr_expect_lt(q.mem.activations, p.mem.activations);
}

/* ---- DualPipe (DeepSeek-V3 report, 3.2.1 and Table 2) ---------------------- */

/* GPT-3 175B on 8 stages of 12 layers, m = 32, as 1F1B and as DualPipe.
 * With no all-to-all to hide, rank r's microbatch is the mean of stages r
 * and 7 - r: the body, plus half the embedding and half the head on ranks
 * 0 and 7.  The bubble is (pp/2 - 1)(F&B + B - 3W + 2 t_p2p) with F&B the
 * ranks' mean, the transfers run under the paired chunks, and the
 * numbers come from the 1F1B prediction's own chunk and edge times. */
Test(predict, dualpipe_bubble_from_the_report)
{
	struct setup s;
	struct prediction a, d;
	double body, edges, fb, bubble;
	setup(&s, "gpt3-175b", "dgx-h100", 64, "tp=8,pp=8,gbs=32");
	use_framework(&s.o, "other", 2025);
	a = predict(&s);
	s.l.schedule = SCHED_DUALPIPE;
	d = predict(&s);
	cr_assert(d.feasible || d.reject == REJECT_OOM, "%s", d.reject_msg);
	body = a.chunk.fwd_s + a.chunk.bwd_s;
	edges = a.first_extra_fwd_s + a.first_extra_bwd_s + a.last_extra_fwd_s + a.last_extra_bwd_s;
	fb = body + 2.0 * (edges / 2.0) / 8.0;
	bubble = (8 / 2 - 1) * (fb + a.chunk.bwd_s - 3.0 * a.chunk.bwd_w_s + 2.0 * a.p2p_s);
	expect_rel(d.time.bubble, bubble, 1e-9, "DualPipe bubble");
	cr_expect_eq(d.time.pp_comm, 0.0, "transfers under the paired chunks");
	expect_rel(d.step_time_s,
		   32 * (body + edges / 2.0) + bubble + d.time.dp_comm_exposed + d.time.optimizer,
		   1e-9, "DualPipe step");
	/* less bubble than 1F1B's (pp - 1)(F + B) */
	cr_expect_lt(d.time.bubble, a.time.bubble);
}

/* A tied embedding's gradient is summed between the first and the last
 * stage after the DP reduction (Megatron-Core's finalize_model_grads):
 * the whole V/t x h fp32 main gradient, 4 x 51200/8 x 12288 =
 * 314,572,800 bytes for GPT-3 175B at t 8, all-reduced over two ranks
 * (a ring of two sends each rank S/2 + S/2 = S bytes) across nodes, one
 * 400 Gb/s NIC per GPU on a DGX H100: no less than S / 50 GB/s = 6.3 ms,
 * all of it exposed.  The same model untied differs in nothing else
 * with pp > 1 (each end stage holds its own V/t x h either way). */
Test(predict, tied_embedding_all_reduce_between_the_end_stages)
{
	struct setup s;
	struct model_spec untied;
	struct prediction tied, un, flat;
	double floor_s = 4.0 * 51200 / 8 * 12288 / 50e9;
	setup(&s, "gpt3-175b", "dgx-h100", 64, "tp=8,pp=8,gbs=32");
	tied = predict(&s);
	untied = *s.m;
	untied.tied_embeddings = 0;
	s.m = &untied;
	un = predict(&s);
	cr_expect_eq(un.dp_emb_s, 0.0, "untied: nothing to sum");
	cr_expect_geq(tied.dp_emb_s, floor_s, "%g s under the NIC's %g s", tied.dp_emb_s, floor_s);
	cr_expect_leq(tied.dp_emb_s, 2.0 * floor_s + 2e-3, "%g s", tied.dp_emb_s);
	expect_rel(tied.step_time_s - un.step_time_s, tied.dp_emb_s, 1e-6, "exposed at the step's end");
	expect_rel(tied.time.dp_comm_exposed - un.time.dp_comm_exposed, tied.dp_emb_s, 1e-6,
		   "counted as exposed DP communication");
	setup(&s, "gpt3-175b", "dgx-h100", 64, "tp=8,pp=1,dp=8,gbs=32,recompute=full");
	flat = predict(&s);
	cr_expect_eq(flat.dp_emb_s, 0.0, "one stage holds both ends");
}

/* pplan exec's step is its ops: the fitted per-step overhead of a
 * training framework (data loader, logging; sim/MODEL.md 7) is not in
 * its optimizer step.  Megatron-Core's Adam moves the same 30 bytes a
 * parameter on the same shard, so the two differ by exactly that. */
Test(predict, the_executor_has_no_per_step_overhead)
{
	struct setup s;
	struct prediction mc, ex;
	setup(&s, "llama3-8b", "dgx-h100", 8, "tp=1,dp=8,gbs=64,zero=1,recompute=full");
	use_framework(&s.o, "megatron-core", 2025);
	mc = predict(&s);
	use_framework(&s.o, "pplan-exec", 2025);
	ex = predict(&s);
	expect_rel(mc.optimizer_s - ex.optimizer_s, cost_params_default()->step_fixed_ms * 1e-3,
		   1e-9, "the overhead");
	cr_expect_lt(ex.optimizer_s, mc.optimizer_s);
}

/* Table 2's memory: two stages' weights, gradients and optimizer states
 * on every rank, pp + 1 microbatches of a stage's activations in flight. */
Test(predict, dualpipe_memory_from_the_report)
{
	struct setup s;
	struct mem_breakdown one1, one6, dual;
	struct layout dl;
	setup(&s, "gpt3-175b", "dgx-h100", 64, "tp=8,pp=8,gbs=32");
	use_framework(&s.o, "other", 2025);
	memory_stage(s.m, &s.c, &s.l, &s.o, 1, &one1);
	memory_stage(s.m, &s.c, &s.l, &s.o, 6, &one6);
	dl = s.l;
	dl.schedule = SCHED_DUALPIPE;
	memory_stage(s.m, &s.c, &dl, &s.o, 1, &dual);
	expect_rel(dual.weights, one1.weights + one6.weights, 1e-12, "weights of stages 1 and 6");
	expect_rel(dual.gradients, one1.gradients + one6.gradients, 1e-12, "gradients");
	expect_rel(dual.optimizer, one1.optimizer + one6.optimizer, 1e-12, "optimizer states");
	cr_expect_float_eq(one1.inflight, 7.0, 1e-12, "1F1B stage 1: pp - 1 in flight");
	cr_expect_float_eq(dual.inflight, 9.0, 1e-12, "DualPipe: pp + 1 in flight");
	expect_rel(dual.activations - one1.activations,
		   2.0 * memory_stage_activations(s.m, &s.l, &s.o, 1), 1e-9,
		   "two more microbatches of a stage");
}

/* The paired chunks hide the all-to-alls behind their compute, which runs
 * on the SMs the communication leaves (20 of 132): the EP term keeps
 * max(C - X, C x 20/132) of its C per microbatch, X the rest of the pair. */
Test(predict, dualpipe_hides_the_all_to_alls)
{
	struct setup s;
	struct prediction a, d;
	double micro, c, x;
	setup(&s, "mixtral-8x7b", "dgx-h100", 64, "tp=1,pp=4,dp=16,ep=8,gbs=256");
	use_framework(&s.o, "other", 2025);
	a = predict(&s);
	s.l.schedule = SCHED_DUALPIPE;
	d = predict(&s);
	micro = (double)a.microbatches;
	c = a.time.ep_comm / micro;
	cr_assert_gt(c, 0);
	x = a.chunk.fwd_s + a.chunk.bwd_s - c;
	expect_rel(d.time.ep_comm / micro, fmax(c - x, c * 20.0 / 132.0), 1e-9,
		   "all-to-alls left by the pair");
	/* and where they outlast the compute, what sticks out */
	s.c.nvlink.bw_gbps /= 200.0;
	s.l.schedule = SCHED_1F1B;
	a = predict(&s);
	s.l.schedule = SCHED_DUALPIPE;
	d = predict(&s);
	c = a.time.ep_comm / micro;
	x = a.chunk.fwd_s + a.chunk.bwd_s - c;
	cr_assert_gt(c, x, "the slow NVLink makes the all-to-alls longer than the compute");
	expect_rel(d.time.ep_comm / micro, c - x, 1e-9, "all-to-alls beyond the compute");
}

/* DeepSeek's step(): an even number of ranks and of microbatches, at
 * least twice the ranks; frameworks without DualPipe refuse it. */
Test(predict, dualpipe_rules)
{
	struct setup s;
	struct prediction p;
	struct perr e = { "" };
	enum reject why = REJECT_NONE;
	char buf[256];
	setup(&s, "gpt3-175b", "dgx-h100", 64, "tp=8,pp=8,gbs=32");
	s.l.schedule = SCHED_DUALPIPE;
	s.l.gbs = 14; /* 14 microbatches < 16 */
	cr_expect_eq(layout_check(&s.l, s.m, 64, &why, &e), PPLAN_EINPUT);
	cr_expect_eq(why, REJECT_DUALPIPE);
	reject_describe(why, &s.l, s.m, 64, buf, sizeof buf);
	cr_expect(strstr(buf, "at least 2*pp = 16") != NULL, "%s", buf);
	s.l.gbs = 32;
	cr_expect_eq(layout_check(&s.l, s.m, 64, &why, &e), PPLAN_OK, "%s", e.msg);
	p = predict(&s); /* Megatron-Core: priced, not runnable */
	cr_expect_eq(p.feasible, 0);
	cr_expect_eq(p.reject, REJECT_FW_SCHEDULE);
}
