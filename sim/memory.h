/*
 * memory.h: per-GPU memory of a layout, stage by stage.  Model states
 * (weights, gradients, optimizer) per sharding mode, activations after
 * Korthikanti et al. 2022 generalised for GQA and gated MLPs, the
 * microbatches in flight on each stage under its schedule, and what a
 * real run adds (CUDA context, NCCL buffers, the caching allocator).
 * Formulas: sim/MODEL.md "Memory".
 */
#ifndef PPLAN_MEMORY_H
#define PPLAN_MEMORY_H

#include "train_opts.h"

struct mem_breakdown {        /* bytes on the most-loaded GPU */
	double weights, gradients, optimizer, activations, other, total;
	/* In host memory, not in total: the offloaded optimizer states (and
	 * under ZeRO-Offload the gradient shard) of this GPU. */
	double host;
	int stage;                /* which pipeline stage that is */
	double inflight;          /* microbatches whose activations it holds */
};

/* Parameters held by one GPU of pipeline stage `stage`: the dense part
 * (split over tp) and the routed experts (split over ep and etp). */
struct stage_params {
	double dense;   /* parameters per GPU outside the experts */
	double expert;  /* expert parameters per GPU */
	/* of which trained (gradients, optimizer states, the DP reduction):
	 * all of them, or under LoRA the adapters alone */
	double train_dense, train_expert;
	int layers;     /* transformer layers on the stage */
	int moe_layers; /* of which MoE layers */
	int has_embedding, has_lm_head;
};

void memory_stage_params(const struct model_spec *model, const struct layout *layout,
			 const struct train_opts *opts, int stage,
			 struct stage_params *out);
/* What the GPU of pipeline rank `stage` holds: stage `stage`'s, and under
 * DualPipe also stage pp-1-stage's (the reverse direction's copy, DeepSeek-V3
 * report Table 2: parameters 2x). */
void memory_rank_params(const struct model_spec *model, const struct layout *layout,
			const struct train_opts *opts, int stage, struct stage_params *out);
/* The same split for one transformer layer (an MoE one when moe is set):
 * attention, the dense MLP or the MoE layer's shared part over tp into
 * *dense, the routed experts over ep x etp into *expert. */
void memory_layer_params(const struct model_spec *model, const struct layout *layout, int moe,
			 double *dense, double *expert);

/* Transformer layers on pipeline stage `stage`, split as the framework
 * does (layout_stage_layers): evenly, with Megatron's first/last stage
 * counts, or DeepSpeed's partition of layers and embeddings. */
int memory_stage_layers(const struct model_spec *model, const struct layout *layout,
			const struct train_opts *opts, int stage);

/* The layers among them an fp8-class run keeps in bf16 (the model's first
 * opts->bf16_first and last opts->bf16_last, by global index: Megatron-
 * Core's first_last_layers_bf16), each chunk of the stage holding its
 * span of the layers in order. */
int memory_stage_bf16_layers(const struct model_spec *model, const struct layout *layout,
			     const struct train_opts *opts, int stage);

/* The MoE layers among them (a model's leading dense layers sit on the
 * first stage's first chunk). */
int memory_stage_moe_layers(const struct model_spec *model, const struct layout *layout,
			    const struct train_opts *opts, int stage);

/* The bytes one layer and microbatch moves to host memory and back on one
 * GPU under the layout's offload modules (0 without). */
double memory_layer_offloaded(const struct model_spec *model, const struct layout *layout,
			      const struct train_opts *opts, int moe);
/* Whether recompute=selective is op-level selective checkpointing for
 * this layer: the framework's (torchtitan), on a dense, non-MLA layer. */
int memory_op_sac(const struct model_spec *model, const struct train_opts *opts, int moe);
/* Activation bytes of one transformer layer (an MoE layer when moe is
 * set, else a dense one) for one microbatch on one GPU, kept for the
 * backward pass, given recomputation, offloading and SP. */
double memory_layer_activations(const struct model_spec *model,
				const struct layout *layout,
				const struct train_opts *opts, int moe);
/* ... and of all of stage `stage`'s layers. */
double memory_stage_activations(const struct model_spec *model, const struct layout *layout,
				const struct train_opts *opts, int stage);

/* Microbatches (in units of a whole stage's layers) whose activations
 * stage `stage` holds at its peak under the layout's schedule. */
double memory_inflight(const struct layout *layout, long microbatches, int stage);

/* Memory of one GPU of `stage`, term by term, in bytes. */
void memory_stage(const struct model_spec *model, const struct cluster *cluster,
		  const struct layout *layout, const struct train_opts *opts,
		  int stage, struct mem_breakdown *out);

/* The most-loaded stage's breakdown. */
void memory_peak(const struct model_spec *model, const struct cluster *cluster,
		 const struct layout *layout, const struct train_opts *opts,
		 struct mem_breakdown *out);

#endif
