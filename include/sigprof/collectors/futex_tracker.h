/*
 * futex_tracker.h: the futex collector's tracker, for collectors/futex*.c
 * and its tests.
 *
 * The tracker is the per-word state machine: it is fed the decoded entry
 * and exit samples of every futex system call in time order, pairs each
 * exit with its thread's entry, and keeps per futex word (keyed as the
 * kernel keys it: pid + address when private, the mapped object + offset
 * when shared between processes) and per operation the calls, blocking time, errors and the stacks of
 * waiters and wakers.  It knows nothing of perf records, so the tests drive
 * it with synthetic sequences.
 */
#ifndef SIGPROF_FUTEX_TRACKER_H
#define SIGPROF_FUTEX_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/collectors/futex_op.h"
#include "sigprof/base/durations.h"

/* ---- the tracker ---- */

/* One decoded entry or exit sample. */
struct futex_call {
	bool enter;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t period;        /* the sample's weight: calls it stands for (1 when every call is recorded) */
	/* entry */
	struct futex_op op;
	uint64_t uaddr;         /* the futex word; futex_waitv/futex_requeue: their futex_waitv array */
	/* a shared futex (no FUTEX_PRIVATE_FLAG, in memory other processes map): the kernel's key for it */
	bool shared;
	uint64_t object, offset; /* the mapped object (a hash of its identity) and the word's offset in it */
	uint32_t stack;         /* interned stack of the entry */
	/* exit */
	enum futex_op_id syscall; /* which call exits: FOP_SYS_* for futex2, FOP_UNKNOWN for futex(2) */
	int64_t ret;            /* < 0: -errno */
};

struct futex_count {
	int64_t key;            /* errno */
	uint64_t count;
};

/*
 * Blocking time without a histogram: a recording may touch many thousand
 * words (perf bench futex hash: 1024 per thread), so per word and per stack
 * only count, total and max are kept; per op, a duration_stats adds p50/p99.
 */
struct futex_wait_time {
	uint64_t count, total, max; /* ns */
};

/* A stack that waited on or woke a word. */
struct futex_stack {
	uint32_t stack;
	uint64_t count;               /* calls (weighted) */
	struct futex_wait_time wait;  /* measured blocking time of its calls (waiters) */
};

struct futex_word {
	uint32_t pid;                /* the process and address the word was first seen at */
	uint64_t uaddr;
	bool shared;                 /* keyed by object and offset: one word for every process mapping it */
	uint64_t object, offset;
	uint32_t *pids;              /* shared: the processes that used it, in order of first use */
	size_t npids;
	bool array;                  /* uaddr is a futex_waitv array (futex_waitv, futex_requeue) */
	uint64_t calls;              /* weighted */
	uint64_t ops[FOP_COUNT];     /* calls per op, weighted */
	uint64_t private_calls, realtime_calls;
	struct futex_wait_time wait; /* measured blocking time of blocking ops */
	uint64_t unmeasured;         /* blocking calls whose time could not be measured (sampled, unpaired) */
	uint64_t unfinished;         /* calls still in the kernel at the end of the recording */
	uint64_t woken;              /* sum of the wake ops' results: tasks woken (or requeued) */
	struct futex_count *errors;  /* by errno */
	size_t nerrors;
	struct futex_stack *waiters, *wakers;
	size_t nwaiters, nwakers;
	bool estimated;              /* sampling set in for this word, or an entry/exit went unpaired */
	/* filled in by the caller on first sight: */
	char *symbol;
	const char *dso;
	bool named;
};

struct futex_op_stats {
	uint64_t calls;              /* weighted */
	uint64_t private_calls, realtime_calls;
	uint64_t errors;
	struct futex_count *by_errno;
	size_t nerrnos;
	struct duration_stats wait;  /* measured blocking time, with percentiles */
	uint64_t unmeasured, unfinished;
	bool estimated;
	struct slowest_event slowest_wait; /* its longest measured wait: entry to exit */
};

struct futex_tracker;

struct futex_tracker *futex_tracker_new(void);
void futex_tracker_free(struct futex_tracker *t);
/* An entry: the word it touched (created on first sight, named == false). */
struct futex_word *futex_tracker_enter(struct futex_tracker *t, const struct futex_call *c);
/* An exit: paired with the thread's pending entry when it has one. */
void futex_tracker_exit(struct futex_tracker *t, const struct futex_call *c);
/* The end of the recording: entries still pending become unfinished. */
void futex_tracker_finish(struct futex_tracker *t);
/* The op a thread's exit belongs to (its pending or last entry), FOP_UNKNOWN when none was seen. */
enum futex_op_id futex_tracker_thread_op(const struct futex_tracker *t, uint32_t tid);
/*
 * The word of thread tid's pending call entered at or before time (not a
 * futex_waitv array, not a weighted entry: its exit may be missing too);
 * false when none.
 */
bool futex_tracker_pending_word(const struct futex_tracker *t, uint32_t tid, uint64_t time, uint32_t *pid,
				uint64_t *uaddr);
/* The words sorted by blocking time, then calls; valid until the tracker changes. */
size_t futex_tracker_words(struct futex_tracker *t, struct futex_word *const **words);
/* The word a process used at that address (private, or shared and used by pid there), or NULL. */
const struct futex_word *futex_tracker_word(const struct futex_tracker *t, uint32_t pid, uint64_t uaddr);
/* The shared word at offset of object, or NULL. */
const struct futex_word *futex_tracker_shared_word(const struct futex_tracker *t, uint64_t object, uint64_t offset);
const struct futex_op_stats *futex_tracker_op(const struct futex_tracker *t, enum futex_op_id id);
/* Exits whose thread had no entry to pair with (weighted), and of those, ones no earlier entry explains. */
uint64_t futex_tracker_unpaired_exits(const struct futex_tracker *t, uint64_t *orphans);
/*
 * Whether the tracker saw a futex word (not a futex_waitv array) of pid in
 * [start, end): futex words are 4-byte aligned, so the range is probed at
 * every aligned address, cheap for a cacheline.
 */
bool futex_tracker_has_word_in(const struct futex_tracker *t, uint32_t pid, uint64_t start, uint64_t end);

/*
 * Optional: called at every measured blocking call (an exact entry paired
 * with its exit) with its process and thread, its entry's stack, its word and its
 * blocking time in ns: the analyzer charges it as a weight (view.h).
 */
typedef void (*futex_wait_hook)(void *ctx, const struct futex_word *w, uint32_t pid, uint32_t tid, uint32_t stack,
				uint64_t ns);
void futex_tracker_set_wait_hook(struct futex_tracker *t, futex_wait_hook hook, void *ctx);

/* Stacks of a word's waiters or wakers, most calls first; valid until the word changes. */
void futex_word_sort_stacks(struct futex_word *w);
/*
 * Replace every waiter and waker stack id of w by remap(ctx, id), adding up
 * the calls and wait times of stacks that become one (trace mode's
 * frame-pointer stacks replaced by the DWARF stack of their call site).
 */
void futex_word_remap_stacks(struct futex_word *w, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx);

#endif
