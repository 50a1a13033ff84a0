/*
 * cmd_search.c: `pplan search`: every layout of a model on a cluster,
 * ranked by predicted step time, with the rejections counted by reason,
 * one line per strategy family, and the Megatron-LM flags of the best.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "jsonio.h"
#include "report.h"
#include "search.h"
#include "table.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan search (--model NAME|FILE | --params N) --gpus N [options]\n\n");
	cli_common_usage(f);
	fprintf(f,
		"  --top K                layouts to print (default 10)\n"
		"  --max-mbs N            largest micro-batch tried (default 16)\n"
		"  --closed-form          rank by the closed-form bubble only (no event simulation)\n"
		"  --list-models          print the zoo and exit\n"
		"  --list-clusters        print the node presets and exit\n"
		"  --list-gpus            print the GPU table and exit\n"
		"  --help                 this text\n");
}

static void list_models(void)
{
	int n;
	const struct model_spec *z = model_zoo(&n);
	printf("#  %-20s %10s %10s %7s %7s %7s %6s %8s %8s %-12s\n", "name", "params",
	       "active", "layers", "hidden", "heads", "kv", "vocab", "seq", "mlp");
	printf("#  %-20s %10s %10s %7s %7s %7s %6s %8s %8s %-12s\n", "", "(B)", "(B)",
	       "", "", "", "", "", "(tokens)", "");
	for (int i = 0; i < n; i++)
		printf("   %-20s %10.2f %10.2f %7d %7ld %7d %6d %8ld %8ld %-12s\n",
		       z[i].name, model_params_total(&z[i]) / 1e9,
		       model_params_active(&z[i]) / 1e9, z[i].layers, z[i].hidden,
		       z[i].heads, z[i].kv_heads, z[i].vocab, z[i].seq,
		       mlp_kind_name(z[i].mlp));
}

static void list_gpus(void)
{
	int n;
	const struct gpu_spec *g = gpu_table(&n);
	printf("#  %-10s %9s %9s %9s %8s %9s %9s  %s\n", "gpu", "bf16", "fp16",
	       "fp8", "memory", "hbm", "nvlink", "description");
	printf("#  %-10s %9s %9s %9s %8s %9s %9s\n", "", "(TFLOP/s)", "(TFLOP/s)",
	       "(TFLOP/s)", "(GiB)", "(GB/s)", "(GB/s)");
	for (int i = 0; i < n; i++) {
		char pk[PREC_COUNT][16];
		for (int p = 0; p < PREC_COUNT; p++) /* "-": no tensor cores for it */
			table_num(pk[p], sizeof pk[p], "%.0f",
				  g[i].peak_tflops[p] > 0 ? g[i].peak_tflops[p] : NAN);
		printf("   %-10s %9s %9s %9s %8.1f %9.0f %9.0f  %s\n", g[i].name,
		       pk[PREC_BF16], pk[PREC_FP16], pk[PREC_FP8], g[i].mem_gib,
		       g[i].hbm_gbps, g[i].nvlink_gbps, g[i].description);
	}
}

static void list_clusters(void)
{
	const char *const *names = cluster_preset_names();
	printf("#  %-10s %-10s %10s %9s %6s %10s\n", "preset", "gpu", "gpus/node",
	       "nvlink", "nics", "net/gpu");
	printf("#  %-10s %-10s %10s %9s %6s %10s\n", "", "", "", "(GB/s)", "",
	       "(GB/s)");
	for (int i = 0; names[i]; i++) {
		struct cluster c;
		cluster_preset(names[i], 0, &c, NULL);
		printf("   %-10s %-10s %10d %9.0f %6d %10.1f\n", names[i], c.gpu.name,
		       c.gpus_per_node, c.nvlink.bw_gbps, c.nics_per_node,
		       c.net.bw_gbps);
	}
}

/* v to 5 significant digits, so that JSON prints it short. */
static double round_sig(double v)
{
	double scale;
	if (v == 0 || !isfinite(v))
		return v;
	scale = pow(10, 4 - floor(log10(fabs(v))));
	return round(v * scale) / scale;
}

static void short_layout(const struct layout *l, char *buf, size_t len)
{
	snprintf(buf, len, "tp%d pp%d dp%d%s%s vp%d mbs%d sp%s %s z%d %s", l->tp,
		 l->pp, l->dp, l->cp > 1 ? " cp" : "",
		 l->cp > 1 ? "" : "", l->vp, l->mbs, l->sp ? "+" : "-",
		 l->recompute == RECOMPUTE_NONE ? "rc-none" :
		 l->recompute == RECOMPUTE_SELECTIVE ? "rc-sel" : "rc-full",
		 l->zero, schedule_name(l->schedule));
	if (l->cp > 1 || l->ep > 1) {
		char tmp[160];
		snprintf(tmp, sizeof tmp, "tp%d pp%d dp%d cp%d ep%d vp%d mbs%d sp%s %s z%d %s",
			 l->tp, l->pp, l->dp, l->cp, l->ep, l->vp, l->mbs,
			 l->sp ? "+" : "-",
			 l->recompute == RECOMPUTE_NONE ? "rc-none" :
			 l->recompute == RECOMPUTE_SELECTIVE ? "rc-sel" : "rc-full",
			 l->zero, schedule_name(l->schedule));
		snprintf(buf, len, "%s", tmp);
	}
}

/* Reasons with a count, most frequent first (ties: the earlier check). */
static int sorted_rejects(const struct search_result *r, enum reject *out)
{
	int n = 0;
	for (int i = REJECT_NONE + 1; i < REJECT_COUNT; i++) {
		int j;
		if (r->rejected[i] <= 0)
			continue;
		for (j = n; j > 0 && r->rejected[out[j - 1]] < r->rejected[i]; j--)
			out[j] = out[j - 1];
		out[j] = (enum reject)i;
		n++;
	}
	return n;
}

static void commas(char *buf, size_t len, long v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%ld", v), o = 0;
	for (int i = 0; i < n && o + 2 < (int)len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

/* Why a family has no member: its binding constraint (search.h) and,
 * when other reasons rejected members too, the next most frequent one,
 * each with its count. */
static void family_reasons(FILE *f, const struct cli_inputs *in,
			   const struct search_family_result *fr)
{
	enum reject second = REJECT_NONE;
	char msg[256], n[32];
	for (int r = REJECT_NONE + 1; r < REJECT_COUNT; r++)
		if (r != (int)fr->why && fr->rejected[r] > 0 &&
		    (second == REJECT_NONE || fr->rejected[r] > fr->rejected[second]))
			second = (enum reject)r;
	commas(n, sizeof n, fr->rejected[fr->why]);
	fprintf(f, "%s", fr->why_msg);
	if (second != REJECT_NONE) {
		char n2[32];
		reject_describe(second, &fr->witness[second], &in->model,
				cluster_gpus(&in->cluster), msg, sizeof msg);
		commas(n2, sizeof n2, fr->rejected[second]);
		fprintf(f, " (%s %s); %s (%s)", n,
			fr->rejected[fr->why] == 1 ? "layout" : "layouts", msg, n2);
	}
	fprintf(f, "\n");
}

int cmd_search(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{ "top", required_argument, NULL, 't' },
		{ "max-mbs", required_argument, NULL, 'b' },
		{ "list-models", no_argument, NULL, 'M' },
		{ "list-clusters", no_argument, NULL, 'C' },
		{ "list-gpus", no_argument, NULL, 'G' },
		{ "closed-form", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct table_col cols[] = {
		{ "rank", "", 4, 0 }, { "layout", "", 58, 1 },
		{ "step", "(s)", 8, 0 }, { "tokens/s", "(tok/s)", 10, 0 },
		{ "TFLOP/s", "(/GPU)", 7, 0 }, { "MFU", "(%)", 5, 0 },
		{ "bubble", "(%)", 6, 0 }, { "memory", "(GiB)", 6, 0 },
		{ "compute", "(s)", 7, 0 }, { "recomp", "(s)", 6, 0 },
		{ "tp", "(s)", 6, 0 }, { "pp", "(s)", 6, 0 },
		{ "dp_exp", "(s)", 6, 0 }, { "bubble", "(s)", 6, 0 },
	};
	int ncols = (int)(sizeof cols / sizeof cols[0]);
	struct cli_inputs in;
	struct perr e = { { 0 } };
	struct search_params sp;
	struct search_result r;
	enum pplan_status st;
	long v;
	int c, closed_form = 0, n_rej;
	enum reject rej[REJECT_COUNT];
	char buf[64];

	cli_inputs_init(&in);
	search_params_default(&sp);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int rr;
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'M': list_models(); return 0;
		case 'C': list_clusters(); return 0;
		case 'G': list_gpus(); return 0;
		case 'F': closed_form = 1; continue;
		case 't':
			if (cli_parse_long(optarg, &v) != 0 || v > 1000) {
				fprintf(stderr, "pplan: --top must be a whole number from 1 to 1000, got '%s'\n",
					optarg);
				return 2;
			}
			sp.top_k = (int)v;
			continue;
		case 'b':
			if (cli_parse_long(optarg, &v) != 0 || v > 1024) {
				fprintf(stderr, "pplan: --max-mbs must be a whole number from 1 to 1024, got '%s'\n",
					optarg);
				return 2;
			}
			sp.max_mbs = (int)v;
			continue;
		default: break;
		}
		rr = cli_common_option(&in, c, optarg, &e);
		if (rr < 0)
			return cli_fail(PPLAN_EINPUT, &e);
		if (rr == 0) {
			fprintf(stderr, "pplan search: unknown or incomplete option '%s' (see pplan search --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pplan search: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	st = cli_resolve(&in, 1, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	sp.gbs = in.global_batch;
	sp.keep_points = in.json_path != NULL;
	in.opts.use_des = !closed_form;
	st = search_run(&in.model, &in.cluster, &in.opts, &sp, &r, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);

	cli_print_config(stdout, "search", &in);
	{
		char ev[32], fe[32];
		commas(ev, sizeof ev, r.evaluated);
		commas(fe, sizeof fe, r.feasible);
		printf("# evaluated %s layouts in %.3f s (%.0f layouts/s); %s fit in memory\n",
		       ev, r.seconds, r.seconds > 0 ? r.evaluated / r.seconds : 0.0, fe);
	}
	n_rej = sorted_rejects(&r, rej);
	printf("# rejected:");
	for (int i = 0; i < n_rej; i++) {
		commas(buf, sizeof buf, r.rejected[rej[i]]);
		printf("%s %s %s", i ? "," : "", buf, reject_key(rej[i]));
	}
	printf("%s\n#\n", n_rej ? "" : " none");

	if (r.n_top == 0) {
		printf("no layout fits: see the strategy families below\n");
	} else {
		table_header(stdout, cols, ncols);
		for (int i = 0; i < r.n_top; i++) {
			const struct prediction *p = &r.top_preds[i];
			char cells[14][64];
			const char *cp[14];
			snprintf(cells[0], 64, "%d", i + 1);
			short_layout(&r.top_layouts[i], cells[1], 64);
			snprintf(cells[2], 64, "%.3f", p->step_time_s);
			snprintf(cells[3], 64, "%.0f", p->tokens_per_s);
			snprintf(cells[4], 64, "%.0f", p->tflops_per_gpu);
			snprintf(cells[5], 64, "%.1f", 100 * p->mfu);
			snprintf(cells[6], 64, "%.1f", 100 * p->bubble_fraction);
			snprintf(cells[7], 64, "%.1f", p->mem.total / GIB);
			snprintf(cells[8], 64, "%.2f", p->time.compute);
			snprintf(cells[9], 64, "%.2f", p->time.recompute);
			snprintf(cells[10], 64, "%.2f", p->time.tp_comm + p->time.cp_comm +
							   p->time.ep_comm);
			snprintf(cells[11], 64, "%.2f", p->time.pp_comm);
			snprintf(cells[12], 64, "%.2f", p->time.dp_comm_exposed);
			snprintf(cells[13], 64, "%.2f", p->time.bubble);
			for (int k = 0; k < 14; k++)
				cp[k] = cells[k];
			table_row(stdout, cols, ncols, cp);
		}
	}

	printf("\nStrategy families (best member, or why none works):\n");
	for (int f = 0; f < FAM_COUNT; f++) {
		const struct search_family_result *fr = &r.family[f];
		char lb[128];
		if (fr->found) {
			short_layout(&fr->layout, lb, sizeof lb);
			printf("  %-15s %8.3f s  %5.1f %% MFU  %5.1f GiB  %s",
			       family_name((enum family)f), fr->pred.step_time_s,
			       100 * fr->pred.mfu, fr->pred.mem.total / GIB, lb);
			if (r.n_top > 0 && fr->pred.step_time_s > r.top_preds[0].step_time_s)
				printf("  (%.2fx the best)",
				       fr->pred.step_time_s / r.top_preds[0].step_time_s);
			printf("\n");
		} else if (fr->any_oom) {
			printf("  %-15s none fits: needs %.1f GiB per GPU, has %.1f\n",
			       family_name((enum family)f), fr->min_oom_bytes / GIB,
			       in.opts.max_memory_gib > 0 ? in.opts.max_memory_gib
							  : in.cluster.gpu.mem_gib);
		} else if (fr->why != REJECT_NONE) {
			printf("  %-15s impossible: ", family_name((enum family)f));
			family_reasons(stdout, &in, fr);
		} else {
			printf("  %-15s not enumerated for %ld GPUs\n",
			       family_name((enum family)f), cluster_gpus(&in.cluster));
		}
	}
	if (r.n_top == 0) {
		double need = -1;
		for (int f = 0; f < FAM_COUNT; f++)
			if (r.family[f].any_oom &&
			    (need < 0 || r.family[f].min_oom_bytes < need))
				need = r.family[f].min_oom_bytes;
		if (need > 0)
			fprintf(stderr, "pplan: no layout of %s fits on %ld GPUs: the smallest needs %.1f GiB per GPU, a %s has %.1f\n",
				in.model.name, cluster_gpus(&in.cluster), need / GIB,
				in.cluster.gpu.name,
				in.opts.max_memory_gib > 0 ? in.opts.max_memory_gib
							   : in.cluster.gpu.mem_gib);
		else
			fprintf(stderr, "pplan: no valid layout of %s on %ld GPUs (see the strategy families above)\n",
				in.model.name, cluster_gpus(&in.cluster));
		search_free(&r);
		return 2;
	}
	if (r.n_top > 0) {
		char lb[256];
		layout_format(&r.top_layouts[0], lb, sizeof lb);
		printf("\nBest layout: %s\n", lb);
		printf("  predict it: pplan predict --model %s --gpus %ld --layout %s\n",
		       in.model.name, cluster_gpus(&in.cluster), lb);
		printf("Megatron-LM flags:\n");
		report_megatron_flags(stdout, &in.model, &r.top_layouts[0], &in.opts);
	}

	if (in.json_path) {
		cJSON *doc = cJSON_CreateObject(), *jrej, *arr;
		cJSON_AddStringToObject(doc, "schema", "pplan.search/1");
		cJSON_AddItemToObject(doc, "model", report_model_json(&in.model));
		cJSON_AddItemToObject(doc, "cluster", report_cluster_json(&in.cluster));
		cJSON_AddNumberToObject(doc, "global_batch", (double)in.global_batch);
		cJSON_AddNumberToObject(doc, "seq_length", (double)in.opts.seq);
		cJSON_AddStringToObject(doc, "precision", precision_name(in.opts.precision));
		cJSON_AddItemToObject(doc, "framework", report_framework_json(&in.opts));
		cJSON_AddNumberToObject(doc, "evaluated", (double)r.evaluated);
		cJSON_AddNumberToObject(doc, "feasible", (double)r.feasible);
		cJSON_AddNumberToObject(doc, "search_time_s", r.seconds);
		jrej = cJSON_AddObjectToObject(doc, "rejected");
		for (int i = 0; i < n_rej; i++)
			cJSON_AddNumberToObject(jrej, reject_key(rej[i]),
						(double)r.rejected[rej[i]]);
		arr = cJSON_AddArrayToObject(doc, "layouts");
		for (int i = 0; i < r.n_top; i++) {
			cJSON *it = report_prediction_fields(&r.top_preds[i]);
			cJSON_AddItemToObject(it, "layout",
					      report_layout_json(&r.top_layouts[i], &in.opts));
			cJSON_AddItemToArray(arr, it);
		}
		arr = cJSON_AddObjectToObject(doc, "families");
		for (int f = 0; f < FAM_COUNT; f++) {
			const struct search_family_result *fr = &r.family[f];
			cJSON *it = cJSON_AddObjectToObject(arr, family_name((enum family)f));
			cJSON_AddBoolToObject(it, "found", fr->found);
			if (fr->found) {
				cJSON_AddItemToObject(it, "layout",
						      report_layout_json(&fr->layout, &in.opts));
				cJSON_AddNumberToObject(it, "step_time_s", fr->pred.step_time_s);
				cJSON_AddNumberToObject(it, "mfu", fr->pred.mfu);
				cJSON_AddNumberToObject(it, "memory_gib", fr->pred.mem.total / GIB);
			} else if (fr->any_oom) {
				cJSON_AddNumberToObject(it, "min_memory_gib", fr->min_oom_bytes / GIB);
			} else {
				cJSON_AddStringToObject(it, "why", fr->why_msg);
			}
		}
		/* Every priced layout, for `pplan report html`'s plot: compact
		 * rows named by point_fields (family: the index in families). */
		cJSON_AddNumberToObject(doc, "memory_cap_gib",
					in.opts.max_memory_gib > 0 ? in.opts.max_memory_gib
								   : in.cluster.gpu.mem_gib);
		arr = cJSON_AddArrayToObject(doc, "point_fields");
		cJSON_AddItemToArray(arr, cJSON_CreateString("step_time_s"));
		cJSON_AddItemToArray(arr, cJSON_CreateString("memory_gib"));
		cJSON_AddItemToArray(arr, cJSON_CreateString("feasible"));
		cJSON_AddItemToArray(arr, cJSON_CreateString("family"));
		arr = cJSON_AddArrayToObject(doc, "family_names");
		for (int f = 0; f < FAM_COUNT; f++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(family_name((enum family)f)));
		cJSON_AddBoolToObject(doc, "points_incomplete", r.points_incomplete);
		arr = cJSON_AddArrayToObject(doc, "points");
		for (long i = 0; i < r.n_points; i++) {
			const struct search_point *pt = &r.points[i];
			double row[4] = { round_sig(pt->step_time_s), round_sig(pt->mem_gib),
					  pt->feasible, pt->family };
			cJSON_AddItemToArray(arr, cJSON_CreateDoubleArray(row, 4));
		}
		st = json_write_atomic(in.json_path, doc, &e);
		cJSON_Delete(doc);
		if (st != PPLAN_OK) {
			search_free(&r);
			return cli_fail(st, &e);
		}
	}
	search_free(&r);
	return 0;
}
