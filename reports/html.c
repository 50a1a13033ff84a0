/*
 * html.c: the page of `pplan report html` (html.h): its head and style,
 * the provenance, and one section per input, chosen by the input's schema.
 * The sections are drawn by html_exec.c and html_search.c.
 */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "html_internal.h"
#include "jsonio.h"
#include "search_out.h"
#include "version.h"


#define MAX_INPUTS 64

/* Colours that stay apart for the common colour-vision deficiencies
 * (after the Tableau 10 palette). */
static const char *const class_colors[OC_COUNT] = {
	[OC_FORWARD] = "#4c78a8",     [OC_BACKWARD] = "#f58518",
	[OC_RECOMPUTE] = "#b279a2",   [OC_TP] = "#54a24b",
	[OC_CP] = "#8cd17d",     [OC_PP] = "#e45756",
	[OC_DP] = "#72b7b2",  [OC_OPTIMIZER] = "#9d755d",
	[OC_IDLE] = "#aab0b9",
};

static const char *const family_colors[] = {
	"#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b",
	"#b279a2", "#9d755d",
};

const char *html_grade_pct(double pct)
{
	/* a hair of rounding allowed at the edges */
	return !isfinite(pct) ? "na" : fabs(pct) <= 10 + 1e-9 ? "good" :
	       fabs(pct) <= 25 + 1e-9 ? "fair" : "poor";
}

const char *html_grade_pts(double diff)
{
	double pts = fabs(100 * diff);
	return !isfinite(pts) ? "na" : pts <= 5 ? "good" : pts <= 10 ? "fair" : "poor";
}

const char *html_class_color(enum op_class c)
{
	return (c >= 0 && c < OC_COUNT) ? class_colors[c] : "#999";
}

const char *html_family_color(int family)
{
	int n = (int)(sizeof family_colors / sizeof family_colors[0]);
	return family >= 0 && family < n ? family_colors[family] : "#999";
}

double html_time_scale(double max_s, const char **unit)
{
	if (max_s < 2) {
		*unit = "ms";
		return 1e3;
	}
	*unit = "s";
	return 1;
}

static const char style[] =
	"*{box-sizing:border-box}"
	"body{margin:0;background:#f4f5f7;color:#1d2433;"
	"font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,'DejaVu Sans',sans-serif}"
	"main{max-width:1240px;margin:0 auto;padding:20px 20px 56px}"
	"header h1{font-size:26px;margin:4px 0 2px}"
	".prov{color:#5a6372;font-size:13px;margin:0}"
	"nav ol{margin:10px 0 0;padding-left:22px;color:#5a6372}"
	"nav a{color:#2f5d8c;text-decoration:none}"
	"section{background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(20,30,50,.1);"
	"padding:18px 22px 22px;margin:22px 0}"
	"h2{font-size:20px;margin:0 0 2px}"
	"h3{font-size:15px;margin:22px 0 2px}"
	".meta,.caption{color:#5a6372;font-size:13px;margin:2px 0 6px}"
	".kind{display:inline-block;font-size:11px;font-weight:700;letter-spacing:.06em;"
	"text-transform:uppercase;color:#fff;background:#2f5d8c;border-radius:4px;padding:1px 6px;"
	"margin-right:8px;vertical-align:3px}"
	".kind.search{background:#6b4c9a}"
	".cards{display:grid;grid-template-columns:repeat(5,1fr);gap:12px;margin:14px 0 4px}"
	".card{border:1px solid #e3e6eb;border-radius:8px;padding:9px 12px}"
	".card .k{font-size:12px;color:#5a6372;text-transform:uppercase;letter-spacing:.04em}"
	".card .v{font-size:23px;font-weight:650;margin:1px 0}"
	".card .p{font-size:13px;color:#5a6372}"
	".err{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:650}"
	".good{background:#e2f3e5;color:#1d6a32}.fair{background:#fcefd4;color:#855600}"
	".poor{background:#fbe0dd;color:#a1271c}.na{background:#eef0f3;color:#5a6372}"
	".banner{border-radius:8px;padding:10px 14px;margin:12px 0;font-weight:600}"
	".banner.failed{background:#fbe0dd;color:#a1271c}"
	".banner.warn{background:#fcefd4;color:#855600}"
	"svg{display:block;width:100%;height:auto;margin:4px 0}"
	"svg text{font-size:13px;fill:#1d2433}"
	"svg .small{font-size:11px;fill:#5a6372}"
	"svg .lane{font-size:12.5px}"
	"svg .onbar{font-size:10.5px;fill:#fff;font-weight:600}"
	"svg text.tgood{fill:#1d6a32}svg text.tfair{fill:#855600}svg text.tpoor{fill:#a1271c}"
	"svg .halo{paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}"
	"svg text.tmuted{fill:#5a6372;font-style:italic}svg text.tcap{fill:#a1271c;font-weight:600}"
	".axis line{stroke:#6b7383;stroke-width:1}"
	".axis line.grid{stroke:#e8eaee}"
	".axis text.title{font-weight:600}"
	"table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}"
	"th,td{padding:4px 12px;text-align:right;border-bottom:1px solid #eceef1}"
	"th{font-size:12px;color:#5a6372;font-weight:600;border-bottom:1px solid #c9ced6}"
	"th.l,td.l{text-align:left}"
	"tr.units th{font-weight:400;border-bottom:1px solid #c9ced6}"
	"thead tr:first-child th{border-bottom:none}"
	"code{font-size:12.5px;background:#f1f2f5;border-radius:4px;padding:0 4px}";

static void date_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One input: what it is, loaded and checked. */
struct input {
	const char *path;
	cJSON *search;             /* a pplan.search/1 document, or NULL */
	struct runreport rep;      /* a pplan.report/1, when !search */
	struct comparison cmp;
	int loaded;
};

static enum pplan_status input_load(struct input *in, const char *path,
				    struct perr *e)
{
	cJSON *doc = NULL;
	const cJSON *schema;
	enum pplan_status st;

	memset(in, 0, sizeof *in);
	in->path = path;
	st = json_read_file(path, &doc, e);
	if (st != PPLAN_OK)
		return st;
	schema = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "schema") : NULL;
	if (!cJSON_IsString(schema)) {
		cJSON_Delete(doc);
		return perr_set(e, PPLAN_EINPUT,
				"%s: no \"schema\" key; report html draws %s and %s documents",
				path, RUNREPORT_SCHEMA, SEARCH_SCHEMA);
	}
	if (strcmp(schema->valuestring, SEARCH_SCHEMA) == 0) {
		in->search = doc;
		in->loaded = 1;
		return PPLAN_OK;
	}
	if (strcmp(schema->valuestring, RUNREPORT_SCHEMA) != 0) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: schema is \"%.80s\", but report html draws only %s and %s documents",
			      path, schema->valuestring, RUNREPORT_SCHEMA, SEARCH_SCHEMA);
		cJSON_Delete(doc);
		return st;
	}
	cJSON_Delete(doc);
	st = runreport_load(path, &in->rep, e);
	if (st != PPLAN_OK)
		return st;
	st = compare_build(&in->rep, 1, &in->cmp, e);
	if (st != PPLAN_OK) {
		runreport_free(&in->rep);
		return st;
	}
	in->loaded = 1;
	return PPLAN_OK;
}

static void input_free(struct input *in)
{
	if (!in->loaded)
		return;
	if (in->search) {
		cJSON_Delete(in->search);
	} else {
		compare_free(&in->cmp);
		runreport_free(&in->rep);
	}
	in->loaded = 0;
}

static void page_head(struct sbuf *b, const struct input *ins, int n,
		      const char *command)
{
	char date[32];
	date_now(date, sizeof date);
	sbuf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<title>pplan report</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n",
		    style);
	sbuf_printf(b, "<header><h1>pplan report</h1><p class=\"prov\">pplan %s, git %s, made %s",
		    PPLAN_VERSION, PPLAN_GIT_HASH, date);
	if (command) {
		sbuf_printf(b, " by <code>");
		sbuf_esc(b, command);
		sbuf_printf(b, "</code>");
	}
	sbuf_printf(b, "</p>\n<nav><ol>");
	{
		int runs = 0;
		for (int i = 0; i < n; i++)
			runs += !ins[i].search;
		if (runs >= 2)
			sbuf_printf(b, "<li><a href=\"#overview\">the %d runs at a glance</a></li>", runs);
	}
	for (int i = 0; i < n; i++) {
		sbuf_printf(b, "<li><a href=\"#s%d\">", i + 1);
		if (ins[i].search) {
			sbuf_printf(b, "search: ");
		} else {
			sbuf_printf(b, "run: ");
			sbuf_esc(b, ins[i].rep.layout);
			sbuf_printf(b, " &mdash; ");
		}
		sbuf_esc(b, ins[i].path);
		sbuf_printf(b, "</a></li>");
	}
	sbuf_printf(b, "</ol></nav></header>\n");
}

/* With two or more runs: the overview over all of them first. */
static enum pplan_status overview(struct sbuf *b, const struct input *ins, int n,
				  struct perr *e)
{
	struct runreport *reps;
	struct comparison c;
	enum pplan_status st;
	int k = 0;
	for (int i = 0; i < n; i++)
		k += !ins[i].search;
	if (k < 2)
		return PPLAN_OK;
	reps = calloc((size_t)k, sizeof *reps);
	if (!reps)
		return perr_set(e, PPLAN_ENOMEM, "out of memory");
	k = 0;
	for (int i = 0; i < n; i++)
		if (!ins[i].search)
			reps[k++] = ins[i].rep; /* shallow: the inputs own the arrays */
	st = compare_build(reps, k, &c, e);
	if (st == PPLAN_OK) {
		html_overview_section(b, &c);
		compare_free(&c);
	}
	free(reps);
	return st;
}

enum pplan_status html_write(char *const *paths, int n, const char *out,
			     const char *command, struct perr *e)
{
	struct input *ins;
	struct sbuf b = { 0 };
	enum pplan_status st = PPLAN_OK;
	int loaded = 0;

	if (n < 1)
		return perr_set(e, PPLAN_EINPUT, "no input files to draw");
	if (n > MAX_INPUTS)
		return perr_set(e, PPLAN_EINPUT, "more than %d input files", MAX_INPUTS);
	ins = calloc((size_t)n, sizeof *ins);
	if (!ins)
		return perr_set(e, PPLAN_ENOMEM, "out of memory");
	for (; loaded < n; loaded++) {
		st = input_load(&ins[loaded], paths[loaded], e);
		if (st != PPLAN_OK)
			goto out;
	}
	page_head(&b, ins, n, command);
	st = overview(&b, ins, n, e);
	for (int i = 0; i < n && st == PPLAN_OK; i++) {
		char id[16];
		snprintf(id, sizeof id, "s%d", i + 1);
		if (ins[i].search)
			st = html_search_section(&b, ins[i].search, ins[i].path, id, e);
		else
			html_exec_section(&b, &ins[i].rep, &ins[i].cmp, id);
	}
	if (st != PPLAN_OK)
		goto out;
	sbuf_printf(&b, "</main>\n</body>\n</html>\n");
	if (b.failed) {
		st = perr_set(e, PPLAN_ENOMEM, "out of memory drawing the page");
		goto out;
	}
	st = text_write_atomic(out, b.s, e);
out:
	for (int i = 0; i < loaded; i++)
		input_free(&ins[i]);
	free(ins);
	sbuf_free(&b);
	return st;
}
