/* cudatest.c: the harness of the CUDA test programs (cudatest.h). */
#include "cudatest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudamod.h"

int ct_backend(struct ct *t, enum kern_dtype dtype)
{
	struct perr e;
	enum pplan_status st;
	char why[512];
	const struct pplan_cuda_api *api = cudamod_load(NULL, 0, why, sizeof why);

	ct_release(t);
	if (t->b)
		t->b->ops->close(t->b);
	t->b = NULL;
	if (!api) {
		printf("skipped: no GPU (%s)\n", why);
		t->skipped = 1;
		return 1;
	}
	st = be_cuda_open(MPI_COMM_SELF, dtype, MPI_COMM_WORLD, &t->b, &e);
	if (st == PPLAN_ENOTFOUND) {
		printf("skipped: no GPU (%s)\n", e.msg);
		t->skipped = 1;
		return 1;
	}
	if (st != PPLAN_OK) {
		printf("FAIL be_cuda_open (%s): %s\n", kern_dtype_name(dtype), e.msg);
		t->failed++;
		return -1;
	}
	for (int d = KD_F32; d <= KD_F16; d++)
		t->k[d] = api->kernels(d);
	printf("# %s backend: %s; %s\n", kern_dtype_name(dtype), t->b->device,
	       t->b->libraries);
	return 0;
}

int ct_open(struct ct *t, int *argc, char ***argv, enum kern_dtype dtype)
{
	memset(t, 0, sizeof *t);
	t->seed = 88172645463325252ull;
	MPI_Init(argc, argv);
	return ct_backend(t, dtype);
}

int ct_finish(struct ct *t)
{
	ct_release(t);
	if (t->b)
		t->b->ops->close(t->b);
	t->b = NULL;
	MPI_Finalize();
	if (t->passed + t->failed > 0)
		printf("# %d checks passed, %d failed\n", t->passed, t->failed);
	if (t->failed)
		return 1;
	return t->skipped && t->passed == 0 ? CT_SKIP : 0;
}

void ct_fill(struct ct *t, float *x, long n, float lo, float hi)
{
	for (long i = 0; i < n; i++) {
		t->seed ^= t->seed >> 12;
		t->seed ^= t->seed << 25;
		t->seed ^= t->seed >> 27;
		double f = (double)((t->seed * 2685821657736338717ull) >> 11) /
			   9007199254740992.0;
		x[i] = (float)(lo + (hi - lo) * f);
	}
}

/* IEEE binary16, round to nearest even (checked against the compiler's
 * _Float16 over every 7th fp32 bit pattern when this was written). */
uint16_t ct_f32_to_f16(float f)
{
	uint32_t x, sign, man, h, rem;
	int exp;
	memcpy(&x, &f, sizeof x);
	sign = (x >> 16) & 0x8000u;
	man = x & 0x7fffffu;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (exp <= 0) {
		int shift = 14 - exp;
		uint32_t mid;
		if (shift > 24)
			return (uint16_t)sign;
		man |= 0x800000u;
		h = man >> shift;
		rem = man & ((1u << shift) - 1);
		mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	h = ((uint32_t)exp << 10) | (man >> 13);
	rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

float ct_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu, x;
	float f;
	if (exp == 0) {
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	x = exp == 31 ? sign | 0x7f800000u | (man << 13)
		      : sign | ((exp - 15 + 127) << 23) | (man << 13);
	memcpy(&f, &x, sizeof f);
	return f;
}

static void *remember(struct ct *t, void *p)
{
	if (!p || t->nbufs == (int)(sizeof t->bufs / sizeof t->bufs[0])) {
		printf("FAIL device allocation\n");
		t->failed++;
		exit(ct_finish(t));
	}
	t->bufs[t->nbufs++] = p;
	return p;
}

void *ct_bytes(struct ct *t, const void *src, size_t bytes)
{
	void *d = remember(t, t->b->ops->alloc(t->b, bytes));
	if (src)
		t->b->ops->to_device(t->b, d, src, bytes);
	return d;
}

float *ct_host(struct ct *t, long n)
{
	float *p = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
	if (!p || t->nhbufs == (int)(sizeof t->hbufs / sizeof t->hbufs[0])) {
		printf("FAIL host allocation\n");
		t->failed++;
		exit(ct_finish(t));
	}
	t->hbufs[t->nhbufs++] = p;
	return p;
}

float *ct_copy(struct ct *t, const float *x, long n)
{
	float *p = ct_host(t, n);
	memcpy(p, x, (size_t)n * sizeof(float));
	return p;
}

void ct_round(enum kern_dtype dt, float *x, long n)
{
	for (long i = 0; dt != KD_F32 && i < n; i++)
		x[i] = dt == KD_BF16 ? kern_bf16_to_f32(kern_f32_to_bf16(x[i]))
				     : ct_f16_to_f32(ct_f32_to_f16(x[i]));
}

void *ct_dev(struct ct *t, enum kern_dtype dt, float *x, long n)
{
	size_t es = (size_t)kern_dtype_size(dt);
	uint16_t *h = NULL;
	void *d;
	if (dt == KD_F32)
		return ct_bytes(t, x, (size_t)n * es);
	h = malloc((size_t)n * sizeof *h + 1);
	for (long i = 0; i < n; i++) {
		h[i] = dt == KD_BF16 ? kern_f32_to_bf16(x[i]) : ct_f32_to_f16(x[i]);
		x[i] = dt == KD_BF16 ? kern_bf16_to_f32(h[i]) : ct_f16_to_f32(h[i]);
	}
	d = ct_bytes(t, h, (size_t)n * es);
	free(h);
	return d;
}

void ct_get(struct ct *t, enum kern_dtype dt, const void *dev, long n, float *out)
{
	uint16_t *h;
	if (dt == KD_F32) {
		t->b->ops->to_host(t->b, out, dev, (size_t)n * sizeof(float));
		return;
	}
	h = malloc((size_t)n * sizeof *h + 1);
	t->b->ops->to_host(t->b, h, dev, (size_t)n * sizeof *h);
	for (long i = 0; i < n; i++)
		out[i] = dt == KD_BF16 ? kern_bf16_to_f32(h[i]) : ct_f16_to_f32(h[i]);
	free(h);
}

double ct_tol(enum kern_dtype dt)
{
	return dt == KD_F32 ? 1e-5 : 1e-2;
}

void ct_check(struct ct *t, const char *what, enum kern_dtype dt,
	      const float *got, const float *want, long n, double tol)
{
	double big = 0, err = 0;
	long worst = 0, inf_bad = -1;
	for (long i = 0; i < n; i++) {
		double d;
		if (isinf(want[i]) || isinf(got[i]) || isnan(got[i]) || isnan(want[i])) {
			if (!(got[i] == want[i]) && inf_bad < 0)
				inf_bad = i; /* an infinity not matched, or a NaN */
			continue;
		}
		if (fabs(want[i]) > big)
			big = fabs(want[i]);
		d = fabs((double)got[i] - want[i]);
		if (d > err) {
			err = d;
			worst = i;
		}
	}
	if (big == 0)
		big = 1;
	if (inf_bad >= 0 || err > tol * big) {
		t->failed++;
		if (inf_bad >= 0)
			printf("FAIL %-28s %s: [%ld] is %g, want %g\n", what, kern_dtype_name(dt),
			       inf_bad, got[inf_bad], want[inf_bad]);
		else
			printf("FAIL %-28s %s: [%ld] is %.7g, want %.7g (error %.2g of %.3g > %.0e)\n",
			       what, kern_dtype_name(dt), worst, got[worst], want[worst], err,
			       big, tol);
		return;
	}
	t->passed++;
	printf("ok   %-28s %s: error %.2g of %.3g\n", what, kern_dtype_name(dt), err, big);
}

void ct_sync(struct ct *t, const char *what)
{
	struct perr e;
	if (t->b->ops->sync(t->b, &e) != PPLAN_OK) {
		printf("FAIL %s: %s\n", what, e.msg);
		t->failed++;
	}
}

void ct_release(struct ct *t)
{
	for (int i = 0; t->b && i < t->nbufs; i++)
		t->b->ops->free(t->b, t->bufs[i]);
	for (int i = 0; i < t->nhbufs; i++)
		free(t->hbufs[i]);
	t->nbufs = t->nhbufs = 0;
}
