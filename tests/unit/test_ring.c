/*
 * test_ring.c: draining a perf ring buffer (ring_drain in collectors/kernel/perf.c).
 *
 * The ring is a heap buffer laid out like the kernel's mmap: a control page
 * (struct perf_event_mmap_page) followed by a power-of-two data area.  The
 * test plays the kernel: it writes records at data_head modulo the size,
 * wrapping where the kernel would, and moves data_head; ring_drain plays
 * the reader.  What the sink receives is compared byte for byte with what
 * was written, and the counts with what the test wrote.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/perf.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

/* A drain that walks past head would loop for a long time: fail instead. */
TestSuite(ring, .timeout = 20);

struct fake_ring {
	struct ring ring;
	void *base;
	uint64_t head; /* where the next record goes (the kernel's head) */
};

static void fake_ring_init(struct fake_ring *f, uint64_t data_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	cr_assert_geq(page, sizeof(struct perf_event_mmap_page));
	/* exactly the page and the data: a read past the data area is a heap overflow for ASan */
	cr_assert_eq(posix_memalign(&f->base, page, page + data_size), 0);
	/* garbage everywhere, so that reading unwritten bytes shows */
	memset(f->base, 0xee, page + data_size);
	memset(f->base, 0, sizeof(struct perf_event_mmap_page));
	f->ring.page = f->base;
	f->ring.data = (unsigned char *)f->base + page;
	f->ring.size = data_size;
	f->head = 0;
}

/* Start both head and tail at pos, as a ring that has run for a while. */
static void fake_ring_start_at(struct fake_ring *f, uint64_t pos)
{
	f->head = pos;
	f->ring.page->data_head = pos;
	f->ring.page->data_tail = pos;
}

static void fake_ring_free(struct fake_ring *f)
{
	free(f->base);
}

/* Write bytes at the kernel's head, wrapping at the end of the data area; data_head is not moved. */
static void ring_put(struct fake_ring *f, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		f->ring.data[(f->head + i) % f->ring.size] = p[i];
	f->head += len;
}

static void publish(struct fake_ring *f)
{
	f->ring.page->data_head = f->head;
}

/* A record of the given type and size whose payload bytes depend on seq (so each is different). */
static void make_record(struct byte_builder *b, uint32_t type, uint16_t size, uint32_t seq)
{
	cr_assert(size >= 8 && size % 8 == 0);
	size_t at = bb_begin_record(b, type, 0);
	for (size_t i = 8; i < size; i++) {
		unsigned char c = (unsigned char)(seq * 31 + i * 7);
		bb_bytes(b, &c, 1);
	}
	bb_end_record(b, at);
}

static void make_lost(struct byte_builder *b, uint64_t id, uint64_t lost)
{
	size_t at = bb_begin_record(b, PERF_RECORD_LOST, 0);
	bb_u64(b, id);
	bb_u64(b, lost);
	bb_u64(b, id); /* the sample_id trailer: IDENTIFIER */
	bb_end_record(b, at);
}

static void make_lost_samples(struct byte_builder *b, uint64_t lost)
{
	size_t at = bb_begin_record(b, PERF_RECORD_LOST_SAMPLES, 0);
	bb_u64(b, lost);
	bb_u64(b, 12345); /* IDENTIFIER */
	bb_end_record(b, at);
}

/* What the sink saw. */
struct sink_log {
	struct byte_builder bytes;
	unsigned calls;
	size_t chunk_len[16];
	int fail_with;        /* return this from the call number fail_at (1-based) */
	unsigned fail_at;
};

static int log_sink(void *ctx, const void *data, size_t len)
{
	struct sink_log *log = ctx;
	log->calls++;
	if (log->calls <= ARRAY_SIZE(log->chunk_len))
		log->chunk_len[log->calls - 1] = len;
	cr_assert_gt(len, 0, "the sink is never called with nothing");
	bb_bytes(&log->bytes, data, len);
	if (log->fail_at && log->calls == log->fail_at)
		return log->fail_with;
	return 0;
}

static void log_reset(struct sink_log *log)
{
	bb_free(&log->bytes);
	memset(log, 0, sizeof(*log));
}

Test(ring, records_come_out_in_order_with_counts)
{
	struct fake_ring f;
	fake_ring_init(&f, 4096);
	struct byte_builder want = { 0 };
	make_record(&want, PERF_RECORD_SAMPLE, 48, 1);
	make_record(&want, PERF_RECORD_MMAP2, 120, 2);
	make_lost(&want, 77, 5);
	make_record(&want, PERF_RECORD_SAMPLE, 16, 3);
	make_lost_samples(&want, 9);
	make_lost(&want, 77, 11);
	make_record(&want, PERF_RECORD_SAMPLE, 64, 4);
	ring_put(&f, want.buf, want.len);
	publish(&f);

	struct sink_log log = { 0 };
	struct ring_stats st = { 0 };
	cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
	cr_assert_eq(log.bytes.len, want.len);
	cr_assert_arr_eq(log.bytes.buf, want.buf, want.len);
	cr_assert_eq(log.calls, 1, "no wrap: one chunk");
	cr_assert_eq(st.records, 7);
	cr_assert_eq(st.samples, 3);
	cr_assert_eq(st.lost, 5 + 11);
	cr_assert_eq(st.lost_samples, 9);
	cr_assert_eq(st.bytes, want.len);
	cr_assert_eq(f.ring.page->data_tail, want.len);
	cr_assert_eq(f.ring.page->data_head, want.len, "the reader never moves head");
	log_reset(&log);
	bb_free(&want);
	fake_ring_free(&f);
}

Test(ring, stats_accumulate_across_drains)
{
	struct fake_ring f;
	fake_ring_init(&f, 1024);
	struct ring_stats st = { .records = 100, .samples = 50, .lost = 7, .lost_samples = 3, .bytes = 1000 };
	struct byte_builder want = { 0 };
	make_record(&want, PERF_RECORD_SAMPLE, 32, 1);
	make_lost(&want, 1, 4);
	make_lost_samples(&want, 6);
	ring_put(&f, want.buf, want.len);
	publish(&f);
	struct sink_log log = { 0 };
	cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
	cr_assert_eq(st.records, 103);
	cr_assert_eq(st.samples, 51);
	cr_assert_eq(st.lost, 11);
	cr_assert_eq(st.lost_samples, 9);
	cr_assert_eq(st.bytes, 1000 + want.len);
	log_reset(&log);
	bb_free(&want);
	fake_ring_free(&f);
}

Test(ring, empty_ring_is_a_no_op)
{
	struct fake_ring f;
	fake_ring_init(&f, 4096);
	uint64_t starts[] = { 0, 1000, 4096, 4096 * 5 + 8 };
	for (size_t i = 0; i < ARRAY_SIZE(starts); i++) {
		fake_ring_start_at(&f, starts[i]);
		struct sink_log log = { 0 };
		struct ring_stats st = { 0 };
		cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
		cr_assert_eq(log.calls, 0);
		cr_assert_eq(st.records, 0);
		cr_assert_eq(st.bytes, 0);
		cr_assert_eq(f.ring.page->data_tail, starts[i]);
		log_reset(&log);
	}
	fake_ring_free(&f);
}

/*
 * Records that straddle the end of the data area, starting from every
 * 8-byte position near the end, so that the split falls between any two
 * words of the records (headers and fields are 8-byte aligned, as the
 * kernel writes them, so no single word is ever split).
 */
Test(ring, records_straddling_the_wrap_are_byte_identical)
{
	const uint64_t size = 512;
	for (uint64_t start = size - 64; start <= size; start += 8) {
		struct fake_ring f;
		fake_ring_init(&f, size);
		uint64_t base = 3 * size; /* head and tail keep growing past the size, as in the kernel */
		fake_ring_start_at(&f, base + start);
		struct byte_builder want = { 0 };
		make_record(&want, PERF_RECORD_SAMPLE, 40, (uint32_t)start);
		make_lost(&want, 2, 13);
		make_record(&want, PERF_RECORD_COMM, 56, (uint32_t)start + 1);
		make_lost_samples(&want, 17);
		make_record(&want, PERF_RECORD_SAMPLE, 8, 0);
		ring_put(&f, want.buf, want.len);
		publish(&f);

		struct sink_log log = { 0 };
		struct ring_stats st = { 0 };
		cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
		cr_assert_eq(log.bytes.len, want.len, "start %llu", (unsigned long long)start);
		cr_assert_arr_eq(log.bytes.buf, want.buf, want.len, "start %llu", (unsigned long long)start);
		uint64_t first_part = size - start % size;
		if (first_part < want.len) {
			cr_assert_eq(log.calls, 2, "a drain across the wrap gives two chunks");
			cr_assert_eq(log.chunk_len[0], first_part);
			cr_assert_eq(log.chunk_len[1], want.len - first_part);
		} else {
			cr_assert_eq(log.calls, 1);
		}
		cr_assert_eq(st.records, 5);
		cr_assert_eq(st.samples, 2);
		cr_assert_eq(st.lost, 13, "LOST read across the wrap, start %llu", (unsigned long long)start);
		cr_assert_eq(st.lost_samples, 17);
		cr_assert_eq(f.ring.page->data_tail, base + start + want.len);
		log_reset(&log);
		bb_free(&want);
		fake_ring_free(&f);
	}
}

Test(ring, partially_written_record_is_left_for_the_next_drain)
{
	struct fake_ring f;
	fake_ring_init(&f, 256);
	fake_ring_start_at(&f, 200); /* the second record wraps */
	struct byte_builder first = { 0 }, second = { 0 };
	make_record(&first, PERF_RECORD_SAMPLE, 32, 1);
	make_record(&second, PERF_RECORD_SAMPLE, 96, 2);
	ring_put(&f, first.buf, first.len);
	ring_put(&f, second.buf, second.len);

	/* head inside the header of the second record, then inside its payload */
	uint64_t cuts[] = { 200 + 32 + 4, 200 + 32 + 8, 200 + 32 + 50, 200 + 32 + 95 };
	for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
		f.ring.page->data_head = cuts[i];
		struct sink_log log = { 0 };
		struct ring_stats st = { 0 };
		cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
		if (i == 0) {
			cr_assert_eq(log.bytes.len, first.len);
			cr_assert_arr_eq(log.bytes.buf, first.buf, first.len);
			cr_assert_eq(st.records, 1);
		} else {
			cr_assert_eq(log.calls, 0, "nothing new is complete at head %llu", (unsigned long long)cuts[i]);
			cr_assert_eq(st.records, 0);
		}
		cr_assert_eq(f.ring.page->data_tail, 200 + 32, "tail stops before the partial record");
		log_reset(&log);
	}

	/* the kernel finishes it */
	publish(&f);
	struct sink_log log = { 0 };
	struct ring_stats st = { 0 };
	cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
	cr_assert_eq(log.bytes.len, second.len);
	cr_assert_arr_eq(log.bytes.buf, second.buf, second.len);
	cr_assert_eq(st.records, 1);
	cr_assert_eq(st.samples, 1);
	cr_assert_eq(f.ring.page->data_tail, 200 + 32 + 96);
	log_reset(&log);
	bb_free(&first);
	bb_free(&second);
	fake_ring_free(&f);
}

/* A pseudo-random record size in [8, 8 * 25], a multiple of 8. */
static uint16_t record_size(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return (uint16_t)(8 * (1 + (*state >> 16) % 25));
}

Test(ring, many_drains_over_many_wraps_reproduce_the_stream)
{
	const uint64_t size = 1024;
	struct fake_ring f;
	fake_ring_init(&f, size);
	struct byte_builder want = { 0 };
	struct sink_log log = { 0 };
	struct ring_stats st = { 0 };
	uint32_t state = 1, seq = 0;
	uint64_t samples = 0, lost = 0, lost_samples = 0, records = 0;
	unsigned wraps_seen = 0;

	for (unsigned round = 0; round < 300; round++) {
		/* the kernel writes what fits in the free space (size - (head - tail)) */
		unsigned batch = 1 + round % 7;
		for (unsigned k = 0; k < batch; k++) {
			struct byte_builder rec = { 0 };
			uint32_t kind = seq % 5;
			if (kind == 3) {
				make_lost(&rec, 5, seq);
				lost += seq;
			} else if (kind == 4) {
				make_lost_samples(&rec, seq * 2);
				lost_samples += seq * 2;
			} else {
				uint32_t type = kind == 0 ? PERF_RECORD_MMAP2 : PERF_RECORD_SAMPLE;
				make_record(&rec, type, record_size(&state), seq);
				samples += kind != 0;
			}
			if (f.head + rec.len - f.ring.page->data_tail > size) {
				bb_free(&rec);
				break;
			}
			if (f.head / size != (f.head + rec.len - 1) / size)
				wraps_seen++;
			ring_put(&f, rec.buf, rec.len);
			bb_bytes(&want, rec.buf, rec.len);
			records++;
			seq++;
			bb_free(&rec);
		}
		publish(&f);
		unsigned calls_before = log.calls;
		cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
		cr_assert_leq(log.calls - calls_before, 2, "at most two chunks per drain");
		cr_assert_eq(f.ring.page->data_tail, f.head, "tail advanced to head");
	}
	cr_assert_gt(wraps_seen, 10, "the test wrapped often (%u)", wraps_seen);
	cr_assert_eq(log.bytes.len, want.len);
	cr_assert_arr_eq(log.bytes.buf, want.buf, want.len);
	cr_assert_eq(st.records, records);
	cr_assert_eq(st.samples, samples);
	cr_assert_eq(st.lost, lost);
	cr_assert_eq(st.lost_samples, lost_samples);
	cr_assert_eq(st.bytes, want.len);
	log_reset(&log);
	bb_free(&want);
	fake_ring_free(&f);
}

Test(ring, full_ring_drains_whole)
{
	const uint64_t size = 512;
	struct fake_ring f;
	fake_ring_init(&f, size);
	fake_ring_start_at(&f, 5 * size + 136);
	struct byte_builder want = { 0 };
	for (uint32_t i = 0; want.len < size; i++)
		make_record(&want, PERF_RECORD_SAMPLE, 64, i);
	cr_assert_eq(want.len, size);
	ring_put(&f, want.buf, want.len);
	publish(&f);
	struct sink_log log = { 0 };
	struct ring_stats st = { 0 };
	cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), 0);
	cr_assert_eq(log.bytes.len, size);
	cr_assert_arr_eq(log.bytes.buf, want.buf, size);
	cr_assert_eq(st.samples, size / 64);
	cr_assert_eq(f.ring.page->data_tail, 6 * size + 136);
	log_reset(&log);
	bb_free(&want);
	fake_ring_free(&f);
}

Test(ring, sink_error_is_returned)
{
	struct fake_ring f;
	fake_ring_init(&f, 256);
	fake_ring_start_at(&f, 192);
	struct byte_builder want = { 0 };
	make_record(&want, PERF_RECORD_SAMPLE, 48, 1);
	make_record(&want, PERF_RECORD_SAMPLE, 48, 2); /* across the wrap: two chunks */
	ring_put(&f, want.buf, want.len);
	publish(&f);

	struct sink_log log = { .fail_at = 1, .fail_with = -ENOSPC };
	struct ring_stats st = { 0 };
	cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), -ENOSPC);
	cr_assert_eq(log.calls, 1, "no chunk is handed over after an error");
	log_reset(&log);

	fake_ring_start_at(&f, 192);
	ring_put(&f, want.buf, want.len);
	publish(&f);
	log = (struct sink_log){ .fail_at = 2, .fail_with = -EIO };
	cr_assert_eq(ring_drain(&f.ring, log_sink, &log, &st), -EIO);
	cr_assert_eq(log.calls, 2);
	cr_assert_eq(log.bytes.len, want.len);
	cr_assert_arr_eq(log.bytes.buf, want.buf, want.len);
	log_reset(&log);
	bb_free(&want);
	fake_ring_free(&f);
}
