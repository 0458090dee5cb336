/*
 * test_perfdata.c: the perf.data reader (profiler/model/perfdata.c) on real
 * perf.data files recorded by others (tests/fixtures/perfdata/, SOURCES.md
 * there), through the loader as report reads them.
 *
 * The sample counts per event are what perf report --stdio says of the same
 * file (perf 6.1; for the arm64 file, which perf 6.1 cannot read, the count
 * of its SAMPLE records); tests/integration/test_perfdata.c asks perf
 * itself where it is installed.  The files are untrusted input: every
 * fixture is also read cut at every offset, whole records up to the cut and
 * then a clean stop, never a crash (the ASan+UBSan build is the one that
 * matters).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/util.h"
#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/perfdata.h"
#include "sigprof/model/profile.h"
#include "unit_helpers.h"

TEMP_DIR_SUITE(perfdata);

#define FIXTURES "tests/fixtures/perfdata/"

struct expected_event {
	const char *name;
	const char *collector;
	uint64_t samples;
};

struct fixture {
	const char *file;
	const char *arch;
	struct expected_event events[3];
};

static const struct fixture fixtures[] = {
	{ "mem-loads-4.4.data", "x86_64", { { "cpu/mem-loads/pp", "c2c", 14 } } },
	{ "c2c-record-5.4.data", "x86_64",
	  { { "cpu/mem-loads,ldlat=30/P", "c2c", 0 }, { "cpu/mem-stores/P", "c2c", 18 } } },
	{ "llc-3.2.data", "x86_64", { { "LLC-loads-misses", "cache", 9 } } },
	{ "arm64-6.12.data", "aarch64", { { "cycles:Pu", "cpu", 9 } } },
	{ "zstd-pipe-6.5.data", "aarch64", { { "cycles:P", "cpu", 8 } } },
	{ "pipe-6.12.data", "x86_64", { { "cycles:u", "cpu", 9 } } },
	{ "uprobe-tracing-4.9.data", "x86_64", { { "probe_untitled1:main", "events", 1 } } },
	{ "lbr-5.4.data", "x86_64", { { "cycles", "cpu", 29 } } },
	{ "hybrid-5.15.data", "x86_64", { { "cpu_core/cycles:ppp/", "cpu", 7 }, { "dummy:HG", "events", 0 } } },
	{ "kallsyms-tracing-5.18.data", "x86_64", { { "cycles", "cpu", 233 }, { "sched:sched_switch", "sched", 9 } } },
};

static const struct sp_event *event_named(const struct profile *p, const char *name)
{
	for (size_t e = 0; e < p->events.count; e++)
		if (strcmp(p->events.events[e].name, name) == 0)
			return &p->events.events[e];
	return NULL;
}

Test(perfdata, fixtures_read_with_perfs_sample_counts_per_event)
{
	for (size_t f = 0; f < ARRAY_SIZE(fixtures); f++) {
		const struct fixture *fx = &fixtures[f];
		char path[256], err[256];
		snprintf(path, sizeof(path), FIXTURES "%s", fx->file);
		struct profile p;
		cr_assert_eq(profile_load(path, NULL, &p, err, sizeof(err)), 0, "%s: %s", fx->file, err);
		cr_assert_str_eq(p.problem, "", "%s: %s", fx->file, p.problem);
		cr_assert(p.has_finish && (p.finish.flags & SP_FINISH_FOREIGN), "%s", fx->file);
		cr_assert(!p.truncated, "%s", fx->file);
		cr_assert_eq(p.bad_samples, 0, "%s: %llu malformed samples", fx->file, (unsigned long long)p.bad_samples);
		cr_assert_eq(p.unknown_samples, 0, "%s", fx->file);
		cr_assert_str_eq(p.arch, fx->arch, "%s", fx->file);
		cr_assert_eq(profile_exit_status(&p), PROFILE_EXIT_NOT_RECORDED);
		uint64_t all = 0;
		for (size_t k = 0; k < ARRAY_SIZE(fx->events) && fx->events[k].name; k++) {
			const struct expected_event *want = &fx->events[k];
			const struct sp_event *ev = event_named(&p, want->name);
			cr_assert(ev, "%s: no event %s", fx->file, want->name);
			cr_assert_eq(ev->samples, want->samples, "%s: %s has %llu samples, perf says %llu", fx->file,
				     want->name, (unsigned long long)ev->samples, (unsigned long long)want->samples);
			cr_assert_str_eq(ev->collector, want->collector, "%s: %s", fx->file, want->name);
			all += want->samples;
		}
		cr_assert_eq(p.samples, all, "%s", fx->file);
		cr_assert_eq(p.finish.samples, all, "%s", fx->file);
		profile_free(&p);
	}
}

Test(perfdata, feature_sections_fill_the_header)
{
	char err[256];
	struct profile p;
	cr_assert_eq(profile_load(FIXTURES "mem-loads-4.4.data", NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(p.hostname, "server3");
	cr_assert_str_eq(p.kernel, "4.4.0-104-generic");
	cr_assert_eq(p.ncpus, 32);
	cr_assert_gt(p.argc, 2);
	cr_assert_str_eq(p.argv[1], "mem");
	bool said = false;
	for (int i = 0; i < p.nnotes; i++)
		said |= strstr(p.notes[i], "perf.data") && strstr(p.notes[i], "perf 4.4.98");
	cr_assert(said, "no note names the file's origin");
	bool elsewhere = false;
	for (int i = 0; i < p.nnotes; i++)
		elsewhere |= strstr(p.notes[i], "recorded on another machine") && strstr(p.notes[i], "server3") &&
			     strstr(p.notes[i], "Linux 4.4.0-104-generic");
	cr_assert(elsewhere, "no note says the file is another machine's");
	profile_free(&p);
}

Test(perfdata, magic_is_perfs_in_either_byte_order)
{
	cr_assert(perfdata_magic("PERFILE2", 8));
	cr_assert(perfdata_magic("2ELIFREP", 8));
	cr_assert(!perfdata_magic("SIGPROF", 8));
	cr_assert(!perfdata_magic("PERFILE2", 7));
}

Test(perfdata, events_go_to_the_collector_that_owns_them)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT };
	cr_assert_str_eq(perfdata_collector_of(&a, "signal:signal_deliver"), "signal");
	cr_assert_str_eq(perfdata_collector_of(&a, "syscalls:sys_enter_rt_sigreturn"), "signal");
	cr_assert_str_eq(perfdata_collector_of(&a, "syscalls:sys_enter_futex"), "futex");
	cr_assert_str_eq(perfdata_collector_of(&a, "syscalls:sys_enter_read"), "events");
	cr_assert_str_eq(perfdata_collector_of(&a, "sched:sched_switch"), "sched");
	cr_assert_str_eq(perfdata_collector_of(&a, "lock:contention_begin"), "lock");
	struct perf_event_attr hw = { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES,
				      .sample_type = PERF_SAMPLE_DATA_SRC }; /* --call-graph dwarf asks for it */
	cr_assert_str_eq(perfdata_collector_of(&hw, "cycles"), "cpu");
	hw.config = PERF_COUNT_HW_CACHE_MISSES;
	cr_assert_str_eq(perfdata_collector_of(&hw, "cache-misses"), "cache");
	hw.config = PERF_COUNT_HW_INSTRUCTIONS;
	cr_assert_str_eq(perfdata_collector_of(&hw, "instructions"), "events");
	struct perf_event_attr sw = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK };
	cr_assert_str_eq(perfdata_collector_of(&sw, "task-clock"), "cpu");
	struct perf_event_attr mem = { .type = 4, .config = 0x1cd, .sample_type = PERF_SAMPLE_DATA_SRC };
	cr_assert_str_eq(perfdata_collector_of(&mem, "cpu/mem-loads,ldlat=30/P"), "c2c");
}

/* The records (other than META) the reader gives for the file at path, and the problem it stopped at. */
static size_t count_records(const char *path, char *problem, size_t problemlen, int *open_ret)
{
	struct sp_reader *r;
	char err[256];
	problem[0] = '\0';
	*open_ret = sp_reader_open(path, &r, err, sizeof(err));
	if (*open_ret < 0) {
		snprintf(problem, problemlen, "%s", err);
		return 0;
	}
	size_t n = 0;
	const struct perf_event_header *rec;
	while (sp_reader_next(r, &rec) == 1) {
		cr_assert_geq(rec->size, sizeof(*rec));
		n += rec->type != SP_REC_META; /* a cut file may say so in one more */
	}
	if (sp_reader_problem(r))
		snprintf(problem, problemlen, "%s", sp_reader_problem(r));
	sp_reader_close(r);
	return n;
}

/*
 * Cut at every offset: a file mode file is refused (its header's sections
 * point past the end) or read up to its cut, a pipe file reads the records
 * before the cut and stops with a reason; every 61st cut also goes through
 * the whole loader.
 */
Test(perfdata, fixtures_cut_at_every_offset_read_up_to_the_cut, .timeout = 600)
{
	static const char *const files[] = { "pipe-6.12.data", "arm64-6.12.data", "zstd-pipe-6.5.data" };
	static const size_t strides[] = { 1, 1, 7 }; /* the zstd file: every 7th offset (its records are in 4 frames) */
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		char path[256], problem[256];
		snprintf(path, sizeof(path), FIXTURES "%s", files[f]);
		size_t size;
		unsigned char *whole = read_file(path, &size);
		int ret;
		size_t all = count_records(path, problem, sizeof(problem), &ret);
		cr_assert_eq(ret, 0, "%s: %s", files[f], problem);
		cr_assert_str_eq(problem, "", "%s whole: %s", files[f], problem);
		char *cut = path_join(dir, "cut.data");
		for (size_t len = 0; len < size; len += strides[f]) {
			write_file(cut, whole, len);
			size_t n = count_records(cut, problem, sizeof(problem), &ret);
			cr_assert_leq(n, all, "%s cut at %zu", files[f], len);
			/* pipe mode has nothing after its records: a cut is always seen */
			if (ret == 0 && strstr(files[f], "pipe"))
				cr_assert(problem[0] || n < all, "%s cut at %zu reads as whole", files[f], len);
			if (len % (61 * strides[f]) == 0) {
				struct profile p;
				char err[256];
				if (profile_load(cut, NULL, &p, err, sizeof(err)) == 0)
					cr_assert(!p.has_finish || !p.truncated);
				profile_free(&p);
			}
		}
		free(cut);
		free(whole);
	}
}

/* A perf.data header whose sections point anywhere: one error line, never a crash. */
Test(perfdata, corrupt_headers_are_refused_with_a_reason)
{
	size_t size;
	unsigned char *whole = read_file(FIXTURES "llc-3.2.data", &size);
	char *path = path_join(dir, "bad.data");
	/* attr_size, the attrs section, the data section, the event types: each field set to a hostile value */
	static const uint64_t values[] = { 0, 1, 7, 64, 4096, 1ull << 40, UINT64_MAX, UINT64_MAX - 7 };
	for (size_t field = 1; field < 13; field++) {
		for (size_t v = 0; v < ARRAY_SIZE(values); v++) {
			unsigned char *copy = xmalloc(size);
			memcpy(copy, whole, size);
			memcpy(copy + 8 * field, &values[v], 8);
			write_file(path, copy, size);
			free(copy);
			struct profile p;
			char err[256] = "";
			if (profile_load(path, NULL, &p, err, sizeof(err)) != 0)
				cr_assert(err[0], "field %zu = %#llx: no reason", field, (unsigned long long)values[v]);
			profile_free(&p);
		}
	}
	free(path);
	free(whole);
}

/* --input-format: either by magic, or only the one named, the other refused with what was expected. */
Test(perfdata, input_format_takes_only_the_format_named)
{
	enum sp_input_format format;
	cr_assert_eq(sp_input_format_parse("perf", &format), 0);
	cr_assert_eq(format, SP_INPUT_PERF);
	cr_assert_eq(sp_input_format_parse("sigprof", &format), 0);
	cr_assert_eq(format, SP_INPUT_SIGPROF);
	cr_assert_eq(sp_input_format_parse("auto", &format), 0);
	cr_assert_eq(format, SP_INPUT_AUTO);
	cr_assert_eq(sp_input_format_parse("perf.data", &format), -EINVAL);
	struct sp_reader *r;
	char err[256];
	cr_assert_eq(sp_reader_open_format(FIXTURES "pipe-6.12.data", SP_INPUT_PERF, &r, err, sizeof(err)), 0, "%s", err);
	sp_reader_close(r);
	cr_assert_eq(sp_reader_open_format(FIXTURES "pipe-6.12.data", SP_INPUT_SIGPROF, &r, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "perf.data"), "%s", err);
	char *own = path_join(dir, "own.data");
	struct sp_writer *w;
	cr_assert_eq(sp_writer_create(own, &w), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	cr_assert_eq(sp_reader_open_format(own, SP_INPUT_PERF, &r, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not a perf.data file"), "%s", err);
	cr_assert_eq(sp_reader_open_format(own, SP_INPUT_SIGPROF, &r, err, sizeof(err)), 0, "%s", err);
	sp_reader_close(r);
	free(own);
}

/*
 * Kernel frames of a perf.data: named from the copy of kallsyms in its
 * tracing data when it holds one (the fixture's table names each address
 * recorded_kernel_<start>), never from this machine's /proc/kallsyms; the
 * header says which was used.
 */
Test(perfdata, kernel_frames_named_from_the_tracing_datas_kallsyms_only)
{
	char err[256];
	struct profile p;
	cr_assert_eq(profile_load(FIXTURES "kallsyms-tracing-5.18.data", NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(p.kernel_symbols, "tracing data"), "kernel symbols from '%s'", p.kernel_symbols);
	size_t kernel = 0;
	for (size_t i = 0; i < p.stacks.nframes; i++) {
		const struct frame *f = &p.stacks.frames[i];
		if (!f->kernel || f->synthetic)
			continue;
		kernel++;
		cr_assert(f->sym && strncmp(f->sym, "recorded_kernel_", 16) == 0, "kernel frame %s+%#llx",
			  f->sym ? f->sym : "(none)", (unsigned long long)f->addr);
		cr_assert_eq(strtoull(f->sym + 16, NULL, 16), f->addr, "%s starts at %#llx", f->sym,
			     (unsigned long long)f->addr);
	}
	cr_assert_gt(kernel, 50, "only %zu kernel frames", kernel);
	profile_free(&p);
	/* a file without a copy: addresses, whatever this machine's table would say */
	cr_assert_eq(profile_load(FIXTURES "mem-loads-4.4.data", NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(p.kernel_symbols, "none");
	for (size_t i = 0; i < p.stacks.nframes; i++)
		cr_assert(!p.stacks.frames[i].kernel || !p.stacks.frames[i].sym || p.stacks.frames[i].synthetic,
			  "kernel frame named %s", p.stacks.frames[i].sym);
	profile_free(&p);
}
