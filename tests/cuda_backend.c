/*
 * cuda_backend.c: the CUDA backend (exec/backend_cuda*.c over the module)
 * on one GPU and one rank: cuBLAS GEMMs in the four transpose cases with
 * padded leading dimensions and strided batched, against plain loops in
 * double (fp32 1e-5, bf16 and fp16 1e-2 relative to the largest value),
 * fp32 outputs of 16-bit inputs (weight gradients); NCCL collectives on a
 * one-rank group split from the world communicator, and a grouped send to
 * itself; requests, test and wait; timing marks and memory figures.
 * Prints "skipped: no GPU" and exits 77 (ctest: skipped) where no GPU answers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cudatest.h"

/* C (m,n) = alpha op(A) op(B) + beta C, row-major, as backend.h states. */
static void gemm_ref(int ta, int tb, long m, long n, long k, float alpha,
		     const float *A, long lda, const float *B, long ldb, float beta,
		     float *C, long ldc)
{
	for (long i = 0; i < m; i++)
		for (long j = 0; j < n; j++) {
			double s = 0;
			for (long p = 0; p < k; p++)
				s += (double)(ta ? A[p * lda + i] : A[i * lda + p]) *
				     (tb ? B[j * ldb + p] : B[p * ldb + j]);
			C[i * ldc + j] = (float)(alpha * s + beta * C[i * ldc + j]);
		}
}

static void gemms(struct ct *t, enum kern_dtype dt)
{
	enum { M = 33, N = 47, K = 65, PAD = 3 };
	struct backend *b = t->b;
	for (int ct_ = 0; ct_ < (dt == KD_F32 ? 1 : 2); ct_++) {
		enum kern_dtype cd = ct_ ? KD_F32 : dt; /* C of the dtype, or fp32 */
		for (int tr = 0; tr < 4; tr++) {
			int ta = tr & 1, tb = tr >> 1;
			long lda = (ta ? M : K) + PAD, ldb = (tb ? K : N) + PAD, ldc = N + PAD;
			long na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb, nc = M * ldc;
			float *a = ct_host(t, na), *bb = ct_host(t, nb), *c = ct_host(t, nc);
			float *g = ct_host(t, nc);
			void *A, *B, *C;
			char what[64];
			ct_fill(t, a, na, -1, 1);
			ct_fill(t, bb, nb, -1, 1);
			ct_fill(t, c, nc, -1, 1);
			A = ct_dev(t, dt, a, na);
			B = ct_dev(t, dt, bb, nb);
			C = ct_dev(t, cd, c, nc);
			b->ops->gemm(b, ta, tb, M, N, K, 0.7f, A, lda, B, ldb, 0.3f, C, ldc, cd);
			gemm_ref(ta, tb, M, N, K, 0.7f, a, lda, bb, ldb, 0.3f, c, ldc);
			ct_sync(t, "gemm");
			ct_get(t, cd, C, nc, g);
			snprintf(what, sizeof what, "gemm ta=%d tb=%d C %s", ta, tb,
				 kern_dtype_name(cd));
			ct_check(t, what, dt, g, c, nc, ct_tol(dt));
			ct_release(t);
		}
	}
	{
		/* three (16 x 20) (20 x 24) products, strides with gaps */
		enum { m = 16, n = 24, k = 20, BATCH = 3, SA = m * k + 5, SB = k * n + 7,
		       SC = m * n + 2 };
		float *a = ct_host(t, BATCH * SA), *bb = ct_host(t, BATCH * SB);
		float *c = ct_host(t, BATCH * SC), *g = ct_host(t, BATCH * SC);
		void *A, *B, *C;
		ct_fill(t, a, BATCH * SA, -1, 1);
		ct_fill(t, bb, BATCH * SB, -1, 1);
		A = ct_dev(t, dt, a, BATCH * SA);
		B = ct_dev(t, dt, bb, BATCH * SB);
		C = ct_dev(t, dt, c, BATCH * SC);
		b->ops->gemm_batched(b, 0, 1, m, n, k, 1.0f, A, k, SA, B, k, SB, 0.0f, C,
				     n, SC, BATCH, dt);
		for (int i = 0; i < BATCH; i++)
			gemm_ref(0, 1, m, n, k, 1.0f, a + i * SA, k, bb + i * SB, k, 0.0f,
				 c + i * SC, n);
		ct_sync(t, "gemm_batched");
		ct_get(t, dt, C, BATCH * SC, g);
		ct_check(t, "gemm_batched tb=1", dt, g, c, BATCH * SC, ct_tol(dt));
		ct_release(t);
	}
}

static void collectives(struct ct *t, enum kern_dtype dt)
{
	enum { n = 1000 };
	struct backend *b = t->b;
	struct be_group *g = NULL;
	struct be_req r1, r2;
	struct perr e;
	MPI_Comm dup;
	float *x = ct_host(t, n), *y = ct_host(t, n);
	void *X, *Y;
	int ok;

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (b->ops->group_create(b, dup, 0, 0, &g, &e) != PPLAN_OK || !g) {
		printf("FAIL group_create: %s\n", g ? "" : e.msg);
		t->failed++;
		return;
	}
	ct_fill(t, x, n, -4, 4);
	X = ct_dev(t, dt, x, n);
	Y = ct_bytes(t, NULL, n * (size_t)kern_dtype_size(dt));
	memset(&r1, 0, sizeof r1);
	ok = b->ops->allreduce(b, g, X, n, dt, BE_SUM, &r1, &e) == PPLAN_OK &&
	     b->ops->wait(b, &r1, &e) == PPLAN_OK &&
	     b->ops->allreduce(b, g, X, n, dt, BE_MAX, NULL, &e) == PPLAN_OK &&
	     b->ops->broadcast(b, g, X, n, dt, 0, NULL, &e) == PPLAN_OK;
	if (!ok) {
		printf("FAIL one-rank collectives: %s\n", e.msg);
		t->failed++;
	} else {
		ct_sync(t, "allreduce");
		ct_get(t, dt, X, n, y);
		ct_check(t, "NCCL all-reduce (1 rank)", dt, y, x, n, 0);
	}
	ok = b->ops->allgather(b, g, Y, X, n, dt, NULL, &e) == PPLAN_OK;
	if (ok) {
		ct_get(t, dt, Y, n, y);
		ct_check(t, "NCCL all-gather (1 rank)", dt, y, x, n, 0);
		b->ops->zero(b, Y, n * (size_t)kern_dtype_size(dt));
		ok = b->ops->reducescatter(b, g, Y, X, n, dt, NULL, &e) == PPLAN_OK;
	}
	if (ok) {
		ct_get(t, dt, Y, n, y);
		ct_check(t, "NCCL reduce-scatter (1 rank)", dt, y, x, n, 0);
		b->ops->zero(b, Y, n * (size_t)kern_dtype_size(dt));
		memset(&r1, 0, sizeof r1);
		memset(&r2, 0, sizeof r2);
		b->ops->p2p_begin(b);
		ok = b->ops->send(b, g, 0, X, n * (size_t)kern_dtype_size(dt), 7, &r1, &e) == PPLAN_OK &&
		     b->ops->recv(b, g, 0, Y, n * (size_t)kern_dtype_size(dt), 7, &r2, &e) == PPLAN_OK &&
		     b->ops->p2p_end(b, &e) == PPLAN_OK;
		while (ok && !b->ops->test(b, &r1))
			;
		ok = ok && b->ops->wait(b, &r2, &e) == PPLAN_OK;
	}
	if (!ok) {
		printf("FAIL one-rank collectives or transfers: %s\n", e.msg);
		t->failed++;
	} else {
		ct_get(t, dt, Y, n, y);
		ct_check(t, "NCCL grouped send to self", dt, y, x, n, 0);
	}
	b->ops->group_free(b, g);
	ct_release(t);
}

/* A mark before and after a GEMM of 2 * 512^3 FLOP: in order and apart
 * (no bound on the time itself); memory figures cover the buffers. */
static void marks_memory(struct ct *t, enum kern_dtype dt)
{
	enum { S = 512 };
	struct backend *b = t->b;
	size_t bytes = (size_t)S * S * (size_t)kern_dtype_size(dt);
	void *A = ct_bytes(t, NULL, bytes), *C = ct_bytes(t, NULL, bytes);
	struct be_memory mem = { 0, 0, 0 };
	double used, peak, s;
	int m0, m1;
	b->ops->marks_reset(b);
	m0 = b->ops->mark(b);
	b->ops->gemm(b, 0, 0, S, S, S, 1.0f, A, S, A, S, 0.0f, C, S, dt);
	m1 = b->ops->mark(b);
	ct_sync(t, "marks");
	s = b->ops->mark_seconds(b, m1);
	b->ops->memory(b, &mem);
	used = mem.own_now;
	peak = mem.process_peak;
	if (m0 != 0 || m1 != 1 || !(s > 0) || !(used >= (double)(2 * bytes)) ||
	    !(mem.own_peak >= used) || !(peak >= mem.own_peak)) {
		printf("FAIL marks and memory: marks %d %d, %.3g s; used %.0f, peak %.0f bytes\n",
		       m0, m1, s, used, peak);
		t->failed++;
	} else {
		printf("ok   marks %.3g ms for a %d^3 GEMM; memory %.0f MiB used, %.0f MiB peak\n",
		       s * 1e3, S, used / 1048576.0, peak / 1048576.0);
		t->passed++;
	}
	ct_release(t);
}

int main(int argc, char **argv)
{
	struct ct t;
	int rc = ct_open(&t, &argc, &argv, KD_F32);
	for (int dt = KD_F32; rc == 0 && dt <= KD_F16; dt++) {
		if (dt != KD_F32 && (rc = ct_backend(&t, dt)) != 0)
			break;
		gemms(&t, dt);
		collectives(&t, dt);
		marks_memory(&t, dt);
	}
	if (rc < 0)
		t.failed++;
	return ct_finish(&t);
}
