/* gemm.c: the GEMM efficiency curve and the HBM roofline (sim/MODEL.md). */
#include "gemm.h"

#include <math.h>

/* Tensor-core tile edge below which a dimension wastes part of a tile. */
#define GEMM_TILE_DIM 128.0

static double tile_factor(double d)
{
	/* Fraction of useful work in the tiles that cover dimension d. */
	double tiles = ceil(d / GEMM_TILE_DIM);
	return d / (tiles * GEMM_TILE_DIM);
}

double gemm_efficiency(const struct gpu_spec *g, enum precision p, double m,
		       double n, double k)
{
	double gflop = 2.0 * m * n * k / 1e9;
	double eff;
	if (gflop <= 0)
		return 0;
	eff = g->gemm_eff_max[p] * gflop / (gflop + g->gemm_half_gflop);
	eff *= tile_factor(m) * tile_factor(n);
	return eff;
}

double hbm_time(const struct gpu_spec *g, double bytes)
{
	return bytes / (g->hbm_gbps * 1e9 * g->hbm_eff);
}

double gemm_time(const struct gpu_spec *g, enum precision p, double m,
		 double n, double k)
{
	double flops = 2.0 * m * n * k;
	double eff, t_math, t_mem, elsize;
	if (flops <= 0 || g->peak_tflops[p] <= 0)
		return 0;
	eff = gemm_efficiency(g, p, m, n, k);
	t_math = flops / (g->peak_tflops[p] * 1e12 * eff);
	elsize = p == PREC_FP8 ? 1.0 : 2.0;
	t_mem = hbm_time(g, elsize * (m * k + k * n) + 2.0 * m * n);
	return fmax(t_math, t_mem);
}
