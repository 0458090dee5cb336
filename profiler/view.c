/*
 * view.c: what a collector's report side reads of a loaded profile (view.h),
 * and the one way each output prints a frame and a stack.
 *
 * The accessors are thin on purpose: they keep struct profile out of the
 * collectors, so that a change to the model's fields touches this file and
 * the commands, not every collector.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/json.h"
#include "sigprof/profile.h"
#include "sigprof/util.h"
#include "sigprof/view.h"

/* ---- the collector's own figures ---- */

bool view_collector_ok(const struct profile *p, int self)
{
	return self >= 0 && self < p->ncollectors && p->collectors[self].ok;
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
		snprintf(buf, len, "%s+0x%llx", sym->name, (unsigned long long)(addr - sym->start));
	else if (sym)
		snprintf(buf, len, "%s", sym->name);
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

/* ---- labels ---- */

const char *dso_short_name(const char *dso)
{
	const char *slash = strrchr(dso, '/');
	return slash && slash[1] ? slash + 1 : dso;
}

const char *frame_label(const struct frame *f, char *buf, size_t buflen)
{
	if (f->sym)
		return f->sym;
	snprintf(buf, buflen, "%s+0x%llx", dso_short_name(f->dso), (unsigned long long)f->addr);
	return buf;
}

const char *frame_srcline(const struct frame *f, char *buf, size_t buflen)
{
	if (!f->srcfile)
		return NULL;
	snprintf(buf, buflen, "%s:%u", dso_short_name(f->srcfile), f->line);
	return buf;
}

const char *path_figure_key(const char *collector, const struct path_figure *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", collector, f->key ? f->key : f->column);
	for (char *k = buf; *k; k++)
		*k = *k == ' ' ? '_' : *k;
	return buf;
}

/* ---- stack writers ---- */

void view_text_frame(FILE *out, const struct frame *f)
{
	char buf[256], label[300], source[256];
	snprintf(label, sizeof(label), "%s%s", frame_label(f, buf, sizeof(buf)), f->inlined ? " (inlined)" : "");
	const char *srcline = frame_srcline(f, source, sizeof(source));
	fprintf(out, "        %-48s %s%s%s\n", label, dso_short_name(f->dso), srcline ? "  " : "", srcline ? srcline : "");
}

void view_text_stack(const struct profile *p, uint32_t stack, unsigned max_frames, FILE *out)
{
	uint32_t depth = view_stack_depth(p, stack);
	for (uint32_t i = 0; i < depth && i < max_frames; i++)
		view_text_frame(out, view_stack_frame(p, stack, i));
	if (depth > max_frames)
		fprintf(out, "        ... %u more frames\n", depth - max_frames);
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
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)f->addr);
		json_string(w, "offset", buf);
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
	qsort(all, n, sizeof(*all), compare_functions);
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
		    t->stacks[s].count >= floor)
			out[n++] = (uint32_t)s;
	sort_profile = p;
	qsort(out, n, sizeof(*out), compare_stack_ids);
	*ids = out;
	return n;
}

/* ---- keyed figures ---- */

void figure_rows_add(struct figure_rows *rows, double value, const char *unit, bool exact, const char *key_fmt, ...)
{
	char *key;
	va_list ap;
	va_start(ap, key_fmt);
	int n = vasprintf(&key, key_fmt, ap);
	va_end(ap);
	if (n < 0)
		key = xstrdup(key_fmt); /* out of memory for the formatted key: xstrdup aborts with a message */
	GROW(rows->rows, rows->cap, rows->count + 1);
	rows->rows[rows->count++] = (struct figure_row){ .key = key, .value = value, .unit = unit, .exact = exact };
}

void figure_rows_free(struct figure_rows *rows)
{
	for (size_t i = 0; i < rows->count; i++)
		free(rows->rows[i].key);
	free(rows->rows);
	memset(rows, 0, sizeof(*rows));
}

void view_figures(const struct profile *p, struct figure_rows *rows)
{
	figure_rows_add(rows, profile_duration_s(p), "s", p->has_finish, "run.duration_s");
	figure_rows_add(rows, (double)p->samples, "count", true, "run.samples");
	figure_rows_add(rows, (double)profile_lost(p, NULL), "count", true, "run.lost");
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (!ci->ok)
			continue;
		const struct collector_analyzer *an = ci->impl ? ci->impl->analyzer : NULL;
		figure_rows_add(rows, (double)ci->samples, "samples", true, "%s.samples", ci->name);
		for (int path = 0; path < PATH_COUNT; path++) {
			figure_rows_add(rows, ci->samples ? 100.0 * (double)ci->path_samples[path] / (double)ci->samples : 0.0,
					"percent", true, "paths.%s.%s", ci->name, path_name(path));
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
}

