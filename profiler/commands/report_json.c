/*
 * report_json.c: `sigprof report --json`, one object documented in
 * docs/report-json.md.  Top-level keys are added by later collectors
 * (signals, futexes, sched, cachelines) beside these; existing keys keep
 * their meaning.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/base/json.h"
#include "sigprof/commands/report.h"

static void write_collectors(struct json_writer *w, const struct profile *p)
{
	json_array_begin(w, "collectors");
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		json_object_begin(w, NULL);
		json_string(w, "name", ci->name);
		json_string(w, "event", ci->event[0] ? ci->event : NULL);
		json_string(w, "status", ci->ok ? "ok" : "unavailable");
		if (!ci->ok)
			json_string(w, "reason", ci->reason);
		json_u64(w, "samples", ci->samples);
		struct collector_event *events;
		size_t n = profile_collector_events(p, c, &events);
		json_array_begin(w, "events");
		for (size_t e = 0; e < n; e++) {
			json_object_begin(w, NULL);
			json_string(w, "name", events[e].name);
			json_u64(w, "samples", events[e].samples);
			json_u64(w, "stack_copies", events[e].stack_copies);
			json_end(w);
		}
		json_end(w);
		free(events);
		json_end(w);
	}
	json_end(w);
}

static void write_unwind(struct json_writer *w, const struct profile *p)
{
	const struct unwind_counts *u = &p->unwind;
	json_object_begin(w, "unwind");
	json_u64(w, "samples", u->samples);
	json_u64(w, "fp_chains", u->fp_chains);
	json_u64(w, "spliced", u->spliced);
	json_u64(w, "joined", u->joined);
	json_u64(w, "lent", u->lent);
	json_u64(w, "completed", u->completed);
	json_u64(w, "complete", u->complete);
	json_object_begin(w, "failures");
	for (int f = 1; f < UNWIND_FAILURE_COUNT; f++)
		if (u->failures[f])
			json_u64(w, unwind_failure_key(f), u->failures[f]);
	json_end(w);
	json_u64(w, "ends_in_unknown", u->ends_in_unknown);
	json_u64(w, "ends_in_eh_frame_name", u->ends_in_eh_frame_name);
	json_double(w, "ends_in_unknown_percent", u->samples ? 100.0 * (double)u->ends_in_unknown / (double)u->samples : 0.0,
		    3);
	json_end(w);
}

/* "filters": what --pid, --tid, --comm, --dso, --time, --percent-limit kept (docs/filters.md); null without. */
static void write_filters(struct json_writer *w, const struct profile *p)
{
	if (!p->filters[0]) {
		json_null(w, "filters");
		return;
	}
	json_object_begin(w, "filters");
	json_string(w, "options", p->filters);
	json_u64(w, "samples_kept", profile_kept_samples(p));
	json_u64(w, "samples_dropped", p->filtered_samples);
	json_u64(w, "stack_copies", p->stack_only_samples);
	uint64_t offset, duration;
	if (profile_time_window(p, &offset, &duration)) {
		json_double(w, "window_start_s", (double)offset / 1e9, 6);
		json_double(w, "window_end_s", (double)(offset + duration) / 1e9, 6);
		json_double(w, "recording_span_s", (double)(p->span_last - p->span_first) / 1e9, 6);
	}
	json_end(w);
}

static void write_meta(struct json_writer *w, const struct profile *p)
{
	json_object_begin(w, "meta");
	json_string(w, "file", p->file);
	json_array_begin(w, "command");
	for (int i = 0; i < p->argc; i++)
		json_string(w, NULL, p->argv[i]);
	json_end(w);
	json_string(w, "target", p->target);
	if (p->followed[0])
		json_string(w, "followed", p->followed);
	else
		json_null(w, "followed");
	if (p->workload_pid)
		json_u64(w, "workload_pid", p->workload_pid);
	else
		json_null(w, "workload_pid");
	write_filters(w, p);
	json_string(w, "hostname", p->hostname);
	json_string(w, "kernel", p->kernel);
	json_string(w, "arch", p->arch);
	json_i64(w, "ncpus", p->ncpus);
	json_u64(w, "start_time_ns", p->start_realtime_ns);
	json_double(w, "duration_s", profile_duration_s(p), 3);
	int status = profile_exit_status(p);
	bool switched = p->has_finish && (p->finish.flags & SP_FINISH_SWITCHED);
	if (status >= 0 && !switched)
		json_i64(w, "exit_status", status);
	else
		json_null(w, "exit_status");
	json_bool(w, "interrupted", p->has_finish && (p->finish.flags & SP_FINISH_INTERRUPTED));
	json_bool(w, "switched", switched);
	if (p->piece)
		json_u64(w, "piece", p->piece);
	else
		json_null(w, "piece");
	json_u64(w, "samples", p->samples);
	double share;
	json_u64(w, "lost", profile_lost(p, &share));
	json_double(w, "lost_percent", share, 3);
	json_bool(w, "truncated", p->truncated);
	json_u64(w, "unsampled_hits", profile_unsampled_hits(p));
	json_object_begin(w, "unsampled_hits_by_event");
	for (size_t e = 0; e < p->events.count; e++) {
		uint64_t n = profile_unsampled_hits_of(p, e);
		if (n)
			json_u64(w, p->events.events[e].name, n);
	}
	json_end(w);
	json_u64(w, "throttle_records", p->throttle_records);
	json_string(w, "call_graph", p->call_graph);
	json_string(w, "sigprof_version", p->version);
	json_u64(w, "unknown_event_samples", p->unknown_samples);
	json_u64(w, "malformed_samples", p->bad_samples);
	json_string(w, "kernel_symbols", p->kernel_symbols[0] ? p->kernel_symbols : NULL);
	json_array_begin(w, "notes");
	for (int i = 0; i < p->nnotes; i++)
		json_string(w, NULL, p->notes[i]);
	if (p->kernel_symbols_problem[0])
		json_string(w, NULL, p->kernel_symbols_problem);
	if (p->problem[0])
		json_string(w, NULL, p->problem);
	json_end(w);
	write_collectors(w, p);
	write_unwind(w, p);
	json_end(w);
}

static void write_paths(struct json_writer *w, const struct profile *p)
{
	json_array_begin(w, "paths");
	for (int path = 0; path < PATH_COUNT; path++) {
		if (!view_path_shown(p, path))
			continue;
		json_object_begin(w, NULL);
		json_string(w, "path", path_name(path));
		json_object_begin(w, "samples");
		for (int c = 0; c < p->ncollectors; c++)
			if (p->collectors[c].ok)
				json_u64(w, p->collectors[c].name, p->collectors[c].path_samples[path]);
		json_end(w);
		for (int c = 0; c < p->ncollectors; c++) {
			const struct collector_info *ci = &p->collectors[c];
			const struct collector_analyzer *an = ci->state && ci->impl ? ci->impl->analyzer : NULL;
			for (size_t f = 0; an && an->path_figure && f < an->npath_figures; f++) {
				char key[96];
				path_figure_key(ci->name, &an->path_figures[f], key, sizeof(key));
				double v = an->path_figure(ci->state, p, path, f);
				if (an->path_figures[f].decimals)
					json_double(w, key, v, an->path_figures[f].decimals);
				else
					json_u64(w, key, (uint64_t)v);
			}
		}
		json_end(w);
	}
	json_end(w);
}

/*
 * "summary": the text report's first screen as data (report_summary.c):
 * the recorder's share of the cpu samples, the findings ranked, the
 * caveats.
 */
static void write_summary(struct json_writer *w, const struct profile *p)
{
	struct report_summary sum;
	report_summary_collect(p, &sum);
	json_object_begin(w, "summary");
	int cpu = profile_collector(p, "cpu");
	if (cpu >= 0 && p->collectors[cpu].samples)
		json_double(w, "recorder_percent",
			    100.0 * (double)p->collectors[cpu].path_samples[PATH_RECORDER] / (double)p->collectors[cpu].samples,
			    2);
	else
		json_null(w, "recorder_percent");
	json_array_begin(w, "findings");
	for (size_t i = 0; i < sum.findings.count; i++) {
		const struct finding *f = &sum.findings.items[i];
		json_object_begin(w, NULL);
		if (f->share >= 0)
			json_double(w, "share_percent", 100.0 * f->share, 2);
		else
			json_null(w, "share_percent");
		json_string(w, "text", f->text);
		json_string(w, "next", f->next);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "caveats");
	for (size_t i = 0; i < sum.findings.ncaveats; i++)
		json_string(w, NULL, sum.findings.caveats[i]);
	json_end(w);
	json_end(w);
	report_summary_free(&sum);
}

static void write_stacks(struct json_writer *w, const struct profile *p, const struct report_options *o)
{
	json_array_begin(w, "stacks");
	for (int c = 0; c < p->ncollectors; c++) {
		for (int path = 0; path < PATH_COUNT; path++) {
			uint32_t *ids;
			size_t n = view_stacks(p, c, path, &ids);
			if (o->view.stacks_limit_given && n > o->view.stacks_per_path)
				n = o->view.stacks_per_path;
			for (size_t i = 0; i < n; i++) {
				const struct stack *s = &p->stacks.stacks[ids[i]];
				json_object_begin(w, NULL);
				json_string(w, "collector", p->collectors[c].name);
				json_string(w, "path", path_name(s->path));
				json_u64(w, "count", s->count);
				json_u64(w, "weight", s->weight);
				view_json_stack(w, p, ids[i]);
				json_end(w);
			}
			free(ids);
		}
	}
	json_end(w);
}

static void write_functions(struct json_writer *w, const struct profile *p, const struct report_options *o)
{
	json_array_begin(w, "functions");
	char buf[256];
	for (int c = 0; c < p->ncollectors; c++) {
		struct function_row *rows;
		size_t n = view_functions(p, c, o->sort, &rows);
		for (size_t i = 0; i < n && i < o->view.top; i++) {
			const struct frame *f = &p->stacks.frames[rows[i].frame];
			json_object_begin(w, NULL);
			json_string(w, "collector", p->collectors[c].name);
			json_string(w, "sym", frame_label(f, buf, sizeof(buf)));
			json_string(w, "dso", f->dso);
			view_json_frame_source(w, f);
			json_u64(w, "self", rows[i].self);
			json_u64(w, "total", rows[i].total);
			json_end(w);
		}
		free(rows);
	}
	json_end(w);
}

void report_json(const struct profile *p, const struct report_options *o, FILE *out)
{
	struct json_writer w;
	json_init(&w, out);
	report_json_write(&w, p, o);
}

void report_json_write(struct json_writer *w, const struct profile *p, const struct report_options *o)
{
	json_object_begin(w, NULL);
	json_u64(w, "version", 1);
	write_meta(w, p);
	write_paths(w, p);
	write_summary(w, p);
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_info *ci = &p->collectors[c];
		if (ci->state && ci->impl->analyzer->json)
			ci->impl->analyzer->json(ci->state, p, &o->view, w);
	}
	write_functions(w, p, o);
	write_stacks(w, p, o);
	if (o->format == REPORT_HTML)
		json_null(w, "timeline"); /* the page has its own, summarized (report_html.c) */
	else
		report_timeline_json(w, p);
	json_finish(w);
}
