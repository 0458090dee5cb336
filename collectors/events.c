/*
 * events.c: the events collector, home of the events a user names with -e
 * that belong to no other collector (cpu-clock:u, sched:sched_switch,
 * cpu/event=0xc0/, INST_RETIRED:ANY_P).
 *
 * It opens nothing of its own: record adds the named events to it
 * (event_list_add_parsed), sampled with the user's frequency or period and
 * call graph, tracepoints at every hit.  Their samples share its column in
 * the path table and its function and stack lists, counted as they are.
 * It is not in the default set.
 */
#include <errno.h>
#include <stdio.h>

#include "sigprof/model/collector.h"

static int events_add_events(struct record_options *opts, struct event_list *events, char *reason,
			     size_t reasonlen)
{
	(void)opts;
	(void)events;
	snprintf(reason, reasonlen, "it opens only the events named with -e, and none was");
	return -ENOENT;
}

const struct collector events_collector = {
	.name = "events",
	.description = "the events named with -e that belong to no other collector",
	.add_events = events_add_events,
	.unit = "samples",
	.on_request = true,
	.events = "each event named with -e that no other collector owns (sampled like cpu; tracepoints at every hit)",
};
