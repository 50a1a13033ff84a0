/*
 * cpu_attn.c: attention on the CPU, fp32.  The layout changes around the
 * attention core, the causal softmax of the three-step version (scores
 * and values are GEMMs of the backend), and the fused attention as a
 * plain loop: the oracle that the CUDA flash-style kernel is tested
 * against (kernels.h states the masking and GQA conventions).
 */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"

void kern_qkv_split(kstream *ks, float *q, float *k, float *v, const float *qkv,
		    long B, long T, long H, long G, long D)
{
	long W = (H + 2 * G) * D;
	(void)ks;
	for (long b = 0; b < B; b++)
		for (long t = 0; t < T; t++) {
			const float *row = qkv + (b * T + t) * W;
			for (long h = 0; h < H; h++)
				memcpy(q + ((b * H + h) * T + t) * D, row + h * D,
				       (size_t)D * sizeof(float));
			for (long g = 0; g < G; g++) {
				memcpy(k + ((b * G + g) * T + t) * D,
				       row + (H + g) * D, (size_t)D * sizeof(float));
				memcpy(v + ((b * G + g) * T + t) * D,
				       row + (H + G + g) * D, (size_t)D * sizeof(float));
			}
		}
}

void kern_qkv_merge(kstream *ks, float *dqkv, const float *dq, const float *dk,
		    const float *dv, long B, long T, long H, long G, long D)
{
	long W = (H + 2 * G) * D;
	(void)ks;
	for (long b = 0; b < B; b++)
		for (long t = 0; t < T; t++) {
			float *row = dqkv + (b * T + t) * W;
			for (long h = 0; h < H; h++)
				memcpy(row + h * D, dq + ((b * H + h) * T + t) * D,
				       (size_t)D * sizeof(float));
			for (long g = 0; g < G; g++) {
				memcpy(row + (H + g) * D,
				       dk + ((b * G + g) * T + t) * D, (size_t)D * sizeof(float));
				memcpy(row + (H + G + g) * D,
				       dv + ((b * G + g) * T + t) * D, (size_t)D * sizeof(float));
			}
		}
}

void kern_heads_to_rows(kstream *ks, float *out, const float *inp, long B,
			long T, long H, long D)
{
	(void)ks;
	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++)
			for (long t = 0; t < T; t++)
				memcpy(out + (b * T + t) * H * D + h * D,
				       inp + ((b * H + h) * T + t) * D,
				       (size_t)D * sizeof(float));
}

void kern_rows_to_heads(kstream *ks, float *out, const float *inp, long B,
			long T, long H, long D)
{
	(void)ks;
	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++)
			for (long t = 0; t < T; t++)
				memcpy(out + ((b * H + h) * T + t) * D,
				       inp + (b * T + t) * H * D + h * D,
				       (size_t)D * sizeof(float));
}

/* Keys visible to query row i: columns 0 .. last (inclusive). */
static long visible_last(long i, long Tk, long q0, long k0)
{
	long last = q0 + i - k0;
	return last >= Tk ? Tk - 1 : last;
}

void kern_softmax_causal_fwd(kstream *ks, float *att, const float *scores,
			     long BH, long Tq, long Tk, long q0, long k0,
			     float scale)
{
	(void)ks;
	for (long bh = 0; bh < BH; bh++)
		for (long i = 0; i < Tq; i++) {
			const float *s = scores + (bh * Tq + i) * Tk;
			float *a = att + (bh * Tq + i) * Tk;
			long last = visible_last(i, Tk, q0, k0);
			float mx = -INFINITY, inv;
			double sum = 0;
			for (long j = 0; j <= last; j++)
				if (scale * s[j] > mx)
					mx = scale * s[j];
			for (long j = 0; j <= last; j++) {
				float e = expf(scale * s[j] - mx);
				a[j] = e;
				sum += e;
			}
			inv = (float)(1.0 / sum);
			for (long j = 0; j <= last; j++)
				a[j] *= inv;
			for (long j = last < 0 ? 0 : last + 1; j < Tk; j++)
				a[j] = 0.0f;
		}
}

void kern_softmax_causal_bwd(kstream *ks, float *dscores, const float *datt,
			     const float *att, long BH, long Tq, long Tk,
			     float scale)
{
	(void)ks;
	for (long r = 0; r < BH * Tq; r++) {
		const float *da = datt + r * Tk, *a = att + r * Tk;
		float *ds = dscores + r * Tk;
		double dot = 0;
		float fd;
		for (long j = 0; j < Tk; j++)
			dot += (double)da[j] * a[j];
		fd = (float)dot;
		for (long j = 0; j < Tk; j++)
			ds[j] = scale * a[j] * (da[j] - fd);
	}
}

static double dotd(const float *a, const float *b, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

void kern_attention_fwd(kstream *ks, float *out, float *lse, const float *q,
			const float *k, const float *v, long B, long H, long G,
			long Tq, long Tk, long D, long q0, long k0, float scale)
{
	long rep = H / G;
	(void)ks;
	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++) {
			long g = h / rep;
			const float *K = k + (b * G + g) * Tk * D;
			const float *V = v + (b * G + g) * Tk * D;
			for (long i = 0; i < Tq; i++) {
				const float *qi = q + ((b * H + h) * Tq + i) * D;
				float *o = out + ((b * H + h) * Tq + i) * D;
				long last = visible_last(i, Tk, q0, k0);
				double mx = -INFINITY, l = 0;
				double acc[D > 0 ? D : 1];
				for (long d = 0; d < D; d++)
					acc[d] = 0;
				for (long j = 0; j <= last; j++) {
					double s = scale * dotd(qi, K + j * D, D);
					if (s > mx)
						mx = s;
				}
				for (long j = 0; j <= last; j++) {
					double p = exp(scale * dotd(qi, K + j * D, D) - mx);
					l += p;
					for (long d = 0; d < D; d++)
						acc[d] += p * V[j * D + d];
				}
				for (long d = 0; d < D; d++)
					o[d] = last < 0 ? 0.0f : (float)(acc[d] / l);
				lse[(b * H + h) * Tq + i] =
					last < 0 ? -INFINITY : (float)(mx + log(l));
			}
		}
}

void kern_attention_bwd(kstream *ks, float *dq, float *dk, float *dv,
			const float *dout, const float *out, const float *lse,
			const float *q, const float *k, const float *v, long B,
			long H, long G, long Tq, long Tk, long D, long q0, long k0,
			float scale)
{
	long rep = H / G;
	(void)ks;
	memset(dk, 0, (size_t)(B * G * Tk * D) * sizeof(float));
	memset(dv, 0, (size_t)(B * G * Tk * D) * sizeof(float));
	for (long b = 0; b < B; b++)
		for (long h = 0; h < H; h++) {
			long g = h / rep;
			const float *K = k + (b * G + g) * Tk * D;
			const float *V = v + (b * G + g) * Tk * D;
			float *dK = dk + (b * G + g) * Tk * D;
			float *dV = dv + (b * G + g) * Tk * D;
			for (long i = 0; i < Tq; i++) {
				long r = (b * H + h) * Tq + i;
				const float *qi = q + r * D, *doi = dout + r * D;
				float *dqi = dq + r * D;
				long last = visible_last(i, Tk, q0, k0);
				double Di = dotd(doi, out + r * D, D);
				for (long d = 0; d < D; d++)
					dqi[d] = 0.0f;
				for (long j = 0; j <= last; j++) {
					double p = exp(scale * dotd(qi, K + j * D, D) - lse[r]);
					double dp = dotd(doi, V + j * D, D);
					double ds = p * (dp - Di) * scale;
					for (long d = 0; d < D; d++) {
						dV[j * D + d] += (float)(p * doi[d]);
						dqi[d] += (float)(ds * K[j * D + d]);
						dK[j * D + d] += (float)(ds * qi[d]);
					}
				}
			}
		}
}

void kern_attention_merge(kstream *ks, float *out, float *lse, const float *o,
			  const float *l, long rows, long D)
{
	(void)ks;
	for (long r = 0; r < rows; r++) {
		double a = lse[r], b = l[r], m, n, wa, wb;
		if (b == -INFINITY)
			continue;
		m = a > b ? a : b;
		n = m + log(exp(a - m) + exp(b - m));
		wa = a == -INFINITY ? 0.0 : exp(a - n);
		wb = exp(b - n);
		for (long d = 0; d < D; d++)
			out[r * D + d] = (float)(wa * out[r * D + d] + wb * o[r * D + d]);
		lse[r] = (float)n;
	}
}
