/*
 * validation_out.h: the writer of pplan.validation/1 (docs/design.md,
 * "JSON contracts"): each case of a pplan.cases/1 file with its
 * prediction, what was measured and the errors, and the file's summary
 * (sim/validation.h).  Written to a temporary file and renamed.
 */
#ifndef PPLAN_VALIDATION_OUT_H
#define PPLAN_VALIDATION_OUT_H

#include "validation.h"

struct validation_doc {
	const char *cases_path;     /* the pplan.cases/1 file */
	const char *profile_path;   /* --profile, NULL: the embedded constants */
	const struct vcase *cases;
	const struct case_outcome *out;
	int n;
	const struct validation_summary *summary;
	int baseline, cross_validate; /* which comparisons the summary holds */
};

enum pplan_status validation_out_write(const char *path, const struct validation_doc *doc,
				       struct perr *err);

#endif
