/*
 * test_events.c: `sigprof record -e EVENT`, the cache collector's place in
 * a default recording, and `sigprof list`, end to end.
 *
 * What is expected follows from what this machine can open, probed here
 * with perf_event_open: on our VMs (no PMU) cache-misses does not open, so
 * the default recording notes the cache collector as unavailable and
 * succeeds, and `-e cache-misses` fails cleanly; on a machine with a PMU the
 * cache collector is expected to run instead.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

Test(events, default_recording_notes_cache_and_succeeds)
{
	require_perf_events();
	const char *data = test_path("default.data");
	char *out;
	int st = run_cmd(&out, true, "%s record -o %s -- " W "signal_storm 500", sigprof_bin(), data);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	const char *json = report_json_file(data, "");
	double cache_ok = jq_file(json, "[.meta.collectors[] | select(.name==\"cache\" and .status==\"ok\")] | length");
	if (probe_hardware_event(PERF_COUNT_HW_CACHE_MISSES) == 0) {
		cr_assert_eq(cache_ok, 1, "cache-misses opens here but the cache collector did not run: %s", out);
	} else {
		cr_assert_eq(cache_ok, 0);
		cr_assert(strstr(out, "unavailable: cache") && strstr(out, "(why: sigprof list)"), "closing line: %s", out);
		char *reason;
		run_cmd(&reason, false, "jq -r '.meta.collectors[] | select(.name==\"cache\") | .reason' %s", json);
		cr_assert(strstr(reason, "cache-misses"), "the reason names no event: %s", reason);
		free(reason);
	}
	/* the other collectors ran */
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples"), 0);
	free(out);
}

/* The one error line of a failing record and that it left the output as it was. */
static void expect_refused(const char *events, const char *expect_text)
{
	const char *fresh = test_path("fresh.data");
	unlink(fresh);
	char *out;
	int st = run_cmd(&out, true, "%s record -o %s -e '%s' -- " W "signal_storm 10", sigprof_bin(), fresh, events);
	cr_assert_eq(st, 2, "-e %s: exit %d: %s", events, st, out);
	cr_assert_eq(count_lines(out), 1, "-e %s: not one line:\n%s", events, out);
	cr_assert(strstr(out, expect_text), "-e %s: '%s' lacks '%s'", events, out, expect_text);
	cr_assert(!strstr(out, "signal_storm:"), "the workload ran: %s", out);
	cr_assert(!exists(fresh), "-e %s left %s behind", events, fresh);
	free(out);
	/* an existing recording stays as it was, with no .old beside it */
	const char *old = test_path("old.data");
	FILE *f = fopen(old, "w");
	cr_assert_not_null(f);
	fputs("previous recording\n", f);
	fclose(f);
	st = run_cmd(&out, true, "%s record -o %s -e '%s' -- " W "signal_storm 10", sigprof_bin(), old, events);
	cr_assert_eq(st, 2);
	free(out);
	run_cmd(&out, false, "cat %s", old);
	cr_assert_str_eq(out, "previous recording\n");
	free(out);
	char old_old[4200];
	snprintf(old_old, sizeof(old_old), "%s.old", old);
	cr_assert(!exists(old_old), "%s was created", old_old);
}

Test(events, cache_misses_without_a_pmu_fails_cleanly)
{
	require_perf_events();
	if (probe_hardware_event(PERF_COUNT_HW_CACHE_MISSES) == 0)
		skip_environment("cache-misses opens on this machine: nothing to refuse");
	expect_refused("cache-misses", "cache-misses: no hardware PMU");
	expect_refused("cpu,cache-misses", "cache-misses: no hardware PMU");
}

Test(events, bad_event_names_fail_before_anything_runs)
{
	expect_refused("no-such-event", "event 'no-such-event': no such event");
	expect_refused("cycles:q", "unknown modifier 'q'");
	expect_refused("nopmu/event=1/", "no PMU 'nopmu'");
	expect_refused("cpu-clock,no-such-event", "event 'no-such-event'");
}

/* A spec with a newline or an escape in it is one error line, shown escaped. */
Test(events, control_characters_in_a_spec_are_escaped_in_its_error_line)
{
	expect_refused("cpu-clock\nfoo", "event 'cpu-clock\\nfoo'");
	expect_refused("page-faults:\n", "unknown modifier '\\n'");
	expect_refused("nopmu\x1b[31m/event=1/", "no PMU 'nopmu\\x1b[31m'");
	char *out;
	int st = run_cmd(&out, true, "%s stat -e 'task-clock,cpu-clock\nfoo' -- true", sigprof_bin());
	cr_assert_eq(st, 2, "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert(strstr(out, "event 'cpu-clock\\nfoo'"), "%s", out);
	free(out);
}

Test(events, unknown_tracepoint_fails_before_anything_runs)
{
	require_root(); /* tracefs is root's: without it the line says so instead */
	expect_refused("sched:no_such_tracepoint", "no tracepoint 'sched:no_such_tracepoint'");
}

Test(events, tracepoint_event_records_every_switch)
{
	require_perf_events();
	require_root();
	const char *data = test_path("switch.data");
	char *out;
	int sleeps = 20;
	int st = run_cmd(&out, true, "%s record -q -o %s -e sched:sched_switch -- " W "sched_sleeper %d 2", sigprof_bin(),
			 data, sleeps);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, "[.meta.collectors[] | select(.name==\"events\" and .status==\"ok\")] | length"), 1);
	cr_assert_eq(jq_file(json, "[.meta.collectors[]] | length"), 1, "only the events collector ran");
	double samples = jq_file(json, ".meta.collectors[] | select(.name==\"events\") | .samples");
	/* every sleep switches the workload out at least once; nothing else was recorded */
	cr_assert_geq(samples, sleeps, "%.0f sched_switch samples for %d sleeps", samples, sleeps);
	double in_sleep_once = jq_file(json, "[.stacks[] | select(.collector==\"events\") | select(any(.frames[]; "
					     ".sym==\"sleep_once\")) | .count] | add");
	cr_assert_geq(in_sleep_once, sleeps, "%.0f switches under sleep_once for %d sleeps", in_sleep_once, sleeps);
}

/*
 * A tracepoint named in PMU form by its id (tracepoint/config=ID/, the id
 * from tracefs) is sampled at every hit, as signal:signal_generate is:
 * signal_storm's N generations are N samples (it was 4000 Hz: a handful).
 */
Test(events, a_tracepoint_named_by_its_id_records_every_hit)
{
	require_perf_events();
	require_root();
	char *id;
	if (run_cmd(&id, false, "cat /sys/kernel/tracing/events/signal/signal_generate/id 2>/dev/null || "
				"cat /sys/kernel/debug/tracing/events/signal/signal_generate/id") != 0)
		skip_environment("no tracefs: the signal_generate tracepoint's id cannot be read");
	id[strcspn(id, "\n")] = '\0';
	const long n = 1000;
	const char *data = test_path("tp-id.data");
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "-e tracepoint/config=%s/", id);
	free(id);
	free(record_workload(data, cmd, W "signal_storm 1000 >/dev/null"));
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, ".meta.collectors[] | select(.name==\"events\") | .samples"), n);
	cr_assert_eq(jq_file(json, ".meta.unsampled_hits"), 0);
}

/*
 * cpu-clock sampled with period 1 (-c 1) counts nanoseconds, not hits: the
 * kernel stretches the period to its minimum, and nothing is unsampled (the
 * header claimed hundreds of millions of unsampled "tracepoint hits").
 */
Test(events, a_clock_sampled_every_nanosecond_has_no_unsampled_hits)
{
	require_perf_events();
	const char *data = test_path("clock-c1.data");
	free(record_workload(data, "-e cpu-clock -c 1", W "cpu_burner 100"));
	const char *json = report_json_file(data, "");
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"events\") | .samples"), 0);
	cr_assert_eq(jq_file(json, ".meta.unsampled_hits"), 0);
	cr_assert_eq(jq_file(json, ".meta.unsampled_hits_by_event | length"), 0);
}

Test(events, user_only_cpu_clock_has_no_kernel_frames)
{
	require_perf_events();
	const char *data = test_path("user.data");
	char *out;
	int st = run_cmd(&out, true, "%s record -q -o %s -e cpu-clock:u -- " W "cpu_burner 400", sigprof_bin(), data);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	const char *json = report_json_file(data, "");
	double samples = jq_file(json, ".meta.collectors[] | select(.name==\"events\") | .samples");
	cr_assert_gt(samples, 100, "%.0f samples in 400 ms at 4000 Hz", samples);
	cr_assert_eq(jq_file(json, "[.stacks[] | .frames[] | select(.dso==\"[kernel]\")] | length"), 0,
		     ":u samples carry kernel frames");
	double burn = jq_file(json, "[.functions[] | select(.collector==\"events\" and .sym==\"burn_cpu\") | .self] | add");
	cr_assert_gt(burn / samples, 0.8, "burn_cpu holds %.0f of %.0f samples", burn, samples);
}

/* One event with two privilege modifiers is two events: neither is dropped as a repeat of the other. */
Test(events, the_same_event_with_other_modifiers_is_kept)
{
	require_perf_events();
	const char *data = test_path("uk.data");
	char *out;
	/* --no-compress: strings(1) below reads the EVENT records as they are written (version 1) */
	int st = run_cmd(&out, true, "%s record -q --no-compress -o %s -e cpu-clock:u,cpu-clock:k -- " W "cpu_burner 100",
			 sigprof_bin(), data);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	/* the EVENT records name each event as the user wrote it (docs/data-format.md) */
	st = run_cmd(&out, false, "strings %s | grep -c -x -e 'cpu-clock:u' -e 'cpu-clock:k'", data);
	cr_assert_eq(st, 0);
	cr_assert_eq(atoi(out), 2, "EVENT records named cpu-clock:u/k: %s", out);
	free(out);
}

Test(events, task_clock_beside_a_collector)
{
	require_perf_events();
	const char *data = test_path("task.data");
	char *out;
	int st = run_cmd(&out, true, "%s record -q -o %s -e cpu,task-clock -- " W "cpu_burner 300", sigprof_bin(), data);
	cr_assert_eq(st, 0, "record exited %d: %s", st, out);
	free(out);
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, "[.meta.collectors[]] | length"), 2);
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"events\") | .samples"), 50);
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples"), 50);
}

Test(events, list_shows_every_collector_with_its_state)
{
	require_perf_events();
	/* the default recording's collector statuses are the truth `list` must agree with */
	const char *data = test_path("list.data");
	char *out;
	int st = run_cmd(&out, true, "%s record -q -o %s -- true", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	const char *json = report_json_file(data, "");
	char *statuses;
	run_cmd(&statuses, false, "jq -r '.meta.collectors[] | .name + \" \" + .status' %s", json);
	char *list;
	st = run_cmd(&list, false, "%s list", sigprof_bin());
	cr_assert_eq(st, 0);
	int n = 0;
	for (char *line = strtok(statuses, "\n"); line; line = strtok(NULL, "\n"), n++) {
		char name[32], status[32], expect[80];
		cr_assert_eq(sscanf(line, "%31s %31s", name, status), 2);
		snprintf(expect, sizeof(expect), "\n  %-8s %-12s ", name,
			 strcmp(status, "ok") == 0 ? "available" : "unavailable");
		cr_assert(strstr(list, expect), "list lacks '%s':\n%s", expect, list);
	}
	cr_assert_geq(n, 5, "%d collectors in a default recording", n);
	cr_assert(strstr(list, "\n  events   on request "), "no events collector line:\n%s", list);
	cr_assert(strstr(list, "generic software      available"), "%s", list);
	free(statuses);
	free(list);
}
