/*
 * curves.h: measured curves as the cost model uses them.  A profile
 * (pplan.profile/1, written by `pplan calibrate`) holds points, not fitted
 * constants; these functions turn the points into the time of an
 * operation of any size (sim/MODEL.md, "Measured profiles"):
 *
 *  - GEMM: inverse-distance weighting of the measured rates in log shape
 *    space (log m, log n, log k; the four nearest points), each rate first
 *    divided by its shape's tile fit and the result multiplied by the
 *    query's, so that a dimension that wastes part of its last tile costs
 *    what it costs; never faster than the smallest GEMM measured took
 *    (the launch and call overhead);
 *  - streaming kernels: bandwidth interpolated linearly in log bytes,
 *    held at the end points beyond them, and the smallest kernel's time as
 *    a floor;
 *  - collectives: time interpolated linearly in log-log between the
 *    measured sizes; beyond the largest, its time plus the extra bytes at
 *    the fitted bus bandwidth; below the smallest, the smallest's time; a
 *    group size that was not measured uses the nearest measured one's
 *    alpha and bus bandwidth with the bus factor of its own size.
 *
 * Plain data in, seconds out; nothing is allocated.
 */
#ifndef PPLAN_CURVES_H
#define PPLAN_CURVES_H

#include "collective.h"

struct curve_gemm_pt {
	double m, n, k, tflops;
};

struct curve_bw_pt {
	double bytes, gbps;
};

struct curve_coll_pt {
	double bytes, time_s;
};

/* Tile sizes for the tile fit: a GPU's GEMM tiles, or a CPU's register
 * blocks. */
struct curve_tiles {
	double m, n, k;
};

/* The share of a GEMM's padded work that is real: the product over the
 * dimensions of d / (tile * ceil(d / tile)). */
double curve_tile_fit(const struct curve_tiles *t, double m, double n, double k);

/* Seconds of C (m,n) = A (m,k) B (k,n) from n_pts measured points (> 0). */
double curve_gemm_time(const struct curve_gemm_pt *pts, int n_pts,
		       const struct curve_tiles *t, double m, double n, double k);

/* Seconds to stream `bytes` (read and written) from points sorted by bytes. */
double curve_stream_time(const struct curve_bw_pt *pts, int n_pts, double bytes);

/* Seconds of one collective of nccl-tests size `bytes` over `ranks`,
 * from the points measured over `meas_ranks` (sorted by bytes) and their
 * alpha-beta fit (alpha_s, busbw_gbps). */
double curve_coll_time(enum coll_op op, const struct curve_coll_pt *pts, int n_pts,
		       int meas_ranks, double alpha_s, double busbw_gbps, int ranks,
		       double bytes);

#endif
