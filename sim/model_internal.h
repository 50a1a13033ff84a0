/*
 * model_internal.h: what model.c shares with model_load.c only: the key
 * names used in messages, the consistency check that names them, and the
 * bounds on sizes.  Not part of the model API.
 */
#ifndef PPLAN_MODEL_INTERNAL_H
#define PPLAN_MODEL_INTERNAL_H

#include <cjson/cJSON.h>

#include "model.h"

#define MAX_COUNT MODEL_MAX_COUNT /* layers, heads, experts */
#define MAX_DIM MODEL_MAX_DIM     /* hidden, ffn, vocab, seq, head_dim */

/* The key names a message uses: pplan.model/1's, or the ones a Hugging
 * Face config actually had. */
struct keynames {
	const char *layers, *hidden, *ffn, *heads, *kv_heads, *head_dim, *vocab,
		*seq, *experts, *top_k, *dense_layers, *kv_lora_rank, *route_groups,
		*route_topk_groups;
};

extern const struct keynames model_pplan_keys;

/* The model readers' early return: a status other than PPLAN_OK ends
 * the calling function with it. */
#define TRY(expr)                               \
	do {                                    \
		enum pplan_status st_ = (expr); \
		if (st_ != PPLAN_OK)            \
			return st_;             \
	} while (0)

/* model_check with the key names keys uses in its messages. */
enum pplan_status model_check_keys(const struct model_spec *model,
				   const char *where, const struct keynames *keys,
				   struct perr *err);

/* Whether s is one of list[] (NULL-terminated). */
int mj_in_list(const char *s, const char *const *list);
/* A config's hidden_act as an MLP kind: silu/swish the gated SwiGLU,
 * gelu* GeLU (GeGLU where gelu_gated, Gemma's), relu2 squared ReLU, relu
 * ReLU; -1 for another. */
int mj_mlp_of_act(const char *act, int gelu_gated, enum mlp_kind *out);
/* The dropout probabilities among keys[] (NULL-terminated) that obj has,
 * each a number in [0, 1): *found says whether any was there, *any_on
 * whether any is above 0.  Also read by cases.c for a case's model. */
enum pplan_status mj_dropout(const cJSON *obj, const char *const *keys, int *found,
			     int *any_on, const char *where, struct perr *err);

/* Positions and the norms' epsilon, as both formats name them:
 * rope_theta (HF also rotary_emb_base), rope_percent (HF
 * partial_rotary_factor, rotary_pct), rope_scaling { type or rope_type,
 * factor }, norm_eps (HF rms_norm_eps, layer_norm_eps,
 * layer_norm_epsilon, norm_epsilon), alibi. */
enum pplan_status mj_positions(const cJSON *obj, const char *where, struct model_spec *model,
			       struct perr *err);

/* A Hugging Face config.json (model_hf.c). */
enum pplan_status model_load_hf(const cJSON *root, const char *path,
				struct model_spec *model, struct perr *err);

/* Case-insensitive string equality. */
int model_name_eq(const char *a, const char *b);

#endif
