/*
 * loader.h: the loader's state (profile.c), shared with the code that turns
 * a sample's callchain and stack copy into frames (callchain.c).  Private
 * to profiler/model/.
 */
#ifndef SIGPROF_MODEL_LOADER_H
#define SIGPROF_MODEL_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <lz4.h>

#include "sigprof/kernel/sample.h"
#include "sigprof/model/profile.h"
#include "sigprof/symbolize/unwind.h"

struct queued_record {
	uint64_t time;
	uint64_t seq;    /* arrival order, to keep equal times stable */
	size_t offset;   /* in the queue's arena */
};

/* Kernel records waiting to be processed in time order. */
struct order_queue {
	unsigned char *arena;
	size_t used, cap;
	struct queued_record *items;
	size_t count, items_cap;
	uint64_t seq;
	uint64_t newest;            /* the newest time queued so far */
	uint64_t flushable;         /* the newest time at the previous ROUND */
};

/* Past this, the queue is processed whatever the ROUNDs say: memory stays bounded. */
#define ORDER_QUEUE_MAX_BYTES (256u << 20)

struct loader {
	struct profile *p;
	struct order_queue queue;
	LZ4_streamDecode_t kallsyms_decoder;
	char *kallsyms_text;      /* the recording's kallsyms, decompressed so far */
	size_t kallsyms_size, kallsyms_used;
	uint32_t kallsyms_next;   /* the sequence number expected next */
	bool skip_kallsyms;       /* the user named a kallsyms file, or the copy is settled: no more records */
	enum { COPY_NONE, COPY_LOADING, COPY_INSTALLED, COPY_BROKEN } kallsyms_copy;
	bool kallsyms_late; /* a copy came after the kernel records (a file read without its footer): not used */
	const char *kallsyms_broken;  /* why the copy is unusable */
	bool kernel_symbols_settled;  /* settle_kernel_symbols() ran */
	char boot_id[64];             /* the recording's (META boot_id), "" when it has none */
	const char *kernel_symbols_why; /* why /proc/kallsyms is not used, when it is not */
	bool kallsyms_named;          /* --kallsyms FILE: it wins over copy and host */
	bool host_kallsyms;           /* this machine's /proc/kallsyms may name kernel frames (same boot) */
	char kallsyms_source[128];    /* what the recording's copy is (META kallsyms_source), "" for sigprof's own */
	int *event_collector; /* event index -> collector index, -1 not yet known */
	size_t event_collector_cap;
	uint32_t *frames;
	size_t frames_cap;
	struct dso *kernel;
	struct unwinder *unwinder;    /* made at the first sample that carries user registers */
	struct unwind_result unwound; /* the current sample's, kept here for its size */
	int counted_unwind;           /* how the current sample's DWARF stack counted in profile.unwind (an enum
					 unwind_failure), -1 when it counted as none of them alone (joined, no copy) */
	uint32_t counted_end;         /* the frame its end counted on in profile.unwind's ends_in_*
					 (count_unnamed_end), UINT32_MAX: none */
	struct stack_completion *completion; /* the long copies of collectors that complete cut stacks, or NULL */
	const struct profile_options *opts;
};

/* profile.c */
void profile_add_note(struct profile *p, const char *text);

/* timeline_feed.c: the records and samples the timeline (profile.timeline) is told of */
uint32_t timeline_feed_handlers(const struct profile *p, int c, const struct sp_sample *s, int *innermost);
void timeline_feed_sample(struct profile *p, int c, const struct sp_sample *s, uint32_t stack,
			  uint32_t handlers_before);
void timeline_feed_filtered(struct profile *p, int c, const struct sp_sample *s);
void timeline_feed_record(struct profile *p, const struct perf_event_header *rec, const struct sp_sample_id *id);

/* callchain.c */
uint32_t *frame_buffer(struct loader *l, size_t n);
uint32_t user_frame(struct loader *l, uint32_t pid, uint64_t ip);
uint32_t kernel_frame(struct loader *l, uint64_t ip);
uint32_t chain_to_frames(struct loader *l, const struct sp_sample *s, bool kernel_only, uint32_t *frames);
bool sample_in_kernel(const struct perf_event_header *rec);
void note_unjoined_handlers(struct profile *p);
/*
 * The current sample, a key, counts on the stack lent (another stack of
 * its call site): its unnamed end, counted from its own frames, becomes
 * lent's (the header's shares describe the stacks the report counts).
 */
void count_lent_end(struct loader *l, uint32_t lent);
/* count samples move from stack from to stack to (lend_late_keys()): so do their ends in the header's counts. */
void move_counted_ends(struct profile *p, uint32_t from, uint32_t to, uint64_t count);
uint32_t dwarf_frames(struct loader *l, const struct perf_event_header *rec, const struct sp_sample *s,
		      uint32_t *frames);

#endif
