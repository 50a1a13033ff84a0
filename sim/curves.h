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
 *    what it costs (below the smallest GEMM measured, the cost model
 *    keeps its own curve's shape, anchored there: sim/gemm.c);
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

#include "cluster.h"
#include "collective.h"
#include "status.h"

struct profile;

struct curve_gemm_pt {
	double m, n, k, tflops;
};

struct curve_bw_pt {
	double bytes, gbps;
	double fwd_share;   /* the layer curve: the forward's share (0: not measured) */
};

struct curve_coll_pt {
	double bytes, time_s;
	double exposed_s;   /* profile_coll_point's, 0 when not measured */
};

/* Tile sizes for the tile fit: a GPU's GEMM tiles, or a CPU's register
 * blocks. */
struct curve_tiles {
	double m, n, k;
};

/* The share of a GEMM's padded work that is real: the product over the
 * dimensions of d / (tile * ceil(d / tile)). */
double curve_tile_fit(const struct curve_tiles *tiles, double m, double n, double k);

/* Seconds of C (m,n) = A (m,k) B (k,n) from n_pts measured points (> 0). */
double curve_gemm_time(const struct curve_gemm_pt *pts, int n_pts,
		       const struct curve_tiles *tiles, double m, double n, double k);

/* Seconds to stream `bytes` (read and written) from points sorted by bytes. */
double curve_stream_time(const struct curve_bw_pt *pts, int n_pts, double bytes);

/* Seconds of one collective of nccl-tests size `bytes` over `ranks`,
 * from the points measured over `meas_ranks` (sorted by bytes) and their
 * alpha-beta fit (alpha_s, busbw_gbps). */
double curve_coll_time(enum coll_op op, const struct curve_coll_pt *pts, int n_pts,
		       int meas_ranks, double alpha_s, double busbw_gbps, int ranks,
		       double bytes);

/* ---- a profile's curves, ready for the cost model ------------------------
 * Built once from a pplan.profile/1 (profile.h) and pointed to by
 * train_opts.curves; each query answers from the measured points or
 * returns a negative time where the profile has none, and the embedded
 * model answers instead. */

#define CURVE_MAX_GEMM 1024
#define CURVE_MAX_BW 64
#define CURVE_MAX_ATTN 64
#define CURVE_MAX_COLL 64
#define CURVE_MAX_COLL_PTS 48

struct curve_coll {
	enum coll_op op;
	int ranks;
	int net;                     /* measured over the network (link "net") */
	double alpha_s, busbw_gbps;
	int n;
	struct curve_coll_pt pts[CURVE_MAX_COLL_PTS];
};

struct curve_attn {
	int fused;
	double seq, head_dim;
	double fwd_tflops, bwd_tflops;   /* FLOPs of the whole s x s square */
};

/* The element-wise curves of a profile (profile.h): a streaming kernel,
 * a transformer layer's element-wise kernels, the optimizer step. */
enum curve_bw { CURVE_BW_STREAM = 0, CURVE_BW_LAYER, CURVE_BW_OPTIMIZER, CURVE_BW_COUNT };

struct curve_set {
	char device[32];             /* the profile's device.name */
	int cpu;                     /* a CPU profile: no tensor-core tiles */
	enum precision prec;         /* of the GEMM and attention points */
	struct curve_tiles tiles;
	int n_gemm, n_bw[CURVE_BW_COUNT], n_attn, n_coll;
	struct curve_gemm_pt gemm[CURVE_MAX_GEMM];
	struct curve_bw_pt bw[CURVE_BW_COUNT][CURVE_MAX_BW];
	struct curve_attn attn[CURVE_MAX_ATTN];
	struct curve_coll coll[CURVE_MAX_COLL];
};

/* The curves of profile (points of other precisions than the first GEMM's are
 * left out; more points than the arrays hold, too). */
void curve_set_from_profile(struct curve_set *cs, const struct profile *profile);

/* 1 when cs holds no measured point at all. */
int curve_set_empty(const struct curve_set *cs);

/* The measured GEMM of fewest FLOPs (NULL: none). */
const struct curve_gemm_pt *curve_set_gemm_smallest(const struct curve_set *cs,
						    enum precision prec);

/* The forward kernels' share of a layer's element-wise time at `bytes`
 * of the layer curve (forward and backward together), interpolated as
 * the rates are; negative where the profile did not measure it. */
double curve_set_layer_fwd_share(const struct curve_set *cs, double bytes);

/* Negative where cs has nothing for the question. */
double curve_set_gemm(const struct curve_set *cs, enum precision prec, double batch, double m,
		      double n, double k);
/* Seconds for `bytes` read and written by kernels of that kind. */
double curve_set_bw(const struct curve_set *cs, enum curve_bw kind, double bytes);
double curve_set_coll(const struct curve_set *cs, enum coll_op op, double bytes, int ranks,
		      int net);
/* The wait a collective leaves when every rank posts it, computes, and
 * then waits (calibrate measures it for send_recv on a CPU, where MPI
 * moves data only inside its calls), interpolated as the times are;
 * negative where cs has none: the transfer then runs beside the compute,
 * as NCCL's on its stream. */
double curve_set_coll_exposed(const struct curve_set *cs, enum coll_op op, double bytes,
			      int ranks, int net);
/* The attention core of `heads` query heads (batch included), seq_q
 * queries against seq_k keys, head_dim: forward and backward seconds. */
int curve_set_attention(const struct curve_set *cs, enum precision prec, int fused,
			double heads, double seq_q, double seq_k, double head_dim,
			double *fwd_s, double *bwd_s);

/* A machine of CPU ranks as a CPU profile describes it (device "cpu"):
 * `ranks` devices on one host, the measured sgemm peak, memory per rank,
 * the fastest streaming rate, and shared-memory MPI as the node's links
 * at the all-reduce's measured alpha and bus bandwidth. */
enum pplan_status curve_cpu_cluster(const struct profile *profile, long ranks,
				    struct cluster *cluster,
				    struct perr *err);

#endif
