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

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/model/profile.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/commands/report.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/term.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

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

/* The sample_id trailer (sample_id_all) of a non-sample record: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
struct trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t sample_id; /* PERF_SAMPLE_ID */
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t id;        /* PERF_SAMPLE_IDENTIFIER */
};

static inline void bb_trailer(struct byte_builder *b, uint64_t sample_type, const struct trailer *t)
{
	if (sample_type & PERF_SAMPLE_TID)
		bb_u32_pair(b, t->pid, t->tid);
	if (sample_type & PERF_SAMPLE_TIME)
		bb_u64(b, t->time);
	if (sample_type & PERF_SAMPLE_ID)
		bb_u64(b, t->sample_id);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		bb_u64(b, t->stream_id);
	if (sample_type & PERF_SAMPLE_CPU)
		bb_u32_pair(b, t->cpu, 0);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		bb_u64(b, t->id);
}

/* A PERF_RECORD_MMAP2 record as the kernel writes it (device and inode made up), trailer included. */
static inline void bb_mmap2(struct byte_builder *b, uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t prot,
			    uint32_t flags, const char *file, uint64_t sample_type, const struct trailer *t)
{
	size_t at = bb_begin_record(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	bb_u32_pair(b, t->pid, t->tid);
	bb_u64(b, addr);
	bb_u64(b, len);
	bb_u64(b, pgoff);
	bb_u32_pair(b, 8, 1); /* maj, min */
	bb_u64(b, 123456);    /* ino */
	bb_u64(b, 0);         /* ino_generation */
	bb_u32_pair(b, prot, flags);
	bb_bytes(b, file, strlen(file) + 1);
	bb_pad8(b);
	bb_trailer(b, sample_type, t);
	bb_end_record(b, at);
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

/* ---- running the reference tools (readelf, nm, addr2line, c++filt) ---- */

typedef void (*line_handler)(const char *line, void *context);

/* Feed each line that command prints to handle; the command must succeed. */
static inline void each_output_line(const char *command, line_handler handle, void *context)
{
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe, "cannot run: %s", command);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, pipe) >= 0)
		handle(line, context);
	free(line);
	cr_assert_eq(pclose(pipe), 0, "failed: %s", command);
}

/* One symbol as `nm -S` reports it. */
struct nm_symbol {
	const char *name;
	uint64_t address, size;
	bool found;
};

static inline void take_nm_row(const char *line, void *context)
{
	struct nm_symbol *symbol = context;
	unsigned long long address, size;
	char type, name[256];
	if (sscanf(line, "%llx %llx %c %255s", &address, &size, &type, name) == 4 && strcmp(name, symbol->name) == 0) {
		symbol->address = address;
		symbol->size = size;
		symbol->found = true;
	}
}

static inline struct nm_symbol nm_symbol(const char *path, const char *name)
{
	struct nm_symbol symbol = { .name = name };
	char command[PATH_MAX + 32];
	snprintf(command, sizeof(command), "nm -S --defined-only %s", path);
	each_output_line(command, take_nm_row, &symbol);
	cr_assert(symbol.found, "nm does not list %s in %s", name, path);
	return symbol;
}

/* A PT_LOAD program header as `readelf -lW` reports it. */
struct load_segment {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t prot; /* PROT_READ/WRITE/EXEC from its flags */
};

struct load_segments {
	struct load_segment seg[16];
	size_t count;
	bool relocatable; /* ELF type DYN (PIE): loaded at a base of the loader's choosing */
};

static inline void take_load_row(const char *line, void *context)
{
	struct load_segments *l = context;
	unsigned long long offset, vaddr, paddr, filesz, memsz;
	char flags[8] = "";
	if (strstr(line, "Elf file type is DYN"))
		l->relocatable = true;
	if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %3[RWE ]", &offset, &vaddr, &paddr, &filesz,
		   &memsz, flags) < 5 || l->count == 16)
		return;
	struct load_segment *s = &l->seg[l->count++];
	*s = (struct load_segment){ offset, vaddr, filesz, memsz, 0 };
	s->prot = (strchr(flags, 'R') ? 1u : 0u) | (strchr(flags, 'W') ? 2u : 0u) | (strchr(flags, 'E') ? 4u : 0u);
}

static inline struct load_segments load_segments(const char *path)
{
	struct load_segments l = { .count = 0 };
	char command[PATH_MAX + 32];
	snprintf(command, sizeof(command), "readelf -lW %s", path);
	each_output_line(command, take_load_row, &l);
	cr_assert_gt(l.count, 0, "readelf lists no LOAD segment in %s", path);
	return l;
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

/* ---- reports ---- */

/*
 * The report of the recording at path in format, into a malloc'd string:
 * top 5 functions, 3 stacks a path, 8 frames a stack, text within width
 * columns (0: no limit, as into a pipe).  JSON comes without
 * the writer's spaces and newlines, so that a test can look for a whole
 * object.
 */
static inline char *report_of_width(const char *path, enum report_format format, unsigned width)
{
	struct profile p;
	char err[256] = "";
	struct profile_options popts = { .collectors = collector_table, .ncollectors = collector_count };
	cr_assert_eq(profile_load(path, &popts, &p, err, sizeof(err)), 0, "%s", err);
	/* the header line by line (--header): the tests of its lines read them there */
	struct report_options o = { .input = path, .format = format, .full_header = true,
				    .view = { .top = 5, .stacks_per_path = 3, .max_frames = 8, .width = width } };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert_not_null(out);
	if (format == REPORT_JSON)
		report_json(&p, &o, out);
	else
		report_text(&p, &o, out);
	fclose(out);
	profile_free(&p);
	if (format == REPORT_JSON) {
		size_t k = 0;
		for (size_t i = 0; text[i]; i++)
			if (text[i] != ' ' && text[i] != '\n')
				text[k++] = text[i];
		text[k] = '\0';
	}
	return text;
}

/* report_of_width() without a width: every line whole, as into a pipe. */
static inline char *report_of(const char *path, enum report_format format)
{
	return report_of_width(path, format, 0);
}

/* The widest line of text, in terminal columns, up to the first line that starts with stop (NULL: to the end). */
static inline size_t widest_line_before(const char *text, const char *stop)
{
	size_t widest = 0;
	for (const char *line = text; *line;) {
		if (stop && strncmp(line, stop, strlen(stop)) == 0)
			break;
		size_t len = strcspn(line, "\n");
		char *copy = strndup(line, len);
		size_t cols = term_columns(copy);
		free(copy);
		widest = cols > widest ? cols : widest;
		line += len + (line[len] == '\n');
	}
	return widest;
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

/* A malloc'd mkstemp/mkdtemp template: prefix, then the six 'X' those calls replace. */
static inline char *temp_template(const char *prefix)
{
	size_t n = strlen(prefix);
	char *template = malloc(n + 7);
	cr_assert_not_null(template);
	memcpy(template, prefix, n);
	memset(template + n, 'X', 6);
	template[n + 6] = '\0';
	return template;
}

/* A temporary file holding size bytes of data; returns its malloc'd path (unlink and free it). */
static inline char *temp_file_with(const void *data, size_t size)
{
	char *path = temp_template("/tmp/sigprof-unit-file-");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0, "mkstemp failed");
	cr_assert_eq(write(fd, data, size), (ssize_t)size);
	close(fd);
	return path;
}

static inline char *temp_dir_new(void)
{
	char *dir = temp_template("/tmp/sigprof-unit-");
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

/* mkdir -p: path and every missing parent. */
static inline void make_directories(const char *path)
{
	char *copy = strdup(path);
	cr_assert_not_null(copy);
	for (char *slash = strchr(copy + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(copy, 0755);
		*slash = '/';
	}
	cr_assert(mkdir(copy, 0755) == 0 || errno == EEXIST, "mkdir %s failed", copy);
	free(copy);
}

/* The whole file, malloc'd, its size in *n. */
/* The fields every tracepoint's tracefs format begins with, as Linux writes them, and the blank line after. */
#define TRACEPOINT_COMMON_FIELDS                                                                              \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                                \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                                \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"                        \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                                            \
	"\n"

/* A text file, NUL-terminated (the test fails when it cannot be read). */
static inline char *read_text_file(const char *path)
{
	size_t len;
	char *text = read_whole_file(path, &len);
	cr_assert_not_null(text, "cannot read %s", path);
	return text;
}

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

/*
 * A file of a fake sysfs PMU tree: root/pmu/rel holding text (type,
 * format/FIELD, events/ALIAS), the directories made on the way.
 */
static inline void sysfs_pmu_file(const char *root, const char *pmu, const char *rel, const char *text)
{
	char *dir = path_join(root, pmu);
	mkdir(dir, 0755);
	char *sub = path_join(dir, "format");
	mkdir(sub, 0755);
	free(sub);
	sub = path_join(dir, "events");
	mkdir(sub, 0755);
	free(sub);
	char *file = path_join(dir, rel);
	write_file(file, text, strlen(text));
	free(file);
	free(dir);
}

/* Copy the file from to the path to, plus extra bytes at its end (NULL, 0: none). */
static inline void copy_file_with(const char *from, const char *to, const void *extra, size_t extra_size)
{
	size_t n;
	unsigned char *data = read_file(from, &n);
	data = realloc(data, n + extra_size + 1);
	cr_assert_not_null(data);
	if (extra_size)
		memcpy(data + n, extra, extra_size);
	write_file(to, data, n + extra_size);
	free(data);
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
