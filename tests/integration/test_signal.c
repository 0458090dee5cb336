/*
 * test_signal.c: the signal collector end to end.  Each test records a
 * workload whose signals are known (it sends them itself and checks that
 * its handlers ran) and compares the report's "signals" figures with that
 * ground truth: counts exactly, durations against what the workload's
 * handlers spin.  Needs root (tracepoints); skipped, not passed, without.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* Record cmd (after `--`) into data with sigprof's options opts; asserts that it ran and exited 0. */
static void record(const char *data, const char *opts, const char *cmd)
{
	char *out;
	int st = run_cmd(&out, true, "%s record -q %s -o %s -- %s", sigprof_bin(), opts, data, cmd);
	cr_assert_eq(st, 0, "recording %s exited %d: %s", cmd, st, out);
	free(out);
	double ok = json_number(data, ".meta.collectors[] | select(.name==\"signal\") | "
				      "if .status==\"ok\" then 1 else 0 end");
	if (ok != 1)
		collector_missing("signal", "the signal collector is unavailable here (see sigprof report -i %s)", data);
}

/* A field of one signal's object, by name ("SIGUSR1"); -1 when the signal is absent. */
static double signal_field(const char *json, const char *name, const char *field)
{
	char filter[256];
	snprintf(filter, sizeof(filter), "[.signals[] | select(.name==\"%s\") | %s] | first", name, field);
	return jq_file(json, filter);
}

Test(signal, storm_counts_are_exact_and_nothing_is_lost, .timeout = 300)
{
	require_tracing();
	const long n = 200000;
	const char *data = test_path("storm.data");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld", n);
	record(data, "", cmd);
	const char *json = report_json_file(data, "");
	double lost = jq_file(json, ".meta.lost");
	/*
	 * One recording in the CI-like runs of 2026-12-07 lost 3.7% right after the Chromium tests (none in 16 runs
	 * alone): a loss that does not repeat was the machine's, one that does is the recorder's.
	 */
	if (lost > 0) {
		fprintf(stderr, "signal::storm: %.0f records lost (%.3f%%); recording once more\n", lost,
			jq_file(json, ".meta.lost_percent"));
		record(data, "", cmd);
		json = report_json_file(data, "");
		lost = jq_file(json, ".meta.lost");
	}
	cr_assert_eq(lost, 0, "%.0f records lost at the default ring size (%.3f%%), twice", lost,
		     jq_file(json, ".meta.lost_percent"));
	cr_assert_eq(jq_file(json, ".meta.truncated | if . then 1 else 0 end"), 0);
	const char *fields[] = { ".generated", ".delivered", ".sigreturns", ".latency_ns.count", ".handler_ns.count",
				 ".delivered_to.handler" };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		cr_assert_eq(signal_field(json, "SIGUSR1", fields[i]), n, "SIGUSR1 %s is %.0f, sent %ld", fields[i],
			     signal_field(json, "SIGUSR1", fields[i]), n);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".signo"), 10);
	cr_assert_eq(signal_field(json, "SIGUSR1", "[.not_delivered[]] | add"), 0);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".unmatched_deliveries + .unmatched_generations + .unreturned"),
		     0);
	if (jq_file(json, ".signals | length") != 1) {
		char *names;
		run_cmd(&names, true, "jq -c '[.signals[] | {name, generated, delivered}]' '%s'", json);
		cr_assert_fail("signal_storm sends nothing but SIGUSR1; the report has %s", names);
	}
	/* the exact counting totals agree with the per-event detail */
	/* other processes' timers firing while the workload ran are in the kernel's total, and counted apart */
	cr_assert_eq(signal_field(json, "SIGUSR1", ".totals.signal_generate"),
		     n + jq_file(json, ".signals_other_tasks_generated"));
	cr_assert_eq(signal_field(json, "SIGUSR1", ".totals.signal_deliver"), n);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".totals.sys_enter_rt_sigreturn"), n);
	/* every event is on its path */
	cr_assert_eq(jq_file(json, ".paths[] | select(.path==\"signal-generate\") | .samples.signal"), n);
	cr_assert_eq(jq_file(json, ".paths[] | select(.path==\"signal-deliver\") | .samples.signal"), n);
	cr_assert_eq(jq_file(json, ".paths[] | select(.path==\"sigreturn\") | .samples.signal"), n);
	/* latency and handler time are real durations, ordered */
	double p50 = signal_field(json, "SIGUSR1", ".latency_ns.p50");
	double p99 = signal_field(json, "SIGUSR1", ".latency_ns.p99");
	double max = signal_field(json, "SIGUSR1", ".latency_ns.max");
	cr_assert(p50 > 0 && p50 <= p99 && p99 <= max, "latency p50 %.0f p99 %.0f max %.0f", p50, p99, max);
	/* the sending stack runs through the workload's main; the interrupted one is in kill() */
	cr_assert_gt(signal_field(json, "SIGUSR1", "[.senders[0].frames[] | select(.sym==\"main\")] | length"), 0);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".senders[0].count"), n);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".interrupted[0].count"), n);
}

Test(signal, text_section_has_a_row_per_signal)
{
	require_tracing();
	const char *data = test_path("text.data");
	record(data, "-e signal", W "signal_storm 3000");
	char *text;
	int st = run_cmd(&text, false, "%s report -i %s", sigprof_bin(), data);
	cr_assert_eq(st, 0);
	const char *row = strstr(text, "\n  SIGUSR1 ");
	cr_assert(row, "no SIGUSR1 row in:\n%s", text);
	long generated, delivered, sigreturns, not_delivered;
	cr_assert_eq(sscanf(row, " SIGUSR1 %ld %ld %ld %ld", &generated, &delivered, &sigreturns, &not_delivered), 4,
		     "unreadable row: %.200s", row);
	cr_assert_eq(generated, 3000);
	cr_assert_eq(delivered, 3000);
	cr_assert_eq(sigreturns, 3000);
	cr_assert_eq(not_delivered, 0);
	cr_assert(strstr(text, "sent from") && strstr(text, "interrupted at"), "no stacks in:\n%s", text);
	free(text);
}

Test(signal, already_pending_signal_is_delivered_once)
{
	require_tracing();
	const char *data = test_path("pending.data");
	record(data, "-e signal", W "sig_pending 1");
	const char *json = report_json_file(data, "");
	cr_assert_eq(signal_field(json, "SIGUSR2", ".generated"), 2);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".not_delivered.already_pending"), 1);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".delivered"), 1);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".sigreturns"), 1);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".latency_ns.count"), 1);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".unmatched_generations + .unmatched_deliveries"), 0);
	/* and many rounds add up */
	record(data, "-e signal", W "sig_pending 300");
	json = report_json_file(data, "");
	cr_assert_eq(signal_field(json, "SIGUSR2", ".generated"), 600);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".not_delivered.already_pending"), 300);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".delivered"), 300);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".handler_ns.count"), 300);
}

Test(signal, nested_handlers_are_timed_innermost_first)
{
	require_tracing();
	const long n = 200, inner_us = 200, outer_us = 500;
	const char *data = test_path("nested.data");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "sig_nested %ld %ld %ld", n, inner_us, outer_us);
	record(data, "-e signal", cmd);
	const char *json = report_json_file(data, "");
	const char *names[] = { "SIGUSR1", "SIGUSR2" };
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(signal_field(json, names[i], ".generated"), n, "%s", names[i]);
		cr_assert_eq(signal_field(json, names[i], ".delivered"), n, "%s", names[i]);
		cr_assert_eq(signal_field(json, names[i], ".sigreturns"), n, "%s", names[i]);
		cr_assert_eq(signal_field(json, names[i], ".handler_ns.count"), n, "%s", names[i]);
		cr_assert_eq(signal_field(json, names[i], ".unreturned"), 0, "%s", names[i]);
	}
	/* the histogram is within 1.6%: allow 2% below the spin times */
	double inner = signal_field(json, "SIGUSR2", ".handler_ns.p50");
	double outer = signal_field(json, "SIGUSR1", ".handler_ns.p50");
	cr_assert_geq(inner, 0.98 * inner_us * 1000, "inner handler p50 %.0f ns, spins %ld us", inner, inner_us);
	cr_assert_lt(inner, (inner_us + outer_us) * 1000.0,
		     "inner handler p50 %.0f ns: charged the outer one's time (popped the wrong handler)", inner);
	cr_assert_geq(outer, 0.98 * (inner_us + outer_us) * 1000, "outer handler p50 %.0f ns: misses the nested one",
		      outer);
}

Test(signal, threads_leaving_a_handler_by_longjmp_then_exiting)
{
	require_tracing();
	const long threads = 100, returns = 50;
	const char *data = test_path("thread_exit.data");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "sig_thread_exit %ld %ld", threads, returns);
	record(data, "-e signal", cmd);
	const char *json = report_json_file(data, "");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), threads);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".sigreturns"), 0);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".handler_ns.count"), 0);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".unreturned"), threads);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".latency_ns.count"), threads, "pthread_kill generations match");
	cr_assert_eq(signal_field(json, "SIGUSR2", ".delivered"), returns);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".sigreturns"), returns);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".handler_ns.count"), returns);
}

Test(signal, stress_ng_timer_signal_returns_once_per_delivery, .timeout = 120)
{
	require_tracing();
	if (system("command -v stress-ng >/dev/null 2>&1") != 0)
		skip_environment("stress-ng is not installed (apt-get install stress-ng)");
	const char *data = test_path("timer.data");
	record(data, "-e signal", "stress-ng --timer 1 --timer-freq 10000 -t 2 >/dev/null");
	const char *json = report_json_file(data, "");
	/* stress-ng's timer stressor uses SIGRTMIN (34 with glibc) for its POSIX timer */
	double delivered = signal_field(json, "SIGRTMIN", ".delivered");
	double sigreturns = signal_field(json, "SIGRTMIN", ".sigreturns");
	cr_assert_gt(delivered, 1000, "SIGRTMIN delivered %.0f times in 2 s at 10 kHz", delivered);
	cr_assert_eq(delivered, sigreturns, "SIGRTMIN delivered %.0f, sigreturns %.0f", delivered, sigreturns);
	cr_assert_eq(signal_field(json, "SIGRTMIN", ".handler_ns.count"), delivered);
	cr_assert_eq(signal_field(json, "SIGRTMIN", ".signo"), 34);
	/* distinct stacks read differently in the text, even those alike in their first four frames */
	char *rows;
	cr_assert_eq(run_cmd(&rows, false, "%s report --width 100 -i '%s' | sed -n '/SIGRTMIN stacks/,/interrupted at/p' | "
					   "grep '^       ' | sed 's/^ *[0-9]*  //' | sort | uniq -d",
			     sigprof_bin(), data), 0);
	cr_assert_str_eq(rows, "", "rows that read the same:\n%s", rows);
	free(rows);
}

/*
 * Another process's interval timer, on the workload's CPU, expires while
 * the workload runs there: its signal_generate hits fire in the workload's
 * context (an interrupt runs in whatever task is current).  They are not the
 * workload's: counted apart, in no signal, and they are exactly what the
 * kernel's total has more than the workload sent.
 */
Test(signal, other_processes_timer_signals_are_not_the_workloads, .timeout = 120)
{
	require_tracing();
	char *out;
	if (run_cmd(&out, true, "command -v taskset") != 0)
		skip_environment("taskset is not installed: %s", out);
	free(out);
	const long n = 50000;
	const char *data = test_path("foreign.data");
	/* the other process: started by the test, not under sigprof; on CPU 0 like the workload */
	cr_assert_eq(run_cmd(NULL, true, "taskset -c 0 " W "itimer_neighbour 50 30 >/dev/null 2>&1 & echo $! > '%s'",
			     test_path("neighbour.pid")), 0);
	usleep(200 * 1000);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "taskset -c 0 " W "signal_storm %ld", n);
	record(data, "-e signal", cmd);
	run_cmd(NULL, true, "kill $(cat '%s')", test_path("neighbour.pid"));
	const char *json = report_json_file(data, "");
	double other = jq_file(json, ".signals_other_tasks_generated");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), n);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), n);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".totals.signal_generate"), n + other,
		     "the kernel's total is the workload's %ld and the %.0f others'", n, other);
	cr_assert_gt(other, 0, "the neighbour's timer, on the workload's CPU, never fired while it ran");
	cr_assert_eq(jq_file(json, "[.signals[] | select(.name != \"SIGUSR1\")] | length"), 0,
		     "no other signal is the workload's");
}

/*
 * A workload that handles no signal, beside the same neighbour: the text
 * report says there were no signal events and still says how many of the
 * other processes' signals it left out (the header counts their samples).
 */
Test(signal, a_workload_without_signals_still_notes_the_others_left_out, .timeout = 120)
{
	require_tracing();
	char *out;
	if (run_cmd(&out, true, "command -v taskset") != 0)
		skip_environment("taskset is not installed: %s", out);
	free(out);
	const char *data = test_path("foreign-only.data");
	cr_assert_eq(run_cmd(NULL, true, "taskset -c 0 " W "itimer_neighbour 50 30 >/dev/null 2>&1 & echo $! > '%s'",
			     test_path("neighbour2.pid")), 0);
	usleep(200 * 1000);
	record(data, "-e signal", "taskset -c 0 " W "deep_fp 500 3");
	run_cmd(NULL, true, "kill $(cat '%s')", test_path("neighbour2.pid"));
	const char *json = report_json_file(data, "");
	double other = jq_file(json, ".signals_other_tasks_generated");
	cr_assert_gt(other, 0, "the neighbour's timer, on the workload's CPU, never fired while it ran");
	cr_assert_eq(jq_file(json, ".signals | length"), 0, "a workload that handles no signal has signals");
	char *text;
	cr_assert_eq(run_cmd(&text, false, "%s report --no-pager -i '%s'", sigprof_bin(), data), 0);
	char want[96];
	snprintf(want, sizeof(want), "note: %.0f %s generated by interrupts for other processes' tasks", other,
		 other == 1 ? "signal" : "signals");
	cr_assert_not_null(strstr(text, "no signal events"), "%s", text);
	cr_assert_not_null(strstr(text, want), "no '%s' in:\n%s", want, text);
	free(text);
}

/*
 * A handler's own samples are on no path of the code it interrupted
 * (docs/paths.md): signal_spin's handler interrupts its kill(), on
 * signal-generate, and spins in user code; its samples are `other`, in an
 * unwound stack (default) and in a frame-pointer walk alike.
 */
Test(signal, a_handlers_own_samples_are_not_the_interrupted_codes_path)
{
	require_tracing();
	static const char *const modes[][2] = { { "spin-path.data", "-e cpu,signal" },
						 { "spin-path-fp.data", "-e cpu,signal -g" } };
	for (size_t i = 0; i < 2; i++) {
		const char *data = test_path(modes[i][0]);
		record(data, modes[i][1], W "signal_spin 4000 8000");
		const char *json = report_json_file(data, "");
		require_collector(json, "cpu");
		double in_handler = stack_samples(json, "cpu", NULL, ".[0].sym==\"on_signal\"");
		double other = stack_samples(json, "cpu", "other", ".[0].sym==\"on_signal\"");
		cr_assert_geq(in_handler, 20, "%s: only %.0f cpu samples in the handler", modes[i][1], in_handler);
		cr_assert_eq(other, in_handler, "%s: %.0f of %.0f samples in the handler on the other path", modes[i][1],
			     other, in_handler);
	}
}

/* The samples of one of the signal collector's events, by name; -1 when the recording has no such event. */
static double signal_event_samples(const char *json, const char *event)
{
	char filter[256];
	snprintf(filter, sizeof(filter),
		 "[.meta.collectors[] | select(.name==\"signal\") | .events[] | select(.name==\"%s\") | .samples] "
		 "| first // -1",
		 event);
	return jq_file(json, filter);
}

/* Frames of a signal's sending stacks that are not the kernel's: user frames. */
static double sender_user_frames(const char *json, const char *name)
{
	return signal_field(json, name, "[.senders[].frames[] | select(.dso != \"[kernel]\")] | length");
}

/*
 * A timer's signal is generated by the kernel (the workload's CPU-time
 * timers expire in its own context, so every generation is recorded): by
 * default its generate record carries the kernel's stack only, on the
 * "#kernel" event, while a kill() keeps its whole stack.  The workload
 * knows what it sent: N of each, so the counts stay exact across the two
 * events, and the kernel's totals of the two add up.
 */
/* Record sig_timer_kill n with opts into the test's file data; returns its report's JSON file. */
static const char *record_timer_kill(const char *data, const char *opts, long n)
{
	require_tracing();
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "sig_timer_kill %ld", n);
	record(test_path(data), opts, cmd);
	return report_json_file(test_path(data), "");
}

Test(signal, timer_generations_carry_no_user_stack_kill_keeps_its_own, .timeout = 120)
{
	const long n = 100;
	const char *json = record_timer_kill("timer_kill.data", "-e signal", n);
	if (signal_event_samples(json, "signal:signal_generate#kernel") < 0)
		skip_environment("this kernel refused signal_generate's filter on code: one event with whole stacks");
	const char *names[] = { "SIGUSR1", "SIGUSR2", "SIGPROF" };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(signal_field(json, names[i], ".generated"), n, "%s generated %.0f, sent %ld", names[i],
			     signal_field(json, names[i], ".generated"), n);
		cr_assert_eq(signal_field(json, names[i], ".delivered"), n);
		cr_assert_eq(signal_field(json, names[i], ".sigreturns"), n);
		cr_assert_eq(signal_field(json, names[i], ".latency_ns.count"), n, "%s: every generation pairs", names[i]);
	}
	/* kill() is user code's: the whole stack, on the tracepoint's own event */
	cr_assert_eq(signal_event_samples(json, "signal:signal_generate"), n);
	cr_assert_gt(signal_field(json, "SIGUSR1", "[.senders[0].frames[] | select(.sym==\"send_by_kill\")] | length"), 0,
		     "kill()'s generation lost its user stack");
	/* the two timers' (SI_TIMER, SI_KERNEL) are the kernel's: its stack only, on #kernel */
	cr_assert_eq(signal_event_samples(json, "signal:signal_generate#kernel"), 2 * n);
	cr_assert_eq(sender_user_frames(json, "SIGUSR2"), 0, "the POSIX timer's generation carries user frames");
	cr_assert_eq(sender_user_frames(json, "SIGPROF"), 0, "the itimer's generation carries user frames");
	cr_assert_gt(signal_field(json, "SIGUSR2", "[.senders[].frames[]] | length"), 0, "no kernel stack either");
	/* the interrupted stacks (the deliveries') keep their user part */
	cr_assert_gt(signal_field(json, "SIGUSR2", "[.interrupted[].frames[] | select(.sym==\"spin_until\")] | length"),
		     0);
	/* the exact totals of the two events add up to every generation */
	cr_assert_eq(signal_field(json, "SIGUSR1", ".totals.signal_generate"),
		     3 * n + jq_file(json, ".signals_other_tasks_generated"));
	cr_assert_eq(jq_file(json, ".paths[] | select(.path==\"signal-generate\") | .samples.signal"), 3 * n);
}

/* --call-graph sets one mode for every event: no split, the timers' generations keep their user stacks. */
Test(signal, a_chosen_call_graph_keeps_one_generate_event, .timeout = 120)
{
	const long n = 50;
	const char *json = record_timer_kill("timer_kill_fp.data", "-e signal --call-graph fp", n);
	cr_assert_eq(signal_event_samples(json, "signal:signal_generate#kernel"), -1);
	cr_assert_eq(signal_event_samples(json, "signal:signal_generate"), 3 * n);
	const char *names[] = { "SIGUSR1", "SIGUSR2", "SIGPROF" };
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(signal_field(json, names[i], ".generated"), n);
	cr_assert_gt(sender_user_frames(json, "SIGUSR2"), 0);
}

/*
 * A ring of 8 pages against a signal storm loses records: nothing pending or
 * running then is paired with what comes after (dropped_at_loss), and a
 * report filtered to the workload sees the same losses, whichever task the
 * kernel stamped its LOST records with.
 */
Test(signal, pairs_never_span_a_loss_of_records_filtered_or_not, .timeout = 120)
{
	require_tracing();
	const char *data = test_path("lossy.data");
	record(data, "-m 8 -e signal", W "signal_storm 100000 >/dev/null");
	const char *json = report_json_file(data, "");
	if (jq_file(json, ".meta.lost") == 0)
		skip_premise("the 8-page ring lost nothing on this machine: no loss to pair across");
	double dropped = signal_field(json, "SIGUSR1", ".dropped_at_loss");
	cr_assert_gt(dropped, 0, "records were lost and nothing was pending then");
	json = report_json_file(data, "--comm signal_storm");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".dropped_at_loss"), dropped, "the filtered report missed losses");
}

/*
 * In a program without frame pointers each generation and delivery takes
 * a key, a short stack copy (SIGNAL_KEY_STACK_USER_SIZE), counted on the
 * whole stack its call site's copies lend it.  sigqueue() keeps a 128-byte
 * siginfo_t on the stack: the keys must reach past it to the call site, or
 * the two sites would be one key, cut.  Every signal counts on the stack
 * of the site that sent it, exactly, those sent before the site's first
 * copy too.
 */
Test(signal, keys_tell_two_call_sites_of_shared_senders_apart, .timeout = 120)
{
	const long n = 20000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_senders_nofp %ld", n);
	record(test_path("senders.data"), "-e signal", cmd);
	const char *json = report_json_file(test_path("senders.data"), "");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), 4 * n);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), 4 * n);
	const char *sites[] = { "from_site_a", "from_site_b" }, *senders[] = { "send_by_sigqueue", "send_by_raise" };
	const char *paths[] = { "signal-generate", "signal-deliver" };
	for (size_t p = 0; p < 2; p++)
		for (size_t s = 0; s < 2; s++)
			for (size_t k = 0; k < 2; k++) {
				char test[256];
				snprintf(test, sizeof(test),
					 "any(.[]; .sym == \"%s\") and any(.[]; .sym == \"%s\") and any(.[]; .sym == \"main\")",
					 sites[s], senders[k]);
				double got = stack_samples(json, "signal", paths[p], test);
				cr_assert_eq(got, n, "%s: %.0f stacks of %s <- %s reach main, it sent %ld", paths[p], got,
					     senders[k], sites[s], n);
			}
	cr_assert_eq(signal_field(json, "SIGUSR1",
				  "[.senders[] | select(.frames | any(.[]; .sym == \"from_site_a\")) | .count] | add"),
		     2 * n, "the senders table of site a");
}
