/* predict.c: closed-form cost model plus the pipeline simulation. */
#include "predict.h"

#include "des.h"

void predict_des_costs(const struct layout *l, const struct train_opts *o,
		       const struct prediction *p, struct des_costs *k)
{
	des_costs_from_prediction(p, k);
	k->dp_overlap = o->b.overlap_grad_reduce;
	if (l->zero >= 3) {
		/* ZeRO-3 gathers and reduces per microbatch; the cost model
		 * already knows how much of that prefetching cannot hide. */
		k->dp_reduce_s = p->time.dp_comm_exposed;
		k->dp_overlap = 0;
	}
	/* Megatron-LM (without --overlap-p2p-communication, its default)
	 * and DeepSpeed's pipeline engine wait for each send and receive on
	 * the compute stream: batched isend/irecv, then wait.  So every
	 * chunk's forward and backward also pays one transfer, and the data
	 * is at the peer when that op ends: the transfer itself adds
	 * nothing more. */
	k->fwd_s += p->p2p_s;
	k->bwd_s += p->p2p_s;
	k->p2p_s = 0;
}

enum pplan_status predict_simulate(const struct layout *l,
				   const struct train_opts *o,
				   struct prediction *p, struct perr *e)
{
	struct des_costs k;
	struct des_result r;
	enum pplan_status st;

	/* One stage has no bubble to simulate; past the schedule bound the
	 * closed forms stand (schedule.h). */
	if (l->pp <= 1 ||
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
