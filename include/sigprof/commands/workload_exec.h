/*
 * workload_exec.h: the last steps of a workload's start, shared by
 * workload.c (a workload forked from sigprof itself) and the spawner
 * program (profiler/commands/spawner/workload_spawner.c, a static
 * executable of its own that links nothing of sigprof's: hence inline).
 *
 * Layer: commands.  Only system calls: it runs in the child of a threaded
 * process.
 */
#ifndef SIGPROF_WORKLOAD_EXEC_H
#define SIGPROF_WORKLOAD_EXEC_H

#include <errno.h>
#include <unistd.h>

/* The exit status of a workload that could not run: 127 when not found, 126 otherwise (as a shell). */
#define WORKLOAD_EXIT_NOT_FOUND 127
#define WORKLOAD_EXIT_NOT_EXEC 126

/*
 * Wait for sigprof's go (a byte on go_fd), then exec argv; an exec that
 * fails sends its errno up exec_err_fd (which the exec closes when it
 * works: close-on-exec) and exits 127 or 126.
 */
static inline void __attribute__((noreturn)) workload_release_and_exec(char **argv, int go_fd, int exec_err_fd)
{
	char go;
	if (read(go_fd, &go, 1) != 1)
		_exit(WORKLOAD_EXIT_NOT_FOUND); /* sigprof gave up before releasing us */
	close(go_fd);
	execvp(argv[0], argv);
	int err = errno;
	if (write(exec_err_fd, &err, sizeof(err)) < 0)
		_exit(WORKLOAD_EXIT_NOT_FOUND);
	_exit(err == ENOENT ? WORKLOAD_EXIT_NOT_FOUND : WORKLOAD_EXIT_NOT_EXEC);
}

#endif
