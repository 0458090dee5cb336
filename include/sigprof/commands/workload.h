/*
 * workload.h: running the command a sigprof command measures (record, stat).
 *
 * The sequence every such command follows:
 *   1. workload_find() the command before touching anything, so a typo
 *      costs nothing (the caller exits 127 or 126, as a shell would);
 *   2. workload_start(): fork it blocked on a pipe, with SIGCHLD and the
 *      interrupt signals (SIGINT, SIGTERM, SIGHUP) blocked in sigprof and
 *      caught, so the caller can open its events for the child first;
 *   3. workload_release(): let it exec; a second, close-on-exec pipe tells
 *      whether exec worked;
 *   4. wait in ppoll()/sigtimedwait-style calls with w->waitmask, calling
 *      workload_check() after each wake: it forwards an interrupt sigprof
 *      received to the workload and reaps the workload once it exited;
 *   5. workload_exit_code() turns the wait status into sigprof's exit status.
 * workload_abort() kills and reaps a workload that sigprof gave up on.
 */
#ifndef SIGPROF_WORKLOAD_H
#define SIGPROF_WORKLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "sigprof/commands/results_capture.h"

struct workload {
	pid_t pid;
	int go_fd;        /* written once to release the child; -1 after */
	int exec_err_fd;  /* the child's exec errno arrives here; -1 after */
	int forwarded;    /* the last interrupt signal forwarded to it */
	sigset_t waitmask; /* the signal mask to wait with: sigprof's own, the caught signals unblocked */
	struct rusage rusage; /* the workload's (and its reaped children's), once workload_check() reaped it */
	struct result_capture *capture; /* workload_start_captured()'s, until the workload is reaped */
	struct result_parser *results;  /* ... and its parser: the figures, once reaped (NULL: not captured) */
};

/*
 * LKP's time.* figures of a reaped workload, as /usr/bin/time gives them to
 * LKP: user_time, system_time, elapsed_time (s), percent_of_cpu_this_job_got,
 * maximum_resident_set_size (KB), minor_page_faults, major_page_faults,
 * voluntary_context_switches, involuntary_context_switches,
 * file_system_inputs, file_system_outputs.  Returns the count.
 */
#define WORKLOAD_TIME_FIGURES 11
struct time_figure {
	const char *name;
	double value;
};
size_t workload_time_figures(const struct rusage *ru, double elapsed_s, struct time_figure *out);

/* Look cmd up as execvp() would: 0, -ENOENT (not found) or -EACCES (found, not executable). */
int workload_find(const char *cmd);
/* The same, with the file found (as execvp() would run it) in file on success. */
int workload_find_file(const char *cmd, char *file, size_t filelen);
/*
 * Why cmd cannot run, for the one error line: "command not found" (with
 * where sigprof's options go, when cmd looks like one: `record -- -a`), or
 * strerror's text.
 */
const char *workload_find_error(const char *cmd, int err);
/* The exit status for a failed lookup or exec: 127 for -ENOENT, else 126. */
int workload_cannot_run_exit(int err);

/* Fork argv blocked until workload_release(); installs the signal handlers.  0 or -errno. */
int workload_start(struct workload *w, char **argv);
/*
 * The same, the workload's standard output and error relayed to sigprof's
 * through results_capture.h, their result lines read by results (NULL:
 * inherited, as workload_start()).  The capture ends when the workload is
 * reaped (workload_check(), workload_abort()): results then holds them.
 */
int workload_start_captured(struct workload *w, char **argv, struct result_parser *results);
/*
 * No command: a run that watches targets already running (target.h) until
 * an interrupt signal.  Installs the same handlers and fills w->waitmask;
 * workload_check() then never reports an exit, and workload_interrupt_signal()
 * says when to stop.
 */
void workload_none(struct workload *w);
/* Release it; 0 when it exec'd, else the exec errno (negated), the child then being reaped. */
int workload_release(struct workload *w);
/* What a workload_release() error means, for the one error line ("the workload died before it could start"). */
const char *workload_release_error(int err);
/*
 * Forward an interrupt sigprof received since the last call, then reap
 * the workload if it exited: true with its wait status in *status.
 */
bool workload_check(struct workload *w, int *status);
/*
 * Run the handlers of the signals sigprof catches (SIGCHLD, the interrupts)
 * that came while they were blocked.  ppoll() with w->waitmask delivers them
 * only when it returns EINTR, which it never does while some fd is ready: a
 * ring that is never empty kept the window command's exit and ^C waiting.
 */
void workload_take_pending_signals(const struct workload *w);
/* Kill (SIGKILL) and reap a workload, released or not; closes its pipes. */
void workload_abort(struct workload *w);

/* The interrupt signal (SIGINT, SIGTERM, SIGHUP) sigprof received last, 0 when none. */
int workload_interrupt_signal(void);

/* A wait status as a shell reports it: the exit code, or 128 + the signal that killed it. */
int workload_exit_code(int wait_status);

#endif
