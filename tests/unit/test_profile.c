/*
 * test_profile.c: the report's loader (profiler/model/profile.c) on malformed
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

#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/profile.h"
#include "sigprof/commands/report.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "sigprof/symbolize/symbolize.h"
#include "unit_helpers.h"

TEMP_DIR_SUITE(profile);

#define TEST_ID 77

/* A new file at dir/name with one cpu-clock EVENT (id TEST_ID); *path to free. */
static struct sp_writer *start_file_with(const char *name, char **path, uint64_t sample_type)
{
	*path = path_join(dir, name);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(*path, &w), 0);
	struct perf_event_attr attr = cpu_clock_attr(sample_type);
	uint64_t id = TEST_ID;
	cr_assert_eq(sp_writer_event(w, "cpu-clock", "cpu", &attr, &id, 1), 0);
	return w;
}

static struct sp_writer *start_file(const char *name, char **path)
{
	return start_file_with(name, path, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
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
			       "\"events\":[{\"name\":\"page-faults\",\"samples\":3,\"stack_copies\":0},"
			       "{\"name\":\"cpu-clock:k\",\"samples\":2,\"stack_copies\":0},"
			       "{\"name\":\"minor-faults\",\"samples\":0,\"stack_copies\":0}]}"),
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
		cr_skip_test("environment: no /proc/sys/kernel/random/boot_id here");
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

/* ---- frame-pointer chains: never an invented frame ---- */

#define FP_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)
#define FP_PID 100
#define CODE_START 0x400000ull /* one executable mapping of the fixture, as the test's MMAP2 record says */
#define CODE_LEN 0x1000ull

/* A user sample of pid FP_PID whose callchain is the user context marker and then chain. */
static void add_user_chain_sample(struct sp_writer *w, const uint64_t *chain, size_t n, uint64_t time)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	bb_u64(&b, TEST_ID);
	bb_u64(&b, chain[0]);
	bb_u32_pair(&b, FP_PID, FP_PID);
	bb_u64(&b, time);
	bb_u64(&b, n + 1);
	bb_u64(&b, (uint64_t)PERF_CONTEXT_USER);
	for (size_t i = 0; i < n; i++)
		bb_u64(&b, chain[i]);
	bb_end_record(&b, at);
	add_bytes(w, &b);
	bb_free(&b);
}

/* Stack number stack, as its frames' names or "0xADDR" (dso offset) joined by " <- ". */
static void stack_text(const struct profile *p, size_t stack, char *out, size_t outlen)
{
	const struct stack *s = &p->stacks.stacks[stack];
	const uint32_t *frames = stack_frames(&p->stacks, s);
	size_t used = 0;
	out[0] = '\0';
	for (uint32_t i = 0; i < s->nframes && used < outlen; i++) {
		const struct frame *f = &p->stacks.frames[frames[i]];
		used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? " <- " : "", f->sym ? f->sym : "?");
		if (!f->sym && used < outlen)
			used += (size_t)snprintf(out + used, outlen - used, "0x%llx", (unsigned long long)f->addr);
	}
}

/*
 * The kernel's walk of code without frame pointers returns stack words,
 * text and its own frame again: a return address in no executable mapping,
 * or one repeated to the chain's end, ends the stack with a frame that
 * says why.  A recursion (a repeat the chain goes on past) and a leaf IP
 * in no mapping (JIT code) are frames like any other.
 */
Test(profile, frame_pointer_chains_end_where_they_leave_the_code_or_loop)
{
	char *path;
	struct sp_writer *w = start_file_with("fp.data", &path, FP_SAMPLE_TYPE);
	struct byte_builder b = { 0 };
	struct trailer t = { .pid = FP_PID, .tid = FP_PID, .time = 1, .id = TEST_ID };
	bb_mmap2(&b, CODE_START, CODE_LEN, 0, 5 /* PROT_READ | PROT_EXEC */, 2, "build/fixtures/elf_fixture.stripped",
		 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &t);
	add_bytes(w, &b);
	bb_free(&b);
	const uint64_t left[] = { CODE_START + 0x100, CODE_START + 0x200, 0x3e8 /* a small integer */,
				  CODE_START + 0x300 };
	const uint64_t stack_word[] = { CODE_START + 0x100, 0x7ffe9f665a6bull /* the stack */ };
	const uint64_t loop[] = { CODE_START + 0x100, CODE_START + 0x200, CODE_START + 0x200, CODE_START + 0x200 };
	const uint64_t recursion[] = { CODE_START + 0x100, CODE_START + 0x200, CODE_START + 0x200, CODE_START + 0x300 };
	const uint64_t jit_leaf[] = { 0x1000, CODE_START + 0x200 };
	add_user_chain_sample(w, left, ARRAY_SIZE(left), 10);
	add_user_chain_sample(w, stack_word, ARRAY_SIZE(stack_word), 11);
	add_user_chain_sample(w, loop, ARRAY_SIZE(loop), 12);
	add_user_chain_sample(w, recursion, ARRAY_SIZE(recursion), 13);
	add_user_chain_sample(w, jit_leaf, ARRAY_SIZE(jit_leaf), 14);
	add_round(w);
	finish_file(w);

	struct profile p;
	cr_assert_eq(load(path, NULL, &p), 0);
	cr_assert_eq(p.stacks.nstacks, 5, "one stack per sample, %zu", p.stacks.nstacks);
	const char *left_the_code = "[unwind: frame pointer chain left the code (a return address in no executable "
				    "mapping)]";
	const uint32_t want_frames[] = { 3, 2, 3, 4, 2 };
	const char *want_last[] = { left_the_code, left_the_code,
				    "[unwind: frame pointer chain repeats a frame to its end]", NULL, NULL };
	for (size_t i = 0; i < 5; i++) {
		char text[1024];
		stack_text(&p, i, text, sizeof(text));
		const struct stack *s = &p.stacks.stacks[i];
		cr_expect_eq(s->nframes, want_frames[i], "stack %zu: %s", i, text);
		const struct frame *last = &p.stacks.frames[stack_frames(&p.stacks, s)[s->nframes - 1]];
		if (want_last[i])
			cr_expect_str_eq(last->sym ? last->sym : "", want_last[i], "stack %zu: %s", i, text);
		else
			cr_expect(!last->synthetic, "stack %zu ends in a made-up frame: %s", i, text);
	}
	cr_expect_eq(p.unwind.samples, 5);
	cr_expect_eq(p.unwind.fp_chains, 5);
	cr_expect_eq(p.unwind.complete, 2);
	cr_expect_eq(p.unwind.failures[UNWIND_NO_MAPPING], 2);
	cr_expect_eq(p.unwind.failures[UNWIND_BAD_FRAME], 1);
	profile_free(&p);
	free(path);
}

/*
 * A chain the kernel cut at its limit (kernel.perf_event_max_stack; 127
 * when the event does not say) is kept whole and ends with a frame that
 * says so: a recursion deeper than the limit repeats one return address to
 * the end, after an entry in the same function; a run after an entry in
 * another function is still a frame pointing at itself.
 */
Test(profile, chains_the_kernel_cut_at_its_limit_keep_their_frames_and_say_so)
{
	char *path;
	struct sp_writer *w = start_file_with("fplimit.data", &path, FP_SAMPLE_TYPE);
	struct byte_builder b = { 0 };
	struct trailer t = { .pid = FP_PID, .tid = FP_PID, .time = 1, .id = TEST_ID };
	const uint64_t text = 0x500000; /* the fixture's code segment, file offset 0x1000 */
	struct nm_symbol add = nm_symbol("build/fixtures/elf_fixture", "fixture_add");
	struct nm_symbol alias = nm_symbol("build/fixtures/elf_fixture", "fixture_a_local_alias");
	bb_mmap2(&b, text, 0x1000, 0x1000, 5 /* PROT_READ | PROT_EXEC */, 2, "build/fixtures/elf_fixture",
		 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &t);
	add_bytes(w, &b);
	bb_free(&b);
	uint64_t in_add = text + (add.address - 0x1000) + add.size / 2;
	uint64_t in_alias = text + (alias.address - 0x1000) + alias.size / 2;
	uint64_t recursion[127], loop[127], deep[127];
	for (size_t i = 0; i < 127; i++) {
		recursion[i] = i ? in_add : in_add + 1;
		loop[i] = i ? in_add : in_alias;
		deep[i] = i % 2 ? in_add : in_alias;
	}
	add_user_chain_sample(w, recursion, 127, 10);
	add_user_chain_sample(w, loop, 127, 11);
	add_user_chain_sample(w, deep, 127, 12);
	add_user_chain_sample(w, deep, 126, 13); /* one short of the limit: whole */
	add_round(w);
	finish_file(w);

	struct profile p;
	cr_assert_eq(load(path, NULL, &p), 0);
	cr_assert_eq(p.stacks.nstacks, 4, "one stack per sample, %zu", p.stacks.nstacks);
	const char *cut = "[unwind: the kernel's frame-pointer walk stops at 127 entries (kernel.perf_event_max_stack)]";
	const uint32_t want_frames[] = { 128, 3, 128, 126 };
	const char *want_last[] = { cut, "[unwind: frame pointer chain repeats a frame to its end]", cut, NULL };
	for (size_t i = 0; i < 4; i++) {
		char text_of[16384];
		stack_text(&p, i, text_of, sizeof(text_of));
		const struct stack *s = &p.stacks.stacks[i];
		cr_expect_eq(s->nframes, want_frames[i], "stack %zu has %u frames: %.300s", i, s->nframes, text_of);
		const struct frame *last = &p.stacks.frames[stack_frames(&p.stacks, s)[s->nframes - 1]];
		if (want_last[i])
			cr_expect_str_eq(last->sym ? last->sym : "", want_last[i], "stack %zu: %.300s", i, text_of);
		else
			cr_expect(!last->synthetic, "stack %zu ends in a made-up frame: %.300s", i, text_of);
	}
	cr_expect_str_eq(p.stacks.frames[stack_frames(&p.stacks, &p.stacks.stacks[0])[5]].sym, "fixture_add");
	cr_expect_eq(p.unwind.complete, 1);
	cr_expect_eq(p.unwind.failures[UNWIND_TOO_DEEP], 2);
	cr_expect_eq(p.unwind.failures[UNWIND_BAD_FRAME], 1);
	profile_free(&p);
	free(path);
}

/*
 * The counted_stack hook: a test double of an analyzer whose sample at
 * LEND_TIME only lends its stack (PATH_STACK_ONLY) and whose other samples
 * count on that stack when they are on its path (the futex collector's
 * entries on their call site's DWARF stack).
 */
#define LEND_TIME 10
struct lend_state {
	uint32_t lent;
	int asked;
};

static void *lend_create(const struct profile *p, int self)
{
	(void)p;
	(void)self;
	struct lend_state *st = xcalloc(1, sizeof(*st));
	st->lent = UINT32_MAX;
	return st;
}

static int lend_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	(void)state;
	(void)p;
	if (s->time == LEND_TIME)
		return PATH_OTHER | PATH_STACK_ONLY;
	return s->time == 13 ? PATH_FUTEX_WAIT : PATH_OTHER;
}

static void lend_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	(void)p;
	struct lend_state *st = state;
	if (s->time == LEND_TIME)
		st->lent = stack;
}

static uint32_t lend_counted_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	(void)stack;
	struct lend_state *st = state;
	st->asked++;
	return st->lent;
}

/* At the end of the load: every key counts on the lender's stack, those read before it too. */
static uint32_t lend_lent_stack(void *state, const struct profile *p, uint32_t stack)
{
	(void)p;
	const struct lend_state *st = state;
	return st->lent == UINT32_MAX ? stack : st->lent;
}

static const struct collector_analyzer lend_analyzer = { .create = lend_create, .path_of = lend_path_of,
							 .sample = lend_sample, .counted_stack = lend_counted_stack,
							 .lent_stack = lend_lent_stack, .destroy = free };
static const struct collector lend_collector = { .name = "cpu", .analyzer = &lend_analyzer };

Test(profile, a_sample_counts_on_the_stack_its_analyzer_names)
{
	char *path;
	struct sp_writer *w = start_file("lend.data", &path);
	add_kernel_sample(w, 0xffffffff81000100ull, LEND_TIME); /* lends its stack, counted nowhere */
	add_kernel_sample(w, 0xffffffff81000200ull, 11);        /* counted on the lent stack */
	add_kernel_sample(w, 0xffffffff81000300ull, 12); /* too */
	add_kernel_sample(w, 0xffffffff81000400ull, 13); /* on another path: keeps its own stack */
	add_round(w);
	finish_file(w);

	static const struct collector *const table[] = { &lend_collector };
	struct profile_options opts = { .collectors = table, .ncollectors = 1 };
	struct profile p;
	char err[256] = "";
	cr_assert_eq(profile_load(path, &opts, &p, err, sizeof(err)), 0, "%s", err);
	const struct lend_state *st = p.collectors[0].state;
	cr_assert_eq(st->asked, 3, "asked of every counted sample, not of the lending one");
	cr_assert_eq(p.stacks.nstacks, 4, "every sample's stack interned");
	cr_assert_eq(p.stacks.stacks[st->lent].count, 2);
	cr_assert_eq(p.stacks.stacks[st->lent].weight, 2);
	for (size_t i = 0; i < p.stacks.nstacks; i++) {
		const struct stack *s = &p.stacks.stacks[i];
		uint64_t want = i == st->lent ? 2 : s->path == PATH_FUTEX_WAIT ? 1 : 0;
		cr_expect_eq(s->count, want, "stack %zu on path %d counts %llu", i, s->path, (unsigned long long)s->count);
	}
	cr_assert_eq(p.collectors[0].samples, 3);
	cr_assert_eq(p.collectors[0].path_samples[PATH_OTHER], 2);
	cr_assert_eq(p.collectors[0].path_samples[PATH_FUTEX_WAIT], 1);
	cr_assert_eq(p.stack_only_samples, 1);
	profile_free(&p);
	free(path);
}

/* Whether stack's last frame before any [unwind: ...] names no function (unnamed) or only from .eh_frame. */
static void stack_end_kind(const struct profile *p, uint32_t stack, bool *unnamed, bool *eh_frame_name)
{
	const struct stack *s = &p->stacks.stacks[stack];
	const uint32_t *frames = stack_frames(&p->stacks, s);
	uint32_t n = s->nframes;
	if (n && frame_is_unwind_stop(&p->stacks.frames[frames[n - 1]]))
		n--;
	const struct frame *last = n ? &p->stacks.frames[frames[n - 1]] : NULL;
	*unnamed = last && (!last->sym || strstr(last->sym, EH_FRAME_NAME_MARK));
	*eh_frame_name = *unnamed && last->sym;
}

/*
 * The lender's stack ends in lender_end, the keys' own stacks in key_end
 * (CODE_START's named fixture or the stripped one at STRIPPED_START):
 * the header's unnamed ends are those of the stacks the samples count on.
 */
#define STRIPPED_START 0x600000ull
static void check_ends_of_lent_stacks(const char *name, bool lender_stripped)
{
	char *path;
	struct sp_writer *w = start_file_with(name, &path, FP_SAMPLE_TYPE);
	struct byte_builder b = { 0 };
	struct trailer t = { .pid = FP_PID, .tid = FP_PID, .time = 1, .id = TEST_ID };
	const uint64_t mmap_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	bb_mmap2(&b, CODE_START, 0x1000, 0x1000, 5 /* PROT_READ | PROT_EXEC */, 2, "build/fixtures/elf_fixture",
		 mmap_type, &t);
	bb_mmap2(&b, STRIPPED_START, 0x1000, 0x1000, 5, 2, "build/fixtures/elf_fixture.stripped", mmap_type, &t);
	add_bytes(w, &b);
	bb_free(&b);
	struct nm_symbol add = nm_symbol("build/fixtures/elf_fixture", "fixture_add");
	uint64_t named = CODE_START + (add.address - 0x1000) + add.size / 2;
	uint64_t stripped = STRIPPED_START + (add.address - 0x1000) + add.size / 2;
	uint64_t lender_end = lender_stripped ? stripped : named, key_end = lender_stripped ? named : stripped;
	const uint64_t lender[] = { key_end, lender_end };
	add_user_chain_sample(w, &key_end, 1, LEND_TIME - 1); /* before the lender: lent at the end of the load */
	add_user_chain_sample(w, lender, 2, LEND_TIME);
	add_user_chain_sample(w, &key_end, 1, 11); /* counted on the lender's stack */
	add_user_chain_sample(w, &key_end, 1, 12); /* too */
	add_user_chain_sample(w, &lender_end, 1, 13); /* another path: its own stack */
	add_round(w);
	finish_file(w);

	static const struct collector *const table[] = { &lend_collector };
	struct profile_options opts = { .collectors = table, .ncollectors = 1, .weights = true };
	struct profile p;
	char err[256] = "";
	cr_assert_eq(profile_load(path, &opts, &p, err, sizeof(err)), 0, "%s", err);
	const struct lend_state *st = p.collectors[0].state;
	cr_assert_eq(p.stacks.stacks[st->lent].count, 3, "the keys count on the lender's stack, the first one too");
	cr_assert_eq(p.stacks.stacks[st->lent].weight, 3);
	uint64_t on_lent = 0;
	for (size_t i = 0; i < p.weights->count; i++) {
		const struct weight_entry *e = &p.weights->entries[i];
		if (e->key.stack == st->lent)
			on_lent += e->values[WEIGHT_SAMPLES];
		else
			cr_assert_eq(p.stacks.stacks[e->key.stack].path, PATH_FUTEX_WAIT, "weights left on a key's stack");
	}
	cr_assert_eq(on_lent, 3, "the weights follow the keys: %llu", (unsigned long long)on_lent);
	bool unnamed, eh_frame_name;
	stack_end_kind(&p, st->lent, &unnamed, &eh_frame_name);
	cr_assert_eq(eh_frame_name, lender_stripped, "the lender's stack ends in the stripped fixture's .eh_frame name");
	/* the lender's own sample, counted nowhere, is not in the header's counts */
	cr_assert_eq(p.stack_only_samples, 1);
	uint64_t want_unnamed = 0, want_eh_frame = 0;
	for (uint32_t i = 0; i < p.stacks.nstacks; i++) {
		stack_end_kind(&p, i, &unnamed, &eh_frame_name);
		want_unnamed += p.stacks.stacks[i].count * unnamed;
		want_eh_frame += p.stacks.stacks[i].count * eh_frame_name;
	}
	cr_assert_eq(p.unwind.samples, 4, "the samples counted, not the lender's copy");
	cr_expect_eq(p.unwind.ends_in_unknown, want_unnamed, "the header counts %llu unnamed ends, the stacks %llu",
		     (unsigned long long)p.unwind.ends_in_unknown, (unsigned long long)want_unnamed);
	cr_expect_eq(p.unwind.ends_in_eh_frame_name, want_eh_frame,
		     "the header counts %llu .eh_frame ends, the stacks %llu",
		     (unsigned long long)p.unwind.ends_in_eh_frame_name, (unsigned long long)want_eh_frame);
	profile_free(&p);
	free(path);
}

/*
 * A key counted on a lent stack has that stack's end in the header, not
 * its own: stress-ng's delivery keys whose 512 bytes end in a named libc
 * frame count on stacks that end in its stripped _start.
 */
Test(profile, a_key_counted_on_a_lent_stack_counts_that_stacks_end)
{
	check_ends_of_lent_stacks("lent-stripped.data", true);
	check_ends_of_lent_stacks("lent-named.data", false);
}
