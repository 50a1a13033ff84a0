/*
 * model.c: transformer model specs.  MLP kinds, exact parameter counts,
 * consistency checks.  The file formats that model_load
 * reads are in model_load.c (pplan.model/1) and model_hf.c (Hugging Face
 * config.json); the zoo is in model_zoo.c.
 *
 * Parameter counts (all in units of parameters, computed in double, exact
 * below 2^53):
 *   attention  = h*a*dh (Q) + 2*h*g*dh (K, V) + a*dh*h (output)
 *                [+ a*dh + 2*g*dh + h biases; Q, K, V biases alone (Qwen2)]
 *                [+ 2 dh Q/K norms, + a attention sinks] + norm; or MLA's
 *                low-rank projections and latent norms (mla_params)
 *   dense MLP  = m*h*f [+ (m-1)*f + h biases] + norm, m = 3 for gated MLPs
 *                (SwiGLU, GeGLU), 2 otherwise
 *   MoE MLP    = E routed experts of width fe + the shared experts + the
 *                router h*E [+ E] [+ h shared-expert gate] + norm
 *   norm       = 2h (LayerNorm weight and bias) or h (RMSNorm weight); one
 *                per layer for Falcon's parallel attention
 *   total      = L*attention + dense layers*dense MLP + MoE layers*MoE MLP
 *              + h*V (x2 if untied) + final norm + pos_embedding*h
 *                (learned absolute positions: GPT-2, OPT, GPT-3)
 * Not counted: BLOOM's embedding LayerNorm (2h), Grok-1's and Gemma 2's
 * post-sublayer norms, DeepSeek-V3's multi-token-prediction module.
 * model_params_active counts top_k experts instead of E (the router and
 * shared experts stay).  sim/MODEL.md writes the formulas out.
 *
 * This file is not the cost model: FLOPs, memory and time live in
 * cost_layer.c, cost.c and memory.c.
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
#include "units.h"


/* ---- MLP kinds ------------------------------------------------------------ */

static const char *const mlp_names[] = {"gelu", "squared_relu", "swiglu",
					"geglu", "relu"};

const char *mlp_kind_name(enum mlp_kind k)
{
	if ((int)k < 0 || (int)k >= (int)MLP_KIND_COUNT)
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
	for (int k = 0; k < (int)MLP_KIND_COUNT; k++) {
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

/* The norm before attention; with one norm per layer (parallel attention
 * and MLP behind one LayerNorm) it is counted here and not in the MLP. */
static double layer_norms_attn(const struct model_spec *m)
{
	return norm_params(m);
}

static double layer_norms_mlp(const struct model_spec *m)
{
	return m->norms_per_layer == 1 ? 0.0 : norm_params(m);
}

int model_is_mla(const struct model_spec *m)
{
	return m->kv_lora_rank > 0;
}

int model_layer_is_moe(const struct model_spec *m, int i)
{
	if (m->num_experts < 1)
		return 0;
	if (m->ffns[0])
		return i >= 0 && i < m->layers && i < MODEL_MAX_PATTERN &&
		       m->ffns[i] == 'E'; /* model_check: one character a layer */
	if (i < m->dense_layers)
		return 0;
	return m->moe_every <= 1 || (i + 1) % m->moe_every == 0;
}

int model_is_hybrid(const struct model_spec *m)
{
	return m->mixers[0] != '\0' || m->ffns[0] != '\0';
}

void model_layer_mix(const struct model_spec *m, int moe, struct layer_mix *out)
{
	double n = 0, a = 0, mb = 0, g = 0, f = 0;
	out->attn = out->ffn = 1.0;
	out->mamba = out->gdn = 0.0;
	if (!model_is_hybrid(m))
		return;
	int nm = (int)strlen(m->mixers), nf = (int)strlen(m->ffns);
	for (int i = 0; i < m->layers && i < MODEL_MAX_PATTERN; i++) {
		char mix = nm ? (i < nm ? m->mixers[i] : '-') : 'A';
		char ffn = nf ? (i < nf ? m->ffns[i] : '-')
				      : (model_layer_is_moe(m, i) ? 'E' : 'D');
		if ((ffn == 'E') != (moe != 0))
			continue;
		n++;
		a += mix == 'A';
		mb += mix == 'M';
		g += mix == 'G';
		f += ffn != '-';
	}
	if (n <= 0)
		return;
	out->attn = a / n;
	out->mamba = mb / n;
	out->gdn = g / n;
	out->ffn = f / n;
}

enum pplan_status model_set_hybrid_pattern(struct model_spec *m, const char *pat,
					   const char *where, const char *key, struct perr *e)
{
	size_t n = strlen(pat);
	if (n == 0 || n > MODEL_MAX_PATTERN || (long)n != m->layers)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s names %zu layers, the model has %d (a pattern has 1 to %d)",
				where, key, n, m->layers, MODEL_MAX_PATTERN);
	for (size_t i = 0; i < n; i++)
		if (!strchr("M*-E", pat[i]))
			return perr_set(e, PPLAN_EINPUT,
					"%s: %s: layer %zu is '%c', not M (Mamba-2), * (attention), - (MLP) or E (MoE)",
					where, key, i + 1, pat[i]);
	for (size_t i = 0; i < n; i++) {
		char ch = pat[i];
		m->mixers[i] = ch == 'M' ? 'M' : ch == '*' ? 'A' : '-';
		m->ffns[i] = ch == '-' ? 'D' : ch == 'E' ? 'E' : '-';
	}
	m->mixers[n] = m->ffns[n] = '\0';
	return PPLAN_OK;
}

enum pplan_status model_set_gdn_every(struct model_spec *m, int every, const char *where,
				      struct perr *e)
{
	int n = m->layers;
	if (n > MODEL_MAX_PATTERN)
		return perr_set(e, PPLAN_EINPUT, "%s: %d layers; a hybrid stack has at most %d",
				where, n, MODEL_MAX_PATTERN);
	for (int i = 0; i < n; i++)
		m->mixers[i] = every > 0 && (i + 1) % every == 0 ? 'A' : 'G';
	model_set_ffns_from_moe(m);
	m->mixers[n] = '\0';
	return PPLAN_OK;
}

void model_set_ffns_from_moe(struct model_spec *m)
{
	int n = m->layers < MODEL_MAX_PATTERN ? m->layers : MODEL_MAX_PATTERN;
	m->ffns[0] = '\0'; /* read the MoE placement, not a pattern */
	/* from the end: ffns[0] is written last, so model_layer_is_moe
	 * reads dense_layers and moe_every until then */
	for (int i = n - 1; i >= 0; i--)
		m->ffns[i] = model_layer_is_moe(m, i) ? 'E' : 'D';
	m->ffns[n] = '\0';
}

int model_moe_layers_in(const struct model_spec *m, int first, int n)
{
	int count = 0;
	if (m->num_experts < 1 || n <= 0)
		return 0;
	if (m->moe_every <= 1 && !m->ffns[0]) { /* all MoE after the dense ones: no loop */
		int from = first > m->dense_layers ? first : m->dense_layers;
		return first + n > from ? first + n - from : 0;
	}
	for (int i = first; i < first + n; i++)
		count += model_layer_is_moe(m, i);
	return count;
}

int model_moe_layers(const struct model_spec *m)
{
	return model_moe_layers_in(m, 0, m->layers);
}

long model_expert_ffn(const struct model_spec *m)
{
	return m->moe_ffn > 0 ? m->moe_ffn : m->ffn;
}

long model_shared_ffn(const struct model_spec *m)
{
	return m->shared_ffn > 0 ? m->shared_ffn : model_expert_ffn(m);
}

/* MLA: Q through its low-rank latent (and norm), K and V from one
 * kv_lora_rank latent (and norm) plus a shared rope key, the output from
 * a heads x v_head_dim input. */
static double mla_params(const struct model_spec *m)
{
	double h = (double)m->hidden, a = m->heads;
	double dq = (double)(m->qk_nope_dim + m->qk_rope_dim), r = (double)m->kv_lora_rank;
	double q = m->q_lora_rank > 0
			   ? h * m->q_lora_rank + (double)m->q_lora_rank + m->q_lora_rank * a * dq
			   : h * a * dq;
	double kv = h * (r + m->qk_rope_dim) + r + r * a * (m->qk_nope_dim + m->v_head_dim);
	return q + kv + a * m->v_head_dim * h;
}

double model_params_attn_layer(const struct model_spec *m)
{
	double h = (double)m->hidden, dh = head_dim_of(m);
	double q = (double)m->heads * dh, kv = (double)m->kv_heads * dh;
	double p;

	if (model_is_mla(m)) {
		p = mla_params(m);
	} else {
		p = h * q * (m->attn_out_gate ? 2.0 : 1.0) + 2.0 * h * kv + q * h;
		if (m->linear_bias || m->attn_bias)
			p += q + 2.0 * kv + h;
		else if (m->qkv_bias)
			p += q + 2.0 * kv;
	}
	if (m->qk_norm)
		p += 2.0 * dh;
	if (m->attn_sinks)
		p += m->heads;
	return p + layer_norms_attn(m);
}

double model_mamba_inner(const struct model_spec *m)
{
	return (double)m->mamba_heads * (double)m->mamba_head_dim;
}

double model_mamba_in_proj(const struct model_spec *m)
{
	return 2.0 * model_mamba_inner(m) + 2.0 * m->mamba_groups * m->mamba_state +
	       (double)m->mamba_heads;
}

double model_gdn_key(const struct model_spec *m)
{
	return (double)m->gdn_k_heads * (double)m->gdn_k_dim;
}

double model_gdn_value(const struct model_spec *m)
{
	return (double)m->gdn_v_heads * (double)m->gdn_v_dim;
}

/* Mamba-2 (Dao and Gu 2024, Megatron-Core's MambaMixer): in_proj to z, x,
 * B, C and dt; a depthwise causal convolution (with its bias) over x, B
 * and C; A, D and dt's bias per head; the gated RMSNorm over d_inner;
 * out_proj; the layer's norm. */
double model_params_mamba_mixer(const struct model_spec *m)
{
	double h = (double)m->hidden, d = model_mamba_inner(m);
	double conv = d + 2.0 * m->mamba_groups * m->mamba_state;
	return h * model_mamba_in_proj(m) + conv * ((double)m->mamba_conv + 1.0) +
	       3.0 * (double)m->mamba_heads + d + d * h + norm_params(m);
}

/* Gated DeltaNet (Yang et al. 2024, Qwen3-Next): in_proj to Q, K, V and
 * the output gate z, another to beta and the decay per value head; a
 * depthwise convolution over Q, K and V; A and dt's bias per value head;
 * the gated RMSNorm over a value head; out_proj; the layer's norm. */
double model_params_gdn_mixer(const struct model_spec *m)
{
	double h = (double)m->hidden, kd = model_gdn_key(m), vd = model_gdn_value(m);
	double vh = (double)m->gdn_v_heads;
	return h * (2.0 * kd + 2.0 * vd) + h * 2.0 * vh + (2.0 * kd + vd) * (double)m->gdn_conv +
	       2.0 * vh + (double)m->gdn_v_dim + vd * h + norm_params(m);
}

double model_params_mixers(const struct model_spec *m, int moe)
{
	struct layer_mix mx;
	double p;
	model_layer_mix(m, moe, &mx);
	p = mx.attn * model_params_attn_layer(m);
	if (mx.mamba > 0)
		p += mx.mamba * model_params_mamba_mixer(m);
	if (mx.gdn > 0)
		p += mx.gdn * model_params_gdn_mixer(m);
	return p;
}

/* One MLP of width f, without norm. */
static double mlp_matrices(const struct model_spec *m, double f, int bias)
{
	double h = (double)m->hidden;
	double mats = mlp_is_gated(m->mlp) ? 3.0 : 2.0;
	double p = mats * h * f;
	if (bias)
		p += (mats - 1.0) * f + h;
	return p;
}

double model_params_dense_mlp(const struct model_spec *m)
{
	return mlp_matrices(m, (double)m->ffn, m->linear_bias || m->mlp_bias) + layer_norms_mlp(m);
}

double model_params_expert(const struct model_spec *m)
{
	return mlp_matrices(m, (double)model_expert_ffn(m),
			    m->linear_bias || m->mlp_bias || m->moe_bias);
}

double model_params_moe_routed(const struct model_spec *m)
{
	return (double)m->num_experts * model_params_expert(m);
}

double model_params_moe_common(const struct model_spec *m)
{
	double h = (double)m->hidden;
	double p = m->shared_experts * mlp_matrices(m, (double)model_shared_ffn(m),
						    m->linear_bias || m->mlp_bias);
	p += h * m->num_experts + (m->moe_bias ? m->num_experts : 0); /* router */
	if (m->shared_gate)
		p += h;
	return p + layer_norms_mlp(m);
}

/* The k + n of an MLP of width f's adapted linears: fc1 (two matrices
 * gated) and fc2. */
static double lora_mlp_widths(const struct model_spec *m, double f, unsigned t)
{
	double h = (double)m->hidden;
	return (t & LORA_FC1 ? (mlp_is_gated(m->mlp) ? h + 2.0 * f : h + f) : 0) +
	       (t & LORA_FC2 ? f + h : 0);
}

/* The k + n of the attention's adapted linears. */
static double lora_attn_widths(const struct model_spec *m, unsigned t)
{
	double h = (double)m->hidden, a = (double)m->heads, dh = (double)m->head_dim;
	if (model_is_mla(m)) {
		double dqk = (double)(m->qk_nope_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		double qr = (double)m->q_lora_rank, r = (double)m->kv_lora_rank, w = 0;
		if (qr > 0)
			w += (t & LORA_Q_DOWN ? h + qr : 0) + (t & LORA_Q_UP ? qr + a * dqk : 0);
		else if (t & LORA_Q)
			w += h + a * dqk;
		return w + (t & LORA_KV_DOWN ? h + r + (double)m->qk_rope_dim : 0) +
		       (t & LORA_KV_UP ? r + a * ((double)m->qk_nope_dim + dv) : 0) +
		       (t & LORA_PROJ ? a * dv + h : 0);
	}
	return (t & LORA_QKV ? h + (a * (m->attn_out_gate ? 2.0 : 1.0) + 2.0 * m->kv_heads) * dh : 0) +
	       (t & LORA_PROJ ? a * dh + h : 0);
}

void model_lora_widths(const struct model_spec *m, int moe, unsigned t, double *dense, double *routed)
{
	double h = (double)m->hidden, mamba, gdn;
	struct layer_mix mx;
	mamba = (t & LORA_IN_PROJ ? h + model_mamba_in_proj(m) : 0) +
		(t & LORA_OUT_PROJ ? model_mamba_inner(m) + h : 0);
	gdn = (t & LORA_IN_PROJ ? h + 2.0 * model_gdn_key(m) + 2.0 * model_gdn_value(m) +
					  2.0 * m->gdn_v_heads
				: 0) +
	      (t & LORA_OUT_PROJ ? model_gdn_value(m) + h : 0);
	model_layer_mix(m, moe, &mx);
	*dense = mx.attn * lora_attn_widths(m, t) + mx.mamba * mamba + mx.gdn * gdn;
	*routed = 0;
	if (!moe) {
		*dense += mx.ffn * lora_mlp_widths(m, (double)m->ffn, t);
		return;
	}
	*dense += mx.ffn * m->shared_experts * lora_mlp_widths(m, (double)model_shared_ffn(m), t);
	*routed = mx.ffn * m->num_experts * lora_mlp_widths(m, (double)model_expert_ffn(m), t);
}

double model_lora_params(const struct model_spec *m, int r, unsigned t)
{
	double d0, e0, d1, e1, moe = model_moe_layers(m);
	model_lora_widths(m, 0, t, &d0, &e0);
	model_lora_widths(m, 1, t, &d1, &e1);
	return r * ((m->layers - moe) * (d0 + e0) + moe * (d1 + e1));
}

unsigned model_lora_present(const struct model_spec *m, unsigned t)
{
	unsigned has = 0;
	for (unsigned bit = 1; bit & LORA_TARGET_ALL; bit <<= 1)
		if ((t & bit) && model_lora_params(m, 1, bit) > 0)
			has |= bit;
	return has;
}

double model_params_mlp_layer(const struct model_spec *m)
{
	if (m->num_experts > 0)
		return model_params_moe_routed(m) + model_params_moe_common(m);
	return model_params_dense_mlp(m);
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

/* Every layer's attention, each dense layer's MLP, each MoE layer's with
 * `experts` routed experts counted. */
static double layers_params(const struct model_spec *m, double experts)
{
	int moe = model_moe_layers(m);
	struct layer_mix dense;
	model_layer_mix(m, 0, &dense);
	return (double)(m->layers - moe) * (model_params_mixers(m, 0) +
					    dense.ffn * model_params_dense_mlp(m)) +
	       moe * (model_params_mixers(m, 1) + experts * model_params_expert(m) +
		      model_params_moe_common(m));
}

double model_params_total(const struct model_spec *m)
{
	return layers_params(m, m->num_experts) + outside_layers(m);
}

double model_params_active(const struct model_spec *m)
{
	return layers_params(m, m->num_experts > 0 ? m->top_k : 0) + outside_layers(m);
}

double model_params_active_compute(const struct model_spec *m)
{
	double input = m->tied_embeddings ? 0.0 : model_params_embedding(m);
	return model_params_active(m) - input - model_params_positions(m);
}

/* ---- Checks ---------------------------------------------------------------- */


const struct keynames model_pplan_keys = {
	"num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads",
	"num_kv_heads", "head_dim", "vocab_size", "seq_length",
	"moe.num_experts", "moe.top_k", "moe.dense_layers", "mla.kv_lora_rank",
	"moe.route_groups", "moe.route_topk_groups"};

#define NEED_POSITIVE(field, key)                                            \
	do {                                                                 \
		if (m->field <= 0)                                           \
			return perr_set(e, PPLAN_EINPUT,                     \
					"%s: %s must be positive, got %ld",  \
					where, key, (long)m->field);         \
	} while (0)

/* The fine-grained MoE and MLA fields: widths not negative, at least one
 * MoE layer when there are experts, MLA's dimensions all given. */
static enum pplan_status check_moe_mla(const struct model_spec *m, const char *where,
				       const struct keynames *k, struct perr *e)
{
	if (m->moe_ffn < 0 || m->shared_ffn < 0 || m->shared_experts < 0 ||
	    m->dense_layers < 0 || m->moe_every < 0)
		return perr_set(e, PPLAN_EINPUT, "%s: the MoE sizes must not be negative", where);
	if (m->num_experts == 0 && (m->shared_experts || m->moe_ffn || m->dense_layers))
		return perr_set(e, PPLAN_EINPUT,
				"%s: shared experts, an expert width or dense layers need %s", where,
				k->experts);
	if (m->num_experts > 0 && model_moe_layers(m) == 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s (%d) leaves no MoE layer of %d", where, k->dense_layers,
				m->dense_layers, m->layers);
	if (m->kv_lora_rank < 0 || m->q_lora_rank < 0)
		return perr_set(e, PPLAN_EINPUT, "%s: %s must not be negative", where,
				k->kv_lora_rank);
	if (m->kv_lora_rank > 0 &&
	    (m->qk_rope_dim <= 0 || m->qk_nope_dim <= 0 || m->v_head_dim <= 0))
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s needs positive qk_rope_head_dim, qk_nope_head_dim and v_head_dim",
				where, k->kv_lora_rank);
	if (m->kv_lora_rank > 0 && m->kv_heads != m->heads)
		return perr_set(e, PPLAN_EINPUT,
				"%s: with %s every head has its own keys and values: %s (%d) must equal %s (%d)",
				where, k->kv_lora_rank, k->kv_heads, m->kv_heads, k->heads, m->heads);
	if (m->pos_embedding < 0 || m->pos_embedding > MODEL_MAX_DIM)
		return perr_set(e, PPLAN_EINPUT, "%s: pos_embedding %ld is out of range", where,
				m->pos_embedding);
	return PPLAN_OK;
}

/* A hybrid stack: one mixer and one FFN character a layer, and the
 * widths of each mixer kind it uses. */
static enum pplan_status check_hybrid(const struct model_spec *m, const char *where,
				      struct perr *e)
{
	size_t nm = strlen(m->mixers), nf = strlen(m->ffns);
	if (!model_is_hybrid(m))
		return PPLAN_OK;
	if ((long)nm != m->layers || (long)nf != m->layers)
		return perr_set(e, PPLAN_EINPUT,
				"%s: the hybrid pattern names %zu layers, the model has %d", where,
				nm != (size_t)m->layers ? nm : nf, m->layers);
	if (strspn(m->mixers, "AMG-") != nm || strspn(m->ffns, "DE-") != nf)
		return perr_set(e, PPLAN_EINPUT,
				"%s: the hybrid pattern has a layer kind pplan does not know", where);
	if (strchr(m->ffns, 'E') && m->num_experts < 1)
		return perr_set(e, PPLAN_EINPUT,
				"%s: the hybrid pattern has MoE layers but the model no experts", where);
	if (strchr(m->mixers, 'M') &&
	    (m->mamba_heads <= 0 || m->mamba_head_dim <= 0 || m->mamba_groups <= 0 ||
	     m->mamba_state <= 0 || m->mamba_conv <= 0 || m->mamba_chunk <= 0 ||
	     m->mamba_heads % m->mamba_groups != 0))
		return perr_set(e, PPLAN_EINPUT,
				"%s: Mamba-2 layers need positive heads, head width, state and groups, the groups dividing the heads",
				where);
	if (strchr(m->mixers, 'G') &&
	    (m->gdn_k_heads <= 0 || m->gdn_v_heads <= 0 || m->gdn_k_dim <= 0 ||
	     m->gdn_v_dim <= 0 || m->gdn_conv <= 0 || m->gdn_v_heads % m->gdn_k_heads != 0))
		return perr_set(e, PPLAN_EINPUT,
				"%s: Gated DeltaNet layers need positive key and value heads and widths, the key heads dividing the value heads",
				where);
	return PPLAN_OK;
}

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
	if ((int)m->mlp < 0 || (int)m->mlp >= (int)MLP_KIND_COUNT)
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
	if ((m->route_groups != 0 || m->route_topk_groups != 0) &&
	    (m->num_experts == 0 || m->route_groups < 2 || m->route_topk_groups < 1 ||
	     m->route_topk_groups >= m->route_groups || m->num_experts % m->route_groups != 0))
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s %d of %s %d (group-limited routing): the groups must be two or more and divide the %d experts, and a token's be fewer than all of them",
				where, k->route_topk_groups, m->route_topk_groups, k->route_groups,
				m->route_groups, m->num_experts);
	if (check_hybrid(m, where, e) != PPLAN_OK)
		return PPLAN_EINPUT;
	return check_moe_mla(m, where, k, e);
}

enum pplan_status model_add_mtp_layers(struct model_spec *m, int n, char *note, size_t len,
				       struct perr *e)
{
	if (m->mixers[0] || m->ffns[0])
		return perr_set(e, PPLAN_EINPUT,
				"the pipeline layout counts %d multi-token-prediction layer%s as layers of %s, a hybrid stack, which pplan cannot price",
				n, n == 1 ? "" : "s", m->name);
	if ((long)m->layers + n > MODEL_MAX_COUNT)
		return perr_set(e, PPLAN_EINPUT, "%d layers and %d MTP layers are too many",
				m->layers, n);
	m->layers += n;
	snprintf(note, len,
		 "%d multi-token-prediction layer%s (m) priced as transformer layer%s after the model's %d, where the layout counts %s with the loss (%s extra LM head not priced)",
		 n, n == 1 ? "" : "s", n == 1 ? "" : "s", m->layers - n, n == 1 ? "it" : "them",
		 n == 1 ? "its" : "their");
	return PPLAN_OK;
}

enum pplan_status model_check(const struct model_spec *m, const char *where,
			      struct perr *e)
{
	assert(m);
	return model_check_keys(m, where ? where : "model", &model_pplan_keys, e);
}

