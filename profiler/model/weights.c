/*
 * weights.c: the per-thread, per-label weights of stacks (weights.h): an
 * open-addressing table of entries keyed by (collector, stack, pid, tid,
 * comm, signal, word).
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/util.h"
#include "sigprof/model/weights.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/hashmap.h"

void weight_table_init(struct weight_table *t)
{
	memset(t, 0, sizeof(*t));
	t->strings = string_pool_new();
}

void weight_table_free(struct weight_table *t)
{
	free(t->entries);
	free(t->slots);
	if (t->strings)
		string_pool_free(t->strings);
	memset(t, 0, sizeof(*t));
}

static uint64_t key_hash(const struct weight_key *k)
{
	uint64_t h = hash_u64((uint64_t)k->collector << 32 | k->stack);
	h = hash_u64(h ^ ((uint64_t)k->pid << 32 | k->tid));
	h = hash_u64(h ^ (uint64_t)(uintptr_t)k->comm);
	h = hash_u64(h ^ (uint64_t)(uint32_t)k->signal);
	return hash_u64(h ^ k->word);
}

/* comm is interned, so pointers compare. */
static bool key_equal(const struct weight_key *a, const struct weight_key *b)
{
	return a->collector == b->collector && a->stack == b->stack && a->pid == b->pid && a->tid == b->tid &&
	       a->comm == b->comm && a->signal == b->signal && a->word == b->word;
}

static void rehash(struct weight_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = xcalloc(n, sizeof(*slots));
	for (size_t i = 0; i < t->count; i++) {
		size_t s = key_hash(&t->entries[i].key) & (n - 1);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

void weight_table_add(struct weight_table *t, const struct weight_key *key, unsigned kind, uint64_t value)
{
	if (kind >= WEIGHT_MAX)
		return;
	struct weight_key k = *key;
	k.comm = k.comm ? string_intern(t->strings, k.comm) : NULL;
	if ((t->count + 1) * 2 > t->nslots)
		rehash(t);
	size_t s = key_hash(&k) & (t->nslots - 1);
	while (t->slots[s] && !key_equal(&t->entries[t->slots[s] - 1].key, &k))
		s = (s + 1) & (t->nslots - 1);
	if (!t->slots[s]) {
		GROW(t->entries, t->cap, t->count + 1);
		memset(&t->entries[t->count], 0, sizeof(t->entries[t->count]));
		t->entries[t->count].key = k;
		t->slots[s] = (uint32_t)++t->count;
	}
	t->entries[t->slots[s] - 1].values[kind] += value;
}

void weight_table_remap(struct weight_table *t, uint32_t (*remap)(void *ctx, uint32_t collector, uint32_t stack),
			void *ctx)
{
	struct weight_entry *old = t->entries;
	size_t n = t->count;
	t->entries = NULL;
	t->count = t->cap = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	for (size_t i = 0; i < n; i++) {
		struct weight_key k = old[i].key;
		k.stack = remap(ctx, k.collector, k.stack);
		for (unsigned kind = 0; kind < WEIGHT_MAX; kind++)
			if (old[i].values[kind])
				weight_table_add(t, &k, kind, old[i].values[kind]);
	}
	free(old);
}
