/*
 * svg.h: what the pages of `pplan report html` are drawn with: a growing
 * text buffer, HTML escaping, axes with round ticks (linear and
 * logarithmic), and the op-class colours.  Plain inline SVG: no script,
 * no external font or image, so that a page is one file a browser shows
 * offline.
 *
 * Ownership: the caller owns a struct sbuf and frees it with sbuf_free.
 * A buffer that ran out of memory stays marked (failed) and ignores
 * further writes; the page writer checks it once at the end.
 */
#ifndef PPLAN_SVG_H
#define PPLAN_SVG_H

#include <stddef.h>

struct sbuf {
	char *s;
	size_t len, cap;
	int failed;
};

void sbuf_printf(struct sbuf *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends s with & < > " escaped. */
void sbuf_esc(struct sbuf *buf, const char *s);
void sbuf_free(struct sbuf *buf);

/* An axis maps data values in [lo, hi] to pixels [px0, px1] (px1 < px0
 * for a y axis pointing up). */
struct axis {
	double lo, hi;
	double px0, px1;
	int log;            /* base-10 logarithmic */
};

double axis_px(const struct axis *axis, double v);

/* Round tick values for [lo, hi]: 1, 2 or 5 x 10^k steps, at most max
 * ticks (linear); on a log axis 1, 2, 5 of each decade (or the decades
 * alone when there are many).  Returns the number written to out. */
int axis_ticks(const struct axis *axis, int max, double *out, int out_len);

/* Widens [*lo, *hi] to round numbers (linear: a multiple of the tick
 * step from 0 or below; log: whole decades, or 1/2/5 marks). */
void axis_nice(double *lo, double *hi, int log);

/* A tick's label: "0.5", "20", "1.2k", "3e-05". */
void axis_label(double v, char *buf, size_t len);

/* Draws the axis line, ticks, tick labels and the axis title; horizontal
 * axes at y = at, vertical ones at x = at.  `grid_to` draws light grid
 * lines across the plot to that coordinate (NAN: none). */
void svg_axis_x(struct sbuf *buf, const struct axis *axis, double at, double grid_to,
		const char *title);
void svg_axis_y(struct sbuf *buf, const struct axis *axis, double at, double grid_to,
		const char *title);

/* A legend swatch and its text at (x, y); returns the x after it. */
double svg_legend_item(struct sbuf *buf, double x, double y, const char *fill,
		       const char *text);

#endif
