/*
 * test_stacks.c: whole user stacks by default (issue 14).  The workloads:
 *   altstack_handler_nofp S SPIN [noalt]   built without frame pointers: a
 *       SIGPROF handler spinning in handler_spin() on an alternate signal
 *       stack (or, with noalt, on the thread's own), over main ->
 *       outer_work -> interrupted_loop;
 *   stress-ng --timer 1 (when installed): a stripped program without frame
 *       pointers whose timer handler runs on an alternate signal stack;
 *   deep_fp MS DEPTH   built with frame pointers: spin() under wide_frame()
 *       (a 6 KiB local) under DEPTH calls of descend() from main();
 *   wide_frames_nofp MS   built without frame pointers: spin() under 3 KiB
 *       frames, wide_a and wide_b with one caller each, wide_shared with two;
 *   nested_raise_nofp N   built without frame pointers: a SIGUSR1 handler on
 *       an alternate stack raising SIGUSR2, delivered nested on the way out.
 * What is checked comes from what the workloads do (which functions run
 * where, how many handlers ran), never from a recorded report: with no
 * --call-graph the handler's samples read handler_spin <- on_prof <-
 * [signal SIGPROF] <- interrupted_loop <- outer_work <- main, crossing to
 * the delivery's stack when the handler ran on an alternate stack; a
 * frame-pointer walk of the same code shows no frame that is not code; the
 * kernel's work for our own events is on the recorder path.  Needs root
 * (tracepoints).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

#define HANDLERS 200
#define IN_HANDLER "any(.[]; .sym==\"handler_spin\")"

/* Record altstack_handler_nofp with options (and mode after its arguments); check what it says it did. */
static const char *record_handler(const char *name, const char *options, const char *mode)
{
	const char *data = test_path(name);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "altstack_handler_nofp %d 2000000 %s", HANDLERS, mode);
	char *out = record_workload(data, options, cmd);
	int handlers, on_altstack;
	cr_assert_eq(sscanf(out, "handlers %d on_altstack %d", &handlers, &on_altstack), 2, "output: %s", out);
	free(out);
	/* one more may land between the loop's end and the timer's stop */
	cr_assert(handlers == HANDLERS || handlers == HANDLERS + 1, "%d handlers ran, expected %d", handlers, HANDLERS);
	cr_assert_eq(on_altstack, strcmp(mode, "noalt") == 0 ? 0 : handlers, "%d of %d handlers on the alternate stack",
		     on_altstack, handlers);
	return report_json_file(data, "");
}

/*
 * At least 90% of the cpu samples in the handler read, leaf first and
 * adjacent, the handler, signal_frame, the rest; a signal frame whose
 * stack past it is the delivery's ("[signal SIGPROF] (stack from delivery)")
 * reads as signal_frame here, and the test says which it wants.
 */
static void check_handler_stacks(const char *json, const char *signal_frame)
{
	require_collector(json, "cpu");
	double in_handler = stack_samples(json, "cpu", NULL, IN_HANDLER);
	char in_order[384];
	snprintf(in_order, sizeof(in_order),
		 IN_HANDLER " and (map(.sym // \"\" | sub(\" [(]stack from delivery[)]$\"; \"\")) | "
			    "indices([\"handler_spin\", \"on_prof\", \"%s\", \"interrupted_loop\", "
			    "\"outer_work\", \"main\"]) | length > 0)",
		 signal_frame);
	double whole = stack_samples(json, "cpu", NULL, in_order);
	cr_assert_geq(in_handler, 50, "only %.0f samples in handler_spin", in_handler);
	if (whole < 0.9 * in_handler) {
		char *largest;
		run_cmd(&largest, false, "jq -c '[.stacks[] | select(.collector==\"cpu\" and (.frames | " IN_HANDLER
					 "))] | max_by(.count) | [.count, (.frames | map(.sym))]' %s", json);
		cr_assert_fail("%.0f of %.0f handler samples read handler_spin, on_prof, %s, interrupted_loop, outer_work, "
			       "main; the largest handler stack: %s", whole, in_handler, signal_frame, largest);
	}
	/* and the deliveries' own stacks: the interrupted loop, whole */
	cr_assert_geq(jq_file(json, "[.signals[] | select(.name==\"SIGPROF\") | .interrupted[] | select(.frames | "
				    "map(.sym) | indices([\"interrupted_loop\", \"outer_work\", \"main\"]) | length > 0) "
				    "| .count] | add // 0"),
		      0.9 * HANDLERS, "the deliveries' stacks do not read interrupted_loop <- outer_work <- main");
}

/*
 * A handler on an alternate signal stack: its stack copy holds the handler
 * only; the rest is the stack the delivery that started it copied, and the
 * signal frame says so.
 */
Test(stacks, default_stacks_of_a_nofp_handler_on_an_alternate_stack_join_its_delivery)
{
	require_tracing();
	const char *json = record_handler("altstack.data", "-e cpu,signal", "");
	check_handler_stacks(json, "[signal SIGPROF]");
	double in_handler = stack_samples(json, "cpu", NULL, IN_HANDLER);
	double joined = stack_samples(json, "cpu", NULL, IN_HANDLER " and any(.[]; .sym==\"[signal SIGPROF] (stack from delivery)\")");
	cr_assert_geq(joined, 0.9 * in_handler, "%.0f of %.0f handler stacks say the part past the signal frame is the "
						"delivery's", joined, in_handler);
	cr_assert_eq(jq_file(json, ".meta.unwind.joined"), stack_samples(json, NULL, NULL,
									 "any(.[]; .sym | endswith(\"(stack from delivery)\"))"),
		     "meta.unwind.joined is not the count of joined stacks");
}

/*
 * The cpu collector alone: nothing recorded the deliveries, so a handler on
 * its alternate stack stops at its signal frame, says why in its last
 * frame, and a note names what would have joined it (-e cpu,signal).
 */
Test(stacks, handler_stacks_without_the_signal_collector_say_what_would_join_them)
{
	const char *json = record_handler("cpu-only.data", "-e cpu", "");
	require_collector(json, "cpu");
	double in_handler = stack_samples(json, "cpu", NULL, IN_HANDLER);
	cr_assert_geq(in_handler, 50, "only %.0f samples in handler_spin", in_handler);
	double stopped = jq_file(json, ".meta.unwind.failures.signal_stack // 0");
	double ending = stack_samples(json, "cpu", NULL,
				      IN_HANDLER " and (.[-1].sym // \"\" | "
						 "startswith(\"[unwind: handler on an alternate signal stack\"))");
	cr_assert_geq(ending, 0.9 * in_handler, "%.0f of %.0f handler stacks end with the alternate-stack reason", ending,
		      in_handler);
	cr_assert_geq(stopped, ending, "meta.unwind.failures.signal_stack %.0f, %.0f handler stacks end so", stopped, ending);
	char query[256];
	snprintf(query, sizeof(query), "[.meta.notes[] | select(startswith(\"%.0f handler stacks stop\") and "
				       "contains(\"-e cpu,signal\"))] | length", stopped);
	cr_assert_eq(jq_file(json, query), 1, "no note names the %.0f stopped handler stacks and -e cpu,signal", stopped);
}

/*
 * The same handler on the thread's own stack: the unwind crosses the signal
 * frame by itself, or, where the copy runs out past it (the frame holds the
 * FPU state, 2.5 KiB with AVX-512), goes on with the delivery's stack.
 */
Test(stacks, default_stacks_of_a_nofp_handler_cross_the_signal_frame)
{
	require_tracing();
	const char *json = record_handler("noalt.data", "-e cpu,signal", "noalt");
	check_handler_stacks(json, "[signal SIGPROF]");
}

/*
 * The kernel's frame-pointer walk of code built without them: every user
 * frame past the leaf is in an executable mapping (never a stack word or
 * text), and a walk that stopped early says why in its last frame.
 */
Test(stacks, frame_pointer_walks_of_nofp_code_invent_no_frame)
{
	require_tracing();
	const char *json = record_handler("fp.data", "-e cpu,signal --call-graph fp", "");
	require_collector(json, "cpu");
	double all = stack_samples(json, NULL, NULL, "true");
	cr_assert_gt(all, 0);
	double invented = stack_samples(json, NULL, NULL,
					"map(select(.dso != \"[kernel]\")) | .[1:] | any(.[]; .dso==\"[unknown]\")");
	cr_assert_eq(invented, 0, "%.0f of %.0f stacks have an unmapped user frame past the leaf", invented, all);
	double misplaced = stack_samples(json, NULL, NULL, ".[:-1] | any(.[]; .sym // \"\" | startswith(\"[unwind: \"))");
	cr_assert_eq(misplaced, 0, "%.0f stacks go on past an [unwind: ...] frame", misplaced);
}

#define PASSES_SIGNAL_FRAME "any(.[]; (.sym // \"\") | startswith(\"[signal\"))"
#define REACHES_MAIN "any(.[]; .sym==\"__libc_start_call_main\")"

/*
 * The seed's workload: stress-ng's timer handler runs on an alternate
 * signal stack in a stripped program without frame pointers.  At least 90%
 * of the stacks that pass a signal frame reach its main (the caller of
 * __libc_start_call_main); its functions are named from .eh_frame, never
 * a bare offset; the kernel's work for our events is the recorder's.
 */
Test(stacks, stress_ng_timer_stacks_reach_main_through_the_alternate_stack, .timeout = 120)
{
	require_tracing();
	char *version;
	if (run_cmd(&version, true, "stress-ng --version") != 0)
		skip_environment("stress-ng is not installed (apt-get install stress-ng)");
	free(version);
	const char *data = test_path("timer.data");
	free(record_workload(data, "-e cpu,signal", "stress-ng --timer 1 -t 2"));
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	require_collector(json, "signal");
	/*
	 * A handler's stack is joined to its delivery's: when stress-ng runs so
	 * fast that the kernel throttles the tracepoints (past
	 * kernel.perf_event_max_sample_rate, samples are dropped without a LOST
	 * record), the deliveries it dropped cannot be joined, and the check
	 * cannot be made on this machine now.
	 */
	double unsampled = jq_file(json, ".meta.unsampled_hits");
	double signal_samples = jq_file(json, "[.meta.collectors[] | select(.name==\"signal\") | .samples] | first");
	if (unsampled > 0.01 * signal_samples)
		skip_premise("the kernel throttled %.0f of %.0f signal tracepoint hits (a busy machine, or faster than "
			     "kernel.perf_event_max_sample_rate): the handlers of unsampled deliveries cannot be joined",
			     unsampled, signal_samples + unsampled);
	double through_signal = stack_samples(json, NULL, NULL, PASSES_SIGNAL_FRAME);
	double reach_main = stack_samples(json, NULL, NULL, PASSES_SIGNAL_FRAME " and " REACHES_MAIN);
	cr_assert_gt(through_signal, 100, "only %.0f samples pass a signal frame", through_signal);
	if (reach_main < 0.9 * through_signal) {
		char *largest;
		run_cmd(&largest, false, "jq -c '[.stacks[] | select(.frames | (" PASSES_SIGNAL_FRAME ") and (" REACHES_MAIN
					 " | not))] | max_by(.count) | [.collector, .count, (.frames | map(.sym))]' %s", json);
		cr_assert_fail("%.0f of %.0f stacks through a signal frame reach main (%.1f%%); the largest that does not: %s",
			       reach_main, through_signal, 100 * reach_main / through_signal, largest);
	}
	double bare = stack_samples(json, NULL, NULL, "any(.[]; (.dso | endswith(\"/stress-ng\")) and has(\"offset\"))");
	cr_assert_eq(bare, 0, "%.0f stacks have a stress-ng frame without a name", bare);
	cr_assert_gt(stack_samples(json, NULL, NULL, "any(.[]; (.sym // \"\") | startswith(\"stress-ng!fn@0x\"))"), 0);
	/* the header's share of stacks ending in a stripped file's .eh_frame name is the stacks' own count */
	double eh_frame_ends = stack_samples(json, NULL, NULL, "map(select((.sym // \"\") | startswith(\"[unwind\") | not)) | "
								 "(.[-1].sym // \"\") | contains(\"!fn@0x\")");
	cr_assert_gt(eh_frame_ends, 0);
	/*
	 * The header counts the ends of the copies that only lend their stacks too (the signal collector's
	 * rate-bounded #stack copies, counted on no stack): 1-2% more than the stacks, held within 5%. A key counts
	 * the end of the stack it is lent (unit test profile::a_key_counted_on_a_lent_stack_counts_that_stacks_end);
	 * when it counted its own 512-byte unwind's end, one run in about 30 had a third of the stacks' ends.
	 */
	double header_ends = jq_file(json, ".meta.unwind.ends_in_eh_frame_name");
	cr_assert(header_ends <= eh_frame_ends * 1.05 && eh_frame_ends <= header_ends * 1.05,
		  "the header counts %.0f stacks ending in an .eh_frame name, the stacks %.0f", header_ends, eh_frame_ends);
	cr_assert_leq(jq_file(json, ".meta.unwind.ends_in_eh_frame_name"), jq_file(json, ".meta.unwind.ends_in_unknown"));
	double ours = stack_samples(json, "cpu", NULL, ".[0].sym | IN(\"perf_tp_event\", \"perf_swevent_event\", "
						       "\"perf_syscall_enter\")");
	double ours_on_recorder = stack_samples(json, "cpu", "recorder", ".[0].sym | IN(\"perf_tp_event\", "
									 "\"perf_swevent_event\", \"perf_syscall_enter\")");
	cr_assert_eq(ours_on_recorder, ours, "%.0f of %.0f cpu samples in perf_tp_event & co. on the recorder path",
		     ours_on_recorder, ours);
}

/* Record deep_fp for 600 ms at depth with options; its report's JSON. */
static const char *record_deep_fp(const char *name, const char *options, int depth)
{
	const char *data = test_path(name);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), W "deep_fp 600 %d", depth);
	char *out = record_workload(data, options, cmd);
	int said_depth;
	cr_assert_eq(sscanf(out, "calls %*d depth %d", &said_depth), 1, "output: %s", out);
	free(out);
	cr_assert_eq(said_depth, depth);
	return report_json_file(data, "");
}

/*
 * A program with frame pointers whose stack is deeper than its 4096-byte
 * copy: the unwinding of the copy stops inside wide_frame()'s 6 KiB, and
 * the stack goes on along the kernel's frame-pointer walk to main.  No
 * signal ran, so no stack is joined to a delivery.
 */
Test(stacks, default_stacks_of_a_frame_pointer_program_go_on_past_the_copy_to_main)
{
	require_tracing();
	const char *json = record_deep_fp("deep-fp.data", "-e cpu", 3);
	require_collector(json, "cpu");
	double in_spin = stack_samples(json, "cpu", NULL, ".[0].sym==\"spin\"");
	cr_assert_geq(in_spin, 100, "only %.0f samples in spin", in_spin);
	double whole = stack_samples(json, "cpu", NULL, ".[0].sym==\"spin\" and ([.[].sym] | index([\"spin\", "
					"\"wide_frame\", \"descend\", \"descend\", \"descend\", \"descend\", \"main\"]) == 0)");
	cr_assert_geq(whole, 0.9 * in_spin, "%.0f of %.0f samples in spin read spin <- wide_frame <- descend x4 <- main",
		      whole, in_spin);
	cr_assert_eq(jq_file(json, ".meta.unwind.joined"), 0, "no signal ran, yet stacks were joined to a delivery");
	cr_assert_geq(jq_file(json, ".meta.unwind.spliced"), whole, "the stacks that went on past the copy are spliced");
	cr_assert_eq(stack_samples(json, NULL, NULL, "any(.[]; (.sym // \"\") | startswith(\"[signal\"))"), 0);
}

/*
 * A frame-pointer walk deeper than the kernel's limit
 * (kernel.perf_event_max_stack entries) keeps every entry, the recursion
 * included, and ends with a frame that names the limit.
 */
Test(stacks, frame_pointer_walks_cut_at_the_kernel_limit_keep_the_recursion_and_say_so)
{
	require_tracing();
	char *limit_text;
	cr_assert_eq(run_cmd(&limit_text, false, "cat /proc/sys/kernel/perf_event_max_stack"), 0);
	int limit = atoi(limit_text);
	free(limit_text);
	cr_assert_gt(limit, 8);
	const char *json = record_deep_fp("deep-fp-g.data", "-e cpu -g", limit + 50);
	require_collector(json, "cpu");
	double in_spin = stack_samples(json, "cpu", NULL, ".[0].sym==\"spin\"");
	cr_assert_geq(in_spin, 100, "only %.0f samples in spin", in_spin);
	char test[512];
	/* spin and, where spin sets up a frame of its own, wide_frame; descend for the rest of the limit */
	snprintf(test, sizeof(test), ".[0].sym==\"spin\" and (.[:-1] | length) == %d and "
		 "([.[] | select(.sym==\"descend\")] | length) >= %d and (.[-1].sym | startswith(\"[unwind: \") and "
		 "contains(\"frame-pointer walk stops at %d entries (kernel.perf_event_max_stack)\"))", limit, limit - 2,
		 limit);
	double cut = stack_samples(json, "cpu", NULL, test);
	cr_assert_geq(cut, 0.9 * in_spin, "%.0f of %.0f samples in spin keep all %d entries and name the limit", cut,
		      in_spin, limit);
	cr_assert_geq(jq_file(json, ".meta.unwind.failures.too_deep // 0"), cut);
}

/*
 * The cpu collector's short copies (2048 bytes) stop inside wide_frames_nofp's
 * 3 KiB frames; its long copies (cpu-clock#stack) are whole.  The samples
 * under wide_a and wide_b, one caller each, go on to main through that caller,
 * in the shares of CPU time the workload measured; those under wide_shared,
 * whose two callers its frame does not tell apart, stay cut and are never
 * given either caller.
 */
Test(stacks, cpu_stacks_deeper_than_the_short_copy_go_on_through_their_one_caller)
{
	require_tracing();
	const char *data = test_path("wide-frames.data");
	char *out = record_workload(data, "-e cpu", W "wide_frames_nofp 1500");
	double ms_a, ms_b, ms_shared;
	cr_assert_eq(sscanf(out, "a %lf b %lf shared %lf", &ms_a, &ms_b, &ms_shared), 3, "output: %s", out);
	free(out);
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	double in_spin = stack_samples(json, "cpu", NULL, ".[0].sym==\"spin\"");
	cr_assert_geq(in_spin, 1000, "only %.0f samples in spin", in_spin);
	double total_ms = ms_a + ms_b + ms_shared;
	static const char *const whole_a = ".[0].sym==\"spin\" and ([.[].sym] | index([\"spin\", \"wide_a\", "
					   "\"path_a\", \"main\"]) == 0) and .[-1].sym==\"_start\"";
	static const char *const whole_b = ".[0].sym==\"spin\" and ([.[].sym] | index([\"spin\", \"wide_b\", "
					   "\"path_b\", \"main\"]) == 0) and .[-1].sym==\"_start\"";
	double a = stack_samples(json, "cpu", NULL, whole_a), b = stack_samples(json, "cpu", NULL, whole_b);
	cr_assert(a / in_spin > ms_a / total_ms - 0.05 && a / in_spin < ms_a / total_ms + 0.05,
		  "%.0f of %.0f samples in spin read spin <- wide_a <- path_a <- main ... _start; the workload spent "
		  "%.1f of %.1f ms there", a, in_spin, ms_a, total_ms);
	cr_assert(b / in_spin > ms_b / total_ms - 0.05 && b / in_spin < ms_b / total_ms + 0.05,
		  "%.0f of %.0f samples in spin read spin <- wide_b <- path_b <- main ... _start; the workload spent "
		  "%.1f of %.1f ms there", b, in_spin, ms_b, total_ms);
	double shared = stack_samples(json, "cpu", NULL, ".[0].sym==\"spin\" and .[1].sym==\"wide_shared\"");
	double shared_cut = stack_samples(json, "cpu", NULL, ".[0].sym==\"spin\" and .[1].sym==\"wide_shared\" and "
							    "(.[2].sym | startswith(\"[unwind: stack copy ends at 2048\"))");
	cr_assert(shared / in_spin > ms_shared / total_ms - 0.05,
		  "%.0f of %.0f samples in spin under wide_shared; the workload spent %.1f of %.1f ms there", shared,
		  in_spin, ms_shared, total_ms);
	cr_assert_eq(shared_cut, shared, "%.0f of %.0f samples under wide_shared were given a caller", shared - shared_cut,
		     shared);
	cr_assert_geq(jq_file(json, ".meta.unwind.completed"), a + b, "the stacks under wide_a and wide_b were completed");
	double copies = jq_file(json, "[.meta.collectors[] | select(.name==\"cpu\") | .events[] | "
				      "select(.name | endswith(\"#stack\")) | .stack_copies] | add");
	cr_assert_gt(copies, 0, "no long copy was recorded");
	cr_assert_lt(copies, in_spin / 4, "%.0f long copies beside %.0f samples: more than a quarter", copies, in_spin);
}

/*
 * A cpu sample the kernel takes in get_signal after a nested signal's
 * signal_deliver and before its frame is built has the outer handler's
 * stack: one signal frame, SIGUSR1's, while SIGUSR1's and SIGUSR2's
 * handlers both run.  Its frame is named and joined as SIGUSR1's, never as
 * the innermost running handler's (stress-ng --timer's SIGALRM handler left
 * 4 140 such stacks cut, or joined to the wrong delivery, in one run).
 */
Test(stacks, a_handler_stack_before_a_nested_signals_frame_joins_its_own_delivery, .timeout = 120)
{
	require_tracing();
	const char *data = test_path("nested-raise.data");
	char *out = record_workload(data, "-e cpu,signal", W "nested_raise_nofp 50000");
	long outer, inner;
	cr_assert_eq(sscanf(out, "outer %ld inner %ld", &outer, &inner), 2, "output: %s", out);
	free(out);
	cr_assert_eq(outer, 50000);
	cr_assert_eq(inner, 4 * outer);
	const char *json = report_json_file(data, "");
	require_collector(json, "cpu");
	require_collector(json, "signal");
	/* on_outer's own samples: its frame, then the signal frame past it */
	static const char *const past_outer = "(map(.sym // \"\") | index(\"on_outer\")) as $i | $i != null and "
					      "((.[$i + 1].sym // \"\") | startswith(\"[signal\"))";
	double in_outer = stack_samples(json, "cpu", NULL, past_outer);
	cr_assert_geq(in_outer, 100, "only %.0f samples in on_outer", in_outer);
	char test[512];
	snprintf(test, sizeof(test), "%s and (.[(map(.sym // \"\") | index(\"on_outer\")) + 1].sym | "
		 "startswith(\"[signal SIGUSR2]\"))", past_outer);
	double as_inner = stack_samples(json, "cpu", NULL, test);
	cr_assert_eq(as_inner, 0, "%.0f of %.0f samples in on_outer read on_outer <- [signal SIGUSR2]", as_inner,
		     in_outer);
	snprintf(test, sizeof(test), "%s and (map(.sym // \"\") | indices([\"on_outer\", \"[signal SIGUSR1] (stack from "
		 "delivery)\", \"__pthread_kill_implementation\", \"raise\", \"send_outer\", \"main\"]) | length > 0)", past_outer);
	double whole = stack_samples(json, "cpu", NULL, test);
	cr_assert_geq(whole, 0.95 * in_outer, "%.0f of %.0f samples in on_outer read on_outer <- [signal SIGUSR1] (stack "
					       "from delivery) <- __pthread_kill_implementation <- raise <- send_outer <- main",
		      whole, in_outer);
}
