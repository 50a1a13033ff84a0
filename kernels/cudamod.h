/*
 * cudamod.h: finding and loading pplan's CUDA module (kernels/cuda_api.h)
 * with dlopen, for every part of pplan that uses it: topology discovery
 * (cudap2p.c) and the executor's CUDA backend (exec/backend_cuda.c).
 *
 * PPLAN_CUDA_MODULE names the module to load; by default it is
 * libpplan_cuda.so beside the pplan executable.  The library stays loaded
 * for the life of the process (CUDA must not be unloaded); loading it
 * twice returns the same table.
 */
#ifndef PPLAN_CUDAMOD_H
#define PPLAN_CUDAMOD_H

#include <stddef.h>

#include "cuda_api.h"

/* The module's version-PPLAN_CUDA_API_VERSION table, or NULL with one
 * sentence in why (no module, a module that cannot be loaded, or one of
 * another version).  path (may be NULL) receives the file tried. */
const struct pplan_cuda_api *cudamod_load(char *path, size_t plen, char *why,
					  size_t wlen);

#endif
