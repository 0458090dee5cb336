/*
 * test_futex.c: the futex collector's pure parts (include/sigprof/collectors/futex_op.h,
 * futex_tracker.h) and the naming of data addresses (proc_table_data_name,
 * symbolize.h).
 *
 * The op decoder is checked against the op numbers and flag bits of
 * futex(2) and <linux/futex.h>, for every command and flag combination.
 * The tracker is fed synthetic entry/exit sequences whose outcome follows
 * from the rules in docs/futex.md: a pair of period-1 samples is exact, a
 * weight above 1 or an unpaired side makes the word estimated.  Data
 * addresses are named in this very test process, from its own
 * /proc/self/maps, so the kernel's real layout of .data, .bss, heap and
 * stack is what gets named.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/futex_op.h"
#include "sigprof/collectors/futex_tracker.h"
#include "sigprof/collectors/stack_lender.h"
#include "sigprof/model/paths.h"
#include "sigprof/symbolize/symbolize.h"
#include "unit_helpers.h"

/* ---- the op decoder ---- */

struct op_case {
	int cmd;            /* as <linux/futex.h> numbers it */
	const char *name;
	int path;           /* docs/paths.md */
	bool blocks;
};

static const struct op_case op_cases[] = {
	{ FUTEX_WAIT, "WAIT", PATH_FUTEX_WAIT, true },
	{ FUTEX_WAKE, "WAKE", PATH_FUTEX_WAKE, false },
	{ FUTEX_FD, "FD", PATH_FUTEX_OTHER, false },
	{ FUTEX_REQUEUE, "REQUEUE", PATH_FUTEX_REQUEUE, false },
	{ FUTEX_CMP_REQUEUE, "CMP_REQUEUE", PATH_FUTEX_REQUEUE, false },
	{ FUTEX_WAKE_OP, "WAKE_OP", PATH_FUTEX_WAKE, false },
	{ FUTEX_LOCK_PI, "LOCK_PI", PATH_FUTEX_OTHER, true },
	{ FUTEX_UNLOCK_PI, "UNLOCK_PI", PATH_FUTEX_OTHER, false },
	{ FUTEX_TRYLOCK_PI, "TRYLOCK_PI", PATH_FUTEX_OTHER, false },
	{ FUTEX_WAIT_BITSET, "WAIT_BITSET", PATH_FUTEX_WAIT, true },
	{ FUTEX_WAKE_BITSET, "WAKE_BITSET", PATH_FUTEX_WAKE, false },
	{ FUTEX_WAIT_REQUEUE_PI, "WAIT_REQUEUE_PI", PATH_FUTEX_WAIT, true },
	{ FUTEX_CMP_REQUEUE_PI, "CMP_REQUEUE_PI", PATH_FUTEX_REQUEUE, false },
	{ 13 /* FUTEX_LOCK_PI2, Linux 5.14 */, "LOCK_PI2", PATH_FUTEX_OTHER, true },
};

Test(futex, every_op_and_flag_combination_is_named)
{
	static const struct {
		unsigned flags;
		const char *suffix;
	} flag_cases[] = {
		{ 0, "" },
		{ FUTEX_PRIVATE_FLAG, "|PRIVATE" },
		{ FUTEX_CLOCK_REALTIME, "|CLOCK_REALTIME" },
		{ FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, "|PRIVATE|CLOCK_REALTIME" },
	};
	char buf[64], expect[64];
	for (size_t i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
		for (size_t f = 0; f < sizeof(flag_cases) / sizeof(flag_cases[0]); f++) {
			uint32_t raw = (uint32_t)op_cases[i].cmd | flag_cases[f].flags;
			struct futex_op op = futex_op_decode(raw);
			cr_assert_eq((int)op.id, op_cases[i].cmd, "op %#x decoded as %d", raw, op.id);
			cr_assert_eq(op.private_flag, (flag_cases[f].flags & FUTEX_PRIVATE_FLAG) != 0, "op %#x", raw);
			cr_assert_eq(op.clock_realtime, (flag_cases[f].flags & FUTEX_CLOCK_REALTIME) != 0, "op %#x", raw);
			cr_assert_eq(op.raw, raw);
			cr_assert_str_eq(futex_op_name(op.id), op_cases[i].name);
			snprintf(expect, sizeof(expect), "%s%s", op_cases[i].name, flag_cases[f].suffix);
			cr_assert_str_eq(futex_op_format(&op, buf, sizeof(buf)), expect, "op %#x", raw);
		}
	}
}

Test(futex, unknown_commands_keep_their_number_and_flags)
{
	char buf[64];
	struct futex_op op = futex_op_decode(14 | FUTEX_PRIVATE_FLAG);
	cr_assert_eq(op.id, FOP_UNKNOWN);
	cr_assert(op.private_flag);
	cr_assert_str_eq(futex_op_format(&op, buf, sizeof(buf)), "OP_0xe|PRIVATE");
	/* a bit the kernel does not strip is part of the command: not a WAKE */
	op = futex_op_decode(FUTEX_WAKE | 0x200);
	cr_assert_eq(op.id, FOP_UNKNOWN);
	cr_assert_str_eq(futex_op_format(&op, buf, sizeof(buf)), "OP_0x201");
	/* a short buffer is cut, never overrun */
	op = futex_op_decode(FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
	char small[8];
	futex_op_format(&op, small, sizeof(small));
	cr_assert_eq(strlen(small), sizeof(small) - 1);
	cr_assert_str_eq(futex_op_name((enum futex_op_id)99), "UNKNOWN");
}

Test(futex, paths_roles_and_blocking_follow_the_op)
{
	for (size_t i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
		enum futex_op_id id = (enum futex_op_id)op_cases[i].cmd;
		cr_assert_eq(futex_op_path(id), op_cases[i].path, "%s path %s", op_cases[i].name,
			     path_name(futex_op_path(id)));
		cr_assert_eq(futex_op_blocks(id), op_cases[i].blocks, "%s", op_cases[i].name);
		if (op_cases[i].blocks)
			cr_assert_eq(futex_op_role(id), FUTEX_ROLE_WAITER, "%s", op_cases[i].name);
	}
	cr_assert_eq(futex_op_role(FOP_WAKE), FUTEX_ROLE_WAKER);
	cr_assert_eq(futex_op_role(FOP_CMP_REQUEUE), FUTEX_ROLE_WAKER);
	cr_assert_eq(futex_op_role(FOP_UNLOCK_PI), FUTEX_ROLE_WAKER);
	cr_assert_eq(futex_op_role(FOP_TRYLOCK_PI), FUTEX_ROLE_NONE);
	/* the futex2 system calls */
	cr_assert_str_eq(futex_op_name(FOP_SYS_WAIT), "futex_wait");
	cr_assert_str_eq(futex_op_name(FOP_SYS_WAKE), "futex_wake");
	cr_assert_str_eq(futex_op_name(FOP_SYS_REQUEUE), "futex_requeue");
	cr_assert_str_eq(futex_op_name(FOP_SYS_WAITV), "futex_waitv");
	cr_assert_eq(futex_op_path(FOP_SYS_WAIT), PATH_FUTEX_WAIT);
	cr_assert_eq(futex_op_path(FOP_SYS_WAITV), PATH_FUTEX_WAIT);
	cr_assert_eq(futex_op_path(FOP_SYS_WAKE), PATH_FUTEX_WAKE);
	cr_assert_eq(futex_op_path(FOP_SYS_REQUEUE), PATH_FUTEX_REQUEUE);
	cr_assert_eq(futex_op_path(FOP_UNKNOWN), PATH_FUTEX_OTHER);
	cr_assert(futex_op_blocks(FOP_SYS_WAIT) && futex_op_blocks(FOP_SYS_WAITV));
	cr_assert(!futex_op_blocks(FOP_SYS_WAKE) && !futex_op_blocks(FOP_TRYLOCK_PI));
}

Test(futex, errno_names)
{
	char buf[32];
	cr_assert_str_eq(futex_errno_name(EAGAIN, buf, sizeof(buf)), "EAGAIN");
	cr_assert_str_eq(futex_errno_name(ETIMEDOUT, buf, sizeof(buf)), "ETIMEDOUT");
	cr_assert_str_eq(futex_errno_name(EINTR, buf, sizeof(buf)), "EINTR");
	cr_assert_str_eq(futex_errno_name(EDEADLK, buf, sizeof(buf)), "EDEADLK");
	cr_assert_str_eq(futex_errno_name(512, buf, sizeof(buf)), "ERESTARTSYS");
	cr_assert_str_eq(futex_errno_name(516, buf, sizeof(buf)), "ERESTART_RESTARTBLOCK");
	cr_assert_str_eq(futex_errno_name(4000, buf, sizeof(buf)), "E4000");
}

/* ---- the tracker ---- */

static struct futex_call enter(uint32_t pid, uint32_t tid, uint64_t time, uint32_t op, uint64_t uaddr,
			       uint32_t stack, uint64_t period)
{
	return (struct futex_call){ .enter = true, .pid = pid, .tid = tid, .time = time, .period = period,
				    .op = futex_op_decode(op), .uaddr = uaddr, .stack = stack,
				    .syscall = FOP_UNKNOWN };
}

static struct futex_call leave(uint32_t pid, uint32_t tid, uint64_t time, int64_t ret, uint64_t period)
{
	return (struct futex_call){ .pid = pid, .tid = tid, .time = time, .period = period, .ret = ret,
				    .syscall = FOP_UNKNOWN };
}

static void feed(struct futex_tracker *t, struct futex_call c)
{
	if (c.enter)
		futex_tracker_enter(t, &c);
	else
		futex_tracker_exit(t, &c);
}

static uint64_t error_count(const struct futex_word *w, int err)
{
	for (size_t i = 0; i < w->nerrors; i++)
		if (w->errors[i].key == err)
			return w->errors[i].count;
	return 0;
}

#define WORD 0x5000u
#define WAIT_PRIV (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define WAKE_PRIV (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)

Test(futex, exact_pairs_give_blocking_time_and_stacks)
{
	struct futex_tracker *t = futex_tracker_new();
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 1));
	feed(t, enter(1, 11, 4000, WAKE_PRIV, WORD, 8, 1));
	feed(t, leave(1, 11, 4500, 1, 1));
	feed(t, leave(1, 10, 5000, 0, 1));
	feed(t, enter(1, 10, 6000, WAIT_PRIV, WORD, 7, 1));
	feed(t, leave(1, 10, 6100, -EAGAIN, 1));
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert_not_null(w);
	cr_assert_eq(w->calls, 3);
	cr_assert_eq(w->ops[FOP_WAIT], 2);
	cr_assert_eq(w->ops[FOP_WAKE], 1);
	cr_assert_eq(w->private_calls, 3);
	cr_assert_eq(w->wait.count, 2, "a failed wait still spent its time in the kernel");
	cr_assert_eq(w->wait.total, 4000 + 100);
	cr_assert_eq(w->wait.max, 4000);
	cr_assert_eq(w->woken, 1);
	cr_assert_eq(error_count(w, EAGAIN), 1);
	cr_assert_not(w->estimated);
	cr_assert_eq(w->unmeasured + w->unfinished, 0);
	cr_assert_eq(w->nwaiters, 1);
	cr_assert_eq(w->waiters[0].stack, 7);
	cr_assert_eq(w->waiters[0].count, 2);
	cr_assert_eq(w->waiters[0].wait.total, w->wait.total, "the waiter stack holds the word's blocking time");
	cr_assert_eq(w->nwakers, 1);
	cr_assert_eq(w->wakers[0].stack, 8);
	const struct futex_op_stats *os = futex_tracker_op(t, FOP_WAIT);
	cr_assert_eq(os->calls, 2);
	cr_assert_eq(os->errors, 1);
	cr_assert_eq(os->wait.count, 2);
	cr_assert_eq(os->wait.max, 4000);
	cr_assert_not(os->estimated);
	uint64_t orphans;
	cr_assert_eq(futex_tracker_unpaired_exits(t, &orphans), 0);
	futex_tracker_free(t);
}

Test(futex, weighted_samples_count_by_weight_and_mark_the_word)
{
	struct futex_tracker *t = futex_tracker_new();
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 5));
	feed(t, leave(1, 10, 2000, -EAGAIN, 3));
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert_eq(w->calls, 5);
	cr_assert_eq(w->ops[FOP_WAIT], 5);
	cr_assert_eq(w->waiters[0].count, 5);
	cr_assert(w->estimated);
	cr_assert_eq(w->wait.count, 0, "a pair with a weighted side is not timed");
	cr_assert_eq(w->unmeasured, 5);
	cr_assert_eq(error_count(w, EAGAIN), 3, "the exit's weight");
	cr_assert(futex_tracker_op(t, FOP_WAIT)->estimated);
	cr_assert_eq(futex_tracker_op(t, FOP_WAIT)->unmeasured, 5);
	futex_tracker_free(t);
}

Test(futex, unmatched_exits)
{
	struct futex_tracker *t = futex_tracker_new();
	/* an exit with nothing known of its thread: counted, charged to no word */
	feed(t, leave(1, 20, 500, -EINTR, 1));
	uint64_t orphans;
	cr_assert_eq(futex_tracker_unpaired_exits(t, &orphans), 1);
	cr_assert_eq(orphans, 1);
	/* a second exit after a paired one: its entry was sampled out; charged to the thread's last word */
	feed(t, enter(1, 20, 1000, WAIT_PRIV, WORD, 7, 1));
	feed(t, leave(1, 20, 1500, 0, 1));
	feed(t, leave(1, 20, 1900, -ETIMEDOUT, 2));
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert_eq(futex_tracker_unpaired_exits(t, &orphans), 3);
	cr_assert_eq(orphans, 1);
	cr_assert_eq(w->calls, 1);
	cr_assert_eq(w->wait.count, 1);
	cr_assert_eq(error_count(w, ETIMEDOUT), 2);
	cr_assert(w->estimated);
	futex_tracker_free(t);
}

Test(futex, a_lost_exit_is_found_by_the_next_entry)
{
	struct futex_tracker *t = futex_tracker_new();
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 1));
	/* its exit was lost; the thread's next call */
	feed(t, enter(1, 10, 9000, WAKE_PRIV, WORD + 4, 8, 1));
	feed(t, leave(1, 10, 9100, 0, 1));
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert(w->estimated);
	cr_assert_eq(w->unmeasured, 1);
	cr_assert_eq(w->wait.count, 0);
	const struct futex_word *other = futex_tracker_word(t, 1, WORD + 4);
	cr_assert_not(other->estimated, "the next call pairs normally");
	cr_assert_eq(other->ops[FOP_WAKE], 1);
	futex_tracker_free(t);
}

Test(futex, an_exit_of_another_system_call_does_not_pair)
{
	struct futex_tracker *t = futex_tracker_new();
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 1));
	struct futex_call c = leave(1, 10, 2000, 0, 1);
	c.syscall = FOP_SYS_WAKE;
	futex_tracker_exit(t, &c);
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert_eq(w->wait.count, 0);
	cr_assert(w->estimated);
	uint64_t orphans;
	cr_assert_eq(futex_tracker_unpaired_exits(t, &orphans), 1);
	cr_assert_eq(orphans, 1);
	futex_tracker_free(t);
}

/*
 * The exit tracepoint's period rises when a wake's exit and the woken
 * thread's exit come close together on one CPU (futex_waiter under --futex
 * sample): a wake left without its exit at the end is not an unfinished
 * wait, so a word's measured + unmeasured + unfinished waits stay its waits.
 */
Test(futex, a_wake_without_its_exit_at_the_end_is_not_an_unfinished_wait)
{
	struct futex_tracker *t = futex_tracker_new();
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 1));
	feed(t, enter(1, 11, 1200, WAKE_PRIV, WORD, 1, 1));
	feed(t, leave(1, 10, 3200, 0, 2));
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert_eq(w->ops[FOP_WAIT], 1);
	cr_assert_eq(w->wait.count + w->unmeasured + w->unfinished, w->ops[FOP_WAIT]);
	cr_assert_eq(w->unfinished, 0);
	cr_assert_eq(futex_tracker_op(t, FOP_WAKE)->unfinished, 0);
	futex_tracker_free(t);
}

Test(futex, threads_exiting_in_a_wait_are_unfinished)
{
	struct futex_tracker *t = futex_tracker_new();
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 1));
	feed(t, enter(1, 11, 1200, WAIT_PRIV, WORD, 7, 1));
	feed(t, leave(1, 11, 3200, 0, 1));
	cr_assert_eq(futex_tracker_thread_op(t, 10), FOP_WAIT);
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, WORD);
	cr_assert_eq(w->calls, 2);
	cr_assert_eq(w->unfinished, 1);
	cr_assert_eq(w->wait.count, 1);
	cr_assert_eq(w->wait.total, 2000);
	cr_assert_not(w->estimated, "nothing was lost or sampled");
	cr_assert_eq(futex_tracker_op(t, FOP_WAIT)->unfinished, 1);
	futex_tracker_free(t);
}

Test(futex, words_are_per_process_and_sorted_by_blocking_time)
{
	struct futex_tracker *t = futex_tracker_new();
	/* pid 1: one long wait; pid 2, same address: many calls, short waits */
	feed(t, enter(1, 10, 0, WAIT_PRIV, WORD, 7, 1));
	feed(t, leave(1, 10, 50000, 0, 1));
	for (int i = 0; i < 10; i++) {
		feed(t, enter(2, 20, 100000 + 100 * (uint64_t)i, WAIT_PRIV, WORD, 9, 1));
		feed(t, leave(2, 20, 100000 + 100 * (uint64_t)i + 10, -EAGAIN, 1));
	}
	/* pid 2, another word: calls but no waits */
	for (int i = 0; i < 20; i++) {
		feed(t, enter(2, 21, 200000 + 100 * (uint64_t)i, WAKE_PRIV, WORD + 8, 8, 1));
		feed(t, leave(2, 21, 200000 + 100 * (uint64_t)i + 10, 0, 1));
	}
	feed(t, enter(2, 21, 300000, WAKE_PRIV, WORD + 16, 8, 1));
	feed(t, leave(2, 21, 300010, 0, 1));
	futex_tracker_finish(t);
	struct futex_word *const *words;
	size_t n = futex_tracker_words(t, &words);
	cr_assert_eq(n, 4);
	cr_assert(words[0]->pid == 1 && words[0]->uaddr == WORD);
	cr_assert(words[1]->pid == 2 && words[1]->uaddr == WORD);
	cr_assert_eq(words[1]->wait.count, 10);
	cr_assert_eq(words[1]->wait.total, 100);
	cr_assert(words[2]->uaddr == WORD + 8 && words[2]->calls == 20, "no waits: by calls");
	cr_assert(words[3]->uaddr == WORD + 16);
	cr_assert_eq(futex_tracker_word(t, 1, WORD)->calls, 1);
	cr_assert_eq(futex_tracker_word(t, 2, WORD)->calls, 10);
	cr_assert_null(futex_tracker_word(t, 3, WORD));
	futex_tracker_free(t);
}

/* A shared call: keyed by (object, offset) whatever its process and address. */
static struct futex_call shared(struct futex_call c, uint64_t object, uint64_t offset)
{
	c.shared = true;
	c.object = object;
	c.offset = offset;
	return c;
}

/*
 * The waiters and wakers of two processes on one shared word (the same
 * object and offset at different addresses) make one word used by both
 * pids, found by either's address; the same address keyed privately, and
 * another offset, are other words.
 */
Test(futex, shared_words_are_keyed_by_object_and_offset)
{
	struct futex_tracker *t = futex_tracker_new();
	const uint64_t object = 0xfeed, parent_addr = 0x7000, child_addr = 0x9000;
	feed(t, shared(enter(1, 10, 0, FUTEX_WAIT, parent_addr, 7, 1), object, 0x10));
	feed(t, shared(enter(2, 20, 100, FUTEX_WAKE, child_addr, 8, 1), object, 0x10));
	feed(t, leave(2, 20, 200, 1, 1));
	feed(t, leave(1, 10, 300, 0, 1));
	feed(t, shared(enter(2, 20, 400, FUTEX_WAIT, child_addr, 9, 1), object, 0x10));
	feed(t, shared(enter(1, 10, 500, FUTEX_WAKE, parent_addr, 6, 1), object, 0x10));
	feed(t, leave(1, 10, 600, 1, 1));
	feed(t, leave(2, 20, 700, 0, 1));
	/* the same object at another offset; the parent's address as a private word */
	feed(t, shared(enter(1, 10, 800, FUTEX_WAKE, parent_addr + 4, 6, 1), object, 0x14));
	feed(t, leave(1, 10, 810, 0, 1));
	feed(t, enter(1, 10, 900, WAKE_PRIV, parent_addr, 6, 1));
	feed(t, leave(1, 10, 910, 0, 1));
	futex_tracker_finish(t);
	struct futex_word *const *words;
	cr_assert_eq(futex_tracker_words(t, &words), 3);
	const struct futex_word *w = futex_tracker_shared_word(t, object, 0x10);
	cr_assert_not_null(w);
	cr_assert(w->shared && w->pid == 1 && w->uaddr == parent_addr, "named after its first sight");
	cr_assert_eq(w->npids, 2);
	cr_assert(w->pids[0] == 1 && w->pids[1] == 2);
	cr_assert(w->ops[FOP_WAIT] == 2 && w->ops[FOP_WAKE] == 2 && w->calls == 4);
	cr_assert(w->nwaiters == 2 && w->nwakers == 2);
	cr_assert_eq(w->wait.count, 2);
	cr_assert_eq(w->wait.total, 300 + 300);
	cr_assert_eq(w->woken, 2);
	cr_assert_eq(futex_tracker_word(t, 2, child_addr), w, "found by the child's address");
	const struct futex_word *priv = futex_tracker_word(t, 1, parent_addr);
	cr_assert(priv && priv != w && !priv->shared && priv->calls == 1, "a private call keys by pid and address");
	const struct futex_word *next = futex_tracker_shared_word(t, object, 0x14);
	cr_assert(next && next != w && next->calls == 1);
	/* a lock contention inside the child's wait joins the word by its first sight (lock.c's join) */
	feed(t, shared(enter(2, 20, 1000, FUTEX_WAIT, child_addr, 9, 1), object, 0x10));
	uint32_t pid;
	uint64_t uaddr;
	cr_assert(futex_tracker_pending_word(t, 20, 1001, &pid, &uaddr));
	cr_assert(pid == 1 && uaddr == parent_addr);
	futex_tracker_free(t);
}

Test(futex, many_words_and_threads)
{
	struct futex_tracker *t = futex_tracker_new();
	enum { WORDS = 5000, THREADS = 64 };
	uint64_t time = 0;
	for (int i = 0; i < WORDS; i++) {
		uint32_t tid = 100 + (uint32_t)(i % THREADS);
		feed(t, enter(1, tid, time++, WAIT_PRIV, 0x10000 + 4 * (uint64_t)i, (uint32_t)i % 3, 1));
		feed(t, leave(1, tid, time++, -EAGAIN, 1));
	}
	futex_tracker_finish(t);
	struct futex_word *const *words;
	cr_assert_eq(futex_tracker_words(t, &words), WORDS);
	for (int i = 0; i < WORDS; i += 97) {
		const struct futex_word *w = futex_tracker_word(t, 1, 0x10000 + 4 * (uint64_t)i);
		cr_assert_not_null(w);
		cr_assert_eq(w->calls, 1);
		cr_assert_eq(error_count(w, EAGAIN), 1);
	}
	cr_assert_eq(futex_tracker_op(t, FOP_WAIT)->errors, WORDS);
	futex_tracker_free(t);
}

Test(futex, futex2_calls_and_waitv_arrays)
{
	struct futex_tracker *t = futex_tracker_new();
	struct futex_call c = { .enter = true, .pid = 1, .tid = 10, .time = 100, .period = 1,
				.op = { .id = FOP_SYS_WAITV }, .uaddr = 0x7000, .stack = 3 };
	futex_tracker_enter(t, &c);
	struct futex_call x = { .pid = 1, .tid = 10, .time = 600, .period = 1, .ret = 0, .syscall = FOP_SYS_WAITV };
	futex_tracker_exit(t, &x);
	cr_assert_eq(futex_tracker_thread_op(t, 10), FOP_SYS_WAITV);
	cr_assert_eq(futex_tracker_thread_op(t, 99), FOP_UNKNOWN);
	futex_tracker_finish(t);
	const struct futex_word *w = futex_tracker_word(t, 1, 0x7000);
	cr_assert(w->array);
	cr_assert_eq(w->ops[FOP_SYS_WAITV], 1);
	cr_assert_eq(w->wait.total, 500);
	cr_assert_not(w->estimated);
	futex_tracker_free(t);
}

/* ---- naming data addresses, in this process ---- */

int futex_test_word;              /* .bss */
long futex_test_table[8] = { 1 }; /* .data */
char futex_test_big_bss[1 << 20]; /* big enough to spill past the file's last page */

/* /proc/self/maps replayed into a proc_table, as MMAP2 records (with data mappings) would fill it. */
static struct proc_table *self_table(uint32_t pid)
{
	return proc_table_from_maps("/proc/self/maps", pid);
}

static void expect_name(struct proc_table *pt, uint32_t pid, const void *addr, const char *expect, int expect_ret)
{
	char buf[256];
	const char *dso = NULL;
	int ret = proc_table_data_name(pt, pid, (uint64_t)(uintptr_t)addr, buf, sizeof(buf), &dso);
	cr_assert_str_eq(buf, expect, "%p named %s, expected %s", addr, buf, expect);
	cr_assert_eq(ret, expect_ret, "%s: returned %d", expect, ret);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

Test(futex, data_addresses_are_named_by_symbol)
{
	struct proc_table *pt = self_table(1);
	expect_name(pt, 1, &futex_test_word, "futex_test_word", 0);
	expect_name(pt, 1, &futex_test_table[0], "futex_test_table", 0);
	expect_name(pt, 1, &futex_test_table[3], "futex_test_table+0x18", 0);
	/* the end of a 1 MiB .bss array lies in the anonymous mapping after the file */
	expect_name(pt, 1, &futex_test_big_bss[(1 << 20) - 16], "futex_test_big_bss+0xffff0", 0);
	char buf[256];
	const char *dso = NULL;
	cr_assert_eq(proc_table_data_name(pt, 1, (uint64_t)(uintptr_t)&futex_test_word, buf, sizeof(buf), &dso), 0);
	cr_assert_not_null(dso);
	cr_assert(strstr(dso, "unit-tests"), "the word belongs to the test binary, not %s", dso);
	/* code addresses stay on executable mappings; data does not answer for code */
	uint64_t code = (uint64_t)(uintptr_t)&self_table;
	cr_assert_not_null(proc_table_find_code(pt, 1, code));
	cr_assert_null(proc_table_find_code(pt, 1, (uint64_t)(uintptr_t)&futex_test_word));
	cr_assert_not_null(proc_table_find(pt, 1, (uint64_t)(uintptr_t)&futex_test_word));
	proc_table_free(pt);
}

Test(futex, heap_stack_and_unmapped_addresses_fall_back)
{
	void *small = malloc(64); /* from the brk heap */
	int on_stack = 0;
	struct proc_table *pt = self_table(1);
	char buf[256];
	const char *dso = NULL;
	int ret = proc_table_data_name(pt, 1, (uint64_t)(uintptr_t)small, buf, sizeof(buf), &dso);
	cr_assert_eq(ret, -ENOENT);
	cr_assert(has_prefix(buf, "[heap]+0x") || has_prefix(buf, "[anon]+0x"), "heap block named %s", buf);
	ret = proc_table_data_name(pt, 1, (uint64_t)(uintptr_t)&on_stack, buf, sizeof(buf), &dso);
	cr_assert_eq(ret, -ENOENT);
	cr_assert(has_prefix(buf, "[stack]+0x") || has_prefix(buf, "[anon]+0x"), "stack variable named %s", buf);
	ret = proc_table_data_name(pt, 1, 0x10, buf, sizeof(buf), &dso);
	cr_assert_eq(ret, -ENOENT);
	cr_assert_str_eq(buf, "0x10");
	cr_assert_null(dso);
	ret = proc_table_data_name(pt, 777, (uint64_t)(uintptr_t)&futex_test_word, buf, sizeof(buf), NULL);
	cr_assert_eq(ret, -ENOENT, "an unknown process");
	proc_table_free(pt);
	free(small);
}

Test(futex, files_and_anonymous_memory_fall_back_to_offsets)
{
	struct proc_table *pt = proc_table_new();
	proc_table_mmap(pt, 5, 0x10000, 0x2000, 0x3000, PROT_READ | PROT_WRITE, MAP_SHARED, "/dev/shm/queue");
	proc_table_mmap(pt, 5, 0x20000, 0x1000, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon");
	proc_table_mmap(pt, 5, 0x30000, 0x1000, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "[stack]");
	expect_name(pt, 5, (void *)0x10010, "queue+0x3010", -ENOENT);
	expect_name(pt, 5, (void *)0x20020, "[anon]+0x20", -ENOENT);
	expect_name(pt, 5, (void *)0x30ff8, "[stack]+0xff8", -ENOENT);
	/* an anonymous mapping after a file that cannot be read is still anonymous */
	proc_table_mmap(pt, 5, 0x12000, 0x1000, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon");
	expect_name(pt, 5, (void *)0x12004, "[anon]+0x4", -ENOENT);
	proc_table_free(pt);
}

/* Trace mode: the entries' frame-pointer stacks replaced by their call site's DWARF stack. */
static uint32_t remap_by_table(void *ctx, uint32_t stack)
{
	const uint32_t *table = ctx;
	return table[stack];
}

Test(futex, remapped_stacks_that_become_one_add_up)
{
	struct futex_tracker *t = futex_tracker_new();
	/* stacks 7 and 8 are frame-pointer stacks of two call sites that turn out to be one (stack 20) */
	feed(t, enter(1, 10, 1000, WAIT_PRIV, WORD, 7, 1));
	feed(t, leave(1, 10, 3000, 0, 1));
	feed(t, enter(1, 10, 4000, WAIT_PRIV, WORD, 8, 1));
	feed(t, leave(1, 10, 9000, 0, 1));
	feed(t, enter(1, 10, 9500, WAIT_PRIV, WORD, 9, 1));
	feed(t, leave(1, 10, 9600, -EAGAIN, 1));
	feed(t, enter(1, 11, 9700, WAKE_PRIV, WORD, 5, 1));
	feed(t, leave(1, 11, 9800, 1, 1));
	futex_tracker_finish(t);
	struct futex_word *const *words;
	cr_assert_eq(futex_tracker_words(t, &words), 1);
	uint32_t table[32];
	for (uint32_t i = 0; i < 32; i++)
		table[i] = i;
	table[7] = table[8] = 20;
	table[5] = 21;
	futex_word_remap_stacks(words[0], remap_by_table, table);
	futex_word_sort_stacks(words[0]);
	const struct futex_word *w = words[0];
	cr_assert_eq(w->nwaiters, 2);
	cr_assert_eq(w->waiters[0].stack, 20);
	cr_assert_eq(w->waiters[0].count, 2);
	cr_assert_eq(w->waiters[0].wait.count, 2);
	cr_assert_eq(w->waiters[0].wait.total, 2000 + 5000);
	cr_assert_eq(w->waiters[0].wait.max, 5000);
	cr_assert_eq(w->waiters[1].stack, 9, "a stack nobody remapped stays");
	cr_assert_eq(w->waiters[0].wait.total + w->waiters[1].wait.total, w->wait.total);
	cr_assert_eq(w->nwakers, 1);
	cr_assert_eq(w->wakers[0].stack, 21);
	futex_tracker_free(t);
}

/*
 * The stack lender: copies (#stack) lend their DWARF stack to the entries of
 * their call, in either order, and to later entries of the same
 * frame-pointer stack; a frame-pointer stack taught two DWARF stacks stays.
 */
Test(futex, stack_copies_lend_their_call_sites_dwarf_stack)
{
	struct stack_lender *l = stack_lender_new();
	/* thread 10: the copy (stack 100) comes before the entry (FP stack 7): the entry counts on its copy */
	stack_lend_copy(l, 10, 100);
	cr_assert_eq(stack_lend_key(l, 10, 7), 100);
	stack_lend_end(l, 10);
	/* a later call of the same site without a copy (above the copies' bound): what the site taught */
	cr_assert_eq(stack_lend_key(l, 10, 7), 100);
	stack_lend_end(l, 10);
	/* thread 11, the entry first: not known yet, the copy that follows teaches it */
	cr_assert_eq(stack_lend_key(l, 11, 8), 8, "nothing learned about stack 8 yet");
	stack_lend_copy(l, 11, 101);
	stack_lend_end(l, 11);
	cr_assert_eq(stack_lent(l, 8), 101);
	/* a copy of a call whose entry was not recorded is dropped at its exit, never lent to the next call */
	stack_lend_copy(l, 12, 102);
	stack_lend_end(l, 12);
	cr_assert_eq(stack_lend_key(l, 12, 9), 9);
	stack_lend_end(l, 12);
	/* two call sites behind one frame-pointer stack (a libc wrapper without frame pointers): ambiguous */
	stack_lend_copy(l, 13, 103);
	cr_assert_eq(stack_lend_key(l, 13, 7), 103, "its own copy still names the call");
	stack_lend_end(l, 13);
	cr_assert_eq(stack_lent(l, 7), 7, "stack 7 had copies of 100 and 103: it stays");
	cr_assert_eq(stack_lend_key(l, 10, 7), 7);
	stack_lend_end(l, 10);
	uint64_t joined;
	size_t learned;
	stack_lender_stats(l, &joined, &learned);
	cr_assert_eq(joined, 3, "calls with a copy of their own");
	cr_assert_eq(learned, 2, "stacks 7 (ambiguous) and 8");
	stack_lender_free(l);
}

Test(futex, the_pending_word_of_a_thread)
{
	/* The lock collector's question (the pending_futex_word hook): which word is tid's call in progress on? */
	struct futex_tracker *t = futex_tracker_new();
	uint32_t pid = 0;
	uint64_t uaddr = 0;
	cr_expect_not(futex_tracker_pending_word(t, 11, 100, &pid, &uaddr), "a thread never seen");
	feed(t, enter(10, 11, 100, WAIT_PRIV, WORD, 1, 1));
	cr_expect_not(futex_tracker_pending_word(t, 11, 99, &pid, &uaddr), "before its entry");
	cr_assert(futex_tracker_pending_word(t, 11, 150, &pid, &uaddr));
	cr_expect_eq(pid, 10);
	cr_expect_eq(uaddr, WORD);
	cr_expect_not(futex_tracker_pending_word(t, 12, 150, &pid, &uaddr), "another thread");
	feed(t, leave(10, 11, 200, -EAGAIN, 1));
	cr_expect_not(futex_tracker_pending_word(t, 11, 250, &pid, &uaddr), "after its exit");
	/* a weighted entry (above the bound) may have lost its exit: no answer, rather than a stale word */
	feed(t, enter(10, 11, 300, WAIT_PRIV, WORD, 1, 20));
	cr_expect_not(futex_tracker_pending_word(t, 11, 350, &pid, &uaddr), "a weighted entry");
	futex_tracker_free(t);
}
