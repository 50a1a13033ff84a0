/*
 * cpu_embed.c: vocabulary-parallel token embedding, learned positions,
 * and the vocabulary-parallel cross-entropy of kernels.h, fp32.
 */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"

void kern_embedding_fwd(kstream *ks, float *out, const int32_t *tokens,
			const float *wte, long N, long C, long v0, long Vl)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		long t = (long)tokens[n] - v0;
		if (t >= 0 && t < Vl)
			memcpy(out + n * C, wte + t * C, (size_t)C * sizeof(float));
		else
			memset(out + n * C, 0, (size_t)C * sizeof(float));
	}
}

void kern_embedding_bwd(kstream *ks, float *dwte, const float *dout,
			const int32_t *tokens, long N, long C, long v0, long Vl)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		long t = (long)tokens[n] - v0;
		if (t < 0 || t >= Vl)
			continue;
		for (long c = 0; c < C; c++)
			dwte[t * C + c] += dout[n * C + c];
	}
}

void kern_position_fwd(kstream *ks, float *out, const float *wpe, long B,
		       long T, long C, long pos0)
{
	(void)ks;
	for (long b = 0; b < B; b++)
		for (long t = 0; t < T; t++)
			for (long c = 0; c < C; c++)
				out[(b * T + t) * C + c] += wpe[(pos0 + t) * C + c];
}

void kern_position_bwd(kstream *ks, float *dwpe, const float *dout, long B,
		       long T, long C, long pos0)
{
	(void)ks;
	for (long t = 0; t < T; t++)
		for (long c = 0; c < C; c++) {
			double s = 0;
			for (long b = 0; b < B; b++)
				s += dout[(b * T + t) * C + c];
			dwpe[(pos0 + t) * C + c] += (float)s;
		}
}

void kern_xent_max(kstream *ks, float *rowmax, const float *logits, long N,
		   long Vl)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		float m = -INFINITY;
		for (long j = 0; j < Vl; j++)
			if (logits[n * Vl + j] > m)
				m = logits[n * Vl + j];
		rowmax[n] = m;
	}
}

void kern_xent_sums(kstream *ks, float *sumexp, float *tlogit,
		    const float *logits, const float *rowmax,
		    const int32_t *targets, long N, long Vl, long v0)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		const float *z = logits + n * Vl;
		float m = rowmax[n];
		double s = 0;
		long t = (long)targets[n] - v0;
		for (long j = 0; j < Vl; j++)
			s += expf(z[j] - m);
		sumexp[n] = (float)s;
		tlogit[n] = (t >= 0 && t < Vl) ? z[t] - m : 0.0f;
	}
}

void kern_xent_loss_grad(kstream *ks, float *loss, float *dlogits,
			 const float *logits, const float *rowmax,
			 const float *sumexp, const float *tlogit,
			 const int32_t *targets, long N, long Vl, long v0,
			 float scale)
{
	(void)ks;
	for (long n = 0; n < N; n++) {
		long t = (long)targets[n] - v0;
		float m = rowmax[n], k = scale / sumexp[n];
		loss[n] = (float)(log((double)sumexp[n]) - tlogit[n]);
		for (long j = 0; j < Vl; j++)
			dlogits[n * Vl + j] = expf(logits[n * Vl + j] - m) * k;
		if (t >= 0 && t < Vl)
			dlogits[n * Vl + t] -= scale;
	}
}
