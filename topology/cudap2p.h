/*
 * cudap2p.h: the last NVLink source, after NVML and a saved
 * `nvidia-smi topo -m`: CUDA peer-to-peer attributes from pplan's CUDA
 * module (kernels/cuda_api.h), loaded with dlopen.  It tells which GPU
 * pairs reach each other over NVLink (native peer atomics) or only over
 * PCIe, not how many links they have.  Absence of the module, the driver
 * or a GPU is not an error: the probe says which.
 *
 * The module is found as cudamod.h says (PPLAN_CUDA_MODULE, or beside the
 * pplan executable).
 */
#ifndef PPLAN_CUDAP2P_H
#define PPLAN_CUDAP2P_H

#include "host.h"

/* Fills host's GPUs (matching by PCI bus id, adding the ones hwloc missed)
 * and its NVLink matrix from CUDA peer-to-peer attributes.  PPLAN_OK when
 * the module answered; PPLAN_ENOTFOUND with the reason in *err otherwise
 * (host untouched). */
enum pplan_status cudap2p_probe(struct host_topo *host, struct perr *err);

#endif
