/*
 * waits.h: the wake linker, why a thread waited (collectors/waits.c;
 * docs/waits.md).  The futex collector's analyzer feeds it, in time order,
 * what the recording holds about waiting: futex calls (entry with op, word
 * and stack; exit with result), the scheduler's switch-outs, switch-ins and
 * wakings of the workload's tasks (a waking with the context it ran in: the
 * waker's task, or an interrupt), and the cpu samples of every thread.
 *
 * It knows nothing of perf records, so the unit tests drive it with
 * synthetic sequences.  For every blocking wait (a futex wait-type call
 * that slept; a sleep outside any futex call) it says how the wait ended:
 * the last waking of the task before it ran again names the waker; the
 * waker's futex call pending at that waking (its FUTEX_WAKE, requeue or
 * UNLOCK_PI entry: the kernel wakes inside it) names the release site; the
 * call's result names a timeout, a signal or an error.  Where a link
 * cannot be made the wait says why (wait_unlinked_reason).  It charges the
 * waker's cpu samples during the wait to the wait, and follows the waker's
 * own previous wait back a bounded number of steps (the chain).
 *
 * Memory: per thread its state and a ring of its latest cpu samples
 * (WAITS_CPU_RING samples); per (word, waker release stack) and per (word,
 * waker work stack) one aggregate; the WAITS_LONGEST longest waits in full.
 * Times are ns of the perf clock; stacks are interned stack ids.
 */
#ifndef SIGPROF_WAITS_H
#define SIGPROF_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/collectors/futex_op.h"
#include "sigprof/model/collector.h"

/* How a wait ended. */
enum wait_ending {
	WAIT_END_TASK,      /* a task's waking: the waker's tid, and its futex call where it made one */
	WAIT_END_INTERRUPT, /* a waking in interrupt context (a timer, a device) or by the idle task */
	WAIT_END_SIGNAL,    /* the futex call returned EINTR or ERESTART*: a signal */
	WAIT_END_TIMEOUT,   /* the futex call returned ETIMEDOUT: its timeout expired */
	WAIT_END_ERROR,     /* the futex call returned another error after it slept */
	WAIT_END_UNLINKED,  /* no waking of the task was recorded: wait.why says why */
	WAIT_END_COUNT,
};

/* "task", "interrupt", "signal", "timeout", "error", "unlinked": JSON values and figure keys. */
const char *wait_ending_name(enum wait_ending e);

/* How a wait was linked, or why its waker is not known (WAIT_END_UNLINKED, or a task ending without the waker's call). */
enum wait_unlinked_reason {
	WAIT_LINKED,
	WAIT_NO_SCHED,       /* the recording has no scheduler events (the sched collector was off) */
	WAIT_NO_WAKING,      /* no sched_waking of the task during the wait (lost, or the kernel throttled the event) */
	WAIT_WAKER_NO_CALL,  /* the waker had no futex call pending: woken by another system call or the kernel */
	WAIT_WAKER_WEIGHTED, /* the waker's call was a weighted sample (its exit may be missing): not joined */
	WAIT_LINKED_BY_WORD, /* no waking recorded: the last wake call of another thread on the word during the wait */
	WAIT_REASON_COUNT,
};
/* The reason in words, and as a JSON key ("no_waking"). */
const char *wait_unlinked_why(enum wait_unlinked_reason r);
const char *wait_reason_key(enum wait_unlinked_reason r);

#define WAITS_CHAIN_MAX 4  /* steps of a chain kept: the waker's wait, its waker's, ... */
#define WAITS_LONGEST 32   /* waits kept in full, the longest */
#define WAITS_CPU_RING 4096 /* cpu samples kept per thread, the latest: the span of a waker's work seen */
#define WAITS_WAKING_STACKS 8 /* a waker's latest wakings with their stack, kept to meet their wait's end */
/* How long after a waking its waker's own record of it (sched_waking#stack) may come: one tracepoint hit */
#define WAITS_WAKING_STACK_SLACK_NS 1000000

/* One wait, as far as the chains need it. */
struct wait_step {
	uint32_t pid, tid;
	uint64_t start, end;      /* entry (or switch-out) to exit (or switch-in) */
	bool futex;               /* a futex wait (word below), or a sleep outside any futex call */
	uint32_t word_pid;
	uint64_t uaddr;
	uint32_t stack;           /* the waiter's stack: its futex entry, or its switch-out */
	enum wait_ending ending;
	uint32_t waker_pid, waker_tid; /* 0 when no task woke it */
	uint32_t waker_stack;     /* the waker's futex call's entry stack, else its stack at the waking; UINT32_MAX: none */
};

/* A work stack of the waker during the wait, and its samples. */
struct wait_work {
	uint32_t stack;
	uint32_t samples;
};
#define WAITS_WORK_MAX 4

struct wait_record {
	struct wait_step step;
	enum futex_op_id op;      /* the waiter's op (futex waits) */
	int64_t result;           /* the futex call's result (futex waits) */
	enum wait_unlinked_reason why;
	uint64_t wake_time;       /* the waking that ended it; 0 when none */
	uint64_t run_time;        /* the switch-in after it; 0 when none seen */
	bool waker_irq;           /* the waking ran in interrupt context */
	enum futex_op_id waker_op; /* the waker's pending futex call, FOP_COUNT when none */
	bool waker_stack_at_waking; /* step.waker_stack is the waker's stack at its sched_waking (no futex call) */
	uint32_t waker_word_pid;
	uint64_t waker_uaddr;
	uint32_t waker_samples;   /* the waker's cpu samples in [start, wake_time] */
	bool waker_samples_partial; /* the waker's sample ring did not reach back to start */
	struct wait_work work[WAITS_WORK_MAX]; /* its heaviest work stacks during the wait */
	size_t nwork;
	struct wait_step chain[WAITS_CHAIN_MAX]; /* chain[0]: the waker's own wait that ended during ours */
	size_t chain_len;
};

/* Per word (futex waits; word_pid 0 and uaddr 0 gather the sleeps outside futex calls) and ending. */
struct wait_word_stats {
	bool futex;
	uint32_t word_pid;
	uint64_t uaddr;
	uint64_t waits[WAIT_END_COUNT], ns[WAIT_END_COUNT];
	uint64_t wake_to_run_ns, wake_to_run_count, wake_to_run_max;
	uint64_t waker_samples;   /* the wakers' cpu samples during the waits they ended */
};

/*
 * A waker's release stack per word (WAIT_END_TASK waits), or a work stack of
 * the wakers per word: the waits it ended, the wait time, and for work
 * stacks the wait time weighted by the share of the waker's samples during
 * each wait (weighted_ns).
 */
struct wait_blame {
	bool futex;
	uint32_t word_pid;
	uint64_t uaddr;
	uint32_t stack;           /* release: the waker's call stack (UINT32_MAX: no call); work: a cpu stack */
	uint64_t waits, ns;
	double weighted_ns;
	uint64_t samples;
};

struct waits_totals {
	uint64_t waits[WAIT_END_COUNT], ns[WAIT_END_COUNT];
	uint64_t unlinked[WAIT_REASON_COUNT]; /* by reason: unlinked waits, and task wakings without the waker's call */
	uint64_t futex_waits, sched_waits;
	uint64_t not_blocking;     /* wait-type futex calls that returned without sleeping */
	uint64_t weighted_calls;   /* wait-type calls recorded as weighted samples: not followed (their exit may be missing) */
	uint64_t open_at_end;
	uint64_t cpu_samples;
	uint64_t wakings;          /* of tasks in a wait */
	uint64_t waker_stacks_at_waking; /* task endings without the waker's futex call whose stack its waking recorded */
	bool sched_seen;
};

struct wait_linker;

struct wait_linker *wait_linker_new(void);
void wait_linker_free(struct wait_linker *l);

/* A futex call's entry: weighted says it is a sample standing for several calls (not followed). */
void waits_futex_enter(struct wait_linker *l, uint32_t pid, uint32_t tid, uint64_t time, enum futex_op_id op,
		       uint64_t uaddr, uint32_t stack, bool weighted);
void waits_futex_exit(struct wait_linker *l, uint32_t tid, uint64_t time, int64_t result);
/* A switch-out of a workload task: sleep says it blocked (not preempted, not exiting). */
void waits_switch_out(struct wait_linker *l, uint32_t pid, uint32_t tid, uint64_t time, uint32_t stack, bool sleep);
/* The kernel's SWITCH record said the switch-out at or before time left the task runnable (preempted). */
void waits_switch_out_preempted(struct wait_linker *l, uint32_t tid, uint64_t time);
void waits_switch_in(struct wait_linker *l, uint32_t tid, uint64_t time);
/* A sched_waking of target, run by waker_tid of waker_pid (0: the idle task), in interrupt context or not. */
void waits_waking(struct wait_linker *l, uint32_t target, uint64_t time, uint32_t waker_pid, uint32_t waker_tid,
		  bool irq);
/*
 * The waker's stack at a waking of target, recorded again by the waker's
 * own event (sched_waking#stack: in task context, rate-bounded): it names
 * the stack of a wake outside any futex call (docs/waits.md).
 */
void waits_waking_stack(struct wait_linker *l, uint32_t waker_tid, uint32_t target, uint64_t time, uint32_t stack);
void waits_cpu_sample(struct wait_linker *l, uint32_t tid, uint64_t time, uint32_t stack);
void waits_task_exit(struct wait_linker *l, uint32_t tid);
void waits_finish(struct wait_linker *l);

/* Replace every stack id kept by remap(ctx, id) (the futex collector's lent DWARF stacks). */
void waits_remap_stacks(struct wait_linker *l, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx);

const struct waits_totals *waits_totals(const struct wait_linker *l);
/* The longest waits, longest first. */
size_t waits_longest(const struct wait_linker *l, const struct wait_record **out);
/* Per word, most wait time first (valid until the linker changes). */
size_t waits_words(struct wait_linker *l, const struct wait_word_stats *const **out);
/* Release stacks of the wakers (WAIT_END_TASK waits) per word, most wait time ended first. */
size_t waits_release_blame(struct wait_linker *l, const struct wait_blame *const **out);
/* Work stacks of the wakers during the waits they ended, per word, most weighted wait time first. */
size_t waits_work_blame(struct wait_linker *l, const struct wait_blame *const **out);
/* Per pair of stacks (waiter, waker's release), the waits a task ended (valid until the linker changes). */
size_t waits_pairs(struct wait_linker *l, const struct wake_pair **out);
/* Per waiter thread and stack, word, ending and waker: the waits and their time (pprof's waits samples). */
size_t waits_samples(const struct wait_linker *l, const struct wait_sample **out);
/* The last wait of tid that ended at end_time (its futex exit or switch-in), or NULL (for `sigprof script`). */
const struct wait_record *waits_ended_at(const struct wait_linker *l, uint32_t tid, uint64_t end_time);

#endif
