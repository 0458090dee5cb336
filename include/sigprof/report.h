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

#include "sigprof/profile.h"
#include "sigprof/view.h"

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_FOLDED, REPORT_FIGURES };

struct report_options {
	const char *input;
	enum report_format format;
	enum function_sort sort;
	const char *collector;      /* --collector for --folded; NULL: the first with samples */
	bool no_demangle;           /* --no-demangle: C++ names raw */
	const char *debug_dirs;     /* --debug-dirs: roots of separate debug files; NULL: SIGPROF_DEBUG_DIRS or default */
	const char *symfs;          /* --symfs: a directory or an archive every file is read from; NULL: none */
	struct view_options view;   /* -n, --stacks, --max-frames, --sched-keys: what the collectors' sections follow */
};

void report_text(const struct profile *p, const struct report_options *o, FILE *out);
void report_json(const struct profile *p, const struct report_options *o, FILE *out);

#endif
