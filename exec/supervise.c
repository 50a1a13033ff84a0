/*
 * supervise.c: a rank killed by a signal is named, and the run ends with
 * status 1 (exec.h, exec_supervise).
 *
 * A process killed by SIGKILL (the kernel's out-of-memory killer, a user,
 * a scheduler) runs no code of its own: the other ranks notice it is gone
 * and say so, but the launcher then ends the job with the dead process's
 * status (Open MPI: 137), and under `mpirun -q` nothing names the rank.
 * So under a launcher, before MPI starts, pplan exec forks: the child is
 * the rank (it calls MPI_Init, so the launcher's PMI connects it), the
 * parent, which the launcher started, only waits for it, passes on the
 * signals the launcher sends (continuing a stopped rank), and when the
 * child dies by a signal it did not pass on, says which rank, which
 * process and which signal, and exits 1.  The child dies with its parent
 * (PR_SET_PDEATHSIG), so a launcher that kills the parent leaves
 * nothing behind.  A run without a launcher, or of one rank, is not
 * forked (valgrind and a debugger see the rank itself).  A parent
 * stopped on its own (SIGSTOP to it alone) would hold the launcher after
 * the rank ends, with no word: the rank, as it exits, says so and
 * continues it (exec_release_supervisor).
 */
#define _GNU_SOURCE
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t rank_pid;    /* the child, once forked */
static volatile sig_atomic_t passed_on;   /* the last signal passed to it */
static pid_t supervisor;                  /* in the rank: its parent; 0 unsupervised */
static char stat_path[40];                /* /proc/<supervisor>/stat */
static char released_msg[200];            /* said when it is continued */

/* Async-signal-safe: is the supervisor stopped by a signal (state T in
 * /proc/<pid>/stat, the field after the command's closing parenthesis)? */
static int supervisor_stopped(void)
{
	char buf[512];
	ssize_t n;
	int fd = open(stat_path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	for (ssize_t i = n - 1; i > 0; i--)
		if (buf[i] == ')')
			return i + 2 < n && buf[i + 2] == 'T';
	return 0;
}

void exec_release_supervisor(void)
{
	if (supervisor <= 0 || getppid() != supervisor || !supervisor_stopped())
		return;
	if (write(STDERR_FILENO, released_msg, strlen(released_msg)) < 0)
		return;
	kill(supervisor, SIGCONT);
}

/* The signal goes on to the rank, and a rank stopped (SIGSTOP, a
 * debugger's pause) is continued so that it can act on it: a launcher
 * that signals only the process it started would otherwise wait on it
 * for ever. */
static void pass_on(int sig)
{
	passed_on = sig;
	if (rank_pid > 0) {
		kill((pid_t)rank_pid, sig);
		kill((pid_t)rank_pid, SIGCONT);
	}
}

/* The first of the launchers' variables that is set, as a number; -1. */
static long env_long(const char *const *names)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		char *end;
		long n;
		if (!v || !*v)
			continue;
		n = strtol(v, &end, 10);
		if (*end == '\0' && n >= 0)
			return n;
	}
	return -1;
}

/* Open MPI, MPICH and Hydra (PMI), Slurm. */
static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
					 NULL };
static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
					 NULL };

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGKILL: return "SIGKILL";
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGTERM: return "SIGTERM";
	case SIGINT: return "SIGINT";
	case SIGHUP: return "SIGHUP";
	case SIGQUIT: return "SIGQUIT";
	case SIGPIPE: return "SIGPIPE";
	case SIGXCPU: return "SIGXCPU";
	default: return NULL;
	}
}

int exec_supervise(int *exit_code)
{
	static const int passed[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	long ranks = env_long(size_vars), rank = env_long(rank_vars);
	pid_t parent = getpid(), pid;
	struct sigaction sa;
	int status = 0;
	char host[64] = "?";
	const char *name;

	if (ranks < 2)
		return 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 0; /* run unsupervised: the rank still runs */
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* the parent died before prctl */
			_exit(1);
		supervisor = parent;
		snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", (int)parent);
		snprintf(released_msg, sizeof released_msg,
			 "pplan exec: rank %ld's supervising process (pid %d) was stopped (SIGSTOP) and would hold the launcher: continued as the rank ends\n",
			 rank, (int)parent);
		atexit(exec_release_supervisor);
		return 0;
	}
	rank_pid = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pass_on;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
		sigaction(passed[i], &sa, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			*exit_code = 1;
			return 1;
		}
	if (WIFEXITED(status)) {
		*exit_code = WEXITSTATUS(status);
		return 1;
	}
	*exit_code = 1;
	if (!WIFSIGNALED(status) || WTERMSIG(status) == passed_on)
		return 1; /* the launcher's own signal: the rank said what it could */
	gethostname(host, sizeof host - 1);
	name = signal_name(WTERMSIG(status));
	if (name)
		fprintf(stderr, "pplan exec: rank %ld (pid %d, %s) was killed by %s%s; exit status 1\n",
			rank, (int)pid, host, name,
			WTERMSIG(status) == SIGKILL
				? " (the kernel's out-of-memory killer, a user or a scheduler)"
				: "");
	else
		fprintf(stderr, "pplan exec: rank %ld (pid %d, %s) was killed by signal %d; exit status 1\n",
			rank, (int)pid, host, WTERMSIG(status));
	return 1;
}
