/*
 * search.c: exhaustive layout search (search.h).
 *
 * Three stages, each one loop over the product of a few independent
 * choice lists, so that search_run reads as a flat sequence:
 *
 *   degrees    tp x pp x cp whose product divides the GPUs; what
 *              layout_check rejects here holds for every inner choice and
 *              is counted once per (tp, pp, cp)
 *   shapes     x ep x vp for each valid (tp, pp, cp)
 *   choices    x micro-batch x SP x recomputation x ZeRO x schedule, each
 *              one layout, checked and priced by the cost model
 *
 * then the kept layouts are simulated and re-ranked, and every family
 * without a member is explained by its rejection counts.  The order of
 * enumeration (tp, pp, cp, ep, vp, mbs, sp, recompute, zero, schedule, all
 * ascending) decides ties in the ranking.
 */
#include "search.h"

#include "defaults.h"
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LIST 256     /* values of one choice list */
#define MAX_DEFERRED 4096

static const char *const family_names[FAM_COUNT] = {
	"DP only", "TP only", "PP only", "TP+DP", "PP+DP", "TP+PP",
	"TP+PP+DP (3D)", "with CP",
};

const char *family_name(enum family f)
{
	return (f >= 0 && f < FAM_COUNT) ? family_names[f] : "?";
}

enum family family_of(const struct layout *l)
{
	int t = l->tp > 1, p = l->pp > 1, d = l->dp > 1;
	if (l->cp > 1)
		return FAM_CP;
	if (t && p && d) return FAM_3D;
	if (t && p) return FAM_TP_PP;
	if (p && d) return FAM_PP_DP;
	if (t && d) return FAM_TP_DP;
	if (p) return FAM_PP;
	if (t) return FAM_TP;
	return FAM_DP;
}

void search_params_default(struct search_params *sp)
{
	sp->gbs = 0;
	sp->top_k = 10;
	sp->max_mbs = 16;
	sp->max_vp = 16;
	sp->max_cp = 32;
	sp->keep_points = 0;
	sp->cp_min_tokens = DEFAULT_CP_MIN_TOKENS;
	sp->n_orders = 2;
	rank_order_default(&sp->orders[0]);
	rank_order_parse("tp-cp-pp-dp", &sp->orders[1], NULL);
	sp->tolerance = SEARCH_TOLERANCE_DEFAULT;
}

struct state {
	const struct model_spec *m;
	const struct cluster *c;
	const struct train_opts *o;
	const struct search_params *sp;
	struct search_result *r;
	long gpus;
	int keep;            /* closed-form candidates kept for simulation */
	/* (tp, pp, cp) left out because CP would not pay at this sequence
	 * length; priced only if nothing else fits. */
	int deferred[MAX_DEFERRED][3];
	int n_deferred;
	long cap_points;     /* allocated length of r->points */
	/* The first impossible prediction stops the search (predict_check). */
	enum pplan_status failed;
	struct perr err;
};

/* ---- counting ------------------------------------------------------------ */

static void count_reject(struct state *s, const struct layout *l, enum reject why)
{
	enum family fam = family_of(l);
	s->r->evaluated++;
	s->r->rejected[why]++;
	struct search_family_result *f = &s->r->family[fam];
	if (f->rejected[why]++ == 0)
		f->witness[why] = *l;
}

/* Inserts a feasible prediction into the top list, best first. */
static void top_insert(struct state *s, const struct layout *l,
		       const struct rank_order *o, const struct prediction *p)
{
	struct search_result *r = s->r;
	int k = s->keep, i;
	if (r->n_top == k && p->step_time_s >= r->top_preds[k - 1].step_time_s)
		return;
	i = r->n_top < k ? r->n_top++ : k - 1;
	while (i > 0 && r->top_preds[i - 1].step_time_s > p->step_time_s) {
		r->top_preds[i] = r->top_preds[i - 1];
		r->top_layouts[i] = r->top_layouts[i - 1];
		r->top_orders[i] = r->top_orders[i - 1];
		i--;
	}
	r->top_preds[i] = *p;
	r->top_layouts[i] = *l;
	r->top_orders[i] = *o;
}

/* Appends p to the points (search_params.keep_points). */
static void record_point(struct state *s, const struct layout *l,
			 const struct prediction *p)
{
	struct search_result *r = s->r;
	if (!s->sp->keep_points || r->points_incomplete)
		return;
	if (r->n_points == s->cap_points) {
		long cap = s->cap_points ? 2 * s->cap_points : 4096;
		struct search_point *np = realloc(r->points, (size_t)cap * sizeof *np);
		if (!np) {
			r->points_incomplete = 1;
			return;
		}
		r->points = np;
		s->cap_points = cap;
	}
	r->points[r->n_points++] = (struct search_point){
		(float)p->step_time_s, (float)(p->mem.total / (1024.0 * 1024.0 * 1024.0)),
		(unsigned char)p->feasible, (unsigned char)family_of(l) };
}

static void keep(struct state *s, const struct layout *l,
		 const struct rank_order *o, const struct prediction *p)
{
	struct search_family_result *f = &s->r->family[family_of(l)];

	record_point(s, l, p);
	if (!p->feasible) {
		count_reject(s, l, p->reject);
		if (p->reject == REJECT_OOM &&
		    (!f->any_oom || p->mem.total < f->min_oom_bytes)) {
			f->min_oom_bytes = p->mem.total;
			f->any_oom = 1;
			f->witness[REJECT_OOM] = *l; /* closest to fitting */
		}
		return;
	}
	s->r->evaluated++;
	s->r->feasible++;
	if (!f->found || p->step_time_s < f->pred.step_time_s) {
		f->found = 1;
		f->layout = *l;
		f->order = *o;
		f->pred = *p;
	}
	top_insert(s, l, o, p);
}

/* ---- stage 3: the cheap choices of one shape -------------------------------- */

/* Layouts of one choice list: mixed-radix digits of k, the last list
 * varying fastest. */
static long product_digit(long *k, long radix)
{
	long d = *k % radix;
	*k /= radix;
	return d;
}

static int same_link(const struct link *a, const struct link *b)
{
	return a->cls == b->cls && a->bw_gbps == b->bw_gbps && a->eff == b->eff &&
	       a->latency_s == b->latency_s;
}

/* A second rank order changes nothing unless pp and dp both exceed 1 and
 * it puts some group on another link; Megatron-LM offers it only without
 * CP and EP. */
static int order_applies(const struct state *s, int k, const struct layout *l)
{
	struct train_opts a = *s->o, b = *s->o;
	struct group_links ga, gb;
	if (k == 0)
		return 1;
	if (rank_order_eq(&s->sp->orders[k], &s->sp->orders[0]) ||
	    l->pp == 1 || l->dp == 1 || l->cp > 1 || l->ep > 1)
		return 0;
	a.order = s->sp->orders[0];
	b.order = s->sp->orders[k];
	cost_group_links(s->c, l, &a, &ga);
	cost_group_links(s->c, l, &b, &gb);
	return !(same_link(&ga.tp, &gb.tp) && same_link(&ga.dp, &gb.dp) &&
		 same_link(&ga.pp, &gb.pp));
}

static double cap_bytes(const struct state *s)
{
	return (s->o->max_memory_gib > 0 ? s->o->max_memory_gib : s->c->gpu.mem_gib) *
	       1024.0 * 1024.0 * 1024.0;
}

/* Is l out of memory by no more than what optimizer offload may move off
 * the GPU (the states, the step's fp32 gradient copy, an upper bound of
 * which is `other`; under ZeRO-Offload with zero >= 2 the gradient shard
 * too), in a framework that offloads?  Offload only helps such a
 * layout: on one that fits it adds the CPU's step. */
static int offload_may_fit(const struct state *s, const struct layout *l,
			   const struct prediction *p)
{
	double freed = p->mem.optimizer + p->mem.other; /* other: the step's fp32 gradient copy */
	if (p->feasible || p->reject != REJECT_OOM || l->optimizer_offload || l->zero < 1 ||
	    s->o->fw->optim_offload == FW_OFFLOAD_NONE ||
	    (s->o->fw->optim_offload == FW_OFFLOAD_MEGATRON && l->zero != 1))
		return 0;
	if (s->o->b.sharding == FW_SHARD_DEEPSPEED && l->zero >= 2)
		freed += p->mem.gradients;
	return p->mem.total - cap_bytes(s) <= freed;
}

static void price_one(struct state *s, const struct layout *l)
{
	enum reject why = REJECT_NONE;

	if (layout_check_part(l, s->m, s->gpus, s->o->b.partition, &why, NULL) != PPLAN_OK) {
		count_reject(s, l, why);
		return;
	}
	for (int k = 0; k < s->sp->n_orders && !s->failed; k++) {
		struct train_opts o = *s->o;
		struct prediction p;
		if (!order_applies(s, k, l))
			continue;
		o.order = s->sp->orders[k];
		s->r->predicted++;
		if (cost_predict(s->m, s->c, l, &o, &p, NULL) != PPLAN_OK) {
			count_reject(s, l, p.reject != REJECT_NONE ? p.reject : REJECT_PRECISION);
			continue;
		}
		s->failed = predict_check(l, &p, &s->err);
		keep(s, l, &o.order, &p);
		if (!s->failed && offload_may_fit(s, l, &p)) {
			struct layout off = *l;
			off.optimizer_offload = 1;
			s->r->predicted++;
			if (cost_predict(s->m, s->c, &off, &o, &p, NULL) != PPLAN_OK)
				continue;
			s->failed = predict_check(&off, &p, &s->err);
			keep(s, &off, &o.order, &p);
		}
	}
}

/* Micro-batch sizes: every size up to max_mbs that divides the sequences
 * each data-parallel replica gets, as Megatron-LM, DeepSpeed and
 * torchtitan accept (gbs a multiple of mbs x dp). */
static int mbs_list(const struct state *s, long per_replica, int *out)
{
	int n = 0;
	for (int mbs = 1; mbs <= s->sp->max_mbs && n < MAX_LIST; mbs++)
		if (per_replica % mbs == 0)
			out[n++] = mbs;
	return n;
}

/* Schedules: interleaved with virtual stages, the four others for a
 * plain pipeline (those the framework has), 1F1B (nothing to schedule)
 * without one. */
#define PLAIN_SCHEDULES 4 /* 1F1B, GPipe, ZB-H1, DualPipe */

static int schedule_list(const struct state *s, const struct layout *base,
			 enum schedule *out)
{
	static const enum schedule plain[PLAIN_SCHEDULES] = { SCHED_1F1B, SCHED_GPIPE,
							      SCHED_ZB_H1, SCHED_DUALPIPE };
	int n = 0;
	if (base->vp > 1) {
		out[n++] = SCHED_INTERLEAVED;
	} else if (base->pp > 1) {
		for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
			if (s->o->fw->schedules & FW_SCHED_BIT(plain[i]))
				out[n++] = plain[i];
	} else {
		out[n++] = SCHED_1F1B;
	}
	return n;
}

static void price_shape(struct state *s, struct layout base)
{
	static const enum recompute recs[] = { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE,
					       RECOMPUTE_FULL };
	int mbs[MAX_LIST];
	enum schedule scheds[PLAIN_SCHEDULES];
	int n_mbs, n_sp, n_rc = 3, n_z, n_sched;
	long total;

	base.gbs = s->sp->gbs;
	if (s->sp->gbs % base.dp != 0) {
		count_reject(s, &base, REJECT_DP_GBS);
		return;
	}
	n_mbs = mbs_list(s, s->sp->gbs / base.dp, mbs);
	n_sp = base.tp > 1 && s->o->fw->can_sp ? 2 : 1;
	/* The zero stages the framework has (with pipelines: those that
	 * combine with them). */
	n_z = (base.dp * base.cp > 1) ? 1 + (base.pp == 1 ? s->o->fw->max_zero
						    : s->o->fw->zero_with_pp) : 1;
	n_sched = schedule_list(s, &base, scheds);
	total = (long)n_mbs * n_sp * n_rc * n_z * n_sched;
	for (long i = 0; i < total && !s->failed; i++) {
		struct layout l = base;
		long k = i;
		l.schedule = scheds[product_digit(&k, n_sched)];
		l.zero = (int)product_digit(&k, n_z);
		l.recompute = recs[product_digit(&k, n_rc)];
		l.sp = (int)product_digit(&k, n_sp);
		l.mbs = mbs[product_digit(&k, n_mbs)];
		price_one(s, &l);
	}
}

/* ---- stage 2: expert and virtual-stage degrees of one (tp, pp, cp) ---------- */

/* Expert tensor parallelism: the experts split like the rest (etp = tp,
 * the default 0) or not at all (etp = 1, Megatron-Core's usual choice
 * for fine-grained experts), where the expert width allows. */
static int etp_list(const struct model_spec *m, const struct layout *l, int *out)
{
	int n = 0;
	out[n++] = 0;
	if (m->num_experts > 1 && l->tp > 1)
		out[n++] = 1;
	return n;
}

/* Expert-parallel degrees: divisors of the experts that ep x etp fold
 * into the tp x dp x cp ranks. */
static int ep_list(const struct model_spec *m, const struct layout *l, int etp, int *out)
{
	int n = 0, e = m->num_experts > 1 ? m->num_experts : 1;
	long ranks = (long)l->tp * l->dp * l->cp, t_e = etp > 0 ? etp : l->tp;
	for (int ep = 1; ep <= e && n < MAX_LIST; ep++)
		if (e % ep == 0 && ranks % (ep * t_e) == 0)
			out[n++] = ep;
	return n;
}

static void clear_split(struct layout *l)
{
	l->pp_first = l->pp_last = l->pp_embed = l->pp_loss = 0;
	l->pp_table = NULL;
}

/* Do the framework's own cuts (even, edge, first/last) interleave a
 * pipeline of pp ranks at some vp >= 2? */
static int pp_plain_interleave(const struct state *s, int pp)
{
	for (int vp = 2; vp <= s->sp->max_vp; vp++) {
		struct layout t;
		layout_default(&t);
		t.pp = pp;
		t.vp = vp;
		if (layout_split_megatron(&t, s->m->layers) != SPLIT_NONE)
			return 1;
	}
	return 0;
}

/* Does l (with vp set) split into stages: evenly, or, where the
 * framework splits as Megatron does, as layout_split_megatron sets it? */
static int stages_split(const struct state *s, struct layout *l)
{
	int L = s->m->layers;
	clear_split(l);
	if (l->pp == 1)
		return l->vp == 1;
	if (L % l->pp == 0 && (L / l->pp) % l->vp == 0)
		return 1;
	if (s->o->b.partition != PART_FIRST_LAST)
		return L % l->pp == 0 ? 0 : l->vp == 1; /* DeepSpeed partitions the rest itself */
	/* Megatron: the embedding and the loss as layers of the split, as
	 * NVIDIA's recipes cut 94 or 126 layers, else uneven edge stages,
	 * else (Megatron-Core 0.13 on) a layout string of balanced chunks,
	 * as NVIDIA's recipes write for DeepSeek-V3 and Kimi K2 where
	 * nothing else splits: not a rival to a pipeline the plain cuts
	 * already interleave (80 layers on pp 2 at vp 7 against vp 8). */
	if (layout_split_megatron(l, L) != SPLIT_NONE)
		return 1;
	if (s->o->fw->can_pp_layout && (l->vp == 1 || !pp_plain_interleave(s, l->pp)))
		l->pp_table = pp_table_balanced(L, l->pp, l->vp);
	return l->pp_table != NULL;
}

/* ---- the stage cut of one shape ------------------------------------------- */

#define SPLIT_SHIFT 3     /* edge stages up to 3 x vp layers lighter than the middle */
#define SPLIT_GAIN 0.01   /* a cut other than the framework's default must save 1 % */
#define MAX_SPLITS 64


/* The cuts of l's pp x vp chunks that the framework can run besides its
 * default: the embedding, the loss or both counted as layers of the split
 * (Megatron's --account-for-embedding/loss-in-pipeline-split, torchtitan's
 * first/last-stage weights), and, in Megatron, first and last stages of
 * fewer layers than the middle ones (--decoder-first/last-pipeline-num-
 * layers). Every count a multiple of vp; layout_check judges the rest. */
static int split_candidates(const struct state *s, const struct layout *l,
			    struct layout *out)
{
	int n = 0, L = s->m->layers, pp = l->pp, vp = l->vp;
	long mean;

	if (pp < 2 || s->o->b.partition != PART_FIRST_LAST)
		return 0;
	for (int e = 0; e <= 1; e++)
		for (int lo = 0; lo <= 1; lo++) {
			struct layout c = *l;
			clear_split(&c);
			c.pp_embed = e;
			c.pp_loss = lo;
			if ((e || lo) && layout_edge_split_ok(&c, L))
				out[n++] = c;
		}
	if (s->o->fw->pipe != FW_PIPE_MEGATRON)
		return n;
	mean = ((long)L + pp - 1) / pp;
	mean = (mean + vp - 1) / vp * vp;
	if (pp == 2) {
		/* No middle: the layers the last stage sheds go to the first. */
		for (int j = 1; j <= SPLIT_SHIFT; j++) {
			struct layout c = *l;
			long last = mean - (long)j * vp, first = L - last;
			if (last < vp || first % vp != 0)
				continue;
			clear_split(&c);
			c.pp_first = (int)first;
			c.pp_last = (int)last;
			out[n++] = c;
		}
		return n;
	}
	for (long mid = mean; mid <= mean + 2L * vp; mid += vp)
		for (int jf = 0; jf <= SPLIT_SHIFT; jf++)
			for (int jl = 0; jl <= SPLIT_SHIFT && n < MAX_SPLITS; jl++) {
				long first = mid - (long)jf * vp, last = mid - (long)jl * vp;
				struct layout c = *l;
				if ((jf == 0 && jl == 0) || first < vp || last < vp ||
				    (pp - 2) * mid + first + last != L)
					continue;
				clear_split(&c);
				c.pp_first = jf ? (int)first : 0; /* 0: as the middle */
				c.pp_last = jl ? (int)last : 0;
				out[n++] = c;
			}
	return n;
}

/* One prediction of l's cut at the shape's plainest choices: one
 * sequence a microbatch, no recomputation, the framework's usual ZeRO.
 * Not a layout of the search (nor counted as one): a probe. */
static int probe_split(struct state *s, const struct layout *l, struct prediction *p)
{
	struct layout c = *l;
	struct train_opts o = *s->o;
	enum reject why = REJECT_NONE;
	int zmax = c.pp == 1 ? s->o->fw->max_zero : s->o->fw->zero_with_pp;

	c.gbs = s->sp->gbs;
	c.mbs = 1;
	c.recompute = RECOMPUTE_NONE;
	c.schedule = c.vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	c.sp = c.tp > 1 && s->o->fw->can_sp;
	c.zero = c.dp * c.cp > 1 && zmax >= 1;
	if (layout_check_part(&c, s->m, s->gpus, s->o->b.partition, &why, NULL) != PPLAN_OK)
		return -1;
	o.order = s->sp->orders[0];
	return cost_predict(s->m, s->c, &c, &o, p, NULL) == PPLAN_OK ? 0 : -1;
}

/* The edge stages carry the embedding and the LM head (sim/MODEL.md 4.5,
 * 6.1), so an even cut leaves the last stage the slowest, by about
 * V/(12h) layers' work. Sets l's cut to the fastest the framework can run
 * when it beats the default by SPLIT_GAIN without needing more memory
 * than the default where that does not fit; the choices of stage 3 are
 * then priced on that cut alone. */
static void choose_split(struct state *s, struct layout *l)
{
	struct layout cand[MAX_SPLITS];
	struct prediction p0, p;
	int n = split_candidates(s, l, cand), best = -1;
	double best_t;

	if (n == 0 || probe_split(s, l, &p0) != 0)
		return;
	best_t = p0.step_time_s * (1.0 - SPLIT_GAIN);
	for (int i = 0; i < n; i++) {
		if (probe_split(s, &cand[i], &p) != 0 || p.step_time_s >= best_t)
			continue;
		if (!p.feasible && p.mem.total > p0.mem.total)
			continue;
		best = i;
		best_t = p.step_time_s;
	}
	if (best >= 0) {
		l->pp_first = cand[best].pp_first;
		l->pp_last = cand[best].pp_last;
		l->pp_embed = cand[best].pp_embed;
		l->pp_loss = cand[best].pp_loss;
		l->pp_table = cand[best].pp_table;
	}
}

static void price_degrees(struct state *s, const struct layout *deg)
{
	int etps[2], n_etp = etp_list(s->m, deg, etps);
	for (int a = 0; a < n_etp; a++) {
		int eps[MAX_LIST], n_ep = ep_list(s->m, deg, etps[a], eps);
		for (long i = 0; i < (long)n_ep * s->sp->max_vp; i++) {
			struct layout l = *deg;
			long k = i;
			l.vp = (int)product_digit(&k, s->sp->max_vp) + 1;
			l.ep = eps[product_digit(&k, n_ep)];
			l.etp = etps[a];
			if (stages_split(s, &l)) {
				choose_split(s, &l);
				price_shape(s, l);
			}
		}
	}
}

/* ---- stage 1: tp x pp x cp ------------------------------------------------ */

static int is_batch_reason(enum reject r)
{
	return r == REJECT_NO_GBS || r == REJECT_DP_GBS || r == REJECT_MBS_GBS ||
	       r == REJECT_INTERLEAVED_MICRO || r == REJECT_DUALPIPE;
}

/* Structural rejections that hold for every inner choice: counted once
 * per (tp, pp, cp).  Batch-dependent ones depend on mbs and are left to
 * price_one. */
static int structural_ok(struct state *s, const struct layout *l)
{
	enum reject why = REJECT_NONE;
	struct layout probe = *l;
	probe.gbs = s->sp->gbs;
	if (layout_check_part(&probe, s->m, s->gpus, s->o->b.partition, &why, NULL) == PPLAN_OK ||
	    is_batch_reason(why))
		return 1;
	count_reject(s, &probe, why);
	return 0;
}

static int cp_pays(const struct state *s, int cp)
{
	return cp == 1 || s->sp->cp_min_tokens <= 0 ||
	       s->o->seq / cp >= s->sp->cp_min_tokens;
}

static struct layout degrees_layout(long tp, long pp, long cp, long dp)
{
	struct layout l;
	layout_default(&l);
	l.tp = (int)tp;
	l.pp = (int)pp;
	l.cp = (int)cp;
	l.dp = (int)dp;
	return l;
}

static int divisors(long n, long *out)
{
	int k = 0;
	for (long d = 1; d <= n && k < MAX_LIST; d++)
		if (n % d == 0)
			out[k++] = d;
	return k;
}

static void enumerate_degrees(struct state *s)
{
	long div[MAX_LIST], cps[8];
	int nd = divisors(s->gpus, div), ncp = 0;
	long g = s->gpus;

	for (long cp = 1; cp <= s->sp->max_cp && ncp < 8; cp *= 2)
		cps[ncp++] = cp;
	for (long i = 0; i < (long)nd * nd * ncp && !s->failed; i++) {
		long k = i, cp, pp, tp;
		struct layout l;
		cp = cps[product_digit(&k, ncp)];
		pp = div[product_digit(&k, nd)];
		tp = div[product_digit(&k, nd)];
		if (g % (tp * pp) || (g / (tp * pp)) % cp)
			continue;
		l = degrees_layout(tp, pp, cp, g / (tp * pp * cp));
		stages_split(s, &l); /* pp_first/pp_last where pp does not divide the layers */
		if (!structural_ok(s, &l))
			continue;
		if (!cp_pays(s, (int)cp) && s->n_deferred < MAX_DEFERRED) {
			int *d = s->deferred[s->n_deferred++];
			d[0] = (int)tp, d[1] = (int)pp, d[2] = (int)cp;
			count_reject(s, &l, REJECT_CP_SHORT);
			continue;
		}
		price_degrees(s, &l);
	}
}

/* Nothing fit: the short-sequence CP layouts are tried after all. */
static void widen_cp(struct state *s)
{
	if (s->r->feasible > 0 || s->n_deferred == 0)
		return;
	s->r->cp_widened = 1;
	for (int i = 0; i < s->n_deferred; i++) {
		int *d = s->deferred[i];
		struct layout l = degrees_layout(d[0], d[1], d[2],
						 s->gpus / ((long)d[0] * d[1] * d[2]));
		s->r->evaluated--;
		s->r->rejected[REJECT_CP_SHORT]--;
		s->r->family[FAM_CP].rejected[REJECT_CP_SHORT]--;
		price_degrees(s, &l);
	}
}

/* ---- after the enumeration ------------------------------------------------ */

static void sort_top(struct search_result *r)
{
	for (int i = 1; i < r->n_top; i++) { /* insertion sort: n is small */
		struct prediction p = r->top_preds[i];
		struct layout l = r->top_layouts[i];
		struct rank_order o = r->top_orders[i];
		int j = i;
		while (j > 0 && r->top_preds[j - 1].step_time_s > p.step_time_s) {
			r->top_preds[j] = r->top_preds[j - 1];
			r->top_layouts[j] = r->top_layouts[j - 1];
			r->top_orders[j] = r->top_orders[j - 1];
			j--;
		}
		r->top_preds[j] = p;
		r->top_layouts[j] = l;
		r->top_orders[j] = o;
	}
}

/* ---- the practitioner's ranking (search_params.tolerance) ------------------ */

int search_simplicity(const struct layout *l, int gpus_per_node)
{
	int dims = (l->tp > 1) + (l->pp > 1) + (l->cp > 1) + (l->dp > 1) + (l->ep > 1);
	return 4 * dims + 2 * (l->tp > gpus_per_node) + (l->vp > 1);
}

struct rank_key {
	int in_band;
	long headroom;       /* whole steps of SEARCH_HEADROOM_STEP of the cap */
	int simplicity;
	double step_s;
};

static struct rank_key rank_key_of(const struct state *s, int i, double band_s)
{
	const struct prediction *p = &s->r->top_preds[i];
	double cap = cap_bytes(s);
	return (struct rank_key){
		p->step_time_s <= band_s,
		(long)floor((cap - p->mem.total) / (SEARCH_HEADROOM_STEP * cap)),
		search_simplicity(&s->r->top_layouts[i], s->c->gpus_per_node),
		p->step_time_s };
}

/* Does a rank before b?  In the band: more headroom, then simpler, then
 * faster; the band before the rest; the rest by speed. */
static int ranks_before(const struct rank_key *a, const struct rank_key *b)
{
	if (a->in_band != b->in_band)
		return a->in_band;
	if (a->in_band && a->headroom != b->headroom)
		return a->headroom > b->headroom;
	if (a->in_band && a->simplicity != b->simplicity)
		return a->simplicity < b->simplicity;
	return a->step_s < b->step_s;
}

/* Re-ranks the speed-sorted top list: the layouts within the tolerance
 * of the fastest by headroom and simplicity (stable: ties keep the
 * enumeration's order). */
static void rank_practical(struct state *s)
{
	struct search_result *r = s->r;
	double band_s;
	struct rank_key *k;

	r->fastest = 0;
	r->n_band = r->n_top > 0;
	if (r->n_top < 2 || !(s->sp->tolerance > 0))
		return;
	k = malloc((size_t)r->n_top * sizeof *k);
	if (!k)
		return; /* speed order stands */
	band_s = r->top_preds[0].step_time_s * (1 + s->sp->tolerance);
	for (int i = 0; i < r->n_top; i++)
		k[i] = rank_key_of(s, i, band_s);
	for (int i = 1; i < r->n_top; i++) { /* insertion sort: stable, n is small */
		struct rank_key ki = k[i];
		struct prediction p = r->top_preds[i];
		struct layout l = r->top_layouts[i];
		struct rank_order o = r->top_orders[i];
		int j = i;
		while (j > 0 && ranks_before(&ki, &k[j - 1])) {
			k[j] = k[j - 1];
			r->top_preds[j] = r->top_preds[j - 1];
			r->top_layouts[j] = r->top_layouts[j - 1];
			r->top_orders[j] = r->top_orders[j - 1];
			j--;
		}
		k[j] = ki;
		r->top_preds[j] = p;
		r->top_layouts[j] = l;
		r->top_orders[j] = o;
	}
	r->n_band = 0;
	for (int i = 0; i < r->n_top; i++) {
		r->n_band += k[i].in_band;
		if (r->top_preds[i].step_time_s < r->top_preds[r->fastest].step_time_s)
			r->fastest = i;
	}
	free(k);
}

/* Simulates the kept candidates and the families' best, re-ranks, and
 * trims the list to top_k. */
static void simulate_survivors(struct state *s)
{
	struct search_result *r = s->r;
	for (int i = 0; i < r->n_top && !s->failed; i++) {
		struct train_opts o = *s->o;
		o.order = r->top_orders[i];
		predict_simulate(&r->top_layouts[i], &o, &r->top_preds[i], NULL);
		s->failed = predict_check(&r->top_layouts[i], &r->top_preds[i], &s->err);
	}
	sort_top(r);
	for (int f = 0; f < FAM_COUNT && !s->failed; f++) {
		struct search_family_result *fr = &r->family[f];
		struct train_opts o = *s->o;
		if (!fr->found)
			continue;
		o.order = fr->order;
		predict_simulate(&fr->layout, &o, &fr->pred, NULL);
		s->failed = predict_check(&fr->layout, &fr->pred, &s->err);
	}
	/* A simulated survivor may beat its family's closed-form best. */
	for (int i = 0; i < r->n_top; i++) {
		struct search_family_result *f = &r->family[family_of(&r->top_layouts[i])];
		if (r->top_preds[i].step_time_s < f->pred.step_time_s) {
			f->pred = r->top_preds[i];
			f->layout = r->top_layouts[i];
			f->order = r->top_orders[i];
		}
	}
}

/* The binding constraint of each family without a member: memory when
 * some members were valid but none fit, else the reason that rejected
 * the most members (ties: the earlier check). */
static void explain_families(struct state *s)
{
	for (int fi = 0; fi < FAM_COUNT; fi++) {
		struct search_family_result *f = &s->r->family[fi];
		enum reject best = REJECT_NONE;
		f->why = REJECT_NONE;
		f->why_msg[0] = '\0';
		if (f->found)
			continue;
		if (f->any_oom) {
			best = REJECT_OOM;
		} else {
			for (int r = REJECT_NONE + 1; r < REJECT_COUNT; r++)
				if (f->rejected[r] > (best ? f->rejected[best] : 0))
					best = (enum reject)r;
		}
		f->why = best;
		if (best == REJECT_OOM)
			snprintf(f->why_msg, sizeof f->why_msg,
				 "the member closest to fitting needs %.1f GiB per GPU",
				 f->min_oom_bytes / (1024.0 * 1024.0 * 1024.0));
		else if (best != REJECT_NONE)
			reject_describe(best, &f->witness[best], s->m, s->gpus, f->why_msg,
					sizeof f->why_msg);
	}
}

enum pplan_status search_run(const struct model_spec *m,
			     const struct cluster *c,
			     const struct train_opts *o,
			     const struct search_params *sp,
			     struct search_result *r, struct perr *e)
{
	struct state *s;
	struct timespec t0, t1;
	enum pplan_status st;

	memset(r, 0, sizeof *r);
	if (sp->gbs < 1)
		return perr_set(e, PPLAN_EINPUT, "the global batch must be positive");
	if (sp->n_orders < 1 || sp->n_orders > 2)
		return perr_set(e, PPLAN_EINPUT, "one or two rank orders, not %d",
				sp->n_orders);
	if (sp->top_k < 1 || sp->top_k > 1000)
		return perr_set(e, PPLAN_EINPUT,
				"the number of layouts to keep must be between 1 and 1000, not %d",
				sp->top_k);
	s = calloc(1, sizeof *s);
	if (!s)
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the search");
	*s = (struct state){ .m = m, .c = c, .o = o, .sp = sp, .r = r,
			     .gpus = cluster_gpus(c) };
	/* Rank by the closed forms, keep 4K+16 candidates, simulate their
	 * pipelines and rank again (BENCHMARKS.md: how much that changes). */
	s->keep = 4 * sp->top_k + 16; /* and the tolerance's band within them */
	r->top_layouts = calloc((size_t)s->keep, sizeof *r->top_layouts);
	r->top_preds = calloc((size_t)s->keep, sizeof *r->top_preds);
	r->top_orders = calloc((size_t)s->keep, sizeof *r->top_orders);
	if (!r->top_layouts || !r->top_preds || !r->top_orders) {
		free(s);
		search_free(r);
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the search results");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	enumerate_degrees(s);
	if (!s->failed)
		widen_cp(s);
	if (!s->failed && o->use_des)
		simulate_survivors(s);
	if (!s->failed)
		rank_practical(s);
	if (r->n_top > sp->top_k)
		r->n_top = sp->top_k;
	if (r->n_band > r->n_top)
		r->n_band = r->n_top;
	explain_families(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	st = s->failed;
	if (st != PPLAN_OK) {
		if (e)
			*e = s->err;
		search_free(r);
	}
	free(s);
	return st;
}

void search_free(struct search_result *r)
{
	free(r->top_layouts);
	free(r->top_preds);
	free(r->top_orders);
	r->top_layouts = NULL;
	r->top_preds = NULL;
	r->top_orders = NULL;
	r->n_top = 0;
	free(r->points);
	r->points = NULL;
	r->n_points = 0;
}

int search_rejects_sorted(const struct search_result *r, enum reject *out)
{
	int n = 0;
	for (int i = REJECT_NONE + 1; i < REJECT_COUNT; i++) {
		int j;
		if (r->rejected[i] <= 0)
			continue;
		for (j = n; j > 0 && r->rejected[out[j - 1]] < r->rejected[i]; j--)
			out[j] = out[j - 1];
		out[j] = (enum reject)i;
		n++;
	}
	return n;
}

double search_min_oom_bytes(const struct search_result *r)
{
	double need = -1;
	for (int f = 0; f < FAM_COUNT; f++)
		if (r->family[f].any_oom && (need < 0 || r->family[f].min_oom_bytes < need))
			need = r->family[f].min_oom_bytes;
	return need;
}
