/*
 * pplan_cuda.cu: the CUDA module (libpplan_cuda.so), C-like CUDA behind the
 * plain C table of cuda_api.h.  Built only where the toolkit is present;
 * linked to the static CUDA runtime, so loading it needs only the driver
 * (libcuda.so.1), and without one every call reports why instead of
 * failing to load.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda_api.h"

static int count(char *why, size_t len)
{
	int n = 0;
	cudaError_t rc = cudaGetDeviceCount(&n);
	if (rc != cudaSuccess) {
		snprintf(why, len, "CUDA runtime: %s", cudaGetErrorString(rc));
		return -1;
	}
	return n;
}

static int info(int dev, char *bus_id, size_t bus_len, char *name, size_t name_len)
{
	cudaDeviceProp p;
	if (cudaDeviceGetPCIBusId(bus_id, (int)bus_len, dev) != cudaSuccess ||
	    cudaGetDeviceProperties(&p, dev) != cudaSuccess)
		return -1;
	snprintf(name, name_len, "%s", p.name);
	return 0;
}

static int p2p(int src, int dst, struct pplan_cuda_p2p *out)
{
	int v = 0;
	out->access = out->native_atomics = 0;
	out->perf_rank = -1;
	if (cudaDeviceCanAccessPeer(&out->access, src, dst) != cudaSuccess)
		return -1;
	if (cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported,
				      src, dst) == cudaSuccess)
		out->native_atomics = v;
	if (cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, src,
				      dst) == cudaSuccess)
		out->perf_rank = v;
	return 0;
}

static const struct pplan_cuda_api api = { PPLAN_CUDA_API_VERSION, count, info, p2p };

extern "C" const struct pplan_cuda_api *pplan_cuda_get_api(int version)
{
	return version == PPLAN_CUDA_API_VERSION ? &api : NULL;
}
