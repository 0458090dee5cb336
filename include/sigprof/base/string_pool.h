/*
 * string_pool.h: interned strings, one copy of each, freed all at once: the
 * millions of frame and file names a report handles.
 */
#ifndef SIGPROF_STRING_POOL_H
#define SIGPROF_STRING_POOL_H

#include <stddef.h>

/* Interned strings: equal strings get the same pointer, alive until string_pool_free(). */
struct string_pool;
struct string_pool *string_pool_new(void);
const char *string_intern(struct string_pool *pool, const char *s);
/* A copy of s[0..len) in the pool's storage, NUL-terminated, without interning: for many unique strings. */
const char *string_store(struct string_pool *pool, const char *s, size_t len);
void string_pool_free(struct string_pool *pool);

#endif
