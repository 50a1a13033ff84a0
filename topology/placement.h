/*
 * placement.h: where ranks sit and which link a process group uses.
 *
 * Ranks fill nodes in order (rank = node * gpus_per_node + local GPU),
 * as mpirun/srun place them by default.  Which ranks form a group is the
 * rank map's business (sim/layout.h: tp innermost, then cp, dp, pp, or
 * another order); topology only sees the result, as a (size, stride)
 * pair (cluster_group_link in cluster.h) or as a plain list of ranks
 * (here).  Dependencies point topology <- sim, so nothing here includes
 * a sim header.
 */
#ifndef PPLAN_PLACEMENT_H
#define PPLAN_PLACEMENT_H

#include "cluster.h"

struct rank_place {
	int node;      /* node index */
	int gpu;       /* GPU index inside the node */
	int domain;    /* NVLink domain index (a node, or an NVL72 rack) */
};

/* Where rank r runs. */
void placement_rank(const struct cluster *cluster, long rank, struct rank_place *out);

struct group_link {
	struct link link;   /* class, bandwidth (GB/s per GPU), latency, eff */
	int nodes;          /* distinct nodes the group spans */
	int domains;        /* distinct NVLink domains it spans */
	int min_per_domain; /* fewest members in one domain: they share its NICs */
	int rail_aligned;   /* cross-node hops stay on one rail: every node holds
			     * the same local GPU indices and the cluster's NICs
			     * are rail-aligned (1 also when inside one domain) */
};

/* The link the group of n ranks `ranks` (distinct, any order) uses for a
 * ring collective, under the same rules as cluster_group_link: inside one
 * NVLink domain the domain's NVSwitch, NVLink rings (link matrix) or PCIe;
 * across domains the NICs, k x the per-GPU NIC share for k members per
 * domain, capped by the in-domain rate.  n <= 0 or a rank outside the
 * cluster gives PPLAN_EINPUT. */
enum pplan_status placement_group_link(const struct cluster *cluster,
				       const long *ranks, int n,
				       struct group_link *out, struct perr *err);

/* The ranks of group `index` of the (size, stride) dimension under the
 * default placement: groups tile blocks of size * stride ranks, and inside
 * a block group o holds o, o + stride, ... (the Megatron-LM convention).
 * out receives size ranks. */
void placement_group_ranks(int size, int stride, long index, long *out);

#endif
