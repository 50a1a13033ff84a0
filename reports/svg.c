/* svg.c: text buffer, escaping, axes and legends for the HTML pages (svg.h). */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sbuf_reserve(struct sbuf *b, size_t more)
{
	size_t need = b->len + more + 1, cap;
	char *ns;
	if (b->failed)
		return -1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	ns = realloc(b->s, cap);
	if (!ns) {
		b->failed = 1;
		return -1;
	}
	b->s = ns;
	b->cap = cap;
	return 0;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	char small[512];
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0 || sbuf_reserve(b, (size_t)n) != 0)
		return;
	if ((size_t)n < sizeof small) {
		memcpy(b->s + b->len, small, (size_t)n + 1);
	} else {
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void sbuf_esc(struct sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': sbuf_printf(b, "&amp;"); break;
		case '<': sbuf_printf(b, "&lt;"); break;
		case '>': sbuf_printf(b, "&gt;"); break;
		case '"': sbuf_printf(b, "&quot;"); break;
		default:
			if (sbuf_reserve(b, 1) == 0) {
				b->s[b->len++] = *s;
				b->s[b->len] = '\0';
			}
		}
	}
}

void sbuf_free(struct sbuf *b)
{
	free(b->s);
	*b = (struct sbuf){ 0 };
}

/* ---- axes ------------------------------------------------------------------ */

double axis_px(const struct axis *a, double v)
{
	double t;
	if (a->log) {
		double lv = log10(v > 0 ? v : a->lo);
		t = (lv - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	} else {
		t = (v - a->lo) / (a->hi - a->lo);
	}
	if (!isfinite(t))
		t = 0;
	return a->px0 + t * (a->px1 - a->px0);
}

/* The step of round ticks: 1, 2 or 5 x 10^k, giving at most max ticks. */
static double tick_step(double span, int max)
{
	double raw = span / (max > 1 ? max - 1 : 1);
	double p = pow(10, floor(log10(raw)));
	if (raw <= p)
		return p;
	if (raw <= 2 * p)
		return 2 * p;
	if (raw <= 5 * p)
		return 5 * p;
	return 10 * p;
}

void axis_nice(double *lo, double *hi, int log)
{
	if (log) {
		static const double marks[] = { 1, 2, 5, 10 };
		double dl = pow(10, floor(log10(*lo)));
		double dh = pow(10, floor(log10(*hi)));
		double nl = dl, nh = 10 * dh;
		for (int i = 3; i >= 0; i--)
			if (marks[i] * dl <= *lo * (1 + 1e-9)) {
				nl = marks[i] * dl;
				break;
			}
		for (int i = 0; i < 4; i++)
			if (marks[i] * dh >= *hi * (1 - 1e-9)) {
				nh = marks[i] * dh;
				break;
			}
		*lo = nl;
		*hi = nh;
		return;
	}
	if (!(*hi > *lo))
		*hi = *lo + (*lo != 0 ? fabs(*lo) : 1);
	{
		double st = tick_step(*hi - *lo, 6);
		*lo = floor(*lo / st + 1e-9) * st;
		*hi = ceil(*hi / st - 1e-9) * st;
	}
}

int axis_ticks(const struct axis *a, int max, double *out, int out_len)
{
	int n = 0;
	if (a->log) {
		/* Decades spanned, kept in double: an axis from 0 or to
		 * infinity would make the int conversion undefined (found by
		 * fuzz_report); such an axis gets one mark per decade. */
		double decades = log10(a->hi / a->lo) - 1e-9;
		static const double marks[] = { 1, 2, 5 };
		int per = decades <= 3 ? 3 : 1;
		for (double d = pow(10, floor(log10(a->lo))); d <= a->hi * 1.0001 && n < out_len;
		     d *= 10)
			for (int i = 0; i < per && n < out_len; i++) {
				double v = marks[i] * d;
				if (v >= a->lo * 0.9999 && v <= a->hi * 1.0001)
					out[n++] = v;
			}
		return n;
	}
	{
		double st = tick_step(a->hi - a->lo, max);
		for (double v = ceil(a->lo / st - 1e-9) * st; v <= a->hi + st * 1e-6 && n < out_len;
		     v += st)
			out[n++] = fabs(v) < st * 1e-9 ? 0 : v;
	}
	return n;
}

void axis_label(double v, char *buf, size_t len)
{
	double a = fabs(v);
	if (a == 0)
		snprintf(buf, len, "0");
	else if (a >= 1e6)
		snprintf(buf, len, "%gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, len, "%gk", v / 1e3);
	else if (a >= 1e-3)
		snprintf(buf, len, "%g", v);
	else
		snprintf(buf, len, "%.0e", v);
}

void svg_axis_x(struct sbuf *b, const struct axis *a, double at, double grid_to,
		const char *title)
{
	double t[64];
	int n = axis_ticks(a, 9, t, 64);
	char lab[32];
	sbuf_printf(b, "<g class=\"axis x\">");
	for (int i = 0; i < n; i++) {
		double x = axis_px(a, t[i]);
		if (isfinite(grid_to))
			sbuf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
				    x, at, x, grid_to);
		axis_label(t[i], lab, sizeof lab);
		sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
			    x, at, x, at + 5, x, at + 19, lab);
	}
	sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		    a->px0, at, a->px1, at);
	sbuf_printf(b, "<text class=\"title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    (a->px0 + a->px1) / 2, at + 38);
	sbuf_esc(b, title);
	sbuf_printf(b, "</text></g>\n");
}

void svg_axis_y(struct sbuf *b, const struct axis *a, double at, double grid_to,
		const char *title)
{
	double t[64];
	int n = axis_ticks(a, 7, t, 64);
	char lab[32];
	double mid = (a->px0 + a->px1) / 2;
	sbuf_printf(b, "<g class=\"axis y\">");
	for (int i = 0; i < n; i++) {
		double y = axis_px(a, t[i]);
		if (isfinite(grid_to))
			sbuf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
				    at, y, grid_to, y);
		axis_label(t[i], lab, sizeof lab);
		sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			    at - 5, y, at, y, at - 8, y + 4, lab);
	}
	sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		    at, a->px0, at, a->px1);
	sbuf_printf(b, "<text class=\"title\" transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">",
		    at - 52, mid);
	sbuf_esc(b, title);
	sbuf_printf(b, "</text></g>\n");
}

double svg_legend_item(struct sbuf *b, double x, double y, const char *fill,
		       const char *text)
{
	sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" rx=\"2\" fill=\"%s\" stroke=\"#555\" stroke-width=\"0.5\"/>"
		    "<text x=\"%.1f\" y=\"%.1f\">", x, y - 11, fill, x + 19, y);
	sbuf_esc(b, text);
	sbuf_printf(b, "</text>");
	/* about 7 px per character at the page's 13 px */
	return x + 19 + 7.2 * (double)strlen(text) + 18;
}
