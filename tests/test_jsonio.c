/*
 * test_jsonio.c: reading and writing files safely (topology/jsonio.c).
 * Reading refuses what is not a regular file before anything could block
 * on it (F13: a FIFO with no writer blocked for ever), and files past
 * their kind's limit by size (F11: a 200 MB model file took 8 GB to
 * refuse).  Writing never replaces anything but a regular file (F12:
 * --json on a device node renamed a regular file over it), writes devices
 * directly, and leaves no temporary file behind.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "jsonio.h"

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/pplan-jsonio-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static const char *in_dir(const char *name)
{
	static char path[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
	return path[k];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* No "NAME.tmp.*" left in the folder. */
static int temp_files_left(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "ls '%s' | grep -q '\\.tmp\\.'", dir);
	return system(cmd) == 0;
}

TestSuite(jsonio, .init = make_dir, .fini = remove_dir);

Test(jsonio, read_refuses_what_is_not_a_regular_file)
{
	char *buf = (char *)1;
	struct perr e;
	const char *fifo = in_dir("fifo");

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	/* Returns at once (no writer would ever come) and says what it is. */
	cr_assert_eq(file_read(fifo, 1000, "a model file", &buf, NULL, &e), PPLAN_EINPUT);
	cr_assert_null(buf);
	cr_assert(strstr(e.msg, "is a FIFO (named pipe)") && strstr(e.msg, "a model file"),
		  "%s", e.msg);
	cr_assert_eq(file_read(dir, 1000, "a model file", &buf, NULL, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "is a directory"), "%s", e.msg);
	cr_assert_eq(file_read("/dev/zero", 1000, "a model file", &buf, NULL, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "/dev/zero is a character device"), "%s", e.msg);
	cr_assert_eq(file_read(in_dir("absent"), 1000, "x", &buf, NULL, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "cannot open: No such file"), "%s", e.msg);
}

Test(jsonio, read_limit_by_size_and_by_what_is_read)
{
	char *buf = NULL;
	long len = 0;
	struct perr e;
	const char *p = in_dir("ten");

	put(p, "0123456789");
	cr_assert_eq(file_read(p, 10, "x", &buf, &len, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(len, 10);
	cr_assert_str_eq(buf, "0123456789");
	free(buf);
	cr_assert_eq(file_read(p, 9, "a cluster file", &buf, &len, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "10 bytes is more than the 9 bytes pplan reads as a cluster file"),
		  "%s", e.msg);
	/* /proc files say size 0: the content counts, up to the limit. */
	cr_assert_eq(file_read("/proc/self/status", 1 << 20, "x", &buf, &len, &e), PPLAN_OK,
		     "%s", e.msg);
	cr_assert(len > 0 && strstr(buf, "Name:"));
	free(buf);
	cr_assert_eq(file_read("/proc/self/status", 16, "x", &buf, &len, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "more than the 16 bytes"), "%s", e.msg);
}

Test(jsonio, json_nesting_limit_is_named)
{
	static char deep[4 * CJSON_NESTING_LIMIT];
	cJSON *doc = (cJSON *)1;
	struct perr e;
	const char *p = in_dir("deep.json");
	int n = CJSON_NESTING_LIMIT + 1;

	memset(deep, '[', (size_t)n);
	memset(deep + n, ']', (size_t)n);
	deep[2 * n] = '\0';
	put(p, deep);
	cr_assert_eq(json_read_file(p, &doc, &e), PPLAN_EINPUT);
	cr_assert_null(doc);
	cr_assert(strstr(e.msg, "nested more than 1000 levels deep"), "%s", e.msg);
	/* At the limit it parses; brackets inside strings do not count. */
	deep[2 * n - 1] = '\0';
	memmove(deep, deep + 1, (size_t)(2 * n - 1));
	put(p, deep);
	cr_assert_eq(json_read_file(p, &doc, &e), PPLAN_OK, "%s", e.msg);
	cJSON_Delete(doc);
	put(p, "{\"a\": \"[[[[[[[[[[\\\"[[[[\"}");
	cr_assert_eq(json_read_limited(p, 100, "x", &doc, &e), PPLAN_OK, "%s", e.msg);
	cJSON_Delete(doc);
}

Test(jsonio, write_replaces_a_regular_file_and_keeps_a_link)
{
	struct perr e;
	char *buf = NULL;
	struct stat sb;
	const char *real = in_dir("real.json"), *link = in_dir("link.json");

	put(real, "old");
	cr_assert_eq(symlink("real.json", link), 0);
	cr_assert_eq(text_write_atomic(link, "new\n", &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(lstat(link, &sb), 0);
	cr_assert(S_ISLNK(sb.st_mode), "the link was replaced");
	cr_assert_eq(file_read(real, 100, "x", &buf, NULL, &e), PPLAN_OK);
	cr_assert_str_eq(buf, "new\n");
	free(buf);
	cr_assert_eq(text_write_atomic(in_dir("fresh.json"), "x", &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(stat(in_dir("fresh.json"), &sb), 0);
	cr_assert(S_ISREG(sb.st_mode));
	cr_assert(!temp_files_left());
}

Test(jsonio, write_never_replaces_a_device_or_a_folder)
{
	struct perr e;
	struct stat sb;

	/* Written directly: a device stays a device.  A private node (as
	 * root; skipped otherwise), never the system's /dev/null. */
	if (mknod(in_dir("devnull"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
		cr_assert_eq(text_write_atomic(in_dir("devnull"), "{}\n", &e), PPLAN_OK,
			     "%s", e.msg);
		cr_assert_eq(stat(in_dir("devnull"), &sb), 0);
		cr_assert(S_ISCHR(sb.st_mode));
		cr_assert_eq(output_check(in_dir("devnull"), "--json", &e), PPLAN_OK, "%s", e.msg);
	}
	/* A folder is refused, by the check and by the writer. */
	cr_assert_eq(output_check(dir, "--json", &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "--json") && strstr(e.msg, "is a directory"), "%s", e.msg);
	cr_assert_eq(text_write_atomic(dir, "x", &e), PPLAN_EINPUT);
	cr_assert_eq(stat(dir, &sb), 0);
	cr_assert(S_ISDIR(sb.st_mode));
	/* A FIFO with no reader: refused at once, not waited on. */
	cr_assert_eq(mkfifo(in_dir("fifo"), 0600), 0);
	cr_assert_eq(text_write_atomic(in_dir("fifo"), "x", &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "a FIFO with no reader"), "%s", e.msg);
	cr_assert_eq(stat(in_dir("fifo"), &sb), 0);
	cr_assert(S_ISFIFO(sb.st_mode));
	cr_assert(!temp_files_left());
}

Test(jsonio, output_check_names_the_missing_folder)
{
	struct perr e;

	cr_assert_eq(output_check("-", "--json", &e), PPLAN_OK);
	cr_assert_eq(output_check(in_dir("new.json"), "--json", &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(output_check(in_dir("no/such/x.json"), "--trace", &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "--trace") && strstr(e.msg, "does not exist"), "%s", e.msg);
	put(in_dir("file"), "x");
	cr_assert_eq(output_check(in_dir("file/x.json"), "--out", &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "is not a folder"), "%s", e.msg);
	cr_assert_eq(output_check("", "--json", &e), PPLAN_EINPUT);
}
