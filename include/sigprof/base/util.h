/*
 * util.h: the few helpers every module uses.
 *
 * Errors: library code returns 0 or a negative errno and never prints; the
 * command at the edge turns that into one line with sp_error().  Memory:
 * x*alloc() abort with a message on exhaustion instead of returning NULL, so
 * callers need no out-of-memory branches.  strbuf is a growable string.
 *
 * Layers.  sigprof is built in layers; a file includes and links to its own
 * layer and those below it, never above (docs/layers.md; tests/layers.txt
 * places every folder, `make check-layers` enforces it).  Bottom up:
 *   base        profiler/base/: util (this file), hashmap, string_pool,
 *               files, durations, runstats, json, ...: knows nothing above it
 *   kernel      collectors/kernel/: perf, pmu, tracepoint  } siblings: neither
 *   symbolize   symbolize/: symbols, maps, unwinding       } uses the other
 *   model       profiler/model/: data file, decoding, stacks, paths, loader
 *   view        profiler/view/: what a collector's report side may use
 *   collectors  collectors/: cpu, signal, futex, sched, ... and their table
 *   commands    profiler/commands/: main.c's table, one file per command
 * This header is the bottom: nothing here may name a type or call a
 * function of any other module, so everything can use it.
 */
#ifndef SIGPROF_UTIL_H
#define SIGPROF_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIGPROF_VERSION "0.1.0"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* In 64 bits whatever the type of x: a u32 from a file near UINT32_MAX must not wrap to 0. */
#define ALIGN_UP(x, a) (((uint64_t)(x) + ((a) - 1)) & ~((uint64_t)(a) - 1))

/*
 * One line on stderr, prefixed with "sigprof: ".  sp_error() returns -1,
 * as git's error() does, so that a command's helper can end with
 * `return sp_error(...);` (its caller tests < 0).
 */
int sp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * What a user typed (an event spec, an option's value, a command), as an
 * error line shows it: in single quotes, with control characters, bytes
 * outside printable ASCII, quotes and backslashes escaped (\n, \t, \x1b,
 * \', \\), so that the one line stays one line whatever was typed; cut
 * with "..." to fit buflen.  Returns buf.  QUOTED(s) gives each use its own
 * buffer, alive to the end of the enclosing block: sp_error("%s", QUOTED(s)).
 */
const char *quote_user(const char *s, char *buf, size_t buflen);
#define QUOTE_MAX 200
#define QUOTED(s) quote_user((s), (char[QUOTE_MAX]){ 0 }, QUOTE_MAX)

/*
 * "Did you mean ...?": the name nearest to what a user typed, among the
 * names offered one by one to nearest_offer().  Near means a prefix of the
 * name (at least two characters), or within an edit distance (insertions,
 * deletions, substitutions, swaps of two neighbours) of 1 for words up to 4
 * characters, of 2 up to 8, of 3 beyond; the first of equally near names
 * wins.  best is NULL when no name was near.
 *
 *	struct nearest n = { .word = typed };
 *	for (...) nearest_offer(&n, name);
 *	if (n.best) ... "did you mean '%s'?", n.best
 */
struct nearest {
	const char *word;   /* what was typed */
	const char *best;   /* the nearest name so far, or NULL */
	size_t distance;    /* its distance (0 for a prefix) */
};
void nearest_offer(struct nearest *n, const char *name);
/* The edit distance between a and b (optimal string alignment: a swap of neighbours is one edit). */
size_t edit_distance(const char *a, const char *b);

/*
 * part as a share of whole, "12.34%", as every text table and summary line
 * prints one: two decimals, but a share that is not zero never shows as
 * 0.00% (it is "<0.01%": one lost record in a million is not none), nor
 * one short of the whole as 100.00% (">99.99%"), and a part of a whole of
 * 0 is "-".  Returns buf.  SHARE(part, whole) gives each
 * use its own buffer, alive to the end of the enclosing block; tables print
 * it right-aligned in 7 columns ("%7s"), the width of "100.00%".
 */
const char *format_share(double part, double whole, char *buf, size_t buflen);
#define SHARE_MAX 16
#define SHARE(part, whole) format_share((double)(part), (double)(whole), (char[SHARE_MAX]){ 0 }, SHARE_MAX)

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* For buffers of megabytes: transparent huge pages where the kernel offers them (fewer page faults); free() it. */
void *xmalloc_large(size_t n);
/* Pages of their own (anonymous mmap), given back to the system at once by xunmap(p, n): buffers that come and go. */
void *xmap(size_t n);
void xunmap(void *p, size_t n);
char *xstrndup(const char *s, size_t n);
/* Grow *array (of *cap elements of elem_size) to hold at least need elements. */
void grow_array(void **array, size_t *cap, size_t need, size_t elem_size);
#define GROW(arr, cap, need) grow_array((void **)&(arr), &(cap), (need), sizeof(*(arr)))

struct strbuf {
	char *buf;  /* always NUL-terminated once anything was added */
	size_t len; /* bytes used, without the NUL */
	size_t cap; /* bytes allocated */
};
void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_addstr(struct strbuf *sb, const char *s);
/*
 * s with its control characters escaped (\n, \t, \x1b; C1 controls, raw
 * 0x9b or UTF-8 c2 9b, as \x9b and \xc2\x9b; bytes that are not valid
 * UTF-8 as \xNN): a command line or name from a recording or the user,
 * shown on a terminal without breaking the line or reaching the terminal
 * as an escape sequence.  Valid UTF-8 text stays as it is.
 */
void sb_add_printable(struct strbuf *sb, const char *s);
/*
 * The same rule into buf: s itself when it is all printable ASCII (the
 * common case costs a scan), else its escaped text, cut with "..." to fit
 * buflen.  PRINTABLE(s) gives each use its own buffer, alive to the end of
 * the enclosing block, for the strings of a recording (a file name, a
 * comm, a symbol, a note) printed in a text output:
 * fprintf(out, "%s", PRINTABLE(dso)).  NULL stays NULL.
 */
const char *printable_text(const char *s, char *buf, size_t buflen);
#define PRINTABLE_MAX 1024
#define PRINTABLE(s) printable_text((s), (char[PRINTABLE_MAX]){ 0 }, PRINTABLE_MAX)
/* Whether s is printable ASCII only (nothing for the rule above to change). */
bool is_printable(const char *s);
/* The length of the valid UTF-8 sequence at s (1 for ASCII), 0 when s does not start one (RFC 3629). */
size_t utf8_sequence_length(const unsigned char *s);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

/*
 * Sort like qsort, cheaply when the array is already in order or nearly
 * (kallsyms is, but for aliases at one address): a linear check first, then
 * an insertion sort when few elements are out of place.
 */
void sort_unless_sorted(void *base, size_t count, size_t size, int (*compare)(const void *, const void *));

/*
 * qsort for arrays that may be empty: an empty table's base is often NULL,
 * which qsort's contract forbids even with a count of 0 (UBSan stops there).
 */
void sort_items(void *base, size_t count, size_t size, int (*compare)(const void *, const void *));

/* Monotonic and wall clocks in nanoseconds. */
uint64_t now_monotonic_ns(void);
uint64_t now_realtime_ns(void);

/* Parse a whole decimal number in [min, max]; 0 or -EINVAL/-ERANGE. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A signal number's name, into buf, the same everywhere a report shows one:
 * "SIGUSR1" for the standard signals (1..31); real-time signals relative to
 * the C library's SIGRTMIN and SIGRTMAX: "SIGRTMIN", "SIGRTMIN+3", ...,
 * "SIGRTMAX", and "SIGRTMIN-2", "SIGRTMIN-1" for the kernel's first two
 * (32, 33), which glibc keeps for itself; "SIG<n>" ("SIG0", "SIG65",
 * "SIG-1") for a number no signal has.
 */
const char *signal_name(int signo, char *buf, size_t buflen);
#endif
