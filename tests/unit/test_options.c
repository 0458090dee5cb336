/*
 * test_options.c: the option tables of options.h.  A synthetic table must
 * give getopt_long arrays that parse what the table says (each long name and
 * alias, each short letter, with or without an argument, as its id), a
 * --help made of the table: the synopsis names every option once, with its
 * argument, grouped and repeated as flagged; the option list gives every
 * option its heading, help and default, wrapped at OPTIONS_WIDTH; and a
 * parse that sets each option's bound field, or stops at the first value
 * refused with one line naming the option and the value.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/options.h"
#include "sigprof/base/util.h"

/* The fields the table binds. */
struct args {
	const char *output;
	uint64_t freq;
	unsigned count;
	int sort;
	bool json, names;
	const char *longwinded;
	int seen_g;     /* -g: its parser counts it */
};

static int count_g(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s, (void)arg, (void)err, (void)errlen;
	((struct args *)field)->seen_g++;
	return 0;
}

static const int sort_values[] = { 7, 9 };

static const struct option_spec specs[] = {
	{ .short_name = 'o', .long_name = "output", .arg = "FILE", .help = "write to FILE",
	  .default_value = "out.data", OPTION_STRING(struct args, output) },
	{ .short_name = 'F', .long_name = "freq", .arg = "HZ", .group = 1, .help = "samples per second",
	  OPTION_UINT(struct args, freq, 1, 100000), .what = "a frequency" },
	{ .short_name = 'c', .long_name = "count", .arg = "PERIOD", .group = 1, .help = "sample every PERIOD events",
	  OPTION_UINT(struct args, count, 0, 10) },
	{ .short_name = 'g', .help = "same as --sort self", OPTION_CALLBACK(count_g) },
	{ .long_name = "json", .help = "one JSON object", OPTION_TRUE(struct args, json) },
	{ .long_name = "sort", .alias = "order", .arg = "KEY", .values = "self|total",
	  .flags = OPTION_REPEATABLE, .help = "order by KEY", .default_value = "self",
	  OPTION_CHOICE(struct args, sort), .choices = sort_values },
	{ .long_name = "a-rather-long-option-name", .arg = "VALUE",
	  .help = "an option whose heading is wider than the help column, and whose help is long enough to be "
		  "wrapped onto a second line at one hundred columns", OPTION_STRING(struct args, longwinded) },
	{ .short_name = 'n', .long_name = "names", .flags = OPTION_SYNOPSIS_LONG, .help = "also the names",
	  OPTION_TRUE(struct args, names) },
	OPTION_HELP_SPEC,
};

static const struct option_table table = {
	.command = "prog cmd",
	.operands = "[--] CMD [ARGS...]",
	.description = "What cmd does.",
	.specs = specs,
	.count = ARRAY_SIZE(specs),
	.stop_at_operand = true,
};

/* What print(t, out) writes, malloc'd. */
static char *capture(void (*print)(const struct option_table *, FILE *), const struct option_table *t)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert_not_null(out);
	print(t, out);
	fclose(out);
	return text;
}

static void assert_lines_fit(const char *text)
{
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n");
		cr_assert_leq(len, OPTIONS_WIDTH, "a line of %zu columns: %.*s", len, (int)len, line);
		line += len + (line[len] == '\n');
	}
}

Test(options, getopt_arrays_hold_every_name_of_the_table)
{
	struct getopt_tables g;
	cr_assert_eq(options_getopt(&table, &g), 0);
	cr_assert_str_eq(g.shortopts, "+o:F:c:gnh");
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		const struct option_spec *s = &specs[i];
		const char *names[] = { s->long_name, s->alias };
		for (size_t k = 0; k < 2; k++) {
			if (!names[k])
				continue;
			const struct option *o = &g.longopts[n++];
			cr_assert_str_eq(o->name, names[k]);
			cr_assert_eq(o->has_arg, s->arg ? required_argument : no_argument, "--%s", names[k]);
			cr_assert_null(o->flag);
			cr_assert_eq(o->val, option_id(&table, s), "--%s", names[k]);
		}
	}
	cr_assert_null(g.longopts[n].name, "the long options end with a zero entry");
}

Test(options, getopt_long_parses_what_the_table_says)
{
	struct getopt_tables g;
	cr_assert_eq(options_getopt(&table, &g), 0);
	char *argv[] = { "cmd", "-o", "f", "--freq=9", "-g", "--json", "--order", "total", "--sort", "self",
			 "-n", "--", "workload", "-o", NULL };
	int argc = (int)ARRAY_SIZE(argv) - 1;
	static const struct {
		int id;
		const char *arg;
	} want[] = { { 'o', "f" }, { 'F', "9" }, { 'g', NULL }, { OPTIONS_LONG_ONLY + 4, NULL },
		     { OPTIONS_LONG_ONLY + 5, "total" }, { OPTIONS_LONG_ONLY + 5, "self" }, { 'n', NULL } };
	optind = 1;
	opterr = 0;
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		int c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL);
		cr_assert_eq(c, want[i].id, "option %zu: %d", i, c);
		if (want[i].arg)
			cr_assert_str_eq(optarg, want[i].arg);
	}
	cr_assert_eq(getopt_long(argc, argv, g.shortopts, g.longopts, NULL), -1);
	cr_assert_str_eq(argv[optind], "workload", "options end at the operand: the workload's -o is its own");
	/* an option the table lacks is refused, as is a table option without its argument */
	char *bad[] = { "cmd", "--futex", "-o", NULL };
	optind = 1;
	cr_assert_eq(getopt_long(3, bad, g.shortopts, g.longopts, NULL), '?');
	cr_assert_eq(getopt_long(3, bad, g.shortopts, g.longopts, NULL), '?');
	opterr = 1;
}

Test(options, getopt_refuses_a_table_it_cannot_express)
{
	struct getopt_tables g;
	struct option_spec nameless[] = { { .help = "no name" } };
	struct option_table t = { .command = "x", .specs = nameless, .count = 1 };
	cr_assert_eq(options_getopt(&t, &g), -EINVAL);
	struct option_spec many[OPTIONS_MAX + 1];
	for (size_t i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = (struct option_spec){ .long_name = "opt", .help = "one of many" };
	t.specs = many;
	t.count = OPTIONS_MAX;
	cr_assert_eq(options_getopt(&t, &g), 0);
	t.count = OPTIONS_MAX + 1;
	cr_assert_eq(options_getopt(&t, &g), -E2BIG);
}

Test(options, synopsis_names_every_option_as_the_table_says)
{
	char *text = capture(options_synopsis, &table);
	cr_assert_str_eq(text, "usage: prog cmd [-o FILE] [-F HZ | -c PERIOD] [-g] [--json] [--sort self|total]...\n"
			       "                [--a-rather-long-option-name VALUE] [--names] [--] CMD [ARGS...]\n");
	assert_lines_fit(text);
	free(text);
}

/* The item of s as the synopsis shows it, built here from the fields (not by the code under test). */
static void expected_item(const struct option_spec *s, char *buf, size_t n)
{
	const char *arg = s->values ? s->values : s->arg;
	if (s->short_name && !(s->flags & OPTION_SYNOPSIS_LONG))
		snprintf(buf, n, "-%c%s%s", s->short_name, arg ? " " : "", arg ? arg : "");
	else
		snprintf(buf, n, "--%s%s%s", s->long_name, arg ? " " : "", arg ? arg : "");
}

Test(options, synopsis_wraps_under_the_command_and_keeps_items_whole)
{
	/* twenty options of 12 columns each: three lines, each continued under the first option */
	struct option_spec many[20];
	char names[20][16];
	for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
		snprintf(names[i], sizeof(names[i]), "option-%02zu", i);
		many[i] = (struct option_spec){ .long_name = names[i], .help = "h" };
	}
	struct option_table t = { .command = "prog", .operands = "FILE", .specs = many, .count = ARRAY_SIZE(many) };
	char *text = capture(options_synopsis, &t);
	assert_lines_fit(text);
	const char *at = text;
	for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
		char item[64], bracketed[70];
		expected_item(&many[i], item, sizeof(item));
		snprintf(bracketed, sizeof(bracketed), "[%s]", item);
		const char *found = strstr(at, bracketed);
		cr_assert_not_null(found, "%s after the previous option in: %s", bracketed, text);
		at = found + strlen(bracketed);
	}
	cr_assert_str_eq(at, " FILE\n");
	for (const char *nl = strchr(text, '\n'); nl && nl[1]; nl = strchr(nl + 1, '\n'))
		cr_assert(strncmp(nl + 1, "            [--option-", 22) == 0, "a continuation line under the first "
			  "option: %s", nl + 1);
	free(text);
}

Test(options, option_list_gives_each_option_its_heading_help_and_default)
{
	char *text = capture(options_list, &table);
	cr_assert_str_eq(text,
		"  -o, --output FILE   write to FILE (default out.data)\n"
		"  -F, --freq HZ       samples per second\n"
		"  -c, --count PERIOD  sample every PERIOD events\n"
		"  -g                  same as --sort self\n"
		"      --json          one JSON object\n"
		"      --sort, --order KEY\n"
		"                      order by KEY (default self)\n"
		"      --a-rather-long-option-name VALUE\n"
		"                      an option whose heading is wider than the help column, and whose help is long\n"
		"                      enough to be wrapped onto a second line at one hundred columns\n"
		"  -n, --names         also the names\n"
		"  -h, --help          this text\n");
	assert_lines_fit(text);
	free(text);
}

Test(options, usage_is_synopsis_description_list_and_epilogue)
{
	char *synopsis = capture(options_synopsis, &table), *list = capture(options_list, &table);
	char *usage = capture(options_usage, &table);
	char *want;
	cr_assert_geq(asprintf(&want, "%s\nWhat cmd does.\n\n%s", synopsis, list), 0);
	cr_assert_str_eq(usage, want);
	free(want);
	free(usage);
	free(synopsis);
	free(list);
}

static void epilogue(FILE *out)
{
	fputs("The end.\n", out);
}

Test(options, usage_ends_with_the_epilogue_after_a_blank_line)
{
	struct option_table t = table;
	t.epilogue = epilogue;
	char *usage = capture(options_usage, &t);
	size_t len = strlen(usage);
	cr_assert_str_eq(usage + len - strlen("\n\nThe end.\n"), "\n\nThe end.\n");
	free(usage);
}

Test(options, find_matches_whole_names_only)
{
	cr_assert_eq(options_find(&table, "--output"), &specs[0]);
	cr_assert_eq(options_find(&table, "-o"), &specs[0]);
	cr_assert_eq(options_find(&table, "--order"), &specs[5], "an alias");
	cr_assert_eq(options_find(&table, "-h"), &specs[ARRAY_SIZE(specs) - 1]);
	cr_assert_null(options_find(&table, "--out"), "no abbreviations");
	cr_assert_null(options_find(&table, "-oFILE"));
	cr_assert_null(options_find(&table, "output"));
	cr_assert_null(options_find(&table, "-"));
	cr_assert_null(options_find(&table, ""));
}

static void wrap_capture(char **text, const char *in, size_t first_column, size_t indent)
{
	size_t len;
	FILE *out = open_memstream(text, &len);
	options_wrap(out, in, first_column, indent);
	fclose(out);
}

Test(options, wrap_fills_lines_to_the_width_and_honours_newlines)
{
	char *text;
	char words[400] = "";
	for (int i = 0; i < 40; i++)
		strcat(words, "word5678 ");
	wrap_capture(&text, words, 0, 4);
	/* 9 columns a word: eleven words (98 columns with their spaces) fit on a line of 100 */
	const char *nl = strchr(text, '\n');
	cr_assert_eq(nl - text, 11 * 8 + 10, "%s", text);
	cr_assert(strncmp(nl + 1, "    word5678", 12) == 0, "%s", text);
	assert_lines_fit(text);
	free(text);
	wrap_capture(&text, "one.  two\nthree", 90, 2);
	cr_assert_str_eq(text, "one.  two\n  three\n", "the two spaces after a period stay");
	free(text);
	wrap_capture(&text, "a-word-longer-than-what-is-left", 80, 2);
	cr_assert_str_eq(text, "a-word-longer-than-what-is-left\n", "the first word of a line is never moved");
	free(text);
}

/* getopt_long's '?' for argv, with getopt's own message off: what options_failure() says of it. */
static const char *failure_of(char **argv, int argc, char *buf, size_t len)
{
	struct getopt_tables g;
	cr_assert_eq(options_getopt(&table, &g), 0);
	optind = 0; /* glibc: 0 starts getopt afresh, forgetting a cluster left half-read */
	int c;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1)
		if (c == '?')
			return options_failure(&table, argc, argv, optind, optopt, buf, len);
	cr_assert_fail("getopt_long accepted it");
	return NULL;
}

Test(options, failure_names_what_was_wrong_and_the_nearest_option)
{
	static const struct {
		const char *arg, *want;
	} cases[] = {
		{ "--jsno", "unrecognized option '--jsno'; did you mean '--json'?" },
		{ "--outptu=x", "unrecognized option '--outptu'; did you mean '--output'?" },
		{ "--ordre", "unrecognized option '--ordre'; did you mean '--order'?" },
		{ "--zzzzzzzz", "unrecognized option '--zzzzzzzz'" },
		{ "-x", "unrecognized option '-x'" },
		{ "--json=1", "option '--json' takes no argument" },
		{ "--output", "option '--output' requires an argument (FILE)" },
		{ "-o", "option '-o' requires an argument (FILE)" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[] = { "cmd", (char *)cases[i].arg, NULL };
		char buf[256];
		cr_assert_str_eq(failure_of(argv, 2, buf, sizeof(buf)), cases[i].want, "%s", cases[i].arg);
	}
}

Test(options, a_choice_is_its_position_among_the_options_values)
{
	const struct option_spec *sort = &specs[5];
	cr_assert_eq(option_choice(sort, "self"), 0);
	cr_assert_eq(option_choice(sort, "total"), 1);
	cr_assert_eq(option_choice(sort, "tot"), -1, "a prefix is no value");
	cr_assert_eq(option_choice(sort, "totals"), -1);
	cr_assert_eq(option_choice(sort, ""), -1);
	cr_assert_eq(option_choice(&specs[0], "out.data"), -1, "an option without a list of values");
}

/* options_parse() of the words (NULL-terminated) into a, from defaults of zero. */
static enum options_outcome parse_words(char **words, struct args *a, struct options_parsed *parsed)
{
	int argc = 0;
	while (words[argc])
		argc++;
	memset(a, 0, sizeof(*a));
	return options_parse(&table, argc, words, a, parsed);
}

Test(options, parse_sets_each_bound_field_in_the_order_given)
{
	struct args a;
	struct options_parsed parsed;
	char *words[] = { "cmd", "-o", "first", "--freq=99", "-g", "--json", "--order", "total", "-c", "10", "-g",
			  "--output", "second", "--a-rather", "x", "--names", "workload", "-o", "its own", NULL };
	cr_assert_eq(parse_words(words, &a, &parsed), OPTIONS_PARSED, "%s", parsed.why);
	cr_assert_str_eq(a.output, "second", "the later -o overrides the earlier");
	cr_assert_eq(a.freq, 99);
	cr_assert_eq(a.count, 10);
	cr_assert_eq(a.seen_g, 2, "a parser sees each time its option is given");
	cr_assert(a.json && a.names);
	cr_assert_eq(a.sort, 9, "total is the second value: its choice");
	cr_assert_str_eq(a.longwinded, "x", "a unique prefix of a long name");
	cr_assert_str_eq(words[parsed.operand], "workload", "options end at the first operand");
	cr_assert(options_given(&table, &parsed, "freq", 0));
	cr_assert(options_given(&table, &parsed, NULL, 'g'));
	cr_assert_not(options_given(&table, &parsed, NULL, 'h'));
	cr_assert_not(options_given(&table, &parsed, "no-such-option", 0));
	cr_assert_eq(parsed.given, (1ull << 8) - 1, "every option but -h (the ninth)");
}

Test(options, parse_stops_at_help)
{
	struct args a;
	struct options_parsed parsed;
	char *words[] = { "cmd", "--json", "--help", "--bogus", NULL };
	cr_assert_eq(parse_words(words, &a, &parsed), OPTIONS_HELP_ASKED);
	cr_assert(a.json, "what came before is taken");
}

Test(options, parse_refuses_a_value_with_one_line_naming_option_and_value)
{
	static const struct {
		char *words[4];
		enum options_outcome outcome;
		const char *why;
	} cases[] = {
		{ { "cmd", "-F", "0" }, OPTIONS_BAD_VALUE, "-F '0': expected a frequency from 1 to 100000" },
		{ { "cmd", "--freq", "1e3" }, OPTIONS_BAD_VALUE, "-F '1e3': expected a frequency from 1 to 100000" },
		{ { "cmd", "-c", "-1" }, OPTIONS_BAD_VALUE, "-c '-1': expected a number from 0 to 10" },
		{ { "cmd", "-c", "11" }, OPTIONS_BAD_VALUE, "-c '11': expected a number from 0 to 10" },
		{ { "cmd", "--sort", "tot" }, OPTIONS_BAD_VALUE, "--sort 'tot': expected self or total" },
		{ { "cmd", "--sort", "a\nb" }, OPTIONS_BAD_VALUE, "--sort 'a\\nb': expected self or total" },
		{ { "cmd", "--jsno" }, OPTIONS_UNKNOWN, "unrecognized option '--jsno'; did you mean '--json'?" },
		{ { "cmd", "-o" }, OPTIONS_UNKNOWN, "option '-o' requires an argument (FILE)" },
		{ { "cmd", "--json=yes" }, OPTIONS_UNKNOWN, "option '--json' takes no argument" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct args a;
		struct options_parsed parsed;
		char *words[4];
		memcpy(words, cases[i].words, sizeof(words));
		cr_assert_eq(parse_words(words, &a, &parsed), cases[i].outcome, "%s %s", words[1], words[2]);
		cr_assert_str_eq(parsed.why, cases[i].why);
		cr_assert_null(strchr(parsed.why, '\n'), "one line");
	}
}

static int refuse(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s, (void)field;
	snprintf(err, errlen, "--x %s: no", arg);
	return -1;
}

Test(options, parse_passes_a_parser_its_field_and_its_refusal)
{
	struct args a = { 0 };
	struct options_parsed parsed;
	const struct option_spec refusing[] = {
		{ .long_name = "x", .arg = "V", .help = "refused", OPTION_CALLBACK(refuse) },
	};
	struct option_table t = { .command = "cmd", .specs = refusing, .count = 1 };
	char *words[] = { "cmd", "--x", "v", NULL };
	cr_assert_eq(options_parse(&t, 3, words, &a, &parsed), OPTIONS_BAD_VALUE);
	cr_assert_str_eq(parsed.why, "--x v: no");
	/* a table's mistake is said, not run: an option bound to nothing, a field no kind writes */
	const struct option_spec unbound[] = { { .long_name = "x", .help = "nothing" } };
	t.specs = unbound;
	char *flag[] = { "cmd", "--x", NULL };
	cr_assert_eq(options_parse(&t, 2, flag, &a, &parsed), OPTIONS_BAD_VALUE);
	cr_assert_str_eq(parsed.why, "--x: the option table binds it to nothing it can set");
	const struct option_spec odd_size[] = { { .long_name = "x", .help = "2 bytes", .kind = OPTION_KIND_TRUE,
						  .size = 2 } };
	t.specs = odd_size;
	cr_assert_eq(options_parse(&t, 2, flag, &a, &parsed), OPTIONS_BAD_VALUE);
}
