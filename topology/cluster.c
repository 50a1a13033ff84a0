/*
 * cluster.c: node presets, pplan.cluster/1 files, and which link a
 * parallel group uses.  Preset figures: DGX A100 (8x A100 80GB, NVSwitch,
 * 8x HDR 200 Gb/s compute NICs), DGX H100 and DGX H200 (8 GPUs, NVSwitch,
 * 8x NDR 400 Gb/s), HGX B200 (8 GPUs, NVLink 5 switch, 8x 400 Gb/s),
 * HGX B300 (the same with 8x 800 Gb/s), the NVL72 racks, and a node of
 * four GH200 superchips.
 * Link efficiencies and latencies are explained in sim/MODEL.md.
 */
#include "cluster.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jsonio.h"
#include "suggest.h"

static const char *const class_names[LINK_CLASS_COUNT] = {
	"nvswitch", "nvlink", "pcie", "net"
};

const char *link_class_name(enum link_class c)
{
	return (c >= 0 && c < LINK_CLASS_COUNT) ? class_names[c] : "?";
}

int link_class_parse(const char *s, enum link_class *out)
{
	for (int i = 0; i < LINK_CLASS_COUNT; i++)
		if (strcasecmp(s, class_names[i]) == 0) {
			*out = (enum link_class)i;
			return 0;
		}
	return -1;
}

static const struct {
	const char *name;
	const char *gpu;
	int per_node;        /* GPUs per node (an NVL72 tray holds 4) */
	int domain;          /* GPUs one NVLink fabric joins */
	int nics;            /* compute NICs per node */
	double nic_gbits;    /* one NIC, Gbit/s */
	double nvlink_eff;   /* all-reduce busbw / NVLink bandwidth */
	double host_gbps;    /* GPU to host memory, GB/s one direction */
	double host_mem_gib; /* the node's host memory */
	double host_mem_gbps;/* its bandwidth: channels x transfer rate x 8 B, all sockets */
} presets[] = {
	/* Host links: PCIe 4.0 x16 (A100) and 5.0 x16 (H100, H200, B200) at
	 * what a pinned copy reaches (about 25 and 55 GB/s); Grace's
	 * NVLink-C2C, 900 GB/s for the two GPUs of a superchip both ways. */
	/* Host memory as the vendors ship it: DGX A100 640GB 2 TB on two
	 * EPYC 7742 (8 DDR4-3200 channels each: 2 x 204.8 GB/s); DGX H100,
	 * H200 and H800 2 TB on two Xeon 8480C (8 DDR5-4800 channels each:
	 * 2 x 307.2 GB/s); DGX B200 2 TB on two Xeon 8570 (8 DDR5-5600
	 * channels each: 2 x 358.4 GB/s); a GB200/GB300 tray's two Grace
	 * CPUs, 480 GB of LPDDR5X and up to 512 GB/s each. */
	{ "dgx-a100", "a100-80gb", 8, 8, 8, 200, 0.78, 25, 2048, 409.6 },
	{ "dgx-h100", "h100-sxm", 8, 8, 8, 400, 0.80, 55, 2048, 614.4 },
	{ "dgx-h800", "h800", 8, 8, 8, 400, 0.80, 55, 2048, 614.4 },
	{ "dgx-h200", "h200", 8, 8, 8, 400, 0.80, 55, 2048, 614.4 },
	{ "hgx-b200", "b200", 8, 8, 8, 400, 0.80, 55, 2048, 716.8 },
	{ "gb200-nvl72", "gb200", 4, 72, 4, 400, 0.80, 225, 894, 1024 },
	{ "gb300-nvl72", "gb300", 4, 72, 4, 800, 0.80, 225, 894, 1024 },
	/* HGX B300: 8 GPUs on an NVLink 5 switch, ConnectX-8 at 800 Gb/s
	 * each; host as the HGX B200's (two Xeon sockets, 2 TB). */
	{ "hgx-b300", "b300", 8, 8, 8, 800, 0.80, 55, 2048, 716.8 },
	/* A node of four GH200 superchips (HPE Cray EX254n of CSCS Alps,
	 * JUPITER's booster): the four Hoppers joined all to all by NVLink
	 * 4 (6 links a pair, 450 GB/s a GPU in all), one 200 Gb/s NIC a
	 * GPU; each Grace's NVLink-C2C (450 GB/s a direction) to its 120 GB
	 * of LPDDR5X at up to 512 GB/s. */
	{ "gh200-x4", "gh200", 4, 4, 4, 200, 0.80, 450, 480, 2048 },
};

static const char *const preset_list[] = {
	"dgx-a100", "dgx-h100", "dgx-h800", "dgx-h200", "hgx-b200", "gb200-nvl72",
	"gb300-nvl72", "hgx-b300", "gh200-x4", NULL
};

const char *const *cluster_preset_names(void)
{
	return preset_list;
}

const char *cluster_preset_for_gpu(const char *gpu)
{
	const char *dash = strchr(gpu, '-');
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (strcasecmp(presets[i].gpu, gpu) == 0)
			return presets[i].name;
	/* a memory variant on its family's node: gh200-144gb on gh200's */
	for (size_t i = 0; dash && i < sizeof presets / sizeof presets[0]; i++)
		if (strlen(presets[i].gpu) == (size_t)(dash - gpu) &&
		    strncasecmp(presets[i].gpu, gpu, (size_t)(dash - gpu)) == 0)
			return presets[i].name;
	return NULL;
}

long cluster_gpus(const struct cluster *c)
{
	return (long)c->gpus_per_node * c->num_nodes;
}

void cluster_set_net_gbps(struct cluster *c, double gbps_per_gpu)
{
	c->net.bw_gbps = gbps_per_gpu;
	c->nic_gbps = gbps_per_gpu * c->gpus_per_node /
		      (c->nics_per_node > 0 ? c->nics_per_node : 1);
}

static enum pplan_status size_nodes(struct cluster *c, long gpus,
				    const char *what, struct perr *e)
{
	if (gpus < 0)
		return perr_set(e, PPLAN_EINPUT, "the GPU count must be positive, got %ld",
				gpus);
	if (gpus > CLUSTER_MAX_GPUS)
		return perr_set(e, PPLAN_EINPUT,
				"%ld GPUs is more than pplan plans for (%ld)", gpus,
				(long)CLUSTER_MAX_GPUS);
	if (gpus == 0) {
		if (c->num_nodes < 1)
			c->num_nodes = 1;
		return PPLAN_OK;
	}
	if (gpus < c->gpus_per_node || gpus % c->gpus_per_node != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%ld GPUs is not a whole number of %s nodes of %d GPUs",
				gpus, what, c->gpus_per_node);
	c->num_nodes = (int)(gpus / c->gpus_per_node);
	return PPLAN_OK;
}

void cluster_cpu_ranks(const struct cpu_ranks *r, struct cluster *c)
{
	struct gpu_spec *g = &c->gpu;
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "cpu");
	snprintf(c->source, sizeof c->source, "%s", r->source);
	snprintf(g->name, sizeof g->name, "cpu");
	snprintf(g->description, sizeof g->description, "%.63s", r->description);
	g->peak_tflops[PREC_FP32] = r->tflops;
	g->gemm_eff_max[PREC_FP32] = 1.0;   /* the peak is what sgemm reached */
	g->gemm_half_gflop = 0.01;
	g->mem_gib = r->mem_gib;
	g->hbm_gbps = r->gbps;
	g->hbm_eff = 1.0;
	g->sm_count = 1;
	c->gpus_per_node = r->per_host;
	c->num_nodes = r->hosts;
	c->nvlink_domain = r->per_host;
	c->nvlink = (struct link){ LINK_NVSWITCH, r->shm_gbps, r->shm_latency_s, 1.0 };
	c->pcie = c->nvlink;
	c->net = (struct link){ LINK_NET, 1.0, 20e-6, 0.9 };
	c->nics_per_node = 1;
	c->nic_gbps = 1.0 * r->per_host;
}

enum pplan_status cluster_size(struct cluster *c, long nodes, int gpus_per_node,
			       struct perr *e)
{
	int old = c->gpus_per_node;
	if (nodes < 0 || gpus_per_node < 0)
		return perr_set(e, PPLAN_EINPUT,
				"node and GPU counts must be positive, got %ld nodes of %d GPUs",
				nodes, gpus_per_node);
	if (gpus_per_node > old)
		return perr_set(e, PPLAN_EINPUT,
				"a %s node has %d GPUs, not %d", c->name, old,
				gpus_per_node);
	if (gpus_per_node > 0 && gpus_per_node < old) {
		/* Part of each node: the NVLink domain keeps its nodes, the
		 * NICs their share per GPU. */
		c->nvlink_domain = c->nvlink_domain / old * gpus_per_node;
		if (c->nvlink_domain < gpus_per_node)
			c->nvlink_domain = gpus_per_node;
		if (c->nics_per_node > 0) {
			int nics = (int)((long)c->nics_per_node * gpus_per_node / old);
			c->nics_per_node = nics > 0 ? nics : 1;
			c->net.bw_gbps = c->nic_gbps * c->nics_per_node / gpus_per_node;
		}
		c->gpus_per_node = gpus_per_node;
	}
	if (nodes > 0) {
		if (nodes * c->gpus_per_node > CLUSTER_MAX_GPUS)
			return perr_set(e, PPLAN_EINPUT,
					"%ld nodes of %d GPUs is more than pplan plans for (%ld GPUs)",
					nodes, c->gpus_per_node, (long)CLUSTER_MAX_GPUS);
		c->num_nodes = (int)nodes;
	}
	cluster_fit_domain(c);
	return PPLAN_OK;
}

enum pplan_status cluster_preset(const char *preset, long gpus,
				 struct cluster *c, struct perr *e)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
		const struct gpu_spec *g;
		if (strcasecmp(presets[i].name, preset) != 0)
			continue;
		g = gpu_find(presets[i].gpu);
		memset(c, 0, sizeof *c);
		snprintf(c->name, sizeof c->name, "%s", presets[i].name);
		snprintf(c->source, sizeof c->source, "preset %s", presets[i].name);
		c->gpu = *g;
		c->gpus_per_node = presets[i].per_node;
		c->nvlink_domain = presets[i].domain;
		c->nvlink = (struct link){ LINK_NVSWITCH, g->nvlink_gbps, 2.0e-6,
					   presets[i].nvlink_eff };
		c->pcie = (struct link){ LINK_PCIE, 25.0, 4.0e-6, 0.75 };
		c->nvlink_link_gbps = g->nvlink_links > 0
					      ? g->nvlink_gbps / g->nvlink_links
					      : 25.0;
		c->nics_per_node = presets[i].nics;
		c->nic_gbps = presets[i].nic_gbits / 8.0;
		c->net = (struct link){ LINK_NET,
					c->nic_gbps * c->nics_per_node /
						c->gpus_per_node,
					6.0e-6, 0.90 };
		c->rail_aligned = 1;
		c->host_gbps = presets[i].host_gbps;
		c->host_mem_gib = presets[i].host_mem_gib;
		c->host_mem_gbps = presets[i].host_mem_gbps;
		if (size_nodes(c, gpus, preset, e) != PPLAN_OK)
			return PPLAN_EINPUT;
		if (gpus > 0) /* else sized later (cluster_size) */
			cluster_fit_domain(c);
		return PPLAN_OK;
	}
	{
		char dym[96], names[160];
		size_t o = 0;
		names[0] = '\0';
		for (int i = 0; preset_list[i]; i++)
			o += (size_t)snprintf(names + o, o < sizeof names ? sizeof names - o : 0,
					      "%s, ", preset_list[i]);
		return perr_set(e, PPLAN_EINPUT,
				"unknown cluster '%s'%s (presets: %sor a pplan.cluster/1 file)",
				preset,
				suggest_phrase(dym, sizeof dym,
					       suggest_list(preset, preset_list)),
				names);
	}
}

enum pplan_status cluster_for_gpu(const struct gpu_spec *g, struct cluster *c,
				  struct perr *e)
{
	const char *own = cluster_preset_for_gpu(g->name);
	int old = g->arch == ARCH_VOLTA || g->arch == ARCH_PASCAL;
	const char *base = own ? own : g->arch == ARCH_AMPERE ? "dgx-a100" : "dgx-h100";
	enum pplan_status st = cluster_preset(base, 0, c, e);

	if (st != PPLAN_OK)
		return st;
	c->gpu = *g;
	c->nvlink.bw_gbps = g->nvlink_gbps;
	if (own)
		return PPLAN_OK;
	snprintf(c->name, sizeof c->name, "%s nodes", g->name);
	if (old) {
		/* PCIe 3.0 x16 pinned copies reach about 12 GB/s; EDR is
		 * 100 Gb/s; DGX-2's 1.5 TB and 2 x 6 x 21.3 GB/s, halved. */
		c->nics_per_node = 4;
		c->nic_gbps = 100 / 8.0;
		c->net.bw_gbps = c->nic_gbps * c->nics_per_node / c->gpus_per_node;
		c->rail_aligned = 0;
		c->host_gbps = 12;
		c->host_mem_gib = 768;
		c->host_mem_gbps = 128;
		snprintf(c->source, sizeof c->source,
			 "--gpu %s: 8 per node on NVSwitch as half an HGX-2, its EDR network and PCIe 3.0 host",
			 g->name);
	} else if (g->arch == ARCH_AMPERE) {
		c->host_mem_gib = 1024;
		snprintf(c->source, sizeof c->source,
			 "--gpu %s: the dgx-a100 node, 1 TiB of host memory (DGX A100 320GB)", g->name);
	} else {
		snprintf(c->source, sizeof c->source,
			 "--gpu %s: no preset of its own; the node, NVSwitch and network of dgx-h100",
			 g->name);
	}
	return PPLAN_OK;
}

double cluster_host_gbps(const struct cluster *c)
{
	return c->host_gbps > 0 ? c->host_gbps : c->pcie.bw_gbps;
}

double cluster_host_mem_gib(const struct cluster *c)
{
	return c->host_mem_gib > 0 ? c->host_mem_gib : CLUSTER_HOST_MEM_GIB;
}

double cluster_host_mem_gbps(const struct cluster *c)
{
	return c->host_mem_gbps > 0 ? c->host_mem_gbps : CLUSTER_HOST_MEM_GBPS;
}

void cluster_fit_domain(struct cluster *c)
{
	long total = cluster_gpus(c);
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	if (c->nvlink_domain <= gpn || total <= 0)
		return;
	if (c->nvlink_domain > total)
		c->nvlink_domain = (int)total;
	while (c->nvlink_domain > gpn &&
	       (total % c->nvlink_domain != 0 || c->nvlink_domain % gpn != 0))
		c->nvlink_domain -= gpn;
	if (c->nvlink_domain < gpn)
		c->nvlink_domain = gpn;
}

enum pplan_status cluster_resolve(const char *name_or_file, long gpus,
				  struct cluster *c, struct perr *e)
{
	if (strchr(name_or_file, '/') || strstr(name_or_file, ".json"))
		return cluster_load(name_or_file, gpus, c, e);
	return cluster_preset(name_or_file, gpus, c, e);
}

/* ---- pplan.cluster/1 ---------------------------------------------------- */

static enum pplan_status load_link(const cJSON *root, const char *key,
				   struct link *l, const char *path,
				   struct perr *e)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
	char where[512];
	const char *cls = NULL;
	enum pplan_status st;

	if (!o || cJSON_IsNull(o))
		return PPLAN_OK; /* keep what the GPU's defaults gave */
	snprintf(where, sizeof where, "%s: %s", path, key);
	if (!cJSON_IsObject(o))
		return perr_set(e, PPLAN_EINPUT, "%s must be an object", where);
	st = json_get_string(o, "class", &cls, where, e);
	if (st == PPLAN_EINPUT)
		return st;
	if (st == PPLAN_OK && link_class_parse(cls, &l->cls) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: class '%s' is not one of nvswitch, nvlink, pcie, net",
				where, cls);
	st = json_get_number(o, "bw_gbps", &l->bw_gbps, where, e);
	if (st == PPLAN_EINPUT)
		return st;
	if (!(l->bw_gbps > 0 && l->bw_gbps <= 1e6))
		return perr_set(e, PPLAN_EINPUT,
				"%s: bw_gbps must be more than 0 and at most 1000000 GB/s",
				where);
	st = json_get_number(o, "latency_us", &l->latency_s, where, e);
	if (st == PPLAN_EINPUT)
		return st;
	if (st == PPLAN_OK) {
		if (!(l->latency_s >= 0 && l->latency_s <= 1e6))
			return perr_set(e, PPLAN_EINPUT,
					"%s: latency_us must be from 0 to 1000000 us",
					where);
		l->latency_s *= 1e-6;
	}
	st = json_get_number(o, "efficiency", &l->eff, where, e);
	if (st == PPLAN_EINPUT)
		return st;
	if (!(l->eff > 0 && l->eff <= 1))
		return perr_set(e, PPLAN_EINPUT,
				"%s: efficiency must be in (0, 1]", where);
	return PPLAN_OK;
}

enum pplan_status cluster_load(const char *path, long gpus, struct cluster *c,
			       struct perr *e)
{
	cJSON *root = NULL;
	const char *s = NULL, *gname = NULL;
	const cJSON *mat;
	long v;
	enum pplan_status st = json_read_limited(path, JSON_MAX_BYTES_CLUSTER,
						 "a cluster file", &root, e);

	if (st != PPLAN_OK)
		return st;
	if (!cJSON_IsObject(root)) {
		st = perr_set(e, PPLAN_EINPUT, "%s: expected a JSON object", path);
		goto out;
	}
	if (json_get_string(root, "schema", &s, path, e) != PPLAN_OK ||
	    strcmp(s, "pplan.cluster/1") != 0) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: schema must be \"pplan.cluster/1\"", path);
		goto out;
	}
	st = json_get_string(root, "gpu", &gname, path, e);
	if (st != PPLAN_OK) {
		if (st == PPLAN_ENOTFOUND)
			st = perr_set(e, PPLAN_EINPUT, "%s: gpu is missing", path);
		goto out;
	}
	{
		const struct gpu_spec *g = gpu_find(gname);
		const char *preset;
		if (!g) {
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: unknown GPU '%s' (see pplan search --list-gpus)",
				      path, gname);
			goto out;
		}
		preset = cluster_preset_for_gpu(g->name);
		if (preset)
			cluster_preset(preset, 0, c, NULL);
		else
			cluster_preset("dgx-h100", 0, c, NULL);
		c->gpu = *g;
		c->nvlink.bw_gbps = g->nvlink_gbps;
		c->nvlink_link_gbps = g->nvlink_links > 0
					      ? g->nvlink_gbps / g->nvlink_links
					      : 25.0;
	}
	snprintf(c->source, sizeof c->source, "file %s", path);
	if (json_get_string(root, "name", &s, path, e) == PPLAN_OK)
		snprintf(c->name, sizeof c->name, "%s", s);
	else
		snprintf(c->name, sizeof c->name, "%s", path);
	st = json_get_long(root, "gpus_per_node", &v, 1, path, e);
	if (st == PPLAN_OK) {
		if (v > 1024) {
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: gpus_per_node must be at most 1024, got %ld", path, v);
			goto out;
		}
		c->gpus_per_node = (int)v;
	} else if (st == PPLAN_EINPUT)
		goto out;
	c->nvlink_domain = c->gpus_per_node;
	c->num_nodes = 1;
	st = json_get_long(root, "num_nodes", &v, 1, path, e);
	if (st == PPLAN_OK && v > CLUSTER_MAX_GPUS / c->gpus_per_node) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: num_nodes %ld x gpus_per_node %d is more GPUs than pplan plans for (%ld)",
			      path, v, c->gpus_per_node, (long)CLUSTER_MAX_GPUS);
		goto out;
	}
	if (st == PPLAN_OK)
		c->num_nodes = (int)v;
	else if (st == PPLAN_EINPUT)
		goto out;
	st = json_get_long(root, "nvlink_domain", &v, 1, path, e);
	if (st == PPLAN_OK && v > CLUSTER_MAX_GPUS) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: nvlink_domain must be at most %ld GPUs, got %ld",
			      path, (long)CLUSTER_MAX_GPUS, v);
		goto out;
	}
	if (st == PPLAN_OK)
		c->nvlink_domain = (int)v;
	else if (st == PPLAN_EINPUT)
		goto out;
	if (c->nvlink_domain % c->gpus_per_node != 0 &&
	    c->gpus_per_node % c->nvlink_domain != 0) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: nvlink_domain (%d) and gpus_per_node (%d) must divide one another",
			      path, c->nvlink_domain, c->gpus_per_node);
		goto out;
	}
	st = json_get_long(root, "nics_per_node", &v, 0, path, e);
	if (st == PPLAN_OK && v > 1024) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: nics_per_node must be at most 1024, got %ld", path, v);
		goto out;
	}
	if (st == PPLAN_OK)
		c->nics_per_node = (int)v;
	else if (st == PPLAN_EINPUT)
		goto out;
	st = json_get_number(root, "nic_gbps", &c->nic_gbps, path, e);
	if (st == PPLAN_EINPUT)
		goto out;
	if (st == PPLAN_OK && !(c->nic_gbps > 0 && c->nic_gbps <= 1e6)) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: nic_gbps must be more than 0 and at most 1000000 GB/s, got %g",
			      path, c->nic_gbps);
		goto out;
	}
	if (c->nics_per_node > 0)
		c->net.bw_gbps = c->nic_gbps * c->nics_per_node / c->gpus_per_node;
	st = json_get_bool(root, "rail_aligned", &c->rail_aligned, path, e);
	if (st == PPLAN_EINPUT)
		goto out;
	if (st == PPLAN_ENOTFOUND)
		c->rail_aligned = c->rail_aligned &&
				  c->nics_per_node >= c->gpus_per_node;
	else if (c->rail_aligned && c->nics_per_node < c->gpus_per_node) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: rail_aligned is true but %d NICs cannot give each of the %d GPUs of a node its own",
			      path, c->nics_per_node, c->gpus_per_node);
		goto out;
	}
	{
		static const char *const keys[] = { "host_memory_gib", "host_memory_gbps" };
		double *dst[] = { &c->host_mem_gib, &c->host_mem_gbps };
		for (int k = 0; k < 2; k++) {
			st = json_get_number(root, keys[k], dst[k], path, e);
			if (st == PPLAN_EINPUT)
				goto out;
			if (st == PPLAN_OK && !(*dst[k] > 0 && *dst[k] <= 1e7)) {
				st = perr_set(e, PPLAN_EINPUT,
					      "%s: %s must be more than 0 and at most 10000000, got %g",
					      path, keys[k], *dst[k]);
				goto out;
			}
		}
	}
	st = json_get_number(root, "nvlink_link_gbps", &c->nvlink_link_gbps,
			     path, e);
	if (st == PPLAN_EINPUT)
		goto out;
	if (!(c->nvlink_link_gbps > 0)) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: nvlink_link_gbps must be positive", path);
		goto out;
	}
	if ((st = load_link(root, "nvlink", &c->nvlink, path, e)) != PPLAN_OK ||
	    (st = load_link(root, "pcie", &c->pcie, path, e)) != PPLAN_OK ||
	    (st = load_link(root, "net", &c->net, path, e)) != PPLAN_OK)
		goto out;
	mat = cJSON_GetObjectItemCaseSensitive(root, "nvlink_matrix");
	c->has_link_matrix = 0;
	memset(c->nvlinks, 0, sizeof c->nvlinks);
	if (mat && !cJSON_IsNull(mat)) {
		int n = cJSON_GetArraySize(mat);
		if (!cJSON_IsArray(mat) || n != c->gpus_per_node ||
		    n > CLUSTER_MAX_NODE_GPUS) {
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: nvlink_matrix must be %d rows of %d link counts (gpus_per_node)",
				      path, c->gpus_per_node, c->gpus_per_node);
			goto out;
		}
		for (int i = 0; i < n; i++) {
			const cJSON *row = cJSON_GetArrayItem(mat, i);
			if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != n) {
				st = perr_set(e, PPLAN_EINPUT,
					      "%s: nvlink_matrix row %d must have %d entries",
					      path, i, n);
				goto out;
			}
			for (int j = 0; j < n; j++) {
				const cJSON *x = cJSON_GetArrayItem(row, j);
				if (!cJSON_IsNumber(x) || x->valuedouble < 0 ||
				    x->valuedouble > 64) {
					st = perr_set(e, PPLAN_EINPUT,
						      "%s: nvlink_matrix[%d][%d] must be a link count 0..64",
						      path, i, j);
					goto out;
				}
				c->nvlinks[i][j] = (int)x->valuedouble;
			}
		}
		for (int i = 0; i < n; i++)
			for (int j = 0; j <= i; j++)
				if (c->nvlinks[i][j] != c->nvlinks[j][i] ||
				    (i == j && c->nvlinks[i][i] != 0)) {
					st = perr_set(e, PPLAN_EINPUT,
						      "%s: nvlink_matrix must be symmetric with a zero diagonal; [%d][%d] is %d, [%d][%d] is %d",
						      path, i, j, c->nvlinks[i][j], j, i,
						      c->nvlinks[j][i]);
					goto out;
				}
		if (c->nvlink.cls == LINK_NVSWITCH &&
		    cJSON_GetObjectItemCaseSensitive(root, "nvlink") &&
		    cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetObjectItemCaseSensitive(root, "nvlink"), "class")) {
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: nvlink_matrix is given but nvlink.class is nvswitch; a switched node has no per-pair matrix (use class nvlink)",
				      path);
			goto out;
		}
		if (c->nvlink.cls == LINK_NVSWITCH)
			c->nvlink.cls = LINK_NVLINK;
		c->has_link_matrix = 1;
	}
	st = size_nodes(c, gpus, c->name, e);
	if (st != PPLAN_OK)
		perr_prefix(e, path);
out:
	cJSON_Delete(root);
	return st;
}

static cJSON *link_json(const struct link *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "class", link_class_name(l->cls));
	cJSON_AddNumberToObject(o, "bw_gbps", l->bw_gbps);
	cJSON_AddNumberToObject(o, "latency_us", l->latency_s * 1e6);
	cJSON_AddNumberToObject(o, "efficiency", l->eff);
	return o;
}

enum pplan_status cluster_save(const struct cluster *c, const char *path,
			       struct perr *e)
{
	cJSON *root = cJSON_CreateObject();
	enum pplan_status st;

	cJSON_AddStringToObject(root, "schema", "pplan.cluster/1");
	cJSON_AddStringToObject(root, "name", c->name);
	cJSON_AddStringToObject(root, "source", c->source);
	cJSON_AddStringToObject(root, "gpu", c->gpu.name);
	cJSON_AddNumberToObject(root, "gpus_per_node", c->gpus_per_node);
	cJSON_AddNumberToObject(root, "num_nodes", c->num_nodes);
	cJSON_AddNumberToObject(root, "nvlink_domain", c->nvlink_domain);
	cJSON_AddNumberToObject(root, "nics_per_node", c->nics_per_node);
	cJSON_AddNumberToObject(root, "nic_gbps", c->nic_gbps);
	cJSON_AddBoolToObject(root, "rail_aligned", c->rail_aligned);
	cJSON_AddNumberToObject(root, "nvlink_link_gbps", c->nvlink_link_gbps);
	cJSON_AddItemToObject(root, "nvlink", link_json(&c->nvlink));
	cJSON_AddItemToObject(root, "pcie", link_json(&c->pcie));
	cJSON_AddItemToObject(root, "net", link_json(&c->net));
	if (c->has_link_matrix) {
		cJSON *m = cJSON_CreateArray();
		for (int i = 0; i < c->gpus_per_node; i++)
			cJSON_AddItemToArray(m, cJSON_CreateIntArray(c->nvlinks[i],
								     c->gpus_per_node));
		cJSON_AddItemToObject(root, "nvlink_matrix", m);
	} else {
		cJSON_AddNullToObject(root, "nvlink_matrix");
	}
	st = json_write_atomic(path, root, e);
	cJSON_Delete(root);
	return st;
}

/* ---- which link a group uses ------------------------------------------- */

/* In-node bandwidth of the groups of `size` GPUs spaced `stride` apart
 * (size * stride <= gpus_per_node): the slowest group's rings. */
static double mesh_group_gbps(const struct cluster *c, int size, int stride)
{
	int span = size * stride, gpn = c->gpus_per_node;
	double worst = -1;

	for (int base = 0; base + span <= gpn; base += span)
		for (int o = 0; o < stride; o++) {
			int local[CLUSTER_MAX_NODE_GPUS];
			double bw;
			for (int k = 0; k < size; k++)
				local[k] = base + o + k * stride;
			bw = cluster_ring_gbps(c, local, size);
			if (worst < 0 || bw < worst)
				worst = bw;
		}
	return worst < 0 ? 0 : worst;
}

/* The link inside a node for groups of `size` spaced `stride` apart. */
static struct link intra_link(const struct cluster *c, int size, int stride)
{
	struct link l = c->nvlink;
	if (c->nvlink.bw_gbps <= 0)
		return c->pcie;
	if (c->has_link_matrix && size > 1 && (long)size * stride <= c->gpus_per_node) {
		double bw = mesh_group_gbps(c, size, stride);
		if (bw <= 0)
			return c->pcie; /* no NVLink ring: NCCL goes through PCIe */
		l.cls = LINK_NVLINK;
		l.bw_gbps = bw;
	}
	return l;
}

struct link cluster_group_link(const struct cluster *c, int size, int stride)
{
	int dom = c->nvlink_domain > 0 ? c->nvlink_domain : c->gpus_per_node;
	long span = (long)size * stride;
	struct link l;

	if (size <= 1)
		return c->nvlink;
	if (span <= dom && dom % span == 0) {
		/* Every group of this dimension stays inside one domain. */
		return intra_link(c, size, stride);
	}
	/* The group spans domains: its ring leaves each domain through the
	 * NICs.  k members per domain share the inter-node hop over k NICs
	 * (NCCL spreads channels over the NICs of the GPUs it uses), so the
	 * per-rank bus bandwidth is min(intra, k x NIC share per GPU). */
	l = c->net;
	{
		int k = stride < dom ? dom / stride : 1;
		struct link in;
		if (k > size)
			k = size;
		if (k < 1)
			k = 1;
		if (dom % stride != 0 && stride < dom)
			k = 1;
		in = k > 1 ? intra_link(c, k, stride) : c->nvlink;
		if (in.bw_gbps <= 0)
			in = c->pcie;
		l.bw_gbps = fmin(c->net.bw_gbps * k, in.bw_gbps);
	}
	return l;
}
