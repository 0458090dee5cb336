/*
 * diff_run.c: `sigprof diff -r N --run BASECMD... -- NEWCMD...`, both sides
 * recorded by this command, alternately (base 1, new 1, base 2, ...), so
 * that a drift of the machine during the series falls on both sides alike;
 * the recordings are kept as base.N.data and new.N.data (in --run-dir, the
 * current directory by default) and compared as `diff base.*.data --
 * new.*.data` would.  Each run is `sigprof record -q -o FILE -- CMD`, run by
 * this same executable (/proc/self/exe), so record's defaults apply.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sigprof/base/util.h"
#include "sigprof/commands/diff.h"

/* Run `sigprof record -q -o file -- cmd...`; its exit status, or -errno when it could not run. */
static int record_one(const char *file, char **cmd, int argc)
{
	char **argv = xcalloc((size_t)argc + 7, sizeof(*argv));
	int n = 0;
	argv[n++] = "sigprof";
	argv[n++] = "record";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = (char *)file;
	argv[n++] = "--";
	for (int i = 0; i < argc; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		free(argv);
		return err;
	}
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	free(argv);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int diff_record_sides(const struct diff_run *r, char ***files, char *err, size_t errlen)
{
	char **names = xcalloc(2 * (size_t)r->runs, sizeof(*names));
	for (unsigned run = 1; run <= r->runs; run++)
		for (int side = 0; side < 2; side++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s.%u.data", r->dir, side ? "new" : "base", run);
			size_t at = (size_t)side * r->runs + run - 1;
			names[at] = xstrdup(path);
			int status = record_one(path, side ? r->new_cmd : r->base_cmd, side ? r->new_argc : r->base_argc);
			if (status != 0) {
				if (status < 0)
					snprintf(err, errlen, "cannot run sigprof record for %s: %s", path, strerror(-status));
				else
					snprintf(err, errlen, "sigprof record of the %s side's run %u (%s) exited %d", side ? "new" : "base",
						 run, path, status);
				for (size_t i = 0; i < 2 * (size_t)r->runs; i++)
					free(names[i]);
				free(names);
				return -EIO;
			}
		}
	*files = names;
	return 0;
}
