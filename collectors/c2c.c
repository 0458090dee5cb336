/*
 * c2c.c: the c2c collector, cache-to-cache transfers (HITM) and DRAM
 * accesses per stack, per path and per cacheline.
 *
 * Record side.  Intel: the PEBS load-latency event mem-loads with
 * ldlat=30 and the precise store event mem-stores, on every core PMU the
 * machine has (cpu; cpu_core and cpu_atom on hybrid parts), the loads in a
 * group led by mem-loads-aux where the PMU has that alias (Sapphire Rapids
 * and later require it: the kernel refuses mem-loads with DATA_SRC
 * otherwise).  AMD: ibs_op, whose samples the kernel decodes into the same
 * data_src.  Every sample carries the data address, DATA_SRC, the weight
 * (latency) and the CPU, with the callchain the record options ask for.
 *
 * Report side.  Each sample's data_src is classified by a table of rules
 * (c2c_classify(); docs/c2c.md); the class is counted for the sample's
 * stack and path, and the data address for its 64-byte line: per offset
 * within the line (loads, stores, HITM), per stack that touched it.  A line
 * is named by the data symbol of its lowest touched address (kernel data
 * from kallsyms, user data from the ELF symbols of its mapping, else the
 * mapping: heap, stack, anon) and marked when the futex collector saw a
 * futex word in it, or the lock collector a contended kernel lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sigprof/collectors/c2c.h"
#include "sigprof/model/collector.h"
#include "sigprof/base/json.h"
#include "sigprof/model/paths.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/view/view.h"
#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/hashmap.h"

/* ---- classification ---- */

/* Not in every uapi header yet (Linux 6.1 added it for AMD IBS). */
#ifndef PERF_MEM_LVLNUM_UNC
#define PERF_MEM_LVLNUM_UNC 0x08
#endif

static const char *const class_names[C2C_CLASS_COUNT] = {
	[C2C_REMOTE_HITM] = "remote_hitm",   [C2C_LOCAL_HITM] = "local_hitm",
	[C2C_REMOTE_HIT] = "remote_hit",     [C2C_REMOTE_DRAM] = "remote_dram",
	[C2C_LOCAL_DRAM] = "local_dram",     [C2C_LLC_HIT] = "llc_hit",
	[C2C_L2_HIT] = "l2_hit",             [C2C_L1_HIT] = "l1_hit",
	[C2C_LFB_HIT] = "lfb_hit",           [C2C_UNCACHED] = "uncached",
	[C2C_LOAD_OTHER] = "load_other",     [C2C_STORE_L1_HIT] = "store_l1_hit",
	[C2C_STORE_L1_MISS] = "store_l1_miss", [C2C_STORE_OTHER] = "store_other",
	[C2C_OTHER] = "other",
};

const char *c2c_class_name(enum c2c_class cls)
{
	return (unsigned)cls < C2C_CLASS_COUNT ? class_names[cls] : "other";
}

bool c2c_class_is_load(enum c2c_class cls)
{
	return cls <= C2C_LOAD_OTHER;
}

bool c2c_class_is_store(enum c2c_class cls)
{
	return cls >= C2C_STORE_L1_HIT && cls <= C2C_STORE_OTHER;
}

/*
 * The rules, first match wins.  HITM comes first: a modified line in a
 * peer's cache is what c2c exists to find, whatever else the encoding
 * says.  Remote before local, DRAM before the cache levels (an encoding
 * may carry a cache level number beside a DRAM bit: Intel's 0x0b "L3 miss,
 * remote DRAM" has mem_lvl_num L3).
 */
static const struct c2c_rule rules[] = {
	{ C2C_REMOTE_HITM, C2C_F_LOAD | C2C_F_HITM | C2C_F_REMOTE, 0, C2C_F_AT_RAM,
	  "a load that snooped a modified line (HITM) on another node" },
	{ C2C_LOCAL_HITM, C2C_F_LOAD | C2C_F_HITM, C2C_F_AT_L3 | C2C_F_AT_PEER_CACHE, C2C_F_REMOTE,
	  "a load that snooped a modified line (HITM) at the LLC or a peer cache of this node" },
	{ C2C_REMOTE_HIT, C2C_F_LOAD | C2C_F_REMOTE | C2C_F_HIT, C2C_F_AT_PEER_CACHE | C2C_F_AT_L3 | C2C_F_FWD,
	  C2C_F_AT_RAM | C2C_F_AT_UNCACHED, "a load served by a clean or forwarded line of another node's cache" },
	{ C2C_REMOTE_DRAM, C2C_F_LOAD | C2C_F_AT_RAM | C2C_F_REMOTE, 0, 0, "a load served by another node's DRAM" },
	{ C2C_LOCAL_DRAM, C2C_F_LOAD | C2C_F_AT_RAM, 0, C2C_F_REMOTE, "a load served by this node's DRAM" },
	{ C2C_LLC_HIT, C2C_F_LOAD | C2C_F_AT_L3, 0, C2C_F_MISS, "a load that hit the L3 without a HITM" },
	{ C2C_L2_HIT, C2C_F_LOAD | C2C_F_AT_L2, 0, C2C_F_MISS, "a load that hit the L2" },
	{ C2C_L1_HIT, C2C_F_LOAD | C2C_F_AT_L1, 0, C2C_F_MISS, "a load that hit the L1" },
	{ C2C_LFB_HIT, C2C_F_LOAD | C2C_F_AT_LFB, 0, C2C_F_MISS, "a load that hit a line fill buffer" },
	{ C2C_UNCACHED, C2C_F_LOAD | C2C_F_AT_UNCACHED, 0, 0, "a load of uncached or I/O memory" },
	{ C2C_LOAD_OTHER, C2C_F_LOAD, 0, 0, "any other load" },
	{ C2C_STORE_L1_HIT, C2C_F_STORE | C2C_F_AT_L1 | C2C_F_HIT, 0, C2C_F_MISS, "a store that hit the L1" },
	{ C2C_STORE_L1_MISS, C2C_F_STORE | C2C_F_AT_L1 | C2C_F_MISS, 0, 0, "a store that missed the L1" },
	{ C2C_STORE_OTHER, C2C_F_STORE, 0, 0, "any other store" },
	{ C2C_OTHER, 0, 0, 0, "neither a load nor a store" },
};

const struct c2c_rule *c2c_rules(size_t *count)
{
	*count = ARRAY_SIZE(rules);
	return rules;
}

uint32_t c2c_facts(uint64_t data_src)
{
	union perf_mem_data_src d = { .val = data_src };
	uint32_t lvl = d.mem_lvl, num = d.mem_lvl_num, f = 0;
	if (d.mem_op & PERF_MEM_OP_LOAD)
		f |= C2C_F_LOAD;
	else if (d.mem_op & PERF_MEM_OP_STORE)
		f |= C2C_F_STORE; /* an op with both bits is a load, as perf reads it */
	if (lvl & PERF_MEM_LVL_MISS)
		f |= C2C_F_MISS;
	/* Encodings that give only a level number (AMD's PMEM and CXL, hops-based ones) say nothing of HIT. */
	if ((lvl & PERF_MEM_LVL_HIT) || (!(lvl & PERF_MEM_LVL_MISS) && num && num != PERF_MEM_LVLNUM_NA))
		f |= C2C_F_HIT;
	if (d.mem_snoop & PERF_MEM_SNOOP_HITM)
		f |= C2C_F_HITM;
	if (d.mem_snoop & PERF_MEM_SNOOP_HIT)
		f |= C2C_F_SNOOP_HIT;
	if (d.mem_snoopx & (PERF_MEM_SNOOPX_FWD | PERF_MEM_SNOOPX_PEER))
		f |= C2C_F_FWD;
	/*
	 * REM_CCE1 alone is "a remote cache, 1 hop" in the legacy encoding;
	 * AMD's IBS uses it with hops HOPS_0 ("another core of this node")
	 * and without the remote bit for its local-cache source: that one is
	 * local.
	 */
	bool same_node_peer = (lvl & PERF_MEM_LVL_REM_CCE1) && d.mem_hops == PERF_MEM_HOPS_0 && !d.mem_remote;
	if (d.mem_remote || (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2 | PERF_MEM_LVL_REM_CCE2)) ||
	    ((lvl & PERF_MEM_LVL_REM_CCE1) && !same_node_peer))
		f |= C2C_F_REMOTE;
	if ((lvl & PERF_MEM_LVL_L1) || num == PERF_MEM_LVLNUM_L1)
		f |= C2C_F_AT_L1;
	if ((lvl & PERF_MEM_LVL_LFB) || num == PERF_MEM_LVLNUM_LFB)
		f |= C2C_F_AT_LFB;
	if ((lvl & PERF_MEM_LVL_L2) || num == PERF_MEM_LVLNUM_L2)
		f |= C2C_F_AT_L2;
	if ((lvl & PERF_MEM_LVL_L3) || num == PERF_MEM_LVLNUM_L3)
		f |= C2C_F_AT_L3;
	if ((lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2)) || num == PERF_MEM_LVLNUM_ANY_CACHE)
		f |= C2C_F_AT_PEER_CACHE;
	if ((lvl & (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)) ||
	    num == PERF_MEM_LVLNUM_RAM)
		f |= C2C_F_AT_RAM;
	if ((lvl & (PERF_MEM_LVL_UNC | PERF_MEM_LVL_IO)) || num == PERF_MEM_LVLNUM_IO || num == PERF_MEM_LVLNUM_UNC)
		f |= C2C_F_AT_UNCACHED;
	return f;
}

enum c2c_class c2c_classify(uint64_t data_src)
{
	uint32_t f = c2c_facts(data_src);
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		const struct c2c_rule *r = &rules[i];
		if ((f & r->all) == r->all && (!r->any || (f & r->any)) && !(f & r->none))
			return r->cls;
	}
	return C2C_OTHER;
}

/* ---- report side ---- */

/* Samples per class: of a stack, a path, a line. */
struct c2c_counts {
	uint64_t n[C2C_CLASS_COUNT];
};

static uint64_t hitm_of(const struct c2c_counts *c)
{
	return c->n[C2C_LOCAL_HITM] + c->n[C2C_REMOTE_HITM];
}

static uint64_t loads_of(const struct c2c_counts *c)
{
	uint64_t n = 0;
	for (int k = 0; k < C2C_CLASS_COUNT; k++)
		if (c2c_class_is_load((enum c2c_class)k))
			n += c->n[k];
	return n;
}

static uint64_t stores_of(const struct c2c_counts *c)
{
	return c->n[C2C_STORE_L1_HIT] + c->n[C2C_STORE_L1_MISS] + c->n[C2C_STORE_OTHER];
}

/* One byte offset of a line that samples touched. */
struct c2c_offset {
	uint32_t offset;
	uint64_t loads, stores, hitm;
	const char *symbol;        /* the data symbol (or mapping) of the address, named on first sight */
};

/* A stack that touched a line. */
struct c2c_line_stack {
	uint32_t stack;
	uint64_t count, hitm;
};

struct c2c_line {
	uint32_t pid;              /* 0 for kernel data, shared by every process */
	uint64_t addr;             /* the line's first byte */
	struct c2c_counts counts;
	uint64_t load_latency;     /* sum of the load samples' weights: their latency in cycles */
	struct c2c_offset *offsets;
	size_t noffsets, offsets_cap;
	struct c2c_line_stack *stacks;
	size_t nstacks, stacks_cap;
	const char *dso;           /* the mapping (or [kernel]) of its lowest touched address, NULL when none */
	bool futex;                /* holds a futex word the futex collector saw */
	bool lock;                 /* holds a kernel lock the lock collector saw contended */
};

struct c2c_state {
	int self;                  /* this collector's index in the profile */
	struct c2c_counts total;
	uint64_t no_address;       /* samples without a data address (counted in total, in no line) */
	struct c2c_counts path[PATH_COUNT];
	struct c2c_counts *by_stack; /* indexed by interned stack id */
	size_t by_stack_cap;
	struct c2c_line *lines;
	size_t nlines, lines_cap;
	uint32_t *slots;           /* (pid, line) -> line index + 1, open addressing */
	size_t nslots;
	struct string_pool *names;
	uint32_t *stack_order;     /* stacks with samples, by HITM then samples (finish) */
	size_t nstack_order;
};

static uint64_t line_key(uint32_t pid, uint64_t line)
{
	return hash_u64(line ^ ((uint64_t)pid << 48) ^ pid);
}

static void rehash_lines(struct c2c_state *st)
{
	size_t nslots = st->nslots ? st->nslots * 2 : 1024;
	free(st->slots);
	st->slots = xcalloc(nslots, sizeof(*st->slots));
	st->nslots = nslots;
	for (size_t i = 0; i < st->nlines; i++) {
		size_t s = line_key(st->lines[i].pid, st->lines[i].addr) & (nslots - 1);
		while (st->slots[s])
			s = (s + 1) & (nslots - 1);
		st->slots[s] = (uint32_t)i + 1;
	}
}

static struct c2c_line *line_of(struct c2c_state *st, uint32_t pid, uint64_t addr)
{
	if (2 * (st->nlines + 1) > st->nslots)
		rehash_lines(st);
	size_t s = line_key(pid, addr) & (st->nslots - 1);
	for (; st->slots[s]; s = (s + 1) & (st->nslots - 1)) {
		struct c2c_line *l = &st->lines[st->slots[s] - 1];
		if (l->pid == pid && l->addr == addr)
			return l;
	}
	GROW(st->lines, st->lines_cap, st->nlines + 1);
	struct c2c_line *l = &st->lines[st->nlines];
	memset(l, 0, sizeof(*l));
	l->pid = pid;
	l->addr = addr;
	st->slots[s] = (uint32_t)++st->nlines;
	return l;
}

/* The name of a data address (view.h), interned for the line or offset that keeps it. */
static const char *data_name(struct c2c_state *st, const struct profile *p, uint32_t pid, uint64_t addr, const char **dso)
{
	char buf[512];
	return string_intern(st->names, view_data_name(p, pid, addr, buf, sizeof(buf), dso));
}

static struct c2c_offset *offset_of(struct c2c_state *st, const struct profile *p, struct c2c_line *l, uint32_t pid,
				    uint64_t addr)
{
	uint32_t offset = (uint32_t)(addr - l->addr);
	for (size_t i = 0; i < l->noffsets; i++)
		if (l->offsets[i].offset == offset)
			return &l->offsets[i];
	GROW(l->offsets, l->offsets_cap, l->noffsets + 1);
	struct c2c_offset *o = &l->offsets[l->noffsets++];
	memset(o, 0, sizeof(*o));
	o->offset = offset;
	const char *dso = NULL;
	o->symbol = data_name(st, p, pid, addr, &dso);
	bool lowest = true;
	for (size_t i = 0; i + 1 < l->noffsets; i++)
		lowest = lowest && l->offsets[i].offset > offset;
	if (lowest)
		l->dso = dso;
	return o;
}

static void count_line_stack(struct c2c_line *l, uint32_t stack, bool hitm)
{
	struct c2c_line_stack *ls = NULL;
	for (size_t i = 0; i < l->nstacks && !ls; i++)
		if (l->stacks[i].stack == stack)
			ls = &l->stacks[i];
	if (!ls) {
		GROW(l->stacks, l->stacks_cap, l->nstacks + 1);
		ls = &l->stacks[l->nstacks++];
		*ls = (struct c2c_line_stack){ .stack = stack };
	}
	ls->count++;
	ls->hitm += hitm;
}

static void *c2c_create(const struct profile *p, int self)
{
	(void)p;
	struct c2c_state *st = xcalloc(1, sizeof(*st));
	st->self = self;
	st->names = string_pool_new();
	return st;
}

static void c2c_destroy(void *state)
{
	struct c2c_state *st = state;
	for (size_t i = 0; i < st->nlines; i++) {
		free(st->lines[i].offsets);
		free(st->lines[i].stacks);
	}
	free(st->lines);
	free(st->slots);
	free(st->by_stack);
	free(st->stack_order);
	string_pool_free(st->names);
	free(st);
}

static void c2c_sample(void *state, const struct profile *p, const struct sp_sample *s, uint32_t stack)
{
	struct c2c_state *st = state;
	bool has_data_src = s->event && (s->event->attr.sample_type & PERF_SAMPLE_DATA_SRC);
	enum c2c_class cls = has_data_src ? c2c_classify(s->data_src) : C2C_OTHER;
	st->total.n[cls]++;
	st->path[view_stack_path(p, stack)].n[cls]++;
	if (stack >= st->by_stack_cap) {
		size_t old = st->by_stack_cap;
		GROW(st->by_stack, st->by_stack_cap, (size_t)stack + 1);
		memset(st->by_stack + old, 0, (st->by_stack_cap - old) * sizeof(*st->by_stack));
	}
	st->by_stack[stack].n[cls]++;
	if (!(s->event && (s->event->attr.sample_type & PERF_SAMPLE_ADDR)) || !s->addr) {
		st->no_address++;
		return;
	}
	uint32_t pid = view_kernel_address(s->addr) ? 0 : s->pid;
	struct c2c_line *l = line_of(st, pid, s->addr & ~(uint64_t)(C2C_LINE_SIZE - 1));
	l->counts.n[cls]++;
	if (c2c_class_is_load(cls))
		l->load_latency += s->weight;
	struct c2c_offset *o = offset_of(st, p, l, s->pid, s->addr);
	bool hitm = cls == C2C_LOCAL_HITM || cls == C2C_REMOTE_HITM;
	o->loads += c2c_class_is_load(cls);
	o->stores += c2c_class_is_store(cls);
	o->hitm += hitm;
	count_line_stack(l, stack, hitm);
}

/* Lines by HITM, then by samples, then by address: the same order in text and JSON. */
static int compare_lines(const void *a, const void *b)
{
	const struct c2c_line *x = a, *y = b;
	uint64_t hx = hitm_of(&x->counts), hy = hitm_of(&y->counts);
	if (hx != hy)
		return hx > hy ? -1 : 1;
	uint64_t nx = loads_of(&x->counts) + stores_of(&x->counts), ny = loads_of(&y->counts) + stores_of(&y->counts);
	if (nx != ny)
		return nx > ny ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int compare_offsets(const void *a, const void *b)
{
	const struct c2c_offset *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int compare_line_stacks(const void *a, const void *b)
{
	const struct c2c_line_stack *x = a, *y = b;
	if (x->hitm != y->hitm)
		return x->hitm > y->hitm ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int compare_stacks(const void *a, const void *b, void *state)
{
	const struct c2c_state *st = state;
	const struct c2c_counts *x = &st->by_stack[*(const uint32_t *)a];
	const struct c2c_counts *y = &st->by_stack[*(const uint32_t *)b];
	uint64_t hx = hitm_of(x), hy = hitm_of(y);
	if (hx != hy)
		return hx > hy ? -1 : 1;
	uint64_t nx = 0, ny = 0;
	for (int k = 0; k < C2C_CLASS_COUNT; k++) {
		nx += x->n[k];
		ny += y->n[k];
	}
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void c2c_finish(void *state, const struct profile *p)
{
	struct c2c_state *st = state;
	for (size_t i = 0; i < st->nlines; i++) {
		struct c2c_line *l = &st->lines[i];
		sort_items(l->offsets, l->noffsets, sizeof(*l->offsets), compare_offsets);
		sort_items(l->stacks, l->nstacks, sizeof(*l->stacks), compare_line_stacks);
		/*
		 * The marks_data hooks: a futex word in a user line ("[futex]", JSON
		 * "futex"), a contended kernel lock in a kernel line ("[lock]", "lock").
		 */
		const char *marker = view_data_marked_by(p, l->pid, l->addr, l->addr + C2C_LINE_SIZE);
		l->futex = marker && strcmp(marker, "futex") == 0;
		l->lock = marker && strcmp(marker, "lock") == 0;
	}
	if (st->nlines) /* qsort's array may not be NULL, even empty */
		sort_items(st->lines, st->nlines, sizeof(*st->lines), compare_lines);
	free(st->slots); /* the order changed: no more lookups after the last sample */
	st->slots = NULL;
	st->nslots = 0;
	size_t cap = 0;
	for (size_t id = 0; id < st->by_stack_cap; id++) {
		uint64_t n = 0;
		for (int k = 0; k < C2C_CLASS_COUNT; k++)
			n += st->by_stack[id].n[k];
		if (!n)
			continue;
		GROW(st->stack_order, cap, st->nstack_order + 1);
		st->stack_order[st->nstack_order++] = (uint32_t)id;
	}
	if (st->nstack_order)
		qsort_r(st->stack_order, st->nstack_order, sizeof(*st->stack_order), compare_stacks, st);
}

/* ---- the path table's figures ---- */

enum { FIG_HITM_LOCAL, FIG_HITM_REMOTE, FIG_HITM_TOTAL, FIG_DRAM_LOCAL, FIG_DRAM_REMOTE };

static const struct path_figure c2c_path_figures[] = {
	[FIG_HITM_LOCAL] = { "HITM lcl", "hitm_local", 0, "samples" },
	[FIG_HITM_REMOTE] = { "HITM rmt", "hitm_remote", 0, "samples" },
	[FIG_HITM_TOTAL] = { "HITM", "hitm_total", 0, "samples" },
	[FIG_DRAM_LOCAL] = { "DRAM lcl", "dram_local", 0, "samples" },
	[FIG_DRAM_REMOTE] = { "DRAM rmt", "dram_remote", 0, "samples" },
};

static uint64_t figure_of(const struct c2c_counts *c, size_t figure)
{
	switch (figure) {
	case FIG_HITM_LOCAL:
		return c->n[C2C_LOCAL_HITM];
	case FIG_HITM_REMOTE:
		return c->n[C2C_REMOTE_HITM];
	case FIG_HITM_TOTAL:
		return hitm_of(c);
	case FIG_DRAM_LOCAL:
		return c->n[C2C_LOCAL_DRAM];
	case FIG_DRAM_REMOTE:
		return c->n[C2C_REMOTE_DRAM];
	default:
		return 0;
	}
}

static double c2c_path_figure(void *state, const struct profile *p, int path, size_t figure)
{
	(void)p;
	const struct c2c_state *st = state;
	return (double)figure_of(&st->path[path], figure);
}

/* ---- text ---- */

static void text_classes(const struct c2c_state *st, const struct view_options *o, FILE *out)
{
	uint64_t loads = loads_of(&st->total), stores = stores_of(&st->total);
	fputc('\n', out);
	view_text_wrapped(o, out, 4, "c2c: %llu load samples, %llu store samples, %llu other; %llu without a data address",
			  (unsigned long long)loads, (unsigned long long)stores,
			  (unsigned long long)st->total.n[C2C_OTHER], (unsigned long long)st->no_address);
	view_text_wrapped(o, out, 4, "  HITM %llu (local %llu, remote %llu), DRAM local %llu, remote %llu (counts of "
			  "sampled loads)", (unsigned long long)hitm_of(&st->total),
			  (unsigned long long)st->total.n[C2C_LOCAL_HITM], (unsigned long long)st->total.n[C2C_REMOTE_HITM],
			  (unsigned long long)st->total.n[C2C_LOCAL_DRAM], (unsigned long long)st->total.n[C2C_REMOTE_DRAM]);
	/* a load class's share of the loads, a store class's of the stores, other's of every sample */
	uint64_t samples = loads + stores + st->total.n[C2C_OTHER];
	fprintf(out, "  %-16s %10s %7s\n", "class", "samples", "%");
	for (int k = 0; k < C2C_CLASS_COUNT; k++) {
		enum c2c_class cls = (enum c2c_class)k;
		uint64_t all = c2c_class_is_store(cls) ? stores : c2c_class_is_load(cls) ? loads : samples;
		if (st->total.n[k])
			fprintf(out, "  %-16s %10llu %7s\n", c2c_class_name(cls), (unsigned long long)st->total.n[k],
				SHARE(st->total.n[k], all));
	}
}

static void text_stacks(const struct c2c_state *st, const struct profile *p, const struct view_options *o,
			FILE *out)
{
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "Top c2c stacks (by HITM, then samples; leaf first)");
	for (size_t i = 0; i < st->nstack_order && i < o->stacks_per_path; i++) {
		uint32_t id = st->stack_order[i];
		const struct c2c_counts *c = &st->by_stack[id];
		view_text_wrapped(o, out, 6, "    %s: HITM %llu (local %llu, remote %llu), DRAM local %llu, remote %llu, "
				  "%llu loads, %llu stores",
				  path_name(view_stack_path(p, id)), (unsigned long long)hitm_of(c),
				  (unsigned long long)c->n[C2C_LOCAL_HITM], (unsigned long long)c->n[C2C_REMOTE_HITM],
				  (unsigned long long)c->n[C2C_LOCAL_DRAM], (unsigned long long)c->n[C2C_REMOTE_DRAM],
				  (unsigned long long)loads_of(c), (unsigned long long)stores_of(c));
		view_text_stack(p, id, o, out);
	}
}

static const char *line_symbol(const struct c2c_line *l)
{
	return l->noffsets ? l->offsets[0].symbol : "?";
}

/* The cacheline table's columns: line, symbol, pid, HITM, local, remote, loads, stores, dso and mark (view_table). */
#define LINE_SYMBOL_WIDTH 32
static const unsigned line_columns[] = { 20, LINE_SYMBOL_WIDTH + 1, 8, 7, 7, 7, 9, 9, 5 };

static void text_line_heading(struct view_table *t)
{
	view_table_addf(t, "  %-18s %-32s %7s %6s %6s %6s %8s %8s  %s", "line", "symbol", "pid", "HITM", "lcl", "rmt",
			"loads", "stores", "dso");
}

/* A cacheline's row (its own heading first when own_heading), its offsets and its stacks. */
static void text_line(const struct c2c_line *l, const struct profile *p, const struct view_options *o,
		      bool own_heading, FILE *out)
{
	struct view_table t = { .columns = line_columns, .ncolumns = ARRAY_SIZE(line_columns) };
	char cut[4 * LINE_SYMBOL_WIDTH];
	int pad;
	const char *symbol = view_text_cell(o, line_symbol(l), LINE_SYMBOL_WIDTH, cut, sizeof(cut), &pad);
	if (own_heading)
		text_line_heading(&t);
	view_table_addf(&t, "  0x%-16llx %-*s %7u %6llu %6llu %6llu %8llu %8llu  %s%s", (unsigned long long)l->addr,
			pad, symbol, l->pid, (unsigned long long)hitm_of(&l->counts),
			(unsigned long long)l->counts.n[C2C_LOCAL_HITM], (unsigned long long)l->counts.n[C2C_REMOTE_HITM],
			(unsigned long long)loads_of(&l->counts), (unsigned long long)stores_of(&l->counts),
			l->dso ? dso_short_name(l->dso) : "-", l->futex ? "  [futex]" : l->lock ? "  [lock]" : "");
	view_table_print(&t, o, out);
	for (size_t i = 0; i < l->noffsets; i++) {
		const struct c2c_offset *off = &l->offsets[i];
		char offset_cut[4 * 36];
		symbol = view_text_cell(o, off->symbol, 36, offset_cut, sizeof(offset_cut), &pad);
		view_text_wrapped(o, out, 12, "      +0x%02x %-*s loads %llu, stores %llu, HITM %llu", off->offset, pad,
				  symbol, (unsigned long long)off->loads, (unsigned long long)off->stores,
				  (unsigned long long)off->hitm);
	}
	for (size_t i = 0; i < l->nstacks && i < o->stacks_per_path; i++) {
		view_text_wrapped(o, out, 8, "      stack: %llu samples, %llu HITM", (unsigned long long)l->stacks[i].count,
				  (unsigned long long)l->stacks[i].hitm);
		view_text_stack(p, l->stacks[i].stack, o, out);
	}
}

/* Whether every cacheline row shown fits o->width under one heading (else each row gets its own, split). */
static bool lines_fit(const struct c2c_state *st, const struct view_options *o)
{
	if (!o->width)
		return true;
	size_t before_dso = 0;
	for (size_t c = 0; c + 1 < ARRAY_SIZE(line_columns); c++)
		before_dso += line_columns[c];
	for (size_t i = 0; i < st->nlines && i < o->top; i++) {
		const struct c2c_line *l = &st->lines[i];
		size_t dso = 2 + strlen(l->dso ? dso_short_name(l->dso) : "-") +
			     (l->futex ? strlen("  [futex]") : l->lock ? strlen("  [lock]") : 0);
		if (before_dso + dso > o->width)
			return false;
	}
	return true;
}

static void c2c_text(void *state, const struct profile *p, const struct view_options *o, FILE *out)
{
	const struct c2c_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	text_classes(st, o, out);
	text_stacks(st, p, o, out);
	fputc('\n', out);
	view_text_wrapped(o, out, 2, "Cachelines (%u bytes) by HITM (%zu lines; pid 0: kernel data; [futex]: holds a "
			  "futex word; [lock]: a contended kernel lock)", C2C_LINE_SIZE, st->nlines);
	bool fits = lines_fit(st, o);
	if (fits) {
		struct view_table heading = { .columns = line_columns, .ncolumns = ARRAY_SIZE(line_columns) };
		text_line_heading(&heading);
		view_table_print(&heading, o, out);
	}
	for (size_t i = 0; i < st->nlines && i < o->top; i++) {
		if (!fits && i)
			fputc('\n', out); /* each line under its own headings: a blank line between them */
		text_line(&st->lines[i], p, o, !fits, out);
	}
}

/* ---- JSON ---- */

/* The path figures' keys (hitm_local, ..., dram_remote), then loads and stores. */
static void json_counts(struct json_writer *w, const struct c2c_counts *c)
{
	for (size_t f = 0; f < ARRAY_SIZE(c2c_path_figures); f++)
		json_u64(w, c2c_path_figures[f].key, figure_of(c, f));
	json_u64(w, "loads", loads_of(c));
	json_u64(w, "stores", stores_of(c));
}

static void json_classes(struct json_writer *w, const struct c2c_counts *c)
{
	json_object_begin(w, "classes");
	for (int k = 0; k < C2C_CLASS_COUNT; k++)
		json_u64(w, c2c_class_name((enum c2c_class)k), c->n[k]);
	json_end(w);
}

static void json_line(struct json_writer *w, const struct c2c_line *l, const struct profile *p, size_t limit)
{
	json_object_begin(w, NULL);
	json_hex(w, "addr", l->addr);
	json_string(w, "symbol", line_symbol(l));
	json_string(w, "dso", l->dso);
	json_u64(w, "pid", l->pid);
	json_bool(w, "kernel", l->pid == 0);
	json_counts(w, &l->counts);
	json_bool(w, "futex", l->futex);
	json_bool(w, "lock", l->lock);
	uint64_t loads = loads_of(&l->counts);
	json_double(w, "load_latency_avg", loads ? (double)l->load_latency / (double)loads : 0.0, 1);
	json_classes(w, &l->counts);
	json_array_begin(w, "offsets");
	for (size_t i = 0; i < l->noffsets; i++) {
		const struct c2c_offset *off = &l->offsets[i];
		json_object_begin(w, NULL);
		json_hex(w, "offset", off->offset);
		json_string(w, "symbol", off->symbol);
		json_u64(w, "loads", off->loads);
		json_u64(w, "stores", off->stores);
		json_u64(w, "hitm", off->hitm);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "stacks");
	for (size_t i = 0; i < l->nstacks && i < limit; i++) {
		json_object_begin(w, NULL);
		json_string(w, "path", path_name(view_stack_path(p, l->stacks[i].stack)));
		json_u64(w, "count", l->stacks[i].count);
		json_u64(w, "hitm", l->stacks[i].hitm);
		view_json_stack(w, p, l->stacks[i].stack);
		json_end(w);
	}
	json_end(w);
	json_end(w);
}

static void c2c_json(void *state, const struct profile *p, const struct view_options *o, struct json_writer *w)
{
	const struct c2c_state *st = state;
	size_t limit = o->stacks_limit_given ? o->stacks_per_path : 5;
	if (!view_collector_ok(p, st->self)) {
		/* as every unavailable collector: null or empty, meta.collectors says why */
		json_null(w, "c2c");
		json_array_begin(w, "cachelines");
		json_end(w);
		return;
	}
	json_object_begin(w, "c2c");
	json_u64(w, "line_size", C2C_LINE_SIZE);
	json_counts(w, &st->total);
	json_u64(w, "no_address", st->no_address);
	json_classes(w, &st->total);
	json_array_begin(w, "stacks");
	for (size_t i = 0; i < st->nstack_order && (!o->stacks_limit_given || i < o->stacks_per_path); i++) {
		uint32_t id = st->stack_order[i];
		json_object_begin(w, NULL);
		json_string(w, "path", path_name(view_stack_path(p, id)));
		json_counts(w, &st->by_stack[id]);
		view_json_stack(w, p, id);
		json_end(w);
	}
	json_end(w);
	json_end(w);
	json_array_begin(w, "cachelines");
	for (size_t i = 0; i < st->nlines; i++)
		json_line(w, &st->lines[i], p, limit);
	json_end(w);
}

/* ---- keyed figures: LKP's perf-c2c names (samples of each class) ---- */

static void c2c_figures(void *state, const struct profile *p, struct figure_rows *rows)
{
	const struct c2c_state *st = state;
	if (!view_collector_ok(p, st->self))
		return;
	const struct c2c_counts *c = &st->total;
	figure_rows_add(rows, (double)c->n[C2C_LOCAL_HITM], "samples", true, "perf-c2c.HITM.local");
	figure_rows_add(rows, (double)c->n[C2C_REMOTE_HITM], "samples", true, "perf-c2c.HITM.remote");
	figure_rows_add(rows, (double)hitm_of(c), "samples", true, "perf-c2c.HITM.total");
	figure_rows_add(rows, (double)c->n[C2C_LOCAL_DRAM], "samples", true, "perf-c2c.DRAM.local");
	figure_rows_add(rows, (double)c->n[C2C_REMOTE_DRAM], "samples", true, "perf-c2c.DRAM.remote");
	figure_rows_add(rows, (double)(c->n[C2C_LOCAL_DRAM] + c->n[C2C_REMOTE_DRAM]), "samples", true,
			"perf-c2c.DRAM.total");
	figure_rows_add(rows, (double)loads_of(c), "samples", true, "c2c.loads");
	figure_rows_add(rows, (double)stores_of(c), "samples", true, "c2c.stores");
}

static const struct collector_analyzer c2c_analyzer = {
	.create = c2c_create,
	.figures = c2c_figures,
	.sample = c2c_sample,
	.finish = c2c_finish,
	.text = c2c_text,
	.json = c2c_json,
	.destroy = c2c_destroy,
	.path_figures = c2c_path_figures,
	.npath_figures = ARRAY_SIZE(c2c_path_figures),
	.path_figure = c2c_path_figure,
};

/* ---- record side ---- */

/* The core PMUs that may carry mem-loads: one on most parts, the two halves of a hybrid one. */
static const char *const intel_core_pmus[] = { "cpu", "cpu_core", "cpu_atom" };

static struct c2c_event *plan_add(struct c2c_event *events, size_t max, size_t *n, int leader, bool sampling,
				  const char *fmt, const char *pmu)
{
	if (*n == max)
		return NULL;
	struct c2c_event *e = &events[(*n)++];
	snprintf(e->spec, sizeof(e->spec), fmt, pmu);
	e->leader = leader;
	e->sampling = sampling;
	return e;
}

int c2c_plan_events(struct c2c_event *events, size_t max, size_t *count, char *reason, size_t reasonlen)
{
	size_t n = 0;
	char loads[64];
	snprintf(loads, sizeof(loads), "%%s/mem-loads,ldlat=%d/P", C2C_LOAD_LATENCY);
	for (size_t i = 0; i < ARRAY_SIZE(intel_core_pmus); i++) {
		const char *pmu = intel_core_pmus[i];
		if (!pmu_sysfs_has_event(pmu, "mem-loads"))
			continue;
		int leader = -1;
		/* Sapphire Rapids and later sample loads only in a group that mem-loads-aux leads. */
		if (pmu_sysfs_has_event(pmu, "mem-loads-aux")) {
			leader = (int)n;
			if (!plan_add(events, max, &n, -1, false, "%s/mem-loads-aux/", pmu))
				return -ENOSPC;
		}
		if (!plan_add(events, max, &n, leader, true, loads, pmu))
			return -ENOSPC;
		if (pmu_sysfs_has_event(pmu, "mem-stores") && !plan_add(events, max, &n, -1, true, "%s/mem-stores/P", pmu))
			return -ENOSPC;
	}
	uint32_t type;
	if (n == 0 && pmu_sysfs_type("ibs_op", &type) == 0 && !plan_add(events, max, &n, -1, true, "%s//", "ibs_op"))
		return -ENOSPC;
	*count = n;
	if (n == 0) {
		snprintf(reason, reasonlen,
			 "no PMU samples memory accesses here: no mem-loads event (Intel) nor ibs_op PMU (AMD) in "
			 "/sys/bus/event_source/devices (a VM without PMU passthrough?)");
		return -ENODEV;
	}
	return 0;
}

/* What a c2c sample carries beyond sampling_attr_init(): the data address, its source and the load latency. */
#define C2C_SAMPLE_TYPE (PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT_STRUCT)

/*
 * Open the spec (after its group's leader, when it has one) once, disabled,
 * on this thread: 0 or -errno.  A member cannot be probed alone: the kernel
 * refuses Sapphire Rapids' mem-loads outside its mem-loads-aux group.
 */
static int probe_in_group(const struct event_spec *leader, const struct event_spec *spec)
{
	struct perf_event_attr la, a = spec->attr;
	int lfd = -1;
	if (leader) {
		la = leader->attr;
		la.enable_on_exec = 0;
		lfd = sys_perf_event_open(&la, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (lfd < 0)
			return lfd;
	}
	a.enable_on_exec = 0;
	int fd = sys_perf_event_open(&a, 0, -1, lfd, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return fd < 0 ? fd : 0;
}

/* :P: the highest precise_ip the PMU accepts (PEBS: 3 on Skylake and later), found as perf finds it. */
static int settle_precision(const struct event_spec *leader, struct event_spec *spec, bool max_precise)
{
	if (!max_precise)
		return probe_in_group(leader, spec);
	int err = -EINVAL;
	for (int precise = 3; precise >= 0; precise--) {
		spec->attr.precise_ip = (unsigned)precise;
		err = probe_in_group(leader, spec);
		/* a precision the PMU lacks is refused with EOPNOTSUPP or EINVAL; other errors are not about it */
		if (err != -EOPNOTSUPP && err != -EINVAL)
			return err;
	}
	return err;
}

int c2c_build_events(const struct record_options *opts, struct event_list *events, bool *max_precise, char *reason,
		     size_t reasonlen)
{
	struct c2c_event plan[C2C_MAX_EVENTS];
	size_t n = 0;
	int err = c2c_plan_events(plan, ARRAY_SIZE(plan), &n, reason, reasonlen);
	if (err)
		return err;
	struct record_options o = *opts;
	o.call_graph = call_graph_for(opts, CALL_GRAPH_FP);
	for (size_t i = 0; i < n; i++) {
		struct pmu_event ev;
		char perr[256];
		err = pmu_event_parse(plan[i].spec, &ev, perr, sizeof(perr));
		if (err) {
			snprintf(reason, reasonlen, "%s", perr);
			return err;
		}
		struct event_spec *spec = event_list_add(events, plan[i].spec, "c2c");
		sampling_attr_init(&spec->attr, &o, ev.attr.type, ev.attr.config);
		pmu_event_apply(&ev, &spec->attr);
		spec->group_with_previous = plan[i].leader >= 0;
		/*
		 * A CPU may refuse what the probe on this one accepted: the
		 * collector is then noted unavailable, the recording goes on.
		 */
		spec->optional = true;
		/* a hybrid part's core PMU covers its own CPUs only: cpu_core's events open on the P-cores */
		spec->cpus = pmu_sysfs_cpus(ev.pmu);
		if (max_precise)
			max_precise[i] = ev.max_precise;
		if (plan[i].sampling) {
			spec->attr.sample_type |= C2C_SAMPLE_TYPE;
		} else {
			/* a leader that only counts: its member's samples are the ones read */
			spec->attr.freq = 0;
			spec->attr.sample_period = 0;
		}
	}
	return 0;
}

static int c2c_add_events(struct record_options *opts, struct event_list *events, char *reason, size_t reasonlen)
{
	size_t first = events->count;
	bool max_precise[C2C_MAX_EVENTS];
	int err = c2c_build_events(opts, events, max_precise, reason, reasonlen);
	if (err)
		return err;
	for (size_t i = first; i < events->count; i++) {
		struct event_spec *spec = &events->specs[i];
		if (i + 1 < events->count && events->specs[i + 1].group_with_previous)
			continue; /* a leader is probed with its member, next */
		const struct event_spec *leader = spec->group_with_previous ? &events->specs[i - 1] : NULL;
		err = settle_precision(leader, spec, max_precise[i - first]);
		if (err == -EINVAL && (spec->attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) {
			/* before Linux 5.12: the plain weight */
			spec->attr.sample_type ^= PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_WEIGHT;
			err = settle_precision(leader, spec, max_precise[i - first]);
		}
		if (err) {
			snprintf(reason, reasonlen, "cannot open %s: %s", spec->name, perf_open_reason(err, &spec->attr));
			return err;
		}
	}
	/* data addresses are named by the mapping that holds them: heap, stack, a library's .data */
	opts->want_data_mmaps = true;
	return 0;
}

const struct collector c2c_collector = {
	.name = "c2c",
	.description = "loads and stores sampled with their data address and source (Intel mem-loads/mem-stores, "
		       "AMD ibs_op): HITM and DRAM per stack, path and cacheline",
	.add_events = c2c_add_events,
	.unit = "samples",
	.analyzer = &c2c_analyzer,
};
