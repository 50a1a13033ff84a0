/* report.c: pplan.prediction/1 documents (the Megatron-LM flags are in emit.c). */
#include "report.h"

#include <math.h>

#include "accuracy.h"
#include "jsonio.h"
#include "units.h"


cJSON *report_model_json(const struct model_spec *m)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", m->name);
	cJSON_AddNumberToObject(o, "num_layers", m->layers);
	cJSON_AddNumberToObject(o, "hidden_size", (double)m->hidden);
	cJSON_AddNumberToObject(o, "ffn_hidden_size", (double)m->ffn);
	cJSON_AddNumberToObject(o, "num_attention_heads", m->heads);
	cJSON_AddNumberToObject(o, "num_kv_heads", m->kv_heads);
	cJSON_AddNumberToObject(o, "vocab_size", (double)m->vocab);
	cJSON_AddNumberToObject(o, "seq_length", (double)m->seq);
	cJSON_AddStringToObject(o, "mlp", mlp_kind_name(m->mlp));
	cJSON_AddNumberToObject(o, "num_experts", m->num_experts);
	cJSON_AddNumberToObject(o, "top_k", m->top_k);
	if (m->num_experts > 0) {
		cJSON_AddNumberToObject(o, "expert_ffn_hidden_size", (double)model_expert_ffn(m));
		cJSON_AddNumberToObject(o, "shared_experts", m->shared_experts);
		cJSON_AddNumberToObject(o, "moe_layers", model_moe_layers(m));
	}
	if (model_is_mla(m)) {
		cJSON *a = cJSON_AddObjectToObject(o, "mla");
		cJSON_AddNumberToObject(a, "q_lora_rank", (double)m->q_lora_rank);
		cJSON_AddNumberToObject(a, "kv_lora_rank", (double)m->kv_lora_rank);
		cJSON_AddNumberToObject(a, "qk_rope_head_dim", (double)m->qk_rope_dim);
		cJSON_AddNumberToObject(a, "qk_nope_head_dim", (double)m->qk_nope_dim);
		cJSON_AddNumberToObject(a, "v_head_dim", (double)m->v_head_dim);
	}
	cJSON_AddNumberToObject(o, "pos_embedding", (double)m->pos_embedding);
	if (m->sliding_window > 0 && m->window_layers > 0) {
		cJSON_AddNumberToObject(o, "sliding_window", (double)m->sliding_window);
		cJSON_AddNumberToObject(o, "window_layers", m->window_layers);
	}
	if (model_is_hybrid(m)) { /* one character a layer (sim/model.h) */
		cJSON_AddStringToObject(o, "mixers", m->mixers);
		cJSON_AddStringToObject(o, "ffns", m->ffns);
	}
	if (m->note[0])
		cJSON_AddStringToObject(o, "note", m->note);
	cJSON_AddNumberToObject(o, "params", model_params_total(m));
	cJSON_AddNumberToObject(o, "params_active", model_params_active(m));
	return o;
}

cJSON *report_cluster_json(const struct cluster *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", c->name);
	cJSON_AddStringToObject(o, "gpu", c->gpu.name);
	cJSON_AddNumberToObject(o, "gpus", (double)cluster_gpus(c));
	cJSON_AddNumberToObject(o, "gpus_per_node", c->gpus_per_node);
	cJSON_AddNumberToObject(o, "num_nodes", c->num_nodes);
	cJSON_AddNumberToObject(o, "nvlink_gbps", c->nvlink.bw_gbps);
	cJSON_AddNumberToObject(o, "net_gbps_per_gpu", c->net.bw_gbps);
	cJSON_AddStringToObject(o, "source", c->source);
	return o;
}

cJSON *report_layout_json(const struct layout *l, const struct train_opts *o)
{
	cJSON *j = cJSON_CreateObject();
	char buf[256];
	layout_format(l, buf, sizeof buf);
	cJSON_AddStringToObject(j, "string", buf);
	cJSON_AddNumberToObject(j, "tp", l->tp);
	cJSON_AddNumberToObject(j, "pp", l->pp);
	cJSON_AddNumberToObject(j, "dp", l->dp);
	cJSON_AddNumberToObject(j, "cp", l->cp);
	cJSON_AddNumberToObject(j, "ep", l->ep);
	cJSON_AddNumberToObject(j, "vp", l->vp);
	cJSON_AddNumberToObject(j, "mbs", l->mbs);
	cJSON_AddNumberToObject(j, "gbs", (double)l->gbs);
	cJSON_AddBoolToObject(j, "sp", l->sp);
	cJSON_AddStringToObject(j, "recompute", recompute_name(l->recompute));
	cJSON_AddNumberToObject(j, "zero", l->zero);
	cJSON_AddStringToObject(j, "schedule", schedule_name(l->schedule));
	/* a split of any shape: Megatron's layout string for it */
	if (l->pp_table)
		cJSON_AddStringToObject(j, "pipeline_layout", l->pp_table->text);
	cJSON_AddNumberToObject(j, "seq_length", (double)o->seq);
	cJSON_AddStringToObject(j, "precision", precision_name(o->precision));
	/* an fp8-class run's end layers in bf16, by Megatron-Core's names */
	cJSON_AddNumberToObject(j, "num_layers_at_start_in_bf16", o->bf16_first);
	cJSON_AddNumberToObject(j, "num_layers_at_end_in_bf16", o->bf16_last);
	report_lora_json(j, o);
	return j;
}

void report_lora_json(cJSON *doc, const struct train_opts *o)
{
	cJSON *t;
	cJSON_AddNumberToObject(doc, "lora_rank", o->lora_rank);
	if (o->lora_rank <= 0) {
		cJSON_AddNullToObject(doc, "lora_target_modules");
		return;
	}
	t = cJSON_AddArrayToObject(doc, "lora_target_modules");
	for (unsigned bit = 1; bit & LORA_TARGET_ALL; bit <<= 1)
		if (train_opts_lora_targets(o) & bit)
			cJSON_AddItemToArray(t, cJSON_CreateString(lora_target_name(bit)));
}

cJSON *report_framework_json(const struct train_opts *o)
{
	cJSON *j = cJSON_CreateObject(), *sw;
	const struct fw_behaviour *b = &o->b;
	cJSON_AddStringToObject(j, "name", o->fw->name);
	cJSON_AddStringToObject(j, "row", o->fw->label);
	cJSON_AddStringToObject(j, "attention", fw_attention_name(b->attention));
	cJSON_AddStringToObject(j, "tp_comm_overlap", fw_tp_overlap_name(b->tp_overlap));
	cJSON_AddBoolToObject(j, "overlap_grad_reduce", b->overlap_grad_reduce);
	cJSON_AddBoolToObject(j, "overlap_param_gather", b->overlap_param_gather);
	cJSON_AddStringToObject(j, "grad_reduce_dtype",
				fw_grad_dtype_name(b->grad_bytes, o->precision));
	cJSON_AddStringToObject(j, "pipeline_engine", fw_pipe_name(b->pipe));
	cJSON_AddStringToObject(j, "sharding", fw_sharding_name(b->sharding));
	cJSON_AddStringToObject(j, "selective_recompute",
				b->selective_ops ? "op-level" : "megatron");
	cJSON_AddStringToObject(j, "adam_moments", b->bf16_moments ? "bf16" : "fp32");
	/* fp8 runs: the scaling recipe priced (Megatron-Core's --fp8-recipe
	 * names) and whether the weights are kept in fp8; null otherwise */
	if (b->fp8_recipe != FP8_FRAMEWORK)
		cJSON_AddStringToObject(j, "fp8_recipe", fp8_recipe_name(b->fp8_recipe));
	else
		cJSON_AddNullToObject(j, "fp8_recipe");
	cJSON_AddBoolToObject(j, "fp8_weights", b->fp8_weights);
	/* What the user switched by hand, as given. */
	sw = cJSON_AddObjectToObject(j, "switches");
	if (o->switches.tp_overlap >= 0)
		cJSON_AddStringToObject(sw, "tp_comm_overlap",
					fw_tp_overlap_name((enum fw_tp_overlap)o->switches.tp_overlap));
	if (o->switches.flash >= 0)
		cJSON_AddBoolToObject(sw, "flash_attention", o->switches.flash);
	if (o->switches.grad_bytes)
		cJSON_AddStringToObject(sw, "grad_reduce_dtype",
					fw_grad_dtype_name(o->switches.grad_bytes, o->precision));
	if (o->switches.overlap_grad_reduce >= 0)
		cJSON_AddBoolToObject(sw, "overlap_grad_reduce", o->switches.overlap_grad_reduce);
	if (o->switches.overlap_param_gather >= 0)
		cJSON_AddBoolToObject(sw, "overlap_param_gather", o->switches.overlap_param_gather);
	if (o->switches.precision_aware_opt >= 0)
		cJSON_AddBoolToObject(sw, "precision_aware_optimizer", o->switches.precision_aware_opt);
	return j;
}

cJSON *report_prediction_fields(const struct prediction *p)
{
	cJSON *o = cJSON_CreateObject(), *mem, *t;
	cJSON_AddBoolToObject(o, "feasible", p->feasible);
	if (p->reject != REJECT_NONE)
		cJSON_AddStringToObject(o, "reject_reason", p->reject_msg);
	else
		cJSON_AddNullToObject(o, "reject_reason");
	json_add_number_or_null(o, "step_time_s", p->step_time_s);
	json_add_number_or_null(o, "tokens_per_s", p->tokens_per_s);
	json_add_number_or_null(o, "tflops_per_gpu", p->tflops_per_gpu);
	json_add_number_or_null(o, "mfu", p->mfu);
	json_add_number_or_null(o, "hfu", p->hfu);
	json_add_number_or_null(o, "bubble_fraction", p->bubble_fraction);
	cJSON_AddNumberToObject(o, "microbatches", (double)p->microbatches);
	mem = cJSON_AddObjectToObject(o, "memory_gib");
	cJSON_AddNumberToObject(mem, "total", p->mem.total / GIB);
	cJSON_AddNumberToObject(mem, "weights", p->mem.weights / GIB);
	cJSON_AddNumberToObject(mem, "gradients", p->mem.gradients / GIB);
	cJSON_AddNumberToObject(mem, "optimizer", p->mem.optimizer / GIB);
	cJSON_AddNumberToObject(mem, "activations", p->mem.activations / GIB);
	cJSON_AddNumberToObject(mem, "other", p->mem.other / GIB);
	cJSON_AddNumberToObject(mem, "host", p->mem.host / GIB);
	cJSON_AddNumberToObject(mem, "stage", p->mem.stage);
	cJSON_AddNumberToObject(mem, "inflight_microbatches", p->mem.inflight);
	t = cJSON_AddObjectToObject(o, "time_s");
	cJSON_AddNumberToObject(t, "compute", p->time.compute);
	cJSON_AddNumberToObject(t, "recompute", p->time.recompute);
	cJSON_AddNumberToObject(t, "tp_comm", p->time.tp_comm);
	cJSON_AddNumberToObject(t, "cp_comm", p->time.cp_comm);
	cJSON_AddNumberToObject(t, "ep_comm", p->time.ep_comm);
	cJSON_AddNumberToObject(t, "pp_comm", p->time.pp_comm);
	cJSON_AddNumberToObject(t, "dp_comm_exposed", p->time.dp_comm_exposed);
	cJSON_AddNumberToObject(t, "dp_comm_total", p->time.dp_comm_total);
	cJSON_AddNumberToObject(t, "tied_embedding_allreduce", p->dp_emb_s);
	cJSON_AddNumberToObject(t, "bubble", p->time.bubble);
	cJSON_AddNumberToObject(t, "optimizer", p->time.optimizer);
	cJSON_AddNumberToObject(t, "offload_d2h", p->offload_d2h_s);
	cJSON_AddNumberToObject(t, "offload_cpu_adam", p->offload_adam_s);
	cJSON_AddNumberToObject(t, "offload_h2d", p->offload_h2d_s);
	return o;
}

static cJSON *range_json(double lo, double hi)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateNumber(lo));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(hi));
	return a;
}

cJSON *report_accuracy_json(const struct cluster *c, const struct train_opts *o,
			    const struct prediction *p)
{
	struct accuracy a;
	cJSON *j = cJSON_CreateObject();
	double lo, hi;

	accuracy_for(c->gpu.arch, o->precision, &a);
	cJSON_AddStringToObject(j, "basis", "leave-one-source-out errors of validation/calibration.json");
	if (a.n > 0) {
		cJSON_AddStringToObject(j, "gpu_arch", gpu_arch_name(a.arch));
		cJSON_AddStringToObject(j, "precision_class", a.fp8 ? "fp8" : "bf16/fp16");
		cJSON_AddBoolToObject(j, "nearest", a.nearest);
		cJSON_AddNumberToObject(j, "cases", a.n);
		cJSON_AddItemToObject(j, "step_time_error_pct", range_json(a.lo_pct, a.hi_pct));
		cJSON_AddNumberToObject(j, "memory_cases", a.mem_n);
		cJSON_AddItemToObject(j, "memory_error_pct", range_json(a.mem_lo_pct, a.mem_hi_pct));
		if (p) {
			accuracy_time(&a, p->step_time_s, &lo, &hi);
			cJSON_AddItemToObject(j, "step_time_s", range_json(lo, hi));
			accuracy_mfu(&a, p->mfu, &lo, &hi);
			cJSON_AddItemToObject(j, "mfu", range_json(lo, hi));
			accuracy_memory(&a, p->mem.total / (1024.0 * 1024.0 * 1024.0), &lo, &hi);
			cJSON_AddItemToObject(j, "memory_gib", range_json(lo, hi));
		}
	} else {
		cJSON_AddNullToObject(j, "gpu_arch");
	}
	if (a.published_mfu > 0) {
		cJSON_AddNumberToObject(j, "published_mfu", a.published_mfu);
		cJSON_AddStringToObject(j, "published_run", a.published_run);
	} else {
		cJSON_AddNullToObject(j, "published_mfu");
	}
	if (p)
		cJSON_AddBoolToObject(j, "mfu_above_published", accuracy_above_published(&a, p->mfu));
	return j;
}

cJSON *report_prediction_json(const struct model_spec *m,
			      const struct cluster *c, const struct layout *l,
			      const struct train_opts *o,
			      const struct prediction *p)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *fields = report_prediction_fields(p);
	cJSON *it;
	cJSON_AddStringToObject(doc, "schema", "pplan.prediction/1");
	cJSON_AddItemToObject(doc, "model", report_model_json(m));
	cJSON_AddItemToObject(doc, "cluster", report_cluster_json(c));
	cJSON_AddItemToObject(doc, "layout", report_layout_json(l, o));
	cJSON_AddItemToObject(doc, "framework", report_framework_json(o));
	/* Move the prediction fields up into the document. */
	while ((it = fields->child) != NULL) {
		cJSON_DetachItemViaPointer(fields, it);
		cJSON_AddItemToObject(doc, it->string, it);
	}
	cJSON_Delete(fields);
	cJSON_AddItemToObject(doc, "accuracy", report_accuracy_json(c, o, p));
	return doc;
}
