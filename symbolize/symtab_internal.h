/*
 * symtab_internal.h: the inside of a struct symtab, shared by the loaders.
 *
 * Two loaders fill a symtab: elf.c (ELF files and in-memory images) and
 * kallsyms.c (/proc/kallsyms).  Both go through the same builder:
 * symtab_new(), then symtab_intern() for each name and symtab_add() for each
 * symbol in any order, then symtab_finish(), which sorts each kind by
 * address, keeps one symbol per address and gives size-0 symbols the room up
 * to the next symbol.  After that the table is read-only and symtab.c answers
 * every lookup the same way whatever loaded it.
 *
 * This header is private to symbolize/; the public contract is
 * include/sigprof/symbolize/symbolize.h.
 */
#ifndef SIGPROF_SYMTAB_INTERNAL_H
#define SIGPROF_SYMTAB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"

#define SYM_KIND_COUNT 2

/*
 * mov $15, %rax; syscall: rt_sigreturn, the signal return trampoline every
 * x86-64 libc installs.  elf.c names its copies __restore_rt in stripped
 * files; unwind.c recognizes signal frames by it.
 */
static const unsigned char x86_64_rt_sigreturn[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

/* When several symbols share an address, the lowest binding wins. */
enum symbol_binding {
	BINDING_GLOBAL,
	BINDING_WEAK,
	BINDING_LOCAL,
};

/* A symbol as a loader hands it over, before the table is finished. */
struct symbol_candidate {
	struct sym sym;           /* sym.name from symtab_intern() */
	uint64_t limit;           /* a size-0 symbol never extends past this address (its section's end) */
	enum symbol_binding binding;
	bool label;               /* a code label (elf.c): loses to a typed symbol at its address, dropped inside one */
};

/* A PT_LOAD program header: the file range [offset, offset + file_size) sits at vaddr. */
struct load_segment {
	uint64_t offset;
	uint64_t file_size;
	uint64_t memory_size; /* >= file_size; the rest is .bss */
	uint64_t vaddr;
};

struct kallsyms_text;

struct symtab {
	struct sym *syms[SYM_KIND_COUNT];                  /* sorted by start, one per address, once finished */
	size_t count[SYM_KIND_COUNT];
	struct symbol_candidate *pending[SYM_KIND_COUNT]; /* symbols added but not yet finished */
	size_t pending_count[SYM_KIND_COUNT];
	size_t pending_cap[SYM_KIND_COUNT];
	struct string_pool *strings;                       /* owns every name and the build-id */
	struct load_segment *segments;                     /* empty for kallsyms */
	size_t segment_count, segment_cap;
	bool relocatable;                                  /* ELF e_type == ET_DYN */
	const char *build_id;                              /* lowercase hex, or NULL */
	const char *debug_file;                            /* the separate debug file the symbols came from, or NULL */
	const char **display_names[SYM_KIND_COUNT];        /* demangled names by symbol index, made on first use */
	struct kallsyms_text *text_index;                  /* a sorted kallsyms text searched in place (kallsyms.c) */
};

/* Lookups and counts of a symtab backed by a kallsyms text (kallsyms.c). */
const struct sym *kallsyms_index_lookup(const struct symtab *tab, enum sym_kind kind, uint64_t addr);
size_t kallsyms_index_count(const struct symtab *tab, enum sym_kind kind);
void kallsyms_index_free(struct kallsyms_text *index);

struct symtab *symtab_new(void);
/* A copy of s owned by the symtab, alive until symtab_free(). */
const char *symtab_intern(struct symtab *tab, const char *s);
/* The same without looking for an equal string first: for sources whose names are (nearly) all distinct. */
const char *symtab_store(struct symtab *tab, const char *s, size_t len);
void symtab_add(struct symtab *tab, enum sym_kind kind, const struct symbol_candidate *candidate);
void symtab_add_segment(struct symtab *tab, const struct load_segment *segment);
/*
 * The vaddr the byte at a file offset is loaded at: the one offset-to-vaddr
 * rule of symbolize/ (symtab.c), for symbols and unwinding alike.  Ask it
 * for the file offset of an address the mapping loads (a code address),
 * not for a mapping's start: a segment that begins part-way through a page
 * (lld's layout) is mapped from the page's start, whose offset belongs to
 * the segment before.
 */
bool load_segments_vaddr(const struct load_segment *segments, size_t count, uint64_t file_offset, uint64_t *vaddr);
/* Sort, deduplicate and size the added symbols; call once, after the last symtab_add(). */
void symtab_finish(struct symtab *tab);

/* Whether symbolize_set_demangle() left demangling on (demangle.c). */
bool symbolize_demangles(void);

/* The NT_GNU_BUILD_ID note of an ELF handle as lowercase hex interned in tab, or NULL (elf.c). */
const char *elf_build_id(Elf *elf, struct symtab *tab);
/*
 * The ELF file at path (opened under --symfs, symbolize_open()): its
 * handle, with its descriptor in *fd, for elf_close_path(); NULL with
 * -errno in *err (-ENOEXEC: not an ELF file).
 */
Elf *elf_open_path(const char *path, int *fd, int *err);
void elf_close_path(Elf *elf, int fd);

/* ---- separate debug files (debuginfo.c) ---- */

/* What a .gnu_debuglink section holds. */
struct debug_link {
	char name[256];
	uint32_t crc; /* CRC32 of the whole debug file */
};

/* The .gnu_debuglink of an ELF handle: 0, -ENOENT when it has none, -ENOEXEC when it is malformed. */
int debug_link_read(Elf *elf, struct debug_link *link);
/*
 * The debug file of the stripped file at path, by build-id (may be NULL)
 * then by link (may be NULL), in the order of debuginfo.c's first comment.
 * 0 with its path in found, or -ENOENT.
 */
int debug_file_locate(const char *path, const char *build_id, const struct debug_link *link, struct strbuf *found);

#endif
