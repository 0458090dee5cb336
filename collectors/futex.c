/*
 * futex.c: the futex collector, per operation and per futex word: its
 * record side and the analyzer that turns the samples into the tracker's
 * figures.
 *
 * Record side.  It opens the entry and exit tracepoints of futex(2) and of
 * the futex2 system calls this kernel has (futex_wait, futex_wake,
 * futex_requeue, futex_waitv); entries carry their callchain, exits only
 * their result.  --futex picks what flows:
 *   trace   every call, period 1: exact, and the most expensive;
 *   sample  (default) the kernel's frequency mode (attr.freq) at
 *           FUTEX_SAMPLE_BOUND_HZ per tracepoint and CPU: the period stays
 *           1, so every call is recorded, while the workload's calls on a CPU
 *           are more than 1/(2 x bound) apart; faster, the kernel raises the
 *           period and each sample carries it as its weight;
 *   count   counters only (sample_period 0): no records, the exact totals of
 *           each system call in the TOTALS records.
 * (A fixed period does not work for this: with PERIOD in sample_type the
 * kernel samples a tracepoint on every hit whatever the period.)
 *
 * Report side.  Each sample is decoded (op, word address, result) and fed
 * to the tracker (futex_tracker.c): the per-thread state machine that pairs
 * an exit with its thread's pending entry.  Words are named once, on first
 * sight, by the data symbol or mapping that holds them.
 *
 * The other files of the collector, one concern each: futex_op.c (op
 * decoding, names, stat's filters), futex_tracker.c (the state machine),
 * futex_report.c (mode and exact totals, text and JSON; docs/futex.md
 * describes each figure); futex_internal.h is what they share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/collector.h"
#include "sigprof/futex_tracker.h"
#include "sigprof/paths.h"
#include "sigprof/view.h"
#include "sigprof/tracepoint.h"
#include "sigprof/util.h"

#include "futex_internal.h"

/* ---- record side ---- */

/*
 * The sample mode's bound, per tracepoint and CPU (docs/futex.md has the
 * measurements).  The kernel estimates the rate from the time between two
 * samples of one event, so it is two calls closer than 1/(2 x bound), 10 us,
 * that raise the period, and the next sample within two ticks lowers it.
 * The events follow the CPU, not the thread: the kernel swaps the contexts
 * of a process's threads at a context switch instead of rescheduling their
 * events, so a wake and the woken thread's next call on one CPU count as a
 * burst.  10 us keeps a futex handoff (wake, then the woken thread's next
 * wait 10-30 us later) below the bound.
 */
#define FUTEX_SAMPLE_BOUND_HZ 50000

/* The system calls, futex(2) first: it is required, the futex2 calls are taken where the kernel has them. */
static const char *const futex_syscalls[] = { "futex", "futex_wait", "futex_wake", "futex_requeue", "futex_waitv" };

static uint64_t sample_bound(void)
{
	int max = read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", FUTEX_SAMPLE_BOUND_HZ);
	return max > 0 && max < FUTEX_SAMPLE_BOUND_HZ ? (uint64_t)max : FUTEX_SAMPLE_BOUND_HZ;
}

static void apply_mode(struct perf_event_attr *attr, enum futex_mode mode)
{
	if (mode == FUTEX_SAMPLE) {
		attr->freq = 1;
		attr->sample_freq = sample_bound();
	} else if (mode == FUTEX_COUNT) {
		attr->freq = 0;
		attr->sample_period = 0; /* a counter: no records, an exact total */
	}
}

static int add_tracepoint(struct event_list *events, const struct record_options *opts, const char *name,
			  bool entry, char *reason, size_t reasonlen)
{
	int err = tracepoint_add(events, opts, "futex", "syscalls", name, entry, reason, reasonlen);
	if (!err)
		apply_mode(&events->specs[events->count - 1].attr, opts->futex);
	return err;
}

static int futex_add_events(struct record_options *opts, struct event_list *events, char *reason,
			    size_t reasonlen)
{
	char name[64];
	/* Waiters blocked in glibc's lock code (no frame pointers) are named only by a DWARF unwind. */
	struct record_options with_stacks = *opts;
	with_stacks.call_graph = call_graph_for(opts, CALL_GRAPH_DWARF);
	with_stacks.stack_user_size = stack_user_size_for(opts, WAIT_STACK_USER_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(futex_syscalls); i++) {
		snprintf(name, sizeof(name), "sys_enter_%s", futex_syscalls[i]);
		int err = add_tracepoint(events, &with_stacks, name, true, reason, reasonlen);
		if (err == -ENOENT && i > 0)
			continue; /* an older kernel without this futex2 call */
		if (err)
			return err;
		if (opts->futex == FUTEX_COUNT)
			continue;
		snprintf(name, sizeof(name), "sys_exit_%s", futex_syscalls[i]);
		err = add_tracepoint(events, &with_stacks, name, false, reason, reasonlen);
		if (err)
			return err;
	}
	reason[0] = '\0';
	if (opts->futex != FUTEX_COUNT)
		opts->want_data_mmaps = true;
	return 0;
}

/* ---- report side: decoding samples ---- */

static enum futex_op_id syscall_named(const char *name)
{
	if (strcmp(name, "futex") == 0)
		return FOP_UNKNOWN;
	for (int id = FOP_SYS_WAIT; id <= FOP_SYS_WAITV; id++)
		if (strcmp(name, futex_op_name((enum futex_op_id)id)) == 0)
			return (enum futex_op_id)id;
	return FOP_COUNT;
}

struct event_info *futex_event_info_of(struct futex_state *st, const struct sp_event *ev)
{
	if (ev->index >= st->nevents) {
		size_t old = st->nevents;
		GROW(st->events, st->nevents, ev->index + 1);
		memset(st->events + old, 0, (st->nevents - old) * sizeof(*st->events));
	}
	struct event_info *info = &st->events[ev->index];
	if (info->kind != KIND_UNKNOWN)
		return info;
	static const char enter_prefix[] = "syscalls:sys_enter_", exit_prefix[] = "syscalls:sys_exit_";
	info->kind = KIND_OTHER;
	enum futex_op_id syscall = FOP_COUNT;
	if (strncmp(ev->name, enter_prefix, sizeof(enter_prefix) - 1) == 0) {
		syscall = syscall_named(ev->name + sizeof(enter_prefix) - 1);
		info->kind = syscall == FOP_COUNT ? KIND_OTHER : KIND_ENTER;
	} else if (strncmp(ev->name, exit_prefix, sizeof(exit_prefix) - 1) == 0) {
		syscall = syscall_named(ev->name + sizeof(exit_prefix) - 1);
		info->kind = syscall == FOP_COUNT ? KIND_OTHER : KIND_EXIT;
	}
	info->syscall = syscall;
	return info;
}

/* The op and word of an entry, per system call. */
static bool decode_entry(const struct tep_event *ev, const struct sp_sample *s, enum futex_op_id syscall,
			 struct futex_call *c)
{
	uint64_t op = 0, flags = 0, timeout = 0, clockid = 1;
	if (syscall == FOP_UNKNOWN) {
		if (!tp_field_u64(ev, s, "uaddr", &c->uaddr) || !tp_field_u64(ev, s, "op", &op))
			return false;
		c->op = futex_op_decode((uint32_t)op);
		return true;
	}
	const char *addr_field = syscall == FOP_SYS_WAITV || syscall == FOP_SYS_REQUEUE ? "waiters" : "uaddr";
	if (!tp_field_u64(ev, s, addr_field, &c->uaddr) || !tp_field_u64(ev, s, "flags", &flags))
		return false;
	if (tp_field_u64(ev, s, "timeout", &timeout) && timeout)
		tp_field_u64(ev, s, "clockid", &clockid);
	c->op = (struct futex_op){ .id = syscall, .private_flag = flags & FUTEX_OP_PRIVATE_FLAG,
				   .clock_realtime = timeout && clockid == 0 /* CLOCK_REALTIME */,
				   .raw = (uint32_t)flags };
	return true;
}

static bool decode_call(struct futex_state *st, const struct profile *p, const struct sp_sample *s,
			struct futex_call *c)
{
	if (!s->event)
		return false;
	const struct event_info *info = futex_event_info_of(st, s->event);
	if (info->kind != KIND_ENTER && info->kind != KIND_EXIT)
		return false;
	const struct tep_event *ev = view_tracepoint_of(p, s);
	if (!ev)
		return false;
	memset(c, 0, sizeof(*c));
	c->enter = info->kind == KIND_ENTER;
	c->pid = s->pid;
	c->tid = s->tid;
	c->time = s->time;
	c->period = s->period ? s->period : 1;
	c->syscall = info->syscall;
	if (c->enter)
		return decode_entry(ev, s, info->syscall, c);
	return tp_field_i64(ev, s, "ret", &c->ret);
}

/* Decode s once for path_of() and sample(), which the loader calls in turn for each sample. */
static const struct futex_call *decoded(struct futex_state *st, const struct profile *p, const struct sp_sample *s)
{
	if (!s->raw || st->cached_raw != s->raw) {
		st->cached_raw = s->raw;
		st->cached_ok = decode_call(st, p, s, &st->call);
	}
	return st->cached_ok ? &st->call : NULL;
}

/* The weights (collector.h): calls and measured blocking time per entry stack, labelled with the word. */
enum { WEIGHT_CALLS, WEIGHT_WAIT_NS };
static const struct weight_kind futex_weights[] = {
	[WEIGHT_CALLS] = { "calls", "count", false },
	[WEIGHT_WAIT_NS] = { "wait", "nanoseconds", true },
};

static void charge_wait(void *ctx, const struct futex_word *w, uint32_t tid, uint32_t stack, uint64_t ns)
{
	const struct futex_state *st = ctx;
	view_add_weight(st->profile, st->self, stack, w->pid, tid, 0, w->uaddr, WEIGHT_WAIT_NS, ns);
}

static void *futex_create(const struct profile *p, int self)
{
	struct futex_state *st = xcalloc(1, sizeof(*st));
	st->self = self;
	st->profile = p;
	st->tracker = futex_tracker_new();
	if (view_weights_wanted(p))
		futex_tracker_set_wait_hook(st->tracker, charge_wait, st);
	return st;
}

static void futex_destroy(void *state)
{
	struct futex_state *st = state;
	futex_tracker_free(st->tracker);
	free(st->events);
	free(st);
}

static int futex_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	struct futex_state *st = state;
	const struct futex_call *c = decoded(st, p, s);
	if (!c)
		return PATH_FUTEX_OTHER;
	if (c->enter)
		return futex_op_path(c->op.id);
	enum futex_op_id op = futex_tracker_thread_op(st->tracker, c->tid);
	if (c->syscall != FOP_UNKNOWN)
		op = c->syscall; /* a futex2 exit names its own op */
	return futex_op_path(op);
}

static void name_word(const struct profile *p, struct futex_word *w)
{
	char buf[512];
	view_user_data_name(p, w->pid, w->uaddr, buf, sizeof(buf), &w->dso);
	w->symbol = xstrdup(buf);
	w->named = true;
}

static void futex_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct futex_state *st = state;
	const struct futex_call *c = decoded(st, p, s);
	st->cached_raw = NULL;
	if (!c) {
		st->undecoded++;
		return;
	}
	struct event_info *info = &st->events[s->event->index];
	info->samples++;
	info->weight += c->period;
	if (!c->enter) {
		futex_tracker_exit(st->tracker, c);
		return;
	}
	struct futex_call entry = *c;
	entry.stack = stack;
	struct futex_word *w = futex_tracker_enter(st->tracker, &entry);
	view_add_weight(p, st->self, stack, c->pid, c->tid, 0, c->uaddr, WEIGHT_CALLS, c->period ? c->period : 1);
	if (!w->named)
		name_word(p, w);
}

static void futex_finish(void *state, const struct profile *p)
{
	(void)p;
	struct futex_state *st = state;
	futex_tracker_finish(st->tracker);
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	for (size_t i = 0; i < n; i++)
		futex_word_sort_stacks(words[i]);
}

/* The describe hook (collector.h): an entry's op and word, an exit's result. */
static bool futex_describe(void *state, const struct profile *p, const struct sp_sample *s, char *buf, size_t len)
{
	struct futex_state *st = state;
	struct futex_call c;
	if (!decode_call(st, p, s, &c))
		return false;
	char op[96], word[256], err[32];
	if (c.enter) {
		view_user_data_name(p, c.pid, c.uaddr, word, sizeof(word), NULL);
		snprintf(buf, len, "%s on %s", futex_op_format(&c.op, op, sizeof(op)), word);
	} else if (c.ret < 0 && c.ret >= -4095) {
		snprintf(buf, len, "returns %s", futex_errno_name((int)-c.ret, err, sizeof(err)));
	} else {
		snprintf(buf, len, "returns %lld", (long long)c.ret);
	}
	return true;
}

/* The marks_data hook (collector.h): a futex word of pid in [start, end) (c2c marks its cacheline). */
static bool futex_marks_data(void *state, uint32_t pid, uint64_t start, uint64_t end)
{
	const struct futex_state *st = state;
	return futex_tracker_has_word_in(st->tracker, pid, start, end);
}

static const struct collector_analyzer futex_analyzer = {
	.create = futex_create,
	.path_of = futex_path_of,
	.sample = futex_sample,
	.finish = futex_finish,
	.text = futex_text,
	.json = futex_json,
	.destroy = futex_destroy,
	.figures = futex_figures,
	.marks_data = futex_marks_data,
	.describe = futex_describe,
};

const struct collector futex_collector = {
	.name = "futex",
	.description = "futex system calls: per op and per futex word, calls, blocking time, errors, waiter and waker stacks",
	.add_events = futex_add_events,
	.unit = "calls",
	.analyzer = &futex_analyzer,
	.weights = futex_weights,
	.nweights = ARRAY_SIZE(futex_weights),
};
