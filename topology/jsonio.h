/*
 * jsonio.h: reading and writing JSON files with cJSON, and typed getters
 * that turn a missing or mistyped key into one sentence naming the file
 * and the key.  Writers go through a temporary file and rename(), so a
 * reader never sees half a report.
 */
#ifndef PPLAN_JSONIO_H
#define PPLAN_JSONIO_H

#include <cjson/cJSON.h>

#include "status.h"

/* Reads a whole file into a NUL-terminated buffer the caller frees;
 * *len (if not NULL) receives its length.  A file over max_bytes, or one
 * that cannot be read, gives one sentence naming it. */
enum pplan_status file_read(const char *path, long max_bytes, char **out,
			    long *len, struct perr *e);

/* Parses the file at path; *out is owned by the caller (cJSON_Delete).
 * Malformed JSON gives "PATH: malformed JSON near byte N". */
enum pplan_status json_read_file(const char *path, cJSON **out, struct perr *e);

/* Writes doc (pretty-printed, newline-terminated) to path atomically. */
enum pplan_status json_write_atomic(const char *path, const cJSON *doc,
				    struct perr *e);

/* Writes text to path atomically ("-" writes to stdout). */
enum pplan_status text_write_atomic(const char *path, const char *text,
				    struct perr *e);

/* Typed getters.  Return PPLAN_OK and set *out if the key holds the type;
 * PPLAN_ENOTFOUND if absent or null (out untouched); PPLAN_EINPUT with a
 * sentence "WHERE: KEY must be ..." if present with the wrong type or
 * range.  `where` names the file/object for the message. */
enum pplan_status json_get_number(const cJSON *obj, const char *key,
				  double *out, const char *where, struct perr *e);
enum pplan_status json_get_long(const cJSON *obj, const char *key, long *out,
				long min, const char *where, struct perr *e);
enum pplan_status json_get_bool(const cJSON *obj, const char *key, int *out,
				const char *where, struct perr *e);
enum pplan_status json_get_string(const cJSON *obj, const char *key,
				  const char **out, const char *where,
				  struct perr *e);

/* Adds a number, or null when !isfinite(v) or v is NAN, to obj. */
void json_add_number_or_null(cJSON *obj, const char *key, double v);

#endif
