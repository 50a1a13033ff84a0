/* testutil.c: helpers shared by the Criterion tests (testutil.h). */
#include "testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"

int run_pplan(char *const argv[])
{
	return run_pplan_to(argv, NULL, NULL);
}

char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

int run_pplan_to(char *const argv[], const char *out_path, const char *err_path)
{
	const char *bin = getenv("PPLAN_BIN");
	pid_t pid;
	int status = 0;
	if (!bin || !*bin)
		cr_skip_test("PPLAN_BIN is not set (ctest sets it)");
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		int fo = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : fd;
		int fe = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : fd;
		if (fo >= 0)
			dup2(fo, 1);
		if (fe >= 0)
			dup2(fe, 2);
		execv(bin, argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void use_framework(struct train_opts *o, const char *name, int year)
{
	const struct framework *f = NULL;
	struct perr e = { "" };
	cr_assert_eq(framework_find(name, NULL, year, &f, &e), PPLAN_OK, "%s", e.msg);
	o->fw = f;
	cr_assert_eq(train_opts_resolve(o, &e), PPLAN_OK, "%s", e.msg);
}
