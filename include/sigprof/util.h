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
 * places every file, `make check-layers` enforces it).  Bottom up:
 *   base        util (this file), stats, json: knows nothing above it
 *   kernel      perf.c (+ the event list), pmu.c, tracepoint.c   } siblings: neither
 *   symbolize   symbolize/: ELF and kernel symbols, maps, unwinding } uses the other
 *   model       data file, decoding, stacks, paths, profile loader
 *   view        what a collector's report side may use
 *   collectors  cpu, signal, futex, sched, cache, c2c, ... and their table
 *   commands    main.c's table, record, report (+ its writers), stat, list
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
 * s with its control characters escaped (\n, \t, \x1b): a command line
 * or name from a recording or the user, shown on a terminal without
 * breaking the line or reaching the terminal as an escape sequence.
 * UTF-8 stays as it is.
 */
void sb_add_printable(struct strbuf *sb, const char *s);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

/* 64-bit hashing for the interning tables. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Interned strings: equal strings get the same pointer, alive until string_pool_free(). */
struct string_pool;
struct string_pool *string_pool_new(void);
const char *string_intern(struct string_pool *pool, const char *s);
/* A copy of s[0..len) in the pool's storage, NUL-terminated, without interning: for many unique strings. */
const char *string_store(struct string_pool *pool, const char *s, size_t len);
void string_pool_free(struct string_pool *pool);

/*
 * Sort like qsort, cheaply when the array is already in order or nearly
 * (kallsyms is, but for aliases at one address): a linear check first, then
 * an insertion sort when few elements are out of place.
 */
void sort_unless_sorted(void *base, size_t count, size_t size, int (*compare)(const void *, const void *));

/* Monotonic and wall clocks in nanoseconds. */
uint64_t now_monotonic_ns(void);
uint64_t now_realtime_ns(void);

/* The whole of a file (procfs too) in a malloc'd NUL-terminated buffer; NULL with errno set on failure. */
char *read_whole_file(const char *path, size_t *len);
/*
 * The same for a file sigprof does not trust (a user's kallsyms or rules
 * file, which may be /dev/zero or a FIFO that never ends): at most max
 * bytes; -EFBIG past them, without holding more than max + 1 in memory.
 * 0 with *text (free() it) and *len, or -errno.
 */
int read_file_bounded(const char *path, size_t max, char **text, size_t *len);
/* This boot's id (/proc/sys/kernel/random/boot_id, a UUID): 0, or -errno. */
int read_boot_id(char *buf, size_t buflen);
/* "a symbolic link", "a character device", "a FIFO"...: what an st_mode is, for an error line. */
const char *file_type_name(unsigned mode);

/* The integer at the start of a (proc/sys) file, or fallback when it cannot be read. */
int read_int_file(const char *path, int fallback);

/* Whether perf_event_open treats this process as privileged: root, or CAP_PERFMON or CAP_SYS_ADMIN effective. */
bool perf_privileged(void);
/*
 * Whether events may sample the kernel (kernel frames, kernel addresses):
 * privileged, or kernel.perf_event_paranoid <= 1 (docs/unprivileged.md).
 */
bool kernel_samples_allowed(void);

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

/*
 * u64_map: an open-addressing map from a u64 key (a tid, an address) to a
 * pointer, for the analyzers' per-task and per-word state and the
 * symbolizer's tables.
 */
struct u64_map {
	uint64_t *keys;
	void **values;   /* NULL: empty slot */
	size_t nslots, count;
};

/* The value for key, or NULL. */
void *u64_map_get(const struct u64_map *m, uint64_t key);
/* Set key's value (non-NULL); returns the previous value or NULL. */
void *u64_map_put(struct u64_map *m, uint64_t key, void *value);
/* Remove key; returns its value or NULL. */
void *u64_map_remove(struct u64_map *m, uint64_t key);
/* Iterate: *pos starts at 0; returns false at the end. */
bool u64_map_next(const struct u64_map *m, size_t *pos, uint64_t *key, void **value);
/* Free the table (not the values). */
void u64_map_free(struct u64_map *m);
/* Free each value with free_value (free, or a destructor), then the table. */
void u64_map_free_values(struct u64_map *m, void (*free_value)(void *value));

/*
 * An output file a root command may write in a directory others can write
 * (/tmp): the data goes to a new file of its own next to PATH (O_EXCL |
 * O_NOFOLLOW, a random name, mode 0600 then chmod to mode), which
 * safe_output_commit() renames over PATH when it is whole.  An existing
 * PATH that is not a regular file (a symbolic link, device, FIFO,
 * directory) is refused (-EEXIST) and never opened; a failed or aborted
 * output leaves PATH as it was.
 */
/*
 * The two steps of such a file, shared with the recording's writer:
 * output_dir_open() opens the directory of path (O_DIRECTORY) and points
 * *name at path's last component: -EISDIR when there is none, -EEXIST when
 * an entry of that name is not a regular file (never followed), else the
 * directory's fd.  private_temp_create() makes the new file in it: ".NAME."
 * and 8 random hex digits (NAME cut to 200 bytes), O_EXCL | O_NOFOLLOW,
 * mode 0600; its fd, its name in *temp (the caller's to free), or -errno.
 */
int output_dir_open(const char *path, const char **name);
/* Whether name in dirfd may be replaced: 0 when nothing or a regular file is there, -EEXIST (anything else), -errno. */
int output_replaceable(int dirfd, const char *name);
int private_temp_create(int dirfd, const char *name, char **temp);

struct safe_output {
	FILE *fp;        /* write here */
	int dirfd;       /* PATH's directory */
	char *name;      /* PATH's last component */
	char *temp;      /* the new file's name in dirfd */
	unsigned mode;   /* the permissions PATH gets */
};
int safe_output_open(const char *path, unsigned mode, struct safe_output *out);
/* Flush, close and rename into place; 0 or -errno (the new file removed). */
int safe_output_commit(struct safe_output *out);
/* Close and remove the new file; PATH is untouched. */
void safe_output_abort(struct safe_output *out);

/*
 * An output written as it goes (stat's figures and intervals) that a root
 * command opens where others can write: a new PATH is created O_EXCL |
 * O_NOFOLLOW (*created true); an existing one is opened O_NOFOLLOW and must
 * be a regular file of one link (-EMLINK: a hard link someone made would
 * take the writes to another file), or a FIFO, terminal or device that root
 * or the caller owns or that this process already has open as its standard
 * input, output or error (-EPERM: another user's FIFO planted in /tmp).  A
 * symbolic link is followed (-o /dev/stderr) only when root or the caller
 * owns it in a directory no one else can change (-EPERM: one another user
 * planted, or could swap, in /tmp); where it leads is its owner's choice,
 * as any path they give, and only the file it ends at is held to the rules
 * above (a link to nothing yet creates that file).  Every open is
 * O_NONBLOCK (a FIFO without a reader: -ENXIO), cleared once open.  The fd,
 * or -errno.
 */
int stream_output_open(const char *path, bool *created);

/*
 * The open-file limit for the events of running targets: the hard limit, as
 * perf takes; root (who may raise it) takes the kernel's bound, fs.nr_open.
 * A command sigprof runs gets the limit it had back (restore, in the child
 * before exec): a program that closes every fd up to its limit would pay.
 */
void open_files_limit_raise(void);
void open_files_limit_restore(void);

#endif
