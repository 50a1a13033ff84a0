/*
 * hwlocxml.h: a strict check of an hwloc XML export before libhwloc sees
 * it.  hwloc 2.9's importer trusts its input: an object without
 * complete_cpuset or complete_nodeset, a distances matrix whose nbobjs is
 * negative, or sets that are not nested crash it or make it allocate
 * tens of GiB (RELIABILITY.md "hwloc").  This check accepts what hwloc
 * 2.x and 3.x write (`lstopo --of xml`) and refuses everything else with
 * one sentence naming the file, the element and what is wrong.
 */
#ifndef PPLAN_HWLOCXML_H
#define PPLAN_HWLOCXML_H

#include <stddef.h>

#include "status.h"

/* Bounds (docs/limits.md). */
#define HWLOCXML_MAX_DEPTH 64       /* nesting of elements */
#define HWLOCXML_MAX_OBJECTS 100000 /* <object> elements */
#define HWLOCXML_MAX_SET_WORDS 1024 /* 32-bit groups of a set: 32768 PUs */
#define HWLOCXML_MAX_DIST_OBJS 4096 /* nbobjs of a distances matrix */

/* Checks the len bytes of xml (NUL-terminated at xml[len]); `name`
 * (the file) starts the message.  PPLAN_OK or PPLAN_EINPUT. */
enum pplan_status hwlocxml_check(const char *xml, size_t len,
				 const char *name, struct perr *err);

#endif
