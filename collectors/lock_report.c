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

#include "sigprof/model/collector.h"
#include "sigprof/base/json.h"
#include "sigprof/collectors/lock.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/view/findings.h"
#include "sigprof/view/view.h"

#include "lock_internal.h"

/* Locks whose futex words and stacks the text report details. */
#define TEXT_DETAILED_LOCKS 3
/* Futex words listed per lock in text. */
#define TEXT_WORDS 8

/* ---- what the recording was: exact totals ---- */

struct lock_summary {
	bool any_event;
	bool has_total;
	uint64_t total;     /* contention_begin hits the kernel counted: the meter's, else the recording event's */
	uint64_t recorded;  /* contention_begin samples of the workload's tasks, gate and weighted */
	uint64_t weighted;  /* of them, weighted samples (the alternate's, above the bound) */
	uint64_t estimated_contentions; /* the contentions those stand for (their weights) */
	uint64_t above_hits; /* hits counted while the alternate was on: the windows above the bound */
	uint64_t bound_hz;  /* the bound per CPU (the alternate's frequency), 0: none in the file */
	uint64_t unsampled; /* hits the recording event counted but did not record (view_event_unsampled_hits: why) */
	uint64_t rebegins;  /* begins that continued a pending contention (lock.h): hits, not contentions */
	uint64_t contentions; /* hits less rebegins: the kernel's count when every hit was recorded */
	bool estimated;     /* weighted samples, or hits not recorded: the per-lock figures are estimated */
	bool filtered;      /* the report's filters cut the records: the exact total is the whole run's, not theirs */
};

/*
 * The events of lock:contention_begin: the one that records every hit (the
 * gate, or the only one of an older file), its weighted alternate
 * ("#sampled") and its meter ("#count"; rate_bound.h).
 */
static struct lock_summary summarize(struct lock_state *st, const struct profile *p)
{
	struct lock_summary sum = { .recorded = st->begins, .weighted = st->weighted_begins };
	bool has_meter = false, has_own = false;
	uint64_t meter = 0, own = 0;
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		size_t len;
		const char *suffix = rate_bound_suffix(ev->name, &len);
		if (strcmp(ev->collector, "lock") != 0 || len != strlen("lock:contention_begin") ||
		    strncmp(ev->name, "lock:contention_begin", len) != 0)
			continue;
		sum.any_event = true;
		if (suffix && strcmp(suffix, RATE_BOUND_SAMPLED_SUFFIX) == 0) {
			sum.bound_hz = ev->attr.sample_freq;
			sum.above_hits += ev->has_totals ? ev->total_value : 0;
		} else if (suffix && strcmp(suffix, RATE_BOUND_COUNT_SUFFIX) == 0 && ev->has_totals) {
			has_meter = true;
			meter += ev->total_value;
		} else if (!suffix && ev->has_totals) {
			has_own = true;
			own += ev->total_value;
		}
	}
	sum.has_total = has_meter || has_own;
	sum.total = has_meter ? meter : own;
	sum.filtered = view_records_filtered(p);
	/* the exact count says what the records of the whole run missed; with filters, it is no measure of theirs */
	bool whole = sum.has_total && !sum.filtered;
	uint64_t gate_recorded = sum.recorded - sum.weighted;
	if (whole && has_own && own > gate_recorded)
		sum.unsampled = own - gate_recorded;
	sum.estimated_contentions = lock_tracker_estimated(st->tracker);
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks);
	for (size_t i = 0; i < n; i++)
		sum.rebegins += locks[i]->rebegins;
	sum.estimated = !sum.has_total || sum.unsampled > 0 || st->undecoded > 0 || sum.weighted > 0 ||
			(has_meter && meter > own);
	/* without it: the begins recorded one by one, and the contentions the weighted ones stand for */
	uint64_t hits = whole ? sum.total : gate_recorded + sum.estimated_contentions;
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
	/* the locks that have no name (no symbol, no stack to say who took them) are not the first one's address */
	for (size_t c = 0; c < nclasses; c++)
		if (classes[c].locks > 1 && strcmp(classes[c].key, "unnamed") == 0)
			classes[c].name = "unnamed locks (no data symbol, no stack)";
	sort_items(classes, nclasses, sizeof(*classes), compare_classes);
	*out = classes;
	return nclasses;
}

/* ---- text ---- */

static void text_summary(struct lock_state *st, const struct lock_summary *sum, const struct view_options *o,
			 FILE *out)
{
	struct strbuf line = { 0 };
	if (sum->has_total && sum->filtered)
		sb_addf(&line, "  contention_begin hits: %llu recorded in the report's filters (the exact count, %llu, is "
			       "the whole run's)",
			(unsigned long long)sum->recorded, (unsigned long long)sum->total);
	else if (sum->has_total)
		sb_addf(&line, "  contention_begin hits: %llu (exact count), %llu recorded", (unsigned long long)sum->total,
			(unsigned long long)sum->recorded);
	else
		sb_addf(&line, "  contention_begin hits: %llu recorded (no exact count in the file)",
			(unsigned long long)sum->recorded);
	if (sum->unsampled)
		sb_addf(&line,
			"; %llu counted by the kernel but not recorded (throttled, lost, or on an idle CPU): "
			"figures marked ~ are estimated",
			(unsigned long long)sum->unsampled);
	view_text_wrapped(o, out, 4, "%s", line.buf);
	sb_reset(&line);
	if (sum->bound_hz && (sum->weighted || sum->above_hits)) {
		char hits[48] = ""; /* the alternate's count is the whole run's, like the gate's */
		if (!sum->filtered)
			snprintf(hits, sizeof(hits), "%llu hits, ", (unsigned long long)sum->above_hits);
		view_text_wrapped(o, out, 4, "  above the bound of %llu per second per CPU (10 ms windows): %s"
				  "%llu weighted samples standing for ~%llu contentions; those are estimated (figures "
				  "marked ~) and have no wait: waits are measured on the hits recorded one by one",
				  (unsigned long long)sum->bound_hz, hits, (unsigned long long)sum->weighted,
				  (unsigned long long)sum->estimated_contentions);
	}
	else if (sum->bound_hz)
		view_text_wrapped(o, out, 4, "  every hit recorded: no CPU went above the bound of %llu per second (10 ms "
				  "windows)", (unsigned long long)sum->bound_hz);
	sb_addf(&line, "  contentions: %s%llu", sum->estimated ? "~" : "", (unsigned long long)sum->contentions);
	if (sum->rebegins)
		sb_addf(&line, " (%llu hits continued a wait already begun: a mutex that stopped spinning to sleep)",
			(unsigned long long)sum->rebegins);
	view_text_wrapped(o, out, 4, "%s", line.buf);
	sb_free(&line);
	uint64_t orphans = lock_tracker_orphan_ends(st->tracker);
	if (orphans || st->undecoded)
		view_text_wrapped(o, out, 4, "  ends without a recorded begin: %llu; undecodable samples: %llu",
				  (unsigned long long)orphans, (unsigned long long)st->undecoded);
}

/*
 * The lock table's columns: address, contentions, wait ms, avg, p50, p99,
 * max, kind, path, name (view_table).  The address comes first: two locks of
 * one name (the bucket locks of futex_wait_setup) are told apart by it, a
 * table split to fit the width repeats it, and the blocks below and the
 * word table name the locks by it.
 */
static const unsigned lock_columns[] = { 20, 13, 11, 10, 10, 10, 11, 12, 16, 10 };

static void text_lock_row(struct view_table *t, const struct lock_figures *l, bool estimated)
{
	char kind[32], addr[24];
	const struct duration_stats *d = &l->wait;
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)l->addr);
	view_table_addf(t, "  %-18s %s%11llu %10.3f %9.2f %9.2f %9.2f %10.2f  %-10s %-15s %s", addr,
			estimated ? "~" : " ", (unsigned long long)l->contentions, ms(d->total),
			d->count ? us(d->total) / (double)d->count : 0.0, us(duration_quantile(d, 0.5)),
			us(duration_quantile(d, 0.99)), us(d->max), kind_of(l, kind, sizeof(kind)),
			path_name(lock_figures_path(l)), l->name);
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

/* A futex word's columns under a lock: contentions, wait ms, word (view_table). */
static const unsigned lock_word_columns[] = { 28, 14, 10 };

static void text_words(const struct lock_figures *l, bool estimated, const struct view_options *o, FILE *out)
{
	uint64_t unattributed = futex_unattributed(l);
	if (unattributed)
		view_text_wrapped(o, out, 6, "    %llu contentions in futex calls of no known word (the call's entry "
				  "was not recorded one by one)", (unsigned long long)unattributed);
	if (!l->nwords)
		return;
	fprintf(out, "    futex words it served (%zu%s):\n", l->nwords,
		l->nwords > 1 ? ", sharing this lock" : "");
	struct view_table t = { .columns = lock_word_columns, .ncolumns = ARRAY_SIZE(lock_word_columns) };
	for (size_t i = 0; i < l->nwords && i < TEXT_WORDS; i++) {
		const struct lock_futex_word *w = &l->words[i];
		view_table_addf(&t, "     %s%10llu contentions %10.3f ms  %s (%s, pid %u)", estimated ? "~" : " ",
				(unsigned long long)w->contentions, ms(w->wait_total), w->symbol ? w->symbol : "?",
				w->dso ? dso_short_name(w->dso) : "?", w->pid);
	}
	view_table_print(&t, o, out);
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

/* The class table's columns: contentions, wait ms, max us, locks, lock (view_table). */
static const unsigned class_columns[] = { 14, 11, 11, 7, 10 };

/* The locks of one name together, when some name has several (the futex hash's bucket locks). */
static void text_classes(struct lock_state *st, const struct view_options *o, bool estimated, size_t nlocks,
			 FILE *out)
{
	struct lock_class *classes;
	size_t n = lock_classes(st, &classes);
	if (n < nlocks) {
		fprintf(out, "  by name (the locks of one name together):\n");
		struct view_table t = { .columns = class_columns, .ncolumns = ARRAY_SIZE(class_columns) };
		view_table_addf(&t, "  %12s %10s %10s %6s  %s", "contentions", "wait ms", "max us", "locks", "lock");
		for (size_t i = 0; i < n && i < o->top; i++)
			view_table_addf(&t, "  %s%11llu %10.3f %10.2f %6zu  %s", estimated ? "~" : " ",
					(unsigned long long)classes[i].contentions, ms(classes[i].wait_total),
					us(classes[i].wait_max), classes[i].locks, classes[i].name);
		view_table_print(&t, o, out);
	}
	free(classes);
}

/* The per-word table's columns: word, contentions, wait ms, locks, shares, its locks (view_table). */
static const unsigned word_columns[] = { 32, 13, 11, 7, 7, 10 };

/*
 * Per futex word: the contentions its calls met, their wait, and the locks
 * (bucket locks) they went through; a word that shares a lock with another
 * word is flagged: a change of the futex hash moves exactly that.
 */
static void text_futex_words(struct lock_state *st, const struct profile *p, const struct view_options *o,
			     bool estimated, FILE *out)
{
	struct lock_word_figures *words;
	size_t n = lock_tracker_futex_words(st->tracker, &words);
	if (!n) {
		lock_word_figures_free(words, n);
		return;
	}
	size_t shared = 0;
	for (size_t i = 0; i < n; i++)
		shared += words[i].sharing > 0;
	view_text_wrapped(o, out, 4, "  per futex word (the locks its calls contended; shares: other words through "
			  "one of its bucket locks):");
	struct view_table t = { .columns = word_columns, .ncolumns = ARRAY_SIZE(word_columns) };
	view_table_addf(&t, "  %-30s %12s %10s %6s %6s  %s", "word", "contentions", "wait ms", "locks", "shares",
			"busiest lock (contentions)");
	char word[160], locks[400];
	for (size_t i = 0; i < n && i < o->top; i++) {
		const struct lock_word_figures *w = &words[i];
		snprintf(word, sizeof(word), "%s (%s)", w->symbol ? w->symbol : "?", w->dso ? dso_short_name(w->dso) : "?");
		size_t len = 0;
		locks[0] = '\0';
		/* the locks by address (the lock table names them): a word's row stays short */
		for (size_t k = 0; k < w->nlocks && k < 1 && len < sizeof(locks); k++)
			len += (size_t)snprintf(locks + len, sizeof(locks) - len, "%s0x%llx (%llu)", k ? " " : "",
						(unsigned long long)w->locks[k].lock->addr,
						(unsigned long long)w->locks[k].contentions);
		if (w->nlocks > 1 && len < sizeof(locks))
			snprintf(locks + len, sizeof(locks) - len, " +%zu more", w->nlocks - 1);
		view_table_addf(&t, "  %-30s %s%11llu %10.3f %6zu %5zu%s  %s", word, estimated ? "~" : " ",
				(unsigned long long)w->contentions, ms(w->wait_total), w->nlocks, w->sharing,
				w->sharing ? "!" : " ", locks);
	}
	view_table_print(&t, o, out);
	if (n > o->top)
		fprintf(out, "  ... %zu more words (-n)\n", n - o->top);
	if (shared)
		view_text_wrapped(o, out, 4, "  ! %zu of %zu words share a contended bucket lock with another word (one "
				  "futex hash bucket): a change of the hash (FUTEX_PRIVATE_HASH, the bucket count) moves "
				  "them",
				  shared, n);
	(void)p;
	lock_word_figures_free(words, n);
}

void lock_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct lock_state *st = state;
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "lock: kernel lock contention (lock:contention_begin to contention_end per task)");
	if (!view_collector_ok(p, st->self)) {
		fprintf(out, "  not recorded\n");
		return;
	}
	struct lock_summary sum = summarize(st, p);
	text_summary(st, &sum, o, out);
	struct lock_figures *const *locks;
	size_t n = lock_tracker_locks(st->tracker, &locks);
	if (!n)
		return;
	struct view_table t = { .columns = lock_columns, .ncolumns = ARRAY_SIZE(lock_columns) };
	view_table_addf(&t, "  %-18s %12s %10s %9s %9s %9s %10s  %-10s %-15s %s", "lock", "contentions", "wait ms",
			"avg us", "p50 us", "p99 us", "max us", "kind", "path", "name");
	for (size_t i = 0; i < n && i < o->top; i++)
		text_lock_row(&t, locks[i], sum.estimated);
	view_table_print(&t, o, out);
	if (n > o->top)
		fprintf(out, "  ... %zu more locks (-n)\n", n - o->top);
	text_classes(st, o, sum.estimated, n, out);
	text_futex_words(st, p, o, sum.estimated, out);
	struct strbuf line = { 0 };
	for (int path = 0; path < PATH_COUNT; path++)
		if (lock_tracker_path_contentions(st->tracker, path))
			sb_addf(&line, "  %s %.3f ms (%llu)", path_name(path),
				    ms(lock_tracker_path_wait(st->tracker, path)),
				    (unsigned long long)lock_tracker_path_contentions(st->tracker, path));
	view_text_wrapped(o, out, 4, "  lock wait per path:%s", line.buf ? line.buf : "");
	sb_free(&line);
	for (size_t i = 0; i < n && i < TEXT_DETAILED_LOCKS && i < o->top; i++) {
		const struct lock_figures *l = locks[i];
		view_text_wrapped(o, out, 4, "  %s (0x%llx):", l->name, (unsigned long long)l->addr);
		for (int path = 0; path < PATH_COUNT; path++)
			if (l->path_contentions[path])
				sb_addf(&line, "  %s %.3f ms (%llu)", path_name(path), ms(l->path_wait[path]),
					    (unsigned long long)l->path_contentions[path]);
		view_text_wrapped(o, out, 6, "    per path:%s", line.buf ? line.buf : "");
		sb_free(&line);
		if (l->unmatched || l->failed || l->unmeasured)
			view_text_wrapped(o, out, 6, "    %llu contentions without a recorded end, %llu whose end fell "
					  "above the bound (not measured), %llu ended with an error",
					  (unsigned long long)l->unmatched, (unsigned long long)l->unmeasured,
					  (unsigned long long)l->failed);
		text_words(l, sum.estimated, o, out);
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
	json_u64(w, "estimated_contentions", fw->estimated);
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
	json_u64(w, "estimated_contentions", s->estimated);
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
	json_u64(w, "estimated_contentions", l->estimated);
	json_u64(w, "weighted_samples", l->weighted_samples);
	view_json_durations(w, "wait_ns", &l->wait);
	json_u64(w, "rebegins", l->rebegins);
	json_u64(w, "unmatched", l->unmatched);
	json_u64(w, "unmeasured", l->unmeasured);
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

/* Per futex word: its contentions over every lock, and the locks its calls went through. */
static void json_futex_words(struct json_writer *w, struct lock_state *st, bool estimated)
{
	struct lock_word_figures *words;
	size_t n = lock_tracker_futex_words(st->tracker, &words);
	json_array_begin(w, "lock_futex_words");
	for (size_t i = 0; i < n; i++) {
		const struct lock_word_figures *fw = &words[i];
		json_object_begin(w, NULL);
		json_string(w, "symbol", fw->symbol ? fw->symbol : "");
		json_string(w, "dso", fw->dso);
		json_u64(w, "pid", fw->pid);
		json_hex(w, "addr", fw->uaddr);
		json_u64(w, "contentions", fw->contentions);
		json_bool(w, "estimated", estimated);
		json_u64(w, "estimated_contentions", fw->estimated);
		json_u64(w, "wait_ns", fw->wait_total);
		json_u64(w, "sharing", fw->sharing);
		json_array_begin(w, "locks");
		for (size_t k = 0; k < fw->nlocks; k++) {
			const struct lock_word_lock *wl = &fw->locks[k];
			json_object_begin(w, NULL);
			json_hex(w, "addr", wl->lock->addr);
			json_string(w, "name", wl->lock->name);
			json_u64(w, "contentions", wl->contentions);
			json_u64(w, "wait_ns", wl->wait_total);
			json_u64(w, "words", wl->lock->nwords);
			json_end(w);
		}
		json_end(w);
		json_end(w);
	}
	json_end(w);
	lock_word_figures_free(words, n);
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
	json_futex_words(w, st, sum.estimated);
	json_object_begin(w, "lock_summary");
	if (sum.has_total)
		json_u64(w, "hits", sum.total);
	else
		json_null(w, "hits");
	json_bool(w, "filtered", sum.filtered);
	json_u64(w, "contentions", sum.contentions);
	json_u64(w, "recorded", sum.recorded);
	json_u64(w, "rebegins", sum.rebegins);
	json_u64(w, "unsampled", sum.unsampled);
	json_bool(w, "estimated", sum.estimated);
	if (sum.bound_hz)
		json_u64(w, "bound_hz", sum.bound_hz);
	else
		json_null(w, "bound_hz");
	json_u64(w, "above_bound_hits", sum.above_hits);
	json_u64(w, "weighted_samples", sum.weighted);
	json_u64(w, "estimated_contentions", sum.estimated_contentions);
	json_u64(w, "ends", st->ends);
	json_u64(w, "orphan_ends", lock_tracker_orphan_ends(st->tracker));
	json_u64(w, "undecoded_samples", st->undecoded);
	json_end(w);
}

/* ---- keyed figures ---- */

/* lock.futex_word.SYMBOL.*: the words of one symbol added up (one row per key). */
static void figure_rows_futex_words(struct lock_state *st, struct figure_rows *rows, bool exact)
{
	struct lock_word_figures *words;
	size_t n = lock_tracker_futex_words(st->tracker, &words);
	/* a key names a word by its data symbol, which several words can share: theirs add up */
	for (size_t i = 0; i < n; i++) {
		const char *sym = words[i].symbol ? words[i].symbol : "";
		figure_rows_merge(rows, FIGURE_SUM, (double)words[i].contentions, "count", exact,
				  "lock.futex_word.%s.contentions", sym);
		figure_rows_merge(rows, FIGURE_SUM, (double)words[i].wait_total, "ns", exact,
				  "lock.futex_word.%s.wait_ns.total", sym);
		figure_rows_merge(rows, FIGURE_SUM, (double)words[i].nlocks, "count", exact, "lock.futex_word.%s.locks",
				  sym);
		figure_rows_merge(rows, FIGURE_SUM, (double)words[i].sharing, "count", exact,
				  "lock.futex_word.%s.sharing", sym);
	}
	lock_word_figures_free(words, n);
}

void lock_figures_rows(void *state, const struct profile *p, struct figure_rows *rows)
{
	struct lock_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	struct lock_summary sum = summarize(st, p);
	if (!sum.any_event)
		return;
	if (sum.has_total && !sum.filtered) /* the whole run's count is no figure of the filtered records */
		figure_rows_add(rows, (double)sum.total, "count", true, "lock.hits");
	figure_rows_add(rows, (double)sum.contentions, "count", !sum.estimated, "lock.contentions");
	if (sum.bound_hz)
		figure_rows_add(rows, (double)sum.estimated_contentions, "count", false, "lock.estimated_contentions");
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
	figure_rows_futex_words(st, rows, !sum.estimated);
}

/* ---- findings (view/findings.h): the report's first screen ---- */

/*
 * The lock class that held the workload longest: its contentions, its
 * wait, how many locks of that name, and the paths its contentions were
 * on (a bucket lock of futex_wait_setup ranks with the futex paths).
 */
void lock_findings(void *state, const struct profile *p, struct findings *out)
{
	struct lock_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	struct lock_summary sum = summarize(st, p);
	struct lock_class *classes;
	size_t n = lock_classes(st, &classes);
	if (n && classes[0].contentions) {
		/*
		 * It ranks by its wait on each path (the paths' waits, all names
		 * together, in its name's part): 34 ms of waits spread over every
		 * path of stress-ng --futex ranked at 97% when it took the paths'
		 * whole time.
		 */
		uint64_t all = 0, ns[PATH_COUNT];
		for (size_t c = 0; c < n; c++)
			all += classes[c].wait_total;
		double part = all ? (double)classes[0].wait_total / (double)all : 0;
		for (int path = 0; path < PATH_COUNT; path++)
			ns[path] = (uint64_t)(part * (double)lock_tracker_path_wait(st->tracker, path));
		char count[32], dur[32], locks[48] = "";
		if (classes[0].locks > 1)
			snprintf(locks, sizeof(locks), " (%zu locks of that name)", classes[0].locks);
		findings_add_path_time(out, ns, "lock: kernel lock contention",
			     "lock: %s contended %s%s times%s, %s waited", classes[0].name, sum.estimated ? "~" : "",
			     findings_count(classes[0].contentions, count, sizeof(count)), locks,
			     findings_duration(classes[0].wait_total, dur, sizeof(dur)));
		if (sum.estimated)
			findings_caveat(out, "lock figures marked ~ are estimated (weighted samples above the rate bound, "
					     "or hits the kernel counted and did not record)");
	}
	free(classes);
}
