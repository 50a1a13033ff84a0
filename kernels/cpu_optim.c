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
	double c1 = 1.0 - pow(beta1, (double)t), c2 = 1.0 - pow(beta2, (double)t);
	(void)ks;
	for (long i = 0; i < n; i++) {
		double gi = (double)g[i] * gscale;
		double mi = beta1 * (double)m[i] + (1.0 - beta1) * gi;
		double vi = beta2 * (double)v[i] + (1.0 - beta2) * gi * gi;
		double upd = (mi / c1) / (sqrt(vi / c2) + eps) + wd * (double)p[i];
		m[i] = (float)mi;
		v[i] = (float)vi;
		p[i] = (float)(p[i] - lr * upd);
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
