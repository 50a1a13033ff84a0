/*
 * pplan_cuda.cu: the CUDA module (libpplan_cuda.so), C-like CUDA behind the
 * plain C table of cuda_api.h: the device queries below, the kernels
 * (cuda_ops.cu and the kernel files) and the backend's CUDA, cuBLAS and
 * NCCL side (cuda_backend.cu).  Built only where the toolkit is present;
 * linked to the static CUDA runtime (cuBLAS and NCCL are shared libraries
 * found through the module's run path), so loading it needs no driver, and
 * without one every call reports why instead of failing to load.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda_api.h"
#include "cuda_common.cuh"

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

static struct pplan_cuda_api api;

/* Filled at load time, before anyone can ask for it. */
__attribute__((constructor)) static void api_init(void)
{
	api.version = PPLAN_CUDA_API_VERSION;
	api.device_count = count;
	api.device_info = info;
	api.p2p = p2p;
	kcu_fill_api(&api);
}

extern "C" const struct pplan_cuda_api *pplan_cuda_get_api(int version)
{
	return version == PPLAN_CUDA_API_VERSION ? &api : NULL;
}
