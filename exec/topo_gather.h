/*
 * topo_gather.h: `mpirun -np N pplan topo --gather`: every rank (one per
 * node) describes its own host; rank 0 receives all descriptions, checks
 * that the nodes agree (topology/host.h: host_check_agree) and writes the
 * cluster file.  This is the only part of `pplan topo` that speaks MPI,
 * so it lives in exec/ (docs/design.md, "Modules": only exec/ includes MPI).
 */
#ifndef PPLAN_TOPO_GATHER_H
#define PPLAN_TOPO_GATHER_H

#include "host.h"

struct topo_gather {
	int rank, size;
	struct host_topo *hosts; /* rank 0: `size` entries (rank order); else NULL */
};

/* Initialises MPI if needed and gathers `mine` from every rank onto rank
 * 0.  gather->hosts is owned by gather (topo_gather_finish frees it).  MPI errors
 * are PPLAN_ESYSTEM with host, rank, file and line. */
enum pplan_status topo_gather_hosts(const struct host_topo *mine,
				    struct topo_gather *gather, struct perr *err);

/* Gives every rank rank 0's status and message (so that all exit alike),
 * frees gather->hosts and finalises MPI.  Returns the agreed status. */
enum pplan_status topo_gather_finish(struct topo_gather *gather,
				     enum pplan_status st, struct perr *err);

#endif
