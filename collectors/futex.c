/*
 * futex.c: the futex collector, per operation and per futex word: its
 * record side and the analyzer that turns the samples into the tracker's
 * figures.
 *
 * Record side.  It opens the entry and exit tracepoints of futex(2) and of
 * the futex2 system calls this kernel has (futex_wait, futex_wake,
 * futex_requeue, futex_waitv); entries carry their callchain, exits only
 * their result.  In trace and count modes a counter per futex(2) command,
 * with the tracepoint filter `sigprof stat` uses, makes the calls per op
 * exact (sample mode does not pay for them: exact while every call is
 * recorded, estimated above the bound).
 * Without --call-graph, each entry takes a short key (its frame-pointer
 * chain, or in a program without frame pointers a short copy unwound with
 * DWARF) and a copy of the user stack beside it while the entries of its
 * CPU stay under STACK_COPY_BOUND_HZ over a window (rate_bound.h); the
 * report lends each key the DWARF stack of its copies.
 * --futex picks what flows:
 *   trace   every call, period 1;
 *   sample  (default) every call while a window of the CPU stays at or under
 *           FUTEX_SAMPLE_BOUND_HZ per tracepoint (the gate, measured by a
 *           meter), the kernel's frequency mode at that rate in the windows
 *           above (the alternate): each of its samples carries its period as
 *           its weight;
 *   count   counters only (sample_period 0): no records, the exact totals of
 *           each system call and of four commands (count_mode_commands),
 *           the others together, in the TOTALS records.
 * The events of one tracepoint are told apart by a suffix of their name
 * (futex_internal.h).
 *
 * Report side.  Each sample is decoded (op, word address, result) and fed
 * to the tracker (futex_tracker.c): the per-thread state machine that pairs
 * an exit with its thread's pending entry.  A shared futex is keyed by the
 * object and offset of its MAP_SHARED mapping (the MMAP2 records' device
 * and inode), as the kernel keys it, so every process's calls on it meet.  Words are named once, on first
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

#include "sigprof/model/collector.h"
#include "sigprof/collectors/futex_tracker.h"
#include "sigprof/model/paths.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/view/view.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/util.h"

#include "futex_internal.h"

/* ---- record side ---- */

/*
 * The sample mode's bound, FUTEX_SAMPLE_BOUND_HZ (futex_internal.h), is per
 * tracepoint and CPU, measured over a window of RATE_BOUND_WINDOW_NS
 * (docs/futex.md): 500 calls in 10 ms.  Above it the alternate samples in
 * the kernel's frequency mode at FUTEX_SAMPLED_HZ.  It sampled at the bound
 * itself before: perf bench futex hash's recording was then 2.2 times the
 * size of perf record -g's, nearly all of it the alternates' 100 000
 * entries and exits a second per CPU.  At 10 000 a second per tracepoint
 * and CPU (2.5 times perf record -g's default frequency) the file is about
 * perf's size and a weighted figure still rests on thousands of samples a
 * second; below the bound nothing changes.
 */
#define FUTEX_SAMPLED_HZ 10000

/* The system calls, futex(2) first: it is required, the futex2 calls are taken where the kernel has them. */
static const char *const futex_syscalls[] = { "futex", "futex_wait", "futex_wake", "futex_requeue", "futex_waitv" };

/*
 * The events of one tracepoint: in trace mode the one that records every
 * hit; in count mode a counter; in sample mode the gate that records every
 * hit while the window's rate allows, its weighted alternate and its meter
 * (rate_bound.h); an entry with copies takes the rate-bounded whole copies
 * beside its key.  Returns the index of the spec whose total is the exact
 * count of hits (the gate in trace, the meter in sample, the counter in
 * count), or -errno.
 */
static int add_tracepoint(struct event_list *events, const struct record_options *opts, const char *name,
			  bool entry, bool copies, int entry_meter, char *reason, size_t reasonlen)
{
	int err = tracepoint_add(events, opts, "futex", "syscalls", name, entry, reason, reasonlen);
	if (err)
		return err;
	size_t record = events->count - 1;
	if (opts->futex == FUTEX_COUNT) {
		rate_bound_make_counter(&events->specs[record].attr);
		return (int)record;
	}
	if (opts->futex == FUTEX_TRACE) {
		if (copies && stack_keys_lent(opts)) /* the recording event counts every entry */
			rate_bound_add_stack_copies(events, opts, record, record, FUTEX_STACK_SUFFIX,
						    CPU_SIGNAL_STACK_USER_SIZE, STACK_COPY_BOUND_HZ, false);
		return (int)record;
	}
	/* an exit's rate is its entry's: the entry's meter measures both */
	size_t meter = rate_bound_add_sampled(events, record, entry ? -1 : entry_meter, FUTEX_SAMPLE_BOUND_HZ,
					      FUTEX_SAMPLED_HZ);
	if (copies && stack_keys_lent(opts))
		rate_bound_add_stack_copies(events, opts, record, meter, FUTEX_STACK_SUFFIX, CPU_SIGNAL_STACK_USER_SIZE,
					    STACK_COPY_BOUND_HZ, false);
	return (int)meter;
}

/*
 * The commands the count mode counts apart: glibc's locks, condition
 * variables, semaphores and joins make them.  Each counter's filter costs
 * every futex call about 50 ns: with one per command (14) `--futex count`
 * kept 0.36 of perf bench futex hash's throughput, the two tracepoints
 * counted (the floor of any tracepoint-based mode) 0.57; the entry and
 * four counters are within the floor's noise (docs/futex.md).  The rest
 * are counted together: the entry's total less these.
 */
static const enum futex_op_id count_mode_commands[] = { FOP_WAIT, FOP_WAKE, FOP_WAIT_BITSET, FOP_WAKE_BITSET };

/*
 * A counter per futex(2) command (every one, or count_mode_commands), with
 * the tracepoint filter `sigprof stat` uses: exact calls per op.
 */
static void add_op_counters(struct event_list *events, size_t total, bool every_command)
{
	char filter[160];
	size_t n = every_command ? FOP_LOCK_PI2 + 1 : ARRAY_SIZE(count_mode_commands);
	for (size_t i = 0; i < n; i++) {
		unsigned cmd = every_command ? (unsigned)i : (unsigned)count_mode_commands[i];
		futex_op_filter(cmd, filter, sizeof(filter));
		size_t c = rate_bound_add_sibling(events, total, futex_op_name((enum futex_op_id)cmd), filter);
		rate_bound_make_counter(&events->specs[c].attr);
	}
}

static int futex_add_events(struct record_options *opts, struct event_list *events, char *reason,
			    size_t reasonlen)
{
	char name[64];
	/*
	 * Waiters blocked in glibc's lock code (no frame pointers) are named only
	 * by a DWARF unwind.  A long copy on every entry lost 30% of trace
	 * mode's records on a fast caller and made sample mode's files 500 MB in
	 * 3 s, so entries take a short key (below) and a long copy only while the
	 * rate allows (rate_bound_add_stack_copies), which lends its stack to the key.  In a
	 * program with frame pointers the key is the frame-pointer chain; in one
	 * without, that chain stops at the libc wrapper (`syscall`), one key for
	 * every call site, so the key is a DWARF unwind of the top
	 * KEY_STACK_USER_SIZE bytes: the wrapper and its callers, which
	 * tell the call sites apart (docs/futex.md, "Stacks").
	 */
	struct record_options with_stacks = stack_key_options(opts, WAIT_STACK_USER_SIZE, KEY_STACK_USER_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(futex_syscalls); i++) {
		snprintf(name, sizeof(name), "sys_enter_%s", futex_syscalls[i]);
		/*
		 * Every per-task event is inherited by each new thread, under a
		 * kernel mutex (perf_trace_init walks every tracepoint of the
		 * kernel): the futex2 calls, which glibc does not make, keep their
		 * keys without copies (docs/futex.md, "Stacks").
		 */
		int total = add_tracepoint(events, &with_stacks, name, true, i == 0, -1, reason, reasonlen);
		if (total == -ENOENT && i > 0)
			continue; /* an older kernel without this futex2 call */
		if (total < 0)
			return total;
		/*
		 * The op counters cost about 0.05 us a call each (14 of them: 0.7 us,
		 * 2.5 times the default mode's whole cost on futex-heavy code), so
		 * only the modes that ask for exact totals pay for them; sample mode's
		 * per-op calls are exact while every call is recorded, estimated above.
		 */
		if (i == 0 && opts->futex != FUTEX_SAMPLE)
			add_op_counters(events, (size_t)total, opts->futex == FUTEX_TRACE);
		if (opts->futex == FUTEX_COUNT)
			continue;
		snprintf(name, sizeof(name), "sys_exit_%s", futex_syscalls[i]);
		int err = add_tracepoint(events, &with_stacks, name, false, false, total, reason, reasonlen);
		if (err < 0)
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

/* The futex(2) command a counter suffix names ("WAKE"), or FOP_COUNT. */
static enum futex_op_id command_named(const char *name)
{
	for (int id = 0; id <= FOP_LOCK_PI2; id++)
		if (strcmp(name, futex_op_name((enum futex_op_id)id)) == 0)
			return (enum futex_op_id)id;
	return FOP_COUNT;
}

/* What "syscalls:sys_{enter,exit}_CALL[#SUFFIX]" is (the suffixes: futex_internal.h). */
static void classify(struct event_info *info, const char *name)
{
	static const char enter_prefix[] = "syscalls:sys_enter_", exit_prefix[] = "syscalls:sys_exit_";
	info->kind = KIND_OTHER;
	info->syscall = FOP_COUNT;
	const char *call;
	if (strncmp(name, enter_prefix, sizeof(enter_prefix) - 1) == 0)
		call = name + sizeof(enter_prefix) - 1, info->entry = true;
	else if (strncmp(name, exit_prefix, sizeof(exit_prefix) - 1) == 0)
		call = name + sizeof(exit_prefix) - 1;
	else
		return;
	char base[64];
	size_t len = strcspn(call, "#");
	snprintf(base, sizeof(base), "%.*s", (int)len, call);
	enum futex_op_id syscall = syscall_named(base);
	if (syscall == FOP_COUNT)
		return;
	info->syscall = syscall;
	const char *suffix = call[len] == '#' ? call + len + 1 : NULL;
	if (!suffix) {
		info->kind = info->entry ? KIND_ENTER : KIND_EXIT;
	} else if (strcmp(suffix, FUTEX_SAMPLED_SUFFIX) == 0) {
		info->kind = info->entry ? KIND_ENTER : KIND_EXIT;
		info->weighted = true;
	} else if (strcmp(suffix, FUTEX_COUNT_SUFFIX) == 0) {
		info->kind = KIND_METER;
	} else if (rate_bound_stack_copy_suffix(suffix) && info->entry) {
		info->kind = KIND_STACK;
	} else if (info->entry && syscall == FOP_UNKNOWN && command_named(suffix) != FOP_COUNT) {
		info->kind = KIND_OP_COUNTER;
		info->op = command_named(suffix);
	}
}

struct event_info *futex_event_info_of(struct futex_state *st, const struct sp_event *ev)
{
	if (ev->index >= st->nevents) {
		size_t old = st->nevents;
		GROW(st->events, st->nevents, ev->index + 1);
		memset(st->events + old, 0, (st->nevents - old) * sizeof(*st->events));
	}
	struct event_info *info = &st->events[ev->index];
	if (info->kind == KIND_UNKNOWN) {
		classify(info, ev->name);
		/* a recording of the kernel's frequency mode on the tracepoint itself (sigprof before the window) */
		if ((info->kind == KIND_ENTER || info->kind == KIND_EXIT) && ev->attr.freq)
			info->weighted = true;
	}
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
	if (info->kind != KIND_ENTER && info->kind != KIND_EXIT && info->kind != KIND_STACK)
		return false;
	const struct tep_event *ev = view_tracepoint_of(p, s);
	if (!ev)
		return false;
	memset(c, 0, sizeof(*c));
	c->enter = info->kind != KIND_EXIT;
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

static void charge_wait(void *ctx, const struct futex_word *w, uint32_t pid, uint32_t tid, uint32_t stack,
			uint64_t ns)
{
	const struct futex_state *st = ctx;
	view_add_weight(st->profile, st->self, stack, pid, tid, 0, w->uaddr, WEIGHT_WAIT_NS, ns);
}

static void *futex_create(const struct profile *p, int self)
{
	struct futex_state *st = xcalloc(1, sizeof(*st));
	st->self = self;
	st->profile = p;
	st->tracker = futex_tracker_new();
	st->lender = stack_lender_new();
	st->waits = wait_linker_new();
	st->counted_from = st->counted_on = UINT32_MAX;
	if (view_weights_wanted(p))
		futex_tracker_set_wait_hook(st->tracker, charge_wait, st);
	return st;
}

static void futex_destroy(void *state)
{
	struct futex_state *st = state;
	futex_tracker_free(st->tracker);
	stack_lender_free(st->lender);
	wait_linker_free(st->waits);
	free(st->events);
	free(st);
}

static int futex_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	struct futex_state *st = state;
	const struct futex_call *c = decoded(st, p, s);
	if (!c)
		return PATH_FUTEX_OTHER;
	if (st->events[s->event->index].kind == KIND_STACK)
		return futex_op_path(c->op.id) | PATH_STACK_ONLY;
	if (c->enter)
		return futex_op_path(c->op.id);
	enum futex_op_id op = futex_tracker_thread_op(st->tracker, c->tid);
	if (c->syscall != FOP_UNKNOWN)
		op = c->syscall; /* a futex2 exit names its own op */
	return futex_op_path(op);
}

/*
 * The stack an entry of thread tid, interned as stack, is counted on (the
 * lender's choice), kept for the counted_stack hook, which the loader asks
 * next.
 */
static uint32_t entry_stack(struct futex_state *st, uint32_t tid, uint32_t stack)
{
	st->counted_from = stack;
	st->counted_on = stack_lend_key(st->lender, tid, stack);
	return st->counted_on;
}

/* The counted_stack hook (collector.h): an entry counts on the stack entry_stack() chose. */
static uint32_t futex_counted_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct futex_state *st = state;
	return stack == st->counted_from ? st->counted_on : stack;
}

/* The lent_stack hook (collector.h): an entry's key counts on what its call site's copies taught. */
static uint32_t futex_lent_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct futex_state *st = state;
	return stack_lent(st->lender, stack);
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
	if (info->kind == KIND_STACK) {
		st->stack_copies++;
		stack_lend_copy(st->lender, c->tid, stack);
		return;
	}
	info->samples++;
	info->weight += c->period;
	st->counted_from = st->counted_on = UINT32_MAX; /* an exit counts on its own stack */
	if (!c->enter) {
		stack_lend_end(st->lender, c->tid);
		futex_tracker_exit(st->tracker, c);
		waits_futex_exit(st->waits, c->tid, c->time, c->ret);
		return;
	}
	uint32_t counted = entry_stack(st, c->tid, stack);
	struct futex_call entry = *c;
	entry.stack = counted;
	/*
	 * The kernel keys a futex without FUTEX_PRIVATE_FLAG in a MAP_SHARED
	 * mapping by the mapped object and offset: the waiters and wakers of
	 * every process that maps it meet on one word (a futex_waitv array
	 * holds words of their own flags: it stays the process's).
	 */
	if (!c->op.private_flag && c->op.id != FOP_SYS_WAITV && c->op.id != FOP_SYS_REQUEUE)
		entry.shared = view_shared_offset(p, c->pid, c->uaddr, &entry.object, &entry.offset);
	struct futex_word *w = futex_tracker_enter(st->tracker, &entry);
	waits_futex_enter(st->waits, c->pid, c->tid, c->time, c->op.id, c->uaddr, counted, info->weighted);
	view_add_weight(p, st->self, counted, c->pid, c->tid, 0, c->uaddr, WEIGHT_CALLS, c->period ? c->period : 1);
	if (!w->named)
		name_word(p, w);
}

static void futex_finish(void *state, const struct profile *p)
{
	struct futex_state *st = state;
	futex_tracker_finish(st->tracker);
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	uint64_t joined;
	size_t learned;
	stack_lender_stats(st->lender, &joined, &learned);
	waits_finish(st->waits);
	if (learned)
		waits_remap_stacks(st->waits, stack_lent, st->lender);
	/* keys, and the cpu samples of wakers, whose stacks may have been completed at the end of the load */
	waits_remap_stacks(st->waits, view_stack_moved, (void *)p);
	for (size_t i = 0; i < n; i++) {
		/* entries that came before their call site's first copy */
		if (learned)
			futex_word_remap_stacks(words[i], stack_lent, st->lender);
		futex_word_remap_stacks(words[i], view_stack_moved, (void *)p); /* keys completed at the end of the load */
		futex_word_sort_stacks(words[i]);
	}
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
	if (!c.enter) {
		size_t used = strlen(buf);
		futex_waits_describe_exit(st, p, c.tid, c.time, buf + used, len - used);
	}
	return true;
}

/* The marks_data hook (collector.h): a futex word of pid in [start, end) (c2c marks its cacheline). */
static bool futex_marks_data(void *state, uint32_t pid, uint64_t start, uint64_t end)
{
	const struct futex_state *st = state;
	return futex_tracker_has_word_in(st->tracker, pid, start, end);
}

/* The pending_futex_word hook (collector.h): the word of tid's futex call in progress (lock charges it). */
static bool futex_pending_word(void *state, uint32_t tid, uint64_t time, uint32_t *pid, uint64_t *uaddr)
{
	const struct futex_state *st = state;
	return futex_tracker_pending_word(st->tracker, tid, time, pid, uaddr);
}

/* The wake_pairs hook (collector.h): the wake linker's waiter and waker stacks. */
static size_t futex_wake_pairs(void *state, const struct wake_pair **pairs)
{
	struct futex_state *st = state;
	return waits_pairs(st->waits, pairs);
}

/* The wait_samples hook (collector.h): the wake linker's waits per waiter, ending and waker. */
static size_t futex_wait_samples(void *state, const struct wait_sample **samples)
{
	struct futex_state *st = state;
	return waits_samples(st->waits, samples);
}

static const struct collector_analyzer futex_analyzer = {
	.completes_cut_stacks = true, /* keys no copy was joined to (stack_completion.h) */
	.create = futex_create,
	.path_of = futex_path_of,
	.sample = futex_sample,
	.finish = futex_finish,
	.text = futex_text,
	.json = futex_json,
	.destroy = futex_destroy,
	.figures = futex_figures,
	.findings = futex_findings,
	.marks_data = futex_marks_data,
	.describe = futex_describe,
	.describe_observed = futex_waits_describe_observed,
	.pending_futex_word = futex_pending_word,
	.counted_stack = futex_counted_stack,
	.lent_stack = futex_lent_stack,
	.observe = futex_waits_observe,
	.wake_pairs = futex_wake_pairs,
	.wait_samples = futex_wait_samples,
	.record = futex_waits_record,
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
