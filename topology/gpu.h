/*
 * gpu.h: GPU types as data.  Dense peak rates per precision, memory size
 * and bandwidth, NVLink bandwidth and the architecture.  Figures are the
 * vendors' data-sheet numbers for dense (non-sparse) math; sources are
 * listed in sim/MODEL.md.  How fast a GEMM runs on the part (its ceiling
 * and saturation) is not a data-sheet fact: it is a fitted constant of the
 * cost model per architecture (sim/cost_params.h).
 */
#ifndef PPLAN_GPU_H
#define PPLAN_GPU_H

#include <stddef.h>

enum precision {
	PREC_BF16 = 0,
	PREC_FP16,
	PREC_FP8,
	PREC_FP32,      /* plain fp32 (the CPU backend; GPUs list no tensor-core rate for it) */
	PREC_COUNT
};

const char *precision_name(enum precision prec);
/* Returns 0 and sets *out for "bf16", "fp16", "fp8"; -1 otherwise. */
int precision_parse(const char *s, enum precision *out);
/* precision_parse, and the names of the low-precision recipes as the
 * frameworks and their tables write them: FP8 current, delayed,
 * tensor-wise, block-wise and sub-channel scaling and MXFP8 ("fp8-cs",
 * "FP8-MX", "mxfp8", ...) are fp8, and so is NVFP4 ("nvfp4", "fp4",
 * "bf16_with_nvfp4_mixed"), its recipe (fp8_recipe_of) priced at the fp4
 * rate; *note says where a name is read as another (MXFP4 as NVFP4; NULL
 * for the others). */
int precision_parse_recipe(const char *s, enum precision *out, const char **note);

/* Transformer Engine's fp8 scaling recipe (Megatron-Core's --fp8-recipe):
 * the framework's own unless a name says which.  Delayed scaling (the
 * amax history), per-tensor current scaling ("tensorwise", FP8-CS),
 * blockwise (1 x 128 activations, 128 x 128 weights: DeepSeek-V3's,
 * "sub-channel"), MXFP8 (blocks of 32 with an E8M0 scale byte each,
 * Blackwell only).  NVFP4 (Megatron-Core's --fp4-format e2m1 --fp4-recipe
 * nvfp4: e2m1 values in blocks of 16 with an E4M3 scale each, every
 * linear's three GEMMs at the fp4 rate) is priced as a recipe of the fp8
 * class: the job's precision stays PREC_FP8 (sim/MODEL.md 3). */
enum fp8_recipe { FP8_FRAMEWORK = 0, FP8_DELAYED, FP8_TENSORWISE, FP8_BLOCKWISE, FP8_MXFP8,
		  FP8_NVFP4, FP8_RECIPE_COUNT };
/* Megatron-Core's names: "delayed", "tensorwise", "blockwise", "mxfp8";
 * "framework" for FP8_FRAMEWORK. */
const char *fp8_recipe_name(enum fp8_recipe r);
/* The --precision name of precision p with recipe r, which
 * precision_parse_recipe and fp8_recipe_of read back: "fp8-tensorwise",
 * "mxfp8", "nvfp4"; precision_name(p) where no recipe is named. */
const char *precision_recipe_name(enum precision p, enum fp8_recipe r);
struct gpu_spec;
/* 0 where gpu runs recipe r; else -1 and a sentence in why (MXFP8 needs
 * Blackwell: Transformer Engine's block-scaled MMA; NVFP4 a GPU with an
 * fp4 rate). */
int fp8_recipe_refused(const struct gpu_spec *gpu, enum fp8_recipe r, char *why, size_t len);
/* The recipe a precision name says ("fp8-cs" tensorwise, "FP8-MX" mxfp8,
 * "fp8 delayed", "fp8-blockwise", "fp8-sc" ...); FP8_FRAMEWORK for the plain
 * names and for a name that is not fp8 or is not one. */
enum fp8_recipe fp8_recipe_of(const char *s);
/* Bytes of one element stored in precision prec (fp8 1, bf16/fp16 2, fp32 4). */
int precision_bytes(enum precision prec);

/* The architecture: GPUs of one share the cost model's fitted GEMM and
 * attention efficiencies (sim/cost_params.h). */
enum gpu_arch { ARCH_CPU = 0, ARCH_PASCAL, ARCH_VOLTA, ARCH_AMPERE, ARCH_HOPPER,
		ARCH_BLACKWELL, ARCH_COUNT };
const char *gpu_arch_name(enum gpu_arch arch);

struct gpu_spec {
	char name[32];            /* pplan name, e.g. "h100-sxm" */
	char description[64];
	double peak_tflops[PREC_COUNT]; /* dense TFLOP/s; 0 = unsupported */
	double fp4_tflops;        /* dense fp4 (NVFP4) TFLOP/s; 0 = no fp4 tensor cores */
	double mem_gib;           /* memory a process can allocate, GiB */
	double hbm_gbps;          /* memory bandwidth, GB/s */
	double nvlink_gbps;       /* NVLink bandwidth per GPU, one direction, GB/s */
	int nvlink_links;         /* NVLink links per GPU */
	int sm_count;
	enum gpu_arch arch;
	/* A device measured where it runs (pplan exec's CPU probe) states its
	 * own GEMM curve and streaming efficiency; 0 = the cost model's fitted
	 * constants for its architecture (sim/cost_params.h). */
	double gemm_eff_max[PREC_COUNT];  /* fraction of peak_tflops large GEMMs reach */
	double gemm_half_gflop;           /* GEMM size at half of it */
	double hbm_eff;                   /* fraction of hbm_gbps streaming reaches */
};

/* The embedded table; *n receives its length. */
const struct gpu_spec *gpu_table(int *n);

/* Finds a GPU by pplan name or by a common spelling ("H100-SXM5-80GB",
 * "A100-SXM4-80GB", "a100", "h100"); case-insensitive.  NULL if unknown. */
const struct gpu_spec *gpu_find(const char *name);

/* gpu_find, then the names people and tools write: a leading "NVIDIA" or
 * "Tesla", spaces or underscores for hyphens, and words after the part
 * ("NVIDIA H100 80GB HBM3", "A100 40GB", "GB200 NVL72").  The table's
 * parts are SXM modules: a PCIe or NVL card ("A100-PCIE-40GB", "H100
 * NVL") is taken as its chip's SXM row with *approx set (may be NULL), for
 * the caller to say so.  NULL for a name it does not know. */
const struct gpu_spec *gpu_find_loose(const char *name, int *approx);

/* The row whose family ("H100" of h100-sxm) the device's own description
 * ("NVIDIA H100 80GB HBM3") names, the longest family first ("GB200"
 * before "B200"), else the first row of it; NULL if none. */
const struct gpu_spec *gpu_find_in_description(const char *device);

/* The GPU table's names, joined by sep ("a100-40gb, a100-80gb, ..."). */
void gpu_list_names(char *buf, size_t len, const char *sep);

#endif
