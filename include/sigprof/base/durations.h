/*
 * durations.h: the small aggregates of durations the analyzers share.
 *
 * duration_stats keeps count, total, min and max exactly and the
 * distribution in a log-linear histogram (64 sub-buckets per power of two:
 * any percentile is within 1.6% of the true value), so p50/p99 of millions
 * of durations cost a fixed 8 KiB.
 */
#ifndef SIGPROF_DURATIONS_H
#define SIGPROF_DURATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/base/util.h"

#define DURATION_SUB_BUCKETS 64
#define DURATION_BUCKETS (64 * DURATION_SUB_BUCKETS)

struct duration_stats {
	uint64_t count;
	uint64_t total;
	uint64_t min, max;
	uint32_t *histogram; /* DURATION_BUCKETS counters, allocated on first add */
};

void duration_add(struct duration_stats *d, uint64_t value);
/* Merge src into dst. */
void duration_merge(struct duration_stats *dst, const struct duration_stats *src);
/* The value at quantile q (0..1): exact for 0 and 1 (min/max), else within 1.6%; 0 when empty. */
uint64_t duration_quantile(const struct duration_stats *d, double q);
double duration_mean(const struct duration_stats *d);
void duration_free(struct duration_stats *d);

/*
 * The slowest of one kind of event (a handler's run, a wait): how long,
 * when it began and ended (ns of the perf clock, as the samples' times),
 * and whose, so that the report can point at it for `sigprof script
 * --time START,END --tid TID` to show the events around it.
 */
struct slowest_event {
	uint64_t ns;          /* 0 with start 0: none seen */
	uint64_t start, end;
	uint32_t pid, tid;    /* pid 0: not known */
};

/* Keep [start, end) of tid when it is the longest so far (the first of equals). */
void slowest_event_note(struct slowest_event *s, uint64_t start, uint64_t end, uint32_t pid, uint32_t tid);

#endif
