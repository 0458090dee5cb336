/*
 * futex_tracker.c: the futex collector's tracker (include/sigprof/collectors/futex_tracker.h),
 * the per-thread state machine of the report side.
 *
 * It is fed the decoded entry and exit samples of every futex system call
 * in time order and pairs an exit with its thread's pending entry.  A pair
 * whose two samples both have period 1 is exact: its entry-to-exit time is
 * blocking time for the wait-type ops.  A pair with a weighted side, an
 * entry without exit or an exit without entry marks the word "estimated".
 * Words are keyed as the kernel keys them: a private futex by pid and
 * address, a shared one by the object and offset the caller found for it
 * (a MAP_SHARED mapping's file or shared memory), whichever processes use
 * it; the caller names them on first sight.  It knows nothing of perf records,
 * so the tests drive it with synthetic sequences.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/collectors/futex_tracker.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

#include "futex_internal.h"

/* ---- the tracker ---- */

/*
 * A word is found by the key the kernel gives it: a private word by its
 * process and address, a shared one (no FUTEX_PRIVATE_FLAG, in a MAP_SHARED
 * mapping) by its object and offset.  Both maps hold hash chains of keys;
 * each process's address of a shared word is also an alias, so the word is
 * found by (pid, address) from any process that used it.
 */
struct word_node {
	uint64_t a, b;             /* (pid, address) or (object, offset) */
	struct futex_word *word;
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
	struct u64_map private_words; /* word_key(pid, address) -> struct word_node chain */
	struct u64_map shared_words;  /* word_key(object, offset) -> chain */
	struct u64_map aliases;       /* word_key(pid, address) -> chain: every process's address of a shared word */
	struct futex_word **list;  /* every word, in creation order until sorted */
	size_t nwords, cap;
	bool sorted;
	struct u64_map threads;    /* tid -> struct futex_thread */
	struct futex_op_stats ops[FOP_COUNT];
	uint64_t unpaired_exits, orphan_exits;
	futex_wait_hook wait_hook;
	void *wait_hook_ctx;
};

void futex_tracker_set_wait_hook(struct futex_tracker *t, futex_wait_hook hook, void *ctx)
{
	t->wait_hook = hook;
	t->wait_hook_ctx = ctx;
}

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
	free(w->pids);
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
		free(t->list[i]);
	}
	struct u64_map *maps[] = { &t->private_words, &t->shared_words, &t->aliases };
	for (size_t m = 0; m < ARRAY_SIZE(maps); m++) {
		pos = 0;
		while (u64_map_next(maps[m], &pos, &key, &value)) {
			for (struct word_node *n = value, *next; n; n = next) {
				next = n->next;
				free(n);
			}
		}
		u64_map_free(maps[m]);
	}
	pos = 0;
	while (u64_map_next(&t->threads, &pos, &key, &value))
		free(value);
	for (int i = 0; i < FOP_COUNT; i++) {
		free(t->ops[i].by_errno);
		duration_free(&t->ops[i].wait);
	}
	u64_map_free(&t->threads);
	free(t->list);
	free(t);
}

static uint64_t word_key(uint64_t a, uint64_t b)
{
	return hash_u64(b ^ hash_u64(a));
}

static struct word_node *find_node(const struct u64_map *map, uint64_t a, uint64_t b)
{
	for (struct word_node *n = u64_map_get(map, word_key(a, b)); n; n = n->next)
		if (n->a == a && n->b == b)
			return n;
	return NULL;
}

static void put_node(struct u64_map *map, uint64_t a, uint64_t b, struct futex_word *w)
{
	struct word_node *n = find_node(map, a, b);
	if (n) {
		n->word = w; /* an alias whose address now holds another shared word */
		return;
	}
	n = xcalloc(1, sizeof(*n));
	*n = (struct word_node){ .a = a, .b = b, .word = w };
	uint64_t key = word_key(a, b);
	n->next = u64_map_get(map, key);
	u64_map_put(map, key, n);
}

static struct futex_word *find_word(const struct futex_tracker *t, uint32_t pid, uint64_t uaddr)
{
	const struct word_node *n = find_node(&t->private_words, pid, uaddr);
	if (!n)
		n = find_node(&t->aliases, pid, uaddr);
	return n ? n->word : NULL;
}

static struct futex_word *new_word(struct futex_tracker *t, uint32_t pid, uint64_t uaddr)
{
	struct futex_word *w = xcalloc(1, sizeof(*w));
	w->pid = pid;
	w->uaddr = uaddr;
	GROW(t->list, t->cap, t->nwords + 1);
	t->list[t->nwords++] = w;
	t->sorted = false;
	return w;
}

static void add_process(struct futex_word *w, uint32_t pid)
{
	for (size_t i = 0; i < w->npids; i++)
		if (w->pids[i] == pid)
			return;
	w->pids = xrealloc(w->pids, (w->npids + 1) * sizeof(*w->pids));
	w->pids[w->npids++] = pid;
}

/* The word of a call: by (object, offset) when shared, else by (pid, address). */
static struct futex_word *get_word(struct futex_tracker *t, const struct futex_call *c)
{
	if (!c->shared) {
		struct word_node *n = find_node(&t->private_words, c->pid, c->uaddr);
		if (n)
			return n->word;
		struct futex_word *w = new_word(t, c->pid, c->uaddr);
		put_node(&t->private_words, c->pid, c->uaddr, w);
		return w;
	}
	struct word_node *n = find_node(&t->shared_words, c->object, c->offset);
	struct futex_word *w = n ? n->word : NULL;
	if (!w) {
		w = new_word(t, c->pid, c->uaddr);
		w->shared = true;
		w->object = c->object;
		w->offset = c->offset;
		put_node(&t->shared_words, c->object, c->offset, w);
	}
	if (!w->npids || w->pids[w->npids - 1] != c->pid) {
		add_process(w, c->pid);
		put_node(&t->aliases, c->pid, c->uaddr, w);
	}
	return w;
}

const struct futex_word *futex_tracker_word(const struct futex_tracker *t, uint32_t pid, uint64_t uaddr)
{
	return find_word(t, pid, uaddr);
}

const struct futex_word *futex_tracker_shared_word(const struct futex_tracker *t, uint64_t object, uint64_t offset)
{
	const struct word_node *n = find_node(&t->shared_words, object, offset);
	return n ? n->word : NULL;
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
	struct futex_word *w = get_word(t, c);
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

/* Whether a successful op's result counts tasks woken or requeued. */
static bool op_result_is_woken(enum futex_op_id id)
{
	return futex_op_role(id) == FUTEX_ROLE_WAKER && id != FOP_UNLOCK_PI;
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
			slowest_event_note(&t->ops[id].slowest_wait, th->enter_time, c->time, c->pid, c->tid);
			if (t->wait_hook)
				t->wait_hook(t->wait_hook_ctx, w, c->pid, c->tid, th->stack, ns);
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
	if (th && th->pending && futex_op_syscall(th->op.id) != c->syscall)
		drop_pending(t, th); /* the exit of another system call: records were lost */
	if (th && th->pending) {
		pair_exit(t, th, c, n);
		return;
	}
	t->unpaired_exits += n;
	if (!th || !th->seen || futex_op_syscall(th->op.id) != c->syscall) {
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

bool futex_tracker_pending_word(const struct futex_tracker *t, uint32_t tid, uint64_t time, uint32_t *pid,
				uint64_t *uaddr)
{
	const struct futex_thread *th = u64_map_get(&t->threads, tid);
	/*
	 * A weighted entry (sampled above the bound) is no evidence of the call
	 * in progress: the exit of its call may not have been recorded either,
	 * so it may still look pending during the thread's later calls on
	 * other words.  Only an entry recorded one by one is.
	 */
	if (!th || !th->pending || th->enter_time > time || !th->word || th->word->array || th->enter_period > 1)
		return false;
	*pid = th->word->pid;
	*uaddr = th->word->uaddr;
	return true;
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
		sort_items(t->list, t->nwords, sizeof(*t->list), compare_words);
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
		sort_items(w->waiters, w->nwaiters, sizeof(*w->waiters), compare_stacks);
	if (w->nwakers)
		sort_items(w->wakers, w->nwakers, sizeof(*w->wakers), compare_stacks);
}

static size_t remap_list(struct futex_stack *list, size_t n, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = remap(ctx, list[i].stack);
		size_t k = 0;
		while (k < kept && list[k].stack != id)
			k++;
		if (k == kept) {
			list[kept] = list[i];
			list[kept++].stack = id;
			continue;
		}
		list[k].count += list[i].count;
		list[k].wait.count += list[i].wait.count;
		list[k].wait.total += list[i].wait.total;
		if (list[i].wait.max > list[k].wait.max)
			list[k].wait.max = list[i].wait.max;
	}
	return kept;
}

void futex_word_remap_stacks(struct futex_word *w, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	w->nwaiters = remap_list(w->waiters, w->nwaiters, remap, ctx);
	w->nwakers = remap_list(w->wakers, w->nwakers, remap, ctx);
}
