/*
 * grads.c: the gradients of a step, from the backward to the update.
 *
 * As Megatron-LM's distributed data parallel: the gradients of a model
 * chunk are reduced in buckets while the chunk's last backward of the
 * step walks back through its layers (a bucket goes as soon as its
 * tensors are final), all-reduced, or reduce-scattered into the rank's
 * shard with the distributed optimizer (zero=1).  Then what the bucket
 * overlap cannot do: the tied embedding's gradient summed between the
 * first and last stage, the gradients that sequence parallelism left
 * partial summed over TP, the global gradient norm (each rank counting
 * what it owns) and clipping, AdamW on the rank's fp32 shard, and
 * (zero=1) the updated weights all-gathered.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

/* ---- gradient buckets ---- */

static float *shard_grad(struct exec *x, int b)
{
	if (x->grad_shard)
		return x->grad_shard + x->shard_off[b];
	return x->grad + x->buckets[b].off;
}

long shard_part(struct exec *x, const struct xtensor *t, float **g, long *first)
{
	const struct bucket *bk = &x->buckets[t->bucket];
	long sb = params_shard_begin(x, bk), sl = params_shard_len(x, bk);
	long lo = t->off > sb ? t->off : sb, hi = t->off + t->rows * t->cols;
	if (hi > sb + sl)
		hi = sb + sl;
	if (hi <= lo)
		return 0;
	*g = shard_grad(x, t->bucket) + (lo - sb);
	*first = lo - t->off;
	return hi - lo;
}

static enum pplan_status bucket_launch(struct exec *x, int i, struct perr *e)
{
	struct bucket *b = &x->buckets[i];
	struct backend *be = x->be;
	b->launched = 1;
	memset(&b->req, 0, sizeof b->req);
	b->req.what = "a data-parallel gradient bucket";
	if (x->dpn == 1) {
		b->req.active = 0;
		return PPLAN_OK;
	}
	if (x->grad_shard)
		return be->ops->reducescatter(be, x->dp, shard_grad(x, i),
					      x->grad + b->off, b->len / x->dpn,
					      KD_F32, &b->req, e);
	return be->ops->allreduce(be, x->dp, x->grad + b->off, b->len, KD_F32,
				  BE_SUM, &b->req, e);
}

/* Buckets of `chunk` whose tensors are all final up to the tensor at
 * index `upto` (tensors are laid out in backward order). */
void grads_ready(struct exec *x, int chunk, int upto)
{
	struct perr e;
	if (!x->opt_overlap_grad)
		return;
	for (int i = 0; i < x->nbuckets; i++) {
		struct bucket *b = &x->buckets[i];
		if (b->chunk != chunk || b->launched || b->embedding || b->last_tensor > upto)
			continue;
		if (bucket_launch(x, i, &e) != PPLAN_OK) {
			x->pending_error = 1;
			x->pending = e;
		}
	}
}

/* Gives the communication in flight a chance to progress between
 * layers: Open MPI moves a request (a gradient bucket, or a pipeline
 * send whose receiver waits for it) only inside an MPI call. */
void grads_poll(struct exec *x)
{
	for (int i = 0; i < x->nbuckets; i++)
		if (x->buckets[i].req.active)
			x->be->ops->test(x->be, &x->buckets[i].req);
	for (int i = 0; i < x->nsends; i++)
		if (x->sends[i].req.active)
			x->be->ops->test(x->be, &x->sends[i].req);
}

/* ---- after the last backward ---- */

enum pplan_status grads_finish(struct exec *x, struct perr *e)
{
	struct backend *b = x->be;
	enum pplan_status st = PPLAN_OK;
	int t = tl_op_begin(x, RUN_OP_DP, -1, -1, OC_DP);

	/* buckets the overlap did not start (or all, without overlap) */
	for (int i = 0; i < x->nbuckets && st == PPLAN_OK; i++)
		if (!x->buckets[i].launched)
			st = bucket_launch(x, i, e);
	/* the buckets' last can finish no sooner than the group's last
	 * member ends its backward */
	if (st == PPLAN_OK && x->dpn > 1) {
		int y = tl_sync_begin(x, SYNC_DP);
		for (int i = 0; i < x->nbuckets && st == PPLAN_OK; i++)
			if (x->buckets[i].req.active)
				st = b->ops->wait(b, &x->buckets[i].req, e);
		tl_sync_end(x, y);
	}
	/* the tied embedding: first and last stage hold one parameter */
	for (int i = 0; i < x->nbuckets && st == PPLAN_OK; i++)
		if (x->buckets[i].embedding) {
			int y = tl_sync_begin(x, SYNC_EMB);
			st = b->ops->allreduce(b, x->emb, shard_grad(x, i),
					       params_shard_len(x, &x->buckets[i]),
					       KD_F32, BE_SUM, NULL, e);
			tl_sync_end(x, y);
		}
	/* gradients that sequence parallelism left partial over TP */
	if (st == PPLAN_OK && x->pack_len > 0) {
		long p = 0;
		float *pk = x->pack;
		for (int pass = 0; pass < 2 && st == PPLAN_OK; pass++) {
			p = 0;
			for (int i = 0; i < x->ntensors; i++) {
				float *g;
				long first, n;
				if (!x->tensors[i].sp_partial ||
				    (n = shard_part(x, &x->tensors[i], &g, &first)) == 0)
					continue;
				if (pass == 0)
					b->ops->copy(b, pk + p, g, (size_t)n * sizeof(float));
				else
					b->ops->copy(b, g, pk + p, (size_t)n * sizeof(float));
				p += n;
			}
			if (pass == 0) {
				int y = tl_sync_begin(x, SYNC_TP);
				st = b->ops->allreduce(b, x->tp, pk, p, KD_F32, BE_SUM, NULL, e);
				tl_sync_end(x, y);
			}
		}
	}
	tl_op_end(x, t);
	return st;
}

/* Squared gradient norms per tensor, over every rank (what this rank
 * owns: its TP shard, its DP shard, replicated tensors once). */
static enum pplan_status grad_norms(struct exec *x, double *total, struct perr *e)
{
	struct backend *b = x->be;
	int dp_owner = x->grad_shard || x->dpr == 0;
	b->ops->zero(b, x->norms_dev, (size_t)x->ntensor_ids * sizeof(double));
	for (int i = 0; i < x->ntensors && dp_owner; i++) {
		const struct xtensor *t = &x->tensors[i];
		float *g;
		long first, n;
		if (t->norm_owner && (n = shard_part(x, t, &g, &first)) > 0)
			b->k->sumsq(b->ks, x->norms_dev + t->id, g, n);
	}
	b->ops->to_host(b, x->norms, x->norms_dev, (size_t)x->ntensor_ids * sizeof(double));
	{
		MPI_Request r;
		int y = tl_sync_begin(x, SYNC_WORLD);
		int rc = MPI_Iallreduce(MPI_IN_PLACE, x->norms, x->ntensor_ids, MPI_DOUBLE,
					MPI_SUM, x->world, &r);
		enum pplan_status st;
		if (rc != MPI_SUCCESS)
			return perr_set(e, PPLAN_ESYSTEM, "the gradient-norm all-reduce failed to start");
		st = exec_wait_mpi(x, &r, "the gradient-norm all-reduce", e);
		tl_sync_end(x, y);
		if (st != PPLAN_OK)
			return st;
	}
	*total = 0;
	for (int i = 0; i < x->ntensor_ids; i++)
		*total += x->norms[i];
	return PPLAN_OK;
}

enum pplan_status grads_update(struct exec *x, struct perr *e)
{
	struct backend *b = x->be;
	double total = 0;
	float gscale = 1.0f;
	enum pplan_status st;
	int t = tl_op_begin(x, RUN_OP_OPTIMIZER, -1, -1, OC_OPTIMIZER);

	st = grad_norms(x, &total, e);
	if (st == PPLAN_OK && x->opt.check && x->step == 0)
		st = gradcheck_capture(x, e);
	if (st == PPLAN_OK && x->integ.on)
		st = integrity_collect(x, e);
	if (st == PPLAN_OK && !isfinite(total))
		st = perr_set(e, PPLAN_ESYSTEM, "the gradient norm is not finite in step %ld", x->step + 1);
	if (st == PPLAN_OK && x->opt.clip > 0 && sqrt(total) > x->opt.clip)
		gscale = (float)(x->opt.clip / (sqrt(total) + 1e-6));
	for (int i = 0; i < x->ntensors && st == PPLAN_OK; i++) {
		const struct xtensor *tt = &x->tensors[i];
		const struct bucket *bk = &x->buckets[tt->bucket];
		long sb = params_shard_begin(x, bk), sl = params_shard_len(x, bk);
		long lo = tt->off > sb ? tt->off : sb, hi = tt->off + tt->rows * tt->cols;
		long so;
		if (hi > sb + sl)
			hi = sb + sl;
		if (hi <= lo)
			continue;
		so = x->shard_off[tt->bucket] + (lo - sb);
		b->k->adamw(b->ks, x->master + so, x->adam_m + so, x->adam_v + so,
			    shard_grad(x, tt->bucket) + (lo - sb),
			    (char *)x->w + (size_t)lo * x->esize, hi - lo, (float)x->opt.lr,
			    0.9f, 0.95f, 1e-8f, tt->decay ? (float)x->opt.weight_decay : 0.0f,
			    x->step + 1, gscale);
	}
	tl_op_end(x, t);
	/* the distributed optimizer: everyone's updated shards to everyone */
	if (st == PPLAN_OK && x->grad_shard && x->dpn > 1) {
		int u = tl_op_begin(x, RUN_OP_DP, -1, -1, OC_DP);
		int y = tl_sync_begin(x, SYNC_DP); /* the first gather waits for the group */
		for (int i = 0; i < x->nbuckets && st == PPLAN_OK; i++) {
			const struct bucket *bk = &x->buckets[i];
			long n = bk->len / x->dpn;
			char *base = (char *)x->w + (size_t)bk->off * x->esize;
			st = b->ops->allgather(b, x->dp, base,
					       base + (size_t)x->dpr * (size_t)n * x->esize,
					       n, b->dtype, NULL, e);
			if (i == 0)
				tl_sync_end(x, y);
		}
		tl_op_end(x, u);
	}
	return st;
}

