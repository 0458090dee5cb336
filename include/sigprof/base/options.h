/*
 * options.h: a command's options as one table, from which both getopt_long's
 * arrays and the --help text are made, so the two cannot drift apart (perf's
 * OPT_* tables and git's parse-options do the same).
 *
 * Base layer: it knows nothing of sigprof's other modules and prints only to
 * the FILE* it is handed.  The command still runs the getopt_long loop and
 * its switch (the values, their errors and exit codes stay its own); the
 * table gives it the long options and the short string:
 *
 *	static const struct option_spec specs[] = {
 *		{ .short_name = 'o', .long_name = "output", .arg = "FILE", .help = "write to FILE",
 *		  .default_value = "sigprof.data" },
 *		{ .short_name = 'q', .long_name = "quiet", .help = "no closing line" },
 *		OPTION_HELP_SPEC,
 *	};
 *	static const struct option_table table = { .command = "sigprof cmd", .operands = "CMD [ARGS...]",
 *		.description = "What cmd does.", .specs = specs, .count = ARRAY_SIZE(specs) };
 *	struct getopt_tables g;
 *	options_getopt(&table, &g);
 *	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) ...
 *
 * and --help prints (options_usage):
 *
 *	usage: sigprof cmd [-o FILE] [-q] CMD [ARGS...]
 *
 *	What cmd does.
 *
 *	  -o, --output FILE  write to FILE (default sigprof.data)
 *	  -q, --quiet        no closing line
 *	  -h, --help         this text
 */
#ifndef SIGPROF_OPTIONS_H
#define SIGPROF_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OPTIONS_WIDTH 100    /* --help is wrapped at this many columns */
#define OPTIONS_MAX 48       /* options of one table */
/* The help text starts in this column at most; an option heading longer than that puts its help on the next line. */
#define OPTIONS_HELP_COLUMN_MAX 26

/* A number's macro as the string a help text or a default shows: OPTIONS_STR(DEFAULT_FREQUENCY) is "4000". */
#define OPTIONS_STR_(x) #x
#define OPTIONS_STR(x) OPTIONS_STR_(x)

/* option_spec.flags */
#define OPTION_REPEATABLE 1u    /* the synopsis shows "[-x ARG]..." */
#define OPTION_NO_SYNOPSIS 2u   /* only in the option list (--help itself) */
#define OPTION_SYNOPSIS_LONG 4u /* the synopsis names it by its long name, not its short one */

struct option_spec {
	int id;                 /* what getopt_long returns for it; 0: short_name (a long-only option needs one) */
	char short_name;        /* -x, or 0 for a long option only */
	const char *long_name;  /* --name, or NULL for a short option only */
	const char *alias;      /* a second long name of the same option, or NULL */
	const char *arg;        /* the argument's name in the option list (FILE, N); NULL: it takes none */
	const char *values;     /* the argument as the synopsis shows it (self|total|name); NULL: arg */
	const char *help;       /* one sentence or two, wrapped under the help column */
	const char *default_value; /* printed after the help as "(default VALUE)"; NULL: none */
	unsigned flags;         /* OPTION_* */
	int group;              /* nonzero: neighbours of the same group are alternatives, "[-F HZ | -c PERIOD]" */
};

/* -h, --help, which every command has: in the option list, not in the synopsis. */
#define OPTION_HELP_SPEC { .short_name = 'h', .long_name = "help", .help = "this text", .flags = OPTION_NO_SYNOPSIS }

struct option_table {
	const char *command;      /* the synopsis's first words: "sigprof record" */
	const char *operands;     /* the synopsis after the options ("[--] CMD [ARGS...]"), or NULL */
	const char *description;  /* the paragraph between the synopsis and the option list */
	const struct option_spec *specs;
	size_t count;
	bool stop_at_operand;     /* options end at the first operand: the workload's own arguments follow */
	void (*epilogue)(FILE *out); /* prints what follows the option list (a blank line first), or NULL */
};

/* getopt_long's arguments for one table, filled by options_getopt(). */
struct getopt_tables {
	struct option longopts[2 * OPTIONS_MAX + 1]; /* a long name and an alias per option, then zeros */
	char shortopts[3 * OPTIONS_MAX + 2];          /* "+" when stop_at_operand, then "x" or "x:" per option */
};

/*
 * Fill g from t; -E2BIG when t has more than OPTIONS_MAX options, -EINVAL
 * when an option has no name or no id, or an id other than its short name
 * (getopt_long would return one for -x and the other for --name).
 */
int options_getopt(const struct option_table *t, struct getopt_tables *g);

/* What getopt_long returns for s: its id, else its short name. */
int option_id(const struct option_spec *s);

/* The option of t that arg names exactly ("--name", "--alias" or "-x"), or NULL: for commands that parse by hand. */
const struct option_spec *options_find(const struct option_table *t, const char *arg);

/*
 * What was wrong when getopt_long returned '?' (options_getopt() turned
 * getopt's own messages off), for the command's error line: "unrecognized
 * option '--jsn'; did you mean '--json'?", "option '--input' requires an
 * argument (FILE)", "option '--json' takes no argument", "option '--s' is
 * ambiguous: --stacks, --sort".  Pass getopt's optind and optopt as they
 * are right after the '?'.  Returns buf.
 */
const char *options_failure(const struct option_table *t, int argc, char **argv, int failed_optind, int failed_optopt,
			    char *buf, size_t len);

/*
 * The position of arg among the '|'-separated values of the option whose
 * getopt value is id (0 for "self" in "self|total|name"), or -1 when it is
 * none of them (or the option has no such list).
 */
int option_choice(const struct option_table *t, int id, const char *arg);

/* The whole --help text: synopsis, description, option list, then t->epilogue. */
void options_usage(const struct option_table *t, FILE *out);

/* The synopsis alone: "usage: sigprof record [-o FILE] ...", wrapped under its first option. */
void options_synopsis(const struct option_table *t, FILE *out);

/* The option list alone, one option a line (or more, wrapped), its help in a column of its own. */
void options_list(const struct option_table *t, FILE *out);

/*
 * text word-wrapped at OPTIONS_WIDTH: the first line continues a line already
 * at column first_column, the others start with indent spaces; a newline in
 * text starts a new line there too.  Ends with a newline.
 */
void options_wrap(FILE *out, const char *text, size_t first_column, size_t indent);

#endif
