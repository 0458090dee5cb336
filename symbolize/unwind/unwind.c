/*
 * unwind.c: the walker.  DWARF unwinding of the user stacks that samples
 * copy (unwind.h), with libunwind's remote API: unwind_sample() lays the
 * sample's registers out as libunwind numbers them, lets libunwind step
 * from frame to frame, and takes the steps libunwind cannot take itself:
 * those through code whose CFI is only in .debug_frame, and those in and
 * around a signal handler.
 *
 * The unwinder's other files, one concern each, share the structures of
 * unwind_internal.h: unwind_module.c (the files, each mapped once),
 * unwind_access.c (a walk's memory and registers, and libunwind's
 * callbacks) and unwind_debug_frame.c (the .debug_frame check and rule
 * evaluator).  A sample comes in as registers in perf's numbering
 * (<asm/perf_regs.h>) and a stack copy; nothing here reads the kernel's
 * records.
 *
 * The design (address spaces and libunwind's cache, failures, the CFI libdw
 * reads, signal frames): docs/stacks.md, "The unwinder".
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/symbolize/unwind.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"
#include "../symtab_internal.h"
#include "unwind_internal.h"

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

/* The libunwind address space of one pid, in the unwinder's table by pid. */
struct pid_space {
	uint32_t pid;
	bool used;
	unw_addr_space_t space;
};

/* Address spaces alive at once; past this they are all dropped and made again as samples need them. */
#define MAX_ADDRESS_SPACES 256

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

void walk_fail(struct walk *w, enum unwind_failure failure, const char *fmt, ...)
{
	if (!w->record_failures || w->failure != UNWIND_COMPLETE)
		return; /* the first failure is the cause; later ones follow from it */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->reason, sizeof(w->reason), fmt, ap);
	va_end(ap);
	w->failure = failure;
}

/* ---- the unwinder ---- */

struct unwinder *unwinder_new(struct proc_table *pt)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	u->procs = pt;
	u->by_dso_slots = 64;
	u->by_dso = xcalloc(u->by_dso_slots, sizeof(*u->by_dso));
	u->spaces = xcalloc(MAX_ADDRESS_SPACES * 2, sizeof(*u->spaces));
	u->accessors = walk_accessors;
	u->memo = unwind_memo_new();
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
	unwind_memo_free(u->memo);
	free(u);
}

void unwinder_memo_stats(const struct unwinder *u, uint64_t *hits, uint64_t *walked)
{
	unwind_memo_stats(u->memo, hits, walked);
}

/* Nonzero while this thread is inside unwind_sample(): libunwind's calls to sigprocmask() are skipped. */
static __thread int unwinding;

/*
 * libunwind's cache lock (lock_acquire/lock_release) calls sigprocmask()
 * through its PLT, so this definition, in the executable, is the one it
 * gets.  Inside unwind_sample() the calls only block signals around a lock
 * no signal handler takes, and they are skipped: the old mask handed back
 * is empty and the restore that follows is skipped too.  Every other call
 * (the recorder's, the libraries') is pthread_sigmask()'s, with
 * sigprocmask()'s errno convention.
 */
int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (unwinding) {
		if (old)
			sigemptyset(old);
		return 0;
	}
	int err = pthread_sigmask(how, set, old);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
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
	w->regs_from_sample = false;
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

/*
 * Go on from the interrupted registers that the signal frame whose
 * trampoline runs with this SP saved (true: walk_frames restarts there, at
 * an exact IP), or stop saying why.
 */
static bool resume_from_sigcontext(struct walk *w, uint64_t sp, struct unwind_result *out)
{
	if (load_sigcontext(w, sp)) {
		w->restart_exact = true;
		return true;
	}
	char reason[64];
	snprintf(reason, sizeof(reason), "stack copy ends at %llu bytes", (unsigned long long)w->stack_size);
	stop(out, UNWIND_STACK_END, reason);
	return false;
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
 * The module whose CFI libdw reads (its .debug_frame, or its .eh_frame
 * without a search table) for the frame at lookup (the IP, or the call
 * before a return address), with its bias; NULL when the code there has
 * neither.
 */
static struct module *libdw_module_at(struct walk *w, uint64_t lookup, uint64_t *bias)
{
	const struct mapping *map = proc_table_find_code(w->u->procs, w->pid, lookup);
	if (!map)
		return NULL;
	struct module *m = module_of(w->u, map->dso);
	if (!m->debug_frame_path && (m->has_table || !m->has_eh_frame))
		return NULL;
	struct module_view *v = module_view_of(w, map, lookup);
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
			return resume_from_sigcontext(w, sp, out);
		}
		bool ip_exact = exact, signal_frame = at_sigreturn(w, ip);
		if (signal_frame) {
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
		struct module *cfi_module = libdw_module_at(w, ip_exact ? ip : ip - 1, &bias);
		struct frame_registers regs;
		if (cfi_module)
			cursor_registers(&cursor, &regs);
		w->failure = UNWIND_COMPLETE;
		w->outermost = false;
		w->record_failures = true;
		int ret = 0;
		if (signal_frame && cfi_module && !cfi_module->has_table) {
			/* the trampoline of a file libdw steps (a static program's): its frame holds the registers */
			w->record_failures = false;
			return resume_from_sigcontext(w, sp, out);
		}
		if (!cfi_module || cfi_module->has_table)
			ret = unw_step(&cursor);
		if (cfi_module && (!cfi_module->has_table ||
				   (w->failure == UNWIND_NO_UNWIND_INFO && !w->outermost))) {
			/* no search table, or no .eh_frame entry for this IP: libdw's CFI takes the step */
			w->failure = UNWIND_COMPLETE;
			enum cfi_step step = libdw_step(w, cfi_module, bias, ip, ip_exact, &regs);
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
	struct memo_index memo_key = { .pid = in->pid, .ip = w.regs[UNW_X86_64_RIP], .sp = w.stack_base,
				    .stack_bytes = w.stack_bytes, .stack_size = in->stack_size, .regs_mask = in->regs_mask };
	uint64_t generation = proc_table_generation(u->procs);
	if (unwind_memo_find(u->memo, &memo_key, generation, w.regs, w.stack, out))
		return 0;
	uint64_t sample_regs[UNW_REGISTER_COUNT];
	memcpy(sample_regs, w.regs, sizeof(sample_regs));
	unw_addr_space_t space = address_space_of(u, in->pid);
	if (!space) {
		push_frame(out, w.regs[UNW_X86_64_RIP], UNWIND_FRAME_EXACT, 0);
		stop(out, UNWIND_BAD_FRAME, "cannot create a libunwind address space");
		return 0;
	}
	w.restart_exact = true;
	w.log = unwind_memo_log(u->memo);
	w.regs_from_sample = true;
	unwinding++;
	while (walk_frames(&w, space, out))
		;
	unwinding--;
	unwind_memo_keep(u->memo, &memo_key, generation, sample_regs, out);
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
		[UNWIND_JOINED_CUT] = "joined_cut",
	};
	return (unsigned)failure < UNWIND_FAILURE_COUNT ? keys[failure] : "unknown";
}

