/*
 * test_help.c: --help and bad options, as a user meets them.  Each command
 * prints its help (made from its option table, profiler/base/options.c) on
 * stdout with exit status 0; a bad option still gets getopt's line, the
 * command's "Try" line and exit status 2.  sigprof's own options (main.c,
 * which the unit tests cannot link) are held against the man page here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

static const char *const commands[] = { "record", "report", "stat", "diff", "script", "list" };

Test(help, every_command_prints_its_help_on_stdout_and_exits_0)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		static const char *const flags[] = { "--help", "-h" };
		for (size_t f = 0; f < 2; f++) {
			char *out, *merged, want[64];
			cr_assert_eq(run_cmd(&out, false, "%s %s %s", sigprof_bin(), commands[i], flags[f]), 0);
			cr_assert_eq(run_cmd(&merged, true, "%s %s %s", sigprof_bin(), commands[i], flags[f]), 0);
			snprintf(want, sizeof(want), "usage: sigprof %s ", commands[i]);
			cr_assert(strncmp(out, want, strlen(want)) == 0, "%s %s: %s", commands[i], flags[f], out);
			cr_assert_str_eq(merged, out, "%s %s writes nothing on stderr", commands[i], flags[f]);
			cr_assert_not_null(strstr(out, "\n  -h, --help "), "%s %s lists -h, --help", commands[i],
					   flags[f]);
			free(out);
			free(merged);
		}
	}
}

Test(help, a_bad_option_gets_getopts_line_the_try_line_and_status_2)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char *out, want[64];
		cr_assert_eq(run_cmd(&out, true, "%s %s --no-such-option", sigprof_bin(), commands[i]), 2);
		snprintf(want, sizeof(want), "Try 'sigprof %s --help'.\n", commands[i]);
		cr_assert_not_null(strstr(out, "unrecognized option"), "%s: %s", commands[i], out);
		cr_assert_not_null(strstr(out, want), "%s: %s", commands[i], out);
		free(out);
	}
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s report -n", sigprof_bin()), 2);
	cr_assert_not_null(strstr(out, "requires an argument"), "%s", out);
	free(out);
	cr_assert_eq(run_cmd(&out, true, "%s report --sort size", sigprof_bin()), 2);
	cr_assert_str_eq(out, "sigprof: report: --sort 'size': 'size' is no key: expected self, total, name, or perf's sym, "
			 "dso, comm\n");
	free(out);
	/* options end at the workload: its -h is its own, not a request for sigprof's help */
	cr_assert_eq(run_cmd(&out, true, "%s stat -o /dev/null no-such-workload -h", sigprof_bin()), 127, "%s", out);
	cr_assert_str_eq(out, "sigprof: stat: cannot run 'no-such-workload': command not found\n");
	free(out);
	cr_assert_eq(run_cmd(&out, true, "%s record -o /dev/null no-such-workload -h", sigprof_bin()), 127, "%s",
		     out);
	free(out);
	/* an option given after '--' is the workload's name: one line that says where options go */
	const char *after[] = { "record -o /dev/null -- -a sleep 1", "stat -o /dev/null -- -a sleep 1" };
	for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++) {
		cr_assert_eq(run_cmd(&out, true, "%s %s", sigprof_bin(), after[i]), 127, "%s", out);
		cr_assert_eq(count_lines(out), 1, "%s: %s", after[i], out);
		cr_assert(strstr(out, "cannot run '-a': command not found (sigprof's options go before '--'"), "%s: %s",
			  after[i], out);
		free(out);
	}
}

/* The names ("--version") that a line of text holds as options. */
static bool names_option(const char *text, const char *name)
{
	size_t len = strlen(name);
	for (const char *at = strstr(text, name); at; at = strstr(at + 1, name))
		if ((at == text || at[-1] == ' ' || at[-1] == '[') && !strchr("-abcdefghijklmnopqrstuvwxyz", at[len]))
			return true;
	return false;
}

Test(help, sigprofs_own_options_are_those_of_the_man_synopsis)
{
	char *help;
	cr_assert_eq(run_cmd(&help, false, "%s --help", sigprof_bin()), 0);
	cr_assert(strncmp(help, "usage: sigprof [", 16) == 0, "%s", help);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		cr_assert(names_option(help, commands[i]), "sigprof --help does not name %s", commands[i]);
	/* the man page's last synopsis line: .B sigprof, then one .RB [ \-\-NAME ] per option */
	FILE *f = fopen("docs/sigprof.1", "r");
	cr_assert_not_null(f);
	char line[512];
	bool in_synopsis = false;
	size_t documented = 0;
	while (fgets(line, sizeof(line), f) && strncmp(line, ".SH DESCRIPTION", 15) != 0) {
		if (strcmp(line, ".B sigprof\n") == 0) {
			in_synopsis = true;
		} else if (in_synopsis && strncmp(line, ".RB [ \\-\\-", 10) == 0) {
			char name[64] = "--";
			sscanf(line + 10, "%61[a-z\\-]", name + 2);
			for (char *from = name, *to = name; (*to = *from); from++) /* \- to - */
				to += !(from[0] == '\\' && from[1] == '-');
			cr_assert(names_option(help, name), "sigprof --help does not name %s", name);
			documented++;
		}
	}
	fclose(f);
	cr_assert_eq(documented, 2, "the man page's synopsis of sigprof names --version and --help");
	/* and --help's option list names nothing more */
	size_t listed = 0;
	for (const char *at = strstr(help, "\n  "); at; at = strstr(at + 1, "\n  "))
		listed += at[3] == '-' || strncmp(at + 3, "    --", 6) == 0;
	cr_assert_eq(listed, documented, "%s", help);
	free(help);
}
