/*
 * test_curves.c: measured curves turned into times (sim/curves.h), on
 * points and answers worked out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "curves.h"

#ifndef PPLAN_SOURCE_DIR
#define PPLAN_SOURCE_DIR "."
#endif

static void near(double got, double want, double rel, const char *what)
{
	cr_expect(fabs(got - want) <= rel * fabs(want), "%s: got %.9g, want %.9g", what, got, want);
}

Test(curves, tile_fit)
{
	struct curve_tiles t = { 128, 128, 32 };
	/* 96 of a 128 tile: 0.75; 256 and 64 fill theirs */
	near(curve_tile_fit(&t, 96, 256, 64), 0.75, 1e-12, "96x256x64");
	/* 200 rows take two tiles: 200/256 */
	near(curve_tile_fit(&t, 200, 128, 32), 200.0 / 256, 1e-12, "200x128x32");
}

Test(curves, gemm_exact_and_between)
{
	struct curve_tiles none = { 1, 1, 1 };
	struct curve_gemm_pt p[2] = { { 1000, 1000, 1000, 10 }, { 8000, 8000, 8000, 20 } };
	/* a measured shape is its measurement: 2e9 FLOP at 10 TFLOP/s */
	near(curve_gemm_time(p, 2, &none, 1000, 1000, 1000), 2e-4, 1e-12, "exact");
	/* 2000^3 is ln 2 x sqrt 3 from the first and twice that from the
	 * second: weights 4 : 1 in the log of the rate, 10 x 2^(1/5) TFLOP/s */
	near(curve_gemm_time(p, 2, &none, 2000, 2000, 2000),
	     2 * 8e9 / (10e12 * pow(2, 0.2)), 1e-9, "between");
	/* 16000^3 is ln 2 x sqrt 3 from the second and 4 ln 2 x sqrt 3 from
	 * the first: weights 16 : 1, 20 x 2^(-1/17) TFLOP/s */
	near(curve_gemm_time(p, 2, &none, 16000, 16000, 16000),
	     2 * 4096e9 / (20e12 * pow(2, -1.0 / 17)), 1e-9, "beyond");
}

Test(curves, gemm_tiles)
{
	struct curve_tiles t = { 128, 128, 128 };
	struct curve_gemm_pt p[1] = { { 128, 128, 128, 10 } };
	/* 96 rows still cost a whole 128-row tile: the same time as 128 */
	near(curve_gemm_time(p, 1, &t, 96, 128, 128), 2 * 128.0 * 128 * 128 / 10e12, 1e-9,
	     "tile-bound");
}

Test(curves, stream)
{
	struct curve_bw_pt p[2] = { { 1e3, 1, 0 }, { 1e6, 10, 0 } };
	near(curve_stream_time(p, 2, 1e3), 1e-6, 1e-12, "first point");
	near(curve_stream_time(p, 2, 10), 1e-6, 1e-12, "below: the launch floor");
	/* 10^4.5 B is half way in log bytes: 5.5 GB/s */
	near(curve_stream_time(p, 2, pow(10, 4.5)), pow(10, 4.5) / 5.5e9, 1e-9, "between");
	near(curve_stream_time(p, 2, 1e7), 1e-3, 1e-12, "beyond: the last bandwidth");
}

Test(curves, collectives)
{
	struct curve_coll_pt p[2] = { { 1e3, 1e-5, 0 }, { 1e6, 1e-3, 0 } };
	/* half way in log bytes between 1e-5 and 1e-3 s: 1e-4 s */
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 4, pow(10, 4.5)), 1e-4, 1e-9,
	     "log-log");
	/* 1e6 B past the last point at busbw 1.5 GB/s, factor 2 x 3/4: +1 ms */
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 4, 2e6), 2e-3, 1e-9, "beyond");
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 4, 8), 1e-5, 1e-12, "below");
	/* 2 ranks from a 4-rank fit: alpha x 2/6 ring steps, factor 1 */
	near(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 2, 1e6), 1e-5 / 3 + 1e6 / 1.5e9,
	     1e-9, "other group size");
	cr_expect_eq(curve_coll_time(COLL_ALLREDUCE, p, 2, 4, 1e-5, 1.5, 1, 1e6), 0, "one rank");
}

/* ---- a profile's curves (tests/fixtures/profiles/cpu-2rank.json, points
 * chosen by hand) as the cost model asks for them ------------------------ */

#include "cost.h"
#include "cost_params.h"
#include "gemm.h"
#include "profile.h"
#include "testutil.h"
#include "train_opts.h"

#include <string.h>

static struct curve_set fixture_curves;
static struct profile fixture;

static void load_fixture(void)
{
	struct perr e = { { 0 } };
	cr_assert_eq(profile_load(PPLAN_SOURCE_DIR "/tests/fixtures/profiles/cpu-2rank.json",
				  &fixture, &e), PPLAN_OK, "%s", e.msg);
	curve_set_from_profile(&fixture_curves, &fixture);
}

Test(curve_set, answers_from_the_points, .init = load_fixture)
{
	const struct curve_set *cs = &fixture_curves;
	double f, b;
	cr_expect(cs->cpu);
	cr_expect_eq(cs->prec, PREC_FP32);
	/* the measured 1024^3 at 0.1 TFLOP/s; no bf16 points */
	near(curve_set_gemm(cs, PREC_FP32, 1, 1024, 1024, 1024), 2 * 1073741824.0 / 1e11, 1e-12, "gemm");
	cr_expect_lt(curve_set_gemm(cs, PREC_BF16, 1, 1024, 1024, 1024), 0, "another precision");
	/* each element-wise kind its own curve */
	near(curve_set_bw(cs, CURVE_BW_STREAM, 1e8), 1e8 / 10e9, 1e-12, "stream");
	near(curve_set_bw(cs, CURVE_BW_LAYER, 1e6), 1e6 / 0.5e9, 1e-12, "layer");
	near(curve_set_bw(cs, CURVE_BW_OPTIMIZER, 1e6), 1e6 / 4e9, 1e-12, "optimizer");
	/* all-reduce over shared memory at a measured size; none over a network */
	near(curve_set_coll(cs, COLL_ALLREDUCE, 1048576, 2, 0), 0.000534288, 1e-12, "all-reduce");
	cr_expect_lt(curve_set_coll(cs, COLL_ALLREDUCE, 1048576, 2, 1), 0, "no net entry");
	/* 4 ranks from the 2-rank fit: alpha x 6/2 steps + 1e6 B x 1.5 / 2 GB/s */
	near(curve_set_coll(cs, COLL_ALLREDUCE, 1e6, 4, 0), 3e-5 + 7.5e-4, 1e-9, "4 ranks");
	cr_expect_lt(curve_set_coll(cs, COLL_ALLGATHER, 1e6, 2, 0), 0, "not measured");
	/* the three-step attention core: 4 x 8 x 256^2 x 32 FLOPs at 0.01 forward,
	 * twice that at 0.012 backward */
	cr_assert(curve_set_attention(cs, PREC_FP32, 0, 8, 256, 256, 32, &f, &b));
	near(f, 67108864.0 / 1e10, 1e-12, "attention forward");
	near(b, 2 * 67108864.0 / 1.2e10, 1e-12, "attention backward");
	cr_expect_eq(curve_set_attention(cs, PREC_FP32, 1, 8, 256, 256, 32, &f, &b), 0,
		     "no fused points");
	profile_free(&fixture);
}

Test(curve_set, gemm_and_bandwidth_hooks, .init = load_fixture)
{
	struct cluster c;
	struct gemm_rate r;
	struct perr e = { { 0 } };
	cr_assert_eq(curve_cpu_cluster(&fixture, 2, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(c.gpu.name, "cpu");
	near(c.gpu.peak_tflops[PREC_FP32], 0.1, 1e-12, "peak");
	near(c.gpu.hbm_gbps, 10, 1e-12, "the fastest streaming point");
	near(c.nvlink.bw_gbps, 2, 1e-12, "the all-reduce's busbw");
	cr_expect_eq(c.gpus_per_node, 2);
	gemm_rate_init(&r, &c.gpu, PREC_FP32, cost_params_default());
	r.curves = &fixture_curves;
	near(gemm_time(&r, 1024, 1024, 1024), 2 * 1073741824.0 / 1e11, 1e-12, "gemm_time");
	near(hbm_time(&r, 1e8), 1e8 / 10e9, 1e-12, "hbm_time");
	/* below the smallest measured (64^3 at 0.05): the model's shape through
	 * that point, t(q) = model(q) x t(64^3) / model(64^3) */
	{
		struct gemm_rate plain = r;
		double ts = 2 * 64.0 * 64 * 64 / 0.05e12;
		plain.curves = NULL;
		near(gemm_time(&r, 32, 32, 32),
		     gemm_time(&plain, 32, 32, 32) * ts / gemm_time(&plain, 64, 64, 64), 1e-9,
		     "below the measured range");
	}
	r.curves = NULL; /* the model again: no longer the measurement */
	cr_expect_neq(gemm_time(&r, 1024, 1024, 1024), 2 * 1073741824.0 / 1e11);
	cr_expect_neq(curve_cpu_cluster(&fixture, 0, &c, &e), PPLAN_OK, "no ranks");
	profile_free(&fixture);
}

/* The small GPT of tests/fixtures/exec/gpt-small.json, written out, run by
 * the executor (fp32) on `ranks` CPU ranks of the fixture profile with
 * `layout`, priced from the curves cs. */
struct small_job {
	struct cluster c;
	struct model_spec m;
	struct layout l;
	struct train_opts o;
};

static void small_job(struct small_job *j, int ranks, const char *layout,
		      const struct curve_set *cs)
{
	struct perr e = { { 0 } };
	unsigned set = 0;
	struct model_spec *m = &j->m;
	memset(j, 0, sizeof *j);
	strcpy(m->name, "gpt-small by hand");
	m->layers = 8, m->hidden = 256, m->ffn = 1024, m->heads = 8, m->kv_heads = 8;
	m->head_dim = 32, m->vocab = 4096, m->seq = 256, m->mlp = MLP_GELU;
	m->norm = NORM_LAYERNORM, m->tied_embeddings = 1, m->linear_bias = 1;
	m->pos_embedding = 256;
	cr_assert_eq(curve_cpu_cluster(&fixture, ranks, &j->c, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(layout_parse(layout, &j->l, &set, &e), PPLAN_OK, "%s", e.msg);
	layout_complete(&j->l, set, ranks);
	train_opts_default(&j->o, m);
	j->o.precision = PREC_FP32;
	use_framework(&j->o, "pplan-exec", 2025);
	j->o.curves = cs;
}

static struct prediction small_predict(const struct small_job *j)
{
	struct prediction p;
	struct perr e = { { 0 } };
	cr_assert_eq(cost_predict(&j->m, &j->c, &j->l, &j->o, &p, &e), PPLAN_OK, "%s", e.msg);
	return p;
}

/* The executor's optimizer step from the fixture's curves, by hand.  The
 * small GPT of tests/fixtures/exec/gpt-small.json holds P = 8 x (12 x
 * 256^2 + 13 x 256) + 4096 x 256 (tied table) + 256 x 256 (positions) +
 * 2 x 256 (final norm) = 7,432,704 parameters; with dp=2 and the
 * distributed optimizer each rank updates half.  Its fp32 AdamW reads
 * master, m, v and the gradient and writes master, m, v and the fp32
 * weight it keeps beside the master: 32 bytes a parameter at the AdamW
 * curve's 4 GB/s.  The gradient norm reads 4 x P bytes at the streaming
 * curve's rate there (1 GB/s at 1e3 bytes to 10 at 1e8, linear in log
 * bytes).  No per-step overhead: the executor's step is its ops. */
Test(curve_set, the_executors_adam_step, .init = load_fixture)
{
	struct small_job j;
	struct prediction p;
	double P = 8.0 * (12 * 256 * 256 + 13 * 256) + 4096 * 256 + 256 * 256 + 2 * 256;
	double rate = 1 + 9 * (log10(4 * P) - 3) / 5;
	small_job(&j, 2, "dp=2,gbs=8,zero=1", &fixture_curves);
	p = small_predict(&j);
	near(p.optimizer_s, 32 * P / 2 / 4e9 + 4 * P / (rate * 1e9), 1e-6, "optimizer step");
	profile_free(&fixture);
}

/* The layer kernels' forward share, interpolated in log bytes as the
 * rates are and held at the ends; a curve without it answers -1. */
Test(curve_set, layer_forward_share)
{
	struct curve_set cs;
	memset(&cs, 0, sizeof cs);
	cs.n_bw[CURVE_BW_LAYER] = 2;
	cs.bw[CURVE_BW_LAYER][0] = (struct curve_bw_pt){ 1e3, 1, 0.4 };
	cs.bw[CURVE_BW_LAYER][1] = (struct curve_bw_pt){ 1e7, 10, 0.6 };
	near(curve_set_layer_fwd_share(&cs, 1e2), 0.4, 1e-12, "below");
	near(curve_set_layer_fwd_share(&cs, 1e5), 0.5, 1e-12, "half way in log bytes");
	near(curve_set_layer_fwd_share(&cs, 1e9), 0.6, 1e-12, "beyond");
	cs.bw[CURVE_BW_LAYER][1].fwd_share = 0;
	cr_expect_lt(curve_set_layer_fwd_share(&cs, 1e5), 0, "one point without it: none");
	cs.n_bw[CURVE_BW_LAYER] = 0;
	cr_expect_lt(curve_set_layer_fwd_share(&cs, 1e5), 0, "no layer curve");
}

/* With a measured share the layer's element-wise time moves between the
 * forward and the backward, linearly in the share, and their sum stays:
 * the fixture's layer curve (0.5 GB/s, one point) with shares 0.3, 0.6
 * and 0.9 on the small GPT. */
Test(curve_set, layer_time_split_by_the_share, .init = load_fixture)
{
	struct small_job j;
	struct prediction p[3];
	struct curve_set cs = fixture_curves;
	const double share[3] = { 0.3, 0.6, 0.9 };
	small_job(&j, 1, "gbs=4", &cs);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < cs.n_bw[CURVE_BW_LAYER]; i++)
			cs.bw[CURVE_BW_LAYER][i].fwd_share = share[k];
		p[k] = small_predict(&j);
	}
	cr_expect_gt(p[1].chunk.fwd_s, p[0].chunk.fwd_s);
	near(p[1].chunk.fwd_s + p[1].chunk.bwd_s, p[0].chunk.fwd_s + p[0].chunk.bwd_s, 1e-9,
	     "forward + backward");
	near(p[2].chunk.fwd_s - p[0].chunk.fwd_s, 2 * (p[1].chunk.fwd_s - p[0].chunk.fwd_s), 1e-9,
	     "linear in the share");
	profile_free(&fixture);
}

/* measured_compute_scale (pplan tune's refit) scales what the curves
 * answer, and only that: the measured 1024^3 at 0.1 TFLOP/s and the
 * 1e8-byte stream at 10 GB/s take 1.5 times as long; the model's own
 * time (no curves) does not move. */
Test(curve_set, measured_compute_scale, .init = load_fixture)
{
	struct cluster c;
	struct gemm_rate r;
	struct cost_params k = *cost_params_default();
	struct perr e = { { 0 } };
	double plain;
	cr_assert_eq(curve_cpu_cluster(&fixture, 2, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(cost_param_set(&k, "measured_compute_scale", 1.5, "test", &e), PPLAN_OK,
		     "%s", e.msg);
	gemm_rate_init(&r, &c.gpu, PREC_FP32, cost_params_default());
	plain = gemm_time(&r, 1024, 1024, 1024);
	gemm_rate_init(&r, &c.gpu, PREC_FP32, &k);
	near(gemm_time(&r, 1024, 1024, 1024), plain, 1e-12, "the model, unscaled");
	r.curves = &fixture_curves;
	near(gemm_time(&r, 1024, 1024, 1024), 1.5 * 2 * 1073741824.0 / 1e11, 1e-12, "gemm");
	near(hbm_time(&r, 1e8), 1.5 * 1e8 / 10e9, 1e-12, "stream");
	cr_expect_neq(cost_param_set(&k, "measured_compute_scale", 5.0, "test", &e), PPLAN_OK,
		      "outside its range [0.25, 4]");
	profile_free(&fixture);
}

/* The GPU presets' default profiles (topology/profiles/), built from
 * published measurements: each loads, names a GPU of the table, and
 * reproduces its published points. */
Test(curve_set, default_gpu_profiles)
{
	static const char *const gpus[] = { "a100-80gb", "h100-sxm", "h200", "b200" };
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		char path[512];
		struct profile p;
		struct curve_set cs;
		struct perr e = { { 0 } };
		snprintf(path, sizeof path, PPLAN_SOURCE_DIR "/topology/profiles/%s.json", gpus[i]);
		cr_assert_eq(profile_load(path, &p, &e), PPLAN_OK, "%s", e.msg);
		cr_expect_str_eq(p.device_name, gpus[i]);
		cr_expect_not_null(gpu_find(p.device_name));
		cr_expect_eq(p.kind, PROFILE_PUBLISHED);
		curve_set_from_profile(&cs, &p);
		cr_expect_gt(cs.n_gemm, 0, "%s has GEMM points", gpus[i]);
		cr_expect_eq(cs.prec, PREC_BF16);
		profile_free(&p);
	}
}

Test(curve_set, h100_mamf_point)
{
	struct profile p;
	struct curve_set cs;
	struct perr e = { { 0 } };
	cr_assert_eq(profile_load(PPLAN_SOURCE_DIR "/topology/profiles/h100-sxm.json", &p, &e),
		     PPLAN_OK, "%s", e.msg);
	curve_set_from_profile(&cs, &p);
	/* the MAMF table's 6144 x 17920 x 2816 at 792.1 TFLOP/s (all three
	 * dimensions fill the 128 x 128 x 32 tiles) */
	near(curve_set_gemm(&cs, PREC_BF16, 1, 6144, 17920, 2816),
	     2.0 * 6144 * 17920 * 2816 / 792.1e12, 1e-9, "MAMF");
	/* the all-reduce over 8 NVSwitch GPUs at 480 GB/s busbw: 1 GiB x 2 x 7/8 */
	near(curve_set_coll(&cs, COLL_ALLREDUCE, 1073741824.0, 8, 0),
	     1073741824.0 * 1.75 / 480e9, 1e-9, "NVLS all-reduce");
	profile_free(&p);
}

/* The ring attention's exchanges and a profile's exposed waits: the small
 * GPT with cp=2 on the fixture's two ranks (4 microbatches of 1 sequence,
 * 8 layers: 32 layers x microbatches).  A K/V block is 2 (K and V) x 4 B
 * x 128 tokens x 8 heads x 32 = 262,144 bytes; the fixture's send/receive
 * curve is log-log between (8 B, 5 us) and (1 MiB, 267.144 us), t1 at the
 * block, t2 at twice it.  With exposed waits of twice each point's time
 * (so 2 t at every size), and without (the attention hides what it can):
 * - the executor's ring (exec/ring.c): forward c-1 = 1 block, 2 t1 left,
 *   or hidden; backward c = 2 messages of the block with its gradients,
 *   2 x 2 t2 left, or 2 t2 (each waited for as posted);
 * - Transformer Engine's ring (the other frameworks): forward (c-1) x 2 t1
 *   + t1, backward 2(c-1) x 2 t1 + t1 (8 t1 a layer and microbatch); or,
 *   hidden, t1 + t1. */
/* A fixture collective's time at `bytes`: log-log between its two
 * points, (8 B, t8) and (1 MiB, t1m). */
static double fixture_loglog(double bytes, double t8, double t1m)
{
	double f = (log(bytes) - log(8.0)) / (log(1048576.0) - log(8.0));
	return exp(log(t8) + f * (log(t1m) - log(t8)));
}

static double fixture_sendrecv(double bytes)
{
	return fixture_loglog(bytes, 5e-6, 267.144e-6);
}

Test(curve_set, cp_exchanges_and_the_measured_waits, .init = load_fixture)
{
	struct small_job j;
	struct curve_set cs = fixture_curves;
	struct prediction p[2][2];
	double t1 = fixture_sendrecv(262144.0), t2 = fixture_sendrecv(524288.0);
	int k = -1;
	for (int i = 0; i < cs.n_coll; i++)
		if (cs.coll[i].op == COLL_SENDRECV)
			k = i;
	cr_assert_geq(k, 0, "the fixture measures send_recv");
	small_job(&j, 2, "cp=2,gbs=4", &cs);
	cr_assert(j.o.b.cp_joint_grads, "the executor's row");
	for (int ring = 0; ring < 2; ring++) {
		j.o.b.cp_joint_grads = !ring;
		for (int w = 0; w < 2; w++) {
			for (int i = 0; i < cs.coll[k].n; i++)
				cs.coll[k].pts[i].exposed_s = w ? 2 * cs.coll[k].pts[i].time_s : 0;
			p[ring][w] = small_predict(&j);
		}
	}
	near(p[0][1].time.cp_comm, 32 * (2 * t1 + 4 * t2), 1e-9, "executor, measured waits");
	near(p[0][0].time.cp_comm, 32 * 2 * t2, 1e-9, "executor, forward hidden");
	near(p[1][1].time.cp_comm, 32 * 8 * t1, 1e-9, "TE ring, measured waits");
	near(p[1][0].time.cp_comm, 32 * 2 * t1, 1e-9, "TE ring, hidden");
	profile_free(&fixture);
}

/* TP's collectives as a CPU step meets them: the small GPT with tp=2 and
 * no SP on the fixture's two ranks (4 microbatches, 8 layers: 32 layers x
 * microbatches), two all-reduces forward and two backward of the layer's
 * activation, 4 B x 256 tokens x 256 = 262,144 bytes.  The fixture's
 * all-reduce curve is log-log between (8 B, 10 us) and (1 MiB, 534.288
 * us).  Without exposed times: 128 of the loop's time.  With each point's
 * exposed time 3 x its loop time (the call after the ranks' compute,
 * calibrate_coll.c): 128 x 3 of it.  An exposed time under the loop's
 * (0.5 x) is no faster than the loop. */
Test(curve_set, tp_collectives_after_compute, .init = load_fixture)
{
	struct small_job j;
	struct curve_set cs = fixture_curves;
	static const double scale[] = { 0, 3, 0.5 }, want[] = { 1, 3, 1 };
	double t = fixture_loglog(262144.0, 10e-6, 534.288e-6);
	int k = -1;
	for (int i = 0; i < cs.n_coll; i++)
		if (cs.coll[i].op == COLL_ALLREDUCE)
			k = i;
	cr_assert_geq(k, 0, "the fixture measures all_reduce");
	small_job(&j, 2, "tp=2,sp=off,gbs=4", &cs);
	for (int v = 0; v < 3; v++) {
		struct prediction p;
		for (int i = 0; i < cs.coll[k].n; i++)
			cs.coll[k].pts[i].exposed_s = scale[v] * cs.coll[k].pts[i].time_s;
		p = small_predict(&j);
		near(p.time.tp_comm, 128 * want[v] * t, 1e-9,
		     v == 0 ? "the loop" : v == 1 ? "exposed 3 x" : "exposed 0.5 x");
	}
	profile_free(&fixture);
}
