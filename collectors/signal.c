/*
 * signal.c: the signal collector, the lifecycle of every signal the
 * workload sends or receives.
 *
 * Record side: four tracepoints, every hit with its callchain and raw
 * fields: signal:signal_generate (in the sender's context: the sending
 * stack), signal:signal_deliver (in the receiver's, on its way back to
 * user mode: the interrupted stack), and the entry and exit of the
 * rt_sigreturn system call.  signal_generate is two events with
 * complementary filters on the siginfo's code: what user code sends, with
 * the whole stack, and "#kernel", the timers and the kernel's own
 * signals, with the kernel's stack only (split_generate); the report
 * counts both as signal_generate.  Nothing else happens at record time.
 *
 * Report side: the hits are decoded into struct signal_event and fed, in
 * time order, to the state machine of signal.h, which pairs generations
 * with deliveries (latency) and deliveries with sigreturns (handler time)
 * per signal number.  The per-signal sending and interrupted stacks are
 * counts over the profile's interned stacks.  The text section is one row
 * per signal and the top stacks of the busiest ones; the JSON key is
 * "signals" (docs/signal.md, docs/report-json.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/base/json.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/base/term.h"
#include "sigprof/view/findings.h"
#include "sigprof/view/view.h"
#include "sigprof/collectors/signal.h"
#include "sigprof/collectors/stack_lender.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

/* ---- signal numbers (the kernel's generic numbering; their names: signal_name() in profiler/util.c) ---- */

/* The kernel's first real-time signal: from it on, signals queue rather than merge with a pending one. */
#define KERNEL_SIGRTMIN 32

bool signal_default_is_fatal(int signo)
{
	switch (signo) {
	case 17: /* SIGCHLD */
	case 18: /* SIGCONT */
	case 19: /* SIGSTOP */
	case 20: /* SIGTSTP */
	case 21: /* SIGTTIN */
	case 22: /* SIGTTOU */
	case 23: /* SIGURG */
	case 28: /* SIGWINCH */
		return false;
	default:
		return signo >= 1 && signo <= SIGNAL_MAX;
	}
}

#define SIGKILL_NUMBER 9

/* ---- the state machine (signal.h) ---- */

/* Past these, the oldest entry is dropped (and counted): a bound on memory for pathological runs. */
#define MAX_QUEUED_GENERATIONS (1u << 16)
#define MAX_HANDLER_NESTING 64

/* The generation times, oldest first, of one signal for one thread or one process: a ring. */
struct pending_queue {
	uint64_t *times;
	uint32_t head, count, cap;
};

struct handler_frame {
	int sig;
	uint64_t time;  /* of the delivery */
	uint32_t stack; /* the delivery's interned stack: the interrupted code's, or SIGNAL_NO_STACK */
};

struct thread_state {
	uint32_t pid;                 /* its process, as its samples say */
	uint32_t depth;
	size_t cap;
	struct handler_frame *frames; /* running handlers, innermost last */
	struct handler_frame closed;  /* the handler its last rt_sigreturn closed, until its next delivery */
	bool has_closed;
};

struct signal_tracker {
	struct signal_figures *figures[SIGNAL_MAX + 1];
	struct u64_map threads; /* tid -> struct thread_state */
	struct u64_map queues;  /* queue_key() -> struct pending_queue */
	uint64_t unmatched_sigreturns;
	uint64_t bad_events;
	signal_handler_hook handler_hook;
	void *handler_hook_ctx;
};

void signal_tracker_set_handler_hook(struct signal_tracker *a, signal_handler_hook hook, void *ctx)
{
	a->handler_hook = hook;
	a->handler_hook_ctx = ctx;
}

/* A thread's own queue for sig, or (shared) its process's. */
static uint64_t queue_key(bool shared, uint32_t id, int sig)
{
	return (uint64_t)shared << 40 | (uint64_t)id << 8 | (uint64_t)sig;
}

struct signal_tracker *signal_tracker_new(void)
{
	return xcalloc(1, sizeof(struct signal_tracker));
}

static struct signal_figures *figures_of(struct signal_tracker *a, int sig)
{
	if (sig < 1 || sig > SIGNAL_MAX) {
		a->bad_events++;
		return NULL;
	}
	if (!a->figures[sig]) {
		a->figures[sig] = xcalloc(1, sizeof(struct signal_figures));
		a->figures[sig]->signo = sig;
	}
	return a->figures[sig];
}

const struct signal_figures *signal_tracker_figures(const struct signal_tracker *a, int signo)
{
	return signo >= 1 && signo <= SIGNAL_MAX ? a->figures[signo] : NULL;
}

uint64_t signal_tracker_unmatched_sigreturns(const struct signal_tracker *a)
{
	return a->unmatched_sigreturns;
}

uint64_t signal_tracker_bad_events(const struct signal_tracker *a)
{
	return a->bad_events;
}

/* The u64_map values of the stack counters are the counts themselves (never 0 once present). */
static void count_stack_n(struct u64_map *counts, uint32_t stack, uintptr_t n)
{
	if (stack == SIGNAL_NO_STACK)
		return;
	uintptr_t had = (uintptr_t)u64_map_get(counts, stack);
	u64_map_put(counts, stack, (void *)(had + n));
}

static void count_stack(struct u64_map *counts, uint32_t stack)
{
	count_stack_n(counts, stack, 1);
}

/* The counts of counts under remap(ctx, stack), summed where two stacks become one. */
static void remap_counts(struct u64_map *counts, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	struct u64_map old = *counts;
	memset(counts, 0, sizeof(*counts));
	size_t pos = 0;
	uint64_t stack;
	void *n;
	while (u64_map_next(&old, &pos, &stack, &n))
		count_stack_n(counts, stack == SIGNAL_NO_STACK ? SIGNAL_NO_STACK : remap(ctx, (uint32_t)stack),
			      (uintptr_t)n);
	u64_map_free(&old);
}

void signal_tracker_remap_stacks(struct signal_tracker *a, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	for (int sig = 0; sig <= SIGNAL_MAX; sig++) {
		if (!a->figures[sig])
			continue;
		remap_counts(&a->figures[sig]->senders, remap, ctx);
		remap_counts(&a->figures[sig]->interrupted, remap, ctx);
	}
}

static void queue_push(struct pending_queue *q, uint64_t time)
{
	if (q->count == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 4;
		uint64_t *times = xmalloc(cap * sizeof(*times));
		for (uint32_t i = 0; i < q->count; i++)
			times[i] = q->times[(q->head + i) % q->cap];
		free(q->times);
		q->times = times;
		q->cap = cap;
		q->head = 0;
	}
	q->times[(q->head + q->count) % q->cap] = time;
	q->count++;
}

static uint64_t queue_pop(struct pending_queue *q)
{
	uint64_t time = q->times[q->head];
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return time;
}

/* Drop a queue; its generations were never delivered. */
static void queue_discard(struct signal_tracker *a, uint64_t key)
{
	struct pending_queue *q = u64_map_remove(&a->queues, key);
	if (!q)
		return;
	a->figures[key & 0xff]->unmatched_generations += q->count;
	free(q->times);
	free(q);
}

static void thread_discard(struct signal_tracker *a, uint32_t tid)
{
	struct thread_state *t = u64_map_remove(&a->threads, tid);
	if (!t)
		return;
	for (uint32_t i = 0; i < t->depth; i++)
		a->figures[t->frames[i].sig]->unreturned++;
	free(t->frames);
	free(t);
}

void signal_tracker_thread_exit(struct signal_tracker *a, uint32_t pid, uint32_t tid)
{
	for (int sig = 1; sig <= SIGNAL_MAX; sig++)
		queue_discard(a, queue_key(false, tid, sig));
	thread_discard(a, tid);
}

void signal_tracker_records_lost(struct signal_tracker *a)
{
	size_t pos = 0;
	uint64_t key;
	void *value;
	while (u64_map_next(&a->queues, &pos, &key, &value)) {
		struct pending_queue *q = value;
		a->figures[key & 0xff]->dropped_at_loss += q->count;
		free(q->times);
		free(q);
	}
	u64_map_free(&a->queues);
	pos = 0;
	while (u64_map_next(&a->threads, &pos, &key, &value)) {
		struct thread_state *t = value;
		for (uint32_t i = 0; i < t->depth; i++)
			a->figures[t->frames[i].sig]->dropped_at_loss++;
		t->depth = 0;
		t->has_closed = false;
	}
}

/* The whole process dies (a fatal signal, a group exit): its shared pending signals go with it. */
static void process_exit(struct signal_tracker *a, uint32_t pid)
{
	for (int sig = 1; sig <= SIGNAL_MAX; sig++)
		queue_discard(a, queue_key(true, pid, sig));
}

/* The state of thread tid; a tid seen before in another process is a new thread: the old one exited. */
static struct thread_state *thread_of(struct signal_tracker *a, uint32_t pid, uint32_t tid)
{
	struct thread_state *t = u64_map_get(&a->threads, tid);
	if (t && t->pid != pid) {
		signal_tracker_thread_exit(a, t->pid, tid);
		t = NULL;
	}
	if (!t) {
		t = xcalloc(1, sizeof(*t));
		t->pid = pid;
		u64_map_put(&a->threads, tid, t);
	}
	return t;
}

uint32_t signal_tracker_running_handlers(const struct signal_tracker *a, uint32_t pid, uint32_t tid, int *sigs,
					  uint32_t max)
{
	const struct thread_state *t = u64_map_get(&a->threads, tid);
	if (!t || t->pid != pid)
		return 0;
	for (uint32_t i = 0; i < t->depth && i < max; i++)
		sigs[i] = t->frames[t->depth - 1 - i].sig;
	return t->depth;
}

uint32_t signal_tracker_delivery_stack(const struct signal_tracker *a, uint32_t pid, uint32_t tid, uint32_t k,
				       bool returned, int *sig)
{
	const struct thread_state *t = u64_map_get(&a->threads, tid);
	if (!t || t->pid != pid)
		return SIGNAL_NO_STACK;
	const struct handler_frame *h;
	if (returned && k == 0 && t->has_closed)
		h = &t->closed;
	else if (k < t->depth)
		h = &t->frames[t->depth - 1 - k];
	else
		return SIGNAL_NO_STACK;
	*sig = h->sig;
	return h->stack;
}

static struct pending_queue *queue_get(struct signal_tracker *a, uint64_t key, bool create)
{
	struct pending_queue *q = u64_map_get(&a->queues, key);
	if (!q && create) {
		q = xcalloc(1, sizeof(*q));
		u64_map_put(&a->queues, key, q);
	}
	return q;
}

/*
 * A standard signal is pending at most once per queue (the kernel reports
 * a second one as already pending), so a queued one still here when a new
 * one is queued was taken where no signal_deliver fires (sigwaitinfo,
 * signalfd) or its record was lost: it is dropped, not matched.
 */
static void on_generate(struct signal_tracker *a, struct signal_figures *f, const struct signal_event *e)
{
	f->generated++;
	if (e->result >= 0 && e->result < SIGNAL_RESULT_COUNT)
		f->results[e->result]++;
	count_stack(&f->senders, e->stack);
	if (e->result != SIGNAL_RESULT_DELIVERED && e->result != SIGNAL_RESULT_LOSE_INFO)
		return;
	uint32_t owner = e->target;
	if (e->group) {
		const struct thread_state *t = u64_map_get(&a->threads, e->target);
		owner = t ? t->pid : e->target; /* unknown thread: a process-directed signal names the leader */
	}
	struct pending_queue *q = queue_get(a, queue_key(e->group, owner, e->sig), true);
	if (q->count && (e->sig < KERNEL_SIGRTMIN || q->count >= MAX_QUEUED_GENERATIONS)) {
		queue_pop(q);
		f->unmatched_generations++;
	}
	queue_push(q, e->time);
}

/* As the kernel dequeues: the thread's own pending signals first, then its process's. */
static bool take_generation(struct signal_tracker *a, const struct signal_event *e, uint64_t *time)
{
	struct pending_queue *q = queue_get(a, queue_key(false, e->tid, e->sig), false);
	if (!q || !q->count)
		q = queue_get(a, queue_key(true, e->pid, e->sig), false);
	if (!q || !q->count)
		return false;
	*time = queue_pop(q);
	return true;
}

static void push_handler(struct signal_tracker *a, struct thread_state *t, const struct signal_event *e)
{
	if (t->depth == MAX_HANDLER_NESTING) {
		/* handlers left by longjmp pile up: forget the outermost */
		a->figures[t->frames[0].sig]->unreturned++;
		memmove(t->frames, t->frames + 1, (t->depth - 1) * sizeof(*t->frames));
		t->depth--;
	}
	t->has_closed = false;
	GROW(t->frames, t->cap, t->depth + 1);
	t->frames[t->depth++] = (struct handler_frame){ e->sig, e->time, e->stack };
}

static void on_deliver(struct signal_tracker *a, struct signal_figures *f, const struct signal_event *e)
{
	struct thread_state *t = thread_of(a, e->pid, e->tid);
	f->delivered++;
	count_stack(&f->interrupted, e->stack);
	uint64_t generated;
	if (take_generation(a, e, &generated)) {
		duration_add(&f->latency, e->time > generated ? e->time - generated : 0);
		slowest_event_note(&f->slowest_latency, generated, e->time, e->pid, e->tid);
	}
	else
		f->unmatched_deliveries++;
	if (e->sa_handler == SIGNAL_HANDLER_IGNORE) {
		f->to_ignore++;
	} else if (e->sa_handler != SIGNAL_HANDLER_DEFAULT && e->sig != SIGKILL_NUMBER) {
		f->to_handler++;
		push_handler(a, t, e);
	} else {
		f->to_default++;
		if (e->sig == SIGKILL_NUMBER || signal_default_is_fatal(e->sig)) {
			/* the thread dies here, and with it its process */
			signal_tracker_thread_exit(a, e->pid, e->tid);
			process_exit(a, e->pid);
		}
	}
}

static void on_sigreturn(struct signal_tracker *a, const struct signal_event *e)
{
	struct thread_state *t = thread_of(a, e->pid, e->tid);
	if (!t->depth) {
		a->unmatched_sigreturns++;
		return;
	}
	struct handler_frame h = t->frames[--t->depth];
	t->closed = h;
	t->has_closed = true;
	struct signal_figures *f = a->figures[h.sig];
	f->sigreturns++;
	duration_add(&f->handler, e->time > h.time ? e->time - h.time : 0);
	slowest_event_note(&f->slowest_handler, h.time, e->time, e->pid, e->tid);
	if (a->handler_hook)
		a->handler_hook(a->handler_hook_ctx, e->pid, e->tid, h.sig, h.stack, e->time > h.time ? e->time - h.time : 0);
}

void signal_tracker_event(struct signal_tracker *a, const struct signal_event *e)
{
	struct signal_figures *f;
	switch (e->kind) {
	case SIGNAL_EVENT_GENERATE:
		if ((f = figures_of(a, e->sig))) {
			thread_of(a, e->pid, e->tid); /* learn the sender's process */
			on_generate(a, f, e);
		}
		break;
	case SIGNAL_EVENT_DELIVER:
		if ((f = figures_of(a, e->sig)))
			on_deliver(a, f, e);
		break;
	case SIGNAL_EVENT_SIGRETURN_ENTER:
		on_sigreturn(a, e);
		break;
	case SIGNAL_EVENT_SIGRETURN_EXIT:
		thread_of(a, e->pid, e->tid);
		break;
	}
}

/* The keys of a map, to remove its entries without iterating it while it changes. */
static size_t map_keys(const struct u64_map *m, uint64_t **keys)
{
	*keys = xmalloc((m->count + 1) * sizeof(**keys));
	size_t n = 0, pos = 0;
	void *value;
	while (u64_map_next(m, &pos, &(*keys)[n], &value))
		n++;
	return n;
}

void signal_tracker_finish(struct signal_tracker *a)
{
	uint64_t *keys;
	size_t n = map_keys(&a->queues, &keys);
	for (size_t i = 0; i < n; i++)
		queue_discard(a, keys[i]);
	free(keys);
	n = map_keys(&a->threads, &keys);
	for (size_t i = 0; i < n; i++)
		thread_discard(a, (uint32_t)keys[i]);
	free(keys);
}

void signal_tracker_free(struct signal_tracker *a)
{
	if (!a)
		return;
	signal_tracker_finish(a);
	u64_map_free(&a->queues);
	u64_map_free(&a->threads);
	for (int sig = 1; sig <= SIGNAL_MAX; sig++) {
		struct signal_figures *f = a->figures[sig];
		if (!f)
			continue;
		duration_free(&f->latency);
		duration_free(&f->handler);
		u64_map_free(&f->senders);
		u64_map_free(&f->interrupted);
		free(f);
	}
	free(a);
}

/* ---- record side ---- */

/*
 * Which stacks are worth their cost (a callchain walk costs more than the
 * tracepoint itself): the sender's whole stack (a kill system call; a
 * timer's generation takes the kernel's part only, split_generate); only
 * the user part at delivery, whose kernel part is always
 * the return to user mode; none at rt_sigreturn, whose user part is the
 * interrupted stack again and whose kernel part is the system call entry.
 *
 * By default the user part is a copy of the user stack unwound with DWARF
 * (code without frame pointers, which is most of a Debian system, has no
 * frame-pointer chain to follow) with the kernel's frame-pointer walk beside
 * it, which the report follows where the copy ends.  The copy's size is
 * stack_copy_default()'s: short for a program with frame pointers,
 * CPU_SIGNAL_STACK_USER_SIZE for one without, enough to reach _start from
 * stress-ng's timer loop and to pass the signal frame of its handler (the
 * delivery's stack is also the one a handler's stack is joined to past its
 * signal frame: collector.h, delivery_stack).  A program that signals as
 * fast as it can (signal_storm: 200 000 kill()s) lost up to a tenth of its
 * records with 3072 bytes at both events on our loaded 2-CPU VMs, and none
 * with the short copy its frame pointers allow (docs/performance.md).
 *
 * In a program without frame pointers a whole copy at every generation
 * and delivery cost stress-ng --signal six sevenths of its throughput
 * (`-e signal` alone kept 0.13-0.14 of the bare run, 0.34 with
 * --call-graph fp), so there each takes a key (stack_key_options(): a
 * DWARF unwind of a SIGNAL_KEY_STACK_USER_SIZE copy) and a "#stack"
 * sibling the whole copy while the hits of its CPU stay under
 * STACK_COPY_BOUND_HZ; the report lends each key its call site's stack
 * (stack_lender.h).  The kernel writes a hit's copy before its key (the
 * later-opened event of a tracepoint fires first), so a key ends its hit.
 */
enum signal_stack { STACK_ALL, STACK_USER, STACK_NONE };

static const struct signal_tracepoint {
	const char *system, *name;
	enum signal_event_kind kind;
	int path;
	enum signal_stack stack;
} signal_tracepoints[] = {
	{ "signal", "signal_generate", SIGNAL_EVENT_GENERATE, PATH_SIGNAL_GENERATE, STACK_ALL },
	{ "signal", "signal_deliver", SIGNAL_EVENT_DELIVER, PATH_SIGNAL_DELIVER, STACK_USER },
	{ "syscalls", "sys_enter_rt_sigreturn", SIGNAL_EVENT_SIGRETURN_ENTER, PATH_SIGRETURN, STACK_NONE },
	{ "syscalls", "sys_exit_rt_sigreturn", SIGNAL_EVENT_SIGRETURN_EXIT, PATH_SIGRETURN, STACK_NONE },
};

/* Which generations are the kernel's own, and why they keep its stack only: docs/signal.md, "Generations by the kernel". */
const struct signal_kernel_code signal_kernel_codes[] = {
	{ -2, "SI_TIMER",
	  "a POSIX timer's expiry (SIGEV_SIGNAL, SIGEV_THREAD_ID): the hrtimer interrupt (posix_timer_fn), or for a "
	  "CPU-time clock the tick or the task work run on the way back to user mode" },
	{ 0x80, "SI_KERNEL",
	  "SEND_SIG_PRIV: itimers (SIGALRM from the hrtimer interrupt, SIGVTALRM and SIGPROF from the tick), "
	  "RLIMIT_CPU's SIGXCPU, the tty's job-control signals (SIGINT, SIGHUP, SIGWINCH from its work queue), the OOM "
	  "killer's SIGKILL, SIGIO without F_SETSIG; and force_sig() of a few faults (x86's general protection "
	  "SIGSEGV, a bad sigreturn frame), raised in the faulting task, whose delivery records the same user stack" },
};
const size_t signal_kernel_code_count = ARRAY_SIZE(signal_kernel_codes);

void signal_generate_filter(bool kernel, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < signal_kernel_code_count; i++)
		sb_addf(&sb, "%scode %s %d", i == 0 ? "" : kernel ? " || " : " && ", kernel ? "==" : "!=",
			signal_kernel_codes[i].code);
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}

/*
 * Split signal_generate (specs[generate], with the whole stack) in two by
 * the filters of signal_generate_filter(): it keeps the generations of
 * user code, and a sibling "signal:signal_generate#kernel" takes the
 * kernel's own with the kernel's callchain only (no user chain, no copy).
 * The kernel counts a filtered tracepoint event only on the hits its
 * filter passes, so the two exact totals add up to the tracepoint's.  A
 * kernel that refuses the filter (a probe sets it on an event of our own)
 * keeps today's one event with the whole stack.
 */
static void split_generate(struct event_list *events, size_t generate)
{
	char by_user[128], by_kernel[128];
	signal_generate_filter(false, by_user, sizeof(by_user));
	signal_generate_filter(true, by_kernel, sizeof(by_kernel));
	if (perf_event_probe_filter(&events->specs[generate].attr, by_kernel) < 0)
		return;
	events->specs[generate].tracepoint_filter = xstrdup(by_user);
	size_t kernel = rate_bound_add_sibling(events, generate, SIGNAL_KERNEL_SUFFIX, by_kernel);
	struct perf_event_attr *a = &events->specs[kernel].attr;
	a->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	a->sample_regs_user = 0;
	a->sample_stack_user = 0;
	a->exclude_callchain_user = 1;
}

static int signal_add_events(struct record_options *opts, struct event_list *events, char *reason,
			     size_t reasonlen)
{
	bool keys = stack_keys_lent(opts) && !opts->program_frame_pointers;
	struct record_options o =
		keys ? stack_key_options(opts, CPU_SIGNAL_STACK_USER_SIZE, SIGNAL_KEY_STACK_USER_SIZE) : *opts;
	o.call_graph = call_graph_for(opts, CALL_GRAPH_DWARF);
	o.keep_user_chain = !opts->call_graph_chosen && !keys;
	if (!keys)
		o.stack_user_size = stack_copy_default(opts, CPU_SIGNAL_STACK_USER_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(signal_tracepoints); i++) {
		const struct signal_tracepoint *tp = &signal_tracepoints[i];
		int err = tracepoint_add(events, &o, "signal", tp->system, tp->name, tp->stack != STACK_NONE, reason,
					 reasonlen);
		if (err)
			return err;
		size_t record = events->count - 1;
		if (tp->stack == STACK_USER)
			events->specs[record].attr.exclude_callchain_kernel = 1;
		/* --call-graph sets one mode for every event: only the default stacks are split */
		if (tp->kind == SIGNAL_EVENT_GENERATE && !opts->call_graph_chosen)
			split_generate(events, record);
		if (keys && tp->stack != STACK_NONE) /* the record counts every hit its filter passes */
			rate_bound_add_stack_copies(events, opts, record, record, RATE_BOUND_STACK_SUFFIX,
						    CPU_SIGNAL_STACK_USER_SIZE, STACK_COPY_BOUND_HZ,
						    tp->stack == STACK_ALL);
	}
	return 0;
}

/* ---- report side ---- */

struct signal_report {
	int self;                                  /* this collector's index in the profile */
	const struct profile *profile;             /* for the handler hook's weights */
	struct signal_tracker *analysis;
	const struct signal_tracepoint **by_event; /* event index -> its tracepoint, NULL: not one of ours */
	bool *known;                               /* by_event[i] was looked up */
	bool *copy;                                /* event i is a "#stack" copy of by_event[i]'s */
	size_t nevents;
	uint64_t undecodable;                      /* samples whose raw fields could not be read */
	struct u64_map tasks;                      /* tids of the workload's tasks (FORK, COMM, samples) */
	uint64_t other_tasks_generated;            /* generations in an interrupt for another process's task */
	struct stack_lender *lender;               /* the keys of generations and deliveries, and their copies */
	uint32_t counted_from, counted_on;         /* the last key and the stack it counts on (counted_stack) */
};

static uint32_t running_handlers(void *state, uint32_t pid, uint32_t tid, int *sigs, uint32_t max)
{
	const struct signal_report *r = state;
	return signal_tracker_running_handlers(r->analysis, pid, tid, sigs, max);
}

static uint32_t delivery_stack(void *state, uint32_t pid, uint32_t tid, uint32_t k, bool returned, int *sig)
{
	const struct signal_report *r = state;
	uint32_t stack = signal_tracker_delivery_stack(r->analysis, pid, tid, k, returned, sig);
	return stack == SIGNAL_NO_STACK ? COLLECTOR_NO_STACK : stack;
}

/* The weights (collector.h): deliveries and handler time per interrupted stack, labelled with the signal. */
enum { WEIGHT_DELIVERIES, WEIGHT_HANDLER_NS };
static const struct weight_kind signal_weights[] = {
	[WEIGHT_DELIVERIES] = { "deliveries", "count", false },
	[WEIGHT_HANDLER_NS] = { "handler", "nanoseconds", true },
};

static void charge_handler(void *ctx, uint32_t pid, uint32_t tid, int sig, uint32_t stack, uint64_t ns)
{
	const struct signal_report *r = ctx;
	if (stack != SIGNAL_NO_STACK)
		view_add_weight(r->profile, r->self, stack, pid, tid, sig, 0, WEIGHT_HANDLER_NS, ns);
}

static void *signal_create(const struct profile *p, int self)
{
	struct signal_report *r = xcalloc(1, sizeof(*r));
	r->self = self;
	r->profile = p;
	r->analysis = signal_tracker_new();
	r->lender = stack_lender_new();
	r->counted_from = r->counted_on = UINT32_MAX;
	if (view_weights_wanted(p))
		signal_tracker_set_handler_hook(r->analysis, charge_handler, r);
	return r;
}

/*
 * The tracepoint of an event's name, "SYSTEM:NAME", or NULL when it is not
 * one of ours.  "signal:signal_generate#kernel" (split_generate) is
 * signal_generate too: the report counts both as the one event.  A
 * "#stack" copy (*copy set) is its tracepoint's too, counted nowhere.
 */
static const struct signal_tracepoint *tracepoint_named(const char *event_name, bool *copy)
{
	*copy = false;
	size_t base_len;
	const char *suffix = rate_bound_suffix(event_name, &base_len);
	for (size_t i = 0; i < ARRAY_SIZE(signal_tracepoints); i++) {
		const struct signal_tracepoint *tp = &signal_tracepoints[i];
		size_t len = strlen(tp->system), name_len = strlen(tp->name);
		if (base_len != len + 1 + name_len || strncmp(event_name, tp->system, len) != 0 ||
		    event_name[len] != ':' || strncmp(event_name + len + 1, tp->name, name_len) != 0)
			continue;
		if (!suffix || (tp->kind == SIGNAL_EVENT_GENERATE && strcmp(suffix, SIGNAL_KERNEL_SUFFIX) == 0))
			return tp;
		if (tp->stack != STACK_NONE && rate_bound_stack_copy_suffix(suffix)) {
			*copy = true;
			return tp;
		}
	}
	return NULL;
}

static const struct signal_tracepoint *tracepoint_of_sample(struct signal_report *r, const struct sp_sample *s)
{
	size_t i = s->event->index;
	if (i >= r->nevents) {
		size_t n = i + 16;
		r->by_event = xrealloc(r->by_event, n * sizeof(*r->by_event));
		r->known = xrealloc(r->known, n * sizeof(*r->known));
		r->copy = xrealloc(r->copy, n * sizeof(*r->copy));
		memset(r->known + r->nevents, 0, (n - r->nevents) * sizeof(*r->known));
		r->nevents = n;
	}
	if (!r->known[i]) {
		r->by_event[i] = tracepoint_named(s->event->name, &r->copy[i]);
		r->known[i] = true;
	}
	return r->by_event[i];
}

/* The trace entry's common_flags: the hit ran in a hard or soft interrupt, or an NMI (TRACE_FLAG_*). */
#define TRACE_FLAGS_INTERRUPT (0x08 | 0x10 | 0x40)

static void task_seen(struct signal_report *r, uint32_t tid)
{
	if (tid && !u64_map_get(&r->tasks, tid))
		u64_map_put(&r->tasks, tid, (void *)1);
}

/*
 * signal_generate fires in the sender's context, and an interrupt runs in
 * whatever task is current: a POSIX timer or itimer of another process that
 * expires while the workload is on the CPU generates its signal "in" the
 * workload.  Such a hit (interrupt context, a target that is none of the
 * workload's tasks) is not the workload's: it is dropped and counted apart.
 * A workload's own timers (stress-ng --timer) target its own tasks and stay.
 */
static bool generated_for_another_process(struct signal_report *r, const struct profile *p,
					  const struct sp_sample *s)
{
	const struct tep_event *ev = view_tracepoint_of(p, s);
	uint64_t flags;
	int64_t target;
	if (!ev || !tp_field_u64(ev, s, "common_flags", &flags) || !(flags & TRACE_FLAGS_INTERRUPT) ||
	    !tp_field_i64(ev, s, "pid", &target))
		return false;
	return target > 0 && !u64_map_get(&r->tasks, (uint64_t)target);
}

static int signal_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	struct signal_report *r = state;
	const struct signal_tracepoint *tp = tracepoint_of_sample(r, s);
	if (!tp)
		return -1;
	if (r->copy[s->event->index])
		return tp->path | PATH_STACK_ONLY; /* counted nowhere: lent to its key */
	if (tp->kind == SIGNAL_EVENT_GENERATE && generated_for_another_process(r, p, s)) {
		r->other_tasks_generated++;
		return PATH_NOT_WORKLOAD;
	}
	return tp->path;
}

/* The raw fields a kind needs; false when they cannot be read. */
static bool decode_fields(const struct tep_event *ev, const struct sp_sample *s, struct signal_event *e)
{
	int64_t sig, target, group, result;
	switch (e->kind) {
	case SIGNAL_EVENT_GENERATE:
		if (!tp_field_i64(ev, s, "sig", &sig) || !tp_field_i64(ev, s, "pid", &target) ||
		    !tp_field_i64(ev, s, "group", &group) || !tp_field_i64(ev, s, "result", &result))
			return false;
		e->target = (uint32_t)target;
		e->group = group != 0;
		e->result = (int)result;
		break;
	case SIGNAL_EVENT_DELIVER:
		if (!tp_field_i64(ev, s, "sig", &sig) || !tp_field_u64(ev, s, "sa_handler", &e->sa_handler))
			return false;
		break;
	default:
		return true;
	}
	e->sig = sig < 0 || sig > SIGNAL_MAX ? -1 : (int)sig;
	return true;
}

static void signal_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct signal_report *r = state;
	const struct signal_tracepoint *tp = tracepoint_of_sample(r, s);
	r->counted_from = r->counted_on = UINT32_MAX;
	if (!tp)
		return;
	if (r->copy[s->event->index]) {
		stack_lend_copy(r->lender, s->tid, stack);
		return;
	}
	if (tp->stack != STACK_NONE) {
		/* the copy of this hit, if it had one, came first: the key ends the hit */
		r->counted_from = stack;
		stack = r->counted_on = stack_lend_key(r->lender, s->tid, stack);
		stack_lend_end(r->lender, s->tid);
	}
	struct signal_event e = { .kind = tp->kind, .time = s->time, .pid = s->pid, .tid = s->tid, .stack = stack };
	if (tp->kind != SIGNAL_EVENT_GENERATE)
		task_seen(r, s->tid); /* deliveries and sigreturns run in the workload's own tasks */
	const struct tep_event *ev = view_tracepoint_of(p, s);
	if (!ev || !decode_fields(ev, s, &e)) {
		r->undecodable++;
		return;
	}
	signal_tracker_event(r->analysis, &e);
	if (e.kind == SIGNAL_EVENT_DELIVER && e.sig > 0)
		view_add_weight(p, r->self, stack, s->pid, s->tid, e.sig, 0, WEIGHT_DELIVERIES, 1);
}

/* The describe hook (collector.h): the signal by name, a generation's result, a delivery's disposition. */
static bool signal_describe(void *state, const struct profile *p, const struct sp_sample *s, char *buf, size_t len)
{
	static const char *const results[SIGNAL_RESULT_COUNT] = {
		[SIGNAL_RESULT_DELIVERED] = "queued", [SIGNAL_RESULT_IGNORED] = "ignored",
		[SIGNAL_RESULT_ALREADY_PENDING] = "already pending", [SIGNAL_RESULT_OVERFLOW_FAIL] = "queue full, dropped",
		[SIGNAL_RESULT_LOSE_INFO] = "queued without its siginfo",
	};
	const struct signal_tracepoint *tp = tracepoint_of_sample(state, s);
	const struct tep_event *ev = view_tracepoint_of(p, s);
	if (!tp || !ev)
		return false;
	struct signal_event e = { .kind = tp->kind };
	if (!decode_fields(ev, s, &e))
		return false;
	char name[32];
	if (tp->kind == SIGNAL_EVENT_GENERATE)
		snprintf(buf, len, "%s to %u, %s", signal_name(e.sig, name, sizeof(name)), e.target,
			 e.result >= 0 && e.result < SIGNAL_RESULT_COUNT ? results[e.result] : "unknown result");
	else if (tp->kind == SIGNAL_EVENT_DELIVER)
		snprintf(buf, len, "%s to %s", signal_name(e.sig, name, sizeof(name)),
			 e.sa_handler == SIGNAL_HANDLER_IGNORE    ? "SIG_IGN"
			 : e.sa_handler == SIGNAL_HANDLER_DEFAULT ? "its default action"
								  : "its handler");
	else
		return false;
	return true;
}

/* The counted_stack hook (collector.h): a generation or delivery counts on the stack stack_lend_key() chose. */
static uint32_t signal_counted_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct signal_report *r = state;
	return stack == r->counted_from ? r->counted_on : stack;
}

/* The lent_stack hook (collector.h): a generation's or delivery's key counts on what its call site's copies taught. */
static uint32_t signal_lent_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct signal_report *r = state;
	return stack_lent(r->lender, stack);
}

static void signal_finish(void *state, const struct profile *p)
{
	struct signal_report *r = state;
	signal_tracker_finish(r->analysis);
	signal_tracker_remap_stacks(r->analysis, stack_lent, r->lender);
	signal_tracker_remap_stacks(r->analysis, view_stack_moved, (void *)p); /* keys completed at the end of the load */
}

static void signal_destroy(void *state)
{
	struct signal_report *r = state;
	signal_tracker_free(r->analysis);
	stack_lender_free(r->lender);
	u64_map_free(&r->tasks);
	free(r->by_event);
	free(r->known);
	free(r->copy);
	free(r);
}

/* ---- the stacks of one signal, by count ---- */

struct stack_count {
	uint32_t stack;
	uint64_t count;
};

static int compare_stack_counts(const void *a, const void *b)
{
	const struct stack_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The stacks of a counter map, most frequent first; returns how many, *out to free. */
static size_t sorted_stacks(const struct u64_map *counts, struct stack_count **out)
{
	struct stack_count *rows = xmalloc((counts->count + 1) * sizeof(*rows));
	size_t n = 0, pos = 0;
	uint64_t key;
	void *value;
	while (u64_map_next(counts, &pos, &key, &value))
		rows[n++] = (struct stack_count){ (uint32_t)key, (uintptr_t)value };
	sort_items(rows, n, sizeof(*rows), compare_stack_counts);
	*out = rows;
	return n;
}

static uint64_t not_delivered(const struct signal_figures *f)
{
	return f->results[SIGNAL_RESULT_IGNORED] + f->results[SIGNAL_RESULT_ALREADY_PENDING] +
	       f->results[SIGNAL_RESULT_OVERFLOW_FAIL] + f->results[SIGNAL_RESULT_LOSE_INFO];
}

/* ---- text ---- */

/* Frames per stack in the text section: the point is which code, not the whole chain. */
#define TEXT_FRAMES 4
/* Signals whose stacks the text section shows. */
#define TEXT_BUSIEST 3

static double micros(uint64_t ns)
{
	return (double)ns / 1000.0;
}

/* The summary table's columns: signal, four counts, latency p50/p99/max, handler p50/p99/max (view_table). */
static const unsigned text_columns[] = { 15, 11, 11, 11, 11, 31, 31 };

static void text_row(const struct signal_figures *f, struct view_table *t)
{
	char name[32];
	struct strbuf row = { 0 };
	sb_addf(&row, "  %-13s %10llu %10llu %10llu %10llu", signal_name(f->signo, name, sizeof(name)),
		(unsigned long long)f->generated, (unsigned long long)f->delivered,
		(unsigned long long)f->sigreturns, (unsigned long long)not_delivered(f));
	const struct duration_stats *d[] = { &f->latency, &f->handler };
	for (int i = 0; i < 2; i++) {
		if (!d[i]->count) {
			sb_addf(&row, "  %9s %9s %9s", "-", "-", "-");
			continue;
		}
		sb_addf(&row, "  %9.2f %9.2f %9.2f", micros(duration_quantile(d[i], 0.5)),
			micros(duration_quantile(d[i], 0.99)), micros(d[i]->max));
	}
	view_table_addf(t, "%s", row.buf);
	sb_free(&row);
}

/*
 * The busiest stacks of one kind, TEXT_FRAMES frames each (view_stack_rows:
 * rows that would read the same show where they differ).  Stacks that read
 * the same whole (they differ only in addresses within the same functions)
 * are one row, their counts summed.
 */
static void text_stacks(const struct profile *p, const char *title, const struct u64_map *counts,
			const struct view_options *o, FILE *out)
{
	struct stack_count *rows;
	size_t n = sorted_stacks(counts, &rows);
	size_t shown = n < o->stacks_per_path ? n : o->stacks_per_path;
	fprintf(out, "    %s (%zu distinct stacks)\n", title, n);
	uint32_t *stacks = xcalloc(shown ? shown : 1, sizeof(*stacks));
	struct strbuf *lines = xcalloc(shown ? shown : 1, sizeof(*lines));
	for (size_t i = 0; i < shown; i++)
		stacks[i] = rows[i].stack;
	/* leaf first: the user frames (where the program was), or the kernel frames when there are none */
	const struct stack_line_style style = { .separator = " <- ", .max_frames = TEXT_FRAMES, .user_frames = true,
						.more = " <- ..." };
	/* within the width: what the count's 18 columns leave */
	view_stack_rows(p, stacks, shown, &style, o->width > 18 ? o->width - 18 : 0, lines);
	size_t kept = 0;
	for (size_t i = 0; i < shown; i++) {
		size_t j = 0;
		while (j < kept && strcmp(lines[i].buf ? lines[i].buf : "", lines[j].buf ? lines[j].buf : "") != 0)
			j++;
		if (j < kept) {
			rows[j].count += rows[i].count;
			continue;
		}
		struct strbuf moved = lines[kept];
		lines[kept] = lines[i];
		lines[i] = moved;
		rows[kept++] = rows[i];
	}
	for (size_t i = 1; i < kept; i++) /* a few rows: an insertion sort keeps each line beside its count */
		for (size_t j = i; j > 0 && rows[j].count > rows[j - 1].count; j--) {
			struct stack_count r = rows[j];
			rows[j] = rows[j - 1];
			rows[j - 1] = r;
			struct strbuf l = lines[j];
			lines[j] = lines[j - 1];
			lines[j - 1] = l;
		}
	for (size_t i = 0; i < kept; i++)
		fprintf(out, "      %10llu  %s\n", (unsigned long long)rows[i].count, lines[i].buf ? lines[i].buf : "");
	for (size_t i = 0; i < shown; i++)
		sb_free(&lines[i]);
	free(lines);
	free(stacks);
	free(rows);
}

static uint64_t busyness(const struct signal_figures *f)
{
	return f->generated + f->delivered;
}

static int compare_busyness(const void *a, const void *b)
{
	const struct signal_figures *const *x = a, *const *y = b;
	if (busyness(*x) != busyness(*y))
		return busyness(*x) < busyness(*y) ? 1 : -1;
	return (*x)->signo - (*y)->signo;
}

/* Every signal seen, busiest first; returns how many. */
static int signals_by_busyness(const struct signal_tracker *a, const struct signal_figures **out)
{
	int n = 0;
	for (int sig = 1; sig <= SIGNAL_MAX; sig++)
		if (signal_tracker_figures(a, sig))
			out[n++] = signal_tracker_figures(a, sig);
	sort_items(out, (size_t)n, sizeof(*out), compare_busyness);
	return n;
}

/* Why a delivery has no generation: SIGKILL's is usually a group exit, which the kernel raises without a trace. */
static const char *unmatched_delivery_reason(int signo)
{
	return signo == SIGKILL_NUMBER ? "a group exit: a fatal signal, exit_group() or execve() in another thread; "
					 "or a sender outside the workload"
				       : "the sender was not recorded: another process, an interrupt, a child's exit";
}

/* The reasons the kernel gave for the generations it did not queue (the not-queued column), per signal. */
static const struct {
	enum signal_result result;
	const char *words;
} not_queued_reasons[] = {
	{ SIGNAL_RESULT_ALREADY_PENDING, "already pending (merged into the pending one)" },
	{ SIGNAL_RESULT_IGNORED, "ignored (SIG_IGN, or a default action of ignore)" },
	{ SIGNAL_RESULT_OVERFLOW_FAIL, "dropped (the real-time queue was full)" },
	{ SIGNAL_RESULT_LOSE_INFO, "queued without their siginfo (delivered, counted here)" },
};

static void text_not_queued(const struct signal_report *r, const struct view_options *o, FILE *out)
{
	char name[32];
	struct strbuf line = { 0 };
	for (int sig = 1; sig <= SIGNAL_MAX; sig++) {
		const struct signal_figures *f = signal_tracker_figures(r->analysis, sig);
		if (!f || !not_delivered(f))
			continue;
		sb_reset(&line);
		sb_addf(&line, "  not-queued %s %llu:", signal_name(sig, name, sizeof(name)),
			(unsigned long long)not_delivered(f));
		const char *sep = " ";
		for (size_t i = 0; i < ARRAY_SIZE(not_queued_reasons); i++) {
			uint64_t n = f->results[not_queued_reasons[i].result];
			if (!n)
				continue;
			sb_addf(&line, "%s%llu %s", sep, (unsigned long long)n, not_queued_reasons[i].words);
			sep = ", ";
		}
		view_text_wrapped(o, out, 8, "%s", line.buf);
	}
	sb_free(&line);
}

static void text_notes(const struct signal_report *r, const struct view_options *o, FILE *out)
{
	char name[32];
	for (int sig = 1; sig <= SIGNAL_MAX; sig++) {
		const struct signal_figures *f = signal_tracker_figures(r->analysis, sig);
		if (!f)
			continue;
		signal_name(sig, name, sizeof(name));
		if (f->unmatched_deliveries)
			view_text_wrapped(o, out, 8, "  note: %s: %llu %s without a generation (%s%s)", name,
				(unsigned long long)f->unmatched_deliveries,
				f->unmatched_deliveries == 1 ? "delivery" : "deliveries", unmatched_delivery_reason(sig),
				f->dropped_at_loss ? "; or it was pending when records were lost" : "");
		if (f->unmatched_generations)
			view_text_wrapped(o, out, 8, "  note: %s: %llu queued generation%s never delivered (the target exited or "
				     "was killed, the run ended, or sigwaitinfo/signalfd took it)",
				name, (unsigned long long)f->unmatched_generations, f->unmatched_generations == 1 ? "" : "s");
		if (f->unreturned)
			view_text_wrapped(o, out, 8, "  note: %s: %llu handler%s never returned (left by longjmp, or the thread "
				     "exited)",
				name, (unsigned long long)f->unreturned, f->unreturned == 1 ? "" : "s");
		if (f->dropped_at_loss)
			view_text_wrapped(o, out, 8, "  note: %s: %llu generation%s or handler%s pending when records were lost "
				     "(the header counts them): not timed, as what closed them may be among the lost",
				name, (unsigned long long)f->dropped_at_loss, f->dropped_at_loss == 1 ? "" : "s",
				f->dropped_at_loss == 1 ? "" : "s");
	}
	uint64_t stray = signal_tracker_unmatched_sigreturns(r->analysis), dropped = 0;
	for (int sig = 1; sig <= SIGNAL_MAX; sig++)
		if (signal_tracker_figures(r->analysis, sig))
			dropped += signal_tracker_figures(r->analysis, sig)->dropped_at_loss;
	if (stray)
		view_text_wrapped(o, out, 8, "  note: %llu rt_sigreturn calls with no handler running%s",
				  (unsigned long long)stray,
				  dropped ? " (or closing a handler dropped when records were lost)"
					  : " (handlers delivered before this recording or --switch-output piece began: "
					    "counted apart as signal.unattributed_sigreturns, so the pieces add up)");
	uint64_t bad = r->undecodable + signal_tracker_bad_events(r->analysis);
	if (bad)
		view_text_wrapped(o, out, 8, "  note: %llu signal events could not be decoded", (unsigned long long)bad);
	if (r->other_tasks_generated)
		view_text_wrapped(o, out, 8,
				  "  note: %llu %s generated by interrupts for other processes' tasks while the "
				  "workload ran %s not counted (the kernel's signal_generate total includes them)",
				  (unsigned long long)r->other_tasks_generated,
				  r->other_tasks_generated == 1 ? "signal" : "signals",
				  r->other_tasks_generated == 1 ? "is" : "are");
}

static void signal_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct signal_report *r = state;
	if (!view_collector_ok(p, r->self))
		return; /* the header says why */
	const struct signal_figures *top[SIGNAL_MAX];
	int seen = signals_by_busyness(r->analysis, top);
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "Signals (generated -> delivered: latency; delivered -> rt_sigreturn: handler; in µs)");
	if (!seen) {
		fprintf(out, "  no signal events\n");
		text_notes(r, o, out); /* what was left out: other processes' signals, undecodable events */
		return;
	}
	struct view_table t = { .columns = text_columns, .ncolumns = ARRAY_SIZE(text_columns) };
	view_table_addf(&t, "  %-13s %10s %10s %10s %10s  %9s %9s %9s  %9s %9s %9s", "signal", "generated", "delivered",
			"sigreturns", "not-queued", "lat p50", "p99", "max", "hdl p50", "p99", "max");
	for (int sig = 1; sig <= SIGNAL_MAX; sig++)
		if (signal_tracker_figures(r->analysis, sig))
			text_row(signal_tracker_figures(r->analysis, sig), &t);
	view_table_print(&t, o, out);
	text_not_queued(r, o, out);
	text_notes(r, o, out);
	char name[32], what[64];
	for (int i = 0; i < seen && i < TEXT_BUSIEST; i++) {
		signal_name(top[i]->signo, name, sizeof(name));
		snprintf(what, sizeof(what), "%s latency", name);
		view_text_slowest(o, out, what, &top[i]->slowest_latency);
		snprintf(what, sizeof(what), "%s handler", name);
		view_text_slowest(o, out, what, &top[i]->slowest_handler);
	}
	for (int i = 0; i < seen && i < TEXT_BUSIEST; i++) {
		fprintf(out, "\n  %s stacks (leaf first, from the first user frame where there is one)\n",
			signal_name(top[i]->signo, name, sizeof(name)));
		text_stacks(p, "sent from", &top[i]->senders, o, out);
		text_stacks(p, "interrupted at", &top[i]->interrupted, o, out);
	}
}

/* ---- JSON ---- */

/* Stacks per list in JSON when --stacks does not say. */
#define JSON_STACKS 10

static void json_stacks(struct json_writer *w, const char *key, const struct profile *p,
			const struct u64_map *counts, unsigned limit)
{
	struct stack_count *rows;
	size_t n = sorted_stacks(counts, &rows);
	json_array_begin(w, key);
	for (size_t i = 0; i < n && i < limit; i++) {
		json_object_begin(w, NULL);
		json_u64(w, "count", rows[i].count);
		view_json_stack(w, p, rows[i].stack);
		json_end(w);
	}
	json_end(w);
	free(rows);
}

static void json_durations(struct json_writer *w, const char *key, const struct duration_stats *d)
{
	json_object_begin(w, key);
	json_u64(w, "count", d->count);
	json_u64(w, "p50", duration_quantile(d, 0.5));
	json_u64(w, "p99", duration_quantile(d, 0.99));
	json_u64(w, "max", d->max);
	json_end(w);
}

/*
 * The exact counts of the four tracepoints, from the TOTALS records (a
 * split signal_generate's two events add up); null when the file has none.
 */
static void json_totals(struct json_writer *w, const struct profile *p)
{
	json_object_begin(w, "totals");
	for (size_t t = 0; t < ARRAY_SIZE(signal_tracepoints); t++) {
		uint64_t total = 0;
		bool counted = false;
		for (size_t e = 0; e < view_event_count(p); e++) {
			const struct sp_event *ev = view_event(p, e);
			bool copy; /* a "#stack" copy counts only the hits it copied */
			if (strcmp(ev->collector, "signal") == 0 && ev->has_totals &&
			    tracepoint_named(ev->name, &copy) == &signal_tracepoints[t] && !copy) {
				total += ev->total_value;
				counted = true;
			}
		}
		if (counted)
			json_u64(w, signal_tracepoints[t].name, total);
		else
			json_null(w, signal_tracepoints[t].name);
	}
	json_end(w);
}

static void json_signal(struct json_writer *w, const struct profile *p, const struct signal_figures *f,
			unsigned limit)
{
	char name[32];
	json_object_begin(w, NULL);
	json_i64(w, "signo", f->signo);
	json_string(w, "name", signal_name(f->signo, name, sizeof(name)));
	json_u64(w, "generated", f->generated);
	json_u64(w, "delivered", f->delivered);
	json_u64(w, "sigreturns", f->sigreturns);
	json_object_begin(w, "not_delivered");
	json_u64(w, "ignored", f->results[SIGNAL_RESULT_IGNORED]);
	json_u64(w, "already_pending", f->results[SIGNAL_RESULT_ALREADY_PENDING]);
	json_u64(w, "overflow", f->results[SIGNAL_RESULT_OVERFLOW_FAIL]);
	json_u64(w, "lose_info", f->results[SIGNAL_RESULT_LOSE_INFO]);
	json_end(w);
	json_object_begin(w, "delivered_to");
	json_u64(w, "handler", f->to_handler);
	json_u64(w, "default", f->to_default);
	json_u64(w, "ignore", f->to_ignore);
	json_end(w);
	json_u64(w, "unmatched_deliveries", f->unmatched_deliveries);
	json_u64(w, "unmatched_generations", f->unmatched_generations);
	json_u64(w, "dropped_at_loss", f->dropped_at_loss);
	json_u64(w, "unreturned", f->unreturned);
	json_durations(w, "latency_ns", &f->latency);
	json_durations(w, "handler_ns", &f->handler);
	view_json_slowest(w, "slowest_latency", &f->slowest_latency);
	view_json_slowest(w, "slowest_handler", &f->slowest_handler);
	json_stacks(w, "senders", p, &f->senders, limit);
	json_stacks(w, "interrupted", p, &f->interrupted, limit);
	json_totals(w, p);
	json_end(w);
}

static void signal_json(void *state, const struct profile *p, const struct view_options *o,
			struct json_writer *w)
{
	struct signal_report *r = state;
	unsigned limit = o->stacks_limit_given ? o->stacks_per_path : JSON_STACKS;
	json_array_begin(w, "signals");
	for (int sig = 1; sig <= SIGNAL_MAX; sig++) {
		const struct signal_figures *f = signal_tracker_figures(r->analysis, sig);
		if (f)
			json_signal(w, p, f, limit);
	}
	json_end(w);
	json_u64(w, "signals_other_tasks_generated", r->other_tasks_generated);
	json_u64(w, "signals_unattributed_sigreturns", signal_tracker_unmatched_sigreturns(r->analysis));
}

/*
 * A thread that exits (inside a handler, say) ends its state, so a later
 * thread reusing its tid starts clean.  FORK and COMM name the workload's
 * tasks (the events follow the workload only).
 */
static void signal_record(void *state, const struct profile *p, const struct perf_event_header *rec,
			  const struct sp_sample_id *id)
{
	(void)p;
	(void)id;
	struct signal_report *r = state;
	const uint32_t *u32 = (const void *)(rec + 1);
	if (rec->type == PERF_RECORD_EXIT && rec->size >= 24)
		signal_tracker_thread_exit(r->analysis, u32[0], u32[2]);
	/* the workload's tasks: FORK's new tid (pid, ppid, tid, ...), COMM's tid (pid, tid, comm) */
	if (rec->type == PERF_RECORD_FORK && rec->size >= 24)
		task_seen(r, u32[2]);
	if (rec->type == PERF_RECORD_COMM && rec->size >= 16)
		task_seen(r, u32[1]);
	if (rec->type == PERF_RECORD_LOST || rec->type == PERF_RECORD_LOST_SAMPLES)
		signal_tracker_records_lost(r->analysis);
}

/* ---- keyed figures ---- */

static void figures_duration(struct figure_rows *rows, const char *signame, const char *what,
			     const struct duration_stats *d)
{
	if (!d->count)
		return;
	figure_rows_add(rows, micros(duration_quantile(d, 0.5)), "us", true, "signal.%s.%s_us.p50", signame, what);
	figure_rows_add(rows, micros(duration_quantile(d, 0.99)), "us", true, "signal.%s.%s_us.p99", signame, what);
	figure_rows_add(rows, micros(d->max), "us", true, "signal.%s.%s_us.max", signame, what);
	figure_rows_add(rows, micros(duration_mean(d)), "us", true, "signal.%s.%s_us.avg", signame, what);
}

static void signal_figures(void *state, const struct profile *p, struct figure_rows *rows)
{
	const struct signal_report *r = state;
	if (!view_collector_ok(p, r->self))
		return;
	char name[32];
	figure_rows_add(rows, (double)r->other_tasks_generated, "count", true, "signal.other_tasks_generated");
	/* a handler delivered before the recording (or this --switch-output piece) began: its signal is unknown */
	figure_rows_add(rows, (double)signal_tracker_unmatched_sigreturns(r->analysis), "count", true,
			"signal.unattributed_sigreturns");
	for (int sig = 1; sig <= SIGNAL_MAX; sig++) {
		const struct signal_figures *f = signal_tracker_figures(r->analysis, sig);
		if (!f)
			continue;
		signal_name(sig, name, sizeof(name));
		figure_rows_add(rows, (double)f->generated, "count", true, "signal.%s.generated", name);
		figure_rows_add(rows, (double)f->delivered, "count", true, "signal.%s.delivered", name);
		figure_rows_add(rows, (double)f->sigreturns, "count", true, "signal.%s.sigreturns", name);
		figure_rows_add(rows, (double)not_delivered(f), "count", true, "signal.%s.not_delivered", name);
		figures_duration(rows, name, "latency", &f->latency);
		figures_duration(rows, name, "handler", &f->handler);
	}
}

/* ---- findings (view/findings.h): the report's first screen ---- */

#define SIGNAL_PATHS                                                                                      \
	(FINDING_PATH(PATH_SIGRETURN) | FINDING_PATH(PATH_SIGNAL_DELIVER) | FINDING_PATH(PATH_SIGNAL_GENERATE))

/*
 * The busiest signals (TEXT_BUSIEST at most), one line each: generated,
 * the share merged into a pending one or else delivered, the latency
 * and handler medians.
 */
static void signal_findings(void *state, const struct profile *p, struct findings *out)
{
	struct signal_report *r = state;
	if (!view_collector_ok(p, r->self))
		return;
	const struct signal_figures *top[SIGNAL_MAX];
	int seen = signals_by_busyness(r->analysis, top);
	char name[32], count[32], merged[32], dur[32], next[128];
	uint64_t all = 0;
	for (int i = 0; i < seen; i++)
		all += busyness(top[i]);
	for (int i = 0; i < seen && i < TEXT_BUSIEST; i++) {
		const struct signal_figures *f = top[i];
		if (busyness(f) * 100 < busyness(top[0]))
			continue; /* a SIGCHLD at the end beside a signal of thousands: no finding */
		struct strbuf line = { 0 };
		signal_name(f->signo, name, sizeof(name));
		sb_addf(&line, "signals: %s %s generated", name, findings_count(f->generated, count, sizeof(count)));
		uint64_t pending = f->results[SIGNAL_RESULT_ALREADY_PENDING];
		if (pending)
			sb_addf(&line, ", %s (%.0f%%) merged into a pending one (already pending)",
				findings_count(pending, merged, sizeof(merged)),
				f->generated ? 100.0 * (double)pending / (double)f->generated : 0.0);
		else
			sb_addf(&line, ", %s delivered", findings_count(f->delivered, merged, sizeof(merged)));
		if (f->latency.count)
			sb_addf(&line, ", latency p50 %s",
				findings_duration(duration_quantile(&f->latency, 0.5), dur, sizeof(dur)));
		if (f->handler.count)
			sb_addf(&line, ", handler p50 %s",
				findings_duration(duration_quantile(&f->handler, 0.5), dur, sizeof(dur)));
		snprintf(next, sizeof(next), "Signals; sigprof script --event signal:signal_generate");
		/* the signal paths' time, shared by the signals as their events are */
		findings_add(out, SIGNAL_PATHS, (double)busyness(f) / (double)all, next, "%s", line.buf);
		sb_free(&line);
	}
}

static const struct collector_analyzer signal_analyzer = {
	.completes_cut_stacks = true, /* keys no copy was joined to (stack_completion.h) */
	.create = signal_create,
	.figures = signal_figures,
	.findings = signal_findings,
	.running_handlers = running_handlers,
	.delivery_stack = delivery_stack,
	.path_of = signal_path_of,
	.counted_stack = signal_counted_stack,
	.lent_stack = signal_lent_stack,
	.sample = signal_sample,
	.finish = signal_finish,
	.text = signal_text,
	.json = signal_json,
	.destroy = signal_destroy,
	.record = signal_record,
	.describe = signal_describe,
};

const struct collector signal_collector = {
	.name = "signal",
	.description = "signal lifecycle: signal_generate, signal_deliver, rt_sigreturn entry and exit",
	.add_events = signal_add_events,
	.unit = "events",
	.analyzer = &signal_analyzer,
	.weights = signal_weights,
	.nweights = ARRAY_SIZE(signal_weights),
};
