/*
 * test_memory.c: the memory model against the papers.
 *
 * Model states (mixed precision, Adam), Megatron-LM's accounting:
 *   bf16 weights 2 + fp32 main gradients 4 + fp32 master weights, Adam
 *   m and v 12 = 18 bytes per parameter; the distributed optimizer
 *   (ZeRO-1) shards the 12 over d data-parallel ranks: 6 + 12/d.  ZeRO-2
 *   also shards the gradients: 2 + 16/d; ZeRO-3 / FSDP everything: 18/d
 *   (Rajbhandari et al. 2020, Figure 1, with K = 12 and fp32 gradients).
 * Activations of one transformer layer for one microbatch (Korthikanti
 * et al. 2022, Table 2), s sequence, b micro-batch, h hidden, a heads,
 * t tensor-parallel size, bf16, no flash attention:
 *   no parallelism            s b h (34 + 5 a s / h)
 *   TP                        s b h (10 + 24/t + 5 a s / (h t))
 *   TP + SP                   s b h (34 + 5 a s / h) / t
 *   TP + selective recompute  s b h (10 + 24/t)
 *   TP + SP + selective       s b h 34 / t
 *   full recompute            2 s b h   (the layer's input only)
 * GPT-3 175B: s = 2048, h = 12288, a = 96: s b h = 25,165,824 (b = 1)
 * and 5 a s / h = 5 * 96 * 2048 / 12288 = 80.
 * Pipeline in-flight microbatches on stage i of p with m microbatches:
 * GPipe m; 1F1B min(p - i, m); interleaved 1F1B with v chunks, stage 0,
 * p (1 + (p - 1) / (p v)) (Narayanan et al. 2021, Section 2.2.2).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <string.h>

#include "memory.h"
#include "testutil.h"
#include "units.h"


static void expect_rel(double got, double want, double tol, const char *what)
{
	double err = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1.0);
	cr_expect(err <= tol, "%s: got %.12g, want %.12g (rel err %.2g)", what,
		  got, want, err);
}

static struct cluster h100(long gpus)
{
	struct cluster c;
	struct perr e = { "" };
	cr_assert_eq(cluster_preset("dgx-h100", gpus, &c, &e), PPLAN_OK, "%s", e.msg);
	return c;
}

static const struct model_spec *zoo(const char *name)
{
	const struct model_spec *m = model_find(name);
	cr_assert_not_null(m, "%s is not in the zoo", name);
	return m;
}

/* ---- Bytes per parameter --------------------------------------------------- */

struct bpp_case {
	char model[32];
	int dp, zero;
	double weights, grads, opt; /* bytes per parameter, by hand */
};

ParameterizedTestParameters(model_states, bytes_per_param)
{
	static struct bpp_case cases[] = {
		/* Megatron without the distributed optimizer: 2 + 4 + 12 = 18,
		 * whatever d is. */
		{ "gpt3-1.3b", 1, 0, 2, 4, 12 },
		{ "gpt3-1.3b", 8, 0, 2, 4, 12 },
		{ "llama2-7b", 64, 0, 2, 4, 12 },
		/* Distributed optimizer: 6 + 12/d.  d=2: 6 + 6 = 12;
		 * d=8: 6 + 1.5 = 7.5; d=64: 6 + 0.1875 = 6.1875. */
		{ "gpt3-1.3b", 2, 1, 2, 4, 6 },
		{ "gpt3-1.3b", 8, 1, 2, 4, 1.5 },
		{ "llama2-7b", 64, 1, 2, 4, 0.1875 },
		/* ZeRO-2: 2 + 16/d.  d=8: 2 + 0.5 + 1.5 = 4. */
		{ "gpt3-1.3b", 8, 2, 2, 0.5, 1.5 },
		{ "llama2-7b", 4, 2, 2, 1, 3 },
		/* ZeRO-3: 18/d.  d=8: 0.25 + 0.5 + 1.5 = 2.25; d=64: 0.28125. */
		{ "gpt3-1.3b", 8, 3, 0.25, 0.5, 1.5 },
		{ "llama2-7b", 64, 3, 2.0 / 64, 4.0 / 64, 12.0 / 64 },
	};
	return cr_make_param_array(struct bpp_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bpp_case *c, model_states, bytes_per_param)
{
	const struct model_spec *m = zoo(c->model);
	struct cluster cl = h100(c->dp < 8 ? 8 : c->dp);
	struct layout l;
	struct train_opts o;
	struct stage_params sp;
	struct mem_breakdown mb;
	double P = model_params_total(m);
	double total = c->weights + c->grads + c->opt;

	layout_default(&l);
	l.dp = c->dp;
	l.zero = c->zero;
	l.gbs = 8L * c->dp;
	train_opts_default(&o, m);
	cr_assert_eq(o.b.pipe, FW_PIPE_MEGATRON);
	cr_assert_eq(o.b.grad_bytes, 4); /* bf16: fp32 main gradients */
	/* pp = 1, tp = 1: one GPU holds the whole model. */
	memory_stage_params(m, &l, &o, 0, &sp);
	expect_rel(sp.dense + sp.expert, P, 1e-12, "params on the only stage");
	cr_assert_eq(sp.layers, m->layers);
	cr_assert(sp.has_embedding && sp.has_lm_head);
	memory_stage(m, &cl, &l, &o, 0, &mb);
	expect_rel(mb.weights, c->weights * P, 1e-12, "weights");
	expect_rel(mb.gradients, c->grads * P, 1e-12, "gradients");
	expect_rel(mb.optimizer, c->opt * P, 1e-12, "optimizer states");
	expect_rel(mb.weights + mb.gradients + mb.optimizer, total * P, 1e-12,
		   "model states");
	expect_rel(mb.total, mb.weights + mb.gradients + mb.optimizer +
				     mb.activations + mb.other, 1e-12, "total");
}

/* The two headline figures directly: 18 and 6 + 12/d. */
Test(model_states, megatron_18_and_6_plus_12_over_d)
{
	const struct model_spec *m = zoo("llama2-7b");
	struct cluster cl = h100(64);
	struct train_opts o;
	double P = model_params_total(m);
	train_opts_default(&o, m);
	for (int d = 2; d <= 64; d *= 2) {
		struct layout l;
		struct mem_breakdown plain, dist;
		layout_default(&l);
		l.dp = d;
		l.gbs = 2L * d;
		l.zero = 0;
		memory_stage(m, &cl, &l, &o, 0, &plain);
		l.zero = 1;
		memory_stage(m, &cl, &l, &o, 0, &dist);
		expect_rel((plain.weights + plain.gradients + plain.optimizer) / P,
			   18.0, 1e-12, "18 bytes/param");
		expect_rel((dist.weights + dist.gradients + dist.optimizer) / P,
			   6.0 + 12.0 / d, 1e-12, "6 + 12/d bytes/param");
	}
}

/* fp32 weights (the CPU backend's runs, pplan exec the only framework
 * priced in fp32): pplan exec keeps an fp32 master shard beside the fp32
 * weights, as in every precision (exec/params.c allocates master, adam_m
 * and adam_v per shard element), where the weight could be its own
 * master: 4 + 4 + 12 = 20 bytes per parameter, not 16; with the
 * distributed optimizer over d = 4, 4 + 4 + 12/4 = 11. */
Test(model_states, fp32_master_only_where_kept)
{
	const struct model_spec *m = zoo("gpt3-1.3b");
	struct cluster cl = h100(8);
	struct train_opts o;
	struct perr e = { "" };
	double P = model_params_total(m);
	struct layout l;
	struct mem_breakdown mb;
	layout_default(&l);
	l.gbs = 8;
	l.zero = 0;
	train_opts_default(&o, m);
	o.precision = PREC_FP32;
	o.fw = framework_executor();
	cr_assert_eq(train_opts_resolve(&o, &e), PPLAN_OK, "%s", e.msg);
	memory_stage(m, &cl, &l, &o, 0, &mb);
	expect_rel((mb.weights + mb.gradients + mb.optimizer) / P, 20.0, 1e-12,
		   "pplan exec fp32: 20 bytes/param");
	l.dp = 4;
	l.gbs = 16;
	l.zero = 1;
	memory_stage(m, &cl, &l, &o, 0, &mb);
	expect_rel((mb.weights + mb.gradients + mb.optimizer) / P, 4.0 + 4.0 + 12.0 / 4, 1e-12,
		   "pplan exec fp32, distributed optimizer over 4: 11 bytes/param");
}

/* Tensor and pipeline parallelism divide the parameters; the stages hold
 * the whole model once, plus with tied embeddings the LM head's copy of
 * the embedding on the last stage (Megatron-LM keeps one per end). */
Test(model_states, stages_partition_the_model)
{
	static const char *const names[] = { "gpt3-175b", "llama2-70b" };
	for (size_t i = 0; i < 2; i++) {
		const struct model_spec *m = zoo(names[i]);
		struct layout l;
		struct train_opts o;
		double sum = 0, want;
		layout_default(&l);
		l.pp = 4;
		train_opts_default(&o, m);
		for (int s = 0; s < 4; s++) {
			struct stage_params sp;
			memory_stage_params(m, &l, &o, s, &sp);
			cr_assert_eq(sp.layers, m->layers / 4);
			cr_assert_eq(sp.has_embedding, s == 0);
			cr_assert_eq(sp.has_lm_head, s == 3);
			sum += sp.dense + sp.expert;
		}
		want = model_params_total(m) +
		       (m->tied_embeddings ? model_params_embedding(m) : 0);
		expect_rel(sum, want, 1e-12, names[i]);
		/* tp = 8 holds an eighth of each stage's parameters. */
		{
			struct stage_params a, b;
			memory_stage_params(m, &l, &o, 1, &a);
			l.tp = 8;
			memory_stage_params(m, &l, &o, 1, &b);
			expect_rel(b.dense, a.dense / 8, 1e-12, "tp 8");
			l.tp = 1;
		}
	}
}

/* ---- Activations: Korthikanti et al. 2022, Table 2 ----------------------- */

static void gpt3_175b(struct model_spec *m, struct train_opts *o)
{
	/* The paper's shapes: F = 4h, no GQA, a 2-matrix GeLU MLP. */
	*m = *zoo("gpt3-175b");
	cr_assert_eq(m->hidden, 12288);
	cr_assert_eq(m->heads, 96);
	cr_assert_eq(m->kv_heads, 96);
	cr_assert_eq(m->head_dim, 128);
	cr_assert_eq(m->ffn, 4 * 12288);
	cr_assert_eq(m->mlp, MLP_GELU);
	cr_assert_eq(m->num_experts, 0);
	train_opts_default(o, m);
	o->seq = 2048;
	o->precision = PREC_BF16;
	o->b.attention = FW_ATTN_UNFUSED;
}

struct act_case {
	int tp, sp, mbs;
	enum recompute rc;
	double bytes; /* by hand, see the comments */
};

ParameterizedTestParameters(activations, korthikanti_table2)
{
	/* sbh = 2048 * 12288 = 25,165,824; 5as/h = 80. */
	static struct act_case cases[] = {
		/* No parallelism: sbh (34 + 80) = 114 sbh = 2,868,903,936. */
		{ 1, 0, 1, RECOMPUTE_NONE, 2868903936.0 },
		/* TP 8: sbh (10 + 24/8 + 80/8) = 23 sbh = 578,813,952. */
		{ 8, 0, 1, RECOMPUTE_NONE, 578813952.0 },
		/* TP 4: sbh (10 + 6 + 20) = 36 sbh = 905,969,664. */
		{ 4, 0, 1, RECOMPUTE_NONE, 905969664.0 },
		/* TP 8 + SP: 114 sbh / 8 = 14.25 sbh = 358,612,992. */
		{ 8, 1, 1, RECOMPUTE_NONE, 358612992.0 },
		/* TP 4 + SP, b = 2: 2 * 114 / 4 sbh = 57 sbh = 1,434,451,968. */
		{ 4, 1, 2, RECOMPUTE_NONE, 1434451968.0 },
		/* Selective, no TP: 34 sbh = 855,638,016. */
		{ 1, 0, 1, RECOMPUTE_SELECTIVE, 855638016.0 },
		/* TP 8 + selective: sbh (10 + 3) = 13 sbh = 327,155,712. */
		{ 8, 0, 1, RECOMPUTE_SELECTIVE, 327155712.0 },
		/* TP 8 + SP + selective: 34/8 sbh = 4.25 sbh = 106,954,752. */
		{ 8, 1, 1, RECOMPUTE_SELECTIVE, 106954752.0 },
		/* Full recompute keeps the layer input: 2 sbh = 50,331,648,
		 * with or without TP. */
		{ 1, 0, 1, RECOMPUTE_FULL, 50331648.0 },
		{ 8, 0, 1, RECOMPUTE_FULL, 50331648.0 },
		/* With SP that input is itself split over the tp ranks
		 * (Megatron checkpoints the sequence-parallel hidden states):
		 * 2 sbh / 8 = 6,291,456. */
		{ 8, 1, 1, RECOMPUTE_FULL, 6291456.0 },
	};
	return cr_make_param_array(struct act_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct act_case *c, activations, korthikanti_table2)
{
	struct model_spec m;
	struct train_opts o;
	struct layout l;
	double got;

	gpt3_175b(&m, &o);
	layout_default(&l);
	l.tp = c->tp;
	l.sp = c->sp;
	l.mbs = c->mbs;
	l.recompute = c->rc;
	got = memory_layer_activations(&m, &l, &o, 0);
	cr_assert(fabs(got - c->bytes) <= 1e-9 * c->bytes,
		  "tp=%d sp=%d mbs=%d recompute=%s: %.0f bytes, want %.0f (%.4f sbh, want %.4f)",
		  c->tp, c->sp, c->mbs, recompute_name(c->rc), got, c->bytes,
		  got / 25165824.0 / c->mbs, c->bytes / 25165824.0 / c->mbs);
}

/* The formula's shape, for several t: sbh (10 + 24/t + 5as/(ht)) without
 * SP, sbh (34 + 5as/h)/t with it. */
Test(activations, formula_in_t)
{
	struct model_spec m;
	struct train_opts o;
	double sbh = 2048.0 * 12288.0, r = 5.0 * 96 * 2048 / 12288;
	gpt3_175b(&m, &o);
	for (int t = 1; t <= 32; t *= 2) {
		struct layout l;
		layout_default(&l);
		l.tp = t;
		l.sp = 0;
		expect_rel(memory_layer_activations(&m, &l, &o, 0),
			   sbh * (10 + 24.0 / t + r / t), 1e-12, "TP");
		if (t > 1) {
			l.sp = 1;
			expect_rel(memory_layer_activations(&m, &l, &o, 0),
				   sbh * (34 + r) / t, 1e-12, "TP+SP");
		}
	}
}

/* Flash attention keeps no s x s scores: the 5as/h term goes, as with
 * selective recomputation. */
Test(activations, flash_attention_drops_the_scores)
{
	struct model_spec m;
	struct train_opts o;
	struct layout l;
	gpt3_175b(&m, &o);
	o.b.attention = FW_ATTN_FLASH;
	layout_default(&l);
	expect_rel(memory_layer_activations(&m, &l, &o, 0), 34.0 * 2048 * 12288,
		   1e-12, "34 sbh");
}

/* Generalised for GQA and a gated MLP, derived term by term as the paper
 * does.  Per token and layer, bf16: norm inputs 4h, QKV input 2h, Q 2 a dh,
 * K and V 2 g dh each, projection input 2h, MLP input 2h, gate, up and
 * their product 3 x 2f: 10h + 2 (a + 2g) dh + 6f.  Llama 2 70B (h 8192,
 * a 64, g 8, dh 128, f 28672; trained without dropout), flash attention,
 * s = 4096:
 *   81,920 + 20,480 + 172,032 = 274,432 bytes per token,
 *   x 4096 = 1,124,073,472 bytes.
 * TP 8 without SP splits all but 8h (norm inputs, QKV and MLP inputs):
 * 65,536 + (20,480 + 16,384 + 172,032) / 8 = 91,648 per token,
 * x 4096 = 375,390,208.
 * With dropout (p > 0) each layer also keeps its attention and MLP
 * dropout masks, h bytes each, replicated over TP without SP:
 * 290,816 per token (1,191,182,336) and 81,920 + 26,112 = 108,032 with
 * TP 8 (442,499,072). */
Test(activations, gqa_swiglu)
{
	const struct model_spec *m = zoo("llama2-70b");
	struct model_spec drop = *m;
	struct train_opts o;
	struct layout l;
	train_opts_default(&o, m);
	cr_assert_eq(o.seq, 4096);
	cr_assert_eq(o.b.attention, FW_ATTN_FLASH);
	cr_assert(m->no_dropout, "Llama 2 trains without dropout");
	layout_default(&l);
	expect_rel(memory_layer_activations(m, &l, &o, 0), 1124073472.0, 1e-12,
		   "llama2-70b, no TP");
	l.tp = 8;
	expect_rel(memory_layer_activations(m, &l, &o, 0), 375390208.0, 1e-12,
		   "llama2-70b, TP 8");
	l.sp = 1;
	expect_rel(memory_layer_activations(m, &l, &o, 0), 1124073472.0 / 8, 1e-12,
		   "llama2-70b, TP 8 + SP");

	drop.no_dropout = 0;
	layout_default(&l);
	expect_rel(memory_layer_activations(&drop, &l, &o, 0), 1191182336.0, 1e-12,
		   "llama2-70b with dropout, no TP");
	l.tp = 8;
	expect_rel(memory_layer_activations(&drop, &l, &o, 0), 442499072.0, 1e-12,
		   "llama2-70b with dropout, TP 8");
}

/* Megatron's block method and activation CPU offloading, Llama 3 8B
 * (32 layers), bf16, flash attention, no dropout: a layer keeps 139,264 B
 * per token without recomputation (Megatron's count, below; flash keeps
 * no scores, so selective and none agree) and its input, 2h = 8,192 B,
 * with full recomputation.
 *   one stage, recompute_layers=8: 8 x 8,192 + 24 x 139,264 = 3,407,872;
 *   pp 2, vp 2 (16 layers, two chunks of 8), recompute_layers=3: 3 per
 *   chunk, 6 of 16: 6 x 8,192 + 10 x 139,264 = 1,441,792;
 *   offload_layers=12: 32 - 12 layers kept, and one in transit: 21 x
 *   139,264 = 2,924,544. */
Test(activations, block_recompute_and_layer_offload)
{
	const struct model_spec *m = zoo("llama3-8b");
	struct train_opts o;
	struct layout l;
	double s = 8192;

	train_opts_default(&o, m);
	layout_default(&l);
	expect_rel(memory_stage_activations(m, &l, &o, 0), 32 * 139264.0 * s, 1e-12, "none");
	l.recompute = RECOMPUTE_FULL;
	expect_rel(memory_stage_activations(m, &l, &o, 0), 32 * 8192.0 * s, 1e-12, "full");
	l.recompute_layers = 8;
	expect_rel(memory_stage_activations(m, &l, &o, 0), 3407872.0 * s, 1e-12, "block 8");
	l.recompute_layers = 32;
	expect_rel(memory_stage_activations(m, &l, &o, 0), 32 * 8192.0 * s, 1e-12,
		   "block of every layer = full");
	l.pp = 2;
	l.vp = 2;
	l.schedule = SCHED_INTERLEAVED;
	l.recompute_layers = 3;
	cr_assert_eq(layout_recomputed_layers(&l, 16), 6);
	expect_rel(memory_stage_activations(m, &l, &o, 0), 1441792.0 * s, 1e-12,
		   "block 3 per chunk, vp 2");
	layout_default(&l);
	l.offload_layers = 12;
	expect_rel(memory_stage_activations(m, &l, &o, 0), 2924544.0 * s, 1e-12,
		   "offload 12 layers");
}

/* torchtitan's op-level selective checkpointing keeps the layer input and
 * the outputs of the attention and of every other matmul (wq, wv, w1, w2)
 * and of the TP reduce-scatters.  Llama 3 8B (h 4096, 32 heads, 8 KV
 * heads of 128, f 14336), per token and layer, bf16:
 *   input 2h 8,192 + wq 2 x 4096 8,192 + wv 2 x 1024 2,048
 *   + attention output 8,192 and its fp32 log-sum-exp 4 x 32 = 128
 *   + w1 2 x 14336 28,672 + w2 2h 8,192 = 63,616 bytes,
 * against Megatron's selective 8h + 2(a + 2g) dh + 2 a dh + 6f =
 * 32,768 + 12,288 + 8,192 + 86,016 = 139,264.  TP 2 with SP: the input,
 * wq, wv, the attention and w1 halve (4,096 + 23,616), w2's output stays
 * whole before its reduce-scatter (8,192), and the two reduce-scatter
 * outputs add 2 x 2h / 2 = 8,192: 44,096. */
Test(activations, op_level_selective_checkpointing)
{
	const struct model_spec *m = zoo("llama3-8b");
	struct train_opts o;
	struct layout l;
	double s = 8192;

	train_opts_default(&o, m);
	cr_assert_eq(o.seq, 8192);
	layout_default(&l);
	l.recompute = RECOMPUTE_SELECTIVE;
	expect_rel(memory_layer_activations(m, &l, &o, 0), 139264.0 * s, 1e-12,
		   "Megatron's selective");
	use_framework(&o, "torchtitan", 2025);
	cr_assert(o.b.selective_ops);
	expect_rel(memory_layer_activations(m, &l, &o, 0), 63616.0 * s, 1e-12,
		   "op-level, no TP");
	l.tp = 2;
	l.sp = 1;
	expect_rel(memory_layer_activations(m, &l, &o, 0), 44096.0 * s, 1e-12,
		   "op-level, TP 2 + SP");
	/* An MoE layer keeps Megatron's count: op-level is priced for dense
	 * layers only. */
	cr_assert_not(memory_op_sac(m, &o, 1));
	l.recompute = RECOMPUTE_NONE;
	cr_assert_gt(memory_layer_activations(m, &l, &o, 0), 44096.0 * s);
}

/* The loss's peak on the last stage: Megatron's vocab-parallel
 * cross-entropy keeps the bf16 logits and one fp32 copy its softmax
 * overwrites, 6 B per logit; torchtitan's cross_entropy(logits.float())
 * also keeps the fp32 log-softmax for the backward, 10 B.  Llama 3 8B,
 * one GPU, mbs 2 at 8192 tokens, full recomputation (so the layers keep
 * the same 2sbh under both): the difference is 4 B x 16,384 tokens x
 * 128,256 logits = 8,405,385,216 bytes. */
Test(activations, loss_bytes_by_framework)
{
	const struct model_spec *m = zoo("llama3-8b");
	struct cluster c = h100(8);
	struct train_opts o;
	struct layout l;
	struct mem_breakdown mega, titan;

	train_opts_default(&o, m);
	layout_default(&l);
	l.mbs = 2;
	l.gbs = 2;
	l.recompute = RECOMPUTE_FULL;
	cr_assert_eq(o.b.loss_bytes, 6.0);
	memory_stage(m, &c, &l, &o, 0, &mega);
	use_framework(&o, "torchtitan", 2025);
	cr_assert_eq(o.b.loss_bytes, 10.0);
	memory_stage(m, &c, &l, &o, 0, &titan);
	expect_rel(titan.activations - mega.activations, 8405385216.0, 1e-9,
		   "4 more bytes per logit");
}

/* Korthikanti et al.'s 34 sbh counts two 1-byte dropout masks of h and,
 * for unfused attention, 5 a s (softmax output 2, dropout mask 1, dropout
 * output 2).  GPT-3 175B trained without dropout keeps 32 sbh, and the
 * softmax output alone, 2 a s: sbh (32 + 2 a s / h) = sbh (32 + 2 x 96 x
 * 2048 / 12288) = 64 sbh. */
Test(activations, no_dropout_drops_the_masks)
{
	struct model_spec m;
	struct train_opts o;
	struct layout l;
	double sbh = 2048.0 * 12288;
	gpt3_175b(&m, &o);
	cr_assert(!m.no_dropout, "GPT-3 kept dropout 0.1");
	m.no_dropout = 1;
	layout_default(&l);
	o.b.attention = FW_ATTN_FLASH;
	expect_rel(memory_layer_activations(&m, &l, &o, 0), 32.0 * sbh, 1e-12, "32 sbh, flash");
	o.b.attention = FW_ATTN_UNFUSED;
	expect_rel(memory_layer_activations(&m, &l, &o, 0), 64.0 * sbh, 1e-12,
		   "sbh (32 + 2as/h), unfused");
}

/* ---- Microbatches in flight -------------------------------------------- */

struct inflight_case {
	enum schedule sched;
	int pp, vp;
	long m;
	int stage;
	double want;
};

ParameterizedTestParameters(inflight, schedules)
{
	static struct inflight_case cases[] = {
		/* GPipe: all m forwards before any backward. */
		{ SCHED_GPIPE, 4, 1, 8, 0, 8 },
		{ SCHED_GPIPE, 4, 1, 8, 3, 8 },
		/* 1F1B: stage i holds p - i: 4, 3, 2, 1. */
		{ SCHED_1F1B, 4, 1, 8, 0, 4 },
		{ SCHED_1F1B, 4, 1, 8, 1, 3 },
		{ SCHED_1F1B, 4, 1, 8, 2, 2 },
		{ SCHED_1F1B, 4, 1, 8, 3, 1 },
		/* ... but never more than m: min(8 - 0, 2) = 2. */
		{ SCHED_1F1B, 8, 1, 2, 0, 2 },
		{ SCHED_1F1B, 8, 1, 2, 6, 2 },
		{ SCHED_1F1B, 8, 1, 2, 7, 1 },
		{ SCHED_1F1B, 1, 1, 64, 0, 1 },
		/* Interleaved, stage 0: p (1 + (p-1)/(p v)).
		 * p 4, v 2: 4 (1 + 3/8) = 5.5.
		 * p 8, v 4: 8 (1 + 7/32) = 9.75.
		 * p 4, v 4: 4 (1 + 3/16) = 4.75. */
		{ SCHED_INTERLEAVED, 4, 2, 16, 0, 5.5 },
		{ SCHED_INTERLEAVED, 8, 4, 64, 0, 9.75 },
		{ SCHED_INTERLEAVED, 4, 4, 16, 0, 4.75 },
		/* Later stages, from Megatron-LM's warm-up count
		 * (p - i - 1) * 2 + (v - 1) * p chunks, plus the one in the
		 * steady state, in units of whole stages (/v):
		 * p 4, v 2, stage 3: (0 + 4 + 1) / 2 = 2.5;
		 * stage 1: (4 + 4 + 1) / 2 = 4.5. */
		{ SCHED_INTERLEAVED, 4, 2, 16, 3, 2.5 },
		{ SCHED_INTERLEAVED, 4, 2, 16, 1, 4.5 },
		/* Few microbatches: at most all m v chunks: m = 2 -> 2. */
		{ SCHED_INTERLEAVED, 4, 2, 2, 0, 2 },
	};
	return cr_make_param_array(struct inflight_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct inflight_case *c, inflight, schedules)
{
	struct layout l;
	double got;
	layout_default(&l);
	l.pp = c->pp;
	l.vp = c->vp;
	l.schedule = c->sched;
	got = memory_inflight(&l, c->m, c->stage);
	cr_assert(fabs(got - c->want) < 1e-12, "%s p=%d v=%d m=%ld stage %d: %g, want %g",
		  schedule_name(c->sched), c->pp, c->vp, c->m, c->stage, got, c->want);
}

/* A middle stage of a 1F1B pipeline holds one more microbatch than the
 * next: their activation terms differ by exactly one stage's layers of
 * one microbatch. */
Test(inflight, activations_follow_the_schedule)
{
	const struct model_spec *m = zoo("gpt3-175b");
	struct cluster cl = h100(64);
	struct layout l;
	struct train_opts o;
	struct mem_breakdown s1, s2, s0;
	double layer;

	layout_default(&l);
	l.tp = 8; l.pp = 4; l.dp = 2; l.sp = 1; l.zero = 1;
	l.gbs = 64;
	train_opts_default(&o, m);
	layer = memory_layer_activations(m, &l, &o, 0);
	memory_stage(m, &cl, &l, &o, 1, &s1);
	memory_stage(m, &cl, &l, &o, 2, &s2);
	cr_assert_eq(s1.inflight, 3);
	cr_assert_eq(s2.inflight, 2);
	expect_rel(s1.activations - s2.activations, layer * (96 / 4), 1e-9,
		   "one microbatch of 24 layers");
	/* The first stage holds the most and is the peak. */
	memory_stage(m, &cl, &l, &o, 0, &s0);
	{
		struct mem_breakdown peak;
		memory_peak(m, &cl, &l, &o, &peak);
		cr_assert_eq(peak.stage, 0);
		expect_rel(peak.total, s0.total, 1e-12, "peak is stage 0");
	}
	/* GPipe holds all 32 microbatches: far more. */
	l.schedule = SCHED_GPIPE;
	memory_stage(m, &cl, &l, &o, 0, &s1);
	cr_assert_eq(s1.inflight, 64 / 2);
	cr_assert_gt(s1.activations, 4 * s0.activations);
}

/* Recomputation and sharding only ever lower the memory. */
Test(memory, monotone_in_recompute_and_zero)
{
	const struct model_spec *m = zoo("llama3-70b");
	struct cluster cl = h100(64);
	struct layout l;
	struct train_opts o;
	struct mem_breakdown a, b, c;

	layout_default(&l);
	l.tp = 8; l.dp = 8; l.sp = 1; l.gbs = 64;
	train_opts_default(&o, m);
	l.recompute = RECOMPUTE_NONE;
	memory_peak(m, &cl, &l, &o, &a);
	l.recompute = RECOMPUTE_SELECTIVE;
	memory_peak(m, &cl, &l, &o, &b);
	l.recompute = RECOMPUTE_FULL;
	memory_peak(m, &cl, &l, &o, &c);
	/* With flash attention selective recompute has nothing left to drop. */
	cr_assert_leq(b.activations, a.activations);
	cr_assert_lt(c.activations, b.activations);
	cr_assert_lt(c.total, a.total);
	l.recompute = RECOMPUTE_NONE;
	for (int z = 0; z < 3; z++) {
		l.zero = z;
		memory_peak(m, &cl, &l, &o, &a);
		l.zero = z + 1;
		memory_peak(m, &cl, &l, &o, &b);
		cr_assert_lt(b.weights + b.gradients + b.optimizer,
			     a.weights + a.gradients + a.optimizer, "zero %d -> %d", z,
			     z + 1);
	}
	/* What a real run adds is at least the CUDA context. */
	cr_assert_geq(a.other, 1.0 * GIB);
}

/* Megatron's --recompute-modules on an MoE layer of Qwen3-30B-A3B (h 2048,
 * 32 heads and 4 KV heads of 128, 128 experts of 768, top 8, no dropout),
 * bf16, flash attention, no TP, s = 4096, per token:
 *   norms and the QKV and MLP inputs 8h = 16,384
 *   Q, K, V and the attention output 2 (32 + 8) 128 + 2 x 32 x 128 = 18,432
 *   the experts' gate, up and product 6 x 8 x 768 = 36,864, the 8
 *   permuted input copies 2 x 8 x 2048 = 32,768, router probabilities
 *   4 x 128 = 512: 70,144
 *   selective (core_attn) 104,960; + layernorm drops the QKV and MLP
 *   inputs 4h: 96,768; moe_act drops the activations' outputs
 *   2 x 8 x 768 = 12,288: 92,672; moe drops the MoE MLP's 70,144: 34,816;
 *   layernorm + moe 26,624. */
struct module_set { unsigned mods; double per_token; };

/* Qwen3-30B-A3B's MoE layer at s = 4096 in precision prec, selective
 * recomputation of each module set: its activations per token as
 * given.  *o and *l are the setting, for further checks. */
static void expect_module_sets(enum precision prec, const struct module_set *sets, size_t n,
			       struct train_opts *o, struct layout *l)
{
	const struct model_spec *m = zoo("qwen3-30b-a3b");
	train_opts_default(o, m);
	o->seq = 4096;
	o->precision = prec;
	layout_default(l);
	l->recompute = RECOMPUTE_SELECTIVE;
	for (size_t i = 0; i < n; i++) {
		char what[64];
		l->recompute_modules = sets[i].mods;
		snprintf(what, sizeof what, "%s, modules %#x", precision_name(prec), sets[i].mods);
		expect_rel(memory_layer_activations(m, l, o, 1), sets[i].per_token * 4096, 1e-12,
			   what);
	}
}

Test(activations, recompute_modules)
{
	const struct model_spec *m = zoo("qwen3-30b-a3b");
	struct train_opts o;
	struct layout l;
	double s = 4096;
	static const struct module_set sets[] = {
		{ 0, 104960 }, { RM_CORE_ATTN, 104960 }, { RM_LAYERNORM, 96768 },
		{ RM_MOE_ACT, 92672 }, { RM_MOE, 34816 }, { RM_LAYERNORM | RM_MOE, 26624 },
	};
	expect_module_sets(PREC_BF16, sets, sizeof sets / sizeof sets[0], &o, &l);
	/* A dense layer: mlp drops its 6f; moe_act touches only experts. */
	l.recompute_modules = RM_MOE_ACT;
	expect_rel(memory_layer_activations(m, &l, &o, 0),
		   s * (16384 + 18432 + 6.0 * m->ffn), 1e-12, "dense layer, moe_act");
	l.recompute_modules = RM_MLP;
	expect_rel(memory_layer_activations(m, &l, &o, 0), s * (16384 + 18432), 1e-12,
		   "dense layer, mlp");
}

/* The same MoE layer in fp8: Transformer Engine keeps every GEMM's input
 * quantized for the backward, one byte an element.  Per token:
 *   norms 4h, QKV and MLP inputs 2h + 2h less a byte each: 8h - 2h = 12,288
 *   Q, K, V 2 (32 + 8) 128 = 10,240 and the projection's input (32 x 128
 *   wide, not h) 4,096: 14,336
 *   the experts' gate and up outputs 4 x 8 x 768 = 24,576, the product
 *   (fc2's input) 8 x 768 = 6,144, the 8 permuted copies (fc1's input)
 *   8 x 2048 = 16,384, router probabilities 512: 47,616
 *   in all 74,240; moe_act drops the product's 6,144: 68,096; moe the
 *   MoE MLP's 47,616: 26,624.  expert_fc1 offloads the copies' 16,384. */
Test(activations, fp8_keeps_the_experts_inputs_in_one_byte)
{
	const struct model_spec *m = zoo("qwen3-30b-a3b");
	struct train_opts o;
	struct layout l;
	double s = 4096;
	static const struct module_set sets[] = {
		{ RM_CORE_ATTN, 74240 }, { RM_MOE_ACT, 68096 }, { RM_MOE, 26624 },
	};
	expect_module_sets(PREC_FP8, sets, sizeof sets / sizeof sets[0], &o, &l);
	l.recompute_modules = RM_CORE_ATTN;
	l.offload_modules = OM_EXPERT_FC1;
	expect_rel(memory_layer_offloaded(m, &l, &o, 1), 16384 * s, 1e-12, "fp8 expert_fc1");
	expect_rel(memory_layer_activations(m, &l, &o, 1), (74240 - 16384) * s, 1e-12,
		   "fp8 expert_fc1 left");
}

/* The fp8 recipes, on the same MoE layer and on Llama 2 7B's weights
 * under Megatron-Bridge (fp8 parameters).  MXFP8 keeps one E8M0 scale byte
 * per 32 elements, so every byte an fp8 tensor keeps grows by 1/32.  The
 * layer keeps, per token, the 74,240 B of fp8 above; its fp8 elements are
 * the bytes bf16 keeps more:
 * 104,960 - 74,240 = 30,720 elements (the QKV and MLP inputs 2h, the
 * projection's input 4,096, the product 6,144, the copies 16,384), so MXFP8
 * keeps 74,240 + 30,720 / 32 = 75,200 B.  Weights: 1 byte a parameter under
 * per-tensor scaling, 33/32 under MXFP8, 2 under the blockwise recipes
 * (NVIDIA's keep bf16 parameters, fp8_param_gather off). */
Test(activations, fp8_recipes)
{
	const struct model_spec *m = zoo("qwen3-30b-a3b"), *w = zoo("llama2-7b");
	struct cluster cl = h100(8);
	struct train_opts o;
	struct layout l;
	struct perr e = { "" };
	static const struct { enum fp8_recipe r; double act, weight; } want[] = {
		{ FP8_TENSORWISE, 74240, 1.0 }, { FP8_DELAYED, 74240, 1.0 },
		{ FP8_MXFP8, 75200, 33.0 / 32.0 }, { FP8_BLOCKWISE, 74240, 2.0 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct mem_breakdown mb;
		train_opts_default(&o, m);
		cr_assert_eq(framework_parse("megatron-bridge", &o.fw, &e), PPLAN_OK, "%s", e.msg);
		o.seq = 4096;
		o.precision = PREC_FP8;
		o.switches.fp8_recipe = want[i].r;
		cr_assert_eq(train_opts_resolve(&o, &e), PPLAN_OK, "%s", e.msg);
		cr_assert_eq(o.b.fp8_recipe, want[i].r);
		layout_default(&l);
		l.recompute = RECOMPUTE_SELECTIVE;
		l.recompute_modules = RM_CORE_ATTN;
		expect_rel(memory_layer_activations(m, &l, &o, 1), want[i].act * 4096, 1e-12,
			   fp8_recipe_name(want[i].r));
		layout_default(&l);
		l.dp = 8;
		l.gbs = 16;
		l.zero = 1;
		memory_stage(w, &cl, &l, &o, 0, &mb);
		expect_rel(mb.weights, want[i].weight * model_params_total(w), 1e-12,
			   fp8_recipe_name(want[i].r));
	}
}

/* --offload-modules on the same MoE layer (selective, core_attn), per
 * token: expert_fc1 moves the 8 permuted input copies 2 x 8 x 2048 =
 * 32,768 B (104,960 -> 72,192), moe_act the gate and up outputs
 * 4 x 8 x 768 = 24,576 (-> 80,384), attn_norm + mlp_norm the two norm
 * inputs 4h = 8,192 (-> 96,768), core_attn Q, K and V 2 (32 + 8) 128 =
 * 10,240 (-> 94,720), attn_proj the attention output 2 x 32 x 128 =
 * 8,192; what leaves is what memory_layer_offloaded moves.  With the
 * moe module recomputed the experts' tensors are not kept, so not moved. */
Test(activations, offload_modules)
{
	const struct model_spec *m = zoo("qwen3-30b-a3b");
	struct train_opts o;
	struct layout l;
	double s = 4096;
	static const struct { unsigned off; double per_token; } cases[] = {
		{ OM_EXPERT_FC1, 72192 }, { OM_MOE_ACT, 80384 },
		{ OM_ATTN_NORM | OM_MLP_NORM, 96768 }, { OM_CORE_ATTN, 94720 },
		{ OM_ATTN_PROJ, 96768 },
	};
	train_opts_default(&o, m);
	o.seq = 4096;
	layout_default(&l);
	l.recompute = RECOMPUTE_SELECTIVE;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char what[64];
		l.offload_modules = cases[i].off;
		snprintf(what, sizeof what, "offload %#x", cases[i].off);
		expect_rel(memory_layer_activations(m, &l, &o, 1), cases[i].per_token * s, 1e-12,
			   what);
		expect_rel(memory_layer_offloaded(m, &l, &o, 1), (104960 - cases[i].per_token) * s,
			   1e-12, what);
	}
	l.offload_modules = OM_EXPERT_FC1 | OM_MOE_ACT;
	l.recompute_modules = RM_MOE;
	cr_expect_eq(memory_layer_offloaded(m, &l, &o, 1), 0.0);
	expect_rel(memory_layer_activations(m, &l, &o, 1), 34816 * s, 1e-12, "moe recomputed");
}

/* A physical law: more expert parallelism never raises what one GPU holds
 * of the model's state (weights, gradients, optimizer).  Qwen3-30B-A3B on
 * 64 GPUs, tp 1, dp 64, ep 1 to 64 (the experts' weights and gradients
 * split ep ways, their optimizer states over the expert-data-parallel
 * group of dp/ep: the product stays), and DeepSeek-V3 on 1024 with tp 2
 * and unsplit experts (etp 1), ep 8 to 64. */
Test(memory, more_ep_never_raises_the_model_state)
{
	static const struct { const char *model; long gpus; int tp, etp; } runs[] = {
		{ "qwen3-30b-a3b", 64, 1, 0 }, { "deepseek-v3", 1024, 2, 1 },
	};
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		const struct model_spec *m = zoo(runs[r].model);
		struct cluster cl = h100(runs[r].gpus);
		struct train_opts o;
		double last = INFINITY;
		train_opts_default(&o, m);
		for (int ep = runs[r].tp > 1 ? 8 : 1; ep <= 64; ep *= 2) {
			struct layout l;
			struct mem_breakdown b;
			double state;
			layout_default(&l);
			l.tp = runs[r].tp;
			l.etp = runs[r].etp;
			l.sp = l.tp > 1;
			l.dp = (int)(runs[r].gpus / l.tp);
			l.ep = ep;
			l.gbs = l.dp;
			memory_peak(m, &cl, &l, &o, &b);
			state = b.weights + b.gradients + b.optimizer;
			cr_expect_leq(state, last * (1 + 1e-12), "%s ep %d: %.3f GiB after %.3f",
				      runs[r].model, ep, state / GIB, last / GIB);
			last = state;
		}
	}
}
