/*
 * unit_helpers.h: small helpers shared by the unit tests (tests/unit/).
 *
 * A byte builder to lay out kernel and sigprof records field by field, as
 * the documentation describes them (so the tests never borrow the layout
 * from the code under test), and temporary directories that a test removes
 * when it is done.  Everything is static inline: each test file uses only
 * part of it.
 */
#ifndef SIGPROF_UNIT_HELPERS_H
#define SIGPROF_UNIT_HELPERS_H

#include <ftw.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize.h"

/* ---- laying out records ---- */

struct byte_builder {
	unsigned char *buf;
	size_t len, cap;
};

static inline void bb_bytes(struct byte_builder *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n)
			cap *= 2;
		b->buf = realloc(b->buf, cap);
		cr_assert_not_null(b->buf);
		b->cap = cap;
	}
	if (n)
		memcpy(b->buf + b->len, data, n);
	b->len += n;
}

static inline void bb_u64(struct byte_builder *b, uint64_t v)
{
	bb_bytes(b, &v, sizeof(v));
}

static inline void bb_u32(struct byte_builder *b, uint32_t v)
{
	bb_bytes(b, &v, sizeof(v));
}

static inline void bb_zeros(struct byte_builder *b, size_t n)
{
	static const unsigned char zeros[64];
	while (n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
		bb_bytes(b, zeros, k);
		n -= k;
	}
}

/* Pad with zeros to a multiple of 8 bytes. */
static inline void bb_pad8(struct byte_builder *b)
{
	bb_zeros(b, (8 - b->len % 8) % 8);
}

/* Two u32 in one u64, the first in the low half (pid/tid, cpu/res in kernel records). */
static inline void bb_u32_pair(struct byte_builder *b, uint32_t low, uint32_t high)
{
	bb_u32(b, low);
	bb_u32(b, high);
}

/* Start a record: a perf_event_header whose size bb_end_record() fills in. */
static inline size_t bb_begin_record(struct byte_builder *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;
	bb_u32(b, type);
	uint16_t m = misc, size = 0;
	bb_bytes(b, &m, sizeof(m));
	bb_bytes(b, &size, sizeof(size));
	return at;
}

static inline void bb_end_record(struct byte_builder *b, size_t at)
{
	size_t size = b->len - at;
	cr_assert_leq(size, 0xffff, "record of %zu bytes does not fit a u16 size", size);
	uint16_t s = (uint16_t)size;
	memcpy(b->buf + at + 6, &s, sizeof(s));
}

static inline void bb_free(struct byte_builder *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* A malloc'd copy of exactly n bytes, so that ASan catches any read past them. */
static inline void *exact_copy(const void *data, size_t n)
{
	void *p = malloc(n ? n : 1);
	cr_assert_not_null(p);
	if (n)
		memcpy(p, data, n);
	return p;
}

/* ---- /proc/PID/maps ---- */

/* One line of a maps file, as an MMAP2 record would carry it. */
struct maps_line {
	uint64_t start, end, offset;
	uint32_t prot; /* PROT_* */
	char name[4096]; /* the path, [stack], ..., or //anon for anonymous memory */
};

/* The next mapping of a maps file; false at its end. */
static inline bool maps_next(FILE *f, struct maps_line *m)
{
	char line[4096 + 128];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &name_at) < 4)
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = '\0';
		m->start = start;
		m->end = end;
		m->offset = offset;
		m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			  (perms[2] == 'x' ? PROT_EXEC : 0);
		snprintf(m->name, sizeof(m->name), "%s", *name ? name : "//anon");
		return true;
	}
	return false;
}

/* A process table holding, for pid, every mapping of the maps file at path. */
static inline struct proc_table *proc_table_from_maps(const char *path, uint32_t pid)
{
	struct proc_table *pt = proc_table_new();
	FILE *f = fopen(path, "re");
	cr_assert_not_null(f, "cannot open %s", path);
	struct maps_line m;
	while (maps_next(f, &m))
		proc_table_mmap(pt, pid, m.start, m.end - m.start, m.offset, m.prot, MAP_PRIVATE, m.name);
	fclose(f);
	return pt;
}

/* ---- temporary directories ---- */

/* A cpu-clock sampling attr with the given sample_type and sample_id_all, as record lays one out. */
static inline struct perf_event_attr cpu_clock_attr(uint64_t sample_type)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000000;
	attr.sample_type = sample_type;
	attr.sample_id_all = 1;
	return attr;
}

/* A temporary file holding size bytes of data; returns its malloc'd path (unlink and free it). */
static inline char *temp_file_with(const void *data, size_t size)
{
	char *path = strdup("/tmp/sigprof-unit-file-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0, "mkstemp failed");
	cr_assert_eq(write(fd, data, size), (ssize_t)size);
	close(fd);
	return path;
}

static inline char *temp_dir_new(void)
{
	char *dir = strdup("/tmp/sigprof-unit-XXXXXX");
	cr_assert_not_null(dir);
	cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
	return dir;
}

static inline int temp_dir_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove dir and everything in it, and free the name. */
static inline void temp_dir_remove(char *dir)
{
	if (!dir)
		return;
	nftw(dir, temp_dir_remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* dir/name, malloc'd. */
static inline char *path_join(const char *dir, const char *name)
{
	char *p = NULL;
	cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
	return p;
}

static inline void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot create %s", path);
	cr_assert_eq(fwrite(data, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

/* The whole file, malloc'd, its size in *n. */
static inline unsigned char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	struct byte_builder b = { 0 };
	unsigned char chunk[65536];
	size_t got;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		bb_bytes(&b, chunk, got);
	fclose(f);
	*n = b.len;
	if (!b.buf)
		b.buf = calloc(1, 1);
	return b.buf;
}

/* A criterion suite whose tests each get a fresh temporary directory, `dir`, removed after the test. */
#define TEMP_DIR_SUITE(name)                          \
	static char *dir;                             \
	static void make_dir(void)                    \
	{                                             \
		dir = temp_dir_new();                 \
	}                                             \
	static void remove_dir(void)                  \
	{                                             \
		temp_dir_remove(dir);                 \
		dir = NULL;                           \
	}                                             \
	TestSuite(name, .init = make_dir, .fini = remove_dir)

#endif
