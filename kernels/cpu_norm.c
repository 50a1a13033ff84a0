/*
 * cpu_norm.c: LayerNorm and RMSNorm, forward and backward, fp32 (the CPU
 * twins of kernels.h).  Statistics in double per row, as the reference
 * every other backend is compared with.
 */
#include <math.h>

#include "cpu_kernels.h"

void kern_layernorm_fwd(kstream *ks, float *out, float *mean, float *rstd,
			const float *inp, const float *w, const float *b,
			long N, long C, float eps)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		const float *x = inp + n * C;
		float *y = out + n * C;
		double s = 0, ss = 0;
		for (long c = 0; c < C; c++)
			s += x[c];
		double mu = s / (double)C;
		for (long c = 0; c < C; c++) {
			double d = x[c] - mu;
			ss += d * d;
		}
		double r = 1.0 / sqrt(ss / (double)C + eps);
		for (long c = 0; c < C; c++)
			y[c] = (float)((x[c] - mu) * r * w[c] + (b ? b[c] : 0.0f));
		mean[n] = (float)mu;
		rstd[n] = (float)r;
	}
}

/* d/dx of y = xhat * w + b with xhat = (x - mu) * r:
 * dx = r * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)). */
void kern_layernorm_bwd(kstream *ks, float *dinp, float *dw, float *db,
			const float *dout, const float *inp, const float *w,
			const float *mean, const float *rstd, long N, long C)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		const float *dy = dout + n * C, *x = inp + n * C;
		float *dx = dinp + n * C;
		double mu = mean[n], r = rstd[n], m1 = 0, m2 = 0;
		for (long c = 0; c < C; c++) {
			double xh = (x[c] - mu) * r, g = (double)dy[c] * w[c];
			m1 += g;
			m2 += g * xh;
		}
		m1 /= (double)C;
		m2 /= (double)C;
		for (long c = 0; c < C; c++) {
			double xh = (x[c] - mu) * r, g = (double)dy[c] * w[c];
			dx[c] += (float)(r * (g - m1 - xh * m2));
			dw[c] += (float)(dy[c] * xh);
			if (db)
				db[c] += dy[c];
		}
	}
}

void kern_rmsnorm_fwd(kstream *ks, float *out, float *rstd, const float *inp,
		      const float *w, long N, long C, float eps)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		const float *x = inp + n * C;
		double ss = 0;
		for (long c = 0; c < C; c++)
			ss += (double)x[c] * x[c];
		double r = 1.0 / sqrt(ss / (double)C + eps);
		for (long c = 0; c < C; c++)
			out[n * C + c] = (float)(x[c] * r * w[c]);
		rstd[n] = (float)r;
	}
}

/* y = x * r * w, r = (mean(x^2) + eps)^-1/2:
 * dx = r * (g - x * r^2 * mean(g * x)), g = dy * w. */
void kern_rmsnorm_bwd(kstream *ks, float *dinp, float *dw, const float *dout,
		      const float *inp, const float *w, const float *rstd,
		      long N, long C)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		const float *dy = dout + n * C, *x = inp + n * C;
		double r = rstd[n], m = 0;
		for (long c = 0; c < C; c++)
			m += (double)dy[c] * w[c] * x[c];
		m /= (double)C;
		for (long c = 0; c < C; c++) {
			double g = (double)dy[c] * w[c];
			dinp[n * C + c] += (float)(r * (g - x[c] * r * r * m));
			dw[c] += (float)(dy[c] * x[c] * r);
		}
	}
}
