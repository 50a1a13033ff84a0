/*
 * cmd_search.c: `pplan search`: every layout of a model on a cluster,
 * ranked by predicted step time, with the rejections counted by reason,
 * one line per strategy family, the command that predicts the best one,
 * and its launch configuration (Megatron-LM flags, or --emit FORMAT).
 * Text goes to stdout unless --json - or --emit take it for themselves.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "defaults.h"
#include "emit.h"
#include "jsonio.h"
#include "predict.h"
#include "report.h"
#include "search.h"
#include "search_out.h"
#include "table.h"
#include "units.h"


struct search_args {
	struct search_params sp;
	int closed_form;
	const char *csv_path;
	int emit;                 /* 1: print the config of emit_fmt only */
	enum emit_format emit_fmt;
};

static void usage(FILE *f)
{
	struct search_params d;
	search_params_default(&d);
	fprintf(f,
		"usage: pplan search (--model NAME|FILE | --params N) (--gpus N | --nodes N) [options]\n\n");
	cli_common_usage(f);
	fprintf(f,
		"  --top K                layouts to print (default %d)\n"
		"  --max-mbs N            largest micro-batch tried (default %d)\n"
		"  --closed-form          rank by the closed-form bubble only (no event simulation)\n"
		CLI_RANK_TOLERANCE_USAGE
		"  --csv FILE             write the ranked layouts as CSV\n"
		"  --emit FORMAT          print only the best layout's launch config: megatron, nemo,\n"
		"                         bridge, torchtitan or deepspeed\n"
		"  --list-models          print the zoo and exit\n"
		"  --list-clusters        print the node presets and exit\n"
		"  --list-gpus            print the GPU table and exit\n"
		"  --help                 this text\n"
		"\nSearched: tp x pp x cp x ep x vp (up to %d) x micro-batch x sp x recomputation x ZeRO x\n"
		"schedule, under rank orders tp-cp-dp-pp and tp-cp-pp-dp (Megatron-LM's --use-tp-pp-dp-mapping);\n"
		"cp up to %d, only where each rank keeps %ld tokens or more of the sequence, unless nothing fits without.\n"
		"Pipelines in Megatron and torchtitan: the stage cut too (lighter first and last stages, the\n"
		"embedding and the loss as layers), where one beats the default cut by 1 %%.\n",
		d.top_k, d.max_mbs, 100 * d.tolerance, d.max_vp, d.max_cp, d.cp_min_tokens);
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
	printf("#  %-10s %9s %9s %9s %9s %8s %9s %9s  %s\n", "gpu", "bf16", "fp16",
	       "fp8", "fp4", "memory", "hbm", "nvlink", "description");
	printf("#  %-10s %9s %9s %9s %9s %8s %9s %9s\n", "", "(TFLOP/s)", "(TFLOP/s)",
	       "(TFLOP/s)", "(TFLOP/s)", "(GiB)", "(GB/s)", "(GB/s)");
	for (int i = 0; i < n; i++) {
		char pk[PREC_COUNT][16], fp4[16];
		for (int p = 0; p < PREC_COUNT; p++) /* "-": no tensor cores for it */
			table_num(pk[p], sizeof pk[p], "%.0f",
				  g[i].peak_tflops[p] > 0 ? g[i].peak_tflops[p] : NAN);
		table_num(fp4, sizeof fp4, "%.0f", g[i].fp4_tflops > 0 ? g[i].fp4_tflops : NAN);
		printf("   %-10s %9s %9s %9s %9s %8.1f %9.0f %9.0f  %s\n", g[i].name,
		       pk[PREC_BF16], pk[PREC_FP16], pk[PREC_FP8], fp4, g[i].mem_gib,
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

static void commas(char *buf, size_t len, long v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%ld", v), o = 0;
	for (int i = 0; i < n && o + 2 < (int)len; i++) {
		if (i > 0 && (n - i) % 3 == 0 && tmp[i - 1] != '-')
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

static const char *plural(long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Why a family has no member: its binding constraint (search.h) and,
 * when other reasons rejected members too, the next most frequent one,
 * each with its count. */
static void family_reasons(FILE *f, const struct job *in,
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
	if (fr->why == REJECT_DP_GBS)
		fprintf(f, " (a larger --global-batch allows it)");
	if (second != REJECT_NONE) {
		char n2[32];
		reject_describe(second, &fr->witness[second], &in->model,
				cluster_gpus(&in->cluster), msg, sizeof msg);
		commas(n2, sizeof n2, fr->rejected[second]);
		fprintf(f, " (%s %s); %s (%s)", n,
			plural(fr->rejected[fr->why], "layout", "layouts"), msg, n2);
	}
	fprintf(f, "\n");
}

static double mem_cap(const struct job *in)
{
	return in->opts.max_memory_gib > 0 ? in->opts.max_memory_gib
					   : in->cluster.gpu.mem_gib;
}

/* ---- the command line ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct job *in,
		      struct search_args *a, int *rc)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{ "top", required_argument, NULL, 't' },
		{ "max-mbs", required_argument, NULL, 'b' },
		{ "list-models", no_argument, NULL, 'M' },
		{ "list-clusters", no_argument, NULL, 'C' },
		{ "list-gpus", no_argument, NULL, 'G' },
		{ "closed-form", no_argument, NULL, 'F' },
		{ "rank-tolerance", required_argument, NULL, 'T' },
		{ "csv", required_argument, NULL, 'c' },
		{ "emit", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perr e = { { 0 } };
	long v;
	int c;

	optind = 1;
	opterr = 0;
	*rc = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int r;
		switch (c) {
		case 'h': usage(stdout); *rc = 0; return -1;
		case 'M': list_models(); *rc = 0; return -1;
		case 'C': list_clusters(); *rc = 0; return -1;
		case 'G': list_gpus(); *rc = 0; return -1;
		case 'F': a->closed_form = 1; continue;
		case 'T':
			if (cli_parse_rank_tolerance("search", optarg, &a->sp.tolerance) < 0)
				return -1;
			continue;
		case 'c':
			if (output_check(optarg, "--csv", &e) != PPLAN_OK) {
				*rc = cli_fail(PPLAN_EINPUT, &e);
				return -1;
			}
			a->csv_path = optarg;
			continue;
		case 'e':
			if (emit_format_parse(optarg, &a->emit_fmt) != 0) {
				fprintf(stderr, "pplan search: --emit must be megatron, nemo, bridge, torchtitan or deepspeed, got '%s'\n",
					optarg);
				return -1;
			}
			a->emit = 1;
			continue;
		case 't':
			if (units_parse_whole(optarg, &v) != 0 || v > 1000) {
				fprintf(stderr, "pplan: --top must be a whole number from 1 to 1000, got '%s'\n",
					optarg);
				return -1;
			}
			a->sp.top_k = (int)v;
			continue;
		case 'b':
			if (units_parse_whole(optarg, &v) != 0 || v > 1024) {
				fprintf(stderr, "pplan: --max-mbs must be a whole number from 1 to 1024, got '%s'\n",
					optarg);
				return -1;
			}
			a->sp.max_mbs = (int)v;
			continue;
		default: break;
		}
		r = cli_common_option(in, c, optarg, &e);
		if (r < 0) {
			*rc = cli_fail(PPLAN_EINPUT, &e);
			return -1;
		}
		if (r == 0) {
			fprintf(stderr, "pplan search: unknown or incomplete option '%s' (see pplan search --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pplan search: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (a->emit && in->json_path && strcmp(in->json_path, "-") == 0) {
		fprintf(stderr, "pplan search: --emit and --json - conflict: both want stdout to themselves\n");
		return -1;
	}
	if (a->emit && in->lora_rank > 0 && emit_peft_unsupported(a->emit_fmt)) {
		fprintf(stderr, "pplan search: --emit %s and --peft lora conflict: %s; --emit nemo or --emit bridge writes a LoRA fine-tuning recipe\n",
			emit_format_name(a->emit_fmt), emit_peft_unsupported(a->emit_fmt));
		return -1;
	}
	return 0;
}

/* ---- the report ---------------------------------------------------------------- */

static void print_header(FILE *f, const struct job *in,
			 const struct search_args *a, const struct search_result *r)
{
	enum reject rej[REJECT_COUNT];
	int n_rej = search_rejects_sorted(r, rej);
	char ev[32], fe[32], buf[32];

	cli_print_config(f, "search", in);
	if (in->order_arg)
		fprintf(f, "# search    rank order %s (--rank-order)", in->order_arg);
	else
		fprintf(f, "# search    rank orders tp-cp-dp-pp and tp-cp-pp-dp");
	fprintf(f, ", micro-batches up to %d, vp up to %d, cp up to %d where each rank keeps %ld tokens or more%s; %s pipeline\n",
		a->sp.max_mbs, a->sp.max_vp, a->sp.max_cp, a->sp.cp_min_tokens,
		r->cp_widened ? " (widened: nothing fit without short-sequence cp)" : "",
		a->closed_form ? "closed-form" : "simulated");
	commas(ev, sizeof ev, r->evaluated);
	commas(fe, sizeof fe, r->feasible);
	fprintf(f, "# evaluated %s %s in %.3f s (%.0f layouts/s); %s fit in memory\n",
		ev, plural(r->evaluated, "layout", "layouts"), r->seconds,
		r->seconds > 0 ? r->evaluated / r->seconds : 0.0, fe);
	cli_print_ranking(f, in, a->sp.tolerance, r);
	fprintf(f, "# rejected:");
	for (int i = 0; i < n_rej; i++) {
		commas(buf, sizeof buf, r->rejected[rej[i]]);
		fprintf(f, "%s %s %s", i ? "," : "", buf, reject_key(rej[i]));
	}
	fprintf(f, "%s\n#\n", n_rej ? "" : " none");
}

static const struct table_col cols[] = {
	{ "rank", "", 4, 0 }, { "layout", "", 62, 1 },
	{ "step", "(s)", 8, 0 }, { "tokens/s", "(tok/s)", 10, 0 },
	{ "TFLOP/s", "(/GPU)", 7, 0 }, { "MFU", "(%)", 5, 0 },
	{ "memory", "(GiB)", 6, 0 }, { "compute", "(s)", 7, 0 },
	{ "recomp", "(s)", 6, 0 }, { "tp/cp/ep", "(s)", 8, 0 },
	{ "pp", "(s)", 6, 0 }, { "dp_exp", "(s)", 6, 0 },
	{ "bubble_time", "(s)", 11, 0 }, { "bubble_frac", "(%)", 11, 0 },
};
enum { NCOLS = sizeof cols / sizeof cols[0] };

static void print_table(FILE *f, const struct job *in, const struct search_result *r)
{
	int flagged = 0;
	table_header(f, cols, NCOLS);
	for (int i = 0; i < r->n_top; i++) {
		const struct prediction *p = &r->top_preds[i];
		char cells[NCOLS][96];
		const char *cp[NCOLS];
		snprintf(cells[0], 96, "%d", i + 1);
		cli_short_layout(&r->top_layouts[i], &r->top_orders[i], cells[1], 96);
		snprintf(cells[2], 96, "%.3f", p->step_time_s);
		snprintf(cells[3], 96, "%.0f", p->tokens_per_s);
		/* CPU ranks run at a fraction of a TFLOP/s: digits, not 0 */
		snprintf(cells[4], 96, p->tflops_per_gpu < 10 ? "%.3g" : "%.0f", p->tflops_per_gpu);
		cli_mfu_cell(cells[5], 96, in, p->mfu);
		flagged |= strchr(cells[5], '!') != NULL;
		snprintf(cells[6], 96, "%.1f", p->mem.total / GIB);
		snprintf(cells[7], 96, "%.2f", p->time.compute);
		snprintf(cells[8], 96, "%.2f", p->time.recompute);
		snprintf(cells[9], 96, "%.2f", p->time.tp_comm + p->time.cp_comm +
						   p->time.ep_comm);
		snprintf(cells[10], 96, "%.2f", p->time.pp_comm);
		snprintf(cells[11], 96, "%.2f", p->time.dp_comm_exposed);
		snprintf(cells[12], 96, "%.2f", p->time.bubble);
		snprintf(cells[13], 96, "%.1f", 100 * p->bubble_fraction);
		for (int k = 0; k < NCOLS; k++)
			cp[k] = cells[k];
		table_row(f, cols, NCOLS, cp);
	}
	if (flagged)
		fprintf(f, "# !: an MFU above the best published for this GPU and precision (# accuracy): read it as optimistic\n");
	fprintf(f, "# bubble_time: the pipeline's fill and drain on the critical path; bubble_frac: the mean share of\n"
		   "# the pipeline span in which a stage computes nothing (docs/design.md), so the two need not agree\n");
}

static void print_families(FILE *f, const struct job *in,
			   const struct search_result *r)
{
	fprintf(f, "\nStrategy families (best member, or why none works):\n");
	for (int fi = 0; fi < FAM_COUNT; fi++) {
		const struct search_family_result *fr = &r->family[fi];
		char lb[128];
		if (fr->found) {
			cli_short_layout(&fr->layout, &fr->order, lb, sizeof lb);
			char mfu[16];
			cli_mfu_cell(mfu, sizeof mfu, in, fr->pred.mfu);
			fprintf(f, "  %-15s %8.3f s  %5s %% MFU  %5.1f GiB  %s",
				family_name((enum family)fi), fr->pred.step_time_s,
				mfu, fr->pred.mem.total / GIB, lb);
			if (r->n_top > 0 && fr->pred.step_time_s > r->top_preds[r->fastest].step_time_s)
				fprintf(f, "  (%.2fx the fastest)",
					fr->pred.step_time_s / r->top_preds[r->fastest].step_time_s);
			if (in->train_tokens > 0) {
				char tt[64];
				cli_train_time(tt, sizeof tt, in, &fr->pred);
				fprintf(f, "  %s", tt);
			}
			fprintf(f, "\n");
		} else if (fr->why == REJECT_OOM) {
			fprintf(f, "  %-15s none fits: the one closest to fitting needs %.1f GiB per GPU, the cap is %.1f\n",
				family_name((enum family)fi), fr->min_oom_bytes / GIB,
				mem_cap(in));
		} else if (fr->why != REJECT_NONE) {
			fprintf(f, "  %-15s impossible: ", family_name((enum family)fi));
			family_reasons(f, in, fr);
		} else {
			fprintf(f, "  %-15s not enumerated for %ld GPUs\n",
				family_name((enum family)fi), cluster_gpus(&in->cluster));
		}
	}
}

static struct emit_input best_input(const struct job *in,
				    const struct search_result *r,
				    struct train_opts *o)
{
	*o = in->opts;
	o->order = r->top_orders[0];
	return (struct emit_input){ .m = &in->model, .c = &in->cluster, .l = &r->top_layouts[0],
				    .o = o, .p = &r->top_preds[0] };
}

/* Why rank 1 is not the fastest layout: the headroom and simplicity it
 * was ranked for (search_params.tolerance). */
static void print_why_not_fastest(FILE *f, const struct job *in,
				  const struct search_result *r)
{
	const struct prediction *b = &r->top_preds[0], *q = &r->top_preds[r->fastest];
	int gpn = in->cluster.gpus_per_node;
	double more = (q->mem.total - b->mem.total) / GIB;
	int simpler = search_simplicity(&r->top_layouts[0], gpn) <
		      search_simplicity(&r->top_layouts[r->fastest], gpn);

	fprintf(f, "  ranked above the fastest (rank %d: %.2f %% faster at %.1f GiB) for ",
		r->fastest + 1, 100 * (b->step_time_s / q->step_time_s - 1), q->mem.total / GIB);
	if (more > 0)
		fprintf(f, "%.1f GiB more headroom%s", more, simpler ? " and a simpler layout" : "");
	else
		fprintf(f, "a simpler layout");
	fprintf(f, "; --rank-tolerance 0 books the fastest\n");
}

/* The stages' layers as "first 12, middle 13, last 10 layers" (pp > 2),
 * "first 17, last 15 layers" (pp 2) or "12 layers each"; "" when the
 * middle stages differ. */
static void format_cut(const struct layout *l, int layers, char *buf, size_t len)
{
	int pp = l->pp, first = layout_stage_layers(l, layers, PART_FIRST_LAST, 0),
	    last = layout_stage_layers(l, layers, PART_FIRST_LAST, pp - 1),
	    mid = pp > 2 ? layout_stage_layers(l, layers, PART_FIRST_LAST, 1) : first;
	buf[0] = '\0';
	for (int i = 1; i < pp - 1; i++)
		if (layout_stage_layers(l, layers, PART_FIRST_LAST, i) != mid)
			return;
	if (first == mid && last == mid)
		snprintf(buf, len, "%d layers each", mid);
	else if (pp == 2)
		snprintf(buf, len, "first %d, last %d layers", first, last);
	else
		snprintf(buf, len, "first %d, middle %d, last %d layers", first, mid, last);
}

/* Where the search cut the stages other than the framework's default
 * (search.c, choose_split): the cut at its step p, and the same layout
 * cut the default way, priced as the search priced the best. */
static void print_cut(FILE *f, const struct job *in, const struct layout *l,
		      const struct prediction *p, const struct train_opts *o)
{
	struct layout d = *l;
	struct prediction q;
	char cut[96], dcut[96];

	if (l->pp < 2 || layout_split_megatron(&d, in->model.layers) == SPLIT_NONE ||
	    (d.pp_first == l->pp_first && d.pp_last == l->pp_last &&
	     d.pp_embed == l->pp_embed && d.pp_loss == l->pp_loss))
		return;
	if (layout_check_part(&d, &in->model, cluster_gpus(&in->cluster), o->b.partition, NULL,
			      NULL) != PPLAN_OK ||
	    predict_layout(&in->model, &in->cluster, &d, o, &q, NULL) != PPLAN_OK)
		return;
	if (l->pp_embed || l->pp_loss)
		snprintf(cut, sizeof cut, "with %s as %s", l->pp_embed && l->pp_loss ?
			 "the embedding and the loss" : l->pp_embed ? "the embedding" : "the loss",
			 l->pp_embed && l->pp_loss ? "layers" : "a layer");
	else
		format_cut(l, in->model.layers, cut, sizeof cut);
	format_cut(&d, in->model.layers, dcut, sizeof dcut);
	fprintf(f, "  stages cut %s (the edge stages also hold the embedding and the LM head): %.3f s a step, against %.3f s cut %s (%s)%s\n",
		cut, p->step_time_s, q.step_time_s,
		d.pp_first || d.pp_last || d.pp_embed || d.pp_loss ? "Megatron's default way" : "evenly",
		dcut, q.feasible ? "" : ", which does not fit");
}

static void print_best(FILE *f, const struct job *in,
		       const struct search_args *a, const struct search_result *r)
{
	char lb[256];
	struct train_opts o;
	struct emit_input ei = best_input(in, r, &o);

	layout_format(&r->top_layouts[0], lb, sizeof lb);
	fprintf(f, "\nBest layout: %s", lb);
	if (!rank_order_eq(&o.order, &in->opts.order) || in->order_arg) {
		char os[32];
		rank_order_format(&o.order, os, sizeof os);
		fprintf(f, " (rank order %s)", os);
	}
	fprintf(f, "\n");
	if (r->fastest > 0)
		print_why_not_fastest(f, in, r);
	print_cut(f, in, &r->top_layouts[0], &r->top_preds[0], &o);
	if (in->train_tokens > 0) {
		char tt[64], n[32];
		cli_train_time(tt, sizeof tt, in, &r->top_preds[0]);
		units_format_count(n, sizeof n, in->train_tokens);
		fprintf(f, "  time to train %s tokens: %s\n", n, tt);
	}
	fprintf(f, "  predict it: ");
	cli_predict_hint(f, in, &r->top_layouts[0], &o.order, a->closed_form);
	cli_launch_config(f, in, &ei);
}

static void print_no_fit(const struct job *in, const struct search_result *r)
{
	double need = search_min_oom_bytes(r);
	if (need > 0)
		fprintf(stderr, "pplan: no layout of %s fits on %ld GPUs: the smallest needs %.1f GiB per GPU, the cap is %.1f (--max-memory-gib)\n",
			in->model.name, cluster_gpus(&in->cluster), need / GIB,
			mem_cap(in));
	else
		fprintf(stderr, "pplan: no valid layout of %s on %ld GPUs (see the strategy families in the report)\n",
			in->model.name, cluster_gpus(&in->cluster));
}

int cmd_search(int argc, char **argv)
{
	struct job in;
	struct search_args a;
	struct perr e = { { 0 } };
	struct search_result r;
	enum pplan_status st;
	FILE *out;
	int rc;

	job_init(&in);
	memset(&a, 0, sizeof a);
	search_params_default(&a.sp);
	if (parse_args(argc, argv, &in, &a, &rc) < 0)
		return rc;
	st = job_resolve(&in, 1, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	a.sp.gbs = in.global_batch;
	a.sp.keep_points = in.json_path != NULL;
	if (in.order_arg) {
		a.sp.n_orders = 1;
		a.sp.orders[0] = in.opts.order;
	}
	in.opts.use_des = !a.closed_form;
	st = search_run(&in.model, &in.cluster, &in.opts, &a.sp, &r, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);

	out = (a.emit) ? fopen("/dev/null", "w") : cli_text_stream(&in);
	if (!out)
		out = stderr;
	print_header(out, &in, &a, &r);
	if (r.n_top == 0)
		fprintf(out, "no layout fits: see the strategy families below\n");
	else
		print_table(out, &in, &r);
	print_families(out, &in, &r);
	if (r.n_top > 0)
		print_best(out, &in, &a, &r);
	cli_text_close(out);
	if (r.n_top == 0) {
		print_no_fit(&in, &r);
		search_free(&r);
		return 2;
	}
	if (a.emit) {
		struct train_opts o;
		struct emit_input ei = best_input(&in, &r, &o);
		emit_config(stdout, stderr, a.emit_fmt, &ei);
	}
	if (in.json_path) {
		cJSON *doc = search_out_json(&in, &a.sp, &r);
		st = cli_write_json(in.json_path, doc, &e);
		cJSON_Delete(doc);
	}
	if (st == PPLAN_OK && a.csv_path)
		st = search_out_csv(a.csv_path, &in, &r, &e);
	search_free(&r);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
