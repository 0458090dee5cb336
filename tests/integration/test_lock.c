/*
 * test_lock.c: the lock collector end to end, on workloads with a known
 * contended lock: lock_bucket (T threads making FUTEX_WAIT calls that all
 * return EAGAIN on one word, so they all take that word's hash bucket lock)
 * and sig_siglock (two threads signalling the process whose main thread
 * handles the signals: the process's siglock on the signal paths).
 *
 * Ground truth: the kernel's exact count of lock:contention_begin (the
 * counter read at the end of the run, which the report shows beside the
 * records) against the per-lock figures; the word the workload's calls
 * were made on; the paths those calls take.  Needs root (tracepoints) and
 * two CPUs (a contention needs two tasks running at once); skipped, not
 * passed, otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static void require_lock_tracing(void)
{
	require_perf_events();
	require_root();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("a lock is contended by two tasks running at once: this machine has one CPU");
}

/* The recording's report as JSON, skipping the test when the lock collector did not open. */
static const char *lock_json(const char *data)
{
	const char *json = report_json_file(data, "");
	require_collector(json, "lock");
	return json;
}

/*
 * Every contention_begin hit the kernel counted is in the per-lock figures:
 * as a contention, or as a rebegin (a mutex that spun, then slept, fires
 * two begins for one wait).  None lost, every begin closed by its end.
 */
static void check_totals(const char *json)
{
	double hits = jq_file(json, ".lock_summary.hits");
	double contentions = jq_file(json, "[.locks[].contentions] | add");
	double rebegins = jq_file(json, "[.locks[].rebegins] | add");
	cr_assert_gt(hits, 0, "no contention counted");
	cr_assert_eq(contentions + rebegins, hits, "the locks add up to %.0f contentions and %.0f rebegins, the kernel "
		     "counted %.0f hits", contentions, rebegins, hits);
	cr_assert_eq(jq_file(json, ".lock_summary.contentions"), contentions);
	cr_assert_eq(jq_file(json, ".lock_summary.recorded"), hits);
	cr_assert_eq(jq_file(json, "if .lock_summary.estimated then 1 else 0 end"), 0);
	cr_assert_eq(jq_file(json, ".lock_summary.orphan_ends"), 0);
	cr_assert_eq(jq_file(json, "[.locks[].wait_ns.count] | add"), contentions, "a begin without its end");
}

Test(lock, the_bucket_lock_of_one_word, .timeout = 120)
{
	require_lock_tracing();
	const char *data = test_path("bucket.data");
	const long threads = 4, calls = 200000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "lock_bucket %ld %ld", threads, calls);
	/* the lock and futex collectors only: a lighter recording, that loses no record */
	char *out = record_workload(data, "-e lock,futex", cmd);
	long made, eagain;
	cr_assert_eq(sscanf(out, "calls %ld eagain %ld", &made, &eagain), 2, "workload printed: %s", out);
	free(out);
	cr_assert_eq(eagain, made, "every call finds the word changed and takes the bucket lock only");
	const char *json = lock_json(data);
	check_totals(json);
	/*
	 * The top lock of the futex-wait path is the bucket lock, a spinlock taken
	 * in futex_wait_setup.  (Of all locks, a runqueue lock may beat it on a
	 * machine so busy that the workload's threads seldom run at once: how
	 * often each is contended is timing, not ground truth.)
	 */
	if (jq_file(json, "[.locks[] | select(.path == \"futex-wait\")] | length") == 0)
		cr_skip_test("no contention on the futex-wait path in %ld calls: the workload's threads never ran at once "
			     "(a machine busy with other work); nothing to check", made);
	const char *top = "([.locks[] | select(.path == \"futex-wait\")] | max_by(.contentions))";
	char filter[512];
	snprintf(filter, sizeof(filter), "%s | if (.name | test(\"^bucket lock taken in futex_wait_setup\")) and "
					 ".kind == \"spin\" then 1 else 0 end", top);
	cr_assert_eq(jq_file(json, filter), 1, "the top futex-wait lock is not the bucket lock taken in futex_wait_setup");
	/*
	 * It served one word, bucket_word.  The futex collector samples the calls
	 * of so busy a workload (its default mode): a contention whose call's
	 * entry was not recorded has no word, and is counted as such.
	 */
	snprintf(filter, sizeof(filter), "%s | .futex_words | length", top);
	cr_assert_eq(jq_file(json, filter), 1);
	snprintf(filter, sizeof(filter), "%s | if .futex_words[0].symbol == \"bucket_word\" and "
					 "(.futex_words[0].dso | endswith(\"lock_bucket\")) then 1 else 0 end", top);
	cr_assert_eq(jq_file(json, filter), 1, "the bucket lock's word is not bucket_word");
	snprintf(filter, sizeof(filter), "%s | .futex_words[0].contentions", top);
	cr_assert_gt(jq_file(json, filter), 0);
	snprintf(filter, sizeof(filter),
		 "%s | .futex_words[0].contentions + .futex_unattributed - .paths[\"futex-wait\"].contentions", top);
	cr_assert_eq(jq_file(json, filter), 0, "futex-wait contentions neither charged to the word nor unattributed");
	/* the path table's lock wait is the measured wait of the contentions on the path */
	double path_ms = jq_file(json, ".paths[] | select(.path==\"futex-wait\") | .lock_wait_ms");
	double locks_ns = jq_file(json, "[.locks[].paths[\"futex-wait\"].wait_ns // 0] | add");
	cr_assert_gt(path_ms, 0);
	cr_assert_float_eq(path_ms, locks_ns / 1e6, 0.002, "path table %.3f ms, locks %.3f ms", path_ms, locks_ns / 1e6);
	/* the text report names the word under the lock */
	char *text;
	run_cmd(&text, false, "%s report -i %s", sigprof_bin(), data);
	cr_assert(strstr(text, "bucket lock taken in futex_wait_setup") && strstr(text, "bucket_word"),
		  "text report lacks the bucket lock or its word:\n%s", text);
	free(text);
}

/* The sum of the values of the `report --figures` rows of data whose key matches the awk regex re. */
static double figure_rows_sum(const char *data, const char *re)
{
	char *rows;
	int st = run_cmd(&rows, false, "%s report --figures -i '%s' | awk -F'\\t' '$1 ~ /%s/ {n++; s += $2} "
				       "END {if (n) print s}'", sigprof_bin(), data, re);
	cr_assert_eq(st, 0);
	cr_assert_neq(rows[0], '\0', "no row matches %s", re);
	double value = atof(rows);
	free(rows);
	return value;
}

Test(lock, figures_rows_agree_with_json, .timeout = 120)
{
	require_lock_tracing();
	const char *data = test_path("bucket_figures.data");
	free(record_workload(data, "-e lock,futex", W "lock_bucket 4 100000 >/dev/null"));
	const char *json = lock_json(data);
	double total = jq_file(json, ".lock_summary.contentions");
	cr_assert_gt(total, 0, "no contention counted");
	cr_assert_eq(figure_rows_sum(data, "^lock\\.hits$"), jq_file(json, ".lock_summary.hits"));
	cr_assert_eq(figure_rows_sum(data, "^lock\\.contentions$"), total);
	cr_assert_eq(figure_rows_sum(data, "^lock\\.wait_ns\\.total$"), jq_file(json, "[.locks[].wait_ns.total] | add"));
	/* the rows per kind of lock (by name or by the function that took it) add up to the total */
	cr_assert_eq(figure_rows_sum(data, "^lock\\.(symbol|taken_in|unnamed).*contentions$"), total);
	cr_assert_eq(figure_rows_sum(data, "^lock\\.locks$"), jq_file(json, ".locks | length"));
}

Test(lock, the_siglock_on_the_signal_paths, .timeout = 120)
{
	require_lock_tracing();
	const char *data = test_path("siglock.data");
	char *out = record_workload(data, "-e lock,signal", W "sig_siglock 50000");
	long sent, handled;
	cr_assert_eq(sscanf(out, "sent %ld handled %ld", &sent, &handled), 2, "workload printed: %s", out);
	free(out);
	cr_assert_gt(handled, 0);
	const char *json = lock_json(data);
	check_totals(json);
	/*
	 * The siglock: one lock taken both where signals are generated (kill ->
	 * do_send_sig_info) and where they are delivered or their handler
	 * returns (get_signal, rt_sigreturn's set_current_blocked).
	 */
	const char *siglock = "[.locks[] | select(.paths[\"signal-generate\"] and "
			      "(.paths[\"signal-deliver\"] or .paths[\"sigreturn\"]))] | max_by(.contentions)";
	char filter[512];
	snprintf(filter, sizeof(filter), "%s | .contentions", siglock);
	cr_assert_gt(jq_file(json, filter), 0, "no lock contended on both the generate and deliver paths");
	snprintf(filter, sizeof(filter), "%s | if (.name | test(\"taken in (do_send_sig_info|__lock_task_sighand|"
					 "get_signal|set_current_blocked)\")) then 1 else 0 end", siglock);
	cr_assert_eq(jq_file(json, filter), 1, "the siglock is not named by a signal function");
	/* and the path table shows lock wait on the generate path */
	cr_assert_gt(jq_file(json, ".paths[] | select(.path==\"signal-generate\") | .lock_wait_ms"), 0);
}
