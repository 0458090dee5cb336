/*
 * futex_report.c: what the futex collector prints: the recording's mode
 * and exact totals, then the text and JSON reports of the tracker's
 * figures (per system call, per op, per futex word, the busiest word's
 * waiter and waker stacks).  docs/futex.md describes each figure.
 */
#include <stdio.h>
#include <string.h>

#include "sigprof/collector.h"
#include "sigprof/futex_tracker.h"
#include "sigprof/json.h"
#include "sigprof/view.h"

#include "futex_internal.h"

/* ---- what the recording was: mode and exact totals ---- */

struct futex_summary {
	enum futex_mode mode;
	uint64_t bound;          /* sample mode's sample_freq */
	bool any_event;
	bool exact;              /* every call was recorded with weight 1 */
	uint64_t hits;           /* exact hits of all the futex tracepoints (0: the workload made no futex call) */
};

static struct futex_summary summarize(struct futex_state *st, const struct profile *p)
{
	struct futex_summary sum = { .mode = FUTEX_TRACE, .exact = true };
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "futex") != 0 || ev->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		const struct event_info *info = futex_event_info_of(st, ev);
		sum.any_event = true;
		if (ev->attr.freq) {
			sum.mode = FUTEX_SAMPLE;
			sum.bound = ev->attr.sample_freq;
		} else if (ev->attr.sample_period == 0) {
			sum.mode = FUTEX_COUNT;
		}
		if (!ev->has_totals || info->samples != ev->total_value || info->weight != ev->total_value)
			sum.exact = false;
		sum.hits += ev->has_totals ? ev->total_value : info->samples;
	}
	if (sum.mode == FUTEX_COUNT || !sum.any_event)
		sum.exact = false;
	return sum;
}

static const char *mode_name(enum futex_mode mode)
{
	return mode == FUTEX_SAMPLE ? "sample" : mode == FUTEX_COUNT ? "count" : "trace";
}

/* The exact total of an enter tracepoint, by the op it stands for (count mode's futex_ops). */
static bool enter_total(struct futex_state *st, const struct sp_event *ev, enum futex_op_id *syscall,
			uint64_t *total)
{
	const struct event_info *info = futex_event_info_of(st, ev);
	if (strcmp(ev->collector, "futex") != 0 || info->kind != KIND_ENTER || !ev->has_totals)
		return false;
	*syscall = info->syscall;
	*total = ev->total_value;
	return true;
}

/*
 * An op's calls: a futex2 system call is one op, so its tracepoint's exact
 * count is the op's; the futex(2) ops are split by the records (weighted).
 */
static uint64_t op_calls(struct futex_state *st, const struct profile *p, enum futex_op_id id, bool *estimated)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	*estimated = os->estimated;
	if (futex_op_syscall(id) == FOP_UNKNOWN)
		return os->calls;
	for (size_t i = 0; i < view_event_count(p); i++) {
		enum futex_op_id syscall;
		uint64_t total;
		if (enter_total(st, view_event(p, i), &syscall, &total) && syscall == id) {
			*estimated = false;
			return total;
		}
	}
	return os->calls;
}

/* ---- text ---- */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void text_mode_line(const struct futex_summary *sum, FILE *out)
{
	if (sum->mode == FUTEX_COUNT)
		fprintf(out, "  mode count: exact totals per system call, no per-call records\n");
	else if (sum->mode == FUTEX_SAMPLE)
		fprintf(out, "  mode sample: every call up to %llu calls/s per tracepoint and CPU, weighted samples above; %s\n",
			(unsigned long long)sum->bound,
			sum->exact ? "every call was recorded (exact)" : "figures marked ~ are estimated");
	else
		fprintf(out, "  mode trace: every call recorded; %s\n",
			sum->exact ? "exact" : "records were lost: figures marked ~ are estimated");
}

static void text_syscall_totals(struct futex_state *st, const struct profile *p, enum futex_mode mode, FILE *out)
{
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		enum futex_op_id syscall;
		uint64_t total;
		if (!enter_total(st, ev, &syscall, &total) || (!total && syscall != FOP_UNKNOWN))
			continue; /* futex2 calls the workload did not make */
		fprintf(out, "  %-14s %12llu calls (exact count)", syscall == FOP_UNKNOWN ? "futex" : futex_op_name(syscall),
			(unsigned long long)total);
		if (mode != FUTEX_COUNT)
			fprintf(out, ", %llu entries recorded", (unsigned long long)st->events[ev->index].samples);
		fprintf(out, "\n");
	}
}

static void text_errors(const struct futex_count *errs, size_t n, FILE *out)
{
	char name[32];
	if (!n)
		fprintf(out, "-");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s %llu", i ? "," : "", futex_errno_name((int)errs[i].key, name, sizeof(name)),
			(unsigned long long)errs[i].count);
}

static void text_ops(struct futex_state *st, const struct profile *p, FILE *out)
{
	fprintf(out, "\n  %-16s %12s %10s %10s %10s %10s %12s %9s %9s  %s\n", "op", "calls", "private", "errors", "waits",
		"unmeasured", "wait tot ms", "p99 ms", "max ms", "errors by name");
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (!os->calls && !os->errors)
			continue;
		bool estimated;
		uint64_t calls = op_calls(st, p, (enum futex_op_id)id, &estimated);
		fprintf(out, "  %-16s %s%11llu %10llu %10llu %10llu %10llu %12.3f %9.3f %9.3f  ",
			futex_op_name((enum futex_op_id)id), estimated ? "~" : " ", (unsigned long long)calls,
			(unsigned long long)os->private_calls, (unsigned long long)os->errors,
			(unsigned long long)os->wait.count, (unsigned long long)os->unmeasured, ms(os->wait.total),
			ms(duration_quantile(&os->wait, 0.99)), ms(os->wait.max));
		text_errors(os->by_errno, os->nerrnos, out);
		fprintf(out, "\n");
	}
	for (int id = 0; id < FOP_COUNT; id++) {
		char what[64];
		snprintf(what, sizeof(what), "%s wait", futex_op_name((enum futex_op_id)id));
		view_text_slowest(out, what, &futex_tracker_op(st->tracker, (enum futex_op_id)id)->slowest_wait);
	}
}

static void text_word_ops(const struct futex_word *w, FILE *out)
{
	int shown = 0;
	for (int id = 0; id < FOP_COUNT; id++)
		if (w->ops[id])
			fprintf(out, "%s%s %llu", shown++ ? "," : "", futex_op_name((enum futex_op_id)id),
				(unsigned long long)w->ops[id]);
}

static void text_words(struct futex_state *st, const struct view_options *o, FILE *out)
{
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	fprintf(out, "\nTop futex words (by blocking time, then calls; %zu word%s; ~ estimated)\n", n, n == 1 ? "" : "s");
	fprintf(out, "  %-28s %-14s %7s %11s %8s %11s %9s  %s\n", "word", "address", "pid", "calls", "waits",
		"wait tot ms", "max ms", "ops; errors");
	for (size_t i = 0; i < n && i < o->top; i++) {
		const struct futex_word *w = words[i];
		fprintf(out, "  %-28s %-14llx %7u %s%10llu %8llu %11.3f %9.3f  ", w->symbol, (unsigned long long)w->uaddr,
			w->pid, w->estimated ? "~" : " ", (unsigned long long)w->calls, (unsigned long long)w->wait.count,
			ms(w->wait.total), ms(w->wait.max));
		text_word_ops(w, out);
		fprintf(out, "; ");
		text_errors(w->errors, w->nerrors, out);
		fprintf(out, "\n");
	}
}

static void text_stack(const struct profile *p, const struct futex_stack *fs, const char *what,
		       const struct view_options *o, FILE *out)
{
	fprintf(out, "    top %s stack: %llu calls", what, (unsigned long long)fs->count);
	if (fs->wait.count)
		fprintf(out, ", %llu waits measured, %.3f ms blocked", (unsigned long long)fs->wait.count,
			ms(fs->wait.total));
	fprintf(out, "\n");
	view_text_stack(p, fs->stack, o, out);
}

static void text_busiest(struct futex_state *st, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct futex_word *const *words;
	if (!futex_tracker_words(st->tracker, &words))
		return;
	const struct futex_word *w = words[0];
	fprintf(out, "\n  busiest word %s (pid %u, 0x%llx)\n", w->symbol, w->pid, (unsigned long long)w->uaddr);
	if (w->nwaiters)
		text_stack(p, &w->waiters[0], "waiter", o, out);
	if (w->nwakers)
		text_stack(p, &w->wakers[0], "waker", o, out);
}

void futex_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	if (!sum.any_event)
		return;
	if (!sum.hits) {
		fprintf(out, "\nFutex operations: none (the workload made no futex system call)\n");
		return;
	}
	fprintf(out, "\nFutex operations\n");
	text_mode_line(&sum, out);
	text_syscall_totals(st, p, sum.mode, out);
	if (sum.mode == FUTEX_COUNT)
		return;
	uint64_t orphans, unpaired = futex_tracker_unpaired_exits(st->tracker, &orphans);
	if (unpaired || st->undecoded)
		fprintf(out, "  exits without their entry: %llu (%llu of no known op); undecoded samples: %llu\n",
			(unsigned long long)unpaired, (unsigned long long)orphans, (unsigned long long)st->undecoded);
	text_ops(st, p, out);
	text_words(st, o, out);
	text_busiest(st, p, o, out);
}

/* ---- JSON ---- */

static void json_wait(struct json_writer *w, const char *key, const struct futex_wait_time *t)
{
	json_object_begin(w, key);
	json_u64(w, "count", t->count);
	json_u64(w, "total", t->total);
	json_u64(w, "max", t->max);
	json_end(w);
}

static void json_errors(struct json_writer *w, const struct futex_count *errs, size_t n)
{
	char name[32];
	json_object_begin(w, "errors");
	for (size_t i = 0; i < n; i++)
		json_u64(w, futex_errno_name((int)errs[i].key, name, sizeof(name)), errs[i].count);
	json_end(w);
}

static void json_stacks(struct json_writer *w, const struct profile *p, const char *key,
			const struct futex_stack *stacks, size_t n, size_t limit, bool with_wait)
{
	json_array_begin(w, key);
	for (size_t i = 0; i < n && i < limit; i++) {
		json_object_begin(w, NULL);
		json_u64(w, "count", stacks[i].count);
		if (with_wait)
			json_wait(w, "wait_ns", &stacks[i].wait);
		view_json_stack(w, p, stacks[i].stack);
		json_end(w);
	}
	json_end(w);
}

static void json_word(struct json_writer *w, const struct profile *p, const struct futex_word *fw, size_t limit)
{
	char buf[32];
	json_object_begin(w, NULL);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)fw->uaddr);
	json_string(w, "uaddr", buf);
	json_string(w, "symbol", fw->symbol);
	json_string(w, "dso", fw->dso);
	json_u64(w, "pid", fw->pid);
	json_bool(w, "waitv_array", fw->array);
	json_u64(w, "calls", fw->calls);
	json_object_begin(w, "ops");
	for (int id = 0; id < FOP_COUNT; id++)
		if (fw->ops[id])
			json_u64(w, futex_op_name((enum futex_op_id)id), fw->ops[id]);
	json_end(w);
	json_object_begin(w, "flags");
	json_u64(w, "PRIVATE", fw->private_calls);
	json_u64(w, "CLOCK_REALTIME", fw->realtime_calls);
	json_end(w);
	json_wait(w, "wait_ns", &fw->wait);
	json_u64(w, "unmeasured_waits", fw->unmeasured);
	json_u64(w, "unfinished", fw->unfinished);
	json_u64(w, "woken", fw->woken);
	json_errors(w, fw->errors, fw->nerrors);
	json_bool(w, "estimated", fw->estimated);
	json_stacks(w, p, "waiters", fw->waiters, fw->nwaiters, limit, true);
	json_stacks(w, p, "wakers", fw->wakers, fw->nwakers, limit, false);
	json_end(w);
}

static void json_futex_ops(struct futex_state *st, const struct profile *p, const struct futex_summary *sum,
			   struct json_writer *w)
{
	json_object_begin(w, "futex_ops");
	if (sum->mode == FUTEX_COUNT) {
		for (size_t i = 0; i < view_event_count(p); i++) {
			enum futex_op_id syscall;
			uint64_t total;
			if (enter_total(st, view_event(p, i), &syscall, &total))
				json_u64(w, syscall == FOP_UNKNOWN ? "futex" : futex_op_name(syscall), total);
		}
	} else {
		for (int id = 0; id < FOP_COUNT; id++) {
			bool estimated;
			if (futex_tracker_op(st->tracker, (enum futex_op_id)id)->calls)
				json_u64(w, futex_op_name((enum futex_op_id)id),
					 op_calls(st, p, (enum futex_op_id)id, &estimated));
		}
	}
	json_end(w);
}

static void json_op_detail(struct json_writer *w, struct futex_state *st, const struct profile *p,
			   enum futex_op_id id)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	bool estimated;
	json_object_begin(w, NULL);
	json_string(w, "op", futex_op_name(id));
	json_u64(w, "calls", op_calls(st, p, id, &estimated));
	json_bool(w, "calls_estimated", estimated);
	json_u64(w, "private", os->private_calls);
	json_u64(w, "clock_realtime", os->realtime_calls);
	json_object_begin(w, "wait_ns");
	json_u64(w, "count", os->wait.count);
	json_u64(w, "total", os->wait.total);
	json_u64(w, "max", os->wait.max);
	json_u64(w, "p50", duration_quantile(&os->wait, 0.5));
	json_u64(w, "p99", duration_quantile(&os->wait, 0.99));
	json_end(w);
	view_json_slowest(w, "slowest_wait", &os->slowest_wait);
	json_u64(w, "unmeasured_waits", os->unmeasured);
	json_u64(w, "unfinished", os->unfinished);
	json_u64(w, "error_count", os->errors);
	json_errors(w, os->by_errno, os->nerrnos);
	json_bool(w, "estimated", os->estimated);
	json_end(w);
}

static void json_summary(struct futex_state *st, const struct profile *p, const struct futex_summary *sum,
			 struct json_writer *w)
{
	json_object_begin(w, "futex_summary");
	json_string(w, "mode", mode_name(sum->mode));
	if (sum->mode == FUTEX_SAMPLE)
		json_u64(w, "bound_hz", sum->bound);
	else
		json_null(w, "bound_hz");
	json_bool(w, "exact", sum->exact);
	json_bool(w, "futex_ops_exact", sum->exact || sum->mode == FUTEX_COUNT);
	json_object_begin(w, "syscalls");
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "futex") != 0 || ev->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		const struct event_info *info = futex_event_info_of(st, ev);
		json_object_begin(w, strchr(ev->name, ':') ? strchr(ev->name, ':') + 1 : ev->name);
		if (ev->has_totals)
			json_u64(w, "total", ev->total_value);
		else
			json_null(w, "total");
		json_u64(w, "samples", info->samples);
		json_u64(w, "weight", info->weight);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "ops");
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (os->calls || os->errors)
			json_op_detail(w, st, p, (enum futex_op_id)id);
	}
	json_end(w);
	uint64_t orphans, unpaired = futex_tracker_unpaired_exits(st->tracker, &orphans);
	json_u64(w, "unpaired_exits", unpaired);
	json_u64(w, "orphan_exits", orphans);
	json_u64(w, "undecoded_samples", st->undecoded);
	json_end(w);
}

void futex_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	size_t limit = o->stacks_limit_given ? o->stacks_per_path : 5;
	json_futex_ops(st, p, &sum, w);
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	json_array_begin(w, "futexes");
	for (size_t i = 0; i < n; i++)
		json_word(w, p, words[i], limit);
	json_end(w);
	json_summary(st, p, &sum, w);
}

/* ---- keyed figures ---- */

void futex_figures(void *state, const struct profile *p, struct figure_rows *rows)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	if (!sum.any_event)
		return;
	for (size_t i = 0; i < view_event_count(p); i++) {
		enum futex_op_id syscall;
		uint64_t total;
		if (enter_total(st, view_event(p, i), &syscall, &total))
			figure_rows_add(rows, (double)total, "count", true, "futex.syscall.%s.calls",
					syscall == FOP_UNKNOWN ? "futex" : futex_op_name(syscall));
	}
	if (sum.mode == FUTEX_COUNT)
		return;
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (!os->calls && !os->errors)
			continue;
		const char *op = futex_op_name((enum futex_op_id)id);
		bool estimated;
		uint64_t calls = op_calls(st, p, (enum futex_op_id)id, &estimated);
		figure_rows_add(rows, (double)calls, "count", !estimated, "futex.op.%s.calls", op);
		figure_rows_add(rows, (double)os->errors, "count", !os->estimated, "futex.op.%s.errors", op);
		figure_rows_add(rows, (double)os->wait.count, "count", !os->estimated, "futex.op.%s.waits", op);
		figure_rows_add(rows, (double)os->wait.total, "ns", !os->estimated, "futex.op.%s.wait_ns.total", op);
		if (os->wait.count) {
			figure_rows_add(rows, (double)duration_quantile(&os->wait, 0.99), "ns", !os->estimated,
					"futex.op.%s.wait_ns.p99", op);
			figure_rows_add(rows, (double)os->wait.max, "ns", !os->estimated, "futex.op.%s.wait_ns.max", op);
		}
	}
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	for (size_t i = 0; i < n; i++) {
		const struct futex_word *w = words[i];
		figure_rows_add(rows, (double)w->calls, "count", !w->estimated, "futex.word.%s.calls", w->symbol);
		figure_rows_add(rows, (double)w->wait.count, "count", !w->estimated, "futex.word.%s.waits", w->symbol);
		figure_rows_add(rows, (double)w->wait.total, "ns", !w->estimated, "futex.word.%s.wait_ns.total", w->symbol);
		figure_rows_add(rows, (double)w->wait.max, "ns", !w->estimated, "futex.word.%s.wait_ns.max", w->symbol);
	}
}
