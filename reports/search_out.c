/*
 * search_out.c: `pplan search` as pplan.search/1 JSON (with every priced
 * layout's point for `pplan report html`, and the origin of each default),
 * that document read back for the page, and the CSV, one row per ranked
 * layout.
 */
#include "search_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"
#include "report.h"
#include "units.h"


/* v to 5 significant digits, so that JSON prints it short. */
static double round_sig(double v)
{
	double scale;
	if (v == 0 || !isfinite(v))
		return v;
	scale = pow(10, 4 - floor(log10(fabs(v))));
	return round(v * scale) / scale;
}

static double mem_cap(const struct job *in)
{
	return in->opts.max_memory_gib > 0 ? in->opts.max_memory_gib
					   : in->cluster.gpu.mem_gib;
}

cJSON *search_out_json(const struct job *in, const struct search_params *sp,
		       const struct search_result *r)
{
	cJSON *doc = cJSON_CreateObject(), *jrej, *arr, *d;
	enum reject rej[REJECT_COUNT];
	int n_rej = search_rejects_sorted(r, rej);

	cJSON_AddStringToObject(doc, "schema", SEARCH_SCHEMA);
	cJSON_AddItemToObject(doc, "model", report_model_json(&in->model));
	cJSON_AddItemToObject(doc, "cluster", report_cluster_json(&in->cluster));
	cJSON_AddNumberToObject(doc, "global_batch", (double)in->global_batch);
	cJSON_AddNumberToObject(doc, "seq_length", (double)in->opts.seq);
	cJSON_AddStringToObject(doc, "precision", precision_name(in->opts.precision));
	report_lora_json(doc, &in->opts);
	cJSON_AddItemToObject(doc, "framework", report_framework_json(&in->opts));
	cJSON_AddNumberToObject(doc, "max_memory_gib", in->opts.max_memory_gib);
	d = cJSON_AddObjectToObject(doc, "origins");
	cJSON_AddStringToObject(d, "global_batch", in->gbs_note);
	cJSON_AddStringToObject(d, "seq_length", in->seq_note);
	cJSON_AddStringToObject(d, "max_memory_gib", in->mem_note);
	cJSON_AddStringToObject(d, "framework", in->framework_arg ? "--framework" : "default");
	cJSON_AddNumberToObject(doc, "cp_min_tokens", (double)sp->cp_min_tokens);
	cJSON_AddBoolToObject(doc, "cp_widened", r->cp_widened);
	cJSON_AddNumberToObject(doc, "evaluated", (double)r->evaluated);
	cJSON_AddNumberToObject(doc, "feasible", (double)r->feasible);
	cJSON_AddNumberToObject(doc, "search_time_s", r->seconds);
	cJSON_AddNumberToObject(doc, "rank_tolerance", sp->tolerance);
	cJSON_AddItemToObject(doc, "accuracy", report_accuracy_json(&in->cluster, &in->opts, NULL));
	if (r->n_top > 0)
		cJSON_AddNumberToObject(doc, "fastest_rank", r->fastest + 1);
	if (in->train_tokens > 0) {
		cJSON_AddNumberToObject(doc, "train_tokens", in->train_tokens);
		cJSON_AddNumberToObject(doc, "goodput", in->goodput.fraction);
		if (in->goodput_opts.gpu_hour_cost > 0)
			cJSON_AddNumberToObject(doc, "gpu_hour_cost", in->goodput_opts.gpu_hour_cost);
	}
	jrej = cJSON_AddObjectToObject(doc, "rejected");
	for (int i = 0; i < n_rej; i++)
		cJSON_AddNumberToObject(jrej, reject_key(rej[i]), (double)r->rejected[rej[i]]);
	arr = cJSON_AddArrayToObject(doc, "layouts");
	for (int i = 0; i < r->n_top; i++) {
		cJSON *it = report_prediction_fields(&r->top_preds[i]);
		char os[32];
		struct train_opts o = in->opts;
		o.order = r->top_orders[i];
		rank_order_format(&o.order, os, sizeof os);
		cJSON_AddItemToObject(it, "layout", report_layout_json(&r->top_layouts[i], &o));
		cJSON_AddStringToObject(it, "rank_order", os);
		cJSON_AddItemToObject(it, "accuracy",
				      report_accuracy_json(&in->cluster, &in->opts, &r->top_preds[i]));
		if (in->train_tokens > 0) {
			struct job_train_time t = job_train_time(in, &r->top_preds[i]);
			cJSON_AddNumberToObject(it, "train_time_s", t.seconds);
			cJSON_AddNumberToObject(it, "train_gpu_hours", t.gpu_hours);
			if (t.cost > 0)
				cJSON_AddNumberToObject(it, "train_cost", t.cost);
		}
		cJSON_AddItemToArray(arr, it);
	}
	arr = cJSON_AddObjectToObject(doc, "families");
	for (int f = 0; f < FAM_COUNT; f++) {
		const struct search_family_result *fr = &r->family[f];
		cJSON *it = cJSON_AddObjectToObject(arr, family_name((enum family)f));
		cJSON_AddBoolToObject(it, "found", fr->found);
		if (fr->found) {
			struct train_opts o = in->opts;
			o.order = fr->order;
			cJSON_AddItemToObject(it, "layout", report_layout_json(&fr->layout, &o));
			cJSON_AddNumberToObject(it, "step_time_s", fr->pred.step_time_s);
			cJSON_AddNumberToObject(it, "mfu", fr->pred.mfu);
			cJSON_AddNumberToObject(it, "memory_gib", fr->pred.mem.total / GIB);
			if (in->train_tokens > 0)
				cJSON_AddNumberToObject(it, "train_time_s",
							job_train_time(in, &fr->pred).seconds);
		} else {
			cJSON_AddStringToObject(it, "reason", reject_key(fr->why));
			if (fr->any_oom)
				cJSON_AddNumberToObject(it, "min_memory_gib", fr->min_oom_bytes / GIB);
			cJSON_AddStringToObject(it, "why", fr->why_msg);
		}
	}
	/* Every priced layout, for `pplan report html`'s plot: compact rows
	 * named by point_fields (family: the index in families). */
	cJSON_AddNumberToObject(doc, "memory_cap_gib", mem_cap(in));
	arr = cJSON_AddArrayToObject(doc, "point_fields");
	cJSON_AddItemToArray(arr, cJSON_CreateString("step_time_s"));
	cJSON_AddItemToArray(arr, cJSON_CreateString("memory_gib"));
	cJSON_AddItemToArray(arr, cJSON_CreateString("feasible"));
	cJSON_AddItemToArray(arr, cJSON_CreateString("family"));
	arr = cJSON_AddArrayToObject(doc, "family_names");
	for (int f = 0; f < FAM_COUNT; f++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(family_name((enum family)f)));
	cJSON_AddBoolToObject(doc, "points_incomplete", r->points_incomplete);
	arr = cJSON_AddArrayToObject(doc, "points");
	for (long i = 0; i < r->n_points; i++) {
		const struct search_point *pt = &r->points[i];
		double row[4] = { round_sig(pt->step_time_s), round_sig(pt->mem_gib),
				  pt->feasible, pt->family };
		cJSON_AddItemToArray(arr, cJSON_CreateDoubleArray(row, 4));
	}
	return doc;
}

enum pplan_status search_out_csv(const char *path, const struct job *in,
				 const struct search_result *r, struct perr *e)
{
	size_t cap = 512 + (size_t)r->n_top * 512, n = 0;
	char *buf = malloc(cap);
	enum pplan_status st;
	if (!buf)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the CSV report");
	n += (size_t)snprintf(buf + n, cap - n,
		"rank,layout,rank_order,step_time_s,tokens_per_s,tflops_per_gpu,mfu,memory_gib,"
		"compute_s,recompute_s,tp_comm_s,cp_comm_s,ep_comm_s,pp_comm_s,"
		"dp_comm_exposed_s,bubble_time_s,bubble_fraction,optimizer_s%s\n",
		in->train_tokens > 0 ? ",train_time_s,train_gpu_hours" : "");
	for (int i = 0; i < r->n_top && n < cap; i++) {
		const struct prediction *p = &r->top_preds[i];
		char lb[256], os[32];
		layout_format(&r->top_layouts[i], lb, sizeof lb);
		rank_order_format(&r->top_orders[i], os, sizeof os);
		n += (size_t)snprintf(buf + n, cap - n,
			"%d,\"%s\",%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g",
			i + 1, lb, os, p->step_time_s, p->tokens_per_s, p->tflops_per_gpu,
			p->mfu, p->mem.total / GIB, p->time.compute, p->time.recompute,
			p->time.tp_comm, p->time.cp_comm, p->time.ep_comm, p->time.pp_comm,
			p->time.dp_comm_exposed, p->time.bubble, p->bubble_fraction,
			p->time.optimizer);
		if (in->train_tokens > 0 && n < cap) {
			struct job_train_time t = job_train_time(in, p);
			n += (size_t)snprintf(buf + n, cap - n, ",%.6g,%.6g", t.seconds,
					      t.gpu_hours);
		}
		if (n < cap)
			n += (size_t)snprintf(buf + n, cap - n, "\n");
	}
	st = text_write_atomic(path, buf, e);
	free(buf);
	return st;
}

/* ---- reading -------------------------------------------------------------- */

#define MAX_POINTS 10000000
#define N_FAMILIES SEARCH_DOC_FAMILIES
#define MARK_OOM SEARCH_DOC_FAMILIES

static enum pplan_status bad(struct perr *e, const char *path, const char *what)
{
	return perr_set(e, PPLAN_EINPUT, "%s: %s", path, what);
}

void search_doc_str(const cJSON *o, const char *key, char *buf, size_t len)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	snprintf(buf, len, "%s", cJSON_IsString(it) ? it->valuestring : "?");
}

double search_doc_num(const cJSON *o, const char *key)
{
	struct perr ignored = { "" }; /* the page draws what it can */
	double v = NAN;
	if (!o || json_get_number(o, key, &v, "", &ignored) != PPLAN_OK)
		return NAN;
	return v;
}

/* A count for the page's text: 0 when absent, not a number or out of
 * range (a NaN cast to long is undefined; found by fuzz_report). */
static long get_count(const cJSON *o, const char *key)
{
	double v = search_doc_num(o, key);
	return v >= 0 && v <= 9e15 ? (long)v : 0;
}

static enum pplan_status read_points(struct search_doc *d, const cJSON *doc, struct perr *e)
{
	const cJSON *pts = cJSON_GetObjectItemCaseSensitive(doc, "points");
	const cJSON *fields = cJSON_GetObjectItemCaseSensitive(doc, "point_fields");
	static const char *const want[4] = { "step_time_s", "memory_gib", "feasible", "family" };
	const cJSON *row;
	int i = 0;

	if (!pts)
		return PPLAN_OK;  /* an older search document: no scatter */
	if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) > MAX_POINTS)
		return bad(e, d->path, "points must be an array of at most 10 million rows");
	if (!cJSON_IsArray(fields) || cJSON_GetArraySize(fields) != 4)
		return bad(e, d->path, "point_fields must name the 4 columns of points");
	for (int k = 0; k < 4; k++) {
		const cJSON *f = cJSON_GetArrayItem(fields, k);
		if (!cJSON_IsString(f) || strcmp(f->valuestring, want[k]) != 0)
			return bad(e, d->path,
				   "point_fields must be [\"step_time_s\", \"memory_gib\", \"feasible\", \"family\"]");
	}
	d->n_points = cJSON_GetArraySize(pts);
	if (d->n_points == 0)
		return PPLAN_OK;
	d->points = calloc((size_t)d->n_points, sizeof *d->points);
	d->marks = calloc((size_t)d->n_points, 1);
	if (!d->points || !d->marks)
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory for %d points", d->path,
				d->n_points);
	cJSON_ArrayForEach(row, pts) {
		double v[4];
		if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != 4)
			return perr_set(e, PPLAN_EINPUT, "%s: points[%d] must be 4 numbers", d->path, i);
		for (int k = 0; k < 4; k++) {
			const cJSON *x = cJSON_GetArrayItem(row, k);
			if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
				return perr_set(e, PPLAN_EINPUT, "%s: points[%d] must be 4 numbers",
						d->path, i);
			v[k] = x->valuedouble;
		}
		if (!(v[0] > 0) || !(v[1] > 0) || v[3] < 0 || v[3] >= N_FAMILIES ||
		    v[3] != floor(v[3]) || (v[2] != 0 && v[2] != 1))
			return perr_set(e, PPLAN_EINPUT,
					"%s: points[%d] needs a positive step time and memory, feasible 0 or 1 and a family 0..%d",
					d->path, i, N_FAMILIES - 1);
		d->points[i][0] = (float)v[0];
		d->points[i][1] = (float)v[1];
		d->marks[i] = v[2] ? (unsigned char)v[3] : MARK_OOM;
		i++;
	}
	return PPLAN_OK;
}

enum pplan_status search_doc_read(struct search_doc *d, const cJSON *doc, const char *path,
				   struct perr *e)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "model");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "cluster");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(doc, "family_names");
	memset(d, 0, sizeof *d);
	d->path = path;
	search_doc_str(m, "name", d->model, sizeof d->model);
	search_doc_str(c, "name", d->cluster, sizeof d->cluster);
	search_doc_str(c, "gpu", d->gpu, sizeof d->gpu);
	d->gpus = get_count(c, "gpus");
	d->evaluated = get_count(doc, "evaluated");
	d->feasible = get_count(doc, "feasible");
	d->cap_gib = search_doc_num(doc, "memory_cap_gib");
	d->layouts = cJSON_GetObjectItemCaseSensitive(doc, "layouts");
	d->families = cJSON_GetObjectItemCaseSensitive(doc, "families");
	if (!cJSON_IsArray(d->layouts))
		return bad(e, path, "layouts must be an array (is this pplan search --json output?)");
	if (d->families && !cJSON_IsObject(d->families))
		return bad(e, path, "families must be an object");
	for (int f = 0; f < N_FAMILIES; f++) {
		const cJSON *n = cJSON_IsArray(names) ? cJSON_GetArrayItem(names, f) : NULL;
		snprintf(d->family_names[f], sizeof d->family_names[f], "%s",
			 cJSON_IsString(n) ? n->valuestring : "?");
	}
	return read_points(d, doc, e);
}

void search_doc_free(struct search_doc *d)
{
	free(d->points);
	free(d->marks);
	d->points = NULL;
	d->marks = NULL;
}

