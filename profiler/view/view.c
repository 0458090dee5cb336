/*
 * view.c: what a collector's report side reads of a loaded profile (view.h),
 * and the one way each output prints a frame and a stack.
 *
 * The accessors are thin on purpose: they keep struct profile out of the
 * collectors, so that a change to the model's fields touches this file and
 * the commands, not every collector.
 */
#include <math.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "sigprof/model/filter.h"
#include "sigprof/base/json.h"
#include "sigprof/model/profile.h"
#include "sigprof/base/runstats.h"
#include "sigprof/base/term.h"
#include "sigprof/base/durations.h"
#include "sigprof/base/util.h"
#include "sigprof/view/view.h"
#include "sigprof/base/hashmap.h"
#include "sigprof/base/string_pool.h"

/* ---- the collector's own figures ---- */

bool view_collector_ok(const struct profile *p, int self)
{
	return self >= 0 && self < p->ncollectors && p->collectors[self].ok;
}

uint32_t view_stack_moved(void *profile, uint32_t stack)
{
	const struct profile *p = profile;
	return stack < p->nstacks_moved ? p->stacks_moved_to[stack] : stack;
}

uint64_t view_collector_samples(const struct profile *p, int self)
{
	return p->collectors[self].samples;
}

uint64_t view_collector_path_samples(const struct profile *p, int self, int path)
{
	return p->collectors[self].path_samples[path];
}

/* ---- events ---- */

size_t view_event_count(const struct profile *p)
{
	return p->events.count;
}

const struct sp_event *view_event(const struct profile *p, size_t i)
{
	return &p->events.events[i];
}

uint64_t view_event_unsampled_hits(const struct profile *p, size_t i)
{
	return profile_unsampled_hits_of(p, i);
}

bool view_records_filtered(const struct profile *p)
{
	return filter_drops(p->filter);
}

const struct tep_event *view_tracepoint_of(const struct profile *p, const struct sp_sample *s)
{
	return tracepoint_of(&p->tracepoints, s);
}

/* ---- stacks and frames ---- */

uint64_t view_stack_count(const struct profile *p, uint32_t stack)
{
	return p->stacks.stacks[stack].count;
}

int view_stack_path(const struct profile *p, uint32_t stack)
{
	return p->stacks.stacks[stack].path;
}

uint32_t view_stack_depth(const struct profile *p, uint32_t stack)
{
	return p->stacks.stacks[stack].nframes;
}

const struct frame *view_stack_frame(const struct profile *p, uint32_t stack, uint32_t i)
{
	const struct stack *s = &p->stacks.stacks[stack];
	return &p->stacks.frames[stack_frames(&p->stacks, s)[i]];
}

const struct frame *view_frame(const struct profile *p, uint32_t frame)
{
	return &p->stacks.frames[frame];
}

/* ---- weights ---- */

bool view_weights_wanted(const struct profile *p)
{
	return p->weights != NULL;
}

bool view_task_in_workload(const struct profile *p, uint32_t pid)
{
	return !p->workload_pid || u64_map_get(&p->workload_pids, pid) != NULL;
}

void view_add_weight(const struct profile *p, int self, uint32_t stack, uint32_t pid, uint32_t tid, int signal,
		     uint64_t word, unsigned kind, uint64_t value)
{
	if (!p->weights || self < 0 || WEIGHT_OWN + kind >= WEIGHT_MAX)
		return;
	struct weight_key key = { .collector = (uint32_t)self, .stack = stack, .pid = pid, .tid = tid,
				  .comm = proc_table_thread_comm_of(p->procs, pid, tid), .signal = signal, .word = word };
	weight_table_add(p->weights, &key, WEIGHT_OWN + kind, value);
}

/* ---- data addresses ---- */

bool view_kernel_address(uint64_t addr)
{
	return addr >= 0xffff800000000000ull;
}

const char *view_user_data_name(const struct profile *p, uint32_t pid, uint64_t addr, char *buf, size_t len,
				const char **dso)
{
	proc_table_data_name(p->procs, pid, addr, buf, len, dso);
	return buf;
}

bool view_shared_offset(const struct profile *p, uint32_t pid, uint64_t addr, uint64_t *object, uint64_t *offset)
{
	return proc_table_shared_offset(p->procs, pid, addr, object, offset);
}

const char *view_data_name(const struct profile *p, uint32_t pid, uint64_t addr, char *buf, size_t len,
			   const char **dso)
{
	const char *unused;
	if (!dso)
		dso = &unused;
	if (!view_kernel_address(addr))
		return view_user_data_name(p, pid, addr, buf, len, dso);
	struct dso *kernel = proc_table_kernel(p->procs);
	struct symtab *tab = dso_symtab(kernel);
	const struct sym *sym = tab ? symtab_lookup(tab, SYM_DATA, addr) : NULL;
	*dso = kernel->name;
	if (sym && addr > sym->start)
		snprintf(buf, len, "%s+0x%llx", PRINTABLE(sym->name), (unsigned long long)(addr - sym->start));
	else if (sym)
		snprintf(buf, len, "%s", PRINTABLE(sym->name));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}

const char *view_data_marked_by(const struct profile *p, uint32_t pid, uint64_t start, uint64_t end)
{
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->state && ci->impl->analyzer->marks_data &&
		    ci->impl->analyzer->marks_data(ci->state, pid, start, end))
			return ci->name;
	}
	return NULL;
}

bool view_pending_futex_word(const struct profile *p, uint32_t tid, uint64_t time, uint32_t *pid, uint64_t *uaddr)
{
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->state && ci->impl->analyzer->pending_futex_word &&
		    ci->impl->analyzer->pending_futex_word(ci->state, tid, time, pid, uaddr))
			return true;
	}
	return false;
}

const char *view_thread_comm(const struct profile *p, uint32_t pid, uint32_t tid)
{
	const char *comm = proc_table_thread_comm_of(p->procs, pid, tid);
	return comm ? comm : "?";
}

bool view_sched_event_of(const struct profile *p, const struct sp_sample *s, struct sched_event_facts *out)
{
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->state && ci->impl->analyzer->sched_event && ci->impl->analyzer->sched_event(ci->state, p, s, out))
			return true;
	}
	return false;
}

/* ---- labels ---- */

const char *view_dso_build_id(const struct profile *p, const char *dso)
{
	struct dso *d = proc_table_dso_named(p->procs, dso);
	if (!d || d->is_kernel || !d->load_tried)
		return NULL; /* never loads a file only to name it */
	return symtab_build_id(d->symtab);
}

const char *dso_short_name(const char *dso)
{
	const char *slash = strrchr(dso, '/');
	return slash && slash[1] ? slash + 1 : dso;
}

/*
 * The labels below are a recording's words (a symbol, a file name, a
 * comm in "[unwind: ...]"): every output shows them through the one
 * escaping rule (printable_text(), docs/security.md), so that no symbol
 * or file name reaches a terminal as an escape sequence.
 */
const char *frame_label(const struct frame *f, char *buf, size_t buflen)
{
	if (f->sym)
		return printable_text(f->sym, buf, buflen);
	snprintf(buf, buflen, "%s+0x%llx", PRINTABLE(dso_short_name(f->dso)), (unsigned long long)f->addr);
	return buf;
}

const char *frame_merged_label(const struct frame *f, char *buf, size_t buflen)
{
	if (f->sym)
		return printable_text(f->sym, buf, buflen);
	if (f->dso[0] == '[')
		return printable_text(f->dso, buf, buflen);
	snprintf(buf, buflen, "[%s]", PRINTABLE(dso_short_name(f->dso)));
	return buf;
}

const char *frame_srcline(const struct frame *f, char *buf, size_t buflen)
{
	if (!f->srcfile)
		return NULL;
	snprintf(buf, buflen, "%s:%u", PRINTABLE(dso_short_name(f->srcfile)), f->line);
	return buf;
}

const char *path_figure_key(const char *collector, const struct path_figure *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", collector, f->key ? f->key : f->column);
	for (char *k = buf; *k; k++)
		*k = *k == ' ' ? '_' : *k;
	return buf;
}

/* ---- times and the slowest events ---- */

const char *view_time(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%06llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull / 1000));
	return buf;
}

void view_text_slowest(const struct view_options *o, FILE *out, const char *what, const struct slowest_event *s)
{
	if (!s->start)
		return;
	char start[32], end[32];
	view_time(s->start, start, sizeof(start));
	view_time(s->end, end, sizeof(end));
	char *line, *command;
	if (asprintf(&line, "  slowest %s: %.3f ms, tid %u, %s to %s", what, (double)s->ns / 1e6, s->tid, start, end) < 0)
		return;
	if (asprintf(&command, "(sigprof script --tid %u --time %s,%s)", s->tid, start, end) < 0) {
		free(line);
		return;
	}
	/* too wide: the command on a line of its own, whole where it fits, for copying */
	if (!o->width || term_columns(line) + 1 + term_columns(command) <= o->width) {
		fprintf(out, "%s %s\n", line, command);
	} else {
		view_text_wrapped(o, out, 4, "%s", line);
		view_text_wrapped(o, out, 4, "    %s", command);
	}
	free(line);
	free(command);
}

void view_json_slowest(struct json_writer *w, const char *key, const struct slowest_event *s)
{
	if (!s->start) {
		json_null(w, key);
		return;
	}
	char start[32], end[32], both[64];
	snprintf(both, sizeof(both), "%s,%s", view_time(s->start, start, sizeof(start)),
		 view_time(s->end, end, sizeof(end)));
	json_object_begin(w, key);
	json_u64(w, "ns", s->ns);
	json_u64(w, "start_ns", s->start);
	json_u64(w, "end_ns", s->end);
	if (s->pid)
		json_u64(w, "pid", s->pid);
	json_u64(w, "tid", s->tid);
	json_string(w, "script_time", both);
	json_end(w);
}

/* ---- stack writers ---- */

int view_frame_paint(const struct frame *f)
{
	if (f->synthetic)
		return PAINT_MARK;
	return f->kernel ? PAINT_KERNEL : PAINT_USER;
}

#define FRAME_INDENT 8
#define FRAME_LABEL_COLUMNS 48

void view_text_frame(FILE *out, const struct frame *f, const struct view_options *o)
{
	char buf[256], label[300], source[256], cut[320], where[320], cut_where[340];
	snprintf(label, sizeof(label), "%s%s", frame_label(f, buf, sizeof(buf)), f->inlined ? " (inlined)" : "");
	const char *srcline = frame_srcline(f, source, sizeof(source));
	snprintf(where, sizeof(where), "%s%s%s", PRINTABLE(dso_short_name(f->dso)), srcline ? "  " : "",
		 srcline ? srcline : "");
	size_t label_cols = FRAME_LABEL_COLUMNS, where_cols = term_columns(where);
	const char *shown = label, *shown_where = where;
	if (o->width) {
		/* the label gets what the dso leaves, at least half the line; then the dso what is left */
		size_t room = o->width > FRAME_INDENT + 1 ? o->width - FRAME_INDENT - 1 : 1;
		size_t for_label = room > where_cols ? room - where_cols : 0;
		if (for_label < room / 2)
			for_label = room / 2;
		shown = term_cut(label, for_label, cut, sizeof(cut));
		if (label_cols > for_label)
			label_cols = for_label;
		size_t used = term_columns(shown) > label_cols ? term_columns(shown) : label_cols;
		shown_where = term_cut(where, room > used ? room - used : 1, cut_where, sizeof(cut_where));
	}
	size_t pad = label_cols > term_columns(shown) ? label_cols - term_columns(shown) : 0;
	fprintf(out, "%*s%s%s%s%*s %s%s%s\n", FRAME_INDENT, "", term_on(o->color, view_frame_paint(f)), shown,
		term_off(o->color), (int)pad, "", term_on(o->color, PAINT_DIM), shown_where, term_off(o->color));
}

void view_text_stack(const struct profile *p, uint32_t stack, const struct view_options *o, FILE *out)
{
	uint32_t depth = view_stack_depth(p, stack);
	for (uint32_t i = 0; i < depth && i < o->max_frames; i++)
		view_text_frame(out, view_stack_frame(p, stack, i), o);
	if (depth <= o->max_frames)
		return;
	/* a stack that stops early says why in its last frame: that one stays in sight */
	const struct frame *last = view_stack_frame(p, stack, depth - 1);
	bool why = frame_is_unwind_stop(last);
	uint32_t hidden = depth - o->max_frames - why;
	if (hidden)
		fprintf(out, "%*s... %u more frame%s\n", FRAME_INDENT, "", hidden, hidden == 1 ? "" : "s");
	if (why)
		view_text_frame(out, last, o);
}

void view_stack_line(const struct profile *p, uint32_t stack, const struct stack_line_style *style,
		     struct strbuf *sb)
{
	uint32_t depth = view_stack_depth(p, stack);
	uint32_t first = 0;
	if (style->user_frames) {
		while (first < depth && view_stack_frame(p, stack, first)->kernel)
			first++;
		if (first == depth)
			first = 0; /* a kernel thread, an interrupt without user context: its kernel frames */
	}
	char buf[256];
	uint32_t shown = 0;
	for (uint32_t i = first; i < depth && (!style->max_frames || shown < style->max_frames); i++, shown++) {
		if (shown)
			sb_addstr(sb, style->separator);
		sb_addstr(sb, frame_label(view_stack_frame(p, stack, i), buf, sizeof(buf)));
	}
	if (first + shown < depth && style->more)
		sb_addstr(sb, style->more);
}

/* A stack's frame labels as view_stack_line() shows them (from the first user frame), leaf first. */
struct stack_labels {
	struct strbuf text; /* the labels, '\0' between them */
	const char **frame;
	size_t n;
};

static void stack_labels(const struct profile *p, uint32_t stack, bool user_frames, struct stack_labels *l)
{
	const struct stack_line_style whole = { .separator = "\n", .user_frames = user_frames };
	view_stack_line(p, stack, &whole, &l->text);
	char *s = l->text.buf ? l->text.buf : "";
	size_t n = 1;
	for (char *c = s; *c; c++)
		n += *c == '\n';
	l->frame = xcalloc(n, sizeof(*l->frame));
	l->n = 0;
	if (!*s)
		return;
	l->frame[l->n++] = s;
	for (char *c = s; *c; c++)
		if (*c == '\n') {
			*c = '\0';
			l->frame[l->n++] = c + 1;
		}
}

/* The first frame where a and b read differently: the shorter one's depth when one goes on from the other. */
static size_t first_difference(const struct stack_labels *a, const struct stack_labels *b)
{
	size_t k = 0;
	while (k < a->n && k < b->n && strcmp(a->frame[k], b->frame[k]) == 0)
		k++;
	return k;
}

/* s cut at its start to width columns ("…" then its end) into row. */
static void cut_at_start(struct strbuf *row, size_t width)
{
	const char *text = row->buf ? row->buf : "";
	if (!width || term_columns(text) <= width)
		return;
	while (*text && term_columns(text) > width - 1) {
		text++;
		while ((*text & 0xc0) == 0x80)
			text++; /* a whole UTF-8 character at a time */
	}
	char *kept = xstrdup(text);
	sb_reset(row);
	sb_addf(row, "\u2026%s", kept);
	free(kept);
}

/*
 * The row of a stack alike others: its first frame (when lead), each
 * marked frame (with its caller when callers), "…" for the frames left out.
 */
static void parting_frames(const struct stack_labels *l, const bool *marked, const struct stack_line_style *style,
			   bool lead, bool callers, struct strbuf *row)
{
	bool started = false;
	size_t last = 0;
	for (size_t k = 0; k < l->n; k++) {
		if (!(k == 0 && lead) && !marked[k] && !(callers && k && marked[k - 1]))
			continue;
		if (!started && k)
			sb_addf(row, "\u2026%s", style->separator);
		else if (started && k > last + 1)
			sb_addf(row, "%s\u2026%s", style->separator, style->separator);
		else if (started)
			sb_addstr(row, style->separator);
		sb_addstr(row, l->frame[k]);
		started = true;
		last = k;
	}
	if (l->n && last + 1 < l->n && style->more)
		sb_addstr(row, style->more);
}

/*
 * That row within width: whole when it fits, else without its first
 * frame, else without the callers too, else that cut at its start.
 */
static void parting_row(const struct stack_labels *l, const bool *marked, const struct stack_line_style *style,
			size_t width, struct strbuf *row)
{
	static const bool lead[] = { true, false, false }, callers[] = { true, true, false };
	for (size_t i = 0; i < ARRAY_SIZE(lead); i++) {
		sb_reset(row);
		parting_frames(l, marked, style, lead[i], callers[i], row);
		if (!width || term_columns(row->buf ? row->buf : "") <= width)
			return;
	}
	cut_at_start(row, width);
}

void view_stack_rows(const struct profile *p, const uint32_t *stacks, size_t n,
		     const struct stack_line_style *style, size_t width, struct strbuf *rows)
{
	char cut[1024];
	struct strbuf line = { 0 };
	for (size_t i = 0; i < n; i++) {
		sb_reset(&line);
		view_stack_line(p, stacks[i], style, &line);
		sb_reset(&rows[i]);
		sb_addstr(&rows[i], term_cut(line.buf ? line.buf : "", width, cut, sizeof(cut)));
	}
	sb_free(&line);
	/* group[i]: the first row reading as row i; alike rows share one */
	size_t *group = xcalloc(n ? n : 1, sizeof(*group));
	bool *alike = xcalloc(n ? n : 1, sizeof(*alike));
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		group[i] = i;
		for (size_t j = 0; j < i && group[i] == i; j++)
			if (strcmp(rows[i].buf ? rows[i].buf : "", rows[j].buf ? rows[j].buf : "") == 0) {
				group[i] = group[j];
				any = alike[i] = alike[j] = true;
			}
	}
	if (!any) {
		free(alike);
		free(group);
		return;
	}
	struct stack_labels *labels = xcalloc(n, sizeof(*labels));
	for (size_t i = 0; i < n; i++)
		if (alike[i])
			stack_labels(p, stacks[i], style->user_frames, &labels[i]);
	for (size_t i = 0; i < n; i++) {
		if (!alike[i])
			continue;
		bool *marked = xcalloc(labels[i].n + 1, sizeof(*marked));
		bool parts = false;
		for (size_t j = 0; j < n; j++) {
			if (j == i || group[j] != group[i])
				continue;
			size_t k = first_difference(&labels[i], &labels[j]);
			if (k >= labels[i].n && k >= labels[j].n)
				continue; /* the same labels: the same row */
			/* where i stops and j goes on, i's last frame (and no "more") tells them apart */
			marked[k < labels[i].n ? k : labels[i].n - 1] = true;
			parts = true;
		}
		if (parts)
			parting_row(&labels[i], marked, style, width, &rows[i]);
		free(marked);
	}
	for (size_t i = 0; i < n; i++) {
		sb_free(&labels[i].text);
		free(labels[i].frame);
	}
	free(labels);
	free(alike);
	free(group);
}

void view_json_frame_source(struct json_writer *w, const struct frame *f)
{
	char buf[256];
	if (frame_srcline(f, buf, sizeof(buf))) {
		json_string(w, "srcline", buf);
		json_string(w, "file", f->srcfile);
		json_u64(w, "line", f->line);
	}
	if (f->inlined)
		json_bool(w, "inlined", true);
}

void view_json_frame(struct json_writer *w, const struct frame *f)
{
	char buf[256];
	json_object_begin(w, NULL);
	json_string(w, "sym", frame_label(f, buf, sizeof(buf)));
	json_string(w, "dso", f->dso);
	if (!f->sym) {
		json_hex(w, "offset", f->addr);
	}
	if (f->synthetic)
		json_bool(w, "synthetic", true);
	view_json_frame_source(w, f);
	json_end(w);
}

void view_json_stack(struct json_writer *w, const struct profile *p, uint32_t stack)
{
	uint32_t depth = view_stack_depth(p, stack);
	json_array_begin(w, "frames");
	for (uint32_t k = 0; k < depth; k++)
		view_json_frame(w, view_stack_frame(p, stack, k));
	json_end(w);
}

void view_json_durations(struct json_writer *w, const char *key, const struct duration_stats *d)
{
	json_object_begin(w, key);
	json_u64(w, "count", d->count);
	json_u64(w, "total", d->total);
	json_u64(w, "max", d->max);
	json_u64(w, "p50", duration_quantile(d, 0.5));
	json_u64(w, "p99", duration_quantile(d, 0.99));
	json_end(w);
}

/* ---- sorted views ---- */

/* qsort has no context argument: the profile and key being sorted by (the report is single-threaded). */
static const struct profile *sort_profile;
static enum function_sort sort_key;

static int compare_functions(const void *a, const void *b)
{
	const struct function_row *x = a, *y = b;
	if (sort_key == SORT_NAME) {
		char bx[128], by[128];
		const struct frame *fx = &sort_profile->stacks.frames[x->frame];
		const struct frame *fy = &sort_profile->stacks.frames[y->frame];
		int c = strcmp(frame_label(fx, bx, sizeof(bx)), frame_label(fy, by, sizeof(by)));
		if (c)
			return c;
	}
	uint64_t kx = sort_key == SORT_TOTAL ? x->total : x->self;
	uint64_t ky = sort_key == SORT_TOTAL ? y->total : y->self;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/*
 * --percent-limit (filter.h) as a count: rows of collector below it are
 * not listed.  0 without the option.
 */
static uint64_t percent_floor(const struct profile *p, int collector)
{
	if (!p->filter || p->filter->percent_limit <= 0 || collector < 0 || collector >= p->ncollectors)
		return 0;
	return (uint64_t)ceil((double)p->collectors[collector].samples * p->filter->percent_limit / 100.0);
}

bool view_path_shown(const struct profile *p, int path)
{
	if (!p->filter || p->filter->percent_limit <= 0)
		return true;
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->ok && ci->samples && ci->path_samples[path] >= percent_floor(p, c))
			return true;
	}
	return false;
}

size_t view_functions(const struct profile *p, int collector, enum function_sort sort, struct function_row **rows)
{
	const struct stack_table *t = &p->stacks;
	struct function_row *all = xcalloc(t->nframes + 1, sizeof(*all));
	uint32_t *seen = xcalloc(t->nframes + 1, sizeof(*seen));
	for (size_t s = 0; s < t->nstacks; s++) {
		const struct stack *st = &t->stacks[s];
		if ((int)st->collector != collector || !st->nframes)
			continue;
		const uint32_t *frames = stack_frames(t, st);
		all[frames[0]].self += st->count;
		for (uint32_t i = 0; i < st->nframes; i++) {
			if (seen[frames[i]] == s + 1)
				continue; /* recursion: count a function once per stack */
			seen[frames[i]] = (uint32_t)s + 1;
			all[frames[i]].total += st->count;
		}
	}
	size_t n = 0;
	uint64_t floor = percent_floor(p, collector);
	for (size_t f = 0; f < t->nframes; f++)
		if (all[f].total && all[f].total >= floor) {
			all[n] = all[f];
			all[n++].frame = (uint32_t)f;
		}
	free(seen);
	sort_profile = p;
	sort_key = sort;
	sort_items(all, n, sizeof(*all), compare_functions);
	*rows = all;
	return n;
}

static int compare_stack_ids(const void *a, const void *b)
{
	const struct stack *x = &sort_profile->stacks.stacks[*(const uint32_t *)a];
	const struct stack *y = &sort_profile->stacks.stacks[*(const uint32_t *)b];
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

size_t view_stacks(const struct profile *p, int collector, int path, uint32_t **ids)
{
	const struct stack_table *t = &p->stacks;
	uint32_t *out = xmalloc((t->nstacks + 1) * sizeof(*out));
	size_t n = 0;
	uint64_t floor = percent_floor(p, collector);
	for (size_t s = 0; s < t->nstacks; s++)
		if ((int)t->stacks[s].collector == collector && (path < 0 || t->stacks[s].path == path) &&
		    /* a stack only lent to other samples (PATH_STACK_ONLY) counts nothing */
		    t->stacks[s].count && t->stacks[s].count >= floor)
			out[n++] = (uint32_t)s;
	sort_profile = p;
	sort_items(out, n, sizeof(*out), compare_stack_ids);
	*ids = out;
	return n;
}

static int compare_named_functions(const void *a, const void *b)
{
	const struct named_function *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->children != y->children)
		return x->children < y->children ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The functions of the stacks ids[0..n) by name: perf-profile keys hold a
 * name only, so the frames one name labels in several files (the program's
 * _start and ld.so's) are one function.  A stack counts once in a name's
 * children however many of its frames bear the name (recursion, or both
 * _starts on one stack), as perf report --children counts a callchain once
 * per entry; LKP adds perf's lines of one name, which is the same while the
 * two never share a stack.  Returns the count; *out and *pool to free.
 */
size_t view_functions_by_name(const struct profile *p, const uint32_t *ids, size_t n, struct named_function **out,
				struct string_pool **pool)
{
	struct u64_map index = { 0 };
	struct named_function *fns = NULL;
	size_t count = 0, cap = 0;
	char label[256];
	*pool = string_pool_new();
	for (size_t i = 0; i < n; i++) {
		uint64_t samples = view_stack_count(p, ids[i]);
		uint32_t depth = view_stack_depth(p, ids[i]);
		for (uint32_t k = 0; k < depth; k++) {
			const struct frame *f = view_stack_frame(p, ids[i], k);
			if (f->synthetic)
				continue;
			const char *name = string_intern(*pool, frame_label(f, label, sizeof(label)));
			void *slot = u64_map_get(&index, (uint64_t)(uintptr_t)name);
			if (!slot) {
				GROW(fns, cap, count + 1);
				fns[count++] = (struct named_function){ .name = name };
				slot = (void *)(uintptr_t)count;
				u64_map_put(&index, (uint64_t)(uintptr_t)name, slot);
			}
			struct named_function *fn = &fns[(uintptr_t)slot - 1];
			if (k == 0)
				fn->self += samples;
			if (fn->last_stack != i + 1) {
				fn->last_stack = i + 1;
				fn->children += samples;
			}
		}
	}
	u64_map_free(&index);
	if (count)
		sort_items(fns, count, sizeof(*fns), compare_named_functions);
	*out = fns;
	return count;
}

/* ---- keyed figures ---- */

static uint64_t figure_key_hash(const char *key)
{
	return hash_bytes(key, strlen(key), 0x5167f1e5);
}

/* The index of the row key names, or -1. */
static ssize_t figure_row_index(const struct figure_rows *rows, const char *key)
{
	void *v = u64_map_get(&rows->index, figure_key_hash(key));
	if (!v)
		return -1;
	size_t i = (size_t)(uintptr_t)v - 1;
	if (strcmp(rows->rows[i].key, key) == 0)
		return (ssize_t)i;
	/* two keys of one hash (never seen): the later ones are not in the index */
	for (i = 0; i < rows->count; i++)
		if (strcmp(rows->rows[i].key, key) == 0)
			return (ssize_t)i;
	return -1;
}

const struct figure_row *figure_rows_find(const struct figure_rows *rows, const char *key)
{
	ssize_t i = figure_row_index(rows, key);
	return i < 0 ? NULL : &rows->rows[i];
}

/* The formatted key, its control characters escaped: it names symbols and files of the recording (sb_add_printable). */
static char *figure_key(const char *key_fmt, va_list ap)
{
	char *key;
	if (vasprintf(&key, key_fmt, ap) < 0)
		key = xstrdup(key_fmt); /* out of memory for the formatted key: xstrdup aborts with a message */
	struct strbuf shown = { 0 };
	sb_add_printable(&shown, key);
	if (!shown.buf || strcmp(shown.buf, key) == 0) {
		sb_free(&shown);
		return key;
	}
	free(key);
	return shown.buf;
}

/* Add the row whose key (allocated) is listed nowhere yet. */
static void figure_rows_append(struct figure_rows *rows, char *key, double value, const char *unit, bool exact)
{
	GROW(rows->rows, rows->cap, rows->count + 1);
	rows->rows[rows->count++] = (struct figure_row){ .key = key, .value = value, .unit = unit, .exact = exact };
	uint64_t hash = figure_key_hash(key);
	if (!u64_map_get(&rows->index, hash))
		u64_map_put(&rows->index, hash, (void *)(uintptr_t)rows->count);
}

int figure_rows_add(struct figure_rows *rows, double value, const char *unit, bool exact, const char *key_fmt, ...)
{
	va_list ap;
	va_start(ap, key_fmt);
	char *key = figure_key(key_fmt, ap);
	va_end(ap);
	if (figure_row_index(rows, key) >= 0) {
		free(key);
		rows->refused++;
		return -EEXIST;
	}
	figure_rows_append(rows, key, value, unit, exact);
	return 0;
}

int figure_rows_merge(struct figure_rows *rows, enum figure_merge how, double value, const char *unit, bool exact,
		      const char *key_fmt, ...)
{
	va_list ap;
	va_start(ap, key_fmt);
	char *key = figure_key(key_fmt, ap);
	va_end(ap);
	ssize_t i = figure_row_index(rows, key);
	if (i < 0) {
		figure_rows_append(rows, key, value, unit, exact);
		return 0;
	}
	free(key);
	struct figure_row *r = &rows->rows[i];
	if (strcmp(r->unit, unit) != 0) {
		rows->refused++;
		return -EINVAL;
	}
	r->value = how == FIGURE_MAX ? (value > r->value ? value : r->value) : r->value + value;
	r->exact &= exact;
	return 0;
}

void figure_rows_free(struct figure_rows *rows)
{
	for (size_t i = 0; i < rows->count; i++)
		free(rows->rows[i].key);
	free(rows->rows);
	u64_map_free(&rows->index);
	memset(rows, 0, sizeof(*rows));
}

/*
 * The paths whose events are counted exactly, and the rows that count them:
 * a key of the form PREFIX.NAME.SUFFIX (or PREFIX.NAME*.SUFFIX: futex ops
 * beginning with NAME; or ending with it when the pattern starts with '*').
 */
static const struct cost_source {
	int path;
	const char *prefix, *name, *suffix;
} cost_sources[] = {
	{ PATH_SIGRETURN, "signal.", NULL, ".sigreturns" },
	{ PATH_SIGNAL_DELIVER, "signal.", NULL, ".delivered" },
	{ PATH_SIGNAL_GENERATE, "signal.", NULL, ".generated" },
	{ PATH_FUTEX_WAIT, "futex.op.", "WAIT", ".calls" },
	{ PATH_FUTEX_WAKE, "futex.op.", "WAKE", ".calls" },
	{ PATH_FUTEX_REQUEUE, "futex.op.", "*REQUEUE", ".calls" },
};

static bool cost_source_matches(const struct cost_source *src, const char *key)
{
	size_t plen = strlen(src->prefix), klen = strlen(key), slen = strlen(src->suffix);
	if (strncmp(key, src->prefix, plen) != 0 || klen <= plen + slen || strcmp(key + klen - slen, src->suffix) != 0)
		return false;
	const char *name = key + plen;
	size_t nlen = klen - plen - slen;
	if (memchr(name, '.', nlen))
		return false; /* signal.SIGUSR1.latency_us... is not a count of the signal */
	if (!src->name)
		return true;
	if (src->name[0] == '*') {
		size_t want = strlen(src->name + 1);
		return nlen >= want && strncmp(name + nlen - want, src->name + 1, want) == 0;
	}
	return nlen >= strlen(src->name) && strncmp(name, src->name, strlen(src->name)) == 0 &&
	       !(strcmp(src->name, "WAIT") == 0 && nlen >= 16 && strncmp(name, "WAIT_REQUEUE_PI", 15) == 0);
}

/*
 * cost.PATH.self_per_event.FUNC: the CPU time per event of the path spent
 * in FUNC itself (the path's cpu samples whose leaf FUNC is, weighted by
 * the period), for the functions holding at least SELF_PER_EVENT_FLOOR
 * percent of the path's samples and SELF_PER_EVENT_MIN_SAMPLES samples.
 * What moved inside a path whose cost per event moved: diff's summary
 * names the function whose time per event changed most, in ns, where a
 * share of all samples (perf-profile.self) would move with every other
 * path's change too.  Below the minimum the figure moves in whole samples:
 * 3 samples in each of three runs gave 3.75 ns per event every run, 2
 * samples 2.50, which diff's test took for a change without spread.
 */
#define SELF_PER_EVENT_FLOOR 0.5
#define SELF_PER_EVENT_MIN_SAMPLES 20
static void add_self_per_event_rows(const struct profile *p, int cpu, int path, double weight_per_sample_event,
				    const char *unit, struct figure_rows *rows)
{
	uint64_t on_path = p->collectors[cpu].path_samples[path];
	if (!on_path)
		return;
	uint32_t *ids;
	size_t nstacks = view_stacks(p, cpu, path, &ids);
	struct named_function *functions;
	struct string_pool *pool;
	size_t n = view_functions_by_name(p, ids, nstacks, &functions, &pool);
	for (size_t i = 0; i < n; i++)
		if (functions[i].self >= SELF_PER_EVENT_MIN_SAMPLES &&
		    100.0 * (double)functions[i].self / (double)on_path >= SELF_PER_EVENT_FLOOR)
			figure_rows_add(rows, weight_per_sample_event * (double)functions[i].self, unit, false,
					"cost.%s.self_per_event.%s", path_name(path), functions[i].name);
	free(functions);
	string_pool_free(pool);
	free(ids);
}

/*
 * cost.PATH.*: the CPU time (cpu collector: the samples' periods, ns of
 * cpu-clock or cycles) that landed on each path with an exact event count,
 * per event: sigreturn's samples over the sigreturns, and so on.  Built
 * from the rows already listed, so it needs no collector's internals.
 */
static void add_cost_rows(const struct profile *p, struct figure_rows *rows)
{
	int cpu = profile_collector(p, "cpu");
	if (cpu < 0 || !p->collectors[cpu].ok || !p->collectors[cpu].samples || !p->collectors[cpu].weight)
		return;
	const struct collector_info *ci = &p->collectors[cpu];
	bool ns = strcmp(ci->event, "cpu-clock") == 0 || strcmp(ci->event, "task-clock") == 0;
	const char *unit = ns ? "ns" : "cycles", *total_key = ns ? "cpu_ms" : "cpu_cycles";
	double scale = ns ? 1e-6 : 1, per_sample = (double)ci->weight / (double)ci->samples;
	size_t listed = rows->count;
	for (size_t i = 0; i < ARRAY_SIZE(cost_sources); i++) {
		const struct cost_source *src = &cost_sources[i];
		double events = 0;
		bool exact = true, any = false;
		for (size_t r = 0; r < listed; r++)
			if (cost_source_matches(src, rows->rows[r].key)) {
				events += rows->rows[r].value;
				exact &= rows->rows[r].exact;
				any = true;
			}
		if (!any)
			continue;
		double cpu_on_path = per_sample * (double)ci->path_samples[src->path];
		const char *name = path_name(src->path);
		figure_rows_add(rows, events, "count", exact, "cost.%s.events", name);
		figure_rows_add(rows, cpu_on_path * scale, ns ? "ms" : "cycles", false, "cost.%s.%s", name, total_key);
		if (events > 0) {
			figure_rows_add(rows, cpu_on_path / events, unit, false, "cost.%s.%s_per_event", name, unit);
			add_self_per_event_rows(p, cpu, src->path, per_sample / events, unit, rows);
		}
	}
	figure_rows_add(rows, (double)ci->weight * scale, ns ? "ms" : "cycles", false, "cost.total.%s", total_key);
}

void view_figures(const struct profile *p, struct figure_rows *rows)
{
	figure_rows_add(rows, profile_duration_s(p), "s", p->has_finish, "run.duration_s");
	figure_rows_add(rows, (double)p->samples, "count", true, "run.samples");
	figure_rows_add(rows, (double)profile_lost(p, NULL), "count", true, "run.lost");
	/* the workload's own result (its output's figures, results.h): unit "result", the first rows of diff */
	for (int i = 0; i < p->nresults; i++)
		figure_rows_add(rows, p->results[i].value, "result", false, "%s", p->results[i].name);
	for (int i = 0; i < p->ntime_figures; i++) {
		const char *name = p->time_figures[i].name, *unit = lkp_time_unit(name);
		figure_rows_add(rows, p->time_figures[i].value, unit, strcmp(unit, "s") != 0 && strcmp(unit, "percent") != 0,
				"time.%s", name);
	}
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (!ci->ok)
			continue;
		const struct collector_analyzer *an = ci->impl ? ci->impl->analyzer : NULL;
		figure_rows_add(rows, (double)ci->samples, "samples", true, "%s.samples", ci->name);
		/* no samples: no share of any path, nor a figure per path, was measured (an absent key, never a 0) */
		for (int path = 0; ci->samples && path < PATH_COUNT; path++) {
			figure_rows_add(rows, 100.0 * (double)ci->path_samples[path] / (double)ci->samples, "percent", true,
					"paths.%s.%s", ci->name, path_name(path));
			for (size_t f = 0; an && ci->state && f < an->npath_figures; f++) {
				char key[96];
				path_figure_key(ci->name, &an->path_figures[f], key, sizeof(key));
				figure_rows_add(rows, an->path_figure(ci->state, p, path, f),
						an->path_figures[f].unit ? an->path_figures[f].unit : "count", true, "paths.%s.%s.%s",
						ci->name, path_name(path), key + strlen(ci->name) + 1);
			}
		}
		if (an && ci->state && an->figures)
			an->figures(ci->state, p, rows);
	}
	add_cost_rows(p, rows);
}

/* ---- text that fits a width ---- */

/*
 * The words of text (runs of non-spaces) printed from column col on, the
 * spaces between them kept, a word that would pass width starting a new
 * line at column indent (a word wider than that line is printed whole).
 */
static void wrap_words(FILE *out, const char *text, size_t col, size_t indent, size_t width)
{
	struct strbuf sb = { 0 };
	size_t line_start = col;
	for (const char *p = text; *p;) {
		size_t gap = strspn(p, " ");
		size_t word = strcspn(p + gap, " ");
		if (!word)
			break;
		sb_reset(&sb);
		sb_add(&sb, p + gap, word);
		size_t wcols = term_columns(sb.buf);
		if (col > line_start && col > indent && col + gap + wcols > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = line_start = indent;
		} else {
			fprintf(out, "%.*s", (int)gap, p);
			col += gap;
		}
		fputs(sb.buf, out);
		col += wcols;
		p += gap + word;
	}
	sb_free(&sb);
}

void view_text_wrapped(const struct view_options *o, FILE *out, size_t indent, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text;
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		return;
	size_t len = strlen(text);
	if (len && text[len - 1] == '\n')
		text[--len] = '\0';
	if (!o->width || term_columns(text) <= o->width)
		fprintf(out, "%s\n", text);
	else {
		wrap_words(out, text, 0, indent, o->width);
		fputc('\n', out);
	}
	free(text);
}

const char *view_text_cell(const struct view_options *o, const char *s, size_t width, char *buf, size_t len,
			   int *pad)
{
	const char *shown = o->width ? term_cut(s, width, buf, len) : s;
	*pad = (int)(width + strlen(shown) - term_columns(shown));
	return shown;
}

void view_table_addf(struct view_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *row;
	if (vasprintf(&row, fmt, ap) < 0)
		row = xstrdup("");
	va_end(ap);
	size_t len = strlen(row);
	if (len && row[len - 1] == '\n')
		row[len - 1] = '\0';
	if (!is_printable(row)) {
		/* a row holds names from the recording (a dso, a symbol, a comm): the one escaping rule for them */
		struct strbuf shown = { 0 };
		sb_add_printable(&shown, row);
		free(row);
		row = shown.buf;
	}
	GROW(t->rows, t->cap, t->nrows + 1);
	t->rows[t->nrows++] = row;
}

/* Where column col of s starts (UTF-8 continuation bytes take no column), or its end. */
static const char *at_column(const char *s, size_t col)
{
	for (; *s; s++)
		if ((*s & 0xc0) != 0x80 && !col--)
			break;
	return s;
}

/*
 * Column c of row: its columns from start (the columns before it) for
 * width columns; the last one to the end of the row, printed from column
 * col on, its words wrapped under it when it would pass line_width.
 */
static void print_cell(FILE *out, const char *row, size_t start, size_t width, bool last, size_t col,
		       size_t line_width)
{
	const char *from = at_column(row, start);
	if (!last)
		fprintf(out, "%.*s", (int)(at_column(from, width) - from), from);
	else if (col + term_columns(from) <= line_width)
		fputs(from, out);
	else
		wrap_words(out, from, col, col + strspn(from, " "), line_width);
}

void view_table_print(struct view_table *t, const struct view_options *o, FILE *out)
{
	size_t widest = 0;
	for (size_t r = 0; r < t->nrows; r++)
		if (term_columns(t->rows[r]) > widest)
			widest = term_columns(t->rows[r]);
	if (!o->width || widest <= o->width || t->ncolumns < 2) {
		for (size_t r = 0; r < t->nrows; r++)
			fprintf(out, "%s\n", t->rows[r]);
	} else {
		size_t *starts = xcalloc(t->ncolumns + 1, sizeof(*starts));
		for (size_t c = 0; c < t->ncolumns; c++)
			starts[c + 1] = starts[c] + t->columns[c];
		size_t first = 1;
		while (first < t->ncolumns) {
			size_t used = t->columns[0], end = first;
			/* the last column takes the rest of each row */
			for (; end < t->ncolumns; end++) {
				size_t w = end + 1 == t->ncolumns ? widest - starts[end] : t->columns[end];
				if (end > first && used + w > o->width)
					break;
				used += w;
			}
			if (first > 1)
				fputc('\n', out);
			for (size_t r = 0; r < t->nrows; r++) {
				print_cell(out, t->rows[r], 0, t->columns[0], false, 0, o->width);
				for (size_t c = first, col = t->columns[0]; c < end; col += t->columns[c++])
					print_cell(out, t->rows[r], starts[c], t->columns[c], c + 1 == t->ncolumns, col,
						   o->width);
				fputc('\n', out);
			}
			first = end;
		}
		free(starts);
	}
	for (size_t r = 0; r < t->nrows; r++)
		free(t->rows[r]);
	free(t->rows);
	t->rows = NULL;
	t->nrows = t->cap = 0;
}

