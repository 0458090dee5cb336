/*
 * test_unwind.c: the DWARF unwinder (symbolize/unwind*.c) over real stack
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
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/format.h"
#include "sigprof/kernel/sample.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/profile.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/symbolize/unwind.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

#define FIXTURE "build/fixtures/unwind_fixture"
#define FIXTURE_DEBUG_FRAME "build/fixtures/unwind_fixture_debug_frame"
#define FIXTURE_LLD "build/fixtures/unwind_fixture_lld"
#define FIXTURE_STATIC "build/fixtures/unwind_fixture_static"
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

static void run_fixture(const char *fixture)
{
	char *command = NULL;
	cr_assert_geq(asprintf(&command, "%s %s", fixture, dir), 0);
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

/* s->regs from by_number: one u64 per set bit of s->mask, lowest bit first, as PERF_SAMPLE_REGS_USER lays them out. */
static void pack_registers(struct snapshot *s, const uint64_t *by_number)
{
	s->nr_regs = 0;
	for (int bit = 0; bit < PERF_REG_X86_64_MAX; bit++)
		if (s->mask & (1ULL << bit))
			s->regs[s->nr_regs++] = by_number[bit];
}

/* Run a build of the fixture (it writes every snapshot into this test's directory) and load the named one. */
static void load_fixture_snapshot(const char *fixture, const char *name, struct snapshot *s)
{
	run_fixture(fixture);
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
	pack_registers(s, by_number);
	snprintf(file, sizeof(file), "%s.stack", name);
	path = path_join(dir, file);
	s->stack = read_file(path, &s->stack_bytes);
	free(path);
	path = path_join(dir, "maps");
	s->procs = proc_table_from_maps(path, PID);
	free(path);
}

static void load_snapshot(const char *name, struct snapshot *s)
{
	load_fixture_snapshot(FIXTURE, name, s);
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

/* Unwind the snapshot's whole stack copy into result (and print it); the unwinder, for more walks. */
static struct unwinder *unwind_whole_copy(const struct snapshot *s)
{
	struct unwinder *u = unwinder_new(s->procs);
	struct unwind_input in = input_of(s, s->stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	print_frames(s->procs, &result);
	return u;
}

/* Unwind the snapshot's registers and whole copy with its IP set to ip (the thread stopped there) into result. */
static void unwind_at(struct unwinder *u, struct snapshot *s, uint64_t ip)
{
	s->regs[__builtin_popcountll(s->mask & ((1ULL << PERF_REG_X86_IP) - 1))] = ip;
	struct unwind_input in = input_of(s, s->stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	print_frames(s->procs, &result);
}

/* The call snapshot of a build of the fixture unwinds main -> fixture_a -> fixture_b -> fixture_c, to _start. */
static void check_call_chain(const char *fixture)
{
	struct snapshot s;
	load_fixture_snapshot(fixture, "call", &s);
	struct unwinder *u = unwind_whole_copy(&s);

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
	struct unwind_input in = input_of(&s, s.stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, again), 0);
	cr_assert_eq(again->nframes, result.nframes);
	for (size_t i = 0; i < result.nframes; i++)
		cr_assert_eq(again->frames[i].ip, result.frames[i].ip);
	free(again);
	unwinder_free(u);
	free_snapshot(&s);
}

/*
 * The signal snapshot of a build of the fixture unwinds the handler, the
 * signal frame, the interrupted function at its exact IP, and main.
 */
static void check_signal_chain(const char *fixture)
{
	struct snapshot s;
	load_fixture_snapshot(fixture, "signal", &s);
	struct unwinder *u = unwind_whole_copy(&s);

	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_handler_spin"), 0);
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_on_prof"), 1);
	cr_assert_geq(result.nframes, 5);
	cr_assert_eq(result.frames[2].kind, UNWIND_FRAME_SIGNAL, "the trampoline's frame is the signal frame");
	cr_assert_eq(result.frames[2].signal, SIGPROF, "the siginfo on the stack names SIGPROF");
	cr_assert_not(result.frames[2].returned, "the handler runs");
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_interrupted_loop"), 3);
	cr_assert_eq(result.frames[3].kind, UNWIND_FRAME_EXACT, "the interrupted IP is exact");
	cr_assert_eq(find_function(s.procs, &result, 0, "main"), 4);
	cr_assert_eq(result.failure, UNWIND_COMPLETE, "stopped: %s", result.reason);
	char name[16];
	cr_assert_str_eq(signal_name(result.frames[2].signal, name, sizeof(name)), "SIGPROF");
	unwinder_free(u);
	free_snapshot(&s);
}

Test(unwind, call_chain_of_optimized_code_without_frame_pointers)
{
	check_call_chain(FIXTURE);
}

Test(unwind, signal_frame_between_handler_and_interrupted_code)
{
	check_signal_chain(FIXTURE);
}

/* Two walks' results are the same, frame for frame, and stopped for the same reason. */
static void assert_same_walk(const struct unwind_result *a, const struct unwind_result *b)
{
	cr_assert_eq(a->nframes, b->nframes);
	cr_assert_eq(a->failure, b->failure);
	cr_assert_str_eq(a->reason, b->reason);
	for (size_t i = 0; i < b->nframes; i++) {
		cr_assert_eq(a->frames[i].ip, b->frames[i].ip, "frame %zu", i);
		cr_assert_eq(a->frames[i].kind, b->frames[i].kind, "frame %zu", i);
		cr_assert_eq(a->frames[i].signal, b->frames[i].signal, "frame %zu", i);
		cr_assert_eq(a->frames[i].returned, b->frames[i].returned, "frame %zu", i);
	}
}

/* The same sample twice: the second is the memo's, frame for frame (signal frames and their numbers too). */
Test(unwind, a_repeated_sample_is_answered_from_the_memo)
{
	const char *const snapshots[] = { "call", "signal" };
	for (size_t k = 0; k < sizeof(snapshots) / sizeof(snapshots[0]); k++) {
		struct snapshot s;
		load_snapshot(snapshots[k], &s);
		struct unwinder *u = unwind_whole_copy(&s);
		uint64_t hits, walked;
		unwinder_memo_stats(u, &hits, &walked);
		cr_assert_eq(hits, 0);
		cr_assert_eq(walked, 1);
		struct unwind_result *again = malloc(sizeof(*again));
		struct unwind_input in = input_of(&s, s.stack_bytes);
		cr_assert_eq(unwind_sample(u, &in, again), 0);
		unwinder_memo_stats(u, &hits, &walked);
		cr_assert_eq(hits, 1, "%s: the second walk is the memo's", snapshots[k]);
		cr_assert_eq(walked, 1);
		assert_same_walk(again, &result);
		free(again);
		unwinder_free(u);
		free_snapshot(&s);
	}
}

/*
 * The same IP and SP over a stack whose return address into fixture_b was
 * overwritten: the memo does not answer, the walk ends where a fresh
 * unwinder's ends, before fixture_a.
 */
Test(unwind, a_changed_return_address_is_walked_again)
{
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwind_whole_copy(&s);
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_b"), 1);
	uint64_t ret = result.frames[1].ip;
	size_t whole = result.nframes, at = s.stack_bytes;
	for (size_t off = 0; off + sizeof(ret) <= s.stack_bytes && at == s.stack_bytes; off += sizeof(ret))
		if (memcmp(s.stack + off, &ret, sizeof(ret)) == 0)
			at = off;
	cr_assert_lt(at, s.stack_bytes, "fixture_c's return address is on the copied stack");
	memset(s.stack + at, 0, sizeof(ret));
	struct unwind_input in = input_of(&s, s.stack_bytes);
	struct unwind_result *changed = malloc(sizeof(*changed));
	cr_assert_eq(unwind_sample(u, &in, changed), 0);
	uint64_t hits, walked;
	unwinder_memo_stats(u, &hits, &walked);
	cr_assert_eq(hits, 0, "a changed stack word the walk read is walked again");
	cr_assert_eq(walked, 2);
	struct unwinder *fresh = unwinder_new(s.procs);
	cr_assert_eq(unwind_sample(fresh, &in, &result), 0);
	print_frames(s.procs, &result);
	cr_assert_lt(result.nframes, whole, "the zeroed return address ends the walk early");
	assert_same_walk(changed, &result);
	cr_assert_eq(find_function(s.procs, changed, 0, "fixture_a"), -1);
	free(changed);
	unwinder_free(fresh);
	unwinder_free(u);
	free_snapshot(&s);
}

/* An exec between two samples changes the process's mappings: the second sample is walked, not the memo's. */
Test(unwind, an_exec_between_samples_is_walked_again)
{
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwind_whole_copy(&s);
	proc_table_comm(s.procs, PID, PID, "other", true);
	struct unwind_input in = input_of(&s, s.stack_bytes);
	struct unwind_result *again = malloc(sizeof(*again));
	cr_assert_eq(unwind_sample(u, &in, again), 0);
	uint64_t hits, walked;
	unwinder_memo_stats(u, &hits, &walked);
	cr_assert_eq(hits, 0);
	cr_assert_eq(walked, 2);
	free(again);
	unwinder_free(u);
	free_snapshot(&s);
}

/* Keep only the registers of mask in s, laid out as the kernel would give them. */
static void narrow_registers(struct snapshot *s, uint64_t mask)
{
	uint64_t by_number[PERF_REG_X86_64_MAX] = { 0 };
	uint32_t index = 0;
	for (int bit = 0; bit < PERF_REG_X86_64_MAX; bit++)
		if (s->mask & (1ULL << bit))
			by_number[bit] = s->regs[index++];
	s->mask &= mask;
	pack_registers(s, by_number);
}

/*
 * A key copies IP, SP and BP only (SP_KEY_REGS_MASK): the same walk, frame
 * for frame, as with every register, through optimized code without frame
 * pointers and through a signal frame, in each build of the fixture.
 */
Test(unwind, key_registers_walk_the_same_frames_as_every_register)
{
	const char *const fixtures[] = { FIXTURE, FIXTURE_DEBUG_FRAME, FIXTURE_LLD };
	const char *const snapshots[] = { "call", "signal" };
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		if (access(fixtures[f], X_OK) != 0)
			continue; /* the lld build: executable_linked_by_lld says why it is missing */
		for (size_t k = 0; k < sizeof(snapshots) / sizeof(snapshots[0]); k++) {
			struct snapshot s;
			load_fixture_snapshot(fixtures[f], snapshots[k], &s);
			struct unwinder *u = unwind_whole_copy(&s);
			struct unwind_result *all = malloc(sizeof(*all));
			*all = result;
			cr_assert_gt(__builtin_popcountll(s.mask), 3, "the snapshot has more than the key's registers");
			narrow_registers(&s, SP_KEY_REGS_MASK);
			cr_assert_eq(s.nr_regs, 3);
			struct unwind_input in = input_of(&s, s.stack_bytes);
			cr_assert_eq(unwind_sample(u, &in, &result), 0);
			print_frames(s.procs, &result);
			cr_assert_eq(result.nframes, all->nframes, "%s %s: %zu frames, %zu with every register",
				     fixtures[f], snapshots[k], result.nframes, all->nframes);
			for (size_t i = 0; i < all->nframes; i++)
				cr_assert_eq(result.frames[i].ip, all->frames[i].ip, "%s %s: frame %zu", fixtures[f],
					     snapshots[k], i);
			cr_assert_eq(result.failure, all->failure);
			free(all);
			unwinder_free(u);
			free_snapshot(&s);
		}
	}
}

/*
 * The fixture built without .eh_frame for its own code: its CFI is only in
 * .debug_frame (libc's and crt1's code keeps .eh_frame, so one walk crosses
 * both kinds, and the signal snapshot enters the program's code at an exact
 * IP from the signal frame).
 */
Test(unwind, code_with_only_debug_frame)
{
	check_call_chain(FIXTURE_DEBUG_FRAME);
	check_signal_chain(FIXTURE_DEBUG_FRAME);
}

/* The same build stripped: its .debug_frame is in the separate debug file that .gnu_debuglink names. */
Test(unwind, debug_frame_of_the_separate_debug_file)
{
	check_call_chain(FIXTURE_DEBUG_FRAME ".linked");
	check_signal_chain(FIXTURE_DEBUG_FRAME ".linked");
}

/*
 * The fixture linked by lld (the GNUmakefile builds it where ld.lld is
 * installed).  lld starts the executable segment part-way through a page,
 * right after the read-only one, so the executable mapping's file offset
 * (its page's start) lies in the read-only segment's file bytes: a bias
 * taken from the mapping's start would put every vaddr a page off.  The
 * layout is checked from readelf's program headers before the walks.
 */
Test(unwind, executable_linked_by_lld)
{
	if (access(FIXTURE_LLD, X_OK) != 0)
		cr_skip_test("environment: %s was not built: ld.lld is not installed (Debian package lld)", FIXTURE_LLD);
	struct load_segments l = load_segments(FIXTURE_LLD);
	bool shared_page = false;
	for (size_t i = 0; i < l.count; i++) {
		if (!(l.seg[i].prot & PROT_EXEC))
			continue;
		uint64_t page = l.seg[i].offset & ~0xfffull;
		for (size_t j = 0; j < l.count; j++)
			shared_page |= j != i && page >= l.seg[j].offset && page - l.seg[j].offset < l.seg[j].filesz;
	}
	cr_assert(shared_page, "%s's executable segment does not start in a page of another segment: not lld's layout",
		  FIXTURE_LLD);
	check_call_chain(FIXTURE_LLD);
	check_signal_chain(FIXTURE_LLD);
}

/* `readelf -lW`'s program header types, one word each. */
static void take_program_header_type(const char *line, void *context)
{
	char type[32];
	if (sscanf(line, " %31[A-Z_] 0x", type) == 1 && strlen(type) > 2) {
		strncat(context, type, 511 - strlen(context));
		strncat(context, " ", 511 - strlen(context));
	}
}

/*
 * The fixture linked statically: Debian's gcc -static writes .eh_frame
 * without .eh_frame_hdr (readelf shows no GNU_EH_FRAME header), so there is
 * no search table, and the walk reads the FDEs of .eh_frame itself, from
 * the program's code through libc's to _start.
 */
Test(unwind, static_executable_without_eh_frame_hdr)
{
	char types[512] = "", command[256];
	snprintf(command, sizeof(command), "readelf -lW %s", FIXTURE_STATIC);
	each_output_line(command, take_program_header_type, types);
	cr_assert(strstr(types, "LOAD "), "readelf lists no LOAD header in %s: %s", FIXTURE_STATIC, types);
	cr_assert_null(strstr(types, "GNU_EH_FRAME"), "%s has a .eh_frame_hdr: not the case under test (%s)",
		       FIXTURE_STATIC, types);
	check_call_chain(FIXTURE_STATIC);
	check_signal_chain(FIXTURE_STATIC);
}

/* With the debug file gone, the stripped build's own code has no unwind info, and the stack says so. */
Test(unwind, stripped_debug_frame_code_without_its_debug_file)
{
	char *copy = path_join(dir, "stripped_fixture");
	copy_file_with(FIXTURE_DEBUG_FRAME ".linked", copy, NULL, 0);
	cr_assert_eq(chmod(copy, 0755), 0);
	struct snapshot s;
	load_fixture_snapshot(copy, "call", &s);
	struct unwinder *u = unwind_whole_copy(&s);
	cr_assert_eq(result.nframes, 1, "the leaf only");
	cr_assert_eq(result.failure, UNWIND_NO_UNWIND_INFO);
	cr_assert_str_eq(result.reason, "no unwind info for stripped_fixture");
	unwinder_free(u);
	free_snapshot(&s);
	free(copy);
}

/*
 * A handler on an alternate signal stack: the copy is of that stack, so the
 * walk crosses the signal frame into the interrupted code (raise's, in
 * libc), and stops there saying why rather than reading astray.
 */
Test(unwind, handler_on_an_alternate_signal_stack_says_so)
{
	struct snapshot s;
	load_snapshot("altstack", &s);
	struct unwinder *u = unwind_whole_copy(&s);
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_alt_handler_spin"), 0);
	cr_assert_eq(find_function(s.procs, &result, 0, "fixture_on_alt"), 1);
	cr_assert_eq(result.nframes, 4, "handler, its caller, the signal frame, the interrupted IP");
	cr_assert_eq(result.frames[2].kind, UNWIND_FRAME_SIGNAL);
	cr_assert_eq(result.frames[2].signal, SIGUSR1);
	cr_assert_eq(result.frames[3].kind, UNWIND_FRAME_EXACT, "the interrupted IP is exact");
	cr_assert_eq(result.failure, UNWIND_SIGNAL_STACK, "stopped: %s", result.reason);
	cr_assert_str_eq(result.reason, "handler on an alternate signal stack: the interrupted code's stack is not in "
					"the copy");
	cr_assert_str_eq(unwind_failure_key(result.failure), "signal_stack");
	unwinder_free(u);
	free_snapshot(&s);
}

/*
 * A copy of a build of the fixture, named name in this test's directory,
 * whose FDE for function has its call frame instructions replaced by
 * instructions (DW_CFA_nop after them), in its .debug_frame or, with
 * eh_frame, its .eh_frame.  Both are what GCC writes: 32-bit lengths; a
 * .debug_frame FDE holds 8-byte addresses after its CIE id, an .eh_frame
 * FDE a pcrel sdata4 initial location, a 4-byte range and an augmentation
 * length (0 here).  The program runs as before: only its CFI lies.
 */
static char *cfi_copy_with(const char *fixture, bool eh_frame, const char *name, const char *function,
			   const unsigned char *instructions, size_t length)
{
	const char *wanted = eh_frame ? ".eh_frame" : ".debug_frame";
	size_t size;
	unsigned char *image = read_file(fixture, &size);
	cr_assert_neq(elf_version(EV_CURRENT), EV_NONE);
	Elf *elf = elf_memory((char *)image, size);
	cr_assert_not_null(elf);
	size_t names;
	cr_assert_eq(elf_getshdrstrndx(elf, &names), 0);
	uint64_t address = 0;
	GElf_Shdr frames = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	while ((scn = elf_nextscn(elf, scn)) != NULL && gelf_getshdr(scn, &shdr)) {
		if (strcmp(elf_strptr(elf, names, shdr.sh_name), wanted) == 0)
			frames = shdr;
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Sym sym;
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize && gelf_getsym(data, (int)i, &sym); i++)
			if (strcmp(elf_strptr(elf, shdr.sh_link, sym.st_name), function) == 0)
				address = sym.st_value;
	}
	elf_end(elf);
	cr_assert_neq(address, 0, "no symbol %s", function);
	cr_assert_gt(frames.sh_size, 0, "no %s in %s", wanted, fixture);

	unsigned char *section = image + frames.sh_offset;
	bool patched = false;
	for (size_t at = 0; at + 24 <= frames.sh_size && !patched;) {
		uint32_t entry_length, cie_id;
		memcpy(&entry_length, section + at, 4);
		memcpy(&cie_id, section + at + 4, 4);
		if (eh_frame && entry_length == 0)
			break; /* .eh_frame's terminator */
		cr_assert(entry_length != 0 && entry_length != 0xffffffff && at + 4 + entry_length <= frames.sh_size);
		size_t end = at + 4 + entry_length, first = eh_frame ? at + 17 : at + 24;
		uint64_t initial_location;
		bool fde;
		if (eh_frame) {
			int32_t relative;
			memcpy(&relative, section + at + 8, 4);
			initial_location = frames.sh_addr + at + 8 + (int64_t)relative;
			fde = cie_id != 0;
		} else {
			memcpy(&initial_location, section + at + 8, 8);
			fde = cie_id != 0xffffffff;
		}
		if (fde && initial_location == address) {
			cr_assert(!eh_frame || section[at + 16] == 0, "%s's FDE has augmentation data", function);
			cr_assert_leq(length, end - first, "the instructions do not fit %s's FDE", function);
			memset(section + first, DW_CFA_nop, end - first);
			memcpy(section + first, instructions, length);
			patched = true;
		}
		at = end;
	}
	cr_assert(patched, "no %s FDE for %s in %s", wanted, function, fixture);
	char *copy = path_join(dir, name);
	write_file(copy, image, size);
	cr_assert_eq(chmod(copy, 0755), 0);
	free(image);
	return copy;
}

/*
 * Unwind the call snapshot of a copy of a build of the fixture whose CFI
 * (.debug_frame, or .eh_frame with eh_frame) for function is instructions:
 * the walk gives the first frames of fixture_c, fixture_b, then stops as a
 * bad frame.
 */
static void check_bad_rule_in(const char *fixture, bool eh_frame, const char *function,
			      const unsigned char *instructions, size_t length, size_t frames, const char *reason_format)
{
	static const char *const chain[] = { "fixture_c", "fixture_b" };
	char *copy = cfi_copy_with(fixture, eh_frame, "bad_cfi_fixture", function, instructions, length);
	struct snapshot s;
	load_fixture_snapshot(copy, "call", &s);
	struct unwinder *u = unwind_whole_copy(&s);
	cr_assert_eq(result.nframes, frames);
	for (size_t i = 0; i < frames; i++)
		cr_assert_str_eq(frame_function(s.procs, &result.frames[i]), chain[i]);
	cr_assert_eq(result.failure, UNWIND_BAD_FRAME);
	char reason[192];
	snprintf(reason, sizeof(reason), reason_format, "bad_cfi_fixture");
	cr_assert_str_eq(result.reason, reason);
	unwinder_free(u);
	free_snapshot(&s);
	free(copy);
}

/* The same for the .debug_frame build. */
static void check_bad_rule(const char *function, const unsigned char *instructions, size_t length, size_t frames,
			   const char *reason_format)
{
	check_bad_rule_in(FIXTURE_DEBUG_FRAME, false, function, instructions, length, frames, reason_format);
}

/*
 * A return address rule that gives the frame's own IP (same value) would
 * step to the same frame with the CFA 8 bytes higher each time: without a
 * check, 255 copies of fixture_b and "too deep".
 */
Test(unwind, debug_frame_return_address_back_to_the_same_frame_stops)
{
	static const unsigned char same_value_ra[] = { DW_CFA_same_value, 16 };
	check_bad_rule("fixture_b", same_value_ra, sizeof(same_value_ra), 2,
		       "a .debug_frame rule in %s returns to the same frame");
}

/* A CFA at the frame's own SP would not move the walk on. */
Test(unwind, debug_frame_cfa_at_the_stack_pointer_stops)
{
	static const unsigned char cfa_at_sp[] = { DW_CFA_def_cfa, 7, 0 };
	check_bad_rule("fixture_b", cfa_at_sp, sizeof(cfa_at_sp), 2, "the stack does not grow up through %s");
}

/* DW_OP_bregx's register is a ULEB128: 2^32 + 7 is no register, not %rsp (7) once cut to 32 bits. */
Test(unwind, debug_frame_register_number_past_32_bits_is_refused)
{
	static const unsigned char cfa_past_32_bits[] = {
		DW_CFA_def_cfa_expression, 7, DW_OP_bregx, 0x87, 0x80, 0x80, 0x80, 0x10, 16,
	};
	check_bad_rule("fixture_c", cfa_past_32_bits, sizeof(cfa_past_32_bits), 1,
		       "unsupported .debug_frame rule in %s");
}

/*
 * libdw grows a frame's registers up to the highest one an instruction
 * names: the fuzzed debug file that found it had DW_CFA_same_value
 * r155492561 in its CIE, gigabytes copied at each DW_CFA_remember_state.
 * A register past what x86-64 CFI names (r300 here, small enough not to
 * hurt if the check is lost) makes the whole .debug_frame unusable before
 * libdw runs it, so the walk stops at the leaf.
 */
Test(unwind, debug_frame_naming_a_register_past_x86_64s_is_corrupt)
{
	static const unsigned char huge_register[] = { DW_CFA_same_value, 0xac, 0x02 }; /* r300 */
	check_bad_rule("fixture_b", huge_register, sizeof(huge_register), 1, "corrupt .debug_frame in %s");
}

/*
 * The same check for a static program's .eh_frame, which libdw reads when
 * there is no .eh_frame_hdr: a copy of the static fixture whose FDE for
 * fixture_b has DW_CFA_same_value r300 for instructions.  The walk stops at
 * the leaf, saying the .eh_frame is corrupt.
 */
Test(unwind, static_eh_frame_naming_a_register_past_x86_64s_is_corrupt)
{
	static const unsigned char huge_register[] = { DW_CFA_same_value, 0xac, 0x02 }; /* r300 */
	check_bad_rule_in(FIXTURE_STATIC, true, "fixture_b", huge_register, sizeof(huge_register), 1,
			  "corrupt .eh_frame in %s");
}

Test(unwind, short_stack_copy_says_where_it_ends)
{
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

/* ---- through the report's loader: a recording made of a snapshot ---- */

#define EVENT_ID 91
#define SAMPLE_TYPE                                                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define RECORDED_STACK 16384 /* a record's size is 16 bits */

/* The sample_id trailer of a non-sample record for SAMPLE_TYPE: pid/tid, time, then the identifier. */
static void add_trailer(struct byte_builder *b, uint64_t time)
{
	bb_u32_pair(b, PID, PID);
	bb_u64(b, time);
	bb_u64(b, EVENT_ID);
}

/* Every mapping of the fixture as an MMAP2 record. */
static void add_mappings(struct byte_builder *b)
{
	char *path = path_join(dir, "maps");
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	struct maps_line m;
	while (maps_next(f, &m)) {
		size_t at = bb_begin_record(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
		bb_u32_pair(b, PID, PID);
		bb_u64(b, m.start);
		bb_u64(b, m.end - m.start);
		bb_u64(b, m.offset);
		bb_u32_pair(b, 0, 0);  /* maj, min */
		bb_u64(b, 0);          /* ino */
		bb_u64(b, 0);          /* ino_generation */
		bb_u32_pair(b, m.prot, MAP_PRIVATE);
		bb_bytes(b, m.name, strlen(m.name) + 1);
		bb_pad8(b);
		add_trailer(b, 1);
		bb_end_record(b, at);
	}
	fclose(f);
	free(path);
}

/* A user-mode sample of the snapshot, as the kernel lays one out for SAMPLE_TYPE (callchain empty: user-only). */
static void add_sample(struct byte_builder *b, const struct snapshot *s, uint64_t stack_bytes)
{
	size_t at = bb_begin_record(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	bb_u64(b, EVENT_ID);
	bb_u64(b, s->regs[__builtin_popcountll(s->mask & ((1ULL << PERF_REG_X86_IP) - 1))]);
	bb_u32_pair(b, PID, PID);
	bb_u64(b, 2);
	bb_u64(b, 0); /* callchain: no kernel frames */
	bb_u64(b, PERF_SAMPLE_REGS_ABI_64);
	bb_bytes(b, s->regs, s->nr_regs * sizeof(uint64_t));
	bb_u64(b, RECORDED_STACK);
	bb_bytes(b, s->stack, stack_bytes);
	bb_zeros(b, RECORDED_STACK - stack_bytes);
	bb_u64(b, stack_bytes);
	bb_end_record(b, at);
}

static const char *frame_name(const struct profile *p, const struct stack *st, uint32_t i)
{
	return p->stacks.frames[stack_frames(&p->stacks, st)[i]].sym;
}

Test(unwind, report_shows_the_signal_frame_and_keeps_the_handler_off_sigreturn)
{
	struct snapshot s;
	load_snapshot("signal", &s);
	char *path = path_join(dir, "signal.data");
	struct sp_writer *w = NULL;
	cr_assert_eq(sp_writer_create(path, &w), 0);
	struct perf_event_attr attr = cpu_clock_attr(SAMPLE_TYPE);
	attr.sample_regs_user = s.mask;
	attr.sample_stack_user = RECORDED_STACK;
	attr.exclude_callchain_user = 1;
	uint64_t id = EVENT_ID;
	cr_assert_eq(sp_writer_event(w, "cpu-clock", "cpu", &attr, &id, 1), 0);
	struct byte_builder b = { 0 };
	add_mappings(&b);
	add_sample(&b, &s, s.stack_bytes < RECORDED_STACK ? s.stack_bytes : RECORDED_STACK);
	cr_assert_eq(sp_writer_raw(w, b.buf, b.len), 0);
	bb_free(&b);
	struct sp_finish_record fin = { .header = { .type = SP_REC_FINISH, .size = sizeof(fin) } };
	cr_assert_eq(sp_writer_record(w, &fin), 0);
	cr_assert_eq(sp_writer_close(w), 0);

	struct profile p;
	char err[256] = "";
	cr_assert_eq(profile_load(path, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.unwind.samples, 1);
	cr_assert_eq(p.stacks.nstacks, 1);
	const struct stack *st = &p.stacks.stacks[0];
	for (uint32_t i = 0; i < st->nframes; i++)
		fprintf(stderr, "  report frame %u: %s\n", i, frame_name(&p, st, i) ? frame_name(&p, st, i) : "?");
	static const char *const expected[] = { "fixture_handler_spin", "fixture_on_prof", "[signal SIGPROF]",
						"fixture_interrupted_loop", "main" };
	cr_assert_geq(st->nframes, ARRAY_SIZE(expected));
	for (uint32_t i = 0; i < ARRAY_SIZE(expected); i++)
		cr_assert_str_eq(frame_name(&p, st, i), expected[i], "frame %u", i);
	const struct frame *signal = &p.stacks.frames[stack_frames(&p.stacks, st)[2]];
	cr_assert(signal->synthetic);
	cr_assert_str_eq(signal->dso, "[signal]");
	cr_assert_neq(st->path, PATH_SIGRETURN, "a handler's sample is not a sigreturn sample");
	cr_assert_eq(p.unwind.complete + p.unwind.failures[UNWIND_STACK_END], 1);
	if (p.unwind.failures[UNWIND_STACK_END])
		cr_assert_str_eq(frame_name(&p, st, st->nframes - 1), "[unwind: stack copy ends at 16384 bytes]");
	profile_free(&p);
	free(path);
	free_snapshot(&s);
}

/* Stacks of garbage (a corrupt recording, a thread caught mid-prologue) end with a reason, never a crash. */
Test(unwind, garbage_stacks_end_with_a_reason)
{
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwinder_new(s.procs);
	unsigned seed = 12345;
	uint64_t code = s.regs[__builtin_popcountll(s.mask & ((1ULL << PERF_REG_X86_IP) - 1))];
	for (int round = 0; round < 300; round++) {
		/* random words, some of them addresses in the fixture's code, as return addresses would be */
		uint64_t *words = (uint64_t *)s.stack;
		for (size_t i = 0; i < s.stack_bytes / 8; i++) {
			uint64_t r = (uint64_t)rand_r(&seed) << 32 | (uint64_t)rand_r(&seed);
			words[i] = r % 4 == 0 ? code + r % 4096 - 2048 : r % 4 == 1 ? (uint64_t)(uintptr_t)&words[i] : r;
		}
		struct unwind_input in = input_of(&s, (size_t)rand_r(&seed) % s.stack_bytes / 8 * 8);
		cr_assert_eq(unwind_sample(u, &in, &result), 0);
		cr_assert_geq(result.nframes, 1);
		cr_assert_leq(result.nframes, UNWIND_MAX_FRAMES);
		if (result.failure != UNWIND_COMPLETE)
			cr_assert_neq(result.reason[0], '\0', "failure %s without a reason",
				      unwind_failure_key(result.failure));
	}
	unwinder_free(u);
	free_snapshot(&s);
}

/*
 * A sample taken inside rt_sigreturn: the user IP is just past the
 * trampoline's syscall, where no unwind table reaches, and SP is where the
 * handler's return popped the trampoline's address.  The walk goes on from
 * the registers the kernel saved in the signal frame.  The state is made
 * from the signal snapshot: the slot that holds the handler's return
 * address (the trampoline, as the first walk found it) fixes that SP.
 */
Test(unwind, sample_inside_sigreturn_continues_in_the_interrupted_code)
{
	struct snapshot s;
	load_snapshot("signal", &s);
	struct unwinder *u = unwind_whole_copy(&s);
	cr_assert_eq(result.frames[2].kind, UNWIND_FRAME_SIGNAL);
	uint64_t trampoline = result.frames[2].ip;
	uint64_t interrupted = result.frames[3].ip;

	int sp_index = __builtin_popcountll(s.mask & ((1ULL << PERF_REG_X86_SP) - 1));
	int ip_index = __builtin_popcountll(s.mask & ((1ULL << PERF_REG_X86_IP) - 1));
	uint64_t sp = s.regs[sp_index];
	size_t slot = 0;
	for (size_t at = 0; at + 8 <= s.stack_bytes && !slot; at += 8)
		if (memcmp(s.stack + at, &trampoline, 8) == 0)
			slot = at;
	cr_assert_neq(slot, 0, "the handler's return address is on the stack");

	struct snapshot in_sigreturn = s;
	in_sigreturn.regs[sp_index] = sp + slot + 8;
	in_sigreturn.regs[ip_index] = trampoline + 9; /* mov $15, %rax (7 bytes); syscall (2) */
	in_sigreturn.stack = s.stack + slot + 8;
	struct unwind_input in = input_of(&in_sigreturn, s.stack_bytes - slot - 8);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	print_frames(s.procs, &result);
	cr_assert_geq(result.nframes, 4);
	cr_assert_str_eq(frame_function(s.procs, &result.frames[0]), "__restore_rt");
	cr_assert_eq(result.frames[0].kind, UNWIND_FRAME_EXACT);
	cr_assert_eq(result.frames[1].kind, UNWIND_FRAME_SIGNAL);
	cr_assert_eq(result.frames[1].signal, SIGPROF);
	cr_assert(result.frames[1].returned, "inside rt_sigreturn, the handler has returned");
	cr_assert_eq(result.frames[2].ip, interrupted, "the interrupted IP comes from the saved sigcontext");
	cr_assert_eq(result.frames[2].kind, UNWIND_FRAME_EXACT);
	cr_assert_str_eq(frame_function(s.procs, &result.frames[3]), "main");
	cr_assert_eq(result.failure, UNWIND_COMPLETE, "stopped: %s", result.reason);
	unwinder_free(u);
	free_snapshot(&s);
}

/* ---- ld.so's start-up code: the outermost frame of every process's main thread while it starts ---- */

/* The executable mapping in the snapshot's maps whose path holds name_part: its path and the bias of its vaddrs. */
static bool find_code_mapping(const char *name_part, char *path, size_t len, uint64_t *bias)
{
	char *maps = path_join(dir, "maps");
	FILE *f = fopen(maps, "re");
	cr_assert_not_null(f);
	struct maps_line m;
	bool found = false;
	while (!found && maps_next(f, &m)) {
		if (!(m.prot & PROT_EXEC) || !strstr(m.name, name_part))
			continue;
		struct load_segments l = load_segments(m.name);
		for (size_t i = 0; i < l.count && !found; i++)
			if (m.offset >= l.seg[i].offset && m.offset - l.seg[i].offset < l.seg[i].filesz) {
				*bias = m.start - (m.offset - l.seg[i].offset + l.seg[i].vaddr);
				snprintf(path, len, "%s", m.name);
				found = true;
			}
	}
	fclose(f);
	free(maps);
	return found;
}

struct start_code {
	uint64_t returns[8]; /* the vaddrs after each call: where the calls return */
	size_t nreturns;
	bool ended;          /* the indirect jump to the program's entry was seen */
	bool after_call;     /* the line before was a call */
};

/*
 * objdump's disassembly from ld.so's entry point: glibc's RTLD_START
 * (_start, then _dl_start_user) calls _dl_start and _dl_init and ends in
 * an indirect jump to the program's entry.  The instruction after each
 * call is a return address a start-up stack holds.
 */
static void take_start_line(const char *line, void *context)
{
	struct start_code *c = context;
	unsigned long long address;
	char rest[256];
	if (c->ended || sscanf(line, " %llx: %255[^\n]", &address, rest) != 2)
		return;
	if (c->after_call && c->nreturns < ARRAY_SIZE(c->returns))
		c->returns[c->nreturns++] = address;
	c->after_call = strstr(rest, "call") != NULL;
	c->ended = strstr(rest, "jmp") && strstr(rest, "*%");
}

/* `readelf -h`'s "Entry point address: 0x..." line. */
static void take_entry_point(const char *line, void *context)
{
	sscanf(line, " Entry point address: %llx", (unsigned long long *)context);
}

Test(unwind, ld_so_start_up_code_is_the_outermost_frame)
{
	struct snapshot s;
	load_snapshot("call", &s);
	char ld_so[4096];
	uint64_t bias;
	cr_assert(find_code_mapping("/ld-linux", ld_so, sizeof(ld_so), &bias), "the fixture's maps hold no ld.so");
	char command[8192];
	snprintf(command, sizeof(command), "readelf -hW %s", ld_so);
	struct start_code code = { 0 };
	unsigned long long entry = 0;
	each_output_line(command, take_entry_point, &entry);
	cr_assert_neq(entry, 0, "no entry point in %s", ld_so);
	snprintf(command, sizeof(command),
		 "objdump -d --no-show-raw-insn --start-address=%#llx --stop-address=%#llx %s", entry, entry + 512,
		 ld_so);
	each_output_line(command, take_start_line, &code);
	cr_assert(code.ended && code.nreturns >= 2, "%s's entry is not RTLD_START (%zu calls before the jump)", ld_so,
		  code.nreturns);

	/* a sample stopped at each return address, as the frames a start-up stack ends in */
	struct unwinder *u = unwinder_new(s.procs);
	for (size_t i = 0; i < code.nreturns; i++) {
		unwind_at(u, &s, bias + code.returns[i]);
		cr_expect_eq(result.nframes, 1, "the start-up code at %#llx has no caller",
			     (unsigned long long)code.returns[i]);
		cr_expect_eq(result.failure, UNWIND_COMPLETE, "at %#llx: %s", (unsigned long long)code.returns[i],
			     result.reason);
		/* named by its labels when the ld.so's debug file is there (libc6-dbg) */
		char debug[4096];
		if (debug_file_find(ld_so, debug, sizeof(debug)) == 0) {
			const char *name = frame_function(s.procs, &result.frames[0]);
			cr_expect(strcmp(name, "_start") == 0 || strcmp(name, "_dl_start_user") == 0,
				  "%#llx is in %s", (unsigned long long)code.returns[i], name);
		}
	}
	unwinder_free(u);
	free_snapshot(&s);
}

/* The pc ranges of a file's FDEs, from `readelf --debug-dump=frames` ("pc=START..END"). */
struct fde_ranges {
	uint64_t low[4096], high[4096];
	size_t count;
};

static void take_fde_range(const char *line, void *context)
{
	struct fde_ranges *r = context;
	const char *pc = strstr(line, "pc=");
	unsigned long long low, high;
	if (pc && r->count < ARRAY_SIZE(r->low) && sscanf(pc, "pc=%llx..%llx", &low, &high) == 2) {
		r->low[r->count] = low;
		r->high[r->count++] = high;
	}
}

static bool fde_covers(const struct fde_ranges *r, uint64_t vaddr)
{
	for (size_t i = 0; i < r->count; i++)
		if (vaddr >= r->low[i] && vaddr < r->high[i])
			return true;
	return false;
}

/* Functions (nm's t and T) in [low, high) that no FDE covers. */
struct cfi_less_functions {
	const struct fde_ranges *fdes;
	uint64_t low, high;
	uint64_t address[16];
	char name[16][64];
	size_t count;
};

static void take_cfi_less_function(const char *line, void *context)
{
	struct cfi_less_functions *f = context;
	unsigned long long address;
	char type, name[64];
	if (sscanf(line, "%llx %c %63s", &address, &type, name) == 3 && (type == 't' || type == 'T') &&
	    address >= f->low && address < f->high && !fde_covers(f->fdes, address) && f->count < ARRAY_SIZE(f->address)) {
		f->address[f->count] = address;
		snprintf(f->name[f->count++], sizeof(f->name[0]), "%s", name);
	}
}

/*
 * A program's _start has an FDE (its CFI leaves the return address
 * undefined: the walk ends there by the CFI), so the code right after it
 * that no FDE covers (crtbegin's deregister_tm_clones, frame_dummy, ...)
 * is not where a stack begins: an IP there is a walk without unwind info,
 * not a whole stack.  The FDEs, the entry point and the functions come
 * from readelf and nm.
 */
Test(unwind, code_after_an_entry_point_with_cfi_is_no_stack_start)
{
	struct snapshot s;
	load_snapshot("call", &s);
	static struct fde_ranges fdes;
	fdes.count = 0;
	each_output_line("readelf --debug-dump=frames " FIXTURE, take_fde_range, &fdes);
	unsigned long long entry = 0;
	each_output_line("readelf -hW " FIXTURE, take_entry_point, &entry);
	cr_assert(entry && fde_covers(&fdes, entry), "no FDE covers %s's entry %#llx: not the case under test", FIXTURE,
		  entry);
	struct cfi_less_functions after = { .fdes = &fdes, .low = entry, .high = entry + 256 };
	each_output_line("nm --defined-only " FIXTURE, take_cfi_less_function, &after);
	cr_assert_gt(after.count, 0, "no function without an FDE within 256 bytes above %s's entry", FIXTURE);
	char path[4096];
	uint64_t bias;
	cr_assert(find_code_mapping("/unwind_fixture", path, sizeof(path), &bias), "the fixture's maps do not hold it");
	struct unwinder *u = unwinder_new(s.procs);
	for (size_t i = 0; i < after.count; i++) {
		unwind_at(u, &s, bias + after.address[i]);
		cr_expect_eq(result.nframes, 1, "%s", after.name[i]);
		cr_expect_eq(result.failure, UNWIND_NO_UNWIND_INFO, "%s at %#llx: %s, not a stack start", after.name[i],
			     (unsigned long long)after.address[i], unwind_failure_key(result.failure));
		cr_expect_str_eq(result.reason, "no unwind info for unwind_fixture");
	}
	unwinder_free(u);
	free_snapshot(&s);
}

/* 32-bit code (a compat process) keeps its leaf and says it was not unwound, rather than walking garbage. */
Test(unwind, registers_of_32_bit_code_give_the_leaf_only)
{
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwinder_new(s.procs);
	struct unwind_input in = input_of(&s, s.stack_bytes);
	in.regs_abi = PERF_SAMPLE_REGS_ABI_32;
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	cr_assert_eq(result.nframes, 1);
	cr_assert_str_eq(frame_function(s.procs, &result.frames[0]), "fixture_c");
	cr_assert_eq(result.failure, UNWIND_UNSUPPORTED);
	cr_assert_str_eq(result.reason, "32-bit code is not unwound");
	unwinder_free(u);
	free_snapshot(&s);
}

/*
 * sigprof's own sigprocmask() (unwind.c) skips libunwind's calls inside
 * unwind_sample() only: anywhere else it is the system's, with its errno
 * convention, and an unwind leaves the thread's mask as it found it.
 */
Test(unwind, sigprocmask_outside_an_unwind_is_the_systems)
{
	sigset_t usr2, old, now;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	cr_assert_eq(sigprocmask(SIG_BLOCK, &usr2, &old), 0);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	cr_assert(sigismember(&now, SIGUSR2), "SIGUSR2 not blocked by sigprocmask");
	errno = 0;
	cr_assert_eq(sigprocmask(12345, &usr2, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	struct snapshot s;
	load_snapshot("call", &s);
	struct unwinder *u = unwinder_new(s.procs);
	struct unwind_input in = input_of(&s, s.stack_bytes);
	cr_assert_eq(unwind_sample(u, &in, &result), 0);
	cr_assert_gt(result.nframes, 1);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	cr_assert(sigismember(&now, SIGUSR2), "an unwind changed the thread's signal mask");
	unwinder_free(u);
	free_snapshot(&s);
	cr_assert_eq(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	cr_assert(!sigismember(&now, SIGUSR2));
}
