/*
 * lock_internal.h: what the files of the lock collector share.
 *
 * lock.c decodes the samples into the analyzer's state (struct lock_state:
 * the tracker, and per event of the recording which tracepoint it is);
 * lock_report.c reads that state to print the text and JSON reports and the
 * keyed figures, which lock.c's analyzer table names.  Private to
 * collectors/lock*.c; the public contract is include/sigprof/collectors/lock.h.
 */
#ifndef SIGPROF_LOCK_INTERNAL_H
#define SIGPROF_LOCK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sigprof/collectors/lock.h"

struct json_writer;
struct figure_rows;
struct findings;
struct profile;
struct view_options;

/* What an event of the recording is to this collector: a lock_event_kind, or one of these. */
enum { LOCK_KIND_UNKNOWN = -1, LOCK_KIND_OTHER = -2 };

struct lock_state {
	int self;                 /* this collector's index in the profile */
	struct lock_tracker *tracker;
	int *kinds;               /* by sp_event index */
	bool *weighted;           /* by sp_event index: a rate bound's alternate ("#sampled") */
	size_t nevents;
	uint64_t begins, ends;    /* samples decoded */
	uint64_t weighted_samples; /* of them, the alternates' */
	uint64_t weighted_begins;  /* of those, begins */
	uint64_t undecoded;       /* samples whose raw fields could not be read */
	/* the sample sample() just decoded, when a begin, and its lock: the timeline_mark hook's, asked next */
	const struct sp_sample *begin_sample;
	uint64_t begin_addr;
};

/* The analyzer's text and JSON reports and its keyed figures (lock_report.c). */
void lock_text(void *state, const struct profile *p, const struct view_options *o, FILE *out);
void lock_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w);
void lock_figures_rows(void *state, const struct profile *p, struct figure_rows *rows);
void lock_findings(void *state, const struct profile *p, struct findings *out);

#endif
