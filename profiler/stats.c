/*
 * stats.c: duration histograms and the u64 map (stats.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/stats.h"
#include "sigprof/util.h"

/* Values below DURATION_SUB_BUCKETS get a bucket each; above, 64 buckets per power of two. */
static unsigned bucket_of(uint64_t v)
{
	if (v < DURATION_SUB_BUCKETS)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);        /* >= 6 */
	unsigned shift = msb - 6;                                 /* keep 6 bits below the msb */
	unsigned sub = (unsigned)(v >> shift) & (DURATION_SUB_BUCKETS - 1);
	return (shift + 1) * DURATION_SUB_BUCKETS + sub;
}

/* The middle of a bucket's value range. */
static uint64_t bucket_value(unsigned b)
{
	if (b < DURATION_SUB_BUCKETS)
		return b;
	unsigned shift = b / DURATION_SUB_BUCKETS - 1;
	uint64_t sub = b % DURATION_SUB_BUCKETS;
	uint64_t low = (DURATION_SUB_BUCKETS + sub) << shift;
	return low + ((1ull << shift) >> 1);
}

void duration_add(struct duration_stats *d, uint64_t value)
{
	if (!d->histogram)
		d->histogram = xcalloc(DURATION_BUCKETS, sizeof(uint32_t));
	if (!d->count || value < d->min)
		d->min = value;
	if (value > d->max)
		d->max = value;
	d->count++;
	d->total += value;
	d->histogram[bucket_of(value)]++;
}

void duration_merge(struct duration_stats *dst, const struct duration_stats *src)
{
	if (!src->count)
		return;
	if (!dst->histogram)
		dst->histogram = xcalloc(DURATION_BUCKETS, sizeof(uint32_t));
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->total += src->total;
	for (unsigned b = 0; b < DURATION_BUCKETS; b++)
		dst->histogram[b] += src->histogram[b];
}

uint64_t duration_quantile(const struct duration_stats *d, double q)
{
	if (!d->count)
		return 0;
	if (q <= 0)
		return d->min;
	if (q >= 1)
		return d->max;
	uint64_t rank = (uint64_t)ceil(q * (double)d->count);
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < DURATION_BUCKETS; b++) {
		seen += d->histogram[b];
		if (seen >= rank) {
			uint64_t v = bucket_value(b);
			return v < d->min ? d->min : v > d->max ? d->max : v;
		}
	}
	return d->max;
}

double duration_mean(const struct duration_stats *d)
{
	return d->count ? (double)d->total / (double)d->count : 0.0;
}

void duration_free(struct duration_stats *d)
{
	free(d->histogram);
	memset(d, 0, sizeof(*d));
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
