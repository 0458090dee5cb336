/*
 * test_elf.c: symbol tables from ELF files and images (symbolize/elf.c).
 *
 * The expected values come from independent tools, never from hard-coded
 * addresses: readelf lists every symbol, section and note of the fixture
 * (build/fixtures/elf_fixture, from tests/fixtures/elf_fixture.c), nm gives
 * the addresses and sizes of its named symbols, and the vDSO is dumped to a
 * file so that readelf can read it too.  Only the sizes the fixture's source
 * declares (int, char[4096], ...) are written here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "unit_helpers.h"

#define FIXTURE "build/fixtures/elf_fixture"
#define STRIPPED_FIXTURE "build/fixtures/elf_fixture.stripped"

/* ---- running the reference tools (each_output_line, nm_symbol: unit_helpers.h) ---- */

/* A function or object row of `readelf -sW`. */
struct symbol_row {
	uint64_t value, size;
	enum sym_kind kind;
	long section; /* -1 for ABS and COMMON */
	bool label;   /* NOTYPE: a code label when its section is code (keep_code_labels) */
	char name[256];
};

struct symbol_rows {
	const char *table; /* ".symtab" or ".dynsym" */
	bool in_table;
	struct symbol_row *rows;
	size_t count, cap;
};

static bool kind_of_readelf_type(const char *type, enum sym_kind *kind)
{
	if (strcmp(type, "FUNC") == 0 || strcmp(type, "IFUNC") == 0)
		*kind = SYM_FUNC;
	else if (strcmp(type, "OBJECT") == 0 || strcmp(type, "COMMON") == 0)
		*kind = SYM_DATA;
	else
		return false;
	return true;
}

static void take_symbol_row(const char *line, void *context)
{
	struct symbol_rows *rows = context;
	char value[32], size[32], type[32], bind[32], visibility[32], section[32], name[256];

	if (strncmp(line, "Symbol table '", 14) == 0) {
		size_t length = strlen(rows->table);
		rows->in_table = strncmp(line + 14, rows->table, length) == 0 && line[14 + length] == '\'';
		return;
	}
	if (!rows->in_table ||
	    sscanf(line, " %*[0-9]: %31s %31s %31s %31s %31s %31s %255s", value, size, type, bind, visibility,
		   section, name) != 7)
		return;

	char *section_end;
	struct symbol_row row = { .value = strtoull(value, NULL, 16), .size = strtoull(size, NULL, 0),
				  .section = strtol(section, &section_end, 10) };
	if (*section_end)
		row.section = -1;
	row.label = strcmp(type, "NOTYPE") == 0 && row.section >= 0;
	if (row.label)
		row.kind = SYM_FUNC;
	else if (!kind_of_readelf_type(type, &row.kind))
		return;
	if (strcmp(section, "UND") == 0 || row.value == 0)
		return;
	name[strcspn(name, "@")] = '\0'; /* readelf shows versions as name@@VERSION */
	snprintf(row.name, sizeof(row.name), "%s", name);
	GROW(rows->rows, rows->cap, rows->count + 1);
	rows->rows[rows->count++] = row;
}

static struct symbol_rows read_symbol_rows(const char *path, const char *table);

static size_t rows_at(const struct symbol_rows *rows, enum sym_kind kind, uint64_t value)
{
	size_t count = 0;
	for (size_t i = 0; i < rows->count; i++)
		count += rows->rows[i].kind == kind && rows->rows[i].value == value;
	return count;
}

static size_t distinct_addresses(const struct symbol_rows *rows, enum sym_kind kind)
{
	size_t count = 0;
	for (size_t i = 0; i < rows->count; i++) {
		bool first = rows->rows[i].kind == kind;
		for (size_t j = 0; first && j < i; j++)
			first = !(rows->rows[j].kind == kind && rows->rows[j].value == rows->rows[i].value);
		count += first;
	}
	return count;
}

/* One section header as `readelf -SW` reports it. */
struct section_row {
	long index;
	char name[64];
	uint64_t address, offset, size;
	bool code; /* flags AX: loaded and executable */
};

struct section_rows {
	struct section_row *rows;
	size_t count, cap;
};

static void take_section_row(const char *line, void *context)
{
	struct section_rows *sections = context;
	struct section_row row;
	unsigned long long address, offset, size;
	char type[32], flags[16] = "";
	int fields = sscanf(line, " [%ld] %63s %31s %llx %llx %llx %*s %15s", &row.index, row.name, type, &address,
			    &offset, &size, flags);
	if (fields < 6)
		return;
	row.code = strchr(flags, 'A') && strchr(flags, 'X'); /* a section without flags shows its Lk number there */
	row.address = address;
	row.offset = offset;
	row.size = size;
	GROW(sections->rows, sections->cap, sections->count + 1);
	sections->rows[sections->count++] = row;
}

static struct section_rows read_section_rows(const char *path)
{
	struct section_rows sections = { 0 };
	char command[512];
	snprintf(command, sizeof(command), "readelf -SW %s", path);
	each_output_line(command, take_section_row, &sections);
	return sections;
}

static struct section_row section_named(const char *path, const char *name)
{
	struct section_rows sections = read_section_rows(path);
	struct section_row found = { .index = -1 };
	for (size_t i = 0; i < sections.count; i++)
		if (strcmp(sections.rows[i].name, name) == 0)
			found = sections.rows[i];
	free(sections.rows);
	cr_assert_geq(found.index, 0, "readelf -S shows no %s in %s", name, path);
	return found;
}

/*
 * Untyped symbols are code labels where symtab.c keeps them: in a code
 * section, before its end, outside every function of known size.  The
 * others (markers in data, _etext, local labels inside a function) go.
 */
static void keep_code_labels(struct symbol_rows *rows, const char *path)
{
	struct section_rows sections = read_section_rows(path);
	size_t kept = 0;
	for (size_t i = 0; i < rows->count; i++) {
		const struct symbol_row *row = &rows->rows[i];
		bool keep = !row->label;
		for (size_t j = 0; row->label && j < sections.count; j++) {
			const struct section_row *section = &sections.rows[j];
			if (section->index == row->section)
				keep = section->code && row->value < section->address + section->size;
		}
		for (size_t j = 0; keep && row->label && j < rows->count; j++) {
			const struct symbol_row *f = &rows->rows[j];
			keep = f->label || f->kind != SYM_FUNC || !f->size || row->value < f->value ||
			       row->value - f->value >= f->size;
		}
		if (keep)
			rows->rows[kept++] = *row;
	}
	rows->count = kept;
	free(sections.rows);
}

static struct symbol_rows read_symbol_rows(const char *path, const char *table)
{
	struct symbol_rows rows = { .table = table };
	char command[512];
	snprintf(command, sizeof(command), "readelf -sW %s", path);
	each_output_line(command, take_symbol_row, &rows);
	keep_code_labels(&rows, path);
	return rows;
}

/* The PLT stubs objdump names (name@plt) in a file's .plt, .plt.sec and .plt.got. */
struct plt_stubs {
	struct plt_stub {
		uint64_t address;
		char name[256];
	} stubs[64];
	size_t count;
};

static void take_plt_stub(const char *line, void *context)
{
	struct plt_stubs *p = context;
	unsigned long long address;
	char name[256];
	/* "0000000000001030 <printf@plt>:"; the header shows as "<printf@plt-0x10>" */
	if (sscanf(line, "%llx <%255[^>]>:", &address, name) != 2 || !strstr(name, "@plt") ||
	    strcspn(name, "+-") != strlen(name) || p->count == ARRAY_SIZE(p->stubs))
		return;
	p->stubs[p->count].address = address;
	snprintf(p->stubs[p->count].name, sizeof(p->stubs[p->count].name), "%s", name);
	p->count++;
}

static struct plt_stubs read_plt_stubs(const char *path)
{
	struct plt_stubs p = { .count = 0 };
	char command[512];
	snprintf(command, sizeof(command), "objdump -d -j .plt -j .plt.sec -j .plt.got %s 2>/dev/null", path);
	each_output_line(command, take_plt_stub, &p);
	return p;
}

struct found_text {
	const char *prefix;
	char value[256];
};

static void take_text_after(const char *line, void *context)
{
	struct found_text *found = context;
	const char *at = strstr(line, found->prefix);
	if (!at || found->value[0])
		return;
	at += strlen(found->prefix);
	at += strspn(at, " ");
	snprintf(found->value, sizeof(found->value), "%.*s", (int)strcspn(at, " \n"), at);
}

/* The first word after prefix in the output of command, or "" when there is none. */
static struct found_text text_after(const char *command, const char *prefix)
{
	struct found_text found = { .prefix = prefix };
	each_output_line(command, take_text_after, &found);
	return found;
}

static struct symtab *load(const char *path)
{
	struct symtab *tab = NULL;
	int err = symtab_from_elf_file(path, &tab);
	cr_assert_eq(err, 0, "symtab_from_elf_file(%s) = %d (%s); run `make fixtures` first", path, err,
		     strerror(-err));
	cr_assert_not_null(tab);
	return tab;
}

/* ---- symbols ---- */

static void expect_not_named(const struct sym *sym, const char *name, const char *why)
{
	cr_expect(sym == NULL || strcmp(sym->name, name) != 0, "%s: got %s", why, name);
}

Test(elf, every_function_and_object_in_symtab_is_found_where_readelf_puts_it)
{
	struct symbol_rows rows = read_symbol_rows(FIXTURE, ".symtab");
	struct symtab *tab = load(FIXTURE);
	cr_assert_gt(rows.count, 10, "readelf found only %zu symbols", rows.count);

	for (size_t i = 0; i < rows.count; i++) {
		const struct symbol_row *row = &rows.rows[i];
		const struct sym *sym = symtab_lookup(tab, row->kind, row->value);
		cr_assert_not_null(sym, "%s at %#llx not found", row->name, (unsigned long long)row->value);
		cr_expect_eq(sym->start, row->value, "%s: start %#llx", row->name, (unsigned long long)sym->start);
		if (rows_at(&rows, row->kind, row->value) > 1)
			continue; /* aliases: symtab.c picks one, tested in kallsyms */
		cr_expect_str_eq(sym->name, row->name);
		if (row->size)
			cr_expect_eq(sym->size, row->size, "%s: size %llu, readelf says %llu", row->name,
				     (unsigned long long)sym->size, (unsigned long long)row->size);
	}
	/* and the PLT stubs, which no symbol table lists */
	cr_expect_eq(symtab_count(tab, SYM_FUNC), distinct_addresses(&rows, SYM_FUNC) + read_plt_stubs(FIXTURE).count);
	cr_expect_eq(symtab_count(tab, SYM_DATA), distinct_addresses(&rows, SYM_DATA));
	symtab_free(tab);
	free(rows.rows);
}

static uint64_t section_end(const struct section_rows *sections, long index)
{
	for (size_t i = 0; i < sections->count; i++)
		if (sections->rows[i].index == index)
			return sections->rows[i].address + sections->rows[i].size;
	return UINT64_MAX;
}

static uint64_t next_symbol_start(const struct symbol_rows *rows, const struct symbol_row *row)
{
	uint64_t next = UINT64_MAX;
	for (size_t i = 0; i < rows->count; i++)
		if (rows->rows[i].kind == row->kind && rows->rows[i].value > row->value && rows->rows[i].value < next)
			next = rows->rows[i].value;
	return next;
}

Test(elf, size_0_symbols_reach_the_next_symbol_but_not_past_their_section)
{
	struct symbol_rows rows = read_symbol_rows(FIXTURE, ".symtab");
	struct section_rows sections = read_section_rows(FIXTURE);
	struct symtab *tab = load(FIXTURE);
	size_t checked = 0, bounded_by_section = 0;

	for (size_t i = 0; i < rows.count; i++) {
		const struct symbol_row *row = &rows.rows[i];
		if (row->size != 0 || row->section < 0 || rows_at(&rows, row->kind, row->value) > 1)
			continue;
		/* A size-0 symbol reaches the next symbol of its kind, but not past its section. */
		uint64_t limit = section_end(&sections, row->section), next = next_symbol_start(&rows, row);
		uint64_t end = next < limit ? next : limit;
		const struct sym *sym = symtab_lookup(tab, row->kind, row->value);
		cr_assert_not_null(sym, "%s not found", row->name);
		cr_expect_eq(sym->size, end - row->value, "%s: size %#llx, expected %#llx", row->name,
			     (unsigned long long)sym->size, (unsigned long long)(end - row->value));
		if (end > row->value) /* else a marker at its section's end: it covers its own address only */
			expect_not_named(symtab_lookup(tab, row->kind, end), row->name, "the end of a size-0 symbol");
		bounded_by_section += limit < next;
		checked++;
	}
	cr_expect_gt(checked, 0, "the fixture has no size-0 symbol to check");
	cr_expect_gt(bounded_by_section, 0, "no size-0 symbol ends at its section (_init, _fini?)");
	symtab_free(tab);
	free(rows.rows);
	free(sections.rows);
}

struct fixture_symbol {
	const char *name;
	enum sym_kind kind;
	uint64_t declared_size; /* from the fixture's source; 0 for functions */
};

static const struct fixture_symbol fixture_symbols[] = {
	{ "fixture_add", SYM_FUNC, 0 },
	{ "fixture_static_helper", SYM_FUNC, 0 },
	{ "fixture_fill", SYM_FUNC, 0 },
	{ "main", SYM_FUNC, 0 },
	{ "fixture_word", SYM_DATA, sizeof(int) },
	{ "fixture_table", SYM_DATA, 16 * sizeof(long) },
	{ "fixture_buffer", SYM_DATA, 4096 },
	{ "fixture_message", SYM_DATA, sizeof("sigprof elf fixture") },
	{ "fixture_static_counter", SYM_DATA, sizeof(int) },
};

static void expect_covers(const struct symtab *tab, const struct fixture_symbol *expected, uint64_t addr,
			  const struct nm_symbol *nm)
{
	const struct sym *sym = symtab_lookup(tab, expected->kind, addr);
	cr_assert_not_null(sym, "%s + %llu not found", expected->name, (unsigned long long)(addr - nm->address));
	cr_expect_str_eq(sym->name, expected->name);
	cr_expect_eq(sym->start, nm->address, "%s starts at %#llx", expected->name, (unsigned long long)sym->start);
	cr_expect_eq(sym->size, nm->size, "%s has size %llu", expected->name, (unsigned long long)sym->size);
}

Test(elf, fixture_symbols_cover_exactly_their_nm_address_range)
{
	struct symtab *tab = load(FIXTURE);
	for (size_t i = 0; i < ARRAY_SIZE(fixture_symbols); i++) {
		const struct fixture_symbol *expected = &fixture_symbols[i];
		struct nm_symbol nm = nm_symbol(FIXTURE, expected->name);
		enum sym_kind other_kind = expected->kind == SYM_FUNC ? SYM_DATA : SYM_FUNC;

		if (expected->declared_size)
			cr_expect_eq(nm.size, expected->declared_size, "nm says %s has %llu bytes", expected->name,
				     (unsigned long long)nm.size);
		expect_covers(tab, expected, nm.address, &nm);
		expect_covers(tab, expected, nm.address + nm.size / 2, &nm);
		expect_covers(tab, expected, nm.address + nm.size - 1, &nm);
		expect_not_named(symtab_lookup(tab, expected->kind, nm.address + nm.size), expected->name,
				 "one past the end");
		expect_not_named(symtab_lookup(tab, expected->kind, nm.address - 1), expected->name,
				 "one before the start");
		expect_not_named(symtab_lookup(tab, other_kind, nm.address), expected->name, "the other kind");
	}
	symtab_free(tab);
}

/* The address nm gives a symbol of the fixture, size 0 or not. */
static uint64_t nm_address(const char *path, const char *name)
{
	char command[512];
	snprintf(command, sizeof(command), "nm --defined-only %s | grep ' %s$'", path, name);
	struct found_text found = text_after(command, "");
	cr_assert_neq(found.value[0], '\0', "nm does not list %s in %s", name, path);
	return strtoull(found.value, NULL, 16);
}

/* The fixture's untyped labels, as a table loaded from path names them. */
static void expect_code_labels(const char *path)
{
	struct symtab *tab = load(path);
	uint64_t label = nm_address(FIXTURE, "fixture_code_label");
	uint64_t after = nm_address(FIXTURE, "fixture_code_label_after");
	uint64_t function = nm_address(FIXTURE, "fixture_asm_function");
	uint64_t inner = nm_address(FIXTURE, "fixture_inner_label");
	cr_assert(label < after && after < function && function < inner, "the labels are laid out as written");

	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, label);
	cr_assert_not_null(sym, "%s: the label outside any function is not found", path);
	cr_expect_str_eq(sym->name, "fixture_code_label");
	cr_expect_eq(sym->size, after - label, "it reaches the next label");
	sym = symtab_lookup(tab, SYM_FUNC, after - 1);
	cr_expect(sym && strcmp(sym->name, "fixture_code_label") == 0, "its last byte");
	sym = symtab_lookup(tab, SYM_FUNC, function - 1);
	cr_expect(sym && strcmp(sym->name, "fixture_code_label_after") == 0, "the second label reaches the function");
	sym = symtab_lookup(tab, SYM_FUNC, inner);
	cr_expect(sym && strcmp(sym->name, "fixture_asm_function") == 0,
		  "%s: the label inside fixture_asm_function names its code: got %s", path, sym ? sym->name : "nothing");
	expect_not_named(symtab_lookup(tab, SYM_DATA, label), "fixture_code_label", "a code label as data");
	symtab_free(tab);
}

Test(elf, code_labels_name_the_code_outside_functions)
{
	expect_code_labels(FIXTURE);
}

/* PLT stubs are named as objdump names them, from the stubs themselves: stripped or not. */
static void expect_plt_stubs(const char *path)
{
	struct plt_stubs p = read_plt_stubs(path);
	struct section_row plt = section_named(path, ".plt");
	cr_assert_geq(p.count, 2, "objdump names %zu PLT stubs in %s (the fixture calls printf and memset)", p.count,
		      path);
	struct symtab *tab = load(path);
	for (size_t i = 0; i < p.count; i++) {
		const struct sym *sym = symtab_lookup(tab, SYM_FUNC, p.stubs[i].address);
		cr_assert_not_null(sym, "%s: %s at %#llx not found", path, p.stubs[i].name,
				   (unsigned long long)p.stubs[i].address);
		cr_expect_str_eq(sym->name, p.stubs[i].name);
		cr_expect_eq(sym->start, p.stubs[i].address);
		sym = symtab_lookup(tab, SYM_FUNC, p.stubs[i].address + sym->size - 1);
		cr_expect(sym && strcmp(sym->name, p.stubs[i].name) == 0, "the last byte of %s", p.stubs[i].name);
	}
	/* the header before the first stub pushes and jumps to the resolver: no symbol's */
	const struct sym *header = symtab_lookup(tab, SYM_FUNC, plt.address);
	cr_expect(header == NULL || !strstr(header->name, "@plt"), "the PLT header is named %s", header->name);
	symtab_free(tab);
}

Test(elf, plt_stubs_are_named_like_objdump_names_them)
{
	expect_plt_stubs(FIXTURE);
	expect_plt_stubs(STRIPPED_FIXTURE);
}

Test(elf, aliases_resolve_to_the_global_and_share_the_known_size)
{
	struct symtab *tab = load(FIXTURE);
	struct nm_symbol fill = nm_symbol(FIXTURE, "fixture_fill");
	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, fill.address);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, "fixture_fill", "not the weak or local alias whose names sort first");

	struct nm_symbol local = nm_symbol(FIXTURE, "fixture_sized_local");
	sym = symtab_lookup(tab, SYM_DATA, local.address + local.size - 1);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, "fixture_sizeless_global");
	cr_expect_eq(sym->size, local.size, "the global alias of size 0 takes the local one's %llu bytes",
		     (unsigned long long)local.size);

	struct nm_symbol sized = nm_symbol(FIXTURE, "fixture_sized_global");
	sym = symtab_lookup(tab, SYM_DATA, sized.address);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, "fixture_sized_global", "a known size beats a name that sorts first");
	cr_expect_eq(sym->size, sized.size);
	symtab_free(tab);
}

Test(elf, versioned_names_lose_their_version)
{
	struct symtab *tab = load(FIXTURE);
	struct nm_symbol impl = nm_symbol(FIXTURE, "fixture_versioned_impl");
	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, impl.address);
	cr_assert_not_null(sym);
	/* Both names are local; without its version "fixture_versioned" sorts first. */
	cr_expect_str_eq(sym->name, "fixture_versioned");
	symtab_free(tab);
}

Test(elf, thread_local_offsets_are_not_data)
{
	struct symtab *tab = load(FIXTURE);
	expect_not_named(symtab_lookup(tab, SYM_DATA, 8), "fixture_tls_second", "a TLS offset");
	symtab_free(tab);
}

Test(elf, lookups_outside_every_symbol_find_nothing)
{
	struct symtab *tab = load(FIXTURE);
	cr_expect_null(symtab_lookup(tab, SYM_FUNC, 0));
	cr_expect_null(symtab_lookup(tab, SYM_FUNC, 1));
	cr_expect_null(symtab_lookup(tab, SYM_FUNC, UINT64_MAX));
	cr_expect_null(symtab_lookup(tab, SYM_DATA, UINT64_MAX));
	cr_expect_null(symtab_lookup(NULL, SYM_FUNC, 0x1000));
	cr_expect_eq(symtab_count(NULL, SYM_FUNC), 0);
	symtab_free(tab);
	symtab_free(NULL);
}

/* A function of a stripped file with no symbol names it from .eh_frame: "FILE!fn@0xSTART", its own start. */
static void expect_eh_frame_name(const struct sym *sym, const char *file, uint64_t start)
{
	const char *slash = strrchr(file, '/');
	char want[256];
	snprintf(want, sizeof(want), "%s%s0x%llx", slash ? slash + 1 : file, EH_FRAME_NAME_MARK,
		 (unsigned long long)start);
	cr_assert_not_null(sym, "nothing names the function at 0x%llx of %s", (unsigned long long)start, file);
	cr_expect_eq(sym->start, start);
	cr_expect_str_eq(sym->name, want);
}

Test(elf, stripped_fixture_falls_back_to_dynsym_and_never_names_wrongly)
{
	struct symbol_rows full_rows = read_symbol_rows(FIXTURE, ".symtab");
	struct symbol_rows stripped_symtab = read_symbol_rows(STRIPPED_FIXTURE, ".symtab");
	struct symbol_rows dynsym = read_symbol_rows(STRIPPED_FIXTURE, ".dynsym");
	struct symtab *stripped = load(STRIPPED_FIXTURE);

	cr_assert_eq(stripped_symtab.count, 0, "the stripped fixture still has a .symtab");
	/* dynsym, PLT stubs, and the functions .eh_frame lists that neither names */
	cr_expect_gt(symtab_count(stripped, SYM_FUNC),
		     distinct_addresses(&dynsym, SYM_FUNC) + read_plt_stubs(STRIPPED_FIXTURE).count);
	cr_expect_eq(symtab_count(stripped, SYM_DATA), distinct_addresses(&dynsym, SYM_DATA));
	for (size_t i = 0; i < full_rows.count; i++) {
		const struct symbol_row *row = &full_rows.rows[i];
		const struct sym *sym = symtab_lookup(stripped, row->kind, row->value);
		if (!sym || sym->start != row->value || rows_at(&full_rows, row->kind, row->value) != 1)
			continue;
		if (strstr(sym->name, EH_FRAME_NAME_MARK))
			expect_eh_frame_name(sym, STRIPPED_FIXTURE, row->value); /* never another function's name */
		else
			cr_expect_str_eq(sym->name, row->name);
	}
	/* a static function: no symbol at all, but .eh_frame's name at its own start */
	struct nm_symbol helper = nm_symbol(FIXTURE, "fixture_static_helper");
	expect_eh_frame_name(symtab_lookup(stripped, SYM_FUNC, helper.address), STRIPPED_FIXTURE, helper.address);
	expect_eh_frame_name(symtab_lookup(stripped, SYM_FUNC, helper.address + 1), STRIPPED_FIXTURE, helper.address);
	symtab_free(stripped);
	free(full_rows.rows);
	free(stripped_symtab.rows);
	free(dynsym.rows);
}

/*
 * _init and _fini have no .eh_frame entry and no symbol once stripped: the
 * dynamic section names them, each to the end of its section (.init,
 * .fini), where the unstripped file's .symtab has them.
 */
Test(elf, stripped_fixture_names_init_and_fini_from_the_dynamic_section)
{
	struct symtab *stripped = load(STRIPPED_FIXTURE);
	const char *const names[][2] = { { "_init", ".init" }, { "_fini", ".fini" } };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		uint64_t start = nm_address(FIXTURE, names[i][0]);
		struct section_row section = section_named(STRIPPED_FIXTURE, names[i][1]);
		cr_assert_eq(start, section.address, "%s starts %s", names[i][0], names[i][1]);
		uint64_t inside[] = { start, start + section.size - 1 };
		for (size_t j = 0; j < ARRAY_SIZE(inside); j++) {
			const struct sym *sym = symtab_lookup(stripped, SYM_FUNC, inside[j]);
			cr_assert_not_null(sym, "nothing names 0x%llx in %s", (unsigned long long)inside[j], names[i][1]);
			cr_expect_str_eq(sym->name, names[i][0]);
			cr_expect_eq(sym->start, start);
		}
		expect_not_named(symtab_lookup(stripped, SYM_FUNC, start + section.size), names[i][0], "past its section");
	}
	symtab_free(stripped);
}

/* ---- file offsets, ELF type, build-id ---- */

static void expect_offset_maps(const struct symtab *tab, uint64_t offset, uint64_t expected, const char *what)
{
	uint64_t vaddr = 0;
	int err = symtab_offset_to_vaddr(tab, offset, &vaddr);
	cr_expect_eq(err, 0, "%s: %d", what, err);
	cr_expect_eq(vaddr, expected, "%s maps to %#llx, not %#llx", what, (unsigned long long)vaddr,
		     (unsigned long long)expected);
}

static void expect_section_maps(const struct symtab *tab, const char *name)
{
	struct section_row section = section_named(FIXTURE, name);
	uint64_t steps[] = { 0, section.size / 2, section.size - 1 };
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		expect_offset_maps(tab, section.offset + steps[i], section.address + steps[i], name);
}

/*
 * .bss has no file bytes and its sh_offset is not aligned like its address,
 * but the kernel maps the data segment linearly, so .bss lies where .data's
 * offset and address put it.
 */
static void expect_bss_maps(const struct symtab *tab)
{
	struct section_row data = section_named(FIXTURE, ".data"), bss = section_named(FIXTURE, ".bss");
	uint64_t steps[] = { 0, bss.size / 2, bss.size - 1 };
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		uint64_t vaddr = bss.address + steps[i];
		expect_offset_maps(tab, data.offset + (vaddr - data.address), vaddr, ".bss");
	}
}

Test(elf, file_offsets_map_to_the_vaddrs_of_the_section_headers)
{
	struct symtab *tab = load(FIXTURE);
	expect_section_maps(tab, ".text");
	expect_section_maps(tab, ".rodata");
	expect_section_maps(tab, ".data");
	expect_bss_maps(tab); /* past the segment's file bytes, inside its memory size */
	uint64_t vaddr;
	cr_expect_eq(symtab_offset_to_vaddr(tab, 1ULL << 40, &vaddr), -ENOENT);
	symtab_free(tab);
}

Test(elf, relocatable_exactly_when_readelf_says_dyn)
{
	struct found_text type = text_after("readelf -h " FIXTURE, "Type:");
	struct symtab *tab = load(FIXTURE);
	cr_expect_eq(symtab_is_relocatable(tab), strcmp(type.value, "DYN") == 0, "readelf says the type is %s",
		     type.value);
	symtab_free(tab);
}

Test(elf, build_id_is_the_one_readelf_prints)
{
	struct found_text expected = text_after("readelf -n " FIXTURE, "Build ID: ");
	cr_assert_neq(expected.value[0], '\0', "the fixture has no build-id; is it built with --build-id?");
	const char *paths[] = { FIXTURE, STRIPPED_FIXTURE };
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		struct symtab *tab = load(paths[i]);
		cr_assert_not_null(symtab_build_id(tab), "%s: no build-id", paths[i]);
		cr_expect_str_eq(symtab_build_id(tab), expected.value, "%s", paths[i]);
		symtab_free(tab);
	}
}

/* ---- the vDSO, from this process's memory ---- */

struct vdso_range {
	uint64_t start, end;
};

static struct vdso_range find_vdso(void)
{
	struct vdso_range range = { 0 };
	FILE *maps = fopen("/proc/self/maps", "r");
	cr_assert_not_null(maps, "/proc/self/maps: %s", strerror(errno));
	char line[512];
	unsigned long long start, end;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			range = (struct vdso_range){ start, end };
	fclose(maps);
	return range;
}

Test(elf, vdso_copied_from_memory_names_clock_gettime)
{
	struct vdso_range range = find_vdso();
	if (!range.start)
		cr_skip_test("environment: this kernel maps no vDSO (vdso=0?)");

	size_t size = range.end - range.start;
	void *image = xmalloc(size);
	memcpy(image, (const void *)(uintptr_t)range.start, size);
	struct symtab *tab = NULL;
	int err = symtab_from_elf_memory(image, size, &tab);
	cr_assert_eq(err, 0, "symtab_from_elf_memory: %d", err);

	/* readelf reads the same bytes from a file, for the expected address and build-id. */
	char *path = temp_file_with(image, size);
	struct symbol_rows rows = read_symbol_rows(path, ".dynsym");
	const struct symbol_row *clock_gettime_row = NULL;
	for (size_t i = 0; i < rows.count; i++)
		if (strcmp(rows.rows[i].name, "__vdso_clock_gettime") == 0)
			clock_gettime_row = &rows.rows[i];
	cr_assert_not_null(clock_gettime_row, "readelf finds no __vdso_clock_gettime in the vDSO");

	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, clock_gettime_row->value + 1);
	cr_assert_not_null(sym);
	cr_expect(strcmp(sym->name, "__vdso_clock_gettime") == 0 || strcmp(sym->name, "clock_gettime") == 0,
		  "the vDSO's clock_gettime is named %s", sym->name);
	cr_expect_eq(sym->start, clock_gettime_row->value);
	cr_expect_eq(symtab_count(tab, SYM_FUNC), distinct_addresses(&rows, SYM_FUNC));

	char command[512];
	snprintf(command, sizeof(command), "readelf -n %s", path);
	struct found_text build_id = text_after(command, "Build ID: ");
	if (build_id.value[0])
		cr_expect_str_eq(symtab_build_id(tab), build_id.value);

	unlink(path);
	free(path);
	free(rows.rows);
	free(image);
	symtab_free(tab);
}

/* ---- files that are not (whole) ELF files ---- */

static void expect_load_error(const char *path, int expected)
{
	struct symtab *tab = (struct symtab *)&tab; /* must be reset to NULL */
	int err = symtab_from_elf_file(path, &tab);
	cr_expect_eq(err, expected, "%s: got %d (%s), expected %d", path, err, strerror(-err), expected);
	cr_expect_null(tab);
}

Test(elf, unreadable_files_are_errors_not_crashes)
{
	expect_load_error("build/fixtures/no-such-file", -ENOENT);
	expect_load_error("tests/unit/test_elf.c", -ENOEXEC);
	expect_load_error("build/fixtures", -EISDIR);

	char *empty = temp_file_with("", 0);
	expect_load_error(empty, -ENOEXEC);
	unlink(empty);
	free(empty);

	size_t size;
	char *image = read_whole_file(FIXTURE, &size);
	cr_assert_not_null(image, "%s: %s", FIXTURE, strerror(errno));
	char *truncated = temp_file_with(image, 100);
	struct symtab *tab = NULL;
	cr_expect_lt(symtab_from_elf_file(truncated, &tab), 0, "a 100-byte ELF file loaded");
	cr_expect_null(tab);
	unlink(truncated);
	free(truncated);
	free(image);
}

Test(elf, every_truncation_of_the_fixture_is_handled)
{
	size_t size;
	char *image = read_whole_file(FIXTURE, &size);
	cr_assert_not_null(image, "%s: %s", FIXTURE, strerror(errno));
	for (size_t length = 0; length < size; length += length < 4096 ? 7 : 61) {
		struct symtab *tab = NULL;
		int err = symtab_from_elf_memory(image, length, &tab);
		cr_assert(err == 0 ? tab != NULL : tab == NULL && err < 0, "length %zu: %d", length, err);
		symtab_lookup(tab, SYM_FUNC, 0x1150);
		symtab_free(tab);
	}
	struct symtab *whole = NULL;
	cr_expect_eq(symtab_from_elf_memory(image, size, &whole), 0);
	cr_expect_gt(symtab_count(whole, SYM_FUNC), 3);
	symtab_free(whole);
	free(image);
}

/* ---- separate debug files ---- */

#define DEBUG_FILE FIXTURE ".debug"
#define LINKED_FIXTURE FIXTURE ".linked"

TEMP_DIR_SUITE(debug_files);

/* The fixture's own symbols, static ones too, found in a table loaded from a stripped copy. */
static void expect_fixture_symbols(const struct symtab *tab)
{
	for (size_t i = 0; i < ARRAY_SIZE(fixture_symbols); i++) {
		struct nm_symbol nm = nm_symbol(FIXTURE, fixture_symbols[i].name);
		expect_covers(tab, &fixture_symbols[i], nm.address, &nm);
		expect_covers(tab, &fixture_symbols[i], nm.address + nm.size - 1, &nm);
	}
}

static void expect_debug_file(const char *stripped, const char *expected)
{
	char found[4096];
	int err = debug_file_find(stripped, found, sizeof(found));
	cr_assert_eq(err, 0, "debug_file_find(%s) = %d, expected %s", stripped, err, expected);
	cr_expect_str_eq(found, expected);
	struct symtab *tab = load(stripped);
	cr_assert_not_null(symtab_debug_file(tab));
	cr_expect_str_eq(symtab_debug_file(tab), expected);
	expect_fixture_symbols(tab);
	symtab_free(tab);
	expect_code_labels(stripped); /* from the debug file, whose .text is NOBITS */
}

static void expect_no_debug_file(const char *stripped)
{
	char found[4096];
	cr_expect_eq(debug_file_find(stripped, found, sizeof(found)), -ENOENT);
	struct symtab *tab = load(stripped);
	cr_expect_null(symtab_debug_file(tab), "found %s", symtab_debug_file(tab));
	struct nm_symbol helper = nm_symbol(FIXTURE, "fixture_static_helper");
	expect_eh_frame_name(symtab_lookup(tab, SYM_FUNC, helper.address), stripped, helper.address);
	symtab_free(tab);
}

Test(debug_files, build_id_path_under_each_debug_root)
{
	struct found_text build_id = text_after("readelf -n " FIXTURE, "Build ID: ");
	cr_assert_gt(strlen(build_id.value), 2, "the fixture has no build-id");
	char *empty_root = path_join(dir, "empty"), *root = path_join(dir, "root"), *debug_dir, *expected, *roots;
	make_directories(empty_root);
	cr_assert_geq(asprintf(&debug_dir, "%s/.build-id/%.2s", root, build_id.value), 0);
	cr_assert_geq(asprintf(&expected, "%s/%s.debug", debug_dir, build_id.value + 2), 0);
	cr_assert_geq(asprintf(&roots, "%s:%s", empty_root, root), 0);
	make_directories(debug_dir);
	copy_file_with(DEBUG_FILE, expected, NULL, 0);

	symbolize_set_debug_dirs(empty_root);
	expect_no_debug_file(STRIPPED_FIXTURE);
	symbolize_set_debug_dirs(roots); /* the second root holds it */
	cr_expect_str_eq(symbolize_debug_dirs(), roots);
	expect_debug_file(STRIPPED_FIXTURE, expected);
	expect_debug_file(LINKED_FIXTURE, expected);
	symbolize_set_debug_dirs(NULL);
	cr_expect_str_eq(symbolize_debug_dirs(), "/usr/lib/debug");
	free(empty_root);
	free(root);
	free(debug_dir);
	free(expected);
	free(roots);
}

/* The name .gnu_debuglink holds, as readelf dumps it ("[     0]  NAME"). */
static struct found_text debuglink_name(void)
{
	struct found_text name = text_after("readelf --string-dump=.gnu_debuglink " LINKED_FIXTURE, "]");
	cr_assert_neq(name.value[0], '\0', "%s has no .gnu_debuglink", LINKED_FIXTURE);
	return name;
}

/*
 * The linked copy is placed in DIR/bin, the debug file in each place gdb
 * looks; the debug root holds no build-id tree, so only the link can find it.
 */
Test(debug_files, debuglink_in_the_directory_its_debug_subdirectory_and_under_the_root)
{
	struct found_text name = debuglink_name();
	char *bin = path_join(dir, "bin"), *root = path_join(dir, "root");
	make_directories(bin);
	make_directories(root);
	char *program = path_join(bin, "program");
	copy_file_with(LINKED_FIXTURE, program, NULL, 0);
	symbolize_set_debug_dirs(root);
	expect_no_debug_file(program);

	char *debug_subdirectory = path_join(bin, ".debug"), *under_root;
	cr_assert_geq(asprintf(&under_root, "%s%s", root, bin), 0);
	const char *places[] = { under_root, debug_subdirectory, bin }; /* each found before the previous */
	for (size_t i = 0; i < ARRAY_SIZE(places); i++) {
		make_directories(places[i]);
		char *debug = path_join(places[i], name.value);
		copy_file_with(DEBUG_FILE, debug, NULL, 0);
		expect_debug_file(program, debug);
		free(debug);
	}
	free(bin);
	free(root);
	free(program);
	free(debug_subdirectory);
	free(under_root);
}

Test(debug_files, debuglink_with_another_crc_is_refused)
{
	struct found_text name = debuglink_name();
	char *root = path_join(dir, "root"), *program = path_join(dir, "program"), *debug = path_join(dir, name.value);
	make_directories(root);
	copy_file_with(LINKED_FIXTURE, program, NULL, 0);
	copy_file_with(DEBUG_FILE, debug, "x", 1); /* one byte more: another file, another CRC32 */
	symbolize_set_debug_dirs(root);
	expect_no_debug_file(program);
	copy_file_with(DEBUG_FILE, debug, NULL, 0);
	expect_debug_file(program, debug);
	free(root);
	free(program);
	free(debug);
}

Test(debug_files, files_that_are_not_elf_have_no_debug_file)
{
	char found[64];
	cr_expect_eq(debug_file_find("/nonexistent/sigprof-file", found, sizeof(found)), -ENOENT);
	char *text = path_join(dir, "text");
	write_file(text, "not ELF\n", 8);
	cr_expect_eq(debug_file_find(text, found, sizeof(found)), -ENOEXEC);
	free(text);
}

/* The C library this test runs with, from /proc/self/maps. */
static void this_libc(char *path, size_t len)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	cr_assert_not_null(maps);
	char line[1024];
	path[0] = '\0';
	while (!path[0] && fgets(line, sizeof(line), maps)) {
		char *file = strchr(line, '/');
		if (file && strstr(file, "/libc.so")) {
			file[strcspn(file, "\n")] = '\0';
			snprintf(path, len, "%s", file);
		}
	}
	fclose(maps);
	cr_assert_neq(path[0], '\0', "no libc.so in /proc/self/maps");
}

/* The st_value of a function in a file's .symtab, as readelf lists it ("NUM: VALUE SIZE FUNC ... NAME"). */
static uint64_t readelf_function(const char *path, const char *name)
{
	char command[4200];
	snprintf(command, sizeof(command), "readelf -sW %s 2>/dev/null | awk '$4 == \"FUNC\" && $8 == \"%s\" { print $2; exit }'",
		 path, name);
	struct found_text value = text_after(command, "");
	cr_assert_neq(value.value[0], '\0', "readelf finds no %s in %s", name, path);
	return strtoull(value.value, NULL, 16);
}

/*
 * Debian's libc.so.6 is stripped; libc6-dbg (in the GNUmakefile's
 * DEB_PACKAGES) holds its debug file, whose .symtab names the local
 * functions the futex and sigreturn paths are recognized by.
 */
Test(debug_files, stripped_libc_gets_its_local_functions_from_its_debug_file)
{
	char libc[1024], debug[4096];
	this_libc(libc, sizeof(libc));
	if (debug_file_find(libc, debug, sizeof(debug)) != 0) {
		fprintf(stderr, "note: %s has no debug file here (install libc6-dbg); test skipped\n", libc);
		cr_skip_test("environment: no debug file for %s", libc);
	}
	struct symtab *tab = load(libc);
	cr_expect_str_eq(symtab_debug_file(tab), debug);
	uint64_t lock_wait = readelf_function(debug, "__lll_lock_wait");
	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, lock_wait);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, "__lll_lock_wait");

	/* The debug file names the trampoline itself; the synthetic one still covers the byte before it. */
	uint64_t restore = readelf_function(debug, "__restore_rt");
	const uint64_t probes[] = { restore - 1, restore, restore + 8 };
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		sym = symtab_lookup(tab, SYM_FUNC, probes[i]);
		cr_assert_not_null(sym, "nothing at %#llx", (unsigned long long)probes[i]);
		cr_expect_str_eq(sym->name, "__restore_rt", "%#llx", (unsigned long long)probes[i]);
	}
	symtab_free(tab);
}

/*
 * Whether a program was built with frame pointers, from its code: the
 * -O0 fixture sets one up in every function of .text but _start, the
 * unwinder's fixture (-O2 -fomit-frame-pointer, as distributions build) in
 * few (record takes a quarter as the line).
 */
Test(elf, frame_pointer_functions_tell_the_two_builds_apart)
{
	size_t with, functions;
	cr_assert_eq(elf_frame_pointer_functions(FIXTURE, &with, &functions), 0);
	cr_expect_gt(functions, 2);
	cr_expect_geq(with + 1, functions, "%zu of %zu", with, functions);
	cr_assert_eq(elf_frame_pointer_functions(STRIPPED_FIXTURE, &with, &functions), 0, "stripped: .eh_frame stays");
	cr_expect_geq(with + 1, functions, "%zu of %zu", with, functions);
	cr_assert_eq(elf_frame_pointer_functions("build/fixtures/unwind_fixture", &with, &functions), 0);
	cr_expect_gt(functions, 2);
	cr_expect_lt(with * 4, functions, "%zu of %zu", with, functions);
	cr_expect_eq(elf_frame_pointer_functions("tests/unit/test_elf.c", &with, &functions), -ENOEXEC);
	cr_expect_eq(elf_frame_pointer_functions("no/such/file", &with, &functions), -ENOENT);
}
