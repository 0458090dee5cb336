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
 * buffer, and the only memory per symbol is its name (stored, not interned:
 * kernel symbol names are nearly all distinct, and hashing 100k+ names was
 * most of a report's start-up time) and one entry in a growing array.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/hashmap.h"
#include "symtab_internal.h"

struct kallsyms_entry {
	uint64_t address;
	const char *name; /* stored in the symtab's strings */
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

static const char *store_name(struct kallsyms_reader *reader, const struct kallsyms_line *line)
{
	struct strbuf *sb = &reader->scratch;
	sb_reset(sb);
	sb_add(sb, line->name, line->name_length);
	if (line->module) {
		sb_add(sb, " [", 2);
		sb_add(sb, line->module, line->module_length);
		sb_add(sb, "]", 1);
	}
	return symtab_store(reader->tab, sb->buf, sb->len);
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
		.name = store_name(reader, &line),
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
		sort_unless_sorted(entries, count, sizeof(*entries), compare_entries);
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

static int load_from_stream(FILE *file, struct symtab **out)
{
	struct kallsyms_reader reader = { .tab = symtab_new() };
	int err = read_lines(file, &reader);
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

/* ---- searching a sorted text in place ---- */

/*
 * The kernel writes kallsyms sorted by address.  Building a table of its
 * 100k+ symbols costs a report more than everything else it does (and, in a
 * VM, thousands of page faults), while a report looks up a few thousand
 * distinct kernel addresses at most.  So when one pass finds the text well
 * formed and sorted, lookups binary-search the text itself, and only the
 * symbols actually found are materialised (and cached).  Otherwise the text
 * goes through the table builder above.
 */
struct kallsyms_text {
	char *text;                  /* owned, NUL-terminated */
	size_t len;
	size_t count[SYM_KIND_COUNT];
	struct u64_map found;        /* line offset * 2 + kind -> struct sym * */
	struct string_pool *names;
	struct sym **syms;           /* every materialised sym, for freeing */
	size_t nsyms, syms_cap;
};

static size_t line_start(const char *text, size_t at)
{
	const char *nl = at ? memrchr(text, '\n', at) : NULL;
	return nl ? (size_t)(nl - text) + 1 : 0;
}

static size_t next_line(const struct kallsyms_text *k, size_t start)
{
	const char *nl = memchr(k->text + start, '\n', k->len - start);
	return nl ? (size_t)(nl - k->text) + 1 : k->len;
}

/* A line known to be well formed (the scan checked every one). */
static void line_at(const struct kallsyms_text *k, size_t start, struct kallsyms_line *line)
{
	if (!parse_line(k->text + start, line))
		memset(line, 0, sizeof(*line));
}

static bool line_kind(const struct kallsyms_line *line, enum sym_kind *kind)
{
	return line->address && kind_of_kallsyms_type(line->type, kind);
}

/* One pass: every line well formed, typed lines in address order; counts each kind's addresses. */
static int scan_sorted(struct kallsyms_text *k)
{
	uint64_t last = 0, last_of_kind[SYM_KIND_COUNT] = { 0 };
	bool any_line = false, any_address = false;
	for (size_t at = 0; at < k->len; at = next_line(k, at)) {
		struct kallsyms_line line;
		enum sym_kind kind;
		if (k->text[at] == '\n')
			continue;
		if (!parse_line(k->text + at, &line))
			return -EINVAL;
		any_line = true;
		any_address |= line.address != 0;
		if (!line_kind(&line, &kind))
			continue;
		if (line.address < last)
			return -EINVAL;
		last = line.address;
		if (line.address != last_of_kind[kind])
			k->count[kind]++; /* aliases at one address are one symbol */
		last_of_kind[kind] = line.address;
	}
	return !any_line ? -ENOEXEC : !any_address ? -EPERM : 0;
}

static const struct sym *materialise(struct kallsyms_text *k, size_t start, enum sym_kind kind, uint64_t size)
{
	uint64_t key = (uint64_t)start * 2 + kind;
	struct sym *sym = u64_map_get(&k->found, key);
	if (sym)
		return sym;
	struct kallsyms_line line;
	line_at(k, start, &line);
	struct strbuf name = { 0 };
	sb_add(&name, line.name, line.name_length);
	if (line.module)
		sb_addf(&name, " [%.*s]", (int)line.module_length, line.module);
	sym = xmalloc(sizeof(*sym));
	*sym = (struct sym){ .start = line.address, .size = size, .name = string_store(k->names, name.buf, name.len) };
	sb_free(&name);
	u64_map_put(&k->found, key, sym);
	GROW(k->syms, k->syms_cap, k->nsyms + 1);
	k->syms[k->nsyms++] = sym;
	return sym;
}

/* Of the run of lines at one address starting at run, the preferred one of kind (as the table builder picks). */
static size_t preferred_in_run(const struct kallsyms_text *k, size_t run, uint64_t address, enum sym_kind kind,
			       size_t *after_run)
{
	size_t best = SIZE_MAX;
	enum symbol_binding best_binding = BINDING_LOCAL;
	struct kallsyms_line best_line = { 0 };
	size_t at = run;
	for (; at < k->len; at = next_line(k, at)) {
		struct kallsyms_line line;
		enum sym_kind line_kind_found;
		line_at(k, at, &line);
		if (!line_kind(&line, &line_kind_found))
			continue;
		if (line.address != address)
			break;
		if (line_kind_found != kind)
			continue;
		enum symbol_binding b = binding_of_kallsyms_type(line.type);
		size_t shorter = line.name_length < best_line.name_length ? line.name_length : best_line.name_length;
		int order = best == SIZE_MAX ? -1 : strncmp(line.name, best_line.name, shorter + 1);
		if (best == SIZE_MAX || b < best_binding || (b == best_binding && order < 0)) {
			best = at;
			best_binding = b;
			best_line = line;
		}
	}
	*after_run = at;
	return best;
}

static const struct sym *kallsyms_text_lookup(struct kallsyms_text *k, enum sym_kind kind, uint64_t addr)
{
	/* the last typed line at or below addr */
	size_t lo = 0, hi = k->len, found = SIZE_MAX;
	while (lo < hi) {
		size_t start = line_start(k->text, lo + (hi - lo) / 2);
		struct kallsyms_line line;
		line_at(k, start, &line);
		if (line.address <= addr) {
			found = start;
			lo = next_line(k, start);
		} else {
			hi = start;
		}
	}
	if (found == SIZE_MAX)
		return NULL;
	/* untyped lines (absolute, undefined) are no boundary: step back to a typed one */
	struct kallsyms_line line;
	enum sym_kind ignored;
	for (line_at(k, found, &line); !line_kind(&line, &ignored); line_at(k, found, &line)) {
		if (found == 0)
			return NULL;
		found = line_start(k->text, found - 1);
	}
	uint64_t address = line.address;
	size_t run = found;
	while (run > 0) {
		size_t prev = line_start(k->text, run - 1);
		struct kallsyms_line p;
		line_at(k, prev, &p);
		if (line_kind(&p, &ignored) && p.address != address)
			break;
		run = prev;
	}
	size_t after;
	size_t best = preferred_in_run(k, run, address, kind, &after);
	if (best == SIZE_MAX)
		return NULL;
	uint64_t size = 0;
	for (size_t at = after; at < k->len; at = next_line(k, at)) {
		struct kallsyms_line next;
		line_at(k, at, &next);
		if (line_kind(&next, &ignored)) {
			size = next.address - address;
			break;
		}
	}
	if (addr - address < size || addr == address)
		return materialise(k, best, kind, size);
	return NULL;
}

const struct sym *kallsyms_index_lookup(const struct symtab *tab, enum sym_kind kind, uint64_t addr)
{
	return kallsyms_text_lookup(tab->text_index, kind, addr);
}

size_t kallsyms_index_count(const struct symtab *tab, enum sym_kind kind)
{
	return tab->text_index->count[kind];
}

void kallsyms_index_free(struct kallsyms_text *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nsyms; i++)
		free(k->syms[i]);
	free(k->syms);
	u64_map_free(&k->found);
	string_pool_free(k->names);
	free(k->text);
	free(k);
}

int symtab_from_kallsyms_buffer(char *text, size_t len, struct symtab **out)
{
	*out = NULL;
	text[len] = '\0';
	struct kallsyms_text *k = xcalloc(1, sizeof(*k));
	k->text = text;
	k->len = len;
	int err = scan_sorted(k);
	if (err == 0) {
		k->names = string_pool_new();
		struct symtab *tab = symtab_new();
		tab->text_index = k;
		*out = tab;
		return 0;
	}
	free(k);
	if (err == -EINVAL) {
		/* unsorted or with odd lines: build the table */
		FILE *file = fmemopen(text, len ? len : 1, "r");
		err = file ? load_from_stream(file, out) : -errno;
		if (file)
			fclose(file);
	}
	free(text);
	return err;
}

int symtab_from_kallsyms(const char *path, struct symtab **out)
{
	*out = NULL;
	size_t len;
	char *text;
	int err = read_file_bounded(path, KALLSYMS_MAX_BYTES, &text, &len);
	return err ? err : symtab_from_kallsyms_buffer(text, len, out);
}

/* ---- the part of a table that some addresses need ---- */

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The typed lines at one address: text[start, end), untyped lines between them included. */
struct kallsyms_run {
	uint64_t address;
	size_t start, end;
};

struct subset_state {
	const uint64_t *addrs;
	size_t naddrs, next;  /* addrs[next] is the lowest not yet placed */
	bool kept_previous;   /* the run before the current one was written */
	struct strbuf *out;
};

/* Whether some address lies in [from, to) (to 0: only the address from itself: the last run). */
static bool addresses_within(struct subset_state *s, uint64_t from, uint64_t to)
{
	while (s->next < s->naddrs && s->addrs[s->next] < from)
		s->next++;
	if (s->next == s->naddrs)
		return false;
	return to ? s->addrs[s->next] < to : s->addrs[s->next] == from;
}

/* Decide run r, whose extent ends at next_address (0: it is the last). */
static void subset_run(struct subset_state *s, const char *text, const struct kallsyms_run *r, uint64_t next_address)
{
	bool keep = addresses_within(s, r->address, next_address);
	if (keep)
		sb_add(s->out, text + r->start, r->end - r->start);
	else if (s->kept_previous)
		/* where the kept symbol before ends: the extents of the symbols kept stay what they are */
		sb_addf(s->out, "%016llx t %s\n", (unsigned long long)r->address, KALLSYMS_NOT_CARRIED);
	s->kept_previous = keep;
}

int kallsyms_subset(const char *text, size_t len, uint64_t *addrs, size_t naddrs, struct strbuf *out)
{
	sort_items(addrs, naddrs, sizeof(*addrs), compare_u64);
	struct subset_state s = { .addrs = addrs, .naddrs = naddrs, .out = out };
	size_t kept_from = out->len;
	struct kallsyms_run run = { 0 };
	bool have_run = false;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		struct kallsyms_line line;
		enum sym_kind kind;
		/* parse_line reads up to the newline; a last line without one is copied to keep it terminated */
		char last[512];
		const char *p = text + at;
		if (!nl) {
			snprintf(last, sizeof(last), "%.*s", (int)(len - at), text + at);
			p = last;
		}
		if (parse_line(p, &line) && line_kind(&line, &kind)) {
			if (have_run && line.address == run.address) {
				run.end = end;
			} else {
				if (have_run && line.address < run.address) {
					out->len = kept_from;
					if (out->buf)
						out->buf[out->len] = '\0';
					return -EINVAL;
				}
				if (have_run)
					subset_run(&s, text, &run, line.address);
				run = (struct kallsyms_run){ line.address, at, end };
				have_run = true;
			}
		}
		at = end;
	}
	if (have_run)
		subset_run(&s, text, &run, 0);
	if (out->len > kept_from && out->buf[out->len - 1] != '\n')
		sb_add(out, "\n", 1);
	return 0;
}
