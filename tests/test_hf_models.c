/*
 * test_hf_models.c: the architectures teams train today, read from
 * config.json files written from their model cards (tests/fixtures/hf,
 * provenance in its README.md) and from the zoo.
 *
 * Two checks per model.  The exact count, against a second method: the
 * numbers below were computed by tests/fixtures/hf/counts.py, which
 * counts module by module as the Hugging Face modelling code builds the
 * model (a different order of terms from sim/model.c's per-layer
 * formulas); the arithmetic of the largest is also written out here.
 * And the published total (and active count), within 0.5 % where the
 * publisher gives three or more significant digits, else within the
 * rounding of the figure as printed (half a unit of its last digit;
 * active counts printed to two digits are truncated by some vendors, so
 * one unit).
 *
 * Notation: L layers, h hidden, a heads, g kv heads, dh head dim, f dense
 * ffn, fe expert ffn, E routed experts, k experts per token, V vocab.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include "cost.h"
#include "memory.h"
#include "model.h"

#define HF_DIR PPLAN_SOURCE_DIR "/tests/fixtures/hf/"

enum active_kind {
	ACTIVE_ALL,     /* every parameter a token uses (Qwen, Mistral) */
	ACTIVE_COMPUTE, /* without the input embedding table (DeepSeek, OpenAI) */
};

struct hf_case {
	char file[40];
	char zoo[24];        /* the zoo entry with the same architecture, or "" */
	double exact;        /* counts.py */
	double exact_active; /* counts.py, of the kind below */
	double published;    /* the card's total */
	double total_tol;    /* relative */
	double pub_active;   /* the card's active count (0: dense) */
	double active_tol;   /* absolute */
	enum active_kind kind;
};

ParameterizedTestParameters(hf, published_counts)
{
	static struct hf_case cases[] = {
		/* DeepSeek-V3: h 7168, a 128, q rank 1536, kv rank 512, rope
		 * 64, nope 128, v 128.  Attention: q_a 7168*1536 = 11,010,048
		 * + norm 1536 + q_b 1536*128*192 = 37,748,736 + kv_a 7168*576
		 * = 4,128,768 + norm 512 + kv_b 512*128*256 = 16,777,216 +
		 * o 16384*7168 = 117,440,512 + input norm 7168 = 187,114,496.
		 * Dense MLP 3*7168*18432 + 7168 = 396,368,896.  An expert
		 * 3*7168*2048 = 44,040,192; an MoE layer 256 of them
		 * (11,274,289,152), one shared, router 7168*256 = 1,835,008
		 * and norm 7168: 11,320,171,520.  61 attention + 3 dense + 58
		 * MoE = 669,173,039,104; + 2hV 1,853,358,080 + 7168 =
		 * 671,026,404,352.  Active: 8 of 256 experts; less the input
		 * table 926,679,040: 36,625,603,584.  Card: 671B total, 37B
		 * activated (its 685B adds the 14B MTP module). */
		{"DeepSeek-V3.json", "deepseek-v3", 671026404352.0, 36625603584.0, 671e9, 0.005,
		 37e9, 0.5e9, ACTIVE_COMPUTE},
		{"DeepSeek-V2.json", "deepseek-v2", 235741434880.0, 20851512320.0, 236e9, 0.005,
		 21e9, 0.5e9, ACTIVE_COMPUTE},
		/* V2-Lite: no q rank (Q straight from h).  Card: 15.7B, 2.4B
		 * activated (2.45B: truncated). */
		{"DeepSeek-V2-Lite.json", "", 15706484224.0, 2451435008.0, 15.7e9, 0.005, 2.4e9,
		 0.1e9, ACTIVE_COMPUTE},
		/* Qwen1.5-MoE: 60 experts of 1408, a gated shared expert of
		 * 5632, QKV biases.  Card: 14.3B in total, 2.7B activated. */
		{"Qwen1.5-MoE-A2.7B.json", "", 14315784192.0, 2689173504.0, 14.3e9, 0.005, 2.7e9,
		 0.05e9, ACTIVE_ALL},
		/* Qwen2-57B-A14B.  The Qwen2 README's table: 57.41B, 56.32B
		 * without embeddings; the card: 14B activated. */
		{"Qwen2-57B-A14B.json", "qwen2-57b-a14b", 57408658944.0, 14249270784.0, 57.41e9,
		 0.005, 14e9, 0.5e9, ACTIVE_ALL},
		/* Qwen3-30B-A3B: 128 experts of 768, Q/K norms.  Card: 30.5B
		 * in total, 3.3B activated (3.35B: truncated), 29.9B
		 * without embeddings. */
		{"Qwen3-30B-A3B.json", "qwen3-30b-a3b", 30532122624.0, 3353032704.0, 30.5e9, 0.005,
		 3.3e9, 0.1e9, ACTIVE_ALL},
		{"Qwen3-235B-A22B.json", "qwen3-235b-a22b", 235093634560.0, 22190763520.0, 235e9,
		 0.005, 22e9, 0.5e9, ACTIVE_ALL},
		/* gpt-oss-120b: 36 layers, 128 experts of 2880 with biases,
		 * biased router, a learned sink per head.  Model card
		 * Table 1: 116.83B total, 5.13B active (no input table). */
		{"gpt-oss-120b.json", "gpt-oss-120b", 116829156672.0, 5132849472.0, 116.83e9, 0.005,
		 5.13e9, 0.005 * 5.13e9, ACTIVE_COMPUTE},
		{"gpt-oss-20b.json", "gpt-oss-20b", 20914757184.0, 3608307264.0, 20.91e9, 0.005,
		 3.61e9, 0.005 * 3.61e9, ACTIVE_COMPUTE},
		/* Mixtral 8x7B.  Card: 46.7B, 12.9B active. */
		{"Mixtral-8x7B-v0.1.json", "mixtral-8x7b", 46702792704.0, 12879925248.0, 46.7e9,
		 0.005, 12.9e9, 0.05e9, ACTIVE_ALL},
		/* Falcon-7B: 71 heads of 64 with one K/V head (multi_query),
		 * parallel attention and MLP behind one LayerNorm, 4h MLP,
		 * tied.  Per layer 4544*(71+2)*64 + 4544^2 + 2*4544*18176
		 * + 2*4544 = 207,010,112; x32 + hV 295,469,056 + 9088 =
		 * 6,921,720,704.  The cards give no total but the name. */
		{"falcon-7b.json", "", 6921720704.0, 6921720704.0, 7e9, 0.5 / 7.0, 0, 0,
		 ACTIVE_ALL},
		{"falcon-40b.json", "", 41303293952.0, 41303293952.0, 41.3e9, 0.05 / 41.3, 0, 0,
		 ACTIVE_ALL},
		/* OPT-1.3B: ReLU, biases, 2048 + 2 learned positions.  Zhang
		 * et al. 2022, Table 1: 1.3B. */
		{"opt-1.3b.json", "", 1315758080.0, 1315758080.0, 1.3e9, 0.05 / 1.3, 0, 0,
		 ACTIVE_ALL},
		/* Qwen2-7B: QKV biases.  The Qwen2.5-7B card (the same
		 * architecture and vocabulary): 7.61B, 6.53B without
		 * embeddings. */
		{"Qwen2-7B.json", "", 7615616512.0, 7615616512.0, 7.61e9, 0.005, 0, 0, ACTIVE_ALL},
		/* Phi-3-mini: card 3.8B parameters. */
		{"Phi-3-mini-128k-instruct.json", "", 3821079552.0, 3821079552.0, 3.8e9, 0.05 / 3.8,
		 0, 0, ACTIVE_ALL},
		/* LLaVA-1.5 7B's language model (Vicuna 7B v1.5, Llama 2 7B
		 * with 64 more tokens): 6,738,415,616 + 2*64*4096. */
		{"llava-1.5-7b-hf.json", "", 6738939904.0, 6738939904.0, 6.7389e9, 0.005, 0, 0,
		 ACTIVE_ALL},
		/* Hybrid stacks (counts.py counts them block by block).
		 * NVIDIA Nemotron 3 Nano 30B-A3B: 23 Mamba-2 mixers, 6
		 * attention layers, 23 MoE layers of 128 squared-ReLU experts
		 * (top 6) and one shared; card: 31.6B total, about 3.6B
		 * active with the embeddings.  Qwen3-Next 80B-A3B: 36 Gated
		 * DeltaNet and 12 gated-attention layers, each with 512
		 * experts (top 10) and a gated shared expert; 79,674,391,296
		 * total and 3,874,929,408 active as published for it. */
		{"NVIDIA-Nemotron-3-Nano-30B-A3B.json", "nemotron3-nano-30b-a3b", 31577937344.0, 3580073408.0, 31.6e9,
		 0.005, 3.6e9, 0.05e9, ACTIVE_ALL},
		{"Qwen3-Next-80B-A3B.json", "qwen3-next-80b-a3b", 79674391296.0, 3874929408.0, 79674391296.0, 1e-12,
		 3874929408.0, 1.0, ACTIVE_ALL},
		/* Llama 4 (text_config of the multimodal configs): h 5120,
		 * a 40, g 8, dh 128.  Attention 5120*5120 + 2*5120*1024 +
		 * 5120*5120 = 62,914,560 and two norms 10,240.  An expert
		 * 3*5120*8192 = 125,829,120; the shared expert the same; the
		 * router 5120*E.  Scout, 48 MoE layers of 16: 48 * (62,924,800
		 * + 17*125,829,120 + 81,920) = 105,701,130,240, + 2hV
		 * 2,068,971,520 + 5120 = 107,769,861,120; active 17,172,894,720
		 * (one routed and the shared expert).  Maverick, 24 dense
		 * layers (3*5120*16384 = 251,658,240) and 24 of 128 experts.
		 * Cards: Scout 17B active, 109B total; Maverick 17B active,
		 * 400B total.  The totals count the vision encoder and
		 * projector, which text_config leaves out: Scout within
		 * 1.5 %. */
		{"Llama-4-Scout-17B-16E.json", "llama4-scout", 107769861120.0, 17172894720.0, 109e9, 0.015, 17e9,
		 1e9, ACTIVE_ALL},
		{"Llama-4-Maverick-17B-128E.json", "llama4-maverick", 400711848960.0, 17184691200.0, 400e9, 0.005,
		 17e9, 1e9, ACTIVE_ALL},
		/* GLM-4.5-Air (glm4_moe): h 4096, 96 heads of 128 over 8
		 * K/V with Q/K/V biases: 2*4096*12288 + 2*4096*1024 + 12288 +
		 * 2048 = 109,066,240 and two norms 8192, x46; one dense layer
		 * 3*4096*10944 = 134,479,872; 45 MoE layers of 128 routed and
		 * one shared expert of 3*4096*1408 = 17,301,504 and a router
		 * 4096*128: 2,232,418,304; 2hV 1,241,513,984 + h:
		 * 106,852,245,504.  Card: 106B total (without its MTP layer,
		 * within 1 %), 12B active (without either embedding table:
		 * 12.18B; with them 13.42B). */
		{"GLM-4.5-Air.json", "glm4.5-air-106b-a12b", 106852245504.0, 13424123904.0, 106e9, 0.01,
		 12e9, 1.5e9, ACTIVE_ALL},
		/* Pythia-1B (gpt_neox): h 2048, 16 layers, untied 50,304 x
		 * 2048 tables; a layer's biased QKV, dense and MLP (4h^2 + 4h +
		 * 2 x 2048 x 8192 + 8192 + 2048) and two LayerNorms (4h):
		 * 50,358,272; x16 + 206,045,184 + 4096 = 1,011,781,632, the
		 * Hub's count for EleutherAI/pythia-1b. */
		{"pythia-1b.json", "", 1011781632.0, 1011781632.0, 1011781632.0, 1e-12, 0, 0,
		 ACTIVE_ALL},
		/* GPT-2 small with its 1024 x 768 learned positions. */
		{"gpt2.json", "", 124439808.0, 124439808.0, 124.4e6, 0.005, 0, 0, ACTIVE_ALL},
	};
	return cr_make_param_array(struct hf_case, cases, sizeof cases / sizeof cases[0]);
}

static double active_of(const struct model_spec *m, enum active_kind k)
{
	return k == ACTIVE_COMPUTE ? model_params_active_compute(m) : model_params_active(m);
}

ParameterizedTest(struct hf_case *c, hf, published_counts)
{
	struct model_spec m;
	struct perr e = {0};
	char path[256];
	double total, active;

	snprintf(path, sizeof path, "%s%s", HF_DIR, c->file);
	cr_assert_eq(model_load(path, &m, &e), PPLAN_OK, "%s: %s", c->file, e.msg);
	total = model_params_total(&m);
	active = active_of(&m, c->kind);
	cr_expect_eq(total, c->exact, "%s: %.0f, counts.py %.0f", c->file, total, c->exact);
	cr_expect_eq(active, c->exact_active, "%s active: %.0f, counts.py %.0f", c->file, active,
		     c->exact_active);
	cr_expect(fabs(total - c->published) <= c->total_tol * c->published,
		  "%s: %.4g vs published %.4g (%.2f %%)", c->file, total, c->published,
		  100.0 * (total / c->published - 1.0));
	if (c->pub_active > 0)
		cr_expect(fabs(active - c->pub_active) <= c->active_tol,
			  "%s: active %.4g vs published %.4g", c->file, active, c->pub_active);
	if (c->zoo[0]) {
		/* The zoo entry is the same architecture. */
		const struct model_spec *z = model_find(c->zoo);
		cr_assert_not_null(z, "%s", c->zoo);
		cr_expect_eq(model_params_total(z), total, "%s", c->zoo);
		cr_expect_eq(active_of(z, c->kind), active, "%s", c->zoo);
		cr_expect_eq(model_check(z, c->zoo, &e), PPLAN_OK, "%s: %s", c->zoo, e.msg);
	}
}

/* ---- What the readers took from the configs --------------------------------- */

static struct model_spec load(const char *file)
{
	struct model_spec m;
	struct perr e = {0};
	char path[256];
	snprintf(path, sizeof path, "%s%s", HF_DIR, file);
	cr_assert_eq(model_load(path, &m, &e), PPLAN_OK, "%s: %s", file, e.msg);
	return m;
}

Test(hf, deepseek_fields)
{
	struct model_spec m = load("DeepSeek-V3.json");
	cr_expect_eq(m.num_experts, 256);
	cr_expect_eq(m.top_k, 8);
	cr_expect_eq(m.moe_ffn, 2048);
	cr_expect_eq(m.shared_experts, 1);
	cr_expect_eq(m.dense_layers, 3);
	cr_expect_eq(model_moe_layers(&m), 58);
	cr_expect(model_is_mla(&m));
	cr_expect_eq(m.q_lora_rank, 1536);
	cr_expect_eq(m.kv_lora_rank, 512);
	cr_expect_eq(m.head_dim, 192); /* nope + rope */
	cr_expect_eq(m.kv_heads, 128);
	cr_expect_eq(m.seq, 4096);     /* rope_scaling's original length */
	cr_expect_eq(m.tied_embeddings, 0);
	/* group-limited routing: 4 of 8 groups (V2: 3 of 8); V2-Lite's
	 * one group is no limit */
	cr_expect_eq(m.route_groups, 8);
	cr_expect_eq(m.route_topk_groups, 4);
	/* V3's router: sigmoid scores, the aux-loss-free expert bias
	 * (noaux_tc), the top-k weights renormalised and scaled by 2.5; V2's
	 * a softmax over every expert, not renormalised, scaled by 16 */
	cr_expect(m.router_sigmoid && m.router_expert_bias && !m.router_pre_softmax);
	cr_expect_eq(m.router_scale, 2.5);
	m = load("DeepSeek-V2.json");
	cr_expect_eq(m.route_topk_groups, 3);
	cr_expect(!m.router_sigmoid && !m.router_expert_bias && m.router_pre_softmax);
	cr_expect_eq(m.router_scale, 16.0);
	m = load("NVIDIA-Nemotron-3-Nano-30B-A3B.json");
	cr_expect(m.router_sigmoid && m.router_expert_bias, "Nemotron-H: sigmoid, corrected");
	m = load("DeepSeek-V2-Lite.json");
	cr_expect_eq(m.q_lora_rank, 0);
	cr_expect_eq(m.shared_experts, 2);
	cr_expect_eq(m.route_groups, 0);
}

Test(hf, qwen_fields)
{
	struct model_spec m = load("Qwen2-57B-A14B.json");
	cr_expect_eq(m.shared_experts, 1);
	cr_expect_eq(m.shared_ffn, 20480);
	cr_expect(m.shared_gate);
	cr_expect(m.qkv_bias);
	cr_expect(!m.qk_norm);
	m = load("Qwen3-30B-A3B.json");
	cr_expect(m.qk_norm);
	cr_expect(!m.qkv_bias);
	cr_expect_eq(m.shared_experts, 0);
	cr_expect_eq(model_moe_layers(&m), 48);
	m = load("Qwen2-7B.json");
	cr_expect(m.qkv_bias);
	cr_expect_eq(m.num_experts, 0);
}

Test(hf, llama4_fields)
{
	struct model_spec m = load("Llama-4-Maverick-17B-128E.json");
	cr_expect_eq(m.num_experts, 128);
	cr_expect_eq(m.top_k, 1);
	cr_expect_eq(m.moe_ffn, 8192);
	cr_expect_eq(m.ffn, 16384, "the dense layers' intermediate_size_mlp");
	cr_expect_eq(m.moe_every, 2, "interleave_moe_layer_step");
	cr_expect_eq(m.shared_experts, 1);
	cr_expect_eq(model_shared_ffn(&m), 8192);
	cr_expect(!m.shared_gate);
	cr_expect(m.router_sigmoid);
	cr_expect_eq(m.tied_embeddings, 0);
	m = load("Llama-4-Scout-17B-16E.json");
	cr_expect_eq(m.moe_every, 1, "every layer, as moe_layers lists");
	cr_expect_eq(m.seq, 8192, "rope_scaling's original length");
}

Test(hf, falcon_opt_phi_llava_fields)
{
	struct model_spec m = load("falcon-7b.json");
	cr_expect_eq(m.kv_heads, 1);         /* multi_query */
	cr_expect_eq(m.ffn, 4 * 4544);       /* no intermediate_size */
	cr_expect_eq(m.norms_per_layer, 1);  /* parallel_attn, old architecture */
	cr_expect_eq(m.linear_bias, 0);
	cr_expect_eq(m.tied_embeddings, 1);
	m = load("falcon-40b.json");
	cr_expect_eq(m.kv_heads, 8);         /* num_kv_heads */
	cr_expect_eq(m.norms_per_layer, 0);  /* new_decoder_architecture: two */
	cr_expect_eq(m.parallel_block, 1);   /* ... side by side, as the 7B's */
	cr_expect_eq(load("falcon-7b.json").parallel_block, 1);
	cr_expect_eq(load("pythia-1b.json").parallel_block, 1); /* use_parallel_residual */
	m = load("opt-1.3b.json");
	cr_expect_eq(m.parallel_block, 0);   /* sequential, as GPT-2's and Llama's */
	cr_expect_eq(m.mlp, MLP_RELU);
	cr_expect_eq(m.ffn, 8192);           /* ffn_dim */
	cr_expect_eq(m.pos_embedding, 2050); /* 2048 + OPT's offset of 2 */
	cr_expect_eq(m.linear_bias, 1);
	m = load("Phi-3-mini-128k-instruct.json");
	cr_expect_eq(m.seq, 4096);           /* original_max_position_embeddings */
	m = load("llava-1.5-7b-hf.json");
	cr_expect_eq(m.layers, 32);
	cr_expect_eq(m.vocab, 32064);
	cr_expect(strstr(m.note, "text_config") != NULL, "note: %s", m.note);
}

/* Dropout as each family's config names it: GPT-2's resid_pdrop 0.1 and
 * OPT's dropout 0.1 keep masks; Falcon's and BLOOM's 0.0, Phi-3's
 * embd_pdrop and attention_dropout 0.0 and a Llama config with attention_dropout 0.0 only
 * (no hidden dropout key) train without. */
Test(hf, dropout_from_the_config)
{
	cr_expect(!load("gpt2.json").no_dropout);
	cr_expect(!load("opt-1.3b.json").no_dropout);
	cr_expect(load("falcon-7b.json").no_dropout);
	cr_expect(load("bloom-560m.json").no_dropout);
	cr_expect(load("Phi-3-mini-128k-instruct.json").no_dropout);
	cr_expect(load("Meta-Llama-3-8B.json").no_dropout);
}

/* ---- FLOPs and memory of the new architectures ---------------------------------- */

/* MoE model FLOPs per token: the projections, the dense layers' MLP,
 * the MoE layers' k routed and the shared experts, attention over s,
 * the LM head.  Qwen3-30B-A3B at s = 4096, by hand:
 *   projections 2*2048*(32 + 8)*128 + 2*4096*2048 = 37,748,736
 *   scores and values 4*4096*32*128 = 67,108,864
 *   MLP 2*3*2048*8*768 = 75,497,472
 *   per layer 180,355,072; x48 = 8,657,043,456; head 2*2048*151936 =
 *   622,329,856; forward 9,279,373,312; x3 = 27,838,119,936. */
Test(flops, moe_per_token)
{
	const struct model_spec *m = model_find("qwen3-30b-a3b");
	cr_assert_not_null(m);
	cr_expect(fabs(cost_model_flops(m, 4096, 1) / 4096.0 - 27838119936.0) < 1.0,
		  "%.1f", cost_model_flops(m, 4096, 1) / 4096.0);
}

/* MLA: Q through its rank, K and V from the latent, scores over 192
 * wide heads, values over 128.  DeepSeek-V3 at s = 4096, per token:
 *   projections 2*(11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 +
 *   117,440,512) = 374,210,560 (the attention parameters without norms)
 *   scores and values 2*4096*128*(192 + 128) = 335,544,320
 *   dense MLP 2*3*7168*18432 = 792,723,456
 *   MoE MLP 2*3*7168*(8 + 1)*2048 = 792,723,456 (as DeepSeek sized it)
 *   61 x (374,210,560 + 335,544,320 + 792,723,456) = 91,651,178,496
 *   head 2*7168*129280 = 1,853,358,080; forward 93,504,536,576. */
Test(flops, mla_per_token)
{
	const struct model_spec *m = model_find("deepseek-v3");
	cr_assert_not_null(m);
	cr_expect(fabs(cost_model_flops(m, 4096, 1) / (3.0 * 4096.0) - 93504536576.0) < 1.0,
		  "%.1f", cost_model_flops(m, 4096, 1) / (3.0 * 4096.0));
}

/* Where the experts live: routed experts split over ep x etp, the rest
 * over tp; DeepSeek-V3's three dense layers on the first stage. */
Test(memory, experts_where_they_live)
{
	const struct model_spec *m = model_find("deepseek-v3");
	struct train_opts o;
	struct layout l;
	struct stage_params s0, s1;
	double routed;

	train_opts_default(&o, m);
	layout_default(&l);
	l.tp = 2; l.pp = 4; l.dp = 32; l.ep = 8; l.etp = 1;
	l.pp_first = 13; l.pp_last = 16; /* 13 + 2*16 + 16 = 61 */
	cr_expect_eq(memory_stage_layers(m, &l, &o, 0), 13);
	cr_expect_eq(memory_stage_layers(m, &l, &o, 1), 16);
	cr_expect_eq(memory_stage_moe_layers(m, &l, &o, 0), 10);
	cr_expect_eq(memory_stage_moe_layers(m, &l, &o, 1), 16);
	memory_stage_params(m, &l, &o, 0, &s0);
	memory_stage_params(m, &l, &o, 1, &s1);
	routed = 256.0 * 44040192.0;
	cr_expect(fabs(s1.expert - 16 * routed / 8.0) < 1.0, "%.0f", s1.expert);
	cr_expect(fabs(s0.expert - 10 * routed / 8.0) < 1.0, "%.0f", s0.expert);
	/* Stage 1: 16 attentions and 16 MoE commons over tp = 2. */
	cr_expect(fabs(s1.dense - 16 * (187114496.0 + 45882368.0) / 2.0) < 1.0, "%.0f", s1.dense);
	/* The expert replicas: tp*dp*cp / (ep*etp) = 64 / 8 = 8. */
	cr_expect_eq(layout_expert_dp(&l), 8.0);
}

/* Interleaved: stage i holds virtual stages i, i + pp, ...  A 60-layer
 * DeepSeek-V3 on pp = 2, vp = 2: stage 0 holds layers 0..14 (three
 * dense) and 30..44, 27 MoE layers; stage 1 holds 15..29 and 45..59. */
Test(memory, moe_layers_interleaved)
{
	struct model_spec m = *model_find("deepseek-v3");
	struct train_opts o;
	struct layout l;

	m.layers = 60;
	train_opts_default(&o, &m);
	layout_default(&l);
	l.pp = 2; l.vp = 2;
	cr_expect_eq(memory_stage_moe_layers(&m, &l, &o, 0), 27);
	cr_expect_eq(memory_stage_moe_layers(&m, &l, &o, 1), 30);
}

/* An MoE layer whose one expert is the dense MLP (E = k = 1, no
 * imbalance) costs what the dense layer costs plus the permutation of
 * its tokens through HBM (10 bytes per token and hidden unit) and the
 * router's small GEMMs (three per layer, each well under 50 us). */
Test(cost, one_expert_is_a_dense_layer)
{
	struct model_spec d = *model_find("llama3-8b"), moe = d;
	struct cluster c;
	struct train_opts o;
	struct layout l;
	struct prediction pd, pm;
	struct perr e = {0};
	struct cost_params k;
	double permute, extra;

	moe.num_experts = 1;
	moe.top_k = 1;
	cr_assert_eq(cluster_preset("dgx-h100", 8, &c, &e), PPLAN_OK, "%s", e.msg);
	train_opts_default(&o, &d);
	k = *cost_params_default();
	k.moe_imbalance = 1.0;
	o.params = &k;
	layout_default(&l);
	l.tp = 8;
	l.gbs = 8;
	cr_assert_eq(cost_predict(&d, &c, &l, &o, &pd, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(cost_predict(&moe, &c, &l, &o, &pm, &e), PPLAN_OK, "%s", e.msg);
	/* 32 layers, T = 8192 tokens, h = 4096. */
	permute = 32 * 10.0 * 8192 * 4096 / (c.gpu.hbm_gbps * 1e9 * k.hbm_eff);
	extra = pm.chunk.fwd_s - pd.chunk.fwd_s;
	cr_expect(extra >= permute && extra <= permute + 32 * 3 * 50e-6,
		  "extra %g s, permutation %g s", extra, permute);
}

/* ---- pplan.model/1 says the same ---------------------------------------------------- */

/* The same architectures written as pplan.model/1 (moe and mla objects,
 * pos_embedding) count as their config.json does. */
Test(pplan_format, same_counts_as_hf)
{
	static const char *const pairs[][2] = {
		{"deepseek-v2-lite.json", "DeepSeek-V2-Lite.json"},
		{"opt-1.3b.json", "opt-1.3b.json"},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		struct model_spec a, b;
		struct perr e = {0};
		char path[256];
		snprintf(path, sizeof path, "%s/tests/fixtures/models/%s", PPLAN_SOURCE_DIR,
			 pairs[i][0]);
		cr_assert_eq(model_load(path, &a, &e), PPLAN_OK, "%s: %s", pairs[i][0], e.msg);
		b = load(pairs[i][1]);
		cr_expect_eq(model_params_total(&a), model_params_total(&b), "%s", pairs[i][0]);
		cr_expect_eq(model_params_active(&a), model_params_active(&b), "%s", pairs[i][0]);
		cr_expect_eq(cost_model_flops(&a, 4096, 1), cost_model_flops(&b, 4096, 1), "%s",
			     pairs[i][0]);
	}
}

/* Positions and the norms' epsilon: the zoo's entries, typed from the
 * model cards, against what the reader takes from the recorded
 * config.json of the same model (a rotary base absent from a file is
 * transformers' 10000). */
static double base_of(const struct model_spec *m)
{
	return m->rope_theta > 0 ? m->rope_theta : 10000.0;
}

Test(hf, positions_match_the_zoo)
{
	static const char *const pairs[][2] = {
		{ "Llama-2-7b-hf.json", "llama2-7b" },     { "Llama-2-70b-hf.json", "llama2-70b" },
		{ "Meta-Llama-3-8B.json", "llama3-8b" },   { "Llama-3.1-405B.json", "llama3.1-405b" },
		{ "Mixtral-8x7B-v0.1.json", "mixtral-8x7b" }, { "DeepSeek-V2.json", "deepseek-v2" },
		{ "DeepSeek-V3.json", "deepseek-v3" },     { "Qwen2-57B-A14B.json", "qwen2-57b-a14b" },
		{ "Qwen3-30B-A3B.json", "qwen3-30b-a3b" }, { "Qwen3-235B-A22B.json", "qwen3-235b-a22b" },
		{ "gpt-oss-20b.json", "gpt-oss-20b" },     { "gpt-oss-120b.json", "gpt-oss-120b" },
		{ "bloom.json", "bloom-176b" },
		{ "Qwen3-Next-80B-A3B.json", "qwen3-next-80b-a3b" },
		{ "NVIDIA-Nemotron-3-Nano-30B-A3B.json", "nemotron3-nano-30b-a3b" },
		{ "GLM-4.5-Air.json", "glm4.5-air-106b-a12b" },
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		struct model_spec f = load(pairs[i][0]);
		const struct model_spec *z = model_find(pairs[i][1]);
		cr_assert_not_null(z, "%s", pairs[i][1]);
		cr_expect_eq(f.alibi, z->alibi, "%s: alibi", pairs[i][0]);
		if (!z->alibi)
			cr_expect_eq(base_of(&f), base_of(z), "%s: rotary base %g, zoo %g", pairs[i][0],
				     base_of(&f), base_of(z));
		cr_expect_eq(f.norm_eps, z->norm_eps, "%s: epsilon %g, zoo %g", pairs[i][0],
			     f.norm_eps, z->norm_eps);
		cr_expect_str_eq(f.rope_scaling, z->rope_scaling, "%s: scaling", pairs[i][0]);
		cr_expect_eq(f.rope_factor, z->rope_factor, "%s: factor %g, zoo %g", pairs[i][0],
			     f.rope_factor, z->rope_factor);
		cr_expect_eq(f.route_groups, z->route_groups, "%s: routing groups", pairs[i][0]);
		cr_expect_eq(f.route_topk_groups, z->route_topk_groups, "%s: a token's groups",
			     pairs[i][0]);
		cr_expect_eq(f.router_sigmoid, z->router_sigmoid, "%s: sigmoid router", pairs[i][0]);
		cr_expect_eq(f.router_expert_bias, z->router_expert_bias, "%s: expert bias",
			     pairs[i][0]);
		cr_expect_eq(f.router_pre_softmax, z->router_pre_softmax, "%s: pre-softmax",
			     pairs[i][0]);
		cr_expect_eq(f.router_scale, z->router_scale, "%s: top-k scale", pairs[i][0]);
	}
}

/* Every zoo model says how it encodes positions and its norms' epsilon. */
Test(zoo, every_model_has_positions)
{
	int n;
	const struct model_spec *z = model_zoo(&n);
	for (int i = 0; i < n; i++) {
		/* Nemotron-H's Mamba-2 layers order the tokens: no positions */
		cr_expect(z[i].pos_embedding > 0 || z[i].alibi || z[i].rope_theta > 0 ||
				  strchr(z[i].mixers, 'M'),
			  "%s: no positions", z[i].name);
		cr_expect(z[i].norm_eps > 0, "%s: no norm epsilon", z[i].name);
	}
}

/* Sliding windows as the configs state them: gpt-oss's layer_types (12
 * of 24 "sliding_attention", 128 tokens), Gemma 2's every other layer of
 * 42 from the first (21, 4096), none where use_sliding_window is false
 * (Qwen2) or the window is null (Mixtral). */
Test(hf, sliding_windows)
{
	static const struct { const char *file; long window; int layers; } want[] = {
		{ "gpt-oss-20b.json", 128, 12 },  { "gpt-oss-120b.json", 128, 18 },
		{ "gemma-2-9b.json", 4096, 21 },  { "Qwen2-7B.json", 0, 0 },
		{ "Mixtral-8x7B-v0.1.json", 0, 0 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct model_spec m = load(want[i].file);
		cr_expect_eq(m.sliding_window, want[i].window, "%s: window %ld", want[i].file,
			     m.sliding_window);
		cr_expect_eq(m.window_layers, want[i].layers, "%s: %d layers", want[i].file,
			     m.window_layers);
	}
	/* the zoo's gpt-oss says the same */
	cr_expect_eq(model_find("gpt-oss-20b")->window_layers, 12);
	cr_expect_eq(model_find("gpt-oss-120b")->sliding_window, 128);
}

/* ---- Hybrid stacks ------------------------------------------------------------ */

/* Nemotron 3 Nano's pattern read block by block: each kind's mean make-up
 * (sim/MODEL.md 4.6) and the MoE layers where the pattern puts them. */
Test(hf, hybrid_pattern_read)
{
	struct model_spec m = load("NVIDIA-Nemotron-3-Nano-30B-A3B.json");
	struct layer_mix dense, moe;
	cr_assert(model_is_hybrid(&m));
	cr_expect_eq(m.layers, 52);
	cr_expect_eq(model_moe_layers(&m), 23);
	cr_expect(model_layer_is_moe(&m, 1) && !model_layer_is_moe(&m, 0) && !model_layer_is_moe(&m, 5));
	cr_expect_eq(m.mamba_heads, 64);
	cr_expect_eq(m.mamba_groups, 8);
	cr_expect_eq(m.mamba_state, 128);
	cr_expect_eq(m.mamba_chunk, 128);
	cr_expect_eq(m.mlp, MLP_SQUARED_RELU);
	model_layer_mix(&m, 0, &dense);
	model_layer_mix(&m, 1, &moe);
	cr_expect_float_eq(dense.attn, 6.0 / 29, 1e-12);
	cr_expect_float_eq(dense.mamba, 23.0 / 29, 1e-12);
	cr_expect_float_eq(dense.ffn, 0.0, 1e-12);
	cr_expect_float_eq(moe.attn + moe.mamba + moe.gdn, 0.0, 1e-12);
	cr_expect_float_eq(moe.ffn, 1.0, 1e-12);
	m = load("Qwen3-Next-80B-A3B.json");
	model_layer_mix(&m, 1, &moe);
	cr_expect_float_eq(moe.attn, 0.25, 1e-12);
	cr_expect_float_eq(moe.gdn, 0.75, 1e-12);
	cr_expect(m.attn_out_gate);
}

/* Model FLOPs of a tiny hybrid, by hand: hidden 64, a Mamba-2 mixer of 4
 * heads of 32 (d 128), 2 groups, state 16, chunk 32, and an attention
 * layer of 4 heads of 16; vocabulary 1000; 64 tokens.  Per token forward:
 *   Mamba-2 projections 2 x 64 x (in_proj 2x128 + 2x2x16 + 4 = 324, out
 *   128) = 57,856; the scan 2 x 32 x (2x16 + 128) + 4 x 16 x 128 = 18,432;
 *   attention projections 2 x 64 x (4 + 8) x 16 + 2 x 4 x 16 x 64 = 32,768
 *   and core 2 x 64 x 4 x 32 = 16,384; the LM head 2 x 64 x 1000 = 128,000:
 *   253,440; x 3 x 64 tokens = 48,660,480. */
Test(flops, hybrid_by_hand)
{
	static const char cfg[] =
		"{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
		" \"num_attention_heads\": 4, \"num_key_value_heads\": 4, \"head_dim\": 16,"
		" \"intermediate_size\": 256, \"vocab_size\": 1000, \"mlp_hidden_act\": \"relu2\","
		" \"hybrid_override_pattern\": \"M*\", \"mamba_num_heads\": 4, \"mamba_head_dim\": 32,"
		" \"n_groups\": 2, \"ssm_state_size\": 16, \"conv_kernel\": 4, \"chunk_size\": 32,"
		" \"max_position_embeddings\": 64}";
	char path[] = "/tmp/pplan-hybrid-XXXXXX";
	int fd = mkstemp(path);
	struct model_spec m;
	struct perr e = {0};
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, cfg, sizeof cfg - 1), (ssize_t)(sizeof cfg - 1));
	close(fd);
	cr_assert_eq(model_load(path, &m, &e), PPLAN_OK, "%s", e.msg);
	unlink(path);
	cr_expect_float_eq(cost_model_flops(&m, 64, 1), 48660480.0, 1e-6);
}

/* TP over Nemotron 3 Nano's one-block layers: each block, Mamba-2 and
 * MoE alike, has its gathers and scatters of the (T, h) activation: with
 * SP at tp 2 forward a gather and a scatter, backward two gathers and a
 * scatter, each (1/2) ACT over 50 GB/s; ACT = 2 x 4096 x 2688 =
 * 22,020,096 B; 52 blocks x 2 microbatches x 5 x 220.2 us = 114.50 ms
 * (half a two-block layer's count, sim/MODEL.md 4.6). */
Test(cost, hybrid_tp_collectives_per_block)
{
	struct model_spec m = load("NVIDIA-Nemotron-3-Nano-30B-A3B.json");
	struct cluster c;
	struct layout l;
	struct train_opts o;
	struct prediction p;
	struct perr e = {0};
	unsigned set = 0;
	m.seq = 4096;
	cr_assert_eq(cluster_preset("dgx-h100", 8, &c, &e), PPLAN_OK, "%s", e.msg);
	c.nvlink = (struct link){ LINK_NVSWITCH, 100.0, 0.0, 0.5 };
	cr_assert_eq(layout_parse("tp=2,dp=4,mbs=1,gbs=8,sp=on,zero=1", &l, &set, &e), PPLAN_OK);
	layout_complete(&l, set, 8);
	train_opts_default(&o, &m);
	o.b.tp_overlap = FW_TPO_NONE;
	cr_assert_eq(cost_predict(&m, &c, &l, &o, &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_float_eq(p.time.tp_comm, 2 * 52 * 5 * 22020096.0 / 2 / 50e9,
			   1e-9 * p.time.tp_comm);
}
