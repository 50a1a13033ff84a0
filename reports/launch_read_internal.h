/*
 * launch_read_internal.h: what the launch-config readers share
 * (reports/launch_read.c: the words, values and the model a file names;
 * reports/launch_megatron.c: Megatron-LM's arguments; reports/launch_recipe.c:
 * NeMo's and Megatron-Bridge's recipe overrides).  Not an interface
 * outside reports/launch_*.c.
 */
#ifndef PPLAN_LAUNCH_READ_INTERNAL_H
#define PPLAN_LAUNCH_READ_INTERNAL_H

#include <stddef.h>

#include "launch_read.h"

/* A launch script as shell words (quotes, backslashes and comments
 * removed; nothing expanded). */
struct words {
	char *buf;        /* the words, each NUL-terminated */
	size_t *start;    /* where each begins in buf */
	unsigned char *var; /* the word has an unquoted or double-quoted '$' */
	size_t n, cap;
};

/* One reading: the source's name for sentences, the job it fills, the error. */
struct reader {
	const char *where;
	struct launch_job *out;
	struct perr *e;
};

/* A flag and its value (--name value or --name=value). */
struct flag {
	const char *name, *value;
	int var;               /* the value is a shell expression */
	size_t next;           /* the word after the flag and its value */
};

const char *lr_word(const struct words *words, size_t i);
/* A note on the job (what the reader priced as something else). */
void lr_say(struct reader *reader, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "FLAG must be WANT, got V" (or the shell expression it is). */
enum pplan_status lr_bad_value(struct reader *reader, const char *flag, const char *v, int var,
			       const char *want);
int lr_parse_long(const char *s, long lo, long hi, long *out);
/* Is v one of the '|'-separated names? */
int lr_one_of(const char *v, const char *names);
/* The flag at word i, its name copied to name (len bytes) as written. */
struct flag lr_flag_at(const struct words *words, size_t i, char *name, size_t len);
enum pplan_status lr_get_long(struct reader *reader, const struct flag *flag, long lo, long *out);
enum pplan_status lr_get_int(struct reader *reader, const struct flag *flag, long lo, int *out);
enum pplan_status lr_get_double(struct reader *reader, const struct flag *flag, double *out);
/* torchrun's (and the launchers') world: --nnodes and --nproc-per-node. */
enum pplan_status lr_launcher_flag(struct reader *reader, const struct flag *flag, int *used);
/* The model the file defines has given's shape, or a sentence says how not. */
enum pplan_status lr_same_shape(struct reader *reader, const struct model_spec *file,
				const struct model_spec *given);

/* Megatron-Core's precision-aware optimizer as a file states it: on
 * (on), with its two moments' dtypes (NULL: fp32, the default); pplan
 * prices it where both moments are 16-bit, and says what it does not. */
void lr_precision_aware(struct reader *reader, int on, const char *avg, const char *avg_sq);

/* Megatron-LM's arguments (reports/launch_megatron.c). */
/* The model a config names: zoo (NULL: none) is the zoo model of the
 * config `config` names (for the sentences), `given` --model's; they
 * must agree, --model wins, and one of them must exist. */
enum pplan_status lr_named_model(struct reader *reader, const char *zoo, const char *config,
				 const struct model_spec *given);

enum pplan_status lr_read_megatron(struct reader *reader, const struct words *words,
				   const struct model_spec *given);
/* Megatron-Core's layout string s (named `what` in sentences) as the
 * split of reader->out's layout for a model of `layers` (layout.h's
 * layout_apply_pp_layout), its keys marked given; its MTP layers said to
 * be unpriced when say_mtp.  *pl receives what the string holds. */
enum pplan_status lr_pp_layout(struct reader *reader, const char *what, const char *s, int layers,
			       int say_mtp, struct pp_layout *pl);

/* launch_recipe.c: a NeMo or Megatron-Bridge override (reader->out->fmt). */
enum pplan_status lr_read_recipe(struct reader *reader, const char *text,
				 const struct model_spec *given);

#endif
