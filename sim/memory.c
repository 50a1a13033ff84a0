/*
 * memory.c: the memory model (sim/MODEL.md "Memory").
 *
 * Bytes per parameter (mixed precision, Adam):
 *   Megatron-LM     weights 2, fp32 main grads 4, optimizer 12 (fp32 master,
 *                   Adam m and v): 18, or 6 + 12/d with the distributed
 *                   optimizer (ZeRO-1); ZeRO-2 also shards the gradients,
 *                   ZeRO-3 / FSDP the weights too.
 *   Megatron-DeepSpeed  weights 2, half-precision grads 2, optimizer 12/d
 *                   (ZeRO-1), plus the bf16 optimizer's unsharded fp32
 *                   gradient accumulation buffer (4) in bf16 runs.
 * Activations per layer and microbatch: Korthikanti et al. 2022, Table 2,
 * generalised for GQA and gated MLPs (MODEL.md derives the terms).
 */
#include "memory.h"
#include "units.h"

#include <math.h>
#include <string.h>

/* DeepSpeed ZeRO-1/2: a reduce and an all-gather bucket of 5e8 elements,
 * 2 bytes each; ZeRO-3 caps the gathered parameters at 1e9 elements. */
#define DS_BUCKET_ELEMS 5e8
#define DS_MAX_LIVE_PARAMS 1e9

int memory_stage_layers(const struct model_spec *m, const struct layout *l,
			const struct train_opts *o, int stage)
{
	return layout_stage_layers(l, m->layers, o->b.partition, stage);
}

int memory_stage_bf16_layers(const struct model_spec *m, const struct layout *l,
			     const struct train_opts *o, int stage)
{
	int p = l->pp > 0 ? l->pp : 1, vp = l->vp > 0 ? l->vp : 1, at = 0, n = 0;
	long lo = o->bf16_first, hi = (long)m->layers - o->bf16_last;
	if (o->bf16_first <= 0 && o->bf16_last <= 0)
		return 0;
	/* the chunks in layer order: virtual stage v on stage v % p */
	for (int v = 0; v < p * vp; v++) {
		int first = at, k;
		if (l->pp_table || l->pp_embed || l->pp_loss)
			k = layout_chunk_layers(l, m->layers, v, &first);
		else
			k = memory_stage_layers(m, l, o, v % p) / vp;
		if (v % p == stage)
			for (long i = first; i < first + k; i++)
				n += i < lo || i >= hi;
		at = first + k;
	}
	return n;
}

int memory_stage_moe_layers(const struct model_spec *m, const struct layout *l,
			    const struct train_opts *o, int stage)
{
	int vp = l->vp > 0 ? l->vp : 1, before = 0, n;

	if (m->num_experts < 1)
		return 0;
	n = memory_stage_layers(m, l, o, stage);
	if (m->dense_layers <= 0 && m->moe_every <= 1 && !m->ffns[0])
		return n;
	if (l->pp_table || l->pp_embed || l->pp_loss) {
		int moe = 0, first, k;
		for (int c = 0; c < vp; c++) {
			k = layout_chunk_layers(l, m->layers, c * l->pp + stage, &first);
			moe += model_moe_layers_in(m, first, k);
		}
		return moe;
	}
	/* Leading dense layers only reach chunk 0 of the first stages: every
	 * chunk holds at least one layer, so stage i's chunk 0 starts at
	 * layer i or later, and later chunks at L/vp or later.  Past them, no
	 * walk over the stages (the search prices many layouts). */
	if (m->moe_every <= 1 && !m->ffns[0] && m->dense_layers <= m->layers / vp &&
	    stage >= m->dense_layers)
		return n;
	/* Chunk c of stage i is virtual stage c*pp + i: the layers before
	 * it are c whole rounds of L/vp and the chunks of stages j < i. */
	for (int j = 0; j < stage; j++)
		before += memory_stage_layers(m, l, o, j) / vp;
	{
		int moe = 0, chunk = n / vp;
		for (int c = 0; c < vp; c++)
			moe += model_moe_layers_in(m, c * (m->layers / vp) + before, chunk);
		return moe;
	}
}

void memory_layer_params(const struct model_spec *m, const struct layout *l, int moe,
			 double *dense, double *expert)
{
	/* Attention, a dense MLP or the MoE layer's shared experts, router
	 * and norm split over tp; the routed experts over ep x etp. */
	struct layer_mix mx;
	model_layer_mix(m, moe, &mx);
	*dense = (model_params_mixers(m, moe) +
		  (moe ? model_params_moe_common(m) : mx.ffn * model_params_dense_mlp(m))) / l->tp;
	*expert = moe ? model_params_moe_routed(m) / ((double)layout_etp(l) * l->ep) : 0;
}

void memory_stage_params(const struct model_spec *m, const struct layout *l,
			 const struct train_opts *o, int stage,
			 struct stage_params *out)
{
	/* the table as the framework builds it (padded) */
	double emb = (double)m->hidden * (double)train_opts_vocab(o, l, m->vocab);
	double dense, moe_dense, moe_expert, none;
	int per = memory_stage_layers(m, l, o, stage);
	int moe = memory_stage_moe_layers(m, l, o, stage);

	out->layers = per;
	out->moe_layers = moe;
	out->has_embedding = stage == 0;
	out->has_lm_head = stage == l->pp - 1;
	memory_layer_params(m, l, 0, &dense, &none);
	memory_layer_params(m, l, 1, &moe_dense, &moe_expert);
	out->dense = (per - moe) * dense + moe * moe_dense;
	out->expert = moe * moe_expert;
	if (o->lora_rank > 0) {
		/* LoRA: the adapters split as their layers (over tp, the
		 * experts' over ep x etp) */
		double r = o->lora_rank, d0, e0, d1, e1;
		model_lora_widths(m, 0, train_opts_lora_targets(o), &d0, &e0);
		model_lora_widths(m, 1, train_opts_lora_targets(o), &d1, &e1);
		out->train_dense = r * ((per - moe) * d0 + moe * d1) / l->tp;
		out->train_expert = r * moe * e1 / ((double)layout_etp(l) * l->ep);
	}
	if (out->has_embedding) /* the position table is replicated over tp */
		out->dense += emb / l->tp + model_params_positions(m);
	if (out->has_lm_head) {
		/* An untied head is its own matrix; a tied one is a copy on
		 * the last stage when the pipeline separates it from stage 0. */
		if (!m->tied_embeddings || l->pp > 1)
			out->dense += emb / l->tp;
		out->dense += (m->norm == NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden;
	}
	if (o->lora_rank <= 0) {
		out->train_dense = out->dense;
		out->train_expert = out->expert;
	}
}

void memory_rank_params(const struct model_spec *m, const struct layout *l,
			const struct train_opts *o, int stage, struct stage_params *out)
{
	struct stage_params mirror;
	int other = layout_mirror_stage(l, stage);
	memory_stage_params(m, l, o, stage, out);
	if (other < 0)
		return;
	memory_stage_params(m, l, o, other, &mirror);
	out->dense += mirror.dense;
	out->expert += mirror.expert;
	out->train_dense += mirror.train_dense;
	out->train_expert += mirror.train_expert;
	out->layers += mirror.layers;
	out->moe_layers += mirror.moe_layers;
	out->has_embedding |= mirror.has_embedding;
	out->has_lm_head |= mirror.has_lm_head;
}

/* The attention output's width per token (elements, before the split
 * over tp): the output projection's input, heads x the value width. */
static double attn_out_width(const struct model_spec *m)
{
	return (double)m->heads * (model_is_mla(m) ? (double)m->v_head_dim : (double)m->head_dim);
}

/* Per token, the attention's kept tensors (bytes): Q, K, V after
 * rotary, and the attention output; MLA keeps its Q and KV latents too
 * (replicated over tp: the down projections are not split). */
static void attn_acts(const struct model_spec *m, const struct layout *l, double *sharded,
		      double *replicated)
{
	if (model_is_mla(m)) {
		double dqk = (double)(m->qk_nope_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		*sharded = 2.0 * m->heads * (2.0 * dqk + dv) + 2.0 * m->heads * dv;
		*replicated = 2.0 * (double)(m->q_lora_rank + m->kv_lora_rank + m->qk_rope_dim);
		return;
	}
	{
		/* With tp > kv heads each rank keeps one replicated K/V head. */
		double kv = m->kv_heads >= l->tp ? (double)m->kv_heads : (double)l->tp;
		*sharded = 2.0 * (m->heads + 2.0 * kv) * m->head_dim +
			   2.0 * (double)m->heads * m->head_dim;
		*replicated = 0;
	}
}

/* The MLP's kept intermediates per token (bytes, before the split over
 * tp) and the widths whose input the fp8 recipe keeps in one byte: the
 * MLP-down's, and in an MoE layer the experts' fc1 too (the k permuted
 * copies are its input; Transformer Engine's grouped linear keeps them
 * quantized, as it keeps a dense layer's GEMM inputs). */
static void mlp_acts(const struct model_spec *m, int moe, double *bytes, double *fp8_saved)
{
	double per_f = mlp_is_gated(m->mlp) ? 6.0 : 4.0;
	if (!moe) {
		*bytes = per_f * (double)m->ffn;
		*fp8_saved = (double)m->ffn;
		return;
	}
	{
		/* Each token's k expert intermediates and its k permuted
		 * input copies (balanced, spread over the GPUs), the shared
		 * experts' intermediates, and the router's probabilities. */
		double k = m->top_k, fe = (double)model_expert_ffn(m);
		double fs = (double)m->shared_experts * model_shared_ffn(m);
		*bytes = per_f * (k * fe + fs) + 2.0 * k * m->hidden + 4.0 * m->num_experts;
		*fp8_saved = k * fe + fs + k * m->hidden;
	}
}

/* A hybrid layer's kept tensors per token (bytes, before the split over
 * tp): a Mamba-2 mixer keeps in_proj's output (z, x, B, C, dt), the
 * convolution's, the scan's output and the gated norm's, and the fp32
 * states at each of its chunks' ends (4 d N / Q a token); a Gated
 * DeltaNet mixer the same of its own (states of Hv x Dk x Dv per 64-token
 * chunk). */
static double hybrid_mixer_acts(const struct model_spec *m, const struct layer_mix *mx)
{
	double a = 0;
	if (mx->mamba > 0) {
		double d = model_mamba_inner(m), gn = 2.0 * m->mamba_groups * m->mamba_state;
		double q = m->mamba_chunk > 0 ? (double)m->mamba_chunk : 256.0;
		a += mx->mamba * (2.0 * model_mamba_in_proj(m) + 2.0 * (d + gn) + 4.0 * d +
				  4.0 * d * (double)m->mamba_state / q);
	}
	if (mx->gdn > 0) {
		double kd = model_gdn_key(m), vd = model_gdn_value(m);
		a += mx->gdn * (2.0 * (2.0 * kd + 2.0 * vd + 2.0 * m->gdn_v_heads) +
				2.0 * (2.0 * kd + vd) + 4.0 * vd +
				4.0 * m->gdn_v_heads * (double)m->gdn_k_dim * m->gdn_v_dim / 64.0);
	}
	return a;
}

int memory_op_sac(const struct model_spec *m, const struct train_opts *o, int moe)
{
	return o->b.selective_ops && !moe && !model_is_mla(m);
}

/* Op-level selective checkpointing keeps, per token (bytes): the layer's
 * input 2h (split over tp with SP); the outputs of wq, wv and the
 * attention (with its fp32 log-sum-exp per head), and of w1, split over
 * tp; with a gated MLP the output of w2, whole on each TP rank before its
 * reduce-scatter; with tp > 1 the outputs of the two reduce-scatters. */
static double op_sac_activations(const struct model_spec *m, const struct layout *l,
				 double s, double b)
{
	double h = (double)m->hidden, t = l->tp, dh = (double)m->head_dim;
	double kv = m->kv_heads >= l->tp ? (double)m->kv_heads : (double)l->tp;
	double split = 2.0 * m->heads * dh + 2.0 * kv * dh + 2.0 * m->heads * dh +
		       4.0 * m->heads + 2.0 * (double)m->ffn;
	double whole = mlp_is_gated(m->mlp) ? 2.0 * h : 0.0;
	double input = l->sp ? 2.0 * h / t : 2.0 * h;
	double rs = l->tp > 1 ? 4.0 * h / t : 0.0;
	return s * b * (input + split / t + whole + rs);
}

/* Bytes of one element of a GEMM input kept for the backward: 2, or in
 * fp8 one (MXFP8: and its share of a scale byte per 32). */
static double kept_input_bytes(const struct train_opts *o)
{
	return o->precision == PREC_FP8 ? fw_fp8_bytes(&o->b) : 2.0;
}

/* What Megatron's --recompute-modules leave out of a layer's kept
 * tensors, per token (bytes; fp8 keeps GEMM inputs in one byte): the
 * norms' outputs (the QKV and MLP inputs, replicated, taken from
 * *replicated), a dense MLP's or an MoE layer's whole intermediates and
 * permuted copies, the experts' activation outputs, the shared experts'
 * intermediates, MLA's up-projected Q, K and V.  Returns the sharded part. */
static double module_savings(const struct model_spec *m, int moe, double in, unsigned mods,
			     double *replicated)
{
	double h = (double)m->hidden, gated = mlp_is_gated(m->mlp) ? 6.0 : 4.0;
	double mlp, fp8_saved, saved = 0;
	double fe = (double)model_expert_ffn(m), fs = (double)m->shared_experts * model_shared_ffn(m);

	mlp_acts(m, moe, &mlp, &fp8_saved);
	mlp -= (2.0 - in) * fp8_saved; /* fp8: the MLP-down (and expert fc1) inputs in `in` bytes */
	if (mods & RM_LAYERNORM)
		*replicated -= 2.0 * in * h;
	if ((mods & RM_MLA_UP) && model_is_mla(m)) {
		double dqk = (double)(m->qk_nope_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		saved += 2.0 * m->heads * (2.0 * dqk + dv);
	}
	if (!moe)
		return saved + ((mods & RM_MLP) ? mlp : 0);
	if (mods & RM_MOE)
		return saved + mlp;
	if (mods & RM_MOE_ACT) /* the activation's output, the fc2 input */
		saved += in * m->top_k * fe;
	if (mods & RM_SHARED)
		saved += (gated - 2.0 + in) * fs;
	return saved;
}

/* LoRA: what the frozen linears without an adapter no longer keep, per
 * token (bytes, as kept: `in` a GEMM input).  A linear whose weight
 * takes no gradient keeps no input for it (Transformer Engine saves a
 * linear's input only when its weight requires a gradient); an adapted
 * one's adapter keeps the same input.  Unadapted: linear_qkv (or MLA's
 * down projections) frees the first norm's output, linear_fc1 the second
 * norm's and an MoE layer's k permuted copies, linear_fc2 its input (the
 * activation's output); the attention output stays, flash attention's
 * backward reads it.  A tensor that recomputation or offloading already
 * drops is not counted again.  The replicated part is taken from
 * *replicated; returns the sharded part. */
static double lora_frozen_inputs(const struct model_spec *m, const struct layout *l,
				 const struct train_opts *o, int moe, double in, double *replicated)
{
	unsigned t = train_opts_lora_targets(o), rm = layout_recompute_modules(l);
	unsigned off = l->offload_modules;
	double h = (double)m->hidden, k = m->top_k, saved = 0;
	unsigned qkv_in = model_is_mla(m) ? LORA_Q | LORA_Q_DOWN | LORA_KV_DOWN : LORA_QKV;

	if (o->lora_rank <= 0 || model_is_hybrid(m))
		return 0;
	if (!(t & qkv_in) && !(rm & RM_LAYERNORM) && !(off & OM_QKV_LINEAR))
		*replicated -= in * h;
	if (!(t & LORA_FC1) && !(rm & RM_LAYERNORM))
		*replicated -= in * h;
	if (!moe) {
		if (!(t & LORA_FC2) && !(rm & RM_MLP))
			saved += in * (double)m->ffn;
		return saved;
	}
	if (rm & RM_MOE)
		return saved;
	if (!(t & LORA_FC1) && !(off & OM_EXPERT_FC1))
		saved += in * k * h;
	if (!(t & LORA_FC2) && !(rm & RM_MOE_ACT))
		saved += in * k * (double)model_expert_ffn(m);
	if (!(t & LORA_FC2) && !(rm & RM_SHARED))
		saved += in * (double)m->shared_experts * model_shared_ffn(m);
	return saved;
}

/* What --offload-modules moves to host memory, per token (bytes): the
 * replicated part (norm inputs, the QKV input) into *rep, the split part
 * (Q, K, V, the projection input, the experts' fc1 input and output) into
 * *split.  A tensor the layout already recomputes is not kept, so not
 * moved: layernorm recomputation drops the QKV input, moe the experts'. */
static void offload_bytes(const struct model_spec *m, const struct layout *l, double in, int moe,
			  double *rep, double *split)
{
	unsigned off = l->offload_modules, rm = layout_recompute_modules(l);
	double h = (double)m->hidden, qkv, latents;
	*rep = *split = 0;
	if (!off || l->recompute == RECOMPUTE_FULL)
		return;
	if (off & OM_ATTN_NORM)
		*rep += 2.0 * h;
	if (off & OM_MLP_NORM)
		*rep += 2.0 * h;
	if ((off & OM_QKV_LINEAR) && !(rm & RM_LAYERNORM))
		*rep += in * h;
	attn_acts(m, l, &qkv, &latents);
	if (off & OM_CORE_ATTN)
		*split += qkv - 2.0 * attn_out_width(m);
	if (off & OM_ATTN_PROJ)
		*split += in * attn_out_width(m);
	if (!moe || (rm & RM_MOE))
		return;
	if (off & OM_EXPERT_FC1)
		*split += in * m->top_k * h;
	if (off & OM_MOE_ACT)
		*split += (mlp_is_gated(m->mlp) ? 4.0 : 2.0) * m->top_k * (double)model_expert_ffn(m);
}

double memory_layer_offloaded(const struct model_spec *m, const struct layout *l,
			      const struct train_opts *o, int moe)
{
	double s = (double)o->seq / l->cp, b = l->mbs, t = l->tp, rep, split;
	offload_bytes(m, l, kept_input_bytes(o), moe, &rep, &split);
	return l->sp ? s * b * (rep + split) / t : s * b * (rep + split / t);
}

double memory_layer_activations(const struct model_spec *m, const struct layout *l,
				const struct train_opts *o, int moe)
{
	double s = (double)o->seq / l->cp, b = l->mbs, h = (double)m->hidden;
	double t = l->tp;
	double qkv, latents, mlp, fp8_saved, replicated, sharded, scores;
	double in = kept_input_bytes(o), sv = 2.0 - in; /* bytes a kept GEMM input saves */
	unsigned mods;

	if (l->recompute == RECOMPUTE_FULL)
		return 2.0 * s * b * h / (l->sp ? t : 1.0);
	if (l->recompute == RECOMPUTE_SELECTIVE && memory_op_sac(m, o, moe))
		return op_sac_activations(m, l, s, b);
	attn_acts(m, l, &qkv, &latents);
	mlp_acts(m, moe, &mlp, &fp8_saved);
	mods = layout_recompute_modules(l);
	/* Per token: layer-norm inputs 4h, QKV input 2h, MLP input 2h,
	 * dropout masks 2h (replicated over tp unless sp; none for a model
	 * trained without dropout); Q, K, V, the attention output and the
	 * MLP intermediates (split over tp). */
	replicated = (m->no_dropout ? 8.0 : 10.0) * h + latents;
	sharded = qkv + mlp;
	/* Transformer Engine keeps the inputs of the four GEMMs in fp8 for
	 * the backward pass: one byte instead of two (MXFP8: and a scale
	 * byte per 32). */
	replicated -= 2.0 * h * sv;                    /* QKV and MLP-up inputs */
	sharded -= (attn_out_width(m) + fp8_saved) * sv; /* projection, MLP-down, expert fc1 inputs */
	if (model_is_hybrid(m)) {
		/* each block keeps its norm's input and its own input (half the
		 * usual layer's replicated bytes), attention and the MLP their
		 * tensors where the layer has them, the mixers theirs */
		struct layer_mix mx;
		model_layer_mix(m, moe, &mx);
		replicated = ((m->no_dropout ? 8.0 : 10.0) * h - 2.0 * h * sv) *
				     (mx.attn + mx.mamba + mx.gdn + mx.ffn) / 2.0 +
			     mx.attn * latents;
		sharded = mx.attn * (qkv - attn_out_width(m) * sv) + mx.ffn * (mlp - fp8_saved * sv) +
			  hybrid_mixer_acts(m, &mx);
	}
	if (mods & ~RM_CORE_ATTN)
		sharded -= module_savings(m, moe, in, mods, &replicated);
	sharded -= lora_frozen_inputs(m, l, o, moe, in, &replicated);
	if (l->offload_modules) {
		double rep, split;
		offload_bytes(m, l, in, moe, &rep, &split);
		replicated = fmax(0.0, replicated - rep);
		sharded = fmax(0.0, sharded - split);
	}
	/* Unfused attention keeps softmax output, dropout mask and dropout
	 * output, 5 a s bytes per token (the softmax output alone, 2 a s,
	 * without dropout); fused (flash) attention keeps only O(s)
	 * statistics, and selective recomputation drops them. */
	scores = 0;
	if (o->b.attention == FW_ATTN_UNFUSED && !(mods & RM_CORE_ATTN))
		scores = (m->no_dropout ? 2.0 : 5.0) * m->heads * s;
	if (l->sp)
		return s * b * (replicated + sharded + scores) / t;
	return s * b * (replicated + (sharded + scores) / t);
}

/* nd dense and nm MoE layers' activations of one microbatch. */
static double layers_activations(const struct model_spec *m, const struct layout *l,
				 const struct train_opts *o, int nd, int nm)
{
	double a = 0;
	if (nd > 0)
		a += nd * memory_layer_activations(m, l, o, 0);
	if (nm > 0)
		a += nm * memory_layer_activations(m, l, o, 1);
	return a;
}

double memory_stage_activations(const struct model_spec *m, const struct layout *l,
				const struct train_opts *o, int stage)
{
	int n = memory_stage_layers(m, l, o, stage);
	int moe = memory_stage_moe_layers(m, l, o, stage);
	int rc = layout_recomputed_layers(l, n), off = layout_offloaded_layers(l, n);
	double a = layers_activations(m, l, o, n - moe, moe);
	/* Megatron's block method: rc of the n layers keep their input only,
	 * the others everything (the dense/MoE mix taken as the stage's). */
	if (l->recompute == RECOMPUTE_FULL && rc < n) {
		struct layout kept = *l;
		double share = (double)rc / n;
		kept.recompute = RECOMPUTE_NONE;
		kept.recompute_layers = 0;
		a = share * a + (1.0 - share) * layers_activations(m, &kept, o, n - moe, moe);
	}
	/* Activation CPU offloading: the off layers' activations wait in host
	 * memory; one layer's worth stays on the GPU in transit (the copy out
	 * of the last offloaded layer in the forward, the prefetch of the
	 * next one in the backward). */
	if (off > 0)
		a -= (off - 1.0) * a / n;
	/* the stage's bf16 layers of an fp8-class run keep their GEMM inputs
	 * in two bytes (the stage's dense/MoE mix) */
	{
		int nb = memory_stage_bf16_layers(m, l, o, stage);
		if (nb > 0 && n > 0) {
			struct train_opts o16 = *o;
			o16.precision = PREC_BF16;
			a += nb * (layers_activations(m, l, &o16, n - moe, moe) -
				   layers_activations(m, l, o, n - moe, moe)) / n;
		}
	}
	return a;
}

double memory_inflight(const struct layout *l, long microbatches, int stage)
{
	int p = l->pp, v = l->vp;
	double n;
	switch (l->schedule) {
	case SCHED_GPIPE:
		return (double)microbatches;
	case SCHED_INTERLEAVED: {
		double chunks = 2.0 * (p - stage - 1) + (double)(v - 1) * p + 1;
		if (chunks > (double)microbatches * v)
			chunks = (double)microbatches * v;
		return chunks / v;
	}
	case SCHED_DUALPIPE:
		/* DeepSeek-V3 report, Table 2: PP + 1 microbatches of a
		 * stage's activations on every rank, over its two stages */
		n = p + 1;
		return n < (double)microbatches ? n : (double)microbatches;
	case SCHED_1F1B:
	case SCHED_ZB_H1:
		break;
	}
	n = p - stage;
	return n < (double)microbatches ? n : (double)microbatches;
}

void memory_stage(const struct model_spec *m, const struct cluster *c,
		  const struct layout *l, const struct train_opts *o,
		  int stage, struct mem_breakdown *out)
{
	struct stage_params sp;
	double dp_shard = (double)l->dp * l->cp;      /* dense replicas */
	double ep_shard = layout_expert_dp(l);        /* expert replicas */
	/* fp32 (the CPU backend): 4-byte weights that are their own master
	 * copy and 4-byte activations; no CUDA context or NCCL buffers on
	 * CPU ranks (sim/MODEL.md 12) */
	int fp32 = o->precision == PREC_FP32, cpu = strcmp(c->gpu.name, "cpu") == 0;
	double w_b = fp32 ? 4.0 : 2.0, g_b, opt_b = train_opts_optimizer_bytes(o, l);
	double params, inflight, act, work, other;
	double act_scale = fp32 ? 2.0 : 1.0; /* activations' bytes over 2-byte elements */
	long micro = layout_microbatches(l);
	double s = (double)o->seq / l->cp, b = l->mbs, h = (double)m->hidden;
	const struct cost_params *k = train_opts_params(o);

	memory_rank_params(m, l, o, stage, &sp);
	params = sp.train_dense + sp.train_expert; /* what trains */

	/* Weights: half precision, or under FSDP the sharded fp32 master
	 * copy (the half-precision layer is gathered when used, in other);
	 * a frozen model has no master, and LoRA's adapters sit beside it. */
	if (o->b.fp8_weights)
		w_b = fw_fp8_bytes(&o->b);
	if (l->zero >= 3 && o->b.sharding == FW_SHARD_FSDP && o->lora_rank <= 0)
		w_b = 4.0;
	out->weights = w_b * (l->zero >= 3 ? sp.dense / dp_shard + sp.expert / ep_shard
					    : sp.dense + sp.expert);
	if (o->lora_rank > 0)
		out->weights += (fp32 ? 4.0 : 2.0) * params;
	/* Gradients in the framework's dtype (the one it reduces), and the
	 * half-precision .grad that DeepSpeed's bf16 optimizer keeps beside
	 * its fp32 accumulation buffer. */
	g_b = o->b.grad_bytes;
	out->gradients = g_b * (l->zero >= 2 ? sp.train_dense / dp_shard + sp.train_expert / ep_shard
					     : params);
	if (o->b.half_grad_copy)
		out->gradients += 2.0 * params;
	/* Optimizer states: fp32 master weights and Adam's two moments (the
	 * master is the weight itself under FSDP; train_opts_optimizer_bytes). */
	out->optimizer = opt_b * (l->zero >= 1 ? sp.train_dense / dp_shard +
						     sp.train_expert / ep_shard
					       : params);
	/* Optimizer offload: the states live in host memory; ZeRO-Offload
	 * also streams the reduced gradient shard there (in fp32 for the
	 * CPU step), keeping only its buckets on the GPU (sim/MODEL.md 8.2). */
	out->host = 0;
	if (l->optimizer_offload) {
		double shard = sp.train_dense / dp_shard + sp.train_expert / ep_shard;
		out->host = out->optimizer;
		out->optimizer = 0;
		if (o->b.sharding == FW_SHARD_DEEPSPEED) {
			out->host += 4.0 * shard;
			if (l->zero >= 2) /* the shard goes to the host; buckets stay (other) */
				out->gradients = 0;
		}
	}

	/* Activations of the microbatches in flight, plus the working set of
	 * the layer being differentiated. */
	inflight = memory_inflight(l, micro, stage);
	if (o->b.pipe == FW_PIPE_DEEPSPEED && l->pp > 1 && inflight < micro)
		inflight += 1; /* DeepSpeed's TrainSchedule keeps p - stage + 1 buffers */
	act = memory_stage_activations(m, l, o, stage) * act_scale * inflight;
	if (layout_mirror_stage(l, stage) >= 0)
		/* half of them on each of the rank's two stages */
		act = 0.5 * (act + memory_stage_activations(m, l, o, layout_mirror_stage(l, stage)) *
					   act_scale * inflight);
	{
		struct layout full = *l;
		struct train_opts o16 = *o; /* a bf16 layer's, where the stage has one */
		full.recompute = RECOMPUTE_NONE;
		o16.precision = PREC_BF16;
		work = memory_layer_activations(m, &full,
						memory_stage_bf16_layers(m, l, o, stage) > 0 ? &o16 : o,
						sp.moe_layers > 0) * act_scale;
	}
	if (sp.has_embedding && !m->no_dropout) /* the embedding dropout mask, 1 B per element */
		act += inflight * s * b * h / (l->sp ? l->tp : 1);
	if (sp.has_lm_head) /* the logits and the loss's fp32 tensors */
		work += o->b.loss_bytes * s * b * (double)train_opts_vocab(o, l, m->vocab) / l->tp;
	if (o->b.pipe == FW_PIPE_DEEPSPEED && l->pp > 1)
		/* DeepSpeed's pipeline engine keeps each in-flight
		 * microbatch's stage output tensor (its input is the first
		 * layer's checkpoint, counted above). */
		act += inflight * (2.0 * s * b * h);
	out->activations = act + work;
	out->inflight = inflight;

	/* What a real run adds: CUDA context and cuBLAS workspace, NCCL
	 * channel buffers, and the caching allocator's fragmentation of the
	 * activation memory that is freed and reallocated every microbatch. */
	other = cpu ? 0 : k->mem_context_gib * GIB;
	if (layout_gpus(l) > 1 && !cpu)
		other += k->mem_nccl_gib * GIB;
	if (o->b.sharding == FW_SHARD_DEEPSPEED && l->zero >= 1 && l->zero <= 2)
		other += 2.0 * DS_BUCKET_ELEMS * 2.0;
	other += k->mem_fragmentation * work;
	if (l->zero >= 3) {
		/* Gathered full layers: the one in use and the prefetched
		 * next; DeepSpeed caps live parameters at 1e9 elements. */
		double live = 2.0 * (sp.dense + sp.expert) / sp.layers;
		if (o->b.sharding == FW_SHARD_DEEPSPEED && live > DS_MAX_LIVE_PARAMS)
			live = DS_MAX_LIVE_PARAMS;
		other += (o->b.fp8_weights ? fw_fp8_bytes(&o->b) : 2.0) * live;
	}
	/* The optimizer step makes an fp32 copy of the gradient shard when
	 * the gradients are narrower.  The activations are free by then, so
	 * only what exceeds them (and their allocator reserve) adds. */
	if (g_b < 4 && !l->optimizer_offload) {
		double shard = l->zero >= 1 ? sp.train_dense / dp_shard + sp.train_expert / ep_shard
					    : params;
		double freed = out->activations * (1.0 + k->mem_fragmentation);
		if (4.0 * shard > freed)
			other += 4.0 * shard - freed;
	}
	out->other = other;
	out->total = out->weights + out->gradients + out->optimizer +
		     out->activations + out->other;
	out->stage = stage;
}

void memory_peak(const struct model_spec *m, const struct cluster *c,
		 const struct layout *l, const struct train_opts *o,
		 struct mem_breakdown *out)
{
	/* The edges (embedding, head, their own layer counts), the first
	 * full stage (most in flight), the middle and the one before last. */
	int cand[5] = { 0, 1, l->pp / 2, l->pp - 2, l->pp - 1 };
	out->total = -1;
	for (int i = 0; i < 5; i++) {
		struct mem_breakdown mb;
		if (cand[i] < 0 || cand[i] >= l->pp || (i > 0 && cand[i] <= cand[i - 1]))
			continue;
		memory_stage(m, c, l, o, cand[i], &mb);
		if (mb.total > out->total)
			*out = mb;
	}
}
