/*
 * test_results.c: the workload's own result lines through record and stat
 * (results.h, results_capture.h).  The workload's output must reach
 * sigprof's standard output and error byte for byte as without sigprof; its
 * figures are kept: futex_wake_many N prints "woke N", so --metric
 * woke=REGEX must read N; perf bench futex hash prints its "Averaged N
 * operations/sec" line, which the built-in parser reads as LKP's
 * perf-bench-futex.ops/s (compared with the line itself, read by the test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

Test(results, record_relays_the_output_and_keeps_a_metric, .timeout = 120)
{
	require_perf_events();
	require_root();
	const char *data = test_path("woke.data");
	char *alone, *out, *figures;
	cr_assert_eq(run_cmd(&alone, false, W "futex_wake_many 1234"), 0);
	int st = run_cmd(&out, false, "%s record -q -o '%s' --metric 'woke=^woke ([0-9]+)' -- " W "futex_wake_many 1234",
			 sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_str_eq(out, alone, "the workload's output changed on its way through sigprof");
	st = run_cmd(&figures, true, "%s report --figures -i '%s' | grep '^woke\t'", sigprof_bin(), data);
	cr_assert_eq(st, 0, "no woke row: %s", figures);
	cr_assert(strncmp(figures, "woke\t1234\tresult\t", 17) == 0, "%s", figures);
	free(figures);
	st = run_cmd(&figures, true, "%s report --no-pager -i '%s' | grep '^# result:'", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", figures);
	cr_assert(strstr(figures, "woke 1234"), "%s", figures);
	free(figures);
	free(out);
	free(alone);
	/* --no-results: nothing read, the output still the workload's */
	st = run_cmd(&out, false, "%s record -q -o '%s' --no-results --metric 'woke=^woke ([0-9]+)' -- " W
			 "futex_wake_many 1234", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	st = run_cmd(&figures, true, "%s report --figures -i '%s' | grep -c '\tresult\t'", sigprof_bin(), data);
	cr_assert_str_eq(figures, "0\n");
	free(figures);
	/* a bad --metric is one error line */
	st = run_cmd(&out, true, "%s record -o '%s' --metric 'woke=no group' -- " W "futex_wake_many 1", sigprof_bin(),
		     data);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert(strstr(out, "--metric") && strstr(out, "group"), "%s", out);
	free(out);
}

Test(results, stat_keeps_perf_bench_futex_ops, .timeout = 120)
{
	require_perf_events();
	require_root();
	if (system("command -v perf >/dev/null 2>&1") != 0)
		cr_skip_test("no perf bench here");
	const char *json = test_path("hash.json"), *log = test_path("hash.txt");
	char *out;
	int st = run_cmd(&out, true, "%s stat --json -o '%s' -- perf bench futex hash -t 1 -r 1 > '%s' 2>&1",
			 sigprof_bin(), json, log);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	FILE *f = fopen(log, "r");
	cr_assert(f);
	char line[512];
	double averaged = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Averaged %lf operations/sec", &averaged) == 1)
			break;
	fclose(f);
	cr_assert_gt(averaged, 0, "perf bench printed no Averaged line");
	cr_assert_eq(jq_file(json, ".results[0][\"perf-bench-futex.ops/s\"]"), averaged);
}
