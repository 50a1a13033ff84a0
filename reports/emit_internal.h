/*
 * emit_internal.h: what emit.c (Megatron-LM, torchtitan, DeepSpeed and
 * the header every output opens with) and emit_recipe.c (NeMo's and
 * Megatron-Bridge's recipe overrides) share.  Not for other modules.
 */
#ifndef PPLAN_EMIT_INTERNAL_H
#define PPLAN_EMIT_INTERNAL_H

#include <stdio.h>

#include "emit.h"

#define EMIT_MAX_NOTES 12

/* What the framework cannot express, said beside the config. */
struct notes {
	char text[EMIT_MAX_NOTES][256];
	int n;
	int dropped; /* notes past EMIT_MAX_NOTES, said in the last one */
};

void emit_note(struct notes *notes, const char *s);

/* The job's rank order is pplan's default (rank_order_default), or
 * tp-cp-pp-dp (Megatron's use_tp_pp_dp_mapping). */
int emit_default_order(const struct train_opts *opts);
int emit_alt_order(const struct train_opts *opts);

/* The lines every output opens with, each after `lead` ("#"): a warning
 * when the layout does not fit, pplan's version, the job, the layout, what
 * format fmt was checked against and the prediction. */
void emit_header(FILE *f, const char *lead, const struct emit_input *in, const char *what,
		 enum emit_format fmt);
void emit_comment_notes(FILE *f, const char *lead, const struct notes *notes);

/* emit_recipe.c */
void emit_nemo(FILE *f, const struct emit_input *in);
void emit_bridge(FILE *f, const struct emit_input *in);

#endif
