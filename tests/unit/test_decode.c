/*
 * test_decode.c: the kernel's records to structs (profiler/model/decode.c).
 *
 * Records are laid out here field by field in the order that
 * <linux/perf_event.h> documents for PERF_RECORD_SAMPLE and for the
 * sample_id trailer, and events are registered through SP_REC_EVENT records
 * built in the writer's layout (struct sp_event_record, the attr padded to 8,
 * then the ids).  Every truncated record is copied into a buffer of exactly
 * its claimed size, so that the address sanitizer catches any read past it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/format.h"
#include "sigprof/model/decode.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

/* The three user registers the test events ask for: bits 0, 3 and 7. */
#define REGS_MASK ((1ull << 0) | (1ull << 3) | (1ull << 7))
#define STACK_BYTES 64

#define ALL_FIELDS                                                                                            \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |     \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                      \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |            \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR)

static struct perf_event_attr make_attr(uint64_t sample_type)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_type = sample_type;
	attr.sample_id_all = 1;
	attr.sample_regs_user = REGS_MASK;
	attr.sample_stack_user = STACK_BYTES;
	return attr;
}

/*
 * An SP_REC_EVENT record as the writer lays it out; attr_size may differ
 * from sizeof(*attr) to model older and newer kernels (bytes past
 * sizeof(*attr) are zeros).
 */
static void build_event_record(struct byte_builder *b, const char *name, const char *collector,
			       const struct perf_event_attr *attr, uint32_t attr_size, const uint64_t *ids,
			       uint32_t nr_ids)
{
	struct sp_event_record er;
	memset(&er, 0, sizeof(er));
	er.header.type = SP_REC_EVENT;
	er.attr_size = attr_size;
	er.nr_ids = nr_ids;
	snprintf(er.name, sizeof(er.name), "%s", name);
	snprintf(er.collector, sizeof(er.collector), "%s", collector);
	size_t at = b->len;
	bb_bytes(b, &er, sizeof(er));
	size_t copy = attr_size < sizeof(*attr) ? attr_size : sizeof(*attr);
	bb_bytes(b, attr, copy);
	bb_zeros(b, attr_size - copy);
	bb_pad8(b);
	for (uint32_t i = 0; i < nr_ids; i++)
		bb_u64(b, ids[i]);
	bb_end_record(b, at);
}

static void add_event(struct sp_event_set *set, const char *name, const struct perf_event_attr *attr,
		      const uint64_t *ids, uint32_t nr_ids)
{
	struct byte_builder b = { 0 };
	build_event_record(&b, name, "cpu", attr, attr->size, ids, nr_ids);
	/* exactly the record's bytes: event_set_add must not read past them */
	void *rec = exact_copy(b.buf, b.len);
	cr_assert_eq(event_set_add(set, rec), 0, "event_set_add(%s)", name);
	free(rec);
	bb_free(&b);
}

/* What a test sample holds; the record is built from it and the decoder's output checked against it. */
struct expected_sample {
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr, sample_id, stream_id;
	uint32_t cpu;
	uint64_t period;
	uint64_t callchain[8];
	uint64_t nr_callchain;
	unsigned char raw[40];
	uint32_t raw_size;
	uint64_t regs_abi;
	uint64_t regs[3];
	unsigned char stack[STACK_BYTES];
	uint64_t stack_size, stack_dyn_size;
	uint64_t weight_full;
	uint64_t data_src, phys_addr;
};

static struct expected_sample sample_values(uint64_t id)
{
	struct expected_sample e;
	memset(&e, 0, sizeof(e));
	e.id = id;
	e.ip = 0x401234;
	e.pid = 4242;
	e.tid = 4243;
	e.time = 123456789012345ull;
	e.addr = 0x7ffd00001000ull;
	e.sample_id = id + 1000; /* PERF_SAMPLE_ID may differ from the identifier (inherited events) */
	e.stream_id = 0xabcdef;
	e.cpu = 7;
	e.period = 1000000;
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, 0xffffffff81000020ull,
			     PERF_CONTEXT_USER, 0x401234, 0x401000 };
	memcpy(e.callchain, chain, sizeof(chain));
	e.nr_callchain = ARRAY_SIZE(chain);
	e.raw_size = 13; /* 4 + 13 bytes, padded to 24 */
	for (uint32_t i = 0; i < e.raw_size; i++)
		e.raw[i] = (unsigned char)(0xa0 + i);
	e.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	e.regs[0] = 0x1111;
	e.regs[1] = 0x3333;
	e.regs[2] = 0x7777;
	e.stack_size = STACK_BYTES;
	for (unsigned i = 0; i < STACK_BYTES; i++)
		e.stack[i] = (unsigned char)(i * 3 + 1);
	e.stack_dyn_size = 40;
	e.weight_full = 0x0003000200000150ull; /* var3 = 3, var2 = 2, var1 = 0x150 */
	e.data_src = 0x68100142ull;
	e.phys_addr = 0x12345000;
	return e;
}

/* The record, in the order of <linux/perf_event.h>'s PERF_RECORD_SAMPLE comment. */
static void build_sample(struct byte_builder *b, const struct expected_sample *e, uint64_t type)
{
	size_t at = bb_begin_record(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	if (type & PERF_SAMPLE_IDENTIFIER)
		bb_u64(b, e->id);
	if (type & PERF_SAMPLE_IP)
		bb_u64(b, e->ip);
	if (type & PERF_SAMPLE_TID)
		bb_u32_pair(b, e->pid, e->tid);
	if (type & PERF_SAMPLE_TIME)
		bb_u64(b, e->time);
	if (type & PERF_SAMPLE_ADDR)
		bb_u64(b, e->addr);
	if (type & PERF_SAMPLE_ID)
		bb_u64(b, e->sample_id);
	if (type & PERF_SAMPLE_STREAM_ID)
		bb_u64(b, e->stream_id);
	if (type & PERF_SAMPLE_CPU)
		bb_u32_pair(b, e->cpu, 0);
	if (type & PERF_SAMPLE_PERIOD)
		bb_u64(b, e->period);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		bb_u64(b, e->nr_callchain);
		for (uint64_t i = 0; i < e->nr_callchain; i++)
			bb_u64(b, e->callchain[i]);
	}
	if (type & PERF_SAMPLE_RAW) {
		bb_u32(b, e->raw_size);
		bb_bytes(b, e->raw, e->raw_size);
		bb_pad8(b);
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		bb_u64(b, e->regs_abi);
		if (e->regs_abi != PERF_SAMPLE_REGS_ABI_NONE)
			for (unsigned i = 0; i < 3; i++)
				bb_u64(b, e->regs[i]);
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		bb_u64(b, e->stack_size);
		if (e->stack_size) {
			bb_bytes(b, e->stack, e->stack_size);
			bb_u64(b, e->stack_dyn_size);
		}
	}
	if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		bb_u64(b, e->weight_full);
	if (type & PERF_SAMPLE_DATA_SRC)
		bb_u64(b, e->data_src);
	if (type & PERF_SAMPLE_PHYS_ADDR)
		bb_u64(b, e->phys_addr);
	bb_end_record(b, at);
}

static void assert_inside(const void *p, size_t n, const void *rec)
{
	const unsigned char *start = rec;
	const unsigned char *end = start + ((const struct perf_event_header *)rec)->size;
	cr_assert(p != NULL);
	cr_assert((const unsigned char *)p >= start && (const unsigned char *)p + n <= end,
		  "decoded pointer is not inside the record");
}

static void check_sample(const struct sp_sample *s, const struct expected_sample *e, const void *rec,
			 const struct sp_event *ev)
{
	cr_assert_eq(s->event, ev);
	cr_assert_eq(s->id, e->id);
	cr_assert_eq(s->ip, e->ip);
	cr_assert_eq(s->pid, e->pid);
	cr_assert_eq(s->tid, e->tid);
	cr_assert_eq(s->time, e->time);
	cr_assert_eq(s->addr, e->addr);
	cr_assert_eq(s->cpu, e->cpu);
	cr_assert_eq(s->period, e->period);
	cr_assert_eq(s->nr_callchain, e->nr_callchain);
	assert_inside(s->callchain, e->nr_callchain * 8, rec);
	cr_assert_arr_eq(s->callchain, e->callchain, e->nr_callchain * 8);
	cr_assert_eq(s->raw_size, e->raw_size);
	assert_inside(s->raw, e->raw_size, rec);
	cr_assert_arr_eq(s->raw, e->raw, e->raw_size);
	cr_assert_eq(s->regs_abi, e->regs_abi);
	cr_assert_eq(s->nr_regs, 3);
	assert_inside(s->regs, 3 * 8, rec);
	cr_assert_arr_eq(s->regs, e->regs, sizeof(e->regs));
	cr_assert_eq(s->stack_size, e->stack_size);
	assert_inside(s->stack, e->stack_size, rec);
	cr_assert_arr_eq(s->stack, e->stack, e->stack_size);
	cr_assert_eq(s->stack_dyn_size, e->stack_dyn_size);
	cr_assert_eq(s->data_src, e->data_src);
	cr_assert_eq(s->phys_addr, e->phys_addr);
}

Test(decode, event_record_in_writer_layout_registers_every_id)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(ALL_FIELDS);
	uint64_t ids[] = { 11, 12, 13, 14 };
	add_event(&set, "cpu-clock", &attr, ids, ARRAY_SIZE(ids));
	cr_assert_eq(set.count, 1);
	struct sp_event *ev = &set.events[0];
	cr_assert_str_eq(ev->name, "cpu-clock");
	cr_assert_str_eq(ev->collector, "cpu");
	cr_assert_eq(ev->index, 0);
	cr_assert_eq(ev->nr_ids, ARRAY_SIZE(ids));
	cr_assert_arr_eq(ev->ids, ids, sizeof(ids));
	cr_assert(memcmp(&ev->attr, &attr, sizeof(attr)) == 0, "attr copied as written");
	cr_assert(ev->decodable);
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		cr_assert_eq(event_set_find(&set, ids[i]), ev, "id %llu", (unsigned long long)ids[i]);
	cr_assert_null(event_set_find(&set, 10));
	cr_assert_null(event_set_find(&set, 15));
	event_set_free(&set);
}

Test(decode, many_events_each_found_by_each_of_its_ids)
{
	struct sp_event_set set = { 0 };
	cr_assert_null(event_set_find(&set, 1), "an empty set finds nothing");
	enum { EVENTS = 40, IDS = 16 };
	for (unsigned e = 0; e < EVENTS; e++) {
		struct perf_event_attr attr = make_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP);
		attr.config = e;
		uint64_t ids[IDS];
		for (unsigned k = 0; k < IDS; k++)
			ids[k] = 0x100000ull * (e + 1) + k * 977;
		char name[32];
		snprintf(name, sizeof(name), "event-%u", e);
		add_event(&set, name, &attr, ids, IDS);
	}
	cr_assert_eq(set.count, EVENTS);
	for (unsigned e = 0; e < EVENTS; e++) {
		char name[32];
		snprintf(name, sizeof(name), "event-%u", e);
		for (unsigned k = 0; k < IDS; k++) {
			struct sp_event *ev = event_set_find(&set, 0x100000ull * (e + 1) + k * 977);
			cr_assert_not_null(ev);
			cr_assert_str_eq(ev->name, name);
			cr_assert_eq(ev->index, e);
			cr_assert_eq(ev->attr.config, e);
		}
	}
	event_set_free(&set);
	cr_assert_eq(set.count, 0);
	cr_assert_null(set.events);
}

/*
 * A file of many EVENT records (one id each, as a damaged or hostile file
 * may hold) loads in linear time: the id table grows by doubling and is not
 * rebuilt for every event.  The first event of an id keeps it.
 */
Test(decode, many_event_records_load_in_linear_time)
{
	enum { EVENTS = 100000 };
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP);
	struct byte_builder b = { 0 };
	uint64_t id = 0;
	build_event_record(&b, "e", "cpu", &attr, attr.size, &id, 1);
	struct sp_event_record *er = (void *)b.buf;
	uint64_t *id_in_record = (uint64_t *)(b.buf + b.len - sizeof(uint64_t));
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned e = 0; e < EVENTS; e++) {
		*id_in_record = 1000 + e % (EVENTS - 10); /* the last 10 repeat the first ids */
		er->nr_ids = e % 1000 == 999 ? 0 : 1;
		cr_assert_eq(event_set_add(&set, (void *)b.buf), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	double elapsed = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
	cr_expect_lt(elapsed, 5.0, "%d EVENT records took %.2f s", EVENTS, elapsed);
	cr_assert_eq(set.count, EVENTS);
	for (unsigned e = 0; e < EVENTS - 10; e++) {
		struct sp_event *ev = event_set_find(&set, 1000 + e);
		if (e % 1000 == 999) {
			cr_assert_null(ev, "event %u has no id", e);
			continue;
		}
		cr_assert_not_null(ev, "id of event %u", e);
		cr_assert_eq(ev->index, e);
	}
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, attr_of_an_older_or_newer_size_is_read_and_ids_found_after_it)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	uint64_t old_ids[] = { 501, 502 }, new_ids[] = { 601 };
	struct byte_builder b = { 0 };
	/* VER0: 64 bytes, before sample_regs_user existed */
	build_event_record(&b, "old", "cpu", &attr, PERF_ATTR_SIZE_VER0, old_ids, 2);
	void *rec = exact_copy(b.buf, b.len);
	cr_assert_eq(event_set_add(&set, rec), 0);
	free(rec);
	bb_free(&b);
	/* a kernel newer than these headers: 20 more bytes (padded to 24) after our struct */
	build_event_record(&b, "new", "cpu", &attr, (uint32_t)sizeof(attr) + 20, new_ids, 1);
	rec = exact_copy(b.buf, b.len);
	cr_assert_eq(event_set_add(&set, rec), 0);
	free(rec);
	bb_free(&b);

	struct sp_event *old = event_set_find(&set, 502), *fresh = event_set_find(&set, 601);
	cr_assert_not_null(old);
	cr_assert_not_null(fresh);
	cr_assert_str_eq(old->name, "old");
	cr_assert_eq(old->attr.sample_type, attr.sample_type);
	cr_assert_eq(old->attr.sample_regs_user, 0, "bytes past a VER0 attr are not read");
	cr_assert_eq(event_set_find(&set, 501), old);
	cr_assert_str_eq(fresh->name, "new");
	cr_assert_eq(fresh->attr.sample_regs_user, REGS_MASK);
	cr_assert(old->decodable && fresh->decodable);
	event_set_free(&set);
}

Test(decode, malformed_event_records_are_rejected)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(PERF_SAMPLE_IDENTIFIER);
	uint64_t ids[] = { 1, 2, 3 };
	struct byte_builder b = { 0 };
	build_event_record(&b, "x", "cpu", &attr, attr.size, ids, 3);

	/* the record's size cuts the ids, the attr, or the fixed part */
	size_t cuts[] = { b.len - 8, sizeof(struct sp_event_record) + 64, sizeof(struct sp_event_record),
			  sizeof(struct sp_event_record) - 8, 8 };
	for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
		void *rec = exact_copy(b.buf, cuts[i]);
		((struct perf_event_header *)rec)->size = (uint16_t)cuts[i];
		cr_assert_eq(event_set_add(&set, rec), -EINVAL, "record cut to %zu bytes", cuts[i]);
		free(rec);
	}
	/* an attr smaller than the first published one */
	struct sp_event_record *er = (void *)b.buf;
	er->attr_size = PERF_ATTR_SIZE_VER0 - 8;
	cr_assert_eq(event_set_add(&set, (void *)b.buf), -EINVAL);
	/* more ids than the record holds */
	er->attr_size = attr.size;
	er->nr_ids = 4;
	cr_assert_eq(event_set_add(&set, (void *)b.buf), -EINVAL);
	er->nr_ids = UINT32_MAX;
	cr_assert_eq(event_set_add(&set, (void *)b.buf), -EINVAL);
	/* an attr_size that rounds up past 32 bits, in a record with no attr, just the fixed part and 3 ids */
	for (uint32_t huge = UINT32_MAX - 7; huge != 0; huge++) {
		struct byte_builder h = { 0 };
		bb_bytes(&h, b.buf, sizeof(struct sp_event_record));
		for (uint32_t i = 0; i < 3; i++)
			bb_u64(&h, ids[i]);
		struct sp_event_record *he = (void *)h.buf;
		he->header.size = (uint16_t)h.len;
		he->attr_size = huge;
		he->nr_ids = 3;
		void *rec = exact_copy(h.buf, h.len);
		cr_assert_eq(event_set_add(&set, rec), -EINVAL, "attr_size %#x", huge);
		free(rec);
		bb_free(&h);
	}
	cr_assert_eq(set.count, 0, "nothing was added");
	cr_assert_null(event_set_find(&set, 1));
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, events_with_fields_the_decoder_does_not_know_are_undecodable)
{
	struct sp_event_set set = { 0 };
	/* AUX: a sample field the decoder does not step over (READ, BRANCH_STACK and the like it does) */
	struct perf_event_attr with_read = make_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_AUX);
	struct perf_event_attr no_identifier = make_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	uint64_t id1 = 71, id2 = 72;
	add_event(&set, "read", &with_read, &id1, 1);
	add_event(&set, "noident", &no_identifier, &id2, 1);
	cr_assert_not(set.events[0].decodable);
	cr_assert_not(set.events[1].decodable);

	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, 0);
	bb_u64(&b, id1);
	bb_u64(&b, 0x1000);
	bb_zeros(&b, 64);
	bb_end_record(&b, at);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, (void *)b.buf, &s), -EINVAL);
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, sample_with_every_supported_field)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(ALL_FIELDS);
	uint64_t ids[] = { 900, 901 };
	add_event(&set, "cpu-clock", &attr, ids, 2);
	struct expected_sample e = sample_values(901);

	struct byte_builder b = { 0 };
	build_sample(&b, &e, ALL_FIELDS);
	void *rec = exact_copy(b.buf, b.len);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, rec, &s), 0);
	check_sample(&s, &e, rec, &set.events[0]);
	cr_assert_eq(s.weight, e.weight_full, "PERF_SAMPLE_WEIGHT is the whole u64");
	free(rec);
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, weight_struct_gives_its_first_member)
{
	uint64_t type = (ALL_FIELDS & ~(uint64_t)PERF_SAMPLE_WEIGHT) | PERF_SAMPLE_WEIGHT_STRUCT;
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(type);
	uint64_t id = 33;
	add_event(&set, "mem", &attr, &id, 1);
	struct expected_sample e = sample_values(id);

	struct byte_builder b = { 0 };
	build_sample(&b, &e, type);
	void *rec = exact_copy(b.buf, b.len);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, rec, &s), 0);
	check_sample(&s, &e, rec, &set.events[0]);
	union perf_sample_weight w = { .full = e.weight_full };
	cr_assert_eq(s.weight, w.var1_dw);
	cr_assert_neq(s.weight, e.weight_full);
	free(rec);
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, raw_of_an_aligned_size_has_no_padding)
{
	uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC;
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(type);
	uint64_t id = 34;
	add_event(&set, "tp", &attr, &id, 1);
	struct expected_sample e = sample_values(id);
	e.raw_size = 12; /* 4 + 12 = 16: no padding, as the kernel writes tracepoints */
	struct byte_builder b = { 0 };
	build_sample(&b, &e, type);
	cr_assert_eq(b.len, 8 + 8 + 8 + 16 + 8);
	void *rec = exact_copy(b.buf, b.len);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, rec, &s), 0);
	cr_assert_eq(s.raw_size, 12);
	cr_assert_arr_eq(s.raw, e.raw, 12);
	cr_assert_eq(s.period, e.period);
	cr_assert_eq(s.data_src, e.data_src);
	free(rec);
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, no_user_regs_and_empty_user_stack_leave_the_fields_after_them_in_place)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(ALL_FIELDS);
	uint64_t id = 55;
	add_event(&set, "cpu-clock", &attr, &id, 1);
	struct expected_sample e = sample_values(id);
	e.regs_abi = PERF_SAMPLE_REGS_ABI_NONE; /* a kernel thread: no user registers */
	e.stack_size = 0;                        /* and no user stack, so no dyn_size either */
	struct byte_builder b = { 0 };
	build_sample(&b, &e, ALL_FIELDS);
	void *rec = exact_copy(b.buf, b.len);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, rec, &s), 0);
	cr_assert_eq(s.regs_abi, PERF_SAMPLE_REGS_ABI_NONE);
	cr_assert_eq(s.nr_regs, 0);
	cr_assert_null(s.regs);
	cr_assert_eq(s.stack_size, 0);
	cr_assert_null(s.stack);
	cr_assert_eq(s.stack_dyn_size, 0);
	cr_assert_eq(s.weight, e.weight_full);
	cr_assert_eq(s.data_src, e.data_src);
	cr_assert_eq(s.phys_addr, e.phys_addr);
	free(rec);
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, unknown_id_is_enoent)
{
	struct sp_event_set set = { 0 };
	struct byte_builder b = { 0 };
	struct expected_sample e = sample_values(4711);
	build_sample(&b, &e, ALL_FIELDS);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, (void *)b.buf, &s), -ENOENT, "empty set");
	struct perf_event_attr attr = make_attr(ALL_FIELDS);
	uint64_t id = 4712;
	add_event(&set, "cpu-clock", &attr, &id, 1);
	cr_assert_eq(sample_decode(&set, (void *)b.buf, &s), -ENOENT);
	cr_assert_null(s.event);
	bb_free(&b);
	event_set_free(&set);
}

/* Every size short of the whole record: -EINVAL, and no byte past the size read. */
static void check_every_cut(uint64_t type, const struct expected_sample *e)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(type);
	add_event(&set, "cpu-clock", &attr, &e->id, 1);
	struct byte_builder b = { 0 };
	build_sample(&b, e, type);
	for (size_t size = 0; size < b.len; size++) {
		size_t n = size < sizeof(struct perf_event_header) ? sizeof(struct perf_event_header) : size;
		void *rec = exact_copy(b.buf, n);
		((struct perf_event_header *)rec)->size = (uint16_t)size;
		struct sp_sample s;
		cr_assert_eq(sample_decode(&set, rec, &s), -EINVAL, "record of %zu bytes cut to %zu", b.len, size);
		free(rec);
	}
	void *rec = exact_copy(b.buf, b.len);
	struct sp_sample s;
	cr_assert_eq(sample_decode(&set, rec, &s), 0, "the whole record decodes");
	free(rec);
	bb_free(&b);
	event_set_free(&set);
}

Test(decode, record_cut_short_in_any_field_is_einval)
{
	struct expected_sample e = sample_values(77);
	check_every_cut(ALL_FIELDS, &e);
	uint64_t weight_struct = (ALL_FIELDS & ~(uint64_t)PERF_SAMPLE_WEIGHT) | PERF_SAMPLE_WEIGHT_STRUCT;
	check_every_cut(weight_struct, &e);
	e.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	e.stack_size = 0;
	check_every_cut(ALL_FIELDS, &e);
}

Test(decode, callchain_longer_than_the_record_is_einval)
{
	uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(type);
	uint64_t id = 5;
	add_event(&set, "cpu-clock", &attr, &id, 1);
	uint64_t claims[] = { 4, 5, 1000, (UINT64_MAX / 8) + 1, UINT64_MAX };
	for (size_t i = 0; i < ARRAY_SIZE(claims); i++) {
		struct byte_builder b = { 0 };
		size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, 0);
		bb_u64(&b, id);
		bb_u64(&b, 0x401000);
		bb_u64(&b, claims[i]);
		bb_u64(&b, PERF_CONTEXT_USER); /* three entries follow the nr */
		bb_u64(&b, 0x401000);
		bb_u64(&b, 0x402000);
		bb_end_record(&b, at);
		void *rec = exact_copy(b.buf, b.len);
		struct sp_sample s;
		cr_assert_eq(sample_decode(&set, rec, &s), -EINVAL, "nr %llu", (unsigned long long)claims[i]);
		/* the same record claiming exactly what it holds is fine */
		memcpy((char *)rec + 24, &(uint64_t){ 3 }, 8);
		cr_assert_eq(sample_decode(&set, rec, &s), 0);
		cr_assert_eq(s.nr_callchain, 3);
		cr_assert_eq(s.callchain[0], PERF_CONTEXT_USER);
		cr_assert_eq(s.callchain[2], 0x402000);
		free(rec);
		bb_free(&b);
	}
	event_set_free(&set);
}

Test(decode, sizes_inside_the_record_that_overrun_it_are_einval)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(ALL_FIELDS);
	uint64_t id = 6;
	add_event(&set, "cpu-clock", &attr, &id, 1);
	struct sp_sample s;

	struct expected_sample e = sample_values(id);
	e.raw_size = 0xffffffffu; /* the builder would copy that many bytes from raw[]... */
	struct byte_builder b = { 0 };
	struct expected_sample small = e;
	small.raw_size = 8;
	build_sample(&b, &small, ALL_FIELDS);
	/* ... so patch the size in place: after id, ip, tid, time, addr, id, stream, cpu, period and the chain */
	size_t raw_at = 8 + 9 * 8 + 8 + small.nr_callchain * 8;
	memcpy(b.buf + raw_at, &e.raw_size, 4);
	void *rec = exact_copy(b.buf, b.len);
	cr_assert_eq(sample_decode(&set, rec, &s), -EINVAL, "raw size past the end");
	free(rec);
	bb_free(&b);

	/* the user stack: a size past the end, and a dyn_size larger than the size */
	e = sample_values(id);
	e.stack_dyn_size = e.stack_size + 8;
	build_sample(&b, &e, ALL_FIELDS);
	rec = exact_copy(b.buf, b.len);
	cr_assert_eq(sample_decode(&set, rec, &s), -EINVAL, "dyn_size > size");
	free(rec);
	bb_free(&b);

	e = sample_values(id);
	e.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	build_sample(&b, &e, ALL_FIELDS);
	size_t stack_at = b.len - 8 * 3 - 8 - STACK_BYTES - 8; /* before weight, data_src, phys_addr */
	uint64_t huge = 1ull << 40;
	memcpy(b.buf + stack_at, &huge, 8);
	rec = exact_copy(b.buf, b.len);
	cr_assert_eq(sample_decode(&set, rec, &s), -EINVAL, "stack size past the end");
	free(rec);
	bb_free(&b);
	event_set_free(&set);
}

static struct trailer trailer_of(const struct expected_sample *e)
{
	return (struct trailer){ .pid = e->pid, .tid = e->tid, .time = e->time, .sample_id = e->sample_id,
				 .stream_id = e->stream_id, .cpu = e->cpu, .id = e->id };
}

static void build_mmap2(struct byte_builder *b, const struct expected_sample *e, uint64_t type, const char *file)
{
	struct trailer t = trailer_of(e);
	bb_mmap2(b, 0x7f0000001000ull, 0x20000, 0x1000, 5 /* prot */, 2 /* flags */, file, type, &t);
}

static void build_comm(struct byte_builder *b, const struct expected_sample *e, uint64_t type, const char *comm)
{
	size_t at = bb_begin_record(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	bb_u32_pair(b, e->pid, e->tid);
	bb_bytes(b, comm, strlen(comm) + 1);
	bb_pad8(b);
	struct trailer t = trailer_of(e);
	bb_trailer(b, type, &t);
	bb_end_record(b, at);
}

Test(decode, sample_id_trailer_of_mmap2_and_comm)
{
	/* every trailer field, plus sample-only fields that must not appear in the trailer */
	uint64_t full = ALL_FIELDS;
	uint64_t minimal = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
	uint64_t types[] = { full, minimal };
	for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
		struct sp_event_set set = { 0 };
		struct perf_event_attr attr = make_attr(types[t]);
		uint64_t ids[] = { 300 + t, 400 + t };
		add_event(&set, "cpu-clock", &attr, ids, 2);
		struct expected_sample e = sample_values(ids[1]);

		struct byte_builder b = { 0 };
		build_mmap2(&b, &e, types[t], "/usr/lib/x86_64-linux-gnu/libc.so.6");
		void *rec = exact_copy(b.buf, b.len);
		struct sp_sample_id sid;
		cr_assert_eq(record_sample_id(&set, rec, &sid), 0);
		cr_assert(sid.valid);
		cr_assert_eq(sid.event, &set.events[0]);
		cr_assert_eq(sid.time, e.time);
		if (types[t] & PERF_SAMPLE_TID) {
			cr_assert_eq(sid.pid, e.pid);
			cr_assert_eq(sid.tid, e.tid);
			cr_assert_eq(sid.cpu, e.cpu);
		} else {
			cr_assert_eq(sid.pid, 0);
			cr_assert_eq(sid.cpu, 0);
		}
		free(rec);
		bb_free(&b);

		e.time += 5;
		build_comm(&b, &e, types[t], "worker-thread");
		rec = exact_copy(b.buf, b.len);
		cr_assert_eq(record_sample_id(&set, rec, &sid), 0);
		cr_assert(sid.valid);
		cr_assert_eq(sid.time, e.time);
		free(rec);
		bb_free(&b);
		event_set_free(&set);
	}
}

Test(decode, sample_id_errors)
{
	struct sp_event_set set = { 0 };
	struct perf_event_attr attr = make_attr(ALL_FIELDS);
	struct perf_event_attr no_id_all = attr;
	no_id_all.sample_id_all = 0;
	uint64_t id = 808, id2 = 809;
	add_event(&set, "cpu-clock", &attr, &id, 1);
	add_event(&set, "old-style", &no_id_all, &id2, 1);
	struct expected_sample e = sample_values(id);
	struct sp_sample_id sid;

	/* an id nobody registered */
	struct expected_sample stranger = sample_values(999);
	struct byte_builder b = { 0 };
	build_comm(&b, &stranger, ALL_FIELDS, "x");
	cr_assert_eq(record_sample_id(&set, (void *)b.buf, &sid), -ENOENT);
	cr_assert_not(sid.valid);
	bb_free(&b);

	/* an event without sample_id_all has no trailer to read */
	struct expected_sample old = sample_values(id2);
	build_comm(&b, &old, ALL_FIELDS, "x");
	cr_assert_eq(record_sample_id(&set, (void *)b.buf, &sid), -EINVAL);
	bb_free(&b);

	/* records too short for the trailer their event implies, down to a bare header */
	for (unsigned words = 0; words < 6; words++) {
		size_t at = bb_begin_record(&b, PERF_RECORD_EXIT, 0);
		for (unsigned k = 0; k + 1 < words; k++)
			bb_u64(&b, 0);
		if (words)
			bb_u64(&b, e.id);
		bb_end_record(&b, at);
		void *rec = exact_copy(b.buf, b.len);
		cr_assert_eq(record_sample_id(&set, rec, &sid), -EINVAL, "%u words after the header", words);
		cr_assert_not(sid.valid);
		free(rec);
		bb_free(&b);
	}
	event_set_free(&set);
}

/* An MMAP2 record of attr.build_id: the build-id as hex; one with device and inode: none. */
Test(decode, mmap2_build_id)
{
	uint64_t words[12] = { 0 };
	struct perf_event_header *h = (void *)words;
	h->type = PERF_RECORD_MMAP2;
	h->size = sizeof(words);
	uint8_t *id = (uint8_t *)(h + 1) + 32;
	id[0] = 3;
	id[4] = 0xab;
	id[5] = 0x01;
	id[6] = 0xff;
	char hex[41];
	cr_assert_not(mmap2_build_id(h, hex), "without PERF_RECORD_MISC_MMAP_BUILD_ID: device and inode");
	h->misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
	cr_assert(mmap2_build_id(h, hex));
	cr_assert_str_eq(hex, "ab01ff");
	id[0] = 21;
	cr_assert_not(mmap2_build_id(h, hex), "longer than the record's 20 bytes");
	h->size = 56;
	id[0] = 3;
	cr_assert_not(mmap2_build_id(h, hex), "a record too short for the field");
}
