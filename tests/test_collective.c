/*
 * test_collective.c: the collective table, the alpha-beta cost and which
 * link a parallel group uses.
 *
 * Bus-bandwidth factors are nccl-tests' (doc/PERFORMANCE.md):
 *   all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all
 *   (n-1)/n, broadcast, reduce and send/recv 1.
 * The cost is alpha-beta: ring steps x latency + S x factor / (bw x eff),
 * with 2(n-1) ring steps for an all-reduce (reduce-scatter then
 * all-gather), n-1 for the others, and one for a send/recv.
 * Link figures: DGX H100 has 8 ConnectX-7 NICs of 400 Gb/s for 8 GPUs,
 * 8 x 400 / 8 / 8 bits = 50 GB/s per GPU; DGX A100 8 x HDR 200 Gb/s,
 * 25 GB/s per GPU; H100 SXM NVLink 4 is 18 links x 25 GB/s = 450 GB/s per
 * direction.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <string.h>

#include "collective.h"
#include "units.h"


static void expect_rel(double got, double want, double tol, const char *what)
{
	double err = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1.0);
	cr_expect(err <= tol, "%s: got %.12g, want %.12g (rel err %.2g)", what,
		  got, want, err);
}

/* ---- Bus-bandwidth factors ----------------------------------------------- */

struct busbw_case {
	enum coll_op op;
	int n;
	double factor;
};

ParameterizedTestParameters(busbw, factors)
{
	static struct busbw_case cases[] = {
		/* all-reduce 2(n-1)/n: 0, 2*1/2, 2*3/4, 2*7/8, 2*63/64. */
		{ COLL_ALLREDUCE, 1, 0.0 },
		{ COLL_ALLREDUCE, 2, 1.0 },
		{ COLL_ALLREDUCE, 4, 1.5 },
		{ COLL_ALLREDUCE, 8, 1.75 },
		{ COLL_ALLREDUCE, 64, 1.96875 },
		/* (n-1)/n: 0, 1/2, 3/4, 7/8, 63/64. */
		{ COLL_ALLGATHER, 1, 0.0 },
		{ COLL_ALLGATHER, 2, 0.5 },
		{ COLL_ALLGATHER, 4, 0.75 },
		{ COLL_ALLGATHER, 8, 0.875 },
		{ COLL_ALLGATHER, 64, 0.984375 },
		{ COLL_REDUCESCATTER, 1, 0.0 },
		{ COLL_REDUCESCATTER, 2, 0.5 },
		{ COLL_REDUCESCATTER, 4, 0.75 },
		{ COLL_REDUCESCATTER, 8, 0.875 },
		{ COLL_REDUCESCATTER, 64, 0.984375 },
		{ COLL_ALLTOALL, 1, 0.0 },
		{ COLL_ALLTOALL, 2, 0.5 },
		{ COLL_ALLTOALL, 4, 0.75 },
		{ COLL_ALLTOALL, 8, 0.875 },
		{ COLL_ALLTOALL, 64, 0.984375 },
		/* 1 for every n. */
		{ COLL_BROADCAST, 1, 1.0 },
		{ COLL_BROADCAST, 2, 1.0 },
		{ COLL_BROADCAST, 4, 1.0 },
		{ COLL_BROADCAST, 8, 1.0 },
		{ COLL_BROADCAST, 64, 1.0 },
		{ COLL_REDUCE, 8, 1.0 },
		{ COLL_REDUCE, 64, 1.0 },
		{ COLL_SENDRECV, 2, 1.0 },
	};
	return cr_make_param_array(struct busbw_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct busbw_case *c, busbw, factors)
{
	double f = coll_busbw_factor(c->op, c->n);
	cr_assert(fabs(f - c->factor) < 1e-15, "%s n=%d: factor %.17g, want %.17g",
		  coll_info(c->op)->name, c->n, f, c->factor);
}

Test(busbw, table_names)
{
	/* nccl-tests binary names and the NCCL / MPI calls. */
	cr_assert_str_eq(coll_info(COLL_ALLREDUCE)->name, "all_reduce");
	cr_assert_str_eq(coll_info(COLL_ALLGATHER)->name, "all_gather");
	cr_assert_str_eq(coll_info(COLL_REDUCESCATTER)->name, "reduce_scatter");
	cr_assert_str_eq(coll_info(COLL_ALLTOALL)->name, "alltoall");
	cr_assert_str_eq(coll_info(COLL_BROADCAST)->name, "broadcast");
	cr_assert_str_eq(coll_info(COLL_REDUCE)->name, "reduce");
	cr_assert_str_eq(coll_info(COLL_SENDRECV)->name, "sendrecv");
	cr_assert_str_eq(coll_info(COLL_ALLREDUCE)->nccl_call, "ncclAllReduce");
	cr_assert_str_eq(coll_info(COLL_REDUCESCATTER)->nccl_call, "ncclReduceScatter");
	cr_assert_str_eq(coll_info(COLL_ALLGATHER)->mpi_call, "MPI_Allgather");
	cr_assert_str_eq(coll_info(COLL_ALLREDUCE)->mpi_call, "MPI_Allreduce");
	cr_assert_null(coll_info(COLL_COUNT));
	for (int op = 0; op < COLL_COUNT; op++) {
		const struct coll_info *ci = coll_info((enum coll_op)op);
		cr_assert_not_null(ci);
		cr_assert(ci->name && ci->nccl_call && ci->mpi_call);
	}
}

/* ---- Alpha-beta times ----------------------------------------------------- */

static const struct link link300 = { LINK_NVSWITCH, 300.0, 2e-6, 0.78 };

struct time_case {
	enum coll_op op;
	double bytes;
	int n;
	double want; /* seconds, by hand */
};

ParameterizedTestParameters(coll_time, alpha_beta)
{
	/* On link300: 300 GB/s, eff 0.78, 2 us per ring step, so the bus
	 * runs at 300e9 * 0.78 = 2.34e11 B/s. */
	static struct time_case cases[] = {
		/* 1 GiB all-reduce over 8: 2*7 steps * 2 us = 28 us, plus
		 * 1.75 * 2^30 / 2.34e11 = 1,879,048,192 / 2.34e11
		 * = 8.0301205e-3 s; total 8.0581205e-3 s. */
		{ COLL_ALLREDUCE, GIB, 8, 2 * 7 * 2e-6 + 1.75 * GIB / (300e9 * 0.78) },
		{ COLL_ALLREDUCE, GIB, 8, 8.05812047863248e-3 },
		/* 1 GiB all-gather over 8: 7 * 2 us + 0.875 * 2^30 / 2.34e11
		 * = 14 us + 4.01506e-3 = 4.02906e-3 s. */
		{ COLL_ALLGATHER, GIB, 8, 7 * 2e-6 + 0.875 * GIB / (300e9 * 0.78) },
		{ COLL_ALLGATHER, GIB, 8, 4.02906023931624e-3 },
		/* Reduce-scatter has the same cost as all-gather. */
		{ COLL_REDUCESCATTER, GIB, 8, 4.02906023931624e-3 },
		/* 64 MiB all-reduce over 2: 2 steps, factor 1:
		 * 4 us + 67,108,864 / 2.34e11 = 4e-6 + 2.8679002e-4. */
		{ COLL_ALLREDUCE, 64.0 * 1024 * 1024, 2, 4e-6 + 67108864.0 / 2.34e11 },
		/* all-to-all of 256 MiB over 4: 3 steps, factor 3/4. */
		{ COLL_ALLTOALL, 256.0 * 1024 * 1024, 4,
		  3 * 2e-6 + 0.75 * 268435456.0 / 2.34e11 },
		/* broadcast of 1 GB over 16: 15 steps, factor 1. */
		{ COLL_BROADCAST, 1e9, 16, 15 * 2e-6 + 1e9 / 2.34e11 },
		/* send/recv of 10 MB: one latency, factor 1. */
		{ COLL_SENDRECV, 1e7, 2, 2e-6 + 1e7 / 2.34e11 },
		/* A group of one does not communicate. */
		{ COLL_ALLREDUCE, GIB, 1, 0.0 },
		{ COLL_ALLGATHER, GIB, 1, 0.0 },
		/* Nothing to send costs nothing, not a latency. */
		{ COLL_ALLREDUCE, 0.0, 8, 0.0 },
	};
	return cr_make_param_array(struct time_case, cases,
				   sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct time_case *c, coll_time, alpha_beta)
{
	double t = coll_time(c->op, c->bytes, c->n, &link300);
	if (c->want == 0) {
		cr_assert_eq(t, 0.0, "%s n=%d %.0f B: %g s, want 0",
			     coll_info(c->op)->name, c->n, c->bytes, t);
		return;
	}
	cr_assert(fabs(t - c->want) <= 1e-12 * c->want,
		  "%s n=%d %.0f B: %.15g s, want %.15g s", coll_info(c->op)->name,
		  c->n, c->bytes, t, c->want);
}

/* Large messages: time grows linearly in bytes with slope factor/bw;
 * tiny ones are latency-bound. */
Test(coll_time, bandwidth_and_latency_regimes)
{
	double t1 = coll_time(COLL_ALLREDUCE, GIB, 8, &link300);
	double t2 = coll_time(COLL_ALLREDUCE, 2 * GIB, 8, &link300);
	double t_small = coll_time(COLL_ALLREDUCE, 8, 8, &link300);
	expect_rel(t2 - t1, 1.75 * GIB / 2.34e11, 1e-12, "slope");
	expect_rel(t_small, 14 * 2e-6, 1e-5, "latency bound");
	/* More ranks, same bytes: the all-reduce factor grows toward 2. */
	cr_expect_gt(coll_time(COLL_ALLREDUCE, GIB, 64, &link300), t1);
}

/* ---- Which link a group uses ---------------------------------------------- */

static struct cluster preset(const char *name, long gpus)
{
	struct cluster c;
	struct perr e = { "" };
	cr_assert_eq(cluster_preset(name, gpus, &c, &e), PPLAN_OK, "%s", e.msg);
	return c;
}

Test(group_link, presets)
{
	struct cluster h = preset("dgx-h100", 64), a = preset("dgx-a100", 16);
	cr_assert_eq(h.gpus_per_node, 8);
	cr_assert_eq(h.num_nodes, 8);
	cr_assert_eq(cluster_gpus(&h), 64);
	/* 8 NICs x 400 Gb/s = 3200 Gb/s = 400 GB/s per node, 50 per GPU. */
	expect_rel(h.nic_gbps, 50.0, 1e-12, "dgx-h100 NIC GB/s");
	expect_rel(h.net.bw_gbps, 50.0, 1e-12, "dgx-h100 net per GPU");
	/* 8 x 200 Gb/s = 200 GB/s per node, 25 per GPU. */
	expect_rel(a.net.bw_gbps, 25.0, 1e-12, "dgx-a100 net per GPU");
	/* NVLink 4: 18 x 25 GB/s = 450; NVLink 3: 12 x 25 = 300. */
	expect_rel(h.nvlink.bw_gbps, 450.0, 1e-12, "H100 NVLink");
	expect_rel(a.nvlink.bw_gbps, 300.0, 1e-12, "A100 NVLink");
	cr_assert_eq(h.nvlink.cls, LINK_NVSWITCH);
	cr_assert_eq(h.net.cls, LINK_NET);
}

Test(group_link, tp8_inside_a_node_is_nvswitch)
{
	struct cluster c = preset("dgx-h100", 64);
	/* tp = 8, stride 1: ranks 0..7 fill one node. */
	struct link l = cluster_group_link(&c, 8, 1);
	cr_assert_eq(l.cls, LINK_NVSWITCH, "class %s", link_class_name(l.cls));
	expect_rel(l.bw_gbps, 450.0, 1e-12, "tp8 bw");
	/* Smaller groups inside the node too: tp 2 (stride 1), cp 2 with
	 * stride 4 (tp 4): span 8, still one node. */
	cr_assert_eq(cluster_group_link(&c, 2, 1).cls, LINK_NVSWITCH);
	cr_assert_eq(cluster_group_link(&c, 4, 2).cls, LINK_NVSWITCH);
	cr_assert_eq(cluster_group_link(&c, 2, 4).cls, LINK_NVSWITCH);
}

Test(group_link, dp_across_nodes_uses_the_nic_share)
{
	struct cluster c = preset("dgx-h100", 64);
	/* tp 8, dp 8: a dp group has one member per node (stride 8), so
	 * its ring leaves each node through that GPU's share of the NICs:
	 * 8 x 400 Gb/s / 8 GPUs / 8 bits = 50 GB/s. */
	struct link l = cluster_group_link(&c, 8, 8);
	cr_assert_eq(l.cls, LINK_NET, "class %s", link_class_name(l.cls));
	expect_rel(l.bw_gbps, 50.0, 1e-12, "1 member per node");
	/* Same on DGX A100: 8 x 200 / 8 / 8 = 25 GB/s. */
	{
		struct cluster a = preset("dgx-a100", 64);
		struct link la = cluster_group_link(&a, 8, 8);
		cr_assert_eq(la.cls, LINK_NET);
		expect_rel(la.bw_gbps, 25.0, 1e-12, "dgx-a100 1 member per node");
	}
}

Test(group_link, members_per_node_share_the_nics)
{
	struct cluster c = preset("dgx-h100", 64);
	/* tp 4, dp 16: a dp group (stride 4) has 2 members in each node,
	 * which use 2 NICs' worth: 2 x 50 = 100 GB/s per GPU. */
	struct link two = cluster_group_link(&c, 16, 4);
	/* tp 2, dp 32: 4 members per node: 4 x 50 = 200 GB/s. */
	struct link four = cluster_group_link(&c, 32, 2);
	/* tp 1, dp 64: 8 per node: 8 x 50 = 400 GB/s, below NVLink's 450. */
	struct link eight = cluster_group_link(&c, 64, 1);
	cr_assert_eq(two.cls, LINK_NET);
	expect_rel(two.bw_gbps, 2 * 50.0, 1e-12, "2 members per node");
	expect_rel(four.bw_gbps, 4 * 50.0, 1e-12, "4 members per node");
	expect_rel(eight.bw_gbps, 8 * 50.0, 1e-12, "8 members per node");
	/* A tp group of 16 across two nodes pays the network. */
	cr_assert_eq(cluster_group_link(&c, 16, 1).cls, LINK_NET);
}

/* The same 1 GiB all-reduce over 8 ranks is about 8x slower across nodes
 * than inside one: NVSwitch 450 x 0.80 = 360 GB/s against 50 x 0.90 = 45. */
Test(group_link, time_on_each_link)
{
	struct cluster c = preset("dgx-h100", 64);
	struct link in = cluster_group_link(&c, 8, 1), out = cluster_group_link(&c, 8, 8);
	double tin = coll_time(COLL_ALLREDUCE, GIB, 8, &in);
	double tout = coll_time(COLL_ALLREDUCE, GIB, 8, &out);
	expect_rel(tin, 14 * in.latency_s + 1.75 * GIB / (in.bw_gbps * 1e9 * in.eff),
		   1e-12, "in-node all-reduce");
	expect_rel(tout, 14 * out.latency_s + 1.75 * GIB / (out.bw_gbps * 1e9 * out.eff),
		   1e-12, "cross-node all-reduce");
	cr_assert_gt(tout, 5 * tin);
}

Test(group_link, preset_sizes)
{
	struct cluster c;
	struct perr e = { "" };
	/* 12 GPUs are not whole 8-GPU nodes. */
	cr_assert_eq(cluster_preset("dgx-h100", 12, &c, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "12") != NULL, "%s", e.msg);
	cr_assert_eq(cluster_preset("dgx-h100", 4, &c, &e), PPLAN_EINPUT);
	cr_assert_eq(cluster_preset("dgx-h100", -8, &c, &e), PPLAN_EINPUT);
	cr_assert_eq(cluster_preset("dgx-z999", 8, &c, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "dgx-z999") != NULL, "%s", e.msg);
	cr_assert_eq(cluster_preset("hgx-b200", 0, &c, &e), PPLAN_OK);
	cr_assert_eq(c.num_nodes, 1);
}
