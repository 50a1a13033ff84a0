/*
 * replay.c: one training step, as sim's op list for this stage says.
 *
 * The ops of the stage run in program order (sim/schedule.h): F and B
 * (or the zero-bubble Bi and W) of (microbatch, chunk) on the model chunk,
 * sends right after the op that produced their tensor, receives right
 * before the op that needs it.  Consecutive sends and receives go out as
 * one group (Megatron's batched isend/irecv); sends do not block, a
 * receive is waited for before its consumer runs.
 *
 * After the last op: the gradients (grads.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

/* ---- pipeline transfers ---- */

static int vstage_of(const struct exec *x, int chunk)
{
	return chunk * x->l.pp + x->stage;
}

/* The tag of the tensor produced by virtual stage `producer` for
 * microbatch mb: activations and gradients apart, stages apart. */
static int p2p_tag(const struct exec *x, int producer, int mb, int grad)
{
	long v = (long)x->l.pp * x->l.vp;
	long id = ((long)mb * v + producer) * 2 + grad;
	return (int)(id % x->tag_ub);
}

static struct send_buf *send_acquire(struct exec *x, int kind, int mb,
				     int chunk, struct perr *e,
				     enum pplan_status *st)
{
	*st = PPLAN_OK;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < x->nsends; i++) {
			struct send_buf *s = &x->sends[i];
			if (s->filled)
				continue;
			if (s->req.active && !x->be->ops->test(x->be, &s->req))
				continue;
			s->kind = kind;
			s->mb = mb;
			s->chunk = chunk;
			s->filled = 1;
			return s;
		}
		/* all in flight: wait for the oldest sent */
		for (int i = 0; i < x->nsends; i++)
			if (!x->sends[i].filled && x->sends[i].req.active) {
				*st = x->be->ops->wait(x->be, &x->sends[i].req, e);
				if (*st != PPLAN_OK)
					return NULL;
				break;
			}
	}
	*st = perr_set(e, PPLAN_ESYSTEM, "no free pipeline send buffer (%d in use)", x->nsends);
	return NULL;
}

static struct send_buf *send_find(struct exec *x, int kind, int mb, int chunk)
{
	for (int i = 0; i < x->nsends; i++) {
		struct send_buf *s = &x->sends[i];
		if (s->filled && s->kind == kind && s->mb == mb && s->chunk == chunk)
			return s;
	}
	return NULL;
}

/* ---- activation slots ---- */

static struct slot *slot_find(struct exec *x, int mb, int chunk)
{
	for (int i = 0; i < x->nslots; i++)
		if (x->slots[i].busy && x->slots[i].mb == mb && x->slots[i].chunk == chunk)
			return &x->slots[i];
	return NULL;
}

static struct slot *slot_get(struct exec *x, int mb, int chunk, struct perr *e,
			     enum pplan_status *st)
{
	struct slot *s = slot_find(x, mb, chunk);
	int busy = 0;
	*st = PPLAN_OK;
	if (s)
		return s;
	for (int i = 0; i < x->nslots; i++) {
		if (x->slots[i].busy) {
			busy++;
			continue;
		}
		if (!s)
			s = &x->slots[i];
	}
	if (!s) {
		*st = perr_set(e, PPLAN_ESYSTEM,
			       "stage %d holds more than the %d microbatches in flight that its schedule allows",
			       x->stage, x->nslots);
		return NULL;
	}
	s->busy = 1;
	s->mb = mb;
	s->chunk = chunk;
	if (busy + 1 > x->slots_peak)
		x->slots_peak = busy + 1;
	return s;
}

/* ---- the ops ---- */

static enum pplan_status op_forward(struct exec *x, const struct sched_op *op,
				    struct perr *e)
{
	enum pplan_status st;
	struct slot *sl = slot_get(x, op->mb, op->chunk, e, &st);
	struct send_buf *out = NULL;
	int t;
	if (!sl)
		return st;
	if (!exec_last_vstage(x, op->chunk)) {
		out = send_acquire(x, OP_SEND_ACT, op->mb, op->chunk, e, &st);
		if (!out)
			return st;
	}
	t = tl_op_begin(x, OP_FWD, op->mb, op->chunk, OC_FORWARD);
	st = chunk_forward(x, sl, op->chunk, sl->layer[0].x_in, out ? out->mem : NULL, e);
	tl_op_end(x, t);
	if (st == PPLAN_OK && exec_last_vstage(x, op->chunk) && x->rc.c[DIM_TP] == 0)
		x->step_loss += sl->loss_sum;
	return st;
}

static enum pplan_status op_backward(struct exec *x, const struct sched_op *op,
				     struct perr *e)
{
	enum pplan_status st;
	struct slot *sl = slot_find(x, op->mb, op->chunk);
	struct send_buf *din = NULL;
	enum bwd_part part = op->kind == OP_BWD_INPUT ? BWD_INPUT
			   : op->kind == OP_BWD_WEIGHT ? BWD_WEIGHT : BWD_ALL;
	int last = 0, t;

	if (!sl)
		return perr_set(e, PPLAN_ESYSTEM,
				"stage %d: backward of microbatch %d chunk %d before its forward",
				x->stage, op->mb, op->chunk);
	if (part != BWD_WEIGHT && !exec_first_vstage(x, op->chunk)) {
		din = send_acquire(x, OP_SEND_GRAD, op->mb, op->chunk, e, &st);
		if (!din)
			return st;
	}
	if (part != BWD_INPUT)
		last = ++x->bwd_done[op->chunk] == x->microbatches;
	t = tl_op_begin(x, op->kind, op->mb, op->chunk, OC_BACKWARD);
	st = chunk_backward(x, sl, op->chunk, x->grad_in, din ? din->mem : NULL,
			    part, last, e);
	tl_op_end(x, t);
	if (part != BWD_INPUT)
		sl->busy = 0; /* the slot's activations are spent */
	if (st == PPLAN_OK && x->pending_error) {
		*e = x->pending;
		st = PPLAN_ESYSTEM;
	}
	return st;
}

/* A run of consecutive sends and receives: posted together, then the
 * receives waited for. */
static enum pplan_status op_comm_run(struct exec *x, const struct sched_op *ops,
				     long base, long n, struct perr *e)
{
	struct backend *b = x->be;
	struct be_req rq[8];
	void *rdst[8];
	int ri[8], rtag[8], nr = 0, t;
	size_t bytes = (size_t)x->d.Tl * x->d.C * x->esize;
	enum pplan_status st = PPLAN_OK;

	t = tl_op_begin(x, ops[0].kind, ops[0].mb, ops[0].chunk, OC_PP);
	b->ops->p2p_begin(b);
	for (long i = 0; i < n && st == PPLAN_OK; i++) {
		const struct sched_op *op = &ops[i];
		int v = vstage_of(x, op->chunk);
		if (op->bytes != (long)bytes) {
			st = perr_set(e, PPLAN_ESYSTEM,
				      "sim's schedule moves %ld bytes per transfer, the executor %zu",
				      op->bytes, bytes);
			break;
		}
		if (op->kind == OP_SEND_ACT || op->kind == OP_SEND_GRAD) {
			int kind = op->kind;
			struct send_buf *s = send_find(x, kind, op->mb, op->chunk);
			if (!s) {
				st = perr_set(e, PPLAN_ESYSTEM,
					      "stage %d sends microbatch %d chunk %d before computing it",
					      x->stage, op->mb, op->chunk);
				break;
			}
			memset(&s->req, 0, sizeof s->req);
			s->req.what = kind == OP_SEND_ACT ? "an activation send" : "a gradient send";
			integrity_sent(x, s->mem, bytes, op->peer,
				       p2p_tag(x, v, op->mb, kind == OP_SEND_GRAD));
			exec_fault_apply(x, FAULT_MESSAGE, s->mem, (long)(bytes / x->esize));
			st = b->ops->send(b, x->pp, op->peer, s->mem, bytes,
					  p2p_tag(x, v, op->mb, kind == OP_SEND_GRAD),
					  &s->req, e);
			s->filled = 0;
		} else {
			int grad = op->kind == OP_RECV_GRAD;
			void *dst;
			if (nr == 8) {
				st = perr_set(e, PPLAN_ESYSTEM, "more than 8 receives in one group");
				break;
			}
			if (grad) {
				dst = x->grad_in;
			} else {
				struct slot *sl = slot_get(x, op->mb, op->chunk, e, &st);
				if (!sl)
					break;
				dst = sl->layer[0].x_in;
			}
			memset(&rq[nr], 0, sizeof rq[nr]);
			rq[nr].what = grad ? "the gradient from the next stage"
					   : "the activation from the previous stage";
			rtag[nr] = p2p_tag(x, grad ? v + 1 : v - 1, op->mb, grad);
			rdst[nr] = dst;
			st = b->ops->recv(b, x->pp, op->peer, dst, bytes, rtag[nr], &rq[nr], e);
			ri[nr++] = (int)i;
		}
	}
	if (st == PPLAN_OK)
		st = b->ops->p2p_end(b, e);
	for (int i = 0; i < nr && st == PPLAN_OK; i++) {
		x->doing_op = base + ri[i];
		st = b->ops->wait(b, &rq[i], e);
		if (st == PPLAN_OK)
			integrity_received(x, rdst[i], bytes, ops[ri[i]].peer, rtag[i]);
	}
	tl_op_end(x, t);
	/* one log record per op, so that the timeline names each transfer */
	if (t >= 0 && n > 1) {
		int m0 = x->tl.op[t].m0, m1 = x->tl.op[t].m1;
		for (long i = 1; i < n; i++) {
			int u = tl_op_begin(x, ops[i].kind, ops[i].mb, ops[i].chunk, OC_PP);
			if (u >= 0) {
				x->tl.op[u].m0 = m0;
				x->tl.op[u].m1 = m1;
			}
			x->tl.nseg--; /* no segment of its own */
		}
		x->tl.cls = OC_IDLE;
	}
	return st;
}

enum pplan_status exec_step(struct exec *x, struct perr *e)
{
	const struct sched_op *ops = x->sched.s->ops + x->sched.first;
	long n = x->sched.count;
	enum pplan_status st = PPLAN_OK;
	struct backend *b = x->be;

	b->ops->zero(b, x->grad, (size_t)x->nparam * sizeof(float));
	for (int j = 0; j < x->l.vp; j++)
		x->bwd_done[j] = 0;
	for (int i = 0; i < x->nbuckets; i++) {
		x->buckets[i].launched = 0;
		memset(&x->buckets[i].req, 0, sizeof x->buckets[i].req);
	}
	x->step_loss = 0;
	x->pending_error = 0;
	/* --check's step: its data checked where it is made (integrity.c) */
	if (x->opt.check && x->step == 0 && (st = integrity_begin(x, e)) != PPLAN_OK)
		return st;

	st = exec_barrier(x, e);
	if (st != PPLAN_OK)
		return st;
	tl_reset(x);
	b->ops->marks_reset(b);
	x->step_origin_s = exec_clock_rank0(x);
	tl_class(x, OC_IDLE); /* the step's origin */

	for (long i = 0; i < n && st == PPLAN_OK;) {
		const struct sched_op *op = &ops[i];
		x->doing_op = i;
		exec_heartbeat(x, op);
		if (i == 0)
			exec_fault_step(x);
		if (op->kind == OP_FWD) {
			st = op_forward(x, op, e);
			i++;
		} else if (op_is_compute((enum op_kind)op->kind)) {
			st = op_backward(x, op, e);
			i++;
		} else {
			long j = i;
			while (j < n && !op_is_compute((enum op_kind)ops[j].kind) && j - i < 8)
				j++;
			st = op_comm_run(x, op, i, j - i, e);
			i = j;
		}
		if (st == PPLAN_OK)
			st = exec_interrupted(x, e);
	}
	/* the step's end: what a hang report names from here on */
	if (st == PPLAN_OK) {
		x->doing_op = n;
		exec_heartbeat(x, NULL);
	}
	/* sends still in flight must land before their buffers are reused */
	for (int i = 0; i < x->nsends && st == PPLAN_OK; i++)
		if (x->sends[i].req.active)
			st = b->ops->wait(b, &x->sends[i].req, e);
	if (st == PPLAN_OK)
		st = grads_finish(x, e);
	if (st == PPLAN_OK)
		st = grads_update(x, e);
	tl_class(x, OC_IDLE); /* the step's end */
	/* every mark must be complete before the log is read (CUDA events) */
	if (st == PPLAN_OK)
		st = b->ops->sync(b, e);
	return st;
}
