/*
 * cli.h: what the commands share in talking to the user at a terminal: the
 * parsing of their option tables with its error lines (with the nearest
 * valid option), the options several commands bind alike, and the pager.
 *
 * Commands layer: these print (to stderr, or through the pager to stdout).
 */
#ifndef SIGPROF_CLI_H
#define SIGPROF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "sigprof/base/options.h"

/*
 * Parse a command's options (options_parse) into args and say what went
 * wrong: 0 when parsed (parsed->operand: the first operand); 1 after
 * printing --help to stdout (the command ends with 0); -1 after one error
 * line: "sigprof: report: -n x: expected a number from 0 to 1000000", or
 * for an option the command lacks "sigprof: report: unrecognized option
 * '--jsn'; did you mean '--json'?" and "Try 'sigprof report --help'.".
 */
int cli_parse_options(const struct option_table *t, int argc, char **argv, void *args,
		      struct options_parsed *parsed);

/*
 * The pager.  pager_begin() returns where the command writes its output:
 * stdout itself, or (enabled and stdout a terminal) a buffer that
 * pager_end() shows through $PAGER (default "less -FRX"; LESS=FRX when
 * unset, as git does) when it is longer than the screen, and writes to
 * stdout as it is otherwise.  An empty $PAGER or "cat" means no pager.
 * pager_end() returns 0 or -errno (writing failed).
 */
struct pager {
	FILE *out;      /* what pager_begin() returned */
	char *buf;      /* the buffered output, or NULL */
	size_t len;
};
FILE *pager_begin(struct pager *pg, bool enabled);
int pager_end(struct pager *pg);

/* Parsers of the options several commands share (option_parser, options.h); each names its option in err. */
/* --color auto|always|never (and yes, no) into an int field (enum term_color_mode). */
int cli_color_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
/* --path-rule GLOB=PATH and --path-rules FILE into a struct path_rules * field. */
int cli_path_rule_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
int cli_path_rules_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
/* --pid, --tid (.value 1), --comm, --dso (.value 1), --time into a struct profile_filter field. */
int cli_filter_ids_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
int cli_filter_names_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
int cli_filter_time_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);

/*
 * The recording filters (filter.h) as options, the same in report's and
 * diff's option tables (and so in their --help and man page sections):
 * --pid, --tid, --comm, --dso, --time, into the struct profile_filter
 * field of the command's struct type.
 */
#define CLI_FILTER_OPTION_SPECS(type, field)                                                                      \
	{ .long_name = "pid", .arg = "PIDS", .values = "PID[,PID...]", .flags = OPTION_REPEATABLE,                  \
	  .help = "only the samples and records of these processes",                                              \
	  OPTION_CALLBACK_FIELD(type, field, cli_filter_ids_option) },                                            \
	{ .long_name = "tid", .arg = "TIDS", .values = "TID[,TID...]", .flags = OPTION_REPEATABLE,                  \
	  .help = "only those of these threads", OPTION_CALLBACK_FIELD(type, field, cli_filter_ids_option),       \
	  .value = 1 },                                                                                           \
	{ .long_name = "comm", .arg = "NAMES", .values = "COMM[,COMM...]", .flags = OPTION_REPEATABLE,              \
	  .help = "only those of the processes with these names",                                                 \
	  OPTION_CALLBACK_FIELD(type, field, cli_filter_names_option) },                                          \
	{ .long_name = "dso", .arg = "DSOS", .values = "DSO[,DSO...]", .flags = OPTION_REPEATABLE,                  \
	  .help = "only the samples whose sampled address is in these binaries (a file name, a path or [kernel])", \
	  OPTION_CALLBACK_FIELD(type, field, cli_filter_names_option), .value = 1 },                             \
	{ .long_name = "time", .arg = "RANGE", .values = "START,END",                                              \
	  .help = "only what happened between START and END: seconds from the first record (1.5,3) or "          \
		  "percentages of the recording (0%,25%); either may be empty",                                   \
	  OPTION_CALLBACK_FIELD(type, field, cli_filter_time_option) }

/* Whether any option of CLI_FILTER_OPTION_SPECS was given. */
bool cli_filter_given(const struct option_table *t, const struct options_parsed *parsed);

/* --input-format auto|sigprof|perf into an int field (enum sp_input_format), for report and script. */
#define CLI_INPUT_FORMAT_OPTION_SPEC(type, field)                                                                 \
	{ .long_name = "input-format", .arg = "FMT", .values = "auto|sigprof|perf",                                \
	  .help = "what -i FILE is: a sigprof recording or a perf.data file (auto: by its magic)",                \
	  .default_value = "auto", OPTION_CHOICE(type, field) }

#endif
