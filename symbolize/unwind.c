/*
 * unwind.c: DWARF unwinding of the user stacks that samples copy (unwind.h),
 * with libunwind's remote API.
 *
 * libunwind walks a stack through four callbacks, and this file answers
 * them from the recording alone:
 *   - find_proc_info: the IP's executable mapping names a file; that file's
 *     .eh_frame_hdr binary search table, described to libunwind as a
 *     UNW_INFO_FORMAT_REMOTE_TABLE at the address where the process had it,
 *     is searched by libunwind's own dwarf_search_unwind_table (as perf's
 *     util/unwind-libunwind-local.c does);
 *   - access_mem: from the stack copy when the address is in [sp, sp +
 *     copied bytes), else from the bytes of a mapped file (the table, the
 *     FDEs and CIEs, code), else a failure;
 *   - access_reg: the sample's registers, renumbered from perf's order to
 *     libunwind's;
 *   - everything else (fp registers, resume, names) is refused: sigprof
 *     names frames itself.
 *
 * Files: each is mapped once per unwinder (a module), with its PT_LOAD
 * segments and the place of its search table, found through libelf.  dsos
 * of the process table point to modules; two paths of one file (a symlinked
 * /lib and /usr/lib) share a module by build-id.  A module's process
 * addresses are its file's vaddrs plus the bias of the mapping that led to
 * it, so the table, which lives in the read-only segment rather than the
 * executable one, is found without the recording holding data mappings.
 *
 * .debug_frame: the libunwind that distributions build for x86-64 leaves
 * out its .debug_frame search (dwarf_find_debug_frame, CONFIG_DEBUG_FRAME),
 * and its table search parses every FDE as .eh_frame.  So code whose CFI
 * is only in .debug_frame (built with -fno-asynchronous-unwind-tables, or
 * stripped with the CFI left in its separate debug file) is stepped here:
 * libdw reads the CFI (dwarf_getcfi, dwarf_cfi_addrframe), its CFA and
 * register rules come as small DWARF expressions that debug_frame_step()
 * evaluates over the walk's registers and memory, and the walk then goes
 * on with libunwind from the caller's registers.  The CFI is checked before
 * libdw runs it (debug_frame_sane: a corrupt register number would have libdw
 * allocate gigabytes), and a step must move the CFA up and not return to the
 * same frame, so a lying .debug_frame ends the walk rather than looping.  A
 * file that has both (a program whose crt files brought .eh_frame while its
 * own code has only .debug_frame) is searched in .eh_frame first.
 * libunwind takes the first IP of a walk as exact, so a return address it
 * resumes from is looked up at itself rather than at its call: only a call
 * that is the last instruction of a function (a noreturn call) would be
 * taken for the next function's code.
 *
 * Address spaces: libunwind caches the parsed CFI row of each IP per
 * address space (UNW_CACHE_GLOBAL), which is what makes the second sample
 * through a function nearly free.  An IP means the same code only within one
 * process, so each pid gets its own address space.  The cache's lock costs
 * two sigprocmask system calls per frame, which is most of what unwinding
 * costs here; the lock-free per-thread cache is not compiled into the
 * libunwind distributions ship (HAVE___CACHE_PER_THREAD), and it would be
 * shared by every address space.
 *
 * Failures: an accessor that cannot answer during a step records why (the
 * file without unwind info, the end of the stack copy, the address no
 * mapping covers) and the walk stops there; libunwind's fallback guesses
 * (frame-pointer chains) are not taken, so every frame a stack shows came
 * from unwind information.
 *
 * Signal frames: the sigreturn trampoline is recognized by its bytes
 * (mov $15, %rax; syscall), stripped libc or not, as libunwind does for its
 * own step through it.  (libunwind 1.6's unw_is_signal_frame() answers for
 * the frame the last step left, not the current one, so it is not asked.)
 * The frame whose IP is the trampoline becomes an UNWIND_FRAME_SIGNAL
 * carrying the signal number from the kernel's x86-64 rt_sigframe (see
 * SIGFRAME_* below).  A sample taken inside the rt_sigreturn system call has
 * its leaf just past the trampoline's syscall, where no unwind table helps,
 * so the walk reloads the interrupted registers from the sigcontext in the
 * frame and goes on.
 *
 * Inputs: a sample's registers in perf's numbering (<asm/perf_regs.h>) and
 * its stack copy; nothing here reads the kernel's records (sample.h).
 */
#include <asm/perf_regs.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sigprof/unwind.h"
#include "sigprof/util.h"
#include "symtab_internal.h"

/* libunwind exports its table search but does not declare it (perf declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi, int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/*
 * The kernel's x86-64 signal frame (arch/x86/include/asm/sigframe.h):
 *   struct rt_sigframe { char *pretcode; struct ucontext uc; struct siginfo info; fp state... };
 *   struct ucontext { u64 uc_flags; ucontext *uc_link; stack_t uc_stack (24 bytes);
 *                     struct sigcontext uc_mcontext (256 bytes); sigset_t uc_sigmask (8 bytes) };
 * The handler returns into the trampoline by popping pretcode, so in the
 * trampoline SP points at uc: siginfo (si_signo first) is 304 bytes up, and
 * the sigcontext, which holds the interrupted registers, 40 bytes up.
 */
#define SIGFRAME_SIGINFO_FROM_SP 304
#define SIGFRAME_SIGCONTEXT_FROM_SP 40
/* struct sigcontext (uapi asm/sigcontext.h), 64-bit: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip */
static const int sigcontext_registers[] = {
	UNW_X86_64_R8,  UNW_X86_64_R9,  UNW_X86_64_R10, UNW_X86_64_R11, UNW_X86_64_R12, UNW_X86_64_R13,
	UNW_X86_64_R14, UNW_X86_64_R15, UNW_X86_64_RDI, UNW_X86_64_RSI, UNW_X86_64_RBP, UNW_X86_64_RBX,
	UNW_X86_64_RDX, UNW_X86_64_RAX, UNW_X86_64_RCX, UNW_X86_64_RSP, UNW_X86_64_RIP,
};
#define SIGCONTEXT_RSP 15 /* rsp's place in struct sigcontext */


#define UNW_REGISTER_COUNT (UNW_X86_64_RIP + 1)

/* perf's x86-64 register numbers (asm/perf_regs.h) to libunwind's. */
static int unw_register_of_perf(int perf_register)
{
	switch (perf_register) {
	case PERF_REG_X86_AX: return UNW_X86_64_RAX;
	case PERF_REG_X86_BX: return UNW_X86_64_RBX;
	case PERF_REG_X86_CX: return UNW_X86_64_RCX;
	case PERF_REG_X86_DX: return UNW_X86_64_RDX;
	case PERF_REG_X86_SI: return UNW_X86_64_RSI;
	case PERF_REG_X86_DI: return UNW_X86_64_RDI;
	case PERF_REG_X86_BP: return UNW_X86_64_RBP;
	case PERF_REG_X86_SP: return UNW_X86_64_RSP;
	case PERF_REG_X86_IP: return UNW_X86_64_RIP;
	default:
		if (perf_register >= PERF_REG_X86_R8 && perf_register <= PERF_REG_X86_R15)
			return UNW_X86_64_R8 + (perf_register - PERF_REG_X86_R8);
		return -1;
	}
}

/* One PT_LOAD segment of a module's file. */
struct segment {
	uint64_t offset, file_size, memory_size, vaddr;
};

/* A file mapped once, with what unwinding needs of it. */
struct module {
	char *key;              /* build-id, else the path */
	char *name;             /* the basename, for failure reasons */
	unsigned char *image;   /* the whole file */
	size_t size;
	bool image_mapped;      /* munmap (a file) rather than free (the vDSO copy) */
	struct segment *segments;
	size_t nsegments, segments_cap;
	bool has_table;         /* .eh_frame_hdr with a binary search table */
	uint64_t table_header;  /* vaddr of .eh_frame_hdr: the table's base (segbase) */
	uint64_t table;         /* vaddr of the first table entry */
	uint64_t fde_count;
	uint64_t entry;         /* e_entry: where a program (or ld.so) starts */
	int error;              /* -errno when the file could not be read; the rest is then empty */
	/* .debug_frame, of the file or of its separate debug file: stepped with libdw (debug_frame_step) */
	char *debug_frame_path;          /* the file that holds it; NULL: none */
	bool debug_frame_own;            /* that file is the module's own (image) */
	bool debug_frame_tried;          /* opened (or failed to) on first use */
	bool debug_frame_corrupt;        /* it asks more of libdw than CFI can (debug_frame_sane) */
	unsigned char *debug_image;      /* the debug file's bytes, when it is not the module's own file */
	size_t debug_size;
	Elf *debug_elf;
	Dwarf *debug_dwarf;
	Dwarf_CFI *cfi;                  /* NULL until opened, and when it cannot be read */
};

struct dso_module {
	const struct dso *dso; /* NULL: empty slot */
	struct module *module;
};

struct pid_space {
	uint32_t pid;
	bool used;
	unw_addr_space_t space;
};

/* Address spaces alive at once; past this they are all dropped and made again as samples need them. */
#define MAX_ADDRESS_SPACES 256

struct unwinder {
	struct proc_table *procs;
	struct module **modules;
	size_t nmodules, modules_cap;
	struct dso_module *by_dso; /* open addressing */
	size_t by_dso_slots, by_dso_count;
	struct pid_space *spaces;  /* open addressing by pid, MAX_ADDRESS_SPACES * 2 slots */
	size_t nspaces;
	unw_accessors_t accessors;
};

/* A module as one process maps it: its process addresses are its vaddrs + bias. */
struct module_view {
	struct module *module;
	uint64_t bias;
	uint64_t low, high; /* [low, high): the process addresses its segments cover */
};

#define MAX_VIEWS 16

/* One walk: the accessors' argument. */
struct walk {
	struct unwinder *u;
	uint32_t pid;
	uint64_t regs[UNW_REGISTER_COUNT];
	bool have_reg[UNW_REGISTER_COUNT];
	const unsigned char *stack;
	uint64_t stack_base, stack_bytes; /* the copy holds [stack_base, stack_base + stack_bytes) */
	uint64_t stack_size;              /* what the recording asked for */
	struct module_view views[MAX_VIEWS];
	size_t nviews;
	bool record_failures;             /* only failures inside unw_step end the walk */
	bool outermost;                   /* the IP without unwind info is where a thread's stack begins */
	bool restart_exact;               /* walk_frames' first IP is exact (not a return address) */
	uint64_t other_stack;             /* the SP a signal frame saved, when it is not on the copied stack; 0: none */
	enum unwind_failure failure;
	char reason[192];
};

static void walk_fail(struct walk *w, enum unwind_failure failure, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void walk_fail(struct walk *w, enum unwind_failure failure, const char *fmt, ...)
{
	if (!w->record_failures || w->failure != UNWIND_COMPLETE)
		return; /* the first failure is the cause; later ones follow from it */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->reason, sizeof(w->reason), fmt, ap);
	va_end(ap);
	w->failure = failure;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* ---- modules ---- */

static void module_free(struct module *m)
{
	if (!m)
		return;
	if (m->debug_dwarf)
		dwarf_end(m->debug_dwarf); /* frees the CFI */
	if (m->debug_elf)
		elf_end(m->debug_elf);
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

/* The size of a DWARF pointer encoding's value; 0 for encodings a .eh_frame_hdr does not use. */
static size_t encoded_size(unsigned char encoding)
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
static Elf_Scn *find_section(Elf *elf, const char *wanted)
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
	return find_section(elf, wanted) != NULL;
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
			m->segments[m->nsegments++] = (struct segment){ phdr.p_offset, phdr.p_filesz, phdr.p_memsz,
									  phdr.p_vaddr };
		} else if (phdr.p_type == PT_GNU_EH_FRAME) {
			read_search_table(m, &phdr);
		}
	}
	*debug_frame = has_section(elf, ".debug_frame");
	elf_end(elf);
	return 0;
}

/* Files are mapped private and writable: libelf may want to write, and copy-on-write keeps the file intact. */
static int map_file(const char *path, unsigned char **image, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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

static bool dso_has_file(const struct dso *dso)
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
static struct module *module_of(struct unwinder *u, struct dso *dso)
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

/* The vaddr a file offset is loaded at, through the segment whose file bytes hold it. */
static bool module_offset_vaddr(const struct module *m, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nsegments; i++) {
		const struct segment *s = &m->segments[i];
		if (offset >= s->offset && offset - s->offset < s->file_size) {
			*vaddr = offset - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

/* Copy len bytes at vaddr from the file (zeros past a segment's file bytes: its .bss); false outside. */
static bool module_read(const struct module *m, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < m->nsegments; i++) {
		const struct segment *s = &m->segments[i];
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

/* The view of the module that mapping belongs to, made on first use in this walk; NULL when it has no file. */
static struct module_view *view_of(struct walk *w, const struct mapping *map)
{
	struct module *m = module_of(w->u, map->dso);
	for (size_t i = 0; i < w->nviews; i++)
		if (w->views[i].module == m && map->start >= w->views[i].low && map->start < w->views[i].high)
			return &w->views[i];
	uint64_t vaddr;
	if (m->error || !module_offset_vaddr(m, map->pgoff, &vaddr))
		return NULL;
	struct module_view v = { .module = m, .bias = map->start - vaddr, .low = UINT64_MAX };
	for (size_t i = 0; i < m->nsegments; i++) {
		uint64_t low = m->segments[i].vaddr + v.bias, high = low + m->segments[i].memory_size;
		v.low = low < v.low ? low : v.low;
		v.high = high > v.high ? high : v.high;
	}
	size_t i = w->nviews < MAX_VIEWS ? w->nviews++ : MAX_VIEWS - 1; /* deeper than that: reuse the last slot */
	w->views[i] = v;
	return &w->views[i];
}

static bool read_from_views(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < w->nviews; i++) {
		const struct module_view *v = &w->views[i];
		if (addr >= v->low && addr < v->high)
			return module_read(v->module, addr - v->bias, buf, len);
	}
	return false;
}

/* Above SP, this far is taken for the thread's stack (8 MiB is the usual size of one) when no file holds it. */
#define STACK_REACH (16ull << 20)

/* Read process memory as the recording knows it; false (and, inside a step, a failure) when it does not. */
static bool read_memory(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	if (addr >= w->stack_base && addr - w->stack_base <= w->stack_bytes &&
	    w->stack_bytes - (addr - w->stack_base) >= len) {
		memcpy(buf, w->stack + (addr - w->stack_base), len);
		return true;
	}
	if (read_from_views(w, addr, buf, len))
		return true;
	const struct mapping *map = proc_table_find(w->u->procs, w->pid, addr);
	if (map && dso_has_file(map->dso) && view_of(w, map))
		return read_from_views(w, addr, buf, len);
	if (addr >= w->stack_base && addr - w->stack_base < STACK_REACH)
		walk_fail(w, UNWIND_STACK_END, "stack copy ends at %llu bytes", (unsigned long long)w->stack_size);
	else if (w->other_stack && addr >= w->other_stack && addr - w->other_stack < STACK_REACH)
		walk_fail(w, UNWIND_SIGNAL_STACK,
			  "handler on an alternate signal stack: the interrupted code's stack is not in the copy");
	else
		walk_fail(w, UNWIND_BAD_MEMORY, "cannot read 0x%llx", (unsigned long long)addr);
	return false;
}

/*
 * The code at the entry point that no FDE covers: up to the first function
 * the search table lists above the entry.  ld.so's _start calls _dl_start,
 * then its _dl_start_user (the same CFI-less block, glibc's RTLD_START)
 * calls _dl_init, which runs the preinit and library constructors, and
 * jumps to the program's entry: both return addresses lie in the block.
 * Capped, so that a table that lists nothing near the entry does not turn
 * unrelated CFI-less code into stack starts; without a table, the first
 * call's return (16 bytes).
 */
#define ENTRY_BLOCK_MAX 256

static uint64_t entry_block_end(const struct module *m)
{
	uint64_t end = m->entry + 16;
	if (!m->has_table)
		return end;
	/* the table's (initial location, FDE) pairs are int32s from .eh_frame_hdr, sorted by location */
	uint64_t low = 0, high = m->fde_count;
	while (low < high) {
		uint64_t middle = low + (high - low) / 2;
		int32_t location;
		if (!module_read(m, m->table + middle * 8, &location, sizeof(location)))
			return end;
		if (m->table_header + (int64_t)location <= m->entry)
			low = middle + 1;
		else
			high = middle;
	}
	int32_t location;
	if (low == m->fde_count || !module_read(m, m->table + low * 8, &location, sizeof(location)))
		return m->entry + ENTRY_BLOCK_MAX;
	uint64_t next = m->table_header + (int64_t)location;
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
static bool stack_begins_at(struct walk *w, const struct module *m, uint64_t vaddr)
{
	static const unsigned char syscall_code[] = { 0x0f, 0x05 };
	unsigned char before[sizeof(syscall_code)];
	if (m->entry && vaddr >= m->entry && vaddr < entry_block_end(m))
		return true;
	return module_read(m, vaddr - sizeof(before), before, sizeof(before)) &&
	       memcmp(before, syscall_code, sizeof(before)) == 0;
}

/* ---- libunwind's accessors ---- */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	struct walk *w = arg;
	const struct mapping *map = proc_table_find_code(w->u->procs, w->pid, ip);
	if (!map) {
		walk_fail(w, UNWIND_NO_MAPPING, "no mapping for 0x%llx", (unsigned long long)ip);
		return -UNW_ENOINFO;
	}
	struct module *m = module_of(w->u, map->dso);
	struct module_view *v = view_of(w, map);
	if (!v) {
		if (m->error && m->error != -ENOEXEC && dso_has_file(map->dso))
			walk_fail(w, UNWIND_NO_FILE, "cannot read %s: %s", map->dso->name, strerror(-m->error));
		else
			walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
		return -UNW_ENOINFO;
	}
	if (!m->has_table) {
		walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
		return -UNW_ENOINFO;
	}
	unw_dyn_info_t di;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = map->start;
	di.end_ip = map->end;
	di.u.rti.segbase = m->table_header + v->bias;
	di.u.rti.table_data = m->table + v->bias;
	di.u.rti.table_len = m->fde_count * 8 / sizeof(unw_word_t); /* in words; each entry is two int32 */
	/* the search reads memory, which may reuse v's slot for another module: keep the bias */
	uint64_t bias = v->bias;
	int ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, w);
	if (ret < 0 && w->failure == UNWIND_COMPLETE) {
		w->outermost = w->record_failures && stack_begins_at(w, m, ip - bias);
		walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
	}
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* libunwind frees the DWARF unwind info it allocated itself; nothing of ours to release. */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO; /* no JIT registrations: the recording has no copy of the process's heap */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	if (write)
		return -UNW_EREADONLYREG;
	return read_memory(arg, addr, valp, sizeof(*valp)) ? 0 : -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t regnum, unw_word_t *valp, int write, void *arg)
{
	struct walk *w = arg;
	if (write)
		return -UNW_EREADONLYREG;
	if (regnum < 0 || regnum >= UNW_REGISTER_COUNT || !w->have_reg[regnum])
		return -UNW_EBADREG;
	*valp = w->regs[regnum];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t num, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *bufp, size_t buf_len, unw_word_t *offp,
			 void *arg)
{
	return -UNW_EINVAL;
}

/* ---- .debug_frame ---- */

/* The registers of one frame, in libunwind's (= DWARF's x86-64) numbering. */
struct frame_registers {
	uint64_t value[UNW_REGISTER_COUNT];
	bool have[UNW_REGISTER_COUNT];
};

/*
 * Limits on what a .debug_frame's call frame instructions may ask of libdw.
 * libdw grows a frame's register array up to the highest register number an
 * instruction names (DW_CFA_same_value r155492561: gigabytes, copied again
 * at each DW_CFA_remember_state), and keeps one copy of it per remembered
 * state, so one corrupt entry could take the memory and the minutes of a
 * whole report.  x86-64 CFI names registers below 130 (the AVX-512 mask
 * registers are 118-125) and compilers nest remembered states a few deep.
 */
#define CFI_MAX_REGISTER 255
#define CFI_MAX_REMEMBERED 64

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *value)
{
	*value = 0;
	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t byte = *(*p)++;
		if (shift < 64)
			*value |= (uint64_t)(byte & 0x7f) << shift;
		else if (byte & 0x7f)
			*value = UINT64_MAX; /* past 64 bits: out of every limit */
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

/*
 * Whether the instructions in [p, end) stay within the limits above.  An
 * opcode libdw does not know, or an operand cut short, ends the scan: libdw
 * stops there too (an error for the rows after it).
 */
static bool cfi_instructions_sane(const uint8_t *p, const uint8_t *end)
{
	int remembered = 0;
	uint64_t reg, operand;
	while (p < end) {
		uint8_t op = *p++;
		if ((op & 0xc0) == DW_CFA_advance_loc || (op & 0xc0) == DW_CFA_restore)
			continue; /* a register in the low 6 bits, below 64 */
		if ((op & 0xc0) == DW_CFA_offset) {
			if (!read_uleb(&p, end, &operand))
				return true;
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			p += (size_t)(end - p) < 8 ? (size_t)(end - p) : 8;
			break;
		case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4:
		case DW_CFA_MIPS_advance_loc8: {
			size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 :
				   op == DW_CFA_advance_loc4 ? 4 : 8;
			p += (size_t)(end - p) < n ? (size_t)(end - p) : n;
			break;
		}
		case DW_CFA_remember_state:
			if (++remembered > CFI_MAX_REMEMBERED)
				return false;
			break;
		case DW_CFA_restore_state:
			remembered -= remembered > 0;
			break;
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
			if (!read_uleb(&p, end, &operand))
				return true;
			break;
		case DW_CFA_def_cfa_expression:
			if (!read_uleb(&p, end, &operand) || operand > (uint64_t)(end - p))
				return true;
			p += operand;
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
		case DW_CFA_offset_extended: case DW_CFA_register: case DW_CFA_def_cfa: case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_expression: case DW_CFA_val_expression:
			if (!read_uleb(&p, end, &reg))
				return true;
			if (reg > CFI_MAX_REGISTER)
				return false;
			if (op == DW_CFA_restore_extended || op == DW_CFA_undefined || op == DW_CFA_same_value ||
			    op == DW_CFA_def_cfa_register)
				break;
			if (!read_uleb(&p, end, &operand))
				return true;
			if (op == DW_CFA_register && operand > CFI_MAX_REGISTER)
				return false;
			if (op == DW_CFA_expression || op == DW_CFA_val_expression) {
				if (operand > (uint64_t)(end - p))
					return true;
				p += operand;
			}
			break;
		default:
			return true;
		}
	}
	return true;
}

/* Whether every CIE and FDE of the .debug_frame that dwarf_begin_elf() read (decompressed) is sane. */
static bool debug_frame_sane(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".debug_frame");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!data || !ident)
		return false;
	Dwarf_Off offset = 0, next;
	Dwarf_CFI_Entry entry;
	int ret;
	while ((ret = dwarf_next_cfi(ident, data, false, offset, &next, &entry)) == 0) {
		const uint8_t *p, *end;
		if (dwarf_cfi_cie_p(&entry)) {
			p = entry.cie.initial_instructions;
			end = entry.cie.initial_instructions_end;
		} else {
			/* past the FDE's initial location and address range (8-byte addresses) */
			end = entry.fde.end;
			p = end - entry.fde.start > 16 ? entry.fde.start + 16 : end;
		}
		if (!cfi_instructions_sane(p, end))
			return false;
		if (next <= offset)
			break;
		offset = next;
	}
	return true;
}

/* The module's .debug_frame CFI, opened on first use; NULL when it has none or it cannot be read. */
static Dwarf_CFI *module_cfi(struct module *m)
{
	if (m->debug_frame_tried || !m->debug_frame_path)
		return m->cfi;
	m->debug_frame_tried = true;
	const unsigned char *image = m->image;
	size_t size = m->size;
	if (!m->debug_frame_own) {
		if (map_file(m->debug_frame_path, &m->debug_image, &m->debug_size) != 0)
			return NULL;
		image = m->debug_image;
		size = m->debug_size;
	}
	m->debug_elf = elf_memory((char *)image, size);
	if (m->debug_elf)
		m->debug_dwarf = dwarf_begin_elf(m->debug_elf, DWARF_C_READ, NULL);
	if (m->debug_dwarf)
		m->cfi = dwarf_getcfi(m->debug_dwarf);
	if (m->cfi && !debug_frame_sane(m->debug_elf)) {
		m->cfi = NULL; /* freed with the Dwarf */
		m->debug_frame_corrupt = true;
	}
	return m->cfi;
}

/*
 * Evaluate a CFA or register rule as libdw gives it: a DWARF expression
 * over the frame's registers (DW_OP_bregN, DW_OP_call_frame_cfa, ...).
 * *is_value: the result is the register's value (DW_OP_stack_value, a
 * DW_OP_regN location); otherwise it is the address the value is saved at.
 * The operations are those compilers and assemblers put in CFI; any other
 * gives false.
 */
static bool eval_cfi_expression(struct walk *w, const struct frame_registers *regs, uint64_t cfa,
				const Dwarf_Op *ops, size_t nops, uint64_t *result, bool *is_value)
{
	uint64_t stack[16];
	size_t depth = 0;
	*is_value = false;
#define PUSH(v)                                          \
	do {                                             \
		if (depth == ARRAY_SIZE(stack))          \
			return false;                    \
		stack[depth++] = (v);                    \
	} while (0)
#define NEED(n)                  \
	do {                     \
		if (depth < (n)) \
			return false; \
	} while (0)
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t atom = op->atom;
		unsigned reg;
		uint64_t a;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH(atom - DW_OP_lit0);
			continue;
		}
		/* a DW_OP_bregx or DW_OP_regx register number is a ULEB128: checked whole, not cut to unsigned */
		if ((atom >= DW_OP_breg0 && atom <= DW_OP_breg31) || atom == DW_OP_bregx) {
			if (atom == DW_OP_bregx && op->number >= UNW_REGISTER_COUNT)
				return false;
			reg = atom == DW_OP_bregx ? (unsigned)op->number : (unsigned)(atom - DW_OP_breg0);
			if (reg >= UNW_REGISTER_COUNT || !regs->have[reg])
				return false;
			PUSH(regs->value[reg] + (atom == DW_OP_bregx ? op->number2 : op->number));
			continue;
		}
		if ((atom >= DW_OP_reg0 && atom <= DW_OP_reg31) || atom == DW_OP_regx) {
			if (atom == DW_OP_regx && op->number >= UNW_REGISTER_COUNT)
				return false;
			reg = atom == DW_OP_regx ? (unsigned)op->number : (unsigned)(atom - DW_OP_reg0);
			if (reg >= UNW_REGISTER_COUNT || !regs->have[reg] || i + 1 != nops)
				return false;
			*result = regs->value[reg];
			*is_value = true;
			return true;
		}
		switch (atom) {
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_call_frame_cfa:
			PUSH(cfa);
			break;
		case DW_OP_dup:
			NEED(1);
			a = stack[depth - 1];
			PUSH(a);
			break;
		case DW_OP_over:
			NEED(2);
			a = stack[depth - 2];
			PUSH(a);
			break;
		case DW_OP_drop:
			NEED(1);
			depth--;
			break;
		case DW_OP_swap:
			NEED(2);
			a = stack[depth - 1];
			stack[depth - 1] = stack[depth - 2];
			stack[depth - 2] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			if (!read_memory(w, stack[depth - 1], &stack[depth - 1], sizeof(stack[0])))
				return false;
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			stack[depth - 1] += op->number;
			break;
		case DW_OP_neg:
			NEED(1);
			stack[depth - 1] = -stack[depth - 1];
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and:
		case DW_OP_or: case DW_OP_xor: case DW_OP_shl: case DW_OP_shr:
			NEED(2);
			a = stack[--depth];
			switch (atom) {
			case DW_OP_plus: stack[depth - 1] += a; break;
			case DW_OP_minus: stack[depth - 1] -= a; break;
			case DW_OP_mul: stack[depth - 1] *= a; break;
			case DW_OP_and: stack[depth - 1] &= a; break;
			case DW_OP_or: stack[depth - 1] |= a; break;
			case DW_OP_xor: stack[depth - 1] ^= a; break;
			case DW_OP_shl: stack[depth - 1] = a < 64 ? stack[depth - 1] << a : 0; break;
			default: stack[depth - 1] = a < 64 ? stack[depth - 1] >> a : 0; break;
			}
			break;
		case DW_OP_stack_value:
			if (i + 1 != nops)
				return false;
			*is_value = true;
			break;
		default:
			return false;
		}
	}
#undef PUSH
#undef NEED
	if (depth == 0)
		return false;
	*result = stack[depth - 1];
	return true;
}

enum cfi_step {
	CFI_STEPPED,    /* the caller's registers are in the walk */
	CFI_OUTERMOST,  /* the frame has no caller: the stack ends here */
	CFI_FAILED,     /* the walk failed (the reason is recorded) */
};

/*
 * One step with the module's .debug_frame: from the registers of the frame
 * at ip (exact: the IP itself is looked up, else the call before it) to its
 * caller's, written into the walk.  The caller's SP is the CFA, its IP the
 * return address column; registers whose rule is undefined are unknown to
 * the caller, those without a rule keep their value (libdw applies the
 * x86-64 ABI's same-value default to the callee-saved ones).
 */
static enum cfi_step debug_frame_step(struct walk *w, struct module *m, uint64_t bias, uint64_t ip, bool exact,
				      const struct frame_registers *regs)
{
	Dwarf_CFI *cfi = module_cfi(m);
	Dwarf_Frame *frame = NULL;
	uint64_t vaddr = (exact ? ip : ip - 1) - bias;
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0) {
		if (stack_begins_at(w, m, vaddr)) /* the address looked up, as libunwind's path checks it */
			return CFI_OUTERMOST;
		if (m->debug_frame_corrupt)
			walk_fail(w, UNWIND_BAD_FRAME, "corrupt .debug_frame in %s", m->name);
		else
			walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
		return CFI_FAILED;
	}
	enum cfi_step step = CFI_FAILED;
	struct frame_registers caller = { 0 };
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	uint64_t cfa, value;
	bool is_value, ra_from_stack = false;
	int ra = dwarf_frame_info(frame, NULL, NULL, NULL);
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 ||
	    !eval_cfi_expression(w, regs, 0, ops, nops, &cfa, &is_value) || ra < 0 || ra >= UNW_REGISTER_COUNT) {
		walk_fail(w, UNWIND_BAD_FRAME, "unsupported .debug_frame rule in %s", m->name);
		goto out;
	}
	for (int reg = 0; reg < UNW_REGISTER_COUNT; reg++) {
		if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops) != 0) {
			walk_fail(w, UNWIND_BAD_FRAME, "unsupported .debug_frame rule in %s", m->name);
			goto out;
		}
		if (nops == 0 && ops == NULL) { /* same value */
			caller.value[reg] = regs->value[reg];
			caller.have[reg] = regs->have[reg];
			continue;
		}
		if (nops == 0) /* undefined */
			continue;
		if (!eval_cfi_expression(w, regs, cfa, ops, nops, &value, &is_value)) {
			if (w->failure == UNWIND_COMPLETE)
				walk_fail(w, UNWIND_BAD_FRAME, "unsupported .debug_frame rule in %s", m->name);
			goto out;
		}
		if (!is_value && !read_memory(w, value, &value, sizeof(value)))
			goto out;
		if (reg == ra)
			ra_from_stack = !is_value;
		caller.value[reg] = value;
		caller.have[reg] = true;
	}
	if (!caller.have[ra] || caller.value[ra] == 0) {
		step = CFI_OUTERMOST; /* an undefined return address marks the outermost frame */
		goto out;
	}
	caller.value[UNW_X86_64_RIP] = caller.value[ra];
	caller.have[UNW_X86_64_RIP] = true;
	caller.value[UNW_X86_64_RSP] = cfa;
	caller.have[UNW_X86_64_RSP] = true;
	if (cfa <= regs->value[UNW_X86_64_RSP]) {
		walk_fail(w, UNWIND_BAD_FRAME, "the stack does not grow up through %s", m->name);
		goto out;
	}
	/*
	 * A return address that is the frame's own IP without coming from the
	 * stack (a same-value or register rule for it) would step to the same
	 * frame again, one CFA higher each time, until the walk is too deep.
	 * A recursive call's return address repeats too, but is read from the
	 * stack.
	 */
	if (caller.value[ra] == ip && !ra_from_stack) {
		walk_fail(w, UNWIND_BAD_FRAME, "a .debug_frame rule in %s returns to the same frame", m->name);
		goto out;
	}
	memcpy(w->regs, caller.value, sizeof(w->regs));
	memcpy(w->have_reg, caller.have, sizeof(w->have_reg));
	step = CFI_STEPPED;
out:
	free(frame);
	return step;
}

/* ---- the unwinder ---- */

struct unwinder *unwinder_new(struct proc_table *pt)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	u->procs = pt;
	u->by_dso_slots = 64;
	u->by_dso = xcalloc(u->by_dso_slots, sizeof(*u->by_dso));
	u->spaces = xcalloc(MAX_ADDRESS_SPACES * 2, sizeof(*u->spaces));
	u->accessors = (unw_accessors_t){
		.find_proc_info = find_proc_info,
		.put_unwind_info = put_unwind_info,
		.get_dyn_info_list_addr = get_dyn_info_list_addr,
		.access_mem = access_mem,
		.access_reg = access_reg,
		.access_fpreg = access_fpreg,
		.resume = resume,
		.get_proc_name = get_proc_name,
	};
	return u;
}

static void drop_address_spaces(struct unwinder *u)
{
	for (size_t i = 0; i < MAX_ADDRESS_SPACES * 2; i++)
		if (u->spaces[i].used)
			unw_destroy_addr_space(u->spaces[i].space);
	memset(u->spaces, 0, MAX_ADDRESS_SPACES * 2 * sizeof(*u->spaces));
	u->nspaces = 0;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	drop_address_spaces(u);
	free(u->spaces);
	for (size_t i = 0; i < u->nmodules; i++)
		module_free(u->modules[i]);
	free(u->modules);
	free(u->by_dso);
	free(u);
}

static unw_addr_space_t address_space_of(struct unwinder *u, uint32_t pid)
{
	size_t mask = MAX_ADDRESS_SPACES * 2 - 1, i = hash_u64(pid) & mask;
	while (u->spaces[i].used && u->spaces[i].pid != pid)
		i = (i + 1) & mask;
	if (u->spaces[i].used)
		return u->spaces[i].space;
	if (u->nspaces == MAX_ADDRESS_SPACES) {
		drop_address_spaces(u);
		return address_space_of(u, pid);
	}
	unw_addr_space_t space = unw_create_addr_space(&u->accessors, 0);
	if (!space)
		return NULL;
	unw_set_caching_policy(space, UNW_CACHE_GLOBAL);
	u->spaces[i] = (struct pid_space){ .pid = pid, .used = true, .space = space };
	u->nspaces++;
	return space;
}

static bool push_frame(struct unwind_result *out, uint64_t ip, enum unwind_frame_kind kind, int signal)
{
	if (out->nframes == UNWIND_MAX_FRAMES) {
		out->failure = UNWIND_TOO_DEEP;
		snprintf(out->reason, sizeof(out->reason), "more than %d frames", UNWIND_MAX_FRAMES);
		return false;
	}
	out->frames[out->nframes++] = (struct unwind_frame){ .ip = ip, .kind = kind, .signal = signal };
	return true;
}

/*
 * si_signo of the signal frame whose trampoline runs with this SP, or 0.
 * The kernel fills the siginfo only for SA_SIGINFO handlers; otherwise the
 * bytes are whatever the stack held, so a siginfo that does not look like
 * one (a signal number out of range, an errno, a si_code no kernel writes)
 * gives 0, shown as a signal without a name.
 */
static int frame_signal(struct walk *w, uint64_t sp)
{
	int32_t info[3]; /* si_signo, si_errno, si_code */
	if (!read_memory(w, sp + SIGFRAME_SIGINFO_FROM_SP, info, sizeof(info)))
		return 0;
	if (info[0] <= 0 || info[0] > 64 || info[1] != 0 || info[2] < -7 /* SI_DETHREAD */ || info[2] > 0x80)
		return 0;
	return info[0];
}

/* The IP is the trampoline's first byte: the frame is a signal frame (a handler returns there). */
static bool at_sigreturn(struct walk *w, uint64_t ip)
{
	unsigned char code[sizeof(x86_64_rt_sigreturn)];
	return read_memory(w, ip, code, sizeof(code)) && memcmp(code, x86_64_rt_sigreturn, sizeof(code)) == 0;
}

/* The IP is just past the trampoline's syscall: the thread is in (or at) rt_sigreturn. */
static bool in_sigreturn(struct walk *w, uint64_t ip)
{
	unsigned char code[sizeof(x86_64_rt_sigreturn)];
	return ip >= sizeof(code) && read_memory(w, ip - sizeof(code), code, sizeof(code)) &&
	       memcmp(code, x86_64_rt_sigreturn, sizeof(code)) == 0;
}

/*
 * Note the SP that the signal frame at sp saved when it lies off the copied
 * stack: the handler ran on an alternate signal stack (sigaltstack), and
 * the interrupted code's frames are on a stack the sample did not copy.
 */
static void note_interrupted_stack(struct walk *w, uint64_t sp)
{
	uint64_t saved_sp;
	if (!read_memory(w, sp + SIGFRAME_SIGCONTEXT_FROM_SP + SIGCONTEXT_RSP * sizeof(uint64_t), &saved_sp,
			 sizeof(saved_sp)))
		return;
	bool on_copied_stack = saved_sp >= w->stack_base && saved_sp - w->stack_base < STACK_REACH;
	w->other_stack = on_copied_stack ? 0 : saved_sp;
}

/* Replace the walk's registers with the interrupted ones the signal frame at sp saved. */
static bool load_sigcontext(struct walk *w, uint64_t sp)
{
	uint64_t saved[ARRAY_SIZE(sigcontext_registers)];
	if (!read_memory(w, sp + SIGFRAME_SIGCONTEXT_FROM_SP, saved, sizeof(saved)))
		return false;
	memset(w->have_reg, 0, sizeof(w->have_reg));
	for (size_t i = 0; i < ARRAY_SIZE(saved); i++) {
		w->regs[sigcontext_registers[i]] = saved[i];
		w->have_reg[sigcontext_registers[i]] = true;
	}
	return true;
}

static void stop(struct unwind_result *out, enum unwind_failure failure, const char *reason)
{
	out->failure = failure;
	snprintf(out->reason, sizeof(out->reason), "%s", reason);
}

static const char *step_error(int ret)
{
	switch (-ret) {
	case UNW_ENOINFO: return "no unwind info";
	case UNW_EBADFRAME: return "bad frame";
	case UNW_EINVALIDIP: return "invalid IP";
	case UNW_EBADVERSION: return "unsupported unwind info version";
	default: return "libunwind error";
	}
}

/*
 * The module whose .debug_frame steps the frame at lookup (the IP, or the
 * call before a return address), with its bias; NULL when the code there
 * has none.
 */
static struct module *debug_frame_module_at(struct walk *w, uint64_t lookup, uint64_t *bias)
{
	const struct mapping *map = proc_table_find_code(w->u->procs, w->pid, lookup);
	if (!map)
		return NULL;
	struct module *m = module_of(w->u, map->dso);
	if (!m->debug_frame_path)
		return NULL;
	struct module_view *v = view_of(w, map);
	if (!v)
		return NULL;
	*bias = v->bias;
	return m;
}

/* The registers libunwind's cursor has for its frame (those it cannot recover are left out). */
static void cursor_registers(unw_cursor_t *cursor, struct frame_registers *regs)
{
	for (int reg = 0; reg < UNW_REGISTER_COUNT; reg++) {
		unw_word_t value;
		regs->have[reg] = unw_get_reg(cursor, reg, &value) == 0;
		regs->value[reg] = regs->have[reg] ? value : 0;
	}
}

/*
 * Walk from the walk's registers, appending to out; the first frame's IP is
 * exact when w->restart_exact.  Returns true when the walk must go on from
 * registers it reloaded (a sample inside rt_sigreturn, or a step through
 * .debug_frame), with w->restart_exact set for their IP.
 */
static bool walk_frames(struct walk *w, unw_addr_space_t space, struct unwind_result *out)
{
	unw_cursor_t cursor;
	w->record_failures = false;
	w->failure = UNWIND_COMPLETE;
	if (unw_init_remote(&cursor, space, w) < 0) {
		stop(out, UNWIND_BAD_FRAME, "cannot start unwinding");
		return false;
	}
	bool exact = w->restart_exact;
	for (;;) {
		unw_word_t ip, sp;
		unw_get_reg(&cursor, UNW_REG_IP, &ip);
		unw_get_reg(&cursor, UNW_REG_SP, &sp);
		if (ip == 0 && out->nframes > 0)
			return false; /* a zero return address ends the chain */
		if (exact && in_sigreturn(w, ip)) {
			if (!push_frame(out, ip, UNWIND_FRAME_EXACT, 0) ||
			    !push_frame(out, ip, UNWIND_FRAME_SIGNAL, frame_signal(w, sp)))
				return false;
			out->frames[out->nframes - 1].returned = true;
			note_interrupted_stack(w, sp);
			if (load_sigcontext(w, sp)) {
				w->restart_exact = true;
				return true;
			}
			char reason[64];
			snprintf(reason, sizeof(reason), "stack copy ends at %llu bytes",
				 (unsigned long long)w->stack_size);
			stop(out, UNWIND_STACK_END, reason);
			return false;
		}
		bool ip_exact = exact;
		if (at_sigreturn(w, ip)) {
			if (exact && !push_frame(out, ip, UNWIND_FRAME_EXACT, 0))
				return false;
			if (!push_frame(out, ip, UNWIND_FRAME_SIGNAL, frame_signal(w, sp)))
				return false;
			note_interrupted_stack(w, sp);
			exact = true;
		} else {
			if (!push_frame(out, ip, exact ? UNWIND_FRAME_EXACT : UNWIND_FRAME_RETURN, 0))
				return false;
			exact = false;
		}
		uint64_t bias = 0;
		struct module *cfi_module = debug_frame_module_at(w, ip_exact ? ip : ip - 1, &bias);
		struct frame_registers regs;
		if (cfi_module)
			cursor_registers(&cursor, &regs);
		w->failure = UNWIND_COMPLETE;
		w->outermost = false;
		w->record_failures = true;
		int ret = 0;
		if (!cfi_module || cfi_module->has_table)
			ret = unw_step(&cursor);
		if (cfi_module && (!cfi_module->has_table ||
				   (w->failure == UNWIND_NO_UNWIND_INFO && !w->outermost))) {
			/* no .eh_frame entry for this IP: its .debug_frame takes the step */
			w->failure = UNWIND_COMPLETE;
			enum cfi_step step = debug_frame_step(w, cfi_module, bias, ip, ip_exact, &regs);
			w->record_failures = false;
			if (step == CFI_STEPPED) {
				w->restart_exact = false;
				return true;
			}
			if (step == CFI_FAILED)
				stop(out, w->failure, w->reason);
			return false;
		}
		w->record_failures = false;
		if (w->failure == UNWIND_NO_UNWIND_INFO && w->outermost)
			return false;
		if (w->failure != UNWIND_COMPLETE) {
			stop(out, w->failure, w->reason);
			return false;
		}
		if (ret == 0)
			return false;
		if (ret < 0) {
			stop(out, UNWIND_BAD_FRAME, step_error(ret));
			return false;
		}
	}
}

int unwind_sample(struct unwinder *u, const struct unwind_input *in, struct unwind_result *out)
{
	out->nframes = 0;
	out->failure = UNWIND_COMPLETE;
	out->reason[0] = '\0';
	struct walk w = { .u = u, .pid = in->pid, .stack = in->stack, .stack_size = in->stack_size };
	uint32_t index = 0;
	for (int bit = 0; bit < 64 && index < in->nr_regs; bit++) {
		if (!(in->regs_mask & (1ULL << bit)))
			continue;
		int reg = unw_register_of_perf(bit);
		if (reg >= 0) {
			w.regs[reg] = in->regs[index];
			w.have_reg[reg] = true;
		}
		index++;
	}
	if (!w.have_reg[UNW_X86_64_RIP] || !w.have_reg[UNW_X86_64_RSP]) {
		stop(out, UNWIND_BAD_FRAME, "the sample has no user IP or SP");
		return -EINVAL;
	}
	if (in->regs_abi == PERF_SAMPLE_REGS_ABI_32) {
		push_frame(out, w.regs[UNW_X86_64_RIP], UNWIND_FRAME_EXACT, 0);
		stop(out, UNWIND_UNSUPPORTED, "32-bit code is not unwound");
		return 0;
	}
	w.stack_base = w.regs[UNW_X86_64_RSP];
	w.stack_bytes = in->stack ? in->stack_dyn_size : 0;
	unw_addr_space_t space = address_space_of(u, in->pid);
	if (!space) {
		push_frame(out, w.regs[UNW_X86_64_RIP], UNWIND_FRAME_EXACT, 0);
		stop(out, UNWIND_BAD_FRAME, "cannot create a libunwind address space");
		return 0;
	}
	w.restart_exact = true;
	while (walk_frames(&w, space, out))
		;
	return 0;
}

const char *unwind_failure_key(enum unwind_failure failure)
{
	static const char *const keys[UNWIND_FAILURE_COUNT] = {
		[UNWIND_COMPLETE] = "complete",
		[UNWIND_NO_MAPPING] = "no_mapping",
		[UNWIND_NO_FILE] = "no_file",
		[UNWIND_NO_UNWIND_INFO] = "no_unwind_info",
		[UNWIND_STACK_END] = "stack_end",
		[UNWIND_BAD_MEMORY] = "bad_memory",
		[UNWIND_SIGNAL_STACK] = "signal_stack",
		[UNWIND_BAD_FRAME] = "bad_frame",
		[UNWIND_TOO_DEEP] = "too_deep",
		[UNWIND_UNSUPPORTED] = "unsupported",
	};
	return (unsigned)failure < UNWIND_FAILURE_COUNT ? keys[failure] : "unknown";
}
