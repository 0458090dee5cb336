/*
 * hashmap.c: hash_bytes() and u64_map, open addressing with linear probing.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/base/util.h"

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	/* FNV-1a, finished with a mixer so that short keys spread well. */
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return hash_u64(h);
}

static size_t slot_of(const struct u64_map *m, uint64_t key)
{
	size_t mask = m->nslots - 1;
	size_t i = hash_u64(key) & mask;
	while (m->values[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

void *u64_map_get(const struct u64_map *m, uint64_t key)
{
	if (!m->nslots)
		return NULL;
	return m->values[slot_of(m, key)];
}

static void u64_map_grow(struct u64_map *m)
{
	struct u64_map bigger = { .nslots = m->nslots ? m->nslots * 2 : 64 };
	bigger.keys = xcalloc(bigger.nslots, sizeof(uint64_t));
	bigger.values = xcalloc(bigger.nslots, sizeof(void *));
	for (size_t i = 0; i < m->nslots; i++)
		if (m->values[i]) {
			size_t j = slot_of(&bigger, m->keys[i]);
			bigger.keys[j] = m->keys[i];
			bigger.values[j] = m->values[i];
			bigger.count++;
		}
	u64_map_free(m);
	*m = bigger;
}

void *u64_map_put(struct u64_map *m, uint64_t key, void *value)
{
	if ((m->count + 1) * 2 > m->nslots)
		u64_map_grow(m);
	size_t i = slot_of(m, key);
	void *old = m->values[i];
	if (!old)
		m->count++;
	m->keys[i] = key;
	m->values[i] = value;
	return old;
}

void *u64_map_remove(struct u64_map *m, uint64_t key)
{
	if (!m->nslots)
		return NULL;
	size_t mask = m->nslots - 1;
	size_t i = slot_of(m, key);
	void *old = m->values[i];
	if (!old)
		return NULL;
	m->values[i] = NULL;
	m->count--;
	/* re-insert the rest of the probe run so lookups past the hole still work */
	for (size_t j = (i + 1) & mask; m->values[j]; j = (j + 1) & mask) {
		uint64_t k = m->keys[j];
		void *v = m->values[j];
		m->values[j] = NULL;
		size_t t = slot_of(m, k);
		m->keys[t] = k;
		m->values[t] = v;
	}
	return old;
}

bool u64_map_next(const struct u64_map *m, size_t *pos, uint64_t *key, void **value)
{
	while (*pos < m->nslots) {
		size_t i = (*pos)++;
		if (m->values[i]) {
			*key = m->keys[i];
			*value = m->values[i];
			return true;
		}
	}
	return false;
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
}

void u64_map_free_values(struct u64_map *m, void (*free_value)(void *value))
{
	for (size_t i = 0; i < m->nslots; i++)
		if (m->values[i])
			free_value(m->values[i]);
	u64_map_free(m);
}
