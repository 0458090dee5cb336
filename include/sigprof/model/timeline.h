/*
 * timeline.h: each thread's life within the recording as consecutive spans
 * of one state, and the wall-clock profile made of them (docs/timeline.md).
 *
 * Layer: model.  The timeline knows nothing of perf records or collectors:
 * the loader (profile.c) turns what the records and the analyzers' hooks say
 * into the events below (a switch-out and its blocking stack, a switch-in, a
 * waking, a signal handler's start and end, an on-CPU sample), and unit tests
 * drive it with synthetic sequences.  Events come in time order.
 *
 * A thread is in one state at a time:
 *   running         on a CPU (switched in), outside any signal handler
 *   signal handler  on a CPU with a signal handler running (deliver to sigreturn)
 *   runnable        switched out preempted, or woken and not yet switched in
 *   blocked         switched out asleep, with a cause: a futex word (a futex
 *                   call was pending), a kernel lock, I/O, sleep or other (from
 *                   the blocking stack's kernel frames, timeline_causes[])
 * A span holds one state from its start to the next span's start: a thread's
 * spans tile its life in the recording, from its first event (its fork, or
 * the first record that names it) to its exit or the recording's end, so the
 * time of its states adds up to that lifetime exactly.
 *
 * The wall-clock profile is the same time as stacks weighted by ns: a
 * blocked or runnable span weighs on its switch-out stack; a running or
 * handler span is split over the stacks of the on-CPU samples taken in it,
 * in proportion to their periods (TIMELINE_NO_STACK when none fell in it).
 *
 * Iteration, once timeline_finish() ran:
 *   for (size_t i = 0; i < timeline_thread_count(t); i++) {
 *           const struct timeline_thread *th = timeline_thread(t, i);   (by pid, then tid)
 *           size_t n;
 *           const struct timeline_span *s = timeline_spans(t, i, &n);   (in time order; none without keep_spans)
 *           const struct timeline_mark *m = timeline_marks(t, i, &n);   (the same)
 *   }
 *   for (size_t i = 0; i < timeline_wall_count(t); i++)
 *           timeline_wall_entry(t, i)                                   (thread, state, cause, signal, word, stack, ns)
 */
#ifndef SIGPROF_TIMELINE_H
#define SIGPROF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack_table;

enum timeline_state {
	TIMELINE_RUNNING,
	TIMELINE_RUNNABLE,
	TIMELINE_BLOCKED,
	TIMELINE_SIGNAL_HANDLER,
	TIMELINE_STATES
};

/* Why a blocked thread sleeps (TIMELINE_CAUSE_NONE for the other states). */
enum timeline_cause {
	TIMELINE_CAUSE_NONE,
	TIMELINE_CAUSE_FUTEX,  /* a futex call was pending at the switch-out (its word in detail), or futex frames */
	TIMELINE_CAUSE_LOCK,   /* a kernel lock's slow path (mutex, rwsem, ...) in the blocking stack */
	TIMELINE_CAUSE_IO,     /* waiting for a file, pipe, socket, poll or block device */
	TIMELINE_CAUSE_SLEEP,  /* nanosleep, a timer */
	TIMELINE_CAUSE_OTHER,  /* none of the above (waiting for a child, a stopped task, ...) */
	TIMELINE_CAUSES
};

/* What no span's stack is: no sample or switch-out stack was recorded for it. */
#define TIMELINE_NO_STACK UINT32_MAX

struct timeline_span {
	uint64_t start, end;  /* ns, the recording's clock; start < end */
	uint64_t detail;      /* blocked on a futex: the word's address (0: unknown) */
	uint32_t stack;       /* running, signal handler: the first on-CPU sample's stack in it; runnable,
			         blocked: the switch-out's stack; TIMELINE_NO_STACK: none recorded */
	uint8_t state;        /* enum timeline_state */
	uint8_t cause;        /* enum timeline_cause */
	uint8_t signal;       /* the innermost signal handler running (in any state), 0: none */
	uint8_t woken;        /* runnable: it was woken (1), not preempted (0) */
};

struct timeline_thread {
	uint32_t pid, tid;
	uint64_t start, end;                /* its life within the recording */
	uint64_t ns[TIMELINE_STATES];       /* time per state: they add up to end - start */
	uint64_t cause_ns[TIMELINE_CAUSES]; /* blocked time per cause */
	uint64_t nspans;                    /* spans it had (kept or not) */
	bool exited;                        /* end is its exit, not the recording's end */
};

/* One (thread, state, cause, signal, word, stack) of the wall-clock profile and its ns. */
struct timeline_wall {
	size_t thread;        /* index for timeline_thread() */
	uint32_t stack;       /* TIMELINE_NO_STACK: no sample fell in the span */
	uint8_t state, cause;
	uint8_t signal;       /* signal handler: its signal; else 0 */
	uint64_t detail;      /* blocked on a futex: the word */
	uint64_t ns;
};

/*
 * An instant on a thread's timeline that is no change of state (the lock
 * collector's contentions: a spinning thread stays running), kept with the
 * spans (keep_spans).
 */
enum timeline_mark_kind {
	TIMELINE_MARK_LOCK,   /* a kernel lock's contention began: detail its address, label the function that took it */
};

struct timeline_mark {
	uint64_t time;
	uint64_t detail;
	const char *label;    /* owned by whoever made the mark, alive as long as the timeline (a frame's name) */
	uint32_t stack;       /* TIMELINE_NO_STACK: none */
	uint8_t kind;         /* enum timeline_mark_kind */
};

/* What the loader hands the timeline. */
enum timeline_event_kind {
	TIMELINE_EVENT_FORK,            /* tid was created (runnable until it first runs) */
	TIMELINE_EVENT_SWITCH_IN,
	TIMELINE_EVENT_SWITCH_OUT,      /* sleeps: blocked, else runnable; dead: its last switch-out */
	TIMELINE_EVENT_WAKING,          /* a waking of tid (makes a blocked thread runnable) */
	TIMELINE_EVENT_HANDLER_ENTER,   /* a signal was delivered to a handler of tid */
	TIMELINE_EVENT_HANDLER_EXIT,    /* its innermost handler returned (rt_sigreturn) */
	TIMELINE_EVENT_CPU_SAMPLE,      /* an on-CPU sample of tid with its stack and period */
	TIMELINE_EVENT_SEEN,            /* any other record taken while tid was current: it runs */
	TIMELINE_EVENT_EXIT,            /* tid exited */
};

struct timeline_event {
	enum timeline_event_kind kind;
	uint64_t time;
	uint32_t pid;          /* 0: unknown (a switch-in's or a waking's target) */
	uint32_t tid;
	uint32_t stack;        /* SWITCH_OUT: the blocking stack; CPU_SAMPLE: the sample's; else TIMELINE_NO_STACK */
	uint64_t period;       /* CPU_SAMPLE */
	bool sleeps, dead;     /* SWITCH_OUT */
	bool has_word;         /* SWITCH_OUT: a futex call was pending, on word */
	uint64_t word;
	int signal;            /* HANDLER_ENTER */
	bool known_only;       /* about a thread the timeline knows already, else nothing (a waking of a thread
				  the filters keep, by a task they drop) */
};

struct timeline_options {
	/* Keep every span (the JSON, the trace-event export, the HTML timeline); else only the totals and the wall profile. */
	bool keep_spans;
};

struct timeline;

/* stacks: the table the events' stacks are of (the blocking causes are read from their frames). */
struct timeline *timeline_new(const struct stack_table *stacks, const struct timeline_options *o);
void timeline_free(struct timeline *t);
void timeline_event(struct timeline *t, const struct timeline_event *e);
/* A mark of thread tid, a thread the timeline follows already (else nothing), at m->time. */
void timeline_add_mark(struct timeline *t, uint32_t tid, const struct timeline_mark *m);
/*
 * Closes every thread still alive at end (the recording's last time); the
 * iteration below is valid after it.  Without any switch-in or switch-out
 * event (a recording without the sched collector) it keeps no thread: the
 * states cannot be told.
 */
void timeline_finish(struct timeline *t, uint64_t end);

size_t timeline_thread_count(const struct timeline *t);
const struct timeline_thread *timeline_thread(const struct timeline *t, size_t i);
/* Thread i's spans in time order, *n of them (0 without keep_spans). */
const struct timeline_span *timeline_spans(const struct timeline *t, size_t i, size_t *n);
/* Thread i's marks in time order, *n of them (0 without keep_spans). */
const struct timeline_mark *timeline_marks(const struct timeline *t, size_t i, size_t *n);
size_t timeline_wall_count(const struct timeline *t);
const struct timeline_wall *timeline_wall_entry(const struct timeline *t, size_t i);

const char *timeline_state_name(enum timeline_state s);  /* "running", "runnable", "blocked", "signal handler" */
const char *timeline_cause_name(enum timeline_cause c);  /* "", "futex", "kernel lock", "I/O", "sleep", "other" */
/* JSON's words: "running", "runnable", "blocked", "signal_handler"; "futex", "lock", "io", "sleep", "other" */
const char *timeline_state_key(enum timeline_state s);
const char *timeline_cause_key(enum timeline_cause c);

/* The rules that name a blocking stack's cause: the first rule a kernel frame matches, leaf first, wins. */
struct timeline_cause_rule {
	const char *prefix;    /* of the kernel function's name */
	enum timeline_cause cause;
	const char *why;
};
extern const struct timeline_cause_rule timeline_causes[];
extern const size_t timeline_ncauses;
/* The cause a blocking stack shows (TIMELINE_CAUSE_OTHER when no rule matches). */
enum timeline_cause timeline_cause_of_stack(const struct stack_table *stacks, uint32_t stack);

#endif
