/*
 * test_results.c: the workload's result lines (results.h) on the programs'
 * real output, kept in tests/fixtures/results/ (its README says where each
 * came from): stress-ng's two metrics tables, to stderr and to stdout, and
 * its older "info:" layout; perf bench futex and sched; hackbench.  The
 * expected values are read off the files by eye.  And --metric's checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/results.h"

/* Feed a fixture line by line; the parser is the caller's to free. */
static struct result_parser *parse_file(const char *name, struct result_parser *p)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/fixtures/results/%s", name);
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s (run from the repository root)", path);
	if (!p)
		p = result_parser_new();
	char line[4096];
	while (fgets(line, sizeof(line), f))
		result_parser_line(p, line, strlen(line));
	fclose(f);
	return p;
}

static const struct result_figure *find(const struct result_parser *p, const char *name)
{
	const struct result_figure *f;
	size_t n = result_parser_figures(p, &f);
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

static void expect(const struct result_parser *p, const char *name, double value, const char *unit)
{
	const struct result_figure *f = find(p, name);
	cr_assert(f, "no figure %s", name);
	cr_assert_float_eq(f->value, value, 1e-9 * (value > 1 ? value : 1), "%s = %g, expected %g", name, f->value,
			   value);
	cr_assert_str_eq(f->unit, unit, "%s", name);
}

static size_t count(const struct result_parser *p)
{
	const struct result_figure *f;
	return result_parser_figures(p, &f);
}

Test(results, stress_ng_metrics_brief)
{
	struct result_parser *p = parse_file("stress-ng-0.15-metrics-brief.txt", NULL);
	expect(p, "stress-ng.timer.ops", 7160, "ops");
	expect(p, "stress-ng.timer.ops_per_sec", 7099.42, "ops/s");
	cr_assert_eq(count(p), 2);
	result_parser_free(p);
	p = parse_file("stress-ng-0.15-metrics-brief-stdout.txt", NULL);
	cr_assert_eq(count(p), 2);
	cr_assert(find(p, "stress-ng.timer.ops_per_sec"));
	result_parser_free(p);
}

Test(results, stress_ng_metrics_with_two_stressors)
{
	/* --metrics adds "CPU used per instance (%)" and "RSS Max (KB)" columns */
	struct result_parser *p = parse_file("stress-ng-0.15-metrics.txt", NULL);
	expect(p, "stress-ng.timer.ops", 2082, "ops");
	expect(p, "stress-ng.timer.ops_per_sec", 1971.76, "ops/s");
	expect(p, "stress-ng.futex.ops", 1055, "ops");
	expect(p, "stress-ng.futex.ops_per_sec", 1037.92, "ops/s");
	cr_assert_eq(count(p), 4);
	result_parser_free(p);
}

Test(results, stress_ng_before_0_10_under_info)
{
	struct result_parser *p = parse_file("stress-ng-0.09-metrics-brief.txt", NULL);
	expect(p, "stress-ng.matrix.ops", 1563402, "ops");
	expect(p, "stress-ng.matrix.ops_per_sec", 2605.63, "ops/s");
	cr_assert_eq(count(p), 2);
	result_parser_free(p);
}

Test(results, perf_bench_futex)
{
	struct result_parser *p = parse_file("perf-bench-futex-hash.txt", NULL);
	const struct result_figure *f = find(p, "perf-bench-futex.ops/s");
	cr_assert(f);
	cr_assert_eq(count(p), 1, "the per-thread lines are no figure");
	/* the file's own "Averaged N operations/sec" */
	FILE *in = fopen("tests/fixtures/results/perf-bench-futex-hash.txt", "r");
	char line[512];
	double averaged = -1;
	while (in && fgets(line, sizeof(line), in))
		if (sscanf(line, "Averaged %lf operations/sec", &averaged) == 1)
			break;
	if (in)
		fclose(in);
	cr_assert_eq(f->value, averaged);
	result_parser_free(p);
	p = parse_file("perf-bench-futex-lock-pi.txt", NULL);
	expect(p, "perf-bench-futex.ops/s", 410, "ops/s");
	result_parser_free(p);
	p = parse_file("perf-bench-futex-wake.txt", NULL);
	expect(p, "perf-bench-futex.wakeup_ms", 0.2624, "ms"); /* the summary, not a [Run N] line */
	cr_assert_eq(count(p), 1);
	result_parser_free(p);
	p = parse_file("perf-bench-futex-requeue.txt", NULL);
	expect(p, "perf-bench-futex.requeue_ms", 0.0157, "ms");
	result_parser_free(p);
	p = parse_file("perf-bench-futex-wake-parallel.txt", NULL);
	expect(p, "perf-bench-futex.wakeup_latency_ms", 0.0193, "ms");
	result_parser_free(p);
}

Test(results, perf_bench_sched)
{
	struct result_parser *p = parse_file("perf-bench-sched-pipe.txt", NULL);
	expect(p, "perf-bench-sched-pipe.ops_per_sec", 15003, "ops/s");
	expect(p, "perf-bench-sched-pipe.usecs_per_op", 66.649450, "us/op");
	cr_assert_eq(count(p), 2, "pipe's Total time is no figure of its own");
	result_parser_free(p);
	p = parse_file("perf-bench-sched-messaging.txt", NULL);
	expect(p, "perf-bench-sched-messaging.total_time_s", 3.697, "s");
	cr_assert_eq(count(p), 1);
	result_parser_free(p);
}

Test(results, hackbench)
{
	/* 400 tasks x 100 messages x 100 bytes = 4000000 bytes, >> 10 = 3906 KB, in 0.153 s */
	struct result_parser *p = parse_file("hackbench-rt-tests.txt", NULL);
	expect(p, "hackbench.throughput", 3906 / 0.153, "KB/s");
	expect(p, "hackbench.time_s", 0.153, "s");
	result_parser_free(p);
}

Test(results, unrelated_output_gives_nothing)
{
	struct result_parser *p = result_parser_new();
	static const char *const lines[] = {
		"signal_spin: 2000 signals, 1000 spins each", "Time: 0.5", "stress-ng: info:  [1] timer 1 2 3 4 5 6 7",
		"15003 ops/sec", "Total time: 3.1 [sec]",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		result_parser_line(p, lines[i], strlen(lines[i]));
	cr_assert_eq(count(p), 0, "a line out of its program's context is no figure");
	result_parser_free(p);
}

Test(results, user_metric)
{
	struct result_parser *p = result_parser_new();
	char err[256];
	cr_assert_eq(result_parser_add_metric(p, "lock_bucket.calls=^calls ([0-9]+) eagain", err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(result_parser_add_metric(p, "rate=rate: ([0-9.e+-]+)/s", err, sizeof(err)), 0, "%s", err);
	static const char *const lines[] = { "calls 4000 eagain 3990", "rate: 1.5e+06/s", "rate: 2.5e+06/s",
					     "rate: fast/s" };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		result_parser_line(p, lines[i], strlen(lines[i]));
	expect(p, "lock_bucket.calls", 4000, "");
	expect(p, "rate", 2.5e6, ""); /* the last line that matched with a number */
	result_parser_free(p);
}

Test(results, user_metric_errors)
{
	struct result_parser *p = result_parser_new();
	char err[256];
	static const char *const bad[] = { "no-equals", "=x([0-9]+)", "a b=([0-9]+)", "x=no group", "x=([0-9]+) ([0-9]+)",
					   "x=([0-9]+" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(result_parser_add_metric(p, bad[i], err, sizeof(err)), -EINVAL, "%s accepted", bad[i]);
		cr_assert(err[0], "%s: no reason", bad[i]);
	}
	result_parser_free(p);
}

Test(results, builtin_names)
{
	cr_assert(result_builtin_name("stress-ng.timer.ops_per_sec"));
	cr_assert(result_builtin_name("perf-bench-futex.ops/s"));
	cr_assert(!result_builtin_name("signal.SIGUSR1.generated"));
}
