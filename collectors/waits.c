/*
 * waits.c: the wake linker (waits.h): for each blocking wait of the
 * workload, who or what ended it, what the waker did meanwhile, and the
 * chain of waits behind it.  docs/waits.md explains the linking and its
 * limits.
 *
 * Per thread it follows: its futex call in progress (op, word, entry
 * stack), whether the thread is asleep (switched out blocked), the first
 * sched_waking after its switch-out (the kernel fires sched_waking only when
 * it really wakes a sleeping task, in the waker's context: the waker's tid,
 * or an interrupt), and the switch-in after that.  A wait is
 *   - a wait-type futex call that slept: from its entry to its exit, ended
 *     by its last sleep's waking, or by its result (ETIMEDOUT, a signal's
 *     EINTR/ERESTART*, another error);
 *   - a sleep outside any futex call: from the switch-out to the switch-in.
 * A waking inside the waker's own futex call is that call's doing (the
 * kernel wakes futex waiters from futex_wake, futex_requeue and
 * futex_unlock_pi): the waker's entry stack is the release site.  The
 * waker's cpu samples between the start of the wait and its waking are its
 * work during the wait.  Nothing is guessed from time alone: a waking
 * outside the waker's futex call names the waker and says that its stack is
 * not known.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/collectors/waits.h"
#include "sigprof/base/hashmap.h"
#include "sigprof/base/util.h"

/* The kernel's errnos a futex wait ends with (uapi errno.h and the kernel-internal restart codes). */
#define ERR_EINTR 4
#define ERR_EAGAIN 11
#define ERR_ETIMEDOUT 110
#define ERR_RESTART_FIRST 512 /* ERESTARTSYS */
#define ERR_RESTART_LAST 516  /* ERESTART_RESTARTBLOCK */

static const char *const ending_names[WAIT_END_COUNT] = {
	[WAIT_END_TASK] = "task",       [WAIT_END_INTERRUPT] = "interrupt", [WAIT_END_SIGNAL] = "signal",
	[WAIT_END_TIMEOUT] = "timeout", [WAIT_END_ERROR] = "error",         [WAIT_END_UNLINKED] = "unlinked",
};

const char *wait_ending_name(enum wait_ending e)
{
	return e < WAIT_END_COUNT ? ending_names[e] : "unknown";
}

static const char *const unlinked_why[WAIT_REASON_COUNT] = {
	[WAIT_LINKED] = "linked",
	[WAIT_NO_SCHED] = "no scheduler events in the recording (the sched collector was off)",
	[WAIT_NO_WAKING] = "no sched_waking of the task during the wait (lost, or throttled by the kernel)",
	[WAIT_WAKER_NO_CALL] = "the waker had no futex call in progress (woken by another system call or the kernel)",
	[WAIT_WAKER_WEIGHTED] = "the waker's futex call was a weighted sample, not followed",
	[WAIT_LINKED_BY_WORD] = "no waking recorded: linked to the last wake call on the word during the wait",
};

const char *wait_unlinked_why(enum wait_unlinked_reason r)
{
	return r < WAIT_REASON_COUNT ? unlinked_why[r] : "unknown";
}

static const char *const reason_keys[WAIT_REASON_COUNT] = {
	[WAIT_LINKED] = "linked",           [WAIT_NO_SCHED] = "no_sched_events",
	[WAIT_NO_WAKING] = "no_waking",     [WAIT_WAKER_NO_CALL] = "waker_without_futex_call",
	[WAIT_WAKER_WEIGHTED] = "waker_call_weighted", [WAIT_LINKED_BY_WORD] = "linked_by_word",
};

const char *wait_reason_key(enum wait_unlinked_reason r)
{
	return r < WAIT_REASON_COUNT ? reason_keys[r] : "unknown";
}

/* A waking as the waiter saw it: when, who, and the waker's futex call then. */
struct waking {
	bool seen;
	uint64_t time;
	uint32_t pid, tid;
	bool irq;
	enum futex_op_id op; /* the waker's pending call, FOP_COUNT when none */
	uint32_t word_pid;
	uint64_t uaddr;
	uint32_t stack;
	bool weighted;
	bool by_word;        /* not a recorded waking: the last wake call on the word during the wait */
};

/* The last wake-type call on a word (for waits whose waking was not recorded). */
struct word_wake {
	uint32_t word_pid;
	uint64_t uaddr;
	struct waking wake;
};

struct cpu_sample {
	uint64_t time;
	uint32_t stack;
};

/* A waking a thread did, with its stack (sched_waking#stack). */
struct waking_stack {
	uint64_t time;
	uint32_t target, stack;
};

struct wait_thread {
	uint32_t pid;
	/* its futex call in progress */
	bool in_call, call_waits, call_weighted;
	enum futex_op_id op;
	uint64_t uaddr, entry_time;
	uint32_t stack;
	uint32_t call_sleeps;   /* blocking switch-outs during the call */
	/* asleep: switched out blocked */
	bool sleeping;
	uint64_t out_time;
	uint32_t out_stack;
	struct waking wake;     /* the first waking after the last switch-out */
	struct waking early;    /* a waking while the task was still on its CPU going to sleep */
	uint64_t run_time;      /* the switch-in after wake */
	/* its latest cpu samples, a ring */
	struct cpu_sample *ring;
	size_t ring_cap, ring_head, ring_count;
	bool ring_wrapped;      /* samples were dropped from the ring */
	/* its latest wakings with their stack, a ring */
	struct waking_stack waking_stacks[WAITS_WAKING_STACKS];
	size_t waking_stacks_next;
	/* its last wait, for the script and the chains */
	bool has_last;
	struct wait_record last;
};

struct wait_linker {
	struct u64_map threads; /* tid -> struct wait_thread */
	struct u64_map word_wakes; /* hash of the word -> struct word_wake, the last wake call on it */
	struct waits_totals totals;
	struct wait_word_stats *words;
	size_t nwords, words_cap;
	struct u64_map word_index; /* key hash -> index + 1 (chained through word_next) */
	size_t *word_next;
	struct wait_blame *release, *work;
	size_t nrelease, release_cap, nwork, work_cap;
	struct u64_map release_index, work_index;
	size_t *release_next, *work_next;
	size_t release_next_cap, work_next_cap, word_next_cap;
	struct u64_map pair_index; /* waiter stack << 32 | waker stack -> index + 1 in pairs */
	struct wake_pair *pairs;
	size_t npairs, pairs_cap;
	struct u64_map sample_index; /* hash of a sample's key -> index + 1 (chained through sample_next) */
	struct wait_sample *samples;
	size_t *sample_next;
	size_t nsamples, samples_cap, sample_next_cap;
	struct wait_record longest[WAITS_LONGEST];
	size_t nlongest;
	/* sorted views handed out */
	const struct wait_word_stats **word_view;
	const struct wait_blame **release_view, **work_view;
};

struct wait_linker *wait_linker_new(void)
{
	return xcalloc(1, sizeof(struct wait_linker));
}

static void free_thread(void *value)
{
	struct wait_thread *t = value;
	free(t->ring);
	free(t);
}

void wait_linker_free(struct wait_linker *l)
{
	if (!l)
		return;
	u64_map_free_values(&l->threads, free_thread);
	u64_map_free_values(&l->word_wakes, free);
	u64_map_free(&l->word_index);
	u64_map_free(&l->release_index);
	u64_map_free(&l->work_index);
	u64_map_free(&l->pair_index);
	free(l->pairs);
	u64_map_free(&l->sample_index);
	free(l->samples);
	free(l->sample_next);
	free(l->words);
	free(l->word_next);
	free(l->release);
	free(l->work);
	free(l->release_next);
	free(l->work_next);
	free(l->word_view);
	free(l->release_view);
	free(l->work_view);
	free(l);
}

static struct wait_thread *thread_get(struct wait_linker *l, uint32_t tid)
{
	struct wait_thread *t = u64_map_get(&l->threads, tid);
	if (!t) {
		t = xcalloc(1, sizeof(*t));
		u64_map_put(&l->threads, tid, t);
	}
	return t;
}

/* ---- aggregates: per word, per (word, stack) ---- */

static uint64_t blame_key(bool futex, uint32_t pid, uint64_t uaddr, uint32_t stack)
{
	return hash_u64(hash_u64(uaddr ^ ((uint64_t)pid << 32)) ^ ((uint64_t)stack << 1) ^ futex);
}

static struct wait_word_stats *word_stats(struct wait_linker *l, bool futex, uint32_t pid, uint64_t uaddr)
{
	uint64_t key = blame_key(futex, pid, uaddr, 0);
	uintptr_t at = (uintptr_t)u64_map_get(&l->word_index, key);
	for (size_t i = at; i; i = l->word_next[i - 1]) {
		struct wait_word_stats *w = &l->words[i - 1];
		if (w->futex == futex && w->word_pid == pid && w->uaddr == uaddr)
			return w;
	}
	GROW(l->words, l->words_cap, l->nwords + 1);
	GROW(l->word_next, l->word_next_cap, l->nwords + 1);
	struct wait_word_stats *w = &l->words[l->nwords];
	memset(w, 0, sizeof(*w));
	w->futex = futex;
	w->word_pid = pid;
	w->uaddr = uaddr;
	l->word_next[l->nwords] = at;
	u64_map_put(&l->word_index, key, (void *)(uintptr_t)(++l->nwords));
	return w;
}

struct blame_table {
	struct wait_blame **items;
	size_t *count, *cap;
	size_t **next;
	size_t *next_cap;
	struct u64_map *index;
};

static struct wait_blame *blame_get(const struct blame_table *bt, bool futex, uint32_t pid, uint64_t uaddr,
				    uint32_t stack)
{
	uint64_t key = blame_key(futex, pid, uaddr, stack);
	uintptr_t at = (uintptr_t)u64_map_get(bt->index, key);
	for (size_t i = at; i; i = (*bt->next)[i - 1]) {
		struct wait_blame *b = &(*bt->items)[i - 1];
		if (b->futex == futex && b->word_pid == pid && b->uaddr == uaddr && b->stack == stack)
			return b;
	}
	GROW(*bt->items, *bt->cap, *bt->count + 1);
	GROW(*bt->next, *bt->next_cap, *bt->count + 1);
	struct wait_blame *b = &(*bt->items)[*bt->count];
	memset(b, 0, sizeof(*b));
	b->futex = futex;
	b->word_pid = pid;
	b->uaddr = uaddr;
	b->stack = stack;
	(*bt->next)[*bt->count] = at;
	u64_map_put(bt->index, key, (void *)(uintptr_t)(++*bt->count));
	return b;
}

static struct blame_table release_table(struct wait_linker *l)
{
	return (struct blame_table){ &l->release, &l->nrelease, &l->release_cap, &l->release_next,
				     &l->release_next_cap, &l->release_index };
}

static struct blame_table work_table(struct wait_linker *l)
{
	return (struct blame_table){ &l->work, &l->nwork, &l->work_cap, &l->work_next, &l->work_next_cap,
				     &l->work_index };
}

static struct wake_pair *pair_get(struct wait_linker *l, uint32_t waiter_stack, uint32_t waker_stack)
{
	uint64_t key = (uint64_t)waiter_stack << 32 | waker_stack;
	uintptr_t at = (uintptr_t)u64_map_get(&l->pair_index, key);
	if (at)
		return &l->pairs[at - 1];
	GROW(l->pairs, l->pairs_cap, l->npairs + 1);
	struct wake_pair *pair = &l->pairs[l->npairs];
	*pair = (struct wake_pair){ .waiter_stack = waiter_stack, .waker_stack = waker_stack };
	u64_map_put(&l->pair_index, key, (void *)(uintptr_t)(++l->npairs));
	return pair;
}

/* Whether two wait samples have the same key (everything but their waits and ns). */
static bool same_sample_key(const struct wait_sample *a, const struct wait_sample *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->stack == b->stack && a->futex == b->futex &&
	       a->word_pid == b->word_pid && a->uaddr == b->uaddr && a->ending == b->ending && a->link == b->link &&
	       a->waker_pid == b->waker_pid && a->waker_tid == b->waker_tid && a->waker_op == b->waker_op &&
	       a->waker_stack == b->waker_stack;
}

/* The sample of key's key (waits and ns 0 when new); its strings are the static names, compared by address. */
static struct wait_sample *sample_get(struct wait_linker *l, const struct wait_sample *key)
{
	uint64_t h = hash_u64(blame_key(key->futex, key->word_pid, key->uaddr, key->stack) ^
			      hash_u64((uint64_t)key->tid << 32 | key->waker_tid) ^ hash_u64(key->waker_stack) ^
			      (uintptr_t)key->ending ^ (uintptr_t)key->link);
	uintptr_t at = (uintptr_t)u64_map_get(&l->sample_index, h);
	for (size_t i = at; i; i = l->sample_next[i - 1])
		if (same_sample_key(&l->samples[i - 1], key))
			return &l->samples[i - 1];
	GROW(l->samples, l->samples_cap, l->nsamples + 1);
	GROW(l->sample_next, l->sample_next_cap, l->nsamples + 1);
	struct wait_sample *s = &l->samples[l->nsamples];
	*s = *key;
	s->waits = s->ns = 0;
	l->sample_next[l->nsamples] = at;
	u64_map_put(&l->sample_index, h, (void *)(uintptr_t)(++l->nsamples));
	return s;
}

/* Count a finished wait in its sample (per waiter thread and stack, word, ending and waker). */
static void count_sample(struct wait_linker *l, const struct wait_record *rec)
{
	struct wait_sample key = {
		.pid = rec->step.pid, .tid = rec->step.tid, .stack = rec->step.stack, .futex = rec->step.futex,
		.word_pid = rec->step.word_pid, .uaddr = rec->step.uaddr, .ending = wait_ending_name(rec->step.ending),
		.link = rec->why == WAIT_LINKED ? "waking" : wait_reason_key(rec->why),
		.waker_pid = rec->step.waker_pid, .waker_tid = rec->step.waker_tid,
		.waker_op = rec->waker_op == FOP_COUNT ? NULL : futex_op_name(rec->waker_op),
		.waker_stack = rec->step.waker_stack,
	};
	struct wait_sample *s = sample_get(l, &key);
	s->waits++;
	s->ns += rec->step.end - rec->step.start;
}

/* ---- the waker's stack at its waking ---- */

void waits_waking_stack(struct wait_linker *l, uint32_t waker_tid, uint32_t target, uint64_t time, uint32_t stack)
{
	struct wait_thread *t = thread_get(l, waker_tid);
	t->waking_stacks[t->waking_stacks_next++ % WAITS_WAKING_STACKS] =
		(struct waking_stack){ .time = time, .target = target, .stack = stack };
}

/*
 * The waker's stack at its waking of tid at time (its own record of that
 * waking), or UINT32_MAX.  The two records of one tracepoint hit are not
 * written at the same instant (the per-task one first, 120 us apart seen
 * on a loaded VM), but a task wakes a sleeper once per sleep: the waker's
 * record of tid after the wait began (since) and at most
 * WAITS_WAKING_STACK_SLACK_NS after the waking is this waking's; the
 * nearest is taken.
 */
static uint32_t waking_stack_of(const struct wait_linker *l, uint32_t waker_tid, uint32_t tid, uint64_t since,
				uint64_t time)
{
	const struct wait_thread *waker = u64_map_get(&l->threads, waker_tid);
	if (!waker)
		return UINT32_MAX;
	uint32_t best = UINT32_MAX;
	uint64_t best_gap = UINT64_MAX;
	for (size_t i = 0; i < WAITS_WAKING_STACKS; i++) {
		const struct waking_stack *w = &waker->waking_stacks[i];
		uint64_t gap = w->time > time ? w->time - time : time - w->time;
		if (w->time && w->target == tid && w->time >= since && w->time <= time + WAITS_WAKING_STACK_SLACK_NS &&
		    gap < best_gap) {
			best_gap = gap;
			best = w->stack;
		}
	}
	return best;
}

/* ---- the waker's cpu samples ---- */

static void ring_add(struct wait_thread *t, uint64_t time, uint32_t stack)
{
	if (t->ring_count == t->ring_cap && t->ring_cap < WAITS_CPU_RING) {
		/* grow, unrolling the ring so that it starts at 0 */
		size_t cap = t->ring_cap ? t->ring_cap * 2 : 64;
		struct cpu_sample *ring = xcalloc(cap, sizeof(*ring));
		for (size_t i = 0; i < t->ring_count; i++)
			ring[i] = t->ring[(t->ring_head + i) % t->ring_cap];
		free(t->ring);
		t->ring = ring;
		t->ring_cap = cap;
		t->ring_head = 0;
	}
	if (t->ring_count == t->ring_cap) {
		t->ring[t->ring_head] = (struct cpu_sample){ time, stack };
		t->ring_head = (t->ring_head + 1) % t->ring_cap;
		t->ring_wrapped = true;
		return;
	}
	t->ring[(t->ring_head + t->ring_count) % t->ring_cap] = (struct cpu_sample){ time, stack };
	t->ring_count++;
}

static int compare_work(const void *a, const void *b)
{
	const struct wait_work *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int compare_stack_ids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The waker's samples in [from, to]: their count, its heaviest stacks into
 * rec, and each stack's share of the wait's ns charged to the word's work
 * blame.
 */
static void charge_waker_work(struct wait_linker *l, const struct wait_thread *waker, struct wait_record *rec,
			      uint64_t from, uint64_t to)
{
	if (!waker->ring_count)
		return;
	uint32_t *stacks = xmalloc(waker->ring_count * sizeof(*stacks));
	size_t n = 0;
	uint64_t oldest = waker->ring[waker->ring_head].time;
	for (size_t i = 0; i < waker->ring_count; i++) {
		const struct cpu_sample *cs = &waker->ring[(waker->ring_head + i) % waker->ring_cap];
		if (cs->time >= from && cs->time <= to)
			stacks[n++] = cs->stack;
	}
	rec->waker_samples = (uint32_t)n;
	rec->waker_samples_partial = waker->ring_wrapped && oldest > from;
	if (!n) {
		free(stacks);
		return;
	}
	sort_items(stacks, n, sizeof(*stacks), compare_stack_ids);
	struct wait_work *runs = xmalloc(n * sizeof(*runs));
	size_t nruns = 0;
	for (size_t i = 0; i < n; i++) {
		if (nruns && runs[nruns - 1].stack == stacks[i])
			runs[nruns - 1].samples++;
		else
			runs[nruns++] = (struct wait_work){ stacks[i], 1 };
	}
	uint64_t ns = rec->step.end - rec->step.start;
	struct blame_table bt = work_table(l);
	for (size_t i = 0; i < nruns; i++) {
		struct wait_blame *b = blame_get(&bt, rec->step.futex, rec->step.word_pid, rec->step.uaddr,
						 runs[i].stack);
		b->waits++;
		b->ns += ns;
		b->samples += runs[i].samples;
		b->weighted_ns += (double)ns * runs[i].samples / (double)n;
	}
	sort_items(runs, nruns, sizeof(*runs), compare_work);
	rec->nwork = nruns < WAITS_WORK_MAX ? nruns : WAITS_WORK_MAX;
	memcpy(rec->work, runs, rec->nwork * sizeof(*runs));
	free(runs);
	free(stacks);
}

/* ---- ending a wait ---- */

static bool is_signal_result(int64_t r)
{
	return r == -ERR_EINTR || (r <= -ERR_RESTART_FIRST && r >= -ERR_RESTART_LAST);
}

/* How a wait ended, from the futex call's result (futex waits) and the last waking. */
static enum wait_ending ending_of(const struct wait_linker *l, const struct wait_record *rec,
				  const struct waking *wake, enum wait_unlinked_reason *why)
{
	*why = WAIT_LINKED;
	if (rec->step.futex && rec->result == -ERR_ETIMEDOUT)
		return WAIT_END_TIMEOUT;
	if (rec->step.futex && is_signal_result(rec->result))
		return WAIT_END_SIGNAL;
	if (rec->step.futex && rec->result < 0)
		return WAIT_END_ERROR;
	if (!l->totals.sched_seen) {
		*why = WAIT_NO_SCHED;
		return WAIT_END_UNLINKED;
	}
	if (!wake->seen) {
		*why = WAIT_NO_WAKING;
		return WAIT_END_UNLINKED;
	}
	if (wake->by_word)
		*why = WAIT_LINKED_BY_WORD;
	if (wake->irq || wake->tid == 0)
		return WAIT_END_INTERRUPT;
	if (wake->by_word)
		return WAIT_END_TASK;
	if (wake->op == FOP_COUNT)
		*why = WAIT_WAKER_NO_CALL;
	else if (wake->weighted)
		*why = WAIT_WAKER_WEIGHTED;
	return WAIT_END_TASK;
}

static void keep_longest(struct wait_linker *l, const struct wait_record *rec)
{
	uint64_t ns = rec->step.end - rec->step.start;
	size_t at = l->nlongest;
	while (at > 0 && l->longest[at - 1].step.end - l->longest[at - 1].step.start < ns)
		at--;
	if (at >= WAITS_LONGEST)
		return;
	size_t keep = l->nlongest < WAITS_LONGEST ? l->nlongest : WAITS_LONGEST - 1;
	memmove(&l->longest[at + 1], &l->longest[at], (keep - at) * sizeof(*rec));
	l->longest[at] = *rec;
	if (l->nlongest < WAITS_LONGEST)
		l->nlongest++;
}

/* The waker's own wait that ended inside ours: the first step of our chain, and its chain after it. */
static void follow_chain(struct wait_record *rec, const struct wait_thread *waker)
{
	if (!waker || !waker->has_last)
		return;
	const struct wait_record *prev = &waker->last;
	if (prev->step.end <= rec->step.start || prev->step.end > rec->wake_time)
		return;
	rec->chain[0] = prev->step;
	rec->chain_len = 1;
	for (size_t i = 0; i < prev->chain_len && rec->chain_len < WAITS_CHAIN_MAX; i++)
		rec->chain[rec->chain_len++] = prev->chain[i];
}

/*
 * A futex wait returns 0 only when a waker's call took it off the word's
 * queue (a spurious wake-up sleeps again in the same call).  When its last
 * waking is not such a call's (none was recorded: the kernel throttled or
 * lost it; or an interrupt made the task runnable first, and the futex
 * wake then found it runnable and fired no sched_waking), the last
 * wake-type call of another thread on the same word, entered during the
 * wait, is the link.
 */
static void waking_by_word(const struct wait_linker *l, uint32_t tid, struct wait_thread *t,
			   const struct wait_record *rec)
{
	const struct waking *w = &t->wake;
	if (!rec->step.futex || rec->result < 0 || (w->seen && !w->irq && w->tid && w->op != FOP_COUNT))
		return;
	const struct word_wake *ww = u64_map_get(&l->word_wakes, blame_key(true, rec->step.word_pid, rec->step.uaddr, 0));
	if (!ww || ww->word_pid != rec->step.word_pid || ww->uaddr != rec->step.uaddr || ww->wake.tid == tid ||
	    ww->wake.time < rec->step.start || ww->wake.time > rec->step.end)
		return;
	t->wake = ww->wake;
	if (t->run_time < ww->wake.time)
		t->run_time = 0;
}

static void end_wait(struct wait_linker *l, uint32_t tid, struct wait_thread *t, struct wait_record *rec)
{
	if (l->totals.sched_seen)
		waking_by_word(l, tid, t, rec);
	const struct waking *wake = &t->wake;
	rec->step.tid = tid;
	rec->step.pid = t->pid;
	rec->step.ending = ending_of(l, rec, wake, &rec->why);
	rec->step.waker_stack = UINT32_MAX;
	rec->waker_op = FOP_COUNT;
	if (wake->seen) {
		rec->wake_time = wake->time;
		rec->run_time = t->run_time >= wake->time ? t->run_time : 0;
		rec->waker_irq = wake->irq;
		rec->step.waker_pid = wake->irq ? 0 : wake->pid;
		rec->step.waker_tid = wake->irq ? 0 : wake->tid;
		if (!wake->irq && wake->op != FOP_COUNT) {
			rec->waker_op = wake->op;
			rec->waker_word_pid = wake->word_pid;
			rec->waker_uaddr = wake->uaddr;
			rec->step.waker_stack = wake->stack;
		} else if (rec->step.ending == WAIT_END_TASK && !wake->by_word) {
			rec->step.waker_stack = waking_stack_of(l, wake->tid, tid, rec->step.start, wake->time);
			rec->waker_stack_at_waking = rec->step.waker_stack != UINT32_MAX;
			l->totals.waker_stacks_at_waking += rec->waker_stack_at_waking;
		}
	}
	if (rec->why != WAIT_LINKED)
		l->totals.unlinked[rec->why]++;
	uint64_t ns = rec->step.end - rec->step.start;
	l->totals.waits[rec->step.ending]++;
	l->totals.ns[rec->step.ending] += ns;
	if (rec->step.futex)
		l->totals.futex_waits++;
	else
		l->totals.sched_waits++;
	struct wait_word_stats *w = word_stats(l, rec->step.futex, rec->step.word_pid, rec->step.uaddr);
	w->waits[rec->step.ending]++;
	w->ns[rec->step.ending] += ns;
	if (rec->run_time) {
		uint64_t latency = rec->run_time - rec->wake_time;
		w->wake_to_run_ns += latency;
		w->wake_to_run_count++;
		if (latency > w->wake_to_run_max)
			w->wake_to_run_max = latency;
	}
	if (rec->step.ending == WAIT_END_TASK) {
		struct wait_thread *waker = u64_map_get(&l->threads, rec->step.waker_tid);
		struct blame_table bt = release_table(l);
		struct wait_blame *b = blame_get(&bt, rec->step.futex, rec->step.word_pid, rec->step.uaddr,
						 rec->step.waker_stack);
		b->waits++;
		b->ns += ns;
		b->weighted_ns += (double)ns;
		struct wake_pair *pair = pair_get(l, rec->step.stack, rec->step.waker_stack);
		pair->waits++;
		pair->ns += ns;
		if (waker && waker != t) {
			charge_waker_work(l, waker, rec, rec->step.start, rec->wake_time);
			follow_chain(rec, waker);
		}
		b->samples += rec->waker_samples;
		w->waker_samples += rec->waker_samples;
	}
	count_sample(l, rec);
	keep_longest(l, rec);
	t->last = *rec;
	t->has_last = true;
}

/* ---- the feed ---- */

void waits_futex_enter(struct wait_linker *l, uint32_t pid, uint32_t tid, uint64_t time, enum futex_op_id op,
		       uint64_t uaddr, uint32_t stack, bool weighted)
{
	struct wait_thread *t = thread_get(l, tid);
	t->pid = pid;
	t->in_call = true;
	t->call_waits = futex_op_role(op) == FUTEX_ROLE_WAITER && futex_op_blocks(op);
	t->call_weighted = weighted;
	t->op = op;
	t->uaddr = uaddr;
	t->entry_time = time;
	t->stack = stack;
	t->call_sleeps = 0;
	t->wake.seen = t->early.seen = false;
	t->run_time = 0;
	if (futex_op_role(op) == FUTEX_ROLE_WAKER && !weighted) {
		uint64_t key = blame_key(true, pid, uaddr, 0);
		struct word_wake *ww = u64_map_get(&l->word_wakes, key);
		if (!ww) {
			ww = xcalloc(1, sizeof(*ww));
			u64_map_put(&l->word_wakes, key, ww);
		}
		*ww = (struct word_wake){ .word_pid = pid, .uaddr = uaddr,
					  .wake = { .seen = true, .time = time, .pid = pid, .tid = tid, .op = op,
						    .word_pid = pid, .uaddr = uaddr, .stack = stack, .by_word = true } };
	}
}

void waits_futex_exit(struct wait_linker *l, uint32_t tid, uint64_t time, int64_t result)
{
	struct wait_thread *t = u64_map_get(&l->threads, tid);
	if (!t || !t->in_call)
		return;
	t->in_call = false;
	if (!t->call_waits)
		return;
	if (t->call_weighted) {
		l->totals.weighted_calls++;
		return;
	}
	/* without scheduler events only the result says it did not sleep: EAGAIN, the word had changed */
	bool slept = l->totals.sched_seen ? t->call_sleeps > 0 : result != -ERR_EAGAIN;
	if (!slept) {
		l->totals.not_blocking++;
		return;
	}
	struct wait_record rec = { .step = { .start = t->entry_time, .end = time > t->entry_time ? time : t->entry_time,
					     .futex = true, .word_pid = t->pid, .uaddr = t->uaddr, .stack = t->stack },
				   .op = t->op, .result = result };
	end_wait(l, tid, t, &rec);
}

void waits_switch_out(struct wait_linker *l, uint32_t pid, uint32_t tid, uint64_t time, uint32_t stack, bool sleep)
{
	l->totals.sched_seen = true;
	struct wait_thread *t = thread_get(l, tid);
	if (pid)
		t->pid = pid;
	if (!sleep)
		return;
	t->sleeping = true;
	t->out_time = time;
	t->out_stack = stack;
	/* a waking while it was still going to sleep made it runnable already: that waking ends this sleep */
	t->wake = t->early;
	t->early.seen = false;
	t->run_time = 0;
	if (t->in_call)
		t->call_sleeps++;
}

void waits_switch_out_preempted(struct wait_linker *l, uint32_t tid, uint64_t time)
{
	struct wait_thread *t = u64_map_get(&l->threads, tid);
	if (!t || !t->sleeping || t->out_time > time)
		return;
	t->sleeping = false;
	if (t->in_call && t->call_sleeps)
		t->call_sleeps--;
}

void waits_switch_in(struct wait_linker *l, uint32_t tid, uint64_t time)
{
	l->totals.sched_seen = true;
	struct wait_thread *t = u64_map_get(&l->threads, tid);
	if (!t || !t->sleeping)
		return;
	t->sleeping = false;
	if (t->wake.seen && !t->run_time)
		t->run_time = time;
	if (t->in_call)
		return; /* the futex call's exit ends the wait */
	struct wait_record rec = { .step = { .start = t->out_time, .end = time > t->out_time ? time : t->out_time,
					     .stack = t->out_stack },
				   .op = FOP_COUNT };
	end_wait(l, tid, t, &rec);
}

void waits_waking(struct wait_linker *l, uint32_t target, uint64_t time, uint32_t waker_pid, uint32_t waker_tid,
		  bool irq)
{
	l->totals.sched_seen = true;
	struct wait_thread *t = u64_map_get(&l->threads, target);
	if (!t)
		return;
	struct waking w = { .seen = true, .time = time, .pid = waker_pid, .tid = waker_tid, .irq = irq,
			    .op = FOP_COUNT };
	const struct wait_thread *waker = irq || !waker_tid ? NULL : u64_map_get(&l->threads, waker_tid);
	if (waker && waker->in_call && futex_op_role(waker->op) == FUTEX_ROLE_WAKER) {
		w.op = waker->op;
		w.word_pid = waker->pid;
		w.uaddr = waker->uaddr;
		w.stack = waker->stack;
		w.weighted = waker->call_weighted;
	}
	if (t->sleeping) {
		if (!t->wake.seen) {
			t->wake = w;
			l->totals.wakings++;
		}
	} else if (t->in_call && t->call_waits) {
		t->early = w;
	}
}

void waits_cpu_sample(struct wait_linker *l, uint32_t tid, uint64_t time, uint32_t stack)
{
	l->totals.cpu_samples++;
	ring_add(thread_get(l, tid), time, stack);
}

void waits_task_exit(struct wait_linker *l, uint32_t tid)
{
	struct wait_thread *t = u64_map_get(&l->threads, tid);
	if (t) {
		t->sleeping = false;
		t->in_call = false;
	}
}

void waits_finish(struct wait_linker *l)
{
	size_t pos = 0;
	uint64_t tid;
	void *value;
	while (u64_map_next(&l->threads, &pos, &tid, &value)) {
		struct wait_thread *t = value;
		if ((t->in_call && t->call_waits && !t->call_weighted && (t->call_sleeps || !l->totals.sched_seen)) ||
		    (!t->in_call && t->sleeping))
			l->totals.open_at_end++;
		t->in_call = t->sleeping = false;
	}
}

/* ---- remapping stacks (the futex collector's lent DWARF stacks) ---- */

static int compare_blame_keys(const void *a, const void *b)
{
	const struct wait_blame *x = a, *y = b;
	if (x->futex != y->futex)
		return x->futex ? -1 : 1;
	if (x->word_pid != y->word_pid)
		return x->word_pid < y->word_pid ? -1 : 1;
	if (x->uaddr != y->uaddr)
		return x->uaddr < y->uaddr ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Remap the stacks of one table and merge the entries that become one; the index is rebuilt. */
static void remap_blame(struct wait_linker *l, const struct blame_table *bt,
			uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	struct wait_blame *items = *bt->items;
	size_t n = *bt->count;
	for (size_t i = 0; i < n; i++)
		if (items[i].stack != UINT32_MAX)
			items[i].stack = remap(ctx, items[i].stack);
	sort_items(items, n, sizeof(*items), compare_blame_keys);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept && compare_blame_keys(&items[kept - 1], &items[i]) == 0) {
			items[kept - 1].waits += items[i].waits;
			items[kept - 1].ns += items[i].ns;
			items[kept - 1].weighted_ns += items[i].weighted_ns;
			items[kept - 1].samples += items[i].samples;
			continue;
		}
		items[kept++] = items[i];
	}
	u64_map_free(bt->index);
	memset(bt->index, 0, sizeof(*bt->index));
	*bt->count = 0;
	for (size_t i = 0; i < kept; i++) {
		struct wait_blame copy = items[i];
		*blame_get(bt, copy.futex, copy.word_pid, copy.uaddr, copy.stack) = copy;
	}
	(void)l;
}

static void remap_step(struct wait_step *s, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	if (s->stack != UINT32_MAX)
		s->stack = remap(ctx, s->stack);
	if (s->waker_stack != UINT32_MAX)
		s->waker_stack = remap(ctx, s->waker_stack);
}

static void remap_record(struct wait_record *r, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	remap_step(&r->step, remap, ctx);
	for (size_t i = 0; i < r->chain_len; i++)
		remap_step(&r->chain[i], remap, ctx);
}

/* Remap the pairs' stacks, merging pairs that become one. */
static void remap_pairs(struct wait_linker *l, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	struct wake_pair *old = l->pairs;
	size_t n = l->npairs;
	l->pairs = NULL;
	l->npairs = l->pairs_cap = 0;
	u64_map_free(&l->pair_index);
	memset(&l->pair_index, 0, sizeof(l->pair_index));
	for (size_t i = 0; i < n; i++) {
		uint32_t waiter = old[i].waiter_stack == UINT32_MAX ? UINT32_MAX : remap(ctx, old[i].waiter_stack);
		uint32_t waker = old[i].waker_stack == UINT32_MAX ? UINT32_MAX : remap(ctx, old[i].waker_stack);
		struct wake_pair *pair = pair_get(l, waiter, waker);
		pair->waits += old[i].waits;
		pair->ns += old[i].ns;
	}
	free(old);
}

/* Remap the samples' stacks, merging samples that become one. */
static void remap_samples(struct wait_linker *l, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	struct wait_sample *old = l->samples;
	size_t n = l->nsamples;
	l->samples = NULL;
	l->nsamples = l->samples_cap = 0;
	u64_map_free(&l->sample_index);
	memset(&l->sample_index, 0, sizeof(l->sample_index));
	for (size_t i = 0; i < n; i++) {
		struct wait_sample key = old[i];
		if (key.stack != UINT32_MAX)
			key.stack = remap(ctx, key.stack);
		if (key.waker_stack != UINT32_MAX)
			key.waker_stack = remap(ctx, key.waker_stack);
		struct wait_sample *s = sample_get(l, &key);
		s->waits += old[i].waits;
		s->ns += old[i].ns;
	}
	free(old);
}

void waits_remap_stacks(struct wait_linker *l, uint32_t (*remap)(void *ctx, uint32_t stack), void *ctx)
{
	remap_samples(l, remap, ctx);
	struct blame_table release = release_table(l);
	remap_blame(l, &release, remap, ctx);
	remap_pairs(l, remap, ctx);
	for (size_t i = 0; i < l->nlongest; i++)
		remap_record(&l->longest[i], remap, ctx);
	size_t pos = 0;
	uint64_t tid;
	void *value;
	while (u64_map_next(&l->threads, &pos, &tid, &value)) {
		struct wait_thread *t = value;
		if (t->has_last)
			remap_record(&t->last, remap, ctx);
	}
}

/* ---- reading ---- */

const struct waits_totals *waits_totals(const struct wait_linker *l)
{
	return &l->totals;
}

size_t waits_longest(const struct wait_linker *l, const struct wait_record **out)
{
	*out = l->longest;
	return l->nlongest;
}

static uint64_t word_ns(const struct wait_word_stats *w)
{
	uint64_t ns = 0;
	for (int e = 0; e < WAIT_END_COUNT; e++)
		ns += w->ns[e];
	return ns;
}

static int compare_words(const void *a, const void *b)
{
	const struct wait_word_stats *x = *(const struct wait_word_stats *const *)a;
	const struct wait_word_stats *y = *(const struct wait_word_stats *const *)b;
	uint64_t nx = word_ns(x), ny = word_ns(y);
	if (nx != ny)
		return nx > ny ? -1 : 1;
	if (x->uaddr != y->uaddr)
		return x->uaddr < y->uaddr ? -1 : 1;
	return x->word_pid < y->word_pid ? -1 : x->word_pid > y->word_pid;
}

size_t waits_words(struct wait_linker *l, const struct wait_word_stats *const **out)
{
	free(l->word_view);
	l->word_view = xmalloc((l->nwords ? l->nwords : 1) * sizeof(*l->word_view));
	for (size_t i = 0; i < l->nwords; i++)
		l->word_view[i] = &l->words[i];
	sort_items(l->word_view, l->nwords, sizeof(*l->word_view), compare_words);
	*out = l->word_view;
	return l->nwords;
}

static int compare_blame_weight(const void *a, const void *b)
{
	const struct wait_blame *x = *(const struct wait_blame *const *)a;
	const struct wait_blame *y = *(const struct wait_blame *const *)b;
	if (x->weighted_ns != y->weighted_ns)
		return x->weighted_ns > y->weighted_ns ? -1 : 1;
	return compare_blame_keys(x, y);
}

static size_t blame_view(const struct wait_blame *items, size_t n, const struct wait_blame ***view)
{
	free(*view);
	*view = xmalloc((n ? n : 1) * sizeof(**view));
	for (size_t i = 0; i < n; i++)
		(*view)[i] = &items[i];
	sort_items(*view, n, sizeof(**view), compare_blame_weight);
	return n;
}

size_t waits_release_blame(struct wait_linker *l, const struct wait_blame *const **out)
{
	size_t n = blame_view(l->release, l->nrelease, &l->release_view);
	*out = l->release_view;
	return n;
}

size_t waits_work_blame(struct wait_linker *l, const struct wait_blame *const **out)
{
	size_t n = blame_view(l->work, l->nwork, &l->work_view);
	*out = l->work_view;
	return n;
}

const struct wait_record *waits_ended_at(const struct wait_linker *l, uint32_t tid, uint64_t end_time)
{
	const struct wait_thread *t = u64_map_get(&l->threads, tid);
	return t && t->has_last && t->last.step.end == end_time ? &t->last : NULL;
}

size_t waits_pairs(struct wait_linker *l, const struct wake_pair **out)
{
	*out = l->pairs;
	return l->npairs;
}

size_t waits_samples(const struct wait_linker *l, const struct wait_sample **out)
{
	*out = l->samples;
	return l->nsamples;
}
