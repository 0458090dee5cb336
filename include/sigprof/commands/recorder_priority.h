/*
 * recorder_priority.h: the recorder's threads run at a real-time priority
 * while they drain the ring buffers, so that a busy machine or a workload
 * of real-time threads (stress-ng --mutex takes SCHED_FIFO) cannot keep
 * them off the CPU until the rings overflow (docs/performance.md, "Records
 * lost to a starved recorder").  The workload keeps its own policy: the
 * priority is raised after it is forked and put back before the next one.
 */
#ifndef SIGPROF_RECORDER_PRIORITY_H
#define SIGPROF_RECORDER_PRIORITY_H

#include <sched.h>
#include <stdbool.h>

/*
 * The default SCHED_FIFO priority: above the 1-79 stress-ng --mutex draws
 * and the 50 of threaded interrupt handlers; the recorder sleeps in ppoll()
 * between wake-ups, and the kernel's real-time throttle (95% of each second)
 * bounds it anyway.
 */
#define RECORDER_DEFAULT_PRIORITY 90

struct recorder_priority {
	int policy;                /* the calling thread's policy before the raise */
	struct sched_param param;  /* ... and its parameters */
	bool raised;
};

/*
 * Run the calling thread (and the threads it creates from now on) under
 * SCHED_FIFO at priority; 0 leaves it as it is.  Returns 0 or -errno
 * (-EPERM without CAP_SYS_NICE or an RLIMIT_RTPRIO that allows it: it then
 * runs as before).
 */
int recorder_priority_raise(struct recorder_priority *saved, int priority);
/* Back to what recorder_priority_raise() found; nothing when it did not raise. */
void recorder_priority_restore(struct recorder_priority *saved);

#endif
