/*
 * symbolize.h: addresses to names.
 *
 * A symtab is the symbol table of one ELF file (its .symtab, else its
 * .dynsym), of an in-memory ELF image (the vDSO) or of the kernel
 * (/proc/kallsyms).  Function and data symbols are kept apart: code
 * addresses are looked up among functions, data addresses (futex words,
 * cachelines) among objects.  Addresses are in the file's own virtual
 * address space (st_value); symtab_offset_to_vaddr() converts the file
 * offsets that MMAP2 records give into that space through the PT_LOAD
 * program headers.
 *
 * The process table (maps.c) follows the workload's address spaces through
 * COMM/MMAP2/FORK/EXIT records and turns a (pid, address) into a mapping:
 * its dso and the address within that dso's file.
 */
#ifndef SIGPROF_SYMBOLIZE_H
#define SIGPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

enum sym_kind {
	SYM_FUNC, /* STT_FUNC, STT_GNU_IFUNC; kallsyms t/T/w/W */
	SYM_DATA, /* STT_OBJECT, STT_TLS excluded; kallsyms d/D/b/B/r/R */
};

struct sym {
	uint64_t start; /* in the file's virtual address space */
	uint64_t size;  /* known or inferred at load; 0 only for a last symbol of unknown extent (matches its own address) */
	const char *name;
};

struct symtab;

/*
 * 0, or -errno (-ENOENT: no such file; -EISDIR; -ENOEXEC: not an ELF file we can read, or truncated).
 * An x86-64 file with no symbol table (nor a debug file's) also gets a name for each function its
 * .eh_frame lists and no symbol names: "FILE!fn@0xSTART" (FILE its base name, START its vaddr), so
 * that the samples of one function of a stripped program merge.
 */
int symtab_from_elf_file(const char *path, struct symtab **out);
/*
 * The GNU build-id of the ELF file at path, its bytes into id: their count
 * (at most max), 0 when it has none (or a longer one), -errno (-ENOEXEC:
 * not an ELF file).
 */
int elf_file_build_id(const char *path, unsigned char *id, size_t max);
/* What marks such a name: "stress-ng" EH_FRAME_NAME_MARK "0x555100". */
#define EH_FRAME_NAME_MARK "!fn@"
/*
 * How many of the functions in .text that .eh_frame lists in the x86-64
 * file at path begin by setting up a frame pointer (push %rbp; mov
 * %rsp,%rbp): code built with -fno-omit-frame-pointer has all but some
 * leaf functions, Debian's programs few (stress-ng 8%: those that realign
 * their stack or alloca).  0 (both 0 when the file has no .eh_frame_hdr table), or
 * -errno (-ENOEXEC: not an x86-64 ELF file).
 */
int elf_frame_pointer_functions(const char *path, size_t *with_frame_pointer, size_t *functions);
/*
 * The libraries the ELF file at path names as needed (DT_NEEDED:
 * "libc.so.6"), each added to names with its terminating NUL.  Returns how
 * many, or -errno.
 */
int elf_needed_libraries(const char *path, struct strbuf *names);
/* The same for an ELF image in memory (the vDSO); the image is copied, the caller may free it. */
int symtab_from_elf_memory(const void *image, size_t size, struct symtab **out);
/*
 * The largest kallsyms text read, from a file or a recording's copy: this
 * kernel's is 5 MB; 128 MiB is room for any kernel with every module
 * loaded, and keeps /dev/zero given as --kallsyms from taking the memory.
 */
#define KALLSYMS_MAX_BYTES (128u << 20)
/*
 * Parse a kallsyms-format file; a module's symbols are named "name [module]".
 * -EPERM when every address is 0 (hidden from this user), -ENOEXEC when no line parses,
 * -EFBIG past KALLSYMS_MAX_BYTES.
 */
int symtab_from_kallsyms(const char *path, struct symtab **out);
/*
 * The same from the file's text in memory (the copy a recording carries).
 * The symtab takes ownership of text (malloc'd, len bytes plus one for a
 * NUL) in every case: when the text is sorted, as the kernel writes it,
 * lookups search it in place and nothing is built per symbol.
 */
int symtab_from_kallsyms_buffer(char *text, size_t len, struct symtab **out);
/*
 * The lines of a sorted kallsyms text (as the kernel writes it) that a
 * table needs to name addrs[0..naddrs) exactly as the whole text would,
 * appended to out in address order: for each address, every typed line at
 * the highest typed address at or below it; and where the next typed
 * address is not itself kept, one line "ADDRESS t KALLSYMS_NOT_CARRIED"
 * there, so that each kept symbol keeps its extent.  An address the caller
 * did not list may then fall in such a line's extent: named by it, never
 * by a wrong symbol.  addrs is sorted in place.  -EINVAL (out unchanged)
 * when the text is not sorted: the caller keeps the whole text.
 */
struct strbuf;
int kallsyms_subset(const char *text, size_t len, uint64_t *addrs, size_t naddrs, struct strbuf *out);
/* The name of the lines that end a kept symbol in kallsyms_subset()'s text. */
#define KALLSYMS_NOT_CARRIED "sigprof_kernel_symbol_not_recorded"

/* The symbol of the given kind that covers addr, or NULL. */
const struct sym *symtab_lookup(const struct symtab *tab, enum sym_kind kind, uint64_t addr);
size_t symtab_count(const struct symtab *tab, enum sym_kind kind);

/* Map a file offset (as in an MMAP2 record's pgoff + delta) to the file's vaddr; -ENOENT if no PT_LOAD covers it. */
int symtab_offset_to_vaddr(const struct symtab *tab, uint64_t file_offset, uint64_t *vaddr);
/* ELF e_type is ET_DYN (PIE or shared library) */
bool symtab_is_relocatable(const struct symtab *tab);
/* The GNU build-id as lowercase hex, or NULL when the file has none. */
const char *symtab_build_id(const struct symtab *tab);
/*
 * The separate debug file of a file that lacks its .symtab or its DWARF
 * (see "separate debug files" below), or NULL when it has none.  Its
 * .symtab, when the file lost its own, gave tab's symbols.
 */
const char *symtab_debug_file(const struct symtab *tab);
/*
 * The name to show for a symbol that tab's lookup returned: a C++ name
 * ("_Z...") demangled ("foo::bar()"), unless symbolize_set_demangle(false);
 * any other name as it is.  Each symbol is demangled once, on first use,
 * and the result kept in tab.
 */
const char *symtab_display_name(struct symtab *tab, enum sym_kind kind, const struct sym *sym);
void symtab_free(struct symtab *tab);

/* ---- names and separate debug files (demangle.c, debuginfo.c) ---- */

/* Demangle C++ names in symtab_display_name() and symbol_demangle() (the default), or keep them raw. */
void symbolize_set_demangle(bool demangle);
/* name demangled (a copy to free()), or NULL when it is not a C++ name or demangling is off. */
char *symbol_demangle(const char *name);

/*
 * Separate debug files.  When an ELF file has no .symtab (it was stripped),
 * symtab_from_elf_file() takes the function and data symbols from its debug
 * file, found as gdb finds it, under each debug root in turn:
 *   1. ROOT/.build-id/ab/cdef....debug, from the file's GNU build-id;
 *   2. the .gnu_debuglink name, with its CRC32 checked, in the file's own
 *      directory, in its .debug/ subdirectory, then in ROOT/<directory>/.
 * Addresses stay those of the file itself (the debug file's symbols have
 * the same vaddrs; the PT_LOAD headers and the sigreturn trampoline scan
 * come from the file itself).
 *
 * The roots are "/usr/lib/debug" unless set here: a colon-separated list,
 * NULL for the default.  The report takes them from --debug-dirs or the
 * environment variable SIGPROF_DEBUG_DIRS.
 */
void symbolize_set_debug_dirs(const char *dirs);
const char *symbolize_debug_dirs(void);
/*
 * A root under which every file the recording names is read, as perf's
 * --symfs: PATH is opened as DIR/PATH, debug files as DIR/ROOT/...; NULL
 * (the default) for none.  symbolize_open() is open(2) of such a path.
 * With DEBUGINFOD_URLS set, a debug file found nowhere is asked of those
 * servers by build-id (libdebuginfod), and what they send is read from
 * debuginfod's cache.
 */
void symbolize_set_symfs(const char *dir);
const char *symbolize_symfs(void);
int symbolize_open(const char *path, int flags);
/*
 * The debug file of the ELF file at path into out: 0, -ENOENT when there
 * is none, -ENAMETOOLONG when out is too small, or the -errno of reading
 * path (-ENOEXEC: not ELF).
 */
int debug_file_find(const char *path, char *out, size_t len);

/* ---- the workload's processes and their mappings (maps.c) ---- */

struct dso {
	const char *name;        /* the path as the MMAP2 record gave it, or [vdso], [kernel], ... */
	struct symtab *symtab;   /* loaded on first use; NULL if it could not be */
	int load_error;          /* 0, or the -errno of the failed load */
	bool load_tried;
	bool is_kernel;
	bool no_host_kallsyms;   /* kernel: /proc/kallsyms is not the recording's kernel (-ESTALE instead) */
	const char *build_id;    /* the build-id the recording gives for the file (MMAP2), lowercase hex; NULL: none */
	/*
	 * The file at name is another build than the recording's (rebuilt or
	 * upgraded since): its build-id (cut to 64 hex digits).  The symbols then come from the
	 * recorded build's debug file if one is found, else the load fails
	 * with -ESTALE; the file's code is never used to unwind.
	 */
	char file_build_id[65];  /* "" while it is not so */
};

struct mapping {
	uint64_t start, end; /* [start, end) in the process */
	uint64_t pgoff;      /* file offset of start */
	uint32_t prot, flags;
	struct dso *dso;
	/* the mapped object as MMAP2 gives it (st_dev as major:minor, st_ino); ino 0: not given (MMAP, build-id) */
	uint32_t maj, min;
	uint64_t ino;
};

struct proc_table;

struct proc_table *proc_table_new(void);
void proc_table_free(struct proc_table *pt);
/* The record handlers; pid is the process (tgid). */
void proc_table_comm(struct proc_table *pt, uint32_t pid, uint32_t tid, const char *comm, bool exec);
void proc_table_mmap(struct proc_table *pt, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint32_t prot, uint32_t flags, const char *filename);
/* The mapping pid's last proc_table_mmap() made at start is of that object (MMAP2's maj, min, ino). */
void proc_table_mmap_object(struct proc_table *pt, uint32_t pid, uint64_t start, uint32_t maj, uint32_t min,
			    uint64_t ino);
void proc_table_fork(struct proc_table *pt, uint32_t ppid, uint32_t pid);
/* A FORK's new task tid (thread or process), made by task ptid: it takes ptid's name. */
void proc_table_thread_start(struct proc_table *pt, uint32_t tid, uint32_t ptid);
void proc_table_exit(struct proc_table *pt, uint32_t pid, uint32_t tid);
/* The process's name: its main thread's, or what it last executed. */
const char *proc_table_comm_of(struct proc_table *pt, uint32_t pid);
/* A thread's name (pthread_setname_np), else its process's; what perf script prints per sample. */
const char *proc_table_thread_comm_of(struct proc_table *pt, uint32_t pid, uint32_t tid);
/* The build-id the recording gives for the file of that name (hex); the first one given stays. */
void proc_table_set_build_id(struct proc_table *pt, const char *filename, const char *build_id);
/*
 * A number that changes whenever the table's answers for a process may
 * have (a mapping made or dropped, an exec, a fork, a file's build-id):
 * what was worked out from the table under one generation holds while it lasts.
 */
uint64_t proc_table_generation(const struct proc_table *pt);
/* The dso of that name some mapping named, or NULL. */
struct dso *proc_table_dso_named(struct proc_table *pt, const char *name);
/* The mapping that covers addr in pid, or NULL. */
const struct mapping *proc_table_find(struct proc_table *pt, uint32_t pid, uint64_t addr);
/*
 * The same for a code address: only an executable mapping answers, so that
 * a return address that points into data (a broken frame-pointer chain)
 * stays unknown when the recording also holds data mappings.
 */
const struct mapping *proc_table_find_code(struct proc_table *pt, uint32_t pid, uint64_t addr);
/* The dso's symbol table, loaded once; NULL when it cannot be (dso->load_error says why). */
struct symtab *dso_symtab(struct dso *dso);
/*
 * The separate debug file of a stripped dso (see above), or NULL when it
 * has none.  For readers of DWARF and
 * .debug_frame (the unwinder, --srcline): the debug file holds the
 * sections the stripped file lost, at the same addresses.  Loads the
 * dso's symbols if that was not done yet.
 */
const char *dso_debug_file(struct dso *dso);
/*
 * The kernel dso.  Its symbols come, in this order of preference, from the
 * file named with proc_table_set_kallsyms(), the table installed with
 * proc_table_set_kernel_symbols() (the recording's copy), /proc/kallsyms;
 * loaded on first use.
 */
struct dso *proc_table_kernel(struct proc_table *pt);
/* The files the mappings named (not the kernel): count, and each by index. */
size_t proc_table_dso_count(const struct proc_table *pt);
struct dso *proc_table_dso(const struct proc_table *pt, size_t i);
/* Whether the dso names a file (not [vdso], [kernel], //anon; /memfd:NAME is one, of no path). */
bool dso_is_file(const struct dso *dso);
void proc_table_set_kallsyms(struct proc_table *pt, const char *path);
/* Never read /proc/kallsyms for this table's kernel frames (another boot's): they keep their addresses. */
void proc_table_forbid_host_kallsyms(struct proc_table *pt);
/* Install the kernel's table (taking ownership) unless a kallsyms file was named. */
void proc_table_set_kernel_symbols(struct proc_table *pt, struct symtab *tab);

/*
 * Where addr of pid lies in memory that other processes can map too, as the
 * kernel keys a shared futex: a MAP_SHARED mapping's object (a file, shared
 * anonymous memory, a System V segment: each its own inode) and the byte
 * offset in it.  *object is a hash of the object's identity (device and
 * inode, else the file's name); false for private memory, an address no
 * mapping covers, or a shared mapping whose object the recording does not
 * say (then the address is keyed per process, as before).
 */
bool proc_table_shared_offset(struct proc_table *pt, uint32_t pid, uint64_t addr, uint64_t *object,
			      uint64_t *offset);

/* Convert an address inside a mapping into the dso's own address space. */
bool mapping_to_dso_addr(const struct mapping *map, uint64_t addr, uint64_t *dso_addr);

/* ---- source lines and inlined calls (srcline.c, libdw) ---- */

/* One function level at a code address, as addr2line -i -f prints it. */
struct source_frame {
	const char *function; /* DWARF's name (linkage name demangled unless turned off), or NULL */
	const char *file;     /* the source file, a path as DWARF gives it, or NULL */
	unsigned line;        /* 0 when unknown */
	bool inlined;         /* an inlined copy: the next frame is the function it was inlined into */
};

/*
 * The DWARF of every file a report asks about, each opened once (shared by
 * every dso with the same build-id, else the same path) from the dso's
 * separate debug file when it has one, else from the file itself.  Files
 * without DWARF are remembered as such.
 */
struct source_lines;

struct source_lines *source_lines_new(void);
void source_lines_free(struct source_lines *sl);
/*
 * The function levels at addr (in the dso's own address space), innermost
 * first: the line of addr in the innermost (inlined) function, then for
 * each inlined call the caller and the line of the call, ending with the
 * function that was compiled out of line.  Returns how many were written
 * (at most max); 0 when no DWARF covers addr.  The strings live until
 * source_lines_free().
 */
size_t source_lines_lookup(struct source_lines *sl, struct dso *dso, uint64_t addr, struct source_frame *out,
			   size_t max);

/*
 * Name a data address of pid (a futex word, a cacheline) into buf: the ELF
 * data symbol that covers it ("wake_word", "table+0x10"; an anonymous
 * mapping right after a file's data is taken as that file's .bss), else its
 * mapping: "BASENAME+0xADDR" in a file (ADDR in the file's own address space,
 * as nm shows it, or the file offset when the file cannot be read),
 * "[heap]+0xOFF" and "[stack]+0xOFF" (OFF from the mapping's start),
 * "[anon]+0xOFF" for other anonymous memory; else "0xADDR".  *dso (when dso
 * is not NULL) is the dso name the address belongs to, or NULL when no
 * mapping covers it.  Data mappings are known only when the recording has
 * them (attr.mmap_data).  The name's control characters and bytes that are
 * not UTF-8 are escaped (printable_text(): "\x1b[31m"), as every string of
 * a recording is in an output.  0 when a symbol names the address, -ENOENT
 * when buf holds a fallback name.
 */
int proc_table_data_name(struct proc_table *pt, uint32_t pid, uint64_t addr, char *buf, size_t len,
			 const char **dso);

#endif
