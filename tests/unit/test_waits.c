/*
 * test_waits.c: the wake linker (collectors/waits.c through
 * sigprof/collectors/waits.h), fed synthetic sequences of futex calls,
 * switches, wakings and cpu samples whose endings, wakers, work shares and
 * chains are worked out by hand beside each check.  Times are ns.
 */
#include <stdlib.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/waits.h"

#define PID 10
#define WAITER 11
#define HOLDER 12
#define THIRD 13
#define WORD 0x1000
#define WORD2 0x2000
#define WAIT_STACK 1
#define WAKE_STACK 2
#define WORK_STACK 3
#define OTHER_WORK 4
#define SLEEP_STACK 5

/* The waiter blocks on WORD from `from` and is woken at `wake` by `waker`'s FUTEX_WAKE, running at wake + 5. */
static void futex_wait_woken(struct wait_linker *l, uint32_t waiter, uint64_t word, uint64_t from, uint32_t waker,
			     uint64_t wake)
{
	waits_futex_enter(l, PID, waiter, from, FOP_WAIT, word, WAIT_STACK, false);
	waits_switch_out(l, PID, waiter, from + 1, WAIT_STACK, true);
	waits_futex_enter(l, PID, waker, wake - 1, FOP_WAKE, word, WAKE_STACK, false);
	waits_waking(l, waiter, wake, PID, waker, false);
	waits_futex_exit(l, waker, wake + 1, 1);
	waits_switch_in(l, waiter, wake + 5);
	waits_futex_exit(l, waiter, wake + 6, 0);
}

static const struct wait_record *only_longest(struct wait_linker *l, size_t expected)
{
	const struct wait_record *recs;
	size_t n = waits_longest(l, &recs);
	cr_assert_eq(n, expected, "%zu waits kept, expected %zu", n, expected);
	return recs;
}

Test(waits, futex_wait_ended_by_a_wake_names_the_waker_call_and_its_work)
{
	struct wait_linker *l = wait_linker_new();
	/* the holder runs WORK_STACK 3 times and OTHER_WORK once while the waiter waits [100, 1106] */
	waits_cpu_sample(l, HOLDER, 50, OTHER_WORK); /* before the wait: not its work */
	waits_cpu_sample(l, HOLDER, 200, WORK_STACK);
	waits_cpu_sample(l, HOLDER, 400, WORK_STACK);
	waits_cpu_sample(l, HOLDER, 600, OTHER_WORK);
	waits_cpu_sample(l, HOLDER, 800, WORK_STACK);
	futex_wait_woken(l, WAITER, WORD, 100, HOLDER, 1100);
	waits_finish(l);
	const struct wait_record *r = only_longest(l, 1);
	cr_expect_eq(r->step.ending, WAIT_END_TASK);
	cr_expect_eq(r->why, WAIT_LINKED);
	cr_expect_eq(r->step.waker_tid, HOLDER);
	cr_expect_eq(r->waker_op, FOP_WAKE);
	cr_expect_eq(r->step.waker_stack, WAKE_STACK);
	cr_expect_eq(r->step.end - r->step.start, 1006); /* entry 100 to exit 1106 */
	cr_expect_eq(r->run_time - r->wake_time, 5);
	cr_expect_eq(r->waker_samples, 4);                /* 200, 400, 600, 800: within [100, 1100] */
	cr_expect_eq(r->work[0].stack, WORK_STACK);
	cr_expect_eq(r->work[0].samples, 3);
	const struct wait_blame *const *work;
	size_t n = waits_work_blame(l, &work);
	cr_assert_eq(n, 2);
	/* WORK_STACK gets 3/4 of the 1006 ns the wait lasted, OTHER_WORK 1/4 */
	cr_expect_float_eq(work[0]->weighted_ns, 1006 * 0.75, 1e-6);
	cr_expect_eq(work[0]->stack, WORK_STACK);
	cr_expect_float_eq(work[1]->weighted_ns, 1006 * 0.25, 1e-6);
	const struct wait_blame *const *release;
	cr_assert_eq(waits_release_blame(l, &release), 1);
	cr_expect_eq(release[0]->stack, WAKE_STACK);
	cr_expect_eq(release[0]->ns, 1006);
	cr_expect_eq(waits_totals(l)->waits[WAIT_END_TASK], 1);
	wait_linker_free(l);
}

Test(waits, results_name_timeouts_signals_and_errors)
{
	struct wait_linker *l = wait_linker_new();
	int64_t results[] = { -110, -4, -512, -516, -22 };
	enum wait_ending expected[] = { WAIT_END_TIMEOUT, WAIT_END_SIGNAL, WAIT_END_SIGNAL, WAIT_END_SIGNAL,
					WAIT_END_ERROR };
	for (size_t i = 0; i < 5; i++) {
		uint64_t t = 1000 * (i + 1);
		waits_futex_enter(l, PID, WAITER, t, FOP_WAIT_BITSET, WORD, WAIT_STACK, false);
		waits_switch_out(l, PID, WAITER, t + 1, WAIT_STACK, true);
		waits_waking(l, WAITER, t + 500, 0, 0, true); /* the timer's or the signal's interrupt */
		waits_switch_in(l, WAITER, t + 510);
		waits_futex_exit(l, WAITER, t + 520, results[i]);
		const struct wait_record *r = waits_ended_at(l, WAITER, t + 520);
		cr_assert(r, "wait %zu not ended at its exit", i);
		cr_expect_eq(r->step.ending, expected[i], "result %lld ended as %s", (long long)results[i],
			     wait_ending_name(r->step.ending));
	}
	cr_expect_eq(waits_totals(l)->waits[WAIT_END_SIGNAL], 3);
	wait_linker_free(l);
}

Test(waits, a_wait_that_never_slept_is_not_a_blocking_wait)
{
	struct wait_linker *l = wait_linker_new();
	waits_switch_in(l, THIRD, 1); /* the recording has scheduler events */
	waits_futex_enter(l, PID, WAITER, 100, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_futex_exit(l, WAITER, 110, -11); /* EAGAIN: the word had changed */
	waits_futex_enter(l, PID, WAITER, 200, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_waking(l, WAITER, 205, PID, HOLDER, false); /* woken before it slept */
	waits_futex_exit(l, WAITER, 210, 0);
	cr_expect_eq(waits_totals(l)->not_blocking, 2);
	only_longest(l, 0);
	wait_linker_free(l);
}

Test(waits, interrupts_idle_and_missing_wakings)
{
	struct wait_linker *l = wait_linker_new();
	/* a sleep outside futex calls woken in interrupt context while HOLDER ran: not HOLDER's doing */
	waits_switch_out(l, PID, WAITER, 100, SLEEP_STACK, true);
	waits_waking(l, WAITER, 200, PID, HOLDER, true);
	waits_switch_in(l, WAITER, 210);
	const struct wait_record *r = waits_ended_at(l, WAITER, 210);
	cr_assert(r);
	cr_expect_eq(r->step.ending, WAIT_END_INTERRUPT);
	cr_expect_eq(r->step.waker_tid, 0);
	cr_expect(!r->step.futex);
	/* woken by the idle task (pid 0) */
	waits_switch_out(l, PID, WAITER, 300, SLEEP_STACK, true);
	waits_waking(l, WAITER, 400, 0, 0, false);
	waits_switch_in(l, WAITER, 410);
	cr_expect_eq(waits_ended_at(l, WAITER, 410)->step.ending, WAIT_END_INTERRUPT);
	/* no waking recorded: unlinked, and why */
	waits_switch_out(l, PID, WAITER, 500, SLEEP_STACK, true);
	waits_switch_in(l, WAITER, 600);
	r = waits_ended_at(l, WAITER, 600);
	cr_expect_eq(r->step.ending, WAIT_END_UNLINKED);
	cr_expect_eq(r->why, WAIT_NO_WAKING);
	/* a preempted switch-out is no wait */
	waits_switch_out(l, PID, WAITER, 700, SLEEP_STACK, true);
	waits_switch_out_preempted(l, WAITER, 700);
	waits_switch_in(l, WAITER, 800);
	cr_expect_null(waits_ended_at(l, WAITER, 800));
	cr_expect_eq(waits_totals(l)->sched_waits, 3);
	wait_linker_free(l);
}

Test(waits, a_task_waking_outside_a_futex_call_names_the_task_without_a_stack)
{
	struct wait_linker *l = wait_linker_new();
	waits_futex_enter(l, PID, WAITER, 100, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_switch_out(l, PID, WAITER, 101, WAIT_STACK, true);
	waits_switch_in(l, HOLDER, 150);
	waits_waking(l, WAITER, 200, PID, HOLDER, false); /* HOLDER exits: the kernel's CLEARTID wake */
	waits_switch_in(l, WAITER, 210);
	waits_futex_exit(l, WAITER, 220, 0);
	const struct wait_record *r = waits_ended_at(l, WAITER, 220);
	cr_assert(r);
	cr_expect_eq(r->step.ending, WAIT_END_TASK);
	cr_expect_eq(r->why, WAIT_WAKER_NO_CALL);
	cr_expect_eq(r->step.waker_stack, UINT32_MAX);
	cr_expect_eq(r->waker_op, FOP_COUNT);
	wait_linker_free(l);
}

Test(waits, without_scheduler_events_waits_are_unlinked_but_results_count)
{
	struct wait_linker *l = wait_linker_new();
	waits_futex_enter(l, PID, WAITER, 100, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_futex_exit(l, WAITER, 900, 0);
	waits_futex_enter(l, PID, WAITER, 1000, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_futex_exit(l, WAITER, 1900, -110);
	waits_futex_enter(l, PID, WAITER, 2000, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_futex_exit(l, WAITER, 2001, -11);
	const struct waits_totals *t = waits_totals(l);
	cr_expect_eq(t->waits[WAIT_END_UNLINKED], 1);
	cr_expect_eq(t->unlinked[WAIT_NO_SCHED], 1);
	cr_expect_eq(t->waits[WAIT_END_TIMEOUT], 1);
	cr_expect_eq(t->not_blocking, 1); /* EAGAIN never slept */
	wait_linker_free(l);
}

Test(waits, chain_follows_the_waker_wait_that_ended_inside_ours)
{
	struct wait_linker *l = wait_linker_new();
	/* C (THIRD) waits on WORD2 from 100; B (HOLDER) waits on WORD from 150, woken by A (WAITER) at 500 */
	waits_futex_enter(l, PID, THIRD, 100, FOP_WAIT, WORD2, WAIT_STACK, false);
	waits_switch_out(l, PID, THIRD, 101, WAIT_STACK, true);
	futex_wait_woken(l, HOLDER, WORD, 150, WAITER, 500);
	/* B wakes C at 900 */
	waits_futex_enter(l, PID, HOLDER, 899, FOP_WAKE, WORD2, WAKE_STACK, false);
	waits_waking(l, THIRD, 900, PID, HOLDER, false);
	waits_futex_exit(l, HOLDER, 901, 1);
	waits_switch_in(l, THIRD, 910);
	waits_futex_exit(l, THIRD, 920, 0);
	const struct wait_record *r = waits_ended_at(l, THIRD, 920);
	cr_assert(r);
	cr_expect_eq(r->step.waker_tid, HOLDER);
	cr_assert_eq(r->chain_len, 1);
	cr_expect_eq(r->chain[0].tid, HOLDER);
	cr_expect_eq(r->chain[0].uaddr, WORD);
	cr_expect_eq(r->chain[0].waker_tid, WAITER);
	/* a waker whose last wait ended before ours began is no chain */
	waits_futex_enter(l, PID, THIRD, 2000, FOP_WAIT, WORD2, WAIT_STACK, false);
	waits_switch_out(l, PID, THIRD, 2001, WAIT_STACK, true);
	waits_futex_enter(l, PID, HOLDER, 2500, FOP_WAKE, WORD2, WAKE_STACK, false);
	waits_waking(l, THIRD, 2501, PID, HOLDER, false);
	waits_futex_exit(l, HOLDER, 2502, 1);
	waits_switch_in(l, THIRD, 2510);
	waits_futex_exit(l, THIRD, 2520, 0);
	cr_expect_eq(waits_ended_at(l, THIRD, 2520)->chain_len, 0);
	wait_linker_free(l);
}

static uint32_t remap_wake_stack(void *ctx, uint32_t stack)
{
	(void)ctx;
	return stack == WAKE_STACK ? 42 : stack;
}

Test(waits, remapped_release_stacks_merge_and_longest_keep_their_order)
{
	struct wait_linker *l = wait_linker_new();
	for (uint64_t i = 0; i < WAITS_LONGEST + 5; i++)
		futex_wait_woken(l, WAITER, WORD, 10000 * (i + 1), HOLDER, 10000 * (i + 1) + 100 * (i + 1));
	waits_finish(l);
	waits_remap_stacks(l, remap_wake_stack, NULL);
	const struct wait_record *recs = only_longest(l, WAITS_LONGEST);
	for (size_t i = 1; i < WAITS_LONGEST; i++)
		cr_expect_geq(recs[i - 1].step.end - recs[i - 1].step.start, recs[i].step.end - recs[i].step.start);
	cr_expect_eq(recs[0].step.waker_stack, 42);
	const struct wait_blame *const *release;
	cr_assert_eq(waits_release_blame(l, &release), 1);
	cr_expect_eq(release[0]->waits, WAITS_LONGEST + 5);
	wait_linker_free(l);
}

Test(waits, a_futex_wait_without_its_waking_links_to_the_wake_call_on_its_word)
{
	struct wait_linker *l = wait_linker_new();
	waits_futex_enter(l, PID, WAITER, 100, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_switch_out(l, PID, WAITER, 101, WAIT_STACK, true);
	waits_futex_enter(l, PID, HOLDER, 300, FOP_WAKE, WORD2, OTHER_WORK, false); /* another word */
	waits_futex_exit(l, HOLDER, 301, 0);
	waits_futex_enter(l, PID, HOLDER, 400, FOP_WAKE, WORD, WAKE_STACK, false);
	waits_futex_exit(l, HOLDER, 401, 1);
	waits_switch_in(l, WAITER, 500); /* its sched_waking was not recorded */
	waits_futex_exit(l, WAITER, 510, 0);
	const struct wait_record *r = waits_ended_at(l, WAITER, 510);
	cr_assert(r);
	cr_expect_eq(r->step.ending, WAIT_END_TASK);
	cr_expect_eq(r->why, WAIT_LINKED_BY_WORD);
	cr_expect_eq(r->step.waker_tid, HOLDER);
	cr_expect_eq(r->step.waker_stack, WAKE_STACK);
	/* an interrupt made it runnable first: the futex wake that returned it 0 found it runnable, no waking */
	waits_futex_enter(l, PID, WAITER, 600, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_switch_out(l, PID, WAITER, 601, WAIT_STACK, true);
	waits_waking(l, WAITER, 650, 0, 0, true);
	waits_futex_enter(l, PID, HOLDER, 700, FOP_WAKE, WORD, WAKE_STACK, false);
	waits_futex_exit(l, HOLDER, 701, 1);
	waits_switch_in(l, WAITER, 800);
	waits_futex_exit(l, WAITER, 810, 0);
	r = waits_ended_at(l, WAITER, 810);
	cr_expect_eq(r->step.ending, WAIT_END_TASK);
	cr_expect_eq(r->why, WAIT_LINKED_BY_WORD);
	cr_expect_eq(r->run_time - r->wake_time, 100); /* the wake call at 700, running at 800 */
	/* a wake call before the wait began links nothing */
	waits_futex_enter(l, PID, WAITER, 1000, FOP_WAIT, WORD, WAIT_STACK, false);
	waits_switch_out(l, PID, WAITER, 1001, WAIT_STACK, true);
	waits_switch_in(l, WAITER, 1100);
	waits_futex_exit(l, WAITER, 1110, 0);
	cr_expect_eq(waits_ended_at(l, WAITER, 1110)->why, WAIT_NO_WAKING);
	wait_linker_free(l);
}

/*
 * A sleep outside futex calls ended by a task's write: the waker's own
 * record of the waking (sched_waking#stack, 2 us before the system-wide one)
 * names its stack; a record of another target, or from before the wait
 * began, does not; and the waits samples say who ended what.
 */
Test(waits, a_waking_outside_a_futex_call_takes_the_stack_the_waker_recorded)
{
	struct wait_linker *l = wait_linker_new();
	waits_switch_out(l, PID, WAITER, 100, SLEEP_STACK, true);
	waits_waking_stack(l, HOLDER, THIRD, 1998, OTHER_WORK);  /* another target */
	waits_waking_stack(l, HOLDER, WAITER, 1998, WAKE_STACK);
	waits_waking(l, WAITER, 2000, PID, HOLDER, false);
	waits_switch_in(l, WAITER, 2100);
	const struct wait_record *r = waits_ended_at(l, WAITER, 2100);
	cr_assert(r);
	cr_expect_eq(r->step.ending, WAIT_END_TASK);
	cr_expect_eq(r->step.waker_tid, HOLDER);
	cr_expect_eq(r->step.waker_stack, WAKE_STACK);
	cr_expect(r->waker_stack_at_waking);
	cr_expect_eq(r->waker_op, FOP_COUNT);
	cr_expect_eq(r->why, WAIT_WAKER_NO_CALL);
	/* a second sleep: the waker's record of a waking before it began is another waking's; none after: no stack */
	waits_waking_stack(l, HOLDER, WAITER, 2900, OTHER_WORK);
	waits_switch_out(l, PID, WAITER, 3000, SLEEP_STACK, true);
	waits_waking(l, WAITER, 4000, PID, HOLDER, false);
	waits_waking_stack(l, HOLDER, WAITER, 4000 + WAITS_WAKING_STACK_SLACK_NS + 1, WAKE_STACK); /* too late */
	waits_switch_in(l, WAITER, 4000 + WAITS_WAKING_STACK_SLACK_NS + 100);
	r = waits_ended_at(l, WAITER, 4000 + WAITS_WAKING_STACK_SLACK_NS + 100);
	cr_assert(r);
	cr_expect_eq(r->step.waker_stack, UINT32_MAX);
	cr_expect(!r->waker_stack_at_waking);
	cr_expect_eq(waits_totals(l)->waker_stacks_at_waking, 1);
	/* pprof's samples: one per waker stack (the recorded one, none), with their waits and time */
	const struct wait_sample *samples;
	size_t n = waits_samples(l, &samples);
	cr_assert_eq(n, 2);
	uint64_t waits = 0, ns = 0;
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(samples[i].tid, WAITER);
		cr_expect_eq(samples[i].waker_tid, HOLDER);
		cr_expect_str_eq(samples[i].ending, "task");
		cr_expect_str_eq(samples[i].link, "waker_without_futex_call");
		cr_expect_null(samples[i].waker_op);
		waits += samples[i].waits;
		ns += samples[i].ns;
	}
	cr_expect_eq(waits, 2);
	cr_expect_eq(ns, (2100 - 100) + (4000 + WAITS_WAKING_STACK_SLACK_NS + 100 - 3000));
	wait_linker_free(l);
}
