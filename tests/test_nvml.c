/*
 * test_nvml.c: NVLink discovery through NVML, against a fake
 * libnvidia-ml (tests/fake_nvml.c) loaded through PPLAN_NVML_LIBRARY.
 * The fake's machines: "switch", 8 H100s with 18 NVLink 4 links each to
 * NVSwitches (18 x 25 GB/s = 450 GB/s per GPU); "pair", 2 A100 PCIe
 * boards joined by a 4-link NVLink 3 bridge (4 x 25 = 100 GB/s).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "nvml.h"

static struct host_topo h;

Test(nvml, switch_machine)
{
	struct perr e = { { 0 } };
	setenv("PPLAN_NVML_LIBRARY", FAKE_NVML_PATH, 1);
	setenv("FAKE_NVML_MODE", "switch", 1);
	host_init(&h);
	/* hwloc saw GPU 2 by bus id: NVML's GPU 2 must land on it. */
	h.ngpus = 3;
	snprintf(h.gpu[2].bus_id, sizeof h.gpu[2].bus_id, "0000:3b:00.0");
	snprintf(h.gpu[0].bus_id, sizeof h.gpu[0].bus_id, "0000:1b:00.0");
	snprintf(h.gpu[1].bus_id, sizeof h.gpu[1].bus_id, "0000:2b:00.0");
	h.gpu[2].numa = 1;
	cr_assert_eq(nvml_probe(&h, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(h.ngpus, 8);
	cr_expect_eq(h.gpu[2].numa, 1);
	cr_expect_str_eq(h.gpu[7].bus_id, "00000000:8B:00.0");
	cr_expect_str_eq(h.gpu[0].model, "NVIDIA H100 80GB HBM3");
	cr_expect(h.nvswitch);
	cr_expect_str_eq(h.nvlink_source, "NVML");
	cr_expect_float_eq(h.link_gbps, 25.0, 1e-9);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(h.gpu[i].switch_links, 18);
		cr_expect_float_eq(h.gpu[i].switch_gbps, 450.0, 1e-9);
	}
	cr_expect_eq(host_guess_gpu(h.gpu[0].model), gpu_find("h100-sxm"));
}

Test(nvml, bridged_pair)
{
	struct perr e = { { 0 } };
	struct cluster c;
	struct host_cluster_opts o = { NULL, 100, 1, 0 };
	setenv("PPLAN_NVML_LIBRARY", FAKE_NVML_PATH, 1);
	setenv("FAKE_NVML_MODE", "pair", 1);
	host_init(&h);
	cr_assert_eq(nvml_probe(&h, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(h.ngpus, 2);
	cr_expect_not(h.nvswitch);
	cr_expect_eq(h.nvlinks[0][1], 4);
	cr_expect_eq(h.nvlinks[1][0], 4);
	cr_expect_float_eq(h.nvlink_gbps[0][1], 100.0, 1e-9);
	/* "A100-PCIE-40GB" is not in pplan's table under that name; guessed
	 * as the nearest A100 entry. */
	cr_assert_eq(host_to_cluster(&h, &o, &c, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(c.nvlink.cls, LINK_NVLINK);
	cr_expect_float_eq(cluster_group_link(&c, 2, 1).bw_gbps, 100.0, 1e-9);
}
