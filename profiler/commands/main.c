/*
 * main.c: the command table.  `sigprof COMMAND [ARGS]` looks COMMAND up here
 * and calls its cmd_COMMAND(argc, argv) with argv[0] = COMMAND.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sigprof/commands/commands.h"
#include "sigprof/base/options.h"
#include "sigprof/base/util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "run a command and record its profile into sigprof.data" },
	{ "report", cmd_report, "show where the samples of a recording land: paths, functions, stacks" },
	{ "stat", cmd_stat, "run a command and count its events: exact totals, mean and %stddev over runs" },
	{ "diff", cmd_diff, "compare two sets of runs like the kernel test robot: what changed, by LKP's rules" },
	{ "script", cmd_script, "print every sample of a recording in time order, as perf script does, or as JSON lines" },
	{ "list", cmd_list, "the collectors and event classes this machine supports, and why not" },
	{ "archive", cmd_archive, "pack the binaries and debug files a recording needs, for a report elsewhere" },
};

static void commands_list(FILE *out)
{
	fprintf(out, "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'sigprof COMMAND --help' describes a command; man sigprof has the details.\n");
}

/*
 * sigprof's own options, before any command; the words "help" and "version"
 * do the same.  Read by hand: the first word is one of them or a command.
 */
static const struct option_spec main_specs[] = {
	{ .long_name = "version", .help = "sigprof's version" },
	{ .short_name = 'h', .long_name = "help", .help = "this text", .flags = OPTION_SYNOPSIS_LONG,
	  .kind = OPTION_HELP },
};

static const struct option_table main_option_table = {
	.command = "sigprof",
	.operands = "COMMAND [ARGS]",
	.description = "sigprof profiles the signal and futex paths of a workload.",
	.specs = main_specs,
	.count = ARRAY_SIZE(main_specs),
	.epilogue = commands_list,
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		options_usage(&main_option_table, stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	const struct option_spec *option = options_find(&main_option_table, name);
	if (option == &main_specs[1] || strcmp(name, "help") == 0) {
		options_usage(&main_option_table, stdout);
		return 0;
	}
	if (option == &main_specs[0] || strcmp(name, "version") == 0) {
		printf("sigprof %s\n", SIGPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	struct nearest near = { .word = name };
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		nearest_offer(&near, commands[i].name);
	if (strcmp(name, "top") == 0) {
		/* perf top's habit: the same picture from what sigprof has (sigprof(1), TOP) */
		sp_error("top: sigprof has no live view; the first screen of 'sigprof report' is its picture: record in "
			 "pieces with 'sigprof record --switch-output 2s -- CMD' and read the newest whole piece with "
			 "'sigprof report -i sigprof.data.TIMESTAMP' (sigprof(1), TOP)");
		return EXIT_USAGE;
	}
	if (name[0] == '-') {
		char why[512];
		sp_error("%s", options_failure(&main_option_table, argc, argv, 2, 0, why, sizeof(why)));
	} else if (near.best) {
		sp_error("%s is not a sigprof command; did you mean '%s'? See 'sigprof --help'", QUOTED(name), near.best);
	} else {
		sp_error("%s is not a sigprof command; see 'sigprof --help'", QUOTED(name));
	}
	return EXIT_USAGE;
}
