/*
 * calibrate_plan.c: the shapes and sizes `pplan calibrate` measures, and
 * the pplan.profile/1 it writes (calibrate_plan.h).
 *
 * GEMM shapes of a model (Megatron-LM's layer under tensor parallelism,
 * T = micro-batch x sequence tokens): QKV (T, h) x (h, (a + 2g) d / tp),
 * the attention output (T, a d / tp) x (a d / tp, h), the MLP up (T, h) x
 * (h, f / tp, twice for a gated MLP), the MLP down (T, f / tp) x
 * (f / tp, h) and the LM head (T, h) x (h, V / tp); the backward's
 * data-gradient GEMMs have the shapes (T, n) x (n, k) and the weight
 * gradients (k, T) x (T, n) of each forward (T, k) x (k, n).
 */
#include "calibrate_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cost.h"
#include "kernels.h"
#include "profile.h"
#include "version.h"


int calibrate_plan_dtype(enum precision p)
{
	return p == PREC_BF16 ? KD_BF16 : p == PREC_FP16 ? KD_F16 : KD_F32;
}

/* Adds a shape unless it is there already (the first name stays). */
static void add_gemm(struct cal_plan *p, long m, long n, long k, const char *what)
{
	for (int i = 0; i < p->n_gemm; i++)
		if (p->gemm[i].m == m && p->gemm[i].n == n && p->gemm[i].k == k)
			return;
	if (p->n_gemm >= CAL_MAX_GEMM || m < 1 || n < 1 || k < 1)
		return;
	if (2.0 * m * n * (double)k > p->gemm_flop_cap) {
		p->n_gemm_skipped++;
		return;
	}
	p->gemm[p->n_gemm] = (struct cal_gemm_point){ .m = m, .n = n, .k = k };
	snprintf(p->gemm_what[p->n_gemm], sizeof p->gemm_what[0], "%s", what);
	p->n_gemm++;
}

/* A forward GEMM (T, k) x (k, n) and, unless quick, its two backward ones. */
static void add_layer_gemm(struct cal_plan *p, long T, long k, long n, const char *name,
			   int tp, int mbs)
{
	char what[48];
	snprintf(what, sizeof what, "%s tp%d mbs%d", name, tp, mbs);
	add_gemm(p, T, n, k, what);
	if (p->opts.quick)
		return;
	snprintf(what, sizeof what, "%s dgrad tp%d mbs%d", name, tp, mbs);
	add_gemm(p, T, k, n, what);
	snprintf(what, sizeof what, "%s wgrad tp%d mbs%d", name, tp, mbs);
	add_gemm(p, k, n, T, what);
}

static void model_shapes(struct cal_plan *p)
{
	const struct model_spec *m = &p->model;
	long seq = p->opts.seq > 0 ? p->opts.seq : m->seq, d = m->head_dim;
	int tmax = p->opts.max_tp > 0 ? p->opts.max_tp : p->opts.quick ? 2 : 8;
	int bmax = p->opts.max_mbs > 0 ? p->opts.max_mbs : p->opts.quick ? 2 : 8;
	for (int tp = 1; tp <= tmax; tp *= 2) {
		long kvh = m->kv_heads >= tp ? m->kv_heads / tp : 1;
		if (m->heads % tp || m->ffn % tp || m->vocab % tp)
			continue;
		for (int mbs = 1; mbs <= bmax; mbs *= 2) {
			long T = mbs * seq, f = m->ffn / tp;
			add_layer_gemm(p, T, m->hidden, (m->heads / tp + 2 * kvh) * d, "qkv", tp, mbs);
			add_layer_gemm(p, T, m->heads / tp * d, m->hidden, "attn-out", tp, mbs);
			add_layer_gemm(p, T, m->hidden, mlp_is_gated(m->mlp) ? 2 * f : f, "mlp-up", tp, mbs);
			add_layer_gemm(p, T, f, m->hidden, "mlp-down", tp, mbs);
			add_layer_gemm(p, T, m->hidden, m->vocab / tp, "lm-head", tp, mbs);
		}
	}
}

/* Without a model: cubes and the skinny shapes of small micro-batches. */
static void grid_shapes(struct cal_plan *p)
{
	static const long full[] = { 256, 1024, 4096 }, quick[] = { 256, 1024 };
	const long *v = p->opts.quick ? quick : full;
	int n = p->opts.quick ? 2 : 3;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			for (int k = 0; k < n; k++)
				add_gemm(p, v[i], v[j], v[k], "grid");
	/* the same aspects, twice as large, so that curves have a trend */
	for (int i = 0; i < n; i++)
		add_gemm(p, 2 * v[i], 2 * v[i], 2 * v[i], "grid");
}

static void attention_shapes(struct cal_plan *p, int cuda)
{
	static const long cpu_seq[] = { 128, 256, 512, 1024 }, gpu_seq[] = { 512, 1024, 2048, 4096, 8192 };
	const long *seq = cuda ? gpu_seq : cpu_seq;
	int ns = cuda ? 5 : 4;
	long H = 16, G = 16, D = 64;
	if (p->opts.model_arg) {
		H = p->model.heads < 16 ? p->model.heads : 16;
		G = p->model.kv_heads * H / p->model.heads;
		if (G < 1)
			G = 1;
		while (H % G)
			G--;
		D = p->model.head_dim;
	}
	if (p->opts.quick)
		ns = 2;
	for (int i = 0; i < ns; i++)
		for (int fused = 0; fused <= 1 && p->n_attn < CAL_MAX_ATTN; fused++)
			p->attn[p->n_attn++] = (struct cal_attn_point){ .batch = 1, .heads = H, .kv_heads = G, .seq = seq[i], .head_dim = D, .fused = fused };
}

enum pplan_status calibrate_plan_new(const struct cal_plan_opts *o, struct cal_plan **out,
				     struct perr *e)
{
	struct cal_plan *p = calloc(1, sizeof *p);
	int cuda = o->precision != PREC_FP32;
	*out = NULL;
	if (!p)
		return perr_set(e, PPLAN_ENOMEM, "out of memory");
	p->opts = *o;
	if (o->model_arg) {
		enum pplan_status st = model_resolve(o->model_arg, &p->model, e);
		if (st != PPLAN_OK) {
			free(p);
			return st;
		}
	}
	/* The largest GEMM worth its time: about a second on the device. */
	p->gemm_flop_cap = cuda ? 2e12 : (o->quick ? 2e9 : 2e10);
	if (o->model_arg)
		model_shapes(p);
	else
		grid_shapes(p);
	/* On a GPU, the 8192 cube too: the shape datasheet rates and
	 * torch.matmul's usual figure are quoted at (bench/gpu-check.sh). */
	if (cuda && !o->quick)
		add_gemm(p, 8192, 8192, 8192, "square 8192");
	/* the layer whose element-wise kernels are measured: the model's, or
	 * a 1024-wide GPT layer; its forward bytes per token as the cost model
	 * counts them */
	{
		struct model_spec dm = { .hidden = 1024, .ffn = 4096, .heads = 16, .kv_heads = 16,
					 .head_dim = 64, .mlp = MLP_GELU, .layers = 1 };
		const struct model_spec *lm = o->model_arg ? &p->model : &dm;
		p->layer = (struct cal_layer){ lm->hidden, lm->ffn, lm->heads, lm->kv_heads,
					       lm->head_dim, mlp_is_gated(lm->mlp),
					       cost_layer_elementwise_bytes(lm, 1, 1, 0, o->precision) };
	}
	/* a streaming kernel from 12 KiB; the layer's element-wise kernels
	 * over 8 .. 16384 tokens; the optimizer over 4 Ki .. 16 Mi
	 * parameters; as bytes moved */
	{
		double esize = o->precision == PREC_FP32 ? 4 : 2;
		int q = o->quick;
		for (int k = 10; k <= (q ? 22 : 26); k += q ? 3 : 2)
			p->bw[CAL_ELEM_STREAM][p->n_bw[CAL_ELEM_STREAM]++].bytes = 3.0 * esize * (double)(1L << k);
		/* with a model: its micro-batches' token counts (1 .. 8 x seq) and
		 * a few smaller; caches make the rate depend on the size */
		long seq = o->model_arg ? (o->seq > 0 ? o->seq : p->model.seq) : 0;
		double tok[CAL_MAX_BW];
		int nt = 0;
		if (seq > 0) {
			for (long t = 8; t < seq && nt < CAL_MAX_BW - 4; t *= q ? 8 : 4)
				tok[nt++] = (double)t;
			for (int mbs = 1; mbs <= (q ? 2 : 8) && nt < CAL_MAX_BW; mbs *= 2)
				tok[nt++] = (double)mbs * (double)seq;
		} else {
			for (int k = 3; k <= (q ? 12 : 14); k += q ? 3 : 1)
				tok[nt++] = (double)(1L << k);
		}
		for (int i = 0; i < nt; i++)
			p->bw[CAL_ELEM_LAYER][p->n_bw[CAL_ELEM_LAYER]++].bytes =
				3.0 * p->layer.bytes_per_token * tok[i];
		for (int k = 12; k <= (q ? 21 : 24); k += q ? 3 : 2)
			p->bw[CAL_ELEM_ADAM][p->n_bw[CAL_ELEM_ADAM]++].bytes =
				(28.0 + (esize < 4 ? esize : 0)) * (double)(1L << k);
	}
	attention_shapes(p, cuda);
	*out = p;
	return PPLAN_OK;
}

void calibrate_plan_sizes(struct cal_plan *p, struct cal_session *s)
{
	static const enum coll_op ops[] = { COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCESCATTER,
					    COLL_ALLTOALL, COLL_BROADCAST, COLL_SENDRECV };
	double max = p->opts.max_bytes > 0 ? p->opts.max_bytes : p->opts.quick ? 16777216.0 : 1073741824.0;
	double budget = cal_mem_budget(s);
	int n = cal_size(s), k = 0;
	int esize = p->opts.precision == PREC_FP32 ? 4 : 2;

	/* GEMMs whose three matrices exceed the budget are left out. */
	for (int i = 0; i < p->n_gemm; i++) {
		const struct cal_gemm_point *g = &p->gemm[i];
		double bytes = ((double)g->m * g->k + (double)g->k * g->n + (double)g->m * g->n) * esize;
		if (bytes > budget) {
			p->n_gemm_skipped++;
			continue;
		}
		p->gemm[k] = *g;
		memmove(p->gemm_what[k], p->gemm_what[i], sizeof p->gemm_what[0]);
		k++;
	}
	p->n_gemm = k;
	/* So are element-wise points past it: a smaller host measures fewer
	 * sizes, and says so, rather than failing after minutes of work. */
	p->mem_budget = budget;
	for (int kind = 0; kind < CAL_ELEM_COUNT; kind++) {
		int kept = 0;
		for (int i = 0; i < p->n_bw[kind]; i++) {
			if (p->bw[kind][i].bytes > budget) {
				p->n_bw_skipped[kind]++;
				continue;
			}
			p->bw[kind][kept++] = p->bw[kind][i];
		}
		p->n_bw[kind] = kept;
	}
	p->n_sizes = 0;
	for (double b = 8; b <= max * (1 + 1e-9) && p->n_sizes < CAL_MAX_SIZES; b *= 2)
		p->sizes[p->n_sizes++] = b;
	p->n_coll = 0;
	if (n < 2)
		return; /* a rank alone has nothing to communicate with */
	for (int g = n; g >= 2; g /= 2) {
		if (n % g)
			continue;
		for (size_t i = 0; i < sizeof ops / sizeof ops[0] && p->n_coll < CAL_MAX_COLL; i++) {
			p->coll_op[p->n_coll] = ops[i];
			p->coll_ranks[p->n_coll++] = g;
		}
		if (p->opts.quick)
			break; /* the whole job only */
	}
}

void calibrate_plan_free(struct cal_plan *p)
{
	free(p);
}

/* ---- the profile ---------------------------------------------------------------
 * The measurements as a struct profile; sim/profile.c, the format's one
 * owner, writes it (and checks it as its reader would first). */

/* {"OpenBLAS": "0.3.21", "Open MPI": "4.1.4"} out of the backend's words. */
static void add_libraries(struct profile *pr, const char *words)
{
	static const char *const names[] = { "OpenBLAS", "Open MPI", "CUDA", "cuBLAS", "NCCL", NULL };
	for (int i = 0; names[i] && pr->n_libs < PROFILE_MAX_LIBS; i++) {
		const char *at = words, *v = NULL;
		size_t len = 0;
		/* the first mention followed by a version number */
		while ((at = strstr(at, names[i])) != NULL && len == 0) {
			v = at + strlen(names[i]);
			while (*v == ' ' || *v == 'v' || *v == '(')
				v++;
			while (v[len] && ((v[len] >= '0' && v[len] <= '9') || v[len] == '.'))
				len++;
			at++;
		}
		if (len == 0 || len >= sizeof pr->lib_version[0])
			continue;
		snprintf(pr->lib_name[pr->n_libs], sizeof pr->lib_name[0], "%s", names[i]);
		snprintf(pr->lib_version[pr->n_libs], sizeof pr->lib_version[0], "%.*s", (int)len, v);
		pr->n_libs++;
	}
}

static void add_host(struct profile *pr)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	while (f && fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (strncmp(line, "model name", 10) == 0 && c) {
			c++;
			while (*c == ' ' || *c == '\t')
				c++;
			c[strcspn(c, "\n")] = '\0';
			snprintf(pr->cpu_model, sizeof pr->cpu_model, "%s", c);
			break;
		}
	}
	if (f)
		fclose(f);
	pr->has_host = 1;
	gethostname(line, sizeof line - 1);
	line[sizeof line - 1] = '\0';
	snprintf(pr->hostname, sizeof pr->hostname, "%s", line);
	pr->cores = sysconf(_SC_NPROCESSORS_ONLN);
	pr->host_mem_gib = pages > 0 && psz > 0 ? (double)pages * psz / 1073741824.0 : NAN;
}

/* GEMM points whose rate falls as FLOPs grow within one aspect (m/k and
 * n/k equal) are refused by the profile reader (docs/profile-format.md):
 * such a point is measurement noise or a cache cliff; it is left out. */
static int gemm_keep(const struct cal_plan *p, int j)
{
	const struct cal_gemm_point *b = &p->gemm[j];
	for (int i = 0; i < p->n_gemm; i++) {
		const struct cal_gemm_point *a = &p->gemm[i];
		double fa = (double)a->m * a->n * a->k, fb = (double)b->m * b->n * b->k;
		if (i == j || fa >= fb)
			continue;
		if (a->m * b->k == b->m * a->k && a->n * b->k == b->n * a->k &&
		    b->tflops < a->tflops * 0.99)
			return 0;
	}
	return 1;
}

void calibrate_plan_print_dropped(FILE *f, const struct cal_plan *p)
{
	for (int i = 0; i < p->n_gemm; i++)
		if (!gemm_keep(p, i))
			fprintf(f, "# gemm %ldx%ldx%ld: %.4f TFLOP/s is below a smaller GEMM of its aspect: left out of the profile\n",
				p->gemm[i].m, p->gemm[i].n, p->gemm[i].k, p->gemm[i].tflops);
}

static void add_device(struct profile *pr, const struct cal_plan *p,
		       const struct cal_session *s, double peak_tflops)
{
	int cpu = p->opts.precision == PREC_FP32 && strncmp(cal_device(s), "cpu", 3) == 0;
	const struct gpu_spec *g = NULL;
	/* "NVIDIA H200 (0000:19:00.0)": the preset its family names */
	if (!cpu && !(g = gpu_find(cal_device(s))))
		g = gpu_find_in_description(cal_device(s));
	snprintf(pr->device_name, sizeof pr->device_name, "%s",
		 cpu ? "cpu" : g ? g->name : "unknown");
	snprintf(pr->device_description, sizeof pr->device_description, "%s", cal_device(s));
	snprintf(pr->backend, sizeof pr->backend, "%s", cpu ? "cpu" : "cuda");
	for (int i = 0; i < PREC_COUNT; i++)
		if (cpu && i == PREC_FP32)
			pr->peak_tflops[i] = peak_tflops;
		else if (g && g->peak_tflops[i] > 0)
			pr->peak_tflops[i] = g->peak_tflops[i];
	pr->mem_gib = cal_mem_budget(s) * 4 / 1073741824.0;
	pr->hbm_gbps = g ? g->hbm_gbps : NAN;
}

static enum pplan_status add_curves(struct profile *pr, const struct cal_plan *p, struct perr *e)
{
	struct profile_elementwise **bw[CAL_ELEM_COUNT] = {
		[CAL_ELEM_STREAM] = &pr->elementwise, [CAL_ELEM_LAYER] = &pr->layer_elementwise,
		[CAL_ELEM_ADAM] = &pr->optimizer_elementwise };
	int *n_bw[CAL_ELEM_COUNT] = {
		[CAL_ELEM_STREAM] = &pr->n_elementwise, [CAL_ELEM_LAYER] = &pr->n_layer_elementwise,
		[CAL_ELEM_ADAM] = &pr->n_optimizer_elementwise };
	int n_coll = 0;

	for (int i = 0; i < p->n_coll; i++)
		n_coll += p->coll[i].n > 0;
	pr->gemm = calloc((size_t)p->n_gemm + 1, sizeof *pr->gemm);
	pr->attention = calloc((size_t)p->n_attn + 1, sizeof *pr->attention);
	pr->collectives = calloc((size_t)n_coll + 1, sizeof *pr->collectives);
	for (int k = 0; k < CAL_ELEM_COUNT; k++)
		*bw[k] = calloc((size_t)p->n_bw[k] + 1, sizeof **bw[k]);
	if (!pr->gemm || !pr->attention || !pr->collectives || !pr->elementwise ||
	    !pr->layer_elementwise || !pr->optimizer_elementwise)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the profile");
	for (int i = 0; i < p->n_gemm; i++)
		if (gemm_keep(p, i))
			pr->gemm[pr->n_gemm++] = (struct profile_gemm){
				p->opts.precision, (double)p->gemm[i].m, (double)p->gemm[i].n,
				(double)p->gemm[i].k, p->gemm[i].tflops };
	for (int k = 0; k < CAL_ELEM_COUNT; k++)
		for (int i = 0; i < p->n_bw[k]; i++)
			(*bw[k])[(*n_bw[k])++] =
				(struct profile_elementwise){ p->bw[k][i].bytes, p->bw[k][i].gbps,
							      p->bw[k][i].fwd_share };
	for (int i = 0; i < p->n_attn; i++) {
		const struct cal_attn_point *q = &p->attn[i];
		pr->attention[pr->n_attention++] = (struct profile_attention){
			p->opts.precision, q->batch, q->heads, q->kv_heads, q->seq, q->head_dim,
			1, q->fused, q->fwd_tflops, q->bwd_tflops };
	}
	for (int i = 0; i < p->n_coll; i++) {
		const struct cal_coll *c = &p->coll[i];
		struct profile_collective *o = &pr->collectives[pr->n_collectives];
		if (c->n == 0)
			continue;
		if (!(o->points = calloc((size_t)c->n, sizeof *o->points)))
			return perr_set(e, PPLAN_ENOMEM, "out of memory for the profile");
		pr->n_collectives++;
		snprintf(o->op, sizeof o->op, "%s", cal_coll_name(c->op));
		snprintf(o->link, sizeof o->link, "%s", c->link);
		o->ranks = c->ranks;
		o->alpha_s = c->alpha_s;
		o->busbw_gbps = c->busbw_gbps;
		for (int k = 0; k < c->n; k++)
			o->points[o->n_points++] = (struct profile_coll_point){
				c->pts[k].bytes, c->pts[k].time_s, c->pts[k].algbw_gbps,
				c->pts[k].busbw_gbps, c->pts[k].exposed_s };
	}
	return PPLAN_OK;
}

enum pplan_status calibrate_plan_profile(const struct cal_plan *p, const struct cal_session *s,
					 double peak_tflops, const char *command,
					 struct profile *pr, struct perr *e)
{
	time_t t = time(NULL);
	struct tm tm;
	enum pplan_status st;

	profile_init(pr);
	pr->kind = PROFILE_MEASURED;
	add_device(pr, p, s, peak_tflops);
	add_host(pr);
	cal_conditions(s, &pr->cond);
	if ((st = add_curves(pr, p, e)) != PPLAN_OK) {
		profile_free(pr);
		return st;
	}
	snprintf(pr->pplan_version, sizeof pr->pplan_version, "%s", PPLAN_VERSION);
	snprintf(pr->git_hash, sizeof pr->git_hash, "%s", PPLAN_GIT_HASH);
	snprintf(pr->command, sizeof pr->command, "%s", command);
	gmtime_r(&t, &tm);
	strftime(pr->date, sizeof pr->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	add_libraries(pr, cal_libraries(s));
	return PPLAN_OK;
}

enum pplan_status calibrate_plan_save(const struct cal_plan *p, const struct cal_session *s,
				      double peak_tflops, const char *command,
				      const char *path, struct perr *e)
{
	struct profile pr;
	enum pplan_status st = calibrate_plan_profile(p, s, peak_tflops, command, &pr, e);
	if (st != PPLAN_OK)
		return st;
	st = profile_save(&pr, path, e);
	profile_free(&pr);
	return st;
}
