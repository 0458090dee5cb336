/*
 * test_timeline.c: the timeline and the wall-clock profile (docs/timeline.md)
 * against a workload whose timeline is known by construction.
 *
 * tests/workloads/timeline_phases 10: its thread "phases" runs 10 ms of CPU
 * time, sleeps 20 ms, waits 30 ms on the futex word phase_word (a timeout
 * nobody cuts short) and handles SIGUSR1 for 5 ms of CPU time, 10 times, and
 * prints its tid and what its clocks measured.  Ground truth: running =
 * run_ns (the thread's CPU clock in its run phases), signal handler =
 * handler_ns, each within 5%; blocked on sleep and on phase_word from
 * 10 x 20 ms and 10 x 30 ms to the calls' measured wall time (which holds
 * the runnable time after each wake), within 5%; how long it waited to
 * run (runnable) is the machine's load's, and not checked but through the
 * exact sum: every thread's states add up to its life.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

#define LOOPS PHASES_LOOPS
#define MS 1000000.0

/*
 * A running or handler time against the thread's CPU clock in it: within 5%, and above by at most the time the
 * hypervisor stole meanwhile (the kernel's clock counts it, the thread's CPU clock does not: in a run with 0.54 s
 * stolen, running read 105.8 ms against 100.0).
 */
static void expect_cpu_time(double got, double want, const struct phases_truth *t, const char *what)
{
	cr_expect(got >= want * 0.95 && got <= want * 1.05 + t->steal_ns,
		  "%s: %.3f ms, want %.3f ms within 5%% (+ %.3f ms stolen by the hypervisor)", what, got / MS, want / MS,
		  t->steal_ns / MS);
}

/*
 * A wait's blocked time: at least the timeout asked (within 5%), at most the call's wall time the program measured
 * (within 5%), which holds the runnable time after the wake: under load a waking the kernel did not record leaves
 * that time blocked (docs/timeline.md, Limits).
 */
static void expect_wait(double got, double asked, double measured, const char *what)
{
	cr_expect(got >= asked * 0.95 && got <= measured * 1.05, "%s: %.3f ms, want %.3f to %.3f ms", what, got / MS,
		  asked / MS, measured / MS);
}

/* jq FILTER over json with the worker's tid as $tid. */
static double thread_figure(const char *json, int tid, const char *filter)
{
	char full[1024];
	snprintf(full, sizeof(full), ".timeline.threads[] | select(.tid == %d) | %s", tid, filter);
	return jq_file(json, full);
}

Test(timeline, json_states_match_what_the_workload_did, .timeout = 120)
{
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	const char *json = report_json_file(data, "");
	require_collector(json, "sched");
	require_collector(json, "signal");
	require_collector(json, "futex");
	double life = thread_figure(json, t.tid, ".end_ns - .start_ns");
	cr_assert_gt(life, 0, "no thread %d in .timeline", t.tid);
	/* exact: the states, the spans and the wall-clock entries all add up to the life */
	cr_expect_eq(thread_figure(json, t.tid, "[.states_ns[]] | add"), life);
	cr_expect_eq(thread_figure(json, t.tid, "[.spans[] | .end_ns - .start_ns] | add"), life);
	cr_expect_eq(thread_figure(json, t.tid, "[.spans | range(1; length) as $i | select(.[$i].start_ns != .[$i - 1].end_ns)] | length"), 0,
		     "spans that do not touch");
	char filter[256];
	snprintf(filter, sizeof(filter), "[.timeline.wall[] | select(.tid == %d) | .ns] | add", t.tid);
	cr_expect_eq(jq_file(json, filter), life);
	/* each state as the workload did it */
	expect_cpu_time(thread_figure(json, t.tid, ".states_ns.running"), t.run_ns, &t, "running");
	expect_cpu_time(thread_figure(json, t.tid, ".states_ns.signal_handler"), t.handler_ns, &t, "signal handler");
	expect_wait(thread_figure(json, t.tid, ".blocked_ns.sleep"), LOOPS * 20 * MS, t.sleep_ns, "blocked on sleep");
	expect_wait(thread_figure(json, t.tid, "[.spans[] | select(.word_name == \"phase_word\") | .end_ns - .start_ns] | add"),
		    LOOPS * 30 * MS, t.futex_ns, "blocked on futex phase_word");
	cr_expect_eq(thread_figure(json, t.tid, "[.spans[] | select(.state == \"signal_handler\" and .signal != \"SIGUSR1\")] | length"), 0);
	/* the wall profile's roots name them */
	snprintf(filter, sizeof(filter), "[.timeline.wall[] | select(.tid == %d and .root == \"[blocked: futex phase_word]\") | .ns] | add",
		 t.tid);
	expect_wait(jq_file(json, filter), LOOPS * 30 * MS, t.futex_ns, "[blocked: futex phase_word] wall stacks");
	snprintf(filter, sizeof(filter), "[.timeline.wall[] | select(.tid == %d and .root == \"[signal handler: SIGUSR1]\") | .ns] | add",
		 t.tid);
	expect_cpu_time(jq_file(json, filter), t.handler_ns, &t, "[signal handler: SIGUSR1] wall stacks");
	/* a span's stack is one of .timeline.stacks: the sleep's holds sleep_phase */
	snprintf(filter, sizeof(filter),
		 ".timeline as $t | [$t.threads[] | select(.tid == %d) | .spans[] | select(.cause == \"sleep\") | .stack as $id "
		 "| $t.stacks[] | select(.id == $id) | select(any(.frames[]; .sym == \"sleep_phase\"))] | length",
		 t.tid);
	cr_expect_eq(jq_file(json, filter), LOOPS, "every sleep's stack holds sleep_phase");
}

/* The text report's row of the worker: "phases PID/TID  LIFE  R%  Q%  B%  H%  futex F%, sleep S%". */
Test(timeline, text_table_matches_what_the_workload_did, .timeout = 120)
{
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' --no-pager | grep -E '^  phases [0-9]+/%d '", sigprof_bin(),
			     data, t.tid),
		     0);
	char name[64], ids[64];
	double life, running, runnable, blocked, handler, futex = -1, sleep = -1;
	int n = sscanf(out, " %63s %63s %lf %lf%% %lf%% %lf%% %lf%%", name, ids, &life, &running, &runnable, &blocked,
		       &handler);
	cr_assert_eq(n, 7, "the row: %s", out);
	const char *f = strstr(out, "futex "), *s = strstr(out, "sleep ");
	cr_assert(f && s, "the row names no futex or sleep cause: %s", out);
	futex = strtod(f + 6, NULL);
	sleep = strtod(s + 6, NULL);
	life *= 1e9;
	cr_expect(running + runnable + blocked + handler > 99.8 && running + runnable + blocked + handler < 100.2, "%s",
		  out);
	expect_cpu_time(life * running / 100, t.run_ns, &t, "text running");
	expect_cpu_time(life * handler / 100, t.handler_ns, &t, "text signal handler");
	expect_wait(life * sleep / 100, LOOPS * 20 * MS, t.sleep_ns, "text blocked on sleep");
	expect_wait(life * futex / 100, LOOPS * 30 * MS, t.futex_ns, "text blocked on futex");
	free(out);
	/* its heaviest wall stacks name the word */
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' --no-pager", sigprof_bin(), data), 0);
	cr_expect_not_null(strstr(out, "[blocked: futex phase_word] syscall <- futex_phase <- phases"), "%s", out);
	free(out);
}

/* Every event well-formed; the worker's complete events tile its life and hold its states. */
Test(timeline, trace_event_export_is_well_formed_and_matches, .timeout = 120)
{
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	const char *trace = test_path("phases.trace.json");
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s report -i '%s' --trace-event '%s'", sigprof_bin(), data, trace), 0, "%s", out);
	cr_expect_eq(strlen(out), 0, "it printed: %s", out);
	free(out);
	/* the format's fields, per kind of event */
	cr_expect_eq(jq_file(trace, "[.traceEvents[] | select("
				    "(.name | type) != \"string\" or (.pid | type) != \"number\" or (.tid | type) != \"number\" or "
				    "(if .ph == \"X\" then (.ts | type) != \"number\" or .ts < 0 or (.dur | type) != \"number\" or .dur <= 0 "
				    "elif .ph == \"i\" then (.ts | type) != \"number\" or .s != \"t\" "
				    "elif .ph == \"M\" then (.name != \"thread_name\" and .name != \"process_name\") or (.args.name | type) != \"string\" "
				    "else true end))] | length"),
		     0, "malformed events");
	char filter[512];
	snprintf(filter, sizeof(filter), "[.traceEvents[] | select(.ph == \"M\" and .name == \"thread_name\" and .tid == %d) | .args.name] | .[0] == \"phases\"",
		 t.tid);
	cr_expect_eq(run_cmd(NULL, false, "jq -e '%s' '%s' >/dev/null", filter, trace), 0, "no thread_name phases");
	/* the X events of the worker touch end to end (to the ns the µs fractions hold) */
	snprintf(filter, sizeof(filter),
		 "[.traceEvents[] | select(.ph == \"X\" and .tid == %d)] | sort_by(.ts) | [range(1; length) as $i | "
		 "select(((.[$i - 1].ts + .[$i - 1].dur) - .[$i].ts) | fabs > 0.002)] | length",
		 t.tid);
	cr_expect_eq(jq_file(trace, filter), 0, "the worker's spans leave gaps or overlap");
	snprintf(filter, sizeof(filter), "[.traceEvents[] | select(.ph == \"X\" and .tid == %d and .cat == \"running\") | .dur] | add * 1000",
		 t.tid);
	expect_cpu_time(jq_file(trace, filter), t.run_ns, &t, "trace running");
	snprintf(filter, sizeof(filter), "[.traceEvents[] | select(.ph == \"X\" and .tid == %d and .cat == \"signal_handler\") | .dur] | add * 1000",
		 t.tid);
	expect_cpu_time(jq_file(trace, filter), t.handler_ns, &t, "trace signal handler");
	snprintf(filter, sizeof(filter), "[.traceEvents[] | select(.ph == \"X\" and .tid == %d and .name == \"[blocked: futex phase_word]\") | .dur] | add * 1000",
		 t.tid);
	expect_wait(jq_file(trace, filter), LOOPS * 30 * MS, t.futex_ns, "trace blocked on futex");
	snprintf(filter, sizeof(filter), "[.traceEvents[] | select(.ph == \"X\" and .tid == %d and .name == \"[blocked: sleep]\") | .dur] | add * 1000",
		 t.tid);
	expect_wait(jq_file(trace, filter), LOOPS * 20 * MS, t.sleep_ns, "trace blocked on sleep");
	snprintf(filter, sizeof(filter), "[.traceEvents[] | select(.ph == \"i\" and .tid == %d and .name == \"SIGUSR1\")] | length", t.tid);
	cr_expect_eq(jq_file(trace, filter), LOOPS, "a SIGUSR1 instant per handler");
}

Test(timeline, trace_event_export_is_read_by_speedscopes_import, .timeout = 120)
{
	if (run_cmd(NULL, false, "command -v node >/dev/null && test -d tests/speedscope/node_modules/speedscope && "
				 "test -d tests/speedscope/node_modules/jsdom") != 0)
		skip_environment("node or the npm packages of tests/speedscope are missing (make deps installs them)");
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	const char *trace = test_path("phases.trace.json");
	cr_assert_eq(run_cmd(NULL, false, "%s report -i '%s' --trace-event '%s'", sigprof_bin(), data, trace), 0);
	char *out;
	cr_assert_eq(run_cmd(&out, true, "node tests/speedscope/import-check.mjs '%s'", trace), 0);
	/* speedscope tried its importers in turn and its Chrome trace importer took the file */
	cr_expect_not_null(strstr(out, "Importing as Trace Event Format profile"), "%s", out);
	cr_expect_not_null(strstr(out, "- speedscope"), "no profile was loaded: %s", out);
	cr_expect_null(strstr(out, "alert:"), "%s", out);
	free(out);
}

/* --folded --weight wall: the states as root frames; a thread's lines add up to its life. */
Test(timeline, folded_wall_adds_up_to_the_life, .timeout = 120)
{
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	char options[64];
	snprintf(options, sizeof(options), "--tid %d", t.tid);
	const char *json = report_json_file(data, options);
	double life = thread_figure(json, t.tid, ".end_ns - .start_ns");
	cr_expect_eq(jq_file(json, "[.timeline.threads[]] | length"), 1, "--tid keeps one thread");
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' --folded --weight wall --tid %d | awk '{ s += $NF } END { printf \"%%.0f\\n\", s }'",
			     sigprof_bin(), data, t.tid),
		     0);
	cr_expect_eq(strtod(out, NULL), life, "folded wall %s, life %.0f", out, life);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' --folded --weight wall --folded-root tid --tid %d", sigprof_bin(),
			     data, t.tid),
		     0);
	static const char *const roots[] = { "[running];", "[runnable];", "[blocked: sleep];",
					     "[blocked: futex phase_word];", "[signal handler: SIGUSR1];" };
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		cr_expect_not_null(strstr(out, roots[i]), "no %s line", roots[i]);
	cr_expect_not_null(strstr(out, "phases-"), "no --folded-root frame");
	free(out);
}

/* --time: every span within the window; the pprof's wall_time adds up to the threads' lives. */
Test(timeline, time_window_and_pprof_wall_time, .timeout = 180)
{
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	const char *json = report_json_file(data, "--time 0.2,0.6");
	double life = thread_figure(json, t.tid, ".end_ns - .start_ns");
	cr_assert_gt(life, 0);
	/* all the spans of all threads lie within 0.4 s: the window's length (+ 1 ms: the window's own rounding) */
	double spread = jq_file(json, "([.timeline.threads[].spans[].end_ns] | max) - ([.timeline.threads[].spans[].start_ns] | min)");
	cr_expect(spread > 0 && spread <= 0.4e9 + 1e6, "spans over %.0f ns in a window of 0.4 s", spread);
	if (run_cmd(NULL, false, "command -v go >/dev/null") != 0)
		skip_environment("go is not installed (Debian: apt-get install golang-go): go tool pprof cannot read the profile");
	const char *profile = test_path("phases.pb.gz");
	cr_assert_eq(run_cmd(NULL, false, "%s report -i '%s' --pprof '%s'", sigprof_bin(), data, profile), 0);
	const char *all = report_json_file(data, "");
	double lives = jq_file(all, "[.timeline.threads[] | .end_ns - .start_ns] | add");
	char *out;
	cr_assert_eq(run_cmd(&out, true, "go tool pprof -top -nodefraction=0 -sample_index=wall_time -unit=ns '%s'", profile), 0);
	const char *line = strstr(out, "Showing nodes accounting for ");
	cr_assert_not_null(line, "%s", out);
	double shown = strtod(line + strlen("Showing nodes accounting for "), NULL);
	cr_expect(shown > lives * 0.999 && shown < lives * 1.001, "pprof wall_time %.0f ns, lives %.0f ns", shown, lives);
	free(out);
}

/*
 * Filters that keep no thread (--tid 1: init, never the workload's): the text
 * and JSON reports say so and succeed, the timeline's own outputs fail with
 * a line naming the filters, and none sorts a NULL table (the report side
 * runs under ASan and UBSan, which stop at qsort(NULL, 0, ...)).
 */
Test(timeline, filters_that_keep_no_thread, .timeout = 120)
{
	if (access(SIGPROF_ASAN_BIN, X_OK) != 0)
		skip_environment("no ASan build at %s (make %s)", SIGPROF_ASAN_BIN, SIGPROF_ASAN_BIN);
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s report --tid 1 -i '%s' >/dev/null && %s report --json --tid 1 -i '%s' | "
					 "jq -e '.timeline.threads | length == 0'",
			     SIGPROF_ASAN_BIN, data, SIGPROF_ASAN_BIN, data),
		     0, "%s", out);
	free(out);
	const char *trace = test_path("no-thread.trace.json");
	static const char *const outputs[] = { "--folded --weight wall", "--trace-event" };
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		int st = run_cmd(&out, true, "%s report --tid 1 -i '%s' %s %s", SIGPROF_ASAN_BIN, data, outputs[i],
				 i == 1 ? trace : "");
		cr_expect_neq(st, 0, "%s with no thread exited 0", outputs[i]);
		cr_expect_null(strstr(out, "runtime error"), "%s: %s", outputs[i], out);
		cr_expect_not_null(strstr(out, "the filters (--tid 1) kept no thread of the workload"), "%s: %s", outputs[i],
				   out);
		free(out);
	}
	cr_expect_neq(access(trace, F_OK), 0, "--trace-event wrote a file of no thread");
}

/*
 * The first screen's wall-clock finding: the state that takes the largest part of a thread's life, at least half,
 * never running (the cpu finding's) nor blocked on "other" (no cause named: a shell waiting for its child).
 * timeline_phases's main thread waits for its worker in pthread_join, a futex wait, all its life.
 */
Test(timeline, the_first_screens_finding_names_a_known_cause, .timeout = 120)
{
	struct phases_truth t;
	const char *data = test_path("phases.data");
	record_phases(data, &t);
	const char *json = report_json_file(data, "");
#define MAIN_THREAD ".timeline.threads[] | select(.tid == .pid and .comm == \"timeline_phases\")"
	double life = jq_file(json, MAIN_THREAD " | .end_ns - .start_ns");
	double futex = jq_file(json, MAIN_THREAD " | .blocked_ns.futex");
	cr_assert_geq(futex, life / 2, "the main thread waited %.0f ns of its %.0f ns on futex words", futex, life);
	char want[256];
	int pid = (int)jq_file(json, MAIN_THREAD " | .pid");
	snprintf(want, sizeof(want), "wall clock: thread timeline_phases %d/%d spent %.0f%% of its ", pid, pid,
		 futex * 100 / life);
	cr_expect_eq(jq_file(json, "[.summary.findings[] | select(.text | startswith(\"wall clock:\"))] | length"), 1);
	char *out;
	run_cmd(&out, false, "jq -r '.summary.findings[] | select(.text | startswith(\"wall clock:\")) | .text' '%s'", json);
	cr_expect_not_null(strstr(out, want), "want '%s...': %s", want, out);
	cr_expect_not_null(strstr(out, "[blocked: futex "), "%s", out);
	free(out);

	/* sh waits for its child in wait4: blocked, cause other, nearly all its life; no finding says so */
	const char *shell = test_path("shell.data");
	free(record_workload(shell, "", "sh -c '" W "cpu_burner 300; true'"));
	json = report_json_file(shell, "");
	double other = jq_file(json, "[.timeline.threads[] | select(.comm == \"sh\") | .blocked_ns.other / (.end_ns - .start_ns)] | max");
	cr_assert_geq(other, 0.5, "the premise: sh blocked on other for %.0f%% of its life only", other * 100);
	cr_expect_eq(jq_file(json, "[.summary.findings[] | select(.text | contains(\"[blocked: other]\"))] | length"), 0);
}
