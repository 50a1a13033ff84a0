/*
 * search.c: exhaustive layout search (search.h).  The loops run from the
 * structural choices (tp, pp, cp, ep, vp) that layout_check can reject
 * once for all their inner combinations, to the cheap ones (micro-batch,
 * SP, recomputation, ZeRO, schedule) that only the cost model separates.
 */
#include "search.h"

#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const family_names[FAM_COUNT] = {
	"DP only", "TP only", "PP only", "TP+DP", "PP+DP", "TP+PP",
	"TP+PP+DP (3D)", "with CP",
};

const char *family_name(enum family f)
{
	return (f >= 0 && f < FAM_COUNT) ? family_names[f] : "?";
}

enum family family_of(const struct layout *l)
{
	int t = l->tp > 1, p = l->pp > 1, d = l->dp > 1;
	if (l->cp > 1)
		return FAM_CP;
	if (t && p && d) return FAM_3D;
	if (t && p) return FAM_TP_PP;
	if (p && d) return FAM_PP_DP;
	if (t && d) return FAM_TP_DP;
	if (p) return FAM_PP;
	if (t) return FAM_TP;
	return FAM_DP;
}

void search_params_default(struct search_params *sp)
{
	sp->gbs = 0;
	sp->top_k = 10;
	sp->max_mbs = 16;
	sp->max_vp = 16;
	sp->max_cp = 32;
}

struct state {
	const struct model_spec *m;
	const struct cluster *c;
	const struct train_opts *o;
	const struct search_params *sp;
	struct search_result *r;
	long gpus;
	int keep;   /* closed-form candidates kept for simulation */
};

static void reject(struct search_result *r, const char *reason, long n)
{
	for (int i = 0; i < r->n_rejected; i++)
		if (r->rejected[i].reason == reason ||
		    strcmp(r->rejected[i].reason, reason) == 0) {
			r->rejected[i].count += n;
			return;
		}
	if (r->n_rejected < (int)(sizeof r->rejected / sizeof r->rejected[0])) {
		r->rejected[r->n_rejected].reason = reason;
		r->rejected[r->n_rejected].count = n;
		r->n_rejected++;
	}
}

static void family_why(struct state *s, const struct layout *l)
{
	struct search_family_result *f = &s->r->family[family_of(l)];
	struct perr e;
	const char *id = NULL;
	if (f->why[0])
		return;
	if (layout_check(l, s->m, s->gpus, &id, &e) != PPLAN_OK)
		snprintf(f->why, sizeof f->why, "%s", e.msg);
}

static void keep(struct state *s, const struct layout *l,
		 const struct prediction *p)
{
	struct search_result *r = s->r;
	struct search_family_result *f = &r->family[family_of(l)];
	int k = s->keep, i;

	if (!p->feasible) {
		reject(r, p->reject_reason, 1);
		if (!f->any_oom || p->mem.total < f->min_oom_bytes) {
			f->min_oom_bytes = p->mem.total;
			f->any_oom = 1;
		}
		return;
	}
	r->feasible++;
	if (!f->found || p->step_time_s < f->pred.step_time_s) {
		f->found = 1;
		f->layout = *l;
		f->pred = *p;
	}
	/* Insertion into the top-k, best first. */
	if (r->n_top == k && p->step_time_s >= r->top_preds[k - 1].step_time_s)
		return;
	i = r->n_top < k ? r->n_top++ : k - 1;
	while (i > 0 && r->top_preds[i - 1].step_time_s > p->step_time_s) {
		r->top_preds[i] = r->top_preds[i - 1];
		r->top_layouts[i] = r->top_layouts[i - 1];
		i--;
	}
	r->top_preds[i] = *p;
	r->top_layouts[i] = *l;
}

/* The cheap inner choices for one structural layout. */
static void inner(struct state *s, struct layout base)
{
	static const enum recompute recs[] = { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE,
					       RECOMPUTE_FULL };
	long per_replica = s->sp->gbs / base.dp;
	int pp1 = base.pp == 1;

	if (s->sp->gbs % base.dp != 0) {
		s->r->evaluated++;
		reject(s->r, "dp does not divide the global batch", 1);
		family_why(s, &base);
		return;
	}
	for (int mbs = 1; mbs <= s->sp->max_mbs; mbs *= 2) {
		if (per_replica % mbs != 0)
			break;
		for (int sp = 0; sp <= (base.tp > 1); sp++) {
			for (size_t ri = 0; ri < sizeof recs / sizeof recs[0]; ri++) {
				int zmax = (base.dp * base.cp > 1) ? (pp1 ? 3 : 1) : 0;
				for (int z = 0; z <= zmax; z++) {
					enum schedule scheds[3];
					int ns = 0;
					if (base.vp > 1)
						scheds[ns++] = SCHED_INTERLEAVED;
					else if (base.pp > 1) {
						scheds[ns++] = SCHED_1F1B;
						scheds[ns++] = SCHED_GPIPE;
						scheds[ns++] = SCHED_ZB_H1;
					} else
						scheds[ns++] = SCHED_1F1B;
					for (int si = 0; si < ns; si++) {
						struct layout l = base;
						struct prediction p;
						const char *why = NULL;
						l.mbs = mbs;
						l.sp = sp;
						l.recompute = recs[ri];
						l.zero = z;
						l.schedule = scheds[si];
						l.gbs = s->sp->gbs;
						s->r->evaluated++;
						if (layout_check(&l, s->m, s->gpus, &why, NULL) !=
						    PPLAN_OK) {
							reject(s->r, why, 1);
							family_why(s, &l);
							continue;
						}
						s->r->predicted++;
						if (cost_predict(s->m, s->c, &l, s->o, &p, NULL) !=
						    PPLAN_OK)
							continue;
						keep(s, &l, &p);
					}
				}
			}
		}
	}
}

/* Simulates the kept candidates and the families' best, re-ranks, and
 * trims the list to top_k. */
static void simulate_survivors(struct state *s)
{
	struct search_result *r = s->r;
	int n = r->n_top;
	for (int i = 0; i < n; i++)
		predict_simulate(&r->top_layouts[i], s->o, &r->top_preds[i], NULL);
	/* Insertion sort: n is small. */
	for (int i = 1; i < n; i++) {
		struct prediction p = r->top_preds[i];
		struct layout l = r->top_layouts[i];
		int j = i;
		while (j > 0 && r->top_preds[j - 1].step_time_s > p.step_time_s) {
			r->top_preds[j] = r->top_preds[j - 1];
			r->top_layouts[j] = r->top_layouts[j - 1];
			j--;
		}
		r->top_preds[j] = p;
		r->top_layouts[j] = l;
	}
	if (r->n_top > s->sp->top_k)
		r->n_top = s->sp->top_k;
	for (int f = 0; f < FAM_COUNT; f++)
		if (r->family[f].found)
			predict_simulate(&r->family[f].layout, s->o,
					 &r->family[f].pred, NULL);
	/* A simulated survivor may beat its family's closed-form best. */
	for (int i = 0; i < r->n_top; i++) {
		struct search_family_result *f = &r->family[family_of(&r->top_layouts[i])];
		if (r->top_preds[i].step_time_s < f->pred.step_time_s) {
			f->pred = r->top_preds[i];
			f->layout = r->top_layouts[i];
		}
	}
}

/* Structural rejections that hold for every inner combination: counted
 * once per structural layout. */
static int structural_ok(struct state *s, const struct layout *l)
{
	const char *why = NULL;
	struct layout probe = *l;
	probe.gbs = s->sp->gbs;
	probe.mbs = 1;
	probe.sp = 0;
	probe.zero = 0;
	probe.recompute = RECOMPUTE_NONE;
	probe.schedule = l->vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	if (layout_check(&probe, s->m, s->gpus, &why, NULL) == PPLAN_OK)
		return 1;
	/* Batch-dependent reasons depend on mbs: leave them to inner(). */
	if (strstr(why, "gbs") || strstr(why, "microbatches"))
		return 1;
	s->r->evaluated++;
	reject(s->r, why, 1);
	family_why(s, &probe);
	return 0;
}

enum pplan_status search_run(const struct model_spec *m,
			     const struct cluster *c,
			     const struct train_opts *o,
			     const struct search_params *sp,
			     struct search_result *r, struct perr *e)
{
	struct state s = { m, c, o, sp, r, cluster_gpus(c), 0 };
	struct timespec t0, t1;
	long g = s.gpus;

	memset(r, 0, sizeof *r);
	if (sp->gbs < 1)
		return perr_set(e, PPLAN_EINPUT, "the global batch must be positive");
	if (sp->top_k < 1 || sp->top_k > 1000)
		return perr_set(e, PPLAN_EINPUT, "--top must be between 1 and 1000");
	/* Rank by the closed forms, keep 4K+16 candidates, simulate their
	 * pipelines and rank again (BENCHMARKS.md: how much that changes). */
	s.keep = o->use_des ? 4 * sp->top_k + 16 : sp->top_k;
	r->top_layouts = calloc((size_t)s.keep, sizeof *r->top_layouts);
	r->top_preds = calloc((size_t)s.keep, sizeof *r->top_preds);
	if (!r->top_layouts || !r->top_preds) {
		search_free(r);
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the search results");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long tp = 1; tp <= g; tp++) {
		if (g % tp)
			continue;
		for (long pp = 1; pp * tp <= g; pp++) {
			if ((g / tp) % pp)
				continue;
			for (long cp = 1; cp * tp * pp <= g && cp <= sp->max_cp; cp *= 2) {
				long dp;
				struct layout l;
				if ((g / (tp * pp)) % cp)
					break;
				dp = g / (tp * pp * cp);
				layout_default(&l);
				l.tp = (int)tp;
				l.pp = (int)pp;
				l.cp = (int)cp;
				l.dp = (int)dp;
				if (!structural_ok(&s, &l))
					continue;
				for (int ep = 1; ep <= (m->num_experts > 1 ? m->num_experts : 1);
				     ep++) {
					if (m->num_experts > 1 &&
					    (m->num_experts % ep || (dp * cp) % ep))
						continue;
					l.ep = ep;
					for (int vp = 1; vp <= sp->max_vp; vp++) {
						if (vp > 1 && (pp == 1 || (m->layers / pp) % vp))
							continue;
						if (m->layers % pp)
							break;
						l.vp = vp;
						inner(&s, l);
					}
				}
			}
		}
	}
	if (o->use_des)
		simulate_survivors(&s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	return PPLAN_OK;
}

void search_free(struct search_result *r)
{
	free(r->top_layouts);
	free(r->top_preds);
	r->top_layouts = NULL;
	r->top_preds = NULL;
	r->n_top = 0;
}
