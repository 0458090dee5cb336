/*
 * lock_report.c: what the lock collector prints: the exact total of
 * contentions and how much of it was recorded, then per lock (by wait
 * time) its contentions, wait distribution, kind, path and name, the futex
 * words whose calls contended it, and its stacks; in text, JSON ("locks",
 * "lock_summary") and keyed figures (lock.*).  docs/lock.md describes each
 * figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/collector.h"
#include "sigprof/json.h"
#include "sigprof/lock.h"
#include "sigprof/view.h"

#include "lock_internal.h"

/* Locks whose futex words and stacks the text report details. */
#define TEXT_DETAILED_LOCKS 3
/* Futex words listed per lock in text. */
#define TEXT_WORDS 8

/* ---- what the recording was: exact totals ---- */

struct lock_summary {
	bool any_event;
	bool has_total;
	uint64_t total;     /* contention_begin hits the kernel counted */
	uint64_t recorded;  /* contention_begin samples of the workload's tasks */
	uint64_t unsampled; /* hits counted but not recorded (throttled or lost) */
	uint64_t rebegins;  /* begins that continued a pending contention (lock.h): hits, not contentions */
	uint64_t contentions; /* hits less rebegins: the kernel's count when every hit was recorded */
	bool estimated;     /* some hits were not recorded: the per-lock figures are a part of the total */
};

static struct lock_summary summarize(struct lock_state *st, const struct profile *p)
{
	struct lock_summary sum = { .recorded = st->begins };
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->name, "lock:contention_begin") != 0 || strcmp(ev->collector, "lock") != 0)
			continue;
		sum.any_event = true;
		if (ev->has_totals) {
			sum.has_total = true;
			sum.total += ev->total_value;
		}
	}
	if (sum.has_total && sum.total > sum.recorded)
		sum.unsampled = sum.total - sum.recorded;
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks);
	for (size_t i = 0; i < n; i++)
		sum.rebegins += locks[i]->rebegins;
	sum.estimated = !sum.has_total || sum.unsampled > 0 || st->undecoded > 0;
	uint64_t hits = sum.has_total ? sum.total : sum.recorded;
	sum.contentions = hits > sum.rebegins ? hits - sum.rebegins : 0;
	return sum;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/*
 * The kind of a lock from its begins' flags.  A mutex reports MUTEX|SPIN
 * while it spins on its owner and MUTEX once it sleeps: one mutex.
 */
static const char *kind_of(const struct lock_figures *l, char *buf, size_t len)
{
	if (!l->mixed_flags)
		return lock_kind_name(l->flags, buf, len);
	if (l->flags_seen & (LOCK_F_MUTEX | LOCK_F_RT))
		return lock_kind_name(l->flags_seen & ~(uint32_t)LOCK_F_SPIN, buf, len);
	return "mixed";
}

/* ---- locks of one name ---- */

/*
 * The locks of one key added up: every bucket lock taken in
 * futex_wait_setup is one row, as perf lock contention shows callers.
 */
struct lock_class {
	const char *key, *name;  /* the key, and the name of its busiest lock */
	size_t locks;
	uint64_t contentions, wait_total, wait_max;
};

static int compare_classes(const void *a, const void *b)
{
	const struct lock_class *x = a, *y = b;
	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The classes of the tracker's locks, by wait; *out to free. */
static size_t lock_classes(struct lock_state *st, struct lock_class **out)
{
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks), nclasses = 0;
	struct lock_class *classes = xcalloc(n ? n : 1, sizeof(*classes));
	for (size_t i = 0; i < n; i++) {
		const struct lock_figures *l = locks[i];
		size_t c = 0;
		while (c < nclasses && strcmp(classes[c].key, l->key) != 0)
			c++;
		if (c == nclasses)
			classes[nclasses++] = (struct lock_class){ .key = l->key, .name = l->name };
		classes[c].locks++;
		classes[c].contentions += l->contentions;
		classes[c].wait_total += l->wait.total;
		if (l->wait.max > classes[c].wait_max)
			classes[c].wait_max = l->wait.max;
	}
	qsort(classes, nclasses, sizeof(*classes), compare_classes);
	*out = classes;
	return nclasses;
}

/* ---- text ---- */

static void text_summary(struct lock_state *st, const struct lock_summary *sum, FILE *out)
{
	if (sum->has_total)
		fprintf(out, "  contention_begin hits: %llu (exact count), %llu recorded", (unsigned long long)sum->total,
			(unsigned long long)sum->recorded);
	else
		fprintf(out, "  contention_begin hits: %llu recorded (no exact count in the file)",
			(unsigned long long)sum->recorded);
	if (sum->unsampled)
		fprintf(out, "; %llu counted by the kernel but not recorded (throttled or lost): figures marked ~ are "
			     "estimated",
			(unsigned long long)sum->unsampled);
	fprintf(out, "\n");
	fprintf(out, "  contentions: %s%llu", sum->estimated ? "~" : "", (unsigned long long)sum->contentions);
	if (sum->rebegins)
		fprintf(out, " (%llu hits continued a wait already begun: a mutex that stopped spinning to sleep)",
			(unsigned long long)sum->rebegins);
	fprintf(out, "\n");
	uint64_t orphans = lock_tracker_orphan_ends(st->tracker);
	if (orphans || st->undecoded)
		fprintf(out, "  ends without a recorded begin: %llu; undecodable samples: %llu\n",
			(unsigned long long)orphans, (unsigned long long)st->undecoded);
}

static void text_lock_row(const struct lock_figures *l, bool estimated, FILE *out)
{
	char kind[32];
	const struct duration_stats *d = &l->wait;
	fprintf(out, "  %s%11llu %10.3f %9.2f %9.2f %9.2f %10.2f  %-10s %-15s %s\n", estimated ? "~" : " ",
		(unsigned long long)l->contentions, ms(d->total), d->count ? us(d->total) / (double)d->count : 0.0,
		us(duration_quantile(d, 0.5)), us(duration_quantile(d, 0.99)), us(d->max),
		kind_of(l, kind, sizeof(kind)), path_name(lock_figures_path(l)), l->name);
}

/* Contentions on futex paths that no recorded futex call explains (its entry was sampled out). */
static uint64_t futex_unattributed(const struct lock_figures *l)
{
	uint64_t on_futex = 0, charged = 0;
	for (int path = PATH_FUTEX_WAIT; path <= PATH_FUTEX_OTHER; path++)
		on_futex += l->path_contentions[path];
	for (size_t i = 0; i < l->nwords; i++)
		charged += l->words[i].contentions;
	return on_futex > charged ? on_futex - charged : 0;
}

static void text_words(const struct lock_figures *l, FILE *out)
{
	uint64_t unattributed = futex_unattributed(l);
	if (unattributed)
		fprintf(out, "    %llu contentions in futex calls whose entry was not recorded (no word known)\n",
			(unsigned long long)unattributed);
	if (!l->nwords)
		return;
	fprintf(out, "    futex words it served (%zu%s):\n", l->nwords,
		l->nwords > 1 ? ", sharing this lock" : "");
	for (size_t i = 0; i < l->nwords && i < TEXT_WORDS; i++) {
		const struct lock_futex_word *w = &l->words[i];
		fprintf(out, "      %10llu contentions %10.3f ms  %s (%s, pid %u)\n", (unsigned long long)w->contentions,
			ms(w->wait_total), w->symbol ? w->symbol : "?", w->dso ? dso_short_name(w->dso) : "?", w->pid);
	}
	if (l->nwords > TEXT_WORDS)
		fprintf(out, "      ... %zu more words\n", l->nwords - TEXT_WORDS);
}

static void text_stacks(const struct profile *p, const struct lock_figures *l, const struct view_options *o,
			FILE *out)
{
	for (size_t i = 0; i < l->nstacks && i < o->stacks_per_path; i++) {
		const struct lock_stack *s = &l->stacks[i];
		fprintf(out, "    %llu contentions, %.3f ms waited:\n", (unsigned long long)s->contentions,
			ms(s->wait_total));
		view_text_stack(p, s->stack, o, out);
	}
}

/* The locks of one name together, when some name has several (the futex hash's bucket locks). */
static void text_classes(struct lock_state *st, const struct view_options *o, bool estimated, size_t nlocks,
			 FILE *out)
{
	struct lock_class *classes;
	size_t n = lock_classes(st, &classes);
	if (n < nlocks) {
		fprintf(out, "  by name (the locks of one name together):\n");
		fprintf(out, "  %12s %10s %10s %6s  %s\n", "contentions", "wait ms", "max us", "locks", "lock");
		for (size_t i = 0; i < n && i < o->top; i++)
			fprintf(out, "  %s%11llu %10.3f %10.2f %6zu  %s\n", estimated ? "~" : " ",
				(unsigned long long)classes[i].contentions, ms(classes[i].wait_total),
				us(classes[i].wait_max), classes[i].locks, classes[i].name);
	}
	free(classes);
}

void lock_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct lock_state *st = state;
	fprintf(out, "\nlock: kernel lock contention (lock:contention_begin to contention_end per task)\n");
	if (!view_collector_ok(p, st->self)) {
		fprintf(out, "  not recorded\n");
		return;
	}
	struct lock_summary sum = summarize(st, p);
	text_summary(st, &sum, out);
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks);
	if (!n)
		return;
	fprintf(out, "  %12s %10s %9s %9s %9s %10s  %-10s %-15s %s\n", "contentions", "wait ms", "avg us", "p50 us",
		"p99 us", "max us", "kind", "path", "lock");
	for (size_t i = 0; i < n && i < o->top; i++)
		text_lock_row(locks[i], sum.estimated, out);
	if (n > o->top)
		fprintf(out, "  ... %zu more locks (-n)\n", n - o->top);
	text_classes(st, o, sum.estimated, n, out);
	fprintf(out, "  lock wait per path:");
	for (int path = 0; path < PATH_COUNT; path++)
		if (lock_tracker_path_contentions(st->tracker, path))
			fprintf(out, "  %s %.3f ms (%llu)", path_name(path), ms(lock_tracker_path_wait(st->tracker, path)),
				(unsigned long long)lock_tracker_path_contentions(st->tracker, path));
	fprintf(out, "\n");
	for (size_t i = 0; i < n && i < TEXT_DETAILED_LOCKS && i < o->top; i++) {
		const struct lock_figures *l = locks[i];
		fprintf(out, "  %s (0x%llx):\n", l->name, (unsigned long long)l->addr);
		fprintf(out, "    per path:");
		for (int path = 0; path < PATH_COUNT; path++)
			if (l->path_contentions[path])
				fprintf(out, "  %s %.3f ms (%llu)", path_name(path), ms(l->path_wait[path]),
					(unsigned long long)l->path_contentions[path]);
		fprintf(out, "\n");
		if (l->unmatched || l->failed)
			fprintf(out, "    %llu contentions without a recorded end, %llu ended with an error\n",
				(unsigned long long)l->unmatched, (unsigned long long)l->failed);
		text_words(l, out);
		text_stacks(p, l, o, out);
	}
}

/* ---- JSON ---- */

/* One futex word a lock served: the word (named as the futex collector names it), its contentions and wait. */
static void json_lock_word(struct json_writer *w, const struct lock_futex_word *fw)
{
	json_object_begin(w, NULL);
	json_string(w, "symbol", fw->symbol ? fw->symbol : "");
	json_string(w, "dso", fw->dso); /* null when no mapping holds it */
	json_u64(w, "pid", fw->pid);
	json_hex(w, "addr", fw->uaddr);
	json_u64(w, "contentions", fw->contentions);
	json_u64(w, "wait_ns", fw->wait_total);
	json_end(w);
}

/* One stack of a lock: its frames, the path they are on, its contentions and their wait. */
static void json_lock_stack(struct json_writer *w, const struct profile *p, const struct lock_stack *s)
{
	json_object_begin(w, NULL);
	view_json_stack(w, p, s->stack);
	json_string(w, "path", path_name(view_stack_path(p, s->stack)));
	json_u64(w, "contentions", s->contentions);
	json_u64(w, "wait_ns", s->wait_total);
	json_end(w);
}

static void json_lock(struct json_writer *w, const struct profile *p, const struct lock_figures *l, bool estimated,
		      size_t limit)
{
	char buf[64];
	json_object_begin(w, NULL);
	json_hex(w, "addr", l->addr);
	json_string(w, "name", l->name);
	json_string(w, "key", l->key);
	json_string(w, "kind", kind_of(l, buf, sizeof(buf)));
	json_u64(w, "flags", l->flags_seen);
	json_u64(w, "contentions", l->contentions);
	json_bool(w, "estimated", estimated);
	view_json_durations(w, "wait_ns", &l->wait);
	json_u64(w, "rebegins", l->rebegins);
	json_u64(w, "unmatched", l->unmatched);
	json_u64(w, "failed", l->failed);
	json_string(w, "path", path_name(lock_figures_path(l)));
	json_object_begin(w, "paths");
	for (int path = 0; path < PATH_COUNT; path++) {
		if (!l->path_contentions[path])
			continue;
		json_object_begin(w, path_name(path));
		json_u64(w, "contentions", l->path_contentions[path]);
		json_u64(w, "wait_ns", l->path_wait[path]);
		json_end(w);
	}
	json_end(w);
	json_u64(w, "futex_unattributed", futex_unattributed(l));
	json_array_begin(w, "futex_words");
	for (size_t i = 0; i < l->nwords; i++)
		json_lock_word(w, &l->words[i]);
	json_end(w);
	json_array_begin(w, "stacks");
	for (size_t i = 0; i < l->nstacks && i < limit; i++)
		json_lock_stack(w, p, &l->stacks[i]);
	json_end(w);
	json_end(w);
}

void lock_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w)
{
	struct lock_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	struct lock_summary sum = summarize(st, p);
	size_t limit = o->stacks_limit_given ? o->stacks_per_path : 5;
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks);
	json_array_begin(w, "locks");
	for (size_t i = 0; i < n; i++)
		json_lock(w, p, locks[i], sum.estimated, limit);
	json_end(w);
	struct lock_class *classes;
	size_t nclasses = lock_classes(st, &classes);
	json_array_begin(w, "lock_names");
	for (size_t c = 0; c < nclasses; c++) {
		json_object_begin(w, NULL);
		json_string(w, "key", classes[c].key);
		json_string(w, "name", classes[c].name);
		json_u64(w, "locks", classes[c].locks);
		json_u64(w, "contentions", classes[c].contentions);
		json_u64(w, "wait_ns_total", classes[c].wait_total);
		json_u64(w, "wait_ns_max", classes[c].wait_max);
		json_end(w);
	}
	json_end(w);
	free(classes);
	json_object_begin(w, "lock_summary");
	if (sum.has_total)
		json_u64(w, "hits", sum.total);
	else
		json_null(w, "hits");
	json_u64(w, "contentions", sum.contentions);
	json_u64(w, "recorded", sum.recorded);
	json_u64(w, "rebegins", sum.rebegins);
	json_u64(w, "unsampled", sum.unsampled);
	json_bool(w, "estimated", sum.estimated);
	json_u64(w, "ends", st->ends);
	json_u64(w, "orphan_ends", lock_tracker_orphan_ends(st->tracker));
	json_u64(w, "undecoded_samples", st->undecoded);
	json_end(w);
}

/* ---- keyed figures ---- */

void lock_figures_rows(void *state, const struct profile *p, struct figure_rows *rows)
{
	struct lock_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	struct lock_summary sum = summarize(st, p);
	if (!sum.any_event)
		return;
	if (sum.has_total)
		figure_rows_add(rows, (double)sum.total, "count", true, "lock.hits");
	figure_rows_add(rows, (double)sum.contentions, "count", !sum.estimated, "lock.contentions");
	struct lock_class *classes;
	size_t n = lock_classes(st, &classes);
	uint64_t wait = 0;
	size_t locks = 0;
	for (size_t c = 0; c < n; c++) {
		wait += classes[c].wait_total;
		locks += classes[c].locks;
	}
	figure_rows_add(rows, (double)wait, "ns", !sum.estimated, "lock.wait_ns.total");
	figure_rows_add(rows, (double)locks, "count", !sum.estimated, "lock.locks");
	for (size_t c = 0; c < n; c++) {
		figure_rows_add(rows, (double)classes[c].contentions, "count", !sum.estimated, "lock.%s.contentions",
				classes[c].key);
		figure_rows_add(rows, (double)classes[c].wait_total, "ns", !sum.estimated, "lock.%s.wait_ns.total",
				classes[c].key);
		figure_rows_add(rows, (double)classes[c].wait_max, "ns", !sum.estimated, "lock.%s.wait_ns.max",
				classes[c].key);
	}
	free(classes);
}
