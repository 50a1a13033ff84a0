/*
 * cmd_validate.c: `pplan validate FILE`: predicts every published run of
 * a pplan.cases/1 file and prints predicted against measured step time
 * and memory, the error per case, the defaults assumed for null fields,
 * and the mean absolute percentage error by source and overall.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "cli.h"
#include "cli_common.h"
#include "jsonio.h"
#include "predict.h"
#include "report.h"
#include "table.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan validate FILE [--json OUT] [--quiet]\n\n"
		"  FILE         published runs in pplan.cases/1 (e.g. validation/calibration.json)\n"
		"  --json OUT   write pplan.validation/1\n"
		"  --quiet      only the summary\n"
		"  --closed-form  pipeline bubble from the closed forms, not the event simulation\n");
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

static struct acc *acc_find(struct acc *arr, int *n, const char *key)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(arr[i].key, key))
			return &arr[i];
	memset(&arr[*n], 0, sizeof arr[*n]);
	snprintf(arr[*n].key, sizeof arr[*n].key, "%s", key);
	return &arr[(*n)++];
}

int cmd_validate(int argc, char **argv)
{
	const char *path = NULL, *json = NULL;
	int quiet = 0, closed_form = 0;
	struct vcase *cases = NULL;
	int n = 0, nsrc = 0;
	struct acc src[64], all = { "all", 0, 0, 0 }, half = { "bf16/fp16", 0, 0, 0 },
			    fp8 = { "fp8", 0, 0, 0 }, mem = { "memory", 0, 0, 0 };
	int oom_total = 0, oom_agree = 0;
	struct perr e = { { 0 } };
	enum pplan_status st;
	cJSON *doc = NULL, *jcases = NULL;
	static const struct table_col cols[] = {
		{ "case", "", 44, 1 }, { "gpu", "", 9, 1 },
		{ "layout", "(tp.pp.dp.cp/mbs/vp)", 22, 1 },
		{ "pred", "(s)", 8, 0 }, { "meas", "(s)", 8, 0 },
		{ "err", "(%)", 6, 0 }, { "pred_mem", "(GiB)", 8, 0 },
		{ "meas_mem", "(GiB)", 8, 0 }, { "err", "(%)", 6, 0 },
		{ "oom", "(p/m)", 5, 1 },
	};
	int ncols = (int)(sizeof cols / sizeof cols[0]);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "--closed-form")) {
			closed_form = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "pplan validate: unknown or incomplete option '%s' (see --help)\n",
				argv[i]);
			return 2;
		} else if (path) {
			fprintf(stderr, "pplan validate: one FILE only ('%s' and '%s')\n",
				path, argv[i]);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	if (json && (st = output_check(json, "--json", &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	st = cases_load(path, &cases, &n, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);

	if (json) {
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "schema", "pplan.validation/1");
		cJSON_AddStringToObject(doc, "file", path);
		jcases = cJSON_AddArrayToObject(doc, "cases");
	}
	cli_print_provenance(stdout, "validate");
	printf("# cases     %s: %d published runs\n", path, n);
	if (!quiet)
		table_header(stdout, cols, ncols);
	for (int i = 0; i < n; i++) {
		struct vcase *vc = &cases[i];
		struct prediction p;
		double err = NAN, merr = NAN, pmem = NAN;
		char c3[64], c4[16], c5[16], c6[16], c7[16], c8[16], c9[16], c10[16];
		const char *cells[10];

		memset(&p, 0, sizeof p);
		p.step_time_s = NAN;
		if (vc->predictable) {
			vc->opts.use_des = !closed_form;
			st = vcase_predict(vc, &p, &e);
			if (st != PPLAN_OK) {
				vc->predictable = 0;
				snprintf(vc->skip_reason, sizeof vc->skip_reason,
					 "%s", e.msg);
				p.step_time_s = NAN;
			} else {
				pmem = p.mem.total / GIB;
			}
		}
		if (vc->predictable && isfinite(vc->measured_step_s)) {
			err = 100.0 * (p.step_time_s - vc->measured_step_s) /
			      vc->measured_step_s;
			acc_add(&all, err);
			acc_add(acc_find(src, &nsrc, vc->label), err);
			if (vc->opts.precision == PREC_FP8)
				acc_add(&fp8, err);
			else
				acc_add(&half, err);
		}
		if (vc->predictable && isfinite(vc->measured_mem_gib)) {
			merr = 100.0 * (pmem - vc->measured_mem_gib) / vc->measured_mem_gib;
			acc_add(&mem, merr);
		}
		if (vc->predictable && (vc->measured_oom || isfinite(vc->measured_mem_gib) ||
					isfinite(vc->measured_step_s))) {
			oom_total++;
			if (!p.feasible == !!vc->measured_oom)
				oom_agree++;
		}
		snprintf(c3, sizeof c3, "%d.%d.%d.%d/%d/%d", vc->layout.tp,
			 vc->layout.pp, vc->layout.dp, vc->layout.cp,
			 vc->layout.mbs, vc->layout.vp);
		cells[0] = vc->id;
		cells[1] = vc->cluster.gpu.name;
		cells[2] = c3;
		cells[3] = table_num(c4, sizeof c4, "%.2f", p.step_time_s);
		cells[4] = table_num(c5, sizeof c5, "%.2f", vc->measured_step_s);
		cells[5] = table_num(c6, sizeof c6, "%+.1f", err);
		cells[6] = table_num(c7, sizeof c7, "%.1f", pmem);
		cells[7] = table_num(c8, sizeof c8, "%.1f", vc->measured_mem_gib);
		cells[8] = table_num(c9, sizeof c9, "%+.1f", merr);
		snprintf(c10, sizeof c10, "%s/%s",
			 vc->predictable ? (p.feasible ? "n" : "Y") : "-",
			 vc->measured_oom ? "Y" : "n");
		cells[9] = c10;
		if (!quiet)
			table_row(stdout, cols, ncols, cells);
		if (jcases) {
			cJSON *jc = cJSON_CreateObject();
			cJSON_AddStringToObject(jc, "id", vc->id);
			cJSON_AddStringToObject(jc, "source", vc->label);
			cJSON_AddBoolToObject(jc, "predicted", vc->predictable);
			if (!vc->predictable)
				cJSON_AddStringToObject(jc, "skip_reason", vc->skip_reason);
			json_add_number_or_null(jc, "predicted_step_time_s", p.step_time_s);
			json_add_number_or_null(jc, "measured_step_time_s", vc->measured_step_s);
			json_add_number_or_null(jc, "step_time_error_pct", err);
			json_add_number_or_null(jc, "predicted_memory_gib", pmem);
			json_add_number_or_null(jc, "measured_memory_gib", vc->measured_mem_gib);
			json_add_number_or_null(jc, "memory_error_pct", merr);
			if (vc->predictable)
				cJSON_AddBoolToObject(jc, "predicted_oom", !p.feasible);
			else
				cJSON_AddNullToObject(jc, "predicted_oom");
			cJSON_AddBoolToObject(jc, "measured_oom", vc->measured_oom);
			cJSON_AddStringToObject(jc, "assumed", vc->assumed);
			if (vc->predictable)
				cJSON_AddItemToObject(jc, "prediction",
						      report_prediction_fields(&p));
			cJSON_AddItemToArray(jcases, jc);
		}
	}

	if (!quiet) {
		printf("#\n# defaults assumed for null fields, and cases not predicted:\n");
		for (int i = 0; i < n; i++) {
			if (!cases[i].predictable)
				printf("#   %-44s not predicted: %s\n", cases[i].id,
				       cases[i].skip_reason);
			else if (cases[i].assumed[0])
				printf("#   %-44s %s\n", cases[i].id, cases[i].assumed);
		}
	}
	printf("#\n# summary: mean absolute percentage error (MAPE) of step time\n");
	printf("#   %-18s %6s %10s %12s\n", "source", "cases", "MAPE (%)", "worst (%)");
	for (int i = 0; i < nsrc; i++)
		printf("#   %-18s %6d %10.1f %+12.1f\n", src[i].key, src[i].n,
		       src[i].sum_abs / src[i].n, src[i].worst);
	if (half.n)
		printf("#   %-18s %6d %10.1f %+12.1f\n", half.key, half.n,
		       half.sum_abs / half.n, half.worst);
	if (fp8.n)
		printf("#   %-18s %6d %10.1f %+12.1f\n", fp8.key, fp8.n,
		       fp8.sum_abs / fp8.n, fp8.worst);
	printf("#   %-18s %6d %10.1f %+12.1f\n", "overall", all.n,
	       all.n ? all.sum_abs / all.n : NAN, all.worst);
	if (mem.n)
		printf("# memory MAPE %.1f %% over %d measured peaks (worst %+.1f %%)\n",
		       mem.sum_abs / mem.n, mem.n, mem.worst);
	printf("# out-of-memory verdicts agree with the source in %d of %d cases\n",
	       oom_agree, oom_total);
	{
		int npred = 0;
		for (int i = 0; i < n; i++)
			npred += cases[i].predictable;
		printf("# %d of %d cases predicted (%.0f %%); %d not predicted, each with its reason above\n",
		       npred, n, 100.0 * npred / n, n - npred);
	}

	if (doc) {
		cJSON *s = cJSON_AddObjectToObject(doc, "summary");
		cJSON *by = cJSON_AddObjectToObject(s, "by_source");
		json_add_number_or_null(s, "step_time_mape_pct",
					all.n ? all.sum_abs / all.n : NAN);
		json_add_number_or_null(s, "step_time_mape_bf16_fp16_pct",
					half.n ? half.sum_abs / half.n : NAN);
		json_add_number_or_null(s, "step_time_mape_fp8_pct",
					fp8.n ? fp8.sum_abs / fp8.n : NAN);
		json_add_number_or_null(s, "step_time_worst_pct", all.worst);
		json_add_number_or_null(s, "memory_mape_pct",
					mem.n ? mem.sum_abs / mem.n : NAN);
		cJSON_AddNumberToObject(s, "n_step_time", all.n);
		cJSON_AddNumberToObject(s, "n_memory", mem.n);
		cJSON_AddNumberToObject(s, "oom_agreement",
					oom_total ? (double)oom_agree / oom_total : 1.0);
		for (int i = 0; i < nsrc; i++) {
			cJSON *o = cJSON_AddObjectToObject(by, src[i].key);
			cJSON_AddNumberToObject(o, "step_time_mape_pct",
						src[i].sum_abs / src[i].n);
			cJSON_AddNumberToObject(o, "n", src[i].n);
		}
		st = json_write_atomic(json, doc, &e);
		cJSON_Delete(doc);
		if (st != PPLAN_OK) {
			free(cases);
			return cli_fail(st, &e);
		}
	}
	free(cases);
	return 0;
}
