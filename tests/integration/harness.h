/*
 * harness.h: helpers for the integration tests, which run ./sigprof on the
 * bundled workloads (build/workloads/) and check its output against what
 * the workloads are known to do.  JSON is queried with jq.
 */
#ifndef SIGPROF_TEST_HARNESS_H
#define SIGPROF_TEST_HARNESS_H

#include <stdbool.h>

#include <criterion/criterion.h>

/* Set by the GNUmakefile: the binary under test, its ASan build, the workloads' directory (with '/'). */
#ifndef SIGPROF_BIN
#define SIGPROF_BIN "./sigprof"
#endif
#ifndef SIGPROF_ASAN_BIN
#define SIGPROF_ASAN_BIN "build/sigprof-asan"
#endif
#ifndef WORKLOADS_DIR
#define WORKLOADS_DIR "build/workloads/"
#endif
#define W WORKLOADS_DIR
#include <stddef.h>

/* Run a shell command; its stdout (and stderr when merge) into *out (malloc'd); returns the exit status. */
int run_cmd(char **out, bool merge_stderr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* jq FILTER over `sigprof report --json -i FILE`, as a number; -1 when jq printed nothing/null. */
double json_number(const char *data_file, const char *filter);
/* A fresh temporary directory for one test (removed at exit). */
const char *test_dir(void);
/* test_dir()/name; the last four results stay valid. */
const char *test_path(const char *name);
/* `sigprof report --json OPTIONS -i data` into a file beside data, for many jq queries; returns its name. */
const char *report_json_file(const char *data, const char *options);
/* jq FILTER over a JSON file, as a number; -1 when jq printed nothing or null. */
double jq_file(const char *json, const char *filter);
/*
 * Two kinds of skip, told apart in the message (tests/skip-summary.sh counts them by kind):
 * skip_environment: the machine lacks something the test needs (no PMU, no tracefs, not root, a tool not
 * installed): nothing the test could do about it.
 * skip_premise: the machine has everything, but what the test checks did not happen in this run (the
 * workload did not contend, the events bunched).  A test should produce its premise reliably; where it
 * cannot, this skip FAILS the test when CI=true runs as root, so that CI never passes by luck.
 */
#define skip_environment(fmt, ...) cr_skip_test("environment: " fmt, ##__VA_ARGS__)
#define skip_premise(fmt, ...)                                                                                  \
	do {                                                                                                    \
		if (premise_skips_fail())                                                                       \
			cr_assert_fail("premise did not happen (a failure when CI=true runs as root): " fmt,     \
				       ##__VA_ARGS__);                                                          \
		cr_skip_test("premise: " fmt, ##__VA_ARGS__);                                                   \
	} while (0)
/* Whether skip_premise fails instead: CI=true in the environment and running as root. */
bool premise_skips_fail(void);
/* Skip (environment) unless perf_event_open of cpu-clock works for a child. */
void require_perf_events(void);
/* What recording the kernel's tracepoints with kernel callchains needs: perf events and root. */
/*
 * A recording of tests/workloads/hostile_symbol (a symbol and comm of
 * markup and terminal escapes) run from a file named HOSTILE_FILE (so
 * its comm starts with the escapes) with the argument HOSTILE_ARG: what an attacker's recording can hold.  Needs
 * root and perf events (skips otherwise).
 */
#define HOSTILE_FILE "\x1b[31m\xc2\x9b<p id=pwned-file>"
#define HOSTILE_ARG "</script><p id=pwned-argv>\x1b[31m\x9b<!--"
const char *hostile_recording(void);

/*
 * tests/workloads/timeline_phases 10 recorded with the defaults into data (needs root and perf events): a thread
 * "phases" that runs 10 ms, sleeps 20 ms, waits 30 ms on a futex word and handles SIGUSR1 for 5 ms, 10 times; what
 * it measured of itself into *t (test_timeline.c, test_html.c).
 */
#define PHASES_LOOPS 10
struct phases_truth {
	int tid;
	double run_ns, sleep_ns, futex_ns, handler_ns;
	/*
	 * The time the hypervisor stole from every CPU while it ran (/proc/stat's steal): the kernel's clock, and so
	 * the timeline's running and handler time, counts it; the thread's CPU clock does not.
	 */
	double steal_ns;
};
void record_phases(const char *data, struct phases_truth *t);

void require_tracing(void);
/* Whether a generic hardware event (PERF_COUNT_HW_*) opens here for this process: 0 or -errno (no PMU in a VM). */
int probe_hardware_event(unsigned long long config);
/* Skip unless root (kernel callchains, kallsyms). */
void require_root(void);
/* The sigprof binary under test (SIGPROF env, default SIGPROF_BIN). */
const char *sigprof_bin(void);
/* Lines in a string. */
int count_lines(const char *s);
/* The widest line of text, in columns (UTF-8 continuation bytes and colour sequences take none). */
size_t widest_line(const char *text);
/* `sigprof record -q OPTIONS -o DATA -- CMD`, asserting exit 0; returns CMD's stdout (malloc'd). */
char *record_workload(const char *data, const char *options, const char *cmd);
/*
 * Skip the test (environment) unless collector NAME opened ("status": "ok") in the recording reported as JSON
 * file json.  The collectors every machine the tests run on as root has (collector_expected_here) are asserted
 * instead: their failing to open is a bug, not a missing feature.
 */
void require_collector(const char *json, const char *name);
/* A recording lacks the figures of collector NAME (a string literal): fails where it must open, else skips. */
#define collector_missing(name, fmt, ...)                                                                       \
	do {                                                                                                    \
		if (collector_expected_here(name))                                                              \
			cr_assert_fail("the " name " collector must open here (signal, sched, futex, lock on "    \
				       "Linux >= 5.19 as root): " fmt, ##__VA_ARGS__);                          \
		skip_environment(fmt, ##__VA_ARGS__);                                                           \
	} while (0)
/* Whether collector NAME must open here: signal, sched, futex, and lock on Linux >= 5.19, as root. */
bool collector_expected_here(const char *name);
/*
 * Samples (sum of count) of the top-level stacks of collector (NULL: every
 * collector) on path (NULL: any path) whose frames satisfy the jq condition frames_test (input: the
 * frames array, leaf first); "true" for all of them.
 */
double stack_samples(const char *json, const char *collector, const char *path, const char *frames_test);

#endif
