/*
 * search_out.h: the machine-readable reports of `pplan search`:
 * pplan.search/1, written and read back (for `pplan report html`), and the
 * CSV.  The JSON tree is the caller's (cJSON_Delete); the CSV is written
 * to a temporary file and renamed.
 */
#ifndef PPLAN_SEARCH_OUT_H
#define PPLAN_SEARCH_OUT_H

#include <cjson/cJSON.h>

#include "job.h"
#include "search.h"

/* pplan.search/1 (docs/design.md, "JSON contracts"). */
cJSON *search_out_json(const struct job *in, const struct search_params *sp,
		       const struct search_result *result);

/* One row per ranked layout, units in the column names. */
enum pplan_status search_out_csv(const char *path, const struct job *in,
				 const struct search_result *result, struct perr *err);

#define SEARCH_SCHEMA "pplan.search/1"
/* The strategy families a document names (enum family of sim/search.h). */
#define SEARCH_DOC_FAMILIES FAM_COUNT

/* A pplan.search/1 document as read: the fields the report page draws. */
struct search_doc {
	const char *path;
	char model[96], cluster[96], gpu[64];
	long gpus, evaluated, feasible;
	double cap_gib;                 /* NAN: unknown */
	char family_names[SEARCH_DOC_FAMILIES][32];
	int n_points;
	float (*points)[2];             /* step time (s), memory (GiB) */
	unsigned char *marks;           /* family, or SEARCH_DOC_FAMILIES: out of memory */
	const cJSON *layouts, *families;
};


/* Reads what the page draws from doc (a pplan.search/1 tree, which must
 * outlive d); a malformed part is one sentence naming path.
 * search_doc_free releases the points. */
enum pplan_status search_doc_read(struct search_doc *d, const cJSON *doc, const char *path,
				  struct perr *err);
void search_doc_free(struct search_doc *doc);

/* A field of one of the document's objects, leniently, for the page: a
 * number (NAN when absent or not one) and a string ("?"). */
double search_doc_num(const cJSON *o, const char *key);
void search_doc_str(const cJSON *o, const char *key, char *buf, size_t len);

#endif
