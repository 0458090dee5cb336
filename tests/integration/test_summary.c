/*
 * test_summary.c: the text report's first screen (docs/report-summary.md)
 * on workloads whose figures are known, and the --time that report,
 * script and diff share.
 *
 *   lock_bucket T N: every FUTEX_WAIT finds the word changed (EAGAIN, the
 *     workload counts them): the futex line says 100% EAGAIN; a syscall
 *     loop recorded call by call costs the recorder most of the cpu: the
 *     warning line and its cheaper options; the bucket lock's line exactly
 *     when the lock collector counted contention on futex-wait.
 *   sig_pending R: 2R SIGUSR2 generated, R of them merged into the pending
 *     one: the signal line says so with the exact counts.
 *   stress-ng --timer (when installed): the caveat of cpu-clock samples on
 *     the function that re-enables interrupts exactly when the cpu samples
 *     say that function holds them.
 *   The first screen ends within 23 rows of 80 columns on each.
 *   A "sigprof script --tid T --time A,B" line the report suggests, pasted
 *     into report and into script, keeps the event it points at.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void setup(void)
{
	require_perf_events();
	require_root();
}

/* The first screen of data's text report at 80 columns: the lines before its header block. */
static char *first_screen(const char *data)
{
	char *out;
	int st = run_cmd(&out, false, "%s report --no-pager --width 80 -i '%s' | sed '/^# sigprof report of/,$d'",
			 sigprof_bin(), data);
	cr_assert_eq(st, 0, "report exited %d", st);
	return out;
}

static void check_fits(const char *screen)
{
	cr_assert_leq(count_lines(screen), 23, "the first screen takes %d rows:\n%s", count_lines(screen), screen);
	cr_assert_leq(widest_line(screen), 80, "a line of the first screen is wider than 80 columns:\n%s", screen);
	cr_assert_not_null(strstr(screen, "Findings"), "%s", screen);
}

/* The findings as one string: each wrapped line joined to the one before, so a finding is found whole. */
static char *joined(const char *screen)
{
	char *out;
	FILE *f = fopen(test_path("screen.txt"), "w");
	cr_assert_not_null(f);
	fputs(screen, f);
	fclose(f);
	run_cmd(&out, false, "sed -e ':a' -e 'N' -e '$!ba' -e 's/\\n        / /g' '%s'", test_path("screen.txt"));
	return out;
}

Test(summary, futex_eagain_recorder_warning_and_bucket_lock, .init = setup, .timeout = 300)
{
	const char *data = test_path("bucket.data");
	const long threads = 2, calls = 50000;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), W "lock_bucket %ld %ld", threads, calls);
	/* every call recorded: each costs the recorder two tracepoint records, most of this loop's cpu */
	char *out = record_workload(data, "-e cpu,futex,lock --futex trace", cmd);
	long made, eagain;
	cr_assert_eq(sscanf(out, "calls %ld eagain %ld", &made, &eagain), 2, "workload printed: %s", out);
	free(out);
	cr_assert_eq(eagain, made);
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	char *screen = first_screen(data);
	check_fits(screen);
	char *text = joined(screen);
	/*
	 * The futex line: the WAIT calls first, exact in trace mode, all EAGAIN,
	 * and what EAGAIN means (the main thread's join may be named beside
	 * them: it waited longest).
	 */
	char want[160];
	snprintf(want, sizeof(want), "futex: %ld %03ld WAIT ", made / 1000, made % 1000);
	cr_assert_not_null(strstr(text, want), "no '%s' in:\n%s", want, text);
	const char *line = strstr(text, want);
	cr_assert_not_null(strstr(line, " calls (exact), "), "%s", line);
	cr_assert_not_null(strstr(line, "100% EAGAIN (the word's value changed before the wait: no sleep)"), "%s", line);
	cr_assert_not_null(strstr(text, "-> Futex operations"), "%s", text);
	/* the cost: the recorder's share as the JSON has it, and the warning with the cheaper options */
	double recorder = jq_file(json, ".summary.recorder_percent");
	cr_assert_geq(recorder, 10, "a futex call recorded one by one costs the recorder %.1f%% only", recorder);
	snprintf(want, sizeof(want), "holds %.0f%% of the cpu samples", recorder);
	cr_assert_not_null(strstr(text, want), "no '%s' in:\n%s", want, text);
	cr_assert_not_null(strstr(text, "! that distorts the figures; record less: -e "), "%s", text);
	cr_assert_not_null(strstr(text, "--futex count"), "%s", text);
	/*
	 * the bucket lock: a line exactly when the lock collector counted contention of it on futex-wait.  Another
	 * lock may have a line of its own: perf_trace_init's, when the workload's new threads inherit the recorder's
	 * tracepoint events while another tracer on the machine opens some.
	 */
	bool contended = jq_file(json, "[.locks[]? | select(.path == \"futex-wait\")] | length") > 0;
	const char *lock_line = strstr(text, "lock: ");
	const char *bucket = lock_line ? strstr(lock_line, "futex_wait_setup") : NULL;
	const char *line_end = lock_line ? strchrnul(lock_line, '\n') : NULL;
	bool named = bucket && bucket < line_end;
	if (contended)
		cr_assert_not_null(lock_line, "the bucket lock was contended and the summary names no lock:\n%s", text);
	else
		cr_assert_not(named, "the bucket lock was not contended, yet:\n%s", text);
	free(text);
	free(screen);
}

Test(summary, already_pending_signals_merge, .init = setup, .timeout = 120)
{
	const char *data = test_path("pending.data");
	const long rounds = 1000;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), W "sig_pending %ld", rounds);
	free(record_workload(data, "-e signal,cpu", cmd));
	require_collector(report_json_file(data, ""), "signal");
	char *screen = first_screen(data);
	check_fits(screen);
	char *text = joined(screen);
	/* 2R generated, R merged into the pending one: 50% */
	char want[160];
	snprintf(want, sizeof(want), "signals: SIGUSR2 %ld %03ld generated, %ld %03ld (50%%) merged into a pending one "
		 "(already pending)", 2 * rounds / 1000, 2 * rounds % 1000, rounds / 1000, rounds % 1000);
	cr_assert_not_null(strstr(text, want), "no '%s' in:\n%s", want, text);
	cr_assert_not_null(strstr(text, "latency p50"), "%s", text);
	cr_assert_not_null(strstr(text, "-> Signals; sigprof script --event signal:signal_generate"), "%s", text);
	free(text);
	free(screen);
	/* the signal table: not queued, split by the kernel's reason */
	char *out;
	run_cmd(&out, false, "%s report --no-pager -i '%s' | grep 'not-queued SIGUSR2'", sigprof_bin(), data);
	snprintf(want, sizeof(want), "not-queued SIGUSR2 %ld: %ld already pending (merged into the pending one)", rounds,
		 rounds);
	cr_assert_not_null(strstr(out, want), "no '%s' in: %s", want, out);
	free(out);
}

Test(summary, timer_irq_enable_caveat, .init = setup, .timeout = 120)
{
	char *out;
	if (run_cmd(&out, true, "command -v stress-ng") != 0)
		cr_skip_test("stress-ng is not installed (Debian package stress-ng)");
	free(out);
	const char *data = test_path("timer.data");
	free(record_workload(data, "-e signal,cpu", "stress-ng --timer 1 -t 1 >/dev/null 2>&1"));
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	char *screen = first_screen(data);
	check_fits(screen);
	char *text = joined(screen);
	/* the caveat, exactly when cpu-clock sampled and a function that re-enables interrupts holds >= 5% */
	bool cpu_clock = jq_file(json, "[.meta.collectors[] | select(.name == \"cpu\") | .event == \"cpu-clock\"] | "
				       "if .[0] then 1 else 0 end") == 1;
	double irq = jq_file(json, "[.functions[] | select(.collector == \"cpu\") | select(.sym // \"\" | "
				   "test(\"irq_enable|unlock_irq|finish_task_switch|__local_bh_enable|local_irq_restore|"
				   "irqentry_exit\")) | .self] | add // 0");
	double cpu = jq_file(json, ".meta.collectors[] | select(.name == \"cpu\") | .samples");
	bool said = strstr(text, "no PMU: cpu-clock samples land where interrupts are re-enabled") != NULL;
	cr_assert_eq(said, cpu_clock && irq >= 0.05 * cpu, "cpu-clock %d, %.0f of %.0f cpu samples re-enable "
		     "interrupts:\n%s", cpu_clock, irq, cpu, text);
	/* the signal line names the timer's signal, merged or delivered as the JSON counts them */
	cr_assert_not_null(strstr(text, "signals: SIGRTMIN"), "%s", text);
	double pending = jq_file(json, ".signals[] | select(.name == \"SIGRTMIN\") | .not_delivered.already_pending");
	cr_assert_eq(strstr(text, "merged into a pending one") != NULL, pending > 0, "%.0f already pending:\n%s",
		     pending, text);
	free(text);
	free(screen);
}

Test(summary, suggested_script_time_pastes_into_report, .init = setup, .timeout = 120)
{
	const char *data = test_path("slowest.data");
	free(record_workload(data, "-e signal", W "sig_pending 300"));
	char *line;
	run_cmd(&line, false, "%s report --no-pager -i '%s' | grep -o 'sigprof script --tid [0-9]* --time [0-9.]*,[0-9.]*' "
			      "| head -1", sigprof_bin(), data);
	unsigned tid;
	char start[32], end[32];
	cr_assert_eq(sscanf(line, "sigprof script --tid %u --time %31[0-9.],%31[0-9.]", &tid, start, end), 3,
		     "the report suggests no script line: %s", line);
	free(line);
	/* script: the event at each end of the window is shown */
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s script -i '%s' --tid %u --time %s,%s", sigprof_bin(), data, tid, start, end),
		     0);
	char at[48];
	snprintf(at, sizeof(at), " %s: ", start);
	cr_assert_not_null(strstr(out, at), "script shows no event at %s:\n%.2000s", start, out);
	snprintf(at, sizeof(at), " %s: ", end);
	cr_assert_not_null(strstr(out, at), "script shows no event at %s:\n%.2000s", end, out);
	int events = 0;
	for (const char *p = out; (p = strstr(p, "signal:")); p++)
		events += p == out || p[-1] == ' ';
	free(out);
	/* report: the same window keeps those samples (it kept none when it counted from the start) */
	char opts[160];
	snprintf(opts, sizeof(opts), "--tid %u --time %s,%s", tid, start, end);
	const char *json = report_json_file(data, opts);
	double kept = jq_file(json, ".meta.filters.samples_kept");
	cr_assert_geq(kept, 2, "report %s kept %.0f samples", opts, kept);
	cr_assert_eq(jq_file(json, ".meta.collectors[] | select(.name == \"signal\") | .samples"), kept,
		     "the window's samples are the signal events script shows");
	cr_assert_geq(events, 2);
	/* the window in seconds from the start, as the header gives it, keeps the same samples */
	double from = jq_file(json, ".meta.filters.window_start_s"), to = jq_file(json, ".meta.filters.window_end_s");
	cr_assert_lt(from, to);
}

/*
 * perf's habits: --stdio is the text report; --sort takes perf's keys
 * (sym: the function table's order; dso and comm: one line saying what
 * shows them); 'sigprof top' says how to get the same picture; and
 * record -e cycles without a PMU samples cpu-clock with one line.
 */
Test(summary, perf_habits, .init = setup, .timeout = 120)
{
	const char *data = test_path("habits.data");
	free(record_workload(data, "-e signal,cpu", W "signal_storm 200"));
	char *text, *stdio;
	cr_assert_eq(run_cmd(&text, false, "%s report --no-pager -i '%s'", sigprof_bin(), data), 0);
	cr_assert_eq(run_cmd(&stdio, false, "%s report --stdio --no-pager -i '%s'", sigprof_bin(), data), 0);
	cr_assert_str_eq(stdio, text, "--stdio is the text report");
	free(stdio);
	free(text);
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s report --sort sym --no-pager -i '%s' | grep -c 'Top functions, cpu samples "
				      "(by self)'", sigprof_bin(), data), 0, "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s report --sort comm,dso,sym --no-pager -i '%s' 2>&1 >/dev/null", sigprof_bin(),
			     data), 0);
	cr_assert_eq(count_lines(out), 2, "one line per key without a table: %s", out);
	cr_assert_not_null(strstr(out, "--folded --folded-root comm"), "%s", out);
	cr_assert_not_null(strstr(out, "--dso NAME"), "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, true, "%s report --sort nonsense -i '%s'", sigprof_bin(), data), 2);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, true, "%s top", sigprof_bin()), 2);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert_not_null(strstr(out, "--switch-output"), "%s", out);
	free(out);
	/* -e cycles: the cpu collector where no PMU counts cycles, with one line; perf's cycles where one does */
	const char *cycles = test_path("cycles.data");
	int st = run_cmd(&out, false, "%s record -q -e cycles -o '%s' -- " W "cpu_burner 200 2>&1 >/dev/null",
			 sigprof_bin(), cycles);
	cr_assert_eq(st, 0, "%s", out);
	if (probe_hardware_event(0 /* PERF_COUNT_HW_CPU_CYCLES */) != 0) {
		cr_assert_not_null(strstr(out, "sampling cpu-clock instead"), "%s", out);
		cr_assert_eq(jq_file(report_json_file(cycles, ""), ".meta.collectors[] | select(.name == \"cpu\") | "
								    "if .event == \"cpu-clock\" then 1 else 0 end"),
			     1);
	}
	free(out);
}
