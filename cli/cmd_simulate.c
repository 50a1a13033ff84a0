/*
 * cmd_simulate.c: `pplan simulate`: one layout's pipeline schedule played
 * event by event (sim/des.h) with durations from the cost model.  Prints
 * per-stage busy, idle, bubble and peak in-flight activations as an
 * nccl-tests style table, a text timeline for small pipelines, and writes
 * a Chrome trace (--trace) and pplan.prediction/1 with a `stages` array
 * (--json).  The prediction in the JSON takes its step time, bubble and
 * throughput from the simulation; the closed-form values stay beside
 * them under "closed_form".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_common.h"
#include "des.h"
#include "predict.h"
#include "jsonio.h"
#include "report.h"
#include "table.h"
#include "trace.h"
#include "units.h"

#define TIMELINE_COLS 200
#define DEFAULT_DP_BUCKETS 4   /* gradient buckets per model chunk */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan simulate (--model NAME|FILE | --params N) --layout STR [options]\n\n"
		"  --layout STR           tp=8,pp=4,dp=16,mbs=1,vp=2,schedule=interleaved (as pplan predict)\n"
		"  --pipeline-layout STR  Megatron-Core's --pipeline-model-parallel-layout, e.g. 'Et|(tt|)*30mL'\n"
		"                         (E embedding, t layer, m MTP layer, L loss, | between the pp x vp\n"
		"                         stages): vp and the split from it, pp from --layout\n"
		"  --trace FILE           write the timeline as Chrome trace event JSON (Perfetto, chrome://tracing)\n"
		"  --timeline             print the text timeline (default: only when pp <= 8 and m <= 32)\n"
		"  --dp-buckets N         gradient buckets per model chunk for the DP reduction (default %d)\n",
		DEFAULT_DP_BUCKETS);
	cli_common_usage(f);
	fprintf(f, "  --help                 this text\n");
}

/* The prediction as the simulation sees it: step time, bubble, DP and
 * throughput from r; the compute terms stay the cost model's (they sum
 * to the busiest stage's busy time, which the simulation reproduces). */
static cJSON *simulation_json(const struct job *in,
			      const struct layout *l,
			      const struct prediction *p,
			      const struct pipe_schedule *s,
			      const struct des_costs *k,
			      const struct des_result *r)
{
	struct prediction q;
	cJSON *doc, *sim, *cf, *stages, *in_s;
	des_apply(p, r, &q);
	doc = report_prediction_json(&in->model, &in->cluster, l, &in->opts, &q);
	cf = cJSON_AddObjectToObject(doc, "closed_form");
	cJSON_AddNumberToObject(cf, "step_time_s", p->step_time_s);
	cJSON_AddNumberToObject(cf, "bubble_fraction", p->bubble_fraction);
	cJSON_AddNumberToObject(cf, "bubble_fraction_uniform",
				des_bubble_closed_form(l->schedule, l->pp,
						       s->microbatches, l->vp));
	sim = cJSON_AddObjectToObject(doc, "simulation");
	cJSON_AddStringToObject(sim, "schedule", schedule_name(s->kind));
	cJSON_AddNumberToObject(sim, "ops", (double)r->ops);
	cJSON_AddNumberToObject(sim, "step_time_s", r->step_time_s);
	cJSON_AddNumberToObject(sim, "pipeline_span_s", r->pipeline_span_s);
	cJSON_AddNumberToObject(sim, "bubble_fraction", r->bubble_fraction);
	cJSON_AddNumberToObject(sim, "bubble_s", r->bubble_s);
	cJSON_AddNumberToObject(sim, "dp_comm_exposed_s", r->dp_exposed_s);
	cJSON_AddNumberToObject(sim, "optimizer_s", r->optimizer_s);
	cJSON_AddNumberToObject(sim, "p2p_bytes", (double)s->act_bytes);
	in_s = cJSON_AddObjectToObject(sim, "durations_s");
	cJSON_AddNumberToObject(in_s, "fwd", k->fwd_s);
	cJSON_AddNumberToObject(in_s, "bwd", k->bwd_s);
	cJSON_AddNumberToObject(in_s, "bwd_w", k->bwd_w_s);
	cJSON_AddNumberToObject(in_s, "first_extra_fwd", k->first_extra_fwd_s);
	cJSON_AddNumberToObject(in_s, "first_extra_bwd", k->first_extra_bwd_s);
	cJSON_AddNumberToObject(in_s, "last_extra_fwd", k->last_extra_fwd_s);
	cJSON_AddNumberToObject(in_s, "last_extra_bwd", k->last_extra_bwd_s);
	cJSON_AddNumberToObject(in_s, "p2p", k->p2p_s);
	cJSON_AddNumberToObject(in_s, "dp_reduce", k->dp_reduce_s);
	cJSON_AddNumberToObject(in_s, "optimizer", k->optimizer_s);
	cJSON_AddNumberToObject(sim, "dp_buckets_per_chunk", k->dp_buckets);
	cJSON_AddBoolToObject(sim, "dp_overlap", k->dp_overlap);
	stages = cJSON_AddArrayToObject(doc, "stages");
	for (int i = 0; i < r->stages; i++) {
		const struct des_stage *o = &r->stage[i];
		cJSON *st = cJSON_CreateObject();
		cJSON_AddNumberToObject(st, "stage", i);
		cJSON_AddNumberToObject(st, "busy_s", o->busy_s);
		cJSON_AddNumberToObject(st, "idle_s", o->idle_s);
		cJSON_AddNumberToObject(st, "bubble_fraction", o->bubble_fraction);
		cJSON_AddNumberToObject(st, "own_window_bubble_fraction",
					o->own_window_bubble_fraction);
		cJSON_AddNumberToObject(st, "first_fwd_start_s", o->first_fwd_start_s);
		cJSON_AddNumberToObject(st, "last_bwd_end_s", o->last_bwd_end_s);
		cJSON_AddNumberToObject(st, "dp_comm_exposed_s", o->dp_exposed_s);
		cJSON_AddNumberToObject(st, "end_s", o->end_s);
		cJSON_AddNumberToObject(st, "peak_inflight", o->peak_inflight);
		cJSON_AddNumberToObject(st, "peak_inflight_chunks",
					(double)o->peak_inflight_chunks);
		cJSON_AddItemToArray(stages, st);
	}
	return doc;
}

static void print_table(FILE *f, const struct des_result *r)
{
	static const struct table_col cols[] = {
		{ "stage", "", 5, 0 },           { "busy", "(s)", 9, 0 },
		{ "idle", "(s)", 9, 0 },         { "bubble", "(%)", 7, 0 },
		{ "window", "(%)", 7, 0 },       { "dp_exposed", "(s)", 10, 0 },
		{ "end", "(s)", 9, 0 },          { "inflight", "(chunk-mb)", 10, 0 },
		{ "inflight", "(mb)", 8, 0 },
	};
	enum { N = sizeof cols / sizeof cols[0] };
	char b[N][32];
	const char *cells[N];

	for (int i = 0; i < N; i++)
		cells[i] = b[i];
	table_header(f, cols, N);
	for (int i = 0; i < r->stages; i++) {
		const struct des_stage *o = &r->stage[i];
		snprintf(b[0], 32, "%d", i);
		table_num(b[1], 32, "%.4f", o->busy_s);
		table_num(b[2], 32, "%.4f", o->idle_s);
		table_num(b[3], 32, "%.2f", 100 * o->bubble_fraction);
		table_num(b[4], 32, "%.2f", 100 * o->own_window_bubble_fraction);
		table_num(b[5], 32, "%.4f", o->dp_exposed_s);
		table_num(b[6], 32, "%.4f", o->end_s);
		snprintf(b[7], 32, "%ld", o->peak_inflight_chunks);
		table_num(b[8], 32, "%.2f", o->peak_inflight);
		table_row(f, cols, N, cells);
	}
}

static void print_summary(FILE *f, const struct layout *l, const struct prediction *p,
			  const struct pipe_schedule *s,
			  const struct des_result *r)
{
	fprintf(f, "# step time        %.4f s simulated (closed form %.4f s, %+.1f %%)\n",
	       r->step_time_s, p->step_time_s,
	       p->step_time_s > 0 ? 100 * (r->step_time_s / p->step_time_s - 1) : 0.0);
	fprintf(f, "# pipeline span    %.4f s, then DP reduction exposed %.4f s and optimizer %.4f s\n",
	       r->pipeline_span_s, r->dp_exposed_s, r->optimizer_s);
	fprintf(f, "# bubble time      %.4f s simulated (the span minus the busiest stage's busy time)\n",
		r->bubble_s);
	fprintf(f, "# bubble fraction  %.2f %% mean simulated; closed forms: cost model %.2f %%, uniform durations %.2f %%\n",
	       100 * r->bubble_fraction, 100 * p->bubble_fraction,
	       100 * des_bubble_closed_form(l->schedule, l->pp, s->microbatches, l->vp));
	fprintf(f, "# simulated        %ld ops (%d %s x %d %s, %ld %s)\n",
		r->ops, s->pp, s->pp == 1 ? "stage" : "stages", s->vp,
		s->vp == 1 ? "chunk" : "chunks", s->microbatches,
		s->microbatches == 1 ? "microbatch" : "microbatches");
}

struct sim_args {
	const char *layout, *trace;
	int timeline;
	long dp_buckets;
};

/* Parses the command line into in and a; returns -1 when the caller
 * should return *rc (help printed, or bad options). */
static int parse_args(int argc, char **argv, struct job *in,
		      struct sim_args *a, int *rc)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{ "layout", required_argument, NULL, 'l' },
		{ "pipeline-layout", required_argument, NULL, 'P' },
		{ "trace", required_argument, NULL, 't' },
		{ "timeline", no_argument, NULL, 'T' },
		{ "dp-buckets", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perr e = { { 0 } };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int r;
		switch (c) {
		case 'h': usage(stdout); *rc = 0; return -1;
		case 'l': a->layout = optarg; continue;
		case 'P': in->pp_layout_arg = optarg; continue;
		case 't':
			if (output_check(optarg, "--trace", &e) != PPLAN_OK) {
				*rc = cli_fail(PPLAN_EINPUT, &e);
				return -1;
			}
			a->trace = optarg;
			continue;
		case 'T': a->timeline = 1; continue;
		case 'b':
			if (units_parse_whole(optarg, &a->dp_buckets) != 0 ||
			    a->dp_buckets < 1 || a->dp_buckets > 4096) {
				fprintf(stderr, "pplan simulate: --dp-buckets must be a whole number from 1 to 4096, got '%s'\n",
					optarg);
				*rc = 2;
				return -1;
			}
			continue;
		}
		r = cli_common_option(in, c, optarg, &e);
		if (r < 0) {
			*rc = cli_fail(PPLAN_EINPUT, &e);
			return -1;
		}
		if (r == 0) {
			fprintf(stderr, "pplan simulate: unknown or incomplete option '%s' (see pplan simulate --help)\n",
				argv[optind - 1]);
			*rc = 2;
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pplan simulate: unexpected argument '%s'\n", argv[optind]);
		*rc = 2;
		return -1;
	}
	if (!a->layout) {
		fprintf(stderr, "pplan simulate: --layout is required (e.g. --layout tp=8,pp=4,vp=2)\n");
		*rc = 2;
		return -1;
	}
	return 0;
}

int cmd_simulate(int argc, char **argv)
{
	struct job in;
	struct sim_args a = { NULL, NULL, 0, DEFAULT_DP_BUCKETS };
	struct perr e = { { 0 } };
	struct layout l;
	struct prediction p;
	struct des_costs k;
	struct des_result r;
	struct pipe_schedule *s = NULL;
	enum pplan_status st;
	int rc = 0;
	char lbuf[256];
	FILE *out;

	job_init(&in);
	if (parse_args(argc, argv, &in, &a, &rc) < 0)
		return rc;
	st = job_resolve_layout(&in, a.layout, &l, &e);
	if (st == PPLAN_OK)
		st = cost_predict(&in.model, &in.cluster, &l, &in.opts, &p, &e);
	if (st == PPLAN_OK)
		st = schedule_build(&l, p.microbatches,
				    schedule_act_bytes(&l, in.model.hidden,
						       in.opts.seq, 2),
				    &s, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	predict_des_costs(&l, &in.opts, &p, &k);
	k.dp_buckets = (int)a.dp_buckets;
	if (!a.timeline)
		a.timeline = l.pp <= 8 && p.microbatches <= 32;
	st = des_run(s, &k, (a.timeline || a.trace) ? DES_TIMES : 0, &r, &e);
	if (st != PPLAN_OK) {
		schedule_free(s);
		return cli_fail(st, &e);
	}

	{
		struct prediction q;
		des_apply(&p, &r, &q);
		st = predict_check(&l, &q, &e);
		if (st != PPLAN_OK) {
			des_result_free(&r);
			schedule_free(s);
			return cli_fail(st, &e);
		}
	}
	out = cli_text_stream(&in);
	cli_print_config(out, "simulate", &in);
	layout_format(&l, lbuf, sizeof lbuf);
	fprintf(out, "# layout    %s (%ld %s per step)\n", lbuf, p.microbatches,
		p.microbatches == 1 ? "microbatch" : "microbatches");
	fprintf(out, "# durations per microbatch and model chunk: fwd %.3f ms, bwd %.3f ms (weight gradient %.3f ms); "
		"embedding +%.3f/+%.3f ms, LM head +%.3f/+%.3f ms\n",
		1e3 * k.fwd_s, 1e3 * k.bwd_s, 1e3 * k.bwd_w_s,
		1e3 * k.first_extra_fwd_s, 1e3 * k.first_extra_bwd_s,
		1e3 * k.last_extra_fwd_s, 1e3 * k.last_extra_bwd_s);
	if (l.pp > 1)
		fprintf(out, "# p2p: %.2f MB per transfer, %.3f ms each, folded into fwd and bwd above (blocking send/recv: the data is at the peer when the op ends)\n",
			(double)s->act_bytes / 1e6, 1e3 * p.p2p_s);
	fprintf(out, "# per stage: DP reduction %.3f ms in %d %s per chunk (%s), optimizer %.3f ms\n",
		1e3 * k.dp_reduce_s, k.dp_buckets, k.dp_buckets == 1 ? "bucket" : "buckets",
		k.dp_overlap ? "overlapped with the backward" : "after the backward",
		1e3 * k.optimizer_s);
	if (!p.feasible)
		fprintf(out, "# note: this layout does not fit in memory (%s); simulated anyway\n",
			p.reject_msg);
	fprintf(out, "#\n");
	print_table(out, &r);
	print_summary(out, &l, &p, s, &r);
	if (in.train_tokens > 0) {
		struct prediction q;
		char tt[64], n[32];
		des_apply(&p, &r, &q);
		cli_train_time(tt, sizeof tt, &in, &q);
		units_format_count(n, sizeof n, in.train_tokens);
		fprintf(out, "# time to train %s tokens: %s\n", n, tt);
	}
	if (a.timeline) {
		fprintf(out, "\n");
		trace_timeline_print(out, s, &r, TIMELINE_COLS);
	}
	cli_text_close(out);

	if (a.trace)
		st = trace_write(a.trace, s, &r, &e);
	if (st == PPLAN_OK && in.json_path) {
		cJSON *doc = simulation_json(&in, &l, &p, s, &k, &r);
		st = doc ? cli_write_json(in.json_path, doc, &e)
			 : perr_set(&e, PPLAN_ENOMEM, "simulate: out of memory for the report");
		cJSON_Delete(doc);
	}
	des_result_free(&r);
	schedule_free(s);
	return st == PPLAN_OK ? 0 : cli_fail(st, &e);
}
