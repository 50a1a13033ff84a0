/*
 * cost.c: the assembly of a prediction.  The stages are their layers'
 * costs (cost_layer.c: dense and MoE layers priced apart), a chunk the
 * reference stage's over vp; the pipeline, the data-parallel gradient
 * reduction and the optimizer step make the step.  cost_predict is a
 * straight run of the named steps below.  Every formula and constant is in
 * sim/MODEL.md; the fitted constants come from train_opts' cost_params.
 */
#include "cost_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "curves.h"
#include "memory.h"
#include "units.h"

/* Embedding: gather and write forward (4 B per element), scatter-add of
 * the gradient backward (8 B). */
#define EMBED_FWD_BYTES 4.0
#define EMBED_BWD_BYTES 8.0
/* LM head: bf16 logits, fp32 softmax and cross-entropy, per logit, each
 * way. */
#define LOGIT_BYTES 10.0
/* Adam's bytes per local parameter: train_opts_adam_bytes (read master,
 * m, v, grad; write master, m, v, half-precision weight: 30 in fp32);
 * and one fp32 pass over every gradient (norm, zeroing). */
#define GRAD_PASS_BYTES 4.0
/* The share of a node's host memory the offloaded states may take: the
 * rest for the OS, the data loader, pinned staging buffers and the
 * checkpoint copy (a judgment value, as the GPU cap's 90 %). */
#define HOST_MEM_FRACTION 0.8
/* Optimizer offload (sim/MODEL.md 7): the CPU's Adam step moves
 * train_opts_adam_bytes a parameter (30: the fp32 master, both moments and
 * the gradient read, the three states and the half-precision weight
 * written) at this share of the node's memory bandwidth (a prior: no
 * measured offload run fitted it; STREAM-like kernels reach 60-80 % of a
 * two-socket server's, Adam's several streams with the SIMD update about
 * half). */
#define CPU_ADAM_BW_EFF 0.5

/* ---- chunks, edges and stages --------------------------------------------- */

static double layer_cost_fwd(const struct layer_cost *lc)
{
	return lc->gemm_f + lc->attn_f + lc->elem_f + lc->tp_f + lc->cp_f + lc->ep_f;
}

static double layer_cost_bwd(const struct layer_cost *lc)
{
	return lc->gemm_b + lc->attn_b + lc->elem_b + lc->tp_b + lc->cp_b + lc->ep_b +
	       lc->recompute;
}

/* Stage i's transformer layers, one microbatch: its dense and MoE layers. */
struct body_memo {       /* the last stage body computed, for its twins */
	int n, moe, bf16;
	struct layer_cost b;
};

static void stage_body(const struct cost_ctx *x, int stage, struct body_memo *memo,
		       struct layer_cost *out)
{
	int n = memory_stage_layers(x->m, x->l, x->o, stage);
	int moe = memory_stage_moe_layers(x->m, x->l, x->o, stage);
	int bf = memory_stage_bf16_layers(x->m, x->l, x->o, stage);
	if (memo->n != n || memo->moe != moe || memo->bf16 != bf) {
		struct layer_cost *b = &memo->b;
		cost_layers_sum(&x->dense, n - moe, &x->moe, moe, b);
		/* bf16 layers of an fp8-class run: the stage's dense/MoE mix
		 * of them priced in bf16 instead (sim/MODEL.md 3) */
		if (bf > 0 && n > 0) {
			struct layer_cost b16, fast;
			cost_layers_sum(&x->dense16, (double)bf * (n - moe) / n, &x->moe16,
					(double)bf * moe / n, &b16);
			cost_layers_sum(&x->dense, (double)bf * (n - moe) / n, &x->moe,
					(double)bf * moe / n, &fast);
			cost_layers_sum(b, 1.0, &b16, 1.0, b);
			cost_layers_sum(b, 1.0, &fast, -1.0, b);
		}
		/* Block recomputation replays rc of the n layers; offloading
		 * moves off of them (sim/MODEL.md 4.4). */
		if (n > 0) {
			double rc = layout_recomputed_layers(x->l, n), off = layout_offloaded_layers(x->l, n);
			if (x->l->recompute == RECOMPUTE_FULL)
				b->recompute *= rc / n;
			b->elem_f += b->off_f * off / n;
			b->elem_b += b->off_b * off / n;
		}
		b->off_f = b->off_b = 0;
		memo->n = n;
		memo->moe = moe;
		memo->bf16 = bf;
	}
	*out = memo->b;
}

/* The reference stage a chunk is priced on: the most layers, and of
 * those the slowest. */
static int reference_stage(const struct cost_ctx *x, int *layers)
{
	int best = 0, most = -1;
	double slowest = -1;
	struct body_memo memo = { .n = -1 };
	for (int i = 0; i < x->l->pp; i++) {
		int n = memory_stage_layers(x->m, x->l, x->o, i);
		struct layer_cost b;
		double t;
		if (n < most)
			continue;
		stage_body(x, i, &memo, &b);
		t = layer_cost_fwd(&b) + layer_cost_bwd(&b);
		if (n > most || t > slowest) {
			best = i;
			most = n;
			slowest = t;
		}
	}
	*layers = most;
	return best;
}

/* One model chunk of the reference stage (its layers / vp). */
static void chunk_costs(const struct cost_ctx *x, int ref, struct prediction *p)
{
	struct layer_cost b;
	struct body_memo memo = { .n = -1 };
	double v = x->l->vp;
	stage_body(x, ref, &memo, &b);
	p->chunk.fwd_s = layer_cost_fwd(&b) / v;
	p->chunk.recompute_s = b.recompute / v;
	p->chunk.bwd_s = layer_cost_bwd(&b) / v;
	p->chunk.bwd_w_s = b.gemm_bw / v;
}

/* The embedding on the first stage, the LM head and loss on the last
 * (never recomputed). */
static void edge_costs(const struct cost_ctx *x, struct prediction *p)
{
	struct layer_cost head = { 0 };
	double T = x->T, h = x->h, V = (double)train_opts_vocab(x->o, x->l, x->m->vocab), t = x->t;
	cost_linear_trained(x, T, V / t, h, 0, &head); /* LoRA leaves the head frozen */
	p->first_extra_fwd_s = hbm_time(&x->run, EMBED_FWD_BYTES * x->es * T * h);
	/* the table's gradient (none where it is frozen) */
	p->first_extra_bwd_s = x->o->lora_rank > 0 ? 0
			       : hbm_time(&x->run, EMBED_BWD_BYTES * x->es * T * h);
	p->last_extra_fwd_s = head.gemm_f + hbm_time(&x->run, LOGIT_BYTES * x->es * T * V / t);
	p->last_extra_bwd_s = head.gemm_b + hbm_time(&x->run, LOGIT_BYTES * x->es * T * V / t);
}

/* One activation (or its gradient) per microbatch and boundary: the
 * TP/SP shard for Megatron and torch, the whole activation from every TP
 * rank for DeepSpeed's engine, which also interprets one instruction per
 * transfer. */
static void pipeline_p2p(const struct cost_ctx *x, struct prediction *p)
{
	double bytes = x->ab * x->T * x->h;
	p->p2p_s = 0;
	if (x->l->pp <= 1)
		return;
	if (x->o->b.pipe != FW_PIPE_DEEPSPEED)
		bytes /= x->t;
	p->p2p_s = cost_coll(x, COLL_SENDRECV, bytes, 2, &x->links.pp);
	if (x->o->b.pipe == FW_PIPE_DEEPSPEED)
		p->p2p_s += x->k->ds_pipe_step_ms * 1e-3;
}

struct stage_times {
	double t_max, t_avg;     /* per microbatch, all chunks of a stage */
	struct layer_cost body;  /* the busiest stage's transformer layers alone */
};

/* DualPipe pairs every forward chunk with a backward chunk of the other
 * direction and runs the pair's all-to-alls under its compute, on
 * DUALPIPE_COMM_SM_SHARE of the SMs (DeepSeek-V3 report 3.2.2: 20 of the
 * H800's 132 SMs keep IB and NVLink busy).  Compute X slowed on those SMs
 * while the all-to-alls C run: the pair takes max(C, X + share*C), so
 * what the EP terms keep of C is max(C - X, share*C) (sim/MODEL.md 6.2). */
#define DUALPIPE_COMM_SM_SHARE (20.0 / 132.0)

static void dualpipe_overlap(struct layer_cost *b)
{
	double c = b->ep_f + b->ep_b;
	double x = layer_cost_fwd(b) + layer_cost_bwd(b) - c;
	double kept;
	if (!(c > 0))
		return;
	kept = fmax(c - x, DUALPIPE_COMM_SM_SHARE * c);
	b->ep_f *= kept / c;
	b->ep_b *= kept / c;
}

/* Rank i's layers and time, one microbatch: stage i's with the embedding
 * on the first and the LM head on the last; under DualPipe the mean of
 * stages i and pp-1-i (half the microbatches run through each, the end
 * ranks carry half the embedding and half the head), their all-to-alls
 * paired. */
static double rank_time(const struct cost_ctx *x, const struct prediction *p, int i,
			struct body_memo *memo, struct layer_cost *out)
{
	int pp = x->l->pp;
	double first = p->first_extra_fwd_s + p->first_extra_bwd_s;
	double last = p->last_extra_fwd_s + p->last_extra_bwd_s;
	struct layer_cost mirror;
	int other = layout_mirror_stage(x->l, i);

	stage_body(x, i, memo, out);
	if (other < 0)
		return layer_cost_fwd(out) + layer_cost_bwd(out) + (i == 0 ? first : 0) +
		       (i == pp - 1 ? last : 0);
	stage_body(x, other, memo, &mirror);
	dualpipe_overlap(out);
	dualpipe_overlap(&mirror);
	cost_layers_sum(out, 0.5, &mirror, 0.5, out);
	return layer_cost_fwd(out) + layer_cost_bwd(out) +
	       (i == 0 || i == pp - 1 ? 0.5 * (first + last) : 0);
}

static void stage_times(const struct cost_ctx *x, const struct prediction *p,
			struct stage_times *st)
{
	int pp = x->l->pp;
	double sum = 0;
	struct body_memo memo = { .n = -1 };

	memset(st, 0, sizeof *st);
	st->t_max = -1;
	for (int i = 0; i < pp; i++) {
		struct layer_cost b;
		double t = rank_time(x, p, i, &memo, &b);
		sum += t;
		if (t > st->t_max) {
			st->t_max = t;
			st->body = b;
		}
	}
	st->t_avg = sum / pp;
}

/* ---- data parallelism and the optimizer ------------------------------------- */

/* The parameters a GPU holds: the larger of the first, a middle and the
 * last stage. */
static void largest_stage_params(const struct cost_ctx *x, struct stage_params *out)
{
	int cand[3] = { 0, x->l->pp / 2, x->l->pp - 1 };
	memory_rank_params(x->m, x->l, x->o, 0, out);
	for (int i = 1; i < 3; i++) {
		struct stage_params s;
		memory_rank_params(x->m, x->l, x->o, cand[i], &s);
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

/* What stays exposed of DP traffic c overlapped with a window of
 * compute: the part beyond the window, plus a fitted share.  Traffic
 * that runs every microbatch beside its forward or backward (ZeRO-3's
 * gathers and reduce-scatters, ZeRO-2's reduce-scatter, FSDP ZeRO-2's
 * gathers) leaves zero3_unhidden of what overlaps; the once-per-step
 * buckets leave dp_overlap_unhidden of all of it. */
static double sharded_exposed(const struct cost_ctx *x, double c, double window)
{
	return fmax(0.0, c - window) + x->k->zero3_unhidden * fmin(c, window);
}

static double bucket_exposed(const struct cost_ctx *x, double c, double window)
{
	return fmax(0.0, c - window) + x->k->dp_overlap_unhidden * c;
}

static void dp_reduction(const struct cost_ctx *x, const struct stage_params *sp,
			 const struct stage_times *st, struct prediction *p)
{
	const struct layout *l = x->l;
	const struct link *k = &x->links.dp;
	struct time_breakdown *tb = &p->time;
	double g = x->o->b.grad_bytes; /* the same bytes as in memory */
	double w = x->o->b.fp8_weights ? fw_fp8_bytes(&x->o->b) : x->ab; /* the weights gathered */
	int n = l->dp * l->cp, ne = (int)layout_expert_dp(l);
	double rs = 0, ag = 0, rs_exposed, ag_exposed = 0, bwd, fwd;
	long micro = layout_microbatches(l);
	/* Sharded gradients cannot accumulate across microbatches
	 * unreduced: with ZeRO-2 every microbatch's backward reduce-scatters
	 * its own (DeepSpeed ZeRO-2 each micro-step, FSDP SHARD_GRAD_OP and
	 * Megatron-FSDP optim_grads each backward); else once per step. */
	double reductions = l->zero == 2 ? (double)micro : 1.0;
	/* PyTorch FSDP's SHARD_GRAD_OP (FSDP2 without resharding after the
	 * forward) reshards the weights after each backward and gathers
	 * them again in the next forward; Megatron FSDP's optim_grads and
	 * DeepSpeed's ZeRO-2 keep them whole and gather once per step. */
	double gathers = l->zero == 2 && x->o->b.sharding == FW_SHARD_FSDP ? (double)micro : 1.0;

	/* What trains: every weight, or LoRA's adapters alone. */
	if (l->zero == 0) {
		rs = cost_coll(x, COLL_ALLREDUCE, g * sp->train_dense, n, k) +
		     cost_coll(x, COLL_ALLREDUCE, g * sp->train_expert, ne, k);
	} else if (l->zero <= 2) {
		/* Reduce-scatter the gradients; all-gather the updated weights. */
		rs = cost_coll(x, COLL_REDUCESCATTER, g * sp->train_dense, n, k) +
		     cost_coll(x, COLL_REDUCESCATTER, g * sp->train_expert, ne, k);
		ag = cost_coll(x, COLL_ALLGATHER, w * sp->train_dense, n, k) +
		     cost_coll(x, COLL_ALLGATHER, w * sp->train_expert, ne, k);
	}
	/* A tied embedding: the first stage's table and the last stage's
	 * head are one parameter, its gradient all-reduced between the two
	 * after the DP reduction (Megatron-Core's finalize_model_grads, the
	 * whole V/t x h gradient; Megatron-DeepSpeed's tied modules),
	 * nothing left to hide it. */
	p->dp_emb_s = l->pp > 1 && x->m->tied_embeddings && x->o->lora_rank <= 0
			      ? cost_coll(x, COLL_ALLREDUCE, g * (double)x->m->vocab / x->t * x->h, 2,
					  &x->links.pp)
			      : 0;
	tb->dp_comm_total = reductions * rs + gathers * ag + p->dp_emb_s;
	if (l->zero >= 3) {
		/* DeepSpeed's ZeRO-3 gathers parameter by parameter as modules
		 * are entered, one collective per GPU on its own rail: no
		 * sharing of a node's NICs across channels.  FSDP (and
		 * Megatron-FSDP) gather a whole layer's flat buffer, which
		 * NCCL spreads over every rail of the node, as the other DP
		 * collectives. */
		struct link z3 = *k;
		double all = sp->dense + sp->expert, per_mb;
		if (z3.cls == LINK_NET && x->o->b.sharding == FW_SHARD_DEEPSPEED)
			z3.bw_gbps = x->c->net.bw_gbps;
		per_mb = cost_coll(x, COLL_ALLGATHER, w * all, n, &z3) * zero3_gathers(x->o, l) +
			 cost_coll(x, COLL_REDUCESCATTER, g * (sp->train_dense + sp->train_expert),
				   n, &z3);
		p->dp_reduce_s = 0;
		tb->dp_comm_total = per_mb * micro;
		tb->dp_comm_exposed = sharded_exposed(x, per_mb, st->t_max) * micro + p->dp_emb_s;
		return;
	}
	/* The gradient buckets reduce while the last microbatch's backward
	 * walks back through the stage's chunks (ZeRO-2: every microbatch's);
	 * the weight buckets gather while the next step's first forward
	 * walks forward through them (FSDP's ZeRO-2: every forward). */
	bwd = l->vp * p->chunk.bwd_s;
	fwd = l->vp * p->chunk.fwd_s;
	if (!x->o->b.overlap_grad_reduce)
		rs_exposed = reductions * rs;
	else if (l->zero == 2) /* layer by layer in each backward, as ZeRO-3's */
		rs_exposed = reductions * sharded_exposed(x, rs, bwd);
	else
		rs_exposed = bucket_exposed(x, rs, bwd);
	if (ag > 0 && !x->o->b.overlap_param_gather)
		ag_exposed = gathers * ag;
	else if (ag > 0 && gathers > 1)
		ag_exposed = gathers * sharded_exposed(x, ag, fwd);
	else if (ag > 0)
		ag_exposed = bucket_exposed(x, ag, fwd);
	p->dp_reduce_s = rs;
	p->dp_gather_exposed_s = ag_exposed;
	tb->dp_comm_exposed = rs_exposed + ag_exposed + p->dp_emb_s;
}

/* The optimizer step on the CPU: the gradient shard to host memory
 * (hidden behind the backward where ZeRO-Offload streams it, after the
 * reduce-scatter under Megatron-Core), the node's GPUs' shards through
 * CPU Adam at the node's memory bandwidth, the updated half-precision
 * shard back over each GPU's host link. */
static double offloaded_step(const struct cost_ctx *x, double local, struct prediction *p)
{
	double link = cluster_host_gbps(x->c) * 1e9;
	double node = cluster_host_mem_gbps(x->c) * 1e9 * CPU_ADAM_BW_EFF;
	double grad_b = x->o->b.grad_bytes;
	int streamed = x->o->b.sharding == FW_SHARD_DEEPSPEED && x->l->zero >= 2;
	p->offload_d2h_s = grad_b * local / link;
	p->offload_adam_s = train_opts_adam_bytes(x->o, x->l) * local * x->c->gpus_per_node / node;
	p->offload_h2d_s = 2.0 * local / link;
	return (streamed ? 0 : p->offload_d2h_s) + p->offload_adam_s + p->offload_h2d_s;
}

/* The fitted per-step overhead of a training framework (data loader,
 * logging, launches); pplan exec's step has none. */
static double step_fixed(const struct cost_ctx *x)
{
	return x->o->b.bare_step ? 0.0 : x->k->step_fixed_ms * 1e-3;
}

static double optimizer_step(const struct cost_ctx *x, const struct stage_params *sp,
			     struct prediction *p)
{
	int n = x->l->dp * x->l->cp;
	double ne = layout_expert_dp(x->l);
	double trained = sp->train_dense + sp->train_expert;
	double local = x->l->zero >= 1 ? sp->train_dense / n + sp->train_expert / ne : trained;
	double adam;
	p->offload_d2h_s = p->offload_adam_s = p->offload_h2d_s = 0;
	if (x->l->optimizer_offload)
		return offloaded_step(x, local, p) +
		       hbm_time(&x->run, GRAD_PASS_BYTES * trained) +
		       step_fixed(x);
	/* measured (--profile): the AdamW kernel's rate on the bytes it
	 * moves (28 per parameter, and the compute copy: below fp32, or an
	 * fp32 weight beside its fp32 master) */
	adam = curve_set_bw(x->o->curves, CURVE_BW_OPTIMIZER,
			    (train_opts_adam_bytes(x->o, x->l) - 2.0 +
			     (x->ab < 4 || x->o->b.fp32_master ? x->ab : 0)) *
				    local);
	if (adam >= 0)
		return adam * x->run.curve_scale +
		       hbm_time(&x->run, GRAD_PASS_BYTES * trained);
	return hbm_time(&x->run, train_opts_adam_bytes(x->o, x->l) * local +
				      GRAD_PASS_BYTES * trained) +
	       step_fixed(x);
}

/* ---- the step ----------------------------------------------------------- */

static double closed_form_bubble(const struct cost_ctx *x, const struct stage_times *st,
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
	case SCHED_DUALPIPE:
		/* DeepSeek-V3 report, Table 2: (PP/2 - 1)(F&B + B - 3W), F&B
		 * the overlapped pair (t_avg), B a whole backward chunk */
		return fmax(0.0, (pp / 2 - 1) * (st->t_avg + p->chunk.bwd_s -
						 3.0 * p->chunk.bwd_w_s + 2.0 * p2p));
	case SCHED_GPIPE:
	case SCHED_1F1B:
		break;
	}
	return (pp - 1) * (st->t_avg + 2.0 * p2p);
}

/* The bottleneck stage's microbatches, the fill and drain of the
 * pipeline, the blocking transfers, the exposed DP reduction and the
 * optimizer; the bottleneck stage's time split into terms. */
static void assemble_step(const struct cost_ctx *x, const struct stage_times *st,
			  struct prediction *p)
{
	double micro = (double)p->microbatches;
	const struct layer_cost *b = &st->body;
	double body = layer_cost_fwd(b) + layer_cost_bwd(b);
	struct time_breakdown *tb = &p->time;

	tb->bubble = closed_form_bubble(x, st, p);
	/* Each chunk's forward and backward wait for one transfer. */
	tb->pp_comm = x->l->pp > 1 ? micro * 2.0 * p->p2p_s * x->l->vp : 0;
	if (x->l->schedule == SCHED_DUALPIPE) /* under the paired chunks */
		tb->pp_comm = 0;
	tb->optimizer = p->optimizer_s;
	tb->compute = micro * (b->gemm_f + b->gemm_b + b->attn_f + b->attn_b + b->elem_f +
			       b->elem_b + (st->t_max - body));
	tb->tp_comm = micro * (b->tp_f + b->tp_b);
	tb->cp_comm = micro * (b->cp_f + b->cp_b);
	tb->ep_comm = micro * (b->ep_f + b->ep_b);
	tb->recompute = micro * b->recompute;
	p->step_time_s = micro * st->t_max + tb->bubble + tb->pp_comm + tb->dp_comm_exposed +
			 tb->optimizer;
	{
		double span = micro * st->t_max + tb->bubble + tb->pp_comm;
		p->bubble_fraction = x->l->pp > 1 && span > 0 ? 1.0 - micro * st->t_avg / span : 0;
	}
}

/* The share of the model's layers whose forward runs twice. */
static double recomputed_share(const struct cost_ctx *x)
{
	long per_stage = x->m->layers / (x->l->pp > 0 ? x->l->pp : 1);
	if (x->l->recompute != RECOMPUTE_FULL)
		return 0;
	if (x->l->recompute_layers <= 0 || per_stage <= 0)
		return 1;
	return (double)layout_recomputed_layers(x->l, (int)per_stage) / (double)per_stage;
}

static void throughput(const struct cost_ctx *x, struct prediction *p)
{
	double gpus = (double)layout_gpus(x->l);
	double peak = x->run.peak_flops;
	p->model_flops = cost_train_flops(x->m, x->o, x->l->gbs);
	p->hw_flops = p->model_flops * (1.0 + recomputed_share(x) / 3.0);
	p->tokens_per_s = (double)x->l->gbs * x->o->seq / p->step_time_s;
	p->tflops_per_gpu = p->model_flops / p->step_time_s / gpus / 1e12;
	p->mfu = p->model_flops / (p->step_time_s * gpus * peak);
	p->hfu = p->hw_flops / (p->step_time_s * gpus * peak);
}

/* ---- memory and rejections -------------------------------------------------- */

static void predict_memory(const struct cost_ctx *x, struct prediction *p)
{
	double cap = (x->o->max_memory_gib > 0 ? x->o->max_memory_gib : x->c->gpu.mem_gib) * GIB;
	memory_peak(x->m, x->c, x->l, x->o, &p->mem);
	p->feasible = 1;
	if (p->mem.total > cap) {
		p->feasible = 0;
		p->reject = REJECT_OOM;
		snprintf(p->reject_msg, sizeof p->reject_msg,
			 "needs %.1f GiB per GPU, has %.1f GiB", p->mem.total / GIB, cap / GIB);
	} else if (p->mem.host * x->c->gpus_per_node >
		   HOST_MEM_FRACTION * cluster_host_mem_gib(x->c) * GIB) {
		p->feasible = 0;
		p->reject = REJECT_HOST_OOM;
		snprintf(p->reject_msg, sizeof p->reject_msg,
			 "the offloaded optimizer needs %.0f GiB of host memory per node, %.0f %% of its %.0f GiB is %.0f",
			 p->mem.host * x->c->gpus_per_node / GIB, 100 * HOST_MEM_FRACTION,
			 cluster_host_mem_gib(x->c), HOST_MEM_FRACTION * cluster_host_mem_gib(x->c));
	}
}

/* The layers of an fp8-class run kept in bf16: the run's layer with the
 * bf16 GEMM rate, the element-wise traffic and kept inputs of bf16. */
static void bf16_layer_costs(struct cost_ctx *x)
{
	struct cost_ctx y = *x;
	struct train_opts o16 = *x->o;
	o16.precision = PREC_BF16;
	y.o = &o16;
	y.run = x->half; /* the bf16 (or fp16) rate, its curves kept */
	cost_layer(&y, 0, &x->dense16);
	if (x->m->num_experts > 0)
		cost_layer(&y, 1, &x->moe16);
}

/* Megatron-Core takes at most a pipeline stage's layers (num_layers /
 * pp) at either end in bf16. */
static void bf16_layers_reject(const struct cost_ctx *x, struct prediction *p)
{
	long per = x->m->layers / x->l->pp;
	int most = x->o->bf16_first > x->o->bf16_last ? x->o->bf16_first : x->o->bf16_last;
	if (!p->feasible || most <= per)
		return;
	p->feasible = 0;
	p->reject = REJECT_BF16_LAYERS;
	snprintf(p->reject_msg, sizeof p->reject_msg,
		 "Megatron-Core keeps at most a pipeline stage's %ld layers (%ld / pp=%d) in bf16 at either end, not %d",
		 per, (long)x->m->layers, x->l->pp, most);
}

/* What the framework cannot run outranks memory; the prediction is still
 * made, for simulate to show. */
static void framework_reject(const struct cost_ctx *x, struct prediction *p)
{
	enum reject r = framework_check_layout(x->o->fw, x->o->precision, x->l);
	char why[200];
	if (r == REJECT_NONE)
		return;
	p->feasible = 0;
	p->reject = r;
	reject_describe(r, x->l, x->m, layout_gpus(x->l), why, sizeof why);
	snprintf(p->reject_msg, sizeof p->reject_msg, "%s cannot run it: %s",
		 x->o->fw->label, why);
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
	 * (x context-parallel) dimension, as Megatron-LM folds them; with an
	 * expert TP degree of its own, Megatron-Core orders the expert ranks
	 * etp-ep-dp-pp: stride etp. */
	g->ep_stride = l->cp > 1 ? g->cp_stride : g->dp_stride;
	if (layout_etp(l) != l->tp)
		g->ep_stride = layout_etp(l);
	g->ep = cluster_group_link(c, l->ep, (int)g->ep_stride);
}

enum pplan_status cost_predict(const struct model_spec *m,
			       const struct cluster *c,
			       const struct layout *l,
			       const struct train_opts *o,
			       struct prediction *p, struct perr *e)
{
	struct cost_ctx x;
	struct stage_times st;
	struct stage_params sp;
	int ref;

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
	if (fp8_recipe_refused(&c->gpu, o->b.fp8_recipe, p->reject_msg, sizeof p->reject_msg)) {
		p->reject = REJECT_PRECISION;
		return perr_set(e, PPLAN_EINPUT, "%s", p->reject_msg);
	}
	if (layout_gpus(l) != cluster_gpus(c))
		return perr_set(e, PPLAN_EINPUT,
				"the layout uses %ld GPUs but the cluster has %ld",
				layout_gpus(l), cluster_gpus(c));
	cost_ctx_init(&x, m, c, l, o);
	p->microbatches = layout_microbatches(l);

	predict_memory(&x, p);
	cost_layer(&x, 0, &x.dense);
	if (m->num_experts > 0)
		cost_layer(&x, 1, &x.moe);
	if (o->bf16_first > 0 || o->bf16_last > 0)
		bf16_layer_costs(&x);
	p->split_layers = m->layers;
	ref = reference_stage(&x, &p->split_ref);
	chunk_costs(&x, ref, p);
	edge_costs(&x, p);
	pipeline_p2p(&x, p);
	stage_times(&x, p, &st);
	largest_stage_params(&x, &sp);
	dp_reduction(&x, &sp, &st, p);
	p->optimizer_s = optimizer_step(&x, &sp, p);
	assemble_step(&x, &st, p);
	/* Every term is a duration: a step that is not one comes from a
	 * model the checks let through with a zero width somewhere. */
	if (!(p->step_time_s > 0) || !isfinite(p->step_time_s) || !(st.t_max > 0))
		return perr_set(e, PPLAN_EINPUT,
				"%s gives no finite step time on this layout (a width or count of 0?)",
				m->name);
	throughput(&x, p);
	framework_reject(&x, p);
	bf16_layers_reject(&x, p);
	return PPLAN_OK;
}
