/*
 * model_load.c: the two model file formats.  pplan.model/1 files (strict:
 * unknown keys are errors) and Hugging Face config.json files read as they
 * are (hidden_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads, intermediate_size, vocab_size,
 * max_position_embeddings, hidden_act, tie_word_embeddings, and the GPT-2 /
 * BLOOM spellings).  Every error names the file and the key.
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

/* Reads the first of keys[] (NULL-terminated) that obj has, as a whole
 * number in [min, max].  *used names the key found (or keys[0]). */
static enum pplan_status get_first(const cJSON *obj, const char *const *keys,
				   long min, long max, long *out,
				   const char **used, const char *where,
				   struct perr *e)
{
	*used = keys[0];
	for (; *keys; keys++) {
		enum pplan_status st =
			json_get_long(obj, *keys, out, min, where, e);
		if (st == PPLAN_ENOTFOUND)
			continue;
		*used = *keys;
		if (st == PPLAN_OK && *out > max)
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: %s must be at most %ld, got %ld",
				      where, *keys, max, *out);
		return st;
	}
	return PPLAN_ENOTFOUND;
}

/* As get_first for one key; *out untouched when it is absent. */
static enum pplan_status opt_long(const cJSON *obj, const char *key, long min,
				  long max, long *out, const char *where,
				  struct perr *e)
{
	const char *keys[] = {key, NULL}, *used;
	long v;
	enum pplan_status st =
		get_first(obj, keys, min, max, &v, &used, where, e);
	if (st == PPLAN_OK)
		*out = v;
	return st;
}

/* As get_first for keys of which one must be present. */
static enum pplan_status need_first(const cJSON *obj, const char *const *keys,
				    long min, long max, long *out,
				    const char **used, const char *where,
				    struct perr *e)
{
	enum pplan_status st =
		get_first(obj, keys, min, max, out, used, where, e);
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where,
				keys[0]);
	return st;
}

static enum pplan_status need_long(const cJSON *obj, const char *key,
				   long min, long max, long *out,
				   const char *where, struct perr *e)
{
	const char *keys[] = {key, NULL}, *used;
	return need_first(obj, keys, min, max, out, &used, where, e);
}

static int in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static const char *const pplan_allowed[] = {
	"schema", "name", "description", "source", "num_layers",
	"hidden_size", "ffn_hidden_size", "num_attention_heads",
	"num_kv_heads", "head_dim", "vocab_size", "seq_length", "mlp", "norm",
	"tie_word_embeddings", "linear_bias", "moe", NULL};
static const char *const moe_allowed[] = {"num_experts", "top_k", NULL};

static enum pplan_status only_known_keys(const cJSON *obj,
					 const char *const *allowed,
					 const char *where, struct perr *e)
{
	const cJSON *it;
	char dym[96];
	cJSON_ArrayForEach(it, obj)
		if (!in_list(it->string, allowed))
			return perr_set(e, PPLAN_EINPUT,
					"%s: %s is not a pplan.model/1 key%s",
					where, it->string ? it->string : "?",
					suggest_phrase(dym, sizeof dym,
						       suggest_list(it->string, allowed)));
	return PPLAN_OK;
}

#define TRY(expr)                               \
	do {                                    \
		enum pplan_status st_ = (expr); \
		if (st_ != PPLAN_OK)            \
			return st_;             \
	} while (0)

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

/* pplan.model/1: every key named, unknown keys rejected (a typo would
 * otherwise fall back to a default silently). */
static enum pplan_status load_pplan(const cJSON *root, const char *path,
				    struct model_spec *m, struct perr *e)
{
	const char *name, *s;
	const cJSON *moe;
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
	TRY(need_long(root, "num_layers", 1, MAX_COUNT, &v, path, e));
	m->layers = (int)v;
	TRY(need_long(root, "hidden_size", 1, MAX_DIM, &m->hidden, path, e));
	TRY(need_long(root, "ffn_hidden_size", 1, MAX_DIM, &m->ffn, path, e));
	TRY(need_long(root, "num_attention_heads", 1, MAX_COUNT, &v, path, e));
	m->heads = m->kv_heads = (int)v;
	if (opt_long(root, "num_kv_heads", 1, MAX_COUNT, &v, path, e) ==
	    PPLAN_EINPUT)
		return PPLAN_EINPUT;
	m->kv_heads = (int)v; /* v still holds the heads when absent */
	if (opt_long(root, "head_dim", 1, MAX_DIM, &m->head_dim, path, e) ==
	    PPLAN_EINPUT)
		return PPLAN_EINPUT;
	TRY(need_long(root, "vocab_size", 1, MAX_DIM, &m->vocab, path, e));
	TRY(need_long(root, "seq_length", 1, MAX_DIM, &m->seq, path, e));
	TRY(need_string(root, "mlp", &s, path, e));
	if (mlp_kind_parse(s, &m->mlp) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: mlp must be gelu, squared_relu, swiglu or "
				"geglu, got '%s'", path, s);
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

	moe = cJSON_GetObjectItemCaseSensitive(root, "moe");
	if (moe && !cJSON_IsNull(moe)) {
		char where[600];
		if (!cJSON_IsObject(moe))
			return perr_set(e, PPLAN_EINPUT,
					"%s: moe must be an object or null",
					path);
		snprintf(where, sizeof where, "%s: moe", path);
		TRY(only_known_keys(moe, moe_allowed, where, e));
		TRY(need_long(moe, "num_experts", 1, MAX_COUNT, &v, where, e));
		m->num_experts = (int)v;
		TRY(need_long(moe, "top_k", 1, MAX_COUNT, &v, where, e));
		m->top_k = (int)v;
	}
	return model_check_keys(m, path, &model_pplan_keys, e);
}

/* Hugging Face model_type families whose config class defaults differ
 * from PretrainedConfig's (tie_word_embeddings = true) or that carry GPT
 * biases; a config's explicit keys always win. */
static const char *const hf_untied[] = {"llama", "mistral", "mixtral",
					"qwen2", "qwen3", "nemotron", "phi3",
					NULL};
static const char *const hf_gpt_style[] = {"gpt2", "bloom", "gpt_neo",
					   "gpt_neox", "gptj", "gpt_bigcode",
					   "opt", NULL};
static const char *const hf_gelu_gated[] = {"gemma", "gemma2", "gemma3",
					    "gemma3_text", NULL};
static const char *const hf_rmsnorm[] = {"llama", "mistral", "mixtral",
					 "qwen2", "qwen3", "phi3", "gemma",
					 "gemma2", "gemma3", "gemma3_text",
					 NULL};

/* hidden_act -> MLP kind.  silu/swish in a Hugging Face config means the
 * LLaMA-style gated MLP (llama, mistral, mixtral, qwen2, ...); gelu* is
 * gated only in Gemma; relu2 is Nemotron's squared ReLU. */
static enum pplan_status hf_mlp(const cJSON *root, const char *type,
				enum mlp_kind *out, const char *path,
				struct perr *e)
{
	static const char *const keys[] = {"hidden_act", "hidden_activation",
					   "activation_function", NULL};
	const char *act = NULL, *key = keys[0];

	for (int i = 0; keys[i] && !act; i++) {
		enum pplan_status st =
			json_get_string(root, keys[i], &act, path, e);
		if (st == PPLAN_EINPUT)
			return st;
		if (st == PPLAN_OK)
			key = keys[i];
	}
	if (!act) { /* the config class default */
		if (in_list(type, hf_gpt_style))
			act = "gelu";
		else if (in_list(type, hf_untied))
			act = "silu";
		else if (in_list(type, hf_gelu_gated))
			act = "gelu_pytorch_tanh";
		else
			return perr_set(e, PPLAN_EINPUT, "%s: hidden_act is missing",
					path);
	}
	if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
		*out = MLP_SWIGLU;
	else if (strncmp(act, "gelu", 4) == 0)
		*out = in_list(type, hf_gelu_gated) ? MLP_GEGLU : MLP_GELU;
	else if (strcmp(act, "relu2") == 0)
		*out = MLP_SQUARED_RELU;
	else
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s '%s' is not supported (silu, swish, "
				"gelu*, relu2)", path, key, act);
	return PPLAN_OK;
}

/* The name: _name_or_path, else the file name without .json, else (for
 * .../NAME/config.json) the folder's name. */
static void hf_name(const cJSON *root, const char *path, char *out, size_t n)
{
	const char *s = NULL, *base = strrchr(path, '/');
	size_t len;

	if (json_get_string(root, "_name_or_path", &s, path, NULL) ==
		    PPLAN_OK && s[0]) {
		snprintf(out, n, "%s", s);
		return;
	}
	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	if (len == 6 && strncmp(base, "config", 6) == 0 && base != path) {
		const char *dir_end = base - 1, *dir = dir_end;
		while (dir > path && dir[-1] != '/')
			dir--;
		if (dir < dir_end) {
			base = dir;
			len = (size_t)(dir_end - dir);
		}
	}
	snprintf(out, n, "%.*s", (int)len, base);
}

static enum pplan_status load_hf(const cJSON *root, const char *path,
				 struct model_spec *m, struct perr *e)
{
	static const char *const k_hidden[] = {"hidden_size", "n_embd",
					       "n_embed", NULL};
	static const char *const k_layers[] = {"num_hidden_layers", "n_layer",
					       NULL};
	static const char *const k_heads[] = {"num_attention_heads", "n_head",
					      NULL};
	static const char *const k_ffn[] = {"intermediate_size", "n_inner",
					    NULL};
	static const char *const k_seq[] = {"max_position_embeddings",
					    "n_positions", "seq_length", NULL};
	static const char *const k_moe[] = {"n_routed_experts",
					    "moe_intermediate_size",
					    "n_shared_experts", NULL};
	struct keynames k = {NULL, NULL, NULL, NULL, "num_key_value_heads",
			     "head_dim", "vocab_size", NULL,
			     "num_local_experts", "num_experts_per_tok"};
	const char *type = NULL;
	const cJSON *rope;
	enum pplan_status st;
	long v;

	for (int i = 0; k_moe[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(root, k_moe[i]))
			return perr_set(e, PPLAN_EINPUT,
					"%s: %s: fine-grained or shared-expert "
					"MoE is not modelled", path, k_moe[i]);
	if (json_get_string(root, "model_type", &type, path, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	hf_name(root, path, m->name, sizeof m->name);

	TRY(need_first(root, k_hidden, 1, MAX_DIM, &m->hidden, &k.hidden, path,
		       e));
	TRY(need_first(root, k_layers, 1, MAX_COUNT, &v, &k.layers, path, e));
	m->layers = (int)v;
	TRY(need_first(root, k_heads, 1, MAX_COUNT, &v, &k.heads, path, e));
	m->heads = (int)v;
	if (opt_long(root, "num_key_value_heads", 1, MAX_COUNT, &v, path, e) ==
		    PPLAN_EINPUT ||
	    opt_long(root, "head_dim", 1, MAX_DIM, &m->head_dim, path, e) ==
		    PPLAN_EINPUT)
		return PPLAN_EINPUT;
	m->kv_heads = (int)v; /* v still holds the heads when absent */

	/* GPT-2/BLOOM leave the MLP at 4h (n_inner null or absent). */
	st = get_first(root, k_ffn, 1, MAX_DIM, &m->ffn, &k.ffn, path, e);
	if (st == PPLAN_ENOTFOUND) {
		if (!in_list(type, hf_gpt_style) &&
		    strcmp(k.hidden, "hidden_size") == 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s: intermediate_size is missing",
					path);
		m->ffn = 4 * m->hidden;
		k.ffn = "n_inner";
	} else {
		TRY(st);
	}
	TRY(need_long(root, "vocab_size", 1, MAX_DIM, &m->vocab, path, e));

	/* Training length: the pre-extension length when rope_scaling states
	 * it (Llama 3.1: 8192 of 131072), else the position limit, capped at
	 * 8192 (long-context limits are not pretraining lengths); 2048 when
	 * the config has none (BLOOM's ALiBi). */
	m->seq = 2048;
	k.seq = "max_position_embeddings";
	rope = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
	st = PPLAN_ENOTFOUND;
	if (cJSON_IsObject(rope)) {
		char where[600];
		snprintf(where, sizeof where, "%s: rope_scaling", path);
		st = json_get_long(rope, "original_max_position_embeddings",
				   &m->seq, 1, where, e);
		if (st == PPLAN_EINPUT)
			return st;
	}
	if (st == PPLAN_ENOTFOUND) {
		st = get_first(root, k_seq, 1, LONG_MAX, &m->seq, &k.seq, path,
			       e);
		if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
			return st;
	}
	if (m->seq > 8192)
		m->seq = 8192;

	TRY(hf_mlp(root, type, &m->mlp, path, e));
	/* RMSNorm configs name rms_norm_eps; LayerNorm ones layer_norm_eps,
	 * layer_norm_epsilon or (Nemotron's layernorm1p) norm_eps. */
	m->norm = cJSON_HasObjectItem(root, "rms_norm_eps") ||
			  in_list(type, hf_rmsnorm)
		  ? NORM_RMSNORM
		  : NORM_LAYERNORM;

	m->tied_embeddings = !in_list(type, hf_untied);
	st = json_get_bool(root, "tie_word_embeddings", &m->tied_embeddings,
			   path, e);
	if (st == PPLAN_EINPUT)
		return st;
	m->linear_bias = in_list(type, hf_gpt_style);
	{
		int ab = 0, mb = 0;
		enum pplan_status sa = json_get_bool(root, "attention_bias",
						     &ab, path, e);
		enum pplan_status sm = json_get_bool(root, "mlp_bias", &mb,
						     path, e);
		if (sa == PPLAN_EINPUT || sm == PPLAN_EINPUT)
			return PPLAN_EINPUT;
		if (sa == PPLAN_OK || sm == PPLAN_OK)
			m->linear_bias = ab || mb;
	}

	st = opt_long(root, "num_local_experts", 1, MAX_COUNT, &v, path, e);
	if (st == PPLAN_OK) {
		m->num_experts = (int)v;
		TRY(need_long(root, "num_experts_per_tok", 1, MAX_COUNT, &v,
			      path, e));
		m->top_k = (int)v;
	} else if (st != PPLAN_ENOTFOUND) {
		return st;
	}
	return model_check_keys(m, path, &k, e);
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
			st = load_hf(root, path, &tmp, e);
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
	{
		int nz;
		const struct model_spec *zoo = model_zoo(&nz);
		char dym[96];
		return perr_set(e, PPLAN_EINPUT,
				"unknown model '%s'%s (see pplan search --list-models)",
				name_or_file,
				suggest_phrase(dym, sizeof dym,
					       suggest_table(name_or_file, zoo, (size_t)nz,
							     sizeof *zoo, 1)));
	}
}

