/*
 * options.h: a command's options as one table, from which getopt_long's
 * arrays, the --help text and the parsing itself are made, so that each
 * option is written once (perf's OPT_* tables and git's parse-options do the
 * same): its names, argument, help and default, and what it sets, bound to a
 * field of the command's arguments struct or to a parser of its own.
 *
 * Base layer: it knows nothing of sigprof's other modules and prints only to
 * the FILE* it is handed.  A command's table and its parsing:
 *
 *	struct cmd_args { const char *output; bool quiet; unsigned top; };
 *	static const struct option_spec specs[] = {
 *		{ .short_name = 'o', .long_name = "output", .arg = "FILE", .help = "write to FILE",
 *		  .default_value = "sigprof.data", OPTION_STRING(struct cmd_args, output) },
 *		{ .short_name = 'q', .long_name = "quiet", .help = "no closing line",
 *		  OPTION_TRUE(struct cmd_args, quiet) },
 *		{ .short_name = 'n', .long_name = "top", .arg = "N", .help = "functions to list",
 *		  OPTION_UINT(struct cmd_args, top, 0, 1000) },
 *		OPTION_HELP_SPEC,
 *	};
 *	static const struct option_table table = { .command = "sigprof cmd", .operands = "CMD [ARGS...]",
 *		.description = "What cmd does.", .specs = specs, .count = ARRAY_SIZE(specs) };
 *	struct cmd_args args = { .output = "sigprof.data" };
 *	struct options_parsed parsed;
 *	switch (options_parse(&table, argc, argv, &args, &parsed)) ...
 *
 * and --help prints (options_usage):
 *
 *	usage: sigprof cmd [-o FILE] [-q] [-n N] CMD [ARGS...]
 *
 *	What cmd does.
 *
 *	  -o, --output FILE  write to FILE (default sigprof.data)
 *	  -q, --quiet        no closing line
 *	  -n, --top N        functions to list
 *	  -h, --help         this text
 *
 * A value the binding refuses ("-n x") ends the parse with one line naming
 * the option and the value ("-n x: expected a number from 0 to 1000"); an
 * option's parser writes its own.  Checks of one option against another
 * (two output formats) belong after the parse, with options_parsed.given.
 */
#ifndef SIGPROF_OPTIONS_H
#define SIGPROF_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* What an option does when given (option_spec.kind). */
enum option_kind {
	OPTION_UNBOUND,  /* nothing: options_parse() refuses the table (a table for --help only) */
	OPTION_HELP,     /* -h: options_parse() stops and says so */
	OPTION_KIND_TRUE,    /* the bool field becomes true */
	OPTION_KIND_SET,     /* the int (or enum) field becomes .value */
	OPTION_KIND_STRING,  /* the const char * field becomes the argument */
	OPTION_KIND_UINT,    /* the unsigned or uint64_t field becomes the argument, a number from .min to .max */
	OPTION_KIND_CHOICE,  /* the int (or enum) field becomes the argument's position among .values, or
			      * .choices[that position] */
	OPTION_KIND_CALLBACK, /* .parse(spec, field, argument, err): the field is the whole struct when unbound */
};

struct option_spec;
/*
 * An option's own parser: take arg (NULL for an option without one) into
 * field (the bound field, or the command's whole struct); 0, or -1 with one
 * line in err naming the option and what was wrong, without the command.
 */
typedef int (*option_parser)(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);

struct option_spec {
	char short_name;        /* -x, or 0 for a long option only */
	const char *long_name;  /* --name, or NULL for a short option only */
	const char *alias;      /* a second long name of the same option, or NULL */
	const char *arg;        /* the argument's name in the option list (FILE, N); NULL: it takes none */
	const char *values;     /* the argument as the synopsis shows it (self|total|name); NULL: arg */
	const char *help;       /* one sentence or two, wrapped under the help column */
	const char *default_value; /* printed after the help as "(default VALUE)"; NULL: none */
	unsigned flags;         /* OPTION_* */
	int group;              /* nonzero: neighbours of the same group are alternatives, "[-F HZ | -c PERIOD]" */
	/* the binding: what the option sets (the OPTION_TRUE()... macros below fill these) */
	enum option_kind kind;
	size_t offset, size;    /* the field: its offset in the command's struct and its size */
	long long value;        /* OPTION_KIND_SET's value; for a parser, what it may share among options */
	uint64_t min, max;      /* OPTION_KIND_UINT's range */
	const char *what;       /* OPTION_KIND_UINT's number in its error line: "a number of runs"; NULL: "a number" */
	const int *choices;     /* OPTION_KIND_CHOICE: the value of each of .values, or NULL: its position */
	option_parser parse;    /* OPTION_KIND_CALLBACK */
};

/* The field of a binding: its offset and size in the command's struct. */
#define OPTION_FIELD(type, field) .offset = offsetof(type, field), .size = sizeof(((type *)0)->field)
/* -q: the bool field becomes true. */
#define OPTION_TRUE(type, field) .kind = OPTION_KIND_TRUE, OPTION_FIELD(type, field)
/* --json: the int or enum field becomes v. */
#define OPTION_SET(type, field, v) .kind = OPTION_KIND_SET, OPTION_FIELD(type, field), .value = (v)
/* -o FILE: the const char * field becomes FILE. */
#define OPTION_STRING(type, field) .kind = OPTION_KIND_STRING, OPTION_FIELD(type, field)
/* -n N: the unsigned or uint64_t field becomes N, from lo to hi. */
#define OPTION_UINT(type, field, lo, hi) .kind = OPTION_KIND_UINT, OPTION_FIELD(type, field), .min = (lo), .max = (hi)
/* --color auto|always|never: the int or enum field becomes the position of the value among .values. */
#define OPTION_CHOICE(type, field) .kind = OPTION_KIND_CHOICE, OPTION_FIELD(type, field)
/* --sort KEY: fn(spec, the whole struct, KEY, err, errlen). */
#define OPTION_CALLBACK(fn) .kind = OPTION_KIND_CALLBACK, .parse = (fn)
/* --path-rule R: fn(spec, the field, R, err, errlen). */
#define OPTION_CALLBACK_FIELD(type, field, fn) .kind = OPTION_KIND_CALLBACK, OPTION_FIELD(type, field), .parse = (fn)

/* -h, --help, which every command has: in the option list, not in the synopsis. */
#define OPTION_HELP_SPEC                                                                                  \
	{ .short_name = 'h', .long_name = "help", .help = "this text", .flags = OPTION_NO_SYNOPSIS, .kind = OPTION_HELP }

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
 * What getopt_long returns for each option: its short name, or for a long
 * option only OPTIONS_LONG_ONLY + its index in the table.
 */
#define OPTIONS_LONG_ONLY 0x1000

/*
 * Fill g from t; -E2BIG when t has more than OPTIONS_MAX options, -EINVAL
 * when an option has no name.
 */
int options_getopt(const struct option_table *t, struct getopt_tables *g);

/* What getopt_long returns for s, an option of t. */
int option_id(const struct option_table *t, const struct option_spec *s);

/* The option of t that arg names exactly ("--name", "--alias" or "-x"), or NULL: for commands that parse by hand. */
const struct option_spec *options_find(const struct option_table *t, const char *arg);

/* How an error line names s: "-x" when it has a short name, else "--name". */
const char *option_display_name(const struct option_spec *s, char *buf, size_t len);

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
 * The position of arg among the '|'-separated values of s (0 for "self" in
 * "self|total|name"), or -1 when it is none of them (or s has no such list).
 */
int option_choice(const struct option_spec *s, const char *arg);

/* What options_parse() found. */
enum options_outcome {
	OPTIONS_PARSED,      /* every option taken; operand is the first operand */
	OPTIONS_HELP_ASKED,  /* -h or --help: the command prints options_usage() and ends with 0 */
	OPTIONS_UNKNOWN,     /* an option t lacks, or one without its argument: why says which ("Try --help") */
	OPTIONS_BAD_VALUE,   /* an option's value was refused: why names the option and the value */
};

struct options_parsed {
	int operand;         /* argv's first operand (argc when none) */
	uint64_t given;      /* bit i: the table's option i was given */
	char why[512];       /* OPTIONS_UNKNOWN, OPTIONS_BAD_VALUE: what was wrong, without the command */
};

/*
 * Parse argv[1..argc) with t's bindings into args, the command's struct,
 * in the order given (so a later option overrides an earlier one, and
 * repeated ones add up as their parsers do); stops at the first problem.
 * Uses getopt_long (and its optind): permutation (unless stop_at_operand),
 * unique prefixes of long names, --name=value.
 */
enum options_outcome options_parse(const struct option_table *t, int argc, char **argv, void *args,
				   struct options_parsed *parsed);

/* Whether the option of t named long_name (or -short_name when long_name is NULL) was given. */
bool options_given(const struct option_table *t, const struct options_parsed *parsed, const char *long_name,
		   char short_name);

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
