/*
 * cli_from.h: `pplan predict --from FORMAT SOURCE`: a launch
 * configuration a team already runs (reports/launch_read.h) as the job.
 * cli_from_job puts what the file says into the job's "as given" fields,
 * refusing a value the command line gives differently; cli_from_resolve
 * then resolves it through the job resolver (sim/job.h) with the file's
 * layout, and applies the file's ZeRO stage.
 */
#ifndef PPLAN_CLI_FROM_H
#define PPLAN_CLI_FROM_H

#include <stdio.h>

#include "job.h"
#include "launch_read.h"

/* `where` names the file in sentences; lj must outlive the job. */
enum pplan_status cli_from_job(struct job *in, const char *where, struct launch_job *lj,
			       struct perr *err);
enum pplan_status cli_from_resolve(struct job *in, const char *where, struct launch_job *lj,
				   struct layout *layout, struct perr *err);
/* The reader's notes, one line each after `lead`. */
void cli_from_notes(FILE *f, const char *lead, const struct launch_job *lj);

#endif
