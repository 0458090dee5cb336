/*
 * test_view.c: the view layer (profiler/view/view.c): the one-line stack writer
 * that the signal and sched sections share, the multi-line text writer,
 * the JSON frames, keyed figure rows and the marks-data question asked
 * through the analyzers' hooks.
 *
 * The profiles here are built in memory: a stack table filled with
 * stack_add(), and collectors whose analyzers are test doubles, so that
 * the view is tested without a recording or a real collector.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/json.h"
#include "sigprof/model/profile.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/base/term.h"
#include "sigprof/base/util.h"
#include "sigprof/view/view.h"

/* A profile with one collector ("test") and stacks built by the tests. */
static struct profile *new_profile(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	stack_table_init(&p->stacks, NULL);
	p->ncollectors = 1;
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "test");
	p->collectors[0].ok = true;
	return p;
}

static void free_profile(struct profile *p)
{
	stack_table_free(&p->stacks);
	free(p);
}

/* A stack of two kernel frames then the user functions named, leaf first. */
static uint32_t kernel_then_user(struct profile *p, const char *const *names, uint32_t n)
{
	uint32_t frames[16];
	uint32_t k = 0;
	frames[k++] = frame_unknown(&p->stacks, 0x10, true);
	frames[k++] = frame_unknown(&p->stacks, 0x20, true);
	for (uint32_t i = 0; i < n; i++)
		frames[k++] = frame_synthetic(&p->stacks, names[i], "/usr/bin/prog");
	return stack_add(&p->stacks, 0, frames, k, 1, 1);
}

static char *line_of(const struct profile *p, uint32_t stack, const struct stack_line_style *style)
{
	struct strbuf sb = { 0 };
	view_stack_line(p, stack, style, &sb);
	return sb.buf ? sb.buf : xstrdup("");
}

Test(view, one_line_from_the_first_user_frame)
{
	struct profile *p = new_profile();
	static const char *const names[] = { "handler", "main", "__libc_start_call_main" };
	uint32_t id = kernel_then_user(p, names, 3);
	struct stack_line_style style = { .separator = " <- ", .user_frames = true, .more = " <- ..." };
	char *line = line_of(p, id, &style);
	cr_assert_str_eq(line, "handler <- main <- __libc_start_call_main");
	free(line);

	style.max_frames = 2;
	line = line_of(p, id, &style);
	cr_assert_str_eq(line, "handler <- main <- ...", "cut at max_frames, with the marker");
	free(line);

	style.user_frames = false;
	style.max_frames = 0;
	style.separator = ";";
	line = line_of(p, id, &style);
	cr_assert_str_eq(line, "[unknown]+0x10;[unknown]+0x20;handler;main;__libc_start_call_main",
			 "every frame when user_frames is not asked for");
	free(line);
	free_profile(p);
}

Test(view, one_line_of_a_kernel_only_stack_shows_its_kernel_frames)
{
	struct profile *p = new_profile();
	uint32_t id = kernel_then_user(p, NULL, 0);
	struct stack_line_style style = { .separator = " <- ", .user_frames = true };
	char *line = line_of(p, id, &style);
	cr_assert_str_eq(line, "[unknown]+0x10 <- [unknown]+0x20");
	free(line);
	free_profile(p);
}

/* Rows for the stacks named (user frames only), cut to width. */
static void rows_of(struct profile *p, const char *const *const *stacks, size_t n, size_t width,
		    struct strbuf *rows)
{
	uint32_t ids[8];
	for (size_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (stacks[i][k])
			k++;
		ids[i] = kernel_then_user(p, stacks[i], k);
	}
	const struct stack_line_style style = { .separator = " <- ", .max_frames = 2, .user_frames = true,
						.more = " <- ..." };
	view_stack_rows(p, ids, n, &style, width, rows);
}

Test(view, rows_alike_in_their_first_frames_show_where_they_part)
{
	struct profile *p = new_profile();
	static const char *const one[] = { "leaf", "mid", "x1", "x2", "root", NULL };
	static const char *const two[] = { "leaf", "mid", "x1", "y2", "root", NULL };
	static const char *const three[] = { "leaf", "mid", "z1", "root", NULL };
	static const char *const four[] = { "other", "mid", "x1", NULL };
	static const char *const five[] = { "leaf", "mid", NULL };
	const char *const *const stacks[] = { one, two, three, four, five };
	struct strbuf rows[5] = { 0 };
	rows_of(p, stacks, 5, 0, rows);
	cr_assert_str_eq(rows[0].buf, "leaf <- \u2026 <- x1 <- x2 <- root", "parts from two at x2, from three at x1");
	cr_assert_str_eq(rows[1].buf, "leaf <- \u2026 <- x1 <- y2 <- root");
	cr_assert_str_eq(rows[2].buf, "leaf <- \u2026 <- z1 <- root");
	cr_assert_str_eq(rows[3].buf, "other <- mid <- ...", "alike no other: the first frames as always");
	cr_assert_str_eq(rows[4].buf, "leaf <- mid", "it stops where the others go on: its last frame, no more");
	for (size_t i = 0; i < 5; i++)
		sb_free(&rows[i]);
	free_profile(p);
}

Test(view, rows_alike_whole_read_the_same_and_cuts_keep_the_parting_frame)
{
	struct profile *p = new_profile();
	static const char *const one[] = { "leaf", "mid", "a_function_with_a_long_name", "parted_here", "root", NULL };
	static const char *const two[] = { "leaf", "mid", "a_function_with_a_long_name", "other_way", "root", NULL };
	static const char *const same[] = { "leaf", "mid", "a_function_with_a_long_name", "parted_here", "root", NULL };
	const char *const *const stacks[] = { one, two, same };
	struct strbuf rows[3] = { 0 };
	rows_of(p, stacks, 3, 30, rows);
	cr_assert_str_eq(rows[0].buf, rows[2].buf, "the same labels, the same row");
	cr_assert_str_eq(rows[0].buf, "\u2026 <- parted_here <- root", "its first frame left out to 30 columns: %s", rows[0].buf);
	cr_assert_str_eq(rows[1].buf, "leaf <- \u2026 <- other_way <- root", "30 columns: it fits");
	cr_assert_leq(term_columns(rows[1].buf), 30);
	for (size_t i = 0; i < 3; i++)
		sb_free(&rows[i]);
	/* alike only once cut to the width: they show where they part too */
	static const char *const long_a[] = { "a_very_long_leaf_function_name_alpha", "root", NULL };
	static const char *const long_b[] = { "a_very_long_leaf_function_name_beta", "root", NULL };
	const char *const *const cut[] = { long_a, long_b };
	rows_of(p, cut, 2, 20, rows);
	cr_assert_str_neq(rows[0].buf, rows[1].buf, "%s", rows[0].buf);
	cr_assert_str_eq(rows[1].buf, "\u2026on_name_beta <- ...", "the parting frame's end in sight: %s", rows[1].buf);
	for (size_t i = 0; i < 2; i++)
		sb_free(&rows[i]);
	free_profile(p);
}

Test(view, accessors_read_the_stack)
{
	struct profile *p = new_profile();
	static const char *const names[] = { "a", "b" };
	uint32_t id = kernel_then_user(p, names, 2);
	stack_add(&p->stacks, 0, (uint32_t[]){ frame_synthetic(&p->stacks, "x", "d") }, 1, 4, 4);
	cr_assert_eq(view_stack_depth(p, id), 4);
	cr_assert_eq(view_stack_count(p, id), 1);
	cr_assert_str_eq(view_stack_frame(p, id, 2)->sym, "a");
	cr_assert(view_stack_frame(p, id, 0)->kernel);
	uint32_t *ids;
	size_t n = view_stacks(p, 0, -1, &ids);
	cr_assert_eq(n, 2);
	cr_assert_eq(view_stack_count(p, ids[0]), 4, "heaviest first");
	free(ids);
	free_profile(p);
}

Test(view, text_stack_cuts_at_max_frames)
{
	struct profile *p = new_profile();
	static const char *const names[] = { "a", "b", "c" };
	uint32_t id = kernel_then_user(p, names, 3);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	view_text_stack(p, id, &(struct view_options){ .max_frames = 3 }, out);
	fclose(out);
	cr_assert_not_null(strstr(text, "        a "), "%s", text);
	cr_assert_null(strstr(text, "        b "), "%s", text);
	cr_assert_not_null(strstr(text, "... 2 more frames"), "%s", text);
	cr_assert_not_null(strstr(text, " prog\n"), "the dso's short name: %s", text);
	free(text);
	free_profile(p);
}

/* A stack cut by --max-frames that stopped early keeps its [unwind: ...] frame in sight, after the cut. */
Test(view, text_stack_cut_at_max_frames_still_says_why_it_stops)
{
	struct profile *p = new_profile();
	uint32_t frames[6];
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	for (uint32_t i = 0; i < 5; i++)
		frames[i] = frame_synthetic(&p->stacks, names[i], "/usr/bin/prog");
	frames[5] = frame_synthetic(&p->stacks, "[unwind: stack copy ends at 512 bytes]", "[unwind]");
	uint32_t id = stack_add(&p->stacks, 0, frames, 6, 1, 1);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	view_text_stack(p, id, &(struct view_options){ .max_frames = 2 }, out);
	fclose(out);
	const char *more = strstr(text, "... 3 more frames\n"), *why = strstr(text, "[unwind: stack copy ends at 512 bytes]");
	cr_assert(more && why && more < why, "the reason after the cut: %s", text);
	cr_assert_null(strstr(text, "        c "), "%s", text);
	free(text);
	free_profile(p);
}

Test(view, json_frames_name_unnamed_frames_by_offset)
{
	struct profile *p = new_profile();
	uint32_t id = kernel_then_user(p, NULL, 0);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct json_writer w;
	json_init(&w, out);
	json_object_begin(&w, NULL);
	view_json_stack(&w, p, id);
	json_finish(&w);
	fclose(out);
	cr_assert_not_null(strstr(text, "\"sym\": \"[unknown]+0x10\""), "%s", text);
	cr_assert_not_null(strstr(text, "\"offset\": \"0x20\""), "%s", text);
	free(text);
	free_profile(p);
}

Test(view, figure_rows_keep_formatted_keys)
{
	struct figure_rows rows = { 0 };
	for (int i = 0; i < 100; i++)
		figure_rows_add(&rows, i * 1.5, "ms", i % 2 == 0, "test.row%d.%s", i, "wait");
	cr_assert_eq(rows.count, 100);
	cr_assert_str_eq(rows.rows[7].key, "test.row7.wait");
	cr_assert_float_eq(rows.rows[7].value, 10.5, 1e-9);
	cr_assert_not(rows.rows[7].exact);
	cr_assert_str_eq(rows.rows[7].unit, "ms");
	figure_rows_free(&rows);
	cr_assert_eq(rows.count, 0);
}

Test(view, figure_rows_hold_a_key_once)
{
	struct figure_rows rows = { 0 };
	cr_assert_eq(figure_rows_add(&rows, 3, "count", true, "futex.word.%s.calls", "[anon]+0x10"), 0);
	cr_assert_eq(figure_rows_add(&rows, 4, "count", true, "futex.word.%s.calls", "[anon]+0x10"), -EEXIST,
		     "a second row under one key is refused");
	cr_assert_eq(rows.count, 1);
	cr_assert_eq(rows.refused, 1);
	cr_assert_eq(rows.rows[0].value, 3, "the row listed first stays as it was");
	/* merged: counts add up, maxima keep the larger, exact only when both are */
	cr_assert_eq(figure_rows_merge(&rows, FIGURE_SUM, 5, "count", false, "futex.word.[anon]+0x10.calls"), 0);
	cr_assert_eq(rows.count, 1);
	cr_assert_eq(rows.rows[0].value, 8);
	cr_assert_not(rows.rows[0].exact);
	cr_assert_eq(figure_rows_merge(&rows, FIGURE_MAX, 7, "ns", true, "w.max"), 0, "a new key is added");
	cr_assert_eq(figure_rows_merge(&rows, FIGURE_MAX, 2, "ns", true, "w.max"), 0);
	cr_assert_eq(figure_rows_merge(&rows, FIGURE_MAX, 9, "ns", true, "w.max"), 0);
	cr_assert_eq(rows.count, 2);
	const struct figure_row *r = figure_rows_find(&rows, "w.max");
	cr_assert(r);
	cr_assert_eq(r->value, 9);
	cr_assert(r->exact);
	cr_assert_eq(figure_rows_merge(&rows, FIGURE_SUM, 1, "ms", true, "w.max"), -EINVAL, "two units: two figures");
	cr_assert_eq(r->value, 9);
	cr_assert_eq(rows.refused, 2);
	/* many keys: each found, none twice */
	for (int i = 0; i < 5000; i++)
		figure_rows_add(&rows, i, "count", true, "k.%d", i % 2500);
	cr_assert_eq(rows.count, 2 + 2500);
	cr_assert_eq(rows.refused, 2 + 2500);
	cr_assert_eq(figure_rows_find(&rows, "k.1234")->value, 1234);
	cr_assert_null(figure_rows_find(&rows, "k.2500"));
	figure_rows_free(&rows);
	cr_assert_eq(rows.count, 0);
}

/* ---- hooks: a test double of an analyzer that knows one data range ---- */

struct marker_state {
	uint32_t pid;
	uint64_t start, end;
	int asked;
};

static bool marks_range(void *state, uint32_t pid, uint64_t start, uint64_t end)
{
	struct marker_state *m = state;
	m->asked++;
	return pid == m->pid && start < m->end && end > m->start;
}

static const struct collector_analyzer marker_analyzer = { .marks_data = marks_range };
static const struct collector marker_collector = { .name = "marker", .analyzer = &marker_analyzer };

Test(view, data_marked_by_asks_the_hooks)
{
	struct profile *p = new_profile();
	struct marker_state m = { .pid = 7, .start = 0x1000, .end = 0x1004 };
	p->ncollectors = 2;
	snprintf(p->collectors[1].name, sizeof(p->collectors[1].name), "marker");
	p->collectors[1].impl = &marker_collector;
	p->collectors[1].state = &m;
	cr_assert_str_eq(view_data_marked_by(p, 7, 0x1000, 0x1040), "marker");
	cr_assert_null(view_data_marked_by(p, 7, 0x1040, 0x1080), "a line without the word");
	cr_assert_null(view_data_marked_by(p, 8, 0x1000, 0x1040), "the same address in another process");
	cr_assert_eq(m.asked, 3);
	free_profile(p);
}

/* ---- rows the view derives: time.*, cost.*, and the cpu collector's perf-profile.* ---- */

static void add_signal_counts(void *state, const struct profile *p, struct figure_rows *rows)
{
	(void)state;
	(void)p;
	figure_rows_add(rows, 1000, "count", true, "signal.SIGUSR1.sigreturns");
	figure_rows_add(rows, 999, "count", true, "signal.SIGUSR1.delivered");
	figure_rows_add(rows, 5, "us", true, "signal.SIGUSR1.latency_us.p50"); /* not a count of events */
	figure_rows_add(rows, 1, "count", true, "signal.SIGUSR2.sigreturns");
}

static void *state_one(const struct profile *p, int self)
{
	(void)p;
	(void)self;
	return xmalloc(1);
}

static const struct collector_analyzer signal_double = { .create = state_one, .destroy = free,
							  .figures = add_signal_counts };
static const struct collector signal_double_collector = { .name = "signal", .analyzer = &signal_double };

static const struct figure_row *find_figure(const struct figure_rows *rows, const char *key)
{
	for (size_t i = 0; i < rows->count; i++)
		if (strcmp(rows->rows[i].key, key) == 0)
			return &rows->rows[i];
	return NULL;
}

Test(view, cost_rows_divide_the_cpu_on_a_path_by_its_counted_events)
{
	struct profile *p = new_profile();
	/* collector 0: cpu, 100 samples of cpu-clock at 250000 ns each, 20 on sigreturn, 30 on signal-deliver */
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "cpu");
	snprintf(p->collectors[0].event, sizeof(p->collectors[0].event), "cpu-clock");
	p->collectors[0].samples = 100;
	p->collectors[0].weight = 100 * 250000ull;
	p->collectors[0].path_samples[PATH_SIGRETURN] = 20;
	p->collectors[0].path_samples[PATH_SIGNAL_DELIVER] = 30;
	p->collectors[0].path_samples[PATH_OTHER] = 50;
	p->ncollectors = 2;
	snprintf(p->collectors[1].name, sizeof(p->collectors[1].name), "signal");
	p->collectors[1].ok = true;
	p->collectors[1].impl = &signal_double_collector;
	p->collectors[1].state = state_one(p, 1);
	p->time_figures[0].value = 1.5;
	snprintf(p->time_figures[0].name, sizeof(p->time_figures[0].name), "user_time");
	p->time_figures[1].value = 7;
	snprintf(p->time_figures[1].name, sizeof(p->time_figures[1].name), "voluntary_context_switches");
	p->ntime_figures = 2;
	struct figure_rows rows = { 0 };
	view_figures(p, &rows);
	const struct figure_row *r = find_figure(&rows, "cost.sigreturn.events");
	cr_assert(r);
	cr_assert_eq(r->value, 1001, "SIGUSR1's and SIGUSR2's sigreturns");
	cr_assert(r->exact);
	r = find_figure(&rows, "cost.sigreturn.ns_per_event");
	cr_assert(r);
	cr_assert_float_eq(r->value, 20 * 250000.0 / 1001, 1e-6);
	cr_assert_str_eq(r->unit, "ns");
	cr_assert_not(r->exact, "from samples: estimated");
	r = find_figure(&rows, "cost.sigreturn.cpu_ms");
	cr_assert(r);
	cr_assert_float_eq(r->value, 5.0, 1e-9);
	r = find_figure(&rows, "cost.signal-deliver.ns_per_event");
	cr_assert(r);
	cr_assert_float_eq(r->value, 30 * 250000.0 / 999, 1e-6);
	r = find_figure(&rows, "cost.total.cpu_ms");
	cr_assert(r);
	cr_assert_float_eq(r->value, 25.0, 1e-9);
	cr_assert_null(find_figure(&rows, "cost.signal-generate.events"), "no row counts generations: no cost row");
	cr_assert_null(find_figure(&rows, "cost.futex-wait.ns_per_event"));
	r = find_figure(&rows, "time.user_time");
	cr_assert(r);
	cr_assert_eq(r->value, 1.5);
	cr_assert_str_eq(r->unit, "s");
	r = find_figure(&rows, "time.voluntary_context_switches");
	cr_assert(r);
	cr_assert_str_eq(r->unit, "count");
	cr_assert(r->exact);
	figure_rows_free(&rows);
	free(p->collectors[1].state);
	free_profile(p);
}

Test(view, cost_rows_give_each_function_its_own_time_per_event_on_the_path)
{
	struct profile *p = new_profile();
	/* cpu-clock at 250000 ns a sample; on sigreturn: 60 samples whose leaf is restore, 20 whose leaf is copy_in,
	 * 19 whose leaf is tiny (under the 20 samples a row needs), the frames [signal] (sigprof's own) and the
	 * caller main above them; on other: 2 samples in main */
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "cpu");
	snprintf(p->collectors[0].event, sizeof(p->collectors[0].event), "cpu-clock");
	uint32_t restore = frame_synthetic(&p->stacks, "restore", "[kernel]"),
		 copy_in = frame_synthetic(&p->stacks, "copy_in", "[kernel]"), main_fn = frame_synthetic(&p->stacks, "main", "/bin/w"),
		 tiny = frame_synthetic(&p->stacks, "tiny", "[kernel]");
	p->stacks.frames[restore].synthetic = p->stacks.frames[copy_in].synthetic = p->stacks.frames[main_fn].synthetic =
		p->stacks.frames[tiny].synthetic = false;
	uint32_t a[2] = { restore, main_fn }, b[3] = { copy_in, restore, main_fn }, c[1] = { main_fn },
		 d[3] = { tiny, restore, main_fn };
	stack_add_on_path(&p->stacks, 0, a, 2, 60, 60 * 250000ull, PATH_SIGRETURN);
	stack_add_on_path(&p->stacks, 0, b, 3, 20, 20 * 250000ull, PATH_SIGRETURN);
	stack_add_on_path(&p->stacks, 0, d, 3, 19, 19 * 250000ull, PATH_SIGRETURN);
	stack_add_on_path(&p->stacks, 0, c, 1, 2, 2 * 250000ull, PATH_OTHER);
	p->collectors[0].samples = 101;
	p->collectors[0].weight = 101 * 250000ull;
	p->collectors[0].path_samples[PATH_SIGRETURN] = 99;
	p->collectors[0].path_samples[PATH_OTHER] = 2;
	p->ncollectors = 2;
	snprintf(p->collectors[1].name, sizeof(p->collectors[1].name), "signal");
	p->collectors[1].ok = true;
	p->collectors[1].impl = &signal_double_collector;
	p->collectors[1].state = state_one(p, 1);
	struct figure_rows rows = { 0 };
	view_figures(p, &rows);
	const struct figure_row *r = find_figure(&rows, "cost.sigreturn.self_per_event.restore");
	cr_assert(r);
	cr_assert_float_eq(r->value, 60 * 250000.0 / 1001, 1e-6, "its 60 samples' time over the 1001 sigreturns");
	cr_assert_str_eq(r->unit, "ns");
	cr_assert_not(r->exact);
	r = find_figure(&rows, "cost.sigreturn.self_per_event.copy_in");
	cr_assert(r);
	cr_assert_float_eq(r->value, 20 * 250000.0 / 1001, 1e-6);
	cr_assert_null(find_figure(&rows, "cost.sigreturn.self_per_event.main"), "never a leaf on the path");
	cr_assert_null(find_figure(&rows, "cost.sigreturn.self_per_event.tiny"),
		       "19 samples: a figure that moves in whole samples has no row");
	double own = 0;
	for (size_t i = 0; i < rows.count; i++)
		if (strncmp(rows.rows[i].key, "cost.sigreturn.self_per_event.", 30) == 0)
			own += rows.rows[i].value;
	cr_assert_float_eq(own + 19 * 250000.0 / 1001, find_figure(&rows, "cost.sigreturn.ns_per_event")->value, 1e-6,
			   "the functions' own times and the one under the floor add up to the path's time per event");
	for (size_t i = 0; i < rows.count; i++)
		cr_assert(!strstr(rows.rows[i].key, ".self_per_event.") || strncmp(rows.rows[i].key, "cost.sigreturn.", 15) == 0,
			  "%s: only a path with counted events has a time per event", rows.rows[i].key);
	figure_rows_free(&rows);
	free(p->collectors[1].state);
	free_profile(p);
}

Test(view, no_cost_rows_without_cpu_samples)
{
	struct profile *p = new_profile();
	p->collectors[0].impl = &signal_double_collector;
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "signal");
	p->collectors[0].state = state_one(p, 0);
	struct figure_rows rows = { 0 };
	view_figures(p, &rows);
	for (size_t i = 0; i < rows.count; i++)
		cr_assert(strncmp(rows.rows[i].key, "cost.", 5) != 0, "%s without a cpu collector", rows.rows[i].key);
	figure_rows_free(&rows);
	free(p->collectors[0].state);
	free_profile(p);
}

Test(view, a_collector_without_samples_has_no_path_shares)
{
	struct profile *p = new_profile();
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "futex");
	p->collectors[0].ok = true; /* opened, and nothing of the workload's hit it */
	p->ncollectors = 2;
	snprintf(p->collectors[1].name, sizeof(p->collectors[1].name), "sched");
	p->collectors[1].ok = true;
	p->collectors[1].samples = 4;
	p->collectors[1].path_samples[PATH_FUTEX_WAIT] = 3;
	p->collectors[1].path_samples[PATH_OTHER] = 1;
	struct figure_rows rows = { 0 };
	view_figures(p, &rows);
	const struct figure_row *r = figure_rows_find(&rows, "futex.samples");
	cr_assert(r, "its samples, 0, were measured");
	cr_assert_eq(r->value, 0);
	double shares = 0;
	for (size_t i = 0; i < rows.count; i++) {
		cr_assert(strncmp(rows.rows[i].key, "paths.futex.", 12) != 0, "%s: a share of no samples",
			  rows.rows[i].key);
		if (strncmp(rows.rows[i].key, "paths.sched.", 12) == 0)
			shares += rows.rows[i].value;
	}
	cr_assert_float_eq(shares, 100.0, 1e-9, "the shares of a collector with samples add up to 100");
	figure_rows_free(&rows);
	free_profile(p);
}

/* A profile whose collector 0 is the real cpu collector (its analyzer created), for its figures. */
static struct profile *new_cpu_profile(const struct collector **cpu)
{
	*cpu = NULL;
	for (size_t i = 0; i < collector_count; i++)
		if (strcmp(collector_table[i]->name, "cpu") == 0)
			*cpu = collector_table[i];
	cr_assert(*cpu && (*cpu)->analyzer && (*cpu)->analyzer->figures);
	struct profile *p = new_profile();
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "cpu");
	p->collectors[0].impl = *cpu;
	p->collectors[0].state = (*cpu)->analyzer->create(p, 0);
	return p;
}

Test(view, cpu_collector_lists_lkp_perf_profile_shares)
{
	const struct collector *cpu;
	struct profile *p = new_cpu_profile(&cpu);
	/*
	 * 3 samples main <- work <- spin, through a signal frame the report made (no perf callchain has one: it
	 * stays out of the keys), 1 sample main <- idle (leaf first in stack_add)
	 */
	uint32_t spin[4] = { frame_synthetic(&p->stacks, "spin", "/bin/w"), frame_synthetic(&p->stacks, "work", "/bin/w"),
			     frame_synthetic(&p->stacks, "[signal SIGUSR1] (stack from delivery)", "[signal]"),
			     frame_synthetic(&p->stacks, "main", "/bin/w") };
	for (size_t i = 0; i < 4; i++)
		p->stacks.frames[spin[i]].synthetic = i == 2; /* the others stand for functions found at addresses */
	uint32_t idle[2] = { frame_synthetic(&p->stacks, "idle", "/bin/w"), spin[3] };
	p->stacks.frames[idle[0]].synthetic = false;
	stack_add(&p->stacks, 0, spin, 4, 3, 3);
	stack_add(&p->stacks, 0, idle, 2, 1, 1);
	p->collectors[0].samples = 4;
	struct figure_rows rows = { 0 };
	cpu->analyzer->figures(p->collectors[0].state, p, &rows);
	const struct figure_row *r = find_figure(&rows, "perf-profile.self.cycles-pp.spin");
	cr_assert(r);
	cr_assert_float_eq(r->value, 75.0, 1e-9);
	cr_assert_str_eq(r->unit, "percent");
	cr_assert_null(find_figure(&rows, "perf-profile.self.cycles-pp.main"), "main is never a leaf: no self row");
	r = find_figure(&rows, "perf-profile.children.cycles-pp.main");
	cr_assert(r);
	cr_assert_float_eq(r->value, 100.0, 1e-9);
	r = find_figure(&rows, "perf-profile.calltrace.cycles-pp.main.work.spin");
	cr_assert(r, "the call trace root first");
	cr_assert_float_eq(r->value, 75.0, 1e-9);
	r = find_figure(&rows, "perf-profile.calltrace.cycles-pp.main.idle");
	cr_assert(r);
	cr_assert_float_eq(r->value, 25.0, 1e-9);
	for (size_t i = 0; i < rows.count; i++)
		cr_assert_null(strchr(rows.rows[i].key, ' '), "a key with the report's own frame: %s", rows.rows[i].key);
	figure_rows_free(&rows);
	cpu->analyzer->destroy(p->collectors[0].state);
	free_profile(p);
}

Test(view, cpu_perf_profile_keys_merge_functions_of_one_name)
{
	const struct collector *cpu;
	struct profile *p = new_cpu_profile(&cpu);
	/* _start of the program and _start of ld.so: two functions, one name, so one key */
	uint32_t prog = frame_synthetic(&p->stacks, "_start", "/bin/w");
	uint32_t ld = frame_synthetic(&p->stacks, "_start", "/lib64/ld-linux-x86-64.so.2");
	uint32_t work = frame_synthetic(&p->stacks, "work", "/bin/w");
	cr_assert_neq(prog, ld);
	p->stacks.frames[prog].synthetic = p->stacks.frames[ld].synthetic = p->stacks.frames[work].synthetic = false;
	uint32_t in_prog[2] = { work, prog };    /* 5 samples: work <- _start (program) */
	uint32_t ld_leaf[1] = { ld };            /* 2 samples: in ld.so's _start */
	uint32_t prog_leaf[1] = { prog };        /* 1 sample: in the program's _start */
	uint32_t both[3] = { work, prog, ld };   /* 2 samples: both on one stack: counted once in children */
	stack_add(&p->stacks, 0, in_prog, 2, 5, 5);
	stack_add(&p->stacks, 0, ld_leaf, 1, 2, 2);
	stack_add(&p->stacks, 0, prog_leaf, 1, 1, 1);
	stack_add(&p->stacks, 0, both, 3, 2, 2);
	p->collectors[0].samples = 10;
	struct figure_rows rows = { 0 };
	cpu->analyzer->figures(p->collectors[0].state, p, &rows);
	cr_assert_eq(rows.refused, 0, "no key listed twice");
	const struct figure_row *r = figure_rows_find(&rows, "perf-profile.self.cycles-pp._start");
	cr_assert(r);
	cr_assert_float_eq(r->value, 30.0, 1e-9, "2 + 1 of 10 samples have a _start leaf");
	r = figure_rows_find(&rows, "perf-profile.children.cycles-pp._start");
	cr_assert(r);
	cr_assert_float_eq(r->value, 100.0, 1e-9, "every sample has a _start, the 2 with both once");
	r = figure_rows_find(&rows, "perf-profile.children.cycles-pp.work");
	cr_assert(r);
	cr_assert_float_eq(r->value, 70.0, 1e-9);
	figure_rows_free(&rows);
	cpu->analyzer->destroy(p->collectors[0].state);
	free_profile(p);
}

/* A test double of the futex collector's pending_futex_word hook: thread 42 is inside a call on 0x2000 since t=100. */
static bool pending_word(void *state, uint32_t tid, uint64_t time, uint32_t *pid, uint64_t *uaddr)
{
	(void)state;
	if (tid != 42 || time < 100)
		return false;
	*pid = 40;
	*uaddr = 0x2000;
	return true;
}

static const struct collector_analyzer pending_analyzer = { .pending_futex_word = pending_word };
static const struct collector pending_collector = { .name = "pending", .analyzer = &pending_analyzer };

Test(view, pending_futex_word_asks_the_hooks)
{
	struct profile *p = new_profile();
	int state;
	p->ncollectors = 2;
	p->collectors[1].impl = &pending_collector;
	p->collectors[1].state = &state;
	uint32_t pid = 0;
	uint64_t uaddr = 0;
	cr_assert(view_pending_futex_word(p, 42, 150, &pid, &uaddr));
	cr_expect_eq(pid, 40);
	cr_expect_eq(uaddr, 0x2000);
	cr_expect_not(view_pending_futex_word(p, 42, 50, &pid, &uaddr), "before the call's entry");
	cr_expect_not(view_pending_futex_word(p, 43, 150, &pid, &uaddr), "another thread");
	p->ncollectors = 1; /* no collector with the hook: no word */
	cr_expect_not(view_pending_futex_word(p, 42, 150, &pid, &uaddr));
	free_profile(p);
}

/* view_table's rows printed into a string within width (0: no limit). */
static char *table_text(const char *const *rows, size_t nrows, const unsigned *columns, size_t ncolumns,
			unsigned width)
{
	struct view_table t = { .columns = columns, .ncolumns = ncolumns };
	for (size_t i = 0; i < nrows; i++)
		view_table_addf(&t, "%s", rows[i]);
	struct view_options o = { .width = width };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert_not_null(out);
	view_table_print(&t, &o, out);
	fclose(out);
	return text;
}

Test(view, table_cells_are_terminal_columns_and_the_last_one_wraps)
{
	/* "  %-12s %7s %7s  %s"; a key cut with "…" (one column, three bytes) keeps the columns after it in place */
	static const unsigned columns[] = { 14, 8, 8, 2 };
	static const char *const rows[] = {
		"  name             one     two  notes",
		"  long_na…ame        1       2  EAGAIN 51,ETIME 3; WAIT 20,WAKE 20",
	};
	char *whole = table_text(rows, 2, columns, 4, 0);
	cr_assert_str_eq(whole, "  name             one     two  notes\n"
				"  long_na…ame        1       2  EAGAIN 51,ETIME 3; WAIT 20,WAKE 20\n");
	free(whole);
	/* 30 columns: the key with one and two, then the key with the notes, their words wrapped under them */
	char *fitted = table_text(rows, 2, columns, 4, 30);
	cr_assert_str_eq(fitted, "  name             one     two\n"
				 "  long_na…ame        1       2\n"
				 "\n"
				 "  name          notes\n"
				 "  long_na…ame   EAGAIN\n"
				 "                51,ETIME 3;\n"
				 "                WAIT 20,WAKE\n"
				 "                20\n");
	free(fitted);
}
