/*
 * futex.h: what the rest of the report may ask of the futex collector
 * (collectors/futex.c).
 *
 * The collector's parts have their own headers: futex_op.h (the op
 * decoder) and futex_tracker.h (the per-word state machine).
 */
#ifndef SIGPROF_FUTEX_H
#define SIGPROF_FUTEX_H

#include <stdbool.h>
#include <stdint.h>

struct profile;
/*
 * futex_tracker_has_word_in()'s question asked of a loaded recording:
 * whether its futex collector saw a futex word of pid in [start, end) (the
 * c2c report marks the cachelines that hold one).  false when the
 * recording has no futex collector.
 */
bool futex_profile_has_word(const struct profile *p, uint32_t pid, uint64_t start, uint64_t end);

#endif
