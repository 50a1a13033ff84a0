/*
 * test_launch_read.c: Megatron-LM's arguments define the model pplan
 * priced.  Every zoo model's arguments, as --emit megatron writes them,
 * read back (reports/launch_read.c) into the same architecture: every
 * field Megatron-LM has a flag for, and the same parameter count, which
 * model.c computes from the fields (so a lost flag shows as a different
 * count).  What Megatron-Core has no flag for is named: GeGLU, ReLU, ALiBi,
 * and GPT-OSS's attention sinks and biases; those models are checked on
 * the rest.  Hand-written arguments take Megatron-LM's own defaults
 * (argparse defaults of megatron/training/arguments.py: ffn 4h, or
 * 4h x 2/3 rounded down to a multiple of 64 with --swiglu; learned
 * absolute positions; dropout 0.1; top-2 routing).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "emit.h"
#include "launch_read.h"
#include "train_opts.h"

/* The Megatron arguments of model m on one GPU. */
static char *emitted(const struct model_spec *m)
{
	struct cluster c;
	struct layout l;
	struct train_opts o;
	struct perr e = { { 0 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(cluster_preset("dgx-h100", 8, &c, &e) == PPLAN_OK, "%s", e.msg);
	layout_default(&l);
	l.gbs = 8;
	train_opts_default(&o, m);
	cr_assert(f);
	emit_config(f, NULL, EMIT_MEGATRON, &(struct emit_input){ .m = m, .c = &c, .l = &l, .o = &o });
	fclose(f);
	return buf;
}

/* Megatron-Core has no flag for these: the model read back lacks them. */
static int inexpressible(const struct model_spec *m)
{
	return m->mlp == MLP_GEGLU || m->mlp == MLP_RELU || m->alibi || m->attn_sinks || m->attn_bias || m->mlp_bias ||
	       m->moe_bias || (m->norms_per_layer && m->norms_per_layer != 2);
}

Test(launch_read, every_zoo_model_reads_back_from_its_megatron_arguments)
{
	int n, exact = 0;
	const struct model_spec *z = model_zoo(&n);
	for (int i = 0; i < n; i++) {
		const struct model_spec *m = &z[i];
		struct launch_job lj;
		struct perr e = { { 0 } };
		char *text = emitted(m);
		const struct model_spec *r = &lj.model;
		cr_assert(launch_read_text(EMIT_MEGATRON, text, "args", NULL, &lj, &e) == PPLAN_OK,
			  "%s: %s", m->name, e.msg);
		free(text);
		cr_expect_eq(r->layers, m->layers, "%s layers", m->name);
		cr_expect_eq(r->hidden, m->hidden, "%s hidden", m->name);
		cr_expect_eq(r->ffn, m->ffn, "%s ffn", m->name);
		cr_expect_eq(r->heads, m->heads, "%s heads", m->name);
		cr_expect_eq(r->kv_heads, m->kv_heads, "%s kv heads", m->name);
		cr_expect_eq(r->head_dim, m->head_dim > 0 ? m->head_dim : m->hidden / m->heads,
			     "%s head dim", m->name);
		cr_expect_eq(r->vocab, m->vocab, "%s vocab", m->name);
		cr_expect_eq(r->seq, m->seq, "%s seq", m->name);
		cr_expect_eq(r->norm, m->norm, "%s norm", m->name);
		cr_expect_eq(r->tied_embeddings, m->tied_embeddings, "%s tied", m->name);
		cr_expect_eq(r->no_dropout, m->no_dropout, "%s dropout", m->name);
		cr_expect_eq(r->qk_norm, m->qk_norm, "%s qk norm", m->name);
		cr_expect_eq(r->qkv_bias, m->qkv_bias, "%s qkv bias", m->name);
		cr_expect_eq(r->num_experts, m->num_experts, "%s experts", m->name);
		cr_expect_eq(r->top_k, m->top_k, "%s top k", m->name);
		cr_expect_eq(r->route_groups, m->route_groups, "%s routing groups", m->name);
		cr_expect_eq(r->route_topk_groups, m->route_topk_groups, "%s a token's groups",
			     m->name);
		cr_expect_eq(r->router_sigmoid, m->router_sigmoid, "%s sigmoid router", m->name);
		cr_expect_eq(r->router_expert_bias, m->router_expert_bias, "%s expert bias", m->name);
		cr_expect_eq(r->router_pre_softmax, m->router_pre_softmax, "%s pre-softmax", m->name);
		cr_expect_eq(r->router_scale, m->router_scale, "%s top-k scale", m->name);
		cr_expect_eq(model_moe_layers(r), model_moe_layers(m), "%s MoE layers", m->name);
		cr_expect_eq(model_is_mla(r), model_is_mla(m), "%s MLA", m->name);
		cr_expect_eq(r->kv_lora_rank, m->kv_lora_rank, "%s kv lora rank", m->name);
		cr_expect_eq(r->q_lora_rank, m->q_lora_rank, "%s q lora rank", m->name);
		cr_expect_str_eq(r->rope_scaling, m->rope_scaling, "%s rope scaling", m->name);
		/* Nemotron-H's attention takes no positions (the Mamba-2 layers
		 * order the tokens): emitted as none, no base to read back */
		if (!m->pos_embedding && !m->alibi && !strchr(m->mixers, 'M'))
			cr_expect_eq(r->rope_theta, m->rope_theta > 0 ? m->rope_theta : 10000.0,
				     "%s rope base", m->name);
		if (m->mlp != MLP_GEGLU && m->mlp != MLP_RELU)
			cr_expect_eq(r->mlp, m->mlp, "%s activation", m->name);
		if (inexpressible(m))
			continue;
		cr_expect_eq(r->linear_bias, m->linear_bias, "%s biases", m->name);
		cr_expect_eq(r->pos_embedding, m->pos_embedding, "%s positions", m->name);
		cr_expect_eq(model_params_total(r), model_params_total(m), "%s: %.0f parameters read back, %.0f priced",
			     m->name, model_params_total(r), model_params_total(m));
		cr_expect_eq(model_params_active(r), model_params_active(m), "%s active", m->name);
		exact++;
	}
	/* all but grok1 (GeGLU), opt-175b (ReLU), bloom and bloomberggpt
	 * (ALiBi) and the two GPT-OSS (sinks, biases); qwen2-57b's
	 * shared-expert gate has --moe-shared-expert-gate */
	cr_expect_geq(exact, n - 6, "%d of %d zoo models read back whole", exact, n);
}

/* GPT-NeoX's attention and MLP run side by side on one residual, which
 * Megatron-Core's layers cannot: its arguments say they build sequential
 * layers; a sequential model's say nothing of it. */
Test(launch_read, parallel_block_said)
{
	char *neox = emitted(model_find("gpt-neox-20b")), *llama = emitted(model_find("llama3-8b"));
	cr_expect(strstr(neox, "side by side on one residual") != NULL, "%s", neox);
	cr_expect(strstr(llama, "side by side") == NULL);
	free(neox);
	free(llama);
}

/* A hand-written Megatron-LM command line takes Megatron-LM's defaults. */
Test(launch_read, megatron_defaults_for_what_the_arguments_leave_out)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *args =
		"torchrun --nproc-per-node 8 --nnodes 4 pretrain_gpt.py \\\n"
		"  --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --swiglu\n"
		"  --vocab-size 50304 --seq-length 2048 --micro-batch-size 2 --bf16\n"
		"  --num-experts 8 --tensor-model-parallel-size 2 --sequence-parallel\n";
	cr_assert(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	/* 4h x 2/3 = 5461.33, rounded down to a multiple of 64: 5440 */
	cr_expect_eq(lj.model.ffn, 5440);
	cr_expect_eq(lj.model.kv_heads, 16);
	cr_expect_eq(lj.model.pos_embedding, 2048, "learned absolute positions, 2048 rows");
	cr_expect_eq(lj.model.no_dropout, 0, "dropout 0.1");
	cr_expect_eq(lj.model.top_k, 2);
	cr_expect_eq(lj.model.tied_embeddings, 1);
	cr_expect_eq(lj.model.linear_bias, 1);
	cr_expect_eq(lj.l.tp, 2);
	cr_expect_eq(lj.l.mbs, 2);
	cr_expect_eq(lj.l.sp, 1);
	cr_expect_eq(lj.zero, 0, "no distributed optimizer");
	cr_expect_eq(lj.switches.overlap_grad_reduce, 0);
	cr_expect_eq(lj.switches.tp_overlap, FW_TPO_NONE);
	cr_expect_eq(lj.switches.grad_bytes, 4);
	cr_expect_eq(lj.nodes, 4);
	cr_expect_eq(lj.gpus_per_node, 8);
	cr_expect(!(lj.set & LK_GBS), "no global batch: the caller's Megatron default");
	cr_expect_eq(lj.n_notes, 1, "the dispatcher (allgather by default) is said");
	cr_expect_eq(lj.switches.moe_dispatcher, 2, "and priced: Megatron-LM's allgather");
}

/* A Megatron-Bridge override as a team writes it (not as --emit does):
 * the recipe names the model, cfg.model carries the degrees, cfg.train
 * the batch; CommOverlapConfig's DP overlap and the mixed-precision
 * recipe's reduction dtype win over cfg.ddp's, as Bridge applies them
 * (training/comm_overlap.py and mixed_precision.py, setup). */
Test(launch_read, bridge_override)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *py =
		"import torch\n"
		"from megatron.bridge.recipes.qwen import qwen3_30b_a3b_pretrain_config\n"
		"cfg = qwen3_30b_a3b_pretrain_config()\n"
		"cfg.model.tensor_model_parallel_size = 2\n"
		"cfg.model.pipeline_model_parallel_size = 2\n"
		"cfg.model.virtual_pipeline_model_parallel_size = 3\n"
		"cfg.model.expert_model_parallel_size = 4\n"
		"cfg.model.sequence_parallel = True\n"
		"cfg.model.moe_token_dispatcher_type = 'flex'\n"
		"cfg.model.recompute_granularity = 'full'\n"
		"cfg.model.recompute_method = 'block'\n"
		"cfg.model.recompute_num_layers = 3\n"
		"cfg.train.micro_batch_size = 2\n"
		"cfg.train.global_batch_size = 512\n"
		"cfg.dataset.seq_length = 4096\n"
		"cfg.optimizer.use_distributed_optimizer = True\n"
		"cfg.ddp.grad_reduce_in_fp32 = False\n"
		"cfg.ddp.overlap_grad_reduce = False\n"
		"cfg.dist.use_tp_pp_dp_mapping = True\n"
		"cfg.mixed_precision = 'bf16_with_fp8_delayed_scaling_mixed'\n"
		"cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False, overlap_grad_reduce=True)\n";
	cr_assert(launch_read_text(EMIT_BRIDGE, py, "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(lj.model.name, "qwen3-30b-a3b");
	cr_expect_str_eq(lj.framework, "megatron-bridge");
	cr_expect_eq(lj.l.tp, 2);
	cr_expect_eq(lj.l.pp, 2);
	cr_expect_eq(lj.l.vp, 3);
	cr_expect_eq(lj.l.ep, 4);
	cr_expect_eq(lj.l.sp, 1);
	cr_expect_eq(lj.l.schedule, SCHED_INTERLEAVED);
	cr_expect_eq(lj.l.recompute, RECOMPUTE_FULL);
	cr_expect_eq(lj.l.recompute_layers, 3);
	cr_expect_eq(lj.l.mbs, 2);
	cr_expect_eq(lj.l.gbs, 512);
	cr_expect_eq(lj.seq, 4096);
	cr_expect_eq(lj.zero, 1);
	cr_expect_eq(lj.switches.grad_bytes, 4, "the mixed-precision recipe's fp32 reduction, not cfg.ddp's");
	cr_expect_eq(lj.switches.overlap_grad_reduce, 1, "CommOverlapConfig's value, not cfg.ddp's");
	cr_expect_eq(lj.switches.tp_overlap, FW_TPO_NONE);
	cr_expect_eq(lj.switches.moe_dispatcher, 1, "flex");
	cr_expect_str_eq(lj.order, "tp-cp-pp-dp");
	cr_expect_str_eq(lj.precision, "fp8-delayed", "bf16_with_fp8_delayed_scaling_mixed");
	/* a recipe pplan does not know needs the model */
	cr_expect_eq(launch_read_text(EMIT_BRIDGE, "cfg = kimi_k2_pretrain_config()\n", "cfg.py", NULL,
				      &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "--model"), "%s", e.msg);
	cr_expect_eq(launch_read_text(EMIT_BRIDGE, "cfg = kimi_k2_pretrain_config()\n", "cfg.py",
				      model_find("llama3-8b"), &lj, &e), PPLAN_OK, "%s", e.msg);
}

/* Fine-tuning recipes: NeMo's finetune_recipe (LoRA unless peft_scheme
 * says otherwise) and Bridge's NAME_peft_config / _peft_common with
 * cfg.peft; the LoRA dim is the rank, a pack the priced sequence. */
Test(launch_read, fine_tuning_recipes)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	cr_assert(launch_read_text(EMIT_NEMO,
				   "recipe = llm.llama3_70b.finetune_recipe(name='x', num_nodes=2, num_gpus_per_node=8, packed_sequence=True)\n"
				   "recipe.peft.dim = 16\n"
				   "recipe.data.packed_sequence_specs.packed_sequence_size = 8192\n",
				   "r.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(lj.model.name, "llama3-70b");
	cr_expect_eq(lj.lora_rank, 16, "LoRA: finetune_recipe's default scheme");
	cr_expect_eq(lj.seq, 8192, "the pack");
	cr_expect_eq(lj.nodes * lj.gpus_per_node, 16);
	cr_assert(launch_read_text(EMIT_NEMO,
				   "recipe = llm.llama3_8b.finetune_recipe(num_nodes=1, peft_scheme=None)\n",
				   "r.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_rank, 0, "peft_scheme=None trains every weight");
	cr_assert(launch_read_text(EMIT_NEMO, "recipe = llm.llama3_8b.finetune_recipe(peft_scheme='lora')\n",
				   "r.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_rank, LORA_DEFAULT_RANK, "no dim said: LoRA's default");
	cr_expect_eq(launch_read_text(EMIT_NEMO, "recipe = llm.llama3_8b.finetune_recipe(peft_scheme='dora')\n",
				      "r.py", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "'dora' is not priced"), "%s", e.msg);
	cr_expect_eq(launch_read_text(EMIT_NEMO,
				      "recipe = llm.llama3_8b.finetune_recipe()\n"
				      "recipe.data.seq_length = 4096\n"
				      "recipe.data.packed_sequence_specs.packed_sequence_size = 2048\n",
				      "r.py", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "must agree"), "%s", e.msg);

	cr_assert(launch_read_text(EMIT_BRIDGE,
				   "cfg = qwen3_30b_a3b_peft_config(peft_scheme=\"lora\")\n"
				   "cfg.peft.dim = 8\n"
				   "cfg.dataset.packed_sequence_specs.packed_sequence_size = 4096\n",
				   "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(lj.model.name, "qwen3-30b-a3b");
	cr_expect_eq(lj.lora_rank, 8);
	cr_expect_eq(lj.seq, 4096);
	cr_assert(launch_read_text(EMIT_BRIDGE,
				   "cfg = _peft_common()\n"
				   "cfg.model = GPTModelProvider(num_layers=2, hidden_size=64, ffn_hidden_size=256, num_attention_heads=4)\n"
				   "cfg.tokenizer.vocab_size = 500\n"
				   "cfg.model.seq_length = 128\n",
				   "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_rank, 0, "the common PEFT defaults have no adapters");
	cr_assert(launch_read_text(EMIT_BRIDGE,
				   "cfg = _peft_common()\n"
				   "cfg.model = GPTModelProvider(num_layers=2, hidden_size=64, ffn_hidden_size=256, num_attention_heads=4)\n"
				   "cfg.tokenizer.vocab_size = 500\n"
				   "cfg.model.seq_length = 128\n"
				   "cfg.peft = LoRA(dim=4, alpha=8)\n",
				   "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_rank, 4);
	cr_expect_eq(lj.lora_targets, 0, "no target_modules said: LoRA's default");
	/* the linears adapted, as target_modules lists them */
	cr_assert(launch_read_text(EMIT_BRIDGE,
				   "cfg = llama31_405b_peft_config(peft_scheme=\"lora\")\n"
				   "cfg.peft.target_modules = [\"linear_qkv\", 'linear_proj']\n",
				   "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_targets, LORA_QKV | LORA_PROJ);
	cr_assert(launch_read_text(EMIT_BRIDGE,
				   "cfg = _peft_common()\n"
				   "cfg.model = GPTModelProvider(num_layers=2, hidden_size=64, ffn_hidden_size=256, num_attention_heads=4)\n"
				   "cfg.tokenizer.vocab_size = 500\n"
				   "cfg.model.seq_length = 128\n"
				   "cfg.peft = LoRA(target_modules=[\"linear_fc1\", \"linear_fc2\"], dim=4)\n",
				   "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_targets, LORA_FC1 | LORA_FC2, "LoRA(target_modules=[...]) on one line");
	cr_expect_eq(lj.lora_rank, 4, "the dim after the list");
	cr_assert(launch_read_text(EMIT_NEMO,
				   "recipe = llm.deepseek_v3.finetune_recipe(peft_scheme='lora')\n"
				   "recipe.peft.target_modules = ['linear_q_down_proj', 'linear_q_up_proj', 'linear_kv_down_proj', 'linear_kv_up_proj', 'linear_proj']\n",
				   "r.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.lora_targets, LORA_Q_DOWN | LORA_Q_UP | LORA_KV_DOWN | LORA_KV_UP | LORA_PROJ,
		     "NeMo's DeepSeek-V3 list");
	cr_expect_eq(launch_read_text(EMIT_NEMO,
				      "recipe = llm.llama3_8b.finetune_recipe(peft_scheme='lora')\n"
				      "recipe.peft.target_modules = ['*.layers.0.*.linear_qkv']\n",
				      "r.py", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "by pattern (some layers only)"), "%s", e.msg);
	cr_expect_eq(launch_read_text(EMIT_NEMO,
				      "recipe = llm.llama3_8b.finetune_recipe(peft_scheme='lora')\n"
				      "recipe.peft.target_modules = ['linear_qkv', 'router']\n",
				      "r.py", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "names 'router'"), "%s", e.msg);
}

/* Notes past what a job keeps are counted, not lost without a word: 14
 * notes keep the first 11 and say the other 3 were left out. */
Test(launch_read, notes_overflow)
{
	static struct launch_job lj;
	for (int i = 0; i < 14; i++)
		launch_job_note(&lj, "note %d", i);
	cr_expect_eq(lj.n_notes, LAUNCH_MAX_NOTES);
	cr_expect_str_eq(lj.notes[LAUNCH_MAX_NOTES - 2], "note 10");
	cr_expect_str_eq(lj.notes[LAUNCH_MAX_NOTES - 1], "3 further notes left out (pplan keeps 11)");
}

/* A model without a recipe, as Megatron-Bridge's GPTModelProvider on one
 * line: Megatron-Core's defaults (GeLU, LayerNorm, learned absolute
 * positions of the sequence's length, biases, tied embeddings).  By
 * hand: 12 L h^2 + 13 L h (layers) + V h + S h (embeddings) + 2 h (final
 * norm) = 98,304 + 1,664 + 64,000 + 8,192 + 128 = 172,288. */
Test(launch_read, bridge_provider)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *py =
		"cfg = _pretrain_common()\n"
		"cfg.model = GPTModelProvider(num_layers=2, hidden_size=64, num_attention_heads=4,\n"
		"                             ffn_hidden_size=256, hidden_dropout=0.0)\n"
		"cfg.tokenizer.vocab_size = 1000\n"
		"cfg.dataset.seq_length = 128\n";
	cr_assert(launch_read_text(EMIT_BRIDGE, py, "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.model.layers, 2);
	cr_expect_eq(lj.model.hidden, 64);
	cr_expect_eq(lj.model.vocab, 1000);
	cr_expect_eq(lj.model.pos_embedding, 128);
	cr_expect_eq(lj.model.mlp, MLP_GELU);
	cr_expect_eq(lj.model.norm, NORM_LAYERNORM);
	cr_expect_eq(model_params_total(&lj.model), 172288.0);
}

/* A recipe's stages as NVIDIA's recipes write them: a layout string (80
 * layers over pp 8: 9, six of 10, 11), the fields it replaces left None,
 * an MTP layer pplan does not price (said). */
Test(launch_read, bridge_layout_string_and_mtp)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *py =
		"cfg = llama3_70b_pretrain_config()\n"
		"cfg.model.pipeline_model_parallel_size = 8\n"
		"cfg.model.pipeline_model_parallel_layout = \"Et*9|(t*10|)*6t*11L\"\n"
		"cfg.model.num_layers_in_first_pipeline_stage = None\n"
		"cfg.model.num_layers_in_last_pipeline_stage = None\n"
		"cfg.model.mtp_num_layers = 1\n"
		"cfg.train.global_batch_size = 64\n";
	cr_assert(launch_read_text(EMIT_BRIDGE, py, "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.l.pp, 8);
	cr_expect_eq(lj.l.vp, 1);
	cr_expect_eq(lj.l.pp_first, 9);
	cr_expect_eq(lj.l.pp_last, 11);
	cr_expect_eq(lj.n_notes, 1);
	cr_expect(strstr(lj.notes[0], "multi-token-prediction"), "%s", lj.notes[0]);
	/* a string whose layers are not the model's */
	cr_expect_eq(launch_read_text(EMIT_BRIDGE,
				      "cfg = llama3_70b_pretrain_config()\n"
				      "cfg.model.pipeline_model_parallel_size = 8\n"
				      "cfg.model.pipeline_model_parallel_layout = \"Et*9|(t*10|)*6t*10L\"\n",
				      "cfg.py", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "places 79 transformer layers, the model has 80"), "%s", e.msg);
}

/* torchtitan's stage count: layers + first- and last-stage weights over
 * layers_per_stage, rounded up (pipeline_parallel.py); 2 stages a rank
 * for a multi-stage schedule that gives none. */
Test(launch_read, torchtitan_stages)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	cr_assert(launch_read_text(EMIT_TORCHTITAN,
				   "torchrun -m torchtitan.train --module llama3 --config llama3_8b "
				   "--parallelism.pipeline_parallel_degree 4 "
				   "--parallelism.pipeline_parallel_schedule Interleaved1F1B "
				   "--parallelism.pipeline_parallel_layers_per_stage 2 "
				   "--parallelism.pipeline_parallel_first_stage_less_layers 0 "
				   "--parallelism.pipeline_parallel_last_stage_less_layers 0",
				   "line", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.l.vp, 4, "32 layers / 2 = 16 stages over 4 ranks");
	cr_expect_eq(lj.model.layers, 32);
	cr_expect_eq(lj.zero, 2, "FSDP with pipelining: torchtitan's default keeps the weights after the forward");
	cr_assert(launch_read_text(EMIT_TORCHTITAN,
				   "--module llama3 --config llama3_8b --parallelism.pipeline_parallel_degree 4 "
				   "--parallelism.pipeline_parallel_schedule Interleaved1F1B",
				   "line", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.l.vp, 2);
	/* 32 + 1 + 1 = 34 units do not split over 8 stages: torchtitan splits
	 * unevenly, pplan prices 32 layers evenly and says so */
	cr_expect_eq(lj.l.pp_embed, 0);
	cr_expect_eq(lj.n_notes, 2, "the uneven split and the recomputation left to the config");
	cr_assert(launch_read_text(EMIT_TORCHTITAN,
				   "--module llama3 --config llama3_8b --parallelism.pipeline_parallel_degree 2",
				   "line", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.l.vp, 1);
	cr_expect(lj.l.pp_embed && lj.l.pp_loss, "torchtitan's default: the embedding and the loss count as layers (34 = 2 x 17)");
}

Test(launch_read, shell_quoting)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	cr_assert(launch_read_text(EMIT_MEGATRON,
				   "ARGS=( --num-layers 61 --hidden-size 7168 --num-attention-heads 128 "
				   "--vocab-size 129280 --seq-length 4096 --bf16 --num-experts 256 "
				   "--moe-layer-freq \"([0]*3+[1]*58)\" # three dense layers\n"
				   "--moe-router-topk '8' ) ; echo done",
				   "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.model.dense_layers, 3);
	cr_expect_eq(model_moe_layers(&lj.model), 58);
	cr_expect_eq(lj.model.top_k, 8);
	cr_expect_neq(launch_read_text(EMIT_MEGATRON, "--num-layers \"32", "args", NULL, &lj, &e),
		      PPLAN_OK);
	cr_expect(strstr(e.msg, "quote is not closed"), "%s", e.msg);
}

/* Group-limited routing: read, one group taken as no limit, and groups
 * that do not divide the experts refused as Megatron-Core refuses them. */
Test(launch_read, megatron_group_limited_routing)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *base = "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
			   "--vocab-size 32000 --seq-length 4096 --bf16 --num-experts 64 "
			   "--moe-router-topk 8 ";
	char args[512];
	snprintf(args, sizeof args, "%s--moe-router-num-groups 8 --moe-router-group-topk 4", base);
	cr_assert(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e) == PPLAN_OK, "%s",
		  e.msg);
	cr_expect_eq(lj.model.route_groups, 8);
	cr_expect_eq(lj.model.route_topk_groups, 4);
	snprintf(args, sizeof args, "%s--moe-router-num-groups 1 --moe-router-group-topk 1", base);
	cr_assert(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e) == PPLAN_OK, "%s",
		  e.msg);
	cr_expect_eq(lj.model.route_groups, 0, "one group: no limit");
	snprintf(args, sizeof args, "%s--moe-router-num-groups 6 --moe-router-group-topk 2", base);
	cr_expect_eq(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "divide the 64 experts"), "%s", e.msg);
}

/* The fp8 recipe as each launch names it: Megatron-LM's --fp8-recipe
 * (delayed where only --fp8-format is given, its default), NeMo's and
 * Megatron-Bridge's mixed-precision configs; each reads back as the
 * precision name whose recipe fp8_recipe_of gives, and a recipe Megatron
 * does not have is refused. */
Test(launch_read, fp8_recipes)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	static const struct { const char *flags, *want; enum fp8_recipe r; } meg[] = {
		{ "--fp8-format hybrid", "fp8-delayed", FP8_DELAYED },
		{ "--fp8-format hybrid --fp8-recipe tensorwise", "fp8-tensorwise", FP8_TENSORWISE },
		{ "--fp8-format hybrid --fp8-recipe blockwise", "fp8-blockwise", FP8_BLOCKWISE },
		{ "--fp8-format e4m3 --fp8-recipe mxfp8", "mxfp8", FP8_MXFP8 },
		{ "--fp4-format e2m1 --fp4-recipe nvfp4", "nvfp4", FP8_NVFP4 },
		{ "--fp4-format e2m1", "nvfp4", FP8_NVFP4 },
	};
	static const struct { const char *name, *want; } bridge[] = {
		{ "bf16_with_fp8_delayed_scaling_mixed", "fp8-delayed" },
		{ "bf16_with_fp8_current_scaling_mixed", "fp8-tensorwise" },
		{ "bf16_with_fp8_subchannel_scaling_mixed", "fp8-blockwise" },
		{ "bf16_with_mxfp8_mixed", "mxfp8" },
		{ "bf16_with_nvfp4_mixed", "nvfp4" },
		{ "bf16_mixed", "bf16" },
	};
	char args[512];
	for (size_t i = 0; i < sizeof meg / sizeof meg[0]; i++) {
		snprintf(args, sizeof args, "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
			 "--vocab-size 32000 --seq-length 4096 --bf16 %s", meg[i].flags);
		cr_assert(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e) == PPLAN_OK,
			  "%s", e.msg);
		cr_expect_str_eq(lj.precision, meg[i].want, "%s", meg[i].flags);
		cr_expect_eq(fp8_recipe_of(lj.precision), meg[i].r, "%s", meg[i].flags);
	}
	cr_expect_eq(launch_read_text(EMIT_MEGATRON,
				      "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
				      "--vocab-size 32000 --bf16 --fp8-format hybrid --fp8-recipe fp4",
				      "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "delayed, tensorwise, blockwise or mxfp8"), "%s", e.msg);
	/* Megatron-Core trains in fp4 or fp8, not both */
	cr_expect_eq(launch_read_text(EMIT_MEGATRON,
				      "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
				      "--vocab-size 32000 --seq-length 4096 --bf16 --fp8-format hybrid "
				      "--fp4-format e2m1",
				      "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "both --fp4-format and --fp8-format"), "%s", e.msg);
	/* The end layers in bf16: Megatron's flag with its counts (1 and 1
	 * by default), Bridge's config fields */
	cr_assert(launch_read_text(EMIT_MEGATRON,
				   "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
				   "--vocab-size 32000 --seq-length 4096 --bf16 --fp8-format hybrid "
				   "--fp8-recipe tensorwise --first-last-layers-bf16",
				   "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect(lj.bf16_given && lj.bf16_first == 1 && lj.bf16_last == 1, "%d %d %d",
		  lj.bf16_given, lj.bf16_first, lj.bf16_last);
	cr_assert(launch_read_text(EMIT_MEGATRON,
				   "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
				   "--vocab-size 32000 --seq-length 4096 --bf16 --fp4-format e2m1 "
				   "--first-last-layers-bf16 --num-layers-at-start-in-bf16 0 "
				   "--num-layers-at-end-in-bf16 3",
				   "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect(lj.bf16_first == 0 && lj.bf16_last == 3, "%d %d", lj.bf16_first, lj.bf16_last);
	cr_assert(launch_read_text(EMIT_BRIDGE,
				   "cfg = llama3_8b_pretrain_config()\n"
				   "cfg.mixed_precision = bf16_with_nvfp4_mixed()\n"
				   "cfg.mixed_precision.first_last_layers_bf16 = True\n"
				   "cfg.mixed_precision.num_layers_at_end_in_bf16 = 4\n",
				   "cfg.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect(lj.bf16_given && lj.bf16_first == 0 && lj.bf16_last == 4, "%d %d %d",
		  lj.bf16_given, lj.bf16_first, lj.bf16_last);
	/* NeMo 2.0 has no NVFP4 config: its bf16 plugin with the fp4 field */
	cr_assert(launch_read_text(EMIT_NEMO,
				   "recipe = llm.llama3_8b.pretrain_recipe(name=\"x\", num_nodes=1, num_gpus_per_node=8)\n"
				   "recipe.trainer.plugins = bf16_mixed()\n"
				   "recipe.trainer.plugins.fp4 = \"e2m1\"\n",
				   "recipe.py", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(lj.precision, "nvfp4");
	for (size_t i = 0; i < sizeof bridge / sizeof bridge[0]; i++) {
		snprintf(args, sizeof args, "cfg = llama3_8b_pretrain_config()\n"
			 "cfg.mixed_precision = '%s'\n", bridge[i].name);
		cr_assert(launch_read_text(EMIT_BRIDGE, args, "cfg.py", NULL, &lj, &e) == PPLAN_OK,
			  "%s: %s", bridge[i].name, e.msg);
		cr_expect_str_eq(lj.precision, bridge[i].want, "%s", bridge[i].name);
	}
	/* Current scaling's own default keeps the end layers in bf16, which
	 * pplan does not price: said, unless the config turns it off (as
	 * pplan's emitted configs do, with a comment after the value). */
	for (int off = 0; off < 2; off++) {
		int said = 0;
		snprintf(args, sizeof args, "cfg = llama3_8b_pretrain_config()\n"
			 "cfg.mixed_precision = 'bf16_with_fp8_current_scaling_mixed'\n%s",
			 off ? "cfg.mixed_precision.first_last_layers_bf16 = False  # as priced\n" : "");
		cr_assert(launch_read_text(EMIT_BRIDGE, args, "cfg.py", NULL, &lj, &e) == PPLAN_OK,
			  "%s", e.msg);
		for (int k = 0; k < lj.n_notes; k++)
			said |= strstr(lj.notes[k], "first_last_layers_bf16") != NULL;
		cr_expect_eq(said, !off, "first_last_layers_bf16 %s", off ? "off" : "the default");
		/* the config's default counts, 1 and 1, priced */
		cr_expect_eq(lj.bf16_given, !off);
		cr_expect(off || (lj.bf16_first == 1 && lj.bf16_last == 1), "%d %d", lj.bf16_first,
			  lj.bf16_last);
	}
}

/* pretrain_mamba.py's arguments: a hybrid pattern with Megatron-LM's
 * Mamba-2 defaults (head width 64, 2 x hidden / 64 heads, 8 groups,
 * state 128, convolution 4).  Counted by hand, h = 256:
 *   Mamba-2 layer: in_proj 256 x (2 x 512 + 2 x 8 x 128 + 8) = 788,480;
 *   conv over x, B, C with bias (512 + 2048) x 5 = 12,800; A, D, dt bias
 *   3 x 8 and the gated norm 512 = 536; out_proj 512 x 256 = 131,072;
 *   its RMSNorm 256: 933,144.
 *   attention layer (4 heads of 64, 2 groups, no biases): 256 x 256 +
 *   2 x 256 x 128 + 256 x 256 + 256 = 196,864.
 *   MLP layer (squared ReLU, two matrices): 2 x 256 x 512 + 256 = 262,400.
 *   untied embeddings 2 x 1000 x 256 = 512,000; final norm 256.
 *   M*M-: 2 x 933,144 + 196,864 + 262,400 + 512,000 + 256 = 2,837,808. */
Test(launch_read, megatron_hybrid_pattern_with_megatrons_mamba_defaults)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *args =
		"torchrun --nproc-per-node 2 pretrain_mamba.py --num-layers 4 --hidden-size 256\n"
		"  --num-attention-heads 4 --group-query-attention --num-query-groups 2\n"
		"  --ffn-hidden-size 512 --squared-relu --hybrid-override-pattern M*M-\n"
		"  --normalization RMSNorm --disable-bias-linear --untie-embeddings-and-output-weights\n"
		"  --position-embedding-type none --vocab-size 1000 --seq-length 128 --bf16\n";
	cr_assert(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(lj.model.mixers, "MAM-");
	cr_expect_str_eq(lj.model.ffns, "---D", "one MLP, in the fourth layer");
	cr_expect_eq(lj.model.mamba_heads, 8);
	cr_expect_eq(lj.model.mamba_groups, 8);
	cr_expect_eq(lj.model.mamba_state, 128);
	cr_expect_float_eq(model_params_total(&lj.model), 2837808.0, 0.5);
}

Test(launch_read, megatron_hybrid_refusals)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *base = "pretrain_mamba.py --num-layers 4 --hidden-size 256 --num-attention-heads 4 "
			   "--vocab-size 1000 --seq-length 128 --bf16 ";
	char args[512];
	snprintf(args, sizeof args, "%s--hybrid-override-pattern M*M", base);
	cr_expect_eq(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "names 3 layers, the model has 4"), "%s", e.msg);
	snprintf(args, sizeof args, "%s--hybrid-override-pattern M*MX", base);
	cr_expect_eq(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "layer 4 is 'X'"), "%s", e.msg);
	snprintf(args, sizeof args, "%s--experimental-attention-variant gated_delta_net", base);
	cr_expect_eq(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "--linear-attention-freq"), "%s", e.msg);
	snprintf(args, sizeof args,
		 "%s--hybrid-override-pattern M*M- --experimental-attention-variant gated_delta_net",
		 base);
	cr_expect_eq(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "both place the layers"), "%s", e.msg);
}

/* Megatron-Core's sliding window: --window-size 4095,0 is 4095 keys before
 * the query, Hugging Face's 4096-token window; --window-attn-skip-freq 2
 * keeps full attention on every 2nd layer (1-based: layer % 2 == 0), so
 * 21 of 42 layers are windowed; without it all 42 are. */
Test(launch_read, megatron_sliding_window)
{
	struct launch_job lj;
	struct perr e = { { 0 } };
	const char *base = "pretrain_gpt.py --num-layers 42 --hidden-size 256 --num-attention-heads 4 "
			   "--vocab-size 1000 --seq-length 8192 --bf16 --window-size 4095,0 ";
	char args[512];
	snprintf(args, sizeof args, "%s--window-attn-skip-freq 2", base);
	cr_assert(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.model.sliding_window, 4096);
	cr_expect_eq(lj.model.window_layers, 21);
	cr_assert(launch_read_text(EMIT_MEGATRON, base, "args", NULL, &lj, &e) == PPLAN_OK, "%s", e.msg);
	cr_expect_eq(lj.model.window_layers, 42);
	snprintf(args, sizeof args, "%s--window-size wide", base);
	cr_expect_eq(launch_read_text(EMIT_MEGATRON, args, "args", NULL, &lj, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "--window-size"), "%s", e.msg);
}
