/*
 * report_summary.c: the first screen of the text report (docs/report-summary.md).
 *
 * What ran and for how long, what recording it cost (the recorder path's
 * share of the cpu samples, a warning line and cheaper options when it is
 * large enough to distort the figures), where the cpu time went by path,
 * then the findings ranked by the share of the workload's time they
 * concern, each with where to look next, and the caveats that change how
 * to read the figures, once each.  It fits SUMMARY_ROWS rows of the width:
 * the findings that do not fit are counted on the last line.
 *
 * The findings come from the collectors' `findings` hooks (collector.h,
 * view/findings.h) and from what the report itself knows (the paths, the
 * unwinder's counts, lost records); the summary never reaches into a
 * collector.  It also says in which order the sections follow: the
 * collectors whose findings rank highest first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/term.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/report.h"
#include "sigprof/model/collector.h"
#include "sigprof/view/findings.h"

/* The rows of an 80x24 terminal less the prompt's. */
#define SUMMARY_ROWS 23
/* The recorder's share of the cpu samples above which the figures are distorted enough to say so. */
#define RECORDER_WARN_SHARE 0.10
/* The share of user stacks cut short above which the summary says so. */
#define STACKS_CUT_SHARE 0.01
/* Paths below this share of the cpu samples are left out of the cpu line. */
#define CPU_LINE_FLOOR 0.005

/* Why the unwinder stopped, in words, and what to do about it (a caveat line). */
static const char *const stop_reasons[UNWIND_FAILURE_COUNT] = {
	[UNWIND_NO_MAPPING] = "an address no mapping covers (JIT code, or the mapping records were lost)",
	[UNWIND_NO_FILE] = "a file that cannot be read (deleted, anonymous code)",
	[UNWIND_NO_UNWIND_INFO] = "code without unwind tables (hand-written assembly, stripped .eh_frame)",
	[UNWIND_STACK_END] = "the end of the stack copy: record with a larger --call-graph dwarf,SIZE",
	[UNWIND_BAD_MEMORY] = "memory neither in the stack copy nor in a file",
	[UNWIND_SIGNAL_STACK] = "an alternate signal stack",
	[UNWIND_BAD_FRAME] = "a frame libunwind rejected",
	[UNWIND_TOO_DEEP] = "more frames than sigprof follows",
	[UNWIND_UNSUPPORTED] = "32-bit code",
	[UNWIND_JOINED_CUT] = "a delivery's stack that itself stopped early",
};

/* The cpu collector's index, when it has samples; -1 otherwise. */
static int cpu_collector(const struct profile *p)
{
	int c = profile_collector(p, "cpu");
	return c >= 0 && p->collectors[c].ok && p->collectors[c].samples ? c : -1;
}

/* A path finding's share: its paths' cpu samples over the workload's (the recorder's left out). */
static double paths_share(const struct profile *p, int cpu, unsigned paths)
{
	if (cpu < 0)
		return FINDING_SHARE_UNKNOWN;
	const struct collector_info *ci = &p->collectors[cpu];
	uint64_t workload = ci->samples - ci->path_samples[PATH_RECORDER], on = 0;
	for (int path = 0; path < PATH_COUNT; path++)
		if (path != PATH_RECORDER && (paths & FINDING_PATH(path)))
			on += ci->path_samples[path];
	return workload ? (double)on / (double)workload : FINDING_SHARE_UNKNOWN;
}

/*
 * A path-time finding's share: its time on each path, at most the path's
 * cpu time (its samples at the collector's mean period), over the
 * workload's cpu time (the recorder's left out).
 */
static double path_time_share(const struct profile *p, int cpu, const uint64_t *ns)
{
	if (cpu < 0)
		return FINDING_SHARE_UNKNOWN;
	const struct collector_info *ci = &p->collectors[cpu];
	uint64_t workload = ci->samples - ci->path_samples[PATH_RECORDER];
	if (!workload || !ci->weight)
		return FINDING_SHARE_UNKNOWN;
	double period = (double)ci->weight / (double)ci->samples, on = 0;
	for (int path = 0; path < PATH_COUNT; path++)
		if (path != PATH_RECORDER)
			on += fmin((double)ns[path], period * (double)ci->path_samples[path]);
	return on / (period * (double)workload);
}

/* The report's own caveats: stacks cut, records lost. */
static void report_caveats(const struct profile *p, struct findings *f)
{
	const struct unwind_counts *u = &p->unwind;
	int worst = 0;
	uint64_t cut = 0;
	for (int r = 1; r < UNWIND_FAILURE_COUNT; r++) {
		cut += u->failures[r];
		if (u->failures[r] > u->failures[worst] || !worst)
			worst = u->failures[r] ? r : worst;
	}
	if (u->samples && worst && (double)cut >= STACKS_CUT_SHARE * (double)u->samples)
		findings_caveat(f, "stacks: %.0f%% of the user stacks stop before main, most at %s", 100.0 * (double)cut /
				(double)u->samples, stop_reasons[worst] ? stop_reasons[worst] : unwind_failure_key((enum unwind_failure)worst));
	double share;
	uint64_t lost = profile_lost(p, &share);
	if (lost)
		findings_caveat(f, "%llu records lost (%s): the per-event figures undercount; record with a larger -m or "
				   "fewer events", (unsigned long long)lost, SHARE(lost, p->samples + lost));
}

void report_summary_collect(const struct profile *p, struct report_summary *s)
{
	memset(s, 0, sizeof(*s));
	int cpu = cpu_collector(p);
	for (int c = 0; c < p->ncollectors && c < PROFILE_MAX_COLLECTORS; c++) {
		const struct collector_info *ci = &p->collectors[c];
		s->section_rank[c] = FINDING_SHARE_UNKNOWN - 1; /* no finding: after those with one */
		if (!ci->state || !ci->impl || !ci->impl->analyzer || !ci->impl->analyzer->findings)
			continue;
		size_t before = s->findings.count;
		ci->impl->analyzer->findings(ci->state, p, &s->findings);
		for (size_t i = before; i < s->findings.count; i++) {
			struct finding *fi = &s->findings.items[i];
			if (fi->path_ns) {
				fi->share = path_time_share(p, cpu, fi->path_ns);
			} else if (fi->paths) {
				double on = paths_share(p, cpu, fi->paths);
				fi->share = on >= 0 ? on * fi->share : FINDING_SHARE_UNKNOWN;
			}
			if (fi->share > s->section_rank[c])
				s->section_rank[c] = fi->share;
		}
	}
	if (p->timeline)
		report_timeline_findings(p, &s->findings);
	report_caveats(p, &s->findings);
	findings_sort(&s->findings);
}

void report_summary_free(struct report_summary *s)
{
	findings_free(&s->findings);
}

/* "perf bench futex hash -r 2 -t 2", control characters escaped (the recording's words may hold anything). */
static void command_line(const struct profile *p, struct strbuf *sb)
{
	for (int i = 0; i < p->argc; i++) {
		if (i)
			sb_addstr(sb, " ");
		sb_add_printable(sb, p->argv[i]);
	}
	if (!p->argc && p->target[0])
		sb_add_printable(sb, p->target);
}

/* "2.295 s, exit 0, on vm (2 CPUs, Linux 6.18.44); 111 965 samples, 0 lost" */
static void run_line(const struct profile *p, struct strbuf *sb)
{
	char count[32];
	int status = profile_exit_status(p);
	sb_addf(sb, "%.3f s", profile_duration_s(p));
	if (p->has_finish && (p->finish.flags & SP_FINISH_SWITCHED))
		sb_addstr(sb, " (one piece: the workload ran on)");
	else if (status >= 0 && p->argc)
		sb_addf(sb, ", exit %d%s", status, p->finish.flags & SP_FINISH_INTERRUPTED ? " (interrupted)" : "");
	else if (status == -1)
		sb_addstr(sb, " (recording cut short)");
	/* the kernel's version without its local suffix ("6.18.44-fc-v1045"): the header has it whole */
	sb_addf(sb, ", on %s (%d CPUs, Linux %.*s); %s samples", p->hostname, p->ncpus, (int)strcspn(p->kernel, "-+"),
		p->kernel, findings_count(p->samples, count, sizeof(count)));
	uint64_t lost = profile_lost(p, NULL);
	sb_addf(sb, ", %s lost", findings_count(lost, count, sizeof(count)));
	if (p->filters[0])
		sb_addf(sb, "; filters %s", p->filters);
}

/*
 * The cheaper options for this recording: the busiest collectors by
 * samples, each with the option that records less of it.
 */
static void cheaper_options(const struct profile *p, struct strbuf *sb)
{
	struct strbuf keep = { 0 };
	int cpu = profile_collector(p, "cpu"), futex = profile_collector(p, "futex");
	uint64_t most = 0;
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].samples > most)
			most = p->collectors[c].samples;
	/* the collectors worth keeping: those with at least 1% of the busiest one's samples */
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].ok && p->collectors[c].samples && p->collectors[c].samples * 100 >= most)
			sb_addf(&keep, "%s%s", keep.len ? "," : "", p->collectors[c].name);
	sb_addf(sb, "-e %s", keep.len ? keep.buf : "cpu");
	if (futex >= 0 && p->collectors[futex].samples * 2 >= most)
		sb_addstr(sb, ", --futex count");
	if (cpu >= 0 && p->collectors[cpu].samples)
		sb_addstr(sb, ", -F 499");
	sb_free(&keep);
}

/* "cpu: 65% recorder, 32% other, 3.0% futex-wait" */
static void cpu_line(const struct profile *p, int cpu, struct strbuf *sb)
{
	const struct collector_info *ci = &p->collectors[cpu];
	bool shown[PATH_COUNT] = { false };
	sb_addstr(sb, "cpu by path:");
	for (int k = 0; k < PATH_COUNT; k++) {
		int best = -1;
		for (int path = 0; path < PATH_COUNT; path++)
			if (!shown[path] && (best < 0 || ci->path_samples[path] > ci->path_samples[best]))
				best = path;
		double share = (double)ci->path_samples[best] / (double)ci->samples;
		if (share < CPU_LINE_FLOOR)
			break;
		shown[best] = true;
		sb_addf(sb, "%s %.*f%% %s", k ? "," : "", share < 0.1 ? 1 : 0, 100.0 * share, path_name(best));
	}
}

/* Lines of text, each as it will be printed, with the rows it takes in the width. */
struct screen {
	struct strbuf text;
	size_t rows;
	const struct view_options *o;
};

/*
 * A line wrapped within the width: the first row after `lead` (a share,
 * a dash), the others under the text; counts the rows.
 */
static void screen_line(struct screen *s, const char *lead, const char *text)
{
	size_t indent = term_columns(lead), width = s->o->width ? s->o->width : 0, col = indent;
	sb_addstr(&s->text, lead);
	s->rows++;
	/* a finding quotes a recording's strings (a file, a function): shown by the one rule for them */
	struct strbuf safe = { 0 };
	sb_add_printable(&safe, text);
	for (const char *w = safe.buf ? safe.buf : ""; *w;) {
		size_t gap = strspn(w, " "), word = strcspn(w + gap, " ");
		if (!word)
			break;
		char buf[512], cut[512];
		snprintf(buf, sizeof(buf), "%.*s", (int)word, w + gap);
		size_t cols = term_columns(buf);
		if (width && indent + cols > width) {
			/* a word longer than a row (a long path): cut, "…" in its middle */
			if (col > indent) {
				sb_addf(&s->text, "\n%*s", (int)indent, "");
				s->rows++;
				col = indent;
			}
			sb_addstr(&s->text, term_cut(buf, width - indent, cut, sizeof(cut)));
			col += width - indent;
			w += gap + word;
			continue;
		}
		if (width && col > indent && col + (gap ? 1 : 0) + cols > width) {
			sb_addf(&s->text, "\n%*s", (int)indent, "");
			s->rows++;
			col = indent;
		} else if (col > indent) {
			sb_addstr(&s->text, " ");
			col++;
		}
		sb_add(&s->text, w + gap, word);
		col += cols;
		w += gap + word;
	}
	sb_free(&safe);
	sb_addstr(&s->text, "\n");
}

/* A heading, wrapped as a line is, in the heading's colour. */
static void screen_heading(struct screen *s, const char *text)
{
	sb_addstr(&s->text, term_on(s->o->color, PAINT_HEADING));
	screen_line(s, "", text);
	sb_addstr(&s->text, term_off(s->o->color));
}

/* How many rows a line would take (screen_line's wrapping), without adding it. */
static size_t line_rows(const struct view_options *o, const char *lead, const char *text)
{
	struct screen probe = { .o = o };
	screen_line(&probe, lead, text);
	sb_free(&probe.text);
	return probe.rows;
}

void report_summary_text(const struct profile *p, const struct report_summary *sum, const struct report_options *o,
			 FILE *out)
{
	const struct view_options *v = &o->view;
	struct screen s = { .o = v };
	struct strbuf line = { 0 };
	sb_addf(&line, "sigprof report of %s: ", p->file);
	command_line(p, &line);
	screen_heading(&s, line.buf);
	sb_reset(&line);
	run_line(p, &line);
	screen_line(&s, "  ", line.buf);
	int cpu = cpu_collector(p);
	if (cpu >= 0) {
		const struct collector_info *ci = &p->collectors[cpu];
		double recorder = (double)ci->path_samples[PATH_RECORDER] / (double)ci->samples;
		sb_reset(&line);
		sb_addf(&line, "cost: sigprof's own recording holds %.0f%% of the cpu samples (the recorder path)",
			100.0 * recorder);
		screen_line(&s, "  ", line.buf);
		if (recorder >= RECORDER_WARN_SHARE) {
			sb_reset(&line);
			sb_addstr(&line, "that distorts the figures; record less: ");
			cheaper_options(p, &line);
			screen_line(&s, "  ! ", line.buf);
		}
		sb_reset(&line);
		cpu_line(p, cpu, &line);
		screen_line(&s, "  ", line.buf);
	} else {
		screen_line(&s, "  ", "cost: no cpu samples, so the recording's own share is unknown (record with -e cpu)");
	}
	/* the caveats and the closing line are kept: the findings get the rows left */
	size_t caveat_rows = sum->findings.ncaveats ? 2 : 0; /* the blank line and the heading */
	for (size_t i = 0; i < sum->findings.ncaveats; i++)
		caveat_rows += line_rows(v, "  - ", sum->findings.caveats[i]);
	size_t budget = SUMMARY_ROWS > s.rows + caveat_rows + 4 ? SUMMARY_ROWS - s.rows - caveat_rows - 4 : 0;
	sb_addstr(&s.text, "\n");
	s.rows++;
	size_t before = s.rows;
	screen_heading(&s, "Findings (share of the workload's cpu time; -> where to look next)");
	budget = budget + 1 > s.rows - before ? budget + 1 - (s.rows - before) : 0;
	size_t shown = 0, used = 0;
	for (size_t i = 0; i < sum->findings.count; i++) {
		const struct finding *f = &sum->findings.items[i];
		char lead[32];
		if (f->share >= 0)
			snprintf(lead, sizeof(lead), "%5.*f%%  ", f->share < 0.1 && f->share > 0 ? 1 : 0, 100.0 * f->share);
		else
			snprintf(lead, sizeof(lead), "%6s  ", "-");
		sb_reset(&line);
		sb_addf(&line, "%s -> %s", f->text, f->next);
		size_t rows = line_rows(v, lead, line.buf);
		if (used + rows > budget)
			break;
		screen_line(&s, lead, line.buf);
		used += rows;
		shown++;
	}
	if (!sum->findings.count) {
		screen_line(&s, "  ", "none: no collector found anything to point at; the sections below have the figures");
	}
	if (sum->findings.ncaveats) {
		sb_addstr(&s.text, "\n");
		s.rows++;
		screen_heading(&s, "Read with care");
		for (size_t i = 0; i < sum->findings.ncaveats; i++)
			screen_line(&s, "  - ", sum->findings.caveats[i]);
	}
	sb_reset(&line);
	if (shown < sum->findings.count)
		sb_addf(&line, "%zu more finding%s in the sections below; ", sum->findings.count - shown,
			sum->findings.count - shown == 1 ? "" : "s");
	sb_addstr(&line, "metadata in full: --header");
	sb_addstr(&s.text, "\n");
	screen_line(&s, "", line.buf);
	fputs(s.text.buf, out);
	sb_free(&line);
	sb_free(&s.text);
}
