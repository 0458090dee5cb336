/*
 * decode.h: decoding the kernel's records (profiler/model/decode.c).
 *
 * An event set holds what the EVENT records of a file say about each event
 * (its attr, ids, name, collector), indexed by id.  sample_decode() turns a
 * PERF_RECORD_SAMPLE into a struct sp_sample whose pointers point into the
 * record itself (no copies); record_sample_id() reads the sample_id trailer
 * that sample_id_all appends to every other record.  The decoder reads every
 * sample field sigprof may ask for and rejects records that claim more bytes
 * than they hold.
 *
 * Layer: model.
 */
#ifndef SIGPROF_DECODE_H
#define SIGPROF_DECODE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "sigprof/kernel/sample.h"

/* Add the event an SP_REC_EVENT record describes; 0 or -EINVAL (malformed record). */
int event_set_add(struct sp_event_set *set, const struct perf_event_header *rec);
struct sp_event *event_set_find(const struct sp_event_set *set, uint64_t id);
void event_set_free(struct sp_event_set *set);

/*
 * 0 on success; -ENOENT when the id matches no event (the caller counts it);
 * -EINVAL when the record is malformed for its event's sample_type.
 */
int sample_decode(const struct sp_event_set *set, const struct perf_event_header *rec, struct sp_sample *out);
int record_sample_id(const struct sp_event_set *set, const struct perf_event_header *rec, struct sp_sample_id *out);
/* The time of any kernel record (a sample's TIME, or the sample_id trailer's); 0 or -ENOENT/-EINVAL. */
int record_time(const struct sp_event_set *set, const struct perf_event_header *rec, uint64_t *time);

/*
 * The build-id an MMAP2 record gives for its file (attr.build_id), as
 * lowercase hex into hex; false when the record gives device and inode.
 */
bool mmap2_build_id(const struct perf_event_header *rec, char hex[41]);

#endif
