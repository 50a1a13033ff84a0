/* testutil.c: helpers shared by the Criterion tests (testutil.h). */
#include "testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int run_pplan(char *const argv[])
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
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
