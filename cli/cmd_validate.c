/*
 * cmd_validate.c: `pplan validate FILE`: predicts every published run of
 * a pplan.cases/1 file and prints predicted against measured step time
 * (or throughput, where the source gives no step time) and memory, the
 * error per case, the defaults assumed for null fields, each case that
 * could not be predicted with its reason, and the mean absolute
 * percentage error by source and overall.  --cross-validate source fits
 * the constants on every source but one and predicts the one left out;
 * --baseline constant-mfu prices every run with one MFU, the best for
 * the file, beside pplan.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "jsonio.h"
#include "profile.h"
#include "table.h"
#include "units.h"
#include "validation.h"
#include "validation_out.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan validate FILE [--json OUT] [--quiet] [--closed-form] [--profile P]\n"
		"                            [--cross-validate source] [--baseline constant-mfu]\n\n"
		"  FILE                      published runs in pplan.cases/1 (e.g. validation/calibration.json)\n"
		"  --json OUT                write pplan.validation/1\n"
		"  --quiet                   only the summary\n"
		"  --closed-form             pipeline bubble from the closed forms, not the event simulation\n"
		"  --profile P               the cost model's constants from a pplan.profile/1 file\n"
		"                            (default: the embedded ones)\n"
		"  --cross-validate source   for each source: fit on the others, predict it\n"
		"  --baseline constant-mfu   also price every run at one MFU, the best for the file\n");
}

struct validate_args {
	const char *path, *json, *profile;
	int quiet, closed_form, cross_validate, baseline;
};

static int parse_args(int argc, char **argv, struct validate_args *a)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", required_argument, NULL, 'j' },
		{ "profile", required_argument, NULL, 'p' },
		{ "cross-validate", required_argument, NULL, 'x' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "closed-form", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof *a);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1: /* "-": FILE where it stands, argv as typed */
			if (a->path) {
				fprintf(stderr, "pplan validate: one FILE only ('%s' and '%s')\n", a->path,
					optarg);
				return 2;
			}
			a->path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'j': a->json = optarg; break;
		case 'p': a->profile = optarg; break;
		case 'x':
			if (strcmp(optarg, "source") != 0) {
				fprintf(stderr, "pplan validate: --cross-validate takes 'source' (leave one source out), got '%s'\n",
					optarg);
				return 2;
			}
			a->cross_validate = 1;
			break;
		case 'b':
			if (strcmp(optarg, "constant-mfu") != 0) {
				fprintf(stderr, "pplan validate: --baseline takes 'constant-mfu', got '%s'\n",
					optarg);
				return 2;
			}
			a->baseline = 1;
			break;
		case 'q': a->quiet = 1; break;
		case 'F': a->closed_form = 1; break;
		default:
			fprintf(stderr, "pplan validate: unknown or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (!a->path) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* ---- printing ------------------------------------------------------------------ */

static void print_table(const struct vcase *cases, int n, const struct case_outcome *out)
{
	static const struct table_col cols[] = {
		{ "case", "", 44, 1 }, { "gpu", "", 9, 1 },
		{ "layout", "(tp.pp.dp.cp/mbs/vp)", 22, 1 }, { "cmp", "", 4, 1 },
		{ "pred", "(s)", 8, 0 }, { "meas", "(s)", 8, 0 },
		{ "err", "(%)", 6, 0 }, { "pred_mem", "(GiB)", 8, 0 },
		{ "meas_mem", "(GiB)", 8, 0 }, { "err", "(%)", 6, 0 },
		{ "oom", "(p/m)", 5, 1 },
	};
	int ncols = (int)(sizeof cols / sizeof cols[0]);
	table_header(stdout, cols, ncols);
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		const struct case_outcome *r = &out[i];
		char c3[64], c5[16], c6[16], c7[16], c8[16], c9[16], c10[16], c11[16];
		const char *cells[11];
		snprintf(c3, sizeof c3, "%d.%d.%d.%d/%d/%d", vc->layout.tp, vc->layout.pp,
			 vc->layout.dp, vc->layout.cp, vc->layout.mbs, vc->layout.vp);
		cells[0] = vc->id;
		cells[1] = vc->cluster.gpu.name;
		cells[2] = c3;
		cells[3] = !r->compared ? "-" : vc->step_from_throughput ? "tput" : "step";
		cells[4] = table_num(c5, sizeof c5, "%.2f", r->pred.step_time_s);
		cells[5] = table_num(c6, sizeof c6, "%.2f", vc->measured_step_s);
		cells[6] = table_num(c7, sizeof c7, "%+.1f", r->err);
		cells[7] = table_num(c8, sizeof c8, "%.1f", r->pmem);
		cells[8] = table_num(c9, sizeof c9, "%.1f", vc->measured_mem_gib);
		cells[9] = table_num(c10, sizeof c10, "%+.1f", r->merr);
		snprintf(c11, sizeof c11, "%s/%s",
			 vc->predictable ? (r->pred.feasible ? "n" : "Y") : "-",
			 vc->measured_oom ? "Y" : "n");
		cells[10] = c11;
		table_row(stdout, cols, ncols, cells);
	}
}

static void print_assumed(const struct vcase *cases, int n)
{
	printf("#\n# defaults assumed for null fields, warnings, and cases not predicted:\n");
	for (int i = 0; i < n; i++) {
		if (cases[i].warning[0])
			printf("#   %-44s WARNING: %s\n", cases[i].id, cases[i].warning);
		if (!cases[i].predictable)
			printf("#   %-44s not predicted: %s\n", cases[i].id, cases[i].skip_reason);
		else if (cases[i].assumed[0])
			printf("#   %-44s %s\n", cases[i].id, cases[i].assumed);
	}
}

static void print_row(const struct err_tally *a, const struct err_tally *base, const struct err_tally *cv,
		      const struct validate_args *g)
{
	printf("#   %-42s %5d %8.1f %+8.1f", a->key, a->n, err_tally_mape(a), a->worst);
	if (g->baseline)
		printf(" %9.1f", err_tally_mape(base));
	if (g->cross_validate)
		printf(" %8.1f %+8.1f", err_tally_mape(cv), cv->worst);
	printf("\n");
}

static void print_summary(const struct validation_summary *s, int n, const struct validate_args *g)
{
	printf("#\n# summary: mean absolute percentage error (MAPE) of step time\n");
	printf("#   %-42s %5s %8s %8s", "source", "cases", "MAPE", "worst");
	if (g->baseline)
		printf(" %9s", "mfu-rule");
	if (g->cross_validate)
		printf(" %8s %8s", "LOSO", "worst");
	printf("\n#   %-42s %5s %8s %8s", "", "", "(%)", "(%)");
	if (g->baseline)
		printf(" %9s", "(%)");
	if (g->cross_validate)
		printf(" %8s %8s", "(%)", "(%)");
	printf("\n");
	for (int i = 0; i < s->nsrc; i++)
		print_row(&s->src[i], &s->base[i], &s->cv[i], g);
	if (s->half.n)
		print_row(&s->half, &s->base_half, &s->cv_half, g);
	if (s->fp8.n)
		print_row(&s->fp8, &s->base_fp8, &s->cv_fp8, g);
	print_row(&s->all, &s->base_all, &s->cv_all, g);
	if (s->searched.n)
		printf("# %d run%s without a layout, priced at pplan search's best layout (not in the figures above): MAPE %.1f %%, worst %+.1f %%\n",
		       s->searched.n, s->searched.n == 1 ? "" : "s", err_tally_mape(&s->searched),
		       s->searched.worst);
	if (g->baseline)
		printf("# mfu-rule: step = model FLOPs / (GPUs x peak x %.1f %% MFU), the MFU best for this file\n",
		       100.0 * s->mfu);
	if (g->cross_validate)
		printf("# LOSO: leave one source out; each source predicted with constants fitted on the others\n");
	if (s->mem.n)
		printf("# memory MAPE %.1f %% over %d measured peaks (worst %+.1f %%)\n",
		       err_tally_mape(&s->mem), s->mem.n, s->mem.worst);
	printf("# out-of-memory verdicts agree with the source in %d of %d cases\n",
	       s->oom_agree, s->oom_total);
	if (s->npred == n)
		printf("# %d of %d cases predicted (100 %%)\n", n, n);
	else
		printf("# %d of %d cases predicted (%.0f %%); %d not predicted:\n", s->npred, n,
		       100.0 * s->npred / n, n - s->npred);
	for (int k = 0; k < s->nreason; k++)
		printf("#   %3d  %s\n", s->reason_n[k], s->reason[k]);
}

/* ---- the command ----------------------------------------------------------------------- */

static enum pplan_status load_profile(const struct validate_args *g, const struct vcase *cases, int n,
				      struct profile *pr, struct perr *e)
{
	enum pplan_status st = profile_load(g->profile, pr, e);
	if (st != PPLAN_OK)
		return st;
	for (int i = 0; i < n && st == PPLAN_OK; i++)
		st = profile_check_device(pr, g->profile, &cases[i].cluster, 0, e);
	if (st != PPLAN_OK)
		profile_free(pr);
	return st;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_args g;
	struct vcase *cases = NULL;
	struct case_outcome *out = NULL;
	struct validation_summary *s = NULL;
	struct profile pr;
	int n = 0, rc = parse_args(argc, argv, &g);
	struct perr e = { "" };
	enum pplan_status st;

	if (rc >= 0)
		return rc;
	profile_init(&pr);
	if (g.json && (st = output_check(g.json, "--json", &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	st = cases_load(g.path, &cases, &n, &e);
	if (st == PPLAN_OK && g.profile)
		st = load_profile(&g, cases, n, &pr, &e);
	if (st != PPLAN_OK) {
		free(cases);
		return cli_fail(st, &e);
	}
	out = calloc((size_t)n, sizeof *out);
	s = calloc(1, sizeof *s);
	if (!out || !s) {
		st = perr_set(&e, PPLAN_ENOMEM, "out of memory");
		goto done;
	}
	validation_predict(cases, n, g.profile ? &pr.constants : NULL, g.closed_form, out);
	if (g.baseline)
		s->mfu = validation_constant_mfu(cases, n, out);
	if (g.cross_validate && (st = validation_cross_validate(cases, n, g.closed_form, out, &e)) != PPLAN_OK)
		goto done;
	cli_print_provenance(stdout, "validate");
	printf("# cases     %s: %d published runs\n", g.path, n);
	printf("# constants %s\n", g.profile ? g.profile
					  : "embedded (the fit on validation/calibration.json)");
	if (!g.quiet) {
		print_table(cases, n, out);
		print_assumed(cases, n);
	}
	validation_summarise(cases, n, out, s);
	print_summary(s, n, &g);
	if (g.json) {
		struct validation_doc doc = { g.path, g.profile, cases, out, n, s, g.baseline,
					      g.cross_validate };
		st = validation_out_write(g.json, &doc, &e);
	}
done:
	profile_free(&pr);
	free(cases);
	free(out);
	free(s);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
