/*
 * bench_exec_gemm.c: the sgemm rate inside `pplan exec` against a
 * standalone OpenBLAS sgemm of the same shapes, measured in one run.
 *
 * pplan exec, run with PPLAN_EXEC_GEMM_STATS=FILE, writes FILE.rankN:
 * one line per GEMM shape it called ("ta tb m n k calls seconds").  This
 * program times the same shapes, each as many times as exec called it,
 * outside any executor (same thread count: OPENBLAS_NUM_THREADS), and
 * prints both rates and their ratio per shape and over all of them.  Not
 * a test: a benchmark (BENCHMARKS.md, "pplan exec").
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cblas.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	FILE *f;
	int ta, tb;
	long m, n, k, calls;
	double secs, all_flop = 0, all_exec = 0, all_alone = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_exec_gemm FILE.rankN (from PPLAN_EXEC_GEMM_STATS)\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		fprintf(stderr, "bench_exec_gemm: cannot read %s\n", argv[1]);
		return 2;
	}
	printf("# sgemm inside pplan exec vs standalone, same shapes and call counts (%d OpenBLAS threads)\n",
	       openblas_get_num_threads());
	printf("#  ta tb      m      n      k  calls   exec  alone  ratio\n");
	printf("#                                     (GF/s) (GF/s)  (-)\n");
	while (fscanf(f, "%d %d %ld %ld %ld %ld %lf", &ta, &tb, &m, &n, &k, &calls, &secs) == 7) {
		size_t sa = (size_t)m * (size_t)k, sb = (size_t)k * (size_t)n, sc = (size_t)m * (size_t)n;
		float *A = calloc(sa, sizeof *A), *B = calloc(sb, sizeof *B), *C = calloc(sc, sizeof *C);
		double flop = 2.0 * (double)m * (double)n * (double)k * (double)calls, t0, alone;
		if (!A || !B || !C) {
			fprintf(stderr, "bench_exec_gemm: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < sa; i++)
			A[i] = (float)(i % 13) * 0.01f;
		for (size_t i = 0; i < sb; i++)
			B[i] = (float)(i % 7) * 0.01f;
		/* one untimed call: page faults, OpenBLAS buffers */
		cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
			    (blasint)m, (blasint)n, (blasint)k, 1.0f, A, ta ? (blasint)m : (blasint)k, B,
			    tb ? (blasint)k : (blasint)n, 1.0f, C, (blasint)n);
		t0 = now_s();
		for (long c = 0; c < calls; c++)
			cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
				    tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n, (blasint)k,
				    1.0f, A, ta ? (blasint)m : (blasint)k, B, tb ? (blasint)k : (blasint)n,
				    1.0f, C, (blasint)n);
		alone = now_s() - t0;
		printf("  %3d %2d %6ld %6ld %6ld %6ld %6.1f %6.1f %6.3f\n", ta, tb, m, n, k, calls,
		       flop / secs / 1e9, flop / alone / 1e9, (flop / secs) / (flop / alone));
		all_flop += flop;
		all_exec += secs;
		all_alone += alone;
		free(A);
		free(B);
		free(C);
	}
	fclose(f);
	if (all_exec <= 0 || all_alone <= 0) {
		fprintf(stderr, "bench_exec_gemm: %s has no shapes\n", argv[1]);
		return 2;
	}
	printf("# all shapes: exec %.1f GFLOP/s, standalone %.1f GFLOP/s, ratio %.3f\n",
	       all_flop / all_exec / 1e9, all_flop / all_alone / 1e9, all_alone / all_exec);
	return 0;
}
