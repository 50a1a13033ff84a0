/*
 * cost_layer.c: one transformer layer, one microbatch, one GPU, and the
 * model FLOPs.  GEMMs from their real shapes under TP/CP/EP and expert TP
 * (sim/gemm.c), MLA's projections, the routed and shared experts; the
 * attention core as fused flash attention or, for the frameworks that had
 * none, unfused batched GEMMs and softmax through HBM; memory-bound
 * element-wise kernels at HBM bandwidth; and the TP, CP and EP
 * collectives of the layer on the links their groups use
 * (sim/collective.c, cluster_group_link).  With a measured profile
 * (--profile) the GEMMs, element-wise kernels, attention core and
 * collectives come from its curves where it has them (sim/curves.h).
 * Formulas: sim/MODEL.md sections 2, 4, 5.1 and 12.  The stages, the
 * pipeline and the step are cost.c's.
 */
#include "cost_internal.h"

#include <math.h>
#include <string.h>

#include "curves.h"
#include "memory.h"


/* Causal attention computes half of the s x s score square. */
#define CAUSAL_SHARE 0.5
/* FlashAttention's backward does 2.5x the forward FLOPs (it recomputes
 * the scores: five matrix products instead of two). */
#define FLASH_BWD_FLOPS 2.5
/* Unfused attention: bytes per score through HBM forward (write scores,
 * read/write the softmax, dropout mask and output); the backward twice.
 * Without dropout the mask and its output go: write, read, write. */
#define UNFUSED_SCORE_BYTES 11.0
#define UNFUSED_SCORE_BYTES_NO_DROPOUT 6.0
/* Element-wise bytes per token and hidden unit in a layer's forward: two
 * norms (read, write, 4 B each) and two dropout + residual adds (read two,
 * write one, 2 B, plus a 1-byte mask: 7 B each) ... 22 B in all; a model
 * trained without dropout writes no masks (20 B). */
#define ELEM_BYTES_PER_H 22.0
#define ELEM_MASK_BYTES_PER_H 2.0
/* ... bias and activation on the MLP intermediate (read, write; gated:
 * read two, write one), and rotary and layout changes on Q, K, V. */
#define ELEM_BYTES_PER_F 4.0
#define ELEM_BYTES_PER_F_GATED 6.0
#define ELEM_BYTES_PER_QKV 4.0
/* The backward of an element-wise kernel moves about twice its bytes. */
#define ELEM_BWD_FACTOR 2.0
/* MoE: bytes per routed token and hidden unit that permuting tokens to
 * their experts and back, with the weighted sum, moves through HBM. */
#define MOE_PERMUTE_BYTES 10.0
/* The backward's fixed cost per layer relative to the forward's. */
#define LAYER_FIXED_BWD_RATIO 2.0

static void scan_shape(const struct model_spec *m, int mamba, double *flops, double *bytes);

/* Forward FLOPs per token of a layer's attention projections: Q, K, V
 * and the output, or MLA's down and up projections. */
static double attn_proj_flops(const struct model_spec *m)
{
	double h = (double)m->hidden, a = m->heads, dh = (double)m->head_dim;
	if (model_is_mla(m)) {
		double dqk = (double)(m->qk_nope_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		double qr = (double)m->q_lora_rank, r = (double)m->kv_lora_rank;
		double q = qr > 0 ? h * qr + qr * a * dqk : h * a * dqk;
		double kv = h * (r + m->qk_rope_dim) + r * a * (m->qk_nope_dim + dv);
		return 2.0 * (q + kv + a * dv * h);
	}
	double gate = m->attn_out_gate ? a : 0.0; /* Qwen3-Next's output gate from Q's projection */
	return 2.0 * h * (a + gate + 2.0 * m->kv_heads) * dh + 2.0 * a * dh * h;
}

/* The attention core's causal work with sliding windows, as a share of
 * the full causal work, averaged over the layers: a query at position i
 * sees min(i + 1, w) keys, s w - w^2 / 2 of the s^2 / 2 pairs of full
 * causal attention when w < s (sim/MODEL.md 4.2). */
double cost_window_share(const struct model_spec *m, double s)
{
	double w = (double)m->sliding_window, f, kept;
	if (m->window_layers <= 0 || w <= 0 || w >= s || m->layers <= 0)
		return 1.0;
	f = (double)m->window_layers / m->layers;
	kept = (s * w - 0.5 * w * w) / (0.5 * s * s);
	return 1.0 - f + f * kept;
}

/* Scores and values per query: head widths of Q.K and of V. */
static double attn_core_dims(const struct model_spec *m)
{
	if (model_is_mla(m))
		return (double)(m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim);
	return 2.0 * (double)m->head_dim;
}

/* A layer's MLP forward FLOPs per token: the dense MLP, or the top-k
 * routed experts and the shared ones. */
static double mlp_flops(const struct model_spec *m, int moe)
{
	double mats = mlp_is_gated(m->mlp) ? 3.0 : 2.0, h = (double)m->hidden;
	if (!moe)
		return 2.0 * mats * h * (double)m->ffn;
	return 2.0 * mats * h *
	       ((double)m->top_k * model_expert_ffn(m) +
		(double)m->shared_experts * model_shared_ffn(m));
}

/* Forward FLOPs per token: the projections, each layer's MLP (top-k
 * experts in an MoE layer), attention scores and values over the full
 * sequence (as Megatron-LM counts them), and the LM head; *core the
 * part without weights (the attention core and the scans). */
static double forward_flops(const struct model_spec *m, long seq, double *core)
{
	int moe = model_moe_layers(m);
	double score = 2.0 * (double)seq * m->heads * attn_core_dims(m);
	double attn = attn_proj_flops(m) + score;
	double fwd = m->layers * attn + (m->layers - moe) * mlp_flops(m, 0) +
		     moe * mlp_flops(m, 1) + 2.0 * (double)m->hidden * m->vocab;
	*core = m->layers * score;
	if (model_is_hybrid(m)) {
		/* each kind's mean layer: its mixers' projections and scans,
		 * and its FFN where it has one */
		fwd = 2.0 * (double)m->hidden * m->vocab;
		*core = 0;
		for (int k = 0; k < 2; k++) {
			struct layer_mix mx;
			double n = k ? moe : m->layers - moe, sf, sb, mixer, scans = 0;
			model_layer_mix(m, k, &mx);
			mixer = mx.attn * attn;
			if (mx.mamba > 0) {
				scan_shape(m, 1, &sf, &sb);
				mixer += mx.mamba * (2.0 * (double)m->hidden *
						     (model_mamba_in_proj(m) + model_mamba_inner(m)) + sf);
				scans += mx.mamba * sf;
			}
			if (mx.gdn > 0) {
				double kd = model_gdn_key(m), vd = model_gdn_value(m);
				scan_shape(m, 0, &sf, &sb);
				mixer += mx.gdn * (2.0 * (double)m->hidden *
						   (2.0 * kd + 3.0 * vd + 2.0 * m->gdn_v_heads) + sf);
				scans += mx.gdn * sf;
			}
			fwd += n * (mixer + mx.ffn * mlp_flops(m, k));
			*core += n * (mx.attn * score + scans);
		}
	}
	return fwd;
}

double cost_model_flops(const struct model_spec *m, long seq, long gbs)
{
	double core;
	return 3.0 * forward_flops(m, seq, &core) * (double)seq * (double)gbs;
}

double cost_train_flops(const struct model_spec *m, const struct train_opts *o, long gbs)
{
	double core, fwd = forward_flops(m, o->seq, &core);
	if (o->lora_rank <= 0)
		return cost_model_flops(m, o->seq, gbs);
	/* LoRA: the weights' forward and data gradient, the core's forward
	 * and its backward (twice the forward); the adapters not counted */
	return (2.0 * fwd + core) * (double)o->seq * (double)gbs;
}

/* ---- the context -------------------------------------------------------- */

double cost_coll(const struct cost_ctx *x, enum coll_op op, double bytes, int n,
		 const struct link *l)
{
	double t = curve_set_coll(x->o->curves, op, bytes, n, l->cls == LINK_NET);
	double sc = x->k->measured_comm_scale > 0 ? x->k->measured_comm_scale : 1.0;
	return t >= 0 ? t * sc : coll_time(op, bytes, n, l);
}

/* A collective the step blocks on as it arrives from its compute (TP's,
 * an all-to-all inside one domain).  Where a measured profile timed it
 * so (a CPU's exposed_s: from the last arrival, buffers out of the
 * caches), no less than that; else as cost_coll. */
static double cost_coll_in_step(const struct cost_ctx *x, enum coll_op op, double bytes, int n,
				const struct link *l)
{
	double t = curve_set_coll_exposed(x->o->curves, op, bytes, n, l->cls == LINK_NET);
	double sc = x->k->measured_comm_scale > 0 ? x->k->measured_comm_scale : 1.0;
	double loop = cost_coll(x, op, bytes, n, l);
	return t >= 0 ? fmax(t * sc, loop) : loop;
}

struct link cost_link_scaled(struct link k, const struct cost_params *cp)
{
	k.eff *= k.cls == LINK_NET ? cp->net_eff_scale : cp->nvlink_eff_scale;
	if (k.eff > 1.0)
		k.eff = 1.0;
	return k;
}

void cost_ctx_init(struct cost_ctx *x, const struct model_spec *m,
		     const struct cluster *c, const struct layout *l,
		     const struct train_opts *o)
{
	memset(x, 0, sizeof *x);
	x->m = m; x->c = c; x->l = l; x->o = o;
	x->k = train_opts_params(o);
	gemm_rate_init(&x->run, &c->gpu, o->precision, x->k);
	/* The attention core runs in the training precision; under fp8 in
	 * bf16, or fp16 on GPUs without bf16 (V100, P100); fp32 on a CPU. */
	{
		enum precision ap = o->precision;
		if (ap == PREC_FP8 || c->gpu.peak_tflops[ap] <= 0)
			ap = c->gpu.peak_tflops[PREC_BF16] > 0 ? PREC_BF16 : PREC_FP16;
		gemm_rate_init(&x->half, &c->gpu, ap, x->k);
	}
	x->run.curves = x->half.curves = o->curves;
	/* NVFP4: every linear's forward, data- and weight-gradient GEMMs
	 * at the fp4 rate (Transformer Engine's NVFP4BlockScaling) */
	if (o->precision == PREC_FP8 && o->b.fp8_recipe == FP8_NVFP4)
		gemm_rate_nvfp4(&x->run, &c->gpu, x->k);
	x->ab = o->precision == PREC_FP32 ? 4.0 : 2.0;
	x->es = x->ab / 2.0;
	x->b = l->mbs;
	x->s = (double)o->seq;
	x->sl = x->s / l->cp;
	x->T = x->b * x->sl;
	x->h = (double)m->hidden;
	x->t = l->tp;
	x->heads_l = (double)m->heads / x->t;
	x->kv_l = m->kv_heads >= l->tp ? (double)m->kv_heads / x->t : 1.0;
	cost_group_links(c, l, o, &x->links);
	x->links.tp = cost_link_scaled(x->links.tp, x->k);
	x->links.cp = cost_link_scaled(x->links.cp, x->k);
	x->links.dp = cost_link_scaled(x->links.dp, x->k);
	x->links.pp = cost_link_scaled(x->links.pp, x->k);
	x->links.ep = cost_link_scaled(x->links.ep, x->k);
	model_layer_mix(m, 0, &x->mix[0]);
	model_layer_mix(m, 1, &x->mix[1]);
}

/* A layer's blocks (mixer and FFN) as its kind's mean make-up counts
 * them: 2 in the usual stack, 1 in Nemotron-H's one-block layers. */
static double mix_blocks(const struct layer_mix *mx)
{
	return mx->attn + mx->mamba + mx->gdn + mx->ffn;
}

/* lc += w x add, term by term. */
static void layer_cost_add(struct layer_cost *lc, const struct layer_cost *add, double w)
{
	const double *a = (const double *)add;
	double *o = (double *)lc;
	for (size_t i = 0; i < sizeof *lc / sizeof(double); i++)
		o[i] += w * a[i];
}

/* Forward + data-gradient + weight-gradient time of one linear layer
 * with `tokens` rows, input width k, output width n. */
void cost_linear(const struct gemm_rate *r, double tokens, double n, double k,
		   struct layer_cost *lc)
{
	double tw = gemm_time(r, k, n, tokens);
	lc->gemm_f += gemm_time(r, tokens, n, k);
	lc->gemm_b += gemm_time(r, tokens, k, n) + tw;
	lc->gemm_bw += tw;
}

void cost_linear_trained(const struct cost_ctx *x, double tokens, double n, double k,
			 unsigned target, struct layer_cost *lc)
{
	double r = x->o->lora_rank;
	struct layer_cost one = { 0 };
	if (r <= 0) {
		cost_linear(&x->run, tokens, n, k, lc);
		return;
	}
	cost_linear(&x->run, tokens, n, k, &one);
	one.gemm_b -= one.gemm_bw; /* frozen: the data gradient alone */
	one.gemm_bw = 0;
	if (train_opts_lora_targets(x->o) & target) { /* x A (k x r), then B (r x n) */
		cost_linear(&x->run, tokens, r, k, &one);
		cost_linear(&x->run, tokens, n, r, &one);
	}
	lc->gemm_f += one.gemm_f;
	lc->gemm_b += one.gemm_b;
	lc->gemm_bw += one.gemm_bw;
}

/* ---- one layer ------------------------------------------------------------ */

static void attn_gemms(const struct cost_ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	double T = x->T, h = x->h, dh = (double)m->head_dim;

	if (model_is_mla(m)) {
		/* The down projections are whole on every TP rank; the up
		 * projections and the output split by heads. */
		double dqk = (double)(m->qk_nope_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		double r = (double)m->kv_lora_rank;
		if (m->q_lora_rank > 0) {
			cost_linear_trained(x, T, (double)m->q_lora_rank, h, LORA_Q_DOWN, lc);
			cost_linear_trained(x, T, x->heads_l * dqk, (double)m->q_lora_rank, LORA_Q_UP, lc);
		} else {
			cost_linear_trained(x, T, x->heads_l * dqk, h, LORA_Q, lc);
		}
		cost_linear_trained(x, T, r + m->qk_rope_dim, h, LORA_KV_DOWN, lc);
		cost_linear_trained(x, T, x->heads_l * (m->qk_nope_dim + dv), r, LORA_KV_UP, lc);
		cost_linear_trained(x, T, h, x->heads_l * dv, LORA_PROJ, lc);
		return;
	}
	cost_linear_trained(x, T, (x->heads_l * (m->attn_out_gate ? 2.0 : 1.0) + 2.0 * x->kv_l) * dh,
			    h, LORA_QKV, lc);
	cost_linear_trained(x, T, h, x->heads_l * dh, LORA_PROJ, lc);
}

/* An MLP of width f over `tokens` rows (f already split). */
static void mlp_gemms(const struct cost_ctx *x, double tokens, double f, struct layer_cost *lc)
{
	double up = mlp_is_gated(x->m->mlp) ? 2.0 : 1.0;
	cost_linear_trained(x, tokens, up * f, x->h, LORA_FC1, lc);
	cost_linear_trained(x, tokens, x->h, f, LORA_FC2, lc);
}

/* Each GPU holds E/ep experts split etp ways.  An expert's token copies
 * (T k / E of each of the dp*cp token sets, balanced) are shared by its
 * tp*dp*cp/(ep*etp) replicas: R = T k ep etp / (E tp) rows each, and the
 * busiest expert sets the pace.  Shared experts run on every token like
 * a dense MLP split over tp; the router is whole on every rank. */
static void moe_gemms(const struct cost_ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	double E = m->num_experts, etp = layout_etp(x->l), ep = x->l->ep;
	double rows = x->T * m->top_k * ep * etp / (E * x->t) * x->k->moe_imbalance;
	struct layer_cost one = { 0 };

	mlp_gemms(x, rows, (double)model_expert_ffn(m) / etp, &one);
	/* each local expert's fixed cost: forward, and twice it backward
	 * (its data- and weight-gradient GEMMs, one share each) */
	one.gemm_f += x->k->moe_expert_fixed_us * 1e-6;
	one.gemm_b += 2.0 * x->k->moe_expert_fixed_us * 1e-6;
	one.gemm_bw += x->k->moe_expert_fixed_us * 1e-6;
	lc->gemm_f += E / ep * one.gemm_f;
	lc->gemm_b += E / ep * one.gemm_b;
	lc->gemm_bw += E / ep * one.gemm_bw;
	if (m->shared_experts > 0)
		mlp_gemms(x, x->T, (double)m->shared_experts * model_shared_ffn(m) / x->t, lc);
	cost_linear_trained(x, x->T, E, x->h, 0, lc); /* the router: no adapter */
}

/* Mamba-2's projections, split over TP by heads (and its B/C groups):
 * in_proj to z, x, B, C, dt; out_proj from d_inner. */
static void mamba_gemms(const struct cost_ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	cost_linear_trained(x, x->T, model_mamba_in_proj(m) / x->t, x->h, LORA_IN_PROJ, lc);
	cost_linear_trained(x, x->T, x->h, model_mamba_inner(m) / x->t, LORA_OUT_PROJ, lc);
}

/* Gated DeltaNet's projections, split by heads: Q, K, V and the output
 * gate, beta and the decay; out_proj. */
static void gdn_gemms(const struct cost_ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	double kd = model_gdn_key(m), vd = model_gdn_value(m);
	cost_linear_trained(x, x->T, (2.0 * kd + 2.0 * vd + 2.0 * m->gdn_v_heads) / x->t, x->h,
			    LORA_IN_PROJ, lc);
	cost_linear_trained(x, x->T, x->h, vd / x->t, LORA_OUT_PROJ, lc);
}

static void layer_gemms(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	const struct layer_mix *mx = &x->mix[moe != 0];
	struct layer_cost part = { 0 };
	if (!model_is_hybrid(x->m)) {
		attn_gemms(x, lc);
		if (moe)
			moe_gemms(x, lc);
		else
			mlp_gemms(x, x->T, (double)x->m->ffn / x->t, lc);
		return;
	}
	/* A hybrid stack's mean layer of this kind: each block weighed by
	 * its share of the kind's layers. */
	if (mx->attn > 0) {
		attn_gemms(x, &part);
		layer_cost_add(lc, &part, mx->attn);
	}
	if (mx->mamba > 0) {
		memset(&part, 0, sizeof part);
		mamba_gemms(x, &part);
		layer_cost_add(lc, &part, mx->mamba);
	}
	if (mx->gdn > 0) {
		memset(&part, 0, sizeof part);
		gdn_gemms(x, &part);
		layer_cost_add(lc, &part, mx->gdn);
	}
	memset(&part, 0, sizeof part);
	if (moe)
		moe_gemms(x, &part);
	else
		mlp_gemms(x, x->T, (double)x->m->ffn / x->t, &part);
	layer_cost_add(lc, &part, mx->ffn);
}

/* The chunked scans of Mamba-2's SSD and of Gated DeltaNet's delta rule,
 * forward FLOPs per token: the products inside a chunk (attention over
 * the chunk) and the state carried between chunks,
 *   Mamba-2   2 Q (G N + d) + 4 N d          (chunk Q, d = heads x head_dim)
 *   GDN       2 C Hv (2 Dk + Dv) + 4 Hv Dk Dv (chunk C = 64)
 * and the bytes each streams (its inputs x, B, C, dt, or Q, K, V, beta,
 * the decay; its output), per token. */
#define GDN_CHUNK 64.0
static void scan_shape(const struct model_spec *m, int mamba, double *flops, double *bytes)
{
	if (mamba) {
		double d = model_mamba_inner(m), gn = (double)m->mamba_groups * m->mamba_state;
		double q = m->mamba_chunk > 0 ? (double)m->mamba_chunk : 256.0;
		*flops = 2.0 * q * (gn + d) + 4.0 * (double)m->mamba_state * d;
		*bytes = 2.0 * (d + 2.0 * gn + (double)m->mamba_heads) + 2.0 * d;
	} else {
		double hv = (double)m->gdn_v_heads, dk = (double)m->gdn_k_dim, dv = (double)m->gdn_v_dim;
		*flops = 2.0 * GDN_CHUNK * hv * (2.0 * dk + dv) + 4.0 * hv * dk * dv;
		*bytes = 2.0 * (2.0 * model_gdn_key(m) + model_gdn_value(m) + 2.0 * hv) +
			 2.0 * model_gdn_value(m);
	}
}

/* A scan on this GPU's heads (split over TP) at the fused attention
 * kernels' rate, both being blocked Triton kernels of that make, and no
 * faster than its HBM traffic; the backward as flash attention's, which
 * also recomputes its blocks. */
static void scan_time(const struct cost_ctx *x, int mamba, double *f, double *b)
{
	const struct gemm_rate *r = &x->half;
	double flops, bytes, fl, rate;
	scan_shape(x->m, mamba, &flops, &bytes);
	fl = flops * x->T / x->t;
	rate = r->peak_flops * r->ceiling * x->k->attn_fwd_rel * fl / (fl + r->half_flops);
	*f = fmax(fl / rate, hbm_time(r, x->es * bytes * x->T / x->t));
	*b = fmax(FLASH_BWD_FLOPS * fl / (rate * x->k->attn_bwd_fwd),
		  hbm_time(r, 2.0 * x->es * bytes * x->T / x->t));
}

/* A hybrid layer's mixers: attention where it has it, the scans of its
 * Mamba-2 and Gated DeltaNet mixers, each by its share. */
static void layer_mixer_cores(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	const struct layer_mix *mx = &x->mix[moe != 0];
	double f, b;
	lc->attn_f *= mx->attn;
	lc->attn_b *= mx->attn;
	if (mx->mamba > 0) {
		scan_time(x, 1, &f, &b);
		lc->attn_f += mx->mamba * f;
		lc->attn_b += mx->mamba * b;
	}
	if (mx->gdn > 0) {
		scan_time(x, 0, &f, &b);
		lc->attn_f += mx->gdn * f;
		lc->attn_b += mx->gdn * b;
	}
}

static void layer_attention(const struct cost_ctx *x, struct layer_cost *lc)
{
	const struct gemm_rate *r = &x->half;
	double dh = (double)x->m->head_dim, dims = attn_core_dims(x->m);
	double dv = model_is_mla(x->m) ? (double)x->m->v_head_dim : dh;

	if (curve_set_attention(x->o->curves, r->prec, x->o->b.attention == FW_ATTN_FLASH,
				x->b * x->heads_l, x->sl, x->s, dh, &lc->attn_f, &lc->attn_b)) {
		/* measured (--profile): the whole square at the measured rate,
		 * less what sliding windows skip (a fused kernel skips it) */
		double ws = x->o->b.attention == FW_ATTN_FLASH ? cost_window_share(x->m, x->s) : 1.0;
		lc->attn_f *= r->curve_scale * ws;
		lc->attn_b *= r->curve_scale * ws;
	} else if (x->o->b.attention == FW_ATTN_FLASH) {
		/* Causal: half of the s_l x s scores (load-balanced ring
		 * attention keeps that under CP), less what sliding windows
		 * skip; one kernel per ring step, saturating like a GEMM of
		 * its size. */
		double fl = 2.0 * x->b * x->sl * x->s * x->heads_l * dims * CAUSAL_SHARE *
			    cost_window_share(x->m, x->s);
		double kernel = fl / x->l->cp;
		double rate = r->peak_flops * r->ceiling * x->k->attn_fwd_rel *
			      kernel / (kernel + r->half_flops);
		lc->attn_f = fl / rate;
		lc->attn_b = FLASH_BWD_FLOPS * fl / (rate * x->k->attn_bwd_fwd);
	} else {
		/* Batched QK^T and PV over the full square, then
		 * scale-mask-softmax and dropout through HBM. */
		double batches = x->b * x->heads_l;
		double gemms = gemm_time_batched(r, batches, x->sl, x->s, dims - dv) +
			       gemm_time_batched(r, batches, x->sl, dv, x->s);
		double scores = batches * x->sl * x->s;
		double per = x->m->no_dropout ? UNFUSED_SCORE_BYTES_NO_DROPOUT : UNFUSED_SCORE_BYTES;
		lc->attn_f = gemms + hbm_time(r, per * x->es * scores);
		lc->attn_b = 2.0 * gemms + hbm_time(r, 2.0 * per * x->es * scores);
	}
}

/* The forward element-wise bytes of one layer (2-byte elements): norms
 * and residuals on the hidden size, bias and activation on the MLP
 * intermediate, layout changes on Q, K, V. */
static double elementwise_bytes(const struct model_spec *m, double T, double t, int sp,
				double heads_l, double kv_l, int moe)
{
	double T_sp = sp ? T / t : T;
	double per_f = mlp_is_gated(m->mlp) ? ELEM_BYTES_PER_F_GATED : ELEM_BYTES_PER_F;
	/* The MLP's intermediate width per token: dense, or the top-k experts
	 * and the shared ones (balanced over the GPUs: / tp either way). */
	double f = moe ? (double)m->top_k * model_expert_ffn(m) +
				 (double)m->shared_experts * model_shared_ffn(m)
		       : (double)m->ffn;
	double qkv = model_is_mla(m) ? heads_l * attn_core_dims(m) + heads_l * m->qk_rope_dim
				     : (heads_l + 2.0 * kv_l) * m->head_dim;
	double per_h = ELEM_BYTES_PER_H - (m->no_dropout ? ELEM_MASK_BYTES_PER_H : 0.0);
	struct layer_mix mx;
	if (!model_is_hybrid(m))
		return per_h * T_sp * (double)m->hidden + per_f * T * f / t +
		       ELEM_BYTES_PER_QKV * T * qkv;
	/* A hybrid layer: the norm and residual of each of its blocks (half
	 * of per_h each), the MLP's and Q, K, V's where it has them; a
	 * Mamba-2 mixer's convolution over x, B and C (read, write) and its
	 * gated norm (read y and z, write); Gated DeltaNet's convolution over
	 * Q, K and V, the L2 norms of Q and K and its gated norm. */
	model_layer_mix(m, moe, &mx);
	{
		double d = model_mamba_inner(m), gn = 2.0 * m->mamba_groups * m->mamba_state;
		double kd = model_gdn_key(m), vd = model_gdn_value(m);
		double mamba = 4.0 * (d + gn) + 6.0 * d, gdn = 4.0 * (2.0 * kd + vd) + 6.0 * vd + 8.0 * kd;
		return per_h * T_sp * (double)m->hidden * mix_blocks(&mx) / 2.0 +
		       mx.ffn * per_f * T * f / t + mx.attn * ELEM_BYTES_PER_QKV * T * qkv +
		       T * (mx.mamba * mamba + mx.gdn * gdn) / t;
	}
}

double cost_layer_elementwise_bytes(const struct model_spec *m, double tokens, int tp,
				    int sp, enum precision p)
{
	double heads_l = (double)m->heads / tp;
	double kv_l = m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0;
	return elementwise_bytes(m, tokens, tp, sp, heads_l, kv_l, 0) *
	       (p == PREC_FP32 ? 2.0 : 1.0); /* 4-byte elements */
}

/* Sharded gradients (ZeRO-2/3: Megatron FSDP, PyTorch FSDP, DeepSpeed)
 * leave the weight-gradient GEMMs in the compute dtype and are copied,
 * cast to the reduction dtype, into the buffer each microbatch's
 * reduce-scatter sends: read ab, write grad_bytes per parameter of the
 * layer on this GPU.  Megatron's own buffers with gradient-accumulation
 * fusion (zero 0/1) take the GEMM's output in place. */
static double grad_copy_time(const struct cost_ctx *x, int moe)
{
	double dense, expert;
	if (x->l->zero < 2)
		return 0;
	memory_layer_params(x->m, x->l, moe, &dense, &expert);
	if (x->o->lora_rank > 0) { /* the adapters' gradients alone */
		model_lora_widths(x->m, moe, train_opts_lora_targets(x->o), &dense, &expert);
		dense *= x->o->lora_rank / (double)x->t;
		expert *= x->o->lora_rank / ((double)layout_etp(x->l) * x->l->ep);
	}
	return hbm_time(&x->run, (x->ab + x->o->b.grad_bytes) * (dense + expert));
}

static void layer_elementwise(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	double T = x->T, h = x->h;
	double bytes = elementwise_bytes(m, T, x->t, x->l->sp, x->heads_l, x->kv_l, moe);
	double fixed = x->k->layer_fixed_us * 1e-6;

	bytes *= x->es;
	if (x->o->precision == PREC_FP8)
		bytes *= x->k->fp8_elementwise;
	if (moe)
		bytes += MOE_PERMUTE_BYTES * x->es * T * m->top_k * h;
	if (curve_set_bw(x->o->curves, CURVE_BW_LAYER, bytes) >= 0) {
		/* measured (--profile): these kernels' own rate, their
		 * launches included; where calibrate timed the forward's
		 * kernels alone, the layer's time (forward and backward
		 * bytes together, as the point was measured) split by that
		 * share, else by the bytes */
		double sc = x->run.curve_scale, all = (1.0 + ELEM_BWD_FACTOR) * bytes;
		double share = curve_set_layer_fwd_share(x->o->curves, all);
		if (share > 0) {
			double t = sc * curve_set_bw(x->o->curves, CURVE_BW_LAYER, all);
			lc->elem_f = share * t;
			lc->elem_b = (1.0 - share) * t + grad_copy_time(x, moe);
			return;
		}
		lc->elem_f = sc * curve_set_bw(x->o->curves, CURVE_BW_LAYER, bytes);
		lc->elem_b = sc * curve_set_bw(x->o->curves, CURVE_BW_LAYER, ELEM_BWD_FACTOR * bytes) +
			     grad_copy_time(x, moe);
		return;
	}
	lc->elem_f = hbm_time(&x->run, bytes) + fixed;
	lc->elem_b = hbm_time(&x->run, ELEM_BWD_FACTOR * bytes) + LAYER_FIXED_BWD_RATIO * fixed;
	lc->elem_b += grad_copy_time(x, moe);
}

/* LoRA's adapters under TP, as Megatron-Bridge's and NeMo's
 * ParallelLinearAdapter runs them beside each adapted TP-split linear
 * (sim/MODEL.md 4.7).  Beside a column-parallel input linear: A's rank-r
 * output gathered and B's input gradient all-reduced; the input gradient
 * all-reduced without SP; under SP the layer norm's gathered output is
 * reused, but where TP overlap gathers it (userbuffers) the adapter
 * gathers it again (reduce-scatter backward).  Beside a row-parallel
 * output linear: A's rank-r output all-reduced, B's output gathered whole
 * (under SP scattered back, so gathered backward), B's input gradient
 * all-reduced.  Blocking collectives on the compute stream, which TP
 * overlap does not reach.  Routed experts are split by etp, not tp, and
 * multi-latent attention's down projections are whole on every rank:
 * their adapters add none. */
static void lora_tp_comm(const struct cost_ctx *x, int moe, double *fwd, double *bwd)
{
	const int n = x->l->tp, sp = x->l->sp, ovl = x->o->b.tp_overlap != FW_TPO_NONE;
	const struct link *k = &x->links.tp;
	const struct layer_mix *mx = &x->mix[moe != 0];
	const unsigned t = train_opts_lora_targets(x->o);
	double act = x->ab * x->T * x->h, ra = x->ab * x->T * x->o->lora_rank;
	double ag_h, ag_r, ar_r, col, row, cols, rows, ffn;

	*fwd = *bwd = 0;
	if (n <= 1 || x->o->lora_rank <= 0)
		return;
	/* adapted column- and row-parallel linears of the layer, each block
	 * by its share of the layer's kind */
	if (model_is_mla(x->m))
		cols = !!(t & (x->m->q_lora_rank > 0 ? LORA_Q_UP : LORA_Q)) + !!(t & LORA_KV_UP);
	else
		cols = !!(t & LORA_QKV);
	cols *= mx->attn;
	rows = mx->attn * !!(t & LORA_PROJ);
	cols += (mx->mamba + mx->gdn) * !!(t & LORA_IN_PROJ);
	rows += (mx->mamba + mx->gdn) * !!(t & LORA_OUT_PROJ);
	ffn = moe && x->m->shared_experts == 0 ? 0 : mx->ffn;
	cols += ffn * !!(t & LORA_FC1);
	rows += ffn * !!(t & LORA_FC2);
	ag_h = cost_coll_in_step(x, COLL_ALLGATHER, act, n, k);
	ag_r = cost_coll_in_step(x, COLL_ALLGATHER, ra, n, k);
	ar_r = cost_coll_in_step(x, COLL_ALLREDUCE, ra, n, k);
	col = (sp && ovl ? ag_h : 0) + ag_r;
	row = ar_r + ag_h;
	*fwd = cols * col + rows * row;
	col = (sp ? (ovl ? cost_coll_in_step(x, COLL_REDUCESCATTER, act, n, k) : 0)
		  : cost_coll_in_step(x, COLL_ALLREDUCE, act, n, k)) + ar_r;
	row = ar_r + (sp ? ag_h : 0);
	*bwd = cols * col + rows * row;
}

/* Two collectives forward and two backward per layer (all-reduces; with
 * SP all-gathers and reduce-scatters, the input gathered again for the
 * weight gradient), overlapped as the framework does. */
static void layer_tp_comm(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	int n = x->l->tp;
	double act = x->ab * x->T * x->h, fwd, bwd, lf, lb;
	const struct link *k = &x->links.tp;
	double res = x->k->tp_overlap_exposed;

	if (n <= 1)
		return;
	if (x->l->sp) {
		double ag = cost_coll_in_step(x, COLL_ALLGATHER, act, n, k);
		double rs = cost_coll_in_step(x, COLL_REDUCESCATTER, act, n, k);
		fwd = 2 * ag + 2 * rs;
		bwd = 4 * ag + 2 * rs;
	} else {
		double ar = cost_coll_in_step(x, COLL_ALLREDUCE, act, n, k);
		fwd = 2 * ar;
		bwd = 2 * ar;
	}
	/* A hybrid layer has the collectives of its blocks: two per block
	 * (Mamba-2 and Gated DeltaNet split like attention, in_proj by
	 * columns and out_proj by rows). */
	if (model_is_hybrid(x->m)) {
		fwd *= mix_blocks(&x->mix[moe != 0]) / 2.0;
		bwd *= mix_blocks(&x->mix[moe != 0]) / 2.0;
	}
	/* Pipelined overlap hides each collective behind the GEMM it feeds,
	 * both ways; bulk only the backward's, behind the weight-gradient
	 * GEMMs that do not depend on it.  Either needs peer memory access
	 * (Transformer Engine's userbuffers): a TP group over the network
	 * gets none. */
	if (k->cls != LINK_NET && x->o->b.tp_overlap == FW_TPO_PIPELINED) {
		fwd = fmax(res * fwd, fwd - lc->gemm_f);
		bwd = fmax(res * bwd, bwd - lc->gemm_b);
	} else if (k->cls != LINK_NET && x->o->b.tp_overlap == FW_TPO_BULK) {
		bwd = fmax(res * bwd, bwd - lc->gemm_bw);
	}
	lora_tp_comm(x, moe, &lf, &lb);
	lc->tp_f = fwd + lf;
	lc->tp_b = bwd + lb;
}

/* Ring attention: K and V blocks go round the cp ranks, c-1 steps
 * forward and with their gradients backward, each hidden behind that
 * step's attention.  Where a measured profile says what a transfer
 * leaves to wait after the compute that follows its post (MPI on a CPU
 * moves it only inside its calls), each step costs that instead.  The
 * executor's ring sends no extra step forward, and backward each block
 * with its gradients, c times, each waited for as it is posted. */
static void layer_cp_comm(const struct cost_ctx *x, struct layer_cost *lc)
{
	int n = x->l->cp, net = x->links.cp.cls == LINK_NET;
	double kv, step, left;
	if (n <= 1)
		return;
	kv = 2.0 * x->ab * x->b * x->sl * x->kv_l * x->m->head_dim;
	step = cost_coll(x, COLL_SENDRECV, kv, 2, &x->links.cp);
	left = curve_set_coll_exposed(x->o->curves, COLL_SENDRECV, kv, 2, net);
	if (x->o->b.cp_joint_grads) {
		double both = left >= 0 ? curve_set_coll_exposed(x->o->curves, COLL_SENDRECV,
								 2 * kv, 2, net)
					: cost_coll(x, COLL_SENDRECV, 2 * kv, 2, &x->links.cp);
		lc->cp_f = left >= 0 ? (n - 1) * left
				     : fmax(0.0, (n - 1) * step - lc->attn_f * (n - 1) / n);
		lc->cp_b = n * both;
		return;
	}
	if (left >= 0) {
		lc->cp_f = (n - 1) * left + step;
		lc->cp_b = 2.0 * (n - 1) * left + step;
		return;
	}
	lc->cp_f = fmax(0.0, (n - 1) * step - lc->attn_f * (n - 1) / n) + step;
	lc->cp_b = fmax(0.0, 2.0 * (n - 1) * step - lc->attn_b * (n - 1) / n) + step;
}

/* Members of a group of `size` ranks `stride` apart inside one NVLink
 * domain. */
static int members_per_domain(const struct cluster *c, int size, long stride)
{
	int dom = c->nvlink_domain > 0 ? c->nvlink_domain : c->gpus_per_node;
	long k;
	if (stride < 1 || stride >= dom || dom % stride != 0)
		return 1;
	k = dom / stride;
	return k < size ? (int)k : size;
}

/* The domains (of D, each holding a contiguous block of the experts) that
 * a token's k experts reach.  Drawn evenly: D (1 - (1 - 1/D)^k).  Under
 * group-limited routing (G groups of consecutive experts, a token's k in
 * g of them, g <= k) where each domain holds p = G/D whole groups, the
 * token reaches the domains of its g groups, drawn from the G without
 * replacement: a domain is missed with probability C(G - p, g) / C(G, g)
 * = prod_{i<g} (G - p - i)/(G - i) (DeepSeek-V3 on 8 nodes: G 8, g 4,
 * p 1: 4 nodes against 5.25 unlimited).  Where a group spans several
 * domains the k experts fall evenly on the g D/G domains of its groups. */
static double ep_domains_reached(const struct model_spec *m, double D)
{
	double k = m->top_k, G = m->route_groups, g = m->route_topk_groups;
	if (G > 1 && g >= 1 && g < G && g <= k) {
		double p = G / D;
		if (p >= 1 && p == floor(p)) {
			double miss = 1.0;
			for (int i = 0; i < (int)g; i++)
				miss *= fmax(0.0, (G - p - i) / (G - i));
			return D * (1.0 - miss);
		}
		if (p < 1 && D / G == floor(D / G))
			D = g * D / G;
	}
	return D * (1.0 - pow(1.0 - 1.0 / D, k));
}

/* The share of a rank's k token copies (`bytes`) that crosses the
 * network.  The all-to-all sends each copy to its expert's rank: the
 * (n - local)/(n - 1) of them whose rank is in another domain.  The flex
 * dispatcher (DeepEP, HybridEP) sends a token once to each remote domain
 * that hosts one of its k experts and fans it out there over NVLink: of
 * the D = n/local domains a token reaches R (ep_domains_reached),
 * (D - 1)/D of them remote, so the share of the k copies is that over k
 * (D 8, k 8: 4.59 of 8, 0.57 against the all-to-all's 0.90; DeepSeek-V3's
 * group limit 3.5 of 8, 0.44). */
static double ep_remote_share(const struct cost_ctx *x, int n, int local)
{
	double k = x->m->top_k, D;
	if (!x->o->b.moe_flex || local < 1 || k < 1)
		return (double)(n - local) / (n - 1);
	D = (double)n / local;
	return ep_domains_reached(x->m, D) * (D - 1.0) / D / k;
}

/* One all-to-all of `bytes` per rank over the EP group.  Inside a domain
 * it is priced as a collective on the group's link; across domains each
 * rank's off-domain share leaves through its own NIC (a ring's use of
 * the domain's NICs together does not apply), while the on-domain share
 * moves over NVLink at the same time. */
static double ep_alltoall(const struct cost_ctx *x, double bytes)
{
	int n = x->l->ep, local;
	struct link nic, in;
	double off, on;

	if (x->links.ep.cls != LINK_NET)
		return cost_coll_in_step(x, COLL_ALLTOALL, bytes, n, &x->links.ep);
	local = members_per_domain(x->c, n, x->links.ep_stride);
	nic = cost_link_scaled(x->c->net, x->k);
	off = cost_coll(x, COLL_ALLTOALL, bytes * ep_remote_share(x, n, local), n, &nic);
	if (local < 2)
		return off;
	in = cost_link_scaled(cluster_group_link(x->c, local, (int)x->links.ep_stride), x->k);
	on = cost_coll(x, COLL_ALLTOALL, bytes * (local - 1) / (n - 1), local, &in);
	return fmax(off, on);
}

/* Megatron-Core's 1F1B A2A overlap pairs one microbatch's forward with
 * another's backward: each one's dispatch and combine run under the
 * other's GEMMs and attention of the same layer, a share
 * ep_overlap_exposed never hidden.  It runs in the steady state only,
 * 1 - pp/m of the microbatches (all but the first forward and the last
 * backward without a pipeline), and needs EP, no full recomputation,
 * and with a pipeline virtual stages (Megatron-Core's checks). */
static double ep_a2a_overlap_share(const struct cost_ctx *x)
{
	double m = (double)layout_microbatches(x->l);
	if (!train_opts_moe_a2a_overlap(x->o, x->l) || !(m > x->l->pp))
		return 0;
	return 1.0 - x->l->pp / m;
}

/* Megatron's allgather dispatcher: the TP x EP group's tokens gathered on
 * every rank of it (an all-gather whose output is the group's T x ep
 * tokens of h, with SP each rank's T/t of them, over the tp x ep ranks),
 * and the outputs reduce-scattered back (the same bytes); priced on the
 * EP group's link, its TP share on NVLink taken at that rate too. */
static double ep_allgather(const struct cost_ctx *x, double T_sp)
{
	double group = (double)x->l->ep * (x->l->sp ? x->t : 1);
	return cost_coll(x, COLL_ALLGATHER, x->ab * T_sp * x->h * group, (int)group,
			 &x->links.ep);
}

/* Dispatch and combine all-to-alls (or the allgather dispatcher's gather
 * and reduce-scatter), forward and again backward, of the routed tokens
 * (k copies of each of the rank's tokens); less what the frameworks'
 * overlaps hide: the shared experts' forward under the dispatch, the other
 * microbatch's compute under all four. */
static void layer_ep_comm(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	double T_sp, a2a, share, comm, exposed;
	if (!moe || x->l->ep <= 1)
		return;
	T_sp = x->l->sp ? x->T / x->t : x->T;
	a2a = x->o->b.moe_allgather ? ep_allgather(x, T_sp)
				    : ep_alltoall(x, x->ab * T_sp * x->h * x->m->top_k);
	lc->ep_f = 2 * a2a;
	lc->ep_b = 2 * a2a;
	if (x->o->b.moe_shared_overlap && x->m->shared_experts > 0) {
		/* The shared experts' fc1 under the dispatch, fc2 under the
		 * combine (Megatron's --moe-shared-expert-overlap). */
		double f = (double)x->m->shared_experts * model_shared_ffn(x->m) / x->t;
		struct layer_cost fc1 = { 0 }, fc2 = { 0 };
		cost_linear(&x->run, x->T, (mlp_is_gated(x->m->mlp) ? 2.0 : 1.0) * f, x->h, &fc1);
		cost_linear(&x->run, x->T, x->h, f, &fc2);
		lc->ep_f = fmax(0.0, a2a - fc1.gemm_f) + fmax(0.0, a2a - fc2.gemm_f);
	}
	share = ep_a2a_overlap_share(x);
	comm = lc->ep_f + lc->ep_b;
	if (share <= 0 || comm <= 0)
		return;
	exposed = fmax(x->k->ep_overlap_exposed * comm,
		       comm - (lc->gemm_f + lc->attn_f + lc->gemm_b + lc->attn_b));
	lc->ep_f *= 1.0 - share + share * exposed / comm;
	lc->ep_b *= 1.0 - share + share * exposed / comm;
}

/* Op-level selective checkpointing (torchtitan) keeps the outputs of the
 * attention and of every other matmul of a layer (the 1st, 3rd, 5th and
 * 7th: wq, wv, w1 and w2 of a gated MLP; wq, wv, w1 of an ungated one)
 * and of the TP reduce-scatters; the backward replays the rest of the
 * forward: the other matmuls (wk, wo, and w3 or w2), every element-wise
 * op, and the TP all-gathers (half of the forward's TP traffic). */
static double op_sac_recompute(const struct cost_ctx *x, const struct layer_cost *lc)
{
	double dh = (double)x->m->head_dim, f = (double)x->m->ffn / x->t;
	double mm = gemm_time(&x->run, x->T, x->kv_l * dh, x->h) +
		    gemm_time(&x->run, x->T, x->h, x->heads_l * dh);
	if (mlp_is_gated(x->m->mlp))
		mm += gemm_time(&x->run, x->T, f, x->h);
	else
		mm += gemm_time(&x->run, x->T, x->h, f);
	return mm + lc->elem_f + 0.5 * lc->tp_f;
}

/* Megatron's --recompute-modules, each module's forward again in the
 * backward: the attention core; the two norms (read and write h per
 * token each); a dense MLP's GEMMs and activation; an MoE layer's router,
 * expert and shared GEMMs, permutation and its dispatch and combine; the
 * experts' activation alone (read the fc1 output, write its result); the
 * shared experts; MLA's up projections. */
static double modules_recompute(const struct cost_ctx *x, int moe, const struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	unsigned mods = layout_recompute_modules(x->l);
	double T = x->T, T_sp = x->l->sp ? x->T / x->t : x->T, t = 0;
	double gate = mlp_is_gated(m->mlp) ? 2.0 : 1.0;
	struct layer_cost g = { 0 };

	if (mods & RM_CORE_ATTN)
		t += lc->attn_f;
	if (mods & RM_LAYERNORM)
		t += hbm_time(&x->run, 2.0 * 2.0 * x->es * T_sp * x->h);
	if ((mods & RM_MLA_UP) && model_is_mla(m)) {
		double dqk = (double)(m->qk_nope_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		if (m->q_lora_rank > 0)
			cost_linear(&x->run, T, x->heads_l * dqk, (double)m->q_lora_rank, &g);
		cost_linear(&x->run, T, x->heads_l * (m->qk_nope_dim + dv), (double)m->kv_lora_rank, &g);
	}
	if (!moe && (mods & RM_MLP)) {
		mlp_gemms(x, T, (double)m->ffn / x->t, &g);
		t += hbm_time(&x->run, (gate + 1.0) * x->es * T * (double)m->ffn / x->t);
	}
	if (moe && (mods & RM_MOE)) {
		moe_gemms(x, &g);
		t += lc->ep_f + hbm_time(&x->run, MOE_PERMUTE_BYTES * x->es * T * m->top_k * x->h);
	} else if (moe) {
		double rows = T * m->top_k / x->t;
		if (mods & RM_MOE_ACT)
			t += hbm_time(&x->run, (gate + 1.0) * x->es * rows * (double)model_expert_ffn(m));
		if ((mods & RM_SHARED) && m->shared_experts > 0)
			mlp_gemms(x, T, (double)m->shared_experts * model_shared_ffn(m) / x->t, &g);
	}
	return t + g.gemm_f;
}

/* Full recomputation replays the layer's forward in its backward;
 * Megatron's selective only the attention core; op-level selective
 * checkpointing (dense layers of a framework that has it) the ops it
 * does not keep. */
static void layer_recompute(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	if (x->l->recompute == RECOMPUTE_FULL)
		lc->recompute = lc->gemm_f + lc->attn_f + lc->elem_f + lc->tp_f +
				lc->cp_f + lc->ep_f;
	else if (x->l->recompute == RECOMPUTE_SELECTIVE && memory_op_sac(x->m, x->o, moe))
		lc->recompute = op_sac_recompute(x, lc);
	else if (x->l->recompute == RECOMPUTE_SELECTIVE)
		lc->recompute = modules_recompute(x, moe, lc);
}

/* Activation offloading moves the layer's offloaded tensors to host
 * memory during its forward and back during its backward, on the GPU's
 * host link (PCIe, or Grace's NVLink-C2C) and on their own streams: what
 * the layer's GEMMs and attention do not cover is exposed. */
static void layer_offload(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	double bytes = memory_layer_offloaded(x->m, x->l, x->o, moe), t;
	if (!(bytes > 0))
		return;
	t = bytes / (cluster_host_gbps(x->c) * 1e9);
	lc->elem_f += fmax(0.0, t - (lc->gemm_f + lc->attn_f));
	lc->elem_b += fmax(0.0, t - (lc->gemm_b + lc->attn_b));
}

/* Activation CPU offloading of whole layers (offload_layers): the
 * layer's saved activations leave for host memory while the next layer
 * computes its forward and come back while it computes its backward
 * (Transformer Engine's offload context, its own streams): what the host
 * link does not hide behind a layer's GEMMs and attention is exposed. */
static void layer_offload_whole(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	double bytes, t;
	if (x->l->offload_layers <= 0)
		return;
	bytes = memory_layer_activations(x->m, x->l, x->o, moe) * x->es;
	t = bytes / (cluster_host_gbps(x->c) * 1e9);
	lc->off_f = fmax(0.0, t - (lc->gemm_f + lc->attn_f));
	lc->off_b = fmax(0.0, t - (lc->gemm_b + lc->attn_b));
}

/* One layer: an MoE layer when moe is set, else a dense one. */
void cost_layer(const struct cost_ctx *x, int moe, struct layer_cost *lc)
{
	memset(lc, 0, sizeof *lc);
	layer_gemms(x, moe, lc);
	layer_attention(x, lc);
	layer_cp_comm(x, lc);
	if (model_is_hybrid(x->m)) {
		/* ring attention in the attention layers only */
		lc->cp_f *= x->mix[moe != 0].attn;
		lc->cp_b *= x->mix[moe != 0].attn;
		layer_mixer_cores(x, moe, lc);
	}
	layer_elementwise(x, moe, lc);
	layer_tp_comm(x, moe, lc);
	layer_ep_comm(x, moe, lc);
	layer_recompute(x, moe, lc);
	layer_offload(x, moe, lc);
	layer_offload_whole(x, moe, lc);
}

/* out = nd dense layers + nm MoE layers. */
void cost_layers_sum(const struct layer_cost *dense, double nd, const struct layer_cost *moe,
		       double nm, struct layer_cost *out)
{
	const double *a = (const double *)dense, *b = (const double *)moe;
	double *o = (double *)out;
	for (size_t i = 0; i < sizeof *out / sizeof(double); i++)
		o[i] = nd * a[i] + nm * b[i];
}
