/*
 * plan.c: a job priced over a ladder of GPU counts (plan.h).
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

int plan_sizes(long gpn, long max_gpus, long *out, int cap)
{
	int n = 0;
	/* Within one node: the powers of two below it that divide it. */
	for (long g = 1; g < gpn && g <= max_gpus && n < cap; g *= 2)
		if (gpn % g == 0)
			out[n++] = g;
	/* Whole nodes: 1, 2, 3, 4, 6, 8, 12, ...: each power of two and
	 * one and a half of it, a step of at most 1.5x. */
	for (long p = 1; n < cap; p *= 2) {
		if (p * gpn > max_gpus)
			break;
		out[n++] = p * gpn;
		if (p >= 2 && (p + p / 2) * gpn <= max_gpus && n < cap)
			out[n++] = (p + p / 2) * gpn;
	}
	return n;
}

/* The search's sentence when nothing fits at this size. */
static void no_fit_reason(const struct job *j, const struct search_result *r, char *buf,
			  size_t len)
{
	double need = search_min_oom_bytes(r);
	if (need > 0)
		snprintf(buf, len, "nothing fits: the smallest layout needs %.1f GiB per GPU, the cap is %.1f GiB",
			 need / GIB, j->opts.max_memory_gib > 0 ? j->opts.max_memory_gib
								: j->cluster.gpu.mem_gib);
	else
		snprintf(buf, len, "no valid layout");
}

static enum pplan_status price_size(const struct job *given, long gpus,
				    const struct plan_request *rq, struct plan_rung *out,
				    struct perr *e)
{
	struct search_params sp;
	enum pplan_status st;

	memset(out, 0, sizeof *out);
	out->job = malloc(sizeof *out->job);
	if (!out->job)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the plan");
	*out->job = *given;
	if (gpus > 0) {
		out->job->gpus = gpus;
		out->job->nodes = 0;
	}
	st = job_resolve(out->job, 1, e);
	if (st != PPLAN_OK)
		return st;
	search_params_default(&sp);
	sp.gbs = out->job->global_batch;
	sp.top_k = rq->top_k > 0 ? rq->top_k : 1;
	sp.tolerance = rq->tolerance;
	if (given->order_arg) {
		sp.n_orders = 1;
		sp.orders[0] = out->job->opts.order;
	}
	out->job->opts.use_des = !rq->closed_form;
	st = search_run(&out->job->model, &out->job->cluster, &out->job->opts, &sp, &out->r, e);
	if (st != PPLAN_OK)
		return st;
	if (out->r.n_top == 0) {
		no_fit_reason(out->job, &out->r, out->why, sizeof out->why);
		return PPLAN_OK;
	}
	out->t = job_train_time(out->job, &out->r.top_preds[0]);
	out->meets = rq->days > 0 && out->t.seconds <= rq->days * 86400.0;
	return PPLAN_OK;
}

static void pick(struct plan_result *res)
{
	res->answer = res->fastest = res->cheapest = -1;
	for (int i = 0; i < res->n; i++) {
		const struct plan_rung *g = &res->rungs[i];
		if (g->r.n_top == 0)
			continue;
		if (g->meets && res->answer < 0)
			res->answer = i;
		if (res->fastest < 0 || g->t.seconds < res->rungs[res->fastest].t.seconds)
			res->fastest = i;
		if (res->cheapest < 0 || g->t.gpu_hours < res->rungs[res->cheapest].t.gpu_hours)
			res->cheapest = i;
	}
}

enum pplan_status plan_run(const struct job *given, const struct plan_request *rq,
			   struct plan_result *out, struct perr *e)
{
	struct job *probe = malloc(sizeof *probe);
	long sizes[64];
	int n, past = -1;
	enum pplan_status st;

	memset(out, 0, sizeof *out);
	if (!probe)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the plan");
	/* The model, the cluster's node and whether the job names its size. */
	*probe = *given;
	st = job_resolve(probe, 0, e);
	if (st != PPLAN_OK) {
		free(probe);
		return st;
	}
	if (job_names_size(given)) {
		sizes[0] = 0; /* the size given */
		n = 1;
	} else {
		n = plan_sizes(probe->cluster.gpus_per_node, rq->max_gpus, sizes, 64);
	}
	free(probe);
	if (n == 0)
		return perr_set(e, PPLAN_EINPUT, "--max-gpus %ld is less than one GPU", rq->max_gpus);
	out->rungs = calloc((size_t)n, sizeof *out->rungs);
	if (!out->rungs)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the plan");
	for (int i = 0; i < n; i++) {
		st = price_size(given, sizes[i], rq, &out->rungs[i], e);
		out->n = i + 1;
		if (st == PPLAN_EINPUT && i > 0) {
			/* What the resolver refuses at this size (the goodput of
			 * too many GPUs) ends the ladder: larger sizes fare worse. */
			snprintf(out->rungs[i].why, sizeof out->rungs[i].why, "%s", e->msg);
			e->msg[0] = '\0';
			st = PPLAN_OK;
			break;
		}
		if (st != PPLAN_OK)
			break;
		if (out->rungs[i].meets && past < 0)
			past = 0;
		else if (past >= 0 && ++past >= rq->rungs_after)
			break;
	}
	if (st != PPLAN_OK) {
		plan_free(out);
		return st;
	}
	pick(out);
	return PPLAN_OK;
}

void plan_free(struct plan_result *res)
{
	for (int i = 0; i < res->n; i++) {
		search_free(&res->rungs[i].r);
		free(res->rungs[i].job);
	}
	free(res->rungs);
	memset(res, 0, sizeof *res);
}
