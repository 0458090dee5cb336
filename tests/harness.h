/*
 * harness.h: helpers for the integration tests, which run ./sigprof on the
 * bundled workloads (build/workloads/) and check its output against what
 * the workloads are known to do.  JSON is queried with jq.
 */
#ifndef SIGPROF_TEST_HARNESS_H
#define SIGPROF_TEST_HARNESS_H

#include <stdbool.h>

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
/* Skip the test (criterion's skip) unless perf_event_open of cpu-clock works for a child; returns true if usable. */
void require_perf_events(void);
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
/* Skip the test unless collector NAME opened ("status": "ok") in the recording reported as JSON file json. */
void require_collector(const char *json, const char *name);
/*
 * Samples (sum of count) of the top-level stacks of collector (NULL: every
 * collector) on path (NULL: any path) whose frames satisfy the jq condition frames_test (input: the
 * frames array, leaf first); "true" for all of them.
 */
double stack_samples(const char *json, const char *collector, const char *path, const char *frames_test);

/*
 * A recording of tests/workloads/hostile_symbol (a symbol and comm of
 * markup and terminal escapes) run from a file named HOSTILE_FILE (so
 * its comm starts with the escapes) with the argument HOSTILE_ARG: what an attacker's recording can hold.  Needs
 * root and perf events (skips otherwise).
 */
#define HOSTILE_FILE "\x1b[31m\xc2\x9b<p id=pwned-file>"
#define HOSTILE_ARG "</script><p id=pwned-argv>\x1b[31m\x9b<!--"
const char *hostile_recording(void);

#endif
