/*
 * trace.h: the timeline of one simulated step, two ways.
 *
 *  - Chrome trace event JSON ("JSON Object Format": traceEvents, complete
 *    "X" events, times in microseconds), which Perfetto and
 *    chrome://tracing open: one process per pipeline stage, one track
 *    (thread) for compute (F, B, W, optimizer), one for point-to-point
 *    sends, one for the data-parallel gradient reduction.
 *  - A text timeline for the terminal, one row per stage, drawn like the
 *    schedule figures of the Megatron-LM and zero-bubble papers.
 *
 * Both need a des_result simulated with DES_TIMES.
 */
#ifndef PPLAN_TRACE_H
#define PPLAN_TRACE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "des.h"
#include "schedule.h"
#include "status.h"

/* Builds the trace document; the caller owns it (cJSON_Delete).  NULL
 * with a sentence in e when result has no op times or memory runs out. */
cJSON *trace_build(const struct pipe_schedule *sched, const struct des_result *result,
		   struct perr *err);

/* Writes trace_build's document to path (temporary file, then rename). */
enum pplan_status trace_write(const char *path, const struct pipe_schedule *sched,
			      const struct des_result *result, struct perr *err);

/* Prints the text timeline of the pipeline span to f, at most max_cols
 * columns of time: digits 0-9 are forwards of microbatch (mb mod 10),
 * a-j backwards (input gradient for zb-h1), A-J weight gradients (W),
 * '.' idle.  One column is the shortest compute op unless that makes the
 * row wider than max_cols. */
void trace_timeline_print(FILE *f, const struct pipe_schedule *sched,
			  const struct des_result *result, int max_cols);

#endif
