/*
 * test_futex.c: the futex collector end to end, on workloads whose futex
 * calls are known: futex_wake_many (N wakes on wake_word), futex_waiter
 * (K waits of about T ms on gate, counted by the waiter itself),
 * futex_futex2 (the futex2 system calls) and perf bench futex hash.
 * The counts the report must show come from the test's arguments or from
 * what the workload printed.  Needs root (tracepoints); skipped otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static void require_tracepoints(void)
{
	require_tracing();
	char *out;
	run_cmd(&out, true, "%s record -e futex -o %s -- true", sigprof_bin(), test_path("probe.data"));
	char *why = strstr(out, "futex unavailable");
	if (why) {
		why[strcspn(why, "\n")] = '\0';
		collector_missing("futex", "the futex collector cannot run here: %s", why);
	}
	free(out);
}

/* The word named sym: jq over the report's futexes. */
static double word_number(const char *data, const char *sym, const char *field)
{
	char filter[512];
	snprintf(filter, sizeof(filter), "[.futexes[] | select(.symbol==\"%s\")] | first | %s", sym, field);
	return json_number(data, filter);
}

Test(futex, trace_counts_every_wake_on_wake_word)
{
	require_tracepoints();
	const long n = 1237;
	const char *data = test_path("wake.data");
	char *out;
	int st = run_cmd(&out, false, "%s record -q --futex=trace -o %s -- " W "futex_wake_many %ld", sigprof_bin(),
			 data, n);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	cr_assert_eq(word_number(data, "wake_word", ".ops.WAKE"), n);
	cr_assert_eq(word_number(data, "wake_word", ".calls"), n);
	cr_assert_eq(word_number(data, "wake_word", ".flags.PRIVATE"), n);
	cr_assert_eq(word_number(data, "wake_word", "if .estimated then 1 else 0 end"), 0);
	cr_assert_eq(word_number(data, "wake_word", "if (.dso | endswith(\"futex_wake_many\")) then 1 else 0 end"), 1);
	cr_assert_eq(word_number(data, "wake_word", ".wakers | map(.count) | add"), n);
	/* the exact count of the tracepoint agrees with the records */
	cr_assert_eq(json_number(data, ".futex_summary.syscalls.sys_enter_futex.total"), n);
	cr_assert_eq(json_number(data, ".futex_ops.WAKE"), n);
	cr_assert_eq(json_number(data, "if .futex_summary.exact then 1 else 0 end"), 1);
	cr_assert_eq(json_number(data, ".futex_summary.mode == \"trace\" | if . then 1 else 0 end"), 1);
	/* every entry and exit is on the futex-wake path */
	cr_assert_eq(json_number(data, ".paths[] | select(.path==\"futex-wake\") | .samples.futex"), 2 * n);
	char *text;
	run_cmd(&text, false, "%s report -i %s", sigprof_bin(), data);
	char expect[64];
	snprintf(expect, sizeof(expect), "WAKE %ld", n);
	cr_assert(strstr(text, "wake_word") && strstr(text, expect), "text report lacks wake_word / %s:\n%s", expect,
		  text);
	free(text);
}

/* The value of the figure futex.op.OP.calls, asserting that it is marked want ("exact" or "estimated"). */
static double op_figure(const char *data, const char *op, const char *want)
{
	char *out;
	int st = run_cmd(&out, false, "%s report --figures -i %s | awk -F'\\t' '$1 == \"futex.op.%s.calls\" { print $2, $4 }'",
			 sigprof_bin(), data, op);
	cr_assert_eq(st, 0);
	double value = -1;
	char exact[32] = "";
	cr_assert_eq(sscanf(out, "%lf %31s", &value, exact), 2, "no futex.op.%s.calls row: %s", op, out);
	cr_assert_str_eq(exact, want, "futex.op.%s.calls is %s", op, exact);
	free(out);
	return value;
}

Test(futex, count_mode_keeps_exact_totals_only)
{
	require_tracepoints();
	const long n = 777;
	const char *data = test_path("count.data");
	int st = run_cmd(NULL, false, "%s record -q -e futex --futex=count -o %s -- " W "futex_wake_many %ld >/dev/null",
			 sigprof_bin(), data, n);
	cr_assert_eq(st, 0);
	/* a counter per futex(2) command splits the calls by op */
	cr_assert_eq(json_number(data, ".futex_ops.WAKE"), n);
	cr_assert_eq(json_number(data, ".futex_ops | length"), 1);
	cr_assert_eq(json_number(data, ".futex_summary.syscalls.sys_enter_futex.total"), n);
	cr_assert_eq(json_number(data, "if .futex_summary.futex_ops_exact then 1 else 0 end"), 1);
	cr_assert_eq(op_figure(data, "WAKE", "exact"), n);
	cr_assert_eq(json_number(data, ".futexes | length"), 0);
	cr_assert_eq(json_number(data, ".meta.samples"), 0, "count mode writes no per-call records");
	/*
	 * The commands without a counter of their own (count mode counts WAIT, WAKE and their BITSET forms apart)
	 * are counted together, exactly: futex_wake_many N M makes N WAKEs and M CMP_REQUEUEs.
	 */
	const long m = 333;
	data = test_path("count-other.data");
	st = run_cmd(NULL, false, "%s record -q -e futex --futex=count -o %s -- " W "futex_wake_many %ld %ld >/dev/null",
		     sigprof_bin(), data, n, m);
	cr_assert_eq(st, 0);
	cr_assert_eq(json_number(data, ".futex_ops.WAKE"), n);
	cr_assert_eq(json_number(data, ".futex_ops.other"), m);
	cr_assert_eq(json_number(data, ".futex_ops | length"), 2);
	cr_assert_eq(json_number(data, ".futex_summary.syscalls.sys_enter_futex.total"), n + m);
	char *text;
	cr_assert_eq(run_cmd(&text, false, "%s report -i %s", sigprof_bin(), data), 0);
	cr_assert_not_null(strstr(text, "other: the futex(2) commands without a counter of their own"), "%s", text);
	/* no context switch recorded: no wall-clock section (it read its threads 100% runnable) */
	cr_assert_null(strstr(text, "Wall clock"), "%s", text);
	free(text);
}

/* Parse "waits W blocked B eagain E opened K" from the waiter's output. */
static void waiter_tally(const char *out, int *calls, int *blocked, int *eagain)
{
	const char *line = strstr(out, "waits ");
	cr_assert_not_null(line, "waiter output: %s", out);
	int opened;
	cr_assert_eq(sscanf(line, "waits %d blocked %d eagain %d opened %d", calls, blocked, eagain, &opened), 4);
}

static void check_waiter(const char *mode_option, const char *name)
{
	require_tracepoints();
	const int k = 20, t_ms = 10;
	const char *data = test_path(name);
	char *out;
	int st = run_cmd(&out, false, "%s record -q %s -o %s -- " W "futex_waiter %d %d", sigprof_bin(), mode_option,
			 data, k, t_ms);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	int calls, blocked, eagain;
	waiter_tally(out, &calls, &blocked, &eagain);
	free(out);
	cr_assert_geq(blocked, k - 2, "the waiter blocked only %d of %d times", blocked, k);
	/*
	 * A quiet program is recorded exactly in both modes (docs/futex.md); should
	 * sampling set in all the same, the word says so and the invariants hold.
	 */
	double estimated = word_number(data, "gate", "if .estimated then 1 else 0 end");
	double waits = word_number(data, "gate", ".ops.WAIT");
	double count = word_number(data, "gate", ".wait_ns.count");
	double unmeasured = word_number(data, "gate", ".unmeasured_waits");
	double unfinished = word_number(data, "gate", ".unfinished");
	cr_assert_eq(count + unmeasured + unfinished, waits, "%.0f measured + %.0f unmeasured + %.0f unfinished != %.0f",
		     count, unmeasured, unfinished, waits);
	double on_wait_path = json_number(data, "[.stacks[] | select(.collector==\"futex\" and .path==\"futex-wait\" "
						"and any(.frames[]; .sym==\"wait_on_gate\")) | .count] | add");
	double wakes = word_number(data, "gate", "[.wakers[] | select(any(.frames[]; .sym==\"open_gate\")) | .count] | add");
	if (estimated == 0) {
		cr_assert_eq(waits, calls, "WAIT calls: report %.0f, waiter %d", waits, calls);
		cr_assert_eq(count, calls, "%.0f measured waits, the waiter made %d", count, calls);
		cr_assert_eq(on_wait_path, calls, "futex-wait entries through wait_on_gate: %.0f", on_wait_path);
		cr_assert_eq(wakes, k, "the main thread opened the gate %d times, wakers show %.0f", k, wakes);
		cr_assert_eq(word_number(data, "gate", ".errors.EAGAIN // 0"), eagain);
	} else {
		cr_assert_gt(count, 0);
		cr_assert_gt(on_wait_path, 0);
	}
	/* About T ms each: only the waits that blocked take time. */
	double total_ns = word_number(data, "gate", ".wait_ns.total");
	double measured_blocked = estimated == 0 ? blocked : count;
	double mean_ms = total_ns / 1e6 / (measured_blocked > 0 ? measured_blocked : 1);
	cr_assert(mean_ms >= 0.5 * t_ms && mean_ms <= 3.0 * t_ms, "mean blocked wait %.2f ms for %d ms gates", mean_ms,
		  t_ms);
	/* the waiter stack through wait_on_gate holds the word's blocking time */
	double stack_total = word_number(data, "gate", "[.waiters[] | select(any(.frames[]; .sym==\"wait_on_gate\")) "
						      "| .wait_ns.total] | add");
	cr_assert_eq(stack_total, total_ns, "waiter stack %.0f ns vs word %.0f ns", stack_total, total_ns);
	cr_assert_eq(json_number(data, ".paths[] | select(.path==\"futex-wait\") | .samples.futex") > 0, 1);
}

Test(futex, waiter_blocks_k_times_sample_mode)
{
	check_waiter("", "waiter.data");
}

Test(futex, waiter_blocks_k_times_trace_mode)
{
	check_waiter("--futex=trace", "waiter-trace.data");
}

/*
 * The default mode on a sparse workload (issue 14): 10 blocking waits woken
 * every 50 ms are 10 timed waits, every run, and nothing is estimated.  The
 * kernel's frequency mode raised the period after a wake and the next wait
 * (two calls 10-30 us apart on one CPU); the window of rate_bound.h does not.
 */
Test(futex, default_mode_records_every_call_of_sparse_waits, .timeout = 60)
{
	require_tracepoints();
	const int k = 10, t_ms = 50;
	for (int run = 0; run < 3; run++) {
		char name[32];
		snprintf(name, sizeof(name), "sparse%d.data", run);
		const char *data = test_path(name);
		char *out;
		int st = run_cmd(&out, false, "%s record -q -e futex -o %s -- " W "futex_waiter %d %d", sigprof_bin(), data,
				 k, t_ms);
		cr_assert_eq(st, 0, "record exited %d: %s", st, out);
		int calls, blocked, eagain;
		waiter_tally(out, &calls, &blocked, &eagain);
		free(out);
		cr_assert_eq(json_number(data, ".futex_summary.mode == \"sample\" | if . then 1 else 0 end"), 1);
		cr_assert_eq(json_number(data, "if .futex_summary.exact then 1 else 0 end"), 1, "run %d: not exact", run);
		cr_assert_eq(json_number(data, "[.futexes[] | select(.estimated)] | length"), 0, "run %d: a word is estimated",
			     run);
		cr_assert_eq(word_number(data, "gate", ".ops.WAIT"), calls, "run %d", run);
		cr_assert_eq(word_number(data, "gate", ".wait_ns.count"), calls, "run %d: every wait is timed", run);
		cr_assert_eq(word_number(data, "gate", ".unmeasured_waits"), 0, "run %d", run);
		cr_assert_eq(word_number(data, "gate", ".ops.WAKE"), k, "run %d: the gate opened %d times", run, k);
		cr_assert_eq(json_number(data, ".futex_summary.syscalls.sys_enter_futex.weighted_samples"), 0);
		cr_assert_eq(op_figure(data, "WAIT", "exact"), calls);
	}
}

/*
 * --futex trace on a fast caller (issue 14): every call kept, none lost;
 * the entries carry frame-pointer chains, which lose wake_many (the caller
 * of libc's syscall(), which has no frame pointer), and the stack copies
 * taken while the rate allows give the call site its DWARF stack.
 */
Test(futex, trace_keeps_every_call_of_a_fast_caller, .timeout = 120)
{
	require_tracepoints();
	const long n = 100000;
	const char *data = test_path("fast-trace.data");
	char *out;
	int st = run_cmd(&out, false, "%s record -q -e futex --futex=trace -o %s -- " W "futex_wake_many %ld",
			 sigprof_bin(), data, n);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	cr_assert_eq(json_number(data, ".meta.lost"), 0, "records were lost");
	cr_assert_eq(json_number(data, "if .futex_summary.exact then 1 else 0 end"), 1);
	cr_assert_eq(json_number(data, ".futex_ops.WAKE"), n);
	cr_assert_eq(word_number(data, "wake_word", ".calls"), n);
	cr_assert_eq(word_number(data, "wake_word", "if .estimated then 1 else 0 end"), 0);
	cr_assert_eq(json_number(data, ".paths[] | select(.path==\"futex-wake\") | .samples.futex"), 2 * n,
		     "the stack copies are not counted as calls");
	cr_assert_eq(word_number(data, "wake_word", "[.wakers[] | select(any(.frames[]; .sym==\"wake_many\")) | .count] "
						   "| add"), n, "every waker stack names wake_many");
}

/* The default mode on a fast caller: weighted samples above the bound, exact calls per op from the counters. */
/*
 * Above the bound: count mode's per-op counters count every call exactly;
 * the default mode (no counters: they cost 0.7 us a call) weighs its
 * samples, within 2% of the exact count, and marks them estimated when
 * weighting set in.
 */
Test(futex, ops_above_the_bound_exact_in_count_mode_estimated_in_the_default, .timeout = 120)
{
	require_tracepoints();
	const long n = 100000;
	const char *data = test_path("fast-count.data");
	int st = run_cmd(NULL, false, "%s record -q -e futex --futex count -o %s -- " W "futex_wake_many %ld >/dev/null",
			 sigprof_bin(), data, n);
	cr_assert_eq(st, 0);
	cr_assert_eq(json_number(data, ".futex_ops.WAKE"), n);
	cr_assert_eq(json_number(data, "if .futex_summary.futex_ops_exact then 1 else 0 end"), 1);
	cr_assert_eq(op_figure(data, "WAKE", "exact"), n);

	data = test_path("fast-sample.data");
	st = run_cmd(NULL, false, "%s record -q -e futex -o %s -- " W "futex_wake_many %ld >/dev/null", sigprof_bin(),
		     data, n);
	cr_assert_eq(st, 0);
	double wakes = json_number(data, ".futex_ops.WAKE");
	double weighted = word_number(data, "wake_word", ".calls");
	if (json_number(data, ".futex_summary.syscalls.sys_enter_futex.weighted_samples") > 0) {
		cr_assert_eq(word_number(data, "wake_word", "if .estimated then 1 else 0 end"), 1,
			     "weighted samples set in, the word must say so");
		cr_assert_eq(json_number(data, "if .futex_summary.futex_ops_exact then 1 else 0 end"), 0);
	} else {
		cr_assert_eq(wakes, n);
		cr_assert_eq(weighted, n);
	}
	/* the op's estimate is scaled to the exact futex(2) total */
	cr_assert(fabs(wakes - n) <= 0.02 * n, "the estimated WAKE calls %.0f for %ld", wakes, n);
	/*
	 * The word's calls are its records' weighted count: within 2% of N on a
	 * quiet machine, 40% under once on a loaded one (the kernel drops samples
	 * it throttles, without a record): only a gross error fails here.
	 */
	cr_assert(fabs(weighted - n) <= 0.5 * n, "the word's weighted calls %.0f for %ld", weighted, n);
}

/* futex_wake_many N recorded with the futex collector alone, its exact futex(2) total checked; the file's path. */
static const char *record_wake_many(const char *name, long n)
{
	const char *data = test_path(name);
	int st = run_cmd(NULL, false, "%s record -q -e futex -o %s -- " W "futex_wake_many %ld >/dev/null", sigprof_bin(),
			 data, n);
	cr_assert_eq(st, 0);
	cr_assert_eq(json_number(data, ".futex_summary.syscalls.sys_enter_futex.total"), n);
	return data;
}

/*
 * The default mode's stacks on a fast caller: the entries take frame-pointer
 * chains, which lose wake_many (the caller of libc's syscall(), which has no
 * frame pointer); copies of the user stack are taken only while a CPU's
 * entries stay under 2000 a second (a minority of the calls here), and they
 * lend the call site's DWARF stack to every entry, weighted or not: in the
 * word's wakers and in the path's stacks.
 */
Test(futex, default_mode_lends_dwarf_stacks_to_a_fast_callers_entries, .timeout = 120)
{
	require_tracepoints();
	const long n = 100000;
	const char *data = record_wake_many("fast-stacks.data", n);
	cr_assert_eq(json_number(data, ".meta.lost"), 0, "records were lost");
	double copies = json_number(data, ".futex_summary.stack_copies.recorded");
	cr_assert_gt(copies, 0, "no stack copy: the first window records them");
	cr_assert_lt(copies, 0.5 * n, "%.0f copies for %ld calls: not bounded", copies, n);
	cr_assert_gt(json_number(data, ".futex_summary.stack_copies.joined"), 0);
	double calls = word_number(data, "wake_word", ".calls");
	cr_assert(fabs(calls - n) <= 0.02 * n, "the word's weighted calls %.0f for %ld", calls, n);
	cr_assert_eq(word_number(data, "wake_word", "[.wakers[] | select(any(.frames[]; .sym==\"wake_many\")) | .count] "
						   "| add"), calls, "every waker stack names wake_many");
	double entries = json_number(data, ".futex_summary.syscalls.sys_enter_futex.samples");
	double on_path = json_number(data, "[.stacks[] | select(.collector==\"futex\" and .path==\"futex-wake\" and "
					   "any(.frames[]; .sym==\"wake_many\")) | .count] | add");
	cr_assert_eq(on_path, entries, "%.0f of %.0f entries counted on a stack naming wake_many", on_path, entries);
}

/*
 * The default mode's per-op calls add up to the exact futex(2) total:
 * futex_wake_many makes only WAKEs, so its estimated WAKE count is the
 * workload's N (the frequency mode's weights alone gave 4% to 43% more on a
 * short burst), and a word's calls stay its records' weighted count.
 */
Test(futex, default_mode_op_estimates_add_up_to_the_exact_total, .timeout = 60)
{
	require_tracepoints();
	const long n = 2000;
	const char *data = record_wake_many("burst.data", n);
	double wake = json_number(data, "[.futex_summary.ops[] | select(.op==\"WAKE\") | .calls] | first");
	cr_assert_eq(wake, n, "WAKE calls %.0f for the workload's %ld (estimated: %g)", wake, n,
		     json_number(data, "[.futex_summary.ops[] | select(.op==\"WAKE\") | .calls_estimated] | first | "
				       "if . then 1 else 0 end"));
	cr_assert_eq(json_number(data, "[.futex_summary.ops[] | .calls] | add"), n);
	/* every WAKE of futex_wake_many is FUTEX_WAKE_PRIVATE: the private count is the calls' */
	cr_assert_eq(json_number(data, "[.futex_summary.ops[] | select(.op==\"WAKE\") | .private] | first"), n);
	/* with a filter the records are part of the run, the total the whole: nothing is scaled to it */
	const char *part = report_json_file(data, "--time 0%,50%");
	double in_window = jq_file(part, "[.futex_summary.ops[] | select(.op==\"WAKE\") | .calls] | first");
	double word = jq_file(part, "[.futexes[] | select(.symbol==\"wake_word\") | .calls] | first");
	cr_assert_eq(in_window, word, "the WAKEs of half the run (%.0f) are its word's (%.0f)", in_window, word);
	cr_assert_leq(word, json_number(data, "[.futexes[] | select(.symbol==\"wake_word\") | .calls] | first"),
		      "the window's records are some of the run's");
	/* a part of the calls (the failed ones, weighted from the exits apart) is never more than the calls */
	const char *bucket = test_path("bucket.data");
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s record -q -e futex -o %s -- " W "lock_bucket 2 100000", sigprof_bin(), bucket),
		     0);
	long calls, eagain;
	cr_assert_eq(sscanf(out, "calls %ld eagain %ld", &calls, &eagain), 2, "%s", out);
	free(out);
	double wait_calls = json_number(bucket, "[.futex_summary.ops[] | select(.op==\"WAIT\") | .calls] | first");
	double wait_errors = json_number(bucket, "[.futex_summary.ops[] | select(.op==\"WAIT\") | .error_count] | first");
	/*
	 * Besides the workload's WAITs, main's pthread_join() may make one
	 * FUTEX_WAIT_BITSET per thread still running; where sampling left that
	 * call without a record, the exact total gives it to the estimated WAITs
	 * (200001 of 200000 once on a loaded machine).
	 */
	double ops = json_number(bucket, "[.futex_summary.ops[] | .calls] | add");
	double total = json_number(bucket, ".futex_summary.syscalls.sys_enter_futex.total");
	cr_assert(fabs(ops - total) <= 1, "the ops' calls %.0f, futex(2)'s %.0f (each estimate rounded)", ops, total);
	cr_assert(wait_calls >= calls && wait_calls <= calls + 2, "WAIT calls %.0f, the workload's %ld and 2 joins",
		  wait_calls, calls);
	cr_assert_leq(wait_errors, wait_calls, "%.0f errors of %.0f calls", wait_errors, wait_calls);
	cr_assert(fabs(wait_errors - eagain) <= 0.02 * eagain, "%.0f EAGAIN for the workload's %ld", wait_errors, eagain);
}

Test(futex, futex2_system_calls)
{
	require_tracepoints();
	const long n = 300, m = 40;
	const char *data = test_path("futex2.data");
	char *out;
	int st = run_cmd(&out, false, "%s record -q --futex=trace -o %s -- " W "futex_futex2 %ld %ld", sigprof_bin(),
			 data, n, m);
	if (st == 77 || json_number(data, ".futex_summary.syscalls.sys_enter_futex_wake.total") < 0) {
		free(out);
		skip_environment("this kernel has no futex_wake/futex_waitv system calls or tracepoints");
	}
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	cr_assert_eq(word_number(data, "futex2_word", ".ops.futex_wake"), n);
	cr_assert_eq(json_number(data, ".futex_ops.futex_wake"), n);
	cr_assert_eq(json_number(data, ".futex_ops.futex_waitv"), m);
	cr_assert_eq(json_number(data, "[.futexes[] | select(.waitv_array) | .errors.EAGAIN] | add"), m);
	cr_assert_eq(json_number(data, ".paths[] | select(.path==\"futex-wait\") | .samples.futex"), 2 * m);
}

Test(futex, perf_bench_hash_is_futex_wait_without_lost_records, .timeout = 120)
{
	require_tracepoints();
	char *out;
	if (run_cmd(&out, true, "perf bench futex hash -r 1 -t 1 2>&1") != 0) {
		free(out);
		skip_environment("perf bench futex is not available here");
	}
	free(out);
	const char *data = test_path("hash.data");
	int st = run_cmd(&out, true, "%s record -q -o %s -- perf bench futex hash -r 2 -t 2", sigprof_bin(), data);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	cr_assert_eq(json_number(data, ".meta.lost"), 0, "records were lost at the default settings");
	double wait = json_number(data, ".paths[] | select(.path==\"futex-wait\") | .samples.futex");
	double others = json_number(data, "[.paths[] | select(.path!=\"futex-wait\") | .samples.futex] | add");
	cr_assert_gt(wait, 10 * others, "futex-wait %.0f samples, other paths %.0f", wait, others);
	/* sampling set in: the report says so, and the weights add up to the exact count */
	cr_assert_eq(json_number(data, "if .futex_summary.exact then 1 else 0 end"), 0);
	cr_assert_gt(json_number(data, "[.futexes[] | select(.estimated)] | length"), 0);
	double total = json_number(data, ".futex_summary.syscalls.sys_enter_futex.total");
	/* the default mode opens no per-op counters: its ops are weighted above the bound, and say so */
	double ops = json_number(data, "[.futex_ops | to_entries[] | select(.key | startswith(\"futex_\") | not) | "
				       ".value] | add");
	cr_assert(fabs(ops - total) <= 0.02 * total, "weighted ops %.0f vs exact %.0f", ops, total);
	cr_assert_eq(json_number(data, "if .futex_summary.futex_ops_exact then 1 else 0 end"), 0);
	double weighted = json_number(data, "[.futexes[].calls] | add");
	cr_assert(fabs(weighted - total) <= 0.02 * total, "weighted calls %.0f vs exact %.0f", weighted, total);
	double eagain = json_number(data, "[.futex_summary.ops[] | select(.op==\"WAIT\") | .errors.EAGAIN] | add");
	cr_assert_gt(eagain, 0.5 * total, "perf bench futex hash waits fail with EAGAIN: %.0f of %.0f", eagain, total);
}

/*
 * futex_shared: a parent and its child take turns on one word of a
 * MAP_SHARED mapping with the shared futex commands.  The kernel keys it
 * by the mapping's object and offset: one row, used by both pids, with
 * every WAIT and WAKE the two processes counted, waiters and wakers both.
 */
Test(futex, shared_word_of_two_processes_is_one_row, .timeout = 60)
{
	require_tracepoints();
	const long turns = 300;
	const char *data = test_path("shared.data");
	char *out;
	int st = run_cmd(&out, false, "%s record -q --futex=trace -o %s -- " W "futex_shared %ld", sigprof_bin(), data,
			 turns);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	const char *line = strstr(out, "waits ");
	cr_assert_not_null(line, "futex_shared output: %s", out);
	long waits, wakes;
	int parent, child;
	cr_assert_eq(sscanf(line, "waits %ld wakes %ld pids %d %d", &waits, &wakes, &parent, &child), 4);
	free(out);
	cr_assert_eq(wakes, 2 * turns);
	cr_assert_eq(json_number(data, "[.futexes[] | select(.shared)] | length"), 1, "shared words: not one row");
	const char *word = "[.futexes[] | select(.shared)] | first";
	char filter[256];
	snprintf(filter, sizeof(filter), "%s | .ops.WAIT", word);
	cr_assert_eq(json_number(data, filter), waits, "WAIT on the shared word vs the workload's %ld", waits);
	snprintf(filter, sizeof(filter), "%s | .ops.WAKE", word);
	cr_assert_eq(json_number(data, filter), wakes, "WAKE on the shared word vs the workload's %ld", wakes);
	snprintf(filter, sizeof(filter), "%s | .pids | sort == ([%d, %d] | sort) | if . then 1 else 0 end", word, parent,
		 child);
	cr_assert_eq(json_number(data, filter), 1, "the shared word's pids are not the parent's and the child's");
	snprintf(filter, sizeof(filter), "%s | [.waiters[].count] | add", word);
	cr_assert_eq(json_number(data, filter), waits);
	snprintf(filter, sizeof(filter), "%s | [.wakers[].count] | add", word);
	cr_assert_eq(json_number(data, filter), wakes);
	/* no per-process rows of it left over */
	cr_assert_eq(json_number(data, "[.futexes[] | select(.shared | not) | select(.ops.WAIT or .ops.WAKE)] | length"),
		     0);
	char *text;
	run_cmd(&text, false, "%s report -i %s", sigprof_bin(), data);
	cr_assert(strstr(text, "shared by pids"), "the text report does not say the word is shared:\n%s", text);
	free(text);
}

Test(futex, report_side_under_asan)
{
	require_tracepoints();
	if (access(SIGPROF_ASAN_BIN, X_OK) != 0)
		skip_environment("no ASan build at %s (make BUILD=... %s)", SIGPROF_ASAN_BIN, SIGPROF_ASAN_BIN);
	const char *data = test_path("asan.data");
	int st = run_cmd(NULL, false, "%s record -q --futex=trace -o %s -- " W "futex_waiter 5 2 >/dev/null",
			 sigprof_bin(), data);
	cr_assert_eq(st, 0);
	char *out;
	st = run_cmd(&out, true, "%s report -i %s >/dev/null && %s report --json -i %s >/dev/null", SIGPROF_ASAN_BIN,
		     data, SIGPROF_ASAN_BIN, data);
	cr_assert_eq(st, 0, "ASan report failed:\n%s", out);
	free(out);
}
