/*
 * run_report.c: pplan.report/1 (docs/report-format.md), written from a
 * run's prediction and measurement and read back as data, and the Chrome
 * trace of a measured step.  Errors are 100 * (predicted - measured) /
 * measured; the bubble fraction's is a difference in percentage points.
 *
 * The reader follows docs/report-format.md key by key.  It is strict about
 * types (a string where a number belongs is refused with the key's path)
 * and lenient about absence (a missing number is NAN, shown as "-"), since
 * a failed run's report holds only part of the measured side.
 */
#include "run_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
	json_add_number_or_null(o, "clock_offset_max_s", m->clock_offset_max_s);
	json_add_number_or_null(o, "clock_bound_max_s", m->clock_bound_max_s);
	json_add_number_or_null(o, "memory_gib_peak", m->mem_peak_bytes / GIB);
	json_add_number_or_null(o, "memory_gib_process_peak", m->mem_process_peak_bytes / GIB);
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
		json_add_number_or_null(j, "memory_gib_process_peak",
					m->rank_process_peak ? m->rank_process_peak[i] / GIB : NAN);
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

	cJSON_AddStringToObject(doc, "schema", RUNREPORT_SCHEMA);
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
	if (r->conditions) {
		cJSON *c = cJSON_AddObjectToObject(o, "conditions");
		cJSON_AddNumberToObject(c, "ranks", (double)r->conditions->ranks);
		cJSON_AddNumberToObject(c, "ranks_per_host", (double)r->conditions->ranks_per_host);
		json_add_number_or_null(c, "load_avg_1m", r->conditions->load_1m);
		json_add_number_or_null(c, "cpu_mhz", r->conditions->cpu_mhz);
	} else {
		cJSON_AddNullToObject(o, "conditions");
	}
	if (r->profile_note)
		cJSON_AddStringToObject(o, "profile_note", r->profile_note);
	else
		cJSON_AddNullToObject(o, "profile_note");

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
		cJSON_AddNumberToObject(o, "grad_elements", (double)r->check->elements);
		json_add_number_or_null(o, "max_grad_elem_err", r->check->max_elem_err);
		cJSON_AddNumberToObject(o, "grad_elem_bound", r->check->elem_bound);
		cJSON_AddNumberToObject(o, "gemms_recomputed", (double)r->check->gemms_recomputed);
		cJSON_AddNumberToObject(o, "messages_hashed", (double)r->check->messages_hashed);
		if (r->check->integrity[0])
			cJSON_AddStringToObject(o, "integrity", r->check->integrity);
		else
			cJSON_AddNullToObject(o, "integrity");
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

/* ---- reading ---------------------------------------------------------------- */

#define MAX_STAGES 4096
#define MAX_OPS_PER_LANE 1000000
#define MAX_STEPS 10000000

/* ---- typed getters that name the key's path ------------------------------- */

/* Where a key sits, for messages: "FILE: measured.per_stage[1]". */
struct where {
	const char *file;
	char path[160];
};

static void where_at(struct where *w, const struct where *parent,
		     const char *key, int index)
{
	w->file = parent->file;
	if (index >= 0)
		snprintf(w->path, sizeof w->path, "%s%s%s[%d]", parent->path,
			 parent->path[0] && key[0] ? "." : "", key, index);
	else
		snprintf(w->path, sizeof w->path, "%s%s%s", parent->path,
			 parent->path[0] ? "." : "", key);
}

static enum pplan_status bad(struct perr *e, const struct where *w,
			     const char *key, const char *what)
{
	return perr_set(e, PPLAN_EINPUT, "%s: %s%s%s %s", w->file, w->path,
			w->path[0] ? "." : "", key, what);
}

/* A number, or NAN when absent or null. */
static enum pplan_status num(const cJSON *o, const char *key, double *out,
			     const struct where *w, struct perr *e)
{
	struct perr typed = { "" }; /* the sentence is ours: it names the path */
	enum pplan_status st = o ? json_get_number(o, key, out, w->file, &typed) : PPLAN_ENOTFOUND;
	if (st == PPLAN_ENOTFOUND)
		*out = NAN;
	if (st == PPLAN_EINPUT)
		return bad(e, w, key, "must be a number or null");
	return PPLAN_OK;
}

/* A non-negative number, or NAN. */
static enum pplan_status nonneg(const cJSON *o, const char *key, double *out,
				const struct where *w, struct perr *e)
{
	enum pplan_status st = num(o, key, out, w, e);
	if (st == PPLAN_OK && *out < 0)
		return bad(e, w, key, "must not be negative");
	return st;
}

/* A whole number >= min, or dflt when absent. */
static enum pplan_status whole(const cJSON *o, const char *key, long min,
			       long dflt, long *out, const struct where *w,
			       struct perr *e)
{
	double v;
	enum pplan_status st = num(o, key, &v, w, e);
	*out = dflt;
	if (st != PPLAN_OK || isnan(v))
		return st;
	if (v != floor(v) || v < (double)min || v > 9.0e15) {
		char what[64];
		snprintf(what, sizeof what, "must be a whole number >= %ld", min);
		return bad(e, w, key, what);
	}
	*out = (long)v;
	return PPLAN_OK;
}

/* A string copied into buf, or "" when absent or null. */
static enum pplan_status str(const cJSON *o, const char *key, char *buf,
			     size_t len, const struct where *w, struct perr *e)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	buf[0] = '\0';
	if (!it || cJSON_IsNull(it))
		return PPLAN_OK;
	if (!cJSON_IsString(it))
		return bad(e, w, key, "must be a string or null");
	snprintf(buf, len, "%s", it->valuestring);
	return PPLAN_OK;
}

/* An object member, NULL when absent or null; anything else is refused. */
static enum pplan_status obj(const cJSON *o, const char *key,
			     const cJSON **out, const struct where *w,
			     struct perr *e)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	*out = NULL;
	if (!it || cJSON_IsNull(it))
		return PPLAN_OK;
	if (!cJSON_IsObject(it))
		return bad(e, w, key, "must be an object or null");
	*out = it;
	return PPLAN_OK;
}

static enum pplan_status arr(const cJSON *o, const char *key,
			     const cJSON **out, int max, const struct where *w,
			     struct perr *e)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	*out = NULL;
	if (!it || cJSON_IsNull(it))
		return PPLAN_OK;
	if (!cJSON_IsArray(it))
		return bad(e, w, key, "must be an array or null");
	if (cJSON_GetArraySize(it) > max) {
		char what[64];
		snprintf(what, sizeof what, "has more than %d entries", max);
		return bad(e, w, key, what);
	}
	*out = it;
	return PPLAN_OK;
}

/* Strings of an array joined by ", " into buf. */
static enum pplan_status joined(const cJSON *o, const char *key, char *buf,
				size_t len, const struct where *w, struct perr *e)
{
	const cJSON *a, *it;
	enum pplan_status st = arr(o, key, &a, 100000, w, e);
	size_t used = 0;
	buf[0] = '\0';
	if (st != PPLAN_OK || !a)
		return st;
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it))
			return bad(e, w, key, "must be an array of strings");
		if (used + 1 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? ", " : "", it->valuestring);
		if (used >= len)
			used = len - 1;
	}
	return PPLAN_OK;
}

/* ---- sections ------------------------------------------------------------ */

#define TRY(x) do { if ((st = (x)) != PPLAN_OK) return st; } while (0)

static enum pplan_status read_mem(const cJSON *o, const char *key,
				  struct rr_mem *m, const struct where *w,
				  struct perr *e)
{
	const cJSON *mo;
	struct where wm;
	enum pplan_status st;
	TRY(obj(o, key, &mo, w, e));
	where_at(&wm, w, key, -1);
	TRY(nonneg(mo, "total", &m->total, &wm, e));
	TRY(nonneg(mo, "weights", &m->weights, &wm, e));
	TRY(nonneg(mo, "gradients", &m->gradients, &wm, e));
	TRY(nonneg(mo, "optimizer", &m->optimizer, &wm, e));
	TRY(nonneg(mo, "activations", &m->activations, &wm, e));
	return nonneg(mo, "other", &m->other, &wm, e);
}

static enum pplan_status read_classes(const cJSON *o, double *cls,
				      const struct where *w, struct perr *e)
{
	const cJSON *co;
	struct where wc;
	enum pplan_status st;
	TRY(obj(o, "op_classes_s", &co, w, e));
	where_at(&wc, w, "op_classes_s", -1);
	for (int i = 0; i < OC_COUNT; i++)
		TRY(nonneg(co, op_class_key((enum op_class)i), &cls[i], &wc, e));
	return PPLAN_OK;
}

static enum pplan_status read_stages(const cJSON *o, struct rr_side *s,
				     const struct where *w, struct perr *e)
{
	const cJSON *a, *it;
	enum pplan_status st;
	int i = 0;
	TRY(arr(o, "per_stage", &a, MAX_STAGES, w, e));
	if (!a || cJSON_GetArraySize(a) == 0)
		return PPLAN_OK;
	s->stages = calloc((size_t)cJSON_GetArraySize(a), sizeof *s->stages);
	if (!s->stages)
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", w->file);
	cJSON_ArrayForEach(it, a) {
		struct rr_stage *g = &s->stages[i];
		struct where ws;
		long stage;
		where_at(&ws, w, "per_stage", i);
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s: %s must be an object",
					w->file, ws.path);
		TRY(whole(it, "stage", 0, i, &stage, &ws, e));
		if (stage >= MAX_STAGES)
			return bad(e, &ws, "stage", "is out of range");
		g->stage = (int)stage;
		TRY(nonneg(it, "busy_s", &g->busy_s, &ws, e));
		TRY(nonneg(it, "idle_s", &g->idle_s, &ws, e));
		TRY(nonneg(it, "bubble_fraction", &g->bubble_fraction, &ws, e));
		if (g->bubble_fraction > 1)
			return bad(e, &ws, "bubble_fraction", "must be between 0 and 1");
		TRY(read_mem(it, "memory_gib", &g->mem, &ws, e));
		s->n_stages = ++i;
	}
	return PPLAN_OK;
}

static enum pplan_status read_op(const cJSON *it, struct rr_op *op,
				 const struct where *w, struct perr *e)
{
	char cls[32];
	long mb, chunk;
	enum pplan_status st;
	if (!cJSON_IsObject(it))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be an object", w->file,
				w->path);
	TRY(str(it, "name", op->name, sizeof op->name, w, e));
	TRY(str(it, "class", cls, sizeof cls, w, e));
	op->cls = op_class_from_key(cls);
	if (op->cls == OC_COUNT)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s.class '%s' is not an op class (forward, backward, recompute, tp_comm, cp_comm, pp_comm, dp_comm_exposed, optimizer, idle)",
				w->file, w->path, cls);
	TRY(whole(it, "mb", -1, -1, &mb, w, e)); /* -1 or null: no microbatch */
	TRY(whole(it, "chunk", -1, -1, &chunk, w, e));
	op->mb = mb > 1000000000 ? -1 : (int)mb;
	op->chunk = chunk > 1000000 ? -1 : (int)chunk;
	TRY(nonneg(it, "start_s", &op->start_s, w, e));
	TRY(nonneg(it, "end_s", &op->end_s, w, e));
	if (isnan(op->start_s) || isnan(op->end_s))
		return perr_set(e, PPLAN_EINPUT, "%s: %s needs start_s and end_s",
				w->file, w->path);
	if (op->end_s < op->start_s)
		return perr_set(e, PPLAN_EINPUT, "%s: %s ends (%g s) before it starts (%g s)",
				w->file, w->path, op->end_s, op->start_s);
	return PPLAN_OK;
}

static enum pplan_status read_lanes(const cJSON *tl, const char *key,
				    struct rr_side *s, const struct where *w,
				    struct perr *e)
{
	const cJSON *a, *it;
	enum pplan_status st;
	int i = 0;
	TRY(arr(tl, key, &a, MAX_STAGES, w, e));
	if (!a || cJSON_GetArraySize(a) == 0)
		return PPLAN_OK;
	s->lanes = calloc((size_t)cJSON_GetArraySize(a), sizeof *s->lanes);
	if (!s->lanes)
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", w->file);
	cJSON_ArrayForEach(it, a) {
		struct rr_lane *ln = &s->lanes[i];
		struct where wl;
		const cJSON *ops, *op;
		long stage;
		int k = 0;
		where_at(&wl, w, key, i);
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s: %s must be an object",
					w->file, wl.path);
		s->n_lanes = ++i;
		TRY(whole(it, "stage", 0, i - 1, &stage, &wl, e));
		if (stage >= MAX_STAGES)
			return bad(e, &wl, "stage", "is out of range");
		ln->stage = (int)stage;
		TRY(arr(it, "ops", &ops, MAX_OPS_PER_LANE, &wl, e));
		if (!ops || cJSON_GetArraySize(ops) == 0)
			continue;
		ln->ops = calloc((size_t)cJSON_GetArraySize(ops), sizeof *ln->ops);
		if (!ln->ops)
			return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", w->file);
		cJSON_ArrayForEach(op, ops) {
			struct where wo;
			where_at(&wo, &wl, "ops", k);
			TRY(read_op(op, &ln->ops[k], &wo, e));
			ln->n_ops = ++k;
		}
	}
	return PPLAN_OK;
}

static enum pplan_status read_side(const cJSON *doc, const char *key,
				   struct rr_side *s, const struct where *top,
				   struct perr *e)
{
	const cJSON *o;
	struct where w;
	enum pplan_status st;
	int measured = strcmp(key, "measured") == 0;

	for (int i = 0; i < OC_COUNT; i++)
		s->op_classes_s[i] = NAN;
	s->mem = (struct rr_mem){ NAN, NAN, NAN, NAN, NAN, NAN };
	s->step_time_s = s->tokens_per_s = s->tflops_per_gpu = s->mfu = NAN;
	s->bubble_fraction = s->memory_gib = NAN;
	TRY(obj(doc, key, &o, top, e));
	if (!o)
		return PPLAN_OK;
	where_at(&w, top, key, -1);
	TRY(nonneg(o, "step_time_s", &s->step_time_s, &w, e));
	TRY(nonneg(o, "tokens_per_s", &s->tokens_per_s, &w, e));
	TRY(nonneg(o, "tflops_per_gpu", &s->tflops_per_gpu, &w, e));
	TRY(nonneg(o, "mfu", &s->mfu, &w, e));
	TRY(nonneg(o, "bubble_fraction", &s->bubble_fraction, &w, e));
	if (s->bubble_fraction > 1)
		return bad(e, &w, "bubble_fraction", "must be between 0 and 1");
	if (measured) {
		TRY(nonneg(o, "memory_gib_peak", &s->memory_gib, &w, e));
	} else {
		TRY(read_mem(o, "memory_gib", &s->mem, &w, e));
		s->memory_gib = s->mem.total;
	}
	TRY(read_classes(o, s->op_classes_s, &w, e));
	return read_stages(o, s, &w, e);
}

static enum pplan_status read_measured_extra(const cJSON *doc,
					     struct runreport *r,
					     const struct where *top,
					     struct perr *e)
{
	const cJSON *o, *a, *it;
	struct where w;
	enum pplan_status st;
	int i = 0;
	r->step_min_s = r->step_max_s = r->peak_tflops = NAN;
	TRY(obj(doc, "measured", &o, top, e));
	if (!o)
		return PPLAN_OK;
	where_at(&w, top, "measured", -1);
	TRY(nonneg(o, "step_time_min_s", &r->step_min_s, &w, e));
	TRY(nonneg(o, "step_time_max_s", &r->step_max_s, &w, e));
	TRY(nonneg(o, "peak_tflops", &r->peak_tflops, &w, e));
	TRY(str(o, "peak_source", r->peak_source, sizeof r->peak_source, &w, e));
	TRY(arr(o, "step_times_s", &a, MAX_STEPS, &w, e));
	if (!a || cJSON_GetArraySize(a) == 0)
		return PPLAN_OK;
	r->step_times_s = calloc((size_t)cJSON_GetArraySize(a), sizeof *r->step_times_s);
	if (!r->step_times_s)
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", w.file);
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
		    it->valuedouble < 0)
			return bad(e, &w, "step_times_s",
				   "must be an array of non-negative numbers");
		r->step_times_s[i++] = it->valuedouble;
		r->n_step_times = i;
	}
	return PPLAN_OK;
}

static enum pplan_status read_inputs(const cJSON *doc, struct runreport *r,
				     const struct where *top, struct perr *e)
{
	const cJSON *m, *c, *l, *run;
	struct where w;
	enum pplan_status st;
	long v;

	TRY(obj(doc, "model", &m, top, e));
	where_at(&w, top, "model", -1);
	TRY(str(m, "name", r->model, sizeof r->model, &w, e));
	TRY(obj(doc, "cluster", &c, top, e));
	where_at(&w, top, "cluster", -1);
	TRY(str(c, "name", r->cluster, sizeof r->cluster, &w, e));
	TRY(str(c, "gpu", r->gpu, sizeof r->gpu, &w, e));
	TRY(whole(c, "gpus", 1, -1, &r->gpus, &w, e));
	TRY(obj(doc, "layout", &l, top, e));
	where_at(&w, top, "layout", -1);
	TRY(str(l, "string", r->layout, sizeof r->layout, &w, e));
	TRY(whole(l, "pp", 1, 1, &v, &w, e));
	r->pp = v > MAX_STAGES ? MAX_STAGES : (int)v;
	TRY(whole(l, "vp", 1, 1, &v, &w, e));
	r->vp = v > MAX_STAGES ? MAX_STAGES : (int)v;
	TRY(str(l, "schedule", r->schedule, sizeof r->schedule, &w, e));
	TRY(obj(doc, "run", &run, top, e));
	where_at(&w, top, "run", -1);
	TRY(str(run, "backend", r->backend, sizeof r->backend, &w, e));
	TRY(str(run, "dtype", r->dtype, sizeof r->dtype, &w, e));
	TRY(whole(run, "steps", 0, -1, &r->steps, &w, e));
	TRY(whole(run, "warmup", 0, -1, &r->warmup, &w, e));
	TRY(whole(run, "ranks", 1, -1, &r->ranks, &w, e));
	return whole(run, "microbatches", 1, -1, &r->microbatches, &w, e);
}

static enum pplan_status read_provenance(const cJSON *doc, struct runreport *r,
					 const struct where *top,
					 struct perr *e)
{
	const cJSON *p;
	struct where w;
	enum pplan_status st;
	TRY(obj(doc, "provenance", &p, top, e));
	where_at(&w, top, "provenance", -1);
	TRY(str(p, "pplan_version", r->version, sizeof r->version, &w, e));
	TRY(str(p, "git_hash", r->git_hash, sizeof r->git_hash, &w, e));
	TRY(str(p, "date", r->date, sizeof r->date, &w, e));
	TRY(joined(p, "hosts", r->hosts, sizeof r->hosts, &w, e));
	return joined(p, "devices", r->devices, sizeof r->devices, &w, e);
}

static enum pplan_status read_status(const cJSON *doc, struct runreport *r,
				     const struct where *top, struct perr *e)
{
	char status[16];
	const cJSON *f, *c;
	struct where w;
	enum pplan_status st;
	TRY(str(doc, "status", status, sizeof status, top, e));
	if (strcmp(status, "ok") != 0 && strcmp(status, "failed") != 0 &&
	    strcmp(status, "check_failed") != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: status must be \"ok\", \"check_failed\" or \"failed\", found \"%s\"",
				top->file, status);
	r->check_failed = strcmp(status, "check_failed") == 0;
	r->ok = strcmp(status, "failed") != 0;
	TRY(obj(doc, "failure", &f, top, e));
	where_at(&w, top, "failure", -1);
	TRY(str(f, "reason", r->failure, sizeof r->failure, &w, e));
	if ((!r->ok || r->check_failed) && !r->failure[0])
		snprintf(r->failure, sizeof r->failure, "no reason given");
	/* the check's verdict must agree with the status */
	r->check_tolerance_rel = r->check_loss_err = r->check_grad_err = NAN;
	TRY(obj(doc, "check", &c, top, e));
	if (c) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "passed");
		where_at(&w, top, "check", -1);
		if (!cJSON_IsBool(p))
			return bad(e, &w, "passed", "must be true or false");
		if (cJSON_IsTrue(p) == r->check_failed)
			return perr_set(e, PPLAN_EINPUT,
					"%s: status is \"%s\" but check.passed is %s",
					top->file, status, cJSON_IsTrue(p) ? "true" : "false");
		TRY(nonneg(c, "tolerance_rel", &r->check_tolerance_rel, &w, e));
		TRY(nonneg(c, "max_loss_rel_err", &r->check_loss_err, &w, e));
		TRY(nonneg(c, "max_grad_norm_rel_err", &r->check_grad_err, &w, e));
	} else if (r->check_failed) {
		return perr_set(e, PPLAN_EINPUT, "%s: status is \"check_failed\" but there is no check",
				top->file);
	}
	return whole(doc, "steps_completed", 0, 0, &r->steps_completed, top, e);
}

static enum pplan_status read_timeline(const cJSON *doc, struct runreport *r,
				       const struct where *top, struct perr *e)
{
	const cJSON *tl;
	struct where w;
	enum pplan_status st;
	TRY(obj(doc, "timeline", &tl, top, e));
	r->timeline_step = -1;
	if (!tl)
		return PPLAN_OK;
	where_at(&w, top, "timeline", -1);
	TRY(whole(tl, "step", 0, -1, &r->timeline_step, &w, e));
	TRY(read_lanes(tl, "predicted", &r->pred, &w, e));
	return read_lanes(tl, "measured", &r->meas, &w, e);
}

enum pplan_status runreport_load(const char *path, struct runreport *r,
				 struct perr *e)
{
	cJSON *doc = NULL;
	const cJSON *schema;
	struct where top = { path, "" };
	enum pplan_status st;

	memset(r, 0, sizeof *r);
	snprintf(r->path, sizeof r->path, "%s", path);
	st = json_read_limited(path, JSON_MAX_BYTES, "a report", &doc, e);
	if (st != PPLAN_OK)
		return st;
	schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (!cJSON_IsObject(doc)) {
		st = perr_set(e, PPLAN_EINPUT, "%s: not a JSON object, so not a %s report",
			      path, RUNREPORT_SCHEMA);
		goto fail;
	}
	if (!cJSON_IsString(schema)) {
		st = perr_set(e, PPLAN_EINPUT, "%s: no \"schema\" key, so not a %s report",
			      path, RUNREPORT_SCHEMA);
		goto fail;
	}
	if (strcmp(schema->valuestring, RUNREPORT_SCHEMA) != 0) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: schema is \"%.80s\", but this pplan reads only %s reports",
			      path, schema->valuestring, RUNREPORT_SCHEMA);
		goto fail;
	}
	if ((st = read_status(doc, r, &top, e)) != PPLAN_OK ||
	    (st = read_inputs(doc, r, &top, e)) != PPLAN_OK ||
	    (st = read_side(doc, "predicted", &r->pred, &top, e)) != PPLAN_OK ||
	    (st = read_side(doc, "measured", &r->meas, &top, e)) != PPLAN_OK ||
	    (st = read_measured_extra(doc, r, &top, e)) != PPLAN_OK ||
	    (st = read_timeline(doc, r, &top, e)) != PPLAN_OK ||
	    (st = read_provenance(doc, r, &top, e)) != PPLAN_OK)
		goto fail;
	cJSON_Delete(doc);
	return PPLAN_OK;
fail:
	cJSON_Delete(doc);
	runreport_free(r);
	return st;
}

static void side_free(struct rr_side *s)
{
	for (int i = 0; i < s->n_lanes; i++)
		free(s->lanes[i].ops);
	free(s->lanes);
	free(s->stages);
	s->lanes = NULL;
	s->stages = NULL;
	s->n_lanes = s->n_stages = 0;
}

void runreport_free(struct runreport *r)
{
	side_free(&r->pred);
	side_free(&r->meas);
	free(r->step_times_s);
	r->step_times_s = NULL;
	r->n_step_times = 0;
}
