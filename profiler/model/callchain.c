/*
 * callchain.c: a sample's stack as frames.  The kernel's callchain becomes
 * kernel and user frames (the frame-pointer walk checked where it may have
 * left the code); a copied user stack is unwound with DWARF, joined to the
 * signal delivery it runs from, and continued along the callchain where the
 * unwinder stops; the frames that end a stack unnamed are counted.  Called
 * by the loader (profile.c) for each sample it keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/base/util.h"
#include "sigprof/model/collector.h"
#include "sigprof/model/decode.h"
#include "sigprof/model/profile.h"

#include "loader.h"

uint32_t *frame_buffer(struct loader *l, size_t n)
{
	GROW(l->frames, l->frames_cap, n + 1);
	return l->frames;
}

uint32_t user_frame(struct loader *l, uint32_t pid, uint64_t ip)
{
	struct profile *p = l->p;
	const struct mapping *map = proc_table_find_code(p->procs, pid, ip);
	uint64_t dso_addr;
	if (map && mapping_to_dso_addr(map, ip, &dso_addr))
		return frame_for_address(&p->stacks, map->dso, dso_addr);
	return frame_unknown(&p->stacks, ip, false);
}

uint32_t kernel_frame(struct loader *l, uint64_t ip)
{
	return frame_for_address(&l->p->stacks, l->kernel, ip);
}

/*
 * A stack's last frame names no function: no symbol covers it, or only a
 * name made up from .eh_frame (a stripped program's "stress-ng!fn@0x..."),
 * which says where the function is but not what it is.
 */
static bool frame_unnamed(const struct frame *f)
{
	return !f->sym || strstr(f->sym, EH_FRAME_NAME_MARK);
}

/*
 * A stack whose last frame names no function: counted (delta 1) or taken
 * back (-1), told apart when .eh_frame gave it a name.
 */
static void count_unnamed_end(struct unwind_counts *u, const struct frame *last, int64_t delta)
{
	if (!frame_unnamed(last))
		return;
	u->ends_in_unknown = (uint64_t)((int64_t)u->ends_in_unknown + delta);
	if (last->sym)
		u->ends_in_eh_frame_name = (uint64_t)((int64_t)u->ends_in_eh_frame_name + delta);
}

/* The current sample's stack ends at frame: counted, and remembered should its sample count on a lent stack. */
static void count_end(struct loader *l, uint32_t frame)
{
	count_unnamed_end(&l->p->unwind, &l->p->stacks.frames[frame], 1);
	l->counted_end = frame;
}

/* The frame stack ends in: its last before the [unwind: ...] that says why the walk stopped; UINT32_MAX: none. */
static uint32_t stack_end_frame(const struct stack_table *t, uint32_t stack)
{
	const struct stack *s = &t->stacks[stack];
	const uint32_t *frames = stack_frames(t, s);
	uint32_t n = s->nframes;
	if (n && frame_is_unwind_stop(&t->frames[frames[n - 1]]))
		n--;
	return n ? frames[n - 1] : UINT32_MAX;
}

void count_lent_end(struct loader *l, uint32_t lent)
{
	struct stack_table *t = &l->p->stacks;
	if (l->counted_end == UINT32_MAX || lent >= t->nstacks)
		return;
	uint32_t end = stack_end_frame(t, lent);
	if (end == UINT32_MAX)
		return;
	count_unnamed_end(&l->p->unwind, &t->frames[l->counted_end], -1);
	count_end(l, end);
}

void move_counted_ends(struct profile *p, uint32_t from, uint32_t to, uint64_t count)
{
	uint32_t from_end = stack_end_frame(&p->stacks, from), to_end = stack_end_frame(&p->stacks, to);
	if (from_end == UINT32_MAX || to_end == UINT32_MAX)
		return;
	count_unnamed_end(&p->unwind, &p->stacks.frames[from_end], -(int64_t)count);
	count_unnamed_end(&p->unwind, &p->stacks.frames[to_end], (int64_t)count);
}

/* The kernel's default kernel.perf_event_max_stack, for recordings whose events did not say theirs. */
#define KERNEL_MAX_STACK_DEFAULT 127

/*
 * Whether the kernel stopped the sample's callchain at its limit: it
 * stores at most attr.sample_max_stack entries, context markers aside
 * (record sets it to kernel.perf_event_max_stack; older recordings left it
 * 0, the sysctl's default, 127).  The stack may go on past the last entry.
 */
static bool chain_cut_at_limit(const struct sp_sample *s, uint32_t *limit_out)
{
	uint32_t limit = s->event->attr.sample_max_stack ? s->event->attr.sample_max_stack : KERNEL_MAX_STACK_DEFAULT;
	uint64_t entries = 0;
	for (uint64_t i = 0; i < s->nr_callchain; i++)
		entries += s->callchain[i] < (uint64_t)PERF_CONTEXT_MAX;
	if (limit_out)
		*limit_out = limit;
	return entries == limit; /* more: the limit was not the one assumed (an older recording's sysctl) */
}

/* The failure of a frame-pointer walk that ran to its last entry: none, or the kernel's limit cut it. */
static enum unwind_failure chain_end_failure(const struct sp_sample *s, char *reason, size_t reasonlen)
{
	uint32_t limit;
	if (!chain_cut_at_limit(s, &limit))
		return UNWIND_COMPLETE;
	snprintf(reason, reasonlen, "the kernel's frame-pointer walk stops at %u entries (kernel.perf_event_max_stack)",
		 limit);
	return UNWIND_TOO_DEEP;
}

/* Whether two user addresses of a process are in one named function. */
static bool same_function(struct loader *l, uint32_t pid, uint64_t a, uint64_t b)
{
	const struct frame *x = &l->p->stacks.frames[user_frame(l, pid, a)];
	const struct frame *y = &l->p->stacks.frames[user_frame(l, pid, b)];
	return x->sym && y->sym && x->addr == y->addr && strcmp(x->dso, y->dso) == 0;
}

/*
 * The kernel's frame-pointer walk of user code (perf_callchain_user) takes
 * whatever the saved frame pointer points at: in code built without frame
 * pointers it reads stack words, text or its own frame again, and hands
 * back "return addresses" that name nothing (an address in the stack, ASCII
 * bytes, a small integer) or the same address over and over up to its depth
 * limit.  Those are not frames.  The user part of a chain therefore ends,
 * with a frame that says why, at the first return address that no
 * executable mapping of the process covers, and at an unbroken run of one
 * return address that lasts to the end of the chain (a frame that points
 * at itself).  A real recursion repeats too, but either the chain goes on
 * past it, or the kernel's limit cut the chain inside it
 * (chain_cut_at_limit), and then the entry before the run is in the same
 * function as the repeated return address (its own call, or its leaf),
 * where a frame pointing at itself shows a stack word beside some other
 * code.  The first user entry is the sampled IP, which may be code without
 * a mapping (a JIT), and is kept as it is.
 */
static enum unwind_failure check_fp_return(struct loader *l, const struct sp_sample *s, uint64_t i, char *reason,
					   size_t reasonlen)
{
	uint64_t ip = s->callchain[i];
	if (!proc_table_find_code(l->p->procs, s->pid, ip - 1)) {
		snprintf(reason, reasonlen, "frame pointer chain left the code (a return address in no executable "
					    "mapping)");
		return UNWIND_NO_MAPPING;
	}
	if (s->callchain[i - 1] != ip)
		return UNWIND_COMPLETE;
	uint64_t end = i;
	while (end < s->nr_callchain && s->callchain[end] == ip)
		end++;
	if (end < s->nr_callchain)
		return UNWIND_COMPLETE; /* a recursion: the chain goes on past it */
	uint64_t start = i - 1;
	while (start > 0 && s->callchain[start - 1] == ip)
		start--;
	if (chain_cut_at_limit(s, NULL)) {
		if (start == 0 || s->callchain[start - 1] >= (uint64_t)PERF_CONTEXT_MAX)
			return UNWIND_COMPLETE; /* the leaf too: a recursion the kernel's limit cut */
		bool exact = start - 1 == 0 || s->callchain[start - 2] >= (uint64_t)PERF_CONTEXT_MAX;
		if (same_function(l, s->pid, s->callchain[start - 1] - !exact, ip - 1))
			return UNWIND_COMPLETE; /* a recursion the kernel's limit cut */
	}
	snprintf(reason, reasonlen, "frame pointer chain repeats a frame to its end");
	return UNWIND_BAD_FRAME;
}

/*
 * The callchain's entries after a context marker: the first is an exact
 * IP, the rest are return addresses, looked up one byte back so that a call
 * at the very end of a function is charged to that function.  The user
 * part is checked as check_fp_return() says; where it stops, an
 * [unwind: ...] frame ends the stack and the profile counts why.
 */
uint32_t chain_to_frames(struct loader *l, const struct sp_sample *s, bool kernel_only, uint32_t *frames)
{
	uint32_t n = 0;
	enum { CTX_NONE, CTX_KERNEL, CTX_USER } ctx = CTX_NONE;
	bool first = true, user = false;
	enum unwind_failure failure = UNWIND_COMPLETE;
	char reason[sizeof(l->unwound.reason)];
	for (uint64_t i = 0; i < s->nr_callchain && failure == UNWIND_COMPLETE; i++) {
		uint64_t ip = s->callchain[i];
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ? CTX_KERNEL
			      : ip == (uint64_t)PERF_CONTEXT_USER ? CTX_USER
								  : CTX_NONE;
			first = true;
			continue;
		}
		if (ctx == CTX_NONE || (kernel_only && ctx != CTX_KERNEL))
			continue;
		if (ctx == CTX_USER) {
			user = true;
			if (!first && (failure = check_fp_return(l, s, i, reason, sizeof(reason))) != UNWIND_COMPLETE)
				break;
		}
		uint64_t lookup = first ? ip : ip - 1;
		first = false;
		frames[n++] = ctx == CTX_KERNEL ? kernel_frame(l, lookup) : user_frame(l, s->pid, lookup);
	}
	if (!user)
		return n;
	if (failure == UNWIND_COMPLETE)
		failure = chain_end_failure(s, reason, sizeof(reason));
	struct unwind_counts *u = &l->p->unwind;
	u->samples++;
	u->fp_chains++;
	if (n)
		count_end(l, frames[n - 1]);
	if (failure == UNWIND_COMPLETE) {
		u->complete++;
		return n;
	}
	u->failures[failure]++;
	char name[sizeof(reason) + 16];
	snprintf(name, sizeof(name), "[unwind: %s]", reason);
	frames[n++] = frame_synthetic(&l->p->stacks, name, "[unwind]");
	return n;
}

bool sample_in_kernel(const struct perf_event_header *rec)
{
	return (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

static uint32_t user_frame_of(struct loader *l, uint32_t pid, const struct unwind_frame *f)
{
	if (f->kind == UNWIND_FRAME_SIGNAL) {
		char name[48] = "[signal]", signal[16];
		if (f->signal) /* 0: the handler took no siginfo, so the frame does not say which signal */
			snprintf(name, sizeof(name), "[signal %s]", signal_name(f->signal, signal, sizeof(signal)));
		return frame_synthetic(&l->p->stacks, name, "[signal]");
	}
	return user_frame(l, pid, f->kind == UNWIND_FRAME_RETURN ? f->ip - 1 : f->ip);
}

/* The analyzer that knows which delivery started a running handler (collector.h, delivery_stack), or NULL. */
static const struct collector_info *delivery_stacks_of(const struct profile *p)
{
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].state && p->collectors[c].impl->analyzer->delivery_stack)
			return &p->collectors[c];
	return NULL;
}

/*
 * Running handlers whose signal frame the sample's stack does not hold yet:
 * 1 when the sample is in the kernel between a signal's signal_deliver and
 * the frame the kernel then builds (get_signal, on the way out of a system
 * call), else 0.  Then the thread has one running handler more than the
 * stack has signal frames, and the innermost one's delivery interrupted
 * the very frames the sample's user stack starts with.  stress-ng --timer,
 * whose SIGALRM handler makes a system call while timer signals are
 * pending, had 4 667 such samples in one run: their signal frames were
 * named and joined as the innermost handler's, which they are not.
 */
static uint32_t handlers_not_on_stack(struct loader *l, const struct sp_sample *s, const struct unwind_result *r,
				      bool in_kernel)
{
	struct profile *p = l->p;
	const struct collector_info *c = delivery_stacks_of(p);
	if (!in_kernel || !r->nframes || !c || !c->impl->analyzer->running_handlers)
		return 0;
	uint32_t signal_frames = 0;
	for (size_t i = 0; i < r->nframes; i++)
		signal_frames += r->frames[i].kind == UNWIND_FRAME_SIGNAL && !r->frames[i].returned;
	int sigs[UNWIND_MAX_FRAMES], sig;
	if (c->impl->analyzer->running_handlers(c->state, s->pid, s->tid, sigs, UNWIND_MAX_FRAMES) != signal_frames + 1)
		return 0;
	uint32_t id = c->impl->analyzer->delivery_stack(c->state, s->pid, s->tid, 0, false, &sig);
	if (id == COLLECTOR_NO_STACK || id >= p->stacks.nstacks)
		return 0;
	const struct stack *delivery = &p->stacks.stacks[id];
	const uint32_t *dframes = stack_frames(&p->stacks, delivery);
	uint32_t d = stack_first_user_frame(&p->stacks, delivery);
	/* the frames the sample has before its first signal frame are those the delivery interrupted */
	for (size_t i = 0; i < r->nframes && r->frames[i].kind != UNWIND_FRAME_SIGNAL; i++, d++)
		if (d >= delivery->nframes || dframes[d] != user_frame_of(l, s->pid, &r->frames[i]))
			return 0;
	return 1;
}

/*
 * Signal frames the unwinder could not name (the handler took no siginfo)
 * are named from the handlers an analyzer sees running on the
 * sample's thread: the k-th signal frame from the leaf whose handler has
 * not returned (a frame whose thread is in rt_sigreturn has: the signal collector
 * closed it at the syscall's entry) is the k-th innermost running handler.
 * Only when the two agree: as many running handlers as such frames on a
 * stack unwound whole (at least as many on one cut short), and each frame
 * a siginfo named is its handler's signal.  A delivery or sigreturn the
 * recording missed, or a handler left by longjmp, leaves the frames as
 * they are.
 */
static void name_signal_frames(struct profile *p, const struct sp_sample *s, struct unwind_result *r, uint32_t skip)
{
	uint32_t signal_frames = 0, unnamed = 0;
	for (size_t i = 0; i < r->nframes; i++)
		if (r->frames[i].kind == UNWIND_FRAME_SIGNAL && !r->frames[i].returned) {
			signal_frames++;
			unnamed += r->frames[i].signal == 0;
		}
	if (!unnamed)
		return;
	const struct collector_info *handlers = NULL;
	for (int c = 0; c < p->ncollectors && !handlers; c++)
		if (p->collectors[c].state && p->collectors[c].impl->analyzer->running_handlers)
			handlers = &p->collectors[c];
	if (!handlers)
		return;
	int sigs[UNWIND_MAX_FRAMES];
	uint32_t running = handlers->impl->analyzer->running_handlers(handlers->state, s->pid, s->tid, sigs,
									UNWIND_MAX_FRAMES);
	if (running < skip)
		return;
	running -= skip; /* the innermost handlers, whose frames are not on the stack yet */
	if (r->failure == UNWIND_COMPLETE ? running != signal_frames : running < signal_frames)
		return;
	uint32_t k = skip;
	for (size_t i = 0; i < r->nframes; i++) {
		if (r->frames[i].kind != UNWIND_FRAME_SIGNAL || r->frames[i].returned)
			continue;
		if (r->frames[i].signal && r->frames[i].signal != sigs[k])
			return;
		k++;
	}
	k = skip;
	for (size_t i = 0; i < r->nframes; i++) {
		if (r->frames[i].kind != UNWIND_FRAME_SIGNAL || r->frames[i].returned)
			continue;
		if (!r->frames[i].signal)
			r->frames[i].signal = sigs[k];
		k++;
	}
}

/*
 * A DWARF sample that also carries the kernel's frame-pointer walk of user
 * code (the cpu and signal collectors' default): where the copy ran out,
 * at a frame whose return address the walk also found, the stack goes on
 * along the walk from there, checked as check_fp_return() says.  Code
 * without frame pointers near the leaf (libc) is unwound from the copy;
 * deep stacks of code with frame pointers go on past it.  When the walk
 * does not hold that address (the frames around it have no frame pointers)
 * there is nothing to go on with and the stack ends where the copy did.
 * Returns whether the walk took over; *failure and reason say how it ended.
 */
static bool continue_along_chain(struct loader *l, const struct sp_sample *s, const struct unwind_frame *last,
				 uint32_t *frames, uint32_t *n, enum unwind_failure *failure, char *reason,
				 size_t reasonlen)
{
	uint64_t begin = s->nr_callchain;
	for (uint64_t i = 0; i < s->nr_callchain; i++)
		if (s->callchain[i] == (uint64_t)PERF_CONTEXT_USER)
			begin = i + 1;
	if (last->kind == UNWIND_FRAME_SIGNAL || begin >= s->nr_callchain)
		return false;
	uint64_t j = begin + (last->kind != UNWIND_FRAME_EXACT); /* only the chain's first entry is exact */
	while (j < s->nr_callchain && s->callchain[j] != last->ip)
		j++;
	if (j >= s->nr_callchain || (last->kind == UNWIND_FRAME_EXACT && j != begin))
		return false;
	*failure = UNWIND_COMPLETE;
	for (uint64_t i = j + 1; i < s->nr_callchain; i++) {
		if ((*failure = check_fp_return(l, s, i, reason, reasonlen)) != UNWIND_COMPLETE)
			return true;
		frames[(*n)++] = user_frame(l, s->pid, s->callchain[i] - 1);
	}
	*failure = chain_end_failure(s, reason, reasonlen);
	return true;
}

/*
 * Handler stacks that stopped at their signal frame (an alternate signal
 * stack) and found no delivery to go on with: say what would have joined
 * them.  Without the signal collector nothing recorded the deliveries
 * (`record -e cpu` alone); with it, the kernel did not sample them.
 */
void note_unjoined_handlers(struct profile *p)
{
	uint64_t n = p->unwind.failures[UNWIND_SIGNAL_STACK];
	if (!n)
		return;
	char text[320];
	const char *stacks_stop = n == 1 ? "handler stack stops" : "handler stacks stop";
	if (!delivery_stacks_of(p))
		snprintf(text, sizeof(text),
			 "%llu %s at the signal frame (the handler ran on an alternate signal stack): record the "
			 "signal collector too (-e cpu,signal), whose deliveries carry the interrupted code's stack "
			 "a handler's stack is joined to",
			 (unsigned long long)n, stacks_stop);
	else
		snprintf(text, sizeof(text),
			 "%llu %s at the signal frame (the handler ran on an alternate signal stack) with no recorded "
			 "delivery to join: the kernel did not sample those deliveries",
			 (unsigned long long)n, stacks_stop);
	profile_add_note(p, text);
}

/*
 * A handler that ran on an alternate signal stack (sigaltstack): the copy
 * holds the handler's frames down to its signal frame and the interrupted
 * IP, but the interrupted code's own frames are on the thread's stack,
 * which the sample did not copy.  Or a handler on the thread's own stack
 * whose copy ran out past its signal frame (the frame holds the FPU state:
 * 2.5 KiB with AVX-512).  The signal_deliver sample that started the
 * handler copied the interrupted code's stack (the kernel fires it with the
 * interrupted registers, before it builds the signal frame), so past the
 * signal frame the stack is that delivery's user frames, found
 * through the delivery_stack hook: the k-th innermost running handler for
 * the k-th signal frame from the leaf, as name_signal_frames() counts them.
 * Only when they agree: the delivery's signal is the frame's (when the
 * frame names one) and the delivery's leaf is the interrupted IP's
 * function.  The signal frame then reads "[signal SIGRTMIN] (stack from
 * delivery)": the frames past it are the delivery's, not this sample's.
 * frames[first_user] is r->frames[0]; returns the new count, or n as it
 * was when nothing is joined.
 */
static uint32_t join_delivery(struct loader *l, const struct sp_sample *s, const struct unwind_result *r,
			      uint32_t first_user, uint32_t n, uint32_t skip, bool *joined_whole)
{
	struct profile *p = l->p;
	size_t j = r->nframes;
	while (j > 0 && r->frames[j - 1].kind != UNWIND_FRAME_SIGNAL)
		j--;
	if (j == 0)
		return n;
	j--; /* the nearest signal frame to the root; the interrupted code after it, as far as the copy went */
	bool returned = r->frames[j].returned;
	uint32_t k = returned ? 0 : skip; /* a frame in its rt_sigreturn is the closed handler's, whatever came since */
	for (size_t i = 0; i < j; i++)
		k += r->frames[i].kind == UNWIND_FRAME_SIGNAL && !r->frames[i].returned;
	const struct collector_info *c = delivery_stacks_of(p);
	int sig = 0;
	if (returned && k)
		return n; /* only the innermost handler can be in its rt_sigreturn */
	uint32_t id = c ? c->impl->analyzer->delivery_stack(c->state, s->pid, s->tid, k, returned, &sig)
			: COLLECTOR_NO_STACK;
	if (id == COLLECTOR_NO_STACK || id >= p->stacks.nstacks || (r->frames[j].signal && r->frames[j].signal != sig))
		return n;
	const struct stack *delivery = &p->stacks.stacks[id];
	const uint32_t *dframes = stack_frames(&p->stacks, delivery);
	uint32_t d = stack_first_user_frame(&p->stacks, delivery);
	if (d == delivery->nframes)
		return n;
	if (j + 1 < r->nframes && dframes[d] != user_frame_of(l, s->pid, &r->frames[j + 1]))
		return n;
	uint32_t m = delivery->nframes - d, at = first_user + (uint32_t)j;
	uint32_t *frames = frame_buffer(l, at + 1 + m);
	char name[64], signal[16];
	snprintf(name, sizeof(name), "[signal %s] (stack from delivery)", signal_name(sig, signal, sizeof(signal)));
	frames[at] = frame_synthetic(&p->stacks, name, "[signal]");
	memcpy(frames + at + 1, dframes + d, m * sizeof(*frames));
	const struct frame *last = &p->stacks.frames[frames[at + m]];
	*joined_whole = !frame_is_unwind_stop(last);
	return at + 1 + m;
}

/*
 * A DWARF sample's frames: the kernel's callchain for the kernel part
 * (its user part is excluded at record time), then the user stack unwound
 * from the registers and stack copy, then, when the unwinding stopped
 * early, a frame that says why.
 */
uint32_t dwarf_frames(struct loader *l, const struct perf_event_header *rec, const struct sp_sample *s,
			     uint32_t *frames)
{
	struct profile *p = l->p;
	uint32_t n = chain_to_frames(l, s, true, frames);
	if (n == 0 && sample_in_kernel(rec) && !s->event->attr.exclude_callchain_kernel)
		frames[n++] = kernel_frame(l, s->ip); /* no chain, but the sampled kernel address */
	if (!l->unwinder)
		l->unwinder = unwinder_new(p->procs);
	struct unwind_input in = { .pid = s->pid, .regs_abi = s->regs_abi, .regs = s->regs, .regs_mask = s->event->attr.sample_regs_user,
				   .nr_regs = s->nr_regs, .stack = s->stack, .stack_size = s->stack_size,
				   .stack_dyn_size = s->stack_dyn_size };
	struct unwind_result *r = &l->unwound;
	unwind_sample(l->unwinder, &in, r);
	uint32_t skip = handlers_not_on_stack(l, s, r, n > 0);
	name_signal_frames(p, s, r, skip);
	uint32_t first_user = n;
	for (size_t i = 0; i < r->nframes; i++)
		frames[n++] = user_frame_of(l, s->pid, &r->frames[i]);
	bool joined_whole = false;
	uint32_t joined = r->failure == UNWIND_SIGNAL_STACK || r->failure == UNWIND_STACK_END
				  ? join_delivery(l, s, r, first_user, n, skip, &joined_whole)
				  : n;
	uint32_t copied = n;
	if (joined == copied && r->failure == UNWIND_STACK_END && r->nframes &&
	    continue_along_chain(l, s, &r->frames[r->nframes - 1], frames, &n, &r->failure, r->reason,
				 sizeof(r->reason)) && n > copied)
		p->unwind.spliced++;
	frames = l->frames;
	p->unwind.samples++;
	if (joined != copied) {
		n = joined;
		p->unwind.joined++;
		count_end(l, frames[n - 1]);
		if (joined_whole)
			p->unwind.complete++;
		else
			p->unwind.failures[UNWIND_JOINED_CUT]++;
		return n;
	}
	if (n)
		count_end(l, frames[n - 1]);
	l->counted_unwind = (int)r->failure;
	if (r->failure == UNWIND_COMPLETE) {
		p->unwind.complete++;
	} else {
		p->unwind.failures[r->failure]++;
		char name[sizeof(r->reason) + 16];
		snprintf(name, sizeof(name), "[unwind: %s]", r->reason);
		frames[n++] = frame_synthetic(&p->stacks, name, "[unwind]");
	}
	return n;
}
