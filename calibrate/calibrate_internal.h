/*
 * calibrate_internal.h: the session that calibrate.c (session, compute)
 * and calibrate_coll.c (collectives) share.  Not for other modules.
 */
#ifndef PPLAN_CALIBRATE_INTERNAL_H
#define PPLAN_CALIBRATE_INTERNAL_H

#include <mpi.h>

#include "backend.h"
#include "calibrate.h"

struct cal_session {
	struct cal_config cfg;
	struct backend *b;
	MPI_Comm world, node;      /* node: the ranks of this host */
	int rank, size, local_rank, local_size, nodes;
	int we_inited;             /* MPI_Init was ours: finalize it */
	double mem_budget;         /* bytes one point may use: the smallest rank's, agreed at open */
	char hosts[512];
	double load_1m, cpu_mhz;   /* the host's at the start */
};

double cal_now(void);

/* Iterations for a timed loop whose one call took `one_s` (the slowest
 * rank's): target_s / one_s, within the configured bounds. */
long cal_iters(const struct cal_session *session, double one_s);

/* The largest of v over the world. */
double cal_max(struct cal_session *session, double v);

#endif
