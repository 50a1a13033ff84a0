/*
 * bench_exec_gemm.c: the sgemm rate inside `pplan exec` against a
 * standalone OpenBLAS sgemm of the same shapes, measured in one run.
 *
 * pplan exec, run with PPLAN_EXEC_GEMM_STATS=FILE, writes FILE.rankN:
 * one line per GEMM shape it called ("ta tb m n k calls seconds").  This
 * program times the same shapes, each as many times as exec called it,
 * outside any executor (same thread count: OPENBLAS_NUM_THREADS), and
 * prints both rates and their ratio per shape and over all of them:
 * once with the operands hot in cache (the same buffers call after call,
 * the best a GEMM can do), once cold (a 64 MiB buffer streamed between
 * calls, untimed, as a training step's next GEMM finds its weights after
 * the rest of the model went through the caches).  Not a test: a
 * benchmark (BENCHMARKS.md, "pplan exec").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

/* The thread's CPU time, as pplan exec's record (exec/backend_cpu.c):
 * what each GEMM cost, whatever else the machine runs. */
static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define FLUSH_BYTES (64L << 20)

static char *flush_buf;

/* Streams FLUSH_BYTES through the caches (not timed). */
static void flush(void)
{
	static int v;
	memset(flush_buf, ++v, FLUSH_BYTES);
}

static double sgemm(int ta, int tb, long m, long n, long k, const float *A,
		    const float *B, float *C)
{
	double t0 = now_s();
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
		    (blasint)m, (blasint)n, (blasint)k, 1.0f, A, ta ? (blasint)m : (blasint)k, B,
		    tb ? (blasint)k : (blasint)n, 1.0f, C, (blasint)n);
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	FILE *f;
	int ta, tb;
	long m, n, k, calls;
	double secs, all_flop = 0, all_exec = 0, all_alone = 0, all_cold = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_exec_gemm FILE.rankN (from PPLAN_EXEC_GEMM_STATS)\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		fprintf(stderr, "bench_exec_gemm: cannot read %s\n", argv[1]);
		return 2;
	}
	flush_buf = malloc(FLUSH_BYTES);
	if (!flush_buf) {
		fprintf(stderr, "bench_exec_gemm: out of memory\n");
		return 1;
	}
	printf("# sgemm inside pplan exec vs standalone, same shapes and call counts (%d OpenBLAS threads)\n",
	       openblas_get_num_threads());
	printf("#  ta tb      m      n      k  calls   exec    hot   cold  exec/hot exec/cold\n");
	printf("#                                     (GF/s) (GF/s) (GF/s)      (-)       (-)\n");
	while (fscanf(f, "%d %d %ld %ld %ld %ld %lf", &ta, &tb, &m, &n, &k, &calls, &secs) == 7) {
		size_t sa = (size_t)m * (size_t)k, sb = (size_t)k * (size_t)n, sc = (size_t)m * (size_t)n;
		float *A = calloc(sa, sizeof *A), *B = calloc(sb, sizeof *B), *C = calloc(sc, sizeof *C);
		double flop = 2.0 * (double)m * (double)n * (double)k * (double)calls, hot = 0, cold = 0;
		if (!A || !B || !C) {
			fprintf(stderr, "bench_exec_gemm: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < sa; i++)
			A[i] = (float)(i % 13) * 0.01f;
		for (size_t i = 0; i < sb; i++)
			B[i] = (float)(i % 7) * 0.01f;
		sgemm(ta, tb, m, n, k, A, B, C); /* page faults, OpenBLAS buffers */
		for (long c = 0; c < calls; c++)
			hot += sgemm(ta, tb, m, n, k, A, B, C);
		for (long c = 0; c < calls; c++) {
			flush();
			cold += sgemm(ta, tb, m, n, k, A, B, C);
		}
		printf("  %3d %2d %6ld %6ld %6ld %6ld %6.1f %6.1f %6.1f %8.3f %9.3f\n", ta, tb, m, n, k,
		       calls, flop / secs / 1e9, flop / hot / 1e9, flop / cold / 1e9, hot / secs,
		       cold / secs);
		all_flop += flop;
		all_exec += secs;
		all_alone += hot;
		all_cold += cold;
		free(A);
		free(B);
		free(C);
	}
	fclose(f);
	if (all_exec <= 0 || all_alone <= 0) {
		fprintf(stderr, "bench_exec_gemm: %s has no shapes\n", argv[1]);
		return 2;
	}
	printf("# all shapes: exec %.1f GFLOP/s; standalone hot %.1f (exec/hot %.3f), cold %.1f (exec/cold %.3f)\n",
	       all_flop / all_exec / 1e9, all_flop / all_alone / 1e9, all_alone / all_exec,
	       all_flop / all_cold / 1e9, all_cold / all_exec);
	free(flush_buf);
	return 0;
}
