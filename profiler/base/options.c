/*
 * options.c: getopt_long's arrays, the parsing and the --help text, all made
 * from one option table (options.h), so that --help lists every option a
 * command takes, with the argument and the default it really has, and each
 * option's value goes where its one line in the table binds it.
 *
 * Base layer: only libc; prints only to the FILE* it is handed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/options.h"
#include "sigprof/base/util.h"

int option_id(const struct option_table *t, const struct option_spec *s)
{
	return s->short_name ? (unsigned char)s->short_name : OPTIONS_LONG_ONLY + (int)(s - t->specs);
}

/* The option of t whose getopt value is id, or NULL. */
static const struct option_spec *option_of_id(const struct option_table *t, int id)
{
	for (size_t i = 0; i < t->count; i++)
		if (option_id(t, &t->specs[i]) == id)
			return &t->specs[i];
	return NULL;
}

static void add_long(struct getopt_tables *g, size_t *n, const char *name, int id, const struct option_spec *s)
{
	g->longopts[*n] = (struct option){ name, s->arg ? required_argument : no_argument, NULL, id };
	(*n)++;
}

int options_getopt(const struct option_table *t, struct getopt_tables *g)
{
	memset(g, 0, sizeof(*g));
	opterr = 0; /* the command says what was wrong, with options_failure(), prefixed "sigprof: " */
	if (t->count > OPTIONS_MAX)
		return -E2BIG;
	size_t nlong = 0, nshort = 0;
	if (t->stop_at_operand)
		g->shortopts[nshort++] = '+';
	for (size_t i = 0; i < t->count; i++) {
		const struct option_spec *s = &t->specs[i];
		if (!s->short_name && !s->long_name)
			return -EINVAL;
		int id = option_id(t, s);
		if (s->long_name)
			add_long(g, &nlong, s->long_name, id, s);
		if (s->alias)
			add_long(g, &nlong, s->alias, id, s);
		if (s->short_name) {
			g->shortopts[nshort++] = s->short_name;
			if (s->arg)
				g->shortopts[nshort++] = ':';
		}
	}
	return 0;
}

const struct option_spec *options_find(const struct option_table *t, const char *arg)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct option_spec *s = &t->specs[i];
		if (arg[0] != '-')
			break;
		if (arg[1] == '-' ? (s->long_name && strcmp(arg + 2, s->long_name) == 0) ||
					    (s->alias && strcmp(arg + 2, s->alias) == 0)
				  : s->short_name && arg[1] == s->short_name && !arg[2])
			return s;
	}
	return NULL;
}

/* The long name a word of the command line names ("--inp=x" -> "inp"), bounded by '='. */
static size_t long_word(const char *arg, const char **name)
{
	*name = arg + 2;
	return strcspn(arg + 2, "=");
}

const char *options_failure(const struct option_table *t, int argc, char **argv, int failed_optind, int failed_optopt,
			    char *buf, size_t len)
{
	const char *arg = failed_optind >= 1 && failed_optind <= argc ? argv[failed_optind - 1] : "";
	if (failed_optopt) {
		const struct option_spec *s = option_of_id(t, failed_optopt);
		bool long_form = strncmp(arg, "--", 2) == 0 && s && s->long_name;
		char shown[128];
		if (long_form)
			snprintf(shown, sizeof(shown), "--%.*s", (int)strcspn(arg + 2, "="), arg + 2);
		else
			snprintf(shown, sizeof(shown), "-%c", s && s->short_name ? s->short_name : failed_optopt);
		if (!s)
			snprintf(buf, len, "unrecognized option '%s'", shown);
		else if (s->arg)
			snprintf(buf, len, "option '%s' requires an argument (%s)", shown, s->arg);
		else
			snprintf(buf, len, "option '%s' takes no argument", shown);
		return buf;
	}
	if (strncmp(arg, "--", 2) != 0) {
		snprintf(buf, len, "unrecognized option '%s'", arg);
		return buf;
	}
	const char *name;
	size_t n = long_word(arg, &name);
	/* getopt_long takes a unique prefix: two or more options starting so make it ambiguous */
	char matches[256] = "";
	size_t nmatches = 0;
	for (size_t i = 0; i < t->count; i++) {
		const char *names[2] = { t->specs[i].long_name, t->specs[i].alias };
		for (int k = 0; k < 2; k++)
			if (names[k] && n && strncmp(names[k], name, n) == 0) {
				size_t used = strlen(matches);
				snprintf(matches + used, sizeof(matches) - used, "%s--%s", nmatches++ ? ", " : "", names[k]);
			}
	}
	if (nmatches > 1) {
		snprintf(buf, len, "option '--%.*s' is ambiguous: %s", (int)n, name, matches);
		return buf;
	}
	char word[128];
	snprintf(word, sizeof(word), "%.*s", (int)n, name);
	struct nearest near = { .word = word };
	for (size_t i = 0; i < t->count; i++) {
		if (t->specs[i].long_name)
			nearest_offer(&near, t->specs[i].long_name);
		if (t->specs[i].alias)
			nearest_offer(&near, t->specs[i].alias);
	}
	if (near.best)
		snprintf(buf, len, "unrecognized option '--%s'; did you mean '--%s'?", word, near.best);
	else
		snprintf(buf, len, "unrecognized option '%s'", arg);
	return buf;
}

int option_choice(const struct option_spec *s, const char *arg)
{
	if (!s->values)
		return -1;
	size_t len = strlen(arg);
	int k = 0;
	for (const char *v = s->values; *v; k++) {
		size_t n = strcspn(v, "|");
		if (n == len && strncmp(v, arg, n) == 0)
			return k;
		v += n + (v[n] == '|');
	}
	return -1;
}

const char *option_display_name(const struct option_spec *s, char *buf, size_t len)
{
	if (s->short_name)
		snprintf(buf, len, "-%c", s->short_name);
	else
		snprintf(buf, len, "--%s", s->long_name);
	return buf;
}

/* ---- parsing ---- */

/* "a, b or c" from "a|b|c": the values an error line expects. */
static void values_in_words(const char *values, char *buf, size_t len)
{
	size_t used = 0, count = 1;
	for (const char *v = values; *v; v++)
		count += *v == '|';
	size_t k = 0;
	buf[0] = '\0';
	for (const char *v = values; *v && used < len; k++) {
		size_t n = strcspn(v, "|");
		used += (size_t)snprintf(buf + used, len - used, "%s%.*s", !k ? "" : k + 1 == count ? " or " : ", ",
					 (int)n, v);
		v += n + (v[n] == '|');
	}
}

/* Store v in the field of size bytes at p (a bool, an int or enum, an unsigned, a uint64_t). */
static int store_number(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)p = (uint8_t)v;
		return 0;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		return 0;
	case 8:
		*(uint64_t *)p = v;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Take one option's argument (NULL when it takes none) into args: 0, or -1 with why filled. */
static int take_option(const struct option_spec *s, const char *arg, void *args, char *why, size_t len)
{
	char name[80];
	option_display_name(s, name, sizeof(name));
	void *field = (char *)args + s->offset;
	int ret = 0;
	switch (s->kind) {
	case OPTION_KIND_TRUE:
		ret = store_number(field, s->size, 1);
		break;
	case OPTION_KIND_SET:
		ret = store_number(field, s->size, (uint64_t)s->value);
		break;
	case OPTION_KIND_STRING:
		if (s->size != sizeof(const char *))
			ret = -EINVAL;
		else
			*(const char **)field = arg;
		break;
	case OPTION_KIND_UINT: {
		uint64_t v;
		if (parse_u64(arg, s->min, s->max, &v) < 0) {
			snprintf(why, len, "%s %s: expected %s from %" PRIu64 " to %" PRIu64, name, QUOTED(arg),
				 s->what ? s->what : "a number", s->min, s->max);
			return -1;
		}
		ret = store_number(field, s->size, v);
		break;
	}
	case OPTION_KIND_CHOICE: {
		int k = option_choice(s, arg);
		if (k < 0) {
			char words[256];
			values_in_words(s->values ? s->values : "", words, sizeof(words));
			snprintf(why, len, "%s %s: expected %s", name, QUOTED(arg), words);
			return -1;
		}
		ret = store_number(field, s->size, (uint64_t)(s->choices ? s->choices[k] : k));
		break;
	}
	case OPTION_KIND_CALLBACK:
		if (!s->parse)
			break;
		if (s->parse(s, s->size ? field : args, arg, why, len) < 0) {
			if (!why[0])
				snprintf(why, len, "%s %s: refused", name, QUOTED(arg ? arg : ""));
			return -1;
		}
		return 0;
	case OPTION_UNBOUND:
	case OPTION_HELP:
		break;
	}
	if (ret < 0 || s->kind == OPTION_UNBOUND || (s->kind == OPTION_KIND_CALLBACK && !s->parse)) {
		/* the table's mistake, not the user's: a field of a size no kind writes, or no binding */
		snprintf(why, len, "%s: the option table binds it to nothing it can set", name);
		return -1;
	}
	return 0;
}

enum options_outcome options_parse(const struct option_table *t, int argc, char **argv, void *args,
				   struct options_parsed *parsed)
{
	memset(parsed, 0, sizeof(*parsed));
	struct getopt_tables g;
	if (options_getopt(t, &g) < 0) {
		snprintf(parsed->why, sizeof(parsed->why), "the option table of %s cannot be parsed", t->command);
		return OPTIONS_BAD_VALUE;
	}
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		const struct option_spec *s = c == '?' ? NULL : option_of_id(t, c);
		if (!s) {
			options_failure(t, argc, argv, optind, optopt, parsed->why, sizeof(parsed->why));
			return OPTIONS_UNKNOWN;
		}
		parsed->given |= 1ull << (s - t->specs);
		if (s->kind == OPTION_HELP)
			return OPTIONS_HELP_ASKED;
		if (take_option(s, s->arg ? optarg : NULL, args, parsed->why, sizeof(parsed->why)) < 0)
			return OPTIONS_BAD_VALUE;
	}
	parsed->operand = optind;
	return OPTIONS_PARSED;
}

bool options_given(const struct option_table *t, const struct options_parsed *parsed, const char *long_name,
		   char short_name)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct option_spec *s = &t->specs[i];
		if (long_name ? s->long_name && strcmp(s->long_name, long_name) == 0 : s->short_name == short_name)
			return (parsed->given >> i) & 1;
	}
	return false;
}

/* ---- wrapping ---- */

void options_wrap(FILE *out, const char *text, size_t first_column, size_t indent)
{
	size_t col = first_column, line_start = first_column;
	const char *p = text;
	while (*p) {
		if (*p == '\n') {
			fprintf(out, "\n%*s", (int)indent, "");
			col = line_start = indent;
			p++;
			continue;
		}
		size_t gap = strspn(p, " ");
		size_t word = strcspn(p + gap, " \n");
		if (!word) { /* trailing spaces, or spaces before a newline */
			p += gap;
			continue;
		}
		if (col > line_start && col + gap + word > OPTIONS_WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = line_start = indent;
		} else if (col > line_start) {
			fprintf(out, "%.*s", (int)gap, p);
			col += gap;
		}
		fprintf(out, "%.*s", (int)word, p + gap);
		col += word;
		p += gap + word;
	}
	fputc('\n', out);
}

/* ---- the synopsis ---- */

/* "-o FILE", "--futex trace|sample|count", "--json": how the synopsis names s. */
static int synopsis_item(const struct option_spec *s, char *buf, size_t buflen)
{
	const char *arg = s->values ? s->values : s->arg;
	if (s->short_name && !(s->flags & OPTION_SYNOPSIS_LONG && s->long_name))
		return snprintf(buf, buflen, "-%c%s%s", s->short_name, arg ? " " : "", arg ? arg : "");
	return snprintf(buf, buflen, "--%s%s%s", s->long_name, arg ? " " : "", arg ? arg : "");
}

struct synopsis_line {
	FILE *out;
	size_t col, indent;
};

static void synopsis_add(struct synopsis_line *l, const char *item)
{
	size_t len = strlen(item);
	if (l->col > l->indent && l->col + 1 + len > OPTIONS_WIDTH) {
		fprintf(l->out, "\n%*s", (int)l->indent, "");
		l->col = l->indent;
	} else if (l->col > l->indent) {
		fputc(' ', l->out);
		l->col++;
	}
	fputs(item, l->out);
	l->col += len;
}

void options_synopsis(const struct option_table *t, FILE *out)
{
	char head[256];
	snprintf(head, sizeof(head), "usage: %s", t->command);
	fputs(head, out);
	struct synopsis_line l = { out, strlen(head) + 1, strlen(head) + 1 };
	fputc(' ', out);
	for (size_t i = 0; i < t->count; i++) {
		const struct option_spec *s = &t->specs[i];
		if (s->flags & OPTION_NO_SYNOPSIS)
			continue;
		/* the alternatives of one group in one bracket: [-F HZ | -c PERIOD] */
		char item[512] = "[";
		size_t len = 1;
		bool repeatable = false;
		for (size_t k = i; k < t->count; k++) {
			const struct option_spec *a = &t->specs[k];
			if (k > i && (!s->group || a->group != s->group))
				break;
			if (k > i)
				len += (size_t)snprintf(item + len, sizeof(item) - len, " | ");
			if (len < sizeof(item))
				len += (size_t)synopsis_item(a, item + len, sizeof(item) - len);
			repeatable |= (a->flags & OPTION_REPEATABLE) != 0;
			i = k;
		}
		if (len < sizeof(item))
			snprintf(item + len, sizeof(item) - len, "]%s", repeatable ? "..." : "");
		synopsis_add(&l, item);
	}
	if (t->operands)
		synopsis_add(&l, t->operands);
	fputc('\n', out);
}

/* ---- the option list ---- */

/* "  -o, --output FILE", "      --json", "  -g": the option list's heading of s. */
static int list_heading(const struct option_spec *s, char *buf, size_t buflen)
{
	int n = s->short_name ? snprintf(buf, buflen, "  -%c%s", s->short_name, s->long_name ? ", " : "")
			      : snprintf(buf, buflen, "      ");
	if (s->long_name && (size_t)n < buflen)
		n += snprintf(buf + n, buflen - (size_t)n, "--%s", s->long_name);
	if (s->alias && (size_t)n < buflen)
		n += snprintf(buf + n, buflen - (size_t)n, ", --%s", s->alias);
	if (s->arg && (size_t)n < buflen)
		n += snprintf(buf + n, buflen - (size_t)n, " %s", s->arg);
	return (size_t)n < buflen ? n : (int)buflen - 1;
}

void options_list(const struct option_table *t, FILE *out)
{
	char heading[256];
	size_t column = 0;
	for (size_t i = 0; i < t->count; i++) {
		size_t width = (size_t)list_heading(&t->specs[i], heading, sizeof(heading)) + 2;
		if (width <= OPTIONS_HELP_COLUMN_MAX && width > column)
			column = width;
	}
	for (size_t i = 0; i < t->count; i++) {
		const struct option_spec *s = &t->specs[i];
		size_t len = (size_t)list_heading(s, heading, sizeof(heading));
		fputs(heading, out);
		if (len + 2 > column)
			fprintf(out, "\n%*s", (int)column, "");
		else
			fprintf(out, "%*s", (int)(column - len), "");
		char *text = NULL;
		if (s->default_value && asprintf(&text, "%s (default %s)", s->help, s->default_value) < 0)
			text = NULL;
		options_wrap(out, text ? text : s->help, column, column);
		free(text);
	}
}

void options_usage(const struct option_table *t, FILE *out)
{
	options_synopsis(t, out);
	if (t->description) {
		fputc('\n', out);
		options_wrap(out, t->description, 0, 0);
	}
	fputc('\n', out);
	options_list(t, out);
	if (t->epilogue) {
		fputc('\n', out);
		t->epilogue(out);
	}
}
