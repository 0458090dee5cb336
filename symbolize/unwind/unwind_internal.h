/*
 * unwind_internal.h: the inside of the DWARF unwinder, shared by its files.
 *
 * The unwinder (include/sigprof/symbolize/unwind.h) is five files, one concern each:
 *   - unwind_module.c: the files it reads, mapped once per unwinder
 *     (struct module), and how one process maps them (struct module_view);
 *   - unwind_access.c: a walk's memory and registers, and the callbacks
 *     through which libunwind reads them;
 *   - unwind_debug_frame.c: code whose CFI is only in .debug_frame: the
 *     check of that CFI and the evaluation of its rules;
 *   - unwind_memo.c: walks remembered by the registers and stack bytes they
 *     read, so that a sample that repeats them is not walked again;
 *   - unwind.c: the walker (unwind_sample), its address spaces and signal
 *     frames.
 * What they share is here: the unwinder, a walk and a module, and the few
 * functions one file asks of another.  Everything else stays static in its
 * file.
 *
 * This header is private to symbolize/; the public contract is
 * include/sigprof/symbolize/unwind.h.
 */
#ifndef SIGPROF_UNWIND_INTERNAL_H
#define SIGPROF_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <libunwind.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/symbolize/unwind.h"
#include "../symtab_internal.h"

/* libunwind's (= DWARF's) x86-64 register numbers run from 0 to RIP. */
#define UNW_REGISTER_COUNT (UNW_X86_64_RIP + 1)

/* A file mapped once, with what unwinding needs of it. */
struct module {
	char *key;              /* build-id, else the path */
	char *name;             /* the basename, for failure reasons */
	unsigned char *image;   /* the whole file */
	size_t size;
	bool image_mapped;      /* munmap (a file) rather than free (the vDSO copy) */
	struct load_segment *segments; /* its PT_LOAD headers */
	size_t nsegments, segments_cap;
	bool has_table;         /* .eh_frame_hdr with a binary search table */
	bool has_eh_frame;      /* an .eh_frame section (section headers say so) */
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
	/*
	 * .eh_frame read by libdw: how a file without .eh_frame_hdr's table
	 * (gcc -static writes none) is stepped, and how any file says whether
	 * an FDE covers its entry point (stack_begins_at).
	 */
	bool eh_frame_tried;             /* opened (or failed to) on first use */
	bool eh_frame_corrupt;           /* it asks more of libdw than CFI can (cfi_sane) */
	Elf *eh_frame_elf;               /* the module's image, for libdw */
	Dwarf_CFI *eh_frame_cfi;         /* dwarf_getcfi_elf's; NULL until opened, and when it cannot be read */
	bool entry_checked, entry_has_fde; /* whether an .eh_frame FDE covers e_entry, found on first use */
};

/* The module of a dso, in the unwinder's table by dso. */
struct dso_module {
	const struct dso *dso; /* NULL: empty slot */
	struct module *module;
};

struct unwinder {
	struct proc_table *procs;
	struct module **modules;
	size_t nmodules, modules_cap;
	struct dso_module *by_dso; /* open addressing */
	size_t by_dso_slots, by_dso_count;
	struct pid_space *spaces;  /* open addressing by pid, MAX_ADDRESS_SPACES * 2 slots */
	size_t nspaces;
	unw_accessors_t accessors;
	struct unwind_memo *memo;
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
	struct memo_log *log;             /* what the walk read of the sample (unwind_memo.c); NULL: not logged */
	bool regs_from_sample;            /* regs are still the sample's own, not a frame's it reloaded */
};

/* Above SP, this far is taken for the thread's stack (8 MiB is the usual size of one) when no file holds it. */
#define STACK_REACH (16ull << 20)

/* The registers of one frame, in libunwind's (= DWARF's x86-64) numbering. */
struct frame_registers {
	uint64_t value[UNW_REGISTER_COUNT];
	bool have[UNW_REGISTER_COUNT];
};

/* What a step with libdw's CFI came to (libdw_step). */
enum cfi_step {
	CFI_STEPPED,    /* the caller's registers are in the walk */
	CFI_OUTERMOST,  /* the frame has no caller: the stack ends here */
	CFI_FAILED,     /* the walk failed (the reason is recorded) */
};

/* ---- the memo (unwind_memo.c) ---- */

/* What a walk read of its sample: the registers (libunwind's numbers) and stack bytes its result rests on. */
#define MEMO_MAX_READS 128
#define MEMO_MAX_BYTES 2048
struct memo_read {
	uint32_t offset, len; /* of the stack copy */
};
struct memo_log {
	uint32_t regs_read; /* a bit per register read while it held the sample's value */
	uint32_t nreads, nbytes;
	bool overflow;      /* more than the log holds: the walk is not kept */
	struct memo_read reads[MEMO_MAX_READS];
	unsigned char bytes[MEMO_MAX_BYTES];
};

/* Which walks may share a result: those that also read the same registers and stack bytes. */
struct memo_index {
	uint32_t pid;
	uint64_t ip, sp, stack_bytes, stack_size, regs_mask;
};

struct unwind_memo *unwind_memo_new(void);
void unwind_memo_free(struct unwind_memo *m);
/*
 * The result of a kept walk with x's index, made under the same process
 * table generation, whose reads regs (libunwind's numbering) and stack
 * repeat; false when there is none.
 */
bool unwind_memo_find(struct unwind_memo *m, const struct memo_index *x, uint64_t generation, const uint64_t *regs,
		      const unsigned char *stack, struct unwind_result *out);
/* The memo's log, emptied for the next walk. */
struct memo_log *unwind_memo_log(struct unwind_memo *m);
/* Note a read of len bytes at offset of the stack copy. */
void memo_log_stack(struct memo_log *log, uint64_t offset, const void *bytes, size_t len);
/* Keep r, the walk that the memo's log describes, under x. */
void unwind_memo_keep(struct unwind_memo *m, const struct memo_index *x, uint64_t generation, const uint64_t *regs,
		      const struct unwind_result *r);
void unwind_memo_stats(const struct unwind_memo *m, uint64_t *hits, uint64_t *misses);

/* ---- the walker (unwind.c) ---- */

/* Record why the walk stops: only inside a step, and only the first failure (the cause). */
void walk_fail(struct walk *w, enum unwind_failure failure, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- modules (unwind_module.c) ---- */

/* A module and all it mapped (its file, its debug file's CFI). */
void module_free(struct module *m);
/* The dso's module, loaded on first use and shared with every dso of the same build-id. */
struct module *module_of(struct unwinder *u, struct dso *dso);
/*
 * The view of the module that mapping belongs to, made on first use in this
 * walk from addr, an address in the mapping (see there); NULL when it has no file.
 */
struct module_view *module_view_of(struct walk *w, const struct mapping *map, uint64_t addr);
/* Copy len bytes at a process address from a module this walk has a view of; false when none covers it. */
bool read_from_views(struct walk *w, uint64_t addr, void *buf, size_t len);
/* Whether the code at vaddr is where a thread's stack begins (no frame lies beyond it). */
bool stack_begins_at(struct walk *w, struct module *m, uint64_t vaddr);
/* The size of a DWARF pointer encoding's value (DW_EH_PE_*); 0 for those a CFI reader here does not take. */
size_t encoded_size(unsigned char encoding);
/* Whether the dso names a file on disk (not [vdso] or another [name], not anonymous or memfd code). */
bool dso_has_file(const struct dso *dso);
/* Map a whole file, private and writable: 0, or a negative errno. */
int map_file(const char *path, unsigned char **image, size_t *size);
/* The ELF section named wanted, or NULL. */
Elf_Scn *find_section_named(Elf *elf, const char *wanted);

/* ---- a walk's memory and libunwind's accessors (unwind_access.c) ---- */

/* Read process memory as the recording knows it; false (and, inside a step, a failure) when it does not. */
bool read_memory(struct walk *w, uint64_t addr, void *buf, size_t len);
/* The callbacks every address space of an unwinder is made with. */
extern const unw_accessors_t walk_accessors;

/* ---- CFI read by libdw: .debug_frame, and .eh_frame without a search table (unwind_debug_frame.c) ---- */

/*
 * One step from the frame at ip to its caller with libdw's CFI of the
 * module: its .eh_frame when it has no search table, then its .debug_frame
 * (see there).
 */
enum cfi_step libdw_step(struct walk *w, struct module *m, uint64_t bias, uint64_t ip, bool exact,
			 const struct frame_registers *regs);
/* Whether an FDE of the module's .eh_frame covers vaddr (false when it has none, or it cannot be read). */
bool eh_frame_covers(struct module *m, uint64_t vaddr);
/* The CFI libdw reads for a module (its .debug_frame's, its .eh_frame's), released. */
void module_cfi_free(struct module *m);

#endif
