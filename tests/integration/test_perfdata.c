/*
 * test_perfdata.c: sigprof's reports of perf.data files against perf's own
 * reports of the same files (docs/perfdata.md).
 *
 * Recordings made here with perf (tracepoints with a known count, a cpu
 * workload with callchains, perf sched record) and the real-hardware
 * fixtures of tests/fixtures/perfdata/ are read by both tools; the samples
 * per event (perf script), the top symbol's share (perf report --stdio) and
 * the workload's own ground truth (a program that sends N signals shows N)
 * must agree.  Needs perf and root; skipped, with the reason, without.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static void require_perf_tool(void)
{
	require_perf_events();
	require_root();
	char *out;
	if (run_cmd(&out, true, "perf --version") != 0)
		cr_skip_test("perf is not installed here: %s", out);
	free(out);
}

/* Record with perf; the command's output on failure. */
static void perf_record(const char *data, const char *how, const char *cmd)
{
	char *out;
	int st = run_cmd(&out, true, "perf %s -o '%s' -- %s", how, data, cmd);
	if (st != 0 && strstr(out, "not supported"))
		cr_skip_test("perf %s cannot record here: %s", how, out);
	cr_assert_eq(st, 0, "perf %s -- %s exited %d: %s", how, cmd, st, out);
	free(out);
}

/* "NAME COUNT" lines, sorted: the samples per event as perf script counts them; NULL when perf cannot read it. */
static char *perf_counts(const char *data)
{
	char *out;
	int st = run_cmd(&out, false,
			 "perf script -i '%s' -F event > '%s.events' 2>/dev/null && "
			 "awk '{ sub(/:$/, \"\", $1); n[$1]++ } END { for (e in n) print e, n[e] }' '%s.events' | LC_ALL=C sort",
			 data, data, data);
	if (st != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* The same lines from sigprof's JSON report: every event with samples. */
static char *sigprof_counts(const char *data)
{
	char *out;
	const char *json = report_json_file(data, "");
	int st = run_cmd(&out, false,
			 "jq -r '.meta.collectors[].events[] | select(.samples > 0) | \"\\(.name) \\(.samples)\"' '%s' | "
			 "LC_ALL=C sort",
			 json);
	cr_assert_eq(st, 0, "sigprof report -i %s --json failed: %s", data, out);
	return out;
}

static void assert_counts_match(const char *data)
{
	char *perf = perf_counts(data);
	cr_assert(perf, "perf script cannot read %s", data);
	char *ours = sigprof_counts(data);
	cr_assert_str_eq(ours, perf, "samples per event of %s: sigprof\n%s\nperf script\n%s", data, ours, perf);
	free(ours);
	free(perf);
}

Test(perfdata, perf_signal_recording_shows_every_signal_sent, .timeout = 120)
{
	require_perf_tool();
	const long n = 2000;
	const char *data = test_path("perf-signal.data");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld", n);
	perf_record(data, "record -q -e 'signal:*' -e syscalls:sys_enter_rt_sigreturn -e syscalls:sys_exit_rt_sigreturn",
		    cmd);
	const char *json = report_json_file(data, "");
	/*
	 * The workload's N, as the file holds it: perf script's own count of each event's records.  On this kernel
	 * perf.data has, about once in six runs, one tracepoint record twice (the same time, the same fields: two
	 * signal_generate of one kill(), 2001 against 2000 deliveries); sigprof must show what perf shows.
	 */
	static const struct {
		const char *field, *records;
	} counts[] = { { "generated", "signal:signal_generate: sig=10 " },
		       { "delivered", "signal:signal_deliver: sig=10 " },
		       { "sigreturns", "syscalls:sys_enter_rt_sigreturn:" } };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		char filter[160], *out;
		cr_assert_eq(run_cmd(&out, false, "perf script -i '%s' -F event,trace 2>/dev/null | grep -c -F '%s'", data,
				     counts[i].records),
			     0);
		double in_file = strtod(out, NULL);
		free(out);
		cr_assert(in_file >= n && in_file <= n + 2, "perf script counts %.0f %s records of %ld signals", in_file,
			  counts[i].records, n);
		snprintf(filter, sizeof(filter), "[.signals[] | select(.name==\"SIGUSR1\") | .%s] | first", counts[i].field);
		cr_assert_eq(jq_file(json, filter), in_file, "SIGUSR1 %s is %.0f, perf script counts %.0f (%ld sent)",
			     counts[i].field, jq_file(json, filter), in_file, n);
	}
	cr_assert_eq(jq_file(json, ".meta.lost"), 0);
	cr_assert_eq(jq_file(json, ".meta.exit_status == null | if . then 1 else 0 end"), 1,
		     "a perf.data holds no exit status");
	assert_counts_match(data);
}

Test(perfdata, perf_cpu_recording_has_perfs_samples_and_top_symbol_share, .timeout = 120)
{
	require_perf_tool();
	const char *data = test_path("perf-cpu.data");
	perf_record(data, "record -q -g -e cpu-clock -c 250000", W "cpu_burner 1500");
	assert_counts_match(data);
	/* perf's top symbol and its share of the samples, by self */
	char *line;
	int st = run_cmd(&line, false,
			 "perf report -i '%s' --stdio --no-children --sort sym 2>/dev/null | grep -m1 '%%' | "
			 "awk '{ sub(/%%/, \"\", $1); print $1, $NF }'",
			 data);
	cr_assert_eq(st, 0);
	double perf_share = 0;
	char perf_sym[128] = "";
	cr_assert_eq(sscanf(line, "%lf %127s", &perf_share, perf_sym), 2, "perf report's top line: '%s'", line);
	free(line);
	cr_assert_str_eq(perf_sym, "burn_cpu", "perf's top symbol");
	const char *json = report_json_file(data, "");
	double self = jq_file(json, "[.functions[] | select(.collector==\"cpu\" and .sym==\"burn_cpu\") | .self] | first");
	double samples = jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples");
	double share = 100.0 * self / samples;
	/* the same samples, each at its ip: the shares agree to perf's two decimals */
	cr_assert(share > perf_share - 0.01 && share < perf_share + 0.01, "burn_cpu: sigprof %.2f%%, perf %.2f%%", share,
		  perf_share);
}

Test(perfdata, perf_sched_recording_has_perfs_samples, .timeout = 180)
{
	require_perf_tool();
	const char *data = test_path("perf-sched.data");
	perf_record(data, "sched record -q", W "sched_pingpong 2000");
	/* system-wide: every event's samples, whoever's, against perf script's count of all of them */
	char *perf = perf_counts(data);
	cr_assert(perf, "perf script cannot read %s", data);
	char *out;
	cr_assert_eq(run_cmd(&out, false, "echo \"%s\" | awk '{ s += $2 } END { print s }'", perf), 0);
	double perf_total = atof(out);
	free(out);
	free(perf);
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, ".meta.samples"), perf_total, "sigprof decoded %.0f samples, perf script %.0f",
		     jq_file(json, ".meta.samples"), perf_total);
	cr_assert_eq(jq_file(json, ".meta.collectors[] | select(.name==\"sched\") | .status==\"ok\" | if . then 1 else 0 end"),
		     1);
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"sched\") | .samples"), 0,
		     "no sched sample of the workload");
}

/*
 * The scheduler waits of perf's forked command against perf sched
 * timehist, thread by thread.  Both measure a wait from a task's
 * switch-out to its next switch-in; timehist prints it on the row of the
 * switch-out that ends the run after it, so a thread's first row has no
 * wait and the run its exit ends has no row (its EXIT record comes first),
 * and it prints each in whole microseconds, cut (docs/perfdata.md).  So,
 * per thread: sigprof's wait time is timehist's, within 1 us per row, plus
 * at most that one last wait (bounded by the longest wait); the waits
 * count as timehist's rows less the first, within one.  A switch-in the
 * file lacks (sigprof's lost_switch_in) timehist ends at the CPU's previous
 * switch: those waits are sigprof's to leave out, so they widen the bound.
 */
Test(perfdata, perf_sched_waits_per_thread_are_timehists, .timeout = 240)
{
	require_perf_tool();
	const char *data = test_path("perf-sched-waits.data");
	perf_record(data, "sched record -q", W "sched_pingpong 2000");
	const char *json = report_json_file(data, "");
	double pid = jq_file(json, ".meta.workload_pid // 0");
	cr_assert_gt(pid, 0, "no workload named in a perf.data of perf's forked command");
	double waits = jq_file(json, ".sched.total.wait_time.count");
	double lost_switch_in = jq_file(json, ".sched.total.lost_switch_in");
	double longest_ns = jq_file(json, ".sched.total.wait_time.max_ms") * 1e6;
	/* "TID ROWS WAIT_NS" of the workload's threads, from timehist's rows ("name[tid/pid]" or "name[pid]") */
	char *th;
	int st = run_cmd(&th, false,
			 "perf sched timehist -i '%s' 2>/dev/null | awk -v pid=%.0f '"
			 "match($3, /\\[[0-9]+(\\/[0-9]+)?\\]$/) { split(substr($3, RSTART + 1, RLENGTH - 2), id, \"/\");"
			 " p = (2 in id) ? id[2] : id[1]; if (p != pid) next; rows[id[1]]++; w[id[1]] += $4 * 1e6 }"
			 " END { for (t in rows) printf \"%%s %%d %%.0f\\n\", t, rows[t], w[t] }' | sort -n",
			 data, pid);
	cr_assert_eq(st, 0, "perf sched timehist: %s", th);
	/* "TID WAIT_NS" from sigprof's wait weights per thread */
	char *ours;
	st = run_cmd(&ours, false,
		     "'%s' report -i '%s' --folded --collector sched --folded-root tid --weight ns | "
		     "awk '{ split($1, a, \";\"); n = split(a[1], b, \"/\"); w[b[n]] += $NF } END { for (t in w) print t, w[t] }'",
		     sigprof_bin(), data);
	cr_assert_eq(st, 0, "sigprof report --folded: %s", ours);
	int threads = 0;
	double rows_total = 0;
	for (char *line = strtok(th, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned tid;
		double rows, th_ns, our_ns = 0;
		cr_assert_eq(sscanf(line, "%u %lf %lf", &tid, &rows, &th_ns), 3, "timehist line '%s'", line);
		char key[32];
		snprintf(key, sizeof(key), "\n%u ", tid);
		char with_nl[strlen(ours) + 2];
		snprintf(with_nl, sizeof(with_nl), "\n%s", ours);
		const char *at = strstr(with_nl, key);
		if (at)
			our_ns = atof(at + strlen(key));
		double cut = rows * 1000;
		cr_assert(our_ns >= th_ns - cut || lost_switch_in > 0,
			  "thread %u: sigprof waited %.0f ns, timehist %.0f ns over %.0f rows", tid, our_ns, th_ns, rows);
		cr_assert(our_ns <= th_ns + cut + longest_ns,
			  "thread %u: sigprof waited %.0f ns, timehist %.0f ns over %.0f rows (longest wait %.0f ns)", tid,
			  our_ns, th_ns, rows, longest_ns);
		threads++;
		rows_total += rows;
	}
	cr_assert_eq(threads, 2, "timehist shows %d threads of sched_pingpong, not its 2:\n%s", threads, th);
	/* each thread's first row has no wait; an exiting thread's last wait has no row */
	double expected = rows_total - threads;
	cr_assert(waits + lost_switch_in >= expected - threads && waits + lost_switch_in <= expected + threads,
		  "sigprof counted %.0f waits (+%.0f lost switch-ins), timehist %.0f rows of %d threads", waits,
		  lost_switch_in, rows_total, threads);
	free(th);
	free(ours);
}

/* The real-hardware fixtures: the samples per event agree wherever this machine's perf reads the file. */
Test(perfdata, fixtures_have_perfs_samples_per_event, .timeout = 180)
{
	require_perf_tool();
	static const char *const files[] = { "mem-loads-4.4.data", "c2c-record-5.4.data", "llc-3.2.data",
					     "arm64-6.12.data", "zstd-pipe-6.5.data", "pipe-6.12.data",
					     "uprobe-tracing-4.9.data", "lbr-5.4.data", "hybrid-5.15.data",
					     "kallsyms-tracing-5.18.data" };
	int compared = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		/* a copy in the test's directory: the outputs named after it go there, not into the tree */
		char path[512], *out;
		snprintf(path, sizeof(path), "%s", test_path(files[i]));
		cr_assert_eq(run_cmd(&out, true, "cp 'tests/fixtures/perfdata/%s' '%s'", files[i], path), 0, "%s", out);
		free(out);
		char *perf = perf_counts(path);
		if (!perf) {
			cr_log_info("%s: this perf cannot read it (newer than it); tests/unit/test_perfdata.c checks it",
				    files[i]);
			continue;
		}
		char *ours = sigprof_counts(path);
		cr_assert_str_eq(ours, perf, "%s: sigprof\n%s\nperf script\n%s", files[i], ours, perf);
		free(ours);
		free(perf);
		compared++;
	}
	if (!compared)
		cr_skip_test("this perf reads none of the fixtures");
}

/* The cache collector's misses: the periods of the miss samples, perf report's "Event count" of the event. */
Test(perfdata, cache_misses_are_perfs_event_count, .timeout = 60)
{
	require_perf_tool();
	const char *data = test_path("llc-3.2.data");
	char *out;
	cr_assert_eq(run_cmd(&out, true, "cp tests/fixtures/perfdata/llc-3.2.data '%s'", data), 0, "%s", out);
	free(out);
	if (run_cmd(&out, false,
		    "perf report -i '%s' --stdio 2>/dev/null | awk '/^# Event count/ { print $NF; exit }'", data) != 0 ||
	    !out[0])
		cr_skip_test("this perf cannot read %s", data);
	double perf_count = atof(out);
	free(out);
	const char *json = report_json_file(data, "");
	double misses = jq_file(json, "[.paths[] | .cache_misses // 0] | add");
	cr_assert_eq(misses, perf_count, "sigprof's LLC-loads-misses %.0f, perf's event count %.0f", misses, perf_count);
}

/* diff --input-format: a perf.data on both sides by magic or by name; refused with one line as sigprof's. */
Test(perfdata, diff_reads_perf_data_by_the_format_named, .timeout = 60)
{
	const char *data = test_path("mem-loads-4.4.data");
	char *out;
	cr_assert_eq(run_cmd(&out, true, "cp tests/fixtures/perfdata/mem-loads-4.4.data '%s'", data), 0, "%s", out);
	free(out);
	static const char *const accepted[] = { "", "--input-format auto", "--input-format perf" };
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		int st = run_cmd(&out, true, "'%s' diff --json %s '%s' '%s' | jq -e '.rows | length > 0' >/dev/null",
				 sigprof_bin(), accepted[i], data, data);
		cr_assert_eq(st, 0, "diff %s of a perf.data with itself: %s", accepted[i], out);
		free(out);
	}
	int st = run_cmd(&out, true, "'%s' diff --input-format sigprof '%s' '%s'", sigprof_bin(), data, data);
	cr_assert_neq(st, 0, "--input-format sigprof read a perf.data: %s", out);
	cr_assert(strstr(out, "a perf.data file, not a sigprof recording") && !strchr(strchr(out, '\n') + 1, '\n'),
		  "not one line naming the format: %s", out);
	free(out);
	/* a stat document is no recording of the format named */
	const char *doc = test_path("stat.json");
	cr_assert_eq(run_cmd(&out, true, "echo '{\"runs\": 1}' > '%s'", doc), 0);
	free(out);
	st = run_cmd(&out, true, "'%s' diff --input-format perf '%s' '%s'", sigprof_bin(), doc, doc);
	cr_assert_neq(st, 0, "--input-format perf read a stat document: %s", out);
	cr_assert(strstr(out, "not a perf.data file"), "%s", out);
	free(out);
}

/*
 * perf lock record: this guest traces no spinlock contention, but a kernel
 * mutex does contend: pipe_mutex's four writers and its reader meet on the
 * pipe's mutex.  sigprof's contentions, total and longest wait equal perf
 * lock contention's of the same file (perf prints three digits: within half
 * of its last digit a row).  Up to three recordings, for one with
 * contention (two tasks must run at once on the two CPUs).
 */
Test(perfdata, perf_lock_recording_has_perf_lock_contentions, .timeout = 300)
{
	require_perf_tool();
	if (access("/sys/kernel/tracing/events/lock/contention_begin", F_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/events/lock/contention_begin", F_OK) != 0)
		skip_environment("this kernel has no lock:contention_begin tracepoint (Linux 5.19)");
	const char *data = test_path("perf-lock.data");
	double perf_count = 0, perf_ns = 0, perf_max_ns = 0, rows = 0;
	for (int attempt = 0; attempt < 3 && perf_count == 0; attempt++) {
		perf_record(data, "lock record -q", W "pipe_mutex 50000");
		/* "COUNT WAIT_NS MAX_NS" summed over perf's rows ("437  1.94 ms  102.99 us  4.45 us  mutex  caller") */
		char *out;
		int st = run_cmd(&out, false,
				 "perf lock contention -i '%s' 2>&1 | awk 'function ns(v, u) { return v * (u == \"s\" ? 1e9 : "
				 "u == \"ms\" ? 1e6 : u == \"us\" ? 1e3 : 1) } $1 ~ /^[0-9]+$/ && NF >= 9 { n += $1; w += ns($2, $3); "
				 "m = ns($4, $5); if (m > max) max = m; r++ } END { printf \"%%d %%.0f %%.0f %%d\\n\", n, w, max, r }'",
				 data);
		cr_assert_eq(st, 0, "perf lock contention: %s", out);
		cr_assert_eq(sscanf(out, "%lf %lf %lf %lf", &perf_count, &perf_ns, &perf_max_ns, &rows), 4, "'%s'", out);
		free(out);
	}
	if (perf_count == 0)
		skip_premise("three runs of pipe_mutex had no mutex contention (its threads never ran at once)");
	const char *json = report_json_file(data, "");
	double count = jq_file(json, "[.locks[].contentions] | add");
	double wait_ns = jq_file(json, "[.locks[].wait_ns.total] | add");
	double max_ns = jq_file(json, "[.locks[].wait_ns.max] | max");
	cr_assert_eq(count, perf_count, "sigprof counted %.0f contentions, perf lock contention %.0f", count, perf_count);
	/* perf's "1.94 ms": three digits, so half of the last one a row (at most 5 us below 10 ms, 0.05 ms above) */
	double slack = rows * 50e3 + perf_ns * 0.005;
	cr_assert(wait_ns > perf_ns - slack && wait_ns < perf_ns + slack, "sigprof waited %.0f ns, perf %.0f ns", wait_ns,
		  perf_ns);
	cr_assert(max_ns > perf_max_ns * 0.995 - 5 && max_ns < perf_max_ns * 1.005 + 5, "longest wait: sigprof %.0f ns, perf %.0f ns",
		  max_ns, perf_max_ns);
}
