/*
 * fake_cuda.c: a stand-in for libpplan_cuda.so for the tests: four GPUs
 * where GPU pairs (0,1) and (2,3) are linked by NVLink (peer access with
 * native atomics) and the other pairs reach each other over PCIe (peer
 * access, no atomics) -- the shape of a two-pair NVLink bridge host.
 * With FAKE_CUDA_SWITCH set in the environment every pair is linked, as
 * behind an NVSwitch.  With FAKE_CUDA_NODEV the runtime reports no device,
 * with FAKE_CUDA_NODEV_RANK=r only on MPI rank r (Open MPI's
 * OMPI_COMM_WORLD_RANK); FAKE_CUDA_DEVICES=n makes it n GPUs (the first
 * n of the four).  With FAKE_CUDA_EXEC the table also has the
 * executor's entries, on host memory (fake_cuda_exec.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"

static int count(char *why, size_t len)
{
	const char *r = getenv("FAKE_CUDA_NODEV_RANK"), *me = getenv("OMPI_COMM_WORLD_RANK");
	if (getenv("FAKE_CUDA_NODEV") || (r && me && strcmp(r, me) == 0)) {
		snprintf(why, len, "CUDA runtime: no CUDA-capable device is detected");
		return -1;
	}
	r = getenv("FAKE_CUDA_DEVICES");
	return r ? atoi(r) : 4;
}

static int info(int dev, char *bus_id, size_t bus_len, char *name, size_t name_len)
{
	snprintf(bus_id, bus_len, "0000:%02x:00.0", 0x10 + dev);
	snprintf(name, name_len, "NVIDIA H100 80GB HBM3");
	return 0;
}

static int p2p(int src, int dst, struct pplan_cuda_p2p *out)
{
	int pair = src / 2 == dst / 2;
	out->access = 1;
	out->native_atomics = pair || getenv("FAKE_CUDA_SWITCH") != NULL;
	out->perf_rank = out->native_atomics ? 0 : 1;
	return 0;
}

/* Without FAKE_CUDA_EXEC the executor's entries (version 2) stay NULL,
 * and the CUDA backend says the module has no executor interface. */
static const struct pplan_cuda_api api = {
	.version = PPLAN_CUDA_API_VERSION,
	.device_count = count,
	.device_info = info,
	.p2p = p2p,
};
static struct pplan_cuda_api api_exec;

void fake_cuda_exec_fill(struct pplan_cuda_api *a);

const struct pplan_cuda_api *pplan_cuda_get_api(int version)
{
	if (version != PPLAN_CUDA_API_VERSION)
		return NULL;
	if (!getenv("FAKE_CUDA_EXEC"))
		return &api;
	api_exec = api;
	fake_cuda_exec_fill(&api_exec);
	return &api_exec;
}
