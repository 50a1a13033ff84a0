/*
 * nvml.h: NVLink discovery through NVML, the library that ships with the
 * NVIDIA driver (libnvidia-ml.so.1).  It is loaded with dlopen at run
 * time and the handful of functions used are declared in nvml.c, so pplan
 * builds and runs where no driver is installed; there NVML is simply
 * "unavailable", which is not an error.
 *
 * The environment variable PPLAN_NVML_LIBRARY names another library to
 * load instead (tests use a fake one).
 */
#ifndef PPLAN_NVML_H
#define PPLAN_NVML_H

#include "host.h"

/* Reads every GPU's active NVLinks (state, version, remote device) and
 * fills host's NVLink matrix, per-GPU switch links and link bandwidth,
 * matching NVML's GPUs to host's by PCI bus id (adding them when host has
 * none).  Returns PPLAN_OK when NVML answered; PPLAN_ENOTFOUND with the
 * reason in *err when NVML is absent or has no GPU (host untouched). */
enum pplan_status nvml_probe(struct host_topo *host, struct perr *err);

#endif
