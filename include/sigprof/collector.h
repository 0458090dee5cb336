/*
 * collector.h: what a collector is.
 *
 * A collector owns one subject (CPU time, scheduler waits, signals, ...):
 * on the record side it says which events to open; on the report side it
 * names what its samples mean.  Collectors are listed once, in
 * collectors/registry.c; record and report iterate that table.
 */
#ifndef SIGPROF_COLLECTOR_H
#define SIGPROF_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sigprof/perf.h"
#include "sigprof/sample.h"

struct profile;
struct pmu_event;
struct report_options;
struct json_writer;

enum call_graph_mode {
	CALL_GRAPH_FP,    /* the kernel's callchain: kernel frames + frame-pointer user frames */
	CALL_GRAPH_NONE,  /* the sampled IP only */
	CALL_GRAPH_DWARF, /* the kernel's callchain for kernel frames; user registers and a copy of the user
			     stack, unwound with DWARF CFI at report time */
};

/* Bytes of user stack a DWARF sample copies under --call-graph dwarf without a SIZE (perf's default). */
#define DEFAULT_STACK_USER_SIZE 8192u
/*
 * Bytes of user stack the futex and sched collectors copy by default (no
 * --call-graph): they sample far more often than the cpu collector, and the
 * copy is most of their record.  A quarter of perf's default still names
 * every function of the futex-wait stacks measured in docs/performance.md
 * (stress-ng's stop short of _start only); at 4096 the recorder wrote
 * 300 MB/s on stress-ng --futex and lost a quarter of it on a busy machine.
 */
#define WAIT_STACK_USER_SIZE 2048u
/* The kernel's bound: a sample record's size is a u16, the stack size a multiple of 8 below it. */
#define MAX_STACK_USER_SIZE 65528u

enum futex_mode {
	FUTEX_SAMPLE, /* every call up to a rate bound, a bounded rate with weights above it */
	FUTEX_TRACE,  /* every call */
	FUTEX_COUNT,  /* exact totals per op only */
};

struct record_options {
	uint64_t frequency;         /* samples per second per CPU, when period is 0 */
	uint64_t period;            /* sample every period events; 0: use frequency */
	enum call_graph_mode call_graph; /* the user's --call-graph; meaningful when call_graph_chosen */
	bool call_graph_chosen;          /* false: each collector takes its own default (call_graph_for()) */
	uint32_t stack_user_size;        /* bytes of user stack per DWARF sample; with call_graph_chosen */
	bool exclude_kernel;        /* set when the kernel may not be sampled (not root, paranoid > 1) */
	enum futex_mode futex;      /* --futex */
	bool want_data_mmaps;       /* a collector names data addresses (futex words): record data mappings too */
};

/* A growable list of event specs that collectors append to. */
struct event_list {
	struct event_spec *specs;
	size_t count, cap;
};

struct collector {
	const char *name;
	const char *description;
	/*
	 * Append this collector's events.  0 when added; a negative errno when
	 * this machine cannot support the collector, with the reason in
	 * reason (the recording goes on without it).
	 */
	int (*add_events)(struct record_options *opts, struct event_list *events, char *reason,
			  size_t reasonlen);
	/* What one sample of this collector counts, for report headings ("samples", "misses"). */
	const char *unit;
	/* The report side, NULL for collectors whose samples are only counted per stack (cpu). */
	const struct collector_analyzer *analyzer;
	/*
	 * Optional: whether an event the user named with -e is this
	 * collector's (cache: cache-misses, cache-references), so that its
	 * samples land in this collector's column.  Events no collector owns
	 * go to the "events" collector.
	 */
	bool (*owns_event)(const struct pmu_event *ev);
	/* Not in the default set: runs only when named, or when it owns an event the user named. */
	bool on_request;
	/* What it opens, in words, for `sigprof list` (also when it cannot open here). */
	const char *events;
};

/*
 * A collector's report side.  The loader calls, for each of the
 * collector's samples in time order: path_of() (the path the sample is
 * charged to, or -1 to take its stack's path from the frames), then
 * sample() with the interned stack (unless path_of() said PATH_NOT_WORKLOAD).
 * finish() runs once after the last record; text() prints the collector's
 * section after the path table, json() writes its top-level key(s).
 */
struct collector_analyzer {
	void *(*create)(struct profile *p);
	int (*path_of)(void *state, struct profile *p, const struct sp_sample *s);
	void (*sample)(void *state, struct profile *p, const struct sp_sample *s, uint32_t stack);
	void (*finish)(void *state, struct profile *p);
	void (*text)(void *state, const struct profile *p, const struct report_options *o, FILE *out);
	void (*json)(void *state, const struct profile *p, const struct report_options *o, struct json_writer *w);
	void (*destroy)(void *state);
	/*
	 * Optional: every kernel record that is not a sample (COMM, FORK, EXIT,
	 * SWITCH, ...), in time order among the samples, with its sample_id
	 * trailer decoded (id->valid is false when it has none).  Every
	 * analyzer with this hook sees every such record, whichever event
	 * carried it: the task records come with the first event of the run.
	 */
	void (*record)(void *state, struct profile *p, const struct perf_event_header *rec,
		       const struct sp_sample_id *id);
	/*
	 * Optional: figures of this collector per path (sched: wait time in
	 * ms; c2c: HITM and DRAM counts), each printed as an extra column of
	 * the path table and written in JSON beside the path's samples.
	 * path_figure() gives figure number `figure` (an index into
	 * path_figures) for one path.
	 */
	const struct path_figure *path_figures;
	size_t npath_figures;
	double (*path_figure)(void *state, const struct profile *p, int path, size_t figure);
	/*
	 * The text report prints this collector's top functions and stacks
	 * as it does for a collector without an analyzer (cache: its misses
	 * are plain samples; the analyzer adds figures beside them).
	 */
	bool show_stacks;
};

/* One figure per path of a collector (collector_analyzer.path_figures). */
struct path_figure {
	const char *column; /* the path table's heading: "wait ms", "HITM lcl" */
	const char *key;    /* JSON key after "COLLECTOR_" (c2c_hitm_local); NULL: the column, spaces as '_' */
	int decimals;       /* 0: a count, written as an integer */
};

/* The JSON key of a path figure: "sched_wait_ms", "c2c_hitm_local". */
const char *path_figure_key(const char *collector, const struct path_figure *f, char *buf, size_t len);

/*
 * What path_of() returns for a sample that concerns no task of the
 * workload (a system-wide event's hit on some other task): the loader
 * drops it, neither interned nor counted, and sample() is not called.
 */
#define PATH_NOT_WORKLOAD (-2)

extern const struct collector *const collector_table[];
extern const size_t collector_count;
const struct collector *collector_find(const char *name);

/* The collector an event the user named belongs to: the first whose owns_event() says so, else "events". */
const struct collector *collector_for_event(const struct pmu_event *ev);

/* Shared helpers for collectors. */
struct event_spec *event_list_add(struct event_list *list, const char *name, const char *collector);
/* Drop the specs from index count on (what a collector added before it failed). */
void event_list_truncate(struct event_list *list, size_t count);
void event_list_free(struct event_list *list);
/*
 * Append a parsed event (pmu.h) for collector, sampled as opts says (the
 * user's frequency or period and call graph; default call graph
 * default_call_graph), a tracepoint at every hit with its raw data.  With
 * :P the highest precise_ip that opens here is taken.  0, or -errno with
 * the reason in reason.
 */
int event_list_add_parsed(struct event_list *list, const struct record_options *opts, const struct pmu_event *ev,
			  const char *collector, enum call_graph_mode default_call_graph, char *reason,
			  size_t reasonlen);
/*
 * The call-graph mode a collector's events use: the user's --call-graph when
 * given, else the collector's own default.
 */
enum call_graph_mode call_graph_for(const struct record_options *opts, enum call_graph_mode collector_default);
/* Likewise the bytes of user stack its DWARF samples copy: the user's SIZE, else the collector's default. */
uint32_t stack_user_size_for(const struct record_options *opts, uint32_t collector_default);
/*
 * The attr every sampling event starts from: identifier, tid, time, cpu,
 * period, and the stack opts->call_graph asks for (callchain; with DWARF
 * the kernel part of the callchain plus user registers and stack).
 */
void sampling_attr_init(struct perf_event_attr *attr, const struct record_options *opts, uint32_t type,
			uint64_t config);

#endif
