/*
 * cuda_api.h: the C interface of the CUDA module (libpplan_cuda.so).
 *
 * All CUDA code is built into one shared module that pplan dlopens at run
 * time (TOOLCHAIN.md): the module exports one extern "C" function,
 * pplan_cuda_get_api(version), returning a table of plain C function
 * pointers.  Where the module, the driver or a GPU is missing, the loader
 * says why and pplan runs its CPU paths.  This header includes no CUDA
 * header, so plain C code (topology/, exec/) may use it.
 *
 * So far the table holds what topology discovery needs when NVML is
 * absent: device identities and peer-to-peer attributes.  The executor's
 * kernels and collectives will extend it (bump PPLAN_CUDA_API_VERSION).
 */
#ifndef PPLAN_CUDA_API_H
#define PPLAN_CUDA_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PPLAN_CUDA_API_VERSION 1
#define PPLAN_CUDA_ENTRY "pplan_cuda_get_api"

struct pplan_cuda_p2p {
	int access;          /* cudaDeviceCanAccessPeer */
	int native_atomics;  /* cudaDevP2PAttrNativeAtomicSupported: NVLink, not PCIe */
	int perf_rank;       /* cudaDevP2PAttrPerformanceRank, 0 = best */
};

struct pplan_cuda_api {
	int version;
	/* Number of devices (>= 0), or -1 with one sentence in why. */
	int (*device_count)(char *why, size_t len);
	/* 0 and the PCI bus id ("0000:34:00.0") and name of device dev. */
	int (*device_info)(int dev, char *bus_id, size_t bus_len, char *name,
			   size_t name_len);
	/* 0 and the peer-to-peer attributes from src to dst. */
	int (*p2p)(int src, int dst, struct pplan_cuda_p2p *out);
};

typedef const struct pplan_cuda_api *(*pplan_cuda_get_api_fn)(int version);

/* The module's entry point: the table for `version`, or NULL. */
const struct pplan_cuda_api *pplan_cuda_get_api(int version);

#ifdef __cplusplus
}
#endif

#endif
