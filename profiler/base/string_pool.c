/*
 * string_pool.c: interned strings in chunked storage.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/util.h"

/*
 * The string pool is an open-addressing table of pointers into chunked
 * storage; strings are never freed one by one.
 */
struct string_pool {
	const char **slots;
	size_t nslots; /* a power of two */
	size_t count;
	char **chunks;
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
};

struct string_pool *string_pool_new(void)
{
	struct string_pool *pool = xcalloc(1, sizeof(*pool));
	pool->nslots = 1024;
	pool->slots = xcalloc(pool->nslots, sizeof(*pool->slots));
	return pool;
}

static char *pool_store(struct string_pool *pool, const char *s, size_t len)
{
	if (!pool->nchunks || pool->chunk_used + len + 1 > pool->chunk_size) {
		size_t size = len + 1 > 65536 ? len + 1 : 65536;
		GROW(pool->chunks, pool->chunks_cap, pool->nchunks + 1);
		pool->chunks[pool->nchunks++] = xmalloc(size);
		pool->chunk_size = size;
		pool->chunk_used = 0;
	}
	char *dst = pool->chunks[pool->nchunks - 1] + pool->chunk_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	pool->chunk_used += len + 1;
	return dst;
}

const char *string_store(struct string_pool *pool, const char *s, size_t len)
{
	return pool_store(pool, s, len);
}

static void pool_rehash(struct string_pool *pool)
{
	size_t n = pool->nslots * 2;
	const char **slots = xcalloc(n, sizeof(*slots));
	for (size_t i = 0; i < pool->nslots; i++) {
		const char *s = pool->slots[i];
		if (!s)
			continue;
		size_t j = hash_bytes(s, strlen(s), 0) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
	}
	free(pool->slots);
	pool->slots = slots;
	pool->nslots = n;
}

const char *string_intern(struct string_pool *pool, const char *s)
{
	size_t len = strlen(s);
	size_t i = hash_bytes(s, len, 0) & (pool->nslots - 1);
	while (pool->slots[i]) {
		if (strcmp(pool->slots[i], s) == 0)
			return pool->slots[i];
		i = (i + 1) & (pool->nslots - 1);
	}
	const char *stored = pool_store(pool, s, len);
	pool->slots[i] = stored;
	if (++pool->count * 2 > pool->nslots)
		pool_rehash(pool);
	return stored;
}

void string_pool_free(struct string_pool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->nchunks; i++)
		free(pool->chunks[i]);
	free(pool->chunks);
	free(pool->slots);
	free(pool);
}
