/*
 * test_figures.c: `sigprof report --figures`, the keyed rows every
 * collector lists through its analyzer (view.h), against ground truth and
 * against the JSON report of the same recording: the two are written by
 * different code from the same analysis, so they must agree.  Needs root
 * (tracepoints); skipped, not passed, without.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

/* The rows of `report --figures` of data (malloc'd text). */
static char *figures_of(const char *data)
{
	char *out;
	int st = run_cmd(&out, false, "%s report --figures -i '%s'", sigprof_bin(), data);
	cr_assert_eq(st, 0, "report --figures exited %d: %s", st, out);
	return out;
}

/* The value of key in rows, asserting that it is there once, with four tab-separated fields. */
static double figure(const char *rows, const char *key, const char *want_exact)
{
	size_t klen = strlen(key);
	double value = 0;
	int found = 0;
	for (const char *line = rows; *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if ((size_t)(end - line) > klen && strncmp(line, key, klen) == 0 && line[klen] == '\t') {
			char unit[32], exact[32];
			cr_assert_eq(sscanf(line + klen + 1, "%lf\t%31s\t%31s", &value, unit, exact), 3, "%.*s",
				     (int)(end - line), line);
			if (want_exact)
				cr_assert_str_eq(exact, want_exact, "%s", key);
			found++;
		}
		line = *end ? end + 1 : end;
	}
	cr_assert_eq(found, 1, "%s appears %d times in:\n%s", key, found, rows);
	return value;
}

Test(figures, signal_rows_are_the_counts_sent_and_agree_with_json, .timeout = 120)
{
	require_perf_events();
	require_root();
	const long n = 3000;
	const char *data = test_path("storm.data");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld >/dev/null", n);
	free(record_workload(data, "", cmd));
	const char *json = report_json_file(data, "");
	require_collector(json, "signal");
	char *rows = figures_of(data);
	cr_assert_eq(figure(rows, "signal.SIGUSR1.generated", "exact"), n);
	cr_assert_eq(figure(rows, "signal.SIGUSR1.delivered", "exact"), n);
	cr_assert_eq(figure(rows, "signal.SIGUSR1.sigreturns", "exact"), n);
	cr_assert_eq(figure(rows, "signal.SIGUSR1.not_delivered", "exact"), 0);
	cr_assert_eq(figure(rows, "signal.samples", "exact"), jq_file(json, "[.meta.collectors[] | "
									      "select(.name==\"signal\") | .samples] | first"));
	double p99_us = figure(rows, "signal.SIGUSR1.latency_us.p99", "exact");
	cr_assert_float_eq(p99_us * 1000.0, jq_file(json, ".signals[0].latency_ns.p99"), 1.0);
	/* each collector's path shares add up to 100% */
	double share = 0;
	static const char *const paths[] = { "sigreturn", "signal-deliver", "signal-generate", "futex-wait",
					     "futex-wake", "futex-requeue", "futex-other", "recorder", "other" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char key[64];
		snprintf(key, sizeof(key), "paths.signal.%s", paths[i]);
		share += figure(rows, key, "exact");
	}
	cr_assert_float_eq(share, 100.0, 1e-6);
	/* no key holds a blank (LKP splits its lines on them): sigprof's own frames stay out of the LKP keys */
	for (const char *line = rows; *line;) {
		size_t key = strcspn(line, "\t\n");
		cr_assert_eq(strcspn(line, " \t\n"), key, "a key with a blank: %.*s", (int)key, line);
		line += strcspn(line, "\n");
		line += *line == '\n';
	}
	free(rows);
}

Test(figures, futex_word_rows_agree_with_json, .timeout = 120)
{
	require_perf_events();
	require_root();
	const char *data = test_path("waiter.data");
	free(record_workload(data, "--futex=trace", W "futex_waiter 5 5 >/dev/null"));
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	char *rows = figures_of(data);
	cr_assert_eq(figure(rows, "futex.word.gate.calls", NULL),
		     jq_file(json, "[.futexes[] | select(.symbol==\"gate\") | .calls] | first"));
	cr_assert_eq(figure(rows, "futex.word.gate.waits", NULL),
		     jq_file(json, "[.futexes[] | select(.symbol==\"gate\") | .wait_ns.count] | first"));
	cr_assert_eq(figure(rows, "futex.word.gate.wait_ns.total", NULL),
		     jq_file(json, "[.futexes[] | select(.symbol==\"gate\") | .wait_ns.total] | first"));
	cr_assert_geq(figure(rows, "futex.op.WAKE.calls", NULL), 5, "the main thread opens the gate 5 times");
	free(rows);
}

/* Assert that no key of rows is listed twice (docs/figures.md: a key names one figure). */
static void assert_keys_once(const char *rows)
{
	char *sorted;
	char file[512];
	snprintf(file, sizeof(file), "%s", test_path("rows.txt"));
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs(rows, f);
	fclose(f);
	cr_assert_eq(run_cmd(&sorted, false, "cut -f1 '%s' | sort | uniq -d", file), 0);
	cr_assert_str_empty(sorted, "keys listed more than once:\n%s", sorted);
	free(sorted);
}

Test(figures, words_of_one_name_are_one_row_that_adds_them_up, .timeout = 120)
{
	require_perf_events();
	require_root();
	const long threads = 3, calls = 200;
	const char *data = test_path("stack_words.data");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "stack_words %ld %ld", threads, calls);
	char *said = record_workload(data, "--futex=trace", cmd);
	long made = -1;
	cr_assert_eq(sscanf(said, "calls %ld", &made), 1, "%s", said);
	cr_assert_eq(made, threads * calls, "%s", said);
	free(said);
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	/* the words the report names alike: one on each thread's stack, at one offset of its own mapping */
	char *symbol;
	cr_assert_eq(run_cmd(&symbol, false,
			     "jq -r '[.futexes[] | select(.ops.WAKE > 0 and (.symbol | startswith(\"[anon]\")))] | "
			     "group_by(.symbol) | map(select(length == %ld)) | .[0][0].symbol' '%s'",
			     threads, json),
		     0);
	symbol[strcspn(symbol, "\n")] = '\0';
	cr_assert(strncmp(symbol, "[anon]", 6) == 0, "no %ld words named alike in %s: %s", threads, json, symbol);
	char *rows = figures_of(data);
	assert_keys_once(rows);
	char key[256], filter[512];
	snprintf(key, sizeof(key), "futex.word.%s.calls", symbol);
	cr_assert_eq(figure(rows, key, "exact"), threads * calls, "the calls of the %ld words added up", threads);
	snprintf(key, sizeof(key), "futex.word.%s.wait_ns.max", symbol);
	snprintf(filter, sizeof(filter), "[.futexes[] | select(.symbol==\"%s\") | .wait_ns.max // 0] | max", symbol);
	cr_assert_eq(figure(rows, key, "exact"), jq_file(json, filter), "the largest wait of the words");
	free(symbol);
	free(rows);
}

/* The sum of the values of the rows whose key begins with prefix (-1 when none). */
static double figures_with_prefix(const char *rows, const char *prefix)
{
	double sum = -1;
	for (const char *line = rows; *line;) {
		double v;
		if (strncmp(line, prefix, strlen(prefix)) == 0 && sscanf(strchr(line, '\t'), "\t%lf", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v;
		line += strcspn(line, "\n");
		line += *line == '\n';
	}
	return sum;
}

/*
 * The rows of `report --figures` of a recording of cmd with options into test_path(name), after checking (skip
 * otherwise) that collector opened; *data (unless NULL) is its file.
 */
static char *recorded_figures(const char *name, const char *options, const char *cmd, const char *collector,
			      const char **data)
{
	require_perf_events();
	require_root();
	const char *file = test_path(name);
	free(record_workload(file, options, cmd));
	require_collector(report_json_file(file, ""), collector);
	if (data)
		*data = test_path(name);
	return figures_of(test_path(name));
}

/* LKP's own perf-sched.wait_and_delay.count.KEY beside sigprof's count.ms: K sleeps are K waits of the sleep's stack. */
Test(figures, lkp_wait_and_delay_count_is_the_sleeps, .timeout = 120)
{
	char *rows = recorded_figures("sleeper.data", "-e sched", W "sched_sleeper 10 5 >/dev/null", "sched", NULL);
	const int sleeps = 10;
	assert_keys_once(rows);
	cr_assert_eq(figures_with_prefix(rows, "perf-sched.wait_and_delay.count.do_nanosleep."), sleeps, "%s", rows);
	cr_assert_eq(figures_with_prefix(rows, "perf-sched.wait_and_delay.count.ms.do_nanosleep."), sleeps, "%s", rows);
	free(rows);
}

/* --percent-limit shapes what the text shows, not the figures: a warning line, and the rows as without it. */
Test(figures, percent_limit_leaves_the_figures_alone, .timeout = 120)
{
	const char *data;
	char *rows = recorded_figures("limit.data", "-e cpu,signal", W "signal_storm 3000 >/dev/null", "cpu", &data),
	     *limited, *warning;
	cr_assert_eq(run_cmd(&limited, false, "%s report --figures --percent-limit 10 -i '%s' 2>/dev/null", sigprof_bin(),
			     data),
		     0);
	cr_assert_str_eq(limited, rows, "the figures with --percent-limit 10 differ from those without");
	cr_assert_eq(run_cmd(&warning, false, "%s report --figures --percent-limit 10 -i '%s' 2>&1 >/dev/null",
			     sigprof_bin(), data),
		     0);
	cr_assert(strstr(warning, "--percent-limit") && strstr(warning, "not to --figures: ignored"), "%s", warning);
	cr_assert_eq(count_lines(warning), 1, "%s", warning);
	free(rows);
	free(limited);
	free(warning);
}

Test(figures, one_output_format_only)
{
	char *out;
	int st = run_cmd(&out, true, "%s report --figures --json -i /nonexistent", sigprof_bin());
	cr_assert_eq(st, 2, "%s", out);
	cr_assert_not_null(strstr(out, "--json and --figures are two output formats"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "one error line: %s", out);
	free(out);
}
