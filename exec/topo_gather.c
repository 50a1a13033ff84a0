/*
 * topo_gather.c: host descriptions over MPI.  struct host_topo is plain
 * data without pointers, so it travels as bytes; every rank runs the
 * same pplan binary, so the layout agrees.
 */
#include "topo_gather.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Turns an MPI error into a status with host, rank, file and line. */
#define MPI_TRY(call, e)                                                     \
	do {                                                                 \
		int rc_ = (call);                                            \
		if (rc_ != MPI_SUCCESS)                                      \
			return mpi_fail(rc_, #call, __FILE__, __LINE__, e);  \
	} while (0)

static enum pplan_status mpi_fail(int rc, const char *what, const char *file,
				  int line, struct perr *e)
{
	char msg[MPI_MAX_ERROR_STRING], host[64] = "?";
	int len = 0, rank = -1, init = 0;

	MPI_Error_string(rc, msg, &len);
	MPI_Initialized(&init);
	if (init)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	gethostname(host, sizeof host - 1);
	return perr_set(e, PPLAN_ESYSTEM, "%s (host %s, rank %d, %s:%d): %s",
			what, host, rank, file, line, msg);
}

enum pplan_status topo_gather_hosts(const struct host_topo *mine,
				    struct topo_gather *g, struct perr *e)
{
	int init = 0;

	memset(g, 0, sizeof *g);
	MPI_TRY(MPI_Initialized(&init), e);
	if (!init)
		MPI_TRY(MPI_Init(NULL, NULL), e);
	MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &g->rank), e);
	MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &g->size), e);
	if (g->rank == 0) {
		g->hosts = calloc((size_t)g->size, sizeof *g->hosts);
		if (!g->hosts)
			return perr_set(e, PPLAN_ENOMEM,
					"out of memory for %d host descriptions",
					g->size);
	}
	MPI_TRY(MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, g->hosts,
			   (int)sizeof *mine, MPI_BYTE, 0, MPI_COMM_WORLD), e);
	return PPLAN_OK;
}

enum pplan_status topo_gather_finish(struct topo_gather *g,
				     enum pplan_status st, struct perr *e)
{
	int init = 0, fin = 0, code = (int)st;

	free(g->hosts);
	g->hosts = NULL;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (!init || fin)
		return st;
	if (MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
	    e && MPI_Bcast(e->msg, (int)sizeof e->msg, MPI_CHAR, 0,
			   MPI_COMM_WORLD) == MPI_SUCCESS)
		st = (enum pplan_status)code;
	MPI_Finalize();
	return st;
}
