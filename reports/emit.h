/*
 * emit.h: a layout as the launch configuration of a training framework:
 * Megatron-LM flags (a bash array), a NeMo 2.0 recipe override and a
 * Megatron-Bridge recipe override (Python),
 * a torchtitan 0.3 launch line (torchrun, --module/--config and tyro's
 * --section.key overrides) and a DeepSpeed config (JSON).
 *
 * What a framework cannot express (GPipe in Megatron-LM, ZB-H1 outside
 * the zero-bubble fork, ZeRO-1 in torchtitan, ...) is said in a note, not
 * dropped: as '#' comments in the bash, Python and torchrun outputs, and on
 * the notes stream for JSON, which has no comments.  Each output opens
 * with pplan's version and git hash.  Nothing here allocates.
 */
#ifndef PPLAN_EMIT_H
#define PPLAN_EMIT_H

#include <stdio.h>

#include "cost.h"

enum emit_format { EMIT_MEGATRON = 0, EMIT_NEMO, EMIT_TORCHTITAN, EMIT_DEEPSPEED,
		   EMIT_BRIDGE, EMIT_COUNT };

const char *emit_format_name(enum emit_format format);
/* "megatron", "nemo", "torchtitan", "deepspeed", "bridge"; 0 on
 * success, -1 if not. */
int emit_format_parse(const char *s, enum emit_format *out);

struct emit_input {
	const struct model_spec *m;
	const struct cluster *c;
	const struct layout *l;
	const struct train_opts *o;      /* seq, precision, overlaps, rank order */
	const struct prediction *p;      /* for the header; may be NULL */
	/* Megatron-Core's --pipeline-model-parallel-layout the job was given
	 * (NULL: none; l holds the split it gives), and the model's MTP
	 * layers (m has the model's own layers; pplan priced these too). */
	const char *pp_layout;
	int mtp_layers;
};

/* Writes the configuration of in->l in format fmt to f; notes on what
 * the framework cannot express go to `notes` for JSON (may be NULL).
 * Returns the number of notes. */
/* in, or its copy in own with the layout's free-form split as its
 * pipeline layout string (a split the search or a case built). */
const struct emit_input *emit_with_table(const struct emit_input *in, struct emit_input *own);
int emit_config(FILE *f, FILE *notes, enum emit_format fmt,
		const struct emit_input *in);

/* Why format fmt cannot carry a LoRA fine-tuning job (o->lora_rank > 0),
 * one clause; NULL where it can (NeMo's finetune_recipe, Megatron-Bridge's
 * NAME_peft_config). */
const char *emit_peft_unsupported(enum emit_format fmt);

/* The launch configuration a framework takes: torchtitan's and
 * DeepSpeed's own (a launch line, a JSON file), NeMo's and
 * Megatron-Bridge's recipes; Megatron-LM arguments for the rest of the
 * Megatron family (Megatron-LM, Megatron-Core, Megatron-DeepSpeed) and
 * the others. */
enum emit_format emit_format_for(const struct framework *fw);

/* The Megatron-LM flags of the layout alone (parallelism, batch,
 * recomputation, sharding, overlap, precision), `indent` before each
 * line, then one "note:" line per thing Megatron-LM cannot express. */
void emit_megatron_flags(FILE *f, const struct emit_input *in, const char *indent);

/* For the readers (launch_read.h): the torchtitan config `module`/`config`
 * names, with *zoo the zoo model of its shape (NULL when the zoo has none)
 * and *fp8 whether it is the float8 variant; -1 for a config pplan does
 * not know.  A NeMo recipe's name (llm.NAME) or a Megatron-Bridge one's
 * (NAME_pretrain_config), with *zoo its zoo model (NULL: a model the zoo
 * lacks); -1 for a recipe pplan does not know. */
int emit_titan_config(const char *module, const char *config, const char **zoo, int *fp8);
int emit_nemo_recipe(const char *name, const char **zoo);
int emit_bridge_recipe(const char *name, const char **zoo);

#endif
