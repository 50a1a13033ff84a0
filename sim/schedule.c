/*
 * schedule.c: builds the per-stage op lists of GPipe, 1F1B, interleaved
 * 1F1B and ZB-H1 (orders and sources in schedule.h), and checks them.
 *
 * Each schedule is first a per-stage sequence of compute ops (F, B, W on
 * (microbatch, chunk)); emit_fwd/emit_bwd then wrap each compute op in
 * the receive it consumes and the send it produces, so the placement of
 * communication is the same for every schedule.  The op counts are known
 * in advance, so the whole schedule is one allocation.
 */
#include "schedule.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[OP_KIND_COUNT] = {
	"F", "B", "Bi", "W", "send_act", "recv_act", "send_grad", "recv_grad",
};

const char *op_kind_name(enum op_kind k)
{
	return (k >= 0 && k < OP_KIND_COUNT) ? op_names[k] : "?";
}

int op_is_compute(enum op_kind k)
{
	return k == OP_FWD || k == OP_BWD || k == OP_BWD_INPUT ||
	       k == OP_BWD_WEIGHT;
}

int schedule_vstage(const struct pipe_schedule *s, int stage, int chunk)
{
	return chunk * s->pp + stage;
}

long schedule_act_bytes(const struct layout *l, long hidden, long seq,
			int bytes_per_elem)
{
	long tokens = (long)l->mbs * seq / (l->cp > 0 ? l->cp : 1);
	/* With SP each TP rank holds 1/tp of the tokens; without it
	 * Megatron-LM still sends 1/tp and all-gathers on arrival
	 * (scatter/gather of pipeline tensors, on by default). */
	if (l->tp > 1)
		tokens /= l->tp;
	return tokens * hidden * bytes_per_elem;
}

/* ---- validity --------------------------------------------------------- */

long schedule_chunk_microbatches(const struct layout *l, long microbatches)
{
	double n = (double)l->pp * l->vp * (double)microbatches;
	return n > (double)LONG_MAX / 2 ? LONG_MAX / 2 : (long)n;
}

static enum pplan_status check_layout(const struct layout *l, long m,
				      struct perr *e)
{
	const char *name = schedule_name(l->schedule);
	if (l->pp < 1 || l->vp < 1)
		return perr_set(e, PPLAN_EINPUT,
				"schedule: pp=%d and vp=%d must both be at least 1",
				l->pp, l->vp);
	if (m < 1)
		return perr_set(e, PPLAN_EINPUT,
				"schedule: a step needs at least one microbatch, got %ld",
				m);
	if (schedule_chunk_microbatches(l, m) > SCHEDULE_MAX_CHUNK_MBS)
		return perr_set(e, PPLAN_EINPUT,
				"schedule: pp*vp*microbatches = %d*%d*%ld is more than the %ld chunk-microbatches pplan simulates event by event (predict prices it with the closed forms)",
				l->pp, l->vp, m, SCHEDULE_MAX_CHUNK_MBS);
	switch (l->schedule) {
	case SCHED_GPIPE:
	case SCHED_1F1B:
	case SCHED_ZB_H1:
		if (l->vp > 1)
			return perr_set(e, PPLAN_EINPUT,
					"schedule=%s runs one model chunk per pipeline rank; vp=%d needs schedule=interleaved",
					name, l->vp);
		return PPLAN_OK;
	case SCHED_DUALPIPE:
		return perr_set(e, PPLAN_EINPUT,
				"schedule=dualpipe is priced by its closed form (DeepSeek-V3 report, sim/MODEL.md 6.2): neither the event simulation nor pplan exec plays it; pplan predict prices it");
	case SCHED_INTERLEAVED:
		if (l->vp < 2)
			return perr_set(e, PPLAN_EINPUT,
					"schedule=interleaved needs vp >= 2 model chunks per pipeline rank, got vp=%d",
					l->vp);
		if (l->pp < 2)
			return perr_set(e, PPLAN_EINPUT,
					"schedule=interleaved needs a pipeline (pp >= 2), got pp=%d",
					l->pp);
		if (m % l->pp != 0)
			return perr_set(e, PPLAN_EINPUT,
					"schedule=interleaved needs the microbatches per step (%ld) to be a multiple of pp=%d, as Megatron-LM does",
					m, l->pp);
		return PPLAN_OK;
	}
	return perr_set(e, PPLAN_EINPUT, "schedule: unknown schedule kind %d",
			(int)l->schedule);
}

/* ---- emitting ops -------------------------------------------------------- */

struct op_writer {
	struct pipe_schedule *s;
	int stage;
	long n;          /* ops written so far, all stages */
};

static void put(struct op_writer *b, enum op_kind k, int mb, int chunk,
		int peer, long bytes)
{
	struct sched_op *op = &b->s->ops[b->n++];
	op->kind = (int)k;
	op->mb = mb;
	op->chunk = chunk;
	op->peer = peer;
	op->bytes = bytes;
}

static void emit_fwd(struct op_writer *b, int mb, int chunk)
{
	const struct pipe_schedule *s = b->s;
	int vs = schedule_vstage(s, b->stage, chunk), nv = s->pp * s->vp;
	if (vs > 0)
		put(b, OP_RECV_ACT, mb, chunk, (b->stage + s->pp - 1) % s->pp,
		    s->act_bytes);
	put(b, OP_FWD, mb, chunk, -1, 0);
	if (vs < nv - 1)
		put(b, OP_SEND_ACT, mb, chunk, (b->stage + 1) % s->pp,
		    s->act_bytes);
}

/* kind is OP_BWD or OP_BWD_INPUT: the op that yields the input gradient. */
static void emit_bwd(struct op_writer *b, enum op_kind kind, int mb, int chunk)
{
	const struct pipe_schedule *s = b->s;
	int vs = schedule_vstage(s, b->stage, chunk), nv = s->pp * s->vp;
	if (vs < nv - 1)
		put(b, OP_RECV_GRAD, mb, chunk, (b->stage + 1) % s->pp,
		    s->act_bytes);
	put(b, kind, mb, chunk, -1, 0);
	if (vs > 0)
		put(b, OP_SEND_GRAD, mb, chunk, (b->stage + s->pp - 1) % s->pp,
		    s->act_bytes);
}

/* Ops of one stage: per (mb, chunk) a forward and a backward (plus W),
 * each with a receive unless at the first/last virtual stage, and a send
 * unless at the last/first. */
static long stage_op_count(int pp, int vp, long m, int stage, int split)
{
	long n = 0;
	int nv = pp * vp;
	for (int j = 0; j < vp; j++) {
		int vs = j * pp + stage;
		long per = 2 + split + 2 * (vs > 0) + 2 * (vs < nv - 1);
		n += per * m;
	}
	return n;
}

/* ---- the four orders ----------------------------------------------------- */

static void build_gpipe(struct op_writer *b, int m)
{
	for (int i = 0; i < m; i++)
		emit_fwd(b, i, 0);
	for (int i = 0; i < m; i++)
		emit_bwd(b, OP_BWD, i, 0);
}

static void build_1f1b(struct op_writer *b, int m)
{
	int warm = b->s->pp - b->stage - 1;
	if (warm > m)
		warm = m;
	for (int i = 0; i < warm; i++)
		emit_fwd(b, i, 0);
	for (int k = 0; k < m - warm; k++) {
		emit_fwd(b, warm + k, 0);
		emit_bwd(b, OP_BWD, k, 0);
	}
	for (int k = m - warm; k < m; k++)
		emit_bwd(b, OP_BWD, k, 0);
}

/* Megatron-LM's mapping of virtual microbatch k to (microbatch, chunk). */
static void interleaved_id(int pp, int vp, int k, int forward, int *mb,
			   int *chunk)
{
	int group = pp * vp, in_group = k % group;
	int c = in_group / pp;
	*chunk = forward ? c : vp - 1 - c;
	*mb = (k / group) * pp + k % pp;
}

static void build_interleaved(struct op_writer *b, int m)
{
	int pp = b->s->pp, vp = b->s->vp, total = m * vp, warm, mb, chunk;
	if (m == pp)
		warm = total;
	else
		warm = (pp - b->stage - 1) * 2 + (vp - 1) * pp;
	if (warm > total)
		warm = total;
	for (int k = 0; k < warm; k++) {
		interleaved_id(pp, vp, k, 1, &mb, &chunk);
		emit_fwd(b, mb, chunk);
	}
	for (int k = 0; k < total - warm; k++) {
		interleaved_id(pp, vp, k + warm, 1, &mb, &chunk);
		emit_fwd(b, mb, chunk);
		interleaved_id(pp, vp, k, 0, &mb, &chunk);
		emit_bwd(b, OP_BWD, mb, chunk);
	}
	for (int k = total - warm; k < total; k++) {
		interleaved_id(pp, vp, k, 0, &mb, &chunk);
		emit_bwd(b, OP_BWD, mb, chunk);
	}
}

/* ZB-H1 as in the authors' DeepSpeed schedule (exact semantics): stage s
 * defers s weight-gradient passes during the steady state and runs them
 * at the end, where 1F1B idles. */
static void build_zb_h1(struct op_writer *b, int m)
{
	int f = 0, bw = 0, w = 0, warm = b->s->pp - b->stage - 1;
	if (warm > m)
		warm = m;
	while (f < warm)
		emit_fwd(b, f++, 0);
	for (int i = 0; i < b->stage && f < m; i++) {
		emit_fwd(b, f++, 0);
		emit_bwd(b, OP_BWD_INPUT, bw++, 0);
	}
	while (f < m) {
		emit_fwd(b, f++, 0);
		emit_bwd(b, OP_BWD_INPUT, bw++, 0);
		put(b, OP_BWD_WEIGHT, w++, 0, -1, 0);
	}
	while (bw < m) {
		emit_bwd(b, OP_BWD_INPUT, bw++, 0);
		put(b, OP_BWD_WEIGHT, w++, 0, -1, 0);
	}
	while (w < m)
		put(b, OP_BWD_WEIGHT, w++, 0, -1, 0);
}

enum pplan_status schedule_build(const struct layout *l, long microbatches,
				 long act_bytes, struct pipe_schedule **out,
				 struct perr *e)
{
	enum pplan_status st;
	struct pipe_schedule *s = NULL;
	struct op_writer b;
	int split = l->schedule == SCHED_ZB_H1;
	long nops = 0;
	size_t size;

	*out = NULL;
	st = check_layout(l, microbatches, e);
	if (st != PPLAN_OK)
		return st;
	for (int i = 0; i < l->pp; i++)
		nops += stage_op_count(l->pp, l->vp, microbatches, i, split);

	/* One block: the header, first[pp+1], ops[nops]. */
	size = sizeof *s + sizeof(long) * (size_t)(l->pp + 1) +
	       sizeof(struct sched_op) * (size_t)nops;
	s = calloc(1, size);
	if (!s)
		return perr_set(e, PPLAN_ENOMEM,
				"schedule: out of memory for %ld ops", nops);
	s->first = (long *)(s + 1);
	s->ops = (struct sched_op *)(s->first + l->pp + 1);
	s->kind = l->schedule;
	s->pp = l->pp;
	s->vp = l->vp;
	s->microbatches = microbatches;
	s->act_bytes = act_bytes;
	s->nops = nops;

	b.s = s;
	b.n = 0;
	for (int i = 0; i < l->pp; i++) {
		b.stage = i;
		s->first[i] = b.n;
		switch (l->schedule) {
		case SCHED_GPIPE: build_gpipe(&b, (int)microbatches); break;
		case SCHED_1F1B: build_1f1b(&b, (int)microbatches); break;
		case SCHED_INTERLEAVED:
			build_interleaved(&b, (int)microbatches);
			break;
		case SCHED_ZB_H1: build_zb_h1(&b, (int)microbatches); break;
		case SCHED_DUALPIPE: break; /* refused by check_layout */
		}
		assert(b.n - s->first[i] ==
		       stage_op_count(l->pp, l->vp, microbatches, i, split));
	}
	s->first[l->pp] = b.n;
	assert(b.n == nops);
	*out = s;
	return PPLAN_OK;
}

void schedule_free(struct pipe_schedule *s)
{
	free(s);
}

long schedule_peak_inflight(const struct pipe_schedule *s, int stage)
{
	long n = 0, peak = 0;
	int release = s->kind == SCHED_ZB_H1 ? OP_BWD_WEIGHT : OP_BWD;
	for (long i = s->first[stage]; i < s->first[stage + 1]; i++) {
		if (s->ops[i].kind == OP_FWD && ++n > peak)
			peak = n;
		else if (s->ops[i].kind == release)
			n--;
	}
	return peak;
}

/* ---- invariants ---------------------------------------------------------- */

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			st = perr_set(e, PPLAN_EINPUT, __VA_ARGS__);         \
			goto done;                                           \
		}                                                            \
	} while (0)

enum pplan_status schedule_check(const struct pipe_schedule *s,
				 struct perr *e)
{
	enum pplan_status st = PPLAN_OK;
	int pp = s->pp, vp = s->vp, nv = pp * vp;
	int split = s->kind == SCHED_ZB_H1;
	long m = s->microbatches, cells = (long)nv * m;
	/* per (vstage, mb): forward, backward, weight done; messages seen */
	unsigned char *f = calloc((size_t)cells, 7);
	unsigned char *bw, *w, *sa, *ra, *sg, *rg;

	if (!f)
		return perr_set(e, PPLAN_ENOMEM, "schedule: out of memory");
	bw = f + cells; w = bw + cells; sa = w + cells; ra = sa + cells;
	sg = ra + cells; rg = sg + cells;

	for (int st_i = 0; st_i < pp; st_i++) {
		int next = (st_i + 1) % pp, prev = (st_i + pp - 1) % pp;
		for (long i = s->first[st_i]; i < s->first[st_i + 1]; i++) {
			const struct sched_op *op = &s->ops[i];
			const char *k = op_kind_name((enum op_kind)op->kind);
			int vs;
			long c;
			CHECK(op->mb >= 0 && op->mb < m && op->chunk >= 0 &&
				      op->chunk < vp,
			      "stage %d op %ld: microbatch %d or chunk %d out of range",
			      st_i, i, op->mb, op->chunk);
			vs = schedule_vstage(s, st_i, op->chunk);
			c = (long)vs * m + op->mb;
			if (!op_is_compute((enum op_kind)op->kind))
				CHECK(op->bytes == s->act_bytes,
				      "stage %d op %ld: %s moves %ld bytes, not %ld",
				      st_i, i, k, op->bytes, s->act_bytes);
			switch ((enum op_kind)op->kind) {
			case OP_FWD:
				CHECK(!f[c], "stage %d: forward of microbatch %d chunk %d twice",
				      st_i, op->mb, op->chunk);
				CHECK(vs == 0 || ra[c],
				      "stage %d: forward of microbatch %d chunk %d before its receive",
				      st_i, op->mb, op->chunk);
				f[c] = 1;
				break;
			case OP_BWD:
			case OP_BWD_INPUT:
				CHECK(split == (op->kind == OP_BWD_INPUT),
				      "stage %d: %s does not belong in a %s schedule",
				      st_i, k, schedule_name(s->kind));
				CHECK(f[c] && !bw[c],
				      "stage %d: backward of microbatch %d chunk %d before its forward or twice",
				      st_i, op->mb, op->chunk);
				CHECK(vs == nv - 1 || rg[c],
				      "stage %d: backward of microbatch %d chunk %d before its receive",
				      st_i, op->mb, op->chunk);
				bw[c] = 1;
				break;
			case OP_BWD_WEIGHT:
				CHECK(split && bw[c] && !w[c],
				      "stage %d: W of microbatch %d chunk %d before its B, twice, or outside zb-h1",
				      st_i, op->mb, op->chunk);
				w[c] = 1;
				break;
			case OP_SEND_ACT:
				CHECK(f[c] && vs < nv - 1 && op->peer == next,
				      "stage %d: activation send of microbatch %d chunk %d before its forward or to the wrong stage",
				      st_i, op->mb, op->chunk);
				sa[c + m]++;
				break;
			case OP_RECV_ACT:
				CHECK(!f[c] && vs > 0 && op->peer == prev,
				      "stage %d: activation receive of microbatch %d chunk %d late or from the wrong stage",
				      st_i, op->mb, op->chunk);
				ra[c]++;
				break;
			case OP_SEND_GRAD:
				CHECK(bw[c] && vs > 0 && op->peer == prev,
				      "stage %d: gradient send of microbatch %d chunk %d before its backward or to the wrong stage",
				      st_i, op->mb, op->chunk);
				sg[c - m]++;
				break;
			case OP_RECV_GRAD:
				CHECK(!bw[c] && vs < nv - 1 && op->peer == next,
				      "stage %d: gradient receive of microbatch %d chunk %d late or from the wrong stage",
				      st_i, op->mb, op->chunk);
				rg[c]++;
				break;
			case OP_KIND_COUNT:
				CHECK(0, "stage %d op %ld: unknown kind", st_i, i);
			}
		}
	}
	for (long c = 0; c < cells; c++) {
		int vs = (int)(c / m), mb = (int)(c % m);
		CHECK(f[c] && bw[c] && (!split || w[c]),
		      "virtual stage %d: microbatch %d misses its forward or backward",
		      vs, mb);
		CHECK(sa[c] == (vs > 0) && ra[c] == (vs > 0),
		      "virtual stage %d: microbatch %d's activation is sent %d and received %d times",
		      vs, mb, sa[c], ra[c]);
		CHECK(sg[c] == (vs < nv - 1) && rg[c] == (vs < nv - 1),
		      "virtual stage %d: microbatch %d's gradient is sent %d and received %d times",
		      vs, mb, sg[c], rg[c]);
	}
done:
	free(f);
	return st;
}
