/*
 * cmd_predict.c: `pplan predict`: one layout, memory and time term by
 * term, and optionally pplan.prediction/1 JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "accuracy.h"
#include "cli_common.h"
#include "cli_from.h"
#include "emit.h"
#include "jsonio.h"
#include "predict.h"
#include "schedule.h"
#include "report.h"
#include "units.h"


static void usage(FILE *f)
{
	const struct fw_layout_defaults *d = &framework_default()->layout;
	fprintf(f,
		"usage: pplan predict (--model NAME|FILE | --params N) --layout STR [options]\n"
		"       pplan predict --from FORMAT (FILE | - | -- ARGS...) [--model NAME|FILE] [options]\n\n"
		"  --layout STR           tp=8,pp=4,dp=16,mbs=1,vp=2,sp=on,recompute=selective,zero=1,schedule=interleaved\n"
		"                         omitted keys: degrees 1 (dp fills the GPUs), mbs 1, schedule 1f1b\n"
		"                         (interleaved when vp > 1), gbs from the batch options below; sp,\n"
		"                         recompute and zero the framework's (%s: sp %s when tp > 1,\n"
		"                         recompute %s, zero %d when dp > 1)\n"
		"  --pipeline-layout STR  Megatron-Core's --pipeline-model-parallel-layout, e.g. 'Et|(tt|)*30mL'\n"
		"                         (E embedding, t layer, m MTP layer, L loss, | between the pp x vp\n"
		"                         stages): vp and the split from it, pp from --layout\n",
		framework_default()->label, d->sp ? "on" : "off", recompute_name(d->recompute),
		d->zero);
	cli_common_usage(f);
	fprintf(f, "  --from FORMAT          price a launch configuration a job already runs: megatron\n"
		   "                         (a launch script or its arguments), nemo or bridge (a recipe\n"
		   "                         override), torchtitan (a torchrun line) or deepspeed\n"
		   "                         (ds_config.json, with --model); what it leaves out is the\n"
		   "                         framework's default\n"
		   "  --closed-form          bubble time from the closed forms (no event simulation)\n"
		   "  --emit FORMAT          print only the layout's launch config: megatron, nemo,\n"
		   "                         bridge, torchtitan or deepspeed\n"
		   "  --help                 this text\n");
}

static void term(FILE *f, const char *name, double v, double total, const char *unit)
{
	fprintf(f, "  %-26s %12.3f %-4s %6.1f %%\n", name, v, unit,
		total > 0 ? 100.0 * v / total : 0.0);
}

/* The step time (memory: what = 1) a measured run falls within, 80 % of
 * the time (sim/accuracy.h; the # accuracy line says what it rests on). */
static void print_band(FILE *out, const struct job *in, const struct prediction *p, int memory)
{
	struct accuracy a;
	double lo, hi;
	accuracy_for(in->cluster.gpu.arch, in->opts.precision, &a);
	if (a.n == 0)
		return;
	if (memory) {
		accuracy_memory(&a, p->mem.total / GIB, &lo, &hi);
		fprintf(out, "  %-26s %6.3f to %.3f GiB (80 %% of measured peaks, # accuracy)\n",
			"total, measured within", lo, hi);
		if (p->feasible && hi > in->opts.max_memory_gib)
			fprintf(out, "  %-26s the band's top passes the %.1f GiB cap: it may not fit\n", "",
				in->opts.max_memory_gib);
	} else {
		accuracy_time(&a, p->step_time_s, &lo, &hi);
		fprintf(out, "  %-26s %6.3f to %.3f s (80 %% of measured runs, # accuracy)\n",
			"step, measured within", lo, hi);
	}
}

static void print_mfu(FILE *out, const struct job *in, const struct prediction *p)
{
	struct accuracy a;
	double lo, hi;
	accuracy_for(in->cluster.gpu.arch, in->opts.precision, &a);
	fprintf(out, "  %-26s %12.1f %%", "MFU", 100.0 * p->mfu);
	if (a.n > 0) {
		accuracy_mfu(&a, p->mfu, &lo, &hi);
		fprintf(out, " (80 %% band %.1f to %.1f %%)", 100 * lo, 100 * hi);
	}
	if (accuracy_above_published(&a, p->mfu))
		fprintf(out, " ! above the best published for %s %s, %.1f %% (%s)",
			gpu_arch_name(in->cluster.gpu.arch), precision_name(in->opts.precision),
			100 * a.published_mfu, a.published_run);
	fprintf(out, "\n");
}

static void print_groups(FILE *f, const struct job *in, const struct layout *l)
{
	struct group_links g;
	cost_group_links(&in->cluster, l, &in->opts, &g);
	const struct { const char *name; int size; long stride; const struct link *k; } rows[] = {
		{ "tp", l->tp, g.tp_stride, &g.tp }, { "cp", l->cp, g.cp_stride, &g.cp },
		{ "dp x cp", l->dp * l->cp,
		  l->cp > 1 && g.dp_stride == g.cp_stride * l->cp ? g.cp_stride : g.dp_stride,
		  &g.dp },
		{ "pp", l->pp, g.pp_stride, &g.pp },
		{ "ep", l->ep, g.ep_stride, &g.ep },
	};
	char os[32];
	rank_order_format(&in->opts.order, os, sizeof os);
	fprintf(f, "\ngroups (rank placement %s, innermost first)\n", os);
	fprintf(f, "  %-8s %6s %8s  %-9s %10s %10s\n", "group", "size", "stride", "link", "bw", "busbw");
	fprintf(f, "  %-8s %6s %8s  %-9s %10s %10s\n", "", "", "(ranks)", "", "(GB/s)", "(GB/s)");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (rows[i].size <= 1)
			continue;
		fprintf(f, "  %-8s %6d %8ld  %-9s %10.1f %10.1f\n", rows[i].name, rows[i].size,
			rows[i].stride, link_class_name(rows[i].k->cls), rows[i].k->bw_gbps,
			rows[i].k->bw_gbps * rows[i].k->eff);
	}
}

/* The words after --, each single-quoted, as one text to read. */
static char *from_words(int n, char **w)
{
	size_t len = 1;
	char *s, *o;
	for (int i = 0; i < n; i++)
		len += 3 + 4 * strlen(w[i]);
	if (!(s = o = malloc(len)))
		return NULL;
	for (int i = 0; i < n; i++) {
		*o++ = '\'';
		for (const char *c = w[i]; *c; c++)
			if (*c == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *c;
			}
		*o++ = '\'';
		*o++ = ' ';
	}
	*o = '\0';
	return s;
}

/* --from: the job from a launch configuration. */
static enum pplan_status predict_from(struct job *in, enum emit_format fmt, const char *src,
				      int words, const char *layout_arg,
				      struct launch_job *lj, struct layout *l, struct perr *e)
{
	const char *where = words ? "the arguments" : src;
	struct model_spec given;
	enum pplan_status st;
	if (layout_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--layout and --from conflict: the launch configuration is the layout");
	if (in->params_arg)
		return perr_set(e, PPLAN_EINPUT,
				"--params and --from conflict: the model is the file's, or --model's");
	if (in->model_arg && (st = model_resolve(in->model_arg, &given, e)) != PPLAN_OK)
		return st;
	st = words ? launch_read_text(fmt, src, where, in->model_arg ? &given : NULL, lj, e)
		   : launch_read(fmt, src, in->model_arg ? &given : NULL, lj, e);
	if (st != PPLAN_OK || (st = cli_from_job(in, where, lj, e)) != PPLAN_OK)
		return st;
	return cli_from_resolve(in, where, lj, l, e);
}

int cmd_predict(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{ "layout", required_argument, NULL, 'l' },
		{ "pipeline-layout", required_argument, NULL, 'P' },
		{ "closed-form", no_argument, NULL, 'F' },
		{ "emit", required_argument, NULL, 'e' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct job in;
	struct perr e = { { 0 } };
	struct layout l;
	struct prediction p;
	struct model_spec base;
	const char *layout_arg = NULL, *src = NULL;
	char *joined = NULL;
	int closed_form = 0, emit = 0, from = 0;
	enum emit_format emit_fmt = EMIT_MEGATRON, from_fmt = EMIT_MEGATRON;
	static struct launch_job lj;
	FILE *out;
	enum pplan_status st;
	int c;
	char lbuf[256];

	job_init(&in);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int r;
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == 'F') {
			closed_form = 1;
			continue;
		}
		if (c == 'l') {
			layout_arg = optarg;
			continue;
		}
		if (c == 'P') {
			in.pp_layout_arg = optarg;
			continue;
		}
		if (c == 'e' || c == 'f') {
			if (emit_format_parse(optarg, c == 'e' ? &emit_fmt : &from_fmt) != 0) {
				fprintf(stderr, "pplan predict: --%s must be megatron, nemo, bridge, torchtitan or deepspeed, got '%s'\n",
					c == 'e' ? "emit" : "from", optarg);
				return 2;
			}
			*(c == 'e' ? &emit : &from) = 1;
			continue;
		}
		r = cli_common_option(&in, c, optarg, &e);
		if (r < 0)
			return cli_fail(PPLAN_EINPUT, &e);
		if (r == 0) {
			fprintf(stderr, "pplan predict: unknown or incomplete option '%s' (see pplan predict --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (from && optind < argc && !strcmp(argv[optind - 1], "--")) {
		if (!(src = joined = from_words(argc - optind, argv + optind))) {
			fprintf(stderr, "pplan: out of memory\n");
			return 1;
		}
	} else if (from && optind + 1 == argc) {
		src = argv[optind++];
	} else if (from && optind == argc) {
		fprintf(stderr, "pplan predict: --from %s needs what to read: a file, '-' for standard input, or the arguments after --\n",
			emit_format_name(from_fmt));
		return 2;
	}
	if (optind < argc && !joined) {
		fprintf(stderr, "pplan predict: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (emit && in.json_path && strcmp(in.json_path, "-") == 0) {
		fprintf(stderr, "pplan predict: --emit and --json - conflict: both want stdout to themselves\n");
		return 2;
	}
	if (emit && in.lora_rank > 0 && emit_peft_unsupported(emit_fmt)) {
		fprintf(stderr, "pplan predict: --emit %s and --peft lora conflict: %s; --emit nemo or --emit bridge writes a LoRA fine-tuning recipe\n",
			emit_format_name(emit_fmt), emit_peft_unsupported(emit_fmt));
		return 2;
	}
	if (from && in.pp_layout_arg) {
		fprintf(stderr, "pplan predict: --pipeline-layout and --from conflict: the launch configuration is the layout\n");
		return 2;
	}
	if (from) {
		st = predict_from(&in, from_fmt, src, joined != NULL, layout_arg, &lj, &l, &e);
		free(joined);
		if (st != PPLAN_OK)
			return cli_fail(st, &e);
	} else if (!layout_arg) {
		fprintf(stderr, "pplan predict: --layout is required (e.g. --layout tp=8,pp=4)\n");
		return 2;
	} else if ((st = job_resolve_layout(&in, layout_arg, &l, &e)) != PPLAN_OK) {
		return cli_fail(st, &e);
	}
	in.opts.use_des = !closed_form;
	st = predict_layout(&in.model, &in.cluster, &l, &in.opts, &p, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);

	st = predict_check(&l, &p, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);

	/* the model as the frameworks name it: the MTP layers pplan priced as
	 * layers (--pipeline-layout) apart */
	base = in.model;
	base.layers -= in.mtp_layers;
	out = emit ? fopen("/dev/null", "w") : cli_text_stream(&in);
	if (!out)
		out = stderr;
	cli_print_config(out, "predict", &in);
	if (from) {
		fprintf(out, "# from      %s (%s)\n", joined ? "the arguments" : src,
			emit_format_name(from_fmt));
		cli_from_notes(out, "# note      ", &lj);
		if (emit)
			cli_from_notes(stderr, "pplan: note: ", &lj);
	}
	layout_format(&l, lbuf, sizeof lbuf);
	fprintf(out, "# layout    %s (%ld %s per step)\n", lbuf, p.microbatches,
		p.microbatches == 1 ? "microbatch" : "microbatches");
	if (in.opts.use_des && l.pp > 1 &&
	    schedule_chunk_microbatches(&l, p.microbatches) > SCHEDULE_MAX_CHUNK_MBS)
		fprintf(out, "# pipeline  closed forms: pp*vp*microbatches = %ld is more than the %ld chunk-microbatches the event simulation plays\n",
			schedule_chunk_microbatches(&l, p.microbatches), SCHEDULE_MAX_CHUNK_MBS);
	else if (in.opts.use_des && l.pp > 1 && l.schedule == SCHED_DUALPIPE)
		fprintf(out, "# pipeline  closed form: DualPipe's bubble (pp/2 - 1)(F&B + B - 3W) from the DeepSeek-V3 report; the event simulation does not play it\n");
	fprintf(out, "\n");
	fprintf(out, "%s: %s\n",
		p.feasible ? "fits" : p.reject == REJECT_OOM ? "DOES NOT FIT" : "CANNOT RUN",
		p.feasible ? "the layout fits in GPU memory" : p.reject_msg);
	fprintf(out, "\nmemory per GPU (most-loaded: pipeline stage %d, %.1f microbatches in flight)\n",
		p.mem.stage, p.mem.inflight);
	term(out, "weights", p.mem.weights / GIB, p.mem.total / GIB, "GiB");
	term(out, "gradients", p.mem.gradients / GIB, p.mem.total / GIB, "GiB");
	term(out, "optimizer states", p.mem.optimizer / GIB, p.mem.total / GIB, "GiB");
	term(out, "activations", p.mem.activations / GIB, p.mem.total / GIB, "GiB");
	term(out, "other (context, buffers)", p.mem.other / GIB, p.mem.total / GIB, "GiB");
	term(out, "total", p.mem.total / GIB, p.mem.total / GIB, "GiB");
	print_band(out, &in, &p, 1);
	if (l.optimizer_offload)
		fprintf(out, "  %-26s %12.3f GiB per GPU in host memory (the optimizer offloaded): %.0f GiB of the node's %.0f GiB\n",
			"host memory", p.mem.host / GIB, p.mem.host * in.cluster.gpus_per_node / GIB,
			cluster_host_mem_gib(&in.cluster));
	fprintf(out, "\nstep time (critical path)\n");
	term(out, "compute", p.time.compute, p.step_time_s, "s");
	term(out, "recompute", p.time.recompute, p.step_time_s, "s");
	term(out, "TP communication", p.time.tp_comm, p.step_time_s, "s");
	term(out, "CP communication", p.time.cp_comm, p.step_time_s, "s");
	term(out, "EP communication", p.time.ep_comm, p.step_time_s, "s");
	term(out, "PP communication", p.time.pp_comm, p.step_time_s, "s");
	term(out, "DP communication exposed", p.time.dp_comm_exposed, p.step_time_s, "s");
	if (p.dp_emb_s > 0)
		fprintf(out, "  %-26s %12.3f s of it: the tied embedding's all-reduce between the first and last stage\n",
			"  tied embedding", p.dp_emb_s);
	term(out, "bubble time", p.time.bubble, p.step_time_s, "s");
	term(out, "optimizer step", p.time.optimizer, p.step_time_s, "s");
	if (l.optimizer_offload)
		fprintf(out, "  %-26s gradients to host %.3f s%s, CPU Adam %.3f s (the node's %d shards at %.0f GB/s of host memory), weights back %.3f s (%.0f GB/s host link)\n",
			"  on the CPU", p.offload_d2h_s,
			in.opts.b.sharding == FW_SHARD_DEEPSPEED && l.zero >= 2 ? " (streamed in the backward)" : "",
			p.offload_adam_s, in.cluster.gpus_per_node, cluster_host_mem_gbps(&in.cluster),
			p.offload_h2d_s, cluster_host_gbps(&in.cluster));
	term(out, "step", p.step_time_s, p.step_time_s, "s");
	print_band(out, &in, &p, 0);
	fprintf(out, "\n  %-26s %12.0f tok/s\n", "throughput", p.tokens_per_s);
	fprintf(out, "  %-26s %12.1f TFLOP/s per GPU (model FLOPs)\n", "achieved", p.tflops_per_gpu);
	print_mfu(out, &in, &p);
	fprintf(out, "  %-26s %12.1f %%\n", "HFU (with recompute)", 100.0 * p.hfu);
	fprintf(out, "  %-26s %12.1f %% (mean share of the span a stage idles)\n",
		"bubble fraction", 100.0 * p.bubble_fraction);
	fprintf(out, "  %-26s %12.3f s (%.3f s exposed)\n", "DP communication total",
		p.time.dp_comm_total, p.time.dp_comm_exposed);
	if (in.train_tokens > 0) {
		char tt[64], n[32];
		cli_train_time(tt, sizeof tt, &in, &p);
		units_format_count(n, sizeof n, in.train_tokens);
		fprintf(out, "  time to train %s tokens: %s\n", n, tt);
	}
	print_groups(out, &in, &l);
	{
		struct emit_input ei = { &base, &in.cluster, &l, &in.opts, &p, in.pp_layout,
					 in.mtp_layers };
		fprintf(out, "\n");
		cli_launch_config(out, &in, &ei);
		cli_text_close(out);
		if (emit)
			emit_config(stdout, stderr, emit_fmt, &ei);
	}
	if (in.json_path) {
		cJSON *doc = report_prediction_json(&base, &in.cluster, &l, &in.opts, &p);
		if (doc && in.pp_layout) { /* priced with its mtp_layers as layers */
			cJSON *pl = cJSON_AddObjectToObject(doc, "pipeline_layout");
			cJSON_AddStringToObject(pl, "string", in.pp_layout);
			cJSON_AddNumberToObject(pl, "mtp_layers", in.mtp_layers);
		}
		st = cli_write_json(in.json_path, doc, &e);
		cJSON_Delete(doc);
		if (st != PPLAN_OK)
			return cli_fail(st, &e);
	}
	return 0;
}
