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
#include <sys/utsname.h>
#include <sys/wait.h>
#include <lz4.h>

#include "sigprof/model/collector.h"
#include "sigprof/model/decode.h"
#include "sigprof/model/profile.h"
#include "sigprof/model/stack_completion.h"
#include "sigprof/model/timeline.h"
#include "sigprof/base/util.h"
#include "sigprof/model/datafile.h"
#include "sigprof/base/files.h"
#include "sigprof/kernel/tracepoint.h"

#include "loader.h"

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

void profile_add_note(struct profile *p, const char *text)
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
		profile_add_note(p, text.buf);
		sb_free(&text);
	}
	sb_free(&stood_in);
	if (missing) {
		struct strbuf text = { 0 };
		sb_addf(&text, "%zu file%s the stacks need could not be read%s, their frames stay FILE+0xOFFSET: %s; "
			       "'sigprof archive' packs a recording's files, 'report --symfs' reads them",
			missing, missing == 1 ? "" : "s", symbolize_symfs() ? " under --symfs" : "", note.buf);
		profile_add_note(p, text.buf);
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

/* "NAME=VALUE" of a META record into name and *value: false when it is not one (a reader skips it). */
static bool name_value(const char *s, char *name, size_t namelen, double *value)
{
	const char *eq = strchr(s, '=');
	char *end;
	if (!eq || eq == s || (size_t)(eq - s) >= namelen)
		return false;
	*value = strtod(eq + 1, &end);
	if (end == eq + 1 || *end)
		return false;
	snprintf(name, namelen, "%.*s", (int)(eq - s), s);
	return true;
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
		for (uint32_t i = 1; i < n && p->ntime_figures < PROFILE_MAX_TIME_FIGURES; i++)
			if (name_value(s[i], p->time_figures[p->ntime_figures].name, sizeof(p->time_figures[0].name),
				       &p->time_figures[p->ntime_figures].value))
				p->ntime_figures++;
	} else if (strcmp(key, "results") == 0) {
		/* "NAME=VALUE" each: the workload's own result figures */
		for (uint32_t i = 1; i < n && p->nresults < PROFILE_MAX_RESULTS; i++)
			if (name_value(s[i], p->results[p->nresults].name, sizeof(p->results[0].name),
				       &p->results[p->nresults].value))
				p->nresults++;
	} else if (strcmp(key, "target") == 0) {
		snprintf(p->target, sizeof(p->target), "%s", v);
	} else if (strcmp(key, "followed") == 0) {
		snprintf(p->followed, sizeof(p->followed), "%s", v);
	} else if (strcmp(key, "workload_pid") == 0) {
		unsigned long pid = strtoul(v, NULL, 10);
		if (pid && pid <= UINT32_MAX && !p->workload_pid) {
			p->workload_pid = (uint32_t)pid;
			u64_map_put(&p->workload_pids, pid, (void *)1);
		}
	} else if (strcmp(key, "note") == 0) {
		profile_add_note(p, v);
	} else if (strcmp(key, "switch_output") == 0 && n >= 3) {
		p->piece = (unsigned)strtoul(v, NULL, 10);
		snprintf(p->switch_output, sizeof(p->switch_output), "%s", s[2]);
	} else if (strcmp(key, "build_id") == 0 && n >= 3) {
		/* a perf.data file's build-id table (perfdata.c): file, build-id */
		proc_table_set_build_id(p->procs, v, s[2]);
	} else if (strcmp(key, "kallsyms_source") == 0) {
		snprintf(l->kallsyms_source, sizeof(l->kallsyms_source), "%s", v);
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

/* Whether the samples of stack id may count on stack to, as an analyzer's counted_stack() or lent_stack() says. */
static bool may_count_on(const struct profile *p, uint32_t id, uint32_t to)
{
	const struct stack_table *t = &p->stacks;
	return to != id && to < t->nstacks && t->stacks[to].collector == t->stacks[id].collector &&
	       t->stacks[to].path == t->stacks[id].path;
}

/*
 * n samples whose own unwinds stopped for failure count on stack to: whole
 * there, they count as complete, and under *as (unwind.lent or
 * unwind.completed).
 */
static void count_as_whole(struct profile *p, int failure, uint32_t to, uint64_t n, uint64_t *as)
{
	if (failure <= UNWIND_COMPLETE || stack_is_cut(&p->stacks, to))
		return;
	p->unwind.failures[failure] -= n;
	p->unwind.complete += n;
	*as += n;
}

/* What stack (of collector) counts on at the end of the load: its analyzer's lent_stack(), or itself. */
static uint32_t lent_at_end(const struct profile *p, uint32_t collector, uint32_t stack)
{
	if ((int)collector >= p->ncollectors || stack >= p->stacks.nstacks)
		return stack;
	const struct collector_info *c = &p->collectors[collector];
	const struct collector_analyzer *an = c->impl ? c->impl->analyzer : NULL;
	if (!an || !an->lent_stack || !c->state)
		return stack;
	uint32_t to = an->lent_stack(c->state, p, stack);
	return may_count_on(p, stack, to) ? to : stack;
}

/*
 * What a stack cut where its short copy ran out counts on at the end of
 * the load: the stack a long copy (of any collector) completes it to
 * (stack_completion.h), or itself.  Its path may change with the frames
 * the completion adds.
 */
static uint32_t completed_at_end(struct loader *l, uint32_t stack)
{
	struct profile *p = l->p;
	const struct stack *s = &p->stacks.stacks[stack];
	if (!l->completion || (int)s->collector >= p->ncollectors || s->counted_failure != UNWIND_STACK_END)
		return stack;
	const struct collector_info *c = &p->collectors[s->collector];
	if (!c->impl || !c->impl->analyzer || !c->impl->analyzer->completes_cut_stacks)
		return stack;
	return stack_completion_complete(l->completion, &p->stacks, stack);
}

/* The stacks' new ids of lend_late_keys(), for weight_table_remap(). */
struct stack_moves {
	const uint32_t *to;
	uint32_t n;
};

static uint32_t moved_to(void *ctx, uint32_t collector, uint32_t stack)
{
	(void)collector;
	const struct stack_moves *m = ctx;
	return stack < m->n ? m->to[stack] : stack;
}

/* count samples of stack from count on stack to now, with their weight, header counts and path. */
static void move_samples(struct profile *p, uint32_t from, uint32_t to, uint64_t *as)
{
	struct stack *s = &p->stacks.stacks[from], *t = &p->stacks.stacks[to];
	struct collector_info *c = &p->collectors[s->collector];
	count_as_whole(p, s->counted_failure, to, s->count, as);
	move_counted_ends(p, from, to, s->count);
	c->path_samples[s->path] -= s->count;
	c->path_samples[t->path] += s->count;
	t->count += s->count;
	t->weight += s->weight;
	s->count = s->weight = 0;
}

/*
 * A stack lent to keys holds the failure they were counted under, while
 * every key counted on it stopped for the same reason (-1 once two
 * differ, which lend_late_keys() moves without touching the header's
 * failures): a long copy cut where it ran out (a deep program's switch-outs
 * on the sched collector's 8192-byte copies) is then completed like a key
 * no copy was lent to, and its keys counted whole.
 */
static void note_lent_failure(struct stack *s, int failure)
{
	if (failure < UNWIND_COMPLETE)
		failure = UNWIND_COMPLETE;
	if (!s->count)
		s->counted_failure = failure;
	else if (s->counted_failure != failure)
		s->counted_failure = -1;
}

/*
 * The keys that counted on themselves because their call site had no
 * copy yet count on the stack its copies lent later (the analyzers'
 * lent_stack()), with their period, header counts and weights: the
 * counts do not depend on whether a call site's first copy came before
 * its first keys.  The stacks cut where a short copy ran out count on
 * what a long copy completes them to (completed_at_end()).  The timeline
 * keeps the stack each sample had when it was read.
 */
static void lend_late_keys(struct loader *l)
{
	struct profile *p = l->p;
	uint32_t n = (uint32_t)p->stacks.nstacks, moved = 0;
	uint32_t *to = xmalloc((n ? n : 1) * sizeof(*to));
	for (uint32_t id = 0; id < n; id++) {
		to[id] = id;
		if (!p->stacks.stacks[id].count)
			continue;
		uint32_t lent = lent_at_end(p, p->stacks.stacks[id].collector, id);
		if (lent != id) {
			/* a copy that ran out itself (a deep program's) is completed as a key would be */
			uint32_t whole = completed_at_end(l, lent);
			move_samples(p, id, whole, whole != lent ? &p->unwind.completed : &p->unwind.lent);
			lent = whole;
		} else if ((lent = completed_at_end(l, id)) != id) {
			move_samples(p, id, lent, &p->unwind.completed); /* the table may have moved: no pointer kept */
		} else {
			continue;
		}
		to[id] = lent;
		moved++;
	}
	struct stack_moves m = { .to = to, .n = n };
	if (moved && p->weights)
		weight_table_remap(p->weights, moved_to, &m);
	if (moved) {
		p->stacks_moved_to = to; /* for the analyzers' own tables (view_stack_moved()) */
		p->nstacks_moved = n;
	} else {
		free(to);
	}
}

/*
 * A task past its exit is no longer hashed, and the kernel writes tid -1
 * in its last samples (perf_event_pid_type()): a thread's final switch-out,
 * a lock it contends on its way out.  A tracepoint's common_pid is the
 * task's own id whatever its state, so the sample is the thread's again.
 */
static void name_exited_task(const struct profile *p, struct sp_sample *s)
{
	int64_t tid;
	const struct tep_event *ev = s->raw ? tracepoint_of(&p->tracepoints, s) : NULL;
	if (ev && tp_field_i64(ev, s, "common_pid", &tid) && tid > 0 && tid < UINT32_MAX)
		s->tid = (uint32_t)tid;
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
	if (s.tid == UINT32_MAX)
		name_exited_task(p, &s);
	if (!task_and_time_pass(p, s.pid, s.tid, s.time)) {
		p->filtered_samples++;
		timeline_feed_filtered(p, l->event_collector[s.event->index], &s);
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
	/* registers and stack of another architecture (a perf.data of arm64): its callchain only */
	bool dwarf = s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE && s.nr_regs && (!p->arch[0] || strcmp(p->arch, "x86_64") == 0);
	uint32_t *frames = frame_buffer(l, s.nr_callchain + 2 + (dwarf ? UNWIND_MAX_FRAMES : 0));
	l->counted_unwind = -1;
	l->counted_end = UINT32_MAX;
	struct unwind_counts before = p->unwind;
	uint32_t n = dwarf ? dwarf_frames(l, rec, &s, frames) : chain_to_frames(l, &s, false, frames);
	frames = l->frames; /* a joined stack may have grown the buffer */
	if (stack_only)
		p->unwind = before; /* the header's unwind line is of the samples counted, not of the copies lent them */
	if (n == 0)
		frames[n++] = sample_in_kernel(rec) ? kernel_frame(l, s.ip) : user_frame(l, s.pid, s.ip);
	/* a stack lent to another sample is that sample's: the filters judged it already */
	if (!stack_only && p->filter && p->filter->ndsos && !filter_dso(p->filter, p->stacks.frames[frames[0]].dso)) {
		p->filtered_samples++;
		return;
	}
	uint64_t period = s.period ? s.period : 1;
	uint32_t id = stack_add_on_path(&p->stacks, (uint32_t)ci, frames, n, 0, 0, path);
	int innermost;
	uint32_t handlers_before = timeline_feed_handlers(p, ci, &s, &innermost);
	if (an && an->sample)
		an->sample(c->state, p, &s, id);
	if (stack_only) {
		p->stack_only_samples++;
		s.event->stack_copies++;
		if (!p->stacks.stacks[id].count)
			note_lent_failure(&p->stacks.stacks[id], l->counted_unwind); /* the copy's own, until keys count on it */
		if (an && an->completes_cut_stacks) {
			if (!l->completion)
				l->completion = stack_completion_new();
			stack_completion_learn(l->completion, &p->stacks, id);
		}
		return;
	}
	uint32_t own = id;
	if (an && an->counted_stack) {
		uint32_t counted = an->counted_stack(c->state, p, id);
		if (may_count_on(p, id, counted)) {
			/* a key cut short by design (a futex entry's), counted on its call site's whole stack */
			count_as_whole(p, l->counted_unwind, counted, 1, &p->unwind.lent);
			count_lent_end(l, counted);
			id = counted;
		}
	}
	if (id == own && l->counted_unwind > UNWIND_COMPLETE)
		p->stacks.stacks[id].counted_failure = l->counted_unwind; /* for lend_late_keys() */
	else if (id != own)
		note_lent_failure(&p->stacks.stacks[id], l->counted_unwind);
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
	for (int other = 0; other < p->ncollectors; other++)
		if (other != ci && p->collectors[other].state && p->collectors[other].impl->analyzer->observe)
			p->collectors[other].impl->analyzer->observe(p->collectors[other].state, p, &s, id);
	timeline_feed_sample(p, ci, &s, id, handlers_before);
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
			else /* maj, min, ino: the object a shared futex is keyed by */
				proc_table_mmap_object(pt, u32[0], u64[1], u32[8], u32[9], u64[5]);
		}
		break;
	case PERF_RECORD_FORK:
		if (rec->size >= 24) {
			if (l->p->workload_pid && u32[0] != u32[1] && u64_map_get(&l->p->workload_pids, u32[1]))
				u64_map_put(&l->p->workload_pids, u32[0], (void *)1); /* a process the workload forked */
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
	/* the switch-out of a task past its exit, no longer hashed, names tid -1: no task; its EXIT record ends it */
	if ((rec->type == PERF_RECORD_SWITCH || rec->type == PERF_RECORD_SWITCH_CPU_WIDE) && id.valid &&
	    id.tid == UINT32_MAX)
		return;
	timeline_feed_record(p, rec, &id);
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
	sort_items(q->items, q->count, sizeof(*q->items), compare_queued);
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
		profile_add_note(l->p, note.buf);
		sb_free(&note);
	}
	if (same_boot) {
		l->host_kallsyms = true;
		return;
	}
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
 * A recording made on another host or kernel (a perf.data from a
 * production box, a file copied over): one note, as its binaries, its
 * kernel and its symbols are that machine's, not this one's.
 */
static void note_other_machine(struct profile *p)
{
	struct utsname here;
	if (uname(&here) < 0)
		return;
	bool host = p->hostname[0] && strcmp(p->hostname, here.nodename) != 0;
	bool kernel = p->kernel[0] && strcmp(p->kernel, here.release) != 0;
	if (!host && !kernel)
		return;
	const char *sep = host && kernel ? ", " : "";
	struct strbuf note = { 0 };
	sb_addf(&note, "recorded on another %s: %s%s%s%s, this machine is %s%s%s%s; the files and kernel its stacks name "
		       "are that machine's (--symfs DIR, --kallsyms FILE)",
		host && kernel ? "machine and kernel" : host ? "machine" : "kernel", host ? p->hostname : "", sep,
		kernel ? "Linux " : "", kernel ? p->kernel : "", host ? here.nodename : "", sep, kernel ? "Linux " : "",
		kernel ? here.release : "");
	profile_add_note(p, note.buf);
	sb_free(&note);
}

/* Where kernel frames got their names, for the header (said only when a kernel frame needed one). */
static void say_kernel_symbols(struct profile *p, const struct loader *l, const char *kallsyms)
{
	if (!l->kernel->load_tried)
		return;
	if (l->kallsyms_named)
		snprintf(p->kernel_symbols, sizeof(p->kernel_symbols), "--kallsyms %s", kallsyms);
	else if (l->kallsyms_copy == COPY_INSTALLED)
		snprintf(p->kernel_symbols, sizeof(p->kernel_symbols), "%s",
			 l->kallsyms_source[0] ? l->kallsyms_source : "the recording's copy of the kernel's kallsyms");
	else if (l->host_kallsyms && !l->kernel->load_error)
		snprintf(p->kernel_symbols, sizeof(p->kernel_symbols), "this machine's %s (the recording's boot)",
			 kallsyms);
	else
		snprintf(p->kernel_symbols, sizeof(p->kernel_symbols), "none");
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
	profile_add_note(p, text);
}

/*
 * The times of the recording's first and last kernel records, for --time:
 * one pass over the file reading record headers and timestamps only.
 */
static void scan_time_span(const char *file, enum sp_input_format format, uint64_t *first, uint64_t *last)
{
	struct sp_reader *r;
	char err[256];
	*first = *last = 0;
	if (sp_reader_open_format(file, format, &r, err, sizeof(err)) < 0)
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
static int set_filter(struct profile *p, const char *file, enum sp_input_format format,
		      const struct profile_filter *f, char *err, size_t errlen)
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
	scan_time_span(file, format, &p->span_first, &p->span_last);
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
	if (opts && opts->timeline)
		p->timeline = timeline_new(&p->stacks, &(struct timeline_options){ .keep_spans = opts->timeline_spans });
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
	enum sp_input_format format = opts ? (enum sp_input_format)opts->input_format : SP_INPUT_AUTO;
	int ferr = set_filter(p, file, format, opts ? opts->filter : NULL, err, errlen);
	if (ferr < 0)
		return ferr;

	struct sp_reader *r;
	int ret = sp_reader_open_format(file, format, &r, err, errlen);
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
	say_kernel_symbols(p, &l, kallsyms);
	note_other_machine(p);
	note_missing_files(p);
	note_unjoined_handlers(p);
	lend_late_keys(&l);
	stack_completion_free(l.completion);
	if (p->timeline)
		timeline_finish(p->timeline, p->last_time);
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
	free(p->stacks_moved_to);
	if (p->weights)
		weight_table_free(p->weights);
	free(p->weights);
	timeline_free(p->timeline);
	proc_table_free(p->procs);
	u64_map_free(&p->workload_pids);
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
	if (p->finish.flags & SP_FINISH_FOREIGN)
		return PROFILE_EXIT_NOT_RECORDED;
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
		r[k].stack_copies += ev->stack_copies;
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
