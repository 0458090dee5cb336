/*
 * test_outputs.c: the outputs other tools read, checked with those tools
 * where this machine has them, and against sigprof's own report and the
 * workloads' ground truth:
 *   report --pprof       read by `go tool pprof` (Debian's golang-go): -top,
 *                        -traces and -tagfocus give the report's figures
 *   report --folded      --weight ns sums to the collectors' measured time,
 *                        --folded-root splits per command, process, thread
 *   script               every sample once, in time order, filtered by
 *                        --time, --pid, --tid, --event; --json one object a line
 * Needs root (tracepoints); skipped, not passed, without.  The pprof tests
 * are skipped, with the reason, where go is not installed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

static void require_go(void)
{
	if (run_cmd(NULL, false, "command -v go >/dev/null") != 0)
		skip_environment("go is not installed (Debian: apt-get install golang-go): go tool pprof cannot read the profile");
}

/* The value of `report --figures` row key (-1 when absent). */
static double figure(const char *data, const char *key)
{
	char *out;
	int st = run_cmd(&out, false, "%s report --figures -i '%s' | awk -F'\\t' '$1 == \"%s\" { print $2 }'",
			 sigprof_bin(), data, key);
	cr_assert_eq(st, 0);
	double v = *out ? strtod(out, NULL) : -1;
	free(out);
	return v;
}

/*
 * What `go tool pprof -top OPTIONS` says the shown nodes account for:
 * "Showing nodes accounting for 16, 9.09% of 176 total" gives 16 (values
 * in the sample type's unit with -unit=ns for time).
 */
static double pprof_shown(const char *profile, const char *options)
{
	char *out;
	/* -nodefraction=0: no node is dropped from the figure (by default those under 0.5% of the total are) */
	int st = run_cmd(&out, true, "go tool pprof -top -nodefraction=0 %s '%s'", options, profile);
	cr_assert_eq(st, 0, "go tool pprof -top %s exited %d:\n%s", options, st, out);
	const char *line = strstr(out, "Showing nodes accounting for ");
	double v = -1;
	if (line)
		v = strtod(line + strlen("Showing nodes accounting for "), NULL);
	else if (strstr(out, "Total samples = 0") || strstr(out, "No samples"))
		v = 0;
	cr_assert(v >= 0, "go tool pprof -top %s printed no total:\n%s", options, out);
	free(out);
	return v;
}

static const char *write_pprof(const char *data, const char *name)
{
	const char *profile = test_path(name);
	char *out;
	int st = run_cmd(&out, true, "%s report -i '%s' --pprof '%s'", sigprof_bin(), data, profile);
	cr_assert_eq(st, 0, "report --pprof exited %d: %s", st, out);
	cr_assert_eq(strlen(out), 0, "report --pprof printed: %s", out);
	free(out);
	return profile;
}

/* Sum of the values of folded lines (the number after the last space of each line). */
static double folded_sum(const char *folded, int *lines)
{
	double sum = 0;
	*lines = 0;
	for (const char *line = folded; *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		const char *space = end;
		while (space > line && space[-1] != ' ')
			space--;
		if (space > line) {
			sum += strtod(space, NULL);
			(*lines)++;
		}
		line = *end ? end + 1 : end;
	}
	return sum;
}

static char *folded(const char *data, const char *options)
{
	char *out;
	int st = run_cmd(&out, false, "%s report --folded %s -i '%s'", sigprof_bin(), options, data);
	cr_assert_eq(st, 0, "report --folded %s exited %d", options, st);
	return out;
}

/*
 * The handlers' run time from `script --json`: each signal_deliver to a
 * handler followed by the thread's rt_sigreturn entry (signal_storm's
 * handlers do not nest).
 */
static double handler_ns_from_script(const char *data)
{
	char *out;
	int st = run_cmd(&out, false, "%s script --json -i '%s' --event signal:signal_deliver,syscalls:sys_enter_rt_sigreturn",
			 sigprof_bin(), data);
	cr_assert_eq(st, 0);
	double total = 0;
	unsigned long long open = 0, last = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		const char *t = strstr(line, "\"time_ns\":");
		cr_assert_not_null(t, "%s", line);
		unsigned long long time = strtoull(t + strlen("\"time_ns\":"), NULL, 10);
		cr_assert_geq(time, last, "events out of time order: %llu after %llu", time, last);
		last = time;
		if (strstr(line, "\"event\":\"signal:signal_deliver\"")) {
			open = time;
		} else if (open) {
			total += (double)(time - open);
			open = 0;
		}
	}
	free(out);
	return total;
}

/* signal_storm sending n signals, recorded with every collector into data; its JSON report (skipped without signal). */
static const char *record_storm(const char *data, long n)
{
	require_perf_events();
	require_root();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld >/dev/null", n);
	free(record_workload(data, "", cmd));
	const char *json = report_json_file(data, "");
	require_collector(json, "signal");
	return json;
}

Test(outputs, pprof_top_traces_and_tagfocus_give_the_reports_figures, .timeout = 180)
{
	require_go();
	const long n = 3000;
	const char *data = test_path("storm.data");
	const char *json = record_storm(data, n);
	const char *profile = write_pprof(data, "storm.pb.gz");

	/* every delivery, on the interrupted stack kill <- main */
	cr_assert_eq(pprof_shown(profile, "-sample_index=signal_deliveries"), n);
	cr_assert_eq(pprof_shown(profile, "-sample_index=signal_deliveries -tagfocus=signal=SIGUSR1 -focus='^main$'"), n);
	/* the cpu samples, all and on the sigreturn path, as the report counts them */
	double cpu = jq_file(json, "[.meta.collectors[] | select(.name==\"cpu\") | .samples] | first");
	cr_assert_gt(cpu, 0);
	cr_assert_eq(pprof_shown(profile, "-sample_index=cpu_samples"), cpu);
	double on_sigreturn = jq_file(json, "[.paths[] | select(.path==\"sigreturn\") | .samples.cpu] | first");
	cr_assert_eq(pprof_shown(profile, "-sample_index=cpu_samples -tagfocus=path=sigreturn"), on_sigreturn);
	double cpu_ns = jq_file(json, "[.stacks[] | select(.collector==\"cpu\") | .weight] | add");
	cr_assert_eq(pprof_shown(profile, "-sample_index=cpu_time -unit=ns"), cpu_ns);
	/* the top function and its self samples, as the report's function table has them */
	char *out;
	cr_assert_eq(run_cmd(&out, true, "go tool pprof -top -sample_index=cpu_samples '%s' | "
				       "awk '/flat%%/ { getline; print $1, $6; exit }'", profile), 0);
	char top_fn[256];
	double top_self;
	cr_assert_eq(sscanf(out, "%lf %255s", &top_self, top_fn), 2, "%s", out);
	free(out);
	char filter[512];
	snprintf(filter, sizeof(filter), "[.functions[] | select(.collector==\"cpu\")][0] | if .sym == \"%s\" then .self "
					 "else -2 end", top_fn);
	cr_assert_eq(jq_file(json, filter), top_self, "pprof's top function %s (%.0f samples) is not the report's",
		     top_fn, top_self);
	/* -traces: one trace of the deliveries, labelled, with the n of them */
	cr_assert_eq(run_cmd(&out, true, "go tool pprof -traces -sample_index=signal_deliveries -tagfocus=signal=SIGUSR1 "
				       "'%s'", profile), 0);
	cr_assert_not_null(strstr(out, "signal:  SIGUSR1"), "%s", out);
	cr_assert_not_null(strstr(out, "path:  signal-deliver"), "%s", out);
	cr_assert_not_null(strstr(out, "comm:  signal_storm"), "%s", out);
	double in_traces = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		double v;
		char fn[256];
		if (sscanf(line, " %lf %255s", &v, fn) == 2 && strcmp(fn, "kill") == 0)
			in_traces += v;
	}
	free(out);
	cr_assert_eq(in_traces, n, "the traces whose leaf is kill hold %.0f deliveries", in_traces);
	/* handler time: what script's deliver -> sigreturn pairs add up to */
	double handler_ns = handler_ns_from_script(data);
	cr_assert_gt(handler_ns, 0);
	cr_assert_eq(pprof_shown(profile, "-sample_index=signal_handler -unit=ns"), handler_ns);
}

/* futex_waiter K T recorded with --futex=trace into data; its JSON report (skipped without futex). */
static const char *record_waiter(const char *data, int k, int t_ms)
{
	require_perf_events();
	require_root();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), W "futex_waiter %d %d >/dev/null", k, t_ms);
	free(record_workload(data, "--futex=trace", cmd));
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	return json;
}

/*
 * Every sample type has a name of its own, so -sample_index reaches each
 * by name: a collector whose unit is samples and whose samples are
 * weighted (page-faults every few faults; cpu's cycles on a PMU) has
 * NAME_samples and NAME_events, which adds up to the stacks' weights.
 */
Test(outputs, pprof_sample_types_have_names_of_their_own, .timeout = 120)
{
	require_perf_events();
	require_root();
	require_go();
	const char *data = test_path("faults.data");
	free(record_workload(data, "-e page-faults,cpu", W "signal_storm 2000 >/dev/null"));
	const char *json = report_json_file(data, "");
	require_collector(json, "events");
	const char *profile = write_pprof(data, "faults.pb.gz");
	char *out;
	cr_assert_eq(run_cmd(&out, false, "go tool pprof -raw '%s' 2>/dev/null | sed -n '/^Samples:/{n;p}' | "
				       "tr ' ' '\\n' | sed 's|/.*||' | sort | uniq -d | wc -l", profile), 0);
	cr_assert_str_eq(out, "0\n", "sample types named twice");
	free(out);
	double weight = jq_file(json, "[.stacks[] | select(.collector==\"events\") | .weight] | add");
	double samples = jq_file(json, "[.stacks[] | select(.collector==\"events\") | .count] | add");
	cr_assert_gt(weight, samples, "the page-faults samples are not weighted: %.0f faults in %.0f samples", weight,
		     samples);
	cr_assert_eq(pprof_shown(profile, "-sample_index=events_events"), weight);
	cr_assert_eq(pprof_shown(profile, "-sample_index=events_samples"), samples);
}

Test(outputs, time_weights_are_the_measured_waits_in_pprof_and_folded, .timeout = 180)
{
	const char *data = test_path("waiter.data");
	require_collector(record_waiter(data, 10, 5), "sched");
	double word_wait = figure(data, "futex.word.gate.wait_ns.total");
	double word_calls = figure(data, "futex.word.gate.calls");
	double sched_wait_ns = figure(data, "sched.total.wait_time.total_ms") * 1e6;
	cr_assert_gt(word_wait, 0);
	cr_assert_gt(sched_wait_ns, 0);
	double futex_wait = 0;
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s report --figures -i '%s' | awk -F'\\t' '$1 ~ /^futex[.]op[.][A-Z_]*[.]wait_ns[.]total$/ "
				       "{ s += $2 } END { print s + 0 }'", sigprof_bin(), data), 0);
	futex_wait = strtod(out, NULL);
	free(out);

	int lines;
	char *f = folded(data, "--collector futex --weight ns");
	cr_assert_eq(folded_sum(f, &lines), futex_wait, "folded futex wait ns");
	cr_assert_gt(lines, 0);
	free(f);
	f = folded(data, "--collector sched --weight ns");
	cr_assert_float_eq(folded_sum(f, &lines), sched_wait_ns, 1000.0, "folded sched wait ns");
	free(f);

	if (run_cmd(NULL, false, "command -v go >/dev/null") != 0)
		skip_environment("go is not installed (Debian: apt-get install golang-go): the folded weights were checked, pprof's "
			     "were not");
	const char *profile = write_pprof(data, "waiter.pb.gz");
	cr_assert_eq(pprof_shown(profile, "-sample_index=futex_wait -unit=ns -tagfocus=futex_word=gate"), word_wait);
	cr_assert_eq(pprof_shown(profile, "-sample_index=futex_calls -tagfocus=futex_word=gate"), word_calls);
	cr_assert_float_eq(pprof_shown(profile, "-sample_index=sched_wait -unit=ns"), sched_wait_ns, 1000.0);
	/* with --srcline, pprof's -lines shows the workload's source lines */
	char *lines_out;
	cr_assert_eq(run_cmd(&lines_out, true, "%s report --srcline -i '%s' --pprof '%s' && go tool pprof -top -lines "
					       "-sample_index=futex_calls -tagfocus=futex_word=gate '%s'",
			     sigprof_bin(), data, profile, profile), 0);
	cr_assert_not_null(strstr(lines_out, "futex_waiter.c:"), "%s", lines_out);
	free(lines_out);
}

Test(outputs, folded_roots_split_per_thread_and_unnamed_frames_merge, .timeout = 120)
{
	const char *data = test_path("waiter.data");
	const char *json = record_waiter(data, 10, 2);
	int lines, rooted_lines;
	char *plain = folded(data, "--collector futex");
	double total = folded_sum(plain, &lines);
	cr_assert_eq(total, jq_file(json, "[.meta.collectors[] | select(.name==\"futex\") | .samples] | first"));
	char *by_tid = folded(data, "--collector futex --folded-root tid");
	cr_assert_eq(folded_sum(by_tid, &rooted_lines), total, "rooted per thread, the samples add up the same");
	/* futex_waiter's two threads: main opens the gate, the waiter waits */
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s report --folded --collector futex --folded-root tid -i '%s' | "
				       "cut -d';' -f1 | sort -u", sigprof_bin(), data), 0);
	cr_assert_eq(count_lines(out), 2, "roots: %s", out);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned pid, tid;
		cr_assert_eq(sscanf(line, "futex_waiter-%u/%u", &pid, &tid), 2, "root %s", line);
	}
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s report --folded --collector futex --folded-root comm -i '%s' | "
				       "cut -d';' -f1 | sort -u", sigprof_bin(), data), 0);
	cr_assert_str_eq(out, "futex_waiter\n");
	free(out);
	/* no raw address in any frame of any collector's stacks */
	cr_assert_eq(run_cmd(&out, false, "for c in cpu futex sched; do %s report --folded --collector $c -i '%s' "
				       "2>/dev/null; done | grep -c -E '[+]0x[0-9a-f]+'", sigprof_bin(), data), 1, "%s", out);
	free(out);
	free(plain);
	free(by_tid);
	/* a collector without samples is an error, not an empty output */
	int st = run_cmd(&out, true, "%s report --folded --collector signal -i '%s'", sigprof_bin(), data);
	cr_assert_eq(st, 2);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert_not_null(strstr(out, "no samples"), "%s", out);
	free(out);
	st = run_cmd(&out, true, "%s report --folded --weight seconds -i '%s'", sigprof_bin(), data);
	cr_assert_eq(st, 2);
	cr_assert_not_null(strstr(out, "--weight"), "%s", out);
	free(out);
}

/* Event header lines of perf script's text: not a frame (tab), not the blank line after each event. */
static int script_events(const char *data, const char *options)
{
	char *out;
	int st = run_cmd(&out, false, "%s script %s -i '%s' | grep -c -v -E '^(\t|$)'", sigprof_bin(), options, data);
	int n = atoi(out);
	free(out);
	return st == 0 || st == 1 ? n : -1;
}

Test(outputs, script_prints_every_event_once_in_time_order_with_filters, .timeout = 120)
{
	const int n = 2000;
	const char *data = test_path("storm.data");
	const char *json = record_storm(data, n);
	double all = jq_file(json, "[.meta.collectors[].samples] | add");
	cr_assert_eq(script_events(data, ""), all, "every sample of the workload once");
	cr_assert_eq(script_events(data, "--event signal:signal_deliver"), n);
	/* generate, deliver, sigreturn per signal, as the report counts them (the kernel may throttle some) */
	double signal_samples = jq_file(json, "[.meta.collectors[] | select(.name==\"signal\") | .samples] | first");
	cr_assert_geq(signal_samples, n);
	cr_assert_eq(script_events(data, "--event signal"), signal_samples);
	cr_assert_eq(script_events(data, "--pid 1"), 0);
	char *out;
	/* one JSON object a line, in time order, each with its decoded fields */
	cr_assert_eq(run_cmd(&out, false, "%s script --json --event signal:signal_deliver -i '%s' | "
				       "jq -s 'length, ([.[].fields.sig] | unique | length), "
				       "(map(.time_ns) | . == sort), ([.[].frames[0].sym] | unique | join(\",\"))'",
			     sigprof_bin(), data), 0);
	cr_assert_str_eq(out, "2000\n1\ntrue\n\"kill\"\n", "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s script --json --event signal:signal_deliver -i '%s' | jq -s -r '.[0].decoded'",
			     sigprof_bin(), data), 0);
	cr_assert_str_eq(out, "SIGUSR1 to its handler\n");
	free(out);
	/* --time: the 10th to the 19th delivery, as script prints their times */
	cr_assert_eq(run_cmd(&out, false, "%s script --event signal:signal_deliver -i '%s' | grep -v -E '^(\t|$)' | "
				       "awk '{ sub(\":\", \"\", $4) } NR == 10 { a = $4 } NR == 19 { print a \",\" $4 }'",
			     sigprof_bin(), data), 0);
	out[strcspn(out, "\n")] = '\0';
	char opts[128];
	snprintf(opts, sizeof(opts), "--event signal:signal_deliver --time %s", out);
	cr_assert_eq(script_events(data, opts), 10, "%s", opts);
	free(out);
	/* --tid of the workload's only thread: all of its events */
	cr_assert_eq(run_cmd(&out, false, "%s script --json --event signal -i '%s' | jq -s '.[0].tid'", sigprof_bin(), data), 0);
	snprintf(opts, sizeof(opts), "--event signal --tid %d", atoi(out));
	free(out);
	cr_assert_eq(script_events(data, opts), signal_samples);
	/*
	 * The signal section points at its slowest handler: the script command it
	 * names shows that delivery first and its rt_sigreturn last, as far apart
	 * as the report says.
	 */
	double slowest_ns = jq_file(json, ".signals[0].slowest_handler.ns");
	cr_assert_gt(slowest_ns, 0);
	cr_assert_eq(slowest_ns, jq_file(json, ".signals[0].handler_ns.max"));
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' | sed -n 's/.*slowest SIGUSR1 handler: .*(sigprof script "
				       "\\(.*\\))$/\\1/p'", sigprof_bin(), data), 0);
	out[strcspn(out, "\n")] = '\0';
	cr_assert_neq(strlen(out), 0, "the report names no slowest handler");
	char *around;
	cr_assert_eq(run_cmd(&around, false, "%s script --json --event signal %s -i '%s' | "
					  "jq -s '.[0].event, .[-1].event, .[-1].time_ns - .[0].time_ns'",
			     sigprof_bin(), out, data), 0, "%s", out);
	char first[64], last[64];
	double apart;
	cr_assert_eq(sscanf(around, "%63s %63s %lf", first, last, &apart), 3, "%s", around);
	cr_assert_str_eq(first, "\"signal:signal_deliver\"");
	cr_assert_str_eq(last, "\"syscalls:sys_enter_rt_sigreturn\"");
	cr_assert_eq(apart, slowest_ns);
	free(around);
	free(out);
	/* bad input: one line, status 2 */
	int st = run_cmd(&out, true, "%s script --time 5,x -i '%s'", sigprof_bin(), data);
	cr_assert_eq(st, 2);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
	st = run_cmd(&out, true, "%s script -i '%s'", sigprof_bin(), test_path("missing.data"));
	cr_assert_eq(st, 2);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
}

/*
 * A string field of its own length (__data_loc char[]: sched_process_exec's
 * filename) is the string, in text and JSON alike: the path the workload's
 * shell executed, as perf script prints it.
 */
Test(outputs, script_prints_variable_length_string_fields, .timeout = 60)
{
	require_perf_events();
	require_root();
	const char *data = test_path("exec.data");
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s record -q -o '%s' -e sched:sched_process_exec -- sh -c 'exec /bin/true'",
			     sigprof_bin(), data), 0, "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s script --json -i '%s' | jq -r '.fields.filename'", sigprof_bin(), data), 0);
	cr_assert_not_null(strstr(out, "/bin/true\n"), "the exec of /bin/true has filename %s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s script -i '%s' | grep -c 'filename=/bin/true pid='", sigprof_bin(), data), 0);
	cr_assert_str_eq(out, "1\n");
	free(out);
}

/*
 * A thread's own name is the comm that script, --folded-root and pprof
 * give its samples, as perf script does: named_thread's worker, named by
 * pthread_setname_np (with a ';', which a folded line writes ':'), sends
 * itself every signal; its process keeps the program's name.  Folded lines
 * are heaviest first with a root too.
 */
Test(outputs, a_threads_own_name_is_its_samples_comm, .timeout = 60)
{
	require_perf_events();
	require_root();
	const int n = 500;
	const char *data = test_path("named.data");
	char cmd[128];
	snprintf(cmd, sizeof(cmd), W "named_thread %d 'sp;worker'", n);
	char *out = record_workload(data, "-e signal,cpu", cmd);
	cr_assert_not_null(strstr(out, "handled 500 by sp;worker"), "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s script -i '%s' --event signal:signal_deliver | grep -c '^sp;worker '",
			     sigprof_bin(), data), 0);
	cr_assert_eq(atoi(out), n, "%s deliveries named by the thread, of %d", out, n);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s script --json -i '%s' --event signal:signal_deliver | jq -r .comm | sort -u",
			     sigprof_bin(), data), 0);
	cr_assert_str_eq(out, "sp;worker\n");
	free(out);
	/* --comm selects the thread by its own name too, as perf's --comms does */
	const char *kept = report_json_file(data, "--comm 'sp;worker'");
	cr_assert_eq(jq_file(kept, "[.signals[] | select(.name==\"SIGUSR1\") | .delivered] | first"), n);
	/* folded with a root: the thread's name, its ';' written ':', one frame; heaviest first */
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' --folded --collector signal --folded-root tid | "
				       "grep -c '^sp:worker-[0-9]*/[0-9]*;'", sigprof_bin(), data), 0);
	cr_assert_gt(atoi(out), 0, "no folded line begins with the thread's name");
	free(out);
	cr_assert_eq(run_cmd(&out, false, "%s report -i '%s' --folded --collector signal --folded-root tid | "
				       "awk '{ print $NF }' | sort -n -r -c && echo sorted", sigprof_bin(), data), 0, "%s", out);
	free(out);
}

/*
 * With --time, the pprof profile's duration is the window's (the text
 * header's "window A-B s"), so pprof's share of the duration is of the
 * window, and its comments name the filters.
 */
Test(outputs, pprof_of_a_time_window_lasts_the_window, .timeout = 120)
{
	require_go();
	const char *data = test_path("window.data");
	record_storm(data, 5000);
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s report --no-pager -i '%s' --time 25%%,75%% | sed -n 's/.*; window \\([0-9.]*\\)-\\([0-9.]*\\) s of.*/\\1 \\2/p'",
			     sigprof_bin(), data), 0);
	double from, to;
	cr_assert_eq(sscanf(out, "%lf %lf", &from, &to), 2, "no window in the header: %s", out);
	free(out);
	const char *profile = test_path("window.pb.gz");
	cr_assert_eq(run_cmd(&out, true, "%s report -i '%s' --time 25%%,75%% --pprof '%s'", sigprof_bin(), data, profile), 0,
		     "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, true, "go tool pprof -top '%s'", profile), 0, "%s", out);
	const char *d = strstr(out, "Duration: ");
	cr_assert_not_null(d, "%s", out);
	double ms = strtod(d + strlen("Duration: "), NULL);
	cr_assert(ms > 0 && fabs(ms - (to - from) * 1000) <= 1.5, "duration %.2f ms, window %.3f-%.3f s", ms, from, to);
	cr_assert_not_null(strstr(out, "filters: --time 25%,75%"), "%s", out);
	free(out);
}

Test(outputs, script_text_is_read_by_stackcollapse_perf, .timeout = 60)
{
	if (run_cmd(NULL, false, "command -v stackcollapse-perf.pl >/dev/null") != 0)
		skip_environment("stackcollapse-perf.pl is not installed: Debian 12 packages no FlameGraph scripts");
	const char *data = test_path("storm.data");
	record_storm(data, 1000);
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s script --event signal:signal_deliver -i '%s' | stackcollapse-perf.pl",
			     sigprof_bin(), data), 0);
	cr_assert_str_eq(out, "signal_storm;__libc_start_call_main;main;kill 1000\n");
	free(out);
}

Test(outputs, script_text_is_read_by_speedscopes_import, .timeout = 120)
{
	if (run_cmd(NULL, false, "command -v node >/dev/null && test -d tests/speedscope/node_modules/speedscope && "
				 "test -d tests/speedscope/node_modules/jsdom") != 0)
		skip_environment("node or the npm packages of tests/speedscope are missing (make deps installs them)");
	const char *data = test_path("storm.data");
	record_storm(data, 1000);
	const char *text = test_path("storm.script");
	/*
	 * The workload's events only: a recording with every collector also holds
	 * other tasks' (the system-wide sched_waking, the idle task's as swapper),
	 * which speedscope makes profiles of their own, titled after the file.
	 */
	cr_assert_eq(run_cmd(NULL, false, "%s script --event signal -i '%s' > '%s'", sigprof_bin(), data, text), 0);
	char *out;
	int st = run_cmd(&out, true, "node tests/speedscope/import-check.mjs '%s'", text);
	cr_assert_eq(st, 0, "%s", out);
	/* speedscope tried its importers in turn and its perf script importer took the text */
	cr_assert_not_null(strstr(out, "Importing from linux perf script output"), "%s", out);
	/* and named the profile after the thread it read from the event headers */
	char *pid_out;
	cr_assert_eq(run_cmd(&pid_out, false, "%s script --json --event signal:signal_deliver -i '%s' | jq -s '.[0].pid'",
			     sigprof_bin(), data), 0);
	char title[128];
	snprintf(title, sizeof(title), "title: signal_storm pid: %d tid: %d - speedscope", atoi(pid_out), atoi(pid_out));
	cr_assert_not_null(strstr(out, title), "want %s in:\n%s", title, out);
	free(pid_out);
	free(out);
}

/*
 * diff --pprof: the first recording of each side as two profiles with one
 * set of sample types.  futex_wake_many N makes N FUTEX_WAKE calls on one
 * word: each file's futex_calls total is its recording's weighted count of
 * them, the word's calls (report --figures), and `-diff_base` shows the
 * difference of the two.
 */
Test(outputs, diff_pprof_pair_reads_as_a_difference_in_pprof, .timeout = 180)
{
	require_perf_events();
	require_root();
	require_go();
	char base[512], new[512];
	snprintf(base, sizeof(base), "%s", test_path("wake1000.data"));
	snprintf(new, sizeof(new), "%s", test_path("wake2000.data"));
	free(record_workload(base, "-e futex", W "futex_wake_many 1000 >/dev/null"));
	free(record_workload(new, "-e futex", W "futex_wake_many 2000 >/dev/null"));
	const char *prefix = test_path("pair");
	char *out;
	int st = run_cmd(&out, true, "%s diff --pprof '%s' '%s' '%s'", sigprof_bin(), prefix, base, new);
	cr_assert_eq(st, 0, "diff --pprof exited %d: %s", st, out);
	cr_assert_not_null(strstr(out, "go tool pprof -diff_base="), "it prints the command to compare them: %s", out);
	free(out);
	char base_profile[600], new_profile[600], diff_options[700];
	snprintf(base_profile, sizeof(base_profile), "%s.base.pb.gz", prefix);
	snprintf(new_profile, sizeof(new_profile), "%s.new.pb.gz", prefix);
	/* the op's calls are the exact total's; the profile's weights are the records', as the word's calls are */
	cr_assert_eq(figure(base, "futex.op.WAKE.calls"), 1000);
	cr_assert_eq(figure(new, "futex.op.WAKE.calls"), 2000);
	double base_calls = figure(base, "futex.word.wake_word.calls"), new_calls = figure(new, "futex.word.wake_word.calls");
	cr_assert_gt(base_calls, 0);
	cr_assert_gt(new_calls, 0);
	cr_assert_eq(pprof_shown(base_profile, "-sample_index=futex_calls -nodefraction=0"), base_calls);
	cr_assert_eq(pprof_shown(new_profile, "-sample_index=futex_calls -nodefraction=0"), new_calls);
	snprintf(diff_options, sizeof(diff_options), "-sample_index=futex_calls -nodefraction=0 -focus=main -diff_base='%s'",
		 base_profile);
	cr_assert_eq(pprof_shown(new_profile, diff_options), new_calls - base_calls,
		     "the difference of the two sides' calls through main");
}

/*
 * The waits linked to their wakers (docs/waits.md) in pprof: wait_endings
 * hold, where the waiter blocks on held_mutex each round until the holder
 * unlocks it in hold_long.  `go tool pprof` reads waits_count and
 * waits_time samples on the waiter's stacks; focused on the holder's tid
 * (waker_tid) they are the report's waits on held_mutex ended by a task,
 * and -tags names the holder's unlock in hold_long as their waker_stack.
 */
Test(outputs, pprof_waits_are_labelled_with_their_waker, .timeout = 180)
{
	require_perf_events();
	require_root();
	require_go();
	const char *data = test_path("hold.data");
	char *workload = record_workload(data, "", W "wait_endings hold 10");
	int holder, waiter, rounds;
	cr_assert_eq(sscanf(workload, "holder %d waiter %d rounds %d", &holder, &waiter, &rounds), 3, "%s", workload);
	free(workload);
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	require_collector(json, "sched");
	const char *profile = write_pprof(data, "hold.pb.gz");
	const char *held = ".waits.words[] | select(.symbol == \"held_mutex\") | .ended_by.task";
	char filter[256], options[256];
	snprintf(filter, sizeof(filter), "%s.waits", held);
	double waits = jq_file(json, filter);
	snprintf(filter, sizeof(filter), "%s.wait_ns", held);
	double ns = jq_file(json, filter);
	cr_assert_geq(waits, rounds * 0.8, "%.0f waits on held_mutex ended by a task in %d rounds", waits, rounds);
	/* -tagfocus takes one key (its comma-separated values are alternatives): the word through the waiter's stack */
	snprintf(options, sizeof(options), "-sample_index=waits_count -tagfocus=waker_tid=%d -focus=wait_for_holder", holder);
	cr_assert_eq(pprof_shown(profile, options), waits, "pprof's waits in wait_for_holder ended by the holder");
	snprintf(options, sizeof(options), "-sample_index=waits_time -unit=ns -tagfocus=waker_tid=%d -focus=wait_for_holder",
		 holder);
	cr_assert_eq(pprof_shown(profile, options), ns, "pprof's ns of the waits in wait_for_holder the holder ended");
	/* the same waits by their word and the waiter's tid: all of them were ended by a task */
	cr_assert_eq(pprof_shown(profile, "-sample_index=waits_time -unit=ns -tagfocus=futex_word=held_mutex "
				  "-tagignore=ended_by=interrupt,signal,timeout,error,unlinked"), ns);
	snprintf(options, sizeof(options), "-sample_index=waits_time -unit=ns -tagfocus=tid=%d -focus=wait_for_holder", waiter);
	cr_assert_eq(pprof_shown(profile, options), ns, "the waiter's waits in wait_for_holder");
	char *out;
	int st = run_cmd(&out, false, "go tool pprof -tags -sample_index=waits_time -focus=wait_for_holder '%s' "
				      "2>/dev/null | sed -n '/ waker_stack:/,/^$/p'", profile);
	cr_assert_eq(st, 0);
	cr_assert(strstr(out, "(  100%): ") && strstr(out, "hold_long") &&
		  (strstr(out, "pthread_mutex_unlock") || strstr(out, "lll_unlock_wake") || strstr(out, "lll_lock_wake")),
		  "the waker_stack tag is not the holder's unlock in hold_long:\n%s", out);
	free(out);
}
