/*
 * test_recorder.c: the recorder's own scheduling (--realtime,
 * recorder_priority.h).  stress-ng --mutex runs its lockers SCHED_FIFO as
 * root, at priorities up to 79: a recorder at the normal priority got the
 * CPU too late and lost 80-97% of the records here (and perf record lost
 * 87% on sched_switch alone), one at the default priority 90 lost 0-1%.
 * The workload must keep its own policy.  Needs root and tracepoints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

Test(recorder, a_real_time_workload_does_not_starve_the_recorder, .timeout = 120)
{
	require_tracing();
	if (system("command -v stress-ng >/dev/null 2>&1") != 0)
		skip_environment("stress-ng is not installed (apt-get install stress-ng)");
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("rt-mutex.data"));
	char *out = record_workload(data, "", "stress-ng --mutex 2 -t 2 -q");
	free(out);
	const char *json = report_json_file(data, "");
	double switches = jq_file(json, "[.sched.stacks[]?.count] | add // 0");
	double samples = jq_file(json, ".meta.samples");
	cr_assert_gt(samples, 10000, "stress-ng --mutex made %.0f records in 2 s (sched stacks %.0f)", samples,
		     switches);
	/*
	 * 0-1% measured: when the spinning lockers use up a CPU's real-time budget, the recorder waits too (58.5% once
	 * in a clean-clone CI-like run of 2026-12-07, 0-2.4% in 14 runs alone): a loss that does not repeat was the
	 * machine's, one that does is the recorder's.
	 */
	double lost = jq_file(json, ".meta.lost_percent");
	if (lost >= 5) {
		fprintf(stderr, "recorder: %.2f%% of the records lost; recording once more\n", lost);
		free(record_workload(data, "", "stress-ng --mutex 2 -t 2 -q"));
		json = report_json_file(data, "");
		lost = jq_file(json, ".meta.lost_percent");
	}
	cr_assert_lt(lost, 5, "%.2f%% of the records lost with the recorder at SCHED_FIFO 90, twice", lost);
}

Test(recorder, the_workload_keeps_its_own_scheduling_policy, .timeout = 60)
{
	require_tracing();
	if (system("command -v chrt >/dev/null 2>&1") != 0)
		skip_environment("chrt is not installed (util-linux)");
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("rt-policy.data"));
	char *out = record_workload(data, "-e sched", "sh -c 'chrt -p $$'");
	cr_assert(strstr(out, "SCHED_OTHER"), "the workload's policy under record: %s", out);
	free(out);
	/* an explicit --realtime 0 records as before */
	out = record_workload(data, "-e sched --realtime 0", "sh -c 'chrt -p $$'");
	cr_assert(strstr(out, "SCHED_OTHER"), "the workload's policy under record --realtime 0: %s", out);
	free(out);
	char *err;
	int st = run_cmd(&err, true, "%s record -q --realtime 100 -o %s -- true", sigprof_bin(), data);
	cr_assert_neq(st, 0, "--realtime 100 is refused");
	cr_assert(strstr(err, "--realtime"), "the error names the option: %s", err);
	free(err);
}
