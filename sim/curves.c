/* curves.c: measured curves turned into times (curves.h, sim/MODEL.md). */
#include "curves.h"

#include <math.h>

#define GEMM_NEIGHBOURS 4

double curve_tile_fit(const struct curve_tiles *t, double m, double n, double k)
{
	const double d[3] = { m, n, k }, tile[3] = { t->m, t->n, t->k };
	double fit = 1;
	for (int i = 0; i < 3; i++)
		if (tile[i] > 1 && d[i] > 0)
			fit *= d[i] / (tile[i] * ceil(d[i] / tile[i]));
	return fit;
}

double curve_gemm_time(const struct curve_gemm_pt *pts, int n_pts,
		       const struct curve_tiles *t, double m, double n, double k)
{
	int best[GEMM_NEIGHBOURS], nb = 0;
	double dist[GEMM_NEIGHBOURS], lw = 0, wsum = 0, flops = 2 * m * n * k;
	if (flops <= 0 || n_pts <= 0)
		return 0;
	/* the nearest points in log shape space */
	for (int i = 0; i < n_pts; i++) {
		const struct curve_gemm_pt *p = &pts[i];
		double dm = log(m / p->m), dn = log(n / p->n), dk = log(k / p->k);
		double d = sqrt(dm * dm + dn * dn + dk * dk);
		int j;
		if (nb < GEMM_NEIGHBOURS)
			nb++;
		else if (d >= dist[nb - 1])
			continue;
		for (j = nb - 1; j > 0 && dist[j - 1] > d; j--) {
			dist[j] = dist[j - 1];
			best[j] = best[j - 1];
		}
		dist[j] = d;
		best[j] = i;
	}
	/* the tile-free rate, averaged in the log with weights 1 / d^2 */
	for (int j = 0; j < nb; j++) {
		const struct curve_gemm_pt *p = &pts[best[j]];
		double rho = log(p->tflops * 1e12 / curve_tile_fit(t, p->m, p->n, p->k));
		if (dist[j] < 1e-12) {
			lw = rho;
			wsum = 1;
			break;
		}
		lw += rho / (dist[j] * dist[j]);
		wsum += 1 / (dist[j] * dist[j]);
	}
	return flops / (exp(lw / wsum) * curve_tile_fit(t, m, n, k));
}

double curve_stream_time(const struct curve_bw_pt *pts, int n_pts, double bytes)
{
	double gbps, t0;
	int i;
	if (bytes <= 0 || n_pts <= 0)
		return 0;
	t0 = pts[0].bytes / (pts[0].gbps * 1e9);
	if (bytes <= pts[0].bytes)
		return t0; /* a kernel launch: no faster than the smallest measured */
	if (bytes >= pts[n_pts - 1].bytes) {
		gbps = pts[n_pts - 1].gbps;
	} else {
		for (i = 1; i < n_pts - 1 && pts[i].bytes < bytes; i++)
			;
		{
			double x0 = log(pts[i - 1].bytes), x1 = log(pts[i].bytes), f;
			f = x1 > x0 ? (log(bytes) - x0) / (x1 - x0) : 0;
			gbps = pts[i - 1].gbps + f * (pts[i].gbps - pts[i - 1].gbps);
		}
	}
	return fmax(bytes / (gbps * 1e9), t0);
}

/* Latency steps of a ring over n ranks (collective.h). */
static double ring_steps(enum coll_op op, int n)
{
	const struct coll_info *ci = coll_info(op);
	return ci && ci->ring_steps_num ? (double)ci->ring_steps_num * (n - 1) : 1.0;
}

double curve_coll_time(enum coll_op op, const struct curve_coll_pt *pts, int n_pts,
		       int meas_ranks, double alpha_s, double busbw_gbps, int ranks,
		       double bytes)
{
	double busbw = busbw_gbps * 1e9;
	int i;
	if (bytes <= 0 || (ranks <= 1 && op != COLL_SENDRECV))
		return 0;
	if (ranks != meas_ranks || n_pts <= 0) {
		/* another group size: the measured link's alpha-beta, rescaled */
		double a = alpha_s * ring_steps(op, ranks) / ring_steps(op, meas_ranks);
		return a + (busbw > 0 ? bytes * coll_busbw_factor(op, ranks) / busbw : 0);
	}
	if (bytes <= pts[0].bytes)
		return pts[0].time_s;
	if (bytes >= pts[n_pts - 1].bytes)
		return pts[n_pts - 1].time_s +
		       (busbw > 0 ? (bytes - pts[n_pts - 1].bytes) *
					    coll_busbw_factor(op, ranks) / busbw : 0);
	for (i = 1; i < n_pts - 1 && pts[i].bytes < bytes; i++)
		;
	{
		double x0 = log(pts[i - 1].bytes), x1 = log(pts[i].bytes);
		double y0 = log(pts[i - 1].time_s), y1 = log(pts[i].time_s);
		double f = x1 > x0 ? (log(bytes) - x0) / (x1 - x0) : 0;
		return exp(y0 + f * (y1 - y0));
	}
}
