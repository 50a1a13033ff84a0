/*
 * framework.c: the frameworks table (framework.h) and its lookups.  Each
 * row's facts, with the reason for each, are tabulated in sim/MODEL.md
 * ("Frameworks"); the table here is the one the code uses.
 */
#include "framework.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "suggest.h"

#define P(p) FW_PREC_BIT(p)
#define ALL_PREC (P(PREC_BF16) | P(PREC_FP16) | P(PREC_FP8))
#define HALF_PREC (P(PREC_BF16) | P(PREC_FP16))
#define S(s) FW_SCHED_BIT(s)
#define MEGATRON_SCHEDS (S(SCHED_1F1B) | S(SCHED_INTERLEAVED))
/* Gradient bytes by run precision: bf16, fp16, fp8 (bf16 master). */
#define GRADS(bf16, fp16, fp8) { [PREC_BF16] = bf16, [PREC_FP16] = fp16, [PREC_FP8] = fp8 }
/* Megatron-Bridge as its performance recipes run it: NeMo 2.0's
 * behaviour (bf16 gradient reduction, fp8 parameters, uneven stages),
 * fp8 by per-tensor current scaling (the performance tables' FP8-CS) and
 * Megatron FSDP as zero 3. */
#define BRIDGE_BEHAVIOUR \
	.attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED, \
	.tp_overlap_on = ALL_PREC, \
	.overlap_grad_reduce = 1, .overlap_param_gather = 1, \
	.grad_bytes = GRADS(2, 2, 2), .fp8_weights = 1, .fp8_recipe = FP8_TENSORWISE, \
	.pipe = FW_PIPE_MEGATRON, \
	.sharding = FW_SHARD_MEGATRON, .partition = PART_FIRST_LAST, \
	.layout = { RECOMPUTE_NONE, 1, 1 }, \
	.can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1, \
	.can_cp = 1, .can_ep = 1, .precisions = ALL_PREC, \
	.schedules = MEGATRON_SCHEDS, .max_zero = 3, .zero_with_pp = 1, \
	.optim_offload = FW_OFFLOAD_MEGATRON, \
	.can_recompute_layers = 1, .can_offload_layers = 1, .can_moe_overlap = 1, \
	.can_precision_aware_opt = 1, .can_pp_layout = 1

static const struct framework table[] = {
	/* Megatron-LM as Narayanan et al. 2021 ran it: fused softmax over
	 * materialised scores, gradients all-reduced after the backward,
	 * no SP, ZeRO only through DeepSpeed (the paper's ZeRO-3 baseline),
	 * fp16 runs reduce fp16 gradients (accumulate-allreduce-grads-in-fp32
	 * is off unless bf16). */
	{ .name = "megatron-lm", .versions = "1.0 1.1 2.0 2.1 2.2 2.3 2.4 2.5 2.6",
	  .year_from = 2019, .year_to = 2021, .label = "Megatron-LM 2021 (v2)",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_DEEPSPEED, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_FULL, 0, 0 },
	  .precisions = HALF_PREC, .schedules = MEGATRON_SCHEDS,
	  .max_zero = 3, .zero_with_pp = 1 },
	/* v3 (2022): SP, selective recomputation and the distributed
	 * optimizer arrive, all off by default; still unfused attention and
	 * no overlap. */
	{ .name = "megatron-lm", .versions = "3.0 3.0.1 3.0.2",
	  .year_from = 2022, .year_to = 2022, .label = "Megatron-LM 2022 (v3)",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_NONE, 0, 0 }, .can_sp = 1,
	  .precisions = HALF_PREC, .schedules = MEGATRON_SCHEDS,
	  .max_zero = 1, .zero_with_pp = 1, .can_recompute_layers = 1 },
	/* 2023 (23.xx tags, core r0.2-r0.4): flash attention and
	 * overlapped gradient reduction in the published configurations,
	 * TE's TP overlap available but off, CP not yet. */
	{ .name = "megatron-lm", .versions = "23.04 23.05 23.06 23.07 23.08 23.09 23.10 23.11 23.12",
	  .year_from = 2023, .year_to = 2023, .label = "Megatron-LM 2023",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 0,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_NONE, 1, 1 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_ep = 1, .precisions = ALL_PREC, .schedules = MEGATRON_SCHEDS,
	  .max_zero = 1, .zero_with_pp = 1, .can_recompute_layers = 1 },
	/* Megatron-Core as its own performance configurations run it:
	 * Transformer Engine attention, --tp-comm-overlap (all precisions),
	 * --overlap-grad-reduce --overlap-param-gather,
	 * --use-distributed-optimizer, --sequence-parallel; bf16 forces fp32
	 * gradient accumulation and reduction. */
	{ .name = "megatron-core", .versions = "0.4 0.5 0.6 0.7 0.8 0.9",
	  .year_from = 2024, .year_to = 2024, .label = "Megatron-Core 0.4-0.9",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .tp_overlap_on = ALL_PREC,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_NONE, 1, 1 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_cp = 1, .can_ep = 1, .precisions = ALL_PREC,
	  .schedules = MEGATRON_SCHEDS, .max_zero = 1, .zero_with_pp = 1,
	  .can_recompute_layers = 1, .can_offload_layers = 1 },
	/* 0.10 on: --decoder-first/last-pipeline-num-layers, Megatron FSDP.
	 * 0.15-0.19 change none of this row's facts: bf16 still forces fp32
	 * gradient reduction (--grad-reduce-in-bf16 is opt-in), the overlap
	 * and distributed-optimizer flags are the same (sim/MODEL.md). */
	{ .name = "megatron-core",
	  .versions = "0.10 0.11 0.12 0.13 0.14 0.15 0.16 0.17 0.18 0.19",
	  .year_from = 2025, .year_to = 2030, .label = "Megatron-Core 0.10-0.19",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .tp_overlap_on = ALL_PREC,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_FIRST_LAST,
	  .layout = { RECOMPUTE_NONE, 1, 1 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_cp = 1, .can_ep = 1, .precisions = ALL_PREC,
	  .schedules = MEGATRON_SCHEDS, .max_zero = 3, .zero_with_pp = 1,
	  .optim_offload = FW_OFFLOAD_MEGATRON,
	  .can_recompute_layers = 1, .can_offload_layers = 1, .can_moe_overlap = 1,
	  .can_precision_aware_opt = 1, .can_pp_layout = 1 },
	/* NeMo 1.x (launcher configurations): Megatron-Core models, Apex
	 * distributed Adam with grad_sync_dtype bf16, ub_tp_comm_overlap,
	 * fp8_params in fp8 runs. */
	{ .name = "nemo", .versions = "23.05 23.08 23.11 24.01 24.03 24.05 24.07",
	  .year_from = 2023, .year_to = 2024, .label = "NeMo 1.x (23.05-24.07)",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .tp_overlap_on = ALL_PREC,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(2, 2, 2), .fp8_weights = 1, .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_NONE, 1, 1 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_cp = 1, .can_ep = 1, .precisions = ALL_PREC,
	  .schedules = MEGATRON_SCHEDS, .max_zero = 1, .zero_with_pp = 1,
	  .can_recompute_layers = 1, .can_offload_layers = 1 },
	/* NeMo 2.0 (24.09-25.07): Megatron-Core's distributed optimizer; the
	 * performance recipes reduce gradients in bf16
	 * (grad_reduce_in_fp32 off) and may split stages unevenly. */
	{ .name = "nemo", .versions = "24.09 24.11 24.12 25.02 25.04 25.07",
	  .year_from = 2025, .year_to = 2025, .label = "NeMo 2.0 (24.09-25.07)",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .tp_overlap_on = ALL_PREC,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(2, 2, 2), .fp8_weights = 1, .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_FIRST_LAST,
	  .layout = { RECOMPUTE_NONE, 1, 1 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_cp = 1, .can_ep = 1, .precisions = ALL_PREC,
	  .schedules = MEGATRON_SCHEDS, .max_zero = 1, .zero_with_pp = 1,
	  .can_recompute_layers = 1, .can_offload_layers = 1 },
	/* NeMo containers from 25.09 train through Megatron-Bridge: the
	 * bridge's row, under the container's version. */
	{ .name = "nemo", .versions = "25.09 25.11 26.02 26.04",
	  .year_from = 2025, .year_to = 2030, .label = "NeMo on Megatron-Bridge (25.09-26.04)",
	  .vocab_multiple = 128,
	  BRIDGE_BEHAVIOUR },
	/* Megatron-Bridge: NeMo 2.0's recipes as their own library, on
	 * Megatron-Core 0.14 and later (containers: bridge_containers). */
	{ .name = "megatron-bridge", .versions = "0.1 0.2 0.3 0.4 0.5 0.6",
	  .year_from = 2025, .year_to = 2030, .label = "Megatron-Bridge 0.1-0.6",
	  .vocab_multiple = 128,
	  BRIDGE_BEHAVIOUR },
	/* Megatron-DeepSpeed (BigScience's BLOOM): Megatron's model on
	 * DeepSpeed's PipelineEngine and ZeRO-1; bf16 runs keep fp32
	 * gradient accumulation (BF16_Optimizer) and reduce it; the
	 * embeddings count as pipeline units. */
	{ .name = "megatron-deepspeed", .versions = "",
	  .year_from = 2021, .year_to = 2030, .label = "Megatron-DeepSpeed",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .half_grad_copy = 1,
	  .pipe = FW_PIPE_DEEPSPEED, .sharding = FW_SHARD_DEEPSPEED,
	  .partition = PART_DEEPSPEED,
	  .layout = { RECOMPUTE_FULL, 0, 1 },
	  .can_flash = 1, .can_ep = 1, .precisions = HALF_PREC,
	  .schedules = S(SCHED_1F1B), .max_zero = 3, .zero_with_pp = 1,
	  .optim_offload = FW_OFFLOAD_DEEPSPEED },
	/* DeepSpeed on its own (a model of the user's, ZeRO). */
	{ .name = "deepspeed", .versions = "",
	  .year_from = 2020, .year_to = 2022, .label = "DeepSpeed (2020-2022)",
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .half_grad_copy = 1,
	  .pipe = FW_PIPE_DEEPSPEED, .sharding = FW_SHARD_DEEPSPEED,
	  .partition = PART_DEEPSPEED,
	  .layout = { RECOMPUTE_FULL, 0, 1 },
	  .can_flash = 1, .can_dp_overlap = 1, .can_ep = 1,
	  .precisions = HALF_PREC, .schedules = S(SCHED_1F1B),
	  .max_zero = 3, .zero_with_pp = 1,
	  .optim_offload = FW_OFFLOAD_DEEPSPEED },
	{ .name = "deepspeed", .versions = "",
	  .year_from = 2023, .year_to = 2030, .label = "DeepSpeed (2023-)",
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .half_grad_copy = 1,
	  .pipe = FW_PIPE_DEEPSPEED, .sharding = FW_SHARD_DEEPSPEED,
	  .partition = PART_DEEPSPEED,
	  .layout = { RECOMPUTE_FULL, 0, 1 },
	  .can_flash = 1, .can_dp_overlap = 1, .can_sp = 0, .can_ep = 1,
	  .precisions = HALF_PREC, .schedules = S(SCHED_1F1B),
	  .max_zero = 3, .zero_with_pp = 1,
	  .optim_offload = FW_OFFLOAD_DEEPSPEED },
	/* GPT-NeoX: Megatron layers on DeepSpeed's PipelineEngine, ZeRO-1
	 * with overlap_comm in its configurations, activation checkpointing
	 * on; flash attention from 2.0. */
	{ .name = "gpt-neox", .versions = "1.0",
	  .year_from = 2021, .year_to = 2022, .label = "GPT-NeoX 1.0",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .overlap_grad_reduce = 1,
	  .grad_bytes = GRADS(4, 2, 4), .half_grad_copy = 1,
	  .pipe = FW_PIPE_DEEPSPEED, .sharding = FW_SHARD_DEEPSPEED,
	  .partition = PART_DEEPSPEED,
	  .layout = { RECOMPUTE_FULL, 0, 1 },
	  .can_dp_overlap = 1, .precisions = HALF_PREC,
	  .schedules = S(SCHED_1F1B), .max_zero = 1, .zero_with_pp = 1 },
	{ .name = "gpt-neox", .versions = "2.0",
	  .year_from = 2023, .year_to = 2030, .label = "GPT-NeoX 2.0",
	  .vocab_multiple = 128,
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_NONE,
	  .overlap_grad_reduce = 1,
	  .grad_bytes = GRADS(4, 2, 4), .half_grad_copy = 1,
	  .pipe = FW_PIPE_DEEPSPEED, .sharding = FW_SHARD_DEEPSPEED,
	  .partition = PART_DEEPSPEED,
	  .layout = { RECOMPUTE_FULL, 0, 1 },
	  .can_flash = 1, .can_dp_overlap = 1, .can_ep = 1,
	  .precisions = HALF_PREC, .schedules = S(SCHED_1F1B),
	  .max_zero = 1, .zero_with_pp = 1 },
	/* torchtitan: FSDP2 (fp32 sharded master weights, reshard after
	 * forward, fp32 reduce-scatter), TP with SP, torch pipelining with
	 * any split, CP, float8; selective activation checkpointing by
	 * default; async TP off. */
	{ .name = "torchtitan", .versions = "0.1 0.2 0.3",
	  .year_from = 2024, .year_to = 2030, .label = "torchtitan",
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(4, 4, 4), .fp8_recipe = FP8_TENSORWISE, .pipe = FW_PIPE_TORCH,
	  .sharding = FW_SHARD_FSDP, .reshard_after_forward = 1,
	  .partition = PART_FIRST_LAST, .selective_ops = 1, .loss_bytes = 10,
	  .sdpa_attention = 1,
	  .layout = { RECOMPUTE_SELECTIVE, 1, 3 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_cp = 1, .can_ep = 1, .precisions = P(PREC_BF16) | P(PREC_FP8),
	  /* its zero-bubble schedules (InterleavedZeroBubble, ZBVZeroBubble)
	   * need two or more stages per rank: not pplan's one-stage ZB-H1 */
	  .schedules = S(SCHED_GPIPE) | S(SCHED_1F1B) | S(SCHED_INTERLEAVED),
	  .max_zero = 3, .zero_with_pp = 3, .ddp_alone = 1 },
	/* Composer (MosaicML's trainer, under LLM Foundry): PyTorch FSDP
	 * FULL_SHARD (fp32 master weights sharded, reshard after forward,
	 * backward prefetch; DEFAULT mixed precision reduces in fp32),
	 * flash attention (triton or FlashAttention-2), activation
	 * checkpointing on in its yamls; no tensor-parallel overlap, no
	 * pipeline. */
	{ .name = "composer", .versions = "",
	  .year_from = 2022, .year_to = 2030, .label = "Composer (PyTorch FSDP)",
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_NONE,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(4, 4, 4), .pipe = FW_PIPE_NONE,
	  .sharding = FW_SHARD_FSDP, .reshard_after_forward = 1,
	  .partition = PART_EVEN,
	  .layout = { RECOMPUTE_FULL, 0, 3 },
	  .can_flash = 1, .can_dp_overlap = 1,
	  .precisions = HALF_PREC | P(PREC_FP8),
	  .schedules = S(SCHED_1F1B), .max_zero = 3, .zero_with_pp = 3 },
	/* metaseq (OPT-175B, 2022): Megatron TP inside FSDP full sharding,
	 * no pipeline, activation checkpointing, fp16. */
	{ .name = "metaseq", .versions = "",
	  .year_from = 2021, .year_to = 2023, .label = "metaseq",
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_NONE,
	  .sharding = FW_SHARD_FSDP, .reshard_after_forward = 1,
	  .partition = PART_EVEN,
	  .layout = { RECOMPUTE_FULL, 0, 3 },
	  .can_dp_overlap = 1, .precisions = HALF_PREC,
	  .schedules = S(SCHED_1F1B), .max_zero = 3, .zero_with_pp = 3 },
	/* Unknown software: what the field did in that year. */
	{ .name = "other", .versions = "",
	  .year_from = 2015, .year_to = 2021, .label = "other (2021 practice)",
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_DEEPSPEED, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_FULL, 0, 0 },
	  .can_flash = 1, .can_dp_overlap = 1, .can_ep = 1,
	  .precisions = HALF_PREC, .schedules = MEGATRON_SCHEDS,
	  .max_zero = 3, .zero_with_pp = 1 },
	{ .name = "other", .versions = "",
	  .year_from = 2022, .year_to = 2022, .label = "other (2022 practice)",
	  .attention = FW_ATTN_UNFUSED, .tp_overlap = FW_TPO_NONE,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_SELECTIVE, 1, 1 },
	  .can_flash = 1, .can_dp_overlap = 1, .can_sp = 1, .can_ep = 1,
	  .precisions = HALF_PREC, .schedules = MEGATRON_SCHEDS,
	  .max_zero = 3, .zero_with_pp = 1, .can_recompute_layers = 1 },
	{ .name = "other", .versions = "",
	  .year_from = 2023, .year_to = 2030, .label = "other (2023- practice)",
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_PIPELINED,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = GRADS(4, 2, 4), .pipe = FW_PIPE_MEGATRON,
	  .sharding = FW_SHARD_MEGATRON, .partition = PART_FIRST_LAST,
	  .layout = { RECOMPUTE_NONE, 1, 1 },
	  .can_flash = 1, .can_tp_overlap = 1, .can_dp_overlap = 1, .can_sp = 1,
	  .can_cp = 1, .can_ep = 1, .precisions = ALL_PREC,
	  .schedules = S(SCHED_GPIPE) | MEGATRON_SCHEDS | S(SCHED_ZB_H1) | S(SCHED_DUALPIPE),
	  .max_zero = 3, .zero_with_pp = 1, .can_recompute_layers = 1,
	  .can_offload_layers = 1 },
	/* pplan exec itself, the executor (exec/): its attention is the fused
	 * kernel on GPUs and with ring attention, else the three-step one (the
	 * job resolver says which, sim/job.c); fp32 gradients reduced in
	 * buckets during the backward; no TP communication overlap; even
	 * stages; ZeRO up to the distributed optimizer; an fp32 master shard
	 * beside the weights in every precision, fp32 too (exec/params.c);
	 * and a measuring run's batch: 4 microbatches per pipeline stage and
	 * replica. */
	{ .name = "pplan-exec", .versions = "",
	  .year_from = 2025, .year_to = 2030, .label = "pplan exec (the executor)",
	  .attention = FW_ATTN_FLASH, .tp_overlap = FW_TPO_NONE,
	  .overlap_grad_reduce = 1, .overlap_param_gather = 1,
	  .grad_bytes = { [PREC_FP32] = 4, [PREC_BF16] = 4, [PREC_FP16] = 4, [PREC_FP8] = 4 },
	  .fp32_master = 1, .bare_step = 1, .cp_joint_grads = 1,
	  .pipe = FW_PIPE_MEGATRON, .sharding = FW_SHARD_MEGATRON, .partition = PART_EVEN,
	  .layout = { RECOMPUTE_NONE, 1, 1 }, .batch_microbatches = 4,
	  .can_flash = 1, .can_dp_overlap = 1, .can_sp = 1, .can_cp = 1,
	  .precisions = P(PREC_BF16),
	  .schedules = S(SCHED_GPIPE) | MEGATRON_SCHEDS | S(SCHED_ZB_H1),
	  .max_zero = 1, .zero_with_pp = 1 },
};

#define N_ROWS ((int)(sizeof table / sizeof table[0]))

const struct framework *framework_table(int *n)
{
	if (n)
		*n = N_ROWS;
	return table;
}

const struct framework *framework_default(void)
{
	const struct framework *fw = NULL;
	framework_find("megatron-core", NULL, 0, &fw, NULL);
	return fw;
}

const struct framework *framework_executor(void)
{
	const struct framework *fw = NULL;
	framework_find("pplan-exec", NULL, 0, &fw, NULL);
	return fw;
}

double fw_fp8_bytes(const struct fw_behaviour *b)
{
	return b->fp8_bytes > 0 ? b->fp8_bytes : 1.0;
}

void fw_switches_none(struct fw_switches *s)
{
	s->tp_overlap = -1;
	s->flash = -1;
	s->grad_bytes = 0;
	s->overlap_grad_reduce = -1;
	s->overlap_param_gather = -1;
	s->moe_dispatcher = -1;
	s->moe_a2a_overlap = s->moe_shared_overlap = -1;
	s->precision_aware_opt = -1;
	s->fp8_recipe = FP8_FRAMEWORK;
}

int fw_moe_dispatcher_parse(const char *s)
{
	if (!strcmp(s, "alltoall"))
		return 0;
	if (!strcmp(s, "flex") || !strcmp(s, "deepep") || !strcmp(s, "hybridep"))
		return 1;
	if (!strcmp(s, "allgather"))
		return 2;
	return -1;
}

const char *fw_moe_dispatcher_name(int d)
{
	return d == 1 ? "flex" : d == 2 ? "allgather" : "alltoall";
}

int framework_known(const char *name)
{
	for (int i = 0; name && i < N_ROWS; i++)
		if (strcasecmp(table[i].name, name) == 0)
			return 1;
	return 0;
}

const char *framework_canonical(const char *name)
{
	static const struct {
		const char *key, *name;
	} map[] = {
		{ "nemo", "nemo" }, { "nemoframework", "nemo" }, { "nvidianemo", "nemo" },
		{ "nvidianemoframework", "nemo" }, { "nemo2", "nemo" }, { "nemo20", "nemo" },
		{ "nemomegatron", "nemo" },
		{ "megatronbridge", "megatron-bridge" }, { "nvidiamegatronbridge", "megatron-bridge" },
		{ "nemomegatronbridge", "megatron-bridge" }, { "mbridge", "megatron-bridge" },
		{ "megatroncore", "megatron-core" }, { "mcore", "megatron-core" },
		{ "nvidiamegatroncore", "megatron-core" },
		{ "megatronlm", "megatron-lm" }, { "nvidiamegatronlm", "megatron-lm" },
		{ "megatron", "megatron-lm" },
		{ "megatrondeepspeed", "megatron-deepspeed" }, { "microsoftdeepspeed", "deepspeed" },
		{ "deepspeed", "deepspeed" }, { "gptneox", "gpt-neox" }, { "torchtitan", "torchtitan" },
		{ "pytorchtorchtitan", "torchtitan" }, { "composer", "composer" },
		{ "llmfoundry", "composer" }, { "mosaicmlcomposer", "composer" }, { "metaseq", "metaseq" },
	};
	char k[48];
	if (!name)
		return NULL;
	for (int i = 0; i < N_ROWS; i++)
		if (strcasecmp(table[i].name, name) == 0)
			return table[i].name;
	if (!name_squeeze(name, NULL, k, sizeof k))
		return NULL;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(k, map[i].key))
			return map[i].name;
	return NULL;
}

void framework_names(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < N_ROWS; i++) {
		if (i > 0 && strcmp(table[i].name, table[i - 1].name) == 0)
			continue;
		o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s",
				      o ? ", " : "", table[i].name);
	}
}

/* ---- versions as users write them ----------------------------------------- */

/* A version: its numbers ("0.14.1": 0, 14, 1) and whatever follows them
 * ("rc2", ".dev0", "-py3"), which no lookup reads. */
#define VERSION_PARTS 6
struct version {
	int n;
	long part[VERSION_PARTS];
};

/* Parses "[v]N[.N]...[suffix]"; -1 when s is not a version at all. A
 * suffix starts with a letter or one of ".-+_" and holds letters, digits
 * and those only. */
static int version_parse(const char *s, struct version *v)
{
	v->n = 0;
	if (*s == 'v' || *s == 'V')
		s++;
	while (isdigit((unsigned char)*s) && v->n < VERSION_PARTS) {
		long x = 0;
		for (; isdigit((unsigned char)*s); s++) /* no overflow: stops growing past 10^6 */
			x = x < 1000000 ? x * 10 + (*s - '0') : x;
		v->part[v->n++] = x;
		if (s[0] != '.' || !isdigit((unsigned char)s[1]))
			break;
		s++;
	}
	if (v->n == 0 || isdigit((unsigned char)*s))
		return -1;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(".-+_", *s))
			return -1;
	return 0;
}

/* Numerically, part by part, missing parts 0 (0.9 < 0.10, 2 == 2.0). */
static int version_cmp(const struct version *a, const struct version *b)
{
	for (int i = 0; i < VERSION_PARTS; i++) {
		long x = i < a->n ? a->part[i] : 0, y = i < b->n ? b->part[i] : 0;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* Does v begin with every number of listed ("0.14.1" and "0.13.0rc1"
 * begin with 0.14 and 0.13)? */
static int version_extends(const struct version *v, const struct version *listed)
{
	for (int i = 0; i < listed->n; i++)
		if ((i < v->n ? v->part[i] : 0) != listed->part[i])
			return 0;
	return 1;
}

/* A version some list names, and what it stands for: a row, or for a
 * container the release it ships. */
struct candidate {
	char text[16];
	struct version v;
	const struct framework *row;
	const char *release;
};
#define MAX_CANDIDATES 64

/* How a version met the listed ones. */
enum fit { FIT_LISTED, FIT_READ_AS, FIT_NEWER, FIT_BETWEEN, FIT_OLDER };

/* The candidate for `given` (parsed as v): the one spelled the same,
 * else the longest one v extends, else the nearest earlier one, else the
 * oldest.  n > 0. */
static enum fit candidate_pick(const struct candidate *c, int n, const char *given,
			       const struct version *v, int *at)
{
	int extends = -1, earlier = -1, oldest = 0, newest = 0;
	if (*given == 'v' || *given == 'V')
		given++;
	for (int i = 0; i < n; i++) {
		if (strcmp(c[i].text, given) == 0) {
			*at = i;
			return FIT_LISTED;
		}
		if (version_extends(v, &c[i].v) && (extends < 0 || c[i].v.n > c[extends].v.n))
			extends = i;
		if (version_cmp(&c[i].v, v) < 0 &&
		    (earlier < 0 || version_cmp(&c[i].v, &c[earlier].v) > 0))
			earlier = i;
		if (version_cmp(&c[i].v, &c[oldest].v) < 0)
			oldest = i;
		if (version_cmp(&c[i].v, &c[newest].v) > 0)
			newest = i;
	}
	if (extends >= 0) {
		*at = extends;
		return FIT_READ_AS;
	}
	if (earlier < 0) {
		*at = oldest;
		return FIT_OLDER;
	}
	*at = earlier;
	return earlier == newest ? FIT_NEWER : FIT_BETWEEN;
}

/* Appends one version token of a list; 0 when it is no version. */
static int candidate_add(struct candidate *c, int *n, const char *tok, size_t len)
{
	assert(*n < MAX_CANDIDATES && len < sizeof c->text);
	memcpy(c[*n].text, tok, len);
	c[*n].text[len] = '\0';
	if (version_parse(c[*n].text, &c[*n].v) != 0)
		return 0;
	(*n)++;
	return 1;
}

/* Every version the rows of `name` list, in table order. */
static int row_candidates(const char *name, struct candidate *c)
{
	int n = 0;
	for (int i = 0; i < N_ROWS; i++) {
		if (strcasecmp(table[i].name, name) != 0)
			continue;
		for (const char *p = table[i].versions; *p;) {
			size_t k = strcspn(p, " ");
			if (k && candidate_add(c, &n, p, k))
				c[n - 1].row = &table[i];
			p += k;
			p += strspn(p, " ");
		}
	}
	return n;
}

/* NGC NeMo containers and the Megatron-Bridge release each ships, from
 * Megatron-Bridge's docs/releases/software-versions.md (NeMo Framework
 * 25.09: 0.1.0rc3, 25.11: 0.2.0, 26.02: 0.3.0, 26.04: 0.4.0).  26.08
 * with 0.6.1 is what users' scripts report, not NVIDIA's table; no
 * container is confirmed for 0.5. */
static const struct { const char *name, *container, *release; } containers[] = {
	{ "megatron-bridge", "25.09", "0.1" },
	{ "megatron-bridge", "25.11", "0.2" },
	{ "megatron-bridge", "26.02", "0.3" },
	{ "megatron-bridge", "26.04", "0.4" },
	{ "megatron-bridge", "26.08", "0.6" },
};
#define N_CONTAINERS ((int)(sizeof containers / sizeof containers[0]))

/* Release numbers below this are releases, at or above YY.MM containers. */
#define CONTAINER_MAJOR 20

static int container_candidates(const char *name, struct candidate *c)
{
	int n = 0;
	for (int i = 0; i < N_CONTAINERS; i++)
		if (strcasecmp(containers[i].name, name) == 0 &&
		    candidate_add(c, &n, containers[i].container, strlen(containers[i].container)))
			c[n - 1].release = containers[i].release;
	return n;
}

static void known_versions(const char *name, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < N_ROWS; i++)
		if (strcasecmp(table[i].name, name) == 0 && table[i].versions[0])
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s",
					      o ? " " : "", table[i].versions);
	for (int i = 0; i < N_CONTAINERS; i++)
		if (strcasecmp(containers[i].name, name) == 0)
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s",
					      i == 0 ? "; NeMo containers " : " ",
					      containers[i].container);
}

/* The framework as people name it: the label's first word. */
static void display_name(const struct framework *f, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(f->label, " "), f->label);
}

/* One sentence on how `given` met the versions of one kind ("row" and
 * "versions", "NeMo container" and "NeMo containers"); `as` is what it
 * is priced as. */
static void note_fit(char *note, size_t len, enum fit fit, const struct framework *f,
		     const char *given, const char *one, const char *all, const char *as)
{
	char who[32];
	display_name(f, who, sizeof who);
	switch (fit) {
	case FIT_LISTED:
		note[0] = '\0';
		break;
	case FIT_READ_AS:
		snprintf(note, len, "%s %s read as %s", who, given, as);
		break;
	case FIT_NEWER:
		snprintf(note, len, "%s %s is newer than any %s pplan knows: priced as %s (%s)",
			 who, given, one, as, f->label);
		break;
	case FIT_BETWEEN:
		snprintf(note, len, "%s %s is between the %s pplan knows: priced as %s, the nearest earlier (%s)",
			 who, given, all, as, f->label);
		break;
	case FIT_OLDER:
		snprintf(note, len, "%s %s is older than any %s pplan knows: priced as %s (%s)",
			 who, given, one, as, f->label);
		break;
	}
}

/* A NeMo container's version of `name`: the release it ships, then that
 * release's row. */
static void resolve_container(const char *name, const char *version, const struct version *v,
			      const struct framework **out, char *note, size_t note_len)
{
	struct candidate cont[MAX_CANDIDATES], rows[MAX_CANDIDATES];
	int nc = container_candidates(name, cont), nr = row_candidates(name, rows);
	int at, row;
	struct version rv;
	enum fit fit = candidate_pick(cont, nc, version, v, &at);
	char as[64];

	version_parse(cont[at].release, &rv);
	candidate_pick(rows, nr, cont[at].release, &rv, &row);
	*out = rows[row].row;
	snprintf(as, sizeof as, "the NeMo %s container's %s", cont[at].text, cont[at].release);
	if (fit == FIT_LISTED)
		snprintf(note, note_len, "Megatron-Bridge %s is the NeMo %s container: priced as %s (%s)",
			 version, cont[at].text, cont[at].release, (*out)->label);
	else
		note_fit(note, note_len, fit, *out, version, "NeMo container", "NeMo containers", as);
}

enum pplan_status framework_lookup(const char *name, const char *version, int year,
				   const struct framework **out, char *note,
				   size_t note_len, struct perr *e)
{
	struct candidate c[MAX_CANDIDATES];
	struct version v;
	char list[512];
	int n, at;
	enum fit fit;

	*out = NULL;
	if (note_len)
		note[0] = '\0';
	if (!version || !framework_known(name))
		return framework_find(name, NULL, year, out, e);
	/* Megatron-LM's release tags since 2024 name the Megatron-Core they
	 * ship: core_r0.13.0, core_v0.14.0 */
	if ((!strcasecmp(name, "megatron-lm") || !strcasecmp(name, "megatron-core")) &&
	    !strncasecmp(version, "core_", 5) &&
	    (version[5] == 'r' || version[5] == 'R' || version[5] == 'v' || version[5] == 'V') &&
	    isdigit((unsigned char)version[6])) {
		enum pplan_status st = framework_lookup("megatron-core", version + 6, year, out,
							 note, note_len, e);
		if (st == PPLAN_OK && note_len) {
			char was[256];
			snprintf(was, sizeof was, "%s", note);
			snprintf(note, note_len, "%s %s is Megatron-Core %s%s%s", name, version,
				 version + 6, was[0] ? "; " : "", was);
		}
		return st;
	}
	known_versions(name, list, sizeof list);
	if (version_parse(version, &v) != 0)
		return perr_set(e, PPLAN_EINPUT, "framework %s: '%s' is not a version number (known: %s)",
				name, version, list[0] ? list : "none; give its year");
	n = row_candidates(name, c);
	if (n == 0) {
		framework_find(name, NULL, year, out, NULL);
		snprintf(note, note_len, "%s lists no versions: %s ignored, priced by %s (%s)",
			 name, version, year > 0 ? "the year" : "its newest row", (*out)->label);
		return PPLAN_OK;
	}
	if (v.part[0] >= CONTAINER_MAJOR && container_candidates(name, c) > 0) {
		resolve_container(name, version, &v, out, note, note_len);
		return PPLAN_OK;
	}
	fit = candidate_pick(c, n, version, &v, &at);
	*out = c[at].row;
	note_fit(note, note_len, fit, *out, version, "row", "versions", c[at].text);
	return PPLAN_OK;
}

static int year_distance(const struct framework *f, int year)
{
	if (year < f->year_from)
		return f->year_from - year;
	return year > f->year_to ? year - f->year_to : 0;
}

/* The row of `name` by year (year <= 0: the newest; rows of a name are in
 * year order, a year outside every row takes the nearest). */
static const struct framework *row_by_year(const char *name, int year)
{
	const struct framework *best = NULL;
	for (int i = 0; i < N_ROWS; i++) {
		const struct framework *f = &table[i];
		if (strcasecmp(f->name, name) != 0)
			continue;
		if (year <= 0 || !best || year_distance(f, year) < year_distance(best, year))
			best = f;
	}
	return best;
}

enum pplan_status framework_find(const char *name, const char *version,
				 int year, const struct framework **out,
				 struct perr *e)
{
	char list[512], note[256];
	enum pplan_status st;

	*out = NULL;
	if (!framework_known(name)) {
		framework_names(list, sizeof list);
		return perr_set(e, PPLAN_EINPUT,
				"unknown framework '%s' (known: %s)",
				name ? name : "", list);
	}
	if (!version || !version[0]) {
		*out = row_by_year(name, year);
		return PPLAN_OK;
	}
	st = framework_lookup(name, version, year, out, note, sizeof note, e);
	if (st != PPLAN_OK || !note[0])
		return st;
	/* framework_find takes only what a row lists */
	*out = NULL;
	known_versions(name, list, sizeof list);
	if (!list[0])
		return perr_set(e, PPLAN_EINPUT,
				"framework %s has no versions to choose from; give its year instead of version '%s'",
				name, version);
	return perr_set(e, PPLAN_EINPUT, "framework %s has no version '%s' (known: %s)",
			name, version, list);
}

enum pplan_status framework_parse_note(const char *arg, const struct framework **out,
				       char *note, size_t note_len, struct perr *e)
{
	char name[64];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);

	if (note_len)
		note[0] = '\0';
	if (n == 0 || n >= sizeof name || (colon && !colon[1]))
		return perr_set(e, PPLAN_EINPUT,
				"framework must be NAME or NAME:VERSION, got '%s'",
				arg);
	memcpy(name, arg, n);
	name[n] = '\0';
	if (!framework_known(name) && framework_canonical(name)) /* "mcore", "NeMo Framework" */
		return framework_lookup(framework_canonical(name), colon ? colon + 1 : NULL, 0, out,
					note, note_len, e);
	if (!framework_known(name))
		return framework_find(name, NULL, 0, out, e);
	return framework_lookup(name, colon ? colon + 1 : NULL, 0, out, note, note_len, e);
}

enum pplan_status framework_parse(const char *arg,
				  const struct framework **out, struct perr *e)
{
	char note[256];
	return framework_parse_note(arg, out, note, sizeof note, e);
}

enum pplan_status framework_resolve(const struct framework *fw,
				    enum precision p,
				    const struct fw_switches *s,
				    struct fw_behaviour *b, struct perr *e)
{
	b->attention = fw->attention;
	b->tp_overlap = (fw->tp_overlap_on & FW_PREC_BIT(p)) ? fw->tp_overlap
							     : FW_TPO_NONE;
	b->overlap_grad_reduce = fw->overlap_grad_reduce;
	b->overlap_param_gather = fw->overlap_param_gather;
	b->grad_bytes = fw->grad_bytes[p];
	b->half_grad_copy = fw->half_grad_copy && b->grad_bytes == 4 &&
			    p != PREC_FP16;
	b->fp8_recipe = p != PREC_FP8 ? FP8_FRAMEWORK
			: s && s->fp8_recipe != FP8_FRAMEWORK ? s->fp8_recipe
			: fw->fp8_recipe != FP8_FRAMEWORK ? fw->fp8_recipe : FP8_DELAYED;
	/* NVIDIA's blockwise and NVFP4 recipes keep bf16 parameters
	 * (fp8_param_gather off, Megatron-Bridge's bf16_with_nvfp4_mixed);
	 * MXFP8 adds a scale byte to every 32 elements, NVFP4 keeps half a
	 * byte an element and an E4M3 scale byte for every 16. */
	b->fp8_weights = fw->fp8_weights && p == PREC_FP8 && b->fp8_recipe != FP8_BLOCKWISE &&
			 b->fp8_recipe != FP8_NVFP4;
	b->fp8_bytes = b->fp8_recipe == FP8_MXFP8   ? 1.0 + 1.0 / 32.0
		       : b->fp8_recipe == FP8_NVFP4 ? 0.5 + 1.0 / 16.0
						    : 1.0;
	b->fp32_master = fw->fp32_master;
	b->bare_step = fw->bare_step;
	b->cp_joint_grads = fw->cp_joint_grads;
	b->pipe = fw->pipe;
	b->sharding = fw->sharding;
	b->reshard_after_forward = fw->reshard_after_forward;
	b->partition = fw->partition;
	b->selective_ops = fw->selective_ops;
	/* Megatron's vocab-parallel cross-entropy: the bf16 logits and one
	 * fp32 copy that the softmax and its gradient overwrite in place.
	 * torchtitan: cross_entropy(logits.float()) keeps the bf16 logits,
	 * the fp32 copy and the log-softmax it saves for the backward. */
	b->loss_bytes = fw->loss_bytes > 0 ? fw->loss_bytes : 6.0;
	b->moe_flex = b->moe_allgather = 0; /* every framework's default: the all-to-all */
	b->moe_a2a_overlap = b->moe_shared_overlap = 0; /* off by default everywhere */
	b->bf16_moments = 0;
	if (!s)
		return PPLAN_OK;
	if (s->moe_dispatcher >= 0)
		b->moe_flex = s->moe_dispatcher == 1, b->moe_allgather = s->moe_dispatcher == 2;
	if ((s->moe_a2a_overlap > 0 || s->moe_shared_overlap > 0) && !fw->can_moe_overlap)
		return perr_set(e, PPLAN_EINPUT,
				"%s has no MoE communication overlap (Megatron-Core 0.14 and later, NeMo on Megatron-Bridge and Megatron-Bridge have it)",
				fw->label);
	if (s->precision_aware_opt > 0 && !fw->can_precision_aware_opt)
		return perr_set(e, PPLAN_EINPUT,
				"%s has no precision-aware optimizer (Megatron-Core 0.11 and later, NeMo on Megatron-Bridge and Megatron-Bridge have it)",
				fw->label);
	if (s->precision_aware_opt >= 0)
		b->bf16_moments = s->precision_aware_opt;
	if (s->moe_a2a_overlap >= 0)
		b->moe_a2a_overlap = s->moe_a2a_overlap;
	if (s->moe_shared_overlap >= 0)
		b->moe_shared_overlap = s->moe_shared_overlap;
	if (s->tp_overlap >= 0) {
		if (s->tp_overlap != FW_TPO_NONE && !fw->can_tp_overlap)
			return perr_set(e, PPLAN_EINPUT,
					"%s has no TP communication overlap",
					fw->label);
		b->tp_overlap = (enum fw_tp_overlap)s->tp_overlap;
	}
	if (s->flash >= 0) {
		if (s->flash && !fw->can_flash)
			return perr_set(e, PPLAN_EINPUT,
					"%s has no flash attention", fw->label);
		b->attention = s->flash ? FW_ATTN_FLASH : FW_ATTN_UNFUSED;
	}
	if (s->grad_bytes) {
		b->grad_bytes = s->grad_bytes;
		b->half_grad_copy = b->half_grad_copy && s->grad_bytes == 4;
	}
	if (s->overlap_grad_reduce >= 0) {
		if (s->overlap_grad_reduce && !fw->can_dp_overlap)
			return perr_set(e, PPLAN_EINPUT,
					"%s cannot overlap the gradient reduction with the backward",
					fw->label);
		b->overlap_grad_reduce = s->overlap_grad_reduce;
	}
	if (s->overlap_param_gather >= 0) {
		if (s->overlap_param_gather && !fw->can_dp_overlap)
			return perr_set(e, PPLAN_EINPUT,
					"%s cannot overlap the parameter all-gather with the forward",
					fw->label);
		b->overlap_param_gather = s->overlap_param_gather;
	}
	return PPLAN_OK;
}

const char *fw_attention_name(enum fw_attention a)
{
	return a == FW_ATTN_FLASH ? "flash" : "unfused";
}

const char *fw_tp_overlap_name(enum fw_tp_overlap t)
{
	switch (t) {
	case FW_TPO_NONE: return "none";
	case FW_TPO_BULK: return "bulk";
	case FW_TPO_PIPELINED: return "pipelined";
	}
	return "?";
}

const char *fw_pipe_name(enum fw_pipe p)
{
	switch (p) {
	case FW_PIPE_MEGATRON: return "megatron";
	case FW_PIPE_DEEPSPEED: return "deepspeed";
	case FW_PIPE_TORCH: return "torch";
	case FW_PIPE_NONE: return "none";
	}
	return "?";
}

const char *fw_sharding_name(enum fw_sharding s)
{
	switch (s) {
	case FW_SHARD_MEGATRON: return "megatron distributed optimizer";
	case FW_SHARD_DEEPSPEED: return "deepspeed zero";
	case FW_SHARD_FSDP: return "fsdp";
	}
	return "?";
}

const char *fw_grad_dtype_name(int bytes, enum precision p)
{
	if (bytes >= 4)
		return "fp32";
	return p == PREC_FP16 ? "fp16" : "bf16";
}

void framework_describe(const struct fw_behaviour *b, char *buf, size_t len)
{
	char fp8[64] = "";
	int block = b->fp8_recipe == FP8_MXFP8 || b->fp8_recipe == FP8_NVFP4;
	if (b->fp8_recipe != FP8_FRAMEWORK)
		snprintf(fp8, sizeof fp8, ", %s%s%s%s", block ? "" : "fp8 ",
			 b->fp8_recipe == FP8_MXFP8   ? "MXFP8"
			 : b->fp8_recipe == FP8_NVFP4 ? "NVFP4 (fp4 GEMMs)"
						      : fp8_recipe_name(b->fp8_recipe),
			 block ? "" : " scaling", b->fp8_weights ? ", fp8 weights" : "");
	snprintf(buf, len,
		 "%s attention, TP overlap %s, DP reduction %s, parameter gather %s, "
		 "%d-byte gradients%s, %s%s, zero = %s%s%s%s%s%s",
		 fw_attention_name(b->attention), fw_tp_overlap_name(b->tp_overlap),
		 b->overlap_grad_reduce ? "overlapped" : "after the backward",
		 b->overlap_param_gather ? "overlapped" : "not overlapped",
		 b->grad_bytes, fp8,
		 b->pipe == FW_PIPE_NONE ? "no pipeline parallelism" : fw_pipe_name(b->pipe),
		 b->pipe == FW_PIPE_NONE ? "" : " pipeline", fw_sharding_name(b->sharding),
		 b->selective_ops ? ", selective = op-level checkpointing" : "",
		 b->moe_flex ? ", MoE flex dispatcher (DeepEP)"
		 : b->moe_allgather ? ", MoE allgather dispatcher" : "",
		 b->moe_a2a_overlap ? ", MoE all-to-alls under the other microbatch (1F1B A2A overlap)" : "",
		 b->moe_shared_overlap ? ", shared experts under the dispatch" : "",
		 b->bf16_moments ? ", bf16 Adam moments (precision-aware optimizer)" : "");
}

void framework_fill_layout(const struct framework *fw, unsigned given, struct layout *l)
{
	if (!(given & LK_SP))
		l->sp = fw->layout.sp && l->tp > 1;
	if (!(given & LK_ZERO))
		l->zero = l->dp * l->cp > 1 ? fw->layout.zero : 0;
	if (!(given & LK_RECOMPUTE))
		l->recompute = (given & LK_RECOMPUTE_MODULES) ? RECOMPUTE_SELECTIVE
			       : (given & LK_RECOMPUTE_LAYERS) ? RECOMPUTE_FULL
			       : (given & LK_OFFLOAD_LAYERS)   ? RECOMPUTE_NONE
							       : fw->layout.recompute;
}

enum reject framework_check_layout(const struct framework *fw, enum precision p,
				   const struct layout *l)
{
	/* fp32 is every framework's default without a mixed-precision flag
	 * (and what pplan exec's CPU backend runs). */
	if (p != PREC_FP32 && !(fw->precisions & FW_PREC_BIT(p)))
		return REJECT_FW_PRECISION;
	if (l->sp && !fw->can_sp)
		return REJECT_FW_SP;
	if (l->cp > 1 && !fw->can_cp)
		return REJECT_FW_CP;
	if (l->ep > 1 && !fw->can_ep)
		return REJECT_FW_EP;
	if (l->zero > fw->max_zero)
		return REJECT_FW_ZERO;
	/* PyTorch FSDP shards gradients with the optimizer states
	 * (SHARD_GRAD_OP, FULL_SHARD): it has no optimizer-only ZeRO-1. */
	if (l->zero == 1 && fw->sharding == FW_SHARD_FSDP && l->dp * l->cp > 1)
		return REJECT_FW_ZERO;
	if (fw->ddp_alone && l->zero == 0 && l->dp > 1 &&
	    (l->tp > 1 || l->pp > 1 || l->cp > 1 || l->ep > 1))
		return REJECT_FW_ZERO;
	if (l->pp > 1 && fw->pipe == FW_PIPE_NONE)
		return REJECT_FW_PIPELINE;
	if (l->pp > 1 && l->zero > fw->zero_with_pp)
		return REJECT_ZERO_PP;
	if (l->pp > 1 && !(fw->schedules & FW_SCHED_BIT(l->schedule)))
		return REJECT_FW_SCHEDULE;
	if ((l->pp_first > 0 || l->pp_last > 0 || l->pp_embed || l->pp_loss) &&
	    fw->partition != PART_FIRST_LAST)
		return REJECT_FW_UNEVEN;
	if (l->pp_table && !fw->can_pp_layout)
		return REJECT_FW_PP_LAYOUT;
	/* Megatron-Core's HybridDeviceOptimizer wraps the distributed
	 * optimizer (zero 1), not Megatron FSDP. */
	if (l->optimizer_offload && (fw->optim_offload == FW_OFFLOAD_NONE ||
				     (fw->optim_offload == FW_OFFLOAD_MEGATRON && l->zero != 1)))
		return REJECT_FW_OFFLOAD;
	if ((l->recompute_layers > 0 && !fw->can_recompute_layers) ||
	    (l->offload_layers > 0 && !fw->can_offload_layers))
		return REJECT_FW_LAYERS;
	return REJECT_NONE;
}
