/*
 * launch_recipe.c: recipe overrides read back (launch_read.h), NeMo
 * 2.0's (recipe = llm.NAME.pretrain_recipe(...), recipe.KEY = VALUE) and
 * Megatron-Bridge's (cfg = NAME_pretrain_config(), cfg.SECTION.KEY =
 * VALUE, CommOverlapConfig(...)): Bridge's names are translated to
 * NeMo's and read by one table.  What the framework applies last wins as
 * it does there: the precision recipe's gradient-reduction dtype over
 * the DDP config's, CommOverlapConfig's DP overlap over cfg.ddp's.
 */
#include "launch_read_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- NeMo 2.0 ------------------------------------------------------------------- */

/* A Python value as the emitter writes them: True, False, None, a number,
 * a quoted string, a list of quoted strings (joined by '+'), X(); a comment
 * after the value (# ...) is not part of it. */
static void py_value(const char *v, char *buf, size_t len)
{
	size_t o = 0;
	int quoted = 0;
	for (; *v && o + 1 < len; v++)
		if (*v == '"' || *v == '\'')
			quoted = !quoted;
		else if (*v == '#' && !quoted)
			break; /* a comment to the line's end */
		else if (*v == '[' || *v == ']' || *v == ' ')
			continue;
		else
			buf[o++] = *v == ',' ? '+' : *v;
	buf[o] = '\0';
	if (o > 2 && !strcmp(buf + o - 2, "()"))
		buf[o - 2] = '\0';
}

/* `shown`: the assignment's target as the file writes it. */
static enum pplan_status nemo_bool(struct reader *r, const char *shown, const char *v, int *out)
{
	if (!strcmp(v, "True") || !strcmp(v, "False")) {
		*out = !strcmp(v, "True");
		return PPLAN_OK;
	}
	return perr_set(r->e, PPLAN_EINPUT, "%s: %s must be True or False, got '%s'",
			r->where, shown, v);
}

struct nemo {
	char recipe[64], plugin[64], granularity[16], fsdp[16], shard[24], method[16];
	char fp4[16];                    /* trainer.plugins.fp4 ("e2m1": NVFP4) */
	int dist_opt;       /* -1 not said */
	int recompute_layers, cpu_offloading, fine_grained_offloading;
	int plugin_grad32, ddp_grad32;   /* grad_reduce_in_fp32 as said (-1 not) */
	int first_last_bf16;             /* first_last_layers_bf16 as said (-1 not) */
	long bf16_start, bf16_end;       /* num_layers_at_start/end_in_bf16 (-1 not said) */
	/* Megatron-Bridge's cfg.model = GPTModelProvider(...): its keywords
	 * (the text between the parentheses), and the tokenizer's vocabulary */
	char provider[2048];
	char pp_layout[512];             /* pipeline_model_parallel_layout ("" None) */
	char mtp[48];                    /* "model.config.mtp_num_layers = 1" ("" None or 0) */
	int provider_depth;              /* > 0 inside the call */
	long tok_vocab;
	int precision_aware;             /* optim.config.use_precision_aware_optimizer */
	/* a fine-tuning recipe's PEFT scheme (0 none: every weight trains,
	 * 1 LoRA, 2 another: scheme names it), LoRA's dim (0 not said) and
	 * the packs' length (0 not packed) */
	int peft, lora_dim;
	unsigned lora_targets;            /* target_modules as said (0 not) */
	char scheme[24];
	long pack;
	char exp_avg[24], exp_avg_sq[24]; /* their dtypes ("" fp32) */
};

/* A target_modules list, ["linear_qkv", 'linear_proj'], into nm. */
static enum pplan_status lora_list(struct reader *r, struct nemo *nm, const char *shown,
				   const char *v)
{
	char words[256], bad[64];
	size_t o = 0;
	for (; *v && *v != ']' && o + 1 < sizeof words; v++)
		if (*v != '[' && *v != '"' && *v != '\'')
			words[o++] = *v;
	words[o] = '\0';
	if (strchr(words, '*') || strchr(words, '.'))
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: %s = [%s] names linears by pattern (some layers only): pplan prices LoRA on every layer's linears of the names it lists",
				r->where, shown, words);
	if (lora_targets_parse(words, &nm->lora_targets, bad, sizeof bad) != 0)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: %s names '%s', which is not a linear pplan prices (linear_qkv, linear_proj, linear_fc1, linear_fc2, MLA's and the mixers' projections)",
				r->where, shown, bad);
	return PPLAN_OK;
}

/* One override, `key` in NeMo's names (Bridge's translated), `shown` as
 * the file writes it (for the sentences). */
static enum pplan_status nemo_assign(struct reader *r, struct nemo *nm, const char *key,
				     const char *shown, const char *v)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	struct flag f = { shown, v, 0, 0 };
	char bad[64];
	struct { const char *key; int *dst; unsigned set; } ints[] = {
		{ "trainer.strategy.tensor_model_parallel_size", &l->tp, LK_TP },
		{ "trainer.strategy.pipeline_model_parallel_size", &l->pp, LK_PP },
		{ "trainer.strategy.context_parallel_size", &l->cp, LK_CP },
		{ "trainer.strategy.expert_model_parallel_size", &l->ep, LK_EP },
		{ "trainer.strategy.expert_tensor_parallel_size", &l->etp, LK_ETP },
		{ "trainer.strategy.num_layers_in_first_pipeline_stage", &l->pp_first, LK_PP_FIRST },
		{ "trainer.strategy.num_layers_in_last_pipeline_stage", &l->pp_last, LK_PP_LAST },
		{ "data.micro_batch_size", &l->mbs, LK_MBS },
	};
	struct { const char *key; int *dst; unsigned set; } bools[] = {
		{ "trainer.strategy.sequence_parallel", &l->sp, LK_SP },
		{ "trainer.strategy.account_for_embedding_in_pipeline_split", &l->pp_embed, LK_PP_EMBED },
		{ "trainer.strategy.account_for_loss_in_pipeline_split", &l->pp_loss, LK_PP_LOSS },
		{ "trainer.strategy.ddp.overlap_grad_reduce", &o->switches.overlap_grad_reduce, 0 },
		{ "trainer.strategy.ddp.overlap_param_gather", &o->switches.overlap_param_gather, 0 },
		{ "optim.config.use_distributed_optimizer", &nm->dist_opt, 0 },
	};
	for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
		if (!strcmp(key, ints[k].key)) {
			o->set |= ints[k].set;
			if (!strcmp(v, "None") && (ints[k].set & (LK_PP_FIRST | LK_PP_LAST)))
				return *ints[k].dst = 0, PPLAN_OK; /* not set: even stages */
			return lr_get_int(r, &f, 1, ints[k].dst);
		}
	if (!strcmp(key, "trainer.strategy.pipeline_model_parallel_layout")) {
		if (strcmp(v, "None")) /* py_value made its cosmetic commas '+' */
			for (size_t i = 0; i + 1 < sizeof nm->pp_layout && (i == 0 || v[i - 1]); i++)
				nm->pp_layout[i] = v[i] == '+' ? ',' : v[i];
		return PPLAN_OK;
	}
	if (!strcmp(key, "model.config.mtp_num_layers")) {
		if (strcmp(v, "None") && strcmp(v, "0"))
			snprintf(nm->mtp, sizeof nm->mtp, "%s = %.16s", shown, v);
		return PPLAN_OK;
	}
	for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++)
		if (!strcmp(key, bools[k].key)) {
			o->set |= bools[k].set;
			return nemo_bool(r, shown, v, bools[k].dst);
		}
	if (!strcmp(key, "trainer.strategy.virtual_pipeline_model_parallel_size")) {
		o->set |= LK_VP;
		if (!strcmp(v, "None"))
			return l->vp = 1, PPLAN_OK;
		return lr_get_int(r, &f, 1, &l->vp);
	}
	if (!strcmp(key, "data.global_batch_size")) {
		o->set |= LK_GBS;
		return lr_get_long(r, &f, 1, &l->gbs);
	}
	if (!strcmp(key, "data.seq_length") || !strcmp(key, "model.config.seq_length"))
		return lr_get_long(r, &f, 1, &o->seq);
	if (!strcmp(key, "data.packed_sequence_specs.packed_sequence_size"))
		return lr_get_long(r, &f, 1, &nm->pack);
	if (!strcmp(key, "peft.dim"))
		return lr_get_int(r, &f, 1, &nm->lora_dim);
	if (!strcmp(key, "peft.target_modules"))
		return lora_list(r, nm, shown, v);
	if (!strcmp(key, "trainer.strategy.use_tp_pp_dp_mapping")) {
		if (!strcmp(v, "True"))
			snprintf(o->order, sizeof o->order, "tp-cp-pp-dp");
		return PPLAN_OK;
	}
	if (!strcmp(key, "model.config.recompute_granularity"))
		return snprintf(nm->granularity, sizeof nm->granularity, "%s", v), PPLAN_OK;
	if (!strcmp(key, "model.config.recompute_method"))
		return snprintf(nm->method, sizeof nm->method, "%s", v), PPLAN_OK;
	if (!strcmp(key, "model.config.recompute_num_layers"))
		return lr_get_int(r, &f, 1, &nm->recompute_layers);
	if (!strcmp(key, "model.config.cpu_offloading"))
		return nemo_bool(r, shown, v, &nm->cpu_offloading);
	if (!strcmp(key, "model.config.cpu_offloading_num_layers")) {
		o->set |= LK_OFFLOAD_LAYERS;
		return lr_get_int(r, &f, 1, &l->offload_layers);
	}
	if (!strcmp(key, "model.config.recompute_modules")) {
		o->set |= LK_RECOMPUTE_MODULES;
		if (recompute_modules_parse(v, &l->recompute_modules, bad, sizeof bad) != 0)
			return perr_set(r->e, PPLAN_EINPUT, "%s: %s does not know the module '%s'",
					r->where, shown, bad);
		return PPLAN_OK;
	}
	if (!strcmp(key, "model.config.fine_grained_activation_offloading"))
		return nemo_bool(r, shown, v, &nm->fine_grained_offloading);
	if (!strcmp(key, "model.config.offload_modules")) {
		o->set |= LK_OFFLOAD;
		if (offload_modules_parse(v, &l->offload_modules, bad, sizeof bad) != 0)
			return perr_set(r->e, PPLAN_EINPUT, "%s: %s does not know the module '%s'",
					r->where, shown, bad);
		return PPLAN_OK;
	}
	if (!strcmp(key, "trainer.plugins.grad_reduce_in_fp32"))
		return nemo_bool(r, shown, v, &nm->plugin_grad32);
	if (!strcmp(key, "trainer.plugins.fp4"))
		return snprintf(nm->fp4, sizeof nm->fp4, "%s", v), PPLAN_OK;
	if (!strcmp(key, "trainer.plugins.first_last_layers_bf16"))
		return nemo_bool(r, shown, v, &nm->first_last_bf16);
	if (!strcmp(key, "trainer.plugins.num_layers_at_start_in_bf16") ||
	    !strcmp(key, "trainer.plugins.num_layers_at_end_in_bf16")) {
		long *to = strstr(key, "start") ? &nm->bf16_start : &nm->bf16_end;
		char *end;
		*to = strtol(v, &end, 10);
		if (end == v || *end || *to < 0 || *to > 1024)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: %s must be a whole number of layers from 0 to 1024, got '%s'",
					r->where, shown, v);
		return PPLAN_OK;
	}
	if (!strcmp(key, "trainer.strategy.ddp.grad_reduce_in_fp32"))
		return nemo_bool(r, shown, v, &nm->ddp_grad32);
	if (!strcmp(key, "model.config.overlap_moe_expert_parallel_comm"))
		return nemo_bool(r, shown, v, &o->switches.moe_a2a_overlap);
	if (!strcmp(key, "model.config.moe_shared_expert_overlap"))
		return nemo_bool(r, shown, v, &o->switches.moe_shared_overlap);
	if (!strcmp(key, "optim.config.use_precision_aware_optimizer"))
		return nemo_bool(r, shown, v, &nm->precision_aware);
	if (!strcmp(key, "optim.config.exp_avg_dtype"))
		return snprintf(nm->exp_avg, sizeof nm->exp_avg, "%s", v), PPLAN_OK;
	if (!strcmp(key, "optim.config.exp_avg_sq_dtype"))
		return snprintf(nm->exp_avg_sq, sizeof nm->exp_avg_sq, "%s", v), PPLAN_OK;
	if (!strcmp(key, "model.config.moe_token_dispatcher_type"))
		return o->switches.moe_dispatcher = fw_moe_dispatcher_parse(v), PPLAN_OK;
	if (!strcmp(key, "trainer.strategy.fsdp"))
		return snprintf(nm->fsdp, sizeof nm->fsdp, "%s", v), PPLAN_OK;
	if (!strcmp(key, "trainer.strategy.ddp.data_parallel_sharding_strategy"))
		return snprintf(nm->shard, sizeof nm->shard, "%s", v), PPLAN_OK;
	if (!strcmp(key, "trainer.plugins"))
		return snprintf(nm->plugin, sizeof nm->plugin, "%s", v), PPLAN_OK;
	return PPLAN_OK;
}

/* A keyword of a call on one line: "X(a=True, b=False)", "b" -> "False". */
static int py_keyword(const char *line, const char *kw, char *out, size_t len)
{
	size_t n = strlen(kw);
	for (const char *p = strstr(line, kw); p; p = strstr(p + 1, kw))
		if (p > line && (p[-1] == '(' || p[-1] == ' ') && p[n] == '=') {
			size_t k = strcspn(p + n + 1, ",)");
			snprintf(out, len, "%.*s", (int)(k < len - 1 ? k : len - 1), p + n + 1);
			return 1;
		}
	return 0;
}

/* A fine-tuning recipe's peft_scheme keyword (its value, quotes and all,
 * or NULL where the call does not say it: LoRA, both frameworks'
 * default). */
static void peft_scheme(struct nemo *nm, const char *v)
{
	char s[24];
	size_t o = 0;
	for (; v && *v && o + 1 < sizeof s; v++)
		if (*v != '"' && *v != '\'' && *v != ' ')
			s[o++] = *v;
	s[o] = '\0';
	if (!v || !strcasecmp(s, "lora"))
		nm->peft = 1;
	else if (!strcmp(s, "None") || !strcasecmp(s, "none"))
		nm->peft = 0;
	else
		nm->peft = 2;
	snprintf(nm->scheme, sizeof nm->scheme, "%s", s);
}

static enum pplan_status nemo_line(struct reader *r, struct nemo *nm, const char *line)
{
	char key[128], shown[136], val[128];
	const char *p, *eq;
	long v;

	while (*line == ' ' || *line == '\t')
		line++;
	if (((p = strstr(line, ".pretrain_recipe(")) || (p = strstr(line, ".finetune_recipe("))) &&
	    !strncmp(line, "recipe = llm.", 13)) {
		size_t n = (size_t)(p - (line + 13));
		char sv[32];
		if (!strncmp(p, ".finetune_recipe(", 17))
			peft_scheme(nm, py_keyword(line, "peft_scheme", sv, sizeof sv) ? sv : NULL);
		snprintf(nm->recipe, sizeof nm->recipe, "%.*s", (int)(n < 63 ? n : 63), line + 13);
		if ((p = strstr(line, "num_nodes=")) && sscanf(p + 10, "%ld", &v) == 1 && v > 0)
			r->out->nodes = v;
		if ((p = strstr(line, "num_gpus_per_node=")) && sscanf(p + 18, "%ld", &v) == 1 && v > 0)
			r->out->gpus_per_node = v;
		return PPLAN_OK;
	}
	if (strstr(line, "MegatronCommOverlapCallback") && (p = strstr(line, "tp_comm_overlap="))) {
		r->out->switches.tp_overlap = !strncmp(p + 16, "True", 4) ? FW_TPO_PIPELINED : FW_TPO_NONE;
		return PPLAN_OK;
	}
	if (strncmp(line, "recipe.", 7) != 0 || !(eq = strstr(line, " = ")))
		return PPLAN_OK;
	snprintf(key, sizeof key, "%.*s", (int)(eq - line - 7), line + 7);
	snprintf(shown, sizeof shown, "%.*s", (int)(eq - line), line);
	py_value(eq + 3, val, sizeof val);
	return nemo_assign(r, nm, key, shown, val);
}

/* Megatron-Bridge's names for what nemo_assign reads (emit_recipe.c's two
 * dialects): the degrees and the model's fields are both cfg.model's. */
static const char *const bridge_degrees[] = {
	"tensor_model_parallel_size", "pipeline_model_parallel_size",
	"virtual_pipeline_model_parallel_size", "context_parallel_size",
	"expert_model_parallel_size", "expert_tensor_parallel_size",
	"num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage",
	"account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
	"sequence_parallel", "pipeline_model_parallel_layout",
};

static void bridge_key(const char *key, char *out, size_t len)
{
	static const struct { const char *bridge, *nemo; } prefixes[] = {
		{ "optimizer.", "optim.config." }, { "ddp.", "trainer.strategy.ddp." },
		{ "train.", "data." }, { "dataset.", "data." }, { "dist.", "trainer.strategy." },
		{ "mixed_precision.", "trainer.plugins." },
		{ "model.", "model.config." },
	};
	if (!strncmp(key, "model.", 6))
		for (size_t i = 0; i < sizeof bridge_degrees / sizeof bridge_degrees[0]; i++)
			if (!strcmp(key + 6, bridge_degrees[i])) {
				snprintf(out, len, "trainer.strategy.%s", key + 6);
				return;
			}
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t n = strlen(prefixes[i].bridge);
		if (!strncmp(key, prefixes[i].bridge, n)) {
			snprintf(out, len, "%s%s", prefixes[i].nemo, key + n);
			return;
		}
	}
	snprintf(out, len, "%s", key);
}


/* The text of GPTModelProvider(...)'s call, line by line from its "(",
 * to the ")" that closes it. */
static enum pplan_status provider_text(struct reader *r, struct nemo *nm, const char *s)
{
	size_t len = strlen(nm->provider);
	for (;; s++) {
		/* room for this character, the ',' after it and the end */
		if (len + 2 >= sizeof nm->provider)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: cfg.model = GPTModelProvider(...) is longer than pplan reads (%zu characters)",
					r->where, sizeof nm->provider - 2);
		if (!*s)
			break;
		if (*s == '(' || *s == '[')
			nm->provider_depth++;
		else if (*s == ')' || *s == ']')
			nm->provider_depth--;
		if (nm->provider_depth == 0) { /* the call's own ")" */
			strcpy(nm->provider + len, ",");
			return PPLAN_OK;
		}
		if (!(nm->provider_depth == 1 && *s == '(') && *s != ' ' && *s != '\t')
			nm->provider[len++] = *s;
	}
	nm->provider[len++] = ','; /* a line ends a keyword */
	nm->provider[len] = '\0';
	return PPLAN_OK;
}

/* GPTModelProvider's fields as the Megatron-LM arguments of the same
 * model (its TransformerConfig fields are those arguments' targets):
 * Megatron's reader then builds the model, with its checks. */
static enum pplan_status provider_flag(struct reader *r, const char *kw, const char *v,
				       char *args, size_t len)
{
	static const struct { const char *kw, *flag; } valued[] = {
		{ "num_layers", "--num-layers" }, { "hidden_size", "--hidden-size" },
		{ "ffn_hidden_size", "--ffn-hidden-size" },
		{ "num_attention_heads", "--num-attention-heads" }, { "kv_channels", "--kv-channels" },
		{ "layernorm_epsilon", "--norm-epsilon" }, { "normalization", "--normalization" },
		{ "position_embedding_type", "--position-embedding-type" },
		{ "rotary_base", "--rotary-base" }, { "rotary_percent", "--rotary-percent" },
		{ "hidden_dropout", "--hidden-dropout" }, { "attention_dropout", "--attention-dropout" },
		{ "num_moe_experts", "--num-experts" }, { "moe_router_topk", "--moe-router-topk" },
		{ "moe_router_num_groups", "--moe-router-num-groups" },
		{ "moe_router_group_topk", "--moe-router-group-topk" },
		{ "moe_router_score_function", "--moe-router-score-function" },
		{ "moe_router_topk_scaling_factor", "--moe-router-topk-scaling-factor" },
		{ "moe_ffn_hidden_size", "--moe-ffn-hidden-size" },
		{ "moe_shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size" },
		{ "num_query_groups", "--group-query-attention --num-query-groups" },
	};
	/* a boolean field and the argument that says its non-default value */
	static const struct { const char *kw, *when, *flag; } switches[] = {
		{ "share_embeddings_and_output_weights", "False", "--untie-embeddings-and-output-weights" },
		{ "add_bias_linear", "False", "--disable-bias-linear" },
		{ "add_qkv_bias", "True", "--add-qkv-bias" }, { "qk_layernorm", "True", "--qk-layernorm" },
		{ "moe_router_enable_expert_bias", "True", "--moe-router-enable-expert-bias" },
		{ "moe_router_pre_softmax", "True", "--moe-router-pre-softmax" },
	};
	size_t n = strlen(args);
	char val[96];
	py_value(v, val, sizeof val);
	for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
		if (!strcmp(kw, valued[i].kw))
			return snprintf(args + n, len - n, " %s %s", valued[i].flag, val), PPLAN_OK;
	for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
		if (!strcmp(kw, switches[i].kw)) {
			if (strcmp(val, "True") && strcmp(val, "False"))
				return perr_set(r->e, PPLAN_EINPUT,
						"%s: GPTModelProvider's %s must be True or False, got '%s'",
						r->where, kw, val);
			if (!strcmp(val, switches[i].when))
				snprintf(args + n, len - n, " %s", switches[i].flag);
			return PPLAN_OK;
		}
	if (!strcmp(kw, "moe_layer_freq"))
		return snprintf(args + n, len - n, " --moe-layer-freq (%s)", v), PPLAN_OK;
	lr_say(r, "GPTModelProvider's %s is not priced", kw);
	return PPLAN_OK;
}

/* The model of GPTModelProvider(...)'s keywords, with the tokenizer's
 * vocabulary and the data's sequence; --model, when given, must agree. */
static enum pplan_status provider_model(struct reader *r, struct nemo *nm,
					const struct model_spec *given)
{
	struct launch_job *o = r->out;
	struct launch_job mj;        /* the arguments' reading: their model */
	char args[4096] = "", where[320], act[32] = "F.gelu";
	int gated = 0, depth = 0;
	enum pplan_status st;
	char *kw = nm->provider;

	if (nm->tok_vocab <= 0 || o->seq <= 0)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: a GPTModelProvider needs cfg.tokenizer.vocab_size and cfg.dataset.seq_length: pplan reads the vocabulary and the sequence from them",
				r->where);
	for (char *c = nm->provider; *c; c++) {
		char *eq;
		if (*c == '[' || *c == '(')
			depth++;
		else if (*c == ']' || *c == ')')
			depth--;
		if (*c != ',' || depth > 0)
			continue;
		*c = '\0';
		if (*kw && !(eq = strchr(kw, '=')))
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: GPTModelProvider's '%s' is not KEY=VALUE", r->where, kw);
		if (!*kw) {
			kw = c + 1;
			continue;
		}
		*eq = '\0';
		if (!strcmp(kw, "gated_linear_unit"))
			st = nemo_bool(r, "GPTModelProvider's gated_linear_unit", eq + 1, &gated);
		else if (!strcmp(kw, "activation_func"))
			st = (snprintf(act, sizeof act, "%s", eq + 1), PPLAN_OK);
		else
			st = provider_flag(r, kw, eq + 1, args, sizeof args);
		if (st != PPLAN_OK)
			return st;
		kw = c + 1;
	}
	if ((!strcmp(act, "F.silu") && gated) || (!strcmp(act, "squared_relu") && !gated))
		snprintf(args + strlen(args), sizeof args - strlen(args), " %s",
			 gated ? "--swiglu" : "--squared-relu");
	else if (strcmp(act, "F.gelu") || gated)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: GPTModelProvider's activation_func %s%s is not one pplan prices (F.silu gated, F.gelu or squared_relu)",
				r->where, act, gated ? " gated" : "");
	snprintf(args + strlen(args), sizeof args - strlen(args), " --vocab-size %ld --seq-length %ld --bf16",
		 nm->tok_vocab, o->seq);
	snprintf(where, sizeof where, "%s (GPTModelProvider's fields)", r->where);
	if ((st = launch_read_text(EMIT_MEGATRON, args, where, NULL, &mj, r->e)) != PPLAN_OK)
		return st;
	if (given && (st = lr_same_shape(r, &mj.model, given)) != PPLAN_OK)
		return st;
	o->model = given ? *given : mj.model;
	if (!given)
		snprintf(o->model.name, sizeof o->model.name, "gpt-provider");
	if (given)
		snprintf(o->model_note, sizeof o->model_note, "--model");
	else
		snprintf(o->model_note, sizeof o->model_note, "GPTModelProvider's fields in %s", r->where);
	return PPLAN_OK;
}

static enum pplan_status bridge_line(struct reader *r, struct nemo *nm, const char *line)
{
	char key[128], nkey[160], shown[136], val[128];
	const char *p, *eq;
	static const char *const dp_overlap[] = { "overlap_grad_reduce", "overlap_param_gather" };

	while (*line == ' ' || *line == '\t')
		line++;
	if (nm->provider_depth > 0 || !strncmp(line, "cfg.model = GPTModelProvider(", 29))
		return provider_text(r, nm, nm->provider_depth > 0 ? line : line + 28);
	if (!strcmp(line, "cfg = _pretrain_common()") || !strcmp(line, "cfg = _peft_common()")) {
		snprintf(nm->recipe, sizeof nm->recipe, "%.*s", (int)strcspn(line + 6, "("), line + 6);
		if (!strcmp(nm->recipe, "_peft_common"))
			nm->peft = 0; /* no adapters until cfg.peft says them */
		return PPLAN_OK;
	}
	if (!strncmp(line, "cfg.peft = ", 11)) {
		if (!strcmp(line + 11, "None")) {
			nm->peft = 0;
		} else {
			peft_scheme(nm, !strncmp(line + 11, "LoRA(", 5) ? "lora" : line + 11);
			const char *tm = strstr(line, "target_modules=");
			if (nm->peft == 1 && tm &&
			    lora_list(r, nm, "cfg.peft = LoRA(target_modules=...)", tm + 15) != PPLAN_OK)
				return PPLAN_EINPUT;
			if (nm->peft == 1 && py_keyword(line, "dim", val, sizeof val)) {
				struct flag f = { "cfg.peft = LoRA(dim=...)", val, 0, 0 };
				return lr_get_int(r, &f, 1, &nm->lora_dim);
			}
		}
		return PPLAN_OK;
	}
	if (!strncmp(line, "cfg.tokenizer.vocab_size = ", 27)) {
		struct flag f = { "cfg.tokenizer.vocab_size", line + 27, 0, 0 };
		return lr_get_long(r, &f, 1, &nm->tok_vocab);
	}
	if (!strncmp(line, "cfg = ", 6) &&
	    ((p = strstr(line, "_pretrain_config()")) || (p = strstr(line, "_peft_config(")))) {
		size_t n = (size_t)(p - (line + 6));
		snprintf(nm->recipe, sizeof nm->recipe, "%.*s", (int)(n < 63 ? n : 63), line + 6);
		if (!strncmp(p, "_peft_config(", 13))
			peft_scheme(nm, py_keyword(line, "peft_scheme", val, sizeof val) ? val : NULL);
		return PPLAN_OK;
	}
	if (!strncmp(line, "cfg.comm_overlap = CommOverlapConfig(", 37)) {
		/* its values are the ones Bridge applies to the DDP config */
		if (py_keyword(line, "tp_comm_overlap", val, sizeof val))
			r->out->switches.tp_overlap = !strcmp(val, "True") ? FW_TPO_PIPELINED : FW_TPO_NONE;
		for (size_t i = 0; i < 2; i++) {
			enum pplan_status st;
			if (!py_keyword(line, dp_overlap[i], val, sizeof val))
				continue;
			snprintf(nkey, sizeof nkey, "trainer.strategy.ddp.%s", dp_overlap[i]);
			snprintf(shown, sizeof shown, "CommOverlapConfig's %s", dp_overlap[i]);
			if ((st = nemo_assign(r, nm, nkey, shown, val)) != PPLAN_OK)
				return st;
		}
		return PPLAN_OK;
	}
	if (strncmp(line, "cfg.", 4) != 0 || !(eq = strstr(line, " = ")))
		return PPLAN_OK;
	snprintf(key, sizeof key, "%.*s", (int)(eq - line - 4), line + 4);
	snprintf(shown, sizeof shown, "%.*s", (int)(eq - line), line);
	py_value(eq + 3, val, sizeof val);
	if (!strcmp(key, "mixed_precision"))
		return snprintf(nm->plugin, sizeof nm->plugin, "%s", val), PPLAN_OK;
	if (!strcmp(key, "ddp.use_megatron_fsdp")) {
		if (!strcmp(val, "True"))
			snprintf(nm->fsdp, sizeof nm->fsdp, "megatron");
		return PPLAN_OK;
	}
	if (!strcmp(key, "ddp.use_distributed_optimizer"))
		return PPLAN_OK; /* Bridge keeps it equal to the optimizer's */
	bridge_key(key, nkey, sizeof nkey);
	return nemo_assign(r, nm, nkey, shown, val);
}

/* A NeMo 2.0 or Megatron-Bridge recipe override (r->out->fmt). */
enum pplan_status lr_read_recipe(struct reader *r, const char *text,
				 const struct model_spec *given)
{
	const int bridge = r->out->fmt == EMIT_BRIDGE;
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	struct nemo nm = { .dist_opt = -1, .plugin_grad32 = -1, .ddp_grad32 = -1,
			   .first_last_bf16 = -1, .peft = -1, .bf16_start = -1, .bf16_end = -1 };
	enum pplan_status st;
	char what[96];

	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), s);
		st = bridge ? bridge_line(r, &nm, line) : nemo_line(r, &nm, line);
		if (st != PPLAN_OK)
			return st;
		s += n + (nl != NULL);
	}
	if (!nm.recipe[0])
		return perr_set(r->e, PPLAN_EINPUT,
				bridge ? "%s: no 'cfg = NAME_pretrain_config()' or 'cfg = NAME_peft_config(...)' line: pplan reads the recipe the override starts from"
				       : "%s: no 'recipe = llm.NAME.pretrain_recipe(...)' or 'llm.NAME.finetune_recipe(...)' line: pplan reads the recipe the override starts from",
				r->where);
	if (nm.peft == 2)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: the PEFT scheme '%s' is not priced (pplan prices LoRA and full training)",
				r->where, nm.scheme);
	if (bridge && (nm.provider[0] || nm.recipe[0] == '_')) {
		if (!nm.provider[0])
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: cfg = %s() and no cfg.model = GPTModelProvider(...): the file defines no model",
					r->where, nm.recipe);
		st = provider_model(r, &nm, given);
	} else {
		const char *zoo = NULL;
		int known = bridge ? emit_bridge_recipe(nm.recipe, &zoo) == 0
				   : emit_nemo_recipe(nm.recipe, &zoo) == 0;
		if (bridge)
			snprintf(what, sizeof what, "the recipe %s_%s_config", nm.recipe,
				 nm.peft >= 0 ? "peft" : "pretrain");
		else
			snprintf(what, sizeof what, "the recipe llm.%s", nm.recipe);
		if (!known && !given)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: %s is not a %s recipe pplan knows: give the model with --model NAME|FILE",
					r->where, what + 11, bridge ? "Megatron-Bridge" : "NeMo");
		st = lr_named_model(r, zoo, what, given);
	}
	if (st != PPLAN_OK)
		return st;
	if (l->etp == l->tp)
		l->etp = 0; /* experts split like the rest: pplan's canonical etp */
	if (nm.pp_layout[0]) { /* its MTP layers are said by mtp_num_layers */
		struct pp_layout pl;
		st = lr_pp_layout(r, "pipeline_model_parallel_layout", nm.pp_layout, o->model.layers, 0,
				  &pl);
		if (st != PPLAN_OK)
			return st;
	}
	/* MTP layers the layout counts as layers are priced so (launch_read_text) */
	if (nm.mtp[0] && !o->mtp_layers)
		lr_say(r, "%s: pplan prices no multi-token-prediction layer", nm.mtp);
	snprintf(o->framework, sizeof o->framework, bridge ? "megatron-bridge" : "nemo");
	if (nm.peft == 1) {
		o->lora_rank = nm.lora_dim > 0 ? nm.lora_dim : LORA_DEFAULT_RANK;
		if (!nm.lora_dim)
			lr_say(r, "LoRA without a dim the file sets: rank %d, LoRA's default (the recipe's own dim is not read)",
			       LORA_DEFAULT_RANK);
		o->lora_targets = nm.lora_targets;
		if (!nm.lora_targets)
			lr_say(r, "LoRA without the target_modules the file sets: LoRA's default (linear_qkv, linear_proj, linear_fc1, linear_fc2; the recipe's own are not read)");
	}
	if (nm.pack > 0) { /* a pack is the microbatch's sequence */
		if (o->seq && o->seq != nm.pack)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: packs of %ld tokens and a seq_length of %ld: pplan prices one pack a sequence, so they must agree",
					r->where, nm.pack, o->seq);
		o->seq = nm.pack;
		lr_say(r, "packed sequences of %ld tokens, each priced as one sequence (its attention over the whole pack: an upper bound where a pack holds several)",
		       nm.pack);
	}
	/* NeMo's plugins and Bridge's mixed-precision names: *fp8* by their
	 * scaling (bf16_with_fp8_mixed is NeMo's delayed scaling), fp16*, the
	 * rest bf16 */
	snprintf(o->precision, sizeof o->precision, "%s",
		 strstr(nm.plugin, "nvfp4") || (nm.fp4[0] && strcmp(nm.fp4, "None")) ? "nvfp4"
		 : strstr(nm.plugin, "mxfp8") ? "mxfp8"
		 : strstr(nm.plugin, "fp8_current_scaling") ? "fp8-tensorwise"
		 : strstr(nm.plugin, "fp8_subchannel") || strstr(nm.plugin, "fp8_blockwise") ? "fp8-blockwise"
		 : strstr(nm.plugin, "fp8") ? "fp8-delayed"
		 : !strncmp(nm.plugin, "fp16", 4) ? "fp16" : "bf16");
	if (nm.granularity[0]) {
		o->set |= LK_RECOMPUTE;
		l->recompute = !strcmp(nm.granularity, "selective") ? RECOMPUTE_SELECTIVE
			       : !strcmp(nm.granularity, "full") ? RECOMPUTE_FULL : RECOMPUTE_NONE;
	}
	if (l->recompute != RECOMPUTE_SELECTIVE)
		o->set &= ~LK_RECOMPUTE_MODULES;
	if (l->recompute == RECOMPUTE_FULL && !strcmp(nm.method, "block")) {
		l->recompute_layers = nm.recompute_layers > 0 ? nm.recompute_layers : 1;
		o->set |= LK_RECOMPUTE_LAYERS;
	}
	if (!nm.cpu_offloading) {
		l->offload_layers = 0;
		o->set &= ~LK_OFFLOAD_LAYERS;
	}
	/* the precision plugin sets the DDP config's reduction dtype: its
	 * own value, else its default (fp32 but for fp16_mixed) */
	if (nm.plugin_grad32 >= 0)
		o->switches.grad_bytes = nm.plugin_grad32 ? 4 : 2;
	else if (nm.plugin[0])
		o->switches.grad_bytes = !strncmp(nm.plugin, "fp16", 4) ? 2 : 4;
	else if (nm.ddp_grad32 >= 0)
		o->switches.grad_bytes = nm.ddp_grad32 ? 4 : 2;
	/* the end layers kept in bf16 (first_last_layers_bf16): the
	 * current-scaling configs' own default keeps the first and the last
	 * (1 and 1), the counts' default elsewhere is 0; priced, in an
	 * fp8-class run */
	if (strncmp(o->precision, "bf16", 4) && strncmp(o->precision, "fp16", 4) &&
	    nm.first_last_bf16 != 0 &&
	    (nm.first_last_bf16 > 0 || strstr(nm.plugin, "fp8_current_scaling"))) {
		int cs = strstr(nm.plugin, "fp8_current_scaling") != NULL;
		o->bf16_given = 1;
		o->bf16_first = nm.bf16_start >= 0 ? (int)nm.bf16_start : cs;
		o->bf16_last = nm.bf16_end >= 0 ? (int)nm.bf16_end : cs;
		lr_say(r, "%s keeps the first %d and the last %d transformer layers in bf16 (first_last_layers_bf16%s), priced so",
		       nm.plugin[0] ? nm.plugin : "the mixed-precision config", o->bf16_first,
		       o->bf16_last, nm.first_last_bf16 > 0 ? "" : ", the config's default");
	}
	if (!nm.fine_grained_offloading) {
		l->offload_modules = 0;
		o->set &= ~LK_OFFLOAD;
	}
	lr_precision_aware(r, nm.precision_aware, nm.exp_avg[0] ? nm.exp_avg : NULL,
			   nm.exp_avg_sq[0] ? nm.exp_avg_sq : NULL);
	if (!strcmp(nm.fsdp, "megatron"))
		o->zero = !strcmp(nm.shard, "optim_grads") ? 2 : 3;
	else if (nm.dist_opt >= 0)
		o->zero = nm.dist_opt;
	if (l->pp > 1) {
		l->schedule = l->vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
		o->set |= LK_SCHEDULE;
	}
	return PPLAN_OK;
}
