/*
 * cmd_fit.c: `pplan fit RUNS.json --out PROFILE`: fits the cost model's
 * free constants to measured runs (sim/fit.h) and writes them as a
 * pplan.profile/1 file that --profile then uses.  The runs are a
 * pplan.cases/1 file: the published calibration set, or a team's own
 * logs written in the same format.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cases.h"
#include "cli.h"
#include "fit.h"
#include "profile.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan fit RUNS.json --out PROFILE [--closed-form] [--per-case-weights]\n"
		"                 [--rounds N] [--constants A,B,...] [--profile FILE] [--quiet]\n\n"
		"  RUNS.json            measured runs in pplan.cases/1\n"
		"  --out PROFILE        write the fitted constants as pplan.profile/1\n"
		"  --closed-form        price pipelines by the closed forms while fitting\n"
		"  --per-case-weights   every run counts the same (default: every source does)\n"
		"  --rounds N           at most N passes over the constants (default %d)\n"
		"  --constants A,B,...  move these constants only (default: those marked fitted,\n"
		"                       sim/MODEL.md 11); the rest stay at their priors\n"
		"  --profile FILE       start from this profile's constants (pplan.profile/1); those\n"
		"                       not moved keep its values, not the priors\n"
		"  --quiet              no table of constants\n",
		400);
}

struct fit_args {
	const char *path, *out, *profile;
	int closed_form, quiet;
	struct fit_options fo;
	unsigned char mask[FIT_MAX_CONSTANTS];
};

static int parse_args(int argc, char **argv, struct fit_args *a)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "out", required_argument, NULL, 'o' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "closed-form", no_argument, NULL, 'F' },
		{ "per-case-weights", no_argument, NULL, 'w' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "constants", required_argument, NULL, 'c' },
		{ "profile", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof *a);
	fit_options_default(&a->fo);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		char *end;
		long v;
		switch (c) {
		case 1: /* "-": FILE where it stands, argv as typed */
			if (a->path) {
				fprintf(stderr, "pplan fit: one RUNS file only ('%s' and '%s')\n", a->path,
					optarg);
				return 2;
			}
			a->path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'o': a->out = optarg; break;
		case 'r':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 100000) {
				fprintf(stderr, "pplan fit: --rounds must be a whole number from 1 to 100000, got '%s'\n",
					optarg);
				return 2;
			}
			a->fo.max_rounds = (int)v;
			break;
		case 'F': a->closed_form = 1; break;
		case 'w': a->fo.per_case_weights = 1; break;
		case 'q': a->quiet = 1; break;
		case 'p': a->profile = optarg; break;
		case 'c': {
			struct perr e = { "" };
			if (fit_mask_parse(optarg, a->mask, &e) != PPLAN_OK) {
				fprintf(stderr, "pplan fit: %s\n", e.msg);
				return 2;
			}
			a->fo.moves = a->mask;
			break;
		}
		default:
			fprintf(stderr, "pplan fit: unknown or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (!a->path || !a->out) {
		fprintf(stderr, "pplan fit: %s is required\n", a->path ? "--out PROFILE" : "RUNS.json");
		usage(stderr);
		return 2;
	}
	return -1;
}

/* The GPU all runs share, or PROFILE_ANY_DEVICE with their names. */
static void describe_device(const struct vcase *cases, int n, struct profile *p)
{
	const struct gpu_spec *g = NULL;
	int one = 1;
	size_t o = 0;
	for (int i = 0; i < n; i++) {
		if (!cases[i].predictable)
			continue;
		if (!g)
			g = &cases[i].cluster.gpu;
		else if (strcmp(g->name, cases[i].cluster.gpu.name))
			one = 0;
	}
	if (g && one) {
		snprintf(p->device_name, sizeof p->device_name, "%s", g->name);
		snprintf(p->device_description, sizeof p->device_description, "%s", g->description);
		for (int k = 0; k < PREC_COUNT; k++)
			p->peak_tflops[k] = g->peak_tflops[k] > 0 ? g->peak_tflops[k] : NAN;
		p->mem_gib = g->mem_gib;
		p->hbm_gbps = g->hbm_gbps;
		return;
	}
	snprintf(p->device_name, sizeof p->device_name, "%s", PROFILE_ANY_DEVICE);
	o = (size_t)snprintf(p->device_description, sizeof p->device_description,
			     "fitted on runs on");
	for (int i = 0; i < n; i++) {
		int seen = 0;
		if (!cases[i].predictable)
			continue;
		for (int j = 0; j < i; j++)
			if (cases[j].predictable &&
			    !strcmp(cases[j].cluster.gpu.name, cases[i].cluster.gpu.name))
				seen = 1;
		if (!seen && o < sizeof p->device_description)
			o += (size_t)snprintf(p->device_description + o,
					      sizeof p->device_description - o, " %s",
					      cases[i].cluster.gpu.name);
	}
}

static void describe_fit(const struct fit_args *g, const struct vcase *cases, int n,
			 const struct fit_result *fr, int argc, char **argv,
			 struct profile *p)
{
	time_t now = time(NULL);
	struct tm tm;
	size_t o = 0;

	p->kind = PROFILE_FITTED;
	describe_device(cases, n, p);
	p->has_constants = 1;
	p->constants = fr->params;
	p->has_fit = 1;
	snprintf(p->fit_runs, sizeof p->fit_runs, "%s", g->path);
	p->fit_cases = fr->n_time > fr->n_memory ? fr->n_time : fr->n_memory;
	snprintf(p->fit_objective, sizeof p->fit_objective, "mean |log(pred/meas)|");
	p->fit_value = fr->objective;
	for (int i = 0; i < n && p->n_fit_sources < PROFILE_MAX_SOURCES; i++) {
		int seen = 0;
		for (int j = 0; j < p->n_fit_sources; j++)
			if (!strcmp(p->fit_sources[j], cases[i].label))
				seen = 1;
		if (!seen)
			snprintf(p->fit_sources[p->n_fit_sources++], sizeof p->fit_sources[0], "%s",
				 cases[i].label);
	}
	snprintf(p->pplan_version, sizeof p->pplan_version, "%s", PPLAN_VERSION);
	snprintf(p->git_hash, sizeof p->git_hash, "%s", PPLAN_GIT_HASH);
	o = (size_t)snprintf(p->command, sizeof p->command, "pplan");
	for (int i = 0; i < argc && o < sizeof p->command; i++)
		o += (size_t)snprintf(p->command + o, sizeof p->command - o, " %s", argv[i]);
	gmtime_r(&now, &tm);
	strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	p->n_libs = 1;
	snprintf(p->lib_name[0], sizeof p->lib_name[0], "cjson");
	snprintf(p->lib_version[0], sizeof p->lib_version[0], "%d.%d.%d", CJSON_VERSION_MAJOR,
		 CJSON_VERSION_MINOR, CJSON_VERSION_PATCH);
}

static void print_constants(const struct fit_result *prior, const struct fit_result *fr,
			    const unsigned char *mask, const struct cost_params *start)
{
	int nt;
	const struct cost_param_info *t = cost_param_table(&nt);
	struct cost_params pp;
	if (start)
		pp = *start;
	else
		cost_params_prior(&pp);
	printf("#  %-24s %10s %10s %18s %6s\n", "constant", start ? "start" : "prior", "fitted",
	       "range", "unit");
	for (int i = 0; i < nt; i++) {
		char range[48];
		if (mask ? !mask[i] : !t[i].fitted)
			continue;
		snprintf(range, sizeof range, "[%g, %g]", t[i].min, t[i].max);
		printf("   %-24s %10.4g %10.4g %18s %6s\n", t[i].name, cost_param_get(&pp, &t[i]),
		       cost_param_get(&fr->params, &t[i]), range, t[i].unit);
	}
	printf("#\n# mean |log(pred/meas)|, each source weighted equally: step time %.4f -> %.4f over %d runs, memory %.4f -> %.4f over %d peaks\n",
	       prior->time_error, fr->time_error, fr->n_time, prior->memory_error,
	       fr->memory_error, fr->n_memory);
}

int cmd_fit(int argc, char **argv)
{
	struct fit_args g;
	struct vcase *cases = NULL;
	struct fit_result fr, prior;
	struct cost_params pp;
	struct profile p;
	const struct cost_params *start = NULL;
	int n = 0, rc = parse_args(argc, argv, &g);
	struct perr e = { "" };
	enum pplan_status st;

	if (rc >= 0)
		return rc;
	cost_params_prior(&pp);
	if (g.profile) {
		/* the starting point: the file's constants, the rest embedded */
		profile_init(&p);
		st = profile_load(g.profile, &p, &e);
		if (st == PPLAN_OK && !p.has_constants)
			st = perr_set(&e, PPLAN_EINPUT, "%s: the profile has no constants to start from",
				      g.profile);
		if (st == PPLAN_OK)
			pp = p.constants;
		profile_free(&p);
		if (st != PPLAN_OK)
			return cli_fail(st, &e);
		start = &pp;
	}
	st = cases_load(g.path, &cases, &n, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	for (int i = 0; i < n; i++)
		cases[i].opts.use_des = !g.closed_form;
	fit_errors(cases, n, NULL, &pp, g.fo.per_case_weights, &prior);
	st = fit_run(cases, n, NULL, start, &g.fo, &fr, &e);
	if (st != PPLAN_OK) {
		free(cases);
		return cli_fail(st, &e);
	}
	profile_init(&p);
	describe_fit(&g, cases, n, &fr, argc, argv, &p);
	st = profile_save(&p, g.out, &e);
	profile_free(&p);
	printf("# pplan fit %s: %d runs, %d sources, %ld evaluations\n", g.path, n,
	       fr.n_sources, fr.evaluations);
	if (!g.quiet)
		print_constants(&prior, &fr, g.fo.moves, start);
	if (st == PPLAN_OK)
		printf("# wrote %s\n", g.out);
	free(cases);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
