/*
 * kernel_refs.h: the kernel addresses a recording refers to
 * (profiler/model/kernel_refs.c).
 *
 * The recorder watches the records it writes (sp_writer_watch()) and
 * collects every kernel address a report may look up: the kernel part of
 * each sample's callchain (each address and the one before it, the call
 * site a report names for a return address), its ip and data address, and
 * the values in its raw tracepoint fields that lie in the kernel's half of
 * the address space (a lock's address).  At the end the recording carries
 * the kernel symbols of those addresses only (kallsyms_subset()).
 *
 * Layer: model.
 */
#ifndef SIGPROF_KERNEL_REFS_H
#define SIGPROF_KERNEL_REFS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct kernel_refs;

struct kernel_refs *kernel_refs_new(void);
/* An sp_record_fn (format.h): EVENT records describe the events, samples give addresses. */
void kernel_refs_see(void *refs, const struct perf_event_header *rec);
/* The distinct addresses seen, in no order; *n of them.  The array is the caller's to free. */
uint64_t *kernel_refs_addresses(const struct kernel_refs *refs, size_t *n);
void kernel_refs_free(struct kernel_refs *refs);

#endif
