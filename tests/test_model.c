/*
 * test_model.c: model specs.  Parameter counts against numbers derived by
 * hand from the architecture (the arithmetic is in the comments) and
 * against published totals (1%); the zoo's consistency; units_parse_count;
 * the loose names; Hugging Face config.json files as published (fixtures in
 * tests/fixtures/hf, provenance in its README.md); pplan.model/1 files;
 * and bad input, which must give PPLAN_EINPUT and one sentence naming the
 * file and the key, and leave the caller's spec untouched.
 *
 * Notation in the comments: L layers, h hidden, a heads, g kv heads,
 * dh head dim, f ffn, V vocab, E experts.  A SwiGLU/GeGLU MLP has three
 * h x f matrices; GeLU two; norms are h (RMSNorm) or 2h (LayerNorm).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "units.h"

#define HF_DIR PPLAN_SOURCE_DIR "/tests/fixtures/hf/"
#define MODELS_DIR PPLAN_SOURCE_DIR "/tests/fixtures/models/"

/* ---- Parameter totals of zoo models ------------------------------------- */

/* Criterion runs each parameter in a fresh process (BoxFort, with ASLR),
 * so parameters hold their strings inline, never pointers. */
struct total_case {
	char name[32];
	double exact;     /* from the formula, by hand (comments below) */
	double published; /* the paper's or model card's total */
};

ParameterizedTestParameters(params, zoo_totals)
{
	static struct total_case cases[] = {
		/* GPT-3 175B: L=96 h=12288 V=51200, biases, LayerNorm, tied.
		 * Per layer 4h^2 + 4h (attn weights, biases) + 2h (norm)
		 * + 8h^2 + 5h (MLP weights, biases) + 2h = 12h^2 + 13h
		 * = 1,811,939,328 + 159,744 = 1,812,099,072; x96 =
		 * 173,961,510,912; + hV 629,145,600 + final 2h 24,576
		 * = 174,590,681,088; + learned positions 2048h = 25,165,824
		 * = 174,615,846,912.  Narayanan et al. 2021: 174.6B. */
		{"gpt3-175b", 174615846912.0, 174.6e9},
		/* Llama 2 70B: L=80 h=8192 a=64 g=8 dh=128 f=28672 V=32000.
		 * attn 2h^2 + 2*h*1024 = 134,217,728 + 16,777,216 + 8192
		 * = 151,003,136; MLP 3*8192*28672 + 8192 = 704,651,264;
		 * layer 855,654,400 x80 = 68,452,352,000; untied 2hV
		 * 524,288,000; + 8192 = 68,976,648,192 (HF: 68.98e9). */
		{"llama2-70b", 68976648192.0, 68.98e9},
		/* Llama 2 7B: attn 4h^2 + h = 67,112,960; MLP 3*4096*11008
		 * + 4096 = 135,270,400; layer 202,383,360 x32 =
		 * 6,476,267,520; 2hV 262,144,000; + 4096 = 6,738,415,616. */
		{"llama2-7b", 6738415616.0, 6.738e9},
		/* Llama 3 8B: h=4096 g=8 f=14336 V=128256.  attn 2h^2 +
		 * 2*4096*1024 + h = 41,947,136; MLP 176,160,768 + 4096 =
		 * 176,164,864; layer 218,112,000 x32 = 6,979,584,000; 2hV
		 * 1,050,673,152; + 4096 = 8,030,261,248 (Meta: 8.03B). */
		{"llama3-8b", 8030261248.0, 8.03e9},
		/* Llama 3 70B: layer as Llama 2 70B (855,654,400) x80 =
		 * 68,452,352,000; 2hV = 2*8192*128256 = 2,101,346,304;
		 * + 8192 = 70,553,706,496 (Meta: 70.6B). */
		{"llama3-70b", 70553706496.0, 70.6e9},
		/* Llama 3.1 405B: L=126 h=16384 a=128 g=8 f=53248.  attn
		 * 2h^2 + 2*16384*1024 + h = 536,870,912 + 33,554,432 + 16,384
		 * = 570,441,728; MLP 3*16384*53248 + h = 2,617,262,080;
		 * layer 3,187,703,808 x126 = 401,650,679,808; 2hV
		 * 4,202,692,608; + 16,384 = 405,853,388,800 (Meta: 405B). */
		{"llama3.1-405b", 405853388800.0, 405.8e9},
		/* Nemotron-4 340B: L=96 h=18432 a=96 g=8 dh=192 f=73728,
		 * squared ReLU (2 matrices), LayerNorm, untied, V=256000.
		 * attn 2h^2 + 2*18432*1536 + 2h = 679,477,248 + 56,623,104
		 * + 36,864 = 736,137,216; MLP 2*18432*73728 + 2h =
		 * 2,717,945,856; layer 3,454,083,072 x96 = 331,591,974,912;
		 * 2hV 9,437,184,000; + 36,864 = 341,029,195,776 (341B). */
		{"nemotron4-340b", 341029195776.0, 341e9},
		/* Mixtral 8x7B: attn as Llama 3 8B, 41,947,136; MLP 8 x
		 * 176,160,768 + router 4096*8 + 4096 = 1,409,323,008; layer
		 * 1,451,270,144 x32 = 46,440,644,608; 2hV 262,144,000;
		 * + 4096 = 46,702,792,704 (Mistral AI: 46.7B). */
		{"mixtral-8x7b", 46702792704.0, 46.7e9},
		/* BLOOM: L=70 h=14336, GPT-style: (12h^2 + 13h) =
		 * 2,466,437,120 x70 = 172,650,598,400; hV = 3,596,615,680;
		 * + 2h 28,672 = 176,247,242,752.  BigScience: 176,247,271,424
		 * (the difference, 28,672, is the embedding LayerNorm). */
		{"bloom-176b", 176247242752.0, 176247271424.0},
		/* Megatron 1T: h=25600 L=128: (12h^2 + 13h) = 7,864,652,800
		 * x128 = 1,006,675,558,400; hV 1,310,720,000; + 51,200 =
		 * 1,007,986,329,600; + positions 2048h 52,428,800 =
		 * 1,008,038,758,400 (Narayanan et al. Table 1: 1008.0B). */
		{"megatron-1t", 1008038758400.0, 1008.0e9},
		/* Megatron 530B: h=20480 L=105: 5,033,431,040 x105 =
		 * 528,510,259,200; hV 1,048,576,000; + 40,960 =
		 * 529,558,876,160; + positions 2048h 41,943,040 =
		 * 529,600,819,200 (Table 1: 529.6B). */
		{"megatron-530b", 529600819200.0, 529.6e9},
		/* Megatron 145B: the GPT-3 175B layer (1,812,099,072) x80 =
		 * 144,967,925,760; hV 629,145,600; + 24,576 =
		 * 145,597,095,936; + positions 25,165,824 = 145,622,261,760
		 * (Table 1: 145.6B). */
		{"megatron-145b", 145622261760.0, 145.6e9},
		/* Megatron 18B: h=6144 L=40: 12h^2 + 13h = 452,984,832 +
		 * 79,872 = 453,064,704 x40 = 18,122,588,160; hV 314,572,800;
		 * + 12,288 = 18,437,173,248; + positions 2048h 12,582,912 =
		 * 18,449,756,160 (Table 1: 18.4B). */
		{"megatron-18b", 18449756160.0, 18.4e9},
		/* Nemotron-4 15B: L=32 h=6144 a=48 g=8 f=24576, squared
		 * ReLU, LayerNorm, untied, V=256000.  attn 2h^2 75,497,472 +
		 * 2*6144*1024 12,582,912 + 2h = 88,092,672; MLP 2*6144*24576
		 * + 2h = 302,002,176; layer 390,094,848 x32 =
		 * 12,483,035,136; 2hV 3,145,728,000; + 12,288 =
		 * 15,628,775,424 (paper: 3.2B embedding + 12.5B other). */
		{"nemotron4-15b", 15628775424.0, 15.7e9},
		/* Grok-1: L=64 h=6144 a=48 g=8 f=32768 E=8, GeGLU, tied.
		 * attn 2h^2 + 2*6144*1024 + h = 88,086,528; MLP 8 x
		 * 3*6144*32768 (603,979,776) + router 49,152 + 6144 =
		 * 4,831,893,504; layer 4,919,980,032 x64 = 314,878,722,048;
		 * hV 805,306,368; + 6144 = 315,684,034,560 (xAI: 314B). */
		{"grok1-314b", 315684034560.0, 314e9},
		/* GPT-3 125M: h=768 L=12: (12h^2 + 13h) = 7,087,872 x12 =
		 * 85,054,464; hV 39,321,600; + 1536 = 124,377,600; + positions
		 * 2048h 1,572,864 = 125,950,464 (125M). */
		{"gpt3-125m", 125950464.0, 125e6},
		/* GPT-NeoX-20B: the Megatron 18B layer (h=6144, 12h^2 + 13h =
		 * 453,064,704) x44 = 19,934,846,976; untied 2hV = 2*6144*50432
		 * = 619,708,416; + 2h 12,288 = 20,554,567,680 (Black et al.
		 * 2022: 20.55B; 96-wide heads change no count). */
		{"gpt-neox-20b", 20554567680.0, 20.55e9},
		/* BloombergGPT: h=7680 L=70: 12h^2 + 13h = 707,788,800 +
		 * 99,840 = 707,888,640 x70 = 49,552,204,800; tied hV
		 * 1,006,632,960; + 2h 15,360 = 50,558,853,120 (Wu et al.
		 * 2023: 50.6B; the embedding LayerNorm not counted, as BLOOM). */
		{"bloomberggpt-50b", 50558853120.0, 50.6e9},
		/* StarCoder: h=6144 a=48, one K/V head of 128.  attn 6144 x
		 * (6144 + 256) + 6400 + h^2 + h = 39,328,000 + 37,754,880; MLP
		 * 8h^2 + 5h = 302,020,608; 2 norms 24,576: 379,128,064 x40 =
		 * 15,165,122,560; tied hV 301,989,888; positions 8192h
		 * 50,331,648; + 2h 12,288 = 15,517,456,384 (card: 15.5B). */
		{"starcoder-15b", 15517456384.0, 15.5e9},
		/* TinyLlama 1.1B: h=2048 a=32 g=4 f=5632.  attn 2h^2 +
		 * 2*2048*256 = 9,437,184; MLP 3*2048*5632 = 34,603,008; norms
		 * 2h: 44,044,288 x22 = 968,974,336; untied 2hV 131,072,000;
		 * + h = 1,100,048,384 (1.1B). */
		{"tinyllama-1.1b", 1100048384.0, 1.1e9},
		/* Kimi K2: DeepSeek-V3's MLA with 64 heads: q_a 7168*1536 +
		 * 1536, q_b 1536*64*192, kv_a 7168*576 + 512, kv_b 512*64*256,
		 * o 64*128*7168: 101,124,096; norms 14,336.  The dense layer
		 * 3*7168*18432 = 396,361,728: 497,500,160.  An MoE layer 385
		 * experts of 3*7168*2048 = 44,040,192 (16,955,473,920) and the
		 * router 384*7168 = 2,752,512: 17,059,364,864 x60 =
		 * 1,023,561,891,840.  Untied 2hV 2,348,810,240 + h 7168:
		 * 1,026,408,209,408 (Moonshot: 1.04T, within 1.5 %). */
		{"kimi-k2", 1026408209408.0, 1.026e12},
		/* Nemotron-H 56B: h=8192, V=131072; one block a layer.  A
		 * Mamba-2 layer (256 heads of 64, d_in 16384, 8 groups of state
		 * 256): in_proj h(2*16384 + 2*8*256 + 256) = 304,087,040; conv
		 * (16384 + 4096) x (4 + 1) = 102,400; out_proj 16384h =
		 * 134,217,728; A, D, dt 768; gated norm 16384; pre-norm h:
		 * 438,432,512 x54.  Attention (64 heads, 8 K/V of 128) 2h^2 +
		 * 2*8192*1024 + h = 151,003,136 x10.  MLP 2*8192*32768 + h =
		 * 536,879,104 x54.  Untied 2hV 2,147,483,648 + final norm h:
		 * 56,324,350,464 (NVIDIA: 56B). */
		{"nemotron-h-56b", 56324350464.0, 56e9},
		/* Nemotron-H 8B: h=4096, 128 Mamba heads of 64 (d_in 8192),
		 * state 128: in_proj h(16384 + 2048 + 128) = 76,021,760; conv
		 * 10240 x 5 = 51,200; out 8192h = 33,554,432; 384 + 8192 + h:
		 * 109,640,064 x24.
		 * Attention 2h^2 + 2*4096*1024 + h = 41,947,136 x4.  MLP
		 * 2*4096*21504 + h = 176,164,864 x24.  2hV 1,073,741,824 + h:
		 * 8,100,852,736 (NVIDIA: 8B, within 1.3 %). */
		{"nemotron-h-8b", 8100852736.0, 8.1e9},
		/* GLM-4.5: h=5120, 96 query heads of 128 (q 12288), 8 K/V.
		 * Attention 2hq + 2*h*1024 + biases q + 2048 + q/k norms 256
		 * + norm h = 136,334,592 x92.  Dense layers 3*h*12288 + h =
		 * 188,748,800 x3.  An MoE layer: 160 routed and one shared
		 * expert of 3*h*1536 = 23,592,960 (3,798,466,560), router
		 * 160h, norm h: 3,799,290,880 x89 (the expert bias is
		 * Megatron's buffer, not a parameter).  Untied 2hV
		 * 1,551,892,480 + h: 352,797,814,784 (Zhipu: 355B with the
		 * MTP layer, 0.6 % off). */
		{"glm4.5-355b-a32b", 352797814784.0, 355e9},
		/* GLM-4.5-Air: h=4096; attention without q/k norms 109,070,336
		 * x46; one dense layer 3*h*10944 + h = 134,483,968; 45 MoE
		 * layers of 129 x 3*h*1408 + 128h + h = 2,232,422,400; 2hV
		 * 1,241,513,984 + h: 106,852,245,504 (Zhipu: 106B). */
		{"glm4.5-air-106b-a12b", 106852245504.0, 106e9},
		/* Mistral 7B: h=4096, 8 K/V heads of 128.  q and o 2h^2 =
		 * 33,554,432, k and v 2*4096*1024 = 8,388,608, MLP 3*4096*14336
		 * = 176,160,768, norms 2h: 218,112,000 x32 = 6,979,584,000;
		 * untied 2hV 262,144,000; + h = 7,241,732,096 (Mistral: 7.24B). */
		{"mistral-7b", 7241732096.0, 7.24e9},
		/* Qwen2.5 72B: h=8192, 8 K/V heads of 128.  q and o 2h^2 =
		 * 134,217,728 + q bias h; k and v 2*8192*1024 = 16,777,216 +
		 * biases 2048; MLP 3*8192*29568 = 726,663,168; norms 2h:
		 * 877,684,736 x80 = 70,214,778,880; untied 2hV 2,491,416,576;
		 * + h = 72,706,203,648 (Qwen: 72.7B). */
		{"qwen2.5-72b", 72706203648.0, 72.7e9},
	};
	return cr_make_param_array(struct total_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct total_case *c, params, zoo_totals)
{
	const struct model_spec *m = model_find(c->name);
	double got;

	cr_assert_not_null(m, "%s is not in the zoo", c->name);
	got = model_params_total(m);
	/* to the parameter: a hybrid's per-layer mix is a fraction (4/52) */
	cr_expect_lt(fabs(got - c->exact), 0.5, "%s: total %.3f, by hand %.0f", c->name,
		     got, c->exact);
	cr_expect_leq(fabs(got - c->published), 0.01 * c->published,
		      "%s: total %.4g is not within 1%% of %.4g", c->name, got,
		      c->published);
	if (m->num_experts == 0)
		cr_expect_eq(model_params_active(m), got,
			     "%s: dense, active must equal total", c->name);
}

Test(params, mixtral_active)
{
	/* Active: attn 41,947,136 + MLP 2 x 176,160,768 + router 32,768
	 * + 4096 = 394,305,536 per layer; x32 = 12,617,777,152; + 2hV
	 * 262,144,000 + 4096 = 12,879,925,248 (Mistral AI: 12.9B). */
	const struct model_spec *m = model_find("mixtral-8x7b");
	cr_assert_not_null(m);
	cr_expect_eq(model_params_active(m), 12879925248.0, "got %.0f",
		     model_params_active(m));
	cr_expect_leq(fabs(model_params_active(m) - 12.9e9), 0.01 * 12.9e9);
}

Test(params, mixtral_8x22b)
{
	/* Per layer: attention 6144^2 x 2 + 2 x 6144 x 1024 = 88,080,384;
	 * eight experts of 3 x 6144 x 16384 = 301,989,888; router 6144 x 8
	 * = 49,152; two norms 12,288: 2,504,060,928, x56 = 140,227,411,968;
	 * untied embeddings 2 x 32000 x 6144 = 393,216,000 and the final
	 * norm 6144: 140,620,634,112 (Mistral AI: 141 B).  Active: two
	 * experts, 692,121,600 a layer, 38,758,809,600 + 393,222,144 =
	 * 39,152,031,744 (39 B). */
	const struct model_spec *m = model_find("mixtral-8x22b");
	cr_assert_not_null(m);
	cr_expect_eq(model_params_total(m), 140620634112.0, "got %.0f", model_params_total(m));
	cr_expect_eq(model_params_active(m), 39152031744.0, "got %.0f", model_params_active(m));
}

Test(params, parts_add_up)
{
	/* Llama 3 8B by part: attn 41,947,136, MLP 176,164,864,
	 * embedding h x V = 525,336,576. */
	const struct model_spec *m = model_find("llama3-8b");
	cr_assert_not_null(m);
	cr_expect_eq(model_params_attn_layer(m), 41947136.0);
	cr_expect_eq(model_params_mlp_layer(m), 176164864.0);
	cr_expect_eq(model_params_layer(m), 218112000.0);
	cr_expect_eq(model_params_embedding(m), 525336576.0);
}

/* ---- The zoo ----------------------------------------------------------------- */

Test(zoo, every_entry_is_consistent)
{
	int n = 0;
	const struct model_spec *z = model_zoo(&n);

	/* Models whose heads are not h / a wide, as published: MLA's
	 * 128 + 64, Qwen3-MoE's and GPT-OSS's explicit head_dim. */
	static const char *const own_head_dim[] = {
		"deepseek-v2", "deepseek-v3", "kimi-k2", "qwen3-30b-a3b", "qwen3-235b-a22b",
		"qwen3-next-80b-a3b", "nemotron3-nano-30b-a3b", "gpt-oss-20b", "gpt-oss-120b",
		"gpt-neox-20b", "glm4.5-355b-a32b", "glm4.5-air-106b-a12b"};

	cr_assert_eq(n, 60, "the zoo has %d models", n);
	for (int i = 0; i < n; i++) {
		struct perr e = {{0}};
		int own = 0;
		cr_expect_eq(model_check(&z[i], z[i].name, &e), PPLAN_OK,
			     "%s", e.msg);
		for (size_t j = 0; j < sizeof own_head_dim / sizeof own_head_dim[0]; j++)
			own |= strcmp(z[i].name, own_head_dim[j]) == 0;
		cr_expect(z[i].head_dim > 0, "%s", z[i].name);
		if (!own)
			cr_expect_eq(z[i].head_dim * z[i].heads, z[i].hidden,
				     "%s: head_dim x heads != hidden", z[i].name);
		for (const char *c = z[i].name; *c; c++)
			cr_expect(!(*c >= 'A' && *c <= 'Z'),
				  "%s: names are lowercase", z[i].name);
		for (int j = 0; j < i; j++)
			cr_expect_str_neq(z[i].name, z[j].name);
		cr_expect_eq(model_find(z[i].name), &z[i]);
	}
}

Test(zoo, find_is_case_insensitive)
{
	cr_expect_eq(model_find("LLAMA3-70B"), model_find("llama3-70b"));
	cr_expect_str_eq(model_find("Mixtral-8x7B")->name, "mixtral-8x7b");
	cr_expect_null(model_find("llama3-70"));
	cr_expect_null(model_find(""));
	cr_expect_null(model_find(NULL));
}

/* Names as the papers, cards and hubs write them. */
Test(zoo, loose_names)
{
	static const char *const names[][2] = {
		{ "GPT-NeoX-20B", "gpt-neox-20b" },
		{ "EleutherAI/gpt-neox-20b", "gpt-neox-20b" },
		{ "StarCoder", "starcoder-15b" },
		{ "bigcode/starcoderbase", "starcoder-15b" },
		{ "StarCoder 15.5B", NULL },       /* 15.5 is not the zoo's 15 */
		{ "BloombergGPT", "bloomberggpt-50b" },
		{ "TinyLlama-1.1B", "tinyllama-1.1b" },
		{ "TinyLlama", "tinyllama-1.1b" },
		{ "moonshotai/Kimi-K2-Instruct", "kimi-k2" },
		{ "Qwen3-Next-80B-A3B-Instruct", "qwen3-next-80b-a3b" },
		{ "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nemotron3-nano-30b-a3b" },
		{ "Grok-1", "grok1-314b" },
		/* NeMo's table names, a hub's total and active tags, Llama 3.3 */
		{ "Nemotron-15B", "nemotron4-15b" },
		{ "Nemotron-340B", "nemotron4-340b" },
		{ "DeepSeek-V3-671B", "deepseek-v3" },
		{ "DeepSeek-V3-600B", NULL },      /* 671.03B is 12 % off */
		{ "Qwen3 235B", "qwen3-235b-a22b" },
		{ "meta-llama/Llama-4-Scout-17B-16E", "llama4-scout" },
		{ "meta-llama/Llama-4-Maverick-17B-128E-Instruct", "llama4-maverick" },
		{ "Llama-4-Maverick-17B-16E", NULL }, /* Maverick has 128 experts */
		{ "Llama-3.3-70B-Instruct", "llama3.1-70b" },
		{ "Llama-2-7B-32K", NULL },
		{ "nvidia/Nemotron-H-56B-Base-8K", "nemotron-h-56b" },
		{ "Nemotron-H 47B", "nemotron-h-47b" },
		{ "zai-org/GLM-4.5", "glm4.5-355b-a32b" },
		{ "GLM-4.5-Air", "glm4.5-air-106b-a12b" },
		{ "Nemotron3 8B", "nemotron-8b" },   /* NeMo's nemotron3_8b recipe */
		{ "mistralai/Mistral-7B-v0.1", "mistral-7b" },
		{ "Qwen2.5-72B-Instruct", "qwen2.5-72b" },
		{ "Nemotron-3 22B", "nemotron-22b" },
		{ "Nemotron 3 Nano 30B-A3B", "nemotron3-nano-30b-a3b" }, /* not Nemotron-3 */
		/* families of several sizes name none */
		{ "Llama-3", NULL }, { "Qwen3", NULL }, { "GPT-3", NULL }, { "Nemotron-4", NULL },
		{ "gpt-oss", NULL },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct model_spec *z = model_find_loose(names[i][0]);
		if (names[i][1]) {
			cr_expect(z && !strcmp(z->name, names[i][1]), "%s: %s, want %s", names[i][0],
				  z ? z->name : "none", names[i][1]);
		} else {
			cr_expect_null(z, "%s: %s, want none", names[i][0], z ? z->name : "");
		}
	}
}

Test(zoo, published_shapes)
{
	const struct model_spec *m = model_find("llama3.1-405b");
	cr_assert_not_null(m);
	cr_expect_eq(m->layers, 126);
	cr_expect_eq(m->kv_heads, 8);
	cr_expect_eq(m->head_dim, 128);
	cr_expect_eq(m->seq, 8192);
	m = model_find("nemotron-22b"); /* nemotron_22b.yaml: no GQA */
	cr_assert_not_null(m);
	cr_expect_eq(m->kv_heads, 48);
	cr_expect_eq(m->mlp, MLP_SQUARED_RELU);
	m = model_find("nemo-gpt3-5b");
	cr_assert_not_null(m);
	cr_expect_eq(m->vocab, 50304); /* 50257 padded to 128 */
	cr_expect_eq(m->ffn, 16384);
	m = model_find("grok1-314b");
	cr_assert_not_null(m);
	cr_expect_eq(m->mlp, MLP_GEGLU);
	cr_expect_eq(m->num_experts, 8);
	cr_expect_eq(m->top_k, 2);
}


/* ---- units_parse_count and MLP kinds ------------------------------------------- */

struct count_case {
	char s[16];
	int rc;
	double v;
};

ParameterizedTestParameters(parse, count)
{
	static struct count_case cases[] = {
		{"70B", 0, 70e9},     {"405b", 0, 405e9},  {"1.5T", 0, 1.5e12},
		{"350M", 0, 350e6},   {"7e9", 0, 7e9},     {"125m", 0, 125e6},
		{"13", 0, 13},        {".5B", 0, 0.5e9},   {"2k", 0, 2e3},
		{"1e3M", 0, 1e9},     {"8G", 0, 8e9},      {"", -1, 0},
		{"B", -1, 0},         {"abc", -1, 0},      {"70BB", -1, 0},
		{"70 B", -1, 0},      {" 70B", -1, 0},     {"70B ", -1, 0},
		{"-7B", -1, 0},       {"+7B", -1, 0},      {"0", -1, 0},
		{"0B", -1, 0},        {"0.0", -1, 0},      {"inf", -1, 0},
		{"nan", -1, 0},       {"1e400", -1, 0},    {"0x10", -1, 0},
		{"7Q", -1, 0},        {"7e", -1, 0},       {"70B!", -1, 0},
	};
	return cr_make_param_array(struct count_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct count_case *c, parse, count)
{
	double v = -42.0;
	int rc = units_parse_count(c->s, &v);

	cr_expect_eq(rc, c->rc, "units_parse_count(\"%s\") = %d", c->s, rc);
	if (c->rc == 0)
		cr_expect_float_eq(v, c->v, 1e-9 * c->v, "\"%s\" -> %g", c->s,
				   v);
	else
		cr_expect_eq(v, -42.0, "\"%s\": out must stay untouched", c->s);
}

Test(parse, count_null)
{
	double v = 1;
	cr_expect_eq(units_parse_count(NULL, &v), -1);
}

Test(mlp, kinds)
{
	enum mlp_kind k;

	for (int i = MLP_GELU; i < MLP_KIND_COUNT; i++) {
		cr_expect_eq(mlp_kind_parse(mlp_kind_name((enum mlp_kind)i), &k),
			     0);
		cr_expect_eq((int)k, i);
	}
	cr_expect_str_eq(mlp_kind_name(MLP_SQUARED_RELU), "squared_relu");
	cr_expect_eq(mlp_kind_parse("SwiGLU", &k), 0);
	cr_expect_eq(k, MLP_SWIGLU);
	cr_expect_eq(mlp_kind_parse("squared-relu", &k), 0);
	cr_expect_eq(k, MLP_SQUARED_RELU);
	cr_expect_eq(mlp_kind_parse("relu", &k), 0); /* OPT */
	cr_expect_eq(k, MLP_RELU);
	cr_expect(!mlp_is_gated(MLP_RELU));
	cr_expect_eq(mlp_kind_parse("tanh", &k), -1);
	cr_expect_eq(mlp_kind_parse(NULL, &k), -1);
	cr_expect_str_eq(mlp_kind_name((enum mlp_kind)99), "unknown");
	cr_expect(mlp_is_gated(MLP_SWIGLU) && mlp_is_gated(MLP_GEGLU));
	cr_expect(!mlp_is_gated(MLP_GELU) && !mlp_is_gated(MLP_SQUARED_RELU));
}

/* ---- model_check ------------------------------------------------------------ */

static struct model_spec llama3_8b(void)
{
	return *model_find("llama3-8b");
}

Test(check, sentences_name_the_field)
{
	struct perr e = {{0}};
	struct model_spec m = llama3_8b();

	m.heads = 0;
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
	cr_expect_str_eq(e.msg, "X: num_attention_heads must be positive, got 0");

	m = llama3_8b();
	m.kv_heads = 5;
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
	cr_expect_str_eq(e.msg, "X: num_attention_heads (32) must be a "
				"multiple of num_kv_heads (5)");

	m = llama3_8b();
	m.layers = -3;
	cr_expect_eq(model_check(&m, NULL, &e), PPLAN_EINPUT);
	cr_expect_str_eq(e.msg, "model: num_layers must be positive, got -3");

	m = llama3_8b();
	m.num_experts = 4;
	m.top_k = 5;
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
	cr_expect_str_eq(e.msg, "X: moe.top_k (5) must not exceed "
				"moe.num_experts (4)");

	m = llama3_8b();
	m.top_k = 2; /* dense */
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "moe.top_k must be 0 for a dense model"),
		  "%s", e.msg);

	m = llama3_8b();
	m.mlp = (enum mlp_kind)7;
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);

	m = llama3_8b();
	m.name[0] = '\0';
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
}

Test(check, head_dim_rules)
{
	struct perr e = {{0}};
	struct model_spec m = llama3_8b();

	m.head_dim = 0; /* derived: 4096 / 32 */
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(model_params_attn_layer(&m), 41947136.0);
	m.hidden = 4100; /* 4100 / 32 is not whole */
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "hidden_size (4100) must be divisible by "
				"num_attention_heads (32)"), "%s", e.msg);
	m.head_dim = 96; /* explicit: a*dh may differ from h */
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_OK, "%s", e.msg);
	m.head_dim = -1;
	cr_expect_eq(model_check(&m, "X", &e), PPLAN_EINPUT);
}

/* ---- Hugging Face config.json files -------------------------------------- */

static struct model_spec load_ok(const char *path)
{
	struct model_spec m;
	struct perr e = {{0}};
	enum pplan_status st = model_load(path, &m, &e);

	cr_assert_eq(st, PPLAN_OK, "%s: %s", path, e.msg);
	cr_assert_eq(model_check(&m, path, &e), PPLAN_OK, "%s", e.msg);
	return m;
}

Test(hf, llama2_7b)
{
	struct model_spec m = load_ok(HF_DIR "Llama-2-7b-hf.json");

	cr_expect_str_eq(m.name, "meta-llama/Llama-2-7b-hf");
	cr_expect_eq(m.layers, 32);
	cr_expect_eq(m.hidden, 4096);
	cr_expect_eq(m.ffn, 11008);
	cr_expect_eq(m.heads, 32);
	cr_expect_eq(m.kv_heads, 32);
	cr_expect_eq(m.head_dim, 128);
	cr_expect_eq(m.vocab, 32000);
	cr_expect_eq(m.seq, 4096);
	cr_expect_eq(m.mlp, MLP_SWIGLU);
	cr_expect_eq(m.norm, NORM_RMSNORM);
	cr_expect_eq(m.tied_embeddings, 0);
	cr_expect_eq(m.linear_bias, 0);
	cr_expect_eq(m.num_experts, 0);
	cr_expect_eq(model_params_total(&m), 6738415616.0);
}

Test(hf, llama2_70b)
{
	struct model_spec m = load_ok(HF_DIR "Llama-2-70b-hf.json");

	cr_expect_eq(m.layers, 80);
	cr_expect_eq(m.kv_heads, 8);
	cr_expect_eq(m.ffn, 28672);
	cr_expect_eq(model_params_total(&m), 68976648192.0);
}

Test(hf, llama3_8b_named_by_file)
{
	/* No _name_or_path in the published file: the file's name. */
	struct model_spec m = load_ok(HF_DIR "Meta-Llama-3-8B.json");

	cr_expect_str_eq(m.name, "Meta-Llama-3-8B");
	cr_expect_eq(m.kv_heads, 8);
	cr_expect_eq(m.vocab, 128256);
	cr_expect_eq(m.seq, 8192);
	cr_expect_eq(model_params_total(&m), 8030261248.0);
	/* The same numbers as the zoo's entry. */
	cr_expect_eq(model_params_total(&m),
		     model_params_total(model_find("llama3-8b")));
}

Test(hf, llama31_405b_rope_scaling)
{
	/* max_position_embeddings 131072; rope_scaling says 8192. */
	struct model_spec m = load_ok(HF_DIR "Llama-3.1-405B.json");

	cr_expect_eq(m.seq, 8192);
	cr_expect_eq(m.layers, 126);
	cr_expect_eq(m.hidden, 16384);
	cr_expect_eq(m.heads, 128);
	cr_expect_eq(m.kv_heads, 8);
	cr_expect_eq(m.linear_bias, 0);
	cr_expect_eq(model_params_total(&m), 405853388800.0);
}

Test(hf, mixtral)
{
	struct model_spec m = load_ok(HF_DIR "Mixtral-8x7B-v0.1.json");

	cr_expect_eq(m.num_experts, 8);
	cr_expect_eq(m.top_k, 2);
	cr_expect_eq(m.ffn, 14336);
	cr_expect_eq(m.seq, 8192); /* min(32768, 8192) */
	cr_expect_eq(m.mlp, MLP_SWIGLU);
	cr_expect_eq(model_params_total(&m), 46702792704.0);
	cr_expect_eq(model_params_active(&m), 12879925248.0);
}

Test(hf, bloom_176b)
{
	/* BLOOM's config names n_embed/n_layer/num_attention_heads, no
	 * activation, no MLP size (4h), no positions (ALiBi: 2048). */
	struct model_spec m = load_ok(HF_DIR "bloom.json");

	cr_expect_str_eq(m.name, "bloom");
	cr_expect_eq(m.hidden, 14336);
	cr_expect_eq(m.layers, 70);
	cr_expect_eq(m.heads, 112);
	cr_expect_eq(m.kv_heads, 112);
	cr_expect_eq(m.ffn, 4 * 14336);
	cr_expect_eq(m.vocab, 250880);
	cr_expect_eq(m.seq, 2048);
	cr_expect_eq(m.mlp, MLP_GELU);
	cr_expect_eq(m.norm, NORM_LAYERNORM);
	cr_expect_eq(m.tied_embeddings, 1);
	cr_expect_eq(m.linear_bias, 1);
	cr_expect_eq(model_params_total(&m),
		     model_params_total(model_find("bloom-176b")));
}

Test(hf, bloom_560m)
{
	/* h=1024 L=24: (12h^2 + 13h) = 12,596,224 x24 = 302,309,376; hV
	 * 256,901,120; + 2048 = 559,212,544 (model card: 559,214,592, the
	 * 2048 more being the embedding LayerNorm). */
	struct model_spec m = load_ok(HF_DIR "bloom-560m.json");

	cr_expect_eq(m.heads, 16);
	cr_expect_eq(m.ffn, 4096); /* n_inner: null */
	cr_expect_eq(model_params_total(&m), 559212544.0);
}

Test(hf, gpt2)
{
	/* h=768 L=12 V=50257: 85,054,464 + hV 38,597,376 + 1536 =
	 * 123,653,376, and the 1024 x 768 = 786,432 learned positions: GPT-2
	 * small's well-known 124,439,808. */
	struct model_spec m = load_ok(HF_DIR "gpt2.json");

	cr_expect_str_eq(m.name, "gpt2");
	cr_expect_eq(m.hidden, 768);
	cr_expect_eq(m.layers, 12);
	cr_expect_eq(m.heads, 12);
	cr_expect_eq(m.ffn, 3072);
	cr_expect_eq(m.seq, 1024);
	cr_expect_eq(m.mlp, MLP_GELU); /* gelu_new */
	cr_expect_eq(m.tied_embeddings, 1);
	cr_expect_eq(m.linear_bias, 1);
	cr_expect_eq(m.pos_embedding, 1024); /* n_positions */
	cr_expect_eq(model_params_total(&m), 124439808.0);
}

Test(hf, gemma2_explicit_head_dim)
{
	/* head_dim 256 while 3584 / 16 = 224: the config's value wins. */
	struct model_spec m = load_ok(HF_DIR "gemma-2-9b.json");

	cr_expect_eq(m.head_dim, 256);
	cr_expect_eq(m.mlp, MLP_GEGLU);
	cr_expect_eq(m.norm, NORM_RMSNORM);
	cr_expect_eq(m.tied_embeddings, 1);
	cr_expect_eq(m.kv_heads, 8);
}

Test(hf, config_json_named_by_folder)
{
	char dir[] = "/tmp/pplan-test-model-XXXXXX", sub[256], path[300];
	FILE *in, *out;
	struct model_spec m;
	struct perr e = {{0}};
	int c;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(sub, sizeof sub, "%s/My-Model", dir);
	snprintf(path, sizeof path, "%s/config.json", sub);
	cr_assert_eq(mkdir(sub, 0700), 0);
	in = fopen(HF_DIR "Meta-Llama-3-8B.json", "rb");
	out = fopen(path, "wb");
	cr_assert(in && out);
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	fclose(in);
	fclose(out);
	cr_expect_eq(model_load(path, &m, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(m.name, "My-Model");
	remove(path);
	rmdir(sub);
	rmdir(dir);
}

/* ---- pplan.model/1 files ----------------------------------------------------- */

Test(pplan, tiny_gqa)
{
	/* L=2 h=64 a=8 g=2 dh=8 f=172 V=1000, SwiGLU, RMSNorm, untied.
	 * attn 64*64 + 2*64*16 + 64*64 + 64 = 10,304; MLP 3*64*172 + 64 =
	 * 33,088; layer 43,392 x2 = 86,784; 2hV 128,000; + 64 = 214,848. */
	struct model_spec m = load_ok(MODELS_DIR "tiny-gqa.json");

	cr_expect_str_eq(m.name, "tiny-gqa");
	cr_expect_eq(m.head_dim, 8);
	cr_expect_eq(m.kv_heads, 2);
	cr_expect_eq(m.seq, 512);
	cr_expect_eq(model_params_attn_layer(&m), 10304.0);
	cr_expect_eq(model_params_mlp_layer(&m), 33088.0);
	cr_expect_eq(model_params_total(&m), 214848.0);
}

Test(pplan, tiny_moe)
{
	/* L=2 h=32 a=g=4 f=64 V=100 E=4 k=2.  attn 4*32*32 + 32 = 4128;
	 * MLP 4 x 3*32*64 (6144) + router 32*4 + 32 = 24,736; layer
	 * 28,864 x2 = 57,728; 2hV 6400; + 32 = 64,160.  Active MLP
	 * 2 x 6144 + 128 + 32 = 12,448; (4128 + 12,448) x2 + 6432 = 39,584. */
	struct model_spec m = load_ok(MODELS_DIR "tiny-moe.json");

	cr_expect_eq(m.kv_heads, 4); /* absent: = heads */
	cr_expect_eq(m.num_experts, 4);
	cr_expect_eq(m.top_k, 2);
	cr_expect_eq(model_params_total(&m), 64160.0);
	cr_expect_eq(model_params_active(&m), 39584.0);
}

Test(pplan, tiny_gpt_biases)
{
	/* L=3 h=48 a=4 f=192 V=500, GeLU, LayerNorm, tied, biases.
	 * attn 4h^2 9216 + biases 48 + 96 + 48 + norm 96 = 9504; MLP
	 * 2*48*192 18,432 + biases 192 + 48 + norm 96 = 18,768; layer
	 * 28,272 (= 12h^2 + 13h) x3 = 84,816; hV 24,000; + 96 = 108,912. */
	struct model_spec m = load_ok(MODELS_DIR "tiny-gpt.json");

	cr_expect_eq(model_params_attn_layer(&m), 9504.0);
	cr_expect_eq(model_params_mlp_layer(&m), 18768.0);
	cr_expect_eq(model_params_total(&m), 108912.0);
}

Test(pplan, explicit_head_dim)
{
	/* h=64 a=4 g=2 dh=32 (a*dh = 128 != h) f=128 V=10 L=1, GeGLU.
	 * attn 64*128 + 2*64*64 + 128*64 + 64 = 24,640; MLP 3*64*128 + 64
	 * = 24,640; layer 49,280; 2hV 1280; + 64 = 50,624. */
	struct model_spec m = load_ok(MODELS_DIR "explicit-head-dim.json");

	cr_expect_eq(m.head_dim, 32);
	cr_expect_eq(m.mlp, MLP_GEGLU);
	cr_expect_eq(model_params_total(&m), 50624.0);
}

Test(pplan, zoo_twins)
{
	const char *names[] = {"llama3-8b", "mixtral-8x7b"};
	for (int i = 0; i < 2; i++) {
		char path[512];
		struct model_spec m;
		const struct model_spec *z = model_find(names[i]);

		snprintf(path, sizeof path, MODELS_DIR "%s.json", names[i]);
		m = load_ok(path);
		cr_expect_str_eq(m.name, z->name);
		cr_expect_eq(m.layers, z->layers);
		cr_expect_eq(m.hidden, z->hidden);
		cr_expect_eq(m.ffn, z->ffn);
		cr_expect_eq(m.heads, z->heads);
		cr_expect_eq(m.kv_heads, z->kv_heads);
		cr_expect_eq(m.head_dim, z->head_dim);
		cr_expect_eq(m.vocab, z->vocab);
		cr_expect_eq(m.seq, z->seq);
		cr_expect_eq(m.mlp, z->mlp);
		cr_expect_eq(m.norm, z->norm);
		cr_expect_eq(m.tied_embeddings, z->tied_embeddings);
		cr_expect_eq(m.linear_bias, z->linear_bias);
		cr_expect_eq(m.no_dropout, z->no_dropout);
		cr_expect_eq(m.num_experts, z->num_experts);
		cr_expect_eq(m.top_k, z->top_k);
	}
}

/* ---- Bad input ----------------------------------------------------------------- */

struct bad_case {
	char file[48]; /* under tests/fixtures/ */
	char key[48];  /* the message must contain it */
};

ParameterizedTestParameters(bad, files)
{
	static struct bad_case cases[] = {
		{"hf/bad-truncated.json", "malformed JSON"},
		{"hf/bad-malformed.json", "malformed JSON"},
		{"hf/bad-missing-layers.json", "num_hidden_layers is missing"},
		{"hf/bad-missing-ffn.json", "intermediate_size is missing"},
		{"hf/bad-zero-heads.json", "num_attention_heads"},
		{"hf/bad-negative-vocab.json", "vocab_size"},
		{"hf/bad-kv-heads.json", "num_key_value_heads (7)"},
		{"hf/bad-act.json", "hidden_act 'tanh'"},
		{"hf/bad-type.json", "hidden_size must be a number"},
		{"hf/bad-fraction.json", "num_hidden_layers must be a whole"},
		{"hf/bad-moe-layers.json", "moe_layers: MoE layers at chosen places"},
		{"hf/bad-topk.json", "num_experts_per_tok (9)"},
		{"hf/bad-missing-topk.json", "num_experts_per_tok is missing"},
		{"hf/bad-mlp-only-layers.json", "mlp_only_layers"},
		{"hf/bad-n-group.json", "topk_group 4 of n_group 7 (group-limited"},
		{"models/bad-truncated.json", "malformed JSON"},
		{"models/bad-malformed.json", "malformed JSON"},
		{"models/bad-empty.json", "empty file"},
		{"models/bad-not-object.json", "expected a JSON object"},
		{"models/bad-neither.json", "neither a pplan.model/1"},
		{"models/bad-missing-hidden.json", "hidden_size is missing"},
		{"models/bad-missing-tie.json", "tie_word_embeddings is missing"},
		{"models/bad-zero-heads.json", "num_attention_heads"},
		{"models/bad-negative-layers.json", "num_layers"},
		{"models/bad-kv-heads.json", "num_kv_heads (3)"},
		{"models/bad-kv-exceeds.json", "num_kv_heads (16)"},
		{"models/bad-mlp.json", "mlp must be"},
		{"models/bad-norm.json", "norm must be"},
		{"models/bad-dropout.json", "dropout must be a probability"},
		{"models/bad-window-layers.json", "window_layers needs sliding_window"},
		{"models/bad-window-count.json", "window_layers"},
		{"models/bad-rope-theta.json", "rope_theta must be more than 1"},
		{"models/bad-rope-scaling.json", "rope_scaling must be an object or null"},
		{"models/bad-topk.json", "moe.top_k (5)"},
		{"models/bad-moe-type.json", "moe must be an object"},
		{"models/bad-moe-key.json", "moe: topk is not a pplan.model/1 key"},
		{"models/bad-schema.json", "schema 'pplan.model/2'"},
		{"models/bad-unknown-key.json", "num_kv_head is not a"},
		{"models/bad-type.json", "num_layers must be a number"},
		{"models/bad-bool.json", "linear_bias must be true or false"},
		{"models/bad-fraction.json", "hidden_size must be a whole"},
		{"models/bad-head-divisible.json", "hidden_size (60)"},
		{"models/bad-huge.json", "vocab_size"},
		{"models/bad-long-name.json", "name must be at most 63"},
		{"models/bad-dense-layers.json", "moe.dense_layers (27) leaves no MoE layer"},
		{"models/bad-route-groups.json", "route_groups and route_topk_groups go together"},
		{"models/bad-route-divide.json", "route_topk_groups 2 of moe.route_groups 5"},
		{"models/bad-mla-kv.json", "must equal num_attention_heads"},
		{"models/bad-mla-key.json", "mla: rope_dim is not a pplan.model/1 key"},
		{"models/does-not-exist.json", "cannot open"},
	};
	return cr_make_param_array(struct bad_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, bad, files)
{
	char path[512];
	struct model_spec m, before;
	struct perr e = {{0}};
	enum pplan_status st;

	snprintf(path, sizeof path, PPLAN_SOURCE_DIR "/tests/fixtures/%s",
		 c->file);
	memset(&m, 0xab, sizeof m);
	before = m;
	st = model_load(path, &m, &e);
	cr_expect_eq(st, PPLAN_EINPUT, "%s: status %d (%s)", c->file, st,
		     e.msg);
	cr_expect_eq(status_exit_code(st), 2);
	cr_expect(strstr(e.msg, path) == e.msg,
		  "the message must start with the file: %s", e.msg);
	cr_expect(strstr(e.msg, c->key), "'%s' not in: %s", c->key, e.msg);
	cr_expect(strchr(e.msg, '\n') == NULL, "one line: %s", e.msg);
	cr_expect(memcmp(&m, &before, sizeof m) == 0,
		  "%s: the spec must be untouched on failure", c->file);
}

/* ---- model_resolve ----------------------------------------------------------- */

Test(resolve, names_and_files)
{
	struct model_spec m;
	struct perr e = {{0}};

	cr_expect_eq(model_resolve("Llama3-70B", &m, &e), PPLAN_OK);
	cr_expect_str_eq(m.name, "llama3-70b");
	cr_expect_eq(model_resolve(HF_DIR "gpt2.json", &m, &e), PPLAN_OK,
		     "%s", e.msg);
	cr_expect_str_eq(m.name, "gpt2");
	/* names as sources write them */
	cr_expect_eq(model_resolve("Meta-Llama-3-8B", &m, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(m.name, "llama3-8b");
	cr_expect_eq(model_resolve("StarCoder", &m, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(m.name, "starcoder-15b");
	cr_expect_eq(model_resolve("Llama-3", &m, &e), PPLAN_EINPUT, "two sizes, no guess");

	cr_expect_eq(model_resolve("gpt5-10t", &m, &e), PPLAN_EINPUT);
	cr_expect_str_eq(e.msg, "unknown model 'gpt5-10t': neither a zoo name nor a "
				".json file");
	cr_expect_eq(model_resolve("nothere.json", &m, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "nothere.json: cannot open"), "%s", e.msg);
	cr_expect_eq(model_resolve("", &m, &e), PPLAN_EINPUT);
	cr_expect_eq(model_resolve(NULL, &m, &e), PPLAN_EINPUT);
}

/* pplan.model/1's positions: the Llama 3 8B fixture names its rotary base
 * and epsilon as its config.json does (500000, 1e-5), as the zoo has it. */
Test(pplan_format, positions)
{
	struct model_spec m;
	struct perr e = {0};
	cr_assert_eq(model_load(PPLAN_SOURCE_DIR "/tests/fixtures/models/llama3-8b.json", &m, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_expect_eq(m.rope_theta, 500000.0);
	cr_expect_eq(m.norm_eps, 1e-5);
	cr_expect_eq(m.rope_theta, model_find("llama3-8b")->rope_theta);
	cr_expect(!m.alibi && m.pos_embedding == 0 && m.rope_scaling[0] == '\0');
}
