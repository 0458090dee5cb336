/*
 * perfdata.c: a perf.data file read as the records of a sigprof.data file
 * (perfdata.h; the format as perf documents it, and what is done with each
 * part of it: docs/perfdata.md).
 *
 * File mode: a 104-byte header gives the attrs section (one perf_event_attr
 * and a section of ids per event), the data section (the records) and a
 * bitmap of feature sections that follow the data (hostname, os release,
 * cmdline, event names, build-ids, tracing data, ...).  Pipe mode: a
 * 16-byte header, then records only; what file mode keeps in its header
 * comes as records of perf's own (HEADER_ATTR, EVENT_TYPE, TRACING_DATA,
 * BUILD_ID, HEADER_FEATURE, EVENT_UPDATE) before the kernel records.
 *
 * The reader collects all of that first (file mode: from the sections;
 * pipe mode: until the first kernel record) and hands it on as one prologue
 * of META, TRACEPOINT and EVENT records; then the kernel records, one at a
 * time.  sigprof's decoder finds a record's event by PERF_SAMPLE_IDENTIFIER
 * (a sample's first u64, another record's last); a perf.data event that was
 * not opened with it gets it here: the id (from PERF_SAMPLE_ID's place, or
 * the only event's) is put where IDENTIFIER would be, and the EVENT's
 * sample_type says IDENTIFIER.  PERF_RECORD_COMPRESSED(2) records are
 * decompressed with one zstd stream for the file, as perf writes them, and
 * the records inside are read as if they were in the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"
#include "sigprof/kernel/format.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/model/decode.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/perfdata.h"

/* ---- the format (tools/perf/Documentation/perf.data-file-format.txt) ---- */

#define PERF_MAGIC2 0x32454c4946524550ull /* "PERFILE2" read as a little-endian u64 */
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ull
#define PERF_MAGIC1 0x454c494646524550ull /* "PERFFILE": perf before 3.3, the same layout */

struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;      /* of this header: 104 */
	uint64_t attr_size; /* of one entry of the attrs section: an attr and a section of ids */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types; /* unused since perf 3.x */
	uint64_t features[4];                 /* bit N: feature section N is present */
};

struct perf_pipe_file_header {
	uint64_t magic;
	uint64_t size; /* 16 */
};

/* Feature sections (header.h's HEADER_*). */
enum {
	FEAT_TRACING_DATA = 1,
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21,
	FEAT_COMPRESSED = 27,
	FEAT_BITS = 256,
};

/* perf's own record types (after the kernel's, which stay below 64). */
enum {
	PERF_USER_FIRST = 64,
	PERF_HEADER_ATTR = 64,
	PERF_HEADER_EVENT_TYPE = 65,
	PERF_HEADER_TRACING_DATA = 66,
	PERF_HEADER_BUILD_ID = 67,
	PERF_FINISHED_ROUND = 68,
	PERF_ID_INDEX = 69,
	PERF_AUXTRACE = 71,
	PERF_EVENT_UPDATE = 78,
	PERF_HEADER_FEATURE = 80,
	PERF_COMPRESSED = 81,
	PERF_COMPRESSED2 = 83,
};

#define EVENT_UPDATE_NAME 2
#define MISC_BUILD_ID_SIZE (1u << 15) /* a BUILD_ID record's byte 20 of build_id[24] is its size */

/* ---- bounds ---- */
#define READ_BUFFER_SIZE (1u << 20)
#define RECORD_MAX 65536u
#define FEATURE_MAX (64u << 20)      /* bytes of one feature section (tracing data holds kallsyms: MBs) */
#define MAX_ATTRS 4096u
#define MAX_IDS_PER_ATTR (1u << 16)
#define INNER_MAX (256u << 20)       /* bytes one compressed record may decompress to */
#define SYNTH_ID_BASE 0xfffffffffff00000ull /* ids given to events the file lists none for */

struct perf_attr {
	struct perf_event_attr attr;
	uint64_t *ids;
	uint32_t nr_ids;
	char name[SP_EVENT_NAME_LEN];
	bool named;   /* by EVENT_DESC or EVENT_UPDATE: perf's own name */
	bool emitted; /* its EVENT record was handed on */
};

struct tp_format {
	uint64_t id;
	char system[32];
	char name[64];
	char *text;
	size_t len;
	bool emitted;
	bool parses; /* libtraceevent reads it (checked before it is handed on) */
};

struct perfdata_reader {
	int fd;
	bool pipe;
	/* the record stream: file mode from data.offset to limit by pread, pipe mode by read */
	char *buf;
	size_t start, end;
	uint64_t buf_offset; /* stream offset of buf[0] */
	uint64_t pos;        /* file offset of the next byte to fetch (file mode) */
	uint64_t limit;      /* file offset where the data section ends (file mode) */
	bool eof;
	const unsigned char *prefix; /* pipe mode: bytes read before the reader had the fd */
	size_t prefix_len, prefix_pos;
	unsigned char prefix_copy[64];
	uint64_t file_size;
	/* what the header says */
	struct perf_attr *attrs;
	size_t nattrs, attrs_cap;
	struct u64_map by_id; /* id -> attr index + 1 */
	bool ids_known;
	struct tp_format *formats;
	size_t nformats, formats_cap;
	struct { uint64_t config; char name[64]; } *event_types;
	size_t nevent_types, event_types_cap;
	char perf_version[64];
	char arch[64];
	/* the command perf forked (the workload): its comm after exec, from the cmdline feature's argv after "--" */
	char command_comm[16];
	bool workload_found;
	bool compressed_feature;
	bool features_cut; /* a feature section lies past the end of the file */
	char *kallsyms;    /* the recording machine's /proc/kallsyms, when the tracing data holds a copy */
	size_t kallsyms_len;
	/* out: prologue records, then one record at a time */
	char *pending;
	size_t pending_len, pending_cap, pending_pos;
	bool prologue_done;
	bool finish_done;
	char *out;   /* a rewritten kernel record */
	char *held;  /* pipe mode: the first kernel record, held while the prologue goes out */
	char *aligned; /* a record copied out of a misaligned place (aligned_record()) */
	bool holding;
	/* PERF_RECORD_COMPRESSED: the decompressed records not yet read */
	ZSTD_DCtx *zstd;
	char *inner;
	size_t inner_start, inner_end, inner_cap;
	/* the events as handed on (to find a rewritten record's time) */
	struct sp_event_set events;
	uint64_t first_time, last_time;
	uint64_t kernel_records, samples, lost, lost_samples, data_bytes, oversized;
	uint64_t record_offset;
	char problem[200];
	bool damaged;
};

bool perfdata_magic(const void *first8, size_t len)
{
	uint64_t m;
	if (len < 8)
		return false;
	memcpy(&m, first8, 8);
	return m == PERF_MAGIC2 || m == PERF_MAGIC2_SWAPPED || m == PERF_MAGIC1;
}

static int stop(struct perfdata_reader *r, bool damaged, const char *fmt, unsigned long long at)
{
	if (!r->problem[0]) {
		snprintf(r->problem, sizeof(r->problem), fmt, at);
		r->damaged = damaged;
	}
	r->eof = true;
	return 0;
}

/* ---- bytes in ---- */

static ssize_t read_some(int fd, void *data, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, data, len);
		if (n >= 0 || errno != EINTR)
			return n < 0 ? -errno : n;
	}
}

/* Fill the buffer so that at least want bytes are unread, unless the stream ends first. */
static int stream_fill(struct perfdata_reader *r, size_t want)
{
	if (r->end - r->start >= want || r->eof)
		return 0;
	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->buf_offset += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	while (r->end - r->start < want && !r->eof) {
		size_t room = READ_BUFFER_SIZE + RECORD_MAX - r->end;
		ssize_t n;
		if (r->pipe) {
			if (r->prefix_pos < r->prefix_len) {
				n = (ssize_t)(r->prefix_len - r->prefix_pos < room ? r->prefix_len - r->prefix_pos : room);
				memcpy(r->buf + r->end, r->prefix + r->prefix_pos, (size_t)n);
				r->prefix_pos += (size_t)n;
			} else {
				n = read_some(r->fd, r->buf + r->end, room);
			}
		} else {
			if (r->limit - r->pos < room)
				room = (size_t)(r->limit - r->pos);
			n = room ? pread(r->fd, r->buf + r->end, room, (off_t)r->pos) : 0;
			if (n < 0)
				n = -errno;
		}
		if (n < 0)
			return (int)n;
		if (n == 0)
			r->eof = true;
		r->end += (size_t)n;
		r->pos += (size_t)n;
	}
	return 0;
}

/* Copy len bytes of the stream out (pipe mode's TRACING_DATA and AUXTRACE payloads); dst NULL skips them. */
static int stream_take(struct perfdata_reader *r, char *dst, uint64_t len)
{
	while (len) {
		int err = stream_fill(r, 1);
		if (err)
			return err;
		size_t avail = r->end - r->start;
		if (!avail)
			return -ENODATA;
		size_t n = avail < len ? avail : (size_t)len;
		if (dst) {
			memcpy(dst, r->buf + r->start, n);
			dst += n;
		}
		r->start += n;
		len -= n;
	}
	return 0;
}

/* ---- records out ---- */

static void pending_add(struct perfdata_reader *r, const void *rec, size_t len)
{
	GROW(r->pending, r->pending_cap, r->pending_len + len);
	memcpy(r->pending + r->pending_len, rec, len);
	r->pending_len += len;
}

static void emit_meta(struct perfdata_reader *r, const char *key, const char *const *values, uint32_t nvalues)
{
	size_t len;
	char *rec = sp_meta_record(key, values, nvalues, &len);
	if (!rec)
		return; /* a cmdline of more than 64 KiB: left out */
	pending_add(r, rec, len);
	free(rec);
}

static void emit_meta1(struct perfdata_reader *r, const char *key, const char *value)
{
	emit_meta(r, key, &value, 1);
}

/* ---- feature sections ---- */

struct bytes {
	const unsigned char *p, *end;
	bool bad;
};

static uint32_t take_u32(struct bytes *b)
{
	uint32_t v = 0;
	if (b->end - b->p < 4) {
		b->bad = true;
		return 0;
	}
	memcpy(&v, b->p, 4);
	b->p += 4;
	return v;
}

static uint64_t take_u64(struct bytes *b)
{
	uint64_t v = 0;
	if (b->end - b->p < 8) {
		b->bad = true;
		return 0;
	}
	memcpy(&v, b->p, 8);
	b->p += 8;
	return v;
}

static const unsigned char *take(struct bytes *b, uint64_t n)
{
	if ((uint64_t)(b->end - b->p) < n) {
		b->bad = true;
		return NULL;
	}
	const unsigned char *at = b->p;
	b->p += n;
	return at;
}

/* A perf_header_string (u32 len, then len bytes, NUL-padded) into out; false when malformed. */
static bool take_string(struct bytes *b, char *out, size_t outlen)
{
	uint32_t len = take_u32(b);
	const unsigned char *s = take(b, len);
	if (!s)
		return false;
	size_t n = strnlen((const char *)s, len);
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* src into dst, cut to fit. */
static void copy_string(char *dst, size_t dstlen, const char *src)
{
	size_t n = strnlen(src, dstlen - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Printable text only: a string from the file goes into reports. */
static void make_printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

static struct perf_attr *attr_of_id(const struct perfdata_reader *r, uint64_t id)
{
	void *v = u64_map_get(&r->by_id, id);
	return v ? &r->attrs[(uintptr_t)v - 1] : NULL;
}

static void index_ids(struct perfdata_reader *r, size_t a)
{
	for (uint32_t k = 0; k < r->attrs[a].nr_ids; k++)
		if (!u64_map_get(&r->by_id, r->attrs[a].ids[k]))
			u64_map_put(&r->by_id, r->attrs[a].ids[k], (void *)(uintptr_t)(a + 1));
}

static void name_attr(struct perf_attr *a, const char *name)
{
	copy_string(a->name, sizeof(a->name), name);
	make_printable(a->name);
	a->named = true;
}

/* EVENT_DESC: u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, string, u64 ids[nr_ids]. */
static void parse_event_desc(struct perfdata_reader *r, struct bytes *b)
{
	uint32_t nr = take_u32(b), attr_size = take_u32(b);
	if (b->bad || attr_size < PERF_ATTR_SIZE_VER0 || attr_size > 4096 || nr > MAX_ATTRS)
		return;
	for (uint32_t e = 0; e < nr && !b->bad; e++) {
		take(b, attr_size);
		uint32_t nr_ids = take_u32(b);
		char name[256];
		if (!take_string(b, name, sizeof(name)))
			return;
		const unsigned char *ids = take(b, (uint64_t)nr_ids * 8);
		if (!ids)
			return;
		struct perf_attr *a = NULL;
		for (uint32_t k = 0; k < nr_ids && !a; k++) {
			uint64_t id;
			memcpy(&id, ids + 8 * k, 8);
			a = attr_of_id(r, id);
		}
		if (!a && nr == r->nattrs)
			a = &r->attrs[e]; /* no ids to match (one event without PERF_SAMPLE_ID): the same order */
		if (a)
			name_attr(a, name);
	}
}

static void add_build_id(struct perfdata_reader *r, const unsigned char *rec, size_t len)
{
	/* struct { header; s32 pid; u8 build_id[24]; char filename[]; } */
	if (len < 36 + 2)
		return;
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	const unsigned char *id = rec + 12;
	unsigned size = 20;
	if (h.misc & MISC_BUILD_ID_SIZE)
		size = id[20] <= 20 ? id[20] : 20;
	else
		while (size && id[size - 1] == 0)
			size--; /* older perf: 20 bytes, zero-padded */
	char file[4096];
	size_t n = strnlen((const char *)rec + 36, len - 36);
	if (!size || n == 0 || n >= sizeof(file) || rec[36] != '/')
		return; /* [kernel.kallsyms], [vdso]: not files sigprof opens */
	memcpy(file, rec + 36, n);
	file[n] = '\0';
	char hex[41];
	for (unsigned i = 0; i < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	const char *values[2] = { file, hex };
	emit_meta(r, "build_id", values, 2);
}

/* BUILD_ID: a sequence of build_id_event records. */
static void parse_build_ids(struct perfdata_reader *r, struct bytes *b)
{
	while (b->end - b->p >= (ptrdiff_t)sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, b->p, sizeof(h));
		if (h.size < sizeof(h) || h.size > b->end - b->p)
			return;
		add_build_id(r, b->p, h.size);
		b->p += h.size;
	}
}

/* One format file of the tracing data: its "name:" and "ID:" lines. */
static void add_format(struct perfdata_reader *r, const char *system, const unsigned char *text, uint64_t len)
{
	if (len == 0 || len > 60000)
		return; /* more than a TRACEPOINT record holds: no kernel writes one */
	char *t = xmalloc(len + 1);
	memcpy(t, text, len);
	t[len] = '\0';
	const char *name = strstr(t, "name: "), *id = strstr(t, "ID: ");
	if (!name || !id) {
		free(t);
		return;
	}
	GROW(r->formats, r->formats_cap, r->nformats + 1);
	struct tp_format *f = &r->formats[r->nformats];
	memset(f, 0, sizeof(*f));
	f->id = strtoull(id + 4, NULL, 10);
	snprintf(f->system, sizeof(f->system), "%s", system);
	size_t n = strcspn(name + 6, "\r\n");
	snprintf(f->name, sizeof(f->name), "%.*s", (int)n, name + 6);
	make_printable(f->system);
	make_printable(f->name);
	f->text = t;
	f->len = len;
	r->nformats++;
}

/*
 * TRACING_DATA (trace-event-read.c's layout): "\027\010\104tracing", a
 * version string, endianness, long size, page size, header_page and
 * header_event (each a name, a u64 size and the text), the ftrace formats
 * (u32 count, each u64 size + text), then the event formats: u32 systems,
 * each a NUL-terminated name, u32 count and, each, u64 size + text; then
 * kallsyms (u32 size + text): older perf copied /proc/kallsyms there, perf
 * today writes it empty.  A copy is kept: it names the kernel frames of
 * the machine that recorded (docs/perfdata.md).  What follows (printk
 * formats, saved cmdlines) is not needed.
 */
static void parse_tracing_data(struct perfdata_reader *r, struct bytes *b)
{
	static const unsigned char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const unsigned char *m = take(b, sizeof(magic));
	if (!m || memcmp(m, magic, sizeof(magic)) != 0)
		return;
	size_t vlen = strnlen((const char *)b->p, (size_t)(b->end - b->p));
	take(b, vlen + 1);
	const unsigned char *endian = take(b, 2); /* big-endian flag, long size */
	take_u32(b);                             /* page size */
	if (b->bad || endian[0])
		return; /* a big-endian machine's: sigprof reads little-endian recordings only */
	static const char *const headers[2] = { "header_page", "header_event" };
	for (int i = 0; i < 2; i++) {
		const unsigned char *name = take(b, strlen(headers[i]) + 1);
		if (!name || memcmp(name, headers[i], strlen(headers[i]) + 1) != 0)
			return;
		take(b, take_u64(b));
	}
	uint32_t count = take_u32(b);
	for (uint32_t i = 0; i < count && !b->bad; i++)
		take(b, take_u64(b));
	uint32_t systems = take_u32(b);
	for (uint32_t s = 0; s < systems && !b->bad; s++) {
		size_t slen = strnlen((const char *)b->p, (size_t)(b->end - b->p));
		const unsigned char *sys = take(b, slen + 1);
		uint32_t n = take_u32(b);
		if (!sys || slen >= 32)
			return;
		for (uint32_t k = 0; k < n && !b->bad; k++) {
			uint64_t len = take_u64(b);
			const unsigned char *text = take(b, len);
			if (text)
				add_format(r, (const char *)sys, text, len);
		}
	}
	uint32_t kallsyms_len = take_u32(b);
	const unsigned char *kallsyms = take(b, kallsyms_len);
	if (kallsyms && kallsyms_len && !r->kallsyms) {
		r->kallsyms = xmalloc(kallsyms_len);
		memcpy(r->kallsyms, kallsyms, kallsyms_len);
		r->kallsyms_len = kallsyms_len;
	}
}

static void parse_feature(struct perfdata_reader *r, unsigned feat, const unsigned char *data, size_t len)
{
	struct bytes b = { data, data + len, false };
	char s[256];
	switch (feat) {
	case FEAT_HOSTNAME:
	case FEAT_OSRELEASE:
	case FEAT_ARCH:
	case FEAT_VERSION:
	case FEAT_CPUDESC:
		if (!take_string(&b, s, sizeof(s)))
			return;
		make_printable(s);
		if (feat == FEAT_ARCH)
			copy_string(r->arch, sizeof(r->arch), s);
		if (feat == FEAT_VERSION)
			copy_string(r->perf_version, sizeof(r->perf_version), s);
		else
			emit_meta1(r, feat == FEAT_HOSTNAME ? "hostname" : feat == FEAT_OSRELEASE ? "kernel"
								 : feat == FEAT_ARCH	   ? "arch"
											   : "cpudesc",
				   s);
		return;
	case FEAT_NRCPUS: {
		take_u32(&b);
		uint32_t online = take_u32(&b);
		if (!b.bad && online <= 1u << 20) {
			snprintf(s, sizeof(s), "%u", online);
			emit_meta1(r, "ncpus", s);
		}
		return;
	}
	case FEAT_CMDLINE: {
		uint32_t nr = take_u32(&b);
		if (b.bad || nr == 0 || nr > 4096)
			return;
		char **argv = xcalloc(nr, sizeof(char *));
		uint32_t got = 0;
		for (; got < nr; got++) {
			char arg[1024];
			if (!take_string(&b, arg, sizeof(arg)))
				break;
			argv[got] = xstrdup(arg);
		}
		if (got == nr)
			emit_meta(r, "argv", (const char *const *)argv, nr);
		for (uint32_t i = 0; i + 1 < got; i++)
			if (strcmp(argv[i], "--") == 0) {
				/* the comm the kernel gives the command at exec: its file name, cut to 15 bytes */
				const char *slash = strrchr(argv[i + 1], '/');
				snprintf(r->command_comm, sizeof(r->command_comm), "%.15s", slash ? slash + 1 : argv[i + 1]);
				break;
			}
		for (uint32_t i = 0; i < got; i++)
			free(argv[i]);
		free(argv);
		return;
	}
	case FEAT_EVENT_DESC:
		parse_event_desc(r, &b);
		return;
	case FEAT_BUILD_ID:
		parse_build_ids(r, &b);
		return;
	case FEAT_TRACING_DATA:
		parse_tracing_data(r, &b);
		return;
	case FEAT_COMPRESSED:
		r->compressed_feature = true;
		return;
	default:
		return;
	}
}

/* ---- events ---- */

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses",
	"bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults",
	"major-faults", "alignment-faults", "emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};
static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node" };
static const char *const cache_ops[][2] = { { "load", "loads" }, { "store", "stores" }, { "prefetch", "prefetches" } };

static const struct tp_format *format_of_id(const struct perfdata_reader *r, uint64_t id)
{
	for (size_t i = 0; i < r->nformats; i++)
		if (r->formats[i].id == id)
			return &r->formats[i];
	return NULL;
}

/* The name perf gives an event of this attr when the file names none. */
static void default_name(const struct perfdata_reader *r, const struct perf_event_attr *a, char *buf, size_t len)
{
	uint64_t config = a->config & 0xffffffffull; /* hybrid parts: the PMU in the high half */
	const struct tp_format *f;
	if (a->type == PERF_TYPE_TRACEPOINT && (f = format_of_id(r, a->config))) {
		snprintf(buf, len, "%.31s:%.31s", f->system, f->name);
		return;
	}
	/* perf 3.x's event_types (section or EVENT_TYPE records): the names it gave this file's events */
	for (size_t i = 0; i < r->nevent_types; i++)
		if (r->event_types[i].config == a->config) {
			snprintf(buf, len, "%s", r->event_types[i].name);
			make_printable(buf);
			return;
		}
	if (a->type == PERF_TYPE_HARDWARE && config < ARRAY_SIZE(hw_names)) {
		snprintf(buf, len, "%s", hw_names[config]);
	} else if (a->type == PERF_TYPE_SOFTWARE && a->config < ARRAY_SIZE(sw_names)) {
		snprintf(buf, len, "%s", sw_names[a->config]);
	} else if (a->type == PERF_TYPE_HW_CACHE && (config & 0xff) < ARRAY_SIZE(cache_names) &&
		   ((config >> 8) & 0xff) < ARRAY_SIZE(cache_ops) && ((config >> 16) & 0xff) <= 1) {
		bool miss = (config >> 16) & 0xff;
		snprintf(buf, len, "%s-%s%s", cache_names[config & 0xff], cache_ops[(config >> 8) & 0xff][miss ? 0 : 1],
			 miss ? "-misses" : "");
	} else {
		if (a->type == PERF_TYPE_TRACEPOINT)
			snprintf(buf, len, "tracepoint:%llu", (unsigned long long)a->config);
		else if (a->type == PERF_TYPE_RAW)
			snprintf(buf, len, "r%llx", (unsigned long long)a->config);
		else
			snprintf(buf, len, "pmu%u/config=%#llx/", a->type, (unsigned long long)a->config);
	}
}

/* The system of a tracepoint event's name ("sched" of "sched:sched_switch"), into buf. */
static const char *tracepoint_system(const char *name, char *buf, size_t len)
{
	size_t n = strcspn(name, ":");
	snprintf(buf, len, "%.*s", (int)n, name);
	return buf;
}

const char *perfdata_collector_of(const struct perf_event_attr *attr, const char *name)
{
	if (attr->type == PERF_TYPE_TRACEPOINT) {
		char sys[64];
		tracepoint_system(name, sys, sizeof(sys));
		const char *event = strchr(name, ':') ? strchr(name, ':') + 1 : "";
		if (strcmp(sys, "signal") == 0 || strcmp(event, "sys_enter_rt_sigreturn") == 0 ||
		    strcmp(event, "sys_exit_rt_sigreturn") == 0)
			return "signal";
		if (strcmp(sys, "sched") == 0)
			return "sched";
		if (strcmp(sys, "lock") == 0)
			return "lock";
		if ((strcmp(sys, "syscalls") == 0 && strstr(event, "_futex")) || strcmp(sys, "futex") == 0)
			return "futex";
		return "events";
	}
	/*
	 * a memory-access event (mem-loads, mem-stores, ibs_op): a raw or PMU event with a data source;
	 * perf's --call-graph dwarf asks cycles for DATA_SRC too, which leaves cycles the cpu's
	 */
	if ((attr->sample_type & PERF_SAMPLE_DATA_SRC) && attr->type != PERF_TYPE_HARDWARE &&
	    attr->type != PERF_TYPE_SOFTWARE && attr->type != PERF_TYPE_HW_CACHE)
		return "c2c";
	uint64_t config = attr->config & 0xffffffffull;
	if ((attr->type == PERF_TYPE_HARDWARE &&
	     (config == PERF_COUNT_HW_CACHE_MISSES || config == PERF_COUNT_HW_CACHE_REFERENCES)) ||
	    attr->type == PERF_TYPE_HW_CACHE)
		return "cache";
	if ((attr->type == PERF_TYPE_HARDWARE && (config == PERF_COUNT_HW_CPU_CYCLES || config == PERF_COUNT_HW_REF_CPU_CYCLES)) ||
	    (attr->type == PERF_TYPE_SOFTWARE &&
	     (attr->config == PERF_COUNT_SW_CPU_CLOCK || attr->config == PERF_COUNT_SW_TASK_CLOCK)))
		return "cpu";
	/* cycles by another name (cpu_core/cycles/, a raw cycles code named so by the file) */
	if (strstr(name, "cycles") && !strstr(name, "stalled"))
		return "cpu";
	return "events";
}

/* Add an attr (file mode's attrs section, pipe mode's HEADER_ATTR); -EINVAL when malformed. */
static int add_attr(struct perfdata_reader *r, const unsigned char *attr, size_t attr_bytes, const unsigned char *ids,
		    size_t nr_ids)
{
	if (attr_bytes < PERF_ATTR_SIZE_VER0 || r->nattrs >= MAX_ATTRS || nr_ids > MAX_IDS_PER_ATTR)
		return -EINVAL;
	GROW(r->attrs, r->attrs_cap, r->nattrs + 1);
	struct perf_attr *a = &r->attrs[r->nattrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, attr, attr_bytes < sizeof(a->attr) ? attr_bytes : sizeof(a->attr));
	a->attr.size = sizeof(a->attr);
	a->nr_ids = (uint32_t)nr_ids;
	a->ids = xmalloc(nr_ids * 8 + 8);
	if (nr_ids)
		memcpy(a->ids, ids, nr_ids * 8);
	else
		a->ids[a->nr_ids++] = SYNTH_ID_BASE + r->nattrs;
	index_ids(r, r->nattrs);
	r->nattrs++;
	return 0;
}

/* ---- the prologue: META, TRACEPOINT, EVENT records ---- */

static void emit_tracepoint(struct perfdata_reader *r, struct tp_format *f)
{
	if (f->emitted)
		return;
	f->emitted = true;
	size_t len = ALIGN_UP(sizeof(struct sp_tracepoint_record) + f->len, 8);
	char *rec = xcalloc(1, len);
	struct sp_tracepoint_record *tp = (void *)rec;
	tp->header.type = SP_REC_TRACEPOINT;
	tp->header.size = (uint16_t)len;
	tp->id = f->id;
	snprintf(tp->system, sizeof(tp->system), "%s", f->system);
	tp->format_len = (uint32_t)f->len;
	memcpy(tp + 1, f->text, f->len);
	/* a format libtraceevent cannot read would end the load: it is left out, its fields undecoded */
	struct tracepoint_set check = { 0 };
	f->parses = tracepoint_set_add(&check, &tp->header) == 0;
	tracepoint_set_free(&check);
	if (f->parses)
		pending_add(r, rec, len);
	free(rec);
}

static void emit_event(struct perfdata_reader *r, struct perf_attr *a)
{
	if (a->emitted)
		return;
	a->emitted = true;
	if (!a->named)
		default_name(r, &a->attr, a->name, sizeof(a->name));
	if (a->attr.type == PERF_TYPE_TRACEPOINT) {
		struct tp_format *f = (struct tp_format *)format_of_id(r, a->attr.config);
		if (f)
			emit_tracepoint(r, f);
	}
	struct perf_event_attr attr = a->attr;
	attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	size_t fixed = sizeof(struct sp_event_record) + ALIGN_UP(sizeof(attr), 8);
	uint32_t nr_ids = a->nr_ids;
	if (fixed + (size_t)nr_ids * 8 > UINT16_MAX)
		nr_ids = (uint32_t)((UINT16_MAX - fixed) / 8); /* the rest of the ids: their samples are unknown */
	size_t len = fixed + (size_t)nr_ids * 8;
	char *rec = xcalloc(1, len);
	struct sp_event_record *er = (void *)rec;
	er->header.type = SP_REC_EVENT;
	er->header.size = (uint16_t)len;
	er->attr_size = sizeof(attr);
	er->nr_ids = nr_ids;
	snprintf(er->name, sizeof(er->name), "%s", a->name);
	snprintf(er->collector, sizeof(er->collector), "%s", perfdata_collector_of(&a->attr, a->name));
	memcpy(rec + sizeof(*er), &attr, sizeof(attr));
	memcpy(rec + sizeof(*er) + ALIGN_UP(sizeof(attr), 8), a->ids, (size_t)nr_ids * 8);
	pending_add(r, rec, len);
	event_set_add(&r->events, (const void *)rec);
	free(rec);
}

/* What the file lacks that sigprof's own recordings carry: said once, in the report's header. */
static void emit_notes(struct perfdata_reader *r)
{
	struct strbuf note = { 0 };
	sb_addf(&note, "read from a perf.data file (%s mode%s%s%s): it holds no exit status and no exact counter totals",
		r->pipe ? "pipe" : "file", r->compressed_feature || r->zstd ? ", zstd-compressed records" : "",
		r->perf_version[0] ? ", perf " : "", r->perf_version);
	emit_meta1(r, "note", note.buf);
	sb_reset(&note);
	if (r->features_cut)
		emit_meta1(r, "note", "the file is cut short in its header's feature sections (after the records): "
				      "what they would say (host, events' names, build-ids, tracepoint formats) is missing");
	bool signal = false, sigreturn = false, callchain = false, stacks = false, sampling = false, regs = false;
	struct strbuf no_format = { 0 };
	for (size_t i = 0; i < r->nattrs; i++) {
		const struct perf_attr *a = &r->attrs[i];
		const char *colon = strchr(a->name, ':');
		if (a->attr.type == PERF_TYPE_TRACEPOINT) {
			signal |= strncmp(a->name, "signal:", 7) == 0;
			sigreturn |= colon && strstr(colon, "rt_sigreturn");
			const struct tp_format *f = format_of_id(r, a->attr.config);
			if (!f || !f->parses)
				sb_addf(&no_format, "%s%s", no_format.len ? ", " : "", a->name);
		}
		if (a->attr.sample_period || a->attr.freq) {
			sampling = true;
			callchain |= (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
			stacks |= (a->attr.sample_type & PERF_SAMPLE_STACK_USER) != 0;
			regs |= (a->attr.sample_type & PERF_SAMPLE_REGS_USER) != 0;
		}
	}
	if (signal && !sigreturn)
		emit_meta1(r, "note", "the file has signal tracepoints but no syscalls:sys_enter_rt_sigreturn: no handler "
				      "time (deliver to sigreturn) is measured");
	if (sampling && !callchain)
		emit_meta1(r, "note", "the file's samples carry no callchain: each stack is the sampled address alone");
	else if (sampling && !stacks)
		emit_meta1(r, "note", "the file's samples carry no copies of the user stack: stacks are the kernel's "
				      "frame-pointer callchains only");
	if (stacks && regs && r->arch[0] && strcmp(r->arch, "x86_64") != 0) {
		sb_addf(&note, "the file's samples carry user stacks of %s, which sigprof does not unwind (x86-64 only): "
			       "stacks are the kernel's frame-pointer callchains only", r->arch);
		emit_meta1(r, "note", note.buf);
		sb_reset(&note);
	}
	if (no_format.len) {
		sb_addf(&note, "the file holds no tracepoint format (tracing data) of %s: their fields are not decoded",
			no_format.buf);
		emit_meta1(r, "note", note.buf);
	}
	sb_free(&no_format);
	sb_free(&note);
}

static int pending_add_record(void *reader, const void *rec, size_t len)
{
	pending_add(reader, rec, len);
	return 0;
}

static void emit_prologue(struct perfdata_reader *r)
{
	if (r->prologue_done)
		return;
	r->prologue_done = true;
	/* before any kernel record, where the loader takes a recording's copy of the kernel's symbols */
	if (r->kallsyms) {
		emit_meta1(r, "kallsyms_source", "the copy of the recording machine's /proc/kallsyms in perf's tracing data");
		sp_kallsyms_records(r->kallsyms, r->kallsyms_len, pending_add_record, r);
	}
	for (size_t i = 0; i < r->nattrs; i++)
		if (!r->attrs[i].named)
			default_name(r, &r->attrs[i].attr, r->attrs[i].name, sizeof(r->attrs[i].name));
	for (size_t i = 0; i < r->nattrs; i++)
		if (r->attrs[i].attr.type == PERF_TYPE_TRACEPOINT) {
			struct tp_format *f = (struct tp_format *)format_of_id(r, r->attrs[i].attr.config);
			if (f)
				emit_tracepoint(r, f);
		}
	emit_notes(r);
	for (size_t i = 0; i < r->nattrs; i++)
		emit_event(r, &r->attrs[i]);
}

/* ---- kernel records ---- */

/*
 * Where a record's id is: perf finds it through the first event's
 * sample_type (all events of a file place it alike).  A sample: the index
 * of its u64 from the front; another record: from the back (1 = last).
 * -1: no id in the records (one event, or the first one's).
 */
static int sample_id_index(const struct perf_event_attr *a)
{
	uint64_t t = a->sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return __builtin_popcountll(t & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
}

static int trailer_id_index(const struct perf_event_attr *a)
{
	uint64_t t = a->sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU);
}

/* The attr a kernel record belongs to, and its id. */
static struct perf_attr *record_attr(struct perfdata_reader *r, const struct perf_event_header *h, uint64_t *id)
{
	if (!r->nattrs)
		return NULL;
	const struct perf_event_attr *first = &r->attrs[0].attr;
	size_t words = (h->size - sizeof(*h)) / 8;
	int at;
	if (h->type == PERF_RECORD_SAMPLE) {
		at = sample_id_index(first);
		if (at >= 0 && (size_t)at < words) {
			memcpy(id, (const char *)(h + 1) + 8 * at, 8);
			struct perf_attr *a = attr_of_id(r, *id);
			return a ? a : (r->nattrs == 1 ? &r->attrs[0] : NULL);
		}
	} else if (first->sample_id_all) {
		at = trailer_id_index(first);
		if (at > 0 && (size_t)at <= words) {
			memcpy(id, (const char *)h + h->size - 8 * at, 8);
			struct perf_attr *a = attr_of_id(r, *id);
			if (a)
				return a;
		}
	}
	/* no id, or one no event lists (perf's own synthesized task records: a zeroed trailer) */
	*id = r->attrs[0].ids[0];
	return &r->attrs[0];
}

/* A kernel record as sigprof's decoder reads it: with IDENTIFIER's u64 where it belongs. */
static const struct perf_event_header *rewrite(struct perfdata_reader *r, const struct perf_event_header *h)
{
	uint64_t id = 0;
	struct perf_attr *a = record_attr(r, h, &id);
	bool sample = h->type == PERF_RECORD_SAMPLE;
	if (!a) {
		if (!sample)
			return h;
		/* an id no event lists: handed on as an unknown event's sample */
	} else if ((a->attr.sample_type & PERF_SAMPLE_IDENTIFIER) || (!sample && !a->attr.sample_id_all)) {
		return h;
	}
	if (h->size + 8u > UINT16_MAX) {
		r->oversized++;
		return NULL;
	}
	struct perf_event_header *o = (void *)r->out;
	*o = *h;
	o->size = (uint16_t)(h->size + 8);
	size_t body = h->size - sizeof(*h);
	if (sample) {
		memcpy(r->out + sizeof(*h), &id, 8);
		memcpy(r->out + sizeof(*h) + 8, h + 1, body);
	} else {
		memcpy(r->out + sizeof(*h), h + 1, body);
		memcpy(r->out + sizeof(*h) + body, &id, 8);
	}
	return o;
}

static void count_record(struct perfdata_reader *r, const struct perf_event_header *h)
{
	r->kernel_records++;
	r->data_bytes += h->size;
	const uint64_t *u64 = (const void *)(h + 1);
	if (h->type == PERF_RECORD_SAMPLE)
		r->samples++;
	else if (h->type == PERF_RECORD_LOST && h->size >= 24)
		r->lost += u64[1];
	else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= 16)
		r->lost_samples += u64[0];
	uint64_t t;
	if (record_time(&r->events, h, &t) == 0 && t) {
		if (!r->first_time || t < r->first_time)
			r->first_time = t;
		if (t > r->last_time)
			r->last_time = t;
	}
}

/*
 * The workload: the command perf forked.  perf's child names itself
 * "perf-exec" (prctl) while it waits for the events to be opened, so the
 * task records perf synthesizes at the start show it under that name; the
 * kernel's COMM record of its exec then names it after the command.  A
 * file of a perf that does not rename its child: the first exec of a task
 * named as the command after "--" in the cmdline feature.  Said once, as
 * META workload_pid, before the record that names it: the loader takes
 * that process and those it forks as the workload (docs/perfdata.md).
 */
static void find_workload(struct perfdata_reader *r, const struct perf_event_header *h)
{
	if (r->workload_found || h->type != PERF_RECORD_COMM || h->size < 24)
		return;
	uint32_t pid;
	char comm[17];
	memcpy(&pid, h + 1, 4);
	size_t n = strnlen((const char *)(h + 1) + 8, h->size - sizeof(*h) - 8);
	snprintf(comm, sizeof(comm), "%.*s", (int)(n < 16 ? n : 16), (const char *)(h + 1) + 8);
	bool forked = strcmp(comm, "perf-exec") == 0;
	bool exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) && r->command_comm[0] && strcmp(comm, r->command_comm) == 0;
	if (!pid || !(forked || exec))
		return;
	r->workload_found = true;
	char text[16];
	snprintf(text, sizeof(text), "%u", pid);
	const char *values[2] = { text, forked ? "perf-exec" : "exec" };
	emit_meta(r, "workload_pid", values, 2);
}

/* A kernel record out, counted: 1 with *rec set, or 0 when it went to the pending records behind a META. */
static int hand_on(struct perfdata_reader *r, const struct perf_event_header *o, const struct perf_event_header **rec)
{
	count_record(r, o);
	size_t before = r->pending_len;
	find_workload(r, o);
	if (r->pending_len == before) {
		*rec = o;
		return 1;
	}
	pending_add(r, o, o->size);
	return 0;
}

/* ---- perf's own records ---- */

static int decompress(struct perfdata_reader *r, const unsigned char *data, size_t len, uint64_t at)
{
	if (!r->zstd && !(r->zstd = ZSTD_createDCtx()))
		return -ENOMEM;
	if (r->inner_start) {
		memmove(r->inner, r->inner + r->inner_start, r->inner_end - r->inner_start);
		r->inner_end -= r->inner_start;
		r->inner_start = 0;
	}
	ZSTD_inBuffer in = { data, len, 0 };
	while (in.pos < in.size) {
		if (r->inner_end + RECORD_MAX > r->inner_cap) {
			if (r->inner_cap >= INNER_MAX)
				return stop(r, true, "a compressed record at offset %llu decompresses to more than 256 MiB", at);
			GROW(r->inner, r->inner_cap, r->inner_end + RECORD_MAX);
		}
		ZSTD_outBuffer out = { r->inner, r->inner_cap, r->inner_end };
		size_t ret = ZSTD_decompressStream(r->zstd, &out, &in);
		if (ZSTD_isError(ret))
			return stop(r, true, "corrupt compressed record at offset %llu (it does not decompress)", at);
		if (out.pos == r->inner_end && in.pos < in.size && out.pos < out.size)
			return stop(r, true, "corrupt compressed record at offset %llu", at);
		r->inner_end = out.pos;
	}
	return 0;
}

static void add_pipe_attr(struct perfdata_reader *r, const struct perf_event_header *h)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	size_t body = h->size - sizeof(*h);
	if (body < PERF_ATTR_SIZE_VER0)
		return;
	uint32_t size;
	memcpy(&size, p + offsetof(struct perf_event_attr, size), 4);
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size > body)
		return;
	size_t nr_ids = (body - size) / 8;
	if (add_attr(r, p, size, p + size, nr_ids) == 0 && r->prologue_done)
		emit_event(r, &r->attrs[r->nattrs - 1]);
}

/* A record of perf's own (type 64 and up): what it says goes into the prologue, or out as its own record. */
static int user_record(struct perfdata_reader *r, const struct perf_event_header *h, uint64_t at)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	size_t body = h->size - sizeof(*h);
	uint64_t u64[2] = { 0, 0 };
	memcpy(u64, p, body < 16 ? body : 16);
	switch (h->type) {
	case PERF_HEADER_ATTR:
		add_pipe_attr(r, h);
		return 0;
	case PERF_HEADER_EVENT_TYPE:
		if (body >= 8 + 64) {
			GROW(r->event_types, r->event_types_cap, r->nevent_types + 1);
			r->event_types[r->nevent_types].config = u64[0];
			snprintf(r->event_types[r->nevent_types].name, 64, "%.63s", (const char *)p + 8);
			r->nevent_types++;
		}
		return 0;
	case PERF_HEADER_TRACING_DATA: {
		/* u32 size; the tracing data follows the record in the stream (pipe mode) */
		uint32_t size;
		if (body < 4)
			return stop(r, true, "corrupt TRACING_DATA record at offset %llu", at);
		memcpy(&size, p, 4);
		if (size > FEATURE_MAX)
			return stop(r, true, "corrupt TRACING_DATA record at offset %llu (too large)", at);
		char *data = xmalloc(size + 1);
		int err = stream_take(r, data, size);
		if (!err) {
			struct bytes b = { (unsigned char *)data, (unsigned char *)data + size, false };
			parse_tracing_data(r, &b);
		}
		free(data);
		if (err)
			return stop(r, false, "file cut short in the tracing data after offset %llu", at);
		for (size_t i = 0; r->prologue_done && i < r->nformats; i++)
			for (size_t k = 0; k < r->nattrs; k++)
				if (r->attrs[k].attr.type == PERF_TYPE_TRACEPOINT && r->attrs[k].attr.config == r->formats[i].id)
					emit_tracepoint(r, &r->formats[i]);
		return 0;
	}
	case PERF_HEADER_BUILD_ID:
		add_build_id(r, (const unsigned char *)h, h->size);
		return 0;
	case PERF_FINISHED_ROUND: {
		struct perf_event_header round = { .type = SP_REC_ROUND, .size = sizeof(round) };
		if (r->prologue_done)
			pending_add(r, &round, sizeof(round));
		return 0;
	}
	case PERF_AUXTRACE:
		/* u64 size of the AUX data that follows the record in the stream: not read */
		if (body < 8 || u64[0] > (1ull << 40))
			return stop(r, true, "corrupt AUXTRACE record at offset %llu", at);
		if (stream_take(r, NULL, u64[0]) < 0)
			return stop(r, false, "file cut short in AUX data after offset %llu", at);
		return 0;
	case PERF_EVENT_UPDATE:
		if (body > 16 && u64[0] == EVENT_UPDATE_NAME) {
			struct perf_attr *a = attr_of_id(r, u64[1]);
			char name[SP_EVENT_NAME_LEN];
			snprintf(name, sizeof(name), "%.*s", (int)strnlen((const char *)p + 16, body - 16), p + 16);
			if (a && !a->emitted)
				name_attr(a, name);
		}
		return 0;
	case PERF_HEADER_FEATURE:
		if (body >= 8 && u64[0] < FEAT_BITS)
			parse_feature(r, (unsigned)u64[0], p + 8, body - 8);
		return 0;
	case PERF_COMPRESSED:
		return decompress(r, p, body, at);
	case PERF_COMPRESSED2:
		if (body < 8 || u64[0] > body - 8)
			return stop(r, true, "corrupt compressed record at offset %llu", at);
		return decompress(r, p + 8, (size_t)u64[0], at);
	default:
		return 0; /* ID_INDEX, THREAD_MAP, CPU_MAP, TIME_CONV, FINISHED_INIT, STAT...: nothing sigprof uses */
	}
}

/*
 * A record where the stream holds it, or in a copy when that place is not
 * 8-byte aligned: pipe mode's TRACING_DATA record is 12 bytes, so the
 * records after it lie 4 bytes off.
 */
static const struct perf_event_header *aligned_record(struct perfdata_reader *r, const char *at, uint16_t size)
{
	if ((uintptr_t)at % 8 == 0)
		return (const void *)at;
	memcpy(r->aligned, at, size);
	return (const void *)r->aligned;
}

/* The next record of the file (or of the decompressed data before it): NULL at the end. */
static const struct perf_event_header *next_raw(struct perfdata_reader *r, bool *inner)
{
	if (r->inner_end - r->inner_start >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, r->inner + r->inner_start, sizeof(h));
		if (h.size < sizeof(h)) {
			stop(r, true, "corrupt record in the compressed data after offset %llu", r->record_offset);
			return NULL;
		}
		if (h.size <= r->inner_end - r->inner_start) {
			const struct perf_event_header *rec = aligned_record(r, r->inner + r->inner_start, h.size);
			r->inner_start += h.size;
			*inner = true;
			return rec;
		}
		/* a record that continues in the next compressed record: read on in the file */
	}
	*inner = false;
	if (r->problem[0])
		return NULL;
	int err = stream_fill(r, RECORD_MAX);
	if (err) {
		stop(r, true, "read error after offset %llu", r->buf_offset + r->start);
		return NULL;
	}
	size_t avail = r->end - r->start;
	uint64_t at = r->buf_offset + r->start;
	if (avail == 0) {
		if (r->inner_end > r->inner_start)
			stop(r, false, "file cut short inside a compressed record's records (after offset %llu)", at);
		return NULL;
	}
	struct perf_event_header h;
	if (avail < sizeof(h)) {
		stop(r, false, "partial record at offset %llu (file cut short)", at);
		return NULL;
	}
	memcpy(&h, r->buf + r->start, sizeof(h));
	if (h.size < sizeof(h)) {
		stop(r, true, "corrupt record at offset %llu", at);
		return NULL;
	}
	if (h.size > avail) {
		stop(r, false, "partial record at offset %llu (file cut short)", at);
		return NULL;
	}
	r->record_offset = at;
	const struct perf_event_header *rec = aligned_record(r, r->buf + r->start, h.size);
	r->start += h.size;
	return rec;
}

static void emit_finish(struct perfdata_reader *r)
{
	if (r->finish_done)
		return;
	r->finish_done = true;
	if (r->oversized) {
		char note[160];
		snprintf(note, sizeof(note), "%llu records of the file are too large to carry their event id (64 KiB): "
					     "left out", (unsigned long long)r->oversized);
		emit_meta1(r, "note", note);
	}
	struct sp_finish_record f = { .header = { .type = SP_REC_FINISH, .size = sizeof(f) },
				      .duration_ns = r->last_time > r->first_time ? r->last_time - r->first_time : 0,
				      .flags = SP_FINISH_FOREIGN,
				      .kernel_records = r->kernel_records,
				      .samples = r->samples,
				      .lost = r->lost,
				      .lost_samples = r->lost_samples,
				      .data_bytes = r->data_bytes };
	pending_add(r, &f, sizeof(f));
}

int perfdata_reader_next(struct perfdata_reader *r, const struct perf_event_header **rec)
{
	for (;;) {
		if (r->pending_pos < r->pending_len) {
			const struct perf_event_header *h = (const void *)(r->pending + r->pending_pos);
			r->pending_pos += h->size;
			*rec = h;
			return 1;
		}
		r->pending_pos = r->pending_len = 0;
		if (r->holding) {
			r->holding = false;
			const struct perf_event_header *o = rewrite(r, (const void *)r->held);
			if (o && hand_on(r, o, rec))
				return 1;
			continue;
		}
		if (r->finish_done)
			return 0;
		bool inner;
		const struct perf_event_header *h = next_raw(r, &inner);
		if (!h) {
			emit_prologue(r);
			/* a file that ends whole gets its FINISH; one cut short or damaged does not (it reads as cut) */
			if (!r->problem[0])
				emit_finish(r);
			else
				r->finish_done = true;
			continue;
		}
		uint64_t at = r->record_offset;
		if (h->type >= PERF_USER_FIRST) {
			if (inner && (h->type == PERF_COMPRESSED || h->type == PERF_COMPRESSED2))
				continue; /* compressed inside compressed: perf writes none */
			int err = user_record(r, h, at);
			if (err < 0)
				stop(r, true, "cannot read the record at offset %llu", at);
			continue;
		}
		if (h->size % 8) {
			stop(r, true, "corrupt record at offset %llu (size not a multiple of 8)", at);
			continue;
		}
		if (!r->prologue_done) {
			memcpy(r->held, h, h->size);
			r->holding = true;
			emit_prologue(r);
			continue;
		}
		const struct perf_event_header *o = rewrite(r, h);
		if (o && hand_on(r, o, rec))
			return 1;
	}
}

/* ---- opening ---- */

static int read_at(struct perfdata_reader *r, void *dst, uint64_t len, uint64_t offset)
{
	if (offset > r->file_size || len > r->file_size - offset)
		return -ERANGE;
	ssize_t n = pread(r->fd, dst, len, (off_t)offset);
	if (n < 0)
		return -errno;
	return (uint64_t)n == len ? 0 : -ERANGE;
}

static int open_file_mode(struct perfdata_reader *r, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "a perf.data file in file mode is read by offsets: give the file, not a pipe "
				      "(perf record -o - writes pipe mode)");
		return -ESPIPE;
	}
	r->file_size = (uint64_t)st.st_size;
	struct perf_file_header fh;
	if (read_at(r, &fh, sizeof(fh), 0) < 0) {
		snprintf(err, errlen, "too short for a perf.data file header");
		return -EINVAL;
	}
	if (fh.size < sizeof(fh) - sizeof(fh.features) || fh.size > 4096) {
		snprintf(err, errlen, "corrupt perf.data header (header size %llu)", (unsigned long long)fh.size);
		return -EINVAL;
	}
	/* the attrs: attr_size bytes each, an attr then the file section of its ids */
	if (fh.attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perf_file_section) || fh.attr_size > 4096 ||
	    fh.attrs.size % fh.attr_size || fh.attrs.size / fh.attr_size > MAX_ATTRS ||
	    fh.attrs.offset > r->file_size || fh.attrs.size > r->file_size - fh.attrs.offset) {
		snprintf(err, errlen, "corrupt perf.data header (attrs section)");
		return -EINVAL;
	}
	if (fh.data.offset > r->file_size) {
		snprintf(err, errlen, "corrupt perf.data header (data section at %llu, past the end of the file)",
			 (unsigned long long)fh.data.offset);
		return -EINVAL;
	}
	size_t n = (size_t)(fh.attrs.size / fh.attr_size);
	unsigned char *entry = xmalloc(fh.attr_size);
	for (size_t i = 0; i < n; i++) {
		struct perf_file_section ids;
		int e = read_at(r, entry, fh.attr_size, fh.attrs.offset + i * fh.attr_size);
		memcpy(&ids, entry + fh.attr_size - sizeof(ids), sizeof(ids));
		if (e || ids.size % 8 || ids.size / 8 > MAX_IDS_PER_ATTR) {
			free(entry);
			snprintf(err, errlen, "corrupt perf.data attrs section (attr %zu)", i);
			return -EINVAL;
		}
		uint64_t *idv = xmalloc(ids.size + 8);
		e = read_at(r, idv, ids.size, ids.offset);
		if (!e)
			e = add_attr(r, entry, fh.attr_size - sizeof(ids), (const void *)idv, ids.size / 8);
		free(idv);
		if (e) {
			free(entry);
			snprintf(err, errlen, "corrupt perf.data attrs section (the ids of attr %zu)", i);
			return -EINVAL;
		}
	}
	free(entry);
	if (!r->nattrs) {
		snprintf(err, errlen, "a perf.data file without events (empty attrs section)");
		return -EINVAL;
	}
	/* the data: read up to its end, or the file's when perf was killed before it wrote the size */
	uint64_t data_end = fh.data.size && fh.data.size <= r->file_size - fh.data.offset ? fh.data.offset + fh.data.size
											  : r->file_size;
	r->pos = r->buf_offset = fh.data.offset;
	r->limit = data_end;
	/* perf 3.x: the names of the events, by config (72 bytes each: u64 config, char name[64]) */
	if (fh.event_types.size && fh.event_types.size % 72 == 0 && fh.event_types.size <= 72 * MAX_ATTRS) {
		unsigned char *types = xmalloc(fh.event_types.size);
		if (read_at(r, types, fh.event_types.size, fh.event_types.offset) == 0) {
			for (uint64_t off = 0; off < fh.event_types.size; off += 72) {
				GROW(r->event_types, r->event_types_cap, r->nevent_types + 1);
				memcpy(&r->event_types[r->nevent_types].config, types + off, 8);
				snprintf(r->event_types[r->nevent_types].name, 64, "%.63s", (const char *)types + off + 8);
				r->nevent_types++;
			}
		}
		free(types);
	}
	/* the feature sections: their table follows the data */
	uint64_t table = fh.data.offset + fh.data.size;
	unsigned nfeat = 0;
	if (fh.size >= sizeof(fh) && fh.data.size && fh.data.size <= r->file_size - fh.data.offset) {
		for (unsigned bit = 0; bit < FEAT_BITS; bit++) {
			if (!(fh.features[bit / 64] & (1ull << (bit % 64))))
				continue;
			struct perf_file_section s;
			if (read_at(r, &s, sizeof(s), table + 16ull * nfeat++) < 0) {
				r->features_cut = true; /* a table cut short: the features before it are read */
				break;
			}
			if (s.size > FEATURE_MAX || s.offset > r->file_size || s.size > r->file_size - s.offset) {
				r->features_cut = true;
				continue;
			}
			unsigned char *data = xmalloc(s.size + 1);
			if (read_at(r, data, s.size, s.offset) == 0)
				parse_feature(r, bit, data, (size_t)s.size);
			free(data);
		}
	}
	return 0;
}

int perfdata_reader_open(int fd, const void *prefix, size_t prefix_len, struct perfdata_reader **out, char *err,
			 size_t errlen)
{
	uint64_t magic = 0, size = 0;
	if (prefix_len >= 8)
		memcpy(&magic, prefix, 8);
	if (magic == PERF_MAGIC2_SWAPPED) {
		snprintf(err, errlen, "a perf.data file of a big-endian machine: sigprof reads little-endian ones");
		close(fd);
		return -EINVAL;
	}
	if (magic != PERF_MAGIC2 && magic != PERF_MAGIC1) {
		snprintf(err, errlen, "not a perf.data file (bad magic)");
		close(fd);
		return -EINVAL;
	}
	struct perfdata_reader *r = xcalloc(1, sizeof(*r));
	r->fd = fd;
	r->buf = xmalloc(READ_BUFFER_SIZE + RECORD_MAX);
	r->out = xmalloc(RECORD_MAX + 16);
	r->held = xmalloc(RECORD_MAX);
	r->aligned = xmalloc(RECORD_MAX);
	size_t have = prefix_len < sizeof(r->prefix_copy) ? prefix_len : sizeof(r->prefix_copy);
	memcpy(r->prefix_copy, prefix, have);
	if (have >= 16)
		memcpy(&size, r->prefix_copy + 8, 8);
	int ret = 0;
	if (have >= 16 && size == sizeof(struct perf_pipe_file_header)) {
		/* pipe mode: records from byte 16 on, whatever the fd is */
		r->pipe = true;
		r->prefix = r->prefix_copy;
		r->prefix_len = have;
		r->prefix_pos = 16;
		r->buf_offset = 16;
		r->limit = UINT64_MAX;
	} else if (have < 16) {
		snprintf(err, errlen, "too short for a perf.data file header");
		ret = -EINVAL;
	} else {
		ret = open_file_mode(r, err, errlen);
	}
	if (ret < 0) {
		perfdata_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

const char *perfdata_reader_problem(const struct perfdata_reader *r)
{
	if (r->problem[0])
		return r->problem;
	return NULL;
}

bool perfdata_reader_damaged(const struct perfdata_reader *r)
{
	return r->damaged;
}

uint64_t perfdata_reader_offset(const struct perfdata_reader *r)
{
	return r->record_offset;
}

void perfdata_reader_close(struct perfdata_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	for (size_t i = 0; i < r->nattrs; i++)
		free(r->attrs[i].ids);
	free(r->attrs);
	for (size_t i = 0; i < r->nformats; i++)
		free(r->formats[i].text);
	free(r->formats);
	free(r->event_types);
	free(r->kallsyms);
	u64_map_free(&r->by_id);
	free(r->pending);
	free(r->buf);
	free(r->out);
	free(r->held);
	free(r->aligned);
	free(r->inner);
	ZSTD_freeDCtx(r->zstd);
	event_set_free(&r->events);
	free(r);
}
