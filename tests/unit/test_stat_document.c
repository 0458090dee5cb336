/*
 * test_stat_document.c: a `sigprof stat --json` document read into LKP's keys
 * for `sigprof diff` (diff.h): per run, perf-stat.total/ps/overall and
 * time.*; perf-stat.i from the intervals of a one-run document; no row for
 * a figure that was not counted; one error for what is not a document.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/commands/diff.h"

struct got {
	char key[64][128];
	char unit[64][32];
	size_t run[64];
	bool exact[64];
	double value[64];
	size_t n;
};

static void collect(void *ctx, size_t run, const char *key, const char *unit, bool exact, double value)
{
	struct got *g = ctx;
	cr_assert_lt(g->n, 64);
	snprintf(g->key[g->n], sizeof(g->key[0]), "%s", key);
	snprintf(g->unit[g->n], sizeof(g->unit[0]), "%s", unit);
	g->run[g->n] = run;
	g->exact[g->n] = exact;
	g->value[g->n++] = value;
}

/* The index of key in run, or -1. */
static int find(const struct got *g, size_t run, const char *key)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->run[i] == run && strcmp(g->key[i], key) == 0)
			return (int)i;
	return -1;
}

static const char two_runs[] =
	"{ \"version\": 1, \"runs\": 2, \"figures\": ["
	" { \"name\": \"task-clock\", \"event\": \"task-clock\", \"unit\": \"ms\", \"supported\": true, \"values\": [40, 60] },"
	" { \"name\": \"signals-generated\", \"event\": \"signal:signal_generate\", \"unit\": \"\", \"supported\": true,"
	"   \"values\": [20000, 20000] },"
	" { \"name\": \"cycles\", \"event\": \"cycles\", \"unit\": \"\", \"supported\": false, \"reason\": \"no PMU\" } ],"
	" \"derived\": [ { \"name\": \"CPUs-utilized\", \"unit\": \"\", \"supported\": true, \"values\": [0.5, 0.6] } ],"
	" \"elapsed_s\": { \"mean\": 0.15, \"values\": [0.1, 0.2] },"
	" \"rusage\": [ { \"user_time\": 0.03, \"voluntary_context_switches\": 4, \"elapsed_time\": 0.1 },"
	"              { \"user_time\": 0.05, \"voluntary_context_switches\": 6, \"elapsed_time\": 0.2 } ] }";

Test(stat_document, each_run_under_lkps_keys)
{
	struct got g = { 0 };
	size_t runs = 0;
	char err[256] = "";
	cr_assert_eq(diff_stat_document(two_runs, 100, collect, &g, &runs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(runs, 2);
	int i = find(&g, 1, "perf-stat.total.task-clock");
	cr_assert_geq(i, 0);
	cr_assert_eq(g.value[i], 60);
	cr_assert_str_eq(g.unit[i], "ms");
	cr_assert_not(g.exact[i], "a timer is not an exact count");
	i = find(&g, 1, "perf-stat.ps.task-clock");
	cr_assert_geq(i, 0);
	cr_assert_float_eq(g.value[i], 60 / 0.2, 1e-9, "per second of the run's own elapsed time");
	i = find(&g, 0, "perf-stat.total.signals-generated");
	cr_assert_geq(i, 0);
	cr_assert(g.exact[i], "a tracepoint's count is exact");
	cr_assert_str_eq(g.unit[i], "count");
	i = find(&g, 1, "perf-stat.overall.CPUs-utilized");
	cr_assert_geq(i, 0);
	cr_assert_eq(g.value[i], 0.6);
	i = find(&g, 0, "time.elapsed_time");
	cr_assert_geq(i, 0);
	cr_assert_eq(g.value[i], 0.1);
	i = find(&g, 1, "time.voluntary_context_switches");
	cr_assert_geq(i, 0);
	cr_assert_eq(g.value[i], 6);
	i = find(&g, 0, "time.user_time");
	cr_assert_geq(i, 0);
	cr_assert_str_eq(g.unit[i], "s");
	cr_assert_eq(find(&g, 0, "perf-stat.total.cycles"), -1, "not counted: no row, never a 0");
	cr_assert_eq(find(&g, 0, "perf-stat.i.task-clock"), -1, "no intervals");
	size_t elapsed_rows = 0;
	for (size_t k = 0; k < g.n; k++)
		elapsed_rows += g.run[k] == 0 && strcmp(g.key[k], "time.elapsed_time") == 0;
	cr_assert_eq(elapsed_rows, 1, "rusage's elapsed_time is elapsed_s's, once");
}

Test(stat_document, intervals_give_the_mean_rate)
{
	/* 2 intervals: 10 in the first 0.5 s (20/s), 30 in the next 1.0 s (30/s): i. is the mean of the rates, 25/s */
	static const char doc[] =
		"{ \"version\": 1, \"runs\": 1, \"figures\": [ { \"name\": \"page-faults\", \"event\": \"page-faults\","
		" \"unit\": \"\", \"supported\": true, \"values\": [40] } ], \"elapsed_s\": { \"values\": [1.5] },"
		" \"intervals\": [ { \"time_s\": 0.5, \"values\": { \"page-faults\": 10 } },"
		"                  { \"time_s\": 1.5, \"values\": { \"page-faults\": 30 } } ] }";
	struct got g = { 0 };
	size_t runs = 0;
	char err[256] = "";
	cr_assert_eq(diff_stat_document(doc, 100, collect, &g, &runs, err, sizeof(err)), 0, "%s", err);
	int i = find(&g, 0, "perf-stat.i.page-faults");
	cr_assert_geq(i, 0);
	cr_assert_float_eq(g.value[i], 25.0, 1e-9);
	i = find(&g, 0, "perf-stat.ps.page-faults");
	cr_assert_float_eq(g.value[i], 40 / 1.5, 1e-9, "ps. is the sum over the run time");
}

Test(stat_document, what_is_not_a_document)
{
	struct got g = { 0 };
	size_t runs = 0;
	char err[256];
	cr_assert_eq(diff_stat_document("{ \"version\": 1, ", 100, collect, &g, &runs, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not a JSON document"), "%s", err);
	cr_assert_eq(diff_stat_document("{ \"figures\": [] }", 100, collect, &g, &runs, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not a sigprof stat --json document"), "%s", err);
	cr_assert_eq(diff_stat_document("[1, 2]", 100, collect, &g, &runs, err, sizeof(err)), -EINVAL);
	static const char no_runs[] =
		"{ \"version\": 1, \"runs\": 0, \"figures\": [], \"elapsed_s\": { \"values\": [] } }";
	cr_assert_eq(diff_stat_document(no_runs, 100, collect, &g, &runs, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "0 runs"), "%s", err);
	cr_assert_eq(diff_stat_document(two_runs, 1, collect, &g, &runs, err, sizeof(err)), -EINVAL, "more runs than allowed");
	cr_assert_eq(g.n, 0, "nothing handed on from a refused document");
}

/*
 * "runs" claims more than the values hold: the runs are those the values
 * give (the work follows the values present: 10000 claimed runs of 2000
 * figures took 4.7 s and 553 MB for 123 KB, now a scan of what is there).
 */
Test(stat_document, claimed_runs_beyond_the_values_do_not_exist)
{
	static const char doc[] = "{ \"version\": 1, \"runs\": 1000000, \"figures\": ["
				  " { \"name\": \"a\", \"event\": \"x:y\", \"unit\": \"\", \"values\": [1, 2, 3] },"
				  " { \"name\": \"b\", \"event\": \"x:y\", \"unit\": \"\", \"values\": [4] } ],"
				  " \"elapsed_s\": { \"values\": [0] } }";
	struct got g = { 0 };
	size_t runs = 0;
	char err[256] = "";
	cr_assert_eq(diff_stat_document(doc, 1000000, collect, &g, &runs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(runs, 3);
	cr_assert_eq(g.n, 5, "the elapsed time, a in 3 runs, b in one: %zu figures", g.n);
	cr_assert_eq(g.value[find(&g, 2, "perf-stat.total.a")], 3);
	cr_assert_lt(find(&g, 1, "perf-stat.total.b"), 0);
	static const char empty[] = "{ \"version\": 1, \"runs\": 5, \"figures\": [], \"elapsed_s\": { \"values\": [] } }";
	cr_assert_eq(diff_stat_document(empty, 100, collect, &g, &runs, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "no figure has a value"), "%s", err);
}
