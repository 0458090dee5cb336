/*
 * view.h: what a collector's report side may use of a loaded profile.
 *
 * Layer: view, above the model (profile.h, stacks.h, paths.h) and below the
 * collectors and the commands (docs/layers.md).  A collector's analyzer is
 * handed the profile it belongs to and its own index in it (collector.h);
 * it reads the profile only through the accessors here, never through the
 * fields of struct profile (profile.h is not included by collectors).  The
 * report writers (commands) use the same labels, stack writers and sorted
 * views, so that every output prints a frame and a stack one way:
 *
 *   text, one frame a line      view_text_stack()   (report, c2c, ...)
 *   text, one line              view_stack_line()   (signal's "a <- b <- c", sched's "a;b;c" keys)
 *   JSON                        view_json_stack()   ("frames": [{"sym", "dso"[, "offset"]}, ...])
 *
 * A collector also lists its figures as keyed rows (struct figure_rows):
 * stable dotted keys with a value, a unit and whether the value is exact,
 * which `report --figures` prints and a comparison of runs consumes without
 * reaching into the collector.
 */
#ifndef SIGPROF_VIEW_H
#define SIGPROF_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sigprof/model/collector.h"
#include "sigprof/model/paths.h"
#include "sigprof/kernel/sample.h"
#include "sigprof/model/stacks.h"
#include "sigprof/base/durations.h"
#include "sigprof/base/util.h"
#include "sigprof/model/weights.h"
#include "sigprof/base/hashmap.h"

struct string_pool;

struct profile;
struct json_writer;
struct strbuf;
struct tep_event;

/* The options a collector's section follows: the part of the report's options that shape it. */
struct view_options {
	unsigned top;               /* -n: rows of a ranked list (functions, cachelines) */
	unsigned stacks_per_path;   /* --stacks: stacks per path or per row */
	bool stacks_limit_given;    /* --stacks was given (JSON lists every stack without it) */
	unsigned max_frames;        /* frames shown per stack in text */
	bool sched_keys_lkp;        /* --sched-keys lkp: sched rows keyed like LKP's perf-sched figures */
	unsigned width;             /* columns text fits in (term.h: --width, COLUMNS, the terminal); 0: no limit */
	bool color;                 /* colour text (term.h: --color, NO_COLOR, a terminal) */
	bool all;                   /* --all: keep the rows and columns of a table that are all zero */
};

/* ---- the collector's own figures ---- */

/* Whether collector self opened in the recording (false: unavailable, with a reason in its header line). */
bool view_collector_ok(const struct profile *p, int self);
/* Its decoded samples (of the workload's tasks) and the samples of each path. */
uint64_t view_collector_samples(const struct profile *p, int self);
/*
 * The stack whose count the samples of `stack` joined at the end of the
 * load (a key lent its call site's stack late, a cpu stack completed from
 * a long copy: docs/stacks.md), or `stack` itself; profile is a const
 * struct profile *, passed as void * to be a remap callback
 * (waits_remap_stacks()).  For an analyzer's finish(), which runs after.
 */
uint32_t view_stack_moved(void *profile, uint32_t stack);
uint64_t view_collector_path_samples(const struct profile *p, int self, int path);

/* ---- events of the recording ---- */

size_t view_event_count(const struct profile *p);
/* Event i in file order (i < view_event_count()). */
const struct sp_event *view_event(const struct profile *p, size_t i);
/*
 * Its hits the kernel counted and did not sample (profile.h says why); 0 for
 * an event not recorded at every hit.
 */
uint64_t view_event_unsampled_hits(const struct profile *p, size_t i);
/*
 * Whether the report's filters (--pid, --tid, --comm, --time, --dso) drop
 * samples: the records then hold part of the run, while the events' exact
 * totals (view_event()->total_value) are the whole run's.
 */
bool view_records_filtered(const struct profile *p);
/* The tracepoint a sample's raw data belongs to, or NULL. */
const struct tep_event *view_tracepoint_of(const struct profile *p, const struct sp_sample *s);

/* ---- stacks and frames (ids as collector.h hands them to sample()) ---- */

uint64_t view_stack_count(const struct profile *p, uint32_t stack);
int view_stack_path(const struct profile *p, uint32_t stack);
uint32_t view_stack_depth(const struct profile *p, uint32_t stack);
/* Frame i of a stack, leaf first (i < view_stack_depth()). */
const struct frame *view_stack_frame(const struct profile *p, uint32_t stack, uint32_t i);

/* ---- weights (weights.h) ---- */

/*
 * Add value to this collector's own weight kind `kind` (an index into its
 * struct collector.weights) of a stack, for thread tid of process pid,
 * labelled with a signal number and a futex word (0: none).  Nothing
 * happens unless the report asked for weights (pprof, folded per thread
 * or by time): view_weights_wanted() says whether, so an analyzer can
 * skip the work.
 */
void view_add_weight(const struct profile *p, int self, uint32_t stack, uint32_t pid, uint32_t tid, int signal,
		     uint64_t word, unsigned kind, uint64_t value);
bool view_weights_wanted(const struct profile *p);

/*
 * Whether process pid is the workload's: always in sigprof's own
 * recordings (their task records are the workload's only); in a perf.data
 * that names its forked command (META workload_pid), that process and
 * those it forked.  A system-wide perf.data's other tasks are not.
 */
bool view_task_in_workload(const struct profile *p, uint32_t pid);

/* ---- data addresses ---- */

/*
 * The name of a data address: kernel data (the upper half of the address
 * space) from the recording's kernel symbols, "sym+0xOFF" or "0xADDR";
 * user data per process as proc_table_data_name() names it.  *dso (unless
 * NULL) is the dso it belongs to, or NULL.  Returns buf.
 */
const char *view_data_name(const struct profile *p, uint32_t pid, uint64_t addr, char *buf, size_t len,
			   const char **dso);
/* The name of a user data address of process pid only (a futex word): never a kernel symbol. */
const char *view_user_data_name(const struct profile *p, uint32_t pid, uint64_t addr, char *buf, size_t len,
				const char **dso);
/* Where a user data address of pid lies in memory other processes can map (proc_table_shared_offset()). */
bool view_shared_offset(const struct profile *p, uint32_t pid, uint64_t addr, uint64_t *object, uint64_t *offset);
/* Whether addr is kernel data (the upper half of the x86-64 address space). */
bool view_kernel_address(uint64_t addr);
/*
 * The collector that knows [start, end) of process pid as its own data
 * (the futex collector: a futex word there), through the marks_data hooks
 * of the analyzers (collector.h); NULL when none does.
 */
const char *view_data_marked_by(const struct profile *p, uint32_t pid, uint64_t start, uint64_t end);
/*
 * The futex word of thread tid's futex call pending at time, through the
 * pending_futex_word hooks of the analyzers (collector.h): true with *pid
 * and *uaddr set when one knows it.  Valid while samples are loaded, in time
 * order (from an analyzer's sample()).
 */
bool view_pending_futex_word(const struct profile *p, uint32_t tid, uint64_t time, uint32_t *pid, uint64_t *uaddr);
/*
 * What sample s (of any collector) says about the scheduling of the
 * workload's tasks, through the sched_event hooks of the analyzers
 * (collector.h): false when no analyzer reads it so (from observe()).
 */
/* The name (comm) of thread tid of process pid at the end of the recording, "?" when unknown. */
const char *view_thread_comm(const struct profile *p, uint32_t pid, uint32_t tid);
bool view_sched_event_of(const struct profile *p, const struct sp_sample *s, struct sched_event_facts *out);

/* ---- labels ---- */

/* "sym" or "dso+0xoffset" for a frame. */
const char *frame_label(const struct frame *f, char *buf, size_t buflen);
/*
 * "sym", or for a frame no symbol names "[dso]" (its file's last
 * component, or the dso itself when bracketed: "[unknown]", "[vdso]"):
 * no address, so the unnamed frames of one file merge (folded stacks,
 * pprof's functions).
 */
const char *frame_merged_label(const struct frame *f, char *buf, size_t buflen);
/* The GNU build-id (hex) of a dso the report read, by the name frames give it; NULL when unknown. */
const char *view_dso_build_id(const struct profile *p, const char *dso);
/* The last component of a dso path. */
const char *dso_short_name(const char *dso);
/* "file.c:42" (the source file's last component) for a frame with a source line (--srcline), else NULL. */
const char *frame_srcline(const struct frame *f, char *buf, size_t buflen);
/* The JSON key of a path figure: "sched_wait_ms", "c2c_hitm_local". */
const char *path_figure_key(const char *collector, const struct path_figure *f, char *buf, size_t len);

/* ---- times and the slowest events ---- */

/* A perf clock time as sigprof script prints it: seconds with six decimals ("1283.867775"). */
const char *view_time(uint64_t ns, char *buf, size_t len);
/*
 * The line (wrapped within o->width) that points at a slowest event:
 * "  slowest WHAT: 5.603 ms, tid 10157, 1283.901234 to 1283.906836
 * (sigprof script --tid 10157 --time 1283.901234,1283.906836)"; nothing
 * when none was seen.
 */
void view_text_slowest(const struct view_options *o, FILE *out, const char *what, const struct slowest_event *s);
/* "KEY": {"ns", "start_ns", "end_ns", "pid", "tid", "script_time": "START,END"}, or null when none was seen. */
void view_json_slowest(struct json_writer *w, const char *key, const struct slowest_event *s);

/* ---- stack writers ---- */

/*
 * One frame of a stack in text, on its own line indented 8 columns: the
 * label, marked "(inlined)" for an inlined call, the dso, and file:line
 * with --srcline.  Within o->width (the label cut with term_cut(), in the
 * middle of a C++ name), coloured with o->color: kernel frames, user
 * frames, and the frames sigprof adds ("[signal SIGPROF]", "[unwind: ...]")
 * apart.
 */
void view_text_frame(FILE *out, const struct frame *f, const struct view_options *o);
/* An interned stack in text: one frame a line, leaf first, at most o->max_frames, then "... N more frames". */
void view_text_stack(const struct profile *p, uint32_t stack, const struct view_options *o, FILE *out);
/* What o->color paints a frame's label with: PAINT_KERNEL, PAINT_USER or PAINT_MARK (term.h). */
int view_frame_paint(const struct frame *f);

/* How view_stack_line() joins a stack on one line. */
struct stack_line_style {
	const char *separator;   /* between frames: " <- ", ";" */
	unsigned max_frames;     /* 0: every frame */
	bool user_frames;        /* start at the first user frame (all frames when the stack has none) */
	const char *more;        /* appended when frames were left out (" <- ..."), or NULL */
};
/* A stack's frame labels on one line, leaf first, appended to sb. */
void view_stack_line(const struct profile *p, uint32_t stack, const struct stack_line_style *style,
		     struct strbuf *sb);
/*
 * n stacks as the rows of one table, each within width columns (0: no
 * limit) into rows[i] (reset first): view_stack_line(), cut at its end
 * ("…") to fit.  Rows that would read the same show where their stacks
 * differ: the first frame, then for each stack alike one the frame where
 * they part with its caller, "…" for the frames between, style->more when
 * frames follow; such a row is cut at its start to fit, so that the frames
 * that tell it apart stay in sight.  Stacks whose labels are the same
 * whole (they differ only in addresses within the same functions) get the
 * same row: the caller may join them.
 */
void view_stack_rows(const struct profile *p, const uint32_t *stacks, size_t n,
		     const struct stack_line_style *style, size_t width, struct strbuf *rows);

/* One frame as every JSON list of frames writes it: {"sym", "dso"[, "offset"][, "synthetic"], source}. */
void view_json_frame(struct json_writer *w, const struct frame *f);
/* With --srcline: "srcline", "file", "line" where DWARF gives a line, "inlined": true for an inlined call. */
void view_json_frame_source(struct json_writer *w, const struct frame *f);
/* "frames": [...] of an interned stack, leaf first. */
void view_json_stack(struct json_writer *w, const struct profile *p, uint32_t stack);
struct duration_stats;
/* KEY: {"count", "total", "max", "p50", "p99"} of a duration distribution (ns), as the collectors write it. */
void view_json_durations(struct json_writer *w, const char *key, const struct duration_stats *d);

/* ---- text that fits o->width ---- */

/*
 * A line of prose (a heading, a note) word-wrapped within o->width: the
 * lines after the first start with indent spaces.  Without a width, one
 * line as it is.  The text ends with its own newline or gets one.
 */
void view_text_wrapped(const struct view_options *o, FILE *out, size_t indent, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A table cell of width columns holding s, for printf's "%-*s" with *pad:
 * s itself without a width (a longer s widens its row, as it always did);
 * within o->width, s cut to width with term_cut() and *pad counting the
 * bytes past its columns ("…" is one column of three), so that the
 * columns after it stay in place.  buf (len bytes) holds the cut text.
 */
const char *view_text_cell(const struct view_options *o, const char *s, size_t width, char *buf, size_t len,
			   int *pad);

/*
 * A text table whose rows are printed as before (fixed columns, one printf
 * a row) and, when wider than o->width, laid out again as several tables
 * one under the other, each with the key column (the first) and the
 * columns that fit.  columns[] are the widths of the columns in the
 * rows' printed form, in terminal columns (term_columns()), leading spaces
 * included; text past the last one belongs to it, and its words wrap
 * under it when the key column and it alone pass the width.  A cell cut
 * with term_cut() to its column's width keeps the row's columns in place.
 *
 *	static const unsigned columns[] = { 15, 11, 11, 11 };   "  %-13s %10s %10s %10s"
 *	struct view_table t = { .columns = columns, .ncolumns = ARRAY_SIZE(columns) };
 *	view_table_addf(&t, "  %-13s %10s %10s %10s", "signal", "generated", ...);
 *	...
 *	view_table_print(&t, o, out);   prints and frees the rows
 */
struct view_table {
	const unsigned *columns;
	size_t ncolumns;
	char **rows;
	size_t nrows, cap;
};
void view_table_addf(struct view_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void view_table_print(struct view_table *t, const struct view_options *o, FILE *out);

/* ---- sorted views, shared by every output so that the terminal and JSON never disagree ---- */

enum function_sort { SORT_SELF, SORT_TOTAL, SORT_NAME };

struct function_row {
	uint32_t frame;
	uint64_t self;   /* samples whose leaf is this function */
	uint64_t total;  /* samples with this function anywhere on the stack */
};

/* Functions of one collector, sorted; returns the count, *rows to free. */
/* Whether the path table lists path: always, but under --percent-limit only when a collector's share reaches it. */
bool view_path_shown(const struct profile *p, int path);
size_t view_functions(const struct profile *p, int collector, enum function_sort sort, struct function_row **rows);
/* The frame a function row names. */
const struct frame *view_frame(const struct profile *p, uint32_t frame);
/* Stack ids of one collector (and one path, or -1 for all), by count descending; *ids to free. */
size_t view_stacks(const struct profile *p, int collector, int path, uint32_t **ids);

/* One function name of the perf-profile figures: every frame that frame_label() names so, merged. */
struct named_function {
	const char *name;    /* in the pool */
	uint64_t self;       /* samples whose leaf it is */
	uint64_t children;   /* samples with it anywhere on the stack, each counted once */
	size_t last_stack;   /* the stack (its index + 1) that last counted it in children */
};

/*
 * The functions of the stacks ids[0..n) by name, most self samples first;
 * returns the count, *out and *pool (which holds the names) to free.
 */
size_t view_functions_by_name(const struct profile *p, const uint32_t *ids, size_t n, struct named_function **out,
			      struct string_pool **pool);

/* ---- keyed figures ---- */

/* One figure of a recording under a stable dotted key: "signal.SIGUSR1.generated". */
struct figure_row {
	char *key;
	double value;
	const char *unit;  /* "count", "ms", "us", "percent", ... (a string constant) */
	bool exact;        /* false: estimated (weighted samples) */
};

/*
 * The rows of one recording: a key names one figure (docs/figures.md), so
 * the rows never hold a key twice.  A collector that may meet one key more
 * than once (two futex words that one symbol names, two functions of one
 * name in two files) says how the figures under it combine
 * (figure_rows_merge()); a second figure_rows_add() of a key is refused.
 */
struct figure_rows {
	struct figure_row *rows;
	size_t count, cap;
	struct u64_map index;   /* hash of a key -> its row's index + 1 */
	size_t refused;         /* rows refused: their key was listed already (a collector's bug, which the commands say) */
};

/* How a figure under a key that is listed already combines with the row there. */
enum figure_merge {
	FIGURE_SUM, /* counts and totals: the values add up */
	FIGURE_MAX, /* maxima: the larger stays */
};

/*
 * Add a row; the key is formatted (printf) and copied.  0, or -EEXIST when
 * the key names a row already: that row stays as it was and rows->refused
 * counts the one refused.
 */
int figure_rows_add(struct figure_rows *rows, double value, const char *unit, bool exact, const char *key_fmt, ...)
	__attribute__((format(printf, 5, 6)));
/*
 * Add a row, or combine it with the row its key names (how: the sum or the
 * larger value; exact only when both are).  -EINVAL, the row left as it was
 * and counted in rows->refused, when the two units differ: they are two
 * figures, not one.
 */
int figure_rows_merge(struct figure_rows *rows, enum figure_merge how, double value, const char *unit, bool exact,
		      const char *key_fmt, ...) __attribute__((format(printf, 6, 7)));
/* The row key names, or NULL. */
const struct figure_row *figure_rows_find(const struct figure_rows *rows, const char *key);
void figure_rows_free(struct figure_rows *rows);
/*
 * Every figure of a loaded profile: the run's (run.duration_s, run.samples,
 * run.lost), each open collector's samples and, when it has some, its
 * share per path (COLLECTOR.samples, paths.COLLECTOR.PATH in percent) and
 * path figures (paths.sched.PATH.wait_ms),
 * then each analyzer's own rows (collector_analyzer.figures), in collector
 * order.
 */
void view_figures(const struct profile *p, struct figure_rows *rows);

#endif
