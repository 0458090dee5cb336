/*
 * test_c2c.c: the c2c collector (collectors/c2c.c, include/sigprof/collectors/c2c.h).
 *
 * Classification: data_src values built from the <linux/perf_event.h> bit
 * macros exactly as the kernel's encoders build them (arch/x86/events/intel/
 * ds.c: pebs_data_source[] and intel_pmu_pebs_data_source_skl(); arch/x86/
 * events/amd/ibs.c: g_data_src[], g_zen4_data_src[] and the snoop and
 * remote-node rules; a hops-based encoding), each with the class
 * docs/c2c.md gives it.
 *
 * End to end: a recording written here (datafile.c's writer, records laid
 * out as the kernel writes them) maps the ELF fixture, whose data symbols
 * nm names, and holds c2c samples on known addresses (one a futex word that
 * futex samples also name, one a kernel lock that lock samples contend)
 * with known data sources and stacks.  Every expected figure of the report
 * (cachelines, their symbols, offsets, futex and lock marks; per-path HITM
 * and DRAM) is computed from the samples the test wrote.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/c2c.h"
#include "sigprof/model/collector.h"
#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/collectors/futex_tracker.h"
#include "sigprof/model/paths.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/model/profile.h"
#include "sigprof/commands/report.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

/* ---- data_src as the kernel's encoders build it ---- */

#define OP(x) PERF_MEM_S(OP, x)
#define LVL(x) PERF_MEM_S(LVL, x)
#define LN(x) PERF_MEM_S(LVLNUM, x)
#define SNOOP(x) PERF_MEM_S(SNOOP, x)
#define SNOOPX(x) PERF_MEM_S(SNOOPX, x)
#define REM PERF_MEM_S(REMOTE, REMOTE)
#define HOPS(x) PERF_MEM_S(HOPS, x)
/* ds.c's OP_LH: a load that hit at the level named */
#define OP_LH (OP(LOAD) | LVL(HIT))
/* ibs.c's L(x): a level and HIT */
#define AMD_L(x) (LVL(x) | LVL(HIT))
/* PERF_MEM_LVLNUM_UNC (Linux 6.1) is missing from older uapi headers */
#define LN_UNC (0x08ull << PERF_MEM_LVLNUM_SHIFT)

struct class_case {
	const char *encoding;
	uint64_t data_src;
	enum c2c_class cls;
};

static const struct class_case class_cases[] = {
	/* Intel, pebs_data_source[] (Nehalem through Ice Lake; the load-latency PEBS record's source field) */
	{ "intel 0x00 unknown L3 miss", OP(LOAD) | LVL(MISS) | LN(L3) | SNOOP(NA), C2C_LOAD_OTHER },
	{ "intel 0x01 L1", OP_LH | LVL(L1) | LN(L1) | SNOOP(NONE), C2C_L1_HIT },
	{ "intel 0x02 LFB", OP_LH | LVL(LFB) | LN(LFB) | SNOOP(NONE), C2C_LFB_HIT },
	{ "intel 0x03 L2", OP_LH | LVL(L2) | LN(L2) | SNOOP(NONE), C2C_L2_HIT },
	{ "intel 0x04 L3 no snoop", OP_LH | LVL(L3) | LN(L3) | SNOOP(NONE), C2C_LLC_HIT },
	{ "intel 0x05 L3 snoop miss", OP_LH | LVL(L3) | LN(L3) | SNOOP(MISS), C2C_LLC_HIT },
	{ "intel 0x06 L3 snoop hit", OP_LH | LVL(L3) | LN(L3) | SNOOP(HIT), C2C_LLC_HIT },
	{ "intel 0x07 L3 snoop hitm", OP_LH | LVL(L3) | LN(L3) | SNOOP(HITM), C2C_LOCAL_HITM },
	{ "intel 0x08 remote cache hit", OP_LH | LVL(REM_CCE1) | REM | LN(L3) | SNOOP(HIT), C2C_REMOTE_HIT },
	{ "intel 0x09 remote cache hitm", OP_LH | LVL(REM_CCE1) | REM | LN(L3) | SNOOP(HITM), C2C_REMOTE_HITM },
	{ "intel 0x0a local dram shared", OP_LH | LVL(LOC_RAM) | LN(RAM) | SNOOP(HIT), C2C_LOCAL_DRAM },
	{ "intel 0x0b remote dram shared", OP_LH | LVL(REM_RAM1) | REM | LN(L3) | SNOOP(HIT), C2C_REMOTE_DRAM },
	{ "intel 0x0c local dram excl", OP_LH | LVL(LOC_RAM) | LN(RAM) | SNOOP(NONE) | SNOOP(MISS), C2C_LOCAL_DRAM },
	{ "intel 0x0d remote dram excl", OP_LH | LVL(REM_RAM1) | LN(RAM) | REM | SNOOP(NONE) | SNOOP(MISS),
	  C2C_REMOTE_DRAM },
	{ "intel 0x0e io", OP_LH | LVL(IO) | LN(NA) | SNOOP(NONE), C2C_UNCACHED },
	{ "intel 0x0f uncached", OP_LH | LVL(UNC) | LN(NA) | SNOOP(NONE), C2C_UNCACHED },
	/* Skylake and later server parts (intel_pmu_pebs_data_source_skl) */
	{ "skl 0x08 local L4", OP_LH | LN(L4) | SNOOP(HIT), C2C_LOAD_OTHER },
	{ "skl 0x0b remote dram", OP_LH | LN(RAM) | REM | SNOOP(NONE), C2C_REMOTE_DRAM },
	{ "skl 0x0c remote cache forward", OP_LH | LN(ANY_CACHE) | REM | SNOOPX(FWD), C2C_REMOTE_HIT },
	{ "skl 0x0d remote hitm", OP_LH | LN(ANY_CACHE) | REM | SNOOP(HITM), C2C_REMOTE_HITM },
	/* stores (precise store data: L1 hit or miss) */
	{ "intel store L1 hit", OP(STORE) | LVL(L1) | LVL(HIT) | SNOOP(NA), C2C_STORE_L1_HIT },
	{ "intel store L1 miss", OP(STORE) | LVL(L1) | LVL(MISS) | SNOOP(NA), C2C_STORE_L1_MISS },
	{ "store level unknown", OP(STORE) | LVL(NA) | SNOOP(NA), C2C_STORE_OTHER },
	/* AMD IBS before Zen 4 (g_data_src) */
	{ "ibs local cache hitm", OP(LOAD) | AMD_L(L3) | AMD_L(REM_CCE1) | LN(ANY_CACHE) | HOPS(0) | SNOOP(HITM),
	  C2C_LOCAL_HITM },
	{ "ibs local cache clean", OP(LOAD) | AMD_L(L3) | AMD_L(REM_CCE1) | LN(ANY_CACHE) | HOPS(0) | SNOOP(NA),
	  C2C_LLC_HIT },
	{ "ibs remote cache hitm", OP(LOAD) | AMD_L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1) | SNOOP(HITM),
	  C2C_REMOTE_HITM },
	{ "ibs dram", OP(LOAD) | AMD_L(LOC_RAM) | LN(RAM) | SNOOP(NA), C2C_LOCAL_DRAM },
	{ "ibs remote-node dram", OP(LOAD) | AMD_L(REM_RAM1) | LN(RAM) | REM | HOPS(1) | SNOOP(NA), C2C_REMOTE_DRAM },
	{ "ibs io", OP(LOAD) | AMD_L(IO) | LN(IO) | SNOOP(NA), C2C_UNCACHED },
	{ "ibs uncached", OP(LOAD) | AMD_L(UNC) | LN_UNC | SNOOP(NA), C2C_UNCACHED },
	{ "ibs L1", OP(LOAD) | AMD_L(L1) | LN(L1) | SNOOP(NA), C2C_L1_HIT },
	{ "ibs L2", OP(LOAD) | AMD_L(L2) | LN(L2) | SNOOP(NA), C2C_L2_HIT },
	{ "ibs miss address buffer", OP(LOAD) | AMD_L(LFB) | LN(LFB) | SNOOP(NA), C2C_LFB_HIT },
	{ "ibs source unknown", OP(LOAD) | LVL(NA) | LN(NA) | SNOOP(NA), C2C_LOAD_OTHER },
	{ "ibs store L1", OP(STORE) | AMD_L(L1) | LN(L1) | SNOOP(NA), C2C_STORE_L1_HIT },
	/* AMD IBS on Zen 4 (g_zen4_data_src) */
	{ "zen4 local L3 hitm", OP(LOAD) | AMD_L(L3) | LN(L3) | SNOOP(HITM), C2C_LOCAL_HITM },
	{ "zen4 local L3", OP(LOAD) | AMD_L(L3) | LN(L3) | SNOOP(NA), C2C_LLC_HIT },
	{ "zen4 near ccx hitm", OP(LOAD) | AMD_L(REM_CCE1) | LN(ANY_CACHE) | REM | HOPS(0) | SNOOP(HITM),
	  C2C_REMOTE_HITM },
	{ "zen4 far ccx clean", OP(LOAD) | AMD_L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1) | SNOOP(NA),
	  C2C_REMOTE_HIT },
	{ "zen4 pmem", OP(LOAD) | LN(PMEM) | SNOOP(NA), C2C_LOAD_OTHER },
	{ "zen4 remote-node dram", OP(LOAD) | AMD_L(REM_RAM1) | LN(RAM) | REM | HOPS(1) | SNOOP(NA), C2C_REMOTE_DRAM },
	/* hops-based: a level number, the remote bit and a hop count, no legacy level bits */
	{ "hops remote socket hitm", OP(LOAD) | LN(ANY_CACHE) | REM | HOPS(2) | SNOOP(HITM), C2C_REMOTE_HITM },
	{ "hops remote socket dram", OP(LOAD) | LN(RAM) | REM | HOPS(2), C2C_REMOTE_DRAM },
	{ "hops peer core L2", OP(LOAD) | LN(L2) | HOPS(0) | SNOOPX(PEER), C2C_L2_HIT },
	{ "hops local dram", OP(LOAD) | LN(RAM), C2C_LOCAL_DRAM },
	/* no op */
	{ "op not available", OP(NA) | LVL(NA), C2C_OTHER },
	{ "prefetch", OP(PFETCH) | LVL(L1) | LVL(HIT), C2C_OTHER },
	{ "zero", 0, C2C_OTHER },
};

Test(c2c, every_encoding_gets_its_class)
{
	for (size_t i = 0; i < ARRAY_SIZE(class_cases); i++) {
		const struct class_case *c = &class_cases[i];
		enum c2c_class got = c2c_classify(c->data_src);
		cr_expect_eq(got, c->cls, "%s (0x%llx): %s, expected %s", c->encoding, (unsigned long long)c->data_src,
			     c2c_class_name(got), c2c_class_name(c->cls));
	}
}

Test(c2c, every_class_has_a_case_and_a_rule)
{
	bool cased[C2C_CLASS_COUNT] = { false }, ruled[C2C_CLASS_COUNT] = { false };
	for (size_t i = 0; i < ARRAY_SIZE(class_cases); i++)
		cased[class_cases[i].cls] = true;
	size_t n;
	const struct c2c_rule *rules = c2c_rules(&n);
	for (size_t i = 0; i < n; i++) {
		ruled[rules[i].cls] = true;
		cr_expect_not_null(rules[i].why);
	}
	for (int k = 0; k < C2C_CLASS_COUNT; k++) {
		cr_expect(cased[k], "no encoding yields %s", c2c_class_name((enum c2c_class)k));
		cr_expect(ruled[k], "no rule yields %s", c2c_class_name((enum c2c_class)k));
	}
	/* the last rule takes everything: a value always has a class */
	cr_expect_eq(rules[n - 1].all | rules[n - 1].any | rules[n - 1].none, 0);
}

Test(c2c, loads_and_stores_partition_the_classes)
{
	for (int k = 0; k < C2C_CLASS_COUNT; k++) {
		enum c2c_class cls = (enum c2c_class)k;
		cr_expect(!(c2c_class_is_load(cls) && c2c_class_is_store(cls)), "%s", c2c_class_name(cls));
		cr_expect_eq(strncmp(c2c_class_name(cls), "store_", 6) == 0, c2c_class_is_store(cls), "%s",
			     c2c_class_name(cls));
	}
	cr_expect(!c2c_class_is_load(C2C_OTHER) && !c2c_class_is_store(C2C_OTHER));
}

/* ---- the futex collector's word query ---- */

Test(c2c, futex_words_in_a_range)
{
	struct futex_tracker *t = futex_tracker_new();
	struct futex_call c = { .enter = true, .pid = 7, .tid = 7, .time = 1, .period = 1,
				.op = futex_op_decode(FUTEX_OP_PRIVATE_FLAG), .uaddr = 0x1044 };
	futex_tracker_enter(t, &c);
	c.op = (struct futex_op){ .id = FOP_SYS_WAITV };
	c.uaddr = 0x2000; /* a futex_waitv array, not a word */
	c.tid = 8;
	futex_tracker_enter(t, &c);
	cr_expect(futex_tracker_has_word_in(t, 7, 0x1040, 0x1080));
	cr_expect(futex_tracker_has_word_in(t, 7, 0x1044, 0x1048));
	cr_expect(!futex_tracker_has_word_in(t, 7, 0x1000, 0x1040));
	cr_expect(!futex_tracker_has_word_in(t, 7, 0x1048, 0x1080));
	cr_expect(!futex_tracker_has_word_in(t, 8, 0x1040, 0x1080), "another process's word");
	cr_expect(!futex_tracker_has_word_in(t, 7, 0x2000, 0x2040), "a waitv array is no futex word");
	futex_tracker_free(t);
}

/* ---- end to end: a synthetic recording through the report ---- */

TEMP_DIR_SUITE(c2c_report);

#define FIXTURE "build/fixtures/elf_fixture"
#define C2C_ID 501
#define FUTEX_ID 502
#define FUTEX_TP_ID 522 /* the tracepoint id the recording says it had */
#define LOCK_BEGIN_ID 503
#define LOCK_END_ID 504
#define LOCK_BEGIN_TP_ID 408
#define LOCK_END_TP_ID 407
#define LOCK_OFFSET 0x44 /* a contended kernel lock in the line of the IN_KERNEL cases */
#define PID 4242
#define HEAP_START 0x5555aaaa0000ull
#define HEAP_LEN 0x21000ull
#define KERNEL_DATA 0xffffffff82000000ull /* futex_queues in the test's kallsyms */
#define SAMPLE_LATENCY 123                /* every c2c sample's weight */

#define C2C_SAMPLE_TYPE                                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |     \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT_STRUCT |            \
	 PERF_SAMPLE_DATA_SRC)
#define FUTEX_SAMPLE_TYPE                                                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |      \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)

static const char kallsyms_text[] = "ffffffff81000000 T futex_wait\n"
				    "ffffffff81000100 T futex_wake\n"
				    "ffffffff81000200 T do_syscall_64\n"
				    "ffffffff82000000 D futex_queues\n"
				    "ffffffff82001000 D after_futex_queues\n";

/* The sys_enter_futex format as Linux 6.18 writes it in tracefs. */
static const char futex_format[] =
	"name: sys_enter_futex\n"
	"ID: 522\n"
	"format:\n"
	TRACEPOINT_COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:u32 * uaddr;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:int op;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 val;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:const struct __kernel_timespec * utime;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 * uaddr2;\toffset:48;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 val3;\toffset:56;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"uaddr: 0x%08lx, op: 0x%08lx\", ((unsigned long)(REC->uaddr)), ((unsigned long)(REC->op))\n";

/* The lock tracepoints' formats as Linux 6.18 writes them in tracefs. */
static const char lock_begin_format[] =
	"name: contention_begin\n"
	"ID: 408\n"
	"format:\n"
	TRACEPOINT_COMMON_FIELDS
	"\tfield:void * lock_addr;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int flags;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"%p (flags=%x)\", REC->lock_addr, REC->flags\n";
static const char lock_end_format[] =
	"name: contention_end\n"
	"ID: 407\n"
	"format:\n"
	TRACEPOINT_COMMON_FIELDS
	"\tfield:void * lock_addr;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:int ret;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"%p (ret=%d)\", REC->lock_addr, REC->ret\n";

enum where { IN_FIXTURE, IN_HEAP, IN_KERNEL, NO_ADDRESS };
enum test_stack { STACK_WAIT, STACK_FILL, STACK_COUNT };

/* One kind of c2c sample the test writes `count` times. */
struct c2c_case {
	enum where where;
	const char *symbol;    /* IN_FIXTURE: the fixture's data symbol */
	uint64_t offset;       /* from the symbol, the heap's start or futex_queues */
	uint64_t data_src;
	enum test_stack stack;
	unsigned count;
};

static const struct c2c_case c2c_cases[] = {
	{ IN_FIXTURE, "fixture_word", 0, OP_LH | LVL(REM_CCE1) | REM | LN(L3) | SNOOP(HITM), STACK_WAIT, 3 },
	{ IN_FIXTURE, "fixture_word", 0, OP_LH | LVL(L3) | LN(L3) | SNOOP(HITM), STACK_WAIT, 2 },
	{ IN_FIXTURE, "fixture_word", 0, OP(STORE) | LVL(L1) | LVL(HIT), STACK_FILL, 1 },
	{ IN_FIXTURE, "fixture_table", 8, OP_LH | LVL(LOC_RAM) | LN(RAM) | SNOOP(HIT), STACK_FILL, 2 },
	{ IN_FIXTURE, "fixture_table", 72, OP_LH | LN(ANY_CACHE) | REM | SNOOP(HITM), STACK_FILL, 1 },
	{ IN_FIXTURE, "fixture_table", 72, OP_LH | LVL(REM_RAM1) | LN(RAM) | REM | SNOOP(NONE), STACK_WAIT, 2 },
	{ IN_HEAP, NULL, 0x1048, OP_LH | LVL(L1) | LN(L1) | SNOOP(NONE), STACK_FILL, 4 },
	{ IN_HEAP, NULL, 0x1050, OP(STORE) | LVL(L1) | LVL(MISS), STACK_FILL, 1 },
	{ IN_KERNEL, NULL, 0x48, OP(LOAD) | AMD_L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1) | SNOOP(HITM),
	  STACK_WAIT, 5 },
	{ IN_KERNEL, NULL, 0x40, OP(LOAD) | AMD_L(L3) | LN(L3) | SNOOP(HITM), STACK_WAIT, 1 },
	{ NO_ADDRESS, NULL, 0, OP_LH | LVL(L3) | LN(L3) | SNOOP(HITM), STACK_FILL, 2 },
};

/* What the test knows of the fixture as loaded into the workload. */
struct layout {
	char path[PATH_MAX];
	uint64_t base;                /* load bias */
	struct load_segments segments;
	uint64_t user_ip[STACK_COUNT]; /* a code address in the fixture for each test stack */
	struct nm_symbol symbols[8];   /* nm's answers so far: each name is asked once */
	size_t nsymbols;
};

/* The address of a fixture symbol in the workload: its nm address plus the load bias. */
static uint64_t symbol_address(struct layout *l, const char *name)
{
	for (size_t i = 0; i < l->nsymbols; i++)
		if (strcmp(l->symbols[i].name, name) == 0)
			return l->base + l->symbols[i].address;
	cr_assert_lt(l->nsymbols, ARRAY_SIZE(l->symbols));
	l->symbols[l->nsymbols] = nm_symbol(l->path, name);
	return l->base + l->symbols[l->nsymbols++].address;
}

static struct layout fixture_layout(void)
{
	struct layout l = { .nsymbols = 0 };
	cr_assert_not_null(realpath(FIXTURE, l.path), "build the fixtures first (make fixtures)");
	l.segments = load_segments(l.path);
	l.base = l.segments.relocatable ? 0x555555554000ull : 0;
	l.user_ip[STACK_WAIT] = symbol_address(&l, "fixture_add") + 4;
	l.user_ip[STACK_FILL] = symbol_address(&l, "fixture_fill") + 4;
	return l;
}

static uint64_t case_address(struct layout *l, const struct c2c_case *c)
{
	switch (c->where) {
	case IN_FIXTURE:
		return symbol_address(l, c->symbol) + c->offset;
	case IN_HEAP:
		return HEAP_START + c->offset;
	case IN_KERNEL:
		return KERNEL_DATA + c->offset;
	default:
		return 0;
	}
}

/* The name the report must give the address: the symbol, the heap mapping or the kernel symbol, with the offset. */
static void case_name(const struct c2c_case *c, char *buf, size_t len)
{
	const char *base = c->where == IN_FIXTURE ? c->symbol : c->where == IN_HEAP ? "[heap]" : "futex_queues";
	if (c->offset)
		snprintf(buf, len, "%s+0x%llx", base, (unsigned long long)c->offset);
	else
		snprintf(buf, len, "%s", base);
}

static int test_stack_path(enum test_stack s)
{
	return s == STACK_WAIT ? PATH_FUTEX_WAIT : PATH_OTHER;
}

static void add_record(struct sp_writer *w, struct byte_builder *b)
{
	cr_assert_eq(sp_writer_raw(w, b->buf, b->len), 0);
	bb_free(b);
}

static void write_mappings(struct sp_writer *w, const struct layout *l)
{
	struct trailer t = { .pid = PID, .tid = PID, .time = 1000, .id = C2C_ID };
	for (size_t i = 0; i < l->segments.count; i++) {
		const struct load_segment *s = &l->segments.seg[i];
		uint64_t start = (s->vaddr & ~0xfffull), end = ALIGN_UP(s->vaddr + s->memsz, 0x1000);
		struct byte_builder b = { 0 };
		bb_mmap2(&b, l->base + start, end - start, s->offset & ~0xfffull, s->prot, 2 /* MAP_PRIVATE */, l->path,
			 C2C_SAMPLE_TYPE, &t);
		add_record(w, &b);
	}
	struct byte_builder b = { 0 };
	bb_mmap2(&b, HEAP_START, HEAP_LEN, 0, 3, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, "[heap]", C2C_SAMPLE_TYPE, &t);
	add_record(w, &b);
}

static void write_c2c_sample(struct sp_writer *w, struct layout *l, const struct c2c_case *c, uint64_t time)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	bb_u64(&b, C2C_ID);
	bb_u64(&b, l->user_ip[c->stack]);
	bb_u32_pair(&b, PID, PID + 1);
	bb_u64(&b, time);
	bb_u64(&b, case_address(l, c));
	bb_u32_pair(&b, 1, 0); /* cpu, res */
	bb_u64(&b, 10007);     /* period */
	if (c->stack == STACK_WAIT) {
		bb_u64(&b, 4);
		bb_u64(&b, (uint64_t)PERF_CONTEXT_KERNEL);
		bb_u64(&b, 0xffffffff81000010ull); /* in futex_wait */
		bb_u64(&b, (uint64_t)PERF_CONTEXT_USER);
		bb_u64(&b, l->user_ip[c->stack]);
	} else {
		bb_u64(&b, 2);
		bb_u64(&b, (uint64_t)PERF_CONTEXT_USER);
		bb_u64(&b, l->user_ip[c->stack]);
	}
	bb_u64(&b, SAMPLE_LATENCY); /* weight: the load's latency in cycles */
	bb_u64(&b, c->data_src);
	bb_end_record(&b, at);
	add_record(w, &b);
}

/* A sys_enter_futex sample: FUTEX_WAIT_PRIVATE on uaddr, the raw tracepoint data as the kernel lays it out. */
static void write_futex_sample(struct sp_writer *w, uint64_t uaddr, uint64_t time)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	bb_u64(&b, FUTEX_ID);
	bb_u64(&b, 0xffffffff81000210ull);
	bb_u32_pair(&b, PID, PID);
	bb_u64(&b, time);
	bb_u32_pair(&b, 0, 0);
	bb_u64(&b, 1);
	bb_u32(&b, 68); /* 64 bytes of fields and 4 of padding: size and data end on 8 bytes */
	uint16_t common_type = FUTEX_TP_ID;
	bb_bytes(&b, &common_type, 2);
	bb_zeros(&b, 2);
	bb_u32(&b, PID);
	bb_u32(&b, 202); /* __syscall_nr */
	bb_zeros(&b, 4);
	bb_u64(&b, uaddr);
	bb_u64(&b, FUTEX_OP_PRIVATE_FLAG); /* op: WAIT|PRIVATE */
	bb_u64(&b, 0);                     /* val */
	bb_u64(&b, 0);                     /* utime */
	bb_u64(&b, 0);                     /* uaddr2 */
	bb_u64(&b, 0);                     /* val3 */
	bb_zeros(&b, 4);
	bb_end_record(&b, at);
	add_record(w, &b);
}

/* A lock:contention_begin (flags) or contention_end (ret 0) sample of the workload on addr. */
static void write_lock_sample(struct sp_writer *w, bool begin, uint64_t addr, uint64_t time)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	bb_u64(&b, begin ? LOCK_BEGIN_ID : LOCK_END_ID);
	bb_u64(&b, 0xffffffff81000010ull); /* in futex_wait */
	bb_u32_pair(&b, PID, PID);
	bb_u64(&b, time);
	bb_u32_pair(&b, 0, 0);
	bb_u64(&b, 1);
	bb_u32(&b, 20); /* 20 bytes of fields: size and data end on 8 bytes */
	uint16_t common_type = begin ? LOCK_BEGIN_TP_ID : LOCK_END_TP_ID;
	bb_bytes(&b, &common_type, 2);
	bb_zeros(&b, 2);
	bb_u32(&b, PID);
	bb_u64(&b, addr);
	bb_u32(&b, begin ? 1 /* LCB_F_SPIN */ : 0 /* ret */);
	bb_end_record(&b, at);
	add_record(w, &b);
}

static void write_lock_events(struct sp_writer *w)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.sample_period = 1;
	attr.sample_type = FUTEX_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.config = LOCK_BEGIN_TP_ID;
	uint64_t id = LOCK_BEGIN_ID;
	cr_assert_eq(sp_writer_event(w, "lock:contention_begin", "lock", &attr, &id, 1), 0);
	attr.config = LOCK_END_TP_ID;
	id = LOCK_END_ID;
	cr_assert_eq(sp_writer_event(w, "lock:contention_end", "lock", &attr, &id, 1), 0);
	cr_assert_eq(sp_writer_tracepoint(w, LOCK_BEGIN_TP_ID, "lock", lock_begin_format), 0);
	cr_assert_eq(sp_writer_tracepoint(w, LOCK_END_TP_ID, "lock", lock_end_format), 0);
	static const char *const lock_ok[] = { "lock", "ok", "" };
	cr_assert_eq(sp_writer_meta(w, "collector_status", lock_ok, 3), 0);
}

static void write_events(struct sp_writer *w)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_RAW;
	attr.config = 0x1cd;  /* mem-loads: event 0xcd, umask 0x1 */
	attr.config1 = 30;    /* ldlat */
	attr.precise_ip = 3;
	attr.sample_period = 10007;
	attr.sample_type = C2C_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.mmap = attr.mmap2 = attr.comm = attr.task = attr.mmap_data = 1;
	uint64_t id = C2C_ID;
	cr_assert_eq(sp_writer_event(w, "cpu/mem-loads,ldlat=30/P", "c2c", &attr, &id, 1), 0);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = FUTEX_TP_ID;
	attr.sample_period = 1;
	attr.sample_type = FUTEX_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	id = FUTEX_ID;
	cr_assert_eq(sp_writer_event(w, "syscalls:sys_enter_futex", "futex", &attr, &id, 1), 0);
	cr_assert_eq(sp_writer_tracepoint(w, FUTEX_TP_ID, "syscalls", futex_format), 0);
	static const char *const c2c_ok[] = { "c2c", "ok", "" }, *const futex_ok[] = { "futex", "ok", "" };
	cr_assert_eq(sp_writer_meta(w, "collector_status", c2c_ok, 3), 0);
	cr_assert_eq(sp_writer_meta(w, "collector_status", futex_ok, 3), 0);
	write_lock_events(w);
}

/* Write the recording; *futex_word is the address the futex samples name. */
static char *write_recording(struct layout *l, uint64_t *futex_word)
{
	char *path = path_join(dir, "c2c.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	write_events(w);
	write_mappings(w, l);
	*futex_word = symbol_address(l, "fixture_word");
	uint64_t time = 2000;
	write_futex_sample(w, *futex_word, time++);
	write_lock_sample(w, true, KERNEL_DATA + LOCK_OFFSET, time++);
	write_lock_sample(w, false, KERNEL_DATA + LOCK_OFFSET, time++);
	for (size_t i = 0; i < ARRAY_SIZE(c2c_cases); i++)
		for (unsigned k = 0; k < c2c_cases[i].count; k++)
			write_c2c_sample(w, l, &c2c_cases[i], time++);
	struct byte_builder b = { 0 };
	bb_end_record(&b, bb_begin_record(&b, SP_REC_ROUND, 0));
	add_record(w, &b);
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) }, .duration_ns = 1000000 };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	return path;
}

/* What the report must say of one cacheline, from the cases. */
struct expected_line {
	uint64_t addr;
	uint32_t pid;
	uint64_t lowest;       /* lowest touched address */
	char symbol[128];
	uint64_t hitm_local, hitm_remote, loads, stores;
	bool futex;
};

static size_t expected_lines(struct layout *l, uint64_t futex_word, struct expected_line *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(c2c_cases); i++) {
		const struct c2c_case *c = &c2c_cases[i];
		if (c->where == NO_ADDRESS)
			continue;
		uint64_t addr = case_address(l, c), line = addr & ~63ull;
		uint32_t pid = c->where == IN_KERNEL ? 0 : PID;
		struct expected_line *e = NULL;
		for (size_t j = 0; j < n; j++)
			if (out[j].addr == line && out[j].pid == pid)
				e = &out[j];
		if (!e) {
			cr_assert_lt(n, max);
			e = &out[n++];
			memset(e, 0, sizeof(*e));
			e->addr = line;
			e->pid = pid;
			e->lowest = UINT64_MAX;
			e->futex = pid == PID && futex_word >= line && futex_word < line + 64;
		}
		if (addr < e->lowest) {
			e->lowest = addr;
			case_name(c, e->symbol, sizeof(e->symbol));
		}
		enum c2c_class cls = c2c_classify(c->data_src);
		e->hitm_local += cls == C2C_LOCAL_HITM ? c->count : 0;
		e->hitm_remote += cls == C2C_REMOTE_HITM ? c->count : 0;
		e->loads += c2c_class_is_load(cls) ? c->count : 0;
		e->stores += c2c_class_is_store(cls) ? c->count : 0;
	}
	return n;
}

struct path_figures {
	uint64_t hitm_local, hitm_remote, dram_local, dram_remote;
};

static void expected_paths(struct path_figures *out)
{
	memset(out, 0, PATH_COUNT * sizeof(*out));
	for (size_t i = 0; i < ARRAY_SIZE(c2c_cases); i++) {
		const struct c2c_case *c = &c2c_cases[i];
		struct path_figures *f = &out[test_stack_path(c->stack)];
		enum c2c_class cls = c2c_classify(c->data_src);
		f->hitm_local += cls == C2C_LOCAL_HITM ? c->count : 0;
		f->hitm_remote += cls == C2C_REMOTE_HITM ? c->count : 0;
		f->dram_local += cls == C2C_LOCAL_DRAM ? c->count : 0;
		f->dram_remote += cls == C2C_REMOTE_DRAM ? c->count : 0;
	}
}

static void load_recording(const char *path, struct profile *p)
{
	char *kallsyms = path_join(dir, "kallsyms");
	write_file(kallsyms, kallsyms_text, strlen(kallsyms_text));
	struct profile_options opts = { .kallsyms = kallsyms, .collectors = collector_table,
					.ncollectors = collector_count };
	char err[256] = "";
	cr_assert_eq(profile_load(path, &opts, p, err, sizeof(err)), 0, "%s", err);
	free(kallsyms);
}

static const struct report_options report_defaults = { .view = { .top = 15, .stacks_per_path = 3, .max_frames = 24 } };

/* The JSON report of p through jq: one output line per input line of the filter. */
static void json_through_jq(const struct profile *p, const char *filter, line_handler handle, void *context)
{
	char *json = path_join(dir, "report.json");
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	report_json(p, &report_defaults, f);
	cr_assert_eq(fclose(f), 0);
	char command[1024];
	snprintf(command, sizeof(command), "jq -c '%s' %s", filter, json);
	each_output_line(command, handle, context);
	free(json);
}

struct line_rows {
	char rows[32][512];
	size_t count;
};

static void take_line(const char *line, void *context)
{
	struct line_rows *r = context;
	cr_assert_lt(r->count, 32);
	snprintf(r->rows[r->count], sizeof(r->rows[0]), "%s", line);
	r->rows[r->count][strcspn(r->rows[r->count], "\n")] = '\0';
	r->count++;
}

Test(c2c_report, cachelines_symbols_offsets_futex_mark_and_paths)
{
	struct layout l = fixture_layout();
	uint64_t futex_word;
	char *path = write_recording(&l, &futex_word);
	struct profile p;
	load_recording(path, &p);

	struct expected_line want[16];
	size_t nwant = expected_lines(&l, futex_word, want, ARRAY_SIZE(want));
	struct path_figures paths[PATH_COUNT];
	expected_paths(paths);

	/* JSON: every line with its figures, in HITM order (ties: more samples, then lower address) */
	struct line_rows got = { .count = 0 };
	json_through_jq(&p, ".cachelines[] | [.addr, .symbol, .pid, .hitm_local, .hitm_remote, .loads, .stores, .futex]",
			take_line, &got);
	cr_assert_eq(got.count, nwant, "%zu lines, expected %zu", got.count, nwant);
	bool seen[16] = { false };
	uint64_t previous_hitm = UINT64_MAX;
	for (size_t i = 0; i < got.count; i++) {
		bool found = false;
		for (size_t j = 0; j < nwant && !found; j++) {
			char row[512];
			snprintf(row, sizeof(row), "[\"0x%llx\",\"%s\",%u,%llu,%llu,%llu,%llu,%s]",
				 (unsigned long long)want[j].addr, want[j].symbol, want[j].pid,
				 (unsigned long long)want[j].hitm_local, (unsigned long long)want[j].hitm_remote,
				 (unsigned long long)want[j].loads, (unsigned long long)want[j].stores,
				 want[j].futex ? "true" : "false");
			if (strcmp(row, got.rows[i]) == 0) {
				found = seen[j] = true;
				uint64_t hitm = want[j].hitm_local + want[j].hitm_remote;
				cr_expect_leq(hitm, previous_hitm, "line %s out of HITM order", row);
				previous_hitm = hitm;
			}
		}
		cr_expect(found, "unexpected cacheline %s", got.rows[i]);
	}
	size_t futex_lines = 0;
	for (size_t j = 0; j < nwant; j++) {
		cr_expect(seen[j], "line 0x%llx (%s) missing", (unsigned long long)want[j].addr, want[j].symbol);
		futex_lines += want[j].futex;
	}
	cr_expect_eq(futex_lines, 1, "the futex word lies in exactly one line");

	/* JSON: the lock collector's contended kernel lock marks its line (pid 0), and no other */
	struct line_rows locked = { .count = 0 };
	json_through_jq(&p, ".cachelines[] | select(.lock) | [.addr, .pid, .futex]", take_line, &locked);
	char want_locked[128];
	snprintf(want_locked, sizeof(want_locked), "[\"0x%llx\",0,false]",
		 (unsigned long long)((KERNEL_DATA + LOCK_OFFSET) & ~63ull));
	cr_assert_eq(locked.count, 1, "%zu lines marked lock", locked.count);
	cr_expect_str_eq(locked.rows[0], want_locked);
	struct line_rows lock_rows = { .count = 0 };
	json_through_jq(&p, ".locks[] | [.addr, .name, .contentions, .wait_ns.total]", take_line, &lock_rows);
	cr_assert_eq(lock_rows.count, 1);
	snprintf(want_locked, sizeof(want_locked), "[\"0x%llx\",\"futex_queues+0x%x\",1,1]",
		 (unsigned long long)(KERNEL_DATA + LOCK_OFFSET), LOCK_OFFSET);
	cr_expect_str_eq(lock_rows.rows[0], want_locked, "the lock named by the recording's kallsyms");

	/* JSON: every sample was written with latency SAMPLE_LATENCY: each line's mean is it, or 0 without loads */
	struct line_rows latency = { .count = 0 };
	json_through_jq(&p, ".cachelines[] | if .loads > 0 then .load_latency_avg else -(.load_latency_avg) - 1 end",
			take_line, &latency);
	cr_expect_eq(latency.count, nwant);
	for (size_t i = 0; i < latency.count; i++) {
		double v = strtod(latency.rows[i], NULL);
		cr_expect(v == SAMPLE_LATENCY || v == -1, "line latency %s", latency.rows[i]);
	}

	/* JSON: the offsets of the futex word's line, with their own names */
	struct line_rows offsets = { .count = 0 };
	json_through_jq(&p, ".cachelines[] | select(.futex) | .offsets[] | [.offset, .symbol, .loads, .stores, .hitm]",
			take_line, &offsets);
	uint64_t word_line = futex_word & ~63ull;
	size_t want_offsets = 0;
	for (size_t i = 0; i < ARRAY_SIZE(c2c_cases); i++) {
		const struct c2c_case *c = &c2c_cases[i];
		uint64_t addr = case_address(&l, c);
		if (c->where != IN_FIXTURE || (addr & ~63ull) != word_line)
			continue;
		uint64_t loads = 0, stores = 0, hitm = 0;
		bool first = true;
		for (size_t k = 0; k < ARRAY_SIZE(c2c_cases); k++) {
			const struct c2c_case *o = &c2c_cases[k];
			if (o->where != IN_FIXTURE || case_address(&l, o) != addr)
				continue;
			first = first && k >= i;
			enum c2c_class cls = c2c_classify(o->data_src);
			loads += c2c_class_is_load(cls) ? o->count : 0;
			stores += c2c_class_is_store(cls) ? o->count : 0;
			hitm += cls == C2C_LOCAL_HITM || cls == C2C_REMOTE_HITM ? o->count : 0;
		}
		if (!first)
			continue; /* counted with the first case of this address */
		char name[128], row[512];
		case_name(c, name, sizeof(name));
		snprintf(row, sizeof(row), "[\"0x%llx\",\"%s\",%llu,%llu,%llu]", (unsigned long long)(addr - word_line), name,
			 (unsigned long long)loads, (unsigned long long)stores, (unsigned long long)hitm);
		bool found = false;
		for (size_t k = 0; k < offsets.count; k++)
			found = found || strcmp(offsets.rows[k], row) == 0;
		cr_expect(found, "offset %s missing", row);
		want_offsets++;
	}
	cr_expect_eq(offsets.count, want_offsets);

	/* JSON: HITM and DRAM per path */
	struct line_rows path_rows = { .count = 0 };
	json_through_jq(&p, ".paths[] | [.path, .c2c_hitm_local, .c2c_hitm_remote, .c2c_hitm_total, .c2c_dram_local, "
			    ".c2c_dram_remote]",
			take_line, &path_rows);
	cr_assert_eq(path_rows.count, PATH_COUNT);
	for (int i = 0; i < PATH_COUNT; i++) {
		char row[256];
		snprintf(row, sizeof(row), "[\"%s\",%llu,%llu,%llu,%llu,%llu]", path_name(i),
			 (unsigned long long)paths[i].hitm_local, (unsigned long long)paths[i].hitm_remote,
			 (unsigned long long)(paths[i].hitm_local + paths[i].hitm_remote),
			 (unsigned long long)paths[i].dram_local, (unsigned long long)paths[i].dram_remote);
		cr_expect_str_eq(path_rows.rows[i], row);
	}

	/* text: the path table's last five columns are c2c's (every row: --all), and each line shows its symbol and mark */
	char *text = NULL;
	size_t text_len = 0;
	FILE *out = open_memstream(&text, &text_len);
	struct report_options all = report_defaults;
	all.view.all = true;
	report_text(&p, &all, out);
	fclose(out);
	for (int i = 0; i < PATH_COUNT; i++) {
		/* c2c's five figures follow its samples column and share */
		char figures[128];
		snprintf(figures, sizeof(figures), "%% %12llu %12llu %12llu %12llu %12llu",
			 (unsigned long long)paths[i].hitm_local, (unsigned long long)paths[i].hitm_remote,
			 (unsigned long long)(paths[i].hitm_local + paths[i].hitm_remote),
			 (unsigned long long)paths[i].dram_local, (unsigned long long)paths[i].dram_remote);
		char head[64];
		snprintf(head, sizeof(head), "\n  %-16s", path_name(i));
		const char *row = strstr(text, head);
		cr_assert_not_null(row, "no path row %s", path_name(i));
		const char *end = strchr(row + 1, '\n');
		cr_expect(end && memmem(row, (size_t)(end - row), figures, strlen(figures)), "path %s row lacks %s",
			  path_name(i), figures);
	}
	for (size_t j = 0; j < nwant; j++) {
		char head[64];
		snprintf(head, sizeof(head), "  0x%-16llx %-32s", (unsigned long long)want[j].addr, want[j].symbol);
		const char *row = strstr(text, head);
		cr_assert_not_null(row, "no text row for line %s", head);
		const char *end = strchr(row, '\n');
		bool marked = end && end - row > 8 && memmem(row, (size_t)(end - row), "[futex]", 7);
		cr_expect_eq(marked, want[j].futex, "line %s futex mark", want[j].symbol);
	}
	free(text);
	profile_free(&p);
	free(path);
}

/* The text report of p within width columns (0: no limit). */
static char *text_within(const struct profile *p, unsigned width)
{
	struct report_options o = report_defaults;
	o.view.width = width;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert_not_null(out);
	report_text(p, &o, out);
	fclose(out);
	return text;
}

Test(c2c_report, text_fits_80_and_60_columns)
{
	struct layout l = fixture_layout();
	uint64_t futex_word;
	char *path = write_recording(&l, &futex_word);
	struct profile p;
	load_recording(path, &p);
	struct expected_line want[16];
	size_t nwant = expected_lines(&l, futex_word, want, ARRAY_SIZE(want));

	/* without a width every row is whole (the path table with c2c's five figures is 104 columns) */
	char *whole = text_within(&p, 0);
	cr_assert_gt(widest_line_before(whole, NULL), 80, "%s", whole);
	free(whole);
	static const unsigned widths[] = { 80, 60 };
	for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
		char *text = text_within(&p, widths[i]);
		/*
		 * The header, the path table, the c2c and futex sections; the lock
		 * section after them is fitted on its own (collectors/lock_report.c).
		 */
		cr_assert_not_null(strstr(text, "\nCachelines (64 bytes)"), "%s", text);
		cr_assert_not_null(strstr(text, "\nFutex operations"), "%s", text);
		cr_assert_leq(widest_line_before(text, "lock:"), widths[i], "a line wider than %u:\n%s", widths[i], text);
		for (size_t j = 0; j < nwant; j++) {
			/* each line's address and symbol, as in the whole table (the symbols are shorter than their column) */
			char head[128];
			snprintf(head, sizeof(head), "  0x%-16llx %-32s", (unsigned long long)want[j].addr, want[j].symbol);
			cr_expect_not_null(strstr(text, head), "no row %s at %u columns:\n%s", head, widths[i], text);
			if (widths[i] != 80)
				continue;
			/* at 80 the row's second table: remote HITM, loads, stores and the dso, its mark after it */
			char rest[128];
			snprintf(rest, sizeof(rest), "  0x%-16llx %6llu %8llu %8llu  ", (unsigned long long)want[j].addr,
				 (unsigned long long)want[j].hitm_remote, (unsigned long long)want[j].loads,
				 (unsigned long long)want[j].stores);
			const char *row = strstr(text, rest);
			cr_expect_not_null(row, "no %s at 80 columns:\n%s", rest, text);
			if (row) {
				const char *end = strchr(row, '\n');
				cr_expect_eq(end && memmem(row, (size_t)(end - row), "[futex]", 7) != NULL, want[j].futex,
					     "line %s futex mark at 80 columns", want[j].symbol);
			}
		}
		free(text);
	}
	profile_free(&p);
	free(path);
}

/* ---- what the collector opens, on machines we do not have ---- */

/*
 * Fake sysfs trees shaped like each part, with the aliases the kernel
 * publishes for it (arch/x86/events/intel/core.c):
 *   Skylake:  mem-loads "event=0xcd,umask=0x1,ldlat=3" (mem_ld_hsw), mem-stores "event=0xd0,umask=0x82"
 *             (mem_st_hsw): MEM_TRANS_RETIRED.LOAD_LATENCY and MEM_INST_RETIRED.ALL_STORES (Intel SDM
 *             vol. 3B, ch. 19).
 *   Sapphire Rapids: mem-loads-aux "event=0x03,umask=0x82" (mem_ld_aux), mem-loads as Skylake
 *             (mem_ld_spr), mem-stores "event=0xcd,umask=0x2" (mem_st_spr: MEM_TRANS_RETIRED.STORE_SAMPLE).
 *   Alder Lake (hybrid): cpu_core as Sapphire Rapids; cpu_atom mem-loads "event=0xd0,umask=0x5,ldlat=3"
 *             and mem-stores "event=0xd0,umask=0x6" (mem_ld_adl / mem_st_adl, the small-core halves),
 *             no mem-loads-aux (hybrid_big only).
 *   Zen: ibs_op with no aliases; perf c2c asks for ibs_op// (config 0).
 * The format of every Intel core PMU: event config:0-7, umask config:8-15, ldlat config1:0-15.
 * The perf type numbers are the tree's own (the kernel assigns them at boot).
 */
enum part { PART_SKYLAKE, PART_SAPPHIRE_RAPIDS, PART_HYBRID, PART_ZEN, PART_NO_PMU };

static void intel_core_pmu(const char *root, const char *pmu, const char *type)
{
	sysfs_pmu_file(root, pmu, "type", type);
	sysfs_pmu_file(root, pmu, "format/event", "config:0-7\n");
	sysfs_pmu_file(root, pmu, "format/umask", "config:8-15\n");
	sysfs_pmu_file(root, pmu, "format/ldlat", "config1:0-15\n");
}

static void lay_out_part(const char *root, enum part part)
{
	sysfs_pmu_file(root, "software", "type", "1\n");
	switch (part) {
	case PART_SKYLAKE:
		intel_core_pmu(root, "cpu", "4\n");
		sysfs_pmu_file(root, "cpu", "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
		sysfs_pmu_file(root, "cpu", "events/mem-stores", "event=0xd0,umask=0x82\n");
		break;
	case PART_SAPPHIRE_RAPIDS:
		intel_core_pmu(root, "cpu", "4\n");
		sysfs_pmu_file(root, "cpu", "events/mem-loads-aux", "event=0x03,umask=0x82\n");
		sysfs_pmu_file(root, "cpu", "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
		sysfs_pmu_file(root, "cpu", "events/mem-stores", "event=0xcd,umask=0x2\n");
		break;
	case PART_HYBRID:
		intel_core_pmu(root, "cpu_core", "4\n");
		sysfs_pmu_file(root, "cpu_core", "events/mem-loads-aux", "event=0x03,umask=0x82\n");
		sysfs_pmu_file(root, "cpu_core", "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
		sysfs_pmu_file(root, "cpu_core", "events/mem-stores", "event=0xcd,umask=0x2\n");
		sysfs_pmu_file(root, "cpu_core", "cpus", "0-7\n");
		intel_core_pmu(root, "cpu_atom", "10\n");
		sysfs_pmu_file(root, "cpu_atom", "cpus", "8-15\n");
		sysfs_pmu_file(root, "cpu_atom", "events/mem-loads", "event=0xd0,umask=0x5,ldlat=3\n");
		sysfs_pmu_file(root, "cpu_atom", "events/mem-stores", "event=0xd0,umask=0x6\n");
		break;
	case PART_ZEN:
		sysfs_pmu_file(root, "ibs_op", "type", "11\n");
		sysfs_pmu_file(root, "ibs_op", "format/cnt_ctl", "config:19\n");
		sysfs_pmu_file(root, "ibs_fetch", "type", "12\n");
		break;
	case PART_NO_PMU:
		sysfs_pmu_file(root, "tracepoint", "type", "2\n");
		break;
	}
}

struct expected_event {
	const char *spec;
	int leader;
	bool sampling;
	uint32_t type;
	uint64_t config, config1;
};

static void expect_plan(enum part part, const struct expected_event *want, size_t nwant)
{
	char *root = temp_dir_new();
	lay_out_part(root, part);
	pmu_set_sysfs_root(root);
	struct c2c_event plan[C2C_MAX_EVENTS];
	size_t n = 99;
	char reason[256] = "";
	cr_assert_eq(c2c_plan_events(plan, ARRAY_SIZE(plan), &n, reason, sizeof(reason)), 0, "%s", reason);
	cr_assert_eq(n, nwant, "%zu events, expected %zu", n, nwant);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(plan[i].spec, want[i].spec);
		cr_expect_eq(plan[i].leader, want[i].leader, "%s", plan[i].spec);
		cr_expect_eq(plan[i].sampling, want[i].sampling, "%s", plan[i].spec);
		struct pmu_event ev;
		char err[256] = "";
		cr_assert_eq(pmu_event_parse(plan[i].spec, &ev, err, sizeof(err)), 0, "%s", err);
		cr_expect_eq(ev.attr.type, want[i].type, "%s: type %u", plan[i].spec, ev.attr.type);
		cr_expect_eq(ev.attr.config, want[i].config, "%s: config 0x%llx", plan[i].spec,
			     (unsigned long long)ev.attr.config);
		cr_expect_eq(ev.attr.config1, want[i].config1, "%s: config1 %llu", plan[i].spec,
			     (unsigned long long)ev.attr.config1);
		cr_expect_eq(ev.max_precise, strstr(plan[i].spec, "/P") != NULL, "%s", plan[i].spec);
	}
	pmu_set_sysfs_root(NULL);
	temp_dir_remove(root);
}

Test(c2c_events, skylake)
{
	static const struct expected_event want[] = {
		{ "cpu/mem-loads,ldlat=30/P", -1, true, 4, 0x01cd, C2C_LOAD_LATENCY },
		{ "cpu/mem-stores/P", -1, true, 4, 0x82d0, 0 },
	};
	expect_plan(PART_SKYLAKE, want, ARRAY_SIZE(want));
}

Test(c2c_events, sapphire_rapids_groups_loads_under_mem_loads_aux)
{
	static const struct expected_event want[] = {
		{ "cpu/mem-loads-aux/", -1, false, 4, 0x8203, 0 },
		{ "cpu/mem-loads,ldlat=30/P", 0, true, 4, 0x01cd, C2C_LOAD_LATENCY },
		{ "cpu/mem-stores/P", -1, true, 4, 0x02cd, 0 },
	};
	expect_plan(PART_SAPPHIRE_RAPIDS, want, ARRAY_SIZE(want));
}

Test(c2c_events, hybrid_samples_both_core_types)
{
	static const struct expected_event want[] = {
		{ "cpu_core/mem-loads-aux/", -1, false, 4, 0x8203, 0 },
		{ "cpu_core/mem-loads,ldlat=30/P", 0, true, 4, 0x01cd, C2C_LOAD_LATENCY },
		{ "cpu_core/mem-stores/P", -1, true, 4, 0x02cd, 0 },
		{ "cpu_atom/mem-loads,ldlat=30/P", -1, true, 10, 0x05d0, C2C_LOAD_LATENCY },
		{ "cpu_atom/mem-stores/P", -1, true, 10, 0x06d0, 0 },
	};
	expect_plan(PART_HYBRID, want, ARRAY_SIZE(want));
}

Test(c2c_events, zen_uses_ibs_op)
{
	static const struct expected_event want[] = {
		{ "ibs_op//", -1, true, 11, 0, 0 },
	};
	expect_plan(PART_ZEN, want, ARRAY_SIZE(want));
}

Test(c2c_events, no_pmu_says_why)
{
	char *root = temp_dir_new();
	lay_out_part(root, PART_NO_PMU);
	pmu_set_sysfs_root(root);
	struct c2c_event plan[C2C_MAX_EVENTS];
	size_t n = 99;
	char reason[256] = "";
	cr_expect_eq(c2c_plan_events(plan, ARRAY_SIZE(plan), &n, reason, sizeof(reason)), -ENODEV);
	cr_expect_eq(n, 0);
	cr_expect(strstr(reason, "mem-loads") && strstr(reason, "ibs_op"), "reason: %s", reason);
	pmu_set_sysfs_root(NULL);
	temp_dir_remove(root);
}

Test(c2c_events, specs_carry_address_source_and_weight_and_the_group)
{
	char *root = temp_dir_new();
	lay_out_part(root, PART_SAPPHIRE_RAPIDS);
	pmu_set_sysfs_root(root);
	struct record_options opts = { .frequency = 4000, .call_graph = CALL_GRAPH_FP };
	struct event_list events = { 0 };
	bool max_precise[C2C_MAX_EVENTS];
	char reason[256] = "";
	cr_assert_eq(c2c_build_events(&opts, &events, max_precise, reason, sizeof(reason)), 0, "%s", reason);
	cr_assert_eq(events.count, 3);
	const struct event_spec *aux = &events.specs[0], *loads = &events.specs[1], *stores = &events.specs[2];
	uint64_t wanted = PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_CPU |
			  PERF_SAMPLE_CALLCHAIN;
	cr_expect(!aux->group_with_previous);
	cr_expect_eq(aux->attr.sample_period, 0, "the leader only counts");
	cr_expect_eq(aux->attr.freq, 0);
	cr_expect(!max_precise[0]);
	cr_expect(loads->group_with_previous, "mem-loads opens in mem-loads-aux's group");
	cr_expect_eq(loads->attr.sample_type & wanted, wanted);
	cr_expect(loads->attr.freq && loads->attr.sample_freq == 4000);
	cr_expect_eq(loads->attr.config1, C2C_LOAD_LATENCY);
	cr_expect(max_precise[1]);
	cr_expect(!stores->group_with_previous);
	cr_expect_eq(stores->attr.sample_type & wanted, wanted);
	cr_expect(max_precise[2]);
	for (size_t i = 0; i < events.count; i++)
		cr_expect_str_eq(events.specs[i].collector, "c2c");
	event_list_free(&events);
	pmu_set_sysfs_root(NULL);
	temp_dir_remove(root);
}

Test(c2c_events, hybrid_events_open_on_their_core_type_only)
{
	char *root = temp_dir_new();
	lay_out_part(root, PART_HYBRID);
	/* the atom cores one by one, as sysfs lists CPUs that are not contiguous: far longer than 128 characters */
	struct strbuf atom_cpus = { 0 };
	for (int cpu = 8; cpu < 400; cpu += 2)
		sb_addf(&atom_cpus, "%s%d", cpu > 8 ? "," : "", cpu);
	cr_assert_gt(atom_cpus.len, 128);
	sb_addstr(&atom_cpus, "\n");
	sysfs_pmu_file(root, "cpu_atom", "cpus", atom_cpus.buf);
	atom_cpus.buf[--atom_cpus.len] = '\0';
	pmu_set_sysfs_root(root);
	struct record_options opts = { .frequency = 4000 };
	struct event_list events = { 0 };
	char reason[256] = "";
	cr_assert_eq(c2c_build_events(&opts, &events, NULL, reason, sizeof(reason)), 0, "%s", reason);
	cr_assert_eq(events.count, 5);
	for (size_t i = 0; i < events.count; i++) {
		const char *want = strncmp(events.specs[i].name, "cpu_core/", 9) == 0 ? "0-7" : atom_cpus.buf;
		cr_assert_not_null(events.specs[i].cpus, "%s", events.specs[i].name);
		cr_expect_str_eq(events.specs[i].cpus, want, "%s: the whole list", events.specs[i].name);
	}
	event_list_free(&events);
	sb_free(&atom_cpus);
	/* a part whose core PMU lists no CPUs covers them all */
	temp_dir_remove(root);
	root = temp_dir_new();
	lay_out_part(root, PART_SKYLAKE);
	pmu_set_sysfs_root(root);
	cr_assert_eq(c2c_build_events(&opts, &events, NULL, reason, sizeof(reason)), 0, "%s", reason);
	for (size_t i = 0; i < events.count; i++)
		cr_expect_null(events.specs[i].cpus, "%s", events.specs[i].name);
	event_list_free(&events);
	pmu_set_sysfs_root(NULL);
	temp_dir_remove(root);
}

Test(c2c_events, cpu_lists_as_sysfs_writes_them)
{
	int cpus[16];
	cr_expect_eq(cpu_list_parse("0-3,8,10-11\n", cpus, 16), 7);
	static const int want[] = { 0, 1, 2, 3, 8, 10, 11 };
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		cr_expect_eq(cpus[i], want[i]);
	cr_expect_eq(cpu_list_parse("5", cpus, 16), 1);
	cr_expect_eq(cpus[0], 5);
	cr_expect_eq(cpu_list_parse("0-63", cpus, 16), 16, "bounded by max");
	cr_expect_eq(cpu_list_parse("", cpus, 16), 0);
	cr_expect_eq(cpu_list_parse("3-1", cpus, 16), 0);
	cr_expect_eq(cpu_list_parse("x", cpus, 16), 0);
}

/* A recording whose c2c collector opened but sampled nothing: an empty table, zeros per path, no crash. */
Test(c2c_report, opened_without_samples)
{
	char *path = path_join(dir, "empty.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	write_events(w);
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) } };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);
	struct profile p;
	load_recording(path, &p);
	struct line_rows rows = { .count = 0 };
	json_through_jq(&p, "[(.cachelines | length), .c2c.loads, ([.paths[] | .c2c_hitm_total] | add)]", take_line, &rows);
	cr_assert_eq(rows.count, 1);
	cr_expect_str_eq(rows.rows[0], "[0,0,0]");
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	report_text(&p, &report_defaults, out);
	fclose(out);
	cr_expect(strstr(text, "Cachelines (64 bytes) by HITM (0 lines"), "%s", text);
	free(text);
	profile_free(&p);
	free(path);
}

/* The line of the text class table for cls ("  local_hitm   1  <0.01%"), or NULL. */
static const char *class_row(const char *text, enum c2c_class cls, char *row, size_t len)
{
	char start[64];
	snprintf(start, sizeof(start), "\n  %-16s ", c2c_class_name(cls));
	const char *table = strstr(text, "\n  class ");
	const char *at = table ? strstr(table, start) : NULL;
	if (!at)
		return NULL;
	at++;
	snprintf(row, len, "%.*s", (int)strcspn(at, "\n"), at);
	return row;
}

/*
 * The class table's share column: a class that has samples never shows
 * 0.00% (other included, which is neither a load nor a store: its share
 * is of every sample), and one short of all never shows 100.00%.
 */
Test(c2c_report, class_shares_are_never_zero_beside_a_count)
{
	char *path = path_join(dir, "shares.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	write_events(w);
	struct layout l = { .user_ip = { 0x401000, 0x402000 } };
	const struct c2c_case l1 = { IN_HEAP, NULL, 0x1048, OP_LH | LVL(L1) | LN(L1) | SNOOP(NONE), STACK_FILL, 20000 };
	const struct c2c_case hitm = { IN_HEAP, NULL, 0x1050, OP_LH | LVL(L3) | LN(L3) | SNOOP(HITM), STACK_FILL, 1 };
	const struct c2c_case other = { IN_HEAP, NULL, 0x1058, OP(NA) | LVL(NA), STACK_FILL, 1 };
	const struct c2c_case *cases[] = { &l1, &hitm, &other };
	uint64_t time = 2000;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		for (unsigned k = 0; k < cases[i]->count; k++)
			write_c2c_sample(w, &l, cases[i], time++);
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) }, .duration_ns = 1000000 };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);

	struct profile p;
	load_recording(path, &p);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	report_text(&p, &report_defaults, out);
	fclose(out);
	char row[256];
	/* 1 of 20002 samples, 1 of 20001 loads: 0.005%; 20000 of 20001 loads: 99.995% */
	cr_assert(class_row(text, C2C_OTHER, row, sizeof(row)), "%s", text);
	cr_expect(strstr(row, " 1  <0.01%"), "%s", row);
	cr_assert(class_row(text, c2c_classify(hitm.data_src), row, sizeof(row)), "%s", text);
	cr_expect(strstr(row, " 1  <0.01%"), "%s", row);
	cr_assert(class_row(text, c2c_classify(l1.data_src), row, sizeof(row)), "%s", text);
	cr_expect(strstr(row, " 20000 >99.99%"), "%s", row);
	/* and no row of the class table (up to the blank line after it) is at 0.00% */
	const char *table = strstr(text, "samples       %\n");
	cr_assert_not_null(table, "%s", text);
	size_t table_len = strstr(table, "\n\n") ? (size_t)(strstr(table, "\n\n") - table) : strlen(table);
	cr_expect_null(memmem(table, table_len, "0.00%", 5), "%.*s", (int)table_len, table);
	free(text);
	profile_free(&p);
	free(path);
}
