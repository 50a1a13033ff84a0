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

cJSON *report_model_json(const struct model_spec *model);
cJSON *report_cluster_json(const struct cluster *cluster);
cJSON *report_layout_json(const struct layout *layout, const struct train_opts *opts);

/* The framework row, its resolved behaviour and the hand switches. */
cJSON *report_framework_json(const struct train_opts *opts);
/* Adds "lora_rank" (0: every weight trains) and "lora_target_modules"
 * (the linears adapted, by Megatron-Core's names; null without LoRA). */
void report_lora_json(cJSON *doc, const struct train_opts *opts);

/* The prediction fields of pplan.prediction/1 (no schema, no inputs). */
cJSON *report_prediction_fields(const struct prediction *pred);

/* How far to trust pred (sim/accuracy.h): the band of the GPU generation
 * and precision, and, with pred, its step time, MFU and memory ranges and
 * whether its MFU is above the best published; pred NULL: the band alone. */
cJSON *report_accuracy_json(const struct cluster *cluster, const struct train_opts *opts,
			    const struct prediction *pred);

/* A whole pplan.prediction/1 document (with its "accuracy"). */
cJSON *report_prediction_json(const struct model_spec *model,
			      const struct cluster *cluster, const struct layout *layout,
			      const struct train_opts *opts,
			      const struct prediction *pred);


#endif
