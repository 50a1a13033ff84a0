/*
 * html_internal.h: what the parts of the HTML page (html.c, html_exec.c,
 * html_search.c) share.  Not an interface for other modules.
 */
#ifndef PPLAN_HTML_INTERNAL_H
#define PPLAN_HTML_INTERNAL_H

#include <cjson/cJSON.h>

#include "compare.h"
#include "run_report.h"
#include "svg.h"

/* The drawing width of every plot (viewBox units; CSS scales it to the
 * page, which is at most this wide). */
#define HTML_PLOT_W 1200

/* How good an error is, as the CSS class of its badge: a relative error
 * within 10 %, within 25 % or worse ("na" when not defined); a share's
 * difference (the bubble fraction, a fraction) within 5, 10 points or
 * worse. */
const char *html_grade_pct(double pct);
const char *html_grade_pts(double diff);

/* The colour of an op class, and of a strategy family (enum family). */
const char *html_class_color(enum op_class cls);
const char *html_family_color(int family);

/* One section of the page for an executed run (html_exec.c); id is the
 * section's anchor. */
void html_exec_section(struct sbuf *buf, const struct runreport *report,
		       const struct comparison *cmp, const char *id);

/* The overview of several runs (html_overview.c): step time and bubble
 * predicted beside measured per run, and the MAPE over the runs. */
void html_overview_section(struct sbuf *buf, const struct comparison *cmp);

/* One section for a pplan.search/1 document (html_search.c).  Fails with
 * a sentence naming the file and the key for a document it cannot draw;
 * then nothing was appended. */
enum pplan_status html_search_section(struct sbuf *buf, const cJSON *doc,
				      const char *path, const char *id,
				      struct perr *err);

/* Seconds in the unit a plot uses: ms below 2 s, else s. */
double html_time_scale(double max_s, const char **unit);

#endif
