/*
 * report_text.c: the terminal report.
 *
 *   header      what ran, for how long, samples and lost records
 *   paths       one row per path, a samples column and a share per collector
 *   functions   the top functions by self samples (or --sort), per collector
 *   stacks      the top stacks of each path that has samples, leaf first
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sigprof/collector.h"
#include "sigprof/report.h"
#include "sigprof/util.h"

/* How many DWARF samples unwound whole, and why the others stopped. */
static void print_unwind(const struct profile *p, FILE *out)
{
	const struct unwind_counts *u = &p->unwind;
	if (!u->samples)
		return;
	fprintf(out, "# unwind:     %llu samples with user stacks, %llu unwound to the outermost frame (%s)",
		(unsigned long long)u->samples, (unsigned long long)u->complete, SHARE(u->complete, u->samples));
	const char *sep = "; stopped early: ";
	for (int f = 1; f < UNWIND_FAILURE_COUNT; f++) {
		if (!u->failures[f])
			continue;
		fprintf(out, "%s%s %llu", sep, unwind_failure_key(f), (unsigned long long)u->failures[f]);
		sep = ", ";
	}
	fprintf(out, "; %s end in an unnamed frame\n", SHARE(u->ends_in_unknown, u->samples));
	if (u->failures[UNWIND_STACK_END])
		fprintf(out, "# note:       %llu user stacks are deeper than their copy: record with a larger "
			     "--call-graph dwarf,SIZE (this recording: %s)\n",
			(unsigned long long)u->failures[UNWIND_STACK_END], p->call_graph[0] ? p->call_graph : "?");
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
				silent++;
				continue;
			}
			fprintf(out, "%s%s", shown++ ? " + " : "", events[e].name);
			if (with_samples > 1) /* one alone has the collector's samples */
				fprintf(out, " %llu", (unsigned long long)events[e].samples);
		}
		fprintf(out, shown > 1 ? " = " : shown ? ", " : "%zu events, ", n);
	}
	fprintf(out, "%llu samples", (unsigned long long)ci->samples);
	if (shown && silent)
		fprintf(out, "; %zu more event%s without samples", silent, silent == 1 ? "" : "s");
	fputc('\n', out);
	free(events);
}

static void print_header(const struct profile *p, FILE *out)
{
	fprintf(out, "# sigprof report of %s\n", p->file);
	if (p->argc || !p->target[0]) {
		fprintf(out, "# command:    ");
		for (int i = 0; i < p->argc; i++)
			fprintf(out, "%s%s", i ? " " : "", p->argv[i]);
		fprintf(out, "%s\n", p->target[0] ? " (the window)" : "");
	}
	if (p->target[0])
		fprintf(out, "# target:     %s\n", p->target);
	char when[64] = "?";
	time_t t = (time_t)(p->start_realtime_ns / 1000000000ULL);
	struct tm tm;
	if (p->start_realtime_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(out, "# recorded:   %s on %s (Linux %s, %s, %d CPUs)\n", when, p->hostname, p->kernel, p->arch,
		p->ncpus);
	int status = profile_exit_status(p);
	if (status >= 0)
		fprintf(out, "# duration:   %.3f s, exit status %d%s\n", profile_duration_s(p), status,
			p->finish.flags & SP_FINISH_INTERRUPTED ? " (interrupted)" : "");
	else if (status == PROFILE_EXIT_UNKNOWN)
		fprintf(out, "# duration:   %.3f s, exit status unknown (wait status %#x)\n", profile_duration_s(p),
			(unsigned)p->finish.wait_status);
	else
		fprintf(out, "# duration:   %.3f s between first and last sample (recording cut short)\n",
			profile_duration_s(p));
	uint64_t lost = profile_lost(p, NULL);
	fprintf(out, "# samples:    %llu, lost %llu (%s)%s\n", (unsigned long long)p->samples,
		(unsigned long long)lost, SHARE(lost, p->samples + lost), p->truncated ? ", file truncated" : "");
	if (p->filters[0]) {
		fprintf(out, "# filters:    %s: %llu samples kept, %llu dropped", p->filters,
			(unsigned long long)(p->samples - p->filtered_samples - p->unknown_samples - p->bad_samples),
			(unsigned long long)p->filtered_samples);
		if (p->filter && p->filter->has_time && p->span_last > p->span_first)
			fprintf(out, "; window %.3f-%.3f s of %.3f s", (double)(p->window_start - p->span_first) / 1e9,
				(double)((p->window_end < p->span_last ? p->window_end : p->span_last) - p->span_first) / 1e9,
				(double)(p->span_last - p->span_first) / 1e9);
		fputc('\n', out);
	}
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->ok)
			print_collector_events(p, c, out);
		else
			fprintf(out, "# collector:  %-8s unavailable: %s\n", ci->name, ci->reason);
	}
	uint64_t unsampled = profile_unsampled_hits(p);
	if (unsampled || p->throttle_records)
		fprintf(out, "# unsampled:  %llu tracepoint hits counted by the kernel have no sample (%llu throttle "
			     "records; the kernel drops samples without a LOST record while it throttles an event "
			     "firing faster than kernel.perf_event_max_sample_rate); the totals stay exact\n",
			(unsigned long long)unsampled, (unsigned long long)p->throttle_records);
	if (p->unknown_samples || p->bad_samples)
		fprintf(out, "# undecoded:  %llu samples of unknown events, %llu malformed\n",
			(unsigned long long)p->unknown_samples, (unsigned long long)p->bad_samples);
	print_unwind(p, out);
	for (int i = 0; i < p->nnotes; i++)
		fprintf(out, "# note:       %s\n", p->notes[i]);
	if (p->kernel_symbols_problem[0])
		fprintf(out, "# note:       %s\n", p->kernel_symbols_problem);
}

static const struct collector_analyzer *analyzer_of(const struct collector_info *ci)
{
	return ci->state && ci->impl ? ci->impl->analyzer : NULL;
}

static void print_paths(const struct profile *p, FILE *out)
{
	fprintf(out, "\n%-18s", "Path");
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (!ci->ok)
			continue;
		fprintf(out, " %12s %7s", ci->name, "%");
		const struct collector_analyzer *an = analyzer_of(ci);
		for (size_t f = 0; an && an->path_figure && f < an->npath_figures; f++)
			fprintf(out, " %12s", an->path_figures[f].column);
	}
	fprintf(out, "\n");
	for (int path = 0; path < PATH_COUNT; path++) {
		if (!view_path_shown(p, path))
			continue;
		fprintf(out, "  %-16s", path_name(path));
		for (int c = 0; c < p->ncollectors; c++) {
			const struct collector_info *ci = &p->collectors[c];
			if (!ci->ok)
				continue;
			fprintf(out, " %12llu %7s", (unsigned long long)ci->path_samples[path],
				SHARE(ci->path_samples[path], ci->samples));
			const struct collector_analyzer *an = analyzer_of(ci);
			for (size_t f = 0; an && an->path_figure && f < an->npath_figures; f++)
				fprintf(out, " %12.*f", an->path_figures[f].decimals,
					an->path_figure(ci->state, p, path, f));
		}
		fprintf(out, "\n");
	}
}

static void print_functions(const struct profile *p, int c, const struct report_options *o, FILE *out)
{
	const struct collector_info *ci = &p->collectors[c];
	struct function_row *rows;
	size_t n = view_functions(p, c, o->sort, &rows);
	fprintf(out, "\nTop functions, %s samples (%s)\n", ci->name,
		o->sort == SORT_TOTAL ? "by total" : o->sort == SORT_NAME ? "by name" : "by self");
	fprintf(out, "  %10s %7s %10s %7s  %-40s %s\n", "self", "%", "total", "%", "function", "dso");
	char buf[256], source[256];
	for (size_t i = 0; i < n && i < o->view.top; i++) {
		const struct frame *f = &p->stacks.frames[rows[i].frame];
		const char *srcline = frame_srcline(f, source, sizeof(source));
		fprintf(out, "  %10llu %7s %10llu %7s  %-40s %s%s%s%s\n", (unsigned long long)rows[i].self,
			SHARE(rows[i].self, ci->samples), (unsigned long long)rows[i].total,
			SHARE(rows[i].total, ci->samples), frame_label(f, buf, sizeof(buf)), dso_short_name(f->dso),
			srcline ? "  " : "", srcline ? srcline : "", f->inlined ? " (inlined)" : "");
	}
	free(rows);
}

static void print_stacks(const struct profile *p, int c, const struct report_options *o, FILE *out)
{
	const struct collector_info *ci = &p->collectors[c];
	fprintf(out, "\nTop stacks per path, %s samples (leaf first)\n", ci->name);
	for (int path = 0; path < PATH_COUNT; path++) {
		if (!ci->path_samples[path])
			continue;
		uint32_t *ids;
		size_t n = view_stacks(p, c, path, &ids);
		fprintf(out, "\n  %s: %llu samples (%s), %zu distinct stacks\n", path_name(path),
			(unsigned long long)ci->path_samples[path], SHARE(ci->path_samples[path], ci->samples), n);
		for (size_t i = 0; i < n && i < o->view.stacks_per_path; i++) {
			const struct stack *s = &p->stacks.stacks[ids[i]];
			fprintf(out, "    %llu samples (%s of %s)\n", (unsigned long long)s->count,
				SHARE(s->count, ci->path_samples[path]), path_name(path));
			view_text_stack(p, ids[i], o->view.max_frames, out);
		}
		free(ids);
	}
}

void report_text(const struct profile *p, const struct report_options *o, FILE *out)
{
	print_header(p, out);
	print_paths(p, out);
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->state && ci->impl->analyzer->text)
			ci->impl->analyzer->text(ci->state, p, &o->view, out);
	}
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_analyzer *an = analyzer_of(&p->collectors[c]);
		if (!p->collectors[c].samples || (an && !an->show_stacks))
			continue;
		print_functions(p, c, o, out);
		print_stacks(p, c, o, out);
	}
}
