/*
 * fake_nvml.c: a stand-in for libnvidia-ml.so.1 that test_nvml loads
 * through PPLAN_NVML_LIBRARY, so that NVML discovery is tested on
 * machines without a driver.  FAKE_NVML_MODE picks the machine:
 *   "switch" (default): 8 GPUs, 18 active NVLink 4 links each to NVSwitches
 *   "pair":             2 GPUs joined by 4 NVLink 3 links (an NVLink bridge)
 * The signatures restate NVML's public ABI for these calls.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct pci {
	char legacy[16];
	unsigned domain, bus, device, dev_id, subsys;
	char bus_id[32];
};

/* Exported with NVML's names; prototypes here keep -Wmissing-prototypes quiet. */
int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
int nvmlDeviceGetPciInfo_v3(void *d, struct pci *p);
int nvmlDeviceGetName(void *d, char *name, unsigned len);
int nvmlDeviceGetNvLinkState(void *d, unsigned l, int *active);
int nvmlDeviceGetNvLinkVersion(void *d, unsigned l, unsigned *v);
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *d, unsigned l, struct pci *p);
int nvmlDeviceGetNvLinkRemoteDeviceType(void *d, unsigned l, int *type);

static int pair_mode(void)
{
	const char *m = getenv("FAKE_NVML_MODE");
	return m && strcmp(m, "pair") == 0;
}

static char handles[8]; /* a device handle is the address of its slot */

static unsigned idx(void *d) { return (unsigned)((char *)d - handles); }

static void fill(struct pci *p, unsigned gpu)
{
	memset(p, 0, sizeof *p);
	p->bus = 0x1b + 0x10 * gpu;
	snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", p->bus);
}

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { return r ? "fake error" : "success"; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = pair_mode() ? 2 : 8; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
	if (i >= 8)
		return 2;
	*d = &handles[i];
	return 0;
}
int nvmlDeviceGetPciInfo_v3(void *d, struct pci *p)
{
	fill(p, idx(d));
	return 0;
}
int nvmlDeviceGetName(void *d, char *name, unsigned len)
{
	snprintf(name, len, "%s", pair_mode() ? "NVIDIA A100-PCIE-40GB"
					      : "NVIDIA H100 80GB HBM3");
	return 0;
}
int nvmlDeviceGetNvLinkState(void *d, unsigned l, int *active)
{
	unsigned links = pair_mode() ? 4 : 18;
	if (l >= 18)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*active = l < links;
	return 0;
}
int nvmlDeviceGetNvLinkVersion(void *d, unsigned l, unsigned *v)
{
	*v = pair_mode() ? 4 : 6; /* NVLink 3.0, 4.0 */
	return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *d, unsigned l, struct pci *p)
{
	if (pair_mode())
		fill(p, 1 - idx(d));
	else
		memset(p, 0, sizeof *p);
	return 0;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void *d, unsigned l, int *type)
{
	*type = pair_mode() ? 0 : 2; /* GPU, switch */
	return 0;
}
