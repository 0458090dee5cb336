/*
 * cache.c: the cache collector, where the workload misses the cache
 * (docs/sigprof.1, CACHE COLLECTOR).
 *
 * Record side: `cache-misses` sampled with callchains every
 * CACHE_MISS_PERIOD misses (or every -c PERIOD), and `cache-references`
 * and `instructions` counted beside it (no samples: their exact totals
 * land in the TOTALS records); on a hybrid part, each once per core PMU.  The generic names go through the event
 * parser; the kernel maps them to each model's events (on Intel the
 * architectural LONGEST_LAT_CACHE.MISS/REFERENCE, on AMD Zen the L2/L3
 * request events), so one spelling serves every machine.
 *
 * Why a fixed period and not perf's default 4000 Hz: every sample then
 * stands for the same number of misses, so a stack's samples times the
 * period estimate its misses, unskewed by the kernel retuning a frequency
 * over bursts.  10000 keeps a core missing at 40 M/s (DRAM-bound) near
 * perf's 4000 samples per second, and a core missing at 100 k/s still
 * gives 10 samples a second.
 *
 * Why references and instructions are counted and not sampled: sampling
 * them would cost two more sampling events on the PMU for figures a
 * counter gives exactly.  So the miss rate (misses / references) and MPKI
 * (misses per 1000 instructions) are the run's, from exact counts; per
 * path and stack the report gives sampled misses and their estimate, not a
 * per-path rate (that would need references and instructions sampled per
 * path, which this collector does not pay for).
 *
 * Report side: misses per path and stack as plain samples (the path
 * table's cache column, its top functions and stacks); the analyzer adds
 * the estimated misses per path and the run's totals, miss rate and MPKI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/base/json.h"
#include "sigprof/model/paths.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/view/view.h"
#include "sigprof/base/util.h"

#define CACHE_MISS_PERIOD 10000
#define CACHE_MISS_PERIOD_TEXT "10000"

static const char *const counted_events[] = { "cache-references", "instructions" };

static bool cache_owns_event(const struct pmu_event *ev)
{
	/* the low 32 bits: a hybrid part's generic event carries its PMU type above them */
	uint64_t id = ev->attr.config & 0xffffffffULL;
	return ev->attr.type == PERF_TYPE_HARDWARE &&
	       (id == PERF_COUNT_HW_CACHE_MISSES || id == PERF_COUNT_HW_CACHE_REFERENCES);
}

/*
 * The attr of a generic event name, for sampling (from sampling_attr_init)
 * or counting (no samples), on the core PMU of type pmu_type (0: the one
 * core PMU of a machine that is not hybrid).
 */
static int cache_attr(const char *name, uint32_t pmu_type, const struct record_options *opts, bool sampled,
		      struct perf_event_attr *attr, char *reason, size_t reasonlen)
{
	struct pmu_event ev;
	int err = pmu_event_parse(name, &ev, reason, reasonlen);
	if (err)
		return err;
	struct record_options o = *opts;
	o.call_graph = call_graph_for(opts, CALL_GRAPH_FP);
	o.period = opts->period ? opts->period : CACHE_MISS_PERIOD;
	sampling_attr_init(attr, &o, ev.attr.type, ev.attr.config);
	pmu_event_apply(&ev, attr);
	attr->config |= (uint64_t)pmu_type << PERF_PMU_TYPE_SHIFT;
	if (!sampled) {
		attr->sample_period = 0;
		attr->freq = 0;
		attr->sample_type = PERF_SAMPLE_IDENTIFIER;
	}
	err = perf_event_probe(attr);
	if (err < 0)
		snprintf(reason, reasonlen, "cannot open %s: %s", name, perf_open_reason(err, attr));
	return err;
}

/* name, or PMU/name/ on a hybrid part, into buf. */
static const char *event_name(const char *pmu, const char *name, char *buf, size_t buflen)
{
	if (*pmu)
		snprintf(buf, buflen, "%.31s/%.24s/", pmu, name);
	else
		snprintf(buf, buflen, "%.60s", name);
	return buf;
}

/*
 * On a hybrid part each event is opened once per core PMU (cpu_core,
 * cpu_atom), else a generic event would count on one kind of core only; the
 * collector runs when misses open on at least one.
 */
static int cache_add_events(struct record_options *opts, struct event_list *events, char *reason,
			    size_t reasonlen)
{
	char pmus[8][32];
	uint32_t types[8];
	size_t npmus = pmu_hybrid_core_pmus(pmus, types, ARRAY_SIZE(pmus));
	if (!npmus) {
		pmus[0][0] = '\0';
		types[0] = 0;
		npmus = 1;
	}
	size_t opened = 0;
	int err = 0;
	for (size_t p = 0; p < npmus; p++) {
		struct perf_event_attr attr;
		char name[64];
		int e = cache_attr("cache-misses", types[p], opts, true, &attr, reason, reasonlen);
		if (e) {
			err = e;
			continue;
		}
		event_list_add(events, event_name(pmus[p], "cache-misses", name, sizeof(name)), "cache")->attr = attr;
		opened++;
		/* a counter that does not open costs its figure (miss rate, MPKI), not the misses */
		char ignored[256];
		for (size_t i = 0; i < ARRAY_SIZE(counted_events); i++)
			if (cache_attr(counted_events[i], types[p], opts, false, &attr, ignored, sizeof(ignored)) == 0)
				event_list_add(events, event_name(pmus[p], counted_events[i], name, sizeof(name)),
					       "cache")->attr = attr;
	}
	if (!opened)
		return err;
	reason[0] = '\0';
	return 0;
}

/* ---- report side ---- */

struct cache_state {
	uint64_t path_misses[PATH_COUNT]; /* sampled misses times their period */
};

static void *cache_create(const struct profile *p, int self)
{
	(void)p;
	(void)self;
	return xcalloc(1, sizeof(struct cache_state));
}

/*
 * Whether a sample of this event stands for misses: sigprof samples only
 * cache-misses, but a perf.data may sample cache-references too, or a
 * generic cache event (LLC-load-misses: result MISS in bits 16-23).
 */
static bool samples_misses(const struct sp_event *ev)
{
	uint64_t id = ev->attr.config & 0xffffffffULL;
	if (ev->attr.type == PERF_TYPE_HARDWARE)
		return id == PERF_COUNT_HW_CACHE_MISSES;
	if (ev->attr.type == PERF_TYPE_HW_CACHE)
		return ((id >> 16) & 0xff) == PERF_COUNT_HW_CACHE_RESULT_MISS;
	return true;
}

static void cache_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct cache_state *st = state;
	if (!samples_misses(s->event))
		return;
	st->path_misses[view_stack_path(p, stack)] += s->period ? s->period : 1;
}

static const struct path_figure cache_path_figures[] = { { "misses", NULL, 0, "misses" } };

static double cache_path_figure(void *state, const struct profile *p, int path, size_t figure)
{
	(void)p;
	(void)figure;
	return (double)((struct cache_state *)state)->path_misses[path];
}

/*
 * The exact count of this collector's generic hardware event id, summed
 * over the core PMUs of a hybrid part, each scaled as perf scales a
 * multiplexed counter (value * enabled / running); false without TOTALS or
 * when it never ran.
 */
static bool cache_total(const struct profile *p, uint64_t id, double *value)
{
	bool found = false;
	*value = 0;
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "cache") != 0 || ev->attr.type != PERF_TYPE_HARDWARE ||
		    (ev->attr.config & 0xffffffffULL) != id || !ev->has_totals || !ev->time_running)
			continue;
		double v = (double)ev->total_value;
		if (ev->time_enabled > ev->time_running)
			v *= (double)ev->time_enabled / (double)ev->time_running;
		*value += v;
		found = true;
	}
	return found;
}

struct cache_figures {
	bool has_misses, has_references, has_instructions;
	double misses, references, instructions;
	uint64_t period; /* of the miss samples, 0 when unknown */
};

static struct cache_figures cache_figures(const struct profile *p)
{
	struct cache_figures f = { 0 };
	f.has_misses = cache_total(p, PERF_COUNT_HW_CACHE_MISSES, &f.misses);
	f.has_references = cache_total(p, PERF_COUNT_HW_CACHE_REFERENCES, &f.references);
	f.has_instructions = cache_total(p, PERF_COUNT_HW_INSTRUCTIONS, &f.instructions);
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "cache") == 0 && ev->attr.type == PERF_TYPE_HARDWARE &&
		    (ev->attr.config & 0xffffffffULL) == PERF_COUNT_HW_CACHE_MISSES && !ev->attr.freq)
			f.period = ev->attr.sample_period;
	}
	return f;
}

static void cache_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	(void)state;
	struct cache_figures f = cache_figures(p);
	if (!f.has_misses)
		return;
	fprintf(out, "\nCache (exact counts of the run)\n");
	fprintf(out, "  cache-misses      %15.0f\n", f.misses);
	if (f.has_references)
		view_text_wrapped(o, out, 4, "  cache-references  %15.0f   miss rate %s", f.references,
				  SHARE(f.misses, f.references));
	else
		view_text_wrapped(o, out, 4, "  cache-references  did not count: no miss rate");
	if (f.has_instructions)
		view_text_wrapped(o, out, 4, "  instructions      %15.0f   MPKI %.3f (misses per 1000 instructions)",
				  f.instructions, f.instructions > 0 ? 1000.0 * f.misses / f.instructions : 0.0);
	else
		view_text_wrapped(o, out, 4, "  instructions      did not count: no MPKI");
	if (f.period)
		view_text_wrapped(o, out, 4, "  one sample per %llu misses; the path table's misses column is samples x period",
				  (unsigned long long)f.period);
}

static void cache_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w)
{
	(void)state;
	(void)o;
	struct cache_figures f = cache_figures(p);
	if (!f.has_misses) {
		json_null(w, "cache");
		return;
	}
	json_object_begin(w, "cache");
	json_double(w, "misses", f.misses, 0);
	if (f.has_references) {
		json_double(w, "references", f.references, 0);
		json_double(w, "miss_rate_percent", f.references > 0 ? 100.0 * f.misses / f.references : 0.0, 3);
	}
	if (f.has_instructions) {
		json_double(w, "instructions", f.instructions, 0);
		json_double(w, "mpki", f.instructions > 0 ? 1000.0 * f.misses / f.instructions : 0.0, 3);
	}
	if (f.period)
		json_u64(w, "sample_period", f.period);
	json_end(w);
}

static void cache_destroy(void *state)
{
	free(state);
}

static void cache_figures_rows(void *state, const struct profile *p, struct figure_rows *rows)
{
	(void)state;
	struct cache_figures f = cache_figures(p);
	if (!f.has_misses)
		return;
	figure_rows_add(rows, f.misses, "count", true, "cache.misses");
	if (f.has_references) {
		figure_rows_add(rows, f.references, "count", true, "cache.references");
		figure_rows_add(rows, f.references > 0 ? 100.0 * f.misses / f.references : 0.0, "percent", true,
				"cache.miss_rate_percent");
	}
	if (f.has_instructions) {
		figure_rows_add(rows, f.instructions, "count", true, "cache.instructions");
		figure_rows_add(rows, f.instructions > 0 ? 1000.0 * f.misses / f.instructions : 0.0, "per 1000", true,
				"cache.mpki");
	}
}

static const struct collector_analyzer cache_analyzer = {
	.create = cache_create,
	.figures = cache_figures_rows,
	.sample = cache_sample,
	.text = cache_text,
	.json = cache_json,
	.destroy = cache_destroy,
	.path_figures = cache_path_figures,
	.npath_figures = ARRAY_SIZE(cache_path_figures),
	.path_figure = cache_path_figure,
	.show_stacks = true,
};

const struct collector cache_collector = {
	.name = "cache",
	.description = "cache misses per path and stack; miss rate and MPKI of the run",
	.add_events = cache_add_events,
	.unit = "misses",
	.analyzer = &cache_analyzer,
	.owns_event = cache_owns_event,
	.events = "cache-misses (sampled every " CACHE_MISS_PERIOD_TEXT " misses, callchains), cache-references and instructions (counted)",
};
