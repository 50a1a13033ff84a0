/*
 * run_report.c: pplan.report/1 (docs/report-format.md) from a run's
 * prediction and measurement, and the Chrome trace of a measured step.
 * Errors are 100 * (predicted - measured) / measured; the bubble
 * fraction's is a difference in percentage points.
 */
#include "run_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jsonio.h"
#include "report.h"
#include "units.h"


static void add_mem(cJSON *o, const char *key, const struct mem_breakdown *m)
{
	cJSON *j = cJSON_AddObjectToObject(o, key);
	json_add_number_or_null(j, "total", m->total / GIB);
	json_add_number_or_null(j, "weights", m->weights / GIB);
	json_add_number_or_null(j, "gradients", m->gradients / GIB);
	json_add_number_or_null(j, "optimizer", m->optimizer / GIB);
	json_add_number_or_null(j, "activations", m->activations / GIB);
	json_add_number_or_null(j, "other", m->other / GIB);
}

static void add_classes(cJSON *o, const char *key, const double *c)
{
	cJSON *j = cJSON_AddObjectToObject(o, key);
	for (int i = 0; i < OC_COUNT; i++)
		json_add_number_or_null(j, op_class_key((enum op_class)i), c[i]);
}

static cJSON *stages_json(const struct run_timeline *t,
			  const struct mem_breakdown *mem)
{
	cJSON *a = cJSON_CreateArray();
	for (int s = 0; t && s < t->stages; s++) {
		cJSON *o = cJSON_CreateObject();
		const struct run_stage *st = &t->stage[s];
		cJSON_AddNumberToObject(o, "stage", st->stage);
		json_add_number_or_null(o, "busy_s", st->busy_s);
		json_add_number_or_null(o, "idle_s", st->idle_s);
		json_add_number_or_null(o, "bubble_fraction", st->bubble_fraction);
		if (mem)
			add_mem(o, "memory_gib", &mem[s]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *timeline_json(const struct run_timeline *t)
{
	cJSON *a = cJSON_CreateArray();
	for (int s = 0; t && s < t->stages; s++) {
		cJSON *st = cJSON_CreateObject(), *ops = cJSON_CreateArray();
		cJSON_AddNumberToObject(st, "stage", t->stage[s].stage);
		for (long i = 0; i < t->stage[s].nops; i++) {
			const struct run_op *o = &t->stage[s].ops[i];
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "name", run_op_name(o->kind));
			cJSON_AddStringToObject(j, "class", op_class_key((enum op_class)o->cls));
			cJSON_AddNumberToObject(j, "mb", o->mb);
			cJSON_AddNumberToObject(j, "chunk", o->chunk);
			cJSON_AddNumberToObject(j, "start_s", o->start_s);
			cJSON_AddNumberToObject(j, "end_s", o->end_s);
			cJSON_AddItemToArray(ops, j);
		}
		cJSON_AddItemToObject(st, "ops", ops);
		cJSON_AddItemToArray(a, st);
	}
	return a;
}

static double pct(double pred, double meas)
{
	if (!isfinite(pred) || !isfinite(meas) || meas == 0)
		return NAN;
	return 100.0 * (pred - meas) / meas;
}

static void measured_json(cJSON *doc, const struct run_report *r)
{
	const struct run_measured *m = r->meas;
	cJSON *o = cJSON_AddObjectToObject(doc, "measured");
	cJSON *arr;
	double gpus = (double)layout_gpus(r->layout);
	double flops = cost_model_flops(r->model, r->opts->seq, r->layout->gbs);
	double tflops = flops / m->step_time_s / gpus / 1e12;

	json_add_number_or_null(o, "step_time_s", m->step_time_s);
	arr = cJSON_AddArrayToObject(o, "step_times_s");
	for (long i = 0; i < r->steps && m->step_times_s; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(m->step_times_s[i]));
	json_add_number_or_null(o, "step_time_min_s", m->step_min_s);
	json_add_number_or_null(o, "step_time_max_s", m->step_max_s);
	json_add_number_or_null(o, "tokens_per_s",
				(double)r->layout->gbs * (double)r->opts->seq / m->step_time_s);
	json_add_number_or_null(o, "tflops_per_gpu", tflops);
	json_add_number_or_null(o, "mfu", m->peak_tflops > 0 ? tflops / m->peak_tflops : NAN);
	json_add_number_or_null(o, "peak_tflops", m->peak_tflops);
	if (m->peak_source)
		cJSON_AddStringToObject(o, "peak_source", m->peak_source);
	else
		cJSON_AddNullToObject(o, "peak_source");
	json_add_number_or_null(o, "bubble_fraction", m->bubble_fraction);
	add_classes(o, "op_classes_s", m->classes_s);
	json_add_number_or_null(o, "harness_overhead_fraction", m->harness_overhead);
	json_add_number_or_null(o, "memory_gib_peak", m->mem_peak_bytes / GIB);
	cJSON_AddItemToObject(o, "per_stage", stages_json(&m->timeline, m->stage_mem));
	arr = cJSON_AddArrayToObject(o, "per_rank");
	for (int i = 0; i < m->ranks; i++) {
		cJSON *j = cJSON_CreateObject();
		struct rank_coords rc;
		layout_rank_coords(r->layout, &r->opts->order, i, &rc);
		cJSON_AddNumberToObject(j, "rank", i);
		cJSON_AddStringToObject(j, "host", m->hosts && m->hosts[i] ? m->hosts[i] : "?");
		cJSON_AddNumberToObject(j, "stage", rc.c[DIM_PP]);
		cJSON_AddNumberToObject(j, "tp", rc.c[DIM_TP]);
		cJSON_AddNumberToObject(j, "cp", rc.c[DIM_CP]);
		cJSON_AddNumberToObject(j, "dp", rc.c[DIM_DP]);
		json_add_number_or_null(j, "memory_gib_peak",
					m->rank_mem_peak ? m->rank_mem_peak[i] / GIB : NAN);
		cJSON_AddItemToArray(arr, j);
	}
	arr = cJSON_AddArrayToObject(o, "losses");
	for (long i = 0; i < m->steps_done && m->losses; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(m->losses[i]));
}

static void error_json(cJSON *doc, const struct run_report *r)
{
	const struct prediction *p = r->pred;
	const struct run_measured *m = r->meas;
	cJSON *o = cJSON_AddObjectToObject(doc, "error"), *c;
	double gpus = (double)layout_gpus(r->layout);
	double flops = cost_model_flops(r->model, r->opts->seq, r->layout->gbs);
	double mt = flops / m->step_time_s / gpus / 1e12;
	double mmfu = m->peak_tflops > 0 ? mt / m->peak_tflops : NAN;
	double mtok = (double)r->layout->gbs * (double)r->opts->seq / m->step_time_s;

	json_add_number_or_null(o, "step_time_pct", pct(p->step_time_s, m->step_time_s));
	json_add_number_or_null(o, "tokens_per_s_pct", pct(p->tokens_per_s, mtok));
	json_add_number_or_null(o, "mfu_pct", pct(p->mfu, mmfu));
	json_add_number_or_null(o, "memory_pct", pct(p->mem.total, m->mem_peak_bytes));
	json_add_number_or_null(o, "bubble_fraction_pts",
				100.0 * (p->bubble_fraction - m->bubble_fraction));
	c = cJSON_AddObjectToObject(o, "op_classes_pct");
	for (int i = 0; i < OC_COUNT; i++) {
		double pv = r->pred_tl ? r->pred_tl->classes_s[i] : NAN;
		double mv = m->classes_s[i];
		json_add_number_or_null(c, op_class_key((enum op_class)i),
					mv > 0 ? pct(pv, mv) : NAN);
	}
}

cJSON *report_run_json(const struct run_report *r)
{
	cJSON *doc = cJSON_CreateObject(), *o;
	char date[32];
	time_t now = time(NULL);
	struct tm tm;

	cJSON_AddStringToObject(doc, "schema", "pplan.report/1");
	cJSON_AddStringToObject(doc, "status", r->status);
	if (r->failure) {
		o = cJSON_AddObjectToObject(doc, "failure");
		cJSON_AddStringToObject(o, "reason", r->failure);
	} else {
		cJSON_AddNullToObject(doc, "failure");
	}
	cJSON_AddNumberToObject(doc, "steps_completed", r->meas ? (double)r->meas->steps_done : 0);
	cJSON_AddItemToObject(doc, "model", report_model_json(r->model));
	cJSON_AddItemToObject(doc, "cluster", report_cluster_json(r->machine));
	cJSON_AddItemToObject(doc, "layout", report_layout_json(r->layout, r->opts));
	o = cJSON_AddObjectToObject(doc, "run");
	cJSON_AddNumberToObject(o, "steps", (double)r->steps);
	cJSON_AddNumberToObject(o, "warmup", (double)r->warmup);
	cJSON_AddNumberToObject(o, "seed", (double)r->seed);
	cJSON_AddStringToObject(o, "backend", r->backend);
	cJSON_AddStringToObject(o, "dtype", r->dtype);
	cJSON_AddNumberToObject(o, "ranks", (double)layout_gpus(r->layout));
	cJSON_AddNumberToObject(o, "microbatches", (double)layout_microbatches(r->layout));
	cJSON_AddBoolToObject(o, "check", r->check_asked);
	if (r->profile)
		cJSON_AddStringToObject(o, "profile", r->profile);
	else
		cJSON_AddNullToObject(o, "profile");

	if (r->pred) {
		cJSON *pf = report_prediction_fields(r->pred), *it;
		o = cJSON_AddObjectToObject(doc, "predicted");
		while ((it = pf->child) != NULL) {
			cJSON_DetachItemViaPointer(pf, it);
			cJSON_AddItemToObject(o, it->string, it);
		}
		cJSON_Delete(pf);
		if (r->pred_tl)
			add_classes(o, "op_classes_s", r->pred_tl->classes_s);
		cJSON_AddItemToObject(o, "per_stage", stages_json(r->pred_tl, r->pred_stage_mem));
	} else {
		cJSON_AddNullToObject(doc, "predicted");
	}
	if (r->meas && r->meas->step_times_s && r->meas->step_time_s > 0)
		measured_json(doc, r);
	else
		cJSON_AddNullToObject(doc, "measured");
	if (r->pred && r->meas && r->meas->step_time_s > 0)
		error_json(doc, r);
	else
		cJSON_AddNullToObject(doc, "error");

	o = cJSON_AddObjectToObject(doc, "timeline");
	cJSON_AddNumberToObject(o, "step", r->meas ? (double)r->meas->median_step + 1 : 0);
	cJSON_AddItemToObject(o, "predicted", timeline_json(r->pred_tl));
	cJSON_AddItemToObject(o, "measured", timeline_json(r->meas ? &r->meas->timeline : NULL));

	if (r->check) {
		o = cJSON_AddObjectToObject(doc, "check");
		cJSON_AddBoolToObject(o, "passed", r->check->passed);
		cJSON_AddStringToObject(o, "reference", "single rank");
		cJSON_AddNumberToObject(o, "tolerance_rel", r->check->tolerance_rel);
		cJSON_AddNumberToObject(o, "steps", (double)r->check->steps);
		json_add_number_or_null(o, "max_loss_rel_err", r->check->max_loss_rel_err);
		json_add_number_or_null(o, "max_grad_norm_rel_err", r->check->max_grad_rel_err);
		cJSON_AddStringToObject(o, "worst", r->check->worst);
	} else {
		cJSON_AddNullToObject(doc, "check");
	}

	o = cJSON_AddObjectToObject(doc, "provenance");
	cJSON_AddStringToObject(o, "pplan_version", r->version);
	cJSON_AddStringToObject(o, "git_hash", r->git_hash);
	cJSON_AddStringToObject(o, "command", r->command ? r->command : "");
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(o, "date", date);
	{
		cJSON *h = cJSON_AddArrayToObject(o, "hosts");
		const struct run_measured *m = r->meas;
		for (int i = 0; m && m->hosts && i < m->ranks; i++) {
			int seen = 0;
			for (int j = 0; j < i; j++)
				seen |= m->hosts[j] && m->hosts[i] && strcmp(m->hosts[j], m->hosts[i]) == 0;
			if (!seen && m->hosts[i])
				cJSON_AddItemToArray(h, cJSON_CreateString(m->hosts[i]));
		}
		h = cJSON_AddArrayToObject(o, "devices");
		if (m)
			cJSON_AddItemToArray(h, cJSON_CreateString(m->device));
		cJSON_AddStringToObject(o, "backend", r->backend);
		h = cJSON_AddObjectToObject(o, "libraries");
		if (m)
			cJSON_AddStringToObject(h, r->backend, m->libraries);
	}
	return doc;
}

static void trace_event(cJSON *events, const char *name, const char *cat, int pid,
			int tid, double start_s, double end_s, const struct run_op *o)
{
	cJSON *ev = cJSON_CreateObject(), *args;
	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddStringToObject(ev, "cat", cat);
	cJSON_AddStringToObject(ev, "ph", "X");
	cJSON_AddNumberToObject(ev, "pid", pid);
	cJSON_AddNumberToObject(ev, "tid", tid);
	cJSON_AddNumberToObject(ev, "ts", start_s * 1e6);
	cJSON_AddNumberToObject(ev, "dur", (end_s - start_s) * 1e6);
	args = cJSON_AddObjectToObject(ev, "args");
	cJSON_AddNumberToObject(args, "mb", o->mb);
	cJSON_AddNumberToObject(args, "chunk", o->chunk);
	cJSON_AddItemToArray(events, ev);
}

static void meta(cJSON *events, const char *what, int pid, int tid, const char *name)
{
	cJSON *ev = cJSON_CreateObject(), *args;
	cJSON_AddStringToObject(ev, "name", what);
	cJSON_AddStringToObject(ev, "ph", "M");
	cJSON_AddNumberToObject(ev, "pid", pid);
	cJSON_AddNumberToObject(ev, "tid", tid);
	args = cJSON_AddObjectToObject(ev, "args");
	cJSON_AddStringToObject(args, "name", name);
	cJSON_AddItemToArray(events, ev);
}

cJSON *report_run_trace(const struct run_timeline *ranks)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *events = cJSON_AddArrayToObject(doc, "traceEvents");
	cJSON_AddStringToObject(doc, "displayTimeUnit", "ms");
	for (int r = 0; r < ranks->stages; r++) {
		const struct run_stage *st = &ranks->stage[r];
		char name[64];
		snprintf(name, sizeof name, "rank %d (stage %d)", r, st->stage);
		meta(events, "process_name", r, 0, name);
		meta(events, "thread_name", r, 0, "compute");
		meta(events, "thread_name", r, 1, "communication");
		for (long i = 0; i < st->nops; i++) {
			const struct run_op *o = &st->ops[i];
			int comm = o->cls == OC_PP || o->cls == OC_DP;
			char nm[48];
			if (o->mb >= 0)
				snprintf(nm, sizeof nm, "%s mb%d c%d", run_op_name(o->kind), o->mb, o->chunk);
			else
				snprintf(nm, sizeof nm, "%s", run_op_name(o->kind));
			trace_event(events, nm, op_class_key((enum op_class)o->cls), r, comm, o->start_s,
				    o->end_s, o);
		}
	}
	return doc;
}
