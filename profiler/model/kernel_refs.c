/*
 * kernel_refs.c: the kernel addresses a recording refers to (kernel_refs.h).
 *
 * It runs on the writer's thread for every record of a recording, so it
 * is kept cheap: a sample's kernel addresses are mostly the ones of the
 * samples before it, and a small direct-mapped table of recent addresses
 * keeps those from the hash set.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/decode.h"
#include "sigprof/kernel/format.h"
#include "sigprof/model/kernel_refs.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

#define RECENT_SLOTS 4096u
/* The kernel's half of x86-64's address space, short of the callchain's context markers. */
#define KERNEL_LOW 0xffff800000000000ull
#define KERNEL_HIGH ((uint64_t)PERF_CONTEXT_MAX)

struct kernel_refs {
	struct sp_event_set events;
	struct u64_map seen;              /* address -> (void *)1 */
	uint64_t recent[RECENT_SLOTS];    /* addresses surely in seen; 0: empty */
};

struct kernel_refs *kernel_refs_new(void)
{
	return xcalloc(1, sizeof(struct kernel_refs));
}

static void add(struct kernel_refs *k, uint64_t addr)
{
	if (addr < KERNEL_LOW || addr >= KERNEL_HIGH)
		return;
	uint64_t *slot = &k->recent[hash_u64(addr) & (RECENT_SLOTS - 1)];
	if (*slot == addr)
		return;
	*slot = addr;
	if (!u64_map_get(&k->seen, addr))
		u64_map_put(&k->seen, addr, (void *)1);
}

static void see_sample(struct kernel_refs *k, const struct perf_event_header *rec)
{
	struct sp_sample s;
	if (sample_decode(&k->events, rec, &s) < 0)
		return;
	add(k, s.ip);
	add(k, s.addr);
	bool kernel = false;
	for (uint64_t i = 0; i < s.nr_callchain; i++) {
		uint64_t ip = s.callchain[i];
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (kernel) {
			add(k, ip);
			add(k, ip - 1);
		}
	}
	/* pointers in the raw fields, at any 4-byte offset (the raw data starts 4 bytes past an 8-byte boundary) */
	const char *raw = s.raw;
	for (uint32_t at = 0; raw && at + sizeof(uint64_t) <= s.raw_size; at += 4) {
		uint64_t v;
		memcpy(&v, raw + at, sizeof(v));
		add(k, v);
	}
}

void kernel_refs_see(void *refs, const struct perf_event_header *rec)
{
	struct kernel_refs *k = refs;
	if (rec->type == SP_REC_EVENT)
		event_set_add(&k->events, rec);
	else if (rec->type == PERF_RECORD_SAMPLE)
		see_sample(k, rec);
}

uint64_t *kernel_refs_addresses(const struct kernel_refs *k, size_t *n)
{
	uint64_t *addrs = xmalloc((k->seen.count ? k->seen.count : 1) * sizeof(*addrs));
	size_t pos = 0, count = 0;
	uint64_t key;
	void *value;
	while (u64_map_next(&k->seen, &pos, &key, &value))
		addrs[count++] = key;
	*n = count;
	return addrs;
}

void kernel_refs_free(struct kernel_refs *k)
{
	if (!k)
		return;
	event_set_free(&k->events);
	u64_map_free(&k->seen);
	free(k);
}
