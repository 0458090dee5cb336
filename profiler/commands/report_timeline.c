/*
 * report_timeline.c: the report's outputs of the timeline (timeline.h,
 * docs/timeline.md): the threads' spans and the wall-clock profile in JSON
 * (`.timeline`), the wall-clock section of the text report, `--folded
 * --weight wall` and the Chrome trace-event export (`--trace-event FILE`).
 *
 * A wall-clock stack is the state as its root frame ("[running]",
 * "[blocked: futex queue_lock]", "[runnable]", "[signal handler: SIGUSR1]")
 * above the span's stack, weighed by ns; report_wall_root() names that frame
 * the same way in every output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/files.h"
#include "sigprof/base/json.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/report.h"
#include "sigprof/model/timeline.h"

const char *report_wall_root(const struct profile *p, uint32_t pid, uint8_t state, uint8_t cause, uint8_t signal,
			     uint64_t word, char *buf, size_t len)
{
	char name[160];
	switch (state) {
	case TIMELINE_BLOCKED:
		if (cause == TIMELINE_CAUSE_FUTEX && word)
			snprintf(buf, len, "[blocked: futex %s]", view_user_data_name(p, pid, word, name, sizeof(name), NULL));
		else
			snprintf(buf, len, "[blocked: %s]", timeline_cause_name(cause ? cause : TIMELINE_CAUSE_OTHER));
		break;
	case TIMELINE_SIGNAL_HANDLER:
		snprintf(buf, len, "[signal handler: %s]", signal_name(signal, name, sizeof(name)));
		break;
	default:
		snprintf(buf, len, "[%s]", timeline_state_name(state));
		break;
	}
	return buf;
}

/* ---- JSON: .timeline ---- */

/* The stacks the spans and the wall profile name, once each: an id of the stack table with its frames. */
static void write_timeline_stacks(struct json_writer *w, const struct profile *p)
{
	const struct timeline *t = p->timeline;
	unsigned char *named = xcalloc(p->stacks.nstacks + 1, 1);
	for (size_t i = 0; i < timeline_thread_count(t); i++) {
		size_t n;
		const struct timeline_span *s = timeline_spans(t, i, &n);
		for (size_t k = 0; k < n; k++)
			if (s[k].stack < p->stacks.nstacks)
				named[s[k].stack] = 1;
	}
	for (size_t i = 0; i < timeline_wall_count(t); i++) {
		uint32_t stack = timeline_wall_entry(t, i)->stack;
		if (stack < p->stacks.nstacks)
			named[stack] = 1;
	}
	json_array_begin(w, "stacks");
	for (uint32_t id = 0; id < p->stacks.nstacks; id++) {
		if (!named[id])
			continue;
		json_object_begin(w, NULL);
		json_u64(w, "id", id);
		view_json_stack(w, p, id);
		json_end(w);
	}
	json_end(w);
	free(named);
}

static void write_stack_id(struct json_writer *w, uint32_t stack)
{
	if (stack == TIMELINE_NO_STACK)
		json_null(w, "stack");
	else
		json_u64(w, "stack", stack);
}

static void write_span(struct json_writer *w, const struct profile *p, uint32_t pid, const struct timeline_span *s)
{
	char buf[200];
	json_object_begin(w, NULL);
	json_u64(w, "start_ns", s->start);
	json_u64(w, "end_ns", s->end);
	json_string(w, "state", timeline_state_key(s->state));
	if (s->state == TIMELINE_BLOCKED)
		json_string(w, "cause", timeline_cause_key(s->cause));
	if (s->state == TIMELINE_BLOCKED && s->cause == TIMELINE_CAUSE_FUTEX && s->detail) {
		json_hex(w, "word", s->detail);
		json_string(w, "word_name", view_user_data_name(p, pid, s->detail, buf, sizeof(buf), NULL));
	}
	if (s->state == TIMELINE_RUNNABLE)
		json_bool(w, "woken", s->woken);
	if (s->signal)
		json_string(w, "signal", signal_name(s->signal, buf, sizeof(buf)));
	write_stack_id(w, s->stack);
	json_end(w);
}

void report_timeline_json(struct json_writer *w, const struct profile *p)
{
	const struct timeline *t = p->timeline;
	if (!t) {
		json_null(w, "timeline");
		return;
	}
	char buf[200];
	json_object_begin(w, "timeline");
	json_u64(w, "start_ns", p->first_time);
	json_array_begin(w, "threads");
	for (size_t i = 0; i < timeline_thread_count(t); i++) {
		const struct timeline_thread *th = timeline_thread(t, i);
		json_object_begin(w, NULL);
		json_u64(w, "pid", th->pid);
		json_u64(w, "tid", th->tid);
		json_string(w, "comm", view_thread_comm(p, th->pid, th->tid));
		json_u64(w, "start_ns", th->start);
		json_u64(w, "end_ns", th->end);
		json_bool(w, "exited", th->exited);
		json_object_begin(w, "states_ns");
		for (int s = 0; s < TIMELINE_STATES; s++)
			json_u64(w, timeline_state_key(s), th->ns[s]);
		json_end(w);
		json_object_begin(w, "blocked_ns");
		for (int c = TIMELINE_CAUSE_FUTEX; c < TIMELINE_CAUSES; c++)
			json_u64(w, timeline_cause_key(c), th->cause_ns[c]);
		json_end(w);
		json_u64(w, "span_count", th->nspans);
		size_t n;
		const struct timeline_span *spans = timeline_spans(t, i, &n);
		json_array_begin(w, "spans");
		for (size_t k = 0; k < n; k++)
			write_span(w, p, th->pid, &spans[k]);
		json_end(w);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "wall");
	for (size_t i = 0; i < timeline_wall_count(t); i++) {
		const struct timeline_wall *e = timeline_wall_entry(t, i);
		const struct timeline_thread *th = timeline_thread(t, e->thread);
		json_object_begin(w, NULL);
		json_u64(w, "pid", th->pid);
		json_u64(w, "tid", th->tid);
		json_string(w, "state", timeline_state_key(e->state));
		json_string(w, "root", report_wall_root(p, th->pid, e->state, e->cause, e->signal, e->detail, buf,
							sizeof(buf)));
		json_u64(w, "ns", e->ns);
		write_stack_id(w, e->stack);
		json_end(w);
	}
	json_end(w);
	write_timeline_stacks(w, p);
	json_end(w);
}

/* ---- the wall-clock profile, per thread: its entries heaviest first ---- */

static const struct timeline_wall *sort_entries;

static int compare_wall_ns(const void *a, const void *b)
{
	const struct timeline_wall *x = &sort_entries[*(const size_t *)a], *y = &sort_entries[*(const size_t *)b];
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* The wall entries of thread i, heaviest first; returns the count, *out (indexes for timeline_wall_entry()) to free. */
static size_t thread_wall(const struct timeline *t, size_t i, size_t **out)
{
	size_t n = 0, total = timeline_wall_count(t);
	*out = xmalloc((total + 1) * sizeof(**out));
	for (size_t k = 0; k < total; k++)
		if (timeline_wall_entry(t, k)->thread == i)
			(*out)[n++] = k;
	sort_entries = total ? timeline_wall_entry(t, 0) : NULL;
	sort_items(*out, n, sizeof(**out), compare_wall_ns);
	return n;
}

static uint64_t life_of(const struct timeline_thread *th)
{
	return th->end - th->start;
}

/* Threads by life, longest first (then as listed); returns the count, *out to free. */
static const struct timeline *sort_timeline;

static int compare_life(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t lx = life_of(timeline_thread(sort_timeline, x)), ly = life_of(timeline_thread(sort_timeline, y));
	if (lx != ly)
		return lx < ly ? 1 : -1;
	return x < y ? -1 : 1;
}

static size_t threads_by_life(const struct timeline *t, size_t **out)
{
	size_t n = timeline_thread_count(t);
	*out = xmalloc((n + 1) * sizeof(**out));
	for (size_t i = 0; i < n; i++)
		(*out)[i] = i;
	sort_timeline = t;
	sort_items(*out, n, sizeof(**out), compare_life);
	return n;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "futex 29.4%, sleep 19.8%": the blocked causes of a thread, largest first, as shares of its life. */
static void blocked_causes(const struct timeline_thread *th, struct strbuf *sb)
{
	bool used[TIMELINE_CAUSES] = { false };
	for (;;) {
		int best = -1;
		for (int c = TIMELINE_CAUSE_FUTEX; c < TIMELINE_CAUSES; c++)
			if (!used[c] && th->cause_ns[c] && (best < 0 || th->cause_ns[c] > th->cause_ns[best]))
				best = c;
		if (best < 0)
			break;
		used[best] = true;
		sb_addf(sb, "%s%s %.1f%%", sb->len ? ", " : "", timeline_cause_name(best),
			share(th->cause_ns[best], life_of(th)));
	}
}

#define WALL_THREADS_WITH_STACKS 5

void report_timeline_text(const struct profile *p, const struct view_options *o, FILE *out)
{
	const struct timeline *t = p->timeline;
	size_t nthreads = timeline_thread_count(t);
	if (!nthreads)
		return;
	char when[32], buf[200];
	fprintf(out, "\nWall clock: each thread's life by state (docs/timeline.md)\n");
	static const unsigned columns[] = { 26, 10, 9, 10, 9, 9, 2 };
	struct view_table table = { .columns = columns, .ncolumns = ARRAY_SIZE(columns) };
	view_table_addf(&table, "  %-24s %9s %8s %9s %8s %8s  %s", "thread", "life s", "running", "runnable", "blocked",
			"handler", "blocked on");
	size_t *order;
	size_t n = threads_by_life(t, &order), shown = n < o->top ? n : o->top;
	for (size_t k = 0; k < shown; k++) {
		const struct timeline_thread *th = timeline_thread(t, order[k]);
		uint64_t life = life_of(th);
		struct strbuf causes = { 0 };
		blocked_causes(th, &causes);
		snprintf(buf, sizeof(buf), "%s %u/%u", PRINTABLE(view_thread_comm(p, th->pid, th->tid)), th->pid, th->tid);
		char cell[200];
		int pad;
		const char *name = view_text_cell(o, buf, 24, cell, sizeof(cell), &pad);
		view_table_addf(&table, "  %-*s %9.3f %7.1f%% %8.1f%% %7.1f%% %7.1f%%  %s", pad, name, (double)life / 1e9,
				share(th->ns[TIMELINE_RUNNING], life),
				share(th->ns[TIMELINE_RUNNABLE], life), share(th->ns[TIMELINE_BLOCKED], life),
				share(th->ns[TIMELINE_SIGNAL_HANDLER], life), causes.len ? causes.buf : "-");
		sb_free(&causes);
	}
	view_table_print(&table, o, out);
	if (shown < n)
		fprintf(out, "  ... %zu more threads (-n N lists more; --tid TID reports one)\n", n - shown);
	/* the longest-lived threads' heaviest wall-clock stacks */
	unsigned per_thread = o->stacks_per_path ? o->stacks_per_path : 3;
	struct stack_line_style style = { .separator = " <- ", .max_frames = 6, .user_frames = true, .more = " <- ..." };
	for (size_t k = 0; k < shown && k < WALL_THREADS_WITH_STACKS; k++) {
		const struct timeline_thread *th = timeline_thread(t, order[k]);
		size_t *entries;
		size_t ne = thread_wall(t, order[k], &entries);
		fprintf(out, "  %s %u/%u, top wall-clock stacks:\n", PRINTABLE(view_thread_comm(p, th->pid, th->tid)), th->pid,
			th->tid);
		for (size_t e = 0; e < ne && e < per_thread; e++) {
			const struct timeline_wall *w = timeline_wall_entry(t, entries[e]);
			struct strbuf line = { 0 };
			sb_addf(&line, "%5.1f%% %9s  %s", share(w->ns, life_of(th)), findings_duration(w->ns, when, sizeof(when)),
				report_wall_root(p, th->pid, w->state, w->cause, w->signal, w->detail, buf, sizeof(buf)));
			if (w->stack != TIMELINE_NO_STACK) {
				sb_addstr(&line, " ");
				view_stack_line(p, w->stack, &style, &line);
			} else if (w->state == TIMELINE_RUNNING || w->state == TIMELINE_SIGNAL_HANDLER) {
				sb_addstr(&line, " (no cpu sample in these spans)");
			}
			view_text_wrapped(o, out, 22, "    %s\n", line.buf);
			sb_free(&line);
		}
		free(entries);
	}
	free(order);
}

/*
 * The first screen's finding: the thread whose one state (blocked per cause
 * or futex word, runnable, signal handler) takes the largest part of its
 * life, when that is half of it or more.  Neither running (the cpu
 * collector's) nor blocked on "other" (no cause known) counts.
 */
void report_timeline_findings(const struct profile *p, struct findings *f)
{
	const struct timeline *t = p->timeline;
	uint64_t all = 0, best_ns = 0;
	size_t best_thread = 0;
	const struct timeline_wall *best = NULL;
	for (size_t i = 0; i < timeline_thread_count(t); i++)
		all += life_of(timeline_thread(t, i));
	/* per thread and root frame: the wall entries of one root add up */
	for (size_t i = 0; i < timeline_thread_count(t); i++) {
		const struct timeline_thread *th = timeline_thread(t, i);
		size_t *entries;
		size_t ne = thread_wall(t, i, &entries);
		for (size_t a = 0; a < ne; a++) {
			const struct timeline_wall *w = timeline_wall_entry(t, entries[a]);
			/* running is the cpu collector's; blocked on "other" names no cause (mostly a parent waiting for its children) */
			if (w->state == TIMELINE_RUNNING || (w->state == TIMELINE_BLOCKED && w->cause == TIMELINE_CAUSE_OTHER))
				continue;
			uint64_t ns = 0;
			for (size_t b = 0; b < ne; b++) {
				const struct timeline_wall *o = timeline_wall_entry(t, entries[b]);
				if (o->state == w->state && o->cause == w->cause && o->detail == w->detail && o->signal == w->signal)
					ns += o->ns;
			}
			if (ns * 2 >= life_of(th) && ns > best_ns) {
				best_ns = ns;
				best = w;
				best_thread = i;
			}
		}
		free(entries);
	}
	if (!best)
		return;
	const struct timeline_thread *th = timeline_thread(t, best_thread);
	char root[200], life[32], spent[32];
	report_wall_root(p, th->pid, best->state, best->cause, best->signal, best->detail, root, sizeof(root));
	findings_add(f, 0, all ? (double)best_ns / (double)all : FINDING_SHARE_UNKNOWN, "the Wall clock section",
		     "wall clock: thread %s %u/%u spent %.0f%% of its %s %s (%s)", PRINTABLE(view_thread_comm(p, th->pid, th->tid)),
		     th->pid, th->tid, share(best_ns, life_of(th)), findings_duration(life_of(th), life, sizeof(life)), root,
		     findings_duration(best_ns, spent, sizeof(spent)));
}

/* ---- Chrome trace events (--trace-event FILE) ---- */

/* Microseconds from the recording's start, with the ns kept: what the format's "ts" and "dur" hold. */
static void trace_time(struct json_writer *w, const char *key, uint64_t ns)
{
	json_double(w, key, (double)ns / 1e3, 3);
}

static void trace_metadata(struct json_writer *w, const char *name, uint32_t pid, uint32_t tid, const char *value)
{
	json_object_begin(w, NULL);
	json_string(w, "name", name);
	json_string(w, "ph", "M");
	json_u64(w, "pid", pid);
	json_u64(w, "tid", tid);
	json_object_begin(w, "args");
	json_string(w, "name", value);
	json_end(w);
	json_end(w);
}

static void trace_span(struct json_writer *w, const struct profile *p, const struct timeline_thread *th,
		       const struct timeline_span *s, uint64_t origin)
{
	char root[200];
	struct stack_line_style style = { .separator = " <- ", .max_frames = 12, .more = " <- ..." };
	json_object_begin(w, NULL);
	json_string(w, "name", report_wall_root(p, th->pid, s->state, s->cause, s->signal, s->detail, root, sizeof(root)));
	json_string(w, "cat", timeline_state_key(s->state));
	json_string(w, "ph", "X");
	trace_time(w, "ts", s->start - origin);
	trace_time(w, "dur", s->end - s->start);
	json_u64(w, "pid", th->pid);
	json_u64(w, "tid", th->tid);
	json_object_begin(w, "args");
	if (s->state == TIMELINE_BLOCKED)
		json_string(w, "cause", timeline_cause_key(s->cause));
	if (s->state == TIMELINE_BLOCKED && s->cause == TIMELINE_CAUSE_FUTEX && s->detail)
		json_hex(w, "word", s->detail);
	if (s->signal)
		json_string(w, "signal", signal_name(s->signal, root, sizeof(root)));
	if (s->stack != TIMELINE_NO_STACK) {
		struct strbuf line = { 0 };
		view_stack_line(p, s->stack, &style, &line);
		json_string(w, "stack", line.buf ? line.buf : "");
		sb_free(&line);
	}
	json_end(w);
	json_end(w);
}

/* An instant event on a thread: a signal handler's start, a waking. */
static void trace_instant(struct json_writer *w, const char *name, const char *cat, const struct timeline_thread *th,
			  uint64_t ns)
{
	json_object_begin(w, NULL);
	json_string(w, "name", name);
	json_string(w, "cat", cat);
	json_string(w, "ph", "i");
	json_string(w, "s", "t");
	trace_time(w, "ts", ns);
	json_u64(w, "pid", th->pid);
	json_u64(w, "tid", th->tid);
	json_end(w);
}

static void write_trace_events(const struct profile *p, FILE *out)
{
	const struct timeline *t = p->timeline;
	struct json_writer w;
	json_init_compact(&w, out);
	json_object_begin(&w, NULL);
	json_array_begin(&w, "traceEvents");
	uint64_t origin = UINT64_MAX;
	for (size_t i = 0; i < timeline_thread_count(t); i++)
		if (timeline_thread(t, i)->start < origin)
			origin = timeline_thread(t, i)->start;
	uint32_t last_pid = 0;
	char name[200];
	for (size_t i = 0; i < timeline_thread_count(t); i++) {
		const struct timeline_thread *th = timeline_thread(t, i);
		if (i == 0 || th->pid != last_pid) {
			trace_metadata(&w, "process_name", th->pid, th->pid, view_thread_comm(p, th->pid, th->pid));
			last_pid = th->pid;
		}
		trace_metadata(&w, "thread_name", th->pid, th->tid, view_thread_comm(p, th->pid, th->tid));
		size_t n;
		const struct timeline_span *s = timeline_spans(t, i, &n);
		for (size_t k = 0; k < n; k++) {
			trace_span(&w, p, th, &s[k], origin);
			if (s[k].signal && (k == 0 || s[k - 1].signal != s[k].signal)) /* a handler starts */
				trace_instant(&w, signal_name(s[k].signal, name, sizeof(name)), "signal", th, s[k].start - origin);
			if (s[k].state == TIMELINE_RUNNABLE && s[k].woken)
				trace_instant(&w, "woken", "wake", th, s[k].start - origin);
		}
	}
	json_end(&w);
	json_string(&w, "displayTimeUnit", "ns");
	json_object_begin(&w, "otherData");
	json_string(&w, "producer", "sigprof report --trace-event");
	json_string(&w, "file", p->file);
	json_u64(&w, "origin_ns", origin == UINT64_MAX ? 0 : origin);
	json_end(&w);
	json_finish(&w);
}

int report_no_threads_followed(const struct profile *p, const char *option)
{
	if (p->filters[0])
		return sp_error("report: %s: %s: the filters (%s) kept no thread of the workload", option, p->file,
				p->filters);
	return sp_error("report: %s: %s: no thread of the workload was followed (the recording has no context switch: "
			"record with the sched collector)", option, p->file);
}

int report_trace_event_file(const struct profile *p, const char *path)
{
	if (!timeline_thread_count(p->timeline))
		return report_no_threads_followed(p, "--trace-event");
	struct safe_output out;
	int err = safe_output_open(path, 0644, &out);
	if (err == -EEXIST)
		return sp_error("report: --trace-event %s: it exists and is not a regular file (a link, device, FIFO or "
				"directory): sigprof writes only a regular file", QUOTED(path));
	if (err < 0)
		return sp_error("report: --trace-event %s: cannot create it: %s", QUOTED(path), strerror(-err));
	write_trace_events(p, out.fp);
	err = safe_output_commit(&out);
	if (err < 0)
		return sp_error("report: --trace-event %s: writing it failed: %s", QUOTED(path), strerror(-err));
	return 0;
}
