/*
 * gpu.c: the embedded GPU table.  Peak rates are dense tensor-core rates
 * from the vendors' data sheets (A100: 312 TFLOP/s bf16/fp16; H100 SXM and
 * H200: 989 bf16/fp16, 1979 fp8; B200 (HGX, 1000 W): 2250 bf16, 4500 fp8;
 * GB200 and GB300 (the GPUs of an NVL72 rack's trays): 2500 bf16, 5000
 * fp8; HGX B300 as HGX B200; GH200 the H100's compute with its own
 * memory; H20 148 bf16, 296 fp8; V100 SXM2 125 fp16, no bf16; P100 21.2
 * fp16, no tensor cores).  The
 * h100-96gb figures (the 500 W HBM2e part) are scaled from the H100 SXM by
 * its lower power limit: treat them as estimates.  "GiB" is what a process
 * can allocate (the device total PyTorch reports).  sim/MODEL.md section 3
 * gives the sources; the GEMM efficiencies are the cost model's fitted
 * constants per architecture, not entries here.
 */
#include "gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "suggest.h"

#define PEAK(bf16, fp16, fp8) { [PREC_BF16] = bf16, [PREC_FP16] = fp16, [PREC_FP8] = fp8 }

static const struct gpu_spec gpus[] = {
	/* Older parts, for the recorded DGX-1 / DGX-2 / POWER8 topologies. */
	{ .name = "p100-sxm2", .description = "NVIDIA Tesla P100-SXM2-16GB",
	  .peak_tflops = PEAK(0, 21.2, 0), .mem_gib = 15.9, .hbm_gbps = 732,
	  .nvlink_gbps = 80, .nvlink_links = 4, .sm_count = 56, .arch = ARCH_PASCAL },
	{ .name = "v100-sxm2", .description = "NVIDIA Tesla V100-SXM2-32GB",
	  .peak_tflops = PEAK(0, 125, 0), .mem_gib = 31.7, .hbm_gbps = 900,
	  .nvlink_gbps = 150, .nvlink_links = 6, .sm_count = 80, .arch = ARCH_VOLTA },
	{ .name = "a100-40gb", .description = "NVIDIA A100-SXM4-40GB",
	  .peak_tflops = PEAK(312, 312, 0), .mem_gib = 39.39, .hbm_gbps = 1555,
	  .nvlink_gbps = 300, .nvlink_links = 12, .sm_count = 108, .arch = ARCH_AMPERE },
	{ .name = "a100-80gb", .description = "NVIDIA A100-SXM4-80GB",
	  .peak_tflops = PEAK(312, 312, 0), .mem_gib = 79.35, .hbm_gbps = 2039,
	  .nvlink_gbps = 300, .nvlink_links = 12, .sm_count = 108, .arch = ARCH_AMPERE },
	/* The A100 80GB with NVLink cut to 400 GB/s both ways (8 links). */
	{ .name = "a800", .description = "NVIDIA A800-SXM4-80GB",
	  .peak_tflops = PEAK(312, 312, 0), .mem_gib = 79.35, .hbm_gbps = 2039,
	  .nvlink_gbps = 200, .nvlink_links = 8, .sm_count = 108, .arch = ARCH_AMPERE },
	{ .name = "h100-sxm", .description = "NVIDIA H100-SXM5-80GB",
	  .peak_tflops = PEAK(989, 989, 1979), .mem_gib = 79.19, .hbm_gbps = 3350,
	  .nvlink_gbps = 450, .nvlink_links = 18, .sm_count = 132, .arch = ARCH_HOPPER },
	{ .name = "h100-96gb", .description = "NVIDIA H100 96GB HBM2e (500 W)",
	  .peak_tflops = PEAK(835, 835, 1670), .mem_gib = 95.6, .hbm_gbps = 2400,
	  .nvlink_gbps = 450, .nvlink_links = 18, .sm_count = 132, .arch = ARCH_HOPPER },
	{ .name = "h800", .description = "NVIDIA H800-SXM5-80GB",
	  .peak_tflops = PEAK(989, 989, 1979), .mem_gib = 79.19, .hbm_gbps = 3350,
	  .nvlink_gbps = 200, .nvlink_links = 8, .sm_count = 132, .arch = ARCH_HOPPER },
	{ .name = "h200", .description = "NVIDIA H200-SXM-141GB",
	  .peak_tflops = PEAK(989, 989, 1979), .mem_gib = 140.4, .hbm_gbps = 4800,
	  .nvlink_gbps = 450, .nvlink_links = 18, .sm_count = 132, .arch = ARCH_HOPPER },
	/* The H100's compute with 96 GB of HBM3 at 4.0 TB/s, or 144 GB of
	 * HBM3e at 4.9 TB/s, beside a Grace CPU (NVIDIA GH200 data sheet). */
	{ .name = "gh200", .description = "NVIDIA GH200 (H100 of a Grace Hopper superchip, 96 GB)",
	  .peak_tflops = PEAK(989, 989, 1979), .mem_gib = 95.6, .hbm_gbps = 4000,
	  .nvlink_gbps = 450, .nvlink_links = 18, .sm_count = 132, .arch = ARCH_HOPPER },
	{ .name = "gh200-144gb", .description = "NVIDIA GH200 144GB HBM3e",
	  .peak_tflops = PEAK(989, 989, 1979), .mem_gib = 143.4, .hbm_gbps = 4900,
	  .nvlink_gbps = 450, .nvlink_links = 18, .sm_count = 132, .arch = ARCH_HOPPER },
	/* The export part: 148 TFLOP/s dense bf16, 296 fp8, 96 GB HBM3 at
	 * 4.0 TB/s, NVLink 900 GB/s both ways (NVIDIA H20 product brief). */
	{ .name = "h20", .description = "NVIDIA H20 96GB",
	  .peak_tflops = PEAK(148, 148, 296), .mem_gib = 95.6, .hbm_gbps = 4000,
	  .nvlink_gbps = 450, .nvlink_links = 18, .sm_count = 78, .arch = ARCH_HOPPER },
	/* HGX B200 (1000 W): 144 PFLOP/s fp4 with sparsity per 8 GPUs, 9
	 * dense each. */
	{ .name = "b200", .description = "NVIDIA B200-SXM-180GB",
	  .peak_tflops = PEAK(2250, 2250, 4500), .fp4_tflops = 9000, .mem_gib = 178.4,
	  .hbm_gbps = 8000,
	  .nvlink_gbps = 900, .nvlink_links = 18, .sm_count = 148, .arch = ARCH_BLACKWELL },
	/* The B200 of a GB200 NVL72 tray (1200 W): 2.5 PFLOP/s dense bf16,
	 * 5 fp8, 10 fp4 (1,440 PFLOP/s fp4 with sparsity per 72 GPUs); 186 GB
	 * HBM3e (13.4 TB per 72 GPUs), 8 TB/s. */
	{ .name = "gb200", .description = "NVIDIA GB200 (B200 of an NVL72 tray, 186 GB)",
	  .peak_tflops = PEAK(2500, 2500, 5000), .fp4_tflops = 10000, .mem_gib = 184.0,
	  .hbm_gbps = 8000,
	  .nvlink_gbps = 900, .nvlink_links = 18, .sm_count = 148, .arch = ARCH_BLACKWELL },
	/* Blackwell Ultra on an HGX B300 board (1100 W): the HGX B200's
	 * dense rates per GPU (36 PFLOP/s bf16, 72 fp8 for 8 GPUs, with
	 * sparsity) but fp4 1.5 times the B200's (108 PFLOP/s dense per 8
	 * GPUs: 13.5 each), 288 GB HBM3e (2.3 TB per board), 8 TB/s; the
	 * GB300's memory as a process sees it. */
	{ .name = "b300", .description = "NVIDIA B300 (HGX B300, 288 GB)",
	  .peak_tflops = PEAK(2250, 2250, 4500), .fp4_tflops = 13500, .mem_gib = 276.0,
	  .hbm_gbps = 8000,
	  .nvlink_gbps = 900, .nvlink_links = 18, .sm_count = 160, .arch = ARCH_BLACKWELL },
	/* Blackwell Ultra of a GB300 NVL72 tray (1400 W): 2.5 PFLOP/s dense
	 * bf16, 5 fp8, 15 fp4 (1,080 PFLOP/s dense per 72 GPUs); 279 GB HBM3e
	 * (20.7 TB per 72 GPUs), 8 TB/s. */
	{ .name = "gb300", .description = "NVIDIA GB300 (B300 of an NVL72 tray, 279 GB)",
	  .peak_tflops = PEAK(2500, 2500, 5000), .fp4_tflops = 15000, .mem_gib = 276.0,
	  .hbm_gbps = 8000,
	  .nvlink_gbps = 900, .nvlink_links = 18, .sm_count = 160, .arch = ARCH_BLACKWELL },
};

static const struct {
	const char *alias;
	const char *name;
} aliases[] = {
	{ "V100-SXM2-32GB", "v100-sxm2" }, { "v100", "v100-sxm2" },
	{ "P100-SXM2-16GB", "p100-sxm2" }, { "p100", "p100-sxm2" },
	{ "A100-SXM4-40GB", "a100-40gb" }, { "A100-40GB", "a100-40gb" },
	{ "A100-SXM4-80GB", "a100-80gb" }, { "A100-80GB", "a100-80gb" },
	{ "a100", "a100-80gb" },
	{ "H100-SXM5-80GB", "h100-sxm" }, { "H100-SXM", "h100-sxm" },
	{ "H100-80GB", "h100-sxm" }, { "h100", "h100-sxm" },
	{ "H100-96GB-HBM2e", "h100-96gb" }, { "H100-96GB", "h100-96gb" },
	{ "H800-SXM5-80GB", "h800" }, { "A800-SXM4-80GB", "a800" }, { "A800-80GB", "a800" },
	{ "H200-SXM-141GB", "h200" }, { "H200-141GB", "h200" },
	{ "B200-SXM-180GB", "b200" }, { "B200-180GB", "b200" },
	{ "GB200", "gb200" }, { "GB200-NVL72", "gb200" }, { "GB200-186GB", "gb200" },
	{ "GB300", "gb300" }, { "GB300-NVL72", "gb300" }, { "B300-SXM-288GB", "b300" },
	{ "B300-288GB", "b300" }, { "GH200-96GB", "gh200" }, { "GH200-480GB", "gh200" },
	{ "GH200-144GB", "gh200-144gb" }, { "GH200-624GB", "gh200-144gb" },
	{ "H20-96GB", "h20" },
};

const char *gpu_arch_name(enum gpu_arch a)
{
	static const char *const names[ARCH_COUNT] = {
		[ARCH_CPU] = "cpu", [ARCH_PASCAL] = "pascal", [ARCH_VOLTA] = "volta", [ARCH_AMPERE] = "ampere",
		[ARCH_HOPPER] = "hopper", [ARCH_BLACKWELL] = "blackwell",
	};
	return (a >= 0 && a < ARCH_COUNT) ? names[a] : "?";
}

const char *precision_name(enum precision p)
{
	switch (p) {
	case PREC_BF16: return "bf16";
	case PREC_FP16: return "fp16";
	case PREC_FP8: return "fp8";
	case PREC_FP32: return "fp32";
	case PREC_COUNT: break;
	}
	return "?";
}

int precision_parse(const char *s, enum precision *out)
{
	for (int p = 0; p < PREC_COUNT; p++) {
		if (strcasecmp(s, precision_name((enum precision)p)) == 0) {
			*out = (enum precision)p;
			return 0;
		}
	}
	return -1;
}

int precision_bytes(enum precision p)
{
	switch (p) {
	case PREC_FP8: return 1;
	case PREC_FP32: return 4;
	case PREC_BF16:
	case PREC_FP16:
	case PREC_COUNT: break;
	}
	return 2;
}

static const char *const recipe_names[FP8_RECIPE_COUNT] = {
	[FP8_FRAMEWORK] = "framework", [FP8_DELAYED] = "delayed",
	[FP8_TENSORWISE] = "tensorwise", [FP8_BLOCKWISE] = "blockwise", [FP8_MXFP8] = "mxfp8",
	[FP8_NVFP4] = "nvfp4",
};

const char *fp8_recipe_name(enum fp8_recipe r)
{
	return r >= 0 && r < FP8_RECIPE_COUNT ? recipe_names[r] : "?";
}

const char *precision_recipe_name(enum precision p, enum fp8_recipe r)
{
	if (p != PREC_FP8)
		return precision_name(p);
	switch (r) {
	case FP8_DELAYED: return "fp8-delayed";
	case FP8_TENSORWISE: return "fp8-tensorwise";
	case FP8_BLOCKWISE: return "fp8-blockwise";
	case FP8_MXFP8: return "mxfp8";
	case FP8_NVFP4: return "nvfp4";
	case FP8_FRAMEWORK:
	case FP8_RECIPE_COUNT: break;
	}
	return precision_name(p);
}

int fp8_recipe_refused(const struct gpu_spec *g, enum fp8_recipe r, char *why, size_t len)
{
	if (r == FP8_NVFP4 && !(g->fp4_tflops > 0) && g->arch != ARCH_CPU) {
		snprintf(why, len,
			 "NVFP4 needs a GPU with fp4 tensor cores (b200, b300, gb200, gb300: Transformer Engine's NVFP4 recipe), not the %s; its low-precision recipes are fp8's (fp8-delayed, fp8-cs, fp8-blockwise%s)",
			 g->name, g->arch == ARCH_BLACKWELL ? ", mxfp8" : "");
		return -1;
	}
	if (r != FP8_MXFP8 || g->arch == ARCH_BLACKWELL || g->arch == ARCH_CPU)
		return 0;
	snprintf(why, len,
		 "MXFP8 needs a Blackwell GPU (b200, b300, gb200, gb300: Transformer Engine's block-scaled fp8), not the %s; its fp8 recipes are delayed, tensorwise and blockwise (fp8-delayed, fp8-cs, fp8-blockwise)",
		 g->name);
	return -1;
}

enum fp8_recipe fp8_recipe_of(const char *s)
{
	static const struct {
		const char *key;
		enum fp8_recipe r;
	} map[] = {
		{ "fp8delayed", FP8_DELAYED }, { "fp8ds", FP8_DELAYED },
		{ "fp8delayedscaling", FP8_DELAYED }, { "fp8cs", FP8_TENSORWISE },
		{ "fp8tensorwise", FP8_TENSORWISE }, { "fp8currentscaling", FP8_TENSORWISE },
		{ "fp8blockwise", FP8_BLOCKWISE }, { "fp8sc", FP8_BLOCKWISE },
		{ "fp8subchannel", FP8_BLOCKWISE }, { "fp8blockscaling", FP8_BLOCKWISE },
		{ "mxfp8", FP8_MXFP8 }, { "fp8mx", FP8_MXFP8 },
		{ "nvfp4", FP8_NVFP4 }, { "fp4", FP8_NVFP4 }, { "fp4nvfp4", FP8_NVFP4 },
		{ "fp4e2m1", FP8_NVFP4 },
	};
	char k[32];
	if (!s || !name_squeeze(s, NULL, k, sizeof k))
		return FP8_FRAMEWORK;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(k, map[i].key))
			return map[i].r;
	/* mixed names that name an fp4 format: Megatron-Bridge's
	 * "bf16_with_nvfp4_mixed", "MXFP4" */
	if (strstr(k, "fp4"))
		return FP8_NVFP4;
	return FP8_FRAMEWORK;
}

int precision_parse_recipe(const char *s, enum precision *out, const char **note)
{
	char k[32];
	*note = NULL;
	if (!s)
		return -1;
	if (precision_parse(s, out) == 0)
		return 0;
	if (!name_squeeze(s, NULL, k, sizeof k))
		return -1;
	if (precision_parse(k, out) == 0) /* "BF-16", "fp8 " */
		return 0;
	/* a recipe, or Megatron's fp8 formats (hybrid: e4m3 forward, e5m2
	 * gradients) */
	/* an fp4 name is the NVFP4 recipe (fp8's class: fp8_recipe_of),
	 * MXFP4 priced as it (Transformer Engine trains in NVFP4 alone) */
	if (strstr(k, "mxfp4"))
		*note = "MXFP4 priced as NVFP4 (Transformer Engine trains in NVFP4, not MXFP4)";
	if (fp8_recipe_of(k) != FP8_FRAMEWORK || !strcmp(k, "fp8hybrid") || !strcmp(k, "fp8e4m3")) {
		*out = PREC_FP8;
		return 0;
	}
	/* mixed precision as trainers name it: "bf16-mixed" (Lightning),
	 * "amp_bf16" (Composer), "FP8/BF16", "bf16+fp8": the narrowest
	 * GEMM format named */
	if (strstr(k, "fp8") || strstr(k, "e4m3")) {
		*out = PREC_FP8;
		return 0;
	}
	if (strstr(k, "bf16")) {
		*out = PREC_BF16;
		return 0;
	}
	if (strstr(k, "fp16") || strstr(k, "float16")) {
		*out = PREC_FP16;
		return 0;
	}
	if (!strcmp(k, "mixed") || !strcmp(k, "amp")) {
		*out = PREC_BF16;
		*note = "mixed precision read as bf16";
		return 0;
	}
	return -1;
}

const struct gpu_spec *gpu_table(int *n)
{
	*n = (int)(sizeof gpus / sizeof gpus[0]);
	return gpus;
}

const struct gpu_spec *gpu_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
		if (strcasecmp(gpus[i].name, name) == 0)
			return &gpus[i];
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcasecmp(aliases[i].alias, name) == 0)
			return gpu_find(aliases[i].name);
	return NULL;
}

/* Removes the hyphen-separated part `word` from s (upper case) where it
 * stands ("A100-PCIE-40GB" less PCIE: "A100-40GB"); 1 if it did. */
static int drop_part(char *s, const char *word)
{
	size_t n = strlen(word);
	for (char *p = s; (p = strstr(p, word)) != NULL; p += n)
		if ((p == s || p[-1] == '-') && (p[n] == '\0' || p[n] == '-')) {
			char *from = p[n] == '-' ? p + n + 1 : p + n;
			if (p > s && p[n] == '\0')
				p--; /* the hyphen before a last part */
			memmove(p, from, strlen(from) + 1);
			return 1;
		}
	return 0;
}

const struct gpu_spec *gpu_find_loose(const char *name, int *approx)
{
	char buf[64];
	const struct gpu_spec *g;
	size_t n;

	if (approx)
		*approx = 0;
	if (!name)
		return NULL;
	if ((g = gpu_find(name)) != NULL)
		return g;
	while (*name == ' ')
		name++;
	if (strncasecmp(name, "NVIDIA", 6) == 0 && (name[6] == ' ' || name[6] == '-' || name[6] == '_'))
		name += 7;
	if (strncasecmp(name, "Tesla", 5) == 0 && (name[5] == ' ' || name[5] == '-' || name[5] == '_'))
		name += 6;
	/* the system for its GPU: "DGX-B200", "HGX B300", "DGX GB200" */
	if ((strncasecmp(name, "DGX", 3) == 0 || strncasecmp(name, "HGX", 3) == 0) &&
	    (name[3] == ' ' || name[3] == '-' || name[3] == '_'))
		name += 4;
	snprintf(buf, sizeof buf, "%s", name);
	for (char *p = buf; *p; p++)
		*p = (*p == ' ' || *p == '_') ? '-' : (char)toupper((unsigned char)*p);
	/* The table's parts are SXM modules: a PCIe or NVL card of the same
	 * chip is taken as its SXM twin, and said to be. */
	if (drop_part(buf, "PCIE") | drop_part(buf, "NVL")) {
		if (approx)
			*approx = 1;
		if ((g = gpu_find(buf)) != NULL)
			return g;
	}
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '-')
		buf[--n] = '\0';
	/* "H100-80GB-HBM3" -> "H100-80GB" (an alias) -> "H100". */
	for (char *p = buf + n; p > buf; p--) {
		if (*p == '-' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if ((g = gpu_find(buf)) != NULL)
				return g;
			*p = c;
		}
	}
	return NULL;
}

void gpu_list_names(char *buf, size_t len, const char *sep)
{
	int n;
	const struct gpu_spec *g = gpu_table(&n);
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? sep : "",
			 g[i].name);
}

const struct gpu_spec *gpu_find_in_description(const char *device)
{
	int n;
	const struct gpu_spec *tab = gpu_table(&n), *best = NULL;
	size_t best_len = 0;
	/* The longest family the description names ("GB200" before "B200"). */
	for (int i = 0; device && i < n; i++) {
		char up[32];
		size_t k;
		for (k = 0; tab[i].name[k] && k < sizeof up - 1; k++)
			up[k] = (char)toupper((unsigned char)tab[i].name[k]);
		up[k] = '\0';
		if (strchr(up, '-'))
			*strchr(up, '-') = '\0';
		if (strstr(device, up) && strlen(up) > best_len) {
			best = &tab[i];
			best_len = strlen(up);
		}
	}
	return best;
}
