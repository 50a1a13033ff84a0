/*
 * profile.c: reading and writing pplan.profile/1 (profile.h and
 * docs/profile-format.md).  Every sentence names the file and the key.
 */
#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

/* GEMM points of one precision and aspect may not lose more than this
 * share of their rate as FLOPs grow (measurement noise). */
#define GEMM_MONOTONE_SLACK 0.01
/* Two shapes have the same aspect when m/k and n/k agree to this. */
#define ASPECT_TOLERANCE 1e-9

static const char *const kind_names[] = { "measured", "fitted", "published", NULL };
static const char *const coll_ops[] = { "all_reduce", "all_gather", "reduce_scatter",
					"all_to_all", "broadcast", "send_recv", NULL };
static const char *const link_names[] = { "nvswitch", "nvlink", "pcie", "net", "shm", NULL };

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof *p);
	p->kind = PROFILE_MEASURED;
	for (int i = 0; i < PREC_COUNT; i++)
		p->peak_tflops[i] = NAN;
	p->mem_gib = p->hbm_gbps = p->host_mem_gib = NAN;
	p->cond.ranks = p->cond.ranks_per_host = -1;
	p->cond.load_1m = p->cond.cpu_mhz = NAN;
	p->fit_value = NAN;
	p->constants = *cost_params_default();
}

void profile_free(struct profile *p)
{
	for (int i = 0; i < p->n_collectives; i++)
		free(p->collectives[i].points);
	free(p->gemm);
	free(p->elementwise);
	free(p->layer_elementwise);
	free(p->optimizer_elementwise);
	p->layer_elementwise = p->optimizer_elementwise = NULL;
	p->n_layer_elementwise = p->n_optimizer_elementwise = 0;
	free(p->attention);
	free(p->collectives);
	p->gemm = NULL;
	p->elementwise = NULL;
	p->attention = NULL;
	p->collectives = NULL;
	p->n_gemm = p->n_elementwise = p->n_attention = p->n_collectives = 0;
}

/* ---- readers of one value --------------------------------------------------- */

static int in_list(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return i;
	return -1;
}

static enum pplan_status copy_string(const cJSON *o, const char *key, char *buf,
				     size_t len, int required, const char *where,
				     struct perr *e)
{
	const char *s = NULL;
	enum pplan_status st = json_get_string(o, key, &s, where, e);
	if (st == PPLAN_ENOTFOUND)
		return required ? perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where, key)
				: PPLAN_OK;
	if (st != PPLAN_OK)
		return st;
	if (strlen(s) >= len)
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be at most %zu characters",
				where, key, len - 1);
	snprintf(buf, len, "%s", s);
	return PPLAN_OK;
}

/* What a profile's numbers may be: a range per kind of quantity, wide
 * enough for any machine pplan prices (a laptop core to a GB200), narrow
 * enough that a denormal or a typo in the exponent is refused rather than
 * turned into a negative or NaN prediction (fuzz findings F15, F16). */
struct bounds {
	double lo, hi;
	int whole;        /* a whole number (a GEMM dimension) */
	const char *unit; /* for the sentence */
};
static const struct bounds B_GIB = { 1e-3, 1e6, 0, "GiB" };
static const struct bounds B_GBPS = { PROFILE_GBPS_MIN, PROFILE_GBPS_MAX, 0, "GB/s" };
/* A collective point's rates are its bytes over its time: whatever the
 * bounds on those allow (1 B in 1e5 s to 1e15 B in 1 ns), so that a slow
 * small message on a loaded machine is a point, not a refused file. */
static const struct bounds B_POINT_GBPS = { 1e-14, 1e15, 0, "GB/s" };
static const struct bounds B_TFLOPS = { 1e-6, 1e5, 0, "TFLOP/s" };
static const struct bounds B_DIM = { 1, 2147483647.0, 1, "elements" };
static const struct bounds B_BYTES = { 1, 1e15, 0, "bytes" };
static const struct bounds B_SECONDS = { 1e-9, 1e5, 0, "s" };
static const struct bounds B_LOAD = { 0, 1e6, 0, "(load average)" };
static const struct bounds B_MHZ = { 1, 1e5, 0, "MHz" };
static const struct bounds B_SHARE = { 0.01, 0.99, 0, "(a share of the time)" };

/* A number within b; NAN when null and not required. */
static enum pplan_status bounded(const cJSON *o, const char *key, double *out,
				 int required, const struct bounds *b,
				 const char *where, struct perr *e)
{
	double v = NAN;
	enum pplan_status st = json_get_number(o, key, &v, where, e);
	if (st == PPLAN_ENOTFOUND) {
		*out = NAN;
		return required ? perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where, key)
				: PPLAN_OK;
	}
	if (st != PPLAN_OK)
		return st;
	if (!(v >= b->lo && v <= b->hi) || (b->whole && v != floor(v)))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be a %snumber from %.10g to %.10g %s, got %g",
				where, key, b->whole ? "whole " : "", b->lo, b->hi, b->unit, v);
	*out = v;
	return PPLAN_OK;
}

static enum pplan_status count(const cJSON *o, const char *key, long *out,
			       const char *where, struct perr *e)
{
	enum pplan_status st = json_get_long(o, key, out, 1, where, e);
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where, key);
	return st;
}

static enum pplan_status precision_of(const cJSON *o, enum precision *out,
				      const char *where, struct perr *e)
{
	const char *s = NULL;
	enum pplan_status st = json_get_string(o, "precision", &s, where, e);
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: precision is missing", where);
	if (st != PPLAN_OK)
		return st;
	if (precision_parse(s, out) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: precision must be fp32, bf16, fp16 or fp8, got '%s'",
				where, s);
	return PPLAN_OK;
}

/* An optional array: NULL when absent or null, else it must be one. */
static enum pplan_status array_of(const cJSON *root, const char *key, const cJSON **out,
				  int *n, const char *path, struct perr *e)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
	*out = NULL;
	*n = 0;
	if (!a || cJSON_IsNull(a))
		return PPLAN_OK;
	if (!cJSON_IsArray(a))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be an array", path, key);
	*out = a;
	*n = cJSON_GetArraySize(a);
	return PPLAN_OK;
}

/* ---- the sections ----------------------------------------------------------- */

static enum pplan_status read_device(const cJSON *root, struct profile *p,
				     const char *path, struct perr *e)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "device"), *pk;
	char where[600];
	enum pplan_status st;

	snprintf(where, sizeof where, "%s: device", path);
	if (!cJSON_IsObject(d))
		return perr_set(e, PPLAN_EINPUT, "%s: device must be an object", path);
	if ((st = copy_string(d, "name", p->device_name, sizeof p->device_name, 1, where, e)) ||
	    (st = copy_string(d, "description", p->device_description,
			      sizeof p->device_description, 0, where, e)) ||
	    (st = copy_string(d, "backend", p->backend, sizeof p->backend, 0, where, e)) ||
	    (st = bounded(d, "mem_gib", &p->mem_gib, 0, &B_GIB, where, e)) ||
	    (st = bounded(d, "hbm_gbps", &p->hbm_gbps, 0, &B_GBPS, where, e)))
		return st;
	if (p->backend[0] && strcmp(p->backend, "cuda") && strcmp(p->backend, "cpu"))
		return perr_set(e, PPLAN_EINPUT, "%s: backend must be cuda, cpu or null, got '%s'",
				where, p->backend);
	pk = cJSON_GetObjectItemCaseSensitive(d, "peak_tflops");
	if (pk && !cJSON_IsNull(pk)) {
		char pw[700];
		if (!cJSON_IsObject(pk))
			return perr_set(e, PPLAN_EINPUT, "%s: peak_tflops must be an object", where);
		snprintf(pw, sizeof pw, "%s.peak_tflops", where);
		for (int i = 0; i < PREC_COUNT; i++)
			if ((st = bounded(pk, precision_name((enum precision)i),
					   &p->peak_tflops[i], 0, &B_TFLOPS, pw, e)))
				return st;
	}
	return PPLAN_OK;
}

static enum pplan_status read_host(const cJSON *root, struct profile *p,
				   const char *path, struct perr *e)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "host");
	char where[600];
	enum pplan_status st;

	if (!h || cJSON_IsNull(h))
		return PPLAN_OK;
	snprintf(where, sizeof where, "%s: host", path);
	if (!cJSON_IsObject(h))
		return perr_set(e, PPLAN_EINPUT, "%s: host must be an object or null", path);
	p->has_host = 1;
	if ((st = copy_string(h, "hostname", p->hostname, sizeof p->hostname, 0, where, e)) ||
	    (st = copy_string(h, "cpu_model", p->cpu_model, sizeof p->cpu_model, 0, where, e)) ||
	    (st = bounded(h, "mem_gib", &p->host_mem_gib, 0, &B_GIB, where, e)))
		return st;
	st = json_get_long(h, "cores", &p->cores, 1, where, e);
	if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
		return st;
	/* the conditions of the measurement (absent in older profiles) */
	st = json_get_long(h, "ranks", &p->cond.ranks, 1, where, e);
	if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
		return st;
	st = json_get_long(h, "ranks_per_host", &p->cond.ranks_per_host, 1, where, e);
	if (st != PPLAN_OK && st != PPLAN_ENOTFOUND)
		return st;
	if ((st = bounded(h, "load_avg_1m", &p->cond.load_1m, 0, &B_LOAD, where, e)) ||
	    (st = bounded(h, "cpu_mhz", &p->cond.cpu_mhz, 0, &B_MHZ, where, e)))
		return st;
	return PPLAN_OK;
}

static int same_aspect(const struct profile_gemm *a, const struct profile_gemm *b)
{
	return a->precision == b->precision &&
	       fabs(a->m / a->k - b->m / b->k) <= ASPECT_TOLERANCE * (a->m / a->k) &&
	       fabs(a->n / a->k - b->n / b->k) <= ASPECT_TOLERANCE * (a->n / a->k);
}

/* Within one precision and aspect, the rate may not fall as FLOPs grow. */
static enum pplan_status gemm_monotone(const struct profile *p, const char *path,
				       struct perr *e)
{
	for (int i = 0; i < p->n_gemm; i++)
		for (int j = 0; j < p->n_gemm; j++) {
			const struct profile_gemm *a = &p->gemm[i], *b = &p->gemm[j];
			double fa = a->m * a->n * a->k, fb = b->m * b->n * b->k;
			if (i == j || !same_aspect(a, b) || !(fb > fa))
				continue;
			if (b->tflops < a->tflops * (1.0 - GEMM_MONOTONE_SLACK))
				return perr_set(e, PPLAN_EINPUT,
						"%s: gemm[%d]: %s %gx%gx%g reaches %g TFLOP/s, less than the smaller gemm[%d] (%g): a non-monotonic curve",
						path, j, precision_name(b->precision), b->m, b->n,
						b->k, b->tflops, i, a->tflops);
		}
	return PPLAN_OK;
}

static enum pplan_status read_gemm(const cJSON *root, struct profile *p,
				   const char *path, struct perr *e)
{
	const cJSON *a, *it;
	int n, i = 0;
	enum pplan_status st = array_of(root, "gemm", &a, &n, path, e);
	if (st || !a || n == 0)
		return st;
	if (!(p->gemm = calloc((size_t)n, sizeof *p->gemm)))
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", path);
	cJSON_ArrayForEach(it, a) {
		struct profile_gemm *g = &p->gemm[i];
		char where[600];
		snprintf(where, sizeof where, "%s: gemm[%d]", path, i);
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s must be an object", where);
		if ((st = precision_of(it, &g->precision, where, e)) ||
		    (st = bounded(it, "m", &g->m, 1, &B_DIM, where, e)) ||
		    (st = bounded(it, "n", &g->n, 1, &B_DIM, where, e)) ||
		    (st = bounded(it, "k", &g->k, 1, &B_DIM, where, e)) ||
		    (st = bounded(it, "tflops", &g->tflops, 1, &B_TFLOPS, where, e)))
			return st;
		p->n_gemm = ++i;
	}
	return gemm_monotone(p, path, e);
}

/* One element-wise curve: key "elementwise" (a streaming kernel), or the
 * additive "layer_elementwise" (a transformer layer's norm, residual,
 * bias and activation kernels, forward and backward) and
 * "optimizer_elementwise" (the AdamW kernel) that pplan calibrate writes. */
static enum pplan_status read_bw_curve(const cJSON *root, const char *key,
				       struct profile_elementwise **out, int *count,
				       const char *path, struct perr *e)
{
	const cJSON *a, *it;
	int n, i = 0;
	enum pplan_status st = array_of(root, key, &a, &n, path, e);
	if (st || !a || n == 0)
		return st;
	if (!(*out = calloc((size_t)n, sizeof **out)))
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", path);
	cJSON_ArrayForEach(it, a) {
		struct profile_elementwise *w = &(*out)[i];
		char where[600];
		snprintf(where, sizeof where, "%s: %s[%d]", path, key, i);
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s must be an object", where);
		if ((st = bounded(it, "bytes", &w->bytes, 1, &B_BYTES, where, e)) ||
		    (st = bounded(it, "gbps", &w->gbps, 1, &B_GBPS, where, e)) ||
		    (st = bounded(it, "forward_share", &w->fwd_share, 0, &B_SHARE, where, e)))
			return st;
		if (!(w->fwd_share > 0))
			w->fwd_share = 0; /* not measured */
		if (i > 0 && !(w->bytes > (*out)[i - 1].bytes))
			return perr_set(e, PPLAN_EINPUT, "%s: points must be sorted by bytes", where);
		*count = ++i;
	}
	return PPLAN_OK;
}

static enum pplan_status read_elementwise(const cJSON *root, struct profile *p,
					  const char *path, struct perr *e)
{
	enum pplan_status st;
	if ((st = read_bw_curve(root, "elementwise", &p->elementwise, &p->n_elementwise, path, e)) ||
	    (st = read_bw_curve(root, "layer_elementwise", &p->layer_elementwise,
				&p->n_layer_elementwise, path, e)))
		return st;
	return read_bw_curve(root, "optimizer_elementwise", &p->optimizer_elementwise,
			     &p->n_optimizer_elementwise, path, e);
}

static enum pplan_status read_attention(const cJSON *root, struct profile *p,
					const char *path, struct perr *e)
{
	const cJSON *a, *it;
	int n, i = 0;
	enum pplan_status st = array_of(root, "attention", &a, &n, path, e);
	if (st || !a || n == 0)
		return st;
	if (!(p->attention = calloc((size_t)n, sizeof *p->attention)))
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", path);
	cJSON_ArrayForEach(it, a) {
		struct profile_attention *t = &p->attention[i];
		char where[600];
		snprintf(where, sizeof where, "%s: attention[%d]", path, i);
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s must be an object", where);
		if ((st = precision_of(it, &t->precision, where, e)) ||
		    (st = count(it, "batch", &t->batch, where, e)) ||
		    (st = count(it, "heads", &t->heads, where, e)) ||
		    (st = count(it, "kv_heads", &t->kv_heads, where, e)) ||
		    (st = count(it, "seq", &t->seq, where, e)) ||
		    (st = count(it, "head_dim", &t->head_dim, where, e)) ||
		    (st = bounded(it, "fwd_tflops", &t->fwd_tflops, 1, &B_TFLOPS, where, e)) ||
		    (st = bounded(it, "bwd_tflops", &t->bwd_tflops, 1, &B_TFLOPS, where, e)))
			return st;
		if (json_get_bool(it, "causal", &t->causal, where, e) == PPLAN_EINPUT ||
		    json_get_bool(it, "fused", &t->fused, where, e) == PPLAN_EINPUT)
			return PPLAN_EINPUT;
		p->n_attention = ++i;
	}
	return PPLAN_OK;
}

static enum pplan_status read_points(const cJSON *c, struct profile_collective *pc,
				     const char *where, struct perr *e)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "points"), *it;
	int n, i = 0;
	enum pplan_status st;
	if (!a || cJSON_IsNull(a))
		return PPLAN_OK;
	if (!cJSON_IsArray(a))
		return perr_set(e, PPLAN_EINPUT, "%s: points must be an array", where);
	n = cJSON_GetArraySize(a);
	if (n == 0)
		return PPLAN_OK;
	if (!(pc->points = calloc((size_t)n, sizeof *pc->points)))
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", where);
	cJSON_ArrayForEach(it, a) {
		struct profile_coll_point *q = &pc->points[i];
		char pw[700];
		snprintf(pw, sizeof pw, "%s.points[%d]", where, i);
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s must be an object", pw);
		if ((st = bounded(it, "bytes", &q->bytes, 1, &B_BYTES, pw, e)) ||
		    (st = bounded(it, "time_s", &q->time_s, 1, &B_SECONDS, pw, e)) ||
		    (st = bounded(it, "algbw_gbps", &q->algbw_gbps, 0, &B_POINT_GBPS, pw, e)) ||
		    (st = bounded(it, "busbw_gbps", &q->busbw_gbps, 0, &B_POINT_GBPS, pw, e)) ||
		    (st = bounded(it, "exposed_s", &q->exposed_s, 0, &B_SECONDS, pw, e)))
			return st;
		if (i > 0 && !(q->bytes > pc->points[i - 1].bytes))
			return perr_set(e, PPLAN_EINPUT, "%s: points must be sorted by bytes", pw);
		pc->n_points = ++i;
	}
	return PPLAN_OK;
}

static enum pplan_status read_collectives(const cJSON *root, struct profile *p,
					  const char *path, struct perr *e)
{
	const cJSON *a, *it;
	int n, i = 0;
	enum pplan_status st = array_of(root, "collectives", &a, &n, path, e);
	if (st || !a || n == 0)
		return st;
	if (!(p->collectives = calloc((size_t)n, sizeof *p->collectives)))
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory", path);
	cJSON_ArrayForEach(it, a) {
		struct profile_collective *c = &p->collectives[i];
		char where[600];
		long ranks = 0;
		double alpha = 0;
		snprintf(where, sizeof where, "%s: collectives[%d]", path, i);
		p->n_collectives = i + 1; /* so that profile_free sees its points */
		if (!cJSON_IsObject(it))
			return perr_set(e, PPLAN_EINPUT, "%s must be an object", where);
		if ((st = copy_string(it, "op", c->op, sizeof c->op, 1, where, e)) ||
		    (st = copy_string(it, "link", c->link, sizeof c->link, 1, where, e)) ||
		    (st = count(it, "ranks", &ranks, where, e)) ||
		    (st = bounded(it, "busbw_gbps", &c->busbw_gbps, 0, &B_GBPS, where, e)))
			return st;
		if (in_list(c->op, coll_ops) < 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s: op must be all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv, got '%s'",
					where, c->op);
		if (in_list(c->link, link_names) < 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s: link must be nvswitch, nvlink, pcie, net or shm, got '%s'",
					where, c->link);
		if (ranks > (long)CLUSTER_MAX_GPUS)
			return perr_set(e, PPLAN_EINPUT, "%s: ranks must be at most %ld", where,
					(long)CLUSTER_MAX_GPUS);
		c->ranks = (int)ranks;
		st = json_get_number(it, "alpha_s", &alpha, where, e);
		if (st == PPLAN_EINPUT)
			return st;
		if (st == PPLAN_OK && !(alpha >= 0 && alpha <= PROFILE_ALPHA_MAX_S))
			return perr_set(e, PPLAN_EINPUT, "%s: alpha_s must be a latency from 0 to %g s, got %g",
					where, PROFILE_ALPHA_MAX_S, alpha);
		c->alpha_s = st == PPLAN_OK ? alpha : NAN;
		if ((st = read_points(it, c, where, e)))
			return st;
		i++;
	}
	return PPLAN_OK;
}

static enum pplan_status read_constants(const cJSON *root, struct profile *p,
					const char *path, struct perr *e)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "constants"), *it;
	char where[600];
	if (!c || cJSON_IsNull(c))
		return PPLAN_OK;
	if (!cJSON_IsObject(c))
		return perr_set(e, PPLAN_EINPUT, "%s: constants must be an object", path);
	snprintf(where, sizeof where, "%s: constants", path);
	p->has_constants = 1;
	cJSON_ArrayForEach(it, c) {
		enum pplan_status st;
		if (!cJSON_IsNumber(it))
			return perr_set(e, PPLAN_EINPUT, "%s: %s must be a number", where,
					it->string ? it->string : "?");
		st = cost_param_set(&p->constants, it->string, it->valuedouble, where, e);
		if (st != PPLAN_OK)
			return st;
	}
	return PPLAN_OK;
}

static enum pplan_status read_fit(const cJSON *root, struct profile *p,
				  const char *path, struct perr *e)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "fit"), *src, *it;
	char where[600];
	enum pplan_status st;
	long cases = 0;

	if (!f || cJSON_IsNull(f))
		return PPLAN_OK;
	snprintf(where, sizeof where, "%s: fit", path);
	if (!cJSON_IsObject(f))
		return perr_set(e, PPLAN_EINPUT, "%s: fit must be an object or null", path);
	p->has_fit = 1;
	if ((st = copy_string(f, "runs", p->fit_runs, sizeof p->fit_runs, 0, where, e)) ||
	    (st = copy_string(f, "objective", p->fit_objective, sizeof p->fit_objective, 0,
			      where, e)))
		return st;
	st = json_get_long(f, "cases", &cases, 0, where, e);
	if (st == PPLAN_EINPUT)
		return st;
	p->fit_cases = (int)(cases < 1L << 30 ? cases : 1L << 30);
	st = json_get_number(f, "value", &p->fit_value, where, e);
	if (st == PPLAN_EINPUT)
		return st;
	src = cJSON_GetObjectItemCaseSensitive(f, "sources");
	if (src && !cJSON_IsNull(src)) {
		if (!cJSON_IsArray(src))
			return perr_set(e, PPLAN_EINPUT, "%s: sources must be an array", where);
		cJSON_ArrayForEach(it, src) {
			if (!cJSON_IsString(it))
				return perr_set(e, PPLAN_EINPUT, "%s: sources must be strings", where);
			if (p->n_fit_sources < PROFILE_MAX_SOURCES)
				snprintf(p->fit_sources[p->n_fit_sources++],
					 sizeof p->fit_sources[0], "%s", it->valuestring);
		}
	}
	return PPLAN_OK;
}

static enum pplan_status read_provenance(const cJSON *root, struct profile *p,
					 const char *path, struct perr *e)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "provenance"), *libs, *it;
	char where[600];
	enum pplan_status st;

	if (!v || cJSON_IsNull(v))
		return PPLAN_OK;
	snprintf(where, sizeof where, "%s: provenance", path);
	if (!cJSON_IsObject(v))
		return perr_set(e, PPLAN_EINPUT, "%s: provenance must be an object", path);
	if ((st = copy_string(v, "pplan_version", p->pplan_version, sizeof p->pplan_version, 0,
			      where, e)) ||
	    (st = copy_string(v, "git_hash", p->git_hash, sizeof p->git_hash, 0, where, e)) ||
	    (st = copy_string(v, "command", p->command, sizeof p->command, 0, where, e)) ||
	    (st = copy_string(v, "date", p->date, sizeof p->date, 0, where, e)))
		return st;
	libs = cJSON_GetObjectItemCaseSensitive(v, "libraries");
	if (libs && !cJSON_IsNull(libs)) {
		if (!cJSON_IsObject(libs))
			return perr_set(e, PPLAN_EINPUT, "%s: libraries must be an object", where);
		cJSON_ArrayForEach(it, libs) {
			if (!cJSON_IsString(it))
				return perr_set(e, PPLAN_EINPUT, "%s: libraries.%s must be a string",
						where, it->string ? it->string : "?");
			if (p->n_libs < PROFILE_MAX_LIBS) {
				snprintf(p->lib_name[p->n_libs], sizeof p->lib_name[0], "%s", it->string);
				snprintf(p->lib_version[p->n_libs], sizeof p->lib_version[0], "%s",
					 it->valuestring);
				p->n_libs++;
			}
		}
	}
	return PPLAN_OK;
}

/* The document root, checked section by section into p; path names the
 * file in the sentences. */
static enum pplan_status from_json(const cJSON *root, const char *path, struct profile *p,
				   struct perr *e)
{
	const char *schema = NULL, *kind = NULL;
	enum pplan_status st;

	if (!cJSON_IsObject(root))
		return perr_set(e, PPLAN_EINPUT, "%s: expected a JSON object", path);
	if (json_get_string(root, "schema", &schema, path, e) != PPLAN_OK ||
	    strcmp(schema, "pplan.profile/1") != 0)
		return perr_set(e, PPLAN_EINPUT, "%s: schema must be \"pplan.profile/1\"", path);
	st = json_get_string(root, "kind", &kind, path, e);
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: kind is missing", path);
	if (st != PPLAN_OK)
		return st;
	if (in_list(kind, kind_names) < 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: kind must be measured, fitted or published, got '%s'", path, kind);
	p->kind = (enum profile_kind)in_list(kind, kind_names);
	if ((st = read_device(root, p, path, e)) || (st = read_host(root, p, path, e)) ||
	    (st = read_gemm(root, p, path, e)) || (st = read_elementwise(root, p, path, e)) ||
	    (st = read_attention(root, p, path, e)) ||
	    (st = read_collectives(root, p, path, e)) ||
	    (st = read_constants(root, p, path, e)) || (st = read_fit(root, p, path, e)))
		return st;
	return read_provenance(root, p, path, e);
}

enum pplan_status profile_load(const char *path, struct profile *p, struct perr *e)
{
	cJSON *root = NULL;
	enum pplan_status st;

	profile_init(p);
	if ((st = json_read_file(path, &root, e)) != PPLAN_OK)
		return st;
	st = from_json(root, path, p, e);
	cJSON_Delete(root);
	if (st != PPLAN_OK)
		profile_free(p);
	return st;
}

/* ---- writing ---------------------------------------------------------------- */

static void write_bw_curve(cJSON *root, const char *key, const struct profile_elementwise *w,
			   int n)
{
	cJSON *a;
	if (n <= 0)
		return;
	a = cJSON_AddArrayToObject(root, key);
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "bytes", w[i].bytes);
		cJSON_AddNumberToObject(o, "gbps", w[i].gbps);
		if (w[i].fwd_share > 0)
			cJSON_AddNumberToObject(o, "forward_share", w[i].fwd_share);
		cJSON_AddItemToArray(a, o);
	}
}

static void add_string_or_null(cJSON *o, const char *key, const char *s)
{
	if (s && s[0])
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *device_json(const struct profile *p)
{
	cJSON *d = cJSON_CreateObject(), *pk;
	cJSON_AddStringToObject(d, "name", p->device_name);
	cJSON_AddStringToObject(d, "description", p->device_description);
	add_string_or_null(d, "backend", p->backend);
	pk = cJSON_AddObjectToObject(d, "peak_tflops");
	for (int i = 0; i < PREC_COUNT; i++)
		json_add_number_or_null(pk, precision_name((enum precision)i), p->peak_tflops[i]);
	json_add_number_or_null(d, "mem_gib", p->mem_gib);
	json_add_number_or_null(d, "hbm_gbps", p->hbm_gbps);
	return d;
}

static void add_curves(cJSON *root, const struct profile *p)
{
	if (p->n_gemm) {
		cJSON *a = cJSON_AddArrayToObject(root, "gemm");
		for (int i = 0; i < p->n_gemm; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "precision", precision_name(p->gemm[i].precision));
			cJSON_AddNumberToObject(o, "m", p->gemm[i].m);
			cJSON_AddNumberToObject(o, "n", p->gemm[i].n);
			cJSON_AddNumberToObject(o, "k", p->gemm[i].k);
			cJSON_AddNumberToObject(o, "tflops", p->gemm[i].tflops);
			cJSON_AddItemToArray(a, o);
		}
	}
	write_bw_curve(root, "elementwise", p->elementwise, p->n_elementwise);
	write_bw_curve(root, "layer_elementwise", p->layer_elementwise, p->n_layer_elementwise);
	write_bw_curve(root, "optimizer_elementwise", p->optimizer_elementwise,
		       p->n_optimizer_elementwise);
	if (p->n_attention) {
		cJSON *a = cJSON_AddArrayToObject(root, "attention");
		for (int i = 0; i < p->n_attention; i++) {
			const struct profile_attention *t = &p->attention[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "precision", precision_name(t->precision));
			cJSON_AddNumberToObject(o, "batch", (double)t->batch);
			cJSON_AddNumberToObject(o, "heads", (double)t->heads);
			cJSON_AddNumberToObject(o, "kv_heads", (double)t->kv_heads);
			cJSON_AddNumberToObject(o, "seq", (double)t->seq);
			cJSON_AddNumberToObject(o, "head_dim", (double)t->head_dim);
			cJSON_AddBoolToObject(o, "causal", t->causal);
			cJSON_AddBoolToObject(o, "fused", t->fused);
			cJSON_AddNumberToObject(o, "fwd_tflops", t->fwd_tflops);
			cJSON_AddNumberToObject(o, "bwd_tflops", t->bwd_tflops);
			cJSON_AddItemToArray(a, o);
		}
	}
	if (p->n_collectives) {
		cJSON *a = cJSON_AddArrayToObject(root, "collectives");
		for (int i = 0; i < p->n_collectives; i++) {
			const struct profile_collective *c = &p->collectives[i];
			cJSON *o = cJSON_CreateObject(), *pts;
			cJSON_AddStringToObject(o, "op", c->op);
			cJSON_AddNumberToObject(o, "ranks", c->ranks);
			cJSON_AddStringToObject(o, "link", c->link);
			json_add_number_or_null(o, "alpha_s", c->alpha_s);
			json_add_number_or_null(o, "busbw_gbps", c->busbw_gbps);
			pts = cJSON_AddArrayToObject(o, "points");
			for (int j = 0; j < c->n_points; j++) {
				cJSON *q = cJSON_CreateObject();
				cJSON_AddNumberToObject(q, "bytes", c->points[j].bytes);
				cJSON_AddNumberToObject(q, "time_s", c->points[j].time_s);
				json_add_number_or_null(q, "algbw_gbps", c->points[j].algbw_gbps);
				json_add_number_or_null(q, "busbw_gbps", c->points[j].busbw_gbps);
				if (c->points[j].exposed_s > 0)
					cJSON_AddNumberToObject(q, "exposed_s", c->points[j].exposed_s);
				cJSON_AddItemToArray(pts, q);
			}
			cJSON_AddItemToArray(a, o);
		}
	}
}

static cJSON *constants_json(const struct profile *p)
{
	int n;
	const struct cost_param_info *t = cost_param_table(&n);
	const struct cost_params *d = cost_params_default();
	cJSON *c = cJSON_CreateObject();
	for (int i = 0; i < n; i++) {
		double v = cost_param_get(&p->constants, &t[i]);
		if (t[i].fitted || v != cost_param_get(d, &t[i]))
			cJSON_AddNumberToObject(c, t[i].name, v);
	}
	return c;
}

/* What profile_save writes, profile_load reads: the document is checked
 * as the reader checks it before a byte is written.  A refusal is a bug in
 * the writer (a number no fit or measurement should give), not bad input. */
static enum pplan_status check_before_writing(const cJSON *root, const char *path,
					      struct perr *e)
{
	struct profile back;
	struct perr why = { 0 };
	enum pplan_status st;
	profile_init(&back);
	st = from_json(root, path, &back, &why);
	profile_free(&back);
	if (st == PPLAN_OK)
		return PPLAN_OK;
	return perr_set(e, PPLAN_EINTERNAL,
			"the profile to be written would be refused when read back, so nothing was written (%s)",
			why.msg);
}

enum pplan_status profile_save(const struct profile *p, const char *path, struct perr *e)
{
	cJSON *root = cJSON_CreateObject(), *v, *libs;
	enum pplan_status st;

	cJSON_AddStringToObject(root, "schema", "pplan.profile/1");
	cJSON_AddStringToObject(root, "kind", kind_names[p->kind]);
	cJSON_AddItemToObject(root, "device", device_json(p));
	if (p->has_host) {
		cJSON *h = cJSON_AddObjectToObject(root, "host");
		cJSON_AddStringToObject(h, "hostname", p->hostname);
		add_string_or_null(h, "cpu_model", p->cpu_model);
		cJSON_AddNumberToObject(h, "cores", (double)p->cores);
		json_add_number_or_null(h, "mem_gib", p->host_mem_gib);
		json_add_number_or_null(h, "ranks", p->cond.ranks > 0 ? (double)p->cond.ranks : NAN);
		json_add_number_or_null(h, "ranks_per_host",
					p->cond.ranks_per_host > 0 ? (double)p->cond.ranks_per_host : NAN);
		json_add_number_or_null(h, "load_avg_1m", p->cond.load_1m);
		json_add_number_or_null(h, "cpu_mhz", p->cond.cpu_mhz);
	} else {
		cJSON_AddNullToObject(root, "host");
	}
	add_curves(root, p);
	if (p->has_constants)
		cJSON_AddItemToObject(root, "constants", constants_json(p));
	if (p->has_fit) {
		cJSON *f = cJSON_AddObjectToObject(root, "fit"), *src;
		cJSON_AddStringToObject(f, "runs", p->fit_runs);
		cJSON_AddNumberToObject(f, "cases", p->fit_cases);
		cJSON_AddStringToObject(f, "objective", p->fit_objective);
		json_add_number_or_null(f, "value", p->fit_value);
		src = cJSON_AddArrayToObject(f, "sources");
		for (int i = 0; i < p->n_fit_sources; i++)
			cJSON_AddItemToArray(src, cJSON_CreateString(p->fit_sources[i]));
	} else {
		cJSON_AddNullToObject(root, "fit");
	}
	v = cJSON_AddObjectToObject(root, "provenance");
	cJSON_AddStringToObject(v, "pplan_version", p->pplan_version);
	cJSON_AddStringToObject(v, "git_hash", p->git_hash);
	cJSON_AddStringToObject(v, "command", p->command);
	cJSON_AddStringToObject(v, "date", p->date);
	libs = cJSON_AddObjectToObject(v, "libraries");
	for (int i = 0; i < p->n_libs; i++)
		cJSON_AddStringToObject(libs, p->lib_name[i], p->lib_version[i]);
	st = check_before_writing(root, path, e);
	if (st == PPLAN_OK)
		st = json_write_atomic(path, root, e);
	cJSON_Delete(root);
	return st;
}

enum pplan_status profile_check_device(const struct profile *p, const char *path,
				       const struct cluster *c, int cpu_backend,
				       struct perr *e)
{
	if (strcmp(p->device_name, PROFILE_ANY_DEVICE) == 0 ||
	    strcmp(p->device_name, c->gpu.name) == 0)
		return PPLAN_OK;
	if (cpu_backend && strcmp(p->device_name, "cpu") == 0 && strcmp(p->backend, "cpu") == 0)
		return PPLAN_OK;
	return perr_set(e, PPLAN_EINPUT,
			"%s: the profile describes %s, but the cluster's GPU is %s",
			path, p->device_name, c->gpu.name);
}

/* "2 ranks (2 per host, 1 per core), load 0.3, 2100 MHz" */
static void conditions_text(const struct run_conditions *c, long cores, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	if (c->ranks > 0)
		n += (size_t)snprintf(buf + n, len - n, "%ld rank%s", c->ranks, c->ranks == 1 ? "" : "s");
	if (c->ranks_per_host > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, cores > 0 ? " (%ld per host, %.3g per core)" : " (%ld per host)",
				      c->ranks_per_host, (double)c->ranks_per_host / (double)(cores > 0 ? cores : 1));
	if (isfinite(c->load_1m) && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", load %.2g", c->load_1m);
	if (isfinite(c->cpu_mhz) && n < len)
		snprintf(buf + n, len - n, ", %.0f MHz", c->cpu_mhz);
}

int run_conditions_known(const struct run_conditions *c)
{
	return c->ranks > 0 || c->ranks_per_host > 0 || isfinite(c->load_1m) || isfinite(c->cpu_mhz);
}

int run_conditions_differ(const struct run_conditions *m, long cores_then,
			  const struct run_conditions *now, long cores_now, char *buf, size_t len)
{
	char a[160], b[160];
	int differ = 0;
	buf[0] = '\0';
	if (m->ranks > 0 && now->ranks > 0 && m->ranks != now->ranks)
		differ = 1;
	if (m->ranks_per_host > 0 && now->ranks_per_host > 0 && m->ranks_per_host != now->ranks_per_host)
		differ = 1;
	if (isfinite(m->load_1m) && isfinite(now->load_1m) &&
	    fabs(m->load_1m - now->load_1m) > 0.5 + 0.25 * fmax(m->load_1m, now->load_1m))
		differ = 1;
	if (isfinite(m->cpu_mhz) && isfinite(now->cpu_mhz) &&
	    fabs(m->cpu_mhz - now->cpu_mhz) > 0.05 * m->cpu_mhz)
		differ = 1;
	if (!differ)
		return 0;
	conditions_text(m, cores_then, a, sizeof a);
	conditions_text(now, cores_now, b, sizeof b);
	snprintf(buf, len, "the profile was measured with %s; this run has %s", a, b);
	return 1;
}
