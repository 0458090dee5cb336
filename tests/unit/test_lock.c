/*
 * test_lock.c: the lock collector's contention tracker (collectors/lock_tracker.c
 * through sigprof/lock.h).
 *
 * Each test feeds a synthetic sequence of lock:contention_begin/end hits,
 * times in nanoseconds chosen so the expected figures can be worked out by
 * hand in the comment beside each check: wait = end - begin on the same
 * thread for the same lock address.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/lock.h"

#define TID 100
#define OTHER 200
#define LOCK_A 0xffff888100001000ull
#define LOCK_B 0xffff888100002000ull

/* One step of a synthetic sequence: a begin (with its stack and path) or an end (with its result). */
struct step {
	enum lock_event_kind kind;
	uint32_t tid;
	uint64_t addr, time;
	uint32_t stack; /* begin */
	int path;       /* begin */
	int ret;        /* end */
};
#define BEGIN(tid, addr, time, stack, path) { LOCK_EVENT_BEGIN, tid, addr, time, stack, path, 0 }
#define END(tid, addr, time) { LOCK_EVENT_END, tid, addr, time, 0, 0, 0 }
#define END_RET(tid, addr, time, ret) { LOCK_EVENT_END, tid, addr, time, 0, 0, ret }

static void feed_steps(struct lock_tracker *t, const struct step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct step *s = &steps[i];
		struct lock_event e = { .kind = s->kind, .time = s->time, .pid = 1, .tid = s->tid, .addr = s->addr,
					.flags = LOCK_F_SPIN, .weight = 1, .stack = s->stack, .path = s->path,
					.ret = s->ret };
		struct lock_figures *l = lock_tracker_event(t, &e, NULL);
		cr_assert_eq(l != NULL, s->kind == LOCK_EVENT_BEGIN, "step %zu: a begin returns its lock, an end none", i);
	}
}
/* Feed the steps given as arguments, in order. */
#define FEED(t, ...)                                                           \
	do {                                                                   \
		const struct step steps_[] = { __VA_ARGS__ };                  \
		feed_steps(t, steps_, sizeof(steps_) / sizeof(steps_[0]));     \
	} while (0)

static const struct lock_figures *lock_at(struct lock_tracker *t, uint64_t addr)
{
	const struct lock_figures *l = lock_tracker_lock(t, addr);
	cr_assert_not_null(l, "lock 0x%llx not tracked", (unsigned long long)addr);
	return l;
}

/* A lock's measured waits: how many, their sum and their maximum (ns). */
static void expect_waits(const struct lock_figures *l, uint64_t count, uint64_t total, uint64_t max)
{
	cr_expect_eq(l->wait.count, count, "0x%llx: %llu waits, expected %llu", (unsigned long long)l->addr,
		     (unsigned long long)l->wait.count, (unsigned long long)count);
	cr_expect_eq(l->wait.total, total, "0x%llx: %llu ns waited, expected %llu", (unsigned long long)l->addr,
		     (unsigned long long)l->wait.total, (unsigned long long)total);
	cr_expect_eq(l->wait.max, max, "0x%llx: longest wait %llu ns, expected %llu", (unsigned long long)l->addr,
		     (unsigned long long)l->wait.max, (unsigned long long)max);
}

Test(lock, begin_end_measures_the_wait)
{
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 1000, 7, PATH_FUTEX_WAIT), END(TID, LOCK_A, 1500),
	     BEGIN(TID, LOCK_A, 2000, 7, PATH_FUTEX_WAIT), END(TID, LOCK_A, 4000));
	lock_tracker_finish(t);
	const struct lock_figures *l = lock_at(t, LOCK_A);
	cr_expect_eq(l->contentions, 2);
	expect_waits(l, 2, 2500 /* 500 + 2000 */, 2000);
	cr_expect_eq(l->unmatched, 0);
	cr_expect_eq(l->path_wait[PATH_FUTEX_WAIT], 2500);
	cr_expect_eq(lock_tracker_path_wait(t, PATH_FUTEX_WAIT), 2500);
	cr_expect_eq(lock_tracker_path_contentions(t, PATH_FUTEX_WAIT), 2);
	cr_expect_eq(lock_figures_path(l), PATH_FUTEX_WAIT);
	cr_assert_eq(l->nstacks, 1);
	cr_expect_eq(l->stacks[0].stack, 7);
	cr_expect_eq(l->stacks[0].contentions, 2);
	cr_expect_eq(l->stacks[0].wait_total, 2500);
	lock_tracker_free(t);
}

/* Stacks 7 and 8 complete to 9 at the end of the load, stack 5 stays: 7 and 8 are one row of 9. */
static uint32_t completed_to_9(void *ctx, uint32_t stack)
{
	(void)ctx;
	return stack == 7 || stack == 8 ? 9 : stack;
}

Test(lock, stacks_completed_at_the_end_of_the_load_are_one_row)
{
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 1000, 7, PATH_OTHER), END(TID, LOCK_A, 1500),
	     BEGIN(TID, LOCK_A, 2000, 8, PATH_OTHER), END(TID, LOCK_A, 4000),
	     BEGIN(TID, LOCK_A, 5000, 5, PATH_OTHER), END(TID, LOCK_A, 5100),
	     BEGIN(TID, LOCK_A, 6000, 8, PATH_OTHER), END(TID, LOCK_A, 6300));
	lock_tracker_remap_stacks(t, completed_to_9, NULL);
	lock_tracker_finish(t);
	const struct lock_figures *l = lock_at(t, LOCK_A);
	cr_assert_eq(l->nstacks, 2, "%zu rows: 7 and 8 are 9's", l->nstacks);
	cr_expect_eq(l->stacks[0].stack, 9);
	cr_expect_eq(l->stacks[0].contentions, 3);
	cr_expect_eq(l->stacks[0].wait_total, 500 + 2000 + 300);
	cr_expect_eq(l->stacks[1].stack, 5);
	cr_expect_eq(l->stacks[1].contentions, 1);
	cr_expect_eq(l->stacks[1].wait_total, 100);
	cr_expect_eq(l->contentions, 4, "the lock's own figures do not change");
	lock_tracker_free(t);
}

Test(lock, nesting_closes_the_innermost_first)
{
	/* A mutex's slow path spins on its wait_lock: B inside A on one thread. */
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 1000, 1, PATH_OTHER), BEGIN(TID, LOCK_B, 1100, 2, PATH_OTHER),
	     END(TID, LOCK_B, 1150) /* B: 50 */, END(TID, LOCK_A, 3000) /* A: 2000 */);
	lock_tracker_finish(t);
	expect_waits(lock_at(t, LOCK_A), 1, 2000, 2000);
	expect_waits(lock_at(t, LOCK_B), 1, 50, 50);
	cr_expect_eq(lock_at(t, LOCK_A)->unmatched + lock_at(t, LOCK_B)->unmatched, 0);
	cr_expect_eq(lock_tracker_orphan_ends(t), 0);
	lock_tracker_free(t);
}

Test(lock, threads_are_apart_and_migration_does_not_matter)
{
	/*
	 * Two threads contend A at once; TID migrates to another CPU between its
	 * begin and end (the tracker keys threads, never CPUs, so nothing changes).
	 */
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 1000, 1, PATH_FUTEX_WAIT), BEGIN(OTHER, LOCK_A, 1200, 2, PATH_FUTEX_WAKE),
	     END(OTHER, LOCK_A, 1300) /* OTHER: 100 */, END(TID, LOCK_A, 1900) /* TID: 900, after a migration */);
	lock_tracker_finish(t);
	const struct lock_figures *l = lock_at(t, LOCK_A);
	expect_waits(l, 2, 1000, 900);
	cr_expect_eq(l->path_wait[PATH_FUTEX_WAIT], 900);
	cr_expect_eq(l->path_wait[PATH_FUTEX_WAKE], 100);
	cr_expect_eq(lock_figures_path(l), PATH_FUTEX_WAIT);
	lock_tracker_free(t);
}

Test(lock, a_lost_end_is_counted_not_measured)
{
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, /* an inner lock whose end was lost, closed by the outer end */
	     BEGIN(TID, LOCK_A, 6000, 1, PATH_OTHER), BEGIN(TID, LOCK_B, 6100, 1, PATH_OTHER),
	     END(TID, LOCK_A, 6300) /* A: 300; B unmatched */,
	     /* an end whose begin was lost */
	     END(OTHER, LOCK_A, 7000),
	     /* a begin still open at the end of the recording */
	     BEGIN(OTHER, LOCK_B, 8000, 1, PATH_OTHER));
	lock_tracker_finish(t);
	const struct lock_figures *a = lock_at(t, LOCK_A), *b = lock_at(t, LOCK_B);
	cr_expect_eq(a->contentions, 1);
	expect_waits(a, 1, 300, 300);
	cr_expect_eq(a->unmatched, 0);
	cr_expect_eq(b->contentions, 2);
	expect_waits(b, 0, 0, 0);
	cr_expect_eq(b->unmatched, 2);
	cr_expect_eq(lock_tracker_orphan_ends(t), 1);
	lock_tracker_free(t);
}

Test(lock, a_mutex_that_spins_then_sleeps_is_one_contention)
{
	/*
	 * The kernel's mutex slow path: begin (MUTEX|SPIN) while it spins on the
	 * owner, begin (MUTEX) again when it goes to sleep, one end.  Inside the
	 * spin, the wait_lock (B) was contended and released.
	 */
	struct lock_tracker *t = lock_tracker_new();
	struct lock_event spin = { .kind = LOCK_EVENT_BEGIN, .time = 1000, .tid = TID, .addr = LOCK_A,
				   .flags = LOCK_F_MUTEX | LOCK_F_SPIN, .weight = 1, .stack = 1, .path = PATH_OTHER };
	struct lock_event sleep = spin;
	sleep.time = 1500;
	sleep.flags = LOCK_F_MUTEX;
	cr_assert_not_null(lock_tracker_event(t, &spin, NULL));
	FEED(t, BEGIN(TID, LOCK_B, 1100, 2, PATH_OTHER), END(TID, LOCK_B, 1120));
	cr_assert_not_null(lock_tracker_event(t, &sleep, NULL));
	FEED(t, END(TID, LOCK_A, 9000));
	lock_tracker_finish(t);
	const struct lock_figures *a = lock_at(t, LOCK_A);
	cr_expect_eq(a->contentions, 1);
	cr_expect_eq(a->rebegins, 1);
	expect_waits(a, 1, 8000 /* from the first begin */, 8000);
	cr_expect_eq(a->unmatched, 0);
	cr_expect(a->mixed_flags);
	cr_expect_eq(a->flags_seen, LOCK_F_MUTEX | LOCK_F_SPIN);
	cr_expect_eq(lock_at(t, LOCK_B)->wait.total, 20);
	lock_tracker_free(t);
}

Test(lock, thread_exit_drops_its_pending_contentions)
{
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 1000, 1, PATH_OTHER));
	lock_tracker_thread_exit(t, TID);
	FEED(t, END(TID, LOCK_A, 2000)); /* a new thread with the reused tid: no begin to close */
	lock_tracker_finish(t);
	cr_expect_eq(lock_at(t, LOCK_A)->unmatched, 1);
	cr_expect_eq(lock_at(t, LOCK_A)->wait.count, 0);
	cr_expect_eq(lock_tracker_orphan_ends(t), 1);
	lock_tracker_free(t);
}

Test(lock, an_end_takes_the_path_of_its_begin)
{
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 1000, 1, PATH_SIGNAL_DELIVER));
	cr_expect_eq(lock_tracker_pending_path(t, TID, LOCK_A), PATH_SIGNAL_DELIVER);
	cr_expect_eq(lock_tracker_pending_path(t, TID, LOCK_B), -1);
	cr_expect_eq(lock_tracker_pending_path(t, OTHER, LOCK_A), -1);
	FEED(t, END_RET(TID, LOCK_A, 1010, -4 /* -EINTR */));
	cr_expect_eq(lock_tracker_pending_path(t, TID, LOCK_A), -1);
	cr_expect_eq(lock_at(t, LOCK_A)->failed, 1);
	lock_tracker_free(t);
}

Test(lock, futex_words_of_a_bucket_lock)
{
	/* Two words hashing to one bucket lock: each gets its contentions and waits. */
	struct lock_tracker *t = lock_tracker_new();
	uint64_t times[][2] = { { 100, 150 }, { 200, 260 }, { 300, 400 } };
	uint64_t words[] = { 0x1000, 0x2000, 0x1000 };
	struct lock_futex_word *w;
	for (int i = 0; i < 3; i++) {
		struct lock_event e = { .kind = LOCK_EVENT_BEGIN, .time = times[i][0], .pid = 1, .tid = TID,
					.addr = LOCK_A, .flags = LOCK_F_SPIN, .weight = 1, .stack = 1,
					.path = PATH_FUTEX_WAIT, .in_futex = true, .futex_pid = 1, .futex_uaddr = words[i] };
		cr_assert_not_null(lock_tracker_event(t, &e, &w));
		cr_assert_not_null(w);
		cr_expect_eq(w->uaddr, words[i]);
		FEED(t, END(TID, LOCK_A, times[i][1]));
	}
	lock_tracker_finish(t);
	const struct lock_figures *l = lock_at(t, LOCK_A);
	cr_assert_eq(l->nwords, 2);
	cr_expect_eq(l->words[0].uaddr, 0x1000); /* most contentions first */
	cr_expect_eq(l->words[0].contentions, 2);
	cr_expect_eq(l->words[0].wait_total, 150); /* 50 + 100 */
	cr_expect_eq(l->words[1].uaddr, 0x2000);
	cr_expect_eq(l->words[1].wait_total, 60);
	lock_tracker_free(t);
}

Test(lock, weighted_begins_and_sorting)
{
	struct lock_tracker *t = lock_tracker_new();
	struct lock_event e = { .kind = LOCK_EVENT_BEGIN, .time = 100, .tid = TID, .addr = LOCK_B, .flags = LOCK_F_MUTEX,
				.weight = 4, .stack = LOCK_NO_STACK, .path = PATH_OTHER };
	lock_tracker_event(t, &e, NULL);
	FEED(t, END(TID, LOCK_B, 200) /* stands for 4 contentions of 100 */, BEGIN(TID, LOCK_A, 300, 1, PATH_OTHER),
	     END(TID, LOCK_A, 310));
	lock_tracker_finish(t);
	struct lock_figures *const *locks;
	cr_assert_eq(lock_tracker_locks(t, &locks), 2);
	cr_expect_eq(locks[0]->addr, LOCK_B); /* 400 ns of wait before 10 */
	cr_expect_eq(locks[0]->contentions, 4);
	cr_expect_eq(locks[0]->recorded, 1);
	cr_expect_eq(locks[0]->wait.count, 4);
	cr_expect_eq(locks[0]->wait.total, 400);
	cr_expect_eq(locks[0]->nstacks, 0);
	lock_tracker_free(t);
}

Test(lock, kinds_and_cachelines)
{
	char buf[32];
	cr_expect_str_eq(lock_kind_name(LOCK_F_SPIN, buf, sizeof(buf)), "spin");
	cr_expect_str_eq(lock_kind_name(LOCK_F_SPIN | LOCK_F_READ, buf, sizeof(buf)), "rwlock:R");
	cr_expect_str_eq(lock_kind_name(LOCK_F_WRITE, buf, sizeof(buf)), "rwsem:W");
	cr_expect_str_eq(lock_kind_name(LOCK_F_MUTEX, buf, sizeof(buf)), "mutex");
	cr_expect_str_eq(lock_kind_name(LOCK_F_PERCPU | LOCK_F_READ, buf, sizeof(buf)), "percpu-rwsem:R");
	cr_expect_str_eq(lock_kind_name(0x40, buf, sizeof(buf)), "flags=0x40");
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A + 0x44, 1, 1, PATH_OTHER));
	cr_expect(lock_tracker_has_lock_in(t, LOCK_A + 0x40, LOCK_A + 0x80));
	cr_expect_not(lock_tracker_has_lock_in(t, LOCK_A, LOCK_A + 0x40));
	cr_expect_not(lock_tracker_has_lock_in(t, LOCK_A + 0x80, LOCK_A + 0xc0));
	lock_tracker_free(t);
}

/* A begin inside a futex call on word uaddr, gate (weight 1) or weighted (a rate bound's alternate). */
static void futex_begin(struct lock_tracker *t, uint32_t tid, uint64_t addr, uint64_t time, uint64_t uaddr,
			uint64_t weight, bool weighted)
{
	struct lock_event e = { .kind = LOCK_EVENT_BEGIN, .time = time, .pid = 1, .tid = tid, .addr = addr,
				.flags = LOCK_F_SPIN, .weight = weight, .weighted = weighted, .stack = weighted ? 2 : 1,
				.path = PATH_FUTEX_WAIT, .in_futex = true, .futex_pid = 1, .futex_uaddr = uaddr };
	cr_assert_not_null(lock_tracker_event(t, &e, NULL));
}

static void end_at(struct lock_tracker *t, uint32_t tid, uint64_t addr, uint64_t time, bool weighted)
{
	struct lock_event e = { .kind = LOCK_EVENT_END, .time = time, .pid = 1, .tid = tid, .addr = addr,
				.weight = weighted ? 10 : 1, .weighted = weighted };
	cr_assert_null(lock_tracker_event(t, &e, NULL));
}

/*
 * Gate samples (every hit while under the bound) and weighted samples (above
 * it) of one lock: the weighted begin adds its weight to the contentions and
 * their estimated part but is never measured; a weighted end is no orphan,
 * and closes a pending gate begin of its thread without measuring it.
 */
Test(lock, gate_and_weighted_samples_mixed)
{
	struct lock_tracker *t = lock_tracker_new();
	futex_begin(t, TID, LOCK_A, 100, 0x1000, 1, false);
	end_at(t, TID, LOCK_A, 150, false);               /* measured: 50 */
	futex_begin(t, OTHER, LOCK_A, 200, 0x2000, 10, true); /* stands for 10, no wait */
	end_at(t, OTHER, LOCK_A, 260, true);              /* another hit's end, maybe: not paired, not an orphan */
	futex_begin(t, TID, LOCK_A, 300, 0x1000, 1, false);
	end_at(t, TID, LOCK_A, 340, true);                /* its end fell above the bound: counted, not measured */
	lock_tracker_finish(t);
	const struct lock_figures *l = lock_at(t, LOCK_A);
	cr_expect_eq(l->contentions, 12);
	cr_expect_eq(l->estimated, 10);
	cr_expect_eq(l->weighted_samples, 1);
	cr_expect_eq(l->recorded, 3);
	cr_expect_eq(l->unmeasured, 1);
	cr_expect_eq(l->unmatched, 0);
	cr_expect_eq(l->rebegins, 0);
	expect_waits(l, 1, 50, 50);
	cr_expect_eq(l->path_contentions[PATH_FUTEX_WAIT], 12);
	cr_expect_eq(l->path_wait[PATH_FUTEX_WAIT], 50);
	cr_expect_eq(lock_tracker_orphan_ends(t), 0);
	cr_expect_eq(lock_tracker_estimated(t), 10);
	cr_expect_eq(lock_tracker_path_contentions(t, PATH_FUTEX_WAIT), 12);
	/* the weighted stack and word: 10 contentions, all estimated, no wait */
	cr_assert_eq(l->nstacks, 2);
	cr_expect_eq(l->stacks[0].stack, 2);
	cr_expect_eq(l->stacks[0].contentions, 10);
	cr_expect_eq(l->stacks[0].estimated, 10);
	cr_expect_eq(l->stacks[0].wait_total, 0);
	cr_expect_eq(l->stacks[1].contentions, 2);
	cr_expect_eq(l->stacks[1].estimated, 0);
	cr_assert_eq(l->nwords, 2);
	cr_expect_eq(l->words[0].uaddr, 0x2000);
	cr_expect_eq(l->words[0].estimated, 10);
	cr_expect_eq(l->words[0].wait_total, 0);
	cr_expect_eq(l->words[1].uaddr, 0x1000);
	cr_expect_eq(l->words[1].contentions, 2);
	cr_expect_eq(l->words[1].estimated, 0);
	cr_expect_eq(l->words[1].wait_total, 50);
	/* a gate end with nothing pending is an orphan (its begin was lost) */
	end_at(t, TID, LOCK_A, 400, false);
	cr_expect_eq(lock_tracker_orphan_ends(t), 1);
	lock_tracker_free(t);
}

/*
 * A spinlock fires one begin per wait: a second begin of a spinlock its
 * thread still has pending means the first one's end was not recorded (a
 * switch to the weighted side in between): a new contention, not a rebegin.
 */
Test(lock, a_spinlock_begun_again_lost_its_end)
{
	struct lock_tracker *t = lock_tracker_new();
	FEED(t, BEGIN(TID, LOCK_A, 100, 1, PATH_OTHER), BEGIN(TID, LOCK_A, 200, 1, PATH_OTHER), END(TID, LOCK_A, 250));
	lock_tracker_finish(t);
	const struct lock_figures *l = lock_at(t, LOCK_A);
	cr_expect_eq(l->contentions, 2);
	cr_expect_eq(l->rebegins, 0);
	cr_expect_eq(l->unmatched, 1);
	expect_waits(l, 1, 50, 50);
	lock_tracker_free(t);
}

/*
 * Per futex word across locks: word X went through bucket locks A and B, Y
 * through A, Z through B, W through C alone; W and Y also through D, a lock
 * that is no bucket lock (a runqueue lock in a wakeup).  X shares a bucket
 * lock with Y and with Z (2), Y and Z with X (1 each), W with none.
 */
Test(lock, per_futex_word_and_the_words_sharing_a_bucket_lock)
{
	struct lock_tracker *t = lock_tracker_new();
	const uint64_t lock_c = 0xffff888100003000ull, lock_d = 0xffff888100004000ull;
	const uint64_t X = 0x1000, Y = 0x2000, Z = 0x3000, W = 0x4000;
	uint64_t time = 1000;
	struct {
		uint64_t lock, word, wait;
		int times;
	} calls[] = { { LOCK_A, X, 10, 3 }, { LOCK_B, X, 20, 1 }, { LOCK_A, Y, 5, 2 }, { LOCK_B, Z, 7, 1 },
		      { lock_c, W, 1, 4 },  { lock_d, W, 2, 1 },  { lock_d, Y, 3, 1 } };
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		for (int k = 0; k < calls[i].times; k++) {
			futex_begin(t, TID, calls[i].lock, time, calls[i].word, 1, false);
			end_at(t, TID, calls[i].lock, time + calls[i].wait, false);
			time += 100;
		}
	futex_begin(t, OTHER, LOCK_B, time, Z, 6, true); /* weighted: 6 estimated contentions of Z on B */
	lock_tracker_finish(t);
	/* the caller names the locks: A, B and C are bucket locks, D is not */
	struct lock_figures *const *locks;
	size_t nlocks = lock_tracker_locks(t, &locks);
	cr_assert_eq(nlocks, 4);
	for (size_t i = 0; i < nlocks; i++)
		locks[i]->bucket = locks[i]->addr != lock_d;
	struct lock_word_figures *words;
	size_t n = lock_tracker_futex_words(t, &words);
	cr_assert_eq(n, 4);
	/* most contentions first: Z (1 + 6), W (4 + 1), X (3 + 1), Y (2 + 1) */
	cr_expect_eq(words[0].uaddr, Z);
	cr_expect_eq(words[0].contentions, 7);
	cr_expect_eq(words[0].estimated, 6);
	cr_expect_eq(words[0].wait_total, 7);
	cr_expect_eq(words[0].sharing, 1);
	cr_expect_eq(words[1].uaddr, W);
	cr_expect_eq(words[1].contentions, 5);
	cr_expect_eq(words[1].wait_total, 6);
	cr_expect_eq(words[1].nlocks, 2);
	cr_expect_eq(words[1].sharing, 0, "D served W and Y, but D is no bucket lock");
	cr_expect_eq(words[2].uaddr, X);
	cr_expect_eq(words[2].contentions, 4);
	cr_expect_eq(words[2].wait_total, 50); /* 3 x 10 on A, 20 on B */
	cr_assert_eq(words[2].nlocks, 2);
	cr_expect_eq(words[2].locks[0].lock->addr, LOCK_A); /* 3 contentions on A, 1 on B */
	cr_expect_eq(words[2].locks[0].contentions, 3);
	cr_expect_eq(words[2].locks[1].lock->addr, LOCK_B);
	cr_expect_eq(words[2].locks[1].wait_total, 20);
	cr_expect_eq(words[2].sharing, 2);
	cr_expect_eq(words[3].uaddr, Y);
	cr_expect_eq(words[3].contentions, 3);
	cr_expect_eq(words[3].wait_total, 13);
	cr_expect_eq(words[3].sharing, 1);
	lock_word_figures_free(words, n);
	lock_tracker_free(t);
}
