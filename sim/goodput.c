/*
 * goodput.c: the share of wall-clock time that trains (goodput.h).
 *
 * Per checkpoint period the job trains T and stalls C to save; an
 * interruption, every M on average, costs the restart R and on average
 * half a period of work done since the last checkpoint.  To first order:
 *
 *     goodput = T / (T + C) * (1 - (R + (T + C) / 2) / M)
 *
 * and the T that maximises it is Daly's first-order optimum
 * T = sqrt(2 C (M + R)).  sim/MODEL.md, "Goodput".
 */
#include "goodput.h"

#include <math.h>

static double or_default(double v, double dflt)
{
	return v > 0 ? v : dflt;
}

static int terms_given(const struct goodput_opts *o)
{
	return o->gpu_mtbi_hours > 0 || o->restart_s > 0 || o->interval_s > 0 ||
	       o->storage_bps > 0;
}

enum pplan_status goodput_compute(const struct goodput_opts *o, long gpus,
				  double params, struct goodput *out, struct perr *e)
{
	double period;

	*out = (struct goodput){ 0 };
	if (o->fixed > 0) {
		if (terms_given(o))
			return perr_set(e, PPLAN_EINPUT,
					"--goodput gives the fraction itself: it conflicts with --gpu-mtbi-hours, --restart-min, --checkpoint-interval-min and --storage-gbs, which derive it");
		out->fraction = o->fixed;
		out->fixed = 1;
		return PPLAN_OK;
	}
	if (gpus < 1 || !(params > 0))
		return perr_set(e, PPLAN_EINTERNAL, "goodput of %ld GPUs and %g parameters", gpus,
				params);
	out->mtbi_s = or_default(o->gpu_mtbi_hours, GOODPUT_GPU_MTBI_HOURS) * 3600.0 /
		      (double)gpus;
	out->restart_s = or_default(o->restart_s, GOODPUT_RESTART_S);
	out->ckpt_bytes = GOODPUT_CKPT_BYTES_PER_PARAM * params;
	out->save_s = out->ckpt_bytes /
		      or_default(o->storage_bps, GOODPUT_STORAGE_BPS_PER_GPU * (double)gpus);
	out->interval_derived = !(o->interval_s > 0);
	out->interval_s = out->interval_derived
				  ? sqrt(2.0 * out->save_s * (out->mtbi_s + out->restart_s))
				  : o->interval_s;
	period = out->interval_s + out->save_s;
	out->lost_checkpoint = out->save_s / period;
	out->lost_failures = (out->restart_s + period / 2.0) / out->mtbi_s;
	out->fraction = (1.0 - out->lost_checkpoint) * (1.0 - out->lost_failures);
	if (!(out->fraction > 0.01))
		return perr_set(e, PPLAN_EINPUT,
				"%ld GPUs are interrupted every %.0f min on average, too often to restart (%.0f min) and redo the work since the last checkpoint (every %.0f min): the job makes no progress",
				gpus, out->mtbi_s / 60.0, out->restart_s / 60.0, out->interval_s / 60.0);
	return PPLAN_OK;
}

double goodput_train_seconds(const struct goodput *g, double tokens, double tokens_per_s)
{
	double f = g->fraction > 0 ? g->fraction : 1.0;
	return tokens / tokens_per_s / f;
}
