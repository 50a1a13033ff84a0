/*
 * model_internal.h: what model.c shares with model_load.c only: the key
 * names used in messages, the consistency check that names them, and the
 * bounds on sizes.  Not part of the model API.
 */
#ifndef PPLAN_MODEL_INTERNAL_H
#define PPLAN_MODEL_INTERNAL_H

#include "model.h"

#define MAX_COUNT MODEL_MAX_COUNT /* layers, heads, experts */
#define MAX_DIM MODEL_MAX_DIM     /* hidden, ffn, vocab, seq, head_dim */

/* The key names a message uses: pplan.model/1's, or the ones a Hugging
 * Face config actually had. */
struct keynames {
	const char *layers, *hidden, *ffn, *heads, *kv_heads, *head_dim, *vocab,
		*seq, *experts, *top_k;
};

extern const struct keynames model_pplan_keys;

/* model_check with the key names k uses in its messages. */
enum pplan_status model_check_keys(const struct model_spec *m,
				   const char *where, const struct keynames *k,
				   struct perr *e);

/* Case-insensitive string equality. */
int model_name_eq(const char *a, const char *b);

#endif
