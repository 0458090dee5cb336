/*
 * lock.h: the lock collector's contention tracker, as a state machine that
 * the collector (collectors/lock.c) feeds with decoded lock:contention_begin
 * and lock:contention_end hits and the unit tests feed with synthetic ones.
 *
 * Events arrive in time order.  A begin pushes onto its thread's stack of
 * pending contentions (a thread may contend for a lock while it waits for
 * another: a mutex's slow path spins on its wait_lock); an end pops the
 * innermost pending begin of the same lock address on the same thread, and
 * the difference of their times is the wait.  Threads, not CPUs, key the
 * state, so a task that migrates between begin and end is measured the
 * same.  A second begin of a lock its thread already waits for continues
 * that contention (the kernel fires two begins for a mutex that spins,
 * then sleeps): a rebegin, not a new contention.  A pending begin whose end
 * never comes is counted, not measured: when an outer lock's end pops it,
 * when the thread exits, or when the recording ends.  An end without a
 * pending begin (its begin was lost or sampled out) is counted too.  A
 * spinlock never fires two begins for one wait: a second begin of a
 * spinlock its thread still has pending means the first one's end was not
 * recorded (unmatched), and starts a new contention.
 *
 * Weighted events (a rate bound's alternate, rate_bound.h: the kernel's
 * frequency mode in the windows above the bound) are different hits from
 * the gate's: a weighted begin adds its weight to the contentions of its
 * lock, path, stack and word (and to their estimated part) but is never
 * measured and never pending; a weighted end closes a pending begin of its
 * lock on its thread without measuring it (unmeasured), or else is dropped.
 * Waits come only from a gate's begin and end paired on one thread.
 *
 * Per lock (its kernel address) the tracker keeps contentions (weighted),
 * the kind bits of the flags, the wait distribution, the waits per path,
 * the stacks that contended and the futex words whose call contended it
 * (the caller says which futex call, if any, a begin happened in).
 *
 * docs/lock.md explains every figure and its limits.
 */
#ifndef SIGPROF_LOCK_H
#define SIGPROF_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/model/paths.h"
#include "sigprof/base/durations.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

/* A stack id meaning "no stack" (synthetic events in tests). */
#define LOCK_NO_STACK UINT32_MAX
/* Contentions a thread may have pending at once; deeper begins are counted as unmatched. */
#define LOCK_MAX_NESTING 8

/* The flags of lock:contention_begin (the kernel's LCB_F_*). */
enum lock_flag {
	LOCK_F_SPIN = 1u << 0,
	LOCK_F_READ = 1u << 1,
	LOCK_F_WRITE = 1u << 2,
	LOCK_F_RT = 1u << 3,
	LOCK_F_PERCPU = 1u << 4,
	LOCK_F_MUTEX = 1u << 5,
};

/*
 * The lock primitives (fnmatch globs) skipped when a lock is named by the
 * function that took it: the first kernel frame of its busiest stack that
 * matches none (collectors/lock.c; docs/lock.md lists them).
 */
extern const char *const lock_primitives[];
extern const size_t lock_primitive_count;

/* "spin", "rwlock:R", "rwsem:W", "mutex", ... for a begin's flags; "flags=0x..." into buf for others. */
const char *lock_kind_name(uint32_t flags, char *buf, size_t len);

enum lock_event_kind {
	LOCK_EVENT_BEGIN, /* lock:contention_begin */
	LOCK_EVENT_END,   /* lock:contention_end */
};

/* One tracepoint hit, decoded. */
struct lock_event {
	enum lock_event_kind kind;
	uint64_t time;        /* ns */
	uint32_t pid, tid;
	uint64_t addr;        /* lock_addr */
	uint32_t flags;       /* begin: LOCK_F_* */
	int ret;              /* end: 0, or -errno (a mutex wait interrupted, a timed-out rtmutex) */
	uint64_t weight;      /* begin: the contentions it stands for (1 when every hit is recorded) */
	bool weighted;        /* a rate bound's alternate: its weight is estimated, it is never paired */
	uint32_t stack;       /* begin: interned stack, or LOCK_NO_STACK */
	int path;             /* begin: the path its stack is charged to (PATH_*) */
	bool in_futex;        /* begin: inside a futex call whose word is futex_pid/futex_uaddr */
	uint32_t futex_pid;
	uint64_t futex_uaddr;
};

/* A stack that contended a lock. */
struct lock_stack {
	uint32_t stack;
	uint64_t contentions;  /* weighted */
	uint64_t estimated;    /* of them, from weighted begins */
	uint64_t wait_total;   /* ns, measured */
};

/* A futex word whose futex call contended a lock (its bucket lock). */
struct lock_futex_word {
	uint32_t pid;
	uint64_t uaddr;
	uint64_t contentions;  /* weighted */
	uint64_t estimated;    /* of them, from weighted begins */
	uint64_t wait_total;   /* ns, measured */
	/* filled in by the caller on first sight: */
	char *symbol;
	const char *dso;
	bool named;
};

struct lock_figures {
	uint64_t addr;
	uint32_t flags;                        /* the flags of its first begin */
	bool mixed_flags;                      /* begins with other flags were seen too */
	uint32_t flags_seen;                   /* the flags of every begin, or'ed */
	uint64_t contentions;                  /* begins, weighted */
	uint64_t recorded;                     /* begins recorded (unweighted) */
	uint64_t estimated;                    /* of the contentions, from weighted begins (their weights) */
	uint64_t weighted_samples;             /* weighted begins recorded */
	uint64_t unmeasured;                   /* gate begins closed by a weighted end: counted, wait unknown */
	uint64_t rebegins;                     /* begins that continued a pending contention of the lock on the same
						  thread (a mutex that stopped spinning to sleep): not contentions */
	struct duration_stats wait;            /* measured begin -> end on one thread, ns */
	uint64_t unmatched;                    /* begins never closed: end lost, thread exited, run ended */
	uint64_t failed;                       /* ends with ret != 0 */
	uint64_t path_contentions[PATH_COUNT]; /* weighted */
	uint64_t path_wait[PATH_COUNT];        /* measured ns */
	struct lock_stack *stacks;             /* most contentions first after lock_tracker_finish() */
	size_t nstacks, stacks_cap;
	struct lock_futex_word *words;         /* most contentions first after lock_tracker_finish() */
	size_t nwords, words_cap;
	struct u64_map stack_index;            /* stack id -> index + 1 */
	/* filled in by the caller after lock_tracker_finish(): */
	char *name;                            /* "futex_queues+0x40", "bucket lock taken in futex_wait_setup" */
	char *key;                             /* its figures' key: "symbol.futex_queues", "taken_in.futex_wait_setup" */
	bool bucket;                           /* a futex hash bucket lock: taken by a futex function in futex calls */
	bool named;
};

struct lock_tracker;

struct lock_tracker *lock_tracker_new(void);
void lock_tracker_free(struct lock_tracker *t);
/*
 * One event.  A begin returns its lock (created on first sight, named ==
 * false) and, when it ran inside a futex call, that word in *word (named ==
 * false on first sight); an end returns NULL.
 */
struct lock_figures *lock_tracker_event(struct lock_tracker *t, const struct lock_event *e,
					struct lock_futex_word **word);
/* A thread exited: its pending contentions are unmatched. */
void lock_tracker_thread_exit(struct lock_tracker *t, uint32_t tid);
/* The path of thread tid's innermost pending contention of addr, or -1 (an end's path). */
int lock_tracker_pending_path(const struct lock_tracker *t, uint32_t tid, uint64_t addr);
/* The end of the recording: pending contentions are unmatched; stacks and words sorted. */
void lock_tracker_finish(struct lock_tracker *t);
/*
 * Before lock_tracker_finish(): each lock's stack rows count on remap(ctx,
 * stack) (a key completed at the end of the load, view_stack_moved()); rows
 * that meet are added up.
 */
void lock_tracker_remap_stacks(struct lock_tracker *t, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx);
/* The locks by measured wait, then contentions; valid until the tracker changes. */
size_t lock_tracker_locks(struct lock_tracker *t, struct lock_figures *const **locks);
const struct lock_figures *lock_tracker_lock(const struct lock_tracker *t, uint64_t addr);
/* Gate ends with no pending begin of their lock on their thread. */
uint64_t lock_tracker_orphan_ends(const struct lock_tracker *t);
/* Contentions (weighted) from weighted begins, over every lock: the estimated part of the total. */
uint64_t lock_tracker_estimated(const struct lock_tracker *t);
/* Measured wait (ns) and contentions (weighted) of every lock on one path. */
uint64_t lock_tracker_path_wait(const struct lock_tracker *t, int path);
uint64_t lock_tracker_path_contentions(const struct lock_tracker *t, int path);
/* Whether a contended lock's address lies in [start, end) (c2c marks its cacheline). */
bool lock_tracker_has_lock_in(const struct lock_tracker *t, uint64_t start, uint64_t end);
/*
 * Per futex word: the contentions its futex calls met on every lock, and
 * the locks they went through (its bucket lock, and any other lock taken
 * in its calls: a runqueue lock in a wakeup).  Two words served by one
 * bucket lock share that bucket: what a change of the futex hash moves.
 */
struct lock_word_lock {
	const struct lock_figures *lock;
	uint64_t contentions;  /* weighted */
	uint64_t wait_total;   /* ns, measured */
};

struct lock_word_figures {
	uint32_t pid;
	uint64_t uaddr;
	const char *symbol, *dso;      /* as the caller named the word (lock_futex_word) */
	uint64_t contentions;          /* weighted, over its locks */
	uint64_t estimated;            /* of them, from weighted begins */
	uint64_t wait_total;           /* ns, measured */
	struct lock_word_lock *locks;  /* most contentions first */
	size_t nlocks;
	size_t sharing;                /* other words served by one of its bucket locks (lock_figures.bucket) */
};

/*
 * The futex words of every lock, after lock_tracker_finish() and after the
 * caller marked the bucket locks (sharing counts through those only), most
 * contentions first (then wait, pid, address); *out to free with
 * lock_word_figures_free().
 */
size_t lock_tracker_futex_words(struct lock_tracker *t, struct lock_word_figures **out);
void lock_word_figures_free(struct lock_word_figures *words, size_t n);

/* The path with the most measured wait of a lock (then contentions), or PATH_OTHER when it has none. */
int lock_figures_path(const struct lock_figures *l);

#endif
