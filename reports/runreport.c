/*
 * runreport.c: the pplan.report/1 reader (runreport.h).
 *
 * The reader follows docs/report-format.md key by key.  It is strict about
 * types (a string where a number belongs is refused with the key's path)
 * and lenient about absence (a missing number is NAN, shown as "-"), since
 * a failed run's report holds only part of the measured side.
 */
#include "runreport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

#define MAX_STAGES 4096
#define MAX_OPS_PER_LANE 1000000
#define MAX_STEPS 10000000

static const char *const class_keys[OPC_COUNT] = {
	"forward", "backward", "recompute", "tp_comm", "cp_comm", "pp_comm",
	"dp_comm_exposed", "optimizer", "idle",
};
static const char *const class_labels[OPC_COUNT] = {
	"forward", "backward", "recompute", "TP comm", "CP comm", "PP comm",
	"DP exposed", "optimizer", "idle",
};

const char *opclass_key(enum op_class c)
{
	return (c >= 0 && c < OPC_COUNT) ? class_keys[c] : "?";
}

const char *opclass_label(enum op_class c)
{
	return (c >= 0 && c < OPC_COUNT) ? class_labels[c] : "?";
}

enum op_class opclass_from_key(const char *key)
{
	for (int i = 0; i < OPC_COUNT; i++)
		if (key && strcmp(key, class_keys[i]) == 0)
			return (enum op_class)i;
	return OPC_COUNT;
}

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
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	*out = NAN;
	if (!it || cJSON_IsNull(it))
		return PPLAN_OK;
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return bad(e, w, key, "must be a number or null");
	*out = it->valuedouble;
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
	for (int i = 0; i < OPC_COUNT; i++)
		TRY(nonneg(co, class_keys[i], &cls[i], &wc, e));
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
	op->cls = opclass_from_key(cls);
	if (op->cls == OPC_COUNT)
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

	for (int i = 0; i < OPC_COUNT; i++)
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
	const cJSON *f;
	struct where w;
	enum pplan_status st;
	TRY(str(doc, "status", status, sizeof status, top, e));
	if (strcmp(status, "ok") != 0 && strcmp(status, "failed") != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: status must be \"ok\" or \"failed\", found \"%s\"",
				top->file, status);
	r->ok = strcmp(status, "ok") == 0;
	TRY(obj(doc, "failure", &f, top, e));
	where_at(&w, top, "failure", -1);
	TRY(str(f, "reason", r->failure, sizeof r->failure, &w, e));
	if (!r->ok && !r->failure[0])
		snprintf(r->failure, sizeof r->failure, "no reason given");
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
