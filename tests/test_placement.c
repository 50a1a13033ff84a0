/*
 * test_placement.c: from discovered hosts to the links the cost model
 * prices.  Cluster files made from the DGX A100 / H100 topo -m fixtures
 * against the dgx-a100 / dgx-h100 presets (same links, same prediction
 * within 1%); NVLink rings on the DGX-1 hybrid cube-mesh; groups that
 * cross node boundaries; rank placement; inconsistent cluster files;
 * and the multi-host agreement check behind `pplan topo --gather`.
 *
 * DGX-1 link counts (tests/fixtures/nvidia-smi/dgx1-v100.txt):
 *   0-1:1 0-2:1 0-3:2 0-4:2  1-2:2 1-3:1 1-5:2  2-3:2 2-6:1  3-7:1
 *   4-5:1 4-6:1 4-7:2  5-6:2 5-7:1  6-7:2      (6 links per GPU)
 * Ring bandwidth by hand, one link = 25 GB/s per direction, each
 * Hamiltonian cycle run both ways (2 links per GPU per cycle):
 *   {0,1}: 1 link -> 25;  {2,3}: 2 links -> 50  (tp=2: slowest 25)
 *   {0,1,2,3}: cycles 0-1-2-3-0 and 0-2-1-3-0 use the links of 0-1,
 *     0-2 once, 1-2, 2-3, 0-3, 1-3 within their counts; GPU0 has only 4
 *     links inside the group, so 2 cycles at most -> 100
 *   {0,2,4,6}: 0-6 and 2-4 have no NVLink; the only cycle is
 *     0-2-6-4-0 -> 50
 *   all 8: 3 link-disjoint cycles exist (0-1-2-3-7-5-6-4, 0-2-6-7-4-5-1-3,
 *     0-3-2-1-5-6-7-4), 6 links per GPU bound it to 3 -> 150
 *   {0,5}: no NVLink: PCIe
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "cost.h"
#include "host.h"
#include "layout.h"
#include "model.h"
#include "placement.h"
#include "smitopo.h"

#define SMI_DIR PPLAN_SOURCE_DIR "/tests/fixtures/nvidia-smi/"
#define CLUSTER_DIR PPLAN_SOURCE_DIR "/tests/fixtures/cluster/"

static void from_smi(const char *file, const char *gpu, int nodes,
		     struct cluster *c)
{
	static struct host_topo h;
	struct perr e = { { 0 } };
	struct host_cluster_opts o = { gpu_find(gpu), 0, nodes, 0 };
	cr_assert_eq(smitopo_load(file, &h, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(host_to_cluster(&h, &o, c, &e), PPLAN_OK, "%s", e.msg);
}

static void expect_same_link(struct link a, struct link b, const char *what)
{
	cr_expect_eq(a.cls, b.cls, "%s class", what);
	cr_expect_float_eq(a.bw_gbps, b.bw_gbps, 1e-9, "%s bw", what);
	cr_expect_float_eq(a.latency_s, b.latency_s, 1e-15, "%s latency", what);
	cr_expect_float_eq(a.eff, b.eff, 1e-12, "%s eff", what);
}

static void check_matches_preset(const char *file, const char *gpu,
				 const char *preset, double nvlink_gbps)
{
	struct cluster f, p, r;
	struct perr e = { { 0 } };
	char path[] = "/tmp/pplan-topo-XXXXXX";
	int fd;

	from_smi(file, gpu, 4, &f);
	cr_assert_eq(cluster_preset(preset, 32, &p, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(f.gpu.name, p.gpu.name);
	cr_expect_eq(f.gpus_per_node, 8);
	cr_expect_eq(f.num_nodes, p.num_nodes);
	cr_expect_eq(f.nvlink_domain, p.nvlink_domain);
	cr_expect_eq(f.nvlink.cls, LINK_NVSWITCH);
	cr_expect_float_eq(f.nvlink.bw_gbps, nvlink_gbps, 1e-9);
	expect_same_link(f.nvlink, p.nvlink, "nvlink");
	expect_same_link(f.net, p.net, "net");
	expect_same_link(f.pcie, p.pcie, "pcie");
	cr_expect_eq(f.nics_per_node, p.nics_per_node);
	cr_expect_float_eq(f.nic_gbps, p.nic_gbps, 1e-9);
	cr_expect_eq(f.rail_aligned, p.rail_aligned);
	cr_expect_eq(f.has_link_matrix, 0);
	/* Through a file and back. */
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(cluster_save(&f, path, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(cluster_load(path, 0, &r, &e), PPLAN_OK, "%s", e.msg);
	unlink(path);
	for (int size = 1; size <= 32; size *= 2)
		for (int stride = 1; size * stride <= 32; stride *= 2) {
			char what[64];
			snprintf(what, sizeof what, "group %d/%d", size, stride);
			expect_same_link(cluster_group_link(&r, size, stride),
					 cluster_group_link(&p, size, stride), what);
		}
}

Test(placement, dgx_a100_file_is_the_preset)
{
	/* NV12 x 25 GB/s = 300 GB/s; 8 HDR NICs at 200 Gb/s. */
	check_matches_preset(SMI_DIR "dgx-a100.txt", "a100-80gb", "dgx-a100", 300);
}

Test(placement, dgx_h100_file_is_the_preset)
{
	/* NV18 x 25 GB/s = 450 GB/s; 8 NDR NICs at 400 Gb/s. */
	check_matches_preset(SMI_DIR "dgx-h100.txt", "h100-sxm", "dgx-h100", 450);
}

/* The acceptance figure: predictions on the file equal the preset's
 * within 1%. */
Test(placement, predictions_agree_with_presets)
{
	static const struct {
		const char *file, *gpu, *preset, *layout;
	} cases[] = {
		{ SMI_DIR "dgx-a100.txt", "a100-80gb", "dgx-a100", "tp=8,pp=2,dp=4" },
		{ SMI_DIR "dgx-a100.txt", "a100-80gb", "dgx-a100", "tp=4,pp=1,dp=16" },
		{ SMI_DIR "dgx-h100.txt", "h100-sxm", "dgx-h100", "tp=8,pp=2,dp=4" },
		{ SMI_DIR "dgx-h100.txt", "h100-sxm", "dgx-h100", "tp=2,pp=4,dp=8" },
	};
	const struct model_spec *m = model_find("llama2-13b");
	cr_assert_not_null(m);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cluster f, p;
		struct layout l;
		struct train_opts o;
		struct prediction pf, pp;
		struct perr e = { { 0 } };
		unsigned set = 0;

		from_smi(cases[i].file, cases[i].gpu, 8, &f);
		cr_assert_eq(cluster_preset(cases[i].preset, 64, &p, &e), PPLAN_OK);
		cr_assert_eq(layout_parse(cases[i].layout, &l, &set, &e), PPLAN_OK,
			     "%s", e.msg);
		layout_complete(&l, set, 64);
		train_opts_default(&o, m);
		cr_assert_eq(cost_predict(m, &f, &l, &o, &pf, &e), PPLAN_OK, "%s", e.msg);
		cr_assert_eq(cost_predict(m, &p, &l, &o, &pp, &e), PPLAN_OK, "%s", e.msg);
		cr_assert(pp.step_time_s > 0);
		cr_expect(fabs(pf.step_time_s / pp.step_time_s - 1) < 0.01,
			  "%s %s: file %.6g s, preset %.6g s", cases[i].preset,
			  cases[i].layout, pf.step_time_s, pp.step_time_s);
	}
}

static struct cluster dgx1(void)
{
	struct cluster c;
	/* A100 stands in for V100 (not in pplan's GPU table); both carry
	 * 25 GB/s per NVLink, which is all the ring pricing uses. */
	from_smi(SMI_DIR "dgx1-v100.txt", "a100-40gb", 2, &c);
	return c;
}

Test(placement, dgx1_cluster_is_a_mesh)
{
	struct cluster c = dgx1();
	cr_expect_eq(c.nvlink.cls, LINK_NVLINK);
	cr_expect_eq(c.has_link_matrix, 1);
	cr_expect_float_eq(c.nvlink_link_gbps, 25.0, 1e-9);
	cr_expect_float_eq(c.nvlink.bw_gbps, 150.0, 1e-9);
	cr_expect_eq(c.nvlinks[0][3], 2);
	cr_expect_eq(c.nvlinks[0][5], 0);
	cr_expect_eq(c.nics_per_node, 4);
	cr_expect_not(c.rail_aligned);
}

Test(placement, dgx1_rings)
{
	struct cluster c = dgx1();
	static const struct {
		int size, stride;
		double gbps;
		enum link_class cls;
	} cases[] = {
		{ 2, 1, 25, LINK_NVLINK },  { 4, 1, 100, LINK_NVLINK },
		{ 8, 1, 150, LINK_NVLINK }, { 4, 2, 50, LINK_NVLINK },
		{ 2, 4, 25, LINK_NVLINK },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct link l = cluster_group_link(&c, cases[i].size, cases[i].stride);
		cr_expect_eq(l.cls, cases[i].cls, "%d/%d", cases[i].size, cases[i].stride);
		cr_expect_float_eq(l.bw_gbps, cases[i].gbps, 1e-9, "%d/%d: %g GB/s",
				   cases[i].size, cases[i].stride, l.bw_gbps);
	}
	{
		int pair[2] = { 2, 3 }, none[2] = { 0, 5 };
		cr_expect_float_eq(cluster_ring_gbps(&c, pair, 2), 50.0, 1e-9);
		cr_expect_float_eq(cluster_ring_gbps(&c, none, 2), 0.0, 1e-9);
	}
	/* Not priced as an NVSwitch: an 8-GPU ring gets the 6 links, not
	 * the all-pairs fabric a switch would give. */
	cr_expect_neq(cluster_group_link(&c, 8, 1).cls, LINK_NVSWITCH);
}

Test(placement, group_of_any_ranks)
{
	struct cluster c = dgx1();
	struct group_link g;
	struct perr e = { { 0 } };
	long pcie[2] = { 0, 5 }, quad[4] = { 3, 1, 0, 2 }, cross[2] = { 0, 8 };
	long bad[1] = { 16 };

	cr_assert_eq(placement_group_link(&c, pcie, 2, &g, &e), PPLAN_OK);
	cr_expect_eq(g.link.cls, LINK_PCIE);
	cr_expect_eq(g.nodes, 1);
	cr_assert_eq(placement_group_link(&c, quad, 4, &g, &e), PPLAN_OK);
	cr_expect_eq(g.link.cls, LINK_NVLINK);
	cr_expect_float_eq(g.link.bw_gbps, 100.0, 1e-9);
	cr_assert_eq(placement_group_link(&c, cross, 2, &g, &e), PPLAN_OK);
	cr_expect_eq(g.link.cls, LINK_NET);
	cr_expect_eq(g.nodes, 2);
	cr_expect_eq(g.min_per_domain, 1);
	cr_expect_not(g.rail_aligned); /* DGX-1: 4 NICs for 8 GPUs */
	cr_expect_eq(placement_group_link(&c, bad, 1, &g, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "rank 16") != NULL, "%s", e.msg);
}

Test(placement, ranks_fill_nodes)
{
	struct cluster c;
	struct rank_place p;
	long r[4];
	cr_assert_eq(cluster_preset("dgx-h100", 32, &c, NULL), PPLAN_OK);
	placement_rank(&c, 13, &p);
	cr_expect_eq(p.node, 1);
	cr_expect_eq(p.gpu, 5);
	cr_expect_eq(p.domain, 1);
	/* dp groups of a tp=2 layout: stride 2; group 3 is {3, 5, 7, 9}
	 * in the first block of 8... of size 4 x stride 2 = 8 ranks. */
	placement_group_ranks(4, 2, 3, r);
	cr_expect(r[0] == 9 && r[1] == 11 && r[2] == 13 && r[3] == 15,
		  "%ld %ld %ld %ld", r[0], r[1], r[2], r[3]);
	placement_group_ranks(4, 2, 1, r);
	cr_expect(r[0] == 1 && r[3] == 7);
}

/* A tensor-parallel group that crosses a node boundary pays the network:
 * 8 ranks at stride 2 on DGX A100 put 4 on each node, sharing 4 x 25 GB/s
 * of NICs, against 300 GB/s of NVSwitch inside a node. */
Test(placement, tp_across_nodes_pays_the_network)
{
	struct cluster c;
	struct group_link g;
	long ranks[8];
	struct link in, out;
	cr_assert_eq(cluster_preset("dgx-a100", 16, &c, NULL), PPLAN_OK);
	in = cluster_group_link(&c, 8, 1);
	out = cluster_group_link(&c, 8, 2);
	cr_expect_eq(in.cls, LINK_NVSWITCH);
	cr_expect_float_eq(in.bw_gbps, 300.0, 1e-9);
	cr_expect_eq(out.cls, LINK_NET);
	cr_expect_float_eq(out.bw_gbps, 100.0, 1e-9);
	cr_expect_float_eq(cluster_group_link(&c, 16, 1).bw_gbps, 200.0, 1e-9);
	placement_group_ranks(8, 2, 0, ranks);
	cr_assert_eq(placement_group_link(&c, ranks, 8, &g, NULL), PPLAN_OK);
	cr_expect_eq(g.link.cls, LINK_NET);
	cr_expect_float_eq(g.link.bw_gbps, 100.0, 1e-9);
	cr_expect_eq(g.nodes, 2);
	cr_expect(g.rail_aligned); /* ranks 0,2,..,6 and 8,..,14: same local GPUs */
}

/* GB200 NVL72-style: a domain of 72 GPUs over 18 nodes of 4. */
Test(placement, nvlink_domain_larger_than_a_node)
{
	struct cluster c;
	struct group_link g;
	long ranks[16];
	cr_assert_eq(cluster_preset("hgx-b200", 144, &c, NULL), PPLAN_OK);
	c.gpus_per_node = 4;
	c.num_nodes = 36;
	c.nvlink_domain = 72;
	/* 8 ranks (two nodes) and 8 at stride 9 stay inside a rack. */
	cr_expect_eq(cluster_group_link(&c, 8, 1).cls, LINK_NVSWITCH);
	cr_expect_eq(cluster_group_link(&c, 8, 9).cls, LINK_NVSWITCH);
	cr_expect_eq(cluster_group_link(&c, 2, 72).cls, LINK_NET);
	/* 72 is no multiple of 16: group 4 (ranks 64-79) straddles two racks,
	 * so the dimension as a whole pays the network ... */
	cr_expect_eq(cluster_group_link(&c, 16, 1).cls, LINK_NET);
	/* ... while group 0 alone spans four nodes of one rack. */
	placement_group_ranks(16, 1, 0, ranks);
	cr_assert_eq(placement_group_link(&c, ranks, 16, &g, NULL), PPLAN_OK);
	cr_expect_eq(g.link.cls, LINK_NVSWITCH);
	cr_expect_eq(g.nodes, 4);
	cr_expect_eq(g.domains, 1);
	placement_group_ranks(16, 1, 4, ranks);
	cr_assert_eq(placement_group_link(&c, ranks, 16, &g, NULL), PPLAN_OK);
	cr_expect_eq(g.link.cls, LINK_NET);
	cr_expect_eq(g.domains, 2);
	cr_expect_eq(g.min_per_domain, 8);
}

Test(placement, inconsistent_cluster_files)
{
	static const struct {
		const char *file, *needle;
	} cases[] = {
		{ CLUSTER_DIR "bad-rail.json", "rail_aligned is true but 4 NICs" },
		{ CLUSTER_DIR "bad-matrix.json", "nvlink_matrix must be 4 rows" },
		{ CLUSTER_DIR "bad-asymmetric.json", "must be symmetric" },
		{ CLUSTER_DIR "bad-domain.json", "must divide one another" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cluster c;
		struct perr e = { { 0 } };
		cr_expect_eq(cluster_load(cases[i].file, 0, &c, &e), PPLAN_EINPUT,
			     "%s", cases[i].file);
		cr_expect(strstr(e.msg, cases[i].file) != NULL, "%s", e.msg);
		cr_expect(strstr(e.msg, cases[i].needle) != NULL, "want '%s' in: %s",
			  cases[i].needle, e.msg);
	}
}

Test(placement, hosts_must_agree)
{
	static struct host_topo hosts[4];
	struct perr e = { { 0 } };
	int ref = -1;
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(smitopo_load(SMI_DIR "dgx-a100.txt", &hosts[i], &e), PPLAN_OK);
		snprintf(hosts[i].hostname, sizeof hosts[i].hostname, "node%d", i);
	}
	cr_expect_eq(host_check_agree(hosts, 4, &ref, &e), PPLAN_OK);
	cr_assert_eq(smitopo_load(SMI_DIR "h100-4gpu-nic-legend.txt", &hosts[2], &e),
		     PPLAN_OK);
	snprintf(hosts[2].hostname, sizeof hosts[2].hostname, "node2");
	cr_expect_eq(host_check_agree(hosts, 4, &ref, &e), PPLAN_EINPUT);
	cr_expect_eq(ref, 0);
	cr_expect(strstr(e.msg, "rank 2 (node2) 4 GPUs, not 8") != NULL, "%s", e.msg);
}

/* The gb200-nvl72 preset: trays of 4 GPUs in a 72-GPU NVLink domain; a
 * job gets the largest domain of whole trays that divides it and is at
 * most 72 (128 GPUs: 2 x 64; 144: 2 x 72; 8: 8; 4: one tray). */
Test(placement, gb200_nvl72_preset_domains)
{
	static const long gpus[] = { 4, 8, 72, 128, 144, 256 };
	static const int domain[] = { 4, 8, 72, 64, 72, 64 };
	struct cluster c;
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		cr_assert_eq(cluster_preset("gb200-nvl72", gpus[i], &c, NULL), PPLAN_OK);
		cr_expect_eq(c.gpus_per_node, 4);
		cr_expect_eq(c.nvlink_domain, domain[i], "%ld GPUs: domain %d", gpus[i],
			     c.nvlink_domain);
	}
	/* An EP group of 64 over one rack rides NVLink; over two, the NICs. */
	cr_assert_eq(cluster_preset("gb200-nvl72", 128, &c, NULL), PPLAN_OK);
	cr_expect_eq(cluster_group_link(&c, 64, 1).cls, LINK_NVSWITCH);
	cr_expect_eq(cluster_group_link(&c, 128, 1).cls, LINK_NET);
	/* 4 NICs of 400 Gb/s per tray of 4: 50 GB/s per GPU. */
	cr_expect_float_eq(c.net.bw_gbps, 50.0, 1e-9);
	/* Sized later, by nodes (pplan predict --nodes): the same rule. */
	cr_assert_eq(cluster_preset("gb200-nvl72", 0, &c, NULL), PPLAN_OK);
	cr_assert_eq(cluster_size(&c, 32, 0, NULL), PPLAN_OK);
	cr_expect_eq(c.nvlink_domain, 64);
	cr_expect_str_eq(gpu_find_in_description("NVIDIA GB200")->name, "gb200");
	cr_expect_str_eq(gpu_find_in_description("NVIDIA B200")->name, "b200");
}
