/*
 * registry.c: the table of collectors, in the order of the report's
 * sections, and the lookups of record and report in it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "sigprof/kernel/pmu.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/base/util.h"
#include "sigprof/kernel/perf.h"

extern const struct collector cpu_collector;
extern const struct collector signal_collector;
extern const struct collector futex_collector;
extern const struct collector sched_collector;
extern const struct collector lock_collector;
extern const struct collector cache_collector;
extern const struct collector c2c_collector;
extern const struct collector events_collector;

/* The order is the order of the report's sections: signal, futex, sched, lock, cache, c2c after the path table. */
const struct collector *const collector_table[] = {
	&cpu_collector,
	&signal_collector,
	&futex_collector,
	&sched_collector,
	&lock_collector,
	&cache_collector,
	&c2c_collector,
	&events_collector,
};
const size_t collector_count = ARRAY_SIZE(collector_table);

const struct collector *collector_find(const char *name)
{
	for (size_t i = 0; i < collector_count; i++)
		if (strcmp(collector_table[i]->name, name) == 0)
			return collector_table[i];
	return NULL;
}

const char *collector_names(const char *word, struct strbuf *known)
{
	struct nearest near = { .word = word };
	for (size_t i = 0; i < collector_count; i++) {
		sb_addf(known, "%s%s", i ? ", " : "", collector_table[i]->name);
		nearest_offer(&near, collector_table[i]->name);
	}
	return near.best;
}

const struct collector *collector_for_event(const struct pmu_event *ev)
{
	for (size_t i = 0; i < collector_count; i++)
		if (collector_table[i]->owns_event && collector_table[i]->owns_event(ev))
			return collector_table[i];
	return &events_collector;
}

int collector_add_events(const struct collector *c, struct record_options *opts, struct event_list *events,
			 char *reason, size_t reasonlen)
{
	size_t before = events->count;
	int err = c->add_events(opts, events, reason, reasonlen);
	if (err)
		return err;
	/*
	 * Root, CAP_PERFMON or CAP_SYS_ADMIN open anything the kernel has.
	 * Otherwise one probe per kind of event (type and tracepoint system:
	 * the kernel's permission rules are per kind), because closing a
	 * tracepoint event waits for an RCU grace period: probing each of
	 * twenty took a second.
	 */
	if (perf_privileged())
		return 0;
	for (size_t e = before; e < events->count; e++) {
		const struct event_spec *spec = &events->specs[e];
		if (spec->optional)
			continue;
		bool kind_probed = false;
		for (size_t k = before; k < e && !kind_probed; k++)
			kind_probed = !events->specs[k].optional && events->specs[k].attr.type == spec->attr.type &&
				      strcmp(events->specs[k].tracepoint_system, spec->tracepoint_system) == 0;
		if (kind_probed)
			continue;
		int probe = perf_event_probe(&spec->attr);
		if (probe != -EACCES && probe != -EPERM)
			continue; /* opens, or fails for a reason the opener reports with its own context */
		snprintf(reason, reasonlen, "cannot open %s: %s", spec->name, perf_open_reason(probe, &spec->attr));
		event_list_truncate(events, before);
		return probe;
	}
	return 0;
}
