/*
 * decode.c: the kernel's records to structs (sample.h).
 *
 * Every event sigprof opens has PERF_SAMPLE_IDENTIFIER, so the first u64 of
 * a sample and the last u64 of any other record is the event id; the id
 * gives the attr, and the attr's sample_type gives the layout of the rest
 * (the order is the kernel's, documented in <linux/perf_event.h>).  A cursor
 * checks every read against the record's size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/kernel/format.h"
#include "sigprof/model/decode.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

static void id_table_insert(struct sp_event_set *set, uint64_t id, uint32_t index)
{
	size_t mask = set->nslots - 1;
	size_t i = hash_u64(id) & mask;
	while (set->slot_index[i]) {
		if (set->slot_ids[i] == id)
			return;
		i = (i + 1) & mask;
	}
	set->slot_ids[i] = id;
	set->slot_index[i] = index + 1;
}

static void id_table_rebuild(struct sp_event_set *set)
{
	size_t n = 64;
	while (n < set->nids * 4)
		n *= 2;
	free(set->slot_ids);
	free(set->slot_index);
	set->slot_ids = xcalloc(n, sizeof(*set->slot_ids));
	set->slot_index = xcalloc(n, sizeof(*set->slot_index));
	set->nslots = n;
	for (size_t e = 0; e < set->count; e++)
		for (uint32_t k = 0; k < set->events[e].nr_ids; k++)
			id_table_insert(set, set->events[e].ids[k], (uint32_t)e);
}

int event_set_add(struct sp_event_set *set, const struct perf_event_header *rec)
{
	const struct sp_event_record *er = (const void *)rec;
	if (rec->size < sizeof(*er))
		return -EINVAL;
	size_t attr_bytes = ALIGN_UP(er->attr_size, 8);
	if (er->attr_size < PERF_ATTR_SIZE_VER0 ||
	    sizeof(*er) + attr_bytes + (size_t)er->nr_ids * sizeof(uint64_t) > rec->size)
		return -EINVAL;

	GROW(set->events, set->cap, set->count + 1);
	struct sp_event *ev = &set->events[set->count];
	memset(ev, 0, sizeof(*ev));
	ev->index = (unsigned)set->count;
	memcpy(ev->name, er->name, sizeof(ev->name) - 1);
	memcpy(ev->collector, er->collector, sizeof(ev->collector) - 1);
	size_t copy = er->attr_size < sizeof(ev->attr) ? er->attr_size : sizeof(ev->attr);
	memcpy(&ev->attr, (const char *)er + sizeof(*er), copy);
	ev->nr_ids = er->nr_ids;
	ev->ids = xmalloc(er->nr_ids * sizeof(uint64_t) + 1);
	memcpy(ev->ids, (const char *)er + sizeof(*er) + attr_bytes, er->nr_ids * sizeof(uint64_t));
	ev->decodable = (ev->attr.sample_type & ~(uint64_t)SP_SAMPLE_SUPPORTED) == 0 &&
			(ev->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	set->count++;
	/* grown by doubling, not rebuilt per event: a file of many EVENT records loads in linear time */
	set->nids += ev->nr_ids;
	if (set->nids * 2 > set->nslots)
		id_table_rebuild(set);
	else
		for (uint32_t k = 0; k < ev->nr_ids; k++)
			id_table_insert(set, ev->ids[k], ev->index);
	return 0;
}

struct sp_event *event_set_find(const struct sp_event_set *set, uint64_t id)
{
	if (!set->nslots)
		return NULL;
	size_t mask = set->nslots - 1;
	for (size_t i = hash_u64(id) & mask; set->slot_index[i]; i = (i + 1) & mask)
		if (set->slot_ids[i] == id)
			return &set->events[set->slot_index[i] - 1];
	return NULL;
}

void event_set_free(struct sp_event_set *set)
{
	for (size_t e = 0; e < set->count; e++)
		free(set->events[e].ids);
	free(set->events);
	free(set->slot_ids);
	free(set->slot_index);
	memset(set, 0, sizeof(*set));
}

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v = 0;
	if (c->end - c->p < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static const void *take_bytes(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	const void *at = c->p;
	c->p += n;
	return at;
}

static void take_pid_tid(struct cursor *c, uint32_t *pid, uint32_t *tid)
{
	uint64_t v = take_u64(c);
	*pid = (uint32_t)v;
	*tid = (uint32_t)(v >> 32);
}

static void take_user_regs(struct cursor *c, const struct perf_event_attr *attr, struct sp_sample *s)
{
	s->regs_abi = take_u64(c);
	if (s->regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
		return;
	s->nr_regs = (uint32_t)__builtin_popcountll(attr->sample_regs_user);
	s->regs = take_bytes(c, (uint64_t)s->nr_regs * 8);
}

static void take_user_stack(struct cursor *c, struct sp_sample *s)
{
	s->stack_size = take_u64(c);
	if (!s->stack_size)
		return;
	s->stack = take_bytes(c, s->stack_size);
	s->stack_dyn_size = take_u64(c);
	if (s->stack_dyn_size > s->stack_size)
		c->bad = true;
}

/*
 * PERF_SAMPLE_READ: the counter values read_format asks for, stepped over.
 * One event: value, [enabled], [running], [id], [lost]; a group (FORMAT_GROUP):
 * nr, [enabled], [running], then nr times value, [id], [lost].
 */
static void skip_read_values(struct cursor *c, const struct perf_event_attr *attr)
{
	uint64_t f = attr->read_format;
	unsigned per_value = 1 + !!(f & PERF_FORMAT_ID) + !!(f & PERF_FORMAT_LOST);
	unsigned times = !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);
	if (!(f & PERF_FORMAT_GROUP)) {
		take_bytes(c, 8 * (uint64_t)(per_value + times));
		return;
	}
	uint64_t nr = take_u64(c);
	take_bytes(c, 8 * (uint64_t)times);
	if (nr > (uint64_t)(c->end - c->p) / (8 * per_value)) {
		c->bad = true;
		return;
	}
	take_bytes(c, nr * 8 * per_value);
}

int sample_decode(const struct sp_event_set *set, const struct perf_event_header *rec, struct sp_sample *out)
{
	struct cursor c = { (const unsigned char *)(rec + 1), (const unsigned char *)rec + rec->size, false };
	memset(out, 0, sizeof(*out));
	out->id = take_u64(&c);
	if (c.bad)
		return -EINVAL;
	struct sp_event *ev = event_set_find(set, out->id);
	if (!ev)
		return -ENOENT;
	if (!ev->decodable)
		return -EINVAL;
	out->event = ev;
	uint64_t type = ev->attr.sample_type;

	if (type & PERF_SAMPLE_IP)
		out->ip = take_u64(&c);
	if (type & PERF_SAMPLE_TID)
		take_pid_tid(&c, &out->pid, &out->tid);
	if (type & PERF_SAMPLE_TIME)
		out->time = take_u64(&c);
	if (type & PERF_SAMPLE_ADDR)
		out->addr = take_u64(&c);
	if (type & PERF_SAMPLE_ID)
		take_u64(&c);
	if (type & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (type & PERF_SAMPLE_CPU)
		out->cpu = (uint32_t)take_u64(&c);
	if (type & PERF_SAMPLE_PERIOD)
		out->period = take_u64(&c);
	if (type & PERF_SAMPLE_READ)
		skip_read_values(&c, &ev->attr);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		out->nr_callchain = take_u64(&c);
		if (out->nr_callchain > (uint64_t)(c.end - c.p) / 8)
			return -EINVAL;
		out->callchain = take_bytes(&c, out->nr_callchain * 8);
	}
	if (type & PERF_SAMPLE_RAW) {
		uint32_t size = 0;
		const void *p = take_bytes(&c, 4);
		if (p)
			memcpy(&size, p, 4);
		out->raw_size = size;
		out->raw = take_bytes(&c, size);
		/* the u32 size and the data are padded together to 8 bytes */
		take_bytes(&c, ALIGN_UP(4 + (uint64_t)size, 8) - 4 - size);
	}
	if (type & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take_u64(&c);
		if (ev->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take_u64(&c);
		if (nr > (uint64_t)(c.end - c.p) / 24)
			return -EINVAL;
		take_bytes(&c, nr * 24); /* from, to, flags: one perf_branch_entry each */
	}
	if (type & PERF_SAMPLE_REGS_USER)
		take_user_regs(&c, &ev->attr, out);
	if (type & PERF_SAMPLE_STACK_USER)
		take_user_stack(&c, out);
	if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = take_u64(&c);
		out->weight = (type & PERF_SAMPLE_WEIGHT_STRUCT) ? (uint32_t)w : w;
	}
	if (type & PERF_SAMPLE_DATA_SRC)
		out->data_src = take_u64(&c);
	if (type & PERF_SAMPLE_TRANSACTION)
		take_u64(&c);
	if (type & PERF_SAMPLE_REGS_INTR && take_u64(&c) != PERF_SAMPLE_REGS_ABI_NONE)
		take_bytes(&c, 8 * (uint64_t)__builtin_popcountll(ev->attr.sample_regs_intr));
	if (type & PERF_SAMPLE_PHYS_ADDR)
		out->phys_addr = take_u64(&c);
	if (type & PERF_SAMPLE_CGROUP)
		take_u64(&c);
	if (type & PERF_SAMPLE_DATA_PAGE_SIZE)
		take_u64(&c);
	if (type & PERF_SAMPLE_CODE_PAGE_SIZE)
		take_u64(&c);
	return c.bad ? -EINVAL : 0;
}

int record_sample_id(const struct sp_event_set *set, const struct perf_event_header *rec, struct sp_sample_id *out)
{
	memset(out, 0, sizeof(*out));
	if (rec->size < sizeof(*rec) + 8)
		return -EINVAL;
	uint64_t id;
	memcpy(&id, (const char *)rec + rec->size - 8, 8);
	struct sp_event *ev = event_set_find(set, id);
	if (!ev)
		return -ENOENT;
	if (!ev->attr.sample_id_all)
		return -EINVAL;
	uint64_t type = ev->attr.sample_type;
	unsigned n = 1 + !!(type & PERF_SAMPLE_TID) + !!(type & PERF_SAMPLE_TIME) + !!(type & PERF_SAMPLE_ID) +
		     !!(type & PERF_SAMPLE_STREAM_ID) + !!(type & PERF_SAMPLE_CPU);
	if (rec->size < sizeof(*rec) + n * 8)
		return -EINVAL;
	struct cursor c = { (const unsigned char *)rec + rec->size - n * 8, (const unsigned char *)rec + rec->size,
			    false };
	if (type & PERF_SAMPLE_TID)
		take_pid_tid(&c, &out->pid, &out->tid);
	if (type & PERF_SAMPLE_TIME)
		out->time = take_u64(&c);
	if (type & PERF_SAMPLE_ID)
		take_u64(&c);
	if (type & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (type & PERF_SAMPLE_CPU)
		out->cpu = (uint32_t)take_u64(&c);
	out->event = ev;
	out->valid = true;
	return 0;
}

int record_time(const struct sp_event_set *set, const struct perf_event_header *rec, uint64_t *time)
{
	if (rec->type != PERF_RECORD_SAMPLE) {
		struct sp_sample_id sid;
		int err = record_sample_id(set, rec, &sid);
		if (err)
			return err;
		if (!(sid.event->attr.sample_type & PERF_SAMPLE_TIME))
			return -ENOENT;
		*time = sid.time;
		return 0;
	}
	/* IDENTIFIER, then IP and TID when present, then TIME */
	uint64_t id;
	if (rec->size < sizeof(*rec) + 8)
		return -EINVAL;
	memcpy(&id, rec + 1, 8);
	const struct sp_event *ev = event_set_find(set, id);
	if (!ev)
		return -ENOENT;
	uint64_t type = ev->attr.sample_type;
	if (!(type & PERF_SAMPLE_TIME))
		return -ENOENT;
	size_t off = sizeof(*rec) + 8 + ((type & PERF_SAMPLE_IP) ? 8 : 0) + ((type & PERF_SAMPLE_TID) ? 8 : 0);
	if (off + 8 > rec->size)
		return -EINVAL;
	memcpy(time, (const char *)rec + off, 8);
	return 0;
}

bool mmap2_build_id(const struct perf_event_header *rec, char hex[41])
{
	/* pid, tid, addr, len, pgoff: 32 bytes; then u8 size, u8 and u16 reserved, u8 build_id[20] */
	const uint8_t *id = (const uint8_t *)(rec + 1) + 32;
	if (rec->type != PERF_RECORD_MMAP2 || !(rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    rec->size < sizeof(*rec) + 64 || id[0] == 0 || id[0] > 20)
		return false;
	for (unsigned i = 0; i < id[0]; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[4 + i]);
	return true;
}
