/*
 * placement.c: ranks onto (node, GPU), the link of an arbitrary process
 * group, and the NVLink ring bandwidth of GPUs on a link-matrix node
 * (cluster_ring_gbps, which cluster_group_link uses).  The pricing matches cluster_group_link (cluster.c):
 * tests check that the two agree on every (size, stride) group.
 */
#include "placement.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void placement_rank(const struct cluster *c, long rank, struct rank_place *out)
{
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	int dom = c->nvlink_domain > 0 ? c->nvlink_domain : gpn;
	out->node = (int)(rank / gpn);
	out->gpu = (int)(rank % gpn);
	out->domain = (int)(rank / dom);
}

void placement_group_ranks(int size, int stride, long index, long *out)
{
	long per_block = stride; /* groups per block of size * stride ranks */
	long block = index / per_block, o = index % per_block;
	for (int k = 0; k < size; k++)
		out[k] = block * (long)size * stride + o + (long)k * stride;
}

/* ---- NVLink rings over a link matrix (NCCL's ring search, simplified) --- */

/* Finds a Hamiltonian cycle through m[0..n) over edges with cap > 0,
 * trying the best-provisioned edges first; path[] receives it. */
static int ham_cycle(int n, int cap[][CLUSTER_MAX_NODE_GPUS], int *path,
		     int depth, unsigned used, long *budget)
{
	int last = path[depth - 1];
	int order[CLUSTER_MAX_NODE_GPUS], k = 0;

	if (--*budget < 0)
		return 0;
	if (depth == n)
		return cap[last][path[0]] > 0;
	for (int v = 0; v < n; v++)
		if (!(used & (1u << v)) && cap[last][v] > 0)
			order[k++] = v;
	for (int a = 1; a < k; a++) /* insertion sort, most links first */
		for (int b = a; b > 0 && cap[last][order[b]] > cap[last][order[b - 1]]; b--) {
			int t = order[b];
			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	for (int a = 0; a < k; a++) {
		path[depth] = order[a];
		if (ham_cycle(n, cap, path, depth + 1, used | (1u << order[a]),
			      budget))
			return 1;
	}
	return 0;
}

double cluster_ring_gbps(const struct cluster *c, const int *local, int n)
{
	int cap[CLUSTER_MAX_NODE_GPUS][CLUSTER_MAX_NODE_GPUS];
	int path[CLUSTER_MAX_NODE_GPUS];
	int rings = 0;
	long budget = 200000; /* DFS steps; a 16-GPU mesh needs far fewer */

	if (n < 2 || n > CLUSTER_MAX_NODE_GPUS)
		return 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			cap[i][j] = i == j ? 0 : c->nvlinks[local[i]][local[j]];
	if (n == 2)
		return cap[0][1] * c->nvlink_link_gbps;
	/* Each cycle found uses one link of every pair on it; NCCL runs it
	 * in both directions, so a GPU sends on two links per cycle. */
	path[0] = 0;
	while (ham_cycle(n, cap, path, 1, 1u, &budget)) {
		for (int i = 0; i < n; i++) {
			int a = path[i], b = path[(i + 1) % n];
			cap[a][b]--;
			cap[b][a]--;
		}
		rings++;
	}
	return rings * 2.0 * c->nvlink_link_gbps;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* In-domain link for the members `local` of one node (n of them). */
static struct link inside(const struct cluster *c, const int *local, int n,
			  int one_node)
{
	struct link l = c->nvlink;
	if (c->nvlink.bw_gbps <= 0)
		return c->pcie;
	if (c->has_link_matrix && one_node && n > 1) {
		double bw = cluster_ring_gbps(c, local, n);
		if (bw <= 0)
			return c->pcie;
		l.cls = LINK_NVLINK;
		l.bw_gbps = bw;
	}
	return l;
}

enum pplan_status placement_group_link(const struct cluster *c,
				       const long *ranks, int n,
				       struct group_link *out, struct perr *e)
{
	long total = cluster_gpus(c);
	int dom = c->nvlink_domain > 0 ? c->nvlink_domain : c->gpus_per_node;
	int gpn = c->gpus_per_node;
	int ndom = (int)((total + dom - 1) / dom);
	int nnodes = c->num_nodes;
	int per_dom_min = 0;
	int first_node = -1, first_dom = -1;
	/* local GPU sets per node, as bit masks, for rail alignment */
	unsigned long long mask0 = 0;
	int local[CLUSTER_MAX_NODE_GPUS], nlocal = 0;

	memset(out, 0, sizeof *out);
	if (n <= 0)
		return perr_set(e, PPLAN_EINPUT, "a group needs at least one rank");
	for (int i = 0; i < n; i++)
		if (ranks[i] < 0 || ranks[i] >= total)
			return perr_set(e, PPLAN_EINPUT,
					"rank %ld is outside the cluster's %ld GPUs",
					ranks[i], total);
	out->rail_aligned = 1;
	{
		/* Count members per node and per domain. */
		int node_count[4096] = { 0 }, dom_count[4096] = { 0 };
		unsigned long long node_mask[4096];
		if (nnodes > 4096 || ndom > 4096)
			return perr_set(e, PPLAN_EINPUT,
					"placement supports up to 4096 nodes");
		memset(node_mask, 0, sizeof(unsigned long long) * (size_t)nnodes);
		for (int i = 0; i < n; i++) {
			struct rank_place p;
			placement_rank(c, ranks[i], &p);
			if (node_count[p.node]++ == 0)
				out->nodes++;
			if (dom_count[p.domain]++ == 0)
				out->domains++;
			if (p.gpu < 64)
				node_mask[p.node] |= 1ull << p.gpu;
			if (first_node < 0)
				first_node = p.node;
			if (first_dom < 0)
				first_dom = p.domain;
			if (p.node == first_node && nlocal < CLUSTER_MAX_NODE_GPUS)
				local[nlocal++] = p.gpu;
		}
		for (int d = 0; d < ndom; d++)
			if (dom_count[d] > 0 &&
			    (per_dom_min == 0 || dom_count[d] < per_dom_min))
				per_dom_min = dom_count[d];
		mask0 = node_mask[first_node];
		for (int nd = 0; nd < nnodes; nd++)
			if (node_count[nd] > 0 && node_mask[nd] != mask0)
				out->rail_aligned = 0;
	}
	out->min_per_domain = per_dom_min;
	qsort(local, (size_t)nlocal, sizeof local[0], cmp_int);
	if (n == 1) {
		out->link = c->nvlink;
		return PPLAN_OK;
	}
	if (out->domains == 1) {
		out->link = inside(c, local, nlocal, out->nodes == 1 && dom == gpn);
		return PPLAN_OK;
	}
	if (!c->rail_aligned)
		out->rail_aligned = 0;
	{
		struct link in = per_dom_min > 1
					 ? inside(c, local, nlocal, dom == gpn)
					 : c->nvlink;
		if (in.bw_gbps <= 0)
			in = c->pcie;
		out->link = c->net;
		out->link.bw_gbps = fmin(c->net.bw_gbps * per_dom_min, in.bw_gbps);
	}
	return PPLAN_OK;
}
