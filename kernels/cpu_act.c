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
	const float k = (float)GELU_K, c = (float)GELU_C;
	(void)ks;
	for (long i = 0; i < n; i++) {
		float x = inp[i];
		out[i] = 0.5f * x * (1.0f + tanhf(k * (x + c * x * x * x)));
	}
}

void kern_gelu_bwd(kstream *ks, float *dinp, const float *inp,
		   const float *dout, long n)
{
	const float k = (float)GELU_K, c = (float)GELU_C;
	(void)ks;
	for (long i = 0; i < n; i++) {
		float x = inp[i];
		float t = tanhf(k * (x + c * x * x * x));
		float du = k * (1.0f + 3.0f * c * x * x);
		float d = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
		dinp[i] = d * dout[i];
	}
}

void kern_swiglu_fwd(kstream *ks, float *out, const float *inp, long N, long F)
{
	(void)ks;
	for (long r = 0; r < N; r++) {
		const float *g = inp + r * 2 * F, *u = g + F;
		for (long f = 0; f < F; f++)
			out[r * F + f] = g[f] / (1.0f + expf(-g[f])) * u[f];
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
			float sg = 1.0f / (1.0f + expf(-g[f]));
			float dy = dout[r * F + f];
			dg[f] = dy * u[f] * sg * (1.0f + g[f] * (1.0f - sg));
			du[f] = dy * g[f] * sg;
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
