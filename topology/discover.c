/*
 * discover.c: hwloc host discovery (see discover.h).  PCIe distances
 * follow nvidia-smi's words: two devices whose lowest common ancestor is
 * one PCIe switch (its upstream port, directly above their downstream
 * ports) are PIX, deeper PCIe bridges PXB, a host bridge PHB, two host
 * bridges of one NUMA node NODE, anything across sockets SYS.
 * NVLinkBandwidth values are MB/s (hwloc's unit); link counts are those
 * bandwidths divided by one link's (20 GB/s for P100, 50 for Blackwell,
 * else 25).
 */
#include "discover.h"

#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwlocxml.h"
#include "jsonio.h"

#define PCI_CLASS_NETWORK 0x02
#define PCI_CLASS_DISPLAY 0x03
#define PCI_CLASS_IB 0x0c06
#define PCI_CLASS_BRIDGE_OTHER 0x0680
#define VENDOR_NVIDIA 0x10de

/* ---- hwloc 3.x XML -> 2.x ------------------------------------------------ */

/* v3 OS device types are a bitmask (storage 1, memory 2, GPU 4, coproc 8,
 * network 16, OpenFabrics 32, DMA 64); v2 used one number (block 0,
 * GPU 1, network 2, OpenFabrics 3, DMA 4, coproc 5). */
static int osdev_v3_to_v2(unsigned long t, const char *tag, size_t taglen)
{
	if (t & 32)
		return 3;
	if (t & 16)
		return 2;
	if (t & 64)
		return 4;
	if (t & 4) {
		static const char *const coproc[] = {
			"subtype=\"CUDA\"", "subtype=\"OpenCL\"",
			"subtype=\"LevelZero\"", NULL
		};
		for (int i = 0; coproc[i]; i++) {
			size_t n = strlen(coproc[i]);
			for (size_t k = 0; k + n <= taglen; k++)
				if (memcmp(tag + k, coproc[i], n) == 0)
					return 5;
		}
		return 1;
	}
	if (t & 8)
		return 5;
	return 0;
}

char *discover_xml_downgrade(const char *xml)
{
	static const char vkey[] = "<topology version=\"3.";
	static const char okey[] = "osdev_type=\"";
	size_t len = strlen(xml);
	/* Each osdev_type value becomes one digit and the version "2.0":
	 * an empty value or "3." grows by a byte, never more than one per
	 * occurrence, and each occurrence takes at least 12 input bytes. */
	char *out = malloc(len + len / 12 + 2), *w = out;
	const char *p = xml, *v;

	if (!out)
		return NULL;
	v = strstr(xml, vkey);
	if (!v) {
		memcpy(out, xml, len + 1);
		return out;
	}
	while (*p) {
		if (p == v) {
			/* "3.x" -> "2.0": same length */
			memcpy(w, "<topology version=\"2.0", 22);
			w += 22;
			p += strlen(vkey);
			while (*p && *p != '"')
				p++;
			continue;
		}
		if (strncmp(p, okey, sizeof okey - 1) == 0) {
			const char *tag = p, *end;
			char *num_end;
			unsigned long t;

			while (tag > xml && *tag != '<')
				tag--;
			end = strchr(p, '>');
			t = strtoul(p + sizeof okey - 1, &num_end, 10);
			if (*num_end == '"' && num_end > p + sizeof okey - 1) {
				w += sprintf(w, "%s%d\"", okey,
					     osdev_v3_to_v2(t, tag,
							    end ? (size_t)(end - tag)
								: strlen(tag)));
				p = num_end + 1;
				continue;
			}
		}
		*w++ = *p++;
	}
	*w = '\0';
	return out;
}

/* ---- PCI helpers ---------------------------------------------------------- */

static void busid(hwloc_obj_t o, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%01x", o->attr->pcidev.domain,
		 o->attr->pcidev.bus, o->attr->pcidev.dev, o->attr->pcidev.func);
}

static int is_bridge(hwloc_obj_t o)
{
	return o && o->type == HWLOC_OBJ_BRIDGE;
}

static enum pci_path pci_path_between(hwloc_obj_t a, hwloc_obj_t b)
{
	hwloc_obj_t up[64], lca = NULL;
	int n = 0;

	for (hwloc_obj_t x = a; x && n < 64; x = x->parent)
		up[n++] = x;
	for (hwloc_obj_t y = b; y && !lca; y = y->parent)
		for (int i = 0; i < n; i++)
			if (up[i] == y) {
				lca = y;
				break;
			}
	if (!lca)
		return PATH_UNKNOWN;
	if (is_bridge(lca)) {
		hwloc_obj_t pa = a->parent, pb = b->parent;
		if (lca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
			return PATH_PHB;
		/* One switch: each device sits on a downstream port of the
		 * switch whose upstream port is the LCA (or directly on it). */
		if ((pa == lca || (is_bridge(pa) && pa->parent == lca)) &&
		    (pb == lca || (is_bridge(pb) && pb->parent == lca)))
			return PATH_PIX;
		return PATH_PXB;
	}
	/* A normal object: same NUMA node or across the CPU interconnect. */
	if (lca->nodeset && hwloc_bitmap_weight(lca->nodeset) <= 1)
		return PATH_NODE;
	return PATH_SYS;
}

static int pci_numa(hwloc_topology_t t, hwloc_obj_t o)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, o);
	if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1)
		return -1;
	return hwloc_bitmap_first(anc->nodeset);
}

static double link_gbps_for_model(const char *model)
{
	if (strstr(model, "P100"))
		return 20.0;
	if (strstr(model, "B200") || strstr(model, "B100") ||
	    strstr(model, "GB200") || strstr(model, "B300"))
		return 50.0;
	return 25.0;
}

/* ---- the walk ------------------------------------------------------------ */

struct walk {
	hwloc_obj_t gpu[HOST_MAX_GPUS];
	hwloc_obj_t nic[HOST_MAX_NICS];
	hwloc_obj_t sw[64];
	int nsw;
};

static void add_gpu(hwloc_topology_t t, struct host_topo *h, struct walk *w,
		    hwloc_obj_t o)
{
	struct host_gpu *g = &h->gpu[h->ngpus];
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, o);
	const char *model = NULL;

	for (hwloc_obj_t c = o->io_first_child; c && !model; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE)
			model = hwloc_obj_get_info_by_name(c, "GPUModel");
	if (!model)
		model = hwloc_obj_get_info_by_name(o, "PCIDevice");
	busid(o, g->bus_id, sizeof g->bus_id);
	if (model)
		snprintf(g->model, sizeof g->model, "%s", model);
	else
		snprintf(g->model, sizeof g->model, "NVIDIA [10de:%04x]",
			 o->attr->pcidev.device_id);
	g->numa = pci_numa(t, o);
	if (anc && anc->cpuset)
		hwloc_bitmap_list_snprintf(g->cpu_affinity, sizeof g->cpu_affinity,
					   anc->cpuset);
	g->nic = -1;
	g->nic_path = PATH_UNKNOWN;
	w->gpu[h->ngpus++] = o;
}

static void add_nic(hwloc_topology_t t, struct host_topo *h, struct walk *w,
		    hwloc_obj_t o)
{
	struct host_nic *n = &h->nic[h->nnics];
	const char *rdma = NULL, *net = NULL;

	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name)
			continue;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && !rdma)
			rdma = c->name;
		else if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
			net = c->name;
	}
	busid(o, n->bus_id, sizeof n->bus_id);
	if (rdma || net)
		snprintf(n->name, sizeof n->name, "%s", rdma ? rdma : net);
	else
		busid(o, n->name, sizeof n->name);
	snprintf(n->netdev, sizeof n->netdev, "%s", net ? net : "");
	if (o->attr->pcidev.class_id == PCI_CLASS_IB)
		n->kind = NIC_IB;
	else if (rdma)
		n->kind = NIC_ROCE; /* an RDMA device on an Ethernet function */
	else if ((o->attr->pcidev.class_id >> 8) == PCI_CLASS_NETWORK)
		n->kind = NIC_ETHERNET;
	else
		n->kind = NIC_OTHER;
	n->numa = pci_numa(t, o);
	w->nic[h->nnics++] = o;
}

/* The link rate of a live NIC from sysfs (PPLAN_SYSFS_ROOT replaces /sys
 * for tests): an RDMA device's port 1 "rate" ("400 Gb/sec (4X NDR)"), or
 * a network interface's "speed" in Mb/s (-1 when down or virtual). */
double discover_nic_rate_gbits(const struct host_nic *n)
{
	const char *root = getenv("PPLAN_SYSFS_ROOT");
	char path[256], buf[64];
	FILE *f;
	double v = 0;

	if (!root || !*root)
		root = "/sys";
	if (n->kind == NIC_IB || n->kind == NIC_ROCE) {
		snprintf(path, sizeof path, "%s/class/infiniband/%s/ports/1/rate",
			 root, n->name);
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(buf, sizeof buf, f) && sscanf(buf, "%lf", &v) == 1 &&
			    v > 0) {
				fclose(f);
				return v;
			}
			fclose(f);
		}
	}
	snprintf(path, sizeof path, "%s/class/net/%s/speed", root,
		 n->netdev[0] ? n->netdev : n->name);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(buf, sizeof buf, f) && sscanf(buf, "%lf", &v) == 1 && v > 0) {
			fclose(f);
			return v / 1000.0;
		}
		fclose(f);
	}
	return 0;
}

static void read_nvlink_matrix(hwloc_topology_t t, struct host_topo *h,
			       struct walk *w)
{
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;
	double link;

	if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &d, 0) != 0 ||
	    nr < 1 || !d)
		return;
	link = link_gbps_for_model(h->ngpus ? h->gpu[0].model : "");
	h->link_gbps = link;
	for (unsigned i = 0; i < d->nbobjs; i++) {
		int gi = -1;
		hwloc_obj_t oi = d->objs[i];
		hwloc_obj_t pi = oi && oi->type == HWLOC_OBJ_OS_DEVICE ? oi->parent : oi;
		for (int g = 0; g < h->ngpus; g++)
			if (w->gpu[g] == pi)
				gi = g;
		if (gi < 0)
			continue;
		for (unsigned j = 0; j < d->nbobjs; j++) {
			hwloc_obj_t oj = d->objs[j];
			hwloc_obj_t pj = oj && oj->type == HWLOC_OBJ_OS_DEVICE ? oj->parent : oj;
			double gbps = (double)d->values[i * d->nbobjs + j] / 1000.0;
			int gj = -1, links;
			if (i == j || gbps <= 0 || !pj)
				continue;
			links = (int)lround(gbps / link);
			for (int g = 0; g < h->ngpus; g++)
				if (w->gpu[g] == pj)
					gj = g;
			if (gj >= 0) {
				h->nvlinks[gi][gj] = links;
				h->nvlink_gbps[gi][gj] = gbps;
			} else if (pj->type == HWLOC_OBJ_PCI_DEVICE) {
				h->gpu[gi].switch_links += links;
				h->gpu[gi].switch_gbps += gbps;
				h->nvswitch = 1;
			} else {
				host_note(h, "GPU%d has %.0f GB/s of NVLink to %s %u",
					  gi, gbps, hwloc_obj_type_string(pj->type),
					  pj->logical_index);
			}
		}
	}
	snprintf(h->nvlink_source, sizeof h->nvlink_source,
		 "hwloc NVLinkBandwidth");
	hwloc_distances_release(t, d);
}

static int cmp_bus(const void *pa, const void *pb)
{
	const struct hwloc_pcidev_attr_s *a = &(*(const hwloc_obj_t *)pa)->attr->pcidev;
	const struct hwloc_pcidev_attr_s *b = &(*(const hwloc_obj_t *)pb)->attr->pcidev;
	unsigned long ka = ((unsigned long)a->domain << 24) | ((unsigned long)a->bus << 16) |
			   ((unsigned long)a->dev << 8) | a->func;
	unsigned long kb = ((unsigned long)b->domain << 24) | ((unsigned long)b->bus << 16) |
			   ((unsigned long)b->dev << 8) | b->func;
	return (ka > kb) - (ka < kb);
}

static void walk_topology(hwloc_topology_t t, struct host_topo *h)
{
	struct walk w;
	hwloc_obj_t o = NULL, gpus[HOST_MAX_GPUS];
	int skipped = 0, ngpu = 0;

	memset(&w, 0, sizeof w);
	h->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
	h->numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	h->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	h->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	while ((o = hwloc_get_next_pcidev(t, o)) != NULL) {
		unsigned cls = o->attr->pcidev.class_id;
		if (o->attr->pcidev.vendor_id == VENDOR_NVIDIA &&
		    (cls >> 8) == PCI_CLASS_DISPLAY) {
			if (ngpu < HOST_MAX_GPUS)
				gpus[ngpu++] = o;
			else
				skipped++;
		} else if ((o->subtype && strcmp(o->subtype, "NVSwitch") == 0) ||
			   (o->attr->pcidev.vendor_id == VENDOR_NVIDIA &&
			    cls == PCI_CLASS_BRIDGE_OTHER)) {
			if (w.nsw < 64)
				w.sw[w.nsw++] = o;
		} else if ((cls >> 8) == PCI_CLASS_NETWORK || cls == PCI_CLASS_IB) {
			if (h->nnics < HOST_MAX_NICS)
				add_nic(t, h, &w, o);
		}
	}
	/* CUDA and nvidia-smi number GPUs in PCI bus id order. */
	qsort(gpus, (size_t)ngpu, sizeof gpus[0], cmp_bus);
	for (int i = 0; i < ngpu; i++)
		add_gpu(t, h, &w, gpus[i]);
	if (skipped)
		host_note(h, "%d GPUs beyond the first %d were ignored", skipped,
			  HOST_MAX_GPUS);
	h->nvswitch_count = w.nsw;
	for (int g = 0; g < h->ngpus; g++)
		for (int n = 0; n < h->nnics; n++)
			h->gpu_nic[g][n] = pci_path_between(w.gpu[g], w.nic[n]);
	read_nvlink_matrix(t, h, &w);
	if (w.nsw > 0 && h->ngpus > 1)
		h->nvswitch = 1;
	host_classify_nvlink(h, 0);
	host_assign_nics(h);
}

/* Loads t from hwloc: the live host when conv is NULL, else the XML text
 * conv (already checked and downgraded), then walks it into h. */
static enum pplan_status load_and_walk(const char *conv, const char *name,
				       struct host_topo *h, struct perr *e)
{
	hwloc_topology_t t = NULL;
	enum pplan_status st = PPLAN_OK;

	if (hwloc_topology_init(&t) != 0)
		return perr_set(e, PPLAN_ESYSTEM, "hwloc_topology_init failed");
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (conv && hwloc_topology_set_xmlbuffer(t, conv, (int)strlen(conv) + 1) != 0) {
		st = perr_set(e, PPLAN_EINPUT,
			      "%s: malformed hwloc XML (hwloc %s cannot parse it: %s)",
			      name, HWLOC_VERSION, strerror(errno));
		goto out;
	}
	if (hwloc_topology_load(t) != 0) {
		if (conv)
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: malformed hwloc XML (hwloc %s could not load it: %s)",
				      name, HWLOC_VERSION, strerror(errno));
		else
			st = perr_set(e, PPLAN_ESYSTEM,
				      "hwloc could not discover this host: %s",
				      strerror(errno));
		goto out;
	}
	if (conv) {
		const char *hn = hwloc_obj_get_info_by_name(
			hwloc_get_root_obj(t), "HostName");
		const char *base = strrchr(name, '/');
		snprintf(h->hostname, sizeof h->hostname, "%s",
			 hn ? hn : base ? base + 1 : name);
	} else if (gethostname(h->hostname, sizeof h->hostname) != 0) {
		snprintf(h->hostname, sizeof h->hostname, "localhost");
	}
	h->hostname[sizeof h->hostname - 1] = '\0';
	walk_topology(t, h);
out:
	hwloc_topology_destroy(t);
	return st;
}

enum pplan_status discover_hwloc_xml(const char *xml, size_t len,
				     const char *name, struct host_topo *h,
				     struct perr *e)
{
	char *conv = NULL;
	enum pplan_status st;

	host_init(h);
	if (memchr(xml, '\0', len))
		return perr_set(e, PPLAN_EINPUT, "%s: a NUL byte in an XML file", name);
	if (!strstr(xml, "<topology"))
		return perr_set(e, PPLAN_EINPUT,
				"%s: not an hwloc XML export (no <topology> element)",
				name);
	if (!strstr(xml, "</topology>"))
		return perr_set(e, PPLAN_EINPUT,
				"%s: malformed hwloc XML (no closing </topology>; truncated?)",
				name);
	/* hwloc trusts its input (hwlocxml.h): check it first. */
	st = hwlocxml_check(xml, len, name, e);
	if (st != PPLAN_OK)
		return st;
	conv = discover_xml_downgrade(xml);
	if (!conv)
		return perr_set(e, PPLAN_ENOMEM, "out of memory reading %s", name);
	snprintf(h->source, sizeof h->source, "hwloc XML %s", name);
	st = load_and_walk(conv, name, h, e);
	free(conv);
	return st;
}

enum pplan_status discover_hwloc(const char *xml_path, struct host_topo *h,
				 struct perr *e)
{
	char *text = NULL;
	long len = 0;
	enum pplan_status st;

	if (xml_path) {
		host_init(h);
		st = file_read(xml_path, DISCOVER_XML_MAX_BYTES,
			       "an hwloc XML export", &text, &len, e);
		if (st == PPLAN_OK)
			st = discover_hwloc_xml(text, (size_t)len, xml_path, h, e);
		free(text);
		return st;
	}
	host_init(h);
	snprintf(h->source, sizeof h->source, "hwloc %s (this host)",
		 HWLOC_VERSION);
	st = load_and_walk(NULL, "this host", h, e);
	if (st == PPLAN_OK) /* an export says nothing about link rates */
		for (int i = 0; i < h->nnics; i++)
			h->nic[i].gbits = discover_nic_rate_gbits(&h->nic[i]);
	return st;
}
