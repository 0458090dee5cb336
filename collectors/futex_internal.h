/*
 * futex_internal.h: what the files of the futex collector share.
 *
 * futex.c decodes the samples into the analyzer's state (struct
 * futex_state: the tracker, and per event of the recording what it is to
 * this collector); futex_report.c reads that state to print the text and
 * JSON reports, which futex.c's analyzer table names; futex_op.c says which
 * system call an op is made with, for the tracker and the report.
 *
 * This header is private to collectors/futex*.c; the public contracts are
 * include/sigprof/collectors/futex_op.h and futex_tracker.h; the rest of the report
 * reaches the collector only through its analyzer (collector.h).
 */
#ifndef SIGPROF_FUTEX_INTERNAL_H
#define SIGPROF_FUTEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sigprof/collectors/futex_tracker.h"
#include "sigprof/collectors/stack_lender.h"
#include "sigprof/collectors/waits.h"
#include "sigprof/kernel/rate_bound.h"
#include "sigprof/base/util.h"

struct json_writer;
struct figure_rows;
struct findings;
struct profile;
struct view_options;
struct sp_event;
struct sp_sample;
struct sp_sample_id;
struct perf_event_header;

/*
 * The events of one tracepoint are told apart by a suffix of their name
 * (docs/futex.md): "syscalls:sys_enter_futex" records every call (trace,
 * and sample mode's gate) or counts them (count), "...#sampled" is sample
 * mode's weighted alternate, "...#count" its meter, "...#WAKE" the counter
 * of one futex(2) command, "...#stack" trace mode's copies of the user
 * stack (taken while the rate allows) that lend a DWARF stack to the
 * frame-pointer stacks of the entries of the same call site.
 */
#define FUTEX_SAMPLED_SUFFIX RATE_BOUND_SAMPLED_SUFFIX
#define FUTEX_COUNT_SUFFIX RATE_BOUND_COUNT_SUFFIX
#define FUTEX_STACK_SUFFIX RATE_BOUND_STACK_SUFFIX
/* sample mode's bound, calls a second per tracepoint and CPU (futex.c); the report names it, the recording does not */
#define FUTEX_SAMPLE_BOUND_HZ 50000

enum event_kind {
	KIND_UNKNOWN = 0,
	KIND_OTHER,
	KIND_ENTER,      /* an entry tracepoint: its records are calls */
	KIND_EXIT,       /* an exit tracepoint: results */
	KIND_METER,      /* a counter of an entry or exit tracepoint's hits (sample mode's meter) */
	KIND_OP_COUNTER, /* a counter of the futex(2) calls of one command */
	KIND_STACK,      /* an entry's stack copy: lends its stack to the entry of the same call */
};

/* What one of the recording's events is to this collector, and what its samples added up to. */
struct event_info {
	enum event_kind kind;
	enum futex_op_id syscall; /* FOP_SYS_* for futex2 calls, FOP_UNKNOWN for futex(2) */
	bool entry;               /* of an entry tracepoint (KIND_ENTER, and meters and counters of one) */
	bool weighted;            /* sample mode's alternate: samples with the kernel's period as weight */
	enum futex_op_id op;      /* KIND_OP_COUNTER: its command */
	uint64_t samples, weight;
};

struct futex_state {
	int self;                  /* this collector's index in the profile */
	const struct profile *profile; /* for the wait hook's weights */
	struct futex_tracker *tracker;
	struct event_info *events; /* by sp_event index */
	size_t nevents;
	uint64_t undecoded;        /* samples whose raw fields could not be read */
	/* the copies of the user stack (#stack) joined to the entries of their calls */
	struct stack_lender *lender;
	uint64_t stack_copies;     /* copies recorded (#stack samples decoded) */
	/* the entry sample() just took, interned as counted_from, counts on counted_on (the counted_stack hook) */
	uint32_t counted_from, counted_on;
	/* the last sample path_of() decoded, reused by sample(): its record's raw data identifies it */
	const void *cached_raw;
	bool cached_ok;
	struct futex_call call;
	struct wait_linker *waits; /* why each wait ended (waits.h, docs/waits.md) */
};

/* The system call an op is made with: FOP_SYS_* for futex2, FOP_UNKNOWN for futex(2). */
enum futex_op_id futex_op_syscall(enum futex_op_id id);

/* What ev is to this collector (looked up once, then kept in st->events). */
struct event_info *futex_event_info_of(struct futex_state *st, const struct sp_event *ev);

/* The analyzer's text and JSON reports and its keyed figures (futex_report.c). */
void futex_text(void *state, const struct profile *p, const struct view_options *o, FILE *out);
void futex_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w);
void futex_figures(void *state, const struct profile *p, struct figure_rows *rows);
void futex_findings(void *state, const struct profile *p, struct findings *out);

/* The wake linker's side of the analyzer (futex_waits.c): its feed from other collectors, its outputs. */
void futex_waits_observe(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack);
void futex_waits_record(void *state, const struct profile *p, const struct perf_event_header *rec,
			const struct sp_sample_id *id);
void futex_waits_text(struct futex_state *st, const struct profile *p, const struct view_options *o, FILE *out);
void futex_waits_json(struct futex_state *st, const struct profile *p, const struct view_options *o,
		      struct json_writer *w);
void futex_waits_figures(struct futex_state *st, const struct profile *p, struct figure_rows *rows);
/* ", woken by 1234 (comm) FUTEX_WAKE on W" for the exit of a wait at its time, into buf; false when none. */
bool futex_waits_describe_exit(struct futex_state *st, const struct profile *p, uint32_t tid, uint64_t time,
			       char *buf, size_t len);
/* "next tid 4243's sleep of 1.2 ms ended by task tid 4242 (comm)" for a switch-in that ended a sleep; false when none. */
bool futex_waits_describe_observed(void *state, const struct profile *p, const struct sp_sample *s, char *buf,
				   size_t len);

#endif
