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
	for (int r = 1; r < pp - 1; r++)
		if (rank_layers[r] != out->mid)
			return snprintf(why, len, "'%s' puts %d layers on pipeline rank 1 and %d on rank %d: pplan prices stages other than the first and last alike",
					s, out->mid, rank_layers[r], r), -1;
	/* the chunks of a rank alike too, else pplan's even split within it differs */
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
	return snprintf(why, len, "'%s' gives a pipeline rank's %d virtual stages different layer counts (%d and %d on rank 0), which pplan prices only as the embedding and the loss counted as layers of an even split (pp_embed, pp_loss)",
			s, out->vp, stage_layers[0], stage_layers[l->pp]), -1;
}
