/*
 * test_call_graph.c: how a collector's events get their stacks
 * (collector.h): the user's --call-graph over each collector's default mode
 * and DWARF stack size, and the perf_event_attr bits each mode asks for.
 */
#include <linux/perf_event.h>

#include <criterion/criterion.h>

#include "sigprof/model/collector.h"
#include "sigprof/kernel/sample.h"

/* What parse_record_args() leaves when --call-graph is absent, or present with mode and size. */
static struct record_options options(bool chosen, enum call_graph_mode mode, uint32_t size)
{
	struct record_options o = { .frequency = 4000, .call_graph = mode, .call_graph_chosen = chosen,
				    .stack_user_size = size };
	return o;
}

Test(call_graph, collector_default_applies_without_the_option)
{
	struct record_options o = options(false, CALL_GRAPH_FP, DEFAULT_STACK_USER_SIZE);
	cr_assert_eq(call_graph_for(&o, CALL_GRAPH_DWARF), CALL_GRAPH_DWARF);
	cr_assert_eq(call_graph_for(&o, CALL_GRAPH_FP), CALL_GRAPH_FP);
	cr_assert_eq(stack_user_size_for(&o, WAIT_STACK_USER_SIZE), WAIT_STACK_USER_SIZE);
}

Test(call_graph, the_option_overrides_every_collector)
{
	const enum call_graph_mode modes[] = { CALL_GRAPH_FP, CALL_GRAPH_NONE, CALL_GRAPH_DWARF };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct record_options o = options(true, modes[i], 1024);
		cr_assert_eq(call_graph_for(&o, CALL_GRAPH_DWARF), modes[i]);
		cr_assert_eq(call_graph_for(&o, CALL_GRAPH_FP), modes[i]);
		cr_assert_eq(stack_user_size_for(&o, WAIT_STACK_USER_SIZE), 1024);
	}
}

Test(call_graph, fp_and_none_copy_no_user_stack)
{
	struct perf_event_attr attr;
	struct record_options o = options(true, CALL_GRAPH_FP, DEFAULT_STACK_USER_SIZE);
	sampling_attr_init(&attr, &o, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	cr_assert(attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	cr_assert_eq(attr.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER), 0);
	cr_assert_eq(attr.exclude_callchain_user, 0, "fp: the user frames are the kernel's walk");
	o = options(true, CALL_GRAPH_NONE, DEFAULT_STACK_USER_SIZE);
	sampling_attr_init(&attr, &o, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	cr_assert_eq(attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER), 0);
}

Test(call_graph, dwarf_copies_registers_and_stack_and_keeps_kernel_frames)
{
	const uint32_t sizes[] = { 8, WAIT_STACK_USER_SIZE, DEFAULT_STACK_USER_SIZE, MAX_STACK_USER_SIZE };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct perf_event_attr attr;
		struct record_options o = options(true, CALL_GRAPH_DWARF, sizes[i]);
		sampling_attr_init(&attr, &o, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
		uint64_t want = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		cr_assert_eq(attr.sample_type & want, want);
		cr_assert_eq(attr.exclude_callchain_user, 1, "the stack copy replaces the frame-pointer walk");
		cr_assert_eq(attr.exclude_callchain_kernel, 0);
		cr_assert_eq(attr.sample_stack_user, sizes[i]);
		cr_assert_eq(attr.sample_regs_user, SP_UNWIND_REGS_MASK);
		/* the kernel refuses sizes that are not a multiple of 8 or reach USHRT_MAX */
		cr_assert_eq(attr.sample_stack_user % 8, 0);
		cr_assert_lt(attr.sample_stack_user, 65535);
	}
}

Test(call_graph, a_key_copies_three_registers_and_its_whole_copy_all)
{
	struct record_options o = options(false, CALL_GRAPH_FP, DEFAULT_STACK_USER_SIZE);
	struct record_options key = stack_key_options(&o, WAIT_STACK_USER_SIZE, KEY_STACK_USER_SIZE);
	struct perf_event_attr attr;
	sampling_attr_init(&attr, &key, PERF_TYPE_TRACEPOINT, 1);
	cr_assert_eq(attr.sample_stack_user, KEY_STACK_USER_SIZE);
	cr_assert_eq(attr.sample_regs_user, SP_KEY_REGS_MASK, "a key: IP, SP and BP");
	cr_assert_eq(__builtin_popcountll(attr.sample_regs_user), 3);
	/* a signal's key is shorter: a libc wrapper and its caller */
	key = stack_key_options(&o, CPU_SIGNAL_STACK_USER_SIZE, SIGNAL_KEY_STACK_USER_SIZE);
	sampling_attr_init(&attr, &key, PERF_TYPE_TRACEPOINT, 1);
	cr_assert_eq(attr.sample_stack_user, SIGNAL_KEY_STACK_USER_SIZE);
	cr_assert_eq(attr.sample_regs_user, SP_KEY_REGS_MASK);
	/* the whole copies beside it (rate_bound_add_stack_copies) start from the recording's options */
	o.call_graph = CALL_GRAPH_DWARF;
	sampling_attr_init(&attr, &o, PERF_TYPE_TRACEPOINT, 1);
	cr_assert_eq(attr.sample_regs_user, SP_UNWIND_REGS_MASK);
	/* --call-graph dwarf chosen: no keys, every register */
	o = options(true, CALL_GRAPH_DWARF, 1024);
	key = stack_key_options(&o, WAIT_STACK_USER_SIZE, SIGNAL_KEY_STACK_USER_SIZE);
	sampling_attr_init(&attr, &key, PERF_TYPE_TRACEPOINT, 1);
	cr_assert_eq(attr.sample_regs_user, SP_UNWIND_REGS_MASK);
	cr_assert_eq(attr.sample_stack_user, 1024);
}
