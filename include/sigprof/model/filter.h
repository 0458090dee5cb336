/*
 * filter.h: report's --pid, --tid, --comm, --dso, --time and
 * --percent-limit (docs/filters.md).
 *
 * The profile loader applies a filter before anything else sees a record,
 * so the path table, every collector's section, the JSON and the figures
 * all agree.  The rules:
 *   - a sample is kept when its task (the pid and tid the kernel recorded:
 *     the task the event fired in) passes --pid/--tid/--comm, its time is
 *     inside --time's window, and its sampled address (the leaf frame) is
 *     in a --dso;
 *   - a record that is not a sample (a context switch, ...) reaches the
 *     analyzers under the same task and time rules (no --dso: it has no
 *     address); the records that describe tasks and mappings (COMM, MMAP,
 *     FORK, EXIT) always feed the process table, so symbols stay right;
 *   - --time cuts the recording as if it had started at START and stopped
 *     at END.  A bound is seconds from the first record, a percentage of
 *     the recording, or a time of the recording's clock as sigprof script
 *     and the report's "slowest" lines print it (a value at or after the
 *     first record's time that is past the span as an offset: only a
 *     recording longer than the uptime at its start is ambiguous, and there
 *     the offset wins), so report, script and diff read one --time alike; such an
 *     END includes its last digit whole.  A state machine sees the window's edges as it sees a
 *     recording's.  A scheduler wait that began before START is not
 *     counted (its switch-out is outside); one still open at END is open
 *     at the end of the recording.  A signal generated before START and
 *     delivered inside is an unmatched delivery.
 *   - --percent-limit hides rows (paths, functions, stacks) whose share of
 *     their collector's samples is below it; it drops nothing from totals.
 *
 * Layer: model.  Parsing returns -EINVAL with one line in err.
 */
#ifndef SIGPROF_FILTER_H
#define SIGPROF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile_filter {
	uint32_t *pids;          /* --pid: keep these processes (NULL: every one) */
	size_t npids;
	uint32_t *tids;          /* --tid: keep these threads */
	size_t ntids;
	char **comms;            /* --comm: keep the processes with these names */
	size_t ncomms;
	char **dsos;             /* --dso: keep samples whose leaf frame's DSO is one of these (basename or path) */
	size_t ndsos;
	bool has_time;           /* --time given */
	double time_start, time_end; /* seconds from the recording's first record, or percents of its span */
	bool start_percent, end_percent;
	bool has_end;            /* END given (else: to the end) */
	uint64_t end_digit_ns;   /* the ns END's last digit stands for: an END in the clock includes it whole */
	double percent_limit;    /* --percent-limit: rows below this share are hidden; 0: none */
};

/* Each adds the comma-separated items of text to the filter; 0 or -EINVAL with the reason in err. */
int filter_add_pids(struct profile_filter *f, const char *text, bool threads, char *err, size_t errlen);
int filter_add_names(struct profile_filter *f, const char *text, bool dsos, char *err, size_t errlen);
/* --time START,END: each a number of seconds or a percentage (N%), either may be empty. */
int filter_set_time(struct profile_filter *f, const char *text, char *err, size_t errlen);
/* --percent-limit PCT: from 0 to 100. */
int filter_set_percent_limit(struct profile_filter *f, const char *text, char *err, size_t errlen);
/* Whether any filter that drops samples (all but --percent-limit) is set. */
bool filter_drops(const struct profile_filter *f);
/* The filters as a header line: "--pid 12 --time 1,2"; empty when none. */
void filter_describe(const struct profile_filter *f, char *buf, size_t len);
/*
 * Whether a task passes --pid, --tid and --comm: --comm matches the
 * process's name (comm) or the thread's own (thread_comm); NULL when unknown.
 */
bool filter_task(const struct profile_filter *f, uint32_t pid, uint32_t tid, const char *comm,
		 const char *thread_comm);
/* Whether a DSO name (a path, [kernel.kallsyms], ...) passes --dso. */
bool filter_dso(const struct profile_filter *f, const char *dso);
/*
 * The window of --time in the recording's clock, given the times of its
 * first and last records: [*start, *end), half-open so that adjacent
 * windows (,50% and 50%,) split the recording; an END past the last
 * record is UINT64_MAX.
 */
void filter_window(const struct profile_filter *f, uint64_t first, uint64_t last, uint64_t *start,
		   uint64_t *end);
/*
 * Whether a --time bound of seconds is a time of the recording's clock,
 * not an offset from its start: at or after its first record's time, and
 * past the recording's span as an offset (last: UINT64_MAX when unknown).
 */
bool filter_time_is_clock(double seconds, uint64_t first, uint64_t last);
void filter_free(struct profile_filter *f);

#endif
