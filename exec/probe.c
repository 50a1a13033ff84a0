/*
 * probe.c: the CPU as a device the cost model can price.  A short sgemm
 * probe (the MFU denominator of a CPU run, as the GPU table's peak is a
 * GPU's) and a memcpy probe, run by every rank at once after a barrier,
 * so that ranks sharing cores measure what each gets when all compute.
 * From them a cluster description of this host for sim's prediction:
 * one node, the ranks as its devices, MPI's shared memory as the links.
 * A `pplan calibrate` profile replaces these rough figures with curves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "exec_internal.h"

#define PROBE_N 768          /* sgemm probe: 768^3, 0.9 GFLOP */
#define PROBE_COPY (16L << 20) /* memcpy probe: 16 MiB */
#define PROBE_REPS 4

void probe_cpu(struct exec *x)
{
	size_t nn = (size_t)PROBE_N * PROBE_N;
	float *a = calloc(nn, sizeof *a), *b = calloc(nn, sizeof *b), *c = calloc(nn, sizeof *c);
	char *s = malloc(PROBE_COPY), *d = malloc(PROBE_COPY);
	double best = 1e30, bestc = 1e30, v[2];

	if (a && b && c && s && d) {
		for (size_t i = 0; i < nn; i++) {
			a[i] = (float)(i % 7) * 0.1f;
			b[i] = (float)(i % 5) * 0.1f;
		}
		memset(s, 1, PROBE_COPY);
		memset(d, 0, PROBE_COPY);
		MPI_Barrier(x->world);
		for (int r = 0; r < PROBE_REPS; r++) {
			double t0 = exec_now(), t1;
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, PROBE_N, PROBE_N,
				    PROBE_N, 1.0f, a, PROBE_N, b, PROBE_N, 0.0f, c, PROBE_N);
			t1 = exec_now();
			if (t1 - t0 < best)
				best = t1 - t0;
			t0 = exec_now();
			memcpy(d, s, PROBE_COPY);
			t1 = exec_now();
			if (t1 - t0 < bestc)
				bestc = t1 - t0;
		}
	}
	v[0] = best < 1e30 ? 2.0 * PROBE_N * PROBE_N * (double)PROBE_N / best / 1e12 : 0;
	/* memcpy reads and writes: twice the bytes cross the memory bus */
	v[1] = bestc < 1e30 ? 2.0 * (double)PROBE_COPY / bestc / 1e9 : 0;
	MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, x->world);
	x->probe_tflops = v[0] / x->size;
	x->probe_gbps = v[1] / x->size;
	free(a);
	free(b);
	free(c);
	free(s);
	free(d);
}

static double host_mem_gib(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psz <= 0)
		return 0;
	return (double)pages * (double)psz / (1024.0 * 1024.0 * 1024.0);
}

void probe_machine(const struct exec *x, struct cluster *c)
{
	int per_host = x->local_size > 0 ? x->local_size : 1, nodes = x->size / per_host;
	char desc[64];
	/* MPI over shared memory: a copy in, a copy out */
	struct cpu_ranks r = { .per_host = per_host, .hosts = nodes > 0 ? nodes : 1,
			       .tflops = x->probe_tflops, .gbps = x->probe_gbps,
			       .shm_gbps = x->probe_gbps / 4.0, .shm_latency_s = 2.0e-6,
			       .mem_gib = host_mem_gib() / per_host, .description = desc,
			       .source = "sgemm and memcpy probes of pplan exec" };
	snprintf(desc, sizeof desc, "CPU rank (%d per host)", x->local_size);
	cluster_cpu_ranks(&r, c);
}
