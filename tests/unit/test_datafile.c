/*
 * test_datafile.c: the sigprof.data container (profiler/model/datafile.c,
 * docs/data-format.md).
 *
 * Files are written with sp_writer_* into a temporary directory and read
 * back with sp_reader_*; the expected records are laid out independently
 * from the specification, and the header of the bad files is written by
 * hand.  Truncation is tried at every byte offset of a small file, and a
 * file of several MiB makes the reader refill its buffer with records that
 * straddle the refill points.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

#define HEADER_SIZE 64 /* the specification's header size */

TEMP_DIR_SUITE(datafile);

/* The header as the specification's table lays it out. */
static void build_file_header(struct byte_builder *b, const char *magic, uint32_t version, uint32_t header_size,
			      uint32_t byte_order)
{
	char m[8] = { 0 };
	memcpy(m, magic, strnlen(magic, 8));
	bb_bytes(b, m, 8);
	bb_u32(b, version);
	bb_u32(b, header_size);
	bb_u32(b, byte_order);
	bb_u32(b, 0);
	bb_zeros(b, 40);
}

/* A META record per the specification: u32 count, then NUL-terminated strings padded to 8. */
static void build_meta(struct byte_builder *b, const char *key, const char *const *values, uint32_t n)
{
	size_t at = bb_begin_record(b, SP_REC_META, 0);
	bb_u32(b, n + 1);
	bb_bytes(b, key, strlen(key) + 1);
	for (uint32_t i = 0; i < n; i++)
		bb_bytes(b, values[i], strlen(values[i]) + 1);
	bb_pad8(b);
	bb_end_record(b, at);
}

static void build_event(struct byte_builder *b, const char *name, const char *collector,
			const struct perf_event_attr *attr, const uint64_t *ids, uint32_t n)
{
	size_t at = bb_begin_record(b, SP_REC_EVENT, 0);
	bb_u32(b, attr->size);
	bb_u32(b, n);
	char fixed[SP_EVENT_NAME_LEN] = { 0 };
	snprintf(fixed, sizeof(fixed), "%s", name);
	bb_bytes(b, fixed, SP_EVENT_NAME_LEN);
	char coll[SP_COLLECTOR_NAME_LEN] = { 0 };
	snprintf(coll, sizeof(coll), "%s", collector);
	bb_bytes(b, coll, SP_COLLECTOR_NAME_LEN);
	bb_bytes(b, attr, attr->size);
	bb_pad8(b);
	for (uint32_t i = 0; i < n; i++)
		bb_u64(b, ids[i]);
	bb_end_record(b, at);
}

/* A kernel-like record of the given size whose bytes depend on seq. */
static void build_record(struct byte_builder *b, uint32_t type, uint16_t size, uint32_t seq)
{
	size_t at = bb_begin_record(b, type, (uint16_t)seq);
	for (size_t i = 8; i < size; i++) {
		unsigned char c = (unsigned char)(seq * 13 + i);
		bb_bytes(b, &c, 1);
	}
	bb_end_record(b, at);
}

/* Every record of path, concatenated; the reader's problem (or NULL) copied into problem. */
static void read_all(const char *path, struct byte_builder *out, unsigned *count, char *problem, size_t plen)
{
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(path, &r, err, sizeof(err)), 0, "open %s: %s", path, err);
	const struct perf_event_header *h;
	uint64_t expect_offset = HEADER_SIZE;
	*count = 0;
	int ret;
	while ((ret = sp_reader_next(r, &h)) == 1) {
		cr_assert_eq(sp_reader_offset(r), expect_offset);
		cr_assert(h->size >= 8 && h->size % 8 == 0);
		bb_bytes(out, h, h->size);
		expect_offset += h->size;
		(*count)++;
	}
	cr_assert_eq(ret, 0);
	const char *p = sp_reader_problem(r);
	snprintf(problem, plen, "%s", p ? p : "");
	sp_reader_close(r);
}

/*
 * The standard test file, written with the writer (compressed at zstd_level
 * unless 0); the same records built by hand in *expect, after the header of
 * a version 1 file.
 */
static void write_sample_file_at(const char *path, int zstd_level, struct byte_builder *expect)
{
	const char *argv_values[] = { "./workload", "--flag", "an argument with spaces", "" };
	const char *host[] = { "testhost" };
	const char *status[] = { "cpu", "ok", "" };
	struct perf_event_attr attr = cpu_clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	uint64_t ids[] = { 101, 102, 103 };

	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create_compressed(path, zstd_level, &w), 0);
	build_file_header(expect, SP_MAGIC, SP_VERSION_PLAIN, HEADER_SIZE, SP_BYTE_ORDER);
	cr_assert_eq(sp_writer_bytes(w), HEADER_SIZE);

	cr_assert_eq(sp_writer_event(w, "cpu-clock", "cpu", &attr, ids, 3), 0);
	build_event(expect, "cpu-clock", "cpu", &attr, ids, 3);
	cr_assert_eq(sp_writer_meta(w, "argv", argv_values, 4), 0);
	build_meta(expect, "argv", argv_values, 4);
	cr_assert_eq(sp_writer_meta(w, "hostname", host, 1), 0);
	build_meta(expect, "hostname", host, 1);
	cr_assert_eq(sp_writer_meta(w, "collector_status", status, 3), 0);
	build_meta(expect, "collector_status", status, 3);
	cr_assert_eq(sp_writer_meta(w, "nothing", NULL, 0), 0);
	build_meta(expect, "nothing", NULL, 0);

	/* kernel records, as a ring buffer chunk */
	struct byte_builder chunk = { 0 };
	build_record(&chunk, PERF_RECORD_SAMPLE, 40, 1);
	build_record(&chunk, PERF_RECORD_MMAP2, 96, 2);
	build_record(&chunk, PERF_RECORD_SAMPLE, 8, 3);
	cr_assert_eq(sp_writer_raw(w, chunk.buf, chunk.len), 0);
	bb_bytes(expect, chunk.buf, chunk.len);
	bb_free(&chunk);
	cr_assert_eq(sp_writer_flush(w), 0);

	struct sp_totals_record totals;
	memset(&totals, 0, sizeof(totals));
	totals.header.type = SP_REC_TOTALS;
	totals.header.size = sizeof(totals);
	totals.event_index = 0;
	totals.value = 123456789;
	totals.time_enabled = 2000;
	totals.time_running = 1500;
	cr_assert_eq(sp_writer_record(w, &totals), 0);
	bb_bytes(expect, &totals, sizeof(totals));

	struct sp_finish_record fin;
	memset(&fin, 0, sizeof(fin));
	fin.header.type = SP_REC_FINISH;
	fin.header.size = sizeof(fin);
	fin.duration_ns = 5555;
	fin.wait_status = 3 << 8;
	fin.kernel_records = 3;
	fin.samples = 2;
	fin.data_bytes = 144;
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	bb_bytes(expect, &fin, sizeof(fin));
	cr_assert_eq(sp_writer_bytes(w), expect->len);
	cr_assert_eq(sp_writer_close(w), 0);
}

static void write_sample_file(const char *path, struct byte_builder *expect)
{
	write_sample_file_at(path, 0, expect);
}

Test(datafile, written_file_is_the_specified_bytes_and_reads_back_record_by_record)
{
	char *path = path_join(dir, "t.data");
	struct byte_builder expect = { 0 };
	write_sample_file(path, &expect);

	size_t n;
	unsigned char *file = read_file(path, &n);
	cr_assert_eq(n, expect.len);
	cr_assert_arr_eq(file, expect.buf, n, "the file is exactly the specified layout");
	free(file);

	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(path, &r, err, sizeof(err)), 0, "%s", err);
	const struct perf_event_header *h;
	uint32_t types[] = { SP_REC_EVENT, SP_REC_META, SP_REC_META, SP_REC_META, SP_REC_META, PERF_RECORD_SAMPLE,
			     PERF_RECORD_MMAP2, PERF_RECORD_SAMPLE, SP_REC_TOTALS, SP_REC_FINISH };
	size_t off = HEADER_SIZE;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		cr_assert_eq(sp_reader_next(r, &h), 1, "record %zu", i);
		cr_assert_eq(h->type, types[i], "record %zu", i);
		cr_assert_eq(sp_reader_offset(r), off);
		cr_assert_arr_eq(h, expect.buf + off, h->size);
		if (i == 0) {
			const struct sp_event_record *ev = (const void *)h;
			cr_assert_str_eq(ev->name, "cpu-clock");
			cr_assert_str_eq(ev->collector, "cpu");
			cr_assert_eq(ev->nr_ids, 3);
		}
		if (i == 8)
			cr_assert_eq(((const struct sp_totals_record *)h)->value, 123456789);
		if (i == 9)
			cr_assert_eq(((const struct sp_finish_record *)h)->wait_status, 3 << 8);
		off += h->size;
	}
	cr_assert_eq(sp_reader_next(r, &h), 0, "the end");
	cr_assert_eq(sp_reader_next(r, &h), 0, "still the end");
	cr_assert_null(sp_reader_problem(r));
	sp_reader_close(r);
	bb_free(&expect);
	free(path);
}

Test(datafile, meta_strings)
{
	char *path = path_join(dir, "m.data");
	struct byte_builder expect = { 0 };
	write_sample_file(path, &expect);
	bb_free(&expect);

	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(path, &r, err, sizeof(err)), 0, "%s", err);
	const struct perf_event_header *h;
	cr_assert_eq(sp_reader_next(r, &h), 1); /* EVENT */
	cr_assert_eq(sp_reader_next(r, &h), 1); /* argv */
	const char *s[8];
	cr_assert_eq(sp_meta_strings(h, s, 8), 5);
	cr_assert_str_eq(s[0], "argv");
	cr_assert_str_eq(s[1], "./workload");
	cr_assert_str_eq(s[2], "--flag");
	cr_assert_str_eq(s[3], "an argument with spaces");
	cr_assert_str_eq(s[4], "");
	const char *two[2] = { NULL, NULL };
	cr_assert_eq(sp_meta_strings(h, two, 2), 5, "the count, even past max");
	cr_assert_str_eq(two[1], "./workload");
	cr_assert_eq(sp_meta_strings(h, NULL, 0), 5);
	cr_assert_eq(sp_reader_next(r, &h), 1); /* hostname */
	cr_assert_eq(sp_meta_strings(h, s, 8), 2);
	cr_assert_str_eq(s[0], "hostname");
	cr_assert_str_eq(s[1], "testhost");
	cr_assert_eq(sp_reader_next(r, &h), 1); /* collector_status */
	cr_assert_eq(sp_meta_strings(h, s, 8), 4);
	cr_assert_str_eq(s[3], "");
	cr_assert_eq(sp_reader_next(r, &h), 1); /* a key without values */
	cr_assert_eq(sp_meta_strings(h, s, 8), 1);
	cr_assert_str_eq(s[0], "nothing");
	sp_reader_close(r);
	free(path);
}

Test(datafile, meta_strings_of_malformed_records_stay_inside_them)
{
	/* a count larger than the strings present, and a last string without its NUL */
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, SP_REC_META, 0);
	bb_u32(&b, 10);
	bb_bytes(&b, "key\0val\0abcd", 12); /* 8 + 4 + 12 = 24: no padding, so "abcd" has no NUL */
	bb_end_record(&b, at);
	cr_assert_eq(b.len, 24);
	void *rec = exact_copy(b.buf, b.len);
	const char *s[10];
	cr_assert_eq(sp_meta_strings(rec, s, 10), 2);
	cr_assert_str_eq(s[0], "key");
	cr_assert_str_eq(s[1], "val");
	free(rec);
	bb_free(&b);

	/* a record too short for its count */
	at = bb_begin_record(&b, SP_REC_META, 0);
	bb_end_record(&b, at);
	rec = exact_copy(b.buf, b.len);
	cr_assert_eq(sp_meta_strings(rec, s, 10), 0);
	free(rec);
	bb_free(&b);
}

Test(datafile, meta_too_large_is_e2big)
{
	char *path = path_join(dir, "big-meta.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	char *huge = malloc(70000);
	memset(huge, 'x', 69999);
	huge[69999] = '\0';
	const char *values[] = { huge };
	cr_assert_eq(sp_writer_meta(w, "k", values, 1), -E2BIG);
	free(huge);
	cr_assert_eq(sp_writer_close(w), 0);
	free(path);
}

Test(datafile, existing_file_becomes_old_and_the_new_one_is_private)
{
	char *path = path_join(dir, "r.data");
	char *old = path_join(dir, "r.data.old");
	write_file(path, "previous recording", 18);
	chmod(path, 0644);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	cr_assert_eq(sp_writer_close(w), 0);

	size_t n;
	unsigned char *prev = read_file(old, &n);
	cr_assert_eq(n, 18);
	cr_assert_arr_eq(prev, "previous recording", 18);
	free(prev);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", (unsigned)(st.st_mode & 07777));
	cr_assert_eq(st.st_size, HEADER_SIZE);

	/* a second time: the .old is replaced by the previous new file */
	cr_assert_eq(sp_writer_create(path, &w), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	cr_assert_eq(stat(old, &st), 0);
	cr_assert_eq(st.st_size, HEADER_SIZE);
	free(path);
	free(old);
}

/* Two runs to one name: the later one refuses while the first still writes, and replaces it once it is closed. */
Test(datafile, a_file_still_being_written_is_not_replaced)
{
	char *path = path_join(dir, "same.data");
	char *old = path_join(dir, "same.data.old");
	struct sp_writer *first = NULL, *second = NULL, *third = NULL;
	cr_assert_eq(sp_writer_create(path, &first), 0);
	/* created but not yet published: nothing at the name to protect */
	cr_assert_eq(sp_writer_create(path, &second), 0);
	cr_assert_eq(sp_writer_publish(first), 0);
	cr_assert_eq(sp_writer_publish(second), -EBUSY, "the second replaced a file still being written");
	sp_writer_discard(second);
	cr_assert_eq(sp_writer_create(path, &third), -EBUSY, "the name is refused from the start too");
	struct stat st;
	cr_assert_eq(stat(old, &st), -1, "nothing moved to .old");
	cr_assert_eq(sp_writer_close(first), 0);
	/* the first is whole and closed: a new run replaces it as ever */
	cr_assert_eq(sp_writer_create(path, &third), 0);
	cr_assert_eq(sp_writer_close(third), 0);
	cr_assert_eq(stat(old, &st), 0);
	free(path);
	free(old);
}

Test(datafile, writer_create_in_a_missing_directory_fails)
{
	char *path = path_join(dir, "no/such/dir/x.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), -ENOENT);
	free(path);
}

/* Open a file holding bytes; expect failure with ret and a message containing want. */
static void expect_open_error(const char *name, const void *bytes, size_t n, int ret, const char *want)
{
	char *path = path_join(dir, name);
	write_file(path, bytes, n);
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(path, &r, err, sizeof(err)), ret, "%s: %s", name, err);
	cr_assert_null(r);
	cr_assert(strstr(err, want) != NULL, "%s: message '%s' should say '%s'", name, err, want);
	cr_assert_null(strstr(err, path), "the message does not repeat the file name");
	free(path);
}

Test(datafile, bad_files_are_errors_with_a_reason)
{
	expect_open_error("empty", "", 0, -EINVAL, "empty file, not a sigprof recording");
	expect_open_error("ten", "SIGPROF\0\1\0", 10, -EINVAL, "too short");

	struct byte_builder b = { 0 };
	build_file_header(&b, "NOTMINE", SP_VERSION, HEADER_SIZE, SP_BYTE_ORDER);
	expect_open_error("magic", b.buf, b.len, -EINVAL, "not a sigprof data file (bad magic)");
	bb_free(&b);

	build_file_header(&b, "PERFILE2", SP_VERSION, HEADER_SIZE, SP_BYTE_ORDER);
	bb_zeros(&b, 64);
	expect_open_error("perf", b.buf, b.len, -EINVAL, "perf.data");
	bb_free(&b);

	build_file_header(&b, SP_MAGIC, SP_VERSION, HEADER_SIZE, __builtin_bswap32(SP_BYTE_ORDER));
	expect_open_error("swapped", b.buf, b.len, -EINVAL, "recorded on a machine of the other byte order");
	bb_free(&b);

	build_file_header(&b, SP_MAGIC, SP_VERSION + 1, HEADER_SIZE, SP_BYTE_ORDER);
	char want[128];
	snprintf(want, sizeof(want), "format version %u is newer than this sigprof reads (%u)", SP_VERSION + 1,
		 SP_VERSION);
	expect_open_error("future", b.buf, b.len, -EINVAL, want);
	bb_free(&b);

	build_file_header(&b, SP_MAGIC, 0, HEADER_SIZE, SP_BYTE_ORDER);
	expect_open_error("version0", b.buf, b.len, -EINVAL, "format version 0");
	bb_free(&b);

	build_file_header(&b, SP_MAGIC, SP_VERSION, 60, SP_BYTE_ORDER);
	expect_open_error("small-header", b.buf, b.len, -EINVAL, "corrupt file header");
	bb_free(&b);

	build_file_header(&b, SP_MAGIC, SP_VERSION, 128, SP_BYTE_ORDER);
	expect_open_error("short-of-header", b.buf, b.len, -EINVAL, "too short");
	bb_free(&b);
}

Test(datafile, directory_and_missing_file_are_errors)
{
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(dir, &r, err, sizeof(err)), -EISDIR);
	cr_assert(strstr(err, "directory") != NULL, "%s", err);
	cr_assert_null(r);

	char *missing = path_join(dir, "missing.data");
	err[0] = '\0';
	cr_assert_eq(sp_reader_open(missing, &r, err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, strerror(ENOENT));
	cr_assert_null(r);
	free(missing);
}

Test(datafile, a_larger_header_is_skipped)
{
	/* a later version 1 writer may grow the header; records start at header_size */
	struct byte_builder b = { 0 };
	build_file_header(&b, SP_MAGIC, SP_VERSION, 128, SP_BYTE_ORDER);
	bb_zeros(&b, 64);
	build_record(&b, PERF_RECORD_SAMPLE, 24, 9);
	char *path = path_join(dir, "wide.data");
	write_file(path, b.buf, b.len);
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(path, &r, err, sizeof(err)), 0, "%s", err);
	const struct perf_event_header *h;
	cr_assert_eq(sp_reader_next(r, &h), 1);
	cr_assert_eq(sp_reader_offset(r), 128);
	cr_assert_arr_eq(h, b.buf + 128, 24);
	cr_assert_eq(sp_reader_next(r, &h), 0);
	cr_assert_null(sp_reader_problem(r));
	sp_reader_close(r);
	bb_free(&b);
	free(path);
}

Test(datafile, file_cut_at_every_offset_reads_whole_records_then_stops)
{
	char *full = path_join(dir, "full.data");
	struct byte_builder expect = { 0 };
	write_sample_file(full, &expect);

	/* where each record ends */
	size_t ends[64], nends = 0;
	for (size_t off = HEADER_SIZE; off < expect.len;) {
		uint16_t size;
		memcpy(&size, expect.buf + off + 6, 2);
		off += size;
		ends[nends++] = off;
	}
	cr_assert_eq(ends[nends - 1], expect.len);

	char *cut = path_join(dir, "cut.data");
	for (size_t len = 0; len <= expect.len; len++) {
		write_file(cut, expect.buf, len);
		if (len < HEADER_SIZE) {
			struct sp_reader *r = NULL;
			char err[256] = "";
			cr_assert_eq(sp_reader_open(cut, &r, err, sizeof(err)), -EINVAL, "cut at %zu", len);
			const char *want = len ? "too short" : "empty file, not a sigprof recording";
			cr_assert(strstr(err, want) != NULL, "cut at %zu: '%s'", len, err);
			cr_assert_null(r);
			continue;
		}
		struct byte_builder got = { 0 };
		unsigned count;
		char problem[256];
		read_all(cut, &got, &count, problem, sizeof(problem));
		size_t whole = 0, last_end = HEADER_SIZE;
		for (size_t i = 0; i < nends && ends[i] <= len; i++) {
			whole++;
			last_end = ends[i];
		}
		cr_assert_eq(count, whole, "cut at %zu", len);
		cr_assert_eq(got.len, last_end - HEADER_SIZE);
		if (got.len)
			cr_assert_arr_eq(got.buf, expect.buf + HEADER_SIZE, got.len);
		if (len == last_end) {
			cr_assert_str_eq(problem, "", "cut at a record boundary (%zu) is a clean end", len);
		} else {
			char want[96];
			snprintf(want, sizeof(want), "partial record at offset %zu", last_end);
			cr_assert(strstr(problem, want) != NULL, "cut at %zu: '%s'", len, problem);
		}
		bb_free(&got);
	}
	bb_free(&expect);
	free(cut);
	free(full);
}

Test(datafile, record_of_size_0_or_not_a_multiple_of_8_is_corrupt)
{
	uint16_t bad_sizes[] = { 0, 4, 7, 12, 33 };
	for (size_t i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		struct byte_builder b = { 0 };
		build_file_header(&b, SP_MAGIC, SP_VERSION, HEADER_SIZE, SP_BYTE_ORDER);
		build_record(&b, PERF_RECORD_SAMPLE, 32, 1);
		build_record(&b, PERF_RECORD_COMM, 16, 2);
		size_t bad_at = b.len;
		struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = bad_sizes[i] };
		bb_bytes(&b, &bad, sizeof(bad));
		bb_zeros(&b, 64);
		build_record(&b, PERF_RECORD_SAMPLE, 32, 3); /* never reached */
		char *path = path_join(dir, "corrupt.data");
		write_file(path, b.buf, b.len);

		struct byte_builder got = { 0 };
		unsigned count;
		char problem[256];
		read_all(path, &got, &count, problem, sizeof(problem));
		cr_assert_eq(count, 2, "the records before it are read");
		cr_assert_arr_eq(got.buf, b.buf + HEADER_SIZE, 48);
		char want[96];
		snprintf(want, sizeof(want), "corrupt record at offset %zu (size %u)", bad_at, bad_sizes[i]);
		cr_assert_str_eq(problem, want);
		bb_free(&got);
		bb_free(&b);
		free(path);
	}
}

/* A pseudo-random record size in [8, 65528], a multiple of 8, often large. */
static uint16_t next_size(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	uint32_t r = *state >> 8;
	if (r % 3 == 0)
		return (uint16_t)(65528 - 8 * (r % 64));
	return (uint16_t)(8 * (1 + r % 2000));
}

/*
 * Sample records of random sizes, written one by one until out (the same
 * bytes) holds until bytes; with flushes, a flush now and then (compressed:
 * chunks of many sizes, and full ones between).
 */
static void write_samples(struct sp_writer *w, struct byte_builder *out, size_t until, bool flushes)
{
	uint32_t state = 11, seq = 0;
	while (out->len < until) {
		struct byte_builder rec = { 0 };
		build_record(&rec, PERF_RECORD_SAMPLE, next_size(&state), seq++);
		cr_assert_eq(sp_writer_record(w, rec.buf), 0);
		bb_bytes(out, rec.buf, rec.len);
		bb_free(&rec);
		if (flushes && seq % 7 == 0 && seq / 100 % 2)
			cr_assert_eq(sp_writer_flush(w), 0);
	}
}

/*
 * Several MiB of records, one by one and in chunks larger than the writer's
 * buffer, written synchronously or through the writer thread with a queue
 * of queue_bytes (0: synchronous), then read back byte for byte.
 */
static void large_file_round_trip_at(const char *name, size_t queue_bytes, int zstd_level)
{
	char *path = path_join(dir, name);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create_compressed(path, zstd_level, &w), 0);
	if (queue_bytes)
		cr_assert_eq(sp_writer_start_async(w, queue_bytes), 0);
	struct byte_builder expect = { 0 };
	uint32_t state = 7, seq = 0;
	size_t straddles = 0, offset = HEADER_SIZE; /* file offset of the next record */
	/* records one by one, and every 50th time a chunk of whole records larger than the writer's 1 MiB buffer */
	for (unsigned round = 0; offset < (5u << 20); round++) {
		struct byte_builder chunk = { 0 };
		size_t target = round % 50 == 49 ? (3u << 19) : 1;
		while (chunk.len < target) {
			uint16_t size = next_size(&state);
			build_record(&chunk, seq % 2 ? PERF_RECORD_SAMPLE : PERF_RECORD_MMAP2, size, seq);
			if (offset >> 20 != (offset + size - 1) >> 20)
				straddles++;
			offset += size;
			seq++;
		}
		if (target == 1)
			cr_assert_eq(sp_writer_record(w, chunk.buf), 0);
		else
			cr_assert_eq(sp_writer_raw(w, chunk.buf, chunk.len), 0);
		bb_bytes(&expect, chunk.buf, chunk.len);
		bb_free(&chunk);
		if (round % 97 == 0)
			cr_assert_eq(sp_writer_flush(w), 0); /* the drain loop's partial hand-offs */
	}
	cr_assert_eq(sp_writer_bytes(w), HEADER_SIZE + expect.len);
	cr_assert_eq(sp_writer_close(w), 0);
	cr_assert_geq(straddles, 4, "records straddle MiB boundaries (%zu)", straddles);

	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	if (zstd_level)
		cr_assert_lt((size_t)st.st_size, (HEADER_SIZE + expect.len) / 2, "the records compress");
	else
		cr_assert_eq((size_t)st.st_size, HEADER_SIZE + expect.len);

	struct byte_builder got = { 0 };
	unsigned count;
	char problem[256];
	read_all(path, &got, &count, problem, sizeof(problem));
	cr_assert_str_eq(problem, "");
	cr_assert_eq(count, seq);
	cr_assert_eq(got.len, expect.len);
	cr_assert(memcmp(got.buf, expect.buf, expect.len) == 0, "every record byte-identical");
	bb_free(&got);
	bb_free(&expect);
	free(path);
}

static void large_file_round_trip(const char *name, size_t queue_bytes)
{
	large_file_round_trip_at(name, queue_bytes, 0);
}

Test(datafile, large_file_with_records_across_every_buffer_refill)
{
	large_file_round_trip("large.data", 0);
}

/* Through the writer thread with room for 2 buffers: the caller waits for it and the order holds. */
Test(datafile, large_file_through_the_writer_thread_with_a_small_queue)
{
	large_file_round_trip("async-small.data", 2u << 20);
}

Test(datafile, large_file_through_the_writer_thread_with_a_large_queue)
{
	large_file_round_trip("async-large.data", 64u << 20);
}

/* A write error of the thread (here EFBIG past RLIMIT_FSIZE) comes back from a later call and from close. */
Test(datafile, writer_thread_error_reaches_the_caller)
{
	char *path = path_join(dir, "efbig.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	cr_assert_eq(sp_writer_start_async(w, 4u << 20), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit lim = { .rlim_cur = 1u << 20, .rlim_max = RLIM_INFINITY };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	struct byte_builder chunk = { 0 };
	uint32_t seq = 0;
	while (chunk.len < (64u << 10))
		build_record(&chunk, PERF_RECORD_SAMPLE, 4096, seq++);
	int err = 0;
	for (int i = 0; i < 1000 && !err; i++) /* 64 MiB at most: the error shows long before */
		err = sp_writer_raw(w, chunk.buf, chunk.len);
	cr_assert_eq(err, -EFBIG, "a later call returns the thread's error: %d", err);
	cr_assert_eq(sp_writer_raw(w, chunk.buf, chunk.len), -EFBIG, "the error is sticky");
	cr_assert_eq(sp_writer_close(w), -EFBIG);
	lim.rlim_cur = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &lim);
	bb_free(&chunk);
	free(path);
}

/* The entries of a directory, sorted, joined by spaces: what a writer left behind. */
static char *entries(const char *d)
{
	char *cmd = NULL, *out = NULL;
	size_t cap = 0;
	cr_assert_gt(asprintf(&cmd, "ls -A '%s' | sort | tr '\\n' ' '", d), 0);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (getline(&out, &cap, p) < 0) {
		free(out);
		out = strdup("");
	}
	pclose(p);
	free(cmd);
	return out;
}

/* A fresh directory under the suite's, for a test that checks every entry. */
static char *subdir(const char *name)
{
	char *d = path_join(dir, name);
	cr_assert_eq(mkdir(d, 0700), 0);
	return d;
}

Test(datafile, writer_refuses_what_is_not_a_regular_file_and_opens_nothing_there)
{
	char *d = subdir("refuse");
	char *target = path_join(d, "target"), *link = path_join(d, "link"), *fifo = path_join(d, "fifo");
	char *sub = path_join(d, "sub");
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(mkdir(sub, 0700), 0);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(link, &w), -EEXIST, "a dangling link");
	cr_assert_eq(sp_writer_create(fifo, &w), -EEXIST, "a FIFO");
	cr_assert_eq(sp_writer_create(sub, &w), -EEXIST, "a directory");
	cr_assert_eq(sp_writer_create("/dev/null", &w), -EEXIST, "a device");
	char *slash = path_join(d, "sub/");
	cr_assert_eq(sp_writer_create(slash, &w), -EISDIR, "a path ending in /");
	free(slash);
	write_file(target, "x", 1);
	cr_assert_eq(sp_writer_create(link, &w), -EEXIST, "a link to a file");
	char *ls = entries(d);
	cr_assert_str_eq(ls, "fifo link sub target ");
	free(ls);
	free(target);
	free(link);
	free(fifo);
	free(sub);
	free(d);
}

/* A fresh directory d holding r.data ("previous", *path), and a writer started on r.data. */
static struct sp_writer *start_over_previous(const char *name, char **d, char **path)
{
	*d = subdir(name);
	*path = path_join(*d, "r.data");
	write_file(*path, "previous", 8);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(*path, &w), 0);
	return w;
}

Test(datafile, the_file_takes_its_name_only_when_published)
{
	char *d, *path;
	struct sp_writer *w = start_over_previous("publish", &d, &path);
	/* until published: the previous recording as it was, and one hidden temporary file */
	char *ls = entries(d);
	cr_assert(strncmp(ls, ".r.data.", 8) == 0 && strstr(ls, " r.data ") && !strstr(ls, ".old"), "%s", ls);
	free(ls);
	size_t n;
	unsigned char *prev = read_file(path, &n);
	cr_assert_eq(n, 8);
	free(prev);
	cr_assert_eq(sp_writer_publish(w), 0);
	cr_assert_eq(sp_writer_publish(w), 0, "publishing twice is once");
	ls = entries(d);
	cr_assert_str_eq(ls, "r.data r.data.old ");
	free(ls);
	cr_assert_eq(sp_writer_close(w), 0);
	free(path);
	free(d);
}

Test(datafile, discard_removes_only_its_own_file_and_puts_the_previous_one_back)
{
	/* before publishing: the temporary file goes, nothing else moves */
	char *d, *path;
	struct sp_writer *w = start_over_previous("discard", &d, &path);
	sp_writer_discard(w);
	char *ls = entries(d);
	cr_assert_str_eq(ls, "r.data ");
	free(ls);
	/* after: the new file goes and the previous one is back under its name */
	cr_assert_eq(sp_writer_create(path, &w), 0);
	cr_assert_eq(sp_writer_publish(w), 0);
	sp_writer_discard(w);
	ls = entries(d);
	cr_assert_str_eq(ls, "r.data ");
	free(ls);
	size_t n;
	unsigned char *prev = read_file(path, &n);
	cr_assert_eq(n, 8);
	cr_assert_arr_eq(prev, "previous", 8);
	free(prev);
	/* a file put under the name since publishing is someone else's: left alone */
	cr_assert_eq(sp_writer_create(path, &w), 0);
	cr_assert_eq(sp_writer_publish(w), 0);
	char *other = path_join(d, "other");
	write_file(other, "other", 5);
	cr_assert_eq(rename(other, path), 0);
	sp_writer_discard(w);
	prev = read_file(path, &n);
	cr_assert_eq(n, 5);
	free(prev);
	free(other);
	free(path);
	free(d);
}

Test(datafile, a_write_error_before_publishing_never_replaces_the_previous_file)
{
	char *d, *path;
	struct sp_writer *w = start_over_previous("failing", &d, &path);
	/* the file size limit stands in for a full disk: the next write fails with EFBIG */
	struct rlimit saved, small = { 4096, 4096 };
	getrlimit(RLIMIT_FSIZE, &saved);
	small.rlim_max = saved.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &small);
	char big[8192] = { 0 };
	sp_writer_raw(w, big, sizeof(big));
	cr_assert_neq(sp_writer_flush(w), 0);
	cr_assert_neq(sp_writer_close(w), 0);
	setrlimit(RLIMIT_FSIZE, &saved);
	char *ls = entries(d);
	cr_assert_str_eq(ls, "r.data ");
	free(ls);
	free(path);
	free(d);
}

Test(datafile, a_pipe_writer_and_a_reader_of_stdin)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_from_fd(fds[1], &w), 0);
	const char *v[] = { "x" };
	cr_assert_eq(sp_writer_meta(w, "k", v, 1), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	cr_assert_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open("-", &r, err, sizeof(err)), 0, "%s", err);
	const struct perf_event_header *rec;
	cr_assert_eq(sp_reader_next(r, &rec), 1);
	cr_assert_eq(rec->type, SP_REC_META);
	cr_assert_eq(sp_reader_next(r, &rec), 0);
	cr_assert_null(sp_reader_problem(r));
	sp_reader_close(r);
}

/* ---- version 2: zstd chunks ---- */

/* One chunk of a compressed file as the specification lays it out. */
struct chunk_at {
	size_t offset;       /* of its header in the file */
	size_t end;          /* of its padded frame */
	size_t records_end;  /* in the record stream (offsets as in a version 1 file) once it is read */
};

/* The chunks of a compressed file, walked by the specification's header; the count. */
static size_t walk_chunks(const unsigned char *file, size_t len, struct chunk_at *chunks, size_t max)
{
	uint32_t version, flags;
	memcpy(&version, file + 8, 4);
	memcpy(&flags, file + 20, 4);
	cr_assert_eq(version, 2, "a compressed file is version 2");
	cr_assert_eq(flags, 1, "with the zstd flag");
	size_t n = 0, records_end = HEADER_SIZE;
	for (size_t off = HEADER_SIZE; off < len; n++) {
		cr_assert_lt(n, max);
		uint32_t h[4];
		cr_assert_leq(off + 16, len);
		memcpy(h, file + off, 16);
		cr_assert_eq(h[0], 0x4b4e4843u, "chunk magic at %zu", off);
		cr_assert_eq(h[3], 0, "reserved");
		cr_assert_leq(h[2], 1u << 20, "the writer puts at most 1 MiB in a chunk");
		records_end += h[2];
		chunks[n] = (struct chunk_at){ .offset = off, .end = off + 16 + ALIGN_UP(h[1], 8), .records_end = records_end };
		off = chunks[n].end;
		cr_assert_leq(off, len);
	}
	return n;
}

/* Cut at len: the records read are the prefix of expect (records after a version 1 header) that fits whole. */
static void check_cut(const char *cut, const unsigned char *file, size_t len, const struct byte_builder *expect,
		      size_t readable_end, const char *want_problem)
{
	write_file(cut, file, len);
	struct byte_builder got = { 0 };
	unsigned count;
	char problem[256];
	read_all(cut, &got, &count, problem, sizeof(problem));
	/* the records that end at or before readable_end, walked in the expected stream */
	size_t whole_end = HEADER_SIZE;
	unsigned whole = 0;
	for (size_t off = HEADER_SIZE; off < expect->len; whole++) {
		uint16_t size;
		memcpy(&size, expect->buf + off + 6, 2);
		if (off + size > readable_end)
			break;
		off += size;
		whole_end = off;
	}
	cr_assert_eq(count, whole, "cut at %zu: %u records, want %u", len, count, whole);
	cr_assert_eq(got.len, whole_end - HEADER_SIZE, "cut at %zu", len);
	if (got.len)
		cr_assert(memcmp(got.buf, expect->buf + HEADER_SIZE, got.len) == 0, "cut at %zu: the same bytes", len);
	if (want_problem) {
		cr_assert(strstr(problem, want_problem) != NULL, "cut at %zu: '%s', want '%s'", len, problem,
			  want_problem);
	} else if (whole_end == readable_end) {
		cr_assert_str_eq(problem, "", "cut at %zu, after a whole record: a clean end", len);
	} else {
		char want[96];
		snprintf(want, sizeof(want), "partial record at offset %zu (file cut short)", whole_end);
		cr_assert_str_eq(problem, want, "cut at %zu", len);
	}
	bb_free(&got);
}

Test(datafile, compressed_small_file_is_version_2_and_cut_at_every_offset_reads_whole_chunks)
{
	char *full = path_join(dir, "z.data"), *cut = path_join(dir, "zcut.data");
	struct byte_builder expect = { 0 };
	write_sample_file_at(full, 3, &expect);
	size_t len;
	unsigned char *file = read_file(full, &len);
	struct chunk_at chunks[16];
	size_t n = walk_chunks(file, len, chunks, ARRAY_SIZE(chunks));
	/* the sample file flushes once after its kernel records: two chunks */
	cr_assert_eq(n, 2);
	cr_assert_eq(chunks[n - 1].records_end, expect.len, "the chunks hold every record");

	struct byte_builder all = { 0 };
	unsigned count;
	char problem[256];
	read_all(full, &all, &count, problem, sizeof(problem));
	cr_assert_str_eq(problem, "");
	cr_assert_eq(all.len, expect.len - HEADER_SIZE);
	cr_assert(memcmp(all.buf, expect.buf + HEADER_SIZE, all.len) == 0);
	bb_free(&all);

	for (size_t at = HEADER_SIZE; at <= len; at++) {
		size_t k = 0; /* whole chunks before at */
		while (k < n && chunks[k].end <= at)
			k++;
		size_t readable = k ? chunks[k - 1].records_end : HEADER_SIZE;
		char want[128] = "";
		if (at != (k ? chunks[k - 1].end : HEADER_SIZE))
			snprintf(want, sizeof(want), "chunk at file offset %zu", chunks[k].offset);
		check_cut(cut, file, at, &expect, readable, want[0] ? want : NULL);
	}
	free(file);
	bb_free(&expect);
	free(cut);
	free(full);
}

/* Several MiB through the writer thread: records straddle chunks; cut at every chunk boundary and inside each. */
Test(datafile, compressed_large_file_cut_at_every_chunk_boundary_and_inside_chunks)
{
	large_file_round_trip_at("zlarge.data", 8u << 20, 1);
	/* the same records again, kept this time, to cut */
	char *path = path_join(dir, "zcuts.data"), *cut = path_join(dir, "zcut.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create_compressed(path, 1, &w), 0);
	cr_assert_eq(sp_writer_start_async(w, 4u << 20), 0);
	struct byte_builder expect = { 0 };
	build_file_header(&expect, SP_MAGIC, SP_VERSION_PLAIN, HEADER_SIZE, SP_BYTE_ORDER);
	write_samples(w, &expect, 6u << 20, true);
	cr_assert_eq(sp_writer_close(w), 0);
	size_t len;
	unsigned char *file = read_file(path, &len);
	struct chunk_at chunks[4096];
	size_t n = walk_chunks(file, len, chunks, ARRAY_SIZE(chunks));
	cr_assert_geq(n, 10);
	cr_assert_eq(chunks[n - 1].records_end, expect.len);
	size_t straddling = 0;
	for (size_t k = 0; k < n; k++) {
		size_t start = k ? chunks[k - 1].end : HEADER_SIZE;
		size_t readable = k ? chunks[k - 1].records_end : HEADER_SIZE;
		/* at the boundary before chunk k: every record of the chunks before it */
		check_cut(cut, file, start, &expect, readable, NULL);
		char want[128];
		snprintf(want, sizeof(want), "file cut short in the header of the chunk at file offset %zu", start);
		check_cut(cut, file, start + 9, &expect, readable, want);
		snprintf(want, sizeof(want), "file cut short in the chunk at file offset %zu", start);
		check_cut(cut, file, start + 16, &expect, readable, want);
		check_cut(cut, file, (start + chunks[k].end) / 2, &expect, readable, want);
		check_cut(cut, file, chunks[k].end - 1, &expect, readable, want);
		/* whether a record crosses the end of chunk k */
		size_t off = HEADER_SIZE;
		while (off < chunks[k].records_end) {
			uint16_t size;
			memcpy(&size, expect.buf + off + 6, 2);
			off += size;
		}
		straddling += off != chunks[k].records_end;
	}
	check_cut(cut, file, len, &expect, expect.len, NULL);
	cr_assert_geq(straddling, 1, "records straddle chunks");
	free(file);
	bb_free(&expect);
	free(cut);
	free(path);
}

Test(datafile, compressed_file_with_a_damaged_chunk_reads_the_chunks_before_it)
{
	char *full = path_join(dir, "zd.data"), *bad = path_join(dir, "zbad.data");
	struct byte_builder expect = { 0 };
	write_sample_file_at(full, 1, &expect);
	size_t len;
	unsigned char *file = read_file(full, &len);
	struct chunk_at chunks[16];
	size_t n = walk_chunks(file, len, chunks, ARRAY_SIZE(chunks));
	cr_assert_eq(n, 2);
	char want[128];

	/* a byte of the second frame flipped: its checksum (or its decoding) fails */
	unsigned char *copy = malloc(len);
	memcpy(copy, file, len);
	copy[(chunks[1].offset + 16 + chunks[1].end) / 2] ^= 0x5a;
	snprintf(want, sizeof(want), "corrupt (it does not decompress to its size) chunk at file offset %zu",
		 chunks[1].offset);
	check_cut(bad, copy, len, &expect, chunks[0].records_end, want);

	/* a chunk header that is not one */
	memcpy(copy, file, len);
	copy[chunks[1].offset] = 'X';
	snprintf(want, sizeof(want), "corrupt header of the chunk at file offset %zu", chunks[1].offset);
	check_cut(bad, copy, len, &expect, chunks[0].records_end, want);

	/* a chunk that claims more than a reader holds */
	memcpy(copy, file, len);
	uint32_t huge = (4u << 20) + 8;
	memcpy(copy + chunks[1].offset + 8, &huge, 4);
	check_cut(bad, copy, len, &expect, chunks[0].records_end, want);

	/* a chunk whose frame decompresses to more than its header says */
	memcpy(copy, file, len);
	uint32_t less;
	memcpy(&less, copy + chunks[1].offset + 8, 4);
	less -= 8;
	memcpy(copy + chunks[1].offset + 8, &less, 4);
	snprintf(want, sizeof(want), "corrupt (it does not decompress to its size) chunk at file offset %zu",
		 chunks[1].offset);
	check_cut(bad, copy, len, &expect, chunks[0].records_end, want);

	/* unknown flags in a version 2 header */
	memcpy(copy, file, len);
	copy[20] |= 2;
	write_file(bad, copy, len);
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(bad, &r, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "corrupt file header (unknown flags 0x3)");
	free(copy);
	free(file);
	bb_free(&expect);
	free(bad);
	free(full);
}

Test(datafile, compressed_and_plain_hold_the_same_records_and_levels_out_of_range_are_refused)
{
	char *plain = path_join(dir, "p.data"), *z = path_join(dir, "pz.data");
	struct byte_builder a = { 0 }, b = { 0 };
	write_sample_file_at(plain, 0, &a);
	write_sample_file_at(z, sp_zstd_max_level(), &b);
	struct byte_builder ga = { 0 }, gb = { 0 };
	unsigned ca, cb;
	char pa[256], pb[256];
	read_all(plain, &ga, &ca, pa, sizeof(pa));
	read_all(z, &gb, &cb, pb, sizeof(pb));
	cr_assert_eq(ca, cb);
	cr_assert_eq(ga.len, gb.len);
	cr_assert(memcmp(ga.buf, gb.buf, ga.len) == 0);
	struct sp_reader *r = NULL;
	char err[256];
	cr_assert_eq(sp_reader_open(plain, &r, err, sizeof(err)), 0);
	cr_assert(!sp_reader_compressed(r));
	sp_reader_close(r);
	cr_assert_eq(sp_reader_open(z, &r, err, sizeof(err)), 0);
	cr_assert(sp_reader_compressed(r));
	sp_reader_close(r);

	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create_compressed(z, -1, &w), -EINVAL);
	cr_assert_eq(sp_writer_create_compressed(z, sp_zstd_max_level() + 1, &w), -EINVAL);
	cr_assert_null(w);
	bb_free(&a);
	bb_free(&b);
	bb_free(&ga);
	bb_free(&gb);
	free(plain);
	free(z);
}

/* ---- the watcher and the trailer ---- */

static void append_record(void *ctx, const struct perf_event_header *rec)
{
	bb_bytes(ctx, rec, rec->size);
}

/*
 * The watcher sees every record written after it was set, whole and in
 * order, records split between buffers included; the trailer's records
 * come first from a reader of the file, then the body; without the
 * footer (the last 24 bytes cut) they come last.
 */
/* Every record of path ("-": standard input), with no problem: first's bytes, then second's. */
static void read_in_order(const char *path, const struct byte_builder *first, const struct byte_builder *second)
{
	struct sp_reader *r = NULL;
	char err[256] = "";
	cr_assert_eq(sp_reader_open(path, &r, err, sizeof(err)), 0, "%s", err);
	struct byte_builder got = { 0 };
	const struct perf_event_header *h;
	while (sp_reader_next(r, &h) == 1)
		bb_bytes(&got, h, h->size);
	cr_assert_null(sp_reader_problem(r), "%s", sp_reader_problem(r));
	sp_reader_close(r);
	cr_assert_eq(got.len, first->len + second->len);
	cr_assert(memcmp(got.buf, first->buf, first->len) == 0, "%s: the first part", path);
	cr_assert(memcmp(got.buf + first->len, second->buf, second->len) == 0, "%s: the second part", path);
	bb_free(&got);
}

static void watch_and_trailer_at(const char *name, int zstd_level)
{
	char *path = path_join(dir, name);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create_compressed(path, zstd_level, &w), 0);
	struct byte_builder seen = { 0 }, body = { 0 }, trailer = { 0 };
	sp_writer_watch(w, append_record, &seen);
	cr_assert_eq(sp_writer_start_async(w, 4u << 20), 0);
	write_samples(w, &body, 3u << 20, false);
	cr_assert_eq(sp_writer_begin_trailer(w), 0);
	cr_assert_eq(sp_writer_begin_trailer(w), -EALREADY);
	cr_assert_eq(seen.len, body.len, "the watcher saw %zu of %zu bytes", seen.len, body.len);
	cr_assert(memcmp(seen.buf, body.buf, body.len) == 0, "every record as written");
	for (unsigned i = 0; i < 3; i++) {
		char value[16];
		snprintf(value, sizeof(value), "t%u", i);
		const char *v[] = { value };
		cr_assert_eq(sp_writer_meta(w, "trailer", v, 1), 0);
		build_meta(&trailer, "trailer", v, 1);
	}
	cr_assert_eq(seen.len, body.len, "the watcher sees nothing of the trailer");
	cr_assert_eq(sp_writer_close(w), 0);

	read_in_order(path, &trailer, &body); /* the trailer first */

	/* read front to back (a pipe): the body, the trailer's records last, and the footer ends it cleanly */
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	int saved = dup(STDIN_FILENO);
	cr_assert_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t cat = fork();
	cr_assert_geq(cat, 0);
	if (cat == 0) {
		close(fds[0]);
		char buf[65536];
		ssize_t n;
		while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
			if (write(fds[1], buf, (size_t)n) != n)
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	read_in_order("-", &body, &trailer);
	waitpid(cat, NULL, 0);
	cr_assert_eq(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);

	/* the footer cut off: a plain read from the front, the trailer's records last */
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(truncate(path, st.st_size - (off_t)sizeof(struct sp_file_trailer)), 0);
	read_in_order(path, &body, &trailer);
	bb_free(&seen);
	bb_free(&body);
	bb_free(&trailer);
	free(path);
}

Test(datafile, watcher_sees_every_record_and_the_trailer_is_read_first)
{
	watch_and_trailer_at("trailer-plain.data", 0);
	watch_and_trailer_at("trailer-zstd.data", 1);
}

Test(datafile, a_pipe_has_no_trailer)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_from_fd(fds[1], &w), 0);
	cr_assert_eq(sp_writer_begin_trailer(w), -ESPIPE);
	cr_assert_eq(sp_writer_close(w), 0);
	close(fds[0]);
}
