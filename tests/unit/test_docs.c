/*
 * test_docs.c: the documents that describe tables in the code list exactly
 * what the code holds: the path rules, the c2c rules, the timeline's cause rules, and each command's
 * options in its --help and in docs/sigprof.1.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/c2c.h"
#include "sigprof/commands/commands.h"
#include "sigprof/collectors/lock.h"
#include "sigprof/base/options.h"
#include "sigprof/model/paths.h"
#include "sigprof/model/timeline.h"
#include "sigprof/collectors/signal.h"
#include "unit_helpers.h"


Test(docs, paths_md_lists_every_builtin_rule_under_its_path)
{
	char *doc = read_text_file("docs/paths.md");
	for (unsigned i = 0; i < builtin_path_rule_count; i++) {
		char heading[64], item[160];
		snprintf(heading, sizeof(heading), "\n### %s\n", path_name(builtin_path_rules[i].path));
		snprintf(item, sizeof(item), "\n- `%s`\n", builtin_path_rules[i].pattern);
		const char *section = strstr(doc, heading);
		cr_assert(section, "docs/paths.md has no section for %s", path_name(builtin_path_rules[i].path));
		const char *next = strstr(section + 1, "\n### ");
		const char *at = strstr(section, item);
		cr_assert(at && (!next || at < next), "docs/paths.md does not list %s under %s",
			  builtin_path_rules[i].pattern, path_name(builtin_path_rules[i].path));
	}
	/* and nothing the code does not hold */
	unsigned listed = 0;
	for (const char *p = strstr(doc, "## The built-in rules"); p && (p = strstr(p, "\n- `")); p++)
		listed++;
	cr_assert_eq(listed, builtin_path_rule_count, "docs/paths.md lists %u rules, the code has %u", listed,
		     builtin_path_rule_count);
	free(doc);
}

Test(docs, c2c_md_lists_every_classification_rule_in_order)
{
	char *doc = read_text_file("docs/c2c.md");
	const char *rules_section = strstr(doc, "### Rules, first match wins");
	cr_assert(rules_section, "docs/c2c.md has no rules section");
	size_t n;
	const struct c2c_rule *rules = c2c_rules(&n);
	const char *at = rules_section;
	for (size_t i = 0; i < n; i++) {
		char heading[64];
		snprintf(heading, sizeof(heading), "\n### %s\n", c2c_class_name(rules[i].cls));
		const char *found = strstr(at, heading);
		cr_assert(found, "docs/c2c.md does not document rule %zu (%s) after the previous one", i,
			  c2c_class_name(rules[i].cls));
		at = found + 1;
	}
	free(doc);
}

/* ---- each command's options: its table, its --help, docs/sigprof.1 ---- */

static const struct {
	const char *name;
	const struct option_table *table;
} command_tables[] = {
	{ "record", &record_option_table },
	{ "report", &report_option_table },
	{ "stat", &stat_option_table },
	{ "list", &list_option_table },
	{ "archive", &archive_option_table },
	{ "diff", &diff_option_table },
	{ "script", &script_option_table },
};

/* Whether name ("-o", "--output") is in text as a word of its own: not inside --output-dir or --no-output. */
static bool has_option_word(const char *text, const char *name)
{
	size_t len = strlen(name);
	for (const char *at = strstr(text, name); at; at = strstr(at + 1, name)) {
		char before = at == text ? ' ' : at[-1], after = at[len];
		bool word_before = isalnum((unsigned char)before) || before == '-' || before == '_';
		bool word_after = isalnum((unsigned char)after) || after == '-' || after == '_';
		if (!word_before && !word_after)
			return true;
	}
	return false;
}

/* Whether text holds want, where a line break and the indent after it may stand for a space of want. */
static bool has_text_across_lines(const char *text, const char *want)
{
	for (const char *at = text; *at; at++) {
		const char *t = at, *w = want;
		while (*w && *t) {
			if (*w == ' ' && *t == '\n') {
				t += 1 + strspn(t + 1, " ");
				w++;
			} else if (*w == *t) {
				t++;
				w++;
			} else {
				break;
			}
		}
		if (!*w)
			return true;
	}
	return false;
}

/* The names of s as typed: "-x", "--name", "--alias"; returns how many. */
static size_t option_names(const struct option_spec *s, char names[3][64])
{
	size_t n = 0;
	if (s->short_name)
		snprintf(names[n++], 64, "-%c", s->short_name);
	if (s->long_name)
		snprintf(names[n++], 64, "--%s", s->long_name);
	if (s->alias)
		snprintf(names[n++], 64, "--%s", s->alias);
	return n;
}

static bool is_help(const struct option_spec *s)
{
	return s->long_name && strcmp(s->long_name, "help") == 0;
}

/* docs/sigprof.1 as it reads: \- as -, font escapes and quotes gone. */
static char *read_man_page(void)
{
	char *man = read_text_file("docs/sigprof.1");
	char *out = man;
	for (const char *p = man; *p;) {
		if (p[0] == '\\' && p[1] == '-') {
			*out++ = '-';
			p += 2;
		} else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 3;
		} else if (*p == '"') {
			p++;
		} else {
			*out++ = *p++;
		}
	}
	*out = '\0';
	return man;
}

/* The part of man from the line that starts with start to the next line that starts with one of ends. */
static char *man_part(const char *man, const char *start, const char *const *ends, size_t nends)
{
	const char *from = strstr(man, start);
	cr_assert_not_null(from, "docs/sigprof.1 has no %s", start);
	from += strlen(start);
	const char *to = from + strlen(from);
	for (size_t i = 0; i < nends; i++) {
		const char *end = strstr(from, ends[i]);
		if (end && end < to)
			to = end;
	}
	return strndup(from, (size_t)(to - from));
}

/* The option names of the .TP items of a man page section whose tag starts with an option: "-o", "--output". */
static size_t man_section_options(const char *section, char names[][64], size_t max)
{
	size_t n = 0;
	for (const char *tp = strstr(section, "\n.TP\n"); tp; tp = strstr(tp + 1, "\n.TP\n")) {
		const char *tag = tp + strlen("\n.TP\n");
		size_t len = strcspn(tag, "\n");
		const char *args = tag + strcspn(tag, " "); /* after the font macro: .B, .BR, .BI */
		if (args >= tag + len || args[1] != '-')
			continue;
		for (const char *p = args; p < tag + len; p++) {
			if (*p != '-' || (p[-1] != ' ' && p[-1] != ','))
				continue;
			size_t word = strspn(p, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
			cr_assert_lt(n, max);
			snprintf(names[n++], 64, "%.*s", (int)word, p);
			p += word;
		}
	}
	return n;
}

Test(docs, every_command_option_table_makes_its_getopt_arrays)
{
	for (size_t c = 0; c < ARRAY_SIZE(command_tables); c++) {
		const struct option_table *t = command_tables[c].table;
		struct getopt_tables g;
		cr_assert_eq(options_getopt(t, &g), 0, "%s's option table", command_tables[c].name);
		/* no name twice, no id twice: getopt_long would take the first and hide the other */
		for (size_t i = 0; i < t->count; i++)
			for (size_t k = i + 1; k < t->count; k++) {
				cr_assert_neq(option_id(t, &t->specs[i]), option_id(t, &t->specs[k]),
					      "%s: two options of id %d", command_tables[c].name, option_id(t, &t->specs[i]));
				char a[3][64], b[3][64];
				size_t na = option_names(&t->specs[i], a), nb = option_names(&t->specs[k], b);
				for (size_t x = 0; x < na; x++)
					for (size_t y = 0; y < nb; y++)
						cr_assert_str_neq(a[x], b[y], "%s: %s twice", command_tables[c].name, a[x]);
			}
	}
}

/*
 * Each option is bound to what it sets, in a field of the size its kind
 * writes: the table is the only place an option is written, so an option
 * bound to nothing would be one --help shows and the command ignores.
 */
Test(docs, every_command_option_is_bound_to_what_it_sets)
{
	for (size_t c = 0; c < ARRAY_SIZE(command_tables); c++) {
		const struct option_table *t = command_tables[c].table;
		for (size_t i = 0; i < t->count; i++) {
			const struct option_spec *s = &t->specs[i];
			char name[80];
			option_display_name(s, name, sizeof(name));
			switch (s->kind) {
			case OPTION_UNBOUND:
				cr_assert_fail("%s %s: bound to nothing", command_tables[c].name, name);
				break;
			case OPTION_HELP:
				cr_assert_eq(s->short_name, 'h', "%s %s: only -h is help", command_tables[c].name, name);
				break;
			case OPTION_KIND_TRUE:
				cr_assert_eq(s->size, sizeof(bool), "%s %s: a bool", command_tables[c].name, name);
				cr_assert_null(s->arg, "%s %s: a flag takes no argument", command_tables[c].name, name);
				break;
			case OPTION_KIND_SET:
				cr_assert_eq(s->size, sizeof(int), "%s %s: an int or enum", command_tables[c].name, name);
				break;
			case OPTION_KIND_STRING:
				cr_assert_eq(s->size, sizeof(char *), "%s %s: a string", command_tables[c].name, name);
				cr_assert_not_null(s->arg, "%s %s: takes its argument", command_tables[c].name, name);
				break;
			case OPTION_KIND_UINT:
				cr_assert(s->size == sizeof(unsigned) || s->size == sizeof(uint64_t), "%s %s: a number",
					  command_tables[c].name, name);
				cr_assert_leq(s->min, s->max, "%s %s: its range", command_tables[c].name, name);
				cr_assert_not_null(s->arg, "%s %s: takes its argument", command_tables[c].name, name);
				break;
			case OPTION_KIND_CHOICE:
				cr_assert_eq(s->size, sizeof(int), "%s %s: an int or enum", command_tables[c].name, name);
				cr_assert_not_null(s->values, "%s %s: its values", command_tables[c].name, name);
				break;
			case OPTION_KIND_CALLBACK:
				cr_assert_not_null(s->parse, "%s %s: its parser", command_tables[c].name, name);
				break;
			}
		}
	}
}

Test(docs, help_of_every_command_lists_each_option_of_its_table)
{
	for (size_t c = 0; c < ARRAY_SIZE(command_tables); c++) {
		const struct option_table *t = command_tables[c].table;
		char *help = NULL, *synopsis = NULL;
		size_t len;
		FILE *out = open_memstream(&help, &len);
		options_usage(t, out);
		fclose(out);
		out = open_memstream(&synopsis, &len);
		options_synopsis(t, out);
		fclose(out);
		cr_assert(strncmp(help, synopsis, strlen(synopsis)) == 0, "%s --help opens with its synopsis",
			  command_tables[c].name);
		for (size_t i = 0; i < t->count; i++) {
			const struct option_spec *s = &t->specs[i];
			char names[3][64];
			size_t n = option_names(s, names);
			bool in_synopsis = false;
			for (size_t k = 0; k < n; k++) {
				cr_assert(has_option_word(help + strlen(synopsis), names[k]),
					  "%s --help does not list %s", command_tables[c].name, names[k]);
				in_synopsis |= has_option_word(synopsis, names[k]);
			}
			if (!(s->flags & OPTION_NO_SYNOPSIS))
				cr_assert(in_synopsis, "%s --help's synopsis does not name %s", command_tables[c].name,
					  names[0]);
			if (s->default_value) {
				char want[256];
				snprintf(want, sizeof(want), "(default %s)", s->default_value);
				cr_assert(has_text_across_lines(help, want), "%s --help: %s's default",
					  command_tables[c].name, names[0]);
			}
		}
		for (const char *line = help; *line;) {
			size_t width = strcspn(line, "\n");
			cr_assert_leq(width, OPTIONS_WIDTH, "%s --help: %.*s", command_tables[c].name, (int)width, line);
			line += width + (line[width] == '\n');
		}
		free(help);
		free(synopsis);
	}
}

Test(docs, man_page_documents_each_option_of_every_command_and_no_other)
{
	char *man = read_man_page();
	static const char *const section_ends[] = { "\n.SS ", "\n.SH " };
	char *description = man_part(man, "\n.SH DESCRIPTION\n", section_ends, ARRAY_SIZE(section_ends));
	for (size_t c = 0; c < ARRAY_SIZE(command_tables); c++) {
		const char *command = command_tables[c].name;
		const struct option_table *t = command_tables[c].table;
		char heading[64];
		snprintf(heading, sizeof(heading), "\n.SS %s\n", command);
		char *section = man_part(man, heading, section_ends, ARRAY_SIZE(section_ends));
		char documented[64][64];
		size_t ndocumented = man_section_options(section, documented, ARRAY_SIZE(documented));
		/* every option of the table in the section's option list (--help: once for all, in DESCRIPTION) */
		for (size_t i = 0; i < t->count; i++) {
			char names[3][64];
			size_t n = option_names(&t->specs[i], names);
			for (size_t k = 0; k < n; k++) {
				bool found = false;
				for (size_t d = 0; d < ndocumented && !found; d++)
					found = strcmp(documented[d], names[k]) == 0;
				if (is_help(&t->specs[i]))
					found = has_option_word(description, names[k]);
				cr_assert(found, "docs/sigprof.1 does not document %s %s", command, names[k]);
			}
		}
		/* and no option the table lacks */
		for (size_t d = 0; d < ndocumented; d++) {
			const struct option_spec *s = NULL;
			for (size_t i = 0; i < t->count && !s; i++) {
				char names[3][64];
				size_t n = option_names(&t->specs[i], names);
				for (size_t k = 0; k < n; k++)
					if (strcmp(names[k], documented[d]) == 0)
						s = &t->specs[i];
			}
			cr_assert_not_null(s, "docs/sigprof.1 documents %s %s, which its option table lacks", command,
					   documented[d]);
		}
		/* the SYNOPSIS names each option as --help's does */
		char start[64];
		snprintf(start, sizeof(start), "\n.B sigprof %s\n", command);
		static const char *const synopsis_ends[] = { "\n.br\n", "\n.SH " };
		char *synopsis = man_part(man, start, synopsis_ends, ARRAY_SIZE(synopsis_ends));
		for (size_t i = 0; i < t->count; i++) {
			const struct option_spec *s = &t->specs[i];
			if (s->flags & OPTION_NO_SYNOPSIS)
				continue;
			char names[3][64];
			size_t n = option_names(s, names);
			bool found = false;
			for (size_t k = 0; k < n; k++)
				found |= has_option_word(synopsis, names[k]);
			cr_assert(found, "the SYNOPSIS of docs/sigprof.1 does not name %s %s", command, names[0]);
		}
		free(synopsis);
		free(section);
	}
	free(description);
	free(man);
}

/* Whether doc's section that begins with heading holds item (before the next "## " heading); asserts it exists. */
static bool section_holds(const char *doc, const char *heading, const char *item, const char **section,
			  const char **next)
{
	*section = strstr(doc, heading);
	cr_assert(*section, "no section %s", heading);
	*next = strstr(*section + 1, "\n## ");
	const char *at = strstr(*section, item);
	return at && (!*next || at < *next);
}

Test(docs, lock_md_lists_every_lock_primitive)
{
	char *doc = read_text_file("docs/lock.md");
	const char *section, *next;
	for (size_t i = 0; i < lock_primitive_count; i++) {
		char item[96];
		snprintf(item, sizeof(item), "\n- `%s`\n", lock_primitives[i]);
		cr_assert(section_holds(doc, "## Lock primitives skipped when naming a lock", item, &section, &next),
			  "docs/lock.md does not list %s", lock_primitives[i]);
	}
	unsigned listed = 0;
	for (const char *p = section; (p = strstr(p, "\n- `")) && (!next || p < next); p++)
		listed++;
	cr_assert_eq(listed, lock_primitive_count, "docs/lock.md lists %u primitives, the code has %zu", listed,
		     lock_primitive_count);
	free(doc);
}

Test(docs, signal_md_lists_every_code_whose_generation_takes_the_kernel_stack_only)
{
	char *doc = read_text_file("docs/signal.md");
	const char *section, *next;
	for (size_t i = 0; i < signal_kernel_code_count; i++) {
		char row[96];
		snprintf(row, sizeof(row), "\n| `%s` (%d) |", signal_kernel_codes[i].name, signal_kernel_codes[i].code);
		cr_assert(section_holds(doc, "\n## Generations by the kernel", row, &section, &next),
			  "docs/signal.md does not list %s", signal_kernel_codes[i].name);
	}
	free(doc);
}

Test(docs, timeline_md_lists_every_cause_rule_in_order)
{
	char *doc = read_text_file("docs/timeline.md");
	const char *at = strstr(doc, "## The cause rules");
	cr_assert(at, "docs/timeline.md has no section of the cause rules");
	for (size_t i = 0; i < timeline_ncauses; i++) {
		char row[160];
		snprintf(row, sizeof(row), "\n| `%s` | %s | %s |\n", timeline_causes[i].prefix,
			 timeline_cause_key(timeline_causes[i].cause), timeline_causes[i].why);
		const char *found = strstr(at, row);
		cr_assert(found, "docs/timeline.md does not list the rule %s", timeline_causes[i].prefix);
		at = found + 1;
	}
	unsigned listed = 0;
	for (const char *p = strstr(doc, "## The cause rules"); p && (p = strstr(p, "\n| `")); p++)
		listed++;
	cr_assert_eq(listed, timeline_ncauses, "docs/timeline.md lists %u rules, the code has %zu", listed,
		     timeline_ncauses);
	free(doc);
}
