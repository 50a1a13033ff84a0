/*
 * gemm.h: time of one GEMM on one GPU from its shape.  The achieved rate
 * is the GPU's ceiling for the precision, scaled by a saturation curve in
 * the GEMM's size (small GEMMs cannot fill the SMs) and by a tile penalty
 * for narrow dimensions (a 128-wide tile on a 96-wide matrix wastes a
 * quarter of its work), and never faster than moving its operands through
 * HBM.  Formula and constants: sim/MODEL.md "GEMM efficiency".
 */
#ifndef PPLAN_GEMM_H
#define PPLAN_GEMM_H

#include "gpu.h"

/* Seconds for C[m,n] = A[m,k] B[k,n] in precision p (operands of
 * bytes_per_el bytes).  Returns 0 for an empty GEMM. */
double gemm_time(const struct gpu_spec *g, enum precision p, double m,
		 double n, double k);

/* The efficiency (fraction of dense peak) that gemm_time implies. */
double gemm_efficiency(const struct gpu_spec *g, enum precision p, double m,
		       double n, double k);

/* Seconds to stream `bytes` through HBM (memory-bound kernels). */
double hbm_time(const struct gpu_spec *g, double bytes);

#endif
