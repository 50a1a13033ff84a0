/*
 * test_discover.c: hwloc discovery on the recorded XML exports in
 * tests/fixtures/hwloc (hwloc's own test suite; provenance in
 * tests/fixtures/README.md), NVML absent, and broken XML.  Expected
 * numbers were read off the XML files by eye:
 *
 * nvidiaDGX2.xml: 2 packages, 2 NUMA nodes, 4 cores / 4 PUs (the export
 *   is trimmed); 16 PCI 10de:1db8 GPUs (nvml0-15), buses 34 36 39 3b 57
 *   59 5c 5e on package 0 and b7 b9 bc be e0 e2 e5 e7 on package 1; 12
 *   NVSwitch PCI devices; NVLinkBandwidth: each GPU 25000 MB/s to 6 of
 *   the switches, 0 to every other GPU; no NIC.
 * power8gpudistances.xml: 2 NUMA nodes; 4 P100 (10de:15f9) at 0002:01,
 *   0003:01 (NUMA 0), 000a:01, 000b:01 (NUMA 1); NVLinkBandwidth 40000
 *   MB/s for GPU0-GPU1, GPU2-GPU3 and each GPU to its package.
 * 24em64t-2n6c2t-pci.xml: 2 packages, 2 NUMA nodes, 12 cores, 24 PUs;
 *   three 10de:06d2 Tesla boards at 06:00.0 (package 0), 11:00.0 and
 *   14:00.0 (package 1); NICs: Intel 82576 ports 04:00.0 (eth0) and
 *   04:00.1 (eth1), Mellanox ConnectX 15b3:6746 at 05:00.0 (class 0c06,
 *   eth2, ib0, mlx4_0), all under package 0's host bridge.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "discover.h"
#include "host.h"
#include "nvml.h"
#include "smitopo.h"

#define XML_DIR PPLAN_SOURCE_DIR "/tests/fixtures/hwloc/"

static struct host_topo h;

static void load(const char *file)
{
	struct perr e = { { 0 } };
	enum pplan_status st = discover_hwloc(file, &h, &e);
	cr_assert_eq(st, PPLAN_OK, "%s: %s", file, e.msg);
}

Test(discover, dgx2_nvswitch)
{
	static const char *const bus[16] = {
		"0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0",
		"0000:57:00.0", "0000:59:00.0", "0000:5c:00.0", "0000:5e:00.0",
		"0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",
		"0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0",
	};
	load(XML_DIR "nvidiaDGX2.xml");
	cr_expect_eq(h.packages, 2);
	cr_expect_eq(h.numa_nodes, 2);
	cr_assert_eq(h.ngpus, 16);
	cr_expect_eq(h.nnics, 0);
	cr_expect(h.nvswitch);
	cr_expect_eq(h.nvswitch_count, 12);
	cr_expect_str_eq(h.nvlink_source, "hwloc NVLinkBandwidth");
	for (int i = 0; i < 16; i++) {
		cr_expect_str_eq(h.gpu[i].bus_id, bus[i]);
		cr_expect_str_eq(h.gpu[i].model, "Tesla V100-SXM3-32GB-H");
		cr_expect_eq(h.gpu[i].numa, i < 8 ? 0 : 1, "GPU%d", i);
		cr_expect_eq(h.gpu[i].switch_links, 6, "GPU%d", i);
		cr_expect_float_eq(h.gpu[i].switch_gbps, 150.0, 1e-9, "GPU%d", i);
		for (int j = 0; j < 16; j++)
			cr_expect_eq(h.nvlinks[i][j], 0);
	}
}

Test(discover, dgx2_cluster_one_nvswitch_domain)
{
	struct perr e = { { 0 } };
	struct cluster c;
	/* The links come from the XML, not from the GPU. */
	struct host_cluster_opts o = { gpu_find("v100-sxm2"), 100, 2, 0 };
	load(XML_DIR "nvidiaDGX2.xml");
	cr_assert_eq(host_to_cluster(&h, &o, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(c.gpus_per_node, 16);
	cr_expect_eq(c.nvlink_domain, 16);
	cr_expect_eq(c.num_nodes, 2);
	cr_expect_eq(c.nvlink.cls, LINK_NVSWITCH);
	cr_expect_float_eq(c.nvlink.bw_gbps, 150.0, 1e-9);
	cr_expect_eq(c.has_link_matrix, 0);
	/* All 16 in one group stay on the switch. */
	cr_expect_eq(cluster_group_link(&c, 16, 1).cls, LINK_NVSWITCH);
	/* The XML names the boards "Tesla V100-SXM3-32GB": pplan guesses
	 * its V100 entry without --gpu. */
	o.gpu = NULL;
	cr_expect_eq(host_to_cluster(&h, &o, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_str_eq(c.gpu.name, "v100-sxm2");
}

Test(discover, power8_nvlink_pairs)
{
	load(XML_DIR "power8gpudistances.xml");
	cr_expect_eq(h.numa_nodes, 2);
	cr_assert_eq(h.ngpus, 4);
	cr_expect_eq(h.nnics, 0);
	cr_expect_not(h.nvswitch);
	cr_expect_str_eq(h.gpu[0].bus_id, "0002:01:00.0");
	cr_expect_str_eq(h.gpu[3].bus_id, "000b:01:00.0");
	cr_expect_str_eq(h.gpu[0].model, "Tesla P100-SXM2-16GB");
	cr_expect_eq(h.gpu[1].numa, 0);
	cr_expect_eq(h.gpu[2].numa, 1);
	cr_expect_float_eq(h.link_gbps, 20.0, 1e-9); /* NVLink 1 */
	cr_expect_eq(h.nvlinks[0][1], 2);
	cr_expect_eq(h.nvlinks[2][3], 2);
	cr_expect_eq(h.nvlinks[0][2], 0);
	cr_expect_eq(h.nvlinks[1][3], 0);
	cr_expect_float_eq(h.nvlink_gbps[1][0], 40.0, 1e-9);
	cr_expect(strstr(h.notes, "GPU0 has 40 GB/s of NVLink to Package") != NULL,
		  "%s", h.notes);
}

Test(discover, two_socket_pci_nics)
{
	load(XML_DIR "24em64t-2n6c2t-pci.xml");
	cr_expect_eq(h.packages, 2);
	cr_expect_eq(h.numa_nodes, 2);
	cr_expect_eq(h.cores, 12);
	cr_expect_eq(h.pus, 24);
	cr_assert_eq(h.ngpus, 3);
	cr_expect_str_eq(h.gpu[0].bus_id, "0000:06:00.0");
	cr_expect_str_eq(h.gpu[1].bus_id, "0000:11:00.0");
	cr_expect_str_eq(h.gpu[2].bus_id, "0000:14:00.0");
	cr_expect_eq(h.gpu[0].numa, 0);
	cr_expect_eq(h.gpu[1].numa, 1);
	cr_assert_eq(h.nnics, 3);
	cr_expect_str_eq(h.nic[0].name, "eth0");
	cr_expect_eq(h.nic[0].kind, NIC_ETHERNET);
	cr_expect_str_eq(h.nic[1].name, "eth1");
	cr_expect_str_eq(h.nic[2].name, "mlx4_0");
	cr_expect_str_eq(h.nic[2].netdev, "eth2");
	cr_expect_eq(h.nic[2].kind, NIC_IB);
	cr_expect_eq(h.nic[2].numa, 0);
	cr_expect_eq(host_compute_nics(&h), 0);
	/* GPU0 and the NICs hang off different root ports of one host
	 * bridge; GPU1/2 are on the other socket. */
	cr_expect_eq(h.gpu_nic[0][2], PATH_PHB);
	cr_expect_eq(h.gpu_nic[1][2], PATH_SYS);
	cr_expect_str_eq(h.nic[h.gpu[0].nic].name, "mlx4_0"); /* RDMA first */
	cr_expect_str_eq(h.nic[h.gpu[1].nic].name, "mlx4_0");
	cr_expect_not(h.nvswitch);
	cr_expect_str_eq(h.nvlink_source, "none");
}

Test(discover, xml_downgrade)
{
	char *s = discover_xml_downgrade(
		"<topology version=\"3.0\">\n"
		"<object type=\"OSDev\" name=\"mlx4_0\" osdev_type=\"48\"/>\n"
		"<object type=\"OSDev\" name=\"eth0\" osdev_type=\"16\"/>\n"
		"<object type=\"OSDev\" name=\"nvml0\" osdev_type=\"12\"/>\n"
		"<object type=\"OSDev\" name=\"cuda0\" subtype=\"CUDA\" osdev_type=\"12\"/>\n"
		"<object type=\"OSDev\" name=\"sda\" osdev_type=\"1\"/>\n"
		"</topology>\n");
	cr_assert_not_null(s);
	cr_expect_str_eq(s,
		"<topology version=\"2.0\">\n"
		"<object type=\"OSDev\" name=\"mlx4_0\" osdev_type=\"3\"/>\n"
		"<object type=\"OSDev\" name=\"eth0\" osdev_type=\"2\"/>\n"
		"<object type=\"OSDev\" name=\"nvml0\" osdev_type=\"1\"/>\n"
		"<object type=\"OSDev\" name=\"cuda0\" subtype=\"CUDA\" osdev_type=\"5\"/>\n"
		"<object type=\"OSDev\" name=\"sda\" osdev_type=\"0\"/>\n"
		"</topology>\n");
	free(s);
	s = discover_xml_downgrade("<topology version=\"2.0\"> osdev_type=\"2\"");
	cr_expect_str_eq(s, "<topology version=\"2.0\"> osdev_type=\"2\"");
	free(s);
}

static void expect_error(const char *file, const char *needle)
{
	struct perr e = { { 0 } };
	cr_expect_eq(discover_hwloc(file, &h, &e), PPLAN_EINPUT, "%s", file);
	cr_expect(strstr(e.msg, file) != NULL, "names the file: %s", e.msg);
	cr_expect(strstr(e.msg, needle) != NULL, "want '%s' in: %s", needle, e.msg);
}

Test(discover, bad_xml)
{
	expect_error(XML_DIR "bad-truncated.xml", "truncated");
	expect_error(XML_DIR "bad-malformed.xml", "malformed hwloc XML");
	expect_error(XML_DIR "no-such.xml", "No such file");
	expect_error(PPLAN_SOURCE_DIR "/tests/fixtures/nvidia-smi/dgx-a100.txt",
		     "not an hwloc XML export");
}

/* NVML is absent here and must be absent in CI too: point it at a
 * library that does not exist so the test never sees a real driver. */
Test(discover, nvml_absent_is_not_an_error)
{
	struct perr e = { { 0 } };
	setenv("PPLAN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	host_init(&h);
	cr_expect_eq(nvml_probe(&h, &e), PPLAN_ENOTFOUND);
	cr_expect(strstr(e.msg, "cannot be loaded") != NULL, "%s", e.msg);
	cr_expect_eq(h.ngpus, 0);
	cr_expect_str_eq(h.nvlink_source, "none");
}

/* ---- NIC link rates from sysfs (tests/fixtures/sysfs stands in for /sys) */

#define SYSFS PPLAN_SOURCE_DIR "/tests/fixtures/sysfs"

Test(discover, nic_rate_from_sysfs)
{
	struct host_nic ib = { "mlx5_0", "", "", NIC_IB, 0, 1, 0 };
	struct host_nic eth = { "eth0", "", "", NIC_ETHERNET, 0, 0, 0 };
	struct host_nic down = { "eth1", "", "", NIC_ETHERNET, 0, 0, 0 };
	struct host_nic none = { "ens9", "", "", NIC_ETHERNET, 0, 0, 0 };
	cr_assert_eq(setenv("PPLAN_SYSFS_ROOT", SYSFS, 1), 0);
	/* "400 Gb/sec (4X NDR)" in ports/1/rate. */
	cr_expect_float_eq(discover_nic_rate_gbits(&ib), 400.0, 1e-9);
	/* 100000 Mb/s in class/net/eth0/speed. */
	cr_expect_float_eq(discover_nic_rate_gbits(&eth), 100.0, 1e-9);
	/* -1: the link is down or virtual; no file: unknown. */
	cr_expect_float_eq(discover_nic_rate_gbits(&down), 0.0, 1e-12);
	cr_expect_float_eq(discover_nic_rate_gbits(&none), 0.0, 1e-12);
}

/* A discovered rate replaces the preset's NIC speed: 8 compute NICs of
 * 200 Gb/s on an 8-GPU node give 25 GB/s per GPU (the preset has 400). */
Test(discover, cluster_takes_discovered_nic_rate)
{
	struct host_cluster_opts o = { gpu_find("h100-sxm"), 0, 1, 0 };
	struct cluster c;
	struct perr e = { { 0 } };
	cr_assert_eq(smitopo_load(PPLAN_SOURCE_DIR "/tests/fixtures/nvidia-smi/dgx-h100.txt",
				  &h, &e), PPLAN_OK, "%s", e.msg);
	for (int i = 0; i < h.nnics; i++)
		h.nic[i].gbits = 200;
	cr_assert_eq(host_to_cluster(&h, &o, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_float_eq(c.nic_gbps, 25.0, 1e-9);
	cr_expect_float_eq(c.net.bw_gbps, 25.0, 1e-9);
	/* --nic-gbits still wins. */
	o.nic_gbits = 400;
	cr_assert_eq(host_to_cluster(&h, &o, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_float_eq(c.net.bw_gbps, 50.0, 1e-9);
}

/* GPU names as people, nvidia-smi and published tables write them: the
 * SXM parts of the table under any spelling; a PCIe or NVL card as its
 * chip's SXM part, said to be approximate. */
Test(discover, gpu_names_as_written)
{
	static const struct { const char *name, *want; int approx; } cases[] = {
		{ "NVIDIA H100 80GB HBM3", "h100-sxm", 0 },
		{ "H100-SXM5-80GB", "h100-sxm", 0 },
		{ "NVIDIA A100-SXM4-80GB", "a100-80gb", 0 },
		{ "A100 40GB", "a100-40gb", 0 },
		{ "A100_SXM4_40GB", "a100-40gb", 0 },
		{ "Tesla V100-SXM2-32GB", "v100-sxm2", 0 },
		{ "GB200 NVL72", "gb200", 0 },
		{ "nvidia gb300", "gb300", 0 },
		{ "A800-SXM4-80GB", "a800", 0 },
		{ "H800", "h800", 0 },
		{ "A100-PCIE-40GB", "a100-40gb", 1 },
		{ "NVIDIA A100 80GB PCIe", "a100-80gb", 1 },
		{ "H100 PCIe", "h100-sxm", 1 },
		{ "H100 NVL", "h100-sxm", 1 },
		{ "DGX-B200", "b200", 0 },
		{ "HGX B300", "b300", 0 },
		{ "B300", "b300", 0 },
		{ "DGX GB200", "gb200", 0 },
		{ "NVIDIA GH200 480GB", "gh200", 0 },
		{ "GH200-144GB", "gh200-144gb", 0 },
		{ "H20", "h20", 0 },
		{ "DGXB200", NULL, 0 },
		{ "MI300X", NULL, 0 },
		{ "", NULL, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int approx = -1;
		const struct gpu_spec *g = gpu_find_loose(cases[i].name, &approx);
		if (!cases[i].want) {
			cr_expect_null(g, "'%s' read as %s", cases[i].name, g ? g->name : "");
			continue;
		}
		cr_expect(g && !strcmp(g->name, cases[i].want), "'%s' read as %s, want %s",
			  cases[i].name, g ? g->name : "(none)", cases[i].want);
		cr_expect_eq(approx, cases[i].approx, "'%s': approx %d", cases[i].name, approx);
	}
}

/* Precision as the frameworks' tables write their recipes: every FP8
 * scaling recipe, MXFP8 and NVFP4 (a recipe of the fp8 class) is fp8;
 * MXFP4 is read as NVFP4 and says so; a trainer's mixed-precision name is the narrowest format it
 * names ("mixed" alone bf16, said); anything else is refused. */
Test(discover, precision_recipes_as_written)
{
	enum { B = PREC_BF16, F = PREC_FP8, H = PREC_FP16, X = PREC_COUNT };
	static const struct { const char *s; int ok, noted, want; } cases[] = {
		{ "bf16", 1, 0, B }, { "FP8", 1, 0, F }, { "fp8-cs", 1, 0, F }, { "FP8-MX", 1, 0, F },
		{ "mxfp8", 1, 0, F }, { "fp8_delayed", 1, 0, F }, { "FP8 blockwise", 1, 0, F },
		{ "NVFP4", 1, 0, F }, { "fp4", 1, 0, F }, { "MXFP4", 1, 1, F },
		{ "bf16_with_nvfp4_mixed", 1, 0, F }, { "int8", 0, 0, X }, { "fp8-", 1, 0, F },
		{ "", 0, 0, X },
		/* mixed precision as trainers name it: the narrowest GEMM format named */
		{ "bf16-mixed", 1, 0, B }, { "amp_fp8", 1, 0, F }, { "FP8/BF16", 1, 0, F },
		{ "16-mixed", 0, 0, X }, { "fp16-mixed", 1, 0, H }, { "mixed", 1, 1, B },
		{ "TF32", 0, 0, X },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		enum precision p = PREC_COUNT;
		const char *note = NULL;
		int rc = precision_parse_recipe(cases[i].s, &p, &note);
		cr_expect_eq(rc == 0, cases[i].ok, "'%s': rc %d", cases[i].s, rc);
		if (!cases[i].ok)
			continue;
		cr_expect_eq((int)p, cases[i].want, "'%s': %s", cases[i].s, precision_name(p));
		cr_expect_eq(note != NULL, cases[i].noted, "'%s': note %s", cases[i].s, note ? note : "");
	}
}
