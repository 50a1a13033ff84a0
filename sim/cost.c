/*
 * cost.c: the time model and the assembly of a prediction.
 *
 * One transformer layer is priced for one microbatch on one GPU: GEMMs
 * from their real shapes under TP/CP/EP (sim/gemm.c), the attention core
 * as fused flash attention or, for the frameworks that had none, unfused
 * batched GEMMs and softmax through HBM, memory-bound element-wise kernels
 * at HBM bandwidth, and the TP, CP and EP collectives of the layer on the
 * links their groups use (sim/collective.c, cluster_group_link).  Stages
 * are layers times that; the pipeline, the data-parallel gradient
 * reduction and the optimizer step make the step.  cost_predict is a
 * straight run of the named steps below.  Every formula and constant is in
 * sim/MODEL.md; the fitted constants come from train_opts' cost_params.
 */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collective.h"
#include "curves.h"
#include "gemm.h"
#include "memory.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Causal attention computes half of the s x s score square. */
#define CAUSAL_SHARE 0.5
/* FlashAttention's backward does 2.5x the forward FLOPs (it recomputes
 * the scores: five matrix products instead of two). */
#define FLASH_BWD_FLOPS 2.5
/* Unfused attention: bytes per score through HBM forward (write scores,
 * read/write the softmax, dropout mask and output); the backward twice. */
#define UNFUSED_SCORE_BYTES 11.0
/* Element-wise bytes per token and hidden unit in a layer's forward: two
 * norms (read, write, 4 B each) and two dropout + residual adds (read two,
 * write one, 2 B, plus a 1-byte mask: 7 B each) ... 22 B in all. */
#define ELEM_BYTES_PER_H 22.0
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
/* Embedding: gather and write forward (4 B per element), scatter-add of
 * the gradient backward (8 B). */
#define EMBED_FWD_BYTES 4.0
#define EMBED_BWD_BYTES 8.0
/* LM head: bf16 logits, fp32 softmax and cross-entropy, per logit, each
 * way. */
#define LOGIT_BYTES 10.0
/* Adam: bytes per local parameter (read master, m, v, grad; write master,
 * m, v, half-precision weight), and one fp32 pass over every gradient
 * (norm, zeroing). */
#define ADAM_BYTES_PER_PARAM 30.0
#define GRAD_PASS_BYTES 4.0
/* Activations move as bf16 (fp32 on the CPU backend, x->ab); the byte
 * counts above are for 2-byte elements and scale with x->es. */

const struct cost_params *train_opts_params(const struct train_opts *o)
{
	return o->params ? o->params : cost_params_default();
}

void train_opts_default(struct train_opts *o, const struct model_spec *m)
{
	memset(o, 0, sizeof *o);
	o->seq = m->seq;
	o->precision = PREC_BF16;
	o->fw = framework_default();
	fw_switches_none(&o->switches);
	o->use_des = 1;
	rank_order_default(&o->order);
	framework_resolve(o->fw, o->precision, NULL, &o->b, NULL);
}

enum pplan_status train_opts_resolve(struct train_opts *o, struct perr *e)
{
	return framework_resolve(o->fw, o->precision, &o->switches, &o->b, e);
}

double cost_model_flops(const struct model_spec *m, long seq, long gbs)
{
	double h = (double)m->hidden, dh = (double)m->head_dim;
	double top = m->num_experts > 1 ? m->top_k : 1;
	double mats = mlp_is_gated(m->mlp) ? 3.0 : 2.0;
	/* Forward FLOPs per token: QKV, output projection, MLP (top-k
	 * experts), attention scores and values over the full sequence (as
	 * Megatron-LM counts them), and the LM head. */
	double layer = 2.0 * h * (m->heads + 2.0 * m->kv_heads) * dh +
		       2.0 * m->heads * dh * h + 2.0 * mats * h * m->ffn * top +
		       4.0 * (double)seq * m->heads * dh;
	double fwd = m->layers * layer + 2.0 * h * m->vocab;
	return 3.0 * fwd * (double)seq * (double)gbs;
}

struct layer_cost {      /* one layer, one microbatch, one GPU, seconds */
	double gemm_f, gemm_b;   /* backward = data + weight gradients */
	double gemm_bw;          /* weight-gradient part of gemm_b */
	double attn_f, attn_b;
	double elem_f, elem_b;
	double tp_f, tp_b;       /* exposed */
	double cp_f, cp_b;
	double ep_f, ep_b;
	double recompute;        /* added to the backward */
};

struct ctx {
	const struct model_spec *m;
	const struct cluster *c;
	const struct layout *l;
	const struct train_opts *o;
	const struct cost_params *k;
	struct gemm_rate run;    /* GEMMs in the run's precision */
	struct gemm_rate half;   /* the attention core's precision (bf16 in fp8 runs) */
	double ab;               /* bytes of an activation element: 4 in fp32, else 2 */
	double es;               /* element-wise byte counts' scale: ab / 2 */
	double b, s, sl, T, h, t;
	double heads_l, kv_l;    /* query and key/value heads per TP rank */
	struct group_links links;
};

/* ---- the context -------------------------------------------------------- */

/* One collective: from the measured curves where the profile has them
 * for this link class, else the alpha-beta model (collective.h). */
static double ctime(const struct ctx *x, enum coll_op op, double bytes, int n,
		    const struct link *l)
{
	double t = curve_set_coll(x->o->curves, op, bytes, n, l->cls == LINK_NET);
	return t >= 0 ? t : coll_time(op, bytes, n, l);
}

static struct link scaled(struct link k, const struct cost_params *cp)
{
	k.eff *= k.cls == LINK_NET ? cp->net_eff_scale : cp->nvlink_eff_scale;
	if (k.eff > 1.0)
		k.eff = 1.0;
	return k;
}

static void ctx_init(struct ctx *x, const struct model_spec *m,
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
	x->links.tp = scaled(x->links.tp, x->k);
	x->links.cp = scaled(x->links.cp, x->k);
	x->links.dp = scaled(x->links.dp, x->k);
	x->links.pp = scaled(x->links.pp, x->k);
	x->links.ep = scaled(x->links.ep, x->k);
}

/* Forward + data-gradient + weight-gradient time of one linear layer
 * with `tokens` rows, input width k, output width n. */
static void linear(const struct gemm_rate *r, double tokens, double n, double k,
		   struct layer_cost *lc)
{
	double tw = gemm_time(r, k, n, tokens);
	lc->gemm_f += gemm_time(r, tokens, n, k);
	lc->gemm_b += gemm_time(r, tokens, k, n) + tw;
	lc->gemm_bw += tw;
}

/* ---- one layer ------------------------------------------------------------ */

static void layer_gemms(const struct ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	double T = x->T, h = x->h, t = x->t, dh = (double)m->head_dim;
	double f = (double)m->ffn, up = mlp_is_gated(m->mlp) ? 2.0 : 1.0;

	linear(&x->run, T, (x->heads_l + 2.0 * x->kv_l) * dh, h, lc);
	linear(&x->run, T, h, x->heads_l * dh, lc);
	if (m->num_experts > 1) {
		/* Each GPU holds E/ep experts; balanced routing gives each
		 * T*ep*k/E tokens (the EP group's, k copies), and the busiest
		 * sets the pace. */
		double local = (double)m->num_experts / x->l->ep;
		double tok = T * x->l->ep * m->top_k / m->num_experts * x->k->moe_imbalance;
		struct layer_cost one = { 0 };
		/* The local experts' GEMMs are alike: price one, count them. */
		linear(&x->run, tok, up * f / t, h, &one);
		linear(&x->run, tok, h, f / t, &one);
		lc->gemm_f += local * one.gemm_f;
		lc->gemm_b += local * one.gemm_b;
		lc->gemm_bw += local * one.gemm_bw;
		linear(&x->run, T, m->num_experts, h, lc); /* router */
	} else {
		linear(&x->run, T, up * f / t, h, lc);
		linear(&x->run, T, h, f / t, lc);
	}
}

static void layer_attention(const struct ctx *x, struct layer_cost *lc)
{
	const struct gemm_rate *r = &x->half;
	double dh = (double)x->m->head_dim;

	if (curve_set_attention(x->o->curves, r->prec, x->o->b.attention == FW_ATTN_FLASH,
				x->b * x->heads_l, x->sl, x->s, dh, &lc->attn_f, &lc->attn_b)) {
		/* measured (--profile): the whole square at the measured rate */
	} else if (x->o->b.attention == FW_ATTN_FLASH) {
		/* Causal: half of the s_l x s scores (load-balanced ring
		 * attention keeps that under CP); one kernel per ring step,
		 * saturating like a GEMM of its size. */
		double fl = 4.0 * x->b * x->sl * x->s * x->heads_l * dh * CAUSAL_SHARE;
		double kernel = fl / x->l->cp;
		double rate = r->peak_flops * r->ceiling * x->k->attn_fwd_rel *
			      kernel / (kernel + r->half_flops);
		lc->attn_f = fl / rate;
		lc->attn_b = FLASH_BWD_FLOPS * fl / (rate * x->k->attn_bwd_fwd);
	} else {
		/* Batched QK^T and PV over the full square, then
		 * scale-mask-softmax and dropout through HBM. */
		double batches = x->b * x->heads_l;
		double gemms = gemm_time_batched(r, batches, x->sl, x->s, dh) +
			       gemm_time_batched(r, batches, x->sl, dh, x->s);
		double scores = batches * x->sl * x->s;
		lc->attn_f = gemms + hbm_time(r, UNFUSED_SCORE_BYTES * x->es * scores);
		lc->attn_b = 2.0 * gemms + hbm_time(r, 2.0 * UNFUSED_SCORE_BYTES * x->es * scores);
	}
}

static void layer_elementwise(const struct ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	int moe = m->num_experts > 1;
	double top = moe ? m->top_k : 1;
	double T = x->T, h = x->h, t = x->t;
	double T_sp = x->l->sp ? T / t : T;
	double per_f = mlp_is_gated(m->mlp) ? ELEM_BYTES_PER_F_GATED : ELEM_BYTES_PER_F;
	double bytes = ELEM_BYTES_PER_H * T_sp * h + per_f * T * (double)m->ffn * top / t +
		       ELEM_BYTES_PER_QKV * T * (x->heads_l + 2.0 * x->kv_l) * m->head_dim;
	double fixed = x->k->layer_fixed_us * 1e-6;

	bytes *= x->es;
	if (x->o->precision == PREC_FP8)
		bytes *= x->k->fp8_elementwise;
	if (moe)
		bytes += MOE_PERMUTE_BYTES * T * top * h;
	if (curve_set_bw(x->o->curves, CURVE_BW_LAYER, bytes) >= 0) {
		/* measured (--profile): these kernels' own rate, their
		 * launches included */
		lc->elem_f = curve_set_bw(x->o->curves, CURVE_BW_LAYER, bytes);
		lc->elem_b = curve_set_bw(x->o->curves, CURVE_BW_LAYER, ELEM_BWD_FACTOR * bytes);
		return;
	}
	lc->elem_f = hbm_time(&x->run, bytes) + fixed;
	lc->elem_b = hbm_time(&x->run, ELEM_BWD_FACTOR * bytes) + LAYER_FIXED_BWD_RATIO * fixed;
}

/* Two collectives forward and two backward per layer (all-reduces; with
 * SP all-gathers and reduce-scatters, the input gathered again for the
 * weight gradient), overlapped as the framework does. */
static void layer_tp_comm(const struct ctx *x, struct layer_cost *lc)
{
	int n = x->l->tp;
	double act = x->ab * x->T * x->h, fwd, bwd;
	const struct link *k = &x->links.tp;
	double res = x->k->tp_overlap_exposed;

	if (n <= 1)
		return;
	if (x->l->sp) {
		double ag = ctime(x, COLL_ALLGATHER, act, n, k);
		double rs = ctime(x, COLL_REDUCESCATTER, act, n, k);
		fwd = 2 * ag + 2 * rs;
		bwd = 4 * ag + 2 * rs;
	} else {
		double ar = ctime(x, COLL_ALLREDUCE, act, n, k);
		fwd = 2 * ar;
		bwd = 2 * ar;
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
	lc->tp_f = fwd;
	lc->tp_b = bwd;
}

/* Ring attention: K and V blocks go round the cp ranks, c-1 steps
 * forward and with their gradients backward, each hidden behind that
 * step's attention. */
static void layer_cp_comm(const struct ctx *x, struct layer_cost *lc)
{
	int n = x->l->cp;
	double kv, step;
	if (n <= 1)
		return;
	kv = 2.0 * x->ab * x->b * x->sl * x->kv_l * x->m->head_dim;
	step = ctime(x, COLL_SENDRECV, kv, 2, &x->links.cp);
	lc->cp_f = fmax(0.0, (n - 1) * step - lc->attn_f * (n - 1) / n) + step;
	lc->cp_b = fmax(0.0, 2.0 * (n - 1) * step - lc->attn_b * (n - 1) / n) + step;
}

/* Dispatch and combine all-to-alls, forward and again backward, of the
 * routed tokens (k copies). */
static void layer_ep_comm(const struct ctx *x, struct layer_cost *lc)
{
	double T_sp, a2a;
	if (x->m->num_experts <= 1 || x->l->ep <= 1)
		return;
	T_sp = x->l->sp ? x->T / x->t : x->T;
	a2a = ctime(x, COLL_ALLTOALL, x->ab * T_sp * x->h * x->m->top_k, x->l->ep,
			&x->links.ep);
	lc->ep_f = 2 * a2a;
	lc->ep_b = 2 * a2a;
}

/* Full recomputation replays the layer's forward in its backward;
 * selective only the attention core. */
static void layer_recompute(const struct ctx *x, struct layer_cost *lc)
{
	if (x->l->recompute == RECOMPUTE_FULL)
		lc->recompute = lc->gemm_f + lc->attn_f + lc->elem_f + lc->tp_f +
				lc->cp_f + lc->ep_f;
	else if (x->l->recompute == RECOMPUTE_SELECTIVE)
		lc->recompute = lc->attn_f;
}

static void layer_cost(const struct ctx *x, struct layer_cost *lc)
{
	memset(lc, 0, sizeof *lc);
	layer_gemms(x, lc);
	layer_attention(x, lc);
	layer_elementwise(x, lc);
	layer_tp_comm(x, lc);
	layer_cp_comm(x, lc);
	layer_ep_comm(x, lc);
	layer_recompute(x, lc);
}

/* ---- chunks, edges and stages --------------------------------------------- */

/* The largest stage's layer count: the reference a chunk is priced on. */
static int most_stage_layers(const struct ctx *x)
{
	int most = 0;
	for (int i = 0; i < x->l->pp; i++) {
		int n = memory_stage_layers(x->m, x->l, x->o, i);
		if (n > most)
			most = n;
	}
	return most;
}

static void chunk_costs(const struct ctx *x, const struct layer_cost *lc,
			double chunk_layers, struct prediction *p)
{
	p->chunk.fwd_s = chunk_layers * (lc->gemm_f + lc->attn_f + lc->elem_f + lc->tp_f +
					 lc->cp_f + lc->ep_f);
	p->chunk.recompute_s = chunk_layers * lc->recompute;
	p->chunk.bwd_s = chunk_layers * (lc->gemm_b + lc->attn_b + lc->elem_b + lc->tp_b +
					 lc->cp_b + lc->ep_b) + p->chunk.recompute_s;
	p->chunk.bwd_w_s = chunk_layers * lc->gemm_bw;
}

/* The embedding on the first stage, the LM head and loss on the last
 * (never recomputed). */
static void edge_costs(const struct ctx *x, struct prediction *p)
{
	struct layer_cost head = { 0 };
	double T = x->T, h = x->h, V = (double)x->m->vocab, t = x->t;
	linear(&x->run, T, V / t, h, &head);
	p->first_extra_fwd_s = hbm_time(&x->run, EMBED_FWD_BYTES * x->es * T * h);
	p->first_extra_bwd_s = hbm_time(&x->run, EMBED_BWD_BYTES * x->es * T * h);
	p->last_extra_fwd_s = head.gemm_f + hbm_time(&x->run, LOGIT_BYTES * x->es * T * V / t);
	p->last_extra_bwd_s = head.gemm_b + hbm_time(&x->run, LOGIT_BYTES * x->es * T * V / t);
}

/* One activation (or its gradient) per microbatch and boundary: the
 * TP/SP shard for Megatron and torch, the whole activation from every TP
 * rank for DeepSpeed's engine, which also interprets one instruction per
 * transfer. */
static void pipeline_p2p(const struct ctx *x, struct prediction *p)
{
	double bytes = x->ab * x->T * x->h;
	p->p2p_s = 0;
	if (x->l->pp <= 1)
		return;
	if (x->o->b.pipe != FW_PIPE_DEEPSPEED)
		bytes /= x->t;
	p->p2p_s = ctime(x, COLL_SENDRECV, bytes, 2, &x->links.pp);
	if (x->o->b.pipe == FW_PIPE_DEEPSPEED)
		p->p2p_s += x->k->ds_pipe_step_ms * 1e-3;
}

struct stage_times {
	double t_max, t_avg;     /* per microbatch, all chunks of a stage */
	double body_max;         /* the busiest stage's transformer layers alone */
	double layer_mb;         /* one layer's forward + backward, one microbatch */
};

static void stage_times(const struct ctx *x, const struct layer_cost *lc,
			const struct prediction *p, struct stage_times *st)
{
	int pp = x->l->pp;
	double sum = 0, first = p->first_extra_fwd_s + p->first_extra_bwd_s;
	double last = p->last_extra_fwd_s + p->last_extra_bwd_s;

	st->layer_mb = lc->gemm_f + lc->attn_f + lc->elem_f + lc->tp_f + lc->cp_f + lc->ep_f +
		       lc->gemm_b + lc->attn_b + lc->elem_b + lc->tp_b + lc->cp_b + lc->ep_b +
		       lc->recompute;
	st->t_max = 0;
	st->body_max = 0;
	for (int i = 0; i < pp; i++) {
		double body = memory_stage_layers(x->m, x->l, x->o, i) * st->layer_mb;
		double t = body + (i == 0 ? first : 0) + (i == pp - 1 ? last : 0);
		sum += t;
		if (t > st->t_max) {
			st->t_max = t;
			st->body_max = body;
		}
	}
	st->t_avg = sum / pp;
}

/* ---- data parallelism and the optimizer ------------------------------------- */

/* The parameters a GPU holds: the larger of the first, a middle and the
 * last stage. */
static void largest_stage_params(const struct ctx *x, struct stage_params *out)
{
	int cand[3] = { 0, x->l->pp / 2, x->l->pp - 1 };
	memory_stage_params(x->m, x->l, x->o, 0, out);
	for (int i = 1; i < 3; i++) {
		struct stage_params s;
		memory_stage_params(x->m, x->l, x->o, cand[i], &s);
		if (s.dense + s.expert > out->dense + out->expert)
			*out = s;
	}
}

/* ZeRO-3 parameter all-gathers per microbatch: forward and backward,
 * and with DeepSpeed once more for the recomputed forward; FSDP keeps a
 * layer gathered through its recomputation, and without
 * reshard-after-forward gathers once. */
static int zero3_gathers(const struct train_opts *o, const struct layout *l)
{
	if (o->b.sharding == FW_SHARD_FSDP)
		return o->b.reshard_after_forward ? 2 : 1;
	return l->recompute == RECOMPUTE_FULL ? 3 : 2;
}

static void dp_reduction(const struct ctx *x, const struct stage_params *sp,
			 const struct stage_times *st, struct prediction *p)
{
	const struct layout *l = x->l;
	const struct link *k = &x->links.dp;
	struct time_breakdown *tb = &p->time;
	double g = x->o->b.grad_bytes; /* the same bytes as in memory */
	double w = x->o->b.fp8_weights ? 1.0 : x->ab; /* the weights gathered */
	double res = x->k->dp_overlap_unhidden;
	int n = l->dp * l->cp, ne = n / l->ep;
	double rs = 0, ag = 0, rs_exposed, ag_exposed = 0;
	long micro = layout_microbatches(l);

	if (l->zero == 0) {
		rs = ctime(x, COLL_ALLREDUCE, g * sp->dense, n, k) +
		     ctime(x, COLL_ALLREDUCE, g * sp->expert, ne, k);
	} else if (l->zero <= 2) {
		/* Reduce-scatter the gradients; all-gather the updated weights. */
		rs = ctime(x, COLL_REDUCESCATTER, g * sp->dense, n, k) +
		     ctime(x, COLL_REDUCESCATTER, g * sp->expert, ne, k);
		ag = ctime(x, COLL_ALLGATHER, w * sp->dense, n, k) +
		     ctime(x, COLL_ALLGATHER, w * sp->expert, ne, k);
	}
	tb->dp_comm_total = rs + ag;
	if (l->zero >= 3) {
		/* Gathers issued layer by layer, one collective per GPU on its
		 * own rail: no sharing of a node's NICs across channels. */
		struct link z3 = *k;
		double all = sp->dense + sp->expert, per_mb, exposed;
		if (z3.cls == LINK_NET)
			z3.bw_gbps = x->c->net.bw_gbps;
		per_mb = ctime(x, COLL_ALLGATHER, w * all, n, &z3) * zero3_gathers(x->o, l) +
			 ctime(x, COLL_REDUCESCATTER, g * all, n, &z3);
		exposed = fmax(0.0, per_mb - st->t_max) +
			  x->k->zero3_unhidden * fmin(per_mb, st->t_max);
		p->dp_reduce_s = 0;
		tb->dp_comm_total = per_mb * micro;
		tb->dp_comm_exposed = exposed * micro;
		return;
	}
	/* The gradient buckets reduce while the last microbatch's backward
	 * walks back through the stage's chunks; the weight buckets gather
	 * while the next step's first forward walks forward through them. */
	rs_exposed = x->o->b.overlap_grad_reduce
			     ? fmax(0.0, rs - l->vp * p->chunk.bwd_s) + res * rs
			     : rs;
	if (ag > 0)
		ag_exposed = x->o->b.overlap_param_gather
				     ? fmax(0.0, ag - l->vp * p->chunk.fwd_s) + res * ag
				     : ag;
	p->dp_reduce_s = rs;
	p->dp_gather_exposed_s = ag_exposed;
	tb->dp_comm_exposed = rs_exposed + ag_exposed;
}

static double optimizer_step(const struct ctx *x, const struct stage_params *sp)
{
	int n = x->l->dp * x->l->cp, ne = n / x->l->ep;
	double local = x->l->zero >= 1 ? sp->dense / n + sp->expert / ne
				       : sp->dense + sp->expert;
	/* measured (--profile): the AdamW kernel's rate on the bytes it
	 * moves (28 per parameter, and the compute copy below fp32) */
	double adam = curve_set_bw(x->o->curves, CURVE_BW_OPTIMIZER,
				   (28.0 + (x->ab < 4 ? x->ab : 0)) * local);
	if (adam >= 0)
		return adam + hbm_time(&x->run, GRAD_PASS_BYTES * (sp->dense + sp->expert));
	return hbm_time(&x->run, ADAM_BYTES_PER_PARAM * local +
				      GRAD_PASS_BYTES * (sp->dense + sp->expert)) +
	       x->k->step_fixed_ms * 1e-3;
}

/* ---- the step ----------------------------------------------------------- */

static double closed_form_bubble(const struct ctx *x, const struct stage_times *st,
				 const struct prediction *p)
{
	double pp = x->l->pp, v = x->l->vp, p2p = p->p2p_s;
	if (x->l->pp <= 1)
		return 0;
	switch (x->l->schedule) {
	case SCHED_INTERLEAVED:
		return (pp - 1) * (st->t_avg / v + 2.0 * p2p);
	case SCHED_ZB_H1:
		return fmax(0.0, (pp - 1) * (st->t_avg - 2.0 * v * p->chunk.bwd_w_s + 2.0 * p2p));
	case SCHED_GPIPE:
	case SCHED_1F1B:
		break;
	}
	return (pp - 1) * (st->t_avg + 2.0 * p2p);
}

/* The bottleneck stage's microbatches, the fill and drain of the
 * pipeline, the blocking transfers, the exposed DP reduction and the
 * optimizer; the bottleneck stage's time split into terms. */
static void assemble_step(const struct ctx *x, const struct layer_cost *lc,
			  const struct stage_times *st, struct prediction *p)
{
	double micro = (double)p->microbatches;
	double layers = st->layer_mb > 0 ? st->body_max / st->layer_mb : 0;
	struct time_breakdown *tb = &p->time;

	tb->bubble = closed_form_bubble(x, st, p);
	/* Each chunk's forward and backward wait for one transfer. */
	tb->pp_comm = x->l->pp > 1 ? micro * 2.0 * p->p2p_s * x->l->vp : 0;
	tb->optimizer = p->optimizer_s;
	tb->compute = micro * (layers * (lc->gemm_f + lc->gemm_b + lc->attn_f + lc->attn_b +
					 lc->elem_f + lc->elem_b) +
			       (st->t_max - st->body_max));
	tb->tp_comm = micro * layers * (lc->tp_f + lc->tp_b);
	tb->cp_comm = micro * layers * (lc->cp_f + lc->cp_b);
	tb->ep_comm = micro * layers * (lc->ep_f + lc->ep_b);
	tb->recompute = micro * layers * lc->recompute;
	p->step_time_s = micro * st->t_max + tb->bubble + tb->pp_comm + tb->dp_comm_exposed +
			 tb->optimizer;
	{
		double span = micro * st->t_max + tb->bubble + tb->pp_comm;
		p->bubble_fraction = x->l->pp > 1 && span > 0 ? 1.0 - micro * st->t_avg / span : 0;
	}
}

static void throughput(const struct ctx *x, struct prediction *p)
{
	double gpus = (double)layout_gpus(x->l);
	double peak = x->run.peak_flops;
	p->model_flops = cost_model_flops(x->m, x->o->seq, x->l->gbs);
	p->hw_flops = p->model_flops * (x->l->recompute == RECOMPUTE_FULL ? 4.0 / 3.0 : 1.0);
	p->tokens_per_s = (double)x->l->gbs * x->o->seq / p->step_time_s;
	p->tflops_per_gpu = p->model_flops / p->step_time_s / gpus / 1e12;
	p->mfu = p->model_flops / (p->step_time_s * gpus * peak);
	p->hfu = p->hw_flops / (p->step_time_s * gpus * peak);
}

/* ---- memory and rejections -------------------------------------------------- */

static void predict_memory(const struct ctx *x, struct prediction *p)
{
	double cap = (x->o->max_memory_gib > 0 ? x->o->max_memory_gib : x->c->gpu.mem_gib) * GIB;
	memory_peak(x->m, x->c, x->l, x->o, &p->mem);
	p->feasible = 1;
	if (p->mem.total > cap) {
		p->feasible = 0;
		p->reject = REJECT_OOM;
		snprintf(p->reject_msg, sizeof p->reject_msg,
			 "needs %.1f GiB per GPU, has %.1f", p->mem.total / GIB, cap / GIB);
	}
}

/* What the framework cannot run outranks memory; the prediction is still
 * made, for simulate to show. */
static void framework_reject(const struct ctx *x, struct prediction *p)
{
	enum reject r = framework_check_layout(x->o->fw, x->o->precision, x->l);
	if (r == REJECT_NONE)
		return;
	p->feasible = 0;
	p->reject = r;
	snprintf(p->reject_msg, sizeof p->reject_msg, "%s cannot run it: %s",
		 x->o->fw->label, reject_key(r));
}

void cost_group_links(const struct cluster *c, const struct layout *l,
		      const struct train_opts *o, struct group_links *g)
{
	g->tp_stride = layout_dim_stride(l, &o->order, DIM_TP);
	g->cp_stride = layout_dim_stride(l, &o->order, DIM_CP);
	g->dp_stride = layout_dim_stride(l, &o->order, DIM_DP);
	g->pp_stride = layout_dim_stride(l, &o->order, DIM_PP);
	g->tp = cluster_group_link(c, l->tp, (int)g->tp_stride);
	g->cp = cluster_group_link(c, l->cp, (int)g->cp_stride);
	g->pp = cluster_group_link(c, l->pp, (int)g->pp_stride);
	/* Gradients are reduced over the dp x cp ranks that share weights:
	 * one group when cp and dp are adjacent in the order, else as slow
	 * as the slower of the two. */
	if (l->cp > 1 && g->dp_stride == g->cp_stride * l->cp) {
		g->dp = cluster_group_link(c, l->dp * l->cp, (int)g->cp_stride);
	} else {
		struct link d = cluster_group_link(c, l->dp, (int)g->dp_stride);
		g->dp = d;
		if (l->cp > 1 && g->cp.bw_gbps * g->cp.eff < d.bw_gbps * d.eff)
			g->dp = g->cp;
	}
	/* Expert-parallel groups are consecutive ranks of the data-parallel
	 * (x context-parallel) dimension, as Megatron-LM folds them. */
	g->ep = cluster_group_link(c, l->ep,
				   (int)(l->cp > 1 ? g->cp_stride : g->dp_stride));
}

enum pplan_status cost_predict(const struct model_spec *m,
			       const struct cluster *c,
			       const struct layout *l,
			       const struct train_opts *o,
			       struct prediction *p, struct perr *e)
{
	struct ctx x;
	struct layer_cost lc;
	struct stage_times st;
	struct stage_params sp;

	memset(p, 0, sizeof *p);
	/* Every divisor below is a degree: none may be 0, whoever built l
	 * (layout_check says the same in a sentence). */
	if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->ep < 1 ||
	    l->vp < 1 || l->mbs < 1 || o->seq < 1)
		return perr_set(e, PPLAN_EINPUT,
				"tp, pp, dp, cp, ep, vp, mbs and seq must all be at least 1");
	if (c->gpu.peak_tflops[o->precision] <= 0) {
		p->reject = REJECT_PRECISION;
		snprintf(p->reject_msg, sizeof p->reject_msg, "%s has no %s tensor cores",
			 c->gpu.name, precision_name(o->precision));
		return perr_set(e, PPLAN_EINPUT, "%s", p->reject_msg);
	}
	if (layout_gpus(l) != cluster_gpus(c))
		return perr_set(e, PPLAN_EINPUT,
				"the layout uses %ld GPUs but the cluster has %ld",
				layout_gpus(l), cluster_gpus(c));
	ctx_init(&x, m, c, l, o);
	p->microbatches = layout_microbatches(l);

	predict_memory(&x, p);
	layer_cost(&x, &lc);
	p->split_layers = m->layers;
	p->split_ref = most_stage_layers(&x);
	chunk_costs(&x, &lc, (double)p->split_ref / l->vp, p);
	edge_costs(&x, p);
	pipeline_p2p(&x, p);
	stage_times(&x, &lc, p, &st);
	largest_stage_params(&x, &sp);
	dp_reduction(&x, &sp, &st, p);
	p->optimizer_s = optimizer_step(&x, &sp);
	assemble_step(&x, &lc, &st, p);
	throughput(&x, p);
	framework_reject(&x, p);
	return PPLAN_OK;
}
