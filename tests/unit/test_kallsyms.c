/*
 * test_kallsyms.c: the kernel's symbol table (symbolize/kallsyms.c).
 *
 * Most tests write a small kallsyms-format file whose every address and
 * size is known, so lookups are checked exactly: unsorted lines, aliases,
 * module symbols, malformed lines and the all-zero file an unprivileged
 * reader gets.  One test reads the real /proc/kallsyms when it shows
 * addresses, one times a 10 MB file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "unit_helpers.h"

/* Unsorted on purpose; the comments give what each line must become. */
static const char synthetic_kallsyms[] =
	"ffffffff81000300 T func_c\n"                    /* 0x100 bytes, up to data_x */
	"ffffffff81000000 t _text\n"                     /* alias of _stext, local: loses */
	"ffffffff81000000 T _stext\n"                    /* 0x100 bytes */
	"ffffffff81000100 t func_b\n"                    /* 0x100 bytes */
	"this is not a symbol line\n"
	"ffffffff81000200 W func_weak\n"                 /* 0x100 bytes */
	"ffffffff81000400 D data_x\n"                    /* 0x10 bytes */
	"ffffffff81000410 b data_bss\n"                  /* 0xf0 bytes: the A line is not a boundary */
	"ffffffff81000480 A absolute_thing\n"            /* neither kind: skipped */
	"zzzzzzzzzzzzzzzz T bad_address\n"
	"1ffffffff81000600 T seventeen_digits\n"
	"ffffffff81000600 T\n"                           /* no name */
	"ffffffff81000600 TT double_type\n"
	"ffffffff81000600 t unclosed_module\t[mod\n"
	"ffffffff81000500 r data_ro\n"                   /* up to mod_func */
	"ffffffffc0001000 t mod_func\t[mymod]\n"         /* 0x80 bytes */
	"ffffffffc0001080 d mod_data\t[mymod]\n"         /* up to last_func */
	"ffffffffc0002000 T last_func";                  /* last, no newline: size 0 */

static int load_text(const char *contents, struct symtab **tab)
{
	char *path = temp_file_with(contents, strlen(contents));
	int err = symtab_from_kallsyms(path, tab);
	unlink(path);
	free(path);
	return err;
}

static struct symtab *load_synthetic(void)
{
	struct symtab *tab = NULL;
	int err = load_text(synthetic_kallsyms, &tab);
	cr_assert_eq(err, 0, "symtab_from_kallsyms: %d (%s)", err, strerror(-err));
	return tab;
}

struct expected_lookup {
	enum sym_kind kind;
	uint64_t addr;
	const char *name; /* NULL: nothing covers addr */
	uint64_t start, size;
};

static const struct expected_lookup synthetic_lookups[] = {
	{ SYM_FUNC, 0xffffffff80ffffff, NULL, 0, 0 },
	{ SYM_FUNC, 0xffffffff81000000, "_stext", 0xffffffff81000000, 0x100 },
	{ SYM_FUNC, 0xffffffff810000ff, "_stext", 0xffffffff81000000, 0x100 },
	{ SYM_FUNC, 0xffffffff81000100, "func_b", 0xffffffff81000100, 0x100 },
	{ SYM_FUNC, 0xffffffff81000234, "func_weak", 0xffffffff81000200, 0x100 },
	{ SYM_FUNC, 0xffffffff810003ff, "func_c", 0xffffffff81000300, 0x100 },
	{ SYM_FUNC, 0xffffffff81000400, NULL, 0, 0 },
	{ SYM_DATA, 0xffffffff81000300, NULL, 0, 0 },
	{ SYM_DATA, 0xffffffff8100040f, "data_x", 0xffffffff81000400, 0x10 },
	{ SYM_DATA, 0xffffffff81000410, "data_bss", 0xffffffff81000410, 0xf0 },
	{ SYM_DATA, 0xffffffff81000490, "data_bss", 0xffffffff81000410, 0xf0 },
	{ SYM_DATA, 0xffffffff81000500, "data_ro", 0xffffffff81000500, 0xffffffffc0001000 - 0xffffffff81000500 },
	{ SYM_FUNC, 0xffffffffc000107f, "mod_func [mymod]", 0xffffffffc0001000, 0x80 },
	{ SYM_FUNC, 0xffffffffc0001080, NULL, 0, 0 },
	{ SYM_DATA, 0xffffffffc0001fff, "mod_data [mymod]", 0xffffffffc0001080, 0xf80 },
	{ SYM_FUNC, 0xffffffffc0002000, "last_func", 0xffffffffc0002000, 0 },
	{ SYM_FUNC, 0xffffffffc0002001, NULL, 0, 0 },
	{ SYM_DATA, UINT64_MAX, NULL, 0, 0 },
};

Test(kallsyms, synthetic_file_gives_exact_symbols_and_sizes)
{
	struct symtab *tab = load_synthetic();
	for (size_t i = 0; i < ARRAY_SIZE(synthetic_lookups); i++) {
		const struct expected_lookup *expected = &synthetic_lookups[i];
		const struct sym *sym = symtab_lookup(tab, expected->kind, expected->addr);
		if (!expected->name) {
			cr_expect_null(sym, "%#llx: expected nothing, got %s", (unsigned long long)expected->addr,
				       sym ? sym->name : "");
			continue;
		}
		cr_assert_not_null(sym, "%#llx: expected %s", (unsigned long long)expected->addr, expected->name);
		cr_expect_str_eq(sym->name, expected->name);
		cr_expect_eq(sym->start, expected->start, "%s: start %#llx", sym->name, (unsigned long long)sym->start);
		cr_expect_eq(sym->size, expected->size, "%s: size %#llx", sym->name, (unsigned long long)sym->size);
	}
	cr_expect_eq(symtab_count(tab, SYM_FUNC), 6);
	cr_expect_eq(symtab_count(tab, SYM_DATA), 4);
	symtab_free(tab);
}

Test(kallsyms, kernel_table_has_no_elf_properties)
{
	struct symtab *tab = load_synthetic();
	uint64_t vaddr;
	cr_expect_eq(symtab_offset_to_vaddr(tab, 0x1000, &vaddr), -ENOENT);
	cr_expect_not(symtab_is_relocatable(tab));
	cr_expect_null(symtab_build_id(tab));
	symtab_free(tab);
}

Test(kallsyms, aliases_prefer_global_then_weak_then_name)
{
	struct symtab *tab = NULL;
	/* The local and weak aliases sort first by name, so only their binding makes them lose. */
	cr_assert_eq(load_text("ffffffff81000000 t a_local_alias\n"
			       "ffffffff81000000 W a_weak_alias\n"
			       "ffffffff81000000 T zeta_global\n"
			       "ffffffff81000000 T b_global\n"
			       "ffffffff81000040 t next\n",
			       &tab),
		     0);
	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, 0xffffffff81000010);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, "b_global");
	cr_expect_eq(sym->size, 0x40);
	cr_expect_eq(symtab_count(tab, SYM_FUNC), 2);
	symtab_free(tab);
}

Test(kallsyms, all_zero_addresses_mean_hidden_symbols)
{
	struct symtab *tab = (struct symtab *)&tab;
	int err = load_text("0000000000000000 T _stext\n"
			    "0000000000000000 t do_syscall_64\n"
			    "0000000000000000 d some_data\t[mod]\n",
			    &tab);
	cr_expect_eq(err, -EPERM);
	cr_expect_null(tab);
}

Test(kallsyms, missing_empty_and_garbage_files_are_errors)
{
	struct symtab *tab = NULL;
	cr_expect_eq(symtab_from_kallsyms("build/no-such-kallsyms", &tab), -ENOENT);
	cr_expect_eq(load_text("", &tab), -ENOEXEC);
	cr_expect_eq(load_text("not\na kallsyms\nfile\n", &tab), -ENOEXEC);
	cr_expect_eq(symtab_from_kallsyms("tests", &tab), -EISDIR);
	cr_expect_null(tab);
}

static void first_output_line(const char *command, char *out, size_t size)
{
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe, "cannot run: %s", command);
	if (!fgets(out, (int)size, pipe))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(pipe);
}

Test(kallsyms, real_kallsyms_names_the_syscall_entry)
{
	struct symtab *tab = NULL;
	int err = symtab_from_kallsyms("/proc/kallsyms", &tab);
	if (err == -EPERM)
		cr_skip_test("environment: kernel symbols hidden: run as root or set kernel.kptr_restrict=0");
	if (err == -ENOENT || err == -EACCES)
		cr_skip_test("environment: /proc/kallsyms cannot be read here (%s)", strerror(-err));
	cr_assert_eq(err, 0, "/proc/kallsyms: %d (%s)", err, strerror(-err));

	/* awk reads the file separately for the expected address and how many names share it. */
	char line[256];
	first_output_line("awk 'NF == 3 && ($3 == \"do_syscall_64\" || $3 == \"schedule\") "
			  "{ print $1, $3; exit }' /proc/kallsyms",
			  line, sizeof(line));
	char name[64] = "";
	unsigned long long address = 0;
	cr_assert_eq(sscanf(line, "%llx %63s", &address, name), 2, "neither do_syscall_64 nor schedule in kallsyms");

	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, address + 1);
	cr_assert_not_null(sym, "%s at %#llx not found", name, address);
	cr_expect_eq(sym->start, address);
	cr_expect_gt(sym->size, 1);
	char command[256], aliases[32];
	snprintf(command, sizeof(command), "grep -c '^%016llx ' /proc/kallsyms", address);
	first_output_line(command, aliases, sizeof(aliases));
	if (strcmp(aliases, "1") == 0)
		cr_expect_str_eq(sym->name, name);
	symtab_free(tab);
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

Test(kallsyms, ten_megabyte_file_loads_quickly)
{
	enum { LINES = 250000 };
	struct strbuf text = { 0 };
	for (unsigned i = 0; i < LINES; i++)
		sb_addf(&text, "%016llx %c kernel_function_number_%u%s\n", 0xffffffff81000000ULL + 16ULL * (LINES - i),
			i % 5 ? 't' : 'D', i, i % 7 ? "" : "\t[some_module]");
	cr_assert_gt(text.len, 10u << 20, "only %zu bytes", text.len);
	char *path = temp_file_with(text.buf, text.len);
	sb_free(&text);

	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct symtab *tab = NULL;
	int err = symtab_from_kallsyms(path, &tab);
	double elapsed = seconds_since(&start);
	unlink(path);
	free(path);

	cr_assert_eq(err, 0);
	cr_expect_eq(symtab_count(tab, SYM_FUNC) + symtab_count(tab, SYM_DATA), LINES);
	const struct sym *sym = symtab_lookup(tab, SYM_FUNC, 0xffffffff81000000ULL + 16ULL * (LINES - 1) + 15);
	cr_assert_not_null(sym);
	cr_expect_str_eq(sym->name, "kernel_function_number_1");
	cr_expect_eq(sym->size, 16);
	cr_expect_lt(elapsed, 5.0, "loading 10 MB took %.2f s", elapsed);
	symtab_free(tab);
}

/* This machine's /proc/kallsyms, or the test skipped when it hides its addresses. */
static char *real_kallsyms(size_t *len)
{
	char *text = read_whole_file("/proc/kallsyms", len);
	if (!text || *len < 64 || strncmp(text, "0000000000000000", 16) == 0) {
		free(text);
		cr_skip_test("environment: /proc/kallsyms is not readable with real addresses here (needs root)");
	}
	return text;
}

/*
 * The in-place search of a sorted text and the table built from an
 * unsorted one must answer every lookup alike: the same kallsyms lines,
 * once in the kernel's order (searched in place) and once reversed (which
 * forces the table builder).
 */
Test(kallsyms, sorted_text_search_agrees_with_the_table)
{
	size_t len;
	char *text = real_kallsyms(&len);
	/* keep it quick: the first 20000 lines */
	size_t cut = 0;
	for (int lines = 0; cut < len && lines < 20000; cut++)
		lines += text[cut] == '\n';
	char *sorted = xmalloc(cut + 1), *reversed = xmalloc(cut + 1);
	memcpy(sorted, text, cut);
	size_t out = 0;
	for (size_t end = cut; end > 0;) {
		size_t start = end - 1;
		while (start > 0 && text[start - 1] != '\n')
			start--;
		memcpy(reversed + out, text + start, end - start);
		out += end - start;
		end = start;
	}
	free(text);
	struct symtab *in_place, *table;
	cr_assert_eq(symtab_from_kallsyms_buffer(sorted, cut, &in_place), 0);
	cr_assert_eq(symtab_from_kallsyms_buffer(reversed, out, &table), 0);
	cr_assert_eq(symtab_count(in_place, SYM_FUNC), symtab_count(table, SYM_FUNC));
	cr_assert_eq(symtab_count(in_place, SYM_DATA), symtab_count(table, SYM_DATA));
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t probe = 0xffffffff80000000ull; probe; probe += 0x1000) {
		const struct sym *s = symtab_lookup(table, SYM_FUNC, probe);
		if (s) {
			lo = s->start < lo ? s->start : lo;
			hi = s->start > hi ? s->start : hi;
		}
		if (probe > 0xffffffffc0000000ull)
			break;
	}
	cr_assert(lo < hi, "no kernel text found to probe");
	uint64_t step = (hi - lo) / 50000 + 1;
	unsigned compared = 0;
	for (uint64_t addr = lo - 64; addr < hi + 64; addr += step) {
		for (int kind = SYM_FUNC; kind <= SYM_DATA; kind++) {
			const struct sym *a = symtab_lookup(in_place, (enum sym_kind)kind, addr);
			const struct sym *b = symtab_lookup(table, (enum sym_kind)kind, addr);
			cr_assert_eq(!a, !b, "0x%llx kind %d: in place %s, table %s", (unsigned long long)addr, kind,
				     a ? a->name : "-", b ? b->name : "-");
			if (a) {
				cr_assert_str_eq(a->name, b->name, "0x%llx", (unsigned long long)addr);
				cr_assert_eq(a->start, b->start);
				cr_assert_eq(a->size, b->size, "%s: size %llu vs %llu", a->name,
					     (unsigned long long)a->size, (unsigned long long)b->size);
				compared++;
			}
		}
	}
	cr_assert_gt(compared, 1000);
	symtab_free(in_place);
	symtab_free(table);
}

/*
 * kallsyms_subset(): the table of the kept lines names every listed
 * address, of either kind, exactly as the whole text does; an address not
 * listed is named alike, by the marker of a symbol left out, or not at
 * all: never by another real symbol.
 */
static size_t check_subset(const char *text, size_t len, uint64_t *addrs, size_t n, const uint64_t *probes,
			   size_t nprobes)
{
	uint64_t *listed = xmalloc(n * sizeof(*listed));
	memcpy(listed, addrs, n * sizeof(*listed));
	struct strbuf kept = { 0 };
	cr_assert_eq(kallsyms_subset(text, len, addrs, n, &kept), 0);
	struct symtab *whole, *part;
	char *copy = xmalloc(len + 1);
	memcpy(copy, text, len);
	cr_assert_eq(symtab_from_kallsyms_buffer(copy, len, &whole), 0);
	size_t kept_len = kept.len;
	cr_assert_eq(symtab_from_kallsyms_buffer(kept.buf, kept_len, &part), 0);
	for (size_t i = 0; i < n + nprobes; i++) {
		uint64_t addr = i < n ? listed[i] : probes[i - n];
		for (int kind = SYM_FUNC; kind <= SYM_DATA; kind++) {
			const struct sym *a = symtab_lookup(whole, (enum sym_kind)kind, addr);
			const struct sym *b = symtab_lookup(part, (enum sym_kind)kind, addr);
			if (i < n) {
				cr_assert_eq(!a, !b, "0x%llx kind %d: whole %s, subset %s", (unsigned long long)addr,
					     kind, a ? a->name : "-", b ? b->name : "-");
			} else if (b && strcmp(b->name, KALLSYMS_NOT_CARRIED) != 0) {
				cr_assert_not_null(a, "0x%llx: subset names %s, the whole text nothing",
						   (unsigned long long)addr, b->name);
			} else {
				continue;
			}
			if (a && b) {
				cr_assert_str_eq(a->name, b->name, "0x%llx kind %d", (unsigned long long)addr, kind);
				cr_assert_eq(a->start, b->start);
				cr_assert_eq(a->size, b->size, "%s", a->name);
			}
		}
	}
	symtab_free(whole);
	symtab_free(part);
	free(listed);
	return kept_len;
}

Test(kallsyms, subset_names_its_addresses_as_the_whole_text)
{
	static const char text[] = "ffffffff81000000 t _text\n"
				   "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 t func_b\n"
				   "ffffffff81000180 A absolute_thing\n"
				   "ffffffff81000200 W func_weak\n"
				   "ffffffff81000300 T func_c\n"
				   "ffffffff81000400 D data_x\n"
				   "ffffffff81000410 b data_bss\n"
				   "ffffffffc0001000 t mod_func\t[mymod]\n"
				   "ffffffffc0001080 d mod_data\t[mymod]\n"
				   "ffffffffc0002000 T last_func";
	uint64_t addrs[] = { 0xffffffff81000010, 0xffffffff81000300, 0xffffffff81000408, 0xffffffffc0002000,
			     0xffffffffc0001004, 0xffffffff81000010 };
	const uint64_t probes[] = { 0xffffffff81000100, 0xffffffff81000250, 0xffffffff81000420, 0xffffffffc0001090,
				    0xffffffffc0002001, 0xffffffff80000000 };
	check_subset(text, sizeof(text) - 1, addrs, ARRAY_SIZE(addrs), probes, ARRAY_SIZE(probes));

	struct strbuf kept = { 0 };
	uint64_t one = 0xffffffff81000250;
	cr_assert_eq(kallsyms_subset(text, sizeof(text) - 1, &one, 1, &kept), 0);
	cr_expect_str_eq(kept.buf, "ffffffff81000200 W func_weak\nffffffff81000300 t " KALLSYMS_NOT_CARRIED "\n");
	sb_free(&kept);
	/* unsorted: refused, nothing appended */
	static const char unsorted[] = "ffffffff81000300 T b\nffffffff81000000 T a\n";
	cr_assert_eq(kallsyms_subset(unsorted, sizeof(unsorted) - 1, &one, 1, &kept), -EINVAL);
	cr_expect_eq(kept.len, 0);
	sb_free(&kept);
}

Test(kallsyms, subset_of_the_real_table)
{
	size_t len;
	char *text = real_kallsyms(&len);
	/* addresses across the kernel's text and data: every 997th line's address plus a little */
	uint64_t addrs[4000], probes[4000];
	size_t n = 0, line = 0;
	for (const char *p = text; p < text + len && n < ARRAY_SIZE(addrs); line++) {
		unsigned long long a = strtoull(p, NULL, 16);
		if (line % 997 == 0 && a)
			addrs[n++] = a + line % 13;
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		p = nl ? nl + 1 : text + len;
	}
	cr_assert_gt(n, 10);
	for (size_t i = 0; i < n; i++)
		probes[i] = addrs[i] + 0x40 + i % 64; /* near a listed one, often in a symbol left out */
	size_t kept = check_subset(text, len, addrs, n, probes, n);
	cr_expect_lt(kept * 20, len, "%zu addresses kept %zu of %zu bytes", n, kept, len);
	free(text);
}
