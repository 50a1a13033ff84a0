/*
 * report.h: predictions as JSON (pplan.prediction/1, docs/design.md) and as
 * the term-by-term text that `pplan predict` prints.  Builders return a
 * cJSON tree the caller owns (cJSON_Delete).
 */
#ifndef PPLAN_REPORT_H
#define PPLAN_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "cost.h"

cJSON *report_model_json(const struct model_spec *m);
cJSON *report_cluster_json(const struct cluster *c);
cJSON *report_layout_json(const struct layout *l, const struct train_opts *o);

/* The framework row, its resolved behaviour and the hand switches. */
cJSON *report_framework_json(const struct train_opts *o);

/* The prediction fields of pplan.prediction/1 (no schema, no inputs). */
cJSON *report_prediction_fields(const struct prediction *p);

/* How far to trust p (sim/accuracy.h): the band of the GPU generation
 * and precision, and, with p, its step time, MFU and memory ranges and
 * whether its MFU is above the best published; p NULL: the band alone. */
cJSON *report_accuracy_json(const struct cluster *c, const struct train_opts *o,
			    const struct prediction *p);

/* A whole pplan.prediction/1 document (with its "accuracy"). */
cJSON *report_prediction_json(const struct model_spec *m,
			      const struct cluster *c, const struct layout *l,
			      const struct train_opts *o,
			      const struct prediction *p);


#endif
