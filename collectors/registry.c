/*
 * registry.c: the table of collectors and the helpers they share for
 * building their events.
 */
#include <string.h>
#include <stdlib.h>

#include "sigprof/collector.h"
#include "sigprof/pmu.h"
#include "sigprof/tracepoint.h"
#include "sigprof/util.h"

extern const struct collector cpu_collector;
extern const struct collector signal_collector;
extern const struct collector futex_collector;
extern const struct collector sched_collector;
extern const struct collector cache_collector;
extern const struct collector c2c_collector;
extern const struct collector events_collector;

/* The order is the order of the report's sections: signal, futex, sched, cache, c2c after the path table. */
const struct collector *const collector_table[] = {
	&cpu_collector,
	&signal_collector,
	&futex_collector,
	&sched_collector,
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

const struct collector *collector_for_event(const struct pmu_event *ev)
{
	for (size_t i = 0; i < collector_count; i++)
		if (collector_table[i]->owns_event && collector_table[i]->owns_event(ev))
			return collector_table[i];
	return &events_collector;
}

struct event_spec *event_list_add(struct event_list *list, const char *name, const char *collector)
{
	GROW(list->specs, list->cap, list->count + 1);
	struct event_spec *spec = &list->specs[list->count++];
	memset(spec, 0, sizeof(*spec));
	snprintf(spec->name, sizeof(spec->name), "%s", name);
	snprintf(spec->collector, sizeof(spec->collector), "%s", collector);
	return spec;
}

void event_list_truncate(struct event_list *list, size_t count)
{
	for (size_t i = count; i < list->count; i++) {
		free(list->specs[i].tracepoint_format);
		free(list->specs[i].tracepoint_filter);
		free(list->specs[i].cpus);
	}
	if (count < list->count)
		list->count = count;
}

void event_list_free(struct event_list *list)
{
	event_list_truncate(list, 0);
	free(list->specs);
	memset(list, 0, sizeof(*list));
}

const char *path_figure_key(const char *collector, const struct path_figure *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", collector, f->key ? f->key : f->column);
	for (char *k = buf; *k; k++)
		*k = *k == ' ' ? '_' : *k;
	return buf;
}

enum call_graph_mode call_graph_for(const struct record_options *opts, enum call_graph_mode collector_default)
{
	return opts->call_graph_chosen ? opts->call_graph : collector_default;
}

uint32_t stack_user_size_for(const struct record_options *opts, uint32_t collector_default)
{
	return opts->call_graph_chosen ? opts->stack_user_size : collector_default;
}

void sampling_attr_init(struct perf_event_attr *attr, const struct record_options *opts, uint32_t type,
			uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (opts->call_graph == CALL_GRAPH_FP)
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (opts->call_graph == CALL_GRAPH_DWARF) {
		/*
		 * The kernel walks its own frames; the user part of its chain
		 * would be the frame-pointer walk that DWARF replaces, so it is
		 * left out (as perf does) and the registers and stack copy
		 * stand in for it.
		 */
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->exclude_callchain_user = 1;
		attr->sample_regs_user = SP_UNWIND_REGS_MASK;
		attr->sample_stack_user = opts->stack_user_size ? opts->stack_user_size : DEFAULT_STACK_USER_SIZE;
	}
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (opts->period) {
		attr->sample_period = opts->period;
	} else {
		attr->freq = 1;
		attr->sample_freq = opts->frequency;
	}
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	attr->sample_id_all = 1;
	attr->exclude_kernel = opts->exclude_kernel;
	attr->exclude_hv = 1;
	attr->exclude_guest = 1;
}

int event_list_add_parsed(struct event_list *list, const struct record_options *opts, const struct pmu_event *ev,
			  const char *collector, enum call_graph_mode default_call_graph, char *reason,
			  size_t reasonlen)
{
	struct record_options o = *opts;
	o.call_graph = call_graph_for(opts, default_call_graph);
	if (ev->source == PMU_SOURCE_TRACEPOINT) {
		int err = tracepoint_add(list, &o, collector, ev->tracepoint_system, ev->tracepoint_name, true, reason,
					 reasonlen);
		if (!err)
			pmu_event_apply(ev, &list->specs[list->count - 1].attr);
		return err;
	}
	struct perf_event_attr attr;
	sampling_attr_init(&attr, &o, ev->attr.type, ev->attr.config);
	pmu_event_apply(ev, &attr);
	if (ev->max_precise) {
		int err = pmu_event_max_precise(&attr);
		if (err < 0) {
			snprintf(reason, reasonlen, "cannot open %s at any precision: %s", ev->name,
				 perf_open_reason(err, &attr));
			return err;
		}
	}
	struct event_spec *spec = event_list_add(list, ev->name, collector);
	spec->attr = attr;
	return 0;
}
