/*
 * format.h: the sigprof.data container, as specified in docs/data-format.md.
 *
 * The writer appends; the reader streams records one at a time with a
 * bounded buffer, so reading a file of any size needs the memory of one
 * record (at most 64 KiB) plus the buffer.  The reader knows nothing of
 * what kernel records mean: decoding is in sample.h.
 */
#ifndef SIGPROF_FORMAT_H
#define SIGPROF_FORMAT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SP_MAGIC "SIGPROF"  /* 8 bytes with its NUL */
#define SP_VERSION 2        /* the newest version this code reads and writes */
#define SP_VERSION_PLAIN 1  /* what a file without compression is written as: any reader reads it */
#define SP_BYTE_ORDER 0x01020304u

/* sp_file_header.flags */
#define SP_FILE_ZSTD 1u /* version 2: the records are in zstd chunks (struct sp_chunk_header) */

struct sp_file_header {
	char magic[8];         /* "SIGPROF\0" */
	uint32_t version;      /* SP_VERSION_PLAIN, or SP_VERSION with SP_FILE_ZSTD */
	uint32_t header_size;  /* sizeof(struct sp_file_header); records (or chunks) start here */
	uint32_t byte_order;   /* SP_BYTE_ORDER as the recorder wrote it */
	uint32_t flags;        /* SP_FILE_*: 0 in version 1 */
	uint8_t reserved[40];  /* zero */
};

/*
 * Version 2 with SP_FILE_ZSTD: after the file header, chunks until the end
 * of the file.  The records of a chunk, decompressed, continue the records
 * of the chunk before it (a record may straddle two chunks); a reader
 * concatenates them and reads that stream as a version 1 file's body.
 */
#define SP_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" in a little-endian file */
#define SP_CHUNK_MAX (4u << 20)    /* bytes of records one chunk may hold (the writer puts at most 1 MiB) */

struct sp_chunk_header {
	uint32_t magic;           /* SP_CHUNK_MAGIC */
	uint32_t compressed_size; /* bytes of the zstd frame that follows; NULs pad it to a multiple of 8 */
	uint32_t records_size;    /* bytes it decompresses to: 1 to SP_CHUNK_MAX */
	uint32_t reserved;        /* zero */
	/* uint8_t zstd_frame[compressed_size]; padded to 8 */
};

#define SP_ZSTD_DEFAULT_LEVEL 1 /* perf record -z's level: the fastest */
/* The highest zstd level this libzstd knows (ZSTD_maxCLevel()). */
int sp_zstd_max_level(void);

enum sp_record_type {
	SP_REC_META = 0x5301,
	SP_REC_EVENT = 0x5302,
	SP_REC_TOTALS = 0x5303,
	SP_REC_FINISH = 0x5304,
	SP_REC_ROUND = 0x5305, /* header only: the end of one pass over every ring buffer */
	SP_REC_TRACEPOINT = 0x5306,
	SP_REC_KALLSYMS = 0x5307,
};

#define SP_EVENT_NAME_LEN 64
#define SP_COLLECTOR_NAME_LEN 32

struct sp_event_record {
	struct perf_event_header header;
	uint32_t attr_size;                      /* bytes of perf_event_attr after this struct (padded to 8) */
	uint32_t nr_ids;                         /* u64 ids after the attr */
	char name[SP_EVENT_NAME_LEN];            /* NUL-terminated */
	char collector[SP_COLLECTOR_NAME_LEN];   /* NUL-terminated */
	/* u8 attr[ALIGN_UP(attr_size, 8)]; u64 ids[nr_ids]; */
};

struct sp_tracepoint_record {
	struct perf_event_header header;
	uint64_t id;          /* the tracepoint's id on the recording machine (its attr.config) */
	char system[32];      /* NUL-terminated */
	uint32_t format_len;  /* bytes of format text that follow (no NUL), padded to 8 */
	uint32_t reserved;
	/* char format[format_len]; */
};

#define SP_KALLSYMS_LAST 1u
#define SP_KALLSYMS_CHUNK 60000u /* bytes of text per record before compression */

struct sp_kallsyms_record {
	struct perf_event_header header;
	uint32_t sequence;   /* 0, 1, 2, ... */
	uint32_t flags;      /* SP_KALLSYMS_LAST on the last chunk */
	uint64_t text_size;  /* bytes of the whole text once uncompressed */
	uint32_t chunk_size; /* bytes of this record's block of the LZ4 stream */
	uint32_t reserved;
	/* uint8_t lz4[chunk_size]; padded to 8 */
};

struct sp_totals_record {
	struct perf_event_header header;
	uint32_t event_index;   /* position among the EVENT records */
	uint32_t reserved;
	uint64_t value;         /* exact total over CPUs, threads and children */
	uint64_t time_enabled;  /* ns, summed over CPUs */
	uint64_t time_running;  /* ns, summed over CPUs */
};

#define SP_FINISH_INTERRUPTED 1u
#define SP_FINISH_SWITCHED 2u /* a --switch-output piece: the workload ran on, in the next piece */

struct sp_finish_record {
	struct perf_event_header header;
	uint64_t end_realtime_ns; /* wall clock at the end */
	uint64_t duration_ns;     /* workload release to exit */
	int32_t wait_status;      /* as waitpid() returned it */
	uint32_t flags;           /* SP_FINISH_* */
	uint64_t kernel_records;  /* kernel records written */
	uint64_t samples;         /* of which PERF_RECORD_SAMPLE */
	uint64_t lost;            /* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_samples;    /* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t data_bytes;      /* bytes of kernel records */
};

/*
 * The trailer: what a recording ends with when its writer began one
 * (sp_writer_begin_trailer()): records written after everything else, that
 * a reader of the file reads before everything else (the recorder puts
 * there the kernel symbols its samples name, known only at the end).  Its
 * records (version 1) or chunks (version 2) run from offset to this
 * structure, which is the file's last 24 bytes.  A file without one (a
 * pipe's, one cut short, one whose recorder was killed) is read from the
 * front as always; a reader that does not look for it reads the trailer's
 * records last, after the rest.
 */
#define SP_TRAILER_MAGIC 0x524c494152545053ull /* "SPTRAILR" in a little-endian file */
#define SP_TRAILER_MAX (64u << 20)            /* bytes a reader takes from a trailer */

struct sp_file_trailer {
	uint64_t offset; /* file offset of the trailer's first record or chunk */
	uint64_t size;   /* bytes from there to this structure */
	uint64_t magic;  /* SP_TRAILER_MAGIC */
};

/* ---- writer (record side) ---- */
struct sp_writer;
/*
 * Start a recording at path, as root may do in a directory other users can
 * write: the file is a new one (O_EXCL|O_NOFOLLOW, mode 0600) under a
 * temporary name ".NAME." and 8 random hex digits in path's directory, with the file header
 * written.  An existing path that is not a regular file (a symbolic link, a
 * device, a FIFO, a directory) is refused with -EEXIST and never opened.
 * 0 or -errno; on failure nothing is left behind.
 */
int sp_writer_create(const char *path, struct sp_writer **out);
/*
 * The same, compressed: zstd_level 0 writes version 1 (as sp_writer_create()),
 * 1 to ZSTD_maxCLevel() a version 2 file of zstd chunks.  The chunks are made
 * where the bytes are written: by the writer thread once async.
 */
int sp_writer_create_compressed(const char *path, int zstd_level, struct sp_writer **out);
/*
 * A file of other bytes (sigprof archive's tar) with a recording's safe
 * life: created, refused, published and discarded as above, without the
 * sigprof file header; written with sp_writer_raw().
 */
int sp_writer_create_file(const char *path, struct sp_writer **out);
/*
 * Rename the file into place: an existing path (a regular file, checked
 * again) becomes path.old first.  Until then the previous recording is
 * untouched.  sp_writer_close() publishes a file not yet published.
 */
int sp_writer_publish(struct sp_writer *w);
/* Write to fd (a pipe: stdout for `-o -`), the file header first; fd is the writer's now. */
int sp_writer_from_fd(int fd, struct sp_writer **out);
int sp_writer_from_fd_compressed(int fd, int zstd_level, struct sp_writer **out);
/* Append a META record: key then nvalues strings. */
int sp_writer_meta(struct sp_writer *w, const char *key, const char *const *values, uint32_t nvalues);
int sp_writer_event(struct sp_writer *w, const char *name, const char *collector,
		    const struct perf_event_attr *attr, const uint64_t *ids, uint32_t nr_ids);
/* A TRACEPOINT record: the format file of tracepoint id in system. */
int sp_writer_tracepoint(struct sp_writer *w, uint64_t id, const char *system, const char *format);
/* KALLSYMS records: the kernel's symbol table text as an LZ4 stream, one block per record. */
int sp_writer_kallsyms(struct sp_writer *w, const char *text, size_t len);
/* Append bytes that are already whole records (the ring buffer's contents). */
int sp_writer_raw(struct sp_writer *w, const void *data, size_t len);
int sp_writer_record(struct sp_writer *w, const void *rec); /* a record with its header filled in */
/* Flush buffered bytes to the file (async: hand them to the writer thread). */
int sp_writer_flush(struct sp_writer *w);
/*
 * fn sees every whole record written from now on, once, in order, on the
 * thread that writes it to the file (the writer thread once async): a
 * summary of the stream made off the drain loop's thread.
 */
typedef void (*sp_record_fn)(void *ctx, const struct perf_event_header *rec);
void sp_writer_watch(struct sp_writer *w, sp_record_fn fn, void *ctx);
/*
 * Everything written so far goes to the file (a watcher has seen it all and
 * is called no more; an async writer's thread ends and the writer goes on
 * synchronously), and what is written from here to sp_writer_finish() is
 * the file's trailer.  -ESPIPE for a writer on a pipe (sp_writer_from_fd):
 * a reader of a pipe cannot read the end first.
 */
int sp_writer_begin_trailer(struct sp_writer *w);
/*
 * From now on write from a thread of its own: a filled buffer is queued and
 * the caller goes on in a fresh one, waiting only when max_queued bytes are
 * queued.  A write error shows in a later call (and in sp_writer_close()).
 * 0, or -errno (the writer then stays synchronous).
 */
int sp_writer_start_async(struct sp_writer *w, size_t max_queued);
/* Bytes of records (and the file header) written or buffered: the file's size when not compressed. */
uint64_t sp_writer_bytes(const struct sp_writer *w);
/*
 * Write everything, stop the writer thread, fsync and close the file
 * (without publishing it or freeing w); 0 or the first write error.
 * sp_writer_file_bytes() is then the file's size; sp_writer_close() or
 * sp_writer_discard() still follows.
 */
int sp_writer_finish(struct sp_writer *w);
/* Bytes written to the file so far (chunks included): exact after sp_writer_finish(). */
uint64_t sp_writer_file_bytes(const struct sp_writer *w);
/*
 * Flush, fsync, close and publish; 0 or -errno.  A write error before the
 * file was published removes it (the previous recording stays); after, the
 * file keeps what was written.  Frees w in every case.
 */
int sp_writer_close(struct sp_writer *w);
/*
 * Give up: remove the file (only the one this writer created: by its
 * temporary name, or by its name while that is still the same file) and
 * put a previous recording it moved to path.old back.  Frees w.
 */
void sp_writer_discard(struct sp_writer *w);

/* ---- reader (report side) ---- */
struct sp_reader;
/*
 * Open and check the header; path "-" is standard input.  On failure returns -errno or -EINVAL with a
 * one-line reason in err (without the file name).
 */
int sp_reader_open(const char *path, struct sp_reader **out, char *err, size_t errlen);
/*
 * The next record: 1 with *rec pointing at it (valid until the next call),
 * 0 at the end.  A corrupt record ends the stream: sp_reader_problem() says
 * what and where.  A partial record at the end is not returned.
 */
int sp_reader_next(struct sp_reader *r, const struct perf_event_header **rec);
/* Whether the file is compressed (version 2, zstd chunks). */
bool sp_reader_compressed(const struct sp_reader *r);
/* NULL, or a description of why reading stopped before the end of the file. */
const char *sp_reader_problem(const struct sp_reader *r);
/* Whether sp_reader_problem() is damage (a corrupt record or chunk) rather than a cut (a partial one at the end). */
bool sp_reader_damaged(const struct sp_reader *r);
/* Read front to back (a pipe), whether the records ended at a trailer's footer: the trailer came after them. */
bool sp_reader_footer_met(const struct sp_reader *r);
/* NULL, or why the trailer the file ends with (its footer was found) was not read whole: the records it held are lost. */
const char *sp_reader_trailer_problem(const struct sp_reader *r);
/*
 * Offset of the record last returned: in the file (version 1), or in the
 * stream of decompressed records counted from the file's start as if it
 * were version 1 (version 2).
 */
uint64_t sp_reader_offset(const struct sp_reader *r);
void sp_reader_close(struct sp_reader *r);

/* The strings of a META record: returns count, fills up to max pointers into the record. */
uint32_t sp_meta_strings(const struct perf_event_header *rec, const char **strings, uint32_t max);

#endif
