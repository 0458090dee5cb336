/*
 * test_waits.c: the wake linker end to end (docs/waits.md), on the modes
 * of tests/workloads/wait_endings.c, whose waits end in known ways: each
 * test checks the report's "waits" object against the tids and counts the
 * workload printed.  Needs root (tracepoints, system-wide sched_waking);
 * skipped, not passed, where the futex or sched collector cannot open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

#define ROUNDS 20

/* Record wait_endings MODE ROUNDS; the JSON report's file, the workload's output in *out (to free). */
static const char *record_mode(const char *mode, char **out)
{
	require_perf_events();
	require_root();
	char name[64], cmd[256];
	snprintf(name, sizeof(name), "%s.data", mode);
	const char *data = test_path(name);
	snprintf(cmd, sizeof(cmd), W "wait_endings %s %d", mode, ROUNDS);
	*out = record_workload(data, "", cmd);
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	require_collector(json, "sched");
	return json;
}

/* The word whose symbol is sym, as a jq filter over .waits.words. */
#define WORD(sym) ".waits.words[] | select(.symbol == \"" sym "\")"

Test(waits, mutex_holder_ends_every_wait_and_its_work_is_hold_long, .timeout = 120)
{
	char *out;
	const char *json = record_mode("hold", &out);
	int holder, waiter, rounds;
	cr_assert_eq(sscanf(out, "holder %d waiter %d rounds %d", &holder, &waiter, &rounds), 3, "workload: %s", out);
	free(out);
	double waits = jq_file(json, "[" WORD("held_mutex") " | .ended_by[].waits] | add");
	double by_task = jq_file(json, WORD("held_mutex") " | .ended_by.task.waits");
	/* each round holds the lock until the waiter is blocked on it: one wait a round (its futex_wait may
	 * still find the lock released, EAGAIN, if the waiter was descheduled for the whole 10 ms) */
	cr_assert(waits >= rounds * 0.8 && waits <= rounds, "%.0f waits on held_mutex in %d rounds", waits, rounds);
	cr_expect_eq(by_task, waits, "%.0f of %.0f waits ended by a task", by_task, waits);
	/* every wait kept in full names the holder, its FUTEX_WAKE, from pthread_mutex_unlock in hold_long */
	char filter[1024];
	snprintf(filter, sizeof(filter),
		 "[.waits.longest[] | select(.word.symbol == \"held_mutex\") | select(.waker_tid != %d or "
		 ".waker_op != \"WAKE\" or (.waker_stack.frames | (any(.sym == \"hold_long\") and "
		 "any(.sym | test(\"pthread_mutex_unlock|lll_lock_wake|lll_unlock_wake\"))) | not))] | length",
		 holder);
	cr_expect_eq(jq_file(json, filter), 0, "a wait on held_mutex not ended by the holder's unlock in hold_long");
	snprintf(filter, sizeof(filter), "[.waits.longest[] | select(.word.symbol == \"held_mutex\" and .tid == %d)] | length",
		 waiter);
	cr_expect_gt(jq_file(json, filter), 0, "the waiter's waits are among the longest");
	/* the holder's cpu samples during the waits: in hold_long (its spin, its unlock) */
	double in_hold = jq_file(json, "[.waits.waker_work[] | select(.word.symbol == \"held_mutex\" and "
				       "(.stack.frames | any(.sym == \"hold_long\"))) | .weighted_ns] | add // 0");
	double all = jq_file(json, "[.waits.waker_work[] | select(.word.symbol == \"held_mutex\") | .weighted_ns] | add // 0");
	double samples = jq_file(json, WORD("held_mutex") " | .waker_samples");
	if (samples < 1)
		cr_skip_test("the holder got no cpu sample during the waits (the cpu collector did not run?)");
	cr_expect_geq(in_hold, 0.9 * all, "hold_long has %.0f of %.0f weighted ns of the holder's work", in_hold, all);
}

Test(waits, folded_and_script_join_each_wait_to_its_waker, .timeout = 120)
{
	char *out;
	const char *json = record_mode("hold", &out);
	int holder;
	cr_assert_eq(sscanf(out, "holder %d", &holder), 1, "workload: %s", out);
	free(out);
	double task_ns = jq_file(json, WORD("held_mutex") " | .ended_by.task.wait_ns");
	char *folded;
	int st = run_cmd(&folded, false, "%s report --folded --weight wake -i '%s/hold.data'", sigprof_bin(), test_dir());
	cr_assert_eq(st, 0, "report --folded --weight wake exited %d: %s", st, folded);
	/* the waiter's frames root first, then --, then the holder's frames at the wake, leaf first */
	double joined = 0;
	for (char *line = strtok(folded, "\n"); line; line = strtok(NULL, "\n")) {
		const char *sep = strstr(line, ";--;");
		cr_assert(sep, "no ;--; in %s", line);
		if (!strstr(line, ";wait_for_holder;"))
			continue;
		cr_expect(strstr(sep, ";hold_long;holder;"), "the waker's frames are not the holder's unlock: %s", line);
		joined += strtod(strrchr(line, ' ') + 1, NULL);
	}
	free(folded);
	cr_expect_eq(joined, task_ns, "the folded waits weigh %.0f ns, the waits on held_mutex %.0f ns", joined, task_ns);
	/* sigprof script: each of those waits' exits names the holder's wake in hold_long */
	char *script;
	st = run_cmd(&script, false, "%s script -i '%s/hold.data' | grep -c 'ended by task tid %d (.*) WAKE at .*hold_long'",
		     sigprof_bin(), test_dir(), holder);
	double exits = strtod(script, NULL);
	free(script);
	cr_expect_eq(exits, jq_file(json, WORD("held_mutex") " | .ended_by.task.waits"),
		     "%.0f exits in sigprof script name the holder's wake", exits);
}

Test(waits, condvar_waits_are_ended_by_the_producer_signal, .timeout = 120)
{
	char *out;
	const char *json = record_mode("condvar", &out);
	int producer, consumer, rounds;
	cr_assert_eq(sscanf(out, "producer %d consumer %d rounds %d", &producer, &consumer, &rounds), 3, "workload: %s",
		     out);
	free(out);
	/* the condvar's words are inside ready_cond (glibc's __g_signals) */
	double waits = jq_file(json, "[.waits.words[] | select(.symbol | startswith(\"ready_cond\")) | .ended_by[].waits] | add");
	double by_task = jq_file(json, "[.waits.words[] | select(.symbol | startswith(\"ready_cond\")) | .ended_by.task.waits] | add");
	cr_assert(waits >= 1 && waits <= rounds, "%.0f waits on ready_cond in %d rounds", waits, rounds);
	cr_expect_eq(by_task, waits);
	char filter[1024];
	snprintf(filter, sizeof(filter),
		 "[.waits.longest[] | select(.word.symbol | startswith(\"ready_cond\")) | select(.tid != %d or "
		 ".waker_tid != %d or (.waker_stack.frames | any(.sym == \"pthread_cond_signal\" or "
		 ".sym == \"__pthread_cond_signal\") | not))] | length",
		 consumer, producer);
	cr_expect_eq(jq_file(json, filter), 0, "a wait on ready_cond not the consumer's ended by pthread_cond_signal");
}

Test(waits, chain_of_three_threads_follows_c_to_b_to_a, .timeout = 120)
{
	char *out;
	const char *json = record_mode("chain", &out);
	int a, b, c, rounds;
	cr_assert_eq(sscanf(out, "a %d b %d c %d rounds %d", &a, &b, &c, &rounds), 4, "workload: %s", out);
	free(out);
	char filter[1024];
	/* C's waits on second_mutex are ended by B, and B's wait on first_mutex, ended by A, ended inside them */
	snprintf(filter, sizeof(filter), "[.waits.longest[] | select(.tid == %d and .word.symbol == \"second_mutex\")] | length",
		 c);
	double c_waits = jq_file(json, filter);
	cr_assert_gt(c_waits, 0, "no wait of C on second_mutex among the longest");
	snprintf(filter, sizeof(filter),
		 "[.waits.longest[] | select(.tid == %d and .word.symbol == \"second_mutex\") | select(.waker_tid == %d "
		 "and (.chain | length) >= 1 and .chain[0].tid == %d and .chain[0].word.symbol == \"first_mutex\" and "
		 ".chain[0].waker_tid == %d)] | length",
		 c, b, b, a);
	double chained = jq_file(json, filter);
	cr_expect_eq(chained, c_waits, "%.0f of C's %.0f waits have the chain C <- B (first_mutex) <- A", chained, c_waits);
}

Test(waits, futex_timeouts_end_as_timeouts, .timeout = 120)
{
	char *out;
	const char *json = record_mode("timeout", &out);
	int timeouts;
	cr_assert_eq(sscanf(out, "timeouts %d", &timeouts), 1, "workload: %s", out);
	free(out);
	cr_expect_eq(jq_file(json, WORD("timeout_word") " | .ended_by.timeout.waits"), timeouts);
	cr_expect_eq(jq_file(json, "[" WORD("timeout_word") " | .ended_by[].waits] | add"), timeouts);
}

Test(waits, futex_wait_interrupted_by_a_signal_ends_as_signal, .timeout = 120)
{
	char *out;
	const char *json = record_mode("signal", &out);
	int waiter, interrupted;
	cr_assert_eq(sscanf(out, "waiter %d interrupted %d", &waiter, &interrupted), 2, "workload: %s", out);
	free(out);
	cr_assert_eq(interrupted, ROUNDS, "the workload's waits were not all interrupted: %d", interrupted);
	cr_expect_eq(jq_file(json, WORD("signal_word") " | .ended_by.signal.waits"), interrupted);
	cr_expect_eq(jq_file(json, "[" WORD("signal_word") " | .ended_by[].waits] | add"), interrupted);
}

Test(waits, nanosleeps_end_by_the_timer_interrupt, .timeout = 120)
{
	char *out;
	const char *json = record_mode("timer", &out);
	int sleeps;
	cr_assert_eq(sscanf(out, "sleeps %d", &sleeps), 1, "workload: %s", out);
	free(out);
	double interrupt = jq_file(json, "[(.waits.words[] | select(.futex == false)) | .ended_by.interrupt.waits] | add");
	double unlinked = jq_file(json, "[(.waits.words[] | select(.futex == false)) | .ended_by.unlinked.waits] | add");
	double by_task = jq_file(json, "[(.waits.words[] | select(.futex == false)) | .ended_by.task.waits] | add");
	/* each nanosleep is one sleep; a timer waking the kernel did not sample leaves it unlinked, never a task's */
	cr_expect_geq(interrupt + unlinked, sleeps, "%.0f sleeps ended by an interrupt, %.0f unlinked, of %d", interrupt,
		      unlinked, sleeps);
	/* where some timer wakings were recorded (not every sleep unlinked), at least one is linked as an interrupt */
	if (unlinked < sleeps)
		cr_expect_gt(interrupt, 0, "%.0f sleeps, %.0f unlinked, none linked to its interrupt", (double)sleeps, unlinked);
	cr_expect_eq(by_task, 0, "a timer's waking was taken for a task's");
}

Test(waits, a_waker_in_another_process_through_a_shared_word, .timeout = 120)
{
	char *out;
	const char *json = record_mode("shared", &out);
	int parent, child, woken;
	cr_assert_eq(sscanf(out, "parent %d child %d woken %d", &parent, &child, &woken), 3, "workload: %s", out);
	free(out);
	char filter[1024];
	snprintf(filter, sizeof(filter),
		 "[.waits.words[] | select(.futex and .pid == %d and .ended_by.task.waits > 0) | .ended_by.task.waits] | add // 0",
		 parent);
	double by_task = jq_file(json, filter);
	cr_expect(by_task >= 1 && by_task <= woken, "%.0f waits ended by a task, %d wait calls woken", by_task, woken);
	/* the waker is a child process (another pid), in its FUTEX_WAKE from child_release */
	snprintf(filter, sizeof(filter),
		 "[.waits.longest[] | select(.word.futex and .tid == %d) | "
		 "select(.waker_pid == %d or .waker_op != \"WAKE\" or (.waker_stack.frames | any(.sym == \"child_release\") "
		 "| not))] | length",
		 parent, parent);
	cr_expect_eq(jq_file(json, filter), 0, "a wait of the parent not ended by a child's FUTEX_WAKE in child_release");
}

/*
 * wait_endings pipe: the reader's sleeps in read() are ended by the
 * writer's write() in send_message(), outside any futex call.  The waker's
 * stack is the one its own sched_waking#stack recorded; sigprof script
 * names the waker on the reader's switch-ins (both threads run on one CPU,
 * so the writer's switch-out is mostly the reader's switch-in).
 */
Test(waits, a_pipe_write_ends_sleeps_with_the_writers_stack, .timeout = 120)
{
	char *out;
	const char *json = record_mode("pipe", &out);
	int writer, reader, rounds;
	cr_assert_eq(sscanf(out, "writer %d reader %d rounds %d", &writer, &reader, &rounds), 3, "workload: %s", out);
	free(out);
	char filter[256];
	/* the reader blocks in read() once a round, and nothing but the writer's write wakes it */
	snprintf(filter, sizeof(filter), "[.waits.longest[] | select(.tid == %d and .word.futex == false)]", reader);
	char count[1024];
	snprintf(count, sizeof(count), "%s | length", filter);
	double kept = jq_file(json, count);
	cr_assert_geq(kept, 1, "no sleep of the reader among the longest waits");
	snprintf(count, sizeof(count), "%s | map(select(.waker_tid == %d and .waker_stack_from == \"sched_waking\" and "
		 "(.waker_stack.frames | any(.sym == \"send_message\")))) | length", filter, writer);
	double by_write = jq_file(json, count);
	double unsampled = jq_file(json, ".meta.unsampled_hits_by_event[\"sched:sched_waking#stack\"] // 0");
	cr_expect_eq(by_write, kept, "%.0f of the reader's %.0f longest sleeps name the writer's write in send_message "
		     "(%.0f waking stacks not sampled)", by_write, kept, unsampled);
	cr_expect_geq(jq_file(json, ".waits.waker_stacks_at_waking"), rounds * 0.8);
	/* sigprof script: a switch-in of the reader after a sleep names the writer and its write */
	char *script;
	int st = run_cmd(&script, false, "%s script -i '%s/pipe.data' --event sched:sched_switch | "
					 "grep 'next tid %d (.*) slept'", sigprof_bin(), test_dir(), reader);
	cr_assert_eq(st, 0, "no switch-in of the reader in sigprof script describes its sleep");
	int lines = 0;
	for (char *line = strtok(script, "\n"); line; line = strtok(NULL, "\n"), lines++) {
		char want[64];
		snprintf(want, sizeof(want), "ended by task tid %d ", writer);
		cr_expect(strstr(line, want) && strstr(line, "send_message"), "not the writer's write: %s", line);
	}
	free(script);
	cr_assert_geq(lines, 1);
}
