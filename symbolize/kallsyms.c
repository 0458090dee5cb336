/*
 * kallsyms.c: the kernel's symbol table from /proc/kallsyms (or a copy).
 *
 * Each line is "ADDRESS TYPE NAME", optionally followed by "\t[MODULE]":
 *
 *   ffffffff81000000 T _stext
 *   ffffffffc0a01000 t nft_do_chain	[nf_tables]
 *
 * Types t/T/w/W are functions and d/D/b/B/r/R data; the others (absolute,
 * undefined, ...) are skipped, as are malformed lines.  A module's symbol is
 * named "NAME [MODULE]", so that a report shows where it lives.  The file
 * gives no sizes: once every line is read, the symbols are sorted by address
 * and each one reaches up to the next symbol of either kind.  The last one
 * keeps size 0 and matches only its own address.
 *
 * An unprivileged reader sees every address as 0 (kernel.kptr_restrict);
 * that is -EPERM, not an empty table, so the command can say how to fix it.
 *
 * The real file is 10 MB and more: it is read in one pass with one line
 * buffer, and the only memory per symbol is its interned name and one entry
 * in a growing array.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/util.h"
#include "symtab_internal.h"

struct kallsyms_entry {
	uint64_t address;
	const char *name; /* interned in the symtab */
	enum sym_kind kind;
	enum symbol_binding binding;
};

struct kallsyms_reader {
	struct symtab *tab;
	struct kallsyms_entry *entries; /* functions and data, in file order */
	size_t count, cap;
	struct strbuf scratch; /* "NAME [MODULE]" being built */
	bool saw_symbol;       /* a well-formed line of any type */
	bool saw_address;      /* a well-formed line with a non-zero address */
};

/* One line's parts, pointing into the line buffer. */
struct kallsyms_line {
	uint64_t address;
	char type;
	const char *name;
	size_t name_length;
	const char *module; /* NULL for the kernel proper */
	size_t module_length;
};

static int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* The address at the start of s; returns what follows it, or NULL when there is no valid address. */
static const char *parse_address(const char *s, uint64_t *address)
{
	uint64_t value = 0;
	size_t digits = 0;
	for (int digit; (digit = hex_digit_value(*s)) >= 0; s++) {
		if (++digits > 16)
			return NULL;
		value = value << 4 | (uint64_t)digit;
	}
	*address = value;
	return digits ? s : NULL;
}

/* After the name: nothing, or whitespace and "[MODULE]". */
static bool parse_module(const char *s, struct kallsyms_line *line)
{
	s += strspn(s, " \t");
	if (*s == '\0' || *s == '\n')
		return true;
	const char *close = *s == '[' ? strchr(s, ']') : NULL;
	if (!close || close == s + 1)
		return false;
	line->module = s + 1;
	line->module_length = (size_t)(close - s - 1);
	return true;
}

static bool parse_line(const char *text, struct kallsyms_line *line)
{
	const char *s = parse_address(text, &line->address);
	if (!s || s[0] != ' ' || s[1] == '\0' || s[1] == '\n' || s[2] != ' ')
		return false;
	line->type = s[1];
	line->name = s + 3;
	line->name_length = strcspn(line->name, " \t\n");
	line->module = NULL;
	return line->name_length > 0 && parse_module(line->name + line->name_length, line);
}

static bool kind_of_kallsyms_type(char type, enum sym_kind *kind)
{
	switch (type) {
	case 't': case 'T': case 'w': case 'W':
		*kind = SYM_FUNC;
		return true;
	case 'd': case 'D': case 'b': case 'B': case 'r': case 'R':
		*kind = SYM_DATA;
		return true;
	default:
		return false;
	}
}

static enum symbol_binding binding_of_kallsyms_type(char type)
{
	if (type == 'w' || type == 'W')
		return BINDING_WEAK;
	return type >= 'A' && type <= 'Z' ? BINDING_GLOBAL : BINDING_LOCAL;
}

static const char *intern_name(struct kallsyms_reader *reader, const struct kallsyms_line *line)
{
	struct strbuf *sb = &reader->scratch;
	sb_reset(sb);
	sb_add(sb, line->name, line->name_length);
	if (line->module) {
		sb_add(sb, " [", 2);
		sb_add(sb, line->module, line->module_length);
		sb_add(sb, "]", 1);
	}
	return symtab_intern(reader->tab, sb->buf);
}

static void read_line(struct kallsyms_reader *reader, const char *text)
{
	struct kallsyms_line line;
	enum sym_kind kind;

	if (!parse_line(text, &line))
		return;
	reader->saw_symbol = true;
	if (line.address == 0)
		return;
	reader->saw_address = true;
	if (!kind_of_kallsyms_type(line.type, &kind))
		return;

	GROW(reader->entries, reader->cap, reader->count + 1);
	reader->entries[reader->count++] = (struct kallsyms_entry){
		.address = line.address,
		.name = intern_name(reader, &line),
		.kind = kind,
		.binding = binding_of_kallsyms_type(line.type),
	};
}

static int read_lines(FILE *file, struct kallsyms_reader *reader)
{
	char *text = NULL;
	size_t text_cap = 0;
	int err = 0;

	errno = 0;
	while (getline(&text, &text_cap, file) >= 0)
		read_line(reader, text);
	if (ferror(file))
		err = errno ? -errno : -EIO;
	free(text);
	return err;
}

static int compare_entries(const void *a, const void *b)
{
	const struct kallsyms_entry *x = a, *y = b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return 0;
}

/* Size each entry up to the next higher address of either kind, then hand it to the symtab. */
static void add_sized_entries(struct kallsyms_reader *reader)
{
	struct kallsyms_entry *entries = reader->entries;
	size_t count = reader->count, next = 0;

	if (count)
		qsort(entries, count, sizeof(*entries), compare_entries);
	for (size_t i = 0; i < count; i++) {
		while (next < count && entries[next].address <= entries[i].address)
			next++;
		struct symbol_candidate candidate = {
			.sym = { .start = entries[i].address, .name = entries[i].name,
				 .size = next < count ? entries[next].address - entries[i].address : 0 },
			.limit = UINT64_MAX,
			.binding = entries[i].binding,
		};
		symtab_add(reader->tab, entries[i].kind, &candidate);
	}
}

int symtab_from_kallsyms(const char *path, struct symtab **out)
{
	*out = NULL;
	FILE *file = fopen(path, "re");
	if (!file)
		return -errno;

	struct kallsyms_reader reader = { .tab = symtab_new() };
	int err = read_lines(file, &reader);
	fclose(file);
	if (!err && !reader.saw_symbol)
		err = -ENOEXEC;
	if (!err && !reader.saw_address)
		err = -EPERM;
	if (!err) {
		add_sized_entries(&reader);
		symtab_finish(reader.tab);
		*out = reader.tab;
	} else {
		symtab_free(reader.tab);
	}
	free(reader.entries);
	sb_free(&reader.scratch);
	return err;
}
