/*
 * status.h: the one status enum of pplan and the error buffer that carries
 * a sentence for the user.
 *
 * Functions return an enum pplan_status; when they fail because of the
 * world (bad input, a missing file) they also write one sentence into the
 * caller's struct perr.  Only main() turns a status into an exit code:
 * 0 done, 2 bad input or an impossible request, 1 a failure of the machine
 * or the run.  It lives in base/, the layer under every other module.
 */
#ifndef PPLAN_STATUS_H
#define PPLAN_STATUS_H

#include <stddef.h>

enum pplan_status {
	PPLAN_OK = 0,
	PPLAN_EINPUT,    /* bad input or impossible request: exit 2 */
	PPLAN_ENOMEM,    /* allocation failed: exit 1 */
	PPLAN_ESYSTEM,   /* I/O, MPI, CUDA, the machine: exit 1 */
	PPLAN_ENOTFOUND, /* a lookup that found nothing (callers decide) */
	PPLAN_EINTERNAL, /* a bug: an impossible number or state: exit 1 */
};

/* The message for the user: one sentence, no trailing newline. */
struct perr {
	char msg[768];
};

const char *status_str(enum pplan_status st);
int status_exit_code(enum pplan_status st);

/* Writes the formatted sentence into e (if e is not NULL) and returns st. */
enum pplan_status perr_set(struct perr *err, enum pplan_status st,
			   const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes e's message with "prefix: " (e.g. a file name). */
void perr_prefix(struct perr *err, const char *prefix);

#endif
