/*
 * collective.h: the one table of collectives shared by the simulator, the
 * executor and the reports (docs/design.md, "Shared tables").  For each collective: its
 * name, the NCCL and MPI calls that implement it, and its bus-bandwidth
 * factor as nccl-tests defines it, so that predicted times and measured
 * busbw mean the same thing:
 *
 *   algbw = S / t,  busbw = algbw * factor(n)
 *   all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n,
 *   all-to-all (n-1)/n, broadcast and reduce 1, send/recv 1.
 *
 * S is the nccl-tests "size": the whole buffer (all-reduce, broadcast),
 * the gathered output (all-gather), the input (reduce-scatter), the bytes
 * one rank sends in total (all-to-all), the message (send/recv).
 */
#ifndef PPLAN_COLLECTIVE_H
#define PPLAN_COLLECTIVE_H

#include "cluster.h"

enum coll_op {
	COLL_ALLREDUCE = 0,
	COLL_ALLGATHER,
	COLL_REDUCESCATTER,
	COLL_ALLTOALL,
	COLL_BROADCAST,
	COLL_REDUCE,
	COLL_SENDRECV,
	COLL_COUNT
};

struct coll_info {
	const char *name;      /* "all_reduce", as nccl-tests names them */
	const char *nccl_call; /* "ncclAllReduce" */
	const char *mpi_call;  /* "MPI_Allreduce" */
	int ring_steps_num;    /* latency steps: ring_steps_num * (n-1) (0: one step) */
};

const struct coll_info *coll_info(enum coll_op op);
double coll_busbw_factor(enum coll_op op, int n);

/* Predicted time (s) of one collective of nccl-tests size `bytes` over n
 * ranks on link link: alpha-beta, alpha = ring steps x latency, beta = the
 * bus bytes at the link's achieved bus bandwidth. */
double coll_time(enum coll_op op, double bytes, int n, const struct link *link);

#endif
