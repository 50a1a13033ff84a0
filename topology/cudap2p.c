/*
 * cudap2p.c: NVLink pairs from CUDA peer-to-peer attributes (cudap2p.h).
 * A pair with native peer atomics is linked by NVLink (PCIe peers do not
 * support them); the link count is unknown, so each such pair gets one
 * link and, when every pair of four or more GPUs is linked, the node is
 * taken to have an NVSwitch with the GPU model's full link count.
 */
#include "cudap2p.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cudamod.h"

enum pplan_status cudap2p_probe(struct host_topo *h, struct perr *e)
{
	char path[PATH_MAX + 32], why[512];
	const struct pplan_cuda_api *api = cudamod_load(path, sizeof path, why, sizeof why);
	int n, map[HOST_MAX_GPUS], linked = 0, pairs = 0;

	if (!api)
		return perr_set(e, PPLAN_ENOTFOUND, "%s", why);
	if (!api->device_count || !api->device_info || !api->p2p)
		return perr_set(e, PPLAN_ENOTFOUND, "%s lacks the device queries", path);
	n = api->device_count(why, sizeof why);
	if (n < 0)
		return perr_set(e, PPLAN_ENOTFOUND, "%s", why);
	if (n == 0)
		return perr_set(e, PPLAN_ENOTFOUND, "the CUDA runtime sees no GPU");
	if (n > HOST_MAX_GPUS)
		n = HOST_MAX_GPUS;
	if (h->ngpus != 0 && h->ngpus != n)
		host_note(h, "hwloc found %d GPUs, CUDA %d; CUDA's are used", h->ngpus, n);
	for (int i = 0; i < n; i++) {
		char bus[32] = "", name[64] = "";
		map[i] = -1;
		if (api->device_info(i, bus, sizeof bus, name, sizeof name) != 0)
			return perr_set(e, PPLAN_ENOTFOUND, "CUDA cannot describe GPU %d", i);
		map[i] = host_gpu_by_bus(h, bus);
		if (map[i] < 0)
			continue;
		snprintf(h->gpu[map[i]].model, sizeof h->gpu[map[i]].model, "%s", name);
	}
	memset(h->nvlinks, 0, sizeof h->nvlinks);
	memset(h->nvlink_gbps, 0, sizeof h->nvlink_gbps);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			struct pplan_cuda_p2p a, b;
			if (i == j || map[i] < 0 || map[j] < 0)
				continue;
			if (j > i)
				pairs++;
			if (api->p2p(i, j, &a) != 0 || api->p2p(j, i, &b) != 0)
				continue;
			if (a.access && b.access && a.native_atomics && b.native_atomics) {
				h->nvlinks[map[i]][map[j]] = 1;
				if (j > i)
					linked++;
			}
		}
	if (linked == pairs && n >= 4) {
		/* Every pair linked: an NVSwitch fabric.  The GPU model says
		 * how many links each GPU has into it. */
		const struct gpu_spec *g = host_guess_gpu(h->gpu[map[0]].model);
		h->nvswitch = 1;
		if (g && g->nvlink_links > 0) {
			h->link_gbps = g->nvlink_gbps / g->nvlink_links;
			for (int i = 0; i < h->ngpus; i++)
				for (int j = 0; j < h->ngpus; j++)
					if (h->nvlinks[i][j])
						h->nvlinks[i][j] = g->nvlink_links;
		}
	}
	if (h->link_gbps <= 0)
		h->link_gbps = 25.0;
	host_classify_nvlink(h, 0);
	host_note(h, "NVLink pairs from CUDA peer-to-peer attributes (%d of %d pairs); link counts are not known from CUDA%s",
		  linked, pairs, h->nvswitch ? ", all pairs linked: taken as an NVSwitch" : ", one link assumed per pair");
	snprintf(h->nvlink_source, sizeof h->nvlink_source, "CUDA peer-to-peer");
	return PPLAN_OK;
}
