/*
 * report.h: the views that every report output shares, and the outputs.
 *
 * report.c parses options, loads the profile and picks a writer; the
 * writers (report_text.c, report_json.c, and folded stacks in report.c)
 * use the same sorted views so the terminal and JSON never disagree.
 */
#ifndef SIGPROF_REPORT_H
#define SIGPROF_REPORT_H

#include <stdio.h>

#include "sigprof/profile.h"

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_FOLDED };
enum function_sort { SORT_SELF, SORT_TOTAL, SORT_NAME };

struct report_options {
	const char *input;
	enum report_format format;
	unsigned top_functions;     /* -n */
	unsigned stacks_per_path;   /* --stacks; 0 in JSON: all */
	bool stacks_limit_given;
	enum function_sort sort;
	unsigned max_frames;        /* frames shown per stack in text */
	const char *collector;      /* --collector for --folded; NULL: the first with samples */
	bool sched_keys_lkp;        /* --sched-keys lkp: sched stacks keyed like LKP's perf-sched figures */
	bool no_demangle;           /* --no-demangle: C++ names raw */
	const char *debug_dirs;     /* --debug-dirs: roots of separate debug files; NULL: SIGPROF_DEBUG_DIRS or default */
};

struct function_row {
	uint32_t frame;
	uint64_t self;   /* samples whose leaf is this function */
	uint64_t total;  /* samples with this function anywhere on the stack */
};

/* Functions of one collector, sorted; returns the count, *rows to free. */
size_t report_functions(const struct profile *p, int collector, enum function_sort sort,
			struct function_row **rows);
/* Stack ids of one collector (and one path, or -1 for all), by count descending. */
size_t report_stacks(const struct profile *p, int collector, int path, uint32_t **ids);
/* "sym" or "dso+0xoffset" for a frame. */
const char *frame_label(const struct frame *f, char *buf, size_t buflen);
/* The last component of a dso path. */
const char *dso_short_name(const char *dso);
/* "file.c:42" (the source file's last component) for a frame with a source line (--srcline), else NULL. */
const char *frame_srcline(const struct frame *f, char *buf, size_t buflen);
/*
 * One frame of a stack in text, on its own indented line: the label,
 * marked "(inlined)" for an inlined call, the dso, and file:line with
 * --srcline.
 */
void report_text_frame(FILE *out, const struct frame *f);

struct json_writer;
/* One frame as every JSON list of frames writes it: {"sym", "dso"[, "offset"]}. */
void report_json_frame(struct json_writer *w, const struct frame *f);
/* "frames": [...] of an interned stack, leaf first. */
void report_json_stack_frames(struct json_writer *w, const struct profile *p, uint32_t stack);

/* An interned stack as the text report prints it: one frame a line, leaf first, at most max_frames. */
void report_text_stack(const struct profile *p, uint32_t stack, unsigned max_frames, FILE *out);

void report_text(const struct profile *p, const struct report_options *o, FILE *out);
void report_json(const struct profile *p, const struct report_options *o, FILE *out);

#endif
