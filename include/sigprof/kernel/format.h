/*
 * format.h: the sigprof.data container, as specified in docs/data-format.md.
 *
 * This header is the layout only: the headers, chunks, sigprof's own
 * records and the trailer, as they lie on disk.  The writer and the reader
 * that make and stream them are the model's (model/datafile.h); decoding
 * what the kernel's records mean is in sample.h.
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
#define SP_FINISH_FOREIGN 4u  /* read from another tool's recording (perf.data): no exit status, no wall clock */

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

#endif
