/*
 * sched.c: the sched collector, where the workload's tasks wait off CPU
 * and how long they wait to run again once woken (docs/sched.md).
 *
 * Record side.  The recorder opens events for the workload's tasks (pid =
 * the workload with inherit, on every CPU), so a tracepoint fires only
 * while a workload task is current.  That sees a task's switch-outs
 * (sched_switch fires in prev's context, with prev's callchain: the stack
 * a wait is charged to) but not its switch-ins from an idle CPU or another
 * process, nor wakings done by interrupts (timers, I/O) or other
 * processes.  So:
 *   - sched:sched_switch, per task, with its callchain, and context_switch
 *     set: the kernel adds a PERF_RECORD_SWITCH for every switch-in and
 *     switch-out of the workload's tasks (time and tid in the sample_id
 *     trailer; SWITCH_OUT_PREEMPT when the task stayed runnable);
 *   - sched:sched_waking (sched_wakeup on kernels without it),
 *     sched:sched_wakeup_new and sched:sched_migrate_task system-wide (pid
 *     -1 on every CPU), without callchains, so every waking of a workload
 *     task is seen whoever does it; the report keeps those whose target is
 *     a workload task (path_of() says PATH_NOT_WORKLOAD for the others).
 *     Where system-wide events are not allowed (not root,
 *     perf_event_paranoid > 0) they are opened per task, and the report
 *     says that delays are known only for wakings done by the workload.
 *   - sched:sched_waking#stack, per task of the workload, with the
 *     waker's stack (sched_switch's kind of stack): the wakings the
 *     workload's tasks do, where the wake linker (docs/waits.md) names the
 *     waker's stack when it made no futex call (a pipe write, a thread's
 *     exit, a kill).  Rate-bounded (rate_bound.h): every hit up to
 *     SCHED_WAKING_STACK_BOUND_HZ per CPU, weighted samples above
 *     ("#sampled", at SCHED_WAKING_STACK_SAMPLED_HZ), the exact count in
 *     "#count"; the system-wide waking
 *     above stays the one that is counted.
 * The system-wide events cost one ~100-byte record per waking, new task
 * and migration of any task of the machine: about a hundred a second on an
 * idle machine, nothing beyond the workload's own on a benchmark machine;
 * and nothing at the workload's context switches, where each per-task
 * event is switched out and in (docs/sched.md has the measurements).
 *
 * Report side.  The tracker (below, sched.h) follows each task: a
 * switch-out opens a wait charged to its stack, the first waking after it
 * makes the task ready, the switch-in closes it.  Per stack: wait time,
 * scheduling delay and their sum (LKP's wait_and_delay), count, total,
 * average and max.  Stacks are keyed by their frames, or with
 * --sched-keys lkp like LKP's perf-sched figures (sched_lkp_key()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/base/json.h"
#include "sigprof/base/term.h"
#include "sigprof/view/view.h"
#include "sigprof/collectors/sched.h"
#include "sigprof/collectors/stack_lender.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

/* ---- record side ---- */

/* Whether this tracepoint can be opened for every task on a CPU (CAP_PERFMON or paranoid <= 0). */
static bool system_wide_allowed(const struct perf_event_attr *attr)
{
	int cpu;
	return online_cpus(&cpu, 1) == 1 && perf_event_probe_cpu(attr, cpu) == 0;
}

/* Open the last added spec on every task when allowed; enabled at open, as enable_on_exec needs a task. */
static void try_system_wide(struct event_list *events)
{
	struct event_spec *spec = &events->specs[events->count - 1];
	if (!system_wide_allowed(&spec->attr))
		return;
	spec->system_wide = true;
	spec->attr.disabled = 0;
	spec->attr.enable_on_exec = 0;
}

/* The trace entry's common_flags bits of interrupt context (the kernel's TRACE_FLAG_HARDIRQ, _SOFTIRQ, _NMI). */
#define TRACE_FLAGS_INTERRUPT (0x08 | 0x10 | 0x40)

/*
 * The bound of the waking stacks per CPU: a DWARF stack copy per waking
 * the workload does, every one while they are sparse (a lock handed over a
 * few thousand times a second); above it weighted samples at a tenth of
 * it: dense wakings are mostly futex wakes, whose stack the futex entries
 * have (stress-ng --futex 2: 1627 samples at the bound in 3.6 s, docs/waits.md).
 */
#define SCHED_WAKING_STACK_BOUND_HZ 2000
#define SCHED_WAKING_STACK_SAMPLED_HZ 200

/*
 * sched:sched_waking#stack: the waking of specs[waking] again, per task of
 * the workload (the attr of specs[like], a per-task sched_switch with its
 * whole stack), rate-bounded.  Only beside a system-wide waking, which counts them.
 */
static void add_waking_stacks(struct event_list *events, size_t waking, size_t like)
{
	if (!events->specs[waking].system_wide || !(events->specs[like].attr.sample_type & PERF_SAMPLE_CALLCHAIN))
		return;
	size_t gate = rate_bound_add_sibling(events, waking, "stack", NULL);
	struct event_spec *spec = &events->specs[gate];
	uint64_t config = spec->attr.config;
	spec->attr = events->specs[like].attr;
	spec->attr.config = config;
	spec->attr.context_switch = 0;
	spec->system_wide = false;
	/* a waking in interrupt context (a timer's, a device's) has the interrupted task's stack: not the waker's */
	const char *task_context = "!(common_flags & 0x58)"; /* TRACE_FLAGS_INTERRUPT */
	bool filtered = perf_event_probe_filter(&spec->attr, task_context) == 0;
	rate_bound_add_sampled(events, gate, -1, rate_bound_cap_hz(SCHED_WAKING_STACK_BOUND_HZ),
			       SCHED_WAKING_STACK_SAMPLED_HZ);
	for (size_t i = gate; filtered && i < events->count; i++) /* the gate, its alternate and its meter */
		events->specs[i].tracepoint_filter = xstrdup(task_context);
}

static int sched_add_events(struct record_options *opts, struct event_list *events, char *reason,
			    size_t reasonlen)
{
	/*
	 * A task blocks inside glibc (no frame pointers): only a DWARF unwind
	 * names the code that waited.  A whole copy at every switch-out cost
	 * stress-ng --mutex two thirds of its throughput (sched alone: 0.14 of
	 * the bare run, 0.88 with a 1024-byte copy), so switch-outs take a key
	 * (stack_key_options()) and "#stack" copies the whole stack while the
	 * switches of a CPU stay under STACK_COPY_BOUND_HZ; the report lends
	 * each key its call site's copy (stack_lender.h, docs/sched.md).
	 */
	struct record_options whole = *opts;
	whole.call_graph = call_graph_for(opts, CALL_GRAPH_DWARF);
	whole.stack_user_size = stack_user_size_for(opts, WAIT_STACK_USER_SIZE);
	/*
	 * A program with frame pointers needs no key: a leaf copy unwinds
	 * libc's frames and the frame-pointer walk goes on past it, as the
	 * cpu collector's stacks do (a frame-pointer key skips the caller of
	 * the libc wrapper, and a switch-out above the copies' bound before its
	 * call site's first copy would keep it).
	 */
	bool keys = stack_keys_lent(opts) && !opts->program_frame_pointers;
	if (!opts->call_graph_chosen && opts->program_frame_pointers) {
		whole.stack_user_size = stack_copy_default(opts, WAIT_STACK_USER_SIZE);
		whole.keep_user_chain = true;
	}
	struct record_options with_stacks =
		keys ? stack_key_options(opts, WAIT_STACK_USER_SIZE, KEY_STACK_USER_SIZE) : whole;
	int err = tracepoint_add(events, &with_stacks, "sched", "sched", "sched_switch", true, reason, reasonlen);
	if (err)
		return err;
	size_t switch_spec = events->count - 1, whole_spec = switch_spec;
	events->specs[switch_spec].attr.context_switch = 1;
	/* the switch event records every hit: it is the copies' meter too */
	if (keys)
		whole_spec = rate_bound_add_stack_copies(events, opts, switch_spec, switch_spec, RATE_BOUND_STACK_SUFFIX,
							 WAIT_STACK_USER_SIZE, STACK_COPY_BOUND_HZ, true);
	char ignored[256];
	if (tracepoint_add(events, opts, "sched", "sched", "sched_wakeup_new", false, ignored, sizeof(ignored)) == 0)
		try_system_wide(events);
	err = tracepoint_add(events, opts, "sched", "sched", "sched_waking", false, reason, reasonlen);
	if (err == -ENOENT)
		err = tracepoint_add(events, opts, "sched", "sched", "sched_wakeup", false, reason, reasonlen);
	if (err)
		return err;
	try_system_wide(events);
	add_waking_stacks(events, events->count - 1, whole_spec);
	if (tracepoint_add(events, opts, "sched", "sched", "sched_migrate_task", false, ignored, sizeof(ignored)) == 0)
		try_system_wide(events);
	return 0;
}

/* ---- the tracker (sched.h) ---- */

struct sched_task {
	bool waiting;
	enum sched_out_kind kind;
	uint64_t out_time;     /* the switch-out that began the wait */
	uint64_t ready_time;   /* the first waking after it; 0: none yet */
	bool ready_at_out;     /* woken while still switching out: ready at out_time unless a waking follows */
	uint64_t early_waking; /* a waking seen while the task was on its CPU (inside __schedule); 0: none */
	uint64_t new_time;     /* sched_wakeup_new not yet followed by a switch-in; 0: none */
	uint32_t stack;
};

struct sched_tracker {
	struct u64_map tasks;             /* tid -> struct sched_task */
	struct sched_stack_stats *stacks; /* indexed by stack id */
	size_t stacks_cap;
	struct sched_totals totals;
	sched_wait_hook wait_hook;
	void *wait_hook_ctx;
};

void sched_tracker_set_wait_hook(struct sched_tracker *t, sched_wait_hook hook, void *ctx)
{
	t->wait_hook = hook;
	t->wait_hook_ctx = ctx;
}

enum sched_out_kind sched_out_kind_of(int64_t prev_state)
{
	/* TASK_REPORT: S D T t X Z P I in bits 0-7; the bit above them marks a preemption (R+) */
	uint64_t state = (uint64_t)prev_state & 0xff;
	if (state == 0)
		return SCHED_OUT_RUNNABLE;
	if (state & (0x10 | 0x20)) /* EXIT_DEAD, EXIT_ZOMBIE */
		return SCHED_OUT_DEAD;
	return SCHED_OUT_SLEEP;
}

struct sched_tracker *sched_tracker_new(void)
{
	return xcalloc(1, sizeof(struct sched_tracker));
}

void sched_tracker_free(struct sched_tracker *t)
{
	if (!t)
		return;
	size_t pos = 0;
	uint64_t tid;
	void *task;
	while (u64_map_next(&t->tasks, &pos, &tid, &task))
		free(task);
	u64_map_free(&t->tasks);
	free(t->stacks);
	duration_free(&t->totals.wait_time);
	duration_free(&t->totals.sch_delay);
	duration_free(&t->totals.wait_and_delay);
	duration_free(&t->totals.new_task_delay);
	free(t);
}

static struct sched_task *task_get(struct sched_tracker *t, uint32_t tid)
{
	struct sched_task *task = u64_map_get(&t->tasks, tid);
	if (!task) {
		task = xcalloc(1, sizeof(*task));
		u64_map_put(&t->tasks, tid, task);
	}
	return task;
}

void sched_task_seen(struct sched_tracker *t, uint32_t tid)
{
	task_get(t, tid);
}

bool sched_task_known(const struct sched_tracker *t, uint32_t tid)
{
	return u64_map_get(&t->tasks, tid) != NULL;
}

static struct sched_stack_stats *stack_stats(struct sched_tracker *t, uint32_t stack)
{
	if (stack >= t->stacks_cap) {
		size_t old = t->stacks_cap;
		GROW(t->stacks, t->stacks_cap, (size_t)stack + 1);
		memset(t->stacks + old, 0, (t->stacks_cap - old) * sizeof(*t->stacks));
	}
	return &t->stacks[stack];
}

static void figure_add(struct sched_figure *f, uint64_t value)
{
	f->count++;
	f->total += value;
	if (value > f->max)
		f->max = value;
}

static uint64_t elapsed(uint64_t from, uint64_t to)
{
	return to > from ? to - from : 0;
}

void sched_switch_out(struct sched_tracker *t, uint32_t tid, uint64_t time, uint32_t stack, enum sched_out_kind kind)
{
	if (kind == SCHED_OUT_DEAD) {
		sched_task_exit(t, tid);
		return;
	}
	struct sched_task *task = task_get(t, tid);
	if (task->waiting)
		t->totals.unmatched++;
	task->waiting = true;
	task->kind = kind;
	task->out_time = time;
	task->stack = stack;
	task->ready_time = kind == SCHED_OUT_RUNNABLE ? time : 0;
	task->ready_at_out = kind == SCHED_OUT_SLEEP && task->early_waking;
	task->early_waking = 0;
}

void sched_switch_out_record(struct sched_tracker *t, uint32_t tid, uint64_t time, bool preempted)
{
	struct sched_task *task = u64_map_get(&t->tasks, tid);
	if (!preempted || !task || !task->waiting || task->kind != SCHED_OUT_SLEEP || task->out_time > time)
		return;
	task->kind = SCHED_OUT_RUNNABLE;
	task->ready_time = task->out_time;
}

/* The end of a wait: charge it to the stack of the switch-out that began it. */
static void close_wait(struct sched_tracker *t, uint32_t tid, struct sched_task *task, uint64_t time)
{
	struct sched_stack_stats *st = stack_stats(t, task->stack);
	uint64_t wait = elapsed(task->out_time, time);
	uint64_t ready = task->ready_time ? task->ready_time : task->ready_at_out ? task->out_time : 0;
	uint64_t delay = ready ? elapsed(ready, time) : 0;
	figure_add(&st->wait_time, wait);
	duration_add(&t->totals.wait_time, wait);
	slowest_event_note(&t->totals.slowest_wait, task->out_time, time, 0, tid);
	if (ready) {
		figure_add(&st->sch_delay, delay);
		duration_add(&t->totals.sch_delay, delay);
	} else {
		t->totals.without_waking++;
	}
	figure_add(&st->wait_and_delay, wait + delay);
	duration_add(&t->totals.wait_and_delay, wait + delay);
	task->waiting = false;
	if (t->wait_hook)
		t->wait_hook(t->wait_hook_ctx, tid, task->stack, wait, delay);
}

void sched_switch_in(struct sched_tracker *t, uint32_t tid, uint64_t time)
{
	struct sched_task *task = task_get(t, tid);
	if (task->new_time) {
		duration_add(&t->totals.new_task_delay, elapsed(task->new_time, time));
		task->new_time = 0;
	}
	if (task->waiting)
		close_wait(t, tid, task, time);
	task->early_waking = 0;
}

void sched_waking(struct sched_tracker *t, uint32_t tid, uint64_t time)
{
	struct sched_task *task = u64_map_get(&t->tasks, tid);
	if (!task)
		return;
	if (!task->waiting)
		task->early_waking = time;
	else if (task->kind == SCHED_OUT_SLEEP && !task->ready_time && time >= task->out_time)
		task->ready_time = time;
}

void sched_wakeup_new(struct sched_tracker *t, uint32_t tid, uint64_t time)
{
	struct sched_task *task = u64_map_get(&t->tasks, tid);
	if (task)
		task->new_time = time;
}

void sched_migrate(struct sched_tracker *t, uint32_t tid, uint64_t time)
{
	(void)time;
	struct sched_task *task = u64_map_get(&t->tasks, tid);
	if (!task)
		return;
	t->totals.migrations++;
	if (task->waiting)
		stack_stats(t, task->stack)->migrations++;
}

void sched_task_exit(struct sched_tracker *t, uint32_t tid)
{
	struct sched_task *task = u64_map_remove(&t->tasks, tid);
	if (task && task->waiting)
		t->totals.ended_by_exit++;
	free(task);
}

void sched_tracker_finish(struct sched_tracker *t)
{
	size_t pos = 0;
	uint64_t tid;
	void *value;
	while (u64_map_next(&t->tasks, &pos, &tid, &value)) {
		struct sched_task *task = value;
		if (task->waiting)
			t->totals.open_at_end++;
		task->waiting = false;
	}
}

void sched_tracker_remap_stacks(struct sched_tracker *t, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	for (size_t i = 0; i < t->stacks_cap; i++) {
		uint32_t to = remap(ctx, (uint32_t)i);
		if (to == i || !t->stacks[i].wait_time.count)
			continue;
		struct sched_stack_stats moved = t->stacks[i];
		memset(&t->stacks[i], 0, sizeof(moved));
		sched_stack_stats_merge(stack_stats(t, to), &moved); /* may move t->stacks */
	}
}

const struct sched_stack_stats *sched_stack_stats_of(const struct sched_tracker *t, uint32_t stack)
{
	if (stack >= t->stacks_cap || !t->stacks[stack].wait_time.count)
		return NULL;
	return &t->stacks[stack];
}

size_t sched_stacks_with_waits(const struct sched_tracker *t, uint32_t **ids)
{
	size_t n = 0;
	*ids = xmalloc((t->stacks_cap ? t->stacks_cap : 1) * sizeof(uint32_t));
	for (size_t i = 0; i < t->stacks_cap; i++)
		if (t->stacks[i].wait_time.count)
			(*ids)[n++] = (uint32_t)i;
	return n;
}

const struct sched_totals *sched_tracker_totals(const struct sched_tracker *t)
{
	return &t->totals;
}

static void figure_merge(struct sched_figure *dst, const struct sched_figure *src)
{
	dst->count += src->count;
	dst->total += src->total;
	if (src->max > dst->max)
		dst->max = src->max;
}

void sched_stack_stats_merge(struct sched_stack_stats *dst, const struct sched_stack_stats *src)
{
	figure_merge(&dst->wait_time, &src->wait_time);
	figure_merge(&dst->sch_delay, &src->sch_delay);
	figure_merge(&dst->wait_and_delay, &src->wait_and_delay);
	dst->migrations += src->migrations;
}

/* ---- keys ---- */

/* The frames perf sched timehist leaves out of its callchains (exact names, as perf compares them). */
static bool is_schedule_frame(const char *name)
{
	return strcmp(name, "schedule") == 0 || strcmp(name, "__schedule") == 0 ||
	       strcmp(name, "preempt_schedule") == 0;
}

size_t sched_lkp_key(const char *const *names, size_t n, char *buf, size_t buflen)
{
	struct strbuf joined = { 0 };
	for (size_t i = 0; i < n && i < SCHED_LKP_WINDOW; i++) {
		const char *name = names[i] ? names[i] : "[unknown]";
		if (is_schedule_frame(name))
			continue;
		if (joined.len)
			sb_addstr(&joined, ".");
		/* perf prints a module symbol without kallsyms' " [module]"; LKP splits lines on blanks */
		sb_add(&joined, name, strcspn(name, " "));
	}
	size_t end = 0, parts = 0;
	for (; end < joined.len; end++)
		if (joined.buf[end] == '.' && ++parts == SCHED_LKP_PARTS)
			break;
	if (!end && buflen) {
		snprintf(buf, buflen, "[unknown]");
		sb_free(&joined);
		return strlen(buf);
	}
	size_t len = end < buflen ? end : buflen ? buflen - 1 : 0;
	if (buflen) {
		memcpy(buf, joined.buf, len);
		buf[len] = '\0';
	}
	sb_free(&joined);
	return len;
}

/* ---- report side ---- */

enum sched_event {
	EV_UNKNOWN = 0,
	EV_SWITCH,
	EV_WAKING,    /* sched_waking, or sched_wakeup where the kernel has no sched_waking */
	EV_WAKEUP_NEW,
	EV_MIGRATE,
	EV_WAKING_STACK, /* sched_waking#stack (and its #sampled): a waking the workload did, with the waker's stack */
	EV_SWITCH_STACK, /* sched_switch#stack (and #stack-sampled): a switch-out's whole stack, lent to its key */
	EV_OTHER,     /* classified: not one of ours */
};

struct sched_state {
	int self;             /* this collector's index in the profile */
	struct sched_tracker *tracker;
	unsigned char *kinds; /* sp_event index -> enum sched_event */
	size_t kinds_cap;
	uint64_t not_workload; /* system-wide hits on other tasks, dropped */
	const struct profile *profile; /* for the wait hook's weights */
	struct u64_map pids;   /* tid -> pid + 1 of the tasks seen switching out, for the weights' labels */
	struct stack_lender *lender;    /* switch-outs' keys and their copies */
	uint32_t counted_from, counted_on; /* the last key and the stack it counts on (the counted_stack hook) */
};

/* The weights (collector.h): wait time and scheduling delay per switch-out stack. */
enum { WEIGHT_WAIT_NS, WEIGHT_DELAY_NS };
static const struct weight_kind sched_weights[] = {
	[WEIGHT_WAIT_NS] = { "wait", "nanoseconds", true },
	[WEIGHT_DELAY_NS] = { "delay", "nanoseconds", false },
};

static void charge_wait(void *ctx, uint32_t tid, uint32_t stack, uint64_t wait, uint64_t delay)
{
	const struct sched_state *st = ctx;
	uintptr_t pid = (uintptr_t)u64_map_get(&st->pids, tid);
	view_add_weight(st->profile, st->self, stack, pid ? (uint32_t)(pid - 1) : tid, tid, 0, 0, WEIGHT_WAIT_NS, wait);
	view_add_weight(st->profile, st->self, stack, pid ? (uint32_t)(pid - 1) : tid, tid, 0, 0, WEIGHT_DELAY_NS,
			delay);
}

static void *sched_create(const struct profile *p, int self)
{
	struct sched_state *st = xcalloc(1, sizeof(*st));
	st->self = self;
	st->profile = p;
	st->tracker = sched_tracker_new();
	st->lender = stack_lender_new();
	st->counted_from = st->counted_on = UINT32_MAX;
	if (view_weights_wanted(p))
		sched_tracker_set_wait_hook(st->tracker, charge_wait, st);
	return st;
}

static void sched_destroy(void *state)
{
	struct sched_state *st = state;
	sched_tracker_free(st->tracker);
	stack_lender_free(st->lender);
	u64_map_free(&st->pids);
	free(st->kinds);
	free(st);
}

/* A system-wide event is opened enabled: enable_on_exec only works for the events of a task. */
static bool event_is_system_wide(const struct sp_event *ev)
{
	return !ev->attr.enable_on_exec && !ev->attr.disabled;
}

static enum sched_event classify(struct sched_state *st, const struct sp_event *ev)
{
	if (ev->index >= st->kinds_cap) {
		size_t old = st->kinds_cap;
		GROW(st->kinds, st->kinds_cap, (size_t)ev->index + 1);
		memset(st->kinds + old, EV_UNKNOWN, st->kinds_cap - old);
	}
	if (st->kinds[ev->index] != EV_UNKNOWN)
		return st->kinds[ev->index];
	static const struct {
		const char *name;
		enum sched_event kind;
	} names[] = {
		{ "sched:sched_switch", EV_SWITCH },         { "sched:sched_waking", EV_WAKING },
		{ "sched:sched_wakeup", EV_WAKING },         { "sched:sched_wakeup_new", EV_WAKEUP_NEW },
		{ "sched:sched_migrate_task", EV_MIGRATE },
	};
	enum sched_event kind = EV_OTHER;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(ev->name, names[i].name) == 0)
			kind = names[i].kind;
	if (strncmp(ev->name, "sched:sched_waking#", strlen("sched:sched_waking#")) == 0)
		kind = EV_WAKING_STACK;
	size_t base_len;
	if (strncmp(ev->name, "sched:sched_switch#", strlen("sched:sched_switch#")) == 0 &&
	    rate_bound_stack_copy_suffix(rate_bound_suffix(ev->name, &base_len)))
		kind = EV_SWITCH_STACK;
	st->kinds[ev->index] = (unsigned char)kind;
	return kind;
}

/* The task a waking, wakeup_new or migration is about (its "pid" field), or -1. */
static int64_t target_tid(const struct profile *p, const struct sp_sample *s)
{
	const struct tep_event *ev = view_tracepoint_of(p, s);
	int64_t pid;
	return ev && tp_field_i64(ev, s, "pid", &pid) ? pid : -1;
}

static int sched_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	struct sched_state *st = state;
	enum sched_event kind = classify(st, s->event);
	if (kind == EV_SWITCH_STACK)
		return PATH_STACK_ONLY | PATH_COUNT; /* counted nowhere; its path by its frames, as its key's */
	if (kind != EV_SWITCH && kind != EV_OTHER && event_is_system_wide(s->event)) {
		int64_t tid = target_tid(p, s);
		if (tid < 0 || !sched_task_known(st->tracker, (uint32_t)tid)) {
			st->not_workload++;
			return PATH_NOT_WORKLOAD;
		}
	}
	return -1;
}

/*
 * prev switches out.  When next is a workload task too, this is its
 * switch-in, a few microseconds before its SWITCH record (which comes
 * after the context switch): take the earlier, as perf sched does.
 */
static void switch_sample(struct sched_state *st, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	const struct tep_event *ev = view_tracepoint_of(p, s);
	int64_t prev_pid = s->tid, prev_state = 0, next_pid = 0;
	if (!ev || !tp_field_i64(ev, s, "prev_state", &prev_state))
		return;
	tp_field_i64(ev, s, "prev_pid", &prev_pid);
	if (view_weights_wanted(p) && prev_pid == s->tid)
		u64_map_put(&st->pids, s->tid, (void *)(uintptr_t)(s->pid + 1));
	/* a system-wide perf.data: another task's switch-out is no wait of the workload, its switch-in may be */
	if (view_task_in_workload(p, s->pid))
		sched_switch_out(st->tracker, (uint32_t)prev_pid, s->time, stack, sched_out_kind_of(prev_state));
	if (tp_field_i64(ev, s, "next_pid", &next_pid) && next_pid > 0 &&
	    sched_task_known(st->tracker, (uint32_t)next_pid)) {
		sched_switch_in(st->tracker, (uint32_t)next_pid, s->time);
		stack_lend_end(st->lender, (uint32_t)next_pid);
	}
}

/* The counted_stack hook (collector.h): a switch-out counts on the stack stack_lend_key() chose. */
static uint32_t sched_counted_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct sched_state *st = state;
	return stack == st->counted_from ? st->counted_on : stack;
}

/* The lent_stack hook (collector.h): a switch-out's key counts on what its call site's copies taught. */
static uint32_t sched_lent_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct sched_state *st = state;
	return stack_lent(st->lender, stack);
}

static void sched_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct sched_state *st = state;
	enum sched_event kind = classify(st, s->event);
	st->counted_from = st->counted_on = UINT32_MAX;
	if (kind == EV_SWITCH_STACK) {
		stack_lend_copy(st->lender, s->tid, stack);
		return;
	}
	if (kind == EV_SWITCH) {
		st->counted_from = stack;
		st->counted_on = stack_lend_key(st->lender, s->tid, stack);
		switch_sample(st, p, s, st->counted_on);
		return;
	}
	int64_t tid = kind == EV_OTHER ? -1 : target_tid(p, s);
	if (tid < 0)
		return;
	switch (kind) {
	case EV_WAKING:
		sched_waking(st->tracker, (uint32_t)tid, s->time);
		break;
	case EV_WAKEUP_NEW:
		sched_wakeup_new(st->tracker, (uint32_t)tid, s->time);
		break;
	case EV_MIGRATE:
		sched_migrate(st->tracker, (uint32_t)tid, s->time);
		break;
	default:
		break;
	}
}


/*
 * The sched_event hook (collector.h): a switch's prev and next, a waking's
 * target and whether it ran in interrupt context (a timer's or a device's
 * waking: the sample's task is only the one interrupted), for the wake
 * linker of the futex collector (docs/waits.md).
 */
static bool sched_event_facts(void *state, const struct profile *p, const struct sp_sample *s,
			      struct sched_event_facts *out)
{
	struct sched_state *st = state;
	if (!s->event)
		return false;
	enum sched_event kind = classify(st, s->event);
	const struct tep_event *ev = view_tracepoint_of(p, s);
	if (!ev || (kind != EV_SWITCH && kind != EV_WAKING && kind != EV_WAKING_STACK))
		return false;
	memset(out, 0, sizeof(*out));
	if (kind == EV_SWITCH) {
		int64_t prev_pid = s->tid, prev_state = 0, next_pid = 0;
		if (!tp_field_i64(ev, s, "prev_state", &prev_state))
			return false;
		tp_field_i64(ev, s, "prev_pid", &prev_pid);
		enum sched_out_kind out_kind = sched_out_kind_of(prev_state);
		out->kind = SCHED_FACT_SWITCH;
		out->prev_tid = (uint32_t)prev_pid;
		out->prev_sleeps = out_kind == SCHED_OUT_SLEEP;
		out->prev_dead = out_kind == SCHED_OUT_DEAD;
		if (tp_field_i64(ev, s, "next_pid", &next_pid) && next_pid > 0 &&
		    sched_task_known(st->tracker, (uint32_t)next_pid))
			out->next_tid = (uint32_t)next_pid;
		return true;
	}
	int64_t target = target_tid(p, s);
	uint64_t flags = 0;
	if (target < 0)
		return false;
	out->kind = kind == EV_WAKING_STACK ? SCHED_FACT_WAKING_STACK : SCHED_FACT_WAKING;
	out->target = (uint32_t)target;
	out->irq = tp_field_u64(ev, s, "common_flags", &flags) && (flags & TRACE_FLAGS_INTERRUPT);
	return true;
}

/* SWITCH records close waits; FORK/COMM make a workload task known; EXIT ends it. */
static void sched_record(void *state, const struct profile *p, const struct perf_event_header *rec,
			 const struct sp_sample_id *id)
{
	struct sched_state *st = state;
	const uint32_t *u32 = (const void *)(rec + 1);
	switch (rec->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!id->valid || strcmp(id->event->collector, "sched") != 0)
			break;
		if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT)
			sched_switch_out_record(st->tracker, id->tid, id->time,
						rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		else {
			sched_switch_in(st->tracker, id->tid, id->time);
			stack_lend_end(st->lender, id->tid);
		}
		break;
	case PERF_RECORD_FORK:
		if (rec->size >= 24 && view_task_in_workload(p, u32[0]))
			sched_task_seen(st->tracker, u32[2]);
		break;
	case PERF_RECORD_COMM:
		if (rec->size >= 24 && view_task_in_workload(p, u32[0]))
			sched_task_seen(st->tracker, u32[1]);
		break;
	case PERF_RECORD_EXIT:
		if (rec->size >= 24)
			sched_task_exit(st->tracker, u32[2]);
		break;
	default:
		break;
	}
}

static void sched_finish(void *state, const struct profile *p)
{
	struct sched_state *st = state;
	sched_tracker_finish(st->tracker);
	/* the waits charged to a key before its call site's first copy came */
	sched_tracker_remap_stacks(st->tracker, stack_lent, st->lender);
	/* and to a key no copy was joined to, completed through its frames at the end of the load */
	sched_tracker_remap_stacks(st->tracker, view_stack_moved, (void *)p);
}

/* ---- the rows of the report: one per stack, or per LKP key ---- */

struct sched_row {
	char *key;
	uint32_t stack;   /* the stack whose frames and path the row shows: its heaviest */
	uint32_t nstacks; /* stacks under this key */
	struct sched_stack_stats stats;
};

static char *lkp_key_of_stack(const struct profile *p, uint32_t id)
{
	const char *names[SCHED_LKP_WINDOW];
	uint32_t depth = view_stack_depth(p, id);
	size_t n = 0;
	/* the frames sigprof adds ("[signal SIGUSR1] (stack from delivery)") are in no perf callchain: not in the key */
	for (uint32_t i = 0; i < depth && n < SCHED_LKP_WINDOW; i++) {
		const struct frame *f = view_stack_frame(p, id, i);
		if (!f->synthetic)
			names[n++] = f->sym;
	}
	char key[1024];
	sched_lkp_key(names, n, key, sizeof(key));
	return xstrdup(key);
}

/* The row key of a stack: its LKP key, or its frames leaf first joined with ';'. */
static char *stack_key(const struct profile *p, uint32_t id, bool lkp)
{
	if (lkp)
		return lkp_key_of_stack(p, id);
	static const struct stack_line_style style = { .separator = ";" };
	struct strbuf sb = { 0 };
	view_stack_line(p, id, &style, &sb);
	return sb.buf ? sb.buf : xstrdup("[unknown]");
}

/* By key, and within a key heaviest first, so the first of a run of equal keys names the merged row. */
static int compare_row_keys(const void *a, const void *b)
{
	const struct sched_row *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->stats.wait_and_delay.total != y->stats.wait_and_delay.total)
		return x->stats.wait_and_delay.total > y->stats.wait_and_delay.total ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int compare_row_weight(const void *a, const void *b)
{
	const struct sched_row *x = a, *y = b;
	if (x->stats.wait_and_delay.total != y->stats.wait_and_delay.total)
		return x->stats.wait_and_delay.total > y->stats.wait_and_delay.total ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Rows sorted by wait_and_delay total, equal keys merged (the heaviest stack first names the row). */
static size_t sched_rows(const struct sched_state *st, const struct profile *p, bool lkp, struct sched_row **out)
{
	uint32_t *ids;
	size_t n = sched_stacks_with_waits(st->tracker, &ids);
	struct sched_row *rows = xcalloc(n ? n : 1, sizeof(*rows));
	for (size_t i = 0; i < n; i++) {
		rows[i].key = stack_key(p, ids[i], lkp);
		rows[i].stack = ids[i];
		rows[i].nstacks = 1;
		rows[i].stats = *sched_stack_stats_of(st->tracker, ids[i]);
	}
	free(ids);
	sort_items(rows, n, sizeof(*rows), compare_row_keys);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept && strcmp(rows[kept - 1].key, rows[i].key) == 0) {
			sched_stack_stats_merge(&rows[kept - 1].stats, &rows[i].stats);
			rows[kept - 1].nstacks++;
			free(rows[i].key);
			continue;
		}
		rows[kept++] = rows[i];
	}
	sort_items(rows, kept, sizeof(*rows), compare_row_weight);
	*out = rows;
	return kept;
}

static void free_rows(struct sched_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	free(rows);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static const struct path_figure sched_path_figures[] = { { "wait ms", NULL, 3, "ms" } };

/* The path table's sched column: wait time in ms of the waits that began on the path's stacks. */
static double sched_path_figure(void *state, const struct profile *p, int path, size_t figure)
{
	(void)figure; /* the only one: wait ms */
	struct sched_state *st = state;
	uint32_t *ids;
	size_t n = sched_stacks_with_waits(st->tracker, &ids);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (view_stack_path(p, ids[i]) == path)
			total += sched_stack_stats_of(st->tracker, ids[i])->wait_time.total;
	free(ids);
	return ms(total);
}

static double figure_avg_ms(const struct sched_figure *f)
{
	return f->count ? ms(f->total) / (double)f->count : 0.0;
}

/* Where the recording saw wakings: "system-wide", "workload" (only those the workload did) or "none". */
static const char *waking_scope(const struct profile *p)
{
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->name, "sched:sched_waking") == 0 || strcmp(ev->name, "sched:sched_wakeup") == 0)
			return event_is_system_wide(ev) ? "system-wide" : "workload";
	}
	return "none";
}

/*
 * Hits of the collector's events of this kind that the kernel counted but
 * did not sample (it throttles an event past kernel.perf_event_max_sample_rate
 * per CPU, and a throttled event on an idle CPU stays so until its next
 * tick): the waits or delays they would have closed are missing.
 */
static uint64_t unsampled_hits(struct sched_state *st, const struct profile *p, enum sched_event kind)
{
	uint64_t missing = 0;
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "sched") == 0 && classify(st, ev) == kind)
			missing += view_event_unsampled_hits(p, i);
	}
	return missing;
}

/* ---- text ---- */

/* The totals table's columns: name, count, total, avg, p50, p99, max (view_table). */
static const unsigned total_columns[] = { 18, 11, 15, 13, 13, 13, 13 };

static void text_total_line(struct view_table *t, const char *name, const struct duration_stats *d)
{
	view_table_addf(t, "  %-16s %10llu %14.3f %12.3f %12.3f %12.3f %12.3f", name, (unsigned long long)d->count,
			ms(d->total), d->count ? ms(d->total) / (double)d->count : 0.0, ms(duration_quantile(d, 0.5)),
			ms(duration_quantile(d, 0.99)), ms(d->max));
}

static void text_totals(struct sched_state *st, const struct profile *p, const struct view_options *o, FILE *out)
{
	const struct sched_totals *t = sched_tracker_totals(st->tracker);
	struct view_table table = { .columns = total_columns, .ncolumns = ARRAY_SIZE(total_columns) };
	view_table_addf(&table, "  %-16s %10s %14s %12s %12s %12s %12s", "", "count", "total ms", "avg ms", "p50 ms",
			"p99 ms", "max ms");
	text_total_line(&table, "wait_time", &t->wait_time);
	text_total_line(&table, "sch_delay", &t->sch_delay);
	text_total_line(&table, "wait_and_delay", &t->wait_and_delay);
	text_total_line(&table, "new task delay", &t->new_task_delay);
	view_table_print(&table, o, out);
	view_text_slowest(o, out, "wait", &t->slowest_wait);
	view_text_wrapped(o, out, 4, "  migrations: %llu; waits with no waking seen (delay unknown): %llu",
			  (unsigned long long)t->migrations, (unsigned long long)t->without_waking);
	view_text_wrapped(o, out, 4, "  not counted: %llu waits open at the end, %llu ended by exit, %llu cut by a lost "
			  "switch-in", (unsigned long long)t->open_at_end, (unsigned long long)t->ended_by_exit,
			  (unsigned long long)t->unmatched);
	uint64_t switches = unsampled_hits(st, p, EV_SWITCH), wakings = unsampled_hits(st, p, EV_WAKING);
	if (switches || wakings)
		view_text_wrapped(o, out, 4, "  throttled: %llu switch-outs and %llu wakings (of any task) counted by the "
				  "kernel but not sampled", (unsigned long long)switches, (unsigned long long)wakings);
}

/* The stack table's columns: waits, wait total/avg/max, delay total/avg/max, w+d total, path (view_table). */
static const unsigned row_columns[] = { 10, 13, 10, 10, 13, 10, 10, 13, 18 };

static void text_row_heading(struct view_table *t)
{
	view_table_addf(t, "  %8s %12s %9s %9s %12s %9s %9s %12s  %s", "waits", "wait tot ms", "avg", "max",
			"delay tot ms", "avg", "max", "w+d tot ms", "path");
}

/*
 * A stack's row, then its frames.  Rows wider than the width repeat the
 * heading over each row, in as many tables as the width needs (o->width);
 * those that fit had their heading printed once before the first.
 */
static void text_row(const struct profile *p, const struct sched_row *r, const struct view_options *o,
		     bool own_heading, FILE *out)
{
	const struct sched_stack_stats *s = &r->stats;
	struct view_table t = { .columns = row_columns, .ncolumns = ARRAY_SIZE(row_columns) };
	if (own_heading)
		text_row_heading(&t);
	view_table_addf(&t, "  %8llu %12.3f %9.3f %9.3f %12.3f %9.3f %9.3f %12.3f  %s",
			(unsigned long long)s->wait_time.count, ms(s->wait_time.total), figure_avg_ms(&s->wait_time),
			ms(s->wait_time.max), ms(s->sch_delay.total), figure_avg_ms(&s->sch_delay), ms(s->sch_delay.max),
			ms(s->wait_and_delay.total), path_name(view_stack_path(p, r->stack)));
	view_table_print(&t, o, out);
	if (o->sched_keys_lkp) {
		fprintf(out, "        %s\n", r->key);
		return;
	}
	/* a stack key can be long: at most max_frames of its frames */
	const char *k = r->key;
	for (unsigned i = 0; i < o->max_frames && k; i++) {
		const char *semi = strchr(k, ';');
		char frame[512], cut[520];
		snprintf(frame, sizeof(frame), "%.*s", semi ? (int)(semi - k) : (int)strlen(k), k);
		fprintf(out, "        %s\n", term_cut(frame, o->width > 8 ? o->width - 8 : 0, cut, sizeof(cut)));
		k = semi ? semi + 1 : NULL;
	}
	if (k)
		fprintf(out, "        ...\n");
}

static void sched_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct sched_state *st = state;
	const struct sched_totals *t = sched_tracker_totals(st->tracker);
	const char *scope = waking_scope(p);
	if (!view_collector_ok(p, st->self))
		return;
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "Scheduler waits (sched): %llu waits of the workload's tasks, wakings seen %s",
		(unsigned long long)t->wait_time.count,
		strcmp(scope, "system-wide") == 0 ? "system-wide"
		: strcmp(scope, "workload") == 0  ? "only when the workload did them (no system-wide events: "
						    "delays partly unknown)"
						  : "nowhere (no waking event: delays unknown)");
	text_totals(st, p, o, out);
	struct sched_row *rows;
	size_t n = sched_rows(st, p, o->sched_keys_lkp, &rows);
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "Top sched stacks by wait_and_delay total (%s; wait = switch-out to switch-in, "
			  "delay = waking to switch-in)", o->sched_keys_lkp ? "keys as LKP's perf-sched" : "leaf first");
	size_t row_width = 0; /* the widest row, its path included */
	for (size_t c = 0; c + 1 < ARRAY_SIZE(row_columns); c++)
		row_width += row_columns[c];
	row_width += strlen("futex-requeue") + 2;
	bool fits = !o->width || row_width <= o->width;
	if (fits) {
		struct view_table heading = { .columns = row_columns, .ncolumns = ARRAY_SIZE(row_columns) };
		text_row_heading(&heading);
		view_table_print(&heading, o, out);
	}
	for (size_t i = 0; i < n && i < o->top; i++)
		text_row(p, &rows[i], o, !fits, out);
	free_rows(rows, n);
}

/* ---- JSON ---- */

static void json_figure(struct json_writer *w, const char *key, const struct sched_figure *f)
{
	json_object_begin(w, key);
	json_u64(w, "count", f->count);
	json_double(w, "total_ms", ms(f->total), 6);
	json_double(w, "avg_ms", figure_avg_ms(f), 6);
	json_double(w, "max_ms", ms(f->max), 6);
	json_end(w);
}

static void json_duration(struct json_writer *w, const char *key, const struct duration_stats *d)
{
	json_object_begin(w, key);
	json_u64(w, "count", d->count);
	json_double(w, "total_ms", ms(d->total), 6);
	json_double(w, "avg_ms", d->count ? ms(d->total) / (double)d->count : 0.0, 6);
	json_double(w, "max_ms", ms(d->max), 6);
	json_double(w, "p50_ms", ms(duration_quantile(d, 0.5)), 6);
	json_double(w, "p99_ms", ms(duration_quantile(d, 0.99)), 6);
	json_end(w);
}

static void json_totals(struct json_writer *w, struct sched_state *st, const struct profile *p)
{
	const struct sched_totals *t = sched_tracker_totals(st->tracker);
	json_object_begin(w, "total");
	json_duration(w, "wait_time", &t->wait_time);
	json_duration(w, "sch_delay", &t->sch_delay);
	json_duration(w, "wait_and_delay", &t->wait_and_delay);
	json_duration(w, "new_task_delay", &t->new_task_delay);
	view_json_slowest(w, "slowest_wait", &t->slowest_wait);
	json_u64(w, "migrations", t->migrations);
	json_u64(w, "without_waking", t->without_waking);
	json_u64(w, "open_at_end", t->open_at_end);
	json_u64(w, "ended_by_exit", t->ended_by_exit);
	json_u64(w, "lost_switch_in", t->unmatched);
	json_u64(w, "unsampled_switch_outs", unsampled_hits(st, p, EV_SWITCH));
	json_u64(w, "unsampled_wakings", unsampled_hits(st, p, EV_WAKING));
	json_end(w);
}

static void json_row(struct json_writer *w, const struct profile *p, const struct sched_row *r)
{
	json_object_begin(w, NULL);
	json_string(w, "key", r->key);
	json_string(w, "path", path_name(view_stack_path(p, r->stack)));
	json_u64(w, "stacks", r->nstacks);
	view_json_stack(w, p, r->stack);
	json_figure(w, "wait_time", &r->stats.wait_time);
	json_figure(w, "sch_delay", &r->stats.sch_delay);
	json_figure(w, "wait_and_delay", &r->stats.wait_and_delay);
	json_u64(w, "migrations", r->stats.migrations);
	json_end(w);
}

static void sched_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w)
{
	struct sched_state *st = state;
	if (!view_collector_ok(p, st->self)) {
		json_null(w, "sched");
		return;
	}
	json_object_begin(w, "sched");
	json_string(w, "keys", o->sched_keys_lkp ? "lkp" : "stack");
	json_string(w, "wakings", waking_scope(p));
	json_u64(w, "other_tasks_events", st->not_workload);
	json_totals(w, st, p);
	struct sched_row *rows;
	size_t n = sched_rows(st, p, o->sched_keys_lkp, &rows);
	size_t shown = o->stacks_limit_given && o->stacks_per_path < n ? o->stacks_per_path : n;
	json_array_begin(w, "stacks");
	for (size_t i = 0; i < shown; i++)
		json_row(w, p, &rows[i]);
	json_end(w);
	free_rows(rows, n);
	json_end(w);
}

/* ---- keyed figures ---- */

static void figures_total(struct figure_rows *rows, const char *what, const struct duration_stats *d)
{
	figure_rows_add(rows, (double)d->count, "count", true, "sched.total.%s.count", what);
	if (!d->count)
		return;
	figure_rows_add(rows, ms(d->total), "ms", true, "sched.total.%s.total_ms", what);
	figure_rows_add(rows, ms(d->total) / (double)d->count, "ms", true, "sched.total.%s.avg_ms", what);
	figure_rows_add(rows, ms(d->max), "ms", true, "sched.total.%s.max_ms", what);
}

/*
 * Per LKP key: perf-sched.wait_time.avg.ms.KEY (lkp.md).  The counts are
 * perf-sched.WHAT.count.ms.KEY (the name issue 11 spelled out, kept), and
 * for wait_and_delay also LKP's own perf-sched.wait_and_delay.count.KEY, the
 * only count LKP writes (seeds/002: "perf-sched.wait_and_delay.count.irqentry_exit_to_user_mode...").
 */
static void figures_lkp(struct figure_rows *rows, const char *what, const char *key, const struct sched_figure *f)
{
	figure_rows_add(rows, (double)f->count, "count", true, "perf-sched.%s.count.ms.%s", what, key);
	if (strcmp(what, "wait_and_delay") == 0)
		figure_rows_add(rows, (double)f->count, "count", true, "perf-sched.%s.count.%s", what, key);
	figure_rows_add(rows, figure_avg_ms(f), "ms", true, "perf-sched.%s.avg.ms.%s", what, key);
	figure_rows_add(rows, ms(f->max), "ms", true, "perf-sched.%s.max.ms.%s", what, key);
}

static void sched_figures(void *state, const struct profile *p, struct figure_rows *rows)
{
	struct sched_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	const struct sched_totals *t = sched_tracker_totals(st->tracker);
	figures_total(rows, "wait_time", &t->wait_time);
	figures_total(rows, "sch_delay", &t->sch_delay);
	figures_total(rows, "wait_and_delay", &t->wait_and_delay);
	figure_rows_add(rows, (double)t->migrations, "count", true, "sched.total.migrations");
	struct sched_row *srows;
	size_t n = sched_rows(st, p, true, &srows);
	for (size_t i = 0; i < n; i++) {
		figures_lkp(rows, "wait_time", srows[i].key, &srows[i].stats.wait_time);
		figures_lkp(rows, "sch_delay", srows[i].key, &srows[i].stats.sch_delay);
		figures_lkp(rows, "wait_and_delay", srows[i].key, &srows[i].stats.wait_and_delay);
	}
	free_rows(srows, n);
}

static const struct collector_analyzer sched_analyzer = {
	.completes_cut_stacks = true, /* keys no copy was joined to (stack_completion.h) */
	.create = sched_create,
	.figures = sched_figures,
	.path_of = sched_path_of,
	.sample = sched_sample,
	.counted_stack = sched_counted_stack,
	.lent_stack = sched_lent_stack,
	.finish = sched_finish,
	.text = sched_text,
	.json = sched_json,
	.destroy = sched_destroy,
	.sched_event = sched_event_facts,
	.record = sched_record,
	.path_figures = sched_path_figures,
	.npath_figures = ARRAY_SIZE(sched_path_figures),
	.path_figure = sched_path_figure,
};

const struct collector sched_collector = {
	.name = "sched",
	.description = "scheduler waits: wait time and scheduling delay per switch-out stack (sched_switch, "
		       "sched_waking, sched_wakeup_new, sched_migrate_task)",
	.add_events = sched_add_events,
	.unit = "events",
	.analyzer = &sched_analyzer,
	.weights = sched_weights,
	.nweights = ARRAY_SIZE(sched_weights),
};
