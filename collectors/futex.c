/*
 * futex.c: the futex collector, per operation and per futex word.
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
 * to the tracker: the per-thread state machine that pairs an exit with its
 * thread's pending entry.  A pair whose two samples both have period 1 is
 * exact: its entry-to-exit time is blocking time for the wait-type ops.  A
 * pair with a weighted side, an entry without exit or an exit without entry
 * marks the word "estimated".  Words are keyed by pid and address (private
 * futexes are per process) and named once, on first sight, by the data
 * symbol or mapping that holds them.  docs/futex.md describes each figure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/collector.h"
#include "sigprof/futex.h"
#include "sigprof/json.h"
#include "sigprof/paths.h"
#include "sigprof/profile.h"
#include "sigprof/report.h"
#include "sigprof/tracepoint.h"
#include "sigprof/util.h"

/* ---- the op decoder ---- */

static const char *const op_names[FOP_COUNT] = {
	[FOP_WAIT] = "WAIT",
	[FOP_WAKE] = "WAKE",
	[FOP_FD] = "FD",
	[FOP_REQUEUE] = "REQUEUE",
	[FOP_CMP_REQUEUE] = "CMP_REQUEUE",
	[FOP_WAKE_OP] = "WAKE_OP",
	[FOP_LOCK_PI] = "LOCK_PI",
	[FOP_UNLOCK_PI] = "UNLOCK_PI",
	[FOP_TRYLOCK_PI] = "TRYLOCK_PI",
	[FOP_WAIT_BITSET] = "WAIT_BITSET",
	[FOP_WAKE_BITSET] = "WAKE_BITSET",
	[FOP_WAIT_REQUEUE_PI] = "WAIT_REQUEUE_PI",
	[FOP_CMP_REQUEUE_PI] = "CMP_REQUEUE_PI",
	[FOP_LOCK_PI2] = "LOCK_PI2",
	[FOP_SYS_WAIT] = "futex_wait",
	[FOP_SYS_WAKE] = "futex_wake",
	[FOP_SYS_REQUEUE] = "futex_requeue",
	[FOP_SYS_WAITV] = "futex_waitv",
	[FOP_UNKNOWN] = "UNKNOWN",
};

struct futex_op futex_op_decode(uint32_t op)
{
	uint32_t cmd = op & ~(FUTEX_OP_PRIVATE_FLAG | FUTEX_OP_CLOCK_REALTIME);
	return (struct futex_op){
		.id = cmd <= FOP_LOCK_PI2 ? (enum futex_op_id)cmd : FOP_UNKNOWN,
		.private_flag = op & FUTEX_OP_PRIVATE_FLAG,
		.clock_realtime = op & FUTEX_OP_CLOCK_REALTIME,
		.raw = op,
	};
}

const char *futex_op_name(enum futex_op_id id)
{
	return (unsigned)id < FOP_COUNT ? op_names[id] : "UNKNOWN";
}

const char *futex_op_format(const struct futex_op *op, char *buf, size_t len)
{
	uint32_t cmd = op->raw & ~(FUTEX_OP_PRIVATE_FLAG | FUTEX_OP_CLOCK_REALTIME);
	int n = op->id == FOP_UNKNOWN ? snprintf(buf, len, "OP_0x%x", cmd)
				      : snprintf(buf, len, "%s", futex_op_name(op->id));
	if (n >= 0 && (size_t)n < len && op->private_flag)
		n += snprintf(buf + n, len - (size_t)n, "|PRIVATE");
	if (n >= 0 && (size_t)n < len && op->clock_realtime)
		snprintf(buf + n, len - (size_t)n, "|CLOCK_REALTIME");
	return buf;
}

int futex_op_path(enum futex_op_id id)
{
	switch (id) {
	case FOP_WAIT:
	case FOP_WAIT_BITSET:
	case FOP_WAIT_REQUEUE_PI:
	case FOP_SYS_WAIT:
	case FOP_SYS_WAITV:
		return PATH_FUTEX_WAIT;
	case FOP_WAKE:
	case FOP_WAKE_BITSET:
	case FOP_WAKE_OP:
	case FOP_SYS_WAKE:
		return PATH_FUTEX_WAKE;
	case FOP_REQUEUE:
	case FOP_CMP_REQUEUE:
	case FOP_CMP_REQUEUE_PI:
	case FOP_SYS_REQUEUE:
		return PATH_FUTEX_REQUEUE;
	default:
		return PATH_FUTEX_OTHER;
	}
}

bool futex_op_blocks(enum futex_op_id id)
{
	switch (id) {
	case FOP_WAIT:
	case FOP_WAIT_BITSET:
	case FOP_WAIT_REQUEUE_PI:
	case FOP_LOCK_PI:
	case FOP_LOCK_PI2:
	case FOP_SYS_WAIT:
	case FOP_SYS_WAITV:
		return true;
	default:
		return false;
	}
}

enum futex_role futex_op_role(enum futex_op_id id)
{
	if (futex_op_blocks(id))
		return FUTEX_ROLE_WAITER;
	switch (id) {
	case FOP_WAKE:
	case FOP_WAKE_BITSET:
	case FOP_WAKE_OP:
	case FOP_REQUEUE:
	case FOP_CMP_REQUEUE:
	case FOP_CMP_REQUEUE_PI:
	case FOP_UNLOCK_PI:
	case FOP_SYS_WAKE:
	case FOP_SYS_REQUEUE:
		return FUTEX_ROLE_WAKER;
	default:
		return FUTEX_ROLE_NONE;
	}
}

/* Whether a successful op's result counts tasks woken or requeued. */
static bool op_result_is_woken(enum futex_op_id id)
{
	return futex_op_role(id) == FUTEX_ROLE_WAKER && id != FOP_UNLOCK_PI;
}

const char *futex_errno_name(int err, char *buf, size_t len)
{
	/* The kernel's restart codes never reach user space but do reach sys_exit. */
	static const char *const restart[] = { "ERESTARTSYS", "ERESTARTNOINTR", "ERESTARTNOHAND", "ENOIOCTLCMD",
					       "ERESTART_RESTARTBLOCK" };
	const char *name = NULL;
	if (err >= 512 && err <= 516)
		name = restart[err - 512];
	else if (err > 0 && err < 512)
		name = strerrorname_np(err);
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "E%d", err);
	return buf;
}

/* ---- the tracker ---- */

/* A word with its hash chain: words are keyed by (pid, address), the map by their hash. */
struct word_node {
	struct futex_word word;
	struct word_node *next;
};

struct futex_thread {
	bool pending;              /* an entry waits for its exit */
	bool seen;                 /* op and word hold the last entry */
	struct futex_op op;
	struct futex_word *word;
	uint64_t enter_time, enter_period;
	uint32_t stack;
};

struct futex_tracker {
	struct u64_map words;      /* word_key() -> struct word_node chain */
	struct futex_word **list;  /* every word, in creation order until sorted */
	size_t nwords, cap;
	bool sorted;
	struct u64_map threads;    /* tid -> struct futex_thread */
	struct futex_op_stats ops[FOP_COUNT];
	uint64_t unpaired_exits, orphan_exits;
};

struct futex_tracker *futex_tracker_new(void)
{
	return xcalloc(1, sizeof(struct futex_tracker));
}

static void free_counts_and_stacks(struct futex_word *w)
{
	free(w->errors);
	free(w->waiters);
	free(w->wakers);
	free(w->symbol);
}

void futex_tracker_free(struct futex_tracker *t)
{
	if (!t)
		return;
	size_t pos = 0;
	uint64_t key;
	void *value;
	for (size_t i = 0; i < t->nwords; i++) {
		free_counts_and_stacks(t->list[i]);
		free((struct word_node *)t->list[i]); /* the word is its node's first member */
	}
	while (u64_map_next(&t->threads, &pos, &key, &value))
		free(value);
	for (int i = 0; i < FOP_COUNT; i++) {
		free(t->ops[i].by_errno);
		duration_free(&t->ops[i].wait);
	}
	u64_map_free(&t->words);
	u64_map_free(&t->threads);
	free(t->list);
	free(t);
}

static uint64_t word_key(uint32_t pid, uint64_t uaddr)
{
	return hash_u64(uaddr ^ hash_u64(pid));
}

static struct futex_word *find_word(const struct futex_tracker *t, uint32_t pid, uint64_t uaddr)
{
	for (struct word_node *n = u64_map_get(&t->words, word_key(pid, uaddr)); n; n = n->next)
		if (n->word.pid == pid && n->word.uaddr == uaddr)
			return &n->word;
	return NULL;
}

static struct futex_word *get_word(struct futex_tracker *t, uint32_t pid, uint64_t uaddr)
{
	struct futex_word *w = find_word(t, pid, uaddr);
	if (w)
		return w;
	struct word_node *n = xcalloc(1, sizeof(*n));
	n->word.pid = pid;
	n->word.uaddr = uaddr;
	uint64_t key = word_key(pid, uaddr);
	n->next = u64_map_get(&t->words, key);
	u64_map_put(&t->words, key, n);
	GROW(t->list, t->cap, t->nwords + 1);
	t->list[t->nwords++] = &n->word;
	t->sorted = false;
	return &n->word;
}

const struct futex_word *futex_tracker_word(const struct futex_tracker *t, uint32_t pid, uint64_t uaddr)
{
	return find_word(t, pid, uaddr);
}

bool futex_tracker_has_word_in(const struct futex_tracker *t, uint32_t pid, uint64_t start, uint64_t end)
{
	for (uint64_t a = ALIGN_UP(start, 4); a < end; a += 4) {
		const struct futex_word *w = find_word(t, pid, a);
		if (w && !w->array)
			return true;
	}
	return false;
}

static struct futex_thread *get_thread(struct futex_tracker *t, uint32_t tid)
{
	struct futex_thread *th = u64_map_get(&t->threads, tid);
	if (!th) {
		th = xcalloc(1, sizeof(*th));
		u64_map_put(&t->threads, tid, th);
	}
	return th;
}

static void add_count(struct futex_count **counts, size_t *n, int64_t key, uint64_t count)
{
	for (size_t i = 0; i < *n; i++) {
		if ((*counts)[i].key == key) {
			(*counts)[i].count += count;
			return;
		}
	}
	*counts = xrealloc(*counts, (*n + 1) * sizeof(**counts));
	(*counts)[(*n)++] = (struct futex_count){ key, count };
}

static struct futex_stack *stack_entry(struct futex_stack **stacks, size_t *n, uint32_t stack)
{
	for (size_t i = 0; i < *n; i++)
		if ((*stacks)[i].stack == stack)
			return &(*stacks)[i];
	*stacks = xrealloc(*stacks, (*n + 1) * sizeof(**stacks));
	struct futex_stack *s = &(*stacks)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->stack = stack;
	return s;
}

static void wait_time_add(struct futex_wait_time *w, uint64_t ns)
{
	w->count++;
	w->total += ns;
	if (ns > w->max)
		w->max = ns;
}

static void mark_estimated(struct futex_tracker *t, struct futex_word *w, enum futex_op_id id)
{
	w->estimated = true;
	t->ops[id].estimated = true;
}

/* A pending entry that no exit will close (its exit was not recorded). */
static void drop_pending(struct futex_tracker *t, struct futex_thread *th)
{
	th->pending = false;
	mark_estimated(t, th->word, th->op.id);
	if (futex_op_blocks(th->op.id)) {
		th->word->unmeasured += th->enter_period;
		t->ops[th->op.id].unmeasured += th->enter_period;
	}
}

static void count_call(struct futex_tracker *t, struct futex_word *w, const struct futex_call *c, uint64_t n)
{
	enum futex_op_id id = c->op.id;
	struct futex_op_stats *os = &t->ops[id];
	w->calls += n;
	w->ops[id] += n;
	os->calls += n;
	if (c->op.private_flag) {
		w->private_calls += n;
		os->private_calls += n;
	}
	if (c->op.clock_realtime) {
		w->realtime_calls += n;
		os->realtime_calls += n;
	}
	if (n > 1)
		mark_estimated(t, w, id);
	enum futex_role role = futex_op_role(id);
	if (role == FUTEX_ROLE_WAITER)
		stack_entry(&w->waiters, &w->nwaiters, c->stack)->count += n;
	else if (role == FUTEX_ROLE_WAKER)
		stack_entry(&w->wakers, &w->nwakers, c->stack)->count += n;
}

struct futex_word *futex_tracker_enter(struct futex_tracker *t, const struct futex_call *c)
{
	uint64_t n = c->period ? c->period : 1;
	struct futex_word *w = get_word(t, c->pid, c->uaddr);
	if (c->op.id == FOP_SYS_WAITV || c->op.id == FOP_SYS_REQUEUE)
		w->array = true;
	count_call(t, w, c, n);
	struct futex_thread *th = get_thread(t, c->tid);
	if (th->pending)
		drop_pending(t, th);
	*th = (struct futex_thread){ .pending = true, .seen = true, .op = c->op, .word = w,
				     .enter_time = c->time, .enter_period = n, .stack = c->stack };
	return w;
}

static void count_result(struct futex_tracker *t, struct futex_word *w, enum futex_op_id id, int64_t ret,
			 uint64_t n)
{
	struct futex_op_stats *os = &t->ops[id];
	if (ret < 0 && ret >= -4095) { /* the kernel's -errno range */
		add_count(&w->errors, &w->nerrors, -ret, n);
		add_count(&os->by_errno, &os->nerrnos, -ret, n);
		os->errors += n;
	} else if (op_result_is_woken(id)) {
		w->woken += (uint64_t)ret * n;
	}
}

/* The system call an op is made with: FOP_SYS_* for futex2, FOP_UNKNOWN for futex(2). */
static enum futex_op_id syscall_of(enum futex_op_id id)
{
	return id >= FOP_SYS_WAIT && id <= FOP_SYS_WAITV ? id : FOP_UNKNOWN;
}

static void pair_exit(struct futex_tracker *t, struct futex_thread *th, const struct futex_call *c, uint64_t n)
{
	struct futex_word *w = th->word;
	enum futex_op_id id = th->op.id;
	bool exact = th->enter_period == 1 && n == 1;
	th->pending = false;
	if (!exact)
		mark_estimated(t, w, id);
	if (futex_op_blocks(id)) {
		if (exact && c->time >= th->enter_time) {
			uint64_t ns = c->time - th->enter_time;
			wait_time_add(&w->wait, ns);
			wait_time_add(&stack_entry(&w->waiters, &w->nwaiters, th->stack)->wait, ns);
			duration_add(&t->ops[id].wait, ns);
		} else {
			w->unmeasured += th->enter_period;
			t->ops[id].unmeasured += th->enter_period;
		}
	}
	count_result(t, w, id, c->ret, n);
}

void futex_tracker_exit(struct futex_tracker *t, const struct futex_call *c)
{
	uint64_t n = c->period ? c->period : 1;
	struct futex_thread *th = u64_map_get(&t->threads, c->tid);
	if (th && th->pending && syscall_of(th->op.id) != c->syscall)
		drop_pending(t, th); /* the exit of another system call: records were lost */
	if (th && th->pending) {
		pair_exit(t, th, c, n);
		return;
	}
	t->unpaired_exits += n;
	if (!th || !th->seen || syscall_of(th->op.id) != c->syscall) {
		t->orphan_exits += n;
		return;
	}
	/* Sampled out entry: charge the result to the thread's last word and op, as an estimate. */
	mark_estimated(t, th->word, th->op.id);
	count_result(t, th->word, th->op.id, c->ret, n);
}

void futex_tracker_finish(struct futex_tracker *t)
{
	size_t pos = 0;
	uint64_t tid;
	void *value;
	while (u64_map_next(&t->threads, &pos, &tid, &value)) {
		struct futex_thread *th = value;
		if (!th->pending)
			continue;
		th->pending = false;
		/*
		 * Only waits: a wake or requeue whose exit went unsampled is not
		 * a call that could still be blocked, and words keep
		 * wait_ns.count + unmeasured + unfinished = their wait-type calls.
		 */
		if (!futex_op_blocks(th->op.id))
			continue;
		th->word->unfinished += th->enter_period;
		t->ops[th->op.id].unfinished += th->enter_period;
	}
}

enum futex_op_id futex_tracker_thread_op(const struct futex_tracker *t, uint32_t tid)
{
	const struct futex_thread *th = u64_map_get(&t->threads, tid);
	return th && th->seen ? th->op.id : FOP_UNKNOWN;
}

static int compare_words(const void *a, const void *b)
{
	const struct futex_word *x = *(struct futex_word *const *)a, *y = *(struct futex_word *const *)b;
	if (x->wait.total != y->wait.total)
		return x->wait.total > y->wait.total ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->uaddr < y->uaddr ? -1 : x->uaddr > y->uaddr;
}

size_t futex_tracker_words(struct futex_tracker *t, struct futex_word *const **words)
{
	if (!t->sorted && t->nwords)
		qsort(t->list, t->nwords, sizeof(*t->list), compare_words);
	t->sorted = true;
	*words = t->list;
	return t->nwords;
}

const struct futex_op_stats *futex_tracker_op(const struct futex_tracker *t, enum futex_op_id id)
{
	return &t->ops[id];
}

uint64_t futex_tracker_unpaired_exits(const struct futex_tracker *t, uint64_t *orphans)
{
	if (orphans)
		*orphans = t->orphan_exits;
	return t->unpaired_exits;
}

static int compare_stacks(const void *a, const void *b)
{
	const struct futex_stack *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->wait.total != y->wait.total)
		return x->wait.total > y->wait.total ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

void futex_word_sort_stacks(struct futex_word *w)
{
	if (w->nwaiters)
		qsort(w->waiters, w->nwaiters, sizeof(*w->waiters), compare_stacks);
	if (w->nwakers)
		qsort(w->wakers, w->nwakers, sizeof(*w->wakers), compare_stacks);
}

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

enum event_kind { KIND_UNKNOWN = 0, KIND_OTHER, KIND_ENTER, KIND_EXIT };

/* What one of the recording's events is to this collector, and what its samples added up to. */
struct event_info {
	enum event_kind kind;
	enum futex_op_id syscall; /* FOP_SYS_* for futex2 calls, FOP_UNKNOWN for futex(2) */
	uint64_t samples, weight;
};

struct futex_state {
	struct futex_tracker *tracker;
	struct event_info *events; /* by sp_event index */
	size_t nevents;
	uint64_t undecoded;        /* samples whose raw fields could not be read */
	/* the last sample path_of() decoded, reused by sample(): its record's raw data identifies it */
	const void *cached_raw;
	bool cached_ok;
	struct futex_call call;
};

static enum futex_op_id syscall_named(const char *name)
{
	if (strcmp(name, "futex") == 0)
		return FOP_UNKNOWN;
	for (int id = FOP_SYS_WAIT; id <= FOP_SYS_WAITV; id++)
		if (strcmp(name, futex_op_name((enum futex_op_id)id)) == 0)
			return (enum futex_op_id)id;
	return FOP_COUNT;
}

static struct event_info *event_info_of(struct futex_state *st, const struct sp_event *ev)
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
	const struct event_info *info = event_info_of(st, s->event);
	if (info->kind != KIND_ENTER && info->kind != KIND_EXIT)
		return false;
	const struct tep_event *ev = tracepoint_of(&p->tracepoints, s);
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

static void *futex_create(struct profile *p)
{
	(void)p;
	struct futex_state *st = xcalloc(1, sizeof(*st));
	st->tracker = futex_tracker_new();
	return st;
}

static void futex_destroy(void *state)
{
	struct futex_state *st = state;
	futex_tracker_free(st->tracker);
	free(st->events);
	free(st);
}

static int futex_path_of(void *state, struct profile *p, const struct sp_sample *s)
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

static void name_word(struct profile *p, struct futex_word *w)
{
	char buf[512];
	proc_table_data_name(p->procs, w->pid, w->uaddr, buf, sizeof(buf), &w->dso);
	w->symbol = xstrdup(buf);
	w->named = true;
}

static void futex_sample(void *state, struct profile *p, const struct sp_sample *s, uint32_t stack)
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
	if (!w->named)
		name_word(p, w);
}

static void futex_finish(void *state, struct profile *p)
{
	(void)p;
	struct futex_state *st = state;
	futex_tracker_finish(st->tracker);
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	for (size_t i = 0; i < n; i++)
		futex_word_sort_stacks(words[i]);
}

/* ---- what the recording was: mode and exact totals ---- */

struct futex_summary {
	enum futex_mode mode;
	uint64_t bound;          /* sample mode's sample_freq */
	bool any_event;
	bool exact;              /* every call was recorded with weight 1 */
	uint64_t hits;           /* exact hits of all the futex tracepoints (0: the workload made no futex call) */
};

static struct futex_summary summarize(struct futex_state *st, const struct profile *p)
{
	struct futex_summary sum = { .mode = FUTEX_TRACE, .exact = true };
	for (size_t i = 0; i < p->events.count; i++) {
		const struct sp_event *ev = &p->events.events[i];
		if (strcmp(ev->collector, "futex") != 0 || ev->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		const struct event_info *info = event_info_of(st, ev);
		sum.any_event = true;
		if (ev->attr.freq) {
			sum.mode = FUTEX_SAMPLE;
			sum.bound = ev->attr.sample_freq;
		} else if (ev->attr.sample_period == 0) {
			sum.mode = FUTEX_COUNT;
		}
		if (!ev->has_totals || info->samples != ev->total_value || info->weight != ev->total_value)
			sum.exact = false;
		sum.hits += ev->has_totals ? ev->total_value : info->samples;
	}
	if (sum.mode == FUTEX_COUNT || !sum.any_event)
		sum.exact = false;
	return sum;
}

static const char *mode_name(enum futex_mode mode)
{
	return mode == FUTEX_SAMPLE ? "sample" : mode == FUTEX_COUNT ? "count" : "trace";
}

/* The exact total of an enter tracepoint, by the op it stands for (count mode's futex_ops). */
static bool enter_total(struct futex_state *st, const struct sp_event *ev, enum futex_op_id *syscall,
			uint64_t *total)
{
	const struct event_info *info = event_info_of(st, ev);
	if (strcmp(ev->collector, "futex") != 0 || info->kind != KIND_ENTER || !ev->has_totals)
		return false;
	*syscall = info->syscall;
	*total = ev->total_value;
	return true;
}

/*
 * An op's calls: a futex2 system call is one op, so its tracepoint's exact
 * count is the op's; the futex(2) ops are split by the records (weighted).
 */
static uint64_t op_calls(struct futex_state *st, const struct profile *p, enum futex_op_id id, bool *estimated)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	*estimated = os->estimated;
	if (syscall_of(id) == FOP_UNKNOWN)
		return os->calls;
	for (size_t i = 0; i < p->events.count; i++) {
		enum futex_op_id syscall;
		uint64_t total;
		if (enter_total(st, &p->events.events[i], &syscall, &total) && syscall == id) {
			*estimated = false;
			return total;
		}
	}
	return os->calls;
}

/* ---- text ---- */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void text_mode_line(const struct futex_summary *sum, FILE *out)
{
	if (sum->mode == FUTEX_COUNT)
		fprintf(out, "  mode count: exact totals per system call, no per-call records\n");
	else if (sum->mode == FUTEX_SAMPLE)
		fprintf(out, "  mode sample: every call up to %llu calls/s per tracepoint and CPU, weighted samples above; %s\n",
			(unsigned long long)sum->bound,
			sum->exact ? "every call was recorded (exact)" : "figures marked ~ are estimated");
	else
		fprintf(out, "  mode trace: every call recorded; %s\n",
			sum->exact ? "exact" : "records were lost: figures marked ~ are estimated");
}

static void text_syscall_totals(struct futex_state *st, const struct profile *p, enum futex_mode mode, FILE *out)
{
	for (size_t i = 0; i < p->events.count; i++) {
		const struct sp_event *ev = &p->events.events[i];
		enum futex_op_id syscall;
		uint64_t total;
		if (!enter_total(st, ev, &syscall, &total) || (!total && syscall != FOP_UNKNOWN))
			continue; /* futex2 calls the workload did not make */
		fprintf(out, "  %-14s %12llu calls (exact count)", syscall == FOP_UNKNOWN ? "futex" : futex_op_name(syscall),
			(unsigned long long)total);
		if (mode != FUTEX_COUNT)
			fprintf(out, ", %llu entries recorded", (unsigned long long)st->events[ev->index].samples);
		fprintf(out, "\n");
	}
}

static void text_errors(const struct futex_count *errs, size_t n, FILE *out)
{
	char name[32];
	if (!n)
		fprintf(out, "-");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s %llu", i ? "," : "", futex_errno_name((int)errs[i].key, name, sizeof(name)),
			(unsigned long long)errs[i].count);
}

static void text_ops(struct futex_state *st, const struct profile *p, FILE *out)
{
	fprintf(out, "\n  %-16s %12s %10s %10s %10s %10s %12s %9s %9s  %s\n", "op", "calls", "private", "errors", "waits",
		"unmeasured", "wait tot ms", "p99 ms", "max ms", "errors by name");
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (!os->calls && !os->errors)
			continue;
		bool estimated;
		uint64_t calls = op_calls(st, p, (enum futex_op_id)id, &estimated);
		fprintf(out, "  %-16s %s%11llu %10llu %10llu %10llu %10llu %12.3f %9.3f %9.3f  ",
			futex_op_name((enum futex_op_id)id), estimated ? "~" : " ", (unsigned long long)calls,
			(unsigned long long)os->private_calls, (unsigned long long)os->errors,
			(unsigned long long)os->wait.count, (unsigned long long)os->unmeasured, ms(os->wait.total),
			ms(duration_quantile(&os->wait, 0.99)), ms(os->wait.max));
		text_errors(os->by_errno, os->nerrnos, out);
		fprintf(out, "\n");
	}
}

static void text_word_ops(const struct futex_word *w, FILE *out)
{
	int shown = 0;
	for (int id = 0; id < FOP_COUNT; id++)
		if (w->ops[id])
			fprintf(out, "%s%s %llu", shown++ ? "," : "", futex_op_name((enum futex_op_id)id),
				(unsigned long long)w->ops[id]);
}

static void text_words(struct futex_state *st, const struct report_options *o, FILE *out)
{
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	fprintf(out, "\nTop futex words (by blocking time, then calls; %zu word%s; ~ estimated)\n", n, n == 1 ? "" : "s");
	fprintf(out, "  %-28s %-14s %7s %11s %8s %11s %9s  %s\n", "word", "address", "pid", "calls", "waits",
		"wait tot ms", "max ms", "ops; errors");
	for (size_t i = 0; i < n && i < o->top_functions; i++) {
		const struct futex_word *w = words[i];
		fprintf(out, "  %-28s %-14llx %7u %s%10llu %8llu %11.3f %9.3f  ", w->symbol, (unsigned long long)w->uaddr,
			w->pid, w->estimated ? "~" : " ", (unsigned long long)w->calls, (unsigned long long)w->wait.count,
			ms(w->wait.total), ms(w->wait.max));
		text_word_ops(w, out);
		fprintf(out, "; ");
		text_errors(w->errors, w->nerrors, out);
		fprintf(out, "\n");
	}
}

static void text_stack(const struct profile *p, const struct futex_stack *fs, const char *what,
		       const struct report_options *o, FILE *out)
{
	fprintf(out, "    top %s stack: %llu calls", what, (unsigned long long)fs->count);
	if (fs->wait.count)
		fprintf(out, ", %llu waits measured, %.3f ms blocked", (unsigned long long)fs->wait.count,
			ms(fs->wait.total));
	fprintf(out, "\n");
	report_text_stack(p, fs->stack, o->max_frames, out);
}

static void text_busiest(struct futex_state *st, const struct profile *p, const struct report_options *o, FILE *out)
{
	struct futex_word *const *words;
	if (!futex_tracker_words(st->tracker, &words))
		return;
	const struct futex_word *w = words[0];
	fprintf(out, "\n  busiest word %s (pid %u, 0x%llx)\n", w->symbol, w->pid, (unsigned long long)w->uaddr);
	if (w->nwaiters)
		text_stack(p, &w->waiters[0], "waiter", o, out);
	if (w->nwakers)
		text_stack(p, &w->wakers[0], "waker", o, out);
}

static void futex_text(void *state, const struct profile *p, const struct report_options *o, FILE *out)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	if (!sum.any_event)
		return;
	if (!sum.hits) {
		fprintf(out, "\nFutex operations: none (the workload made no futex system call)\n");
		return;
	}
	fprintf(out, "\nFutex operations\n");
	text_mode_line(&sum, out);
	text_syscall_totals(st, p, sum.mode, out);
	if (sum.mode == FUTEX_COUNT)
		return;
	uint64_t orphans, unpaired = futex_tracker_unpaired_exits(st->tracker, &orphans);
	if (unpaired || st->undecoded)
		fprintf(out, "  exits without their entry: %llu (%llu of no known op); undecoded samples: %llu\n",
			(unsigned long long)unpaired, (unsigned long long)orphans, (unsigned long long)st->undecoded);
	text_ops(st, p, out);
	text_words(st, o, out);
	text_busiest(st, p, o, out);
}

/* ---- JSON ---- */

static void json_wait(struct json_writer *w, const char *key, const struct futex_wait_time *t)
{
	json_object_begin(w, key);
	json_u64(w, "count", t->count);
	json_u64(w, "total", t->total);
	json_u64(w, "max", t->max);
	json_end(w);
}

static void json_errors(struct json_writer *w, const struct futex_count *errs, size_t n)
{
	char name[32];
	json_object_begin(w, "errors");
	for (size_t i = 0; i < n; i++)
		json_u64(w, futex_errno_name((int)errs[i].key, name, sizeof(name)), errs[i].count);
	json_end(w);
}

static void json_stacks(struct json_writer *w, const struct profile *p, const char *key,
			const struct futex_stack *stacks, size_t n, size_t limit, bool with_wait)
{
	json_array_begin(w, key);
	for (size_t i = 0; i < n && i < limit; i++) {
		json_object_begin(w, NULL);
		json_u64(w, "count", stacks[i].count);
		if (with_wait)
			json_wait(w, "wait_ns", &stacks[i].wait);
		report_json_stack_frames(w, p, stacks[i].stack);
		json_end(w);
	}
	json_end(w);
}

static void json_word(struct json_writer *w, const struct profile *p, const struct futex_word *fw, size_t limit)
{
	char buf[32];
	json_object_begin(w, NULL);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)fw->uaddr);
	json_string(w, "uaddr", buf);
	json_string(w, "symbol", fw->symbol);
	json_string(w, "dso", fw->dso);
	json_u64(w, "pid", fw->pid);
	json_bool(w, "waitv_array", fw->array);
	json_u64(w, "calls", fw->calls);
	json_object_begin(w, "ops");
	for (int id = 0; id < FOP_COUNT; id++)
		if (fw->ops[id])
			json_u64(w, futex_op_name((enum futex_op_id)id), fw->ops[id]);
	json_end(w);
	json_object_begin(w, "flags");
	json_u64(w, "PRIVATE", fw->private_calls);
	json_u64(w, "CLOCK_REALTIME", fw->realtime_calls);
	json_end(w);
	json_wait(w, "wait_ns", &fw->wait);
	json_u64(w, "unmeasured_waits", fw->unmeasured);
	json_u64(w, "unfinished", fw->unfinished);
	json_u64(w, "woken", fw->woken);
	json_errors(w, fw->errors, fw->nerrors);
	json_bool(w, "estimated", fw->estimated);
	json_stacks(w, p, "waiters", fw->waiters, fw->nwaiters, limit, true);
	json_stacks(w, p, "wakers", fw->wakers, fw->nwakers, limit, false);
	json_end(w);
}

static void json_futex_ops(struct futex_state *st, const struct profile *p, const struct futex_summary *sum,
			   struct json_writer *w)
{
	json_object_begin(w, "futex_ops");
	if (sum->mode == FUTEX_COUNT) {
		for (size_t i = 0; i < p->events.count; i++) {
			enum futex_op_id syscall;
			uint64_t total;
			if (enter_total(st, &p->events.events[i], &syscall, &total))
				json_u64(w, syscall == FOP_UNKNOWN ? "futex" : futex_op_name(syscall), total);
		}
	} else {
		for (int id = 0; id < FOP_COUNT; id++) {
			bool estimated;
			if (futex_tracker_op(st->tracker, (enum futex_op_id)id)->calls)
				json_u64(w, futex_op_name((enum futex_op_id)id),
					 op_calls(st, p, (enum futex_op_id)id, &estimated));
		}
	}
	json_end(w);
}

static void json_op_detail(struct json_writer *w, struct futex_state *st, const struct profile *p,
			   enum futex_op_id id)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	bool estimated;
	json_object_begin(w, NULL);
	json_string(w, "op", futex_op_name(id));
	json_u64(w, "calls", op_calls(st, p, id, &estimated));
	json_bool(w, "calls_estimated", estimated);
	json_u64(w, "private", os->private_calls);
	json_u64(w, "clock_realtime", os->realtime_calls);
	json_object_begin(w, "wait_ns");
	json_u64(w, "count", os->wait.count);
	json_u64(w, "total", os->wait.total);
	json_u64(w, "max", os->wait.max);
	json_u64(w, "p50", duration_quantile(&os->wait, 0.5));
	json_u64(w, "p99", duration_quantile(&os->wait, 0.99));
	json_end(w);
	json_u64(w, "unmeasured_waits", os->unmeasured);
	json_u64(w, "unfinished", os->unfinished);
	json_u64(w, "error_count", os->errors);
	json_errors(w, os->by_errno, os->nerrnos);
	json_bool(w, "estimated", os->estimated);
	json_end(w);
}

static void json_summary(struct futex_state *st, const struct profile *p, const struct futex_summary *sum,
			 struct json_writer *w)
{
	json_object_begin(w, "futex_summary");
	json_string(w, "mode", mode_name(sum->mode));
	if (sum->mode == FUTEX_SAMPLE)
		json_u64(w, "bound_hz", sum->bound);
	else
		json_null(w, "bound_hz");
	json_bool(w, "exact", sum->exact);
	json_bool(w, "futex_ops_exact", sum->exact || sum->mode == FUTEX_COUNT);
	json_object_begin(w, "syscalls");
	for (size_t i = 0; i < p->events.count; i++) {
		const struct sp_event *ev = &p->events.events[i];
		if (strcmp(ev->collector, "futex") != 0 || ev->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		const struct event_info *info = event_info_of(st, ev);
		json_object_begin(w, strchr(ev->name, ':') ? strchr(ev->name, ':') + 1 : ev->name);
		if (ev->has_totals)
			json_u64(w, "total", ev->total_value);
		else
			json_null(w, "total");
		json_u64(w, "samples", info->samples);
		json_u64(w, "weight", info->weight);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "ops");
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (os->calls || os->errors)
			json_op_detail(w, st, p, (enum futex_op_id)id);
	}
	json_end(w);
	uint64_t orphans, unpaired = futex_tracker_unpaired_exits(st->tracker, &orphans);
	json_u64(w, "unpaired_exits", unpaired);
	json_u64(w, "orphan_exits", orphans);
	json_u64(w, "undecoded_samples", st->undecoded);
	json_end(w);
}

static void futex_json(void *state, const struct profile *p, const struct report_options *o, struct json_writer *w)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	size_t limit = o->stacks_limit_given ? o->stacks_per_path : 5;
	json_futex_ops(st, p, &sum, w);
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	json_array_begin(w, "futexes");
	for (size_t i = 0; i < n; i++)
		json_word(w, p, words[i], limit);
	json_end(w);
	json_summary(st, p, &sum, w);
}

extern const struct collector futex_collector;

bool futex_profile_has_word(const struct profile *p, uint32_t pid, uint64_t start, uint64_t end)
{
	int c = profile_collector(p, "futex");
	if (c < 0 || p->collectors[c].impl != &futex_collector || !p->collectors[c].state)
		return false;
	const struct futex_state *st = p->collectors[c].state;
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
};

const struct collector futex_collector = {
	.name = "futex",
	.description = "futex system calls: per op and per futex word, calls, blocking time, errors, waiter and waker stacks",
	.add_events = futex_add_events,
	.unit = "calls",
	.analyzer = &futex_analyzer,
};
