/*
 * cmd_tune.c: `pplan tune`: the closed loop (calibrate/tune.h) from the
 * command line.  The search ranks the job's layouts; the best K (or, with
 * --families, the best member of every strategy family) run for a few
 * steps under the launcher, each as `pplan exec` with its report; the
 * constants are refitted on those runs and written as a profile; the runs
 * are ranked again by what they measured, beside the refitted
 * predictions, and the layout it would now book is said with how far the
 * measurements moved the ranking.  This file reads the options, prints
 * and writes DIR/tune.json (pplan.tune/1), DIR/profile-refit.json and
 * DIR/tune.html; run-N.json and .log per run are the runs' own.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_common.h"
#include "html.h"
#include "jsonio.h"
#include "search.h"
#include "tune.h"
#include "tune_out.h"

#define TUNE_SEQS_PER_RANK 8     /* default global batch: sequences per rank */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan tune (--model NAME|FILE | --params N) --gpus N --out DIR [options]\n\n"
		"Searches, runs the best layouts for a few steps (pplan exec under the launcher),\n"
		"refits the profile's constants on what they measured and ranks them again.\n\n");
	cli_common_usage(f);
	fprintf(f,
		"  --best K               layouts to run (default 3, at most %d)\n"
		"  --families             run the best member of every strategy family instead\n"
		"  --steps N              timed steps per run (default 3)\n"
		"  --warmup K             untimed steps before them, K < N as for pplan exec (default 1)\n"
		"  --backend B            pplan exec's: auto (default), cuda, cpu\n"
		"  --launcher CMD         how each run starts, {ranks} replaced by --gpus, split at spaces\n"
		"                         (default: srun -n {ranks} inside a Slurm job, else mpirun -np {ranks})\n"
		"  --timeout S            a run's rank that makes no progress for S seconds ends it (default 300)\n"
		"  --constants A,B,...    what the refit moves (default: with measured curves\n"
		"                         " TUNE_CONSTANTS_CURVES ";\n"
		"                         without, the GPU's gemm_ceiling, net_eff_scale, step_fixed_ms)\n"
		"  --out DIR              where the runs' reports, tune.json, profile-refit.json and\n"
		"                         tune.html go (created if missing)\n"
		"  --fault RUN:RANK:MS    test hook: in run RUN (1-based) rank RANK sleeps MS ms every step\n"
		"  --help                 this text\n\n"
		"The global batch defaults to %d sequences per rank (a few steps must be short); the\n"
		"framework is pplan exec's (--framework pplan-exec), the one that runs the layouts.\n",
		TUNE_MAX_RUNS, TUNE_SEQS_PER_RANK);
}

/* ---- the command line ------------------------------------------------------ */

static int parse_long(const char *opt, const char *arg, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (*arg == '\0' || *end || v < lo || v > hi) {
		fprintf(stderr, "pplan tune: %s must be a whole number from %ld to %ld, got '%s'\n",
			opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_fault(const char *arg, struct tune_request *a)
{
	int run, rank, n = 0;
	long ms;
	if (sscanf(arg, "%d:%d:%ld%n", &run, &rank, &ms, &n) != 3 || arg[n] || run < 1 ||
	    rank < 0 || ms < 1 || ms > 3600000) {
		fprintf(stderr, "pplan tune: --fault must be RUN:RANK:MS (run from 1, rank from 0, 1 to 3600000 ms), got '%s'\n",
			arg);
		return -1;
	}
	a->fault_run = run;
	a->fault_rank = rank;
	a->fault_ms = ms;
	return 0;
}

static int parse_tune_option(int c, const char *arg, struct tune_request *a)
{
	long v;
	switch (c) {
	case 'k':
		if (parse_long("--best", arg, 1, TUNE_MAX_RUNS, &v) < 0)
			return -1;
		a->best_k = (int)v;
		return 1;
	case 'F': a->families = 1; return 1;
	case 's': return parse_long("--steps", arg, 1, 1000, &a->steps) < 0 ? -1 : 1;
	case 'w': return parse_long("--warmup", arg, 0, 1000, &a->warmup) < 0 ? -1 : 1;
	case 'T':
		if (parse_long("--timeout", arg, 1, 86400, &v) < 0)
			return -1;
		a->timeout_s = (double)v;
		return 1;
	case 'b':
		if (strcmp(arg, "auto") && strcmp(arg, "cuda") && strcmp(arg, "cpu")) {
			fprintf(stderr, "pplan tune: --backend must be auto, cuda or cpu, got '%s'\n", arg);
			return -1;
		}
		a->backend = arg;
		return 1;
	case 'L':
		if (!strstr(arg, "{ranks}")) {
			fprintf(stderr, "pplan tune: --launcher must say where the ranks go with {ranks}, got '%s'\n",
				arg);
			return -1;
		}
		a->launcher = arg;
		return 1;
	case 'o': a->dir = arg; return 1;
	case 'c': a->constants = arg; return 1;
	case 'f': return parse_fault(arg, a) < 0 ? -1 : 1;
	default: return 0;
	}
}

static int parse_args(int argc, char **argv, struct job *in, struct tune_request *a, int *rc)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{ "best", required_argument, NULL, 'k' },
		{ "families", no_argument, NULL, 'F' },
		{ "steps", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "backend", required_argument, NULL, 'b' },
		{ "launcher", required_argument, NULL, 'L' },
		{ "out", required_argument, NULL, 'o' },
		{ "constants", required_argument, NULL, 'c' },
		{ "fault", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perr e = { { 0 } };
	int c, r;

	optind = 1;
	opterr = 0;
	*rc = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			*rc = 0;
			return -1;
		}
		r = parse_tune_option(c, optarg, a);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		r = cli_common_option(in, c, optarg, &e);
		if (r < 0) {
			*rc = cli_fail(PPLAN_EINPUT, &e);
			return -1;
		}
		if (r == 0) {
			fprintf(stderr, "pplan tune: unknown or incomplete option '%s' (see pplan tune --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pplan tune: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!a->dir) {
		fprintf(stderr, "pplan tune: --out DIR is required: where the runs' reports go\n");
		return -1;
	}
	if (in->lora_rank > 0) {
		fprintf(stderr, "pplan tune: --peft lora cannot be tuned: pplan exec trains every weight\n");
		return -1;
	}
	if (a->warmup >= a->steps) {
		fprintf(stderr, "pplan tune: --warmup %ld must be smaller than --steps %ld (as for pplan exec)\n",
			a->warmup, a->steps);
		return -1;
	}
	if (in->framework_arg && strcmp(in->framework_arg, "pplan-exec")) {
		fprintf(stderr, "pplan tune: --framework %s conflicts with tune, which runs every layout with pplan exec (--framework pplan-exec)\n",
			in->framework_arg);
		return -1;
	}
	if (in->json_path && !strcmp(in->json_path, "-")) {
		fprintf(stderr, "pplan tune: --json - is not for tune: it writes DIR/tune.json\n");
		return -1;
	}
	if (in->order_arg) {
		fprintf(stderr, "pplan tune: --rank-order conflicts with tune: pplan exec runs the default order\n");
		return -1;
	}
	if (a->best_k && a->families) {
		fprintf(stderr, "pplan tune: --best and --families conflict: give one of them\n");
		return -1;
	}
	return 0;
}

/* ---- printing ------------------------------------------------------------------ */

static void cell_s(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "-");
}

static void cell_pct(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%+.1f", v);
	else
		snprintf(buf, len, "-");
}

static void print_runs(const struct tune_run *runs, int n)
{
	printf("#\n#  %-4s %-4s %-15s %-52s %10s %10s %7s %10s %7s\n", "pred", "meas", "family",
	       "layout", "predicted", "measured", "error", "refit", "error");
	printf("#  %-4s %-4s %-15s %-52s %10s %10s %7s %10s %7s\n", "rank", "rank", "", "",
	       "(s)", "(s)", "(%)", "(s)", "(%)");
	for (int k = 1; k <= n + 1; k++) {
		for (int i = 0; i < n; i++) {
			char lb[128], p[24], m[24], ep[16], rf[24], er[16], ma[8];
			/* measured ones in measured order, then the failed */
			if ((runs[i].ok && runs[i].rank_after != k) || (!runs[i].ok && k != n + 1))
				continue;
			cli_short_layout(&runs[i].layout, NULL, lb, sizeof lb);
			cell_s(p, sizeof p, runs[i].pred.step_time_s);
			cell_s(m, sizeof m, runs[i].ok ? runs[i].measured_s : NAN);
			cell_pct(ep, sizeof ep, runs[i].ok ? tune_err_pct(runs[i].pred.step_time_s, runs[i].measured_s) : NAN);
			cell_s(rf, sizeof rf, runs[i].refit_s);
			cell_pct(er, sizeof er, runs[i].ok ? tune_err_pct(runs[i].refit_s, runs[i].measured_s) : NAN);
			if (runs[i].ok)
				snprintf(ma, sizeof ma, "%d", runs[i].rank_after);
			else
				snprintf(ma, sizeof ma, "-");
			printf("   %-4d %-4s %-15s %-52s %10s %10s %7s %10s %7s\n", runs[i].rank_before,
			       ma, family_name(runs[i].fam), lb, p, m, ep, rf, er);
			if (!runs[i].ok)
				printf("   %9s failed: %s\n", "", runs[i].why);
		}
	}
}

static void print_refit(const struct tune_outcome *t, const char *path)
{
	int nt, first = 1;
	const struct cost_param_info *tab = cost_param_table(&nt);
	printf("\nRefit on the %d measured runs (%s):", t->after.n_time, path);
	for (int i = 0; i < nt; i++) {
		if (!t->mask[i])
			continue;
		printf("%s %s %.4g -> %.4g%s%s", first ? "" : ",", tab[i].name,
		       cost_param_get(t->start, &tab[i]), cost_param_get(&t->after.params, &tab[i]),
		       tab[i].unit[0] ? " " : "", tab[i].unit);
		first = 0;
	}
	printf("\n  step-time error, exp(mean |log(predicted/measured)|) - 1: %.1f %% with the constants it started from, %.1f %% refitted\n",
	       100 * (exp(t->before.time_error) - 1), 100 * (exp(t->after.time_error) - 1));
}

static void print_outcome(const struct job *in, const struct tune_run *runs,
			  const struct tune_outcome *t, const char *dir)
{
	char lb[256];
	if (t->booked < 0) {
		printf("\nNo run measured a step: nothing to book (see the logs in %s)\n", dir);
		return;
	}
	layout_format(&runs[t->booked].layout, lb, sizeof lb);
	printf("\nWould now book: %s\n  measured %.3f s a step, predicted rank %d of %d\n", lb,
	       runs[t->booked].measured_s, runs[t->booked].rank_before, t->n);
	if (t->moved == 0)
		printf("  the measurements kept the predicted order of the %d measured runs\n",
		       t->measured);
	else if (t->best_pred_rank > 0)
		printf("  the measurements moved %d of the %d measured runs; the predicted best measured rank %d\n",
		       t->moved, t->measured, t->best_pred_rank);
	else
		printf("  the measurements moved %d of the %d measured runs; the predicted best did not measure a step\n",
		       t->moved, t->measured);
	if (t->refit_best[0] && t->refit_best_run < 0)
		printf("  the refitted model's fastest layout of the whole search was not run: %s (%.3f s)\n"
		       "  run it: pplan exec --model %s --layout %s%s%s\n",
		       t->refit_best, t->refit_best_s,
		       in->model_arg ? in->model_arg : in->model.name, t->refit_best,
		       in->profile_arg ? " --profile " : "", in->profile_arg ? in->profile_arg : "");
}

/* ---- the command ---------------------------------------------------------------- */

static void self_path(char *buf, size_t len, const char *argv0)
{
	ssize_t k = readlink("/proc/self/exe", buf, len - 1);
	if (k > 0)
		buf[k] = '\0';
	else
		snprintf(buf, len, "%s", argv0);
}

static enum pplan_status make_dir(const char *dir, struct perr *e)
{
	struct stat sb;
	if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
		return access(dir, W_OK) == 0
			       ? PPLAN_OK
			       : perr_set(e, PPLAN_EINPUT, "--out %s: the directory is not writable", dir);
	return perr_set(e, PPLAN_EINPUT, "--out %s: cannot create the directory: %s", dir,
			errno == EEXIST ? "a file has that name" : strerror(errno));
}

static enum pplan_status write_outputs(const struct job *in, const struct tune_request *a,
				       const char *launcher, const struct tune_run *runs,
				       const struct tune_outcome *t, int argc, char **argv,
				       const char *prof_path, struct perr *e)
{
	char path[600], *reports[TUNE_MAX_RUNS];
	int nr = 0;
	cJSON *doc;
	enum pplan_status st = tune_write_profile(in, prof_path, &t->after, runs, t->n, e);
	if (st != PPLAN_OK)
		return st;
	snprintf(path, sizeof path, "%s/tune.json", a->dir);
	{
		char cmd[1024];
		size_t o = (size_t)snprintf(cmd, sizeof cmd, "pplan");
		struct tune_doc d = { in, cmd, launcher, a->families, a->steps, a->warmup, runs, t };
		for (int i = 0; i < argc && o < sizeof cmd; i++)
			o += (size_t)snprintf(cmd + o, sizeof cmd - o, " %s", argv[i]);
		doc = tune_out_json(&d);
	}
	st = doc ? json_write_atomic(path, doc, e) : perr_set(e, PPLAN_ENOMEM, "tune: out of memory");
	if (st == PPLAN_OK && in->json_path)
		st = json_write_atomic(in->json_path, doc, e);
	cJSON_Delete(doc);
	if (st != PPLAN_OK)
		return st;
	printf("# wrote %s, %s", path, prof_path);
	if (in->json_path)
		printf(", %s", in->json_path);
	for (int i = 0; i < t->n; i++)
		if (runs[i].ok)
			reports[nr++] = (char *)runs[i].report;
	if (nr > 0) {
		snprintf(path, sizeof path, "%s/tune.html", a->dir);
		st = html_write(reports, nr, path, "pplan tune", e);
		if (st == PPLAN_OK)
			printf(", %s", path);
	}
	printf("\n");
	return st;
}

int cmd_tune(int argc, char **argv)
{
	struct job in;
	struct tune_request a;
	struct perr e = { { 0 } };
	struct search_result r;
	struct tune_run runs[TUNE_MAX_RUNS];
	struct tune_outcome t;
	char self[1024], prof_path[600];
	const char *launcher;
	enum pplan_status st;
	int rc;

	job_init(&in);
	memset(&a, 0, sizeof a);
	memset(runs, 0, sizeof runs);
	for (int i = 0; i < TUNE_MAX_RUNS; i++)
		runs[i].refit_s = NAN;
	memset(&t, 0, sizeof t);
	search_params_default(&a.sp);
	a.steps = 3;
	a.warmup = 1;
	a.timeout_s = 300;
	a.backend = "auto";
	if (parse_args(argc, argv, &in, &a, &rc) < 0)
		return rc;
	if (!a.families && !a.best_k)
		a.best_k = 3;
	launcher = a.launcher ? a.launcher : getenv("SLURM_JOB_ID") ? "srun -n {ranks}" : "mpirun -np {ranks}";
	if ((st = job_resolve(&in, 1, &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	/* priced as pplan exec will price its run: CPU ranks have its row
	 * already, GPUs take it by name */
	if (!in.cpu_ranks && !in.framework_arg) {
		in.framework_arg = "pplan-exec";
		if ((st = job_resolve(&in, 1, &e)) != PPLAN_OK)
			return cli_fail(st, &e);
	}
	if (in.cpu_ranks && !strcmp(a.backend, "auto"))
		a.backend = "cpu";
	else if (in.cpu_ranks && strcmp(a.backend, "cpu")) {
		fprintf(stderr, "pplan tune: --backend %s conflicts with %s, which describes CPU ranks\n",
			a.backend, in.profile_arg);
		return 2;
	}
	if (!in.gbs && !in.tokens_per_step) {
		/* a few steps must be short */
		in.global_batch = TUNE_SEQS_PER_RANK * cluster_gpus(&in.cluster);
		snprintf(in.gbs_note, sizeof in.gbs_note,
			 "default for tune: %d sequences per rank, --global-batch sets it",
			 TUNE_SEQS_PER_RANK);
	}
	if ((st = make_dir(a.dir, &e)) != PPLAN_OK ||
	    (in.json_path && (st = output_check(in.json_path, "--json", &e)) != PPLAN_OK))
		return cli_fail(st, &e);
	snprintf(prof_path, sizeof prof_path, "%s/profile-refit.json", a.dir);
	if ((st = output_check(prof_path, "--out", &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	a.sp.gbs = in.global_batch;
	a.sp.n_orders = 1;
	a.sp.orders[0] = in.opts.order;
	in.opts.use_des = 1;
	if ((st = search_run(&in.model, &in.cluster, &in.opts, &a.sp, &r, &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	t.n = tune_pick_runs(&r, &a, runs);
	search_free(&r);
	if (t.n == 0) {
		fprintf(stderr, "pplan tune: no layout of %s fits on %ld ranks: nothing to run (pplan search says why)\n",
			in.model.name, cluster_gpus(&in.cluster));
		return 2;
	}
	if (a.fault_run > t.n) {
		fprintf(stderr, "pplan tune: --fault names run %d, but there are %d runs\n", a.fault_run, t.n);
		return 2;
	}
	cli_print_config(stdout, "tune", &in);
	printf("# tune      %d %s under '%s', %ld timed steps after %ld untimed each; reports in %s\n",
	       t.n, a.families ? "strategy families' best members" : "best layouts", launcher, a.steps,
	       a.warmup, a.dir);
	self_path(self, sizeof self, argv[0]);
	for (int i = 0; i < t.n; i++) {
		char lb[128];
		snprintf(runs[i].report, sizeof runs[i].report, "%s/run-%d.json", a.dir, i + 1);
		snprintf(runs[i].log, sizeof runs[i].log, "%s/run-%d.log", a.dir, i + 1);
		cli_short_layout(&runs[i].layout, NULL, lb, sizeof lb);
		printf("# run %d/%d  %-15s %s: predicted %.3f s", i + 1, t.n, family_name(runs[i].fam), lb,
		       runs[i].pred.step_time_s);
		fflush(stdout);
		tune_run_one(&in, &a, launcher, self, i + 1, &runs[i]);
		if (runs[i].ok)
			printf(", measured %.3f s\n", runs[i].measured_s);
		else
			printf(", failed: %s\n", runs[i].why);
	}
	tune_summarise(runs, &t);
	t.start = in.opts.params ? in.opts.params : cost_params_default();
	if (t.measured == 0) {
		print_runs(runs, t.n);
		print_outcome(&in, runs, &t, a.dir);
		return 1;
	}
	if ((st = tune_refit(&in, &a, runs, t.n, t.start, &t.before, &t.after, t.mask, &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	tune_refit_search(&in, &a, runs, &t);
	print_runs(runs, t.n);
	print_refit(&t, prof_path);
	print_outcome(&in, runs, &t, a.dir);
	st = write_outputs(&in, &a, launcher, runs, &t, argc, argv, prof_path, &e);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
