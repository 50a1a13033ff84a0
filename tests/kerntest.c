/* kerntest.c: helpers of the kernel tests (kerntest.h). */
#include "kerntest.h"

#include <criterion/criterion.h>
#include <math.h>

void kt_fill(struct krng *r, float *x, long n, float lo, float hi)
{
	for (long i = 0; i < n; i++) {
		r->s ^= r->s >> 12;
		r->s ^= r->s << 25;
		r->s ^= r->s >> 27;
		uint64_t u = r->s * 2685821657736338717ull;
		double f = (double)(u >> 11) / 9007199254740992.0; /* [0, 1) */
		x[i] = (float)(lo + (hi - lo) * f);
	}
}

static int close_one(double got, double want, double atol, double rtol)
{
	if (isinf(want) || isinf(got))
		return got == want;
	return fabs(got - want) <= atol + rtol * fabs(want);
}

int kt_close(const float *got, const double *want, long n, double atol,
	     double rtol, const char *what)
{
	int bad = 0;
	for (long i = 0; i < n; i++) {
		if (close_one(got[i], want[i], atol, rtol))
			continue;
		if (bad++ < 5)
			cr_expect(0, "%s[%ld]: got %.9g, want %.9g (diff %.3g)", what,
				  i, got[i], want[i], fabs(got[i] - want[i]));
	}
	if (bad > 5)
		cr_expect(0, "%s: %d elements out of tolerance in all", what, bad);
	return bad == 0;
}

int kt_closef(const float *got, const float *want, long n, double atol,
	      double rtol, const char *what)
{
	int bad = 0;
	for (long i = 0; i < n; i++) {
		if (close_one(got[i], want[i], atol, rtol))
			continue;
		if (bad++ < 5)
			cr_expect(0, "%s[%ld]: got %.9g, want %.9g (diff %.3g)", what,
				  i, got[i], want[i], fabs((double)got[i] - want[i]));
	}
	if (bad > 5)
		cr_expect(0, "%s: %d elements out of tolerance in all", what, bad);
	return bad == 0;
}

double kt_dot(const float *x, const float *r, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)x[i] * r[i];
	return s;
}

void kt_fd(float *x, long n, float h, kt_loss_fn loss, void *ctx, double *g)
{
	for (long i = 0; i < n; i++) {
		float x0 = x[i], xp = x0 + h, xm = x0 - h;
		x[i] = xp;
		double lp = loss(ctx);
		x[i] = xm;
		double lm = loss(ctx);
		x[i] = x0;
		g[i] = (lp - lm) / ((double)xp - (double)xm);
	}
}
