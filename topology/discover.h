/*
 * discover.h: host discovery with hwloc, from the live machine or from an
 * hwloc XML export (`lstopo --of xml`).
 *
 * Finds packages, NUMA nodes, cores, the PCI tree, GPUs as PCI devices of
 * vendor 0x10de (hwloc builds without the CUDA/NVML plugins still list
 * them), NVSwitch chips, NICs (InfiniBand/RoCE RDMA devices such as
 * mlx5_0, and Ethernet), each GPU's NUMA node, CPU set and nearest NIC by
 * PCIe distance, and NVLinks where the export carries hwloc's
 * "NVLinkBandwidth" distances matrix.  XML exports written by hwloc 3.x
 * are read too: they are converted in memory to the 2.x format this
 * hwloc reads (only the version and the OS device type numbering differ
 * for what pplan uses).
 */
#ifndef PPLAN_DISCOVER_H
#define PPLAN_DISCOVER_H

#include "host.h"

/* Fills host from hwloc: the live machine when xml_path is NULL, else the
 * XML export at xml_path.  A malformed or unreadable file is PPLAN_EINPUT
 * with a sentence naming it. */
enum pplan_status discover_hwloc(const char *xml_path, struct host_topo *host,
				 struct perr *err);

/* As discover_hwloc for the len bytes of an XML export in memory
 * (NUL-terminated at xml[len]); `name` names it in messages.  The text is
 * checked (hwlocxml.h) before hwloc sees it. */
enum pplan_status discover_hwloc_xml(const char *xml, size_t len,
				     const char *name, struct host_topo *host,
				     struct perr *err);

/* The largest XML export read (docs/limits.md). */
#define DISCOVER_XML_MAX_BYTES (16L << 20)

/* The in-memory hwloc 3.x -> 2.x XML conversion (exposed for tests).
 * Returns a malloc'ed copy the caller frees, or NULL when out of memory;
 * text that is not a 3.x export is copied unchanged. */
char *discover_xml_downgrade(const char *xml);

/* A live NIC's link rate in Gbit/s from sysfs (the RDMA port's rate, else
 * the interface's speed); 0 when unknown.  PPLAN_SYSFS_ROOT replaces
 * /sys, for tests. */
double discover_nic_rate_gbits(const struct host_nic *nic);

#endif
