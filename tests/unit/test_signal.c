/*
 * test_signal.c: the signal collector's state machine (include/sigprof/collectors/signal.h),
 * fed synthetic event sequences whose figures are known by construction:
 * generation -> delivery latency, delivery -> rt_sigreturn handler time with
 * nesting, thread- and process-directed signals, the generate results, threads
 * that exit inside a handler, and the names of signal numbers.
 *
 * Times are small integers (ns).  A duration's max is exact, so single
 * durations are checked through it; count is exact too.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/signal.h"

#define SIGUSR1_NO 10
#define SIGUSR2_NO 12
#define SIGTERM_NO 15
#define SIGKILL_NO 9
#define SIGCHLD_NO 17
#define SIGRTMIN_NO 34
#define HANDLER 0x401000 /* any address but SIG_DFL (0) and SIG_IGN (1) */

static void generate(struct signal_tracker *a, uint64_t time, uint32_t pid, uint32_t tid, int sig,
		     uint32_t target, bool group, int result)
{
	struct signal_event e = { .kind = SIGNAL_EVENT_GENERATE, .time = time, .pid = pid, .tid = tid, .sig = sig,
				  .target = target, .group = group, .result = result, .stack = SIGNAL_NO_STACK };
	signal_tracker_event(a, &e);
}

static void deliver_with(struct signal_tracker *a, uint64_t time, uint32_t pid, uint32_t tid, int sig,
			 uint64_t sa_handler)
{
	struct signal_event e = { .kind = SIGNAL_EVENT_DELIVER, .time = time, .pid = pid, .tid = tid, .sig = sig,
				  .sa_handler = sa_handler, .stack = SIGNAL_NO_STACK };
	signal_tracker_event(a, &e);
}

static void deliver(struct signal_tracker *a, uint64_t time, uint32_t pid, uint32_t tid, int sig)
{
	deliver_with(a, time, pid, tid, sig, HANDLER);
}

static void sigreturn(struct signal_tracker *a, uint64_t time, uint32_t pid, uint32_t tid)
{
	struct signal_event e = { .kind = SIGNAL_EVENT_SIGRETURN_ENTER, .time = time, .pid = pid, .tid = tid,
				  .stack = SIGNAL_NO_STACK };
	signal_tracker_event(a, &e);
	e.kind = SIGNAL_EVENT_SIGRETURN_EXIT;
	e.time = time + 1;
	signal_tracker_event(a, &e);
}

static const struct signal_figures *figures(const struct signal_tracker *a, int sig)
{
	const struct signal_figures *f = signal_tracker_figures(a, sig);
	cr_assert_not_null(f, "no figures for signal %d", sig);
	return f;
}

Test(signal, one_signal_generated_delivered_returned)
{
	struct signal_tracker *a = signal_tracker_new();
	generate(a, 1000, 100, 100, SIGUSR1_NO, 100, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 1300, 100, 100, SIGUSR1_NO);
	sigreturn(a, 1800, 100, 100);
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGUSR1_NO);
	cr_assert_eq(f->generated, 1);
	cr_assert_eq(f->results[SIGNAL_RESULT_DELIVERED], 1);
	cr_assert_eq(f->delivered, 1);
	cr_assert_eq(f->to_handler, 1);
	cr_assert_eq(f->sigreturns, 1);
	cr_assert_eq(f->latency.count, 1);
	cr_assert_eq(f->latency.max, 300);
	cr_assert_eq(f->handler.count, 1);
	cr_assert_eq(f->handler.max, 500);
	cr_assert_eq(f->unmatched_deliveries + f->unmatched_generations + f->unreturned, 0);
	cr_assert_null(signal_tracker_figures(a, SIGUSR2_NO), "a signal no event named has no figures");
	signal_tracker_free(a);
}

Test(signal, nested_handlers_pop_the_innermost_first)
{
	struct signal_tracker *a = signal_tracker_new();
	/* SIGUSR1's handler runs from 100; SIGUSR2 arrives inside it at 150 and returns at 200 */
	deliver(a, 100, 7, 7, SIGUSR1_NO);
	deliver(a, 150, 7, 7, SIGUSR2_NO);
	sigreturn(a, 200, 7, 7);
	sigreturn(a, 400, 7, 7);
	/* and a third level: USR1 inside USR2 inside USR1 */
	deliver(a, 1000, 7, 7, SIGUSR1_NO);
	deliver(a, 1010, 7, 7, SIGUSR2_NO);
	deliver(a, 1020, 7, 7, SIGUSR1_NO);
	sigreturn(a, 1025, 7, 7);
	sigreturn(a, 1110, 7, 7);
	sigreturn(a, 2000, 7, 7);
	signal_tracker_finish(a);
	const struct signal_figures *u1 = figures(a, SIGUSR1_NO), *u2 = figures(a, SIGUSR2_NO);
	cr_assert_eq(u1->sigreturns, 3);
	cr_assert_eq(u2->sigreturns, 2);
	cr_assert_eq(u1->handler.count, 3);
	cr_assert_eq(u2->handler.count, 2);
	cr_assert_eq(u2->handler.max, 100, "inner handler 1010..1110, got max %lu", (unsigned long)u2->handler.max);
	cr_assert_eq(u2->handler.min, 50);
	cr_assert_eq(u1->handler.max, 1000, "outer handler includes the nested ones");
	cr_assert_eq(u1->handler.min, 5);
	cr_assert_eq(signal_tracker_unmatched_sigreturns(a), 0);
	signal_tracker_free(a);
}

/* What the report asks to name a signal frame: the handlers running on a thread, innermost first. */
Test(signal, running_handlers_innermost_first)
{
	struct signal_tracker *a = signal_tracker_new();
	int sigs[4] = { 0 };
	cr_assert_eq(signal_tracker_running_handlers(a, 7, 7, sigs, 4), 0, "an unknown thread runs none");
	deliver(a, 100, 7, 7, SIGUSR1_NO);
	deliver(a, 150, 7, 7, SIGUSR2_NO);
	deliver(a, 160, 7, 8, SIGTERM_NO);
	cr_assert_eq(signal_tracker_running_handlers(a, 7, 7, sigs, 4), 2);
	cr_assert_eq(sigs[0], SIGUSR2_NO);
	cr_assert_eq(sigs[1], SIGUSR1_NO);
	cr_assert_eq(signal_tracker_running_handlers(a, 7, 7, sigs, 1), 2, "the count even when sigs is short");
	cr_assert_eq(sigs[0], SIGUSR2_NO);
	cr_assert_eq(signal_tracker_running_handlers(a, 9, 7, sigs, 4), 0, "tid 7 of another process runs none");
	sigreturn(a, 200, 7, 7);
	cr_assert_eq(signal_tracker_running_handlers(a, 7, 7, sigs, 4), 1);
	cr_assert_eq(sigs[0], SIGUSR1_NO);
	cr_assert_eq(signal_tracker_running_handlers(a, 7, 8, sigs, 4), 1);
	cr_assert_eq(sigs[0], SIGTERM_NO);
	signal_tracker_free(a);
}

/* A handler's delivery stack, what the report joins the stack of a handler on an alternate signal stack to. */
static void deliver_from(struct signal_tracker *a, uint64_t time, uint32_t tid, int sig, uint32_t stack)
{
	struct signal_event e = { .kind = SIGNAL_EVENT_DELIVER, .time = time, .pid = 7, .tid = tid, .sig = sig,
				  .sa_handler = HANDLER, .stack = stack };
	signal_tracker_event(a, &e);
}

Test(signal, delivery_stacks_of_running_handlers)
{
	struct signal_tracker *a = signal_tracker_new();
	int sig = 0;
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 0, false, &sig), SIGNAL_NO_STACK, "an unknown thread");
	deliver_from(a, 100, 7, SIGUSR1_NO, 11);
	deliver_from(a, 150, 7, SIGUSR2_NO, 12);
	deliver_from(a, 160, 8, SIGTERM_NO, 13);
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 0, false, &sig), 12, "the innermost first");
	cr_assert_eq(sig, SIGUSR2_NO);
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 1, false, &sig), 11);
	cr_assert_eq(sig, SIGUSR1_NO);
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 2, false, &sig), SIGNAL_NO_STACK, "two run");
	cr_assert_eq(signal_tracker_delivery_stack(a, 9, 7, 0, false, &sig), SIGNAL_NO_STACK, "another process");
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 8, 0, false, &sig), 13, "per thread");
	/* in rt_sigreturn: the handler its entry closed, until the thread's next delivery */
	sigreturn(a, 200, 7, 7);
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 0, true, &sig), 12);
	cr_assert_eq(sig, SIGUSR2_NO);
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 0, false, &sig), 11, "not returning: the one running");
	deliver_from(a, 300, 7, SIGUSR2_NO, 14);
	cr_assert_eq(signal_tracker_delivery_stack(a, 7, 7, 0, true, &sig), 14, "a new delivery: no closed one");
	signal_tracker_free(a);
}

Test(signal, handlers_are_per_thread)
{
	struct signal_tracker *a = signal_tracker_new();
	deliver(a, 100, 5, 5, SIGUSR1_NO);
	deliver(a, 110, 5, 6, SIGUSR2_NO);
	sigreturn(a, 150, 5, 5); /* closes thread 5's USR1, not thread 6's newer USR2 */
	sigreturn(a, 410, 5, 6);
	signal_tracker_finish(a);
	cr_assert_eq(figures(a, SIGUSR1_NO)->handler.max, 50);
	cr_assert_eq(figures(a, SIGUSR2_NO)->handler.max, 300);
	signal_tracker_free(a);
}

Test(signal, thread_exiting_mid_handler_leaves_nothing_behind)
{
	struct signal_tracker *a = signal_tracker_new();
	/* thread 11 of process 10: a handler runs, a signal for it is pending, then it exits */
	deliver(a, 100, 10, 11, SIGUSR1_NO);
	generate(a, 120, 10, 10, SIGUSR2_NO, 11, false, SIGNAL_RESULT_DELIVERED);
	signal_tracker_thread_exit(a, 10, 11);
	/* a new thread gets tid 11: its sigreturn and delivery owe nothing to the old one */
	sigreturn(a, 500, 10, 11);
	deliver(a, 600, 10, 11, SIGUSR2_NO);
	sigreturn(a, 650, 10, 11);
	signal_tracker_finish(a);
	const struct signal_figures *u1 = figures(a, SIGUSR1_NO), *u2 = figures(a, SIGUSR2_NO);
	cr_assert_eq(u1->delivered, 1);
	cr_assert_eq(u1->sigreturns, 0);
	cr_assert_eq(u1->unreturned, 1);
	cr_assert_eq(u1->handler.count, 0);
	cr_assert_eq(signal_tracker_unmatched_sigreturns(a), 1);
	cr_assert_eq(u2->unmatched_generations, 1, "the exited thread's pending signal is dropped");
	cr_assert_eq(u2->unmatched_deliveries, 1);
	cr_assert_eq(u2->latency.count, 0);
	cr_assert_eq(u2->sigreturns, 1);
	cr_assert_eq(u2->handler.max, 50);
	signal_tracker_free(a);
}

Test(signal, tid_seen_in_another_process_is_a_new_thread)
{
	struct signal_tracker *a = signal_tracker_new();
	deliver(a, 100, 10, 11, SIGUSR1_NO);
	sigreturn(a, 200, 20, 11); /* tid 11 reused by process 20 */
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGUSR1_NO);
	cr_assert_eq(f->sigreturns, 0);
	cr_assert_eq(f->unreturned, 1);
	cr_assert_eq(signal_tracker_unmatched_sigreturns(a), 1);
	signal_tracker_free(a);
}

Test(signal, fatal_default_delivery_ends_the_thread_and_its_process_queue)
{
	struct signal_tracker *a = signal_tracker_new();
	deliver(a, 100, 30, 31, SIGUSR1_NO); /* a handler running in thread 31 */
	generate(a, 150, 30, 31, SIGUSR2_NO, 30, true, SIGNAL_RESULT_DELIVERED); /* pending for process 30 */
	deliver_with(a, 200, 30, 31, SIGTERM_NO, 0); /* SIG_DFL: the process dies */
	deliver_with(a, 210, 30, 32, SIGKILL_NO, 0); /* its other thread follows */
	signal_tracker_finish(a);
	const struct signal_figures *term = figures(a, SIGTERM_NO), *u1 = figures(a, SIGUSR1_NO);
	cr_assert_eq(term->delivered, 1);
	cr_assert_eq(term->to_default, 1);
	cr_assert_eq(term->sigreturns, 0);
	cr_assert_eq(u1->unreturned, 1);
	cr_assert_eq(figures(a, SIGUSR2_NO)->unmatched_generations, 1);
	cr_assert_eq(figures(a, SIGKILL_NO)->unmatched_deliveries, 1, "a group exit's SIGKILL has no generation");
	signal_tracker_free(a);
}

Test(signal, ignored_and_default_nonfatal_deliveries_push_no_handler)
{
	struct signal_tracker *a = signal_tracker_new();
	deliver_with(a, 100, 40, 40, SIGUSR1_NO, 1); /* SIG_IGN */
	deliver_with(a, 110, 40, 40, SIGCHLD_NO, 0); /* SIG_DFL, ignored by default: the process lives */
	deliver(a, 120, 40, 40, SIGUSR2_NO);
	sigreturn(a, 170, 40, 40);
	signal_tracker_finish(a);
	cr_assert_eq(figures(a, SIGUSR1_NO)->to_ignore, 1);
	cr_assert_eq(figures(a, SIGCHLD_NO)->to_default, 1);
	cr_assert_eq(figures(a, SIGUSR2_NO)->sigreturns, 1);
	cr_assert_eq(figures(a, SIGUSR2_NO)->handler.max, 50);
	cr_assert_eq(figures(a, SIGUSR1_NO)->sigreturns + figures(a, SIGCHLD_NO)->sigreturns, 0);
	cr_assert_eq(signal_tracker_unmatched_sigreturns(a), 0);
	signal_tracker_free(a);
}

Test(signal, group_signals_go_to_any_thread_thread_signals_to_theirs)
{
	struct signal_tracker *a = signal_tracker_new();
	/* process 50 with threads 50, 51, 52: a kill() names the leader, thread 52 takes it */
	generate(a, 100, 60, 60, SIGUSR1_NO, 50, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 250, 50, 52, SIGUSR1_NO);
	sigreturn(a, 260, 50, 52);
	/* a tgkill() to 51 and a kill() to the process: 51 takes its own first, as the kernel dequeues */
	generate(a, 300, 60, 60, SIGUSR1_NO, 51, false, SIGNAL_RESULT_DELIVERED);
	generate(a, 310, 60, 60, SIGUSR1_NO, 50, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 400, 50, 51, SIGUSR1_NO);
	sigreturn(a, 401, 50, 51);
	deliver(a, 510, 50, 50, SIGUSR1_NO);
	sigreturn(a, 511, 50, 50);
	/* a thread-directed signal is not taken by another thread */
	generate(a, 600, 60, 60, SIGUSR2_NO, 51, false, SIGNAL_RESULT_DELIVERED);
	deliver(a, 700, 50, 52, SIGUSR2_NO);
	sigreturn(a, 701, 50, 52);
	signal_tracker_finish(a);
	const struct signal_figures *u1 = figures(a, SIGUSR1_NO), *u2 = figures(a, SIGUSR2_NO);
	cr_assert_eq(u1->latency.count, 3);
	cr_assert_eq(u1->latency.max, 200, "150 and 200 for the group signals, 100 for the tgkill");
	cr_assert_eq(u1->latency.min, 100);
	cr_assert_eq(u1->unmatched_deliveries, 0);
	cr_assert_eq(u2->unmatched_deliveries, 1);
	cr_assert_eq(u2->unmatched_generations, 1);
	signal_tracker_free(a);
}

Test(signal, group_signal_naming_a_known_thread_goes_to_its_process)
{
	struct signal_tracker *a = signal_tracker_new();
	/* thread 71 of process 70 is known from its own events; a process signal names it (SIGCHLD to a
	 * parent thread that forked) and thread 72 takes it */
	sigreturn(a, 10, 70, 71);
	generate(a, 100, 80, 80, SIGCHLD_NO, 71, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 180, 70, 72, SIGCHLD_NO);
	sigreturn(a, 190, 70, 72);
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGCHLD_NO);
	cr_assert_eq(f->latency.count, 1);
	cr_assert_eq(f->latency.max, 80);
	cr_assert_eq(f->unmatched_generations, 0);
	signal_tracker_free(a);
}

Test(signal, already_pending_is_merged_and_delivered_once)
{
	struct signal_tracker *a = signal_tracker_new();
	generate(a, 100, 90, 90, SIGUSR2_NO, 90, true, SIGNAL_RESULT_DELIVERED);
	generate(a, 150, 90, 90, SIGUSR2_NO, 90, true, SIGNAL_RESULT_ALREADY_PENDING);
	deliver(a, 300, 90, 90, SIGUSR2_NO);
	sigreturn(a, 320, 90, 90);
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGUSR2_NO);
	cr_assert_eq(f->generated, 2);
	cr_assert_eq(f->results[SIGNAL_RESULT_ALREADY_PENDING], 1);
	cr_assert_eq(f->delivered, 1);
	cr_assert_eq(f->latency.count, 1);
	cr_assert_eq(f->latency.max, 200, "from the first generation, the one that was pending");
	cr_assert_eq(f->unmatched_generations + f->unmatched_deliveries, 0);
	signal_tracker_free(a);
}

Test(signal, results_that_queue_nothing_are_not_matched)
{
	struct signal_tracker *a = signal_tracker_new();
	generate(a, 100, 1, 1, SIGUSR1_NO, 2, false, SIGNAL_RESULT_IGNORED);
	generate(a, 110, 1, 1, SIGRTMIN_NO, 2, false, SIGNAL_RESULT_OVERFLOW_FAIL);
	generate(a, 120, 1, 1, SIGRTMIN_NO, 2, false, SIGNAL_RESULT_LOSE_INFO); /* pending without siginfo */
	deliver(a, 200, 2, 2, SIGRTMIN_NO);
	signal_tracker_finish(a);
	const struct signal_figures *u1 = figures(a, SIGUSR1_NO), *rt = figures(a, SIGRTMIN_NO);
	cr_assert_eq(u1->results[SIGNAL_RESULT_IGNORED], 1);
	cr_assert_eq(u1->unmatched_generations, 0);
	cr_assert_eq(rt->results[SIGNAL_RESULT_OVERFLOW_FAIL], 1);
	cr_assert_eq(rt->results[SIGNAL_RESULT_LOSE_INFO], 1);
	cr_assert_eq(rt->latency.count, 1);
	cr_assert_eq(rt->latency.max, 80, "the delivery takes the lose-info generation, not the dropped one");
	signal_tracker_free(a);
}

Test(signal, realtime_signals_queue_in_order)
{
	struct signal_tracker *a = signal_tracker_new();
	for (int i = 0; i < 5; i++)
		generate(a, 100 + 10 * (uint64_t)i, 3, 3, SIGRTMIN_NO + 1, 3, true, SIGNAL_RESULT_DELIVERED);
	for (int i = 0; i < 5; i++) {
		deliver(a, 1000 + 100 * (uint64_t)i, 3, 3, SIGRTMIN_NO + 1);
		sigreturn(a, 1050 + 100 * (uint64_t)i, 3, 3);
	}
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGRTMIN_NO + 1);
	cr_assert_eq(f->latency.count, 5);
	cr_assert_eq(f->latency.min, 900);
	cr_assert_eq(f->latency.max, 1260);
	cr_assert_eq(f->sigreturns, 5);
	signal_tracker_free(a);
}

Test(signal, standard_signal_taken_unseen_does_not_skew_the_next)
{
	struct signal_tracker *a = signal_tracker_new();
	/* the first is taken by sigwaitinfo (no signal_deliver); the kernel queued the second afresh */
	generate(a, 100, 4, 4, SIGUSR1_NO, 4, true, SIGNAL_RESULT_DELIVERED);
	generate(a, 5000, 4, 4, SIGUSR1_NO, 4, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 5100, 4, 4, SIGUSR1_NO);
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGUSR1_NO);
	cr_assert_eq(f->latency.max, 100);
	cr_assert_eq(f->unmatched_generations, 1);
	signal_tracker_free(a);
}

Test(signal, finish_counts_what_is_left)
{
	struct signal_tracker *a = signal_tracker_new();
	generate(a, 100, 6, 6, SIGRTMIN_NO, 6, true, SIGNAL_RESULT_DELIVERED);
	generate(a, 110, 6, 6, SIGRTMIN_NO, 6, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 200, 6, 6, SIGUSR2_NO);
	deliver(a, 210, 6, 7, SIGUSR2_NO);
	signal_tracker_finish(a);
	cr_assert_eq(figures(a, SIGRTMIN_NO)->unmatched_generations, 2);
	cr_assert_eq(figures(a, SIGUSR2_NO)->unreturned, 2);
	signal_tracker_finish(a); /* twice is harmless */
	cr_assert_eq(figures(a, SIGUSR2_NO)->unreturned, 2);
	signal_tracker_free(a);
}

Test(signal, handlers_left_by_longjmp_are_bounded)
{
	struct signal_tracker *a = signal_tracker_new();
	for (uint64_t i = 0; i < 1000; i++)
		deliver(a, 100 + i, 8, 8, SIGUSR1_NO);
	sigreturn(a, 5000, 8, 8);
	signal_tracker_finish(a);
	const struct signal_figures *f = figures(a, SIGUSR1_NO);
	cr_assert_eq(f->sigreturns, 1);
	cr_assert_eq(f->handler.max, 5000 - 1099, "the innermost handler is the one that returns");
	cr_assert_eq(f->unreturned, 999);
	signal_tracker_free(a);
}

Test(signal, out_of_range_signal_numbers_are_counted_not_stored)
{
	struct signal_tracker *a = signal_tracker_new();
	generate(a, 100, 1, 1, 0, 1, false, SIGNAL_RESULT_DELIVERED);
	deliver(a, 110, 1, 1, 65);
	deliver(a, 120, 1, 1, -1);
	cr_assert_eq(signal_tracker_bad_events(a), 3);
	cr_assert_null(signal_tracker_figures(a, 0));
	cr_assert_null(signal_tracker_figures(a, 65));
	signal_tracker_free(a);
}

Test(signal, equal_times_give_zero_durations)
{
	struct signal_tracker *a = signal_tracker_new();
	/* events are processed in time order, but equal times keep arrival order */
	generate(a, 500, 1, 1, SIGUSR1_NO, 1, true, SIGNAL_RESULT_DELIVERED);
	deliver(a, 500, 1, 1, SIGUSR1_NO);
	sigreturn(a, 500, 1, 1);
	signal_tracker_finish(a);
	cr_assert_eq(figures(a, SIGUSR1_NO)->latency.max, 0);
	cr_assert_eq(figures(a, SIGUSR1_NO)->handler.max, 0);
	signal_tracker_free(a);
}

Test(signal, default_actions)
{
	cr_assert(signal_default_is_fatal(SIGTERM_NO));
	cr_assert(signal_default_is_fatal(SIGKILL_NO));
	cr_assert(signal_default_is_fatal(11)); /* SIGSEGV: core */
	cr_assert(signal_default_is_fatal(SIGRTMIN_NO));
	cr_assert_not(signal_default_is_fatal(SIGCHLD_NO));
	cr_assert_not(signal_default_is_fatal(18)); /* SIGCONT */
	cr_assert_not(signal_default_is_fatal(20)); /* SIGTSTP: stops */
	cr_assert_not(signal_default_is_fatal(28)); /* SIGWINCH */
	cr_assert_not(signal_default_is_fatal(0));
}

/*
 * What a filter of signal_generate_filter() selects, for one code: the
 * filters are "code == A || code == B" or "code != A && code != B", which
 * this reads back term by term.
 */
static bool filter_selects(const char *filter, int code)
{
	bool any = strstr(filter, "||") != NULL, result = !any;
	for (const char *p = filter; (p = strstr(p, "code ")); p += 5) {
		char op[3];
		int value;
		cr_assert_eq(sscanf(p, "code %2s %d", op, &value), 2, "unreadable term at %s", p);
		bool term = strcmp(op, "==") == 0 ? code == value : code != value;
		result = any ? result || term : result && term;
	}
	return result;
}

Test(signal, generate_filters_split_every_code_one_way)
{
	char kernel[128], user[128];
	signal_generate_filter(true, kernel, sizeof(kernel));
	signal_generate_filter(false, user, sizeof(user));
	cr_assert_str_eq(kernel, "code == -2 || code == 128");
	cr_assert_str_eq(user, "code != -2 && code != 128");
	/* every si_code (SI_ASYNCNL -60 .. SI_KERNEL 0x80 and past) goes to exactly one side */
	for (int code = -64; code <= 0x100; code++)
		cr_assert_neq(filter_selects(kernel, code), filter_selects(user, code), "code %d", code);
	const int timer = -2, itimer = 0x80, kill_code = 0, tgkill = -6, sigqueue = -1, segv_maperr = 1;
	cr_assert(filter_selects(kernel, timer) && filter_selects(kernel, itimer));
	cr_assert(filter_selects(user, kill_code) && filter_selects(user, tgkill) && filter_selects(user, sigqueue) &&
		  filter_selects(user, segv_maperr));
}

/*
 * A loss of records in the middle: the delivery of the first generation and
 * the sigreturn of the first handler may be among the lost, so nothing
 * pending or running then is paired with what comes after (a second's
 * latency where the program takes each signal at once).
 */
Test(signal, nothing_pairs_across_a_loss_of_records)
{
	struct signal_tracker *a = signal_tracker_new();
	generate(a, 100, 1, 1, SIGUSR1_NO, 1, false, SIGNAL_RESULT_DELIVERED);
	deliver(a, 200, 1, 1, SIGUSR2_NO); /* a handler running across the loss */
	signal_tracker_records_lost(a);
	deliver(a, 1000000000, 1, 1, SIGUSR1_NO);
	sigreturn(a, 1000000100, 1, 1); /* closes SIGUSR1's handler, its own */
	sigreturn(a, 1000000200, 1, 1); /* SIGUSR2's, whose delivery came before the loss: no handler to close */
	signal_tracker_finish(a);
	const struct signal_figures *u1 = figures(a, SIGUSR1_NO), *u2 = figures(a, SIGUSR2_NO);
	cr_assert_eq(u1->latency.count, 0, "a latency paired across the loss");
	cr_assert_eq(u1->unmatched_deliveries, 1);
	cr_assert_eq(u1->dropped_at_loss, 1, "the pending generation");
	cr_assert_eq(u1->handler.count, 1, "the handler delivered after the loss is timed");
	cr_assert_eq(u2->dropped_at_loss, 1, "the running handler");
	cr_assert_eq(u2->handler.count, 0);
	cr_assert_eq(u2->unreturned, 0, "dropped at the loss, not left unreturned");
	signal_tracker_free(a);
}
