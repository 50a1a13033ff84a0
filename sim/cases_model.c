/*
 * cases_model.c: a case's model (pplan.cases/1, validation/README.md):
 * its Hugging Face config.json keys (hf_config) or the flat keys, with
 * the MoE block, completed from the zoo model of the same MLP kind
 * nearest in size, and its parameter count checked against the case's
 * params_billion.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cases_internal.h"
#include "jsonio.h"
#include "model_internal.h" /* mj_dropout, as pplan.model/1 reads it */

struct arch {
	long layers, hidden, ffn, heads, kv, vocab, seq, head_dim;
	int have_l, have_h, have_f, have_a, have_g, have_v, have_d, have_s;
	double params_billion;
};

/* A flat key or its other names (Hugging Face's, Megatron's), the first
 * the object has. */
static int opt_long_any(const cJSON *o, const char *const *keys, long min, long max, long *v,
			const char *where, enum pplan_status *st, struct perr *e)
{
	for (int i = 0; keys[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(o, keys[i]) &&
		    vcase_opt_long(o, keys[i], min, max, v, where, st, e))
			return 1;
	return 0;
}

static const char *const K_LAYERS[] = { "num_layers", "num_hidden_layers", "n_layers", "n_layer", NULL };
static const char *const K_HIDDEN[] = { "hidden_size", "d_model", "n_embd", NULL };
static const char *const K_FFN[] = { "ffn_hidden_size", "intermediate_size", "ffn_dim", NULL };
static const char *const K_HEADS[] = { "num_attention_heads", "n_heads", "n_head", NULL };
static const char *const K_KV[] = { "num_kv_heads", "num_key_value_heads", "num_query_groups",
				   "n_kv_heads", NULL };
static const char *const K_VOCAB[] = { "vocab_size", "padded_vocab_size", NULL };
static const char *const K_SEQ[] = { "seq_length", "seq_len", "sequence_length", NULL };
static const char *const K_EXPERTS[] = { "num_experts", "num_local_experts", "n_routed_experts",
					"num_moe_experts", NULL };
static const char *const K_TOPK[] = { "top_k", "num_experts_per_tok", "moe_router_topk",
				     "experts_per_token", NULL };

static enum pplan_status read_arch(const cJSON *jm, struct arch *a, const char *where,
				   struct perr *e)
{
	enum pplan_status st = PPLAN_OK;
	char w[300];
	const long C = MODEL_MAX_COUNT, D = MODEL_MAX_DIM;

	snprintf(w, sizeof w, "%s: model", where);
	memset(a, 0, sizeof *a);
	a->have_l = opt_long_any(jm, K_LAYERS, 1, C, &a->layers, w, &st, e);
	a->have_h = opt_long_any(jm, K_HIDDEN, 1, D, &a->hidden, w, &st, e);
	a->have_f = opt_long_any(jm, K_FFN, 1, D, &a->ffn, w, &st, e);
	a->have_a = opt_long_any(jm, K_HEADS, 1, C, &a->heads, w, &st, e);
	a->have_g = opt_long_any(jm, K_KV, 1, C, &a->kv, w, &st, e);
	a->have_v = opt_long_any(jm, K_VOCAB, 1, D, &a->vocab, w, &st, e);
	a->have_d = vcase_opt_long(jm, "head_dim", 1, D, &a->head_dim, w, &st, e);
	a->have_s = opt_long_any(jm, K_SEQ, 1, D, &a->seq, w, &st, e);
	if (!a->have_s)
		a->seq = 2048; /* said where it is taken */
	if (st != PPLAN_OK)
		return st;
	if (json_get_number(jm, "params_billion", &a->params_billion, w, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	return PPLAN_OK;
}

/* Fills what the source left out from the nearest zoo model of the same
 * MLP kind (and MoE or not). */
static enum pplan_status fill_from_zoo(struct model_spec *m, struct arch *a,
				       int moe, const struct model_spec *named,
				       struct vcase *vc, const char *where, struct perr *e)
{
	const struct model_spec *best = NULL;
	int nz;
	const struct model_spec *zoo = model_zoo(&nz);
	double target = a->params_billion > 0 ? a->params_billion * 1e9 : 0;

	/* the zoo model the case names, where the keys it gives agree */
	if (named && named->mlp == m->mlp && (named->num_experts > 1) == moe &&
	    (!a->have_h || named->hidden == a->hidden))
		best = named;
	if (!best && !(target > 0) && !a->have_h)
		return perr_set(e, PPLAN_EINPUT,
				"%s: the model's architecture is incomplete: give its dimensions (or hf_config), params_billion, or a zoo model's name",
				where);
	for (int i = 0; i < nz && !(named && best == named); i++) {
		if (zoo[i].mlp != m->mlp || (zoo[i].num_experts > 1) != moe)
			continue;
		if (a->have_h && zoo[i].hidden != a->hidden)
			continue;
		if (!best || fabs(model_params_total(&zoo[i]) - target) <
			     fabs(model_params_total(best) - target))
			best = &zoo[i];
	}
	if (!best)
		return perr_set(e, PPLAN_EINPUT,
				"%s: the model's architecture is incomplete and no zoo model matches it",
				where);
	if (!a->have_l) { a->layers = best->layers; vcase_note(vc, "num_layers=%ld (zoo %s)", a->layers, best->name); }
	if (!a->have_h) { a->hidden = best->hidden; vcase_note(vc, "hidden_size=%ld (zoo %s)", a->hidden, best->name); }
	if (!a->have_a) { a->heads = best->heads; vcase_note(vc, "heads=%ld (zoo %s)", a->heads, best->name); }
	if (!a->have_g && !a->have_a) { a->kv = best->kv_heads; a->have_g = 1; vcase_note(vc, "kv_heads=%ld (zoo %s)", a->kv, best->name); }
	if (!a->have_v) { a->vocab = best->vocab; vcase_note(vc, "vocab_size=%ld (zoo %s)", a->vocab, best->name); }
	if (!a->have_f) { a->ffn = best->ffn; a->have_f = 1; vcase_note(vc, "ffn_hidden_size=%ld (zoo %s)", a->ffn, best->name); }
	m->norm = best->norm;
	m->tied_embeddings = best->tied_embeddings;
	m->linear_bias = best->linear_bias;
	m->pos_embedding = best->pos_embedding;
	return PPLAN_OK;
}

/* The moe object: experts, top-k, the routed and shared experts' widths,
 * the leading dense layers (first_k_dense_replace) and the MoE stride. */
static enum pplan_status load_moe(const cJSON *moe, struct model_spec *m,
				  const char *where, struct perr *e)
{
	long ne = 0, k = 0, v;
	enum pplan_status st = PPLAN_OK;
	const long C = MODEL_MAX_COUNT, D = MODEL_MAX_DIM;
	char w[300];

	static const char *const k_effn[] = { "moe_ffn_hidden_size", "moe_intermediate_size", NULL };
	static const char *const k_shared[] = { "shared_experts", "n_shared_experts", NULL };
	static const char *const k_sffn[] = { "shared_expert_ffn_hidden_size",
					      "moe_shared_expert_intermediate_size",
					      "shared_expert_intermediate_size", NULL };
	static const char *const k_dense[] = { "dense_layers", "first_k_dense_replace", NULL };
	static const char *const k_every[] = { "moe_every", "moe_layer_freq", "decoder_sparse_step",
					       "interleave_moe_layer_step", NULL };

	snprintf(w, sizeof w, "%s: model.moe", where);
	opt_long_any(moe, K_EXPERTS, 1, C, &ne, w, &st, e);
	opt_long_any(moe, K_TOPK, 1, C, &k, w, &st, e);
	if (opt_long_any(moe, k_effn, 1, D, &v, w, &st, e))
		m->moe_ffn = v;
	if (opt_long_any(moe, k_shared, 0, C, &v, w, &st, e))
		m->shared_experts = (int)v;
	if (opt_long_any(moe, k_sffn, 1, D, &v, w, &st, e))
		m->shared_ffn = v;
	if (opt_long_any(moe, k_dense, 0, C, &v, w, &st, e))
		m->dense_layers = (int)v;
	if (opt_long_any(moe, k_every, 1, C, &v, w, &st, e))
		m->moe_every = (int)v;
	if (st != PPLAN_OK)
		return st;
	if (k > 0 && ne < 2)
		return perr_set(e, PPLAN_EINPUT, "%s: top_k %ld needs num_experts (2 or more)",
				w, k);
	m->num_experts = (int)ne;
	m->top_k = (int)k;
	return PPLAN_OK;
}

/* The architecture from the case's hf_config object, read as pplan reads
 * a Hugging Face config.json; the case's seq_length stays the run's. */
static enum pplan_status load_hf_model(const cJSON *hf, struct vcase *vc,
				       const struct arch *a, const char *where,
				       struct perr *e)
{
	char w[300];
	long seq = vc->model.seq;
	snprintf(w, sizeof w, "%s: model.hf_config", where);
	if (model_load_hf(hf, w, &vc->model, e) != PPLAN_OK)
		return PPLAN_EINPUT;
	vc->model.seq = a->seq > 0 ? a->seq : seq;
	{
		long mtp = 0;
		enum pplan_status st = PPLAN_OK;
		vcase_opt_long(hf, "num_nextn_predict_layers", 0, 64, &mtp, w, &st, e);
		if (st != PPLAN_OK)
			return st;
		vc->mtp_layers = (int)mtp;
	}
	return PPLAN_OK;
}

/* A model that computes to other than the case's params_billion is said
 * (past 5 %): a dropped key prices a different model. */
static void check_params(struct vcase *vc, double params_billion)
{
	double got = model_params_total(&vc->model) / 1e9;
	if (!(params_billion > 0) || fabs(got / params_billion - 1.0) <= 0.05)
		return;
	snprintf(vc->warning, sizeof vc->warning,
		 "the architecture computes to %.2f B parameters, the case says %.2f B (%+.0f %%)",
		 got, params_billion, 100.0 * (got / params_billion - 1.0));
}

static enum pplan_status load_flat_model(const cJSON *jm, struct vcase *vc,
					 struct arch *ap, const struct model_spec *named,
					 const char *where, struct perr *e);
static enum pplan_status load_dropout(const cJSON *jm, struct model_spec *m,
				      const char *where, struct perr *e);

/* Does the case give any of the architecture's flat keys? */
static int arch_given(const cJSON *jm, const struct arch *a)
{
	for (int i = 0; K_EXPERTS[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(jm, K_EXPERTS[i]))
			return 1;
	return a->have_l || a->have_h || a->have_f || a->have_a || a->have_g || a->have_v ||
	       a->have_d || cJSON_GetObjectItemCaseSensitive(jm, "moe") ||
	       cJSON_GetObjectItemCaseSensitive(jm, "mlp") ||
	       cJSON_GetObjectItemCaseSensitive(jm, "hidden_act");
}

/* The model: an hf_config object (a config.json's keys) or the flat keys;
 * the run's seq_length, dropout and name; the parameter count checked. */
/* A readable plain file (not a device or a pipe, which could block). */
static int regular_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, R_OK) == 0;
}

/* hf_config as a string: the file it names, beside the cases file or
 * from the working directory, read as `--model FILE` reads it; else the
 * zoo model it names. */
static enum pplan_status load_model_reference(const char *ref, const char *cases_path,
					      struct vcase *vc, const char *where,
					      struct perr *e)
{
	char file[1024];
	const char *slash = cases_path ? strrchr(cases_path, '/') : NULL;
	const struct model_spec *z;
	struct perr me = { "" };

	if (ref[0] != '/' && slash && !regular_file(ref))
		snprintf(file, sizeof file, "%.*s/%s", (int)(slash - cases_path), cases_path, ref);
	else
		snprintf(file, sizeof file, "%s", ref);
	if (regular_file(file)) {
		if (model_load(file, &vc->model, &me) != PPLAN_OK)
			return perr_set(e, PPLAN_EINPUT, "%s: model.hf_config: %s", where, me.msg);
		vcase_note(vc, "model from %s", file);
		return PPLAN_OK;
	}
	if ((z = model_find_loose(ref)) != NULL) {
		vc->model = *z;
		vcase_note(vc, "model %s (zoo, by the name hf_config gives)", z->name);
		return PPLAN_OK;
	}
	return perr_set(e, PPLAN_EINPUT,
			"%s: model.hf_config '%s' is neither a readable file (looked for %s) nor a zoo model",
			where, ref, file);
}

enum pplan_status vcase_load_model(const cJSON *jm, struct vcase *vc, const char *cases_path,
				   const char *where, struct perr *e)
{
	struct model_spec *m = &vc->model;
	const char *s = NULL, *name = NULL;
	const struct model_spec *named;
	struct arch a;
	const cJSON *hf = cJSON_GetObjectItemCaseSensitive(jm, "hf_config");
	enum pplan_status st;

	memset(m, 0, sizeof *m);
	m->mlp = MLP_GELU;
	if (json_get_string(jm, "mlp", &s, where, e) == PPLAN_OK &&
	    mlp_kind_parse(s, &m->mlp) != 0)
		return perr_set(e, PPLAN_EINPUT, "%s: model.mlp '%s' is unknown",
				where, s);
	if (!s && json_get_string(jm, "hidden_act", &s, where, NULL) == PPLAN_OK && s) {
		/* a config's activation beside the flat keys, or pplan's name */
		if (mlp_kind_parse(s, &m->mlp) != 0 && mj_mlp_of_act(s, 0, &m->mlp) != 0)
			return perr_set(e, PPLAN_EINPUT, "%s: model.hidden_act '%s' is unknown",
					where, s);
		s = NULL;
	}
	if ((st = read_arch(jm, &a, where, e)) != PPLAN_OK)
		return st;
	if (json_get_string(jm, "name", &name, where, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	named = name ? model_find_loose(name) : NULL;
	if (!hf || cJSON_IsNull(hf))
		hf = cJSON_GetObjectItemCaseSensitive(jm, "config_file");
	if (cJSON_IsString(hf) && hf->valuestring) {
		/* a reference: a config.json (or pplan.model/1) file beside the
		 * cases file or from here, else a zoo model's name */
		if ((st = load_model_reference(hf->valuestring, cases_path, vc, where, e)) != PPLAN_OK)
			return st;
		if (a.have_s)
			m->seq = a.seq;
		else
			vcase_note(vc, "seq_length=%ld (the model's)", m->seq);
		a.have_s = 1;
	} else if (hf && !cJSON_IsNull(hf)) {
		if (!cJSON_IsObject(hf))
			return perr_set(e, PPLAN_EINPUT, "%s: model.hf_config must be an object or a file name",
					where);
		if ((st = load_hf_model(hf, vc, &a, where, e)) != PPLAN_OK)
			return st;
	} else if (named && !arch_given(jm, &a)) {
		/* a name and nothing else: the zoo model it names, whole */
		*m = *named;
		if (!a.have_s)
			a.seq = named->seq;
		m->seq = a.seq;
		vcase_note(vc, "model %s (zoo, by its name)", named->name);
		if (!a.have_s)
			vcase_note(vc, "seq_length=%ld (zoo %s)", a.seq, named->name);
		a.have_s = 1;
	} else {
		if (named && !cJSON_GetObjectItemCaseSensitive(jm, "mlp") &&
		    !cJSON_GetObjectItemCaseSensitive(jm, "hidden_act"))
			m->mlp = named->mlp; /* the named model's, not GELU's */
		if ((st = load_flat_model(jm, vc, &a, named, where, e)) != PPLAN_OK)
			return st;
	}
	if (!a.have_s)
		vcase_note(vc, "seq_length=2048");
	if (name)
		snprintf(m->name, sizeof m->name, "%s", name);
	if ((st = load_dropout(jm, m, where, e)) != PPLAN_OK)
		return st;
	if ((st = model_check(m, where, e)) != PPLAN_OK)
		return st;
	check_params(vc, a.params_billion);
	return PPLAN_OK;
}

/* The architecture from the flat keys, completed from the zoo. */
static enum pplan_status load_flat_model(const cJSON *jm, struct vcase *vc,
					 struct arch *ap, const struct model_spec *named,
					 const char *where, struct perr *e)
{
	struct model_spec *m = &vc->model;
	const cJSON *moe = cJSON_GetObjectItemCaseSensitive(jm, "moe");
	int is_moe = cJSON_IsObject(moe);
	struct arch a = *ap;
	enum pplan_status st;
	long experts = 0;

	if (!is_moe) { /* the MoE keys beside the others, as a config has them */
		enum pplan_status est = PPLAN_OK;
		if (opt_long_any(jm, K_EXPERTS, 1, MODEL_MAX_COUNT, &experts, where, &est, e) &&
		    experts > 1) {
			moe = jm;
			is_moe = 1;
		}
		if (est != PPLAN_OK)
			return est;
	}
	if (!a.have_l || !a.have_h || !a.have_a || !a.have_v ||
	    (!a.have_f && mlp_is_gated(m->mlp))) {
		if ((st = fill_from_zoo(m, &a, is_moe, named, vc, where, e)) != PPLAN_OK)
			return st;
	} else {
		m->norm = (m->mlp == MLP_SWIGLU) ? NORM_RMSNORM : NORM_LAYERNORM;
		m->tied_embeddings = m->mlp == MLP_GELU;
		m->linear_bias = m->mlp == MLP_GELU;
	}
	if (!a.have_f) {
		a.ffn = 4 * a.hidden;
		vcase_note(vc, "ffn_hidden_size=4h=%ld", a.ffn);
	}
	if (!a.have_g)
		a.kv = a.heads;
	snprintf(m->name, sizeof m->name, "%s", vc->id);
	m->layers = (int)a.layers;
	m->hidden = a.hidden;
	m->ffn = a.ffn;
	m->heads = (int)a.heads;
	m->kv_heads = (int)a.kv;
	m->head_dim = a.heads > 0 ? a.hidden / a.heads : 0;
	m->vocab = a.vocab;
	m->seq = a.seq;
	if (a.have_d)
		m->head_dim = a.head_dim;
	if (is_moe && (st = load_moe(moe, m, where, e)) != PPLAN_OK)
		return st;
	*ap = a;
	return PPLAN_OK;
}

/* The run's dropout probability when the source gives it; else the
 * family's custom: GPT-style GeLU and ReLU models kept Megatron-LM's 0.1,
 * gated and squared-ReLU (Llama, Mistral, Nemotron) models train without.
 * A zoo model matched for its dimensions says nothing about the run's
 * dropout. */
static enum pplan_status load_dropout(const cJSON *jm, struct model_spec *m,
				      const char *where, struct perr *e)
{
	static const char *const k_drop[] = {"dropout", NULL};
	int found, on;
	char w[300];
	snprintf(w, sizeof w, "%s: model", where);
	if (mj_dropout(jm, k_drop, &found, &on, w, e) != PPLAN_OK)
		return PPLAN_EINPUT;
	m->no_dropout = found ? !on : mlp_is_gated(m->mlp) || m->mlp == MLP_SQUARED_RELU;
	return PPLAN_OK;
}
