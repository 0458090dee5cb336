/*
 * rate_bound.c: the windowed rate bound (rate_bound.h): per gate and CPU,
 * the meter's count at the last window's end and which side is enabled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/kernel/rate_bound.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

struct gate_cpu {
	uint64_t meter_at_tick; /* the meter's count when the last window ended */
	bool above;             /* the alternate is enabled here, the gate disabled */
};

struct gate {
	size_t spec, meter;
	int alternate;          /* -1: none */
	uint64_t bound_hz;
	struct gate_cpu *cpus;
};

struct rate_bound {
	struct perf_session *session;
	struct gate *gates;
	size_t ngates, gates_cap, ncpus;
	uint64_t window_start;  /* ns, monotonic */
	uint64_t windows_above, switches;
};

void rate_bound_link(struct event_list *events, size_t gate, size_t meter, int alternate, uint64_t bound_hz)
{
	struct event_spec *g = &events->specs[gate];
	g->rate_bound_hz = bound_hz;
	g->rate_meter = (int)meter;
	g->rate_alternate = alternate;
	if (alternate >= 0) {
		struct perf_event_attr *a = &events->specs[alternate].attr;
		a->disabled = 1;
		a->enable_on_exec = 0; /* the recorder enables it when a window is above the bound */
	}
}

size_t rate_bound_add_sibling(struct event_list *events, size_t from, const char *suffix, const char *filter)
{
	char collector[sizeof(events->specs[from].collector)];
	snprintf(collector, sizeof(collector), "%s", events->specs[from].collector); /* the add may move the specs */
	struct event_spec *spec = event_list_add(events, "", collector);
	const struct event_spec *src = &events->specs[from];
	/* the tracepoint's own name, without the suffix of a sibling it was copied from */
	snprintf(spec->name, sizeof(spec->name), "%.*s#%s", (int)strcspn(src->name, "#"), src->name, suffix);
	spec->attr = src->attr;
	snprintf(spec->tracepoint_system, sizeof(spec->tracepoint_system), "%s", src->tracepoint_system);
	if (filter)
		spec->tracepoint_filter = xstrdup(filter);
	return events->count - 1;
}

void rate_bound_make_counter(struct perf_event_attr *attr)
{
	attr->freq = 0;
	attr->sample_period = 0;
	attr->sample_type &= ~(uint64_t)(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	attr->sample_regs_user = 0;
	attr->sample_stack_user = 0;
}

uint64_t rate_bound_cap_hz(uint64_t bound_hz)
{
	int max = read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	return max > 0 && (uint64_t)max < bound_hz ? (uint64_t)max : bound_hz;
}

size_t rate_bound_add_sampled(struct event_list *events, size_t gate, int meter, uint64_t bound_hz,
			      uint64_t sampled_hz)
{
	size_t alternate = rate_bound_add_sibling(events, gate, RATE_BOUND_SAMPLED_SUFFIX, NULL);
	events->specs[alternate].attr.freq = 1;
	events->specs[alternate].attr.sample_freq = rate_bound_cap_hz(sampled_hz);
	if (meter < 0) {
		meter = (int)rate_bound_add_sibling(events, gate, RATE_BOUND_COUNT_SUFFIX, NULL);
		rate_bound_make_counter(&events->specs[meter].attr);
	}
	rate_bound_link(events, gate, (size_t)meter, (int)alternate, bound_hz);
	return (size_t)meter;
}

size_t rate_bound_add(struct event_list *events, size_t gate, int meter, uint64_t bound_hz)
{
	uint64_t bound = rate_bound_cap_hz(bound_hz);
	return rate_bound_add_sampled(events, gate, meter, bound, bound);
}

size_t rate_bound_add_stack_copies(struct event_list *events, const struct record_options *opts, size_t record,
				   size_t meter, const char *suffix, uint32_t stack_size, uint64_t bound_hz,
				   bool kernel_chain)
{
	struct record_options dwarf = *opts;
	dwarf.call_graph = CALL_GRAPH_DWARF;
	dwarf.stack_user_size = stack_size;
	dwarf.period = 1;
	/* the record's filter too: a copy of a hit the record does not take would be joined to the next one */
	size_t copy = rate_bound_add_sibling(events, record, suffix, events->specs[record].tracepoint_filter);
	struct perf_event_attr *a = &events->specs[copy].attr;
	sampling_attr_init(a, &dwarf, PERF_TYPE_TRACEPOINT, a->config);
	a->sample_type |= PERF_SAMPLE_RAW;
	a->exclude_callchain_kernel = !kernel_chain || events->specs[record].attr.exclude_callchain_kernel;
	a->sample_period = 1;
	a->freq = 0;
	size_t sampled = rate_bound_add_sibling(events, copy, RATE_BOUND_STACK_SAMPLED_SUFFIX,
						events->specs[record].tracepoint_filter);
	events->specs[sampled].attr.freq = 1;
	events->specs[sampled].attr.sample_freq = rate_bound_cap_hz(STACK_COPY_SAMPLED_HZ);
	rate_bound_link(events, copy, meter, (int)sampled, bound_hz);
	return copy;
}

bool rate_bound_stack_copy_suffix(const char *suffix)
{
	return suffix && (strcmp(suffix, RATE_BOUND_STACK_SUFFIX) == 0 || strcmp(suffix, RATE_BOUND_STACK_SAMPLED_SUFFIX) == 0);
}

const char *rate_bound_suffix(const char *name, size_t *base_len)
{
	const char *hash = strchr(name, '#');
	*base_len = hash ? (size_t)(hash - name) : strlen(name);
	return hash ? hash + 1 : NULL;
}

bool rate_bound_above(uint64_t hits, uint64_t elapsed_ns, uint64_t bound_hz)
{
	return (unsigned __int128)hits * 1000000000u > (unsigned __int128)bound_hz * elapsed_ns;
}

int rate_bound_start(struct perf_session *s, uint64_t now_ns, struct rate_bound **out)
{
	const struct opened_event *events;
	size_t n = perf_session_events(s, &events);
	*out = NULL;
	struct rate_bound *rb = NULL;
	for (size_t e = 0; e < n; e++) {
		const struct event_spec *spec = events[e].spec;
		if (!spec->rate_bound_hz || events[e].failed || spec->rate_meter < 0 || (size_t)spec->rate_meter >= n ||
		    events[spec->rate_meter].failed)
			continue;
		if (!rb) {
			rb = xcalloc(1, sizeof(*rb));
			rb->session = s;
			rb->ncpus = perf_session_cpu_count(s);
			rb->window_start = now_ns;
		}
		GROW(rb->gates, rb->gates_cap, rb->ngates + 1);
		struct gate *g = &rb->gates[rb->ngates++];
		bool alternate = spec->rate_alternate >= 0 && (size_t)spec->rate_alternate < n &&
				 !events[spec->rate_alternate].failed;
		*g = (struct gate){ .spec = e, .meter = (size_t)spec->rate_meter,
				    .alternate = alternate ? spec->rate_alternate : -1, .bound_hz = spec->rate_bound_hz,
				    .cpus = xcalloc(rb->ncpus ? rb->ncpus : 1, sizeof(struct gate_cpu)) };
		for (size_t i = 0; i < rb->ncpus; i++)
			perf_session_read_cpu(s, g->meter, i, &g->cpus[i].meter_at_tick);
	}
	*out = rb;
	return 0;
}

/* Enable one side before disabling the other: a hit in between is recorded twice, never lost. */
static int switch_side(struct rate_bound *rb, const struct gate *g, size_t cpu, bool above)
{
	int err = 0, ret;
	if (above) {
		if (g->alternate >= 0 && (ret = perf_session_enable_cpu(rb->session, (size_t)g->alternate, cpu, true)))
			err = ret;
		if ((ret = perf_session_enable_cpu(rb->session, g->spec, cpu, false)) && !err)
			err = ret;
	} else {
		if ((ret = perf_session_enable_cpu(rb->session, g->spec, cpu, true)))
			err = ret;
		if (g->alternate >= 0 && (ret = perf_session_enable_cpu(rb->session, (size_t)g->alternate, cpu, false)) &&
		    !err)
			err = ret;
	}
	return err;
}

int rate_bound_tick(struct rate_bound *rb, uint64_t now_ns)
{
	if (!rb || now_ns - rb->window_start < RATE_BOUND_WINDOW_NS)
		return 0;
	uint64_t elapsed = now_ns - rb->window_start;
	int err = 0;
	for (size_t k = 0; k < rb->ngates; k++) {
		struct gate *g = &rb->gates[k];
		for (size_t i = 0; i < rb->ncpus; i++) {
			struct gate_cpu *c = &g->cpus[i];
			uint64_t count;
			if (perf_session_read_cpu(rb->session, g->meter, i, &count) < 0)
				continue; /* not open on this CPU (a PMU that covers some CPUs only) */
			bool above = rate_bound_above(count - c->meter_at_tick, elapsed, g->bound_hz);
			c->meter_at_tick = count;
			rb->windows_above += above;
			if (above == c->above)
				continue;
			int ret = switch_side(rb, g, i, above);
			if (ret && !err)
				err = ret;
			c->above = above;
			rb->switches++;
		}
	}
	rb->window_start = now_ns;
	return err;
}

uint64_t rate_bound_timeout_ns(const struct rate_bound *rb, uint64_t now_ns)
{
	uint64_t elapsed = now_ns - rb->window_start;
	return elapsed >= RATE_BOUND_WINDOW_NS ? 0 : RATE_BOUND_WINDOW_NS - elapsed;
}

void rate_bound_stats(const struct rate_bound *rb, uint64_t *windows_above, uint64_t *switches)
{
	*windows_above = rb ? rb->windows_above : 0;
	*switches = rb ? rb->switches : 0;
}

void rate_bound_free(struct rate_bound *rb)
{
	if (!rb)
		return;
	for (size_t k = 0; k < rb->ngates; k++)
		free(rb->gates[k].cpus);
	free(rb->gates);
	free(rb);
}
