/*
 * report_text.c: the terminal report.
 *
 *   summary     the first screen: what ran, its cost, the findings (report_summary.c)
 *   header      what ran, for how long, samples and lost records; the collectors
 *               and the unwinder in one line each (line by line with --header)
 *   paths       one row per path, a samples column and a share per collector
 *               (rows and collectors that are all zero left out, but with --all)
 *   sections    each collector's, those whose findings rank highest first
 *   functions   the top functions by self samples (or --sort), per collector
 *   stacks      the top stacks of each path that has samples, leaf first
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sigprof/model/collector.h"
#include "sigprof/commands/report.h"
#include "sigprof/base/term.h"
#include "sigprof/base/util.h"

/*
 * How many user stacks unwound whole, and why the others stopped: DWARF
 * unwinds, and frame-pointer walks (whole: they ended without a sign of an
 * invented frame).
 */
static void print_unwind(const struct profile *p, FILE *out)
{
	const struct unwind_counts *u = &p->unwind;
	if (!u->samples)
		return;
	fprintf(out, "# unwind:     %llu samples with user stacks", (unsigned long long)u->samples);
	if (u->fp_chains)
		fprintf(out, " (%llu frame-pointer walks)", (unsigned long long)u->fp_chains);
	fprintf(out, ", %llu unwound to the outermost frame (%s)", (unsigned long long)u->complete,
		SHARE(u->complete, u->samples));
	const char *sep = "; stopped early: ";
	for (int f = 1; f < UNWIND_FAILURE_COUNT; f++) {
		if (!u->failures[f])
			continue;
		fprintf(out, "%s%s %llu", sep, unwind_failure_key(f), (unsigned long long)u->failures[f]);
		sep = ", ";
	}
	fprintf(out, "; %s end in an unnamed frame", SHARE(u->ends_in_unknown, u->samples));
	if (u->ends_in_eh_frame_name)
		fprintf(out, " (%s in a stripped file, named from its .eh_frame)",
			SHARE(u->ends_in_eh_frame_name, u->samples));
	fputc('\n', out);
	if (u->joined)
		fprintf(out, "# note:       %llu handler %s on past %s signal frame with %s delivery's stack (an alternate "
			     "signal stack, or a copy that ran out)\n",
			(unsigned long long)u->joined, u->joined == 1 ? "stack goes" : "stacks go",
			u->joined == 1 ? "its" : "their", u->joined == 1 ? "its" : "their");
	if (u->lent)
		fprintf(out, "# note:       %llu %s (futex entries, switch-outs, signals), keyed by a short stack copy, %s on %s "
			     "call site's whole stack\n",
			(unsigned long long)u->lent, u->lent == 1 ? "sample" : "samples", u->lent == 1 ? "counts" : "count",
			u->lent == 1 ? "its" : "their");
	if (u->completed)
		fprintf(out, "# note:       %llu %s deeper than %s short copy %s on along a long copy's whole stack "
			     "through the same frames\n",
			(unsigned long long)u->completed, u->completed == 1 ? "stack" : "stacks",
			u->completed == 1 ? "its" : "their", u->completed == 1 ? "goes" : "go");
	if (u->spliced)
		fprintf(out, "# note:       %llu %s deeper than %s copy %s on along the frame-pointer walk\n",
			(unsigned long long)u->spliced, u->spliced == 1 ? "stack" : "stacks",
			u->spliced == 1 ? "its" : "their", u->spliced == 1 ? "goes" : "go");
	if (u->failures[UNWIND_STACK_END])
		fprintf(out, "# note:       %llu user %s deeper than %s copy: record with a larger "
			     "--call-graph dwarf,SIZE (this recording: %s)\n",
			(unsigned long long)u->failures[UNWIND_STACK_END],
			u->failures[UNWIND_STACK_END] == 1 ? "stack is" : "stacks are",
			u->failures[UNWIND_STACK_END] == 1 ? "its" : "their", p->call_graph[0] ? p->call_graph : "?");
}

/*
 * The hits the kernel counted and did not sample, per event: no LOST record
 * tells of them (profile.h says when the kernel does it).
 */
static void print_unsampled(const struct profile *p, FILE *out)
{
	uint64_t unsampled = profile_unsampled_hits(p);
	if (!unsampled && !p->throttle_records)
		return;
	fprintf(out, "# unsampled:  %llu tracepoint hits counted by the kernel have no sample (",
		(unsigned long long)unsampled);
	for (size_t e = 0; e < p->events.count; e++) {
		uint64_t n = profile_unsampled_hits_of(p, e);
		if (n)
			fprintf(out, "%s %llu; ", p->events.events[e].name, (unsigned long long)n);
	}
	double share;
	fprintf(out, "%llu throttle records): %sof a throttled event, or (some kernels) hits on an idle CPU; the "
		     "totals stay exact\n",
		(unsigned long long)p->throttle_records, profile_lost(p, &share) ? "hits whose records were lost, " : "hits ");
}

/*
 * The events a collector's samples come from: "cpu-clock, 2 samples", or
 * with several, each that has samples with its share of the sum:
 * "page-faults 5 + cpu-clock 2 = 7 samples", and how many had none (the
 * futex collector opens a dozen tracepoints, most kernels' programs use
 * two); JSON lists them all.
 */
static void print_collector_events(const struct profile *p, int c, FILE *out)
{
	const struct collector_info *ci = &p->collectors[c];
	struct collector_event *events;
	size_t n = profile_collector_events(p, c, &events), shown = 0, silent = 0;
	fprintf(out, "# collector:  %-8s ", ci->name);
	if (n <= 1) {
		fprintf(out, "%s, ", n ? events[0].name : ci->event);
	} else {
		size_t with_samples = 0;
		for (size_t e = 0; e < n; e++)
			with_samples += events[e].samples != 0;
		for (size_t e = 0; e < n; e++) {
			if (!events[e].samples) {
				silent += !events[e].stack_copies;
				continue;
			}
			fprintf(out, "%s%s", shown++ ? " + " : "", events[e].name);
			if (with_samples > 1) /* one alone has the collector's samples */
				fprintf(out, " %llu", (unsigned long long)events[e].samples);
		}
		fprintf(out, shown > 1 ? " = " : shown ? ", " : "%zu events, ", n);
	}
	fprintf(out, "%llu samples", (unsigned long long)ci->samples);
	const char *sep = "; stack copies lent to them: ";
	for (size_t e = 0; e < n; e++)
		if (!events[e].samples && events[e].stack_copies) {
			fprintf(out, "%s%s %llu", sep, events[e].name, (unsigned long long)events[e].stack_copies);
			sep = " + ";
		}
	if (shown && silent)
		fprintf(out, "; %zu more event%s without samples", silent, silent == 1 ? "" : "s");
	fputc('\n', out);
	free(events);
}

/*
 * The collectors in one line: "cpu 2847 (cpu-clock), futex 95127, sched 409,
 * signal 0; unavailable: cache, c2c" (--header: one line each, with why).
 */
static void print_collectors_compact(const struct profile *p, FILE *out)
{
	struct strbuf line = { 0 }, unavailable = { 0 };
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (!ci->ok) {
			sb_addf(&unavailable, "%s%s", unavailable.len ? ", " : "", ci->name);
			continue;
		}
		sb_addf(&line, "%s%s %llu", line.len ? ", " : "", ci->name, (unsigned long long)ci->samples);
		if (strcmp(ci->name, "cpu") == 0 && ci->event[0])
			sb_addf(&line, " (%s)", ci->event);
	}
	fprintf(out, "# collectors: %s samples", line.len ? line.buf : "none");
	if (unavailable.len)
		fprintf(out, "; unavailable: %s (--header says why)", unavailable.buf);
	fputc('\n', out);
	sb_free(&line);
	sb_free(&unavailable);
}

/* The unwinder in one line: how many user stacks, the share whole (--header: why the others stopped). */
static void print_unwind_compact(const struct profile *p, FILE *out)
{
	const struct unwind_counts *u = &p->unwind;
	if (!u->samples)
		return;
	fprintf(out, "# unwind:     %llu user stacks, %s to the outermost frame%s\n", (unsigned long long)u->samples,
		SHARE(u->complete, u->samples), u->complete < u->samples ? " (--header: why the others stopped)" : "");
}

static void print_header(const struct profile *p, bool full, FILE *out)
{
	fprintf(out, "# sigprof report of %s\n", p->file);
	if (p->argc || !p->target[0]) {
		/* the recording's words, which may hold anything: control characters escaped */
		struct strbuf command = { 0 };
		for (int i = 0; i < p->argc; i++) {
			if (i)
				sb_addstr(&command, " ");
			sb_add_printable(&command, p->argv[i]);
		}
		fprintf(out, "# command:    %s%s\n", command.len ? command.buf : "", p->target[0] ? " (the window)" : "");
		sb_free(&command);
	}
	if (p->target[0])
		fprintf(out, "# target:     %s\n", p->target);
	if (p->workload_pid)
		fprintf(out, "# workload:   pid %u, the command perf forked, and the processes it forked\n", p->workload_pid);
	if (full && strncmp(p->followed, "cgroup ", 7) == 0)
		fprintf(out, "# followed:   in a cgroup of its own, %s (per-CPU events, none inherited)\n", p->followed + 7);
	else if (full && strncmp(p->followed, "inherit: ", 9) == 0)
		fprintf(out, "# followed:   with per-task events inherited by each thread (%s)\n", p->followed + 9);
	char when[64] = "?";
	time_t t = (time_t)(p->start_realtime_ns / 1000000000ULL);
	struct tm tm;
	if (p->start_realtime_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(out, "# recorded:   %s on %s (Linux %s, %s, %d CPUs)\n", when, p->hostname, p->kernel, p->arch,
		p->ncpus);
	if (p->piece)
		fprintf(out, "# piece:      %u of a recording cut by --switch-output %s\n", p->piece, p->switch_output);
	int status = profile_exit_status(p);
	if (p->has_finish && (p->finish.flags & SP_FINISH_SWITCHED))
		fprintf(out, "# duration:   %.3f s; the workload ran on in the next piece\n", profile_duration_s(p));
	else if (status >= 0 && p->target[0] && !p->argc) /* attached, no command: no status of its own to give */
		fprintf(out, "# duration:   %.3f s, %s\n", profile_duration_s(p),
			p->finish.flags & SP_FINISH_INTERRUPTED ? "interrupted" : "until the targets exited");
	else if (status >= 0)
		fprintf(out, "# duration:   %.3f s, exit status %d%s\n", profile_duration_s(p), status,
			p->finish.flags & SP_FINISH_INTERRUPTED ? " (interrupted)" : "");
	else if (status == PROFILE_EXIT_NOT_RECORDED)
		fprintf(out, "# duration:   %.3f s between first and last record (the file holds no exit status)\n",
			profile_duration_s(p));
	else if (status == PROFILE_EXIT_UNKNOWN)
		fprintf(out, "# duration:   %.3f s, exit status unknown (wait status %#x)\n", profile_duration_s(p),
			(unsigned)p->finish.wait_status);
	else
		fprintf(out, "# duration:   %.3f s between first and last sample (recording cut short)\n",
			profile_duration_s(p));
	uint64_t lost = profile_lost(p, NULL);
	/* the workload's own result lines (results.h), as it printed them */
	for (int i = 0; i < p->nresults; i++)
		fprintf(out, "%s%s %.10g%s", i ? "" : "# result:     ", p->results[i].name, p->results[i].value,
			i + 1 < p->nresults ? ", " : "\n");
	fprintf(out, "# samples:    %llu, lost %llu (%s)%s\n", (unsigned long long)p->samples,
		(unsigned long long)lost, SHARE(lost, p->samples + lost), p->truncated ? ", file truncated" : "");
	if (p->filters[0]) {
		fprintf(out, "# filters:    %s: %llu samples kept, %llu dropped", p->filters,
			(unsigned long long)profile_kept_samples(p), (unsigned long long)p->filtered_samples);
		if (p->stack_only_samples)
			fprintf(out, " (and %llu stack copies, lent to the samples they belong to)",
				(unsigned long long)p->stack_only_samples);
		uint64_t offset, duration;
		if (profile_time_window(p, &offset, &duration))
			fprintf(out, "; window %.3f-%.3f s of %.3f s", (double)offset / 1e9, (double)(offset + duration) / 1e9,
				(double)(p->span_last - p->span_first) / 1e9);
		fputc('\n', out);
	}
	if (!full)
		print_collectors_compact(p, out);
	for (int c = 0; full && c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->ok)
			print_collector_events(p, c, out);
		else
			fprintf(out, "# collector:  %-8s unavailable: %s\n", ci->name, ci->reason);
	}
	if (full)
		print_unsampled(p, out);
	if (p->unknown_samples || p->bad_samples)
		fprintf(out, "# undecoded:  %llu samples of unknown events, %llu malformed\n",
			(unsigned long long)p->unknown_samples, (unsigned long long)p->bad_samples);
	if (full)
		print_unwind(p, out);
	else
		print_unwind_compact(p, out);
	if (full && p->kernel_symbols[0])
		fprintf(out, "# symbols:    kernel frames %s%s\n", strcmp(p->kernel_symbols, "none") ? "named from " : "left as addresses",
			strcmp(p->kernel_symbols, "none") ? PRINTABLE(p->kernel_symbols) : "");
	for (int i = 0; i < p->nnotes; i++)
		fprintf(out, "# note:       %s\n", PRINTABLE(p->notes[i]));
	if (p->kernel_symbols_problem[0])
		fprintf(out, "# note:       %s\n", PRINTABLE(p->kernel_symbols_problem));
}

static const struct collector_analyzer *analyzer_of(const struct collector_info *ci)
{
	return ci->state && ci->impl ? ci->impl->analyzer : NULL;
}

#define PATH_LABEL_COLUMNS 18
#define PATH_SAMPLES_COLUMNS (1 + 12 + 1 + 7)
#define PATH_FIGURE_COLUMNS 13

/* The path figures collector c shows in the path table. */
static size_t path_figure_count(const struct profile *p, int c)
{
	const struct collector_analyzer *an = analyzer_of(&p->collectors[c]);
	return an && an->path_figure ? an->npath_figures : 0;
}

/*
 * A collector's columns in the path table, or a part of them when they
 * are wider than the width on their own: its samples and share (with
 * samples), and its path figures [first_figure, end_figure).
 */
struct path_part {
	int collector;
	bool samples;
	size_t first_figure, end_figure;
};

static size_t path_part_columns(const struct path_part *part)
{
	return (part->samples ? PATH_SAMPLES_COLUMNS : 0) + PATH_FIGURE_COLUMNS * (part->end_figure - part->first_figure);
}

/* Whether every column of parts [0, nparts) is zero on path: the row is left out (but with --all). */
static bool path_row_empty(const struct profile *p, const struct path_part *parts, size_t nparts, int path)
{
	for (size_t i = 0; i < nparts; i++) {
		const struct collector_info *ci = &p->collectors[parts[i].collector];
		if (parts[i].samples && ci->path_samples[path])
			return false;
		for (size_t f = parts[i].first_figure; f < parts[i].end_figure; f++)
			if (analyzer_of(ci)->path_figure(ci->state, p, path, f) != 0)
				return false;
	}
	return true;
}

/* Whether a collector has nothing in the path table: no samples, every path figure zero. */
static bool path_column_empty(const struct profile *p, int c)
{
	const struct collector_info *ci = &p->collectors[c];
	if (ci->samples)
		return false;
	for (size_t f = 0; f < path_figure_count(p, c); f++)
		for (int path = 0; path < PATH_COUNT; path++)
			if (analyzer_of(ci)->path_figure(ci->state, p, path, f) != 0)
				return false;
	return true;
}

/* The path table for parts [0, nparts). */
static void print_path_block(const struct profile *p, const struct path_part *parts, size_t nparts,
			     const struct view_options *v, FILE *out)
{
	fprintf(out, "\n%s%-*s", term_on(v->color, PAINT_HEADING), PATH_LABEL_COLUMNS, "Path");
	for (size_t i = 0; i < nparts; i++) {
		const struct collector_info *ci = &p->collectors[parts[i].collector];
		if (parts[i].samples)
			fprintf(out, " %12s %7s", ci->name, "%");
		for (size_t f = parts[i].first_figure; f < parts[i].end_figure; f++)
			fprintf(out, " %12s", analyzer_of(ci)->path_figures[f].column);
	}
	fprintf(out, "%s\n", term_off(v->color));
	for (int path = 0; path < PATH_COUNT; path++) {
		if (!view_path_shown(p, path) || (!v->all && path_row_empty(p, parts, nparts, path)))
			continue;
		fprintf(out, "  %s%-16s%s", term_on(v->color, PAINT_PATH), path_name(path), term_off(v->color));
		for (size_t i = 0; i < nparts; i++) {
			const struct collector_info *ci = &p->collectors[parts[i].collector];
			const struct collector_analyzer *an = analyzer_of(ci);
			if (parts[i].samples)
				fprintf(out, " %12llu %7s", (unsigned long long)ci->path_samples[path],
					SHARE(ci->path_samples[path], ci->samples));
			for (size_t f = parts[i].first_figure; f < parts[i].end_figure; f++)
				fprintf(out, " %12.*f", an->path_figures[f].decimals, an->path_figure(ci->state, p, path, f));
		}
		fprintf(out, "\n");
	}
}

/*
 * One row per path, the columns of every open collector; wider than the
 * width, the collectors go into several tables one under the other, each
 * with the path column, and a collector wider than the width on its own
 * has its figures split over several.
 */
static void print_paths(const struct profile *p, const struct view_options *v, FILE *out)
{
	size_t nparts = 0, cap = 0;
	struct path_part *parts = NULL;
	size_t room = v->width > PATH_LABEL_COLUMNS ? v->width - PATH_LABEL_COLUMNS : 0;
	for (int c = 0; c < p->ncollectors; c++) {
		if (!p->collectors[c].ok || (!v->all && path_column_empty(p, c)))
			continue;
		size_t nfigures = path_figure_count(p, c);
		struct path_part part = { .collector = c, .samples = true, .first_figure = 0, .end_figure = nfigures };
		while (v->width && path_part_columns(&part) > room && part.end_figure > part.first_figure)
			part.end_figure--;
		GROW(parts, cap, nparts + 1);
		parts[nparts++] = part;
		while (part.end_figure < nfigures) {
			part = (struct path_part){ .collector = c, .first_figure = part.end_figure, .end_figure = nfigures };
			while (path_part_columns(&part) > room && part.end_figure > part.first_figure + 1)
				part.end_figure--;
			GROW(parts, cap, nparts + 1);
			parts[nparts++] = part;
		}
	}
	if (!nparts) {
		fprintf(out, "\nPath table: no collector has samples (--all shows the empty table)\n");
		return;
	}
	size_t first = 0;
	do {
		size_t used = PATH_LABEL_COLUMNS, end = first;
		for (; end < nparts; end++) {
			size_t cols = path_part_columns(&parts[end]);
			if (v->width && end > first && used + cols > v->width)
				break;
			used += cols;
		}
		print_path_block(p, parts + first, end - first, v, out);
		first = end;
	} while (first < nparts);
	free(parts);
}

/* The function table's name column when the width does not decide it. */
#define FUNCTION_NAME_COLUMNS 40
/* The fewest columns a function's name gets beside its dso; with fewer the dso goes under it. */
#define FUNCTION_NAME_MIN_COLUMNS 20

/* Decimal digits of v. */
static size_t digits(uint64_t v)
{
	size_t n = 1;
	for (; v >= 10; v /= 10)
		n++;
	return n;
}

/*
 * Top functions: self, %, total, %, function, dso.  Within a width the
 * counts take the digits they need, the name gets what the widest dso leaves
 * (FUNCTION_NAME_MIN_COLUMNS at least, and every name whole where the whole
 * row's room holds it: else the dso goes on a line of its own under the
 * name), and where even that leaves the name too little the counts give way
 * to their shares.
 */
static void print_functions(const struct profile *p, int c, const struct report_options *o, FILE *out)
{
	const struct collector_info *ci = &p->collectors[c];
	const struct view_options *v = &o->view;
	struct function_row *rows;
	size_t n = view_functions(p, c, o->sort, &rows);
	fprintf(out, "\n%sTop functions, %s samples (%s)%s\n", term_on(v->color, PAINT_HEADING), ci->name,
		o->sort == SORT_TOTAL ? "by total" : o->sort == SORT_NAME ? "by name" : "by self", term_off(v->color));
	char buf[256], source[256], cut[320], cut_where[340];
	size_t shown = n < o->view.top ? n : o->view.top;
	char (*where)[320] = xcalloc(shown ? shown : 1, sizeof(*where));
	size_t widest_where = 3, widest_name = 8, most = 0; /* "dso", "function" */
	for (size_t i = 0; i < shown; i++) {
		const struct frame *f = &p->stacks.frames[rows[i].frame];
		const char *srcline = frame_srcline(f, source, sizeof(source));
		snprintf(where[i], sizeof(where[i]), "%s%s%s%s", PRINTABLE(dso_short_name(f->dso)), srcline ? "  " : "",
			 srcline ? srcline : "", f->inlined ? " (inlined)" : "");
		if (term_columns(where[i]) > widest_where)
			widest_where = term_columns(where[i]);
		size_t name = term_columns(frame_label(f, buf, sizeof(buf)));
		if (name > widest_name)
			widest_name = name;
		if (rows[i].total > most)
			most = rows[i].total;
	}
	/* the columns before the name: "  self %  total %  " or, with no room for the counts, "  self% total%  " */
	size_t count_cols = v->width ? (digits(most) > 5 ? digits(most) : 5) : 10, name_cols = FUNCTION_NAME_COLUMNS;
	size_t prefix = 2 + count_cols + 1 + 7 + 1 + count_cols + 1 + 7 + 2, where_cols = 0;
	bool counts = true, where_below = false;
	if (v->width) {
		if (v->width < prefix + FUNCTION_NAME_MIN_COLUMNS) {
			counts = false;
			prefix = 2 + 7 + 1 + 7 + 2;
		}
		size_t room = v->width > prefix + 1 ? v->width - prefix - 1 : 1;
		/*
		 * The dso goes below the name when the name would have too little
		 * room beside it, or when the longest name is cut beside it and
		 * whole below it (`_raw_spin_unlock_irqrestore` at 60 columns).
		 */
		where_below = room < widest_where + FUNCTION_NAME_MIN_COLUMNS ||
			      (widest_name + widest_where > room && widest_name <= room + 1);
		name_cols = where_below ? room + 1 : room - widest_where;
		if (name_cols > widest_name)
			name_cols = widest_name;
		where_cols = where_below ? room + 1 : room - name_cols;
	}
	if (counts && where_below)
		fprintf(out, "  %*s %7s %*s %7s  %s\n", (int)count_cols, "self", "%", (int)count_cols, "total", "%",
			"function / dso");
	else if (counts)
		fprintf(out, "  %*s %7s %*s %7s  %-*s %s\n", (int)count_cols, "self", "%", (int)count_cols, "total", "%",
			(int)name_cols, "function", "dso");
	else
		fprintf(out, "  %7s %7s  %s\n", "self %", "total %", "function / dso");
	for (size_t i = 0; i < shown; i++) {
		const struct frame *f = &p->stacks.frames[rows[i].frame];
		const char *label = frame_label(f, buf, sizeof(buf)), *shown_where = where[i];
		if (v->width) {
			label = term_cut(label, name_cols, cut, sizeof(cut));
			shown_where = term_cut(where[i], where_cols, cut_where, sizeof(cut_where));
		}
		size_t pad = name_cols > term_columns(label) ? name_cols - term_columns(label) : 0;
		if (counts)
			fprintf(out, "  %*llu %7s %*llu %7s  ", (int)count_cols, (unsigned long long)rows[i].self,
				SHARE(rows[i].self, ci->samples), (int)count_cols, (unsigned long long)rows[i].total,
				SHARE(rows[i].total, ci->samples));
		else
			fprintf(out, "  %7s %7s  ", SHARE(rows[i].self, ci->samples), SHARE(rows[i].total, ci->samples));
		fprintf(out, "%s%s%s", term_on(v->color, view_frame_paint(f)), label, term_off(v->color));
		if (where_below)
			fprintf(out, "\n%*s", (int)prefix, "");
		else
			fprintf(out, "%*s ", (int)pad, "");
		fprintf(out, "%s%s%s\n", term_on(v->color, PAINT_DIM), shown_where, term_off(v->color));
	}
	free(where);
	free(rows);
}

static void print_stacks(const struct profile *p, int c, const struct report_options *o, FILE *out)
{
	const struct collector_info *ci = &p->collectors[c];
	const struct view_options *v = &o->view;
	fprintf(out, "\n%sTop stacks per path, %s samples (leaf first)%s\n", term_on(v->color, PAINT_HEADING), ci->name,
		term_off(v->color));
	for (int path = 0; path < PATH_COUNT; path++) {
		if (!ci->path_samples[path])
			continue;
		uint32_t *ids;
		size_t n = view_stacks(p, c, path, &ids);
		fprintf(out, "\n  %s%s%s: %llu samples (%s), %zu distinct stacks\n", term_on(v->color, PAINT_PATH),
			path_name(path), term_off(v->color), (unsigned long long)ci->path_samples[path],
			SHARE(ci->path_samples[path], ci->samples), n);
		for (size_t i = 0; i < n && i < o->view.stacks_per_path; i++) {
			const struct stack *s = &p->stacks.stacks[ids[i]];
			fprintf(out, "    %llu samples (%s of %s)\n", (unsigned long long)s->count,
				SHARE(s->count, ci->path_samples[path]), path_name(path));
			view_text_stack(p, ids[i], &o->view, out);
		}
		free(ids);
	}
}

/*
 * The header's lines ("# key:  value"), each word-wrapped within the width
 * with its continuation lines under the value, still comments.
 */
static void print_header_fitted(const struct profile *p, const struct view_options *v, bool full, FILE *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		print_header(p, full, out);
		return;
	}
	print_header(p, full, mem);
	fclose(mem);
	for (char *line = text; *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (!v->width || term_columns(line) <= v->width) {
			fprintf(out, "%s\n", line);
		} else {
			/* "# key:       " is 14 columns: the value's column */
			size_t col = 0;
			for (char *w = line; *w;) {
				size_t gap = strspn(w, " "), word = strcspn(w + gap, " ");
				if (!word)
					break;
				char saved = w[gap + word];
				w[gap + word] = '\0';
				size_t wcols = term_columns(w + gap);
				if (col > 14 && col + gap + wcols > v->width) {
					fprintf(out, "\n#%13s%s", "", w + gap);
					col = 14 + wcols;
				} else {
					fputs(w, out);
					col += gap + wcols;
				}
				w[gap + word] = saved;
				w += gap + word;
			}
			fputc('\n', out);
		}
		if (!end)
			break;
		line = end + 1;
	}
	free(text);
}

/* The collectors in the order their sections print: the highest-ranked findings first, else as listed. */
static void section_order(const struct profile *p, const struct report_summary *sum, int *order)
{
	for (int c = 0; c < p->ncollectors; c++) {
		int k = c;
		while (k > 0 && sum->section_rank[order[k - 1]] < sum->section_rank[c]) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = c;
	}
}

void report_text(const struct profile *p, const struct report_options *o, FILE *out)
{
	struct report_summary sum;
	report_summary_collect(p, &sum);
	report_summary_text(p, &sum, o, out);
	fputc('\n', out);
	print_header_fitted(p, &o->view, o->full_header, out);
	print_paths(p, &o->view, out);
	int order[PROFILE_MAX_COLLECTORS];
	section_order(p, &sum, order);
	for (int k = 0; k < p->ncollectors; k++) {
		const struct collector_info *ci = &p->collectors[order[k]];
		if (ci->state && ci->impl->analyzer->text)
			ci->impl->analyzer->text(ci->state, p, &o->view, out);
	}
	report_summary_free(&sum);
	if (p->timeline)
		report_timeline_text(p, &o->view, out);
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_analyzer *an = analyzer_of(&p->collectors[c]);
		if (!p->collectors[c].samples || (an && !an->show_stacks))
			continue;
		print_functions(p, c, o, out);
		print_stacks(p, c, o, out);
	}
}
