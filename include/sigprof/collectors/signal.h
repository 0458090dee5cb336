/*
 * signal.h: the signal collector's lifecycle analysis, as a state machine
 * that the collector (collectors/signal.c) feeds with decoded tracepoint
 * hits and the unit tests feed with synthetic ones.
 *
 * Events arrive in time order.  A generation whose result leaves the
 * signal pending (delivered/queued, or queued without its siginfo) joins a
 * FIFO: the target thread's own queue, or its process's shared queue when
 * the signal is process-directed.  A delivery takes, as the kernel's
 * dequeue does, the oldest generation of that signal from the delivering
 * thread's queue first, else from its process's queue; the difference of
 * their times is the latency.  A delivery to a user handler pushes onto
 * the thread's stack of running handlers; an rt_sigreturn entry pops the
 * innermost one, and that difference is the handler time.  A thread that
 * exits (or dies of a signal) drops its queue and stack: what they held is
 * counted, never matched to a later thread that reuses the tid.
 *
 * docs/signal.md explains every figure and its limits.
 */
#ifndef SIGPROF_SIGNAL_H
#define SIGPROF_SIGNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/base/durations.h"
#include "sigprof/base/hashmap.h"

/* Signal numbers 1..SIGNAL_MAX (the kernel's _NSIG). */
#define SIGNAL_MAX 64
/* A stack id meaning "no stack" (synthetic events in tests). */
#define SIGNAL_NO_STACK UINT32_MAX

/* signal_generate's result field: the kernel's enum trace_signal_result. */
enum signal_result {
	SIGNAL_RESULT_DELIVERED,       /* TRACE_SIGNAL_DELIVERED: queued (or made pending) for delivery */
	SIGNAL_RESULT_IGNORED,         /* TRACE_SIGNAL_IGNORED: the target ignores it; dropped */
	SIGNAL_RESULT_ALREADY_PENDING, /* TRACE_SIGNAL_ALREADY_PENDING: a standard signal already pending; merged */
	SIGNAL_RESULT_OVERFLOW_FAIL,   /* TRACE_SIGNAL_OVERFLOW_FAIL: RT queue full; dropped, sender got EAGAIN */
	SIGNAL_RESULT_LOSE_INFO,       /* TRACE_SIGNAL_LOSE_INFO: queue full; made pending without its siginfo */
	SIGNAL_RESULT_COUNT,
};

enum signal_event_kind {
	SIGNAL_EVENT_GENERATE,        /* signal:signal_generate */
	SIGNAL_EVENT_DELIVER,         /* signal:signal_deliver */
	SIGNAL_EVENT_SIGRETURN_ENTER, /* syscalls:sys_enter_rt_sigreturn */
	SIGNAL_EVENT_SIGRETURN_EXIT,  /* syscalls:sys_exit_rt_sigreturn */
};

/* sa_handler values that signal_deliver reports for the two dispositions without a handler. */
#define SIGNAL_HANDLER_DEFAULT 0 /* SIG_DFL */
#define SIGNAL_HANDLER_IGNORE 1  /* SIG_IGN */

/* One tracepoint hit, decoded. */
struct signal_event {
	enum signal_event_kind kind;
	uint64_t time;        /* ns, the sample's time */
	uint32_t pid, tid;    /* the task the event ran in (for a generation: the sender, or whoever an interrupt hit) */
	int sig;              /* generate, deliver */
	uint32_t target;      /* generate: the pid field, the target thread's tid */
	bool group;           /* generate: process-directed (kill, timers) rather than thread-directed (tgkill) */
	int result;           /* generate: enum signal_result */
	uint64_t sa_handler;  /* deliver: the handler, or SIGNAL_HANDLER_DEFAULT / _IGNORE */
	uint32_t stack;       /* the interned stack of the sample, or SIGNAL_NO_STACK */
};

/* What a signal number went through. */
struct signal_figures {
	int signo;
	uint64_t generated;                      /* signal_generate hits */
	uint64_t results[SIGNAL_RESULT_COUNT];   /* of which, by result */
	uint64_t delivered;                      /* signal_deliver hits */
	uint64_t to_handler, to_default, to_ignore; /* of which, by the disposition at delivery */
	uint64_t sigreturns;                     /* rt_sigreturn entries that closed a handler of this signal */
	uint64_t unmatched_deliveries;           /* deliveries with no recorded generation pending */
	uint64_t unmatched_generations;          /* pending generations no delivery took (target gone, run ended, ...) */
	uint64_t unreturned;                     /* handler deliveries no sigreturn closed (thread exited, longjmp, run ended) */
	uint64_t dropped_at_loss;                /* generations pending and handlers running when records were lost: not timed */
	struct duration_stats latency;           /* generation -> delivery, ns */
	struct duration_stats handler;           /* delivery -> rt_sigreturn entry, ns (nested handlers included) */
	struct slowest_event slowest_latency;    /* its longest generation -> delivery (the delivering thread's) */
	struct slowest_event slowest_handler;    /* its longest delivery -> rt_sigreturn */
	struct u64_map senders;                  /* generation stack id -> count (the value is the count) */
	struct u64_map interrupted;              /* delivery stack id -> count */
};

struct signal_tracker;

struct signal_tracker *signal_tracker_new(void);
void signal_tracker_free(struct signal_tracker *a);
/*
 * Every stack the figures count (senders, interrupted) becomes
 * remap(ctx, stack), counts summed: the keys a lender (stack_lender.h)
 * learned the whole stacks of after they were counted.
 */
void signal_tracker_remap_stacks(struct signal_tracker *a, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx);
/* Feed one event; events must come in time order.  Out-of-range signal numbers are counted and skipped. */
void signal_tracker_event(struct signal_tracker *a, const struct signal_event *e);
/* The thread tid of process pid has exited: drop its pending signals and running handlers. */
void signal_tracker_thread_exit(struct signal_tracker *a, uint32_t pid, uint32_t tid);
/*
 * Records were lost (a LOST record, in time order): a delivery or sigreturn
 * that paired with what is pending or running now may be among them, and a
 * later one would pair with the wrong generation or handler (a latency of a
 * second where the program handles each signal at once).  So everything
 * pending or running is dropped, counted in dropped_at_loss, not timed.
 */
void signal_tracker_records_lost(struct signal_tracker *a);
/* The end of the recording: whatever is still pending or running is counted as unmatched/unreturned. */
void signal_tracker_finish(struct signal_tracker *a);

/* The figures of signal signo, or NULL when no event named it. */
const struct signal_figures *signal_tracker_figures(const struct signal_tracker *a, int signo);
/*
 * The signals whose handlers run now (after the events fed so far) on
 * thread tid of process pid, innermost first, into sigs (at most max);
 * returns how many run.
 */
uint32_t signal_tracker_running_handlers(const struct signal_tracker *a, uint32_t pid, uint32_t tid, int *sigs,
					  uint32_t max);
/*
 * The delivery that started the k-th running handler (0: the innermost) of
 * thread tid of process pid: its stack (the interrupted code's, as the
 * signal_deliver sample saw it), or SIGNAL_NO_STACK when no such handler
 * runs; its signal into *sig.  With returned (the thread is in the
 * rt_sigreturn of its innermost handler; k is 0), the handler that the
 * thread's last rt_sigreturn closed, as long as no delivery followed it,
 * else the innermost running one.
 */
uint32_t signal_tracker_delivery_stack(const struct signal_tracker *a, uint32_t pid, uint32_t tid, uint32_t k,
				       bool returned, int *sig);
/*
 * Optional: called at every handler's end (its rt_sigreturn entry) with
 * its thread, its signal, the stack of the delivery that began it (the
 * interrupted stack) and its run time in ns: the analyzer charges it as
 * a weight (view.h).
 */
typedef void (*signal_handler_hook)(void *ctx, uint32_t pid, uint32_t tid, int sig, uint32_t stack, uint64_t ns);
void signal_tracker_set_handler_hook(struct signal_tracker *a, signal_handler_hook hook, void *ctx);

/* rt_sigreturn entries with no handler running on their thread; events with a signal number outside 1..64. */
uint64_t signal_tracker_unmatched_sigreturns(const struct signal_tracker *a);
uint64_t signal_tracker_bad_events(const struct signal_tracker *a);

/* Whether the default action of signo ends the process (terminate or core dump). */
bool signal_default_is_fatal(int signo);

/*
 * The split of signal_generate by its `code` field (the siginfo's si_code):
 * the generations the kernel makes on its own, in an interrupt or on the
 * target's behalf (timers: SI_TIMER, SI_KERNEL), go to the event
 * "signal:signal_generate#" SIGNAL_KERNEL_SUFFIX with the kernel's stack
 * only; every other generation (user code's kill, tgkill, sigqueue, ...;
 * faults in the faulting task) to "signal:signal_generate" with the whole
 * stack.  docs/signal.md gives the reasons per code.
 */
#define SIGNAL_KERNEL_SUFFIX "kernel"

/* One si_code whose generations are the kernel's own. */
struct signal_kernel_code {
	int code;          /* as the tracepoint's int `code` holds it */
	const char *name;  /* the constant of include/uapi/asm-generic/siginfo.h */
	const char *why;   /* who generates it, where */
};
extern const struct signal_kernel_code signal_kernel_codes[];
extern const size_t signal_kernel_code_count;

/*
 * The tracepoint filter (tracefs syntax) of one side of the split: the
 * kernel's own codes (kernel), or every other code; the two select
 * complementary sets of hits.
 */
void signal_generate_filter(bool kernel, char *buf, size_t len);

#endif
