/*
 * test_corpus.c: a short subset of the corpus of real programs (issue 22;
 * tests/stack-shares.sh --corpus runs the whole of it): Debian's stress-ng,
 * stripped and built without frame pointers, recorded with every default.
 *   stress-ng --futex 2: two parents each wake a child waiting on a word of
 *       a shared /dev/zero mapping (the shared futex commands): one word row
 *       per shared word, used by both processes, with waiters and wakers;
 *   stress-ng --signal 1: every signal counted once, as many as it sent, on
 *       whole stacks lent to the short keys of its generations and deliveries;
 *   stress-ng --msg 2: stacks deeper than 16 KiB whole (cpu and sched);
 *   stress-ng --futex 2, --sem-sysv 2 and --mutex 2 (its lockers run
 *       SCHED_FIFO): at least 95% of the user stacks of every collector (85%
 *       for futex: WHOLE_FLOOR below says why; the lock collector's where the
 *       kernel traced contention) (of
 *       two frames or more: a one-frame stack is an event recorded without
 *       one) reach the program's or thread's first frame, and under 1% of
 *       the records are lost (5% for --mutex; the corpus measured 0-1%: the
 *       recorder drains at a real-time priority; at the normal one --mutex
 *       lost 96%).
 * Skipped without stress-ng or root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

static void require_stress_ng(void)
{
	require_perf_events();
	require_root();
	char *version;
	if (run_cmd(&version, true, "stress-ng --version") != 0) {
		free(version);
		cr_skip_test("stress-ng is not installed (apt-get install stress-ng)");
	}
	free(version);
}

/* The user stacks of two frames or more of collector c, weighted, and those whole (tests/stack-shares.sh). */
#define STACKS_OF(c)                                                                                               \
	"[.stacks[] | select(.collector==\"" c "\" and (.frames | map(select(.dso != \"[kernel]\")) | length > 0) "  \
	"and (.frames | length > 1))]"
#define WHOLE                                                                                                      \
	"map(select(.frames | (.[-1].sym // \"\") as $l | ($l | IN(\"_start\", \"_dl_start_user\", \"__clone3\", "   \
	"\"clone3\", \"__clone\", \"clone\", \"__libc_start_call_main\", \"start_thread\")) or (($l | "                  \
	"contains(\"!fn@\")) and ((.[-2].sym // \"\") | IN(\"__libc_start_main\", \"start_thread\")))))"

/*
 * Issue 22's target, 95%: cpu and sched measured 98.9-100% on these (docs/performance.md).  The futex
 * collector's entries get their whole stack lent by the rate-bounded long copies of their call site, which a
 * loaded machine's run does not always take for every key: 100% in the corpus runs, 92.2% in one test run at
 * load average 13, so its floor guards against the 0-11% of frame-pointer keys, not the target.
 */
#define WHOLE_FLOOR 0.95
#define FUTEX_FLOOR 0.85

static void check_whole_share(const char *json, const char *collector, const char *program, double floor)
{
	char filter[1024];
	snprintf(filter, sizeof(filter), STACKS_OF("%s") " | map(.count) | add // 0", collector);
	double all = jq_file(json, filter);
	snprintf(filter, sizeof(filter), STACKS_OF("%s") " | " WHOLE " | map(.count) | add // 0", collector);
	double whole = jq_file(json, filter);
	cr_assert_gt(all, 0, "%s: no %s stacks", program, collector);
	cr_assert_geq(whole, floor * all, "%s: %.0f of %.0f %s stacks whole (%.1f%%)", program, whole, all, collector,
		      100 * whole / all);
}

/*
 * Under max_percent of the records lost: the corpus lost none, but a workload of real-time spinners (--mutex)
 * can use up the kernel's real-time budget of a CPU, which then stops the recorder too (1.0% in one run).
 */
static void check_nothing_lost(const char *json, const char *program, double max_percent)
{
	double lost = jq_file(json, ".meta.lost_percent");
	cr_assert_lt(lost, max_percent, "%s: %.2f%% of the records lost", program, lost);
}

static const char *record_stressor(const char *stressor)
{
	char name[64], cmd[128];
	snprintf(name, sizeof(name), "sng-%s.data", stressor);
	snprintf(cmd, sizeof(cmd), "stress-ng --%s 2 -t 2", stressor);
	const char *data = test_path(name);
	free(record_workload(data, "", cmd));
	return report_json_file(data, "");
}

Test(corpus, stress_ng_futex_shared_words_and_whole_stacks, .timeout = 120)
{
	require_stress_ng();
	const char *json = record_stressor("futex");
	/* two shared words (one per stressor instance), each with the waits of a child and the wakes of a parent */
	double shared = jq_file(json, "[.futexes[] | select(.shared and (.pids | length) == 2)] | length");
	cr_assert_eq(shared, 2, "%.0f futex words shared by two processes, stress-ng --futex 2 has 2", shared);
	cr_assert_eq(jq_file(json, "[.futexes[] | select(.shared and (.pids | length) == 2) | select((.waiters | length) "
				   "> 0 and (.wakers | length) > 0 and .ops.WAIT > 0 and .ops.WAKE > 0)] | length"),
		     2, "a shared word without both waiters and wakers");
	/* no per-process row of those words left: each symbol is one row */
	cr_assert_eq(jq_file(json, "[.futexes[] | select(.shared) | .symbol] as $s | [.futexes[] | select(.shared | "
				   "not) | select(.symbol as $x | $s | index($x))] | length"),
		     0);
	check_whole_share(json, "futex", "stress-ng --futex", FUTEX_FLOOR);
	check_whole_share(json, "sched", "stress-ng --futex", WHOLE_FLOOR);
	check_whole_share(json, "cpu", "stress-ng --futex", WHOLE_FLOOR);
	/* a kernel that traced its lock contention (2 CPUs without paravirtual spinlocks may not: docs/lock.md) */
	if (jq_file(json, STACKS_OF("lock") " | length") > 0)
		check_whole_share(json, "lock", "stress-ng --futex", WHOLE_FLOOR);
	/*
	 * The header's count agrees with the stacks shown: the futex entries' short keys count as whole where
	 * their call site's copy lent them its stack (it said 84% whole, "record with a larger --call-graph
	 * dwarf,SIZE", of stacks the report showed whole).
	 */
	double lent = jq_file(json, ".meta.unwind.lent"), complete = jq_file(json, ".meta.unwind.complete");
	double samples = jq_file(json, ".meta.unwind.samples");
	cr_assert_gt(lent, 0, "no futex entry was counted on its call site's whole stack");
	cr_assert_geq(complete, FUTEX_FLOOR * samples, "%.0f of %.0f user stacks whole by the header", complete,
		      samples);
	check_nothing_lost(json, "stress-ng --futex", 1);
}

Test(corpus, stress_ng_sem_sysv_stacks_are_whole, .timeout = 120)
{
	require_stress_ng();
	const char *json = record_stressor("sem-sysv");
	check_whole_share(json, "sched", "stress-ng --sem-sysv", WHOLE_FLOOR);
	check_whole_share(json, "cpu", "stress-ng --sem-sysv", WHOLE_FLOOR);
	check_nothing_lost(json, "stress-ng --sem-sysv", 1);
}

/*
 * stress-ng --msg keeps a message buffer in a frame: its stacks are 16-32 KiB deep, past the cpu collector's
 * short copies and the sched collector's 8192-byte ones.  The cpu collector's long copies (32 KiB) hold them
 * whole, and every collector's cut stacks are completed from them (docs/stacks.md): cpu 0.3%, sched 0% and lock
 * 0.1% whole before 2026-12-07 (seventh session).
 */
Test(corpus, stress_ng_msg_stacks_deeper_than_16k_are_whole, .timeout = 120)
{
	require_stress_ng();
	const char *json = record_stressor("msg");
	check_whole_share(json, "cpu", "stress-ng --msg", WHOLE_FLOOR);
	check_whole_share(json, "sched", "stress-ng --msg", WHOLE_FLOOR);
	if (jq_file(json, STACKS_OF("lock") " | length") > 0)
		check_whole_share(json, "lock", "stress-ng --msg", WHOLE_FLOOR);
	double completed = jq_file(json, ".meta.unwind.completed");
	cr_assert_gt(completed, 0, "no stack of stress-ng --msg was completed from a long copy");
	check_nothing_lost(json, "stress-ng --msg", 1);
}

Test(corpus, stress_ng_mutex_stacks_are_whole_and_kept, .timeout = 120)
{
	require_stress_ng();
	const char *json = record_stressor("mutex");
	check_whole_share(json, "futex", "stress-ng --mutex", FUTEX_FLOOR);
	check_whole_share(json, "sched", "stress-ng --mutex", WHOLE_FLOOR);
	check_whole_share(json, "cpu", "stress-ng --mutex", WHOLE_FLOOR);
	check_nothing_lost(json, "stress-ng --mutex", 5);
}

/*
 * stress-ng --signal: a parent and its child signal each other as fast as they can.  In a program without frame
 * pointers each generation and delivery takes a short key and, while the rate allows, a whole copy lent to the
 * key (docs/signal.md): the signal stacks are whole, the signals counted once each (the copies are counted
 * nowhere), as many as the stressor says it sent.
 */
Test(corpus, stress_ng_signal_keys_are_lent_whole_stacks_and_counted_once, .timeout = 120)
{
	require_stress_ng();
	const char *data = test_path("sng-signal.data");
	char *out = record_workload(data, "", "stress-ng --signal 1 -t 1 --metrics-brief --stdout");
	const char *line = strstr(out, " signal ");
	double bogo = 0;
	cr_assert(line && sscanf(line, " signal %lf", &bogo) == 1 && bogo > 0, "no bogo ops in stress-ng's output: %s",
		  out);
	free(out);
	const char *json = report_json_file(data, "");
	/*
	 * one more: the stressor's process notifies stress-ng as it exits (the workload's own cgroup sees a task's
	 * exit to its end, docs/targets.md); none is delivered in the count
	 */
	double sent = jq_file(json, "[.signals[] | select(.name == \"SIGCHLD\") | .generated] | add // 0");
	cr_assert_eq(sent, bogo + 1, "%.0f SIGCHLD generations recorded, stress-ng sent %.0f and exited", sent, bogo);
	double delivered = jq_file(json, "[.signals[] | select(.name == \"SIGCHLD\") | .delivered] | add // 0");
	cr_assert_eq(delivered, bogo, "%.0f SIGCHLD deliveries recorded, stress-ng counted %.0f", delivered, bogo);
	double generated = jq_file(json, "[.signals[] | .generated] | add // 0");
	double total = jq_file(json, "[.signals[] | .totals.signal_generate] | first");
	cr_assert_eq(generated, total, "%.0f generations recorded, the kernel counted %.0f", generated, total);
	check_whole_share(json, "signal", "stress-ng --signal", WHOLE_FLOOR);
	cr_assert_gt(jq_file(json, ".meta.unwind.lent"), 0, "no key was counted on its call site's whole stack");
	check_nothing_lost(json, "stress-ng --signal", 1);
}
