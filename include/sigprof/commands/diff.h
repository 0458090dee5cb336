/*
 * diff.h: what `sigprof diff` (profiler/commands/diff.c) reads of a `sigprof stat
 * --json` document (profiler/commands/stat_document.c, apart because json-c's names
 * and our JSON writer's would clash in one file).
 *
 * Layer: commands.  A document's figures become rows under LKP's keys, one
 * set per run of its -r runs (docs/diff.md):
 *
 *   perf-stat.total.NAME      the run's count (tracepoint counts are exact)
 *   perf-stat.ps.NAME         the count per second of the run's elapsed time
 *   perf-stat.i.NAME          with -I and one run: the mean of the intervals' rates
 *   perf-stat.overall.NAME    a derived figure (MPKI, IPC, ...), and LKP's names
 *                             cache-miss-rate%, ipc, cpi (1 / IPC)
 *   time.elapsed_time         the run's wall-clock seconds
 *   time.FIELD                the workload's rusage, when the document has it
 *                             (units: lkp_time_unit(), as a recording's)
 */
#ifndef SIGPROF_DIFF_H
#define SIGPROF_DIFF_H

#include <stdbool.h>
#include <stddef.h>

/* One figure of run `run` (from 0) of the document. */
typedef void (*diff_figure_fn)(void *ctx, size_t run, const char *key, const char *unit, bool exact, double value);

/*
 * Parse a stat document (NUL-terminated text) and hand each figure of each
 * run to add; *runs is the document's runs.  0, or -EINVAL with a one-line
 * reason in err (not JSON, not a stat document, more than max_runs runs).
 */
int diff_stat_document(const char *text, size_t max_runs, diff_figure_fn add, void *ctx, size_t *runs, char *err,
		       size_t errlen);

/*
 * The document's command (its "command" array joined by blanks) into buf;
 * empty when the text has none or is no document.
 */
void diff_stat_command(const char *text, char *buf, size_t len);
/* The document's "exit_status" (its last run's workload), or -1 when it has none. */
int diff_stat_exit_status(const char *text);

/*
 * The inputs of one side without the files given more than once (the same
 * inode: each is read once), in their order, with one warning line per
 * repeated file; returns how many remain (diff_inputs.c).
 */
size_t diff_drop_repeated_inputs(const char **files, size_t n, const char *side);
/*
 * One warning line when the run of file did not end well: exit_status the
 * workload's (130: interrupted, 128+N: killed by signal N, else failed);
 * nothing for 0 or a negative (unknown, not recorded).
 */
void diff_warn_run_exit(const char *file, int exit_status);

/*
 * diff -r N --run BASECMD... -- NEWCMD... (diff_run.c): record both sides
 * alternately, base.I.data and new.I.data in dir.
 */
struct diff_run {
	unsigned runs;
	const char *dir;
	char **base_cmd, **new_cmd;
	int base_argc, new_argc;
};

/*
 * Record the runs, base 1, new 1, base 2, ...; *files: the base side's
 * runs paths then the new side's (2 * runs, each and the array to free).
 * 0, or -EIO with a one-line reason in err (a recording that failed).
 */
int diff_record_sides(const struct diff_run *r, char ***files, char *err, size_t errlen);

#endif
