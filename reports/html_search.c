/*
 * html_search.c: the section of `pplan report html` for a `pplan search
 * --json` result (pplan.search/1): step time against memory per GPU for
 * every priced layout, the best member of each strategy family as bars,
 * and the best layouts as a table.
 *
 * The scatter can hold tens of thousands of layouts; points that fall on
 * the same pixel (same mark) are drawn once, as zero-length round-capped
 * strokes of one path per mark, so the page stays small.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "search_out.h"

#define MARK_OOM SEARCH_DOC_FAMILIES /* the mark of out-of-memory layouts */

/* "tp4 pp2 dp32 cp2 vp8 mbs1 sp+ rc-none z1 interleaved" from a layout object. */
static void short_layout(const cJSON *l, char *buf, size_t len)
{
	char rc[24], sched[24];
	double cp = search_doc_num(l, "cp"), ep = search_doc_num(l, "ep");
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(l, "sp");
	size_t n;
	search_doc_str(l, "recompute", rc, sizeof rc);
	search_doc_str(l, "schedule", sched, sizeof sched);
	n = (size_t)snprintf(buf, len, "tp%g pp%g dp%g", search_doc_num(l, "tp"), search_doc_num(l, "pp"),
			     search_doc_num(l, "dp"));
	if (cp > 1 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " cp%g", cp);
	if (ep > 1 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " ep%g", ep);
	if (n < len)
		snprintf(buf + n, len - n, " vp%g mbs%g sp%s rc-%s z%g %s", search_doc_num(l, "vp"),
			 search_doc_num(l, "mbs"), cJSON_IsTrue(sp) ? "+" : "-",
			 strcmp(rc, "selective") == 0 ? "sel" : rc, search_doc_num(l, "zero"), sched);
}

/* ---- the scatter ------------------------------------------------------------- */

static void scatter(struct sbuf *b, const struct search_doc *d)
{
	const double left = 96, right = 28, top = 46, bottom = 470;
	const cJSON *best = cJSON_GetArrayItem(d->layouts, 0);
	double best_t = NAN, best_m = NAN;
	double tlo = INFINITY, thi = 0, mlo = INFINITY, mhi = 0;
	struct axis ax, ay;
	unsigned char *seen;
	int w = HTML_PLOT_W, h = (int)bottom + 60, order[SEARCH_DOC_FAMILIES + 1];

	if (best) {
		best_t = search_doc_num(best, "step_time_s");
		best_m = search_doc_num(cJSON_GetObjectItemCaseSensitive(best, "memory_gib"), "total");
	}
	for (int i = 0; i < d->n_points; i++) {
		tlo = fmin(tlo, d->points[i][0]), thi = fmax(thi, d->points[i][0]);
		mlo = fmin(mlo, d->points[i][1]), mhi = fmax(mhi, d->points[i][1]);
	}
	if (isfinite(best_t) && isfinite(best_m)) {
		tlo = fmin(tlo, best_t), thi = fmax(thi, best_t);
		mlo = fmin(mlo, best_m), mhi = fmax(mhi, best_m);
	}
	if (isfinite(d->cap_gib))
		mlo = fmin(mlo, d->cap_gib), mhi = fmax(mhi, d->cap_gib);
	if (!(thi > 0) || !(mhi > 0)) {
		sbuf_printf(b, "<p class=\"caption\">This search kept no layouts to plot.</p>\n");
		return;
	}
	ax = (struct axis){ mlo, mhi, left, w - right, 1 };
	ay = (struct axis){ tlo, thi, bottom, top, 1 };
	axis_nice(&ax.lo, &ax.hi, 1);
	axis_nice(&ay.lo, &ay.hi, 1);

	sbuf_printf(b, "<h3>Step time against memory per GPU</h3>\n<p class=\"caption\">Every layout the cost model priced (%d), both axes logarithmic: "
		    "dots fit in memory and are coloured by strategy family, grey crosses do not fit. "
		    "Step times are the closed forms; the chosen layout's is its simulated pipeline.</p>\n",
		    d->n_points);
	sbuf_printf(b, "<svg class=\"scatter\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"step time against memory per GPU\">\n",
		    w, h);
	if (isfinite(d->cap_gib)) {
		double xc = axis_px(&ax, d->cap_gib);
		sbuf_printf(b, "<rect class=\"oom-zone\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"#fbe9e7\"/>",
			    xc, top, w - right - xc, bottom - top);
	}
	svg_axis_x(b, &ax, bottom, top, "memory per GPU, most-loaded GPU (GiB)");
	svg_axis_y(b, &ay, left, w - right, "step time (s)");

	/* One path per mark; each pixel once.  Out of memory first, then the
	 * families from the most numerous, so that small ones stay visible. */
	{
		long count[SEARCH_DOC_FAMILIES + 1] = { 0 };
		for (int i = 0; i < d->n_points; i++)
			count[d->marks[i]]++;
		order[0] = MARK_OOM;
		for (int f = 0; f < SEARCH_DOC_FAMILIES; f++) {
			int k = f + 1;
			while (k > 1 && count[order[k - 1]] < count[f]) {
				order[k] = order[k - 1];
				k--;
			}
			order[k] = f;
		}
	}
	seen = calloc((size_t)w * (size_t)h, 1);
	for (int oi = 0; oi <= SEARCH_DOC_FAMILIES && seen; oi++) {
		int any = 0, mark = order[oi];
		memset(seen, 0, (size_t)w * (size_t)h);
		for (int i = 0; i < d->n_points; i++) {
			int x, y;
			if (d->marks[i] != mark)
				continue;
			x = (int)lround(axis_px(&ax, d->points[i][1]));
			y = (int)lround(axis_px(&ay, d->points[i][0]));
			if (mark == MARK_OOM) /* crosses on a 2-pixel grid */
				x &= ~1, y &= ~1;
			if (x < 0 || y < 0 || x >= w || y >= h || seen[(size_t)y * w + x])
				continue;
			seen[(size_t)y * w + x] = 1;
			if (!any) {
				if (mark == MARK_OOM)
					sbuf_printf(b, "<path class=\"pts oom\" stroke=\"#a3a9b3\" stroke-width=\"1\" fill=\"none\" d=\"");
				else
					sbuf_printf(b, "<path class=\"pts fam%d\" stroke=\"%s\" stroke-width=\"5\" stroke-linecap=\"round\" stroke-opacity=\"0.75\" fill=\"none\" d=\"",
						    mark, html_family_color(mark));
				any = 1;
			}
			if (mark == MARK_OOM)
				sbuf_printf(b, "M%d %dl4 4m0-4l-4 4", x - 2, y - 2);
			else
				sbuf_printf(b, "M%d %dh0", x, y);
		}
		if (any)
			sbuf_printf(b, "\"/>\n");
	}
	free(seen);
	if (isfinite(d->cap_gib)) {
		double xc = axis_px(&ax, d->cap_gib);
		sbuf_printf(b, "<line class=\"cap\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>"
			    "<text class=\"tcap\" x=\"%.1f\" y=\"%.0f\">memory cap %.1f GiB</text>",
			    xc, top, xc, bottom, xc + 6, top + 16, d->cap_gib);
	}
	if (isfinite(best_t) && isfinite(best_m)) {
		double x = axis_px(&ax, best_m), y = axis_px(&ay, best_t);
		int right_side = x > (left + w - right) / 2;
		double lx = right_side ? x - 16 : x + 16, ly = y > (top + bottom) / 2 ? y - 28 : y + 32;
		char lb[160];
		short_layout(cJSON_GetObjectItemCaseSensitive(best, "layout"), lb, sizeof lb);
		sbuf_printf(b, "<g class=\"chosen\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"none\" stroke=\"#1d2433\" stroke-width=\"2.5\"/>"
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1d2433\"/>"
			    "<text class=\"halo\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-weight=\"700\">chosen: %.4g s, %.3g GiB</text>"
			    "<text class=\"halo\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">",
			    x, y, x + (right_side ? -6 : 6), y + (ly < y ? -6 : 6), lx, ly + (ly < y ? 4 : -14),
			    lx, ly - 14, right_side ? "end" : "start", best_t, best_m, lx, ly + 2,
			    right_side ? "end" : "start");
		sbuf_esc(b, lb);
		sbuf_printf(b, "</text></g>\n");
	}
	/* Legend */
	{
		double x = left + 4;
		sbuf_printf(b, "<g class=\"legend\">");
		for (int f = 0; f < SEARCH_DOC_FAMILIES; f++) {
			sbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">",
				    x + 5, 18.0, html_family_color(f), x + 14, 22.0);
			sbuf_esc(b, d->family_names[f]);
			sbuf_printf(b, "</text>");
			x += 14 + 7.2 * (double)strlen(d->family_names[f]) + 16;
		}
		sbuf_printf(b, "<path d=\"M%.1f 14l8 8m0-8l-8 8\" stroke=\"#8a919c\" stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"22\">out of memory</text>",
			    x, x + 13);
		sbuf_printf(b, "</g>\n");
	}
	sbuf_printf(b, "</svg>\n");
}

/* ---- the families ------------------------------------------------------------- */

static void families(struct sbuf *b, const struct search_doc *d)
{
	const double left = 130, top = 16, row_h = 42;
	double tmax = 0, best = INFINITY;
	struct axis ax;
	int n = SEARCH_DOC_FAMILIES;
	double height = top + n * row_h + 50;

	if (!d->families)
		return;
	for (int f = 0; f < n; f++) {
		const cJSON *fr = cJSON_GetObjectItemCaseSensitive(d->families, d->family_names[f]);
		double t = search_doc_num(fr, "step_time_s");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fr, "found")) && isfinite(t)) {
			tmax = fmax(tmax, t);
			best = fmin(best, t);
		}
	}
	ax = (struct axis){ 0, tmax > 0 ? tmax : 1, left, 700, 0 };
	axis_nice(&ax.lo, &ax.hi, 0);
	sbuf_printf(b, "<h3>Best layout of each strategy family</h3>\n<p class=\"caption\">When would you use each approach: the fastest member of each family for this model and cluster, or why the family has none.</p>\n");
	sbuf_printf(b, "<svg class=\"families\" viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"best layout of each strategy family\">\n",
		    HTML_PLOT_W, height);
	svg_axis_x(b, &ax, top + n * row_h + 4, top - 4, "best step time (s)");
	for (int f = 0; f < n; f++) {
		const cJSON *fr = cJSON_GetObjectItemCaseSensitive(d->families, d->family_names[f]);
		double y = top + f * row_h, x0 = axis_px(&ax, 0);
		sbuf_printf(b, "<g class=\"family\"><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" font-weight=\"600\">",
			    left - 8, y + 25);
		sbuf_esc(b, d->family_names[f]);
		sbuf_printf(b, "</text>");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fr, "found"))) {
			double t = search_doc_num(fr, "step_time_s"), mfu = search_doc_num(fr, "mfu");
			double mem = search_doc_num(fr, "memory_gib"), x1 = axis_px(&ax, t);
			char lb[160];
			short_layout(cJSON_GetObjectItemCaseSensitive(fr, "layout"), lb, sizeof lb);
			sbuf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"26\" rx=\"2\" fill=\"%s\"/>",
				    x0, y + 8, x1 - x0, html_family_color(f));
			sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"600\">%.4g s</tspan>",
				    x1 + 7, y + 18, t);
			if (isfinite(mfu))
				sbuf_printf(b, " &middot; %.1f %% MFU", 100 * mfu);
			if (isfinite(mem))
				sbuf_printf(b, " &middot; %.1f GiB", mem);
			if (t > best * 1.0005)
				sbuf_printf(b, " &middot; %.2f&times; the best", t / best);
			else
				sbuf_printf(b, " &middot; the best");
			sbuf_printf(b, "</text><text class=\"small\" x=\"%.1f\" y=\"%.1f\">", x1 + 7,
				    y + 33);
			sbuf_esc(b, lb);
			sbuf_printf(b, "</text>");
		} else {
			double need = search_doc_num(fr, "min_memory_gib");
			const cJSON *why = cJSON_GetObjectItemCaseSensitive(fr, "why");
			sbuf_printf(b, "<text class=\"tmuted\" x=\"%.1f\" y=\"%.1f\">",
				    x0 + 6, y + 25);
			if (isfinite(need))
				sbuf_printf(b, "none fits: the smallest needs %.1f GiB per GPU", need);
			else if (cJSON_IsString(why)) {
				sbuf_printf(b, "impossible: ");
				sbuf_esc(b, why->valuestring);
			} else
				sbuf_printf(b, "no member");
			sbuf_printf(b, "</text>");
		}
		sbuf_printf(b, "</g>\n");
	}
	sbuf_printf(b, "</svg>\n");
}

static void top_table(struct sbuf *b, const struct search_doc *d)
{
	const cJSON *it;
	int i = 0;
	sbuf_printf(b, "<h3>Best layouts</h3>\n<table class=\"layouts\"><thead><tr><th>rank</th><th class=\"l\">layout</th><th>step</th><th>tokens/s</th><th>MFU</th><th>bubble</th><th>memory</th></tr>"
		    "<tr class=\"units\"><th></th><th class=\"l\"></th><th>(s)</th><th>(tok/s)</th><th>(%%)</th><th>(%%)</th><th>(GiB)</th></tr></thead><tbody>\n");
	cJSON_ArrayForEach(it, d->layouts) {
		char lb[160];
		if (++i > 10)
			break;
		short_layout(cJSON_GetObjectItemCaseSensitive(it, "layout"), lb, sizeof lb);
		sbuf_printf(b, "<tr><td>%d</td><td class=\"l\"><code>", i);
		sbuf_esc(b, lb);
		sbuf_printf(b, "</code></td><td>%.4g</td><td>%.0f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td></tr>\n",
			    search_doc_num(it, "step_time_s"), search_doc_num(it, "tokens_per_s"),
			    100 * search_doc_num(it, "mfu"), 100 * search_doc_num(it, "bubble_fraction"),
			    search_doc_num(cJSON_GetObjectItemCaseSensitive(it, "memory_gib"), "total"));
	}
	sbuf_printf(b, "</tbody></table>\n");
}

enum pplan_status html_search_section(struct sbuf *b, const cJSON *doc,
				      const char *path, const char *id,
				      struct perr *e)
{
	struct search_doc d;
	enum pplan_status st = search_doc_read(&d, doc, path, e);
	if (st != PPLAN_OK) {
		search_doc_free(&d);
		return st;
	}
	sbuf_printf(b, "<section id=\"%s\">\n<h2><span class=\"kind search\">search</span>", id);
	sbuf_esc(b, d.model);
	sbuf_printf(b, " on %ld &times; ", d.gpus);
	sbuf_esc(b, d.gpu);
	sbuf_printf(b, "</h2>\n<p class=\"meta\">");
	sbuf_esc(b, path);
	sbuf_printf(b, " &middot; cluster ");
	sbuf_esc(b, d.cluster);
	sbuf_printf(b, " &middot; %ld layouts evaluated, %ld fit in memory", d.evaluated, d.feasible);
	if (isfinite(d.cap_gib))
		sbuf_printf(b, " (cap %.1f GiB per GPU)", d.cap_gib);
	sbuf_printf(b, "</p>\n");
	scatter(b, &d);
	families(b, &d);
	top_table(b, &d);
	sbuf_printf(b, "</section>\n");
	search_doc_free(&d);
	return PPLAN_OK;
}
