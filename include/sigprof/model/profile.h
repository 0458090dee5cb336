/*
 * profile.h: a recording as the report sees it.
 *
 * Layer: model.  The commands read a loaded profile directly; collectors
 * read it only through view.h.
 *
 * profile_load() streams a data file once: META/EVENT/TOTALS/FINISH fill
 * in what ran and the exact totals; COMM/MMAP2/FORK/EXIT feed the process
 * table; every sample is symbolized, its stack interned and counted.
 * Nothing per-sample is kept, so memory follows the number of distinct
 * stacks.  The output writers (report_text.c, report_json.c) read a loaded
 * profile and never the file.
 */
#ifndef SIGPROF_PROFILE_H
#define SIGPROF_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/model/filter.h"
#include "sigprof/kernel/format.h"
#include "sigprof/kernel/sample.h"
#include "sigprof/model/stacks.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/symbolize/unwind.h"
#include "sigprof/model/weights.h"

struct collector;
struct profile;
struct timeline;

#define PROFILE_MAX_COLLECTORS 16
#define PROFILE_MAX_TIME_FIGURES 16
#define PROFILE_MAX_RESULTS 64       /* results.h's RESULT_MAX */

struct collector_info {
	char name[32];
	bool ok;                /* opened */
	char reason[256];       /* why not, when !ok */
	char event[64];         /* the event its samples come from, e.g. cpu-clock */
	uint64_t samples;       /* decoded samples attributed to it */
	uint64_t weight;        /* sum of their periods */
	uint64_t path_samples[PATH_COUNT];
	const struct collector *impl; /* the collector of that name in profile_options.collectors, or NULL */
	void *state;                  /* its analyzer's state, when it has an analyzer */
};

/*
 * What the user stacks achieved: DWARF unwinding of the samples' stack
 * copies, and the frame-pointer chains the kernel walked (profile.c cuts
 * those at an invented frame).
 */
struct unwind_counts {
	uint64_t samples;                          /* samples with a user stack: registers and a copy, or a chain */
	uint64_t fp_chains;                        /* of those, frame-pointer chains */
	uint64_t spliced;                          /* DWARF stacks longer than their copy that went on along the
						      frame-pointer walk the sample also carried */
	uint64_t joined;                           /* DWARF stacks of a handler on an alternate signal stack joined
						      to the stack of the delivery that started it */
	uint64_t lent;                             /* stacks cut short by design (the futex collector's keys) that
						      count on their call site's whole stack: in complete */
	uint64_t completed;                        /* stacks cut where a short copy ran out (the cpu collector's)
						      completed from a long copy through the same frames: in
						      complete */
	uint64_t complete;                         /* unwound to the outermost frame */
	uint64_t failures[UNWIND_FAILURE_COUNT];   /* the others, by why they stopped (index 0 unused) */
	uint64_t ends_in_unknown;                  /* their last frame before any [unwind: ...] names no function */
	uint64_t ends_in_eh_frame_name;            /* of those, a frame named only from .eh_frame (a stripped file) */
};

struct profile_options {
	const char *kallsyms;            /* NULL: /proc/kallsyms */
	int input_format;                /* enum sp_input_format (datafile.h): 0 takes either format by its magic */
	const struct path_rules *rules;  /* NULL: built-in rules only */
	bool srcline;                    /* file:line in frames and inlined calls as frames (stacks.h) */
	/*
	 * The collectors whose analyzers the loader drives (registry.h's
	 * table, from the command): a collector of the file is matched by
	 * name.  NULL: none, the samples are only counted per stack.
	 */
	const struct collector *const *collectors;
	size_t ncollectors;
	/* Fill profile.weights: per thread and label (weights.h), for pprof and per-thread folded stacks. */
	bool weights;
	/*
	 * Optional: called for every decoded sample of the workload's tasks, in
	 * time order, after it was interned and handed to its analyzer (`sigprof
	 * script`); collector is its index in the profile, stack its stack id.
	 */
	void (*on_sample)(void *ctx, const struct profile *p, const struct sp_sample *s, int collector,
			  uint32_t stack);
	void *ctx;
	/* report's filters (filter.h), applied before any analyzer sees a record; NULL: none */
	const struct profile_filter *filter;
	/* Follow each thread's states (profile.timeline, timeline.h); timeline_spans: keep every span too. */
	bool timeline, timeline_spans;
};

struct profile {
	const char *file;
	/* META */
	char **argv;
	int argc;
	char hostname[256], kernel[256], arch[64], version[32], call_graph[16];
	int ncpus;
	uint64_t start_realtime_ns, start_monotonic_ns;
	char **notes;
	int nnotes;
	unsigned piece;              /* --switch-output: this file's number among the pieces, from 1; 0 when none */
	char switch_output[32];      /* --switch-output's SIZE|TIME, when piece */
	/* META rusage: the workload's LKP time.* figures (user_time, voluntary_context_switches, ...) */
	struct {
		char name[48];
		double value;
	} time_figures[PROFILE_MAX_TIME_FIGURES];
	int ntime_figures;
	/* META results: the workload's own figures from its output (results.h: stress-ng.timer.ops_per_sec, ...) */
	struct {
		char name[96];
		double value;
	} results[PROFILE_MAX_RESULTS];
	int nresults;
	struct collector_info collectors[PROFILE_MAX_COLLECTORS];
	int ncollectors;
	/* EVENT + TOTALS, TRACEPOINT */
	struct sp_event_set events;
	struct tracepoint_set tracepoints;
	/* FINISH, when the file has one */
	bool has_finish;
	struct sp_finish_record finish;
	/* what the stream held */
	bool truncated;              /* no FINISH record: cut short, or its reading stopped at damage (problem) */
	bool damaged;                /* problem is damage (a corrupt record or chunk), not a cut */
	char problem[200];           /* why reading stopped early, if it did */
	uint64_t records, samples, lost, lost_samples;
	uint64_t throttle_records;   /* PERF_RECORD_THROTTLE: the kernel stopped sampling an event for a while */
	uint64_t unknown_samples;    /* id matches no EVENT */
	uint64_t bad_samples;        /* malformed for their event */
	uint64_t first_time, last_time;
	char kernel_symbols_problem[200];
	char kernel_symbols[300];    /* where kernel frames got their names; empty when no kernel frame needed one */
	struct unwind_counts unwind;
	/* the collectors the loader may drive (profile_options.collectors) */
	const struct collector *const *known_collectors;
	size_t nknown_collectors;
	/* aggregation */
	struct proc_table *procs;
	struct stack_table stacks;
	struct weight_table *weights;  /* profile_options.weights; else NULL */
	struct timeline *timeline;     /* profile_options.timeline: the threads' states (timeline.h); else NULL */
	/* the filters (profile_options.filter) and what they did */
	const struct profile_filter *filter; /* NULL: none */
	char filters[512];           /* as the header names them ("--pid 12 --time 1,2"); empty: none */
	char target[512];            /* what record attached to (META target: "-p 1234"), empty for a command */
	char followed[512];          /* how record followed the command (META followed: "cgroup /sigprof-42", "inherit: why") */
	/* META workload_pid: a perf.data's forked command (perfdata.c); 0: every task of the file is the workload's */
	uint32_t workload_pid;
	struct u64_map workload_pids; /* workload_pid and the processes it forked (FORK records) */
	uint64_t filtered_samples;   /* samples the filters dropped */
	uint64_t stack_only_samples; /* samples that only lent their stack to another (PATH_STACK_ONLY): counted nowhere */
	uint32_t *stacks_moved_to;   /* per stack id below nstacks_moved, the stack its samples count on since the end of
					the load (keys lent late, cpu stacks completed: lend_late_keys()); NULL: none moved */
	uint32_t nstacks_moved;
	uint64_t window_start, window_end; /* --time's window in the recording's clock (0, UINT64_MAX: all) */
	uint64_t span_first, span_last;    /* the recording's first and last record times (with --time) */
	bool window_pending;         /* --time on a pipe: the window starts at the first timed record */
};

/* 0, or -errno/-EINVAL with a one-line reason in err (without the file name). */
int profile_load(const char *file, const struct profile_options *opts, struct profile *p, char *err,
		 size_t errlen);
void profile_free(struct profile *p);

/* The collector index of a name (as in stack->collector), or -1. */
int profile_collector(const struct profile *p, const char *name);

/* Duration in seconds: from FINISH, else from the first to the last sample. */
double profile_duration_s(const struct profile *p);
/*
 * With --time: where its window begins in the recording (ns from the first
 * record) and how long it is, clipped to the recording; false without one.
 */
bool profile_time_window(const struct profile *p, uint64_t *offset_ns, uint64_t *duration_ns);
/*
 * The workload's exit status as a shell reports it; -1 when the recording
 * was cut short (no FINISH), PROFILE_EXIT_UNKNOWN when its FINISH holds a
 * wait status that is neither an exit nor a death by signal,
 * PROFILE_EXIT_NOT_RECORDED when the file holds none (a perf.data).
 */
#define PROFILE_EXIT_UNKNOWN (-2)
#define PROFILE_EXIT_NOT_RECORDED (-3)
int profile_exit_status(const struct profile *p);
/*
 * The samples the filters kept: counted by their collectors.  With the
 * dropped ones, the stack copies (samples that only lend their stack:
 * stack_only_samples) and the undecoded ones they make up p->samples.
 */
uint64_t profile_kept_samples(const struct profile *p);
/* How a recording without its closing section ended, for a warning: "was cut short" or "is damaged" (damaged). */
const char *profile_end_verb(const struct profile *p);
/*
 * Hits of every-hit events (tracepoints sampled with period 1) that have no
 * sample in the file: their exact total minus their samples; 0 without
 * TOTALS.  No LOST record tells of them: the kernel counts a hit and writes
 * no sample while it throttles the event (faster than
 * kernel.perf_event_max_sample_rate; THROTTLE records say when), and this
 * VM's kernel does it for the hits that come on an idle CPU (docs/sched.md,
 * Limits); records lost count here too.  profile_unsampled_hits_of() gives
 * those of events[e] alone.
 */
uint64_t profile_unsampled_hits(const struct profile *p);
uint64_t profile_unsampled_hits_of(const struct profile *p, size_t e);
/* A sampling event of a collector and the samples of it that the collector counts. */
struct collector_event {
	const char *name;    /* the event's name in the file, owned by the profile */
	uint64_t samples;
	uint64_t stack_copies; /* samples that only lent their stack to others, counted nowhere */
};
/*
 * The sampling events of collector c in file order, each name once (an
 * event opened twice under one name adds up): their samples add up to the
 * collector's.  Counting events (no sample period) are not listed.
 * Returns the count; *rows to free.
 */
size_t profile_collector_events(const struct profile *p, int c, struct collector_event **rows);
/* Whether every sampling event of collector c has a period of time (cpu-clock, task-clock: ns), and one at least. */
bool profile_period_is_time(const struct profile *p, int c);
/* Lost records (LOST + LOST_SAMPLES) and their share of samples + lost, in percent. */
uint64_t profile_lost(const struct profile *p, double *share_percent);

#endif
