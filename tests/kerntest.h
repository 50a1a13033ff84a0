/*
 * kerntest.h: helpers of the kernel tests (test_kernels*.c): seeded
 * random tensors, element-wise comparison with a tolerance, and central
 * finite differences of a scalar loss, the independent check of every
 * backward kernel.
 */
#ifndef PPLAN_KERNTEST_H
#define PPLAN_KERNTEST_H

#include <stdint.h>

struct krng {
	uint64_t s;
};

/* n uniform values in [lo, hi) from the generator (xorshift64*). */
void kt_fill(struct krng *r, float *x, long n, float lo, float hi);

/* 1 and nothing printed when |got[i] - want[i]| <= atol + rtol * |want[i]|
 * for every i; else 0, with the first offending elements reported as
 * failed Criterion expectations naming `what`. */
int kt_close(const float *got, const double *want, long n, double atol,
	     double rtol, const char *what);
/* The same with float references. */
int kt_closef(const float *got, const float *want, long n, double atol,
	      double rtol, const char *what);

/* sum_i x[i] * r[i] in double: the scalar loss L = <out, R> whose
 * gradient with respect to out is R. */
double kt_dot(const float *x, const float *r, long n);

/* Central differences: g[i] = (L(x + h e_i) - L(x - h e_i)) / (2h) for the
 * n entries of x, with L = loss(ctx) recomputed from x each time; the
 * step actually taken (after float rounding) is the divisor. */
typedef double (*kt_loss_fn)(void *ctx);
void kt_fd(float *x, long n, float h, kt_loss_fn loss, void *ctx, double *g);

#endif
