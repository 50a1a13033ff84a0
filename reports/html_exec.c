/*
 * html_exec.c: the section of `pplan report html` for one executed run
 * (pplan.report/1): headline cards, the pipeline timeline (predicted and
 * measured lanes of every stage on one time axis), memory per GPU as
 * stacked bars, the time per op class, and the error table.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html_internal.h"

#define MAX_LANES 4096

/* ---- small pieces ----------------------------------------------------------- */

/* A relative error, graded (html_grade_pct). */
static void err_badge(struct sbuf *b, double pct)
{
	const char *cls = html_grade_pct(pct);
	if (!isfinite(pct)) /* not defined: a measured 0, or nothing to compare */
		sbuf_printf(b, "<span class=\"err na\">&ndash;</span>");
	else
		sbuf_printf(b, "<span class=\"err %s\">%+.1f %%</span>", cls, pct);
}

/* A share's difference (the bubble fraction), in percentage points. */
static void pts_badge(struct sbuf *b, double diff)
{
	sbuf_printf(b, "<span class=\"err %s\">%+.1f pts</span>", html_grade_pts(diff), 100 * diff);
}

static void num(char *buf, size_t len, double v, const char *fmt)
{
	if (isfinite(v))
		snprintf(buf, len, fmt, v);
	else
		snprintf(buf, len, "&ndash;");
}

static void header(struct sbuf *b, const struct runreport *r, const char *id)
{
	sbuf_printf(b, "<section id=\"%s\">\n<h2><span class=\"kind\">run</span>", id);
	sbuf_esc(b, r->model[0] ? r->model : "?");
	sbuf_printf(b, " on ");
	sbuf_esc(b, r->gpu[0] ? r->gpu : "?");
	if (r->gpus > 0)
		sbuf_printf(b, " &times; %ld", r->gpus);
	sbuf_printf(b, "</h2>\n<p class=\"meta\"><code>");
	sbuf_esc(b, r->layout);
	sbuf_printf(b, "</code><br>");
	sbuf_esc(b, r->path);
	if (r->backend[0]) {
		sbuf_printf(b, " &middot; backend ");
		sbuf_esc(b, r->backend);
		sbuf_printf(b, " ");
		sbuf_esc(b, r->dtype);
	}
	if (r->steps >= 0)
		sbuf_printf(b, " &middot; %ld timed steps after %ld warm-up", r->steps,
			    r->warmup > 0 ? r->warmup : 0);
	if (r->microbatches > 0)
		sbuf_printf(b, ", %ld microbatches per step", r->microbatches);
	if (r->hosts[0]) {
		sbuf_printf(b, " &middot; on ");
		sbuf_esc(b, r->hosts);
	}
	if (r->date[0]) {
		sbuf_printf(b, " &middot; ");
		sbuf_esc(b, r->date);
	}
	sbuf_printf(b, " &middot; pplan ");
	sbuf_esc(b, r->version[0] ? r->version : "?");
	sbuf_printf(b, " git ");
	sbuf_esc(b, r->git_hash[0] ? r->git_hash : "?");
	sbuf_printf(b, "</p>\n");
	if (!r->ok) {
		sbuf_printf(b, "<div class=\"banner failed\">The run failed after %ld steps: ",
			    r->steps_completed);
		sbuf_esc(b, r->failure);
		sbuf_printf(b, "</div>\n");
	} else if (r->check_failed) {
		sbuf_printf(b, "<div class=\"banner failed\">Check failed: ");
		sbuf_esc(b, r->failure);
		sbuf_printf(b, "</div>\n");
	}
}

/* Five cards: the measured number large, the prediction and its error. */
static void cards(struct sbuf *b, const struct comparison *c)
{
	static const struct { enum cmp_qty q; const char *fmt; } cs[] = {
		{ CQ_STEP_TIME, "%.4g" }, { CQ_TOKENS_PER_S, "%.0f" }, { CQ_MFU, "%.1f" },
		{ CQ_BUBBLE, "%.1f" }, { CQ_MEMORY, "%.3g" },
	};
	sbuf_printf(b, "<div class=\"cards\">");
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		const struct cmp_value *v = &c->values[0][cs[i].q];
		double s = cmp_qty_scale(cs[i].q);
		char m[48], p[48];
		num(m, sizeof m, s * v->measured, cs[i].fmt);
		num(p, sizeof p, s * v->predicted, cs[i].fmt);
		sbuf_printf(b, "<div class=\"card\"><div class=\"k\">%s (%s)</div>"
			    "<div class=\"v\">%s</div><div class=\"p\">measured; predicted %s ",
			    cmp_qty_label(cs[i].q), cmp_qty_unit(cs[i].q), m, p);
		if (cs[i].q == CQ_BUBBLE && isfinite(v->diff))
			pts_badge(b, v->diff);
		else
			err_badge(b, v->error_pct);
		sbuf_printf(b, "</div></div>");
	}
	sbuf_printf(b, "</div>\n");
}

/* ---- the timeline ------------------------------------------------------------ */

static double lane_end(const struct rr_lane *ln)
{
	double end = 0;
	for (int i = 0; i < ln->n_ops; i++)
		if (ln->ops[i].end_s > end)
			end = ln->ops[i].end_s;
	return end;
}

static const struct rr_lane *lane_of(const struct rr_side *s, int stage)
{
	for (int i = 0; i < s->n_lanes; i++)
		if (s->lanes[i].stage == stage)
			return &s->lanes[i];
	return NULL;
}

static void lane_draw(struct sbuf *b, const struct rr_lane *ln, const struct axis *ax,
		      double y, double h, double step_s, const char *side,
		      double scale, const char *unit)
{
	double x0 = axis_px(ax, 0);
	double x1 = axis_px(ax, scale * (isfinite(step_s) ? step_s : lane_end(ln)));
	/* The lane's whole step hatched: what no op covers is idle. */
	sbuf_printf(b, "<rect class=\"idle\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#hatch)\" stroke=\"#c5c9d0\" stroke-width=\"0.5\"/>",
		    x0, y, x1 - x0, h);
	sbuf_printf(b, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\">%.4g %s</text>", x1 + 5,
		    y + h / 2 + 4, scale * (isfinite(step_s) ? step_s : lane_end(ln)), unit);
	for (int i = 0; i < ln->n_ops; i++) {
		const struct rr_op *op = &ln->ops[i];
		double a = axis_px(ax, scale * op->start_s), z = axis_px(ax, scale * op->end_s);
		double w = z - a < 0.6 ? 0.6 : z - a;
		sbuf_printf(b, "<rect class=\"op %s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.6\"><title>",
			    op_class_key(op->cls), a, y, w, h, html_class_color(op->cls));
		sbuf_printf(b, "stage %d %s: ", ln->stage, side);
		sbuf_esc(b, op->name);
		if (op->mb >= 0)
			sbuf_printf(b, " of microbatch %d", op->mb);
		if (op->chunk > 0)
			sbuf_printf(b, " (chunk %d)", op->chunk);
		sbuf_printf(b, ", %.3g %s (%.4g to %.4g %s)</title></rect>",
			    scale * (op->end_s - op->start_s), unit, scale * op->start_s,
			    scale * op->end_s, unit);
		if (op->mb >= 0 && w >= 13 && (op->cls == OC_FORWARD || op->cls == OC_BACKWARD ||
					       op->cls == OC_RECOMPUTE))
			sbuf_printf(b, "<text class=\"onbar\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>",
				    (a + z) / 2, y + h / 2 + 4, op->mb);
	}
}

static void timeline(struct sbuf *b, const struct runreport *r)
{
	int stages[MAX_LANES], n = 0;
	double tmax = 0, lane_h = 20, pair_gap = 3, stage_gap = 13, top = 50;
	double left = 150, right = 78, height, y, scale;
	struct axis ax;
	const char *unit;
	char title[96];

	/* The stages of either side, in order. */
	for (int side = 0; side < 2; side++) {
		const struct rr_side *s = side ? &r->meas : &r->pred;
		for (int i = 0; i < s->n_lanes; i++) {
			int st = s->lanes[i].stage, k = 0;
			while (k < n && stages[k] != st)
				k++;
			if (k == n && n < MAX_LANES) {
				while (k > 0 && stages[k - 1] > st) {
					stages[k] = stages[k - 1];
					k--;
				}
				stages[k] = st;
				n++;
			}
			if (lane_end(&s->lanes[i]) > tmax)
				tmax = lane_end(&s->lanes[i]);
		}
	}
	if (n == 0) {
		sbuf_printf(b, "<p class=\"caption\">This report has no timeline.</p>\n");
		return;
	}
	if (isfinite(r->pred.step_time_s) && r->pred.step_time_s > tmax)
		tmax = r->pred.step_time_s;
	if (isfinite(r->meas.step_time_s) && r->meas.step_time_s > tmax)
		tmax = r->meas.step_time_s;
	scale = html_time_scale(tmax, &unit);
	ax = (struct axis){ 0, tmax * scale, left, HTML_PLOT_W - right, 0 };
	axis_nice(&ax.lo, &ax.hi, 0);
	height = top + n * (2 * lane_h + pair_gap + stage_gap) + 52;

	sbuf_printf(b, "<h3>Pipeline timeline of step %ld</h3>\n<p class=\"caption\">One lane per stage and side, predicted above measured, on one time axis. "
		    "Ops are coloured by class; hatched is idle, so the pipeline bubble shows as the hatched gaps. "
		    "Numbers are microbatches; each lane ends with its step time; hover an op for its times.</p>\n",
		    r->timeline_step);
	sbuf_printf(b, "<svg class=\"timeline\" viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"pipeline timeline\">"
		    "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		    "<rect width=\"6\" height=\"6\" fill=\"#f3f4f6\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#cfd3da\" stroke-width=\"2\"/></pattern></defs>\n",
		    HTML_PLOT_W, height);
	/* Legend: the classes this timeline has, and idle. */
	{
		double x = left;
		int seen[OC_COUNT] = { 0 };
		for (int side = 0; side < 2; side++) {
			const struct rr_side *s = side ? &r->meas : &r->pred;
			for (int i = 0; i < s->n_lanes; i++)
				for (int k = 0; k < s->lanes[i].n_ops; k++)
					seen[s->lanes[i].ops[k].cls] = 1;
		}
		sbuf_printf(b, "<g class=\"legend\">");
		for (int k = 0; k < OC_COUNT; k++)
			if (seen[k] && k != OC_IDLE)
				x = svg_legend_item(b, x, 22, html_class_color((enum op_class)k),
						    op_class_name((enum op_class)k));
		svg_legend_item(b, x, 22, "url(#hatch)", "idle (bubble)");
		sbuf_printf(b, "</g>\n");
	}
	y = top;
	for (int i = 0; i < n; i++) {
		const struct rr_lane *lp = lane_of(&r->pred, stages[i]);
		const struct rr_lane *lm = lane_of(&r->meas, stages[i]);
		sbuf_printf(b, "<g class=\"stage\" data-stage=\"%d\">", stages[i]);
		sbuf_printf(b, "<text class=\"lane\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\"><tspan font-weight=\"600\">stage %d</tspan> predicted</text>",
			    left - 8, y + lane_h / 2 + 4, stages[i]);
		if (lp)
			lane_draw(b, lp, &ax, y, lane_h, r->pred.step_time_s, "predicted", scale, unit);
		y += lane_h + pair_gap;
		sbuf_printf(b, "<text class=\"lane\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">measured</text>",
			    left - 8, y + lane_h / 2 + 4);
		if (lm)
			lane_draw(b, lm, &ax, y, lane_h, r->meas.step_time_s, "measured", scale, unit);
		y += lane_h + stage_gap;
		sbuf_printf(b, "</g>\n");
	}
	snprintf(title, sizeof title, "time from the start of the step (%s)", unit);
	svg_axis_x(b, &ax, y - stage_gap + 8, top - 4, title);
	sbuf_printf(b, "</svg>\n");
}

/* ---- memory ------------------------------------------------------------------ */

static const struct { const char *label, *color; } mem_parts[] = {
	{ "weights", "#4c78a8" }, { "gradients", "#f58518" }, { "optimizer states", "#54a24b" },
	{ "activations", "#e45756" }, { "other", "#bab0ac" },
};

static void mem_values(const struct rr_mem *m, double *v)
{
	v[0] = m->weights, v[1] = m->gradients, v[2] = m->optimizer;
	v[3] = m->activations, v[4] = m->other;
}

static const struct rr_stage *stage_of(const struct rr_side *s, int stage)
{
	for (int i = 0; i < s->n_stages; i++)
		if (s->stages[i].stage == stage)
			return &s->stages[i];
	return NULL;
}

/* One bar: stacked parts where the split is known, else the total alone. */
static void mem_bar(struct sbuf *b, const struct rr_mem *m, const struct axis *ay,
		    double x, double w, const char *side, int stage)
{
	double v[5], y = axis_px(ay, 0), total = m->total;
	int split = 1;
	mem_values(m, v);
	for (int i = 0; i < 5; i++)
		split = split && isfinite(v[i]);
	if (split) {
		double acc = 0;
		for (int i = 0; i < 5; i++) {
			double y1 = axis_px(ay, acc + v[i]);
			sbuf_printf(b, "<rect class=\"mem\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>stage %d %s: %s %.3g GiB</title></rect>",
				    x, y1, w, axis_px(ay, acc) - y1, mem_parts[i].color, stage, side,
				    mem_parts[i].label, v[i]);
			acc += v[i];
		}
		if (!isfinite(total))
			total = acc;
	} else if (isfinite(total)) {
		double y1 = axis_px(ay, total);
		sbuf_printf(b, "<rect class=\"mem\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#5f6877\"><title>stage %d %s: %.3g GiB peak (not split)</title></rect>",
			    x, y1, w, y - y1, stage, side, total);
	}
	if (isfinite(total))
		sbuf_printf(b, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g</text>",
			    x + w / 2, axis_px(ay, total) - 4, total);
	sbuf_printf(b, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
		    x + w / 2, y + 14, side[0] == 'p' ? "pred" : "meas");
}

static void memory(struct sbuf *b, const struct runreport *r)
{
	int stages[MAX_LANES], n = 0;
	double vmax = 0, left = 90, right = 24, top = 40, bottom = 250, gw, bw;
	struct axis ay;
	struct rr_stage fallback_p, fallback_m;
	const struct rr_side *sides[2] = { &r->pred, &r->meas };

	for (int s = 0; s < 2; s++)
		for (int i = 0; i < sides[s]->n_stages; i++) {
			int st = sides[s]->stages[i].stage, k = 0;
			double t = sides[s]->stages[i].mem.total;
			while (k < n && stages[k] != st)
				k++;
			if (k == n && n < MAX_LANES) {
				while (k > 0 && stages[k - 1] > st) {
					stages[k] = stages[k - 1];
					k--;
				}
				stages[k] = st;
				n++;
			}
			if (isfinite(t) && t > vmax)
				vmax = t;
		}
	/* Without per-stage numbers: the most-loaded GPU of each side. */
	memset(&fallback_p, 0, sizeof fallback_p);
	memset(&fallback_m, 0, sizeof fallback_m);
	fallback_p.mem = r->pred.mem;
	fallback_m.mem = (struct rr_mem){ r->meas.memory_gib, NAN, NAN, NAN, NAN, NAN };
	if (n == 0) {
		if (!isfinite(r->pred.mem.total) && !isfinite(r->meas.memory_gib)) {
			sbuf_printf(b, "<p class=\"caption\">This report has no memory figures.</p>\n");
			return;
		}
		stages[n++] = -1;
		vmax = fmax(isfinite(r->pred.mem.total) ? r->pred.mem.total : 0,
			    isfinite(r->meas.memory_gib) ? r->meas.memory_gib : 0);
	}
	ay = (struct axis){ 0, vmax > 0 ? vmax * 1.08 : 1, bottom, top, 0 };
	axis_nice(&ay.lo, &ay.hi, 0);
	gw = fmin(240, (HTML_PLOT_W - left - right) / n);
	bw = fmin(52, gw * 0.32);
	sbuf_printf(b, "<h3>Memory per GPU</h3>\n<p class=\"caption\">For each pipeline stage, the prediction stacked by what holds the memory, beside the measured: pplan exec's own buffers at their peak, split the same way (the process's peak, which holds MPI's, BLAS's and CUDA's buffers too, is the report's memory_gib_process_peak; an older report's measured bar is that peak, unsplit).</p>\n");
	sbuf_printf(b, "<svg class=\"memory\" viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"memory per GPU\">\n",
		    HTML_PLOT_W, bottom + 62);
	svg_axis_y(b, &ay, left, HTML_PLOT_W - right, "memory per GPU (GiB)");
	{
		double x = left + 10;
		sbuf_printf(b, "<g class=\"legend\">");
		for (int i = 0; i < 5; i++)
			x = svg_legend_item(b, x, 18, mem_parts[i].color, mem_parts[i].label);
		svg_legend_item(b, x, 18, "#5f6877", "measured peak");
		sbuf_printf(b, "</g>\n");
	}
	for (int i = 0; i < n; i++) {
		double cx = left + (HTML_PLOT_W - left - right - n * gw) / 2 + gw * (i + 0.5);
		const struct rr_stage *sp = stages[i] >= 0 ? stage_of(&r->pred, stages[i]) : &fallback_p;
		const struct rr_stage *sm = stages[i] >= 0 ? stage_of(&r->meas, stages[i]) : &fallback_m;
		sbuf_printf(b, "<g class=\"mem-stage\">");
		if (sp)
			mem_bar(b, &sp->mem, &ay, cx - bw - 3, bw, "predicted", stages[i]);
		if (sm)
			mem_bar(b, &sm->mem, &ay, cx + 3, bw, "measured", stages[i]);
		if (stages[i] >= 0)
			sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"600\">stage %d</text>",
				    cx, bottom + 32, stages[i]);
		else
			sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"600\">most-loaded GPU</text>",
				    cx, bottom + 32);
		sbuf_printf(b, "</g>\n");
	}
	sbuf_printf(b, "</svg>\n");
}

/* ---- time per op class ---------------------------------------------------------- */

static void classes(struct sbuf *b, const struct comparison *c, const struct runreport *r)
{
	int rows[OC_COUNT], n = 0;
	double vmax = 0, left = 150, right = 260, top = 34, row_h = 34, scale, height;
	const char *unit;
	struct axis ax;
	char title[64];

	for (int k = 0; k < OC_COUNT; k++) {
		const struct cmp_value *v = &c->values[0][CQ_CLASS0 + k];
		double p = isfinite(v->predicted) ? v->predicted : 0;
		double m = isfinite(v->measured) ? v->measured : 0;
		if (p == 0 && m == 0)
			continue;
		rows[n++] = k;
		vmax = fmax(vmax, fmax(p, m));
	}
	if (n == 0)
		return;
	scale = html_time_scale(fmax(vmax, fmax(isfinite(r->meas.step_time_s) ? r->meas.step_time_s : 0,
						  isfinite(r->pred.step_time_s) ? r->pred.step_time_s : 0)),
				&unit);
	ax = (struct axis){ 0, vmax * scale, left, HTML_PLOT_W - right, 0 };
	axis_nice(&ax.lo, &ax.hi, 0);
	height = top + n * row_h + 50;
	sbuf_printf(b, "<h3>Time per op class</h3>\n<p class=\"caption\">Seconds of each step spent in each class (mean over ranks; they add up to the step), predicted (light) above measured (dark), with the error of the prediction.</p>\n");
	sbuf_printf(b, "<svg class=\"classes\" viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"time per op class\">\n",
		    HTML_PLOT_W, height);
	snprintf(title, sizeof title, "time per step (%s)", unit);
	svg_axis_x(b, &ax, top + n * row_h + 4, top - 6, title);
	for (int i = 0; i < n; i++) {
		const struct cmp_value *v = &c->values[0][CQ_CLASS0 + rows[i]];
		double y = top + i * row_h, x0 = axis_px(&ax, 0);
		double p = isfinite(v->predicted) ? v->predicted * scale : 0;
		double m = isfinite(v->measured) ? v->measured * scale : 0;
		const char *col = html_class_color((enum op_class)rows[i]);
		sbuf_printf(b, "<g class=\"class-row\"><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			    left - 8, y + 18, op_class_name((enum op_class)rows[i]));
		sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"%s\" fill-opacity=\"0.45\"><title>predicted %.4g %s</title></rect>",
			    x0, y + 2, axis_px(&ax, p) - x0, col, p, unit);
		sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"%s\"><title>measured %.4g %s</title></rect>",
			    x0, y + 15, axis_px(&ax, m) - x0, col, m, unit);
		sbuf_printf(b, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\">%.3g / %.3g %s</text>",
			    fmax(axis_px(&ax, p), axis_px(&ax, m)) + 6, y + 18, p, m, unit);
		if (isfinite(v->error_pct))
			sbuf_printf(b, "<text class=\"t%s\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-weight=\"600\">%+.1f %%</text>",
				    html_grade_pct(v->error_pct), HTML_PLOT_W - 8, y + 18, v->error_pct);
		sbuf_printf(b, "</g>\n");
	}
	sbuf_printf(b, "</svg>\n");
}

/* ---- the error table ------------------------------------------------------------ */

static void error_table(struct sbuf *b, const struct comparison *c)
{
	sbuf_printf(b, "<h3>Predicted against measured</h3>\n<p class=\"caption\">error = 100 &times; (predicted &minus; measured) / measured; diff = predicted &minus; measured (the bubble fraction: percentage points, its only error). As <code>pplan report compare</code> prints it.</p>\n");
	sbuf_printf(b, "<table class=\"errors\"><thead><tr><th class=\"l\">quantity</th><th>predicted</th><th>measured</th><th>diff</th><th>error</th></tr>"
		    "<tr class=\"units\"><th class=\"l\"></th><th></th><th></th><th>(unit)</th><th>(%%)</th></tr></thead><tbody>\n");
	for (int q = 0; q < CQ_COUNT; q++) {
		const struct cmp_value *v = &c->values[0][q];
		double s = cmp_qty_scale((enum cmp_qty)q);
		char p[48], m[48], d[48];
		if (q >= CQ_CLASS0 && (v->predicted == 0 || isnan(v->predicted)) &&
		    (v->measured == 0 || isnan(v->measured)))
			continue;
		num(p, sizeof p, s * v->predicted, "%.4g");
		num(m, sizeof m, s * v->measured, "%.4g");
		num(d, sizeof d, s * v->diff, "%+.3g");
		sbuf_printf(b, "<tr><td class=\"l\">%s (%s)</td><td>%s</td><td>%s</td><td>%s</td><td>",
			    cmp_qty_label((enum cmp_qty)q), cmp_qty_unit((enum cmp_qty)q), p, m, d);
		if (q == CQ_BUBBLE && isfinite(v->diff))
			pts_badge(b, v->diff);
		else
			err_badge(b, v->error_pct);
		sbuf_printf(b, "</td></tr>\n");
	}
	sbuf_printf(b, "</tbody></table>\n");
}

void html_exec_section(struct sbuf *b, const struct runreport *r,
		       const struct comparison *c, const char *id)
{
	header(b, r, id);
	cards(b, c);
	timeline(b, r);
	memory(b, r);
	classes(b, c, r);
	error_table(b, c);
	sbuf_printf(b, "</section>\n");
}
