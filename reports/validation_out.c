/*
 * validation_out.c: pplan.validation/1, what `pplan validate --json`
 * writes (validation_out.h).
 */
#include "validation_out.h"

#include <cjson/cJSON.h>

#include "jsonio.h"
#include "report.h"

static cJSON *by_source_json(const struct err_tally *a, int n)
{
	cJSON *by = cJSON_CreateObject();
	for (int i = 0; i < n; i++) {
		cJSON *o;
		if (!a[i].n)
			continue;
		o = cJSON_AddObjectToObject(by, a[i].key);
		cJSON_AddNumberToObject(o, "step_time_mape_pct", err_tally_mape(&a[i]));
		cJSON_AddNumberToObject(o, "step_time_worst_pct", a[i].worst);
		cJSON_AddNumberToObject(o, "n", a[i].n);
	}
	return by;
}

static cJSON *case_json(const struct vcase *vc, const struct case_outcome *r)
{
	cJSON *jc = cJSON_CreateObject();
	cJSON_AddStringToObject(jc, "id", vc->id);
	cJSON_AddStringToObject(jc, "source", vc->label);
	cJSON_AddStringToObject(jc, "framework", vc->framework_given);
	cJSON_AddStringToObject(jc, "gpu", vc->cluster.gpu.name);
	cJSON_AddStringToObject(jc, "gpu_arch", gpu_arch_name(vc->cluster.gpu.arch));
	cJSON_AddStringToObject(jc, "precision", precision_name(vc->opts.precision));
	report_lora_json(jc, &vc->opts);
	cJSON_AddBoolToObject(jc, "predicted", vc->predictable);
	if (!vc->predictable)
		cJSON_AddStringToObject(jc, "skip_reason", vc->skip_reason);
	if (vc->warning[0])
		cJSON_AddStringToObject(jc, "warning", vc->warning);
	cJSON_AddStringToObject(jc, "compared", !r->compared ? "none" :
				vc->step_from_throughput ? "throughput" : "step_time");
	json_add_number_or_null(jc, "predicted_step_time_s", r->pred.step_time_s);
	json_add_number_or_null(jc, "measured_step_time_s", vc->measured_step_s);
	json_add_number_or_null(jc, "step_time_error_pct", r->err);
	json_add_number_or_null(jc, "measured_tflops_per_gpu", vc->measured_tflops);
	if (vc->step_from_throughput) {
		double pt = vcase_predicted_tflops(vc, &r->pred);
		json_add_number_or_null(jc, "predicted_tflops_per_gpu", pt);
		json_add_number_or_null(jc, "throughput_error_pct",
					100.0 * (pt - vc->measured_tflops) / vc->measured_tflops);
	}
	json_add_number_or_null(jc, "predicted_memory_gib", r->pmem);
	json_add_number_or_null(jc, "measured_memory_gib", vc->measured_mem_gib);
	json_add_number_or_null(jc, "memory_error_pct", r->merr);
	if (vc->predictable)
		cJSON_AddBoolToObject(jc, "predicted_oom", !r->pred.feasible);
	else
		cJSON_AddNullToObject(jc, "predicted_oom");
	cJSON_AddBoolToObject(jc, "measured_oom", vc->measured_oom);
	json_add_number_or_null(jc, "baseline_step_time_s", r->base_step);
	json_add_number_or_null(jc, "cross_validation_step_time_s", r->cv_step);
	json_add_number_or_null(jc, "cross_validation_error_pct", r->cv_err);
	cJSON_AddStringToObject(jc, "assumed", vc->assumed);
	cJSON_AddBoolToObject(jc, "layout_searched", vc->layout_searched);
	if (vc->predictable)
		cJSON_AddItemToObject(jc, "prediction", report_prediction_fields(&r->pred));
	return jc;
}

static cJSON *summary_json(const struct validation_summary *s, int n, int baseline,
			   int cross_validate)
{
	cJSON *j = cJSON_CreateObject(), *np;
	json_add_number_or_null(j, "step_time_mape_pct", err_tally_mape(&s->all));
	json_add_number_or_null(j, "step_time_mape_bf16_fp16_pct", err_tally_mape(&s->half));
	json_add_number_or_null(j, "step_time_mape_fp8_pct", err_tally_mape(&s->fp8));
	json_add_number_or_null(j, "step_time_worst_pct", s->all.worst);
	json_add_number_or_null(j, "memory_mape_pct", err_tally_mape(&s->mem));
	cJSON_AddNumberToObject(j, "n_step_time", s->all.n);
	cJSON_AddNumberToObject(j, "n_memory", s->mem.n);
	cJSON_AddNumberToObject(j, "oom_agreement",
				s->oom_total ? (double)s->oom_agree / s->oom_total : 1.0);
	cJSON_AddNumberToObject(j, "n_cases", n);
	cJSON_AddNumberToObject(j, "n_predicted", s->npred);
	if (s->searched.n) {
		cJSON *o = cJSON_AddObjectToObject(j, "layout_not_given");
		cJSON_AddStringToObject(o, "priced_at", "pplan search's best layout");
		cJSON_AddNumberToObject(o, "step_time_mape_pct", err_tally_mape(&s->searched));
		cJSON_AddNumberToObject(o, "step_time_worst_pct", s->searched.worst);
		cJSON_AddNumberToObject(o, "n", s->searched.n);
	}
	cJSON_AddNumberToObject(j, "predicted_fraction", (double)s->npred / n);
	np = cJSON_AddObjectToObject(j, "not_predicted");
	for (int k = 0; k < s->nreason; k++)
		cJSON_AddNumberToObject(np, s->reason[k], s->reason_n[k]);
	cJSON_AddItemToObject(j, "by_source", by_source_json(s->src, s->nsrc));
	if (baseline) {
		cJSON *b = cJSON_AddObjectToObject(j, "baseline");
		cJSON_AddStringToObject(b, "rule", "constant-mfu");
		json_add_number_or_null(b, "mfu", s->mfu);
		json_add_number_or_null(b, "step_time_mape_pct", err_tally_mape(&s->base_all));
		cJSON_AddItemToObject(b, "by_source", by_source_json(s->base, s->nsrc));
	}
	if (cross_validate) {
		cJSON *c = cJSON_AddObjectToObject(j, "cross_validation");
		cJSON_AddStringToObject(c, "by", "source");
		json_add_number_or_null(c, "step_time_mape_pct", err_tally_mape(&s->cv_all));
		json_add_number_or_null(c, "step_time_worst_pct", s->cv_all.worst);
		cJSON_AddItemToObject(c, "by_source", by_source_json(s->cv, s->nsrc));
	}
	return j;
}

enum pplan_status validation_out_write(const char *path, const struct validation_doc *doc,
				       struct perr *e)
{
	cJSON *root = cJSON_CreateObject(), *jcases;
	enum pplan_status st;
	cJSON_AddStringToObject(root, "schema", "pplan.validation/1");
	cJSON_AddStringToObject(root, "file", doc->cases_path);
	if (doc->profile_path)
		cJSON_AddStringToObject(root, "profile", doc->profile_path);
	else
		cJSON_AddNullToObject(root, "profile");
	jcases = cJSON_AddArrayToObject(root, "cases");
	for (int i = 0; i < doc->n; i++)
		cJSON_AddItemToArray(jcases, case_json(&doc->cases[i], &doc->out[i]));
	cJSON_AddItemToObject(root, "summary", summary_json(doc->summary, doc->n, doc->baseline,
							      doc->cross_validate));
	st = json_write_atomic(path, root, e);
	cJSON_Delete(root);
	return st;
}
