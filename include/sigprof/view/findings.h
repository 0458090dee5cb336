/*
 * findings.h: what a recording found, one line each, for the first screen
 * of the text report (docs/report-summary.md).
 *
 * A collector contributes through the optional `findings` hook of its
 * analyzer (collector.h): findings_add() for a finding, findings_caveat()
 * for something that changes how to read the figures (estimated counts,
 * where cpu-clock samples land without a PMU).  The report ranks the
 * findings by the share of the workload's time they concern and prints
 * each with where to look next; it never reaches into a collector.
 *
 * A finding's share is either given (0 to 1 of the workload's time) or,
 * with paths set, the part of those paths' time it concerns (1: all of
 * it; two signals split the signal paths): the report multiplies it by
 * the cpu samples on those paths over the cpu samples of the workload
 * (the recorder's left out).  A finding about time spent on paths (a
 * kernel lock's wait) gives that time per path instead: its share is
 * that time, each path's no more than the path's cpu time, over the
 * workload's cpu time.
 *
 * Layer: view.  Library code: nothing here prints.
 */
#ifndef SIGPROF_FINDINGS_H
#define SIGPROF_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/model/paths.h"

/* The paths a finding concerns, as bits: FINDING_PATH(PATH_FUTEX_WAIT) | ... */
#define FINDING_PATH(path) (1u << (path))
/* A finding's share when neither given nor on a path: ranked after the others. */
#define FINDING_SHARE_UNKNOWN (-1.0)

struct finding {
	unsigned paths;   /* FINDING_PATH() bits whose cpu share ranks it; 0: share as given */
	uint64_t *path_ns; /* findings_add_path_time()'s time per path (PATH_COUNT), or NULL */
	double share;     /* of the workload's time, 0 to 1 (with paths: of theirs); FINDING_SHARE_UNKNOWN */
	char *text;       /* one line, no newline: "futex: 99 331 WAIT calls, 99.99% EAGAIN ..." */
	char *next;       /* where to look next: a section, an option, a script command */
};

struct findings {
	struct finding *items;
	size_t count, cap;
	char **caveats;   /* each once: findings_caveat() drops a repeat */
	size_t ncaveats, caveats_cap;
};

/* Add a finding: its share (or FINDING_SHARE_UNKNOWN with paths 0), where to look next, and its text (printf). */
void findings_add(struct findings *f, unsigned paths, double share, const char *next, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/*
 * Add a finding about time spent on paths (ns per path, PATH_COUNT of
 * them): ranked by that time, each path's at most its cpu time, over the
 * workload's cpu time.
 */
void findings_add_path_time(struct findings *f, const uint64_t *ns, const char *next, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Add a caveat (printf); one that is listed already is not added again. */
void findings_caveat(struct findings *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Sort the findings by share, largest first (unknown shares last, in the
 * order they came); the shares of path findings must be set before.
 */
void findings_sort(struct findings *f);
void findings_free(struct findings *f);

/*
 * A count as people read it on a first screen: "847", "8 860", "5.1 M",
 * "1.2 G" (thin grouping below a million); returns buf.
 */
const char *findings_count(unsigned long long n, char *buf, size_t len);
/* A duration in ns as "37 µs", "44 ms", "2.3 s"; returns buf. */
const char *findings_duration(unsigned long long ns, char *buf, size_t len);

#endif
