/*
 * calibrate.h: `pplan calibrate`'s measurements of the machine it runs on,
 * through the backend interface (backend.h) only: GEMM throughput by
 * shape, element-wise memory bandwidth, the attention core by sequence
 * length, and the collectives (all-reduce, all-gather, reduce-scatter,
 * all-to-all, broadcast, send/receive) by size, measured as nccl-tests
 * measures: warm-up, a timed loop, the slowest rank's time, the result
 * checked for correctness outside the timed loop (the #wrong column).
 *
 * Every rank calls every function in the same order (they are collective
 * over the job); the results are the same on every rank.  This header
 * holds plain data and one opaque session, so that cli/ includes no MPI
 * header.  Ownership: the session is the caller's (cal_close).
 */
#ifndef PPLAN_CALIBRATE_H
#define PPLAN_CALIBRATE_H

#include "collective.h"
#include "status.h"

enum cal_backend { CAL_CPU = 0, CAL_CUDA };

struct cal_config {
	enum cal_backend backend;
	int dtype;          /* enum kern_dtype of GEMMs and attention (CUDA) */
	double target_s;    /* timed loop length per point (iterations adapt) */
	int warmup;         /* warm-up calls per point */
	int min_iters, max_iters;
	int repeats;        /* timed loops of a compute point; the best counts */
};

struct cal_gemm_point {
	long m, n, k;        /* C (m,n) = A (m,k) B (k,n), row-major, no transposes */
	double time_s, tflops;
	long iters;
};

/* An element-wise measurement: bytes = what a call reads and writes.
 * Three kinds: a streaming kernel (out = a + b); a transformer layer's
 * element-wise kernels as pplan exec runs them, forward and backward, in
 * the cost model's bytes (calibrate.c); the AdamW step (fp32 parameter,
 * moments and gradient, and the compute copy where the dtype is
 * narrower). */
enum cal_elem { CAL_ELEM_STREAM = 0, CAL_ELEM_LAYER, CAL_ELEM_ADAM, CAL_ELEM_COUNT };

struct cal_bw_point {
	double bytes, time_s, gbps;
	long iters;
	double fwd_share;        /* layer kernels: the forward's share of time_s */
};

struct cal_attn_point {
	/* in */
	long batch, heads, kv_heads, seq, head_dim;
	int fused;           /* the fused kernel, else three steps (GEMM, softmax, GEMM) */
	/* out: FLOPs count the whole s x s square (4 b h s^2 d forward,
	 * twice that backward), as the model FLOPs of docs/design.md do */
	double fwd_s, bwd_s, fwd_tflops, bwd_tflops;
	long iters;
};

#define CAL_MAX_SIZES 40

struct cal_coll_point {
	double bytes;        /* nccl-tests size (collective.h) */
	long count;          /* elements of type float */
	double time_s, algbw_gbps, busbw_gbps;
	long wrong;          /* elements that differ from the expected result, all ranks */
	long iters;
	double loop_s;       /* the back-to-back loop's time per call */
	double exposed_s;    /* on a CPU (calibrate_coll.c), the wait a step meets after
			      * its compute; 0 when not measured.  send_recv: left when
			      * both post, compute, then wait (time_s is then the
			      * receive with the sender computing, at least loop_s);
			      * the other collectives: the call from the group's last
			      * arrival after every rank's compute (at least loop_s) */
};

struct cal_coll {
	enum coll_op op;
	int ranks;           /* group size */
	int groups;          /* groups measured at once (ranks / group size) */
	char link[16];       /* shm, net (CPU); nvlink, net (CUDA) */
	int n;
	struct cal_coll_point pts[CAL_MAX_SIZES];
	double alpha_s, busbw_gbps;   /* cal_fit */
	double avg_busbw_gbps;        /* nccl-tests' footer: the mean over sizes */
};

struct cal_session;

/* MPI (initialised here unless it already is), the node-local rank, the
 * backend on the device of that rank.  A CUDA backend that cannot open is
 * PPLAN_ENOTFOUND with the reason. */
enum pplan_status cal_open(int *argc, char ***argv, const struct cal_config *cfg,
			   struct cal_session **out, struct perr *err);
/* Frees the backend and finalizes MPI. */
void cal_close(struct cal_session *session);

int cal_rank(const struct cal_session *session);
int cal_size(const struct cal_session *session);
int cal_nodes(const struct cal_session *session);
/* The ranks, ranks per host, and the host's load and clock at the start. */
struct run_conditions;
void cal_conditions(const struct cal_session *session, struct run_conditions *cond);
const char *cal_device(const struct cal_session *session);    /* the backend's words */
const char *cal_libraries(const struct cal_session *session);
const char *cal_hosts(const struct cal_session *session);     /* "a, b" */
/* Bytes of device memory one rank may use for buffers: a quarter of
 * what it has (shared with the other ranks on its node for the CPU), the
 * smallest over all ranks, agreed when the session opens, so that every
 * rank skips the same points past it. */
double cal_mem_budget(const struct cal_session *session);

/* Agrees on a status across ranks: the worst, with the lowest failing
 * rank's sentence (every rank returns the same). */
enum pplan_status cal_agree(struct cal_session *session, enum pplan_status st,
			    struct perr *err);

/* The sgemm probe of pplan exec (768^3, the best of 4, all ranks at once,
 * the mean over ranks): the MFU denominator of the CPU. */
double cal_peak_tflops(struct cal_session *session);

/* Each point of pts (shapes given, results filled), all ranks computing at
 * once.  A shape whose buffers exceed the memory budget is PPLAN_EINPUT. */
enum pplan_status cal_gemm(struct cal_session *session, struct cal_gemm_point *pts, int n,
			   struct perr *err);
/* The layer whose element-wise kernels CAL_ELEM_LAYER runs (tp 1), and
 * the bytes the cost model charges for its forward per token
 * (cost_layer_elementwise_bytes): the curve is stated in those. */
struct cal_layer {
	long C, F, heads, kv_heads, head_dim;
	int gated;
	double bytes_per_token;
};

/* pts[i].bytes is the size asked for (set to what the call moves, for
 * the layer: three times its forward bytes, forward and backward). */
enum pplan_status cal_elementwise(struct cal_session *session, enum cal_elem kind,
				  struct cal_bw_point *pts, int n, const struct cal_layer *layer,
				  struct perr *err);
enum pplan_status cal_attention(struct cal_session *session, struct cal_attn_point *pts,
				int n, struct perr *err);

/* One collective over groups of `ranks` consecutive world ranks (all
 * groups at once), at the sizes in bytes[0..n) (rounded down to whole
 * elements per rank; at least one).  Fills *out, alpha-beta included. */
enum pplan_status cal_collective(struct cal_session *session, enum coll_op op, int ranks,
				 const double *bytes, int n, struct cal_coll *out,
				 struct perr *err);

/* The alpha-beta fit of a measured curve: alpha the smallest time of the
 * points up to 4 KiB (the first point when none is that small); bus
 * bandwidth by least squares through the points of at least 1 MiB (all
 * points when none is that large) of (t - alpha) = bytes * factor / busbw.
 * Also the mean busbw over all points. */
void cal_fit(struct cal_coll *coll);

/* Elements that came back wrong, over all sizes. */
long cal_coll_wrong(const struct cal_coll *coll);

/* The profile names of a collective ("all_reduce", ..., "send_recv"). */
const char *cal_coll_name(enum coll_op op);

#endif
