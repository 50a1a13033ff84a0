/*
 * jsonio.c: safe file reading and writing, JSON file I/O and typed
 * getters (jsonio.h).
 *
 * Reading: the path is stat()ed first, so a FIFO, a device, a directory
 * or a socket is refused by name before anything could block on it; a
 * regular file is then opened with O_NONBLOCK, checked again with fstat
 * (the same file, still regular) and read to its end, never past the
 * limit of its kind (a /proc file says size 0, so the size is what is
 * read, not what stat says).
 *
 * Writing: output_check says before any work whether a target can be
 * written; text_write_atomic writes a regular file or a new name through
 * a temporary file beside it (mkstemp, then rename), writes a character
 * device or a FIFO directly (/dev/null, /dev/stdout), and refuses a
 * directory, a block device or a socket.  Nothing but a regular file is
 * ever replaced; a symbolic link is followed, so the file it names is
 * replaced and the link kept.
 */
#include "jsonio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ----------------------------------------------------------------- */

const char *file_kind_name(unsigned mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO (named pipe)";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

enum pplan_status file_read(const char *path, long max_bytes, const char *what,
			    char **out, long *len_out, struct perr *e)
{
	struct stat sb, fsb;
	char *buf = NULL;
	size_t cap, len = 0;
	int fd;
	enum pplan_status st = PPLAN_OK;

	*out = NULL;
	if (stat(path, &sb) != 0)
		return perr_set(e, PPLAN_EINPUT, "%s: cannot open: %s", path,
				strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return perr_set(e, PPLAN_EINPUT, "%s is %s, not a file pplan can read as %s",
				path, file_kind_name(sb.st_mode), what);
	if (sb.st_size > max_bytes)
		return perr_set(e, PPLAN_EINPUT,
				"%s: %lld bytes is more than the %ld bytes pplan reads as %s",
				path, (long long)sb.st_size, max_bytes, what);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return perr_set(e, PPLAN_EINPUT, "%s: cannot open: %s", path,
				strerror(errno));
	if (fstat(fd, &fsb) != 0 || !S_ISREG(fsb.st_mode) ||
	    fsb.st_dev != sb.st_dev || fsb.st_ino != sb.st_ino) {
		st = perr_set(e, PPLAN_EINPUT, "%s: changed while pplan opened it", path);
		goto out;
	}
	cap = (size_t)fsb.st_size + 1 > 4096 ? (size_t)fsb.st_size + 1 : 4096;
	if (cap > (size_t)max_bytes + 1)
		cap = (size_t)max_bytes + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		st = perr_set(e, PPLAN_ENOMEM, "%s: out of memory reading it", path);
		goto out;
	}
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *nb;
			if (cap > (size_t)max_bytes) {
				st = perr_set(e, PPLAN_EINPUT,
					      "%s: more than the %ld bytes pplan reads as %s",
					      path, max_bytes, what);
				goto out;
			}
			cap = cap * 2 > (size_t)max_bytes + 1 ? (size_t)max_bytes + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				st = perr_set(e, PPLAN_ENOMEM, "%s: out of memory reading it", path);
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			st = perr_set(e, PPLAN_EINPUT, "%s: cannot read: %s", path,
				      strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > (size_t)max_bytes) {
		st = perr_set(e, PPLAN_EINPUT, "%s: more than the %ld bytes pplan reads as %s",
			      path, max_bytes, what);
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
	if (len_out)
		*len_out = (long)len;
out:
	free(buf);
	close(fd);
	return st;
}

/* The deepest nesting of arrays and objects, outside strings. */
static int json_depth(const char *s, size_t n)
{
	int depth = 0, max = 0, in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '[' || ch == '{') {
			if (++depth > max)
				max = depth;
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	return max;
}

enum pplan_status json_read_limited(const char *path, long max_bytes,
				    const char *what, cJSON **out,
				    struct perr *e)
{
	char *buf = NULL;
	long len = 0;
	const char *end = NULL;
	enum pplan_status st = file_read(path, max_bytes, what, &buf, &len, e);

	*out = NULL;
	if (st != PPLAN_OK)
		return st;
	if (len == 0) {
		free(buf);
		return perr_set(e, PPLAN_EINPUT, "%s: empty file, expected JSON", path);
	}
	if (json_depth(buf, (size_t)len) > CJSON_NESTING_LIMIT) {
		free(buf);
		return perr_set(e, PPLAN_EINPUT,
				"%s: JSON nested more than %d levels deep, the limit of the JSON parser",
				path, CJSON_NESTING_LIMIT);
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

enum pplan_status json_read_file(const char *path, cJSON **out, struct perr *e)
{
	return json_read_limited(path, JSON_MAX_BYTES, "JSON", out, e);
}

/* ---- writing ----------------------------------------------------------------- */

enum pplan_status output_check(const char *path, const char *opt, struct perr *e)
{
	struct stat sb;
	char dir[PATH_MAX];
	const char *slash;

	if (!path || !path[0])
		return perr_set(e, PPLAN_EINPUT, "%s needs a file name", opt);
	if (strcmp(path, "-") == 0)
		return PPLAN_OK;
	if (stat(path, &sb) == 0) {
		if (S_ISDIR(sb.st_mode) || S_ISBLK(sb.st_mode) || S_ISSOCK(sb.st_mode))
			return perr_set(e, PPLAN_EINPUT,
					"%s %s: is %s, not a file name (pplan writes a regular file, a new name, a device or a FIFO)",
					opt, path, file_kind_name(sb.st_mode));
		if (access(path, W_OK) != 0)
			return perr_set(e, PPLAN_EINPUT, "%s %s: cannot write it: %s",
					opt, path, strerror(errno));
		if (!S_ISREG(sb.st_mode))
			return PPLAN_OK; /* a device or a FIFO: written directly */
	} else if (errno != ENOENT && errno != ENOTDIR) {
		return perr_set(e, PPLAN_EINPUT, "%s %s: %s", opt, path, strerror(errno));
	}
	/* A regular file or a new name: its folder takes the temporary file. */
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else if ((size_t)(slash - path) < sizeof dir)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	else
		return perr_set(e, PPLAN_EINPUT, "%s %s: path too long", opt, path);
	if (stat(dir, &sb) != 0)
		return perr_set(e, PPLAN_EINPUT, "%s %s: the folder %s does not exist",
				opt, path, dir);
	if (!S_ISDIR(sb.st_mode))
		return perr_set(e, PPLAN_EINPUT, "%s %s: %s is not a folder", opt, path, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return perr_set(e, PPLAN_EINPUT, "%s %s: cannot write in the folder %s: %s",
				opt, path, dir, strerror(errno));
	return PPLAN_OK;
}

static enum pplan_status write_all(int fd, const char *text, size_t len,
				   const char *path, struct perr *e)
{
	while (len > 0) {
		ssize_t n = write(fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return perr_set(e, PPLAN_ESYSTEM, "%s: write failed: %s", path,
					strerror(n < 0 ? errno : EIO));
		text += n;
		len -= (size_t)n;
	}
	return PPLAN_OK;
}

/* A character device or a FIFO: written in place, never created. */
static enum pplan_status write_direct(const char *path, const char *text,
				      size_t len, struct perr *e)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	enum pplan_status st;

	if (fd < 0)
		return perr_set(e, errno == ENXIO ? PPLAN_EINPUT : PPLAN_ESYSTEM,
				"%s: cannot write: %s", path,
				errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	st = write_all(fd, text, len, path, e);
	if (close(fd) != 0 && st == PPLAN_OK)
		st = perr_set(e, PPLAN_ESYSTEM, "%s: write failed: %s", path,
			      strerror(errno));
	return st;
}

/* A regular file or a new name: a temporary file beside it, renamed. */
static enum pplan_status write_replace(const char *path, const char *text,
				       size_t len, struct perr *e)
{
	char tmp[PATH_MAX];
	mode_t mask = umask(0);
	enum pplan_status st;
	int fd;

	umask(mask);
	if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
		return perr_set(e, PPLAN_EINPUT, "%s: path too long", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return perr_set(e, errno == ENOENT || errno == ENOTDIR ? PPLAN_EINPUT
								     : PPLAN_ESYSTEM,
				"%s: cannot write: %s", path, strerror(errno));
	(void)fchmod(fd, 0666 & ~mask);
	st = write_all(fd, text, len, path, e);
	if (close(fd) != 0 && st == PPLAN_OK)
		st = perr_set(e, PPLAN_ESYSTEM, "%s: write failed: %s", path,
			      strerror(errno));
	if (st == PPLAN_OK && rename(tmp, path) != 0)
		st = perr_set(e, PPLAN_ESYSTEM, "%s: cannot write: %s", path,
			      strerror(errno));
	if (st != PPLAN_OK)
		unlink(tmp);
	return st;
}

enum pplan_status text_write_atomic(const char *path, const char *text,
				    struct perr *e)
{
	size_t len = strlen(text);
	char real[PATH_MAX];
	struct stat sb;

	if (strcmp(path, "-") == 0) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
			return perr_set(e, PPLAN_ESYSTEM, "stdout: write failed: %s",
					strerror(errno));
		return PPLAN_OK;
	}
	if (lstat(path, &sb) != 0) {
		if (errno != ENOENT)
			return perr_set(e, PPLAN_ESYSTEM, "%s: cannot write: %s", path,
					strerror(errno));
		return write_replace(path, text, len, e);
	}
	if (S_ISLNK(sb.st_mode)) {
		if (stat(path, &sb) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s: a symbolic link to nothing; pplan does not replace it",
					path);
		/* A regular file: replace the file the link names, keep the
		 * link.  Anything else is written through the link. */
		if (S_ISREG(sb.st_mode)) {
			if (!realpath(path, real))
				return perr_set(e, PPLAN_ESYSTEM, "%s: cannot write: %s",
						path, strerror(errno));
			path = real;
		}
	}
	if (S_ISREG(sb.st_mode))
		return write_replace(path, text, len, e);
	if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode))
		return write_direct(path, text, len, e);
	return perr_set(e, PPLAN_EINPUT,
			"%s: is %s, not a file name (pplan writes a regular file, a new name, a device or a FIFO)",
			path, file_kind_name(sb.st_mode));
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
	double v = 0;
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

enum pplan_status json_get_first_long(const cJSON *obj, const char *const *keys, long min,
				      long max, long *out, const char **used,
				      const char *where, struct perr *e)
{
	*used = keys[0];
	for (; *keys; keys++) {
		long v = 0;
		enum pplan_status st = json_get_long(obj, *keys, &v, min, where, e);
		if (st == PPLAN_ENOTFOUND)
			continue;
		*used = *keys;
		if (st == PPLAN_OK && v > max)
			st = perr_set(e, PPLAN_EINPUT, "%s: %s must be at most %ld, got %ld",
				      where, *keys, max, v);
		if (st == PPLAN_OK)
			*out = v;
		return st;
	}
	return PPLAN_ENOTFOUND;
}

enum pplan_status json_get_long_in(const cJSON *obj, const char *key, long min, long max,
				   long *out, const char *where, struct perr *e)
{
	const char *keys[] = { key, NULL }, *used;
	return json_get_first_long(obj, keys, min, max, out, &used, where, e);
}

enum pplan_status json_get_first_number(const cJSON *obj, const char *const *keys, double lo,
					double hi, const char *unit, double *out,
					const char *where, struct perr *e)
{
	for (; *keys; keys++) {
		double v = 0;
		enum pplan_status st = json_get_number(obj, *keys, &v, where, e);
		if (st == PPLAN_ENOTFOUND)
			continue;
		if (st == PPLAN_OK && !(v > lo && v <= hi))
			st = perr_set(e, PPLAN_EINPUT, "%s: %s must be more than %g and at most %g%s%s, got %g",
				      where, *keys, lo, hi, unit[0] ? " " : "", unit, v);
		if (st == PPLAN_OK)
			*out = v;
		return st;
	}
	return PPLAN_ENOTFOUND;
}

enum pplan_status json_get_number_in(const cJSON *obj, const char *key, double lo, double hi,
				     const char *unit, double *out, const char *where,
				     struct perr *e)
{
	const char *keys[] = { key, NULL };
	return json_get_first_number(obj, keys, lo, hi, unit, out, where, e);
}

enum pplan_status json_required(enum pplan_status st, const char *key, const char *where,
				struct perr *e)
{
	if (st == PPLAN_ENOTFOUND)
		return perr_set(e, PPLAN_EINPUT, "%s: %s is missing", where, key);
	return st;
}

void json_add_number_or_null(cJSON *obj, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}
