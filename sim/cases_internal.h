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

/* jsonio.h's json_get_long_in and json_get_number_in (over (0, max]) for
 * a case's optional fields: 1 if present; a value out of range or of the
 * wrong type sets *st, and once *st is set later reads do nothing, so a
 * loader reads its fields in a row and checks *st once. */
int vcase_opt_long(const cJSON *o, const char *key, long min, long max, long *v,
		   const char *where, enum pplan_status *st, struct perr *err);
int vcase_opt_positive(const cJSON *o, const char *key, double max, const char *unit,
		       double *v, const char *where, enum pplan_status *st, struct perr *err);

/* The model: an hf_config object (a config.json's keys) or a reference
 * to one (a file beside cases_path, or a zoo name), or the flat keys;
 * the run's seq_length, dropout and name; the parameter count checked
 * (cases_model.c). */
enum pplan_status vcase_load_model(const cJSON *jm, struct vcase *vc, const char *cases_path,
				   const char *where, struct perr *err);

#endif
