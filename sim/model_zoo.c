/*
 * model_zoo.c: the embedded models, each with its source (paper, model
 * card or config.json), and the look-ups by name.
 */
#include "model.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "suggest.h"

/* ---- The zoo -------------------------------------------------------------- */

#define SPEC(n, L, h, f, a, g, V, s, act, nrm, tie, bias, E, k, ...)          \
	{ .name = n, .layers = L, .hidden = h, .ffn = f, .heads = a,          \
	  .kv_heads = g, .head_dim = (h) / (a), .vocab = V, .seq = s,         \
	  .mlp = act, .norm = nrm, .tied_embeddings = tie, .linear_bias = bias, \
	  .num_experts = E, .top_k = k, .no_dropout = 1, __VA_ARGS__ }
/* GPT-style: 4h GeLU MLP, LayerNorm, tied embeddings, biases on, MHA,
 * learned positions for the training length. */
#define GPT(n, L, h, a, V, s) \
	{ .name = n, .layers = L, .hidden = h, .ffn = 4L * (h), .heads = a,   \
	  .kv_heads = a, .head_dim = (h) / (a), .vocab = V, .seq = s,         \
	  .mlp = MLP_GELU, .norm = NORM_LAYERNORM, .tied_embeddings = 1,      \
	  .linear_bias = 1, .pos_embedding = s, .norm_eps = 1e-5 }
/* SPEC's models train without dropout (their config.json files say 0.0
 * or name none; BLOOM's hidden_dropout and attention_dropout are 0.0);
 * GPT-3, Megatron-LM's and NeMo's GPT models and OPT keep 0.1. */
/* BLOOM: GPT-style with ALiBi instead of learned positions. */
#define BLOOM(n, L, h, a, V, s) \
	SPEC(n, L, h, 4L * (h), a, a, V, s, MLP_GELU, NORM_LAYERNORM, 1, 1, 0, 0, \
	     .alibi = 1, .norm_eps = 1e-5)
/* LLaMA-style: SwiGLU, RMSNorm, untied, no biases; then the rotary
 * base and the rest of the positions. */
#define LLAMA(n, L, h, f, a, g, V, s, ...) \
	SPEC(n, L, h, f, a, g, V, s, MLP_SWIGLU, NORM_RMSNORM, 0, 0, 0, 0, \
	     .norm_eps = 1e-5, __VA_ARGS__)
/* Nemotron-style: squared ReLU, LayerNorm (layernorm1p), untied, no bias;
 * rotary embeddings over half of each head (rotary_percentage 0.5, base
 * 10000), NeMo-Framework-Launcher's nemotron configs. */
#define NEMOTRON(n, L, h, f, a, g) \
	SPEC(n, L, h, f, a, g, 256000, 4096, MLP_SQUARED_RELU, NORM_LAYERNORM, \
	     0, 0, 0, 0, .rope_theta = 10000, .rope_percent = 0.5, .norm_eps = 1e-5)

static const struct model_spec zoo[] = {
	/* GPT-3, Brown et al. 2020, Table 2.1.  Vocabulary 51200: GPT-2's
	 * 50257 BPE tokens padded as Megatron-LM pads them (Narayanan et al.
	 * 2021 count GPT-3 175B with V = 51200).  Table 2.1 prints 24 heads of
	 * 128 for 1.3B (3072 != 2048) and d_model 5140 for 13B; both are
	 * typos: 16 x 128 and 5120 match the published counts, GPT-Neo 1.3B
	 * and NeMo's gpt3 configs. */
	GPT("gpt3-125m", 12, 768, 12, 51200, 2048),
	GPT("gpt3-350m", 24, 1024, 16, 51200, 2048),
	GPT("gpt3-760m", 24, 1536, 16, 51200, 2048),
	GPT("gpt3-1.3b", 24, 2048, 16, 51200, 2048),
	GPT("gpt3-2.7b", 32, 2560, 32, 51200, 2048),
	GPT("gpt3-6.7b", 32, 4096, 32, 51200, 2048),
	GPT("gpt3-13b", 40, 5120, 40, 51200, 2048),
	GPT("gpt3-175b", 96, 12288, 96, 51200, 2048),
	/* Megatron-LM scaling models, Narayanan et al. 2021, Table 1. */
	GPT("megatron-1.7b", 24, 2304, 24, 51200, 2048),
	GPT("megatron-3.6b", 30, 3072, 32, 51200, 2048),
	GPT("megatron-7.5b", 36, 4096, 32, 51200, 2048),
	GPT("megatron-18b", 40, 6144, 48, 51200, 2048),
	GPT("megatron-39b", 48, 8192, 64, 51200, 2048),
	GPT("megatron-76b", 60, 10240, 80, 51200, 2048),
	GPT("megatron-145b", 80, 12288, 96, 51200, 2048),
	GPT("megatron-310b", 96, 16384, 128, 51200, 2048),
	GPT("megatron-530b", 105, 20480, 128, 51200, 2048),
	GPT("megatron-1t", 128, 25600, 160, 51200, 2048),
	/* BLOOM, BigScience 2022 (arXiv:2211.05100) and the bigscience/bloom
	 * config.json; ALiBi, no position embeddings. */
	BLOOM("bloom-176b", 70, 14336, 112, 250880, 2048),
	/* BloombergGPT (Wu et al. 2023, arXiv:2303.17564): BLOOM's layer,
	 * 70 of width 7680 (40 heads), a 131072-token vocabulary. */
	BLOOM("bloomberggpt-50b", 70, 7680, 40, 131072, 2048),
	/* GPT-NeoX-20B (Black et al. 2022, arXiv:2204.06745; the EleutherAI
	 * config.json): 44 layers of 6144 (64 heads of 96), attention and
	 * MLP in parallel behind their own LayerNorms, rotary over a quarter
	 * of each head, untied, no dropout, a 50432-token padded vocabulary. */
	{ .name = "gpt-neox-20b", .layers = 44, .hidden = 6144, .ffn = 24576, .heads = 64,
	  .kv_heads = 64, .head_dim = 96, .vocab = 50432, .seq = 2048, .mlp = MLP_GELU,
	  .norm = NORM_LAYERNORM, .linear_bias = 1, .rope_theta = 10000, .rope_percent = 0.25,
	  .norm_eps = 1e-5, .no_dropout = 1, .parallel_block = 1 },
	/* StarCoder / StarCoderBase 15.5B (Li et al. 2023, arXiv:2305.06161;
	 * the bigcode config.json, gpt_bigcode): 40 layers of 6144, 48 heads
	 * with one shared K/V head (multi-query), 4h GeLU MLP, learned
	 * positions for its 8192 tokens, tied, dropout 0.1. */
	{ .name = "starcoder-15b", .layers = 40, .hidden = 6144, .ffn = 24576, .heads = 48,
	  .kv_heads = 1, .head_dim = 128, .vocab = 49152, .seq = 8192, .mlp = MLP_GELU,
	  .norm = NORM_LAYERNORM, .tied_embeddings = 1, .linear_bias = 1, .pos_embedding = 8192,
	  .norm_eps = 1e-5 },
	/* TinyLlama 1.1B (Zhang et al. 2024, arXiv:2401.02385; its
	 * config.json): Llama 2's layer, 22 of 2048, 4 K/V heads. */
	LLAMA("tinyllama-1.1b", 22, 2048, 5632, 32, 4, 32000, 2048, .rope_theta = 10000),
	/* Llama 2 (Touvron et al. 2023) and Llama 3/3.1 (Dubey et al. 2024,
	 * Table 3), dimensions from the meta-llama config.json files; seq is
	 * the pretraining length (4096; 8192 before long-context training). */
	LLAMA("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, .rope_theta = 10000),
	LLAMA("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096, .rope_theta = 10000),
	LLAMA("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, .rope_theta = 10000),
	LLAMA("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, .rope_theta = 500000),
	LLAMA("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, .rope_theta = 500000),
	LLAMA("llama3.1-8b", 32, 4096, 14336, 32, 8, 128256, 8192, .rope_theta = 500000,
	      .rope_scaling = "llama3", .rope_factor = 8),
	LLAMA("llama3.1-70b", 80, 8192, 28672, 64, 8, 128256, 8192, .rope_theta = 500000,
	      .rope_scaling = "llama3", .rope_factor = 8),
	LLAMA("llama3.1-405b", 126, 16384, 53248, 128, 8, 128256, 8192, .rope_theta = 500000,
	      .rope_scaling = "llama3", .rope_factor = 8),
	/* Mistral 7B v0.1 (Jiang et al. 2023, arXiv:2310.06825, Table 1; its
	 * config.json): Llama's layer with 8 K/V heads, a 4096-token sliding
	 * window in every layer, an 8192-token context.  Qwen2.5 72B (Qwen2.5
	 * report, arXiv:2412.15115; its config.json): Q/K/V biases, 8 K/V
	 * heads, seq 4096 (the first pretraining stage's length). */
	LLAMA("mistral-7b", 32, 4096, 14336, 32, 8, 32000, 8192, .rope_theta = 10000,
	      .sliding_window = 4096, .window_layers = 32),
	SPEC("qwen2.5-72b", 80, 8192, 29568, 64, 8, 152064, 4096, MLP_SWIGLU, NORM_RMSNORM,
	     0, 0, 0, 0, .qkv_bias = 1, .rope_theta = 1e6, .norm_eps = 1e-6),
	/* Nemotron-4 15B (arXiv:2402.16819) and 340B (arXiv:2406.11704); the
	 * 340B dimensions match NeMo-Framework-Launcher
	 * conf/training/nemotron/nemotron_340b.yaml (num_query_groups 8). */
	NEMOTRON("nemotron4-15b", 32, 6144, 24576, 48, 8),
	NEMOTRON("nemotron4-340b", 96, 18432, 73728, 96, 8),
	/* Mixtral 8x7B, mistralai/Mixtral-8x7B-v0.1 config.json. */
	SPEC("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 4096, MLP_SWIGLU,
	     NORM_RMSNORM, 0, 0, 8, 2, .rope_theta = 1e6, .norm_eps = 1e-5),
	/* Mixtral 8x22B, mistralai/Mixtral-8x22B-v0.1 config.json (65,536
	 * positions; trained here at 4096 as 8x7B's entry, --seq for more):
	 * 140.6 B parameters, 39.2 B active. */
	SPEC("mixtral-8x22b", 56, 6144, 16384, 48, 8, 32000, 4096, MLP_SWIGLU,
	     NORM_RMSNORM, 0, 0, 8, 2, .rope_theta = 1e6, .norm_eps = 1e-5),
	/* Grok-1, xai-org/grok-1 README and model.py: 6144 = 48 x 128, FFN
	 * int(8 * 6144) * 2 / 3 = 32768 per expert, gated GeLU, RMSNorm,
	 * embeddings tied (InOutEmbed.decode), 131072 tokens, 8192 context. */
	SPEC("grok1-314b", 64, 6144, 32768, 48, 8, 131072, 8192, MLP_GEGLU,
	     NORM_RMSNORM, 1, 0, 8, 2, .rope_theta = 10000, .norm_eps = 1e-5),
	/* NeMo benchmark models, NeMo-Framework-Launcher
	 * launcher_scripts/conf/training/gpt3/{5b,20b}.yaml: GPT2BPETokenizer
	 * (50257) padded to a multiple of make_vocab_size_divisible_by = 128
	 * = 50304 (Megatron pads to 128 x TP; the TP = 1 value is kept here),
	 * learned positions, tied embeddings, biases on. */
	GPT("nemo-gpt3-5b", 24, 4096, 32, 50304, 2048),
	GPT("nemo-gpt3-20b", 44, 6144, 48, 50304, 2048),
	/* conf/training/nemotron/nemotron_{8b,22b}.yaml ("nemotron3"):
	 * num_query_groups null, so plain multi-head attention. */
	NEMOTRON("nemotron-8b", 32, 4096, 16384, 32, 32),
	NEMOTRON("nemotron-22b", 40, 6144, 24576, 48, 48),
	/* OPT-175B, Zhang et al. 2022 (arXiv:2205.01068), Table 1, and the
	 * metaseq/Hugging Face configs: ReLU, LayerNorm, biases, tied,
	 * 2048 + 2 learned positions (OPT's offset of two). */
	{ .name = "opt-175b", .layers = 96, .hidden = 12288, .ffn = 49152, .heads = 96,
	  .kv_heads = 96, .head_dim = 128, .vocab = 50272, .seq = 2048, .mlp = MLP_RELU,
	  .norm = NORM_LAYERNORM, .tied_embeddings = 1, .linear_bias = 1,
	  .pos_embedding = 2050, .norm_eps = 1e-5 },
	/* DeepSeek-V2 (arXiv:2405.04434) and DeepSeek-V3 (arXiv:2412.19437),
	 * the deepseek-ai config.json files: MLA, fine-grained routed experts
	 * with shared ones, the first layers dense.  seq is the pretraining
	 * length (4096).  V3's multi-token-prediction module is not counted
	 * (671 B of the card's 685 B are the main model). */
	{ .name = "deepseek-v2", .layers = 60, .hidden = 5120, .ffn = 12288, .heads = 128,
	  .kv_heads = 128, .head_dim = 192, .vocab = 102400, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 160, .top_k = 6, .moe_ffn = 1536,
	  .shared_experts = 2, .dense_layers = 1, .route_groups = 8, .route_topk_groups = 3,
	  .router_pre_softmax = 1, .router_scale = 16, .q_lora_rank = 1536, .kv_lora_rank = 512,
	  .qk_rope_dim = 64, .qk_nope_dim = 128, .v_head_dim = 128,
	  .rope_theta = 10000, .rope_scaling = "yarn", .rope_factor = 40, .norm_eps = 1e-6,
	  .no_dropout = 1 },
	{ .name = "deepseek-v3", .layers = 61, .hidden = 7168, .ffn = 18432, .heads = 128,
	  .kv_heads = 128, .head_dim = 192, .vocab = 129280, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 256, .top_k = 8, .moe_ffn = 2048,
	  .shared_experts = 1, .dense_layers = 3, .route_groups = 8, .route_topk_groups = 4,
	  .router_sigmoid = 1, .router_expert_bias = 1, .router_scale = 2.5, .q_lora_rank = 1536, .kv_lora_rank = 512,
	  .qk_rope_dim = 64, .qk_nope_dim = 128, .v_head_dim = 128,
	  .rope_theta = 10000, .rope_scaling = "yarn", .rope_factor = 40, .norm_eps = 1e-6,
	  .no_dropout = 1 },
	/* Kimi K2 (Moonshot AI, 2025; moonshotai/Kimi-K2-Instruct config.json):
	 * DeepSeek-V3's architecture with 384 routed experts, 64 heads, one
	 * dense layer, no routing groups (n_group 1), a 163840-token
	 * vocabulary; card: 1.04 T total, 32 B activated. */
	{ .name = "kimi-k2", .layers = 61, .hidden = 7168, .ffn = 18432, .heads = 64,
	  .kv_heads = 64, .head_dim = 192, .vocab = 163840, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 384, .top_k = 8, .moe_ffn = 2048,
	  .shared_experts = 1, .dense_layers = 1,
	  .router_sigmoid = 1, .router_expert_bias = 1, .router_scale = 2.827, .q_lora_rank = 1536,
	  .kv_lora_rank = 512, .qk_rope_dim = 64, .qk_nope_dim = 128, .v_head_dim = 128,
	  .rope_theta = 50000, .rope_scaling = "yarn", .rope_factor = 32, .norm_eps = 1e-6,
	  .no_dropout = 1 },
	/* Qwen2-57B-A14B (Qwen2 report, arXiv:2407.10671) and Qwen3-MoE
	 * (arXiv:2505.09388), the Qwen config.json files: Qwen2's gated shared
	 * expert and QKV biases, Qwen3's Q/K norms; seq 4096, the first
	 * pretraining stage's length. */
	{ .name = "qwen2-57b-a14b", .layers = 28, .hidden = 3584, .ffn = 18944, .heads = 28,
	  .kv_heads = 4, .head_dim = 128, .vocab = 151936, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 64, .top_k = 8, .moe_ffn = 2560,
	  .shared_experts = 1, .shared_ffn = 20480, .shared_gate = 1, .qkv_bias = 1,
	  .router_pre_softmax = 1,
	  .rope_theta = 1e6, .norm_eps = 1e-6,
	  .no_dropout = 1 },
	{ .name = "qwen3-30b-a3b", .layers = 48, .hidden = 2048, .ffn = 6144, .heads = 32,
	  .kv_heads = 4, .head_dim = 128, .vocab = 151936, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 128, .top_k = 8, .moe_ffn = 768, .qk_norm = 1,
	  .rope_theta = 1e6, .norm_eps = 1e-6,
	  .no_dropout = 1 },
	{ .name = "qwen3-235b-a22b", .layers = 94, .hidden = 4096, .ffn = 12288, .heads = 64,
	  .kv_heads = 4, .head_dim = 128, .vocab = 151936, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 128, .top_k = 8, .moe_ffn = 1536, .qk_norm = 1,
	  .rope_theta = 1e6, .norm_eps = 1e-6,
	  .no_dropout = 1 },
	/* GLM-4.5 and GLM-4.5-Air (Zhipu AI 2025, "GLM-4.5"; the zai-org
	 * config.json files and Megatron-Bridge's GLM45 providers): 96 query
	 * heads of 128 over 8 K/V heads with QKV biases, rotary over half of
	 * each head (base 1e6), leading dense layers, then MoE layers of
	 * 160 (Air: 128) experts, top 8 by a sigmoid router with expert bias,
	 * and one shared expert of the routed width; untied.  The one
	 * multi-token-prediction layer is not in the entry (355 B and 106 B
	 * published with it). */
	{ .name = "glm4.5-355b-a32b", .layers = 92, .hidden = 5120, .ffn = 12288, .heads = 96,
	  .kv_heads = 8, .head_dim = 128, .vocab = 151552, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 160, .top_k = 8, .moe_ffn = 1536,
	  .shared_experts = 1, .dense_layers = 3, .router_sigmoid = 1, .router_expert_bias = 1,
	  .router_scale = 2.5, .qkv_bias = 1, .qk_norm = 1,
	  .rope_theta = 1e6, .rope_percent = 0.5, .norm_eps = 1e-5,
	  .no_dropout = 1 },
	{ .name = "glm4.5-air-106b-a12b", .layers = 46, .hidden = 4096, .ffn = 10944, .heads = 96,
	  .kv_heads = 8, .head_dim = 128, .vocab = 151552, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 128, .top_k = 8, .moe_ffn = 1408,
	  .shared_experts = 1, .dense_layers = 1, .router_sigmoid = 1, .router_expert_bias = 1,
	  .qkv_bias = 1, .rope_theta = 1e6, .rope_percent = 0.5, .norm_eps = 1e-5,
	  .no_dropout = 1 },
	/* Qwen3-Next 80B-A3B (Qwen/Qwen3-Next-80B-A3B config.json, 2025):
	 * Gated DeltaNet mixers with every 4th layer gated attention (heads
	 * of 256, rotary over a quarter), 512 experts of 512 (top 10) and a
	 * gated shared expert on every layer; 79.67 B total, 3.87 B active. */
	{ .name = "qwen3-next-80b-a3b", .layers = 48, .hidden = 2048, .ffn = 5120, .heads = 16,
	  .kv_heads = 2, .head_dim = 256, .vocab = 151936, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 512, .top_k = 10, .moe_ffn = 512,
	  .shared_experts = 1, .shared_ffn = 512, .moe_every = 1, .shared_gate = 1, .qk_norm = 1,
	  .rope_theta = 1e7, .rope_percent = 0.25, .norm_eps = 1e-6,
	  .mixers = "GGGAGGGAGGGAGGGAGGGAGGGAGGGAGGGAGGGAGGGAGGGAGGGA",
	  .ffns = "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE",
	  .gdn_k_heads = 16, .gdn_v_heads = 32, .gdn_k_dim = 128, .gdn_v_dim = 128, .gdn_conv = 4,
	  .attn_out_gate = 1, .no_dropout = 1 },
	/* NVIDIA Nemotron 3 Nano 30B-A3B (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B
	 * config.json, 2025): Nemotron-H's one-block layers, 23 Mamba-2, 6
	 * attention (32 heads, 2 K/V) and 23 MoE of 128 squared-ReLU experts
	 * (top 6, sigmoid router) with one shared of 3712; 31.6 B total. */
	{ .name = "nemotron3-nano-30b-a3b", .layers = 52, .hidden = 2688, .ffn = 1856, .heads = 32,
	  .kv_heads = 2, .head_dim = 128, .vocab = 131072, .seq = 8192, .mlp = MLP_SQUARED_RELU,
	  .norm = NORM_RMSNORM, .num_experts = 128, .top_k = 6, .moe_ffn = 1856,
	  .shared_experts = 1, .shared_ffn = 3712, .router_sigmoid = 1, .router_expert_bias = 1,
	  .router_scale = 2.5, .rope_theta = 10000, .norm_eps = 1e-5,
	  .mixers = "M-M-MA-M-M-MA-M-M-MA-M-M-MA-M-M-MA-M-M-M-MA-M-M-M-M-",
	  .ffns = "-E-E--E-E-E--E-E-E--E-E-E--E-E-E--E-E-E-E--E-E-E-E-E",
	  .mamba_heads = 64, .mamba_head_dim = 64, .mamba_groups = 8, .mamba_state = 128,
	  .mamba_conv = 4, .mamba_chunk = 128, .no_dropout = 1 },
	/* Nemotron-H 8B, 47B and 56B (Blakeman et al. 2025, "Nemotron-H";
	 * the config.json files of nvidia/Nemotron-H-*-Base-8K and
	 * Megatron-Bridge's NemotronHModelProvider patterns): one block a
	 * layer, Mamba-2 (M), attention without positions (A, 8 K/V heads of
	 * 128) or a squared-ReLU MLP (D); 8 Mamba groups, heads of 64, RMSNorm,
	 * untied, no biases, 8192 tokens. */
	{ .name = "nemotron-h-8b", .layers = 52, .hidden = 4096, .ffn = 21504, .heads = 32,
	  .kv_heads = 8, .head_dim = 128, .vocab = 131072, .seq = 8192, .mlp = MLP_SQUARED_RELU,
	  .norm = NORM_RMSNORM, .norm_eps = 1e-5,
	  .mixers = "M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-M-",
	  .ffns = "-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D-D",
	  .mamba_heads = 128, .mamba_head_dim = 64, .mamba_groups = 8, .mamba_state = 128,
	  .mamba_conv = 4, .mamba_chunk = 128, .no_dropout = 1 },
	{ .name = "nemotron-h-47b", .layers = 98, .hidden = 8192, .ffn = 30720, .heads = 64,
	  .kv_heads = 8, .head_dim = 128, .vocab = 131072, .seq = 8192, .mlp = MLP_SQUARED_RELU,
	  .norm = NORM_RMSNORM, .norm_eps = 1e-5,
	  .mixers = "M-M-M-M-M-M-M-M-MA-M-M-M-M-M-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-M-M-M"
		    "---MM---M-MA-M-M-M-M-M-",
	  .ffns = "-D-D-D-D-D-D-D-D--D-D-D-D-D-D-D-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D-D-D-D"
		  "DD--DDD-D--D-D-D-D-D-D",
	  .mamba_heads = 256, .mamba_head_dim = 64, .mamba_groups = 8, .mamba_state = 256,
	  .mamba_conv = 4, .mamba_chunk = 128, .no_dropout = 1 },
	{ .name = "nemotron-h-56b", .layers = 118, .hidden = 8192, .ffn = 32768, .heads = 64,
	  .kv_heads = 8, .head_dim = 128, .vocab = 131072, .seq = 8192, .mlp = MLP_SQUARED_RELU,
	  .norm = NORM_RMSNORM, .norm_eps = 1e-5,
	  .mixers = "M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-"
		    "MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-MA-M-M-M-M-M-",
	  .ffns = "-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D-"
		  "-D-D-D-D-D--D-D-D-D-D--D-D-D-D-D--D-D-D-D-D-D",
	  .mamba_heads = 256, .mamba_head_dim = 64, .mamba_groups = 8, .mamba_state = 256,
	  .mamba_conv = 4, .mamba_chunk = 128, .no_dropout = 1 },
	/* Llama 4 (Meta's model cards and config.json files, 2025): one
	 * routed expert of 8192 and one ungated shared expert of the same
	 * width per MoE layer, a sigmoid router; Scout's 16 experts on every
	 * layer, Maverick's 128 on every second (the others dense MLPs of
	 * 16384); 8192 tokens, the pretraining length before long context. */
	{ .name = "llama4-scout", .layers = 48, .hidden = 5120, .ffn = 16384, .heads = 40,
	  .kv_heads = 8, .head_dim = 128, .vocab = 202048, .seq = 8192, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 16, .top_k = 1, .moe_ffn = 8192,
	  .shared_experts = 1, .shared_ffn = 8192, .router_sigmoid = 1,
	  .rope_theta = 500000, .norm_eps = 1e-5,
	  .no_dropout = 1 },
	{ .name = "llama4-maverick", .layers = 48, .hidden = 5120, .ffn = 16384, .heads = 40,
	  .kv_heads = 8, .head_dim = 128, .vocab = 202048, .seq = 8192, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 128, .top_k = 1, .moe_ffn = 8192,
	  .shared_experts = 1, .shared_ffn = 8192, .router_sigmoid = 1, .moe_every = 2,
	  .rope_theta = 500000, .norm_eps = 1e-5,
	  .no_dropout = 1 },
	/* gpt-oss (OpenAI's model card, 2025, Table 1, and the openai
	 * config.json files): biases on attention, experts and router, a
	 * learned sink per head; 4096 the initial context length.  Every
	 * other layer, from the first, uses a 128-token sliding window
	 * (layer_types). */
	{ .name = "gpt-oss-20b", .layers = 24, .hidden = 2880, .ffn = 2880, .heads = 64,
	  .kv_heads = 8, .head_dim = 64, .vocab = 201088, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 32, .top_k = 4, .attn_bias = 1, .moe_bias = 1,
	  .attn_sinks = 1, .sliding_window = 128, .window_layers = 12,
	  .rope_theta = 150000, .rope_scaling = "yarn", .rope_factor = 32, .norm_eps = 1e-5,
	  .no_dropout = 1 },
	{ .name = "gpt-oss-120b", .layers = 36, .hidden = 2880, .ffn = 2880, .heads = 64,
	  .kv_heads = 8, .head_dim = 64, .vocab = 201088, .seq = 4096, .mlp = MLP_SWIGLU,
	  .norm = NORM_RMSNORM, .num_experts = 128, .top_k = 4, .attn_bias = 1, .moe_bias = 1,
	  .attn_sinks = 1, .sliding_window = 128, .window_layers = 18,
	  .rope_theta = 150000, .rope_scaling = "yarn", .rope_factor = 32, .norm_eps = 1e-5,
	  .no_dropout = 1 },
};

#define ZOO_N ((int)(sizeof zoo / sizeof zoo[0]))

const struct model_spec *model_zoo(int *n)
{
	if (n)
		*n = ZOO_N;
	return zoo;
}

const struct model_spec *model_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < ZOO_N; i++)
		if (model_name_eq(name, zoo[i].name))
			return &zoo[i];
	return NULL;
}

/* A model name as sources write it, squeezed: lower case, letters,
 * digits and dots only; a hub id's organisation, a leading "meta" before
 * "llama" or "nvidia" before "nemotron", and trailing "hf", "base",
 * "instruct", "chat", a fine-tuning's method ("LoRA", "SFT"), the weights'
 * dtype ("bf16", "fp8"), a context length ("8k") and version tags ("v0.1")
 * dropped.  0 when it does not fit. */
static int squeeze_model_name(const char *s, char *k, size_t len)
{
	static const char *const tails[] = { "hf", "base", "instruct", "chat", "bf16", "fp8",
					     "lora", "sft", "peft", NULL };
	static const char *const kinds[] = { "base", "instruct", "chat", NULL };
	const char *slash = strrchr(s, '/');
	int again = 1;

	if (slash)
		s = slash + 1;
	if (!name_squeeze(s, ".", k, len))
		return 0;
	if (!strncmp(k, "metallama", 9))
		memmove(k, k + 4, strlen(k + 4) + 1);
	else if (!strncmp(k, "nvidianemotron", 14))
		memmove(k, k + 6, strlen(k + 6) + 1);
	while (again) {
		size_t m = strlen(k), t;
		char *v;
		again = 0;
		for (int i = 0; tails[i]; i++) {
			t = strlen(tails[i]);
			if (m > t && !strcmp(k + m - t, tails[i])) {
				k[m - t] = '\0';
				again = 1;
				break;
			}
		}
		if (!again && m > 2 && k[m - 1] == 'k' && isdigit((unsigned char)k[m - 2])) {
			/* the context length of a base or tuned model ("Base-8K");
			 * after a size it is another model ("Llama-2-7B-32K") */
			t = m - 1;
			while (t > 0 && isdigit((unsigned char)k[t - 1]))
				t--;
			for (int i = 0; kinds[i]; i++) {
				size_t w = strlen(kinds[i]);
				if (t > w && !strncmp(k + t - w, kinds[i], w)) {
					k[t] = '\0';
					again = 1;
					break;
				}
			}
		}
		v = strrchr(k, 'v');
		if (!again && v && v > k && isdigit((unsigned char)v[1]) &&
		    strspn(v + 1, "0123456789.") == strlen(v + 1) && strchr(v + 1, '.')) {
			*v = '\0';
			again = 1;
		}
	}
	return k[0] != '\0';
}

/* Is s a size tag as zoo names end: "15b", "1.1b", "30ba3b" (total and
 * active)? */
static int size_tag(const char *s)
{
	for (int part = 0; part < 2; part++) {
		size_t n = strspn(s, "0123456789.");
		if (n == 0 || s[n] != 'b')
			return 0;
		s += n + 1;
		if (*s == '\0')
			return 1;
		if (part == 0 && *s++ != 'a')
			return 0;
	}
	return 0;
}

/* What a source's name may add after a zoo name: the total size in
 * billions ("DeepSeek-V3-671B", within 2 % of the entry's count), or the
 * active size and the expert count ("Llama-4-Scout-17B-16E", with the
 * entry's expert count); 1 when tail is one of them for z. */
static int size_suffix(const char *tail, const struct model_spec *z)
{
	char *end;
	double b = strtod(tail, &end), total = model_params_total(z);
	if (end == tail || !(b > 0))
		return 0;
	if (!strcmp(end, "b"))
		return fabs(b * 1e9 - total) <= 0.02 * total;
	if (*end == 'b' && z->num_experts > 0) {
		long e = strtol(end + 1, &end, 10);
		return e == z->num_experts && !strcmp(end, "e");
	}
	return 0;
}

/* Names a source writes for a zoo model that no squeeze reaches: NeMo's
 * Nemotron-4 rows drop the 4, its Nemotron-3 8B and 22B recipes
 * (nemotron3_8b, nemotron3_22b) are the zoo's Nemotron 8B and 22B, Llama
 * 3.3 70B is Llama 3.1 70B's architecture (Meta's model card). */
static const char *const aliases[][2] = {
	{ "nemotron15b", "nemotron4-15b" },
	{ "nemotron340b", "nemotron4-340b" },
	{ "nemotron38b", "nemotron-8b" },
	{ "nemotron322b", "nemotron-22b" },
	{ "llama3.370b", "llama3.1-70b" },
};

const struct model_spec *model_find_loose(const char *name)
{
	char want[96], have[96];
	const struct model_spec *z = model_find(name), *stem = NULL;
	size_t n;
	int stems = 0;
	if (z || !name || !squeeze_model_name(name, want, sizeof want))
		return z;
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (!strcmp(want, aliases[i][0]))
			return model_find(aliases[i][1]);
	n = strlen(want);
	for (int i = 0; i < ZOO_N; i++) {
		size_t m;
		if (!squeeze_model_name(zoo[i].name, have, sizeof have))
			continue;
		if (!strcmp(have, want))
			return &zoo[i];
		m = strlen(have);
		/* "StarCoder", "BloombergGPT": the family's one size;
		 * "Qwen3-235B": the entry without its active size */
		if (!strncmp(have, want, n) &&
		    (size_tag(have + n) || (have[n] == 'a' && size_tag(have + n + 1)))) {
			stem = &zoo[i];
			stems++;
		}
		/* "DeepSeek-V3-671B", "Llama-4-Scout-17B-16E" */
		if (m < n && !strncmp(have, want, m) && size_suffix(want + m, &zoo[i])) {
			stem = &zoo[i];
			stems++;
		}
	}
	return stems == 1 ? stem : NULL;
}
