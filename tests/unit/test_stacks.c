/*
 * test_stacks.c: frame and stack interning (profiler/model/stacks.c).
 *
 * Frames come from frame_unknown() and from frame_for_address() on dsos
 * whose symbol table is marked as already tried and absent, so no file is
 * read.  Frames with a symbol can only come out of a real symbol table:
 * the symbol tables are built privately in symbolize/, so the path tests use
 * a dso naming this test binary (/proc/self/exe) and functions defined
 * below, whose addresses in the file are their run-time addresses minus the
 * load bias that dl_iterate_phdr reports.
 */
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/model/paths.h"
#include "sigprof/model/stacks.h"
#include "sigprof/base/util.h"

/* A full interning table would probe forever: fail instead. */
TestSuite(stacks, .timeout = 60);

static struct dso unreadable_dso(const char *name, bool kernel)
{
	return (struct dso){ .name = name, .load_tried = true, .is_kernel = kernel };
}

Test(stacks, unknown_frames_are_interned_by_address_and_mode)
{
	struct stack_table t;
	stack_table_init(&t, NULL);
	uint32_t a = frame_unknown(&t, 0x1000, false);
	uint32_t b = frame_unknown(&t, 0x2000, false);
	uint32_t k = frame_unknown(&t, 0x1000, true);
	cr_assert_neq(a, b);
	cr_assert_neq(a, k, "a kernel address is not the user address with the same value");
	cr_assert_eq(frame_unknown(&t, 0x1000, false), a);
	cr_assert_eq(frame_unknown(&t, 0x2000, false), b);
	cr_assert_eq(frame_unknown(&t, 0x1000, true), k);
	cr_assert_eq(t.nframes, 3);
	const struct frame *f = &t.frames[a];
	cr_assert_null(f->sym);
	cr_assert_str_eq(f->dso, "[unknown]");
	cr_assert_eq(f->addr, 0x1000);
	cr_assert_not(f->kernel);
	cr_assert_eq(f->path, -1);
	cr_assert(t.frames[k].kernel);
	cr_assert_eq(t.frames[a].dso, t.frames[k].dso, "the dso name is interned");
	stack_table_free(&t);
}

Test(stacks, frames_of_a_dso_without_symbols_are_addresses_in_it)
{
	struct stack_table t;
	stack_table_init(&t, NULL);
	struct dso lib = unreadable_dso("/nonexistent/libfoo.so", false);
	struct dso other = unreadable_dso("/nonexistent/libbar.so", false);
	struct dso kernel = unreadable_dso("[kernel]", true);
	uint32_t f1 = frame_for_address(&t, &lib, 0x1234);
	uint32_t f2 = frame_for_address(&t, &lib, 0x1238);
	uint32_t g1 = frame_for_address(&t, &other, 0x1234);
	uint32_t k1 = frame_for_address(&t, &kernel, 0xffffffff81000000ull);
	uint32_t u1 = frame_unknown(&t, 0x1234, false);
	cr_assert_eq(t.nframes, 5, "five distinct frames");
	cr_assert(f1 != f2 && f1 != g1 && f1 != u1 && g1 != u1);
	cr_assert_eq(frame_for_address(&t, &lib, 0x1234), f1);
	cr_assert_eq(frame_for_address(&t, &other, 0x1234), g1);
	cr_assert_eq(frame_for_address(&t, &kernel, 0xffffffff81000000ull), k1);
	cr_assert_eq(t.nframes, 5);

	cr_assert_null(t.frames[f1].sym);
	cr_assert_str_eq(t.frames[f1].dso, "/nonexistent/libfoo.so");
	cr_assert_eq(t.frames[f1].addr, 0x1234);
	cr_assert_eq(t.frames[f2].addr, 0x1238);
	cr_assert_not(t.frames[f1].kernel);
	cr_assert(t.frames[k1].kernel);
	cr_assert_str_eq(t.frames[k1].dso, "[kernel]");
	cr_assert_eq(t.frames[f1].path, -1);
	cr_assert_null(lib.symtab, "no file was read");
	stack_table_free(&t);
}

Test(stacks, equal_stacks_share_an_id_and_accumulate)
{
	struct stack_table t;
	stack_table_init(&t, NULL);
	uint32_t fr[4];
	for (unsigned i = 0; i < 4; i++)
		fr[i] = frame_unknown(&t, 0x400000 + i * 16, false);
	uint32_t s1 = stack_add(&t, 0, fr, 4, 1, 100);
	uint32_t s2 = stack_add(&t, 0, (uint32_t[]){ fr[0], fr[1], fr[2], fr[3] }, 4, 2, 250);
	cr_assert_eq(s1, s2);
	cr_assert_eq(t.nstacks, 1);
	cr_assert_eq(t.stacks[s1].count, 3);
	cr_assert_eq(t.stacks[s1].weight, 350);
	cr_assert_eq(t.stacks[s1].nframes, 4);
	cr_assert_arr_eq(stack_frames(&t, &t.stacks[s1]), fr, sizeof(fr));
	cr_assert_eq(t.stacks[s1].path, PATH_OTHER, "no frame matches a rule");

	/* a different order, a prefix, another collector: all different stacks */
	uint32_t reversed = stack_add(&t, 0, (uint32_t[]){ fr[3], fr[2], fr[1], fr[0] }, 4, 1, 1);
	uint32_t prefix = stack_add(&t, 0, fr, 3, 1, 1);
	uint32_t other_collector = stack_add(&t, 1, fr, 4, 5, 7);
	uint32_t single = stack_add(&t, 0, fr, 1, 1, 1);
	uint32_t ids[] = { s1, reversed, prefix, other_collector, single };
	for (unsigned i = 0; i < ARRAY_SIZE(ids); i++)
		for (unsigned j = i + 1; j < ARRAY_SIZE(ids); j++)
			cr_assert_neq(ids[i], ids[j], "stacks %u and %u", i, j);
	cr_assert_eq(t.nstacks, 5);
	cr_assert_eq(t.stacks[other_collector].collector, 1);
	cr_assert_eq(t.stacks[other_collector].count, 5);
	cr_assert_eq(t.stacks[other_collector].weight, 7);
	cr_assert_eq(t.stacks[s1].count, 3, "the other collector's samples stay apart");
	cr_assert_eq(t.stacks[prefix].nframes, 3);
	cr_assert_eq(stack_add(&t, 1, fr, 4, 1, 1), other_collector);
	cr_assert_eq(t.stacks[other_collector].count, 6);
	stack_table_free(&t);
}

/*
 * An empty stack (a sample that gave no frame at all) after other stacks.
 * As the very first stack of a table it would pass the still-NULL frame
 * arena to memcpy/memcmp (undefined behaviour that UBSan reports); the
 * report never adds one (profile.c always adds the sample's ip).
 */
Test(stacks, empty_stack_is_a_stack)
{
	struct stack_table t;
	stack_table_init(&t, NULL);
	uint32_t one = frame_unknown(&t, 0x42, false);
	uint32_t first = stack_add(&t, 2, &one, 1, 1, 1);
	uint32_t none[1] = { 0 };
	uint32_t e = stack_add(&t, 2, none, 0, 1, 10);
	cr_assert_neq(e, first);
	cr_assert_eq(stack_add(&t, 2, none, 0, 1, 10), e);
	cr_assert_eq(t.stacks[e].count, 2);
	cr_assert_eq(t.stacks[e].weight, 20);
	cr_assert_eq(t.stacks[e].nframes, 0);
	cr_assert_eq(t.stacks[e].path, PATH_OTHER);
	cr_assert_neq(stack_add(&t, 3, none, 0, 1, 10), e, "another collector's empty stack");
	cr_assert_eq(t.stacks[first].count, 1);
	stack_table_free(&t);
}

/* ---- paths, through real symbols of this binary ---- */

/* Functions whose names the rules below match; never called, only their addresses are used. */
__attribute__((noinline, used)) static int stacks_test_lock_wait(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline, used)) static int stacks_test_signal_caller(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 5 + 2;
}

__attribute__((noinline, used)) static int stacks_test_plain(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 7 + 3;
}

static int first_object_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1; /* the first object is the main program */
}

/* The address of a function of this binary in the binary's own (file) address space. */
static uint64_t file_address(const void *fn)
{
	uint64_t bias = 0;
	dl_iterate_phdr(first_object_bias, &bias);
	return (uint64_t)(uintptr_t)fn - bias;
}

Test(stacks, stack_path_is_the_path_of_the_matching_frame_nearest_the_leaf)
{
	struct path_rules *rules = path_rules_new();
	char err[256];
	cr_assert_eq(path_rules_add(rules, "stacks_test_*_wait=futex-wait", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(path_rules_add(rules, "stacks_test_signal_*=signal-deliver", err, sizeof(err)), 0, "%s", err);
	struct stack_table t;
	stack_table_init(&t, rules);
	struct dso self = { .name = "/proc/self/exe" };

	uint64_t wait_at = file_address((const void *)stacks_test_lock_wait);
	uint64_t caller_at = file_address((const void *)stacks_test_signal_caller);
	uint64_t plain_at = file_address((const void *)stacks_test_plain);
	uint32_t wait = frame_for_address(&t, &self, wait_at + 1);
	cr_assert_not_null(self.symtab, "this binary's symbols load (%d)", self.load_error);
	uint32_t caller = frame_for_address(&t, &self, caller_at + 2);
	uint32_t plain = frame_for_address(&t, &self, plain_at);
	cr_assert_str_eq(t.frames[wait].sym, "stacks_test_lock_wait");
	cr_assert_eq(t.frames[wait].addr, wait_at, "a symbol's frame is at the symbol's start");
	cr_assert_str_eq(t.frames[caller].sym, "stacks_test_signal_caller");
	cr_assert_str_eq(t.frames[plain].sym, "stacks_test_plain");
	cr_assert_eq(frame_for_address(&t, &self, wait_at), wait, "every address in a function is one frame");
	cr_assert_eq(t.frames[wait].path, PATH_FUTEX_WAIT);
	cr_assert_eq(t.frames[caller].path, PATH_SIGNAL_DELIVER);
	cr_assert_eq(t.frames[plain].path, -1);

	uint32_t unknown = frame_unknown(&t, 0xdead, false);
	uint32_t s1 = stack_add(&t, 0, (uint32_t[]){ unknown, plain, wait, caller }, 4, 1, 1);
	uint32_t s2 = stack_add(&t, 0, (uint32_t[]){ unknown, caller, wait }, 3, 1, 1);
	uint32_t s3 = stack_add(&t, 0, (uint32_t[]){ unknown, plain }, 2, 1, 1);
	uint32_t s4 = stack_add(&t, 0, (uint32_t[]){ wait }, 1, 1, 1);
	cr_assert_eq(t.stacks[s1].path, PATH_FUTEX_WAIT);
	cr_assert_eq(t.stacks[s2].path, PATH_SIGNAL_DELIVER);
	cr_assert_eq(t.stacks[s3].path, PATH_OTHER);
	cr_assert_eq(t.stacks[s4].path, PATH_FUTEX_WAIT);
	/* a signal frame ends the match: past it is the interrupted code (docs/paths.md) */
	uint32_t signal = frame_synthetic(&t, "[signal SIGUSR1] (stack from delivery)", "[signal]");
	uint32_t s5 = stack_add(&t, 0, (uint32_t[]){ plain, signal, wait }, 3, 1, 1);
	uint32_t s6 = stack_add(&t, 0, (uint32_t[]){ caller, signal, wait }, 3, 1, 1);
	uint32_t s7 = stack_add(&t, 0, (uint32_t[]){ signal, wait }, 2, 1, 1);
	cr_assert_eq(t.stacks[s5].path, PATH_OTHER, "a handler's sample took the interrupted code's path");
	cr_assert_eq(t.stacks[s6].path, PATH_SIGNAL_DELIVER, "a frame nearer the leaf than the signal frame decides");
	cr_assert_eq(t.stacks[s7].path, PATH_OTHER);
	stack_table_free(&t);
	symtab_free(self.symtab);
	path_rules_free(rules);
}

/* ---- growth ---- */

/* The frames of stack number i: a deterministic list of 2..12 frame ids below nframes, different for every i. */
static uint32_t stack_shape(uint32_t i, uint32_t nframes, uint32_t *out)
{
	uint32_t n = 2 + i % 11;
	uint32_t x = i * 2654435761u;
	for (uint32_t k = 0; k < n; k++) {
		x = x * 1103515245u + 12345u;
		out[k] = (x >> 8) % nframes;
	}
	out[0] = i % nframes; /* the first two frames are i in base nframes */
	out[1] = i / nframes;
	return n;
}

Test(stacks, growth_past_the_initial_tables_keeps_every_id)
{
	enum { UNKNOWN = 3000, PER_DSO = 1500, DSOS = 3, STACKS = 30000 };
	struct stack_table t;
	stack_table_init(&t, NULL);
	static struct dso dsos[DSOS];
	char names[DSOS][32];
	for (unsigned d = 0; d < DSOS; d++) {
		snprintf(names[d], sizeof(names[d]), "/nonexistent/lib%u.so", d);
		dsos[d] = unreadable_dso(names[d], false);
	}
	uint32_t *frame_ids = malloc((UNKNOWN + DSOS * PER_DSO) * sizeof(uint32_t));
	uint32_t nframes = 0;
	for (uint32_t i = 0; i < UNKNOWN; i++) {
		frame_ids[nframes] = frame_unknown(&t, 0x10000 + i * 8, i % 2);
		cr_assert_eq(frame_ids[nframes], nframes, "ids are dense, in order of first sight");
		nframes++;
	}
	for (uint32_t d = 0; d < DSOS; d++)
		for (uint32_t i = 0; i < PER_DSO; i++) {
			frame_ids[nframes] = frame_for_address(&t, &dsos[d], 0x1000 + i * 4);
			cr_assert_eq(frame_ids[nframes], nframes);
			nframes++;
		}
	cr_assert_eq(t.nframes, nframes);

	/* every frame again, in another order: the same ids, the same contents */
	for (uint32_t i = UNKNOWN; i-- > 0;) {
		cr_assert_eq(frame_unknown(&t, 0x10000 + i * 8, i % 2), frame_ids[i]);
		cr_assert_eq(t.frames[frame_ids[i]].addr, 0x10000 + i * 8);
	}
	for (uint32_t d = DSOS; d-- > 0;)
		for (uint32_t i = 0; i < PER_DSO; i++) {
			uint32_t id = frame_ids[UNKNOWN + d * PER_DSO + i];
			cr_assert_eq(frame_for_address(&t, &dsos[d], 0x1000 + i * 4), id);
			cr_assert_eq(t.frames[id].dso, names[d]);
			cr_assert_eq(t.frames[id].addr, 0x1000 + i * 4);
		}
	cr_assert_eq(t.nframes, nframes, "nothing was added twice");

	uint32_t *stack_ids = malloc(STACKS * sizeof(uint32_t));
	uint32_t shape[12];
	for (uint32_t i = 0; i < STACKS; i++) {
		uint32_t n = stack_shape(i, nframes, shape);
		stack_ids[i] = stack_add(&t, i % 3, shape, n, 1, i);
		cr_assert_eq(stack_ids[i], i, "stack %u is new", i);
	}
	cr_assert_eq(t.nstacks, STACKS);
	for (uint32_t i = STACKS; i-- > 0;) {
		uint32_t n = stack_shape(i, nframes, shape);
		cr_assert_eq(stack_add(&t, i % 3, shape, n, 2, 1), stack_ids[i]);
		const struct stack *s = &t.stacks[stack_ids[i]];
		cr_assert_eq(s->nframes, n);
		cr_assert_arr_eq(stack_frames(&t, s), shape, n * sizeof(uint32_t));
		cr_assert_eq(s->collector, i % 3);
		cr_assert_eq(s->count, 3);
		cr_assert_eq(s->weight, (uint64_t)i + 1);
	}
	cr_assert_eq(t.nstacks, STACKS);
	free(stack_ids);
	free(frame_ids);
	stack_table_free(&t);
}
