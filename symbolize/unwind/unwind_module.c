/*
 * unwind_module.c: the files the unwinder reads (unwind_internal.h), each
 * mapped once per unwinder (a module), and how one process maps them (a
 * view).
 *
 * Files: each is mapped once per unwinder (a module), with its PT_LOAD
 * segments and the place of its search table, found through libelf.  dsos
 * of the process table point to modules; two paths of one file (a symlinked
 * /lib and /usr/lib) share a module by build-id.  A module's process
 * addresses are its file's vaddrs plus the bias of the mapping that led to
 * it, so the table, which lives in the read-only segment rather than the
 * executable one, is found without the recording holding data mappings.
 *
 * A module also knows, from its entry point and its code, the two places
 * where a thread's stack begins although no unwind table says so
 * (stack_begins_at), and where its .debug_frame is, if it has one
 * (unwind_debug_frame.c reads it).
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"
#include "../symtab_internal.h"
#include "unwind_internal.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* ---- modules ---- */

void module_free(struct module *m)
{
	if (!m)
		return;
	module_cfi_free(m);
	if (m->debug_image)
		munmap(m->debug_image, m->debug_size);
	free(m->debug_frame_path);
	if (m->image && m->image_mapped)
		munmap(m->image, m->size);
	else
		free(m->image);
	free(m->segments);
	free(m->key);
	free(m->name);
	free(m);
}

size_t encoded_size(unsigned char encoding)
{
	switch (encoding & 0x0f) {
	case 0x00: return 8; /* DW_EH_PE_absptr */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

static uint64_t read_unsigned(const unsigned char *p, size_t size)
{
	uint64_t v = 0;
	memcpy(&v, p, size); /* little-endian host and target */
	return v;
}

/*
 * .eh_frame_hdr: version 1, the encodings of eh_frame_ptr, fde_count and
 * the table, then eh_frame_ptr, fde_count and the table of (initial
 * location, FDE address) pairs.  libunwind searches only the datarel sdata4
 * table that linkers write.
 */
static void read_search_table(struct module *m, const GElf_Phdr *hdr)
{
	if (hdr->p_offset > m->size || m->size - hdr->p_offset < 4)
		return;
	const unsigned char *h = m->image + hdr->p_offset;
	size_t pointer_size = encoded_size(h[1]), count_size = encoded_size(h[2]);
	if (h[0] != 1 || h[2] == 0xff || h[3] != 0x3b /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */ || !pointer_size ||
	    !count_size || m->size - hdr->p_offset < 4 + pointer_size + count_size)
		return;
	m->fde_count = read_unsigned(h + 4 + pointer_size, count_size);
	m->table_header = hdr->p_vaddr;
	m->table = hdr->p_vaddr + 4 + pointer_size + count_size;
	m->has_table = m->fde_count > 0;
}

/* The section named wanted, or NULL. */
Elf_Scn *find_section_named(Elf *elf, const char *wanted)
{
	size_t names;
	if (elf_getshdrstrndx(elf, &names) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, names, shdr.sh_name) : NULL;
		if (name && strcmp(name, wanted) == 0)
			return scn;
	}
	return NULL;
}

static bool has_section(Elf *elf, const char *wanted)
{
	return find_section_named(elf, wanted) != NULL;
}

/*
 * Segments and the search table, from the program headers (section headers
 * may be stripped); *debug_frame: the file has a .debug_frame section.
 */
static int read_module_headers(struct module *m, bool *debug_frame)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	Elf *elf = elf_memory((char *)m->image, m->size);
	GElf_Ehdr ehdr;
	size_t count;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &count) != 0) {
		elf_end(elf);
		return -ENOEXEC;
	}
	m->entry = ehdr.e_entry;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;
		if (!gelf_getphdr(elf, (int)i, &phdr))
			continue;
		if (phdr.p_type == PT_LOAD) {
			/* a segment whose file bytes lie outside the file (a corrupt header) is not read from */
			if (phdr.p_offset > m->size || phdr.p_filesz > m->size - phdr.p_offset)
				phdr.p_filesz = 0;
			GROW(m->segments, m->segments_cap, m->nsegments + 1);
			m->segments[m->nsegments++] = (struct load_segment){ .offset = phdr.p_offset,
									       .file_size = phdr.p_filesz,
									       .memory_size = phdr.p_memsz,
									       .vaddr = phdr.p_vaddr };
		} else if (phdr.p_type == PT_GNU_EH_FRAME) {
			read_search_table(m, &phdr);
		}
	}
	*debug_frame = has_section(elf, ".debug_frame");
	m->has_eh_frame = has_section(elf, ".eh_frame");
	elf_end(elf);
	return 0;
}

/* Files are mapped private and writable: libelf may want to write, and copy-on-write keeps the file intact. */
int map_file(const char *path, unsigned char **image, size_t *size)
{
	int fd = symbolize_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	int err = 0;
	if (fstat(fd, &st) != 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size == 0)
		err = -ENOEXEC;
	if (!err) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
		} else {
			*image = p;
			*size = (size_t)st.st_size;
		}
	}
	close(fd);
	return err;
}

/* Whether the ELF file at path has a .debug_frame section (its section headers only are read). */
static bool file_has_debug_frame(const char *path)
{
	int fd = symbolize_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	Elf *elf = elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	bool found = elf && elf_kind(elf) == ELF_K_ELF && has_section(elf, ".debug_frame");
	elf_end(elf);
	close(fd);
	return found;
}

/* The vDSO is the same image in every process of this kernel: copy our own (its section headers end it). */
static int copy_vdso(struct module *m)
{
	const Elf64_Ehdr *ehdr = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!ehdr || memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_shoff == 0)
		return -ENOENT;
	size_t size = ehdr->e_shoff + (size_t)ehdr->e_shnum * ehdr->e_shentsize;
	m->image = xmalloc(size);
	memcpy(m->image, ehdr, size);
	m->size = size;
	return 0;
}

bool dso_has_file(const struct dso *dso)
{
	return dso->name[0] != '[' && strncmp(dso->name, "//anon", 6) != 0 && strncmp(dso->name, "/memfd:", 7) != 0;
}

/*
 * The file whose .debug_frame steps the module's code: the file itself, or
 * the separate debug file a stripped one names (distributions' debug files
 * seldom carry one; builds that strip their own -g code do).
 */
static void find_debug_frame(struct module *m, struct dso *dso, bool own)
{
	if (own) {
		m->debug_frame_path = xstrdup(dso->name);
		m->debug_frame_own = true;
		return;
	}
	const char *debug_file = dso_has_file(dso) ? dso_debug_file(dso) : NULL;
	if (debug_file && file_has_debug_frame(debug_file))
		m->debug_frame_path = xstrdup(debug_file);
}

static struct module *module_load(struct dso *dso, const char *key)
{
	struct module *m = xcalloc(1, sizeof(*m));
	m->key = xstrdup(key);
	m->name = xstrdup(dso_has_file(dso) ? base_name(dso->name) : dso->name);
	if (strcmp(dso->name, "[vdso]") == 0) {
		m->error = copy_vdso(m);
	} else if (!dso_has_file(dso)) {
		m->error = -ENOENT;
	} else if (dso->file_build_id[0]) {
		m->error = -ESTALE; /* the file at the path is another build: its CFI would step wrong */
	} else {
		m->error = map_file(dso->name, &m->image, &m->size);
		m->image_mapped = !m->error;
	}
	bool own_debug_frame = false;
	if (!m->error)
		m->error = read_module_headers(m, &own_debug_frame);
	if (!m->error)
		find_debug_frame(m, dso, own_debug_frame);
	return m;
}

static size_t dso_slot(const struct unwinder *u, const struct dso *dso)
{
	size_t mask = u->by_dso_slots - 1, i = hash_u64((uintptr_t)dso) & mask;
	while (u->by_dso[i].dso && u->by_dso[i].dso != dso)
		i = (i + 1) & mask;
	return i;
}

static void remember_dso(struct unwinder *u, const struct dso *dso, struct module *m)
{
	if ((u->by_dso_count + 1) * 2 > u->by_dso_slots) {
		struct dso_module *old = u->by_dso;
		size_t old_slots = u->by_dso_slots;
		u->by_dso_slots *= 2;
		u->by_dso = xcalloc(u->by_dso_slots, sizeof(*u->by_dso));
		for (size_t i = 0; i < old_slots; i++)
			if (old[i].dso)
				u->by_dso[dso_slot(u, old[i].dso)] = old[i];
		free(old);
	}
	u->by_dso[dso_slot(u, dso)] = (struct dso_module){ dso, m };
	u->by_dso_count++;
}

/* The dso's module, loaded on first use and shared with every dso of the same build-id. */
struct module *module_of(struct unwinder *u, struct dso *dso)
{
	struct dso_module *slot = &u->by_dso[dso_slot(u, dso)];
	if (slot->dso)
		return slot->module;
	const char *build_id = dso_has_file(dso) ? symtab_build_id(dso_symtab(dso)) : NULL;
	const char *key = build_id ? build_id : dso->name;
	struct module *m = NULL;
	for (size_t i = 0; i < u->nmodules && !m; i++)
		if (strcmp(u->modules[i]->key, key) == 0)
			m = u->modules[i];
	if (!m) {
		m = module_load(dso, key);
		GROW(u->modules, u->modules_cap, u->nmodules + 1);
		u->modules[u->nmodules++] = m;
	}
	remember_dso(u, dso, m);
	return m;
}

/* ---- process addresses to module bytes ---- */

/* Copy len bytes at vaddr from the file (zeros past a segment's file bytes: its .bss); false outside. */
static bool module_read(const struct module *m, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < m->nsegments; i++) {
		const struct load_segment *s = &m->segments[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr > s->memory_size || s->memory_size - (vaddr - s->vaddr) < len)
			continue;
		uint64_t at = vaddr - s->vaddr;
		if (at + len <= s->file_size) {
			if (s->offset + at + len > m->size)
				return false;
			memcpy(buf, m->image + s->offset + at, len);
		} else {
			memset(buf, 0, len); /* a read straddling file bytes and .bss does not happen in unwind tables */
		}
		return true;
	}
	return false;
}

/*
 * The view of the module that mapping belongs to, made on first use in this
 * walk; NULL when it has no file.  The bias comes from addr, an address the
 * mapping loads from its segment's file bytes (the IP, the byte read): the
 * mapping's own start will not do, as a segment that begins part-way
 * through a page is mapped from that page's start, and lld puts the
 * executable segment right after the read-only one (file offset 0x8c0 at
 * vaddr 0x18c0): the page's offset 0 is the read-only segment's, and read
 * as that would put every vaddr 0x1000 off.
 */
struct module_view *module_view_of(struct walk *w, const struct mapping *map, uint64_t addr)
{
	struct module *m = module_of(w->u, map->dso);
	for (size_t i = 0; i < w->nviews; i++)
		if (w->views[i].module == m && map->start >= w->views[i].low && map->start < w->views[i].high)
			return &w->views[i];
	uint64_t vaddr;
	if (m->error || addr < map->start || addr >= map->end ||
	    !load_segments_vaddr(m->segments, m->nsegments, addr - map->start + map->pgoff, &vaddr))
		return NULL;
	struct module_view v = { .module = m, .bias = addr - vaddr, .low = UINT64_MAX };
	for (size_t i = 0; i < m->nsegments; i++) {
		uint64_t low = m->segments[i].vaddr + v.bias, high = low + m->segments[i].memory_size;
		v.low = low < v.low ? low : v.low;
		v.high = high > v.high ? high : v.high;
	}
	size_t i = w->nviews < MAX_VIEWS ? w->nviews++ : MAX_VIEWS - 1; /* deeper than that: reuse the last slot */
	w->views[i] = v;
	return &w->views[i];
}

bool read_from_views(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < w->nviews; i++) {
		const struct module_view *v = &w->views[i];
		if (addr >= v->low && addr < v->high)
			return module_read(v->module, addr - v->bias, buf, len);
	}
	return false;
}

/*
 * The code at the entry point when no FDE covers it: up to the first
 * function the search table lists above the entry.  ld.so's _start calls
 * _dl_start, then its _dl_start_user (the same CFI-less block, glibc's
 * RTLD_START) calls _dl_init, which runs the preinit and library
 * constructors, and jumps to the program's entry: both return addresses
 * lie in the block.  Capped, so that a table that lists nothing near the
 * entry does not turn unrelated CFI-less code into stack starts; without a
 * table, the first call's return (16 bytes).  An entry an FDE covers (a
 * program's _start, whose CFI leaves the return address undefined) has no
 * block: the CFI-less code after it (crtbegin's helpers, up to the next
 * FDE) is no stack start, and a walk that looked an IP up at the wrong
 * place must not end there as if whole.
 */
#define ENTRY_BLOCK_MAX 256

/*
 * The search table's first initial location above vaddr (*next, 0 when
 * none) and whether one is vaddr itself; false when the table cannot be read.
 */
static bool table_around(struct module *m, uint64_t vaddr, uint64_t *next, bool *at)
{
	/* the table's (initial location, FDE) pairs are int32s from .eh_frame_hdr, sorted by location */
	uint64_t low = 0, high = m->fde_count;
	int32_t location;
	while (low < high) {
		uint64_t middle = low + (high - low) / 2;
		if (!module_read(m, m->table + middle * 8, &location, sizeof(location)))
			return false;
		if (m->table_header + (int64_t)location <= vaddr)
			low = middle + 1;
		else
			high = middle;
	}
	*at = low > 0 && module_read(m, m->table + (low - 1) * 8, &location, sizeof(location)) &&
	      m->table_header + (int64_t)location == vaddr;
	*next = 0;
	if (low < m->fde_count && module_read(m, m->table + low * 8, &location, sizeof(location)))
		*next = m->table_header + (int64_t)location;
	return true;
}

static uint64_t entry_block_end(struct module *m)
{
	uint64_t end = m->entry + 16, next = 0;
	bool at_entry = false, table = m->has_table && table_around(m, m->entry, &next, &at_entry);
	if (!m->entry_checked) {
		m->entry_checked = true;
		/* with a table, an entry of its own; without, libdw's reading of the .eh_frame that the steps use */
		m->entry_has_fde = m->has_table ? at_entry : eh_frame_covers(m, m->entry);
	}
	if (m->entry_has_fde)
		return m->entry; /* no block: the code at the entry has CFI (glibc's _start says where the stack ends) */
	if (!table)
		return end;
	if (!next)
		return m->entry + ENTRY_BLOCK_MAX;
	return next - m->entry < ENTRY_BLOCK_MAX ? next : m->entry + ENTRY_BLOCK_MAX;
}

/*
 * Two places in a file that has unwind tables are deliberately left out of
 * them because no frame lies beyond: the code at the entry point (_start of
 * a program, or of ld.so with _dl_start_user, whose calls return there while
 * the process starts: entry_block_end), and the instructions right after
 * the clone/clone3 system call, where a new thread's first frame runs on
 * its empty stack.  An IP there ends the stack as the outermost frame would.
 */
bool stack_begins_at(struct walk *w, struct module *m, uint64_t vaddr)
{
	static const unsigned char syscall_code[] = { 0x0f, 0x05 };
	unsigned char before[sizeof(syscall_code)];
	if (m->entry && vaddr >= m->entry && vaddr < entry_block_end(m))
		return true;
	return module_read(m, vaddr - sizeof(before), before, sizeof(before)) &&
	       memcmp(before, syscall_code, sizeof(before)) == 0;
}
