/*
 * run.c: timelines of one step (run.h), the names both sides use, the
 * per-stage summary of sim/MODEL.md's definitions (section 1), and the predicted
 * timeline: the event simulation's op times with each op's time split
 * into op classes by the prediction's terms.
 *
 * The split of a predicted F or B op: its recomputation is the chunk's
 * recompute_s (exact); the rest is divided between compute and the
 * TP/CP/EP collectives in the proportion of the prediction's step terms
 * (time_s.compute against tp_comm, cp_comm, ep_comm), which is exact when
 * every layer has the same shape (EP is counted with TP: the report has
 * no EP class).  A receive waits idle until its sender's transfer can
 * start and is pipeline communication for the transfer itself (p2p_s).
 */
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_keys[OC_COUNT] = {
	"forward", "backward", "recompute", "tp_comm", "cp_comm", "pp_comm",
	"dp_comm_exposed", "optimizer", "idle",
};
static const char *const class_labels[OC_COUNT] = {
	"fwd", "bwd", "recomp", "tp", "cp", "pp", "dp_exp", "optim", "idle",
};

const char *op_class_key(enum op_class c)
{
	return c >= 0 && c < OC_COUNT ? class_keys[c] : "?";
}

const char *op_class_label(enum op_class c)
{
	return c >= 0 && c < OC_COUNT ? class_labels[c] : "?";
}

const char *op_class_name(enum op_class c)
{
	static const char *const names[OC_COUNT] = {
		"forward", "backward", "recompute", "TP comm", "CP comm", "PP comm",
		"DP exposed", "optimizer", "idle",
	};
	return c >= 0 && c < OC_COUNT ? names[c] : "?";
}

enum op_class op_class_from_key(const char *key)
{
	for (int i = 0; i < OC_COUNT; i++)
		if (key && strcmp(key, class_keys[i]) == 0)
			return (enum op_class)i;
	return OC_COUNT;
}

const char *run_op_name(int kind)
{
	static const char *const names[] = { "F", "B", "Bi", "W", "send_act", "recv_act",
					     "send_grad", "recv_grad", "dp", "optimizer" };
	return kind >= 0 && kind < RUN_OP_KIND_COUNT ? names[kind] : "?";
}

void run_timeline_free(struct run_timeline *t)
{
	if (!t)
		return;
	for (int i = 0; t->stage && i < t->stages; i++)
		free(t->stage[i].ops);
	free(t->stage);
	t->stage = NULL;
	t->stages = 0;
}

static int is_busy(int kind)
{
	return kind == OP_FWD || kind == OP_BWD || kind == OP_BWD_INPUT ||
	       kind == OP_BWD_WEIGHT;
}

void run_timeline_summarise(struct run_timeline *t)
{
	double first = INFINITY, last = -INFINITY;
	for (int s = 0; s < t->stages; s++) {
		const struct run_stage *st = &t->stage[s];
		for (long i = 0; i < st->nops; i++) {
			const struct run_op *o = &st->ops[i];
			if (o->kind == OP_FWD && o->start_s < first)
				first = o->start_s;
			if (is_busy(o->kind) && o->kind != OP_FWD && o->end_s > last)
				last = o->end_s;
		}
	}
	t->pipeline_span_s = last > first ? last - first : 0;
	t->bubble_fraction = 0;
	memset(t->classes_s, 0, sizeof t->classes_s);
	for (int s = 0; s < t->stages; s++) {
		struct run_stage *st = &t->stage[s];
		st->busy_s = 0;
		for (long i = 0; i < st->nops; i++)
			if (is_busy(st->ops[i].kind))
				st->busy_s += st->ops[i].end_s - st->ops[i].start_s;
		st->idle_s = t->pipeline_span_s > st->busy_s ? t->pipeline_span_s - st->busy_s : 0;
		st->bubble_fraction = t->pipeline_span_s > 0 ? st->idle_s / t->pipeline_span_s : 0;
		t->bubble_fraction += st->bubble_fraction / t->stages;
		for (int c = 0; c < OC_COUNT; c++)
			t->classes_s[c] += st->classes_s[c] / t->stages;
	}
}

/* Shares of a compute op's time (recomputation aside) that are TP (with
 * EP) and CP communication. */
static void comm_shares(const struct prediction *p, double *tp, double *cp)
{
	const struct time_breakdown *b = &p->time;
	double all = b->compute + b->tp_comm + b->cp_comm + b->ep_comm;
	*tp = all > 0 ? (b->tp_comm + b->ep_comm) / all : 0;
	*cp = all > 0 ? b->cp_comm / all : 0;
}

enum pplan_status run_timeline_predicted(const struct prediction *p,
					 const struct pipe_schedule *s,
					 const struct des_result *r,
					 struct run_timeline *out,
					 struct perr *e)
{
	double tp, cp;
	memset(out, 0, sizeof *out);
	if (!r->op_start_s || !r->op_end_s)
		return perr_set(e, PPLAN_EINPUT, "the simulation kept no op times");
	comm_shares(p, &tp, &cp);
	out->stages = s->pp;
	out->step_time_s = r->step_time_s;
	out->stage = calloc((size_t)s->pp, sizeof *out->stage);
	if (!out->stage)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the predicted timeline");
	for (int st = 0; st < s->pp; st++) {
		struct run_stage *rs = &out->stage[st];
		long a = s->first[st], b = s->first[st + 1], n = 0;
		int nb = r->dp_buckets_per_stage;
		double accounted = 0;
		rs->stage = st;
		rs->ops = calloc((size_t)(b - a + nb + 1), sizeof *rs->ops);
		if (!rs->ops) {
			run_timeline_free(out);
			return perr_set(e, PPLAN_ENOMEM, "out of memory for the predicted timeline");
		}
		for (long i = a; i < b; i++) {
			const struct sched_op *o = &s->ops[i];
			struct run_op *ro = &rs->ops[n++];
			double d = r->op_end_s[i] - r->op_start_s[i];
			ro->kind = o->kind;
			ro->mb = o->mb;
			ro->chunk = o->chunk;
			ro->start_s = r->op_start_s[i];
			ro->end_s = r->op_end_s[i];
			if (o->kind == OP_FWD) {
				/* a blocking transfer rides on each chunk op (predict.c) */
				double x = s->pp > 1 && d > p->p2p_s ? p->p2p_s : 0;
				ro->cls = OC_FORWARD;
				rs->classes_s[OC_PP] += x;
				rs->classes_s[OC_FORWARD] += (d - x) * (1 - tp - cp);
				rs->classes_s[OC_TP] += (d - x) * tp;
				rs->classes_s[OC_CP] += (d - x) * cp;
				accounted += d;
			} else if (is_busy(o->kind)) {
				double x = s->pp > 1 && o->kind != OP_BWD_WEIGHT && d > p->p2p_s ? p->p2p_s : 0;
				double rc = o->kind == OP_BWD_WEIGHT ? 0 : p->chunk.recompute_s;
				double rest = d - x > rc ? d - x - rc : 0;
				rs->classes_s[OC_PP] += x;
				d -= x;
				ro->cls = OC_BACKWARD;
				rs->classes_s[OC_RECOMPUTE] += d - rest;
				rs->classes_s[OC_BACKWARD] += rest * (1 - tp - cp);
				rs->classes_s[OC_TP] += rest * tp;
				rs->classes_s[OC_CP] += rest * cp;
				accounted += d + x;
			} else if (o->kind == OP_RECV_ACT || o->kind == OP_RECV_GRAD) {
				double pp = d < p->p2p_s ? d : p->p2p_s;
				ro->cls = OC_PP;
				rs->classes_s[OC_PP] += pp;
				rs->classes_s[OC_IDLE] += d - pp;
				accounted += d;
				/* the wait for the producer is idle time: the
				 * receive is its transfer, at the end */
				ro->start_s = ro->end_s - pp;
			} else {
				ro->cls = OC_PP; /* a send: on the link, not the stream */
			}
		}
		for (int k = 0; k < nb && r->dp_start_s; k++) {
			struct run_op *ro = &rs->ops[n++];
			ro->kind = RUN_OP_DP;
			ro->mb = ro->chunk = -1;
			ro->cls = OC_DP;
			ro->start_s = r->dp_start_s[st * nb + k];
			ro->end_s = r->dp_end_s[st * nb + k];
		}
		rs->classes_s[OC_DP] = r->stage[st].dp_exposed_s;
		rs->classes_s[OC_OPTIMIZER] = r->optimizer_s;
		{
			struct run_op *ro = &rs->ops[n++];
			ro->kind = RUN_OP_OPTIMIZER;
			ro->mb = ro->chunk = -1;
			ro->cls = OC_OPTIMIZER;
			ro->end_s = r->stage[st].end_s;
			ro->start_s = ro->end_s - r->optimizer_s;
		}
		accounted += r->stage[st].dp_exposed_s + r->optimizer_s;
		rs->classes_s[OC_IDLE] += r->step_time_s > accounted ? r->step_time_s - accounted : 0;
		rs->nops = n;
	}
	run_timeline_summarise(out);
	return PPLAN_OK;
}

void run_measured_free(struct run_measured *r)
{
	if (!r)
		return;
	free(r->step_times_s);
	free(r->losses);
	free(r->grad_norms);
	free(r->tensor_names);
	free(r->rank_mem_peak);
	free(r->rank_process_peak);
	free(r->stage_mem);
	for (int i = 0; r->hosts && i < r->ranks; i++)
		free(r->hosts[i]);
	free(r->hosts);
	run_timeline_free(&r->timeline);
	memset(r, 0, sizeof *r);
}
