/*
 * main.c: the command table.  `sigprof COMMAND [ARGS]` looks COMMAND up here
 * and calls its cmd_COMMAND(argc, argv) with argv[0] = COMMAND.
 */
#include <stdio.h>
#include <string.h>

#include "sigprof/commands.h"
#include "sigprof/util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "run a command and record its profile into sigprof.data" },
	{ "report", cmd_report, "show where the samples of a recording land: paths, functions, stacks" },
	{ "stat", cmd_stat, "run a command and count its events: exact totals, mean and %stddev over runs" },
	{ "list", cmd_list, "the collectors and event classes this machine supports, and why not" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: sigprof [--version] [--help] COMMAND [ARGS]\n\n"
		     "sigprof profiles the signal and futex paths of a workload.\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'sigprof COMMAND --help' describes a command; man sigprof has the details.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("sigprof %s\n", SIGPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	sp_error("%s is not a sigprof command; see 'sigprof --help'", QUOTED(name));
	return EXIT_USAGE;
}
