/*
 * timeline_feed.c: what the loader tells the timeline (timeline.h), from the
 * records and the analyzers' hooks (collector.h), so that the timeline
 * itself knows no perf record and no collector.
 *
 *   PERF_RECORD_SWITCH        switch-in; switch-out (preempted: runnable)
 *   PERF_RECORD_FORK, EXIT    a thread's birth and end
 *   sched_event hook          a sched_switch sample: prev's switch-out asleep or
 *                             preempted with its blocking stack, next's switch-in;
 *                             a waking's target
 *   pending_futex_word hook   the word of a futex call pending at a switch-out asleep
 *   running_handlers hook     a handler started (more run after the sample) or
 *                             returned (fewer): signal delivery and rt_sigreturn
 *   collector.on_cpu_time     the samples of the wall profile's running stacks (cpu)
 *   timeline_mark hook        an instant to mark on its thread (a lock contention's begin)
 *   any other sample          its task is on a CPU (a thread followed already)
 */
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/model/timeline.h"
#include "loader.h"

#define HANDLERS_SEEN_MAX 16

static const struct collector_analyzer *analyzer_of(const struct profile *p, int c)
{
	const struct collector_info *ci = &p->collectors[c];
	return ci->state && ci->impl ? ci->impl->analyzer : NULL;
}

uint32_t timeline_feed_handlers(const struct profile *p, int c, const struct sp_sample *s, int *innermost)
{
	const struct collector_analyzer *an = analyzer_of(p, c);
	int sigs[HANDLERS_SEEN_MAX];
	*innermost = 0;
	if (!p->timeline || !an || !an->running_handlers)
		return 0;
	uint32_t n = an->running_handlers(p->collectors[c].state, s->pid, s->tid, sigs, HANDLERS_SEEN_MAX);
	if (n)
		*innermost = sigs[0];
	return n;
}

static void feed(struct profile *p, enum timeline_event_kind kind, uint64_t time, uint32_t pid, uint32_t tid)
{
	struct timeline_event e = { .kind = kind, .time = time, .pid = pid, .tid = tid, .stack = TIMELINE_NO_STACK };
	timeline_event(p->timeline, &e);
}

/*
 * An event about another task than the sample's (a waking's target, a
 * switch's next): only for a thread the timeline follows already, so that
 * the task filters, which judged the sample's task, keep out the others.
 */
static void feed_other_task(struct profile *p, enum timeline_event_kind kind, uint64_t time, uint32_t tid)
{
	struct timeline_event e = { .kind = kind, .time = time, .tid = tid, .stack = TIMELINE_NO_STACK,
				    .known_only = true };
	timeline_event(p->timeline, &e);
}

static bool pending_futex_word(const struct profile *p, uint32_t tid, uint64_t time, uint64_t *word)
{
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_analyzer *an = analyzer_of(p, c);
		uint32_t pid;
		if (an && an->pending_futex_word && an->pending_futex_word(p->collectors[c].state, tid, time, &pid, word))
			return true;
	}
	return false;
}

void timeline_feed_sample(struct profile *p, int c, const struct sp_sample *s, uint32_t stack,
			  uint32_t handlers_before)
{
	if (!p->timeline)
		return;
	const struct collector_analyzer *an = analyzer_of(p, c);
	struct sched_event_facts facts;
	if (an && an->sched_event && an->sched_event(p->collectors[c].state, p, s, &facts)) {
		if (facts.kind == SCHED_FACT_WAKING) {
			feed_other_task(p, TIMELINE_EVENT_WAKING, s->time, facts.target);
			return;
		}
		struct timeline_event out = { .kind = TIMELINE_EVENT_SWITCH_OUT, .time = s->time, .tid = facts.prev_tid,
					      .pid = facts.prev_tid == s->tid ? s->pid : 0, .stack = stack,
					      .known_only = facts.prev_tid != s->tid,
					      .sleeps = facts.prev_sleeps, .dead = facts.prev_dead };
		if (out.sleeps)
			out.has_word = pending_futex_word(p, out.tid, s->time, &out.word);
		timeline_event(p->timeline, &out);
		if (facts.next_tid)
			feed_other_task(p, TIMELINE_EVENT_SWITCH_IN, s->time, facts.next_tid);
		return;
	}
	int innermost;
	uint32_t handlers = timeline_feed_handlers(p, c, s, &innermost);
	if (handlers > handlers_before) {
		struct timeline_event e = { .kind = TIMELINE_EVENT_HANDLER_ENTER, .time = s->time, .pid = s->pid,
					    .tid = s->tid, .stack = TIMELINE_NO_STACK, .signal = innermost };
		timeline_event(p->timeline, &e);
		return;
	}
	if (handlers < handlers_before) {
		feed(p, TIMELINE_EVENT_HANDLER_EXIT, s->time, s->pid, s->tid);
		return;
	}
	if (p->collectors[c].impl && p->collectors[c].impl->on_cpu_time) {
		struct timeline_event e = { .kind = TIMELINE_EVENT_CPU_SAMPLE, .time = s->time, .pid = s->pid,
					    .tid = s->tid, .stack = stack, .period = s->period };
		timeline_event(p->timeline, &e);
		return;
	}
	/* a system-wide event's sample (a migration, a new task's wakeup) may be of a task outside the workload */
	feed_other_task(p, TIMELINE_EVENT_SEEN, s->time, s->tid);
	struct timeline_mark mark;
	if (an && an->timeline_mark && an->timeline_mark(p->collectors[c].state, p, s, stack, &mark))
		timeline_add_mark(p->timeline, s->tid, &mark);
}

/*
 * A sample the task filters dropped (--tid, --pid, --comm): the waking it
 * records may be of a thread they keep, woken by one they drop (a timer's
 * interrupt on another task, a waker thread), and without it that thread
 * would stay blocked to its switch-in.  Within --time's window only.
 */
void timeline_feed_filtered(struct profile *p, int c, const struct sp_sample *s)
{
	const struct collector_analyzer *an = p->timeline && c >= 0 ? analyzer_of(p, c) : NULL;
	struct sched_event_facts facts;
	if (!an || !an->sched_event || (s->time && (s->time < p->window_start || s->time >= p->window_end)))
		return;
	if (an->sched_event(p->collectors[c].state, p, s, &facts) && facts.kind == SCHED_FACT_WAKING)
		feed_other_task(p, TIMELINE_EVENT_WAKING, s->time, facts.target);
}

void timeline_feed_record(struct profile *p, const struct perf_event_header *rec, const struct sp_sample_id *id)
{
	if (!p->timeline)
		return;
	const uint32_t *u32 = (const void *)(rec + 1);
	const uint64_t *u64 = (const void *)(rec + 1);
	switch (rec->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!id->valid)
			break;
		if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT) {
			struct timeline_event e = { .kind = TIMELINE_EVENT_SWITCH_OUT, .time = id->time, .pid = id->pid,
						    .tid = id->tid, .stack = TIMELINE_NO_STACK,
						    .sleeps = !(rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) };
			timeline_event(p->timeline, &e);
		} else {
			feed(p, TIMELINE_EVENT_SWITCH_IN, id->time, id->pid, id->tid);
		}
		break;
	case PERF_RECORD_FORK:
		/* pid, ppid, tid, ptid, time */
		if (rec->size >= 24 + 8)
			feed(p, TIMELINE_EVENT_FORK, u64[2], u32[0], u32[2]);
		break;
	case PERF_RECORD_EXIT:
		if (rec->size >= 24 + 8)
			feed(p, TIMELINE_EVENT_EXIT, u64[2], u32[0], u32[2]);
		break;
	default:
		break;
	}
}
