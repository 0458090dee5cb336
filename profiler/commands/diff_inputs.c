/*
 * diff_inputs.c: what `sigprof diff` says about its inputs before it
 * compares them (diff.h): a file named twice on one side, and a run whose
 * workload did not end normally.
 *
 * One file given twice on a side is read once: counted twice, its copy
 * would be a run with the very same figures, a spread of zero that makes
 * every row look repeatable (240 of 338 rows were "significant" that way).
 * Files are the same when they are the same inode, whatever the path says
 * (x.data, ./x.data, a hard link).  A run that was interrupted (exit 130)
 * or failed still has figures, compared as they are; the warning says
 * which run it was.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sigprof/base/util.h"
#include "sigprof/commands/diff.h"

size_t diff_drop_repeated_inputs(const char **files, size_t n, const char *side)
{
	struct stat *seen = xcalloc(n + 1, sizeof(*seen));
	size_t *times = xcalloc(n + 1, sizeof(*times));
	bool *known = xcalloc(n + 1, sizeof(*known));
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		size_t first = kept;
		if (stat(files[i], &st) == 0)
			for (size_t k = 0; k < kept; k++)
				if (known[k] && seen[k].st_dev == st.st_dev && seen[k].st_ino == st.st_ino) {
					first = k;
					break;
				}
		if (first < kept) {
			times[first]++;
			continue;
		}
		/* unreadable here: kept, for the reader's one error line */
		known[kept] = stat(files[i], &seen[kept]) == 0;
		times[kept] = 1;
		files[kept++] = files[i];
	}
	for (size_t k = 0; k < kept; k++)
		if (times[k] > 1)
			sp_warn("diff: %s is given %zu times on the %s side: read once (a copy of a run is no second run)",
				QUOTED(files[k]), times[k], side);
	free(seen);
	free(times);
	free(known);
	return kept;
}

void diff_warn_run_exit(const char *file, int exit_status)
{
	if (exit_status <= 0)
		return;
	if (exit_status == 128 + SIGINT)
		sp_warn("diff: %s: its workload was interrupted (exit 130, SIGINT): its figures, of part of a run, are "
			"compared as a whole run's", QUOTED(file));
	else if (exit_status > 128 && exit_status < 128 + NSIG)
		sp_warn("diff: %s: its workload was killed by %s (exit %d): its figures are compared as a whole run's",
			QUOTED(file), sigabbrev_np(exit_status - 128) ? sigabbrev_np(exit_status - 128) : "a signal",
			exit_status);
	else
		sp_warn("diff: %s: its workload exited %d (a failure): its figures are compared as a whole run's",
			QUOTED(file), exit_status);
}
