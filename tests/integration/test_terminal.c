/*
 * test_terminal.c: the text report and record's closing line as a terminal
 * gets them.  Widths from --width and COLUMNS (every line within them, and
 * the same bytes for both), colour (--color, NO_COLOR), the pager on a
 * pseudo-terminal (script(1) from util-linux gives one, stty sets its
 * size), the futex section of a contended mutex within 80 and 60 columns,
 * and option errors with their "did you mean".  Needs root for the
 * recording; skipped, not passed, without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

static const char *storm_recording(void)
{
	static char data[512];
	require_perf_events();
	require_root();
	snprintf(data, sizeof(data), "%s", test_path("storm.data"));
	free(record_workload(data, "", W "signal_storm 2000 >/dev/null"));
	return data;
}

Test(terminal, report_fits_the_width_it_is_given, .timeout = 120)
{
	const char *data = storm_recording();
	char *at80, *by_option, *at200, *unlimited;
	cr_assert_eq(run_cmd(&at80, false, "COLUMNS=80 %s report -i '%s'", sigprof_bin(), data), 0);
	cr_assert_eq(run_cmd(&by_option, false, "COLUMNS=200 %s report --width 80 -i '%s'", sigprof_bin(), data), 0);
	cr_assert_eq(run_cmd(&at200, false, "COLUMNS=200 %s report -i '%s'", sigprof_bin(), data), 0);
	cr_assert_eq(run_cmd(&unlimited, false, "unset COLUMNS; %s report -i '%s'", sigprof_bin(), data), 0);
	cr_assert_leq(widest_line(at80), 80, "a line of %zu columns at 80:\n%s", widest_line(at80), at80);
	cr_assert_str_eq(at80, by_option, "--width 80 and COLUMNS=80 differ");
	cr_assert_leq(widest_line(at200), 200, "%s", at200);
	cr_assert_str_neq(at80, at200, "80 and 200 columns give the same bytes");
	cr_assert_gt(widest_line(unlimited), 80, "a pipe without a width keeps its lines whole");
	/* the same figures at every width: the signal table's counts are there, split or not */
	cr_assert_not_null(strstr(at80, "SIGUSR1             2000       2000       2000"), "%s", at80);
	cr_assert_null(strchr(at80, '\033'), "colour into a pipe");
	free(at80);
	free(by_option);
	free(at200);
	free(unlimited);
}

/*
 * Top functions at 40 and 60 columns: within the width, and the busiest
 * function's name whole when it fits beside the shares (the dso goes under
 * it): names were cut to 8 columns at 60, to 4 at 40.
 */
Test(terminal, top_functions_keep_names_readable_at_60_and_40_columns, .timeout = 120)
{
	const char *data = storm_recording();
	const char *json = report_json_file(data, "");
	char *name;
	cr_assert_eq(run_cmd(&name, false, "jq -j '[.functions[] | select(.collector == \"cpu\")][0].sym // empty' '%s'",
			     json), 0);
	if (!name[0]) {
		free(name);
		skip_premise("the recording has no cpu samples to list");
	}
	for (size_t width = 40; width <= 60; width += 20) {
		char *text;
		cr_assert_eq(run_cmd(&text, false, "%s report --width %zu -i '%s'", sigprof_bin(), width, data), 0);
		char *table = strstr(text, "Top functions");
		cr_assert_not_null(table);
		char *end = strstr(table, "\n\n");
		if (end)
			end[1] = '\0'; /* the table alone: other sections have words longer than 40 columns */
		cr_assert_leq(widest_line(table), width, "a line wider than %zu:\n%s", width, table);
		/* 2 + 7 + 1 + 7 + 2 columns of shares at 40, more with the counts at 60: the rest is the name's */
		if (strlen(name) <= width - 19 - 1 - (width == 60 ? 12 : 0))
			cr_assert_not_null(strstr(table, name), "%s is cut at %zu columns:\n%s", name, width, table);
		free(text);
	}
	free(name);
}

/* The line of text that starts with prefix, its first n columns (ASCII) into buf; NULL when none. */
static const char *line_start(const char *text, const char *prefix, size_t n, char *buf, size_t len)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, prefix, strlen(prefix)) == 0) {
			snprintf(buf, len, "%.*s", (int)(n < strcspn(line, "\n") ? n : strcspn(line, "\n")), line);
			return buf;
		}
	return NULL;
}

Test(terminal, futex_section_fits_80_and_60_columns, .timeout = 120)
{
	require_perf_events();
	require_root();
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("futex.data"));
	free(record_workload(data, "-e futex", W "mutex_contend_nofp 4 2000 >/dev/null"));
	char *whole;
	cr_assert_eq(run_cmd(&whole, false, "unset COLUMNS; %s report -i '%s'", sigprof_bin(), data), 0);
	cr_assert_not_null(strstr(whole, "\nFutex operations\n"), "%s", whole);
	cr_assert_not_null(strstr(whole, "\n  contended_mutex "), "no row for the contended word:\n%s", whole);
	cr_assert_gt(widest_line(whole), 80, "a pipe without a width keeps the futex tables' rows whole");
	/* the ops table's first 75 columns (op to unmeasured) are its first table at 80 columns, byte for byte */
	char wait_row[128];
	cr_assert_not_null(line_start(whole, "  WAIT ", 75, wait_row, sizeof(wait_row)), "no WAIT row:\n%s", whole);
	static const unsigned widths[] = { 80, 60 };
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		char *out;
		cr_assert_eq(run_cmd(&out, false, "COLUMNS=%u %s report -i '%s'", widths[i], sigprof_bin(), data), 0);
		cr_assert_leq(widest_line(out), widths[i], "a line of %zu columns at %u:\n%s", widest_line(out), widths[i],
			      out);
		cr_assert_not_null(strstr(out, "\nFutex operations\n"), "%s", out);
		cr_assert_not_null(strstr(out, "\nTop futex words"), "%s", out);
		cr_assert_not_null(strstr(out, "\n  contended_mutex "), "no row for the contended word:\n%s", out);
		cr_assert_not_null(strstr(out, "\n  busiest word "), "%s", out);
		if (widths[i] == 80)
			cr_assert_not_null(strstr(out, wait_row), "no '%s' at 80 columns:\n%s", wait_row, out);
		free(out);
	}
	free(whole);
}

Test(terminal, colour_when_asked_and_never_with_no_color, .timeout = 120)
{
	const char *data = storm_recording();
	char *out;
	cr_assert_eq(run_cmd(&out, false, "%s report --color=always -i '%s'", sigprof_bin(), data), 0);
	cr_assert_not_null(strstr(out, "\033[1;36msigreturn"), "path names coloured");
	cr_assert_not_null(strstr(out, "\033[33m"), "kernel frames coloured");
	cr_assert_not_null(strstr(out, "\033[32m"), "user frames coloured");
	free(out);
	/* a terminal (script's pseudo-terminal) colours by default, unless NO_COLOR */
	cr_assert_eq(run_cmd(&out, false, "script -qec \"stty rows 2000 cols 120; %s report --no-pager -n 1 -i '%s'\" "
					  "/dev/null", sigprof_bin(), data), 0);
	cr_assert_not_null(strstr(out, "\033["), "no colour on a terminal");
	free(out);
	cr_assert_eq(run_cmd(&out, false, "NO_COLOR=1 script -qec \"stty rows 2000 cols 120; %s report --no-pager -n 1 "
					  "-i '%s'\" /dev/null", sigprof_bin(), data), 0);
	cr_assert_null(strstr(out, "\033["), "colour despite NO_COLOR");
	free(out);
	cr_assert_eq(run_cmd(&out, true, "%s report --color=sometimes -i '%s'", sigprof_bin(), data), 2);
	cr_assert_not_null(strstr(out, "sigprof: report: --color 'sometimes': expected auto, always or never"), "%s", out);
	free(out);
}

Test(terminal, pager_for_a_report_longer_than_the_screen, .timeout = 120)
{
	const char *data = storm_recording();
	char paged[512];
	snprintf(paged, sizeof(paged), "%s", test_path("paged.txt"));
	char *out;
	/* a 20-row terminal: the report goes through $PAGER, which here copies it to a file */
	cr_assert_eq(run_cmd(&out, false, "script -qec \"stty rows 20 cols 100; PAGER='cat > %s' %s report -i '%s'\" "
					  "/dev/null", paged, sigprof_bin(), data), 0);
	free(out);
	cr_assert_eq(run_cmd(&out, false, "cat '%s'", paged), 0, "the pager did not run");
	cr_assert_not_null(strstr(out, "# sigprof report of"), "%s", out);
	cr_assert_leq(widest_line(out), 100, "the terminal's own width: %s", out);
	free(out);
	/* --no-pager, or a report that fits the screen, goes straight to the terminal */
	remove(paged);
	cr_assert_eq(run_cmd(&out, false, "script -qec \"stty rows 20 cols 100; PAGER='cat > %s' %s report --no-pager "
					  "-i '%s'\" /dev/null", paged, sigprof_bin(), data), 0);
	cr_assert_not_null(strstr(out, "# sigprof report of"));
	free(out);
	cr_assert_neq(run_cmd(&out, true, "test -e '%s'", paged), 0, "--no-pager ran the pager");
	free(out);
	cr_assert_eq(run_cmd(&out, false, "script -qec \"stty rows 5000 cols 200; PAGER='cat > %s' %s report -i '%s'\" "
					  "/dev/null", paged, sigprof_bin(), data), 0);
	free(out);
	cr_assert_neq(run_cmd(&out, true, "test -e '%s'", paged), 0, "a report that fits the screen was paged");
	free(out);
}

Test(terminal, record_closing_line_within_80_columns, .timeout = 120)
{
	require_perf_events();
	require_root();
	char *out;
	int st = run_cmd(&out, false, "COLUMNS=80 %s record -o '%s' -- " W "signal_storm 100 2>&1 >/dev/null",
			 sigprof_bin(), test_path("closing.data"));
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_not_null(strstr(out, "sigprof: recorded "), "%s", out);
	cr_assert_leq(widest_line(out), 80, "%s", out);
	free(out);
}

Test(terminal, errors_name_the_nearest_command_option_and_collector)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{ "reprot", "sigprof: 'reprot' is not a sigprof command; did you mean 'report'?" },
		{ "report --jsn", "sigprof: report: unrecognized option '--jsn'; did you mean '--json'?" },
		{ "record --outptu x true", "sigprof: record: unrecognized option '--outptu'; did you mean '--output'?" },
		{ "stat --repaet 3 true", "sigprof: stat: unrecognized option '--repaet'; did you mean '--repeat'?" },
		{ "list --nmes", "sigprof: list: unrecognized option '--nmes'; did you mean '--names'?" },
		{ "report -i", "sigprof: report: option '-i' requires an argument (FILE)" },
		{ "record -e sigal true", "nor a collector: did you mean 'signal'?" },
		{ "--verison", "sigprof: unrecognized option '--verison'; did you mean '--version'?" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out;
		int st = run_cmd(&out, true, "%s %s", sigprof_bin(), cases[i].args);
		cr_assert_eq(st, 2, "%s: exit %d: %s", cases[i].args, st, out);
		cr_assert_not_null(strstr(out, cases[i].want), "%s: %s", cases[i].args, out);
		free(out);
	}
}

/*
 * A recording whose argv, comm, file name and symbol hold escape sequences
 * (ESC [31m, the C1 CSI raw 0x9b and UTF-8 c2 9b): no text output lets one
 * reach the terminal, and each is shown escaped.
 */
Test(terminal, a_recordings_strings_reach_no_terminal_as_escapes, .timeout = 180)
{
	const char *data = hostile_recording();
	static const char *const outputs[] = { "report", "report --stacks 5", "report --folded", "script" };
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		char *out;
		int st = run_cmd(&out, false, "%s %s -i '%s'", sigprof_bin(), outputs[i], data);
		cr_assert_eq(st, 0, "%s exited %d", outputs[i], st);
		cr_assert_null(strchr(out, '\x1b'), "%s printed an ESC byte", outputs[i]);
		cr_assert_null(strchr(out, '\x9b'), "%s printed a C1 CSI (raw or UTF-8)", outputs[i]);
		cr_assert(strstr(out, "\\x1b[31m"), "%s does not show the escape as text", outputs[i]);
		free(out);
	}
	char *out;
	run_cmd(&out, false, "%s report -i '%s'", sigprof_bin(), data);
	cr_assert(strstr(out, "pwned-sym>\\x1b[31m\\xc2\\x9b"), "the symbol is not in the table, escaped:\n%s", out);
	cr_assert(strstr(out, "\\x1b[31m\\xc2\\x9b<p id=pwned-file>"), "the dso is not in the table, escaped");
	cr_assert(strstr(out, "pwned-argv>\\x1b[31m\\x9b"), "the command is not shown, escaped");
	free(out);
	/* the comm: the file name's first 15 bytes */
	run_cmd(&out, false, "%s script -i '%s' | grep -c -F '\\x1b[31m\\xc2\\x9b<p id=pw '", sigprof_bin(), data);
	cr_assert_neq(atoi(out), 0, "script shows no escaped comm");
	free(out);
}

/* `sigprof ARGS` succeeds and prints no ESC and no C1 CSI (raw 0x9b, or UTF-8 c2 9b); its output (to free). */
static char *output_without_escapes(const char *args)
{
	char *out;
	int st = run_cmd(&out, false, "%s %s", sigprof_bin(), args);
	cr_assert_eq(st, 0, "sigprof %s exited %d", args, st);
	cr_expect_null(strchr(out, '\x1b'), "sigprof %s printed an ESC byte", args);
	cr_expect_null(strchr(out, '\x9b'), "sigprof %s printed a C1 CSI (raw or UTF-8)", args);
	return out;
}

/*
 * A futex word in a shared mapping of a file named with escape sequences: the word is named by the file (the futex
 * section's rows and busiest word, the waits' endings, the timeline's [blocked: futex WORD]), and no output lets the
 * escapes reach the terminal.
 */
Test(terminal, a_futex_words_file_name_reaches_no_terminal_as_escapes, .timeout = 120)
{
	require_perf_events();
	require_root();
	char word_file[600], *out;
	snprintf(word_file, sizeof(word_file), "%s/\x1b[31m\xc2\x9b<p id=pwned-word>", test_dir());
	const char *data = test_path("hostile-word.data");
	char cmd[800];
	snprintf(cmd, sizeof(cmd), W "futex_shared 500 '%s'", word_file);
	free(record_workload(data, "", cmd));
	static const char *const outputs[] = { "report", "report --folded --weight wall", "report --folded", "script" };
	char args[1024];
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		snprintf(args, sizeof(args), "%s -i '%s'", outputs[i], data);
		free(output_without_escapes(args));
	}
	run_cmd(&out, false, "%s report -i '%s'", sigprof_bin(), data);
	cr_expect_not_null(strstr(out, "busiest word \\x1b[31m\\xc2\\x9b<p id=pwned-word>+0x0"),
			   "the word is not named by its file, escaped:\n%s", out);
	free(out);
}

/*
 * Kernel symbols from a kallsyms file (--kallsyms, or the copy a recording carries) whose names hold escape
 * sequences: the kernel frames, the lock names, the LKP-style figure keys built from kernel stacks (perf-sched.*,
 * perf-profile.*) and the diff rows show them escaped, in every text output.
 */
Test(terminal, kernel_symbols_with_escapes_reach_no_terminal, .timeout = 120)
{
	require_perf_events();
	require_root();
	char kallsyms[600], *out;
	snprintf(kallsyms, sizeof(kallsyms), "%s/hostile.kallsyms", test_dir());
	cr_assert_eq(run_cmd(&out, true, "awk '{ printf \"%%s %%s \\033[31m\\302\\233%%s\", $1, $2, $3; "
					 "for (i = 4; i <= NF; i++) printf \" %%s\", $i; printf \"\\n\" }' /proc/kallsyms > '%s'",
			     kallsyms),
		     0, "%s", out);
	free(out);
	const char *data = test_path("kernel-escapes.data");
	free(record_workload(data, "", W "futex_shared 500"));
	static const char *const outputs[] = { "report", "report --figures", "report --folded", "report --folded --weight wall",
					       "script" };
	char args[2048];
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		snprintf(args, sizeof(args), "%s --kallsyms '%s' -i '%s'", outputs[i], kallsyms, data);
		out = output_without_escapes(args);
		if (i == 1)
			cr_expect_not_null(strstr(out, ".\\x1b[31m\\xc2\\x9b"), "no figure key names a kernel symbol, escaped");
		free(out);
	}
	snprintf(args, sizeof(args), "diff --kallsyms '%s' '%s' '%s'", kallsyms, data, data);
	free(output_without_escapes(args));
}

/*
 * A program named with escape sequences, recorded with every default collector: its comm (the file name's first 15
 * bytes) in the waits' endings and chains, the Wall clock section and script's switch lines stays escaped.
 */
Test(terminal, a_comm_with_escapes_in_the_waits_and_the_timeline, .timeout = 120)
{
	require_perf_events();
	require_root();
	char dir[600], *out;
	snprintf(dir, sizeof(dir), "%s/hostile-comm", test_dir());
	cr_assert_eq(run_cmd(&out, true, "mkdir -p '%s' && cp " W "wait_endings '%s/" HOSTILE_FILE "'", dir, dir), 0, "%s",
		     out);
	free(out);
	const char *data = test_path("hostile-comm.data");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s/" HOSTILE_FILE "' pipe 20", dir);
	free(record_workload(data, "", cmd));
	char *text;
	run_cmd(&text, false, "%s report -i '%s'", sigprof_bin(), data);
	cr_assert_not_null(strstr(text, "ended by task tid"), "the premise: no wait ended by a task in:\n%s", text);
	cr_assert_not_null(strstr(text, "Wall clock"), "the premise: no Wall clock section in:\n%s", text);
	free(text);
	static const char *const outputs[] = { "report", "report --stacks 5", "report --folded --weight wake", "script" };
	char args[1024];
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		snprintf(args, sizeof(args), "%s -i '%s'", outputs[i], data);
		free(output_without_escapes(args));
	}
}
