/*
 * report.h: the views that every report output shares, and the outputs.
 *
 * report.c parses options, loads the profile and picks a writer; the
 * writers (report_text.c, report_json.c, and folded stacks in report.c)
 * use the same sorted views and stack writers (view.h) as the collectors'
 * sections, so the terminal and JSON never disagree.
 */
#ifndef SIGPROF_REPORT_H
#define SIGPROF_REPORT_H

#include <stdio.h>

#include "sigprof/model/profile.h"
#include "sigprof/view/findings.h"
#include "sigprof/view/view.h"

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_FOLDED, REPORT_FIGURES, REPORT_PPROF, REPORT_HTML,
		     REPORT_TRACE_EVENT };

/* --folded-root: the frame folded stacks begin with. */
enum folded_root { ROOT_NONE, ROOT_COMM, ROOT_PID, ROOT_TID };

struct report_options {
	const char *input;
	enum report_format format;
	enum function_sort sort;
	const char *collector;      /* --collector for --folded; NULL: the first with samples */
	const char *pprof;          /* --pprof FILE */
	bool weight_ns;             /* --weight ns: folded stacks weighed by the collector's time */
	bool weight_wake;           /* --weight wake: waiter;--;waker stacks weighed by the wait ns (docs/waits.md) */
	bool weight_wall;           /* --weight wall: the wall-clock profile, the state as root frame (docs/timeline.md) */
	const char *trace_event;    /* --trace-event FILE */
	enum folded_root root;      /* --folded-root */
	bool no_demangle;           /* --no-demangle: C++ names raw */
	const char *debug_dirs;     /* --debug-dirs: roots of separate debug files; NULL: SIGPROF_DEBUG_DIRS or default */
	const char *symfs;          /* --symfs: a directory or an archive every file is read from; NULL: none */
	const char *html;           /* --html FILE */
	unsigned width;             /* --width N; 0: COLUMNS or the terminal's */
	int color;                  /* --color: enum term_color_mode */
	bool no_pager;              /* --no-pager */
	bool full_header;           /* --header, -v: the recording's metadata line by line, not in one block */
	struct view_options view;   /* -n, --stacks, --max-frames, --sched-keys: what the collectors' sections follow */
};

void report_text(const struct profile *p, const struct report_options *o, FILE *out);

/*
 * The text report's first screen (report_summary.c, docs/report-summary.md):
 * the findings of the collectors' hooks and the report's own caveats,
 * ranked, and the rank of each collector's section (the largest share
 * among its findings; lower than any share without one).
 */
struct report_summary {
	struct findings findings;
	double section_rank[PROFILE_MAX_COLLECTORS];
};
void report_summary_collect(const struct profile *p, struct report_summary *s);
/* What ran, its cost, the cpu by path, the findings and the caveats, within 23 rows of o->view.width. */
void report_summary_text(const struct profile *p, const struct report_summary *s, const struct report_options *o,
			 FILE *out);
void report_summary_free(struct report_summary *s);
void report_json(const struct profile *p, const struct report_options *o, FILE *out);
struct json_writer;
/* The JSON document into a writer the caller set up (report_html: script_safe). */
void report_json_write(struct json_writer *w, const struct profile *p, const struct report_options *o);
/*
 * The HTML page (docs/report-html.md): the report's header, paths and
 * sections as tables and a flame graph per collector, one file with its
 * script and style inline.  report_html_diff: the flame graphs of base and
 * new in one, coloured by growth and shrink (sigprof diff --html).
 */
void report_html(const struct profile *p, const struct report_options *o, FILE *out);
/*
 * The page (report_html, or report_html_diff when base is not NULL) into
 * a new file renamed over path when whole (safe_output, util.h); one error
 * line prefixed with command ("report", "diff") on failure, and -1.
 */
int report_html_file(const char *command, const char *path, const struct profile *base, const struct profile *p,
		     const struct report_options *o);
void report_html_diff(const struct profile *base, const struct profile *new, const struct report_options *o,
		      FILE *out);

/* Folded stacks (--folded, and `sigprof diff --folded`): the collector whose stacks they are, by name (NULL: the
 * first with samples), or -1. */
int report_folded_collector(const struct profile *p, const char *name);
/* One stack folded, root first: "main;work;__restore_rt;sys_rt_sigreturn_[k]" (no count), appended to sb. */
void report_folded_stack(const struct profile *p, uint32_t stack, struct strbuf *sb);

/*
 * The weight kind (weights.h) that is collector c's time in ns, which
 * --weight ns reads from profile.weights: its own kind marked is_time,
 * else its periods when they are time (cpu-clock); -1 when it has none.
 */
int report_time_weight(const struct profile *p, int c);

/*
 * pprof (report_pprof.c): a profile loaded with profile_options.weights as
 * a gzipped profile.proto at path.  0, or -errno with the reason in err.
 */
int report_pprof(const struct profile *p, const char *path, char *err, size_t errlen);
/*
 * Two recordings (sigprof diff): both files get the sample types of both,
 * in one order, so that `pprof -diff_base=BASE_PATH CHANGED_PATH` compares them.
 */
int report_pprof_pair(const struct profile *base, const char *base_path, const struct profile *changed,
		      const char *changed_path, char *err, size_t errlen);

/*
 * The timeline's outputs (report_timeline.c, docs/timeline.md), of a profile
 * loaded with profile_options.timeline.  report_wall_root: the root frame of
 * a wall-clock stack ("[running]", "[blocked: futex queue_lock]",
 * "[runnable]", "[signal handler: SIGUSR1]") into buf.
 */
const char *report_wall_root(const struct profile *p, uint32_t pid, uint8_t state, uint8_t cause, uint8_t signal,
			     uint64_t word, char *buf, size_t len);
/* "timeline": the threads, their spans, the wall-clock profile and the stacks they name (null without). */
void report_timeline_json(struct json_writer *w, const struct profile *p);
/* The text report's "Wall clock" section: per thread its states, and the heaviest wall-clock stacks. */
void report_timeline_text(const struct profile *p, const struct view_options *o, FILE *out);
/* The first screen's finding when one state takes half of a thread's life or more. */
void report_timeline_findings(const struct profile *p, struct findings *f);
/* --trace-event FILE: the spans as Chrome trace events, written whole or not at all; 0, or -1 after an error line. */
int report_trace_event_file(const struct profile *p, const char *path);
/*
 * The error line of a timeline output (OPTION: "--weight wall",
 * "--trace-event") that has no thread: the filters kept none, or the
 * recording followed none.  Returns -1.
 */
int report_no_threads_followed(const struct profile *p, const char *option);

#endif
