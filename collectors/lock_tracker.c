/*
 * lock_tracker.c: the lock collector's state machine (include/sigprof/collectors/lock.h).
 *
 * Per thread: a small stack of pending begins (address, time, weight, the
 * lock and stack it charges).  An end searches it from the innermost entry
 * for its address; entries above the match lost their ends and are counted
 * unmatched.  Per lock: figures keyed by address in a u64_map, with their
 * stacks (a map from stack id to a row) and futex words (a short list: a
 * bucket lock serves the few words that hash to it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/collectors/lock.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

static const struct lock_kind {
	uint32_t flags;
	const char *name;
} lock_kinds[] = {
	{ LOCK_F_SPIN, "spin" },
	{ LOCK_F_SPIN | LOCK_F_READ, "rwlock:R" },
	{ LOCK_F_SPIN | LOCK_F_WRITE, "rwlock:W" },
	{ LOCK_F_READ, "rwsem:R" },
	{ LOCK_F_WRITE, "rwsem:W" },
	{ LOCK_F_RT, "rtmutex" },
	{ LOCK_F_RT | LOCK_F_READ, "rwlock-rt:R" },
	{ LOCK_F_RT | LOCK_F_WRITE, "rwlock-rt:W" },
	{ LOCK_F_PERCPU | LOCK_F_READ, "percpu-rwsem:R" },
	{ LOCK_F_PERCPU | LOCK_F_WRITE, "percpu-rwsem:W" },
	{ LOCK_F_MUTEX, "mutex" },
	{ LOCK_F_MUTEX | LOCK_F_SPIN, "mutex-spin" },
};

const char *lock_kind_name(uint32_t flags, char *buf, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(lock_kinds); i++)
		if (lock_kinds[i].flags == flags)
			return lock_kinds[i].name;
	snprintf(buf, len, "flags=0x%x", flags);
	return buf;
}

struct pending {
	uint64_t addr, time, weight;
	struct lock_figures *lock;
	size_t stack_row;             /* index into lock->stacks, or SIZE_MAX */
	size_t word_row;              /* index into lock->words, or SIZE_MAX */
	int path;
};

struct lock_thread {
	struct pending pending[LOCK_MAX_NESTING];
	unsigned depth;
};

struct lock_tracker {
	struct u64_map locks;           /* addr -> struct lock_figures */
	struct u64_map threads;         /* tid -> struct lock_thread */
	struct lock_figures **sorted;   /* lock_tracker_locks() */
	size_t nsorted;
	uint64_t orphan_ends;
	uint64_t estimated;
	uint64_t path_wait[PATH_COUNT], path_contentions[PATH_COUNT];
};

struct lock_tracker *lock_tracker_new(void)
{
	return xcalloc(1, sizeof(struct lock_tracker));
}

static void lock_free(void *value)
{
	struct lock_figures *l = value;
	duration_free(&l->wait);
	free(l->stacks);
	for (size_t i = 0; i < l->nwords; i++)
		free(l->words[i].symbol);
	free(l->words);
	u64_map_free(&l->stack_index);
	free(l->name);
	free(l->key);
	free(l);
}

void lock_tracker_free(struct lock_tracker *t)
{
	if (!t)
		return;
	u64_map_free_values(&t->locks, lock_free);
	u64_map_free_values(&t->threads, free);
	free(t->sorted);
	free(t);
}

static struct lock_figures *lock_of(struct lock_tracker *t, uint64_t addr, uint32_t flags)
{
	struct lock_figures *l = u64_map_get(&t->locks, addr);
	if (!l) {
		l = xcalloc(1, sizeof(*l));
		l->addr = addr;
		l->flags = flags;
		u64_map_put(&t->locks, addr, l);
		free(t->sorted); /* a new lock: the sorted view is stale */
		t->sorted = NULL;
		t->nsorted = 0;
	} else if (l->flags != flags) {
		l->mixed_flags = true;
	}
	l->flags_seen |= flags;
	return l;
}

static size_t stack_row(struct lock_figures *l, uint32_t stack)
{
	if (stack == LOCK_NO_STACK)
		return SIZE_MAX;
	uintptr_t idx = (uintptr_t)u64_map_get(&l->stack_index, stack);
	if (idx)
		return idx - 1;
	GROW(l->stacks, l->stacks_cap, l->nstacks + 1);
	l->stacks[l->nstacks] = (struct lock_stack){ .stack = stack };
	u64_map_put(&l->stack_index, stack, (void *)(uintptr_t)(l->nstacks + 1));
	return l->nstacks++;
}

static struct lock_futex_word *word_of(struct lock_figures *l, uint32_t pid, uint64_t uaddr)
{
	for (size_t i = 0; i < l->nwords; i++)
		if (l->words[i].uaddr == uaddr && l->words[i].pid == pid)
			return &l->words[i];
	GROW(l->words, l->words_cap, l->nwords + 1);
	l->words[l->nwords] = (struct lock_futex_word){ .pid = pid, .uaddr = uaddr };
	return &l->words[l->nwords++];
}

static struct lock_thread *thread_of(struct lock_tracker *t, uint32_t tid, bool create)
{
	struct lock_thread *th = u64_map_get(&t->threads, tid);
	if (!th && create) {
		th = xcalloc(1, sizeof(*th));
		u64_map_put(&t->threads, tid, th);
	}
	return th;
}

static void pending_unmatched(struct pending *p)
{
	p->lock->unmatched += p->weight;
}

/* Drop the pending entries from index from up: their ends were lost. */
static void thread_truncate(struct lock_thread *th, unsigned from)
{
	for (unsigned i = from; i < th->depth; i++)
		pending_unmatched(&th->pending[i]);
	th->depth = from;
}

/*
 * A begin of a lock its thread already waits for, with no end between:
 * the kernel fires contention_begin twice for one wait when a mutex (or
 * rtmutex) stops spinning on its owner and goes to sleep.  One contention,
 * measured from its first begin (an end lost between two waits of one
 * lock, possible only when records were lost, looks the same).
 */
static struct lock_figures *on_rebegin(struct lock_tracker *t, struct lock_thread *th, unsigned i,
				       const struct lock_event *e)
{
	thread_truncate(th, i + 1); /* begins nested inside it lost their ends */
	struct lock_figures *l = lock_of(t, e->addr, e->flags);
	l->rebegins += e->weight ? e->weight : 1;
	return l;
}

/* A spinlock (or rwlock) fires one begin per wait; a mutex, rtmutex or rwsem may fire several. */
static bool one_begin_per_wait(uint32_t flags)
{
	return (flags & LOCK_F_SPIN) && !(flags & (LOCK_F_MUTEX | LOCK_F_RT));
}

static struct lock_figures *on_begin(struct lock_tracker *t, const struct lock_event *e, struct lock_futex_word **wordp)
{
	struct lock_thread *th = e->weighted ? NULL : thread_of(t, e->tid, true);
	for (unsigned i = 0; th && i < th->depth; i++) {
		if (th->pending[i].addr != e->addr)
			continue;
		if (!one_begin_per_wait(e->flags))
			return on_rebegin(t, th, i, e);
		thread_truncate(th, i); /* a spinlock's begin whose end was not recorded, and those inside it */
		break;
	}
	uint64_t weight = e->weight ? e->weight : 1;
	int path = e->path >= 0 && e->path < PATH_COUNT ? e->path : PATH_OTHER;
	struct lock_figures *l = lock_of(t, e->addr, e->flags);
	uint64_t estimated = e->weighted ? weight : 0;
	l->contentions += weight;
	l->recorded++;
	l->estimated += estimated;
	l->weighted_samples += e->weighted;
	t->estimated += estimated;
	l->path_contentions[path] += weight;
	t->path_contentions[path] += weight;
	size_t row = stack_row(l, e->stack);
	if (row != SIZE_MAX) {
		l->stacks[row].contentions += weight;
		l->stacks[row].estimated += estimated;
	}
	struct lock_futex_word *w = NULL;
	size_t word_row = SIZE_MAX;
	if (e->in_futex) {
		w = word_of(l, e->futex_pid, e->futex_uaddr);
		w->contentions += weight;
		w->estimated += estimated;
		word_row = (size_t)(w - l->words);
	}
	if (wordp)
		*wordp = w;
	if (!th)
		return l; /* weighted: never pending, never measured */
	if (th->depth == LOCK_MAX_NESTING) {
		l->unmatched += weight;
		return l;
	}
	th->pending[th->depth++] = (struct pending){ .addr = e->addr, .time = e->time, .weight = weight, .lock = l,
						     .stack_row = row, .word_row = word_row, .path = path };
	return l;
}

static void on_end(struct lock_tracker *t, const struct lock_event *e)
{
	struct lock_thread *th = thread_of(t, e->tid, false);
	unsigned i = th ? th->depth : 0;
	while (i > 0 && th->pending[i - 1].addr != e->addr)
		i--;
	if (i == 0) {
		if (!e->weighted)
			t->orphan_ends++; /* a weighted end's begin was sampled out or weighted: expected */
		return;
	}
	struct pending p = th->pending[i - 1];
	thread_truncate(th, i); /* inner begins whose ends were lost */
	th->depth = i - 1;
	struct lock_figures *l = p.lock;
	if (e->weighted) {
		l->unmeasured += p.weight; /* maybe its end, maybe a later one's: not paired */
		return;
	}
	if (e->ret != 0)
		l->failed += p.weight;
	uint64_t wait = e->time > p.time ? e->time - p.time : 0;
	/* A weighted begin stands for weight contentions: each is counted with this one's wait. */
	for (uint64_t k = 0; k < p.weight; k++)
		duration_add(&l->wait, wait);
	uint64_t total = wait * p.weight;
	l->path_wait[p.path] += total;
	t->path_wait[p.path] += total;
	if (p.stack_row != SIZE_MAX)
		l->stacks[p.stack_row].wait_total += total;
	if (p.word_row != SIZE_MAX)
		l->words[p.word_row].wait_total += total;
}

struct lock_figures *lock_tracker_event(struct lock_tracker *t, const struct lock_event *e,
					struct lock_futex_word **word)
{
	if (word)
		*word = NULL;
	if (e->kind == LOCK_EVENT_BEGIN)
		return on_begin(t, e, word);
	on_end(t, e);
	return NULL;
}

void lock_tracker_thread_exit(struct lock_tracker *t, uint32_t tid)
{
	struct lock_thread *th = u64_map_remove(&t->threads, tid);
	if (th) {
		thread_truncate(th, 0);
		free(th);
	}
}

int lock_tracker_pending_path(const struct lock_tracker *t, uint32_t tid, uint64_t addr)
{
	const struct lock_thread *th = u64_map_get(&t->threads, tid);
	for (unsigned i = th ? th->depth : 0; i > 0; i--)
		if (th->pending[i - 1].addr == addr)
			return th->pending[i - 1].path;
	return -1;
}

static int compare_stacks(const void *a, const void *b)
{
	const struct lock_stack *x = a, *y = b;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int compare_words(const void *a, const void *b)
{
	const struct lock_futex_word *x = a, *y = b;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->uaddr < y->uaddr ? -1 : x->uaddr > y->uaddr;
}

void lock_tracker_remap_stacks(struct lock_tracker *t, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	size_t pos = 0;
	uint64_t key;
	void *value;
	while (u64_map_next(&t->locks, &pos, &key, &value)) {
		struct lock_figures *l = value;
		for (size_t i = 0; i < l->nstacks; i++) {
			uint32_t to = l->stacks[i].stack == LOCK_NO_STACK ? LOCK_NO_STACK : remap(ctx, l->stacks[i].stack);
			if (to == l->stacks[i].stack)
				continue;
			struct lock_stack moved = l->stacks[i];
			u64_map_remove(&l->stack_index, moved.stack);
			uintptr_t idx = (uintptr_t)u64_map_get(&l->stack_index, to);
			if (!idx) {
				l->stacks[i].stack = to; /* the row is the completed stack's now */
				u64_map_put(&l->stack_index, to, (void *)(uintptr_t)(i + 1));
				continue;
			}
			struct lock_stack *into = &l->stacks[idx - 1];
			into->contentions += moved.contentions;
			into->estimated += moved.estimated;
			into->wait_total += moved.wait_total;
			l->stacks[i] = (struct lock_stack){ .stack = LOCK_NO_STACK };
		}
		/* rows merged away are dropped; the index is rebuilt for what is left */
		size_t kept = 0;
		for (size_t i = 0; i < l->nstacks; i++)
			if (l->stacks[i].stack != LOCK_NO_STACK || l->stacks[i].contentions)
				l->stacks[kept++] = l->stacks[i];
		l->nstacks = kept;
		u64_map_free(&l->stack_index);
		memset(&l->stack_index, 0, sizeof(l->stack_index));
		for (size_t i = 0; i < l->nstacks; i++)
			if (l->stacks[i].stack != LOCK_NO_STACK)
				u64_map_put(&l->stack_index, l->stacks[i].stack, (void *)(uintptr_t)(i + 1));
	}
}

void lock_tracker_finish(struct lock_tracker *t)
{
	size_t pos = 0;
	uint64_t key;
	void *value;
	while (u64_map_next(&t->threads, &pos, &key, &value))
		thread_truncate(value, 0);
	pos = 0;
	while (u64_map_next(&t->locks, &pos, &key, &value)) {
		struct lock_figures *l = value;
		if (l->nstacks)
			sort_items(l->stacks, l->nstacks, sizeof(*l->stacks), compare_stacks);
		if (l->nwords)
			sort_items(l->words, l->nwords, sizeof(*l->words), compare_words);
		u64_map_free(&l->stack_index); /* rows moved: no more lookups after the last event */
		memset(&l->stack_index, 0, sizeof(l->stack_index));
	}
	free(t->sorted); /* waits changed since any earlier sort */
	t->sorted = NULL;
	t->nsorted = 0;
}

static int compare_locks(const void *a, const void *b)
{
	const struct lock_figures *x = *(struct lock_figures *const *)a, *y = *(struct lock_figures *const *)b;
	if (x->wait.total != y->wait.total)
		return x->wait.total > y->wait.total ? -1 : 1;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

size_t lock_tracker_locks(struct lock_tracker *t, struct lock_figures *const **locks)
{
	if (!t->sorted && t->locks.count) {
		t->sorted = xcalloc(t->locks.count, sizeof(*t->sorted));
		size_t pos = 0, n = 0;
		uint64_t key;
		void *value;
		while (u64_map_next(&t->locks, &pos, &key, &value))
			t->sorted[n++] = value;
		t->nsorted = n;
		sort_items(t->sorted, n, sizeof(*t->sorted), compare_locks);
	}
	*locks = t->sorted;
	return t->nsorted;
}

const struct lock_figures *lock_tracker_lock(const struct lock_tracker *t, uint64_t addr)
{
	return u64_map_get(&t->locks, addr);
}

uint64_t lock_tracker_orphan_ends(const struct lock_tracker *t)
{
	return t->orphan_ends;
}

uint64_t lock_tracker_estimated(const struct lock_tracker *t)
{
	return t->estimated;
}

uint64_t lock_tracker_path_wait(const struct lock_tracker *t, int path)
{
	return path >= 0 && path < PATH_COUNT ? t->path_wait[path] : 0;
}

uint64_t lock_tracker_path_contentions(const struct lock_tracker *t, int path)
{
	return path >= 0 && path < PATH_COUNT ? t->path_contentions[path] : 0;
}

bool lock_tracker_has_lock_in(const struct lock_tracker *t, uint64_t start, uint64_t end)
{
	/* Lock words are at least 4-byte aligned: probe every aligned address, cheap for a cacheline. */
	for (uint64_t a = (start + 3) & ~(uint64_t)3; a < end; a += 4)
		if (u64_map_get(&t->locks, a))
			return true;
	return false;
}

int lock_figures_path(const struct lock_figures *l)
{
	int best = PATH_OTHER;
	for (int p = 0; p < PATH_COUNT; p++) {
		if (l->path_wait[p] > l->path_wait[best] ||
		    (l->path_wait[p] == l->path_wait[best] && l->path_contentions[p] > l->path_contentions[best]))
			best = p;
	}
	return best;
}

/* ---- per futex word ---- */

static int compare_word_locks(const void *a, const void *b)
{
	const struct lock_word_lock *x = a, *y = b;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	return x->lock->addr < y->lock->addr ? -1 : x->lock->addr > y->lock->addr;
}

static int compare_word_figures(const void *a, const void *b)
{
	const struct lock_word_figures *x = a, *y = b;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->uaddr < y->uaddr ? -1 : x->uaddr > y->uaddr;
}

static bool same_word(const struct lock_futex_word *w, uint32_t pid, uint64_t uaddr)
{
	return w->pid == pid && w->uaddr == uaddr;
}

/* How many words other than (pid, uaddr) the bucket locks of one word served, each counted once. */
static size_t words_sharing(const struct lock_word_figures *wf)
{
	size_t n = 0;
	for (size_t a = 0; a < wf->nlocks; a++) {
		const struct lock_figures *l = wf->locks[a].lock;
		for (size_t i = 0; l->bucket && i < l->nwords; i++) {
			const struct lock_futex_word *x = &l->words[i];
			if (same_word(x, wf->pid, wf->uaddr))
				continue;
			bool seen = false; /* served by an earlier lock of this word too */
			for (size_t b = 0; b < a && !seen; b++)
				for (size_t j = 0; wf->locks[b].lock->bucket && j < wf->locks[b].lock->nwords && !seen; j++)
					seen = same_word(&wf->locks[b].lock->words[j], x->pid, x->uaddr);
			n += !seen;
		}
	}
	return n;
}

size_t lock_tracker_futex_words(struct lock_tracker *t, struct lock_word_figures **out)
{
	struct lock_figures *const *locks;
	size_t nlocks = lock_tracker_locks(t, &locks), n = 0, cap = 0;
	struct lock_word_figures *words = NULL;
	for (size_t i = 0; i < nlocks; i++) {
		const struct lock_figures *l = locks[i];
		for (size_t k = 0; k < l->nwords; k++) {
			const struct lock_futex_word *w = &l->words[k];
			size_t j = 0;
			while (j < n && !(words[j].pid == w->pid && words[j].uaddr == w->uaddr))
				j++;
			if (j == n) {
				GROW(words, cap, n + 1);
				words[n++] = (struct lock_word_figures){ .pid = w->pid, .uaddr = w->uaddr, .symbol = w->symbol,
									  .dso = w->dso };
			}
			struct lock_word_figures *wf = &words[j];
			wf->contentions += w->contentions;
			wf->estimated += w->estimated;
			wf->wait_total += w->wait_total;
			wf->locks = xrealloc(wf->locks, (wf->nlocks + 1) * sizeof(*wf->locks));
			wf->locks[wf->nlocks++] = (struct lock_word_lock){ .lock = l, .contentions = w->contentions,
									   .wait_total = w->wait_total };
		}
	}
	for (size_t j = 0; j < n; j++) {
		sort_items(words[j].locks, words[j].nlocks, sizeof(*words[j].locks), compare_word_locks);
		words[j].sharing = words_sharing(&words[j]);
	}
	if (n)
		sort_items(words, n, sizeof(*words), compare_word_figures);
	*out = words;
	return n;
}

void lock_word_figures_free(struct lock_word_figures *words, size_t n)
{
	for (size_t j = 0; j < n; j++)
		free(words[j].locks);
	free(words);
}
