/* jsonio.c: JSON file I/O with atomic writes and typed getters. */
#include "jsonio.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum pplan_status file_read(const char *path, long max_bytes, char **out,
			    long *len_out, struct perr *e)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;
	enum pplan_status st = PPLAN_OK;

	*out = NULL;
	if (!f)
		return perr_set(e, PPLAN_EINPUT, "%s: cannot open: %s", path,
				strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		st = perr_set(e, PPLAN_EINPUT, "%s: cannot read: %s", path,
			      strerror(errno));
		goto out;
	}
	if (len > max_bytes) {
		st = perr_set(e, PPLAN_EINPUT, "%s: %ld bytes is more than the %ld this reader takes",
			      path, len, max_bytes);
		goto out;
	}
	buf = malloc((size_t)len + 1);
	if (!buf) {
		st = perr_set(e, PPLAN_ENOMEM, "%s: out of memory reading it", path);
		goto out;
	}
	if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
		st = perr_set(e, PPLAN_EINPUT, "%s: short read", path);
		free(buf);
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	if (len_out)
		*len_out = len;
out:
	fclose(f);
	return st;
}

enum pplan_status json_read_file(const char *path, cJSON **out, struct perr *e)
{
	char *buf = NULL;
	long len = 0;
	const char *end = NULL;
	enum pplan_status st = file_read(path, 1L << 30, &buf, &len, e);

	*out = NULL;
	if (st != PPLAN_OK)
		return st;
	if (len == 0) {
		free(buf);
		return perr_set(e, PPLAN_EINPUT, "%s: empty file, expected JSON", path);
	}
	/* The length includes the terminating NUL so that cJSON's
	 * require-null-terminated check sees it. */
	*out = cJSON_ParseWithLengthOpts(buf, (size_t)len + 1, &end, 1);
	if (!*out)
		st = perr_set(e, PPLAN_EINPUT, "%s: malformed JSON near byte %ld", path,
			      end ? (long)(end - buf) : 0L);
	free(buf);
	return st;
}

enum pplan_status text_write_atomic(const char *path, const char *text,
				    struct perr *e)
{
	char tmp[4096];
	FILE *f;
	size_t len = strlen(text);

	if (strcmp(path, "-") == 0) {
		fputs(text, stdout);
		return PPLAN_OK;
	}
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof tmp)
		return perr_set(e, PPLAN_EINPUT, "%s: path too long", path);
	f = fopen(tmp, "wb");
	if (!f)
		return perr_set(e, PPLAN_ESYSTEM, "%s: cannot write: %s", path,
				strerror(errno));
	if (fwrite(text, 1, len, f) != len || fflush(f) != 0) {
		fclose(f);
		remove(tmp);
		return perr_set(e, PPLAN_ESYSTEM, "%s: write failed: %s", path,
				strerror(errno));
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		int err = errno;
		remove(tmp);
		return perr_set(e, PPLAN_ESYSTEM, "%s: cannot write: %s", path,
				strerror(err));
	}
	return PPLAN_OK;
}

enum pplan_status json_write_atomic(const char *path, const cJSON *doc,
				    struct perr *e)
{
	char *text = cJSON_Print(doc);
	char *withnl;
	enum pplan_status st;
	size_t n;

	if (!text)
		return perr_set(e, PPLAN_ENOMEM, "%s: cannot format JSON", path);
	n = strlen(text);
	withnl = malloc(n + 2);
	if (!withnl) {
		free(text);
		return perr_set(e, PPLAN_ENOMEM, "%s: cannot format JSON", path);
	}
	memcpy(withnl, text, n);
	withnl[n] = '\n';
	withnl[n + 1] = '\0';
	st = text_write_atomic(path, withnl, e);
	free(withnl);
	free(text);
	return st;
}

enum pplan_status json_get_number(const cJSON *obj, const char *key,
				  double *out, const char *where, struct perr *e)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!it || cJSON_IsNull(it))
		return PPLAN_ENOTFOUND;
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be a number", where,
				key);
	*out = it->valuedouble;
	return PPLAN_OK;
}

enum pplan_status json_get_long(const cJSON *obj, const char *key, long *out,
				long min, const char *where, struct perr *e)
{
	double v;
	enum pplan_status st = json_get_number(obj, key, &v, where, e);
	if (st != PPLAN_OK)
		return st;
	if (v != floor(v) || v < (double)min || v > 9.0e15)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %s must be a whole number >= %ld, got %g",
				where, key, min, v);
	*out = (long)v;
	return PPLAN_OK;
}

enum pplan_status json_get_bool(const cJSON *obj, const char *key, int *out,
				const char *where, struct perr *e)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!it || cJSON_IsNull(it))
		return PPLAN_ENOTFOUND;
	if (!cJSON_IsBool(it))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be true or false",
				where, key);
	*out = cJSON_IsTrue(it);
	return PPLAN_OK;
}

enum pplan_status json_get_string(const cJSON *obj, const char *key,
				  const char **out, const char *where,
				  struct perr *e)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!it || cJSON_IsNull(it))
		return PPLAN_ENOTFOUND;
	if (!cJSON_IsString(it))
		return perr_set(e, PPLAN_EINPUT, "%s: %s must be a string", where,
				key);
	*out = it->valuestring;
	return PPLAN_OK;
}

void json_add_number_or_null(cJSON *obj, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}
