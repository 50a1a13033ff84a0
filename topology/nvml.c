/*
 * nvml.c: NVML loaded at run time (see nvml.h).  The declarations below
 * restate NVML's public ABI for the calls used: nvmlPciInfo_t as of the
 * _v3 PCI info call, link indices up to NVML_NVLINK_MAX_LINKS (18), the
 * remote device types GPU 0, IBM NPU 1, switch 2.  The handle stays open
 * (the driver's libraries do not like being unloaded).
 */
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;
typedef struct nvml_device *nvml_dev;

struct nvml_pci {                /* nvmlPciInfo_t */
	char bus_id_legacy[16];
	unsigned domain, bus, device;
	unsigned pci_device_id;      /* (device << 16) | vendor */
	unsigned pci_subsystem_id;
	char bus_id[32];
};

#define NVML_OK 0
#define NVML_MAX_LINKS 18
#define NVML_REMOTE_GPU 0
#define NVML_REMOTE_NPU 1
#define NVML_REMOTE_SWITCH 2

struct nvml_api {
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*handle)(unsigned, nvml_dev *);
	nvml_ret (*pci)(nvml_dev, struct nvml_pci *);
	nvml_ret (*name)(nvml_dev, char *, unsigned);
	nvml_ret (*link_state)(nvml_dev, unsigned, int *);
	nvml_ret (*link_version)(nvml_dev, unsigned, unsigned *);
	nvml_ret (*link_remote_pci)(nvml_dev, unsigned, struct nvml_pci *);
	nvml_ret (*link_remote_type)(nvml_dev, unsigned, int *); /* optional */
};

static int load_sym(void *lib, const char *name, void *fn)
{
	void *p = dlsym(lib, name);
	memcpy(fn, &p, sizeof p); /* object -> function pointer, as POSIX allows */
	return p != NULL;
}

static const char *load_api(struct nvml_api *a, const char **libname)
{
	const char *env = getenv("PPLAN_NVML_LIBRARY");
	void *lib;

	*libname = env && *env ? env : "libnvidia-ml.so.1";
	lib = dlopen(*libname, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return "cannot be loaded (no NVIDIA driver on this host)";
	memset(a, 0, sizeof *a);
	if (!load_sym(lib, "nvmlInit_v2", &a->init) ||
	    !load_sym(lib, "nvmlShutdown", &a->shutdown) ||
	    !load_sym(lib, "nvmlErrorString", &a->error_string) ||
	    !load_sym(lib, "nvmlDeviceGetCount_v2", &a->count) ||
	    !load_sym(lib, "nvmlDeviceGetHandleByIndex_v2", &a->handle) ||
	    !load_sym(lib, "nvmlDeviceGetPciInfo_v3", &a->pci) ||
	    !load_sym(lib, "nvmlDeviceGetName", &a->name) ||
	    !load_sym(lib, "nvmlDeviceGetNvLinkState", &a->link_state) ||
	    !load_sym(lib, "nvmlDeviceGetNvLinkVersion", &a->link_version) ||
	    !load_sym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
		      &a->link_remote_pci))
		return "lacks an NVLink call pplan needs (driver too old)";
	load_sym(lib, "nvmlDeviceGetNvLinkRemoteDeviceType", &a->link_remote_type);
	return NULL;
}

enum pplan_status nvml_probe(struct host_topo *h, struct perr *e)
{
	struct nvml_api a;
	const char *libname, *why;
	unsigned n = 0;
	nvml_dev dev[HOST_MAX_GPUS];
	int map[HOST_MAX_GPUS];
	int version = 0;
	nvml_ret r;

	why = load_api(&a, &libname);
	if (why)
		return perr_set(e, PPLAN_ENOTFOUND, "NVML (%s) %s", libname, why);
	if ((r = a.init()) != NVML_OK)
		return perr_set(e, PPLAN_ENOTFOUND, "NVML init failed: %s",
				a.error_string(r));
	if ((r = a.count(&n)) != NVML_OK || n == 0) {
		a.shutdown();
		return perr_set(e, PPLAN_ENOTFOUND, "NVML sees no GPU");
	}
	if (n > HOST_MAX_GPUS)
		n = HOST_MAX_GPUS;
	if (h->ngpus != 0 && h->ngpus != (int)n)
		host_note(h, "hwloc found %d GPUs, NVML %u; NVML's are used",
			  h->ngpus, n);
	for (unsigned i = 0; i < n; i++) {
		struct nvml_pci p;
		map[i] = -1;
		if (a.handle(i, &dev[i]) != NVML_OK ||
		    a.pci(dev[i], &p) != NVML_OK) {
			a.shutdown();
			return perr_set(e, PPLAN_ENOTFOUND,
					"NVML cannot describe GPU %u", i);
		}
		/* Not seen by hwloc (or hwloc found a different set):
		 * described from NVML. */
		map[i] = host_gpu_by_bus(h, p.bus_id);
		if (map[i] < 0)
			continue;
		a.name(dev[i], h->gpu[map[i]].model, sizeof h->gpu[map[i]].model);
	}
	memset(h->nvlinks, 0, sizeof h->nvlinks);
	memset(h->nvlink_gbps, 0, sizeof h->nvlink_gbps);
	for (unsigned i = 0; i < n; i++) {
		int gi = map[i];
		if (gi < 0)
			continue;
		h->gpu[gi].switch_links = 0;
		h->gpu[gi].switch_gbps = 0;
		for (unsigned l = 0; l < NVML_MAX_LINKS; l++) {
			int active = 0, type = -1, gj = -1;
			unsigned v = 0;
			struct nvml_pci rp;
			if (a.link_state(dev[i], l, &active) != NVML_OK || !active)
				continue;
			if (a.link_version(dev[i], l, &v) == NVML_OK && (int)v > version)
				version = (int)v;
			if (a.link_remote_type)
				a.link_remote_type(dev[i], l, &type);
			if (type != NVML_REMOTE_SWITCH &&
			    a.link_remote_pci(dev[i], l, &rp) == NVML_OK)
				for (unsigned j = 0; j < n; j++)
					if (j != i && map[j] >= 0 &&
					    host_same_bus(h->gpu[map[j]].bus_id, rp.bus_id))
						gj = map[j];
			if (gj >= 0)
				h->nvlinks[gi][gj]++;
			else if (type == NVML_REMOTE_NPU)
				host_note(h, "GPU%d link %u goes to a CPU (NVLink to POWER)",
					  gi, l);
			else
				h->gpu[gi].switch_links++;
		}
		h->gpu[gi].nvlink_version = version;
	}
	a.shutdown();
	h->link_gbps = host_nvlink_version_gbps(version);
	if (h->link_gbps <= 0)
		h->link_gbps = 25.0;
	for (int i = 0; i < h->ngpus; i++) {
		h->gpu[i].switch_gbps = h->gpu[i].switch_links * h->link_gbps;
		if (h->gpu[i].switch_links > 0)
			h->nvswitch = 1;
	}
	host_classify_nvlink(h, 0);
	snprintf(h->nvlink_source, sizeof h->nvlink_source, "NVML");
	return PPLAN_OK;
}
