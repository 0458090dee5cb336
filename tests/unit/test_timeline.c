/*
 * test_timeline.c: the timeline's state machine and wall-clock profile
 * (profiler/model/timeline.c through sigprof/model/timeline.h).
 *
 * Each test feeds a synthetic sequence of events of one or two threads,
 * times in ns chosen so that every span can be worked out by hand in the
 * comment beside its check; the invariant checked everywhere: a thread's
 * state totals add up to its life (end - start), and so do its spans and
 * its wall-clock entries.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/model/stacks.h"
#include "sigprof/model/timeline.h"

#define PID 10
#define TID 11
#define OTHER 12

static struct stack_table stacks;
static uint32_t sleep_stack, futex_stack, lock_stack, work_stack, handler_stack;

/* A stack of one kernel frame named name (leaf) over a user frame "main". */
static uint32_t kernel_stack(const char *name)
{
	uint32_t frames[2] = { frame_synthetic(&stacks, name, "[kernel.kallsyms]"), frame_synthetic(&stacks, "main", "[test]") };
	stacks.frames[frames[0]].kernel = true;
	return stack_add(&stacks, 0, frames, 2, 0, 0);
}

static uint32_t user_stack(const char *name)
{
	uint32_t frames[2] = { frame_synthetic(&stacks, name, "[test]"), frame_synthetic(&stacks, "main", "[test]") };
	return stack_add(&stacks, 0, frames, 2, 0, 0);
}

static void setup(void)
{
	stack_table_init(&stacks, NULL);
	sleep_stack = kernel_stack("do_nanosleep");
	futex_stack = kernel_stack("futex_wait_queue");
	lock_stack = kernel_stack("rwsem_down_read_slowpath");
	work_stack = user_stack("work");
	handler_stack = user_stack("on_usr1");
}

static void teardown(void)
{
	stack_table_free(&stacks);
}

TestSuite(timeline, .init = setup, .fini = teardown);

static void ev(struct timeline *t, enum timeline_event_kind kind, uint64_t time, uint32_t tid)
{
	struct timeline_event e = { .kind = kind, .time = time, .pid = PID, .tid = tid, .stack = TIMELINE_NO_STACK };
	timeline_event(t, &e);
}

static void switch_out(struct timeline *t, uint64_t time, uint32_t tid, bool sleeps, uint32_t stack)
{
	struct timeline_event e = { .kind = TIMELINE_EVENT_SWITCH_OUT, .time = time, .pid = PID, .tid = tid,
				    .stack = stack, .sleeps = sleeps };
	timeline_event(t, &e);
}

static void cpu_sample(struct timeline *t, uint64_t time, uint32_t tid, uint32_t stack, uint64_t period)
{
	struct timeline_event e = { .kind = TIMELINE_EVENT_CPU_SAMPLE, .time = time, .pid = PID, .tid = tid,
				    .stack = stack, .period = period };
	timeline_event(t, &e);
}

/* The thread of tid, after finish. */
static size_t thread_of(const struct timeline *t, uint32_t tid)
{
	for (size_t i = 0; i < timeline_thread_count(t); i++)
		if (timeline_thread(t, i)->tid == tid)
			return i;
	cr_assert_fail("no thread %u", tid);
	return 0;
}

/* The invariant: states, spans and wall entries all add up to the thread's life. */
static void expect_tiles(const struct timeline *t, size_t i)
{
	const struct timeline_thread *th = timeline_thread(t, i);
	uint64_t states = 0, spans = 0, wall = 0;
	for (int s = 0; s < TIMELINE_STATES; s++)
		states += th->ns[s];
	size_t n;
	const struct timeline_span *sp = timeline_spans(t, i, &n);
	for (size_t k = 0; k < n; k++) {
		cr_expect_lt(sp[k].start, sp[k].end, "span %zu is empty or backwards", k);
		if (k)
			cr_expect_eq(sp[k - 1].end, sp[k].start, "spans %zu and %zu do not touch", k - 1, k);
		spans += sp[k].end - sp[k].start;
	}
	for (size_t k = 0; k < timeline_wall_count(t); k++)
		if (timeline_wall_entry(t, k)->thread == i)
			wall += timeline_wall_entry(t, k)->ns;
	cr_expect_eq(states, th->end - th->start, "states %llu, life %llu", (unsigned long long)states,
		     (unsigned long long)(th->end - th->start));
	if (n) /* kept (keep_spans) */
		cr_expect_eq(spans, states, "spans %llu, states %llu", (unsigned long long)spans, (unsigned long long)states);
	cr_expect_eq(wall, states, "wall %llu, states %llu", (unsigned long long)wall, (unsigned long long)states);
}

static uint64_t wall_ns(const struct timeline *t, size_t thread, uint8_t state, uint32_t stack)
{
	uint64_t ns = 0;
	for (size_t k = 0; k < timeline_wall_count(t); k++) {
		const struct timeline_wall *w = timeline_wall_entry(t, k);
		if (w->thread == thread && w->state == state && w->stack == stack)
			ns += w->ns;
	}
	return ns;
}

Test(timeline, run_sleep_wake_run)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	ev(t, TIMELINE_EVENT_SWITCH_IN, 1000, TID);       /* running from 1000 */
	cpu_sample(t, 2000, TID, work_stack, 1000);
	switch_out(t, 3000, TID, true, sleep_stack);      /* blocked (sleep) from 3000 */
	ev(t, TIMELINE_EVENT_WAKING, 8000, TID);          /* runnable from 8000 */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 8500, TID);       /* running from 8500 */
	ev(t, TIMELINE_EVENT_EXIT, 9000, TID);
	timeline_finish(t, 10000);
	size_t i = thread_of(t, TID);
	const struct timeline_thread *th = timeline_thread(t, i);
	cr_expect_eq(th->start, 1000);
	cr_expect_eq(th->end, 9000, "the exit ends it, not the recording");
	cr_expect(th->exited);
	cr_expect_eq(th->ns[TIMELINE_RUNNING], 2000 + 500);   /* 1000..3000, 8500..9000 */
	cr_expect_eq(th->ns[TIMELINE_BLOCKED], 5000);         /* 3000..8000 */
	cr_expect_eq(th->ns[TIMELINE_RUNNABLE], 500);         /* 8000..8500 */
	cr_expect_eq(th->cause_ns[TIMELINE_CAUSE_SLEEP], 5000);
	size_t n;
	const struct timeline_span *s = timeline_spans(t, i, &n);
	cr_assert_eq(n, 4);
	cr_expect_eq(s[0].stack, work_stack, "a running span's stack is its first sample's");
	cr_expect_eq(s[1].state, TIMELINE_BLOCKED);
	cr_expect_eq(s[1].cause, TIMELINE_CAUSE_SLEEP);
	cr_expect_eq(s[1].stack, sleep_stack);
	cr_expect_eq(s[2].state, TIMELINE_RUNNABLE);
	cr_expect(s[2].woken);
	cr_expect_eq(s[2].stack, sleep_stack, "a woken thread waits to run where it slept");
	cr_expect_eq(wall_ns(t, i, TIMELINE_RUNNING, work_stack), 2000);
	cr_expect_eq(wall_ns(t, i, TIMELINE_RUNNING, TIMELINE_NO_STACK), 500, "no sample fell in the last run");
	cr_expect_eq(wall_ns(t, i, TIMELINE_BLOCKED, sleep_stack), 5000);
	expect_tiles(t, i);
	timeline_free(t);
}

Test(timeline, running_time_split_by_sample_periods)
{
	struct timeline *t = timeline_new(&stacks, NULL);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, TID);
	cpu_sample(t, 100, TID, work_stack, 3);
	cpu_sample(t, 200, TID, handler_stack, 1);
	switch_out(t, 4000, TID, false, work_stack); /* preempted: runnable */
	timeline_finish(t, 5000);
	size_t i = thread_of(t, TID);
	cr_expect_eq(wall_ns(t, i, TIMELINE_RUNNING, work_stack), 3000);   /* 4000 * 3/4 */
	cr_expect_eq(wall_ns(t, i, TIMELINE_RUNNING, handler_stack), 1000); /* 4000 * 1/4 */
	cr_expect_eq(timeline_thread(t, i)->ns[TIMELINE_RUNNABLE], 1000, "runnable to the recording's end");
	cr_expect(!timeline_thread(t, i)->exited);
	expect_tiles(t, i);
	timeline_free(t);
}

Test(timeline, futex_word_and_causes_from_stacks)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, TID);
	struct timeline_event futex = { .kind = TIMELINE_EVENT_SWITCH_OUT, .time = 1000, .pid = PID, .tid = TID,
					.stack = futex_stack, .sleeps = true, .has_word = true, .word = 0x1234 };
	timeline_event(t, &futex);                        /* blocked futex 0x1234, 1000..3000 */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 3000, TID);       /* no waking seen: blocked to the switch-in */
	switch_out(t, 4000, TID, true, lock_stack);       /* blocked kernel lock, 4000..6000 */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 6000, TID);
	switch_out(t, 7000, TID, true, futex_stack);      /* futex frames without a word, 7000..8000 */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 8000, TID);
	switch_out(t, 9000, TID, true, work_stack);       /* no rule matches: other, 9000..9500 */
	timeline_finish(t, 9500);
	size_t i = thread_of(t, TID);
	const struct timeline_thread *th = timeline_thread(t, i);
	cr_expect_eq(th->cause_ns[TIMELINE_CAUSE_FUTEX], 2000 + 1000);
	cr_expect_eq(th->cause_ns[TIMELINE_CAUSE_LOCK], 2000);
	cr_expect_eq(th->cause_ns[TIMELINE_CAUSE_OTHER], 500);
	size_t n;
	const struct timeline_span *s = timeline_spans(t, i, &n);
	cr_assert_eq(n, 8);
	cr_expect_eq(s[1].detail, 0x1234);
	cr_expect_eq(s[5].cause, TIMELINE_CAUSE_FUTEX);
	cr_expect_eq(s[5].detail, 0);
	expect_tiles(t, i);
	timeline_free(t);
}

Test(timeline, signal_handler_with_a_preemption_inside)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, TID);
	struct timeline_event deliver = { .kind = TIMELINE_EVENT_HANDLER_ENTER, .time = 1000, .pid = PID, .tid = TID,
					  .stack = TIMELINE_NO_STACK, .signal = 10 };
	timeline_event(t, &deliver);                       /* handler from 1000 */
	cpu_sample(t, 1500, TID, handler_stack, 1);
	switch_out(t, 2000, TID, false, handler_stack);    /* runnable in the handler, 2000..2500 */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 2500, TID);        /* back in the handler, 2500..4000 */
	ev(t, TIMELINE_EVENT_HANDLER_EXIT, 4000, TID);     /* running again */
	timeline_finish(t, 5000);
	size_t i = thread_of(t, TID);
	const struct timeline_thread *th = timeline_thread(t, i);
	cr_expect_eq(th->ns[TIMELINE_SIGNAL_HANDLER], 1000 + 1500);
	cr_expect_eq(th->ns[TIMELINE_RUNNABLE], 500);
	cr_expect_eq(th->ns[TIMELINE_RUNNING], 1000 + 1000);
	size_t n;
	const struct timeline_span *s = timeline_spans(t, i, &n);
	cr_assert_eq(n, 5);
	cr_expect_eq(s[1].signal, 10);
	cr_expect_eq(s[2].state, TIMELINE_RUNNABLE);
	cr_expect_eq(s[2].signal, 10, "preempted inside the handler: the span says which handler");
	cr_expect_eq(s[4].signal, 0);
	cr_expect_eq(wall_ns(t, i, TIMELINE_SIGNAL_HANDLER, handler_stack), 1000);
	expect_tiles(t, i);
	timeline_free(t);
}

Test(timeline, record_after_sample_and_sample_after_record_merge)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, TID);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 10, TID);          /* the SWITCH record after the sample: nothing new */
	switch_out(t, 1000, TID, true, sleep_stack);
	switch_out(t, 1010, TID, true, TIMELINE_NO_STACK); /* its record: nothing new */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 2000, TID);
	/* the record first, then the sample with the stack: the span gets the stack and cause */
	switch_out(t, 3000, TID, true, TIMELINE_NO_STACK);
	switch_out(t, 3005, TID, true, futex_stack);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 4000, TID);
	timeline_finish(t, 4000);
	size_t i = thread_of(t, TID);
	size_t n;
	const struct timeline_span *s = timeline_spans(t, i, &n);
	cr_assert_eq(n, 4);
	cr_expect_eq(s[1].start, 1000);
	cr_expect_eq(s[1].end, 2000);
	cr_expect_eq(s[3].start, 3000);
	cr_expect_eq(s[3].stack, futex_stack);
	cr_expect_eq(s[3].cause, TIMELINE_CAUSE_FUTEX);
	expect_tiles(t, i);
	timeline_free(t);
}

Test(timeline, lost_switch_in_recovered_by_a_sample_and_fork_starts_runnable)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	ev(t, TIMELINE_EVENT_FORK, 100, OTHER);            /* runnable from its birth */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 300, OTHER);
	switch_out(t, 400, OTHER, true, sleep_stack);
	cpu_sample(t, 900, OTHER, work_stack, 1);          /* no switch-in recorded: running from 900 */
	struct timeline_event dead = { .kind = TIMELINE_EVENT_SWITCH_OUT, .time = 1000, .pid = PID, .tid = OTHER,
				       .stack = TIMELINE_NO_STACK, .dead = true };
	timeline_event(t, &dead);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 1100, OTHER);      /* after its death: ignored */
	timeline_finish(t, 2000);
	size_t i = thread_of(t, OTHER);
	const struct timeline_thread *th = timeline_thread(t, i);
	cr_expect_eq(th->start, 100);
	cr_expect_eq(th->end, 1000);
	cr_expect_eq(th->ns[TIMELINE_RUNNABLE], 200);
	cr_expect_eq(th->ns[TIMELINE_BLOCKED], 500);
	cr_expect_eq(th->ns[TIMELINE_RUNNING], 100 + 100);
	expect_tiles(t, i);
	timeline_free(t);
}

Test(timeline, threads_sorted_and_wall_follows)
{
	struct timeline *t = timeline_new(&stacks, NULL);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, OTHER);         /* seen first, sorted second */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, TID);
	cpu_sample(t, 10, OTHER, work_stack, 1);
	timeline_finish(t, 100);
	cr_assert_eq(timeline_thread_count(t), 2);
	cr_expect_eq(timeline_thread(t, 0)->tid, TID);
	cr_expect_eq(timeline_thread(t, 1)->tid, OTHER);
	cr_expect_eq(wall_ns(t, 1, TIMELINE_RUNNING, work_stack), 100);
	cr_expect_eq(wall_ns(t, 0, TIMELINE_RUNNING, TIMELINE_NO_STACK), 100);
	expect_tiles(t, 0);
	expect_tiles(t, 1);
	size_t n;
	cr_expect_null(timeline_spans(t, 0, &n), "no spans kept without keep_spans");
	cr_expect_eq(n, 0);
	timeline_free(t);
}

Test(timeline, cause_rules)
{
	cr_expect_eq(timeline_cause_of_stack(&stacks, sleep_stack), TIMELINE_CAUSE_SLEEP);
	cr_expect_eq(timeline_cause_of_stack(&stacks, futex_stack), TIMELINE_CAUSE_FUTEX);
	cr_expect_eq(timeline_cause_of_stack(&stacks, lock_stack), TIMELINE_CAUSE_LOCK);
	cr_expect_eq(timeline_cause_of_stack(&stacks, kernel_stack("pipe_read")), TIMELINE_CAUSE_IO);
	cr_expect_eq(timeline_cause_of_stack(&stacks, kernel_stack("anon_pipe_read")), TIMELINE_CAUSE_IO);
	cr_expect_eq(timeline_cause_of_stack(&stacks, user_stack("do_nanosleep")), TIMELINE_CAUSE_OTHER,
		     "only kernel frames name a cause");
	cr_expect_eq(timeline_cause_of_stack(&stacks, 99999), TIMELINE_CAUSE_OTHER);
}

Test(timeline, events_about_other_tasks_make_no_thread)
{
	struct timeline *t = timeline_new(&stacks, NULL);
	/* a system-wide sample of a task outside the workload, a waking of one the filters dropped */
	struct timeline_event seen = { .kind = TIMELINE_EVENT_SEEN, .time = 10, .tid = OTHER,
				       .stack = TIMELINE_NO_STACK, .known_only = true };
	timeline_event(t, &seen);
	struct timeline_event waking = { .kind = TIMELINE_EVENT_WAKING, .time = 20, .tid = OTHER,
					 .stack = TIMELINE_NO_STACK, .known_only = true };
	timeline_event(t, &waking);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 0, TID);
	switch_out(t, 100, TID, true, sleep_stack);
	struct timeline_event wake_known = { .kind = TIMELINE_EVENT_WAKING, .time = 150, .tid = TID,
					     .stack = TIMELINE_NO_STACK, .known_only = true };
	timeline_event(t, &wake_known);                    /* a thread it follows: runnable from 150 */
	timeline_finish(t, 200);
	cr_assert_eq(timeline_thread_count(t), 1);
	cr_expect_eq(timeline_thread(t, 0)->tid, TID);
	cr_expect_eq(timeline_thread(t, 0)->ns[TIMELINE_RUNNABLE], 50);
	expect_tiles(t, 0);
	timeline_free(t);
}

/* Marks stay with a thread the timeline follows, alive, while spans are kept; none change its state. */
Test(timeline, marks_of_followed_threads)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	struct timeline_mark m = { .time = 1500, .detail = 0xffff8881, .label = "__schedule", .stack = lock_stack,
				   .kind = TIMELINE_MARK_LOCK };
	timeline_add_mark(t, TID, &m); /* not followed yet: nothing */
	ev(t, TIMELINE_EVENT_SWITCH_IN, 1000, TID);
	timeline_add_mark(t, TID, &m);
	m.time = 2500;
	timeline_add_mark(t, TID, &m);
	timeline_add_mark(t, TID + 1, &m); /* a task it does not follow */
	ev(t, TIMELINE_EVENT_EXIT, 3000, TID);
	m.time = 3500;
	timeline_add_mark(t, TID, &m); /* after its exit */
	timeline_finish(t, 4000);
	size_t i = thread_of(t, TID), n;
	const struct timeline_mark *marks = timeline_marks(t, i, &n);
	cr_assert_eq(n, 2);
	cr_expect_eq(marks[0].time, 1500);
	cr_expect_eq(marks[1].time, 2500);
	cr_expect_eq(marks[1].detail, 0xffff8881);
	cr_expect_str_eq(marks[1].label, "__schedule");
	cr_expect_eq(timeline_thread(t, i)->ns[TIMELINE_RUNNING], 2000, "a mark changes no state");
	cr_expect_eq(timeline_thread_count(t), 1);
	timeline_free(t);
	/* without kept spans, no marks either */
	t = timeline_new(&stacks, NULL);
	ev(t, TIMELINE_EVENT_SWITCH_IN, 1000, TID);
	timeline_add_mark(t, TID, &m);
	timeline_finish(t, 4000);
	timeline_marks(t, thread_of(t, TID), &n);
	cr_expect_eq(n, 0);
	timeline_free(t);
}

/* Without a switch-in or switch-out (no sched collector) the states cannot be told: no thread is kept. */
Test(timeline, no_switch_no_threads)
{
	struct timeline *t = timeline_new(&stacks, &(struct timeline_options){ .keep_spans = true });
	ev(t, TIMELINE_EVENT_FORK, 1000, TID);
	cpu_sample(t, 2000, TID, work_stack, 1000);
	ev(t, TIMELINE_EVENT_EXIT, 3000, TID);
	timeline_finish(t, 4000);
	cr_expect_eq(timeline_thread_count(t), 0);
	cr_expect_eq(timeline_wall_count(t), 0);
	timeline_free(t);
}
