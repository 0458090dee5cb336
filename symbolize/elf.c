/*
 * elf.c: symbol tables from ELF files and from in-memory ELF images (the
 * vDSO), read with libelf's gelf interface so that 32- and 64-bit files of
 * either byte order look the same.
 *
 * From a file we take three things, then let the libelf handle go:
 *   - the symbols of .symtab; when the file was stripped, those of its
 *     separate debug file's .symtab (debuginfo.c finds it), else of .dynsym.
 *     Functions (STT_FUNC, STT_GNU_IFUNC), code labels (STT_NOTYPE in a
 *     code section, see is_code_label) and objects (STT_OBJECT,
 *     STT_COMMON) are kept; undefined symbols, symbols at address 0, TLS
 *     offsets and section/file markers are not.  "memcpy@@GLIBC_2.14"
 *     becomes "memcpy".  Each symbol's section end bounds it if its size is
 *     0 (see symtab.c for the rest of the sizing rules).  Two kinds of
 *     code no table names get made-up names: x86-64 PLT stubs
 *     ("memset@plt", add_plt_symbols) and the sigreturn trampoline of a
 *     stripped libc (__restore_rt);
 *   - the PT_LOAD program headers, to turn MMAP2 file offsets into vaddrs;
 *   - the NT_GNU_BUILD_ID note, as lowercase hex.
 *
 * Anything that is not a readable ELF file (a text file, an empty or
 * truncated file, an archive, a directory) is an error code, never a crash:
 * libelf checks every offset against the file size before using it.  Files
 * are read with ELF_C_READ rather than mapped, so that a library rebuilt
 * while we read it cannot kill us with SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sigprof/base/util.h"
#include "symtab_internal.h"

#define ANY_SECTION SIZE_MAX

/* One symbol section being read, and what reading it needs. */
struct symbol_source {
	Elf *elf;
	Elf_Data *symbols;          /* the symbol section's entries */
	Elf_Data *extended_indexes; /* SHT_SYMTAB_SHNDX for files with more than 65279 sections, or NULL */
	size_t count;               /* entries in symbols, the null entry 0 included */
	size_t string_section;      /* sh_link: the section that holds the names */
	uint64_t *section_ends;     /* sh_addr + sh_size of each section, by section index */
	bool *section_code;         /* the section is loaded code (SHF_ALLOC | SHF_EXECINSTR), by section index */
	size_t section_count;
	struct strbuf scratch;      /* a name with its @version cut off */
};

/* The first section of the given type; unless linked_to is ANY_SECTION, only one whose sh_link is linked_to. */
static Elf_Scn *find_section(Elf *elf, GElf_Word type, size_t linked_to)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type)
			continue;
		if (linked_to == ANY_SECTION || shdr.sh_link == linked_to)
			return scn;
	}
	return NULL;
}

static int read_section_ends(struct symbol_source *src)
{
	size_t count;
	if (elf_getshdrnum(src->elf, &count) != 0)
		return -ENOEXEC;
	src->section_ends = xcalloc(count, sizeof(*src->section_ends));
	src->section_code = xcalloc(count, sizeof(*src->section_code));
	src->section_count = count;
	for (size_t i = 0; i < count; i++) {
		GElf_Shdr shdr;
		Elf_Scn *scn = elf_getscn(src->elf, i);
		bool known = scn && gelf_getshdr(scn, &shdr);
		src->section_ends[i] = known ? shdr.sh_addr + shdr.sh_size : UINT64_MAX;
		src->section_code[i] = known && (shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
							(SHF_ALLOC | SHF_EXECINSTR);
	}
	return 0;
}

static int open_symbol_source(Elf *elf, Elf_Scn *symbol_section, struct symbol_source *src)
{
	GElf_Shdr shdr;
	size_t entry_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

	src->elf = elf;
	if (!gelf_getshdr(symbol_section, &shdr) || entry_size == 0)
		return -ENOEXEC;
	src->symbols = elf_getdata(symbol_section, NULL);
	if (!src->symbols)
		return -ENOEXEC;
	src->count = src->symbols->d_size / entry_size;
	src->string_section = shdr.sh_link;

	Elf_Scn *indexes = find_section(elf, SHT_SYMTAB_SHNDX, elf_ndxscn(symbol_section));
	src->extended_indexes = indexes ? elf_getdata(indexes, NULL) : NULL;
	return read_section_ends(src);
}

static bool kind_of_elf_type(unsigned type, enum sym_kind *kind)
{
	switch (type) {
	case STT_FUNC:
	case STT_GNU_IFUNC:
		*kind = SYM_FUNC;
		return true;
	case STT_OBJECT:
	case STT_COMMON:
		*kind = SYM_DATA;
		return true;
	default:
		return false;
	}
}

static enum symbol_binding binding_of_elf(unsigned bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return BINDING_GLOBAL;
	case STB_WEAK:
		return BINDING_WEAK;
	default:
		return BINDING_LOCAL;
	}
}

/* The symbol's section index, or SIZE_MAX for absolute and common symbols. */
static size_t symbol_section(const struct symbol_source *src, const GElf_Sym *sym, GElf_Word extended_index)
{
	bool extended = sym->st_shndx == SHN_XINDEX;
	if (sym->st_shndx >= SHN_LORESERVE && !extended)
		return SIZE_MAX;
	size_t section = extended ? extended_index : sym->st_shndx;
	return section < src->section_count ? section : SIZE_MAX;
}

/* The end of the symbol's section, or UINT64_MAX for absolute and common symbols. */
static uint64_t section_limit(const struct symbol_source *src, size_t section)
{
	return section != SIZE_MAX ? src->section_ends[section] : UINT64_MAX;
}

/*
 * A code label: a symbol without a type (STT_NOTYPE) inside a code section.
 * Hand-written assembly that declares no .type leaves its entry points so:
 * ld.so's _start and _dl_start_user (its RTLD_START, where every program's
 * main thread begins) are the ones that end the start-up stacks, and perf
 * names them too (its elf_sym__is_label).  A marker at its section's end
 * (_etext) labels no code.  Labels inside a function of known size do not
 * split it (symtab_finish drops them).
 */
static bool is_code_label(const struct symbol_source *src, const GElf_Sym *sym, size_t section)
{
	return GELF_ST_TYPE(sym->st_info) == STT_NOTYPE && section != SIZE_MAX && src->section_code[section] &&
	       sym->st_value < src->section_ends[section];
}

static const char *intern_unversioned(struct symtab *tab, struct strbuf *scratch, const char *name)
{
	size_t length = strcspn(name, "@");
	if (name[length] == '\0' || length == 0)
		return symtab_intern(tab, name);
	sb_reset(scratch);
	sb_add(scratch, name, length);
	return symtab_intern(tab, scratch->buf);
}

static void add_elf_symbol(struct symtab *tab, struct symbol_source *src, size_t index)
{
	GElf_Sym sym;
	GElf_Word extended_index = 0;
	enum sym_kind kind;

	if (!gelf_getsymshndx(src->symbols, src->extended_indexes, (int)index, &sym, &extended_index))
		return;
	size_t section = symbol_section(src, &sym, extended_index);
	bool label = is_code_label(src, &sym, section);
	if (label)
		kind = SYM_FUNC;
	else if (!kind_of_elf_type(GELF_ST_TYPE(sym.st_info), &kind))
		return;
	if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
		return;
	const char *name = elf_strptr(src->elf, src->string_section, sym.st_name);
	if (!name || !*name)
		return;

	struct symbol_candidate candidate = {
		.sym = { .start = sym.st_value, .size = sym.st_size,
			 .name = intern_unversioned(tab, &src->scratch, name) },
		.limit = section_limit(src, section),
		.binding = binding_of_elf(GELF_ST_BIND(sym.st_info)),
		.label = label,
	};
	symtab_add(tab, kind, &candidate);
}

/* Symbols of .symtab, else (when dynamic_too) of .dynsym. */
static int read_symbols(Elf *elf, struct symtab *tab, bool dynamic_too)
{
	Elf_Scn *scn = find_section(elf, SHT_SYMTAB, ANY_SECTION);
	if (!scn && dynamic_too)
		scn = find_section(elf, SHT_DYNSYM, ANY_SECTION);
	if (!scn)
		return 0; /* no symbols at all is a valid, if useless, file */

	struct symbol_source src = { 0 };
	int err = open_symbol_source(elf, scn, &src);
	for (size_t i = 1; !err && i < src.count; i++)
		add_elf_symbol(tab, &src, i);
	free(src.section_ends);
	free(src.section_code);
	sb_free(&src.scratch);
	return err;
}

/*
 * The x86-64 signal return trampoline, `mov $15, %rax; syscall`
 * (rt_sigreturn), is a local symbol that stripped libraries (Debian's
 * libc.so.6) lose with their .symtab.  Without its name a sigreturn stack's
 * user frame is an anonymous offset, so every copy of the sequence in
 * executable code gets a synthetic local `__restore_rt`.  It starts one
 * byte early, because unwinders look a return address up one byte back and
 * the handler's return address is the trampoline's first byte, and it
 * covers the padding after the syscall, where the interrupted IP of a
 * sample taken in the system call points.
 */
#define TRAMPOLINE_SPAN 17 /* one byte before, the 9 of the sequence, 7 of padding after */

/*
 * Only a C library carries the trampoline (it installs it with every
 * sigaction()); scanning the code of every other file would read
 * megabytes for nothing.  A file that defines sigaction, or one with no
 * symbols at all (a stripped static binary), is scanned.
 */
static bool may_hold_trampoline(const struct symtab *tab)
{
	static const char *const names[] = { "sigaction", "__sigaction", "__libc_sigaction" };
	size_t symbols = 0;
	for (int kind = 0; kind < SYM_KIND_COUNT; kind++) {
		symbols += tab->pending_count[kind];
		for (size_t i = 0; i < tab->pending_count[kind]; i++)
			for (size_t n = 0; n < ARRAY_SIZE(names); n++)
				if (strcmp(tab->pending[kind][i].sym.name, names[n]) == 0)
					return true;
	}
	return symbols == 0;
}

static void add_sigreturn_trampolines(Elf *elf, struct symtab *tab)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS || !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < sizeof(x86_64_rt_sigreturn))
			continue;
		const unsigned char *code = data->d_buf, *end = code + data->d_size, *at = code;
		while ((at = memmem(at, (size_t)(end - at), x86_64_rt_sigreturn, sizeof(x86_64_rt_sigreturn)))) {
			struct symbol_candidate candidate = {
				.sym = { .start = shdr.sh_addr + (uint64_t)(at - code) - 1, .size = TRAMPOLINE_SPAN,
					 .name = symtab_intern(tab, "__restore_rt") },
				.limit = shdr.sh_addr + shdr.sh_size,
				.binding = BINDING_LOCAL,
			};
			if (at > code)
				symtab_add(tab, SYM_FUNC, &candidate);
			at += sizeof(x86_64_rt_sigreturn);
		}
	}
}

/*
 * PLT stubs: every call into another file goes through one, and a sample
 * can land in it, but no symbol table names them (objdump and perf make up
 * "name@plt").  On x86-64 each stub of .plt, .plt.sec (with IBT) and
 * .plt.got is an indirect `jmp *slot(%rip)`, maybe after endbr64 and a bnd
 * prefix; the slot is a GOT entry that a JUMP_SLOT or GLOB_DAT relocation
 * binds to the called symbol.  Decoding the jump rather than counting
 * entries from .rela.plt's order works for all three layouts, as objdump's
 * synthetic symbols do.  The stubs are read from the file itself: a debug
 * file's .plt is NOBITS.
 */
struct got_slot {
	uint64_t address;
	const char *name; /* interned "name@plt" */
};

static int compare_slots(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* The GOT slots the dynamic relocations bind to named symbols; sorted by address. */
static struct got_slot *read_got_slots(Elf *elf, struct symtab *tab, size_t *count)
{
	struct got_slot *slots = NULL;
	size_t cap = 0;
	struct strbuf name = { 0 };
	*count = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr, symbols_shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || shdr.sh_entsize == 0)
			continue;
		Elf_Scn *symbols_scn = elf_getscn(elf, shdr.sh_link);
		if (!symbols_scn || !gelf_getshdr(symbols_scn, &symbols_shdr) || symbols_shdr.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *relocations = elf_getdata(scn, NULL), *symbols = elf_getdata(symbols_scn, NULL);
		if (!relocations || !symbols)
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			if (!gelf_getrela(relocations, (int)i, &rela))
				break;
			unsigned type = GELF_R_TYPE(rela.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || GELF_R_SYM(rela.r_info) == 0 ||
			    !gelf_getsym(symbols, (int)GELF_R_SYM(rela.r_info), &sym))
				continue;
			const char *symbol = elf_strptr(elf, symbols_shdr.sh_link, sym.st_name);
			if (!symbol || !*symbol)
				continue;
			sb_reset(&name);
			sb_addf(&name, "%.*s@plt", (int)strcspn(symbol, "@"), symbol);
			GROW(slots, cap, *count + 1);
			slots[(*count)++] = (struct got_slot){ rela.r_offset, symtab_intern(tab, name.buf) };
		}
	}
	sb_free(&name);
	if (*count)
		sort_items(slots, *count, sizeof(*slots), compare_slots);
	return slots;
}

/* The GOT slot the stub at code (address: its vaddr) jumps through, or 0. */
static uint64_t stub_slot(const unsigned char *code, size_t size, uint64_t address)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t at = 0;
	if (size >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0)
		at += sizeof(endbr64);
	if (at < size && code[at] == 0xf2) /* bnd */
		at++;
	if (size - at < 6 || code[at] != 0xff || code[at + 1] != 0x25) /* jmp *disp32(%rip) */
		return 0;
	int32_t displacement;
	memcpy(&displacement, code + at + 2, sizeof(displacement));
	return address + at + 6 + (int64_t)displacement;
}

static void add_plt_symbols(Elf *elf, struct symtab *tab)
{
	size_t names;
	if (elf_getshdrstrndx(elf, &names) != 0)
		return;
	size_t nslots;
	struct got_slot *slots = read_got_slots(elf, tab, &nslots);
	Elf_Scn *scn = NULL;
	while (nslots && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *section = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, names, shdr.sh_name) : NULL;
		if (!section || strncmp(section, ".plt", 4) != 0 || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		uint64_t stub_size = shdr.sh_entsize ? shdr.sh_entsize : 16;
		if (!data || !data->d_buf || data->d_size != shdr.sh_size)
			continue;
		for (uint64_t offset = 0; offset + stub_size <= data->d_size; offset += stub_size) {
			uint64_t address = shdr.sh_addr + offset;
			const unsigned char *code = (const unsigned char *)data->d_buf + offset;
			struct got_slot key = { .address = stub_slot(code, stub_size, address) };
			const struct got_slot *slot =
				key.address ? bsearch(&key, slots, nslots, sizeof(*slots), compare_slots) : NULL;
			if (!slot)
				continue;
			struct symbol_candidate candidate = {
				.sym = { .start = address, .size = stub_size, .name = slot->name },
				.limit = shdr.sh_addr + shdr.sh_size,
				.binding = BINDING_LOCAL,
			};
			symtab_add(tab, SYM_FUNC, &candidate);
		}
	}
	free(slots);
}

static int read_load_segments(Elf *elf, struct symtab *tab)
{
	size_t count;
	if (elf_getphdrnum(elf, &count) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;
		if (!gelf_getphdr(elf, (int)i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_LOAD)
			continue;
		struct load_segment segment = {
			.offset = phdr.p_offset,
			.file_size = phdr.p_filesz,
			.memory_size = phdr.p_memsz > phdr.p_filesz ? phdr.p_memsz : phdr.p_filesz,
			.vaddr = phdr.p_vaddr,
		};
		symtab_add_segment(tab, &segment);
	}
	return 0;
}

static const char *intern_hex(struct symtab *tab, const unsigned char *bytes, size_t length)
{
	static const char digits[] = "0123456789abcdef";
	struct strbuf hex = { 0 };
	for (size_t i = 0; i < length; i++) {
		char pair[2] = { digits[bytes[i] >> 4], digits[bytes[i] & 0xf] };
		sb_add(&hex, pair, 2);
	}
	const char *interned = symtab_intern(tab, hex.buf);
	sb_free(&hex);
	return interned;
}

/* The GNU build-id note's bytes in a note section's data, or NULL. */
static const unsigned char *build_id_in_notes(Elf_Data *data, size_t *length)
{
	GElf_Nhdr note;
	size_t offset = 0, next, name_offset, desc_offset;
	while ((next = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
		const char *note_name = (const char *)data->d_buf + name_offset;
		if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    memcmp(note_name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 && note.n_descsz > 0) {
			*length = note.n_descsz;
			return (const unsigned char *)data->d_buf + desc_offset;
		}
		offset = next;
	}
	return NULL;
}

static const unsigned char *build_id_bytes(Elf *elf, size_t *length)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		const unsigned char *id = data ? build_id_in_notes(data, length) : NULL;
		if (id)
			return id;
	}
	return NULL;
}

const char *elf_build_id(Elf *elf, struct symtab *tab)
{
	size_t length;
	const unsigned char *id = build_id_bytes(elf, &length);
	return id ? intern_hex(tab, id, length) : NULL;
}

Elf *elf_open_path(const char *path, int *fd, int *err)
{
	*fd = -1;
	*err = -ENOEXEC;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	/* O_NONBLOCK: a FIFO given by mistake must not hang the open */
	*fd = symbolize_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0) {
		*err = -errno;
		return NULL;
	}
	Elf *elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_close_path(elf, *fd);
		*fd = -1;
		return NULL;
	}
	*err = 0;
	return elf;
}

void elf_close_path(Elf *elf, int fd)
{
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int elf_file_build_id(const char *path, unsigned char *id, size_t max)
{
	int fd, ret;
	Elf *elf = elf_open_path(path, &fd, &ret);
	if (!elf)
		return ret;
	size_t length = 0;
	const unsigned char *bytes = build_id_bytes(elf, &length);
	ret = bytes && length <= max ? (int)length : 0;
	if (ret > 0)
		memcpy(id, bytes, length);
	elf_close_path(elf, fd);
	return ret;
}

/*
 * libelf quietly reports 0 program or section headers when their table lies
 * past the end of the file; a truncated file would then load as an empty
 * table instead of failing.
 */
static bool header_tables_present(Elf *elf, const GElf_Ehdr *ehdr)
{
	size_t program_headers, sections;
	if (elf_getphdrnum(elf, &program_headers) != 0 || elf_getshdrnum(elf, &sections) != 0)
		return false;
	if (ehdr->e_phnum != 0 && program_headers == 0)
		return false;
	return ehdr->e_shoff == 0 || sections != 0;
}

/* The section named wanted that has bytes in the file (not NOBITS), or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *wanted)
{
	size_t strings;
	if (elf_getshdrstrndx(elf, &strings) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, strings, shdr.sh_name) : NULL;
		if (name && strcmp(name, wanted) == 0 && shdr.sh_type != SHT_NOBITS)
			return scn;
	}
	return NULL;
}

static bool has_section_named(Elf *elf, const char *wanted)
{
	return section_named(elf, wanted) != NULL;
}

/*
 * The functions .eh_frame says the file has, even when it was stripped of
 * every symbol: the initial locations of the search table of .eh_frame_hdr
 * (version 1, a udata4 FDE count, the datarel sdata4 table that linkers
 * write: pairs of int32 offsets from the header, sorted by location), as
 * vaddrs.  Returns how many, 0 when the file has no such table.  x86-64
 * (little-endian) files only.
 */
static size_t eh_frame_function_starts(Elf *elf, uint64_t **out)
{
	Elf_Scn *scn = section_named(elf, ".eh_frame_hdr");
	GElf_Shdr shdr;
	Elf_Data *data = scn && gelf_getshdr(scn, &shdr) ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_buf || data->d_size < 12)
		return 0;
	const unsigned char *h = data->d_buf;
	if (h[0] != 1 || (h[1] & 0x0f) != 0x0b /* sdata4 */ || h[2] != 0x03 /* udata4 */ || h[3] != 0x3b)
		return 0;
	uint32_t count;
	memcpy(&count, h + 8, sizeof(count));
	if (count == 0 || count > (data->d_size - 12) / 8)
		return 0;
	uint64_t *starts = xmalloc(count * sizeof(*starts));
	for (uint32_t i = 0; i < count; i++) {
		int32_t location;
		memcpy(&location, h + 12 + 8 * (size_t)i, sizeof(location));
		starts[i] = shdr.sh_addr + (uint64_t)(int64_t)location;
	}
	*out = starts;
	return count;
}

/* The executable section that holds addr, with its header; NULL when none does. */
static Elf_Scn *code_section_at(Elf *elf, uint64_t addr, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, shdr) && (shdr->sh_flags & SHF_EXECINSTR) && shdr->sh_type == SHT_PROGBITS &&
		    addr >= shdr->sh_addr && addr - shdr->sh_addr < shdr->sh_size)
			return scn;
	return NULL;
}

/*
 * A file with no symbol table of its own nor a debug file's (a stripped
 * program: Debian's stress-ng) names only what it exports, and a sample
 * elsewhere would be a bare offset that differs for every instruction.
 * .eh_frame still says where each function begins, so each such function
 * gets a made-up name from its file and start, "stress-ng!fn@0x555100",
 * and all the samples in one function merge.  They are code labels: a real
 * symbol at the same address or around it wins.
 */
static void add_eh_frame_functions(Elf *elf, struct symtab *tab, const char *path)
{
	uint64_t *starts;
	size_t n = eh_frame_function_starts(elf, &starts);
	const char *slash = strrchr(path, '/'), *base = slash && slash[1] ? slash + 1 : path;
	char name[320];
	for (size_t i = 0; i < n; i++) {
		GElf_Shdr shdr;
		if (!code_section_at(elf, starts[i], &shdr))
			continue;
		uint64_t limit = shdr.sh_addr + shdr.sh_size;
		if (i + 1 < n && starts[i + 1] > starts[i] && starts[i + 1] < limit)
			limit = starts[i + 1];
		snprintf(name, sizeof(name), "%s" EH_FRAME_NAME_MARK "0x%llx", base, (unsigned long long)starts[i]);
		struct symbol_candidate candidate = {
			.sym = { .start = starts[i], .name = symtab_intern(tab, name) },
			.limit = limit,
			.binding = BINDING_LOCAL,
			.label = true,
		};
		symtab_add(tab, SYM_FUNC, &candidate);
	}
	if (n)
		free(starts);
}

/*
 * _init and _fini, crti.o's code in .init and .fini, are the two functions
 * of every program that no .eh_frame entry describes, and a stripped file
 * keeps no symbol for them: a page fault on _fini's first instruction at
 * exit was a bare "stress-ng+0x565004".  The dynamic section still says
 * where they are (DT_INIT, DT_FINI, which ld.so calls); each reaches to the
 * end of its code section.  A symbol of the file at the same address wins.
 */
static void add_init_fini_functions(Elf *elf, struct symtab *tab)
{
	Elf_Scn *dynamic = find_section(elf, SHT_DYNAMIC, ANY_SECTION);
	GElf_Shdr shdr;
	Elf_Data *data = dynamic && gelf_getshdr(dynamic, &shdr) && shdr.sh_entsize ? elf_getdata(dynamic, NULL) : NULL;
	for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
		GElf_Dyn dyn;
		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		GElf_Shdr code;
		if ((dyn.d_tag != DT_INIT && dyn.d_tag != DT_FINI) || !code_section_at(elf, dyn.d_un.d_ptr, &code))
			continue;
		struct symbol_candidate candidate = {
			.sym = { .start = dyn.d_un.d_ptr, .name = symtab_intern(tab, dyn.d_tag == DT_INIT ? "_init" : "_fini") },
			.limit = code.sh_addr + code.sh_size,
			.binding = BINDING_LOCAL,
		};
		symtab_add(tab, SYM_FUNC, &candidate);
	}
}

/*
 * Whether a function's first instructions set up a frame pointer:
 * push %rbp; mov %rsp,%rbp, maybe after endbr64 (gcc and clang with
 * -fno-omit-frame-pointer; leaf functions may still go without).
 */
static bool sets_up_frame_pointer(const unsigned char *code, size_t size)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa }, prologue[] = { 0x55, 0x48, 0x89, 0xe5 };
	if (size >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0) {
		code += sizeof(endbr64);
		size -= sizeof(endbr64);
	}
	return size >= sizeof(prologue) && memcmp(code, prologue, sizeof(prologue)) == 0;
}

int elf_frame_pointer_functions(const char *path, size_t *with_frame_pointer, size_t *functions)
{
	*with_frame_pointer = *functions = 0;
	int fd, err;
	Elf *elf = elf_open_path(path, &fd, &err);
	if (!elf)
		return err;
	GElf_Ehdr ehdr;
	err = -ENOEXEC;
	uint64_t *starts;
	size_t n = 0;
	if (gelf_getehdr(elf, &ehdr) && ehdr.e_machine == EM_X86_64) {
		err = 0;
		n = eh_frame_function_starts(elf, &starts);
	}
	/* .text only: PLT stubs and start-up code (.init, .plt) never set one up */
	Elf_Scn *text = n ? section_named(elf, ".text") : NULL;
	GElf_Shdr shdr;
	Elf_Data *data = text && gelf_getshdr(text, &shdr) ? elf_getdata(text, NULL) : NULL;
	for (size_t i = 0; i < n && data && data->d_buf; i++) {
		if (starts[i] < shdr.sh_addr || starts[i] - shdr.sh_addr >= data->d_size)
			continue;
		size_t at = starts[i] - shdr.sh_addr;
		(*functions)++;
		*with_frame_pointer += sets_up_frame_pointer((const unsigned char *)data->d_buf + at, data->d_size - at);
	}
	if (n)
		free(starts);
	elf_close_path(elf, fd);
	return err;
}

int elf_needed_libraries(const char *path, struct strbuf *names)
{
	int fd, err;
	Elf *elf = elf_open_path(path, &fd, &err);
	if (!elf)
		return err;
	int count = 0;
	Elf_Scn *dynamic = find_section(elf, SHT_DYNAMIC, ANY_SECTION);
	GElf_Shdr shdr;
	Elf_Data *data = dynamic && gelf_getshdr(dynamic, &shdr) ? elf_getdata(dynamic, NULL) : NULL;
	size_t entries = data && shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
	for (size_t i = 0; i < entries; i++) {
		GElf_Dyn dyn;
		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		const char *name = dyn.d_tag == DT_NEEDED ? elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val) : NULL;
		if (!name || !*name)
			continue;
		sb_add(names, name, strlen(name) + 1);
		count++;
	}
	elf_close_path(elf, fd);
	return count;
}

/*
 * A file that lost its .symtab (strip) or its DWARF (strip --strip-debug)
 * may have a debug file that holds them; one that kept both needs none.
 */
static bool was_stripped(Elf *elf)
{
	return find_section(elf, SHT_SYMTAB, ANY_SECTION) == NULL || !has_section_named(elf, ".debug_info");
}

static const char *find_debug_file(Elf *elf, const char *path, struct symtab *tab)
{
	struct debug_link link;
	bool has_link = debug_link_read(elf, &link) == 0;
	if (!tab->build_id && !has_link)
		return NULL;
	struct strbuf found = { 0 };
	const char *interned = NULL;
	if (debug_file_locate(path, tab->build_id, has_link ? &link : NULL, &found) == 0)
		interned = symtab_intern(tab, found.buf);
	sb_free(&found);
	return interned;
}

/*
 * The .symtab of the debug file, whose st_value and section addresses are
 * those of the stripped file.  Only .symtab: a debug file's .dynsym is an
 * empty NOBITS copy.  false when it has none or cannot be read, and the
 * caller falls back on the stripped file's own .dynsym.
 */
static bool read_debug_file_symbols(const char *debug_path, struct symtab *tab)
{
	int fd = symbolize_open(debug_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr ehdr;
	bool ok = elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr) &&
		  find_section(elf, SHT_SYMTAB, ANY_SECTION) != NULL;
	if (ok && read_symbols(elf, tab, false) != 0) {
		/* Drop what a half-read table added; the .dynsym will be read instead. */
		for (int kind = 0; kind < SYM_KIND_COUNT; kind++)
			tab->pending_count[kind] = 0;
		ok = false;
	}
	elf_end(elf);
	close(fd);
	return ok;
}

/* path: the file elf reads, whose debug file is looked for; NULL for an image in memory. */
static int load_from_elf(Elf *elf, const char *path, struct symtab **out)
{
	GElf_Ehdr ehdr;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) || !header_tables_present(elf, &ehdr))
		return -ENOEXEC;

	struct symtab *tab = symtab_new();
	tab->relocatable = ehdr.e_type == ET_DYN;
	tab->build_id = elf_build_id(elf, tab);
	int err = read_load_segments(elf, tab);
	if (!err && path && was_stripped(elf))
		tab->debug_file = find_debug_file(elf, path, tab);
	bool symbols_from_debug_file = !err && tab->debug_file && !find_section(elf, SHT_SYMTAB, ANY_SECTION) &&
				       read_debug_file_symbols(tab->debug_file, tab);
	if (!err && !symbols_from_debug_file)
		err = read_symbols(elf, tab, true);
	if (err) {
		symtab_free(tab);
		return err;
	}
	if (ehdr.e_machine == EM_X86_64 && may_hold_trampoline(tab))
		add_sigreturn_trampolines(elf, tab);
	if (ehdr.e_machine == EM_X86_64)
		add_plt_symbols(elf, tab);
	add_init_fini_functions(elf, tab);
	if (ehdr.e_machine == EM_X86_64 && path && !symbols_from_debug_file && !find_section(elf, SHT_SYMTAB, ANY_SECTION))
		add_eh_frame_functions(elf, tab, path);
	symtab_finish(tab);
	*out = tab;
	return 0;
}

static int load_from_descriptor(int fd, const char *path, struct symtab **out)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;

	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	int err = load_from_elf(elf, path, out);
	elf_end(elf);
	return err;
}

int symtab_from_elf_file(const char *path, struct symtab **out)
{
	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	/* O_NONBLOCK: a FIFO given by mistake must not hang the open. */
	int fd = symbolize_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	int err = load_from_descriptor(fd, path, out);
	close(fd);
	return err;
}

/*
 * libelf wants a writable image and may keep pointing into it while the
 * handle lives, so it reads a private copy: the caller's buffer stays const
 * and need not outlive the call.  Images are small (the vDSO is two pages).
 */
int symtab_from_elf_memory(const void *image, size_t size, struct symtab **out)
{
	*out = NULL;
	if (!image || size == 0 || elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;

	char *copy = xmalloc(size);
	memcpy(copy, image, size);
	Elf *elf = elf_memory(copy, size);
	int err = elf ? load_from_elf(elf, NULL, out) : -ENOEXEC;
	elf_end(elf);
	free(copy);
	return err;
}
