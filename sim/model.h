/*
 * model.h: transformer model specs.  An embedded zoo by name, pplan model
 * JSON files (pplan.model/1), and Hugging Face config.json files read as
 * they are.  GQA (kv_heads < heads), gated MLPs (SwiGLU/GeGLU: three
 * matrices) and mixture-of-experts layers count in parameters, FLOPs and
 * memory.  A model_spec is plain data.
 */
#ifndef PPLAN_MODEL_H
#define PPLAN_MODEL_H

#include "status.h"
#include "units.h"

enum mlp_kind {
	MLP_GELU = 0,      /* 2 matrices */
	MLP_SQUARED_RELU,  /* 2 matrices */
	MLP_SWIGLU,        /* 3 matrices (gated) */
	MLP_GEGLU,         /* 3 matrices (gated) */
	MLP_RELU,          /* 2 matrices (OPT) */
	MLP_KIND_COUNT
};

enum norm_kind { NORM_LAYERNORM = 0, NORM_RMSNORM };

const char *mlp_kind_name(enum mlp_kind kind);
int mlp_kind_parse(const char *s, enum mlp_kind *out);
int mlp_is_gated(enum mlp_kind kind);

/* What a model file may say (docs/limits.md): counts (layers, heads,
 * key/value heads, experts, top_k) up to MODEL_MAX_COUNT, sizes (hidden,
 * ffn, head_dim, vocab, seq) up to MODEL_MAX_DIM.  Readers refuse a value
 * beyond them with the file, the key and the bound; the cost and memory
 * model then computes in double and 64 bits without overflow. */
#define MODEL_MAX_COUNT (1L << 20)
#define MODEL_MAX_DIM (1L << 24)
/* The most layers a hybrid stack's pattern may name. */
#define MODEL_MAX_PATTERN 512

struct model_spec {
	char name[64];
	int layers;
	long hidden;        /* h */
	long ffn;           /* MLP intermediate size of a dense layer (and of an
			     * expert when moe_ffn is 0) */
	int heads;          /* a, query heads */
	int kv_heads;       /* g, key/value heads (== heads without GQA) */
	long head_dim;      /* h / a unless the model says otherwise */
	long vocab;         /* V, as padded for training */
	long seq;           /* default training sequence length, tokens */
	enum mlp_kind mlp;
	enum norm_kind norm;
	int tied_embeddings;
	int linear_bias;    /* GPT-style biases in linear layers */
	long pos_embedding; /* rows of a learned absolute position embedding
			     * (GPT-2, OPT, GPT-3); 0 = none (rotary, ALiBi) */
	int num_experts;    /* routed experts; 0 = dense */
	int top_k;          /* routed experts per token */
	/* Fine-grained and shared-expert MoE (DeepSeek, Qwen-MoE, GPT-OSS). */
	long moe_ffn;       /* one routed expert's MLP width; 0 = ffn */
	int shared_experts; /* experts every token also goes through */
	long shared_ffn;    /* one shared expert's width; 0 = moe_ffn */
	int dense_layers;   /* leading layers with a dense MLP (first_k_dense_replace) */
	int moe_every;      /* every moe_every-th layer is MoE (decoder_sparse_step); 0, 1: all */
	int moe_bias;       /* experts and router carry biases (GPT-OSS) */
	int shared_gate;    /* a sigmoid gate (h weights) on the shared expert (Qwen2-MoE) */
	/* Group-limited routing (DeepSeek-V2/V3's n_group, topk_group): the
	 * routed experts in route_groups equal groups of consecutive experts,
	 * a token's top_k drawn from route_topk_groups of them; 0 = none. */
	int route_groups, route_topk_groups;
	/* The router's scores as Megatron-Core's flags name them (none
	 * changes a cost; the emitted configs say them): sigmoid scores
	 * (DeepSeek-V3, Nemotron-H; else softmax), an expert bias for
	 * aux-loss-free balancing, softmax over every expert before the top-k
	 * (the top-k weights not renormalised: DeepSeek-V2, Qwen2-MoE), and
	 * the top-k weights' scale (0: none). */
	int router_sigmoid, router_expert_bias, router_pre_softmax;
	double router_scale;
	/* Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank 0 = none.
	 * Q is h x q_lora_rank x a(qk_nope + qk_rope) (or h x a(...) without
	 * q_lora_rank), K and V come from a kv_lora_rank latent plus one
	 * shared qk_rope key, V heads are v_head_dim wide. */
	long q_lora_rank, kv_lora_rank, qk_rope_dim, qk_nope_dim, v_head_dim;
	int qkv_bias;       /* biases on Q, K and V only (Qwen2) */
	int attn_bias;      /* biases on Q, K, V and the output (attention_bias) */
	int mlp_bias;       /* biases in the MLP (mlp_bias) */
	int attn_sinks;     /* a learned attention sink per head (GPT-OSS) */
	int qk_norm;        /* a norm over each head's Q and K (Qwen3, Gemma 3) */
	int norms_per_layer;/* 2 (before attention, before the MLP), or 1: one norm
			     * shared by parallel attention and MLP (Falcon-7B); 0 = 2 */
	int parallel_block; /* attention and the MLP side by side on one residual
			     * (GPT-NeoX, GPT-J, Falcon): priced as the sequential
			     * layer, the same work; Megatron's layers are sequential */
	/* Positions: learned absolute when pos_embedding > 0, ALiBi when
	 * alibi, else rotary (RoPE) with base rope_theta (0: not given, the
	 * frameworks' 10000) over rope_percent of each head (0: all of it),
	 * and a context extension: rope_scaling "llama3" (Llama 3.1) or
	 * "yarn" (DeepSeek, gpt-oss) by rope_factor; "" none. */
	int alibi;
	double rope_theta, rope_percent, rope_factor;
	char rope_scaling[12];
	double norm_eps;    /* the norms' epsilon; 0 = not given */
	/* Sliding-window attention (Mistral 7B v0.1, Gemma 2 and 3, gpt-oss):
	 * window_layers of the layers let a query see only the last
	 * sliding_window tokens; 0 = none (full causal attention). */
	long sliding_window;
	int window_layers;
	/* Hybrid stacks (Nemotron-H's Mamba-2, Qwen3-Next's Gated DeltaNet):
	 * mixers[i] is layer i's token mixer ('A' attention, 'M' Mamba-2,
	 * 'G' Gated DeltaNet, '-' none) and ffns[i] its feed-forward block
	 * ('D' dense MLP, 'E' MoE, '-' none), one character a layer; ""
	 * (the zero value) for the usual stack, every layer attention and
	 * an MLP, MoE as dense_layers and moe_every say. */
	char mixers[MODEL_MAX_PATTERN + 1], ffns[MODEL_MAX_PATTERN + 1];
	/* Mamba-2 mixers: heads x head_dim = d_inner, B and C groups, the
	 * state per head, the causal convolution's width, the SSD chunk. */
	long mamba_heads, mamba_head_dim, mamba_groups, mamba_state, mamba_conv, mamba_chunk;
	/* Gated DeltaNet mixers: key and value heads and their widths, the
	 * convolution's width. */
	long gdn_k_heads, gdn_v_heads, gdn_k_dim, gdn_v_dim, gdn_conv;
	int attn_out_gate;  /* Q's projection also makes a sigmoid gate on the output (Qwen3-Next) */
	int no_dropout;     /* trained without dropout (p = 0: Llama, Mistral, Nemotron,
			     * MPT, BLOOM): no masks are written or kept; 0 = the
			     * masks of GPT-2/3, OPT and Megatron-LM's default 0.1 */
	char note[96];      /* what a reader did that a user should know ("") */
};


/* Layers: is layer i (0-based) an MoE layer; how many are. */
int model_layer_is_moe(const struct model_spec *model, int i);
int model_moe_layers(const struct model_spec *model);
/* MoE layers among layers [first, first + n). */
int model_moe_layers_in(const struct model_spec *model, int first, int n);
/* The routed expert's and the shared expert's MLP widths. */
long model_expert_ffn(const struct model_spec *model);
long model_shared_ffn(const struct model_spec *model);
/* Multi-head latent attention? */
int model_is_mla(const struct model_spec *model);

/* A layer kind's mean make-up: of the model's dense-FFN layers (moe 0,
 * with the layers that have no FFN) or of its MoE layers (moe 1), the
 * shares whose mixer is attention, Mamba-2 or Gated DeltaNet, and (dense
 * kind) the share with an MLP.  The usual stack: attention 1, ffn 1. */
struct layer_mix {
	double attn, mamba, gdn, ffn;
};
void model_layer_mix(const struct model_spec *model, int moe, struct layer_mix *out);
/* Set model's layers from Megatron's hybrid_override_pattern (key names it
 * in the sentence): one character a layer, M Mamba-2, * attention, - an
 * MLP, E an MoE, each layer one block; its length model->layers. */
enum pplan_status model_set_hybrid_pattern(struct model_spec *model, const char *pat,
					   const char *where, const char *key, struct perr *err);
/* Every every-th layer attention, the others Gated DeltaNet, each with
 * its FFN as dense_layers and moe_every place the MoE ones; refused (where
 * names the source) past MODEL_MAX_PATTERN layers. */
enum pplan_status model_set_gdn_every(struct model_spec *model, int every, const char *where,
				      struct perr *err);
/* ffns from dense_layers and moe_every (mixers untouched). */
void model_set_ffns_from_moe(struct model_spec *model);
/* Is model a hybrid stack (a mixer other than attention, or a layer without one)? */
int model_is_hybrid(const struct model_spec *model);
/* Mamba-2's inner width (heads x head_dim) and its in_proj's output
 * (z, x, B, C and dt); Gated DeltaNet's key and value widths. */
double model_mamba_inner(const struct model_spec *model);
double model_mamba_in_proj(const struct model_spec *model);
double model_gdn_key(const struct model_spec *model);
double model_gdn_value(const struct model_spec *model);
/* One mixer's parameters, with its norm. */
double model_params_mamba_mixer(const struct model_spec *model);
double model_params_gdn_mixer(const struct model_spec *model);
/* A layer of kind moe's mixers, as its mean make-up weighs them. */
double model_params_mixers(const struct model_spec *model, int moe);

/* Parameter counts (exact for the architecture; biases and norms counted). */
double model_params_attn_layer(const struct model_spec *model);
double model_params_dense_mlp(const struct model_spec *model);  /* a dense layer's MLP */
double model_params_expert(const struct model_spec *model);     /* one routed expert */
/* An MoE layer's MLP with all routed experts: the routed experts alone,
 * and the rest (shared experts, router, gate, norm) that every token uses. */
double model_params_moe_routed(const struct model_spec *model);
double model_params_moe_common(const struct model_spec *model);
/* an MoE layer's (all experts), else dense */
double model_params_mlp_layer(const struct model_spec *model);
/* The linears LoRA adapts, by the names Megatron-Core gives its modules
 * (NeMo's and Megatron-Bridge's target_modules): the attention's fused
 * QKV and output, the MLP's (dense, shared and routed experts alike)
 * fc1 and fc2, multi-latent attention's projections, the Mamba-2 and
 * Gated DeltaNet mixers' in_proj and out_proj. */
enum lora_target {
	LORA_QKV = 1 << 0, LORA_PROJ = 1 << 1, LORA_FC1 = 1 << 2, LORA_FC2 = 1 << 3,
	LORA_Q = 1 << 4, LORA_Q_DOWN = 1 << 5, LORA_Q_UP = 1 << 6, LORA_KV_DOWN = 1 << 7,
	LORA_KV_UP = 1 << 8, LORA_IN_PROJ = 1 << 9, LORA_OUT_PROJ = 1 << 10,
	LORA_TARGET_ALL = (1 << 11) - 1,
};
/* LoRA's own default, in both frameworks: the four linears of a
 * standard layer (MLA's and the mixers' projections are not among them). */
#define LORA_TARGETS_DEFAULT (LORA_QKV | LORA_PROJ | LORA_FC1 | LORA_FC2)
/* LoRA (Hu et al. 2021): rank-r adapters A (k x r) and B (r x n) beside
 * each linear layer that targets names, k its input and n its output
 * width, r (k + n) parameters each; the router, the norms and the
 * embeddings take none.  The sum of k + n over a layer of kind moe's
 * adapted linears, as its mean make-up weighs them: outside the routed
 * experts into *dense, over all routed experts into *routed. */
void model_lora_widths(const struct model_spec *model, int moe, unsigned targets, double *dense,
		       double *routed);
/* The whole model's LoRA adapter parameters at rank r. */
double model_lora_params(const struct model_spec *model, int r, unsigned targets);
/* The targets of a set that name a linear this model has (the rest
 * adapt nothing here: linear_qkv in multi-latent attention, in_proj
 * without a mixer). */
unsigned model_lora_present(const struct model_spec *model, unsigned targets);
double model_params_layer(const struct model_spec *model);      /* attention + MLP */
double model_params_embedding(const struct model_spec *model); /* one h x V */
double model_params_positions(const struct model_spec *model); /* pos_embedding x h */
double model_params_total(const struct model_spec *model);
double model_params_active(const struct model_spec *model);      /* per token */
/* Active without the input embedding (a lookup, not a product), as
 * OpenAI and DeepSeek count activated parameters; tied tables stay. */
double model_params_active_compute(const struct model_spec *model);

/* Multi-token-prediction layers a pipeline layout counts as layers
 * (Megatron-Core's `m`, placed with the loss after the model's own):
 * priced as n more layers of the model's kind, added to model->layers; note
 * receives "N multi-token-prediction layer(s) (m) priced as ..." for the
 * caller to prefix.  A hybrid stack (whose layer kinds the layout does
 * not name) and a count past MODEL_MAX_COUNT are PPLAN_EINPUT. */
enum pplan_status model_add_mtp_layers(struct model_spec *model, int n, char *note, size_t len,
				       struct perr *err);

/* Checks sizes are positive and consistent; a sentence names the field. */
enum pplan_status model_check(const struct model_spec *model, const char *where,
			      struct perr *err);

/* The zoo. */
const struct model_spec *model_zoo(int *n);
const struct model_spec *model_find(const char *name);
/* The zoo model a source's name means ("Llama-3.1-405B", "Meta-Llama-3-8B",
 * "Mixtral-8x7B-v0.1", "GPT-3 175B"): punctuation, case, a hub
 * organisation and -hf/-base/-instruct/-chat/version tails ignored; a
 * name without its size ("StarCoder", "BloombergGPT") or its active size
 * ("Qwen3-235B") means the zoo's one model of that name, none where the
 * zoo has several sizes ("Llama-3"); a name with a size the zoo's omits
 * ("DeepSeek-V3-671B", "Llama-4-Scout-17B-16E") the entry it fits; and a
 * few aliases ("Nemotron-15B" for Nemotron-4 15B, Llama 3.3 70B). */
const struct model_spec *model_find_loose(const char *name);

/* Reads a pplan.model/1 JSON file or a Hugging Face config.json. */
enum pplan_status model_load(const char *path, struct model_spec *model,
			     struct perr *err);

/* A zoo name (as model_find_loose reads it) or a file path. */
enum pplan_status model_resolve(const char *name_or_file, struct model_spec *model,
				struct perr *err);

#endif
