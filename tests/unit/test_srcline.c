/*
 * test_srcline.c: source lines and inlined calls (symbolize/srcline.c) and
 * the frames --srcline makes of them (profiler/model/stacks.c).
 *
 * The ground truth is addr2line's: for every address of inline_caller in
 * build/fixtures/inline_fixture (built -O2 -g, with two static inline
 * functions inlined into it), `addr2line -a -i -f -e FIXTURE ADDR...`
 * prints the chain of functions and file:line that source_lines_lookup()
 * must give, innermost first.  The test runs it; no line number is written
 * here.  The same must hold when the DWARF is only in the separate debug
 * file of a stripped copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/model/stacks.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

#define FIXTURE "build/fixtures/inline_fixture"
#define MAX_LEVELS 8

struct expected_level {
	char function[128];
	char file[512];
	unsigned line;
};

struct expected_address {
	uint64_t addr;
	struct expected_level levels[MAX_LEVELS];
	size_t count;
};

struct addr2line_output {
	struct expected_address *addresses;
	size_t count;
	bool want_location; /* the next line is the file:line of the last function */
};

static void take_addr2line_line(const char *line, void *context)
{
	struct addr2line_output *out = context;
	char text[1024];
	snprintf(text, sizeof(text), "%.*s", (int)strcspn(line, "\n"), line);
	if (strncmp(text, "0x", 2) == 0) {
		out->addresses[out->count++].addr = strtoull(text, NULL, 16);
		out->want_location = false;
		return;
	}
	cr_assert_gt(out->count, 0, "addr2line printed %s before an address", text);
	struct expected_address *a = &out->addresses[out->count - 1];
	if (!out->want_location) {
		cr_assert_lt(a->count, MAX_LEVELS);
		snprintf(a->levels[a->count].function, sizeof(a->levels[0].function), "%.*s",
			 (int)sizeof(a->levels[0].function) - 1, text);
		out->want_location = true;
		return;
	}
	/* "FILE:LINE", maybe followed by " (discriminator N)" */
	struct expected_level *level = &a->levels[a->count++];
	text[strcspn(text, " ")] = '\0';
	char *colon = strrchr(text, ':');
	cr_assert_not_null(colon, "addr2line location %s", text);
	*colon = '\0';
	snprintf(level->file, sizeof(level->file), "%.*s", (int)sizeof(level->file) - 1, text);
	level->line = (unsigned)strtoul(colon + 1, NULL, 10);
	out->want_location = false;
}

struct nm_range {
	const char *name;
	uint64_t start, size;
};

static void take_nm_range(const char *line, void *context)
{
	struct nm_range *range = context;
	unsigned long long start, size;
	char type, name[256];
	if (sscanf(line, "%llx %llx %c %255s", &start, &size, &type, name) == 4 && strcmp(name, range->name) == 0) {
		range->start = start;
		range->size = size;
	}
}

/* addr2line's answer for every address of a function of the fixture. */
static struct addr2line_output addr2line_function(const char *function)
{
	struct nm_range range = { .name = function };
	each_output_line("nm -S " FIXTURE, take_nm_range, &range);
	cr_assert_gt(range.size, 0, "nm finds no %s in %s; run `make fixtures`", function, FIXTURE);

	struct strbuf command = { 0 };
	sb_addstr(&command, "addr2line -a -i -f -e " FIXTURE);
	for (uint64_t a = range.start; a < range.start + range.size; a++)
		sb_addf(&command, " 0x%llx", (unsigned long long)a);
	struct addr2line_output out = { .addresses = calloc(range.size, sizeof(struct expected_address)) };
	each_output_line(command.buf, take_addr2line_line, &out);
	sb_free(&command);
	cr_assert_eq(out.count, range.size);
	return out;
}

static void expect_levels(const struct expected_address *expected, const struct source_frame *levels, size_t n,
			  const char *file)
{
	unsigned long long addr = (unsigned long long)expected->addr;
	cr_assert_eq(n, expected->count, "%s %#llx: %zu levels, addr2line has %zu", file, addr, n,
		     expected->count);
	for (size_t i = 0; i < n; i++) {
		const struct expected_level *want = &expected->levels[i];
		cr_expect_str_eq(levels[i].function ? levels[i].function : "??", want->function, "%#llx level %zu",
				 addr, i);
		cr_expect_str_eq(levels[i].file ? levels[i].file : "??", want->file, "%#llx level %zu", addr, i);
		cr_expect_eq(levels[i].line, want->line, "%#llx level %zu: line %u, addr2line %u", addr, i,
			     levels[i].line, want->line);
		cr_expect_eq(levels[i].inlined, i + 1 < n, "%#llx level %zu: inlined flag", addr, i);
	}
}

/* Compare every address of inline_caller in file with addr2line; returns the deepest chain seen. */
static size_t expect_every_address_like_addr2line(const char *file)
{
	struct addr2line_output expected = addr2line_function("inline_caller");
	struct source_lines *sl = source_lines_new();
	struct dso dso = { .name = file };
	size_t deepest = 0;
	for (size_t i = 0; i < expected.count; i++) {
		struct source_frame levels[MAX_LEVELS];
		size_t n = source_lines_lookup(sl, &dso, expected.addresses[i].addr, levels, MAX_LEVELS);
		expect_levels(&expected.addresses[i], levels, n, file);
		deepest = n > deepest ? n : deepest;
	}
	source_lines_free(sl);
	symtab_free(dso.symtab);
	free(expected.addresses);
	return deepest;
}

Test(srcline, every_address_of_the_caller_has_addr2lines_inlined_chain)
{
	size_t deepest = expect_every_address_like_addr2line(FIXTURE);
	cr_expect_geq(deepest, 3, "no address is two inlined calls deep (was the fixture built with -O2?)");
}

TEMP_DIR_SUITE(srcline_debug_file);

/* The stripped copy has no DWARF of its own: the lines come from the debug file its link names. */
Test(srcline_debug_file, stripped_copy_reads_the_dwarf_of_its_debug_file)
{
	char *root = path_join(dir, "root"), *program = path_join(dir, "program");
	char *debug = path_join(dir, "inline_fixture.debug");
	make_directories(root);
	copy_file_with(FIXTURE ".linked", program, NULL, 0);
	copy_file_with(FIXTURE ".debug", debug, NULL, 0);
	symbolize_set_debug_dirs(root);
	size_t deepest = expect_every_address_like_addr2line(program);
	cr_expect_geq(deepest, 3);
	free(root);
	free(program);
	free(debug);
}

Test(srcline, no_dwarf_no_lines)
{
	struct source_lines *sl = source_lines_new();
	struct dso stripped = { .name = FIXTURE ".stripped" }, missing = { .name = "/nonexistent/file" };
	struct dso kernel = { .name = "[kernel]", .is_kernel = true, .load_tried = true };
	struct source_frame levels[MAX_LEVELS];
	struct nm_range range = { .name = "inline_caller" };
	each_output_line("nm -S " FIXTURE, take_nm_range, &range);
	symbolize_set_debug_dirs("/nonexistent");
	cr_expect_eq(source_lines_lookup(sl, &stripped, range.start, levels, MAX_LEVELS), 0);
	cr_expect_eq(source_lines_lookup(sl, &missing, range.start, levels, MAX_LEVELS), 0);
	cr_expect_eq(source_lines_lookup(sl, &kernel, range.start, levels, MAX_LEVELS), 0);
	source_lines_free(sl);
	symtab_free(stripped.symtab);
	symtab_free(missing.symtab);
}

/* With --srcline a stack gets a frame per inlined call, innermost first, each with its line. */
Test(srcline, stacks_expand_inlined_calls_into_frames)
{
	struct addr2line_output expected = addr2line_function("inline_caller");
	const struct expected_address *deep = NULL;
	for (size_t i = 0; i < expected.count && !deep; i++)
		if (expected.addresses[i].count >= 3)
			deep = &expected.addresses[i];
	cr_assert_not_null(deep, "no address two inlined calls deep");

	struct stack_table t;
	stack_table_init(&t, NULL);
	stack_table_enable_srcline(&t);
	struct dso dso = { .name = FIXTURE };
	uint32_t leaf = frame_for_address(&t, &dso, deep->addr);
	cr_expect_eq(frame_for_address(&t, &dso, deep->addr), leaf, "the address is not cached");
	uint32_t id = stack_add(&t, 0, &leaf, 1, 1, 1);
	const struct stack *s = &t.stacks[id];
	cr_assert_eq(s->nframes, deep->count);
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct frame *f = &t.frames[stack_frames(&t, s)[i]];
		cr_expect_str_eq(f->sym, deep->levels[i].function);
		cr_expect_str_eq(f->srcfile, deep->levels[i].file);
		cr_expect_eq(f->line, deep->levels[i].line);
		cr_expect_eq(f->inlined, i + 1 < s->nframes);
		cr_expect_eq(f->inlined_into, 0, "a chain link in a stack");
	}
	cr_expect_neq(stack_frames(&t, s)[0], leaf, "the chain link itself in the stack");
	cr_expect_eq(stack_add(&t, 0, &leaf, 1, 1, 1), id, "the same stack again is another stack");
	cr_expect_eq(t.stacks[id].count, 2);

	/* Without --srcline the address is one frame of the function compiled out of line. */
	struct stack_table plain;
	stack_table_init(&plain, NULL);
	uint32_t only = frame_for_address(&plain, &dso, deep->addr);
	cr_expect_str_eq(plain.frames[only].sym, deep->levels[deep->count - 1].function);
	cr_expect_null(plain.frames[only].srcfile);
	uint32_t plain_stack = stack_add(&plain, 0, &only, 1, 1, 1);
	cr_expect_eq(plain.stacks[plain_stack].nframes, 1);
	stack_table_free(&plain);
	stack_table_free(&t);
	symtab_free(dso.symtab);
	free(expected.addresses);
}

static bool same_level(const struct expected_level *a, const struct expected_level *b)
{
	return strcmp(a->function, b->function) == 0 && strcmp(a->file, b->file) == 0 && a->line == b->line;
}

/* One stack of the address's frames with --srcline; returns its id. */
static uint32_t stack_of_address(struct stack_table *t, struct dso *dso, uint64_t addr)
{
	uint32_t frame = frame_for_address(t, dso, addr);
	return stack_add(t, 0, &frame, 1, 1, 1);
}

/*
 * inline_square is inlined into two callers: where addr2line puts an
 * address of each at the same innermost function and line, the two stacks
 * share that frame (the functions table counts it once) and differ in the
 * callers below it.
 */
Test(srcline, an_inline_function_at_two_call_sites_is_one_frame)
{
	struct addr2line_output first = addr2line_function("inline_caller");
	struct addr2line_output second = addr2line_function("inline_other_caller");
	const struct expected_address *a = NULL, *b = NULL;
	for (size_t i = 0; i < first.count && !a; i++)
		for (size_t j = 0; j < second.count && !a; j++)
			if (first.addresses[i].count >= 2 && second.addresses[j].count >= 2 &&
			    same_level(&first.addresses[i].levels[0], &second.addresses[j].levels[0])) {
				a = &first.addresses[i];
				b = &second.addresses[j];
			}
	cr_assert_not_null(a, "addr2line shows no inlined line shared by both callers");

	struct stack_table t;
	stack_table_init(&t, NULL);
	stack_table_enable_srcline(&t);
	struct dso dso = { .name = FIXTURE };
	uint32_t a_stack = stack_of_address(&t, &dso, a->addr);
	uint32_t b_stack = stack_of_address(&t, &dso, b->addr); /* before taking pointers: it may move the table */
	const struct stack *sa = &t.stacks[a_stack], *sb = &t.stacks[b_stack];
	uint32_t a_leaf = stack_frames(&t, sa)[0], a_root = stack_frames(&t, sa)[sa->nframes - 1];
	cr_expect_eq(stack_frames(&t, sb)[0], a_leaf, "%s:%u is two frames", a->levels[0].function, a->levels[0].line);
	cr_expect_neq(stack_frames(&t, sb)[sb->nframes - 1], a_root, "both callers are one frame");
	cr_expect_str_eq(t.frames[stack_frames(&t, sb)[sb->nframes - 1]].sym, "inline_other_caller");
	stack_table_free(&t);
	symtab_free(dso.symtab);
	free(first.addresses);
	free(second.addresses);
}
