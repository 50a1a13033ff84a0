/* status.c: status names, exit codes and the user-facing error buffer. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *status_str(enum pplan_status st)
{
	switch (st) {
	case PPLAN_OK: return "ok";
	case PPLAN_EINPUT: return "bad input";
	case PPLAN_ENOMEM: return "out of host memory";
	case PPLAN_ESYSTEM: return "system error";
	case PPLAN_ENOTFOUND: return "not found";
	case PPLAN_EINTERNAL: return "internal error";
	}
	return "unknown status";
}

int status_exit_code(enum pplan_status st)
{
	switch (st) {
	case PPLAN_OK: return 0;
	case PPLAN_EINPUT:
	case PPLAN_ENOTFOUND: return 2;
	case PPLAN_ENOMEM:
	case PPLAN_ESYSTEM:
	case PPLAN_EINTERNAL: return 1;
	}
	return 1;
}

enum pplan_status perr_set(struct perr *e, enum pplan_status st,
			   const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return st;
}

void perr_prefix(struct perr *e, const char *prefix)
{
	char tmp[sizeof e->msg];
	if (!e || !prefix)
		return;
	snprintf(tmp, sizeof tmp, "%s: %s", prefix, e->msg);
	memcpy(e->msg, tmp, sizeof tmp);
}
