/*
 * test_terms.c: each term of the step time and of memory against a value
 * worked out by hand from its formula in sim/MODEL.md, so that a wrong
 * count or a wrong byte count fails here (tests/mutations.txt plants
 * such errors; tests/mutate.sh checks that each is caught).
 *
 * The machine: one DGX H100 node whose NVLink is set by hand to 100 GB/s
 * per GPU at efficiency 0.5 and no latency, so that a collective of S
 * bytes over n ranks takes S x factor(n) / 50e9 s (nccl-tests' bus
 * factors: all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all
 * (n-1)/n, send/recv 1; collective.h).  The model: Llama 3 8B (h 4096,
 * 32 layers, 32 heads of 128, 8 KV heads, FFN 14336, vocabulary 128256,
 * untied), sequences of 4096 tokens, bf16 (2-byte activations), newest
 * Megatron-Core unless a test says otherwise, TP overlap off.  Its
 * parameters by hand: per layer Q and O 2 x 4096^2 = 33,554,432, K and V
 * 2 x 4096 x 1024 = 8,388,608, MLP 3 x 4096 x 14336 = 176,160,768, two
 * norms 8,192: 218,112,000; x 32 = 6,979,584,000; embedding and head
 * 2 x 4096 x 128256 = 1,050,673,152; final norm 4,096: P = 8,030,261,248.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cost.h"
#include "cost_internal.h"
#include "framework.h"
#include "memory.h"
#include "units.h"

#define P_8B 8030261248.0
#define BW 50e9          /* bytes/s: 100 GB/s x 0.5 */
#define ACT (2.0 * 4096 * 4096) /* one microbatch's (T, h) activation, bf16: 33,554,432 B */

struct setup {
	struct model_spec m;
	struct cluster c;
	struct layout l;
	struct train_opts o;
	struct cost_params k;
};

static void expect_rel(double got, double want, double tol, const char *what)
{
	double err = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1.0);
	cr_expect(err <= tol, "%s: got %.12g, want %.12g (rel err %.2g)", what, got, want, err);
}

/* model on gpus GPUs of DGX H100s with the hand-set NVLink; fw NULL:
 * the default framework.  The layout string is taken as written (sp and
 * zero given where they matter), completed for the GPU count. */
static void setup(struct setup *s, const char *model, long gpus, const char *fw,
		  const char *layout)
{
	struct perr e = { "" };
	unsigned set = 0;
	const struct model_spec *m = model_find(model);
	cr_assert_not_null(m, "%s", model);
	s->m = *m;
	cr_assert_eq(cluster_preset("dgx-h100", gpus, &s->c, &e), PPLAN_OK, "%s", e.msg);
	s->c.nvlink = (struct link){ LINK_NVSWITCH, 100.0, 0.0, 0.5 };
	cr_assert_eq(layout_parse(layout, &s->l, &set, &e), PPLAN_OK, "%s", e.msg);
	layout_complete(&s->l, set, gpus);
	train_opts_default(&s->o, &s->m);
	s->o.seq = 4096;
	if (fw) {
		cr_assert_eq(framework_find(fw, NULL, 0, &s->o.fw, &e), PPLAN_OK, "%s", e.msg);
		cr_assert_eq(train_opts_resolve(&s->o, &e), PPLAN_OK, "%s", e.msg);
	}
	s->o.b.tp_overlap = FW_TPO_NONE;
	s->k = *cost_params_default();
	cr_assert_eq(s->k.nvlink_eff_scale, 1.0, "NVLink efficiency as set");
	s->o.params = &s->k;
}

static struct prediction predict(const struct setup *s)
{
	struct prediction p;
	struct perr e = { "" };
	cr_assert_eq(cost_predict(&s->m, &s->c, &s->l, &s->o, &p, &e), PPLAN_OK, "%s", e.msg);
	return p;
}

/* ---- tensor parallelism -------------------------------------------------------
 * Without SP: two all-reduces of the (T, h) activation forward, two
 * backward, per layer and microbatch (Megatron-LM, Shoeybi et al. 2019,
 * the f and g operators).  tp 2: factor 1, each ACT / BW = 671.09 us;
 * gbs 8 over dp 4 is 2 microbatches: 2 x 32 x 4 x 671.09 us = 171.80 ms. */
Test(terms, tp_allreduces_without_sp)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=0,zero=0");
	p = predict(&s);
	cr_assert_eq(p.microbatches, 2);
	expect_rel(p.time.tp_comm, 2 * 32 * 4 * ACT / BW, 1e-9, "TP all-reduces");
	expect_rel(p.time.tp_comm, 0.17179869184, 1e-9, "171.80 ms");
}

/* With SP (Korthikanti et al. 2022): forward two all-gathers and two
 * reduce-scatters; backward two reduce-scatters, two all-gathers and the
 * input gathered again for each weight gradient (two more): 6 gathers and
 * 4 scatters per layer, each (1/2) ACT / BW at tp 2: 5 ACT / BW a layer,
 * 2 x 32 x 5 x 671.09 us = 214.75 ms. */
Test(terms, sp_gathers_and_scatters)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=1,zero=0");
	p = predict(&s);
	expect_rel(p.time.tp_comm, 2 * 32 * 5 * ACT / BW, 1e-9, "SP gathers and scatters");
	expect_rel(p.time.tp_comm, 0.2147483648, 1e-9, "214.75 ms");
}

/* ---- expert parallelism -------------------------------------------------------
 * Mixtral 8x7B (32 MoE layers, top-2) over ep 8 in the node: dispatch and
 * combine forward and again backward, four all-to-alls per layer of the
 * routed tokens, 2 B x 4096 tokens x 4096 x 2 copies = 67,108,864 B at
 * factor 7/8: 1.1744 ms each; gbs 16 over dp 8 is 2 microbatches:
 * 2 x 32 x 4 x 1.1744 ms = 300.65 ms. */
Test(terms, ep_alltoalls)
{
	struct setup s;
	struct prediction p;
	setup(&s, "mixtral-8x7b", 8, NULL, "tp=1,dp=8,ep=8,mbs=1,gbs=16,zero=1");
	p = predict(&s);
	cr_assert_eq(p.microbatches, 2);
	expect_rel(p.time.ep_comm, 2 * 32 * 4 * (67108864.0 * 7 / 8 / BW), 1e-9, "EP all-to-alls");
	expect_rel(p.time.ep_comm, 0.30064771072, 1e-9, "300.65 ms");
}

/* Megatron's allgather dispatcher on the same Mixtral layout: each rank
 * gathers the 8 ranks' 4096 tokens of 4096 (2 B): an all-gather whose
 * output is 268,435,456 B, of which a ring moves 7/8 per rank: 4.6976 ms,
 * and the outputs reduce-scattered back as much; forward and backward,
 * 4 per layer: 2 x 32 x 4 x 4.6976 ms = 1202.59 ms, ep / k = 4 times the
 * all-to-alls' (each moves k = 2 copies, the gather all 8 ranks' tokens). */
Test(terms, ep_allgather_dispatcher)
{
	struct setup s;
	struct prediction p;
	setup(&s, "mixtral-8x7b", 8, NULL, "tp=1,dp=8,ep=8,mbs=1,gbs=16,zero=1");
	s.o.b.moe_allgather = 1;
	p = predict(&s);
	expect_rel(p.time.ep_comm, 2 * 32 * 4 * (2.0 * 4096 * 4096 * 8 * 7 / 8 / BW), 1e-9,
		   "allgather dispatcher");
	expect_rel(p.time.ep_comm, 4 * 0.30064771072, 1e-9, "4 x the all-to-alls");
}

/* Across two nodes (ep 16 over 16 GPUs; the network set to 25 GB/s, no
 * latency): of a rank's two token copies (67,108,864 B) the all-to-all
 * sends the 8 of 15 whose ranks are on the other node, 15/16 of them
 * leaving: 67,108,864 x 8/15 x 15/16 / 25e9 = 1.3422 ms, slower than the
 * NVLink share (x 7/15 x 7/8 / 50e9 = 0.548 ms).  The flex dispatcher
 * (DeepEP) sends a token once to each remote node that hosts one of its
 * k = 2 experts: 2 (1 - (1/2)^2) = 1.5 nodes reached, half of them
 * remote, 0.75 of 2 copies = 0.375: 0.9437 ms.  2 microbatches x 32
 * layers x 4: 343.60 and 241.59 ms. */
Test(terms, ep_flex_dispatcher_sends_once_per_node)
{
	struct setup s;
	struct prediction p;
	const double S = 67108864.0, NET = 25e9;
	setup(&s, "mixtral-8x7b", 16, NULL, "tp=1,dp=16,ep=16,mbs=1,gbs=32,zero=1");
	s.c.net = (struct link){ LINK_NET, 25.0, 0.0, 1.0 };
	p = predict(&s);
	expect_rel(p.time.ep_comm, 2 * 32 * 4 * (S * 8 / 15 * 15 / 16 / NET), 1e-9, "all-to-all");
	expect_rel(p.time.ep_comm, 0.3435973837, 1e-9, "343.60 ms");
	s.o.b.moe_flex = 1;
	p = predict(&s);
	expect_rel(p.time.ep_comm, 2 * 32 * 4 * (S * 0.375 * 15 / 16 / NET), 1e-9, "flex");
	expect_rel(p.time.ep_comm, 0.2415919104, 1e-9, "241.59 ms");
	/* In one node nothing crosses the network: the dispatchers agree. */
	setup(&s, "mixtral-8x7b", 8, NULL, "tp=1,dp=8,ep=8,mbs=1,gbs=16,zero=1");
	s.o.b.moe_flex = 1;
	expect_rel(predict(&s).time.ep_comm, 0.30064771072, 1e-9, "flex in the node");
}

/* Group-limited routing under the flex dispatcher, the same two nodes.
 * The 8 experts in 2 groups of 4 (one a node), a token's 2 experts in 1
 * group: it reaches 1 node, half the time the other: 0.5 of its 2 copies
 * cross, 0.25 of them (161.06 ms against 241.59 unlimited).  In 4 groups
 * of 2 (2 a node) with 2 of them: the node that holds neither group is
 * missed with probability C(2,2)/C(4,2) = (2/4)(1/3) = 1/6, so 2 x 5/6 =
 * 5/3 nodes are reached, more than the 1.5 of two even draws (the two
 * experts are in different groups): 5/12 of the copies, 268.44 ms.  The
 * all-to-all sends each copy to its rank whatever the groups. */
Test(terms, ep_flex_follows_group_limited_routing)
{
	struct setup s;
	const double S = 67108864.0, NET = 25e9;
	setup(&s, "mixtral-8x7b", 16, NULL, "tp=1,dp=16,ep=16,mbs=1,gbs=32,zero=1");
	s.c.net = (struct link){ LINK_NET, 25.0, 0.0, 1.0 };
	s.m.route_groups = 2;
	s.m.route_topk_groups = 1;
	expect_rel(predict(&s).time.ep_comm, 0.3435973837, 1e-9, "all-to-all, groups");
	s.o.b.moe_flex = 1;
	expect_rel(predict(&s).time.ep_comm, 2 * 32 * 4 * (S * 0.25 * 15 / 16 / NET), 1e-9,
		   "1 of 2 groups");
	expect_rel(predict(&s).time.ep_comm, 0.1610612736, 1e-9, "161.06 ms");
	s.m.route_groups = 4;
	s.m.route_topk_groups = 2;
	expect_rel(predict(&s).time.ep_comm, 2 * 32 * 4 * (S * 5.0 / 12 * 15 / 16 / NET), 1e-9,
		   "2 of 4 groups");
	expect_rel(predict(&s).time.ep_comm, 0.268435456, 1e-9, "268.44 ms");
}

/* Megatron-Core's 1F1B A2A overlap (sim/MODEL.md 5.1): in the steady
 * state, 1 - pp/m of the microbatches, a layer's four all-to-alls run
 * under the other microbatch's GEMMs and attention, which on the hand-set
 * NVLink take longer (Mixtral's layer, about 9.7 TFLOP forward and
 * backward per microbatch, against 4 x 1.17 ms of all-to-alls), so only
 * ep_overlap_exposed = 0.15 of them stays.  m = 2 (gbs 16 over dp 8):
 * 300.65 ms x (1/2 + 1/2 x 0.15) = 172.87 ms; m = 8: 4 x 300.65 ms x
 * (1/8 + 7/8 x 0.15) = 308.16 ms.  With full recomputation Megatron-Core
 * refuses the overlap, and a pipeline needs virtual stages. */
Test(terms, ep_a2a_overlap)
{
	struct setup s;
	setup(&s, "mixtral-8x7b", 8, NULL, "tp=1,dp=8,ep=8,mbs=1,gbs=16,zero=1");
	s.o.b.moe_a2a_overlap = 1;
	s.k.ep_overlap_exposed = 0.15;
	expect_rel(predict(&s).time.ep_comm, 0.30064771072 * 0.575, 1e-9, "m = 2");
	s.l.gbs = 64;
	expect_rel(predict(&s).time.ep_comm, 4 * 0.30064771072 * (1.0 / 8 + 7.0 / 8 * 0.15), 1e-9,
		   "m = 8");
	s.l.recompute = RECOMPUTE_FULL;
	expect_rel(predict(&s).time.ep_comm, 4 * 0.30064771072, 1e-9, "full recomputation: none");
	setup(&s, "mixtral-8x7b", 8, NULL, "tp=1,pp=2,dp=4,ep=4,mbs=1,gbs=16,zero=1");
	s.o.b.moe_a2a_overlap = 1;
	cr_expect_not(train_opts_moe_a2a_overlap(&s.o, &s.l), "pp without vp");
}

/* Where the all-to-alls outlast the compute under them (NVLink at 1 and
 * 0.5 GB/s), what stays exposed is the communication less that compute:
 * between two link speeds the compute cancels, and the exposed time
 * grows as much as without the overlap. */
Test(terms, ep_a2a_overlap_past_the_compute)
{
	struct setup s;
	double off1, off2, on1, on2;
	setup(&s, "mixtral-8x7b", 8, NULL, "tp=1,dp=8,ep=8,mbs=1,gbs=64,zero=1");
	s.c.nvlink = (struct link){ LINK_NVSWITCH, 2.0, 0.0, 0.5 };
	off1 = predict(&s).time.ep_comm;
	s.o.b.moe_a2a_overlap = 1;
	on1 = predict(&s).time.ep_comm;
	s.c.nvlink = (struct link){ LINK_NVSWITCH, 1.0, 0.0, 0.5 };
	on2 = predict(&s).time.ep_comm;
	s.o.b.moe_a2a_overlap = 0;
	off2 = predict(&s).time.ep_comm;
	cr_expect_lt(on1, off1);
	expect_rel(on2 - on1, off2 - off1, 1e-9, "slope 1 past the compute");
}

/* Megatron's --moe-shared-expert-overlap: the shared experts' fc1 under
 * the dispatch and fc2 under the combine.  On a link fast enough that
 * both all-to-alls are shorter than the GEMMs over them, the forward's
 * all-to-alls vanish and the backward's two stay: half the EP time. */
Test(terms, shared_experts_under_the_dispatch)
{
	struct setup s;
	double off;
	setup(&s, "deepseek-v2", 8, NULL, "tp=1,dp=8,ep=8,mbs=1,gbs=16,zero=1");
	s.c.nvlink = (struct link){ LINK_NVSWITCH, 100000.0, 0.0, 1.0 };
	off = predict(&s).time.ep_comm;
	s.o.b.moe_shared_overlap = 1;
	cr_assert_gt(off, 0);
	expect_rel(predict(&s).time.ep_comm, off / 2, 1e-9, "the forward's hidden");
}

/* Each local expert's fixed cost (sim/MODEL.md 4.1): Mixtral 8x7B over
 * ep 2 holds 4 experts a GPU; c = 100 us adds 4 x 100 us forward and
 * 4 x 200 us backward per MoE layer and microbatch, nothing else: 2
 * microbatches x 32 layers x 1.2 ms = 76.8 ms of compute.  Over ep 8 (one
 * expert a GPU) a quarter of it, 19.2 ms. */
Test(terms, moe_expert_fixed_cost)
{
	struct setup s;
	double base[2];
	const char *layouts[2] = { "tp=1,dp=8,ep=2,mbs=1,gbs=16,zero=1",
				   "tp=1,dp=8,ep=8,mbs=1,gbs=16,zero=1" };
	for (int i = 0; i < 2; i++) {
		struct prediction p;
		setup(&s, "mixtral-8x7b", 8, NULL, layouts[i]);
		s.k.moe_expert_fixed_us = 0.0;
		base[i] = predict(&s).time.compute;
		s.k.moe_expert_fixed_us = 100.0;
		p = predict(&s);
		cr_assert_eq(p.microbatches, 2);
		expect_rel(p.time.compute - base[i], 2 * 32 * (8 / (i ? 8.0 : 2.0)) * 300e-6, 1e-9,
			   layouts[i]);
	}
}

/* ---- context parallelism ------------------------------------------------------
 * Ring attention over cp 2: K and V of the local 2048 tokens, 2 x 2 B x
 * 2048 x 8 heads x 128 = 8,388,608 B a step; forward c-1 steps hidden
 * behind the attention and one more, backward 2(c-1) and one more.  On a
 * link slowed to 0.01 GB/s (a step 0.8389 s, the attention a few ms) the
 * hiding is negligible: 2 + 3 = 5 steps per layer, 2 microbatches:
 * 2 x 32 x 5 x 0.8389 s = 268.44 s, within the attention's share. */
Test(terms, cp_ring_steps)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, NULL, "tp=1,cp=2,dp=4,mbs=1,gbs=8,zero=1");
	s.c.nvlink = (struct link){ LINK_NVSWITCH, 0.01, 0.0, 1.0 };
	p = predict(&s);
	cr_assert_eq(p.microbatches, 2);
	expect_rel(p.time.cp_comm, 2 * 32 * 5 * (8388608.0 / 1e7), 1e-3, "CP ring steps");
}

/* ---- pipeline transfers ---------------------------------------------------------
 * Megatron sends each microbatch's (T, h) activation split over the TP
 * ranks (scatter-gather): 2 B x 4096 x 4096 / 2 = 16,777,216 B, factor 1:
 * 335.54 us a transfer; a forward and a backward transfer per microbatch,
 * 4 microbatches (gbs 8 over dp 2): 8 x 335.54 us = 2.6844 ms. */
Test(terms, pp_transfers)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, NULL, "tp=2,pp=2,dp=2,mbs=1,gbs=8,sp=1,zero=1");
	p = predict(&s);
	cr_assert_eq(p.microbatches, 4);
	expect_rel(p.p2p_s, ACT / 2 / BW, 1e-9, "one transfer");
	expect_rel(p.time.pp_comm, 4 * 2 * ACT / 2 / BW, 1e-9, "the step's transfers");
}

/* ---- data parallelism -----------------------------------------------------------
 * dp 8 in the node, one replica's P parameters, Megatron-Core's fp32
 * gradients (4 B) and bf16 weights (2 B):
 *   zero 0: all-reduce 4P at 2 x 7/8: 4 x P x 1.75 / BW = 1.1242 s;
 *   zero 1: reduce-scatter 4P and all-gather 2P at 7/8: 0.8432 s;
 *   zero 2: the reduce-scatter every microbatch (2): (2 x 4 + 2) P x 7/8 / BW;
 *   zero 3 (Megatron FSDP): per microbatch gathers of 2P, forward and
 *   backward (and once more under full recomputation), and a
 *   reduce-scatter of 4P. */
static double dp_total(const char *fw, const char *layout)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, fw, layout);
	p = predict(&s);
	return p.time.dp_comm_total;
}

Test(terms, dp_collectives_by_sharding)
{
	const double rs = P_8B * 7 / 8 / BW; /* one byte per parameter, reduce-scattered */
	struct setup s;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=0");
	cr_assert_eq(s.o.b.grad_bytes, 4, "Megatron-Core reduces fp32 gradients");
	expect_rel(dp_total(NULL, "dp=8,mbs=1,gbs=8,zero=0"), 4 * P_8B * 1.75 / BW, 1e-9, "zero 0");
	expect_rel(dp_total(NULL, "dp=8,mbs=1,gbs=8,zero=0"), 1.12423657472, 1e-9, "1.1242 s");
	expect_rel(dp_total(NULL, "dp=8,mbs=1,gbs=8,zero=1"), (4 + 2) * rs, 1e-9, "zero 1");
	expect_rel(dp_total(NULL, "dp=8,mbs=1,gbs=16,zero=2"), (2 * 4 + 2) * rs, 1e-9, "zero 2");
	expect_rel(dp_total(NULL, "dp=8,mbs=1,gbs=16,zero=3"), 2 * (2 * 2 + 4) * rs, 1e-9,
		   "zero 3: 2 gathers and a scatter per microbatch");
	expect_rel(dp_total(NULL, "dp=8,mbs=1,gbs=16,zero=3,recompute=full"),
		   2 * (3 * 2 + 4) * rs, 1e-9, "zero 3 under full recomputation: 3 gathers");
}

/* PyTorch FSDP (torchtitan) reshards after the forward: two gathers per
 * microbatch, however the layer is recomputed (the gathered layer stays
 * through its recomputation). */
Test(terms, fsdp_gathers)
{
	const double rs = P_8B * 7 / 8 / BW;
	struct setup s;
	setup(&s, "llama3-8b", 8, "torchtitan", "dp=8,mbs=1,gbs=16,zero=3");
	cr_assert(s.o.b.reshard_after_forward);
	expect_rel(dp_total("torchtitan", "dp=8,mbs=1,gbs=16,zero=3,recompute=full"),
		   2 * (2 * 2 + s.o.b.grad_bytes) * rs, 1e-9, "FSDP: 2 gathers and a scatter");
}

/* ---- recomputation --------------------------------------------------------------
 * Megatron's selective recomputation replays the attention core of each
 * layer in its backward; full recomputation the whole forward. */
Test(terms, recompute_replays)
{
	struct setup s;
	struct cost_ctx x;
	struct layer_cost lc;
	struct prediction p;

	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=1,zero=1,recompute=selective");
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &lc);
	cr_assert_gt(lc.attn_f, 0);
	p = predict(&s);
	expect_rel(p.time.recompute, 2 * 32 * lc.attn_f, 1e-9, "selective: the attention core");
	s.l.recompute = RECOMPUTE_FULL;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &lc);
	p = predict(&s);
	expect_rel(p.time.recompute,
		   2 * 32 * (lc.gemm_f + lc.attn_f + lc.elem_f + lc.tp_f + lc.cp_f + lc.ep_f), 1e-9,
		   "full: the forward");
}

/* ---- sliding-window attention -------------------------------------------------
 * Flash attention's time is (FLOPs + cp x half_flops) / rate: linear in
 * its FLOPs.  Full causal at s = 4096, tp 1, mbs 1: 2 x 4096 x 4096 x 32
 * heads x 256 (Q.K and V widths) x 1/2 = 137,438,953,472 FLOPs.  A window
 * of 1024 keeps s w - w^2/2 of the s^2/2 pairs: 3,670,016 / 8,388,608 =
 * 7/16 of them; on every layer the forward loses 9/16 of the FLOPs, on
 * half the layers (Gemma 2) 9/32.  Model FLOPs do not change. */
Test(terms, sliding_window_attention)
{
	struct setup s;
	struct cost_ctx x;
	struct layer_cost full, all, half;
	double fl = 137438953472.0, rate;
	double flops0;

	setup(&s, "llama3-8b", 8, NULL, "tp=1,dp=8,mbs=1,gbs=8,zero=1");
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cr_assert_eq(x.o->b.attention, FW_ATTN_FLASH);
	cost_layer(&x, 0, &full);
	rate = x.half.peak_flops * x.half.ceiling * s.k.attn_fwd_rel;
	flops0 = cost_model_flops(&s.m, 4096, 8);
	s.m.sliding_window = 1024;
	s.m.window_layers = 32;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &all);
	expect_rel(full.attn_f - all.attn_f, 9.0 / 16 * fl / rate, 1e-9, "a window on every layer");
	expect_rel(cost_model_flops(&s.m, 4096, 8), flops0, 0, "model FLOPs count full attention");
	s.m.window_layers = 16;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &half);
	expect_rel(full.attn_f - half.attn_f, 9.0 / 32 * fl / rate, 1e-9, "on half the layers");
	/* a window as long as the sequence changes nothing */
	s.m.sliding_window = 4096;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &half);
	expect_rel(half.attn_f, full.attn_f, 1e-12, "window = sequence");
}

/* ---- the pipeline bubble (closed form) ---------------------------------------------
 * 1F1B: (p - 1) (t + 2 p2p), t the mean stage's forward and backward of
 * one microbatch (Narayanan et al. 2021, eq. 1, with the transfers);
 * interleaved over v chunks: (p - 1) (t / v + 2 p2p).  32 layers over 2
 * stages, the embedding on the first and the head on the last. */
static double mean_stage(const struct prediction *p, int pp, int vp)
{
	return vp * (p->chunk.fwd_s + p->chunk.bwd_s) +
	       (p->first_extra_fwd_s + p->first_extra_bwd_s + p->last_extra_fwd_s +
		p->last_extra_bwd_s) / pp;
}

Test(terms, bubble_closed_forms)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, NULL, "tp=2,pp=2,dp=2,mbs=1,gbs=8,sp=1,zero=1");
	p = predict(&s);
	cr_assert_gt(p.first_extra_fwd_s, 0);
	expect_rel(p.time.bubble, 1 * (mean_stage(&p, 2, 1) + 2 * p.p2p_s), 1e-6, "1F1B");
	setup(&s, "llama3-8b", 8, NULL, "tp=2,pp=2,dp=2,vp=4,mbs=1,gbs=8,sp=1,zero=1");
	p = predict(&s);
	cr_assert_eq(s.l.schedule, SCHED_INTERLEAVED);
	expect_rel(p.time.bubble, 1 * (mean_stage(&p, 2, 4) / 4 + 2 * p.p2p_s), 1e-6,
		   "interleaved");
}

/* ---- memory ------------------------------------------------------------------------
 * Bytes per parameter on one of 8 data-parallel GPUs (one stage):
 *   Megatron-Core zero 1 (distributed optimizer): weights 2P, fp32
 *   gradients 4P, optimizer 12P / 8 (fp32 master and two moments);
 *   zero 2: gradients 4P / 8 as well; zero 3: weights 2P / 8 too;
 *   FSDP (torchtitan) zero 3: the fp32 master is the weight, 4P / 8, and
 *   the optimizer the two moments, 8P / 8. */
static struct mem_breakdown mem(const char *fw, const char *layout)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, fw, layout);
	p = predict(&s);
	return p.mem;
}

Test(terms, memory_by_sharding)
{
	struct mem_breakdown z1 = mem(NULL, "dp=8,mbs=1,gbs=8,zero=1");
	struct mem_breakdown z2 = mem(NULL, "dp=8,mbs=1,gbs=8,zero=2");
	struct mem_breakdown z3 = mem(NULL, "dp=8,mbs=1,gbs=8,zero=3");
	struct mem_breakdown f3 = mem("torchtitan", "dp=8,mbs=1,gbs=8,zero=3");
	expect_rel(z1.weights, 2 * P_8B, 1e-12, "zero 1 weights");
	expect_rel(z1.gradients, 4 * P_8B, 1e-12, "zero 1 gradients");
	expect_rel(z1.optimizer, 12 * P_8B / 8, 1e-12, "zero 1 optimizer");
	expect_rel(z2.gradients, 4 * P_8B / 8, 1e-12, "zero 2 gradients");
	expect_rel(z2.optimizer, 12 * P_8B / 8, 1e-12, "zero 2 optimizer");
	expect_rel(z3.weights, 2 * P_8B / 8, 1e-12, "zero 3 weights");
	expect_rel(f3.weights, 4 * P_8B / 8, 1e-12, "FSDP weights: the fp32 master");
	expect_rel(f3.optimizer, 8 * P_8B / 8, 1e-12, "FSDP optimizer: two moments");
	expect_rel(f3.optimizer, 8030261248.0, 1e-12, "8.03 GB");
}

/* Megatron-Core's precision-aware optimizer (--use-precision-aware-
 * optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16) on 8 data-
 * parallel GPUs, zero 1: the moments 2 + 2 bytes, and beside bf16 weights
 * the fp32 master kept as its low 16 bits (TE's store_param_remainders):
 * 6P / 8 where the default is 12P / 8; fp16 weights keep a 4-byte master:
 * 8P / 8; without the distributed optimizer (zero 0) Megatron-Core refuses
 * it and the 12P stays.  Adam's step moves 30 bytes a parameter, 22 with
 * bf16 moments, 20 with the remainder: the step's time differences stand
 * 8 : 2. */
Test(terms, precision_aware_optimizer)
{
	struct setup s;
	struct prediction p30, p22, p20;
	struct mem_breakdown off = mem(NULL, "dp=8,mbs=1,gbs=8,zero=1");
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	p30 = predict(&s);
	s.o.b.bf16_moments = 1;
	p20 = predict(&s);
	expect_rel(off.optimizer, 12 * P_8B / 8, 1e-12, "default: fp32 master and moments");
	expect_rel(p20.mem.optimizer, 6 * P_8B / 8, 1e-12, "bf16 moments, 16-bit remainder");
	s.o.precision = PREC_FP16;
	p22 = predict(&s);
	expect_rel(p22.mem.optimizer, 8 * P_8B / 8, 1e-12, "fp16 weights: a 4-byte master");
	expect_rel(p30.optimizer_s - p22.optimizer_s, 4 * (p22.optimizer_s - p20.optimizer_s), 1e-9,
		   "Adam's bytes 30 : 22 : 20");
	cr_expect_gt(p22.optimizer_s - p20.optimizer_s, 0);
	s.o.precision = PREC_BF16;
	s.l.zero = 0;
	expect_rel(predict(&s).mem.optimizer, 12 * P_8B, 1e-12, "zero 0: not applied");
}

/* Megatron pads the vocabulary to a multiple of 128 x tp: Llama 3's
 * 128,256 at tp 4 is 128,512, 256 rows more in the embedding and in the
 * untied head, each split over the 4 TP ranks: 2 B x 2 x 4096 x 256 / 4 =
 * 1,048,576 B more weights on a one-stage GPU than a framework that keeps
 * the tokenizer's vocabulary; a vocabulary already padded is left as is. */
Test(terms, vocab_padded_as_megatron_pads_it)
{
	struct setup s;
	struct framework unpadded;
	double padded_w, as_is_w;
	setup(&s, "llama3-8b", 8, NULL, "tp=4,dp=2,mbs=1,gbs=8,zero=1");
	cr_assert_eq(train_opts_vocab(&s.o, &s.l, 128256), 128512);
	padded_w = predict(&s).mem.weights;
	unpadded = *s.o.fw;
	unpadded.vocab_multiple = 0;
	s.o.fw = &unpadded;
	as_is_w = predict(&s).mem.weights;
	expect_rel(padded_w - as_is_w, 1048576.0, 1e-9, "256 padded rows of two tables over tp 4");
	s.m.vocab = 128512;
	expect_rel(predict(&s).mem.weights, padded_w, 1e-12, "priced as a 128,512 vocabulary");
}

/* ZeRO-3 holds two gathered layers (the one in use and the prefetched
 * next) of 2-byte weights beside what ZeRO-1 holds: 2 x 2 x P / 32 layers
 * = P / 8 = 1,003,782,656 B more (the gradients are fp32, so no fp32
 * copy is made at the optimizer step under either). */
Test(terms, zero3_gathered_layers)
{
	struct mem_breakdown z1 = mem(NULL, "dp=8,mbs=1,gbs=8,zero=1");
	struct mem_breakdown z3 = mem(NULL, "dp=8,mbs=1,gbs=8,zero=3");
	expect_rel(z3.other - z1.other, 2 * 2 * P_8B / 32, 1e-9, "two gathered layers");
}

/* NCCL's channel buffers: mem_nccl_gib on every GPU of a multi-GPU job,
 * none on a single GPU. */
Test(terms, nccl_buffers)
{
	struct setup s;
	struct prediction a, b;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	s.k.mem_nccl_gib = 1.0;
	a = predict(&s);
	s.k.mem_nccl_gib = 2.5;
	b = predict(&s);
	expect_rel(b.mem.other - a.mem.other, 1.5 * GIB, 1e-12, "1.5 GiB more buffers");
}

/* DeepSpeed's pipeline engine keeps p - stage + 1 activation buffers
 * (TrainSchedule's num_pipe_buffers), Megatron's 1F1B p - stage: on the
 * first of 4 stages with 8 microbatches, 5 against 4. */
Test(terms, pipeline_buffers)
{
	struct setup s;
	struct mem_breakdown mb;
	setup(&s, "llama3-8b", 8, "deepspeed", "pp=4,dp=2,mbs=1,gbs=16,zero=1");
	cr_assert_eq(s.o.b.pipe, FW_PIPE_DEEPSPEED);
	memory_stage(&s.m, &s.c, &s.l, &s.o, 0, &mb);
	cr_expect_eq(mb.inflight, 5);
	setup(&s, "llama3-8b", 8, NULL, "pp=4,dp=2,mbs=1,gbs=16,zero=1");
	memory_stage(&s.m, &s.c, &s.l, &s.o, 0, &mb);
	cr_expect_eq(mb.inflight, 4);
}

/* Dropout masks, one byte per element: with full recomputation a layer
 * keeps only its input, so the difference a model trained with dropout
 * makes on the one-stage GPU is the embedding's mask (s b h per
 * microbatch in flight, one here) and the layer being differentiated's
 * two masks (2 s b h): 3 x 4096 x 4096 = 50,331,648 B. */
Test(terms, dropout_masks)
{
	struct setup s;
	struct prediction with, without;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1,recompute=full");
	s.m.no_dropout = 1;
	without = predict(&s);
	s.m.no_dropout = 0;
	with = predict(&s);
	cr_assert_eq(with.mem.inflight, 1);
	expect_rel(with.mem.activations - without.mem.activations, 3.0 * 4096 * 4096, 1e-12,
		   "the embedding's and one layer's masks");
}

/* ---- overlap shares -----------------------------------------------------------------
 * TP overlap, pipelined (Transformer Engine's userbuffers): each
 * direction's collectives hide behind the GEMMs they feed, leaving the
 * larger of the fitted exposed share r of them and what the GEMMs cannot
 * cover: max(r C, C - G).  Bulk: only the backward's, behind the weight-
 * gradient GEMMs.  With SP at tp 2 the forward moves C_f = 4 x ACT/2 / BW
 * = 1.342 ms a layer and the backward C_b = 6 x ACT/2 / BW = 2.013 ms; on
 * a link 20 times slower (C_f 26.8 ms, far above any GEMM of the layer)
 * the GEMMs are the part hidden. */
static void tp_overlap_case(double bw_gbps, enum fw_tp_overlap kind, int slow)
{
	struct setup s;
	struct cost_ctx x;
	struct layer_cost none;
	struct prediction p;
	double r, cf, cb, f, b, scale = 100.0 / bw_gbps;
	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=1,zero=1");
	s.c.nvlink.bw_gbps = bw_gbps;
	r = s.k.tp_overlap_exposed;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &none); /* no overlap: the GEMM times */
	cf = 4 * ACT / 2 / BW * scale;
	cb = 6 * ACT / 2 / BW * scale;
	expect_rel(none.tp_f, cf, 1e-9, "forward collectives");
	expect_rel(none.tp_b, cb, 1e-9, "backward collectives");
	s.o.b.tp_overlap = kind;
	p = predict(&s);
	if (kind == FW_TPO_PIPELINED) {
		f = fmax(r * cf, cf - none.gemm_f);
		b = fmax(r * cb, cb - none.gemm_b);
		cr_expect(slow ? cf - none.gemm_f > r * cf : r * cf > cf - none.gemm_f,
			  "the branch the case is for");
	} else {
		f = cf;
		b = fmax(r * cb, cb - none.gemm_bw);
	}
	expect_rel(p.time.tp_comm, 2 * 32 * (f + b), 1e-9, "exposed TP traffic");
}

Test(terms, tp_overlap_shares)
{
	tp_overlap_case(100.0, FW_TPO_PIPELINED, 0);
	tp_overlap_case(5.0, FW_TPO_PIPELINED, 1);
	tp_overlap_case(100.0, FW_TPO_BULK, 0);
	tp_overlap_case(5.0, FW_TPO_BULK, 1);
}

/* DP buckets (zero 1): the gradient reduce-scatter overlaps the last
 * microbatch's backward B, the weight all-gather the next forward F;
 * each leaves what the window cannot hide plus the fitted share u of all
 * of it: max(0, c - W) + u c.  Reduce-scatter 4P x 7/8 / BW = 0.5621 s,
 * all-gather 2P x 7/8 / BW = 0.2811 s, u set to 0.1. */
Test(terms, dp_bucket_overlap)
{
	struct setup s;
	struct prediction p;
	double rs = 4 * P_8B * 7 / 8 / BW, ag = 2 * P_8B * 7 / 8 / BW, u = 0.1, B, F;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=16,zero=1");
	s.k.dp_overlap_unhidden = u;
	s.o.b.overlap_grad_reduce = s.o.b.overlap_param_gather = 1;
	p = predict(&s);
	B = p.chunk.bwd_s;
	F = p.chunk.fwd_s;
	cr_assert_gt(B, 0);
	expect_rel(p.time.dp_comm_exposed, fmax(0, rs - B) + u * rs + fmax(0, ag - F) + u * ag,
		   1e-9, "bucketed, overlapped");
	s.o.b.overlap_grad_reduce = s.o.b.overlap_param_gather = 0;
	p = predict(&s);
	expect_rel(p.time.dp_comm_exposed, rs + ag, 1e-9, "not overlapped: all of it");
}

/* ZeRO-3's per-microbatch traffic c = 2 gathers of 2P and a scatter of 4P
 * (8P x 7/8 / BW = 1.124 s) beside a microbatch's forward and backward t
 * (the one stage: its layers and both edges): max(0, c - t) + u3 min(c, t)
 * exposed each microbatch, u3 the fitted share. */
Test(terms, zero3_overlap)
{
	struct setup s;
	struct prediction p;
	double c = 8 * P_8B * 7 / 8 / BW, t, u3;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=16,zero=3");
	u3 = s.k.zero3_unhidden;
	p = predict(&s);
	t = p.chunk.fwd_s + p.chunk.bwd_s + p.first_extra_fwd_s + p.first_extra_bwd_s +
	    p.last_extra_fwd_s + p.last_extra_bwd_s;
	expect_rel(p.time.dp_comm_total, 2 * c, 1e-9, "2 microbatches");
	expect_rel(p.time.dp_comm_exposed, 2 * (fmax(0, c - t) + u3 * fmin(c, t)), 1e-9,
		   "exposed");
}

/* ---- LoRA fine-tuning -----------------------------------------------------------
 * Rank-32 adapters beside Llama 3 8B's four linear layers a layer, r (k + n)
 * parameters each: QKV 4096 + 6144, O 4096 + 4096, the gated fc1 4096 +
 * 28672, fc2 14336 + 4096: 69,632 x 32 = 2,228,224 a layer, A = 71,303,168
 * in 32 layers.  The frozen model keeps its bf16 weights only; the adapters
 * add theirs (2A), their fp32 gradients (4A) and Adam's 12 bytes sharded
 * over dp (zero 1: 12A / 8); the DP reduction moves the adapters' gradients
 * alone: zero 0 an all-reduce of 4A, zero 1 a reduce-scatter of 4A and an
 * all-gather of 2A (x 7/8 over 8 ranks, at 50 GB/s). */
#define LORA_8B 71303168.0
Test(terms, lora_memory_and_dp)
{
	struct setup s;
	struct prediction p;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	s.o.lora_rank = 32;
	p = predict(&s);
	expect_rel(p.mem.weights, 2 * (P_8B + LORA_8B), 1e-12, "frozen bf16 weights and adapters");
	expect_rel(p.mem.gradients, 4 * LORA_8B, 1e-12, "the adapters' gradients");
	expect_rel(p.mem.optimizer, 12 * LORA_8B / 8, 1e-12, "the adapters' Adam states");
	expect_rel(p.time.dp_comm_total, 6 * LORA_8B * 7 / 8 / BW, 1e-9, "zero 1");
	s.l.zero = 0;
	expect_rel(predict(&s).time.dp_comm_total, 4 * LORA_8B * 1.75 / BW, 1e-9, "zero 0");
	s.o.lora_rank = 8; /* a quarter of the adapters */
	expect_rel(predict(&s).mem.gradients, LORA_8B, 1e-12, "rank 8: 4 bytes x A / 4");
}

/* A frozen linear layer runs its forward and its data gradient; its
 * adapter adds x A (T x r from k) and (xA) B (T x n from r) forward and
 * the data and weight gradients of each backward.  One layer of Llama 3
 * 8B at T = 4096 tokens (mbs 1, tp 1): the four linears' shapes from the
 * GEMM model; the router-less dense layer has no frozen linear without an
 * adapter.  Model FLOPs: each weight's forward and data gradient (2 x
 * its forward), the attention core 3 x (forward and backward); per token
 * at s = 4096 the core is 32 layers x 2 x 4096 x 32 heads x 256 =
 * 2,147,483,648 FLOPs forward. */
/* LoRA under TP (Megatron-Bridge's ParallelLinearAdapter): per TP-split
 * block, beside the column-parallel linear A's rank-r output gathered
 * and B's input gradient all-reduced (without SP the input gradient
 * too; under SP with TP overlap the input gathered again), beside the
 * row-parallel one A's output all-reduced, B's output gathered (under SP
 * gathered again backward), B's input gradient all-reduced.  On 2 GPUs a
 * gather or a reduce-scatter moves half its bytes at BW, an all-reduce
 * all of them. */
Test(terms, lora_tp_collectives)
{
	struct setup s;
	struct cost_ctx x;
	struct layer_cost full, lora, ovl;
	const double RA = 2.0 * 4096 * 32; /* A's output, bf16 */
	const double ag_h = ACT / 2 / BW, ar_h = ACT / BW, ag_r = RA / 2 / BW, ar_r = RA / BW;
	double r;

	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=1,zero=1");
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &full);
	s.o.lora_rank = 32;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &lora);
	expect_rel(lora.tp_f, full.tp_f + 2 * (ag_r + ar_r + ag_h), 1e-9, "SP forward: two blocks");
	expect_rel(lora.tp_b, full.tp_b + 2 * (ar_r + ar_r + ag_h), 1e-9, "SP backward");
	/* TP overlap: the base layer's collectives behind its GEMMs, the
	 * adapters' in the open, the input gathered again */
	s.o.b.tp_overlap = FW_TPO_PIPELINED;
	r = s.k.tp_overlap_exposed;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &ovl);
	expect_rel(ovl.tp_f, fmax(r * full.tp_f, full.tp_f - lora.gemm_f) +
			     2 * (ag_h + ag_r + ar_r + ag_h), 1e-9, "SP and TP overlap forward");
	expect_rel(ovl.tp_b, fmax(r * full.tp_b, full.tp_b - lora.gemm_b) +
			     2 * (ag_h + ar_r + ar_r + ag_h), 1e-9, "SP and TP overlap backward");
	/* without SP */
	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=0,zero=1");
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &full);
	s.o.lora_rank = 32;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &lora);
	expect_rel(full.tp_f, 2 * ar_h, 1e-9, "two all-reduces");
	expect_rel(lora.tp_f, full.tp_f + 2 * (ag_r + ar_r + ag_h), 1e-9, "forward without SP");
	expect_rel(lora.tp_b, full.tp_b + 2 * (ar_h + ar_r + ar_r), 1e-9, "backward without SP");
}

/* The linears adapted (target_modules).  Llama 3 8B, rank 32:
 * linear_qkv alone 32 x 32 x (4096 + 6144) = 10,485,760 adapters; with
 * linear_proj 32 x 32 x (10,240 + 8,192) = 18,874,368; linear_proj alone
 * 32 x 32 x 8,192 = 8,388,608.  Under tp 2 with SP
 * (no TP overlap) linear_qkv's adapter adds A's output gathered forward
 * and B's input gradient all-reduced backward; linear_proj's A's output
 * all-reduced and B's output gathered forward, both again backward.
 * DeepSeek-V3 (61 layers, 3 dense) under LoRA's default list, which
 * names no MLA linear: linear_proj (128 x 128 + 7168 = 23,552), the
 * dense MLP (7168 + 2 x 18432 = 44,032; 18,432 + 7,168 = 25,600), the
 * shared and 256 routed experts (7168 + 2 x 2048 = 11,264; 2048 + 7168
 * = 9,216 each): 3 x 93,184 + 58 x (23,552 + 257 x 20,480) =
 * 306,920,448 at rank 1; NeMo's DeepSeek-V3 list (the four MLA
 * projections and linear_proj): q_down 7168 + 1536, q_up 1536 + 128 x
 * 192, kv_down 7168 + 512 + 64, kv_up 512 + 128 x 256, proj 23,552 =
 * 99,392 a layer, 6,062,912 in 61. */
Test(terms, lora_targets)
{
	struct setup s;
	struct cost_ctx x;
	struct layer_cost full, qkv, proj;
	const double RA = 2.0 * 4096 * 32;
	const double ag_h = ACT / 2 / BW, ag_r = RA / 2 / BW, ar_r = RA / BW;
	struct prediction p;

	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	s.o.lora_rank = 32;
	s.o.lora_targets = LORA_QKV;
	p = predict(&s);
	expect_rel(model_lora_params(&s.m, 32, LORA_QKV), 10485760.0, 1e-12, "linear_qkv");
	expect_rel(p.mem.gradients, 4 * 10485760.0, 1e-12, "the qkv adapters' gradients");
	expect_rel(model_lora_params(&s.m, 32, LORA_QKV | LORA_PROJ), 18874368.0, 1e-12,
		   "linear_qkv and linear_proj");
	expect_rel(model_lora_params(&s.m, 32, LORA_TARGETS_DEFAULT), LORA_8B, 1e-12, "default");
	expect_rel(model_lora_params(&s.m, 32, LORA_PROJ), 32.0 * 32 * 8192, 1e-12,
		   "linear_proj alone: 4096 + 4096");
	{ /* one layer's GEMMs: every frozen linear's forward, linear_qkv's adapter alone */
		const double lin[4][2] = { { 4096, 6144 }, { 4096, 4096 }, { 4096, 28672 },
					   { 14336, 4096 } };
		double fwd;
		cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
		cost_layer(&x, 0, &qkv);
		fwd = gemm_time(&x.run, 4096, 32, 4096) + gemm_time(&x.run, 4096, 6144, 32);
		for (int i = 0; i < 4; i++)
			fwd += gemm_time(&x.run, 4096, lin[i][1], lin[i][0]);
		expect_rel(qkv.gemm_f, fwd, 1e-12, "forward: the weights and linear_qkv's adapter");
	}

	setup(&s, "llama3-8b", 8, NULL, "tp=2,dp=4,mbs=1,gbs=8,sp=1,zero=1");
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &full);
	s.o.lora_rank = 32;
	s.o.lora_targets = LORA_QKV;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &qkv);
	expect_rel(qkv.tp_f, full.tp_f + ag_r, 1e-9, "column side forward");
	expect_rel(qkv.tp_b, full.tp_b + ar_r, 1e-9, "column side backward");
	s.o.lora_targets = LORA_PROJ;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &proj);
	expect_rel(proj.tp_f, full.tp_f + ar_r + ag_h, 1e-9, "row side forward");
	expect_rel(proj.tp_b, full.tp_b + ar_r + ag_h, 1e-9, "row side backward");

	setup(&s, "deepseek-v3", 256, NULL, "pp=8,dp=32,ep=32,mbs=1,gbs=256");
	cr_expect_eq(s.m.layers, 61);
	expect_rel(model_lora_params(&s.m, 1, LORA_TARGETS_DEFAULT), 306920448.0, 1e-12,
		   "LoRA's default list on MLA");
	expect_rel(model_lora_params(&s.m, 1, LORA_Q_DOWN | LORA_Q_UP | LORA_KV_DOWN |
					      LORA_KV_UP | LORA_PROJ),
		   6062912.0, 1e-12, "NeMo's DeepSeek-V3 list");
	cr_expect_eq(model_lora_present(&s.m, LORA_TARGETS_DEFAULT), LORA_PROJ | LORA_FC1 | LORA_FC2,
		     "no linear_qkv in MLA");
}

/* A frozen linear without an adapter keeps no input (its weight takes no
 * gradient).  Llama 3 8B (seq 8192, mbs 1, tp 1, bf16, no recompute):
 * with linear_qkv alone the second norm's output (2 h bytes a token) and
 * linear_fc2's input (2 x 14,336) go, in each of the 32 layers' kept
 * tensors and in the working layer: 33 x 4096 x (8192 + 28,672) bytes;
 * with linear_proj alone the first norm's output (2 h) too. */
Test(terms, lora_frozen_inputs)
{
	struct setup s;
	double all, qkv, proj;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	s.o.lora_rank = 32;
	all = predict(&s).mem.activations;
	s.o.lora_targets = LORA_QKV;
	qkv = predict(&s).mem.activations;
	s.o.lora_targets = LORA_PROJ;
	proj = predict(&s).mem.activations;
	expect_rel(all - qkv, 33.0 * 4096 * (8192 + 28672), 1e-12, "linear_qkv alone");
	expect_rel(all - proj, 33.0 * 4096 * (2 * 8192 + 28672), 1e-12, "linear_proj alone");
	s.o.lora_rank = 0;
	expect_rel(predict(&s).mem.activations, all, 1e-12, "every adapted linear keeps its input");
}

/* target_modules as users write them */
Test(terms, lora_targets_parse)
{
	unsigned t = 0;
	char bad[32], out[192];
	cr_expect_eq(lora_targets_parse("qkv+linear_proj", &t, bad, sizeof bad), 0);
	cr_expect_eq(t, LORA_QKV | LORA_PROJ);
	cr_expect_eq(lora_targets_parse(" in_proj, out_proj ", &t, bad, sizeof bad), 0);
	cr_expect_eq(t, LORA_IN_PROJ | LORA_OUT_PROJ);
	cr_expect_eq(lora_targets_parse("all", &t, bad, sizeof bad), 0);
	cr_expect_eq(t, (unsigned)LORA_TARGET_ALL);
	cr_expect_eq(lora_targets_parse("linear_fc1,proj_x", &t, bad, sizeof bad), -1);
	cr_expect_str_eq(bad, "proj_x");
	cr_expect_eq(lora_targets_parse(" , ", &t, bad, sizeof bad), -1, "nothing named");
	cr_expect_str_eq(lora_targets_format(LORA_QKV | LORA_FC2, ",", out, sizeof out),
			 "linear_qkv,linear_fc2");
}

Test(terms, lora_layer_gemms)
{
	struct setup s;
	struct cost_ctx x;
	struct layer_cost full, lora;
	const struct gemm_rate *r;
	const double T = 4096, lin[4][2] = { { 4096, 6144 }, { 4096, 4096 },
				 { 4096, 28672 }, { 14336, 4096 } };
	double fwd = 0, bwd = 0, core = 32 * 2.0 * 4096 * 32 * 256;
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &full);
	s.o.lora_rank = 32;
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &lora);
	r = &x.run;
	for (int i = 0; i < 4; i++) {
		double k = lin[i][0], n = lin[i][1];
		fwd += gemm_time(r, T, n, k) + gemm_time(r, T, 32, k) + gemm_time(r, T, n, 32);
		bwd += gemm_time(r, T, k, n) + /* the frozen weight's data gradient */
		       gemm_time(r, T, k, 32) + gemm_time(r, k, 32, T) + /* A's */
		       gemm_time(r, T, 32, n) + gemm_time(r, 32, n, T);  /* B's */
	}
	expect_rel(lora.gemm_f, fwd, 1e-12, "forward: the weights and the adapters");
	expect_rel(lora.gemm_b, bwd, 1e-12, "backward: data gradients, the adapters' both");
	expect_rel(lora.attn_b, full.attn_b, 0, "the attention core as in training");
	cr_expect_lt(lora.gemm_b, full.gemm_b, "no weight gradients of the frozen weights");
	expect_rel(cost_train_flops(&s.m, &s.o, 8),
		   2.0 / 3.0 * cost_model_flops(&s.m, 4096, 8) + core * 4096 * 8, 1e-12,
		   "LoRA model FLOPs");
}

/* ---- NVFP4 -------------------------------------------------------------------
 * An NVFP4 GEMM on a B200 (sim/MODEL.md 3): the fp4 peak, 9,000 TFLOP/s
 * dense (144 PFLOP/s with sparsity per 8 GPUs), at Blackwell's bf16
 * ceiling 0.62 times gemm_fp4_rel 0.82: 0.5084 of it.  8192^3 is
 * 1.0995e12 FLOPs in whole tiles, plus the saturation knee's
 * gemm_half_us of work at peak: (F + 9e15 x half_us) / (9e15 x 0.5084).
 * Its operands, 0.5625 B an element (4 bits and an E4M3 scale per 16),
 * and its 2-byte output move in 0.4 ms at 8 TB/s x 0.85, under the
 * math.  The same GEMM in fp8 runs at 4,500 x 0.62 x 0.85.  In a job, an
 * NVFP4 layer's linears take the fp4 rate and its attention core stays
 * in bf16; the GEMM inputs kept for the backward are 0.5625 B, not fp8's
 * 1, and the weights stay bf16 (no fp8 weights). */
Test(terms, nvfp4_gemm_rate)
{
	const struct gpu_spec *g = gpu_find("b200");
	const struct cost_params *k = cost_params_default();
	struct gemm_rate fp8, fp4;
	const double F = 2.0 * 8192.0 * 8192.0 * 8192.0;
	struct setup s;
	struct cost_ctx x4, x8;
	struct layer_cost l4, l8;
	struct perr e = { "" };

	cr_assert_not_null(g);
	cr_assert_eq(g->fp4_tflops, 9000.0);
	gemm_rate_init(&fp8, g, PREC_FP8, k);
	fp4 = fp8;
	gemm_rate_nvfp4(&fp4, g, k);
	expect_rel(gemm_time(&fp4, 8192, 8192, 8192),
		   (F + 9e15 * k->gemm_half_us * 1e-6) / (9e15 * 0.62 * 0.82), 1e-3, "fp4 GEMM");
	expect_rel(gemm_time(&fp8, 8192, 8192, 8192),
		   (F + 4.5e15 * k->gemm_half_us * 1e-6) / (4.5e15 * 0.62 * 0.85), 1e-3, "fp8 GEMM");
	expect_rel(fp4.in_bytes, 0.5625, 1e-12, "NVFP4 operand bytes");

	/* Llama 3 8B on 8 B200s, fp8 tensorwise against NVFP4 */
	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	cr_assert_eq(cluster_preset("hgx-b200", 8, &s.c, &e), PPLAN_OK, "%s", e.msg);
	s.o.precision = PREC_FP8;
	s.o.switches.fp8_recipe = FP8_NVFP4;
	cr_assert_eq(train_opts_resolve(&s.o, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(s.o.b.fp8_recipe, FP8_NVFP4);
	cr_assert_not(s.o.b.fp8_weights, "NVFP4 keeps bf16 weights");
	cost_ctx_init(&x4, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x4, 0, &l4);
	{
		const double lin[4][2] = { { 4096, 6144 }, { 4096, 4096 }, { 4096, 28672 },
					   { 14336, 4096 } };
		double fwd = 0;
		for (int i = 0; i < 4; i++)
			fwd += gemm_time(&fp4, 4096, lin[i][1], lin[i][0]);
		expect_rel(l4.gemm_f, fwd, 1e-12, "an NVFP4 layer's forward GEMMs");
	}
	s.o.switches.fp8_recipe = FP8_TENSORWISE;
	cr_assert_eq(train_opts_resolve(&s.o, &e), PPLAN_OK, "%s", e.msg);
	cost_ctx_init(&x8, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x8, 0, &l8);
	expect_rel(l4.attn_f, l8.attn_f, 1e-12, "the attention core in bf16 either way");
	cr_expect(l4.gemm_f < 0.6 * l8.gemm_f, "fp4 GEMMs %g s, fp8 %g s", l4.gemm_f, l8.gemm_f);
	/* the kept GEMM inputs (8.3): the QKV and MLP inputs 2h, the output
	 * projection's a.dv = h and the MLP-down's F, 26,624 elements a
	 * token, 1 B in fp8 tensorwise and 0.5625 B in NVFP4: 0.4375 x
	 * 26,624 x 4,096 tokens fewer bytes a layer */
	{
		double a8 = memory_layer_activations(&s.m, &s.l, &s.o, 0);
		s.o.switches.fp8_recipe = FP8_NVFP4;
		cr_assert_eq(train_opts_resolve(&s.o, &e), PPLAN_OK, "%s", e.msg);
		expect_rel(a8 - memory_layer_activations(&s.m, &s.l, &s.o, 0),
			   0.4375 * (2 * 4096 + 4096 + 14336) * 4096.0, 1e-9, "NVFP4's kept inputs");
	}
}

/* ---- bf16 end layers -----------------------------------------------------------
 * Llama 3 8B in NVFP4 on 8 B200s, dp 8, one microbatch a GPU, with its
 * last 4 layers in bf16 (Megatron-Core's first_last_layers_bf16, as
 * Megatron-Bridge's NVFP4 tutorial keeps them; sim/MODEL.md 3): the
 * compute grows by 4 x (a bf16 run's layer - an NVFP4 run's layer),
 * forward and backward, each layer priced by a job of its own precision
 * (the second method); the activations by 4 kept layers' and the working
 * layer's GEMM inputs at 2 B instead of 0.5625: 5 x 1.4375 x 26,624 x
 * 4,096 B (8.3).  Megatron-Core keeps at most a stage's layers in bf16
 * at either end: on pp 8 (4 layers a stage) 5 cannot run. */
Test(terms, bf16_end_layers)
{
	struct setup s;
	struct perr e = { "" };
	struct cost_ctx x;
	struct layer_cost l4, l16;
	struct prediction a, b;

	setup(&s, "llama3-8b", 8, NULL, "dp=8,mbs=1,gbs=8,zero=1");
	cr_assert_eq(cluster_preset("hgx-b200", 8, &s.c, &e), PPLAN_OK, "%s", e.msg);
	s.o.precision = PREC_BF16;
	cr_assert_eq(train_opts_resolve(&s.o, &e), PPLAN_OK, "%s", e.msg);
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &l16);
	s.o.precision = PREC_FP8;
	s.o.switches.fp8_recipe = FP8_NVFP4;
	cr_assert_eq(train_opts_resolve(&s.o, &e), PPLAN_OK, "%s", e.msg);
	cost_ctx_init(&x, &s.m, &s.c, &s.l, &s.o);
	cost_layer(&x, 0, &l4);
	a = predict(&s);
	s.o.bf16_last = 4;
	b = predict(&s);
	cr_assert_eq(a.microbatches, 1);
	expect_rel(b.time.compute - a.time.compute,
		   4 * ((l16.gemm_f + l16.attn_f + l16.elem_f + l16.gemm_b + l16.attn_b + l16.elem_b) -
			(l4.gemm_f + l4.attn_f + l4.elem_f + l4.gemm_b + l4.attn_b + l4.elem_b)),
		   1e-9, "4 layers in bf16");
	expect_rel(b.mem.activations - a.mem.activations,
		   5 * 1.4375 * (2 * 4096 + 4096 + 14336) * 4096.0, 1e-9, "their kept inputs");
	/* the first layers instead: the same */
	s.o.bf16_last = 0;
	s.o.bf16_first = 4;
	expect_rel(predict(&s).time.compute, b.time.compute, 1e-12, "the first 4");
	/* pp 8: a stage holds 4 layers, so 4 fit and 5 cannot run */
	setup(&s, "llama3-8b", 8, NULL, "pp=8,dp=1,mbs=1,gbs=8,zero=0");
	cr_assert_eq(cluster_preset("hgx-b200", 8, &s.c, &e), PPLAN_OK, "%s", e.msg);
	s.o.precision = PREC_FP8;
	s.o.switches.fp8_recipe = FP8_NVFP4;
	cr_assert_eq(train_opts_resolve(&s.o, &e), PPLAN_OK, "%s", e.msg);
	s.o.bf16_last = 4;
	cr_expect(predict(&s).feasible);
	s.o.bf16_last = 5;
	a = predict(&s);
	cr_expect_not(a.feasible);
	cr_expect_eq(a.reject, REJECT_BF16_LAYERS);
	/* on it the last stage holds all 4 (sim/memory.c's split) */
	s.o.bf16_last = 4;
	cr_expect_eq(memory_stage_bf16_layers(&s.m, &s.l, &s.o, 7), 4);
	cr_expect_eq(memory_stage_bf16_layers(&s.m, &s.l, &s.o, 6), 0);
}
