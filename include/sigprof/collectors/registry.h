/*
 * registry.h: the collectors this sigprof has (collectors/registry.c).
 *
 * The commands look collectors up here and hand the table to the profile
 * loader (profile_options); nothing below the collectors layer includes
 * this header.
 */
#ifndef SIGPROF_REGISTRY_H
#define SIGPROF_REGISTRY_H

#include <stddef.h>

#include "sigprof/model/collector.h"
#include "sigprof/base/util.h"

extern const struct collector *const collector_table[];
extern const size_t collector_count;
const struct collector *collector_find(const char *name);
/*
 * For an error line about a name that is no collector: the collectors'
 * names, comma-separated, into known, and the one nearest to word (a
 * typo's correction), or NULL.
 */
const char *collector_names(const char *word, struct strbuf *known);

/* The collector an event the user named belongs to: the first whose owns_event() says so, else "events". */
const struct collector *collector_for_event(const struct pmu_event *ev);

/*
 * c->add_events(), then, when not privileged (perf_privileged()), a probe
 * of its first required event of each kind (type, tracepoint system): one
 * that this user may not open (permission: paranoid, CAP_PERFMON, raw
 * tracepoint data) makes the whole collector unavailable here, with one
 * reason that says what to do, instead of failing the recording at open.
 * record and list both ask through this, so they agree.
 */
int collector_add_events(const struct collector *c, struct record_options *opts, struct event_list *events,
			 char *reason, size_t reasonlen);

#endif
