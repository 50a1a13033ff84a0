/*
 * cmd_exec.c: `pplan exec`: run one layout for real under mpirun or srun
 * (one process per GPU or CPU slot), measure it, and print and write the
 * measurement beside sim's prediction for the same model, layout and
 * machine (pplan.report/1).  Every rank parses the same command line;
 * only rank 0 speaks, and every rank leaves with the same exit status.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_common.h"
#include "exec.h"
#include "host.h"
#include "jsonio.h"
#include "memory.h"
#include "profile.h"
#include "run_report.h"
#include "version.h"
#include "units.h"


static void usage(FILE *f)
{
	struct exec_opts d;
	exec_opts_default(&d);
	fprintf(f,
		"usage: mpirun -np N pplan exec --model NAME|FILE --layout STR [options]\n"
		"       srun -n N pplan exec ...\n\n"
		"Runs the layout for real, one process per GPU (or CPU slot), and measures it.\n\n"
		"  --model NAME|FILE      zoo model, pplan.model/1 JSON or HF config.json\n"
		"  --layout STR           tp=2,pp=2,dp=1,mbs=1,gbs=16,vp=1,sp=on,recompute=none,zero=1,schedule=1f1b\n"
		"                         (omitted: dp fills the ranks; gbs = mbs x dp x 4 x pp)\n"
		"  --seq N                tokens per sequence (default: the model's)\n"
		"  --steps N              timed steps (default %ld)\n"
		"  --warmup K             untimed steps before them, K < N (default %ld)\n"
		"  --backend B            auto (default: CUDA where a GPU answers, else the CPU), cuda, cpu\n"
		"  --precision P          fp32 (the CPU; default there) or bf16 (the CUDA default)\n"
		"  --gpu TYPE             the GPU to price the prediction with (default: as detected)\n"
		"  --profile FILE         price the prediction with a pplan.profile/1 (pplan calibrate's\n"
		"                         measured curves, pplan fit's constants) of this device\n"
		"  --seed X               weights and batches (default %llu)\n"
		"  --report FILE          write pplan.report/1 (predicted, measured, error)\n"
		"  --json FILE            the same as --report\n"
		"  --trace FILE           Chrome trace of the last step: a process per rank, compute and\n"
		"                         communication tracks (Perfetto, chrome://tracing)\n"
		"  --check                compare step 1's gradients element by element (within rounding's\n"
		"                         bound) and every step's loss (fp32: 1e-5 x step; bf16: 1e-2 x step)\n"
		"                         with the same run on one rank\n"
		"  --timeout S            a rank that makes no progress for S seconds ends the run (default %.0f s)\n"
		"  --fault RANK:STEP:KIND a failure or a wrong result on purpose, on rank RANK at the start\n"
		"                         of step STEP (from 1, warm-up included), to see that it is caught:\n"
		"                         exit, crash (SIGSEGV), kill (SIGKILL), hang, slow:MS (every step\n"
		"                         from STEP on), gemm:REL (the first forward GEMM's middle output\n"
		"                         element times 1 + REL), message:REL (the first pipeline\n"
		"                         message's, pp > 1);\n"
		"                         PPLAN_EXEC_FAULT takes the same text where a launcher cannot\n"
		"                         pass options\n"
		"  --force                run even where the memory model says the model does not fit\n"
		"  --help                 this text\n\n"
		"Exit status: 0 done; 2 bad input or an impossible layout (one sentence on rank 0);\n"
		"1 a failure of the run (a rank died or hung, MPI, CUDA), or a failed --check.\n",
		d.steps, d.warmup, (unsigned long long)d.seed, d.timeout_s);
}

struct exec_args {
	const char *model, *layout, *backend, *precision, *gpu, *report, *trace, *profile;
	const char *fault;
	long seq, steps, warmup;
	double timeout;
	unsigned long long seed;
	int check, force, help;
	int steps_set, warmup_set;
};

static int parse_args(int argc, char **argv, struct exec_args *a, struct perr *e)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "layout", required_argument, NULL, 'l' },
		{ "seq", required_argument, NULL, 'q' },
		{ "steps", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "backend", required_argument, NULL, 'b' },
		{ "precision", required_argument, NULL, 'p' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 'S' },
		{ "report", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'r' },
		{ "trace", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'P' },
		{ "check", no_argument, NULL, 'c' },
		{ "fault", required_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': a->model = optarg; break;
		case 'l': a->layout = optarg; break;
		case 'b': a->backend = optarg; break;
		case 'p': a->precision = optarg; break;
		case 'g': a->gpu = optarg; break;
		case 'r':
			/* Checked before the run: a report that cannot be
			 * written is known before any rank starts. */
			if (output_check(optarg, "--report", e) != PPLAN_OK)
				return PPLAN_EINPUT;
			a->report = optarg;
			break;
		case 't':
			if (output_check(optarg, "--trace", e) != PPLAN_OK)
				return PPLAN_EINPUT;
			a->trace = optarg;
			break;
		case 'P': a->profile = optarg; break;
		case 'c': a->check = 1; break;
		case 'F': a->fault = optarg; break;
		case 'f': a->force = 1; break;
		case 'h': a->help = 1; break;
		case 'q':
			if (units_parse_whole(optarg, &a->seq) != 0 || a->seq > MODEL_MAX_DIM)
				return perr_set(e, PPLAN_EINPUT, "--seq must be a positive number of tokens up to %ld, got '%s'",
						MODEL_MAX_DIM, optarg);
			break;
		case 's':
			a->steps = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end || a->steps < 1 || a->steps > 100000)
				return perr_set(e, PPLAN_EINPUT, "--steps must be a whole number from 1 to 100000, got '%s'", optarg);
			a->steps_set = 1;
			break;
		case 'w':
			a->warmup = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end || a->warmup < 0 || a->warmup > 100000)
				return perr_set(e, PPLAN_EINPUT, "--warmup must be a whole number from 0 to 100000, got '%s'", optarg);
			a->warmup_set = 1;
			break;
		case 'S':
			a->seed = strtoull(optarg, &end, 10);
			if (*optarg == '\0' || *end)
				return perr_set(e, PPLAN_EINPUT, "--seed must be a whole number, got '%s'", optarg);
			break;
		case 'T':
			a->timeout = strtod(optarg, &end);
			if (*optarg == '\0' || *end || !(a->timeout > 0) || !isfinite(a->timeout))
				return perr_set(e, PPLAN_EINPUT, "--timeout must be a positive number of seconds, got '%s'", optarg);
			break;
		default:
			return perr_set(e, PPLAN_EINPUT, "pplan exec: unknown or incomplete option '%s' (see pplan exec --help)",
					argv[optind - 1]);
		}
	}
	if (optind < argc)
		return perr_set(e, PPLAN_EINPUT, "pplan exec: unexpected argument '%s'", argv[optind]);
	return PPLAN_OK;
}

/* Refuses a layout whose model states and activations (sim's memory
 * model, without a GPU's context and buffers) exceed what a rank has. */
static enum pplan_status fits(const struct exec_opts *o, const struct job *j, struct perr *e)
{
	struct mem_breakdown mem;
	double cap = exec_rank_memory_bytes(o), need;
	if (!isfinite(cap))
		return PPLAN_OK;
	memory_peak(&j->model, &j->cluster, &o->layout, &j->opts, &mem);
	need = mem.total - mem.other;
	if (need > cap)
		return perr_set(e, PPLAN_EINPUT,
				"the memory model puts %.1f GiB on a rank of pipeline stage %d, more than the %.1f GiB a rank has here (host memory / ranks on the host); --force runs it anyway",
				need / GIB, mem.stage, cap / GIB);
	return PPLAN_OK;
}

/* The options and the job (model, machine, layout completed by sim's job
 * resolver, as pplan predict completes it); the same on every rank. */
static enum pplan_status resolve(const struct exec_args *a, int size, struct job *j,
				 struct exec_opts *o, struct perr *e)
{
	enum pplan_status st;

	exec_opts_default(o);
	if (a->steps_set)
		o->steps = a->steps;
	if (a->warmup_set)
		o->warmup = a->warmup;
	if (a->warmup_set && o->warmup >= o->steps)
		return perr_set(e, PPLAN_EINPUT, "--warmup %ld must be smaller than --steps %ld", o->warmup, o->steps);
	if (a->seed)
		o->seed = a->seed;
	if (a->timeout > 0)
		o->timeout_s = a->timeout;
	/* failures and wrong values on purpose (exec/fault.c) */
	st = exec_fault_parse(a->fault ? a->fault : getenv("PPLAN_EXEC_FAULT"), &o->fault, e);
	if (st != PPLAN_OK)
		return st;
	if (!a->model)
		return perr_set(e, PPLAN_EINPUT, "--model is required (a zoo name, pplan.model/1 JSON or a HF config.json)");
	if (!a->layout)
		return perr_set(e, PPLAN_EINPUT, "--layout is required (e.g. --layout tp=2,pp=2)");
	if (a->backend) {
		if (strcmp(a->backend, "auto") == 0)
			o->backend = EXEC_BACKEND_AUTO;
		else if (strcmp(a->backend, "cpu") == 0)
			o->backend = EXEC_BACKEND_CPU;
		else if (strcmp(a->backend, "cuda") == 0)
			o->backend = EXEC_BACKEND_CUDA;
		else
			return perr_set(e, PPLAN_EINPUT, "--backend must be auto, cuda or cpu, got '%s'", a->backend);
	}
	/* auto with a CPU profile: the ranks it describes are CPU ranks */
	if (o->backend == EXEC_BACKEND_AUTO && a->profile) {
		struct profile pr;
		if ((st = profile_load(a->profile, &pr, e)) != PPLAN_OK)
			return st;
		if (!strcmp(pr.device_name, "cpu"))
			o->backend = EXEC_BACKEND_CPU;
		profile_free(&pr);
	}
	if (a->precision) {
		enum precision p;
		if (precision_parse(a->precision, &p) != 0 || (p != PREC_FP32 && p != PREC_BF16))
			return perr_set(e, PPLAN_EINPUT, "--precision must be fp32 or bf16 for pplan exec, got '%s'", a->precision);
		if (o->backend == EXEC_BACKEND_CPU && p != PREC_FP32)
			return perr_set(e, PPLAN_EINPUT, "--backend cpu computes in fp32; --precision %s needs --backend cuda", a->precision);
	}
	if (a->gpu && !gpu_find(a->gpu))
		return perr_set(e, PPLAN_EINPUT, "--gpu: unknown GPU '%s'", a->gpu);
	if (a->gpu && o->backend == EXEC_BACKEND_CPU)
		return perr_set(e, PPLAN_EINPUT, "--gpu and --backend cpu conflict: CPU ranks are priced as measured (or with a CPU --profile)");
	job_init(j);
	j->ranks = o->backend == EXEC_BACKEND_CPU ? JOB_EXEC_CPU : JOB_EXEC_GPU;
	j->model_arg = a->model;
	j->gpu_arg = a->gpu;
	j->profile_arg = a->profile;
	j->precision_arg = a->precision;
	j->seq = a->seq;
	j->gpus = size;
	if ((st = job_resolve_layout(j, a->layout, &o->layout, e)) != PPLAN_OK)
		return st;
	o->model = j->model;
	o->precision = j->opts.precision;
	o->order = j->opts.order;
	if ((st = exec_supported(o, size, e)) != PPLAN_OK)
		return st;
	if (!a->force)
		return fits(o, j, e);
	return PPLAN_OK;
}

/* The job on the machine the run found (its CPU ranks as measured, or its
 * GPU), priced through sim's one pipeline. */
static enum pplan_status predict_run(struct job *j, const struct exec_opts *o,
				     const struct run_measured *m, struct job_price *pr,
				     struct perr *e)
{
	enum pplan_status st;
	if (strcmp(m->backend, "cpu") == 0)
		st = job_set_cpu_machine(j, &m->machine, e);
	else
		st = job_set_gpu_found(j, m->device, layout_gpus(&o->layout), e);
	if (st != PPLAN_OK)
		return st;
	return job_price(j, &o->layout, 1, pr, e);
}

static void row(const char *name, const char *unit, double pred, double meas, int pts)
{
	char pe[32], me[32], er[32];
	snprintf(pe, sizeof pe, isfinite(pred) ? "%.4g" : "-", pred);
	snprintf(me, sizeof me, isfinite(meas) ? "%.4g" : "-", meas);
	if (pts)
		snprintf(er, sizeof er, isfinite(pred - meas) ? "%+.1f pts" : "-", pred - meas);
	else
		snprintf(er, sizeof er, isfinite(pred) && isfinite(meas) && meas != 0 ? "%+.1f" : "-",
			 100.0 * (pred - meas) / meas);
	printf("  %-22s %-10s %12s %12s %10s\n", name, unit, pe, me, er);
}

static void print_results(const struct exec_opts *o, const struct run_measured *m,
			  const struct job_price *pr, const struct run_check *chk)
{
	const struct layout *l = &o->layout;
	double flops = cost_model_flops(&o->model, o->model.seq, l->gbs);
	double gpus = (double)layout_gpus(l);
	double mt = flops / m->step_time_s / gpus / 1e12;

	printf("#\n#  step       loss     time\n#              (-)      (s)\n");
	for (long s = 0; s < m->steps_done; s++) {
		long t = s - o->warmup;
		if (t < 0)
			printf("  %5ld %10.5f  warm-up\n", s + 1, m->losses[s]);
		else
			printf("  %5ld %10.5f %8.4f\n", s + 1, m->losses[s], m->step_times_s[t]);
	}
	printf("#\n#  %-22s %-10s %12s %12s %10s\n", "", "", "predicted", "measured", "error");
	printf("#  %-22s %-10s %12s %12s %10s\n", "", "", "", "", "(%)");
	row("step time (median)", "s", pr ? pr->p.step_time_s : NAN, m->step_time_s, 0);
	row("throughput", "tok/s", pr ? pr->p.tokens_per_s : NAN,
	    (double)l->gbs * o->model.seq / m->step_time_s, 0);
	row("model FLOP rate", "TFLOP/s/dev", pr ? pr->p.tflops_per_gpu : NAN, mt, 0);
	row("MFU", "%", pr ? 100.0 * pr->p.mfu : NAN, m->peak_tflops > 0 ? 100.0 * mt / m->peak_tflops : NAN, 0);
	row("bubble fraction", "%", pr ? 100.0 * pr->p.bubble_fraction : NAN, 100.0 * m->bubble_fraction, 1);
	row("model memory (max rank)", "GiB", pr ? pr->p.mem.total / GIB : NAN, m->mem_peak_bytes / GIB, 0);
	printf("#  op classes, seconds per step (mean over ranks)\n");
	for (int c = 0; c < OC_COUNT; c++)
		row(op_class_key((enum op_class)c), "s", pr ? pr->tl.classes_s[c] : NAN, m->classes_s[c], 0);
	printf("# step time spread %.4f .. %.4f s over %ld timed steps; time outside timed ops %.1f %%\n",
	       m->step_min_s, m->step_max_s, o->steps, 100.0 * m->harness_overhead);
	printf("# MFU against %.3f TFLOP/s per device (%s)\n", m->peak_tflops, m->peak_source);
	printf("# memory: the model's is pplan's own buffers at their peak; the process's peak %.4f GiB (%s) holds the runtime's %.4f GiB too (MPI, %s)\n",
	       m->mem_process_peak_bytes / GIB, strcmp(m->backend, "cuda") == 0 ? "the device's" : "resident set",
	       (m->mem_process_peak_bytes - m->mem_peak_bytes) / GIB,
	       strcmp(m->backend, "cuda") == 0 ? "the CUDA context, cuBLAS, NCCL" : "OpenBLAS, the program");
	printf("# clocks: every rank's times on rank 0's clock; the largest offset %.1f us, measured within %.1f us at start\n",
	       1e6 * m->clock_offset_max_s, 1e6 * m->clock_bound_max_s);
	if (chk)
		printf("# check %s: step 1's gradients, %ld elements: largest |g - g_ref| / (|g_ref| + rms) %.2e (bound %.2e); losses of %ld steps: largest relative error %.2e (bound %.0e x step); gradient norms %.2e (not judged); step 1's data: %ld GEMMs recomputed, %ld pipeline messages hashed at both ends, %s; worst: %s\n",
		       chk->passed ? "passed" : "FAILED", chk->elements, chk->max_elem_err, chk->elem_bound,
		       chk->steps, chk->max_loss_rel_err, chk->tolerance_rel, chk->max_grad_rel_err,
		       chk->gemms_recomputed, chk->messages_hashed,
		       chk->integrity[0] ? "a difference" : "all equal to the bit", chk->worst);
}

static char *command_line(int argc, char **argv)
{
	size_t n = 16;
	char *s;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	s = malloc(n);
	if (!s)
		return NULL;
	strcpy(s, "pplan");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int cmd_exec(int argc, char **argv)
{
	struct exec_args a;
	struct exec_opts o;
	struct perr e = { { 0 } };
	struct run_measured m;
	struct run_check chk;
	struct job_price pr;
	struct job job;
	int rank = 0, size = 1, have_pred = 0, code = 0;
	enum pplan_status st;
	exec_t *x = NULL;
	char *cmd = command_line(argc, argv);
	char peak_source[64], check_reason[320], profile_note[400] = "";
	struct run_conditions now = { -1, -1, NAN, NAN };

	memset(&a, 0, sizeof a);
	memset(&m, 0, sizeof m);
	memset(&pr, 0, sizeof pr);
	/* under a launcher: the rank is a child this process watches */
	if (exec_supervise(&code)) {
		free(cmd);
		return code;
	}
	if ((st = exec_mpi_init(&argc, &argv, &rank, &size, &e)) != PPLAN_OK) {
		free(cmd);
		return cli_fail(st, &e);
	}
	/* the host's load and clock before the run starts, as calibrate
	 * records them for a profile */
	host_load_and_clock(&now.load_1m, &now.cpu_mhz);
	st = parse_args(argc, argv, &a, &e);
	if (st == PPLAN_OK && a.help) {
		if (rank == 0)
			usage(stdout);
		exec_mpi_finalize();
		free(cmd);
		return 0;
	}
	if (st == PPLAN_OK)
		st = resolve(&a, size, &job, &o, &e);
	if (st == PPLAN_OK) {
		o.force = a.force;
		o.check = a.check;
		st = exec_open(&o, &x, &e);
	}
	st = exec_agree(st, &e);
	if (st != PPLAN_OK) {
		if (rank == 0)
			fprintf(stderr, "pplan exec: %s\n", e.msg);
		exec_close(x);
		exec_mpi_finalize();
		free(cmd);
		return status_exit_code(st);
	}
	now.ranks = size;
	now.ranks_per_host = exec_ranks_per_host(x);
	if (rank == 0) {
		char lb[256];
		layout_format(&o.layout, lb, sizeof lb);
		printf("# pplan exec (pplan %s, git %s)\n", PPLAN_VERSION, PPLAN_GIT_HASH);
		printf("# model     %s: %.2f M parameters, %d layers, hidden %ld, %d heads (%d kv), vocab %ld, seq %ld, %s\n",
		       o.model.name, model_params_total(&o.model) / 1e6, o.model.layers, o.model.hidden,
		       o.model.heads, o.model.kv_heads, o.model.vocab, o.model.seq, mlp_kind_name(o.model.mlp));
		printf("# layout    %s (%ld microbatches per step)\n", lb, layout_microbatches(&o.layout));
		printf("# backend   %s\n", exec_backend_note(x));
		printf("# run       %d ranks, %ld timed steps after %ld warm-up, seed %llu, timeout %.0f s\n",
		       size, o.steps, o.warmup, (unsigned long long)o.seed, o.timeout_s);
		if (a.profile && !run_conditions_known(&job.profile_cond))
			snprintf(profile_note, sizeof profile_note,
				 "the profile does not record the ranks, load and clock it was measured under");
		else if (a.profile)
			run_conditions_differ(&job.profile_cond, job.profile_cores, &now,
					      sysconf(_SC_NPROCESSORS_ONLN), profile_note, sizeof profile_note);
		if (profile_note[0])
			printf("# profile   %s: %s; the prediction may not hold\n", a.profile, profile_note);
		fflush(stdout);
	}
	st = exec_run(x, &m, &e);
	if (st != PPLAN_OK)
		exec_abort(e.msg, status_exit_code(st) == 2 ? 2 : 1);
	if (a.check) {
		st = exec_check_run(x, &m, &chk, &e);
		if (st != PPLAN_OK)
			exec_abort(e.msg, 1);
	}
	if (a.trace) {
		struct run_timeline all;
		st = exec_trace(x, &all, &e);
		if (st != PPLAN_OK)
			exec_abort(e.msg, 1);
		if (rank == 0) {
			cJSON *doc = report_run_trace(&all);
			st = json_write_atomic(a.trace, doc, &e);
			cJSON_Delete(doc);
			if (st != PPLAN_OK)
				fprintf(stderr, "pplan exec: %s\n", e.msg), code = 1;
		}
		run_timeline_free(&all);
	}
	if (rank == 0) {
		/* On a GPU the MFU's denominator is the datasheet's dense rate of
		 * the GPU the job names (the CPU's is its sgemm probe). */
		if (!(m.peak_tflops > 0) && m.backend && strcmp(m.backend, "cpu") != 0 &&
		    job.cluster.gpu.peak_tflops[m.precision] > 0) {
			snprintf(peak_source, sizeof peak_source, "gpu table: %s", job.cluster.gpu.name);
			m.peak_tflops = job.cluster.gpu.peak_tflops[m.precision];
			m.peak_source = peak_source;
		}
		st = predict_run(&job, &o, &m, &pr, &e);
		if (st == PPLAN_OK)
			have_pred = 1;
		else
			fprintf(stderr, "pplan exec: no prediction: %s\n", e.msg);
		print_results(&o, &m, have_pred ? &pr : NULL, a.check ? &chk : NULL);
		if (a.report) {
			struct run_report rr;
			cJSON *doc;
			memset(&rr, 0, sizeof rr);
			/* a run whose --check failed trained and was timed, but
			 * computed another step than the single rank: it says so */
			rr.status = a.check && !chk.passed ? "check_failed" : "ok";
			if (a.check && !chk.passed) {
				snprintf(check_reason, sizeof check_reason, "--check: %s: %s",
					 chk.integrity[0]
						 ? "step 1's data is not what was computed"
						 : "the run differs from the single-rank reference beyond rounding",
					 chk.worst);
				rr.failure = check_reason;
			}
			rr.model = &o.model;
			rr.machine = have_pred ? &job.cluster : &m.machine;
			rr.layout = &o.layout;
			rr.opts = &job.opts;
			rr.steps = o.steps;
			rr.warmup = o.warmup;
			rr.seed = (unsigned long long)o.seed;
			rr.backend = m.backend;
			rr.dtype = precision_name(m.precision);
			rr.profile = a.profile;
			rr.conditions = &now;
			rr.profile_note = profile_note[0] ? profile_note : NULL;
			rr.check_asked = a.check;
			rr.pred = have_pred ? &pr.p : NULL;
			rr.pred_tl = have_pred ? &pr.tl : NULL;
			rr.pred_stage_mem = have_pred ? pr.stage_mem : NULL;
			rr.meas = &m;
			rr.check = a.check ? &chk : NULL;
			rr.command = cmd;
			rr.version = PPLAN_VERSION;
			rr.git_hash = PPLAN_GIT_HASH;
			doc = report_run_json(&rr);
			st = json_write_atomic(a.report, doc, &e);
			cJSON_Delete(doc);
			if (st != PPLAN_OK)
				fprintf(stderr, "pplan exec: %s\n", e.msg), code = 1;
			else
				printf("# report    %s\n", a.report);
		}
		if (a.check && !chk.passed) {
			fprintf(stderr, "pplan exec: --check failed: %s\n", chk.worst);
			code = 1;
		}
	}
	/* every rank leaves with rank 0's verdict */
	{
		struct perr ce = { { 0 } };
		st = exec_agree(code ? PPLAN_ESYSTEM : PPLAN_OK, &ce);
		code = st == PPLAN_OK ? 0 : 1;
	}
	job_price_free(&pr);
	run_measured_free(&m);
	exec_close(x);
	exec_mpi_finalize();
	free(cmd);
	return code;
}
