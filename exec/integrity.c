/*
 * integrity.c: --check's second computation of step 1's data
 * (exec_internal.h).  The single-rank reference (check.c) answers "is
 * this the same training step?" within rounding's bound; a single wrong
 * value (one element of one GEMM output, one element of one message, as
 * silent data corruption or a bad transfer leaves it) moves the
 * gradients by less than rounding does and passes it.  So step 1's data
 * is also checked where it is made, exactly:
 *
 * - every forward and input-gradient GEMM is computed a second time, by
 *   the same call on the same inputs into a buffer of its own; the two
 *   must agree to the bit (the same kernel on the same data rounds the
 *   same way, so any difference is a wrong value, and the bound is 0);
 * - every pipeline message is hashed (FNV-1a, 64 bits, with its tag) by
 *   its sender before it leaves and by its receiver when it has arrived;
 *   per pair of ranks the sums of those hashes must agree.
 *
 * Weight-gradient GEMMs accumulate into their buffers and are not
 * recomputed; their results are the gradients the reference compares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

enum pplan_status integrity_begin(struct exec *x, struct perr *e)
{
	struct integrity *in = &x->integ;
	integrity_free(x);
	in->sent = calloc((size_t)x->l.pp, sizeof *in->sent);
	in->received = calloc((size_t)x->l.pp, sizeof *in->received);
	if (!in->sent || !in->received) {
		integrity_free(x);
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for --check's message hashes");
	}
	in->on = 1;
	in->ok = 1;
	return PPLAN_OK;
}

void integrity_free(struct exec *x)
{
	free(x->integ.sent);
	free(x->integ.received);
	memset(&x->integ, 0, sizeof x->integ);
}

/* ---- GEMMs ------------------------------------------------------------------ */

/* The first element where rows of m x n at c (stride ldc) and d (stride
 * n) differ, as a flat index into the m x n result; -1 when none.  Both
 * are read back to the host a row at a time. */
static long first_difference(struct exec *x, long m, long n, const void *c, long ldc,
			     const void *d, unsigned char *rc, unsigned char *rd)
{
	struct backend *b = x->be;
	size_t row = (size_t)n * x->esize;
	for (long i = 0; i < m; i++) {
		b->ops->to_host(b, rc, (const char *)c + (size_t)i * (size_t)ldc * x->esize, row);
		b->ops->to_host(b, rd, (const char *)d + (size_t)i * row, row);
		if (memcmp(rc, rd, row) != 0)
			for (long j = 0; j < n; j++)
				if (memcmp(rc + (size_t)j * x->esize, rd + (size_t)j * x->esize, x->esize))
					return i * n + j;
	}
	return -1;
}

void integrity_gemm(struct exec *x, int ta, int tb, long m, long n, long k, const void *a,
		    long lda, const void *bm, long ldb, const void *c, long ldc, const char *what)
{
	struct backend *b = x->be;
	struct integrity *in = &x->integ;
	size_t row = (size_t)n * x->esize;
	void *d;
	unsigned char *rc, *rd;
	long at;

	if (!in->on || m <= 0 || n <= 0)
		return;
	d = b->ops->alloc(b, (size_t)m * row);
	rc = malloc(row);
	rd = malloc(row);
	if (d && rc && rd) {
		b->ops->gemm(b, ta, tb, m, n, k, 1.0f, a, lda, bm, ldb, 0.0f, d, n, b->dtype);
		in->gemms++;
		at = first_difference(x, m, n, c, ldc, d, rc, rd);
		if (at >= 0 && in->gemm_bad++ == 0)
			snprintf(in->first_bad, sizeof in->first_bad,
				 "rank %d: %s GEMM (%ld x %ld x %ld) in step %ld: element %ld differs from its recomputation",
				 x->rank, what, m, n, k, x->step + 1, at);
	}
	free(rc);
	free(rd);
	if (d)
		b->ops->free(b, d);
}

/* ---- messages ------------------------------------------------------------- */

static uint64_t hash_of(struct exec *x, const void *p, size_t bytes, int tag)
{
	unsigned char buf[4096];
	uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
	for (size_t o = 0; o < bytes; o += sizeof buf) {
		size_t n = bytes - o < sizeof buf ? bytes - o : sizeof buf;
		x->be->ops->to_host(x->be, buf, (const char *)p + o, n);
		for (size_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 1099511628211ULL;
		}
	}
	/* the tag, mixed in (splitmix64's finaliser): a message must arrive
	 * under its own tag */
	h ^= (uint64_t)(unsigned)tag * 0x9E3779B97F4A7C15ULL;
	h ^= h >> 30;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 27;
	h *= 0x94D049BB133111EBULL;
	return h ^ (h >> 31);
}

void integrity_sent(struct exec *x, const void *p, size_t bytes, int peer, int tag)
{
	if (!x->integ.on || peer < 0 || peer >= x->l.pp)
		return;
	x->integ.sent[peer] += hash_of(x, p, bytes, tag);
	x->integ.messages++;
}

void integrity_received(struct exec *x, const void *p, size_t bytes, int peer, int tag)
{
	if (!x->integ.on || peer < 0 || peer >= x->l.pp)
		return;
	x->integ.received[peer] += hash_of(x, p, bytes, tag);
	x->integ.messages++;
}

/* ---- the verdict ---------------------------------------------------------- */

/* What each rank sends rank 0: its counts, its first bad GEMM, and per
 * pp peer the peer's world rank with the two sums. */
struct summary {
	long gemms, messages, gemm_bad;
	int pp;
	char first_bad[200];
};
struct pair {
	int world;
	uint64_t sent, received;
};

static void judge(struct exec *x, const char *all, const int *lens, const int *offs)
{
	struct integrity *in = &x->integ;
	long gemms = 0, messages = 0;
	in->ok = 1;
	in->verdict[0] = '\0';
	for (int r = 0; r < x->size; r++) {
		struct summary s;
		if (lens[r] < (int)sizeof s)
			continue;
		memcpy(&s, all + offs[r], sizeof s);
		gemms += s.gemms;
		messages += s.messages;
		if (s.gemm_bad > 0 && in->ok) {
			in->ok = 0;
			snprintf(in->verdict, sizeof in->verdict, "%s", s.first_bad);
		}
		for (int p = 0; p < s.pp && lens[r] >= (int)(sizeof s + (size_t)(p + 1) * sizeof(struct pair)); p++) {
			struct pair mine, theirs;
			struct summary t;
			int q;
			memcpy(&mine, all + offs[r] + sizeof s + (size_t)p * sizeof mine, sizeof mine);
			q = mine.world;
			if (q < 0 || q >= x->size || q == r || lens[q] < (int)sizeof t)
				continue;
			memcpy(&t, all + offs[q], sizeof t);
			/* r's entry in q's list: q's peer whose world rank is r */
			for (int j = 0; j < t.pp; j++) {
				memcpy(&theirs, all + offs[q] + sizeof t + (size_t)j * sizeof theirs,
				       sizeof theirs);
				if (theirs.world != r)
					continue;
				if (mine.sent != theirs.received && in->ok) {
					in->ok = 0;
					snprintf(in->verdict, sizeof in->verdict,
						 "the pipeline messages rank %d sent rank %d in step 1 are not what rank %d received (their hashes differ)",
						 r, q, q);
				}
			}
		}
	}
	in->gemms = gemms;
	in->messages = messages / 2;
}

enum pplan_status integrity_collect(struct exec *x, struct perr *e)
{
	struct integrity *in = &x->integ;
	struct summary s;
	size_t bytes = sizeof s + (size_t)x->l.pp * sizeof(struct pair);
	char *mine = calloc(1, bytes), *all = NULL;
	int *lens = NULL, *offs = NULL, world;
	MPI_Group pg, wg;
	enum pplan_status st;

	if (!mine)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for --check's message hashes");
	memset(&s, 0, sizeof s);
	s.gemms = in->gemms;
	s.messages = in->messages;
	s.gemm_bad = in->gemm_bad;
	s.pp = x->l.pp;
	snprintf(s.first_bad, sizeof s.first_bad, "%s", in->first_bad);
	memcpy(mine, &s, sizeof s);
	MPI_Comm_group(x->pp_comm, &pg);
	MPI_Comm_group(x->world, &wg);
	for (int p = 0; p < x->l.pp; p++) {
		struct pair q = { -1, in->sent ? in->sent[p] : 0, in->received ? in->received[p] : 0 };
		MPI_Group_translate_ranks(pg, 1, &p, wg, &world);
		q.world = world == MPI_UNDEFINED ? -1 : world;
		memcpy(mine + sizeof s + (size_t)p * sizeof q, &q, sizeof q);
	}
	MPI_Group_free(&pg);
	MPI_Group_free(&wg);
	st = exec_gather_blobs(x, mine, (int)bytes, &all, &lens, &offs, e);
	if (st == PPLAN_OK && x->rank == 0)
		judge(x, all, lens, offs);
	in->on = 0;
	free(mine);
	free(all);
	free(lens);
	free(offs);
	return st;
}
