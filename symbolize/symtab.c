/*
 * symtab.c: the symbol table every loader fills and every lookup reads.
 *
 * Loaders (elf.c, kallsyms.c) add symbols in whatever order their source
 * gives them.  symtab_finish() then turns each kind into one array sorted by
 * address, so that a lookup is a binary search for the last symbol starting
 * at or below the address:
 *
 *   - Several symbols at one address (aliases such as memcpy and
 *     __memcpy_avx_unaligned, or a function and its local label) become one:
 *     a typed symbol beats a code label (elf.c's STT_NOTYPE symbols in
 *     code), then the global beats the weak beats the local, then a known size beats
 *     size 0, then a public name beats glibc's internal "__GI_" alias, then
 *     the alphabetically first name, so that the choice does not
 *     depend on the order of the file.  A winner of size 0 takes the size of
 *     the first alias that has one.
 *   - A symbol of size 0 (hand-written assembly, kallsyms' last entry) covers
 *     up to the next symbol of its kind but never past its limit, the end of
 *     its section.  One that is last and unbounded keeps size 0 and matches
 *     its own address only.
 *   - A code label inside a symbol of known size (a local label of
 *     hand-written assembly) is dropped: the function it is part of names
 *     those addresses.  Labels name only code no typed symbol covers.
 *
 * Names and the build-id live in one string pool owned by the table, so a
 * symtab never points into a libelf handle or a line buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"
#include "symtab_internal.h"

struct symtab *symtab_new(void)
{
	struct symtab *tab = xcalloc(1, sizeof(*tab));
	tab->strings = string_pool_new();
	return tab;
}

const char *symtab_intern(struct symtab *tab, const char *s)
{
	return string_intern(tab->strings, s);
}

const char *symtab_store(struct symtab *tab, const char *s, size_t len)
{
	return string_store(tab->strings, s, len);
}

void symtab_add(struct symtab *tab, enum sym_kind kind, const struct symbol_candidate *candidate)
{
	GROW(tab->pending[kind], tab->pending_cap[kind], tab->pending_count[kind] + 1);
	tab->pending[kind][tab->pending_count[kind]++] = *candidate;
}

void symtab_add_segment(struct symtab *tab, const struct load_segment *segment)
{
	GROW(tab->segments, tab->segment_cap, tab->segment_count + 1);
	tab->segments[tab->segment_count++] = *segment;
}

/*
 * glibc's .symtab (from its debug file) doubles many functions with an
 * internal alias of the same binding, "__GI___lll_lock_wait" beside
 * "__lll_lock_wait" (hidden_def; "__EI_" for exported ones): the public
 * name is the one people, and the path rules, know.
 */
static bool is_internal_alias(const char *name)
{
	return strncmp(name, "__GI_", 5) == 0 || strncmp(name, "__EI_", 5) == 0;
}

/* By address, then the preferred alias first (see the comment at the top). */
static int compare_candidates(const void *a, const void *b)
{
	const struct symbol_candidate *x = a, *y = b;
	if (x->sym.start != y->sym.start)
		return x->sym.start < y->sym.start ? -1 : 1;
	if (x->label != y->label)
		return x->label ? 1 : -1;
	if (x->binding != y->binding)
		return x->binding < y->binding ? -1 : 1;
	if ((x->sym.size == 0) != (y->sym.size == 0))
		return x->sym.size == 0 ? 1 : -1;
	if (is_internal_alias(x->sym.name) != is_internal_alias(y->sym.name))
		return is_internal_alias(x->sym.name) ? 1 : -1;
	return strcmp(x->sym.name, y->sym.name);
}

/* Collapse each run of equal addresses into its first, preferred, symbol; returns the new count. */
static size_t keep_one_per_address(struct symbol_candidate *candidates, size_t count)
{
	size_t kept = 0;
	for (size_t i = 0; i < count; i++) {
		struct symbol_candidate *last = kept ? &candidates[kept - 1] : NULL;
		if (last && last->sym.start == candidates[i].sym.start) {
			if (last->sym.size == 0)
				last->sym.size = candidates[i].sym.size;
			continue;
		}
		candidates[kept++] = candidates[i];
	}
	return kept;
}

/* Drop the labels that lie inside a typed symbol of known size; returns the new count. */
static size_t drop_covered_labels(struct symbol_candidate *candidates, size_t count)
{
	size_t kept = 0;
	uint64_t covered_to = 0; /* the end of the typed symbols seen so far */
	for (size_t i = 0; i < count; i++) {
		const struct symbol_candidate *c = &candidates[i];
		if (c->label && c->sym.start < covered_to)
			continue;
		if (!c->label && c->sym.size && c->sym.start + c->sym.size > covered_to)
			covered_to = c->sym.start + c->sym.size;
		candidates[kept++] = *c;
	}
	return kept;
}

static void size_open_symbols(struct symbol_candidate *candidates, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct symbol_candidate *c = &candidates[i];
		if (c->sym.size != 0)
			continue;
		uint64_t end = i + 1 < count ? candidates[i + 1].sym.start : UINT64_MAX;
		if (end > c->limit)
			end = c->limit;
		if (end != UINT64_MAX && end > c->sym.start)
			c->sym.size = end - c->sym.start;
	}
}

static void finish_kind(struct symtab *tab, enum sym_kind kind)
{
	struct symbol_candidate *candidates = tab->pending[kind];
	size_t count = tab->pending_count[kind];

	if (count)
		sort_unless_sorted(candidates, count, sizeof(*candidates), compare_candidates);
	count = keep_one_per_address(candidates, count);
	count = drop_covered_labels(candidates, count);
	size_open_symbols(candidates, count);

	tab->syms[kind] = xmalloc(count * sizeof(struct sym));
	for (size_t i = 0; i < count; i++)
		tab->syms[kind][i] = candidates[i].sym;
	tab->count[kind] = count;

	free(candidates);
	tab->pending[kind] = NULL;
	tab->pending_count[kind] = tab->pending_cap[kind] = 0;
}

void symtab_finish(struct symtab *tab)
{
	finish_kind(tab, SYM_FUNC);
	finish_kind(tab, SYM_DATA);
}

static bool valid_kind(enum sym_kind kind)
{
	return (unsigned)kind < SYM_KIND_COUNT;
}

const struct sym *symtab_lookup(const struct symtab *tab, enum sym_kind kind, uint64_t addr)
{
	if (!tab || !valid_kind(kind))
		return NULL;
	if (tab->text_index)
		return kallsyms_index_lookup(tab, kind, addr);

	/* Find the first symbol that starts above addr; the candidate is the one before it. */
	const struct sym *syms = tab->syms[kind];
	size_t low = 0, high = tab->count[kind];
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		if (syms[middle].start <= addr)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return NULL;

	const struct sym *sym = &syms[low - 1];
	if (addr - sym->start < sym->size || addr == sym->start)
		return sym;
	return NULL;
}

size_t symtab_count(const struct symtab *tab, enum sym_kind kind)
{
	if (!tab || !valid_kind(kind))
		return 0;
	if (tab->text_index)
		return kallsyms_index_count(tab, kind);
	return tab->count[kind];
}

/*
 * The segment whose file bytes hold the offset wins.  Failing that, an
 * offset just past a segment's file bytes but inside its memory size is in
 * its .bss: the kernel maps the file's last data page and the .bss that
 * starts on it together, so a futex word there arrives as a file offset.
 */
static bool segment_vaddr(const struct load_segment *segments, size_t count, uint64_t file_offset, bool include_bss,
			  uint64_t *vaddr)
{
	for (size_t i = 0; i < count; i++) {
		const struct load_segment *seg = &segments[i];
		uint64_t extent = include_bss ? seg->memory_size : seg->file_size;
		if (file_offset >= seg->offset && file_offset - seg->offset < extent) {
			*vaddr = file_offset - seg->offset + seg->vaddr;
			return true;
		}
	}
	return false;
}

bool load_segments_vaddr(const struct load_segment *segments, size_t count, uint64_t file_offset, uint64_t *vaddr)
{
	return segment_vaddr(segments, count, file_offset, false, vaddr) ||
	       segment_vaddr(segments, count, file_offset, true, vaddr);
}

int symtab_offset_to_vaddr(const struct symtab *tab, uint64_t file_offset, uint64_t *vaddr)
{
	if (tab && load_segments_vaddr(tab->segments, tab->segment_count, file_offset, vaddr))
		return 0;
	return -ENOENT;
}

bool symtab_is_relocatable(const struct symtab *tab)
{
	return tab && tab->relocatable;
}

const char *symtab_build_id(const struct symtab *tab)
{
	return tab ? tab->build_id : NULL;
}

const char *symtab_debug_file(const struct symtab *tab)
{
	return tab ? tab->debug_file : NULL;
}

/*
 * Demangled names are made on first use, not at load: a library holds
 * thousands of C++ symbols and a report names a few dozen of them.  The
 * kallsyms index hands out symbols that live outside tab->syms; kernel
 * names are C and are shown as they are.
 */
const char *symtab_display_name(struct symtab *tab, enum sym_kind kind, const struct sym *sym)
{
	if (!tab || !sym || !valid_kind(kind) || tab->text_index || sym < tab->syms[kind] ||
	    sym >= tab->syms[kind] + tab->count[kind])
		return sym ? sym->name : NULL;
	if (!symbolize_demangles())
		return sym->name;
	if (!tab->display_names[kind])
		tab->display_names[kind] = xcalloc(tab->count[kind], sizeof(const char *));
	const char **slot = &tab->display_names[kind][sym - tab->syms[kind]];
	if (!*slot) {
		char *demangled = symbol_demangle(sym->name);
		*slot = demangled ? symtab_store(tab, demangled, strlen(demangled)) : sym->name;
		free(demangled);
	}
	return *slot;
}

void symtab_free(struct symtab *tab)
{
	if (!tab)
		return;
	for (int kind = 0; kind < SYM_KIND_COUNT; kind++) {
		free(tab->syms[kind]);
		free(tab->pending[kind]);
		free(tab->display_names[kind]);
	}
	free(tab->segments);
	kallsyms_index_free(tab->text_index);
	string_pool_free(tab->strings);
	free(tab);
}
