/*
 * futex_report.c: what the futex collector prints: the recording's mode
 * and exact totals, then the text and JSON reports of the tracker's
 * figures (per system call, per op, per futex word, the busiest word's
 * waiter and waker stacks).  docs/futex.md describes each figure.
 */
#include <stdio.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/collectors/futex_tracker.h"
#include "sigprof/base/json.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/base/util.h"
#include "sigprof/view/findings.h"
#include "sigprof/view/view.h"

#include "futex_internal.h"

/* ---- what the recording was: mode and exact totals ---- */

/*
 * One tracepoint (the entry or exit of one system call) over the events
 * that stand for it: the one that records every call (trace; sample mode's
 * gate), sample mode's weighted alternate and meter, or count mode's
 * counter.
 */
struct tracepoint_sum {
	enum futex_op_id syscall; /* FOP_UNKNOWN: futex(2) */
	bool entry;
	bool has_total;
	uint64_t total;            /* exact hits: the meter's, else the recording or counting event's */
	uint64_t samples, weight;  /* of the records, all sides */
	uint64_t weighted_samples; /* of them, samples of the alternate (weight >= 1 each) */
	/* the events' counts, from the TOTALS records */
	bool has_meter, has_own, has_alternate;
	uint64_t meter_total, own_total, alternate_total;
};

#define MAX_TRACEPOINTS (2 * (FOP_SYS_WAITV - FOP_SYS_WAIT + 2))

struct futex_summary {
	enum futex_mode mode;
	uint64_t bound;          /* sample mode's bound (FUTEX_SAMPLE_BOUND_HZ) */
	uint64_t sampled_hz;     /* the alternate's frequency above it (its sample_freq) */
	bool any_event;
	bool exact;              /* every call was recorded with weight 1 */
	bool ops_counted;        /* the recording has per-command counters: futex_ops are exact */
	bool commands_grouped;   /* of some commands, the count mode's (futex.c), the rest: one exact "other" count */
	/* estimated futex(2) commands' calls scale by exact_left / recorded (estimated_commands_scale) */
	bool scaled;
	uint64_t exact_left, recorded;
	uint64_t hits;           /* exact hits of all the futex tracepoints (0: the workload made no futex call) */
	struct tracepoint_sum tps[MAX_TRACEPOINTS];
	size_t ntps;
};

static struct tracepoint_sum *tracepoint_of_sum(struct futex_summary *sum, enum futex_op_id syscall, bool entry)
{
	for (size_t i = 0; i < sum->ntps; i++)
		if (sum->tps[i].syscall == syscall && sum->tps[i].entry == entry)
			return &sum->tps[i];
	if (sum->ntps == MAX_TRACEPOINTS)
		return NULL;
	struct tracepoint_sum *t = &sum->tps[sum->ntps++];
	*t = (struct tracepoint_sum){ .syscall = syscall, .entry = entry };
	return t;
}

static bool estimated_commands_scale(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
				     uint64_t *exact_left, uint64_t *recorded);

static struct futex_summary summarize(struct futex_state *st, const struct profile *p)
{
	struct futex_summary sum = { .mode = FUTEX_TRACE, .exact = true };
	size_t op_counters = 0;
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "futex") != 0 || ev->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		const struct event_info *info = futex_event_info_of(st, ev);
		if (info->kind == KIND_OP_COUNTER) {
			op_counters += ev->has_totals;
			continue;
		}
		if (info->kind != KIND_ENTER && info->kind != KIND_EXIT && info->kind != KIND_METER)
			continue;
		struct tracepoint_sum *t = tracepoint_of_sum(&sum, info->syscall, info->entry);
		if (!t)
			continue;
		sum.any_event = true;
		if (info->weighted) {
			sum.mode = FUTEX_SAMPLE;
			sum.bound = FUTEX_SAMPLE_BOUND_HZ;
			sum.sampled_hz = ev->attr.sample_freq;
			t->weighted_samples += info->samples;
		} else if (info->kind != KIND_METER && ev->attr.sample_period == 0) {
			sum.mode = FUTEX_COUNT;
		}
		if (info->kind != KIND_METER) {
			t->samples += info->samples;
			t->weight += info->weight;
		}
		if (!ev->has_totals)
			continue;
		if (info->kind == KIND_METER)
			t->meter_total = ev->total_value, t->has_meter = true;
		else if (info->weighted)
			t->alternate_total += ev->total_value, t->has_alternate = true;
		else
			t->own_total = ev->total_value, t->has_own = true;
	}
	/*
	 * The exact hits of a tracepoint: its meter's count; without a meter
	 * (sample mode's exits, trace and count mode) the recording or counting
	 * event's own, which is every hit unless an alternate took over for a
	 * while (then the tracepoint's total is not known exactly).
	 */
	for (size_t i = 0; i < sum.ntps; i++) {
		struct tracepoint_sum *t = &sum.tps[i];
		if (t->has_meter)
			t->total = t->meter_total, t->has_total = true;
		else if (t->has_own && !t->alternate_total)
			t->total = t->own_total, t->has_total = true;
		else if (!t->has_own && t->has_alternate)
			t->total = t->alternate_total, t->has_total = true; /* older sigprof: one always-on weighted event */
	}
	for (size_t i = 0; i < sum.ntps; i++) {
		const struct tracepoint_sum *t = &sum.tps[i];
		if (!t->has_total || t->samples != t->total || t->weight != t->total)
			sum.exact = false;
		sum.hits += t->has_total ? t->total : t->samples;
	}
	if (sum.mode == FUTEX_COUNT || !sum.any_event)
		sum.exact = false;
	sum.ops_counted = op_counters > 0;
	sum.commands_grouped = op_counters > 0 && op_counters < FOP_LOCK_PI2 + 1;
	sum.scaled = estimated_commands_scale(st, p, &sum, &sum.exact_left, &sum.recorded);
	return sum;
}

static const char *mode_name(enum futex_mode mode)
{
	return mode == FUTEX_SAMPLE ? "sample" : mode == FUTEX_COUNT ? "count" : "trace";
}

/* The exact count of calls of one system call (its entry tracepoint), when the recording has it. */
static bool syscall_total(struct futex_summary *sum, enum futex_op_id syscall, uint64_t *total)
{
	for (size_t i = 0; i < sum->ntps; i++)
		if (sum->tps[i].syscall == syscall && sum->tps[i].entry && sum->tps[i].has_total) {
			*total = sum->tps[i].total;
			return true;
		}
	return false;
}

/* The exact count of one futex(2) command's calls from its counter; UNKNOWN is what no counter took. */
static bool command_total(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
			  enum futex_op_id id, uint64_t *total)
{
	if (!sum->ops_counted)
		return false;
	uint64_t counted = 0, all;
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "futex") != 0 || !ev->has_totals)
			continue;
		const struct event_info *info = futex_event_info_of(st, ev);
		if (info->kind != KIND_OP_COUNTER)
			continue;
		if (info->op == id) {
			*total = ev->total_value;
			return true;
		}
		counted += ev->total_value;
	}
	if (id != FOP_UNKNOWN || !syscall_total(sum, FOP_UNKNOWN, &all))
		return false;
	*total = all > counted ? all - counted : 0;
	return true;
}

/*
 * The weighted records of the futex(2) commands whose calls are estimated,
 * against what the exact futex(2) total leaves them (the total less the
 * commands recorded one by one): the factor that makes their estimates add
 * up to it.  Weighted samples above the bound overcount (by 1% to 40% on
 * futex_wake_many), and the exact total says by how much.  false when
 * there is nothing to scale or no exact total.
 */
static bool estimated_commands_scale(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
				     uint64_t *exact_left, uint64_t *recorded)
{
	uint64_t total, exact = 0, weighted = 0;
	/* the total is the whole run's: records cut by the report's filters are part of it */
	if (sum->mode != FUTEX_SAMPLE || view_records_filtered(p) || !syscall_total(sum, FOP_UNKNOWN, &total))
		return false;
	for (int id = 0; id < FOP_COUNT; id++) {
		if (futex_op_syscall((enum futex_op_id)id) != FOP_UNKNOWN)
			continue;
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (os->estimated)
			weighted += os->calls;
		else
			exact += os->calls;
	}
	if (!weighted || exact > total)
		return false;
	*exact_left = total - exact;
	*recorded = weighted;
	return true;
}

/* The factor of an op's counts from its records: estimated_commands_scale()'s for an estimated futex(2) command. */
static double op_scale(struct futex_state *st, const struct futex_summary *sum, enum futex_op_id id)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	return os->estimated && futex_op_syscall(id) == FOP_UNKNOWN && sum->scaled
		       ? (double)sum->exact_left / (double)sum->recorded
		       : 1.0;
}

static uint64_t scaled_count(uint64_t count, double scale)
{
	return scale == 1.0 ? count : (uint64_t)((double)count * scale + 0.5);
}

/*
 * A count of an op's calls from its records (all of them, the private
 * ones, those on CLOCK_REALTIME, those that failed), scaled by op_scale().
 */
static uint64_t op_recorded(struct futex_state *st, const struct futex_summary *sum, enum futex_op_id id,
			    uint64_t recorded)
{
	/*
	 * A part of the calls is no more than the calls: the failed ones come
	 * from the exits, weighted apart from the entries, and scaled by the
	 * entries' factor may pass them (400063 EAGAIN of 400000 WAITs).
	 */
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	double scale = op_scale(st, sum, id);
	uint64_t part = scaled_count(recorded, scale), calls = scaled_count(os->calls, scale);
	return scale != 1.0 && part > calls ? calls : part;
}

/*
 * An op's calls: exact from the counters where the recording has them (a
 * futex2 system call is one op, its tracepoint's count; a futex(2) command
 * has its filtered counter), else the records' weighted count, scaled so
 * that the estimated futex(2) commands add up to the exact futex(2) total
 * less the commands recorded one by one.
 */
static uint64_t op_calls(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
			 enum futex_op_id id, bool *estimated)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	uint64_t total;
	bool counted = futex_op_syscall(id) == FOP_UNKNOWN ? command_total(st, p, sum, id, &total)
							   : syscall_total(sum, id, &total);
	if (counted) {
		*estimated = false;
		return total;
	}
	*estimated = os->estimated || sum->mode == FUTEX_COUNT;
	return op_recorded(st, sum, id, os->calls);
}

/* Whether an op has a row: the workload made it (counted or recorded) or it failed. */
static bool op_shown(struct futex_state *st, const struct profile *p, struct futex_summary *sum, enum futex_op_id id)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	bool estimated;
	return os->calls || os->errors || op_calls(st, p, sum, id, &estimated);
}

static const char *syscall_label(enum futex_op_id syscall)
{
	return syscall == FOP_UNKNOWN ? "futex" : futex_op_name(syscall);
}

/* ---- text ---- */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void text_mode_line(const struct futex_summary *sum, const struct view_options *o, FILE *out)
{
	if (sum->mode == FUTEX_COUNT)
		view_text_wrapped(o, out, 4, "  mode count: exact totals per system call and op, no per-call records");
	else if (sum->mode == FUTEX_SAMPLE)
		view_text_wrapped(o, out, 4, "  mode sample: every call while a %llu ms window stays under %llu calls/s per "
				  "tracepoint and CPU, weighted samples above (%llu a second); %s",
				  (unsigned long long)(RATE_BOUND_WINDOW_NS / 1000000), (unsigned long long)sum->bound,
				  (unsigned long long)sum->sampled_hz,
				  sum->exact ? "every call was recorded (exact)" : "figures marked ~ are estimated");
	else
		view_text_wrapped(o, out, 4, "  mode trace: every call recorded; %s",
				  sum->exact ? "exact" : "records were lost: figures marked ~ are estimated");
}

static void text_syscall_totals(const struct futex_summary *sum, const struct view_options *o, FILE *out)
{
	struct strbuf line = { 0 };
	for (size_t i = 0; i < sum->ntps; i++) {
		const struct tracepoint_sum *t = &sum->tps[i];
		if (!t->entry || !t->has_total || (!t->total && t->syscall != FOP_UNKNOWN))
			continue; /* futex2 calls the workload did not make */
		sb_reset(&line);
		sb_addf(&line, "  %-14s %12llu calls (exact, from the kernel's counter)", syscall_label(t->syscall),
			(unsigned long long)t->total);
		if (sum->mode != FUTEX_COUNT && t->weighted_samples)
			sb_addf(&line, "; %llu entries recorded, %llu of them weighted samples standing for the calls above "
				       "the bound (what they count is estimated: ~)",
				(unsigned long long)t->samples, (unsigned long long)t->weighted_samples);
		else if (sum->mode != FUTEX_COUNT)
			sb_addf(&line, "; %llu entries recorded, one per call", (unsigned long long)t->samples);
		view_text_wrapped(o, out, 4, "%s", line.buf);
	}
	sb_free(&line);
}

/* "-" or "EAGAIN 51,ETIMEDOUT 3" added to sb. */
/* An error count scaled as an op's (op_scale(), 1 for a word's) and never above its calls (most). */
static uint64_t error_count(uint64_t count, double scale, uint64_t most)
{
	uint64_t scaled = scaled_count(count, scale);
	return scaled < most ? scaled : most;
}

/* Errors by name, scaled and bounded as error_count() says. */
static void text_errors(const struct futex_count *errs, size_t n, double scale, uint64_t most, struct strbuf *sb)
{
	char name[32];
	if (!n)
		sb_addstr(sb, "-");
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%s %llu", i ? "," : "", futex_errno_name((int)errs[i].key, name, sizeof(name)),
			(unsigned long long)error_count(errs[i].count, scale, most));
}

/*
 * An op's name in the counts: with commands grouped (the count mode
 * counts some apart), what no counter took is the other commands', not an
 * unknown one's.
 */
static const char *counted_op_name(const struct futex_summary *sum, enum futex_op_id id)
{
	return id == FOP_UNKNOWN && sum->commands_grouped ? "other" : futex_op_name(id);
}

/* Count mode: the exact calls of each op, from the counters. */
static void text_op_counts(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
			   const struct view_options *o, FILE *out)
{
	fprintf(out, "\n  %-16s %12s\n", "op", "calls");
	bool other = false;
	for (int id = 0; id < FOP_COUNT; id++) {
		bool estimated;
		uint64_t calls = op_calls(st, p, sum, (enum futex_op_id)id, &estimated);
		if (calls && !estimated) {
			fprintf(out, "  %-16s %12llu\n", counted_op_name(sum, (enum futex_op_id)id), (unsigned long long)calls);
			other |= id == FOP_UNKNOWN && sum->commands_grouped;
		}
	}
	if (other)
		view_text_wrapped(o, out, 4, "  other: the futex(2) commands without a counter of their own (REQUEUE, "
					     "CMP_REQUEUE, WAKE_OP, the PI commands, ...), counted together: a counter per "
					     "command costs every futex call about 50 ns; --futex sample or trace tells "
					     "them apart");
}

/* The ops table's columns: op, calls, private, errors, waits, unmeasured, wait total/p99/max, errors by name. */
static const unsigned op_columns[] = { 18, 13, 11, 11, 11, 11, 13, 10, 10, 16 };

static void text_ops(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
		     const struct view_options *o, FILE *out)
{
	struct view_table t = { .columns = op_columns, .ncolumns = ARRAY_SIZE(op_columns) };
	struct strbuf errors = { 0 };
	bool any_unmeasured = false;
	fputc('\n', out);
	view_table_addf(&t, "  %-16s %12s %10s %10s %10s %10s %12s %9s %9s  %s", "op", "calls", "private", "errors",
			"waits", "unmeasured", "wait tot ms", "p99 ms", "max ms", "errors by name");
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (!op_shown(st, p, sum, (enum futex_op_id)id))
			continue;
		bool estimated;
		uint64_t calls = op_calls(st, p, sum, (enum futex_op_id)id, &estimated);
		sb_reset(&errors);
		text_errors(os->by_errno, os->nerrnos, op_scale(st, sum, (enum futex_op_id)id),
			    op_recorded(st, sum, (enum futex_op_id)id, os->calls), &errors);
		view_table_addf(&t, "  %-16s %s%11llu %10llu %10llu %10llu %10llu %12.3f %9.3f %9.3f  %s",
				futex_op_name((enum futex_op_id)id), estimated ? "~" : " ", (unsigned long long)calls,
				(unsigned long long)op_recorded(st, sum, (enum futex_op_id)id, os->private_calls),
				(unsigned long long)op_recorded(st, sum, (enum futex_op_id)id, os->errors),
				(unsigned long long)os->wait.count, (unsigned long long)os->unmeasured, ms(os->wait.total),
				ms(duration_quantile(&os->wait, 0.99)), ms(os->wait.max), errors.buf);
		any_unmeasured |= os->unmeasured > 0;
	}
	sb_free(&errors);
	view_table_print(&t, o, out);
	if (any_unmeasured)
		view_text_wrapped(o, out, 4, "  unmeasured: waits whose time is unknown, as one side of the call was a "
				  "weighted sample or was lost (waits + unmeasured + unfinished = the wait calls)");
	for (int id = 0; id < FOP_COUNT; id++) {
		char what[64];
		snprintf(what, sizeof(what), "%s wait", futex_op_name((enum futex_op_id)id));
		view_text_slowest(o, out, what, &futex_tracker_op(st->tracker, (enum futex_op_id)id)->slowest_wait);
	}
}

/* "WAIT 20,WAKE 20" added to sb. */
static void text_word_ops(const struct futex_word *w, struct strbuf *sb)
{
	int shown = 0;
	for (int id = 0; id < FOP_COUNT; id++)
		if (w->ops[id])
			sb_addf(sb, "%s%s %llu", shown++ ? "," : "", futex_op_name((enum futex_op_id)id),
				(unsigned long long)w->ops[id]);
}

/* The words table's columns: word, address, pid, calls, waits, wait total, max, ops and errors. */
#define WORD_WIDTH 28
static const unsigned word_columns[] = { WORD_WIDTH + 2, 15, 8, 12, 9, 12, 10, 13 };

/* The pid column: the word's process, or "shared" for a word that processes share (one kernel key). */
static void word_pid_cell(const struct futex_word *w, char *buf, size_t len)
{
	if (w->npids > 1)
		snprintf(buf, len, "shared");
	else
		snprintf(buf, len, "%u", w->pid);
}

/* "pid 12" or "shared by pids 12, 13" */
static void word_processes(const struct futex_word *w, struct strbuf *sb)
{
	if (w->npids <= 1) {
		sb_addf(sb, "pid %u", w->pid);
		return;
	}
	sb_addstr(sb, "shared by pids ");
	for (size_t i = 0; i < w->npids; i++)
		sb_addf(sb, "%s%u", i ? ", " : "", w->pids[i]);
}

static void text_words(struct futex_state *st, const struct view_options *o, FILE *out)
{
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	struct view_table t = { .columns = word_columns, .ncolumns = ARRAY_SIZE(word_columns) };
	struct strbuf ops = { 0 };
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "Top futex words (by blocking time, then calls; %zu word%s; ~ estimated)", n,
			  n == 1 ? "" : "s");
	view_table_addf(&t, "  %-28s %-14s %7s %11s %8s %11s %9s  %s", "word", "address", "pid", "calls", "waits",
			"wait tot ms", "max ms", "ops; errors");
	for (size_t i = 0; i < n && i < o->top; i++) {
		const struct futex_word *w = words[i];
		char cut[4 * WORD_WIDTH];
		int pad;
		const char *symbol = view_text_cell(o, w->symbol, WORD_WIDTH, cut, sizeof(cut), &pad);
		sb_reset(&ops);
		text_word_ops(w, &ops);
		sb_addstr(&ops, "; ");
		text_errors(w->errors, w->nerrors, 1.0, UINT64_MAX, &ops);
		char pid[16];
		word_pid_cell(w, pid, sizeof(pid));
		view_table_addf(&t, "  %-*s %-14llx %7s %s%10llu %8llu %11.3f %9.3f  %s", pad, symbol,
				(unsigned long long)w->uaddr, pid, w->estimated ? "~" : " ", (unsigned long long)w->calls,
				(unsigned long long)w->wait.count, ms(w->wait.total), ms(w->wait.max), ops.buf);
	}
	sb_free(&ops);
	view_table_print(&t, o, out);
}

static void text_stack(const struct profile *p, const struct futex_stack *fs, const char *what,
		       const struct view_options *o, FILE *out)
{
	if (fs->wait.count)
		view_text_wrapped(o, out, 6, "    top %s stack: %llu calls, %llu waits measured, %.3f ms blocked", what,
				  (unsigned long long)fs->count, (unsigned long long)fs->wait.count, ms(fs->wait.total));
	else
		view_text_wrapped(o, out, 6, "    top %s stack: %llu calls", what, (unsigned long long)fs->count);
	view_text_stack(p, fs->stack, o, out);
}

static void text_busiest(struct futex_state *st, const struct profile *p, const struct view_options *o, FILE *out)
{
	struct futex_word *const *words;
	if (!futex_tracker_words(st->tracker, &words))
		return;
	const struct futex_word *w = words[0];
	fputc('\n', out);
	struct strbuf who = { 0 };
	word_processes(w, &who);
	view_text_wrapped(o, out, 4, "  busiest word %s (%s, 0x%llx)", w->symbol, who.buf, (unsigned long long)w->uaddr);
	sb_free(&who);
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
	fputc('\n', out);
	if (!sum.hits) {
		view_text_wrapped(o, out, 2, "Futex operations: none (the workload made no futex system call)");
		return;
	}
	fprintf(out, "Futex operations\n");
	text_mode_line(&sum, o, out);
	text_syscall_totals(&sum, o, out);
	if (sum.mode == FUTEX_COUNT) {
		text_op_counts(st, p, &sum, o, out);
		return;
	}
	uint64_t orphans, unpaired = futex_tracker_unpaired_exits(st->tracker, &orphans);
	if (unpaired || st->undecoded)
		view_text_wrapped(o, out, 4, "  exits without their entry: %llu (%llu of no known op): their entry was "
				  "sampled out above the bound or came before the recording, so they have no wait time; "
				  "undecoded samples: %llu",
				  (unsigned long long)unpaired, (unsigned long long)orphans,
				  (unsigned long long)st->undecoded);
	text_ops(st, p, &sum, o, out);
	text_words(st, o, out);
	text_busiest(st, p, o, out);
	futex_waits_text(st, p, o, out);
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

static void json_errors(struct json_writer *w, const struct futex_count *errs, size_t n, double scale, uint64_t most)
{
	char name[32];
	json_object_begin(w, "errors");
	for (size_t i = 0; i < n; i++)
		json_u64(w, futex_errno_name((int)errs[i].key, name, sizeof(name)), error_count(errs[i].count, scale, most));
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
	json_object_begin(w, NULL);
	json_hex(w, "uaddr", fw->uaddr);
	json_string(w, "symbol", fw->symbol);
	json_string(w, "dso", fw->dso);
	json_u64(w, "pid", fw->pid);
	json_bool(w, "shared", fw->shared);
	json_array_begin(w, "pids");
	if (fw->npids)
		for (size_t i = 0; i < fw->npids; i++)
			json_u64(w, NULL, fw->pids[i]);
	else
		json_u64(w, NULL, fw->pid);
	json_end(w);
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
	json_errors(w, fw->errors, fw->nerrors, 1.0, UINT64_MAX);
	json_bool(w, "estimated", fw->estimated);
	json_stacks(w, p, "waiters", fw->waiters, fw->nwaiters, limit, true);
	json_stacks(w, p, "wakers", fw->wakers, fw->nwakers, limit, false);
	json_end(w);
}

static void json_futex_ops(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
			   struct json_writer *w)
{
	json_object_begin(w, "futex_ops");
	bool any = false;
	for (int id = 0; id < FOP_COUNT; id++) {
		bool estimated;
		uint64_t calls = op_calls(st, p, sum, (enum futex_op_id)id, &estimated);
		if (calls && (sum->mode != FUTEX_COUNT || !estimated)) {
			json_u64(w, counted_op_name(sum, (enum futex_op_id)id), calls);
			any = true;
		}
	}
	uint64_t total;
	/* a count-mode recording without per-command counters (older sigprof): futex(2) as one total */
	if (!any && sum->mode == FUTEX_COUNT && syscall_total(sum, FOP_UNKNOWN, &total))
		json_u64(w, "futex", total);
	json_end(w);
}

static void json_op_detail(struct json_writer *w, struct futex_state *st, const struct profile *p,
			   struct futex_summary *sum, enum futex_op_id id)
{
	const struct futex_op_stats *os = futex_tracker_op(st->tracker, id);
	bool estimated;
	json_object_begin(w, NULL);
	json_string(w, "op", futex_op_name(id));
	json_u64(w, "calls", op_calls(st, p, sum, id, &estimated));
	json_bool(w, "calls_estimated", estimated);
	json_u64(w, "private", op_recorded(st, sum, id, os->private_calls));
	json_u64(w, "clock_realtime", op_recorded(st, sum, id, os->realtime_calls));
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
	json_u64(w, "error_count", op_recorded(st, sum, id, os->errors));
	json_errors(w, os->by_errno, os->nerrnos, op_scale(st, sum, id), op_recorded(st, sum, id, os->calls));
	json_bool(w, "estimated", os->estimated);
	json_end(w);
}

static void json_summary(struct futex_state *st, const struct profile *p, struct futex_summary *sum,
			 struct json_writer *w)
{
	json_object_begin(w, "futex_summary");
	json_string(w, "mode", mode_name(sum->mode));
	if (sum->mode == FUTEX_SAMPLE) {
		json_u64(w, "bound_hz", sum->bound);
		json_u64(w, "window_ms", RATE_BOUND_WINDOW_NS / 1000000);
		json_u64(w, "sampled_hz", sum->sampled_hz);
	} else {
		json_null(w, "bound_hz");
		json_null(w, "window_ms");
		json_null(w, "sampled_hz");
	}
	json_bool(w, "exact", sum->exact);
	json_bool(w, "futex_ops_exact", sum->exact || sum->ops_counted);
	json_object_begin(w, "syscalls");
	char key[64];
	for (size_t i = 0; i < sum->ntps; i++) {
		const struct tracepoint_sum *t = &sum->tps[i];
		snprintf(key, sizeof(key), "sys_%s_%s", t->entry ? "enter" : "exit", syscall_label(t->syscall));
		json_object_begin(w, key);
		if (t->has_total)
			json_u64(w, "total", t->total);
		else
			json_null(w, "total");
		json_u64(w, "samples", t->samples);
		json_u64(w, "weight", t->weight);
		json_u64(w, "weighted_samples", t->weighted_samples);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "ops");
	for (int id = 0; id < FOP_COUNT; id++)
		if (sum->mode != FUTEX_COUNT && op_shown(st, p, sum, (enum futex_op_id)id))
			json_op_detail(w, st, p, sum, (enum futex_op_id)id);
	json_end(w);
	uint64_t orphans, unpaired = futex_tracker_unpaired_exits(st->tracker, &orphans);
	json_u64(w, "unpaired_exits", unpaired);
	json_u64(w, "orphan_exits", orphans);
	json_u64(w, "undecoded_samples", st->undecoded);
	uint64_t joined;
	size_t learned;
	stack_lender_stats(st->lender, &joined, &learned);
	json_object_begin(w, "stack_copies");
	json_u64(w, "recorded", st->stack_copies);
	json_u64(w, "joined", joined);
	json_u64(w, "call_sites", learned);
	json_end(w);
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
	futex_waits_json(st, p, o, w);
}

/* ---- keyed figures ---- */

void futex_figures(void *state, const struct profile *p, struct figure_rows *rows)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	if (!sum.any_event)
		return;
	for (size_t i = 0; i < sum.ntps; i++)
		if (sum.tps[i].entry && sum.tps[i].has_total)
			figure_rows_add(rows, (double)sum.tps[i].total, "count", true, "futex.syscall.%s.calls",
					syscall_label(sum.tps[i].syscall));
	for (int id = 0; id < FOP_COUNT; id++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)id);
		if (!op_shown(st, p, &sum, (enum futex_op_id)id))
			continue;
		const char *op = futex_op_name((enum futex_op_id)id);
		bool estimated;
		uint64_t calls = op_calls(st, p, &sum, (enum futex_op_id)id, &estimated);
		if (sum.mode == FUTEX_COUNT) {
			if (!estimated)
				figure_rows_add(rows, (double)calls, "count", true, "futex.op.%s.calls", op);
			continue;
		}
		figure_rows_add(rows, (double)calls, "count", !estimated, "futex.op.%s.calls", op);
		figure_rows_add(rows, (double)op_recorded(st, &sum, (enum futex_op_id)id, os->errors), "count",
				!os->estimated, "futex.op.%s.errors", op);
		figure_rows_add(rows, (double)os->wait.count, "count", !os->estimated, "futex.op.%s.waits", op);
		figure_rows_add(rows, (double)os->wait.total, "ns", !os->estimated, "futex.op.%s.wait_ns.total", op);
		if (os->wait.count) {
			figure_rows_add(rows, (double)duration_quantile(&os->wait, 0.99), "ns", !os->estimated,
					"futex.op.%s.wait_ns.p99", op);
			figure_rows_add(rows, (double)os->wait.max, "ns", !os->estimated, "futex.op.%s.wait_ns.max", op);
		}
	}
	if (sum.mode == FUTEX_COUNT)
		return;
	struct futex_word *const *words;
	size_t n = futex_tracker_words(st->tracker, &words);
	/*
	 * A key names a word by its data symbol, which several words can share
	 * (each thread's stack is its own "[anon]" mapping, the words of one
	 * array are "table"): the words of one symbol add up, the max is theirs.
	 */
	for (size_t i = 0; i < n; i++) {
		const struct futex_word *w = words[i];
		figure_rows_merge(rows, FIGURE_SUM, (double)w->calls, "count", !w->estimated, "futex.word.%s.calls",
				  w->symbol);
		figure_rows_merge(rows, FIGURE_SUM, (double)w->wait.count, "count", !w->estimated, "futex.word.%s.waits",
				  w->symbol);
		figure_rows_merge(rows, FIGURE_SUM, (double)w->wait.total, "ns", !w->estimated,
				  "futex.word.%s.wait_ns.total", w->symbol);
		figure_rows_merge(rows, FIGURE_MAX, (double)w->wait.max, "ns", !w->estimated, "futex.word.%s.wait_ns.max",
				  w->symbol);
	}
	futex_waits_figures(st, p, rows);
}

/* ---- findings (view/findings.h): the report's first screen ---- */

#define FUTEX_PATHS                                                                                           \
	(FINDING_PATH(PATH_FUTEX_WAIT) | FINDING_PATH(PATH_FUTEX_WAKE) | FINDING_PATH(PATH_FUTEX_REQUEUE) | \
	 FINDING_PATH(PATH_FUTEX_OTHER))

/* What an error of a futex call means, in a few words. */
static const char *errno_meaning(int64_t err)
{
	switch (err) {
	case 11: return "the word's value changed before the wait: no sleep";
	case 110: return "the timeout expired";
	case 4: return "a signal interrupted the wait";
	default: return NULL;
	}
}

/*
 * One line: the op with the most calls, what share of them failed and
 * why, on how many words, and how long the workload blocked in futex
 * calls; the estimated figures are a caveat.
 */
void futex_findings(void *state, const struct profile *p, struct findings *out)
{
	struct futex_state *st = state;
	struct futex_summary sum = summarize(st, p);
	if (!sum.any_event || !sum.hits)
		return;
	/* the op with the most calls, and beside it the one that waited longest or else the next by calls */
	int top[2] = { -1, -1 };
	uint64_t calls[FOP_COUNT], blocked = 0;
	bool estimated[FOP_COUNT];
	for (int id = 0; id < FOP_COUNT; id++) {
		calls[id] = op_calls(st, p, &sum, (enum futex_op_id)id, &estimated[id]);
		blocked += futex_tracker_op(st->tracker, (enum futex_op_id)id)->wait.total;
		if (!calls[id])
			continue;
		if (top[0] < 0 || calls[id] > calls[top[0]]) {
			top[1] = top[0];
			top[0] = id;
		} else if (top[1] < 0 || calls[id] > calls[top[1]]) {
			top[1] = id;
		}
	}
	char count[32], dur[32], name[32];
	if (top[0] < 0 || sum.mode == FUTEX_COUNT) {
		uint64_t total = 0;
		for (size_t i = 0; i < sum.ntps; i++)
			if (sum.tps[i].entry && sum.tps[i].has_total)
				total += sum.tps[i].total;
		findings_add(out, FUTEX_PATHS, 1, "Futex operations; --futex sample records the words",
			     "futex: %s calls (exact, from the kernel's counter)", findings_count(total, count, sizeof(count)));
		return;
	}
	/* the op that waited longest is the one to name beside the busiest, whatever its calls */
	uint64_t longest = futex_tracker_op(st->tracker, (enum futex_op_id)top[0])->wait.total;
	for (int id = 0; id < FOP_COUNT; id++)
		if (calls[id] && futex_tracker_op(st->tracker, (enum futex_op_id)id)->wait.total > longest) {
			longest = futex_tracker_op(st->tracker, (enum futex_op_id)id)->wait.total;
			top[1] = id;
		}
	int shown = top[1] >= 0 && (calls[top[1]] * 10 >= calls[top[0]] ||
				    futex_tracker_op(st->tracker, (enum futex_op_id)top[1])->wait.total == longest) ? 2 : 1;
	struct strbuf line = { 0 };
	sb_addstr(&line, "futex: ");
	bool any_estimated = false;
	for (int k = 0; k < shown; k++) {
		sb_addf(&line, "%s%s%s %s", k ? " and " : "", estimated[top[k]] ? "~" : "",
			findings_count(calls[top[k]], count, sizeof(count)), futex_op_name((enum futex_op_id)top[k]));
		any_estimated |= estimated[top[k]];
	}
	sb_addf(&line, " calls (%s)", any_estimated ? "estimated" : "exact");
	/* the most frequent error of the shown ops, from 1% of its op's calls */
	const struct futex_count *most = NULL;
	int most_op = -1;
	for (int k = 0; k < shown; k++) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)top[k]);
		for (size_t i = 0; i < os->nerrnos; i++)
			if (os->calls && os->by_errno[i].count * 100 >= os->calls && (!most || os->by_errno[i].count > most->count)) {
				most = &os->by_errno[i];
				most_op = top[k];
			}
	}
	if (most) {
		const struct futex_op_stats *os = futex_tracker_op(st->tracker, (enum futex_op_id)most_op);
		double share = (double)most->count / (double)os->calls;
		const char *meaning = errno_meaning(most->key);
		sb_addf(&line, ", %s%s%.*f%% %s", shown > 1 ? futex_op_name((enum futex_op_id)most_op) : "",
			shown > 1 ? " " : "", share > 0.999 && share < 1 ? 2 : 0, 100.0 * share,
			futex_errno_name((int)most->key, name, sizeof(name)));
		if (meaning)
			sb_addf(&line, " (%s)", meaning);
	}
	struct futex_word *const *words;
	size_t nwords = futex_tracker_words(st->tracker, &words);
	if (nwords)
		sb_addf(&line, ", on %s word%s", findings_count(nwords, count, sizeof(count)), nwords == 1 ? "" : "s");
	sb_addf(&line, "; %s in futex wait calls", findings_duration(blocked, dur, sizeof(dur)));
	findings_add(out, FUTEX_PATHS, 1, "Futex operations", "%s", line.buf);
	sb_free(&line);
	if (!sum.exact)
		findings_caveat(out, "futex figures marked ~ are estimated from weighted samples above the rate bound "
				     "(--futex trace records every call)");
}
