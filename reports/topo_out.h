/*
 * topo_out.h: the writer of pplan.topo/1 (docs/design.md, "JSON
 * contracts"): a host as `pplan topo` found it (its GPUs, NICs, NVLink
 * matrix and PCIe paths, topology/host.h) and the cluster built from it.
 */
#ifndef PPLAN_TOPO_OUT_H
#define PPLAN_TOPO_OUT_H

#include <cjson/cJSON.h>

#include "cluster.h"
#include "host.h"

/* The document (the caller's, cJSON_Delete); nvml_note says what NVML
 * gave ("" or NULL: nothing), cluster NULL when none was built. */
cJSON *topo_out_json(const struct host_topo *host, const char *nvml_note,
		     const struct cluster *cluster);

#endif
