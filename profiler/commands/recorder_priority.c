/*
 * recorder_priority.c: the recorder's real-time priority while it drains
 * (recorder_priority.h says why).
 */
#include <errno.h>
#include <string.h>

#include "sigprof/commands/recorder_priority.h"

int recorder_priority_raise(struct recorder_priority *saved, int priority)
{
	memset(saved, 0, sizeof(*saved));
	if (priority <= 0)
		return 0;
	saved->policy = sched_getscheduler(0);
	if (saved->policy < 0 || sched_getparam(0, &saved->param) < 0)
		return -errno;
	int max = sched_get_priority_max(SCHED_FIFO);
	struct sched_param fifo = { .sched_priority = max > 0 && priority > max ? max : priority };
	if (sched_setscheduler(0, SCHED_FIFO, &fifo) < 0)
		return -errno;
	saved->raised = true;
	return 0;
}

void recorder_priority_restore(struct recorder_priority *saved)
{
	if (!saved->raised)
		return;
	sched_setscheduler(0, saved->policy, &saved->param);
	saved->raised = false;
}
