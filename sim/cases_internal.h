/*
 * cases_internal.h: what cases.c and cases_model.c share while reading
 * one case of pplan.cases/1.
 */
#ifndef PPLAN_CASES_INTERNAL_H
#define PPLAN_CASES_INTERNAL_H

#include "cases.h"
#include <cjson/cJSON.h>

/* Adds "what was assumed" to the case's notes. */
void vcase_note(struct vcase *vc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the case not predictable, with the reason (the first one stands). */
void vcase_skip(struct vcase *vc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads a whole number in [min, max] that may be null; returns 1 if
 * present.  A value out of range sets *st (the first error is kept) with
 * a sentence naming where, the key and the bound. */
int vcase_opt_long(const cJSON *o, const char *key, long min, long max, long *v,
		   const char *where, enum pplan_status *st, struct perr *e);
/* A number that may be null but must be more than 0 and at most max when
 * given; returns 1 if present. */
int vcase_opt_positive(const cJSON *o, const char *key, double max, const char *unit,
		       double *v, const char *where, enum pplan_status *st, struct perr *e);

/* The model: an hf_config object (a config.json's keys) or the flat keys;
 * the run's seq_length, dropout and name; the parameter count checked
 * (cases_model.c). */
enum pplan_status vcase_load_model(const cJSON *jm, struct vcase *vc, const char *where,
				   struct perr *e);

#endif
