/*
 * test_dwarf.c: DWARF call graphs end to end (issue 4).  The workloads:
 *   mutex_contend_nofp T N   built without frame pointers: T threads take one
 *                            pthread mutex N times in contend_lock(); the
 *                            futex waits happen inside glibc (no frame
 *                            pointers either), so only a DWARF unwind of the
 *                            copied user stack names contend_lock;
 *   sigprof_handler S SPIN   a SIGPROF (ITIMER_PROF) handler spinning in
 *                            handler_spin() over interrupted_loop(): its
 *                            samples' stacks cross the signal frame;
 *   mutex_contend_debug_frame T N   the same as mutex_contend_nofp, its own
 *                            code's CFI only in .debug_frame (no .eh_frame
 *                            entries for it);
 *   mutex_contend_lld T N    the same as mutex_contend_nofp, linked by lld (where
 *                            ld.lld is installed): its executable segment
 *                            starts part-way through a page;
 *   preinit_spin MS          spinning in a DT_PREINIT_ARRAY function, which
 *                            ld.so's start-up code calls (_dl_start_user ->
 *                            _dl_init) before the program's entry: the
 *                            stacks end there, named, with no reason.
 * The checks come from what the workloads do (which function waits, which
 * one a signal interrupts, how much CPU time the handler took), never from
 * a recorded report.  Needs root (tracepoints, kernel callchains).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"
#include "sigprof/model/collector.h"

#define NOFP_THREADS 4
#define NOFP_ITERATIONS 20000
#define NAMES_CONTEND_LOCK "any(.[]; .sym==\"contend_lock\")"
#define HAS_UNWIND_REASON "any(.[]; .sym | startswith(\"[unwind: \"))"
/*
 * The futex-wait stacks are the entries' (the exits carry no stack, only
 * their IP: docs/futex.md), which the report gives per word as waiters.
 * Samples (weighted calls) of the waiters, over every word, that satisfy the
 * jq condition on their frames.
 */
#define WAITER_SAMPLES(frames_test) "[.futexes[] | .waiters[] | select(.frames | " frames_test ") | .count] | add // 0"

/* Record a build of mutex_contend_nofp with options; checks what it says it did. */
static void record_mutex_workload(const char *data, const char *workload, const char *options)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "%s %d %d", workload, NOFP_THREADS, NOFP_ITERATIONS);
	char *out = record_workload(data, options, cmd);
	long acquisitions, contended;
	cr_assert_eq(sscanf(out, "acquisitions %ld contended %ld", &acquisitions, &contended), 2, "output: %s", out);
	free(out);
	cr_assert_eq(acquisitions, (long)NOFP_THREADS * NOFP_ITERATIONS);
	/* the holder sleeps with the mutex held every 64th time: the others must have found it taken */
	cr_assert_gt(contended, 0, "no acquisition found the mutex held");
}

static void record_nofp(const char *data, const char *options)
{
	record_mutex_workload(data, "mutex_contend_nofp", options);
}

/* Every stack in the report has a frame: a failed unwind shows its reason, never an empty stack. */
static void check_no_empty_stacks(const char *json)
{
	cr_assert_eq(jq_file(json, "[.stacks[] | select(.frames | length == 0)] | length"), 0,
		     "stacks without a frame in %s", json);
	cr_assert_eq(jq_file(json, "[.sched.stacks[]? | select(.frames | length == 0)] | length"), 0,
		     "sched stacks without a frame in %s", json);
	cr_assert_eq(jq_file(json, "[.futexes[]? | (.waiters[]?, .wakers[]?) | select(.frames | length == 0)] | length"),
		     0, "futex waiter or waker stacks without a frame in %s", json);
}

/* With default options, at least 90% of the futex-wait stacks of a build of the workload name contend_lock. */
/* Returns the report's JSON file. */
static const char *check_default_futex_wait_stacks(const char *workload)
{
	require_tracing();
	const char *data = test_path("nofp.data");
	record_mutex_workload(data, workload, "");
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	cr_assert_eq(jq_file(json, "if .meta.call_graph == \"default\" then 1 else 0 end"), 1);
	/* the waits are the contended locks' (and the main thread's few joins) */
	double all = jq_file(json, WAITER_SAMPLES("true"));
	double named = jq_file(json, WAITER_SAMPLES(NAMES_CONTEND_LOCK));
	cr_assert_geq(all, 20, "only %.0f futex-wait entries", all);
	cr_assert_geq(named, 0.9 * all, "%.0f of %.0f futex-wait stacks name contend_lock (%.1f%%)", named, all,
		      100 * named / all);
	/* the waits on the mutex word itself are contend_lock's */
	double on_mutex = jq_file(json, "[.futexes[] | select(.symbol==\"contended_mutex\") | .waiters[].count] | add");
	cr_assert_gt(on_mutex, 0, "no waiter stacks on contended_mutex");
	/*
	 * The path's stacks show them too: the entries took frame-pointer chains
	 * (docs/futex.md), each counted on the DWARF stack of its call's copy or
	 * call site's (the counted_stack hook); below the bound every call is a
	 * sample of weight 1, so the path's samples are the waiters' calls.
	 */
	double on_path = stack_samples(json, "futex", "futex-wait", NAMES_CONTEND_LOCK);
	cr_assert_geq(on_path, 0.9 * all, "%.0f of %.0f futex-wait entries counted on a stack naming contend_lock",
		      on_path, all);
	check_no_empty_stacks(json);
	return json;
}

Test(dwarf, default_futex_wait_stacks_of_a_nofp_program_name_its_function)
{
	check_default_futex_wait_stacks("mutex_contend_nofp");
}

/*
 * The same program built without .eh_frame for its own code (its CFI only
 * in .debug_frame, -fno-asynchronous-unwind-tables): the unwinder steps
 * through contend_lock and worker with that, between libc's .eh_frame
 * frames below and above.
 */
Test(dwarf, default_futex_wait_stacks_of_a_debug_frame_program_name_its_function)
{
	check_default_futex_wait_stacks("mutex_contend_debug_frame");
}

/*
 * The same program linked by lld: the waits' stacks go on through the
 * program's own code (contend_lock <- worker) and end whole, with no
 * reason, and the main thread's joins reach main.
 */
Test(dwarf, default_futex_wait_stacks_of_a_program_linked_by_lld_are_whole)
{
	if (access(W "mutex_contend_lld", X_OK) != 0)
		skip_environment(W "mutex_contend_lld was not built: ld.lld is not installed (Debian package lld)");
	const char *json = check_default_futex_wait_stacks("mutex_contend_lld");
	double named = jq_file(json, WAITER_SAMPLES(NAMES_CONTEND_LOCK));
	double whole = jq_file(json, WAITER_SAMPLES("(map(.sym) | indices([\"contend_lock\", \"worker\"]) | length > 0) "
						    "and (" HAS_UNWIND_REASON " | not)"));
	cr_assert_geq(whole, 0.9 * named, "%.0f of %.0f futex-wait stacks naming contend_lock go on to worker and end "
					  "whole", whole, named);
	cr_assert_gt(jq_file(json, WAITER_SAMPLES("any(.[]; .sym==\"main\")")), 0, "no futex-wait stack reaches main");
}

/* The control: the workload really has no frame pointers, so the test above measures the unwinder. */
Test(dwarf, frame_pointer_stacks_of_the_nofp_program_miss_its_function)
{
	require_tracing();
	const char *data = test_path("nofp-fp.data");
	record_nofp(data, "-e futex --call-graph fp");
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	double all = jq_file(json, WAITER_SAMPLES("true"));
	double named = jq_file(json, WAITER_SAMPLES(NAMES_CONTEND_LOCK));
	cr_assert_geq(all, 20, "only %.0f futex-wait entries", all);
	cr_assert_lt(named, 0.5 * all, "%.0f of %.0f frame-pointer stacks name contend_lock: is the workload built "
				       "without frame pointers?", named, all);
}

/*
 * -g on a program built without frame pointers: record says so at the
 * start, in one line naming the program; a program built with them is not
 * named (its libraries may be: Debian's libc has none).
 */
Test(dwarf, frame_pointer_walks_on_a_nofp_program_are_warned_at_the_start)
{
	require_tracing();
	char *out;
	int st = run_cmd(&out, true, "%s record -q -g -e futex -o %s -- " W "mutex_contend_nofp 2 100",
			 sigprof_bin(), test_path("nofp-g.data"));
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	char *line = strstr(out, "--call-graph fp: mutex_contend_nofp");
	cr_assert_not_null(line, "no warning naming the program:\n%s", out);
	line[strcspn(line, "\n")] = '\0';
	cr_assert(strstr(line, "no frame pointers") && strstr(line, "--call-graph dwarf"), "%s", line);
	cr_assert_eq(strstr(out, "--call-graph fp:"), strstr(out, "--call-graph fp: mutex_contend_nofp"), "one line");
	free(out);
	run_cmd(&out, true, "%s record -q -g -e futex -o %s -- " W "futex_wake_many 10", sigprof_bin(),
		test_path("fp-g.data"));
	cr_assert_null(strstr(out, "futex_wake_many"), "a program with frame pointers named:\n%s", out);
	free(out);
	/* without -g, nothing to say */
	run_cmd(&out, true, "%s record -q -e futex -o %s -- " W "mutex_contend_nofp 2 100", sigprof_bin(),
		test_path("nofp-nog.data"));
	cr_assert_null(strstr(out, "frame pointers"), "%s", out);
	free(out);
}

Test(dwarf, default_sched_stacks_of_a_nofp_program_name_its_function)
{
	require_tracing();
	const char *data = test_path("nofp-sched.data");
	record_nofp(data, "-e sched");
	const char *json = report_json_file(data, "");
	require_collector(json, "sched");
	/* a thread blocked on the mutex went off CPU in futex_wait, below contend_lock */
	const char *rows = ".sched.stacks[] | select(.path==\"futex-wait\")";
	char filter[512];
	snprintf(filter, sizeof(filter), "[%s | .wait_time.count] | add // 0", rows);
	double waits = jq_file(json, filter);
	snprintf(filter, sizeof(filter), "[%s | select(.frames | " NAMES_CONTEND_LOCK ") | .wait_time.count] | add // 0",
		 rows);
	double named = jq_file(json, filter);
	cr_assert_geq(waits, 10, "only %.0f waits on the futex-wait path", waits);
	cr_assert_geq(named, 0.9 * waits, "%.0f of %.0f futex-wait waits name contend_lock", named, waits);
	/* and the whole stack: the kernel's frames below the user ones that called it */
	snprintf(filter, sizeof(filter),
		 "[%s | select(.frames | " NAMES_CONTEND_LOCK " and any(.[]; .dso==\"[kernel]\")) | .wait_time.count] "
		 "| add // 0",
		 rows);
	cr_assert_eq(jq_file(json, filter), named, "sched stacks naming contend_lock without kernel frames");
	check_no_empty_stacks(json);
}

/* The frames of a sample in the handler. */
#define HANDLER_FRAMES "any(.[]; .sym==\"handler_spin\")"

/*
 * Record sigprof_handler (workload_options after its arguments) with DWARF
 * stacks and check that its handler's samples read, leaf first and
 * adjacent, handler_spin, on_prof, signal_frame, interrupted_loop, main.
 */
static void check_handler_stacks(const char *name, const char *record_options, const char *workload_options,
				 const char *signal_frame)
{
	require_perf_events();
	const char *data = test_path(name);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "sigprof_handler 250 2000000 %s", workload_options);
	char *out = record_workload(data, record_options, cmd);
	long handlers;
	double handler_ms, cpu_ms;
	cr_assert_eq(sscanf(out, "handlers %ld handler_ms %lf cpu_ms %lf", &handlers, &handler_ms, &cpu_ms), 3,
		     "output: %s", out);
	free(out);
	/* one more may land between the loop's end and the timer's stop */
	cr_assert(handlers == 250 || handlers == 251, "%ld handlers ran, expected 250", handlers);
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	double all = stack_samples(json, "cpu", NULL, "true");
	double in_handler = stack_samples(json, "cpu", NULL, HANDLER_FRAMES);
	char in_order[256];
	snprintf(in_order, sizeof(in_order),
		 HANDLER_FRAMES " and (map(.sym) | indices([\"handler_spin\", \"on_prof\", \"%s\", \"interrupted_loop\", "
				"\"main\"]) | length > 0)",
		 signal_frame);
	double ordered = stack_samples(json, "cpu", NULL, in_order);
	cr_assert_geq(in_handler, 50, "%.0f samples in handler_spin (of %.0f)", in_handler, all);
	if (ordered < 0.9 * in_handler) {
		char *largest;
		run_cmd(&largest, false, "jq -c '[.stacks[] | select(.collector==\"cpu\" and (.frames | " HANDLER_FRAMES
					 "))] | max_by(.count) | [.count, (.frames | map(.sym))]' %s", json);
		cr_assert_fail("%.0f of %.0f handler samples read handler_spin, on_prof, %s, interrupted_loop, main, leaf "
			       "first; the largest handler stack: %s", ordered, in_handler, signal_frame, largest);
	}
	/* the handler's share of the samples is the share of CPU time it measured (cpu-clock samples time) */
	double expected = handler_ms / cpu_ms, share = in_handler / all;
	cr_assert(share >= 0.5 * expected && share <= 1.5 * expected,
		  "handler_spin in %.1f%% of the samples, it took %.1f%% of the CPU time", 100 * share, 100 * expected);
	/* the signal frame stands in for __restore_rt: no handler sample shows the trampoline itself */
	cr_assert_eq(stack_samples(json, "cpu", NULL, HANDLER_FRAMES " and any(.[]; .sym==\"__restore_rt\")"), 0);
	check_no_empty_stacks(json);
}

Test(dwarf, sigprof_handler_stacks_cross_the_signal_frame)
{
	check_handler_stacks("handler.data", "-e cpu --call-graph dwarf", "", "[signal SIGPROF]");
}

/*
 * Without SA_SIGINFO the kernel writes no siginfo: without the signal
 * collector the frame cannot name the signal (docs/report-json.md) ...
 */
Test(dwarf, plain_handler_stacks_cross_an_unnamed_signal_frame)
{
	check_handler_stacks("handler-plain.data", "-e cpu --call-graph dwarf", "plain", "[signal]");
}

/* ... with it, the delivery it recorded on the thread names the handler's frame. */
Test(dwarf, plain_handler_stacks_named_by_the_signal_collector)
{
	require_root();
	check_handler_stacks("handler-plain-signal.data", "-e cpu,signal --call-graph dwarf", "plain",
			     "[signal SIGPROF]");
}

Test(dwarf, stacks_cut_short_by_a_small_copy_say_why)
{
	require_tracing();
	const char *data = test_path("nofp-small.data");
	/* 16 bytes hold glibc's innermost frame at best: the unwind must stop early, and say so */
	record_nofp(data, "-e futex --call-graph dwarf,16");
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	double all = jq_file(json, WAITER_SAMPLES("true"));
	double named = jq_file(json, WAITER_SAMPLES(NAMES_CONTEND_LOCK));
	double explained = jq_file(json, WAITER_SAMPLES(HAS_UNWIND_REASON));
	cr_assert_geq(all, 20, "only %.0f futex-wait entries", all);
	cr_assert_gt(explained, 0, "no futex-wait stack says why its unwind stopped");
	/* a stack that does not reach contend_lock was not unwound whole, so it must say why */
	double unexplained = jq_file(json, WAITER_SAMPLES("((" NAMES_CONTEND_LOCK ") or (" HAS_UNWIND_REASON ") | not)"));
	cr_assert_eq(unexplained, 0, "%.0f of %.0f futex-wait stacks (%.0f naming contend_lock) stop early without "
				     "a reason", unexplained, all, named);
	/* the reason ends the stack: nothing is made up beyond it */
	cr_assert_eq(jq_file(json, WAITER_SAMPLES("(.[-1].sym | startswith(\"[unwind: \")) | not")), named,
		     "a stack with an unwind reason does not end with it");
	check_no_empty_stacks(json);
}

#define IN_PREINIT "any(.[]; .sym==\"preinit_spin\")"

/* Whether ld.so's separate debug file (libc6-dbg), whose .symtab names _start and _dl_start_user, is installed. */
static bool ld_so_debug_file_installed(void)
{
	char *out;
	int st = run_cmd(&out, true,
			 "id=$(readelf -n \"$(readlink -f /lib64/ld-linux-x86-64.so.2)\" | awk '/Build ID/ { print $3 }'); "
			 "test -n \"$id\" && test -f \"/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug\"");
	free(out);
	return st == 0;
}

Test(dwarf, start_up_stacks_end_in_ld_so_start_code_named)
{
	require_perf_events();
	const char *data = test_path("preinit.data");
	char *out = record_workload(data, "-e cpu --call-graph dwarf", W "preinit_spin 300");
	double spun_ms;
	cr_assert_eq(sscanf(out, "spun_ms %lf", &spun_ms), 1, "output: %s", out);
	free(out);
	cr_assert_geq(spun_ms, 300);
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	double in_preinit = stack_samples(json, "cpu", NULL, IN_PREINIT);
	cr_assert_geq(in_preinit, 50, "only %.0f samples in preinit_spin", in_preinit);
	/* ld.so called it from its start-up code, which has no caller: the walk ends there without a reason */
	double explained = stack_samples(json, "cpu", NULL, IN_PREINIT " and " HAS_UNWIND_REASON);
	cr_assert_leq(explained, 0.01 * in_preinit, "%.0f of %.0f preinit_spin stacks end with an [unwind:] reason",
		      explained, in_preinit);
	double in_ld_so = stack_samples(json, "cpu", NULL, IN_PREINIT " and (.[-1].dso | test(\"/ld-linux[^/]*$\"))");
	cr_assert_geq(in_ld_so, 0.99 * in_preinit, "%.0f of %.0f preinit_spin stacks end in ld.so", in_ld_so,
		      in_preinit);
	check_no_empty_stacks(json);
	if (!ld_so_debug_file_installed())
		skip_environment("ld.so's debug file (libc6-dbg) is not installed: its functions have no names");
	double named = stack_samples(json, "cpu", NULL,
				     IN_PREINIT " and .[-1].sym == \"_dl_start_user\" and .[-2].sym == \"_dl_init\"");
	cr_assert_geq(named, 0.99 * in_preinit,
		      "%.0f of %.0f preinit_spin stacks end in _dl_init <- _dl_start_user, named", named, in_preinit);
}

Test(dwarf, dwarf_recording_reports_under_asan)
{
	require_tracing();
	if (access(SIGPROF_ASAN_BIN, X_OK) != 0)
		skip_environment("no ASan build at %s (make BUILD=... %s)", SIGPROF_ASAN_BIN, SIGPROF_ASAN_BIN);
	const char *data = test_path("asan.data");
	record_nofp(data, "-e futex,sched");
	char *out;
	int st = run_cmd(&out, true, "%s report -i %s >/dev/null && %s report --json -i %s >/dev/null && "
				     "%s report --folded -i %s >/dev/null",
			 SIGPROF_ASAN_BIN, data, SIGPROF_ASAN_BIN, data, SIGPROF_ASAN_BIN, data);
	cr_assert_eq(st, 0, "the ASan build failed on a DWARF recording:\n%s", out);
	free(out);
}

/* The call-graph values record accepts, with what the recording says it used. */
Test(dwarf, call_graph_values_accepted)
{
	require_perf_events();
	char expect_default_size[32];
	snprintf(expect_default_size, sizeof(expect_default_size), "dwarf,%u", DEFAULT_STACK_USER_SIZE);
	char expect_max_size[32];
	snprintf(expect_max_size, sizeof(expect_max_size), "dwarf,%u", MAX_STACK_USER_SIZE);
	const struct {
		const char *option, *meta;
	} cases[] = {
		{ "", "default" },
		{ "--call-graph fp", "fp" },
		{ "-g", "fp" },
		{ "--call-graph none", "none" },
		{ "--call-graph dwarf", expect_default_size },
		{ "--call-graph dwarf,8", "dwarf,8" },
		{ "--call-graph dwarf,2048", "dwarf,2048" },
		{ "--call-graph=dwarf,4096", "dwarf,4096" },
		{ "--call-graph dwarf,65528", expect_max_size },
	};
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("cg.data"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char options[64];
		snprintf(options, sizeof(options), "-e cpu %s", cases[i].option);
		free(record_workload(data, options, W "cpu_burner 20"));
		char filter[128];
		snprintf(filter, sizeof(filter), "if .meta.call_graph == \"%s\" then 1 else 0 end", cases[i].meta);
		cr_assert_eq(jq_file(report_json_file(data, ""), filter), 1, "'%s': meta.call_graph is not %s",
			     cases[i].option, cases[i].meta);
	}
}

Test(dwarf, bad_call_graph_values_are_one_line_errors)
{
	const char *values[] = { "dwarf,0",  "dwarf,7",   "dwarf,12", "dwarf,65536", "dwarf,65529", "dwarf,",
				 "dwarf,-8", "dwarf,abc", "dwarf,8x", "dwarf4096",   "dwarfs",      "DWARF",
				 "fp,8",     "lbr",       "" };
	const char *data = test_path("bad-cg.data");
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char *err;
		/* stderr only: the one line must be all sigprof says */
		int st = run_cmd(&err, false, "%s record --call-graph '%s' -o %s -- true 2>&1 >/dev/null", sigprof_bin(),
				 values[i], data);
		cr_assert_eq(st, 2, "--call-graph '%s' exited %d: %s", values[i], st, err);
		cr_assert_eq(count_lines(err), 1, "--call-graph '%s': %s", values[i], err);
		cr_assert(strncmp(err, "sigprof: ", 9) == 0 && strstr(err, "--call-graph"), "--call-graph '%s': %s",
			  values[i], err);
		free(err);
		cr_assert_neq(access(data, F_OK), 0, "--call-graph '%s' left a recording", values[i]);
	}
}
