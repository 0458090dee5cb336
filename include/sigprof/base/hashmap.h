/*
 * hashmap.h: 64-bit hashing and u64_map, the open-addressing map from a u64 key
 * to a pointer that the analyzers and the symbolizer keep their state in.
 */
#ifndef SIGPROF_HASHMAP_H
#define SIGPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 64-bit hashing for the interning tables. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * u64_map: an open-addressing map from a u64 key (a tid, an address) to a
 * pointer, for the analyzers' per-task and per-word state and the
 * symbolizer's tables.
 */
struct u64_map {
	uint64_t *keys;
	void **values;   /* NULL: empty slot */
	size_t nslots, count;
};

/* The value for key, or NULL. */
void *u64_map_get(const struct u64_map *m, uint64_t key);
/* Set key's value (non-NULL); returns the previous value or NULL. */
void *u64_map_put(struct u64_map *m, uint64_t key, void *value);
/* Remove key; returns its value or NULL. */
void *u64_map_remove(struct u64_map *m, uint64_t key);
/* Iterate: *pos starts at 0; returns false at the end. */
bool u64_map_next(const struct u64_map *m, size_t *pos, uint64_t *key, void **value);
/* Free the table (not the values). */
void u64_map_free(struct u64_map *m);
/* Free each value with free_value (free, or a destructor), then the table. */
void u64_map_free_values(struct u64_map *m, void (*free_value)(void *value));

#endif
