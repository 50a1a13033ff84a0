/*
 * search_out.h: the machine-readable reports of `pplan search`: the writer
 * of pplan.search/1, beside its reader (html.c, html_search.c).  The JSON
 * tree is the caller's (cJSON_Delete); the CSV is written to a temporary
 * file and renamed.
 */
#ifndef PPLAN_SEARCH_OUT_H
#define PPLAN_SEARCH_OUT_H

#include <cjson/cJSON.h>

#include "job.h"
#include "search.h"

/* pplan.search/1 (docs/design.md, "JSON contracts"). */
cJSON *search_out_json(const struct job *in, const struct search_params *sp,
		       const struct search_result *r);

/* One row per ranked layout, units in the column names. */
enum pplan_status search_out_csv(const char *path, const struct job *in,
				 const struct search_result *r, struct perr *e);

#endif
