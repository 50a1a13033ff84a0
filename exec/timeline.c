/*
 * timeline.c: this rank's log of one step.  Op records (start and end
 * marks) and class segments (from this mark on, the time belongs to that
 * op class), both in backend marks; steps.c resolves them to seconds after
 * the step.  Growing arrays: the log of a step is kept whole.
 */
#include <stdlib.h>

#include "exec_internal.h"

void tl_reset(struct exec *x)
{
	x->tl.nseg = 0;
	x->tl.nop = 0;
	x->tl.npost = 0;
	x->tl.nsync = 0;
	x->tl.cls = OC_IDLE;
}

static int grow(void **p, int *cap, int need, size_t size)
{
	if (need <= *cap)
		return 0;
	{
		int n = *cap ? *cap * 2 : 1024;
		void *q;
		while (n < need)
			n *= 2;
		q = realloc(*p, (size_t)n * size);
		if (!q)
			return -1;
		*p = q;
		*cap = n;
	}
	return 0;
}

void tl_class(struct exec *x, int cls)
{
	struct exec_timeline *t = &x->tl;
	if (grow((void **)&t->seg, &t->cseg, t->nseg + 1, sizeof *t->seg) != 0)
		return; /* out of memory: the log loses detail, not correctness */
	t->seg[t->nseg].mark = x->be->ops->mark(x->be);
	t->seg[t->nseg].cls = cls;
	t->nseg++;
	t->cls = cls;
}

void tl_post(struct exec *x)
{
	struct exec_timeline *t = &x->tl;
	if (grow((void **)&t->post, &t->cpost, t->npost + 1, sizeof *t->post) != 0)
		return; /* the count then differs, and steps.c leaves the waits as they are */
	t->post[t->npost++] = x->be->ops->mark(x->be);
}

int tl_sync_begin(struct exec *x, int group)
{
	struct exec_timeline *t = &x->tl;
	if (grow((void **)&t->sync, &t->csync, t->nsync + 1, sizeof *t->sync) != 0)
		return -1; /* as tl_post: the counts differ, nothing moves */
	t->sync[t->nsync].arrive = t->sync[t->nsync].leave = x->be->ops->mark(x->be);
	t->sync[t->nsync].group = group;
	t->sync[t->nsync].cls = t->cls;
	return t->nsync++;
}

void tl_sync_end(struct exec *x, int i)
{
	if (i >= 0 && i < x->tl.nsync)
		x->tl.sync[i].leave = x->be->ops->mark(x->be);
}

int tl_op_begin(struct exec *x, int kind, int mb, int chunk, int cls)
{
	struct exec_timeline *t = &x->tl;
	if (grow((void **)&t->op, &t->cop, t->nop + 1, sizeof *t->op) != 0)
		return -1;
	tl_class(x, cls);
	t->op[t->nop].kind = kind;
	t->op[t->nop].mb = mb;
	t->op[t->nop].chunk = chunk;
	t->op[t->nop].m0 = t->nseg > 0 ? t->seg[t->nseg - 1].mark : x->be->ops->mark(x->be);
	t->op[t->nop].m1 = t->op[t->nop].m0;
	return t->nop++;
}

void tl_op_end(struct exec *x, int op)
{
	struct exec_timeline *t = &x->tl;
	tl_class(x, OC_IDLE);
	if (op >= 0 && op < t->nop && t->nseg > 0)
		t->op[op].m1 = t->seg[t->nseg - 1].mark;
}
