/*
 * record.c: `sigprof record`, running a workload under the collectors.
 *
 * The order of a run:
 *   1. check the command exists (before touching any file, so a typo costs
 *      no previous recording);
 *   2. ask each collector for its events; create the data file under a
 *      temporary name (before any signal is blocked: see open_output());
 *   3. fork the workload blocked on a pipe (workload.h), copy the kernel's
 *      symbols, open the events for it on every CPU (inherit +
 *      enable_on_exec; attached targets: enabled at open), write EVENT,
 *      META and KALLSYMS records, flush, and rename the file into place;
 *   4. release it; a second, close-on-exec pipe tells whether exec worked;
 *   5. drain the ring buffers into the file until the workload exits,
 *      forwarding SIGINT/SIGTERM/SIGHUP to it;
 *   6. read the exact totals, write TOTALS and FINISH, print one line.
 * With --switch-output the file is cut in pieces (FILE.TIMESTAMP): at a
 * round's end, once the piece reached its size or age, the piece gets the
 * TOTALS of its window and a FINISH flagged switched, is closed, and the
 * next one starts as a recording of its own would (EVENT, META, KALLSYMS
 * records, then COMM and MMAP2 of the workload's tasks read from /proc), is
 * published, and the drain goes on into it.
 * Signals are blocked except inside ppoll(), so the drain loop wakes for
 * them without races; a ppoll() that finds a ring ready returns without
 * running their handlers, so the loop then takes them itself
 * (workload_take_pending_signals()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sigprof/collectors/registry.h"
#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/kernel_refs.h"
#include "sigprof/base/options.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/commands/synthesize.h"
#include "sigprof/base/term.h"
#include "sigprof/view/view.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/commands/target.h"
#include "sigprof/base/util.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/commands/workload.h"
#include "sigprof/commands/workload_cgroup.h"
#include "sigprof/commands/frame_pointers.h"
#include "sigprof/commands/recorder_priority.h"
#include "sigprof/kernel/perf.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/files.h"

#define DEFAULT_FREQUENCY 4000
#define DEFAULT_RING_PAGES 1024 /* 4 MiB per CPU: tracepoint bursts (a signal storm) outrun smaller ones */
/*
 * 16 MiB per CPU when an event copies user stacks: its records are 4-8 KiB,
 * twenty times a callchain's, and a futex burst filled 4 MiB faster than
 * the drain loop woke (perf bench futex hash: 1144 records lost in 1 run of
 * 3 at 4 MiB, none in 3 at 16 MiB; docs/performance.md).
 */
#define DWARF_RING_PAGES 4096
/*
 * What the writer thread may hold while write(2) stalls (sp_writer_start_async):
 * at the 300 MB/s of a futex benchmark under the DWARF defaults, 64 MiB cover a
 * 200 ms stall on top of the rings.
 */
#define WRITE_QUEUE_BYTES (64u << 20)
/* The drain loop hands a partly filled buffer to the writer this often, so the file lags little behind. */
#define FLUSH_INTERVAL_NS (100 * 1000 * 1000ull)

struct record_args {
	const char *output;
	struct record_options opts;
	char **argv; /* the workload */
	unsigned ring_pages;
	bool ring_pages_chosen; /* -m given: no default applies */
	bool quiet;
	/*
	 * -e/--event/--collectors: the collectors named (comma-separated), and
	 * the events named that are no collector's name.  With neither, every
	 * collector of the default set runs.
	 */
	struct strbuf collectors;
	struct pmu_event *user_events;
	size_t nuser_events, user_events_cap;
	bool no_kallsyms;       /* --no-kallsyms: do not carry the kernel's symbol table */
	int zstd_level;         /* -z LEVEL (default SP_ZSTD_DEFAULT_LEVEL); 0: --no-compress, a version 1 file */
	const char *switch_spec; /* --switch-output as given, or NULL */
	uint64_t switch_bytes;  /* a new piece when the current one has this many bytes in its file (0: never) */
	uint64_t switch_ns;     /* ... or is this old (0: never) */
	struct attach_target target;   /* -p, -t, -a, -C, -G: what runs already; argv is then only the window, or NULL */
	unsigned runs;          /* -r N: N recordings, FILE's name numbered (record_run_output()) */
	bool recorded;          /* the last record_run() wrote its file whole (its workload may still have failed) */
	struct result_parser *results; /* the workload's result lines (results.h); NULL: --no-results */
	bool no_results;
	unsigned realtime;      /* --realtime PRIO: the recorder's SCHED_FIFO priority while it drains (0: none) */
	bool realtime_chosen;
	bool inherit;           /* --inherit: follow CMD with inherited per-task events, not a cgroup of its own */
	char followed[512];     /* how this run follows CMD, for the file's "followed" (workload_cgroup.h) */
};

/*
 * --switch-output: SIZE with a unit B, K, M or G (powers of 1024), or TIME
 * with s, m, h or d, as perf takes them.  0 or -EINVAL.
 */
static int parse_switch_output(const char *s, struct record_args *a)
{
	static const struct { char unit; uint64_t bytes, ns; } units[] = {
		{ 'B', 1, 0 }, { 'K', 1ull << 10, 0 }, { 'M', 1ull << 20, 0 }, { 'G', 1ull << 30, 0 },
		{ 's', 0, 1000000000ull }, { 'm', 0, 60000000000ull }, { 'h', 0, 3600000000000ull },
		{ 'd', 0, 86400000000000ull },
	};
	size_t len = strlen(s);
	if (len < 2)
		return -EINVAL;
	char digits[32];
	if (len - 1 >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, len - 1);
	digits[len - 1] = '\0';
	uint64_t n;
	if (parse_u64(digits, 1, 1ull << 40, &n) < 0)
		return -EINVAL;
	char unit = s[len - 1];
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (units[i].unit != unit && !(units[i].bytes > 1 && units[i].unit == unit - 'a' + 'A'))
			continue;
		a->switch_bytes = n * units[i].bytes;
		a->switch_ns = n * units[i].ns;
		a->switch_spec = s;
		return 0;
	}
	return -EINVAL;
}
#define MAX_RECORD_RUNS 1000

/* fp | none | dwarf[,SIZE]; SIZE a multiple of 8 from 8 to MAX_STACK_USER_SIZE bytes. */
static int parse_call_graph(const char *s, struct record_options *opts)
{
	uint64_t size = DEFAULT_STACK_USER_SIZE;
	if (strcmp(s, "fp") == 0) {
		opts->call_graph = CALL_GRAPH_FP;
	} else if (strcmp(s, "none") == 0) {
		opts->call_graph = CALL_GRAPH_NONE;
	} else if (strncmp(s, "dwarf", 5) == 0 && (s[5] == '\0' || s[5] == ',')) {
		if (s[5] == ',' && (parse_u64(s + 6, 8, MAX_STACK_USER_SIZE, &size) < 0 || size % 8))
			return -ERANGE;
		opts->call_graph = CALL_GRAPH_DWARF;
	} else {
		return -EINVAL;
	}
	opts->stack_user_size = (uint32_t)size;
	opts->call_graph_chosen = true;
	return 0;
}

static int max_sample_rate(void)
{
	return read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
}

/* Whether name is an item of the comma-separated list. */
static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == len && strncmp(p, name, len) == 0)
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/*
 * One -e argument: each item that names a collector selects it; any other
 * item is an event, parsed now so that a bad name costs nothing (no file,
 * no workload).
 */
/* Whether ev is the hardware cycles event (cycles, cpu-cycles, with modifiers) and this machine has no PMU for it. */
static bool cycles_without_pmu(const struct pmu_event *ev)
{
	if (ev->attr.type != PERF_TYPE_HARDWARE || ev->attr.config != PERF_COUNT_HW_CPU_CYCLES)
		return false;
	struct perf_event_attr probe = ev->attr;
	probe.size = sizeof(probe);
	probe.sample_period = 0;
	probe.precise_ip = 0;
	int err = perf_event_probe(&probe);
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

/* -e LIST: each item a collector's name or an event (pmu.h), taken into a->collectors or a->user_events. */
static int take_events(const struct option_spec *s, void *field, const char *list, char *err, size_t errlen)
{
	(void)s;
	struct record_args *a = field;
	char item[256], why[512];
	bool any = false;
	if (pmu_event_list_has_empty_item(list)) {
		snprintf(err, errlen, "-e %s: an empty item in the list", QUOTED(list));
		return -1;
	}
	while (pmu_event_list_next(&list, item, sizeof(item))) {
		any = true;
		if (collector_find(item)) {
			sb_addf(&a->collectors, "%s%s", a->collectors.len ? "," : "", item);
			continue;
		}
		GROW(a->user_events, a->user_events_cap, a->nuser_events + 1);
		int perr = pmu_event_parse(item, &a->user_events[a->nuser_events], why, sizeof(why));
		if (perr < 0 && perr == -ENOENT && !strpbrk(item, ":/")) {
			/* a plain word: it may have been meant as a collector */
			struct strbuf known = { 0 };
			const char *near = collector_names(item, &known);
			if (near)
				snprintf(err, errlen, "-e: %s; nor a collector: did you mean '%s'?", why, near);
			else
				snprintf(err, errlen, "-e: %s; nor a collector (%s)", why, known.buf);
			sb_free(&known);
			return -1;
		}
		if (perr < 0) {
			snprintf(err, errlen, "-e: %s", why);
			return -1;
		}
		if (cycles_without_pmu(&a->user_events[a->nuser_events])) {
			/* as the default does: the cpu collector samples cpu-clock where no PMU counts cycles */
			sp_warn("record: -e %s: no hardware PMU counts cycles here (a VM?): sampling cpu-clock instead, as "
				"the cpu collector does", item);
			if (!strchr(item, ':')) {
				sb_addf(&a->collectors, "%s%s", a->collectors.len ? "," : "", "cpu");
				continue;
			}
			struct pmu_event *ev = &a->user_events[a->nuser_events];
			ev->attr.type = PERF_TYPE_SOFTWARE;
			ev->attr.config = PERF_COUNT_SW_CPU_CLOCK;
			ev->attr.precise_ip = 0;
			ev->max_precise = false;
			snprintf(ev->name, sizeof(ev->name), "cpu-clock%s", strchr(item, ':'));
		}
		a->nuser_events++;
	}
	if (!any) {
		snprintf(err, errlen, "-e: no collector or event named");
		return -1;
	}
	return 0;
}

static void record_args_free(struct record_args *a)
{
	target_free(&a->target);
	sb_free(&a->collectors);
	free(a->user_events);
	result_parser_free(a->results);
}

static void record_epilogue(FILE *out)
{
	fprintf(out, "The exit status is the workload's (128+N if signal N killed it); 127 if CMD cannot be found.\n");
}

/* --call-graph's help names the sizes: keep it in step with collector.h. */
_Static_assert(DEFAULT_STACK_USER_SIZE == 8192 && WAIT_STACK_USER_SIZE == 8192 && CPU_SIGNAL_STACK_USER_SIZE == 8192 &&
		       CPU_SHORT_STACK_USER_SIZE == 2048 && CPU_LONG_STACK_USER_SIZE == 32768 &&
		       CPU_STACK_COPY_HZ == 125,
	       "record's --call-graph help");

static int take_frequency(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	struct record_args *a = field;
	uint64_t v;
	if (parse_u64(arg, 1, (uint64_t)max_sample_rate(), &v) < 0) {
		snprintf(err, errlen, "-F %s: not a frequency between 1 and %d Hz (kernel.perf_event_max_sample_rate)",
			 QUOTED(arg), max_sample_rate());
		return -1;
	}
	a->opts.frequency = v;
	a->opts.period = 0;
	return 0;
}

/* -g (no argument: fp) and --call-graph MODE. */
static int take_call_graph(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	struct record_args *a = field;
	int ret = parse_call_graph(arg ? arg : "fp", &a->opts);
	if (ret == -ERANGE)
		snprintf(err, errlen, "--call-graph %s: the stack size must be a multiple of 8 from 8 to %u bytes",
			 QUOTED(arg), MAX_STACK_USER_SIZE);
	else if (ret < 0)
		snprintf(err, errlen, "--call-graph %s: expected fp, dwarf[,SIZE] or none", QUOTED(arg));
	return ret < 0 ? -1 : 0;
}

static int take_ring_pages(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	uint64_t v;
	if (parse_u64(arg, 8, 1u << 20, &v) < 0 || (v & (v - 1))) {
		snprintf(err, errlen, "-m %s: expected a power of two from 8 to 1048576", QUOTED(arg));
		return -1;
	}
	*(unsigned *)field = (unsigned)v;
	return 0;
}

static int take_zstd_level(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	uint64_t v;
	if (parse_u64(arg, 1, (uint64_t)sp_zstd_max_level(), &v) < 0) {
		snprintf(err, errlen, "-z %s: expected a zstd compression level from 1 to %d", QUOTED(arg),
			 sp_zstd_max_level());
		return -1;
	}
	*(int *)field = (int)v;
	return 0;
}

static int take_switch_output(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	if (parse_switch_output(arg, field) < 0) {
		snprintf(err, errlen, "--switch-output %s: expected a size (10M; units B, K, M, G) or a time (30s; units s, "
			 "m, h, d)", QUOTED(arg));
		return -1;
	}
	return 0;
}

/* --futex's values, in the order of the option's values */
static const int futex_modes[] = { FUTEX_TRACE, FUTEX_SAMPLE, FUTEX_COUNT };

#define A struct record_args
static const struct option_spec record_specs[] = {
	{ .short_name = 'o', .long_name = "output", .arg = "FILE", .default_value = "sigprof.data",
	  .help = "write to FILE, a new file renamed into place once the workload starts; an existing one is "
		  "renamed FILE.old then.  FILE must be a regular file or absent (never a symbolic link, device or "
		  "FIFO); '-': stdout, for 'sigprof report -i -' (the workload's stdout then goes to stderr)",
	  OPTION_STRING(A, output) },
	{ .short_name = 'e', .long_name = "event", .alias = "collectors", .arg = "LIST",
	  .values = "COLLECTOR|EVENT,...", .flags = OPTION_REPEATABLE,
	  .help = "only these collectors and events (comma-separated, repeatable; default: every collector this "
		  "machine supports).  An EVENT is a generic name (cache-misses, cpu-clock), SYSTEM:NAME, "
		  "PMU/TERMS/ or a libpfm4 name, with :u :k :p :P... modifiers (see sigprof(1) and 'sigprof list')",
	  OPTION_CALLBACK(take_events) },
	{ .short_name = 'F', .long_name = "freq", .arg = "HZ", .group = 1,
	  .help = "samples per second per CPU", .default_value = OPTIONS_STR(DEFAULT_FREQUENCY),
	  OPTION_CALLBACK(take_frequency) },
	{ .short_name = 'c', .long_name = "count", .arg = "PERIOD", .group = 1,
	  .help = "sample every PERIOD events instead of a frequency",
	  OPTION_UINT(A, opts.period, 1, UINT64_MAX >> 1), .what = "a period" },
	{ .short_name = 'g', .group = 2, .help = "same as --call-graph fp", OPTION_CALLBACK(take_call_graph) },
	{ .long_name = "call-graph", .arg = "MODE", .values = "fp|dwarf[,SIZE]|none", .group = 2,
	  .help = "fp: kernel and frame-pointer user stacks; dwarf[,SIZE]: kernel stacks and SIZE bytes of user "
		  "stack (default 8192) unwound at report time; none: the sampled IP only",
	  .default_value = "each collector's own: cpu dwarf,2048 completed from dwarf,32768 copies at 125 Hz, signal, "
			   "sched and futex short keys and dwarf,8192 copies; see sigprof(1)",
	  OPTION_CALLBACK(take_call_graph) },
	{ .long_name = "futex", .arg = "MODE", .values = "trace|sample|count",
	  .help = "trace: every futex call; sample (default): every call while a 10 ms window stays under the "
		  "rate bound, weighted samples above it; count: exact totals only.  Calls per operation are "
		  "exact in trace and count (a filtered counter per operation); in sample mode while under the "
		  "bound, estimated above it", OPTION_CHOICE(A, opts.futex), .choices = futex_modes },
	{ .short_name = 'm', .long_name = "mmap-pages", .arg = "N", .values = "PAGES",
	  .help = "ring buffer data pages per CPU, a power of two",
	  .default_value = OPTIONS_STR(DEFAULT_RING_PAGES) "; " OPTIONS_STR(DWARF_RING_PAGES)
			   " when an event copies user stacks",
	  OPTION_CALLBACK_FIELD(A, ring_pages, take_ring_pages) },
	{ .long_name = "no-kallsyms",
	  .help = "do not copy the kernel's symbol table into FILE (reports then read /proc/kallsyms, which is "
		  "only right on this machine and this boot)", OPTION_TRUE(A, no_kallsyms) },
	{ .short_name = 'z', .long_name = "compression-level", .arg = "LEVEL", .group = 3,
	  .help = "compress the records with zstd at LEVEL (1 fastest to 22 smallest), a chunk at a time, by the "
		  "writer thread", .default_value = OPTIONS_STR(SP_ZSTD_DEFAULT_LEVEL),
	  OPTION_CALLBACK_FIELD(A, zstd_level, take_zstd_level) },
	{ .long_name = "no-compress", .group = 3,
	  .help = "write the records uncompressed (a format version 1 file, which any sigprof reads)",
	  OPTION_SET(A, zstd_level, 0) },
	{ .long_name = "switch-output", .arg = "SPEC", .values = "SIZE|TIME",
	  .help = "cut the recording in pieces FILE.YYYYmmddHHMMSScc, each a recording of its own: a new one when "
		  "the current one holds SIZE bytes (10M: units B, K, M, G) or is TIME old (30s: units s, m, h, d)",
	  OPTION_CALLBACK(take_switch_output) },
	{ .short_name = 'r', .long_name = "repeat", .arg = "N",
	  .help = "record CMD N times, one file per run: FILE's name numbered before its extension (base.data: "
		  "base.1.data ... base.N.data), for sigprof diff; the series stops at the first run that fails",
	  OPTION_UINT(A, runs, 1, MAX_RECORD_RUNS), .what = "a number of runs" },
	{ .short_name = 'q', .long_name = "quiet", .help = "no closing line", OPTION_TRUE(A, quiet) },
	{ .long_name = "inherit",
	  .help = "follow CMD with per-task events inherited by each thread and child it creates, as perf record "
		  "does, rather than per-CPU events of a cgroup of its own (the default where sigprof can make one: "
		  "creating threads then costs the workload no event copies)", OPTION_TRUE(A, inherit) },
	{ .long_name = "realtime", .arg = "PRIO",
	  .help = "drain the ring buffers at SCHED_FIFO priority PRIO (1-99; 0: at sigprof's own), so that a "
		  "busy machine or a real-time workload cannot starve the recorder until records are lost; the "
		  "workload keeps its own; without the privilege, at sigprof's own",
	  .default_value = OPTIONS_STR(RECORDER_DEFAULT_PRIORITY), OPTION_UINT(A, realtime, 0, 99),
	  .what = "a priority" },
	RESULT_OPTION_SPECS(A, results, no_results),
	TARGET_OPTION_SPECS(A, target),
	OPTION_HELP_SPEC,
};
#undef A

const struct option_table record_option_table = {
	.command = "sigprof record",
	.operands = "[--] [CMD [ARGS...]]",
	.description = "Run CMD under the collectors, or watch the processes, threads, CPUs or cgroup named by -p, "
		       "-t, -a, -C or -G (for as long as CMD runs, else until Ctrl-C or every target exited), and "
		       "write what they gather to FILE (sigprof.data).",
	.specs = record_specs,
	.count = ARRAY_SIZE(record_specs),
	.stop_at_operand = true,
	.epilogue = record_epilogue,
};

/* The command line into a: 0, 1 for --help (printed), or -1 (said). */
static int parse_record_args(int argc, char **argv, struct record_args *a)
{
	a->output = "sigprof.data";
	a->opts.frequency = DEFAULT_FREQUENCY;
	a->opts.call_graph = CALL_GRAPH_FP;
	a->opts.stack_user_size = DEFAULT_STACK_USER_SIZE;
	a->ring_pages = DEFAULT_RING_PAGES;
	a->zstd_level = SP_ZSTD_DEFAULT_LEVEL;
	a->realtime = RECORDER_DEFAULT_PRIORITY;
	struct options_parsed parsed;
	int ret = cli_parse_options(&record_option_table, argc, argv, a, &parsed);
	if (ret)
		return ret;
	int operand = parsed.operand;
	a->ring_pages_chosen = options_given(&record_option_table, &parsed, "mmap-pages", 0);
	a->realtime_chosen = options_given(&record_option_table, &parsed, "realtime", 0);
	if (options_given(&record_option_table, &parsed, "freq", 0) && options_given(&record_option_table, &parsed, "count", 0)) {
		sp_error("record: -F and -c are two ways of sampling: give a frequency (-F) or a period (-c), not both");
		return -EINVAL;
	}
	if (operand >= argc && !target_given(&a->target)) {
		sp_error("record: no command to run and no target (sigprof record [options] -- CMD [ARGS...], or -p PID, "
			 "-t TID, -a, -G CGROUP)");
		return -EINVAL;
	}
	a->argv = operand < argc ? argv + operand : NULL;
	if (a->switch_spec && strcmp(a->output, "-") == 0)
		return sp_error("record: --switch-output writes files: it cannot go with -o - (stdout)");
	if (a->runs && strcmp(a->output, "-") == 0)
		return sp_error("record: -r writes numbered files: it cannot go with -o - (stdout)");
	if (a->runs && target_given(&a->target))
		return sp_error("record: -r repeats a command it starts: not with -p, -t, -a, -C or -G");
	return 0;
}

struct collector_state {
	const struct collector *collector;
	int error;
	char reason[256];
};

/* Whether spec repeats the event of an earlier spec of the same collector. */
static bool is_duplicate(const struct event_list *events, size_t e)
{
	const struct event_spec *spec = &events->specs[e];
	for (size_t i = 0; i < e; i++) {
		const struct event_spec *o = &events->specs[i];
		/* the whole attr: cpu-clock:u and cpu-clock:k are two events */
		if (strcmp(o->collector, spec->collector) == 0 && memcmp(&o->attr, &spec->attr, sizeof(o->attr)) == 0 &&
		    strcmp(o->tracepoint_filter ? o->tracepoint_filter : "",
			   spec->tracepoint_filter ? spec->tracepoint_filter : "") == 0)
			return true;
	}
	return false;
}

/* Whether this kernel's MMAP2 records can carry build-ids (attr.build_id, Linux 5.12; older ones refuse the bit). */
static bool kernel_gives_build_ids(void)
{
	struct perf_event_attr probe = { .size = sizeof(probe), .type = PERF_TYPE_SOFTWARE,
					 .config = PERF_COUNT_SW_DUMMY, .mmap = 1, .mmap2 = 1, .build_id = 1,
					 .exclude_kernel = 1, .exclude_hv = 1 };
	return perf_event_probe(&probe) != -EINVAL;
}

/*
 * Ask every selected collector for its events, then add the events the
 * user named to the collectors that own them.  Returns the number of
 * states filled, or -errno when a named event cannot be added (the error
 * line is printed).  A collector selected by name (or by default) that
 * cannot run is noted in its state; a named event that cannot is an error.
 */
static int gather_events(struct record_options *opts, const struct record_args *a, struct event_list *events,
			 struct collector_state *states)
{
	bool named = a->collectors.len || a->nuser_events;
	size_t n = 0;
	for (size_t i = 0; i < collector_count; i++) {
		const struct collector *c = collector_table[i];
		bool by_name = named ? a->collectors.len && in_list(a->collectors.buf, c->name) : !c->on_request;
		bool owns = false;
		for (size_t k = 0; k < a->nuser_events && !owns; k++)
			owns = collector_for_event(&a->user_events[k]) == c;
		if (!by_name && !owns)
			continue;
		size_t before = events->count;
		states[n].collector = c;
		if (by_name) {
			states[n].error = collector_add_events(c, opts, events, states[n].reason, sizeof(states[n].reason));
			if (states[n].error) {
				/* a collector is whole or absent: drop what it added before failing */
				event_list_truncate(events, before);
			}
		}
		for (size_t k = 0; k < a->nuser_events; k++) {
			const struct pmu_event *ev = &a->user_events[k];
			if (collector_for_event(ev) != c)
				continue;
			char reason[256];
			int err = event_list_add_parsed(events, opts, ev, c->name, CALL_GRAPH_FP, reason, sizeof(reason));
			if (err) {
				sp_error("record: event %s: %s", QUOTED(ev->name), reason);
				return err;
			}
			if (is_duplicate(events, events->count - 1))
				event_list_truncate(events, events->count - 1);
		}
		if (owns && states[n].error) {
			/* its default set failed, but the events the user gave it run */
			states[n].error = 0;
			states[n].reason[0] = '\0';
		}
		n++;
	}
	for (size_t e = 0; e < events->count; e++) {
		struct perf_event_attr *attr = &events->specs[e].attr;
		attr->watermark = 1;
		attr->wakeup_watermark = 64 * 1024;
	}
	/*
	 * The first event that follows the workload (not a system-wide one,
	 * which would describe every process) carries the records that
	 * describe its tasks and mappings.
	 */
	for (size_t e = 0; e < events->count; e++) {
		if (events->specs[e].system_wide)
			continue;
		struct perf_event_attr *attr = &events->specs[e].attr;
		attr->mmap = attr->mmap2 = attr->comm = attr->comm_exec = attr->task = 1;
		attr->mmap_data = opts->want_data_mmaps;
		/* each file's build-id in place of its inode (Linux 5.12): a report knows whether it reads what ran */
		attr->build_id = kernel_gives_build_ids();
		break;
	}
	return (int)n;
}

static int write_meta(struct sp_writer *w, const struct record_args *a, const struct collector_state *states,
		      size_t nstates, uint64_t start_real, uint64_t start_mono)
{
	struct utsname u;
	uname(&u);
	char ncpus[32], real[32], mono[32];
	snprintf(ncpus, sizeof(ncpus), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	snprintf(real, sizeof(real), "%llu", (unsigned long long)start_real);
	snprintf(mono, sizeof(mono), "%llu", (unsigned long long)start_mono);
	uint32_t argc = 0;
	while (a->argv && a->argv[argc])
		argc++;
	char cg_text[32] = "default";
	if (a->opts.call_graph_chosen && a->opts.call_graph == CALL_GRAPH_DWARF)
		snprintf(cg_text, sizeof(cg_text), "dwarf,%u", a->opts.stack_user_size);
	else if (a->opts.call_graph_chosen)
		snprintf(cg_text, sizeof(cg_text), "%s", a->opts.call_graph == CALL_GRAPH_FP ? "fp" : "none");
	const char *cg = cg_text;
	const char *version = SIGPROF_VERSION;
	const char *hostname = u.nodename, *release = u.release, *machine = u.machine;
	int err = argc ? sp_writer_meta(w, "argv", (const char *const *)a->argv, argc) : 0;
	if (err == -E2BIG) {
		const char *just_cmd[] = { a->argv[0] };
		err = sp_writer_meta(w, "argv", just_cmd, 1);
	}
	err = err ? err : sp_writer_meta(w, "hostname", &hostname, 1);
	err = err ? err : sp_writer_meta(w, "kernel", &release, 1);
	err = err ? err : sp_writer_meta(w, "arch", &machine, 1);
	err = err ? err : sp_writer_meta(w, "ncpus", (const char *const[]){ ncpus }, 1);
	err = err ? err : sp_writer_meta(w, "start_realtime_ns", (const char *const[]){ real }, 1);
	err = err ? err : sp_writer_meta(w, "start_monotonic_ns", (const char *const[]){ mono }, 1);
	err = err ? err : sp_writer_meta(w, "sigprof_version", &version, 1);
	char boot_id[64];
	if (!err && read_boot_id(boot_id, sizeof(boot_id)) == 0)
		err = sp_writer_meta(w, "boot_id", (const char *const[]){ boot_id }, 1);
	err = err ? err : sp_writer_meta(w, "call_graph", &cg, 1);
	if (a->followed[0]) {
		const char *v = a->followed;
		err = err ? err : sp_writer_meta(w, "followed", &v, 1);
	}
	if (target_given(&a->target)) {
		char text[512];
		target_describe(&a->target, text, sizeof(text));
		const char *v = text;
		err = err ? err : sp_writer_meta(w, "target", &v, 1);
	}
	if (a->opts.exclude_kernel) {
		const char *why = "kernel frames excluded: not root, no CAP_PERFMON, and kernel.perf_event_paranoid > 1";
		err = err ? err : sp_writer_meta(w, "note", &why, 1);
	}
	for (size_t i = 0; i < nstates && !err; i++) {
		const char *v[] = { states[i].collector->name, states[i].error ? "unavailable" : "ok",
				    states[i].error ? states[i].reason : "" };
		err = sp_writer_meta(w, "collector_status", v, 3);
	}
	return err;
}

/*
 * The kernel's symbol table travels in the recording, so that a report
 * names kernel frames right on another machine or after a reboot, and does
 * not pay for reading /proc/kallsyms (slow: the kernel formats it anew on
 * every read).  Hidden addresses (not root) are not worth carrying.
 *
 * Not all of it: the whole table is 1.4 MB compressed here, more than the
 * rest of a short recording and most of perf's file for the same run.  The
 * writer's thread watches the records it writes and collects the kernel
 * addresses they name (kernel_refs.h); at the end the file's trailer,
 * which a reader reads first, carries the symbols of those addresses only
 * (kallsyms_subset(): tens of KB).  A pipe (-o -) cannot have a trailer:
 * it gets the whole table at its head, as before.  A file without its
 * trailer (its recorder killed) names kernel frames from this machine's
 * /proc/kallsyms while it runs the same boot (the report says so).
 */
struct kallsyms_copy {
	char *text;               /* /proc/kallsyms, read once for every piece; NULL: none is carried */
	size_t len;
	bool whole;               /* the whole text at the head (a pipe) */
	struct kernel_refs *refs; /* the current file's addresses, watched on its writer */
};

static void kallsyms_copy_read(struct kallsyms_copy *kc, const struct record_args *a)
{
	*kc = (struct kallsyms_copy){ .whole = strcmp(a->output, "-") == 0 };
	if (a->no_kallsyms || a->opts.exclude_kernel)
		return;
	kc->text = read_whole_file("/proc/kallsyms", &kc->len);
	if (kc->text && (kc->len <= 16 || strncmp(kc->text, "0000000000000000", 16) == 0)) {
		free(kc->text);
		kc->text = NULL;
	}
}

/* Before a file's first record: the whole table (a pipe), or a watch on what it will hold. */
static int kallsyms_copy_head(struct kallsyms_copy *kc, struct sp_writer *w)
{
	if (!kc->text)
		return 0;
	if (kc->whole)
		return sp_writer_kallsyms(w, kc->text, kc->len);
	kernel_refs_free(kc->refs);
	kc->refs = kernel_refs_new();
	sp_writer_watch(w, kernel_refs_see, kc->refs);
	return 0;
}

/* After a file's last record: its trailer, the symbols of the kernel addresses it holds. */
static int kallsyms_copy_trailer(struct kallsyms_copy *kc, struct sp_writer *w)
{
	if (!kc->text || kc->whole)
		return 0;
	int err = sp_writer_begin_trailer(w);
	if (err)
		return err;
	size_t n;
	uint64_t *addrs = kernel_refs_addresses(kc->refs, &n);
	kernel_refs_free(kc->refs);
	kc->refs = NULL;
	struct strbuf kept = { 0 };
	if (n && kallsyms_subset(kc->text, kc->len, addrs, n, &kept) == -EINVAL)
		sb_add(&kept, kc->text, kc->len); /* not sorted as the kernel writes it: all of it */
	if (kept.len)
		err = sp_writer_kallsyms(w, kept.buf, kept.len);
	sb_free(&kept);
	free(addrs);
	return err;
}

static void kallsyms_copy_free(struct kallsyms_copy *kc)
{
	free(kc->text);
	kernel_refs_free(kc->refs);
}

/*
 * --switch-output: the run's pieces.  Each piece is a recording of its
 * own; its TOTALS and FINISH count its window only (the counters and the
 * ring statistics minus what they were when it began).
 */
struct switch_output_state {
	const struct record_args *a;
	struct perf_session *session;
	struct collector_state *states;
	size_t nstates;
	pid_t workload;
	unsigned index;          /* of the current piece, from 1 */
	uint64_t start_real, start_mono; /* when the current piece began */
	struct ring_stats base;  /* the drain's statistics then */
	uint64_t *base_value, *base_enabled, *base_running; /* each event's counter then */
	size_t nevents;
	struct strbuf name;      /* the current piece's file */
	struct strbuf tasks;     /* the workload's tasks and mappings as the last piece's head found them */
};

struct drain_state {
	struct sp_writer *writer;
	struct kallsyms_copy *kernel;
	struct ring_stats stats;
	struct switch_output_state *pieces;   /* NULL without --switch-output */
};

static int sink_to_writer(void *ctx, const void *data, size_t len)
{
	struct drain_state *d = ctx;
	return sp_writer_raw(d->writer, data, len);
}

/* One pass over every ring, closed by a ROUND record when it copied anything. */
static int drain_round(struct perf_session *session, struct drain_state *d)
{
	uint64_t before = d->stats.records;
	int ret = perf_session_drain(session, sink_to_writer, d, &d->stats);
	if (!ret && d->stats.records != before) {
		struct perf_event_header round = { .type = SP_REC_ROUND, .size = sizeof(round) };
		ret = sp_writer_record(d->writer, &round);
	}
	return ret;
}

static bool piece_due(const struct switch_output_state *ps, const struct sp_writer *w);
static int switch_piece(struct drain_state *d);

/*
 * Whether the run is over: the command exited (its wait status in
 * *status), or, without a command, an interrupt came or every task of a
 * -p/-t target has exited.
 */
static bool run_over(struct workload *w, const struct attach_target *t, int *status)
{
	if (w->pid > 0)
		return workload_check(w, status);
	*status = 0;
	return workload_interrupt_signal() || !target_alive(t);
}

/*
 * Drain until the run is over; returns the command's wait status (0
 * without one), or -errno on a write error.  With rate-bounded events
 * (rate_bound.h) the loop also wakes at the end of every window to measure
 * it and switch what it calls for.
 */
static int drain_until_exit(struct perf_session *session, struct workload *w, const struct attach_target *t,
			    struct drain_state *d, struct rate_bound *bound)
{
	int fds[4096];
	size_t nfds = perf_session_poll_fds(session, fds, ARRAY_SIZE(fds));
	struct pollfd *pfds = xcalloc(nfds ? nfds : 1, sizeof(*pfds));
	for (size_t i = 0; i < nfds; i++)
		pfds[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	int status = 0, ret = 0;
	uint64_t flushed = now_monotonic_ns();
	while (!run_over(w, t, &status)) {
		uint64_t wait_ns = 100 * 1000 * 1000;
		if (bound && rate_bound_timeout_ns(bound, now_monotonic_ns()) < wait_ns)
			wait_ns = rate_bound_timeout_ns(bound, now_monotonic_ns());
		struct timespec timeout = { 0, (long)wait_ns };
		int n = ppoll(pfds, nfds, &timeout, &w->waitmask);
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (n > 0)
			workload_take_pending_signals(w);
		for (size_t i = 0; i < nfds; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR))
				pfds[i].fd = -1; /* its task is gone: stop polling, keep draining */
		if (bound)
			rate_bound_tick(bound, now_monotonic_ns()); /* a failed switch leaves that side as it was */
		ret = drain_round(session, d);
		if (!ret && d->pieces && piece_due(d->pieces, d->writer))
			ret = switch_piece(d);
		/* a full buffer goes to the writer by itself; this bounds how far the file lags */
		if (!ret && now_monotonic_ns() - flushed >= FLUSH_INTERVAL_NS) {
			ret = sp_writer_flush(d->writer);
			flushed = now_monotonic_ns();
		}
		if (ret)
			break;
	}
	free(pfds);
	if (ret < 0) {
		workload_abort(w);
		return ret;
	}
	return status;
}

/* META "results": the workload's own figures as "NAME=VALUE" strings (docs/data-format.md); none: no record. */
static int write_results(struct sp_writer *w, const struct result_parser *parser)
{
	const struct result_figure *figures;
	size_t n = parser ? result_parser_figures(parser, &figures) : 0;
	if (!n)
		return 0;
	char text[RESULT_MAX][RESULT_NAME_MAX + 48];
	const char *values[RESULT_MAX];
	for (size_t i = 0; i < n; i++) {
		snprintf(text[i], sizeof(text[i]), "%s=%.17g", figures[i].name, figures[i].value);
		values[i] = text[i];
	}
	return sp_writer_meta(w, "results", values, (uint32_t)n);
}

/* META "rusage": the workload's LKP time.* figures as "NAME=VALUE" strings (docs/data-format.md). */
static int write_rusage(struct sp_writer *w, const struct workload *wl, uint64_t duration_ns)
{
	struct time_figure figures[WORKLOAD_TIME_FIGURES];
	size_t n = workload_time_figures(&wl->rusage, (double)duration_ns / 1e9, figures);
	char text[WORKLOAD_TIME_FIGURES][96];
	const char *values[WORKLOAD_TIME_FIGURES];
	for (size_t i = 0; i < n; i++) {
		snprintf(text[i], sizeof(text[i]), "%s=%.9g", figures[i].name, figures[i].value);
		values[i] = text[i];
	}
	int err = sp_writer_meta(w, "rusage", values, (uint32_t)n);
	return err ? err : write_results(w, wl->results);
}

/*
 * TOTALS and FINISH (and the workload's rusage once it exited): of the
 * whole run, or (pieces) of the current piece's window, which then becomes
 * the base of the next; switched: the workload runs on in the next piece
 * (wl NULL: no rusage yet).
 */
static int write_closing(struct sp_writer *w, struct perf_session *session, const struct drain_state *d,
			 int status, uint64_t duration_ns, bool switched, const struct workload *wl)
{
	struct switch_output_state *ps = d->pieces;
	const struct opened_event *events;
	size_t n = perf_session_events(session, &events);
	int err = !switched && wl && status >= 0 ? write_rusage(w, wl, duration_ns) : 0;
	unsigned index = 0;
	for (size_t e = 0; e < n && !err; e++) {
		if (events[e].failed)
			continue;
		struct sp_totals_record t = { .header = { .type = SP_REC_TOTALS, .size = sizeof(t) },
					      .event_index = index++ };
		if (perf_session_read_total(session, e, &t.value, &t.time_enabled, &t.time_running) != 0)
			continue;
		if (ps && e < ps->nevents) {
			uint64_t v = t.value, en = t.time_enabled, run = t.time_running;
			t.value -= ps->base_value[e];
			t.time_enabled -= ps->base_enabled[e];
			t.time_running -= ps->base_running[e];
			ps->base_value[e] = v;
			ps->base_enabled[e] = en;
			ps->base_running[e] = run;
		}
		err = sp_writer_record(w, &t);
	}
	struct ring_stats base = ps ? ps->base : (struct ring_stats){ 0 };
	struct sp_finish_record f = {
		.header = { .type = SP_REC_FINISH, .size = sizeof(f) },
		.end_realtime_ns = now_realtime_ns(),
		.duration_ns = duration_ns,
		.wait_status = switched ? 0 : status,
		.flags = (workload_interrupt_signal() && !switched ? SP_FINISH_INTERRUPTED : 0) |
			 (switched ? SP_FINISH_SWITCHED : 0),
		.kernel_records = d->stats.records - base.records,
		.samples = d->stats.samples - base.samples,
		.lost = d->stats.lost - base.lost,
		.lost_samples = d->stats.lost_samples - base.lost_samples,
		.data_bytes = d->stats.bytes - base.bytes,
	};
	if (ps)
		ps->base = d->stats;
	return err ? err : sp_writer_record(w, &f);
}

static int write_events(struct sp_writer *w, struct perf_session *session, struct collector_state *states,
			size_t nstates)
{
	const struct opened_event *events;
	size_t n = perf_session_events(session, &events);
	int err = 0;
	for (size_t e = 0; e < n && !err; e++) {
		const struct event_spec *spec = events[e].spec;
		if (events[e].failed) {
			for (size_t i = 0; i < nstates; i++)
				if (strcmp(states[i].collector->name, spec->collector) == 0 && !states[i].error) {
					states[i].error = events[e].error;
					snprintf(states[i].reason, sizeof(states[i].reason), "cannot open %s: %s",
						 spec->name, perf_open_reason(events[e].error, &spec->attr));
				}
			continue;
		}
		struct perf_event_attr attr = spec->attr;
		attr.size = sizeof(attr);
		if (spec->tracepoint_format)
			err = sp_writer_tracepoint(w, attr.config, spec->tracepoint_system, spec->tracepoint_format);
		if (!err)
			err = sp_writer_event(w, spec->name, spec->collector, &attr, events[e].ids, events[e].nr_ids);
	}
	return err;
}

/*
 * FILE.YYYYmmddHHMMSScc, the name perf gives its --switch-output pieces,
 * from the wall clock now; FILE.YYYYmmddHHMMSScc.N (N from 2) when that
 * name is the previous piece's (two pieces in one hundredth of a second)
 * or is taken: a piece never replaces another (they sort in order still).
 */
static void piece_name(const char *output, struct strbuf *out)
{
	uint64_t now = now_realtime_ns();
	time_t t = (time_t)(now / 1000000000ull);
	struct tm tm;
	char stamp[32] = "0";
	if (localtime_r(&t, &tm))
		strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	char *previous = out->buf ? xstrdup(out->buf) : NULL;
	struct stat st;
	for (unsigned n = 1;; n++) {
		sb_reset(out);
		sb_addf(out, "%s.%s%02u", output, stamp, (unsigned)(now / 10000000ull % 100));
		if (n > 1)
			sb_addf(out, ".%u", n);
		bool previous_one = previous && strcmp(previous, out->buf) == 0;
		if (!previous_one && lstat(out->buf, &st) < 0)
			break;
	}
	free(previous);
}

/*
 * What a recording holds before its first kernel record: EVENT and META
 * records (and KALLSYMS on a pipe), and in a piece after the first the
 * COMM and MMAP2 records of the workload's tasks as they are now; when the
 * workload has exited (its maps are empty) while its last records still
 * wait in the rings, as the previous piece's head found them.  Then
 * flushed.
 */
static int write_head(struct sp_writer *w, const struct record_args *a, struct perf_session *session,
		      struct collector_state *states, size_t nstates, struct switch_output_state *ps,
		      struct kallsyms_copy *kc, uint64_t start_real, uint64_t start_mono)
{
	int err = kallsyms_copy_head(kc, w); /* the watch sees the EVENT records too */
	err = err ? err : write_events(w, session, states, nstates);
	err = err ? err : write_meta(w, a, states, nstates, start_real, start_mono);
	/* a chunk of its own when compressed: a file cut inside the kallsyms copy still holds the run's description */
	err = err ? err : sp_writer_flush(w);
	if (!err && ps) {
		char index[16];
		snprintf(index, sizeof(index), "%u", ps->index);
		err = sp_writer_meta(w, "switch_output", (const char *const[]){ index, a->switch_spec }, 2);
	}
	if (!err && ps && ps->index > 1) {
		/* the tasks and mappings the kernel described in an earlier piece */
		const struct opened_event *events;
		size_t n = perf_session_events(session, &events);
		for (size_t e = 0; e < n; e++) {
			const struct perf_event_attr *attr = &events[e].spec->attr;
			if (events[e].failed || !attr->mmap || !events[e].nr_ids)
				continue;
			struct strbuf recs = { 0 };
			int found = 0;
			if (target_given(&a->target))
				target_synthesize(&a->target, &recs, attr->sample_type, events[e].ids[0], attr->mmap_data);
			else
				found = synthesize_process_tree(ps->workload, &recs, attr->sample_type, events[e].ids[0],
								attr->mmap_data);
			if (found > 0 && !target_given(&a->target)) {
				sb_reset(&ps->tasks);
				sb_add(&ps->tasks, recs.buf, recs.len);
			} else if (found == 0 && ps->tasks.len) {
				sb_reset(&recs);
				sb_add(&recs, ps->tasks.buf, ps->tasks.len);
			}
			if (found >= 0 && recs.len)
				err = sp_writer_raw(w, recs.buf, recs.len);
			sb_free(&recs);
			break;
		}
	}
	return err ? err : sp_writer_flush(w);
}

/* Close the current piece (its window's TOTALS, FINISH flagged switched) and go on in a new one. */
static int switch_piece(struct drain_state *d)
{
	struct switch_output_state *ps = d->pieces;
	const struct record_args *a = ps->a;
	uint64_t now = now_monotonic_ns();
	int err = write_closing(d->writer, ps->session, d, 0, now - ps->start_mono, true, NULL);
	err = err ? err : kallsyms_copy_trailer(d->kernel, d->writer);
	int finish_err = sp_writer_finish(d->writer);
	err = err ? err : finish_err;
	uint64_t bytes = sp_writer_file_bytes(d->writer);
	int close_err = sp_writer_close(d->writer);
	d->writer = NULL;
	err = err ? err : close_err;
	if (err) {
		sp_error("record: writing %s failed: %s (the file holds what was written before)", ps->name.buf,
			 strerror(-err));
		return err;
	}
	if (!a->quiet)
		fprintf(stderr, "sigprof: piece %u: %.1f MB written to %s\n", ps->index, (double)bytes / 1e6,
			ps->name.buf);
	ps->index++;
	piece_name(a->output, &ps->name);
	ps->start_real = now_realtime_ns();
	ps->start_mono = now_monotonic_ns();
	struct sp_writer *w = NULL;
	err = sp_writer_create_compressed(ps->name.buf, a->zstd_level, &w);
	if (err) {
		sp_error("record: cannot create %s: %s", QUOTED(ps->name.buf), strerror(-err));
		return err;
	}
	err = write_head(w, a, ps->session, ps->states, ps->nstates, ps, d->kernel, ps->start_real, ps->start_mono);
	err = err ? err : sp_writer_publish(w);
	if (err) {
		sp_error("record: cannot write %s: %s", QUOTED(ps->name.buf), strerror(-err));
		sp_writer_discard(w);
		return err;
	}
	sp_writer_start_async(w, WRITE_QUEUE_BYTES);
	d->writer = w;
	return 0;
}

static void switch_output_free(struct switch_output_state *ps)
{
	free(ps->base_value);
	free(ps->base_enabled);
	free(ps->base_running);
	sb_free(&ps->name);
	sb_free(&ps->tasks);
}

static bool piece_due(const struct switch_output_state *ps, const struct sp_writer *w)
{
	return (ps->a->switch_bytes && sp_writer_file_bytes(w) >= ps->a->switch_bytes) ||
	       (ps->a->switch_ns && now_monotonic_ns() - ps->start_mono >= ps->a->switch_ns);
}

static void print_closing_line(const struct record_args *a, const struct drain_state *d, uint64_t duration_ns,
			       uint64_t bytes, uint64_t record_bytes, const struct collector_state *states,
			       size_t nstates)
{
	if (a->quiet)
		return;
	uint64_t lost = d->stats.lost + d->stats.lost_samples;
	struct strbuf line = { 0 };
	sb_addf(&line, "sigprof: recorded %.2f s, %llu samples, %llu lost (%s), %.1f MB written to %s",
		(double)duration_ns / 1e9, (unsigned long long)d->stats.samples, (unsigned long long)lost,
		SHARE(lost, d->stats.samples + lost),
		(double)bytes / 1e6,
		d->pieces ? d->pieces->name.buf : strcmp(a->output, "-") ? a->output : "stdout");
	if (d->pieces)
		sb_addf(&line, " (piece %u of --switch-output %s)", d->pieces->index, a->switch_spec);
	if (a->zstd_level)
		sb_addf(&line, " (zstd: %.1f MB of records, %.1fx)", (double)record_bytes / 1e6,
			bytes ? (double)record_bytes / (double)bytes : 0.0);
	if (lost)
		sb_addf(&line, "; to lose fewer: -m %u (now %u pages per CPU), fewer collectors (-e), or a lower -F",
			a->ring_pages < (1u << 19) ? a->ring_pages * 4 : 1u << 20, a->ring_pages);
	/* on a terminal (or with COLUMNS) the line is wrapped within its width, the collectors left out on their own */
	struct view_options fit = { .width = term_width(STDERR_FILENO, 0) };
	const char *sep = fit.width ? ";" : "; unavailable: ";
	bool any = false;
	for (size_t i = 0; i < nstates; i++) {
		if (!states[i].error)
			continue;
		if (fit.width && !any) {
			view_text_wrapped(&fit, stderr, 9, "%s%s", line.buf, sep);
			sb_reset(&line);
			sb_addstr(&line, "         unavailable: ");
			sep = "";
		}
		/* the reasons are long and say what to do: 'sigprof list' and the report's header give them */
		sb_addf(&line, "%s%s", sep, states[i].collector->name);
		sep = ", ";
		any = true;
	}
	if (any)
		sb_addf(&line, " (why: sigprof list)");
	view_text_wrapped(&fit, stderr, 9, "%s", line.buf);
	sb_free(&line);
}

/* The data file, or stdout for "-" (pipe mode); the one error line on failure. */
static int open_output(struct record_args *a, const char *path, struct sp_writer **writer)
{
	int err;
	if (strcmp(a->output, "-") == 0) {
		if (isatty(STDOUT_FILENO)) {
			sp_error("record: -o -: stdout is a terminal; pipe it (sigprof record -o - -- CMD | sigprof report -i -)");
			return -ENOTTY;
		}
		int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		err = fd < 0 ? -errno : sp_writer_from_fd_compressed(fd, a->zstd_level, writer);
		/* the recording owns the pipe: what sigprof or the workload prints to stdout goes to stderr */
		if (!err && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			err = -errno;
		if (err)
			sp_error("record: cannot write the recording to stdout: %s", strerror(-err));
		return err;
	}
	err = *path ? sp_writer_create_compressed(path, a->zstd_level, writer) : -ENOENT;
	struct stat st;
	if (!*path)
		sp_error("record: -o '': an empty file name");
	else if (err == -EEXIST && lstat(path, &st) == 0)
		sp_error("record: cannot write to %s: it is %s; sigprof writes a recording only to a regular file "
			 "or to stdout (-o -)", QUOTED(path), file_type_name(st.st_mode));
	else if (err == -EBUSY)
		sp_error("record: %s is being written by another sigprof run that is still going; replacing it would lose "
			 "that run's data: wait for it to end or choose another -o", QUOTED(path));
	else if (err)
		sp_error("record: cannot create %s: %s", QUOTED(path), strerror(-err));
	return err;
}

/*
 * Whether the program at path was built with frame pointers: a quarter or
 * more of its functions begin by setting one up (the bundled workloads,
 * built with -fno-omit-frame-pointer: 50-85%, their leaf functions and
 * _start do not; stress-ng and bash, built without: 8% and 0.2%).  Then the cpu and
 * signal collectors copy only a short stack and the report follows the
 * frame-pointer walk past it (stack_copy_default()); a program that cannot
 * be read (a script) is taken as one without.
 */
static bool program_has_frame_pointers(const char *path)
{
	return file_has_frame_pointers(path);
}

/* -g / --call-graph fp on a workload built without frame pointers: one line at the start says what it costs. */
static void warn_frame_pointer_walks(const struct record_options *opts, const char *program)
{
	if (!opts->call_graph_chosen || opts->call_graph != CALL_GRAPH_FP || !*program)
		return;
	struct strbuf files = { 0 };
	int n = files_without_frame_pointers(program, &files);
	if (n)
		sp_warn("record: --call-graph fp: %s %s no frame pointers: user stacks stop in %s code (the "
			"frame-pointer walk leaves it); leave out -g for each collector's DWARF default, or use "
			"--call-graph dwarf", files.buf, n == 1 ? "has" : "have", n == 1 ? "its" : "their");
	sb_free(&files);
}

/*
 * What the tasks that run already did before sigprof came: their comm and
 * mappings, written as the kernel's records would be, with the sample_id
 * of the event that carries the task records.
 */
static void synthesize_tasks(struct strbuf *out, struct perf_session *session, const struct record_args *a)
{
	const struct opened_event *events;
	size_t n = perf_session_events(session, &events);
	for (size_t e = 0; e < n; e++)
		if (!events[e].failed && events[e].nr_ids && events[e].spec->attr.mmap) {
			target_synthesize(&a->target, out, events[e].spec->attr.sample_type, events[e].ids[0],
					  a->opts.want_data_mmaps);
			return;
		}
}

/*
 * A cgroup's events outlive a task's exit (inherited ones are torn down
 * before it notifies its parent): every signal_generate event would see
 * the SIGCHLD the command sends sigprof, its parent, as it exits, one
 * generation no run of the command makes by itself.  Each such event (a
 * collector's, or the user's by any name) passes no hit aimed at sigprof.
 */
static void leave_out_exit_notice(struct event_list *events)
{
	uint64_t id;
	char reason[256];
	if (tracepoint_id("signal", "signal_generate", &id, reason, sizeof(reason)) < 0)
		return;
	for (size_t i = 0; i < events->count; i++) {
		struct event_spec *spec = &events->specs[i];
		if (spec->attr.type != PERF_TYPE_TRACEPOINT || spec->attr.config != id)
			continue;
		struct strbuf filter = { 0 };
		if (spec->tracepoint_filter)
			sb_addf(&filter, "(%s) && pid != %d", spec->tracepoint_filter, (int)getpid());
		else
			sb_addf(&filter, "pid != %d", (int)getpid());
		free(spec->tracepoint_filter);
		spec->tracepoint_filter = filter.buf;
	}
}

/*
 * How CMD is followed (workload_cgroup.h): the events of a cgroup of its
 * own, enabled at open (enable_on_exec is for the events of a task; the
 * workload waits before its exec and nothing else is in the cgroup), or,
 * with --inherit or where no cgroup can be made, inherited per-task events
 * enabled at its exec.  a->followed says which, and why, in the file.
 */
static void follow_workload(struct record_args *a, struct workload *w, struct event_list *events,
			    struct workload_cgroup *cgroup, struct perf_target *target)
{
	char why[sizeof(a->followed) - 16] = "";
	if (a->inherit) {
		snprintf(a->followed, sizeof(a->followed), "inherit: --inherit");
		return;
	}
	if (workload_cgroup_enter(cgroup, w->pid, why, sizeof(why)) < 0) {
		snprintf(a->followed, sizeof(a->followed), "inherit: %s", why);
		return;
	}
	target->cgroup_fd = cgroup->fd;
	target->inherit = false;
	event_list_enable_at_open(events);
	snprintf(a->followed, sizeof(a->followed), "cgroup %s", cgroup->name);
	leave_out_exit_notice(events);
}

/*
 * The program record_run() will run, and the targets it attaches to: 0, or
 * the exit status to return (said).  Fills program (empty for tasks that run
 * already: taken as a program without frame pointers).
 */
static int record_find_targets(struct record_args *a, bool attached, char *program, size_t len)
{
	if (a->argv) {
		int found = workload_find_file(a->argv[0], program, len);
		if (found < 0) {
			sp_error("record: cannot run %s: %s", QUOTED(a->argv[0]),
				 workload_find_error(a->argv[0], found));
			return workload_cannot_run_exit(found);
		}
	}
	char errbuf[512] = "";
	if (attached && target_resolve(&a->target, errbuf, sizeof(errbuf)) < 0) {
		sp_error("record: %s", errbuf);
		return EXIT_USAGE;
	}
	return 0;
}

/* --switch-output: the first piece's counters start from the session's opening. */
static void switch_output_start(struct switch_output_state *ps, struct perf_session *session, pid_t workload, uint64_t start_real,
			 uint64_t start_mono)
{
	ps->session = session;
	ps->workload = workload;
	ps->start_real = start_real;
	ps->start_mono = start_mono;
	const struct opened_event *opened;
	ps->nevents = perf_session_events(session, &opened);
	ps->base_value = xcalloc(ps->nevents + 1, sizeof(uint64_t));
	ps->base_enabled = xcalloc(ps->nevents + 1, sizeof(uint64_t));
	ps->base_running = xcalloc(ps->nevents + 1, sizeof(uint64_t));
}

/*
 * The run's description (and the targets' synthesized records) written
 * and flushed, then the file put under its name: 0, or -1 (said).
 */
static int write_and_publish_head(struct record_args *a, struct sp_writer *writer, struct perf_session *session,
				  struct collector_state *states, size_t nstates, struct switch_output_state *ps,
				  struct kallsyms_copy *kernel, const struct strbuf *synthesized, uint64_t start_real,
				  uint64_t start_mono)
{
	const char *name = ps ? ps->name.buf : a->output;
	int err = write_head(writer, a, session, states, nstates, ps, kernel, start_real, start_mono);
	if (!err && synthesized->len)
		err = sp_writer_raw(writer, synthesized->buf, synthesized->len);
	err = err ? err : sp_writer_flush(writer);
	if (err < 0) {
		sp_error("record: cannot write %s: %s%s", QUOTED(name), strerror(-err),
			 strcmp(a->output, "-") ? " (a previous recording there is kept)" : "");
		return -1;
	}
	/*
	 * The file goes under its name (the previous one to FILE.old) before
	 * the workload runs, so that a recorder killed from now on leaves its
	 * data where the user looks, and only once it holds the run's
	 * description: a full disk fails above, before anything is moved.
	 */
	err = sp_writer_publish(writer);
	if (err == -EBUSY) {
		sp_error("record: %s is being written by another sigprof run that is still going; replacing it would "
			 "lose that run's data: wait for it to end or choose another -o", QUOTED(name));
		return -1;
	} else if (err < 0) {
		sp_error("record: cannot put the new recording in place as %s (a previous one there moves to %s.old): %s",
			 QUOTED(name), name, strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * The end of the file after the drain: the last round, the closing
 * records, the kernel symbols' trailer; the file closed.  0 or -errno
 * (said); *bytes and *record_bytes are the file's size and its records'.
 */
static int finish_output(const struct record_args *a, struct perf_session *session, struct drain_state *d,
			 struct workload *w, bool attached, int status, uint64_t duration, struct kallsyms_copy *kernel,
			 uint64_t *bytes, uint64_t *record_bytes)
{
	const struct switch_output_state *ps = d->pieces;
	if (!d->writer) /* gone only when switching pieces failed (said) */
		return status < 0 ? status : -EIO;
	int err = status < 0 ? status : drain_round(session, d);
	err = err ? err : write_closing(d->writer, session, d, status,
					ps ? now_monotonic_ns() - ps->start_mono : duration, false,
					a->argv && !attached ? w : NULL); /* a window command's rusage is not the targets' */
	err = err ? err : kallsyms_copy_trailer(kernel, d->writer);
	int close_err = sp_writer_finish(d->writer);
	*bytes = sp_writer_file_bytes(d->writer);
	*record_bytes = sp_writer_bytes(d->writer);
	int publish_err = sp_writer_close(d->writer);
	err = err ? err : close_err ? close_err : publish_err;
	if (err < 0)
		sp_error("record: writing %s failed: %s (the file holds what was written before)",
			 ps ? ps->name.buf : a->output, strerror(-err));
	return err;
}

/*
 * One recording, as steps: find the program and the targets, gather the
 * collectors' events, open the output, start the workload (stopped before
 * its exec), read the kernel's symbols, open the events, write and publish
 * the head, release the workload, drain until it exits, finish the file.
 * Every failure jumps to the cleanup of what was acquired by then.
 */
static int record_run(struct record_args *a)
{
	a->recorded = false;
	bool attached = target_given(&a->target);
	char program[4096] = "";
	int ret = record_find_targets(a, attached, program, sizeof(program));
	if (ret)
		return ret;
	if (!kernel_samples_allowed())
		a->opts.exclude_kernel = true;
	/* a window command is not the targets' program: attached tasks get the long copy */
	a->opts.program_frame_pointers = !attached && program_has_frame_pointers(program);
	warn_frame_pointer_walks(&a->opts, program);

	ret = EXIT_USAGE;
	struct event_list events = { 0 };
	struct collector_state states[64] = { 0 };
	struct switch_output_state pieces = { .a = a, .states = states, .index = 1 };
	struct switch_output_state *ps = a->switch_spec ? &pieces : NULL; /* --switch-output: the first piece is FILE.TIMESTAMP too */
	struct kallsyms_copy kernel = { 0 };
	struct sp_writer *writer = NULL;
	struct perf_session *session = NULL;
	struct strbuf synthesized = { 0 }; /* COMM and MMAP2 records of the targets as sigprof found them */
	struct workload w;
	struct recorder_priority priority = { 0 };
	struct workload_cgroup cgroup = { .fd = -1 };
	char errbuf[512] = "";

	int gathered = gather_events(&a->opts, a, &events, states);
	if (gathered < 0)
		goto release;
	size_t nstates = (size_t)gathered;
	pieces.nstates = nstates;
	if (!events.count) {
		sp_error("record: no collector can run here: %s", states[0].reason);
		goto release;
	}
	if (attached)
		event_list_enable_at_open(&events);

	if (ps)
		piece_name(a->output, &ps->name);
	/* before workload_start() blocks the interrupt signals: nothing may wait with them blocked */
	if (open_output(a, ps ? ps->name.buf : a->output, &writer) < 0) {
		ret = EXIT_WRITE_FAILED;
		goto release;
	}
	int err = a->argv ? workload_start_captured(&w, a->argv, result_parser_for_run(&a->results, a->no_results, attached))
			 : (workload_none(&w), 0);
	if (err < 0) {
		sp_error("record: cannot start the workload: %s", strerror(-err));
		goto discard_output;
	}
	/* after the fork (the workload keeps its policy), before the writer thread (it inherits this one) */
	err = recorder_priority_raise(&priority, (int)a->realtime);
	if (err < 0 && a->realtime_chosen)
		sp_warn("record: --realtime %u: %s; the recorder runs at its own priority", a->realtime, strerror(-err));

	if (!a->ring_pages_chosen)
		for (size_t i = 0; i < events.count; i++)
			if (events.specs[i].attr.sample_type & PERF_SAMPLE_STACK_USER)
				a->ring_pages = DWARF_RING_PAGES;
	struct perf_target target = { .pid = w.pid, .inherit = true };
	if (attached)
		target_perf(&a->target, &target);
	else if (a->argv)
		follow_workload(a, &w, &events, &cgroup, &target);
	/*
	 * The kernel's symbols before the events open: reading them takes 0.1 to
	 * 0.2 s, during which attached targets (their events enabled at open)
	 * would fill the rings with nothing draining them and no rate bound yet.
	 */
	kallsyms_copy_read(&kernel, a);
	if (perf_session_open(events.specs, events.count, &target, a->ring_pages, &session, errbuf, sizeof(errbuf)) < 0) {
		sp_error("record: %s", errbuf);
		goto abort_workload;
	}
	/* at once, while the targets surely run: their comm and maps as they are now */
	if (attached)
		synthesize_tasks(&synthesized, session, a);
	uint64_t start_real = now_realtime_ns(), start_mono = now_monotonic_ns();
	if (ps)
		switch_output_start(ps, session, w.pid, start_real, start_mono);
	if (write_and_publish_head(a, writer, session, states, nstates, ps, &kernel, &synthesized, start_real,
				   start_mono) < 0) {
		ret = EXIT_WRITE_FAILED;
		goto abort_workload;
	}
	sb_free(&synthesized);

	/* without a thread (it could not start) the drain loop writes itself, as before */
	sp_writer_start_async(writer, WRITE_QUEUE_BYTES);
	err = a->argv ? workload_release(&w) : 0;
	if (err < 0) {
		sp_error("record: cannot run %s: %s", QUOTED(a->argv[0]), workload_release_error(err));
		ret = workload_cannot_run_exit(err);
		goto discard_output;
	}

	struct drain_state d = { .writer = writer, .kernel = &kernel, .pieces = ps };
	struct rate_bound *bound = NULL;
	rate_bound_start(session, now_monotonic_ns(), &bound);
	int status = drain_until_exit(session, &w, &a->target, &d, bound);
	rate_bound_free(bound);
	uint64_t duration = now_monotonic_ns() - start_mono;
	perf_session_disable(session);
	uint64_t bytes = 0, record_bytes = 0;
	err = finish_output(a, session, &d, &w, attached, status, duration, &kernel, &bytes, &record_bytes);
	perf_session_close_detached(session);
	session = NULL;
	if (err < 0) {
		ret = EXIT_WRITE_FAILED;
		goto release;
	}
	print_closing_line(a, &d, duration, bytes, record_bytes, states, nstates);
	a->recorded = true;
	ret = a->argv ? workload_exit_code(status) : 0;
	goto release;

abort_workload:
	workload_abort(&w);
discard_output:
	sp_writer_discard(writer);
release:
	if (workload_cgroup_remove(&cgroup, errbuf, sizeof(errbuf)) < 0)
		sp_warn("record: %s", errbuf);
	recorder_priority_restore(&priority);
	sb_free(&synthesized);
	switch_output_free(&pieces);
	kallsyms_copy_free(&kernel);
	perf_session_close(session);
	event_list_free(&events);
	return ret;
}

/* Run `run` (from 1) of -r N: "base.data" -> "base.3.data"; a name without an extension gets ".3" at its end. */
static void record_run_output(const char *output, unsigned run, struct strbuf *sb)
{
	const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');
	if (dot && dot > (slash ? slash + 1 : output))
		sb_addf(sb, "%.*s.%u%s", (int)(dot - output), output, run, dot);
	else
		sb_addf(sb, "%s.%u", output, run);
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	int parsed = parse_record_args(argc, argv, &a);
	int ret = parsed < 0 ? EXIT_USAGE : 0;
	if (parsed > 0) {
		record_args_free(&a);
		return 0;
	}
	if (ret == 0 && a.runs == 0)
		ret = record_run(&a);
	const char *output = a.output;
	struct strbuf name = { 0 };
	for (unsigned run = 1; ret == 0 && run <= a.runs; run++) {
		sb_reset(&name);
		record_run_output(output, run, &name);
		a.output = name.buf;
		ret = record_run(&a);
		if (ret == 0)
			continue;
		/* a run recorded whole whose workload failed is the last file; one that wrote nothing said why */
		if (a.recorded)
			sp_warn("record: run %u of %u ended with status %d: the series stops at %s", run, a.runs, ret,
				name.buf);
		else if (run > 1)
			sp_warn("record: the series stops at run %u of %u: runs 1 to %u are recorded", run, a.runs, run - 1);
	}
	sb_free(&name);
	record_args_free(&a);
	return ret;
}
