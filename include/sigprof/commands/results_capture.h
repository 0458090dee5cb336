/*
 * results_capture.h: the workload's standard output and error, relayed to
 * where they would have gone (the user's terminal, a file, a pipe) byte for
 * byte, and read on the way for its result lines (results.h).
 *
 * Layer: commands.  `record` and `stat` do:
 *   1. result_capture_open() before the fork: two pipes, and copies of the
 *      descriptors 1 and 2 the workload would have inherited;
 *   2. workload_start_with_output(w, argv, result_capture_child_fds(c)): the
 *      child writes into the pipes;
 *   3. result_capture_start(): a thread relays and parses until both pipes
 *      are closed;
 *   4. result_capture_finish() once the workload was reaped: waits for the
 *      last bytes (at most a second: a daemon the workload left behind may
 *      keep the pipes open), and hands back the figures.
 * The workload sees a pipe, not a terminal: `--no-results` hands it the
 * descriptors themselves.  When the reader of a target goes away (`| head`)
 * the pipe is closed, so the workload gets its EPIPE as it would have.
 */
#ifndef SIGPROF_RESULTS_CAPTURE_H
#define SIGPROF_RESULTS_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "sigprof/base/options.h"
#include "sigprof/base/results.h"

struct result_capture;

/* 0 or -errno; the parser is the caller's, used by the relay thread until finish. */
int result_capture_open(struct result_capture **out, struct result_parser *parser);
/* The write ends of the pipes, for the child's 1 and 2. */
const int *result_capture_child_fds(const struct result_capture *c);
/* After the fork: close the parent's write ends, start relaying.  0 or -errno. */
int result_capture_start(struct result_capture *c);
/* After the workload exited (or was never started): stop, free; the parser holds the figures. NULL allowed. */
void result_capture_finish(struct result_capture *c);

/*
 * record's and stat's options for the result lines (docs/results.md), into
 * the command's struct type: its struct result_parser * parser_field and
 * its bool no_results_field.
 */
#define RESULT_OPTION_SPECS(type, parser_field, no_results_field)                                                \
	{ .long_name = "metric", .arg = "SPEC", .values = "NAME=REGEX", .flags = OPTION_REPEATABLE,                 \
	  .help = "a figure of the workload's own output: the number REGEX's one group captures in the last line " \
		  "of the workload's output that matches it, kept as NAME beside the built-in parsers' "            \
		  "(stress-ng --metrics, perf bench futex and sched, hackbench)",                                    \
	  OPTION_CALLBACK_FIELD(type, parser_field, result_metric_option) },                                      \
	{ .long_name = "no-results",                                                                               \
	  .help = "hand the workload sigprof's standard output and error themselves, not through the pipe that "   \
		  "reads its result lines (for a program that needs a terminal)",                                    \
	  OPTION_TRUE(type, no_results_field) }

/*
 * --metric SPEC into the struct result_parser * at field, created on first
 * use (an option_parser, options.h): 0, or -1 with one line in err.
 */
int result_metric_option(const struct option_spec *s, void *field, const char *metric, char *err, size_t errlen);

/* The parser for the next run, its figures forgotten; created on first use; NULL with --no-results or attached targets. */
struct result_parser *result_parser_for_run(struct result_parser **parser, bool no_results, bool attached);

#endif
