/*
 * layout.c: layout strings, defaults, validity checks and the rank map.
 * The checks are Megatron-LM's: tp divides the attention heads and the
 * key/value heads, pp*vp divides the layers, dp*mbs divides the global
 * batch, interleaving needs the microbatches to be a multiple of pp, and
 * ep divides the experts and the dp*cp ranks that hold them.
 */
#include "layout.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const recompute_names[] = { "none", "selective", "full" };
static const char *const schedule_names[] = { "gpipe", "1f1b", "interleaved",
					      "zb-h1" };

const char *recompute_name(enum recompute r)
{
	return (r >= 0 && r <= RECOMPUTE_FULL) ? recompute_names[r] : "?";
}

const char *schedule_name(enum schedule s)
{
	return (s >= 0 && s <= SCHED_ZB_H1) ? schedule_names[s] : "?";
}

int recompute_parse(const char *s, enum recompute *out)
{
	for (int i = 0; i <= RECOMPUTE_FULL; i++)
		if (strcasecmp(s, recompute_names[i]) == 0) {
			*out = (enum recompute)i;
			return 0;
		}
	return -1;
}

int schedule_parse(const char *s, enum schedule *out)
{
	for (int i = 0; i <= SCHED_ZB_H1; i++)
		if (strcasecmp(s, schedule_names[i]) == 0) {
			*out = (enum schedule)i;
			return 0;
		}
	if (strcasecmp(s, "interleaved-1f1b") == 0) {
		*out = SCHED_INTERLEAVED;
		return 0;
	}
	return -1;
}

void layout_default(struct layout *l)
{
	memset(l, 0, sizeof *l);
	l->tp = l->pp = l->dp = l->cp = l->ep = l->vp = 1;
	l->mbs = 1;
	l->gbs = 0;
	l->sp = 0;
	l->recompute = RECOMPUTE_NONE;
	l->zero = 0;
	l->schedule = SCHED_1F1B;
}

static int parse_pos_int(const char *v, long max, long *out)
{
	char *end;
	long x;
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < 1 || x > max)
		return -1;
	*out = x;
	return 0;
}

static const struct {
	const char *key;
	unsigned bit;
} keys[] = {
	{ "tp", LK_TP }, { "pp", LK_PP }, { "dp", LK_DP }, { "cp", LK_CP },
	{ "ep", LK_EP }, { "vp", LK_VP }, { "mbs", LK_MBS }, { "gbs", LK_GBS },
	{ "sp", LK_SP }, { "recompute", LK_RECOMPUTE }, { "zero", LK_ZERO },
	{ "schedule", LK_SCHEDULE },
};

static enum pplan_status set_key(struct layout *l, unsigned bit,
				 const char *key, const char *v, struct perr *e)
{
	long x;
	switch (bit) {
	case LK_TP: case LK_PP: case LK_DP: case LK_CP: case LK_EP:
	case LK_VP: case LK_MBS:
		if (parse_pos_int(v, LAYOUT_MAX_DEGREE, &x) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"layout: %s must be a positive whole number, got '%s'",
					key, v);
		if (bit == LK_TP) l->tp = (int)x;
		else if (bit == LK_PP) l->pp = (int)x;
		else if (bit == LK_DP) l->dp = (int)x;
		else if (bit == LK_CP) l->cp = (int)x;
		else if (bit == LK_EP) l->ep = (int)x;
		else if (bit == LK_VP) l->vp = (int)x;
		else l->mbs = (int)x;
		return PPLAN_OK;
	case LK_GBS:
		if (parse_pos_int(v, LAYOUT_MAX_GBS, &x) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"layout: gbs must be a positive whole number of sequences, got '%s'",
					v);
		l->gbs = x;
		return PPLAN_OK;
	case LK_SP:
		if (strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0 ||
		    strcasecmp(v, "true") == 0)
			l->sp = 1;
		else if (strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0 ||
			 strcasecmp(v, "false") == 0)
			l->sp = 0;
		else
			return perr_set(e, PPLAN_EINPUT,
					"layout: sp must be on or off, got '%s'", v);
		return PPLAN_OK;
	case LK_RECOMPUTE:
		if (recompute_parse(v, &l->recompute) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"layout: recompute must be none, selective or full, got '%s'",
					v);
		return PPLAN_OK;
	case LK_ZERO:
		if (strlen(v) != 1 || v[0] < '0' || v[0] > '3')
			return perr_set(e, PPLAN_EINPUT,
					"layout: zero must be 0, 1, 2 or 3, got '%s'", v);
		l->zero = v[0] - '0';
		return PPLAN_OK;
	case LK_SCHEDULE:
		if (schedule_parse(v, &l->schedule) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"layout: schedule must be gpipe, 1f1b, interleaved or zb-h1, got '%s'",
					v);
		return PPLAN_OK;
	}
	return perr_set(e, PPLAN_EINPUT, "layout: unknown key '%s'", key);
}

enum pplan_status layout_parse(const char *s, struct layout *l, unsigned *set,
			       struct perr *e)
{
	char buf[1024];
	char *save = NULL, *tok;
	unsigned seen = 0;

	layout_default(l);
	if (!s || !*s)
		return perr_set(e, PPLAN_EINPUT, "layout: empty layout string");
	if (strlen(s) >= sizeof buf)
		return perr_set(e, PPLAN_EINPUT, "layout: string too long");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t i;
		enum pplan_status st;
		while (*tok == ' ')
			tok++;
		if (!eq || eq == tok || !eq[1])
			return perr_set(e, PPLAN_EINPUT,
					"layout: '%s' is not key=value", tok);
		*eq = '\0';
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (strcmp(keys[i].key, tok) == 0)
				break;
		if (i == sizeof keys / sizeof keys[0])
			return perr_set(e, PPLAN_EINPUT,
					"layout: unknown key '%s' (keys: tp pp dp cp ep vp mbs gbs sp recompute zero schedule)",
					tok);
		if (seen & keys[i].bit)
			return perr_set(e, PPLAN_EINPUT,
					"layout: key '%s' given twice", tok);
		seen |= keys[i].bit;
		st = set_key(l, keys[i].bit, tok, eq + 1, e);
		if (st != PPLAN_OK)
			return st;
	}
	if ((seen & LK_SP) && l->sp && (seen & LK_TP) && l->tp == 1)
		return perr_set(e, PPLAN_EINPUT,
				"layout: sp=on needs tp > 1 (sequence parallelism splits along the tensor-parallel group)");
	/* Each degree may be up to 2^20, but their product counts GPUs and
	 * is multiplied in int (dp * cp) and long (layout_gpus): bound it. */
	if ((double)l->tp * l->pp * l->dp * l->cp > INT_MAX)
		return perr_set(e, PPLAN_EINPUT,
				"layout: tp*pp*dp*cp = %.0f GPUs is more than %d",
				(double)l->tp * l->pp * l->dp * l->cp, INT_MAX);
	if (set)
		*set = seen;
	return PPLAN_OK;
}

void layout_complete(struct layout *l, unsigned set, long gpus)
{
	if (!(set & LK_DP) && gpus > 0) {
		long rest = (long)l->tp * l->pp * l->cp;
		l->dp = (rest > 0 && gpus % rest == 0) ? (int)(gpus / rest) : 1;
	}
	if (!(set & LK_SP))
		l->sp = l->tp > 1;
	if (!(set & LK_SCHEDULE))
		l->schedule = l->vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	if (!(set & LK_ZERO))
		l->zero = l->dp * l->cp > 1 ? 1 : 0;
}

void layout_format(const struct layout *l, char *buf, size_t len)
{
	snprintf(buf, len,
		 "tp=%d,pp=%d,dp=%d,cp=%d,ep=%d,vp=%d,mbs=%d,gbs=%ld,sp=%s,"
		 "recompute=%s,zero=%d,schedule=%s",
		 l->tp, l->pp, l->dp, l->cp, l->ep, l->vp, l->mbs, l->gbs,
		 l->sp ? "on" : "off", recompute_name(l->recompute), l->zero,
		 schedule_name(l->schedule));
}

long layout_gpus(const struct layout *l)
{
	return (long)l->tp * l->pp * l->dp * l->cp;
}

long layout_microbatches(const struct layout *l)
{
	long per = (long)l->mbs * l->dp;
	return per > 0 ? l->gbs / per : 0;
}

#define REJECT(id, ...)                                                     \
	do {                                                                \
		if (reason_id)                                              \
			*reason_id = (id);                                  \
		return perr_set(e, PPLAN_EINPUT, __VA_ARGS__);              \
	} while (0)

enum pplan_status layout_check(const struct layout *l,
			       const struct model_spec *m, long gpus,
			       const char **reason_id, struct perr *e)
{
	long micro;

	/* Layouts from strings and files are bounded where they are read;
	 * this keeps every division below well defined whatever the caller. */
	if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->ep < 1 ||
	    l->vp < 1 || l->mbs < 1)
		REJECT("degree below 1",
		       "tp, pp, dp, cp, ep, vp and mbs must all be at least 1 (got %d, %d, %d, %d, %d, %d, %d)",
		       l->tp, l->pp, l->dp, l->cp, l->ep, l->vp, l->mbs);
	if ((double)l->tp * l->pp * l->dp * l->cp > INT_MAX)
		REJECT("too many GPUs",
		       "tp*pp*dp*cp = %.0f GPUs is more than %d",
		       (double)l->tp * l->pp * l->dp * l->cp, INT_MAX);
	if (gpus > 0 && layout_gpus(l) != gpus)
		REJECT("degrees do not multiply to the GPU count",
		       "tp*pp*dp*cp = %d*%d*%d*%d = %ld, but there are %ld GPUs",
		       l->tp, l->pp, l->dp, l->cp, layout_gpus(l), gpus);
	if (m->heads % l->tp != 0)
		REJECT("tp does not divide heads",
		       "tp=%d does not divide the %d attention heads of %s",
		       l->tp, m->heads, m->name);
	if (m->kv_heads % l->tp != 0 && l->tp % m->kv_heads != 0)
		REJECT("tp does not divide kv heads",
		       "tp=%d and the %d key/value heads of %s do not divide one another",
		       l->tp, m->kv_heads, m->name);
	if (m->layers % l->pp != 0)
		REJECT("pp does not divide layers",
		       "pp=%d does not divide the %d layers of %s", l->pp,
		       m->layers, m->name);
	if (m->layers % ((long)l->pp * l->vp) != 0)
		REJECT("vp does not divide layers per stage",
		       "vp=%d does not divide the %d layers per pipeline stage",
		       l->vp, m->layers / l->pp);
	if (l->vp > 1 && l->pp == 1)
		REJECT("vp needs pp > 1",
		       "vp=%d needs a pipeline (pp > 1)", l->vp);
	if (l->vp > 1 && l->schedule != SCHED_INTERLEAVED)
		REJECT("vp needs the interleaved schedule",
		       "vp=%d needs schedule=interleaved, not %s", l->vp,
		       schedule_name(l->schedule));
	if (l->schedule == SCHED_INTERLEAVED && l->vp < 2)
		REJECT("interleaved needs vp >= 2",
		       "schedule=interleaved needs vp >= 2 model chunks per pipeline rank");
	if (l->sp && l->tp == 1)
		REJECT("sp needs tp > 1", "sp=on needs tp > 1");
	if (l->gbs <= 0)
		REJECT("no global batch", "the global batch size (gbs) is not set");
	if (l->gbs % ((long)l->mbs * l->dp) != 0)
		REJECT("mbs*dp does not divide gbs",
		       "gbs=%ld is not a multiple of mbs*dp = %d*%d", l->gbs,
		       l->mbs, l->dp);
	micro = layout_microbatches(l);
	if (l->schedule == SCHED_INTERLEAVED && micro % l->pp != 0)
		REJECT("interleaved needs microbatches divisible by pp",
		       "interleaved 1F1B needs the %ld microbatches to be a multiple of pp=%d",
		       micro, l->pp);
	if (l->cp > 1 && m->seq % (2L * l->cp) != 0)
		REJECT("cp does not divide seq",
		       "cp=%d: the sequence length %ld is not a multiple of 2*cp",
		       l->cp, m->seq);
	if (l->sp && (m->seq / l->cp) % l->tp != 0)
		REJECT("tp does not divide seq",
		       "sp=on: the sequence length per cp rank is not a multiple of tp=%d",
		       l->tp);
	if (l->ep > 1) {
		if (m->num_experts < 2)
			REJECT("ep needs experts",
			       "ep=%d but %s has no experts", l->ep, m->name);
		if (m->num_experts % l->ep != 0)
			REJECT("ep does not divide experts",
			       "ep=%d does not divide the %d experts", l->ep,
			       m->num_experts);
		if (((long)l->dp * l->cp) % l->ep != 0)
			REJECT("ep does not divide dp*cp",
			       "ep=%d must divide dp*cp = %d", l->ep,
			       l->dp * l->cp);
	}
	if (l->zero > 0 && l->dp * l->cp == 1)
		REJECT("zero needs dp > 1",
		       "zero=%d shards over data-parallel ranks, but dp*cp = 1",
		       l->zero);
	if (l->zero >= 2 && l->pp > 1)
		REJECT("zero-2/3 with pp",
		       "zero=%d (sharded gradients) does not combine with pipeline parallelism (pp=%d) in Megatron-LM or DeepSpeed",
		       l->zero, l->pp);
	return PPLAN_OK;
}

/* ---- rank map ---------------------------------------------------------- */

void rank_order_default(struct rank_order *o)
{
	o->inner_to_outer[0] = DIM_TP;
	o->inner_to_outer[1] = DIM_CP;
	o->inner_to_outer[2] = DIM_DP;
	o->inner_to_outer[3] = DIM_PP;
}

enum pplan_status rank_order_parse(const char *s, struct rank_order *o,
				   struct perr *e)
{
	static const char *const names[DIM_COUNT] = { "tp", "cp", "dp", "pp" };
	char buf[64];
	char *save = NULL, *tok;
	int n = 0;
	unsigned seen = 0;

	if (strlen(s) >= sizeof buf)
		return perr_set(e, PPLAN_EINPUT, "rank order too long: '%s'", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, "-,", &save); tok; tok = strtok_r(NULL, "-,", &save)) {
		int d;
		for (d = 0; d < DIM_COUNT; d++)
			if (strcmp(tok, names[d]) == 0)
				break;
		if (d == DIM_COUNT || (seen & (1u << d)) || n >= DIM_COUNT)
			return perr_set(e, PPLAN_EINPUT,
					"rank order '%s' must name tp, cp, dp and pp once each, innermost first",
					s);
		seen |= 1u << d;
		o->inner_to_outer[n++] = (enum dim)d;
	}
	if (n != DIM_COUNT)
		return perr_set(e, PPLAN_EINPUT,
				"rank order '%s' must name tp, cp, dp and pp once each, innermost first",
				s);
	return PPLAN_OK;
}

int layout_dim_size(const struct layout *l, enum dim d)
{
	switch (d) {
	case DIM_TP: return l->tp;
	case DIM_CP: return l->cp;
	case DIM_DP: return l->dp;
	case DIM_PP: return l->pp;
	case DIM_COUNT: break;
	}
	return 1;
}

void layout_rank_coords(const struct layout *l, const struct rank_order *o,
			long rank, struct rank_coords *out)
{
	for (int i = 0; i < DIM_COUNT; i++) {
		enum dim d = o->inner_to_outer[i];
		int n = layout_dim_size(l, d);
		out->c[d] = (int)(rank % n);
		rank /= n;
	}
}

long layout_coords_rank(const struct layout *l, const struct rank_order *o,
			const struct rank_coords *rc)
{
	long rank = 0;
	for (int i = DIM_COUNT - 1; i >= 0; i--) {
		enum dim d = o->inner_to_outer[i];
		rank = rank * layout_dim_size(l, d) + rc->c[d];
	}
	return rank;
}

long layout_dim_stride(const struct layout *l, const struct rank_order *o,
		       enum dim d)
{
	long stride = 1;
	for (int i = 0; i < DIM_COUNT; i++) {
		if (o->inner_to_outer[i] == d)
			return stride;
		stride *= layout_dim_size(l, o->inner_to_outer[i]);
	}
	return stride;
}
