/*
 * model_load.c: the two model file formats.  pplan.model/1 files (strict:
 * unknown keys are errors; sim/MODEL.md section 2.1 lists the keys) and,
 * through model_hf.c, Hugging Face config.json files read as they are.
 * The JSON readers both use are here.  Every error names the file and the
 * key.
 */
#include "model.h"

#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"
#include "suggest.h"
#include "model_internal.h"

/* ---- Reading files ----------------------------------------------------------- */

int mj_in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

enum pplan_status mj_dropout(const cJSON *obj, const char *const *keys, int *found,
			     int *any_on, const char *where, struct perr *e)
{
	*found = *any_on = 0;
	for (; *keys; keys++) {
		double p = 0;
		enum pplan_status st = json_get_number(obj, *keys, &p, where, e);
		if (st == PPLAN_ENOTFOUND)
			continue;
		if (st != PPLAN_OK)
			return st;
		if (!(p >= 0 && p < 1))
			return perr_set(e, PPLAN_EINPUT,
					"%s: %s must be a probability at least 0 and below 1, got %g",
					where, *keys, p);
		*found = 1;
		if (p > 0)
			*any_on = 1;
	}
	return PPLAN_OK;
}

enum pplan_status mj_positions(const cJSON *obj, const char *where, struct model_spec *m,
			       struct perr *e)
{
	static const char *const k_theta[] = {"rope_theta", "rotary_emb_base", NULL};
	static const char *const k_percent[] = {"rope_percent", "partial_rotary_factor",
						"rotary_pct", NULL};
	static const char *const k_eps[] = {"norm_eps", "rms_norm_eps", "layer_norm_eps",
					    "layer_norm_epsilon", "norm_epsilon", NULL};
	static const char *const k_factor[] = {"factor", NULL};
	static const char *const k_type[] = {"type", "rope_type", NULL};
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(obj, "rope_scaling");
	enum pplan_status st;

	TRY(json_optional(json_get_first_number(obj, k_theta, 1.0, 1e12, "", &m->rope_theta, where, e)));
	TRY(json_optional(json_get_first_number(obj, k_percent, 0.0, 1.0, "", &m->rope_percent, where, e)));
	TRY(json_optional(json_get_first_number(obj, k_eps, 0.0, 0.1, "", &m->norm_eps, where, e)));
	st = json_get_bool(obj, "alibi", &m->alibi, where, e);
	if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
		return st;
	if (cJSON_IsObject(sc)) {
		char w[700];
		const char *type = NULL;
		snprintf(w, sizeof w, "%s: rope_scaling", where);
		for (int i = 0; k_type[i] && !type; i++) {
			st = json_get_string(sc, k_type[i], &type, w, e);
			if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
				return st;
		}
		if (type && strlen(type) < sizeof m->rope_scaling && strcmp(type, "default") != 0)
			snprintf(m->rope_scaling, sizeof m->rope_scaling, "%s", type);
		TRY(json_optional(json_get_first_number(sc, k_factor, 0.0, 1e6, "", &m->rope_factor, w, e)));
	} else if (sc && !cJSON_IsNull(sc)) {
		return perr_set(e, PPLAN_EINPUT, "%s: rope_scaling must be an object or null", where);
	}
	return PPLAN_OK;
}

static const char *const pplan_allowed[] = {
	"schema", "name", "description", "source", "num_layers",
	"hidden_size", "ffn_hidden_size", "num_attention_heads",
	"num_kv_heads", "head_dim", "vocab_size", "seq_length", "mlp", "norm",
	"tie_word_embeddings", "linear_bias", "moe", "mla", "pos_embedding", "qkv_bias",
	"qk_norm", "dropout", "rope_theta", "rope_percent", "rope_scaling", "norm_eps",
	"alibi", "sliding_window", "window_layers", NULL};
static const char *const moe_allowed[] = {
	"num_experts", "top_k", "ffn_hidden_size", "shared_experts", "shared_ffn_hidden_size",
	"dense_layers", "layer_freq", "route_groups", "route_topk_groups", NULL};
static const char *const mla_allowed[] = {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
					  "qk_nope_head_dim", "v_head_dim", NULL};

static enum pplan_status only_known_keys(const cJSON *obj,
					 const char *const *allowed,
					 const char *where, struct perr *e)
{
	const cJSON *it;
	char dym[96];
	cJSON_ArrayForEach(it, obj)
		if (!mj_in_list(it->string, allowed))
			return perr_set(e, PPLAN_EINPUT,
					"%s: %s is not a pplan.model/1 key%s",
					where, it->string ? it->string : "?",
					suggest_phrase(dym, sizeof dym,
						       suggest_list(it->string, allowed)));
	return PPLAN_OK;
}

static enum pplan_status need_bool(const cJSON *obj, const char *key, int *out,
				   const char *where, struct perr *e)
{
	enum pplan_status st = json_get_bool(obj, key, out, where, e);
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where,
				key);
	return st;
}

static enum pplan_status need_string(const cJSON *obj, const char *key,
				     const char **out, const char *where,
				     struct perr *e)
{
	enum pplan_status st = json_get_string(obj, key, out, where, e);
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where,
				key);
	return st;
}

/* An optional object member: NULL when absent or null. */
static enum pplan_status opt_object(const cJSON *root, const char *key,
				    const char *const *allowed, const cJSON **out,
				    char *where, size_t n, const char *path, struct perr *e)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);

	*out = NULL;
	if (!o || cJSON_IsNull(o))
		return PPLAN_OK;
	if (!cJSON_IsObject(o))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be an object or null", path, key);
	snprintf(where, n, "%s: %s", path, key);
	*out = o;
	return only_known_keys(o, allowed, where, e);
}

/* route_groups and route_topk_groups, both or neither: g of G groups
 * (g = G is no limit); model_check_keys judges the rest. */
static enum pplan_status load_route_groups(const cJSON *moe, const char *where,
					   struct model_spec *m, struct perr *e)
{
	long groups = 0, top = 0;
	TRY(json_optional(json_get_long_in(moe, "route_groups", 1, MAX_COUNT, &groups, where, e)));
	TRY(json_optional(json_get_long_in(moe, "route_topk_groups", 1, MAX_COUNT, &top, where, e)));
	if ((groups == 0) != (top == 0))
		return perr_set(e, PPLAN_EINPUT,
				"%s: route_groups and route_topk_groups go together (group-limited routing)",
				where);
	if (groups == 0 || top == groups)
		return PPLAN_OK;
	m->route_groups = (int)groups;
	m->route_topk_groups = (int)top;
	return PPLAN_OK;
}

/* moe: {num_experts, top_k} and, for fine-grained and shared-expert
 * MoE, the expert width, the shared experts and the leading dense layers. */
static enum pplan_status load_pplan_moe(const cJSON *moe, const char *where,
					struct model_spec *m, struct perr *e)
{
	long v = 0;

	TRY(json_required(json_get_long_in(moe, "num_experts", 1, MAX_COUNT, &v, where, e), "num_experts", where, e));
	m->num_experts = (int)v;
	TRY(json_required(json_get_long_in(moe, "top_k", 1, MAX_COUNT, &v, where, e), "top_k", where, e));
	m->top_k = (int)v;
	TRY(json_optional(json_get_long_in(moe, "ffn_hidden_size", 1, MAX_DIM, &m->moe_ffn, where, e)));
	v = 0;
	TRY(json_optional(json_get_long_in(moe, "shared_experts", 0, MAX_COUNT, &v, where, e)));
	m->shared_experts = (int)v;
	TRY(json_optional(json_get_long_in(moe, "shared_ffn_hidden_size", 1, MAX_DIM, &m->shared_ffn, where, e)));
	v = 0;
	TRY(json_optional(json_get_long_in(moe, "dense_layers", 0, MAX_COUNT, &v, where, e)));
	m->dense_layers = (int)v;
	v = 0;
	TRY(json_optional(json_get_long_in(moe, "layer_freq", 1, MAX_COUNT, &v, where, e)));
	m->moe_every = (int)v;
	return load_route_groups(moe, where, m, e);
}

/* mla: DeepSeek's multi-head latent attention (q_lora_rank optional). */
static enum pplan_status load_pplan_mla(const cJSON *mla, const char *where,
					struct model_spec *m, struct perr *e)
{
	TRY(json_required(json_get_long_in(mla, "kv_lora_rank", 1, MAX_DIM, &m->kv_lora_rank, where, e), "kv_lora_rank", where, e));
	TRY(json_optional(json_get_long_in(mla, "q_lora_rank", 1, MAX_DIM, &m->q_lora_rank, where, e)));
	TRY(json_required(json_get_long_in(mla, "qk_rope_head_dim", 1, MAX_DIM, &m->qk_rope_dim, where, e), "qk_rope_head_dim", where, e));
	TRY(json_required(json_get_long_in(mla, "qk_nope_head_dim", 1, MAX_DIM, &m->qk_nope_dim, where, e), "qk_nope_head_dim", where, e));
	TRY(json_required(json_get_long_in(mla, "v_head_dim", 1, MAX_DIM, &m->v_head_dim, where, e), "v_head_dim", where, e));
	if (m->head_dim == 0)
		m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
	return PPLAN_OK;
}

/* pplan.model/1: every key named, unknown keys rejected (a typo would
 * otherwise fall back to a default silently). */
static enum pplan_status load_pplan(const cJSON *root, const char *path,
				    struct model_spec *m, struct perr *e)
{
	const char *name, *s;
	long v;

	TRY(only_known_keys(root, pplan_allowed, path, e));
	if (json_get_string(root, "description", &s, path, e) == PPLAN_EINPUT ||
	    json_get_string(root, "source", &s, path, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	TRY(need_string(root, "name", &name, path, e));
	if (strlen(name) >= sizeof m->name)
		return perr_set(e, PPLAN_EINPUT,
				"%s: name must be at most %zu characters",
				path, sizeof m->name - 1);
	strcpy(m->name, name);
	TRY(json_required(json_get_long_in(root, "num_layers", 1, MAX_COUNT, &v, path, e), "num_layers", path, e));
	m->layers = (int)v;
	TRY(json_required(json_get_long_in(root, "hidden_size", 1, MAX_DIM, &m->hidden, path, e), "hidden_size", path, e));
	TRY(json_required(json_get_long_in(root, "ffn_hidden_size", 1, MAX_DIM, &m->ffn, path, e), "ffn_hidden_size", path, e));
	TRY(json_required(json_get_long_in(root, "num_attention_heads", 1, MAX_COUNT, &v, path, e), "num_attention_heads", path, e));
	m->heads = m->kv_heads = (int)v;
	if (json_get_long_in(root, "num_kv_heads", 1, MAX_COUNT, &v, path, e) ==
	    PPLAN_EINPUT)
		return PPLAN_EINPUT;
	m->kv_heads = (int)v; /* v still holds the heads when absent */
	if (json_get_long_in(root, "head_dim", 1, MAX_DIM, &m->head_dim, path, e) ==
	    PPLAN_EINPUT)
		return PPLAN_EINPUT;
	TRY(json_required(json_get_long_in(root, "vocab_size", 1, MAX_DIM, &m->vocab, path, e), "vocab_size", path, e));
	TRY(json_required(json_get_long_in(root, "seq_length", 1, MAX_DIM, &m->seq, path, e), "seq_length", path, e));
	TRY(need_string(root, "mlp", &s, path, e));
	if (mlp_kind_parse(s, &m->mlp) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: mlp must be gelu, squared_relu, swiglu, "
				"geglu or relu, got '%s'", path, s);
	TRY(need_string(root, "norm", &s, path, e));
	if (model_name_eq(s, "layernorm"))
		m->norm = NORM_LAYERNORM;
	else if (model_name_eq(s, "rmsnorm"))
		m->norm = NORM_RMSNORM;
	else
		return perr_set(e, PPLAN_EINPUT,
				"%s: norm must be layernorm or rmsnorm, got "
				"'%s'", path, s);
	TRY(need_bool(root, "tie_word_embeddings", &m->tied_embeddings, path,
		      e));
	TRY(need_bool(root, "linear_bias", &m->linear_bias, path, e));

	TRY(json_optional(json_get_long_in(root, "pos_embedding", 1, MAX_DIM, &m->pos_embedding, path, e)));
	TRY(json_optional(json_get_bool(root, "qkv_bias", &m->qkv_bias, path, e)));
	TRY(json_optional(json_get_bool(root, "qk_norm", &m->qk_norm, path, e)));
	TRY(json_optional(json_get_long_in(root, "sliding_window", 1, MAX_DIM, &m->sliding_window, path, e)));
	{
		long wl = m->sliding_window > 0 ? m->layers : 0;
		TRY(json_optional(json_get_long_in(root, "window_layers", 0, m->layers, &wl, path, e)));
		if (wl > 0 && m->sliding_window <= 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s: window_layers needs sliding_window (the window in tokens)",
					path);
		m->window_layers = (int)wl;
	}
	TRY(mj_positions(root, path, m, e));
	{
		/* Megatron-LM's default (hidden and attention dropout 0.1)
		 * when the file does not say. */
		static const char *const k_drop[] = {"dropout", NULL};
		int found, on;
		TRY(mj_dropout(root, k_drop, &found, &on, path, e));
		m->no_dropout = found && !on;
	}
	{
		char where[600];
		const cJSON *o;
		TRY(opt_object(root, "moe", moe_allowed, &o, where, sizeof where, path, e));
		if (o)
			TRY(load_pplan_moe(o, where, m, e));
		TRY(opt_object(root, "mla", mla_allowed, &o, where, sizeof where, path, e));
		if (o)
			TRY(load_pplan_mla(o, where, m, e));
	}
	return model_check_keys(m, path, &model_pplan_keys, e);
}

enum pplan_status model_load(const char *path, struct model_spec *m,
			     struct perr *e)
{
	struct model_spec tmp;
	cJSON *root = NULL;
	const char *schema = NULL;
	enum pplan_status st;

	assert(path && m);
	memset(&tmp, 0, sizeof tmp);
	st = json_read_limited(path, JSON_MAX_BYTES_MODEL, "a model file", &root, e);
	if (st != PPLAN_OK)
		return st;
	if (!cJSON_IsObject(root)) {
		st = perr_set(e, PPLAN_EINPUT, "%s: expected a JSON object",
			      path);
		goto out;
	}
	st = json_get_string(root, "schema", &schema, path, e);
	if (st == PPLAN_OK) {
		if (strcmp(schema, "pplan.model/1") == 0)
			st = load_pplan(root, path, &tmp, e);
		else
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: schema '%s' is not pplan.model/1",
				      path, schema);
	} else if (st == PPLAN_ENOTFOUND) {
		if (cJSON_HasObjectItem(root, "hidden_size") ||
		    cJSON_HasObjectItem(root, "n_embd") ||
		    cJSON_HasObjectItem(root, "n_embed") ||
		    cJSON_HasObjectItem(root, "model_type"))
			st = model_load_hf(root, path, &tmp, e);
		else
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: neither a pplan.model/1 file (no "
				      "schema key) nor a Hugging Face "
				      "config.json (no hidden_size or "
				      "model_type key)", path);
	}
	if (st == PPLAN_OK) {
		if (tmp.head_dim == 0) /* checked: heads divide hidden */
			tmp.head_dim = tmp.hidden / tmp.heads;
		*m = tmp;
	}
out:
	cJSON_Delete(root);
	return st;
}

enum pplan_status model_resolve(const char *name_or_file, struct model_spec *m,
				struct perr *e)
{
	const struct model_spec *z;
	size_t n;

	if (!name_or_file || !name_or_file[0])
		return perr_set(e, PPLAN_EINPUT, "model name is empty");
	z = model_find(name_or_file);
	if (z) {
		*m = *z;
		return PPLAN_OK;
	}
	n = strlen(name_or_file);
	if (strchr(name_or_file, '/') ||
	    (n > 5 && model_name_eq(name_or_file + n - 5, ".json")))
		return model_load(name_or_file, m, e);
	/* "Meta-Llama-3-8B", "StarCoder": the header names the entry taken */
	z = model_find_loose(name_or_file);
	if (z) {
		*m = *z;
		return PPLAN_OK;
	}
	{
		int nz;
		const struct model_spec *zoo = model_zoo(&nz);
		char dym[96];
		return perr_set(e, PPLAN_EINPUT,
				"unknown model '%s'%s: neither a zoo name nor a .json file",
				name_or_file,
				suggest_phrase(dym, sizeof dym,
					       suggest_table(name_or_file, zoo, (size_t)nz,
							     sizeof *zoo, 1)));
	}
}

