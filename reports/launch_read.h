/*
 * launch_read.h: the inverse of emit.h.  A launch configuration a team
 * already runs, read back into what pplan prices: Megatron-LM's arguments
 * (a launch script, a bash array, or the words themselves), a NeMo 2.0
 * recipe override, a torchtitan 0.3 launch line (torchrun, --module and
 * --config, tyro's --section.key overrides) and a DeepSpeed config (JSON).
 *
 * What the file says becomes a layout string and the job's options; what
 * the framework does when the file says nothing is the framework's own
 * default (Megatron-LM: no distributed optimizer, no overlap, dropout
 * 0.1, learned absolute positions), not pplan's.  The model comes from the
 * file where it defines one (Megatron-LM's arguments), else from the zoo
 * model its recipe or config names (NeMo, torchtitan), else from --model.
 * Shell variables are not expanded: a value such as $TP is refused with a
 * sentence.  Nothing here prints.
 */
#ifndef PPLAN_LAUNCH_READ_H
#define PPLAN_LAUNCH_READ_H

#include "emit.h"
#include "framework.h"
#include "layout.h"
#include "model.h"

#define LAUNCH_MAX_NOTES 12

struct launch_job {
	enum emit_format fmt;
	struct layout l;           /* what the file says of the layout ... */
	unsigned set;              /* ... its LK_ keys (layout.h); dp and zero never */
	int zero;                  /* the ZeRO stage the file runs, for dp x cp > 1 */
	struct model_spec model;   /* the file's model, the one its config names, or --model's */
	char model_note[160];      /* where the model came from */
	char framework[24];        /* the framework the format implies ("" : pplan's default) */
	long seq;                  /* tokens per sequence; 0 = not said */
	long nodes, gpus_per_node; /* the launcher's world; 0 = not said */
	long gpus;                 /* DeepSpeed: the world its batch implies; 0 = not said */
	char precision[16];        /* "bf16", "fp16", "fp8-delayed", "fp8-tensorwise", "mxfp8" ... */
	struct fw_switches switches;
	char order[16];            /* a rank order, "" = the default */
	char pp_layout[512];       /* the pipeline layout string read ("" none, or too long) */
	int mtp_layers;            /* MTP layers the pipeline layout counts as layers:
				    * in model.layers, after the model's own */
	int lora_rank;             /* a LoRA fine-tuning recipe's rank; 0 every weight trains */
	unsigned lora_targets;     /* its target_modules (enum lora_target); 0 LoRA's default */
	int bf16_given;            /* it says which end layers stay bf16 (first_last_layers_bf16) */
	int bf16_first, bf16_last; /* ... the first and the last that do */
	char notes[LAUNCH_MAX_NOTES][256]; /* what was read as something else */
	int n_notes;
	int dropped_notes; /* past LAUNCH_MAX_NOTES, counted in the last one */
};

/* Adds a note to out (printf-style); past LAUNCH_MAX_NOTES the last note
 * counts those left out. */
void launch_job_note(struct launch_job *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads `src` in format fmt into *out.  src is a file's path, "-" for
 * standard input, or (for the command-line formats) the words themselves
 * when no file of that name exists and the text starts with "-".  A value
 * that is not what the framework takes, a shell variable, or a file that
 * says nothing pplan can price is PPLAN_EINPUT with one sentence naming
 * the file and the flag.  `given` is --model's model (NULL: none): the
 * model where the file names none (DeepSpeed, a custom torchtitan
 * config), else checked against the file's (layers, widths, heads,
 * experts). */
enum pplan_status launch_read(enum emit_format fmt, const char *src,
			      const struct model_spec *given, struct launch_job *out,
			      struct perr *err);

/* The same, from text already in memory; `where` names it in sentences. */
enum pplan_status launch_read_text(enum emit_format fmt, const char *text,
				   const char *where, const struct model_spec *given,
				   struct launch_job *out, struct perr *err);

#endif
