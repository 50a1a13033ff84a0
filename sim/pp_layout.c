/*
 * pp_layout.c: Megatron-Core's --pipeline-model-parallel-layout
 * (layout.h): the string unrolled and split as
 * megatron/core/transformer/pipeline_parallel_layer_layout.py does, and
 * the split of pplan's layout that puts every virtual stage's layers
 * where the string does.
 */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Megatron's unrolling of a layout string (parse_str_to_list): commas
 * dropped, then each "(X)*n" (X without ')') and each "x*n" written out n
 * times.  -1 when it would pass `len`. */
static int unroll_pp_layout(const char *s, char *out, size_t len)
{
	char a[PP_LAYOUT_MAX], b[PP_LAYOUT_MAX];
	size_t n = 0;
	for (; *s; s++)
		if (*s != ',' && *s != ' ') {
			if (n + 1 >= sizeof a)
				return -1;
			a[n++] = *s;
		}
	a[n] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		const char *src = pass ? b : a;
		char *dst = pass ? out : b;
		size_t cap = pass ? len : sizeof b, o = 0;
		for (const char *p = src; *p;) {
			const char *body = p, *end = p + 1, *star;
			char *digits;
			long times;
			if (pass == 0 && *p == '(' && (end = strchr(p + 1, ')')) && end[1] == '*' &&
			    !memchr(p + 1, '(', (size_t)(end - p - 1)) && end > p + 1)
				body = p + 1, star = end + 1;
			else if (pass == 1 && p[1] == '*')
				end = p + 1, star = p + 1;
			else
				star = NULL;
			if (star && star[1] >= '0' && star[1] <= '9') {
				times = strtol(star + 1, &digits, 10);
				for (long t = 0; t < times; t++)
					for (const char *c = body; c < end; c++) {
						if (o + 1 >= cap)
							return -1;
						dst[o++] = *c;
					}
				p = digits;
				continue;
			}
			if (o + 1 >= cap)
				return -1;
			dst[o++] = *p++;
		}
		dst[o] = '\0';
	}
	return 0;
}

/* layout_pp_layout, with each virtual stage's transformer layers in
 * stage_layers[PP_LAYOUT_MAX] (at most one stage a character) and its
 * MTP layers in stage_mtp (NULL: not wanted). */
static int read_pp_layout(const char *s, int pp, struct pp_layout *out, int *stage_layers,
			  int *stage_mtp, char *why, size_t len)
{
	char u[PP_LAYOUT_MAX];
	int stages = 1, rank_layers[LAYOUT_PP_LAYOUT_RANKS] = { 0 };
	int stage = 0, embeds = 0, losses = 0;

	memset(out, 0, sizeof *out);
	if (pp < 1 || pp > LAYOUT_PP_LAYOUT_RANKS)
		return snprintf(why, len, "pplan reads a layout string for at most %d pipeline ranks, not %d",
				LAYOUT_PP_LAYOUT_RANKS, pp), -1;
	if (unroll_pp_layout(s, u, sizeof u) != 0)
		return snprintf(why, len, "'%s' unrolls to more than %d characters", s,
				PP_LAYOUT_MAX - 1), -1;
	for (const char *c = u; *c; c++)
		stages += *c == '|';
	if (stages % pp != 0)
		return snprintf(why, len, "'%s' has %d stages, not a multiple of pp=%d", s, stages, pp), -1;
	out->vp = stages / pp;
	memset(stage_layers, 0, sizeof stage_layers[0] * (size_t)stages);
	if (stage_mtp)
		memset(stage_mtp, 0, sizeof stage_mtp[0] * (size_t)stages);
	for (const char *c = u; *c; c++) {
		int first = c == u, last = c[1] == '\0';
		switch (*c) {
		case '|': stage++; break;
		case 't': rank_layers[stage % pp]++; stage_layers[stage]++; out->layers++; break;
		case 'm':
			out->mtp++;
			if (stage_mtp)
				stage_mtp[stage]++;
			break;
		case 'E':
			if (!first)
				return snprintf(why, len, "'%s': E (the embedding) must come first", s), -1;
			embeds++;
			break;
		case 'L':
			if (!last)
				return snprintf(why, len, "'%s': L (the loss) must come last", s), -1;
			losses++;
			break;
		default:
			return snprintf(why, len, "'%s': '%c' is not a layer (E, t, m, L; | between stages, (..)*n and x*n repeat)",
					s, *c), -1;
		}
	}
	if (embeds != 1 || losses != 1)
		return snprintf(why, len, "'%s' must start with E (the embedding) and end with L (the loss)", s), -1;
	out->first = rank_layers[0];
	out->last = rank_layers[pp - 1];
	out->mid = pp > 2 ? rank_layers[1] : 0;
	/* middle ranks of other sizes, or a rank's chunks unlike: only a
	 * table of the chunks (pp_table) prices that split */
	for (int r = 1; r < pp - 1; r++)
		if (rank_layers[r] != out->mid)
			out->uneven_chunks = 1;
	for (int v = 0; v < stages; v++)
		if (stage_layers[v] * out->vp != rank_layers[v % pp])
			out->uneven_chunks = 1;
	return 0;
}

int layout_pp_layout(const char *s, int pp, struct pp_layout *out, char *why, size_t len)
{
	int stage_layers[PP_LAYOUT_MAX];
	return read_pp_layout(s, pp, out, stage_layers, NULL, why, len);
}

/* Whether every virtual stage of l (its edge split of `units` layers)
 * holds the layers the string gives it; `mtp` counts the stages' MTP
 * layers as layers too (NULL: not). */
static int edge_split_matches(const struct layout *l, int units, const int *stage_layers,
			      const int *mtp)
{
	int first, chunks = l->pp * l->vp;
	if (!layout_edge_split_ok(l, units))
		return 0;
	for (int v = 0; v < chunks; v++)
		if (layout_edge_chunk(l, units, v, &first) != stage_layers[v] + (mtp ? mtp[v] : 0))
			return 0;
	return 1;
}

int layout_apply_pp_layout(const char *s, int layers, struct layout *l, struct pp_layout *out,
			   char *why, size_t len)
{
	int stage_layers[PP_LAYOUT_MAX], stage_mtp[PP_LAYOUT_MAX], chunks;
	struct layout edge;

	if (read_pp_layout(s, l->pp, out, stage_layers, stage_mtp, why, len) != 0)
		return -1;
	if (out->layers != layers)
		return snprintf(why, len, "'%s' places %d transformer layers, the model has %d", s,
				out->layers, layers), -1;
	chunks = l->pp * out->vp;
	l->vp = out->vp;
	l->pp_first = l->pp_last = l->pp_embed = l->pp_loss = 0;
	/* Megatron's even split, or the embedding and the loss counted as
	 * layers of it: every chunk as pplan splits it */
	edge = *l;
	edge.pp_embed = edge.pp_loss = 1;
	if (layers % chunks == 0) {
		int v = 0;
		while (v < chunks && layers / chunks == stage_layers[v])
			v++;
		if (v == chunks)
			return 0;
	}
	if (edge_split_matches(&edge, layers, stage_layers, NULL)) {
		*l = edge;
		return 0;
	}
	/* MTP layers where the loss is (DeepSeek-V3's "Et|(tt|)*30mL"):
	 * counted as layers of the edge split, the model's layers and its
	 * MTP layers then fill every chunk as the string does; the caller
	 * prices them as layers (out->mtp_as_layers) */
	if (out->mtp > 0 && edge_split_matches(&edge, layers + out->mtp, stage_layers, stage_mtp)) {
		*l = edge;
		out->mtp_as_layers = 1;
		return 0;
	}
	/* uneven first and last stages, each stage's chunks alike */
	if (!out->uneven_chunks && l->pp > 1) {
		if (l->pp == 2 || out->first != out->mid)
			l->pp_first = out->first;
		if (l->pp > 2 && out->last != out->mid)
			l->pp_last = out->last;
		return 0;
	}
	/* any other shape: the chunks as the string gives them, its MTP
	 * layers counted with them as layers of the model */
	if (chunks > PP_TABLE_MAX_CHUNKS)
		return snprintf(why, len, "'%s' has %d stages; pplan prices a free-form split of at most %d",
				s, chunks, PP_TABLE_MAX_CHUNKS), -1;
	for (int v = 0; v < chunks; v++)
		stage_layers[v] += stage_mtp[v];
	l->pp_table = pp_table_intern(l->pp, out->vp, stage_layers);
	if (!l->pp_table)
		return snprintf(why, len, "'%s': out of memory", s), -1;
	out->mtp_as_layers = out->mtp > 0;
	return 0;
}

/* ---- free-form splits ----------------------------------------------------- */

struct table_node {
	struct pp_table t;
	struct table_node *next;
};
static struct table_node *interned;

/* One chunk's body: "", "t", "tt" or "t*n". */
static int put_body(char *buf, size_t len, size_t *o, int n)
{
	int w = n == 0 ? 0 : n <= 2 ? snprintf(buf + *o, len - *o, "%s", n == 1 ? "t" : "tt")
				    : snprintf(buf + *o, len - *o, "t*%d", n);
	if (w < 0 || (size_t)w >= len - *o)
		return -1;
	*o += (size_t)w;
	return 0;
}

static int put_text(char *buf, size_t len, size_t *o, const char *s)
{
	int w = snprintf(buf + *o, len - *o, "%s", s);
	if (w < 0 || (size_t)w >= len - *o)
		return -1;
	*o += (size_t)w;
	return 0;
}

int pp_table_format(int pp, int vp, const int *chunk, char *buf, size_t len)
{
	int n;
	size_t o = 0;
	if (len == 0 || pp < 1 || vp < 1 || (long)pp * vp > PP_TABLE_MAX_CHUNKS)
		return -1;
	n = pp * vp;
	buf[0] = '\0';
	if (put_text(buf, len, &o, "E") || put_body(buf, len, &o, chunk[0]))
		return -1;
	for (int v = 1; v < n;) {
		int run = 1;
		/* a run of like chunks short of the last (which holds L) */
		while (v + run < n - 1 && chunk[v + run] == chunk[v])
			run++;
		if (v == n - 1)
			run = 1;
		if (run >= 2) { /* "(|t*4)*14" */
			char num[16];
			snprintf(num, sizeof num, ")*%d", run);
			if (put_text(buf, len, &o, "(|") || put_body(buf, len, &o, chunk[v]) ||
			    put_text(buf, len, &o, num))
				return -1;
			v += run;
			continue;
		}
		if (put_text(buf, len, &o, "|") || put_body(buf, len, &o, chunk[v]))
			return -1;
		v++;
	}
	return put_text(buf, len, &o, "L");
}

const struct pp_table *pp_table_intern(int pp, int vp, const int *chunk)
{
	int n;
	long layers = 0;
	char text[PP_LAYOUT_MAX];
	struct table_node *node;
	int *copy, *first;
	char *t;

	if (pp < 1 || vp < 1 || (long)pp * vp > PP_TABLE_MAX_CHUNKS)
		return NULL;
	n = pp * vp;
	for (int v = 0; v < n; v++) {
		if (chunk[v] < 0)
			return NULL;
		layers += chunk[v];
	}
	if (layers > 1000000)
		return NULL;
	for (node = interned; node; node = node->next)
		if (node->t.pp == pp && node->t.vp == vp &&
		    memcmp(node->t.chunk, chunk, sizeof *chunk * (size_t)n) == 0)
			return &node->t;
	if (pp_table_format(pp, vp, chunk, text, sizeof text) != 0)
		return NULL;
	node = calloc(1, sizeof *node);
	copy = malloc(sizeof *copy * (size_t)n);
	first = malloc(sizeof *first * (size_t)n);
	t = malloc(strlen(text) + 1);
	if (!node || !copy || !first || !t) {
		free(node);
		free(copy);
		free(first);
		free(t);
		return NULL;
	}
	memcpy(copy, chunk, sizeof *copy * (size_t)n);
	for (int v = 0, sum = 0; v < n; sum += chunk[v], v++)
		first[v] = sum;
	strcpy(t, text);
	node->t.pp = pp;
	node->t.vp = vp;
	node->t.layers = (int)layers;
	node->t.chunk = copy;
	node->t.first = first;
	node->t.text = t;
	node->next = interned;
	interned = node;
	return &node->t;
}

const struct pp_table *pp_table_balanced(int layers, int pp, int vp)
{
	int n, chunk[PP_TABLE_MAX_CHUNKS], rank_units[LAYOUT_PP_LAYOUT_RANKS] = { 0 };
	long units = (long)layers + 2, q, r;

	/* pp and vp as a layout string or a file gives them: their product
	 * in 64 bits before it is an int */
	if (pp < 2 || vp < 1 || (long)pp * vp > PP_TABLE_MAX_CHUNKS || pp > LAYOUT_PP_LAYOUT_RANKS ||
	    layers < 1)
		return NULL;
	n = pp * vp;
	q = units / n;
	r = units % n;
	for (int v = 0; v < n; v++)
		chunk[v] = (int)q;
	/* the r extra units: one to each rank in turn from rank 1, chunk 0
	 * of it first; so ranks differ by at most one unit */
	for (long k = 0; k < r; k++) {
		int rank = (int)((k + 1) % pp), c = (int)(k / pp);
		chunk[c * pp + rank]++;
	}
	chunk[0]--;     /* the embedding's unit */
	chunk[n - 1]--; /* the loss's */
	for (int v = 0; v < n; v++) {
		if (chunk[v] < 0)
			return NULL;
		rank_units[v % pp] += chunk[v];
	}
	for (int i = 0; i < pp; i++)
		if (rank_units[i] < 1)
			return NULL;
	return pp_table_intern(pp, vp, chunk);
}
