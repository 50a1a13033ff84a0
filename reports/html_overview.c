/*
 * html_overview.c: the first section of a page of several executed runs:
 * each run's step time and bubble fraction, predicted beside measured, and
 * the mean absolute percentage error over the runs, as `pplan report
 * compare` computes them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html_internal.h"

/* "pp=2 mbs=1 gbs=16 1f1b" from a layout string: the degrees above 1 and
 * the switches that are on, so that a row label stays short. */
static void short_layout(const char *s, char *buf, size_t len)
{
	char copy[256], *save = NULL;
	size_t used = 0;
	snprintf(copy, sizeof copy, "%s", s);
	buf[0] = '\0';
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v)
			continue;
		*v++ = '\0';
		if ((strlen(kv) == 2 && strchr("tpdcevp", kv[0]) && !strcmp(kv + 1, "p") && !strcmp(v, "1")) ||
		    !strcmp(v, "off") || !strcmp(v, "none") || (!strcmp(kv, "zero") && !strcmp(v, "0")))
			continue;
		if (used + 1 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", used ? " " : "",
						 !strcmp(kv, "schedule") ? "" : kv,
						 !strcmp(kv, "schedule") ? "" : "=", v);
	}
}

/* One chart: a pair of bars per run (predicted light, measured dark) of
 * quantity q, and the error at the right end of the row. */
static void pairs(struct sbuf *b, const struct comparison *c, enum cmp_qty q,
		  const char *title, const char *aria)
{
	const double left = 300, right = 120, top = 12, row_h = 40;
	double vmax = 0, s = cmp_qty_scale(q), height = top + c->n * row_h + 50;
	struct axis ax;
	const char *unit = cmp_qty_unit(q);
	char axis_title[96];
	for (int i = 0; i < c->n; i++) {
		const struct cmp_value *v = &c->values[i][q];
		if (isfinite(v->predicted))
			vmax = fmax(vmax, s * v->predicted);
		if (isfinite(v->measured))
			vmax = fmax(vmax, s * v->measured);
	}
	if (!(vmax > 0))
		vmax = 1;
	ax = (struct axis){ 0, vmax, left, HTML_PLOT_W - right, 0 };
	axis_nice(&ax.lo, &ax.hi, 0);
	snprintf(axis_title, sizeof axis_title, "%s (%s)", title, unit);
	sbuf_printf(b, "<svg class=\"overview\" viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"%s\">\n",
		    HTML_PLOT_W, height, aria);
	svg_axis_x(b, &ax, top + c->n * row_h + 4, top - 4, axis_title);
	for (int i = 0; i < c->n; i++) {
		const struct runreport *r = &c->reports[i];
		const struct cmp_value *v = &c->values[i][q];
		double y = top + i * row_h, x0 = axis_px(&ax, 0);
		double p = isfinite(v->predicted) ? s * v->predicted : 0;
		double m = isfinite(v->measured) ? s * v->measured : 0;
		char lb[160];
		short_layout(r->layout, lb, sizeof lb);
		sbuf_printf(b, "<g class=\"run\"><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\"><tspan font-weight=\"600\">[%d]</tspan> ",
			    left - 8, y + 20, i + 1);
		sbuf_esc(b, lb);
		sbuf_printf(b, "</text>");
		sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"#4c78a8\" fill-opacity=\"0.45\"><title>predicted %.4g %s</title></rect>",
			    x0, y + 4, axis_px(&ax, p) - x0, p, unit);
		sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"#4c78a8\"><title>measured %.4g %s</title></rect>",
			    x0, y + 19, axis_px(&ax, m) - x0, m, unit);
		sbuf_printf(b, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\">%.4g / %.4g %s</text>",
			    fmax(axis_px(&ax, p), axis_px(&ax, m)) + 6, y + 22, p, m, unit);
		if (q == CQ_BUBBLE && isfinite(v->diff))
			sbuf_printf(b, "<text class=\"t%s\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-weight=\"600\">%+.1f pts</text>",
				    html_grade_pts(v->diff),
				    HTML_PLOT_W - 8, y + 22, 100 * v->diff);
		else if (isfinite(v->error_pct))
			sbuf_printf(b, "<text class=\"t%s\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-weight=\"600\">%+.1f %%</text>",
				    html_grade_pct(v->error_pct), HTML_PLOT_W - 8, y + 22, v->error_pct);
		sbuf_printf(b, "</g>\n");
	}
	sbuf_printf(b, "</svg>\n");
}

void html_overview_section(struct sbuf *b, const struct comparison *c)
{
	sbuf_printf(b, "<section id=\"overview\">\n<h2><span class=\"kind\">runs</span>%d runs, predicted against measured</h2>\n",
		    c->n);
	for (int w = 0; w < c->n_warnings; w++) {
		sbuf_printf(b, "<div class=\"banner warn\">Note: ");
		sbuf_esc(b, c->warnings[w]);
		sbuf_printf(b, "</div>\n");
	}
	sbuf_printf(b, "<p class=\"caption\">Each run's step time and bubble fraction: predicted (light) above measured (dark).</p>\n");
	pairs(b, c, CQ_STEP_TIME, "step time", "step time of each run");
	pairs(b, c, CQ_BUBBLE, "bubble fraction", "bubble fraction of each run");
	sbuf_printf(b, "<h3>Over the runs</h3>\n<p class=\"caption\">MAPE: the mean absolute percentage error. The bubble fraction, a share that is often near 0, is compared in percentage points: its worst difference and mean |diff|.</p>\n<table class=\"summary\"><thead><tr><th class=\"l\">quantity</th><th>runs</th><th>MAPE</th><th>worst</th><th>in run</th><th>mean |diff|</th></tr>"
		    "<tr class=\"units\"><th class=\"l\"></th><th></th><th>(%%)</th><th>(%%)</th><th></th><th>(unit)</th></tr></thead><tbody>\n");
	for (int q = 0; q < CQ_COUNT; q++) {
		const struct cmp_summary *s = &c->summary[q];
		double sc = cmp_qty_scale((enum cmp_qty)q);
		if (q >= CQ_CLASS0 && s->n == 0)
			continue;
		if (q == CQ_BUBBLE) {
			/* A share near 0: compared in percentage points. */
			sbuf_printf(b, "<tr><td class=\"l\">%s (%s)</td><td>%d</td><td>&ndash;</td>",
				    cmp_qty_label((enum cmp_qty)q), cmp_qty_unit((enum cmp_qty)q), s->n_diff);
			if (s->n_diff > 0)
				sbuf_printf(b, "<td><span class=\"err %s\">%+.1f pts</span></td><td>[%d]</td><td>%.3g pts</td></tr>\n",
					    html_grade_pts(s->worst_diff),
					    100 * s->worst_diff, s->worst_diff_report + 1, 100 * s->mean_abs_diff);
			else
				sbuf_printf(b, "<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td></tr>\n");
			continue;
		}
		sbuf_printf(b, "<tr><td class=\"l\">%s (%s)</td><td>%d</td>", cmp_qty_label((enum cmp_qty)q),
			    cmp_qty_unit((enum cmp_qty)q), s->n);
		if (s->n > 0)
			sbuf_printf(b, "<td>%.1f</td><td><span class=\"err %s\">%+.1f %%</span></td><td>[%d]</td>",
				    s->mape_pct, html_grade_pct(s->worst_pct), s->worst_pct, s->worst_report + 1);
		else
			sbuf_printf(b, "<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>");
		if (isfinite(s->mean_abs_diff))
			sbuf_printf(b, "<td>%.4g</td></tr>\n", sc * s->mean_abs_diff);
		else
			sbuf_printf(b, "<td>&ndash;</td></tr>\n");
	}
	sbuf_printf(b, "</tbody></table>\n</section>\n");
}
