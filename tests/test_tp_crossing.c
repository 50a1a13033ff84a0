/*
 * test_tp_crossing.c: a TP group that crosses a node boundary pays the
 * network.  The same layout (tp=8) on 8-GPU DGX H100 nodes keeps its
 * collectives on NVSwitch; on 4-GPU nodes of the same GPUs and NICs the
 * group spans two nodes, and its ring leaves each node through the NICs
 * of its 4 members.  With messages large enough that latency does not
 * matter, the TP time must grow by the ratio of the bus bandwidths:
 *   inside:  450 GB/s NVLink x 0.80 efficiency          = 360 GB/s
 *   across:  4 members x 50 GB/s NIC share x 0.90        = 180 GB/s
 * so the ratio is 2.0 before the fitted scale on the network efficiency
 * (net_eff_scale) is applied (the preset figures of topology/cluster.c: DGX H100
 * 8 x 400 Gb/s NICs per 8 GPUs = 50 GB/s per GPU).
 */
#include <criterion/criterion.h>

#include "cluster.h"
#include "cost.h"
#include "model.h"

static void predict_tp(const struct cluster *c, struct prediction *p)
{
	const struct model_spec *m = model_find("llama2-70b");
	struct train_opts o;
	struct layout l;
	struct perr e;
	cr_assert_not_null(m);
	train_opts_default(&o, m);
	o.b.tp_overlap = FW_TPO_NONE;
	o.use_des = 0;
	layout_default(&l);
	l.tp = 8;
	l.dp = 2;
	l.mbs = 8;          /* 8 x 4096 tokens: 268 MB per collective */
	l.gbs = 16;
	l.sp = 1;
	l.zero = 1;
	cr_assert_eq(cost_predict(m, c, &l, &o, p, &e), PPLAN_OK, "%s", e.msg);
}

Test(tp_crossing, slower_by_bandwidth_ratio)
{
	struct cluster inside, across;
	struct prediction pi, pa;
	double ratio, want;

	cr_assert_eq(cluster_preset("dgx-h100", 16, &inside, NULL), PPLAN_OK);
	across = inside;
	across.gpus_per_node = 4;
	across.nvlink_domain = 4;
	across.num_nodes = 4;
	across.nics_per_node = 4; /* the same NIC per GPU */

	cr_assert_eq(cluster_group_link(&inside, 8, 1).cls, LINK_NVSWITCH);
	cr_assert_eq(cluster_group_link(&across, 8, 1).cls, LINK_NET);

	predict_tp(&inside, &pi);
	predict_tp(&across, &pa);
	cr_assert_gt(pa.step_time_s, pi.step_time_s,
		     "crossing the node boundary must be slower");
	/* NVLink busbw 450 x 0.80 = 360 GB/s; across: 4 GPUs x 50 GB/s x
	 * 0.90, times the fitted scale of the network's efficiency. */
	want = 360.0 / (4 * 50.0 * 0.90 * cost_params_default()->net_eff_scale);
	ratio = pa.time.tp_comm / pi.time.tp_comm;
	cr_expect_float_eq(ratio, want, 0.02 * want,
			   "TP time ratio %.4f, bandwidth ratio %.4f", ratio, want);
	/* Compute is the same GPU work either way. */
	cr_expect_float_eq(pa.time.compute, pi.time.compute, 1e-9 * pi.time.compute);
}
