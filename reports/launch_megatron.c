/*
 * launch_megatron.c: Megatron-LM's arguments read back (launch_read.h):
 * the model (megatron/training/arguments.py's flags and their argparse
 * defaults; pretrain_mamba.py's hybrid pattern and Megatron-Core's Gated
 * DeltaNet variant), the layout, the switches pplan prices, and what
 * Megatron-LM does with what the arguments leave out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_read_internal.h"

struct megatron {
	struct model_spec m;
	int have_layers, have_hidden, have_heads, have_vocab, have_ffn, have_kv, gqa;
	long max_pos;
	char pos_type[24];
	double hidden_dropout, attn_dropout;
	int swiglu, squared_relu, rmsnorm, fp16, bf16, fp8, dist_opt, fsdp, zb;
	char shard[24], granularity[16], dispatcher[16], method[16];
	long layers_per_vp;     /* --num-layers-per-virtual-pipeline-stage */
	int recompute_layers;   /* --recompute-num-layers (1 by Megatron's default) */
	int cpu_offloading;     /* --cpu-offloading */
	long shared_width;      /* --moe-shared-expert-intermediate-size */
	char hybrid[MODEL_MAX_PATTERN + 2]; /* --hybrid-override-pattern ("" none) */
	int gdn;                /* --experimental-attention-variant gated_delta_net */
	int gdn_every;          /* --linear-attention-freq */
	long window;            /* --window-size's keys before the query + 1 (0: none) */
	int precision_aware;    /* --use-precision-aware-optimizer */
	char exp_avg[16], exp_avg_sq[16]; /* --exp-avg-dtype, --exp-avg-sq-dtype ("" fp32) */
	char fp8_recipe[16];              /* --fp8-recipe ("": Megatron's delayed) */
	int fp4;                          /* --fp4-format (NVFP4, its one recipe) */
	int first_last_bf16;              /* --first-last-layers-bf16 */
	long bf16_start, bf16_end;        /* --num-layers-at-start/end-in-bf16 (-1: Megatron's 1) */
	int window_every;       /* --window-attn-skip-freq */
	const char *pp_layout;  /* --pipeline-model-parallel-layout (the words' own) */
	long mtp;               /* --mtp-num-layers (0: none) */
};

/* --pipeline-model-parallel-layout as pplan's layout: vp from its
 * stages, uneven first and last stages from its layer counts
 * (layout_pp_layout); what pplan prices otherwise is said. */
static enum pplan_status megatron_pp_layout(struct reader *r, const struct megatron *g,
					    const struct model_spec *given)
{
	struct launch_job *o = r->out;
	struct pp_layout pl;
	int vp_said = (o->set & LK_VP) != 0, vp = o->l.vp;
	long layers = g->have_layers ? g->m.layers : given ? given->layers : 0;
	enum pplan_status st;

	if (layers <= 0)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --pipeline-model-parallel-layout needs the model's --num-layers (or --model)",
				r->where);
	if ((st = lr_pp_layout(r, "--pipeline-model-parallel-layout", g->pp_layout, (int)layers, 1,
			       &pl)) != PPLAN_OK)
		return st;
	if (vp_said && vp != pl.vp)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --num-virtual-stages-per-pipeline-rank %d, and the layout has %d stages a rank",
				r->where, vp, pl.vp);
	if (g->mtp > 0 && pl.mtp != g->mtp)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --mtp-num-layers %ld, and the layout places %d multi-token-prediction layer%s (m): Megatron-Core needs them equal",
				r->where, g->mtp, pl.mtp, pl.mtp == 1 ? "" : "s");
	return PPLAN_OK;
}

/* "([0]*3+[1]*58)": dense layers first; "2": every 2nd layer. */
static enum pplan_status moe_layer_freq(struct reader *r, const struct flag *f,
					struct model_spec *m)
{
	long dense, moe, every;
	char tail;
	if (lr_parse_long(f->value, 1, MODEL_MAX_COUNT, &every) == 0) {
		m->moe_every = (int)every;
		return PPLAN_OK;
	}
	if (f->value && sscanf(f->value, "([0]*%ld+[1]*%ld)%c", &dense, &moe, &tail) == 2 &&
	    dense >= 0 && moe > 0 && dense <= MODEL_MAX_COUNT && moe <= MODEL_MAX_COUNT) {
		m->dense_layers = (int)dense;
		return PPLAN_OK;
	}
	return lr_bad_value(r, f->name, f->value, f->var,
			 "a whole number or a pattern of dense layers first, \"([0]*K+[1]*N)\"");
}

/* A flag's words up to the next flag, joined by '+' (--recompute-modules). */
static void list_value(const struct words *w, size_t i, char *buf, size_t len, size_t *next)
{
	buf[0] = '\0';
	for (; i < w->n && strncmp(lr_word(w, i), "--", 2) != 0; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "+" : "", lr_word(w, i));
	*next = i;
}

static enum pplan_status megatron_model_flag(struct reader *r, struct megatron *g,
					     const struct flag *f, int *used)
{
	struct model_spec *m = &g->m;
	const char *n = f->name;
	*used = 1;
#define L(flag, dst, lo) if (!strcmp(n, flag)) return lr_get_long(r, f, lo, &(dst))
#define I(flag, dst, lo) if (!strcmp(n, flag)) return lr_get_int(r, f, lo, &(dst))
#define D(flag, dst) if (!strcmp(n, flag)) return lr_get_double(r, f, &(dst))
#define B(flag, dst) if (!strcmp(n, flag)) { (dst) = 1; return PPLAN_OK; }
	if (!strcmp(n, "--num-layers")) { g->have_layers = 1; return lr_get_int(r, f, 1, &m->layers); }
	if (!strcmp(n, "--hidden-size")) { g->have_hidden = 1; return lr_get_long(r, f, 1, &m->hidden); }
	if (!strcmp(n, "--num-attention-heads")) { g->have_heads = 1; return lr_get_int(r, f, 1, &m->heads); }
	if (!strcmp(n, "--ffn-hidden-size")) { g->have_ffn = 1; return lr_get_long(r, f, 1, &m->ffn); }
	if (!strcmp(n, "--num-query-groups")) { g->have_kv = 1; return lr_get_int(r, f, 1, &m->kv_heads); }
	if (!strcmp(n, "--vocab-size")) { g->have_vocab = 1; return lr_get_long(r, f, 1, &m->vocab); }
	L("--kv-channels", m->head_dim, 1);
	L("--max-position-embeddings", g->max_pos, 1);
	D("--rotary-base", m->rope_theta);
	D("--rotary-percent", m->rope_percent);
	D("--norm-epsilon", m->norm_eps);
	D("--hidden-dropout", g->hidden_dropout);
	D("--attention-dropout", g->attn_dropout);
	L("--kv-lora-rank", m->kv_lora_rank, 1);
	L("--q-lora-rank", m->q_lora_rank, 1);
	L("--qk-head-dim", m->qk_nope_dim, 1);
	L("--qk-pos-emb-head-dim", m->qk_rope_dim, 1);
	L("--v-head-dim", m->v_head_dim, 1);
	I("--num-experts", m->num_experts, 1);
	I("--moe-router-topk", m->top_k, 1);
	I("--moe-router-num-groups", m->route_groups, 1);
	I("--moe-router-group-topk", m->route_topk_groups, 1);
	B("--moe-router-enable-expert-bias", m->router_expert_bias);
	B("--moe-router-pre-softmax", m->router_pre_softmax);
	D("--moe-router-topk-scaling-factor", m->router_scale);
	if (!strcmp(n, "--moe-router-score-function")) {
		if (!f->value || (strcmp(f->value, "softmax") && strcmp(f->value, "sigmoid")))
			return lr_bad_value(r, n, f->value, f->var, "softmax or sigmoid");
		m->router_sigmoid = !strcmp(f->value, "sigmoid");
		return PPLAN_OK;
	}
	L("--moe-ffn-hidden-size", m->moe_ffn, 1);
	L("--moe-shared-expert-intermediate-size", g->shared_width, 1);
	B("--group-query-attention", g->gqa);
	B("--swiglu", g->swiglu);
	B("--squared-relu", g->squared_relu);
	B("--add-qkv-bias", m->qkv_bias);
	B("--qk-layernorm", m->qk_norm);
	B("--attention-output-gate", m->attn_out_gate);
	B("--moe-shared-expert-gate", m->shared_gate);
	L("--mamba-num-heads", m->mamba_heads, 1);
	L("--mamba-head-dim", m->mamba_head_dim, 1);
	L("--mamba-num-groups", m->mamba_groups, 1);
	L("--mamba-state-dim", m->mamba_state, 1);
	I("--linear-attention-freq", g->gdn_every, 1);
	L("--linear-num-key-heads", m->gdn_k_heads, 1);
	L("--linear-num-value-heads", m->gdn_v_heads, 1);
	L("--linear-key-head-dim", m->gdn_k_dim, 1);
	L("--linear-value-head-dim", m->gdn_v_dim, 1);
	L("--linear-conv-kernel-dim", m->gdn_conv, 1);
	if (!strcmp(n, "--hybrid-override-pattern")) {
		if (!f->value || strlen(f->value) > MODEL_MAX_PATTERN)
			return lr_bad_value(r, n, f->value, f->var,
					 "one of M, *, - and E a layer, at most 512 layers");
		snprintf(g->hybrid, sizeof g->hybrid, "%s", f->value);
		return PPLAN_OK;
	}
	I("--window-attn-skip-freq", g->window_every, 1);
	if (!strcmp(n, "--window-size")) {
		long left, right;
		char tail;
		const char *v = f->value ? f->value + (f->value[0] == '(') : NULL;
		if (!v || sscanf(v, "%ld,%ld%c", &left, &right, &tail) < 2 || left < -1 ||
		    left >= MODEL_MAX_DIM || right < -1)
			return lr_bad_value(r, n, f->value, f->var,
					    "the window's keys before and after the query, \"W,0\"");
		g->window = left >= 0 ? left + 1 : 0; /* -1: no window */
		return PPLAN_OK;
	}
	if (!strcmp(n, "--experimental-attention-variant")) {
		if (!lr_one_of(f->value, "gated_delta_net"))
			return lr_bad_value(r, n, f->value, f->var, "gated_delta_net");
		g->gdn = 1;
		return PPLAN_OK;
	}
	if (!strcmp(n, "--moe-layer-freq"))
		return moe_layer_freq(r, f, m);
	if (!strcmp(n, "--rope-scaling-factor") || !strcmp(n, "--rotary-scaling-factor"))
		return lr_get_double(r, f, &m->rope_factor);
	if (!strcmp(n, "--use-rope-scaling")) {
		snprintf(m->rope_scaling, sizeof m->rope_scaling, "llama3");
		return PPLAN_OK;
	}
	if (!strcmp(n, "--rope-type")) {
		if (!lr_one_of(f->value, "rope|yarn"))
			return lr_bad_value(r, n, f->value, f->var, "rope or yarn");
		if (!strcmp(f->value, "yarn"))
			snprintf(m->rope_scaling, sizeof m->rope_scaling, "yarn");
		return PPLAN_OK;
	}
	if (!strcmp(n, "--position-embedding-type")) {
		if (!lr_one_of(f->value, "rope|learned_absolute|yarn|none"))
			return lr_bad_value(r, n, f->value, f->var, "rope, yarn, learned_absolute or none");
		snprintf(g->pos_type, sizeof g->pos_type, "%s", f->value);
		return PPLAN_OK;
	}
	if (!strcmp(n, "--normalization")) {
		if (!lr_one_of(f->value, "RMSNorm|LayerNorm"))
			return lr_bad_value(r, n, f->value, f->var, "LayerNorm or RMSNorm");
		g->rmsnorm = !strcmp(f->value, "RMSNorm");
		return PPLAN_OK;
	}
	if (!strcmp(n, "--untie-embeddings-and-output-weights")) {
		m->tied_embeddings = 0;
		return PPLAN_OK;
	}
	if (!strcmp(n, "--disable-bias-linear")) {
		m->linear_bias = 0;
		return PPLAN_OK;
	}
	if (!strcmp(n, "--moe-token-dispatcher-type")) {
		if (!lr_one_of(f->value, "alltoall|flex|allgather|alltoall_seq"))
			return lr_bad_value(r, n, f->value, f->var, "alltoall, allgather or flex");
		snprintf(g->dispatcher, sizeof g->dispatcher, "%s", f->value);
		return PPLAN_OK;
	}
	*used = 0;
	return PPLAN_OK;
#undef L
#undef I
#undef D
#undef B
}

static enum pplan_status megatron_layout_flag(struct reader *r, struct megatron *g,
					      const struct words *w, size_t i,
					      const struct flag *f, size_t *next)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	const char *n = f->name;
	char list[256], bad[64];
	struct { const char *flag; int *dst; unsigned key; long lo; } ints[] = {
		{ "--tensor-model-parallel-size", &l->tp, LK_TP, 1 },
		{ "--pipeline-model-parallel-size", &l->pp, LK_PP, 1 },
		{ "--context-parallel-size", &l->cp, LK_CP, 1 },
		{ "--expert-model-parallel-size", &l->ep, LK_EP, 1 },
		{ "--expert-tensor-parallel-size", &l->etp, LK_ETP, 1 },
		{ "--num-virtual-stages-per-pipeline-rank", &l->vp, LK_VP, 1 },
		{ "--decoder-first-pipeline-num-layers", &l->pp_first, LK_PP_FIRST, 1 },
		{ "--decoder-last-pipeline-num-layers", &l->pp_last, LK_PP_LAST, 1 },
		{ "--micro-batch-size", &l->mbs, LK_MBS, 1 },
	};
	for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
		if (!strcmp(n, ints[k].flag)) {
			o->set |= ints[k].key;
			return lr_get_int(r, f, ints[k].lo, ints[k].dst);
		}
	if (!strcmp(n, "--global-batch-size")) {
		o->set |= LK_GBS;
		return lr_get_long(r, f, 1, &l->gbs);
	}
	if (!strcmp(n, "--seq-length"))
		return lr_get_long(r, f, 1, &o->seq);
	if (!strcmp(n, "--num-layers-per-virtual-pipeline-stage"))
		return lr_get_long(r, f, 1, &g->layers_per_vp);
	if (!strcmp(n, "--mtp-num-layers"))
		return lr_get_long(r, f, 0, &g->mtp);
	if (!strcmp(n, "--pipeline-model-parallel-layout")) {
		if (!f->value || f->var)
			return lr_bad_value(r, n, f->value, f->var, "a layout string such as 'Et|(tt|)*30mL'");
		g->pp_layout = f->value;
		return PPLAN_OK;
	}
	if (!strcmp(n, "--sequence-parallel"))
		return l->sp = 1, PPLAN_OK;
	if (!strcmp(n, "--account-for-embedding-in-pipeline-split"))
		return l->pp_embed = 1, o->set |= LK_PP_EMBED, PPLAN_OK;
	if (!strcmp(n, "--account-for-loss-in-pipeline-split"))
		return l->pp_loss = 1, o->set |= LK_PP_LOSS, PPLAN_OK;
	if (!strcmp(n, "--recompute-granularity")) {
		if (!lr_one_of(f->value, "selective|full"))
			return lr_bad_value(r, n, f->value, f->var, "selective or full");
		snprintf(g->granularity, sizeof g->granularity, "%s", f->value);
		return PPLAN_OK;
	}
	if (!strcmp(n, "--recompute-method")) {
		if (!lr_one_of(f->value, "uniform|block"))
			return lr_bad_value(r, n, f->value, f->var, "uniform or block");
		snprintf(g->method, sizeof g->method, "%s", f->value);
		return PPLAN_OK;
	}
	if (!strcmp(n, "--recompute-num-layers"))
		return lr_get_int(r, f, 1, &g->recompute_layers);
	if (!strcmp(n, "--cpu-offloading"))
		return g->cpu_offloading = 1, PPLAN_OK;
	if (!strcmp(n, "--cpu-offloading-num-layers")) {
		o->set |= LK_OFFLOAD_LAYERS;
		return lr_get_int(r, f, 1, &l->offload_layers);
	}
	if (!strcmp(n, "--recompute-modules") || !strcmp(n, "--offload-modules")) {
		int rec = !strcmp(n, "--recompute-modules");
		list_value(w, i + 1, list, sizeof list, next);
		if ((rec ? recompute_modules_parse(list, &l->recompute_modules, bad, sizeof bad)
			 : offload_modules_parse(list, &l->offload_modules, bad, sizeof bad)) != 0)
			return perr_set(r->e, PPLAN_EINPUT, "%s: %s does not know the module '%s'",
					r->where, n, bad);
		o->set |= rec ? LK_RECOMPUTE_MODULES : LK_OFFLOAD;
		return PPLAN_OK;
	}
	if (!strcmp(n, "--data-parallel-sharding-strategy")) {
		if (!f->value)
			return lr_bad_value(r, n, f->value, f->var, "a sharding strategy");
		snprintf(g->shard, sizeof g->shard, "%s", f->value);
		return PPLAN_OK;
	}
	if (!strcmp(n, "--use-distributed-optimizer"))
		return g->dist_opt = 1, PPLAN_OK;
	if (!strcmp(n, "--optimizer-cpu-offload"))
		return l->optimizer_offload = 1, o->set |= LK_OPTIMIZER_OFFLOAD, PPLAN_OK;
	if (!strcmp(n, "--optimizer-offload-fraction")) {
		char *end;
		double v = f->value ? strtod(f->value, &end) : 0;
		if (!f->value || *end || v != 1.0)
			return lr_bad_value(r, n, f->value, f->var,
					 "1.0 (pplan prices the whole optimizer offloaded)");
		return PPLAN_OK;
	}
	if (!strcmp(n, "--use-megatron-fsdp") || !strcmp(n, "--use-custom-fsdp"))
		return g->fsdp = 1, PPLAN_OK;
	if (!strcmp(n, "--overlap-grad-reduce"))
		return o->switches.overlap_grad_reduce = 1, PPLAN_OK;
	if (!strcmp(n, "--overlap-param-gather"))
		return o->switches.overlap_param_gather = 1, PPLAN_OK;
	if (!strcmp(n, "--tp-comm-overlap"))
		return o->switches.tp_overlap = FW_TPO_PIPELINED, PPLAN_OK;
	if (!strcmp(n, "--overlap-moe-expert-parallel-comm"))
		return o->switches.moe_a2a_overlap = 1, PPLAN_OK;
	if (!strcmp(n, "--moe-shared-expert-overlap"))
		return o->switches.moe_shared_overlap = 1, PPLAN_OK;
	if (!strcmp(n, "--use-precision-aware-optimizer"))
		return g->precision_aware = 1, PPLAN_OK;
	if (!strcmp(n, "--exp-avg-dtype") || !strcmp(n, "--exp-avg-sq-dtype")) {
		if (!lr_one_of(f->value, "fp32|fp16|bf16|fp8"))
			return lr_bad_value(r, n, f->value, f->var, "fp32, fp16, bf16 or fp8");
		snprintf(!strcmp(n, "--exp-avg-dtype") ? g->exp_avg : g->exp_avg_sq,
			 sizeof g->exp_avg, "%s", f->value);
		return PPLAN_OK;
	}
	if (!strcmp(n, "--grad-reduce-in-bf16"))
		return o->switches.grad_bytes = 2, PPLAN_OK;
	if (!strcmp(n, "--use-tp-pp-dp-mapping"))
		return snprintf(o->order, sizeof o->order, "tp-cp-pp-dp"), PPLAN_OK;
	if (!strcmp(n, "--enable-zero-bubble"))
		return g->zb = 1, PPLAN_OK;
	if (!strcmp(n, "--attention-backend")) {
		if (f->value && !strcmp(f->value, "unfused"))
			o->switches.flash = 0;
		return PPLAN_OK;
	}
	if (!strcmp(n, "--bf16"))
		return g->bf16 = 1, PPLAN_OK;
	if (!strcmp(n, "--fp16"))
		return g->fp16 = 1, PPLAN_OK;
	if (!strcmp(n, "--fp8-format"))
		return g->fp8 = 1, PPLAN_OK;
	if (!strcmp(n, "--fp4-format")) {
		if (!lr_one_of(f->value, "e2m1"))
			return lr_bad_value(r, n, f->value, f->var, "e2m1");
		return g->fp4 = 1, PPLAN_OK;
	}
	if (!strcmp(n, "--first-last-layers-bf16"))
		return g->first_last_bf16 = 1, PPLAN_OK;
	if (!strcmp(n, "--num-layers-at-start-in-bf16") || !strcmp(n, "--num-layers-at-end-in-bf16")) {
		return lr_get_long(r, f, 0, strstr(n, "start") ? &g->bf16_start : &g->bf16_end);
	}
	if (!strcmp(n, "--fp4-recipe")) {
		if (!lr_one_of(f->value, "nvfp4"))
			return lr_bad_value(r, n, f->value, f->var,
					    "nvfp4 (a custom recipe's quantizers are its own)");
		return PPLAN_OK;
	}
	if (!strcmp(n, "--fp8-recipe")) {
		if (!lr_one_of(f->value, "delayed|tensorwise|blockwise|mxfp8"))
			return lr_bad_value(r, n, f->value, f->var,
					    "delayed, tensorwise, blockwise or mxfp8");
		snprintf(g->fp8_recipe, sizeof g->fp8_recipe, "%s", f->value);
		return PPLAN_OK;
	}
	return PPLAN_OK;
}

/* What Megatron-LM does with what the arguments leave out. */
static void megatron_model_defaults(struct megatron *g, long seq)
{
	struct model_spec *m = &g->m;
	if (!g->have_kv || !g->gqa)
		m->kv_heads = m->heads;
	if (!g->have_ffn)
		m->ffn = g->swiglu ? (4 * m->hidden * 2 / 3) / 64 * 64 : 4 * m->hidden;
	if (!m->head_dim && m->heads > 0)
		m->head_dim = m->hidden / m->heads;
	m->mlp = g->swiglu ? MLP_SWIGLU : g->squared_relu ? MLP_SQUARED_RELU : MLP_GELU;
	m->norm = g->rmsnorm ? NORM_RMSNORM : NORM_LAYERNORM;
	m->seq = seq;
	m->pos_embedding = !strcmp(g->pos_type, "learned_absolute")
				   ? (g->max_pos > 0 ? g->max_pos : seq) : 0;
	if (!strcmp(g->pos_type, "yarn"))
		snprintf(m->rope_scaling, sizeof m->rope_scaling, "yarn");
	m->no_dropout = g->hidden_dropout == 0 && g->attn_dropout == 0;
	if (m->num_experts > 0 && !m->top_k)
		m->top_k = 2;
	/* one group, or a token's groups all of them: no limit */
	if (m->route_groups <= 1 || m->route_topk_groups >= m->route_groups)
		m->route_groups = m->route_topk_groups = 0;
	if (m->num_experts > 0 && g->shared_width > 0) {
		m->shared_experts = 1;
		m->shared_ffn = g->shared_width;
	}
	if (g->window > 0) {
		m->sliding_window = g->window;
		m->window_layers = g->window_every > 1 ? m->layers - m->layers / g->window_every
						       : m->layers;
	}
	if (!model_is_mla(m))
		m->q_lora_rank = m->qk_nope_dim = m->qk_rope_dim = m->v_head_dim = 0;
}

/* A hybrid stack (docs: sim/MODEL.md 4.6): pretrain_mamba.py's
 * --hybrid-override-pattern with its Mamba-2 widths (Megatron-LM's
 * defaults: head width 64, state 128, 8 groups, heads 2 x hidden / 64),
 * or Gated DeltaNet every layer but each --linear-attention-freq-th. */
static enum pplan_status megatron_hybrid(struct reader *r, struct megatron *g)
{
	struct model_spec *m = &g->m;
	if (g->hybrid[0] && g->gdn)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --hybrid-override-pattern and --experimental-attention-variant gated_delta_net both place the layers; pplan prices one of them",
				r->where);
	if (g->hybrid[0]) {
		enum pplan_status st = model_set_hybrid_pattern(m, g->hybrid, r->where,
								"--hybrid-override-pattern", r->e);
		if (st != PPLAN_OK)
			return st;
		if (!strchr(m->mixers, 'M'))
			return PPLAN_OK;
		if (!m->mamba_head_dim)
			m->mamba_head_dim = 64;
		if (!m->mamba_heads)
			m->mamba_heads = 2 * m->hidden / m->mamba_head_dim;
		if (!m->mamba_groups)
			m->mamba_groups = 8;
		if (!m->mamba_state)
			m->mamba_state = 128;
		m->mamba_conv = 4;
		m->mamba_chunk = 128; /* MambaMixer's, not an argument */
		return PPLAN_OK;
	}
	if (!g->gdn)
		return PPLAN_OK;
	if (!g->gdn_every)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --experimental-attention-variant gated_delta_net without --linear-attention-freq N: pplan needs to know which layers keep attention",
				r->where);
	if (!m->gdn_k_heads || !m->gdn_v_heads || !m->gdn_k_dim || !m->gdn_v_dim)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: Gated DeltaNet needs --linear-num-key-heads, --linear-num-value-heads, --linear-key-head-dim and --linear-value-head-dim",
				r->where);
	if (!m->gdn_conv)
		m->gdn_conv = 4;
	return model_set_gdn_every(m, g->gdn_every, r->where, r->e);
}

static enum pplan_status megatron_finish(struct reader *r, struct megatron *g,
					 const struct model_spec *given)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	enum pplan_status st;

	if (!o->seq)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: no --seq-length: Megatron-LM needs one, and pplan prices the sequence it names",
				r->where);
	if (!g->bf16 && !g->fp16)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: neither --bf16 nor --fp16: Megatron-LM then trains in fp32, which pplan does not price on GPUs",
				r->where);
	/* fp8 by its recipe, Megatron's delayed scaling where none is named;
	 * fp4 is NVFP4 (Megatron-Core refuses fp4 beside fp8) */
	if (g->fp4 && g->fp8)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: both --fp4-format and --fp8-format: Megatron-Core trains in one of them",
				r->where);
	if (g->fp4)
		snprintf(o->precision, sizeof o->precision, "nvfp4");
	else if (g->fp8)
		snprintf(o->precision, sizeof o->precision, "%s%s",
			 strcmp(g->fp8_recipe, "mxfp8") ? "fp8-" : "",
			 g->fp8_recipe[0] ? g->fp8_recipe : "delayed");
	else
		snprintf(o->precision, sizeof o->precision, "%s", g->fp16 ? "fp16" : "bf16");
	/* --first-last-layers-bf16 (Megatron-Core ignores it outside fp8 and
	 * fp4): its counts default to 1 and 1 */
	if (g->first_last_bf16 && (g->fp4 || g->fp8)) {
		o->bf16_given = 1;
		o->bf16_first = g->bf16_start >= 0 ? (int)g->bf16_start : 1;
		o->bf16_last = g->bf16_end >= 0 ? (int)g->bf16_end : 1;
	}
	/* the layout */
	if (l->sp && l->tp == 1)
		l->sp = 0; /* Megatron-LM turns it off with a warning */
	o->set |= LK_SP | LK_RECOMPUTE | LK_SCHEDULE;
	if (g->pp_layout && (st = megatron_pp_layout(r, g, given)) != PPLAN_OK)
		return st;
	if (g->mtp > 0 && !g->pp_layout)
		lr_say(r, "--mtp-num-layers %ld: %s not priced, as no --pipeline-model-parallel-layout places %s (pplan prices MTP layers where a layout string counts them)",
		       g->mtp, g->mtp == 1 ? "its multi-token-prediction layer is" : "the multi-token-prediction layers are",
		       g->mtp == 1 ? "it" : "them");
	if (g->layers_per_vp > 0 && !(o->set & LK_VP)) {
		long per_stage = g->have_layers ? g->m.layers / l->pp : 0;
		if (given && !g->have_layers)
			per_stage = given->layers / l->pp;
		if (per_stage <= 0 || per_stage % g->layers_per_vp != 0)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: --num-layers-per-virtual-pipeline-stage %ld does not divide the %ld layers of a pipeline stage",
					r->where, g->layers_per_vp, per_stage);
		l->vp = (int)(per_stage / g->layers_per_vp);
		o->set |= LK_VP;
	}
	l->schedule = l->pp > 1 && l->vp > 1 ? SCHED_INTERLEAVED : g->zb ? SCHED_ZB_H1 : SCHED_1F1B;
	if (!strcmp(g->granularity, "selective"))
		l->recompute = RECOMPUTE_SELECTIVE;
	else if (!strcmp(g->granularity, "full"))
		l->recompute = RECOMPUTE_FULL;
	/* The block method recomputes N layers of each chunk; the uniform
	 * one all of them, N to a checkpoint (priced as one to a checkpoint:
	 * the same time, a little more memory for N > 1). */
	if (l->recompute == RECOMPUTE_FULL && !strcmp(g->method, "block")) {
		l->recompute_layers = g->recompute_layers > 0 ? g->recompute_layers : 1;
		o->set |= LK_RECOMPUTE_LAYERS;
	} else if (l->recompute == RECOMPUTE_FULL && g->recompute_layers > 1) {
		lr_say(r, "--recompute-method uniform --recompute-num-layers %d checkpoints %d layers at a time; pplan prices one layer to a checkpoint (the same recomputation, the input of every layer kept)",
		    g->recompute_layers, g->recompute_layers);
	}
	/* Megatron-Core offloads only with --cpu-offloading. */
	if (!g->cpu_offloading) {
		l->offload_layers = 0;
		o->set &= ~LK_OFFLOAD_LAYERS;
	}
	else if (o->set & LK_RECOMPUTE_MODULES)
		o->set &= ~LK_RECOMPUTE_MODULES; /* Megatron ignores them without the granularity */
	lr_precision_aware(r, g->precision_aware, g->exp_avg[0] ? g->exp_avg : NULL,
			   g->exp_avg_sq[0] ? g->exp_avg_sq : NULL);
	if (g->fsdp)
		o->zero = !strcmp(g->shard, "optim_grads") ? 2 : !strcmp(g->shard, "optim") ? 1
			  : !strcmp(g->shard, "no_shard") ? 0 : 3;
	else
		o->zero = g->dist_opt;
	/* the model */
	if (!g->have_layers && !g->have_hidden && !g->have_heads) {
		if (!given)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: no --num-layers, --hidden-size or --num-attention-heads: the arguments define no model; give it with --model NAME|FILE",
					r->where);
		o->model = *given;
		snprintf(o->model_note, sizeof o->model_note, "--model (the arguments define none)");
		return PPLAN_OK;
	}
	if (!g->have_layers || !g->have_hidden || !g->have_heads)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: the model needs --num-layers, --hidden-size and --num-attention-heads; the arguments lack --%s",
				r->where, !g->have_layers ? "num-layers" : !g->have_hidden ? "hidden-size"
									: "num-attention-heads");
	megatron_model_defaults(g, o->seq);
	if ((st = megatron_hybrid(r, g)) != PPLAN_OK)
		return st;
	if (!g->have_vocab && !given)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: no --vocab-size: the tokenizer sets the vocabulary, which pplan cannot read; add --vocab-size N to the arguments, or give --model",
				r->where);
	if (given) {
		if ((st = lr_same_shape(r, &g->m, given)) != PPLAN_OK)
			return st;
		o->model = *given;
		snprintf(o->model_note, sizeof o->model_note, "--model (its shape the arguments')");
		return PPLAN_OK;
	}
	snprintf(g->m.name, sizeof g->m.name, "megatron-args");
	if ((st = model_check(&g->m, r->where, r->e)) != PPLAN_OK)
		return st;
	o->model = g->m;
	snprintf(o->model_note, sizeof o->model_note, "%s, Megatron-LM's arguments", r->where);
	if (g->m.num_experts > 1) {
		/* Megatron-LM's default is the allgather dispatcher */
		o->switches.moe_dispatcher = g->dispatcher[0] ? fw_moe_dispatcher_parse(g->dispatcher) : 2;
		if (!g->dispatcher[0])
			lr_say(r, "no --moe-token-dispatcher-type: Megatron-LM's default, allgather, priced");
		else if (o->switches.moe_dispatcher < 0) { /* alltoall_seq */
			o->switches.moe_dispatcher = 0;
			lr_say(r, "the MoE token dispatcher %s is priced as the all-to-all", g->dispatcher);
		}
	}
	return PPLAN_OK;
}

enum pplan_status lr_read_megatron(struct reader *r, const struct words *w,
				       const struct model_spec *given)
{
	struct megatron g;
	enum pplan_status st;
	char name[64];

	memset(&g, 0, sizeof g);
	g.m.tied_embeddings = 1;
	g.m.linear_bias = 1;
	g.hidden_dropout = g.attn_dropout = 0.1;
	g.bf16_start = g.bf16_end = -1;
	snprintf(g.pos_type, sizeof g.pos_type, "learned_absolute");
	r->out->switches.overlap_grad_reduce = 0;
	r->out->switches.overlap_param_gather = 0;
	r->out->switches.tp_overlap = FW_TPO_NONE;
	r->out->switches.grad_bytes = 4;
	for (size_t i = 0; i < w->n;) {
		struct flag f;
		size_t next;
		int used;
		if (strncmp(lr_word(w, i), "--", 2) != 0) {
			i++;
			continue;
		}
		f = lr_flag_at(w, i, name, sizeof name);
		next = f.next;
		for (char *c = name + 2; *c; c++) /* argparse's dashes */
			if (*c == '_')
				*c = '-';
		if ((st = lr_launcher_flag(r, &f, &used)) != PPLAN_OK)
			return st;
		if (!used && (st = megatron_model_flag(r, &g, &f, &used)) != PPLAN_OK)
			return st;
		if (!used && (st = megatron_layout_flag(r, &g, w, i, &f, &next)) != PPLAN_OK)
			return st;
		i = next; /* a value word that follows is not a flag and is passed over */
	}
	return megatron_finish(r, &g, given);
}
