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

#include "cases.h"
#include "cli.h"
#include "cli_common.h"
#include "fit.h"
#include "jsonio.h"
#include "profile.h"
#include "report.h"
#include "table.h"
#include "units.h"

#define MAX_SOURCES 64
#define MAX_REASONS 32

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

struct acc {
	char key[48];
	double sum_abs;
	int n;
	double worst;
};

static void acc_add(struct acc *a, double err)
{
	a->sum_abs += fabs(err);
	a->n++;
	if (fabs(err) > fabs(a->worst))
		a->worst = err;
}

static double acc_mape(const struct acc *a)
{
	return a->n ? a->sum_abs / a->n : NAN;
}

/* What one case gave. */
struct outcome {
	struct prediction p;
	double err, merr, pmem;      /* step-time and memory error (%), predicted GiB */
	double base_step, base_err;  /* the constant-MFU rule */
	double cv_step, cv_err;      /* predicted with the others' fit */
	int compared;                /* a step time (measured or derived) to compare */
};

struct args {
	const char *path, *json, *profile;
	int quiet, closed_form, cross_validate, baseline;
};

static int parse_args(int argc, char **argv, struct args *a)
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

/* ---- predicting ------------------------------------------------------------- */

static void predict_all(struct vcase *cases, int n, const struct cost_params *params,
			int closed_form, struct outcome *out)
{
	for (int i = 0; i < n; i++) {
		struct vcase *vc = &cases[i];
		struct outcome *r = &out[i];
		struct perr e = { "" };
		memset(r, 0, sizeof *r);
		r->p.step_time_s = r->err = r->merr = r->pmem = NAN;
		r->base_step = r->base_err = r->cv_step = r->cv_err = NAN;
		vc->opts.use_des = !closed_form;
		if (!vc->predictable)
			continue;
		vc->opts.params = params;
		if (vcase_predict(vc, &r->p, &e) != PPLAN_OK) {
			vc->predictable = 0;
			snprintf(vc->skip_reason, sizeof vc->skip_reason, "%s", e.msg);
			r->p.step_time_s = NAN;
			continue;
		}
		vc->opts.params = NULL;
		r->pmem = r->p.mem.total / GIB;
		r->compared = isfinite(vc->measured_step_s);
		if (r->compared)
			r->err = 100.0 * (r->p.step_time_s - vc->measured_step_s) / vc->measured_step_s;
		if (isfinite(vc->measured_mem_gib))
			r->merr = 100.0 * (r->pmem - vc->measured_mem_gib) / vc->measured_mem_gib;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The rule of thumb: step = model FLOPs / (GPUs x peak x MFU), with the
 * MFU that minimises the mean absolute log error over the file: the
 * geometric median of the runs' own MFUs. */
static double constant_mfu(struct vcase *cases, int n, struct outcome *out)
{
	double *lg = calloc((size_t)n, sizeof *lg), mfu;
	int k = 0;
	if (!lg)
		return NAN;
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		if (!out[i].compared)
			continue;
		lg[k++] = log(out[i].p.model_flops /
			      ((double)cluster_gpus(&vc->cluster) *
			       vc->cluster.gpu.peak_tflops[vc->opts.precision] * 1e12 *
			       vc->measured_step_s));
	}
	if (k == 0) {
		free(lg);
		return NAN;
	}
	qsort(lg, (size_t)k, sizeof *lg, cmp_double);
	mfu = exp(k % 2 ? lg[k / 2] : 0.5 * (lg[k / 2 - 1] + lg[k / 2]));
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		if (!out[i].compared)
			continue;
		out[i].base_step = out[i].p.model_flops /
				   ((double)cluster_gpus(&vc->cluster) *
				    vc->cluster.gpu.peak_tflops[vc->opts.precision] * 1e12 * mfu);
		out[i].base_err = 100.0 * (out[i].base_step - vc->measured_step_s) /
				  vc->measured_step_s;
	}
	free(lg);
	return mfu;
}

/* Leave one source out: fit on the rest from the priors, predict it. */
static enum pplan_status cross_validate(struct vcase *cases, int n, int closed_form,
					struct outcome *out, struct perr *e)
{
	unsigned char *train = calloc((size_t)n, 1), *done = calloc((size_t)n, 1);
	struct fit_options fo;
	enum pplan_status st = PPLAN_OK;

	if (!train || !done) {
		free(train);
		free(done);
		return perr_set(e, PPLAN_ENOMEM, "cross-validation: out of memory");
	}
	fit_options_default(&fo);
	for (int s = 0; s < n && st == PPLAN_OK; s++) {
		struct fit_result fr;
		if (done[s])
			continue;
		for (int i = 0; i < n; i++)
			train[i] = strcmp(cases[i].publication, cases[s].publication) != 0;
		st = fit_run(cases, n, train, NULL, &fo, &fr, e);
		if (st != PPLAN_OK)
			break;
		for (int i = 0; i < n; i++) {
			struct prediction p;
			struct vcase *vc = &cases[i];
			if (train[i])
				continue;
			done[i] = 1;
			if (!vc->predictable || !out[i].compared)
				continue;
			vc->opts.use_des = !closed_form;
			vc->opts.params = &fr.params;
			if (vcase_predict(vc, &p, NULL) == PPLAN_OK) {
				out[i].cv_step = p.step_time_s;
				out[i].cv_err = 100.0 * (p.step_time_s - vc->measured_step_s) /
						vc->measured_step_s;
			}
			vc->opts.params = NULL;
		}
	}
	free(train);
	free(done);
	return st;
}

/* ---- printing ------------------------------------------------------------------ */

static void print_table(const struct vcase *cases, int n, const struct outcome *out)
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
		const struct outcome *r = &out[i];
		char c3[64], c5[16], c6[16], c7[16], c8[16], c9[16], c10[16], c11[16];
		const char *cells[11];
		snprintf(c3, sizeof c3, "%d.%d.%d.%d/%d/%d", vc->layout.tp, vc->layout.pp,
			 vc->layout.dp, vc->layout.cp, vc->layout.mbs, vc->layout.vp);
		cells[0] = vc->id;
		cells[1] = vc->cluster.gpu.name;
		cells[2] = c3;
		cells[3] = !r->compared ? "-" : vc->step_from_throughput ? "tput" : "step";
		cells[4] = table_num(c5, sizeof c5, "%.2f", r->p.step_time_s);
		cells[5] = table_num(c6, sizeof c6, "%.2f", vc->measured_step_s);
		cells[6] = table_num(c7, sizeof c7, "%+.1f", r->err);
		cells[7] = table_num(c8, sizeof c8, "%.1f", r->pmem);
		cells[8] = table_num(c9, sizeof c9, "%.1f", vc->measured_mem_gib);
		cells[9] = table_num(c10, sizeof c10, "%+.1f", r->merr);
		snprintf(c11, sizeof c11, "%s/%s",
			 vc->predictable ? (r->p.feasible ? "n" : "Y") : "-",
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

struct summary {
	struct acc src[MAX_SOURCES], base[MAX_SOURCES], cv[MAX_SOURCES];
	int nsrc;
	struct acc all, half, fp8, mem, base_all, cv_all;
	struct acc base_half, base_fp8, cv_half, cv_fp8;
	int oom_total, oom_agree, npred;
	char reason[MAX_REASONS][256];
	int reason_n[MAX_REASONS], nreason;
	double mfu;
};

static int source_index(struct summary *s, const char *label)
{
	for (int i = 0; i < s->nsrc; i++)
		if (!strcmp(s->src[i].key, label))
			return i;
	if (s->nsrc == MAX_SOURCES)
		return MAX_SOURCES - 1;
	snprintf(s->src[s->nsrc].key, sizeof s->src[0].key, "%s", label);
	snprintf(s->base[s->nsrc].key, sizeof s->base[0].key, "%s", label);
	snprintf(s->cv[s->nsrc].key, sizeof s->cv[0].key, "%s", label);
	return s->nsrc++;
}

static void summarise(const struct vcase *cases, int n, const struct outcome *out,
		      struct summary *s)
{
	snprintf(s->all.key, sizeof s->all.key, "overall");
	snprintf(s->half.key, sizeof s->half.key, "bf16/fp16");
	snprintf(s->fp8.key, sizeof s->fp8.key, "fp8");
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		const struct outcome *r = &out[i];
		if (!vc->predictable) {
			int k;
			for (k = 0; k < s->nreason; k++)
				if (!strcmp(s->reason[k], vc->skip_reason))
					break;
			if (k == s->nreason && k < MAX_REASONS) {
				snprintf(s->reason[k], sizeof s->reason[k], "%s", vc->skip_reason);
				s->nreason++;
			}
			if (k < MAX_REASONS)
				s->reason_n[k]++;
			continue;
		}
		s->npred++;
		if (r->compared) {
			int k = source_index(s, vc->label);
			acc_add(&s->all, r->err);
			acc_add(&s->src[k], r->err);
			int fp8 = vc->opts.precision == PREC_FP8;
			acc_add(fp8 ? &s->fp8 : &s->half, r->err);
			if (isfinite(r->base_err)) {
				acc_add(&s->base_all, r->base_err);
				acc_add(&s->base[k], r->base_err);
				acc_add(fp8 ? &s->base_fp8 : &s->base_half, r->base_err);
			}
			if (isfinite(r->cv_err)) {
				acc_add(&s->cv_all, r->cv_err);
				acc_add(&s->cv[k], r->cv_err);
				acc_add(fp8 ? &s->cv_fp8 : &s->cv_half, r->cv_err);
			}
		}
		if (isfinite(r->merr))
			acc_add(&s->mem, r->merr);
		if (vc->measured_oom || isfinite(vc->measured_mem_gib) || r->compared) {
			s->oom_total++;
			if (!r->p.feasible == !!vc->measured_oom)
				s->oom_agree++;
		}
	}
}

static void print_row(const struct acc *a, const struct acc *base, const struct acc *cv,
		      const struct args *g)
{
	printf("#   %-42s %5d %8.1f %+8.1f", a->key, a->n, acc_mape(a), a->worst);
	if (g->baseline)
		printf(" %9.1f", acc_mape(base));
	if (g->cross_validate)
		printf(" %8.1f %+8.1f", acc_mape(cv), cv->worst);
	printf("\n");
}

static void print_summary(const struct summary *s, int n, const struct args *g)
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
	if (g->baseline)
		printf("# mfu-rule: step = model FLOPs / (GPUs x peak x %.1f %% MFU), the MFU best for this file\n",
		       100.0 * s->mfu);
	if (g->cross_validate)
		printf("# LOSO: leave one source out; each source predicted with constants fitted on the others\n");
	if (s->mem.n)
		printf("# memory MAPE %.1f %% over %d measured peaks (worst %+.1f %%)\n",
		       acc_mape(&s->mem), s->mem.n, s->mem.worst);
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

/* ---- JSON --------------------------------------------------------------------------- */

static cJSON *by_source_json(const struct acc *a, int n)
{
	cJSON *by = cJSON_CreateObject();
	for (int i = 0; i < n; i++) {
		cJSON *o;
		if (!a[i].n)
			continue;
		o = cJSON_AddObjectToObject(by, a[i].key);
		cJSON_AddNumberToObject(o, "step_time_mape_pct", acc_mape(&a[i]));
		cJSON_AddNumberToObject(o, "step_time_worst_pct", a[i].worst);
		cJSON_AddNumberToObject(o, "n", a[i].n);
	}
	return by;
}

static cJSON *case_json(const struct vcase *vc, const struct outcome *r)
{
	cJSON *jc = cJSON_CreateObject();
	cJSON_AddStringToObject(jc, "id", vc->id);
	cJSON_AddStringToObject(jc, "source", vc->label);
	cJSON_AddStringToObject(jc, "framework", vc->framework_given);
	cJSON_AddStringToObject(jc, "gpu", vc->cluster.gpu.name);
	cJSON_AddStringToObject(jc, "gpu_arch", gpu_arch_name(vc->cluster.gpu.arch));
	cJSON_AddStringToObject(jc, "precision", precision_name(vc->opts.precision));
	cJSON_AddBoolToObject(jc, "predicted", vc->predictable);
	if (!vc->predictable)
		cJSON_AddStringToObject(jc, "skip_reason", vc->skip_reason);
	if (vc->warning[0])
		cJSON_AddStringToObject(jc, "warning", vc->warning);
	cJSON_AddStringToObject(jc, "compared", !r->compared ? "none" :
				vc->step_from_throughput ? "throughput" : "step_time");
	json_add_number_or_null(jc, "predicted_step_time_s", r->p.step_time_s);
	json_add_number_or_null(jc, "measured_step_time_s", vc->measured_step_s);
	json_add_number_or_null(jc, "step_time_error_pct", r->err);
	json_add_number_or_null(jc, "measured_tflops_per_gpu", vc->measured_tflops);
	if (vc->step_from_throughput) {
		double pt = vcase_predicted_tflops(vc, &r->p);
		json_add_number_or_null(jc, "predicted_tflops_per_gpu", pt);
		json_add_number_or_null(jc, "throughput_error_pct",
					100.0 * (pt - vc->measured_tflops) / vc->measured_tflops);
	}
	json_add_number_or_null(jc, "predicted_memory_gib", r->pmem);
	json_add_number_or_null(jc, "measured_memory_gib", vc->measured_mem_gib);
	json_add_number_or_null(jc, "memory_error_pct", r->merr);
	if (vc->predictable)
		cJSON_AddBoolToObject(jc, "predicted_oom", !r->p.feasible);
	else
		cJSON_AddNullToObject(jc, "predicted_oom");
	cJSON_AddBoolToObject(jc, "measured_oom", vc->measured_oom);
	json_add_number_or_null(jc, "baseline_step_time_s", r->base_step);
	json_add_number_or_null(jc, "cross_validation_step_time_s", r->cv_step);
	json_add_number_or_null(jc, "cross_validation_error_pct", r->cv_err);
	cJSON_AddStringToObject(jc, "assumed", vc->assumed);
	if (vc->predictable)
		cJSON_AddItemToObject(jc, "prediction", report_prediction_fields(&r->p));
	return jc;
}

static cJSON *summary_json(const struct summary *s, int n, const struct args *g)
{
	cJSON *j = cJSON_CreateObject(), *np;
	json_add_number_or_null(j, "step_time_mape_pct", acc_mape(&s->all));
	json_add_number_or_null(j, "step_time_mape_bf16_fp16_pct", acc_mape(&s->half));
	json_add_number_or_null(j, "step_time_mape_fp8_pct", acc_mape(&s->fp8));
	json_add_number_or_null(j, "step_time_worst_pct", s->all.worst);
	json_add_number_or_null(j, "memory_mape_pct", acc_mape(&s->mem));
	cJSON_AddNumberToObject(j, "n_step_time", s->all.n);
	cJSON_AddNumberToObject(j, "n_memory", s->mem.n);
	cJSON_AddNumberToObject(j, "oom_agreement",
				s->oom_total ? (double)s->oom_agree / s->oom_total : 1.0);
	cJSON_AddNumberToObject(j, "n_cases", n);
	cJSON_AddNumberToObject(j, "n_predicted", s->npred);
	cJSON_AddNumberToObject(j, "predicted_fraction", (double)s->npred / n);
	np = cJSON_AddObjectToObject(j, "not_predicted");
	for (int k = 0; k < s->nreason; k++)
		cJSON_AddNumberToObject(np, s->reason[k], s->reason_n[k]);
	cJSON_AddItemToObject(j, "by_source", by_source_json(s->src, s->nsrc));
	if (g->baseline) {
		cJSON *b = cJSON_AddObjectToObject(j, "baseline");
		cJSON_AddStringToObject(b, "rule", "constant-mfu");
		json_add_number_or_null(b, "mfu", s->mfu);
		json_add_number_or_null(b, "step_time_mape_pct", acc_mape(&s->base_all));
		cJSON_AddItemToObject(b, "by_source", by_source_json(s->base, s->nsrc));
	}
	if (g->cross_validate) {
		cJSON *c = cJSON_AddObjectToObject(j, "cross_validation");
		cJSON_AddStringToObject(c, "by", "source");
		json_add_number_or_null(c, "step_time_mape_pct", acc_mape(&s->cv_all));
		json_add_number_or_null(c, "step_time_worst_pct", s->cv_all.worst);
		cJSON_AddItemToObject(c, "by_source", by_source_json(s->cv, s->nsrc));
	}
	return j;
}

static enum pplan_status write_json(const struct args *g, const struct vcase *cases, int n,
				    const struct outcome *out, const struct summary *s,
				    struct perr *e)
{
	cJSON *doc = cJSON_CreateObject(), *jcases;
	enum pplan_status st;
	cJSON_AddStringToObject(doc, "schema", "pplan.validation/1");
	cJSON_AddStringToObject(doc, "file", g->path);
	if (g->profile)
		cJSON_AddStringToObject(doc, "profile", g->profile);
	else
		cJSON_AddNullToObject(doc, "profile");
	jcases = cJSON_AddArrayToObject(doc, "cases");
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(jcases, case_json(&cases[i], &out[i]));
	cJSON_AddItemToObject(doc, "summary", summary_json(s, n, g));
	st = json_write_atomic(g->json, doc, e);
	cJSON_Delete(doc);
	return st;
}

/* ---- the command ----------------------------------------------------------------------- */

static enum pplan_status load_profile(const struct args *g, const struct vcase *cases, int n,
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
	struct args g;
	struct vcase *cases = NULL;
	struct outcome *out = NULL;
	struct summary *s = NULL;
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
	predict_all(cases, n, g.profile ? &pr.constants : NULL, g.closed_form, out);
	if (g.baseline)
		s->mfu = constant_mfu(cases, n, out);
	if (g.cross_validate && (st = cross_validate(cases, n, g.closed_form, out, &e)) != PPLAN_OK)
		goto done;
	cli_print_provenance(stdout, "validate");
	printf("# cases     %s: %d published runs\n", g.path, n);
	printf("# constants %s\n", g.profile ? g.profile
					  : "embedded (the fit on validation/calibration.json)");
	if (!g.quiet) {
		print_table(cases, n, out);
		print_assumed(cases, n);
	}
	summarise(cases, n, out, s);
	print_summary(s, n, &g);
	if (g.json)
		st = write_json(&g, cases, n, out, s, &e);
done:
	profile_free(&pr);
	free(cases);
	free(out);
	free(s);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
