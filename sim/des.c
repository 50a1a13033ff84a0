/*
 * des.c: the pipeline event simulator (model and method in des.h).
 *
 * State per stage: the next op in program order, when the compute stream
 * is free, when the last compute op ended (a send waits for it), and when
 * its two links (to the next and to the previous stage) are free.  State
 * per message: the arrival time of the activation into, and of the
 * gradient into, each (virtual stage, microbatch); negative until sent.
 * A stage stops at a receive whose message has not been sent yet; the
 * sweep over stages repeats until every stage is done or none can move.
 */
#include "des.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void des_costs_from_prediction(const struct prediction *p,
			       struct des_costs *out)
{
	memset(out, 0, sizeof *out);
	out->fwd_s = p->chunk.fwd_s;
	out->bwd_s = p->chunk.bwd_s;
	out->bwd_w_s = p->chunk.bwd_w_s;
	out->first_extra_fwd_s = p->first_extra_fwd_s;
	out->first_extra_bwd_s = p->first_extra_bwd_s;
	out->last_extra_fwd_s = p->last_extra_fwd_s;
	out->last_extra_bwd_s = p->last_extra_bwd_s;
	out->p2p_s = p->p2p_s;
	out->dp_reduce_s = p->dp_reduce_s;
	out->dp_buckets = 4;
	out->dp_overlap = 1;
	out->optimizer_s = p->optimizer_s;
	out->dp_after_s = p->dp_gather_exposed_s;
	out->dp_emb_s = p->dp_emb_s;
}

struct stage_state {
	long pos, end;          /* next op, one past the last */
	double t;               /* compute stream free */
	double last_end;        /* end of the last compute op */
	double link[2];         /* free: [0] towards next stage, [1] previous */
	double first_fwd;       /* start of the first forward, <0 none yet */
	double busy;
	long inflight, peak;
};

/* Duration of compute op kind on virtual stage vs of nv, on a stage
 * whose layers are `scale` times the reference stage's. */
static double op_duration(const struct des_costs *c, int kind, int vs, int nv,
			  double scale)
{
	int first = vs == 0, last = vs == nv - 1;
	switch (kind) {
	case OP_FWD:
		return scale * c->fwd_s + c->op_fixed_s + first * c->first_extra_fwd_s +
		       last * c->last_extra_fwd_s;
	case OP_BWD:
		return scale * c->bwd_s + c->op_fixed_s + first * c->first_extra_bwd_s +
		       last * c->last_extra_bwd_s;
	case OP_BWD_INPUT: /* the LM head's input gradient is on the path */
		return scale * (c->bwd_s - c->bwd_w_s) + c->op_fixed_s +
		       last * c->last_extra_bwd_s;
	case OP_BWD_WEIGHT: /* the embedding's backward is a weight gradient */
		return scale * c->bwd_w_s + first * c->first_extra_bwd_s;
	}
	return 0;
}

/* The split as a layout of pp stages and vp chunks each. */
static void split_layout(const struct des_split *sp, int pp, int vp, struct layout *l)
{
	layout_default(l);
	l->pp = pp;
	l->vp = vp;
	l->pp_first = sp->pp_first;
	l->pp_last = sp->pp_last;
	l->pp_embed = sp->pp_embed;
	l->pp_loss = sp->pp_loss;
	l->pp_table = sp->pp_table;
}

/* Stage i's layers over the reference stage's (1 when all are alike). */
static double stage_scale(const struct des_split *sp, int pp, int stage)
{
	struct layout l;
	if (sp->ref <= 0 || sp->layers <= 0)
		return 1.0;
	split_layout(sp, pp, sp->vp > 0 ? sp->vp : 1, &l);
	return (double)layout_stage_layers(&l, sp->layers, sp->partition, stage) / sp->ref;
}

/* Virtual stage v's layers over a chunk of the reference stage (its
 * layers / vp), for each v: the chunks as a table or the embedding/loss
 * split cuts them (its edge chunks one layer lighter), else each its
 * stage's mean. */
static void chunk_scales(const struct des_split *sp, int pp, int vp, double *out)
{
	struct layout l;
	int first, own = sp->ref > 0 && sp->layers > 0 && sp->vp == vp &&
			 (sp->pp_table || sp->pp_embed || sp->pp_loss);
	split_layout(sp, pp, vp, &l);
	for (int v = 0; v < pp * vp; v++)
		out[v] = own ? (double)layout_chunk_layers(&l, sp->layers, v, &first) * vp / sp->ref
			     : stage_scale(sp, pp, v % pp);
}

static enum pplan_status check_costs(const struct des_costs *c,
				     struct perr *e)
{
	const double v[] = { c->fwd_s, c->bwd_s, c->bwd_w_s, c->op_fixed_s,
			     c->first_extra_fwd_s, c->first_extra_bwd_s,
			     c->last_extra_fwd_s, c->last_extra_bwd_s, c->p2p_s,
			     c->dp_reduce_s, c->optimizer_s, c->dp_after_s, c->dp_emb_s };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		if (!(v[i] >= 0) || !isfinite(v[i]))
			return perr_set(e, PPLAN_EINPUT,
					"simulate: durations must be finite and not negative");
	if (c->bwd_w_s > c->bwd_s)
		return perr_set(e, PPLAN_EINPUT,
				"simulate: the weight-gradient part (%g s) exceeds the backward (%g s)",
				c->bwd_w_s, c->bwd_s);
	if (c->dp_buckets < 1)
		return perr_set(e, PPLAN_EINPUT,
				"simulate: dp_buckets must be at least 1, got %d",
				c->dp_buckets);
	return PPLAN_OK;
}

/* Runs the ops of one stage until it is done or waits for a message.
 * Returns the number of ops it ran. */
static long advance(const struct pipe_schedule *s, const struct des_costs *c,
		    const double *vscale, int stage, struct stage_state *ss, double *act_arr,
		    double *grad_arr, double *last_w, struct des_result *r)
{
	const int pp = s->pp, nv = s->pp * s->vp;
	const long m = s->microbatches;
	const int next = (stage + 1) % pp;
	const int release = s->kind == SCHED_ZB_H1 ? OP_BWD_WEIGHT : OP_BWD;
	long ran = 0;

	while (ss->pos < ss->end) {
		const long i = ss->pos;
		const struct sched_op *op = &s->ops[i];
		const int vs = op->chunk * pp + stage;
		const long cell = (long)vs * m + op->mb;
		double start, end, d;
		int l;

		switch (op->kind) {
		case OP_RECV_ACT:
		case OP_RECV_GRAD:
			end = op->kind == OP_RECV_ACT ? act_arr[cell] : grad_arr[cell];
			if (end < 0)
				return ran; /* not sent yet */
			start = ss->t;
			if (end > ss->t)
				ss->t = end;
			else
				end = start;
			break;
		case OP_SEND_ACT:
		case OP_SEND_GRAD:
			l = op->peer == next ? 0 : 1; /* pp = 2: one link */
			start = ss->last_end > ss->link[l] ? ss->last_end : ss->link[l];
			end = start + c->p2p_s;
			ss->link[l] = end;
			if (op->kind == OP_SEND_ACT)
				act_arr[cell + m] = end;
			else
				grad_arr[cell - m] = end;
			break;
		default:
			d = op_duration(c, op->kind, vs, nv, vscale[vs]);
			start = ss->t;
			end = start + d;
			ss->t = ss->last_end = end;
			ss->busy += d;
			if (op->kind == OP_FWD) {
				if (ss->first_fwd < 0)
					ss->first_fwd = start;
				if (++ss->inflight > ss->peak)
					ss->peak = ss->inflight;
			} else if (op->kind == release) {
				ss->inflight--;
			}
			if (op->kind == release) {
				last_w[2 * op->chunk] = start;
				last_w[2 * op->chunk + 1] = end;
			}
			break;
		}
		if (r->op_start_s) {
			r->op_start_s[i] = start;
			r->op_end_s[i] = end;
		}
		ss->pos++;
		ran++;
	}
	return ran;
}

/* The DP reduction of one stage after its compute (model in des.h).
 * last_w holds (start, end) of each chunk's last weight-gradient op. */
static double reduce_stage(const struct des_costs *c, int vp,
			   const double *last_w, double compute_end,
			   double *bstart, double *bend)
{
	int order[64], n = vp < 64 ? vp : 64, nb = c->dp_buckets;
	double t = 0, dur = c->dp_reduce_s / ((double)vp * nb);
	long k = 0;

	/* chunks in the order their gradients complete (insertion sort) */
	for (int j = 0; j < n; j++) {
		int x = j;
		order[j] = j;
		while (x > 0 && last_w[2 * order[x - 1]] > last_w[2 * order[x]]) {
			int tmp = order[x - 1];
			order[x - 1] = order[x];
			order[x] = tmp;
			x--;
		}
	}
	for (int j = 0; j < n; j++) {
		double a = last_w[2 * order[j]], b = last_w[2 * order[j] + 1];
		for (int q = 0; q < nb; q++, k++) {
			double ready = c->dp_overlap ? a + (b - a) * (q + 1) / nb
						     : compute_end;
			if (ready > t)
				t = ready;
			if (bstart) {
				bstart[k] = t;
				bend[k] = t + dur;
			}
			t += dur;
		}
	}
	return t;
}

void des_result_free(struct des_result *r)
{
	if (!r)
		return;
	free(r->stage);
	free(r->op_start_s);
	free(r->dp_start_s);
	memset(r, 0, sizeof *r);
}

enum pplan_status des_run(const struct pipe_schedule *s,
			  const struct des_costs *c, unsigned flags,
			  struct des_result *r, struct perr *e)
{
	enum pplan_status st = PPLAN_OK;
	const int pp = s->pp, vp = s->vp, nv = pp * vp;
	const long m = s->microbatches, cells = (long)nv * m;
	struct stage_state *ss = NULL;
	double *arr = NULL, *last_w = NULL, *vscale = NULL, span = 0;
	long left = s->nops, ran;

	memset(r, 0, sizeof *r);
	st = check_costs(c, e);
	if (st != PPLAN_OK)
		return st;
	if (vp > 64)
		return perr_set(e, PPLAN_EINPUT,
				"simulate: vp=%d is more model chunks per stage than the simulator keeps (64)",
				vp);
	ss = calloc((size_t)pp, sizeof *ss);
	arr = malloc(sizeof *arr * (size_t)(2 * cells));
	last_w = calloc((size_t)(2 * nv), sizeof *last_w);
	vscale = malloc(sizeof *vscale * (size_t)nv);
	r->stage = calloc((size_t)pp, sizeof *r->stage);
	if (!ss || !arr || !last_w || !vscale || !r->stage)
		goto nomem;
	chunk_scales(&c->split, pp, vp, vscale);
	r->dp_buckets_per_stage = vp * c->dp_buckets;
	if (flags & DES_TIMES) {
		r->op_start_s = malloc(sizeof(double) * (size_t)(2 * s->nops));
		r->dp_start_s = malloc(sizeof(double) *
				       (size_t)(2 * pp * r->dp_buckets_per_stage));
		if (!r->op_start_s || !r->dp_start_s)
			goto nomem;
		r->op_end_s = r->op_start_s + s->nops;
		r->dp_end_s = r->dp_start_s + pp * r->dp_buckets_per_stage;
	}
	for (long i = 0; i < 2 * cells; i++)
		arr[i] = -1.0;
	for (int i = 0; i < pp; i++) {
		ss[i].pos = s->first[i];
		ss[i].end = s->first[i + 1];
		ss[i].first_fwd = -1.0;
	}

	do {
		ran = 0;
		for (int i = 0; i < pp; i++)
			ran += advance(s, c, vscale, i, &ss[i], arr, arr + cells,
				       last_w + 2 * vp * i, r);
		left -= ran;
	} while (ran > 0 && left > 0);
	if (left > 0) {
		int i = 0;
		while (ss[i].pos == ss[i].end)
			i++;
		st = perr_set(e, PPLAN_EINPUT,
			      "simulate: the schedule deadlocks: stage %d waits at op %ld (%s of microbatch %d) for a message never sent",
			      i, ss[i].pos - s->first[i],
			      op_kind_name((enum op_kind)s->ops[ss[i].pos].kind),
			      s->ops[ss[i].pos].mb);
		goto fail;
	}

	r->stages = pp;
	r->ops = s->nops;
	r->optimizer_s = c->optimizer_s;
	for (int i = 0; i < pp; i++)
		if (ss[i].t > span)
			span = ss[i].t; /* the step starts at 0 on stage 0 */
	r->pipeline_span_s = span;
	for (int i = 0; i < pp; i++) {
		struct des_stage *o = &r->stage[i];
		double win = ss[i].t - ss[i].first_fwd, dp_end;
		long k0 = (long)i * r->dp_buckets_per_stage;
		dp_end = reduce_stage(c, vp, last_w + 2 * vp * i, ss[i].t,
				      r->dp_start_s ? r->dp_start_s + k0 : NULL,
				      r->dp_end_s ? r->dp_end_s + k0 : NULL);
		o->busy_s = ss[i].busy;
		o->idle_s = span - ss[i].busy;
		o->bubble_fraction = span > 0 ? o->idle_s / span : 0;
		o->first_fwd_start_s = ss[i].first_fwd;
		o->last_bwd_end_s = ss[i].t;
		o->own_window_bubble_fraction =
			win > 0 ? (win - ss[i].busy) / win : 0;
		o->dp_end_s = (dp_end > ss[i].t ? dp_end : ss[i].t) +
			      (i == 0 || i == pp - 1 ? c->dp_emb_s : 0);
		o->dp_exposed_s = o->dp_end_s - ss[i].t + c->dp_after_s;
		o->end_s = o->dp_end_s + c->optimizer_s + c->dp_after_s;
		o->peak_inflight_chunks = ss[i].peak;
		o->peak_inflight = (double)ss[i].peak / vp;
		assert(ss[i].inflight == 0);
		r->bubble_fraction += o->bubble_fraction / pp;
		r->bubble_s += o->idle_s / pp;
		if (o->dp_exposed_s > r->dp_exposed_s)
			r->dp_exposed_s = o->dp_exposed_s;
		if (o->end_s > r->step_time_s)
			r->step_time_s = o->end_s;
	}
	goto done;

nomem:
	st = perr_set(e, PPLAN_ENOMEM, "simulate: out of memory for %ld ops",
		      s->nops);
fail:
	des_result_free(r);
done:
	free(ss);
	free(arr);
	free(last_w);
	free(vscale);
	return st;
}

enum pplan_status des_simulate(const struct layout *l, long m,
			       const struct des_costs *c,
			       struct des_result *r, struct perr *e)
{
	struct pipe_schedule *s;
	enum pplan_status st = schedule_build(l, m, 0, &s, e);
	if (st != PPLAN_OK) {
		memset(r, 0, sizeof *r);
		return st;
	}
	st = des_run(s, c, 0, r, e);
	schedule_free(s);
	return st;
}

double des_bubble_closed_form(enum schedule kind, int p, long m, int v)
{
	double pm1 = p - 1;
	switch (kind) {
	case SCHED_GPIPE:
	case SCHED_1F1B:
		return pm1 / ((double)m + pm1);
	case SCHED_INTERLEAVED:
		return pm1 / ((double)v * m + pm1);
	case SCHED_ZB_H1:
		return pm1 / (3.0 * m + pm1);
	case SCHED_DUALPIPE: /* not simulated */
		break;
	}
	return NAN;
}

void des_apply(const struct prediction *p, const struct des_result *r,
	       struct prediction *q)
{
	double max_busy = 0, scale;
	struct prediction tmp = *p;
	for (int i = 0; i < r->stages; i++)
		if (r->stage[i].busy_s > max_busy)
			max_busy = r->stage[i].busy_s;
	scale = r->step_time_s > 0 ? p->step_time_s / r->step_time_s : 0;
	tmp.step_time_s = r->step_time_s;
	tmp.bubble_fraction = r->bubble_fraction;
	/* Busy time includes the blocking transfers the caller put into the
	 * op durations (p->time.pp_comm); the rest of the span is bubble. */
	tmp.time.bubble = r->pipeline_span_s - max_busy;
	if (tmp.time.bubble < 0)
		tmp.time.bubble = 0;
	tmp.time.dp_comm_exposed = r->step_time_s - r->pipeline_span_s - r->optimizer_s;
	if (tmp.time.dp_comm_exposed < 0)
		tmp.time.dp_comm_exposed = 0;
	tmp.tokens_per_s = p->tokens_per_s * scale;
	tmp.tflops_per_gpu = p->tflops_per_gpu * scale;
	tmp.mfu = p->mfu * scale;
	tmp.hfu = p->hfu * scale;
	*q = tmp;
}
