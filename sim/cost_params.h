/*
 * cost_params.h: the cost model's constants as data.
 *
 * Every number the time and memory formulas take that is neither a
 * data-sheet fact nor a count (FLOPs, bytes) is a field here, with a name,
 * a physical range and a prior: the value a first-principles reading
 * gives before any measured run is seen.  Those marked fitted are what
 * `pplan fit` moves (to minimise the mean absolute log error against
 * measured runs, inside the range); the rest are judgment values that no
 * calibration run constrains, kept at their prior.  The embedded defaults
 * are the fit on the whole calibration set (sim/MODEL.md section 11 gives
 * the command that reproduces them).  A pplan.profile/1 file's
 * `constants` replace them by name.  The struct is plain data.
 */
#ifndef PPLAN_PARAMS_H
#define PPLAN_PARAMS_H

#include <stddef.h>

#include "gpu.h"
#include "status.h"

struct cost_params {
	/* GEMMs (sim/gemm.c): the fraction of the dense bf16/fp16 peak that
	 * large GEMMs reach inside a training step, per architecture; fp8's
	 * ceiling relative to it; the GEMM duration at peak (us) at which
	 * the achieved rate is half the ceiling (the saturation knee). */
	double gemm_ceiling[ARCH_COUNT];
	double gemm_fp8_rel[ARCH_COUNT];
	double gemm_fp4_rel[ARCH_COUNT]; /* NVFP4's ceiling relative to bf16's, on its fp4 peak */
	double gemm_half_us;
	double hbm_eff;               /* streaming kernels' share of HBM bandwidth */
	/* Flash attention's forward rate relative to the GEMM ceiling; the
	 * backward's relative to the forward's. */
	double attn_fwd_rel;
	double attn_bwd_fwd;
	/* Links: scales on the presets' large-message efficiencies. */
	double net_eff_scale;
	double nvlink_eff_scale;
	/* Overlap residues: shares of overlapped communication never hidden. */
	double tp_overlap_exposed;
	double ep_overlap_exposed;    /* MoE all-to-alls under 1F1B A2A overlap */
	double dp_overlap_unhidden;   /* the once-per-step DP buckets */
	double zero3_unhidden;        /* per-microbatch sharded traffic: ZeRO-3, ZeRO-2's reduce-scatter */
	/* Fixed costs. */
	double layer_fixed_us;        /* forward, per layer and microbatch; backward twice it */
	double step_fixed_ms;         /* per step: norm reduction, launches, data, logging */
	double ds_pipe_step_ms;       /* DeepSpeed's pipeline engine, per transfer */
	double moe_expert_fixed_us;   /* forward, per local expert, MoE layer and microbatch;
				       * backward twice it */
	/* Smaller factors. */
	double moe_imbalance;         /* busiest expert's tokens / the mean */
	double fp8_elementwise;       /* fp8's element-wise traffic / bf16's */
	/* Memory extras. */
	double mem_context_gib;       /* CUDA context and workspaces */
	double mem_nccl_gib;          /* NCCL buffers, more than one GPU */
	double mem_fragmentation;     /* caching-allocator reserve / activations */
	/* Measured curves (--profile): scales on the times they give, for
	 * compute kernels (GEMMs, attention, element-wise, optimizer) and
	 * for collectives.  1 in every embedded fit; `pplan tune` refits them
	 * on the runs it measured (sim/MODEL.md 11.3). */
	double measured_compute_scale;
	double measured_comm_scale;
};

enum cost_param_target { TARGET_TIME = 0, TARGET_MEMORY };

/* One constant: its name (as sim/MODEL.md and profiles name it), where it
 * lives in struct cost_params, its physical range, its prior and whether
 * pplan fit moves it. */
struct cost_param_info {
	const char *name;
	size_t offset;
	double min, max;
	double prior;
	int fitted;
	enum cost_param_target target;
	const char *unit;
};

/* The table; *n its length. */
const struct cost_param_info *cost_param_table(int *n);
/* The entry named `name` (exact), or NULL. */
const struct cost_param_info *cost_param_find(const char *name);
/* The field of params that info describes. */
double *cost_param_ref(struct cost_params *params, const struct cost_param_info *info);
double cost_param_get(const struct cost_params *params, const struct cost_param_info *info);

/* The embedded defaults (the fit on the calibration set). */
const struct cost_params *cost_params_default(void);
/* Every constant at its prior (where pplan fit starts). */
void cost_params_prior(struct cost_params *out);

/* The embedded fit's leave-one-source-out step-time error on the
 * calibration set, overall and for its worst source (sim/MODEL.md 11;
 * tests/cli_accuracy.sh checks them against `pplan validate
 * --cross-validate source`): what a figure on a constant the fit did
 * not see is read against. */
#define CAL_LOSO_MAPE_PCT 5.0
#define CAL_LOSO_WORST_SOURCE_PCT 9.6

/* What a run has that brings in constants of its own (bits). */
enum { UNFIT_MOE = 1, UNFIT_EP_OVERLAP = 2, UNFIT_FP4 = 4 };

/* The constants that price a run on `arch` in precision `prec` (with the
 * UNFIT_ bits `what`: an MoE model, the 1F1B A2A overlap, NVFP4) and that no
 * measured run fitted, as "name value" pairs joined by ", " into buf;
 * returns how many (0: buf ""). */
int cost_params_unfitted(const struct cost_params *params, enum gpu_arch arch,
			 enum precision prec, unsigned what, char *buf, size_t len);

/* Sets the constant `name` of params to v.  An unknown name is PPLAN_EINPUT
 * with the list of names (and "did you mean" for a close one); a value
 * outside the range is PPLAN_EINPUT with the range.  `where` prefixes the
 * sentence (a file and key). */
enum pplan_status cost_param_set(struct cost_params *params, const char *name, double v,
				 const char *where, struct perr *err);

#endif
