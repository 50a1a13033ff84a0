/*
 * emit_recipe.c: the recipe overrides of emit.h, NeMo 2.0's
 * (recipe = llm.NAME.pretrain_recipe(...), recipe.KEY = VALUE) and
 * Megatron-Bridge's (cfg = NAME_pretrain_config(), cfg.SECTION.KEY =
 * VALUE): one list of overrides in two dialects, after each framework's
 * own recipe for the model, found by name, architecture or shape.  Names
 * as NeMo 25.11's and Megatron-Bridge 0.3.1's source define them
 * (tests/conformance checks each against that source).
 */
#include "emit.h"
#include "emit_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- NeMo 2.0 ----------------------------------------------------------------- */

/* A framework's recipe: its family (the package, for Megatron-Bridge),
 * its name, the model it trains (a zoo model, found by name or
 * architecture, or, for a model the zoo lacks, read from a config.json,
 * its shape), and whether the framework has a LoRA fine-tuning recipe for
 * it beside the pretraining one (NeMo's NAME.finetune_recipe,
 * Megatron-Bridge's NAME_peft_config). */
struct recipe {
	const char *family, *name, *zoo;
	int layers;
	long hidden;
	int experts;
	long vocab;
	int lora;
};

#define ZOO(family, name, zoo, lora) { family, name, zoo, 0, 0, 0, 0, lora }

/* NeMo 2's (nemo_toolkit 2.6.2, NeMo 25.11: a recipes/NAME.py with
 * pretrain_recipe and, but for GPT-3 175B, finetune_recipe;
 * tests/conformance checks each emitted name against that source).
 * Llama 2 13B and 70B have none, GPT-OSS only a finetune_recipe,
 * Qwen3-Next and Nemotron 3 none. */
static const struct recipe nemo_recipes[] = {
	ZOO(NULL, "llama2_7b", "llama2-7b", 1), ZOO(NULL, "llama3_8b", "llama3-8b", 1),
	ZOO(NULL, "llama3_70b", "llama3-70b", 1), ZOO(NULL, "llama31_8b", "llama3.1-8b", 1),
	ZOO(NULL, "llama31_70b", "llama3.1-70b", 1), ZOO(NULL, "llama31_405b", "llama3.1-405b", 1),
	ZOO(NULL, "mixtral_8x7b", "mixtral-8x7b", 1), ZOO(NULL, "mixtral_8x22b", "mixtral-8x22b", 1),
	ZOO(NULL, "nemotron4_15b", "nemotron4-15b", 1), ZOO(NULL, "nemotron4_340b", "nemotron4-340b", 1),
	ZOO(NULL, "gpt3_175b", "gpt3-175b", 0), ZOO(NULL, "nemotron3_8b", "nemotron-8b", 1),
	ZOO(NULL, "nemotron3_22b", "nemotron-22b", 1), ZOO(NULL, "deepseek_v2", "deepseek-v2", 1),
	ZOO(NULL, "deepseek_v3", "deepseek-v3", 1), ZOO(NULL, "qwen3_30b_a3b", "qwen3-30b-a3b", 1),
	ZOO(NULL, "qwen3_235b_a22b", "qwen3-235b-a22b", 1),
	ZOO(NULL, "mistral_7b", "mistral-7b", 1), ZOO(NULL, "qwen25_72b", "qwen2.5-72b", 1),
	{ NULL, "gemma2_9b", NULL, 42, 3584, 0, 256000, 1 },
	{ NULL, "deepseek_v2_lite", NULL, 27, 2048, 64, 102400, 1 },
};

/* Megatron-Bridge 0.3.1's (megatron.bridge.recipes.FAMILY, each
 * NAME_pretrain_config() and, where lora is 1, NAME_peft_config();
 * tests/conformance checks each against that source).  No Mixtral, no
 * GPT-3 below 175B. */
static const struct recipe bridge_recipes[] = {
	ZOO("llama", "llama2_7b", "llama2-7b", 0), ZOO("llama", "llama3_8b", "llama3-8b", 1),
	ZOO("llama", "llama3_70b", "llama3-70b", 1), ZOO("llama", "llama31_8b", "llama3.1-8b", 1),
	ZOO("llama", "llama31_70b", "llama3.1-70b", 1), ZOO("llama", "llama31_405b", "llama3.1-405b", 1),
	ZOO("gpt", "gpt3_175b", "gpt3-175b", 0), ZOO("qwen", "qwen3_30b_a3b", "qwen3-30b-a3b", 1),
	ZOO("qwen", "qwen3_235b_a22b", "qwen3-235b-a22b", 1),
	ZOO("deepseek", "deepseek_v2", "deepseek-v2", 0), ZOO("deepseek", "deepseek_v3", "deepseek-v3", 0),
	ZOO("gpt_oss", "gpt_oss_20b", "gpt-oss-20b", 1), ZOO("gpt_oss", "gpt_oss_120b", "gpt-oss-120b", 1),
	ZOO("qwen", "qwen25_72b", "qwen2.5-72b", 1),
	{ "qwen", "qwen3_next_80b_a3b", NULL, 48, 2048, 512, 151936, 1 },
	{ "qwen", "qwen2_7b", NULL, 28, 3584, 0, 152064, 1 },
	{ "nemotronh", "nemotron_3_nano", NULL, 52, 2688, 128, 131072, 1 },
	{ "gemma", "gemma2_9b", NULL, 42, 3584, 0, 256000, 1 },
	{ "deepseek", "deepseek_v2_lite", NULL, 27, 2048, 64, 102400, 0 },
};
#undef ZOO

/* The same architecture: shapes, vocabulary and context extension (a
 * zoo name, an HF config.json or a pplan.model/1 file of it). */
static int same_arch(const struct model_spec *a, const struct model_spec *b)
{
	return a->layers == b->layers && a->hidden == b->hidden && a->ffn == b->ffn &&
	       a->heads == b->heads && a->kv_heads == b->kv_heads && a->vocab == b->vocab &&
	       a->num_experts == b->num_experts && model_expert_ffn(a) == model_expert_ffn(b) &&
	       strcmp(a->rope_scaling, b->rope_scaling) == 0;
}

/* The recipe of table t for m: by its zoo name, else by its
 * architecture or shape. */
static const struct recipe *find_recipe(const struct recipe *t, size_t n,
					const struct model_spec *m)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].zoo && strcmp(t[i].zoo, m->name) == 0)
			return &t[i];
	for (size_t i = 0; i < n; i++) {
		const struct model_spec *z = t[i].zoo ? model_find(t[i].zoo) : NULL;
		if (z ? same_arch(z, m)
		      : t[i].layers == m->layers && t[i].hidden == m->hidden &&
				t[i].experts == m->num_experts && t[i].vocab == m->vocab)
			return &t[i];
	}
	return NULL;
}

/* The recipe of t for in's job: a LoRA job needs one the framework
 * fine-tunes with. */
static const struct recipe *job_recipe(const struct recipe *t, size_t n,
				       const struct emit_input *in)
{
	const struct recipe *r = find_recipe(t, n, in->m);
	return r && (in->o->lora_rank == 0 || r->lora) ? r : NULL;
}

/* A LoRA job's fine-tuning recipes train on packed sequences, one pack a
 * microbatch (Megatron-Bridge refuses more): mbs sequences of seq tokens
 * are one pack of mbs x seq, the same GEMMs and, the sequences' bounds
 * kept, the same attention.  *own is in with that batch (in itself where
 * mbs is 1 or the job trains every weight). */
static const struct emit_input *lora_packs(const struct emit_input *in, struct emit_input *own,
					   struct layout *l, struct train_opts *o, struct notes *n)
{
	if (in->o->lora_rank == 0 || in->l->mbs == 1)
		return in;
	*l = *in->l;
	*o = *in->o;
	l->gbs = in->l->gbs / in->l->mbs;
	l->mbs = 1;
	o->seq = in->o->seq * in->l->mbs;
	*own = *in;
	own->l = l;
	own->o = o;
	char b[256];
	snprintf(b, sizeof b, "mbs=%d as one packed sequence of %d x %ld = %ld tokens a microbatch (packed fine-tuning takes one pack a microbatch), global batch %ld packs",
		 in->l->mbs, in->l->mbs, in->o->seq, o->seq, l->gbs);
	emit_note(n, b);
	return own;
}

/* What a LoRA job sets after the recipe's own: packs of the priced
 * sequence length (pplan prices every microbatch full), the rank and the
 * linears adapted (recipes set their own: Bridge's Llama 3.1 405B and
 * Qwen3 MoE ones fewer than LoRA's default, NeMo's DeepSeek-V3 MLA's);
 * the recipe keeps its alpha. */
static void recipe_lora(FILE *f, const struct emit_input *in, const char *c, const char *data)
{
	char names[256];
	fprintf(f, "%s.%s.packed_sequence_specs.packed_sequence_size = %ld\n"
		   "%s.peft.dim = %d\n%s.peft.target_modules = [\"%s\"]\n", c, data, in->o->seq, c,
		in->o->lora_rank, c,
		lora_targets_format(train_opts_lora_targets(in->o), "\", \"", names, sizeof names));
}

static int recipe_zoo(const struct recipe *t, size_t n, const char *name, const char **zoo)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0) {
			*zoo = t[i].zoo;
			return 0;
		}
	return -1;
}

#define NEMO_RECIPES (sizeof nemo_recipes / sizeof nemo_recipes[0])
#define BRIDGE_RECIPES (sizeof bridge_recipes / sizeof bridge_recipes[0])

int emit_nemo_recipe(const char *name, const char **zoo)
{
	return recipe_zoo(nemo_recipes, NEMO_RECIPES, name, zoo);
}

int emit_bridge_recipe(const char *name, const char **zoo)
{
	return recipe_zoo(bridge_recipes, BRIDGE_RECIPES, name, zoo);
}

/* How a recipe's configuration names what pplan sets: NeMo 2.0's
 * (recipe.trainer.strategy..., recipe.model.config..., a plugin and a
 * callback) and Megatron-Bridge's (cfg.model... for the model and its
 * degrees alike, cfg.train..., cfg.mixed_precision, cfg.comm_overlap). */
struct dialect {
	const char *cfg;       /* the object: "recipe", "cfg" */
	const char *degrees;   /* tensor_model_parallel_size ... */
	const char *model;     /* the TransformerConfig */
	const char *optim;     /* the OptimizerConfig */
	const char *ddp;       /* the DistributedDataParallelConfig */
	const char *batch;     /* micro_batch_size, global_batch_size */
	const char *data;      /* the data's seq_length */
	const char *mapping;   /* use_tp_pp_dp_mapping */
	const char *fsdp;      /* what turns Megatron FSDP on */
	int ddp_dist_opt;      /* use_distributed_optimizer in the DDP config too */
};

static const struct dialect nemo_dialect = {
	"recipe", "trainer.strategy", "model.config", "optim.config", "trainer.strategy.ddp",
	"data", "data", "trainer.strategy", "trainer.strategy.fsdp = \"megatron\"", 0,
};

static const struct dialect bridge_dialect = {
	"cfg", "model", "model", "optimizer", "ddp", "train", "dataset", "dist",
	"ddp.use_megatron_fsdp = True", 1,
};

static const char *py_bool(int b)
{
	return b ? "True" : "False";
}

/* The recipe notes both dialects share: what Megatron-Core cannot run. */
static void recipe_notes(const struct emit_input *in, const char *fw, struct notes *n)
{
	const struct layout *l = in->l;
	char b[256];
	if (in->m->num_experts > 1 && !in->mtp_layers)
		emit_note(n, "mtp_num_layers = None: pplan prices no multi-token-prediction layer, which DeepSeek-V3's and Qwen3-Next's recipes add");
	if (l->schedule == SCHED_GPIPE && l->pp > 1) {
		snprintf(b, sizeof b, "schedule gpipe is not expressible in %s (Megatron-Core): it runs 1F1B", fw);
		emit_note(n, b);
	}
	if (l->schedule == SCHED_ZB_H1) {
		snprintf(b, sizeof b, "schedule zb-h1 is not expressible in %s (Megatron-Core has no zero-bubble schedule): it runs 1F1B", fw);
		emit_note(n, b);
	}
	if (l->schedule == SCHED_DUALPIPE) {
		snprintf(b, sizeof b, "schedule dualpipe is not expressible in %s (Megatron-Core has no DualPipe): it runs 1F1B", fw);
		emit_note(n, b);
	}
	if (!emit_default_order(in->o) && !emit_alt_order(in->o)) {
		snprintf(b, sizeof b, "this rank order is not expressible in %s: it uses tp-cp-dp-pp", fw);
		emit_note(n, b);
	}
	if (in->m->parallel_block) {
		snprintf(b, sizeof b, "attention and the MLP side by side on one residual (GPT-NeoX, GPT-J, Falcon) are not expressible in %s: its layers are sequential, of the same shapes and cost", fw);
		emit_note(n, b);
	}
}

static void recipe_recompute(FILE *f, const struct layout *l, const char *c, const char *mc)
{
	if (l->recompute == RECOMPUTE_NONE) {
		fprintf(f, "%s.%s.recompute_granularity = None\n", c, mc);
	} else if (l->recompute == RECOMPUTE_SELECTIVE) {
		fprintf(f, "%s.%s.recompute_granularity = \"selective\"\n", c, mc);
		if (l->recompute_modules) {
			char mods[128];
			recompute_modules_format(l->recompute_modules, mods, sizeof mods, "\", \"");
			fprintf(f, "%s.%s.recompute_modules = [\"%s\"]\n", c, mc, mods);
		}
	} else {
		fprintf(f, "%s.%s.recompute_granularity = \"full\"\n"
			   "%s.%s.recompute_method = \"%s\"\n"
			   "%s.%s.recompute_num_layers = %d\n", c, mc, c, mc,
			l->recompute_layers > 0 ? "block" : "uniform", c, mc,
			l->recompute_layers > 0 ? l->recompute_layers : 1);
	}
	if (l->offload_modules) {
		char mods[128];
		offload_modules_format(l->offload_modules, mods, sizeof mods, "\", \"");
		fprintf(f, "%s.%s.fine_grained_activation_offloading = True\n"
			   "%s.%s.offload_modules = [\"%s\"]\n", c, mc, c, mc, mods);
	}
	if (l->offload_layers > 0)
		fprintf(f, "%s.%s.cpu_offloading = True\n"
			   "%s.%s.cpu_offloading_weights = False\n"
			   "%s.%s.cpu_offloading_num_layers = %d\n", c, mc, c, mc, c, mc,
			l->offload_layers);
}

static void recipe_moe(FILE *f, const struct emit_input *in, const char *c, const char *mc)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	if (in->m->num_experts <= 1)
		return;
	/* what pplan prices: the dispatcher's collectives and one grouped
	 * GEMM over each rank's experts */
	fprintf(f, "%s.%s.moe_token_dispatcher_type = \"%s\"\n", c, mc,
		o->b.moe_flex ? "flex" : o->b.moe_allgather ? "allgather" : "alltoall");
	if (o->b.moe_flex)
		fprintf(f, "%s.%s.moe_flex_dispatcher_backend = \"deepep\"\n", c, mc);
	fprintf(f, "%s.%s.moe_grouped_gemm = True\n", c, mc);
	/* pplan prices no multi-token-prediction layer (DeepSeek-V3's and
	 * Qwen3-Next's recipes add one) unless the pipeline layout counts
	 * them as layers */
	if (in->mtp_layers > 0)
		fprintf(f, "%s.%s.mtp_num_layers = %d\n", c, mc, in->mtp_layers);
	else
		fprintf(f, "%s.%s.mtp_num_layers = None\n", c, mc);
	if (train_opts_moe_a2a_overlap(o, l))
		fprintf(f, "%s.%s.overlap_moe_expert_parallel_comm = True\n"
			   "%s.%s.delay_wgrad_compute = True\n", c, mc, c, mc);
	if (o->b.moe_shared_overlap && in->m->shared_experts > 0 && l->ep > 1)
		fprintf(f, "%s.%s.moe_shared_expert_overlap = True\n", c, mc);
}

/* KEY = N, or None for 0 (not set). */
static void recipe_optional(FILE *f, const char *c, const char *s, const char *key, int n)
{
	if (n > 0)
		fprintf(f, "%s.%s.%s = %d\n", c, s, key, n);
	else
		fprintf(f, "%s.%s.%s = None\n", c, s, key);
}

/* The layout and the switches pplan priced, as overrides of a recipe. */
static void recipe_overrides(FILE *f, const struct emit_input *in, const struct dialect *d)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	const char *c = d->cfg, *s = d->degrees;

	fprintf(f, "%s.%s.tensor_model_parallel_size = %d\n", c, s, l->tp);
	fprintf(f, "%s.%s.pipeline_model_parallel_size = %d\n", c, s, l->pp);
	/* model chunks per pipeline rank, as pplan's vp */
	if (l->vp > 1)
		fprintf(f, "%s.%s.virtual_pipeline_model_parallel_size = %d\n", c, s, l->vp);
	else
		fprintf(f, "%s.%s.virtual_pipeline_model_parallel_size = None\n", c, s);
	fprintf(f, "%s.%s.context_parallel_size = %d\n", c, s, l->cp);
	fprintf(f, "%s.%s.expert_model_parallel_size = %d\n", c, s, l->ep);
	if (in->m->num_experts > 1) /* a recipe may split its experts otherwise */
		fprintf(f, "%s.%s.expert_tensor_parallel_size = %d\n", c, s, layout_etp(l));
	/* the stages as pplan split them, every field said: a recipe's own
	 * (DeepSeek-V3's layout string, the embedding and the loss counted
	 * in Qwen3's) would cut others */
	if (in->pp_layout) { /* the string is the split */
		fprintf(f, "%s.%s.pipeline_model_parallel_layout = \"%s\"\n", c, s, in->pp_layout);
		recipe_optional(f, c, s, "num_layers_in_first_pipeline_stage", 0);
		recipe_optional(f, c, s, "num_layers_in_last_pipeline_stage", 0);
	} else {
		fprintf(f, "%s.%s.pipeline_model_parallel_layout = None\n", c, s);
		recipe_optional(f, c, s, "num_layers_in_first_pipeline_stage", l->pp_first);
		recipe_optional(f, c, s, "num_layers_in_last_pipeline_stage", l->pp_last);
	}
	fprintf(f, "%s.%s.account_for_embedding_in_pipeline_split = %s\n", c, s,
		py_bool(l->pp_embed && !in->pp_layout));
	fprintf(f, "%s.%s.account_for_loss_in_pipeline_split = %s\n", c, s,
		py_bool(l->pp_loss && !in->pp_layout));
	fprintf(f, "%s.%s.sequence_parallel = %s\n", c, s, py_bool(l->sp));
	if (emit_alt_order(o) && l->pp > 1 && l->dp > 1)
		fprintf(f, "%s.%s.use_tp_pp_dp_mapping = True\n", c, d->mapping);
	fprintf(f, "%s.%s.micro_batch_size = %d\n", c, d->batch, l->mbs);
	fprintf(f, "%s.%s.global_batch_size = %ld\n", c, d->batch, l->gbs);
	fprintf(f, "%s.%s.seq_length = %ld\n", c, d->data, o->seq);
	fprintf(f, "%s.%s.seq_length = %ld\n", c, d->model, o->seq);
	recipe_moe(f, in, c, d->model);
	recipe_recompute(f, l, c, d->model);
	if (train_opts_bf16_moments(o, l))
		fprintf(f, "%s.%s.use_precision_aware_optimizer = True\n"
			   "%s.%s.exp_avg_dtype = torch.bfloat16\n"
			   "%s.%s.exp_avg_sq_dtype = torch.bfloat16\n", c, d->optim, c, d->optim,
			c, d->optim);
	fprintf(f, "%s.%s.use_distributed_optimizer = %s\n", c, d->optim, py_bool(l->zero >= 1));
	if (d->ddp_dist_opt)
		fprintf(f, "%s.%s.use_distributed_optimizer = %s\n", c, d->ddp, py_bool(l->zero >= 1));
	if (l->optimizer_offload)
		fprintf(f, "%s.%s.optimizer_cpu_offload = True\n"
			   "%s.%s.optimizer_offload_fraction = 1.0\n", c, d->optim, c, d->optim);
	if (l->zero >= 2)
		fprintf(f, "%s.%s\n"
			   "%s.%s.data_parallel_sharding_strategy = \"%s\"\n"
			   "%s.%s.gradient_accumulation_fusion = False\n", c, d->fsdp, c, d->ddp,
			l->zero == 2 ? "optim_grads" : "optim_grads_params", c, d->model);
	fprintf(f, "%s.%s.overlap_grad_reduce = %s\n", c, d->ddp, py_bool(o->b.overlap_grad_reduce));
	fprintf(f, "%s.%s.overlap_param_gather = %s\n", c, d->ddp,
		py_bool(o->b.overlap_param_gather && l->zero >= 1));
}

/* The current-scaling configs keep the first and last layer in bf16;
 * NVIDIA's performance scripts turn that off, and pplan prices every
 * layer in fp8, so the override says so. */
#define FIRST_LAST_BF16_NOTE \
	"every layer in fp8, as pplan prices it and NVIDIA's performance scripts run it"
#define FIRST_LAST_BF16_NVFP4_NOTE \
	"every layer in NVFP4, as pplan prices it (Megatron-Bridge's Llama 3 8B recipe keeps its last 4 in bf16)"

/* Whether the recipe says first_last_layers_bf16 = False, and why:
 * fp8 current scaling's config turns it on by default, and NVFP4's is
 * said so that the run keeps every layer at the rate pplan prices. */
static const char *first_last_note(const struct train_opts *o)
{
	if (o->precision != PREC_FP8)
		return NULL;
	return o->b.fp8_recipe == FP8_TENSORWISE ? FIRST_LAST_BF16_NOTE
	       : o->b.fp8_recipe == FP8_NVFP4	 ? FIRST_LAST_BF16_NVFP4_NOTE
						 : NULL;
}

/* The end layers an fp8-class run keeps in bf16, on the mixed-precision
 * config `mp`: the counts priced, or off where none is and the config
 * would otherwise keep some (first_last_note). */
static void recipe_bf16_layers(FILE *f, const struct train_opts *o, const char *mp)
{
	if (o->bf16_first > 0 || o->bf16_last > 0)
		fprintf(f, "%s.first_last_layers_bf16 = True\n"
			   "%s.num_layers_at_start_in_bf16 = %d\n"
			   "%s.num_layers_at_end_in_bf16 = %d\n",
			mp, mp, o->bf16_first, mp, o->bf16_last);
	else if (first_last_note(o))
		fprintf(f, "%s.first_last_layers_bf16 = False  # %s\n", mp, first_last_note(o));
}

/* The mixed-precision config of the run's precision and fp8 recipe, as
 * NeMo 2.0 (delayed = "fp8") or Megatron-Bridge (delayed spelt out) names it. */
static const char *mixed_precision(const struct train_opts *o, int bridge)
{
	if (o->precision != PREC_FP8)
		return o->precision == PREC_FP16 ? "fp16_mixed" : "bf16_mixed";
	switch (o->b.fp8_recipe) {
	case FP8_TENSORWISE: return "bf16_with_fp8_current_scaling_mixed";
	case FP8_BLOCKWISE: return "bf16_with_fp8_subchannel_scaling_mixed";
	case FP8_MXFP8: return "bf16_with_mxfp8_mixed";
	/* Bridge's NVFP4 config; NeMo 2.0 has none: its bf16 plugin with
	 * the fp4 fields set (emit_nemo writes them) */
	case FP8_NVFP4: return bridge ? "bf16_with_nvfp4_mixed" : "bf16_mixed";
	default: return bridge ? "bf16_with_fp8_delayed_scaling_mixed" : "bf16_with_fp8_mixed";
	}
}


void emit_nemo(FILE *f, const struct emit_input *in)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	const struct recipe *r = job_recipe(nemo_recipes, NEMO_RECIPES, in);
	const int lora = o->lora_rank > 0;
	struct notes n = { .n = 0 };
	struct emit_input own;
	struct layout pl;
	struct train_opts po;
	const struct emit_input *packed;

	emit_header(f, "#", in, "NeMo 2.0 recipe override", EMIT_NEMO);
	if (!r) {
		char b[256];
		snprintf(b, sizeof b, "NeMo 25.11 has no %s recipe for %s: start from the recipe of the nearest model and set its model config (recipe.model.config)",
			 lora ? "fine-tuning" : "pretraining", in->m->name);
		emit_note(&n, b);
	}
	if (lora)
		emit_note(&n, "LoRA on the model's checkpoint: set recipe.resume to it (the recipe's own points at the Hugging Face model)");
	recipe_notes(in, "NeMo", &n);
	packed = lora_packs(in, &own, &pl, &po, &n);
	if (l->zero >= 2)
		emit_note(&n, "zero 2/3 is Megatron FSDP: set recipe.trainer.strategy.fsdp = \"megatron\" (NeMo 25.04 and later)");
	emit_comment_notes(f, "#", &n);
	if (train_opts_bf16_moments(o, l))
		fprintf(f, "import torch\n");
	fprintf(f, "import nemo_run as run\n"
		   "from nemo.collections import llm\n"
		   "from nemo.collections.llm.recipes.precision.mixed_precision import %s\n",
		mixed_precision(o, 0));
	if (l->tp > 1)
		fprintf(f, "from nemo.lightning.pytorch.callbacks.megatron_comm_overlap import MegatronCommOverlapCallback\n");
	if (lora)
		fprintf(f, "from megatron.core.distributed import DistributedDataParallelConfig\n");
	if (lora) {
		/* packed sequences: every microbatch as long as pplan prices it;
		 * the fine-tuning trainer's DDP is the string "megatron", made a
		 * config here (its defaults) so the overrides below apply */
		fprintf(f, "\nrecipe = llm.%s.finetune_recipe(name=\"pplan\", num_nodes=%d, num_gpus_per_node=%d, peft_scheme=\"lora\", packed_sequence=True)\n"
			   "recipe.trainer.strategy.ddp = run.Config(DistributedDataParallelConfig, check_for_nan_in_grad=True)\n",
			r ? r->name : "REPLACE_WITH_RECIPE", in->c->num_nodes, in->c->gpus_per_node);
	} else {
		fprintf(f, "\nrecipe = llm.%s.pretrain_recipe(name=\"pplan\", num_nodes=%d, num_gpus_per_node=%d)\n",
			r ? r->name : "REPLACE_WITH_RECIPE", in->c->num_nodes, in->c->gpus_per_node);
	}
	recipe_overrides(f, packed, &nemo_dialect);
	if (lora)
		recipe_lora(f, packed, "recipe", "data");
	fprintf(f, "recipe.trainer.plugins = %s()\n", mixed_precision(o, 0));
	/* the plugin sets the DDP config's reduction dtype (fp32 but for
	 * fp16_mixed): pplan's, as the framework row prices it */
	fprintf(f, "recipe.trainer.plugins.grad_reduce_in_fp32 = %s\n", py_bool(o->b.grad_bytes == 4));
	if (o->precision == PREC_FP8 && o->b.fp8_recipe == FP8_NVFP4)
		fprintf(f, "recipe.trainer.plugins.fp4 = \"e2m1\"\n"
			   "recipe.trainer.plugins.fp4_recipe = \"nvfp4\"\n");
	recipe_bf16_layers(f, o, "recipe.trainer.plugins");
	if (l->tp > 1) /* said either way: a recipe may add the callback itself */
		fprintf(f, "recipe.trainer.callbacks.append(run.Config(MegatronCommOverlapCallback, tp_comm_overlap=%s))\n",
			py_bool(o->b.tp_overlap != FW_TPO_NONE));
}

/* ---- Megatron-Bridge ------------------------------------------------------------- */

/* A model Megatron-Bridge builds from GPTModelProvider's fields alone,
 * for one without a recipe: attention and an MLP in every layer, RoPE
 * without context extension or a learned table of the sequence's length,
 * an activation Megatron-Core has, nothing Megatron-Core has no field for. */
static int provider_expressible(const struct model_spec *m, long seq)
{
	return !model_is_mla(m) && !model_is_hybrid(m) && m->sliding_window == 0 && !m->alibi &&
	       (m->mlp == MLP_GELU || m->mlp == MLP_SWIGLU || m->mlp == MLP_SQUARED_RELU) &&
	       !m->rope_scaling[0] && (m->pos_embedding == 0 || m->pos_embedding == seq) &&
	       !m->attn_sinks && !m->attn_bias && !m->mlp_bias && !m->moe_bias && !m->shared_gate &&
	       (!m->norms_per_layer || m->norms_per_layer == 2);
}

/* The model as GPTModelProvider's fields (Megatron-Core's TransformerConfig
 * and the provider's positions and embeddings), each said, Megatron's
 * default or not; the tokenizer's vocabulary, which Bridge pads to
 * 128 x tp as pplan prices it. */
static void bridge_provider(FILE *f, const struct model_spec *m)
{
	int moe = model_moe_layers(m);
	fprintf(f, "cfg.model = GPTModelProvider(\n"
		   "    num_layers=%d,\n    hidden_size=%ld,\n    ffn_hidden_size=%ld,\n"
		   "    num_attention_heads=%d,\n    num_query_groups=%d,\n",
		m->layers, m->hidden, m->ffn, m->heads, m->kv_heads);
	if (m->head_dim > 0 && m->head_dim != m->hidden / m->heads)
		fprintf(f, "    kv_channels=%ld,\n", m->head_dim);
	fprintf(f, "    normalization=\"%s\",\n", m->norm == NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
	if (m->norm_eps > 0)
		fprintf(f, "    layernorm_epsilon=%g,\n", m->norm_eps);
	fprintf(f, "    gated_linear_unit=%s,\n    activation_func=%s,\n",
		py_bool(m->mlp == MLP_SWIGLU),
		m->mlp == MLP_SWIGLU ? "F.silu" : m->mlp == MLP_SQUARED_RELU ? "squared_relu" : "F.gelu");
	if (m->pos_embedding > 0)
		fprintf(f, "    position_embedding_type=\"learned_absolute\",\n");
	else
		fprintf(f, "    position_embedding_type=\"rope\",\n    rotary_base=%.0f,\n",
			m->rope_theta > 0 ? m->rope_theta : 10000.0);
	if (m->pos_embedding == 0 && m->rope_percent > 0 && m->rope_percent < 1)
		fprintf(f, "    rotary_percent=%g,\n", m->rope_percent);
	fprintf(f, "    share_embeddings_and_output_weights=%s,\n    add_bias_linear=%s,\n"
		   "    add_qkv_bias=%s,\n    qk_layernorm=%s,\n",
		py_bool(m->tied_embeddings), py_bool(m->linear_bias), py_bool(m->qkv_bias),
		py_bool(m->qk_norm));
	fprintf(f, "    hidden_dropout=%s,\n    attention_dropout=%s,\n",
		m->no_dropout ? "0.0" : "0.1", m->no_dropout ? "0.0" : "0.1");
	if (m->num_experts > 1) {
		fprintf(f, "    num_moe_experts=%d,\n    moe_router_topk=%d,\n", m->num_experts, m->top_k);
		if (m->route_groups > 1)
			fprintf(f, "    moe_router_num_groups=%d,\n    moe_router_group_topk=%d,\n",
				m->route_groups, m->route_topk_groups);
		if (m->router_sigmoid)
			fprintf(f, "    moe_router_score_function=\"sigmoid\",\n"
				   "    moe_router_enable_expert_bias=%s,\n",
				py_bool(m->router_expert_bias));
		if (m->router_pre_softmax)
			fprintf(f, "    moe_router_pre_softmax=True,\n");
		if (m->router_scale > 0)
			fprintf(f, "    moe_router_topk_scaling_factor=%g,\n", m->router_scale);
		if (m->moe_ffn > 0)
			fprintf(f, "    moe_ffn_hidden_size=%ld,\n", m->moe_ffn);
		if (m->shared_experts > 0)
			fprintf(f, "    moe_shared_expert_intermediate_size=%ld,\n",
				(long)m->shared_experts * model_shared_ffn(m));
		if (moe < m->layers && m->moe_every <= 1)
			fprintf(f, "    moe_layer_freq=[0] * %d + [1] * %d,\n", m->dense_layers, moe);
		else if (m->moe_every > 1)
			fprintf(f, "    moe_layer_freq=%d,\n", m->moe_every);
	}
	fprintf(f, ")\n"
		   "cfg.tokenizer.tokenizer_type = \"NullTokenizer\"\n"
		   "cfg.tokenizer.tokenizer_model = None\n"
		   "cfg.tokenizer.vocab_size = %ld\n", m->vocab);
}

void emit_bridge(FILE *f, const struct emit_input *in)
{
	const struct layout *l = in->l;
	const struct train_opts *o = in->o;
	const struct model_spec *m = in->m;
	const struct recipe *r = job_recipe(bridge_recipes, BRIDGE_RECIPES, in);
	const int lora = o->lora_rank > 0;
	/* a LoRA job's packs are its sequences (lora_packs) */
	const int provider = !r && provider_expressible(m, o->seq * (lora ? l->mbs : 1));
	const char *kind = lora ? "peft" : "pretrain";
	struct notes n = { .n = 0 };
	struct emit_input own;
	struct layout pl;
	struct train_opts po;
	const struct emit_input *packed;

	emit_header(f, "#", in, "Megatron-Bridge recipe override", EMIT_BRIDGE);
	if (provider) {
		char b[256];
		snprintf(b, sizeof b, "Megatron-Bridge 0.3.1 has no %s recipe for %s: its model is GPTModelProvider's fields, on the recipes' common defaults (_%s_common)",
			 lora ? "PEFT" : "pretraining", m->name, kind);
		emit_note(&n, b);
	} else if (!r && lora && provider_expressible(m, o->seq)) {
		char b[256];
		snprintf(b, sizeof b, "Megatron-Bridge 0.3.1 has no PEFT recipe for %s, and its %ld learned positions do not reach packs of %d x %ld tokens: give mbs=1",
			 m->name, m->pos_embedding, l->mbs, o->seq);
		emit_note(&n, b);
	} else if (!r) {
		char b[256];
		snprintf(b, sizeof b, "Megatron-Bridge 0.3.1 has no %s recipe for %s, and GPTModelProvider's fields do not say all of it: start from the recipe of the nearest model and set cfg.model to its provider",
			 lora ? "PEFT" : "pretraining", m->name);
		emit_note(&n, b);
	}
	if (lora)
		emit_note(&n, "LoRA on the model's checkpoint: set cfg.checkpoint.pretrained_checkpoint to it");
	recipe_notes(in, "Megatron-Bridge", &n);
	packed = lora_packs(in, &own, &pl, &po, &n);
	emit_note(&n, "what the recipe sets and pplan does not price (CUDA graphs, token drop, forced load balancing) stays as the recipe has it");
	emit_comment_notes(f, "#", &n);
	if (train_opts_bf16_moments(o, l))
		fprintf(f, "import torch\n");
	if (provider && m->mlp != MLP_SQUARED_RELU)
		fprintf(f, "import torch.nn.functional as F\n");
	if (provider && m->mlp == MLP_SQUARED_RELU)
		fprintf(f, "from megatron.core.activations import squared_relu\n");
	if (provider)
		fprintf(f, "from megatron.bridge.models.gpt_provider import GPTModelProvider\n");
	if (provider && lora)
		fprintf(f, "from megatron.bridge.peft.lora import LoRA\n");
	if (provider)
		fprintf(f, "from megatron.bridge.recipes.common import _%s_common\n", kind);
	else if (r)
		fprintf(f, "from megatron.bridge.recipes.%s import %s_%s_config\n", r->family, r->name, kind);
	fprintf(f, "from megatron.bridge.training.comm_overlap import CommOverlapConfig\n");
	if (lora)
		fprintf(f, "from megatron.bridge.training.finetune import finetune\n");
	fprintf(f, "from megatron.bridge.training.gpt_step import forward_step\n"
		   "from megatron.bridge.training.mixed_precision import %s\n", mixed_precision(o, 1));
	if (!lora)
		fprintf(f, "from megatron.bridge.training.pretrain import pretrain\n");
	if (provider) {
		fprintf(f, "\ncfg = _%s_common()\n", kind);
		bridge_provider(f, m);
		if (lora) /* the common defaults have no adapters */
			fprintf(f, "cfg.peft = LoRA()\n");
	} else if (lora) {
		fprintf(f, "\ncfg = %s_peft_config(peft_scheme=\"lora\")\n", r ? r->name : "REPLACE_WITH_RECIPE");
	} else {
		fprintf(f, "\ncfg = %s_pretrain_config()\n", r ? r->name : "REPLACE_WITH_RECIPE");
	}
	recipe_overrides(f, packed, &bridge_dialect);
	if (lora)
		recipe_lora(f, packed, "cfg", "dataset");
	/* it sets the DDP config's reduction dtype (fp32 but for
	 * fp16_mixed): pplan's, as the framework row prices it */
	fprintf(f, "cfg.mixed_precision = %s()\n"
		   "cfg.mixed_precision.grad_reduce_in_fp32 = %s\n", mixed_precision(o, 1),
		py_bool(o->b.grad_bytes == 4));
	recipe_bf16_layers(f, o, "cfg.mixed_precision");
	/* the DP overlap said here too: CommOverlapConfig's own default
	 * turns it on wherever dp > 1 */
	fprintf(f, "cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=%s, overlap_grad_reduce=%s, overlap_param_gather=%s)\n",
		py_bool(l->tp > 1 && o->b.tp_overlap != FW_TPO_NONE),
		py_bool(o->b.overlap_grad_reduce), py_bool(o->b.overlap_param_gather && l->zero >= 1));
	fprintf(f, "\n# torchrun --nproc-per-node %d --nnodes %d THIS_FILE.py\n"
		   "if __name__ == \"__main__\":\n"
		   "    %s(cfg, forward_step)\n", in->c->gpus_per_node, in->c->num_nodes,
		lora ? "finetune" : "pretrain");
}
