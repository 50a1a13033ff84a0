/*
 * cmd_tune.c: `pplan tune`: the closed loop.  The search ranks the job's
 * layouts; the best K (or, with --families, the best member of every
 * strategy family) run for a few steps under the launcher, each as
 * `pplan exec` with its report; the constants that scale the measured
 * curves (or, without a profile, the model's ceilings) are refitted on
 * those runs (sim/fit.h) and written as a profile; the runs are ranked
 * again by what they measured, beside the refitted predictions, and the
 * layout it would now book is said with how far the measurements moved
 * the ranking.  Writes DIR/run-N.json and .log per run, DIR/tune.json
 * (pplan.tune/1), DIR/profile-refit.json and DIR/tune.html.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cases.h"
#include "cli.h"
#include "cli_common.h"
#include "fit.h"
#include "html.h"
#include "jsonio.h"
#include "predict.h"
#include "profile.h"
#include "run_report.h"
#include "search.h"
#include "tune_out.h"
#include "version.h"

#define TUNE_SEQS_PER_RANK 8     /* default global batch: sequences per rank */
#define TUNE_ARGV 48
/* What the refit moves with measured curves (their scales, and the DP
 * overlap no curve prices), and without (the ceilings of the model). */
#define TUNE_CONSTANTS_CURVES "measured_compute_scale,measured_comm_scale,dp_overlap_unhidden"
#define TUNE_CONSTANTS_MODEL "gemm_ceiling.%s,net_eff_scale,step_fixed_ms"

struct tune_args {
	struct search_params sp;
	int best_k, families;
	long steps, warmup;
	double timeout_s;
	const char *backend, *launcher, *dir, *constants;
	int fault_run, fault_rank;
	long fault_ms;
};


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

static int parse_fault(const char *arg, struct tune_args *a)
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

static int parse_tune_option(int c, const char *arg, struct tune_args *a)
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

static int parse_args(int argc, char **argv, struct job *in, struct tune_args *a, int *rc)
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

/* ---- choosing the runs ------------------------------------------------------ */

/* Twins that differ only in ZeRO stage run the same on the executor's
 * scale: the second adds nothing. */
static int twins(const struct layout *a, const struct layout *b)
{
	struct layout x = *a, y = *b;
	char sx[256], sy[256];
	x.zero = y.zero = 0;
	layout_format(&x, sx, sizeof sx);
	layout_format(&y, sy, sizeof sy);
	return strcmp(sx, sy) == 0;
}

static int pick_runs(const struct search_result *r, const struct tune_args *a,
		     struct tune_run *runs)
{
	int n = 0;
	if (a->families) {
		for (int f = 0; f < FAM_COUNT && n < TUNE_MAX_RUNS; f++) {
			if (!r->family[f].found)
				continue;
			runs[n].layout = r->family[f].layout;
			runs[n].pred = r->family[f].pred;
			runs[n].fam = (enum family)f;
			n++;
		}
	} else {
		for (int i = 0; i < r->n_top && n < a->best_k; i++) {
			int dup = 0;
			for (int j = 0; j < n; j++)
				dup |= twins(&runs[j].layout, &r->top_layouts[i]);
			if (dup)
				continue;
			runs[n].layout = r->top_layouts[i];
			runs[n].pred = r->top_preds[i];
			runs[n].fam = family_of(&r->top_layouts[i]);
			n++;
		}
	}
	/* the predicted order among the runs: the search's ranking (which
	 * may put more headroom first within its tolerance), the families'
	 * by step time */
	for (int i = 0; i < n; i++) {
		runs[i].rank_before = i + 1;
		if (!a->families)
			continue;
		runs[i].rank_before = 1;
		for (int j = 0; j < n; j++)
			if (runs[j].pred.step_time_s < runs[i].pred.step_time_s ||
			    (runs[j].pred.step_time_s == runs[i].pred.step_time_s && j < i))
				runs[i].rank_before++;
	}
	return n;
}

/* ---- running ------------------------------------------------------------------ */

static void self_path(char *buf, size_t len, const char *argv0)
{
	ssize_t k = readlink("/proc/self/exe", buf, len - 1);
	if (k > 0)
		buf[k] = '\0';
	else
		snprintf(buf, len, "%s", argv0);
}

/* The launcher's words with {ranks} replaced, into argv (the strings in
 * store); returns how many. */
static int launcher_words(const char *launcher, long ranks, char *store, size_t len,
			  char **argv, int max)
{
	char rs[24];
	size_t o = 0;
	int n = 0;
	snprintf(rs, sizeof rs, "%ld", ranks);
	for (const char *p = launcher; *p && n < max;) {
		size_t w = strcspn(p, " \t");
		if (w == 0) {
			p++;
			continue;
		}
		argv[n++] = store + o;
		for (size_t i = 0; i < w && o + 24 < len; i++) {
			if (!strncmp(p + i, "{ranks}", 7)) {
				o += (size_t)snprintf(store + o, len - o, "%s", rs);
				i += 6;
			} else {
				store[o++] = p[i];
			}
		}
		store[o++] = '\0';
		p += w;
	}
	return n;
}

struct exec_line {
	char store[4096];
	char steps[24], warmup[24], timeout[24];
	char *argv[TUNE_ARGV];
	int argc;
};

static void add(struct exec_line *x, const char *s)
{
	if (x->argc < TUNE_ARGV - 1)
		x->argv[x->argc++] = (char *)s;
	x->argv[x->argc] = NULL;
}

static void build_line(struct exec_line *x, const struct job *in, const struct tune_args *a,
		       const char *launcher, const char *self, const char *layout,
		       const struct tune_run *run)
{
	long ranks = cluster_gpus(&in->cluster);
	x->argc = launcher_words(launcher, ranks, x->store, sizeof x->store, x->argv,
				 TUNE_ARGV - 30);
	add(x, self);
	add(x, "exec");
	add(x, "--model");
	add(x, in->model_arg ? in->model_arg : in->model.name);
	add(x, "--layout");
	add(x, layout);
	snprintf(x->steps, sizeof x->steps, "%ld", a->steps);
	snprintf(x->warmup, sizeof x->warmup, "%ld", a->warmup);
	snprintf(x->timeout, sizeof x->timeout, "%.0f", a->timeout_s);
	add(x, "--steps");
	add(x, x->steps);
	add(x, "--warmup");
	add(x, x->warmup);
	add(x, "--timeout");
	add(x, x->timeout);
	add(x, "--backend");
	add(x, a->backend);
	add(x, "--report");
	add(x, run->report);
	if (in->profile_arg) {
		add(x, "--profile");
		add(x, in->profile_arg);
	}
	if (in->gpu_arg && !in->cpu_ranks) {
		add(x, "--gpu");
		add(x, in->gpu_arg);
	}
	if (in->precision_arg) {
		add(x, "--precision");
		add(x, in->precision_arg);
	}
}

/* Runs one layout; its report and log under the run's names. */
static void run_one(const struct job *in, const struct tune_args *a, const char *launcher,
		    const char *self, int index, struct tune_run *run)
{
	struct exec_line x;
	char layout[256], fault[64];
	pid_t pid;
	int status = 0;

	layout_format(&run->layout, layout, sizeof layout);
	build_line(&x, in, a, launcher, self, layout, run);
	snprintf(fault, sizeof fault, "%d:1:slow:%ld", a->fault_rank, a->fault_ms);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(run->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (a->fault_run == index)
			setenv("PPLAN_EXEC_FAULT", fault, 1);
		else
			unsetenv("PPLAN_EXEC_FAULT");
		execvp(x.argv[0], x.argv);
		fprintf(stderr, "pplan tune: cannot start %s: %s\n", x.argv[0], strerror(errno));
		_exit(127);
	}
	run->ran = 1;
	if (pid < 0) {
		snprintf(run->why, sizeof run->why, "cannot start the launcher: %s", strerror(errno));
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(run->why, sizeof run->why, "%s %d (see %s)",
			 WIFEXITED(status) ? "exit status" : "killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), run->log);
		return;
	}
	{
		struct runreport rr;
		struct perr e = { { 0 } };
		if (runreport_load(run->report, &rr, &e) != PPLAN_OK) {
			snprintf(run->why, sizeof run->why, "%s", e.msg);
			return;
		}
		run->ok = rr.ok && rr.meas.step_time_s > 0;
		run->measured_s = rr.meas.step_time_s;
		if (!run->ok)
			snprintf(run->why, sizeof run->why, "%s", rr.failure[0] ? rr.failure : "no step measured");
		runreport_free(&rr);
	}
}

/* ---- refitting ---------------------------------------------------------------- */

static void vcase_of_run(const struct job *in, const struct tune_run *run, int i,
			 struct vcase *vc)
{
	memset(vc, 0, sizeof *vc);
	snprintf(vc->id, sizeof vc->id, "tune-run-%d", i + 1);
	snprintf(vc->publication, sizeof vc->publication, "pplan tune");
	snprintf(vc->label, sizeof vc->label, "tune");
	vc->model = in->model;
	vc->cluster = in->cluster;
	vc->layout = run->layout;
	vc->opts = in->opts;
	vc->opts.params = NULL;
	vc->measured_step_s = run->ok ? run->measured_s : NAN;
	vc->measured_tflops = NAN;
	vc->measured_mem_gib = NAN;
	vc->predictable = 1;
}

static enum pplan_status refit(const struct job *in, const struct tune_args *a,
			       struct tune_run *runs, int n, const struct cost_params *start,
			       struct fit_result *before, struct fit_result *after,
			       unsigned char *mask, struct perr *e)
{
	struct vcase *vc = calloc((size_t)n, sizeof *vc);
	struct fit_options fo;
	char list[256];
	enum pplan_status st;
	if (!vc)
		return perr_set(e, PPLAN_ENOMEM, "tune: out of memory");
	if (a->constants)
		snprintf(list, sizeof list, "%s", a->constants);
	else if (!curve_set_empty(&in->curves))
		snprintf(list, sizeof list, "%s", TUNE_CONSTANTS_CURVES);
	else
		snprintf(list, sizeof list, TUNE_CONSTANTS_MODEL,
			 gpu_arch_name(in->cluster.gpu.arch));
	st = fit_mask_parse(list, mask, e);
	for (int i = 0; i < n; i++)
		vcase_of_run(in, &runs[i], i, &vc[i]);
	fit_options_default(&fo);
	fo.moves = mask;
	fo.per_case_weights = 1;
	if (st == PPLAN_OK) {
		fit_errors(vc, n, NULL, start, 1, before);
		st = fit_run(vc, n, NULL, start, &fo, after, e);
	}
	for (int i = 0; st == PPLAN_OK && i < n; i++) {
		struct train_opts o = in->opts;
		struct prediction p;
		o.params = &after->params;
		runs[i].refit_s = predict_layout(&in->model, &in->cluster, &runs[i].layout, &o, &p,
						 NULL) == PPLAN_OK ? p.step_time_s : NAN;
	}
	free(vc);
	return st;
}

/* Measured ranks, fastest first; failed runs get 0. */
static void rank_measured(struct tune_run *runs, int n)
{
	for (int i = 0; i < n; i++) {
		runs[i].rank_after = 0;
		if (!runs[i].ok)
			continue;
		runs[i].rank_after = 1;
		for (int j = 0; j < n; j++)
			if (runs[j].ok && (runs[j].measured_s < runs[i].measured_s ||
					   (runs[j].measured_s == runs[i].measured_s && j < i)))
				runs[i].rank_after++;
	}
}

/* The predicted order among the measured runs (failed ones left out). */
static int rank_before_measured(const struct tune_run *runs, int n, int i)
{
	int k = 1;
	for (int j = 0; j < n; j++)
		if (runs[j].ok && runs[j].rank_before < runs[i].rank_before)
			k++;
	return k;
}

/* ---- writing ------------------------------------------------------------------ */

static enum pplan_status write_profile(const struct job *in, const char *path,
				       const struct fit_result *fr, const struct tune_run *runs,
				       int n, struct perr *e)
{
	struct profile p;
	enum pplan_status st;
	if (in->profile_arg) {
		if ((st = profile_load(in->profile_arg, &p, e)) != PPLAN_OK)
			return st;
	} else {
		const struct gpu_spec *g = &in->cluster.gpu;
		profile_init(&p);
		p.kind = PROFILE_FITTED;
		snprintf(p.device_name, sizeof p.device_name, "%s", g->name);
		snprintf(p.device_description, sizeof p.device_description, "%s", g->description);
		for (int k = 0; k < PREC_COUNT; k++)
			p.peak_tflops[k] = g->peak_tflops[k] > 0 ? g->peak_tflops[k] : NAN;
		p.mem_gib = g->mem_gib;
		p.hbm_gbps = g->hbm_gbps;
	}
	p.has_constants = 1;
	p.constants = fr->params;
	p.has_fit = 1;
	snprintf(p.fit_runs, sizeof p.fit_runs, "pplan tune: %d runs of %s", n, in->model.name);
	p.fit_cases = fr->n_time;
	snprintf(p.fit_objective, sizeof p.fit_objective, "mean |log(pred/meas)|");
	p.fit_value = fr->objective;
	p.n_fit_sources = 0;
	for (int i = 0; i < n && p.n_fit_sources < PROFILE_MAX_SOURCES; i++)
		if (runs[i].ok)
			snprintf(p.fit_sources[p.n_fit_sources++], sizeof p.fit_sources[0], "%s",
				 runs[i].report);
	snprintf(p.pplan_version, sizeof p.pplan_version, "%s", PPLAN_VERSION);
	snprintf(p.git_hash, sizeof p.git_hash, "%s", PPLAN_GIT_HASH);
	st = profile_save(&p, path, e);
	profile_free(&p);
	return st;
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

static void refit_search(const struct job *in, const struct tune_args *a,
			 const struct tune_run *runs, struct tune_outcome *t)
{
	struct train_opts o = in->opts;
	struct search_params sp = a->sp;
	struct search_result r;
	t->refit_best[0] = '\0';
	t->refit_best_s = NAN;
	t->refit_best_run = -1;
	o.params = &t->after.params;
	if (search_run(&in->model, &in->cluster, &o, &sp, &r, NULL) != PPLAN_OK)
		return;
	if (r.n_top > 0) {
		layout_format(&r.top_layouts[0], t->refit_best, sizeof t->refit_best);
		t->refit_best_s = r.top_preds[0].step_time_s;
		for (int i = 0; i < t->n; i++)
			if (twins(&runs[i].layout, &r.top_layouts[0]))
				t->refit_best_run = i;
	}
	search_free(&r);
}

static void summarise(struct tune_run *runs, struct tune_outcome *t)
{
	t->measured = 0;
	t->booked = -1;
	t->moved = 0;
	t->best_pred_rank = 0;
	rank_measured(runs, t->n);
	for (int i = 0; i < t->n; i++) {
		if (!runs[i].ok)
			continue;
		t->measured++;
		if (runs[i].rank_after == 1)
			t->booked = i;
		if (runs[i].rank_after != rank_before_measured(runs, t->n, i))
			t->moved++;
		if (runs[i].rank_before == 1)
			t->best_pred_rank = runs[i].rank_after;
	}
}

static enum pplan_status write_outputs(const struct job *in, const struct tune_args *a,
				       const char *launcher, const struct tune_run *runs,
				       const struct tune_outcome *t, int argc, char **argv,
				       const char *prof_path, struct perr *e)
{
	char path[600], *reports[TUNE_MAX_RUNS];
	int nr = 0;
	cJSON *doc;
	enum pplan_status st = write_profile(in, prof_path, &t->after, runs, t->n, e);
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
	struct tune_args a;
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
	t.n = pick_runs(&r, &a, runs);
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
		run_one(&in, &a, launcher, self, i + 1, &runs[i]);
		if (runs[i].ok)
			printf(", measured %.3f s\n", runs[i].measured_s);
		else
			printf(", failed: %s\n", runs[i].why);
	}
	summarise(runs, &t);
	t.start = in.opts.params ? in.opts.params : cost_params_default();
	if (t.measured == 0) {
		print_runs(runs, t.n);
		print_outcome(&in, runs, &t, a.dir);
		return 1;
	}
	if ((st = refit(&in, &a, runs, t.n, t.start, &t.before, &t.after, t.mask, &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	refit_search(&in, &a, runs, &t);
	print_runs(runs, t.n);
	print_refit(&t, prof_path);
	print_outcome(&in, runs, &t, a.dir);
	st = write_outputs(&in, &a, launcher, runs, &t, argc, argv, prof_path, &e);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
