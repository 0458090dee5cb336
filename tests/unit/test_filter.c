/*
 * test_filter.c: the report filters (filter.h): parsing each option, the
 * one-line errors, matching tasks and DSOs, the --time window and the
 * header line.  The loader's use of them is tested end to end in
 * tests/integration/test_targets.c.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/model/filter.h"

static char err[256];

Test(filter, pid_and_tid_lists_add_up)
{
	struct profile_filter f = { 0 };
	cr_assert_eq(filter_add_pids(&f, "12,34", false, err, sizeof(err)), 0);
	cr_assert_eq(filter_add_pids(&f, "56", false, err, sizeof(err)), 0);
	cr_assert_eq(filter_add_pids(&f, "7", true, err, sizeof(err)), 0);
	cr_assert_eq(f.npids, 3);
	cr_assert_eq(f.pids[2], 56);
	cr_assert_eq(f.ntids, 1);
	cr_assert(filter_task(&f, 34, 7, NULL, NULL));
	cr_assert_not(filter_task(&f, 34, 8, NULL, NULL), "the tid is not listed");
	cr_assert_not(filter_task(&f, 35, 7, NULL, NULL), "the pid is not listed");
	cr_assert(filter_drops(&f));
	filter_free(&f);
}

Test(filter, bad_lists_are_one_line_naming_the_item)
{
	struct profile_filter f = { 0 };
	cr_assert_eq(filter_add_pids(&f, "12,x3", false, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--pid 12,x3") && strstr(err, "x3 is not a process id"), "%s", err);
	cr_assert_eq(filter_add_pids(&f, "1,,2", true, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--tid 1,,2"), "%s", err);
	cr_assert_eq(filter_add_pids(&f, "99999999999", false, err, sizeof(err)), -EINVAL);
	cr_assert_eq(filter_add_pids(&f, "1,", false, err, sizeof(err)), -EINVAL);
	cr_assert_eq(filter_add_names(&f, "a,", false, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--comm a,: an empty name"), "%s", err);
	cr_assert_null(strchr(err, '\n'));
	filter_free(&f);
}

Test(filter, comm_matches_the_whole_name)
{
	struct profile_filter f = { 0 };
	cr_assert_eq(filter_add_names(&f, "sig_attach,bash", false, err, sizeof(err)), 0);
	cr_assert(filter_task(&f, 1, 1, "bash", "bash"));
	cr_assert_not(filter_task(&f, 1, 1, "bas", "bas"));
	cr_assert_not(filter_task(&f, 1, 1, NULL, NULL), "a task of unknown name is not one of them");
	/* a thread's own name (pthread_setname_np) selects it as its process's does, as perf's --comms */
	cr_assert(filter_task(&f, 1, 2, "app", "bash"));
	cr_assert(filter_task(&f, 1, 2, "bash", "worker"));
	cr_assert_not(filter_task(&f, 1, 2, "app", "worker"));
	filter_free(&f);
}

Test(filter, dso_by_file_name_path_or_kernel)
{
	struct profile_filter f = { 0 };
	cr_assert(filter_dso(&f, "/anything"), "no --dso: everything passes");
	cr_assert_eq(filter_add_names(&f, "libc.so.6,/opt/app/bin/app,[kernel]", true, err, sizeof(err)), 0);
	cr_assert(filter_dso(&f, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	cr_assert(filter_dso(&f, "/opt/app/bin/app"));
	cr_assert_not(filter_dso(&f, "/other/bin/app"), "a path names that file only");
	cr_assert(filter_dso(&f, "[kernel.kallsyms]"));
	cr_assert(filter_dso(&f, "[kernel]"));
	cr_assert_not(filter_dso(&f, "/usr/lib/libc.so.7"));
	cr_assert_not(filter_dso(&f, NULL));
	filter_free(&f);
}

/*
 * A time of the recording's clock, as script and the report's slowest
 * lines print it, is read as such: the same --time in report, script and
 * diff; an END there includes its last digit whole.
 */
Test(filter, time_of_the_recordings_clock)
{
	struct profile_filter f = { 0 };
	uint64_t start, end;
	const uint64_t first = 1077000000000ull, last = 1079300000000ull; /* 2.3 s, 1077 s after boot */
	cr_assert_eq(filter_set_time(&f, "1077.711787,1077.717801", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, 1077711787000ull);
	cr_assert_eq(end, 1077717802000ull, "the end's last microsecond is inside the half-open window");
	cr_assert(filter_time_is_clock(1077.5, first, last));
	cr_assert_not(filter_time_is_clock(1.5, first, last), "an offset inside the span");
	/* an offset, the clock's time and a percentage mix */
	cr_assert_eq(filter_set_time(&f, "1,1078.5", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, first + 1000000000ull);
	cr_assert_eq(end, 1078600000000ull, "1078.5 counts its last digit, a tenth of a second, whole");
	/* a recording longer than the uptime at its start: a value inside its span stays an offset */
	cr_assert_not(filter_time_is_clock(3, 2000000000ull, 9000000000ull));
	filter_free(&f);
}

Test(filter, time_in_seconds_and_percentages)
{
	struct profile_filter f = { 0 };
	uint64_t start, end;
	const uint64_t first = 1000000000, last = 5000000000; /* a 4 s recording */
	cr_assert_eq(filter_set_time(&f, "1.5,3", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, first + 1500000000);
	cr_assert_eq(end, first + 3000000000);
	cr_assert_eq(filter_set_time(&f, "25%,50%", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, first + 1000000000);
	cr_assert_eq(end, first + 2000000000);
	/* either side empty; an END at or past the last record keeps it (the window is half-open) */
	cr_assert_eq(filter_set_time(&f, "50%,", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, first + 2000000000);
	cr_assert_eq(end, UINT64_MAX);
	cr_assert_eq(filter_set_time(&f, ",100%", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, first);
	cr_assert_eq(end, UINT64_MAX, "100%% keeps the last record");
	cr_assert_eq(filter_set_time(&f, "1,9", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(end, UINT64_MAX);
	/* seconds and percentages mixed */
	cr_assert_eq(filter_set_time(&f, "1,75%", err, sizeof(err)), 0);
	filter_window(&f, first, last, &start, &end);
	cr_assert_eq(start, first + 1000000000);
	cr_assert_eq(end, first + 3000000000);
	filter_free(&f);
}

Test(filter, bad_times_are_refused)
{
	const char *bad[] = { "", "1", ",", "x,2", "1,y", "3,2", "50%,10%", "-1,2", "1,101%", "1%%,2", "nan,1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct profile_filter f = { 0 };
		cr_assert_eq(filter_set_time(&f, bad[i], err, sizeof(err)), -EINVAL, "--time '%s' accepted", bad[i]);
		cr_assert(strstr(err, "--time ") && strstr(err, "START,END"), "%s", err);
		cr_assert_not(f.has_time);
	}
}

Test(filter, percent_limit)
{
	struct profile_filter f = { 0 };
	cr_assert_eq(filter_set_percent_limit(&f, "2.5", err, sizeof(err)), 0);
	cr_assert_eq(f.percent_limit, 2.5);
	cr_assert_eq(filter_set_percent_limit(&f, "5%", err, sizeof(err)), 0);
	cr_assert_eq(f.percent_limit, 5);
	cr_assert_not(filter_drops(&f), "--percent-limit drops no sample");
	cr_assert_eq(filter_set_percent_limit(&f, "101", err, sizeof(err)), -EINVAL);
	cr_assert_eq(filter_set_percent_limit(&f, "abc", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--percent-limit abc"), "%s", err);
}

Test(filter, header_names_every_filter)
{
	struct profile_filter f = { 0 };
	char line[256];
	filter_describe(&f, line, sizeof(line));
	cr_assert_str_eq(line, "");
	filter_add_pids(&f, "12,34", false, err, sizeof(err));
	filter_add_names(&f, "app", false, err, sizeof(err));
	filter_add_names(&f, "libc.so.6", true, err, sizeof(err));
	filter_set_time(&f, ",50%", err, sizeof(err));
	filter_set_percent_limit(&f, "1", err, sizeof(err));
	filter_describe(&f, line, sizeof(line));
	cr_assert_str_eq(line, "--pid 12,34 --comm app --dso libc.so.6 --time ,50% --percent-limit 1");
	filter_free(&f);
}
