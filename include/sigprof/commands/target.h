/*
 * target.h: what record and stat measure besides a command they start
 * (-p PID,..., -t TID,..., -a, -C CPUS, -G CGROUP; docs/targets.md).
 *
 * A command's life is sigprof's own (workload.h).  A target that already
 * runs is read from /proc when sigprof attaches: its threads (one event per
 * thread and CPU, inherit follows what they create afterwards), its comm
 * and its mappings, which target_synthesize() writes into the recording as
 * the COMM and MMAP2 records the kernel would have written had sigprof
 * been there when they were made (as perf synthesizes them).
 *
 * Layer: commands.  Nothing here prints: errors come back as -errno with
 * one line naming the pid, CPU or cgroup in err.
 */
#ifndef SIGPROF_TARGET_H
#define SIGPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sigprof/kernel/perf.h"

struct strbuf;

struct attach_target {
	/* as the user gave them; NULL when not given */
	const char *pid_list;    /* -p */
	const char *tid_list;    /* -t */
	const char *cpu_list;    /* -C */
	const char *cgroup;      /* -G: a path under the cgroup mount, or an absolute path */
	bool all_cpus;           /* -a */
	/* resolved by target_resolve() */
	pid_t *pids;             /* the processes named (-p), or those of the threads named (-t) */
	size_t npids;
	pid_t *tids;             /* every thread the events open on */
	size_t ntids;
	int *cpus;               /* -C's CPUs */
	size_t ncpus;
	int cgroup_fd;           /* -G's directory, -1 when none */
};

/*
 * The target options, the same in record's and stat's option tables (and
 * so in their --help and man page sections).
 */
/* The target options, into the struct attach_target field of the command's struct type. */
#define TARGET_OPTION_SPECS(type, field)                                                                           \
	{ .short_name = 'p', .long_name = "pid", .arg = "PID", .values = "PID[,PID...]",                          \
	  .help = "attach to these running processes, every thread, and follow what they create",                 \
	  OPTION_STRING(type, field.pid_list) },                                                                  \
	{ .short_name = 't', .long_name = "tid", .arg = "TID", .values = "TID[,TID...]",                          \
	  .help = "attach to these running threads only, and follow what they create",                            \
	  OPTION_STRING(type, field.tid_list) },                                                                  \
	{ .short_name = 'a', .long_name = "all-cpus", .help = "every task on every CPU (system-wide)",              \
	  OPTION_TRUE(type, field.all_cpus) },                                                                    \
	{ .short_name = 'C', .long_name = "cpu", .arg = "CPUS", .values = "CPU[,CPU|A-B...]",                     \
	  .help = "with -a or -G: only these CPUs (a list such as 0,2-3)", OPTION_STRING(type, field.cpu_list) },  \
	{ .short_name = 'G', .long_name = "cgroup", .arg = "CGROUP",                                              \
	  .help = "the tasks of this perf_event cgroup (a path under the cgroup mount) on every CPU",              \
	  OPTION_STRING(type, field.cgroup) }

/* Whether any target option was given (otherwise the command is the target). */
bool target_given(const struct attach_target *t);
/*
 * Check the options against each other, parse the lists, read the
 * threads of every process, open the cgroup, and raise the soft limit of
 * open files to the hard one (one fd per event, CPU and thread).  0, or
 * -errno with one line in err (a pid that does not exist: "-p 1234: no
 * such process").
 */
int target_resolve(struct attach_target *t, char *err, size_t errlen);
/* The perf_target the events open for. */
void target_perf(const struct attach_target *t, struct perf_target *out);
/* Whether a task target (-p, -t) still has a live task; always true for -a, -C and -G. */
bool target_alive(const struct attach_target *t);
/* A short description for the recording's header: "-p 1234,5678", "-a -C 0-1", "-G /sys/fs/cgroup/x". */
void target_describe(const struct attach_target *t, char *buf, size_t len);
void target_free(struct attach_target *t);

/*
 * Append to out a COMM record for every thread and an MMAP2 record for
 * every executable mapping (every mapping with data_mmaps) of the
 * processes that already run: the target's for -p/-t, every process for
 * -a, -C and -G.  Each carries a sample_id trailer of the event of
 * sample_type with id, at time 0, so the report replays them before any
 * sample.  Called right after the events open, before the target can
 * exit; the caller writes them to the recording.  A process that exits
 * meanwhile is skipped.  0.
 */
int target_synthesize(const struct attach_target *t, struct strbuf *out, uint64_t sample_type, uint64_t id,
		      bool data_mmaps);

/* The threads of process pid, from /proc/PID/task, into a growable array.  0 or -errno (-ESRCH: no such pid). */
int target_threads_of(pid_t pid, pid_t **tids, size_t *n, size_t *cap);

#endif
