/*
 * bench_des.c: how fast the pipeline event simulator plays one step.
 * The case of the issue: Llama 3.1 405B with tp=8, pp=16, vp=8, dp=8 and
 * 128 microbatches per step (interleaved 1F1B), durations from the cost
 * model on dgx-h100; plus 1F1B and ZB-H1 at pp=16, m=128.  Warm-up runs,
 * then timed runs; prints the median and the spread in the nccl-tests
 * manner.  Llama 3.1 405B has 126 layers, which 16 x 8 chunks do not
 * divide (Meta ran pp=16 with uneven stages): the cost model prices
 * 126/128 layers per chunk, and the figure measures the simulator, not a
 * layout pplan would accept.  Usage: bench_des [runs]   (default 50)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "cost.h"
#include "des.h"
#include "model.h"

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

/* Durations for l from the cost model; made-up ones if it cannot say. */
static const char *costs_for(const struct layout *l, struct des_costs *k)
{
	struct model_spec m;
	struct cluster c;
	struct train_opts o;
	struct prediction p;
	struct perr e;
	if (model_resolve("llama3.1-405b", &m, &e) == PPLAN_OK &&
	    cluster_resolve("dgx-h100", layout_gpus(l), &c, &e) == PPLAN_OK) {
		train_opts_default(&o, &m);
		if (cost_predict(&m, &c, l, &o, &p, &e) == PPLAN_OK) {
			des_costs_from_prediction(&p, k);
			return "cost model, llama3.1-405b on dgx-h100";
		}
	}
	memset(k, 0, sizeof *k);
	k->fwd_s = 0.010; k->bwd_s = 0.020; k->bwd_w_s = 0.008;
	k->p2p_s = 0.0005; k->dp_reduce_s = 1.0; k->dp_buckets = 4;
	k->dp_overlap = 1; k->optimizer_s = 0.05;
	return "fixed durations (cost model unavailable)";
}

static int bench(const char *name, enum schedule kind, int vp, int runs)
{
	struct layout l;
	struct des_costs k;
	struct des_result r;
	struct pipe_schedule *s;
	struct perr e;
	double *t_all = malloc(sizeof(double) * (size_t)runs * 2), *t_des;
	const char *src;
	long m = 128;

	if (!t_all)
		return 1;
	t_des = t_all + runs;
	layout_default(&l);
	l.tp = 8; l.pp = 16; l.vp = vp; l.dp = 8; l.mbs = 1; l.sp = 1;
	l.zero = 1; l.schedule = kind; l.gbs = m * l.mbs * l.dp;
	src = costs_for(&l, &k);
	for (int i = -3; i < runs; i++) { /* 3 warm-up runs */
		double t0 = now_s(), t1;
		if (schedule_build(&l, m, 0, &s, &e) != PPLAN_OK) {
			fprintf(stderr, "bench_des: %s\n", e.msg);
			free(t_all);
			return 1;
		}
		t1 = now_s();
		if (des_run(s, &k, 0, &r, &e) != PPLAN_OK) {
			fprintf(stderr, "bench_des: %s\n", e.msg);
			schedule_free(s);
			free(t_all);
			return 1;
		}
		if (i >= 0) {
			t_des[i] = now_s() - t1;
			t_all[i] = now_s() - t0;
		}
		if (i < runs - 1)
			des_result_free(&r);
		schedule_free(s);
	}
	qsort(t_all, (size_t)runs, sizeof *t_all, cmp_double);
	qsort(t_des, (size_t)runs, sizeof *t_des, cmp_double);
	printf("# %s: %s\n", name, src);
	printf(" %-12s %4d %3d %5ld %9ld %10.3f %10.3f %10.3f %10.2f %10.3f\n",
	       schedule_name(kind), l.pp, vp, m, r.ops,
	       1e3 * t_all[runs / 2], 1e3 * t_all[0], 1e3 * t_all[runs - 1],
	       r.ops / t_des[runs / 2] / 1e6, r.step_time_s);
	des_result_free(&r);
	free(t_all);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 50, rc = 0;
	if (runs < 1)
		runs = 1;
	printf("# bench_des: build the op lists and simulate one step, %d timed runs after 3 warm-up\n", runs);
	printf("# tp=8 dp=8 mbs=1; time = schedule_build + des_run; ops/s = des_run alone\n");
	printf("# %-12s %4s %3s %5s %9s %10s %10s %10s %10s %10s\n", "schedule",
	       "pp", "vp", "m", "ops", "median", "min", "max", "rate", "step");
	printf("# %-12s %4s %3s %5s %9s %10s %10s %10s %10s %10s\n", "", "", "",
	       "", "", "(ms)", "(ms)", "(ms)", "(Mops/s)", "(s)");
	rc |= bench("405B interleaved", SCHED_INTERLEAVED, 8, runs);
	rc |= bench("405B 1f1b", SCHED_1F1B, 1, runs);
	rc |= bench("405B zb-h1", SCHED_ZB_H1, 1, runs);
	return rc;
}
