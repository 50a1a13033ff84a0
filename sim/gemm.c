/* gemm.c: the GEMM efficiency curve and the HBM roofline (sim/MODEL.md). */
#include "gemm.h"

#include <math.h>

#include "curves.h"

/* Tensor-core tile edge below which a dimension wastes part of a tile. */
#define GEMM_TILE_DIM 128.0
/* GEMM outputs are written in half precision (in fp32 by fp32 GEMMs). */
#define GEMM_HALF_BYTES 2.0
/* An NVFP4 operand element: 4 bits and its share of an E4M3 scale byte
 * per 16. */
#define GEMM_FP4_BYTES (0.5 + 1.0 / 16.0)

void gemm_rate_init(struct gemm_rate *r, const struct gpu_spec *g,
		    enum precision p, const struct cost_params *cp)
{
	double ceiling = cp->gemm_ceiling[g->arch];
	if (p == PREC_FP8)
		ceiling *= cp->gemm_fp8_rel[g->arch];
	r->peak_flops = g->peak_tflops[p] * 1e12;
	r->ceiling = g->gemm_eff_max[p] > 0 ? g->gemm_eff_max[p] : ceiling;
	r->half_flops = g->gemm_half_gflop > 0 ? g->gemm_half_gflop * 1e9
					       : cp->gemm_half_us * 1e-6 * r->peak_flops;
	r->hbm_bps = g->hbm_gbps * 1e9 * (g->hbm_eff > 0 ? g->hbm_eff : cp->hbm_eff);
	r->in_bytes = (double)precision_bytes(p);
	r->out_bytes = r->in_bytes < GEMM_HALF_BYTES ? GEMM_HALF_BYTES : r->in_bytes;
	r->curves = NULL;
	r->curve_scale = cp->measured_compute_scale > 0 ? cp->measured_compute_scale : 1.0;
	r->prec = p;
}

void gemm_rate_nvfp4(struct gemm_rate *r, const struct gpu_spec *g,
		     const struct cost_params *cp)
{
	if (!(g->fp4_tflops > 0))
		return;
	r->peak_flops = g->fp4_tflops * 1e12;
	r->ceiling = cp->gemm_ceiling[g->arch] * cp->gemm_fp4_rel[g->arch];
	r->half_flops = cp->gemm_half_us * 1e-6 * r->peak_flops;
	r->in_bytes = GEMM_FP4_BYTES;
	r->curves = NULL; /* a profile's fp8 curves are not fp4's */
}

static double tile_factor(double d)
{
	/* Fraction of useful work in the tiles that cover dimension d. */
	double tiles = ceil(d / GEMM_TILE_DIM);
	return d / (tiles * GEMM_TILE_DIM);
}

/* The math time of a GEMM of `flops` with output m x n: its work padded
 * to whole tiles, plus the fixed cost that leaves a small GEMM short of
 * the ceiling (a GEMM of half_flops runs at half of it).  The fixed
 * cost is not padded: a skinny GEMM (a router's n = E) pays its tiles on
 * its work only. */
static double math_time(const struct gemm_rate *r, double flops, double m, double n)
{
	return (flops / (tile_factor(m) * tile_factor(n)) + r->half_flops) /
	       (r->peak_flops * r->ceiling);
}

double gemm_efficiency(const struct gemm_rate *r, double m, double n, double k)
{
	double flops = 2.0 * m * n * k;
	if (flops <= 0 || r->peak_flops <= 0 || r->ceiling <= 0)
		return 0;
	return flops / (r->peak_flops * math_time(r, flops, m, n));
}

double hbm_time(const struct gemm_rate *r, double bytes)
{
	double t = r->curves ? curve_set_bw(r->curves, CURVE_BW_STREAM, bytes) : -1;
	return t >= 0 ? t * r->curve_scale : bytes / r->hbm_bps;
}

/* The model: the saturation curve with tiles, bounded by moving the
 * operands through HBM. */
static double model_time(const struct gemm_rate *r, double batch, double m, double n,
			 double k)
{
	double flops = 2.0 * m * n * k * batch;
	double t_math, t_mem;
	if (flops <= 0 || r->peak_flops <= 0 || r->ceiling <= 0)
		return 0;
	t_math = math_time(r, flops, m, n);
	t_mem = hbm_time(r, batch * (r->in_bytes * (m * k + k * n) + r->out_bytes * m * n));
	return fmax(t_math, t_mem);
}

double gemm_time_batched(const struct gemm_rate *r, double batch, double m, double n,
			 double k)
{
	double t;
	const struct curve_gemm_pt *s;
	if (2.0 * m * n * k * batch <= 0)
		return 0;
	if (!r->curves || (t = curve_set_gemm(r->curves, r->prec, batch, m, n, k)) < 0)
		return model_time(r, batch, m, n, k);
	/* Measured (--profile).  Below the smallest GEMM measured the points
	 * say nothing about how rates fall: the model's curve, scaled to
	 * meet that point. */
	s = curve_set_gemm_smallest(r->curves, r->prec);
	if (s && batch * m * n * k < s->m * s->n * s->k) {
		double ts = 2.0 * s->m * s->n * s->k / (s->tflops * 1e12);
		double ms = model_time(r, 1, s->m, s->n, s->k), mq = model_time(r, batch, m, n, k);
		if (ms > 0 && mq > 0)
			return mq * ts / ms * r->curve_scale;
	}
	return t * r->curve_scale;
}

double gemm_time(const struct gemm_rate *r, double m, double n, double k)
{
	return gemm_time_batched(r, 1.0, m, n, k);
}
