/*
 * test_offload.c: optimizer offload (layout.optimizer_offload), its
 * memory and its time by hand, what refuses it, and the search that
 * finds it where nothing fits without.
 *
 * Hand figures: Llama 2 7B has P = 6,738,415,616 parameters
 * (test_model.c).  On 8 H100 (DGX H100: PCIe 5.0 host links at 55 GB/s,
 * two Xeon 8480C with 8 DDR5-4800 channels each, 614.4 GB/s) with
 * tp=1, dp=8, zero=1 under Megatron-Core (4-byte gradients in bf16), each
 * rank's optimizer shard is P/8 = 842,301,952 parameters:
 *   host memory    12 B x P/8 = 10,107,623,424 B (master + two moments)
 *   to the host    4 B x P/8 / 55 GB/s = 0.061258 s
 *   CPU Adam       30 B x P/8 x 8 GPUs / (0.5 x 614.4 GB/s) = 0.658048 s
 *   back           2 B x P/8 / 55 GB/s = 0.030629 s
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cost.h"
#include "cost_params.h"
#include "framework.h"
#include "layout.h"
#include "search.h"
#include "testutil.h"

static void setup(const char *model, const char *preset, long gpus, const char *fw,
		  const struct model_spec **m, struct cluster *c, struct train_opts *o)
{
	struct perr e = { "" };
	*m = model_find(model);
	cr_assert_not_null(*m, "%s", model);
	cr_assert_eq(cluster_preset(preset, gpus, c, &e), PPLAN_OK, "%s", e.msg);
	train_opts_default(o, *m);
	if (fw) {
		cr_assert_eq(framework_parse(fw, &o->fw, &e), PPLAN_OK, "%s", e.msg);
		cr_assert_eq(train_opts_resolve(o, &e), PPLAN_OK, "%s", e.msg);
	}
	o->max_memory_gib = 0.9 * c->gpu.mem_gib;
}

/* The fitted per-step fixed cost (sim/cost_params.h), in seconds. */
static double fixed_s(void)
{
	return cost_params_default()->step_fixed_ms * 1e-3;
}

static void predict_str(const struct model_spec *m, const struct cluster *c,
			const struct train_opts *o, const char *ls, struct prediction *p)
{
	struct layout l;
	unsigned set = 0;
	struct perr e = { "" };
	cr_assert_eq(layout_parse(ls, &l, &set, &e), PPLAN_OK, "%s", e.msg);
	layout_complete(&l, set, cluster_gpus(c));
	cr_assert_eq(cost_predict(m, c, &l, o, p, &e), PPLAN_OK, "%s: %s", ls, e.msg);
}

Test(offload, megatron_memory_and_time_by_hand)
{
	const struct model_spec *m;
	struct cluster c;
	struct train_opts o;
	struct prediction on, off;
	double shard = 6738415616.0 / 8;

	setup("llama2-7b", "dgx-h100", 8, NULL, &m, &c, &o);
	predict_str(m, &c, &o, "tp=1,dp=8,zero=1,gbs=64", &off);
	predict_str(m, &c, &o, "tp=1,dp=8,zero=1,gbs=64,optimizer_offload=on", &on);
	cr_assert(on.feasible && off.feasible);
	cr_assert_float_eq(off.mem.optimizer, 12.0 * shard, 1.0);
	cr_assert_float_eq(on.mem.optimizer, 0.0, 1e-9);
	cr_assert_float_eq(on.mem.host, 12.0 * shard, 1.0);
	cr_assert_float_eq(off.mem.host, 0.0, 1e-9);
	cr_assert_float_eq(on.mem.gradients, off.mem.gradients, 1.0, "Megatron keeps its gradients");
	cr_assert_float_eq(on.mem.total, off.mem.total - 12.0 * shard, 1.0);
	cr_assert_float_eq(on.offload_d2h_s, 0.061258, 1e-6);
	cr_assert_float_eq(on.offload_adam_s, 0.658048, 1e-6);
	cr_assert_float_eq(on.offload_h2d_s, 0.030629, 1e-6);
	/* The step's optimizer term: the three (nothing streams under
	 * Megatron-Core) plus the fitted fixed cost of a step and the GPU's
	 * pass over the gradients (4 B x P at 3.35 TB/s: 8 ms). */
	cr_assert_geq(on.optimizer_s, 0.061258 + 0.658048 + 0.030629);
	cr_assert_leq(on.optimizer_s, 0.061258 + 0.658048 + 0.030629 + fixed_s() + 0.02);
	cr_assert_float_eq(on.step_time_s - off.step_time_s, on.optimizer_s - off.optimizer_s,
			   1e-9 * on.step_time_s, "offload changes the step by its optimizer term only");
	cr_assert_eq(off.offload_adam_s, 0);
}

/* ZeRO-Offload (DeepSpeed, zero 2): the gradient shard goes to the host
 * in fp32 beside the states, 16 B x P/8, and streams during the backward:
 * only CPU Adam and the copy back are exposed. */
Test(offload, deepspeed_streams_the_gradients)
{
	const struct model_spec *m;
	struct cluster c;
	struct train_opts o;
	struct prediction on;
	double shard = 6738415616.0 / 8;

	setup("llama2-7b", "dgx-h100", 8, "deepspeed", &m, &c, &o);
	predict_str(m, &c, &o, "tp=1,dp=8,zero=2,gbs=64,recompute=full,optimizer_offload=on", &on);
	cr_assert(on.feasible, "%s", on.reject_msg);
	cr_assert_float_eq(on.mem.host, 16.0 * shard, 1.0);
	cr_assert_float_eq(on.mem.gradients, 0.0, 1e-9);
	cr_assert_float_eq(on.mem.optimizer, 0.0, 1e-9);
	cr_assert_leq(on.optimizer_s, 0.658048 + 0.030629 + fixed_s() + 0.02);
	cr_assert_geq(on.optimizer_s, 0.658048 + 0.030629);
}

Test(offload, refusals)
{
	const struct model_spec *m;
	struct cluster c;
	struct train_opts o;
	struct prediction p;
	struct layout l;
	unsigned set = 0;
	enum reject why = REJECT_NONE;
	struct perr e = { "" };

	/* Without zero >= 1 there is no optimizer shard to move. */
	setup("llama2-7b", "dgx-h100", 8, NULL, &m, &c, &o);
	cr_assert_eq(layout_parse("tp=8,optimizer_offload=on,gbs=64", &l, &set, &e), PPLAN_OK);
	layout_complete(&l, set, 8);
	cr_assert_neq(layout_check(&l, m, 8, &why, NULL), PPLAN_OK);
	cr_assert_eq(why, REJECT_OFFLOAD_ZERO);
	/* Megatron-Core offloads its distributed optimizer (zero 1), not
	 * Megatron FSDP; torchtitan not at all. */
	predict_str(m, &c, &o, "dp=8,zero=3,gbs=64,optimizer_offload=on", &p);
	cr_assert_eq(p.reject, REJECT_FW_OFFLOAD);
	setup("llama2-7b", "dgx-h100", 8, "torchtitan", &m, &c, &o);
	predict_str(m, &c, &o, "dp=8,zero=2,gbs=64,optimizer_offload=on", &p);
	cr_assert_eq(p.reject, REJECT_FW_OFFLOAD);
	/* Mixtral 8x22B's ZeRO-Offload states: 16 B per parameter of each
	 * GPU's shard, 140.6 B parameters with unsharded experts at ep 8
	 * over 8 GPUs, more than 80 % of a DGX H100's 2 TiB. */
	setup("mixtral-8x22b", "dgx-h100", 8, "deepspeed", &m, &c, &o);
	predict_str(m, &c, &o, "dp=8,ep=8,zero=3,gbs=64,recompute=full,optimizer_offload=on", &p);
	cr_assert_eq(p.reject, REJECT_HOST_OOM, "%s", p.reject_msg);
	cr_assert_gt(p.mem.host * 8, 0.8 * 2048.0 * GIB);
}

/* 13B on 8 V100 32GB: nothing fits without offload (every layout needs
 * 34 GiB or more of the 28.5 GiB cap); the search's answers are all
 * offloaded, and each one's twin without offload is out of memory. */
Test(offload, search_finds_it_where_nothing_else_fits)
{
	const struct model_spec *m = model_find("llama2-13b");
	struct cluster c;
	struct train_opts o;
	struct search_params sp;
	struct search_result r;
	struct perr e = { "" };
	const struct gpu_spec *g = gpu_find("v100-sxm2");

	cr_assert_not_null(m);
	cr_assert_not_null(g);
	cr_assert_eq(cluster_preset("dgx-h100", 8, &c, &e), PPLAN_OK);
	c.gpu = *g;
	train_opts_default(&o, m);
	o.precision = PREC_FP16;
	cr_assert_eq(train_opts_resolve(&o, &e), PPLAN_OK, "%s", e.msg);
	train_opts_fit_gpu(&o, g);
	o.max_memory_gib = 0.9 * g->mem_gib;
	search_params_default(&sp);
	sp.gbs = 64;
	sp.top_k = 5;
	cr_assert_eq(search_run(m, &c, &o, &sp, &r, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_gt(r.n_top, 0, "an offloaded layout fits");
	for (int i = 0; i < r.n_top; i++) {
		struct layout twin = r.top_layouts[i];
		struct prediction p;
		char buf[256];
		layout_format(&twin, buf, sizeof buf);
		cr_assert(twin.optimizer_offload, "%s is not offloaded", buf);
		twin.optimizer_offload = 0;
		cr_assert_eq(cost_predict(m, &c, &twin, &o, &p, &e), PPLAN_OK);
		cr_assert_eq(p.reject, REJECT_OOM, "%s fits without offload", buf);
	}
	search_free(&r);
}
