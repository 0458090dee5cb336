/*
 * report_html.c: `sigprof report --html FILE`, one self-contained page.
 *
 * The page is three parts, all inline (it opens from a file, offline):
 *
 *   <style>   profiler/commands/report_html.css
 *   <script type="application/json" id="sigprof-report">
 *             the report's JSON document (report_json_write(), --stacks
 *             per path): the header, the path table and every collector's
 *             section, which the script lays out as tables
 *   <script type="application/json" id="sigprof-flame">
 *             the flame graphs' data, below
 *   <script>  profiler/commands/report_html.js: tables, flame graphs (zoom, search,
 *             hover, weights), and the differential mode
 *
 * The two files are linked into this object as they are (.incbin below),
 * so they stay plain CSS and JavaScript that can be read and linted as
 * such; the Makefile rebuilds this object when they change.
 *
 * The flame data, compact so that 100 000 distinct stacks stay a few MB:
 *
 *   { "mode": "normal" | "diff",
 *     "frames": [["label", "dso", kind], ...],   kind: bit 1 kernel, 2 marked ([signal ...], [unwind: ...]), 4 inlined
 *     "collectors": [{ "name": "cpu", "time_unit": "ns" | null,
 *                      "stacks": [[count, weight, frame, ...], ...] }] }
 *
 * After the collectors, where the futex collector linked waits to the tasks
 * that ended them (docs/waits.md), the wake flame graph: a "collector"
 * named "wake" with "title", "weight": 1 (drawn by its time first) and
 * "count_unit": "waits", whose
 * stacks are the waiter's frames root first, a "--" frame, then the
 * waker's frames at the wake leaf first (as `report --folded --weight wake`
 * and bcc's offwaketime join them), counted in waits, weighed in ns waited.
 *
 * A stack lists frame indexes root first (as folded stacks do).  In "diff"
 * mode each stack has four numbers before its frames: count and weight of
 * the base recording, then of the new one; the script sizes frames by the
 * new recording and colours them by the change of their share.  Frames and
 * stacks are merged by their labels, so the same function in two
 * recordings (or two addresses of one function) is one frame.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/json.h"
#include "sigprof/commands/report.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "sigprof/base/hashmap.h"
#include "sigprof/model/timeline.h"

/* The page's style and script, linked in as they are, each followed by a NUL. */
__asm__(".pushsection .rodata\n"
	".global report_html_css\n"
	"report_html_css:\n"
	".incbin \"profiler/commands/report_html.css\"\n"
	".byte 0\n"
	".global report_html_js\n"
	"report_html_js:\n"
	".incbin \"profiler/commands/report_html.js\"\n"
	".byte 0\n"
	".popsection\n");
extern const char report_html_css[];
extern const char report_html_js[];

#define FLAME_MAX_COLLECTORS 16

struct flame_stack {
	uint32_t *frames;   /* root first */
	uint32_t nframes;
	uint64_t values[4]; /* count, weight (of the new recording in diff mode: base count, weight, new count, weight) */
};

struct flame_collector {
	char name[32];
	const char *title;        /* the graph's heading, NULL: "Flame graph, NAME" */
	bool time_ns;             /* its weights are nanoseconds (cpu-clock, task-clock) */
	bool time_first;          /* drawn by its weights first (the wake graph: ns waited) */
	const char *count_unit;   /* with time_first: what its counts count ("waits"; the wall graph's "ns") */
	struct u64_map index;     /* hash of the frame list -> stack + 1 */
	struct flame_stack *stacks;
	size_t nstacks, cap;
};

struct flame {
	bool diff;
	struct u64_map frame_index; /* hash of the frame key -> frame + 1 */
	char **frame_keys;          /* "kind\tdso\tlabel" */
	size_t nframes, frames_cap;
	struct flame_collector collectors[FLAME_MAX_COLLECTORS];
	int ncollectors;
};

/* The index of the frame with this key, added when new; the map resolves a hash collision by probing on. */
static uint32_t flame_frame(struct flame *fl, const char *key)
{
	uint64_t h = hash_bytes(key, strlen(key), 0);
	for (;; h++) {
		void *v = u64_map_get(&fl->frame_index, h);
		if (!v)
			break;
		uint32_t id = (uint32_t)((uintptr_t)v - 1);
		if (strcmp(fl->frame_keys[id], key) == 0)
			return id;
	}
	GROW(fl->frame_keys, fl->frames_cap, fl->nframes + 1);
	fl->frame_keys[fl->nframes] = xstrdup(key);
	u64_map_put(&fl->frame_index, h, (void *)(uintptr_t)(fl->nframes + 1));
	return (uint32_t)fl->nframes++;
}

static struct flame_collector *flame_collector_named(struct flame *fl, const char *name, bool time_ns)
{
	for (int i = 0; i < fl->ncollectors; i++)
		if (strcmp(fl->collectors[i].name, name) == 0)
			return &fl->collectors[i];
	if (fl->ncollectors == FLAME_MAX_COLLECTORS)
		return NULL;
	struct flame_collector *fc = &fl->collectors[fl->ncollectors++];
	snprintf(fc->name, sizeof(fc->name), "%s", name);
	fc->time_ns = time_ns;
	return fc;
}

static struct flame_collector *flame_collector(struct flame *fl, const struct collector_info *ci)
{
	return flame_collector_named(fl, ci->name,
				     strcmp(ci->event, "cpu-clock") == 0 || strcmp(ci->event, "task-clock") == 0);
}

/* Add count and weight to the stack of these frames (root first), at values[slot], [slot + 1]. */
static void flame_add(struct flame_collector *fc, const uint32_t *frames, uint32_t n, int slot, uint64_t count,
		      uint64_t weight)
{
	uint64_t h = hash_bytes(frames, n * sizeof(*frames), 1);
	struct flame_stack *s = NULL;
	for (;; h++) {
		void *v = u64_map_get(&fc->index, h);
		if (!v)
			break;
		struct flame_stack *t = &fc->stacks[(uintptr_t)v - 1];
		if (t->nframes == n && memcmp(t->frames, frames, n * sizeof(*frames)) == 0) {
			s = t;
			break;
		}
	}
	if (!s) {
		GROW(fc->stacks, fc->cap, fc->nstacks + 1);
		s = &fc->stacks[fc->nstacks];
		memset(s, 0, sizeof(*s));
		s->frames = xmalloc((n ? n : 1) * sizeof(*frames));
		memcpy(s->frames, frames, n * sizeof(*frames));
		s->nframes = n;
		u64_map_put(&fc->index, h, (void *)(uintptr_t)(++fc->nstacks));
	}
	s->values[slot] += count;
	s->values[slot + 1] += weight;
}

/* The flame frame of profile frame id (frame_ids: profile frame -> flame frame + 1, filled as frames are met). */
static uint32_t flame_frame_of(struct flame *fl, const struct profile *p, uint32_t *frame_ids, uint32_t id)
{
	if (!frame_ids[id]) {
		char label[256], source[256], key[1024];
		const struct frame *f = &p->stacks.frames[id];
		const char *srcline = frame_srcline(f, source, sizeof(source));
		int kind = (f->kernel ? 1 : 0) | (f->synthetic ? 2 : 0) | (f->inlined ? 4 : 0);
		snprintf(key, sizeof(key), "%d\t%s\t%s%s%s", kind, dso_short_name(f->dso),
			 frame_label(f, label, sizeof(label)), srcline ? ":" : "", srcline ? srcline : "");
		frame_ids[id] = flame_frame(fl, key) + 1;
	}
	return frame_ids[id] - 1;
}

/* Stack s's frames as flame frames, root first, into frames (s->nframes of them); returns their number. */
static uint32_t flame_stack_frames(struct flame *fl, const struct profile *p, uint32_t *frame_ids, const struct stack *s,
				   uint32_t *frames)
{
	const uint32_t *ids = stack_frames(&p->stacks, s);
	for (uint32_t k = 0; k < s->nframes; k++)
		frames[k] = flame_frame_of(fl, p, frame_ids, ids[s->nframes - 1 - k]);
	return s->nframes;
}

/* Every stack of every collector of p into fl, at values[slot]. */
static void flame_add_profile(struct flame *fl, const struct profile *p, int slot)
{
	uint32_t *frame_ids = xcalloc(p->stacks.nframes + 1, sizeof(*frame_ids)); /* profile frame -> flame frame + 1 */
	uint32_t *frames = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < p->stacks.nstacks; i++) {
		const struct stack *s = &p->stacks.stacks[i];
		if (!s->count || (int)s->collector >= p->ncollectors)
			continue;
		struct flame_collector *fc = flame_collector(fl, &p->collectors[s->collector]);
		if (!fc)
			continue;
		GROW(frames, cap, s->nframes + 1);
		flame_add(fc, frames, flame_stack_frames(fl, p, frame_ids, s, frames), slot, s->count, s->weight);
	}
	free(frames);
	free(frame_ids);
}

/*
 * The wake flame graph of p into fl, at values[slot]: per pair of stacks of
 * the waits a task ended, the waiter's frames root first, "--", the waker's
 * frames at the wake leaf first; counted in waits, weighed in ns waited.
 */
static void flame_add_wakes(struct flame *fl, const struct profile *p, int slot)
{
	uint32_t *frame_ids = xcalloc(p->stacks.nframes + 1, sizeof(*frame_ids));
	uint32_t *frames = NULL;
	size_t cap = 0;
	uint32_t separator = flame_frame(fl, "2\t\t--");
	uint32_t not_recorded = flame_frame(fl, "2\t\t[waker stack not recorded]");
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_analyzer *an = p->collectors[c].impl ? p->collectors[c].impl->analyzer : NULL;
		const struct wake_pair *pairs;
		size_t n = p->collectors[c].state && an && an->wake_pairs ? an->wake_pairs(p->collectors[c].state, &pairs)
									   : 0;
		struct flame_collector *fc = n ? flame_collector_named(fl, "wake", true) : NULL;
		if (!fc)
			continue;
		fc->title = "Wake flame graph: waiter -- waker, by the time waited";
		fc->time_first = true;
		fc->count_unit = "waits";
		for (size_t i = 0; i < n; i++) {
			const struct stack *waiter = &p->stacks.stacks[pairs[i].waiter_stack];
			const struct stack *waker = pairs[i].waker_stack == COLLECTOR_NO_STACK
							    ? NULL : &p->stacks.stacks[pairs[i].waker_stack];
			GROW(frames, cap, (size_t)waiter->nframes + (waker ? waker->nframes : 1) + 1);
			uint32_t nframes = flame_stack_frames(fl, p, frame_ids, waiter, frames);
			frames[nframes++] = separator;
			if (!waker) {
				frames[nframes++] = not_recorded;
			} else {
				const uint32_t *ids = stack_frames(&p->stacks, waker);
				for (uint32_t k = 0; k < waker->nframes; k++)
					frames[nframes++] = flame_frame_of(fl, p, frame_ids, ids[k]);
			}
			flame_add(fc, frames, nframes, slot, pairs[i].waits, pairs[i].ns);
		}
	}
	free(frames);
	free(frame_ids);
}

/*
 * The wall-clock flame graph of p into fl (docs/timeline.md): each thread's
 * life as stacks weighed by ns, the state as the root frame ("[running]",
 * "[blocked: futex WORD]", ...), on and off CPU together.  Counted and
 * weighed in ns (a wall-clock entry has no count of its own).
 */
static void flame_add_wall(struct flame *fl, const struct profile *p, uint32_t *frame_ids)
{
	const struct timeline *t = p->timeline;
	size_t n = t ? timeline_wall_count(t) : 0;
	struct flame_collector *fc = n ? flame_collector_named(fl, "wall", true) : NULL;
	if (!fc)
		return;
	fc->title = "Wall-clock flame graph: each thread's life by state and stack, on and off CPU";
	fc->time_first = true;
	fc->count_unit = "ns";
	uint32_t *frames = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < n; i++) {
		const struct timeline_wall *w = timeline_wall_entry(t, i);
		const struct timeline_thread *th = timeline_thread(t, w->thread);
		char root[200], key[256];
		report_wall_root(p, th->pid, w->state, w->cause, w->signal, w->detail, root, sizeof(root));
		snprintf(key, sizeof(key), "2\t\t%s", root);
		const struct stack *s = w->stack == TIMELINE_NO_STACK ? NULL : &p->stacks.stacks[w->stack];
		GROW(frames, cap, (s ? s->nframes : 0) + 1);
		frames[0] = flame_frame(fl, key);
		uint32_t nframes = 1 + (s ? flame_stack_frames(fl, p, frame_ids, s, frames + 1) : 0);
		flame_add(fc, frames, nframes, 0, w->ns, w->ns);
	}
	free(frames);
}

/* ---- the timeline block (report_html.js draws it; docs/report-html.md) ---- */

/* The page's classes of a span: its state, a blocked span by its cause. */
enum timeline_class {
	CLASS_RUNNING, CLASS_RUNNABLE, CLASS_FUTEX, CLASS_LOCK, CLASS_IO, CLASS_SLEEP, CLASS_OTHER, CLASS_HANDLER, CLASSES
};
static const char *const class_names[CLASSES] = {
	"running", "runnable", "blocked: futex", "blocked: kernel lock", "blocked: I/O", "blocked: sleep", "blocked: other",
	"signal handler",
};
static const char *const class_roots[CLASSES] = {
	"[running]", "[runnable]", "[blocked: futex]", "[blocked: kernel lock]", "[blocked: I/O]", "[blocked: sleep]",
	"[blocked: other]", "[signal handler]",
};

#define TIMELINE_COLUMNS 4096     /* the resolution: the recording's length over this many columns */
#define TIMELINE_THREADS_MAX 64   /* rows of the longest-lived threads */
#define TIMELINE_MARKS_MAX 400    /* signal marks per thread, and lock contention marks */
#define TIMELINE_SLOWEST 5        /* the longest blocked spans of a thread, marked */

static int class_of(const struct timeline_span *s)
{
	if (s->state == TIMELINE_RUNNING)
		return CLASS_RUNNING;
	if (s->state == TIMELINE_RUNNABLE)
		return CLASS_RUNNABLE;
	if (s->state == TIMELINE_SIGNAL_HANDLER)
		return CLASS_HANDLER;
	switch (s->cause) {
	case TIMELINE_CAUSE_FUTEX: return CLASS_FUTEX;
	case TIMELINE_CAUSE_LOCK: return CLASS_LOCK;
	case TIMELINE_CAUSE_IO: return CLASS_IO;
	case TIMELINE_CAUSE_SLEEP: return CLASS_SLEEP;
	default: return CLASS_OTHER;
	}
}

struct timeline_page {
	struct flame *fl;
	const struct profile *p;
	struct u64_map stack_index;   /* profile stack id + 1 -> index in stacks + 1 */
	uint32_t *stack_ids;          /* the stacks the block lists, in order */
	size_t nstacks, stacks_cap;
};

/* The block's index of a profile stack (-1: none), listed once. */
static long page_stack(struct timeline_page *tp, uint32_t stack)
{
	if (stack == TIMELINE_NO_STACK || stack >= tp->p->stacks.nstacks)
		return -1;
	void *v = u64_map_get(&tp->stack_index, (uint64_t)stack + 1);
	if (v)
		return (long)(uintptr_t)v - 1;
	GROW(tp->stack_ids, tp->stacks_cap, tp->nstacks + 1);
	tp->stack_ids[tp->nstacks] = stack;
	u64_map_put(&tp->stack_index, (uint64_t)stack + 1, (void *)(uintptr_t)(tp->nstacks + 1));
	return (long)tp->nstacks++;
}

static int compare_lives(const void *a, const void *b, void *ctx)
{
	const struct timeline *t = ctx;
	const struct timeline_thread *x = timeline_thread(t, *(const size_t *)a), *y = timeline_thread(t, *(const size_t *)b);
	uint64_t lx = x->end - x->start, ly = y->end - y->start;
	if (lx != ly)
		return lx > ly ? -1 : 1;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	return ia < ib ? -1 : ia > ib;
}

/* The indexes of the TIMELINE_SLOWEST longest blocked spans, longest first (of equal ones, the earlier), into best. */
static void slowest_blocked(const struct timeline_span *spans, size_t n, size_t *best, size_t *nbest)
{
	*nbest = 0;
	for (size_t i = 0; i < n; i++) {
		if (spans[i].state != TIMELINE_BLOCKED)
			continue;
		uint64_t d = spans[i].end - spans[i].start;
		size_t at = *nbest;
		while (at > 0 && spans[best[at - 1]].end - spans[best[at - 1]].start < d)
			at--;
		if (at >= TIMELINE_SLOWEST)
			continue;
		size_t last = *nbest < TIMELINE_SLOWEST ? (*nbest)++ : TIMELINE_SLOWEST - 1;
		for (size_t k = last; k > at; k--)
			best[k] = best[k - 1];
		best[at] = i;
	}
}

static void write_thread_row(struct timeline_page *tp, struct json_writer *w, size_t i, uint64_t origin,
			     uint64_t resolution, size_t ncolumns, uint64_t *bins)
{
	const struct profile *p = tp->p;
	const struct timeline *t = p->timeline;
	const struct timeline_thread *th = timeline_thread(t, i);
	size_t n;
	const struct timeline_span *spans = timeline_spans(t, i, &n);
	char root[200], key[256], name[64];
	json_object_begin(w, NULL);
	json_u64(w, "pid", th->pid);
	json_u64(w, "tid", th->tid);
	json_string(w, "comm", view_thread_comm(p, th->pid, th->tid));
	json_u64(w, "start", th->start - origin);
	json_u64(w, "end", th->end - origin);
	uint64_t ns[CLASSES] = { 0 };
	memset(bins, 0, ncolumns * CLASSES * sizeof(*bins));
	/* spans of a column or more, each [start, duration, class, root frame, stack]; the shorter ones into columns */
	json_array_begin(w, "spans");
	for (size_t k = 0; k < n; k++) {
		const struct timeline_span *s = &spans[k];
		int c = class_of(s);
		uint64_t d = s->end - s->start;
		ns[c] += d;
		if (d < resolution) {
			size_t col = (size_t)((s->start - origin) / resolution);
			bins[(col < ncolumns ? col : ncolumns - 1) * CLASSES + (size_t)c] += d;
			continue;
		}
		report_wall_root(p, th->pid, s->state, s->cause, s->signal, s->detail, root, sizeof(root));
		snprintf(key, sizeof(key), "2\t\t%s", root);
		json_u64(w, NULL, s->start - origin);
		json_u64(w, NULL, d);
		json_u64(w, NULL, (uint64_t)c);
		json_u64(w, NULL, flame_frame(tp->fl, key));
		json_i64(w, NULL, page_stack(tp, s->stack));
	}
	json_end(w);
	/* the columns' ns per class, [column, ns of each class], where any */
	json_array_begin(w, "columns");
	for (size_t col = 0; col < ncolumns; col++) {
		const uint64_t *b = &bins[col * CLASSES];
		bool any = false;
		for (int c = 0; c < CLASSES && !any; c++)
			any = b[c] != 0;
		if (!any)
			continue;
		json_u64(w, NULL, col);
		for (int c = 0; c < CLASSES; c++)
			json_u64(w, NULL, b[c]);
	}
	json_end(w);
	json_array_begin(w, "ns");
	for (int c = 0; c < CLASSES; c++)
		json_u64(w, NULL, ns[c]);
	json_end(w);
	/* marks, [time, kind, text]: a handler's start (its signal), a lock contention, the slowest blocked spans */
	json_array_begin(w, "marks");
	size_t marked = 0, skipped = 0;
	for (size_t k = 0; k < n; k++) {
		const struct timeline_span *s = &spans[k];
		if (s->state != TIMELINE_SIGNAL_HANDLER || (k && spans[k - 1].state == TIMELINE_SIGNAL_HANDLER))
			continue;
		if (marked == TIMELINE_MARKS_MAX) {
			skipped++;
			continue;
		}
		json_array_begin(w, NULL);
		json_u64(w, NULL, s->start - origin);
		json_string(w, NULL, "signal");
		json_string(w, NULL, signal_name(s->signal, name, sizeof(name)));
		json_end(w);
		marked++;
	}
	/* a kernel lock's contentions (a spinning thread stays running: no span tells of them), as many again */
	size_t nmarks, locks_marked = 0;
	const struct timeline_mark *marks = timeline_marks(t, i, &nmarks);
	for (size_t k = 0; k < nmarks; k++) {
		const struct timeline_mark *m = &marks[k];
		if (m->kind != TIMELINE_MARK_LOCK)
			continue;
		if (locks_marked == TIMELINE_MARKS_MAX) {
			skipped++;
			continue;
		}
		char text[256];
		if (m->label)
			snprintf(text, sizeof(text), "lock contention: lock at 0x%llx taken in %s", (unsigned long long)m->detail,
				 m->label);
		else
			snprintf(text, sizeof(text), "lock contention: lock at 0x%llx", (unsigned long long)m->detail);
		json_array_begin(w, NULL);
		json_u64(w, NULL, m->time > origin ? m->time - origin : 0);
		json_string(w, NULL, "lock");
		json_string(w, NULL, text);
		json_end(w);
		locks_marked++;
	}
	size_t best[TIMELINE_SLOWEST], nbest;
	slowest_blocked(spans, n, best, &nbest);
	for (size_t k = 0; k < nbest; k++) {
		const struct timeline_span *s = &spans[best[k]];
		report_wall_root(p, th->pid, s->state, s->cause, s->signal, s->detail, root, sizeof(root));
		char text[256];
		snprintf(text, sizeof(text), "slowest wait %zu: %.3f ms %s", k + 1, (double)(s->end - s->start) / 1e6, root);
		json_array_begin(w, NULL);
		json_u64(w, NULL, s->start - origin);
		json_string(w, NULL, "slowest");
		json_string(w, NULL, text);
		json_end(w);
	}
	json_end(w);
	json_u64(w, "marks_left_out", skipped);
	json_end(w);
}

/*
 * The timeline's block: per thread (the TIMELINE_THREADS_MAX longest-lived)
 * its spans of a column or more as they are, the shorter ones summed per
 * column and class (a column is the recording's length over
 * TIMELINE_COLUMNS), its marks; the stacks the spans name, as flame frames
 * root first.  Times in ns from origin, the first thread's start.
 */
static void write_timeline(struct flame *fl, const struct profile *p, uint32_t *frame_ids, FILE *out)
{
	const struct timeline *t = p->timeline;
	size_t nthreads = t ? timeline_thread_count(t) : 0;
	if (!nthreads) {
		fputs("null", out);
		return;
	}
	uint64_t origin = UINT64_MAX, end = 0;
	for (size_t i = 0; i < nthreads; i++) {
		const struct timeline_thread *th = timeline_thread(t, i);
		origin = th->start < origin ? th->start : origin;
		end = th->end > end ? th->end : end;
	}
	uint64_t length = end > origin ? end - origin : 1;
	uint64_t resolution = length / TIMELINE_COLUMNS + 1;
	size_t ncolumns = (size_t)(length / resolution) + 1;
	size_t *order = xmalloc(nthreads * sizeof(*order));
	for (size_t i = 0; i < nthreads; i++)
		order[i] = i;
	qsort_r(order, nthreads, sizeof(*order), compare_lives, (void *)t);
	size_t shown = nthreads < TIMELINE_THREADS_MAX ? nthreads : TIMELINE_THREADS_MAX;
	struct timeline_page tp = { .fl = fl, .p = p };
	uint64_t *bins = xmalloc(ncolumns * CLASSES * sizeof(*bins));
	struct json_writer w;
	json_init_compact(&w, out);
	w.script_safe = true;
	json_object_begin(&w, NULL);
	json_u64(&w, "origin_ns", origin);
	json_u64(&w, "length_ns", length);
	json_u64(&w, "resolution_ns", resolution);
	json_array_begin(&w, "classes");
	for (int c = 0; c < CLASSES; c++)
		json_string(&w, NULL, class_names[c]);
	json_end(&w);
	/* the root frame of a class's time in columns (no stack, no word), for a selection's flame graph */
	json_array_begin(&w, "class_frames");
	for (int c = 0; c < CLASSES; c++) {
		char key[64];
		snprintf(key, sizeof(key), "2\t\t%s", class_roots[c]);
		json_u64(&w, NULL, flame_frame(fl, key));
	}
	json_end(&w);
	json_u64(&w, "short_frame", flame_frame(fl, "2\t\t[spans shorter than a column: no stack]"));
	json_array_begin(&w, "threads");
	for (size_t k = 0; k < shown; k++)
		write_thread_row(&tp, &w, order[k], origin, resolution, ncolumns, bins);
	json_end(&w);
	json_u64(&w, "threads_left_out", nthreads - shown);
	/* the stacks, root first, as the flame graphs' frames */
	json_array_begin(&w, "stacks");
	uint32_t *frames = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < tp.nstacks; i++) {
		const struct stack *s = &p->stacks.stacks[tp.stack_ids[i]];
		GROW(frames, cap, s->nframes + 1);
		uint32_t n = flame_stack_frames(fl, p, frame_ids, s, frames);
		json_array_begin(&w, NULL);
		for (uint32_t k = 0; k < n; k++)
			json_u64(&w, NULL, frames[k]);
		json_end(&w);
	}
	free(frames);
	json_end(&w);
	json_end(&w);
	json_finish(&w);
	free(bins);
	free(order);
	free(tp.stack_ids);
	u64_map_free(&tp.stack_index);
}

static void flame_free(struct flame *fl)
{
	for (size_t i = 0; i < fl->nframes; i++)
		free(fl->frame_keys[i]);
	free(fl->frame_keys);
	u64_map_free(&fl->frame_index);
	for (int c = 0; c < fl->ncollectors; c++) {
		struct flame_collector *fc = &fl->collectors[c];
		for (size_t i = 0; i < fc->nstacks; i++)
			free(fc->stacks[i].frames);
		free(fc->stacks);
		u64_map_free(&fc->index);
	}
}

static void write_flame(const struct flame *fl, FILE *out)
{
	fprintf(out, "{\"mode\":\"%s\",\"frames\":[", fl->diff ? "diff" : "normal");
	for (size_t i = 0; i < fl->nframes; i++) {
		const char *key = fl->frame_keys[i];
		const char *dso = strchr(key, '\t') + 1, *label = strchr(dso, '\t') + 1;
		char dso_buf[256];
		snprintf(dso_buf, sizeof(dso_buf), "%.*s", (int)(label - 1 - dso), dso);
		fprintf(out, "%s[", i ? "," : "");
		json_quote(out, label, true);
		fputc(',', out);
		json_quote(out, dso_buf, true);
		fprintf(out, ",%d]", atoi(key));
	}
	fprintf(out, "],\"collectors\":[");
	for (int c = 0; c < fl->ncollectors; c++) {
		const struct flame_collector *fc = &fl->collectors[c];
		fprintf(out, "%s{\"name\":", c ? "," : "");
		json_quote(out, fc->name, true);
		if (fc->title) {
			fprintf(out, ",\"title\":");
			json_quote(out, fc->title, true);
		}
		if (fc->time_first)
			fprintf(out, ",\"weight\":1,\"count_unit\":\"%s\"", fc->count_unit ? fc->count_unit : "waits");
		fprintf(out, ",\"time_unit\":%s,\"stacks\":[", fc->time_ns ? "\"ns\"" : "null");
		for (size_t i = 0; i < fc->nstacks; i++) {
			const struct flame_stack *s = &fc->stacks[i];
			fprintf(out, "%s[%llu,%llu", i ? ",\n" : "", (unsigned long long)s->values[0],
				(unsigned long long)s->values[1]);
			if (fl->diff)
				fprintf(out, ",%llu,%llu", (unsigned long long)s->values[2],
					(unsigned long long)s->values[3]);
			for (uint32_t k = 0; k < s->nframes; k++)
				fprintf(out, ",%u", s->frames[k]);
			fputc(']', out);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]}");
}

/* The report's JSON document of p, as the page's tables read it: every section, --stacks stacks per path. */
static void write_report_document(const struct profile *p, const struct report_options *o, FILE *out)
{
	struct report_options doc = *o;
	doc.view.stacks_limit_given = true;
	struct json_writer w;
	json_init(&w, out);
	w.script_safe = true;
	report_json_write(&w, p, &doc);
}

static void write_page(const char *title, const struct profile *base, const struct profile *p,
		       const struct report_options *o, const struct flame *fl, const char *timeline, FILE *out)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
	for (const char *c = title; *c; c++) /* the title as HTML text */
		fputs(*c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : (char[2]){ *c, 0 }, out);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", report_html_css);
	fprintf(out, "<noscript>This report draws its tables and flame graphs with JavaScript.</noscript>\n");
	if (base) {
		fprintf(out, "<script type=\"application/json\" id=\"sigprof-report-base\">\n");
		write_report_document(base, o, out);
		fprintf(out, "</script>\n");
	}
	fprintf(out, "<script type=\"application/json\" id=\"sigprof-report\">\n");
	write_report_document(p, o, out);
	fprintf(out, "</script>\n<script type=\"application/json\" id=\"sigprof-flame\">\n");
	write_flame(fl, out);
	fprintf(out, "\n</script>\n");
	if (timeline)
		fprintf(out, "<script type=\"application/json\" id=\"sigprof-timeline\">\n%s\n</script>\n", timeline);
	fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", report_html_js);
}

void report_html(const struct profile *p, const struct report_options *o, FILE *out)
{
	struct flame fl = { 0 };
	flame_add_profile(&fl, p, 0);
	flame_add_wakes(&fl, p, 0);
	uint32_t *frame_ids = xcalloc(p->stacks.nframes + 1, sizeof(*frame_ids)); /* profile frame -> flame frame + 1 */
	flame_add_wall(&fl, p, frame_ids);
	/* the timeline's block names flame frames: written aside before the flame data */
	char *timeline = NULL;
	size_t timeline_len = 0;
	FILE *block = open_memstream(&timeline, &timeline_len);
	if (block) { /* else (no memory for it) the page has no timeline */
		write_timeline(&fl, p, frame_ids, block);
		fclose(block);
	}
	free(frame_ids);
	char title[512];
	snprintf(title, sizeof(title), "sigprof report of %s", p->file);
	write_page(title, NULL, p, o, &fl, timeline, out);
	free(timeline);
	flame_free(&fl);
}

void report_html_diff(const struct profile *base, const struct profile *new, const struct report_options *o,
		      FILE *out)
{
	struct flame fl = { .diff = true };
	flame_add_profile(&fl, base, 0);
	flame_add_profile(&fl, new, 2);
	flame_add_wakes(&fl, base, 0);
	flame_add_wakes(&fl, new, 2);
	char title[1024];
	snprintf(title, sizeof(title), "sigprof diff of %s and %s", base->file, new->file);
	write_page(title, base, new, o, &fl, NULL, out);
	flame_free(&fl);
}

int report_html_file(const char *command, const char *path, const struct profile *base, const struct profile *p,
		     const struct report_options *o)
{
	struct safe_output out;
	int err = safe_output_open(path, 0644, &out);
	if (err == -EEXIST)
		return sp_error("%s: --html %s: it exists and is not a regular file (a link, device, FIFO or "
				"directory): sigprof writes only a regular file", command, QUOTED(path));
	if (err < 0)
		return sp_error("%s: --html %s: cannot create it: %s", command, QUOTED(path), strerror(-err));
	if (base)
		report_html_diff(base, p, o, out.fp);
	else
		report_html(p, o, out.fp);
	err = safe_output_commit(&out);
	if (err < 0)
		return sp_error("%s: --html %s: writing it failed: %s", command, QUOTED(path), strerror(-err));
	return 0;
}

