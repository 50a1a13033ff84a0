/*
 * bench_search.c: how fast `pplan search` ranks every layout.  Two cases
 * from the planner issue: a 70B model (llama3-70b, the model
 * `--params 70B` picks) on 512 H100s, and Llama 3.1 405B on 16,384 H100s,
 * each with the default global batch (about 4M tokens), and a 10T-parameter
 * fine-grained MoE (bench/models/moe-10t.json: 512 experts, 126 layers, so
 * expert parallelism, expert TP and uneven pipeline stages are all
 * enumerated) on 16,384 H100s.  Runs the search
 * in this process on one core (it is single-threaded), warm-up first, then
 * timed runs; prints the median, min and max and the layouts evaluated
 * per second, nccl-tests style.  Also: the same search with the closed
 * forms only, to show what simulating the survivors costs.
 * Usage: bench_search [runs]   (default 11)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cluster.h"
#include "cost.h"
#include "model.h"
#include "defaults.h"
#include "search.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int run_case(const char *model, long gpus, int use_des, int runs)
{
	struct model_spec spec;
	const struct model_spec *m = &spec;
	struct cluster c;
	struct train_opts o;
	struct search_params sp;
	struct search_result r;
	double *t = calloc((size_t)runs, sizeof *t);
	long evaluated = 0;

	if (model_resolve(model, &spec, NULL) != PPLAN_OK || !t ||
	    cluster_preset("dgx-h100", gpus, &c, NULL) != PPLAN_OK) {
		free(t);
		return 1;
	}
	train_opts_default(&o, m);
	o.use_des = use_des;
	o.max_memory_gib = defaults_memory_cap_gib(&c.gpu);
	search_params_default(&sp);
	{
		struct batch_default d; /* pplan search's defaults */
		defaults_global_batch(m, o.seq, gpus, &d);
		sp.gbs = d.sequences;
	}
	for (int i = -2; i < runs; i++) {
		double t0 = now_s();
		if (search_run(m, &c, &o, &sp, &r, NULL) != PPLAN_OK) {
			free(t);
			return 1;
		}
		if (i >= 0)
			t[i] = now_s() - t0;
		evaluated = r.evaluated;
		search_free(&r);
	}
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	printf(" %-14s %7ld %-11s %9ld %10.4f %10.4f %10.4f %12.0f\n", m->name, gpus,
	       use_des ? "simulated" : "closed-form", evaluated, t[runs / 2], t[0],
	       t[runs - 1], evaluated / t[runs / 2]);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 11;
	int rc = 0;
	if (runs < 1)
		runs = 1;
	printf("# bench_search: pplan search, one thread, %d timed runs after 2 warm-up runs\n",
	       runs);
	printf("# %-14s %7s %-11s %9s %10s %10s %10s %12s\n", "model", "gpus",
	       "pipeline", "layouts", "median", "min", "max", "layouts/s");
	printf("# %-14s %7s %-11s %9s %10s %10s %10s %12s\n", "", "", "", "", "(s)",
	       "(s)", "(s)", "(1/s)");
	rc |= run_case("llama3-70b", 512, 1, runs);
	rc |= run_case("llama3-70b", 512, 0, runs);
	rc |= run_case("llama3.1-405b", 16384, 1, runs);
	rc |= run_case("llama3.1-405b", 16384, 0, runs);
	rc |= run_case(PPLAN_SOURCE_DIR "/bench/models/moe-10t.json", 16384, 1, runs);
	rc |= run_case(PPLAN_SOURCE_DIR "/bench/models/moe-10t.json", 16384, 0, runs);
	return rc;
}
