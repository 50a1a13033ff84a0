/*
 * acts.c: activation memory.  One slot per (microbatch, chunk) that a
 * stage holds at once, as many as the schedule's peak in flight
 * (schedule_peak_inflight: the same count the memory model prices), each
 * carved from one block: what every layer keeps for its backward (per
 * recomputation mode and attention kernel), the chunk's tokens, and on
 * the last virtual stage the final norm and the logits.  Beside them one
 * workspace for what no op keeps, and the send buffers of the pipeline.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define ALIGN 256

/* A bump allocator over a block: sizes first (base NULL), then pointers. */
struct carve {
	char *base;
	size_t off;
};

static void *take(struct carve *c, size_t bytes)
{
	void *p = c->base ? c->base + c->off : NULL;
	c->off += (bytes + ALIGN - 1) / ALIGN * ALIGN;
	return p;
}

/* The activations one layer keeps (full: all of them, for the workspace
 * copy that full recomputation refills). */
static void layer_take(struct exec *x, struct carve *c, struct layer_act *a,
		       int keep_all)
{
	const struct dims *d = &x->d;
	size_t es = x->esize, f4 = sizeof(float);
	long T = d->T, Tl = d->Tl, C = d->C, HD = d->H * d->D, GD = d->G * d->D;
	int fused = x->opt.fused_attention;
	int zb = x->l.schedule == SCHED_ZB_H1;

	memset(a, 0, sizeof *a);
	a->x_in = take(c, (size_t)Tl * C * es);
	if (x->l.recompute == RECOMPUTE_FULL && !keep_all)
		return;
	a->ln1_mean = take(c, (size_t)Tl * f4);
	a->ln1_rstd = take(c, (size_t)Tl * f4);
	a->ln1_out = take(c, (size_t)Tl * C * es);
	a->q = take(c, (size_t)T * HD * es);
	a->k = take(c, (size_t)T * GD * es);
	a->v = take(c, (size_t)T * GD * es);
	if (!fused && x->l.recompute == RECOMPUTE_NONE)
		a->att = take(c, (size_t)d->B * d->H * d->S * d->S * es);
	if (fused) {
		a->ctx = take(c, (size_t)T * HD * es);
		a->lse = take(c, (size_t)d->T * d->H * f4);
	} else {
		a->ctx = x->work.ctx; /* only its rows form is kept */
	}
	a->ctx_rows = take(c, (size_t)T * HD * es);
	a->x_mid = take(c, (size_t)Tl * C * es);
	a->ln2_mean = take(c, (size_t)Tl * f4);
	a->ln2_rstd = take(c, (size_t)Tl * f4);
	a->ln2_out = take(c, (size_t)Tl * C * es);
	a->fc1_out = take(c, (size_t)T * d->F2 * es);
	a->act_out = take(c, (size_t)T * d->F * es);
	if (zb) {
		a->d_qkv = take(c, (size_t)T * (HD + 2 * GD) * es);
		a->d_proj = take(c, (size_t)T * C * es);
		a->d_fc1 = take(c, (size_t)T * d->F2 * es);
		a->d_fc2 = take(c, (size_t)T * C * es);
	}
	if (!fused && !a->att)
		a->att = NULL; /* selective: the workspace's scores */
}

static void slot_take(struct exec *x, struct carve *c, struct slot *s)
{
	const struct dims *d = &x->d;
	size_t es = x->esize;
	int any_last = 0;
	for (int j = 0; j < x->l.vp; j++)
		any_last |= exec_last_vstage(x, j);
	for (int i = 0; i < x->chunk_layers; i++)
		layer_take(x, c, &s->layer[i], 0);
	s->tokens = take(c, (size_t)d->T * sizeof(int32_t));
	s->targets = take(c, (size_t)d->T * sizeof(int32_t));
	if (any_last) {
		s->chunk_out = take(c, (size_t)d->Tl * d->C * es);
		s->lnf_mean = take(c, (size_t)d->Tl * sizeof(float));
		s->lnf_rstd = take(c, (size_t)d->Tl * sizeof(float));
		s->lnf_out = take(c, (size_t)d->Tl * d->C * es);
		s->dlogits = take(c, (size_t)d->T * d->Vl * es);
	}
}

static void work_take(struct exec *x, struct carve *c, struct work *w)
{
	const struct dims *d = &x->d;
	size_t es = x->esize, f4 = sizeof(float);
	long T = d->T, Tl = d->Tl, C = d->C, HD = d->H * d->D, GD = d->G * d->D;
	long QKV = HD + 2 * GD, BHSS = d->B * d->H * d->S * d->S;

	w->full = take(c, (size_t)T * C * es);
	w->partial = take(c, (size_t)T * C * es);
	w->qkv = take(c, (size_t)T * QKV * es);
	w->scores = x->opt.fused_attention ? NULL : take(c, (size_t)BHSS * es);
	w->ctx = take(c, (size_t)T * HD * es);
	w->d_a = take(c, (size_t)Tl * C * es);
	w->d_b = take(c, (size_t)Tl * C * es);
	w->scratch = take(c, (size_t)Tl * C * es);
	w->d_full = take(c, (size_t)T * C * es);
	w->d_ln = take(c, (size_t)T * C * es);
	w->d_fc = take(c, (size_t)T * d->F2 * es);
	w->d_act = take(c, (size_t)T * d->F * es);
	w->d_fc2 = take(c, (size_t)T * C * es);
	w->d_ctx_rows = take(c, (size_t)T * HD * es);
	w->d_ctx = take(c, (size_t)T * HD * es);
	w->dq = take(c, (size_t)T * HD * es);
	w->dk = take(c, (size_t)T * GD * es);
	w->dv = take(c, (size_t)T * GD * es);
	w->d_att = x->opt.fused_attention ? NULL : take(c, (size_t)BHSS * es);
	w->d_qkv = take(c, (size_t)T * QKV * es);
	w->emb = take(c, (size_t)T * C * es);
	w->rowmax = take(c, (size_t)T * f4);
	w->sums = take(c, (size_t)2 * T * f4);
	w->loss = take(c, (size_t)T * f4);
	if (x->l.recompute == RECOMPUTE_FULL)
		layer_take(x, c, &w->re, 1);
	if (x->l.cp > 1) {
		long c2 = d->S / (2 * x->l.cp);
		w->ring[0] = take(c, (size_t)4 * T * GD * es);
		w->ring[1] = take(c, (size_t)4 * T * GD * es);
		w->blk_o = take(c, (size_t)d->B * d->H * c2 * d->D * es);
		w->blk_dq = take(c, (size_t)d->B * d->H * c2 * d->D * es);
		w->blk_dk = take(c, (size_t)d->B * d->G * c2 * d->D * es);
		w->blk_dv = take(c, (size_t)d->B * d->G * c2 * d->D * es);
		w->blk_l = take(c, (size_t)d->B * d->H * c2 * f4);
	}
}

enum pplan_status acts_build(struct exec *x, struct perr *e)
{
	struct carve c = { NULL, 0 };
	struct slot probe;
	struct layer_act *la;
	long peak = schedule_peak_inflight(x->sched.s, x->stage);
	size_t act = (size_t)x->d.Tl * x->d.C * x->esize;

	/* the workspace first: layers of three-step attention point into it */
	work_take(x, &c, &x->work);
	x->work_bytes = c.off;
	x->work_mem = x->be->ops->alloc(x->be, x->work_bytes);
	if (!x->work_mem)
		return perr_set(e, PPLAN_ENOMEM, "the workspace (%.1f MiB) does not fit in %s memory",
				(double)x->work_bytes / 1048576.0, x->be->ops->name);
	c.base = x->work_mem;
	c.off = 0;
	work_take(x, &c, &x->work);

	x->nslots = (int)(peak > 0 ? peak : 1);
	x->slots = calloc((size_t)x->nslots, sizeof *x->slots);
	la = calloc((size_t)x->nslots * (size_t)x->chunk_layers, sizeof *la);
	if (!x->slots || !la) {
		free(la);
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the activation slots");
	}
	memset(&probe, 0, sizeof probe);
	probe.layer = la;
	c.base = NULL;
	c.off = 0;
	slot_take(x, &c, &probe);
	x->slot_bytes = c.off;
	for (int i = 0; i < x->nslots; i++) {
		struct slot *s = &x->slots[i];
		s->layer = la + (size_t)i * (size_t)x->chunk_layers;
		s->mem = x->be->ops->alloc(x->be, x->slot_bytes);
		if (!s->mem)
			return perr_set(e, PPLAN_ENOMEM,
					"%d activation slots of %.1f MiB do not fit in %s memory",
					x->nslots, (double)x->slot_bytes / 1048576.0,
					x->be->ops->name);
		c.base = s->mem;
		c.off = 0;
		slot_take(x, &c, s);
	}

	x->nsends = 2 * x->l.vp + 2;
	x->sends = calloc((size_t)x->nsends, sizeof *x->sends);
	if (!x->sends)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the send buffers");
	for (int i = 0; i < x->nsends; i++)
		if (!(x->sends[i].mem = x->be->ops->alloc(x->be, act)))
			return perr_set(e, PPLAN_ENOMEM, "the pipeline's send buffers do not fit");
	x->grad_in = x->be->ops->alloc(x->be, act);
	x->tok_host = calloc((size_t)(2 * x->d.T), sizeof(int32_t));
	if (!x->grad_in || !x->tok_host)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the pipeline buffers");
	return PPLAN_OK;
}

void acts_free(struct exec *x)
{
	struct backend *b = x->be;
	if (!b)
		return;
	for (int i = 0; x->slots && i < x->nslots; i++)
		b->ops->free(b, x->slots[i].mem);
	if (x->slots)
		free(x->slots[0].layer);
	free(x->slots);
	x->slots = NULL;
	for (int i = 0; x->sends && i < x->nsends; i++)
		b->ops->free(b, x->sends[i].mem);
	free(x->sends);
	x->sends = NULL;
	b->ops->free(b, x->work_mem);
	b->ops->free(b, x->grad_in);
	free(x->tok_host);
	x->work_mem = NULL;
	x->grad_in = NULL;
	x->tok_host = NULL;
}
