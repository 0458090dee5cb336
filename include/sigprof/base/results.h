/*
 * results.h: the workload's own result, read from the lines it prints.
 *
 * Layer: base.  Pure parsing: `record` and `stat` hand each line the
 * workload wrote (results_capture.h relays them to the terminal unchanged)
 * to a result_parser, which knows the benchmarks the kernel test robot runs
 * on sigprof's paths and names their figures as lkp-tests' stats/ parsers
 * do (docs/results.md has the table; RESULT_PARSERS below is its source):
 *
 *   stress-ng --metrics[-brief]   stress-ng.STRESSOR.ops, stress-ng.STRESSOR.ops_per_sec
 *   perf bench futex hash|lock-pi perf-bench-futex.ops/s
 *   perf bench futex wake|requeue|wake-parallel   perf-bench-futex.wakeup_ms, .requeue_ms, .wakeup_latency_ms
 *   perf bench sched pipe         perf-bench-sched-pipe.ops_per_sec, .usecs_per_op
 *   perf bench sched messaging    perf-bench-sched-messaging.total_time_s
 *   hackbench                     hackbench.throughput (KB/s of the best time), hackbench.time_s
 *
 * and the user's own `--metric NAME=REGEX`: a POSIX extended regular
 * expression with one capture group that holds a number; the last line that
 * matches gives the value.
 */
#ifndef SIGPROF_RESULTS_H
#define SIGPROF_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#define RESULT_NAME_MAX 96   /* bytes of a figure's name, with its NUL */
#define RESULT_MAX 64        /* figures a parser keeps; later new names are dropped */
#define RESULT_METRICS_MAX 16 /* --metric options */

/* One figure of the workload's result. */
struct result_figure {
	char name[RESULT_NAME_MAX];
	char unit[16];   /* "ops", "ops/s", "ms", "s", "KB/s", "us/op"; "" for a --metric */
	double value;
};

/* A parser a documentation table mirrors: which program, what it reads, which keys it gives. */
struct result_parser_info {
	const char *program;  /* "stress-ng --metrics-brief" */
	const char *reads;    /* the line it takes, as the program prints it */
	const char *keys;     /* the figures it gives */
};
extern const struct result_parser_info result_parser_infos[];
extern const size_t result_parser_info_count;

struct result_parser;

struct result_parser *result_parser_new(void);
void result_parser_free(struct result_parser *p);

/*
 * Add --metric NAME=REGEX.  0, or -EINVAL with a one-line reason in err (no
 * '=', a NAME that is empty or holds other than letters, digits and
 * "._-/%", a REGEX that does not compile or has not exactly one group,
 * more than RESULT_METRICS_MAX).
 */
int result_parser_add_metric(struct result_parser *p, const char *spec, char *err, size_t errlen);

/* Forget the figures and what the lines said so far (a new run), keeping the --metric options. */
void result_parser_reset(struct result_parser *p);

/* One line of the workload's output (without its newline; len bytes, not NUL-terminated). */
void result_parser_line(struct result_parser *p, const char *line, size_t len);

/* The figures found so far, in the order first found; *out valid until the next call on p. */
size_t result_parser_figures(const struct result_parser *p, const struct result_figure **out);

/* Whether NAME is the name of a result figure a built-in parser gives (its program's prefix). */
bool result_builtin_name(const char *name);

#endif
