/*
 * rate_bound.h: the windowed rate bound, the recorder's switch between
 * recording every hit of an event and sampling it with weights.
 *
 * The kernel's frequency mode (attr.freq) is no rate bound for sparse
 * events: it estimates the rate from the time between two samples of one
 * event, so two hits 10 us apart raise the period although the event fires
 * ten times a second.  Here the rate is measured over a window instead:
 *
 *   gate       a spec that records every hit (period 1), enabled at exec;
 *   meter      a counter spec (sample_period 0) that counts the same hits,
 *              always enabled: it measures the rate and keeps the exact total;
 *   alternate  optional: a spec that samples the same hits with weights (the
 *              kernel's frequency mode at the bound), disabled at first.
 *
 * Every window the recorder reads each gate's meter on each CPU.  When a
 * window's hits exceed bound x window, the gate is disabled on that CPU and
 * the alternate enabled; when a later window is back at or under the bound
 * the gate is enabled again and the alternate disabled.  ENABLE and DISABLE
 * reach the inherited children of a per-CPU event (every thread of the
 * workload), where PERF_EVENT_IOC_PERIOD reaches only the parent; and with
 * PERF_SAMPLE_PERIOD a tracepoint is sampled on every hit whatever its
 * fixed period, so switching between two events is the way to change what
 * the kernel writes.  A sample's weight is its period (1 for the gate's),
 * so the file needs no record of the switches.  The switch enables the
 * new side before it disables the old one: a hit in between is sampled by
 * both, never by neither; the meter's total stays exact.
 *
 * Layer: kernel.  Collectors link the specs (rate_bound_link, or
 * rate_bound_add for the usual gate, alternate and meter of one tracepoint)
 * when they add events; the recorder runs the windows.  The futex and lock
 * collectors use it (docs/futex.md, docs/lock.md); it knows nothing of
 * either.
 *
 * The events of one tracepoint are told apart by a suffix of their name:
 * "SYSTEM:NAME" is the gate, "SYSTEM:NAME#sampled" the alternate,
 * "SYSTEM:NAME#count" the meter (RATE_BOUND_*_SUFFIX).
 */
#ifndef SIGPROF_RATE_BOUND_H
#define SIGPROF_RATE_BOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "sigprof/kernel/perf.h"

/* The suffixes of the alternate's and the meter's names ("lock:contention_begin#sampled"). */
#define RATE_BOUND_SAMPLED_SUFFIX "sampled"
#define RATE_BOUND_COUNT_SUFFIX "count"
/* The suffixes of a whole copy of the user stack beside a key and of its sampled side (rate_bound_add_stack_copies()). */
#define RATE_BOUND_STACK_SUFFIX "stack"
#define RATE_BOUND_STACK_SAMPLED_SUFFIX "stack-sampled"

/* The window over which a rate is measured. */
#define RATE_BOUND_WINDOW_NS (10 * 1000 * 1000ull)

/*
 * Make specs[gate] a gate of bound_hz per CPU, measured by specs[meter],
 * with specs[alternate] (or -1) in its place above the bound.  The gate
 * records every hit; the alternate is opened disabled and stays so until
 * the recorder enables it.
 */
void rate_bound_link(struct event_list *events, size_t gate, size_t meter, int alternate, uint64_t bound_hz);

/*
 * Another event on the tracepoint of specs[from], of the same collector,
 * named "NAME#suffix" (NAME without the suffix of a sibling it was copied
 * from), with filter (or none).  It has no format of its own: the
 * TRACEPOINT record of specs[from] describes its samples.  Returns its index.
 */
size_t rate_bound_add_sibling(struct event_list *events, size_t from, const char *suffix, const char *filter);

/* Make attr a counter: no records (sample_period 0, no stacks), an exact total. */
void rate_bound_make_counter(struct perf_event_attr *attr);

/* bound_hz, or kernel.perf_event_max_sample_rate when that is lower (the alternate's frequency may not exceed it). */
uint64_t rate_bound_cap_hz(uint64_t bound_hz);

/*
 * The usual gate of specs[gate] (a tracepoint that records every hit): its
 * weighted alternate "#sampled" (the kernel's frequency mode at the bound)
 * and, when meter < 0, a new meter "#count"; else specs[meter] measures it
 * (an exit tracepoint shares its entry's meter, so the two switch together
 * on the rate of the entry).  The bound is rate_bound_cap_hz(bound_hz).
 * Returns the meter's index: its total is the exact count of hits.
 */
size_t rate_bound_add(struct event_list *events, size_t gate, int meter, uint64_t bound_hz);
/*
 * The same with the alternate sampling at sampled_hz (capped by
 * rate_bound_cap_hz()) rather than at the bound, and the bound as given:
 * the meter, not the kernel, measures it, so no sample rate limits it.
 */
size_t rate_bound_add_sampled(struct event_list *events, size_t gate, int meter, uint64_t bound_hz,
			      uint64_t sampled_hz);

/*
 * The usual bound on the stack copies (rate_bound_add_stack_copies()), per
 * CPU: 500 copies of 8 KiB a second are 4 MB/s, while the keys' records
 * (the frame-pointer chain or a short copy) go on at their own rate; a
 * call site needs one copy to be lent a whole stack.  A 2 KiB copy on
 * every futex entry of sample mode made 2.4 KB records at up to 50 000 a
 * second per CPU: 500 MB in 3 s of `perf bench futex hash`.
 */
#define STACK_COPY_BOUND_HZ 500
/*
 * Above the bound the copies go on at this frequency per CPU (the
 * kernel's frequency mode), 2 MB/s of 8 KiB copies: a call site first
 * seen while its CPU stays above the bound still gets one.  Without it,
 * stress-ng --sigsuspend's switch-outs were 60.7% whole: its children
 * start switching after the first window and never came under the bound.
 * At 100 a second stress-ng --pthread's switch-outs were 91.6% whole once
 * the workload had a cgroup of its own (9 500 a second per CPU; a call
 * site of 0.4% of them often got no copy in 2 s); at 250, 97.5%.
 */
#define STACK_COPY_SAMPLED_HZ 250

/*
 * Beside specs[record], a tracepoint that records every hit with a short
 * key stack (stack_key_options()): a copy of the user stack
 * ("NAME#suffix", stack_size bytes, unwound with DWARF at report time) of
 * every hit while the hits of its CPU, counted by specs[meter], stay under
 * bound_hz over a window; above, "NAME#stack-sampled" copies at
 * STACK_COPY_SAMPLED_HZ; with the record's tracepoint filter (set it
 * first).  Without kernel_chain the copy takes
 * no kernel callchain (the key has it, or it says nothing: a system call's
 * entry).  The report lends a copy's stack to the keys of its call site
 * (stack_lender.h).  Returns the copy's index.
 */
size_t rate_bound_add_stack_copies(struct event_list *events, const struct record_options *opts, size_t record,
				   size_t meter, const char *suffix, uint32_t stack_size, uint64_t bound_hz,
				   bool kernel_chain);

/* Whether an event name's suffix (rate_bound_suffix()) is a stack copy's, either side. */
bool rate_bound_stack_copy_suffix(const char *suffix);

/*
 * What the name of an event is to a gate: the suffix after '#' (NULL for
 * the gate itself) and the length of the name before it.
 */
const char *rate_bound_suffix(const char *name, size_t *base_len);

/* Whether hits in elapsed_ns exceed bound_hz per second. */
bool rate_bound_above(uint64_t hits, uint64_t elapsed_ns, uint64_t bound_hz);

struct rate_bound;

/*
 * The gates of an opened session, their windows starting at now_ns; *out is
 * NULL when the session has none.  0 or -errno.
 */
int rate_bound_start(struct perf_session *s, uint64_t now_ns, struct rate_bound **out);
/* Close the windows that ended by now_ns and switch what they call for; 0 or the first -errno. */
int rate_bound_tick(struct rate_bound *rb, uint64_t now_ns);
/* Nanoseconds from now_ns until the current window ends (0: tick now). */
uint64_t rate_bound_timeout_ns(const struct rate_bound *rb, uint64_t now_ns);
/* Windows that ended above the bound, and the switches made, over every gate and CPU. */
void rate_bound_stats(const struct rate_bound *rb, uint64_t *windows_above, uint64_t *switches);
void rate_bound_free(struct rate_bound *rb);

#endif
