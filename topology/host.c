/*
 * host.c: the discovered host as data, NIC affinity, and the step from a
 * host to a cluster.  Rules (NCCL's topology search works the same way):
 * a NIC is a compute NIC when some GPU reaches it through PCIe switches
 * only (PIX or PXB); a GPU uses the nearest compute NIC, one of its own
 * where there is one; a node is rail-aligned when every GPU has its own.
 * NVLink bandwidth is links x per-link bandwidth (NVLink 1: 20 GB/s,
 * 2-4: 25 GB/s, 5: 50 GB/s per direction; NVIDIA's data sheets).
 */
#include "host.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const path_names[PATH_COUNT] = {
	"PIX", "PXB", "PHB", "NODE", "SYS", "?"
};

const char *pci_path_name(enum pci_path p)
{
	return (p >= 0 && p < PATH_COUNT) ? path_names[p] : "?";
}

int pci_path_parse(const char *s, enum pci_path *out)
{
	for (int i = 0; i < PATH_UNKNOWN; i++)
		if (strcasecmp(s, path_names[i]) == 0) {
			*out = (enum pci_path)i;
			return 0;
		}
	return -1;
}

const char *nic_kind_name(enum nic_kind k)
{
	switch (k) {
	case NIC_IB: return "infiniband";
	case NIC_ROCE: return "roce";
	case NIC_ETHERNET: return "ethernet";
	case NIC_OTHER: break;
	}
	return "other";
}

void host_init(struct host_topo *h)
{
	memset(h, 0, sizeof *h);
	h->packages = h->numa_nodes = h->cores = h->pus = -1;
	for (int i = 0; i < HOST_MAX_GPUS; i++)
		for (int j = 0; j < HOST_MAX_NICS; j++)
			h->gpu_nic[i][j] = PATH_UNKNOWN;
	snprintf(h->nvlink_source, sizeof h->nvlink_source, "none");
}

void host_note(struct host_topo *h, const char *fmt, ...)
{
	size_t len = strlen(h->notes);
	va_list ap;

	if (len + 3 >= sizeof h->notes)
		return;
	if (len > 0) {
		memcpy(h->notes + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(h->notes + len, sizeof h->notes - len, fmt, ap);
	va_end(ap);
}

void host_assign_nics(struct host_topo *h)
{
	int used[HOST_MAX_NICS] = { 0 };
	int ncompute = 0;

	for (int n = 0; n < h->nnics; n++) {
		h->nic[n].compute = 0;
		for (int g = 0; g < h->ngpus; g++)
			if (h->gpu_nic[g][n] <= PATH_PXB)
				h->nic[n].compute = 1;
		ncompute += h->nic[n].compute;
	}
	for (int g = 0; g < h->ngpus; g++) {
		int best = -1;
		enum pci_path bp = PATH_UNKNOWN;

		for (int n = 0; n < h->nnics; n++) {
			enum pci_path p = h->gpu_nic[g][n];
			/* Without compute NICs, any NIC will do. */
			if (ncompute > 0 && !h->nic[n].compute)
				continue;
			/* Nearest first, then RDMA before Ethernet, then the
			 * NIC fewest GPUs use so far. */
			if (best < 0 || p < bp ||
			    (p == bp && h->nic[n].kind < h->nic[best].kind) ||
			    (p == bp && h->nic[n].kind == h->nic[best].kind &&
			     used[n] < used[best])) {
				best = n;
				bp = p;
			}
		}
		h->gpu[g].nic = best;
		h->gpu[g].nic_path = best >= 0 ? bp : PATH_UNKNOWN;
		if (best >= 0)
			used[best]++;
	}
}

int host_compute_nics(const struct host_topo *h)
{
	int k = 0;
	for (int n = 0; n < h->nnics; n++)
		k += h->nic[n].compute;
	return k;
}

int host_rail_aligned(const struct host_topo *h)
{
	if (h->ngpus == 0)
		return 0;
	for (int g = 0; g < h->ngpus; g++) {
		if (h->gpu[g].nic < 0 || h->gpu[g].nic_path > PATH_PXB)
			return 0;
		for (int o = 0; o < g; o++)
			if (h->gpu[o].nic == h->gpu[g].nic)
				return 0;
	}
	return 1;
}

int host_gpu_links(const struct host_topo *h, int i)
{
	int k = 0;
	if (h->nvswitch && h->gpu[i].switch_links > 0)
		return h->gpu[i].switch_links;
	for (int j = 0; j < h->ngpus; j++)
		if (j != i)
			k += h->nvlinks[i][j];
	return k;
}

double host_nvlink_version_gbps(int version)
{
	if (version <= 0)
		return 0;
	if (version == 1)
		return 20.0;
	if (version <= 6)
		return 25.0;
	return 50.0;
}

void host_classify_nvlink(struct host_topo *h, int max_links)
{
	if (max_links <= 0)
		max_links = 18;
	if (!h->nvswitch) {
		for (int i = 0; i < h->ngpus; i++) {
			int sum = 0;
			for (int j = 0; j < h->ngpus; j++)
				if (j != i)
					sum += h->nvlinks[i][j];
			if (sum > max_links)
				h->nvswitch = 1;
		}
	}
	if (h->nvswitch) {
		/* Through a switch a GPU's links reach every peer: what
		 * nvidia-smi prints for a pair is the GPU's link count. */
		for (int i = 0; i < h->ngpus; i++) {
			int most = 0;
			double gb = 0;
			for (int j = 0; j < h->ngpus; j++) {
				if (h->nvlinks[i][j] > most)
					most = h->nvlinks[i][j];
				if (h->nvlink_gbps[i][j] > gb)
					gb = h->nvlink_gbps[i][j];
			}
			if (h->gpu[i].switch_links == 0)
				h->gpu[i].switch_links = most;
			if (h->gpu[i].switch_gbps <= 0)
				h->gpu[i].switch_gbps = gb > 0 ? gb
						       : most * h->link_gbps;
		}
	}
	for (int i = 0; i < h->ngpus; i++)
		for (int j = 0; j < h->ngpus; j++)
			if (h->nvlink_gbps[i][j] <= 0 && h->nvlinks[i][j] > 0)
				h->nvlink_gbps[i][j] = h->nvlinks[i][j] * h->link_gbps;
}

const struct gpu_spec *host_guess_gpu(const char *model)
{
	if (!model || !*model)
		return NULL;
	return gpu_find_loose(model, NULL);
}

int host_differs(const struct host_topo *a, const struct host_topo *b,
		 char *why, size_t len)
{
	if (a->ngpus != b->ngpus) {
		snprintf(why, len, "%d GPUs, not %d", a->ngpus, b->ngpus);
		return 1;
	}
	for (int i = 0; i < a->ngpus; i++)
		if (strcmp(a->gpu[i].model, b->gpu[i].model) != 0) {
			snprintf(why, len, "GPU%d is '%s', not '%s'", i,
				 a->gpu[i].model, b->gpu[i].model);
			return 1;
		}
	if (a->nvswitch != b->nvswitch) {
		snprintf(why, len, "%s NVSwitch", a->nvswitch ? "has an" : "has no");
		return 1;
	}
	for (int i = 0; i < a->ngpus; i++) {
		if (a->gpu[i].switch_links != b->gpu[i].switch_links) {
			snprintf(why, len, "GPU%d has %d NVLinks to the switch, not %d",
				 i, a->gpu[i].switch_links, b->gpu[i].switch_links);
			return 1;
		}
		for (int j = 0; j < a->ngpus; j++)
			if (a->nvlinks[i][j] != b->nvlinks[i][j]) {
				snprintf(why, len, "GPU%d-GPU%d has %d NVLinks, not %d",
					 i, j, a->nvlinks[i][j], b->nvlinks[i][j]);
				return 1;
			}
	}
	if (host_compute_nics(a) != host_compute_nics(b)) {
		snprintf(why, len, "%d compute NICs, not %d", host_compute_nics(a),
			 host_compute_nics(b));
		return 1;
	}
	if (host_rail_aligned(a) != host_rail_aligned(b)) {
		snprintf(why, len, "NICs %s rail-aligned",
			 host_rail_aligned(a) ? "are" : "are not");
		return 1;
	}
	return 0;
}

enum pplan_status host_check_agree(const struct host_topo *hosts, int n,
				   int *ref, struct perr *e)
{
	int best = 0, best_count = 0, odd = 0;
	char msg[sizeof e->msg], why[160];
	size_t len;

	for (int i = 0; i < n; i++) {
		int same = 0;
		for (int j = 0; j < n; j++)
			same += !host_differs(&hosts[j], &hosts[i], why, sizeof why);
		if (same > best_count) {
			best_count = same;
			best = i;
		}
	}
	*ref = best;
	if (best_count == n)
		return PPLAN_OK;
	len = (size_t)snprintf(msg, sizeof msg,
			       "%d of %d hosts differ from %s (rank %d):",
			       n - best_count, n, hosts[best].hostname, best);
	for (int i = 0; i < n && len < sizeof msg; i++) {
		if (!host_differs(&hosts[i], &hosts[best], why, sizeof why))
			continue;
		len += (size_t)snprintf(msg + len, sizeof msg - len,
					"%s rank %d (%s) %s", odd++ ? ";" : "",
					i, hosts[i].hostname, why);
	}
	return perr_set(e, PPLAN_EINPUT, "%s", msg);
}

/* ---- host -> cluster --------------------------------------------------- */

static double preset_nic_gbits(const char *preset)
{
	struct cluster p;
	if (!preset || cluster_preset(preset, 0, &p, NULL) != PPLAN_OK)
		return 0;
	return p.nic_gbps * 8.0;
}

enum pplan_status host_to_cluster(const struct host_topo *h,
				  const struct host_cluster_opts *o,
				  struct cluster *c, struct perr *e)
{
	const struct gpu_spec *g = o->gpu;
	const char *preset;
	double link_gbps, nic_gbits;
	int nics, n = h->ngpus;

	if (n < 1)
		return perr_set(e, PPLAN_EINPUT,
				"%s: no GPU found, so there is no cluster to describe",
				h->source);
	if (!g) {
		for (int i = 0; i < n && !g; i++)
			g = host_guess_gpu(h->gpu[i].model);
		if (!g)
			return perr_set(e, PPLAN_EINPUT,
					"%s: the GPU model is %s; give --gpu TYPE "
					"(a100-40gb, a100-80gb, h100-sxm, h100-96gb, "
					"h800, h200, b200)",
					h->source,
					h->gpu[0].model[0] ? "not one pplan knows"
							   : "not recorded there");
	}
	preset = cluster_preset_for_gpu(g->name);
	if (cluster_preset(preset ? preset : "dgx-h100", 0, c, e) != PPLAN_OK)
		return PPLAN_EINPUT;
	c->gpu = *g;
	snprintf(c->name, sizeof c->name, "%s", h->hostname[0] ? h->hostname
								: "discovered");
	snprintf(c->source, sizeof c->source, "%s", h->source);
	c->gpus_per_node = n;
	c->num_nodes = o->num_nodes > 0 ? o->num_nodes : 1;
	c->nvlink_domain = o->nvlink_domain > 0 ? o->nvlink_domain : n;
	if (c->nvlink_domain % n != 0 && n % c->nvlink_domain != 0)
		return perr_set(e, PPLAN_EINPUT,
				"--nvlink-domain %d and the node's %d GPUs must divide one another",
				c->nvlink_domain, n);

	link_gbps = h->link_gbps > 0 ? h->link_gbps
		    : (g->nvlink_links > 0 ? g->nvlink_gbps / g->nvlink_links : 25.0);
	c->nvlink_link_gbps = link_gbps;
	c->has_link_matrix = 0;
	memset(c->nvlinks, 0, sizeof c->nvlinks);
	if (h->nvswitch) {
		double bw = 0;
		/* The slowest GPU's path to the fabric sets the collective rate. */
		for (int i = 0; i < n; i++) {
			double b = h->gpu[i].switch_gbps > 0
					   ? h->gpu[i].switch_gbps
					   : h->gpu[i].switch_links * link_gbps;
			if (i == 0 || b < bw)
				bw = b;
		}
		c->nvlink.cls = LINK_NVSWITCH;
		c->nvlink.bw_gbps = bw > 0 ? bw : g->nvlink_gbps;
	} else {
		int most = 0;
		for (int i = 0; i < n; i++) {
			int k = host_gpu_links(h, i);
			if (k > most)
				most = k;
		}
		if (most == 0) {
			/* PCIe only: the "NVLink domain" is the PCIe tree. */
			c->nvlink = c->pcie;
		} else {
			c->nvlink.cls = LINK_NVLINK;
			c->nvlink.bw_gbps = most * link_gbps;
			c->has_link_matrix = 1;
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++)
					c->nvlinks[i][j] = i == j ? 0 : h->nvlinks[i][j];
		}
	}

	nics = host_compute_nics(h);
	if (nics == 0) {
		for (int i = 0; i < h->nnics; i++)
			if (h->nic[i].kind == NIC_IB || h->nic[i].kind == NIC_ROCE)
				nics++;
	}
	if (nics == 0)
		nics = h->nnics;
	nic_gbits = o->nic_gbits;
	if (nic_gbits <= 0) {
		/* The slowest compute NIC whose rate the host reported. */
		for (int i = 0; i < h->nnics; i++)
			if (h->nic[i].compute && h->nic[i].gbits > 0 &&
			    (nic_gbits <= 0 || h->nic[i].gbits < nic_gbits))
				nic_gbits = h->nic[i].gbits;
	}
	if (nic_gbits <= 0)
		nic_gbits = preset_nic_gbits(preset);
	if (nic_gbits <= 0)
		nic_gbits = 100;
	if (nics > 0) {
		c->nics_per_node = nics;
		c->nic_gbps = nic_gbits / 8.0;
		c->net.bw_gbps = c->nic_gbps * nics / n;
	} else {
		/* No NIC seen: nothing to count.  The file keeps a network
		 * rate per GPU so that it still prices multi-node layouts
		 * (--nic-gbits as one NIC per GPU, else the preset's), and
		 * says that it is assumed. */
		c->nics_per_node = 0;
		/* nic_gbps stays the preset's (or --nic-gbits): a file must
		 * name a rate, and with no NIC counted it prices nothing. */
		if (o->nic_gbits > 0) {
			c->nic_gbps = o->nic_gbits / 8.0;
			c->net.bw_gbps = o->nic_gbits / 8.0;
		}
		snprintf(c->source, sizeof c->source,
			 "%s; no NIC found, network %.1f GB/s per GPU assumed (%s)",
			 h->source, c->net.bw_gbps,
			 o->nic_gbits > 0 ? "--nic-gbits" : preset ? preset : "dgx-h100");
	}
	c->rail_aligned = host_rail_aligned(h);
	return PPLAN_OK;
}

int host_same_bus(const char *a, const char *b)
{
	unsigned d1, b1, s1, f1, d2, b2, s2, f2;
	if (sscanf(a, "%x:%x:%x.%x", &d1, &b1, &s1, &f1) != 4 ||
	    sscanf(b, "%x:%x:%x.%x", &d2, &b2, &s2, &f2) != 4)
		return 0;
	return d1 == d2 && b1 == b2 && s1 == s2 && f1 == f2;
}

int host_gpu_by_bus(struct host_topo *h, const char *bus_id)
{
	struct host_gpu *g;
	for (int i = 0; i < h->ngpus; i++)
		if (host_same_bus(h->gpu[i].bus_id, bus_id))
			return i;
	if (h->ngpus >= HOST_MAX_GPUS)
		return -1;
	g = &h->gpu[h->ngpus];
	memset(g, 0, sizeof *g);
	snprintf(g->bus_id, sizeof g->bus_id, "%s", bus_id);
	g->numa = -1;
	g->nic = -1;
	g->nic_path = PATH_UNKNOWN;
	return h->ngpus++;
}

void host_load_and_clock(double *load_1m, double *cpu_mhz)
{
	double l[1];
	char line[256];
	FILE *f;
	*load_1m = getloadavg(l, 1) == 1 ? l[0] : NAN;
	*cpu_mhz = NAN;
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (strncmp(line, "cpu MHz", 7) == 0 && c) {
			double v = strtod(c + 1, NULL);
			if (v > 0)
				*cpu_mhz = v;
			break;
		}
	}
	if (f)
		fclose(f);
}
