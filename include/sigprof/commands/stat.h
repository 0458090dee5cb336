/*
 * stat.h: the pure parts of `sigprof stat` (profiler/commands/stat.c), apart so the
 * tests drive them without counters: statistics over repeated runs, the
 * scaling of multiplexed counts, the derived figures (MPKI, IPC, ...) and
 * the layout of one figure's line.
 *
 * Over -r N runs a figure is given as LKP gives it: the mean of the runs
 * and the population standard deviation as a percentage of the mean
 * (%stddev).  A derived figure is computed in each run from that run's
 * counts, then averaged like any other figure (as LKP's perf-stat.overall
 * figures are), so its %stddev says how much the ratio itself moved.
 */
#ifndef SIGPROF_STAT_H
#define SIGPROF_STAT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/base/runstats.h"
#include "sigprof/base/util.h"

/* Statistics over runs (stat_mean, stat_stddev_percent): runstats.h. */

/* ---- multiplexing ---- */

/* One read of a counter: what read(2) returns with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING. */
struct counter_reading {
	uint64_t value, enabled, running;
};

/*
 * What the counter would have counted had it been on the PMU all the time
 * it was enabled: value * enabled / running, as perf scales; *running_share
 * is running / enabled (1 when it never had to share).  A counter that was
 * never enabled (the workload exited at once) counted exactly 0.  false when
 * it was enabled but never ran: there is nothing to scale.
 */
bool counter_scale(const struct counter_reading *r, double *scaled, double *running_share);

/* The difference of two reads of one counter (the -I intervals). */
struct counter_reading counter_delta(const struct counter_reading *now, const struct counter_reading *before);

/* ---- figures ---- */

/* What a counter is to the derived figures, by its event. */
enum stat_input {
	STAT_CYCLES,
	STAT_INSTRUCTIONS,
	STAT_CACHE_REFERENCES,
	STAT_CACHE_MISSES,
	STAT_TASK_CLOCK, /* ns */
	STAT_ELAPSED,    /* the run's wall-clock time in ns (not a counter) */
	STAT_NO_INPUT,
	STAT_INPUT_COUNT = STAT_NO_INPUT,
};

/* The input a counting event stands for (perf's generic hardware and software events), else STAT_NO_INPUT. */
enum stat_input stat_input_of(const struct perf_event_attr *attr);
/* "cycles", "task-clock", "elapsed" */
const char *stat_input_name(enum stat_input input);

/* A figure computed from two inputs of one run: factor * numerator / denominator. */
struct derived_figure {
	const char *name;       /* "MPKI" */
	const char *unit;       /* "" or "%" */
	enum stat_input numerator, denominator;
	double factor;
	int decimals;
	const char *formula;    /* for the man page and --help */
};
extern const struct derived_figure derived_figures[];
extern const size_t derived_figure_count;

/* One run's inputs. */
struct stat_inputs {
	double value[STAT_INPUT_COUNT];
	bool counted[STAT_INPUT_COUNT];
};

/*
 * A derived figure of one run: 0 with *value, -ENODATA when an input was
 * not counted (not supported), -EDOM when the denominator is 0.
 */
int derived_value(const struct derived_figure *f, const struct stat_inputs *in, double *value);

/* ---- the figures every `sigprof stat` without -e counts ---- */

struct stat_default_event {
	const char *name;  /* the figure's name: "signals-generated" */
	const char *event; /* the event in the event parser's syntax (pmu.h): "cycles", "signal:signal_generate" */
};
/* The fixed part; the futex rows per op (futex.WAIT, futex_wait, ...) follow them, from futex_op.h's ops. */
extern const struct stat_default_event stat_default_events[];
extern const size_t stat_default_event_count;

/* ---- text layout ---- */

/* One figure's line, over the runs. */
struct figure_line {
	const char *name;
	const char *unit;         /* after the value: "ms", "%", "" */
	double mean;
	int decimals;             /* 0 for counts: then a fractional mean (over runs) gets 2 */
	bool show_stddev;         /* more than one run: " ± N.NN%" */
	double stddev_percent;
	double running_percent;   /* below 100: the counter was multiplexed, its value scaled */
	const char *not_counted;  /* non-NULL: the value is "<not supported>" and this is why */
	const char *note;         /* after everything, "# note": the event behind the name */
};

/*
 * "%18s %-4s %-30s" value, unit, name; then "  ± %6.2f%%" with
 * show_stddev, "  (running %.2f%%)" when multiplexed, "  # note"; no
 * trailing blanks, a newline.
 */
void stat_format_line(struct strbuf *sb, const struct figure_line *l);
/* An -I line: "%14.6f " seconds since the start, then the value, unit and name as above. */
void stat_format_interval(struct strbuf *sb, double seconds, const struct figure_line *l);

#endif
