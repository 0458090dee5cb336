/*
 * profile.c: one streaming pass over a data file into a struct profile
 * (profile.h).  The container reader (datafile.c) yields records; this file
 * dispatches them: sigprof's own records describe the run, task records
 * feed the process table, samples are symbolized and counted.
 *
 * Kernel records reach the file per CPU buffer, not in time order.  They
 * are queued and replayed in time order one ROUND behind the drain loop
 * (docs/data-format.md, ROUND), so the queue holds about two drain passes
 * of records, never the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <lz4.h>

#include "sigprof/collector.h"
#include "sigprof/decode.h"
#include "sigprof/profile.h"
#include "sigprof/util.h"

struct queued_record {
	uint64_t time;
	uint64_t seq;    /* arrival order, to keep equal times stable */
	size_t offset;   /* in the queue's arena */
};

/* Kernel records waiting to be processed in time order. */
struct order_queue {
	unsigned char *arena;
	size_t used, cap;
	struct queued_record *items;
	size_t count, items_cap;
	uint64_t seq;
	uint64_t newest;            /* the newest time queued so far */
	uint64_t flushable;         /* the newest time at the previous ROUND */
};

/* Past this, the queue is processed whatever the ROUNDs say: memory stays bounded. */
#define ORDER_QUEUE_MAX_BYTES (256u << 20)

struct loader {
	struct profile *p;
	struct order_queue queue;
	LZ4_streamDecode_t kallsyms_decoder;
	char *kallsyms_text;      /* the recording's kallsyms, decompressed so far */
	size_t kallsyms_size, kallsyms_used;
	uint32_t kallsyms_next;   /* the sequence number expected next */
	bool skip_kallsyms;       /* the user named a kallsyms file, or the copy is settled: no more records */
	enum { COPY_NONE, COPY_LOADING, COPY_INSTALLED, COPY_BROKEN } kallsyms_copy;
	bool kallsyms_late; /* a copy came after the kernel records (a file read without its footer): not used */
	const char *kallsyms_broken;  /* why the copy is unusable */
	bool kernel_symbols_settled;  /* settle_kernel_symbols() ran */
	char boot_id[64];             /* the recording's (META boot_id), "" when it has none */
	const char *kernel_symbols_why; /* why /proc/kallsyms is not used, when it is not */
	bool kallsyms_named;          /* --kallsyms FILE: it wins over copy and host */
	int *event_collector; /* event index -> collector index, -1 not yet known */
	size_t event_collector_cap;
	uint32_t *frames;
	size_t frames_cap;
	struct dso *kernel;
	struct unwinder *unwinder;    /* made at the first sample that carries user registers */
	struct unwind_result unwound; /* the current sample's, kept here for its size */
	const struct profile_options *opts;
};

static void settle_kernel_symbols(struct loader *l);

static int collector_index(struct profile *p, const char *name)
{
	for (int i = 0; i < p->ncollectors; i++)
		if (strcmp(p->collectors[i].name, name) == 0)
			return i;
	if (p->ncollectors == PROFILE_MAX_COLLECTORS)
		return PROFILE_MAX_COLLECTORS - 1;
	struct collector_info *c = &p->collectors[p->ncollectors];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->ok = true;
	for (size_t k = 0; k < p->nknown_collectors && !c->impl; k++)
		if (strcmp(p->known_collectors[k]->name, name) == 0)
			c->impl = p->known_collectors[k];
	if (c->impl && c->impl->analyzer)
		c->state = c->impl->analyzer->create(p, p->ncollectors);
	return p->ncollectors++;
}

int profile_collector(const struct profile *p, const char *name)
{
	for (int i = 0; i < p->ncollectors; i++)
		if (strcmp(p->collectors[i].name, name) == 0)
			return i;
	return -1;
}

/* A recording could repeat a note a million times: the report keeps the first ones. */
#define PROFILE_MAX_NOTES 64

static void add_note(struct profile *p, const char *text)
{
	if (p->nnotes >= PROFILE_MAX_NOTES)
		return;
	p->notes = xrealloc(p->notes, (size_t)(p->nnotes + 1) * sizeof(char *));
	p->notes[p->nnotes++] = xstrdup(text);
}

/*
 * One note naming every file a frame needed that could not be read (it is
 * not on this machine, or not under --symfs), so a frame named FILE+0xOFF
 * is never a silent loss.
 */
static void note_missing_files(struct profile *p)
{
	struct strbuf note = { 0 };
	size_t missing = 0;
	for (size_t i = 0; i < proc_table_dso_count(p->procs); i++) {
		struct dso *dso = proc_table_dso(p->procs, i);
		if (!dso_is_file(dso) || strncmp(dso->name, "/memfd:", 7) == 0 || !dso->load_tried || !dso->load_error)
			continue;
		sb_addf(&note, "%s%s (", missing++ ? ", " : "", dso->name);
		if (dso->load_error == -ESTALE)
			sb_addf(&note, "another build than the recording's: build-id %s here, %s recorded, and no debug "
				       "file of that build found", dso->file_build_id, dso->build_id);
		else
			sb_addf(&note, "%s", dso->load_error == -ENOEXEC ? "not an ELF file it can read"
									: strerror(-dso->load_error));
		sb_add(&note, ")", 1);
	}
	struct strbuf stood_in = { 0 };
	size_t changed = 0;
	for (size_t i = 0; i < proc_table_dso_count(p->procs); i++) {
		struct dso *dso = proc_table_dso(p->procs, i);
		if (dso->load_tried && !dso->load_error && dso->file_build_id[0])
			sb_addf(&stood_in, "%s%s (build-id %s here, %s recorded)", changed++ ? ", " : "", dso->name,
				dso->file_build_id, dso->build_id);
	}
	if (changed) {
		struct strbuf text = { 0 };
		sb_addf(&text, "%zu file%s the stacks need %s another build than the recording's: %s; %s symbols come "
			       "from the recorded build's debug file, and no stack is unwound through %s code",
			changed, changed == 1 ? "" : "s", changed == 1 ? "is" : "are", stood_in.buf,
			changed == 1 ? "its" : "their", changed == 1 ? "its" : "their");
		add_note(p, text.buf);
		sb_free(&text);
	}
	sb_free(&stood_in);
	if (missing) {
		struct strbuf text = { 0 };
		sb_addf(&text, "%zu file%s the stacks need could not be read%s, their frames stay FILE+0xOFFSET: %s; "
			       "'sigprof archive' packs a recording's files, 'report --symfs' reads them",
			missing, missing == 1 ? "" : "s", symbolize_symfs() ? " under --symfs" : "", note.buf);
		add_note(p, text.buf);
		sb_free(&text);
	}
	sb_free(&note);
}

static void free_argv(struct profile *p)
{
	for (int i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	p->argv = NULL;
	p->argc = 0;
}

static void load_meta(struct loader *l, const struct perf_event_header *rec)
{
	struct profile *p = l->p;
	const char *s[1024];
	uint32_t n = sp_meta_strings(rec, s, ARRAY_SIZE(s));
	if (n > ARRAY_SIZE(s))
		n = ARRAY_SIZE(s);
	if (n < 2)
		return;
	const char *key = s[0], *v = s[1];
	if (strcmp(key, "argv") == 0) {
		free_argv(p); /* a second argv (a corrupt file) replaces the first */
		p->argv = xcalloc(n, sizeof(char *));
		for (uint32_t i = 1; i < n; i++)
			p->argv[i - 1] = xstrdup(s[i]);
		p->argc = (int)n - 1;
	} else if (strcmp(key, "hostname") == 0) {
		snprintf(p->hostname, sizeof(p->hostname), "%s", v);
	} else if (strcmp(key, "kernel") == 0) {
		snprintf(p->kernel, sizeof(p->kernel), "%s", v);
	} else if (strcmp(key, "arch") == 0) {
		snprintf(p->arch, sizeof(p->arch), "%s", v);
	} else if (strcmp(key, "sigprof_version") == 0) {
		snprintf(p->version, sizeof(p->version), "%s", v);
	} else if (strcmp(key, "call_graph") == 0) {
		snprintf(p->call_graph, sizeof(p->call_graph), "%s", v);
	} else if (strcmp(key, "ncpus") == 0) {
		p->ncpus = atoi(v);
	} else if (strcmp(key, "start_realtime_ns") == 0) {
		p->start_realtime_ns = strtoull(v, NULL, 10);
	} else if (strcmp(key, "start_monotonic_ns") == 0) {
		p->start_monotonic_ns = strtoull(v, NULL, 10);
	} else if (strcmp(key, "rusage") == 0) {
		/* "NAME=VALUE" each: the workload's time.* figures (docs/data-format.md) */
		for (uint32_t i = 1; i < n && p->ntime_figures < PROFILE_MAX_TIME_FIGURES; i++) {
			const char *eq = strchr(s[i], '=');
			char *end;
			if (!eq || eq == s[i] || (size_t)(eq - s[i]) >= sizeof(p->time_figures[0].name))
				continue;
			double value = strtod(eq + 1, &end);
			if (end == eq + 1 || *end)
				continue;
			snprintf(p->time_figures[p->ntime_figures].name, sizeof(p->time_figures[0].name), "%.*s",
				 (int)(eq - s[i]), s[i]);
			p->time_figures[p->ntime_figures++].value = value;
		}
	} else if (strcmp(key, "target") == 0) {
		snprintf(p->target, sizeof(p->target), "%s", v);
	} else if (strcmp(key, "note") == 0) {
		add_note(p, v);
	} else if (strcmp(key, "switch_output") == 0 && n >= 3) {
		p->piece = (unsigned)strtoul(v, NULL, 10);
		snprintf(p->switch_output, sizeof(p->switch_output), "%s", s[2]);
	} else if (strcmp(key, "boot_id") == 0) {
		snprintf(l->boot_id, sizeof(l->boot_id), "%s", v);
	} else if (strcmp(key, "collector_status") == 0 && n >= 4) {
		struct collector_info *c = &p->collectors[collector_index(p, v)];
		c->ok = strcmp(s[2], "ok") == 0;
		snprintf(c->reason, sizeof(c->reason), "%s", s[3]);
	}
}

static int load_event(struct loader *l, const struct perf_event_header *rec)
{
	struct profile *p = l->p;
	if (event_set_add(&p->events, rec) < 0)
		return -EINVAL;
	const struct sp_event *ev = &p->events.events[p->events.count - 1];
	struct collector_info *c = &p->collectors[collector_index(p, ev->collector)];
	if (!c->event[0])
		snprintf(c->event, sizeof(c->event), "%s", ev->name);
	GROW(l->event_collector, l->event_collector_cap, p->events.count);
	l->event_collector[p->events.count - 1] = (int)(c - p->collectors);
	return 0;
}

static void load_totals(struct profile *p, const struct perf_event_header *rec)
{
	const struct sp_totals_record *t = (const void *)rec;
	if (rec->size < sizeof(*t) || t->event_index >= p->events.count)
		return;
	struct sp_event *ev = &p->events.events[t->event_index];
	ev->has_totals = true;
	ev->total_value = t->value;
	ev->time_enabled = t->time_enabled;
	ev->time_running = t->time_running;
}

static uint32_t *frame_buffer(struct loader *l, size_t n)
{
	GROW(l->frames, l->frames_cap, n + 1);
	return l->frames;
}

static uint32_t user_frame(struct loader *l, uint32_t pid, uint64_t ip)
{
	struct profile *p = l->p;
	const struct mapping *map = proc_table_find_code(p->procs, pid, ip);
	uint64_t dso_addr;
	if (map && mapping_to_dso_addr(map, ip, &dso_addr))
		return frame_for_address(&p->stacks, map->dso, dso_addr);
	return frame_unknown(&p->stacks, ip, false);
}

static uint32_t kernel_frame(struct loader *l, uint64_t ip)
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

/* A stack whose last frame names no function: counted, and told apart when .eh_frame gave it a name. */
static void count_unnamed_end(struct unwind_counts *u, const struct frame *last)
{
	if (!frame_unnamed(last))
		return;
	u->ends_in_unknown++;
	u->ends_in_eh_frame_name += last->sym != NULL;
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
static uint32_t chain_to_frames(struct loader *l, const struct sp_sample *s, bool kernel_only, uint32_t *frames)
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
		count_unnamed_end(u, &l->p->stacks.frames[frames[n - 1]]);
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

static bool sample_in_kernel(const struct perf_event_header *rec)
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
static void name_signal_frames(struct profile *p, const struct sp_sample *s, struct unwind_result *r)
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
	if (r->failure == UNWIND_COMPLETE ? running != signal_frames : running < signal_frames)
		return;
	uint32_t k = 0;
	for (size_t i = 0; i < r->nframes; i++) {
		if (r->frames[i].kind != UNWIND_FRAME_SIGNAL || r->frames[i].returned)
			continue;
		if (r->frames[i].signal && r->frames[i].signal != sigs[k])
			return;
		k++;
	}
	k = 0;
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

/* The analyzer that knows which delivery started a running handler (collector.h, delivery_stack), or NULL. */
static const struct collector_info *delivery_stacks_of(const struct profile *p)
{
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].state && p->collectors[c].impl->analyzer->delivery_stack)
			return &p->collectors[c];
	return NULL;
}

/*
 * Handler stacks that stopped at their signal frame (an alternate signal
 * stack) and found no delivery to go on with: say what would have joined
 * them.  Without the signal collector nothing recorded the deliveries
 * (`record -e cpu` alone); with it, the kernel did not sample them.
 */
static void note_unjoined_handlers(struct profile *p)
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
	add_note(p, text);
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
			      uint32_t first_user, uint32_t n, bool *joined_whole)
{
	struct profile *p = l->p;
	size_t j = r->nframes;
	while (j > 0 && r->frames[j - 1].kind != UNWIND_FRAME_SIGNAL)
		j--;
	if (j == 0)
		return n;
	j--; /* the nearest signal frame to the root; the interrupted code after it, as far as the copy went */
	uint32_t k = 0;
	for (size_t i = 0; i < j; i++)
		k += r->frames[i].kind == UNWIND_FRAME_SIGNAL && !r->frames[i].returned;
	const struct collector_info *c = delivery_stacks_of(p);
	int sig = 0;
	bool returned = r->frames[j].returned;
	if (returned && k)
		return n; /* only the innermost handler can be in its rt_sigreturn */
	uint32_t id = c ? c->impl->analyzer->delivery_stack(c->state, s->pid, s->tid, k, returned, &sig)
			: COLLECTOR_NO_STACK;
	if (id == COLLECTOR_NO_STACK || id >= p->stacks.nstacks || (r->frames[j].signal && r->frames[j].signal != sig))
		return n;
	const struct stack *delivery = &p->stacks.stacks[id];
	const uint32_t *dframes = stack_frames(&p->stacks, delivery);
	uint32_t d = 0;
	while (d < delivery->nframes && p->stacks.frames[dframes[d]].kernel)
		d++;
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
	*joined_whole = !(last->synthetic && strcmp(last->dso, "[unwind]") == 0);
	return at + 1 + m;
}

/*
 * A DWARF sample's frames: the kernel's callchain for the kernel part
 * (its user part is excluded at record time), then the user stack unwound
 * from the registers and stack copy, then, when the unwinding stopped
 * early, a frame that says why.
 */
static uint32_t dwarf_frames(struct loader *l, const struct perf_event_header *rec, const struct sp_sample *s,
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
	name_signal_frames(p, s, r);
	uint32_t first_user = n;
	for (size_t i = 0; i < r->nframes; i++)
		frames[n++] = user_frame_of(l, s->pid, &r->frames[i]);
	bool joined_whole = false;
	uint32_t joined = r->failure == UNWIND_SIGNAL_STACK || r->failure == UNWIND_STACK_END
				  ? join_delivery(l, s, r, first_user, n, &joined_whole)
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
		count_unnamed_end(&p->unwind, &p->stacks.frames[frames[n - 1]]);
		if (joined_whole)
			p->unwind.complete++;
		else
			p->unwind.failures[UNWIND_JOINED_CUT]++;
		return n;
	}
	if (n)
		count_unnamed_end(&p->unwind, &p->stacks.frames[frames[n - 1]]);
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

/*
 * Whether a record of task pid/tid at time passes --pid, --tid, --comm and
 * --time (filter.h).  Time 0 is a record sigprof wrote at attach time,
 * before the first event: it describes a task, it is no event in a window.
 */
static bool task_and_time_pass(struct profile *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	if (!p->filter)
		return true;
	if (time && p->window_pending) {
		/* from a pipe: the first timed record starts the recording's clock (set_filter) */
		p->window_pending = false;
		p->span_first = time;
		filter_window(p->filter, time, UINT64_MAX, &p->window_start, &p->window_end);
	}
	if (time && (time < p->window_start || time >= p->window_end))
		return false;
	if (!p->filter->npids && !p->filter->ntids && !p->filter->ncomms)
		return true;
	return filter_task(p->filter, pid, tid, proc_table_comm_of(p->procs, pid),
			   proc_table_thread_comm_of(p->procs, pid, tid));
}

static void load_sample(struct loader *l, const struct perf_event_header *rec)
{
	struct profile *p = l->p;
	struct sp_sample s;
	p->samples++;
	int err = sample_decode(&p->events, rec, &s);
	if (err == -ENOENT) {
		p->unknown_samples++;
		return;
	}
	if (err) {
		p->bad_samples++;
		return;
	}
	s.event->samples++;
	if (!task_and_time_pass(p, s.pid, s.tid, s.time)) {
		p->filtered_samples++;
		return;
	}
	int ci = l->event_collector[s.event->index];
	struct collector_info *c = &p->collectors[ci];
	const struct collector_analyzer *an = c->impl ? c->impl->analyzer : NULL;
	int path = an && an->path_of ? an->path_of(c->state, p, &s) : -1;
	if (path == PATH_NOT_WORKLOAD)
		return;
	bool stack_only = path >= 0 && (path & PATH_STACK_ONLY);
	path &= ~PATH_STACK_ONLY;
	if (s.time) {
		if (!p->first_time || s.time < p->first_time)
			p->first_time = s.time;
		if (s.time > p->last_time)
			p->last_time = s.time;
	}
	bool dwarf = s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE && s.nr_regs;
	uint32_t *frames = frame_buffer(l, s.nr_callchain + 2 + (dwarf ? UNWIND_MAX_FRAMES : 0));
	uint32_t n = dwarf ? dwarf_frames(l, rec, &s, frames) : chain_to_frames(l, &s, false, frames);
	frames = l->frames; /* a joined stack may have grown the buffer */
	if (n == 0)
		frames[n++] = sample_in_kernel(rec) ? kernel_frame(l, s.ip) : user_frame(l, s.pid, s.ip);
	/* a stack lent to another sample is that sample's: the filters judged it already */
	if (!stack_only && p->filter && p->filter->ndsos && !filter_dso(p->filter, p->stacks.frames[frames[0]].dso)) {
		p->filtered_samples++;
		return;
	}
	uint64_t period = s.period ? s.period : 1;
	uint32_t id = stack_add_on_path(&p->stacks, (uint32_t)ci, frames, n, 0, 0, path);
	if (an && an->sample)
		an->sample(c->state, p, &s, id);
	if (stack_only) {
		p->stack_only_samples++;
		return;
	}
	if (an && an->counted_stack) {
		uint32_t counted = an->counted_stack(c->state, p, id);
		if (counted < p->stacks.nstacks && p->stacks.stacks[counted].collector == (uint32_t)ci &&
		    p->stacks.stacks[counted].path == p->stacks.stacks[id].path)
			id = counted;
	}
	p->stacks.stacks[id].count++;
	p->stacks.stacks[id].weight += period;
	c->samples++;
	s.event->collector_samples++;
	c->weight += period;
	c->path_samples[p->stacks.stacks[id].path]++;
	if (p->weights) {
		struct weight_key key = { .collector = (uint32_t)ci, .stack = id, .pid = s.pid, .tid = s.tid,
					  .comm = proc_table_thread_comm_of(p->procs, s.pid, s.tid) };
		weight_table_add(p->weights, &key, WEIGHT_SAMPLES, 1);
		weight_table_add(p->weights, &key, WEIGHT_PERIOD, period);
	}
	if (l->opts && l->opts->on_sample)
		l->opts->on_sample(l->opts->ctx, p, &s, ci, id);
}

static const char *record_string(const struct perf_event_header *rec, size_t offset, char *buf, size_t buflen)
{
	size_t avail = rec->size > offset ? rec->size - offset : 0;
	size_t len = strnlen((const char *)rec + offset, avail);
	if (len >= buflen)
		len = buflen - 1;
	memcpy(buf, (const char *)rec + offset, len);
	buf[len] = '\0';
	return buf;
}

static void load_task_record(struct loader *l, const struct perf_event_header *rec)
{
	struct proc_table *pt = l->p->procs;
	const uint32_t *u32 = (const void *)(rec + 1);
	const uint64_t *u64 = (const void *)(rec + 1);
	char name[4096];
	switch (rec->type) {
	case PERF_RECORD_COMM:
		if (rec->size >= 24)
			proc_table_comm(pt, u32[0], u32[1], record_string(rec, 16, name, sizeof(name)),
					rec->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_MMAP:
		if (rec->size >= 40)
			proc_table_mmap(pt, u32[0], u64[1], u64[2], u64[3], 4 /* PROT_EXEC */, 0,
					record_string(rec, 40, name, sizeof(name)));
		break;
	case PERF_RECORD_MMAP2:
		if (rec->size >= 72) {
			const char *file = record_string(rec, 72, name, sizeof(name));
			proc_table_mmap(pt, u32[0], u64[1], u64[2], u64[3], u32[14], u32[15], file);
			char build_id[41];
			if (mmap2_build_id(rec, build_id))
				proc_table_set_build_id(pt, file, build_id);
		}
		break;
	case PERF_RECORD_FORK:
		if (rec->size >= 24) {
			proc_table_fork(pt, u32[1], u32[0]);
			proc_table_thread_start(pt, u32[2], u32[3]);
		}
		break;
	case PERF_RECORD_EXIT:
		if (rec->size >= 24)
			proc_table_exit(pt, u32[0], u32[2]);
		break;
	case PERF_RECORD_LOST:
		if (rec->size >= 24)
			l->p->lost += u64[1];
		break;
	case PERF_RECORD_THROTTLE:
		l->p->throttle_records++;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (rec->size >= 16)
			l->p->lost_samples += u64[0];
		break;
	default:
		break;
	}
}

/* Hand a non-sample record to every analyzer that asked for them (collector.h, record). */
static void analyzers_see_record(struct profile *p, const struct perf_event_header *rec)
{
	struct sp_sample_id id;
	if (record_sample_id(&p->events, rec, &id) < 0)
		id.valid = false;
	/* a loss is every analyzer's, whichever task its record names (the one that ran when the kernel wrote it) */
	bool loss = rec->type == PERF_RECORD_LOST || rec->type == PERF_RECORD_LOST_SAMPLES;
	if (!loss && id.valid && !task_and_time_pass(p, id.pid, id.tid, id.time))
		return;
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->state && ci->impl->analyzer->record)
			ci->impl->analyzer->record(ci->state, p, rec, &id);
	}
}

static void process_kernel_record(struct loader *l, const struct perf_event_header *rec)
{
	struct profile *p = l->p;
	settle_kernel_symbols(l);
	p->records++;
	if (rec->type == PERF_RECORD_SAMPLE) {
		load_sample(l, rec);
	} else {
		load_task_record(l, rec);
		analyzers_see_record(p, rec);
	}
}

static void queue_record(struct loader *l, const struct perf_event_header *rec)
{
	struct order_queue *q = &l->queue;
	uint64_t time;
	if (record_time(&l->p->events, rec, &time) < 0)
		time = q->newest; /* no timestamp: keep its place in arrival order */
	if (time > q->newest)
		q->newest = time;
	GROW(q->arena, q->cap, q->used + rec->size);
	memcpy(q->arena + q->used, rec, rec->size);
	GROW(q->items, q->items_cap, q->count + 1);
	q->items[q->count++] = (struct queued_record){ time, q->seq++, q->used };
	q->used += rec->size;
}

static int compare_queued(const void *a, const void *b)
{
	const struct queued_record *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Process, in time order, every queued record up to limit; keep the rest. */
static void flush_queue(struct loader *l, uint64_t limit)
{
	struct order_queue *q = &l->queue;
	if (!q->count)
		return; /* nothing queued: a ROUND before the first kernel record, or a file with none */
	qsort(q->items, q->count, sizeof(*q->items), compare_queued);
	size_t done = 0;
	while (done < q->count && q->items[done].time <= limit) {
		process_kernel_record(l, (const void *)(q->arena + q->items[done].offset));
		done++;
	}
	unsigned char *rest = xmalloc(q->cap ? q->cap : 1);
	size_t used = 0;
	for (size_t i = done; i < q->count; i++) {
		const struct perf_event_header *h = (const void *)(q->arena + q->items[i].offset);
		memcpy(rest + used, h, h->size);
		q->items[i - done] = q->items[i];
		q->items[i - done].offset = used;
		used += h->size;
	}
	free(q->arena);
	q->arena = rest;
	q->used = used;
	q->count -= done;
}

/* Decompress the recording's copy of kallsyms record by record; install it once whole. */
static void load_kallsyms(struct loader *l, const struct perf_event_header *rec)
{
	const struct sp_kallsyms_record *k = (const void *)rec;
	if (l->skip_kallsyms) {
		l->kallsyms_late = l->kallsyms_late || (l->kernel_symbols_settled && l->kallsyms_copy == COPY_NONE);
		return;
	}
	l->kallsyms_copy = COPY_LOADING;
	l->kallsyms_broken = "a KALLSYMS record is malformed or out of sequence";
	if (rec->size < sizeof(*k) || sizeof(*k) + k->chunk_size > rec->size || k->sequence != l->kallsyms_next++ ||
	    k->text_size == 0 || k->text_size > KALLSYMS_MAX_BYTES)
		goto drop;
	if (k->sequence == 0) {
		l->kallsyms_text = xmalloc_large(k->text_size + 1);
		l->kallsyms_size = k->text_size;
		l->kallsyms_used = 0;
		LZ4_setStreamDecode(&l->kallsyms_decoder, NULL, 0);
	}
	if (!l->kallsyms_text || k->text_size != l->kallsyms_size)
		goto drop;
	int n = LZ4_decompress_safe_continue(&l->kallsyms_decoder, (const char *)(k + 1),
					     l->kallsyms_text + l->kallsyms_used, (int)k->chunk_size,
					     (int)(l->kallsyms_size - l->kallsyms_used));
	if (n <= 0) {
		l->kallsyms_broken = "its compressed text does not decompress";
		goto drop;
	}
	l->kallsyms_used += (size_t)n;
	if (!(k->flags & SP_KALLSYMS_LAST))
		return;
	struct symtab *tab = NULL;
	l->kallsyms_broken = "its text is shorter than its header says";
	if (l->kallsyms_used == l->kallsyms_size) {
		char *text = l->kallsyms_text;
		l->kallsyms_text = NULL; /* the symtab takes it, whether it parses or not */
		l->kallsyms_broken = "its text is not a kallsyms table";
		if (symtab_from_kallsyms_buffer(text, l->kallsyms_used, &tab) == 0) {
			proc_table_set_kernel_symbols(l->p->procs, tab);
			l->kallsyms_copy = COPY_INSTALLED;
			l->kallsyms_broken = NULL;
		}
	}
drop:
	free(l->kallsyms_text);
	l->kallsyms_text = NULL;
	l->skip_kallsyms = true;
	if (l->kallsyms_copy != COPY_INSTALLED)
		l->kallsyms_copy = COPY_BROKEN;
}

/*
 * Once the run's description is read (before the first kernel record, or
 * at the end): where kernel frames get their names.  The recording's copy
 * when it is whole; else this machine's /proc/kallsyms, but only when the
 * recording says it was made in this very boot (its boot_id): on another
 * machine or after a reboot every kernel frame would get a wrong name, so
 * they stay addresses, with the reason.  A corrupt copy is a note either way.
 */
static void settle_kernel_symbols(struct loader *l)
{
	if (l->kernel_symbols_settled)
		return;
	l->kernel_symbols_settled = true;
	l->skip_kallsyms = true; /* a copy that starts after the kernel records is not one */
	if (l->kallsyms_named || l->kallsyms_copy == COPY_INSTALLED)
		return;
	if (l->kallsyms_copy == COPY_LOADING) {
		l->kallsyms_copy = COPY_BROKEN;
		l->kallsyms_broken = "it ends before its last block";
		free(l->kallsyms_text);
		l->kallsyms_text = NULL;
	}
	char this_boot[64];
	bool same_boot = l->boot_id[0] && read_boot_id(this_boot, sizeof(this_boot)) == 0 &&
			 strcmp(this_boot, l->boot_id) == 0;
	if (l->kallsyms_copy == COPY_BROKEN) {
		struct strbuf note = { 0 };
		sb_addf(&note, "the recording's copy of the kernel symbols (kallsyms) is corrupt: %s; %s",
			l->kallsyms_broken,
			same_boot ? "kernel frames are named from this machine's /proc/kallsyms (same boot)"
				  : "kernel frames are shown as addresses");
		add_note(l->p, note.buf);
		sb_free(&note);
	}
	if (same_boot)
		return;
	l->kernel_symbols_why = l->boot_id[0] ? "it was made on another machine or before a reboot"
					      : "it does not say in which boot it was made";
	proc_table_forbid_host_kallsyms(l->p->procs);
}

static int load_record(struct loader *l, const struct perf_event_header *rec)
{
	struct profile *p = l->p;
	switch (rec->type) {
	case SP_REC_META:
		load_meta(l, rec);
		return 0;
	case SP_REC_EVENT:
		return load_event(l, rec);
	case SP_REC_TOTALS:
		load_totals(p, rec);
		return 0;
	case SP_REC_KALLSYMS:
		load_kallsyms(l, rec);
		return 0;
	case SP_REC_TRACEPOINT:
		return tracepoint_set_add(&p->tracepoints, rec) < 0 ? -EINVAL : 0;
	case SP_REC_FINISH:
		if (rec->size >= sizeof(p->finish)) {
			memcpy(&p->finish, rec, sizeof(p->finish));
			p->has_finish = true;
		}
		return 0;
	case SP_REC_ROUND:
		flush_queue(l, l->queue.flushable);
		l->queue.flushable = l->queue.newest;
		return 0;
	default:
		if (rec->type >= PERF_RECORD_MAX)
			return 0; /* a record type of a later version */
		queue_record(l, rec);
		if (l->queue.used > ORDER_QUEUE_MAX_BYTES)
			flush_queue(l, UINT64_MAX);
		return 0;
	}
}

static void note_kernel_symbols(struct profile *p, const struct loader *l, const char *kallsyms)
{
	const struct dso *kernel = l->kernel;
	if (!kernel->load_tried)
		return; /* no kernel frame needed a name */
	if (kernel->load_error == -ESTALE && l->kallsyms_copy == COPY_NONE)
		snprintf(p->kernel_symbols_problem, sizeof(p->kernel_symbols_problem),
			 "kernel frames shown as addresses: the recording carries no copy of kallsyms and %s "
			 "(give the recording machine's table with --kallsyms FILE)", l->kernel_symbols_why);
	else if (kernel->load_error == -ESTALE)
		snprintf(p->kernel_symbols_problem, sizeof(p->kernel_symbols_problem),
			 "kernel frames shown as addresses: the recording's copy of kallsyms is unusable and %s "
			 "(give the recording machine's table with --kallsyms FILE)", l->kernel_symbols_why);
	else if (kernel->load_error == -EPERM)
		snprintf(p->kernel_symbols_problem, sizeof(p->kernel_symbols_problem),
			 "kernel symbols hidden in %s: run as root or set kernel.kptr_restrict=0", kallsyms);
	else if (kernel->load_error)
		snprintf(p->kernel_symbols_problem, sizeof(p->kernel_symbols_problem), "cannot read %s: %s", kallsyms,
			 strerror(-kernel->load_error));
}

/*
 * Kernel frames named from this machine's table (same boot) because the
 * recording's copy was not used: why not.
 */
static void note_no_kallsyms_copy(struct profile *p, const struct loader *l, const struct sp_reader *r)
{
	const char *damaged = sp_reader_trailer_problem(r), *sep = ": ", *after = "";
	char why[256];
	if (damaged) {
		snprintf(why, sizeof(why), "the recording's copy of the kernel symbols (its trailer) is damaged: %s",
			 damaged);
		sep = "; ";
	} else if (l->kallsyms_late && sp_reader_footer_met(r)) {
		snprintf(why, sizeof(why), "the recording's copy of the kernel symbols is its trailer, which a file read "
					   "front to back (from a pipe) meets after the records");
		after = "; give the file itself (-i FILE) to use the copy";
	} else if (!p->has_finish || sp_reader_problem(r) || l->kallsyms_late) { /* cut before FINISH, or after */
		snprintf(why, sizeof(why), "the recording was cut short before or inside its copy of the kernel symbols "
					   "(written at its end)");
	} else {
		snprintf(why, sizeof(why), "the recording carries no copy of the kernel symbols (recorded with "
					   "--no-kallsyms?)");
	}
	char text[400];
	snprintf(text, sizeof(text), "%s%skernel frames are named from this machine's /proc/kallsyms (same boot)%s", why,
		 sep, after);
	add_note(p, text);
}

/*
 * The times of the recording's first and last kernel records, for --time:
 * one pass over the file reading record headers and timestamps only.
 */
static void scan_time_span(const char *file, uint64_t *first, uint64_t *last)
{
	struct sp_reader *r;
	char err[256];
	*first = *last = 0;
	if (sp_reader_open(file, &r, err, sizeof(err)) < 0)
		return;
	struct sp_event_set events = { 0 };
	const struct perf_event_header *rec;
	while (sp_reader_next(r, &rec) == 1) {
		uint64_t t;
		if (rec->type == SP_REC_EVENT) {
			if (event_set_add(&events, rec) < 0)
				break;
		} else if (rec->type < PERF_RECORD_MAX && record_time(&events, rec, &t) == 0 && t) {
			if (!*first || t < *first)
				*first = t;
			if (t > *last)
				*last = t;
		}
	}
	event_set_free(&events);
	sp_reader_close(r);
}

/*
 * The filters for this load.  --time needs the recording's first and last
 * times before the first sample: a pass over the file finds them.  Standard
 * input (a pipe from record -o -) cannot be read twice: there the window's
 * seconds count from the first timed record met in time order (the first
 * one replayed), and a percentage, which needs the end, is an error.
 */
static int set_filter(struct profile *p, const char *file, const struct profile_filter *f, char *err,
		      size_t errlen)
{
	p->window_start = 0;
	p->window_end = UINT64_MAX;
	if (!f)
		return 0;
	filter_describe(f, p->filters, sizeof(p->filters));
	if (!filter_drops(f) && f->percent_limit <= 0)
		return 0;
	p->filter = f;
	if (!f->has_time)
		return 0;
	if (strcmp(file, "-") == 0) {
		if (f->start_percent || f->end_percent) {
			snprintf(err, errlen, "--time in percent needs the whole recording first: give a file, not a pipe");
			return -EINVAL;
		}
		p->window_pending = true;
		return 0;
	}
	scan_time_span(file, &p->span_first, &p->span_last);
	filter_window(f, p->span_first, p->span_last, &p->window_start, &p->window_end);
	return 0;
}

/* Why a kallsyms file the user named cannot be used, as one line without the file name. */
static void kallsyms_error(int err, char *buf, size_t buflen)
{
	if (err == -EFBIG)
		snprintf(buf, buflen, "larger than %u MiB: not a kallsyms file", KALLSYMS_MAX_BYTES >> 20);
	else if (err == -ENOEXEC)
		snprintf(buf, buflen, "no line of it is 'ADDRESS TYPE NAME': not a kallsyms file");
	else if (err == -EPERM)
		snprintf(buf, buflen, "every address in it is 0 (read by a user that kernel.kptr_restrict hides them from)");
	else
		snprintf(buf, buflen, "%s", strerror(-err));
}

int profile_load(const char *file, const struct profile_options *opts, struct profile *p, char *err,
		 size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->file = file;
	p->procs = proc_table_new();
	if (opts) {
		p->known_collectors = opts->collectors;
		p->nknown_collectors = opts->collectors ? opts->ncollectors : 0;
	}
	stack_table_init(&p->stacks, opts ? opts->rules : NULL);
	if (opts && opts->weights) {
		p->weights = xcalloc(1, sizeof(*p->weights));
		weight_table_init(p->weights);
	}
	if (opts && opts->srcline)
		stack_table_enable_srcline(&p->stacks);
	const char *kallsyms = opts && opts->kallsyms ? opts->kallsyms : "/proc/kallsyms";
	if (opts && opts->kallsyms) {
		/* a file the user named that is no kallsyms table is an error, not a note under a report */
		proc_table_set_kallsyms(p->procs, kallsyms);
		int kerr = proc_table_kernel(p->procs)->load_error;
		if (kerr) {
			char why[128];
			kallsyms_error(kerr, why, sizeof(why));
			snprintf(err, errlen, "--kallsyms %s: %s", kallsyms, why);
			return kerr;
		}
	}
	int ferr = set_filter(p, file, opts ? opts->filter : NULL, err, errlen);
	if (ferr < 0)
		return ferr;

	struct sp_reader *r;
	int ret = sp_reader_open(file, &r, err, errlen);
	if (ret < 0)
		return ret;
	struct loader l = { .p = p, .skip_kallsyms = opts && opts->kallsyms, .kallsyms_named = opts && opts->kallsyms,
			    .opts = opts };
	l.kernel = proc_table_kernel(p->procs);
	const struct perf_event_header *rec;
	while (sp_reader_next(r, &rec) == 1) {
		if (load_record(&l, rec) < 0) {
			snprintf(p->problem, sizeof(p->problem), "corrupt EVENT or TRACEPOINT record at offset %llu",
				 (unsigned long long)sp_reader_offset(r));
			p->damaged = true;
			break;
		}
	}
	flush_queue(&l, UINT64_MAX);
	settle_kernel_symbols(&l);
	if (l.kallsyms_copy == COPY_NONE && !l.kallsyms_named && l.kernel->load_tried && !l.kernel->load_error)
		note_no_kallsyms_copy(p, &l, r);
	note_kernel_symbols(p, &l, kallsyms);
	note_missing_files(p);
	note_unjoined_handlers(p);
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].state && p->collectors[c].impl->analyzer->finish)
			p->collectors[c].impl->analyzer->finish(p->collectors[c].state, p);
	if (!p->problem[0] && sp_reader_problem(r)) {
		snprintf(p->problem, sizeof(p->problem), "%s", sp_reader_problem(r));
		p->damaged = sp_reader_damaged(r);
	}
	p->truncated = !p->has_finish;
	sp_reader_close(r);
	free(l.event_collector);
	free(l.frames);
	unwinder_free(l.unwinder);
	free(l.queue.arena);
	free(l.queue.items);
	free(l.kallsyms_text);
	if (!p->events.count && !p->has_finish && !p->ncollectors) {
		snprintf(err, errlen, "holds no recording (%s)", p->problem[0] ? p->problem : "no records");
		return -EINVAL;
	}
	return 0;
}

void profile_free(struct profile *p)
{
	free_argv(p);
	for (int i = 0; i < p->nnotes; i++)
		free(p->notes[i]);
	free(p->notes);
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].state)
			p->collectors[c].impl->analyzer->destroy(p->collectors[c].state);
	event_set_free(&p->events);
	tracepoint_set_free(&p->tracepoints);
	stack_table_free(&p->stacks);
	if (p->weights)
		weight_table_free(p->weights);
	free(p->weights);
	proc_table_free(p->procs);
	memset(p, 0, sizeof(*p));
}

double profile_duration_s(const struct profile *p)
{
	if (p->has_finish)
		return (double)p->finish.duration_ns / 1e9;
	return p->last_time > p->first_time ? (double)(p->last_time - p->first_time) / 1e9 : 0.0;
}

bool profile_time_window(const struct profile *p, uint64_t *offset_ns, uint64_t *duration_ns)
{
	if (!p->filter || !p->filter->has_time || p->span_last <= p->span_first)
		return false;
	uint64_t start = p->window_start > p->span_first ? p->window_start : p->span_first;
	uint64_t end = p->window_end < p->span_last ? p->window_end : p->span_last;
	*offset_ns = start - p->span_first;
	*duration_ns = end > start ? end - start : 0;
	return true;
}

int profile_exit_status(const struct profile *p)
{
	if (!p->has_finish)
		return -1;
	int st = p->finish.wait_status;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return PROFILE_EXIT_UNKNOWN; /* finished, with a status no exit gives (a corrupt FINISH) */
}

uint64_t profile_kept_samples(const struct profile *p)
{
	return p->samples - p->filtered_samples - p->stack_only_samples - p->unknown_samples - p->bad_samples;
}

const char *profile_end_verb(const struct profile *p)
{
	return p->damaged ? "is damaged" : "was cut short";
}

uint64_t profile_unsampled_hits_of(const struct profile *p, size_t e)
{
	const struct sp_event *ev = &p->events.events[e];
	/* hits: a tracepoint's count; a clock's is nanoseconds (cpu-clock -c 1 samples every 10 us at best) */
	if (ev->attr.type == PERF_TYPE_TRACEPOINT && ev->has_totals && !ev->attr.freq && ev->attr.sample_period == 1 &&
	    ev->total_value > ev->samples)
		return ev->total_value - ev->samples;
	return 0;
}

uint64_t profile_unsampled_hits(const struct profile *p)
{
	uint64_t missing = 0;
	for (size_t e = 0; e < p->events.count; e++)
		missing += profile_unsampled_hits_of(p, e);
	return missing;
}

size_t profile_collector_events(const struct profile *p, int c, struct collector_event **rows)
{
	const struct collector_info *ci = &p->collectors[c];
	struct collector_event *r = NULL;
	size_t n = 0, cap = 0;
	for (size_t e = 0; e < p->events.count; e++) {
		const struct sp_event *ev = &p->events.events[e];
		/* a counting event (no period, no frequency) has no samples to name */
		if (strcmp(ev->collector, ci->name) != 0 || !ev->attr.sample_period)
			continue;
		size_t k = 0;
		while (k < n && strcmp(r[k].name, ev->name) != 0)
			k++;
		if (k == n) {
			GROW(r, cap, n + 1);
			r[n++] = (struct collector_event){ .name = ev->name };
		}
		r[k].samples += ev->collector_samples;
	}
	*rows = r;
	return n;
}

bool profile_period_is_time(const struct profile *p, int c)
{
	bool any = false;
	for (size_t e = 0; e < p->events.count; e++) {
		const struct sp_event *ev = &p->events.events[e];
		if (strcmp(ev->collector, p->collectors[c].name) != 0 || !ev->attr.sample_period)
			continue;
		if (ev->attr.type != PERF_TYPE_SOFTWARE ||
		    (ev->attr.config != PERF_COUNT_SW_CPU_CLOCK && ev->attr.config != PERF_COUNT_SW_TASK_CLOCK))
			return false;
		any = true;
	}
	return any;
}

uint64_t profile_lost(const struct profile *p, double *share_percent)
{
	uint64_t lost = p->lost + p->lost_samples;
	uint64_t all = p->samples + lost;
	if (share_percent)
		*share_percent = all ? 100.0 * (double)lost / (double)all : 0.0;
	return lost;
}
