/*
 * durations.c: duration histograms (duration_stats) and the slowest event of a
 * kind (slowest_event): durations.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/durations.h"
#include "sigprof/base/util.h"

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

void slowest_event_note(struct slowest_event *s, uint64_t start, uint64_t end, uint32_t pid, uint32_t tid)
{
	uint64_t ns = end > start ? end - start : 0;
	if (s->start && ns <= s->ns)
		return;
	*s = (struct slowest_event){ .ns = ns, .start = start, .end = end, .pid = pid, .tid = tid };
}
