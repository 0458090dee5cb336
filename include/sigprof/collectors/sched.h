/*
 * sched.h: the sched collector's wait tracker and key builder
 * (collectors/sched.c), exposed so the unit tests can drive them with
 * synthetic event sequences.  docs/sched.md explains the figures.
 *
 * The tracker follows each task of the workload through its scheduler
 * events, in time order:
 *
 *   switch-out  (sched_switch, the task is prev)   opens a wait, charged to
 *                                                  the switch-out's stack
 *   waking      (sched_waking, the task is target) the first one after the
 *                                                  switch-out makes it ready
 *   switch-in   (PERF_RECORD_SWITCH, not OUT)      closes the wait
 *
 * and per stack adds up wait time (switch-in - switch-out), scheduling
 * delay (switch-in - ready) and their sum, as LKP's perf-sched figures do.
 * A task switched out runnable (preempted, yielding) is ready at once.
 * Times are nanoseconds of the perf clock; stacks are interned stack ids.
 */
#ifndef SIGPROF_SCHED_H
#define SIGPROF_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/base/durations.h"

enum sched_out_kind {
	SCHED_OUT_SLEEP,    /* blocked (S, D, ...): ready at its first waking */
	SCHED_OUT_RUNNABLE, /* preempted or yielding (R, R+): ready at the switch-out itself */
	SCHED_OUT_DEAD,     /* its last switch-out (X, Z): no wait follows */
};

/* The kind of a sched_switch prev_state (TASK_REPORT bits; 0 or the preempt bit alone: runnable). */
enum sched_out_kind sched_out_kind_of(int64_t prev_state);

/* Count, sum and maximum of one figure, in ns. */
struct sched_figure {
	uint64_t count;
	uint64_t total;
	uint64_t max;
};

/* The figures of one switch-out stack. */
struct sched_stack_stats {
	struct sched_figure wait_time;      /* every completed wait */
	struct sched_figure sch_delay;      /* the waits whose ready time is known */
	struct sched_figure wait_and_delay; /* every completed wait: wait + delay (0 when unknown) */
	uint64_t migrations;                /* migrations of its tasks while in these waits */
};

/* Over the whole recording. */
struct sched_totals {
	struct duration_stats wait_time, sch_delay, wait_and_delay; /* every wait of every stack */
	struct duration_stats new_task_delay; /* sched_wakeup_new -> first switch-in: delay without a wait */
	struct slowest_event slowest_wait;    /* the longest wait: switch-out to switch-in (pid not known) */
	uint64_t migrations;        /* of the workload's tasks, waiting or not */
	uint64_t without_waking;    /* completed waits of blocked tasks with no waking seen (delay unknown) */
	uint64_t open_at_end;       /* waits not closed when the recording ended (not counted) */
	uint64_t ended_by_exit;     /* waits of tasks that exited before switching in again (not counted) */
	uint64_t unmatched;         /* switch-outs of a task already waiting: a switch-in was lost (not counted) */
};

struct sched_tracker;

struct sched_tracker *sched_tracker_new(void);
void sched_tracker_free(struct sched_tracker *t);

/* A task of the workload begins to exist (FORK, COMM): wakings and migrations of it count from now. */
void sched_task_seen(struct sched_tracker *t, uint32_t tid);
bool sched_task_known(const struct sched_tracker *t, uint32_t tid);
void sched_switch_out(struct sched_tracker *t, uint32_t tid, uint64_t time, uint32_t stack, enum sched_out_kind kind);
/* The PERF_RECORD_SWITCH of a switch-out: preempted says the task stayed runnable. */
void sched_switch_out_record(struct sched_tracker *t, uint32_t tid, uint64_t time, bool preempted);
void sched_switch_in(struct sched_tracker *t, uint32_t tid, uint64_t time);
/* Wakings, new tasks' first wake-ups and migrations of tasks not known (sched_task_seen) are ignored. */
void sched_waking(struct sched_tracker *t, uint32_t tid, uint64_t time);
void sched_wakeup_new(struct sched_tracker *t, uint32_t tid, uint64_t time);
void sched_migrate(struct sched_tracker *t, uint32_t tid, uint64_t time);
void sched_task_exit(struct sched_tracker *t, uint32_t tid);
/* The recording ended: waits still open are counted in open_at_end. */
void sched_tracker_finish(struct sched_tracker *t);

/*
 * Optional: called at every completed wait with its task, the stack it
 * was charged to, its wait time and its scheduling delay (0 when no
 * waking was seen), in ns: the analyzer charges them as weights (view.h).
 */
typedef void (*sched_wait_hook)(void *ctx, uint32_t tid, uint32_t stack, uint64_t wait, uint64_t delay);
void sched_tracker_set_wait_hook(struct sched_tracker *t, sched_wait_hook hook, void *ctx);

/* The figures of a stack, or NULL when no wait was charged to it. */
/*
 * Charge the waits of each stack to remap(ctx, stack) instead (the keys of
 * switch-outs whose call site's whole stack was learned after them).
 */
void sched_tracker_remap_stacks(struct sched_tracker *t, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx);
const struct sched_stack_stats *sched_stack_stats_of(const struct sched_tracker *t, uint32_t stack);
/* Stack ids with at least one completed wait, in no order; returns the count, *ids to free. */
size_t sched_stacks_with_waits(const struct sched_tracker *t, uint32_t **ids);
const struct sched_totals *sched_tracker_totals(const struct sched_tracker *t);
/* Add src's figures into dst (merging stacks under one key). */
void sched_stack_stats_merge(struct sched_stack_stats *dst, const struct sched_stack_stats *src);

/*
 * The key LKP would give a stack: of its first SCHED_LKP_WINDOW frames
 * (leaf first; NULL names print as "[unknown]"), those not named
 * schedule, __schedule or preempt_schedule, joined with '.', cut after the
 * fifth '.'-separated part.  That is `perf sched timehist -g` (which
 * resolves max-stack + 2 = 7 frames and skips those names) read by LKP's
 * stats/perf-sched (split on '.', keep [0..4]).  Returns the key's length
 * (truncated to fit buflen).
 */
#define SCHED_LKP_WINDOW 7
#define SCHED_LKP_PARTS 5
size_t sched_lkp_key(const char *const *names, size_t n, char *buf, size_t buflen);

#endif
