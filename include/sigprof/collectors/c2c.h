/*
 * c2c.h: the c2c collector's pure parts, for collectors/c2c.c and its tests.
 *
 * The classifier turns a sample's data_src (union perf_mem_data_src of
 * <linux/perf_event.h>) into one class: where the sampled load found its
 * data (a peer core's modified line: HITM; DRAM; a cache level) or what
 * became of a store.  It is a table of rules tried in order, the first that
 * matches wins; docs/c2c.md states each rule, why, and where it departs
 * from perf c2c (tools/perf/util/mem-events.c, c2c_decode_stats).
 *
 * The event plan names the events the collector asks for on this machine
 * (or on the machine a test's fake sysfs tree describes): Intel's
 * mem-loads with a load-latency threshold and mem-stores on every core PMU
 * (cpu, or cpu_core and cpu_atom on hybrid parts), with mem-loads-aux as
 * group leader where the PMU has it; AMD's ibs_op.
 */
#ifndef SIGPROF_C2C_H
#define SIGPROF_C2C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum c2c_class {
	C2C_REMOTE_HITM,   /* load served by a modified line in a cache of another node/socket */
	C2C_LOCAL_HITM,    /* load served by a modified line in a peer core's cache of this node */
	C2C_REMOTE_HIT,    /* load served by a clean (or forwarded) line of another node's cache */
	C2C_REMOTE_DRAM,   /* load served by another node's memory */
	C2C_LOCAL_DRAM,    /* load served by this node's memory */
	C2C_LLC_HIT,       /* load hit in the last-level cache (L3), no modified peer copy */
	C2C_L2_HIT,
	C2C_L1_HIT,
	C2C_LFB_HIT,       /* load hit a line fill buffer (a miss already in flight) */
	C2C_UNCACHED,      /* load of uncached or I/O memory */
	C2C_LOAD_OTHER,    /* a load the encoding says too little about (a miss of unknown level, PMEM, CXL) */
	C2C_STORE_L1_HIT,
	C2C_STORE_L1_MISS,
	C2C_STORE_OTHER,   /* a store whose level is not available */
	C2C_OTHER,         /* neither load nor store (no op, a prefetch, unparsable) */
	C2C_CLASS_COUNT,
};

/* "remote_hitm", "local_dram", "store_l1_hit", ...: JSON keys and text labels. */
const char *c2c_class_name(enum c2c_class cls);
bool c2c_class_is_load(enum c2c_class cls);
bool c2c_class_is_store(enum c2c_class cls);

/*
 * What the rules test: facts derived from the data_src fields once, so that
 * a rule is data (all of, one of, none of these), not code.
 */
enum c2c_fact {
	C2C_F_LOAD = 1u << 0,       /* mem_op LOAD */
	C2C_F_STORE = 1u << 1,      /* mem_op STORE */
	C2C_F_HIT = 1u << 2,        /* mem_lvl HIT, or a concrete mem_lvl_num without MISS */
	C2C_F_MISS = 1u << 3,       /* mem_lvl MISS */
	C2C_F_HITM = 1u << 4,       /* mem_snoop HITM */
	C2C_F_SNOOP_HIT = 1u << 5,  /* mem_snoop HIT */
	C2C_F_FWD = 1u << 6,        /* mem_snoopx FWD or PEER: a clean line forwarded by another cache */
	C2C_F_REMOTE = 1u << 7,     /* another node: mem_remote, REM_RAM1/2, REM_CCE2, or REM_CCE1 unless hops
				       say "another core of this node" */
	C2C_F_AT_L1 = 1u << 8,      /* mem_lvl L1 or mem_lvl_num L1 */
	C2C_F_AT_LFB = 1u << 9,
	C2C_F_AT_L2 = 1u << 10,
	C2C_F_AT_L3 = 1u << 11,
	C2C_F_AT_PEER_CACHE = 1u << 12, /* mem_lvl REM_CCE1/2 or mem_lvl_num ANY_CACHE: some other core's cache */
	C2C_F_AT_RAM = 1u << 13,    /* mem_lvl LOC_RAM/REM_RAM1/REM_RAM2 or mem_lvl_num RAM */
	C2C_F_AT_UNCACHED = 1u << 14, /* mem_lvl UNC/IO or mem_lvl_num IO/UNC */
};

struct c2c_rule {
	enum c2c_class cls;
	uint32_t all;       /* facts that must all hold */
	uint32_t any;       /* facts of which one must hold (0: no condition) */
	uint32_t none;      /* facts that must not hold */
	const char *why;    /* the rule in words (docs/c2c.md) */
};

/* The facts of a data_src value. */
uint32_t c2c_facts(uint64_t data_src);
/* The class of a data_src value: the first rule that matches. */
enum c2c_class c2c_classify(uint64_t data_src);
/* The rule table, in order. */
const struct c2c_rule *c2c_rules(size_t *count);

/* ---- what the collector opens ---- */

#define C2C_LOAD_LATENCY 30  /* ldlat: the cycles a load must take to be sampled, perf c2c's default */
#define C2C_MAX_EVENTS 8

struct c2c_event {
	char spec[96];     /* for pmu_event_parse(): "cpu/mem-loads,ldlat=30/P", "ibs_op//" */
	int leader;        /* index in the plan of its group's leader, or -1 when it leads (or is alone) */
	bool sampling;     /* false: a group leader that only counts (mem-loads-aux), true: its samples are read */
};

/*
 * The events for this machine's PMUs (as pmu_sysfs_* see them): 0 with
 * *count set, or -ENODEV with the reason in reason (no PMU with mem-loads
 * or ibs_op: a VM, or a CPU without load sampling).
 */
int c2c_plan_events(struct c2c_event *events, size_t max, size_t *count, char *reason, size_t reasonlen);

struct record_options;
struct event_list;
/*
 * The plan as event specs: each parsed (pmu_event_parse), its attr from
 * sampling_attr_init() with ADDR, DATA_SRC and WEIGHT_STRUCT added, a
 * counting-only leader with no period, a member marked group_with_previous.
 * Nothing is opened: the collector probes them afterwards (precise_ip for
 * :P, WEIGHT for kernels before WEIGHT_STRUCT).  max_precise (when not
 * NULL, C2C_MAX_EVENTS long) says per event added whether it asked for :P.
 * 0 or -errno with reason.
 */
int c2c_build_events(const struct record_options *opts, struct event_list *events, bool *max_precise, char *reason,
		     size_t reasonlen);

/* The cacheline size the report groups addresses by (x86). */
#define C2C_LINE_SIZE 64u

#endif
