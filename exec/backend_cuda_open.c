/*
 * backend_cuda_open.c: be_cuda_open (backend.h), the bring-up of the CUDA
 * backend, collective over the world communicator:
 *  1. each rank loads the module, counts the devices it sees, opens one
 *     (device_for: its node-local rank's where the node's ranks see a GPU
 *     each, the one it sees where the launcher gave each rank one) and
 *     finds the kernels of the dtype;
 *  2. all ranks agree (MPI_Allreduce, MINLOC): if any rank failed, every
 *     rank returns PPLAN_ENOTFOUND with the first failing rank's reason,
 *     so that --backend auto falls back to the CPU on all of them; the
 *     ranks of a node compare their GPUs' PCI addresses, and two ranks on
 *     one GPU fail the same way (one GPU per rank, as the frameworks run);
 *  3. rank 0 makes the NCCL unique id, MPI_Bcast gives it to all, and
 *     each rank initialises its world communicator (nonblocking, polled
 *     for at most CUDA_INIT_TIMEOUT_S); the ranks agree again on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_be.h"
#include "cudamod.h"

/* The device of node-local rank lr of ls where the rank sees n: its own
 * where there is one per rank, the only one where the launcher bound one
 * per rank (CUDA_VISIBLE_DEVICES; shared ones are found by their PCI
 * address afterwards), else -1 with the reason. */
static int device_for(int lr, int ls, int n, char *why, size_t len)
{
	if (n >= ls)
		return lr;
	if (n == 1)
		return 0;
	snprintf(why, len, "%d ranks on this host see %d GPUs: pplan exec runs one rank per GPU "
		 "(launch at most %d ranks per node, or --backend cpu)", ls, n, n);
	return -1;
}

/* Step 1 on this rank: 0, or -1 with the reason in why. */
static int open_local(struct cuda_be *c, int lr, int ls, enum kern_dtype dtype,
		      char *why, size_t len)
{
	char path[512], bus[32] = "", name[96] = "";
	const struct pplan_cuda_api *a = cudamod_load(path, sizeof path, why, len);
	int n, dev;

	if (!a)
		return -1;
	if (!a->ctx_open || !a->kernels || !a->gemm || !a->nccl_init || !a->nccl_split ||
	    !a->event_query || !a->versions) {
		snprintf(why, len, "%s has no executor interface (a test module?)", path);
		return -1;
	}
	c->api = a;
	n = a->device_count(why, len);
	if (n < 0)
		return -1;
	if (n == 0) {
		snprintf(why, len, "the CUDA runtime sees no GPU");
		return -1;
	}
	if ((dev = device_for(lr, ls, n, why, len)) < 0)
		return -1;
	if (!a->kernels(dtype)) {
		snprintf(why, len, "the CUDA module has no %s kernels", kern_dtype_name(dtype));
		return -1;
	}
	if (a->ctx_open(dev, &c->ctx, why, len) != 0)
		return -1;
	if (a->event_create(&c->order_ev, 0, why, len) != 0 ||
	    a->event_create(&c->sync_ev[0], 0, why, len) != 0 ||
	    a->event_create(&c->sync_ev[1], 0, why, len) != 0)
		return -1;
	if (a->device_info(dev, bus, sizeof bus, name, sizeof name) != 0)
		snprintf(name, sizeof name, "CUDA device %d", dev);
	snprintf(c->b.device, sizeof c->b.device, "%s (%s)", name, bus);
	snprintf(c->bus, sizeof c->bus, "%s", bus);
	return 0;
}

/* Step 2's second half: 0 where every rank of the node has a GPU of its
 * own, else -1 with the two ranks and the address they share in why (the
 * same on every rank of the node). */
static int shared_gpu(struct cuda_be *c, MPI_Comm node, char *why, size_t len)
{
	char *all;
	int ls = 1, r = 0;
	MPI_Comm_size(node, &ls);
	if (ls == 1)
		return 0;
	all = calloc((size_t)ls, sizeof c->bus);
	if (!all) {
		snprintf(why, len, "out of host memory");
		r = -1;
	} else {
		MPI_Allgather(c->bus, (int)sizeof c->bus, MPI_CHAR, all, (int)sizeof c->bus,
			      MPI_CHAR, node);
	}
	for (int i = 0; all && i < ls && r == 0; i++)
		for (int j = i + 1; j < ls && r == 0; j++) {
			const char *bi = all + (size_t)i * sizeof c->bus;
			if (bi[0] && strncmp(bi, all + (size_t)j * sizeof c->bus, sizeof c->bus) == 0) {
				snprintf(why, len, "node-local ranks %d and %d share the GPU at %.31s: "
					 "pplan exec runs one rank per GPU (launch at most one rank "
					 "per GPU, or --backend cpu)", i, j, bi);
				r = -1;
			}
		}
	free(all);
	return r;
}

/* Step 2: the lowest rank whose ok is 0, or -1 when all are 1; its
 * reason replaces why on every rank. */
static int first_failure(MPI_Comm world, int ok, char *why, size_t len)
{
	struct {
		int ok, rank;
	} in = { ok, 0 }, out;
	MPI_Comm_rank(world, &in.rank);
	MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, world);
	if (out.ok)
		return -1;
	MPI_Bcast(why, (int)len, MPI_CHAR, out.rank, world);
	why[len - 1] = '\0';
	return out.rank;
}

static void libraries(struct cuda_be *c)
{
	char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "", cuda[192] = "", *comma;
	int n = 0;
	c->api->versions(cuda, sizeof cuda);
	MPI_Get_library_version(mpi, &n);
	comma = strchr(mpi, ',');
	if (comma)
		*comma = '\0';
	snprintf(c->b.libraries, sizeof c->b.libraries, "%s; %s", cuda, mpi);
}

/* Step 3: NCCL's world communicator. */
static enum pplan_status nccl_world(struct cuda_be *c, MPI_Comm world,
				    struct perr *e)
{
	struct {
		int ok;
		char why[WHY];
		unsigned char id[PPLAN_NCCL_ID_BYTES];
	} u;
	char why[WHY] = "";
	int rank, size, r, ok, bad;
	enum pplan_status st = PPLAN_OK;

	MPI_Comm_rank(world, &rank);
	MPI_Comm_size(world, &size);
	memset(&u, 0, sizeof u);
	if (rank == 0)
		u.ok = c->api->nccl_unique_id(u.id, u.why, sizeof u.why) == 0;
	MPI_Bcast(&u, (int)sizeof u, MPI_BYTE, 0, world);
	if (!u.ok)
		return perr_set(e, PPLAN_ESYSTEM, "rank 0: %s", u.why);
	r = c->api->nccl_init(c->ctx, u.id, size, rank, &c->world, why, sizeof why);
	if (r < 0)
		st = perr_set(e, PPLAN_ESYSTEM, "%s: %s", c->where, why);
	else if (r == PCU_PENDING)
		st = cuda_be_poll(c, cuda_be_step_comm, c->world, "NCCL's initialization",
				  CUDA_INIT_TIMEOUT_S, e);
	ok = st == PPLAN_OK;
	snprintf(why, sizeof why, "%s", ok ? "" : e->msg);
	bad = first_failure(world, ok, why, sizeof why);
	if (bad < 0)
		return PPLAN_OK;
	if (ok) /* another rank failed: this one's communicator is useless */
		cuda_be_abort(c);
	return perr_set(e, PPLAN_ESYSTEM, "NCCL initialization failed: %s", why);
}

/* why = "host h, rank r: " why */
static void where_first(char *why, size_t len, const char *host, int rank)
{
	char tmp[WHY];
	snprintf(tmp, sizeof tmp, "host %s, rank %d: %s", host, rank, why);
	snprintf(why, len, "%s", tmp);
}

enum pplan_status be_cuda_open(MPI_Comm node, enum kern_dtype dtype,
			       MPI_Comm world, struct backend **out,
			       struct perr *e)
{
	struct cuda_be *c = calloc(1, sizeof *c);
	char why[WHY] = "", host[64] = "?";
	int rank = 0, ok, bad, lr = 0, ls = 1;
	enum pplan_status st;

	*out = NULL;
	MPI_Comm_rank(world, &rank);
	MPI_Comm_rank(node, &lr);
	MPI_Comm_size(node, &ls);
	gethostname(host, sizeof host - 1);
	if (!c) {
		snprintf(why, sizeof why, "out of host memory");
		ok = 0;
	} else {
		snprintf(c->where, sizeof c->where, "host %s, rank %d", host, rank);
		c->b.impl = c;
		ok = open_local(c, lr, ls, dtype, why, sizeof why) == 0;
	}
	if (!ok)
		where_first(why, sizeof why, host, rank);
	bad = first_failure(world, ok, why, sizeof why);
	if (bad < 0) { /* every rank has a GPU: one each? */
		ok = shared_gpu(c, node, why, sizeof why) == 0;
		if (!ok)
			where_first(why, sizeof why, host, rank);
		bad = first_failure(world, ok, why, sizeof why);
	}
	if (bad >= 0) {
		if (c)
			cuda_be_close(&c->b);
		return perr_set(e, PPLAN_ENOTFOUND, "%s", why);
	}
	c->b.ops = &cuda_be_ops;
	c->b.k = c->api->kernels(dtype);
	c->b.ks = c->api->stream(c->ctx, PCU_COMPUTE);
	c->b.dtype = dtype;
	c->b.kind = BE_CUDA;
	c->b.local_rank = lr;
	libraries(c);
	if ((st = nccl_world(c, world, e)) != PPLAN_OK) {
		cuda_be_close(&c->b);
		return st;
	}
	{
		size_t fr = 0, tot = 0;
		if (c->api->mem_info(c->ctx, &fr, &tot) == 0) {
			c->base_used = c->dev_peak = (double)(tot - fr);
			c->b.device_bytes = (double)tot;
		}
	}
	*out = &c->b;
	return PPLAN_OK;
}
