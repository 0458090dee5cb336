/*
 * test_rate_bound.c: the windowed rate bound's decision and how it links
 * the specs (include/sigprof/kernel/rate_bound.h).  The switching itself runs on
 * real events in tests/integration/test_futex.c (sparse waits recorded
 * exactly, a fast caller sampled with weights).
 */
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/perf.h"
#include "sigprof/kernel/rate_bound.h"

Test(rate_bound, the_rate_is_hits_over_the_window)
{
	const uint64_t ms = 1000 * 1000;
	/* 50000/s over 10 ms: 500 hits are at the bound, 501 above it */
	cr_assert_not(rate_bound_above(500, 10 * ms, 50000));
	cr_assert(rate_bound_above(501, 10 * ms, 50000));
	/* a window that ran long (the recorder was late) is measured over its real length */
	cr_assert_not(rate_bound_above(1000, 20 * ms, 50000));
	cr_assert(rate_bound_above(1001, 20 * ms, 50000));
	/* two calls 10 us apart are a burst, not a rate: far under any bound over a window */
	cr_assert_not(rate_bound_above(2, 10 * ms, 1000));
	cr_assert_not(rate_bound_above(0, 0, 1));
	/* no overflow at the extremes */
	cr_assert(rate_bound_above(UINT64_MAX, UINT64_MAX / 2, 1000000000));
	cr_assert_not(rate_bound_above(UINT64_MAX / 4, UINT64_MAX, 1000000000));
}

Test(rate_bound, link_marks_the_gate_and_holds_the_alternate_back)
{
	struct event_list events = { 0 };
	for (int i = 0; i < 3; i++) {
		struct event_spec *spec = event_list_add(&events, "syscalls:sys_enter_futex", "futex");
		spec->attr.disabled = 1;
		spec->attr.enable_on_exec = 1;
		cr_assert_eq(spec->rate_alternate, -1, "no alternate unless linked");
		cr_assert_eq(spec->rate_meter, -1);
	}
	rate_bound_link(&events, 0, 2, 1, 50000);
	cr_assert_eq(events.specs[0].rate_bound_hz, 50000);
	cr_assert_eq(events.specs[0].rate_meter, 2);
	cr_assert_eq(events.specs[0].rate_alternate, 1);
	cr_assert_eq(events.specs[0].attr.enable_on_exec, 1, "the gate records from exec");
	cr_assert_eq(events.specs[1].attr.disabled, 1);
	cr_assert_eq(events.specs[1].attr.enable_on_exec, 0, "the alternate waits for a window above the bound");
	cr_assert_eq(events.specs[2].attr.enable_on_exec, 1, "the meter counts from exec");
	cr_assert_eq(events.specs[1].rate_bound_hz, 0);
	event_list_free(&events);
}

/*
 * rate_bound_add: the gate's alternate "#sampled" (frequency mode at the
 * bound, held back) and meter "#count" (a counter); a second tracepoint
 * (an exit, a lock's end) shares the first's meter and gets no meter of its own.
 */
Test(rate_bound, add_makes_the_alternate_and_the_meter_and_shares_a_meter)
{
	struct event_list events = { 0 };
	struct event_spec *spec = event_list_add(&events, "lock:contention_begin", "lock");
	spec->attr.sample_period = 1;
	spec->attr.sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	size_t meter = rate_bound_add(&events, 0, -1, 1000);
	cr_assert_eq(events.count, 3);
	cr_assert_str_eq(events.specs[1].name, "lock:contention_begin#sampled");
	cr_assert_str_eq(events.specs[1].collector, "lock");
	cr_assert_eq(events.specs[1].attr.freq, 1);
	cr_assert_eq(events.specs[1].attr.sample_freq, 1000, "the bound (under perf_event_max_sample_rate)");
	cr_assert_eq(events.specs[1].attr.disabled, 1);
	cr_assert_eq(meter, 2);
	cr_assert_str_eq(events.specs[2].name, "lock:contention_begin#count");
	cr_assert_eq(events.specs[2].attr.sample_period, 0, "the meter is a counter");
	cr_assert_eq(events.specs[2].attr.sample_type & PERF_SAMPLE_CALLCHAIN, 0);
	cr_assert_eq(events.specs[0].rate_meter, 2);
	cr_assert_eq(events.specs[0].rate_alternate, 1);
	cr_assert_eq(events.specs[0].rate_bound_hz, 1000);
	event_list_add(&events, "lock:contention_end", "lock");
	cr_assert_eq(rate_bound_add(&events, 3, (int)meter, 1000), meter);
	cr_assert_eq(events.count, 5, "an alternate for the end, no meter");
	cr_assert_str_eq(events.specs[4].name, "lock:contention_end#sampled");
	cr_assert_eq(events.specs[3].rate_meter, 2);
	cr_assert_eq(events.specs[3].rate_alternate, 4);
	size_t len;
	cr_assert_str_eq(rate_bound_suffix("lock:contention_end#sampled", &len), "sampled");
	cr_assert_eq(len, strlen("lock:contention_end"));
	cr_assert_null(rate_bound_suffix("lock:contention_end", &len));
	cr_assert_eq(len, strlen("lock:contention_end"));
	event_list_free(&events);
}

/* rate_bound_add_sampled: the alternate samples at its own frequency; the bound is the one given, not capped. */
Test(rate_bound, the_alternate_may_sample_below_the_bound)
{
	struct event_list events = { 0 };
	struct event_spec *spec = event_list_add(&events, "syscalls:sys_enter_futex", "futex");
	spec->attr.sample_period = 1;
	size_t meter = rate_bound_add_sampled(&events, 0, -1, 50000, 1000);
	cr_assert_eq(events.count, 3);
	cr_assert_eq(events.specs[1].attr.freq, 1);
	cr_assert_eq(events.specs[1].attr.sample_freq, 1000, "the alternate's own frequency");
	cr_assert_eq(events.specs[0].rate_bound_hz, 50000, "the bound as given");
	cr_assert_eq(events.specs[0].rate_meter, (int)meter);
	cr_assert_eq(events.specs[0].rate_alternate, 1);
	event_list_free(&events);
}

/*
 * rate_bound_add_stack_copies: beside a record with a key (and a filter), "#stack" copies the whole user stack
 * with DWARF at every hit under the bound (the record is the meter here) and "#stack-sampled" at
 * STACK_COPY_SAMPLED_HZ above it, held back until then; both with the record's filter, the kernel's frames only
 * when asked.
 */
Test(rate_bound, stack_copies_are_a_gate_and_a_sampled_side_with_the_records_filter)
{
	struct event_list events = { 0 };
	struct event_spec *spec = event_list_add(&events, "signal:signal_generate", "signal");
	spec->attr.type = PERF_TYPE_TRACEPOINT;
	spec->attr.config = 42;
	spec->attr.sample_period = 1;
	spec->tracepoint_filter = strdup("code != -2");
	struct record_options opts = { .frequency = 99 };
	size_t copy = rate_bound_add_stack_copies(&events, &opts, 0, 0, RATE_BOUND_STACK_SUFFIX, 8192,
						  STACK_COPY_BOUND_HZ, false);
	cr_assert_eq(copy, 1);
	cr_assert_eq(events.count, 3);
	const struct event_spec *c = &events.specs[1], *s = &events.specs[2];
	cr_assert_str_eq(c->name, "signal:signal_generate#stack");
	cr_assert_str_eq(s->name, "signal:signal_generate#stack-sampled");
	cr_assert_eq(c->attr.config, 42);
	cr_assert_eq(c->attr.sample_period, 1, "every hit under the bound");
	cr_assert_eq(c->attr.sample_stack_user, 8192);
	cr_assert(c->attr.sample_type & PERF_SAMPLE_STACK_USER);
	cr_assert(c->attr.sample_type & PERF_SAMPLE_RAW);
	cr_assert_eq(c->attr.exclude_callchain_kernel, 1, "no kernel frames unless asked");
	cr_assert_eq(c->rate_meter, 0, "the record counts the hits");
	cr_assert_eq(c->rate_alternate, 2);
	cr_assert_eq(c->rate_bound_hz, STACK_COPY_BOUND_HZ);
	cr_assert_eq(s->attr.freq, 1);
	cr_assert_eq(s->attr.sample_freq, STACK_COPY_SAMPLED_HZ);
	cr_assert_eq(s->attr.disabled, 1, "held back until a window is above the bound");
	cr_assert_eq(s->attr.sample_stack_user, 8192);
	cr_assert_str_eq(c->tracepoint_filter, "code != -2");
	cr_assert_str_eq(s->tracepoint_filter, "code != -2");
	size_t len;
	cr_assert(rate_bound_stack_copy_suffix(rate_bound_suffix(c->name, &len)));
	cr_assert(rate_bound_stack_copy_suffix(rate_bound_suffix(s->name, &len)));
	cr_assert_not(rate_bound_stack_copy_suffix(rate_bound_suffix("signal:signal_generate#kernel", &len)));
	cr_assert_not(rate_bound_stack_copy_suffix(NULL));
	event_list_free(&events);
}
