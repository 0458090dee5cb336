/*
 * test_demangle.c: C++ and Rust names as the report shows them (symbolize/demangle.c,
 * symtab_display_name()).
 *
 * The expected names are c++filt's (binutils, on every machine with a
 * toolchain), run by the test on each mangled name of the table: nothing
 * demangled is written here.  Names that are not C++ ("main", "_Exit", a
 * bare "i" that __cxa_demangle would read as a type) must come back as
 * they are, as c++filt leaves them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

#define INLINE_FIXTURE "build/fixtures/inline_fixture"

static const char *const names[] = {
	"_ZN3foo3barEv",
	"_Z3addii",
	"_ZNK3Foo3getEv",
	"_ZNSt6vectorIiSaIiEE9push_backERKi",
	"_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
	"_ZZ4mainE5local",
	"_ZTV3Foo",
	"_Z3fooi.constprop.0",
	"_ZN7fixture6scaledEi",
	"_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_",
	"main",
	"_Exit",
	"i",
	"_Zinvalid",
	"__lll_lock_wait",
};

static void take_line(const char *line, void *context)
{
	struct strbuf *out = context;
	sb_add(out, line, strcspn(line, "\n"));
}

static char *cplusfilt(const char *name)
{
	char command[512];
	snprintf(command, sizeof(command), "c++filt '%s'", name);
	struct strbuf out = { 0 };
	each_output_line(command, take_line, &out);
	cr_assert_not_null(out.buf, "c++filt printed nothing for %s", name);
	return out.buf;
}

Test(demangle, every_name_as_cplusfilt_shows_it)
{
	size_t demangled_count = 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *expected = cplusfilt(names[i]);
		char *demangled = symbol_demangle(names[i]);
		cr_expect_str_eq(demangled ? demangled : names[i], expected, "%s", names[i]);
		if (strcmp(expected, names[i]) == 0)
			cr_expect_null(demangled, "%s is not C++ but became %s", names[i], demangled);
		demangled_count += demangled != NULL;
		free(demangled);
		free(expected);
	}
	cr_expect_geq(demangled_count, 9, "only %zu names demangled", demangled_count);
}

/*
 * Rust: v0 names and legacy ones (a C++-shaped name ending in its hash),
 * taken from a Rust program's symbol table.  c++filt prints them verbose:
 * each crate's disambiguator after its name ("core[c1f1a4ba060b9bfa]") and a legacy
 * name's hash ("::h0123456789abcdef"), which the report leaves out as perf
 * does; otherwise the name is c++filt's.
 */
static const char *const rust_names[] = {
	"_RNvCs1234_7mycrate4main",
	"_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
	"_RNvMNtCs4X4t9plMPHF_9addr2line4unitINtB2_7ResUnitpE14dwarf_and_unit",
	"_ZN4core3fmt5write17h0123456789abcdefE",
	"_ZN3std2rt10lang_start17hfedcba9876543210E",
};

Test(demangle, rust_names_as_cplusfilt_shows_them_without_hashes)
{
	for (size_t i = 0; i < ARRAY_SIZE(rust_names); i++) {
		char command[512];
		snprintf(command, sizeof(command),
			 "c++filt '%s' | sed -E 's/([A-Za-z0-9_])\\[[0-9a-f]+\\]/\\1/g; s/::h[0-9a-f]{16}$//'", rust_names[i]);
		struct strbuf expected = { 0 };
		each_output_line(command, take_line, &expected);
		cr_assert_not_null(expected.buf, "c++filt printed nothing for %s", rust_names[i]);
		cr_assert_str_neq(expected.buf, rust_names[i], "c++filt does not demangle %s", rust_names[i]);
		char *demangled = symbol_demangle(rust_names[i]);
		cr_expect_str_eq(demangled ? demangled : rust_names[i], expected.buf, "%s", rust_names[i]);
		free(demangled);
		sb_free(&expected);
	}
}

Test(demangle, raw_names_when_turned_off)
{
	symbolize_set_demangle(false);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		cr_expect_null(symbol_demangle(names[i]), "%s", names[i]);
	symbolize_set_demangle(true);
	char *back = symbol_demangle("_ZN3foo3barEv");
	cr_expect_not_null(back);
	free(back);
}

struct nm_address {
	const char *name;
	uint64_t address;
};

static void take_nm_address(const char *line, void *context)
{
	struct nm_address *found = context;
	unsigned long long address;
	char type, name[512];
	if (sscanf(line, "%llx %c %511s", &address, &type, name) == 3 && strcmp(name, found->name) == 0)
		found->address = address;
}

/* A symbol table's names are demangled once, when shown, and raw when turned off. */
Test(demangle, symbol_table_names_shown_demangled_once)
{
	struct nm_address found = { .name = "_ZN7fixture6scaledEi" };
	each_output_line("nm " INLINE_FIXTURE, take_nm_address, &found);
	cr_assert_neq(found.address, 0, "nm finds no %s in %s", found.name, INLINE_FIXTURE);
	char *expected = cplusfilt(found.name);

	struct symtab *tab = NULL;
	cr_assert_eq(symtab_from_elf_file(INLINE_FIXTURE, &tab), 0, "run `make fixtures` first");
	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, found.address);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, found.name, "the table keeps the raw name");
	const char *shown = symtab_display_name(tab, SYM_FUNC, sym);
	cr_expect_str_eq(shown, expected);
	cr_expect_eq(symtab_display_name(tab, SYM_FUNC, sym), shown, "demangled again instead of kept");
	symbolize_set_demangle(false);
	cr_expect_str_eq(symtab_display_name(tab, SYM_FUNC, sym), found.name);
	symbolize_set_demangle(true);
	cr_expect_null(symtab_display_name(tab, SYM_FUNC, NULL));
	symtab_free(tab);
	free(expected);
}
