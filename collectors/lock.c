/*
 * lock.c: the lock collector: which kernel lock the workload contends, on
 * which path, from which stack, for which futex word.  Its record side and
 * the analyzer that feeds the tracker (lock_tracker.c, include/sigprof/collectors/lock.h).
 *
 * Record side.  lock:contention_begin (lock address, flags) with the
 * kernel callchain and the user stack (a DWARF copy, as the cpu
 * collector's), and lock:contention_end
 * (lock address, result) without a stack, per task of the workload: every
 * hit (the gate, period 1) while a CPU's 10 ms window stays at or under
 * LOCK_SAMPLE_BOUND_HZ, weighted samples (the alternate "#sampled", the
 * kernel's frequency mode at the bound) in the windows above it
 * (rate_bound.h).  The begin's meter ("#count") measures the rate and keeps
 * the exact total; the end shares it, so begin and end switch together on
 * a CPU.  A hit the kernel counted but did not record (throttled past
 * kernel.perf_event_max_sample_rate; LOST records) makes the figures
 * estimated too.  The tracepoints came in Linux 5.19.
 *
 * Report side.  A gate's begin is charged to the path of its stack, and, when its
 * thread is inside a futex call, to that call's futex word, which the
 * futex collector answers through the pending_futex_word hook
 * (view_pending_futex_word()); an end takes the path of the begin it
 * closes.  A weighted begin (the alternate's) stands for its period's
 * contentions, charged the same way but never measured: the alternate's
 * begins and ends are different hits, so no wait is paired from them
 * (lock_tracker.c); the figures it adds to are estimated.  A lock is named after the last event: the kernel data symbol at
 * its address in the recording's kallsyms, else by the first function of
 * its busiest stack that is not a lock primitive (lock_primitives[]): "lock taken
 * in __lock_task_sighand", "bucket lock taken in futex_wait_setup" for a
 * lock inside futex calls.  lock_report.c prints the figures
 * (docs/lock.md describes each).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/collectors/lock.h"
#include "sigprof/model/paths.h"
#include "sigprof/model/timeline.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/util.h"
#include "sigprof/view/view.h"

#include "lock_internal.h"

/* ---- record side ---- */

/*
 * The bound, per CPU, over a window of RATE_BOUND_WINDOW_NS (docs/lock.md):
 * 50 contentions in 10 ms.  Every begin carries its kernel callchain and
 * user frames; `perf bench futex hash -t 2` (seed 002's workload) contends
 * 6 200 times a second on this 2-CPU machine, at most 112 times in one CPU's
 * 10 ms window and 50 or fewer in 9 windows of 10: it is recorded whole but
 * in its densest windows, where the figures turn estimated.
 */
#define LOCK_SAMPLE_BOUND_HZ 5000

static int lock_add_events(struct record_options *opts, struct event_list *events, char *reason, size_t reasonlen)
{
	/*
	 * The user part of a begin's stack as the cpu collector takes it: in a
	 * program without frame pointers a DWARF copy of the user stack (the
	 * frame-pointer walk stopped every stress-ng stack at libc's `syscall`,
	 * 0% whole), in one with them a leaf copy and the walk past it.
	 */
	struct record_options o = *opts;
	o.call_graph = call_graph_for(opts, CALL_GRAPH_DWARF);
	o.stack_user_size = stack_copy_default(opts, WAIT_STACK_USER_SIZE);
	o.keep_user_chain = !opts->call_graph_chosen;
	int err = tracepoint_add(events, &o, "lock", "lock", "contention_begin", true, reason, reasonlen);
	if (!err) {
		size_t begin = events->count - 1;
		size_t meter = rate_bound_add(events, begin, -1, LOCK_SAMPLE_BOUND_HZ);
		err = tracepoint_add(events, &o, "lock", "lock", "contention_end", false, reason, reasonlen);
		/* the end's rate is its begin's: the begin's meter switches both, so a gate's begin finds its end */
		if (!err)
			rate_bound_add(events, events->count - 1, (int)meter, LOCK_SAMPLE_BOUND_HZ);
	}
	if (err == -ENOENT) {
		size_t len = strlen(reason);
		snprintf(reason + len, reasonlen - len, "; lock:contention_begin/end came in Linux 5.19");
	}
	if (err)
		return err;
	opts->want_data_mmaps = true; /* the futex words a contention is charged to are named by their mapping */
	reason[0] = '\0';
	return 0;
}

/* ---- naming ---- */

/*
 * The functions of a lock's slow path, skipped when a lock is named by the
 * code that took it (docs/lock.md lists them): the first kernel frame of
 * the begin's stack that matches none of these names the lock.
 */
const char *const lock_primitives[] = {
	"*queued_spin_lock_slowpath", "*queued_read_lock_slowpath", "*queued_write_lock_slowpath",
	"_raw_*", "do_raw_*", "*spin_lock", "*spin_lock_irq", "*spin_lock_irqsave", "*spin_lock_bh",
	"*spin_lock_nested", "__mutex_lock*", "mutex_lock*", "__mutex_lock_slowpath", "__down_*", "down_read*",
	"down_write*", "rwsem_down_*", "__rwsem_*", "rt_spin_lock*", "rt_mutex_*", "__rt_mutex_*",
	"rt_read_lock", "rt_write_lock", "rwbase_*", "percpu_down_*", "__percpu_down_*", "futex_q_lock",
	"__futex_q_lock",
};
const size_t lock_primitive_count = ARRAY_SIZE(lock_primitives);

static bool is_lock_primitive(const char *sym)
{
	for (size_t i = 0; i < lock_primitive_count; i++)
		if (fnmatch(lock_primitives[i], sym, 0) == 0)
			return true;
	return false;
}

/* The function that took the lock: the first kernel frame, leaf first, that is no lock primitive. */
static const char *lock_taker(const struct profile *p, uint32_t stack)
{
	if (stack == LOCK_NO_STACK)
		return NULL;
	uint32_t depth = view_stack_depth(p, stack);
	for (uint32_t i = 0; i < depth; i++) {
		const struct frame *f = view_stack_frame(p, stack, i);
		if (!f->kernel || f->synthetic || !f->sym)
			continue;
		if (!is_lock_primitive(f->sym))
			return f->sym;
	}
	return NULL;
}

/* Static data further than this past a kallsyms symbol is not that symbol's: kallsyms has no sizes. */
#define STATIC_LOCK_MAX_OFFSET 0x10000

/* The kernel data symbol at a lock's address, or NULL (dynamic memory, or too far past the nearest symbol). */
static const char *static_name(const struct profile *p, uint64_t addr, char *buf, size_t len)
{
	const char *name = view_data_name(p, 0, addr, buf, len, NULL);
	if (strncmp(name, "0x", 2) == 0)
		return NULL;
	const char *plus = strstr(name, "+0x");
	if (plus && strtoull(plus + 3, NULL, 16) >= STATIC_LOCK_MAX_OFFSET)
		return NULL;
	return name;
}

/*
 * Name a lock after the last event: its kernel data symbol, else the
 * function that took it on its busiest stack ("bucket lock" when a futex
 * function took it inside futex calls), and the key of its figures.
 */
static void name_lock(const struct profile *p, struct lock_figures *l)
{
	char buf[512], text[600];
	const char *name = static_name(p, l->addr, buf, sizeof(buf));
	/* a kernel symbol of the recording's kallsyms copy: escaped as every string of a recording */
	char taker_shown[PRINTABLE_MAX];
	const char *taker = !name && l->nstacks ? lock_taker(p, l->stacks[0].stack) : NULL;
	if (taker)
		taker = printable_text(taker, taker_shown, sizeof(taker_shown));
	if (name) {
		l->name = xstrdup(name);
		/* the symbol, without the offset: one key for a static lock whatever its field */
		snprintf(text, sizeof(text), "symbol.%.*s", (int)strcspn(name, "+"), name);
	} else if (taker) {
		/* a futex function's lock inside futex calls: the hash bucket lock of their words */
		int path = lock_figures_path(l);
		bool bucket = strstr(taker, "futex") && path >= PATH_FUTEX_WAIT && path <= PATH_FUTEX_OTHER;
		snprintf(text, sizeof(text), "%s taken in %s", bucket ? "bucket lock" : "lock", taker);
		l->bucket = bucket;
		l->name = xstrdup(text);
		snprintf(text, sizeof(text), "taken_in.%s", taker);
	} else {
		snprintf(text, sizeof(text), "0x%llx", (unsigned long long)l->addr);
		l->name = xstrdup(text);
		snprintf(text, sizeof(text), "unnamed");
	}
	l->key = xstrdup(text);
	l->named = true;
}

static void name_word(const struct profile *p, struct lock_futex_word *w)
{
	char buf[512];
	view_user_data_name(p, w->pid, w->uaddr, buf, sizeof(buf), &w->dso);
	w->symbol = xstrdup(buf);
	w->named = true;
}

/* ---- report side: decoding samples ---- */

/*
 * What an event of the recording is: "lock:contention_begin" (the gate, or
 * every hit in a recording without a bound), "...#sampled" (the weighted
 * alternate), "...#count" (the meter: no samples).
 */
static int kind_named(const char *name, bool *weighted)
{
	size_t len;
	const char *suffix = rate_bound_suffix(name, &len);
	*weighted = suffix && strcmp(suffix, RATE_BOUND_SAMPLED_SUFFIX) == 0;
	if (suffix && !*weighted)
		return LOCK_KIND_OTHER;
	if (len == strlen("lock:contention_begin") && strncmp(name, "lock:contention_begin", len) == 0)
		return LOCK_EVENT_BEGIN;
	if (len == strlen("lock:contention_end") && strncmp(name, "lock:contention_end", len) == 0)
		return LOCK_EVENT_END;
	return LOCK_KIND_OTHER;
}

/* LOCK_EVENT_BEGIN, LOCK_EVENT_END, or LOCK_KIND_OTHER for an event that is not this collector's samples. */
static int kind_of(struct lock_state *st, const struct sp_event *ev, bool *weighted)
{
	if (ev->index >= st->nevents) {
		size_t old = st->nevents;
		GROW(st->kinds, st->nevents, ev->index + 1);
		st->weighted = xrealloc(st->weighted, st->nevents * sizeof(*st->weighted));
		for (size_t i = old; i < st->nevents; i++) {
			st->kinds[i] = LOCK_KIND_UNKNOWN;
			st->weighted[i] = false;
		}
	}
	int *k = &st->kinds[ev->index];
	if (*k == LOCK_KIND_UNKNOWN)
		*k = strcmp(ev->collector, "lock") == 0 ? kind_named(ev->name, &st->weighted[ev->index]) : LOCK_KIND_OTHER;
	if (weighted)
		*weighted = st->weighted[ev->index];
	return *k;
}

static bool decode(struct lock_state *st, const struct profile *p, const struct sp_sample *s, struct lock_event *e)
{
	if (!s->event)
		return false;
	bool weighted;
	int kind = kind_of(st, s->event, &weighted);
	const struct tep_event *ev = kind >= 0 ? view_tracepoint_of(p, s) : NULL;
	if (!ev)
		return false;
	memset(e, 0, sizeof(*e));
	e->kind = (enum lock_event_kind)kind;
	e->time = s->time;
	e->pid = s->pid;
	e->tid = s->tid;
	e->weight = s->period ? s->period : 1;
	e->weighted = weighted;
	e->stack = LOCK_NO_STACK;
	if (!tp_field_u64(ev, s, "lock_addr", &e->addr))
		return false;
	if (e->kind == LOCK_EVENT_BEGIN) {
		uint64_t flags;
		if (!tp_field_u64(ev, s, "flags", &flags))
			return false;
		e->flags = (uint32_t)flags;
		return true;
	}
	int64_t ret;
	if (!tp_field_i64(ev, s, "ret", &ret))
		return false;
	e->ret = (int)ret;
	return true;
}

static void *lock_create(const struct profile *p, int self)
{
	(void)p;
	struct lock_state *st = xcalloc(1, sizeof(*st));
	st->self = self;
	st->tracker = lock_tracker_new();
	return st;
}

static void lock_destroy(void *state)
{
	struct lock_state *st = state;
	lock_tracker_free(st->tracker);
	free(st->kinds);
	free(st->weighted);
	free(st);
}

/* A begin's path is its stack's; an end's is the path of the begin it closes. */
static int lock_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	struct lock_state *st = state;
	uint64_t addr;
	const struct tep_event *ev;
	if (!s->event || kind_of(st, s->event, NULL) != LOCK_EVENT_END || !(ev = view_tracepoint_of(p, s)) ||
	    !tp_field_u64(ev, s, "lock_addr", &addr))
		return -1;
	return lock_tracker_pending_path(st->tracker, s->tid, addr);
}

static void lock_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct lock_state *st = state;
	struct lock_event e;
	st->begin_sample = NULL;
	if (!decode(st, p, s, &e)) {
		st->undecoded++;
		return;
	}
	if (e.weighted)
		st->weighted_samples++;
	if (e.kind == LOCK_EVENT_END) {
		st->ends++;
		lock_tracker_event(st->tracker, &e, NULL);
		return;
	}
	st->begins++;
	st->weighted_begins += e.weighted;
	st->begin_sample = s;
	st->begin_addr = e.addr;
	e.stack = stack;
	e.path = view_stack_path(p, stack);
	/*
	 * Only a contention on a futex path is inside the futex call: after the
	 * call's exit tracepoint (on the way back to user mode) a thread may
	 * still look pending to the futex collector when its exit was sampled out.
	 */
	e.in_futex = e.path >= PATH_FUTEX_WAIT && e.path <= PATH_FUTEX_OTHER &&
		     view_pending_futex_word(p, e.tid, e.time, &e.futex_pid, &e.futex_uaddr);
	struct lock_futex_word *w;
	lock_tracker_event(st->tracker, &e, &w);
	if (w && !w->named)
		name_word(p, w);
}

static void lock_finish(void *state, const struct profile *p)
{
	struct lock_state *st = state;
	lock_tracker_remap_stacks(st->tracker, view_stack_moved, (void *)p); /* stacks completed at the end of the load */
	lock_tracker_finish(st->tracker);
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks);
	for (size_t i = 0; i < n; i++)
		if (!locks[i]->named)
			name_lock(p, locks[i]);
}

/* A thread that exits ends its pending contentions, so a later thread reusing its tid starts clean. */
static void lock_record(void *state, const struct profile *p, const struct perf_event_header *rec,
			const struct sp_sample_id *id)
{
	(void)p;
	(void)id;
	struct lock_state *st = state;
	const uint32_t *u32 = (const void *)(rec + 1);
	if (rec->type == PERF_RECORD_EXIT && rec->size >= 24)
		lock_tracker_thread_exit(st->tracker, u32[2]);
}

/*
 * The timeline_mark hook (collector.h): a contention's begin, at its lock,
 * named by the function that took it; the sample sample() just decoded.
 */
static bool lock_timeline_mark(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack,
			       struct timeline_mark *out)
{
	const struct lock_state *st = state;
	if (!st->begin_sample || st->begin_sample != s)
		return false;
	*out = (struct timeline_mark){ .time = s->time, .detail = st->begin_addr, .label = lock_taker(p, stack),
				       .stack = stack, .kind = TIMELINE_MARK_LOCK };
	return true;
}

/* The marks_data hook (collector.h): a contended kernel lock in [start, end) (c2c marks its cacheline). */
static bool lock_marks_data(void *state, uint32_t pid, uint64_t start, uint64_t end)
{
	(void)pid;
	const struct lock_state *st = state;
	return view_kernel_address(start) && lock_tracker_has_lock_in(st->tracker, start, end);
}

static const struct path_figure lock_path_figures[] = { { "lock wait ms", "wait_ms", 3, "ms" } };

static double lock_path_figure(void *state, const struct profile *p, int path, size_t figure)
{
	(void)p;
	(void)figure;
	const struct lock_state *st = state;
	return (double)lock_tracker_path_wait(st->tracker, path) / 1e6;
}

static const struct collector_analyzer lock_analyzer = {
	.create = lock_create,
	.path_of = lock_path_of,
	.sample = lock_sample,
	.finish = lock_finish,
	.completes_cut_stacks = true, /* its copies that ran out, from longer ones (stack_completion.h) */
	.text = lock_text,
	.json = lock_json,
	.destroy = lock_destroy,
	.record = lock_record,
	.figures = lock_figures_rows,
	.findings = lock_findings,
	.marks_data = lock_marks_data,
	.timeline_mark = lock_timeline_mark,
	.path_figures = lock_path_figures,
	.npath_figures = ARRAY_SIZE(lock_path_figures),
	.path_figure = lock_path_figure,
};

const struct collector lock_collector = {
	.name = "lock",
	.description = "kernel lock contention: lock:contention_begin/end per lock, path, stack and futex word",
	.add_events = lock_add_events,
	.unit = "events",
	.analyzer = &lock_analyzer,
	.events = "lock:contention_begin (with stacks), lock:contention_end (Linux 5.19 and later)",
};
