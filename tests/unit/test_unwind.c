/*
 * test_unwind.c: the DWARF unwinder (symbolize/unwind.c) over real stack
 * snapshots.
 *
 * build/fixtures/unwind_fixture (tests/fixtures/unwind_fixture.c, built -O2
 * -fomit-frame-pointer) is run into a temporary directory; it saves its
 * registers and a copy of its stack at two points whose call chains its
 * source fixes, and its /proc/self/maps.  Each test replays the maps into a
 * process table, lays the registers out as a perf sample does (perf's
 * numbering, from <asm/perf_regs.h>, one u64 per bit of the mask), unwinds,
 * and names the frames through the fixture's own symbol table.  The
 * expected names are the fixture's functions in the order its source calls
 * them; nothing about addresses is written here.
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize.h"
#include "sigprof/unwind.h"
#include "unit_helpers.h"

#define FIXTURE "build/fixtures/unwind_fixture"
#define PID 4242

TEMP_DIR_SUITE(unwind);

struct snapshot {
	uint64_t regs[PERF_REG_X86_64_MAX];
	uint64_t mask;
	uint32_t nr_regs;
	unsigned char *stack;
	size_t stack_bytes;
	struct proc_table *procs;
};

static void run_fixture(void)
{
	char *command = NULL;
	cr_assert_geq(asprintf(&command, "%s %s", FIXTURE, dir), 0);
	cr_assert_eq(system(command), 0, "the fixture failed: %s", command);
	free(command);
}

static int perf_register_named(const char *name)
{
	static const struct {
		const char *name;
		int number;
	} table[] = {
		{ "rax", PERF_REG_X86_AX }, { "rbx", PERF_REG_X86_BX }, { "rcx", PERF_REG_X86_CX },
		{ "rdx", PERF_REG_X86_DX }, { "rsi", PERF_REG_X86_SI }, { "rdi", PERF_REG_X86_DI },
		{ "rbp", PERF_REG_X86_BP }, { "rsp", PERF_REG_X86_SP }, { "rip", PERF_REG_X86_IP },
		{ "r8", PERF_REG_X86_R8 },  { "r9", PERF_REG_X86_R9 },  { "r10", PERF_REG_X86_R10 },
		{ "r11", PERF_REG_X86_R11 }, { "r12", PERF_REG_X86_R12 }, { "r13", PERF_REG_X86_R13 },
		{ "r14", PERF_REG_X86_R14 }, { "r15", PERF_REG_X86_R15 },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0)
			return table[i].number;
	return -1;
}

/* The mappings of the fixture's maps file, as MMAP2 records would give them. */
static void load_maps(struct proc_table *pt)
{
	char *path = path_join(dir, "maps");
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		char perms[8], name[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &offset, name) < 4)
			continue;
		uint32_t prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
				(perms[2] == 'x' ? PROT_EXEC : 0);
		proc_table_mmap(pt, PID, start, end - start, offset, prot, 0, name[0] ? name : "//anon");
	}
	fclose(f);
	free(path);
}

static void load_snapshot(const char *name, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	char file[64];
	snprintf(file, sizeof(file), "%s.regs", name);
	char *path = path_join(dir, file);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no %s", path);
	uint64_t by_number[PERF_REG_X86_64_MAX] = { 0 };
	char reg[16];
	unsigned long long value;
	while (fscanf(f, "%15s %llx", reg, &value) == 2) {
		int number = perf_register_named(reg);
		cr_assert_geq(number, 0, "unknown register %s", reg);
		by_number[number] = value;
		s->mask |= 1ULL << number;
	}
	fclose(f);
	free(path);
	/* one u64 per set bit of the mask, lowest bit first, as PERF_SAMPLE_REGS_USER lays them out */
	for (int bit = 0; bit < PERF_REG_X86_64_MAX; bit++)
		if (s->mask & (1ULL << bit))
			s->regs[s->nr_regs++] = by_number[bit];
	snprintf(file, sizeof(file), "%s.stack", name);
	path = path_join(dir, file);
	s->stack = read_file(path, &s->stack_bytes);
	free(path);
	s->procs = proc_table_new();
	load_maps(s->procs);
}

static void free_snapshot(struct snapshot *s)
{
	free(s->stack);
	proc_table_free(s->procs);
}

static struct unwind_input input_of(const struct snapshot *s, size_t stack_bytes)
{
	return (struct unwind_input){ .pid = PID, .regs = s->regs, .regs_mask = s->mask, .nr_regs = s->nr_regs,
				      .stack = s->stack, .stack_size = stack_bytes, .stack_dyn_size = stack_bytes };
}

/* The function a frame is in, as the report would look it up; "?" when no symbol covers it. */
static const char *frame_function(struct proc_table *pt, const struct unwind_frame *f)
{
	uint64_t lookup = f->kind == UNWIND_FRAME_RETURN ? f->ip - 1 : f->ip, addr;
	const struct mapping *map = proc_table_find_code(pt, PID, lookup);
	if (!map || !mapping_to_dso_addr(map, lookup, &addr))
		return "?";
	const struct sym *sym = symtab_lookup(dso_symtab(map->dso), SYM_FUNC, addr);
	return sym ? sym->name : "?";
}

static void print_frames(struct proc_table *pt, const struct unwind_result *r)
{
	for (size_t i = 0; i < r->nframes; i++)
		fprintf(stderr, "  #%zu %s kind %d signal %d\n", i, frame_function(pt, &r->frames[i]),
			r->frames[i].kind, r->frames[i].signal);
	fprintf(stderr, "  failure %s: %s\n", unwind_failure_key(r->failure), r->reason);
}

/* The index of the first frame at or after from that is in function name, or -1. */
static long find_function(struct proc_table *pt, const struct unwind_result *r, size_t from, const char *name)
{
	for (size_t i = from; i < r->nframes; i++)
		if (r->frames[i].kind != UNWIND_FRAME_SIGNAL && strcmp(frame_function(pt, &r->frames[i]), name) == 0)
			return (long)i;
	return -1;
}

static struct unwind_result result;

Test(unwind, call_chain_of_optimized_code_without_frame_pointers)
{
	run_fixture();
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwinder_new(s.procs);
	struct unwind_input in = input_of(&s, s.stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	print_frames(s.procs, &result);

	static const char *const chain[] = { "fixture_c", "fixture_b", "fixture_a", "main" };
	cr_assert_eq(find_function(s.procs, &result, 0, chain[0]), 0, "the leaf is fixture_c");
	cr_assert_eq(result.frames[0].kind, UNWIND_FRAME_EXACT);
	for (size_t i = 1; i < sizeof(chain) / sizeof(chain[0]); i++) {
		cr_assert_eq(find_function(s.procs, &result, 0, chain[i]), (long)i, "%s is frame %zu", chain[i], i);
		cr_assert_eq(result.frames[i].kind, UNWIND_FRAME_RETURN);
	}
	cr_assert_eq(result.failure, UNWIND_COMPLETE, "stopped: %s", result.reason);
	cr_assert_gt(find_function(s.procs, &result, 4, "_start"), 0, "the walk reaches _start");

	/* a second walk of the same sample, now from libunwind's cache, finds the same frames */
	struct unwind_result *again = malloc(sizeof(*again));
	cr_assert_eq(unwind_sample(u, &in, again), 0);
	cr_assert_eq(again->nframes, result.nframes);
	for (size_t i = 0; i < result.nframes; i++)
		cr_assert_eq(again->frames[i].ip, result.frames[i].ip);
	free(again);
	unwinder_free(u);
	free_snapshot(&s);
}

Test(unwind, signal_frame_between_handler_and_interrupted_code)
{
	run_fixture();
	struct snapshot s;
	load_snapshot("signal", &s);
	struct unwinder *u = unwinder_new(s.procs);
	struct unwind_input in = input_of(&s, s.stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	print_frames(s.procs, &result);

	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_handler_spin"), 0);
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_on_prof"), 1);
	cr_assert_geq(result.nframes, 5);
	cr_assert_eq(result.frames[2].kind, UNWIND_FRAME_SIGNAL, "the trampoline's frame is the signal frame");
	cr_assert_eq(result.frames[2].signal, SIGPROF, "the siginfo on the stack names SIGPROF");
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_interrupted_loop"), 3);
	cr_assert_eq(result.frames[3].kind, UNWIND_FRAME_EXACT, "the interrupted IP is exact");
	cr_assert_eq(find_function(s.procs, &result, 0, "main"), 4);
	cr_assert_eq(result.failure, UNWIND_COMPLETE, "stopped: %s", result.reason);
	char name[16];
	cr_assert_str_eq(unwind_signal_name(result.frames[2].signal, name, sizeof(name)), "SIGPROF");
	unwinder_free(u);
	free_snapshot(&s);
}

Test(unwind, short_stack_copy_says_where_it_ends)
{
	run_fixture();
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwinder_new(s.procs);
	struct unwind_input in = input_of(&s, 16); /* less than fixture_c's own frame */
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	print_frames(s.procs, &result);
	cr_assert_geq(result.nframes, 1);
	cr_assert_str_eq(frame_function(s.procs, &result.frames[0]), "fixture_c");
	cr_assert_eq(result.failure, UNWIND_STACK_END);
	cr_assert_str_eq(result.reason, "stack copy ends at 16 bytes");
	unwinder_free(u);
	free_snapshot(&s);
}

Test(unwind, ip_without_mapping_is_named)
{
	run_fixture();
	struct snapshot s;
	load_snapshot("call", &s);
	struct proc_table *empty = proc_table_new();
	struct unwinder *u = unwinder_new(empty);
	struct unwind_input in = input_of(&s, s.stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	cr_assert_eq(result.nframes, 1, "the leaf IP is known even without a mapping");
	cr_assert_eq(result.failure, UNWIND_NO_MAPPING);
	char expected[64];
	snprintf(expected, sizeof(expected), "no mapping for 0x%llx", (unsigned long long)result.frames[0].ip);
	cr_assert_str_eq(result.reason, expected);
	unwinder_free(u);
	proc_table_free(empty);
	free_snapshot(&s);
}

Test(unwind, registers_without_ip_are_refused)
{
	struct proc_table *pt = proc_table_new();
	struct unwinder *u = unwinder_new(pt);
	uint64_t sp = 0x7ffd0000;
	struct unwind_input in = { .pid = PID, .regs = &sp, .regs_mask = 1ULL << PERF_REG_X86_SP, .nr_regs = 1 };
	cr_assert_eq(unwind_sample(u, &in, &result), -EINVAL);
	cr_assert_eq(result.nframes, 0);
	cr_assert_neq(result.failure, UNWIND_COMPLETE);
	unwinder_free(u);
	proc_table_free(pt);
}

Test(unwind, failure_keys_are_distinct)
{
	for (int a = 0; a < UNWIND_FAILURE_COUNT; a++)
		for (int b = a + 1; b < UNWIND_FAILURE_COUNT; b++)
			cr_assert_str_neq(unwind_failure_key(a), unwind_failure_key(b));
}
