/*
 * plan_out.h: `pplan plan` as pplan.plan/1 JSON: each size priced (its
 * best layouts, goodput and its terms, days, GPU-hours, cost) and the
 * answer; with --compare-clusters one entry per cluster.  The JSON tree
 * is the caller's (cJSON_Delete).
 */
#ifndef PPLAN_PLAN_OUT_H
#define PPLAN_PLAN_OUT_H

#include <cjson/cJSON.h>

#include "plan.h"

/* pplan.plan/1 (docs/design.md, "JSON contracts"), "mode": "ladder". */
cJSON *plan_out_json(const struct plan_request *rq, const struct plan_result *res);

/* pplan.plan/1, "mode": "compare": clusters[i] priced in res[i], its
 * chosen size pick[i] (-1: none). */
cJSON *plan_out_compare_json(const struct plan_request *rq, const char *const *clusters,
			     const struct plan_result *res, const int *pick, int n);

#endif
