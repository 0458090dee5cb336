/*
 * datafile.h: the writer and the reader of the sigprof.data container whose
 * layout format.h gives (docs/data-format.md).
 *
 * The writer appends; the reader streams records one at a time with a
 * bounded buffer, so reading a file of any size needs the memory of one
 * record (at most 64 KiB) plus the buffer.  The reader knows nothing of
 * what kernel records mean: decoding is in sample.h.
 */
#ifndef SIGPROF_DATAFILE_H
#define SIGPROF_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/kernel/format.h"

/* The highest zstd level this libzstd knows (ZSTD_maxCLevel()). */
int sp_zstd_max_level(void);

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
/* A META record of key and values, malloc'd, its size in *len; NULL past 64 KiB (a record's limit). */
char *sp_meta_record(const char *key, const char *const *values, uint32_t nvalues, size_t *len);
int sp_writer_event(struct sp_writer *w, const char *name, const char *collector,
		    const struct perf_event_attr *attr, const uint64_t *ids, uint32_t nr_ids);
/* A TRACEPOINT record: the format file of tracepoint id in system. */
int sp_writer_tracepoint(struct sp_writer *w, uint64_t id, const char *system, const char *format);
/* KALLSYMS records: the kernel's symbol table text as an LZ4 stream, one block per record. */
int sp_writer_kallsyms(struct sp_writer *w, const char *text, size_t len);
/*
 * The same KALLSYMS records, each handed to emit (for the writer and for
 * perfdata.c's copy of perf's tracing data): 0, emit's error, or -E2BIG /
 * -ENOMEM.
 */
int sp_kallsyms_records(const char *text, size_t len, int (*emit_record)(void *ctx, const void *rec, size_t size),
			void *ctx);
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
 * What a reader takes: either format by its magic (auto), or only the one
 * named (a file of the other is refused, err naming what was expected).
 */
enum sp_input_format { SP_INPUT_AUTO, SP_INPUT_SIGPROF, SP_INPUT_PERF };
int sp_reader_open_format(const char *path, enum sp_input_format format, struct sp_reader **out, char *err,
			  size_t errlen);
/* "auto", "sigprof" or "perf" to its enum; -EINVAL for another word. */
int sp_input_format_parse(const char *name, enum sp_input_format *format);
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
