/*
 * emit.c: launch configurations (emit.h); NeMo's and Megatron-Bridge's
 * recipe overrides are in emit_recipe.c.  Flag and key names are those
 * of the frameworks' documentation as of 2025-26: Megatron-LM
 * (megatron/training/arguments.py), torchtitan 0.3's command line (torchtitan/config/manager.py, the
 * config_registry functions, pipeline_parallel.py's stage split), DeepSpeed's
 * config reference.  Where a framework has no switch for part of the
 * layout, a note says so and what the output runs instead.
 */
#include "emit.h"
#include "emit_internal.h"

#include "memory.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *const format_names[EMIT_COUNT] = {
	"megatron", "nemo", "torchtitan", "deepspeed", "bridge",
};

const char *emit_format_name(enum emit_format f)
{
	return (f >= 0 && f < EMIT_COUNT) ? format_names[f] : "?";
}

int emit_format_parse(const char *s, enum emit_format *out)
{
	for (int i = 0; i < EMIT_COUNT; i++)
		if (strcmp(s, format_names[i]) == 0) {
			*out = (enum emit_format)i;
			return 0;
		}
	return -1;
}

void emit_note(struct notes *n, const char *s)
{
	if (n->n < EMIT_MAX_NOTES) {
		snprintf(n->text[n->n++], sizeof n->text[0], "%s", s);
		return;
	}
	/* full: the last note becomes the count of those left out */
	n->dropped += n->dropped ? 1 : 2;
	snprintf(n->text[EMIT_MAX_NOTES - 1], sizeof n->text[0],
		 "%d further notes left out (pplan keeps %d)", n->dropped, EMIT_MAX_NOTES - 1);
}

int emit_default_order(const struct train_opts *o)
{
	struct rank_order d;
	rank_order_default(&d);
	return rank_order_eq(&o->order, &d);
}

int emit_alt_order(const struct train_opts *o)
{
	struct rank_order a;
	rank_order_parse("tp-cp-pp-dp", &a, NULL);
	return rank_order_eq(&o->order, &a);
}

static long microbatches(const struct layout *l)
{
	return layout_microbatches(l);
}

/* ---- Megatron-LM ------------------------------------------------------------ */

static int gdn_attention_every(const struct model_spec *m);

/* Nemotron-H's one-block layers (a Mamba-2 mixer, or a layer with no
 * mixer): Megatron places them, and their MoE layers, by
 * --hybrid-override-pattern. */
static int one_block_layers(const struct model_spec *m)
{
	return strchr(m->mixers, 'M') || strchr(m->mixers, '-');
}
static int window_every(const struct model_spec *m);

static void megatron_notes(const struct emit_input *in, struct notes *n)
{
	const struct layout *l = in->l;
	char b[256];
	if (l->schedule == SCHED_GPIPE && l->pp > 1)
		emit_note(n, "schedule gpipe is not expressible in Megatron-LM: with pp > 1 and no virtual stages it runs 1F1B (these flags), whose bubble is the same and whose activation memory is lower");
	if (l->schedule == SCHED_DUALPIPE)
		emit_note(n, "schedule dualpipe is not in Megatron-LM (DeepSeek's DualPipe runs in their own framework, with deepseek-ai/DualPipe): these flags run 1F1B, with one copy of the stage's weights and a larger bubble");
	if (l->schedule == SCHED_ZB_H1)
		emit_note(n, "schedule zb-h1 is not in mainline Megatron-LM: the zero-bubble authors' fork (sail-sg/zero-bubble-pipeline-parallelism) runs it with --enable-zero-bubble --zero-bubble-max-pending-backward <pp>; these flags run 1F1B");
	if (!emit_default_order(in->o) && !emit_alt_order(in->o)) {
		char o[32];
		rank_order_format(&in->o->order, o, sizeof o);
		snprintf(b, sizeof b, "rank order %s is not expressible in Megatron-LM (it offers tp-cp-dp-pp and, with --use-tp-pp-dp-mapping, tp-cp-pp-dp); these flags use tp-cp-dp-pp", o);
		emit_note(n, b);
	}
	if (l->zero >= 2)
		emit_note(n, "zero 2/3 is Megatron-LM's FSDP (Megatron-Core 0.14 and later: --use-megatron-fsdp; earlier --use-custom-fsdp), which needs --ckpt-format fsdp_dtensor, --use-distributed-optimizer and --no-gradient-accumulation-fusion");
	if (in->m->mlp == MLP_GEGLU)
		emit_note(n, "Megatron-LM has no GeGLU switch (--swiglu is SwiGLU): the activation needs a custom layer spec");
	if (in->m->attn_sinks || in->m->attn_bias || in->m->mlp_bias || in->m->moe_bias)
		emit_note(n, "the model's attention sinks and attention, MLP or expert biases have no argument here (pplan priced them): these arguments define the model without them");
	if (in->m->mlp == MLP_RELU)
		emit_note(n, "Megatron-LM has no ReLU switch (its default is GeLU, the same FLOPs and memory): the activation needs a custom layer spec");
	if (one_block_layers(in->m))
		emit_note(n, "a hybrid stack of one-block layers (Nemotron-H): Megatron-LM trains it with pretrain_mamba.py, which takes these arguments and --hybrid-override-pattern");
	if (in->m->sliding_window > 0 && in->m->window_layers > 0 && !window_every(in->m))
		emit_note(n, "the sliding-window layers are not every layer but each N-th: --window-attn-skip-freq takes the list of windowed layers in Python syntax, which these arguments leave out (full attention everywhere)");
	if (strchr(in->m->mixers, 'G') && !gdn_attention_every(in->m))
		emit_note(n, "the Gated DeltaNet layers are not placed every N-th: --linear-attention-freq takes the list of layer kinds in Python syntax, which these arguments leave out");
	if (in->m->alibi)
		emit_note(n, "the model's positions are ALiBi, which Megatron-Core does not have (BLOOM trained with Megatron-DeepSpeed): these arguments leave Megatron's learned absolute positions");
	if (in->m->parallel_block)
		emit_note(n, "the model runs attention and the MLP side by side on one residual (GPT-NeoX, GPT-J, Falcon), which Megatron-Core's layers do not: these arguments build sequential layers of the same shapes and cost");
}

static void megatron_layout_args(FILE *f, const struct emit_input *in,
				 const char *pre, const char *sep)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	fprintf(f, "%s--tensor-model-parallel-size %d%s", pre, l->tp, sep);
	fprintf(f, "%s--pipeline-model-parallel-size %d%s", pre, l->pp, sep);
	if (l->cp > 1)
		fprintf(f, "%s--context-parallel-size %d%s", pre, l->cp, sep);
	if (l->ep > 1)
		fprintf(f, "%s--expert-model-parallel-size %d%s", pre, l->ep, sep);
	if (l->etp > 0 && l->etp != l->tp)
		fprintf(f, "%s--expert-tensor-parallel-size %d%s", pre, l->etp, sep);
	if (in->pp_layout) {
		/* the string is the split (and the chunks per rank) */
		fprintf(f, "%s--pipeline-model-parallel-layout '%s'%s", pre, in->pp_layout, sep);
	} else if (l->pp > 1 && (l->pp_embed || l->pp_loss)) {
		/* The embedding and the loss count as layers of the split. */
		if (l->pp_embed)
			fprintf(f, "%s--account-for-embedding-in-pipeline-split%s", pre, sep);
		if (l->pp_loss)
			fprintf(f, "%s--account-for-loss-in-pipeline-split%s", pre, sep);
		if (l->vp > 1)
			fprintf(f, "%s--num-virtual-stages-per-pipeline-rank %d%s", pre, l->vp,
				sep);
	} else if (l->pp > 1) {
		/* Uneven stages: the first and last stage layer counts where
		 * they differ from the others' (Megatron-LM's uneven split). */
		int first = memory_stage_layers(in->m, l, o, 0);
		int mid = memory_stage_layers(in->m, l, o, l->pp / 2);
		int last = memory_stage_layers(in->m, l, o, l->pp - 1);
		if (first != mid)
			fprintf(f, "%s--decoder-first-pipeline-num-layers %d%s", pre, first, sep);
		if (last != mid)
			fprintf(f, "%s--decoder-last-pipeline-num-layers %d%s", pre, last, sep);
		/* With uneven stages the chunks differ in layers: Megatron-Core
		 * takes the chunks per rank instead. */
		if (l->vp > 1 && (first != mid || last != mid))
			fprintf(f, "%s--num-virtual-stages-per-pipeline-rank %d%s", pre, l->vp,
				sep);
		else if (l->vp > 1)
			fprintf(f, "%s--num-layers-per-virtual-pipeline-stage %d%s", pre,
				mid / l->vp, sep);
	}
	fprintf(f, "%s--micro-batch-size %d%s", pre, l->mbs, sep);
	fprintf(f, "%s--global-batch-size %ld%s", pre, l->gbs, sep);
	fprintf(f, "%s--seq-length %ld%s", pre, o->seq, sep);
	if (l->sp)
		fprintf(f, "%s--sequence-parallel%s", pre, sep);
	if (l->recompute == RECOMPUTE_SELECTIVE && l->recompute_modules) {
		char mods[128];
		recompute_modules_format(l->recompute_modules, mods, sizeof mods, " ");
		fprintf(f, "%s--recompute-granularity selective --recompute-modules %s%s", pre, mods,
			sep);
	} else if (l->recompute == RECOMPUTE_SELECTIVE) {
		fprintf(f, "%s--recompute-granularity selective%s", pre, sep);
	} else if (l->recompute == RECOMPUTE_FULL && l->recompute_layers > 0) {
		fprintf(f, "%s--recompute-granularity full --recompute-method block --recompute-num-layers %d%s",
			pre, l->recompute_layers, sep);
	} else if (l->recompute == RECOMPUTE_FULL) {
		fprintf(f, "%s--recompute-granularity full --recompute-method uniform --recompute-num-layers 1%s",
			pre, sep);
	}
	if (l->offload_layers > 0)
		fprintf(f, "%s--cpu-offloading --cpu-offloading-num-layers %d%s",
			pre, l->offload_layers, sep);
	if (train_opts_moe_a2a_overlap(o, l))
		fprintf(f, "%s--overlap-moe-expert-parallel-comm --delay-wgrad-compute%s", pre, sep);
	if (o->b.moe_shared_overlap && in->m->shared_experts > 0 && l->ep > 1)
		fprintf(f, "%s--moe-shared-expert-overlap%s", pre, sep);
	if (train_opts_bf16_moments(o, l))
		fprintf(f, "%s--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16%s",
			pre, sep);
	if (l->offload_modules) {
		char mods[160];
		offload_modules_format(l->offload_modules, mods, sizeof mods, " ");
		fprintf(f, "%s--fine-grained-activation-offloading --offload-modules %s%s", pre, mods,
			sep);
	}
	if (l->zero == 1)
		fprintf(f, "%s--use-distributed-optimizer%s", pre, sep);
	if (l->zero == 1 && l->optimizer_offload)
		fprintf(f, "%s--optimizer-cpu-offload --optimizer-offload-fraction 1.0%s", pre, sep);
	else if (l->zero >= 2)
		/* The flags Megatron-Core's Megatron FSDP guide lists: its own
		 * buffers take the gradients, so no accumulation fusion into
		 * main_grad, and the distributed optimizer on top. */
		fprintf(f, "%s--use-megatron-fsdp --data-parallel-sharding-strategy %s --ckpt-format fsdp_dtensor "
			   "--use-distributed-optimizer --no-gradient-accumulation-fusion%s",
			pre, l->zero == 2 ? "optim_grads" : "optim_grads_params", sep);
	if (o->b.overlap_grad_reduce && l->dp * l->cp > 1)
		fprintf(f, "%s--overlap-grad-reduce%s", pre, sep);
	if (o->b.overlap_param_gather && l->zero >= 1 && l->dp * l->cp > 1)
		fprintf(f, "%s--overlap-param-gather%s", pre, sep);
	if (o->b.tp_overlap != FW_TPO_NONE && l->tp > 1)
		fprintf(f, "%s--tp-comm-overlap%s", pre, sep);
	if (emit_alt_order(o) && l->pp > 1 && l->dp > 1)
		fprintf(f, "%s--use-tp-pp-dp-mapping%s", pre, sep);
	if (o->b.attention == FW_ATTN_UNFUSED)
		fprintf(f, "%s--attention-backend unfused%s", pre, sep);
	if (o->b.grad_bytes == 2 && o->precision != PREC_FP16)
		fprintf(f, "%s--grad-reduce-in-bf16%s", pre, sep);
	fprintf(f, "%s--%s%s", pre, o->precision == PREC_FP16 ? "fp16" : "bf16", sep);
	/* fp8: its recipe (Megatron's default is delayed scaling); MXFP8 in
	 * e4m3 throughout, as NVIDIA's recipes set it; NVFP4 is Megatron-Core's
	 * fp4 mode (fp4 and fp8 exclude each other) */
	if (o->precision == PREC_FP8 && o->b.fp8_recipe == FP8_NVFP4) {
		fprintf(f, "%s--fp4-format e2m1%s%s--fp4-recipe nvfp4%s", pre, sep, pre, sep);
	} else if (o->precision == PREC_FP8) {
		fprintf(f, "%s--fp8-format %s%s", pre, o->b.fp8_recipe == FP8_MXFP8 ? "e4m3" : "hybrid",
			sep);
		if (o->b.fp8_recipe != FP8_DELAYED && o->b.fp8_recipe != FP8_FRAMEWORK)
			fprintf(f, "%s--fp8-recipe %s%s", pre, fp8_recipe_name(o->b.fp8_recipe), sep);
	}
	if (o->bf16_first > 0 || o->bf16_last > 0)
		fprintf(f, "%s--first-last-layers-bf16%s%s--num-layers-at-start-in-bf16 %d%s"
			   "%s--num-layers-at-end-in-bf16 %d%s",
			pre, sep, pre, o->bf16_first, sep, pre, o->bf16_last, sep);
}

/* Positions as the model has them (Megatron's default is a learned
 * absolute table, base 10000 for rotary): rotary with its base, the
 * fraction of each head it turns, and Llama 3.1's or YaRN's context
 * extension.  Megatron-Core has no ALiBi (a note says so). */
static void megatron_position_args(FILE *f, const struct model_spec *m, const char *pre)
{
	if (m->pos_embedding > 0) {
		fprintf(f, "%s--position-embedding-type learned_absolute\n", pre);
		return;
	}
	if (m->alibi)
		return;
	if (strchr(m->mixers, 'M')) { /* Nemotron-H: the Mamba-2 layers order the tokens */
		fprintf(f, "%s--position-embedding-type none\n", pre);
		return;
	}
	fprintf(f, "%s--position-embedding-type rope --rotary-base %.0f\n", pre,
		m->rope_theta > 0 ? m->rope_theta : 10000.0);
	if (m->rope_percent > 0 && m->rope_percent < 1)
		fprintf(f, "%s--rotary-percent %g\n", pre, m->rope_percent);
	if (strcmp(m->rope_scaling, "llama3") == 0)
		fprintf(f, "%s--use-rope-scaling --rope-scaling-factor %g\n", pre,
			m->rope_factor > 0 ? m->rope_factor : 8.0);
	else if (strcmp(m->rope_scaling, "yarn") == 0)
		fprintf(f, "%s--rope-type yarn --rotary-scaling-factor %g\n", pre,
			m->rope_factor > 0 ? m->rope_factor : 1.0);
}

/* The N of Megatron-Core's --window-attn-skip-freq (every N-th layer full
 * attention, the others a sliding window) that windows m's window_layers
 * of its layers; 1 when every layer is windowed; 0 when no N does. */
static int window_every(const struct model_spec *m)
{
	if (m->window_layers >= m->layers)
		return 1;
	for (int n = 2; n <= m->layers; n++)
		if (m->layers - m->layers / n == m->window_layers)
			return n;
	return 0;
}

/* Sliding windows (GPT-OSS, Mistral, Gemma 2 and 3): Megatron-Core's
 * window is the keys before the query, Hugging Face's counts the query
 * too, hence W - 1. */
static void megatron_window_args(FILE *f, const struct model_spec *m, const char *pre)
{
	int every;
	if (m->sliding_window <= 0 || m->window_layers <= 0 || !(every = window_every(m)))
		return;
	fprintf(f, "%s--window-size %ld,0\n", pre, m->sliding_window - 1);
	if (every > 1)
		fprintf(f, "%s--window-attn-skip-freq %d\n", pre, every);
}

/* Every full_attention-th layer attention, the others Gated DeltaNet
 * (Megatron-Core's --linear-attention-freq N); 0 when the mixers are
 * not so placed. */
static int gdn_attention_every(const struct model_spec *m)
{
	int n = (int)strlen(m->mixers), every = 0;
	for (int i = 0; i < n && !every; i++)
		if (m->mixers[i] == 'A')
			every = i + 1;
	for (int i = 0; every && i < n; i++)
		if ((m->mixers[i] == 'A') != ((i + 1) % every == 0) ||
		    (m->mixers[i] != 'A' && m->mixers[i] != 'G'))
			return 0;
	return every;
}

/* A hybrid stack's arguments: Nemotron-H's one-block layers as
 * Megatron's --hybrid-override-pattern (M Mamba-2, * attention, - MLP,
 * E MoE) with the Mamba-2 widths (pretrain_mamba.py trains it); Gated
 * DeltaNet mixers as Megatron-Core's experimental attention variant. */
static void megatron_hybrid_args(FILE *f, const struct model_spec *m, const char *pre)
{
	int n = (int)strlen(m->mixers), every;
	if (one_block_layers(m)) {
		char pat[MODEL_MAX_PATTERN + 1];
		for (int i = 0; i < n; i++)
			pat[i] = m->mixers[i] == 'M' ? 'M' : m->mixers[i] == 'A' ? '*'
				 : m->ffns[i] == 'E' ? 'E' : '-';
		pat[n] = '\0';
		fprintf(f, "%s--hybrid-override-pattern %s\n", pre, pat);
		if (strchr(m->mixers, 'M'))
			fprintf(f, "%s--mamba-num-heads %ld --mamba-head-dim %ld --mamba-num-groups %ld --mamba-state-dim %ld\n",
				pre, m->mamba_heads, m->mamba_head_dim, m->mamba_groups, m->mamba_state);
	}
	if (strchr(m->mixers, 'G') && (every = gdn_attention_every(m)) > 0)
		fprintf(f, "%s--experimental-attention-variant gated_delta_net --linear-attention-freq %d --linear-num-key-heads %ld --linear-num-value-heads %ld --linear-key-head-dim %ld --linear-value-head-dim %ld --linear-conv-kernel-dim %ld\n",
			pre, every, m->gdn_k_heads, m->gdn_v_heads, m->gdn_k_dim, m->gdn_v_dim,
			m->gdn_conv);
	if (m->attn_out_gate)
		fprintf(f, "%s--attention-output-gate\n", pre);
}

static void megatron_model_args(FILE *f, const struct model_spec *m,
				const struct train_opts *o, const char *pre)
{
	fprintf(f, "%s--num-layers %d\n", pre, m->layers);
	fprintf(f, "%s--hidden-size %ld\n", pre, m->hidden);
	fprintf(f, "%s--ffn-hidden-size %ld\n", pre, m->ffn);
	fprintf(f, "%s--num-attention-heads %d\n", pre, m->heads);
	if (m->kv_heads != m->heads)
		fprintf(f, "%s--group-query-attention --num-query-groups %d\n", pre,
			m->kv_heads);
	if (m->head_dim > 0 && m->head_dim != m->hidden / m->heads)
		fprintf(f, "%s--kv-channels %ld\n", pre, m->head_dim);
	/* the tokenizer sets the vocabulary; --vocab-size says which (it is
	 * what Megatron's NullTokenizer takes, and pplan reads it back) */
	fprintf(f, "%s--vocab-size %ld\n", pre, m->vocab);
	if (model_is_hybrid(m))
		megatron_hybrid_args(f, m, pre);
	fprintf(f, "%s--max-position-embeddings %ld\n", pre,
		m->pos_embedding > o->seq ? m->pos_embedding : o->seq);
	megatron_position_args(f, m, pre);
	megatron_window_args(f, m, pre);
	if (m->norm_eps > 0)
		fprintf(f, "%s--norm-epsilon %g\n", pre, m->norm_eps);
	/* Megatron's defaults are 0.1 each: a model trained without
	 * dropout says so, as pplan priced it (no masks kept) */
	if (m->no_dropout)
		fprintf(f, "%s--hidden-dropout 0 --attention-dropout 0\n", pre);
	if (m->mlp == MLP_SWIGLU)
		fprintf(f, "%s--swiglu\n", pre);
	else if (m->mlp == MLP_SQUARED_RELU)
		fprintf(f, "%s--squared-relu\n", pre);
	if (m->norm == NORM_RMSNORM)
		fprintf(f, "%s--normalization RMSNorm\n", pre);
	if (!m->tied_embeddings)
		fprintf(f, "%s--untie-embeddings-and-output-weights\n", pre);
	if (!m->linear_bias)
		fprintf(f, "%s--disable-bias-linear\n", pre);
	if (m->qkv_bias)
		fprintf(f, "%s--add-qkv-bias\n", pre);
	if (m->qk_norm)
		fprintf(f, "%s--qk-layernorm\n", pre);
	if (model_is_mla(m)) {
		fprintf(f, "%s--multi-latent-attention --kv-lora-rank %ld --qk-head-dim %ld --qk-pos-emb-head-dim %ld --v-head-dim %ld\n",
			pre, m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim);
		if (m->q_lora_rank > 0)
			fprintf(f, "%s--q-lora-rank %ld\n", pre, m->q_lora_rank);
	}
	if (m->num_experts > 1) {
		int moe = model_moe_layers(m);
		fprintf(f, "%s--num-experts %d --moe-router-topk %d\n", pre,
			m->num_experts, m->top_k);
		if (m->route_groups > 1) /* group-limited routing (DeepSeek) */
			fprintf(f, "%s--moe-router-num-groups %d --moe-router-group-topk %d\n", pre,
				m->route_groups, m->route_topk_groups);
		if (m->router_sigmoid)
			fprintf(f, "%s--moe-router-score-function sigmoid%s\n", pre,
				m->router_expert_bias ? " --moe-router-enable-expert-bias" : "");
		if (m->router_pre_softmax)
			fprintf(f, "%s--moe-router-pre-softmax\n", pre);
		if (m->router_scale > 0)
			fprintf(f, "%s--moe-router-topk-scaling-factor %g\n", pre, m->router_scale);
		/* what pplan prices: the tokens go to their experts' ranks in
		 * all-to-alls (or the flex dispatcher's DeepEP, once per
		 * remote node; or gathered on every rank), and each rank's
		 * experts run as one grouped GEMM */
		if (o->b.moe_flex)
			fprintf(f, "%s--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --moe-grouped-gemm\n",
				pre);
		else if (o->b.moe_allgather)
			fprintf(f, "%s--moe-token-dispatcher-type allgather --moe-grouped-gemm\n", pre);
		else
			fprintf(f, "%s--moe-token-dispatcher-type alltoall --moe-grouped-gemm\n", pre);
		if (m->moe_ffn > 0)
			fprintf(f, "%s--moe-ffn-hidden-size %ld\n", pre, m->moe_ffn);
		if (m->shared_experts > 0)
			fprintf(f, "%s--moe-shared-expert-intermediate-size %ld\n", pre,
				(long)m->shared_experts * model_shared_ffn(m));
		if (m->shared_experts > 0 && m->shared_gate) /* Qwen2-MoE, Qwen3-Next */
			fprintf(f, "%s--moe-shared-expert-gate\n", pre);
		if (one_block_layers(m))
			; /* the hybrid pattern places them */
		else if (moe < m->layers && m->moe_every <= 1)
			fprintf(f, "%s--moe-layer-freq \"([0]*%d+[1]*%d)\"\n", pre,
				m->dense_layers, moe);
		else if (m->moe_every > 1)
			fprintf(f, "%s--moe-layer-freq %d\n", pre, m->moe_every);
	}
}

/* Writes the flags as shell words, wrapped before a flag once a line
 * passes about 100 columns, with " \\" continuations, so that the block
 * pastes into a shell as one command line. */
const struct emit_input *emit_with_table(const struct emit_input *in, struct emit_input *own)
{
	if (in->pp_layout || !in->l->pp_table)
		return in;
	*own = *in;
	own->pp_layout = in->l->pp_table->text;
	return own;
}

void emit_megatron_flags(FILE *f, const struct emit_input *in, const char *indent)
{
	struct emit_input own;
	struct notes n = { .n = 0 };
	char *buf = NULL;
	size_t len = 0, col = 0;
	FILE *m = open_memstream(&buf, &len);

	in = emit_with_table(in, &own);
	if (!m)
		return;
	megatron_layout_args(m, in, "", "\n");
	fclose(m);
	fprintf(f, "%s", indent);
	col = strlen(indent);
	for (char *arg = strtok(buf, "\n"); arg; arg = strtok(NULL, "\n")) {
		size_t w = strlen(arg);
		if (col > strlen(indent) && col + 1 + w > 100) {
			fprintf(f, " \\\n%s", indent);
			col = strlen(indent);
		} else if (col > strlen(indent)) {
			fputc(' ', f);
			col++;
		}
		fputs(arg, f);
		col += w;
	}
	fputc('\n', f);
	free(buf);
	megatron_notes(in, &n);
	for (int i = 0; i < n.n; i++)
		fprintf(f, "%snote: %s\n", indent, n.text[i]);
}

/* ---- the header every output opens with -------------------------------------- */

/* What each format was checked against: the frameworks' own code, in
 * tests/conformance, where it installs here. */
static const char *const checked[EMIT_COUNT] = {
	"Megatron-Core 0.16.1 (its TransformerConfig; the newest megatron-core on PyPI) and Megatron-LM's training arguments, by tests/conformance",
	"NeMo 25.11's source (nemo_toolkit 2.6.2: the recipe and its pretrain_recipe or finetune_recipe, the LoRA config, MegatronStrategy's, the data module's and the callback's parameters, the config fields), by tests/conformance; NeMo itself does not import without Transformer Engine, which does not install without a GPU",
	"torchtitan 0.3.0 (its ConfigManager, ParallelDims and stage split), by tests/conformance",
	"DeepSpeed 0.19.8 (its DeepSpeedConfig), by tests/conformance",
	"Megatron-Bridge 0.3.1's source (the newest megatron-bridge on PyPI: the recipe function, the LoRA config, the ConfigContainer's sections and their fields, CommOverlapConfig's, the mixed-precision names), by tests/conformance; Megatron-Bridge itself does not import without Transformer Engine, which does not install without a GPU",
};

void emit_header(FILE *f, const char *lead, const struct emit_input *in,
		 const char *what, enum emit_format fmt)
{
	const struct cluster *c = in->c;
	char lb[256];
	layout_format(in->l, lb, sizeof lb);
	/* the first line, so that nobody launches it unwarned */
	if (in->p && in->p->reject == REJECT_OOM)
		fprintf(f, "%s WARNING: this layout does not fit: it %s; it will run out of memory as it stands\n",
			lead, in->p->reject_msg);
	fprintf(f, "%s pplan %s (git %s): %s for %s on %ld x %s (%d node%s of %d)\n",
		lead, PPLAN_VERSION, PPLAN_GIT_HASH, what, in->m->name,
		cluster_gpus(c), c->gpu.name, c->num_nodes, c->num_nodes == 1 ? "" : "s",
		c->gpus_per_node);
	fprintf(f, "%s layout %s\n", lead, lb);
	fprintf(f, "%s checked against %s\n", lead, checked[fmt]);
	if (in->p)
		fprintf(f, "%s predicted %.3f s per step, %.1f %% MFU, %.1f GiB per GPU\n",
			lead, in->p->step_time_s, 100 * in->p->mfu,
			in->p->mem.total / (1024.0 * 1024.0 * 1024.0));
}

void emit_comment_notes(FILE *f, const char *lead, const struct notes *n)
{
	for (int i = 0; i < n->n; i++)
		fprintf(f, "%s note: %s\n", lead, n->text[i]);
}

static void emit_megatron(FILE *f, const struct emit_input *in)
{
	struct notes n = { .n = 0 };
	emit_header(f, "#", in, "Megatron-LM arguments", EMIT_MEGATRON);
	fprintf(f, "# pretrain_gpt.py, one process per GPU (torchrun --nproc-per-node %d --nnodes %d);\n"
		   "# add tokenizer, data, optimizer, learning-rate and checkpoint arguments\n",
		in->c->gpus_per_node, in->c->num_nodes);
	megatron_notes(in, &n);
	emit_comment_notes(f, "#", &n);
	fprintf(f, "MEGATRON_ARGS=(\n");
	megatron_model_args(f, in->m, in->o, "  ");
	if (in->mtp_layers > 0)
		fprintf(f, "  --mtp-num-layers %d\n", in->mtp_layers);
	megatron_layout_args(f, in, "  ", "\n");
	fprintf(f, ")\n");
}

/* ---- torchtitan ----------------------------------------------------------------- */

/* torchtitan 0.3's models (torchtitan/models/<module>/config_registry.py),
 * known by their shape: a zoo name, an HF config.json or a pplan.model/1
 * file of the same architecture finds the same entry. */
struct titan_model {
	const char *module, *config, *fp8_config, *zoo;
	int layers;
	long hidden;
	int experts;
	long vocab;
	const char *remark;
};

/* The zoo model of the same shape, where the zoo has one. */
static const struct titan_model titan_models[] = {
	{ "llama3", "llama3_8b", NULL, "llama3.1-8b", 32, 4096, 0, 128256, "its llama3 flavours are Llama 3.1's (RoPE scaling 8, the same shapes and cost)" },
	{ "llama3", "llama3_70b", NULL, "llama3.1-70b", 80, 8192, 0, 128256, "its llama3 flavours are Llama 3.1's (RoPE scaling 8, the same shapes and cost)" },
	{ "llama3", "llama3_405b", NULL, "llama3.1-405b", 126, 16384, 0, 128256, NULL },
	{ "qwen3", "qwen3_30b_a3b", NULL, "qwen3-30b-a3b", 48, 2048, 128, 151936, NULL },
	{ "deepseek_v3", "deepseek_v3_671b", "deepseek_v3_671b_float8", "deepseek-v3", 61, 7168, 256, 129280, NULL },
	{ "deepseek_v3", "deepseek_v3_16b", NULL, NULL, 27, 2048, 64, 102400, NULL },
	{ "gpt_oss", "gpt_oss_20b", NULL, "gpt-oss-20b", 24, 2880, 32, 201088, NULL },
	{ "gpt_oss", "gpt_oss_120b", NULL, "gpt-oss-120b", 36, 2880, 128, 201088, NULL },
};
#define TITAN_MODELS (sizeof titan_models / sizeof titan_models[0])

/* torchtitan's config of m's architecture: its zoo model's widths, heads,
 * experts and vocabulary (RoPE scaling aside: the remark says it), else
 * the entry's shape and vocabulary.  Llama 2 7B and Mistral 7B have Llama
 * 3 8B's layers and width, not its model. */
static int titan_same(const struct titan_model *t, const struct model_spec *m)
{
	const struct model_spec *z = t->zoo ? model_find(t->zoo) : NULL;
	if (t->layers != m->layers || t->hidden != m->hidden || t->experts != m->num_experts ||
	    t->vocab != m->vocab)
		return 0;
	return !z || (z->ffn == m->ffn && z->heads == m->heads && z->kv_heads == m->kv_heads &&
		      model_expert_ffn(z) == model_expert_ffn(m) &&
		      z->sliding_window == m->sliding_window && z->mlp == m->mlp);
}

static const struct titan_model *titan_model(const struct model_spec *m)
{
	for (size_t i = 0; i < TITAN_MODELS; i++)
		if (titan_same(&titan_models[i], m))
			return &titan_models[i];
	return NULL;
}

int emit_titan_config(const char *module, const char *config, const char **zoo, int *fp8)
{
	for (size_t i = 0; i < TITAN_MODELS; i++) {
		const struct titan_model *t = &titan_models[i];
		int is_fp8 = t->fp8_config && strcmp(config, t->fp8_config) == 0;
		if (strcmp(module, t->module) != 0 || (strcmp(config, t->config) != 0 && !is_fp8))
			continue;
		*zoo = t->zoo;
		*fp8 = is_fp8;
		return 0;
	}
	return -1;
}

static const char *titan_schedule(const struct layout *l, struct notes *n)
{
	if (l->pp == 1)
		return "1F1B";
	switch (l->schedule) {
	case SCHED_GPIPE: return "GPipe";
	case SCHED_INTERLEAVED: return "Interleaved1F1B";
	case SCHED_ZB_H1:
		emit_note(n, "schedule zb-h1 with one stage per rank is not expressible in torchtitan (its zero-bubble schedules, InterleavedZeroBubble and ZBVZeroBubble, need two or more stages per rank): this runs 1F1B");
		return "1F1B";
	case SCHED_DUALPIPE:
		emit_note(n, "schedule dualpipe is not expressible in torchtitan: its DualPipeV cuts the model into 2 x pp stages in a V, one copy of the weights, not DualPipe's two directions over pp stages; this runs 1F1B");
		return "1F1B";
	case SCHED_1F1B:
	default: return "1F1B";
	}
}

/* torchtitan's stage split (pipeline_parallel.py): layers + first- and
 * last-stage weights over pp x vp stages, layers_per_stage of them a
 * stage; 0 when that does not give exactly pp x vp even stages. */
/* torchtitan cuts ceil(units / layers_per_stage) stages, the last taking
 * what is left: the even cut where the units divide; for a layout
 * string's split, which torchtitan cannot write, the cut of as many
 * stages (its last stage lighter, said in the notes); else 0. */
static long titan_layers_per_stage(const struct model_spec *m, const struct layout *l)
{
	long units = (long)m->layers + (l->pp_embed != 0) + (l->pp_loss != 0);
	long stages = (long)l->pp * (l->vp > 1 ? l->vp : 1), lps;
	if (units % stages == 0)
		return units / stages;
	lps = (units + stages - 1) / stages;
	return l->pp_table && (units + lps - 1) / lps == stages ? lps : 0;
}

static void titan_notes(const struct emit_input *in, const struct titan_model *tm,
			struct notes *n)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	char b[256];

	if (!tm) {
		snprintf(b, sizeof b, "torchtitan 0.3 has no config for %s (%d layers, hidden %ld): write a config_registry function for its architecture and name it in --module/--config",
			 in->m->name, in->m->layers, in->m->hidden);
		emit_note(n, b);
	} else if (tm->remark) {
		snprintf(b, sizeof b, "%s: %s", tm->config, tm->remark);
		emit_note(n, b);
	}
	if (l->zero == 1 || l->zero == 2)
		emit_note(n, "torchtitan shards with FSDP2 and has no optimizer-only sharding: zero 1/2 become FSDP without resharding after the forward (ZeRO-2's memory)");
	if (o->precision == PREC_FP16)
		emit_note(n, "torchtitan trains in bf16 or fp32: fp16 mixed precision is not offered; this line trains in bf16");
	if (o->precision == PREC_FP8 && o->b.fp8_recipe == FP8_NVFP4)
		emit_note(n, "torchtitan 0.3 has no NVFP4 training (its low-precision converters are float8 and MXFP8): this line trains in bf16");
	else if (o->bf16_first > 0 || o->bf16_last > 0)
		emit_note(n, "torchtitan leaves modules out of float8 by name (filter_fqns) in a config function, which no command-line override reaches: the end layers priced in bf16 train like the rest here");
	else if (o->precision == PREC_FP8 && !(tm && tm->fp8_config))
		emit_note(n, "torchtitan 0.3 sets float8 as a model converter in a config function, which no command-line override reaches: this config trains in bf16 unless its config function adds Float8LinearConverter");
	if (l->pp_first > 0 || l->pp_last > 0)
		emit_note(n, "uneven first and last stages (pp_first/pp_last) need parallelism.module_fqns_per_model_part in a config function: this line splits evenly");
	if (in->pp_layout)
		emit_note(n, in->mtp_layers ? "the pipeline layout string is Megatron-Core's and its MTP layers are not torchtitan's: this line splits the model's own layers by torchtitan's rule, without them"
					    : "the pipeline layout string is Megatron-Core's: this line splits the layers by torchtitan's rule");
	if (l->pp > 1 && titan_layers_per_stage(in->m, l) == 0)
		emit_note(n, l->vp > 1 ? "the layers do not split into pp x vp even stages: torchtitan's layers_per_stage cannot express this interleaving"
		     : "the layers do not split evenly over the stages: torchtitan gives the first stages one layer more");
	if (l->ep > 1 && l->tp > 1 && layout_etp(l) > 1)
		emit_note(n, "torchtitan 0.3's expert parallelism borrows the TP ranks (its experts are not tensor-parallel): etp=1, not what was priced");
	if (!emit_default_order(o))
		emit_note(n, "torchtitan builds its device mesh as [pp, dp_replicate, dp_shard, cp, tp], outermost first, i.e. tp-cp-dp-pp: another rank order is not expressible");
	if (o->b.moe_a2a_overlap || o->b.moe_shared_overlap)
		emit_note(n, "torchtitan 0.3 has no MoE all-to-all or shared-expert overlap: this line runs them in sequence");
	if (o->b.moe_allgather && l->ep > 1)
		emit_note(n, "torchtitan 0.3 dispatches MoE tokens with all-to-alls: the allgather dispatcher pplan priced is not expressible here");
	if (train_opts_bf16_moments(o, l))
		emit_note(n, "torchtitan 0.3's AdamW keeps its moments in the parameters' fp32: the bf16 moments of the precision-aware optimizer pplan priced are not expressible here");
	if (l->recompute_layers > 0 || l->offload_layers > 0)
		emit_note(n, "torchtitan has no block recomputation of N layers (recompute_layers) or activation CPU offloading (offload_layers): this line checkpoints every layer in full, or none");
}

static void titan_pipeline_args(FILE *f, const struct emit_input *in, const char *sched)
{
	const struct layout *l = in->l;
	long lps = titan_layers_per_stage(in->m, l);

	fprintf(f, " \\\n  --parallelism.pipeline_parallel_degree %d", l->pp);
	if (l->pp == 1)
		return;
	fprintf(f, " \\\n  --parallelism.pipeline_parallel_schedule %s", sched);
	fprintf(f, " \\\n  --parallelism.pipeline_parallel_microbatch_size %d", l->mbs);
	fprintf(f, " \\\n  --parallelism.pipeline_parallel_first_stage_less_layers %d",
		l->pp_embed != 0);
	fprintf(f, " \\\n  --parallelism.pipeline_parallel_last_stage_less_layers %d",
		l->pp_loss != 0);
	if (lps > 0)
		fprintf(f, " \\\n  --parallelism.pipeline_parallel_layers_per_stage %ld", lps);
}

static void emit_torchtitan(FILE *f, const struct emit_input *in)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	const struct titan_model *tm = titan_model(in->m);
	const char *sched, *config;
	struct notes n = { .n = 0 };
	int replicate = l->zero == 0 ? l->dp : 1, shard = l->zero == 0 ? 1 : l->dp;
	int async_tp = o->b.tp_overlap != FW_TPO_NONE && l->tp > 1;
	int gpn = (int)(cluster_gpus(in->c) < in->c->gpus_per_node
			? cluster_gpus(in->c) : in->c->gpus_per_node);

	emit_header(f, "#", in, "torchtitan 0.3 launch line", EMIT_TORCHTITAN);
	titan_notes(in, tm, &n);
	sched = titan_schedule(l, &n);
	emit_comment_notes(f, "#", &n);
	config = tm ? (o->precision == PREC_FP8 && o->b.fp8_recipe != FP8_NVFP4 && tm->fp8_config
		       ? tm->fp8_config : tm->config)
		    : "CUSTOM";
	fprintf(f, "# run on every node (torchrun's rendezvous: --rdzv-backend c10d --rdzv-endpoint HOST:PORT)\n");
	fprintf(f, "torchrun --nnodes %d --nproc-per-node %d -m torchtitan.train", in->c->num_nodes, gpn);
	fprintf(f, " \\\n  --module %s --config %s", tm ? tm->module : "CUSTOM", config);
	fprintf(f, " \\\n  --training.local_batch_size %ld", l->pp > 1 ? l->gbs / l->dp : (long)l->mbs);
	fprintf(f, " \\\n  --training.global_batch_size %ld", l->gbs);
	fprintf(f, " \\\n  --training.seq_len %ld", o->seq);
	fprintf(f, " \\\n  --training.mixed_precision_param bfloat16 --training.mixed_precision_reduce float32");
	if (l->pp > 1 || l->ep > 1) /* trainer.py: CUDA graphs refuse pipelining and host-synchronising EP dispatch */
		fprintf(f, " \\\n  --training.disable_cuda_graphs");
	fprintf(f, " \\\n  --parallelism.data_parallel_replicate_degree %d", replicate);
	fprintf(f, " \\\n  --parallelism.data_parallel_shard_degree %d", shard);
	fprintf(f, " \\\n  --parallelism.fsdp_reshard_after_forward %s",
		l->zero == 3 ? "always" : l->zero == 0 ? "default" : "never");
	fprintf(f, " \\\n  --parallelism.tensor_parallel_degree %d", l->tp);
	fprintf(f, " \\\n  --parallelism.%senable_sequence_parallel", l->sp || l->tp == 1 ? "" : "no_");
	titan_pipeline_args(f, in, sched);
	fprintf(f, " \\\n  --parallelism.context_parallel_degree %d", l->cp);
	fprintf(f, " \\\n  --parallelism.expert_parallel_degree %d", l->ep);
	/* async TP needs the model compiled; a config may compile the loss
	 * alone (deepseek_v3's) */
	if (async_tp)
		fprintf(f, " \\\n  --compile.enable --compile.components model,loss --compile.enable_async_tensor_parallel");
	else
		fprintf(f, " \\\n  --compile.no_enable_async_tensor_parallel");
	fprintf(f, " \\\n  activation_checkpoint:%s\n",
		l->recompute == RECOMPUTE_NONE ? "none"
		: l->recompute == RECOMPUTE_SELECTIVE ? "selective" : "full");
}

/* ---- DeepSpeed ------------------------------------------------------------------ */

static int emit_deepspeed(FILE *f, FILE *notes_f, const struct emit_input *in)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	struct notes n = { .n = 0 };
	if (in->pp_layout)
		emit_note(&n, in->mtp_layers ? "the pipeline layout string is Megatron-Core's and DeepSpeed has no MTP layers: \"pipeline\" below partitions the model's own layers, without them"
					     : "the pipeline layout string is Megatron-Core's: \"pipeline\" below partitions the layers by DeepSpeed's rule");

	if (l->vp > 1)
		emit_note(&n, "DeepSpeed's pipeline engine has no interleaved schedule: \"pipeline\" below runs 1F1B with one stage per rank");
	if (l->pp > 1 && (l->schedule == SCHED_GPIPE || l->schedule == SCHED_ZB_H1 ||
			  l->schedule == SCHED_DUALPIPE))
		emit_note(&n, "DeepSpeed's pipeline engine runs its own 1F1B-like TrainSchedule: gpipe, zb-h1 and dualpipe are not expressible");
	if (l->cp > 1)
		emit_note(&n, "DeepSpeed's sequence parallelism (sequence_parallel_size) is Ulysses all-to-all, not ring attention: pplan priced ring attention");
	if (o->b.moe_a2a_overlap || o->b.moe_shared_overlap)
		emit_note(&n, "DeepSpeed-MoE has no 1F1B all-to-all or shared-expert overlap: this config runs them in sequence");
	if (o->b.moe_allgather && l->ep > 1)
		emit_note(&n, "DeepSpeed-MoE dispatches tokens with all-to-alls: the allgather dispatcher pplan priced is not expressible here");
	if (train_opts_bf16_moments(o, l))
		emit_note(&n, "DeepSpeed's optimizers keep fp32 moments: the bf16 moments of the precision-aware optimizer pplan priced are not expressible here");
	if (l->recompute_layers > 0 || l->offload_layers > 0)
		emit_note(&n, "DeepSpeed's activation checkpointing wraps the layers the model code names: block recomputation of N layers (recompute_layers) and activation CPU offloading of N layers (offload_layers) are not expressible here");
	if (l->ep > 1)
		emit_note(&n, "expert parallelism is set in the model code (deepspeed.moe.layer.MoE(ep_size=...)), not in this file");
	if (o->precision == PREC_FP8)
		emit_note(&n, o->b.fp8_recipe == FP8_NVFP4
				      ? "DeepSpeed has no fp4 switch: NVFP4 GEMMs come from Transformer Engine layers in the model; this file says bf16"
				      : "DeepSpeed has no fp8 switch: fp8 GEMMs come from Transformer Engine layers in the model; this file says bf16");
	if (o->b.tp_overlap != FW_TPO_NONE && l->tp > 1)
		emit_note(&n, "TP communication overlap has no DeepSpeed switch");
	emit_note(&n, "Megatron-DeepSpeed takes tp and pp from --tensor-model-parallel-size and --pipeline-model-parallel-size; \"tensor_parallel\" and \"pipeline\" here serve DeepSpeed's AutoTP and PipelineModule");
	fprintf(f, "{\n");
	fprintf(f, "  \"train_batch_size\": %ld,\n", l->gbs);
	fprintf(f, "  \"train_micro_batch_size_per_gpu\": %d,\n", l->mbs);
	fprintf(f, "  \"gradient_accumulation_steps\": %ld,\n", microbatches(l));
	if (o->precision == PREC_FP16)
		fprintf(f, "  \"fp16\": { \"enabled\": true, \"loss_scale\": 0, \"initial_scale_power\": 16 },\n");
	else
		fprintf(f, "  \"bf16\": { \"enabled\": true },\n");
	fprintf(f, "  \"zero_optimization\": { \"stage\": %d, \"overlap_comm\": %s, \"contiguous_gradients\": true, "
		   "\"reduce_bucket_size\": 500000000, \"allgather_bucket_size\": 500000000%s },\n",
		l->zero, o->b.overlap_grad_reduce ? "true" : "false",
		l->optimizer_offload ? ", \"offload_optimizer\": { \"device\": \"cpu\", \"pin_memory\": true }" : "");
	fprintf(f, "  \"tensor_parallel\": { \"autotp_size\": %d },\n", l->tp);
	fprintf(f, "  \"pipeline\": { \"stages\": %d, \"partition\": \"uniform\" },\n", l->pp);
	if (l->cp > 1)
		fprintf(f, "  \"sequence_parallel_size\": %d,\n", l->cp);
	if (l->recompute != RECOMPUTE_NONE)
		fprintf(f, "  \"activation_checkpointing\": { \"partition_activations\": %s, \"contiguous_memory_optimization\": false, \"cpu_checkpointing\": false },\n",
			l->tp > 1 ? "true" : "false");
	fprintf(f, "  \"gradient_clipping\": 1.0,\n");
	fprintf(f, "  \"steps_per_print\": 10\n");
	fprintf(f, "}\n");
	if (notes_f) {
		char lb[256];
		layout_format(l, lb, sizeof lb);
		fprintf(notes_f, "pplan %s (git %s): DeepSpeed config for %s, %s\n", PPLAN_VERSION,
			PPLAN_GIT_HASH, in->m->name, lb);
		fprintf(notes_f, "pplan: checked against %s\n", checked[EMIT_DEEPSPEED]);
		for (int i = 0; i < n.n; i++)
			fprintf(notes_f, "pplan: note: %s\n", n.text[i]);
	}
	return n.n;
}

enum emit_format emit_format_for(const struct framework *fw)
{
	if (strcmp(fw->name, "torchtitan") == 0)
		return EMIT_TORCHTITAN;
	if (strcmp(fw->name, "deepspeed") == 0)
		return EMIT_DEEPSPEED;
	if (strcmp(fw->name, "nemo") == 0)
		return EMIT_NEMO;
	if (strcmp(fw->name, "megatron-bridge") == 0)
		return EMIT_BRIDGE;
	return EMIT_MEGATRON;
}

const char *emit_peft_unsupported(enum emit_format fmt)
{
	switch (fmt) {
	case EMIT_MEGATRON:
		return "Megatron-LM's pretrain_gpt.py trains every weight (it has no LoRA)";
	case EMIT_TORCHTITAN:
		return "torchtitan 0.3 adds LoRA as a model converter in a Python config function, which a launch line cannot set";
	case EMIT_DEEPSPEED:
		return "a DeepSpeed config has no LoRA (the adapters come from the training script)";
	case EMIT_NEMO:
	case EMIT_BRIDGE:
	case EMIT_COUNT:
		break;
	}
	return NULL;
}

int emit_config(FILE *f, FILE *notes, enum emit_format fmt,
		const struct emit_input *in)
{
	struct emit_input own;
	in = emit_with_table(in, &own);
	switch (fmt) {
	case EMIT_MEGATRON: emit_megatron(f, in); return 0;
	case EMIT_NEMO: emit_nemo(f, in); return 0;
	case EMIT_TORCHTITAN: emit_torchtitan(f, in); return 0;
	case EMIT_DEEPSPEED: return emit_deepspeed(f, notes, in);
	case EMIT_BRIDGE: emit_bridge(f, in); return 0;
	case EMIT_COUNT: break;
	}
	return 0;
}
