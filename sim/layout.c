/*
 * layout.c: layout strings, defaults and validity checks (the rank map
 * is rank_map.c).
 * The checks are Megatron-LM's: tp divides the attention heads and the
 * key/value heads, pp*vp divides the layers, dp*mbs divides the global
 * batch, interleaving needs the microbatches to be a multiple of pp, and
 * ep divides the experts and the dp*cp ranks that hold them.
 */
#include "layout.h"
#include "suggest.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const recompute_names[] = { "none", "selective", "full" };
static const char *const schedule_names[] = { "gpipe", "1f1b", "interleaved",
					      "zb-h1", "dualpipe" };

const char *recompute_name(enum recompute r)
{
	return (r >= 0 && r <= RECOMPUTE_FULL) ? recompute_names[r] : "?";
}

const char *schedule_name(enum schedule s)
{
	return (s >= 0 && s <= SCHED_LAST) ? schedule_names[s] : "?";
}

static const char *const module_names[] = {
	"core_attn", "layernorm", "mlp", "moe", "moe_act", "shared_experts", "mla_up_proj",
};
#define N_MODULES ((int)(sizeof module_names / sizeof module_names[0]))

const char *recompute_module_name(enum recompute_module m)
{
	for (int i = 0; i < N_MODULES; i++)
		if ((unsigned)m == 1u << i)
			return module_names[i];
	return "?";
}

static const char *const offload_names[] = {
	"attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act",
};
#define N_OFFLOAD ((int)(sizeof offload_names / sizeof offload_names[0]))

/* Bits of the names in `names` (n of them) listed in s, "+"/space apart. */
static int names_parse(const char *const *names, int n_names, const char *s, unsigned *out,
		       char *bad, size_t bad_len)
{
	*out = 0;
	while (*s) {
		size_t n = strcspn(s, "+ ");
		int i;
		for (i = 0; i < n_names; i++)
			if (strlen(names[i]) == n && strncasecmp(s, names[i], n) == 0)
				break;
		if (n > 0 && i == n_names) {
			snprintf(bad, bad_len, "%.*s", (int)(n < 64 ? n : 64), s);
			*out = 0;
			return -1;
		}
		if (n > 0)
			*out |= 1u << i;
		s += n;
		while (*s == '+' || *s == ' ')
			s++;
	}
	return 0;
}

static void names_format(const char *const *names, int n_names, unsigned mods, char *buf,
			 size_t len, const char *sep)
{
	size_t o = 0;
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < n_names; i++)
		if (mods & (1u << i))
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s",
					      o ? sep : "", names[i]);
}

int offload_modules_parse(const char *s, unsigned *out, char *bad, size_t bad_len)
{
	return names_parse(offload_names, N_OFFLOAD, s, out, bad, bad_len);
}

void offload_modules_format(unsigned mods, char *buf, size_t len, const char *sep)
{
	names_format(offload_names, N_OFFLOAD, mods, buf, len, sep);
}

int recompute_modules_parse(const char *s, unsigned *out, char *bad, size_t bad_len)
{
	return names_parse(module_names, N_MODULES, s, out, bad, bad_len);
}

void recompute_modules_format(unsigned mods, char *buf, size_t len, const char *sep)
{
	names_format(module_names, N_MODULES, mods, buf, len, sep);
}

unsigned layout_recompute_modules(const struct layout *l)
{
	if (l->recompute != RECOMPUTE_SELECTIVE)
		return 0;
	return l->recompute_modules ? l->recompute_modules : RM_CORE_ATTN;
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

int layout_mirror_stage(const struct layout *l, int stage)
{
	return l->schedule == SCHED_DUALPIPE && l->pp - 1 - stage != stage ? l->pp - 1 - stage
									     : -1;
}

int schedule_parse(const char *s, enum schedule *out)
{
	for (int i = 0; i <= SCHED_LAST; i++)
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
	{ "schedule", LK_SCHEDULE }, { "etp", LK_ETP }, { "pp_first", LK_PP_FIRST },
	{ "pp_last", LK_PP_LAST }, { "pp_embed", LK_PP_EMBED }, { "pp_loss", LK_PP_LOSS },
	{ "recompute_modules", LK_RECOMPUTE_MODULES }, { "offload", LK_OFFLOAD },
	{ "optimizer_offload", LK_OPTIMIZER_OFFLOAD },
	{ "recompute_layers", LK_RECOMPUTE_LAYERS }, { "offload_layers", LK_OFFLOAD_LAYERS },
};

static enum pplan_status set_key(struct layout *l, unsigned bit,
				 const char *key, const char *v, struct perr *e)
{
	long x;
	switch (bit) {
	case LK_TP: case LK_PP: case LK_DP: case LK_CP: case LK_EP:
	case LK_VP: case LK_MBS: case LK_ETP: case LK_PP_FIRST: case LK_PP_LAST:
	case LK_RECOMPUTE_LAYERS: case LK_OFFLOAD_LAYERS:
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
		else if (bit == LK_ETP) l->etp = (int)x;
		else if (bit == LK_PP_FIRST) l->pp_first = (int)x;
		else if (bit == LK_PP_LAST) l->pp_last = (int)x;
		else if (bit == LK_RECOMPUTE_LAYERS) l->recompute_layers = (int)x;
		else if (bit == LK_OFFLOAD_LAYERS) l->offload_layers = (int)x;
		else l->mbs = (int)x;
		return PPLAN_OK;
	case LK_GBS:
		if (parse_pos_int(v, LAYOUT_MAX_GBS, &x) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"layout: gbs must be a positive whole number of sequences, got '%s'",
					v);
		l->gbs = x;
		return PPLAN_OK;
	case LK_SP: case LK_PP_EMBED: case LK_PP_LOSS: case LK_OPTIMIZER_OFFLOAD: {
		int on;
		if (strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0 ||
		    strcasecmp(v, "true") == 0)
			on = 1;
		else if (strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0 ||
			 strcasecmp(v, "false") == 0)
			on = 0;
		else
			return perr_set(e, PPLAN_EINPUT,
					"layout: %s must be on or off, got '%s'", key, v);
		if (bit == LK_SP) l->sp = on;
		else if (bit == LK_OPTIMIZER_OFFLOAD) l->optimizer_offload = on;
		else if (bit == LK_PP_EMBED) l->pp_embed = on;
		else l->pp_loss = on;
		return PPLAN_OK;
	}
	case LK_OFFLOAD: case LK_RECOMPUTE_MODULES: {
		int off = bit == LK_OFFLOAD;
		unsigned *mods = off ? &l->offload_modules : &l->recompute_modules;
		char bad[80];
		if ((off ? offload_modules_parse : recompute_modules_parse)(v, mods, bad, sizeof bad) != 0 ||
		    !*mods)
			return perr_set(e, PPLAN_EINPUT, "layout: %s takes %s joined by '+', got '%s'", key,
					off ? "attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1 and moe_act"
					    : "core_attn, layernorm, mlp, moe, moe_act, shared_experts and mla_up_proj",
					v);
		return PPLAN_OK;
	}
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
					"layout: schedule must be " SCHEDULE_NAMES ", got '%s'",
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
		if (i == sizeof keys / sizeof keys[0]) {
			char dym[96];
			return perr_set(e, PPLAN_EINPUT,
					"layout: unknown key '%s'%s (keys: tp pp dp cp ep etp vp mbs gbs sp recompute recompute_layers recompute_modules offload offload_layers optimizer_offload zero schedule pp_first pp_last pp_embed pp_loss)",
					tok,
					suggest_phrase(dym, sizeof dym,
						       suggest_table(tok, keys, sizeof keys / sizeof keys[0],
								     sizeof keys[0], 0)));
		}
		if (seen & keys[i].bit)
			return perr_set(e, PPLAN_EINPUT,
					"layout: key '%s' given twice", tok);
		seen |= keys[i].bit;
		st = set_key(l, keys[i].bit, tok, eq + 1, e);
		if (st != PPLAN_OK)
			return st;
	}
	/* recompute_layers=N alone means Megatron's block method: full
	 * recomputation of N layers of each chunk. */
	if ((seen & LK_RECOMPUTE_LAYERS) && !(seen & LK_RECOMPUTE))
		l->recompute = RECOMPUTE_FULL;
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
	int n = snprintf(buf, len,
			 "tp=%d,pp=%d,dp=%d,cp=%d,ep=%d,vp=%d,mbs=%d,gbs=%ld,sp=%s,"
			 "recompute=%s,zero=%d,schedule=%s",
			 l->tp, l->pp, l->dp, l->cp, l->ep, l->vp, l->mbs, l->gbs,
			 l->sp ? "on" : "off", recompute_name(l->recompute), l->zero,
			 schedule_name(l->schedule));
	/* The keys with a "not set" value appear only when set. */
	if (l->etp > 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",etp=%d", l->etp);
	if (l->pp_first > 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",pp_first=%d", l->pp_first);
	if (l->pp_last > 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",pp_last=%d", l->pp_last);
	if (l->pp_embed && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",pp_embed=on");
	if (l->pp_loss && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",pp_loss=on");
	if (l->recompute_modules && n > 0 && (size_t)n < len) {
		char mods[128];
		recompute_modules_format(l->recompute_modules, mods, sizeof mods, "+");
		n += snprintf(buf + n, len - (size_t)n, ",recompute_modules=%s", mods);
	}
	if (l->offload_modules && n > 0 && (size_t)n < len) {
		char mods[128];
		offload_modules_format(l->offload_modules, mods, sizeof mods, "+");
		n += snprintf(buf + n, len - (size_t)n, ",offload=%s", mods);
	}
	if (l->recompute_layers > 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",recompute_layers=%d", l->recompute_layers);
	if (l->offload_layers > 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",offload_layers=%d", l->offload_layers);
	if (l->optimizer_offload && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ",optimizer_offload=on");
}

int layout_etp(const struct layout *l)
{
	return l->etp > 0 ? l->etp : l->tp;
}

int layout_recomputed_layers(const struct layout *l, int n)
{
	long r;
	if (l->recompute != RECOMPUTE_FULL || n <= 0)
		return 0;
	if (l->recompute_layers <= 0)
		return n;
	r = (long)l->recompute_layers * (l->vp > 0 ? l->vp : 1);
	return r < n ? (int)r : n;
}

int layout_offloaded_layers(const struct layout *l, int n)
{
	if (l->offload_layers <= 0 || n <= 0)
		return 0;
	return l->offload_layers < n ? l->offload_layers : n;
}

double layout_expert_dp(const struct layout *l)
{
	return (double)l->tp * l->dp * l->cp / ((double)layout_etp(l) * l->ep);
}

/* DeepSpeed's partition_uniform over the layers and two embedding units:
 * every stage gets floor(units/pp), the first units % pp one more; the
 * first and the last stage give one unit to an embedding. */
static int deepspeed_stage_layers(int layers, int pp, int stage)
{
	long units = (long)layers + 2, chunk = units / pp, residual = units % pp;
	long n = chunk + (stage < residual);
	if (stage == 0)
		n--;
	if (stage == pp - 1)
		n--;
	return n > 0 ? (int)n : 0;
}

int layout_edge_split_ok(const struct layout *l, int layers)
{
	long units = (long)layers + (l->pp_embed != 0) + (l->pp_loss != 0);
	long chunks = (long)l->pp * (l->vp > 0 ? l->vp : 1);
	/* A chunk may hold the embedding or the loss alone (Megatron's
	 * layout "E|t|..."), but every stage keeps a transformer layer. */
	return l->pp > 1 && units % chunks == 0 &&
	       units / chunks * (l->vp > 0 ? l->vp : 1) >= 2;
}

int layout_edge_chunk(const struct layout *l, int layers, int v, int *first)
{
	int vp = l->vp > 0 ? l->vp : 1, last = l->pp * vp - 1;
	long per, start, n;
	*first = 0;
	if (!layout_edge_split_ok(l, layers) || v < 0 || v > last)
		return 0;
	per = ((long)layers + (l->pp_embed != 0) + (l->pp_loss != 0)) / ((long)l->pp * vp);
	start = (long)v * per - (v > 0 && l->pp_embed);
	n = per - (v == 0 && l->pp_embed) - (v == last && l->pp_loss);
	*first = (int)start;
	return n > 0 ? (int)n : 0;
}

enum megatron_split layout_split_megatron(struct layout *l, int layers)
{
	l->pp_first = l->pp_last = l->pp_embed = l->pp_loss = 0;
	if (l->pp < 1 || l->vp < 1)
		return SPLIT_NONE;
	if (layers % ((long)l->pp * l->vp) == 0)
		return SPLIT_EVEN;
	l->pp_embed = l->pp_loss = 1;
	if (layout_edge_split_ok(l, layers))
		return SPLIT_EDGES;
	l->pp_embed = l->pp_loss = 0;
	if (layers % l->pp != 0 &&
	    layout_split_uneven(layers, l->pp, l->vp, &l->pp_first, &l->pp_last) == 0)
		return SPLIT_UNEVEN;
	return SPLIT_NONE;
}

int layout_table_ok(const struct layout *l, int layers)
{
	const struct pp_table *t = l->pp_table;
	return t && t->pp == l->pp && t->vp == (l->vp > 0 ? l->vp : 1) && t->layers == layers;
}

int layout_chunk_layers(const struct layout *l, int layers, int v, int *first)
{
	const struct pp_table *t = l->pp_table;
	*first = 0;
	if (!t)
		return layout_edge_chunk(l, layers, v, first);
	if (!layout_table_ok(l, layers) || v < 0 || v >= t->pp * t->vp)
		return 0;
	*first = t->first[v];
	return t->chunk[v];
}

/* A stage's layers under the table or the embedding/loss split: its
 * chunks' sum. */
static int chunked_stage_layers(const struct layout *l, int layers, int stage)
{
	int vp = l->vp > 0 ? l->vp : 1, n = 0, first;
	if (l->pp_table) {
		if (!layout_table_ok(l, layers))
			return 0;
		for (int c = 0; c < vp; c++)
			n += l->pp_table->chunk[c * l->pp + stage];
		return n;
	}
	for (int c = 0; c < vp; c++)
		n += layout_edge_chunk(l, layers, c * l->pp + stage, &first);
	return n;
}

int layout_stage_layers(const struct layout *l, int layers, enum stage_partition part,
			int stage)
{
	int pp = l->pp, edges = 0;
	long rest = layers;
	if (pp <= 1)
		return layers;
	if (l->pp_table || l->pp_embed || l->pp_loss)
		return chunked_stage_layers(l, layers, stage);
	if (part == PART_DEEPSPEED && layers % pp != 0)
		return deepspeed_stage_layers(layers, pp, stage);
	if (l->pp_first <= 0 && l->pp_last <= 0)
		return layers / pp;
	if (stage == 0 && l->pp_first > 0)
		return l->pp_first;
	if (stage == pp - 1 && l->pp_last > 0)
		return l->pp_last;
	if (l->pp_first > 0) {
		rest -= l->pp_first;
		edges++;
	}
	if (l->pp_last > 0) {
		rest -= l->pp_last;
		edges++;
	}
	if (pp == edges || rest <= 0 || rest % (pp - edges) != 0)
		return 0;
	return (int)(rest / (pp - edges));
}

int layout_split_uneven(int layers, int pp, int vp, int *first, int *last)
{
	long mid, rest;
	*first = *last = 0;
	/* pp and vp may come straight from a layout string: their product in
	 * 64 bits (both are ints) */
	if (pp < 2 || vp < 1 || (long)layers < (long)pp * vp)
		return -1;
	/* The middle stages a multiple of vp at or above the mean; the edges
	 * (with the embedding and the LM head) share the rest, the last the
	 * smaller part. */
	mid = ((long)layers + pp - 1) / pp;
	mid = (mid + vp - 1) / vp * vp;
	rest = layers - (pp - 2) * mid;
	*last = (int)(rest / 2 / vp * vp);
	*first = (int)(rest - *last);
	if (*last < vp || *first % vp != 0 || *first > mid + vp) {
		*first = *last = 0;
		return -1;
	}
	return 0;
}

/* With first/last stage counts: do they add up, and do all stages split
 * into vp chunks? */
static enum reject stage_split_reject(const struct layout *l, const struct model_spec *m)
{
	long first = l->pp_first, last = l->pp_last, mid;
	int edges = (first > 0) + (last > 0);
	if (l->pp < 2 || (l->pp == edges && first + last != m->layers))
		return REJECT_STAGE_LAYERS;
	if (first + last >= m->layers && l->pp > edges)
		return REJECT_STAGE_LAYERS;
	mid = l->pp > edges ? (m->layers - first - last) % (l->pp - edges) : 0;
	if (mid != 0)
		return REJECT_STAGE_LAYERS;
	for (int i = 0; i < l->pp; i++) {
		int n = layout_stage_layers(l, m->layers, PART_FIRST_LAST, i);
		if (n <= 0)
			return REJECT_STAGE_LAYERS;
		if (n % l->vp != 0)
			return REJECT_VP_LAYERS;
	}
	return REJECT_NONE;
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

static const char *const reject_keys[REJECT_COUNT] = {
	[REJECT_NONE] = "none",
	[REJECT_DEGREE] = "degree below 1",
	[REJECT_TOO_MANY_GPUS] = "too many GPUs",
	[REJECT_GPU_COUNT] = "degrees do not multiply to the GPU count",
	[REJECT_TP_HEADS] = "tp does not divide heads",
	[REJECT_TP_KV_HEADS] = "tp does not divide kv heads",
	[REJECT_PP_LAYERS] = "pp does not divide layers",
	[REJECT_VP_LAYERS] = "vp does not divide layers per stage",
	[REJECT_VP_NEEDS_PP] = "vp needs pp > 1",
	[REJECT_VP_NEEDS_INTERLEAVED] = "vp needs the interleaved schedule",
	[REJECT_INTERLEAVED_NEEDS_VP] = "interleaved needs vp >= 2",
	[REJECT_SP_NEEDS_TP] = "sp needs tp > 1",
	[REJECT_NO_GBS] = "no global batch",
	[REJECT_DP_GBS] = "dp does not divide the global batch",
	[REJECT_MBS_GBS] = "mbs*dp does not divide gbs",
	[REJECT_INTERLEAVED_MICRO] = "interleaved needs microbatches divisible by pp",
	[REJECT_DUALPIPE] = "dualpipe needs an even pp and an even number of microbatches, at least 2*pp",
	[REJECT_CP_SEQ] = "cp does not divide seq",
	[REJECT_TP_SEQ] = "tp does not divide seq",
	[REJECT_EP_NO_EXPERTS] = "ep needs experts",
	[REJECT_EP_EXPERTS] = "ep does not divide experts",
	[REJECT_EP_DP] = "ep does not divide dp*cp",
	[REJECT_ETP] = "etp does not divide the expert ffn",
	[REJECT_STAGE_LAYERS] = "stage layers do not add up",
	[REJECT_EDGE_SPLIT] = "layers with embedding and loss do not split over pp x vp",
	[REJECT_TABLE_SPLIT] = "pipeline layout does not hold the layers",
	[REJECT_MODULES_SELECTIVE] = "recompute_modules needs recompute=selective",
	[REJECT_ZERO_DP] = "zero needs dp > 1",
	[REJECT_ZERO_PP] = "zero-2/3 with pp",
	[REJECT_OFFLOAD_ZERO] = "optimizer offload needs zero >= 1",
	[REJECT_RECOMPUTE_LAYERS] = "recompute_layers needs recompute=full",
	[REJECT_OFFLOAD_LAYERS] = "offload_layers needs pp=1, no recompute and fewer layers than the model",
	[REJECT_CP_HYBRID] = "cp with Mamba-2 or Gated DeltaNet mixers is not modelled",
	[REJECT_FW_LAYERS] = "framework has no block recompute or layer offloading",
	[REJECT_CP_SHORT] = "cp leaves too few tokens per rank",
	[REJECT_FW_PRECISION] = "framework has no such precision",
	[REJECT_FW_SP] = "framework has no sequence parallelism",
	[REJECT_FW_CP] = "framework has no context parallelism",
	[REJECT_FW_EP] = "framework has no expert parallelism",
	[REJECT_FW_ZERO] = "framework has no such zero stage",
	[REJECT_FW_PIPELINE] = "framework has no pipeline parallelism",
	[REJECT_FW_SCHEDULE] = "framework has no such schedule",
	[REJECT_FW_UNEVEN] = "framework has no uneven stages",
	[REJECT_FW_PP_LAYOUT] = "framework has no pipeline layout string",
	[REJECT_FW_OFFLOAD] = "framework has no optimizer offload",
	[REJECT_PRECISION] = "precision not supported by the GPU",
	[REJECT_BF16_LAYERS] = "bf16 end layers exceed a pipeline stage",
	[REJECT_OOM] = "out of memory",
	[REJECT_HOST_OOM] = "out of host memory",
};

const char *reject_key(enum reject r)
{
	return (r >= 0 && r < REJECT_COUNT && reject_keys[r]) ? reject_keys[r] : "?";
}

void reject_describe(enum reject r, const struct layout *l,
		     const struct model_spec *m, long gpus, char *buf,
		     size_t len)
{
	long micro = layout_microbatches(l);
	switch (r) {
	case REJECT_DEGREE:
		snprintf(buf, len, "tp, pp, dp, cp, ep, vp and mbs must all be at least 1 (got %d, %d, %d, %d, %d, %d, %d)",
			 l->tp, l->pp, l->dp, l->cp, l->ep, l->vp, l->mbs);
		return;
	case REJECT_TOO_MANY_GPUS:
		snprintf(buf, len, "tp*pp*dp*cp = %.0f GPUs is more than %d",
			 (double)l->tp * l->pp * l->dp * l->cp, INT_MAX);
		return;
	default:
		break;
	}
	/* The degrees are at least 1 from here on. */
	switch (r) {
	case REJECT_GPU_COUNT:
		snprintf(buf, len, "tp*pp*dp*cp = %d*%d*%d*%d = %ld, but there are %ld GPUs",
			 l->tp, l->pp, l->dp, l->cp, layout_gpus(l), gpus);
		break;
	case REJECT_TP_HEADS:
		if (m->heads % l->tp == 0 && strchr(m->mixers, 'M'))
			snprintf(buf, len, "tp=%d does not divide the %ld Mamba-2 heads and %ld groups of %s",
				 l->tp, m->mamba_heads, m->mamba_groups, m->name);
		else if (m->heads % l->tp == 0)
			snprintf(buf, len, "tp=%d does not divide the %ld key and %ld value heads of %s's Gated DeltaNet",
				 l->tp, m->gdn_k_heads, m->gdn_v_heads, m->name);
		else
			snprintf(buf, len, "tp=%d does not divide the %d attention heads of %s",
				 l->tp, m->heads, m->name);
		break;
	case REJECT_TP_KV_HEADS:
		snprintf(buf, len, "tp=%d and the %d key/value heads of %s do not divide one another",
			 l->tp, m->kv_heads, m->name);
		break;
	case REJECT_PP_LAYERS: {
		struct layout split = *l;
		enum megatron_split how = layout_split_megatron(&split, m->layers);
		const struct pp_table *t = pp_table_balanced(m->layers, l->pp, l->vp);
		if (how == SPLIT_EDGES)
			snprintf(buf, len, "pp=%d does not divide the %d layers of %s; add pp_embed=on,pp_loss=on to count the embedding and the loss as layers of the split (%d units, Megatron's --account-for-embedding/loss-in-pipeline-split)",
				 l->pp, m->layers, m->name, m->layers + 2);
		else if (how == SPLIT_UNEVEN)
			snprintf(buf, len, "pp=%d does not divide the %d layers of %s; for Megatron's uneven stages add pp_first=%d,pp_last=%d to the layout",
				 l->pp, m->layers, m->name, split.pp_first, split.pp_last);
		else if (t)
			snprintf(buf, len, "pp=%d does not divide the %d layers of %s; Megatron-Core 0.13 and later split them with a pipeline layout string: '%s' is balanced",
				 l->pp, m->layers, m->name, t->text);
		else
			snprintf(buf, len, "pp=%d does not divide the %d layers of %s", l->pp,
				 m->layers, m->name);
		break;
	}
	case REJECT_VP_LAYERS: {
		struct layout split = *l;
		const struct pp_table *t = pp_table_balanced(m->layers, l->pp, l->vp);
		if (layout_split_megatron(&split, m->layers) == SPLIT_EDGES)
			snprintf(buf, len, "vp=%d does not divide the %d layers per pipeline stage; add pp_embed=on,pp_loss=on to count the embedding and the loss as layers of the split (%d units over %ld chunks, Megatron's --account-for-embedding/loss-in-pipeline-split)",
				 l->vp, m->layers / (l->pp > 0 ? l->pp : 1), m->layers + 2, (long)l->pp * l->vp);
		else if (t)
			snprintf(buf, len, "vp=%d does not divide the %d layers per pipeline stage; Megatron-Core 0.13 and later split them with a pipeline layout string: '%s' is balanced",
				 l->vp, m->layers / (l->pp > 0 ? l->pp : 1), t->text);
		else
			snprintf(buf, len, "vp=%d does not divide the %d layers per pipeline stage",
				 l->vp, m->layers / (l->pp > 0 ? l->pp : 1));
		break;
	}
	case REJECT_VP_NEEDS_PP:
		snprintf(buf, len, "vp=%d needs a pipeline (pp > 1)", l->vp);
		break;
	case REJECT_VP_NEEDS_INTERLEAVED:
		snprintf(buf, len, "vp=%d needs schedule=interleaved, not %s", l->vp,
			 schedule_name(l->schedule));
		break;
	case REJECT_INTERLEAVED_NEEDS_VP:
		snprintf(buf, len, "schedule=interleaved needs vp >= 2 model chunks per pipeline rank");
		break;
	case REJECT_SP_NEEDS_TP:
		snprintf(buf, len, "sp=on needs tp > 1");
		break;
	case REJECT_NO_GBS:
		snprintf(buf, len, "the global batch size (gbs) is not set");
		break;
	case REJECT_DP_GBS:
		if (l->gbs < l->dp)
			snprintf(buf, len, "dp=%d needs a global batch of at least %d sequences (one per data-parallel rank), but it is %ld",
				 l->dp, l->dp, l->gbs);
		else
			snprintf(buf, len, "dp=%d does not divide the global batch of %ld sequences",
				 l->dp, l->gbs);
		break;
	case REJECT_MBS_GBS:
		snprintf(buf, len, "gbs=%ld is not a multiple of mbs*dp = %d*%d", l->gbs,
			 l->mbs, l->dp);
		break;
	case REJECT_INTERLEAVED_MICRO:
		snprintf(buf, len, "interleaved 1F1B needs the %ld microbatches to be a multiple of pp=%d",
			 micro, l->pp);
		break;
	case REJECT_DUALPIPE:
		if (l->pp % 2 != 0)
			snprintf(buf, len, "schedule=dualpipe needs an even pp (the ranks pair up, stage i with stage pp-1-i), got pp=%d",
				 l->pp);
		else
			snprintf(buf, len, "schedule=dualpipe needs an even number of microbatches, at least 2*pp = %d (half enter from each end), got %ld",
				 2 * l->pp, micro);
		break;
	case REJECT_CP_SEQ:
		snprintf(buf, len, "cp=%d: the sequence length %ld is not a multiple of 2*cp",
			 l->cp, m->seq);
		break;
	case REJECT_TP_SEQ:
		snprintf(buf, len, "sp=on: the sequence length per cp rank (%ld) is not a multiple of tp=%d",
			 m->seq / (l->cp > 0 ? l->cp : 1), l->tp);
		break;
	case REJECT_EP_NO_EXPERTS:
		snprintf(buf, len, "ep=%d but %s has no experts", l->ep, m->name);
		break;
	case REJECT_EP_EXPERTS:
		snprintf(buf, len, "ep=%d does not divide the %d experts", l->ep,
			 m->num_experts);
		break;
	case REJECT_EP_DP:
		if (l->etp > 0 && l->etp != l->tp)
			snprintf(buf, len, "ep*etp = %d*%d must divide tp*dp*cp = %ld", l->ep, l->etp,
				 (long)l->tp * l->dp * l->cp);
		else if (l->tp > 1 && ((long)l->tp * l->dp * l->cp) % l->ep == 0)
			snprintf(buf, len, "ep=%d must divide dp*cp = %d while the experts split over tp too (etp = tp = %d); with etp=1 they fold into tp*dp*cp = %ld (Megatron-Core's MoE parallel folding)",
				 l->ep, l->dp * l->cp, l->tp, (long)l->tp * l->dp * l->cp);
		else
			snprintf(buf, len, "ep=%d must divide dp*cp = %d", l->ep, l->dp * l->cp);
		break;
	case REJECT_ETP:
		snprintf(buf, len, "etp=%d does not divide the expert MLP width %ld of %s",
			 layout_etp(l), model_expert_ffn(m), m->name);
		break;
	case REJECT_STAGE_LAYERS:
		snprintf(buf, len, "pp_first=%d and pp_last=%d leave %ld of the %d layers of %s, which do not split evenly over the other %d stages",
			 l->pp_first, l->pp_last, (long)m->layers - l->pp_first - l->pp_last,
			 m->layers, m->name,
			 l->pp - (l->pp_first > 0) - (l->pp_last > 0));
		break;
	case REJECT_EDGE_SPLIT:
		if (l->pp_first > 0 || l->pp_last > 0)
			snprintf(buf, len, "pp_embed/pp_loss split the stages evenly; they do not combine with pp_first/pp_last");
		else if (l->pp < 2)
			snprintf(buf, len, "pp_embed/pp_loss count the embedding and the loss in the pipeline split, which needs pp > 1");
		else
			snprintf(buf, len, "the %d layers of %s%s%s = %d units do not split into pp x vp = %d equal chunks",
				 m->layers, m->name, l->pp_embed ? " + the embedding" : "",
				 l->pp_loss ? " + the loss" : "",
				 m->layers + (l->pp_embed != 0) + (l->pp_loss != 0), l->pp * l->vp);
		break;
	case REJECT_TABLE_SPLIT:
		if (l->pp_first > 0 || l->pp_last > 0 || l->pp_embed || l->pp_loss)
			snprintf(buf, len, "a pipeline layout string is the whole split; it does not combine with pp_first, pp_last, pp_embed or pp_loss");
		else
			snprintf(buf, len, "the pipeline layout '%s' is %d x %d stages of %d layers, not pp=%d x vp=%d of the %d layers of %s",
				 l->pp_table->text, l->pp_table->pp, l->pp_table->vp, l->pp_table->layers,
				 l->pp, l->vp, m->layers, m->name);
		break;
	case REJECT_FW_PP_LAYOUT:
		snprintf(buf, len, "the framework takes no pipeline layout string (Megatron-Core 0.13 and later and Megatron-Bridge do: --pipeline-model-parallel-layout)");
		break;
	case REJECT_MODULES_SELECTIVE:
		snprintf(buf, len, "recompute_modules names what recompute=selective recomputes; the layout has recompute=%s",
			 recompute_name(l->recompute));
		break;
	case REJECT_ZERO_DP:
		snprintf(buf, len, "zero=%d shards over data-parallel ranks, but dp*cp = 1",
			 l->zero);
		break;
	case REJECT_OFFLOAD_ZERO:
		snprintf(buf, len, "optimizer_offload=on moves each data-parallel rank's optimizer shard to host memory: it needs zero >= 1 (the distributed optimizer), not zero=%d",
			 l->zero);
		break;
	case REJECT_RECOMPUTE_LAYERS:
		snprintf(buf, len, "recompute_layers=%d names how many layers of each chunk recompute=full recomputes (Megatron's block method); the layout has recompute=%s",
			 l->recompute_layers, recompute_name(l->recompute));
		break;
	case REJECT_OFFLOAD_LAYERS:
		if (l->pp > 1)
			snprintf(buf, len, "offload_layers=%d (activation CPU offloading) runs without pipeline parallelism, not with pp=%d (Megatron-Core has no such combination)",
				 l->offload_layers, l->pp);
		else if (l->recompute != RECOMPUTE_NONE)
			snprintf(buf, len, "offload_layers=%d (activation CPU offloading) does not combine with recompute=%s (Megatron-Core refuses both at once)",
				 l->offload_layers, recompute_name(l->recompute));
		else if (l->offload_modules)
			snprintf(buf, len, "offload_layers=%d (whole layers) and offload= (modules) are two kinds of activation offloading; Megatron-Core takes one",
				 l->offload_layers);
		else
			snprintf(buf, len, "offload_layers=%d must be fewer than the %d layers of %s",
				 l->offload_layers, m->layers, m->name);
		break;
	case REJECT_CP_HYBRID:
		snprintf(buf, len, "cp=%d: %s's Mamba-2 or Gated DeltaNet mixers scan the whole sequence, and their state across context-parallel ranks is not modelled",
			 l->cp, m->name);
		break;
	case REJECT_FW_LAYERS:
		snprintf(buf, len, "the framework has no %s (Megatron-LM 2022 and later, Megatron-Core, NeMo and Megatron-Bridge recompute a block of N layers; Megatron-Core 0.4 and later, NeMo and Megatron-Bridge offload N layers' activations)",
			 l->recompute_layers > 0 ? "block recomputation of N layers (recompute_layers)"
						 : "activation CPU offloading of whole layers (offload_layers)");
		break;
	case REJECT_FW_OFFLOAD:
		snprintf(buf, len, "the framework has no optimizer CPU offload with zero=%d (Megatron-Core 0.10+ and Megatron-Bridge offload the distributed optimizer, zero=1; DeepSpeed's ZeRO-Offload zero 1-3)",
			 l->zero);
		break;
	case REJECT_ZERO_PP:
		snprintf(buf, len, "zero=%d (sharded gradients) does not combine with pipeline parallelism (pp=%d) in this framework",
			 l->zero, l->pp);
		break;
	case REJECT_FW_SCHEDULE:
		snprintf(buf, len, "the framework has no %s pipeline schedule",
			 schedule_name(l->schedule));
		break;
	case REJECT_FW_ZERO:
		if (l->zero == 1) /* every row has zero 1 but PyTorch FSDP's */
			snprintf(buf, len, "the framework has no zero=1 sharding (PyTorch FSDP shards the gradients with the optimizer states: zero=2 or 3)");
		else if (l->zero == 0)
			snprintf(buf, len, "the framework runs replicated data parallelism (zero=0, DDP) only on its own, without tp, pp, cp or ep: shard with zero=2 or 3");
		else
			snprintf(buf, len, "the framework has no zero=%d sharding", l->zero);
		break;
	case REJECT_CP_SHORT:
		snprintf(buf, len, "cp=%d leaves %ld tokens per rank of the %ld-token sequence, too few for ring attention to hide its transfers",
			 l->cp, m->seq / (l->cp > 0 ? l->cp : 1), m->seq);
		break;
	default:
		snprintf(buf, len, "%s", reject_key(r));
		break;
	}
}

/* The first reason l fails, REJECT_NONE if none. */
static enum reject first_reject(const struct layout *l,
				const struct model_spec *m, long gpus,
				enum stage_partition part)
{
	/* Layouts from strings and files are bounded where they are read;
	 * this keeps every division below well defined whatever the caller. */
	if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->ep < 1 ||
	    l->vp < 1 || l->mbs < 1 || l->etp < 0 || l->pp_first < 0 || l->pp_last < 0)
		return REJECT_DEGREE;
	if ((double)l->tp * l->pp * l->dp * l->cp > INT_MAX)
		return REJECT_TOO_MANY_GPUS;
	if (gpus > 0 && layout_gpus(l) != gpus)
		return REJECT_GPU_COUNT;
	if (m->heads % l->tp != 0)
		return REJECT_TP_HEADS;
	/* Mamba-2 and Gated DeltaNet split over TP by heads (and B/C groups) */
	if ((strchr(m->mixers, 'M') && (m->mamba_heads % l->tp || m->mamba_groups % l->tp)) ||
	    (strchr(m->mixers, 'G') && (m->gdn_k_heads % l->tp || m->gdn_v_heads % l->tp)))
		return REJECT_TP_HEADS;
	if (m->kv_heads % l->tp != 0 && l->tp % m->kv_heads != 0)
		return REJECT_TP_KV_HEADS;
	if (l->pp_table) {
		if (l->pp_first > 0 || l->pp_last > 0 || l->pp_embed || l->pp_loss ||
		    !layout_table_ok(l, m->layers))
			return REJECT_TABLE_SPLIT;
	} else if (l->pp_embed || l->pp_loss) {
		if (l->pp_first > 0 || l->pp_last > 0 || !layout_edge_split_ok(l, m->layers))
			return REJECT_EDGE_SPLIT;
	} else if (l->pp_first > 0 || l->pp_last > 0) {
		enum reject r = stage_split_reject(l, m);
		if (r != REJECT_NONE)
			return r;
	} else if (m->layers % l->pp != 0 && part != PART_DEEPSPEED) {
		return REJECT_PP_LAYERS;
	} else if (m->layers % l->pp == 0 && m->layers % ((long)l->pp * l->vp) != 0) {
		return REJECT_VP_LAYERS;
	}
	if (l->vp > 1 && l->pp == 1)
		return REJECT_VP_NEEDS_PP;
	if (l->vp > 1 && l->schedule != SCHED_INTERLEAVED)
		return REJECT_VP_NEEDS_INTERLEAVED;
	if (l->schedule == SCHED_INTERLEAVED && l->vp < 2)
		return REJECT_INTERLEAVED_NEEDS_VP;
	if (l->sp && l->tp == 1)
		return REJECT_SP_NEEDS_TP;
	if (l->recompute_modules && l->recompute != RECOMPUTE_SELECTIVE)
		return REJECT_MODULES_SELECTIVE;
	if (l->recompute_layers < 0 || (l->recompute_layers > 0 && l->recompute != RECOMPUTE_FULL))
		return REJECT_RECOMPUTE_LAYERS;
	if (l->offload_layers < 0 ||
	    (l->offload_layers > 0 && (l->pp > 1 || l->recompute != RECOMPUTE_NONE ||
				       l->offload_modules || l->offload_layers >= m->layers)))
		return REJECT_OFFLOAD_LAYERS;
	if (l->gbs <= 0)
		return REJECT_NO_GBS;
	if (l->gbs % l->dp != 0)
		return REJECT_DP_GBS;
	if (l->gbs % ((long)l->mbs * l->dp) != 0)
		return REJECT_MBS_GBS;
	if (l->schedule == SCHED_INTERLEAVED && layout_microbatches(l) % l->pp != 0)
		return REJECT_INTERLEAVED_MICRO;
	/* DeepSeek's DualPipe step(): an even number of ranks, the
	 * microbatches even and at least twice the ranks. */
	if (l->schedule == SCHED_DUALPIPE &&
	    (l->pp % 2 != 0 || layout_microbatches(l) % 2 != 0 ||
	     layout_microbatches(l) < 2L * l->pp))
		return REJECT_DUALPIPE;
	if (l->cp > 1 && m->seq % (2L * l->cp) != 0)
		return REJECT_CP_SEQ;
	if (l->cp > 1 && (strchr(m->mixers, 'M') || strchr(m->mixers, 'G')))
		return REJECT_CP_HYBRID;
	if (l->sp && (m->seq / l->cp) % l->tp != 0)
		return REJECT_TP_SEQ;
	if (l->ep > 1 && m->num_experts < 2)
		return REJECT_EP_NO_EXPERTS;
	if (m->num_experts > 1) {
		if (m->num_experts % l->ep != 0)
			return REJECT_EP_EXPERTS;
		if (((long)l->tp * l->dp * l->cp) % ((long)layout_etp(l) * l->ep) != 0)
			return REJECT_EP_DP;
		if (model_expert_ffn(m) % layout_etp(l) != 0)
			return REJECT_ETP;
	}
	if (l->zero > 0 && l->dp * l->cp == 1)
		return REJECT_ZERO_DP;
	if (l->optimizer_offload && l->zero < 1)
		return REJECT_OFFLOAD_ZERO;
	return REJECT_NONE;
}

enum pplan_status layout_check(const struct layout *l,
			       const struct model_spec *m, long gpus,
			       enum reject *why, struct perr *e)
{
	return layout_check_part(l, m, gpus, PART_FIRST_LAST, why, e);
}

enum pplan_status layout_check_part(const struct layout *l,
				    const struct model_spec *m, long gpus,
				    enum stage_partition part,
				    enum reject *why, struct perr *e)
{
	enum reject r = first_reject(l, m, gpus, part);
	char msg[256];

	if (why)
		*why = r;
	if (r == REJECT_NONE)
		return PPLAN_OK;
	reject_describe(r, l, m, gpus, msg, sizeof msg);
	return perr_set(e, PPLAN_EINPUT, "%s", msg);
}
