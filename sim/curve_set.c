/*
 * curve_set.c: a measured profile's curves as the cost model asks for
 * them (curves.h): which points answer which question, and the machine a
 * CPU profile describes.
 */
#include "curves.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"

/* A GPU's GEMM tiles (CUTLASS/cuBLAS 128 x 128 output tiles, 32-deep K
 * steps); a CPU's BLAS blocks are small enough to leave out. */
static const struct curve_tiles gpu_tiles = { 128, 128, 32 }, cpu_tiles = { 1, 1, 1 };

static int coll_of(const char *name, enum coll_op *op)
{
	static const struct { const char *name; enum coll_op op; } t[] = {
		{ "all_reduce", COLL_ALLREDUCE }, { "all_gather", COLL_ALLGATHER },
		{ "reduce_scatter", COLL_REDUCESCATTER }, { "all_to_all", COLL_ALLTOALL },
		{ "broadcast", COLL_BROADCAST }, { "send_recv", COLL_SENDRECV },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(name, t[i].name)) {
			*op = t[i].op;
			return 1;
		}
	return 0;
}

void curve_set_from_profile(struct curve_set *cs, const struct profile *p)
{
	memset(cs, 0, sizeof *cs);
	snprintf(cs->device, sizeof cs->device, "%s", p->device_name);
	cs->cpu = !strcmp(p->device_name, "cpu");
	cs->tiles = cs->cpu ? cpu_tiles : gpu_tiles;
	cs->prec = p->n_gemm > 0 ? p->gemm[0].precision : PREC_BF16;
	for (int i = 0; i < p->n_gemm && cs->n_gemm < CURVE_MAX_GEMM; i++)
		if (p->gemm[i].precision == cs->prec)
			cs->gemm[cs->n_gemm++] = (struct curve_gemm_pt){
				p->gemm[i].m, p->gemm[i].n, p->gemm[i].k, p->gemm[i].tflops };
	{
		const struct profile_elementwise *src[CURVE_BW_COUNT] = {
			p->elementwise, p->layer_elementwise, p->optimizer_elementwise };
		const int n[CURVE_BW_COUNT] = { p->n_elementwise, p->n_layer_elementwise,
						p->n_optimizer_elementwise };
		for (int k = 0; k < CURVE_BW_COUNT; k++)
			for (int i = 0; i < n[k] && cs->n_bw[k] < CURVE_MAX_BW; i++)
				cs->bw[k][cs->n_bw[k]++] = (struct curve_bw_pt){
					src[k][i].bytes, src[k][i].gbps, src[k][i].fwd_share };
	}
	for (int i = 0; i < p->n_attention && cs->n_attn < CURVE_MAX_ATTN; i++) {
		const struct profile_attention *a = &p->attention[i];
		if (a->precision != cs->prec || !(a->fwd_tflops > 0) || !(a->bwd_tflops > 0))
			continue;
		cs->attn[cs->n_attn++] = (struct curve_attn){ a->fused, (double)a->seq,
							      (double)a->head_dim, a->fwd_tflops,
							      a->bwd_tflops };
	}
	for (int i = 0; i < p->n_collectives && cs->n_coll < CURVE_MAX_COLL; i++) {
		const struct profile_collective *pc = &p->collectives[i];
		struct curve_coll *c = &cs->coll[cs->n_coll];
		if (!coll_of(pc->op, &c->op) || pc->ranks < 1)
			continue;
		c->ranks = pc->ranks;
		c->net = !strcmp(pc->link, "net");
		c->alpha_s = isfinite(pc->alpha_s) ? pc->alpha_s : 0;
		c->busbw_gbps = isfinite(pc->busbw_gbps) ? pc->busbw_gbps : 0;
		c->n = 0;
		for (int k = 0; k < pc->n_points && c->n < CURVE_MAX_COLL_PTS; k++)
			c->pts[c->n++] = (struct curve_coll_pt){
				pc->points[k].bytes, pc->points[k].time_s,
				pc->points[k].exposed_s > 0 ? pc->points[k].exposed_s : 0 };
		if (c->n == 0 && !(c->busbw_gbps > 0))
			continue; /* nothing to price with */
		cs->n_coll++;
	}
}

int curve_set_empty(const struct curve_set *cs)
{
	int n = cs->n_gemm + cs->n_attn + cs->n_coll;
	for (int k = 0; k < CURVE_BW_COUNT; k++)
		n += cs->n_bw[k];
	return n == 0;
}

const struct curve_gemm_pt *curve_set_gemm_smallest(const struct curve_set *cs,
						    enum precision p)
{
	const struct curve_gemm_pt *best = NULL;
	if (!cs || p != cs->prec)
		return NULL;
	for (int i = 0; i < cs->n_gemm; i++)
		if (!best || cs->gemm[i].m * cs->gemm[i].n * cs->gemm[i].k < best->m * best->n * best->k)
			best = &cs->gemm[i];
	return best;
}

double curve_set_gemm(const struct curve_set *cs, enum precision p, double batch, double m,
		      double n, double k)
{
	if (!cs || cs->n_gemm == 0 || p != cs->prec)
		return -1;
	/* a batch of GEMMs fills the device as one GEMM of batch x m rows */
	return curve_gemm_time(cs->gemm, cs->n_gemm, &cs->tiles, batch * m, n, k);
}

double curve_set_layer_fwd_share(const struct curve_set *cs, double bytes)
{
	const struct curve_bw_pt *p = cs ? cs->bw[CURVE_BW_LAYER] : NULL;
	int n = cs ? cs->n_bw[CURVE_BW_LAYER] : 0, i;
	double f;
	for (i = 0; i < n; i++)
		if (!(p[i].fwd_share > 0))
			return -1; /* all or none */
	if (n == 0)
		return -1;
	if (bytes <= p[0].bytes)
		return p[0].fwd_share;
	if (bytes >= p[n - 1].bytes)
		return p[n - 1].fwd_share;
	for (i = 1; i < n - 1 && p[i].bytes < bytes; i++)
		;
	f = (log(bytes) - log(p[i - 1].bytes)) / (log(p[i].bytes) - log(p[i - 1].bytes));
	return p[i - 1].fwd_share + f * (p[i].fwd_share - p[i - 1].fwd_share);
}

double curve_set_bw(const struct curve_set *cs, enum curve_bw kind, double bytes)
{
	if (!cs || kind < 0 || kind >= CURVE_BW_COUNT || cs->n_bw[kind] == 0)
		return -1;
	return curve_stream_time(cs->bw[kind], cs->n_bw[kind], bytes);
}

/* The entry for op over this link class whose group size is nearest
 * `ranks` (in the log), the same size first. */
static const struct curve_coll *coll_entry(const struct curve_set *cs, enum coll_op op,
					   int ranks, int net)
{
	const struct curve_coll *best = NULL;
	double bd = INFINITY;
	for (int i = 0; i < cs->n_coll; i++) {
		const struct curve_coll *c = &cs->coll[i];
		double d;
		if (c->op != op || c->net != net)
			continue;
		d = fabs(log((double)c->ranks / (ranks > 0 ? ranks : 1)));
		if (d < bd) {
			bd = d;
			best = c;
		}
	}
	return best;
}

double curve_set_coll(const struct curve_set *cs, enum coll_op op, double bytes, int ranks,
		      int net)
{
	const struct curve_coll *c;
	if (!cs)
		return -1;
	if (bytes <= 0 || (ranks <= 1 && op != COLL_SENDRECV))
		return 0;
	c = coll_entry(cs, op, ranks, net);
	if (!c)
		return -1;
	return curve_coll_time(op, c->pts, c->n, c->ranks, c->alpha_s, c->busbw_gbps, ranks,
			       bytes);
}

double curve_set_coll_exposed(const struct curve_set *cs, enum coll_op op, double bytes,
			      int ranks, int net)
{
	const struct curve_coll *c = cs ? coll_entry(cs, op, ranks, net) : NULL;
	struct curve_coll_pt pts[CURVE_MAX_COLL_PTS];
	int n = 0;
	if (!c || c->ranks != ranks)
		return -1;
	for (int i = 0; i < c->n; i++)
		if (c->pts[i].exposed_s > 0)
			pts[n++] = (struct curve_coll_pt){ c->pts[i].bytes, c->pts[i].exposed_s, 0 };
	if (n == 0)
		return -1;
	return curve_coll_time(op, pts, n, c->ranks, 0, c->busbw_gbps, ranks, bytes);
}

int curve_set_attention(const struct curve_set *cs, enum precision p, int fused,
			double heads, double seq_q, double seq_k, double head_dim,
			double *fwd_s, double *bwd_s)
{
	double flops = 4.0 * heads * seq_q * seq_k * head_dim, seq = sqrt(seq_q * seq_k);
	double dbest = INFINITY, lo_s = 0, hi_s = INFINITY;
	const struct curve_attn *lo = NULL, *hi = NULL;
	double rf, rb;
	if (!cs || cs->n_attn == 0 || p != cs->prec || flops <= 0)
		return 0;
	/* the kind and head size measured nearest */
	for (int i = 0; i < cs->n_attn; i++) {
		double d = fabs(log(cs->attn[i].head_dim / head_dim));
		if (cs->attn[i].fused == fused && d < dbest)
			dbest = d;
	}
	if (!isfinite(dbest))
		return 0;
	/* the measured lengths either side of seq */
	for (int i = 0; i < cs->n_attn; i++) {
		const struct curve_attn *a = &cs->attn[i];
		if (a->fused != fused || fabs(log(a->head_dim / head_dim)) > dbest + 1e-12)
			continue;
		if (a->seq <= seq && a->seq >= lo_s)
			lo = a, lo_s = a->seq;
		if (a->seq >= seq && a->seq <= hi_s)
			hi = a, hi_s = a->seq;
	}
	if (!lo)
		lo = hi;
	if (!hi)
		hi = lo;
	if (lo == hi || lo->seq == hi->seq) {
		rf = lo->fwd_tflops, rb = lo->bwd_tflops;
	} else {
		double f = (log(seq) - log(lo->seq)) / (log(hi->seq) - log(lo->seq));
		rf = lo->fwd_tflops + f * (hi->fwd_tflops - lo->fwd_tflops);
		rb = lo->bwd_tflops + f * (hi->bwd_tflops - lo->bwd_tflops);
	}
	*fwd_s = flops / (rf * 1e12);
	*bwd_s = 2.0 * flops / (rb * 1e12);
	return 1;
}

enum pplan_status curve_cpu_cluster(const struct profile *p, long ranks, struct cluster *c,
				    struct perr *e)
{
	double bw = 0, alpha = 2e-6, busbw = 0;
	if (strcmp(p->device_name, "cpu") != 0)
		return perr_set(e, PPLAN_EINPUT, "the profile describes %s, not a CPU", p->device_name);
	if (!(p->peak_tflops[PREC_FP32] > 0))
		return perr_set(e, PPLAN_EINPUT, "the CPU profile has no device.peak_tflops.fp32");
	if (ranks < 1 || ranks > CLUSTER_MAX_NODE_GPUS)
		return perr_set(e, PPLAN_EINPUT, "%ld CPU ranks on one host: give 1 to %d", ranks,
				CLUSTER_MAX_NODE_GPUS);
	for (int i = 0; i < p->n_elementwise; i++)
		bw = fmax(bw, p->elementwise[i].gbps);
	for (int i = 0; i < p->n_collectives; i++)
		if (!strcmp(p->collectives[i].op, "all_reduce") &&
		    strcmp(p->collectives[i].link, "net") != 0 && p->collectives[i].busbw_gbps > busbw) {
			busbw = p->collectives[i].busbw_gbps;
			alpha = isfinite(p->collectives[i].alpha_s) ? p->collectives[i].alpha_s : alpha;
		}
	{
		char src[128];
		struct cpu_ranks r = { .per_host = (int)ranks, .hosts = 1,
				       .tflops = p->peak_tflops[PREC_FP32],
				       .gbps = bw > 0 ? bw : 10.0,
				       .mem_gib = isfinite(p->mem_gib) ? p->mem_gib : 1.0,
				       .shm_latency_s = alpha,
				       .description = p->device_description, .source = src };
		r.shm_gbps = busbw > 0 ? busbw : r.gbps / 4;
		snprintf(src, sizeof src, "pplan calibrate profile of %s",
			 p->has_host ? p->hostname : "a host");
		cluster_cpu_ranks(&r, c);
	}
	return PPLAN_OK;
}
