/*
 * cpu_optim.c: AdamW with fp32 states, the sum of squares behind
 * gradient norms and clipping, scaling, and dtype conversions (kernels.h).
 * bf16 conversion rounds to nearest even, as the hardware does.
 */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"

/* Decoupled weight decay (Loshchilov and Hutter), bias-corrected moments
 * (Kingma and Ba), as torch.optim.AdamW and Megatron's fused Adam. */
void kern_adamw(kstream *ks, float *p, float *m, float *v, const float *g,
		float *p_lp, long n, float lr, float beta1, float beta2,
		float eps, float wd, long t, float gscale)
{
	float c1 = (float)(1.0 - pow(beta1, (double)t));
	float c2 = (float)(1.0 - pow(beta2, (double)t));
	float ic1 = 1.0f / c1, ic2 = 1.0f / c2;
	(void)ks;
	for (long i = 0; i < n; i++) {
		float gi = g[i] * gscale;
		float mi = beta1 * m[i] + (1.0f - beta1) * gi;
		float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
		float upd = (mi * ic1) / (sqrtf(vi * ic2) + eps) + wd * p[i];
		m[i] = mi;
		v[i] = vi;
		p[i] -= lr * upd;
		if (p_lp)
			p_lp[i] = p[i];
	}
}

void kern_sumsq(kstream *ks, double *out, const float *x, long n)
{
	double s = 0;
	(void)ks;
	for (long i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	*out += s;
}

void kern_scale(kstream *ks, float *x, float a, long n)
{
	(void)ks;
	for (long i = 0; i < n; i++)
		x[i] *= a;
}

void kern_to_f32(kstream *ks, float *out, const float *in, long n)
{
	(void)ks;
	if (out != in)
		memmove(out, in, (size_t)n * sizeof(float));
}

void kern_from_f32(kstream *ks, float *out, const float *in, long n)
{
	kern_to_f32(ks, out, in, n);
}

uint16_t kern_f32_to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
		return (uint16_t)((u >> 16) | 0x40); /* NaN stays a quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float kern_bf16_to_f32(uint16_t x)
{
	uint32_t u = (uint32_t)x << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}
