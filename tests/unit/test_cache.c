/*
 * test_cache.c: the cache collector's report side (collectors/cache.c) on
 * recordings laid out here: cache-misses samples with their period, exact
 * TOTALS of cache-misses, cache-references and instructions, and what the
 * report makes of them (miss rate, MPKI, misses per path).  The machines we
 * test on have no PMU, so these files stand in for a recording made where
 * one exists; their records follow docs/data-format.md.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/model/collector.h"
#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/model/profile.h"
#include "sigprof/commands/report.h"
#include "unit_helpers.h"

TEMP_DIR_SUITE(cache);

#define MISSES_ID 11
#define REFERENCES_ID 12
#define INSTRUCTIONS_ID 13
#define PERIOD 10000

static const uint64_t sample_type =
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;

static struct perf_event_attr hardware_attr(uint64_t config, uint64_t period)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = config;
	attr.sample_period = period;
	attr.sample_type = period ? sample_type : PERF_SAMPLE_IDENTIFIER;
	attr.sample_id_all = 1;
	return attr;
}

/* A user-space cache-misses sample at ip, as the kernel lays it out for sample_type. */
static void add_miss_sample(struct sp_writer *w, uint64_t ip, uint64_t time)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	bb_u64(&b, MISSES_ID);
	bb_u64(&b, ip);
	bb_u32_pair(&b, 100, 100);
	bb_u64(&b, time);
	bb_u64(&b, PERIOD);
	bb_end_record(&b, at);
	cr_assert_eq(sp_writer_raw(w, b.buf, b.len), 0);
	bb_free(&b);
}

static void add_totals(struct sp_writer *w, uint32_t index, uint64_t value, uint64_t enabled, uint64_t running)
{
	struct sp_totals_record t = { .header = { .type = SP_REC_TOTALS, .size = sizeof(t) },
				      .event_index = index,
				      .value = value,
				      .time_enabled = enabled,
				      .time_running = running };
	cr_assert_eq(sp_writer_record(w, &t), 0);
}

/*
 * A recording of the cache collector: 3 miss samples, misses counted
 * misses_value over half its time (multiplexed: scaled x2), references
 * and, when with_instructions, instructions counted all the time.
 */
static char *write_recording(uint64_t misses_value, uint64_t references, bool with_instructions,
			     uint64_t instructions)
{
	char *path = path_join(dir, "cache.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	struct perf_event_attr attr = hardware_attr(PERF_COUNT_HW_CACHE_MISSES, PERIOD);
	uint64_t id = MISSES_ID;
	cr_assert_eq(sp_writer_event(w, "cache-misses", "cache", &attr, &id, 1), 0);
	attr = hardware_attr(PERF_COUNT_HW_CACHE_REFERENCES, 0);
	id = REFERENCES_ID;
	cr_assert_eq(sp_writer_event(w, "cache-references", "cache", &attr, &id, 1), 0);
	if (with_instructions) {
		attr = hardware_attr(PERF_COUNT_HW_INSTRUCTIONS, 0);
		id = INSTRUCTIONS_ID;
		cr_assert_eq(sp_writer_event(w, "instructions", "cache", &attr, &id, 1), 0);
	}
	for (int i = 0; i < 3; i++)
		add_miss_sample(w, 0x401000 + (uint64_t)i, 1000 + (uint64_t)i);
	add_totals(w, 0, misses_value, 2000, 1000);
	add_totals(w, 1, references, 2000, 2000);
	if (with_instructions)
		add_totals(w, 2, instructions, 2000, 2000);
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) } };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	return path;
}

Test(cache, miss_rate_and_mpki_from_exact_scaled_totals)
{
	/* 25000 misses counted half the time: 50000; / 200000 references = 25%; / 10^7 instructions = MPKI 5 */
	char *path = write_recording(25000, 200000, true, 10000000);
	char *json = report_of(path, REPORT_JSON);
	cr_assert(strstr(json, "\"cache\":{\"misses\":50000,\"references\":200000,\"miss_rate_percent\":25.000,"
			       "\"instructions\":10000000,\"mpki\":5.000,\"sample_period\":10000}"),
		  "%s", json);
	/* the three samples of 10000 misses each are on the "other" path (no rule matches their frames) */
	cr_assert(strstr(json, "\"path\":\"other\",\"samples\":{\"cache\":3},\"cache_misses\":30000"), "%s", json);
	free(json);
	char *text = report_of(path, REPORT_TEXT);
	cr_assert(strstr(text, "miss rate 25.00%"), "%s", text);
	cr_assert(strstr(text, "MPKI 5.000"), "%s", text);
	cr_assert(strstr(text, "Top functions, cache samples"), "the misses' functions are listed:\n%s", text);
	free(text);
	free(path);
}

Test(cache, text_fits_80_and_60_columns)
{
	char *path = write_recording(25000, 200000, true, 10000000);
	char *whole = report_of(path, REPORT_TEXT);
	cr_assert_gt(widest_line_before(whole, NULL), 80, "without a width the lines are whole:\n%s", whole);
	free(whole);
	static const unsigned widths[] = { 80, 60 };
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		char *text = report_of_width(path, REPORT_TEXT, widths[i]);
		cr_assert_leq(widest_line_before(text, NULL), widths[i], "a line wider than %u:\n%s", widths[i], text);
		cr_assert(strstr(text, "miss rate 25.00%"), "%s", text);
		cr_assert(strstr(text, "MPKI 5.000"), "%s", text);
		cr_assert(strstr(text, "one sample per 10000 misses"), "%s", text);
		free(text);
	}
	free(path);
}

Test(cache, without_instructions_there_is_no_mpki)
{
	char *path = write_recording(1000, 4000, false, 0);
	char *json = report_of(path, REPORT_JSON);
	cr_assert(strstr(json, "\"miss_rate_percent\":50.000"), "%s", json);
	cr_assert_null(strstr(json, "mpki"), "%s", json);
	free(json);
	char *text = report_of(path, REPORT_TEXT);
	cr_assert(strstr(text, "instructions      did not count: no MPKI"), "%s", text);
	free(text);
	free(path);
}

/* The events a user names with -e land in the cache collector's column when they are its events. */
Test(cache, owns_the_generic_cache_events_the_user_names)
{
	static const struct {
		const char *spec, *collector;
	} cases[] = {
		{ "cache-misses", "cache" },  { "cache-references:u", "cache" }, { "perf::CACHE-MISSES", "cache" },
		{ "cycles", "events" },       { "LLC-load-misses", "events" },   { "cpu-clock", "events" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmu_event ev;
		char err[256];
		cr_assert_eq(pmu_event_parse(cases[i].spec, &ev, err, sizeof(err)), 0, "%s: %s", cases[i].spec, err);
		cr_assert_str_eq(collector_for_event(&ev)->name, cases[i].collector, "%s", cases[i].spec);
	}
}

/* On a hybrid part each core PMU counts its own cores: the run's figures add them up. */
Test(cache, hybrid_core_pmus_add_up)
{
	char *path = path_join(dir, "hybrid.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	static const struct {
		const char *name;
		uint64_t config, period, value;
	} events[] = {
		{ "cpu_atom/cache-misses/", PERF_COUNT_HW_CACHE_MISSES | 10ULL << 32, PERIOD, 3000 },
		{ "cpu_atom/instructions/", PERF_COUNT_HW_INSTRUCTIONS | 10ULL << 32, 0, 1000000 },
		{ "cpu_core/cache-misses/", PERF_COUNT_HW_CACHE_MISSES | 8ULL << 32, PERIOD, 7000 },
		{ "cpu_core/instructions/", PERF_COUNT_HW_INSTRUCTIONS | 8ULL << 32, 0, 1000000 },
	};
	for (uint32_t i = 0; i < 4; i++) {
		struct perf_event_attr attr = hardware_attr(events[i].config, events[i].period);
		uint64_t id = 20 + i;
		cr_assert_eq(sp_writer_event(w, events[i].name, "cache", &attr, &id, 1), 0);
	}
	for (uint32_t i = 0; i < 4; i++)
		add_totals(w, i, events[i].value, 1000, 1000);
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) } };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	/* 10000 misses over 2000000 instructions: MPKI 5 */
	char *json = report_of(path, REPORT_JSON);
	cr_assert(strstr(json, "\"cache\":{\"misses\":10000,\"instructions\":2000000,\"mpki\":5.000,"), "%s", json);
	free(json);
	free(path);
}
