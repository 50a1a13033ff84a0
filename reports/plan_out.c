/*
 * plan_out.c: pplan.plan/1 (plan_out.h).
 */
#include "plan_out.h"

#include "report.h"
#include "units.h"

static cJSON *goodput_json(const struct goodput *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "fraction", g->fraction);
	if (g->fixed) {
		cJSON_AddStringToObject(o, "origin", "--goodput");
		return o;
	}
	cJSON_AddNumberToObject(o, "mtbi_s", g->mtbi_s);
	cJSON_AddNumberToObject(o, "restart_s", g->restart_s);
	cJSON_AddNumberToObject(o, "checkpoint_bytes", g->ckpt_bytes);
	cJSON_AddNumberToObject(o, "checkpoint_save_s", g->save_s);
	cJSON_AddNumberToObject(o, "checkpoint_interval_s", g->interval_s);
	cJSON_AddBoolToObject(o, "interval_derived", g->interval_derived);
	cJSON_AddNumberToObject(o, "lost_to_failures", g->lost_failures);
	cJSON_AddNumberToObject(o, "lost_to_checkpoints", g->lost_checkpoint);
	return o;
}

static cJSON *size_json(const struct plan_rung *g, double days)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	const struct job *j = g->job;
	cJSON_AddNumberToObject(o, "gpus", (double)(cluster_gpus(&j->cluster) > 0
							     ? cluster_gpus(&j->cluster)
							     : j->gpus));
	cJSON_AddBoolToObject(o, "fits", g->r.n_top > 0);
	if (g->r.n_top == 0) {
		cJSON_AddStringToObject(o, "why", g->why);
		return o;
	}
	cJSON_AddNumberToObject(o, "global_batch", (double)j->global_batch);
	cJSON_AddItemToObject(o, "goodput", goodput_json(&j->goodput));
	arr = cJSON_AddArrayToObject(o, "layouts");
	for (int i = 0; i < g->r.n_top; i++) {
		cJSON *it = report_prediction_fields(&g->r.top_preds[i]);
		struct train_opts opts = j->opts;
		struct job_train_time t = job_train_time(j, &g->r.top_preds[i]);
		opts.order = g->r.top_orders[i];
		cJSON_AddItemToObject(it, "layout", report_layout_json(&g->r.top_layouts[i], &opts));
		cJSON_AddNumberToObject(it, "train_time_s", t.seconds);
		cJSON_AddNumberToObject(it, "train_days", t.seconds / 86400);
		cJSON_AddNumberToObject(it, "train_gpu_hours", t.gpu_hours);
		if (t.cost > 0)
			cJSON_AddNumberToObject(it, "train_cost", t.cost);
		if (days > 0)
			cJSON_AddBoolToObject(it, "meets_deadline", t.seconds <= days * 86400);
		cJSON_AddItemToArray(arr, it);
	}
	return o;
}

static cJSON *doc_start(const struct plan_request *rq, const struct job *j, const char *mode)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "pplan.plan/1");
	cJSON_AddStringToObject(doc, "mode", mode);
	cJSON_AddItemToObject(doc, "model", report_model_json(&j->model));
	cJSON_AddNumberToObject(doc, "train_tokens", j->train_tokens);
	cJSON_AddNumberToObject(doc, "seq_length", (double)j->opts.seq);
	cJSON_AddStringToObject(doc, "precision", precision_name(j->opts.precision));
	report_lora_json(doc, &j->opts);
	cJSON_AddItemToObject(doc, "framework", report_framework_json(&j->opts));
	if (rq->days > 0)
		cJSON_AddNumberToObject(doc, "deadline_days", rq->days);
	else
		cJSON_AddNullToObject(doc, "deadline_days");
	cJSON_AddNumberToObject(doc, "max_gpus", (double)rq->max_gpus);
	cJSON_AddNumberToObject(doc, "rank_tolerance", rq->tolerance);
	return doc;
}

static double gpus_of(const struct plan_result *res, int i)
{
	return i < 0 ? -1 : (double)cluster_gpus(&res->rungs[i].job->cluster);
}

cJSON *plan_out_json(const struct plan_request *rq, const struct plan_result *res)
{
	cJSON *doc = doc_start(rq, res->rungs[0].job, "ladder"), *arr;
	arr = cJSON_AddArrayToObject(doc, "sizes");
	for (int i = 0; i < res->n; i++)
		cJSON_AddItemToArray(arr, size_json(&res->rungs[i], rq->days));
	if (res->answer >= 0)
		cJSON_AddNumberToObject(doc, "answer_gpus", gpus_of(res, res->answer));
	else
		cJSON_AddNullToObject(doc, "answer_gpus");
	cJSON_AddNumberToObject(doc, "fastest_gpus", gpus_of(res, res->fastest));
	cJSON_AddNumberToObject(doc, "fewest_gpu_hours_gpus", gpus_of(res, res->cheapest));
	return doc;
}

cJSON *plan_out_compare_json(const struct plan_request *rq, const char *const *clusters,
			     const struct plan_result *res, const int *pick, int n)
{
	cJSON *doc = doc_start(rq, res[0].rungs[0].job, "compare"), *arr;
	arr = cJSON_AddArrayToObject(doc, "clusters");
	for (int i = 0; i < n; i++) {
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "cluster", clusters[i]);
		if (pick[i] >= 0) {
			const struct plan_rung *g = &res[i].rungs[pick[i]];
			cJSON_AddItemToObject(it, "hardware", report_cluster_json(&g->job->cluster));
			if (g->job->goodput_opts.gpu_hour_cost > 0)
				cJSON_AddNumberToObject(it, "gpu_hour_cost",
							g->job->goodput_opts.gpu_hour_cost);
			cJSON_AddItemToObject(it, "size", size_json(g, rq->days));
		} else {
			cJSON_AddNullToObject(it, "size");
		}
		cJSON_AddItemToArray(arr, it);
	}
	return doc;
}
