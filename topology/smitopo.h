/*
 * smitopo.h: reads a saved `nvidia-smi topo -m` output into a host_topo.
 *
 * Takes the formats of several driver generations: tab- or space-separated
 * cells, NIC columns named after the RDMA device (mlx5_0) or NIC0.. with a
 * "NIC Legend" block, and the trailing columns "CPU Affinity",
 * "NUMA Affinity" and "GPU NUMA ID".  Anything else (an unknown column, a
 * row with the wrong number of cells, an unknown link word, an asymmetric
 * NVLink matrix) is an error that names the file and the line, because a
 * silently misread topology would mislead every prediction made from it.
 *
 * The output does not say which GPU model it is, nor the NVLink
 * generation: link counts are exact (NV12), bandwidths are left to
 * host_to_cluster() and the GPU the user names.
 */
#ifndef PPLAN_SMITOPO_H
#define PPLAN_SMITOPO_H

#include "host.h"

/* Parses `text`; `name` (a file name) prefixes error messages. */
enum pplan_status smitopo_parse(const char *text, const char *name,
				struct host_topo *host, struct perr *err);

/* Reads and parses the file at path. */
/* The largest `nvidia-smi topo -m` file read (docs/limits.md). */
#define SMITOPO_MAX_BYTES (1L << 20)

enum pplan_status smitopo_load(const char *path, struct host_topo *host,
			       struct perr *err);

#endif
