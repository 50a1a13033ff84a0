/*
 * model.c: transformer model specs.  The embedded zoo, exact parameter
 * counts, consistency checks and parse_count.  The file formats that
 * model_load reads (pplan.model/1 and Hugging Face config.json) are in
 * model_load.c.
 *
 * Parameter counts (all in units of parameters, computed in double, exact
 * below 2^53):
 *   attention  = h*a*dh (Q) + 2*h*g*dh (K, V) + a*dh*h (output)
 *                [+ a*dh + 2*g*dh + h biases] + norm
 *   MLP        = E * (m*h*ffn [+ (m-1)*ffn + h biases]) [+ h*E router] + norm
 *                with m = 3 for gated MLPs (SwiGLU, GeGLU), 2 otherwise,
 *                E = num_experts (1 when dense)
 *   norm       = 2h (LayerNorm weight and bias) or h (RMSNorm weight)
 *   total      = L*(attention + MLP) + h*V (x2 if untied) + final norm
 *              + pos_embedding*h (learned absolute positions: 25.2M of
 *                GPT-3 175B, 1.6M of GPT-3 125M)
 * Not counted: BLOOM's embedding LayerNorm (2h), Grok-1's post-sublayer
 * norms.  model_params_active counts top_k experts instead of
 * E (the router stays).  The formulas are also written out in sim/MODEL.md.
 *
 * This file is not the cost model: FLOPs, memory and time live in cost.c.
 */
#include "model.h"

#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"


/* ---- MLP kinds ------------------------------------------------------------ */

static const char *const mlp_names[] = {"gelu", "squared_relu", "swiglu",
					"geglu"};

const char *mlp_kind_name(enum mlp_kind k)
{
	if ((int)k < 0 || (int)k > (int)MLP_GEGLU)
		return "unknown";
	return mlp_names[k];
}

/* Case-insensitive equality without relying on strcasecmp (POSIX). */
int model_name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

int mlp_kind_parse(const char *s, enum mlp_kind *out)
{
	if (!s)
		return -1;
	for (int k = 0; k <= (int)MLP_GEGLU; k++) {
		if (model_name_eq(s, mlp_names[k])) {
			*out = (enum mlp_kind)k;
			return 0;
		}
	}
	if (model_name_eq(s, "squared-relu")) { /* NeMo's spelling */
		*out = MLP_SQUARED_RELU;
		return 0;
	}
	return -1;
}

int mlp_is_gated(enum mlp_kind k)
{
	return k == MLP_SWIGLU || k == MLP_GEGLU;
}

/* ---- The zoo -------------------------------------------------------------- */

#define SPEC(n, L, h, f, a, g, V, s, act, nrm, tie, bias, E, k)               \
	{ .name = n, .layers = L, .hidden = h, .ffn = f, .heads = a,          \
	  .kv_heads = g, .head_dim = (h) / (a), .vocab = V, .seq = s,         \
	  .mlp = act, .norm = nrm, .tied_embeddings = tie, .linear_bias = bias, \
	  .num_experts = E, .top_k = k }
/* GPT-style: 4h GeLU MLP, LayerNorm, tied embeddings, biases on, MHA,
 * learned positions for the training length. */
#define GPT(n, L, h, a, V, s) \
	{ .name = n, .layers = L, .hidden = h, .ffn = 4L * (h), .heads = a,   \
	  .kv_heads = a, .head_dim = (h) / (a), .vocab = V, .seq = s,         \
	  .mlp = MLP_GELU, .norm = NORM_LAYERNORM, .tied_embeddings = 1,      \
	  .linear_bias = 1, .pos_embedding = s }
/* BLOOM: GPT-style with ALiBi instead of learned positions. */
#define BLOOM(n, L, h, a, V, s) \
	SPEC(n, L, h, 4L * (h), a, a, V, s, MLP_GELU, NORM_LAYERNORM, 1, 1, 0, 0)
/* LLaMA-style: SwiGLU, RMSNorm, untied, no biases. */
#define LLAMA(n, L, h, f, a, g, V, s) \
	SPEC(n, L, h, f, a, g, V, s, MLP_SWIGLU, NORM_RMSNORM, 0, 0, 0, 0)
/* Nemotron-style: squared ReLU, LayerNorm (layernorm1p), untied, no bias. */
#define NEMOTRON(n, L, h, f, a, g) \
	SPEC(n, L, h, f, a, g, 256000, 4096, MLP_SQUARED_RELU, NORM_LAYERNORM, \
	     0, 0, 0, 0)

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
	/* Llama 2 (Touvron et al. 2023) and Llama 3/3.1 (Dubey et al. 2024,
	 * Table 3), dimensions from the meta-llama config.json files; seq is
	 * the pretraining length (4096; 8192 before long-context training). */
	LLAMA("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096),
	LLAMA("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096),
	LLAMA("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096),
	LLAMA("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192),
	LLAMA("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192),
	LLAMA("llama3.1-8b", 32, 4096, 14336, 32, 8, 128256, 8192),
	LLAMA("llama3.1-70b", 80, 8192, 28672, 64, 8, 128256, 8192),
	LLAMA("llama3.1-405b", 126, 16384, 53248, 128, 8, 128256, 8192),
	/* Nemotron-4 15B (arXiv:2402.16819) and 340B (arXiv:2406.11704); the
	 * 340B dimensions match NeMo-Framework-Launcher
	 * conf/training/nemotron/nemotron_340b.yaml (num_query_groups 8). */
	NEMOTRON("nemotron4-15b", 32, 6144, 24576, 48, 8),
	NEMOTRON("nemotron4-340b", 96, 18432, 73728, 96, 8),
	/* Mixtral 8x7B, mistralai/Mixtral-8x7B-v0.1 config.json. */
	SPEC("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 4096, MLP_SWIGLU,
	     NORM_RMSNORM, 0, 0, 8, 2),
	/* Grok-1, xai-org/grok-1 README and model.py: 6144 = 48 x 128, FFN
	 * int(8 * 6144) * 2 / 3 = 32768 per expert, gated GeLU, RMSNorm,
	 * embeddings tied (InOutEmbed.decode), 131072 tokens, 8192 context. */
	SPEC("grok1-314b", 64, 6144, 32768, 48, 8, 131072, 8192, MLP_GEGLU,
	     NORM_RMSNORM, 1, 0, 8, 2),
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

/* Ties go to the earlier entry (llama3-8b before llama3.1-8b). */
const struct model_spec *model_nearest(double params)
{
	const struct model_spec *best = NULL;
	double best_d = INFINITY;

	if (!(params > 0) || !isfinite(params))
		return NULL;
	for (int i = 0; i < ZOO_N; i++) {
		double d = fabs(model_params_total(&zoo[i]) - params);
		if (d < best_d) {
			best_d = d;
			best = &zoo[i];
		}
	}
	return best;
}

/* ---- Parameter counts ---------------------------------------------------- */

static double head_dim_of(const struct model_spec *m)
{
	if (m->head_dim > 0)
		return (double)m->head_dim;
	return m->heads > 0 ? (double)(m->hidden / m->heads) : 0.0;
}

static double norm_params(const struct model_spec *m)
{
	return (m->norm == NORM_LAYERNORM ? 2.0 : 1.0) * (double)m->hidden;
}

double model_params_attn_layer(const struct model_spec *m)
{
	double h = (double)m->hidden, dh = head_dim_of(m);
	double q = (double)m->heads * dh, kv = (double)m->kv_heads * dh;
	double p = h * q + 2.0 * h * kv + q * h;

	if (m->linear_bias)
		p += q + 2.0 * kv + h;
	return p + norm_params(m);
}

/* One expert's MLP (the whole MLP when dense), without norm or router. */
static double expert_params(const struct model_spec *m)
{
	double h = (double)m->hidden, f = (double)m->ffn;
	double mats = mlp_is_gated(m->mlp) ? 3.0 : 2.0;
	double p = mats * h * f;

	if (m->linear_bias)
		p += (mats - 1.0) * f + h;
	return p;
}

static double mlp_params(const struct model_spec *m, int experts_counted)
{
	double p = (double)experts_counted * expert_params(m);

	if (m->num_experts > 0)
		p += (double)m->hidden * (double)m->num_experts; /* router */
	return p + norm_params(m);
}

double model_params_mlp_layer(const struct model_spec *m)
{
	return mlp_params(m, m->num_experts > 0 ? m->num_experts : 1);
}

double model_params_layer(const struct model_spec *m)
{
	return model_params_attn_layer(m) + model_params_mlp_layer(m);
}

double model_params_embedding(const struct model_spec *m)
{
	return (double)m->hidden * (double)m->vocab;
}

double model_params_positions(const struct model_spec *m)
{
	return (double)m->pos_embedding * (double)m->hidden;
}

static double outside_layers(const struct model_spec *m)
{
	double emb = model_params_embedding(m);
	return (m->tied_embeddings ? emb : 2.0 * emb) + model_params_positions(m) +
	       norm_params(m);
}

double model_params_total(const struct model_spec *m)
{
	return (double)m->layers * model_params_layer(m) + outside_layers(m);
}

double model_params_active(const struct model_spec *m)
{
	int k = m->num_experts > 0 ? m->top_k : 1;
	double layer = model_params_attn_layer(m) + mlp_params(m, k);
	return (double)m->layers * layer + outside_layers(m);
}

/* ---- Checks ---------------------------------------------------------------- */


const struct keynames model_pplan_keys = {
	"num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads",
	"num_kv_heads", "head_dim", "vocab_size", "seq_length",
	"moe.num_experts", "moe.top_k"};

#define NEED_POSITIVE(field, key)                                            \
	do {                                                                 \
		if (m->field <= 0)                                           \
			return perr_set(e, PPLAN_EINPUT,                     \
					"%s: %s must be positive, got %ld",  \
					where, key, (long)m->field);         \
	} while (0)

enum pplan_status model_check_keys(const struct model_spec *m,
				    const char *where,
				    const struct keynames *k, struct perr *e)
{
	if (m->name[0] == '\0')
		return perr_set(e, PPLAN_EINPUT, "%s: name must not be empty",
				where);
	NEED_POSITIVE(layers, k->layers);
	NEED_POSITIVE(hidden, k->hidden);
	NEED_POSITIVE(ffn, k->ffn);
	NEED_POSITIVE(heads, k->heads);
	NEED_POSITIVE(kv_heads, k->kv_heads);
	NEED_POSITIVE(vocab, k->vocab);
	NEED_POSITIVE(seq, k->seq);
	if (m->head_dim < 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s must be positive, got %ld", where,
				k->head_dim, m->head_dim);
	if (m->head_dim == 0 && m->hidden % m->heads != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s (%ld) must be divisible by %s (%d) "
				"when %s is not given", where, k->hidden,
				m->hidden, k->heads, m->heads, k->head_dim);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s (%d) must be a multiple of %s (%d)",
				where, k->heads, m->heads, k->kv_heads,
				m->kv_heads);
	if ((int)m->mlp < 0 || (int)m->mlp > (int)MLP_GEGLU)
		return perr_set(e, PPLAN_EINPUT, "%s: mlp kind %d is unknown",
				where, (int)m->mlp);
	if (m->norm != NORM_LAYERNORM && m->norm != NORM_RMSNORM)
		return perr_set(e, PPLAN_EINPUT, "%s: norm kind %d is unknown",
				where, (int)m->norm);
	if (m->num_experts < 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s must not be negative, got %d", where,
				k->experts, m->num_experts);
	if (m->num_experts == 0 && m->top_k != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s must be 0 for a dense model, got %d",
				where, k->top_k, m->top_k);
	if (m->num_experts > 0) {
		NEED_POSITIVE(top_k, k->top_k);
		if (m->top_k > m->num_experts)
			return perr_set(e, PPLAN_EINPUT,
					"%s: %s (%d) must not exceed %s (%d)",
					where, k->top_k, m->top_k, k->experts,
					m->num_experts);
	}
	return PPLAN_OK;
}

enum pplan_status model_check(const struct model_spec *m, const char *where,
			      struct perr *e)
{
	assert(m);
	return model_check_keys(m, where ? where : "model", &model_pplan_keys, e);
}

/* ---- parse_count ----------------------------------------------------------- */

int parse_count(const char *s, double *out)
{
	char *end;
	double v, scale = 1.0;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.') ||
	    strpbrk(s, "xXpP"))
		return -1; /* signs, spaces, "inf", "nan", hex floats */
	v = strtod(s, &end);
	if (end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': scale = 1e3; end++; break;
	case 'm': case 'M': scale = 1e6; end++; break;
	case 'b': case 'B': case 'g': case 'G': scale = 1e9; end++; break;
	case 't': case 'T': scale = 1e12; end++; break;
	default: break;
	}
	v *= scale;
	if (*end != '\0' || !isfinite(v) || !(v > 0))
		return -1;
	*out = v;
	return 0;
}
