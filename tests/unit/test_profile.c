/*
 * test_profile.c: the report's loader (profiler/profile.c) on malformed
 * recordings.
 *
 * Each test writes a small file whose sigprof records come from the writer
 * (datafile.c, tested on its own in test_datafile.c) and whose damaged
 * parts are laid out by hand, then loads it with profile_load().  What is
 * checked is that a bad file is reported or skipped, never a crash: the
 * ASan+UBSan build of these tests (make asan-test) is the one that matters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/format.h"
#include "sigprof/profile.h"
#include "sigprof/report.h"
#include "sigprof/util.h"
#include "unit_helpers.h"

TEMP_DIR_SUITE(profile);

#define TEST_ID 77

/* A new file at dir/name with one cpu-clock EVENT (id TEST_ID); *path to free. */
static struct sp_writer *start_file(const char *name, char **path)
{
	*path = path_join(dir, name);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(*path, &w), 0);
	struct perf_event_attr attr = cpu_clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	uint64_t id = TEST_ID;
	cr_assert_eq(sp_writer_event(w, "cpu-clock", "cpu", &attr, &id, 1), 0);
	return w;
}

static void add_bytes(struct sp_writer *w, const struct byte_builder *b)
{
	cr_assert_eq(sp_writer_raw(w, b->buf, b->len), 0);
}

static void add_round(struct sp_writer *w)
{
	struct byte_builder b = { 0 };
	bb_end_record(&b, bb_begin_record(&b, SP_REC_ROUND, 0));
	add_bytes(w, &b);
	bb_free(&b);
}

/* A sample of event id at a kernel address, as the kernel lays it out for cpu_clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME). */
static void add_kernel_sample_of(struct sp_writer *w, uint64_t id, uint64_t ip, uint64_t time)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	bb_u64(&b, id);
	bb_u64(&b, ip);
	bb_u32_pair(&b, 100, 100);
	bb_u64(&b, time);
	bb_end_record(&b, at);
	add_bytes(w, &b);
	bb_free(&b);
}

static void add_kernel_sample(struct sp_writer *w, uint64_t ip, uint64_t time)
{
	add_kernel_sample_of(w, TEST_ID, ip, time);
}

static void finish_file(struct sp_writer *w)
{
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) } };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);
}

/* Load path (with the kernel's symbols from kallsyms when not NULL): 0 or the error. */
static int load(const char *path, const char *kallsyms, struct profile *p)
{
	struct profile_options opts = { .kallsyms = kallsyms, .collectors = collector_table,
					.ncollectors = collector_count };
	char err[256] = "";
	int ret = profile_load(path, &opts, p, err, sizeof(err));
	if (ret == 0)
		cr_assert_eq(err[0], '\0');
	return ret;
}

/* A copy of kallsyms that decompresses but does not parse is dropped (once): the loader goes on. */
Test(profile, a_recorded_kallsyms_copy_that_does_not_parse_is_dropped)
{
	static const char *const texts[] = {
		"0000000000000000 T _stext\n0000000000000000 t hidden\n", /* as an unprivileged reader sees it */
		"not a symbol table\n",
		"\n\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		char name[32], *path;
		snprintf(name, sizeof(name), "kallsyms%zu.data", i);
		struct sp_writer *w = start_file(name, &path);
		cr_assert_eq(sp_writer_kallsyms(w, texts[i], strlen(texts[i])), 0);
		add_kernel_sample(w, 0xffffffff81000010ull, 1000);
		add_round(w);
		finish_file(w);

		struct profile p;
		cr_assert_eq(load(path, NULL, &p), 0, "%s", texts[i]);
		cr_assert_eq(p.samples, 1);
		profile_free(&p);
		free(path);
	}
}

/* A ROUND with nothing queued (first in the file, or twice in a row) is no work, not a crash. */
Test(profile, round_with_nothing_queued)
{
	char *path;
	struct sp_writer *w = start_file("round.data", &path);
	add_round(w);
	add_round(w);
	add_kernel_sample(w, 0xffffffff81000010ull, 1000);
	add_round(w);
	add_round(w);
	add_round(w);
	finish_file(w);

	struct profile p;
	cr_assert_eq(load(path, NULL, &p), 0);
	cr_assert_eq(p.samples, 1);
	cr_assert(p.has_finish);
	profile_free(&p);
	free(path);
}

/* One software event of the events collector: period 0 makes it a counter. */
struct test_event {
	const char *name;
	uint64_t config;
	bool counter;
	unsigned samples; /* kernel samples of it in the recording, after those of the events before it */
};

/* A recording of the events collector with these events (ids 10, 11, ...) and their samples; its malloc'd path. */
static char *events_recording(const char *name, const struct test_event *events, size_t n)
{
	char *path = path_join(dir, name);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	struct perf_event_attr attr = cpu_clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	uint64_t sample_period = attr.sample_period;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = 10 + i;
		attr.config = events[i].config;
		attr.sample_period = events[i].counter ? 0 : sample_period;
		cr_assert_eq(sp_writer_event(w, events[i].name, "events", &attr, &id, 1), 0);
	}
	uint64_t time = 1000;
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < events[i].samples; k++)
			add_kernel_sample_of(w, 10 + i, 0xffffffff81000010ull, time++);
	add_round(w);
	finish_file(w);
	return path;
}

/*
 * A collector with several sampling events (the events collector of
 * `record -e page-faults,cpu-clock:k`): the header names each with its
 * samples, and they add up to the collector's; a counting event (no
 * period) has no samples and is not named.
 */
Test(profile, a_collectors_header_names_each_of_its_events)
{
	static const struct test_event events[] = {
		{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS, false, 3 },
		{ "cpu-clock:k", PERF_COUNT_SW_CPU_CLOCK, false, 2 },
		{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, false, 0 },
		{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, true, 0 },
	};
	char *path = events_recording("events.data", events, sizeof(events) / sizeof(events[0]));

	/* a sampling event without samples is counted, not listed */
	char *text = report_of(path, REPORT_TEXT);
	cr_assert(strstr(text, "# collector:  events   page-faults 3 + cpu-clock:k 2 = 5 samples; 1 more event without "
			       "samples\n"),
		  "%s", text);
	cr_assert_null(strstr(text, "context-switches"), "%s", text);
	free(text);
	char *json = report_of(path, REPORT_JSON);
	cr_assert(strstr(json, "\"name\":\"events\",\"event\":\"page-faults\",\"status\":\"ok\",\"samples\":5,"
			       "\"events\":[{\"name\":\"page-faults\",\"samples\":3},{\"name\":\"cpu-clock:k\",\"samples\":2},"
			       "{\"name\":\"minor-faults\",\"samples\":0}]}"),
		  "%s", json);
	free(json);
	free(path);
}

/* Of several sampling events only one has samples: it is named without a count of its own, the others counted. */
Test(profile, a_collectors_header_with_one_event_of_several_sampled)
{
	static const struct test_event events[] = {
		{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS, false, 0 },
		{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, false, 4 },
		{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, false, 0 },
	};
	char *path = events_recording("one_of_two.data", events, sizeof(events) / sizeof(events[0]));
	char *text = report_of(path, REPORT_TEXT);
	cr_assert(strstr(text, "# collector:  events   minor-faults, 4 samples; 2 more events without samples\n"), "%s",
		  text);
	free(text);
	free(path);
}

/* A collector of one event keeps the header line it always had. */
Test(profile, a_collectors_header_with_one_event)
{
	char *path;
	struct sp_writer *w = start_file("one.data", &path);
	add_kernel_sample(w, 0xffffffff81000010ull, 1000);
	add_kernel_sample(w, 0xffffffff81000010ull, 1001);
	add_round(w);
	finish_file(w);
	char *text = report_of(path, REPORT_TEXT);
	cr_assert(strstr(text, "# collector:  cpu      cpu-clock, 2 samples\n"), "%s", text);
	free(text);
	free(path);
}

static void add_meta(struct sp_writer *w, const char *key, const char *value)
{
	cr_assert_eq(sp_writer_meta(w, key, &value, 1), 0);
}

/* A corrupt file may repeat a META: the second argv replaces the first (no leak), notes are capped. */
Test(profile, repeated_meta_records_neither_leak_nor_grow_without_bound)
{
	char *path;
	struct sp_writer *w = start_file("meta.data", &path);
	const char *first[] = { "./first", "a" }, *second[] = { "./second" };
	cr_assert_eq(sp_writer_meta(w, "argv", first, 2), 0);
	cr_assert_eq(sp_writer_meta(w, "argv", second, 1), 0);
	for (int i = 0; i < 1000; i++)
		add_meta(w, "note", "again");
	finish_file(w);
	struct profile p;
	cr_assert_eq(load(path, NULL, &p), 0);
	cr_assert_eq(p.argc, 1);
	cr_assert_str_eq(p.argv[0], "./second");
	cr_assert_leq(p.nnotes, 64);
	profile_free(&p);
	free(path);
}

/* A FINISH whose wait status no exit gives (a corrupt file) is a finished run of unknown status, not one cut short. */
Test(profile, an_impossible_wait_status_is_unknown_not_cut_short)
{
	static const int32_t statuses[] = { -1, 0x7f };
	for (size_t i = 0; i < ARRAY_SIZE(statuses); i++) {
		char *path;
		struct sp_writer *w = start_file("status.data", &path);
		struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) },
						.wait_status = statuses[i] };
		cr_assert_eq(sp_writer_record(w, &fin), 0);
		cr_assert_eq(sp_writer_close(w), 0);
		struct profile p;
		cr_assert_eq(load(path, NULL, &p), 0);
		cr_assert_not(p.truncated);
		cr_assert_eq(profile_exit_status(&p), PROFILE_EXIT_UNKNOWN);
		profile_free(&p);
		free(path);
	}
}

/* The boot id of this machine, or a skip. */
static void this_boot(char *buf, size_t len)
{
	if (read_boot_id(buf, len) != 0)
		cr_skip_test("no /proc/sys/kernel/random/boot_id here");
}

/*
 * Without a usable copy of kallsyms, this machine's table names kernel
 * frames only in the boot the recording was made in; a broken copy is a
 * note either way.
 */
Test(profile, the_hosts_kallsyms_only_for_a_recording_of_this_boot)
{
	char boot[64];
	this_boot(boot, sizeof(boot));
	static const struct { const char *boot_id; bool broken_copy; bool host_used; } cases[] = {
		{ "", false, false },       /* no boot id: cannot tell */
		{ "another-boot", false, false },
		{ NULL, false, true },      /* NULL: this boot's */
		{ NULL, true, true },
		{ "another-boot", true, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *path;
		struct sp_writer *w = start_file("boot.data", &path);
		const char *id = cases[i].boot_id ? cases[i].boot_id : boot;
		if (id[0])
			add_meta(w, "boot_id", id);
		if (cases[i].broken_copy) {
			/* a first block out of sequence */
			struct sp_kallsyms_record k = { .header = { .type = SP_REC_KALLSYMS, .size = sizeof(k) },
							.sequence = 3, .text_size = 100 };
			cr_assert_eq(sp_writer_record(w, &k), 0);
		}
		add_kernel_sample(w, 0xffffffff81000010ull, 1000);
		add_round(w);
		finish_file(w);
		struct profile p;
		cr_assert_eq(load(path, NULL, &p), 0);
		bool noted = false;
		for (int n = 0; n < p.nnotes; n++)
			noted |= strstr(p.notes[n], "kallsyms) is corrupt") != NULL;
		cr_assert_eq(noted, cases[i].broken_copy, "case %zu: corrupt-copy note", i);
		bool addresses = strstr(p.kernel_symbols_problem, "shown as addresses") != NULL;
		cr_assert_eq(addresses, !cases[i].host_used, "case %zu: '%s'", i, p.kernel_symbols_problem);
		profile_free(&p);
		free(path);
	}
}
