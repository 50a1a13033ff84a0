/*
 * profile.h: pplan.profile/1 (docs/profile-format.md), what a machine
 * measured or what a fit found, read and written.
 *
 * The reader enforces every rule of the format (exact schema; positive
 * GEMM shapes and rates, non-decreasing in FLOPs per precision and shape
 * aspect; element-wise and collective points sorted by bytes with
 * positive values; constants the cost model knows, inside their ranges)
 * and keeps every section, present or not, so the commands that use the
 * measured curves and those that use the constants read one struct.  A
 * struct profile owns its arrays: profile_free releases them.
 */
#ifndef PPLAN_PROFILE_H
#define PPLAN_PROFILE_H

#include "cluster.h"
#include "cost_params.h"
#include "status.h"

enum profile_kind { PROFILE_MEASURED = 0, PROFILE_FITTED, PROFILE_PUBLISHED };

/* device.name of a fitted profile whose runs used several GPU types: its
 * per-architecture constants say which part they describe. */
#define PROFILE_ANY_DEVICE "any"

/* The range of a bandwidth a profile states (a device's, a curve's, a
 * collective's fitted busbw), in GB/s, and of a collective's latency, in
 * s: a fit outside them is no fit (pplan calibrate writes null). */
#define PROFILE_GBPS_MIN 1e-6
#define PROFILE_GBPS_MAX 1e6
#define PROFILE_ALPHA_MAX_S 1.0

struct profile_gemm {
	enum precision precision;
	double m, n, k;            /* shape */
	double tflops;             /* achieved */
};

struct profile_elementwise {
	double bytes, gbps;
	double fwd_share;   /* layer_elementwise: the forward kernels' share of the
			     * point's time (0: not measured) */
};

struct profile_attention {
	enum precision precision;
	long batch, heads, kv_heads, seq, head_dim;
	int causal, fused;
	double fwd_tflops, bwd_tflops;
};

struct profile_coll_point {
	double bytes, time_s;
	double algbw_gbps, busbw_gbps;   /* NAN when not given */
	double exposed_s;                /* send_recv on a CPU: the wait left when both ranks
					  * post, compute, then wait; NAN or 0 when not measured */
};

struct profile_collective {
	char op[16];               /* all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv */
	int ranks;
	char link[16];             /* nvswitch, nvlink, pcie, net, shm */
	double alpha_s, busbw_gbps;
	struct profile_coll_point *points;
	int n_points;
};

#define PROFILE_MAX_LIBS 8
#define PROFILE_MAX_SOURCES 32

/* The conditions a measurement ran under; -1 or NAN where unknown. */
struct run_conditions {
	long ranks, ranks_per_host;
	double load_1m, cpu_mhz;     /* at its start */
};

struct profile {
	enum profile_kind kind;
	/* device */
	char device_name[32];
	char device_description[128];
	char backend[16];          /* "cuda", "cpu" or "" (null) */
	double peak_tflops[PREC_COUNT]; /* NAN = null */
	double mem_gib, hbm_gbps;  /* NAN = null */
	/* host, or has_host = 0 */
	int has_host;
	char hostname[64], cpu_model[128];
	long cores;
	double host_mem_gib;
	struct run_conditions cond;  /* what the measurement ran under */
	/* measured curves */
	struct profile_gemm *gemm;
	int n_gemm;
	struct profile_elementwise *elementwise;
	int n_elementwise;
	/* pplan calibrate's two more element-wise curves (additive keys):
	 * a transformer layer's kernels (norms, residual adds, bias,
	 * activation, forward and backward) and the AdamW kernel */
	struct profile_elementwise *layer_elementwise, *optimizer_elementwise;
	int n_layer_elementwise, n_optimizer_elementwise;
	struct profile_attention *attention;
	int n_attention;
	struct profile_collective *collectives;
	int n_collectives;
	/* constants: the embedded defaults with those the file names set */
	int has_constants;
	struct cost_params constants;
	/* fit, or has_fit = 0 */
	int has_fit;
	char fit_runs[256];
	int fit_cases;
	char fit_objective[64];
	double fit_value;
	char fit_sources[PROFILE_MAX_SOURCES][96];
	int n_fit_sources;
	/* provenance */
	char pplan_version[32], git_hash[48], command[512], date[40];
	char lib_name[PROFILE_MAX_LIBS][32], lib_version[PROFILE_MAX_LIBS][32];
	int n_libs;
};

/* An empty measured profile: no sections, every number NAN. */
void profile_init(struct profile *profile);
void profile_free(struct profile *profile);

/* Reads and checks path.  A violation is PPLAN_EINPUT with one sentence
 * naming the file and the key; nothing is left to free on failure. */
enum pplan_status profile_load(const char *path, struct profile *profile, struct perr *err);

/* Writes profile to path (temporary file, then rename).  Sections without
 * entries are left out; `constants` are written when has_constants, every
 * fitted constant and those that differ from the embedded defaults. */
enum pplan_status profile_save(const struct profile *profile, const char *path, struct perr *err);

/* The commands that take a profile refuse one for another GPU: device
 * name must be the cluster's GPU, PROFILE_ANY_DEVICE, or "cpu" with the
 * CPU backend (cpu_backend != 0). */
enum pplan_status profile_check_device(const struct profile *profile, const char *path,
				       const struct cluster *cluster, int cpu_backend,
				       struct perr *err);

/* Where a run's conditions (now, on a host of cores_now cores) differ
 * from those a profile was measured under (then, cores_then), as one
 * sentence in buf ("the profile was measured with 2 ranks (2 per host, 1
 * per core), load 0.3, 2100 MHz; this run has 4 ranks (4 per host, 2 per
 * core), load 1.9"); 0 and "" where they agree or were not recorded.
 * Loads differ by more than 0.5 + 25 % of the larger, clocks by more than
 * 5 %. */
int run_conditions_differ(const struct run_conditions *then, long cores_then,
			  const struct run_conditions *now, long cores_now, char *buf, size_t len);
/* Whether cond records anything (older profiles do not). */
int run_conditions_known(const struct run_conditions *cond);

#endif
