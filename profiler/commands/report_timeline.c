/*
 * report_timeline.c: the report's outputs of the timeline (timeline.h,
 * docs/timeline.md): the threads' spans and the wall-clock profile in JSON
 * (`.timeline`), the wall-clock section of the text report, `--folded
 * --weight wall` and the Chrome trace-event export (`--trace-event FILE`).
 *
 * A wall-clock stack is the state as its root frame ("[running]",
 * "[blocked: futex queue_lock]", "[runnable]", "[signal handler: SIGUSR1]")
 * above the span's stack, weighed by ns; report_wall_root() names that frame
 * the same way in every output.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/json.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/report.h"
#include "sigprof/model/timeline.h"

const char *report_wall_root(const struct profile *p, uint32_t pid, uint8_t state, uint8_t cause, uint8_t signal,
			     uint64_t word, char *buf, size_t len)
{
	char name[160];
	switch (state) {
	case TIMELINE_BLOCKED:
		if (cause == TIMELINE_CAUSE_FUTEX && word)
			snprintf(buf, len, "[blocked: futex %s]", view_user_data_name(p, pid, word, name, sizeof(name), NULL));
		else
			snprintf(buf, len, "[blocked: %s]", timeline_cause_name(cause ? cause : TIMELINE_CAUSE_OTHER));
		break;
	case TIMELINE_SIGNAL_HANDLER:
		snprintf(buf, len, "[signal handler: %s]", signal_name(signal, name, sizeof(name)));
		break;
	default:
		snprintf(buf, len, "[%s]", timeline_state_name(state));
		break;
	}
	return buf;
}

/* ---- JSON: .timeline ---- */

/* The stacks the spans and the wall profile name, once each: an id of the stack table with its frames. */
static void write_timeline_stacks(struct json_writer *w, const struct profile *p)
{
	const struct timeline *t = p->timeline;
	unsigned char *named = xcalloc(p->stacks.nstacks + 1, 1);
	for (size_t i = 0; i < timeline_thread_count(t); i++) {
		size_t n;
		const struct timeline_span *s = timeline_spans(t, i, &n);
		for (size_t k = 0; k < n; k++)
			if (s[k].stack < p->stacks.nstacks)
				named[s[k].stack] = 1;
	}
	for (size_t i = 0; i < timeline_wall_count(t); i++) {
		uint32_t stack = timeline_wall_entry(t, i)->stack;
		if (stack < p->stacks.nstacks)
			named[stack] = 1;
	}
	json_array_begin(w, "stacks");
	for (uint32_t id = 0; id < p->stacks.nstacks; id++) {
		if (!named[id])
			continue;
		json_object_begin(w, NULL);
		json_u64(w, "id", id);
		view_json_stack(w, p, id);
		json_end(w);
	}
	json_end(w);
	free(named);
}

static void write_stack_id(struct json_writer *w, uint32_t stack)
{
	if (stack == TIMELINE_NO_STACK)
		json_null(w, "stack");
	else
		json_u64(w, "stack", stack);
}

static void write_span(struct json_writer *w, const struct profile *p, uint32_t pid, const struct timeline_span *s)
{
	char buf[200];
	json_object_begin(w, NULL);
	json_u64(w, "start_ns", s->start);
	json_u64(w, "end_ns", s->end);
	json_string(w, "state", timeline_state_key(s->state));
	if (s->state == TIMELINE_BLOCKED)
		json_string(w, "cause", timeline_cause_key(s->cause));
	if (s->state == TIMELINE_BLOCKED && s->cause == TIMELINE_CAUSE_FUTEX && s->detail) {
		json_hex(w, "word", s->detail);
		json_string(w, "word_name", view_user_data_name(p, pid, s->detail, buf, sizeof(buf), NULL));
	}
	if (s->state == TIMELINE_RUNNABLE)
		json_bool(w, "woken", s->woken);
	if (s->signal)
		json_string(w, "signal", signal_name(s->signal, buf, sizeof(buf)));
	write_stack_id(w, s->stack);
	json_end(w);
}

void report_timeline_json(struct json_writer *w, const struct profile *p)
{
	const struct timeline *t = p->timeline;
	if (!t) {
		json_null(w, "timeline");
		return;
	}
	char buf[200];
	json_object_begin(w, "timeline");
	json_u64(w, "start_ns", p->first_time);
	json_array_begin(w, "threads");
	for (size_t i = 0; i < timeline_thread_count(t); i++) {
		const struct timeline_thread *th = timeline_thread(t, i);
		json_object_begin(w, NULL);
		json_u64(w, "pid", th->pid);
		json_u64(w, "tid", th->tid);
		json_string(w, "comm", view_thread_comm(p, th->pid, th->tid));
		json_u64(w, "start_ns", th->start);
		json_u64(w, "end_ns", th->end);
		json_bool(w, "exited", th->exited);
		json_object_begin(w, "states_ns");
		for (int s = 0; s < TIMELINE_STATES; s++)
			json_u64(w, timeline_state_key(s), th->ns[s]);
		json_end(w);
		json_object_begin(w, "blocked_ns");
		for (int c = TIMELINE_CAUSE_FUTEX; c < TIMELINE_CAUSES; c++)
			json_u64(w, timeline_cause_key(c), th->cause_ns[c]);
		json_end(w);
		json_u64(w, "span_count", th->nspans);
		size_t n;
		const struct timeline_span *spans = timeline_spans(t, i, &n);
		json_array_begin(w, "spans");
		for (size_t k = 0; k < n; k++)
			write_span(w, p, th->pid, &spans[k]);
		json_end(w);
		json_end(w);
	}
	json_end(w);
	json_array_begin(w, "wall");
	for (size_t i = 0; i < timeline_wall_count(t); i++) {
		const struct timeline_wall *e = timeline_wall_entry(t, i);
		const struct timeline_thread *th = timeline_thread(t, e->thread);
		json_object_begin(w, NULL);
		json_u64(w, "pid", th->pid);
		json_u64(w, "tid", th->tid);
		json_string(w, "state", timeline_state_key(e->state));
		json_string(w, "root", report_wall_root(p, th->pid, e->state, e->cause, e->signal, e->detail, buf,
							sizeof(buf)));
		json_u64(w, "ns", e->ns);
		write_stack_id(w, e->stack);
		json_end(w);
	}
	json_end(w);
	write_timeline_stacks(w, p);
	json_end(w);
}
