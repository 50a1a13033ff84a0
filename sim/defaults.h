/*
 * defaults.h: the values pplan assumes where the user says nothing, as a
 * practitioner would choose them, each with the sentence that says where
 * it comes from (the CLI echoes it in the '#' header).
 *
 *   global batch   the model's published batch where the zoo knows it,
 *                  else DEFAULT_TOKENS_PER_GPU tokens per GPU with a floor
 *                  of DEFAULT_MIN_BATCH_TOKENS, in sequences that
 *                  any data-parallel degree of the cluster divides (its
 *                  odd part times a power of two)
 *                  (a LoRA fine-tuning: DEFAULT_FINETUNE_SEQUENCES, NeMo's
 *                  fine-tuning data module's batch, rounded the same way)
 *   memory cap     DEFAULT_MEMORY_FRACTION of the GPU's memory: the rest
 *                  is headroom for allocator fragmentation spikes and
 *                  communicator buffers the memory model does not see
 *   CP             only where each rank keeps DEFAULT_CP_MIN_TOKENS of the
 *                  sequence (ring attention cannot hide its transfers
 *                  behind shorter blocks), or where nothing fits without
 *
 * Sources are in sim/MODEL.md, "Defaults".  Plain functions, no state.
 */
#ifndef PPLAN_DEFAULTS_H
#define PPLAN_DEFAULTS_H

#include "gpu.h"
#include "model.h"

#define DEFAULT_MIN_BATCH_TOKENS (1L << 22) /* 4.19 M tokens */
#define DEFAULT_TOKENS_PER_GPU 1024L         /* Llama 3 405B: 16M on 16,384 GPUs */
#define DEFAULT_MEMORY_FRACTION 0.90
#define DEFAULT_FINETUNE_SEQUENCES 128L  /* NeMo 2.0's fine-tuning data modules */
#define DEFAULT_CP_MIN_TOKENS 4096L

/* A published global batch: sequences of `seq` tokens. */
struct published_batch {
	const char *model;       /* zoo name */
	long sequences;
	long seq;                /* the sequence length it was published at */
	const char *source;      /* "Llama 3 (Dubey et al. 2024), 3.4.1" */
};

/* The table (NULL-terminated model names); *n receives its length. */
const struct published_batch *defaults_published_batches(int *n);

struct batch_default {
	long sequences;
	char origin[192];        /* one clause: where the figure comes from */
};

/* The default global batch of model at `seq` tokens per sequence on `gpus`
 * GPUs. */
void defaults_global_batch(const struct model_spec *model, long seq, long gpus,
			   struct batch_default *out);

/* The same for a fine-tuning (LoRA) run: DEFAULT_FINETUNE_SEQUENCES
 * sequences, rounded as below. */
void defaults_finetune_batch(long seq, long gpus, struct batch_default *out);

/* Rounds a token count to a number of sequences of `seq` tokens that
 * divides by every data-parallel degree of `gpus` GPUs: the odd part of
 * the GPU count times a power of two, the nearer one in ratio (at least
 * the odd part). */
long defaults_round_sequences(double tokens, long seq, long gpus);

/* The default usable memory per GPU, GiB. */
double defaults_memory_cap_gib(const struct gpu_spec *gpu);

#endif
