/*
 * cost.c: the time model and the assembly of a prediction.
 *
 * One transformer layer is priced for one microbatch on one GPU: GEMMs
 * from their real shapes under TP/CP/EP (sim/gemm.c), the attention core
 * as fused flash attention (or unfused batched GEMMs + softmax for the
 * frameworks of 2021-22), memory-bound element-wise kernels at HBM
 * bandwidth, and the TP, CP and EP collectives of the layer on the links
 * their groups use (sim/collective.c, cluster_group_link).  Chunks of
 * layers make pipeline stages; the pipeline, the data-parallel gradient
 * reduction and the optimizer step make the step.  Every formula and its
 * source is in sim/MODEL.md; the constants below are named there too.
 */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collective.h"
#include "gemm.h"
#include "memory.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Fused attention reaches this fraction of the GEMM ceiling, forward and
 * backward (FlashAttention-2 reports up to ~70% of A100 peak forward and
 * ~63% backward; with the A100 ceiling of 0.80 these give 0.68 and 0.56
 * of peak). */
#define ATTN_FWD_REL 0.85
#define ATTN_BWD_REL 0.70
/* Kernel launches and small ops per layer that no formula above covers. */
#define LAYER_FIXED_FWD_S 30e-6
#define LAYER_FIXED_BWD_S 60e-6
/* Share of TP communication left exposed when it is overlapped with the
 * GEMMs (userbuffers / tp-comm-overlap). */
#define TP_OVERLAP_EXPOSED 0.15
/* DeepSpeed's pipeline engine interprets one instruction per send or
 * receive and hands tensors over with blocking collectives: a fixed cost
 * per transfer on top of the bytes. */
#define DS_PIPE_STEP_S 10e-3
/* Optimizer: bytes moved per local parameter (read master, m, v, grad;
 * write master, m, v, half-precision weight) and a fixed cost for the
 * gradient-norm reduction and launches. */
#define ADAM_BYTES_PER_PARAM 30.0
#define OPTIMIZER_FIXED_S 5e-3
/* ZeRO-3: share of the shorter of (gathers, compute) that prefetching
 * does not hide. */
#define ZERO3_UNHIDDEN 0.30
/* MoE: tokens on the busiest expert relative to the mean, and the bytes
 * per routed token and hidden unit that permuting tokens to their experts
 * and back (with the weighted sum) moves through HBM. */
#define MOE_IMBALANCE 1.15
#define MOE_PERMUTE_BYTES 10.0
/* FlashAttention's backward does 2.5x the forward FLOPs (it recomputes
 * the scores: five matrix products instead of two). */
#define FLASH_BWD_FLOPS 2.5
/* Unfused attention: bytes per score through HBM forward (write scores,
 * read/write the softmax, dropout mask and output), twice that backward. */
#define UNFUSED_SCORE_BYTES 11.0
/* fp8: casts and amax reductions add to the element-wise traffic. */
#define FP8_ELEMENTWISE_FACTOR 1.3
/* Overlapped DP communication still slows the GPU it shares (NCCL
 * kernels take SMs and HBM bandwidth): this share of it is never hidden. */
#define DP_OVERLAP_UNHIDDEN 0.05

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
};

struct ctx {
	const struct model_spec *m;
	const struct cluster *c;
	const struct layout *l;
	const struct train_opts *o;
	const struct gpu_spec *g;
	double b, s, sl, T, h, t;
	struct link tp_link, cp_link, dp_link, pp_link, ep_link;
};

/* Forward + data-gradient + weight-gradient time of one linear layer
 * with `tokens` rows, input width k, output width n. */
static void linear(const struct ctx *x, double tokens, double n, double k,
		   double *f, double *b, double *bw)
{
	enum precision p = x->o->precision;
	double tf = gemm_time(x->g, p, tokens, n, k);
	double td = gemm_time(x->g, p, tokens, k, n);
	double tw = gemm_time(x->g, p, k, n, tokens);
	*f += tf;
	*b += td + tw;
	*bw += tw;
}

static void layer_cost(const struct ctx *x, struct layer_cost *lc)
{
	const struct model_spec *m = x->m;
	const struct layout *l = x->l;
	const struct gpu_spec *g = x->g;
	double T = x->T, h = x->h, t = x->t, dh = (double)m->head_dim;
	double heads_l = (double)m->heads / t;
	double kv_l = m->kv_heads >= l->tp ? (double)m->kv_heads / t : 1.0;
	double f = (double)m->ffn;
	int moe = m->num_experts > 1;
	double top = moe ? m->top_k : 1;
	double gated = mlp_is_gated(m->mlp);
	double T_sp = l->sp ? T / t : T;
	double act_bytes = 2.0 * T * h; /* one activation tensor, bf16 */
	/* The attention core runs in the training precision; under fp8 in
	 * bf16, or fp16 on GPUs without bf16 (V100, P100); fp32 on the CPU. */
	enum precision ap = x->o->precision;
	if (ap == PREC_FP8 || g->peak_tflops[ap] <= 0)
		ap = g->peak_tflops[PREC_BF16] > 0 ? PREC_BF16 : PREC_FP16;
	double attn_peak = g->peak_tflops[ap] * 1e12 * g->gemm_eff_max[ap];

	memset(lc, 0, sizeof *lc);

	/* GEMMs. */
	linear(x, T, (heads_l + 2.0 * kv_l) * dh, h, &lc->gemm_f, &lc->gemm_b,
	       &lc->gemm_bw);
	linear(x, T, h, heads_l * dh, &lc->gemm_f, &lc->gemm_b, &lc->gemm_bw);
	if (moe) {
		/* Each GPU holds E/ep experts; balanced routing gives each
		 * T*ep*k/E tokens (the ep group's tokens, k experts each). */
		double local = (double)m->num_experts / l->ep;
		double tok = T * l->ep * top / m->num_experts;
		/* The busiest expert sets the pace: routing balanced by an
		 * auxiliary loss still leaves it MOE_IMBALANCE x the mean. */
		double ef = 0, eb = 0, ebw = 0;
		tok *= MOE_IMBALANCE;
		/* The local experts' GEMMs are alike: price one, count them
		 * (a loop over 2^20 experts per layout made search take hours). */
		linear(x, tok, (gated ? 2.0 : 1.0) * f / t, h, &ef, &eb, &ebw);
		linear(x, tok, h, f / t, &ef, &eb, &ebw);
		lc->gemm_f += local * ef;
		lc->gemm_b += local * eb;
		lc->gemm_bw += local * ebw;
		linear(x, T, m->num_experts, h, &lc->gemm_f, &lc->gemm_b,
		       &lc->gemm_bw);
	} else {
		linear(x, T, (gated ? 2.0 : 1.0) * f / t, h, &lc->gemm_f,
		       &lc->gemm_b, &lc->gemm_bw);
		linear(x, T, h, f / t, &lc->gemm_f, &lc->gemm_b, &lc->gemm_bw);
	}

	/* Attention core. */
	if (x->o->b.attention == FW_ATTN_FLASH) {
		/* Causal: half of the s_q x s_kv score matrix is computed
		 * (ring attention with load balancing keeps that under CP). */
		double fl = 4.0 * x->b * x->sl * x->s * heads_l * dh * 0.5;
		/* One kernel per ring step (one step without CP) on s/cp x
		 * s/cp blocks; small kernels saturate the GPU as small GEMMs
		 * do. */
		double kernel = fl / l->cp / 1e9;
		double sat = kernel / (kernel + g->gemm_half_gflop);
		lc->attn_f = fl / (attn_peak * ATTN_FWD_REL * sat);
		lc->attn_b = FLASH_BWD_FLOPS * fl / (attn_peak * ATTN_BWD_REL * sat);
	} else {
		/* Unfused: batched QK^T and AV GEMMs over the full square,
		 * then scale-mask-softmax and dropout through HBM (about 11
		 * bytes per score forward, twice that backward). */
		double batches = x->b * heads_l;
		double qk = gemm_time(g, ap, x->sl, x->s, dh);
		double av = gemm_time(g, ap, x->sl, dh, x->s);
		double scores = batches * x->sl * x->s;
		lc->attn_f = batches * (qk + av) + hbm_time(g, UNFUSED_SCORE_BYTES * scores);
		lc->attn_b = batches * 2.0 * (qk + av) +
			     hbm_time(g, 2.0 * UNFUSED_SCORE_BYTES * scores);
	}

	/* Element-wise kernels: two norms, two dropout+residual adds on
	 * T_sp tokens; bias/activation on the MLP intermediate; rotary and
	 * layout changes on Q, K, V.  Backward moves about twice the bytes. */
	{
		double bytes = 22.0 * T_sp * h +
			       (gated ? 6.0 : 4.0) * T * f * top / t +
			       4.0 * T * (heads_l + 2.0 * kv_l) * dh;
		if (x->o->precision == PREC_FP8)
			bytes *= FP8_ELEMENTWISE_FACTOR;
		if (moe) /* permute tokens to experts and back, weighted sum */
			bytes += MOE_PERMUTE_BYTES * T * top * h;
		lc->elem_f = hbm_time(g, bytes) + LAYER_FIXED_FWD_S;
		lc->elem_b = hbm_time(g, 2.0 * bytes) + LAYER_FIXED_BWD_S;
	}

	/* Tensor-parallel collectives: two all-reduces forward and two
	 * backward, or with SP two all-gathers + two reduce-scatters forward
	 * and two reduce-scatters + four all-gathers backward (the input is
	 * gathered again for the weight gradient). */
	if (l->tp > 1) {
		int n = l->tp;
		double fwd, bwd;
		if (l->sp) {
			double ag = coll_time(COLL_ALLGATHER, act_bytes, n, &x->tp_link);
			double rs = coll_time(COLL_REDUCESCATTER, act_bytes, n,
					      &x->tp_link);
			fwd = 2 * ag + 2 * rs;
			bwd = 4 * ag + 2 * rs;
		} else {
			double ar = coll_time(COLL_ALLREDUCE, act_bytes, n, &x->tp_link);
			fwd = 2 * ar;
			bwd = 2 * ar;
		}
		/* Pipelined overlap (ring exchange split into GEMM chunks)
		 * hides each collective behind the GEMM it feeds, both ways;
		 * bulk overlap only the backward's, behind the weight-gradient
		 * GEMMs that do not depend on it. */
		/* Either needs peer memory access (Transformer Engine's
		 * userbuffers): a TP group that spans the network gets none. */
		int peer = x->tp_link.cls != LINK_NET;
		if (peer && x->o->b.tp_overlap == FW_TPO_PIPELINED) {
			fwd = fmax(TP_OVERLAP_EXPOSED * fwd, fwd - lc->gemm_f);
			bwd = fmax(TP_OVERLAP_EXPOSED * bwd, bwd - lc->gemm_b);
		} else if (peer && x->o->b.tp_overlap == FW_TPO_BULK) {
			bwd = fmax(TP_OVERLAP_EXPOSED * bwd, bwd - lc->gemm_bw);
		}
		lc->tp_f = fwd;
		lc->tp_b = bwd;
	}

	/* Context parallelism: ring attention passes K and V blocks around
	 * the cp ranks, cp-1 steps forward (K, V) and backward (K, V and
	 * their gradients), overlapped with the attention of each step. */
	if (l->cp > 1) {
		int n = l->cp;
		double kv = 2.0 * 2.0 * x->b * x->sl * kv_l * dh;
		double step = coll_time(COLL_SENDRECV, kv, 2, &x->cp_link);
		double cf = (n - 1) * step, cb = 2.0 * (n - 1) * step;
		lc->cp_f = fmax(0.0, cf - lc->attn_f * (n - 1) / n) + step;
		lc->cp_b = fmax(0.0, cb - lc->attn_b * (n - 1) / n) + step;
	}

	/* Expert parallelism: dispatch and combine all-to-alls forward and
	 * again backward, each moving the routed tokens (k copies). */
	if (moe && l->ep > 1) {
		double bytes = 2.0 * T_sp * h * top;
		double a2a = coll_time(COLL_ALLTOALL, bytes, l->ep, &x->ep_link);
		lc->ep_f = 2 * a2a;
		lc->ep_b = 2 * a2a;
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

static double busbw(const struct link *k)
{
	return k->bw_gbps * k->eff;
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
	if (l->cp > 1 && g->dp_stride == g->cp_stride * l->cp)
		g->dp = cluster_group_link(c, l->dp * l->cp, (int)g->cp_stride);
	else {
		struct link d = cluster_group_link(c, l->dp, (int)g->dp_stride);
		g->dp = d;
		if (l->cp > 1 && busbw(&g->cp) < busbw(&d))
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
	double lc_layers, v = l->vp, pp = l->pp;
	double fwd, bwd, recomp, body_mb, extra_first, extra_last;
	double t_first, t_last, t_mid, t_max, t_avg;
	long micro;
	double cap;

	memset(p, 0, sizeof *p);
	/* Every divisor below is a degree: none may be 0, whoever built l
	 * (layout_check says the same in a sentence). */
	if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->ep < 1 ||
	    l->vp < 1 || l->mbs < 1 || o->seq < 1)
		return perr_set(e, PPLAN_EINPUT,
				"tp, pp, dp, cp, ep, vp, mbs and seq must all be at least 1");
	if (c->gpu.peak_tflops[o->precision] <= 0) {
		p->reject = REJECT_PRECISION;
		snprintf(p->reject_msg, sizeof p->reject_msg,
			 "%s has no %s tensor cores", c->gpu.name,
			 precision_name(o->precision));
		return perr_set(e, PPLAN_EINPUT, "%s", p->reject_msg);
	}
	if (layout_gpus(l) != cluster_gpus(c))
		return perr_set(e, PPLAN_EINPUT,
				"the layout uses %ld GPUs but the cluster has %ld",
				layout_gpus(l), cluster_gpus(c));

	x.m = m; x.c = c; x.l = l; x.o = o; x.g = &c->gpu;
	x.b = l->mbs;
	x.s = (double)o->seq;
	x.sl = x.s / l->cp;
	x.T = x.b * x.sl;
	x.h = (double)m->hidden;
	x.t = l->tp;
	{
		struct group_links gl;
		cost_group_links(c, l, o, &gl);
		x.tp_link = gl.tp;
		x.cp_link = gl.cp;
		x.dp_link = gl.dp;
		x.pp_link = gl.pp;
		x.ep_link = gl.ep;
	}

	micro = layout_microbatches(l);
	p->microbatches = micro;

	/* Memory first: what does not fit is rejected with its size. */
	memory_peak(m, c, l, o, &p->mem);
	cap = (o->max_memory_gib > 0 ? o->max_memory_gib : c->gpu.mem_gib) * GIB;
	p->feasible = 1;
	if (p->mem.total > cap) {
		p->feasible = 0;
		p->reject = REJECT_OOM;
		snprintf(p->reject_msg, sizeof p->reject_msg,
			 "needs %.1f GiB per GPU, has %.1f", p->mem.total / GIB,
			 cap / GIB);
	}
	/* What the framework cannot run is rejected first; the prediction
	 * is still made, for simulate to show. */
	{
		enum reject fr = framework_check_layout(o->fw, o->precision, l);
		if (fr != REJECT_NONE) {
			p->feasible = 0;
			p->reject = fr;
			snprintf(p->reject_msg, sizeof p->reject_msg, "%s cannot run it: %s",
				 o->fw->label, reject_key(fr));
		}
	}

	/* One layer, then one model chunk (layers / (pp * vp)). */
	layer_cost(&x, &lc);
	{
		int most = 0;
		for (int i = 0; i < l->pp; i++) {
			int n = memory_stage_layers(m, l, o, i);
			if (n > most)
				most = n;
		}
		lc_layers = (double)most / v;
	}
	fwd = lc_layers * (lc.gemm_f + lc.attn_f + lc.elem_f + lc.tp_f +
			   lc.cp_f + lc.ep_f);
	bwd = lc_layers * (lc.gemm_b + lc.attn_b + lc.elem_b + lc.tp_b +
			   lc.cp_b + lc.ep_b);
	recomp = 0;
	if (l->recompute == RECOMPUTE_FULL)
		recomp = fwd;
	else if (l->recompute == RECOMPUTE_SELECTIVE)
		recomp = lc_layers * lc.attn_f; /* the core attention again */
	p->chunk.fwd_s = fwd;
	p->chunk.bwd_s = bwd + recomp;
	p->chunk.bwd_w_s = lc_layers * lc.gemm_bw;
	p->chunk.recompute_s = recomp;

	/* Embedding (first stage) and LM head + loss (last stage). */
	{
		double T = x.T, h = x.h, V = (double)m->vocab, t = x.t;
		double head_f = 0, head_b = 0, head_bw = 0;
		linear(&x, T, V / t, h, &head_f, &head_b, &head_bw);
		p->first_extra_fwd_s = hbm_time(x.g, 4.0 * T * h);
		p->first_extra_bwd_s = hbm_time(x.g, 8.0 * T * h);
		p->last_extra_fwd_s = head_f + hbm_time(x.g, 10.0 * T * V / t);
		p->last_extra_bwd_s = head_b + hbm_time(x.g, 10.0 * T * V / t);
	}

	/* Pipeline: one activation (or its gradient) per microbatch per
	 * boundary, T*h/tp elements (Megatron's scatter/gather or SP). */
	if (pp > 1) {
		/* DeepSpeed's pipeline engine sends the whole activation from
		 * every TP rank; Megatron-LM sends 1/tp of it and gathers. */
		double bytes = 2.0 * x.T * x.h;
		if (o->b.pipe != FW_PIPE_DEEPSPEED)
			bytes /= x.t;
		p->p2p_s = coll_time(COLL_SENDRECV, bytes, 2, &x.pp_link);
		if (o->b.pipe == FW_PIPE_DEEPSPEED)
			p->p2p_s += DS_PIPE_STEP_S;
	} else {
		p->p2p_s = 0;
	}

	body_mb = v * (p->chunk.fwd_s + p->chunk.bwd_s);
	extra_first = p->first_extra_fwd_s + p->first_extra_bwd_s;
	extra_last = p->last_extra_fwd_s + p->last_extra_bwd_s;
	if (pp > 1) {
		t_first = body_mb + extra_first;
		t_last = body_mb + extra_last;
		t_mid = body_mb;
		t_avg = (t_first + t_last + (pp - 2) * t_mid) / pp;
	} else {
		t_first = t_last = t_mid = t_avg = body_mb + extra_first + extra_last;
	}
	t_max = fmax(t_first, fmax(t_last, t_mid));

	/* Data-parallel gradient reduction (and ZeRO parameter gathers). */
	{
		struct stage_params sp;
		/* The framework's gradient dtype: the same bytes as in memory. */
		double grad_b = o->b.grad_bytes;
		int n = l->dp * l->cp;
		int ne = n / l->ep;
		double dense, expert, t_dp = 0;
		memory_stage_params(m, l, o, 0, &sp);
		{
			struct stage_params sl;
			memory_stage_params(m, l, o, l->pp - 1, &sl);
			if (sl.dense + sl.expert > sp.dense + sp.expert)
				sp = sl;
		}
		dense = sp.dense;
		expert = sp.expert;
		if (l->zero == 0) {
			t_dp = coll_time(COLL_ALLREDUCE, grad_b * dense, n, &x.dp_link) +
			       coll_time(COLL_ALLREDUCE, grad_b * expert, ne, &x.dp_link);
		} else if (l->zero <= 2) {
			t_dp = coll_time(COLL_REDUCESCATTER, grad_b * dense, n, &x.dp_link) +
			       coll_time(COLL_ALLGATHER, 2.0 * dense, n, &x.dp_link) +
			       coll_time(COLL_REDUCESCATTER, grad_b * expert, ne, &x.dp_link) +
			       coll_time(COLL_ALLGATHER, 2.0 * expert, ne, &x.dp_link);
		}
		p->time.dp_comm_total = t_dp;
		p->dp_reduce_s = t_dp;
		if (l->zero >= 3) {
			/* Per microbatch: gather the weights for the forward,
			 * again for the recomputation and the backward, and
			 * reduce-scatter the gradients; prefetching overlaps
			 * them with compute. */
			struct link z3 = x.dp_link;
			double ag, rs, per_mb, exposed;
			/* Parameter gathers are issued layer by layer, one
			 * collective per GPU on its own rail: no sharing of the
			 * node's NICs across channels (MODEL.md, ZeRO-3). */
			if (z3.cls == LINK_NET)
				z3.bw_gbps = c->net.bw_gbps;
			ag = coll_time(COLL_ALLGATHER, 2.0 * (dense + expert), n, &z3);
			rs = coll_time(COLL_REDUCESCATTER, grad_b * (dense + expert), n, &z3);
			per_mb = ag * zero3_gathers(o, l) + rs;
			exposed = fmax(0.0, per_mb - t_max) +
				  ZERO3_UNHIDDEN * fmin(per_mb, t_max);
			p->time.dp_comm_total = per_mb * micro;
			p->time.dp_comm_exposed = exposed * micro;
		} else if (o->b.overlap_grad_reduce) {
			/* Buckets reduce while the last microbatch's backward
			 * walks back through the stage's chunks. */
			double window = v * p->chunk.bwd_s;
			p->time.dp_comm_exposed = fmax(0.0, t_dp - window) +
						  DP_OVERLAP_UNHIDDEN * t_dp;
		} else {
			p->time.dp_comm_exposed = t_dp;
		}
		/* Optimizer step on the local shard. */
		{
			double local = l->zero >= 1 ? dense / n + expert / ne
						    : dense + expert;
			p->optimizer_s = hbm_time(x.g, ADAM_BYTES_PER_PARAM * local +
							       4.0 * (dense + expert)) +
					 OPTIMIZER_FIXED_S;
		}
	}

	/* The step: the bottleneck stage's microbatches, the fill and drain
	 * of the pipeline (the bubble), exposed p2p, exposed DP, optimizer. */
	{
		double bubble;
		/* Blocking send/recv: each chunk's forward and backward wait
		 * for one transfer (see sim/predict.c). */
		double pp_exposed = 2.0 * p->p2p_s * v;
		switch (l->schedule) {
		case SCHED_INTERLEAVED:
			bubble = (pp - 1) * (t_avg / v + 2.0 * p->p2p_s);
			break;
		case SCHED_ZB_H1: {
			double w = v * p->chunk.bwd_w_s;
			bubble = (pp - 1) * (t_avg - 2.0 * w + 2.0 * p->p2p_s);
			if (bubble < 0)
				bubble = 0;
			break;
		}
		case SCHED_GPIPE:
		case SCHED_1F1B:
		default:
			bubble = (pp - 1) * (t_avg + 2.0 * p->p2p_s);
			break;
		}
		if (pp == 1) {
			bubble = 0;
			pp_exposed = 0;
		}
		p->time.bubble = bubble;
		p->time.pp_comm = micro * pp_exposed;
		p->time.optimizer = p->optimizer_s;
		{
			/* Split the bottleneck stage's microbatch time into terms. */
			double lcl = v * lc_layers;
			double scale = micro;
			double comp = lcl * (lc.gemm_f + lc.gemm_b + lc.attn_f +
					     lc.attn_b + lc.elem_f + lc.elem_b);
			double extra = t_max - body_mb;
			p->time.compute = scale * (comp + extra);
			p->time.tp_comm = scale * lcl * (lc.tp_f + lc.tp_b);
			p->time.cp_comm = scale * lcl * (lc.cp_f + lc.cp_b);
			p->time.ep_comm = scale * lcl * (lc.ep_f + lc.ep_b);
			p->time.recompute = scale * v * p->chunk.recompute_s;
		}
		p->step_time_s = micro * t_max + p->time.bubble + p->time.pp_comm +
				 p->time.dp_comm_exposed + p->time.optimizer;
		{
			double span = micro * t_max + bubble + p->time.pp_comm;
			p->bubble_fraction = span > 0 ? 1.0 - micro * t_avg / span : 0;
			if (pp == 1)
				p->bubble_fraction = 0;
		}
	}

	/* Throughput and utilisation. */
	{
		double gpus = (double)layout_gpus(l);
		double peak = c->gpu.peak_tflops[o->precision] * 1e12;
		double recomp_flops = 0;
		p->model_flops = cost_model_flops(m, o->seq, l->gbs);
		if (l->recompute == RECOMPUTE_FULL)
			recomp_flops = p->model_flops / 3.0;
		p->hw_flops = p->model_flops + recomp_flops;
		p->tokens_per_s = (double)l->gbs * o->seq / p->step_time_s;
		p->tflops_per_gpu = p->model_flops / p->step_time_s / gpus / 1e12;
		p->mfu = p->model_flops / (p->step_time_s * gpus * peak);
		p->hfu = p->hw_flops / (p->step_time_s * gpus * peak);
	}
	return PPLAN_OK;
}
