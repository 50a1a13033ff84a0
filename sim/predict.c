/* predict.c: closed-form cost model plus the pipeline simulation. */
#include "predict.h"

#include "des.h"

#include <math.h>
#include <stdio.h>

void predict_des_costs(const struct layout *l, const struct train_opts *o,
		       const struct prediction *p, struct des_costs *k)
{
	des_costs_from_prediction(p, k);
	k->dp_overlap = o->b.overlap_grad_reduce;
	if (l->zero >= 3) {
		/* ZeRO-3 gathers and reduces per microbatch; the cost model
		 * already knows how much of that prefetching cannot hide. */
		k->dp_reduce_s = p->time.dp_comm_exposed - p->dp_emb_s;
		k->dp_overlap = 0;
	} else if (l->zero == 2) {
		/* ZeRO-2 reduces every microbatch's gradients; the cost
		 * model has priced what each backward leaves exposed. */
		k->dp_reduce_s = p->time.dp_comm_exposed - p->dp_gather_exposed_s - p->dp_emb_s;
		k->dp_overlap = 0;
	}
	/* Megatron-LM (without --overlap-p2p-communication, its default)
	 * and DeepSpeed's pipeline engine wait for each send and receive on
	 * the compute stream: batched isend/irecv, then wait.  So every
	 * chunk's forward and backward also pays one transfer, and the data
	 * is at the peer when that op ends: the transfer itself adds
	 * nothing more. */
	k->op_fixed_s = p->p2p_s;
	k->p2p_s = 0;
	/* Stages of other layer counts than the one the chunk was priced on. */
	k->split.layers = p->split_layers;
	k->split.ref = p->split_ref;
	k->split.partition = o->b.partition;
	k->split.pp_first = l->pp_first;
	k->split.pp_last = l->pp_last;
	k->split.vp = l->vp;
	k->split.pp_embed = l->pp_embed;
	k->split.pp_loss = l->pp_loss;
	k->split.pp_table = l->pp_table;
}

enum pplan_status predict_simulate(const struct layout *l,
				   const struct train_opts *o,
				   struct prediction *p, struct perr *e)
{
	struct des_costs k;
	struct des_result r;
	enum pplan_status st;

	/* One stage has no bubble to simulate; past the schedule bound,
	 * and for DualPipe, the closed forms stand (schedule.h). */
	if (l->pp <= 1 || l->schedule == SCHED_DUALPIPE ||
	    schedule_chunk_microbatches(l, p->microbatches) > SCHEDULE_MAX_CHUNK_MBS)
		return PPLAN_OK;
	predict_des_costs(l, o, p, &k);
	st = des_simulate(l, p->microbatches, &k, &r, e);
	if (st != PPLAN_OK)
		return st;
	des_apply(p, &r, p);
	des_result_free(&r);
	return PPLAN_OK;
}

enum pplan_status predict_layout(const struct model_spec *m,
				 const struct cluster *c,
				 const struct layout *l,
				 const struct train_opts *o,
				 struct prediction *p, struct perr *e)
{
	enum pplan_status st = cost_predict(m, c, l, o, p, e);
	if (st != PPLAN_OK || !o->use_des)
		return st;
	return predict_simulate(l, o, p, e);
}

static enum pplan_status impossible(const struct layout *l, const char *term,
				    double v, const char *unit, struct perr *e)
{
	char lb[256];
	layout_format(l, lb, sizeof lb);
	return perr_set(e, PPLAN_EINTERNAL,
			"internal error: the predicted %s is %g%s for %s; this is a bug in pplan's model, not in the input",
			term, v, unit, lb);
}

enum pplan_status predict_check(const struct layout *l,
				const struct prediction *p, struct perr *e)
{
	const struct { const char *name; double v; int positive; } times[] = {
		{ "compute time", p->time.compute, 1 },
		{ "recompute time", p->time.recompute, 0 },
		{ "TP communication time", p->time.tp_comm, 0 },
		{ "CP communication time", p->time.cp_comm, 0 },
		{ "EP communication time", p->time.ep_comm, 0 },
		{ "PP communication time", p->time.pp_comm, 0 },
		{ "exposed DP communication time", p->time.dp_comm_exposed, 0 },
		{ "total DP communication time", p->time.dp_comm_total, 0 },
		{ "bubble time", p->time.bubble, 0 },
		{ "optimizer time", p->time.optimizer, 0 },
		{ "step time", p->step_time_s, 1 },
	};
	const struct { const char *name; double v; } bytes[] = {
		{ "weight memory", p->mem.weights },
		{ "gradient memory", p->mem.gradients },
		{ "optimizer-state memory", p->mem.optimizer },
		{ "activation memory", p->mem.activations },
		{ "other memory", p->mem.other },
		{ "total memory", p->mem.total },
	};
	const struct { const char *name; double v; } fractions[] = {
		{ "MFU", p->mfu }, { "HFU", p->hfu },
		{ "bubble fraction", p->bubble_fraction },
	};

	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		if (!isfinite(times[i].v) || times[i].v < 0 ||
		    (times[i].positive && !(times[i].v > 0)))
			return impossible(l, times[i].name, times[i].v, " s", e);
	for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++)
		if (!isfinite(bytes[i].v) || bytes[i].v < 0)
			return impossible(l, bytes[i].name, bytes[i].v / (1024.0 * 1024 * 1024),
					  " GiB", e);
	if (!(p->mem.total > 0) || p->mem.total < p->mem.weights)
		return impossible(l, "total memory (below the weights)",
				  p->mem.total / (1024.0 * 1024 * 1024), " GiB", e);
	for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++)
		if (!isfinite(fractions[i].v) || fractions[i].v < 0 || fractions[i].v > 1)
			return impossible(l, fractions[i].name, 100 * fractions[i].v, " %", e);
	if (!isfinite(p->tokens_per_s) || !(p->tokens_per_s > 0))
		return impossible(l, "throughput", p->tokens_per_s, " tokens/s", e);
	if (!isfinite(p->tflops_per_gpu) || !(p->tflops_per_gpu > 0))
		return impossible(l, "rate", p->tflops_per_gpu, " TFLOP/s per GPU", e);
	return PPLAN_OK;
}
