/*
 * sample.h: the kernel's records as sigprof reads them: the events of a
 * recording (struct sp_event, an event set indexed by id) and one decoded
 * sample (struct sp_sample) or sample_id trailer.
 *
 * Layer: kernel interface (types only).  The decoder that fills them is the
 * model's (decode.h, profiler/model/decode.c).
 */
#ifndef SIGPROF_SAMPLE_H
#define SIGPROF_SAMPLE_H

#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The sample fields the decoder understands; others make an event undecodable.
 * READ, BRANCH_STACK, TRANSACTION, REGS_INTR, CGROUP and the page sizes are
 * stepped over (perf.data files carry them; sigprof opens none of them).
 */
#define SP_SAMPLE_SUPPORTED                                                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |     \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                      \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |            \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR |        \
	 PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |       \
	 PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE)

/*
 * A context switch record: PERF_RECORD_SWITCH of a task's events, or
 * PERF_RECORD_SWITCH_CPU_WIDE of a CPU's (a cgroup's or -a's), which adds
 * the other task's pid and tid.  Either way the sample_id trailer names
 * the task switching (out, with PERF_RECORD_MISC_SWITCH_OUT, or in) and
 * the misc bits mean the same.
 */
static inline bool record_is_switch(uint32_t type)
{
	return type == PERF_RECORD_SWITCH || type == PERF_RECORD_SWITCH_CPU_WIDE;
}

/*
 * The user registers a DWARF sample carries (attr.sample_regs_user): every
 * x86-64 register the kernel can give, as perf asks for them (the segment
 * registers DS/ES/FS/GS are not valid in 64-bit mode and make the open
 * fail).  A sample's regs[] holds one u64 per set bit, lowest bit first.
 */
#if defined(__x86_64__)
#define SP_UNWIND_REGS_MASK                                                                                   \
	(((1ULL << PERF_REG_X86_64_MAX) - 1) & ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |       \
						  (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS)))
/*
 * The registers of a key copy (stack_key_options()): where the walk starts
 * (IP, SP) and the frame pointer that CFA rules of rbp-framed code read.
 * A key is unwound a few frames deep, through code whose CFI names the
 * caller's frame by SP or BP; the other registers only ever give the
 * callers' values of callee-saved registers, which no CFA rule of those
 * frames reads.  The 136 bytes they would add to every key record were a
 * sixth of stress-ng --signal's records (docs/performance.md).
 */
#define SP_KEY_REGS_MASK ((1ULL << PERF_REG_X86_IP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_BP))
#else
#error "sigprof's DWARF call graphs support x86-64 only"
#endif

struct sp_event {
	unsigned index;             /* position among the file's EVENT records */
	char name[64];              /* "cpu-clock", "sched:sched_switch" */
	char collector[32];         /* "cpu", "sched", ... */
	struct perf_event_attr attr;
	uint64_t *ids;
	uint32_t nr_ids;
	bool decodable;             /* sample_type within SP_SAMPLE_SUPPORTED */
	uint64_t samples;           /* decoded samples of this event in the file */
	uint64_t collector_samples; /* of those, the ones its collector counts (of the workload's tasks) */
	uint64_t stack_copies;      /* of those, the ones that only lent their stack to others (PATH_STACK_ONLY) */
	/* exact totals from the TOTALS record, when the file has one */
	bool has_totals;
	uint64_t total_value, time_enabled, time_running;
};

struct sp_event_set {
	struct sp_event *events;
	size_t count, cap;
	uint64_t *slot_ids;   /* open-addressing id -> event index + 1 */
	uint32_t *slot_index;
	size_t nslots;
	size_t nids;          /* ids of every event: the table is rebuilt, twice as large, when they fill half of it */
};

struct sp_sample {
	struct sp_event *event;
	uint64_t id;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr_callchain;
	const uint64_t *callchain;   /* into the record; PERF_CONTEXT_* markers included */
	uint32_t raw_size;
	const void *raw;
	uint64_t regs_abi;           /* PERF_SAMPLE_REGS_ABI_*; 0 when none */
	const uint64_t *regs;        /* one u64 per bit of attr.sample_regs_user */
	uint32_t nr_regs;
	uint64_t stack_size;         /* bytes copied (stack_user_size) */
	const void *stack;
	uint64_t stack_dyn_size;     /* bytes of it that are valid */
	uint64_t weight;             /* PERF_SAMPLE_WEIGHT, or var1_dw of WEIGHT_STRUCT */
	uint64_t data_src;
	uint64_t phys_addr;
};

/* The trailer of a non-sample record (sample_id_all). */
struct sp_sample_id {
	struct sp_event *event;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	bool valid;
};

#endif
