/*
 * test_smitopo.c: the `nvidia-smi topo -m` parser on the four recorded
 * outputs in tests/fixtures/nvidia-smi (provenance in tests/fixtures/
 * README.md), and on broken ones.  Every expected number below was read
 * off the fixture files by eye, not from the parser:
 *
 * dgx-a100.txt: 8 GPUs, every pair NV12; 12 mlx5 NICs, of which mlx5_0-3
 *   and mlx5_6-9 are PXB to two GPUs each (compute) and mlx5_4/5/10/11
 *   SYS to every GPU (storage); NUMA affinity 3,3,1,1,7,7,5,5.
 * dgx-h100.txt: GPU rows only; every pair NV18; mlx5_0-7 PIX to GPU0-7
 *   one each, mlx5_8 NODE to GPU0-3, mlx5_9 NODE to GPU4-7; NUMA 0 x4, 1 x4.
 * dgx1-v100.txt: hybrid cube-mesh (matrix below); NIC columns in the
 *   order mlx5_0, mlx5_2, mlx5_1, mlx5_3, each PIX to two GPUs; no NUMA
 *   column, two CPU affinity sets (0-19,40-59 and 20-39,60-79).
 * h100-4gpu-nic-legend.txt: spaces, NIC0-3 = mlx5_0-3 by the legend;
 *   PXB pairs GPU0-NIC0, GPU0-NIC1, GPU1-NIC3, GPU2-NIC2, GPU3-NIC1;
 *   NUMA 0 for all; GPU NUMA ID N/A.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "host.h"
#include "smitopo.h"

#define SMI_DIR PPLAN_SOURCE_DIR "/tests/fixtures/nvidia-smi/"

static struct host_topo h;

static void load(const char *file)
{
	struct perr e = { { 0 } };
	enum pplan_status st = smitopo_load(file, &h, &e);
	cr_assert_eq(st, PPLAN_OK, "%s: %s", file, e.msg);
}

static int nic_index(const char *name)
{
	for (int n = 0; n < h.nnics; n++)
		if (strcmp(h.nic[n].name, name) == 0)
			return n;
	return -1;
}

static void assert_nearest(int gpu, const char *nic, enum pci_path p)
{
	cr_assert_geq(h.gpu[gpu].nic, 0, "GPU%d has no NIC", gpu);
	cr_expect_str_eq(h.nic[h.gpu[gpu].nic].name, nic, "GPU%d", gpu);
	cr_expect_eq(h.gpu[gpu].nic_path, p, "GPU%d path %s", gpu,
		     pci_path_name(h.gpu[gpu].nic_path));
}

Test(smitopo, dgx_a100)
{
	static const int numa[8] = { 3, 3, 1, 1, 7, 7, 5, 5 };
	static const char *const nic[8] = { "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3",
					    "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9" };
	load(SMI_DIR "dgx-a100.txt");
	cr_assert_eq(h.ngpus, 8);
	cr_expect_eq(h.nnics, 12);
	cr_expect_eq(host_compute_nics(&h), 8);
	cr_expect_eq(h.numa_nodes, 4);
	cr_expect_eq(h.numa_inferred, 0);
	cr_expect(h.nvswitch);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(h.gpu[i].numa, numa[i], "GPU%d", i);
		cr_expect_eq(h.gpu[i].switch_links, 12, "GPU%d", i);
		for (int j = 0; j < 8; j++)
			cr_expect_eq(h.nvlinks[i][j], i == j ? 0 : 12);
		assert_nearest(i, nic[i], PATH_PXB);
	}
	cr_expect_str_eq(h.gpu[0].cpu_affinity, "48-63,176-191");
	cr_expect_eq(h.gpu_nic[0][nic_index("mlx5_4")], PATH_SYS);
	cr_expect_eq(h.gpu_nic[0][nic_index("mlx5_1")], PATH_PXB);
	cr_expect_eq(h.nic[nic_index("mlx5_10")].compute, 0);
	cr_expect(host_rail_aligned(&h));
}

Test(smitopo, dgx_h100_gpu_rows_only)
{
	load(SMI_DIR "dgx-h100.txt");
	cr_assert_eq(h.ngpus, 8);
	cr_expect_eq(h.nnics, 10);
	cr_expect_eq(host_compute_nics(&h), 8);
	cr_expect_eq(h.numa_nodes, 2);
	cr_expect(h.nvswitch);
	for (int i = 0; i < 8; i++) {
		char nic[16];
		snprintf(nic, sizeof nic, "mlx5_%d", i);
		cr_expect_eq(h.gpu[i].numa, i < 4 ? 0 : 1);
		cr_expect_eq(h.gpu[i].switch_links, 18);
		assert_nearest(i, nic, PATH_PIX);
	}
	cr_expect_eq(h.gpu_nic[0][nic_index("mlx5_8")], PATH_NODE);
	cr_expect_eq(h.gpu_nic[0][nic_index("mlx5_9")], PATH_SYS);
	cr_expect_eq(h.gpu_nic[5][nic_index("mlx5_9")], PATH_NODE);
	cr_expect(host_rail_aligned(&h));
}

Test(smitopo, dgx1_hybrid_cube_mesh)
{
	static const int m[8][8] = {
		{ 0, 1, 1, 2, 2, 0, 0, 0 }, { 1, 0, 2, 1, 0, 2, 0, 0 },
		{ 1, 2, 0, 2, 0, 0, 1, 0 }, { 2, 1, 2, 0, 0, 0, 0, 1 },
		{ 2, 0, 0, 0, 0, 1, 1, 2 }, { 0, 2, 0, 0, 1, 0, 2, 1 },
		{ 0, 0, 1, 0, 1, 2, 0, 2 }, { 0, 0, 0, 1, 2, 1, 2, 0 },
	};
	static const char *const nic[8] = { "mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1",
					    "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3" };
	load(SMI_DIR "dgx1-v100.txt");
	cr_assert_eq(h.ngpus, 8);
	cr_expect_eq(h.nnics, 4);
	cr_expect_str_eq(h.nic[1].name, "mlx5_2"); /* column order kept */
	cr_expect_eq(host_compute_nics(&h), 4);
	cr_expect_eq(h.numa_nodes, 2);
	cr_expect_eq(h.numa_inferred, 1);
	cr_expect_not(h.nvswitch);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(h.gpu[i].numa, -1);
		cr_expect_eq(host_gpu_links(&h, i), 6, "GPU%d has 6 NVLink2 links", i);
		for (int j = 0; j < 8; j++)
			cr_expect_eq(h.nvlinks[i][j], m[i][j], "GPU%d-GPU%d", i, j);
		assert_nearest(i, nic[i], PATH_PIX);
	}
	cr_expect_eq(h.gpu_nic[0][nic_index("mlx5_1")], PATH_PHB);
	cr_expect_not(host_rail_aligned(&h));
}

Test(smitopo, h100_nic_legend_spaces)
{
	load(SMI_DIR "h100-4gpu-nic-legend.txt");
	cr_assert_eq(h.ngpus, 4);
	cr_assert_eq(h.nnics, 4);
	for (int n = 0; n < 4; n++) {
		char name[16];
		snprintf(name, sizeof name, "mlx5_%d", n);
		cr_expect_str_eq(h.nic[n].name, name);
		cr_expect_eq(h.nic[n].kind, NIC_IB);
	}
	cr_expect_eq(h.numa_nodes, 1);
	cr_expect(h.nvswitch);
	cr_expect_eq(h.nvlinks[0][3], 18);
	assert_nearest(0, "mlx5_0", PATH_PXB);
	assert_nearest(1, "mlx5_3", PATH_PXB);
	assert_nearest(2, "mlx5_2", PATH_PXB);
	assert_nearest(3, "mlx5_1", PATH_PXB);
	cr_expect_eq(h.gpu_nic[0][1], PATH_PXB);
	cr_expect_eq(h.gpu_nic[0][2], PATH_NODE);
	cr_expect_str_eq(h.gpu[2].cpu_affinity, "0-55,112-167");
	cr_expect(host_rail_aligned(&h));
}

/* ---- bad input: the file and the line are named, nothing crashes ---- */

static void expect_error(const char *file, const char *needle)
{
	struct perr e = { { 0 } };
	enum pplan_status st = smitopo_load(file, &h, &e);
	cr_expect_eq(st, PPLAN_EINPUT, "%s", file);
	cr_expect(strstr(e.msg, file) != NULL, "message names the file: %s", e.msg);
	cr_expect(strstr(e.msg, needle) != NULL, "want '%s' in: %s", needle, e.msg);
}

Test(smitopo, unknown_extra_column)
{
	expect_error(SMI_DIR "bad-extra-column.txt", ":1: unknown column 'NVLink Domain'");
}

Test(smitopo, short_row)
{
	expect_error(SMI_DIR "bad-short-row.txt", ":5: row GPU3 has 21 cells");
}

Test(smitopo, asymmetric_nvlinks)
{
	expect_error(SMI_DIR "bad-asymmetric.txt", "GPU2 to GPU1 has 4 NVLinks");
}

Test(smitopo, missing_file)
{
	expect_error(SMI_DIR "no-such-file.txt", "No such file");
}

Test(smitopo, texts)
{
	struct perr e = { { 0 } };
	cr_expect_eq(smitopo_parse("hello\nworld\n", "t", &h, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "no header row naming GPU0") != NULL, "%s", e.msg);
	cr_expect_eq(smitopo_parse("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t Y \n",
				   "t", &h, &e), PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "t:3: GPU1 to GPU1 is 'Y'") != NULL, "%s", e.msg);
	cr_expect_eq(smitopo_parse("\tGPU0\tGPU1\nGPU0\t X \tNV2\n", "t", &h, &e),
		     PPLAN_EINPUT);
	cr_expect(strstr(e.msg, "names GPU1 but no row does") != NULL, "%s", e.msg);
	/* A two-GPU PCIe box with an NVLink bridge, CRLF line ends, the
	 * pre-384 "SOC" word. */
	cr_assert_eq(smitopo_parse("\tGPU0\tGPU1\tCPU Affinity\r\n"
				   "GPU0\t X \tNV4\t0-7\r\nGPU1\tNV4\t X \t0-7\r\n"
				   "\r\nLegend:\r\n", "t", &h, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(h.ngpus, 2);
	cr_expect_eq(h.nvlinks[0][1], 4);
	cr_expect_not(h.nvswitch);
	cr_expect_eq(h.numa_nodes, 1);
	cr_assert_eq(smitopo_parse("\tGPU0\tGPU1\nGPU0\t X \tSOC\nGPU1\tSOC\t X \n",
				   "t", &h, &e), PPLAN_OK, "%s", e.msg);
	cr_expect_eq(h.nvlinks[0][1], 0);
}
