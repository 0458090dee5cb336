/*
 * collector.h: what a collector is.
 *
 * A collector owns one subject (CPU time, scheduler waits, signals, ...):
 * on the record side it says which events to open; on the report side it
 * names what its samples mean.  Collectors are listed once, in
 * collectors/registry.c (registry.h); record iterates that table and
 * report hands it to the profile loader (profile_options).
 *
 * Layer: model.  This header is the interface between the model and the
 * collectors: the loader drives analyzers through it without knowing any
 * collector; the record side's types (event lists, record options) are
 * the kernel interface's (perf.h).
 */
#ifndef SIGPROF_COLLECTOR_H
#define SIGPROF_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sigprof/kernel/perf.h"
#include "sigprof/kernel/sample.h"

struct profile;
struct pmu_event;
struct json_writer;
struct view_options;
struct figure_rows;
struct findings;
struct weight_kind;
struct sched_event_facts;
struct wake_pair;
struct wait_sample;
struct timeline_mark;

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
	/*
	 * Optional: its own weight kinds (weights.h: WEIGHT_OWN + i), which its
	 * analyzer adds with view_add_weight(): the figures that make sense as
	 * the weight of a stack (signal: deliveries, handler ns).  Without
	 * them, its weights are its samples and their periods.
	 */
	const struct weight_kind *weights;
	size_t nweights;
	/*
	 * Its samples are a profile of on-CPU time (cpu): the wall-clock
	 * profile's running stacks (timeline.h), split by their periods.
	 */
	bool on_cpu_time;
};

/*
 * A collector's report side.  The loader creates it with the profile and
 * the collector's own index there (its handle: stacks carry that index; no
 * collector looks itself up by name), then calls, for each of the
 * collector's samples in time order: path_of() (the path the sample is
 * charged to, or -1 to take its stack's path from the frames), then
 * sample() with the interned stack (unless path_of() said PATH_NOT_WORKLOAD).
 * finish() runs once after the last record; text() prints the collector's
 * section after the path table, json() writes its top-level key(s).  An
 * analyzer reads the profile only through view.h.
 */
struct collector_analyzer {
	void *(*create)(const struct profile *p, int self);
	int (*path_of)(void *state, const struct profile *p, const struct sp_sample *s);
	void (*sample)(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack);
	void (*finish)(void *state, const struct profile *p);
	void (*text)(void *state, const struct profile *p, const struct view_options *o, FILE *out);
	void (*json)(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w);
	void (*destroy)(void *state);
	/*
	 * Optional: every kernel record that is not a sample (COMM, FORK, EXIT,
	 * SWITCH, ...), in time order among the samples, with its sample_id
	 * trailer decoded (id->valid is false when it has none).  Every
	 * analyzer with this hook sees every such record, whichever event
	 * carried it: the task records come with the first event of the run.
	 * The report's task and time filters apply to them, but for LOST and
	 * LOST_SAMPLES, which every analyzer sees (a loss is the whole run's).
	 */
	void (*record)(void *state, const struct profile *p, const struct perf_event_header *rec,
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
	/*
	 * Its PATH_STACK_ONLY samples are long copies of the user stack beside
	 * counted samples that take a short one (the cpu collector's "#stack"
	 * event; the futex, sched and signal collectors' copies beside their
	 * keys): at the end of the load, a counted sample's stack cut where its
	 * copy ran out, and not lent one (lent_stack), counts on the stack a
	 * long copy through the same frames completes it to
	 * (stack_completion.h).  Its finish() remaps its own tables with
	 * view_stack_moved().
	 */
	bool completes_cut_stacks;
	/*
	 * Optional: the figures of this collector's section as keyed rows
	 * (view.h): stable dotted keys beginning with the collector's name,
	 * each with a value, a unit and whether it is exact.  A key names one
	 * figure: where two things of the collector get one key, it merges
	 * them with figure_rows_merge() (a second figure_rows_add() of a key is
	 * refused).
	 */
	void (*figures)(void *state, const struct profile *p, struct figure_rows *rows);
	/*
	 * Optional: what this collector found, one line each, and the caveats
	 * that change how to read its figures, for the first screen of the
	 * text report (view/findings.h: findings_add(), findings_caveat()).
	 */
	void (*findings)(void *state, const struct profile *p, struct findings *out);

	/* ---- hooks: what the loader or another collector may ask of this one ---- */

	/*
	 * Optional: the signals whose handlers run on thread tid of process pid
	 * at the time of the sample being loaded, innermost first, into sigs (at
	 * most max); returns how many run.  The loader names the signal frames
	 * the unwinder found without a siginfo with them (the signal collector).
	 */
	uint32_t (*running_handlers)(void *state, uint32_t pid, uint32_t tid, int *sigs, uint32_t max);
	/*
	 * Optional: the stack (an interned stack id of the profile) of the
	 * delivery that started the k-th running handler (0: the innermost) of
	 * thread tid of process pid, as running_handlers() counts them, with
	 * its signal in *sig; COLLECTOR_NO_STACK when there is none.  returned:
	 * the thread is in the rt_sigreturn of its innermost handler (k is 0),
	 * which may have closed it already.  The loader
	 * joins a handler's stack that stops at a signal frame it cannot cross
	 * (the handler ran on an alternate signal stack) to it: the delivery
	 * saw the interrupted code's registers and stack (the signal collector).
	 */
	uint32_t (*delivery_stack)(void *state, uint32_t pid, uint32_t tid, uint32_t k, bool returned, int *sig);
	/*
	 * Optional: whether [start, end) of process pid holds data this
	 * collector knows (the futex collector: a futex word).  Asked by
	 * other analyzers after the last sample, from their finish() (c2c
	 * marks such cachelines), through view_data_marked_by().
	 */
	bool (*marks_data)(void *state, uint32_t pid, uint64_t start, uint64_t end);
	/*
	 * Optional: one of this collector's samples in its own words, for
	 * `sigprof script` ("WAIT_BITSET|PRIVATE on gate", "SIGUSR1
	 * delivered"), into buf; false when it has nothing to add.
	 */
	bool (*describe)(void *state, const struct profile *p, const struct sp_sample *s, char *buf, size_t len);
	/*
	 * Optional: what this analyzer adds, for `sigprof script`, to a
	 * sample of another collector that it observed (observe() saw it
	 * first), into buf; false when nothing (the futex collector's wake
	 * linker: the waker of the sleep that a sched_switch's switch-in
	 * ended).
	 */
	bool (*describe_observed)(void *state, const struct profile *p, const struct sp_sample *s, char *buf,
				  size_t len);
	/*
	 * Optional: the futex word of thread tid's futex call pending at time
	 * (entered at or before time, not yet exited), into *pid and *uaddr;
	 * false when the thread has none, or when its entry was a weighted
	 * sample (its exit may be missing too: it would be stale) (the futex
	 * collector).  Asked by other
	 * analyzers from their sample(), in time order, through
	 * view_pending_futex_word() (the lock collector charges a contention
	 * inside a futex call to its word).
	 */
	bool (*pending_futex_word)(void *state, uint32_t tid, uint64_t time, uint32_t *pid, uint64_t *uaddr);
	/*
	 * Optional: the mark that sample s of this collector, counted on
	 * stack, puts on its thread's timeline (timeline.h), into *out; false
	 * when none (the lock collector: a contention's begin).  Asked by the
	 * loader after sample() when the report has a timeline, which keeps
	 * the marks with its spans.
	 */
	bool (*timeline_mark)(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack,
			      struct timeline_mark *out);
	/*
	 * Optional: the stack (an interned stack id of this collector, on the
	 * same path) that the sample just handed to sample() as `stack` is
	 * counted on, or `stack` itself.  Asked by the loader after sample() of
	 * every counted sample (not of a PATH_STACK_ONLY one); the sample's count,
	 * weight and weights go to the stack it returns.  The futex collector
	 * counts an entry's frame-pointer stack on the DWARF stack of a copy
	 * (PATH_STACK_ONLY) of the same call or call site.
	 */
	uint32_t (*counted_stack)(void *state, const struct profile *p, uint32_t stack);
	/*
	 * Optional, with counted_stack: at the end of the load, the stack
	 * `stack` counts on now, or `stack` itself.  A key that counted on
	 * itself because its call site had no copy yet (the copies' windows
	 * had not caught it) counts on the stack the copies taught since: the
	 * loader moves its samples there (lend_late_keys(), profile.c), as
	 * counted_stack() moves the keys that came after.
	 */
	uint32_t (*lent_stack)(void *state, const struct profile *p, uint32_t stack);
	/*
	 * Optional: every counted sample of the other collectors (not a
	 * PATH_STACK_ONLY one, not one path_of() dropped), after its own
	 * analyzer's sample(), with the stack it counts on, in time order.  An
	 * analyzer that joins what several collectors saw has it (the futex
	 * collector's wake linker: the scheduler's switches and wakings, the
	 * cpu samples of the wakers; docs/waits.md).
	 */
	void (*observe)(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack);
	/*
	 * Optional: what sample s of this collector says about the scheduling
	 * of the workload's tasks, into *out; false when it says nothing (the
	 * sched collector: its sched_switch and sched_waking).  Asked by other
	 * analyzers from observe(), through view_sched_event_of().
	 */
	bool (*sched_event)(void *state, const struct profile *p, const struct sp_sample *s,
			    struct sched_event_facts *out);
	/*
	 * Optional: the waits this collector linked to the task that ended
	 * them, per pair of stacks (the waiter's, the waker's at the wake),
	 * into *pairs (valid until the state changes); returns how many (the
	 * futex collector's wake linker; `report --folded --weight wake`).
	 */
	size_t (*wake_pairs)(void *state, const struct wake_pair **pairs);
	/*
	 * Optional: the waits this collector linked to their endings, per
	 * waiter thread and stack, word, ending and waker, into *samples
	 * (valid until the state changes); returns how many (the futex
	 * collector's wake linker; `report --pprof`'s waits and waited types).
	 */
	size_t (*wait_samples)(void *state, const struct wait_sample **samples);
};

/* A waiter's stack, the stack its waker woke it from, and the waits and wait time of the pair. */
struct wake_pair {
	uint32_t waiter_stack;
	uint32_t waker_stack; /* COLLECTOR_NO_STACK: the waker made no futex call (its stack is not recorded) */
	uint64_t waits, ns;
};

/* The waits of one waiter thread on one stack and word, ended one way by one waker (wait_samples). */
struct wait_sample {
	uint32_t pid, tid;        /* the waiter */
	uint32_t stack;           /* the waiter's stack: its futex entry, or its switch-out */
	bool futex;               /* a futex wait on the word below, or a sleep outside futex calls */
	uint32_t word_pid;
	uint64_t uaddr;
	const char *ending;       /* "task", "interrupt", "signal", "timeout", "error", "unlinked" (docs/waits.md) */
	const char *link;         /* "waking", or the reason the link is partial or missing ("linked_by_word", ...) */
	uint32_t waker_pid, waker_tid; /* 0: no task woke it */
	const char *waker_op;     /* the waker's futex call ("WAKE"), NULL when none */
	uint32_t waker_stack;     /* the waker's stack at the wake; COLLECTOR_NO_STACK: not recorded */
	uint64_t waits, ns;
};

/* What a scheduler sample says (collector_analyzer.sched_event). */
struct sched_event_facts {
	/* SCHED_FACT_WAKING_STACK: a waking again, by a task of the workload, with the waker's stack (not counted) */
	enum { SCHED_FACT_SWITCH, SCHED_FACT_WAKING, SCHED_FACT_WAKING_STACK } kind;
	/* SCHED_FACT_SWITCH: prev switches out (blocked: sleeps; exiting: dead), next switches in (0: none of ours) */
	uint32_t prev_tid, next_tid;
	bool prev_sleeps, prev_dead;
	/* SCHED_FACT_WAKING: target is woken by the sample's task, or in interrupt context (hard or soft irq, NMI) */
	uint32_t target;
	bool irq;
};

/* One figure per path of a collector (collector_analyzer.path_figures). */
struct path_figure {
	const char *column; /* the path table's heading: "wait ms", "HITM lcl" */
	const char *key;    /* JSON key after "COLLECTOR_" (c2c_hitm_local); NULL: the column, spaces as '_' */
	int decimals;       /* 0: a count, written as an integer */
	const char *unit;   /* of its keyed figure rows (view.h): "ms", "samples"; NULL: "count" */
};

/*
 * What path_of() returns for a sample that concerns no task of the
 * workload (a system-wide event's hit on some other task): the loader
 * drops it, neither interned nor counted, and sample() is not called.
 */
#define PATH_NOT_WORKLOAD (-2)

/*
 * What path_of() may OR into a path (never into -1) for a sample that only
 * lends its stack to another sample of the same call (the futex
 * collector's stack copies in trace mode): the loader interns its stack on
 * that path and hands it to sample(), but counts it nowhere: no sample, no
 * weight, no share of the path.
 */
#define PATH_STACK_ONLY 0x100

/* What delivery_stack() returns when it knows no stack. */
#define COLLECTOR_NO_STACK UINT32_MAX

#endif
