/*
 * timeline.c: each thread's life as consecutive spans of one state, and the
 * wall-clock profile they make (timeline.h; docs/timeline.md).
 *
 * Per thread a small state machine: the open span (its state, start, stack
 * and cause), the signal handlers running (innermost last) and the on-CPU
 * samples taken in the open span.  An event that changes the state closes
 * the open span at its time and opens the next, so spans tile the thread's
 * life.  Closing a span adds its time to the thread's totals and to the
 * wall-clock profile: a running or handler span is split over its samples'
 * stacks in proportion to their periods, the rest weighs on the span's own
 * stack.  Events that say nothing new (a switch-in of a running thread, the
 * SWITCH record after the sched_switch sample that said the same) are
 * ignored, so the loader may hand both.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/base/util.h"
#include "sigprof/model/stacks.h"
#include "sigprof/model/timeline.h"

#define HANDLER_DEPTH_MAX 16

struct span_sample {
	uint32_t stack;
	uint64_t period;
};

struct thread_state {
	struct timeline_thread info;
	bool alive;                 /* not exited */
	size_t first_index;         /* its index before timeline_finish() sorted the threads */
	struct timeline_span open;  /* the open span (end unused) */
	int handlers[HANDLER_DEPTH_MAX];
	unsigned depth;             /* handlers running; more than HANDLER_DEPTH_MAX nest uncounted */
	struct span_sample *samples; /* on-CPU samples of the open span */
	size_t nsamples, samples_cap;
	struct timeline_span *spans;
	size_t nspans, spans_cap;
	struct timeline_mark *marks;
	size_t nmarks, marks_cap;
};

struct wall_key {
	size_t thread;
	uint32_t stack;
	uint8_t state, cause, signal;
	uint64_t detail;
};

struct timeline {
	const struct stack_table *stacks;
	struct timeline_options opts;
	struct thread_state **threads; /* in order of first sight; sorted by pid, tid at finish */
	size_t nthreads, threads_cap;
	struct u64_map by_tid;          /* tid -> its live (latest) thread index + 1 */
	struct timeline_wall *wall;
	size_t nwall, wall_cap;
	uint32_t *wall_slots;           /* open addressing: wall index + 1 */
	size_t wall_nslots;
	uint64_t latest;                /* the latest event's time */
	bool switched;                  /* a switch-in or switch-out was seen: the states can be known */
	bool finished;
};

const struct timeline_cause_rule timeline_causes[] = {
	{ "futex_", TIMELINE_CAUSE_FUTEX, "the futex wait's kernel path (futex_wait_queue, futex_lock_pi, ...)" },
	{ "__futex_", TIMELINE_CAUSE_FUTEX, "the futex wait's kernel path (__futex_wait)" },
	{ "__mutex_lock", TIMELINE_CAUSE_LOCK, "a kernel mutex's slow path" },
	{ "mutex_lock", TIMELINE_CAUSE_LOCK, "a kernel mutex" },
	{ "rwsem_down_", TIMELINE_CAUSE_LOCK, "a kernel rw_semaphore's slow path (mmap_lock, i_rwsem, ...)" },
	{ "__down", TIMELINE_CAUSE_LOCK, "a kernel semaphore" },
	{ "rt_mutex_slowlock", TIMELINE_CAUSE_LOCK, "a kernel rt_mutex" },
	{ "rtlock_slowlock", TIMELINE_CAUSE_LOCK, "a sleeping spinlock (PREEMPT_RT)" },
	{ "percpu_rwsem_wait", TIMELINE_CAUSE_LOCK, "a per-CPU rw_semaphore" },
	{ "do_nanosleep", TIMELINE_CAUSE_SLEEP, "nanosleep, clock_nanosleep, usleep" },
	{ "hrtimer_nanosleep", TIMELINE_CAUSE_SLEEP, "nanosleep" },
	{ "msleep", TIMELINE_CAUSE_SLEEP, "a kernel sleep" },
	{ "io_schedule", TIMELINE_CAUSE_IO, "a block device, a page or a buffer being read or written" },
	{ "folio_wait", TIMELINE_CAUSE_IO, "a page under I/O" },
	{ "wait_on_page", TIMELINE_CAUSE_IO, "a page under I/O" },
	{ "pipe_read", TIMELINE_CAUSE_IO, "a pipe's reader" },
	{ "pipe_write", TIMELINE_CAUSE_IO, "a pipe's writer" },
	{ "anon_pipe_read", TIMELINE_CAUSE_IO, "a pipe's reader, as newer kernels name it" },
	{ "anon_pipe_write", TIMELINE_CAUSE_IO, "a pipe's writer, as newer kernels name it" },
	{ "wait_woken", TIMELINE_CAUSE_IO, "a socket or terminal read" },
	{ "sk_wait_data", TIMELINE_CAUSE_IO, "a socket read" },
	{ "unix_stream_", TIMELINE_CAUSE_IO, "a unix socket" },
	{ "inet_csk_accept", TIMELINE_CAUSE_IO, "accept" },
	{ "n_tty_read", TIMELINE_CAUSE_IO, "a terminal read" },
	{ "do_sys_poll", TIMELINE_CAUSE_IO, "poll" },
	{ "do_select", TIMELINE_CAUSE_IO, "select" },
	{ "ep_poll", TIMELINE_CAUSE_IO, "epoll_wait" },
	{ "io_cqring_wait", TIMELINE_CAUSE_IO, "io_uring" },
	{ "read_events", TIMELINE_CAUSE_IO, "io_getevents" },
	{ "jbd2_", TIMELINE_CAUSE_IO, "the ext4 journal" },
	{ "blk_", TIMELINE_CAUSE_IO, "the block layer" },
};
const size_t timeline_ncauses = ARRAY_SIZE(timeline_causes);

const char *timeline_state_name(enum timeline_state s)
{
	static const char *const names[] = { "running", "runnable", "blocked", "signal handler" };
	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

const char *timeline_state_key(enum timeline_state s)
{
	static const char *const keys[] = { "running", "runnable", "blocked", "signal_handler" };
	return (unsigned)s < ARRAY_SIZE(keys) ? keys[s] : "unknown";
}

const char *timeline_cause_name(enum timeline_cause c)
{
	static const char *const names[] = { "", "futex", "kernel lock", "I/O", "sleep", "other" };
	return (unsigned)c < ARRAY_SIZE(names) ? names[c] : "?";
}

const char *timeline_cause_key(enum timeline_cause c)
{
	static const char *const keys[] = { "", "futex", "lock", "io", "sleep", "other" };
	return (unsigned)c < ARRAY_SIZE(keys) ? keys[c] : "unknown";
}

enum timeline_cause timeline_cause_of_stack(const struct stack_table *stacks, uint32_t stack)
{
	if (!stacks || stack >= stacks->nstacks)
		return TIMELINE_CAUSE_OTHER;
	const struct stack *s = &stacks->stacks[stack];
	const uint32_t *frames = stack_frames(stacks, s);
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct frame *f = &stacks->frames[frames[i]];
		if (!f->kernel || !f->sym)
			continue;
		for (size_t r = 0; r < timeline_ncauses; r++)
			if (strncmp(f->sym, timeline_causes[r].prefix, strlen(timeline_causes[r].prefix)) == 0)
				return timeline_causes[r].cause;
	}
	return TIMELINE_CAUSE_OTHER;
}

struct timeline *timeline_new(const struct stack_table *stacks, const struct timeline_options *o)
{
	struct timeline *t = xcalloc(1, sizeof(*t));
	t->stacks = stacks;
	if (o)
		t->opts = *o;
	return t;
}

/*
 * Every thread and its wall entries gone (timeline_free(), and
 * timeline_finish() of a recording without a context switch, which cannot
 * tell running from waiting: a thread would read runnable from its fork to
 * its exit).
 */
static void forget_threads(struct timeline *t)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		free(t->threads[i]->samples);
		free(t->threads[i]->spans);
		free(t->threads[i]->marks);
		free(t->threads[i]);
	}
	t->nthreads = 0;
	t->nwall = 0;
	u64_map_free(&t->by_tid);
	memset(&t->by_tid, 0, sizeof(t->by_tid));
}

void timeline_free(struct timeline *t)
{
	if (!t)
		return;
	forget_threads(t);
	free(t->threads);
	free(t->wall);
	free(t->wall_slots);
	free(t);
}

/* ---- the wall-clock profile: ns per (thread, state, cause, signal, word, stack) ---- */

static uint64_t wall_hash(const struct wall_key *k)
{
	uint64_t h = hash_u64(k->thread * 0x9e3779b97f4a7c15ULL ^ k->stack);
	h = hash_u64(h ^ ((uint64_t)k->state << 16 | (uint64_t)k->cause << 8 | k->signal));
	return hash_u64(h ^ k->detail);
}

static bool wall_matches(const struct timeline_wall *w, const struct wall_key *k)
{
	return w->thread == k->thread && w->stack == k->stack && w->state == k->state && w->cause == k->cause &&
	       w->signal == k->signal && w->detail == k->detail;
}

static void wall_rehash(struct timeline *t)
{
	free(t->wall_slots);
	t->wall_nslots = t->wall_nslots ? t->wall_nslots * 2 : 64;
	t->wall_slots = xcalloc(t->wall_nslots, sizeof(*t->wall_slots));
	for (size_t i = 0; i < t->nwall; i++) {
		const struct timeline_wall *w = &t->wall[i];
		struct wall_key k = { w->thread, w->stack, w->state, w->cause, w->signal, w->detail };
		size_t slot = wall_hash(&k) & (t->wall_nslots - 1);
		while (t->wall_slots[slot])
			slot = (slot + 1) & (t->wall_nslots - 1);
		t->wall_slots[slot] = (uint32_t)i + 1;
	}
}

static void wall_add(struct timeline *t, const struct wall_key *k, uint64_t ns)
{
	if (!ns)
		return;
	if ((t->nwall + 1) * 2 > t->wall_nslots)
		wall_rehash(t);
	size_t slot = wall_hash(k) & (t->wall_nslots - 1);
	while (t->wall_slots[slot]) {
		struct timeline_wall *w = &t->wall[t->wall_slots[slot] - 1];
		if (wall_matches(w, k)) {
			w->ns += ns;
			return;
		}
		slot = (slot + 1) & (t->wall_nslots - 1);
	}
	GROW(t->wall, t->wall_cap, t->nwall + 1);
	t->wall[t->nwall] = (struct timeline_wall){ .thread = k->thread, .stack = k->stack, .state = k->state,
						    .cause = k->cause, .signal = k->signal, .detail = k->detail, .ns = ns };
	t->wall_slots[slot] = (uint32_t)++t->nwall;
}

/* ---- spans ---- */

static bool on_cpu(const struct thread_state *th)
{
	return th->open.state == TIMELINE_RUNNING || th->open.state == TIMELINE_SIGNAL_HANDLER;
}

static uint8_t innermost_signal(const struct thread_state *th)
{
	if (!th->depth)
		return 0;
	unsigned i = th->depth <= HANDLER_DEPTH_MAX ? th->depth - 1 : HANDLER_DEPTH_MAX - 1;
	return (uint8_t)th->handlers[i];
}

/* The open span ends at time: its time goes to the totals, the wall profile and (keep_spans) the span list. */
static void close_span(struct timeline *t, size_t index, struct thread_state *th, uint64_t time)
{
	struct timeline_span s = th->open;
	uint64_t ns = time > s.start ? time - s.start : 0;
	if (ns) {
		s.end = time;
		th->info.ns[s.state] += ns;
		th->info.cause_ns[s.cause] += ns;
		th->info.nspans++;
		struct wall_key k = { index, s.stack, s.state, s.cause,
				      s.state == TIMELINE_SIGNAL_HANDLER ? s.signal : 0, s.detail };
		if (on_cpu(th) && th->nsamples) {
			/* split over the samples' stacks by period; the rounding's remainder to the last */
			uint64_t total = 0, given = 0;
			for (size_t i = 0; i < th->nsamples; i++)
				total += th->samples[i].period;
			for (size_t i = 0; i < th->nsamples; i++) {
				uint64_t part = i + 1 == th->nsamples ? ns - given
								       : (uint64_t)((double)ns * th->samples[i].period / total);
				if (part > ns - given)
					part = ns - given;
				k.stack = th->samples[i].stack;
				wall_add(t, &k, part);
				given += part;
			}
		} else {
			if (on_cpu(th))
				k.stack = TIMELINE_NO_STACK;
			wall_add(t, &k, ns);
		}
		if (t->opts.keep_spans) {
			struct timeline_span *last = th->nspans ? &th->spans[th->nspans - 1] : NULL;
			if (last && last->end == s.start && last->state == s.state && last->cause == s.cause &&
			    last->detail == s.detail && last->signal == s.signal && last->stack == s.stack &&
			    last->woken == s.woken) {
				last->end = s.end; /* the same state again (a record repeating a sample): one span */
			} else {
				GROW(th->spans, th->spans_cap, th->nspans + 1);
				th->spans[th->nspans++] = s;
			}
		}
	}
	th->nsamples = 0;
	th->info.end = time > th->info.end ? time : th->info.end;
}

/* Close the open span at time and open one in state (with its cause, detail and stack). */
static void open_span(struct timeline *t, size_t index, struct thread_state *th, uint64_t time, uint8_t state,
		      uint8_t cause, uint64_t detail, uint32_t stack, bool woken)
{
	if (time < th->open.start)
		time = th->open.start; /* never backwards: a record a little out of order */
	close_span(t, index, th, time);
	th->open = (struct timeline_span){ .start = time, .state = state, .cause = cause, .detail = detail,
					   .stack = stack, .signal = innermost_signal(th), .woken = woken };
}

static uint8_t on_cpu_state(const struct thread_state *th)
{
	return th->depth ? TIMELINE_SIGNAL_HANDLER : TIMELINE_RUNNING;
}

static size_t new_thread(struct timeline *t, uint32_t pid, uint32_t tid, uint64_t time, uint8_t state)
{
	struct thread_state *th = xcalloc(1, sizeof(*th));
	th->first_index = t->nthreads;
	th->info = (struct timeline_thread){ .pid = pid, .tid = tid, .start = time, .end = time };
	th->alive = true;
	th->open = (struct timeline_span){ .start = time, .state = state, .stack = TIMELINE_NO_STACK };
	GROW(t->threads, t->threads_cap, t->nthreads + 1);
	t->threads[t->nthreads] = th;
	u64_map_put(&t->by_tid, tid, (void *)(uintptr_t)(t->nthreads + 1));
	return t->nthreads++;
}

/* The blocked cause and detail of a switch-out asleep. */
static void blocked_cause(const struct timeline *t, const struct timeline_event *e, uint8_t *cause, uint64_t *detail)
{
	*detail = 0;
	if (e->has_word) {
		*cause = TIMELINE_CAUSE_FUTEX;
		*detail = e->word;
		return;
	}
	*cause = e->stack == TIMELINE_NO_STACK ? TIMELINE_CAUSE_OTHER : timeline_cause_of_stack(t->stacks, e->stack);
}

static void switch_out(struct timeline *t, size_t index, struct thread_state *th, const struct timeline_event *e)
{
	if (e->dead) {
		close_span(t, index, th, e->time);
		th->alive = false;
		th->info.exited = true;
		return;
	}
	uint8_t cause = TIMELINE_CAUSE_NONE;
	uint64_t detail = 0;
	if (e->sleeps)
		blocked_cause(t, e, &cause, &detail);
	uint8_t state = e->sleeps ? TIMELINE_BLOCKED : TIMELINE_RUNNABLE;
	if (on_cpu(th)) {
		open_span(t, index, th, e->time, state, cause, detail, e->stack, false);
		return;
	}
	/* off CPU already (its SWITCH record came first): the sample adds the stack and cause the record lacked */
	if (th->open.stack == TIMELINE_NO_STACK && e->stack != TIMELINE_NO_STACK && !th->open.woken) {
		th->open.stack = e->stack;
		th->open.state = state;
		th->open.cause = cause;
		th->open.detail = detail;
	}
}

void timeline_event(struct timeline *t, const struct timeline_event *e)
{
	uintptr_t slot = (uintptr_t)u64_map_get(&t->by_tid, e->tid);
	struct thread_state *th = slot ? t->threads[slot - 1] : NULL;
	size_t index = slot ? slot - 1 : 0;
	if (t->finished)
		return;
	if (e->time > t->latest)
		t->latest = e->time;
	if (e->kind == TIMELINE_EVENT_SWITCH_IN || e->kind == TIMELINE_EVENT_SWITCH_OUT)
		t->switched = true;
	if (e->kind == TIMELINE_EVENT_FORK) {
		if (!th || !th->alive)
			new_thread(t, e->pid, e->tid, e->time, TIMELINE_RUNNABLE);
		else if (!th->info.pid)
			th->info.pid = e->pid;
		return;
	}
	if (th && !th->alive)
		return; /* after its exit: the last switch-out of a dead task */
	if (!th && e->known_only)
		return;
	if (!th) {
		/* first sight: it lives from here, in the state the event shows */
		uint8_t state;
		switch (e->kind) {
		case TIMELINE_EVENT_EXIT:
			return;
		case TIMELINE_EVENT_SWITCH_OUT:
			if (e->dead)
				return;
			state = e->sleeps ? TIMELINE_BLOCKED : TIMELINE_RUNNABLE;
			break;
		case TIMELINE_EVENT_WAKING:
			state = TIMELINE_RUNNABLE;
			break;
		default:
			state = TIMELINE_RUNNING;
			break;
		}
		index = new_thread(t, e->pid, e->tid, e->time, state);
		th = t->threads[index];
		if (e->kind == TIMELINE_EVENT_SWITCH_OUT) {
			uint8_t cause = TIMELINE_CAUSE_NONE;
			if (e->sleeps)
				blocked_cause(t, e, &cause, &th->open.detail);
			th->open.cause = cause;
			th->open.stack = e->stack;
			return;
		}
		th->open.woken = e->kind == TIMELINE_EVENT_WAKING;
	}
	if (!th->info.pid && e->pid)
		th->info.pid = e->pid;
	switch (e->kind) {
	case TIMELINE_EVENT_SWITCH_IN:
		if (!on_cpu(th))
			open_span(t, index, th, e->time, on_cpu_state(th), TIMELINE_CAUSE_NONE, 0, TIMELINE_NO_STACK, false);
		break;
	case TIMELINE_EVENT_SWITCH_OUT:
		switch_out(t, index, th, e);
		break;
	case TIMELINE_EVENT_WAKING:
		if (th->open.state == TIMELINE_BLOCKED)
			open_span(t, index, th, e->time, TIMELINE_RUNNABLE, TIMELINE_CAUSE_NONE, 0, th->open.stack, true);
		break;
	case TIMELINE_EVENT_HANDLER_ENTER:
		if (th->depth < HANDLER_DEPTH_MAX)
			th->handlers[th->depth] = e->signal;
		th->depth++;
		/* a delivery runs in the thread's context: it is on CPU */
		open_span(t, index, th, e->time, TIMELINE_SIGNAL_HANDLER, TIMELINE_CAUSE_NONE, 0, TIMELINE_NO_STACK,
			  false);
		break;
	case TIMELINE_EVENT_HANDLER_EXIT:
		if (th->depth)
			th->depth--;
		if (on_cpu(th))
			open_span(t, index, th, e->time, on_cpu_state(th), TIMELINE_CAUSE_NONE, 0, TIMELINE_NO_STACK,
				  false);
		else
			th->open.signal = innermost_signal(th);
		break;
	case TIMELINE_EVENT_CPU_SAMPLE:
		if (!on_cpu(th)) /* its switch-in was not recorded: it runs since this sample */
			open_span(t, index, th, e->time, on_cpu_state(th), TIMELINE_CAUSE_NONE, 0, TIMELINE_NO_STACK,
				  false);
		if (th->open.stack == TIMELINE_NO_STACK)
			th->open.stack = e->stack;
		GROW(th->samples, th->samples_cap, th->nsamples + 1);
		th->samples[th->nsamples++] = (struct span_sample){ e->stack, e->period ? e->period : 1 };
		break;
	case TIMELINE_EVENT_SEEN:
		if (!on_cpu(th))
			open_span(t, index, th, e->time, on_cpu_state(th), TIMELINE_CAUSE_NONE, 0, TIMELINE_NO_STACK,
				  false);
		break;
	case TIMELINE_EVENT_EXIT:
		close_span(t, index, th, e->time);
		th->alive = false;
		th->info.exited = true;
		break;
	case TIMELINE_EVENT_FORK:
		break;
	}
	if (e->time > th->info.end)
		th->info.end = e->time;
}

void timeline_add_mark(struct timeline *t, uint32_t tid, const struct timeline_mark *m)
{
	uintptr_t slot = (uintptr_t)u64_map_get(&t->by_tid, tid);
	if (t->finished || !t->opts.keep_spans || !slot || !t->threads[slot - 1]->alive)
		return;
	struct thread_state *th = t->threads[slot - 1];
	GROW(th->marks, th->marks_cap, th->nmarks + 1);
	th->marks[th->nmarks++] = *m;
}

static int compare_threads(const void *a, const void *b)
{
	const struct thread_state *x = *(struct thread_state *const *)a, *y = *(struct thread_state *const *)b;
	if (x->info.pid != y->info.pid)
		return x->info.pid < y->info.pid ? -1 : 1;
	if (x->info.tid != y->info.tid)
		return x->info.tid < y->info.tid ? -1 : 1;
	return x->info.start < y->info.start ? -1 : x->info.start > y->info.start;
}

void timeline_finish(struct timeline *t, uint64_t end)
{
	if (t->finished)
		return;
	if (!t->switched)
		forget_threads(t);
	if (end < t->latest)
		end = t->latest;
	for (size_t i = 0; i < t->nthreads; i++) {
		struct thread_state *th = t->threads[i];
		if (th->alive)
			close_span(t, i, th, end > th->open.start ? end : th->open.start);
		th->info.end = th->alive ? (end > th->open.start ? end : th->open.start) : th->info.end;
		th->alive = false;
		free(th->samples);
		th->samples = NULL;
		th->nsamples = th->samples_cap = 0;
		/* the thread's life is its spans' */
		uint64_t sum = 0;
		for (int s = 0; s < TIMELINE_STATES; s++)
			sum += th->info.ns[s];
		th->info.end = th->info.start + sum;
	}
	/* by pid, tid: the wall entries follow their threads to their new places */
	size_t *place = xmalloc((t->nthreads + 1) * sizeof(*place));
	sort_items(t->threads, t->nthreads, sizeof(*t->threads), compare_threads);
	for (size_t i = 0; i < t->nthreads; i++)
		place[t->threads[i]->first_index] = i;
	for (size_t i = 0; i < t->nwall; i++)
		t->wall[i].thread = place[t->wall[i].thread];
	free(place);
	t->finished = true;
}

size_t timeline_thread_count(const struct timeline *t)
{
	return t ? t->nthreads : 0;
}

const struct timeline_thread *timeline_thread(const struct timeline *t, size_t i)
{
	return &t->threads[i]->info;
}

const struct timeline_span *timeline_spans(const struct timeline *t, size_t i, size_t *n)
{
	*n = t->threads[i]->nspans;
	return t->threads[i]->spans;
}

const struct timeline_mark *timeline_marks(const struct timeline *t, size_t i, size_t *n)
{
	*n = t->threads[i]->nmarks;
	return t->threads[i]->marks;
}

size_t timeline_wall_count(const struct timeline *t)
{
	return t ? t->nwall : 0;
}

const struct timeline_wall *timeline_wall_entry(const struct timeline *t, size_t i)
{
	return &t->wall[i];
}
