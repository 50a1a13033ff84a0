/*
 * cmd_plan.c: `pplan plan`: the inverse questions.  How many GPUs train
 * this model on these tokens within the deadline, at which layout, in
 * how many days and GPU-hours, for what money (sim/plan.h); and the same
 * job on several clusters side by side (--compare-clusters).  Days count
 * the goodput of each size (sim/goodput.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_common.h"
#include "jsonio.h"
#include "plan.h"
#include "plan_out.h"
#include "table.h"
#include "units.h"

#define PLAN_DEFAULT_MAX_GPUS 32768L
#define PLAN_MAX_CLUSTERS 8

struct plan_args {
	struct plan_request rq;
	int days_given;
	char *compare;                     /* --compare-clusters, split in place */
	const char *cluster[PLAN_MAX_CLUSTERS];
	double price[PLAN_MAX_CLUSTERS];   /* 0: --gpu-hour-cost, or none */
	int n_clusters;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan plan (--model NAME|FILE | --params N) --tokens N [--days D] [options]\n\n"
		"How many GPUs train the model on N tokens within D days, at which layout, and what it\n"
		"costs: the job is searched at each size of a ladder (whole nodes 1, 2, 3, 4, 6, 8, 12, ...,\n"
		"and the powers of two within a node), days with each size's goodput.\n\n"
		"  --tokens N             tokens to train on (15.6T); --train-tokens is the same\n"
		"  --days D               the deadline: the answer is the fewest GPUs that meet it\n"
		"  --max-gpus N           the ladder's top (default %ld)\n"
		"  --gpus N | --nodes N   one size instead of the ladder: its best layouts\n"
		"  --top K                layouts shown at one size (default 5)\n"
		"  --compare-clusters A[:USD],B[:USD],...   the same job on each cluster preset, each at\n"
		"                         its price per GPU-hour: GPUs, days, GPU-hours, cost side by side\n"
		"  --closed-form          price layouts in closed form (faster, no event simulation)\n"
		CLI_RANK_TOLERANCE_USAGE,
		PLAN_DEFAULT_MAX_GPUS, 100 * SEARCH_TOLERANCE_DEFAULT);
	cli_common_usage(f);
	fprintf(f, "  --help                 this text\n");
}

/* "dgx-h100:2.5,dgx-b200:4" into a->cluster and a->price. */
static int parse_compare(struct plan_args *a, struct perr *e)
{
	char *save = NULL;
	for (char *t = strtok_r(a->compare, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(t, ':'), *end;
		if (a->n_clusters == PLAN_MAX_CLUSTERS)
			return perr_set(e, PPLAN_EINPUT, "--compare-clusters takes at most %d clusters",
					PLAN_MAX_CLUSTERS), -1;
		if (colon) {
			*colon = '\0';
			a->price[a->n_clusters] = strtod(colon + 1, &end);
			if (end == colon + 1 || *end || !(a->price[a->n_clusters] > 0) ||
			    a->price[a->n_clusters] > 1e6)
				return perr_set(e, PPLAN_EINPUT,
						"--compare-clusters: the price of %s must be a positive number per GPU-hour, got '%s'",
						t, colon + 1), -1;
		}
		if (!t[0])
			return perr_set(e, PPLAN_EINPUT, "--compare-clusters: an empty cluster name"), -1;
		a->cluster[a->n_clusters++] = t;
	}
	if (a->n_clusters == 0)
		return perr_set(e, PPLAN_EINPUT, "--compare-clusters names no cluster"), -1;
	return 0;
}

static int parse_args(int argc, char **argv, struct job *in, struct plan_args *a, int *rc)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{ "tokens", required_argument, NULL, 'T' },
		{ "days", required_argument, NULL, 'd' },
		{ "max-gpus", required_argument, NULL, 'm' },
		{ "top", required_argument, NULL, 't' },
		{ "compare-clusters", required_argument, NULL, 'c' },
		{ "closed-form", no_argument, NULL, 'F' },
		{ "rank-tolerance", required_argument, NULL, 'R' },
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
		char *end;
		switch (c) {
		case 'h': usage(stdout); *rc = 0; return -1;
		case 'F': a->rq.closed_form = 1; continue;
		case 'R':
			if (cli_parse_rank_tolerance("plan", optarg, &a->rq.tolerance) < 0)
				return -1;
			continue;
		case 'T': c = OPT_TRAIN_TOKENS; break;
		case 'd':
			a->rq.days = strtod(optarg, &end);
			if (end == optarg || *end || !(a->rq.days > 0) || a->rq.days > 1e5) {
				fprintf(stderr, "pplan plan: --days must be a positive number of days, got '%s'\n",
					optarg);
				return -1;
			}
			a->days_given = 1;
			continue;
		case 'm':
			if (units_parse_whole(optarg, &v) != 0 || v > CLUSTER_MAX_GPUS) {
				fprintf(stderr, "pplan plan: --max-gpus must be a whole number of GPUs from 1 to %ld, got '%s'\n",
					(long)CLUSTER_MAX_GPUS, optarg);
				return -1;
			}
			a->rq.max_gpus = v;
			continue;
		case 't':
			if (units_parse_whole(optarg, &v) != 0 || v > 100) {
				fprintf(stderr, "pplan plan: --top must be a whole number from 1 to 100, got '%s'\n",
					optarg);
				return -1;
			}
			a->rq.top_k = (int)v;
			continue;
		case 'c':
			a->compare = optarg;
			continue;
		default: break;
		}
		r = cli_common_option(in, c, optarg, &e);
		if (r < 0) {
			*rc = cli_fail(PPLAN_EINPUT, &e);
			return -1;
		}
		if (r == 0) {
			fprintf(stderr, "pplan plan: unknown or incomplete option '%s' (see pplan plan --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pplan plan: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!(in->train_tokens > 0)) {
		fprintf(stderr, "pplan plan: --tokens N is required: the tokens to train on (e.g. --tokens 15T)\n");
		return -1;
	}
	if (a->rq.max_gpus && (in->gpus || in->nodes)) {
		fprintf(stderr, "pplan plan: --max-gpus and --gpus/--nodes conflict: the ladder's top, or one size\n");
		return -1;
	}
	if (a->compare) {
		if (in->cluster_arg || in->gpu_arg) {
			fprintf(stderr, "pplan plan: --compare-clusters and --cluster/--gpu conflict: the clusters are the ones compared\n");
			return -1;
		}
		if (!a->days_given && !in->gpus && !in->nodes) {
			fprintf(stderr, "pplan plan: --compare-clusters needs --days (the fewest GPUs of each that meet it) or --gpus (each at that size)\n");
			return -1;
		}
		if (parse_compare(a, &e) < 0) {
			*rc = cli_fail(PPLAN_EINPUT, &e);
			return -1;
		}
	}
	if (!a->rq.max_gpus)
		a->rq.max_gpus = PLAN_DEFAULT_MAX_GPUS;
	return 0;
}

/* ---- the report ---------------------------------------------------------------- */

static const struct table_col cols[] = {
	{ "GPUs", "", 7, 0 }, { "layout", "", 66, 1 }, { "step", "(s)", 7, 0 },
	{ "MFU", "(%)", 5, 0 }, { "memory", "(GiB)", 6, 0 }, { "goodput", "(%)", 7, 0 },
	{ "days", "(d)", 7, 0 }, { "GPU-hours", "(h)", 9, 0 }, { "cost", "($)", 8, 0 },
	{ "", "", 12, 1 },
};
enum { NCOLS = sizeof cols / sizeof cols[0] };

static void rung_cells(const struct plan_rung *g, int layout_i, char cells[NCOLS][96])
{
	const struct prediction *p = &g->r.top_preds[layout_i];
	struct job_train_time t = layout_i == 0 ? g->t : job_train_time(g->job, p);
	snprintf(cells[0], 96, "%ld", cluster_gpus(&g->job->cluster));
	cli_short_layout(&g->r.top_layouts[layout_i], &g->r.top_orders[layout_i], cells[1], 96);
	snprintf(cells[2], 96, "%.3f", p->step_time_s);
	cli_mfu_cell(cells[3], 96, g->job, p->mfu);
	snprintf(cells[4], 96, "%.1f", p->mem.total / GIB);
	snprintf(cells[5], 96, "%.1f", 100 * g->job->goodput.fraction);
	snprintf(cells[6], 96, "%.1f", t.seconds / 86400);
	units_format_count(cells[7], 96, t.gpu_hours);
	if (t.cost > 0)
		units_format_count(cells[8], 96, t.cost);
	else
		snprintf(cells[8], 96, "-");
	cells[9][0] = '\0';
}

/* Prints a row; returns 1 when its MFU is marked ! (cli_mfu_cell). */
static int print_row(FILE *f, char cells[NCOLS][96])
{
	const char *cp[NCOLS];
	for (int k = 0; k < NCOLS; k++)
		cp[k] = cells[k];
	table_row(f, cols, NCOLS, cp);
	return strchr(cells[3], '!') != NULL;
}

static void print_flag_note(FILE *f, int flagged)
{
	if (flagged)
		fprintf(f, "# !: an MFU above the best published for this GPU and precision (# accuracy): read it as optimistic\n");
}

static void print_ladder(FILE *f, const struct plan_result *res)
{
	long none_from = 0, none_to = 0;
	int flagged = 0;
	table_header(f, cols, NCOLS);
	for (int i = 0; i < res->n; i++) {
		const struct plan_rung *g = &res->rungs[i];
		char cells[NCOLS][96];
		if (g->r.n_top == 0) {
			if (!none_from)
				none_from = g->job->gpus;
			none_to = g->job->gpus;
			if (i + 1 < res->n && res->rungs[i + 1].r.n_top == 0)
				continue;
			if (none_from == none_to)
				fprintf(f, "  %5ld  %s\n", none_from, g->why);
			else
				fprintf(f, "  %ld-%ld GPUs: %s\n", none_from, none_to, g->why);
			none_from = 0;
			continue;
		}
		rung_cells(g, 0, cells);
		snprintf(cells[9], 96, "%s%s%s", i == res->answer ? "<- answer" : "",
			 i == res->answer && i == res->cheapest ? ", " : "",
			 i == res->cheapest ? "fewest GPU-h" : "");
		flagged |= print_row(f, cells);
	}
	print_flag_note(f, flagged);
}

static void print_layouts(FILE *f, const struct plan_rung *g, double days)
{
	int flagged = 0;
	table_header(f, cols, NCOLS);
	for (int i = 0; i < g->r.n_top; i++) {
		char cells[NCOLS][96];
		rung_cells(g, i, cells);
		if (days > 0)
			snprintf(cells[9], 96, "%s", job_train_time(g->job, &g->r.top_preds[i]).seconds <=
							     days * 86400 ? "meets" : "late");
		flagged |= print_row(f, cells);
	}
	print_flag_note(f, flagged);
}

static void print_answer(FILE *f, const struct plan_rung *g, const char *what)
{
	char lb[256], h[32], c[32] = "", n[32];
	const struct job *j = g->job;
	layout_format(&g->r.top_layouts[0], lb, sizeof lb);
	units_format_count(h, sizeof h, g->t.gpu_hours);
	if (g->t.cost > 0) {
		char v[32];
		units_format_count(v, sizeof v, g->t.cost);
		snprintf(c, sizeof c, ", $%s", v);
	}
	units_format_count(n, sizeof n, j->train_tokens);
	fprintf(f, "\n%s: %ld GPUs (%d %s of %d) train %s tokens in %.1f days, %s GPU-hours%s\n", what,
		cluster_gpus(&j->cluster), j->cluster.num_nodes,
		j->cluster.num_nodes == 1 ? "node" : "nodes", j->cluster.gpus_per_node, n,
		g->t.seconds / 86400, h, c);
	fprintf(f, "  layout: %s\n  predict it: ", lb);
	cli_predict_hint(f, j, &g->r.top_layouts[0], &g->r.top_orders[0], 0);
}

static int say_late(const struct plan_result *res, const struct plan_args *a, const struct job *in)
{
	if (res->fastest < 0) {
		fprintf(stderr, "pplan: no layout of the model fits on any size up to %ld GPUs\n",
			a->rq.max_gpus);
		return 2;
	}
	{
		const struct plan_rung *g = &res->rungs[res->fastest];
		char n[32];
		units_format_count(n, sizeof n, in->train_tokens);
		if (res->n == 1)
			fprintf(stderr, "pplan: no layout on %ld GPUs trains %s tokens within %.1f days: the fastest takes %.1f days\n",
				cluster_gpus(&g->job->cluster), n, a->rq.days, g->t.seconds / 86400);
		else
			fprintf(stderr, "pplan: no size up to %ld GPUs trains %s tokens within %.1f days: the fastest, %ld GPUs, takes %.1f days (--max-gpus allows more)\n",
				a->rq.max_gpus, n, a->rq.days, cluster_gpus(&g->job->cluster),
				g->t.seconds / 86400);
	}
	return 2;
}

static int run_one(const struct job *in, struct plan_args *a)
{
	struct plan_result res;
	struct perr e = { { 0 } };
	enum pplan_status st;
	const struct plan_rung *head;
	FILE *out;
	int rc = 0;
	char n[32];

	a->rq.top_k = (in->gpus || in->nodes) ? (a->rq.top_k ? a->rq.top_k : 5) : 1;
	a->rq.rungs_after = 2;
	st = plan_run(in, &a->rq, &res, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	head = &res.rungs[res.answer >= 0 ? res.answer : res.fastest >= 0 ? res.fastest : 0];
	out = cli_text_stream(in);
	cli_print_config(out, "plan", head->job);
	cli_print_ranking(out, head->job, a->rq.tolerance, &head->r);
	units_format_count(n, sizeof n, in->train_tokens);
	if (res.n == 1) {
		fprintf(out, "# plan      %s tokens on %ld GPUs%s\n#\n", n, cluster_gpus(&head->job->cluster),
			a->days_given ? ", the layouts within the deadline marked" : "");
		if (head->r.n_top > 0)
			print_layouts(out, head, a->rq.days);
		else
			fprintf(out, "%s\n", head->why);
	} else {
		char dl[48] = "";
		if (a->days_given)
			snprintf(dl, sizeof dl, " within %.1f days", a->rq.days);
		fprintf(out, "# plan      %s tokens%s: the best layout at each size from %ld to %ld GPUs (nodes of %d)%s\n#\n",
			n, dl, res.rungs[0].job->gpus, res.rungs[res.n - 1].job->gpus,
			head->job->cluster.gpus_per_node,
			a->days_given ? ", up to two sizes past the answer" : "");
		print_ladder(out, &res);
	}
	if (a->days_given && res.answer >= 0)
		print_answer(out, &res.rungs[res.answer],
			     res.n == 1 ? "Within the deadline" : "Fewest GPUs within the deadline");
	else if (!a->days_given && res.n > 1 && res.cheapest >= 0)
		print_answer(out, &res.rungs[res.cheapest], "Fewest GPU-hours");
	else if (!a->days_given && res.n == 1 && head->r.n_top > 0)
		print_answer(out, head, "Best layout");
	cli_text_close(out);
	if (a->days_given && res.answer < 0)
		rc = say_late(&res, a, in);
	else if (res.fastest < 0)
		rc = say_late(&res, a, in);
	if (rc == 0 && in->json_path) {
		cJSON *doc = plan_out_json(&a->rq, &res);
		st = doc ? cli_write_json(in->json_path, doc, &e)
			 : perr_set(&e, PPLAN_ENOMEM, "out of memory for the JSON report");
		cJSON_Delete(doc);
		if (st != PPLAN_OK)
			rc = cli_fail(st, &e);
	}
	plan_free(&res);
	return rc;
}

/* ---- --compare-clusters -------------------------------------------------------- */

static const struct table_col ccols[] = {
	{ "cluster", "", 14, 1 }, { "GPUs", "", 6, 0 }, { "layout", "", 66, 1 },
	{ "MFU", "(%)", 5, 0 }, { "goodput", "(%)", 7, 0 }, { "days", "(d)", 6, 0 },
	{ "GPU-hours", "(h)", 9, 0 }, { "price", "($/GPU-h)", 9, 0 }, { "cost", "($)", 8, 0 },
	{ "per 1M tokens", "($)", 13, 0 },
};
enum { NCCOLS = sizeof ccols / sizeof ccols[0] };

static int run_compare(const struct job *in, struct plan_args *a)
{
	struct plan_result res[PLAN_MAX_CLUSTERS];
	int pick[PLAN_MAX_CLUSTERS];
	struct perr e = { { 0 } };
	enum pplan_status st = PPLAN_OK;
	FILE *out;
	int done = 0, rc = 0, first = -1;
	char n[32];

	a->rq.top_k = 1;
	a->rq.rungs_after = 0;
	for (; done < a->n_clusters; done++) {
		struct job j = *in;
		j.cluster_arg = a->cluster[done];
		if (a->price[done] > 0)
			j.goodput_opts.gpu_hour_cost = a->price[done];
		st = plan_run(&j, &a->rq, &res[done], &e);
		if (st != PPLAN_OK)
			break;
		pick[done] = a->days_given ? res[done].answer : res[done].fastest;
	}
	if (st != PPLAN_OK) {
		for (int i = 0; i < done; i++)
			plan_free(&res[i]);
		return cli_fail(st, &e);
	}
	out = cli_text_stream(in);
	for (int i = 0; i < done && first < 0; i++)
		if (pick[i] >= 0)
			first = i;
	if (first >= 0)
		cli_print_config(out, "plan", res[first].rungs[pick[first]].job);
	units_format_count(n, sizeof n, in->train_tokens);
	if (a->days_given)
		fprintf(out, "# compare   %s tokens within %.1f days: the fewest GPUs of each cluster that meet it\n#\n",
			n, a->rq.days);
	else
		fprintf(out, "# compare   %s tokens on %ld GPUs of each cluster\n#\n", n,
			in->gpus ? in->gpus : 0);
	table_header(out, ccols, NCCOLS);
	for (int i = 0; i < done; i++) {
		char cells[NCCOLS][96];
		const char *cp[NCCOLS];
		if (pick[i] < 0) {
			fprintf(out, "  %-14s %s\n", a->cluster[i],
				res[i].fastest < 0 ? "nothing fits at any size"
						   : "no size meets the deadline");
			rc = 2;
			continue;
		}
		{
			const struct plan_rung *g = &res[i].rungs[pick[i]];
			const struct prediction *p = &g->r.top_preds[0];
			double price = g->job->goodput_opts.gpu_hour_cost;
			snprintf(cells[0], 96, "%s", a->cluster[i]);
			snprintf(cells[1], 96, "%ld", cluster_gpus(&g->job->cluster));
			cli_short_layout(&g->r.top_layouts[0], &g->r.top_orders[0], cells[2], 96);
			cli_mfu_cell(cells[3], 96, g->job, p->mfu);
			snprintf(cells[4], 96, "%.1f", 100 * g->job->goodput.fraction);
			snprintf(cells[5], 96, "%.1f", g->t.seconds / 86400);
			units_format_count(cells[6], 96, g->t.gpu_hours);
			table_num(cells[7], 96, "%.2f", price > 0 ? price : NAN);
			if (g->t.cost > 0)
				units_format_count(cells[8], 96, g->t.cost);
			else
				snprintf(cells[8], 96, "-");
			table_num(cells[9], 96, "%.3f",
				  g->t.cost > 0 ? g->t.cost / (in->train_tokens / 1e6) : NAN);
		}
		for (int k = 0; k < NCCOLS; k++)
			cp[k] = cells[k];
		table_row(out, ccols, NCCOLS, cp);
	}
	for (int i = 0, said = 0; i < done; i++) {
		if (pick[i] < 0 || i == first)
			continue;
		fprintf(out, "%s# %s (the header above is %s's):\n", said++ ? "" : "#\n", a->cluster[i],
			a->cluster[first]);
		cli_print_trust(out, res[i].rungs[pick[i]].job);
	}
	cli_text_close(out);
	if (rc)
		fprintf(stderr, "pplan: not every cluster can train the job%s (see the table)\n",
			a->days_given ? " within the deadline" : "");
	if (rc == 0 && in->json_path) {
		cJSON *doc = plan_out_compare_json(&a->rq, a->cluster, res, pick, done);
		st = doc ? cli_write_json(in->json_path, doc, &e)
			 : perr_set(&e, PPLAN_ENOMEM, "out of memory for the JSON report");
		cJSON_Delete(doc);
		if (st != PPLAN_OK)
			rc = cli_fail(st, &e);
	}
	for (int i = 0; i < done; i++)
		plan_free(&res[i]);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	struct job in;
	struct plan_args a;
	int rc;

	job_init(&in);
	memset(&a, 0, sizeof a);
	a.rq.tolerance = SEARCH_TOLERANCE_DEFAULT;
	if (parse_args(argc, argv, &in, &a, &rc) < 0)
		return rc;
	return a.n_clusters ? run_compare(&in, &a) : run_one(&in, &a);
}
