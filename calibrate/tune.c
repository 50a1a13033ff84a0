/*
 * tune.c: `pplan tune`'s loop (tune.h): choosing the runs, running each
 * under the launcher, refitting on them, ranking them again.
 */
#include "tune.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases.h"
#include "fit.h"
#include "predict.h"
#include "profile.h"
#include "run_report.h"
#include "version.h"

#define TUNE_ARGV 48

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

int tune_pick_runs(const struct search_result *r, const struct tune_request *a,
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

static void build_line(struct exec_line *x, const struct job *in, const struct tune_request *a,
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
void tune_run_one(const struct job *in, const struct tune_request *a, const char *launcher,
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

enum pplan_status tune_refit(const struct job *in, const struct tune_request *a,
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

enum pplan_status tune_write_profile(const struct job *in, const char *path,
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


void tune_refit_search(const struct job *in, const struct tune_request *a,
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

void tune_summarise(struct tune_run *runs, struct tune_outcome *t)
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

