/*
 * gradcheck.c: --check's comparison of step 1's gradients element by
 * element.  Step 1 comes before any update could carry a difference
 * forward (Adam divides by the root of the second moment, so a rounding
 * difference of 1e-7 in step 1 is a 1e-5 difference in the weights of
 * step 2).  After the gradients are reduced and before they are clipped,
 * every rank sends the elements it owns (as the gradient norm counts them:
 * its TP block, its DP shard, replicated tensors once) to rank 0, which
 * puts each at its place in the global tensor; the single-rank reference
 * does the same on its own.  Two layouts that compute the same step differ
 * only by rounding, so the bound is rounding's.  Every rounding is an
 * independent error of up to u times what it rounds; along one gradient
 * element's way they add up as a random walk of
 *
 *   n = R + V + D (2 K + S)  sums' terms rounded at u_acc, and 10 D stores at u_store
 *
 * with R = gbs x seq the terms of a weight gradient's sum (every token of
 * the step), V the vocabulary (the head's input gradient sums over it), D
 * the layers a gradient passes on its way back, each with two GEMM sums
 * over K = max(hidden, ffn) (forward and input gradient) and attention's
 * over S = seq; u_acc the unit roundoff of the accumulation (fp32, 2^-24,
 * in every dtype here), u_store that of the stored activations and
 * gradients (2^-24 fp32, 2^-8 bf16), about ten per layer.  The summands'
 * size is unknown (a sum that cancels has terms larger than its result);
 * |g_ref| + rms(g_ref), the element's and its tensor's typical size, stands
 * in for it.  The bound is eight standard deviations of that walk:
 *
 *   |g - g_ref| <= 8 sqrt(u_acc^2 n + 10 D u_store^2) (|g_ref| + rms(g_ref))
 *
 * (the largest of ten million Gaussian errors is about 5.7 of them).  The
 * 8-layer GPT of the tests in fp32 at 2048 tokens: 7.5e-5.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

/* One rank's block of one tensor: its description, the first owned local
 * element and how many follow (as floats after the header). */
struct block {
	struct xtensor t;
	long lo, n;
};

void gradcheck_free(struct grad_snap *s)
{
	if (!s)
		return;
	for (int i = 0; s->val && i < s->nids; i++)
		free(s->val[i]);
	free(s->val);
	free(s->len);
	free(s->filled);
	free(s->names);
	memset(s, 0, sizeof *s);
}

/* This rank's owned gradient elements, packed; *bytes their size. */
static enum pplan_status pack(struct exec *x, char **out, size_t *bytes, struct perr *e)
{
	struct backend *b = x->be;
	int dp_owner = x->grad_shard || x->dpr == 0;
	size_t cap = 0, used = 0;
	char *buf = NULL;
	for (int i = 0; i < x->ntensors && dp_owner; i++) {
		const struct xtensor *t = &x->tensors[i];
		struct block h;
		size_t need;
		float *g;
		long first, n;
		if (!t->norm_owner || (n = shard_part(x, t, &g, &first)) == 0)
			continue;
		need = used + sizeof h + (size_t)n * sizeof(float);
		if (need > cap) {
			char *nb = realloc(buf, need * 2);
			if (!nb) {
				free(buf);
				return perr_set(e, PPLAN_ENOMEM, "out of host memory for --check's gradients");
			}
			buf = nb;
			cap = need * 2;
		}
		memset(&h, 0, sizeof h);
		h.t = *t;
		h.lo = first;
		h.n = n;
		memcpy(buf + used, &h, sizeof h);
		b->ops->to_host(b, buf + used + sizeof h, g, (size_t)n * sizeof(float));
		used = need;
	}
	*out = buf;
	*bytes = used;
	return PPLAN_OK;
}

/* Rank 0: places a block's elements in the global tensors. */
static enum pplan_status place(struct grad_snap *s, const struct block *h, const float *v,
			       struct perr *e)
{
	int id = h->t.id;
	long len = h->t.grows * h->t.gcols;
	if (id < 0 || id >= s->nids)
		return perr_set(e, PPLAN_ESYSTEM, "--check: a gradient block of tensor id %d, outside 0..%d",
				id, s->nids - 1);
	if (!s->val[id]) {
		s->val[id] = calloc((size_t)len, sizeof(float));
		if (!s->val[id])
			return perr_set(e, PPLAN_ENOMEM, "out of host memory for --check's gradients");
		s->len[id] = len;
		snprintf(s->names[id], sizeof s->names[id], "%s", h->t.name);
	}
	for (long j = 0; j < h->n; j++) {
		long li = h->lo + j;
		uint64_t gi = exec_global_index(&h->t, li / h->t.cols, li % h->t.cols);
		if (gi >= (uint64_t)len)
			continue; /* padding rows of a padded vocabulary */
		s->val[id][gi] = v[j];
		s->filled[id]++;
	}
	return PPLAN_OK;
}

enum pplan_status gradcheck_capture(struct exec *x, struct perr *e)
{
	struct grad_snap *s = &x->snap;
	char *mine = NULL, *all = NULL;
	int *lens = NULL, *offs = NULL;
	size_t bytes = 0;
	enum pplan_status st = pack(x, &mine, &bytes, e);
	if (st == PPLAN_OK && bytes > INT_MAX)
		st = perr_set(e, PPLAN_EINPUT, "--check compares gradients of models up to 2 GiB per rank; this rank holds %.1f GiB",
			      (double)bytes / 1073741824.0);
	if (st == PPLAN_OK)
		st = exec_gather_blobs(x, mine, (int)bytes, &all, &lens, &offs, e);
	free(mine);
	if (st == PPLAN_OK && x->rank == 0) {
		gradcheck_free(s);
		s->nids = x->ntensor_ids;
		s->val = calloc((size_t)s->nids, sizeof *s->val);
		s->len = calloc((size_t)s->nids, sizeof *s->len);
		s->filled = calloc((size_t)s->nids, sizeof *s->filled);
		s->names = calloc((size_t)s->nids, sizeof *s->names);
		if (!s->val || !s->len || !s->filled || !s->names)
			st = perr_set(e, PPLAN_ENOMEM, "out of host memory for --check's gradients");
		for (int r = 0; st == PPLAN_OK && r < x->size; r++) {
			const char *p = all + offs[r], *end = p + lens[r];
			while (st == PPLAN_OK && p + sizeof(struct block) <= end) {
				struct block h;
				memcpy(&h, p, sizeof h);
				p += sizeof h;
				if (h.n < 0 || (size_t)(end - p) < (size_t)h.n * sizeof(float)) {
					st = perr_set(e, PPLAN_ESYSTEM, "--check: rank %d's gradient blocks are cut short", r);
					break;
				}
				{
					float *v = malloc((size_t)(h.n > 0 ? h.n : 1) * sizeof *v);
					if (!v) {
						st = perr_set(e, PPLAN_ENOMEM, "out of host memory for --check's gradients");
						break;
					}
					memcpy(v, p, (size_t)h.n * sizeof *v);
					st = place(s, &h, v, e);
					free(v);
				}
				p += (size_t)h.n * sizeof(float);
			}
		}
	}
	free(all);
	free(lens);
	free(offs);
	return st;
}

double gradcheck_bound(const struct exec_opts *o)
{
	const struct model_spec *m = &o->model;
	double u_acc = ldexp(1.0, -24);
	double u_store = o->precision == PREC_FP32 ? u_acc : ldexp(1.0, -8);
	double D = m->layers > 0 ? m->layers : 1;
	double K = m->hidden > m->ffn ? (double)m->hidden : (double)m->ffn;
	double n = (double)o->layout.gbs * (double)m->seq + (double)m->vocab +
		   D * (2.0 * K + (double)m->seq);
	return 8.0 * sqrt(u_acc * u_acc * n + 10.0 * D * u_store * u_store);
}

void gradcheck_compare(const struct grad_snap *run, const struct grad_snap *ref, double bound,
		       struct run_check *out)
{
	out->elem_bound = bound;
	out->max_elem_err = 0;
	out->elements = 0;
	out->elem_worst[0] = '\0';
	for (int id = 0; id < ref->nids; id++) {
		const float *b = ref->val[id];
		const float *a = id < run->nids ? run->val[id] : NULL;
		double ss = 0, rms;
		if (!b)
			continue;
		if (!a || run->len[id] != ref->len[id] || run->filled[id] != ref->filled[id] ||
		    ref->filled[id] != ref->len[id]) {
			out->max_elem_err = INFINITY;
			snprintf(out->elem_worst, sizeof out->elem_worst,
				 "the gradient of %s: %ld of %ld elements on the ranks, %ld on one",
				 ref->names[id], a ? run->filled[id] : 0L, ref->len[id], ref->filled[id]);
			continue;
		}
		for (long i = 0; i < ref->len[id]; i++)
			ss += (double)b[i] * b[i];
		rms = sqrt(ss / (double)ref->len[id]);
		for (long i = 0; i < ref->len[id]; i++) {
			double scale = fabs(b[i]) + rms;
			double err = scale > 0 ? fabs((double)a[i] - b[i]) / scale
					       : (a[i] == b[i] ? 0 : INFINITY);
			out->elements++;
			if (err > out->max_elem_err) {
				out->max_elem_err = err;
				snprintf(out->elem_worst, sizeof out->elem_worst,
					 "gradient of %s[%ld] in step 1: %.9g vs %.9g", ref->names[id], i,
					 (double)a[i], (double)b[i]);
			}
		}
	}
}
