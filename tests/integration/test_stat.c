/*
 * test_stat.c: `sigprof stat` end to end.  Each test counts a workload
 * whose events are known (signal_storm N: N signals generated, delivered
 * and returned from; futex_wake_many N: N FUTEX_WAKE_PRIVATE calls;
 * futex_futex2 N M: N futex_wake and M futex_waitv calls) and compares the
 * figures, read from --json with jq or from the text, with that ground
 * truth.  The tracepoint counters need root; skipped, not passed, without.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* `sigprof stat --json -o FILE OPTIONS -- CMD`, asserting CMD's exit 0; returns FILE. */
static const char *stat_json(const char *name, const char *opts, const char *cmd)
{
	const char *json = test_path(name);
	char *out;
	int st = run_cmd(&out, true, "%s stat --json -o %s %s -- %s", sigprof_bin(), json, opts, cmd);
	cr_assert_eq(st, 0, "stat of %s exited %d: %s", cmd, st, out);
	free(out);
	return json;
}

/* `sigprof stat -o FILE OPTIONS -- CMD`: its exit status, and FILE's text in *text (malloc'd). */
static int stat_text(char **text, const char *opts, const char *cmd)
{
	const char *file = test_path("stat.txt");
	char *out;
	int st = run_cmd(&out, true, "%s stat -o %s %s -- %s", sigprof_bin(), file, opts, cmd);
	free(out);
	run_cmd(text, false, "cat %s", file);
	return st;
}

/* A field of the figure named name ("signals-generated"); -1 when absent. */
static double figure(const char *json, const char *name, const char *field)
{
	char filter[256];
	snprintf(filter, sizeof(filter), "[.figures[], .derived[] | select(.name==\"%s\") | %s] | first", name, field);
	return jq_file(json, filter);
}

static void require_supported(const char *json, const char *name)
{
	if (figure(json, name, "if .supported then 1 else 0 end") != 1)
		skip_environment("%s is not counted here (see %s)", name, json);
}

Test(stat, signal_storm_counts_are_exact)
{
	require_tracing();
	const long n = 20000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld >/dev/null", n);
	const char *json = stat_json("storm.json", "", cmd);
	require_supported(json, "signals-generated");
	const char *names[] = { "signals-generated", "signals-delivered", "sigreturns" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(figure(json, names[i], ".mean"), n, "%s: %.0f, sent %ld", names[i],
			     figure(json, names[i], ".mean"), n);
	cr_assert_eq(figure(json, "signals-generated", ".running_percent"), 100, "tracepoints are never multiplexed");
	cr_assert_eq(figure(json, "futex-calls", ".mean"), 0, "signal_storm makes no futex call");
	cr_assert_eq(jq_file(json, ".runs"), 1);
	cr_assert_eq(jq_file(json, ".exit_status"), 0);
	cr_assert_gt(figure(json, "task-clock", ".mean"), 0);
	double cpus = figure(json, "CPUs-utilized", ".mean");
	cr_assert_float_eq(cpus, figure(json, "task-clock", ".mean") / 1e3 / jq_file(json, ".elapsed_s.mean"), 1e-3,
			   "CPUs-utilized is task-clock over the time elapsed");
}

Test(stat, futex_calls_per_operation)
{
	require_tracing();
	const long n = 3000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "futex_wake_many %ld >/dev/null", n);
	const char *json = stat_json("wake.json", "", cmd);
	require_supported(json, "futex-calls");
	cr_assert_eq(figure(json, "futex-calls", ".mean"), n);
	cr_assert_eq(figure(json, "futex-calls.WAKE", ".mean"), n, "FUTEX_WAKE_PRIVATE is WAKE whatever its flags");
	cr_assert_eq(jq_file(json, "[.figures[] | select(.name | startswith(\"futex-calls.\"))] | length"), 1,
		     "only the operations the workload called have a row");
}

Test(stat, futex_waiter_waits_and_wakes)
{
	require_tracing();
	const char *json = test_path("waiter.json");
	char *out;
	int st = run_cmd(&out, false, "%s stat --json -o %s -- " W "futex_waiter 30 2", sigprof_bin(), json);
	cr_assert_eq(st, 0, "%s", out);
	long waits, blocked, eagain, opened;
	cr_assert_eq(sscanf(out, "waits %ld blocked %ld eagain %ld opened %ld", &waits, &blocked, &eagain, &opened), 4,
		     "%s", out);
	free(out);
	require_supported(json, "futex-calls");
	/* the waiter's FUTEX_WAIT_PRIVATE calls and the opener's FUTEX_WAKE_PRIVATE calls, as the workload counted them */
	cr_assert_eq(figure(json, "futex-calls.WAIT", ".mean"), waits);
	cr_assert_eq(figure(json, "futex-calls.WAKE", ".mean"), opened);
	/* glibc may add calls of its own (pthread_join), on their own rows: the rows add up to the total */
	cr_assert_eq(jq_file(json, "[.figures[] | select(.name | startswith(\"futex-calls.\")) | .mean] | add"),
		     figure(json, "futex-calls", ".mean"));
}

Test(stat, futex2_calls)
{
	require_tracing();
	const long n = 400, m = 300;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "futex_futex2 %ld %ld >/dev/null", n, m);
	const char *json = test_path("futex2.json");
	char *out;
	int st = run_cmd(&out, true, "%s stat --json -o %s -- %s", sigprof_bin(), json, cmd);
	if (st == 77)
		skip_environment("this kernel has no futex2 system calls: %s", out);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	require_supported(json, "futex_wake-calls");
	cr_assert_eq(figure(json, "futex_wake-calls", ".mean"), n);
	cr_assert_eq(figure(json, "futex_waitv-calls", ".mean"), m);
	cr_assert_eq(figure(json, "futex-calls", ".mean"), 0, "futex2 calls are not futex(2) calls");
}

Test(stat, repeated_runs_have_mean_and_stddev, .timeout = 120)
{
	require_tracing();
	const long n = 5000;
	char *out;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld >/dev/null", n);
	int st = stat_text(&out, "-r 3", cmd);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, "(3 runs"), "%s", out);
	/* every counted figure line carries its %stddev */
	int counted = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (strstr(line, "Counter statistics") || strstr(line, "<not supported>"))
			continue;
		cr_assert(strstr(line, "\u00b1"), "no %%stddev on '%s'", line);
		counted++;
		char name[64];
		double value, stddev;
		if (sscanf(line, "%lf %63s \u00b1 %lf%%", &value, name, &stddev) == 3 && strcmp(name, "sigreturns") == 0) {
			cr_assert_eq(value, n);
			cr_assert_eq(stddev, 0, "an exact count does not vary: %s", line);
		}
	}
	cr_assert_gt(counted, 5);
	free(out);

	const char *json = stat_json("runs.json", "-r 3", W "signal_storm 2000 >/dev/null");
	cr_assert_eq(jq_file(json, ".runs"), 3);
	cr_assert_eq(figure(json, "signals-delivered", ".values | length"), 3);
	cr_assert_eq(figure(json, "signals-delivered", ".stddev_percent"), 0);
	cr_assert_eq(figure(json, "signals-delivered", ".mean"), 2000);
	/* the mean and %stddev of task-clock are those of its three values */
	double mean = figure(json, "task-clock", ".values | add / length");
	cr_assert_float_eq(figure(json, "task-clock", ".mean"), mean, 1e-5);
	double stddev = figure(json, "task-clock", "(.values | add / length) as $m | "
						   "((.values | map((. - $m) * (. - $m)) | add / length) | sqrt) / $m * 100");
	cr_assert_float_eq(figure(json, "task-clock", ".stddev_percent"), stddev, 1e-3);
}

/* The sum of a figure's -I lines and its total line, from the text output. */
static void interval_sum(const char *text, const char *name, double *sum, int *lines, double *total)
{
	*sum = 0;
	*lines = 0;
	*total = -1;
	char *copy = strdup(text);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		double t, v;
		char n1[64], n2[64];
		if (sscanf(line, "%lf %lf %63s %63s", &t, &v, n1, n2) >= 3 && strcmp(n1, name) == 0) {
			*sum += v;
			(*lines)++;
		} else if (sscanf(line, "%lf %63s", &v, n1) == 2 && strcmp(n1, name) == 0) {
			*total = v;
		}
	}
	free(copy);
}

Test(stat, interval_deltas_sum_to_the_totals, .timeout = 120)
{
	require_tracing();
	char *out;
	int st = stat_text(&out, "-I 100", W "cpu_burner 600 >/dev/null");
	cr_assert_eq(st, 0, "%s", out);
	double sum, total;
	int lines;
	interval_sum(out, "page-faults", &sum, &lines, &total);
	cr_assert_geq(lines, 3, "600 ms in 100 ms intervals (late wake-ups skip some): %s", out);
	cr_assert_gt(total, 0, "%s", out);
	cr_assert_eq(sum, total, "page-faults: intervals add up to %.0f, total %.0f\n%s", sum, total, out);
	interval_sum(out, "context-switches", &sum, &lines, &total);
	cr_assert_eq(sum, total, "context-switches: intervals add up to %.0f, total %.0f", sum, total);
	free(out);

	const char *json = stat_json("intervals.json", "-I 50", W "signal_storm 50000 >/dev/null");
	require_supported(json, "sigreturns");
	cr_assert_geq(jq_file(json, ".intervals | length"), 1);
	cr_assert_eq(jq_file(json, "[.intervals[].values.sigreturns] | add"), 50000);
	cr_assert_eq(jq_file(json, "if ([.intervals[].time_s] | . == sort) then 1 else 0 end"), 1,
		     "intervals in time order");
}

Test(stat, hardware_counters_are_not_supported_without_a_pmu)
{
	require_perf_events();
	const char *json = stat_json("hw.json", "", W "exit_with 0");
	if (figure(json, "cycles", "if .supported then 1 else 0 end") == 1) {
		/* a machine with a PMU: the derived figures are computed from the counts */
		double misses = figure(json, "cache-misses", ".mean"), instructions = figure(json, "instructions", ".mean");
		if (figure(json, "MPKI", "if .supported then 1 else 0 end") == 1)
			cr_assert_float_eq(figure(json, "MPKI", ".mean"), 1000 * misses / instructions, 1e-3);
		return;
	}
	const char *hardware[] = { "cycles", "instructions", "cache-references", "cache-misses" };
	for (size_t i = 0; i < sizeof(hardware) / sizeof(hardware[0]); i++) {
		cr_assert_eq(figure(json, hardware[i], ".reason | length > 0 | if . then 1 else 0 end"), 1,
			     "%s: no reason", hardware[i]);
		cr_assert_eq(figure(json, hardware[i], ".mean"), -1, "%s has no value", hardware[i]);
	}
	const char *derived[] = { "IPC", "MPKI", "cache-miss-rate", "cycles-between-cache-misses" };
	for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++) {
		cr_assert_eq(figure(json, derived[i], "if .supported then 1 else 0 end"), 0, "%s", derived[i]);
		cr_assert_eq(figure(json, derived[i], ".mean"), -1, "%s is not made up from missing inputs", derived[i]);
	}
	char *out;
	int st = run_cmd(&out, true, "%s stat -- " W "exit_with 0", sigprof_bin());
	cr_assert_eq(st, 0);
	cr_assert(strstr(out, "<not supported>      cycles"), "%s", out);
	cr_assert(strstr(out, "no hardware PMU"), "the reason is printed: %s", out);
	free(out);
}

Test(stat, bad_options_are_one_line_errors)
{
	const char *cases[] = { "stat", "stat -r 0 -- true", "stat -r abc -- true", "stat -I 5 -- true",
				"stat -I 100 -r 2 -- true", "stat -o /nonexistent/dir/file -- true" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err;
		int st = run_cmd(&err, true, "%s %s", sigprof_bin(), cases[i]);
		cr_assert_eq(st, 2, "'%s' exited %d: %s", cases[i], st, err);
		cr_assert_eq(count_lines(err), 1, "'%s': %s", cases[i], err);
		cr_assert(strncmp(err, "sigprof: stat: ", 15) == 0, "'%s': %s", cases[i], err);
		free(err);
	}
	char *err;
	cr_assert_eq(run_cmd(&err, true, "%s stat --no-such-option -- true", sigprof_bin()), 2, "%s", err);
	free(err);
}

Test(stat, missing_command_and_exit_status)
{
	char *out;
	int st = run_cmd(&out, true, "%s stat -- /nonexistent/command", sigprof_bin());
	cr_assert_eq(st, 127, "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
	st = run_cmd(&out, true, "%s stat -- /etc/passwd", sigprof_bin());
	cr_assert_eq(st, 126, "a file that is not executable: %s", out);
	free(out);
	require_perf_events();
	st = run_cmd(&out, true, "%s stat -- " W "exit_with 3", sigprof_bin());
	cr_assert_eq(st, 3, "the workload's exit status: %s", out);
	free(out);
	st = run_cmd(&out, true, "%s stat -r 2 -- " W "exit_with -15", sigprof_bin());
	cr_assert_eq(st, 128 + 15, "killed by SIGTERM: %s", out);
	cr_assert(strstr(out, "(2 runs"), "%s", out);
	free(out);
}

Test(stat, asan_build_counts_cleanly, .timeout = 120)
{
	require_tracing();
	if (access(SIGPROF_ASAN_BIN, X_OK) != 0)
		skip_environment("no ASan build at %s (make BUILD=... %s)", SIGPROF_ASAN_BIN, SIGPROF_ASAN_BIN);
	char *out;
	const char *file = test_path("asan.txt");
	int st = run_cmd(&out, true,
			 "ASAN_OPTIONS=detect_leaks=1 %s stat -r 2 --json -o %s -- " W "futex_wake_many 100 >/dev/null && "
			 "ASAN_OPTIONS=detect_leaks=1 %s stat -I 20 -o %s -- " W "signal_storm 20000 >/dev/null",
			 SIGPROF_ASAN_BIN, file, SIGPROF_ASAN_BIN, file);
	cr_assert_eq(st, 0, "ASan stat failed:\n%s", out);
	free(out);
}

Test(stat, user_events_replace_the_defaults)
{
	require_tracing();
	const long n = 3000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld >/dev/null", n);
	const char *json = stat_json("events.json", "-e signal:signal_deliver,task-clock,syscalls:sys_enter_rt_sigreturn:k",
				     cmd);
	cr_assert_eq(jq_file(json, ".figures | length"), 3, "only the events named");
	cr_assert_eq(figure(json, "signal:signal_deliver", ".mean"), n);
	cr_assert_eq(figure(json, "syscalls:sys_enter_rt_sigreturn:k", ".mean"), n);
	cr_assert_eq(jq_file(json, "[.derived[].name] | length"), 1, "CPUs-utilized only: its input was named");
	cr_assert_gt(figure(json, "CPUs-utilized", ".mean"), 0);
}

Test(stat, user_event_that_does_not_parse_runs_nothing)
{
	const char *marker = test_path("ran");
	const char *bad[] = { "no-such-event", "signal:no_such_tracepoint", "nosuchpmu/event=1/", "task-clock:q" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out;
		int st = run_cmd(&out, true, "%s stat -e task-clock,%s -- touch %s", sigprof_bin(), bad[i], marker);
		cr_assert_eq(st, 2, "-e %s exited %d: %s", bad[i], st, out);
		cr_assert_eq(count_lines(out), 1, "-e %s: %s", bad[i], out);
		cr_assert(strstr(out, bad[i]), "the message names %s: %s", bad[i], out);
		cr_assert_neq(access(marker, F_OK), 0, "-e %s: the workload ran", bad[i]);
		free(out);
	}
}

/* An empty item or an event named twice is refused, as perf refuses them, before anything runs (stat and record). */
Test(stat, empty_items_and_repeated_events_are_refused)
{
	const char *marker = test_path("ran-too");
	static const char *const lists[][2] = { { "stat", "task-clock," },	      { "stat", ",task-clock" },
						{ "stat", "task-clock,,page-faults" }, { "stat", "task-clock,task-clock" },
						{ "record -q -o /dev/null", "cpu,,signal" } };
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char *out;
		int st = run_cmd(&out, true, "%s %s -e '%s' -- touch %s", sigprof_bin(), lists[i][0], lists[i][1], marker);
		cr_assert_eq(st, 2, "%s -e %s exited %d: %s", lists[i][0], lists[i][1], st, out);
		cr_assert_eq(count_lines(out), 1, "%s", out);
		cr_assert(strstr(out, lists[i][1]) && (strstr(out, "an empty item") || strstr(out, "named twice")), "%s",
			  out);
		cr_assert_neq(access(marker, F_OK), 0, "-e %s: the workload ran", lists[i][1]);
		free(out);
	}
}

/* -o - is standard output, as record -o - (it wrote a file named "-") */
Test(stat, output_dash_is_standard_output)
{
	require_perf_events();
	char *out;
	int st = run_cmd(&out, false, "S=$(readlink -f '%s') && cd '%s' && \"$S\" stat --json -o - -e task-clock -- true "
				      "2>/dev/null | jq -r .runs", sigprof_bin(), test_dir());
	cr_assert_eq(st, 0);
	cr_assert_str_eq(out, "1\n", "the JSON is on standard output: %s", out);
	free(out);
	cr_assert_neq(access(test_path("-"), F_OK), 0, "a file named - was written");
}

/* The heading's command line and the report's escape control characters: an escape sequence never reaches the terminal. */
Test(stat, command_lines_with_control_characters_are_escaped)
{
	require_perf_events();
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s stat -e task-clock -- /bin/echo \"$(printf 'a\\033[31mred')\" 2>&1 >/dev/null",
			     sigprof_bin()), 0);
	cr_assert_null(strchr(out, '\033'), "an escape character reached the output: %s", out);
	cr_assert_not_null(strstr(out, "a\\x1b[31mred"), "%s", out);
	free(out);
	const char *data = test_path("escape.data");
	cr_assert_eq(run_cmd(&out, true, "%s record -q -e cpu -o '%s' -- /bin/echo \"$(printf 'a\\033[31mred')\" >/dev/null",
			     sigprof_bin(), data), 0, "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s report --no-pager -i '%s' | grep '^# command:'", sigprof_bin(), data), 0);
	cr_assert_null(strchr(out, '\033'), "an escape character reached the report: %s", out);
	cr_assert_not_null(strstr(out, "a\\x1b[31mred"), "%s", out);
	free(out);
}

Test(stat, user_event_that_cannot_open_is_not_supported)
{
	require_perf_events();
	const char *json = stat_json("cycles.json", "-e cycles,task-clock", W "exit_with 0");
	if (figure(json, "cycles", "if .supported then 1 else 0 end") == 1)
		skip_environment("cycles opens here (a hardware PMU)");
	cr_assert_eq(figure(json, "cycles", ".mean"), -1, "no value for what was not counted");
	cr_assert_eq(figure(json, "cycles", ".reason | length > 0 | if . then 1 else 0 end"), 1);
	cr_assert_gt(figure(json, "task-clock", ".mean"), 0, "the other events still count");
}

/*
 * A PMU that counts the whole package refuses exclude_hv (msr, power,
 * uncore): stat counts it as perf stat does (it said "not supported"), and
 * the time-stamp counter of a run of the workload ticks.
 */
Test(stat, a_pmu_that_refuses_exclusions_still_counts)
{
	require_perf_events();
	if (access("/sys/bus/event_source/devices/msr/events/tsc", F_OK) != 0)
		skip_environment("no msr PMU with a tsc event here: nothing refuses exclude_hv to try");
	const char *json = stat_json("msr.json", "-e msr/tsc/,task-clock", W "exit_with 0");
	cr_assert_eq(figure(json, "msr/tsc/", "if .supported then 1 else 0 end"), 1, "msr/tsc/ not counted: %s",
		     json);
	cr_assert_gt(figure(json, "msr/tsc/", ".mean"), 0);
}

Test(stat, interrupt_ends_the_runs_with_the_figures_so_far, .timeout = 60)
{
	require_perf_events();
	const char *file = test_path("interrupted.txt");
	char *out;
	/*
	 * The interrupt comes once run 2 has started: each run appends a line to
	 * a file, then becomes sleep (which the SIGINT passed on kills); waiting
	 * a fixed time instead put it in run 1 on a loaded machine.
	 */
	const char *started = test_path("runs_started");
	int st = run_cmd(&out, true, "%s stat -r 5 -e task-clock -o %s -- sh -c 'echo >> %s; exec sleep 2' & p=$!; "
				 "while [ \"$(wc -l < %s 2>/dev/null || echo 0)\" -lt 2 ]; do sleep 0.05; done; "
				 "kill -INT $p; wait $p", sigprof_bin(), file, started, started);
	cr_assert_eq(st, 128 + 2, "sleep killed by the SIGINT passed on to it: %s", out);
	free(out);
	run_cmd(&out, false, "cat %s", file);
	/* run 1 was whole; run 2, cut short by the interrupt, would pull the mean: it is left out */
	cr_assert(strstr(out, "interrupted in run 2 of 5, left out"), "%s", out);
	cr_assert(strstr(out, "task-clock"), "the runs so far are reported: %s", out);
	free(out);
	const char *json = test_path("interrupted.json");
	unlink(started);
	st = run_cmd(&out, true, "%s stat --json -r 5 -e task-clock -o %s -- sh -c 'echo >> %s; exec sleep 2' & p=$!; "
				 "while [ \"$(wc -l < %s 2>/dev/null || echo 0)\" -lt 2 ]; do sleep 0.05; done; "
				 "kill -INT $p; wait $p", sigprof_bin(), json, started, started);
	cr_assert_eq(st, 128 + 2, "%s", out);
	free(out);
	cr_assert_eq(jq_file(json, ".runs"), 1);
	cr_assert_eq(jq_file(json, ".interrupted_run"), 2);
	cr_assert_eq(jq_file(json, ".figures[0].values | length"), 1, "the cut-short run's count is not among the values");
}

/* An executable script at test_path(name) with the given body after its #! line. */
static const char *write_script(const char *name, const char *interpreter, const char *body)
{
	const char *path = test_path(name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	fprintf(f, "#!%s\n%s", interpreter, body);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, 0755), 0);
	return path;
}

/*
 * -r N with -o FILE: a run after the first that cannot be carried out (the
 * script removes itself, so the second exec fails) ends the series, and
 * the figures of the runs before it are written, not lost.
 */
Test(stat, a_failed_run_keeps_the_figures_of_the_runs_before_it)
{
	require_perf_events();
	const char *file = test_path("failed.txt");
	const char *formats[] = { "", "--json" };
	for (size_t i = 0; i < 2; i++) {
		const char *script = write_script("removes_itself", "/bin/sh", "rm -f \"$0\"\n");
		char *out;
		int st = run_cmd(&out, true, "echo previous > %s; %s stat %s -r 3 -e task-clock -o %s -- %s", file,
				 sigprof_bin(), formats[i], file, script);
		cr_assert_eq(st, 127, "the exec of run 2 failed: %s", out);
		cr_assert_eq(count_lines(out), 1, "one error line: %s", out);
		cr_assert(strstr(out, "run 2 of 3") && strstr(out, file), "says which run failed and where the figures are: %s",
			  out);
		free(out);
		if (i == 0) {
			run_cmd(&out, false, "cat %s", file);
			cr_assert(strstr(out, "(1 of 3 runs: run 2 failed)"), "%s", out);
			cr_assert(strstr(out, "task-clock"), "the figures of run 1: %s", out);
			free(out);
		} else {
			cr_assert_eq(jq_file(file, ".runs"), 1);
			cr_assert_eq(jq_file(file, ".failed_run"), 2);
			cr_assert_eq(jq_file(file, ".exit_status"), st, "the JSON's exit status is sigprof's");
			cr_assert_gt(jq_file(file, ".figures[] | select(.name==\"task-clock\") | .values[0]"), 0);
		}
	}
}

/* A first run that cannot be carried out leaves a previous -o FILE as it was, and creates none. */
Test(stat, a_failed_first_run_leaves_the_output_file_alone)
{
	require_perf_events();
	const char *script = write_script("bad_interpreter", "/nonexistent/interpreter", "");
	const char *file = test_path("kept.txt");
	char *out;
	int st = run_cmd(&out, true, "echo previous > %s; %s stat -r 3 -e task-clock -o %s -- %s", file, sigprof_bin(),
			 file, script);
	cr_assert_eq(st, 127, "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert(strstr(out, "left as it was"), "%s", out);
	free(out);
	run_cmd(&out, false, "cat %s", file);
	cr_assert_str_eq(out, "previous\n");
	free(out);
	const char *missing = test_path("never.txt");
	st = run_cmd(&out, true, "%s stat -e task-clock -o %s -- %s", sigprof_bin(), missing, script);
	cr_assert_eq(st, 127, "%s", out);
	free(out);
	cr_assert_neq(access(missing, F_OK), 0, "%s was created though nothing was written to it", missing);
}

/*
 * The workload's maximum resident set is its own: touch_memory prints its
 * peak as the kernel keeps it for its own address space (VmHWM, which
 * starts at its exec), and stat's and record's time.maximum_resident_set_size
 * must be that peak, not the pages of sigprof that a child forked from it
 * had before its exec (2832 KB against 1108 before: the kernel counts them).
 * 0 MB: a peak below sigprof's own; 16 MB: above it.  A margin of 256 KB for
 * what the workload touches after it reads VmHWM (its output, its exit).
 */
static void peaks_are_the_workloads(const char *name, const char *what, const char *figures, const char *output)
{
	char *out;
	cr_assert_eq(run_cmd(&out, false, "sed -n 's/.*VmHWM \\([0-9]*\\) kB/\\1/p' '%s'", output), 0);
	char *save, *line = strtok_r(out, "\n", &save);
	char *values;
	cr_assert_eq(run_cmd(&values, false, "%s", figures), 0);
	char *vsave, *value = strtok_r(values, "\n", &vsave);
	int n = 0;
	for (; line && value; line = strtok_r(NULL, "\n", &save), value = strtok_r(NULL, "\n", &vsave), n++) {
		double hwm = atof(line), maxrss = atof(value);
		cr_assert(maxrss >= hwm - 256 && maxrss <= hwm + 256,
			  "%s %s run %d: maximum_resident_set_size %.0f KB, the workload's own peak %.0f KB", what, name, n + 1,
			  maxrss, hwm);
	}
	cr_assert_gt(n, 0, "%s %s: no peak to compare", what, name);
	free(values);
	free(out);
}

Test(stat, the_maximum_resident_set_is_the_workloads_own, .timeout = 120)
{
	require_perf_events();
	const char *sizes[] = { "0", "16" };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char output[512], json[512], cmd[1200], data[512];
		snprintf(output, sizeof(output), "%s/touch-%s.txt", test_dir(), sizes[i]);
		snprintf(json, sizeof(json), "%s/touch-%s.json", test_dir(), sizes[i]);
		snprintf(data, sizeof(data), "%s/touch-%s.data", test_dir(), sizes[i]);
		char *out;
		int st = run_cmd(&out, true, "rm -f '%s'; %s stat -r 3 --json -o '%s' -- " W "touch_memory %s >> '%s'", output,
				 sigprof_bin(), json, sizes[i], output);
		cr_assert_eq(st, 0, "%s", out);
		free(out);
		snprintf(cmd, sizeof(cmd), "jq -r '.rusage[].maximum_resident_set_size' '%s'", json);
		peaks_are_the_workloads(sizes[i], "stat", cmd, output);
		st = run_cmd(&out, true, "rm -f '%s'; %s record -q -e cpu -o '%s' -- " W "touch_memory %s >> '%s'", output,
			     sigprof_bin(), data, sizes[i], output);
		cr_assert_eq(st, 0, "%s", out);
		free(out);
		snprintf(cmd, sizeof(cmd), "%s report --figures -i '%s' | awk '$1 == \"time.maximum_resident_set_size\" "
			 "{ print $2 }'", sigprof_bin(), data);
		peaks_are_the_workloads(sizes[i], "record", cmd, output);
	}
}
