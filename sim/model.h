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

enum mlp_kind {
	MLP_GELU = 0,      /* 2 matrices */
	MLP_SQUARED_RELU,  /* 2 matrices */
	MLP_SWIGLU,        /* 3 matrices (gated) */
	MLP_GEGLU,         /* 3 matrices (gated) */
};

enum norm_kind { NORM_LAYERNORM = 0, NORM_RMSNORM };

const char *mlp_kind_name(enum mlp_kind k);
int mlp_kind_parse(const char *s, enum mlp_kind *out);
int mlp_is_gated(enum mlp_kind k);

struct model_spec {
	char name[64];
	int layers;
	long hidden;        /* h */
	long ffn;           /* MLP intermediate size (per expert for MoE) */
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
	int num_experts;    /* 0 = dense */
	int top_k;          /* experts per token */
};

/* What a model file may say (README "Limits"): counts (layers, heads,
 * key/value heads, experts, top_k) up to MODEL_MAX_COUNT, sizes (hidden,
 * ffn, head_dim, vocab, seq) up to MODEL_MAX_DIM.  Readers refuse a value
 * beyond them with the file, the key and the bound; the cost and memory
 * model then computes in double and 64 bits without overflow. */
#define MODEL_MAX_COUNT (1L << 20)
#define MODEL_MAX_DIM (1L << 24)

/* Parameter counts (exact for the architecture; biases and norms counted). */
double model_params_attn_layer(const struct model_spec *m);
double model_params_mlp_layer(const struct model_spec *m);   /* all experts */
double model_params_layer(const struct model_spec *m);
double model_params_embedding(const struct model_spec *m);   /* one h x V */
double model_params_positions(const struct model_spec *m);   /* pos_embedding x h */
double model_params_total(const struct model_spec *m);
double model_params_active(const struct model_spec *m);      /* per token */

/* Checks sizes are positive and consistent; a sentence names the field. */
enum pplan_status model_check(const struct model_spec *m, const char *where,
			      struct perr *e);

/* The zoo. */
const struct model_spec *model_zoo(int *n);
const struct model_spec *model_find(const char *name);
/* The zoo model whose total parameter count is nearest to params. */
const struct model_spec *model_nearest(double params);

/* Reads a pplan.model/1 JSON file or a Hugging Face config.json. */
enum pplan_status model_load(const char *path, struct model_spec *m,
			     struct perr *e);

/* A zoo name or a file path. */
enum pplan_status model_resolve(const char *name_or_file, struct model_spec *m,
				struct perr *e);

/* Parses "70B", "405b", "1.5T", "350M", "7e9" into a parameter count. */
int parse_count(const char *s, double *out);

#endif
