/* collective.c: the collective table and the alpha-beta cost.  See
 * collective.h for the factors and sim/MODEL.md "Collectives". */
#include "collective.h"

static const struct coll_info table[COLL_COUNT] = {
	[COLL_ALLREDUCE] = { "all_reduce", "ncclAllReduce", "MPI_Allreduce", 2 },
	[COLL_ALLGATHER] = { "all_gather", "ncclAllGather", "MPI_Allgather", 1 },
	[COLL_REDUCESCATTER] = { "reduce_scatter", "ncclReduceScatter",
				 "MPI_Reduce_scatter_block", 1 },
	[COLL_ALLTOALL] = { "alltoall", "ncclSend/ncclRecv (grouped)",
			    "MPI_Alltoall", 1 },
	[COLL_BROADCAST] = { "broadcast", "ncclBroadcast", "MPI_Bcast", 1 },
	[COLL_REDUCE] = { "reduce", "ncclReduce", "MPI_Reduce", 1 },
	[COLL_SENDRECV] = { "sendrecv", "ncclSend/ncclRecv", "MPI_Sendrecv", 0 },
};

const struct coll_info *coll_info(enum coll_op op)
{
	return (op >= 0 && op < COLL_COUNT) ? &table[op] : NULL;
}

double coll_busbw_factor(enum coll_op op, int n)
{
	if (n < 1)
		n = 1;
	switch (op) {
	case COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
	case COLL_ALLGATHER:
	case COLL_REDUCESCATTER:
	case COLL_ALLTOALL: return (double)(n - 1) / n;
	case COLL_BROADCAST:
	case COLL_REDUCE:
	case COLL_SENDRECV: return 1.0;
	case COLL_COUNT: break;
	}
	return 1.0;
}

double coll_time(enum coll_op op, double bytes, int n, const struct link *l)
{
	double steps, bw;
	if (op != COLL_SENDRECV && n <= 1)
		return 0.0;
	if (bytes <= 0)
		return 0.0;
	steps = table[op].ring_steps_num ? (double)table[op].ring_steps_num * (n - 1)
					 : 1.0;
	bw = l->bw_gbps * 1e9 * l->eff;
	return steps * l->latency_s + bytes * coll_busbw_factor(op, n) / bw;
}
