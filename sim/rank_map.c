/*
 * rank_map.c: the one rank map (layout.h): a rank's (tp, cp, dp, pp)
 * coordinates under a rank order, innermost first (Megatron-LM's default
 * tp-cp-dp-pp: tensor-parallel ranks adjacent, on one node's NVLink), and
 * back; the order's parser and its text.  The executor builds its
 * process groups from it, the simulator its placement.
 */
#include "layout.h"

#include <stdio.h>
#include <string.h>

void rank_order_default(struct rank_order *o)
{
	o->inner_to_outer[0] = DIM_TP;
	o->inner_to_outer[1] = DIM_CP;
	o->inner_to_outer[2] = DIM_DP;
	o->inner_to_outer[3] = DIM_PP;
}

static const char *const dim_names[DIM_COUNT] = { "tp", "cp", "dp", "pp" };

void rank_order_format(const struct rank_order *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%s-%s-%s", dim_names[o->inner_to_outer[0]],
		 dim_names[o->inner_to_outer[1]], dim_names[o->inner_to_outer[2]],
		 dim_names[o->inner_to_outer[3]]);
}

int rank_order_eq(const struct rank_order *a, const struct rank_order *b)
{
	for (int i = 0; i < DIM_COUNT; i++)
		if (a->inner_to_outer[i] != b->inner_to_outer[i])
			return 0;
	return 1;
}

enum pplan_status rank_order_parse(const char *s, struct rank_order *o,
				   struct perr *e)
{
	const char *const *names = dim_names;
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
