/*
 * weights.h: what each stack weighs, per thread and label: the table the
 * per-thread outputs (pprof's samples, folded stacks rooted per command or
 * thread, time-weighted folded stacks) are written from.
 *
 * Layer: model.  The stack table (stacks.h) counts samples per stack only;
 * this table splits them by who ran them (pid, tid, comm) and by the label
 * a collector gives them (a signal number, a futex word), and adds weights
 * that are not sample counts: the nanoseconds a collector measures between
 * two events (a sched wait, a futex wait, a signal handler's run), charged
 * to the stack of the event that began them.
 *
 * Each entry holds WEIGHT_MAX values, one per weight kind:
 *   WEIGHT_SAMPLES   samples (the loader adds 1 per sample)
 *   WEIGHT_PERIOD    the samples' periods (the loader; ns for cpu-clock)
 *   WEIGHT_OWN + i   the collector's own kind i (struct collector.weights),
 *                    added by its analyzer through view_add_weight()
 * The loader fills it only when profile_options.weights asks for it: its
 * memory grows with distinct (stack, thread, label), more than the stacks.
 */
#ifndef SIGPROF_WEIGHTS_H
#define SIGPROF_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sigprof/base/string_pool.h"

enum { WEIGHT_SAMPLES, WEIGHT_PERIOD, WEIGHT_OWN, WEIGHT_MAX = WEIGHT_OWN + 4 };

/* A collector's own weight kind (struct collector.weights). */
struct weight_kind {
	const char *name;  /* pprof's sample type: "wait", "handler", "calls" */
	const char *unit;  /* "nanoseconds" or "count" */
	bool is_time;      /* what `--weight ns` picks for this collector (one kind per collector) */
};

/* Who a weight belongs to.  0 in signal and word: no such label. */
struct weight_key {
	uint32_t collector;
	uint32_t stack;
	uint32_t pid, tid;
	const char *comm;  /* interned by the table; NULL: unknown */
	int signal;
	uint64_t word;     /* a futex word's address */
};

struct weight_entry {
	struct weight_key key;
	uint64_t values[WEIGHT_MAX];
};

struct weight_table {
	struct weight_entry *entries;
	size_t count, cap;
	uint32_t *slots;   /* open addressing, entry index + 1 */
	size_t nslots;
	struct string_pool *strings;
};

void weight_table_init(struct weight_table *t);
void weight_table_free(struct weight_table *t);
/*
 * Every entry's stack becomes remap(ctx, collector, stack); entries that
 * then share a key are summed.
 */
void weight_table_remap(struct weight_table *t, uint32_t (*remap)(void *ctx, uint32_t collector, uint32_t stack),
			void *ctx);
/* Add value to kind of the entry of key (made on first sight; key->comm is copied). */
void weight_table_add(struct weight_table *t, const struct weight_key *key, unsigned kind, uint64_t value);

#endif
