/*
 * cmd_calibrate.c: `pplan calibrate`, started by mpirun or srun with one
 * process per GPU (or per CPU slot): measures this machine through the
 * executor's backend (exec/calibrate.h) and writes what it measured as
 * pplan.profile/1 (docs/profile-format.md), which predict, search,
 * simulate and exec take with --profile.
 *
 * Rank 0 prints, in the nccl-tests manner ('#' provenance lines, a names
 * row and a units row): the GEMM rates by shape, the element-wise rate,
 * the attention core, and one table per collective with size, count,
 * type, redop, root, time, algbw, busbw and #wrong, and the average bus
 * bandwidth as the footer.  The shapes and the profile are built in
 * calibrate_plan.c.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibrate.h"
#include "calibrate_plan.h"
#include "cli.h"
#include "jsonio.h"
#include "table.h"
#include "version.h"
#include "units.h"


static void usage(FILE *f)
{
	fprintf(f,
		"usage: mpirun -np N pplan calibrate [--backend cpu|cuda] [--out FILE] [--quick]\n"
		"                                  [--model NAME|FILE] [--seq N] [--max-tp N] [--max-mbs N]\n"
		"                                  [--max-bytes B]\n\n"
		"Measures this machine through pplan exec's backend: GEMM throughput over the\n"
		"shapes layouts produce, the element-wise kernels' bandwidth, the attention core at\n"
		"several sequence lengths, and all-reduce, all-gather, reduce-scatter, all-to-all,\n"
		"broadcast and send/receive from 8 B up, over all ranks and smaller groups.\n"
		"Writes pplan.profile/1 for --profile.\n\n"
		"  --backend cpu|cuda   the backend (default cpu)\n"
		"  --precision P        GEMM and attention precision on CUDA: bf16, fp16 or fp32\n"
		"                       (default bf16; the CPU computes fp32)\n"
		"  --out FILE           write the profile (default: print only)\n"
		"  --quick              fewer shapes and sizes, shorter loops (about a minute on a CPU)\n"
		"  --model NAME|FILE    GEMM shapes of this model under TP 1..8 and micro-batch\n"
		"                       1..8 (default: a grid of square and skinny shapes)\n"
		"  --seq N              tokens per sequence for the model's shapes (default: the model's)\n"
		"  --max-tp N           the model's shapes under TP 1..N only (default 8, --quick 2)\n"
		"  --max-mbs N          the model's shapes under micro-batch 1..N only (default 8, --quick 2)\n"
		"  --max-bytes B        the largest collective (default 1 GiB, --quick 16 MiB;\n"
		"                       less where memory does not allow)\n"
		"  --help               this text\n");
}

static void command_line(int argc, char **argv, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "pplan");
	for (int i = 0; i < argc && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
}

static int parse_opts(int argc, char **argv, struct cal_plan_opts *po,
		      struct cal_config *cfg, const char **out)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quick", no_argument, NULL, 'q' },
		{ "backend", required_argument, NULL, 'b' },
		{ "precision", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "model", required_argument, NULL, 'm' },
		{ "max-tp", required_argument, NULL, 'T' },
		{ "max-mbs", required_argument, NULL, 'M' },
		{ "seq", required_argument, NULL, 's' },
		{ "max-bytes", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	const char *backend = "cpu", *prec = NULL;
	int c;
	/* "-": argv stays as typed (the profile records the command line) */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:h", opts, NULL)) != -1) {
		const char *opt = argv[optind - 1];
		double v;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'q': po->quick = 1; break;
		case 'b': backend = optarg; break;
		case 'p': prec = optarg; break;
		case 'o': *out = optarg; break;
		case 'm': po->model_arg = optarg; break;
		case 'T':
		case 'M':
			if (units_parse_count(optarg, &v) != 0 || v < 1 || v > 64 || v != floor(v)) {
				fprintf(stderr, "pplan calibrate: --%s must be a whole number from 1 to 64, got '%s'\n",
					c == 'T' ? "max-tp" : "max-mbs", optarg);
				return 2;
			}
			if (c == 'T')
				po->max_tp = (int)v;
			else
				po->max_mbs = (int)v;
			break;
		case 's':
		case 'B':
			if (units_parse_count(optarg, &v) != 0 || v < 1 || v != floor(v) || v > 1e12) {
				fprintf(stderr, "pplan calibrate: --%s must be a whole number from 1 up, got '%s'\n",
					c == 's' ? "seq" : "max-bytes", optarg);
				return 2;
			}
			if (c == 's')
				po->seq = (long)v;
			else
				po->max_bytes = v;
			break;
		case ':':
			fprintf(stderr, "pplan calibrate: %s needs a value\n", opt);
			return 2;
		default: /* an unknown option, or an argument (1) */
			fprintf(stderr, "pplan calibrate: unknown option '%s' (see pplan calibrate --help)\n",
				c == 1 ? optarg : opt);
			return 2;
		}
	}
	if (!strcmp(backend, "cpu")) {
		cfg->backend = CAL_CPU;
		if (prec && strcmp(prec, "fp32") != 0) {
			fprintf(stderr, "pplan calibrate: the CPU backend computes in fp32, not %s\n", prec);
			return 2;
		}
		po->precision = PREC_FP32;
	} else if (!strcmp(backend, "cuda")) {
		cfg->backend = CAL_CUDA;
		po->precision = PREC_BF16;
		if (prec && !strcmp(prec, "fp32"))
			po->precision = PREC_FP32;
		else if (prec && precision_parse(prec, &po->precision) != 0) {
			fprintf(stderr, "pplan calibrate: --precision must be bf16, fp16 or fp32, got '%s'\n", prec);
			return 2;
		}
		if (po->precision == PREC_FP8) {
			fprintf(stderr, "pplan calibrate: the CUDA backend has no fp8 GEMM to measure\n");
			return 2;
		}
	} else {
		fprintf(stderr, "pplan calibrate: --backend must be cpu or cuda, got '%s'\n", backend);
		return 2;
	}
	return -1;
}

/* ---- tables ------------------------------------------------------------------ */

static void print_gemm(const struct cal_plan *p)
{
	static const struct table_col cols[] = {
		{ "m", "", 7, 0 }, { "n", "", 7, 0 }, { "k", "", 7, 0 }, { "work", "(GFLOP)", 8, 0 },
		{ "time", "(ms)", 10, 0 }, { "rate", "(TFLOP/s)", 10, 0 }, { "iters", "", 6, 0 },
		{ "shape of", "", 28, 1 },
	};
	printf("#\n# GEMM %s, C (m,n) = A (m,k) B (k,n), all ranks at once; the slowest rank's mean, best of the timed loops\n",
	       precision_name(p->opts.precision));
	table_header(stdout, cols, 8);
	for (int i = 0; i < p->n_gemm; i++) {
		const struct cal_gemm_point *g = &p->gemm[i];
		char c[8][48];
		const char *cp[8];
		snprintf(c[0], 48, "%ld", g->m);
		snprintf(c[1], 48, "%ld", g->n);
		snprintf(c[2], 48, "%ld", g->k);
		snprintf(c[3], 48, "%.3f", 2.0 * g->m * g->n * (double)g->k / 1e9);
		snprintf(c[4], 48, "%.4f", 1e3 * g->time_s);
		snprintf(c[5], 48, "%.4f", g->tflops);
		snprintf(c[6], 48, "%ld", g->iters);
		snprintf(c[7], 48, "%s", p->gemm_what[i]);
		for (int k = 0; k < 8; k++)
			cp[k] = c[k];
		table_row(stdout, cols, 8, cp);
	}
	if (p->n_gemm_skipped)
		printf("# %d shapes of more than %.0f GFLOP or the memory budget left out\n",
		       p->n_gemm_skipped, p->gemm_flop_cap / 1e9);
}

static void print_bw(const struct cal_plan *p, enum cal_elem kind)
{
	static const struct table_col cols[] = {
		{ "bytes", "(B)", 12, 0 }, { "time", "(us)", 12, 0 }, { "bandwidth", "(GB/s)", 10, 0 },
		{ "iters", "", 6, 0 },
	};
	static const char *const what[CAL_ELEM_COUNT] = {
		[CAL_ELEM_STREAM] = "a streaming kernel, out = a + b",
		[CAL_ELEM_LAYER] = "a layer's element-wise kernels as exec runs them (norms, biases, Q/K/V layout,\n#   residuals, activation; forward and backward), in the cost model's bytes (sim/MODEL.md 12)",
		[CAL_ELEM_ADAM] = "the AdamW step (fp32 parameters, moments and gradients)",
	};
	printf("#\n# %s: bytes read and written per call\n", what[kind]);
	table_header(stdout, cols, 4);
	for (int i = 0; i < p->n_bw[kind]; i++) {
		const struct cal_bw_point *b = &p->bw[kind][i];
		char c[4][32];
		const char *cp[4] = { c[0], c[1], c[2], c[3] };
		snprintf(c[0], 32, "%.0f", b->bytes);
		snprintf(c[1], 32, "%.2f", 1e6 * b->time_s);
		snprintf(c[2], 32, "%.3f", b->gbps);
		snprintf(c[3], 32, "%ld", b->iters);
		table_row(stdout, cols, 4, cp);
	}
	if (p->n_bw_skipped[kind])
		printf("# %d larger sizes left out: past the memory budget of %.2f GiB per rank (a quarter of the memory a rank has)\n",
		       p->n_bw_skipped[kind], p->mem_budget / GIB);
}

static void print_attn(const struct cal_plan *p)
{
	static const struct table_col cols[] = {
		{ "batch", "", 5, 0 }, { "heads", "", 5, 0 }, { "kv", "", 4, 0 },
		{ "seq", "(tokens)", 8, 0 }, { "dim", "", 4, 0 }, { "kernel", "", 7, 1 },
		{ "fwd", "(ms)", 9, 0 }, { "fwd", "(TFLOP/s)", 9, 0 }, { "bwd", "(ms)", 9, 0 },
		{ "bwd", "(TFLOP/s)", 9, 0 },
	};
	printf("#\n# attention core, causal; FLOPs count the whole s x s square (4 b h s^2 d forward, twice backward)\n");
	table_header(stdout, cols, 10);
	for (int i = 0; i < p->n_attn; i++) {
		const struct cal_attn_point *a = &p->attn[i];
		char c[10][32];
		const char *cp[10];
		snprintf(c[0], 32, "%ld", a->batch);
		snprintf(c[1], 32, "%ld", a->heads);
		snprintf(c[2], 32, "%ld", a->kv_heads);
		snprintf(c[3], 32, "%ld", a->seq);
		snprintf(c[4], 32, "%ld", a->head_dim);
		snprintf(c[5], 32, "%s", a->fused ? "fused" : "3-step");
		snprintf(c[6], 32, "%.3f", 1e3 * a->fwd_s);
		snprintf(c[7], 32, "%.4f", a->fwd_tflops);
		snprintf(c[8], 32, "%.3f", 1e3 * a->bwd_s);
		snprintf(c[9], 32, "%.4f", a->bwd_tflops);
		for (int k = 0; k < 10; k++)
			cp[k] = c[k];
		table_row(stdout, cols, 10, cp);
	}
}

void calibrate_print_coll(FILE *f, const struct cal_coll *c)
{
	static const struct table_col cols[] = {
		{ "size", "(B)", 12, 0 }, { "count", "(elements)", 12, 0 }, { "type", "", 6, 1 },
		{ "redop", "", 5, 1 }, { "root", "", 4, 0 }, { "time", "(us)", 11, 0 },
		{ "algbw", "(GB/s)", 8, 0 }, { "busbw", "(GB/s)", 8, 0 }, { "#wrong", "", 6, 0 },
	};
	int reduces = c->op == COLL_ALLREDUCE || c->op == COLL_REDUCESCATTER;
	fprintf(f, "#\n# %s: groups of %d ranks (%d at once), link %s\n", cal_coll_name(c->op),
		c->ranks, c->groups, c->link);
	table_header(f, cols, 9);
	for (int i = 0; i < c->n; i++) {
		const struct cal_coll_point *p = &c->pts[i];
		char s[9][32];
		const char *cp[9];
		snprintf(s[0], 32, "%.0f", p->bytes);
		snprintf(s[1], 32, "%ld", p->count);
		snprintf(s[2], 32, "float");
		snprintf(s[3], 32, "%s", reduces ? "sum" : "none");
		snprintf(s[4], 32, "%s", c->op == COLL_BROADCAST ? "0" : "-1");
		snprintf(s[5], 32, "%.2f", 1e6 * p->time_s);
		snprintf(s[6], 32, "%.3f", p->algbw_gbps);
		snprintf(s[7], 32, "%.3f", p->busbw_gbps);
		snprintf(s[8], 32, "%ld", p->wrong);
		for (int k = 0; k < 9; k++)
			cp[k] = s[k];
		table_row(f, cols, 9, cp);
	}
	fprintf(f, "# Out of bounds values : %ld %s\n", cal_coll_wrong(c), cal_coll_wrong(c) ? "FAILED" : "OK");
	fprintf(f, "# Avg bus bandwidth    : %.4f GB/s\n", c->avg_busbw_gbps);
	fprintf(f, "# alpha-beta fit       : alpha %.2f us, busbw %.4f GB/s\n", 1e6 * c->alpha_s,
		c->busbw_gbps);
	for (int i = 0; i < c->n; i++)
		if (c->pts[i].exposed_s > 0) {
			if (c->op == COLL_SENDRECV)
				fprintf(f, "# as a step meets it   : each time is a receive while the "
					   "sender computes (at least the back-to-back loop's); what "
					   "both ranks wait after posting and computing (the profile's "
					   "exposed_s):\n#  ");
			else
				fprintf(f, "# as a step meets it   : the call from the group's last "
					   "arrival after 2 ms of GEMMs on every rank, at least the "
					   "back-to-back loop's (the profile's exposed_s):\n#  ");
			for (int k = 0, said = 0; k < c->n; k++)
				if (c->pts[k].bytes >= 4096 && c->pts[k].exposed_s > 0)
					fprintf(f, "%s %.0f B %.1f us", said++ ? "," : "",
						c->pts[k].bytes, 1e6 * c->pts[k].exposed_s);
			fprintf(f, "\n");
			break;
		}
}

/* ---- the command ----------------------------------------------------------------- */

static void header(const struct cal_session *s, const struct cal_plan *p, const char *cmd,
		   double peak)
{
	char date[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("# pplan calibrate: pplan %s, git %s, %s\n", PPLAN_VERSION, PPLAN_GIT_HASH, date);
	printf("# command: %s\n", cmd);
	printf("# %d ranks on %d host%s (%s)\n", cal_size(s), cal_nodes(s),
	       cal_nodes(s) == 1 ? "" : "s", cal_hosts(s));
	printf("# device: %s\n# libraries: %s\n", cal_device(s), cal_libraries(s));
	printf("# shapes: %s%s\n", p->opts.model_arg ? "the GEMMs of " : "the default grid",
	       p->opts.model_arg ? p->model.name : "");
	printf("# peak: sgemm probe 768^3 %.4f TFLOP/s per rank (the MFU denominator on the CPU)\n",
	       peak);
}

int cmd_calibrate(int argc, char **argv)
{
	struct cal_plan_opts po = { 0 };
	struct cal_config cfg = { CAL_CPU, 0, 0.2, 2, 3, 1000, 3 };
	struct cal_session *s = NULL;
	struct cal_plan *plan = NULL;
	struct perr e = { { 0 } };
	enum pplan_status st;
	const char *out = NULL;
	char cmd[1024];
	int rc, rank;
	double peak;

	rc = parse_opts(argc, argv, &po, &cfg, &out);
	if (rc >= 0)
		return rc;
	if (out && (st = output_check(out, "--out", &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	if (po.quick)
		cfg.target_s = 0.05, cfg.warmup = 1, cfg.min_iters = 2, cfg.max_iters = 200,
		cfg.repeats = 2;
	cfg.dtype = calibrate_plan_dtype(po.precision);
	st = calibrate_plan_new(&po, &plan, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	command_line(argc, argv, cmd, sizeof cmd);
	st = cal_open(&argc, &argv, &cfg, &s, &e);
	if (st != PPLAN_OK) {
		calibrate_plan_free(plan);
		return cli_fail(st, &e); /* MPI is down: every rank says it */
	}
	peak = cal_peak_tflops(s);
	calibrate_plan_sizes(plan, s);
	if (cal_rank(s) == 0) {
		header(s, plan, cmd, peak);
		fflush(stdout);
	}
	st = cal_gemm(s, plan->gemm, plan->n_gemm, &e);
	if (st == PPLAN_OK && cal_rank(s) == 0)
		print_gemm(plan), fflush(stdout);
	for (int k = 0; k < CAL_ELEM_COUNT && st == PPLAN_OK; k++) {
		st = cal_elementwise(s, (enum cal_elem)k, plan->bw[k], plan->n_bw[k], &plan->layer,
				     &e);
		if (st == PPLAN_OK && cal_rank(s) == 0)
			print_bw(plan, (enum cal_elem)k), fflush(stdout);
	}
	if (st == PPLAN_OK)
		st = cal_attention(s, plan->attn, plan->n_attn, &e);
	if (st == PPLAN_OK && cal_rank(s) == 0)
		print_attn(plan), fflush(stdout);
	for (int i = 0; i < plan->n_coll && st == PPLAN_OK; i++) {
		st = cal_collective(s, plan->coll_op[i], plan->coll_ranks[i], plan->sizes,
				    plan->n_sizes, &plan->coll[i], &e);
		if (st == PPLAN_OK && cal_rank(s) == 0) {
			calibrate_print_coll(stdout, &plan->coll[i]);
			fflush(stdout);
		}
	}
	if (st == PPLAN_OK && cal_rank(s) == 0) {
		long wrong = 0;
		for (int i = 0; i < plan->n_coll; i++)
			wrong += cal_coll_wrong(&plan->coll[i]);
		if (wrong)
			st = perr_set(&e, PPLAN_ESYSTEM,
				      "%ld elements of the collectives came back wrong: this machine's communication is broken, no profile written",
				      wrong);
		else if (out) {
			calibrate_plan_print_dropped(stdout, plan);
			st = calibrate_plan_save(plan, s, peak, cmd, out, &e);
		}
		if (st == PPLAN_OK && out)
			printf("#\n# wrote %s (pplan.profile/1)\n", out);
	}
	st = cal_agree(s, st, &e);
	rank = cal_rank(s);
	cal_close(s);
	calibrate_plan_free(plan);
	if (st == PPLAN_OK)
		return 0;
	/* every rank has the same sentence: rank 0 says it */
	return rank == 0 ? cli_fail(st, &e) : status_exit_code(st);
}
