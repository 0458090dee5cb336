/*
 * stat.c: `sigprof stat`, counting mode, like `perf stat`.
 *
 * Where record samples, stat only counts: every event is a counter
 * (sample_period 0) opened for the workload with inherit and
 * enable_on_exec, so its threads and children are counted from their exec
 * on, and read once the workload has exited: exact totals, no records.
 * Without rings the counters follow the task on any CPU (cpu -1, as perf
 * stat opens them; perf.h says why not per CPU).
 *
 * A run:
 *   1. the -e events are parsed (one that does not: exit 2, nothing runs)
 *      and the command is looked up (127/126, workload.h);
 *   2. the counters are built: the default figures (the LKP seed reports'
 *      perf-stat figures, the signal and sigreturn tracepoints, the futex
 *      calls per operation through tracepoint filters) or the -e events;
 *   3. per run (-r N): fork the workload blocked, open the counters for it,
 *      release it, wait (printing the -I deltas), read the totals;
 *   4. print each figure's mean and %stddev over the runs, then the derived
 *      figures (MPKI, IPC, ...) computed per run from that run's counts.
 * A counter that cannot open is `<not supported>` with the reason and the
 * rest still count; a derived figure whose inputs were not counted is
 * `<not supported>` too, never 0.  Multiplexed counters (hardware ones when
 * the PMU has too few slots) are scaled by time enabled / time running and
 * marked with the share of the time they ran.  The figures go to stderr as
 * perf's do (the workload keeps stdout), or to -o FILE.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sigprof/collectors/registry.h"
#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/collectors/futex_op.h"
#include "sigprof/base/json.h"
#include "sigprof/base/options.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/commands/stat.h"
#include "sigprof/commands/target.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/workload.h"
#include "sigprof/kernel/perf.h"
#include "sigprof/base/files.h"

#define MAX_RUNS 100000
#define MIN_INTERVAL_MS 10 /* perf's floor too: shorter intervals measure mostly the reads */
#define MAX_INTERVAL_MS 3600000

bool counter_scale(const struct counter_reading *r, double *scaled, double *running_share)
{
	*running_share = 1;
	if (r->enabled == 0 || r->running == r->enabled) {
		*scaled = (double)r->value;
		return true;
	}
	if (r->running == 0) {
		*scaled = 0;
		*running_share = 0;
		return false;
	}
	*running_share = (double)r->running / (double)r->enabled;
	*scaled = (double)r->value * ((double)r->enabled / (double)r->running);
	return true;
}

struct counter_reading counter_delta(const struct counter_reading *now, const struct counter_reading *before)
{
	return (struct counter_reading){ .value = now->value - before->value,
					 .enabled = now->enabled - before->enabled,
					 .running = now->running - before->running };
}

/* ---- figures ---- */

enum stat_input stat_input_of(const struct perf_event_attr *attr)
{
	if (attr->type == PERF_TYPE_HARDWARE) {
		switch (attr->config) {
		case PERF_COUNT_HW_CPU_CYCLES:
			return STAT_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS:
			return STAT_INSTRUCTIONS;
		case PERF_COUNT_HW_CACHE_REFERENCES:
			return STAT_CACHE_REFERENCES;
		case PERF_COUNT_HW_CACHE_MISSES:
			return STAT_CACHE_MISSES;
		}
	}
	if (attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_TASK_CLOCK)
		return STAT_TASK_CLOCK;
	return STAT_NO_INPUT;
}

const char *stat_input_name(enum stat_input input)
{
	static const char *const names[STAT_INPUT_COUNT] = {
		[STAT_CYCLES] = "cycles",
		[STAT_INSTRUCTIONS] = "instructions",
		[STAT_CACHE_REFERENCES] = "cache-references",
		[STAT_CACHE_MISSES] = "cache-misses",
		[STAT_TASK_CLOCK] = "task-clock",
		[STAT_ELAPSED] = "elapsed",
	};
	return (unsigned)input < STAT_INPUT_COUNT ? names[input] : "none";
}

const struct derived_figure derived_figures[] = {
	{ "CPUs-utilized", "", STAT_TASK_CLOCK, STAT_ELAPSED, 1, 3, "task-clock / time elapsed" },
	{ "IPC", "", STAT_INSTRUCTIONS, STAT_CYCLES, 1, 2, "instructions / cycles" },
	{ "cache-miss-rate", "%", STAT_CACHE_MISSES, STAT_CACHE_REFERENCES, 100, 2,
	  "100 * cache-misses / cache-references" },
	{ "MPKI", "", STAT_CACHE_MISSES, STAT_INSTRUCTIONS, 1000, 2, "1000 * cache-misses / instructions" },
	{ "cycles-between-cache-misses", "", STAT_CYCLES, STAT_CACHE_MISSES, 1, 0, "cycles / cache-misses" },
};
const size_t derived_figure_count = ARRAY_SIZE(derived_figures);

int derived_value(const struct derived_figure *f, const struct stat_inputs *in, double *value)
{
	if (!in->counted[f->numerator] || !in->counted[f->denominator])
		return -ENODATA;
	if (in->value[f->denominator] == 0)
		return -EDOM;
	*value = f->factor * in->value[f->numerator] / in->value[f->denominator];
	return 0;
}

const struct stat_default_event stat_default_events[] = {
	{ "task-clock", "task-clock" },
	{ "context-switches", "context-switches" },
	{ "cpu-migrations", "cpu-migrations" },
	{ "page-faults", "page-faults" },
	{ "cycles", "cycles" },
	{ "instructions", "instructions" },
	{ "cache-references", "cache-references" },
	{ "cache-misses", "cache-misses" },
	{ "signals-generated", "signal:signal_generate" },
	{ "signals-delivered", "signal:signal_deliver" },
	{ "sigreturns", "syscalls:sys_enter_rt_sigreturn" },
	{ "lock-contentions", "lock:contention_begin" },
	{ "futex-calls", "syscalls:sys_enter_futex" },
};
const size_t stat_default_event_count = ARRAY_SIZE(stat_default_events);

/* ---- text layout ---- */

static void format_value(char *buf, size_t len, const struct figure_line *l)
{
	if (l->not_counted) {
		snprintf(buf, len, "<not supported>");
		return;
	}
	int decimals = l->decimals;
	if (decimals == 0 && l->mean != floor(l->mean))
		decimals = 2;
	snprintf(buf, len, "%.*f", decimals, l->mean);
}

static void format_rest(struct strbuf *sb, const struct figure_line *l)
{
	char value[64];
	format_value(value, sizeof(value), l);
	sb_addf(sb, "%18s %-4s %-30s", value, l->not_counted ? "" : l->unit, l->name);
	if (l->not_counted) {
		sb_addf(sb, "  %s", l->not_counted);
	} else {
		if (l->show_stddev)
			sb_addf(sb, "  \u00b1 %6.2f%%", l->stddev_percent);
		if (l->running_percent < 100)
			sb_addf(sb, "  (running %s)", SHARE(l->running_percent, 100));
	}
	if (l->note && *l->note)
		sb_addf(sb, "  # %s", l->note);
	while (sb->len && sb->buf[sb->len - 1] == ' ')
		sb->buf[--sb->len] = '\0';
	sb_addstr(sb, "\n");
}

void stat_format_line(struct strbuf *sb, const struct figure_line *l)
{
	format_rest(sb, l);
}

void stat_format_interval(struct strbuf *sb, double seconds, const struct figure_line *l)
{
	sb_addf(sb, "%14.6f ", seconds);
	format_rest(sb, l);
}

/* ---- the command ---- */

struct stat_args {
	struct strbuf events; /* -e (repeatable, joined with commas): the user's events instead of the defaults */
	unsigned runs;        /* -r */
	unsigned interval_ms; /* -I, 0 for none */
	const char *output;   /* -o, NULL for stderr */
	bool json;
	char **argv;          /* the workload; with a target only the window, or NULL */
	struct attach_target target; /* -p, -t, -a, -C, -G */
	struct result_parser *results; /* the workload's result lines (results.h); NULL until needed */
	bool no_results;      /* --no-results */
};

/* One counted event and what the runs read of it. */
struct counter {
	char name[128];        /* the figure's name: "futex-calls.WAKE", or the user's event as written */
	char event[256];       /* the event behind it, as perf names it (and its filter) */
	const char *unit;
	double divisor;        /* count / divisor = the shown value */
	enum stat_input input;
	bool hide_when_zero;   /* the per-op futex rows: only the ops the workload called */
	long spec;             /* its index in the event list, -1 when it could not be built */
	int error;             /* not counted: -errno, and why */
	char reason[256];
	double *values;        /* per run: the count, scaled when multiplexed */
	double *running;       /* per run: the share of its enabled time it ran */
	size_t nvalues;
	struct counter_reading last; /* -I: the previous read */
};

/* The -I deltas, kept for the JSON document. */
struct interval {
	double seconds;
	double *deltas; /* per counter; NAN where not counted */
};

struct stat_state {
	struct stat_args args;
	struct counter *counters;
	size_t ncounters, cap;
	struct event_list events;
	double *elapsed_ns;    /* per run */
	struct rusage *rusage; /* per run: the workload's, for the JSON's time.* figures */
	struct run_results {
		struct result_figure figures[RESULT_MAX];
		size_t count;
	} *results;            /* per run: the workload's own result figures, for the JSON's "results" */
	size_t runs_done;
	int last_exit;         /* the last run's exit code */
	unsigned failed_run;   /* the run (from 1) that sigprof could not carry out, which ended the series; 0: none */
	unsigned dropped_run;  /* the run (from 1) an interrupt cut short after whole runs: left out; 0: none */
	FILE *out;
	bool out_created;      /* -o FILE did not exist: removed again when nothing is written to it */
	bool out_started;      /* -o FILE emptied and written to */
	int out_error;         /* -o FILE could not be emptied: -errno */
	struct interval *intervals;
	size_t nintervals, intervals_cap;
	bool interval_header_done;
};

static void stat_epilogue(FILE *out)
{
	struct strbuf text = { 0 };
	sb_addstr(&text, "Default figures: task-clock (ms), context-switches, cpu-migrations, page-faults, cycles, "
			 "instructions, cache-references, cache-misses, signals generated and delivered, sigreturns, "
			 "futex calls per operation; derived per run:");
	for (size_t i = 0; i < derived_figure_count; i++)
		sb_addf(&text, "%s %s = %s", i ? ";" : "", derived_figures[i].name, derived_figures[i].formula);
	sb_addstr(&text, ".\nThe exit status is CMD's (its last run's; 128+N if signal N killed it); 127 if CMD "
			 "cannot be found; 2 for a bad option or event.");
	options_wrap(out, text.buf, 0, 0);
	sb_free(&text);
}

/* -e LIST, repeatable: the lists joined with commas. */
static int take_events(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	struct strbuf *events = field;
	if (!*arg) {
		snprintf(err, errlen, "-e needs a list of events");
		return -1;
	}
	if (events->len)
		sb_addf(events, ",");
	sb_addf(events, "%s", arg);
	return 0;
}

#define A struct stat_args
static const struct option_spec stat_specs[] = {
	{ .short_name = 'e', .long_name = "event", .arg = "LIST", .values = "EVENTS",
	  .help = "count these events instead of the defaults (comma-separated; names as in sigprof(1): perf's "
		  "generic names, SYSTEM:TRACEPOINT, PMU/TERMS/, libpfm4)", OPTION_CALLBACK_FIELD(A, events, take_events) },
	{ .short_name = 'r', .long_name = "repeat", .arg = "N",
	  .help = "run CMD N times; print each figure's mean and %stddev", .default_value = "1",
	  OPTION_UINT(A, runs, 1, MAX_RUNS), .what = "a number of runs" },
	{ .short_name = 'I', .long_name = "interval", .arg = "MS",
	  .help = "also print the counts of every MS milliseconds while CMD runs (at least "
		  OPTIONS_STR(MIN_INTERVAL_MS) ")",
	  OPTION_UINT(A, interval_ms, MIN_INTERVAL_MS, MAX_INTERVAL_MS), .what = "a number of milliseconds" },
	{ .short_name = 'o', .long_name = "output", .arg = "FILE",
	  .help = "write the figures to FILE instead of stderr", OPTION_STRING(A, output) },
	{ .long_name = "json", .help = "write the figures as a JSON document (docs/stat-json.md)", OPTION_TRUE(A, json) },
	RESULT_OPTION_SPECS(A, results, no_results),
	TARGET_OPTION_SPECS(A, target),
	OPTION_HELP_SPEC,
};
#undef A

const struct option_table stat_option_table = {
	.command = "sigprof stat",
	.operands = "[--] [CMD [ARGS...]]",
	.description = "Run CMD and count its events (its threads and children too): exact totals, no samples.  "
		       "With -p, -t, -a, -C or -G, count those tasks or CPUs instead, for as long as CMD runs, else "
		       "until Ctrl-C or every target exited.",
	.specs = stat_specs,
	.count = ARRAY_SIZE(stat_specs),
	.stop_at_operand = true,
	.epilogue = stat_epilogue,
};

/* The command line into a: 0, 1 for --help (printed), or -1 (said). */
static int parse_stat_args(int argc, char **argv, struct stat_args *a)
{
	a->runs = 1;
	struct options_parsed parsed;
	int ret = cli_parse_options(&stat_option_table, argc, argv, a, &parsed);
	if (ret)
		return ret;
	int operand = parsed.operand;
	if (a->interval_ms && a->runs > 1)
		return sp_error("stat: -I and -r cannot be combined (the intervals of one run, or the statistics of many)");
	bool targets = target_given(&a->target);
	if (operand >= argc && !targets)
		return sp_error("stat: no command to run and no target (sigprof stat [options] -- CMD [ARGS...], or -p "
				"PID, -t TID, -a, -G CGROUP)");
	if (targets && a->runs > 1)
		return sp_error("stat: -r repeats a command; the tasks of -p, -t, -a or -G run once");
	a->argv = operand < argc ? argv + operand : NULL;
	return 0;
}

/* ---- building the counters ---- */

/*
 * Make attr a counter: no samples, the times enabled and running with each
 * read (for scaling), off until the workload's exec.
 */
static void make_counting(struct perf_event_attr *attr)
{
	attr->size = sizeof(*attr);
	attr->freq = 0;
	attr->sample_period = 0;
	attr->sample_type = 0;
	attr->sample_id_all = 0;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->disabled = 1;
	attr->enable_on_exec = 1;
}

static struct counter *counter_add(struct stat_state *st, const char *name, const char *event)
{
	GROW(st->counters, st->cap, st->ncounters + 1);
	struct counter *c = &st->counters[st->ncounters++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->event, sizeof(c->event), "%s", event);
	c->unit = "";
	c->divisor = 1;
	c->input = STAT_NO_INPUT;
	c->spec = -1;
	return c;
}

/* Task and CPU clocks count nanoseconds: shown in ms, as perf shows them. */
static void set_unit(struct counter *c, const struct perf_event_attr *attr)
{
	c->input = stat_input_of(attr);
	if (attr->type == PERF_TYPE_SOFTWARE &&
	    (attr->config == PERF_COUNT_SW_TASK_CLOCK || attr->config == PERF_COUNT_SW_CPU_CLOCK)) {
		c->unit = "ms";
		c->divisor = 1e6;
	}
}

/* The counter of a parsed event. */
static void add_parsed(struct stat_state *st, struct counter *c, const struct pmu_event *ev, bool exclude_kernel)
{
	struct event_spec *spec = event_list_add(&st->events, c->name, "stat");
	/*
	 * The attr's own exclusions, which the event's modifiers (:u, :k, ...)
	 * override.  None for the hypervisor or guests, as perf stat: PMUs that
	 * count the whole package (msr, power, uncore) refuse exclude_hv.
	 */
	spec->attr.exclude_kernel = exclude_kernel && ev->source != PMU_SOURCE_TRACEPOINT;
	pmu_event_apply(ev, &spec->attr);
	make_counting(&spec->attr);
	if (ev->max_precise)
		pmu_event_max_precise(&spec->attr); /* when none opens, the open says why */
	spec->optional = true;
	c->spec = (long)(st->events.count - 1);
	set_unit(c, &spec->attr);
}

/*
 * A default figure's counter: its event through the event parser, which
 * resolves tracepoints in tracefs (mounting it as root) and says what is
 * missing; filter, when given, selects the tracepoint hits counted.  0, or
 * the parser's error with the reason in c (the figure is not supported).
 */
static int add_default_counter(struct stat_state *st, struct counter *c, const char *filter, bool exclude_kernel)
{
	struct pmu_event ev;
	c->error = pmu_event_parse(c->event, &ev, c->reason, sizeof(c->reason));
	if (c->error)
		return c->error;
	add_parsed(st, c, &ev, exclude_kernel);
	if (filter)
		st->events.specs[c->spec].tracepoint_filter = xstrdup(filter);
	return 0;
}

static void add_default_counters(struct stat_state *st, bool exclude_kernel)
{
	for (size_t i = 0; i < stat_default_event_count; i++)
		add_default_counter(st, counter_add(st, stat_default_events[i].name, stat_default_events[i].event), NULL,
				    exclude_kernel);
	/* futex(2) per command; the rows of commands the workload never called are left out */
	for (unsigned cmd = FOP_WAIT; cmd <= FOP_LOCK_PI2; cmd++) {
		char name[64], filter[128];
		snprintf(name, sizeof(name), "futex-calls.%s", futex_op_name((enum futex_op_id)cmd));
		futex_op_filter(cmd, filter, sizeof(filter));
		struct counter *c = counter_add(st, name, "syscalls:sys_enter_futex");
		c->hide_when_zero = true;
		add_default_counter(st, c, filter, exclude_kernel);
		/* the event as shown: the kernel's filter is part of it */
		snprintf(c->event, sizeof(c->event), "syscalls:sys_enter_futex if %s", filter);
	}
	/* the futex2 system calls, where this kernel has them */
	for (unsigned id = FOP_SYS_WAIT; id <= FOP_SYS_WAITV; id++) {
		char name[64], event[96];
		const char *call = futex_op_name((enum futex_op_id)id);
		snprintf(name, sizeof(name), "%s-calls", call);
		snprintf(event, sizeof(event), "syscalls:sys_enter_%s", call);
		struct counter *c = counter_add(st, name, event);
		c->hide_when_zero = true;
		if (add_default_counter(st, c, NULL, exclude_kernel) == -ENOENT)
			st->ncounters--; /* an older kernel without this call: not a figure here */
	}
}

/* The user's -e list; -EINVAL (with the one line printed) when an event does not parse. */
static int add_user_counters(struct stat_state *st, const char *list, bool exclude_kernel)
{
	char spec[256];
	const char *p = list;
	if (pmu_event_list_has_empty_item(list))
		return sp_error("stat: -e %s: an empty item in the list", QUOTED(list));
	while (pmu_event_list_next(&p, spec, sizeof(spec))) {
		struct pmu_event ev;
		char err[256];
		if (pmu_event_parse(spec, &ev, err, sizeof(err)) < 0)
			return sp_error("stat: -e: %s", err);
		for (size_t i = 0; i < st->ncounters; i++)
			if (strcmp(st->counters[i].name, spec) == 0)
				return sp_error("stat: -e %s: %s is named twice", QUOTED(list), QUOTED(spec));
		struct counter *c = counter_add(st, spec, spec);
		add_parsed(st, c, &ev, exclude_kernel);
	}
	if (!st->ncounters)
		return sp_error("stat: -e %s names no event", QUOTED(list));
	return 0;
}

/* ---- one run ---- */

static int read_counter(struct perf_session *s, const struct counter *c, struct counter_reading *r)
{
	return perf_session_read_total(s, (size_t)c->spec, &r->value, &r->enabled, &r->running);
}

static bool counting(const struct counter *c)
{
	return c->spec >= 0 && !c->error;
}

/* After the open: the counters the kernel refused, and why. */
static void note_open_failures(struct stat_state *st, struct perf_session *s)
{
	const struct opened_event *opened;
	perf_session_events(s, &opened);
	for (size_t i = 0; i < st->ncounters; i++) {
		struct counter *c = &st->counters[i];
		if (!counting(c) || !opened[c->spec].failed)
			continue;
		const struct event_spec *spec = opened[c->spec].spec;
		c->error = opened[c->spec].error;
		if (spec->tracepoint_filter && c->error == -EINVAL)
			snprintf(c->reason, sizeof(c->reason), "the kernel refused the tracepoint filter '%s'",
				 spec->tracepoint_filter);
		else
			snprintf(c->reason, sizeof(c->reason), "%s", perf_open_reason(c->error, &spec->attr));
	}
}

/*
 * -o FILE is opened before the first run, so that one that cannot be
 * written is an error before anything runs, but it is not truncated then:
 * output() empties it when the first figure is written.  A series that
 * fails before it has a figure leaves a previous FILE as it was (and
 * removes a FILE it created), where truncating at the open lost it.
 */
static int output_open(struct stat_state *st)
{
	st->out = stderr;
	const char *path = st->args.output;
	if (!path)
		return 0;
	if (strcmp(path, "-") == 0) { /* standard output, as record -o - */
		st->out = stdout;
		st->out_started = true;
		return 0;
	}
	/* never where another user points it: a link, FIFO or hard link of theirs (stream_output_open, util.h) */
	int fd = stream_output_open(path, &st->out_created);
	if (fd < 0)
		return fd;
	st->out = fdopen(fd, "w");
	if (!st->out) {
		int err = -errno;
		close(fd);
		return err;
	}
	return 0;
}

/* Where the figures go, -o FILE emptied on the first call (a FIFO or a terminal has nothing to empty). */
static FILE *output(struct stat_state *st)
{
	if (st->out != stderr && !st->out_started) {
		st->out_started = true;
		struct stat sb;
		if (fstat(fileno(st->out), &sb) == 0 && S_ISREG(sb.st_mode) && ftruncate(fileno(st->out), 0) < 0)
			st->out_error = -errno;
	}
	return st->out;
}

/* The end of -o FILE: closed, and removed when the series wrote nothing to the file it created. */
static void output_close(struct stat_state *st)
{
	if (!st->out || st->out == stderr)
		return;
	fclose(st->out);
	if (st->out_created && !st->out_started)
		unlink(st->args.output);
	st->out = NULL;
}

static void interval_header(struct stat_state *st)
{
	if (st->interval_header_done || st->args.json)
		return;
	fprintf(output(st), "#%13s %18s %-4s %s\n", "time", "counts", "unit", "figure");
	st->interval_header_done = true;
}

/* Print (or keep, for JSON) what each counter counted since the previous read. */
static void print_interval(struct stat_state *st, struct perf_session *s, double seconds)
{
	interval_header(st);
	GROW(st->intervals, st->intervals_cap, st->nintervals + 1);
	struct interval *iv = &st->intervals[st->nintervals++];
	iv->seconds = seconds;
	iv->deltas = xmalloc((st->ncounters ? st->ncounters : 1) * sizeof(double));
	struct strbuf line = { 0 };
	for (size_t i = 0; i < st->ncounters; i++) {
		struct counter *c = &st->counters[i];
		struct counter_reading now;
		iv->deltas[i] = NAN;
		if (!counting(c) || read_counter(s, c, &now) < 0)
			continue;
		struct counter_reading delta = counter_delta(&now, &c->last);
		c->last = now;
		double scaled, share;
		if (!counter_scale(&delta, &scaled, &share))
			scaled = 0;
		iv->deltas[i] = scaled / c->divisor;
		if (st->args.json || (c->hide_when_zero && delta.value == 0))
			continue;
		struct figure_line l = { .name = c->name, .unit = c->unit, .mean = scaled / c->divisor,
					 .decimals = c->divisor == 1 ? 0 : 2, .running_percent = 100 * share };
		sb_reset(&line);
		stat_format_interval(&line, seconds, &l);
		fputs(line.buf, output(st));
	}
	sb_free(&line);
	fflush(st->out);
}

/* Wait for the workload to exit, printing the -I deltas on the way; 0 with its wait status, or -errno. */
/* The run is over: the command exited, or without one an interrupt came or every -p/-t task exited. */
static bool run_over(struct stat_state *st, struct workload *w, int *status)
{
	if (w->pid > 0)
		return workload_check(w, status);
	*status = 0;
	return workload_interrupt_signal() || !target_alive(&st->args.target);
}

static int wait_workload(struct stat_state *st, struct workload *w, struct perf_session *s, uint64_t start,
			 int *status)
{
	uint64_t interval = (uint64_t)st->args.interval_ms * 1000000u;
	uint64_t next = start + interval;
	while (!run_over(st, w, status)) {
		/* tasks that are not sigprof's children say nothing when they exit: look every 100 ms */
		struct timespec poll_tasks = { 0, 100 * 1000 * 1000 }, timeout;
		struct timespec *wait_for = w->pid > 0 ? NULL : &poll_tasks;
		if (interval) {
			uint64_t now = now_monotonic_ns();
			if (now >= next) {
				print_interval(st, s, (double)(now - start) / 1e9);
				while (next <= now)
					next += interval; /* a late wake-up skips the intervals it missed */
				continue;
			}
			timeout = (struct timespec){ (time_t)((next - now) / 1000000000u),
						     (long)((next - now) % 1000000000u) };
			if (!wait_for || timeout.tv_sec == 0)
				wait_for = &timeout;
		}
		if (ppoll(NULL, 0, wait_for, &w->waitmask) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static void record_totals(struct stat_state *st, struct perf_session *s)
{
	for (size_t i = 0; i < st->ncounters; i++) {
		struct counter *c = &st->counters[i];
		struct counter_reading r;
		if (!counting(c))
			continue;
		int err = read_counter(s, c, &r);
		double scaled, share;
		if (err < 0) {
			c->error = err;
			snprintf(c->reason, sizeof(c->reason), "cannot read it: %s", strerror(-err));
			continue;
		}
		if (!counter_scale(&r, &scaled, &share)) {
			c->error = -ENODATA;
			snprintf(c->reason, sizeof(c->reason),
				 "never on the PMU: more counters than it has slots (count fewer events)");
			continue;
		}
		c->values = xrealloc(c->values, (c->nvalues + 1) * sizeof(double));
		c->running = xrealloc(c->running, (c->nvalues + 1) * sizeof(double));
		c->values[c->nvalues] = scaled;
		c->running[c->nvalues++] = share;
	}
}

/* Leave the last run out of the figures (an interrupted one: drop_last_run's caller says why). */
static void drop_last_run(struct stat_state *st)
{
	for (size_t i = 0; i < st->ncounters; i++)
		if (st->counters[i].nvalues == st->runs_done)
			st->counters[i].nvalues--;
	st->runs_done--;
}

/*
 * One run of the workload: 0 with its exit code in st->last_exit, or a
 * sigprof exit status (> 0) on failure, with why in why (for the caller's
 * one error line).
 */
static int run_once(struct stat_state *st, char *why, size_t whylen)
{
	struct workload w;
	int err = 0;
	if (st->args.argv)
		err = workload_start_captured(&w, st->args.argv,
					      result_parser_for_run(&st->args.results, st->args.no_results,
								    target_given(&st->args.target)));
	else
		workload_none(&w);
	if (err < 0) {
		snprintf(why, whylen, "cannot start the workload: %s", strerror(-err));
		return EXIT_USAGE;
	}
	struct perf_target target = { .pid = w.pid, .inherit = true };
	if (target_given(&st->args.target))
		target_perf(&st->args.target, &target);
	struct perf_session *session = NULL;
	char errbuf[512] = "";
	err = perf_session_open(st->events.specs, st->events.count, &target, 0, &session, errbuf, sizeof(errbuf));
	if (err < 0) {
		snprintf(why, whylen, "%s", errbuf);
		workload_abort(&w);
		return EXIT_USAGE;
	}
	note_open_failures(st, session);
	for (size_t i = 0; i < st->ncounters; i++)
		st->counters[i].last = (struct counter_reading){ 0 };
	/* from the release, as perf does: the parent may wake from the release well after the exec */
	uint64_t start = now_monotonic_ns();
	err = st->args.argv ? workload_release(&w) : 0;
	if (err < 0) {
		snprintf(why, whylen, "cannot run %s: %s", QUOTED(st->args.argv[0]), workload_release_error(err));
		perf_session_close(session);
		return workload_cannot_run_exit(err);
	}
	int status = 0;
	err = wait_workload(st, &w, session, start, &status);
	uint64_t elapsed = now_monotonic_ns() - start;
	if (err < 0) {
		snprintf(why, whylen, "waiting for the workload failed: %s", strerror(-err));
		workload_abort(&w);
		perf_session_close(session);
		return EXIT_USAGE;
	}
	if (st->args.interval_ms)
		print_interval(st, session, (double)elapsed / 1e9); /* the last, partial interval */
	record_totals(st, session);
	perf_session_disable(session);
	perf_session_close_detached(session);
	st->elapsed_ns = xrealloc(st->elapsed_ns, (st->runs_done + 1) * sizeof(double));
	st->rusage = xrealloc(st->rusage, (st->runs_done + 1) * sizeof(*st->rusage));
	st->rusage[st->runs_done] = w.rusage;
	st->results = xrealloc(st->results, (st->runs_done + 1) * sizeof(*st->results));
	const struct result_figure *figures;
	struct run_results *kept = &st->results[st->runs_done];
	kept->count = w.results ? result_parser_figures(w.results, &figures) : 0;
	if (kept->count)
		memcpy(kept->figures, figures, kept->count * sizeof(*figures));
	st->elapsed_ns[st->runs_done++] = (double)elapsed;
	st->last_exit = st->args.argv ? workload_exit_code(status) : 0;
	return 0;
}

/* ---- the figures over the runs ---- */

/* Every count shown in its unit: count / divisor. */
static void shown_values(const struct counter *c, double *out)
{
	for (size_t r = 0; r < c->nvalues; r++)
		out[r] = c->values[r] / c->divisor;
}

/* Whether a per-operation futex row is left out: no run counted any, or it could not count at all. */
static bool hidden(const struct counter *c)
{
	if (!c->hide_when_zero)
		return false;
	if (!counting(c))
		return true; /* its futex-calls row already says why */
	for (size_t r = 0; r < c->nvalues; r++)
		if (c->values[r] != 0)
			return false;
	return true;
}

static void counter_line(const struct stat_state *st, const struct counter *c, double *scratch,
			 struct figure_line *l)
{
	*l = (struct figure_line){ .name = c->name, .unit = c->unit, .decimals = c->divisor == 1 ? 0 : 2,
				   .show_stddev = st->runs_done > 1, .running_percent = 100,
				   .note = strcmp(c->name, c->event) ? c->event : NULL };
	if (!counting(c)) {
		l->not_counted = c->reason;
		return;
	}
	shown_values(c, scratch);
	l->mean = stat_mean(scratch, c->nvalues);
	l->stddev_percent = stat_stddev_percent(scratch, c->nvalues);
	l->running_percent = 100 * stat_mean(c->running, c->nvalues);
}

/* The counter that stands for input, or NULL when none was asked for. */
static const struct counter *input_counter(const struct stat_state *st, enum stat_input input)
{
	for (size_t i = 0; i < st->ncounters; i++)
		if (st->counters[i].input == input)
			return &st->counters[i];
	return NULL;
}

/*
 * A derived figure over the runs: false when it is not a figure of this
 * stat (an input counter was not asked for); otherwise the line, which is
 * `<not supported>` with the reason when an input was not counted or its
 * denominator was 0 in a run.
 */
static bool derived_line(const struct stat_state *st, const struct derived_figure *f, double *scratch,
			 char *reason, size_t reasonlen, struct figure_line *l)
{
	const struct counter *num = f->numerator == STAT_ELAPSED ? NULL : input_counter(st, f->numerator);
	const struct counter *den = f->denominator == STAT_ELAPSED ? NULL : input_counter(st, f->denominator);
	if ((f->numerator != STAT_ELAPSED && !num) || (f->denominator != STAT_ELAPSED && !den))
		return false;
	*l = (struct figure_line){ .name = f->name, .unit = f->unit, .decimals = f->decimals,
				   .show_stddev = st->runs_done > 1, .running_percent = 100, .note = f->formula };
	size_t n = 0;
	reason[0] = '\0';
	for (size_t r = 0; r < st->runs_done && !reason[0]; r++) {
		struct stat_inputs in = { 0 };
		const struct counter *inputs[] = { num, den };
		for (size_t k = 0; k < 2; k++) {
			const struct counter *c = inputs[k];
			enum stat_input which = k ? f->denominator : f->numerator;
			if (which == STAT_ELAPSED) {
				in.value[which] = st->elapsed_ns[r];
				in.counted[which] = true;
			} else if (counting(c) && r < c->nvalues) {
				in.value[which] = c->values[r];
				in.counted[which] = true;
			}
		}
		double v;
		int err = derived_value(f, &in, &v);
		if (err == -ENODATA)
			snprintf(reason, reasonlen, "%s not counted", !in.counted[f->numerator] && !in.counted[f->denominator]
				 ? "its inputs were" : in.counted[f->numerator] ? stat_input_name(f->denominator)
				 : stat_input_name(f->numerator));
		else if (err == -EDOM)
			snprintf(reason, reasonlen, "%s counted 0%s", stat_input_name(f->denominator),
				 st->runs_done > 1 ? " in a run" : "");
		else
			scratch[n++] = v;
	}
	if (reason[0]) {
		l->not_counted = reason;
		return true;
	}
	l->mean = stat_mean(scratch, n);
	l->stddev_percent = stat_stddev_percent(scratch, n);
	return true;
}

/* The command, or the target ("-p 1234") and the command that was its window. */
static void command_line(const struct stat_args *a, struct strbuf *sb)
{
	if (target_given(&a->target)) {
		char text[512];
		target_describe(&a->target, text, sizeof(text));
		sb_addf(sb, "%s%s", text, a->argv ? " -- " : "");
	}
	for (char **p = a->argv; p && *p; p++) {
		if (p != a->argv)
			sb_addstr(sb, " ");
		sb_add_printable(sb, *p);
	}
}

static void print_text(struct stat_state *st)
{
	struct strbuf sb = { 0 };
	double *scratch = xmalloc((st->runs_done ? st->runs_done : 1) * sizeof(double));
	sb_addstr(&sb, "\n Counter statistics for '");
	command_line(&st->args, &sb);
	sb_addf(&sb, "'");
	if (st->runs_done > 1)
		sb_addf(&sb, " (%zu runs: mean, \u00b1 population %%stddev)", st->runs_done);
	if (st->failed_run)
		sb_addf(&sb, " (%zu of %u runs: run %u failed)", st->runs_done, st->args.runs, st->failed_run);
	else if (st->dropped_run)
		sb_addf(&sb, " (interrupted in run %u of %u, left out)", st->dropped_run, st->args.runs);
	else if (st->runs_done < st->args.runs)
		sb_addf(&sb, " (interrupted after %zu of %u runs)", st->runs_done, st->args.runs);
	sb_addstr(&sb, ":\n\n");
	struct figure_line l;
	for (size_t i = 0; i < st->ncounters; i++) {
		if (hidden(&st->counters[i]))
			continue;
		counter_line(st, &st->counters[i], scratch, &l);
		stat_format_line(&sb, &l);
	}
	char reason[256];
	bool any_derived = false;
	for (size_t i = 0; i < derived_figure_count; i++) {
		if (!derived_line(st, &derived_figures[i], scratch, reason, sizeof(reason), &l))
			continue;
		if (!any_derived)
			sb_addstr(&sb, "\n");
		any_derived = true;
		stat_format_line(&sb, &l);
	}
	for (size_t r = 0; r < st->runs_done; r++)
		scratch[r] = st->elapsed_ns[r] / 1e9;
	l = (struct figure_line){ .name = "time-elapsed", .unit = "s", .decimals = 6,
				  .mean = stat_mean(scratch, st->runs_done),
				  .show_stddev = st->runs_done > 1,
				  .stddev_percent = stat_stddev_percent(scratch, st->runs_done), .running_percent = 100 };
	sb_addstr(&sb, "\n");
	stat_format_line(&sb, &l);
	sb_addstr(&sb, "\n");
	fputs(sb.buf, output(st));
	sb_free(&sb);
	free(scratch);
}

/* Whole numbers (exact counts) without decimals. */
static int json_decimals(double v)
{
	return v == floor(v) && fabs(v) < 1e15 ? 0 : 6;
}

/* A figure's object: "event" for a counter, "formula" for a derived figure. */
static void json_figure(struct json_writer *w, const struct figure_line *l, const char *key, const char *source,
			const double *values, size_t n)
{
	json_object_begin(w, NULL);
	json_string(w, "name", l->name);
	json_string(w, key, source);
	json_string(w, "unit", l->unit);
	json_bool(w, "supported", !l->not_counted);
	if (l->not_counted) {
		json_string(w, "reason", l->not_counted);
	} else {
		json_double(w, "mean", l->mean, json_decimals(l->mean));
		json_double(w, "stddev_percent", l->stddev_percent, 4);
		json_double(w, "running_percent", l->running_percent, 2);
		json_array_begin(w, "values");
		for (size_t r = 0; r < n; r++)
			json_double(w, NULL, values[r], json_decimals(values[r]));
		json_end(w);
	}
	json_end(w);
}

static void print_json(struct stat_state *st)
{
	struct json_writer w;
	json_init(&w, output(st));
	json_object_begin(&w, NULL);
	json_u64(&w, "version", 1);
	json_array_begin(&w, "command");
	for (char **p = st->args.argv; p && *p; p++)
		json_string(&w, NULL, *p);
	json_end(&w);
	char target[512] = "";
	target_describe(&st->args.target, target, sizeof(target));
	json_string(&w, "target", target);
	json_u64(&w, "runs", st->runs_done);
	json_u64(&w, "runs_asked", st->args.runs);
	if (st->failed_run)
		json_u64(&w, "failed_run", st->failed_run);
	else
		json_null(&w, "failed_run");
	if (st->dropped_run)
		json_u64(&w, "interrupted_run", st->dropped_run);
	else
		json_null(&w, "interrupted_run");
	json_i64(&w, "exit_status", st->last_exit);
	double *scratch = xmalloc((st->runs_done ? st->runs_done : 1) * sizeof(double));
	struct figure_line l;
	json_array_begin(&w, "figures");
	for (size_t i = 0; i < st->ncounters; i++) {
		const struct counter *c = &st->counters[i];
		if (hidden(c))
			continue;
		counter_line(st, c, scratch, &l);
		json_figure(&w, &l, "event", c->event, scratch, c->nvalues);
	}
	json_end(&w);
	json_array_begin(&w, "derived");
	char reason[256];
	for (size_t i = 0; i < derived_figure_count; i++) {
		if (!derived_line(st, &derived_figures[i], scratch, reason, sizeof(reason), &l))
			continue;
		json_figure(&w, &l, "formula", derived_figures[i].formula, scratch, l.not_counted ? 0 : st->runs_done);
	}
	json_end(&w);
	for (size_t r = 0; r < st->runs_done; r++)
		scratch[r] = st->elapsed_ns[r] / 1e9;
	json_object_begin(&w, "elapsed_s");
	json_double(&w, "mean", stat_mean(scratch, st->runs_done), 6);
	json_double(&w, "stddev_percent", stat_stddev_percent(scratch, st->runs_done), 4);
	json_array_begin(&w, "values");
	for (size_t r = 0; r < st->runs_done; r++)
		json_double(&w, NULL, scratch[r], 6);
	json_end(&w);
	json_end(&w);
	/* the workload's rusage per run under LKP's time.* names (sigprof diff reads them) */
	/* the workload's own result figures per run (results.h; sigprof diff's first rows) */
	json_array_begin(&w, "results");
	for (size_t r = 0; r < st->runs_done; r++) {
		json_object_begin(&w, NULL);
		for (size_t i = 0; i < st->results[r].count; i++)
			json_significant(&w, st->results[r].figures[i].name, st->results[r].figures[i].value, 17);
		json_end(&w);
	}
	json_end(&w);
	json_array_begin(&w, "rusage");
	for (size_t r = 0; r < st->runs_done; r++) {
		struct time_figure figures[WORKLOAD_TIME_FIGURES];
		size_t n = workload_time_figures(&st->rusage[r], st->elapsed_ns[r] / 1e9, figures);
		json_object_begin(&w, NULL);
		for (size_t i = 0; i < n; i++)
			json_double(&w, figures[i].name, figures[i].value, json_decimals(figures[i].value));
		json_end(&w);
	}
	json_end(&w);
	if (st->args.interval_ms) {
		json_array_begin(&w, "intervals");
		for (size_t k = 0; k < st->nintervals; k++) {
			json_object_begin(&w, NULL);
			json_double(&w, "time_s", st->intervals[k].seconds, 6);
			json_object_begin(&w, "values");
			for (size_t i = 0; i < st->ncounters; i++)
				if (!isnan(st->intervals[k].deltas[i]))
					json_double(&w, st->counters[i].name, st->intervals[k].deltas[i],
						    json_decimals(st->intervals[k].deltas[i]));
			json_end(&w);
			json_end(&w);
		}
		json_end(&w);
	}
	json_finish(&w);
	free(scratch);
}

static void stat_free(struct stat_state *st)
{
	for (size_t i = 0; i < st->ncounters; i++) {
		free(st->counters[i].values);
		free(st->counters[i].running);
	}
	for (size_t k = 0; k < st->nintervals; k++)
		free(st->intervals[k].deltas);
	free(st->intervals);
	free(st->counters);
	sb_free(&st->args.events);
	free(st->elapsed_ns);
	free(st->rusage);
	free(st->results);
	result_parser_free(st->args.results);
	event_list_free(&st->events);
	target_free(&st->args.target);
	output_close(st);
}

/* The counters and targets stat_run() will use: 0, or the exit status to return (said). */
static int stat_prepare(struct stat_state *st, char *why, size_t len)
{
	struct stat_args *a = &st->args;
	bool exclude_kernel = !kernel_samples_allowed();
	if (a->events.len && add_user_counters(st, a->events.buf, exclude_kernel) < 0)
		return EXIT_USAGE;
	int found = a->argv ? workload_find(a->argv[0]) : 0;
	if (found < 0) {
		sp_error("stat: cannot run %s: %s", QUOTED(a->argv[0]),
			 workload_find_error(a->argv[0], found));
		return workload_cannot_run_exit(found);
	}
	if (target_given(&a->target) && target_resolve(&a->target, why, len) < 0) {
		sp_error("stat: %s", why);
		return EXIT_USAGE;
	}
	if (!a->events.len)
		add_default_counters(st, exclude_kernel);
	if (target_given(&a->target))
		event_list_enable_at_open(&st->events); /* tasks that already run: no exec to wait for */
	return 0;
}

/* -o FILE opened (output_open), or -1 with the reason said. */
static int stat_open_output(struct stat_state *st)
{
	const struct stat_args *a = &st->args;
	int err = output_open(st);
	if (err == -EPERM)
		sp_error("stat: -o %s is a symbolic link another user owns or could swap (a directory others can write), "
			 "or another user's FIFO or device: not opened (give a file of your own)",
			 QUOTED(a->output));
	else if (err == -EEXIST)
		sp_error("stat: -o %s is another user's file in a directory that is not theirs: not written (they could "
			 "change the figures after; remove it or give another name)", QUOTED(a->output));
	else if (err == -EMLINK)
		sp_error("stat: -o %s has other hard links: writing it would change them too (give another file)",
			 QUOTED(a->output));
	else if (err == -ENXIO)
		sp_error("stat: -o %s is a FIFO that no process reads", QUOTED(a->output));
	else if (err < 0 && !a->output[0])
		sp_error("stat: -o '': an empty file name");
	else if (err < 0)
		sp_error("stat: cannot create %s: %s", QUOTED(a->output), strerror(-err));
	return err < 0 ? -1 : 0;
}

/*
 * The -r runs, until one fails or the user interrupts: the failed run's
 * status (its reason in why), or 0.
 */
static int stat_runs(struct stat_state *st, char *why, size_t len)
{
	const struct stat_args *a = &st->args;
	int failed = 0;
	for (unsigned r = 0; r < a->runs && !failed; r++) {
		failed = run_once(st, why, len);
		if (failed) {
			st->failed_run = r + 1;
		} else if (workload_interrupt_signal()) {
			/*
			 * The user stopped it: the runs so far are the result.  The
			 * run the interrupt cut short is one only when it is the
			 * only run; beside whole runs it would pull their mean.
			 */
			if (st->runs_done > 1) {
				drop_last_run(st);
				st->dropped_run = r + 1;
			}
			break;
		}
	}
	if (failed)
		st->last_exit = failed; /* sigprof's exit status, which the JSON gives too */
	return failed;
}

/*
 * `sigprof stat`'s work, as steps: the counters and targets, the output,
 * the runs, the figures written.  It acquires nothing of its own: cmd_stat
 * frees the state, whatever step stopped.
 */
static int stat_run(struct stat_state *st)
{
	struct stat_args *a = &st->args;
	char why[768] = "";
	int ret = stat_prepare(st, why, sizeof(why));
	if (ret)
		return ret;
	if (stat_open_output(st) < 0)
		return EXIT_WRITE_FAILED;
	int failed = stat_runs(st, why, sizeof(why));
	if (failed && !st->runs_done) {
		if (!a->output || st->out_started)
			sp_error("stat: %s", why);
		else
			sp_error("stat: %s; %s %s", why, a->output, st->out_created ? "not written" : "left as it was");
		return failed;
	}
	/* the runs done are figures, even when a later one failed: written, then the failure */
	if (a->json)
		print_json(st);
	else
		print_text(st);
	int write_err = fflush(st->out) != 0 ? errno : st->out_error ? -st->out_error : ferror(st->out) ? EIO : 0;
	if (write_err) {
		sp_error("stat: writing %s failed: %s", a->output ? a->output : "the figures", strerror(write_err));
		return EXIT_WRITE_FAILED;
	}
	if (failed) {
		sp_error("stat: run %u of %u: %s; the figures of the %zu run%s before it %s%s", st->failed_run, a->runs,
			 why, st->runs_done, st->runs_done == 1 ? "" : "s", a->output ? "are in " : "are printed above",
			 a->output ? a->output : "");
		return failed;
	}
	return st->last_exit;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_state st = { 0 };
	int parsed = parse_stat_args(argc, argv, &st.args);
	if (parsed) {
		sb_free(&st.args.events);
		result_parser_free(st.args.results);
		return parsed > 0 ? 0 : EXIT_USAGE;
	}
	int ret = stat_run(&st);
	stat_free(&st);
	return ret;
}
