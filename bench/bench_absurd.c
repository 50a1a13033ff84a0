/*
 * bench_absurd.c: absurd but valid requests, and the inputs that once
 * ran for minutes or took gigabytes (F09, F10, F14), timed against the
 * real pplan binary.  Each case runs REPEAT times; the table gives the
 * median wall time, the largest peak resident set (wait4's ru_maxrss of
 * the child), the exit status and, for a refusal, the sentence (the
 * bound that was hit).  The targets (issue 11): none above 10 s or 1 GiB.
 *
 *   ./build/bench/bench_absurd ./build/pplan .   (binary, source tree)
 *
 * A benchmark, not a test: it prints, it asserts nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 3
#define MAX_ARGS 24

struct bcase {
	const char *what;
	const char *args[MAX_ARGS]; /* "@" + path: relative to the source tree */
};

static const struct bcase cases[] = {
	{"10T dense model on 1,048,576 GPUs",
	 {"search", "--model", "@bench/models/dense-10t.json", "--gpus", "1048576", "--top", "3", NULL}},
	{"1M-token sequences (llama3-8b, 512 GPUs)",
	 {"search", "--model", "llama3-8b", "--gpus", "512", "--seq", "1048576", "--top", "3", NULL}},
	{"1M-token sequence, one layout with cp=64",
	 {"predict", "--model", "llama3-8b", "--gpus", "512", "--seq", "1048576", "--layout", "tp=8,cp=64", NULL}},
	{"2^20 experts on 64 GPUs (F09)",
	 {"search", "--model", "@tests/fixtures/fuzz-findings/F09-model-moe-experts-search-hang/input-2p20.json", "--gpus", "64", "--top", "1", NULL}},
	{"2^20 experts on 1,048,576 GPUs",
	 {"search", "--model", "@tests/fixtures/fuzz-findings/F09-model-moe-experts-search-hang/input-2p20.json", "--gpus", "1048576", "--top", "1", NULL}},
	{"14,336 experts (F09)",
	 {"search", "--model", "@tests/fixtures/fuzz-findings/F09-model-moe-experts-search-hang/input.json", "--gpus", "64", "--top", "1", NULL}},
	{"436,808 experts, HF config (F09)",
	 {"search", "--model", "@tests/fixtures/fuzz-findings/F09-model-moe-experts-search-hang/input-hf-436808.json", "--gpus", "64", "--top", "1", NULL}},
	{"gbs=2^31 in a layout (F10)",
	 {"predict", "--model", "llama3-8b", "--gpus", "64", "--layout", "pp=2,dp=32,gbs=2147483648", NULL}},
	{"gbs=2^36 in a layout (F10)",
	 {"predict", "--model", "llama3-8b", "--gpus", "64", "--layout", "pp=2,dp=32,gbs=68719476704", NULL}},
	{"--global-batch 1e9 (F10)",
	 {"search", "--model", "llama3-8b", "--gpus", "64", "--global-batch", "1000000000", "--top", "1", NULL}},
	{"simulate gbs=2^31 (refused)",
	 {"simulate", "--model", "llama3-8b", "--gpus", "64", "--layout", "pp=2,dp=32,gbs=2147483648", NULL}},
	{"HF config with a 1-token context (F14)",
	 {"search", "--model", "@tests/fixtures/fuzz-findings/F14-hf-seq1-slow-search/input.json", "--gpus", "64", "--top", "1", NULL}},
	{"largest simulated pipeline, pp*vp*m = 2^18",
	 {"predict", "--model", "megatron-1t", "--gpus", "8192", "--layout", "tp=8,pp=64,dp=16,vp=2,gbs=32768", NULL}},
	{"70B on 1,048,576 GPUs",
	 {"search", "--params", "70B", "--gpus", "1048576", "--top", "3", NULL}},
	{"--params 1e15 (refused)",
	 {"search", "--params", "1e15", "--gpus", "8", NULL}},
	{"--gpus 10^7 (refused)",
	 {"search", "--params", "70B", "--gpus", "10000000", NULL}},
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Runs pplan once; *secs, *rss_kib, *status; the first stderr line in msg. */
static int run_once(const char *bin, const char *src, const struct bcase *c,
		    double *secs, long *rss_kib, int *status, char *msg, size_t len)
{
	char paths[MAX_ARGS][1024];
	char *argv[MAX_ARGS + 2];
	char errfile[] = "/tmp/bench-absurd-XXXXXX";
	int fd = mkstemp(errfile), n = 0, st = 0;
	struct rusage ru;
	double t0;
	pid_t pid;
	FILE *f;

	if (fd < 0)
		return -1;
	argv[n++] = (char *)bin;
	for (int i = 0; c->args[i]; i++) {
		if (c->args[i][0] == '@') {
			snprintf(paths[i], sizeof paths[i], "%s/%s", src, c->args[i] + 1);
			argv[n++] = paths[i];
		} else {
			argv[n++] = (char *)c->args[i];
		}
	}
	argv[n] = NULL;
	t0 = now();
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid) {
		close(fd);
		unlink(errfile);
		return -1;
	}
	*secs = now() - t0;
	*rss_kib = ru.ru_maxrss;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	msg[0] = '\0';
	if ((f = fopen(errfile, "r")) != NULL) {
		if (fgets(msg, (int)len, f))
			msg[strcspn(msg, "\n")] = '\0';
		fclose(f);
	}
	close(fd);
	unlink(errfile);
	return 0;
}

int main(int argc, char **argv)
{
	const char *bin = argc > 1 ? argv[1] : "./build/pplan";
	const char *src = argc > 2 ? argv[2] : ".";
	double worst_s = 0;
	long worst_kib = 0;

	printf("# bench_absurd: %s, %d runs per case, median wall time, largest peak RSS\n",
	       bin, REPEAT);
	printf("# %-46s %9s %10s %5s  %s\n", "case", "time", "peak RSS", "exit",
	       "refusal (the bound hit)");
	printf("# %-46s %9s %10s %5s\n", "", "(s)", "(MiB)", "");
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		double t[REPEAT];
		long rss = 0;
		int status = 0;
		char msg[512] = "";
		for (int r = 0; r < REPEAT; r++) {
			long kib;
			if (run_once(bin, src, &cases[k], &t[r], &kib, &status, msg,
				     sizeof msg) != 0) {
				fprintf(stderr, "bench_absurd: cannot run %s\n", bin);
				return 1;
			}
			if (kib > rss)
				rss = kib;
		}
		qsort(t, REPEAT, sizeof t[0], cmp_double);
		printf("  %-46s %9.3f %10.1f %5d  %s\n", cases[k].what, t[REPEAT / 2],
		       (double)rss / 1024.0, status, status == 2 ? msg : "");
		if (t[REPEAT / 2] > worst_s)
			worst_s = t[REPEAT / 2];
		if (rss > worst_kib)
			worst_kib = rss;
	}
	printf("# worst: %.3f s, %.1f MiB (targets: 10 s, 1024 MiB)\n", worst_s,
	       (double)worst_kib / 1024.0);
	return 0;
}
