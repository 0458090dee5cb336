/*
 * report_pprof.c: `sigprof report --pprof FILE`, a recording as pprof's
 * profile.proto, gzipped (pprof.h), for `go tool pprof`, Pyroscope, Parca
 * and Grafana.  docs/outputs.md describes what lands where.
 *
 * It reads the profile's weight table (weights.h: samples and the
 * collectors' own weights per stack, thread and label), so the report
 * loads the recording with profile_options.weights.
 *
 *   sample types   per collector that has samples: its own weight kinds
 *                  (signal_deliveries, signal_handler in ns, futex_calls,
 *                  futex_wait, sched_wait, sched_delay), else COLLECTOR_samples
 *                  and, when its periods are time (cpu-clock), COLLECTOR_time
 *                  in ns, or when they are events, COLLECTOR_UNIT (cache_misses)
 *                  and wall_time in ns: the wall-clock profile (docs/timeline.md)
 *   samples        one per weight-table entry: its stack's locations, its
 *                  collector's values (0 for every other type), labels
 *                  path, comm, pid, tid, and signal / futex_word when set;
 *                  one per wall-clock entry: its state as the root location
 *                  ("[blocked: futex queue_lock]"), labels comm, pid, tid,
 *                  state, signal / futex_word
 *   locations      one per frame, one line each (an inlined call is a
 *                  frame of its own), its function named as in the text
 *                  report, file:line with --srcline
 *   mappings       one per dso, with its build-id when the report read it
 *   waits          where the futex collector linked waits to their endings
 *                  (docs/waits.md): types waits_count and waits_time (ns),
 *                  one sample per waiter thread and stack, word, ending and
 *                  waker, on the waiter's stack, labelled ended_by, link,
 *                  waker_tid, waker_pid, waker_comm, waker_op, waker_stack
 *
 * report_pprof_pair() writes two recordings with the same sample types in
 * the same order, as `pprof -diff_base` needs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/pprof.h"
#include "sigprof/commands/report.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "sigprof/base/hashmap.h"
#include "sigprof/model/timeline.h"

/* The wall-clock profile's sample type: no collector's, no weight kind (KIND_WALL_TIME, below). */
#define WALL_TYPE_COLLECTOR "wall"

/* One sample type, and where a profile's values for it come from. */
struct pprof_type {
	char name[96];
	const char *unit;
	char collector[32];
	unsigned kind;    /* weights.h: WEIGHT_SAMPLES, WEIGHT_PERIOD, WEIGHT_OWN + i */
};

struct pprof_types {
	struct pprof_type *types;
	size_t count, cap;
};

static void add_type(struct pprof_types *t, const char *collector, const char *what, const char *unit,
		     unsigned kind)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(t->types[i].collector, collector) == 0 && t->types[i].kind == kind)
			return;
	GROW(t->types, t->cap, t->count + 1);
	struct pprof_type *ty = &t->types[t->count++];
	snprintf(ty->name, sizeof(ty->name), "%s_%s", collector, what);
	ty->unit = unit;
	snprintf(ty->collector, sizeof(ty->collector), "%s", collector);
	ty->kind = kind;
}

/* The kinds of the types that are no collector's weights, past the weight table's: the waits (their collector
 * "waits" is none of the profile's) and the wall-clock profile. */
enum { KIND_WAITS_COUNT = WEIGHT_MAX, KIND_WAITS_TIME, KIND_WALL_TIME };

/* The waits a collector linked to their endings (collector.h wait_samples), or 0. */
static size_t wait_samples_of(const struct profile *p, int c, const struct wait_sample **out)
{
	const struct collector_info *ci = &p->collectors[c];
	const struct collector_analyzer *an = ci->impl ? ci->impl->analyzer : NULL;
	return ci->state && an && an->wait_samples ? an->wait_samples(ci->state, out) : 0;
}

/* The sample types of a profile's collectors with samples, appended to t (once each). */
static void collect_types(const struct profile *p, struct pprof_types *t)
{
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (!ci->ok || !ci->samples)
			continue;
		const struct collector *impl = ci->impl;
		if (impl && impl->nweights) {
			for (size_t i = 0; i < impl->nweights; i++)
				add_type(t, ci->name, impl->weights[i].name, impl->weights[i].unit, WEIGHT_OWN + (unsigned)i);
			continue;
		}
		add_type(t, ci->name, "samples", "count", WEIGHT_SAMPLES);
		if (profile_period_is_time(p, c))
			add_type(t, ci->name, "time", "nanoseconds", WEIGHT_PERIOD);
		else if (ci->weight != ci->samples)
			/* the sampled events' counts: "samples" is taken by the type above (cpu's cycles, page-faults) */
			add_type(t, ci->name, impl && impl->unit && strcmp(impl->unit, "samples") != 0 ? impl->unit : "events",
				 "count", WEIGHT_PERIOD);
	}
	for (int c = 0; c < p->ncollectors; c++) {
		const struct wait_sample *ws;
		if (wait_samples_of(p, c, &ws)) {
			add_type(t, "waits", "count", "count", KIND_WAITS_COUNT);
			add_type(t, "waits", "time", "nanoseconds", KIND_WAITS_TIME);
		}
	}
	if (timeline_wall_count(p->timeline))
		add_type(t, WALL_TYPE_COLLECTOR, "time", "nanoseconds", KIND_WALL_TIME);
}

/* The default sample type: the first that measures time, else the first. */
static const char *default_type(const struct pprof_types *t)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(t->types[i].unit, "nanoseconds") == 0)
			return t->types[i].name;
	return t->count ? t->types[0].name : NULL;
}

struct pprof_writer {
	const struct profile *p;
	struct pprof_builder *b;
	uint64_t *location_of; /* frame id -> location id, 0: not made yet */
};

static uint64_t location_of_frame(struct pprof_writer *w, uint32_t id)
{
	if (w->location_of[id])
		return w->location_of[id];
	const struct frame *f = &w->p->stacks.frames[id];
	char buf[256];
	uint64_t mapping = pprof_mapping(w->b, f->dso, view_dso_build_id(w->p, f->dso));
	uint64_t function = pprof_function(w->b, frame_merged_label(f, buf, sizeof(buf)), f->srcfile);
	w->location_of[id] = pprof_add_location(w->b, mapping, f->addr, function, f->line);
	return w->location_of[id];
}

static void add_labels(struct pprof_writer *w, struct pprof_sample *s, const struct weight_key *k)
{
	const struct stack *st = &w->p->stacks.stacks[k->stack];
	pprof_label_string(w->b, s, "path", path_name(st->path));
	if (k->comm && k->comm[0])
		pprof_label_string(w->b, s, "comm", k->comm);
	pprof_label_number(w->b, s, "pid", k->pid);
	pprof_label_number(w->b, s, "tid", k->tid);
	if (k->signal) {
		char name[16];
		pprof_label_string(w->b, s, "signal", signal_name(k->signal, name, sizeof(name)));
	}
	if (k->word) {
		char name[512];
		view_user_data_name(w->p, k->pid, k->word, name, sizeof(name), NULL);
		pprof_label_string(w->b, s, "futex_word", name);
	}
}

/* One sample per wait_sample of the collectors: the waiter's stack, waits_count and waits_time, the waker's labels. */
static void add_wait_samples(struct pprof_writer *w, const struct pprof_types *t)
{
	static const struct stack_line_style waker_line = { .separator = " <- ", .max_frames = 8, .user_frames = true,
							    .more = " <- ..." };
	const struct profile *p = w->p;
	int count_type = -1, time_type = -1;
	for (size_t i = 0; i < t->count; i++)
		if (t->types[i].kind == KIND_WAITS_COUNT)
			count_type = (int)i;
		else if (t->types[i].kind == KIND_WAITS_TIME)
			time_type = (int)i;
	if (count_type < 0)
		return;
	int64_t *values = xcalloc(t->count + 1, sizeof(*values));
	uint64_t *locations = NULL;
	size_t locations_cap = 0;
	struct strbuf line = { 0 };
	char name[512];
	for (int c = 0; c < p->ncollectors; c++) {
		const struct wait_sample *samples;
		size_t n = wait_samples_of(p, c, &samples);
		for (size_t i = 0; i < n; i++) {
			const struct wait_sample *ws = &samples[i];
			values[count_type] = (int64_t)ws->waits;
			values[time_type] = (int64_t)ws->ns;
			size_t nframes = 0;
			if (ws->stack != COLLECTOR_NO_STACK && ws->stack < p->stacks.nstacks) {
				const struct stack *st = &p->stacks.stacks[ws->stack];
				const uint32_t *frames = stack_frames(&p->stacks, st);
				GROW(locations, locations_cap, (size_t)st->nframes + 1);
				for (uint32_t k = 0; k < st->nframes; k++)
					locations[nframes++] = location_of_frame(w, frames[k]);
			}
			struct pprof_sample *s = pprof_add_sample(w->b, locations, nframes, values);
			if (nframes)
				pprof_label_string(w->b, s, "path", path_name(p->stacks.stacks[ws->stack].path));
			pprof_label_string(w->b, s, "comm", view_thread_comm(p, ws->pid, ws->tid));
			pprof_label_number(w->b, s, "pid", ws->pid);
			pprof_label_number(w->b, s, "tid", ws->tid);
			if (ws->futex)
				pprof_label_string(w->b, s, "futex_word",
						   view_user_data_name(p, ws->word_pid, ws->uaddr, name, sizeof(name), NULL));
			pprof_label_string(w->b, s, "ended_by", ws->ending);
			pprof_label_string(w->b, s, "link", ws->link);
			if (ws->waker_tid) {
				pprof_label_number(w->b, s, "waker_pid", ws->waker_pid);
				pprof_label_number(w->b, s, "waker_tid", ws->waker_tid);
				pprof_label_string(w->b, s, "waker_comm", view_thread_comm(p, ws->waker_pid, ws->waker_tid));
			}
			if (ws->waker_op)
				pprof_label_string(w->b, s, "waker_op", ws->waker_op);
			if (ws->waker_stack != COLLECTOR_NO_STACK) {
				sb_reset(&line);
				view_stack_line(p, ws->waker_stack, &waker_line, &line);
				pprof_label_string(w->b, s, "waker_stack", line.buf);
			}
		}
	}
	sb_free(&line);
	free(locations);
	free(values);
}

static void add_samples(struct pprof_writer *w, const struct pprof_types *t)
{
	const struct profile *p = w->p;
	/* per collector of the profile: the sample type index of each weight kind, or -1 */
	int (*type_of)[WEIGHT_MAX] = xcalloc((size_t)p->ncollectors + 1, sizeof(*type_of));
	for (int c = 0; c < p->ncollectors; c++)
		for (unsigned k = 0; k < WEIGHT_MAX; k++) {
			type_of[c][k] = -1;
			for (size_t i = 0; i < t->count; i++)
				if (strcmp(t->types[i].collector, p->collectors[c].name) == 0 && t->types[i].kind == k)
					type_of[c][k] = (int)i;
		}
	int64_t *values = xcalloc(t->count + 1, sizeof(*values));
	uint64_t *locations = NULL;
	size_t locations_cap = 0;
	for (size_t e = 0; e < p->weights->count; e++) {
		const struct weight_entry *we = &p->weights->entries[e];
		bool any = false;
		memset(values, 0, t->count * sizeof(*values));
		for (unsigned k = 0; k < WEIGHT_MAX; k++) {
			int ti = type_of[we->key.collector][k];
			if (ti >= 0 && we->values[k]) {
				values[ti] = (int64_t)we->values[k];
				any = true;
			}
		}
		if (!any)
			continue;
		const struct stack *st = &p->stacks.stacks[we->key.stack];
		const uint32_t *frames = stack_frames(&p->stacks, st);
		GROW(locations, locations_cap, (size_t)st->nframes + 1);
		for (uint32_t i = 0; i < st->nframes; i++)
			locations[i] = location_of_frame(w, frames[i]);
		struct pprof_sample *s = pprof_add_sample(w->b, locations, st->nframes, values);
		add_labels(w, s, &we->key);
	}
	free(locations);
	free(values);
	free(type_of);
}

/* The wall-clock entries as samples of wall_time: the span's stack under its state's root location. */
static void add_wall_samples(struct pprof_writer *w, const struct pprof_types *t)
{
	const struct profile *p = w->p;
	const struct timeline *tl = p->timeline;
	int type = -1;
	for (size_t i = 0; i < t->count; i++)
		if (t->types[i].kind == KIND_WALL_TIME)
			type = (int)i;
	if (type < 0)
		return;
	int64_t *values = xcalloc(t->count + 1, sizeof(*values));
	uint64_t *locations = NULL;
	size_t locations_cap = 0;
	char root[200];
	struct u64_map root_locations = { 0 };
	for (size_t e = 0; e < timeline_wall_count(tl); e++) {
		const struct timeline_wall *we = timeline_wall_entry(tl, e);
		const struct timeline_thread *th = timeline_thread(tl, we->thread);
		uint32_t n = 0;
		if (we->stack != TIMELINE_NO_STACK) {
			const struct stack *st = &p->stacks.stacks[we->stack];
			const uint32_t *frames = stack_frames(&p->stacks, st);
			GROW(locations, locations_cap, (size_t)st->nframes + 2);
			for (; n < st->nframes; n++)
				locations[n] = location_of_frame(w, frames[n]);
		}
		GROW(locations, locations_cap, (size_t)n + 2);
		report_wall_root(p, th->pid, we->state, we->cause, we->signal, we->detail, root, sizeof(root));
		/* one location per root frame: by its function (pprof_function() gives a name one id) */
		uint64_t function = pprof_function(w->b, root, NULL);
		uintptr_t location = (uintptr_t)u64_map_get(&root_locations, function);
		if (!location) {
			location = (uintptr_t)pprof_add_location(w->b, 0, 0, function, 0);
			u64_map_put(&root_locations, function, (void *)location);
		}
		locations[n++] = location;
		values[type] = (int64_t)we->ns;
		struct pprof_sample *s = pprof_add_sample(w->b, locations, n, values);
		const char *comm = view_thread_comm(p, th->pid, th->tid);
		pprof_label_string(w->b, s, "comm", comm);
		pprof_label_number(w->b, s, "pid", th->pid);
		pprof_label_number(w->b, s, "tid", th->tid);
		pprof_label_string(w->b, s, "state", timeline_state_key(we->state));
		if (we->signal)
			pprof_label_string(w->b, s, "signal", signal_name(we->signal, root, sizeof(root)));
		if (we->detail) {
			view_user_data_name(p, th->pid, we->detail, root, sizeof(root), NULL);
			pprof_label_string(w->b, s, "futex_word", root);
		}
	}
	u64_map_free(&root_locations);
	free(locations);
	free(values);
}

/* pprof takes the first mapping for the program's: make it the workload's executable when a frame names it. */
static void main_mapping_first(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	if (p->argc < 1)
		return;
	const char *program = dso_short_name(p->argv[0]);
	for (size_t i = 0; i < p->stacks.nframes; i++) {
		const struct frame *f = &p->stacks.frames[i];
		if (!f->kernel && f->dso[0] == '/' && strcmp(dso_short_name(f->dso), program) == 0) {
			pprof_mapping(w->b, f->dso, view_dso_build_id(p, f->dso));
			return;
		}
	}
}

static int write_one(const struct profile *p, const struct pprof_types *t, const char *path, char *err,
		     size_t errlen)
{
	if (!p->weights) {
		snprintf(err, errlen, "the recording was loaded without its weights");
		return -EINVAL;
	}
	struct pprof_writer w = { .p = p, .b = pprof_builder_new() };
	w.location_of = xcalloc(p->stacks.nframes + 1, sizeof(*w.location_of));
	for (size_t i = 0; i < t->count; i++)
		pprof_add_sample_type(w.b, t->types[i].name, t->types[i].unit);
	if (default_type(t))
		pprof_set_default_sample_type(w.b, default_type(t));
	/* --time: the window's start and length, so that pprof's share of the duration is of the window */
	uint64_t offset_ns = 0, duration_ns = (uint64_t)(profile_duration_s(p) * 1e9);
	profile_time_window(p, &offset_ns, &duration_ns);
	pprof_set_time(w.b, (int64_t)(p->start_realtime_ns + offset_ns), (int64_t)duration_ns);
	struct strbuf comment = { 0 };
	sb_addf(&comment, "sigprof report of %s:", p->file);
	for (int i = 0; i < p->argc; i++)
		sb_addf(&comment, " %s", p->argv[i]);
	pprof_add_comment(w.b, comment.buf);
	if (p->filters[0]) {
		sb_reset(&comment);
		sb_addf(&comment, "filters: %s", p->filters);
		pprof_add_comment(w.b, comment.buf);
	}
	sb_free(&comment);
	main_mapping_first(&w);
	add_samples(&w, t);
	add_wait_samples(&w, t);
	add_wall_samples(&w, t);
	/* a new file renamed over path when whole: a link or device at path is refused (safe_output, util.h) */
	struct safe_output out;
	int ret = safe_output_open(path, 0644, &out);
	if (ret == -EEXIST) {
		snprintf(err, errlen, "%s exists and is not a regular file (a link, device, FIFO or directory)", path);
	} else if (ret < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-ret));
	} else {
		ret = pprof_write_gzip(w.b, out.fp);
		if (ret)
			safe_output_abort(&out);
		else
			ret = safe_output_commit(&out);
		if (ret)
			snprintf(err, errlen, "writing %s failed: %s", path, strerror(-ret));
	}
	free(w.location_of);
	pprof_builder_free(w.b);
	return ret;
}

/* Profiles with one set of sample types (the union of theirs), each to its path. */
static int write_profiles(const struct profile *const *profiles, const char *const *paths, size_t n, char *err,
			  size_t errlen)
{
	struct pprof_types t = { 0 };
	for (size_t i = 0; i < n; i++)
		collect_types(profiles[i], &t);
	int ret = 0;
	if (!t.count) {
		snprintf(err, errlen, "no collector has samples: nothing to write");
		ret = -ENODATA;
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = write_one(profiles[i], &t, paths[i], err, errlen);
	free(t.types);
	return ret;
}

int report_pprof(const struct profile *p, const char *path, char *err, size_t errlen)
{
	return write_profiles(&p, &path, 1, err, errlen);
}

int report_pprof_pair(const struct profile *base, const char *base_path, const struct profile *changed,
		      const char *changed_path, char *err, size_t errlen)
{
	const struct profile *profiles[] = { base, changed };
	const char *paths[] = { base_path, changed_path };
	return write_profiles(profiles, paths, 2, err, errlen);
}
