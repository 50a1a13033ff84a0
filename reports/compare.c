/*
 * compare.c: predicted against measured over executed runs (compare.h).
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonio.h"
#include "table.h"
#include "version.h"


/* The headline quantities; the op classes follow from run_report.h. */
static const struct {
	const char *key, *label, *unit;
	double scale;   /* JSON unit -> table unit */
} headline[CQ_CLASS0] = {
	[CQ_STEP_TIME] = { "step_time_s", "step time", "s", 1 },
	[CQ_TOKENS_PER_S] = { "tokens_per_s", "tokens/s", "tok/s", 1 },
	[CQ_MFU] = { "mfu", "MFU", "%", 100 },
	[CQ_BUBBLE] = { "bubble_fraction", "bubble fraction", "%", 100 },
	[CQ_MEMORY] = { "memory_gib_peak", "peak memory", "GiB", 1 },
};

const char *cmp_qty_key(enum cmp_qty q)
{
	return q < CQ_CLASS0 ? headline[q].key : op_class_key((enum op_class)(q - CQ_CLASS0));
}

const char *cmp_qty_label(enum cmp_qty q)
{
	return q < CQ_CLASS0 ? headline[q].label
			     : op_class_name((enum op_class)(q - CQ_CLASS0));
}

const char *cmp_qty_unit(enum cmp_qty q)
{
	return q < CQ_CLASS0 ? headline[q].unit : "s";
}

double cmp_qty_scale(enum cmp_qty q)
{
	return q < CQ_CLASS0 ? headline[q].scale : 1;
}

/* ---- building -------------------------------------------------------------- */

/* A relative error where it means something: not for a share such as
 * the bubble fraction, which is often near 0 (a bubble of 0.003 % priced
 * 0 is -100 % off) and is compared in percentage points. */
static struct cmp_value value_of(double p, double m, int relative)
{
	struct cmp_value v = { p, m, NAN, NAN };
	if (isfinite(p) && isfinite(m)) {
		v.diff = p - m;
		if (relative && m != 0)
			v.error_pct = 100 * (p - m) / m;
	}
	return v;
}

static void values_of(const struct runreport *r, struct cmp_value *v)
{
	v[CQ_STEP_TIME] = value_of(r->pred.step_time_s, r->meas.step_time_s, 1);
	v[CQ_TOKENS_PER_S] = value_of(r->pred.tokens_per_s, r->meas.tokens_per_s, 1);
	v[CQ_MFU] = value_of(r->pred.mfu, r->meas.mfu, 1);
	v[CQ_BUBBLE] = value_of(r->pred.bubble_fraction, r->meas.bubble_fraction, 0);
	v[CQ_MEMORY] = value_of(r->pred.memory_gib, r->meas.memory_gib, 1);
	for (int k = 0; k < OC_COUNT; k++)
		v[CQ_CLASS0 + k] = value_of(r->pred.op_classes_s[k],
					    r->meas.op_classes_s[k], 1);
}

static void summarize(struct comparison *c, int q)
{
	struct cmp_summary *s = &c->summary[q];
	double sum = 0, sumd = 0;
	int nd = 0;
	*s = (struct cmp_summary){ 0, NAN, NAN, -1, NAN, NAN, 0, -1 };
	for (int i = 0; i < c->n; i++) {
		const struct cmp_value *v = &c->values[i][q];
		if (isfinite(v->diff)) {
			sumd += fabs(v->diff);
			if (nd++ == 0 || fabs(v->diff) > fabs(s->worst_diff)) {
				s->worst_diff = v->diff;
				s->worst_diff_report = i;
			}
		}
		if (!isfinite(v->error_pct))
			continue;
		sum += fabs(v->error_pct);
		if (s->n++ == 0 || fabs(v->error_pct) > fabs(s->worst_pct)) {
			s->worst_pct = v->error_pct;
			s->worst_report = i;
		}
	}
	if (s->n > 0)
		s->mape_pct = sum / s->n;
	if (nd > 0)
		s->mean_abs_diff = sumd / nd;
	s->n_diff = nd;
}

/* Adds a warning when some report's `what` differs from the first's:
 * "the reports are of different LABEL: [1] a, [2] b, ...". */
static void warn_if_differ(struct comparison *c, const char *label,
			   void (*what)(const struct runreport *, char *, size_t))
{
	char first[256], cur[256], *w;
	size_t used;
	int differ = 0;
	if (c->n_warnings >= (int)(sizeof c->warnings / sizeof c->warnings[0]))
		return;
	what(&c->reports[0], first, sizeof first);
	for (int i = 1; i < c->n && !differ; i++) {
		what(&c->reports[i], cur, sizeof cur);
		differ = strcmp(first, cur) != 0;
	}
	if (!differ)
		return;
	w = c->warnings[c->n_warnings++];
	used = (size_t)snprintf(w, sizeof c->warnings[0],
				"the reports are of different %s:", label);
	for (int i = 0; i < c->n && used < sizeof c->warnings[0]; i++) {
		what(&c->reports[i], cur, sizeof cur);
		used += (size_t)snprintf(w + used, sizeof c->warnings[0] - used,
					 "%s [%d] %s", i ? "," : "", i + 1, cur);
	}
}

static void what_model(const struct runreport *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s", r->model[0] ? r->model : "(no model name)");
}

/* The machine: its device and its hosts. */
static void what_machine(const struct runreport *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s on %s", r->gpu[0] ? r->gpu : "(no device)",
		 r->hosts[0] ? r->hosts : "(no host)");
}

enum pplan_status compare_build(const struct runreport *reports, int n,
				struct comparison *c, struct perr *e)
{
	memset(c, 0, sizeof *c);
	if (n < 1)
		return perr_set(e, PPLAN_EINPUT, "no reports to compare");
	c->values = calloc((size_t)n, sizeof *c->values);
	if (!c->values)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the comparison");
	c->n = n;
	c->reports = reports;
	for (int i = 0; i < n; i++)
		values_of(&reports[i], c->values[i]);
	for (int q = 0; q < CQ_COUNT; q++)
		summarize(c, q);
	warn_if_differ(c, "models", what_model);
	warn_if_differ(c, "machines", what_machine);
	return PPLAN_OK;
}

void compare_free(struct comparison *c)
{
	free(c->values);
	c->values = NULL;
	c->n = 0;
}

/* ---- the table ------------------------------------------------------------- */

/* A number of the table with digits that suit its size; `sign` writes
 * a '+' before positive numbers (differences). */
static const char *fmt_num(char *buf, size_t len, double v, int sign)
{
	double a = fabs(v);
	if (!isfinite(v))
		return table_num(buf, len, "%g", v);
	if (a == 0)
		snprintf(buf, len, "0");
	else if (a >= 1e5)
		snprintf(buf, len, sign ? "%+.0f" : "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, sign ? "%+.1f" : "%.1f", v);
	else if (a >= 1)
		snprintf(buf, len, sign ? "%+.3f" : "%.3f", v);
	else if (a >= 1e-3)
		snprintf(buf, len, sign ? "%+.5f" : "%.5f", v);
	else
		snprintf(buf, len, sign ? "%+.2e" : "%.2e", v);
	return buf;
}

static void date_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* An op class that takes no time on either side: left out of the table. */
static int both_zero(const struct cmp_value *v)
{
	return (v->predicted == 0 || isnan(v->predicted)) &&
	       (v->measured == 0 || isnan(v->measured));
}

static int class_unused(const struct comparison *c, int q)
{
	for (int i = 0; i < c->n; i++)
		if (!both_zero(&c->values[i][q]))
			return 0;
	return 1;
}

static void print_report_line(FILE *f, int i, const struct runreport *r)
{
	fprintf(f, "# [%d] %s: %s on %s (%s", i + 1, r->path,
		r->model[0] ? r->model : "?", r->cluster[0] ? r->cluster : "?",
		r->gpu[0] ? r->gpu : "?");
	if (r->gpus > 0)
		fprintf(f, " x %ld", r->gpus);
	fprintf(f, "), layout %s", r->layout[0] ? r->layout : "?");
	if (r->backend[0])
		fprintf(f, ", backend %s %s", r->backend, r->dtype);
	if (r->steps >= 0)
		fprintf(f, ", %ld timed steps", r->steps);
	if (r->warmup >= 0)
		fprintf(f, " after %ld warm-up", r->warmup);
	fprintf(f, "; pplan %s git %s", r->version[0] ? r->version : "?",
		r->git_hash[0] ? r->git_hash : "?");
	if (r->hosts[0])
		fprintf(f, " on %s", r->hosts);
	if (r->date[0])
		fprintf(f, " at %s", r->date);
	fprintf(f, "\n");
	if (!r->ok)
		fprintf(f, "# [%d] the run failed after %ld steps: %s\n", i + 1,
			r->steps_completed, r->failure);
	else if (r->check_failed)
		fprintf(f, "# [%d] CHECK FAILED: %s\n", i + 1, r->failure);
}

void compare_print(FILE *f, const struct comparison *c, const char *command)
{
	static const struct table_col cols[] = {
		{ "report", "", 6, 0 }, { "quantity", "", 16, 1 },
		{ "unit", "", 5, 1 }, { "predicted", "", 11, 0 },
		{ "measured", "", 11, 0 }, { "diff", "(unit)", 11, 0 },
		{ "error", "(%)", 7, 0 },
	};
	static const struct table_col scols[] = {
		{ "quantity", "", 16, 1 }, { "unit", "", 5, 1 },
		{ "reports", "", 7, 0 }, { "MAPE", "(%)", 7, 0 },
		{ "worst", "(%)", 7, 0 }, { "in", "(report)", 8, 0 },
		{ "mean|diff|", "(unit)", 11, 0 }, { "worst diff", "(unit)", 11, 0 },
	};
	int ncols = (int)(sizeof cols / sizeof cols[0]);
	int nscols = (int)(sizeof scols / sizeof scols[0]);
	char date[32];

	date_now(date, sizeof date);
	fprintf(f, "# pplan report compare: pplan %s, git %s, %s\n", PPLAN_VERSION,
		PPLAN_GIT_HASH, date);
	if (command)
		fprintf(f, "# command: %s\n", command);
	fprintf(f, "# error = 100 x (predicted - measured) / measured; diff = predicted - measured (bubble fraction: percentage points, its only error)\n");
	fprintf(f, "# op classes: seconds per step, mean over ranks; a class that takes no time on either side is left out\n");
	for (int i = 0; i < c->n; i++)
		print_report_line(f, i, &c->reports[i]);
	for (int w = 0; w < c->n_warnings; w++)
		fprintf(f, "# warning: %s\n", c->warnings[w]);
	fprintf(f, "#\n");
	table_header(f, cols, ncols);
	for (int i = 0; i < c->n; i++) {
		for (int q = 0; q < CQ_COUNT; q++) {
			const struct cmp_value *v = &c->values[i][q];
			double s = cmp_qty_scale((enum cmp_qty)q);
			char cell[7][32];
			const char *cp[7];
			if (q >= CQ_CLASS0 && both_zero(v))
				continue;
			snprintf(cell[0], 32, "%d", i + 1);
			snprintf(cell[1], 32, "%s", cmp_qty_label((enum cmp_qty)q));
			snprintf(cell[2], 32, "%s", cmp_qty_unit((enum cmp_qty)q));
			fmt_num(cell[3], 32, s * v->predicted, 0);
			fmt_num(cell[4], 32, s * v->measured, 0);
			fmt_num(cell[5], 32, s * v->diff, 1);
			table_num(cell[6], 32, "%+.1f", v->error_pct);
			for (int k = 0; k < 7; k++)
				cp[k] = cell[k];
			table_row(f, cols, ncols, cp);
		}
	}
	fprintf(f, "#\n# summary over %d report%s: mean absolute percentage error (MAPE) and the worst case\n",
		c->n, c->n == 1 ? "" : "s");
	table_header(f, scols, nscols);
	for (int q = 0; q < CQ_COUNT; q++) {
		const struct cmp_summary *s = &c->summary[q];
		double sc = cmp_qty_scale((enum cmp_qty)q);
		char cell[8][32];
		const char *cp[8];
		if (q >= CQ_CLASS0 && class_unused(c, q))
			continue;
		int bub = q == CQ_BUBBLE, worst = bub ? s->worst_diff_report : s->worst_report;
		snprintf(cell[0], 32, "%s", cmp_qty_label((enum cmp_qty)q));
		snprintf(cell[1], 32, "%s", cmp_qty_unit((enum cmp_qty)q));
		snprintf(cell[2], 32, "%d", bub ? s->n_diff : s->n);
		table_num(cell[3], 32, "%.1f", s->mape_pct);
		table_num(cell[4], 32, "%+.1f", s->worst_pct);
		if (worst >= 0)
			snprintf(cell[5], 32, "%d", worst + 1);
		else
			snprintf(cell[5], 32, "-");
		fmt_num(cell[6], 32, sc * s->mean_abs_diff, 0);
		fmt_num(cell[7], 32, sc * s->worst_diff, 1);
		for (int k = 0; k < 8; k++)
			cp[k] = cell[k];
		table_row(f, scols, nscols, cp);
	}
	if (isfinite(c->summary[CQ_STEP_TIME].mape_pct))
		fprintf(f, "# step time MAPE %.1f %% over %d report%s (worst %+.1f %%, report %d)\n",
			c->summary[CQ_STEP_TIME].mape_pct, c->summary[CQ_STEP_TIME].n,
			c->summary[CQ_STEP_TIME].n == 1 ? "" : "s",
			c->summary[CQ_STEP_TIME].worst_pct,
			c->summary[CQ_STEP_TIME].worst_report + 1);
}

/* ---- pplan.comparison/1 ---------------------------------------------------- */

static cJSON *value_json(const struct cmp_value *v, int bubble)
{
	cJSON *o = cJSON_CreateObject();
	json_add_number_or_null(o, "predicted", v->predicted);
	json_add_number_or_null(o, "measured", v->measured);
	json_add_number_or_null(o, "diff", v->diff);
	json_add_number_or_null(o, "error_pct", v->error_pct);
	if (bubble)
		json_add_number_or_null(o, "diff_pts", 100 * v->diff);
	return o;
}

static cJSON *summary_json(const struct cmp_summary *s, int bubble)
{
	cJSON *o = cJSON_CreateObject();
	int worst = bubble ? s->worst_diff_report : s->worst_report;
	cJSON_AddNumberToObject(o, "reports", bubble ? s->n_diff : s->n);
	json_add_number_or_null(o, "mape_pct", s->mape_pct);
	json_add_number_or_null(o, "worst_error_pct", s->worst_pct);
	if (worst >= 0)
		cJSON_AddNumberToObject(o, "worst_report", worst);
	else
		cJSON_AddNullToObject(o, "worst_report");
	json_add_number_or_null(o, "mean_abs_diff", s->mean_abs_diff);
	json_add_number_or_null(o, "worst_diff", s->worst_diff);
	if (bubble) {
		json_add_number_or_null(o, "mean_abs_diff_pts", 100 * s->mean_abs_diff);
		json_add_number_or_null(o, "worst_diff_pts", 100 * s->worst_diff);
	}
	return o;
}

static void add_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (s && s[0])
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *report_entry(const struct comparison *c, int i)
{
	const struct runreport *r = &c->reports[i];
	cJSON *o = cJSON_CreateObject(), *cls;
	cJSON_AddNumberToObject(o, "index", i);
	cJSON_AddStringToObject(o, "file", r->path);
	cJSON_AddStringToObject(o, "status", !r->ok ? "failed" : r->check_failed ? "check_failed" : "ok");
	add_str_or_null(o, "failure", r->ok && !r->check_failed ? NULL : r->failure);
	add_str_or_null(o, "model", r->model);
	add_str_or_null(o, "cluster", r->cluster);
	add_str_or_null(o, "device", r->gpu);
	add_str_or_null(o, "layout", r->layout);
	add_str_or_null(o, "backend", r->backend);
	add_str_or_null(o, "hosts", r->hosts);
	for (int q = 0; q < CQ_CLASS0; q++)
		cJSON_AddItemToObject(o, cmp_qty_key((enum cmp_qty)q),
				      value_json(&c->values[i][q], q == CQ_BUBBLE));
	cls = cJSON_AddObjectToObject(o, "op_classes_s");
	for (int k = 0; k < OC_COUNT; k++)
		cJSON_AddItemToObject(cls, op_class_key((enum op_class)k),
				      value_json(&c->values[i][CQ_CLASS0 + k], 0));
	return o;
}

cJSON *compare_json(const struct comparison *c, const char *command)
{
	cJSON *doc = cJSON_CreateObject(), *prov, *a, *sum, *cls;
	char date[32];
	date_now(date, sizeof date);
	cJSON_AddStringToObject(doc, "schema", COMPARISON_SCHEMA);
	prov = cJSON_AddObjectToObject(doc, "provenance");
	cJSON_AddStringToObject(prov, "pplan_version", PPLAN_VERSION);
	cJSON_AddStringToObject(prov, "git_hash", PPLAN_GIT_HASH);
	add_str_or_null(prov, "command", command);
	cJSON_AddStringToObject(prov, "date", date);
	a = cJSON_AddArrayToObject(doc, "warnings");
	for (int w = 0; w < c->n_warnings; w++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->warnings[w]));
	a = cJSON_AddArrayToObject(doc, "reports");
	for (int i = 0; i < c->n; i++)
		cJSON_AddItemToArray(a, report_entry(c, i));
	sum = cJSON_AddObjectToObject(doc, "summary");
	cJSON_AddNumberToObject(sum, "reports", c->n);
	for (int q = 0; q < CQ_CLASS0; q++)
		cJSON_AddItemToObject(sum, cmp_qty_key((enum cmp_qty)q),
				      summary_json(&c->summary[q], q == CQ_BUBBLE));
	cls = cJSON_AddObjectToObject(sum, "op_classes_s");
	for (int k = 0; k < OC_COUNT; k++)
		cJSON_AddItemToObject(cls, op_class_key((enum op_class)k),
				      summary_json(&c->summary[CQ_CLASS0 + k], 0));
	return doc;
}
