/*
 * cudatest.h: the harness of the CUDA test programs (cuda_kernels.c,
 * cuda_backend.c).  They are plain MPI programs (a singleton MPI_Init,
 * not Criterion: one CUDA context per process) that open the CUDA
 * backend, compare what the GPU computes with the CPU twins or plain
 * loops, print one line per check and exit 1 if one failed.  Where no
 * module, driver or GPU answers they print "skipped: no GPU (why)" and
 * exit 0.
 *
 * Tolerances: the largest |gpu - cpu| over a tensor, relative to the
 * tensor's largest |cpu| value, at most 1e-5 for fp32 storage and 1e-2
 * for bf16 and fp16 (inputs are rounded to the storage type first, so
 * both sides see the same numbers).
 */
#ifndef PPLAN_CUDATEST_H
#define PPLAN_CUDATEST_H

#include <stdint.h>

#include "backend.h"

struct ct {
	struct backend *b;          /* the CUDA backend: memory and the stream */
	const struct kern_ops *k[3];/* the module's kernels per dtype */
	void *bufs[512];            /* device buffers of the current check */
	float *hbufs[512];          /* host buffers of the current check */
	int nbufs, nhbufs, passed, failed;
	int skipped;                /* a backend that did not open: no GPU */
	uint64_t seed;
};

/* MPI_Init, then the CUDA backend of dtype: 0 ready, 1 skipped (printed;
 * ct_finish then exits CT_SKIP if no check ran), -1 failed (printed). */
int ct_open(struct ct *t, int *argc, char ***argv, enum kern_dtype dtype);
/* Closes the backend and opens one of dtype, with the same results. */
int ct_backend(struct ct *t, enum kern_dtype dtype);
/* ctest's skip code (SKIP_RETURN_CODE in tests/CMakeLists.txt): shown as
 * skipped, not passed, where no GPU answers. */
#define CT_SKIP 77
/* Closes the backend; MPI_Finalize; the exit status: 1 if a check failed,
 * CT_SKIP if none ran because no GPU answered, else 0. */
int ct_finish(struct ct *t);

/* n zeroed floats of host memory, freed by ct_release. */
float *ct_host(struct ct *t, long n);
/* A host copy of x (n floats), freed by ct_release. */
float *ct_copy(struct ct *t, const float *x, long n);
/* x rounded to dt in place. */
void ct_round(enum kern_dtype dt, float *x, long n);
/* n uniform values in [lo, hi). */
void ct_fill(struct ct *t, float *x, long n, float lo, float hi);
/* Rounds x to dtype in place (what the GPU will be given), copies it to a
 * new device buffer and returns it; fp32 buffers with dtype KD_F32. */
void *ct_dev(struct ct *t, enum kern_dtype dt, float *x, long n);
void *ct_bytes(struct ct *t, const void *src, size_t bytes);
/* After a sync: the device buffer (dtype dt, n values) as floats. */
void ct_get(struct ct *t, enum kern_dtype dt, const void *dev, long n, float *out);
/* One line "ok"/"FAIL" for got against want; infinities must match. */
void ct_check(struct ct *t, const char *what, enum kern_dtype dt,
	      const float *got, const float *want, long n, double tol);
/* The tolerance of dt: 1e-5 for fp32, 1e-2 otherwise. */
double ct_tol(enum kern_dtype dt);
/* Frees the device and host buffers of the check. */
void ct_release(struct ct *t);
/* Waits for the stream; a failure is a failed check. */
void ct_sync(struct ct *t, const char *what);

uint16_t ct_f32_to_f16(float f);
float ct_f16_to_f32(uint16_t h);

#endif
