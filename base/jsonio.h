/*
 * jsonio.h: reading and writing JSON files with cJSON, and typed getters
 * that turn a missing or mistyped key into one sentence naming the file
 * and the key.  Readers take regular files only, within a size limit per
 * kind of file; writers go through a temporary file and rename(), so a
 * reader never sees half a report, and never replace anything but a
 * regular file.
 */
#ifndef PPLAN_JSONIO_H
#define PPLAN_JSONIO_H

#include <cjson/cJSON.h>

#include "status.h"

/* Limits on what pplan reads, by kind of file (docs/limits.md). */
#define JSON_MAX_BYTES_MODEL (1L << 20)    /* pplan.model/1, HF config.json */
#define JSON_MAX_BYTES_CLUSTER (1L << 20)  /* pplan.cluster/1 */
#define JSON_MAX_BYTES (16L << 20)         /* cases, reports, profiles */

/* "a regular file", "a directory", "a FIFO (named pipe)", ... for a
 * st_mode. */
const char *file_kind_name(unsigned mode);

/* Reads a whole regular file into a NUL-terminated buffer the caller
 * frees; *len (if not NULL) receives its length.  A FIFO, a device, a
 * directory or a socket is refused by kind before anything is opened
 * (nothing blocks); a file over max_bytes is refused by size.  `what`
 * names the kind in messages ("a model file").  Every failure is one
 * sentence naming the path. */
enum pplan_status file_read(const char *path, long max_bytes, const char *what,
			    char **out, long *len, struct perr *err);

/* Parses the file at path (at most max_bytes, a `what`); *out is owned
 * by the caller (cJSON_Delete).  Malformed JSON gives "PATH: malformed
 * JSON near byte N"; nesting past cJSON's limit says so. */
enum pplan_status json_read_limited(const char *path, long max_bytes,
				    const char *what, cJSON **out,
				    struct perr *err);
/* json_read_limited with JSON_MAX_BYTES. */
enum pplan_status json_read_file(const char *path, cJSON **out, struct perr *err);

/* Whether path can take what an option (`opt`, e.g. "--json") writes:
 * "-" (stdout), a regular file or a new name in an existing folder one
 * can write, or a character device or FIFO (written directly).  A
 * directory, a block device, a socket or a missing folder is PPLAN_EINPUT
 * with a sentence naming the option and the path.  Commands call it
 * before any work, so that a refused output leaves nothing written. */
enum pplan_status output_check(const char *path, const char *opt, struct perr *err);

/* Writes doc (pretty-printed, newline-terminated) as text_write_atomic. */
enum pplan_status json_write_atomic(const char *path, const cJSON *doc,
				    struct perr *err);

/* Writes text to path: "-" is stdout; a regular file or a new name is
 * written to a temporary file beside it and renamed over it when
 * complete; a character device or a FIFO is written directly; anything
 * else is refused.  Nothing but a regular file is ever replaced. */
enum pplan_status text_write_atomic(const char *path, const char *text,
				    struct perr *err);

/* Typed getters.  Return PPLAN_OK and set *out if the key holds the type;
 * PPLAN_ENOTFOUND if absent or null (out untouched); PPLAN_EINPUT with a
 * sentence "WHERE: KEY must be ..." if present with the wrong type or
 * range.  `where` names the file/object for the message. */
enum pplan_status json_get_number(const cJSON *obj, const char *key,
				  double *out, const char *where, struct perr *err);
enum pplan_status json_get_long(const cJSON *obj, const char *key, long *out,
				long min, const char *where, struct perr *err);
enum pplan_status json_get_bool(const cJSON *obj, const char *key, int *out,
				const char *where, struct perr *err);
enum pplan_status json_get_string(const cJSON *obj, const char *key,
				  const char **out, const char *where,
				  struct perr *err);

/* The same with a range, and over alternative names: the one field-reader
 * interface every format uses.  json_get_long_in: a whole number in
 * [min, max] ("WHERE: KEY must be at most MAX, got V").  json_get_first_long:
 * the first of keys[] (NULL-terminated) that obj has, *used naming it (or
 * keys[0] when none is there).  json_get_number_in: a number in (lo, hi]
 * ("must be more than LO and at most HI UNIT"; unit may be "").
 * json_get_first_number: the first of keys[] as json_get_number_in.  Each
 * leaves *out untouched unless it returns PPLAN_OK, and returns
 * PPLAN_ENOTFOUND when absent, as the getters above. */
enum pplan_status json_get_long_in(const cJSON *obj, const char *key, long min, long max,
				   long *out, const char *where, struct perr *err);
enum pplan_status json_get_first_long(const cJSON *obj, const char *const *keys, long min,
				      long max, long *out, const char **used,
				      const char *where, struct perr *err);
enum pplan_status json_get_number_in(const cJSON *obj, const char *key, double lo, double hi,
				     const char *unit, double *out, const char *where,
				     struct perr *err);
enum pplan_status json_get_first_number(const cJSON *obj, const char *const *keys, double lo,
					double hi, const char *unit, double *out,
					const char *where, struct perr *err);

/* A key that must be there: PPLAN_ENOTFOUND becomes "WHERE: KEY is
 * missing" (PPLAN_EINPUT), naming `key`.  An optional key: PPLAN_ENOTFOUND
 * becomes PPLAN_OK.  Both pass any other status through:
 *   st = json_optional(json_get_bool(o, "tied", &tied, where, e));
 *   st = json_required(json_get_long_in(o, "layers", 1, 4096, &n, where, e),
 *                      "layers", where, e); */
enum pplan_status json_required(enum pplan_status st, const char *key, const char *where,
				struct perr *err);
static inline enum pplan_status json_optional(enum pplan_status st)
{
	return st == PPLAN_ENOTFOUND ? PPLAN_OK : st;
}

/* Adds a number, or null when !isfinite(v) or v is NAN, to obj. */
void json_add_number_or_null(cJSON *obj, const char *key, double v);

#endif
