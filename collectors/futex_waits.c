/*
 * futex_waits.c: the futex collector's wake linker (waits.h) as part of its
 * analyzer: what feeds it besides the futex calls (the scheduler's samples
 * and records, through the sched collector's sched_event hook; the cpu
 * samples of every thread, through the observe hook) and what it prints:
 * the "Waits" text section, the "waits" JSON object, the
 * futex.word.W.wakers.* figure rows and the waker of each wait's exit in
 * `sigprof script`.  docs/waits.md explains the linking and its limits.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/base/json.h"
#include "sigprof/collectors/waits.h"
#include "sigprof/view/view.h"
#include "sigprof/base/util.h"

#include "futex_internal.h"

/* ---- the feed ---- */

/* The observe hook (collector.h): scheduler samples through the sched collector's eyes, cpu samples as they are. */
void futex_waits_observe(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct futex_state *st = state;
	struct sched_event_facts f;
	if (view_sched_event_of(p, s, &f)) {
		if (f.kind == SCHED_FACT_WAKING) {
			waits_waking(st->waits, f.target, s->time, s->pid, s->tid, f.irq);
			return;
		}
		if (f.kind == SCHED_FACT_WAKING_STACK) {
			if (!f.irq)
				waits_waking_stack(st->waits, s->tid, f.target, s->time, stack);
			return;
		}
		if (f.prev_dead)
			waits_task_exit(st->waits, f.prev_tid);
		else
			waits_switch_out(st->waits, f.prev_tid == s->tid ? s->pid : 0, f.prev_tid, s->time, stack,
					 f.prev_sleeps);
		if (f.next_tid)
			waits_switch_in(st->waits, f.next_tid, s->time);
		return;
	}
	if (s->event && strcmp(s->event->collector, "cpu") == 0)
		waits_cpu_sample(st->waits, s->tid, s->time, stack);
}

/* The record hook (collector.h): the sched collector's SWITCH records (switch-ins, preemptions), exits. */
void futex_waits_record(void *state, const struct profile *p, const struct perf_event_header *rec,
			const struct sp_sample_id *id)
{
	(void)p;
	struct futex_state *st = state;
	const uint32_t *u32 = (const void *)(rec + 1);
	if (rec->type == PERF_RECORD_EXIT && rec->size >= 24) {
		waits_task_exit(st->waits, u32[2]);
		return;
	}
	if (!record_is_switch(rec->type) || !id->valid || strcmp(id->event->collector, "sched") != 0)
		return;
	if (!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT))
		waits_switch_in(st->waits, id->tid, id->time);
	else if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
		waits_switch_out_preempted(st->waits, id->tid, id->time);
}

/* ---- words and stacks in words ---- */

static const char *word_label(const struct profile *p, bool futex, uint32_t pid, uint64_t uaddr, char *buf,
			      size_t len)
{
	/* a futex call whose entry was a weighted sample (above the rate bound) is not followed: its sleeps land here */
	if (!futex)
		return snprintf(buf, len, "(sleeps outside a recorded futex call)"), buf;
	return view_user_data_name(p, pid, uaddr, buf, len, NULL);
}

/* A stack on one line from its first user frame, at most 6 frames; "(none recorded)" for UINT32_MAX. */
static void stack_line(const struct profile *p, uint32_t stack, struct strbuf *sb)
{
	static const struct stack_line_style style = { .separator = " <- ", .max_frames = 6, .user_frames = true,
						       .more = " <- ..." };
	if (stack == UINT32_MAX) {
		sb_addstr(sb, "(no stack recorded)");
		return;
	}
	view_stack_line(p, stack, &style, sb);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static uint64_t sum_ns(const uint64_t *ns)
{
	uint64_t total = 0;
	for (int e = 0; e < WAIT_END_COUNT; e++)
		total += ns[e];
	return total;
}

/* "tid 123 (comm)", or "an interrupt" / "nobody recorded". */
static void waker_words(const struct profile *p, const struct wait_step *s, bool irq, struct strbuf *sb)
{
	if (s->waker_tid)
		sb_addf(sb, "tid %u (%s)", s->waker_tid, PRINTABLE(view_thread_comm(p, s->waker_pid, s->waker_tid)));
	else if (irq || s->ending == WAIT_END_INTERRUPT)
		sb_addstr(sb, "an interrupt or timer");
	else
		sb_addstr(sb, "no waking recorded");
}

/* ---- text ---- */

static void text_totals(const struct waits_totals *t, const struct view_options *o, FILE *out)
{
	uint64_t waits = 0;
	for (int e = 0; e < WAIT_END_COUNT; e++)
		waits += t->waits[e];
	struct strbuf sb = { 0 };
	sb_addf(&sb, "  %llu blocking waits (%llu futex, %llu sleeps outside a recorded futex call), %.3f ms; ended by",
		(unsigned long long)waits, (unsigned long long)t->futex_waits, (unsigned long long)t->sched_waits,
		ms(sum_ns(t->ns)));
	for (int e = 0; e < WAIT_END_COUNT; e++)
		sb_addf(&sb, "%s %s %llu (%.3f ms)", e ? "," : "", wait_ending_name((enum wait_ending)e),
			(unsigned long long)t->waits[e], ms(t->ns[e]));
	view_text_wrapped(o, out, 4, "%s", sb.buf);
	sb_free(&sb);
	for (int r = WAIT_LINKED + 1; r < WAIT_REASON_COUNT; r++)
		if (t->unlinked[r])
			view_text_wrapped(o, out, 6, "    %llu waits: %s", (unsigned long long)t->unlinked[r],
					  wait_unlinked_why((enum wait_unlinked_reason)r));
	if (t->waker_stacks_at_waking)
		view_text_wrapped(o, out, 6, "    %llu waits ended outside a futex call have the waker's stack at its "
				  "waking (sched_waking#stack)", (unsigned long long)t->waker_stacks_at_waking);
	if (t->weighted_calls)
		view_text_wrapped(o, out, 6, "    %llu wait calls recorded as weighted samples (above the rate bound) "
				  "are not linked", (unsigned long long)t->weighted_calls);
}

static void text_words(struct futex_state *st, const struct profile *p, const struct view_options *o, FILE *out)
{
	const struct wait_word_stats *const *words;
	size_t n = waits_words(st->waits, &words);
	if (!n)
		return;
	static const unsigned columns[] = { 40, 8, 12, 8, 8, 8, 8, 9, 12 };
	struct view_table t = { .columns = columns, .ncolumns = ARRAY_SIZE(columns) };
	view_table_addf(&t, "  %-38s %7s %11s %7s %7s %7s %7s %8s %11s", "word", "waits", "wait ms", "task", "irq",
			"signal", "timeout", "unlinked", "wake->run us");
	size_t limit = (size_t)o->top < n ? (size_t)o->top : n;
	char name[256];
	for (size_t i = 0; i < limit; i++) {
		const struct wait_word_stats *w = words[i];
		uint64_t waits = 0;
		for (int e = 0; e < WAIT_END_COUNT; e++)
			waits += w->waits[e];
		double run_us = w->wake_to_run_count ? (double)w->wake_to_run_ns / (double)w->wake_to_run_count / 1e3 : 0;
		view_table_addf(&t, "  %-38s %7llu %11.3f %7llu %7llu %7llu %7llu %8llu %11.1f",
				word_label(p, w->futex, w->word_pid, w->uaddr, name, sizeof(name)),
				(unsigned long long)waits, ms(sum_ns(w->ns)), (unsigned long long)w->waits[WAIT_END_TASK],
				(unsigned long long)w->waits[WAIT_END_INTERRUPT],
				(unsigned long long)w->waits[WAIT_END_SIGNAL],
				(unsigned long long)w->waits[WAIT_END_TIMEOUT],
				(unsigned long long)w->waits[WAIT_END_UNLINKED], run_us);
	}
	view_table_print(&t, o, out);
}

/* One line of a blame list: rows whose word and stack read the same are one (stacks differing in kernel frames). */
struct blame_line {
	char *text;  /* "WORD\tSTACK" */
	double weighted_ns;
	uint64_t ns, waits, samples;
};

static int compare_blame_lines(const void *a, const void *b)
{
	const struct blame_line *x = a, *y = b;
	if (x->weighted_ns != y->weighted_ns)
		return x->weighted_ns > y->weighted_ns ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void text_blame(const struct profile *p, const struct wait_blame *const *rows, size_t n, bool work,
		       const struct view_options *o, FILE *out)
{
	struct blame_line *lines = xcalloc(n ? n : 1, sizeof(*lines));
	size_t nlines = 0;
	struct u64_map index = { 0 }; /* hash of a line -> its index + 1 */
	char name[256];
	for (size_t i = 0; i < n; i++) {
		const struct wait_blame *b = rows[i];
		struct strbuf sb = { 0 };
		sb_addf(&sb, "%s\t", word_label(p, b->futex, b->word_pid, b->uaddr, name, sizeof(name)));
		stack_line(p, b->stack, &sb);
		uint64_t hash = hash_bytes(sb.buf, sb.len, 0);
		uintptr_t at = (uintptr_t)u64_map_get(&index, hash);
		size_t k = at ? at - 1 : nlines;
		if (at && strcmp(lines[k].text, sb.buf) != 0)
			for (k = 0; k < nlines && strcmp(lines[k].text, sb.buf) != 0; k++)
				; /* a hash collision: look the long way */
		if (k == nlines) {
			lines[nlines++].text = sb.buf;
			if (!at)
				u64_map_put(&index, hash, (void *)(uintptr_t)nlines);
		} else {
			sb_free(&sb);
		}
		lines[k].weighted_ns += b->weighted_ns;
		lines[k].ns += b->ns;
		lines[k].waits += b->waits;
		lines[k].samples += b->samples;
	}
	u64_map_free(&index);
	sort_items(lines, nlines, sizeof(*lines), compare_blame_lines);
	size_t limit = (size_t)o->top < nlines ? (size_t)o->top : nlines;
	for (size_t i = 0; i < nlines; i++) {
		char *tab = strchr(lines[i].text, '\t');
		*tab = '\0';
		if (i >= limit)
			;
		else if (work)
			view_text_wrapped(o, out, 6, "    %.3f ms of %s's waiting (%llu samples in %llu waits): %s",
					  lines[i].weighted_ns / 1e6, lines[i].text, (unsigned long long)lines[i].samples,
					  (unsigned long long)lines[i].waits, tab + 1);
		else
			view_text_wrapped(o, out, 6, "    %.3f ms, %llu waits on %s ended at: %s", ms(lines[i].ns),
					  (unsigned long long)lines[i].waits, lines[i].text, tab + 1);
		free(lines[i].text);
	}
	free(lines);
}

static void text_step(const struct profile *p, const struct wait_step *s, struct strbuf *sb)
{
	char name[256];
	sb_addf(sb, "tid %u (%s) waited %.3f ms on %s, ended by %s", s->tid, PRINTABLE(view_thread_comm(p, s->pid, s->tid)),
		ms(s->end - s->start), word_label(p, s->futex, s->word_pid, s->uaddr, name, sizeof(name)),
		wait_ending_name(s->ending));
	if (s->waker_tid)
		sb_addf(sb, " tid %u (%s)", s->waker_tid, PRINTABLE(view_thread_comm(p, s->waker_pid, s->waker_tid)));
}

static void text_longest(struct futex_state *st, const struct profile *p, const struct view_options *o, FILE *out)
{
	const struct wait_record *recs;
	size_t n = waits_longest(st->waits, &recs);
	size_t limit = (size_t)o->top < n ? (size_t)o->top : n;
	if (!limit)
		return;
	view_text_wrapped(o, out, 4, "  longest waits, with the waker's work during them and the chain behind them:");
	for (size_t i = 0; i < limit; i++) {
		const struct wait_record *r = &recs[i];
		struct strbuf sb = { 0 };
		text_step(p, &r->step, &sb);
		if (!r->step.waker_tid && r->step.ending != WAIT_END_TASK)
			sb_addf(&sb, " (");
		else
			sb_addf(&sb, " (waker ");
		waker_words(p, &r->step, r->waker_irq, &sb);
		if (r->run_time)
			sb_addf(&sb, ", wake->run %.1f us", (double)(r->run_time - r->wake_time) / 1e3);
		sb_addstr(&sb, ")");
		view_text_wrapped(o, out, 6, "    %s", sb.buf);
		sb.len = 0;
		stack_line(p, r->step.stack, &sb);
		view_text_wrapped(o, out, 8, "      waiter: %s", sb.buf);
		if (r->step.ending == WAIT_END_TASK) {
			sb.len = 0;
			stack_line(p, r->step.waker_stack, &sb);
			if (r->waker_op != FOP_COUNT)
				view_text_wrapped(o, out, 8, "      waker's %s: %s", futex_op_name(r->waker_op), sb.buf);
			else if (r->waker_stack_at_waking)
				view_text_wrapped(o, out, 8, "      waker at its waking (no futex call): %s", sb.buf);
			else
				view_text_wrapped(o, out, 8, "      waker: %s", wait_unlinked_why(r->why));
			for (size_t k = 0; k < r->nwork; k++) {
				sb.len = 0;
				stack_line(p, r->work[k].stack, &sb);
				view_text_wrapped(o, out, 8, "      waker ran %.0f%% (%u of %u samples%s): %s",
						  100.0 * r->work[k].samples / r->waker_samples, r->work[k].samples,
						  r->waker_samples, r->waker_samples_partial ? ", part of the wait" : "",
						  sb.buf);
			}
		} else if (r->step.ending == WAIT_END_UNLINKED) {
			view_text_wrapped(o, out, 8, "      not linked: %s", wait_unlinked_why(r->why));
		}
		for (size_t k = 0; k < r->chain_len; k++) {
			sb.len = 0;
			text_step(p, &r->chain[k], &sb);
			view_text_wrapped(o, out, 10 + 2 * k, "      %*s<- before: %s", (int)(2 * k), "", sb.buf);
		}
		sb_free(&sb);
	}
}

void futex_waits_text(struct futex_state *st, const struct profile *p, const struct view_options *o, FILE *out)
{
	const struct waits_totals *t = waits_totals(st->waits);
	uint64_t waits = 0;
	for (int e = 0; e < WAIT_END_COUNT; e++)
		waits += t->waits[e];
	if (!waits)
		return;
	fprintf(out, "\nWaits: who ended them (docs/waits.md)\n");
	text_totals(t, o, out);
	text_words(st, p, o, out);
	const struct wait_blame *const *rows;
	size_t n = waits_release_blame(st->waits, &rows);
	if (n) {
		view_text_wrapped(o, out, 4, "  wakers' release sites, by the wait time they ended:");
		text_blame(p, rows, n, false, o, out);
	}
	n = waits_work_blame(st->waits, &rows);
	if (n) {
		view_text_wrapped(o, out, 4, "  wakers' work during the waits they ended, by wait time weighted by the waker's samples:");
		text_blame(p, rows, n, true, o, out);
	}
	text_longest(st, p, o, out);
}

/* ---- JSON ---- */

static void json_word_key(struct json_writer *w, const struct profile *p, bool futex, uint32_t pid, uint64_t uaddr)
{
	char buf[256];
	json_bool(w, "futex", futex);
	if (futex) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)uaddr);
		json_string(w, "uaddr", buf);
		json_u64(w, "pid", pid);
		json_string(w, "symbol", view_user_data_name(p, pid, uaddr, buf, sizeof(buf), NULL));
	}
}

static void json_endings(struct json_writer *w, const uint64_t *waits, const uint64_t *ns)
{
	json_object_begin(w, "ended_by");
	for (int e = 0; e < WAIT_END_COUNT; e++) {
		json_object_begin(w, wait_ending_name((enum wait_ending)e));
		json_u64(w, "waits", waits[e]);
		json_u64(w, "wait_ns", ns[e]);
		json_end(w);
	}
	json_end(w);
}

static void json_stack_or_null(struct json_writer *w, const struct profile *p, const char *key, uint32_t stack)
{
	if (stack == UINT32_MAX) {
		json_null(w, key);
		return;
	}
	json_object_begin(w, key);
	view_json_stack(w, p, stack);
	json_end(w);
}

static void json_step(struct json_writer *w, const struct profile *p, const struct wait_step *s)
{
	json_u64(w, "pid", s->pid);
	json_u64(w, "tid", s->tid);
	json_string(w, "comm", view_thread_comm(p, s->pid, s->tid));
	json_u64(w, "start_ns", s->start);
	json_u64(w, "wait_ns", s->end - s->start);
	json_object_begin(w, "word");
	json_word_key(w, p, s->futex, s->word_pid, s->uaddr);
	json_end(w);
	json_string(w, "ended_by", wait_ending_name(s->ending));
	if (s->waker_tid) {
		json_u64(w, "waker_pid", s->waker_pid);
		json_u64(w, "waker_tid", s->waker_tid);
		json_string(w, "waker_comm", view_thread_comm(p, s->waker_pid, s->waker_tid));
	} else {
		json_null(w, "waker_tid");
	}
}

static void json_longest(struct json_writer *w, struct futex_state *st, const struct profile *p, size_t limit)
{
	const struct wait_record *recs;
	size_t n = waits_longest(st->waits, &recs);
	json_array_begin(w, "longest");
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct wait_record *r = &recs[i];
		json_object_begin(w, NULL);
		json_step(w, p, &r->step);
		if (r->step.futex) {
			json_string(w, "op", futex_op_name(r->op));
			json_i64(w, "result", r->result);
		}
		json_string(w, "link", r->why == WAIT_LINKED ? "waking" : wait_reason_key(r->why));
		json_bool(w, "waker_irq", r->waker_irq);
		if (r->wake_time)
			json_u64(w, "wake_ns", r->wake_time);
		else
			json_null(w, "wake_ns");
		if (r->run_time)
			json_u64(w, "wake_to_run_ns", r->run_time - r->wake_time);
		else
			json_null(w, "wake_to_run_ns");
		json_string(w, "waker_op", r->waker_op == FOP_COUNT ? NULL : futex_op_name(r->waker_op));
		json_string(w, "waker_stack_from", r->waker_op != FOP_COUNT ? "futex_call"
						   : r->waker_stack_at_waking ? "sched_waking" : NULL);
		json_stack_or_null(w, p, "waiter_stack", r->step.stack);
		json_stack_or_null(w, p, "waker_stack", r->step.waker_stack);
		json_u64(w, "waker_samples", r->waker_samples);
		json_bool(w, "waker_samples_partial", r->waker_samples_partial);
		json_array_begin(w, "waker_work");
		for (size_t k = 0; k < r->nwork; k++) {
			json_object_begin(w, NULL);
			json_u64(w, "samples", r->work[k].samples);
			view_json_stack(w, p, r->work[k].stack);
			json_end(w);
		}
		json_end(w);
		json_array_begin(w, "chain");
		for (size_t k = 0; k < r->chain_len; k++) {
			json_object_begin(w, NULL);
			json_step(w, p, &r->chain[k]);
			json_end(w);
		}
		json_end(w);
		json_end(w);
	}
	json_end(w);
}

static void json_blame(struct json_writer *w, const struct profile *p, const char *key,
		       const struct wait_blame *const *rows, size_t n, size_t limit)
{
	json_array_begin(w, key);
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct wait_blame *b = rows[i];
		json_object_begin(w, NULL);
		json_object_begin(w, "word");
		json_word_key(w, p, b->futex, b->word_pid, b->uaddr);
		json_end(w);
		json_u64(w, "waits", b->waits);
		json_u64(w, "wait_ns", b->ns);
		json_u64(w, "weighted_ns", (uint64_t)(b->weighted_ns + 0.5));
		json_u64(w, "waker_samples", b->samples);
		json_stack_or_null(w, p, "stack", b->stack);
		json_end(w);
	}
	json_end(w);
}

void futex_waits_json(struct futex_state *st, const struct profile *p, const struct view_options *o,
		      struct json_writer *w)
{
	const struct waits_totals *t = waits_totals(st->waits);
	size_t limit = o->stacks_limit_given ? o->stacks_per_path : 10;
	json_object_begin(w, "waits");
	json_u64(w, "futex_waits", t->futex_waits);
	json_u64(w, "sched_waits", t->sched_waits);
	json_endings(w, t->waits, t->ns);
	json_object_begin(w, "links");
	for (int r = WAIT_LINKED + 1; r < WAIT_REASON_COUNT; r++)
		json_u64(w, wait_reason_key((enum wait_unlinked_reason)r), t->unlinked[r]);
	json_end(w);
	json_u64(w, "not_blocking_calls", t->not_blocking);
	json_u64(w, "weighted_calls", t->weighted_calls);
	json_u64(w, "waker_stacks_at_waking", t->waker_stacks_at_waking);
	json_u64(w, "open_at_end", t->open_at_end);
	json_bool(w, "sched_events", t->sched_seen);
	json_u64(w, "cpu_samples", t->cpu_samples);
	const struct wait_word_stats *const *words;
	size_t n = waits_words(st->waits, &words);
	json_array_begin(w, "words");
	for (size_t i = 0; i < n; i++) {
		const struct wait_word_stats *ws = words[i];
		json_object_begin(w, NULL);
		json_word_key(w, p, ws->futex, ws->word_pid, ws->uaddr);
		json_endings(w, ws->waits, ws->ns);
		json_u64(w, "wake_to_run_count", ws->wake_to_run_count);
		json_u64(w, "wake_to_run_ns", ws->wake_to_run_ns);
		json_u64(w, "wake_to_run_max_ns", ws->wake_to_run_max);
		json_u64(w, "waker_samples", ws->waker_samples);
		json_end(w);
	}
	json_end(w);
	const struct wait_blame *const *rows;
	n = waits_release_blame(st->waits, &rows);
	json_blame(w, p, "release_sites", rows, n, limit);
	n = waits_work_blame(st->waits, &rows);
	json_blame(w, p, "waker_work", rows, n, limit);
	json_longest(w, st, p, limit);
	json_end(w);
}

/* ---- figures ---- */

/*
 * futex.word.W.wakers.ENDING.{waits,wait_ns}: the waits on W per ending and
 * the time they waited; W is the word's data symbol, as the futex.word rows
 * name it (the words of one symbol add up).
 */
void futex_waits_figures(struct futex_state *st, const struct profile *p, struct figure_rows *rows)
{
	const struct wait_word_stats *const *words;
	size_t n = waits_words(st->waits, &words);
	char name[256];
	for (size_t i = 0; i < n; i++) {
		const struct wait_word_stats *w = words[i];
		if (!w->futex)
			continue;
		view_user_data_name(p, w->word_pid, w->uaddr, name, sizeof(name), NULL);
		for (int e = 0; e < WAIT_END_COUNT; e++) {
			const char *ending = wait_ending_name((enum wait_ending)e);
			figure_rows_merge(rows, FIGURE_SUM, (double)w->waits[e], "count", true,
					  "futex.word.%s.wakers.%s.waits", name, ending);
			figure_rows_merge(rows, FIGURE_SUM, (double)w->ns[e], "ns", true,
					  "futex.word.%s.wakers.%s.wait_ns", name, ending);
		}
		figure_rows_merge(rows, FIGURE_SUM, (double)w->wake_to_run_ns, "ns", true,
				  "futex.word.%s.wakers.wake_to_run_ns", name);
	}
}

/* ---- script ---- */

/* ", ended by ENDING [WAKER] [OP at STACK | (why)]" of a finished wait, appended to sb. */
static void describe_ending(const struct profile *p, const struct wait_record *r, struct strbuf *sb)
{
	sb_addf(sb, ", ended by %s", wait_ending_name(r->step.ending));
	if (r->step.waker_tid || r->waker_irq || r->step.ending == WAIT_END_INTERRUPT) {
		sb_addstr(sb, " ");
		waker_words(p, &r->step, r->waker_irq, sb);
	}
	if (r->waker_op != FOP_COUNT) {
		sb_addf(sb, " %s at ", futex_op_name(r->waker_op));
		stack_line(p, r->step.waker_stack, sb);
	} else if (r->step.waker_stack != UINT32_MAX) {
		sb_addstr(sb, " at ");
		stack_line(p, r->step.waker_stack, sb);
	} else if (r->why != WAIT_LINKED) {
		sb_addf(sb, " (%s)", wait_unlinked_why(r->why));
	}
}

bool futex_waits_describe_exit(struct futex_state *st, const struct profile *p, uint32_t tid, uint64_t time,
			       char *buf, size_t len)
{
	const struct wait_record *r = waits_ended_at(st->waits, tid, time);
	if (!r || !len)
		return false;
	struct strbuf sb = { 0 };
	describe_ending(p, r, &sb);
	snprintf(buf, len, "%s", sb.buf);
	sb_free(&sb);
	return true;
}

/*
 * The describe_observed hook (collector.h): a sched_switch whose next task
 * switched in at the end of a sleep outside futex calls (a futex wait's
 * ending is told on its exit).
 */
bool futex_waits_describe_observed(void *state, const struct profile *p, const struct sp_sample *s, char *buf,
				   size_t len)
{
	struct futex_state *st = state;
	struct sched_event_facts f;
	if (!len || !view_sched_event_of(p, s, &f) || f.kind != SCHED_FACT_SWITCH || !f.next_tid)
		return false;
	const struct wait_record *r = waits_ended_at(st->waits, f.next_tid, s->time);
	if (!r || r->step.futex)
		return false;
	struct strbuf sb = { 0 };
	sb_addf(&sb, "next tid %u (%s) slept %.3f ms", f.next_tid, PRINTABLE(view_thread_comm(p, r->step.pid, f.next_tid)),
		ms(r->step.end - r->step.start));
	describe_ending(p, r, &sb);
	snprintf(buf, len, "%s", sb.buf);
	sb_free(&sb);
	return true;
}
