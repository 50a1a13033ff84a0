/*
 * cpu_act.c: MLP activations (GeLU with the tanh approximation, SwiGLU)
 * and the element-wise helpers of kernels.h, fp32.
 */
#include <math.h>

#include "cpu_kernels.h"

#define GELU_K 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_C 0.044715

void kern_gelu_fwd(kstream *ks, float *out, const float *inp, long n)
{
	(void)ks;
	for (long i = 0; i < n; i++) {
		double x = inp[i];
		out[i] = (float)(0.5 * x * (1.0 + tanh(GELU_K * (x + GELU_C * x * x * x))));
	}
}

void kern_gelu_bwd(kstream *ks, float *dinp, const float *inp,
		   const float *dout, long n)
{
	(void)ks;
	for (long i = 0; i < n; i++) {
		double x = inp[i];
		double u = GELU_K * (x + GELU_C * x * x * x);
		double t = tanh(u);
		double du = GELU_K * (1.0 + 3.0 * GELU_C * x * x);
		double d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
		dinp[i] = (float)(d * dout[i]);
	}
}

void kern_swiglu_fwd(kstream *ks, float *out, const float *inp, long N, long F)
{
	(void)ks;
	for (long r = 0; r < N; r++) {
		const float *g = inp + r * 2 * F, *u = g + F;
		for (long f = 0; f < F; f++) {
			double s = g[f] / (1.0 + exp(-(double)g[f]));
			out[r * F + f] = (float)(s * u[f]);
		}
	}
}

/* silu(g) = g * sig(g); silu'(g) = sig(g) * (1 + g * (1 - sig(g))). */
void kern_swiglu_bwd(kstream *ks, float *dinp, const float *inp,
		     const float *dout, long N, long F)
{
	(void)ks;
	for (long r = 0; r < N; r++) {
		const float *g = inp + r * 2 * F, *u = g + F;
		float *dg = dinp + r * 2 * F, *du = dg + F;
		for (long f = 0; f < F; f++) {
			double sg = 1.0 / (1.0 + exp(-(double)g[f]));
			double dy = dout[r * F + f];
			dg[f] = (float)(dy * u[f] * sg * (1.0 + g[f] * (1.0 - sg)));
			du[f] = (float)(dy * g[f] * sg);
		}
	}
}

void kern_bias_add(kstream *ks, float *out, const float *bias, long N, long C)
{
	(void)ks;
	for (long r = 0; r < N; r++)
		for (long c = 0; c < C; c++)
			out[r * C + c] += bias[c];
}

void kern_bias_bwd(kstream *ks, float *dbias, const float *dout, long N, long C)
{
	(void)ks;
	for (long c = 0; c < C; c++) {
		double s = 0;
		for (long r = 0; r < N; r++)
			s += dout[r * C + c];
		dbias[c] += (float)s;
	}
}

void kern_add(kstream *ks, float *out, const float *a, const float *b, long n)
{
	(void)ks;
	for (long i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

void kern_acc(kstream *ks, float *dst, const float *src, long n)
{
	(void)ks;
	for (long i = 0; i < n; i++)
		dst[i] += src[i];
}
