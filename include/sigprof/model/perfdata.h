/*
 * perfdata.h: reading a perf.data file (perf record's output, file or pipe
 * mode) as the stream of records a sigprof.data file holds
 * (docs/perfdata.md).
 *
 * The kernel records in a sigprof.data are perf's own, so a perf.data file
 * needs no second loader: this reader turns perf's header (attrs, ids,
 * feature sections, tracing data) and pipe mode's header records into
 * sigprof's META, TRACEPOINT and EVENT records, hands on the kernel records
 * (zstd-decompressed when perf record -z packed them) with the event id
 * where sigprof's decoder looks for it (PERF_SAMPLE_IDENTIFIER's places),
 * turns FINISHED_ROUND into ROUND and ends with a FINISH record that says
 * the file came from perf.  datafile.c's reader hands a file whose magic is
 * perf's here, so every reader of recordings (report, script, diff,
 * archive) reads both.
 *
 * The file is untrusted: every length is checked against the record, the
 * section or the file that holds it; damage ends the records with a reason.
 */
#ifndef SIGPROF_PERFDATA_H
#define SIGPROF_PERFDATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the first 8 bytes of a file are perf.data's magic ("PERFILE2"), in either byte order. */
bool perfdata_magic(const void *first8, size_t len);

struct perfdata_reader;
/*
 * Read the perf.data whose first prefix_len bytes (at least 8: the magic)
 * were read from fd already; fd is the reader's now (closed by
 * perfdata_reader_close(), or here on failure).  A file in file mode is
 * read with pread() (fd must be seekable), pipe mode front to back.  0, or
 * -errno with a one-line reason in err.
 */
int perfdata_reader_open(int fd, const void *prefix, size_t prefix_len, struct perfdata_reader **out, char *err,
			 size_t errlen);
/* The next record: 1 with *rec valid until the next call, 0 at the end (or at damage: problem says). */
int perfdata_reader_next(struct perfdata_reader *r, const struct perf_event_header **rec);
/* NULL, or why the records stopped before the end of the file. */
const char *perfdata_reader_problem(const struct perfdata_reader *r);
/* Whether problem is damage rather than a file cut short. */
bool perfdata_reader_damaged(const struct perfdata_reader *r);
/* The file offset (file mode) or stream offset (pipe mode) of the last record read from the file. */
uint64_t perfdata_reader_offset(const struct perfdata_reader *r);
void perfdata_reader_close(struct perfdata_reader *r);

/* The collector that owns an event of a perf.data file, by its attr and name ("sched:sched_switch", "cycles"). */
const char *perfdata_collector_of(const struct perf_event_attr *attr, const char *name);

#endif
