/*
 * gemm.h: time of one GEMM on one GPU from its shape.  The achieved rate
 * is the architecture's ceiling for the precision (a fitted constant,
 * sim/cost_params.h), scaled by a saturation curve in the GEMM's size (small
 * GEMMs cannot fill the SMs) and by a tile penalty for narrow dimensions
 * (a 128-wide tile on a 96-wide matrix wastes a quarter of its work), and
 * never faster than moving its operands through HBM.  Formula:
 * sim/MODEL.md "GEMM efficiency".
 */
#ifndef PPLAN_GEMM_H
#define PPLAN_GEMM_H

#include "gpu.h"

struct curve_set;
#include "cost_params.h"

/* One GPU in one precision as the cost model sees it (plain data). */
struct gemm_rate {
	double peak_flops;   /* dense peak, FLOP/s; 0 = unsupported */
	double ceiling;      /* fraction of peak that large GEMMs reach */
	double half_flops;   /* FLOPs of a GEMM that runs at half the ceiling */
	double hbm_bps;      /* achieved HBM bandwidth, B/s */
	double in_bytes;     /* bytes per input element (fp8 1, bf16/fp16 2, fp32 4) */
	double out_bytes;    /* bytes per output element (half precision, fp32 on fp32) */
	/* Measured curves (--profile) that answer before the model above
	 * where they hold points (sim/curves.h); NULL by gemm_rate_init. */
	const struct curve_set *curves;
	double curve_scale;  /* on the curves' times (measured_compute_scale) */
	enum precision prec;
};

void gemm_rate_init(struct gemm_rate *rate, const struct gpu_spec *gpu,
		    enum precision prec, const struct cost_params *cp);
/* Turns an fp8 rate into NVFP4's: the GPU's fp4 peak at the bf16
 * ceiling times gemm_fp4_rel, half a byte and a sixteenth an operand
 * element (sim/MODEL.md 3).  No change on a GPU without an fp4 rate.
 * Measured curves (--profile) are fp8's: the rate leaves them. */
void gemm_rate_nvfp4(struct gemm_rate *rate, const struct gpu_spec *gpu,
		     const struct cost_params *cp);

/* Seconds for C[m,n] = A[m,k] B[k,n].  0 for an empty GEMM. */
double gemm_time(const struct gemm_rate *rate, double m, double n, double k);

/* Seconds for `batch` independent GEMMs of one shape in one batched
 * launch (cuBLAS strided-batched): the batch fills the GPU as one GEMM of
 * the summed FLOPs would, each matrix still wasting its tiles. */
double gemm_time_batched(const struct gemm_rate *rate, double batch, double m, double n,
			 double k);

/* The efficiency (fraction of dense peak) that gemm_time implies before
 * the HBM bound. */
double gemm_efficiency(const struct gemm_rate *rate, double m, double n, double k);

/* Seconds to stream `bytes` through HBM (memory-bound kernels). */
double hbm_time(const struct gemm_rate *rate, double bytes);

#endif
