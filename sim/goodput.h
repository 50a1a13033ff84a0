/*
 * goodput.h: how much of a training run's wall-clock time trains.  A job
 * of N GPUs is interrupted (a failed GPU, host or link, or maintenance)
 * every M = H / N hours, H the mean time between interruptions of one
 * GPU's share; each interruption costs the restart and the work since
 * the last checkpoint; each checkpoint stalls the job while it is saved.
 * The checkpoint interval is Daly's first-order optimum unless given.
 * Derivation, defaults and their sources: sim/MODEL.md, "Goodput".
 */
#ifndef PPLAN_GOODPUT_H
#define PPLAN_GOODPUT_H

#include "status.h"

/* Llama 3 405B: 466 job interruptions in a 54-day snapshot on 16,384
 * H100 GPUs (Dubey et al. 2024, 3.3.4): 54 * 24 * 16384 / 466 GPU-hours
 * between interruptions per GPU. */
#define GOODPUT_GPU_MTBI_HOURS (54.0 * 24.0 * 16384.0 / 466.0)
/* Restarting after an interruption: rescheduling, process and
 * communicator start-up, loading the checkpoint.  pplan's assumption (no
 * source cited here gives it); with Llama 3's interruption rate it gives
 * the "more than 90 %" effective training time Meta reports. */
#define GOODPUT_RESTART_S 600.0
/* Checkpoint write bandwidth per GPU of the job: Meta's Tectonic
 * sustains 2 TB/s for Llama 3's 16,384 GPUs (Dubey et al. 2024, 3.3.1). */
#define GOODPUT_STORAGE_BPS_PER_GPU (2e12 / 16384.0)
/* A checkpoint's bytes per parameter: bf16 weights (2), fp32 master
 * weights (4), Adam's two moments (8). */
#define GOODPUT_CKPT_BYTES_PER_PARAM 14.0

/* What the user set; a value <= 0 takes the default. */
struct goodput_opts {
	double fixed;              /* --goodput F: this fraction, nothing derived */
	double gpu_mtbi_hours;     /* --gpu-mtbi-hours */
	double restart_s;          /* --restart-min, in seconds */
	double interval_s;         /* --checkpoint-interval-min, in seconds (0: Daly) */
	double storage_bps;        /* --storage-gbs, bytes/s for the whole job */
	double gpu_hour_cost;      /* --gpu-hour-cost, per GPU-hour (0: not asked) */
};

/* The goodput of one job size and its terms. */
struct goodput {
	double fraction;           /* of wall-clock time that trains, (0, 1] */
	int fixed;                 /* given with --goodput: no terms */
	double mtbi_s;             /* the job's mean time between interruptions */
	double save_s;             /* one checkpoint's stall */
	double interval_s;         /* training time between checkpoints */
	int interval_derived;      /* Daly's optimum, not given */
	double restart_s;
	double ckpt_bytes;
	double lost_checkpoint;    /* share of wall-clock time saving checkpoints */
	double lost_failures;      /* share restarting and redoing lost work */
};

/* The goodput of `gpus` GPUs training a model of `params` parameters.
 * PPLAN_EINPUT when interruptions come faster than the job can restart
 * and redo its work (no progress), or --goodput is set with the terms
 * it replaces. */
enum pplan_status goodput_compute(const struct goodput_opts *opts, long gpus,
				  double params, struct goodput *out, struct perr *err);

/* Wall-clock seconds to train `tokens` at `tokens_per_s` with goodput. */
double goodput_train_seconds(const struct goodput *goodput, double tokens, double tokens_per_s);

#endif
