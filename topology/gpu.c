/*
 * gpu.c: the embedded GPU table.  Peak rates are dense tensor-core rates
 * from the vendors' data sheets (A100: 312 TFLOP/s bf16/fp16; H100 SXM and
 * H200: 989 bf16/fp16, 1979 fp8; B200 (HGX, 1000 W): 2250 bf16, 4500 fp8).
 * GEMM ceilings (the fraction of peak that large GEMMs reach inside a
 * training step, power and clocks included): A100 from cuBLAS's large-GEMM
 * rates; the H100-family values were set against the DGX Cloud GPT-3 175B
 * and Nemotron-4 15B runs of validation/calibration.json (sim/MODEL.md,
 * "GEMM efficiency"); H200 and B200 scale those.  A measured calibration
 * of the machine at hand (a later `pplan calibrate`) is meant to replace
 * them.  The h100-96gb figures (the 500 W HBM2e part) are scaled from the
 * H100 SXM by its lower power limit: treat them as estimates.
 */
#include "gpu.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

static const struct gpu_spec gpus[] = {
	/* Older parts, for the recorded DGX-1 / DGX-2 / POWER8 topologies:
	 * V100 SXM2 has fp16 tensor cores only (125 TFLOP/s), P100 none. */
	{ "p100-sxm2", "NVIDIA Tesla P100-SXM2-16GB", { 0, 21.2, 0 },
	  15.9, 732, 80, 4, 56, { 0, 0.80, 0 }, 1.0, 0.85 },
	{ "v100-sxm2", "NVIDIA Tesla V100-SXM2-32GB", { 0, 125, 0 },
	  31.7, 900, 150, 6, 80, { 0, 0.70, 0 }, 1.5, 0.85 },
	{ "a100-40gb", "NVIDIA A100-SXM4-40GB", { 312, 312, 0 },
	  39.39, 1555, 300, 12, 108, { 0.80, 0.80, 0 }, 2.0, 0.85 },
	{ "a100-80gb", "NVIDIA A100-SXM4-80GB", { 312, 312, 0 },
	  79.35, 2039, 300, 12, 108, { 0.80, 0.80, 0 }, 2.0, 0.85 },
	{ "h100-sxm", "NVIDIA H100-SXM5-80GB", { 989, 989, 1979 },
	  79.19, 3350, 450, 18, 132, { 0.62, 0.62, 0.50 }, 6.0, 0.85 },
	{ "h100-96gb", "NVIDIA H100 96GB HBM2e (500 W)", { 835, 835, 1670 },
	  95.6, 2400, 450, 18, 132, { 0.62, 0.62, 0.50 }, 6.0, 0.85 },
	{ "h800", "NVIDIA H800-SXM5-80GB", { 989, 989, 1979 },
	  79.19, 3350, 200, 8, 132, { 0.62, 0.62, 0.50 }, 6.0, 0.85 },
	{ "h200", "NVIDIA H200-SXM-141GB", { 989, 989, 1979 },
	  140.4, 4800, 450, 18, 132, { 0.64, 0.64, 0.52 }, 6.0, 0.85 },
	{ "b200", "NVIDIA B200-SXM-180GB", { 2250, 2250, 4500 },
	  178.4, 8000, 900, 18, 148, { 0.62, 0.62, 0.50 }, 14.0, 0.85 },
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
	{ "H800-SXM5-80GB", "h800" },
	{ "H200-SXM-141GB", "h200" }, { "H200-141GB", "h200" },
	{ "B200-SXM-180GB", "b200" }, { "B200-180GB", "b200" },
};

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
