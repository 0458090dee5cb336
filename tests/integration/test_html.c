/*
 * test_html.c: `sigprof report --html` in a real browser.  Debian's
 * chromium, headless with JavaScript on, loads the page of a recording of
 * signal_storm from a file with "#selftest": the page's script draws the
 * flame graphs, searches, clicks a frame to zoom and hovers it, and writes
 * what it saw into <pre id="selftest">, which --dump-dom hands back.  The
 * test holds that against `report --json` of the same recording and the
 * workload's known count, and keeps a screenshot of the page (searching
 * "signal") in build/test-output/report-html.png.  The differential mode
 * (report_html_diff(), through `sigprof diff --html`) is tested on a pair of
 * recordings the same way, its screenshot in report-html-diff.png.  Skipped, not passed,
 * without root, perf events or chromium.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

#define CHROMIUM_FLAGS                                                                                              \
	"--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "       \
	"--disable-component-update --disable-sync --window-size=1280,1400 --virtual-time-budget=10000"
#define SCREENSHOT W "../test-output/report-html.png"
#define DIFF_SCREENSHOT W "../test-output/report-html-diff.png"

static void require_chromium(void)
{
	char *out;
	int st = run_cmd(&out, true, "command -v chromium");
	free(out);
	if (st != 0)
		skip_environment("chromium is not installed (Debian package chromium; make deps installs it)");
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Chromium's helpers (zygote, crashpad) outlive its main process by a second
 * or two, at a few percent of a CPU each: the next test's recording ran
 * beside them (a signal storm lost 3.7% of its records once, right after
 * these tests).  Wait for every process of our profile to end, 5 s at most,
 * then kill what is left.
 */
static void chromium_settle(void)
{
	char *out;
	/* "profil[e]": the pattern, which this shell's own command line holds, does not match itself */
	run_cmd(&out, true, "p='%s'; for i in $(seq 50); do pgrep -f \"$p\" >/dev/null || exit 0; sleep 0.1; done; "
			    "pkill -KILL -f \"$p\"; exit 0", test_path("chromium-profil[e]"));
	free(out);
}

/* Load page#selftest in chromium; the selftest's JSON into a file beside it; returns its name. */
static const char *browser_selftest(const char *page)
{
	char *dom;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int st = run_cmd(&dom, false, "timeout 120 chromium " CHROMIUM_FLAGS " --user-data-dir='%s' --dump-dom "
				      "'file://%s#selftest' 2>/dev/null",
			 test_path("chromium-profile"), page);
	fprintf(stderr, "test_html: chromium loaded and dumped %s in %.2f s\n", page, seconds_since(&t0));
	chromium_settle();
	cr_assert_eq(st, 0, "chromium exited %d", st);
	/* the last one: the page's script, in the DOM too, may name the element */
	const char *start = NULL;
	for (const char *p = dom; (p = strstr(p, "<pre id=\"selftest\">")); p++)
		start = p;
	cr_assert_not_null(start, "no selftest output: the page's script did not run to the end:\n%.2000s", dom);
	start += strlen("<pre id=\"selftest\">");
	const char *end = strstr(start, "</pre>");
	cr_assert_not_null(end);
	const char *json = test_path("selftest.json");
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	/* the DOM escapes & < > in text; the selftest's JSON has its quotes as they are */
	for (const char *p = start; p < end; p++) {
		if (strncmp(p, "&amp;", 5) == 0) { fputc('&', f); p += 4; }
		else if (strncmp(p, "&lt;", 4) == 0) { fputc('<', f); p += 3; }
		else if (strncmp(p, "&gt;", 4) == 0) { fputc('>', f); p += 3; }
		else fputc(*p, f);
	}
	fclose(f);
	free(dom);
	return json;
}

/* jq EXPR over the selftest's entry of one collector: `.collectors[] | select(.name == COLLECTOR) | EXPR`. */
static double selftest_value(const char *result, const char *collector, const char *expr)
{
	char filter[512];
	snprintf(filter, sizeof(filter), ".collectors[] | select(.name == \"%s\") | %s", collector, expr);
	return jq_file(result, filter);
}

/* A screenshot of page (with its #fragment) into shot, under build/test-output/; asserts it is not empty. */
static void screenshot(const char *page, const char *fragment, const char *shot)
{
	mkdir(W "../test-output", 0755);
	unlink(shot);
	char *out;
	run_cmd(&out, true, "timeout 120 chromium " CHROMIUM_FLAGS " --user-data-dir='%s' --screenshot='%s' 'file://%s%s' "
			    ">/dev/null 2>&1", test_path("chromium-profile"), shot, page, fragment);
	free(out);
	chromium_settle();
	struct stat sb;
	cr_assert_eq(stat(shot, &sb), 0, "no screenshot at %s", shot);
	cr_assert_gt(sb.st_size, 10000, "the screenshot %s is nearly empty", shot);
}

Test(html, signal_storm_page_in_chromium, .timeout = 300)
{
	require_perf_events();
	require_root();
	require_chromium();
	const long n = 3000;
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("storm.data"));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld >/dev/null", n);
	free(record_workload(data, "", cmd));
	char json[512];
	snprintf(json, sizeof(json), "%s", report_json_file(data, ""));
	require_collector(json, "signal");

	char page[512];
	snprintf(page, sizeof(page), "%s", test_path("report.html"));
	char *out;
	int st = run_cmd(&out, true, "%s report -i '%s' --html '%s'", sigprof_bin(), data, page);
	cr_assert_eq(st, 0, "report --html exited %d: %s", st, out);
	free(out);
	/* self-contained: no URL the browser would fetch */
	st = run_cmd(&out, false, "grep -c -E '(src|href)=\"|https?://|@import' '%s'", page);
	cr_assert_str_eq(out, "0\n", "the page refers to something outside it");
	free(out);

	char result[512];
	snprintf(result, sizeof(result), "%s", browser_selftest(page));
	/* the flame graph's total is the report's, and the workload's: generate, deliver, sigreturn per signal */
	double flame_samples = selftest_value(result, "signal", ".samples");
	double report_samples = jq_file(json, ".meta.collectors[] | select(.name == \"signal\") | .samples");
	cr_assert_eq(flame_samples, report_samples, "flame graph %g samples, report %g", flame_samples, report_samples);
	cr_assert_eq(flame_samples, 3 * n, "signal samples %g, want %ld", flame_samples, 3 * n);
	double cpu_report = jq_file(json, ".meta.collectors[] | select(.name == \"cpu\") | .samples");
	if (cpu_report > 0)
		cr_assert_eq(selftest_value(result, "cpu", ".samples"), cpu_report, "cpu: flame graph and report differ");
	/* the header names the collector's events and their samples as the text report does */
	st = run_cmd(&out, false, "%s report --header -i '%s' | sed -n 's/^# collector:  signal *//p'", sigprof_bin(), data);
	cr_assert_eq(st, 0);
	char *nl = strchr(out, '\n');
	if (nl)
		*nl = '\0';
	char *shown;
	st = run_cmd(&shown, false, "jq -j '.header[\"collector signal\"]' '%s'", result);
	cr_assert_eq(st, 0);
	cr_assert_str_eq(shown, out, "the page's header and the text report's differ");
	char total[64];
	snprintf(total, sizeof(total), "= %.0f samples", report_samples); /* generate + deliver + sigreturn */
	cr_assert(strstr(shown, total), "the header gives the events' sum: %s", shown);
	free(shown);
	free(out);
	/* frames are drawn, kernel frames apart */
	cr_assert_gt(selftest_value(result, "signal", ".drawn"), 5);
	cr_assert_gt(selftest_value(result, "signal", ".kernel"), 0);
	/* search: frames highlighted, and the matched total is what the page shows */
	cr_assert_geq(selftest_value(result, "signal", ".search.highlighted"), 1);
	double matched = selftest_value(result, "signal", ".search.total");
	cr_assert_gt(matched, 0);
	cr_assert_leq(matched, flame_samples);
	cr_assert_eq(selftest_value(result, "signal", ".search.dataset_total"), matched);
	/* zoom: the clicked frame fills the width, and hovering it names its counts */
	cr_assert_eq(selftest_value(result, "signal", "if .zoom.zoomed then 1 else 0 end"), 1, "the click did not zoom");
	cr_assert_lt(selftest_value(result, "signal", ".zoom.width_after - .zoom.canvas_width | fabs"), 1.0,
		     "the zoomed frame does not fill the width");
	cr_assert_eq(selftest_value(result, "signal", ".zoom.info | test(\"samples\") | if . then 1 else 0 end"), 1,
		     "hover shows no counts");

	/*
	 * The tables read as words, not JSON keys: every section has a title
	 * and columns without an underscore (signals_other_tasks_generated,
	 * latency_ns.p50), the signal table's latency reads "latency p50
	 * (ns)", the findings name the signal's,
	 * and the page is no wider than the window (a wide table scrolls in
	 * its own box).
	 */
	cr_assert_eq(jq_file(result, "[.sections[] | .title, .labels[] | select(test(\"_\"))] | length"), 0,
		     "a section title or column label is a JSON key");
	cr_assert_eq(jq_file(result, "[.paths_labels[] | select(test(\"_\"))] | length"), 0);
	cr_assert_eq(jq_file(result, "[.sections[] | select(.key == \"signals\") | .labels[] | "
				     "select(. == \"latency p50 (ns)\")] | length"), 1,
		     "the signal table has no column 'latency p50 (ns)'");
	cr_assert_eq(jq_file(result, "[.findings[] | select(test(\"^signals: SIGUSR1\"))] | length"), 1,
		     "the findings do not name SIGUSR1's");
	cr_assert_leq(jq_file(result, ".page_width - .window_width"), 0, "the page is wider than the window");

	/* a screenshot to look at, searching "signal" */
	screenshot(page, "#search=signal", SCREENSHOT);
}

Test(html, unwritable_file_is_one_error_line, .timeout = 60)
{
	require_perf_events();
	require_root();
	const char *data = test_path("small.data");
	free(record_workload(data, "-e signal", W "signal_storm 10 >/dev/null"));
	char *out;
	int st = run_cmd(&out, true, "%s report -i '%s' --html /nonexistent-dir/page.html", sigprof_bin(), data);
	cr_assert_eq(st, 2, "exit %d: %s", st, out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert_not_null(strstr(out, "sigprof: report: --html '/nonexistent-dir/page.html': cannot create it"), "%s",
			   out);
	free(out);
	st = run_cmd(&out, true, "%s report -i '%s' --html x.html --json", sigprof_bin(), data);
	cr_assert_eq(st, 2, "exit %d: %s", st, out);
	cr_assert_not_null(strstr(out, "two output formats"), "%s", out);
	free(out);
	/* "-" is no file name for a page or a profile (it made a file named "-"), nor is "" */
	static const char *const refused[][2] = { { "--html -", "not to standard output" },
						   { "--pprof -", "not to standard output" },
						   { "--html ''", "the file's name is empty" },
						   { "--pprof ''", "the file's name is empty" } };
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		st = run_cmd(&out, true, "S=$(readlink -f '%s') && cd '%s' && \"$S\" report -i '%s' %s", sigprof_bin(),
			     test_dir(), data, refused[i][0]);
		cr_assert_eq(st, 2, "%s: exit %d: %s", refused[i][0], st, out);
		cr_assert_eq(count_lines(out), 1, "%s", out);
		cr_assert_not_null(strstr(out, refused[i][1]), "%s: %s", refused[i][0], out);
		free(out);
	}
	cr_assert_neq(access(test_path("-"), F_OK), 0, "a file named - was written");
}

/* ---- the differential mode, on a pair of recordings ---- */

/* `sigprof diff --html page base new`, the command a user runs. */
static void write_diff_page(const char *base_data, const char *new_data, const char *page)
{
	char *out;
	int st = run_cmd(&out, true, "%s diff --html '%s' '%s' '%s'", sigprof_bin(), page, base_data, new_data);
	cr_assert_eq(st, 0, "diff --html exited %d: %s", st, out);
	free(out);
}

/*
 * The same workload twice with its time moved: sig_nested's SIGUSR1 handler
 * spins 200 µs and the SIGUSR2 handler nested in it 50 µs in the base, the
 * other way round in the new recording.  The cpu collector's frames of the
 * SIGUSR2 handler gain share (red), those of the SIGUSR1 handler's own spin
 * lose it (blue); the totals are each recording's own.
 */
Test(html, differential_flame_graph_of_two_recordings, .timeout = 300)
{
	require_perf_events();
	require_root();
	require_chromium();
	char base_data[512], new_data[512], page[512], base_json[512], new_json[512];
	snprintf(base_data, sizeof(base_data), "%s", test_path("base.data"));
	snprintf(new_data, sizeof(new_data), "%s", test_path("new.data"));
	snprintf(page, sizeof(page), "%s", test_path("diff.html"));
	free(record_workload(base_data, "-e cpu", W "sig_nested 400 50 200 >/dev/null"));
	free(record_workload(new_data, "-e cpu", W "sig_nested 400 200 50 >/dev/null"));
	snprintf(base_json, sizeof(base_json), "%s", report_json_file(base_data, ""));
	require_collector(base_json, "cpu");
	snprintf(new_json, sizeof(new_json), "%s", report_json_file(new_data, ""));
	write_diff_page(base_data, new_data, page);

	char result[512];
	snprintf(result, sizeof(result), "%s", browser_selftest(page));
	char *seen;
	run_cmd(&seen, false, "cat '%s'", result);
	fprintf(stderr, "test_html: the differential page's selftest: %s\n", seen);
	free(seen);
	cr_assert_eq(jq_file(result, "if .mode == \"diff\" then 1 else 0 end"), 1);
	double base_samples = selftest_value(result, "cpu", ".base_samples");
	double new_samples = selftest_value(result, "cpu", ".samples");
	const char *report_cpu = ".meta.collectors[] | select(.name == \"cpu\") | .samples";
	cr_assert_eq(base_samples, jq_file(base_json, report_cpu), "base: %g samples", base_samples);
	cr_assert_eq(new_samples, jq_file(new_json, report_cpu), "new: %g samples", new_samples);
	cr_assert_geq(selftest_value(result, "cpu", ".grew"), 1, "no frame coloured as grown");
	cr_assert_geq(selftest_value(result, "cpu", ".shrank"), 1, "no frame coloured as shrunk");
	cr_assert_eq(selftest_value(result, "cpu", ".zoom.info | test(\"base .* new \") | if . then 1 else 0 end"), 1,
		     "hover shows no base and new counts");
	screenshot(page, "", DIFF_SCREENSHOT);
}

/*
 * The same hostile recording (test_terminal.c) as a page: its argv, comm,
 * file name ("...<p id=pwned-file>") and symbol
 * ("</script><p id=pwned-sym>...") are drawn as text by the page's script
 * and never become elements: had one closed the JSON's <script>, the
 * browser's DOM would hold a <p id="pwned-..."> element.
 */
Test(html, a_recordings_strings_stay_text_in_the_browser, .timeout = 300)
{
	require_chromium();
	const char *data = hostile_recording();
	char page[512], *out;
	snprintf(page, sizeof(page), "%s", test_path("hostile.html"));
	int st = run_cmd(&out, true, "%s report -i '%s' --html '%s'", sigprof_bin(), data, page);
	cr_assert_eq(st, 0, "report --html exited %d: %s", st, out);
	free(out);
	st = run_cmd(&out, false, "grep -c -e '</script><p' -e '<!--' '%s'", page);
	cr_assert_str_eq(out, "0\n", "the page holds a raw '</script><p' or '<!--'");
	free(out);
	char *dom;
	st = run_cmd(&dom, false, "timeout 120 chromium " CHROMIUM_FLAGS " --user-data-dir='%s' --dump-dom 'file://%s' "
				  "2>/dev/null", test_path("chromium-profile"), page);
	chromium_settle();
	cr_assert_eq(st, 0, "chromium exited %d", st);
	cr_assert_null(strstr(dom, "id=\"pwned"), "a recording's string became an element:\n%.3000s", strstr(dom, "id=\"pwned"));
	/* drawn as text: the tables hold them (the DOM escapes < and > in text) */
	cr_assert(strstr(dom, "&lt;/script&gt;&lt;p id=pwned-sym&gt;"), "the symbol is not drawn as text");
	cr_assert(strstr(dom, "&lt;/script&gt;&lt;p id=pwned-argv&gt;"), "the command line is not drawn as text");
	cr_assert(strstr(dom, "&lt;p id=pwned-file&gt;"), "the file name is not drawn as text");
	free(dom);
	/* the same page through diff --html (the differential mode) */
	char diff_page[512];
	snprintf(diff_page, sizeof(diff_page), "%s", test_path("hostile-diff.html"));
	st = run_cmd(&out, true, "%s diff --html '%s' '%s' '%s'", sigprof_bin(), diff_page, data, data);
	cr_assert_eq(st, 0, "diff --html exited %d: %s", st, out);
	free(out);
	st = run_cmd(&dom, false, "timeout 120 chromium " CHROMIUM_FLAGS " --user-data-dir='%s' --dump-dom 'file://%s' "
				  "2>/dev/null", test_path("chromium-profile"), diff_page);
	chromium_settle();
	cr_assert_eq(st, 0, "chromium exited %d", st);
	cr_assert_null(strstr(dom, "id=\"pwned"), "diff --html: a recording's string became an element");
	cr_assert(strstr(dom, "&lt;/script&gt;&lt;p id=pwned-sym&gt;"), "diff --html: the symbol is not drawn as text");
	free(dom);
}

/*
 * The wake flame graph (docs/waits.md): wait_endings hold, whose waiter
 * blocks on held_mutex each round until the holder unlocks it in
 * hold_long.  The graph weighs every wait a task ended, by the time
 * waited, as the report's waits object counts them; its waiter side sits
 * below a "--" frame and the holder's unlock above it, so searching
 * hold_long matches exactly the waits on held_mutex.
 */
Test(html, wake_flame_graph_joins_waiters_to_their_wakers, .timeout = 300)
{
	require_perf_events();
	require_root();
	require_chromium();
	char data[512], cmd[256];
	snprintf(data, sizeof(data), "%s", test_path("hold.data"));
	snprintf(cmd, sizeof(cmd), W "wait_endings hold 10");
	char *workload = record_workload(data, "", cmd);
	int holder, waiter, rounds;
	cr_assert_eq(sscanf(workload, "holder %d waiter %d rounds %d", &holder, &waiter, &rounds), 3, "%s", workload);
	free(workload);
	char json[512];
	snprintf(json, sizeof(json), "%s", report_json_file(data, ""));
	require_collector(json, "futex");
	require_collector(json, "sched");
	char page[512];
	snprintf(page, sizeof(page), "%s", test_path("wake.html"));
	char *out;
	int st = run_cmd(&out, true, "%s report -i '%s' --html '%s'", sigprof_bin(), data, page);
	cr_assert_eq(st, 0, "report --html exited %d: %s", st, out);
	free(out);

	char result[512];
	snprintf(result, sizeof(result), "%s", browser_selftest(page));
	double waits = jq_file(json, ".waits.ended_by.task.waits"), ns = jq_file(json, ".waits.ended_by.task.wait_ns");
	cr_assert_geq(waits, rounds * 0.8, "%.0f waits ended by a task in %d rounds", waits, rounds);
	cr_assert_eq(selftest_value(result, "wake", ".samples"), waits, "the wake graph's waits are not the report's");
	cr_assert_eq(selftest_value(result, "wake", ".weight"), ns, "the wake graph's ns are not the report's");
	cr_assert_eq(selftest_value(result, "wake", ".weight_index"), 1, "the wake graph is not drawn by time first");
	cr_assert_eq(selftest_value(result, "wake", ".title | test(\"^Wake flame graph\") | if . then 1 else 0 end"), 1);
	cr_assert_gt(selftest_value(result, "wake", ".drawn"), 5);

	/* searching hold_long (the holder's unlock, above the "--"): the waits on held_mutex, by the ns they waited */
	char *dom;
	st = run_cmd(&dom, false, "timeout 120 chromium " CHROMIUM_FLAGS " --user-data-dir='%s' --dump-dom "
				  "'file://%s#search=hold_long' 2>/dev/null | grep -o 'id=\"flame-wake\"[^>]*'",
		     test_path("chromium-profile"), page);
	chromium_settle();
	cr_assert_eq(st, 0, "no wake flame graph in the page");
	const char *total = strstr(dom, "data-match-total=\"");
	cr_assert_not_null(total, "no search total: %s", dom);
	double held_ns = jq_file(json, "[.waits.words[] | select(.symbol == \"held_mutex\") | .ended_by.task.wait_ns] | add");
	cr_assert_gt(held_ns, 0);
	cr_assert_eq(strtod(total + strlen("data-match-total=\""), NULL), held_ns,
		     "hold_long matches %s, the waits on held_mutex %.0f ns", total, held_ns);
	free(dom);
	screenshot(page, "#search=hold_long", W "../test-output/report-html-wake.png");
}

/*
 * The page's timeline of timeline_phases 10 (test_timeline.c's workload: a thread that runs 10 ms of CPU, sleeps
 * 20 ms, waits 30 ms on a futex word and handles SIGUSR1 for 5 ms, 10 times): the worker's row in chromium, as the
 * time its drawn pixels cover per class and as the ns of the page's data, within 5% of what the program measured
 * (its CPU clock; for the waits, from the timeouts to the calls' wall time);
 * a selection of the middle half of the recording draws a wall-clock flame graph whose total is the threads' lives
 * within the range (from report --json, not from the page) within 1%; hovering a span names its state and stack.
 */
Test(html, timeline_of_a_known_workload_in_chromium, .timeout = 300)
{
	require_perf_events();
	require_root();
	require_chromium();
	const char *data = test_path("phases.data");
	struct phases_truth t;
	record_phases(data, &t);
	char *out;
	char json[512];
	snprintf(json, sizeof(json), "%s", report_json_file(data, ""));
	require_collector(json, "sched");
	char page[512];
	snprintf(page, sizeof(page), "%s", test_path("phases.html"));
	cr_assert_eq(run_cmd(&out, true, "%s report -i '%s' --html '%s'", sigprof_bin(), data, page), 0, "%s", out);
	free(out);
	char result[512];
	snprintf(result, sizeof(result), "%s", browser_selftest(page));
	cr_assert_geq(jq_file(result, ".timeline.rows"), 2, "the main thread and the worker each have a row");
	cr_assert_gt(jq_file(result, ".timeline.spans_drawn"), 0);
	/* classes: 0 running, 2 blocked: futex, 5 blocked: sleep, 7 signal handler */
	static const struct {
		int class;
		const char *name;
	} classes[] = { { 0, "running" }, { 2, "blocked on the futex word" }, { 5, "blocked in sleep" }, { 7, "signal handler" } };
	/*
	 * running and handler: the thread's CPU clock in them; blocked: from the timeouts asked (10 x 30 ms, 10 x 20 ms)
	 * to the calls' wall time the program measured (which holds the runnable time after each wake: under load a
	 * waking the kernel did not record leaves that time blocked, docs/timeline.md's limits)
	 */
	const double low[] = { t.run_ns, PHASES_LOOPS * 30e6, PHASES_LOOPS * 20e6, t.handler_ns };
	const double high[] = { t.run_ns, t.futex_ns, t.sleep_ns, t.handler_ns };
	/* and the time the hypervisor stole meanwhile, which the kernel's clock counts and the thread's CPU clock does not */
	const double stolen[] = { t.steal_ns, 0, 0, t.steal_ns };
	for (size_t i = 0; i < 4; i++) {
		char filter[256];
		snprintf(filter, sizeof(filter), ".timeline.threads[] | select(.tid == %d) | .ns[%d]", t.tid, classes[i].class);
		double data_ns = jq_file(result, filter);
		snprintf(filter, sizeof(filter), ".timeline as $t | $t.threads[] | select(.tid == %d) | .px[%d] * $t.length_ns / $t.plot_width",
			 t.tid, classes[i].class);
		double drawn_ns = jq_file(result, filter);
		double most = 1.05 * high[i] + stolen[i];
		cr_expect(data_ns >= 0.95 * low[i] && data_ns <= most, "the page's data, %s: %.3f ms, want %.3f to %.3f ms",
			  classes[i].name, data_ns / 1e6, low[i] / 1e6, most / 1e6);
		cr_expect(drawn_ns >= 0.95 * low[i] && drawn_ns <= most, "the pixels drawn, %s: %.3f ms, want %.3f to %.3f ms",
			  classes[i].name, drawn_ns / 1e6, low[i] / 1e6, most / 1e6);
	}
	/* the selection: the threads' lives within it, from the JSON report's own threads */
	double from = jq_file(result, ".timeline.origin_ns + .timeline.selection.from");
	double to = jq_file(result, ".timeline.origin_ns + .timeline.selection.to");
	char filter[512];
	snprintf(filter, sizeof(filter), "[.timeline.threads[] | ([.end_ns, %.0f] | min) - ([.start_ns, %.0f] | max) | "
					 "select(. > 0)] | add",
		 to, from);
	double lives = jq_file(json, filter);
	double total = jq_file(result, ".timeline.selection.total_ns");
	cr_expect(total > 0.99 * lives && total < 1.01 * lives, "the selection's flame graph holds %.0f ns, the lives in it %.0f ns",
		  total, lives);
	cr_expect_gt(jq_file(result, ".timeline.selection.drawn"), 1, "the selection's flame graph drew no frame");
	run_cmd(&out, false, "jq -r '.timeline.hover' '%s'", result);
	cr_expect(strstr(out, " at ") && strchr(out, '['), "hovering the worker's row names no state: %s", out);
	free(out);
	/* the whole recording's wall-clock flame graph: every thread's life */
	double wall = selftest_value(result, "wall", ".samples");
	double all = jq_file(json, "[.timeline.threads[] | .end_ns - .start_ns] | add");
	cr_expect(wall > 0.999 * all && wall < 1.001 * all, "the wall flame graph holds %.0f ns, the lives %.0f ns", wall, all);
	screenshot(page, "", W "../test-output/report-html-timeline.png");
}
