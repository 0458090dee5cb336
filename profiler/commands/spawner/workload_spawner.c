/*
 * workload_spawner.c: the small static program that sigprof forks its
 * workloads from, so that their rusage (the maximum resident set above
 * all) is their own.  profiler/commands/workload.c says why and carries
 * this program's image (workload_image.c); it runs it from a memfd.
 *
 *   workload-spawner SIGPROF-PID GO-FD EXEC-ERR-FD -- CMD [ARG...]
 *
 * It clones the workload with CLONE_PARENT, so that the workload is
 * sigprof's child (sigprof waits for it and opens its events), writes the
 * workload's pid (an int32) to EXEC-ERR-FD and exits.  The workload ties
 * its life to sigprof's (PR_SET_PDEATHSIG), waits for the go on GO-FD and
 * execs CMD (workload_exec.h).  Built with -static: no dynamic loader and
 * no libraries, so the pages a fork of it copies are a few dozen.
 */
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sigprof/commands/workload_exec.h"

int main(int argc, char **argv)
{
	if (argc < 6 || strcmp(argv[4], "--") != 0)
		return WORKLOAD_EXIT_NOT_FOUND;
	pid_t sigprof = (pid_t)atoi(argv[1]);
	int go_fd = atoi(argv[2]), exec_err_fd = atoi(argv[3]);
	if (fcntl(go_fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(exec_err_fd, F_SETFD, FD_CLOEXEC) < 0)
		return WORKLOAD_EXIT_NOT_FOUND;
	/* the raw system call: glibc's fork() has no CLONE_PARENT */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0)
		return WORKLOAD_EXIT_NOT_FOUND; /* sigprof reads no pid: "it died before it could start" */
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != sigprof)
			_exit(WORKLOAD_EXIT_NOT_FOUND);
		workload_release_and_exec(argv + 5, go_fd, exec_err_fd);
	}
	int32_t announced = (int32_t)pid;
	if (write(exec_err_fd, &announced, sizeof(announced)) != sizeof(announced)) {
		kill(pid, SIGKILL);
		return WORKLOAD_EXIT_NOT_FOUND;
	}
	return 0;
}
