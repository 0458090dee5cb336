/*
 * unwind.h: user stacks from the copies that DWARF samples carry.
 *
 * A sample taken with --call-graph dwarf holds the thread's user registers
 * and a copy of the top of its user stack.  unwind_sample() walks that copy
 * with libunwind's remote API: the unwind tables come from the
 * .eh_frame_hdr of the file each IP's mapping names (the process table
 * says which, from the MMAP2 records; CFI that libunwind cannot search,
 * .debug_frame or an .eh_frame without that header, is read with libdw),
 * memory reads are served from the stack copy or from the mapped file's
 * bytes, and nothing is read from any live process.  Each file is opened, mapped and parsed once per unwinder,
 * shared by every path and process that maps it (keyed by build-id when the
 * file has one).
 *
 * A sample whose IP, SP and copy length repeat an earlier one's, and whose
 * registers and stack bytes that walk read are the same, takes that walk's
 * result without a walk (unwind_memo.c): on a cpu recording most samples
 * repeat a few call paths.
 *
 * The result is a list of frames, leaf first, and, when the walk stopped
 * before the outermost frame, why.  A signal frame (the return address of
 * a handler is the kernel's sigreturn trampoline, __restore_rt) is a frame
 * of its own kind carrying the signal number read from the siginfo the
 * kernel put on the stack; the frame under it is the interrupted code, at
 * its exact IP.
 */
#ifndef SIGPROF_UNWIND_H
#define SIGPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "sigprof/symbolize/symbolize.h"

#define UNWIND_MAX_FRAMES 256

enum unwind_frame_kind {
	UNWIND_FRAME_EXACT,  /* where the thread was: the leaf, or the code a signal interrupted */
	UNWIND_FRAME_RETURN, /* a return address: the call is the instruction before it (look up ip - 1) */
	UNWIND_FRAME_SIGNAL, /* a signal frame, in place of the trampoline's return-address frame */
};

struct unwind_frame {
	uint64_t ip;
	enum unwind_frame_kind kind;
	int signal; /* UNWIND_FRAME_SIGNAL: the signal number, 0 when the siginfo could not be read */
	bool returned; /* UNWIND_FRAME_SIGNAL: the thread is in its rt_sigreturn (the handler has returned) */
};

/* Why a walk stopped before the outermost frame. */
enum unwind_failure {
	UNWIND_COMPLETE,        /* reached the outermost frame */
	UNWIND_NO_MAPPING,      /* an IP that no executable mapping covers */
	UNWIND_NO_FILE,         /* the mapped file cannot be read (deleted, anonymous code, JIT) */
	UNWIND_NO_UNWIND_INFO,  /* the file has no unwind table entry for the IP */
	UNWIND_STACK_END,       /* the walk needed stack beyond the copied bytes */
	UNWIND_BAD_MEMORY,      /* a read of memory that is neither the stack copy nor a mapped file */
	UNWIND_SIGNAL_STACK,    /* the code a signal interrupted ran on another stack than the handler's (sigaltstack) */
	UNWIND_BAD_FRAME,       /* libunwind rejected a frame (corrupt stack, bad unwind info) */
	UNWIND_TOO_DEEP,        /* more than UNWIND_MAX_FRAMES frames */
	UNWIND_UNSUPPORTED,     /* registers of 32-bit code (PERF_SAMPLE_REGS_ABI_32): only the leaf is known */
	UNWIND_JOINED_CUT,      /* joined across a signal frame to the delivery's stack, which itself stopped early
				   (set by the profile loader, not by unwind_sample()) */
	UNWIND_FAILURE_COUNT,
};

struct unwind_result {
	struct unwind_frame frames[UNWIND_MAX_FRAMES];
	size_t nframes;
	enum unwind_failure failure;
	char reason[192]; /* failure != UNWIND_COMPLETE: "no unwind info for libfoo.so" */
};

/* A sample's user state: registers as perf numbers them (one u64 per set bit of regs_mask, lowest first). */
struct unwind_input {
	uint32_t pid;
	uint64_t regs_abi;       /* PERF_SAMPLE_REGS_ABI_64; 0 is taken as 64-bit too */
	const uint64_t *regs;
	uint64_t regs_mask;
	uint32_t nr_regs;
	const void *stack;       /* the copy of [sp, sp + stack_dyn_size) */
	uint64_t stack_size;     /* bytes the recording asked for */
	uint64_t stack_dyn_size; /* bytes of the copy that are valid */
};

struct unwinder;

/* The unwinder reads mappings from pt, which must outlive it. */
struct unwinder *unwinder_new(struct proc_table *pt);
void unwinder_free(struct unwinder *u);

/*
 * Unwind one sample into out.  Always yields at least the leaf frame when
 * the registers hold an IP; 0, or -EINVAL when the registers lack IP or SP
 * (out->reason says so).
 */
int unwind_sample(struct unwinder *u, const struct unwind_input *in, struct unwind_result *out);

/*
 * How many walks the unwinder answered from its memo (a sample that read
 * the same registers and stack bytes as one walked before, under the same
 * mappings) and how many it walked.
 */
void unwinder_memo_stats(const struct unwinder *u, uint64_t *hits, uint64_t *walked);

/* A stable key for a failure ("no_unwind_info", "stack_end", ...), as JSON reports count them. */
const char *unwind_failure_key(enum unwind_failure failure);

#endif
