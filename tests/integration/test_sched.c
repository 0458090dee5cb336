/*
 * test_sched.c: the sched collector end to end, on workloads whose
 * scheduler behaviour is known:
 *   sched_sleeper K T   K nanosleeps of T ms from sleep_once(): K waits on a
 *                       stack through do_nanosleep and sleep_once, each at
 *                       least T ms, all of them within the run the workload
 *                       timed itself;
 *   sched_pingpong N    two threads passing a futex token: waits on the
 *                       futex-wait path, each ended by the other thread's
 *                       waking, so every one has a delay no longer than it.
 * Needs root (tracepoints, kernel callchains); skipped, not passed, where
 * the sched collector cannot open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

#define SLEEPS 20
#define SLEEP_MS 20

/* Record the sleeper; returns the mean iteration time in ms it measured itself. */
static double record_sleeper(const char *data, const char *collectors)
{
	char *out;
	int st = run_cmd(&out, false, "%s record -q %s -o %s -- " W "sched_sleeper %d %d", sigprof_bin(), collectors, data,
			 SLEEPS, SLEEP_MS);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	double mean = -1;
	const char *m = strstr(out, "mean ");
	cr_assert(m && sscanf(m, "mean %lf", &mean) == 1, "workload output: %s", out);
	free(out);
	return mean;
}

#define SLEEP_ROWS ".sched.stacks[] | select(any(.frames[]; .sym==\"sleep_once\") and any(.frames[]; .sym==\"do_nanosleep\"))"

Test(sched, sleeper_waits_land_on_sleep_once)
{
	require_perf_events();
	require_root();
	const char *data = test_path("sleep.data");
	double mean_ms = record_sleeper(data, "-e sched");
	const char *json = report_json_file(data, "");
	require_collector(json, "sched");
	double count = jq_file(json, "[" SLEEP_ROWS " | .wait_time.count] | add");
	double total = jq_file(json, "[" SLEEP_ROWS " | .wait_time.total_ms] | add");
	/* one switch-out per nanosleep; +2 for a preemption inside do_nanosleep's loop on a busy machine */
	cr_assert(count >= SLEEPS && count <= SLEEPS + 2, "%.0f waits through sleep_once, expected %d", count, SLEEPS);
	/*
	 * Each sleep is a wait no shorter than the sleep (less the few us between arming the timer and
	 * switching out); a preemption inside do_nanosleep adds a short one.  So the K sleeps' waits add
	 * up to at least K x T ...
	 */
	cr_expect_geq(total, SLEEPS * SLEEP_MS * 0.98, "waits add up to %.3f ms (average %.3f ms) for %d x %d ms sleeps",
		      total, total / count, SLEEPS, SLEEP_MS);
	/* ... and the waits fit in the time the workload measured around its loop (1% for the two clocks) */
	cr_expect_leq(total, mean_ms * SLEEPS * 1.01, "waits %.3f ms, the loop took %.3f ms", total, mean_ms * SLEEPS);
	/*
	 * As root wakings are seen system-wide, so the timer wake-ups have their delays, never longer than
	 * the waits.  But the kernel throttles the system-wide waking event when the machine wakes tasks
	 * faster than kernel.perf_event_max_sample_rate (another benchmark running), and a throttled event on
	 * an idle CPU misses the timer wake-ups until that CPU's next tick (docs/sched.md).  Such a wait is
	 * still counted, without a delay; every one must be explained by a waking the kernel did not sample.
	 */
	cr_expect_eq(jq_file(json, "if .sched.wakings == \"system-wide\" then 1 else 0 end"), 1);
	double delays = jq_file(json, "[" SLEEP_ROWS " | .sch_delay.count] | add");
	double unsampled = jq_file(json, ".sched.total.unsampled_wakings");
	cr_expect_leq(delays, count);
	cr_expect_geq(unsampled, count - delays, "%.0f of %.0f timer wake-ups seen, %.0f wakings not sampled", delays,
		      count, unsampled);
	/* the header's unsampled hits are the sum of its events' */
	cr_expect_eq(jq_file(json, ".meta.unsampled_hits"), jq_file(json, "[.meta.unsampled_hits_by_event[]] | add // 0"));
	cr_expect_eq(jq_file(json, "(.meta.unsampled_hits_by_event[\"sched:sched_waking\"] // 0) + "
				   "(.meta.unsampled_hits_by_event[\"sched:sched_wakeup\"] // 0)"),
		     unsampled, "the collector's unsampled wakings are its waking event's");
	if (delays < count)
		/* a note, not cr_log_warn: criterion exits non-zero after a warning even when every test passed */
		fprintf(stderr, "note: sched: %.0f of %.0f timer wake-ups seen: the kernel throttled %.0f wakings\n",
			delays, count, unsampled);
	cr_expect_leq(jq_file(json, "[" SLEEP_ROWS " | .sch_delay.max_ms] | max"),
		      jq_file(json, "[" SLEEP_ROWS " | .wait_time.max_ms] | max"));
	/* the path of a sleep is not a futex or signal path */
	cr_expect_eq(jq_file(json, "[" SLEEP_ROWS " | select(.path != \"other\")] | length"), 0);
	/* the totals hold every stack's waits */
	cr_expect_eq(jq_file(json, ".sched.total.wait_time.count"), jq_file(json, "[.sched.stacks[].wait_time.count] | add"));
}

Test(sched, lkp_keys_start_at_the_leaf_below_schedule)
{
	require_perf_events();
	require_root();
	const char *data = test_path("lkp.data");
	record_sleeper(data, "-e cpu,sched");
	const char *json = report_json_file(data, "--sched-keys lkp");
	require_collector(json, "sched");
	cr_expect_eq(jq_file(json, "if .sched.keys == \"lkp\" then 1 else 0 end"), 1);
	/* the sleeps: one key from do_nanosleep down, five '.'-parts, all K waits under it */
	double count = jq_file(json, "[.sched.stacks[] | select(.key | startswith(\"do_nanosleep.hrtimer_nanosleep.\")) "
				       "| .wait_time.count] | add");
	cr_expect(count >= SLEEPS && count <= SLEEPS + 2, "%.0f waits under do_nanosleep.hrtimer_nanosleep.*", count);
	cr_expect_eq(jq_file(json, "[.sched.stacks[] | select(.key | startswith(\"do_nanosleep.hrtimer_nanosleep.\")) "
				     "| .key | split(\".\") | length] | max"),
		     5);
	/* no key keeps the frames perf sched leaves out, none has more than five parts */
	cr_expect_eq(jq_file(json, "[.sched.stacks[] | .key | split(\".\") | select(any(.[]; . == \"schedule\" or "
				     ". == \"__schedule\" or . == \"preempt_schedule\"))] | length"),
		     0);
	cr_expect_eq(jq_file(json, "[.sched.stacks[] | .key | split(\".\") | select(length > 5)] | length"), 0);
	/* keys are unique: stacks that share a key are merged */
	cr_expect_eq(jq_file(json, "[.sched.stacks[].key] | length"), jq_file(json, "[.sched.stacks[].key] | unique | length"));
	/* the text report names the same key */
	char *text;
	run_cmd(&text, false, "%s report --sched-keys lkp -i %s", sigprof_bin(), data);
	cr_expect(strstr(text, "Scheduler waits (sched)") && strstr(text, "do_nanosleep.hrtimer_nanosleep."),
		  "text report lacks the sched section or the key:\n%s", text);
	free(text);
}

Test(sched, pingpong_delays_are_within_waits)
{
	require_perf_events();
	require_root();
	const char *data = test_path("pingpong.data");
	char *out;
	int rounds = 20000;
	int st = run_cmd(&out, false, "%s record -q -o %s -- " W "sched_pingpong %d", sigprof_bin(), data, rounds);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	long woken = -1;
	const char *w = strstr(out, "woken ");
	cr_assert(w && sscanf(w, "woken %ld", &woken) == 1, "workload output: %s", out);
	free(out);
	const char *json = report_json_file(data, "");
	require_collector(json, "sched");
	double futex_waits = jq_file(json, "[.sched.stacks[] | select(.path == \"futex-wait\") | .wait_time.count] | add");
	/* at least some FUTEX_WAITs blocked, and at most two switch-outs per round and thread */
	cr_expect_gt(futex_waits, 0, "no wait on the futex-wait path (%ld FUTEX_WAITs were woken)", woken);
	cr_expect_leq(futex_waits, 2.0 * 2 * rounds, "%.0f futex waits for %d rounds", futex_waits, rounds);
	/* every futex wait is ended by the other thread: its waking is seen, so its delay is known */
	cr_expect_eq(jq_file(json, "[.sched.stacks[] | select(.path == \"futex-wait\") | .sch_delay.count] | add"),
		     futex_waits);
	/* per stack: delays are non-negative and never exceed the waits they end */
	cr_expect_eq(jq_file(json, "[.sched.stacks[] | select(.sch_delay.total_ms > .wait_time.total_ms + 1e-6 or "
				     ".sch_delay.max_ms > .wait_time.max_ms + 1e-6 or .sch_delay.total_ms < 0 or "
				     ".sch_delay.avg_ms < 0)] | length"),
		     0);
	double delay = jq_file(json, ".sched.total.sch_delay.total_ms");
	double wait = jq_file(json, ".sched.total.wait_time.total_ms");
	cr_expect(delay > 0 && delay <= wait, "sch_delay %.3f ms, wait %.3f ms", delay, wait);
	/* wait_and_delay is their sum, wait by wait */
	double sum = jq_file(json, ".sched.total.wait_and_delay.total_ms");
	cr_expect(sum > wait + delay - 0.01 && sum < wait + delay + 0.01, "wait_and_delay %.3f != %.3f + %.3f", sum,
		  wait, delay);
	/* sorted by wait_and_delay total */
	cr_expect_eq(jq_file(json, "if [.sched.stacks[].wait_and_delay.total_ms] == ([.sched.stacks[].wait_and_delay.total_ms] | sort | reverse) then 1 else 0 end"),
		     1);
}

Test(sched, asan_build_reports_sched_cleanly)
{
	require_perf_events();
	require_root();
	const char *data = test_path("asan.data");
	record_sleeper(data, "");
	char *out;
	int st = run_cmd(&out, true,
			 "%s report -i %s > /dev/null && %s report --sched-keys lkp --json -i %s | jq -e .sched.total > /dev/null",
			 SIGPROF_ASAN_BIN, data, SIGPROF_ASAN_BIN, data);
	cr_assert_eq(st, 0, "the ASan build failed: %s", out);
	free(out);
}

/* The path table's sched column holds every wait, each on the path of the stack it began on. */
Test(sched, path_table_wait_column_adds_up)
{
	require_perf_events();
	require_root();
	const char *data = test_path("paths.data");
	char *out;
	int st = run_cmd(&out, true, "%s record -q -e sched,futex -o %s -- " W "futex_waiter", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	const char *json = report_json_file(data, "");
	require_collector(json, "sched");
	double by_path = jq_file(json, "[.paths[].sched_wait_ms] | add");
	double total = jq_file(json, ".sched.total.wait_time.total_ms");
	cr_assert_gt(total, 0);
	cr_assert(by_path > total - 0.01 && by_path < total + 0.01, "paths hold %.3f ms, total %.3f ms", by_path, total);
	double futex_wait = jq_file(json, ".paths[] | select(.path==\"futex-wait\") | .sched_wait_ms");
	double rows = jq_file(json, "[.sched.stacks[] | select(.path==\"futex-wait\") | .wait_time.total_ms] | add");
	cr_assert(futex_wait > rows - 0.01 && futex_wait < rows + 0.01, "futex-wait: path %.3f ms, stacks %.3f ms",
		  futex_wait, rows);
	cr_assert_gt(futex_wait, 0, "the waiter's futex waits are not on futex-wait");
}
