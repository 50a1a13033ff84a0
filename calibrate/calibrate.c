/*
 * calibrate.c: the calibration session and the compute measurements of
 * `pplan calibrate` (calibrate.h): GEMMs by shape, a streaming kernel by
 * size, the attention core by sequence length.  Only the backend
 * interface (backend.h) touches the device, so the same code measures the
 * CPU (OpenBLAS, C kernels) and a GPU (cuBLAS, CUDA kernels).
 *
 * How a point is timed (as nccl-tests times, and then the best of a few
 * loops, since compute rates are what a machine can do when nothing else
 * disturbs it): a barrier, warm-up calls, one call to size the loop, then
 * `repeats` times a barrier and a timed loop between two marks of the
 * backend (host clock on the CPU, events on the GPU); the mean time per
 * call of the slowest rank, and the smallest of those over the loops.  All ranks compute at once, as
 * they do in pplan exec, so ranks that share cores or memory bandwidth
 * measure what each gets then.
 */
#include "calibrate_internal.h"
#include "exec.h"
#include "host.h"
#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double cal_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double cal_max(struct cal_session *s, double v)
{
	double out = v;
	MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, s->world);
	return out;
}

long cal_iters(const struct cal_session *s, double one_s)
{
	double n = one_s > 0 ? s->cfg.target_s / one_s : s->cfg.max_iters;
	if (n < s->cfg.min_iters)
		n = s->cfg.min_iters;
	if (n > s->cfg.max_iters)
		n = s->cfg.max_iters;
	return (long)n;
}

/* ---- the session ------------------------------------------------------------ */

static void gather_hosts(struct cal_session *s)
{
	char name[MPI_MAX_PROCESSOR_NAME] = { 0 }, *all = NULL;
	int len = 0;
	MPI_Get_processor_name(name, &len);
	if (s->rank == 0)
		all = calloc((size_t)s->size, MPI_MAX_PROCESSOR_NAME);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
		   MPI_CHAR, 0, s->world);
	s->hosts[0] = '\0';
	if (s->rank == 0 && all) {
		size_t used = 0;
		for (int i = 0; i < s->size; i++) {
			const char *h = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				seen = !strcmp(h, all + (size_t)j * MPI_MAX_PROCESSOR_NAME);
			if (!seen && used + 1 < sizeof s->hosts)
				used += (size_t)snprintf(s->hosts + used, sizeof s->hosts - used,
							 "%s%s", used ? ", " : "", h);
			if (used >= sizeof s->hosts)
				used = sizeof s->hosts - 1;
		}
	}
	free(all);
	MPI_Bcast(s->hosts, (int)sizeof s->hosts, MPI_CHAR, 0, s->world);
}

enum pplan_status cal_agree(struct cal_session *s, enum pplan_status st,
			    struct perr *e)
{
	return exec_agree_comm(s->world, st, e);
}

double cal_mem_budget(const struct cal_session *s)
{
	return s->mem_budget;
}

/* A quarter of this rank's share of its host's memory (CPU), or of its
 * device's. */
static double local_budget(const struct cal_session *s)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (s->b->kind == BE_CPU) {
		double host = pages > 0 && psz > 0 ? (double)pages * (double)psz : 4e9;
		return host / 4 / (s->local_size > 0 ? s->local_size : 1);
	}
	/* A quarter of the GPU's memory, as for the host (a rank has a GPU
	 * of its own: be_cuda_open). */
	return s->b->device_bytes > 0 ? s->b->device_bytes / 4 : 4e9;
}

enum pplan_status cal_open(int *argc, char ***argv, const struct cal_config *cfg,
			   struct cal_session **out, struct perr *e)
{
	struct cal_session *s;
	enum pplan_status st;
	int inited = 0, leader;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (!s)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory");
	s->cfg = *cfg;
	/* the executor's bring-up, so both start MPI alike */
	MPI_Initialized(&inited);
	s->we_inited = !inited;
	if ((st = exec_mpi_init(argc, argv, &s->rank, &s->size, e)) != PPLAN_OK) {
		free(s);
		return st;
	}
	s->world = MPI_COMM_WORLD;
	MPI_Comm_split_type(s->world, MPI_COMM_TYPE_SHARED, s->rank, MPI_INFO_NULL, &s->node);
	MPI_Comm_rank(s->node, &s->local_rank);
	MPI_Comm_size(s->node, &s->local_size);
	leader = s->local_rank == 0;
	MPI_Allreduce(&leader, &s->nodes, 1, MPI_INT, MPI_SUM, s->world);
	host_load_and_clock(&s->load_1m, &s->cpu_mhz);
	gather_hosts(s);
	if (cfg->backend == CAL_CUDA)
		st = be_cuda_open(s->node, (enum kern_dtype)cfg->dtype, s->world, &s->b, e);
	else
		st = be_cpu_open(s->local_rank, &s->b, e);
	st = cal_agree(s, st, e);
	if (st != PPLAN_OK) {
		if (s->b)
			s->b->ops->close(s->b);
		s->b = NULL;
		cal_close(s);
		return st;
	}
	/* Every rank measures the same sizes: the budget is the smallest
	 * rank's (hosts with less memory, or more ranks, set it). */
	s->mem_budget = local_budget(s);
	MPI_Allreduce(MPI_IN_PLACE, &s->mem_budget, 1, MPI_DOUBLE, MPI_MIN, s->world);
	*out = s;
	return PPLAN_OK;
}

void cal_close(struct cal_session *s)
{
	int fin = 0;
	if (!s)
		return;
	if (s->b)
		s->b->ops->close(s->b);
	if (s->node != MPI_COMM_NULL && s->node)
		MPI_Comm_free(&s->node);
	MPI_Finalized(&fin);
	if (s->we_inited && !fin)
		MPI_Finalize();
	free(s);
}

int cal_rank(const struct cal_session *s) { return s->rank; }
int cal_size(const struct cal_session *s) { return s->size; }
int cal_nodes(const struct cal_session *s) { return s->nodes; }
const char *cal_device(const struct cal_session *s) { return s->b->device; }
const char *cal_libraries(const struct cal_session *s) { return s->b->libraries; }
const char *cal_hosts(const struct cal_session *s) { return s->hosts; }
void cal_conditions(const struct cal_session *s, struct run_conditions *c)
{
	c->ranks = s->size;
	c->ranks_per_host = s->local_size;
	c->load_1m = s->load_1m;
	c->cpu_mhz = s->cpu_mhz;
}

/* ---- buffers ---------------------------------------------------------------- */

static int dsize(const struct cal_session *s)
{
	return kern_dtype_size(s->b->dtype);
}

/* n elements of the backend's dtype with values in [-1, 1), from a fixed
 * seed: GEMMs on zeros would flatter a GPU's clocks. */
static void fill(struct cal_session *s, void *dst, long n)
{
	enum { CHUNK = 1 << 16 };
	static float host[CHUNK];
	float *scratch = s->b->ops->alloc(s->b, CHUNK * sizeof(float));
	unsigned x = 12345u + (unsigned)s->rank;
	for (int i = 0; i < CHUNK; i++) {
		x = x * 1664525u + 1013904223u;
		host[i] = (float)((double)(x >> 8) / (1 << 24) * 2 - 1);
	}
	if (!scratch)
		return; /* stays zero */
	for (long off = 0; off < n; off += CHUNK) {
		long c = n - off < CHUNK ? n - off : CHUNK;
		s->b->ops->to_device(s->b, scratch, host, (size_t)c * sizeof(float));
		s->b->k->from_f32(s->b->ks, (char *)dst + (size_t)off * dsize(s), scratch, c);
	}
	s->b->ops->sync(s->b, NULL);
	s->b->ops->free(s->b, scratch);
}

static void *alloc_filled(struct cal_session *s, long n)
{
	void *p = s->b->ops->alloc(s->b, (size_t)n * dsize(s));
	if (p)
		fill(s, p, n);
	return p;
}

/* ---- one timed point ----------------------------------------------------------- */

typedef void (*cal_fn)(struct cal_session *s, void *ctx);

/* Seconds per call of fn, the slowest rank's, and the iterations used. */
static double time_point(struct cal_session *s, cal_fn fn, void *ctx, long *iters)
{
	struct backend *b = s->b;
	double one, best = 0;
	int m0, m1;
	MPI_Barrier(s->world);
	for (int i = 0; i < s->cfg.warmup; i++)
		fn(s, ctx);
	b->ops->sync(b, NULL);
	b->ops->marks_reset(b);
	m0 = b->ops->mark(b);
	fn(s, ctx);
	m1 = b->ops->mark(b);
	b->ops->sync(b, NULL);
	one = cal_max(s, b->ops->mark_seconds(b, m1) - b->ops->mark_seconds(b, m0));
	*iters = cal_iters(s, one);
	for (int r = 0; r < s->cfg.repeats || r == 0; r++) {
		double t;
		MPI_Barrier(s->world);
		b->ops->marks_reset(b);
		m0 = b->ops->mark(b);
		for (long i = 0; i < *iters; i++)
			fn(s, ctx);
		m1 = b->ops->mark(b);
		b->ops->sync(b, NULL);
		t = cal_max(s, (b->ops->mark_seconds(b, m1) - b->ops->mark_seconds(b, m0)) /
				       (double)*iters);
		if (r == 0 || t < best)
			best = t;
	}
	return best;
}

/* ---- GEMM ----------------------------------------------------------------------- */

/* A GEMM's operands as a training step meets them: read from memory, not
 * from a cache that the previous call of the same GEMM left warm.  The
 * timed loop cycles through enough copies of A, B and C that their sum
 * exceeds GEMM_COLD_BYTES (beyond the last-level caches of today's CPUs
 * and GPUs); a large GEMM has one copy, and every copy is touched before
 * the clock starts.  On this project's 2-core machine the small GPT's
 * GEMMs measured 1.15-1.45x slower cold than hot, and inside pplan exec
 * (PPLAN_EXEC_GEMM_STATS) they ran at the cold rate (0.13-0.15 TFLOP/s
 * against 0.13-0.14 cold, 0.18 hot): the hot figure had the CPU runs'
 * predictions 13-16 % short, the cold one 2-3 %. */
#define GEMM_COLD_BYTES (96.0 * 1048576)
#define GEMM_MAX_COPIES 64

struct gemm_ctx {
	long m, n, k;
	void *a[GEMM_MAX_COPIES], *b[GEMM_MAX_COPIES], *c[GEMM_MAX_COPIES];
	int copies, next; /* copies >= 1 once gemm_alloc succeeded */
};

static void gemm_fn(struct cal_session *s, void *ctx)
{
	struct gemm_ctx *g = ctx;
	int i = g->next++ % g->copies;
	s->b->ops->gemm(s->b, 0, 0, g->m, g->n, g->k, 1.0f, g->a[i], g->k, g->b[i], g->n, 0.0f,
			g->c[i], g->n, s->b->dtype);
}

static void gemm_free_copy(struct cal_session *s, struct gemm_ctx *g, int i)
{
	s->b->ops->free(s->b, g->a[i]);
	s->b->ops->free(s->b, g->b[i]);
	s->b->ops->free(s->b, g->c[i]);
}

static void gemm_free(struct cal_session *s, struct gemm_ctx *g)
{
	for (int i = 0; i < g->copies; i++)
		gemm_free_copy(s, g, i);
	g->copies = 0;
}

/* How many copies of a GEMM's `bytes` of operands its cold loop cycles
 * through, within half the memory budget of a rank. */
static int gemm_cold_copies(double bytes, double budget)
{
	int want = bytes >= GEMM_COLD_BYTES ? 1 : (int)ceil(GEMM_COLD_BYTES / bytes);
	if (want > GEMM_MAX_COPIES)
		want = GEMM_MAX_COPIES;
	while (want > 1 && want * bytes > budget / 2)
		want--;
	return want;
}

/* Up to `want` filled copies of the operands; how many it got (0: none
 * fit). */
static int gemm_alloc(struct cal_session *s, struct gemm_ctx *g, int want)
{
	for (g->copies = 0; g->copies < want; g->copies++) {
		int i = g->copies;
		g->a[i] = alloc_filled(s, g->m * g->k);
		g->b[i] = alloc_filled(s, g->k * g->n);
		g->c[i] = alloc_filled(s, g->m * g->n); /* touched: no page fault when timed */
		if (!g->a[i] || !g->b[i] || !g->c[i]) {
			gemm_free_copy(s, g, i);
			break;
		}
	}
	return g->copies;
}

double cal_peak_tflops(struct cal_session *s)
{
	struct gemm_ctx g = { .m = 768, .n = 768, .k = 768 };
	double best = 1e30, v;
	if (gemm_alloc(s, &g, 1) == 1) { /* hot: the peak, not a step's rate */
		MPI_Barrier(s->world);
		for (int r = 0; r < 4; r++) {
			int m0, m1;
			s->b->ops->marks_reset(s->b);
			m0 = s->b->ops->mark(s->b);
			gemm_fn(s, &g);
			m1 = s->b->ops->mark(s->b);
			s->b->ops->sync(s->b, NULL);
			v = s->b->ops->mark_seconds(s->b, m1) - s->b->ops->mark_seconds(s->b, m0);
			if (v > 0 && v < best)
				best = v;
		}
	}
	v = best < 1e30 ? 2.0 * 768 * 768 * 768.0 / best / 1e12 : 0;
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, s->world);
	gemm_free(s, &g);
	return v / s->size;
}

enum pplan_status cal_gemm(struct cal_session *s, struct cal_gemm_point *pts, int n,
			   struct perr *e)
{
	double budget = cal_mem_budget(s);
	for (int i = 0; i < n; i++) {
		struct cal_gemm_point *p = &pts[i];
		struct gemm_ctx g = { .m = p->m, .n = p->n, .k = p->k };
		double bytes = ((double)p->m * p->k + (double)p->k * p->n + (double)p->m * p->n) *
			       dsize(s);
		enum pplan_status st = PPLAN_OK;
		if (p->m < 1 || p->n < 1 || p->k < 1 || bytes > budget)
			st = perr_set(e, PPLAN_EINPUT,
				      "GEMM %ld x %ld x %ld needs %.2f GiB, more than the %.2f GiB budget of a rank",
				      p->m, p->n, p->k, bytes / 1073741824.0, budget / 1073741824.0);
		if (st == PPLAN_OK && gemm_alloc(s, &g, gemm_cold_copies(bytes, budget)) < 1)
			st = perr_set(e, PPLAN_ENOMEM, "out of device memory for GEMM %ld x %ld x %ld",
				      p->m, p->n, p->k);
		st = cal_agree(s, st, e);
		if (st == PPLAN_OK) {
			p->time_s = time_point(s, gemm_fn, &g, &p->iters);
			p->tflops = 2.0 * p->m * p->n * (double)p->k / p->time_s / 1e12;
		}
		gemm_free(s, &g);
		if (st != PPLAN_OK)
			return st;
	}
	return PPLAN_OK;
}

/* ---- element-wise ----------------------------------------------------------------
 * A transformer layer's element-wise kernels as pplan exec runs them
 * (exec/layer.c), forward and backward together: two norms, the biases of
 * the QKV, attention-output, MLP-up and MLP-down GEMMs, the Q/K/V split and
 * the heads-to-rows layout of the attention output, two residual adds and
 * the activation; backward the norms', activation's and biases' gradients
 * and the layouts' inverses.  The attention core is measured apart.  On a
 * GPU they are bound by memory bandwidth; on a CPU some by their
 * arithmetic (the activation's tanh).  Their rate is stated in the bytes
 * the cost model charges for them (cost_layer_elementwise_bytes, three
 * times the forward's for forward and backward), so that the model's
 * count meets the measured time exactly.  The activation's input keeps
 * the values it was filled with, as a GEMM's output would have them: its
 * bias is zero and its gradient goes to a buffer of its own, since
 * values that drift over the timed loop to where tanh and exp are
 * constant (|x| > 9) take libm's fast path: on this project's 2-core
 * machine the layer mix then measured 4.5 GB/s instead of 2.3, and the
 * CPU runs' predictions came out 30 % short instead of 12 %. */

struct mix_ctx {
	struct cal_layer L;
	long N;
	void *x, *y, *qkv, *q, *k, *v, *att, *h, *g, *dh, *w, *b, *bqkv, *bc, *bf;
	float *mean, *rstd, *dw, *db, *dbias;
};

/* Calls of the mix timed apart (3 marks each, within the backends' mark
 * pools). */
#define MIX_SHARE_ITERS 1000

static void mix_forward(struct cal_session *s, struct mix_ctx *c)
{
	const struct kern_ops *k = s->b->k;
	kstream *ks = s->b->ks;
	long N = c->N, C = c->L.C, F = c->L.F, H = c->L.heads, G = c->L.kv_heads, D = c->L.head_dim;
	long up = c->L.gated ? 2 * F : F;
	k->layernorm_fwd(ks, c->y, c->mean, c->rstd, c->x, c->w, c->b, N, C, 1e-5f);
	k->bias_add(ks, c->qkv, c->bqkv, N, (H + 2 * G) * D);
	k->qkv_split(ks, c->q, c->k, c->v, c->qkv, 1, N, H, G, D);
	k->heads_to_rows(ks, c->att, c->q, 1, N, H, D);
	k->bias_add(ks, c->y, c->bc, N, C);
	k->add(ks, c->x, c->x, c->y, N * C);
	k->layernorm_fwd(ks, c->y, c->mean, c->rstd, c->x, c->w, c->b, N, C, 1e-5f);
	k->bias_add(ks, c->h, c->bf, N, up);
	if (c->L.gated)
		k->swiglu_fwd(ks, c->g, c->h, N, F);
	else
		k->gelu_fwd(ks, c->g, c->h, N * F);
	k->bias_add(ks, c->y, c->bc, N, C);
	k->add(ks, c->x, c->x, c->y, N * C);
}

static void mix_backward(struct cal_session *s, struct mix_ctx *c)
{
	const struct kern_ops *k = s->b->k;
	kstream *ks = s->b->ks;
	long N = c->N, C = c->L.C, F = c->L.F, H = c->L.heads, G = c->L.kv_heads, D = c->L.head_dim;
	long up = c->L.gated ? 2 * F : F;
	k->bias_bwd(ks, c->dbias, c->y, N, C);
	if (c->L.gated)
		k->swiglu_bwd(ks, c->dh, c->h, c->g, N, F);
	else
		k->gelu_bwd(ks, c->dh, c->h, c->g, N * F);
	k->bias_bwd(ks, c->dbias, c->dh, N, up);
	k->layernorm_bwd(ks, c->x, c->dw, c->db, c->y, c->x, c->w, c->mean, c->rstd, N, C);
	k->bias_bwd(ks, c->dbias, c->y, N, C);
	k->rows_to_heads(ks, c->q, c->att, 1, N, H, D);
	k->qkv_merge(ks, c->qkv, c->q, c->k, c->v, 1, N, H, G, D);
	k->bias_bwd(ks, c->dbias, c->qkv, N, (H + 2 * G) * D);
	k->layernorm_bwd(ks, c->x, c->dw, c->db, c->y, c->x, c->w, c->mean, c->rstd, N, C);
}

/* The layer's kernels, forward then backward: the timed point. */
static void mix_fn(struct cal_session *s, void *ctx)
{
	mix_forward(s, ctx);
	mix_backward(s, ctx);
}

/* The forward kernels' share of the mix's time: the two halves timed
 * apart in one loop (a mark between them), so that both see the same
 * machine; the slowest rank's sums. */
static double mix_share(struct cal_session *s, struct mix_ctx *c, long iters)
{
	struct backend *b = s->b;
	double fwd = 0, all = 0;
	if (iters > MIX_SHARE_ITERS)
		iters = MIX_SHARE_ITERS;
	MPI_Barrier(s->world);
	b->ops->marks_reset(b);
	for (long i = 0; i < iters; i++) {
		b->ops->mark(b);
		mix_forward(s, c);
		b->ops->mark(b);
		mix_backward(s, c);
		b->ops->mark(b);
	}
	b->ops->sync(b, NULL);
	for (long i = 0; i < iters; i++) {
		double t0 = b->ops->mark_seconds(b, (int)(3 * i)), t1 = b->ops->mark_seconds(b, (int)(3 * i + 1));
		fwd += t1 - t0;
		all += b->ops->mark_seconds(b, (int)(3 * i + 2)) - t0;
	}
	fwd = cal_max(s, fwd);
	all = cal_max(s, all);
	return all > 0 ? fwd / all : 0;
}

static void mix_free(struct cal_session *s, struct mix_ctx *c)
{
	void *bufs[] = { c->x, c->y, c->qkv, c->q, c->k, c->v, c->att, c->h, c->g, c->dh, c->w, c->b,
			 c->bqkv, c->bc, c->bf, c->mean, c->rstd, c->dw, c->db, c->dbias };
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		s->b->ops->free(s->b, bufs[i]);
}

/* A streaming kernel: out = a + b over n elements. */
struct add_ctx {
	long n;
	void *out, *a, *b;
};

static void add_fn(struct cal_session *s, void *ctx)
{
	struct add_ctx *c = ctx;
	s->b->k->add(s->b->ks, c->out, c->a, c->b, c->n);
}

/* The AdamW step over n fp32 parameters (and the compute copy where the
 * dtype is not fp32). */
struct adam_ctx {
	long n;
	float *p, *m, *v, *g;
	void *lp;
};

static void adam_fn(struct cal_session *s, void *ctx)
{
	struct adam_ctx *c = ctx;
	s->b->k->adamw(s->b->ks, c->p, c->m, c->v, c->g, c->lp, c->n, 1e-4f, 0.9f, 0.95f, 1e-8f,
		       0.1f, 10, 1.0f);
}

static void *alloc_f32(struct cal_session *s, long n)
{
	return s->b->ops->alloc(s->b, (size_t)n * sizeof(float));
}

/* Buffers and the call for one point of a kind; *bytes what a call moves. */
static enum pplan_status elem_setup(struct cal_session *s, enum cal_elem kind, double want,
				    const struct cal_layer *layer, struct mix_ctx *mc, struct add_ctx *ac,
				    struct adam_ctx *dc, double *bytes, struct perr *e)
{
	int ds = kern_dtype_size(s->b->dtype);
	int ok = 1;
	if (kind == CAL_ELEM_STREAM) {
		ac->n = (long)(want / (3.0 * ds));
		if (ac->n < 1)
			return perr_set(e, PPLAN_EINPUT, "a streaming kernel of %.0f bytes is less than one element", want);
		ac->a = alloc_filled(s, ac->n), ac->b = alloc_filled(s, ac->n);
		ac->out = s->b->ops->alloc(s->b, (size_t)ac->n * ds);
		ok = ac->a && ac->b && ac->out;
		*bytes = 3.0 * ac->n * ds;
	} else if (kind == CAL_ELEM_ADAM) {
		dc->n = (long)(want / (28.0 + (ds < 4 ? ds : 0)));
		if (dc->n < 1)
			return perr_set(e, PPLAN_EINPUT, "an optimizer step of %.0f bytes is less than one parameter", want);
		dc->p = alloc_f32(s, dc->n), dc->m = alloc_f32(s, dc->n), dc->v = alloc_f32(s, dc->n);
		dc->g = alloc_f32(s, dc->n);
		dc->lp = ds < 4 ? s->b->ops->alloc(s->b, (size_t)dc->n * ds) : NULL;
		ok = dc->p && dc->m && dc->v && dc->g && (ds == 4 || dc->lp);
		/* read p, m, v, g; write p, m, v (and the compute copy) */
		*bytes = (28.0 + (ds < 4 ? ds : 0)) * dc->n;
	} else {
		const struct cal_layer *L = layer;
		long qw = (L->heads + 2 * L->kv_heads) * L->head_dim, up = L->gated ? 2 * L->F : L->F;
		long hd = L->heads * L->head_dim, kv = L->kv_heads * L->head_dim;
		mc->L = *L;
		mc->N = L->bytes_per_token > 0 ? (long)(want / (3.0 * L->bytes_per_token)) : 0;
		if (mc->N < 1 || L->C < 1 || L->F < 1 || L->heads < 1 || L->kv_heads < 1 ||
		    L->head_dim < 1)
			return perr_set(e, PPLAN_EINPUT, "a layer's element-wise kernels of %.0f bytes are less than one token",
					want);
		mc->x = alloc_filled(s, mc->N * L->C), mc->y = alloc_filled(s, mc->N * L->C);
		mc->qkv = alloc_filled(s, mc->N * qw);
		mc->q = alloc_filled(s, mc->N * hd), mc->k = alloc_filled(s, mc->N * kv);
		mc->v = alloc_filled(s, mc->N * kv), mc->att = alloc_filled(s, mc->N * hd);
		mc->h = alloc_filled(s, mc->N * up), mc->g = alloc_filled(s, mc->N * L->F);
		mc->dh = alloc_filled(s, mc->N * up);
		mc->w = alloc_filled(s, L->C), mc->b = alloc_filled(s, L->C);
		mc->bqkv = alloc_filled(s, qw), mc->bc = alloc_filled(s, L->C);
		mc->bf = s->b->ops->alloc(s->b, (size_t)up * ds);
		if (mc->bf)
			s->b->ops->zero(s->b, mc->bf, (size_t)up * ds);
		mc->mean = alloc_f32(s, mc->N), mc->rstd = alloc_f32(s, mc->N);
		mc->dw = alloc_f32(s, L->C), mc->db = alloc_f32(s, L->C);
		mc->dbias = alloc_f32(s, qw > up ? (qw > L->C ? qw : L->C) : (up > L->C ? up : L->C));
		ok = mc->x && mc->y && mc->qkv && mc->q && mc->k && mc->v && mc->att && mc->h &&
		     mc->g && mc->dh && mc->w && mc->b && mc->bqkv && mc->bc && mc->bf && mc->mean &&
		     mc->rstd && mc->dw && mc->db && mc->dbias;
		*bytes = 3.0 * L->bytes_per_token * mc->N;
	}
	return ok ? PPLAN_OK : perr_set(e, PPLAN_ENOMEM, "out of device memory for %.0f bytes", want);
}

enum pplan_status cal_elementwise(struct cal_session *s, enum cal_elem kind,
				  struct cal_bw_point *pts, int n, const struct cal_layer *layer,
				  struct perr *e)
{
	for (int i = 0; i < n; i++) {
		struct cal_bw_point *p = &pts[i];
		struct mix_ctx mc = { 0 };
		struct add_ctx ac = { 0 };
		struct adam_ctx dc = { 0 };
		double bytes = 0;
		enum pplan_status st = p->bytes > cal_mem_budget(s)
			? perr_set(e, PPLAN_EINPUT, "%.0f bytes of element-wise work exceed the memory budget", p->bytes)
			: elem_setup(s, kind, p->bytes, layer, &mc, &ac, &dc, &bytes, e);
		st = cal_agree(s, st, e);
		if (st == PPLAN_OK) {
			p->bytes = bytes;
			p->time_s = kind == CAL_ELEM_STREAM ? time_point(s, add_fn, &ac, &p->iters)
				  : kind == CAL_ELEM_ADAM   ? time_point(s, adam_fn, &dc, &p->iters)
							    : time_point(s, mix_fn, &mc, &p->iters);
			p->gbps = p->bytes / p->time_s / 1e9;
			p->fwd_share = 0;
			if (kind == CAL_ELEM_LAYER) {
				/* the model splits the point's time between a layer's
				 * forward and backward by this, not by their bytes */
				p->fwd_share = fmin(fmax(mix_share(s, &mc, p->iters), 0.05), 0.95);
			}
		}
		mix_free(s, &mc);
		s->b->ops->free(s->b, ac.a), s->b->ops->free(s->b, ac.b), s->b->ops->free(s->b, ac.out);
		s->b->ops->free(s->b, dc.p), s->b->ops->free(s->b, dc.m), s->b->ops->free(s->b, dc.v);
		s->b->ops->free(s->b, dc.g), s->b->ops->free(s->b, dc.lp);
		if (st != PPLAN_OK)
			return st;
	}
	return PPLAN_OK;
}

/* ---- attention ------------------------------------------------------------------- */

struct attn_ctx {
	long B, H, G, T, D;
	float scale;
	int fused;
	void *q, *k, *v, *out, *dout, *dq, *dk, *dv, *S, *dS;
	float *lse;
};

/* Element offsets into (B,H,T,D) / (B,G,T,D) / (BH,T,T) tensors. */
#define QOFF(a, bb, h) ((size_t)(((bb) * (a)->H + (h)) * (a)->T * (a)->D))
#define KOFF(a, bb, g) ((size_t)(((bb) * (a)->G + (g)) * (a)->T * (a)->D))
#define SOFF(a, bb, h) ((size_t)(((bb) * (a)->H + (h)) * (a)->T * (a)->T))

static void *at(struct cal_session *s, void *base, size_t off)
{
	return (char *)base + off * (size_t)dsize(s);
}

/* scores = q k^T, softmax, out = att v; a batched GEMM per KV group. */
static void attn_fwd3(struct cal_session *s, struct attn_ctx *a)
{
	const struct be_ops *o = s->b->ops;
	long hpg = a->H / a->G, T = a->T, D = a->D;
	for (long bb = 0; bb < a->B; bb++)
		for (long g = 0; g < a->G; g++) {
			long h0 = g * hpg;
			o->gemm_batched(s->b, 0, 1, T, T, D, 1.0f, at(s, a->q, QOFF(a, bb, h0)), D, T * D,
					at(s, a->k, KOFF(a, bb, g)), D, 0, 0.0f,
					at(s, a->S, SOFF(a, bb, h0)), T, T * T, hpg, s->b->dtype);
		}
	s->b->k->softmax_causal_fwd(s->b->ks, a->S, a->S, a->B * a->H, T, T, 0, 0, a->scale);
	for (long bb = 0; bb < a->B; bb++)
		for (long g = 0; g < a->G; g++) {
			long h0 = g * hpg;
			o->gemm_batched(s->b, 0, 0, T, D, T, 1.0f, at(s, a->S, SOFF(a, bb, h0)), T, T * T,
					at(s, a->v, KOFF(a, bb, g)), D, 0, 0.0f,
					at(s, a->out, QOFF(a, bb, h0)), D, T * D, hpg, s->b->dtype);
		}
}

/* The backward of attn_fwd3 from the saved probabilities in S. */
static void attn_bwd3(struct cal_session *s, struct attn_ctx *a)
{
	const struct be_ops *o = s->b->ops;
	long hpg = a->H / a->G, T = a->T, D = a->D;
	for (long bb = 0; bb < a->B; bb++)
		for (long g = 0; g < a->G; g++) {
			long h0 = g * hpg;
			/* datt = dout v^T */
			o->gemm_batched(s->b, 0, 1, T, T, D, 1.0f, at(s, a->dout, QOFF(a, bb, h0)), D,
					T * D, at(s, a->v, KOFF(a, bb, g)), D, 0, 0.0f,
					at(s, a->dS, SOFF(a, bb, h0)), T, T * T, hpg, s->b->dtype);
			/* dv = sum over the group's heads of att^T dout */
			for (long h = 0; h < hpg; h++)
				o->gemm(s->b, 1, 0, T, D, T, 1.0f, at(s, a->S, SOFF(a, bb, h0 + h)), T,
					at(s, a->dout, QOFF(a, bb, h0 + h)), D, h ? 1.0f : 0.0f,
					at(s, a->dv, KOFF(a, bb, g)), D, s->b->dtype);
		}
	s->b->k->softmax_causal_bwd(s->b->ks, a->dS, a->dS, a->S, a->B * a->H, T, T, a->scale);
	for (long bb = 0; bb < a->B; bb++)
		for (long g = 0; g < a->G; g++) {
			long h0 = g * hpg;
			/* dq = dscores k; dk = sum of dscores^T q */
			o->gemm_batched(s->b, 0, 0, T, D, T, 1.0f, at(s, a->dS, SOFF(a, bb, h0)), T,
					T * T, at(s, a->k, KOFF(a, bb, g)), D, 0, 0.0f,
					at(s, a->dq, QOFF(a, bb, h0)), D, T * D, hpg, s->b->dtype);
			for (long h = 0; h < hpg; h++)
				o->gemm(s->b, 1, 0, T, D, T, 1.0f, at(s, a->dS, SOFF(a, bb, h0 + h)), T,
					at(s, a->q, QOFF(a, bb, h0 + h)), D, h ? 1.0f : 0.0f,
					at(s, a->dk, KOFF(a, bb, g)), D, s->b->dtype);
		}
}

static void attn_fwd_fn(struct cal_session *s, void *ctx)
{
	struct attn_ctx *a = ctx;
	if (a->fused)
		s->b->k->attention_fwd(s->b->ks, a->out, a->lse, a->q, a->k, a->v, a->B, a->H,
				       a->G, a->T, a->T, a->D, 0, 0, a->scale);
	else
		attn_fwd3(s, a);
}

static void attn_bwd_fn(struct cal_session *s, void *ctx)
{
	struct attn_ctx *a = ctx;
	if (a->fused)
		s->b->k->attention_bwd(s->b->ks, a->dq, a->dk, a->dv, a->dout, a->out, a->lse,
				       a->q, a->k, a->v, a->B, a->H, a->G, a->T, a->T, a->D, 0,
				       0, a->scale);
	else
		attn_bwd3(s, a);
}

static void attn_free(struct cal_session *s, struct attn_ctx *a)
{
	void *bufs[] = { a->q, a->k, a->v, a->out, a->dout, a->dq, a->dk, a->dv, a->S, a->dS,
			 a->lse };
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		s->b->ops->free(s->b, bufs[i]);
}

enum pplan_status cal_attention(struct cal_session *s, struct cal_attn_point *pts,
				int n, struct perr *e)
{
	for (int i = 0; i < n; i++) {
		struct cal_attn_point *p = &pts[i];
		struct attn_ctx a = { .B = p->batch, .H = p->heads, .G = p->kv_heads,
				      .T = p->seq, .D = p->head_dim,
				      .scale = (float)(1.0 / sqrt((double)p->head_dim)),
				      .fused = p->fused };
		long nq = a.B * a.H * a.T * a.D, nk = a.B * a.G * a.T * a.D;
		long ns = p->fused ? 1 : a.B * a.H * a.T * a.T;
		double bytes = (4.0 * nq + 4.0 * nk + 2.0 * ns) * dsize(s);
		double flops = 4.0 * a.B * a.H * (double)a.T * a.T * a.D;
		long it_b = 0;
		enum pplan_status st = PPLAN_OK;
		if (a.B < 1 || a.H < 1 || a.G < 1 || a.H % a.G || a.T < 1 || a.D < 1 ||
		    bytes > cal_mem_budget(s))
			st = perr_set(e, PPLAN_EINPUT,
				      "attention of %ld x %ld heads (%ld KV) x %ld tokens x %ld is not a shape this rank can measure",
				      a.B, a.H, a.G, a.T, a.D);
		if (st == PPLAN_OK) {
			a.q = alloc_filled(s, nq), a.k = alloc_filled(s, nk), a.v = alloc_filled(s, nk);
			a.dout = alloc_filled(s, nq);
			a.out = s->b->ops->alloc(s->b, (size_t)nq * dsize(s));
			a.dq = s->b->ops->alloc(s->b, (size_t)nq * dsize(s));
			a.dk = s->b->ops->alloc(s->b, (size_t)nk * dsize(s));
			a.dv = s->b->ops->alloc(s->b, (size_t)nk * dsize(s));
			a.S = s->b->ops->alloc(s->b, (size_t)ns * dsize(s));
			a.dS = s->b->ops->alloc(s->b, (size_t)ns * dsize(s));
			a.lse = s->b->ops->alloc(s->b, (size_t)(a.B * a.H * a.T) * sizeof(float));
			if (!a.q || !a.k || !a.v || !a.dout || !a.out || !a.dq || !a.dk || !a.dv ||
			    !a.S || !a.dS || !a.lse)
				st = perr_set(e, PPLAN_ENOMEM, "out of device memory for attention at %ld tokens",
					      a.T);
		}
		st = cal_agree(s, st, e);
		if (st == PPLAN_OK) {
			p->fwd_s = time_point(s, attn_fwd_fn, &a, &p->iters);
			attn_fwd_fn(s, &a); /* the backward reads the forward's outputs */
			p->bwd_s = time_point(s, attn_bwd_fn, &a, &it_b);
			p->fwd_tflops = flops / p->fwd_s / 1e12;
			p->bwd_tflops = 2 * flops / p->bwd_s / 1e12;
		}
		attn_free(s, &a);
		if (st != PPLAN_OK)
			return st;
	}
	return PPLAN_OK;
}
