/*
 * model_hf.c: Hugging Face config.json files read as they are.
 *
 * The keys of the families a user downloads, by meaning:
 *   width      hidden_size, n_embd, n_embed, d_model
 *   layers     num_hidden_layers, n_layer, num_layers
 *   heads      num_attention_heads, n_head
 *   kv heads   num_key_value_heads, num_kv_heads, n_head_kv; multi_query
 *              true means one (Falcon)
 *   MLP width  intermediate_size, n_inner, ffn_dim (OPT), ffn_hidden_size;
 *              4h where the family leaves it out (GPT-2, BLOOM, Falcon)
 *   MoE        num_local_experts (Mixtral, GPT-OSS), n_routed_experts and
 *              n_shared_experts, first_k_dense_replace, moe_layer_freq,
 *              n_group and topk_group (DeepSeek; the last two its
 *              group-limited routing), num_experts, shared_expert_intermediate_size and
 *              decoder_sparse_step (Qwen-MoE); experts per token
 *              num_experts_per_tok or experts_per_token; the expert width
 *              moe_intermediate_size where it differs from the dense one
 *   MLA        q_lora_rank, kv_lora_rank, qk_rope_head_dim,
 *              qk_nope_head_dim, v_head_dim (DeepSeek-V2/V3)
 *   length     rope_scaling.original_max_position_embeddings, then
 *              original_max_position_embeddings (Phi-3), then
 *              initial_context_length (GPT-OSS), then the position limit,
 *              capped at 8192 (long-context limits are not pretraining
 *              lengths); 2048 when there is none (BLOOM's ALiBi)
 *   biases     GPT-style families everywhere; attention_bias, mlp_bias,
 *              bias (Falcon), enable_bias (OPT); Qwen2's Q, K, V biases
 *   positions  learned tables for GPT-2 (n_positions), GPT-Neo, StarCoder
 *              and OPT (max_position_embeddings + 2: OPT's offset)
 *   norms      RMSNorm where rms_norm_eps is given or the family has it;
 *              one norm per layer for Falcon's parallel attention before
 *              new_decoder_architecture; Q/K norms for Qwen3 and Gemma 3
 * A multimodal config's language model sits under text_config: that is
 * read (and said, in the spec's note).  Every error names the file and
 * the key.
 */
#include "model_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "jsonio.h"

/* The longest sequence pplan takes as a pretraining length. */
#define HF_MAX_SEQ 8192
#define HF_DEFAULT_SEQ 2048
/* OPT's position table has two rows before the first position. */
#define OPT_POSITION_OFFSET 2

/* model_type families whose config class defaults differ from
 * PretrainedConfig's (tie_word_embeddings = true) or that carry a fact
 * the keys do not state; a config's explicit keys always win. */
static const char *const hf_untied[] = {
	"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
	"nemotron", "phi3", "deepseek_v2", "deepseek_v3", "gpt_oss", "qwen3_next",
	"qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "llama4", "llama4_text",
	"glm4_moe", NULL};
static const char *const hf_gpt_style[] = {"gpt2", "bloom", "gpt_neo", "gpt_neox",
					   "gptj", "gpt_bigcode", "opt", NULL};
static const char *const hf_learned_pos[] = {"gpt2", "gpt_neo", "gpt_bigcode", NULL};
static const char *const hf_gelu_gated[] = {"gemma", "gemma2", "gemma3", "gemma3_text",
					    NULL};
static const char *const hf_rmsnorm[] = {
	"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3",
	"gemma", "gemma2", "gemma3", "gemma3_text", "deepseek_v2", "deepseek_v3",
	"gpt_oss", "nemotron_h", "qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
	"qwen3_5_moe_text", "llama4", "llama4_text", "glm4_moe", NULL};
static const char *const hf_qkv_bias[] = {"qwen2", "qwen2_moe", NULL};
static const char *const hf_qk_norm[] = {"qwen3", "qwen3_moe", "gemma3", "gemma3_text",
					 "qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
					 "qwen3_5_moe_text", NULL};
/* Gated DeltaNet hybrids: every full_attention_interval-th layer
 * attention, the rest Gated DeltaNet, attention's output gated. */
static const char *const hf_gdn[] = {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
				     "qwen3_5_moe_text", NULL};
static const char *const hf_falcon[] = {"falcon", "RefinedWeb", "RefinedWebModel", NULL};

int mj_mlp_of_act(const char *act, int gelu_gated, enum mlp_kind *out)
{
	if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
		*out = MLP_SWIGLU;
	else if (strncmp(act, "gelu", 4) == 0)
		*out = gelu_gated ? MLP_GEGLU : MLP_GELU;
	else if (strcmp(act, "relu2") == 0)
		*out = MLP_SQUARED_RELU;
	else if (strcmp(act, "relu") == 0)
		*out = MLP_RELU;
	else
		return -1;
	return 0;
}

/* hidden_act -> MLP kind.  silu/swish means the LLaMA-style gated MLP;
 * gelu* is gated only in Gemma; relu2 is Nemotron's squared ReLU, relu
 * OPT's. */
static enum pplan_status hf_mlp(const cJSON *root, const char *type,
				enum mlp_kind *out, const char *path, struct perr *e)
{
	static const char *const keys[] = {"hidden_act", "hidden_activation",
					   "activation_function", "mlp_hidden_act", NULL};
	const char *act = NULL, *key = keys[0];

	for (int i = 0; keys[i] && !act; i++) {
		enum pplan_status st = json_get_string(root, keys[i], &act, path, e);
		if (st == PPLAN_EINPUT)
			return st;
		if (st == PPLAN_OK)
			key = keys[i];
	}
	if (!act) { /* the config class default */
		if (mj_in_list(type, hf_gpt_style) || mj_in_list(type, hf_falcon))
			act = "gelu";
		else if (mj_in_list(type, hf_untied))
			act = "silu";
		else if (mj_in_list(type, hf_gelu_gated))
			act = "gelu_pytorch_tanh";
		else
			return perr_set(e, PPLAN_EINPUT, "%s: hidden_act is missing", path);
	}
	if (mj_mlp_of_act(act, mj_in_list(type, hf_gelu_gated), out) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s '%s' is not supported (silu, swish, gelu*, relu, relu2)",
				path, key, act);
	return PPLAN_OK;
}

/* The name: _name_or_path, else the file name without .json, else (for
 * .../NAME/config.json) the folder's name. */
static void hf_name(const cJSON *root, const char *path, char *out, size_t n)
{
	const char *s = NULL, *base = strrchr(path, '/');
	size_t len;

	if (json_get_string(root, "_name_or_path", &s, path, NULL) == PPLAN_OK && s[0]) {
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

static enum pplan_status read_shape(const cJSON *c, const char *type, struct model_spec *m,
				    struct keynames *k, const char *path, struct perr *e)
{
	static const char *const k_hidden[] = {"hidden_size", "n_embd", "n_embed", "d_model",
					       NULL};
	static const char *const k_layers[] = {"num_hidden_layers", "n_layer", "num_layers",
					       NULL};
	static const char *const k_heads[] = {"num_attention_heads", "n_head", NULL};
	static const char *const k_kv[] = {"num_key_value_heads", "num_kv_heads", "n_head_kv",
					   NULL};
	static const char *const k_ffn[] = {"intermediate_size", "n_inner", "ffn_dim",
					    "ffn_hidden_size", NULL};
	long v;
	int mq = 0;
	enum pplan_status st;

	TRY(json_required(json_get_first_long(c, k_hidden, 1, MAX_DIM, &m->hidden, &k->hidden, path, e), k_hidden[0], path, e));
	TRY(json_required(json_get_first_long(c, k_layers, 1, MAX_COUNT, &v, &k->layers, path, e), k_layers[0], path, e));
	m->layers = (int)v;
	TRY(json_required(json_get_first_long(c, k_heads, 1, MAX_COUNT, &v, &k->heads, path, e), k_heads[0], path, e));
	m->heads = m->kv_heads = (int)v;
	st = json_get_first_long(c, k_kv, 1, MAX_COUNT, &v, &k->kv_heads, path, e);
	if (st == PPLAN_OK)
		m->kv_heads = (int)v;
	else if (st != PPLAN_ENOTFOUND)
		return st;
	TRY(json_optional(json_get_bool(c, "multi_query", &mq, path, e)));
	if (st == PPLAN_ENOTFOUND && mq)
		m->kv_heads = 1;
	TRY(json_optional(json_get_long_in(c, "head_dim", 1, MAX_DIM, &m->head_dim, path, e)));
	st = json_get_first_long(c, k_ffn, 1, MAX_DIM, &m->ffn, &k->ffn, path, e);
	if (st == PPLAN_ENOTFOUND) {
		if (!mj_in_list(type, hf_gpt_style) && !mj_in_list(type, hf_falcon) &&
		    strcmp(k->hidden, "hidden_size") == 0)
			return perr_set(e, PPLAN_EINPUT, "%s: intermediate_size is missing", path);
		m->ffn = 4 * m->hidden;
		k->ffn = "n_inner";
	} else {
		TRY(st);
	}
	return PPLAN_OK;
}

static enum pplan_status read_length(const cJSON *c, struct model_spec *m,
				     struct keynames *k, const char *path, struct perr *e)
{
	static const char *const k_seq[] = {"original_max_position_embeddings",
					    "initial_context_length", "max_position_embeddings",
					    "n_positions", "seq_length", NULL};
	const cJSON *rope = cJSON_GetObjectItemCaseSensitive(c, "rope_scaling");
	enum pplan_status st = PPLAN_ENOTFOUND;

	m->seq = HF_DEFAULT_SEQ;
	k->seq = "max_position_embeddings";
	if (cJSON_IsObject(rope)) {
		char where[600];
		snprintf(where, sizeof where, "%s: rope_scaling", path);
		st = json_get_long(rope, "original_max_position_embeddings", &m->seq, 1, where, e);
		if (st == PPLAN_EINPUT)
			return st;
	}
	if (st == PPLAN_ENOTFOUND) {
		st = json_get_first_long(c, k_seq, 1, LONG_MAX, &m->seq, &k->seq, path, e);
		if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
			return st;
	}
	if (m->seq > HF_MAX_SEQ)
		m->seq = HF_MAX_SEQ;
	return PPLAN_OK;
}

/* Norms, biases, tied tables and learned positions. */
static enum pplan_status read_layers(const cJSON *c, const char *type, struct model_spec *m,
				     const char *path, struct perr *e)
{
	int parallel = 0, new_arch = 0, bias = 0;
	long pos = 0;

	TRY(hf_mlp(c, type, &m->mlp, path, e));
	m->norm = cJSON_HasObjectItem(c, "rms_norm_eps") || mj_in_list(type, hf_rmsnorm)
			  ? NORM_RMSNORM
			  : NORM_LAYERNORM;
	m->tied_embeddings = !mj_in_list(type, hf_untied);
	TRY(json_optional(json_get_bool(c, "tie_word_embeddings", &m->tied_embeddings, path, e)));
	m->linear_bias = mj_in_list(type, hf_gpt_style);
	TRY(json_optional(json_get_bool(c, "enable_bias", &m->linear_bias, path, e))); /* OPT */
	m->qkv_bias = mj_in_list(type, hf_qkv_bias);
	m->qk_norm = mj_in_list(type, hf_qk_norm);
	{
		/* The training dropout: every family's own keys; a config
		 * naming none trains without (transformers' defaults are 0). */
		static const char *const k_drop[] = {
			"hidden_dropout", "hidden_dropout_prob", "attention_dropout",
			"attention_probs_dropout_prob", "resid_pdrop", "embd_pdrop", "attn_pdrop",
			"emb_pdrop", "dropout", "activation_dropout", NULL};
		int found, on;
		TRY(mj_dropout(c, k_drop, &found, &on, path, e));
		m->no_dropout = !on;
	}
	TRY(json_optional(json_get_bool(c, "attention_bias", &m->attn_bias, path, e)));
	TRY(json_optional(json_get_bool(c, "mlp_bias", &m->mlp_bias, path, e)));
	if (m->attn_bias || m->mlp_bias)
		m->linear_bias = 0; /* the explicit keys say where the biases are */
	if (strcmp(type, "glm4_moe") == 0) {
		/* GLM-4.5: attention_bias is on Q, K and V, not the output;
		 * use_qk_norm names its Q/K norms */
		m->qkv_bias = m->qkv_bias || m->attn_bias;
		m->attn_bias = 0;
		TRY(json_optional(json_get_bool(c, "use_qk_norm", &m->qk_norm, path, e)));
	}
	if (mj_in_list(type, hf_falcon)) {
		TRY(json_optional(json_get_bool(c, "bias", &bias, path, e)));
		TRY(json_optional(json_get_bool(c, "parallel_attn", &parallel, path, e)));
		TRY(json_optional(json_get_bool(c, "new_decoder_architecture", &new_arch, path, e)));
		m->linear_bias = bias;
		if (parallel && !new_arch)
			m->norms_per_layer = 1;
		m->parallel_block = parallel || new_arch;
	}
	if (strcmp(type, "gptj") == 0)
		m->parallel_block = 1;
	if (strcmp(type, "gpt_neox") == 0) { /* its config class's default: parallel */
		int par = 1;
		TRY(json_optional(json_get_bool(c, "use_parallel_residual", &par, path, e)));
		m->parallel_block = par;
	}
	TRY(mj_positions(c, path, m, e));
	if (strcmp(type, "bloom") == 0)
		m->alibi = 1;
	if (mj_in_list(type, hf_learned_pos)) {
		static const char *const k_pos[] = {"n_positions", "max_position_embeddings",
						    NULL};
		const char *used;
		if (json_get_first_long(c, k_pos, 1, MAX_DIM, &pos, &used, path, e) == PPLAN_EINPUT)
			return PPLAN_EINPUT;
		m->pos_embedding = pos;
	} else if (strcmp(type, "opt") == 0) {
		long proj = 0;
		TRY(json_optional(json_get_long_in(c, "max_position_embeddings", 1, MAX_DIM, &pos, path, e)));
		m->pos_embedding = pos > 0 ? pos + OPT_POSITION_OFFSET : 0;
		TRY(json_optional(json_get_long_in(c, "word_embed_proj_dim", 1, MAX_DIM, &proj, path, e)));
		if (proj && proj != m->hidden)
			return perr_set(e, PPLAN_EINPUT,
					"%s: word_embed_proj_dim %ld differs from hidden_size %ld: OPT's embedding projection is not modelled",
					path, proj, m->hidden);
	}
	return PPLAN_OK;
}

/* DeepSeek's group-limited routing: n_group groups of experts, a token's
 * experts within topk_group of them (0 or 1 group, or all of them: no
 * limit); model_check_keys judges the rest. */
static enum pplan_status read_route_groups(const cJSON *c, struct model_spec *m, const char *path,
					   struct perr *e)
{
	long groups = 0, top = 0;
	TRY(json_optional(json_get_long_in(c, "n_group", 0, MAX_COUNT, &groups, path, e)));
	TRY(json_optional(json_get_long_in(c, "topk_group", 0, MAX_COUNT, &top, path, e)));
	if (groups <= 1 || top == 0 || top >= groups)
		return PPLAN_OK;
	m->route_groups = (int)groups;
	m->route_topk_groups = (int)top;
	return PPLAN_OK;
}

/* The router: scoring_func (DeepSeek; Nemotron-H's and GLM-4.5's are
 * sigmoid with a score-correction bias, unnamed), topk_method noaux_tc (the expert
 * bias), norm_topk_prob false with softmax (scores over every expert,
 * not renormalised), routed_scaling_factor. */
static enum pplan_status read_router(const cJSON *c, const char *type, struct model_spec *m,
				     const char *path, struct perr *e)
{
	const char *s = NULL;
	int norm = 1;
	double scale = 0;
	if (strcmp(type, "nemotron_h") == 0 || strcmp(type, "glm4_moe") == 0)
		m->router_sigmoid = m->router_expert_bias = 1;
	if (json_get_string(c, "scoring_func", &s, path, NULL) == PPLAN_OK && s)
		m->router_sigmoid = strcmp(s, "sigmoid") == 0;
	s = NULL;
	if (json_get_string(c, "topk_method", &s, path, NULL) == PPLAN_OK && s)
		m->router_expert_bias = strcmp(s, "noaux_tc") == 0;
	TRY(json_optional(json_get_bool(c, "norm_topk_prob", &norm, path, e)));
	m->router_pre_softmax = !m->router_sigmoid && !norm;
	TRY(json_optional(json_get_number_in(c, "routed_scaling_factor", 0, 1e6, "", &scale, path, e)));
	m->router_scale = scale != 1.0 ? scale : 0;
	return PPLAN_OK;
}

/* Llama 4 (transformers' Llama4TextMoe): intermediate_size is an
 * expert's width and the width of the one shared expert every MoE layer
 * adds to its routed one, without a gate; intermediate_size_mlp the
 * dense layers' MLP; every interleave_moe_layer_step-th layer is MoE
 * (Maverick 2: 24 of 48, Scout 1: all; a moe_layers list must say the
 * same); the router scores with a sigmoid.  The chunked attention of
 * three layers in four (attention_chunk_size 8192) is priced as full
 * causal attention: the same below 8192 tokens. */
static enum pplan_status read_llama4_moe(const cJSON *c, struct model_spec *m,
					 const char *path, struct perr *e)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(c, "moe_layers");
	long dense_ffn = 0, step = 1;
	TRY(json_optional(json_get_long_in(c, "intermediate_size_mlp", 1, MAX_DIM, &dense_ffn, path, e)));
	TRY(json_optional(json_get_long_in(c, "interleave_moe_layer_step", 1, MAX_COUNT, &step, path, e)));
	if (m->moe_ffn <= 0)
		m->moe_ffn = m->ffn;
	if (dense_ffn > 0)
		m->ffn = dense_ffn;
	if (m->shared_experts < 1) {
		m->shared_experts = 1;
		m->shared_ffn = m->moe_ffn;
	}
	if (m->moe_every <= 1)
		m->moe_every = (int)step;
	if (cJSON_IsArray(list)) { /* newer configs also list them */
		const cJSON *it;
		int n = 0;
		cJSON_ArrayForEach(it, list) {
			if (!cJSON_IsNumber(it) || it->valuedouble != (double)((n + 1) * step - 1))
				return perr_set(e, PPLAN_EINPUT,
						"%s: moe_layers: MoE layers at chosen places are not modelled, only every interleave_moe_layer_step-th (%ld)",
						path, step);
			n++;
		}
		if (n != m->layers / step)
			return perr_set(e, PPLAN_EINPUT,
					"%s: moe_layers lists %d layers, interleave_moe_layer_step %ld makes %ld of %ld",
					path, n, step, m->layers / step, (long)m->layers);
	}
	m->router_sigmoid = 1;
	return PPLAN_OK;
}

static enum pplan_status read_moe(const cJSON *c, const char *type, struct model_spec *m,
				  struct keynames *k, const char *path, struct perr *e)
{
	static const char *const k_experts[] = {"num_local_experts", "n_routed_experts",
						"num_experts", NULL};
	static const char *const k_top[] = {"num_experts_per_tok", "experts_per_token",
					    "moe_top_k", NULL};
	const cJSON *dense_list = cJSON_GetObjectItemCaseSensitive(c, "mlp_only_layers");
	long v = 0, shared_ffn = 0;
	enum pplan_status st = json_get_first_long(c, k_experts, 0, MAX_COUNT, &v, &k->experts, path, e);

	if (st == PPLAN_ENOTFOUND || (st == PPLAN_OK && v == 0))
		return PPLAN_OK;
	TRY(st);
	m->num_experts = (int)v;
	TRY(json_required(json_get_first_long(c, k_top, 1, MAX_COUNT, &v, &k->top_k, path, e), k_top[0], path, e));
	m->top_k = (int)v;
	TRY(json_optional(json_get_long_in(c, "moe_intermediate_size", 1, MAX_DIM, &m->moe_ffn, path, e)));
	TRY(json_optional(json_get_long_in(c, "n_shared_experts", 0, MAX_COUNT, &v, path, e)));
	m->shared_experts = cJSON_HasObjectItem(c, "n_shared_experts") ? (int)v : 0;
	TRY(json_optional(json_get_long_in(c, "shared_expert_intermediate_size", 0, MAX_DIM, &shared_ffn, path, e)));
	if (shared_ffn > 0) { /* Qwen2-MoE: one gated shared expert */
		m->shared_experts = 1;
		m->shared_ffn = shared_ffn;
		m->shared_gate = 1;
	}
	shared_ffn = 0; /* Nemotron-H: n_shared_experts of this width, no gate */
	TRY(json_optional(json_get_long_in(c, "moe_shared_expert_intermediate_size", 0, MAX_DIM, &shared_ffn, path, e)));
	if (shared_ffn > 0) {
		if (m->shared_experts < 1)
			m->shared_experts = 1;
		m->shared_ffn = shared_ffn / m->shared_experts;
	}
	TRY(read_route_groups(c, m, path, e));
	TRY(read_router(c, type, m, path, e));
	v = 0;
	TRY(json_optional(json_get_long_in(c, "first_k_dense_replace", 0, MAX_COUNT, &v, path, e)));
	m->dense_layers = (int)v;
	v = 0;
	TRY(json_optional(json_get_long_in(c, "moe_layer_freq", 1, MAX_COUNT, &v, path, e)));
	TRY(json_optional(json_get_long_in(c, "decoder_sparse_step", 1, MAX_COUNT, &v, path, e)));
	m->moe_every = (int)v;
	if (cJSON_IsArray(dense_list) && cJSON_GetArraySize(dense_list) > 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: mlp_only_layers: dense layers at chosen places are not modelled (first_k_dense_replace and decoder_sparse_step are)",
				path);
	if (strcmp(type, "gpt_oss") == 0) {
		m->moe_bias = 1;
		m->attn_sinks = 1;
	}
	if (strncmp(type, "llama4", 6) == 0)
		TRY(read_llama4_moe(c, m, path, e));
	return PPLAN_OK;
}

/* Sliding-window attention: the window, and the layers that use it (the
 * layer_types list where the config has one; else Gemma 2's every other
 * layer from the first, Gemma 3's all but every sliding_window_pattern-th,
 * Qwen2's from max_window_layers on, and every layer elsewhere). */
static enum pplan_status read_window(const cJSON *c, const char *type, struct model_spec *m,
				     const char *path, struct perr *e)
{
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(c, "layer_types");
	long w = 0, n = m->layers, v;
	int use = 1;
	TRY(json_optional(json_get_long_in(c, "sliding_window", 1, MAX_DIM, &w, path, e)));
	TRY(json_optional(json_get_bool(c, "use_sliding_window", &use, path, e)));
	if (w <= 0 || !use)
		return PPLAN_OK;
	if (cJSON_IsArray(types)) {
		const cJSON *t;
		n = 0;
		cJSON_ArrayForEach(t, types)
			n += cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0;
	} else if (strcmp(type, "gemma2") == 0) {
		n = (m->layers + 1) / 2;
	} else if (strncmp(type, "gemma3", 6) == 0) {
		v = 6;
		TRY(json_optional(json_get_long_in(c, "sliding_window_pattern", 1, MAX_COUNT, &v, path, e)));
		n = m->layers - m->layers / v;
	} else if (strncmp(type, "qwen2", 5) == 0) {
		v = 0;
		TRY(json_optional(json_get_long_in(c, "max_window_layers", 0, MAX_COUNT, &v, path, e)));
		n = v < m->layers ? m->layers - v : 0;
	}
	if (n > m->layers)
		n = m->layers;
	if (n > 0) {
		m->sliding_window = w;
		m->window_layers = (int)n;
	}
	return PPLAN_OK;
}

/* Nemotron-H's hybrid_override_pattern (or its layers_block_type list):
 * one character a layer, 'M' Mamba-2, '*' attention, '-' an MLP, 'E' an
 * MoE, each layer one block; and the Mamba-2 widths. */
static enum pplan_status read_nemotron_h(const cJSON *c, struct model_spec *m,
					 const char *path, struct perr *e)
{
	const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(c, "layers_block_type");
	const char *pat = NULL;
	char list[MODEL_MAX_PATTERN + 2];
	int n = 0, has_moe, has_mamba;
	if (json_get_string(c, "hybrid_override_pattern", &pat, path, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	if (cJSON_IsArray(blocks) && !pat) {
		const cJSON *b;
		cJSON_ArrayForEach(b, blocks) {
			const char *t = cJSON_IsString(b) ? b->valuestring : "";
			if (n > MODEL_MAX_PATTERN)
				break; /* one past the bound: refused below */
			list[n++] = !strcmp(t, "mamba") ? 'M' : !strcmp(t, "attention") ? '*'
				    : !strcmp(t, "mlp") ? '-' : !strcmp(t, "moe") ? 'E' : '?';
		}
		list[n] = '\0';
		pat = list;
	}
	if (!pat)
		return perr_set(e, PPLAN_EINPUT,
				"%s: hybrid_override_pattern is missing (a nemotron_h config names each layer's block)",
				path);
	TRY(model_set_hybrid_pattern(m, pat, path, "hybrid_override_pattern", e));
	has_moe = strchr(m->ffns, 'E') != NULL;
	has_mamba = strchr(m->mixers, 'M') != NULL;
	if (has_moe && m->num_experts < 1)
		return perr_set(e, PPLAN_EINPUT,
				"%s: hybrid_override_pattern has MoE layers (E) but n_routed_experts is missing",
				path);
	if (!has_mamba)
		return PPLAN_OK;
	TRY(json_required(json_get_long_in(c, "mamba_num_heads", 1, MAX_COUNT, &m->mamba_heads, path, e), "mamba_num_heads", path, e));
	TRY(json_required(json_get_long_in(c, "mamba_head_dim", 1, MAX_DIM, &m->mamba_head_dim, path, e), "mamba_head_dim", path, e));
	TRY(json_required(json_get_long_in(c, "ssm_state_size", 1, MAX_DIM, &m->mamba_state, path, e), "ssm_state_size", path, e));
	m->mamba_groups = 1;
	m->mamba_conv = 4;
	m->mamba_chunk = 128; /* Megatron-Core's MambaMixer and HF's default */
	TRY(json_optional(json_get_long_in(c, "n_groups", 1, MAX_COUNT, &m->mamba_groups, path, e)));
	TRY(json_optional(json_get_long_in(c, "conv_kernel", 1, MAX_COUNT, &m->mamba_conv, path, e)));
	TRY(json_optional(json_get_long_in(c, "chunk_size", 1, MAX_DIM, &m->mamba_chunk, path, e)));
	return PPLAN_OK;
}

/* Qwen3-Next and Qwen3.5: layer_types ("linear_attention",
 * "full_attention") or every full_attention_interval-th layer attention
 * (4), the others Gated DeltaNet; each layer also has its FFN. */
static enum pplan_status read_gdn(const cJSON *c, struct model_spec *m, const char *path,
				  struct perr *e)
{
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(c, "layer_types");
	long every = 4;
	int gate = 1;
	TRY(json_optional(json_get_long_in(c, "full_attention_interval", 1, MAX_COUNT, &every, path, e)));
	TRY(model_set_gdn_every(m, (int)every, path, e));
	if (cJSON_IsArray(types)) /* the list, where given, names each layer */
		for (int i = 0; i < m->layers; i++) {
			const cJSON *t = cJSON_GetArrayItem(types, i);
			m->mixers[i] = t && cJSON_IsString(t) &&
				       !strcmp(t->valuestring, "full_attention") ? 'A' : 'G';
		}
	TRY(json_required(json_get_long_in(c, "linear_num_key_heads", 1, MAX_COUNT, &m->gdn_k_heads, path, e), "linear_num_key_heads", path, e));
	TRY(json_required(json_get_long_in(c, "linear_num_value_heads", 1, MAX_COUNT, &m->gdn_v_heads, path, e), "linear_num_value_heads", path, e));
	TRY(json_required(json_get_long_in(c, "linear_key_head_dim", 1, MAX_DIM, &m->gdn_k_dim, path, e), "linear_key_head_dim", path, e));
	TRY(json_required(json_get_long_in(c, "linear_value_head_dim", 1, MAX_DIM, &m->gdn_v_dim, path, e), "linear_value_head_dim", path, e));
	m->gdn_conv = 4;
	TRY(json_optional(json_get_long_in(c, "linear_conv_kernel_dim", 1, MAX_COUNT, &m->gdn_conv, path, e)));
	TRY(json_optional(json_get_bool(c, "attn_output_gate", &gate, path, e)));
	m->attn_out_gate = gate;
	return PPLAN_OK;
}

static enum pplan_status read_mla(const cJSON *c, struct model_spec *m, const char *path,
				  struct perr *e)
{
	TRY(json_optional(json_get_long_in(c, "kv_lora_rank", 1, MAX_DIM, &m->kv_lora_rank, path, e)));
	if (m->kv_lora_rank <= 0)
		return PPLAN_OK;
	TRY(json_optional(json_get_long_in(c, "q_lora_rank", 1, MAX_DIM, &m->q_lora_rank, path, e)));
	TRY(json_required(json_get_long_in(c, "qk_rope_head_dim", 1, MAX_DIM, &m->qk_rope_dim, path, e), "qk_rope_head_dim", path, e));
	TRY(json_required(json_get_long_in(c, "qk_nope_head_dim", 1, MAX_DIM, &m->qk_nope_dim, path, e), "qk_nope_head_dim", path, e));
	TRY(json_required(json_get_long_in(c, "v_head_dim", 1, MAX_DIM, &m->v_head_dim, path, e), "v_head_dim", path, e));
	/* After the up-projection every head has its own K and V. */
	m->kv_heads = m->heads;
	m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
	return PPLAN_OK;
}

enum pplan_status model_load_hf(const cJSON *root, const char *path,
				struct model_spec *m, struct perr *e)
{
	struct keynames k = {NULL, NULL, NULL, NULL, "num_key_value_heads", "head_dim",
			     "vocab_size", NULL, "num_local_experts", "num_experts_per_tok",
			     "first_k_dense_replace", "kv_lora_rank", "n_group", "topk_group"};
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "text_config");
	const char *type = NULL, *outer = NULL;

	if (json_get_string(root, "model_type", &outer, path, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	if (cJSON_IsObject(c)) {
		snprintf(m->note, sizeof m->note, "the language model (text_config) of a %s config",
			 outer ? outer : "multimodal");
	} else {
		c = root;
	}
	if (json_get_string(c, "model_type", &type, path, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;
	if (!type)
		type = outer ? outer : "";
	hf_name(root, path, m->name, sizeof m->name);
	TRY(read_shape(c, type, m, &k, path, e));
	{
		enum pplan_status st = json_get_long_in(c, "vocab_size", 1, MAX_DIM, &m->vocab, path, e);
		if (st == PPLAN_ENOTFOUND) /* a multimodal config may keep it outside */
			st = json_required(json_get_long_in(root, "vocab_size", 1, MAX_DIM, &m->vocab, path, e), "vocab_size", path, e);
		TRY(st);
	}
	TRY(read_length(c, m, &k, path, e));
	TRY(read_layers(c, type, m, path, e));
	TRY(read_moe(c, type, m, &k, path, e));
	TRY(read_mla(c, m, path, e));
	TRY(read_window(c, type, m, path, e));
	if (strcmp(type, "nemotron_h") == 0)
		TRY(read_nemotron_h(c, m, path, e));
	else if (mj_in_list(type, hf_gdn))
		TRY(read_gdn(c, m, path, e));
	TRY(model_check_keys(m, path, &k, e));
	if (m->head_dim == 0) /* checked: heads divide hidden */
		m->head_dim = m->hidden / m->heads;
	return PPLAN_OK;
}
