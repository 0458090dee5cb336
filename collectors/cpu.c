/*
 * cpu.c: the cpu collector, where CPU time goes.
 *
 * It samples `cycles` where the machine has a hardware PMU and falls back to
 * the `cpu-clock` software timer where it does not (VMs without PMU
 * passthrough, such as our own), at the frequency or period the user chose.
 * On the report side its samples are counted per stack and path as they are;
 * its keyed figures are LKP's perf-profile.* shares (cpu_figures()).
 *
 * Its stacks are DWARF ones by default (a copy of user stack, unwound by
 * the report): Debian builds its programs and libc without frame pointers,
 * where the kernel's frame-pointer walk names nothing past the leaf.  Each
 * sample copies CPU_SHORT_STACK_USER_SIZE bytes, and a second event of the
 * same clock, "#stack", copies CPU_LONG_STACK_USER_SIZE at
 * CPU_STACK_COPY_HZ: a stack deeper than the short copy is completed at
 * report time from a long copy's that goes through the same frames
 * (stack_completion.h).  The frame-pointer walk is kept beside the copy:
 * where a deep stack outgrows the copy, the report goes on along it from the
 * last frame the copy reached (profile.c).  docs/performance.md has the cost
 * against `perf record -g`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/collector.h"
#include "sigprof/base/util.h"
#include "sigprof/view/findings.h"
#include "sigprof/view/view.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/kernel/rate_bound.h"

/* perf-profile rows below this share (percent of the cpu samples) are left out, as LKP's lists leave them */
#define PERF_PROFILE_FLOOR 0.5
/* calltrace keys keep at most this many frames, the leaf's end of the stack */
#define CALLTRACE_MAX_FRAMES 12

/*
 * Whether the samples take a short copy and a "#stack" event beside them
 * the long one (CPU_SHORT_STACK_USER_SIZE, CPU_STACK_COPY_HZ): the
 * default call graph, sampled often enough that the long copies are a
 * small part of the samples.  A program with frame pointers takes them
 * too: its short copy holds libc's frames near the leaf, where the
 * frame-pointer walk goes on (LEAF_STACK_USER_SIZE, the copy it had
 * alone, did not always: the dynamic loader's frames are larger).
 */
static bool short_copies(const struct record_options *opts)
{
	return !opts->call_graph_chosen && !opts->period && opts->frequency >= CPU_SHORT_COPIES_MIN_HZ;
}

static int cpu_add_events(struct record_options *opts, struct event_list *events, char *reason,
			  size_t reasonlen)
{
	struct perf_event_attr attr;
	struct record_options o = *opts;
	bool split = short_copies(opts);
	o.call_graph = call_graph_for(opts, CALL_GRAPH_DWARF);
	o.stack_user_size = split ? CPU_SHORT_STACK_USER_SIZE : stack_copy_default(opts, CPU_SIGNAL_STACK_USER_SIZE);
	o.keep_user_chain = !opts->call_graph_chosen;
	opts = &o;
	sampling_attr_init(&attr, opts, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	const char *name = "cycles";
	if (perf_event_probe(&attr) < 0) {
		sampling_attr_init(&attr, opts, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
		name = "cpu-clock";
		int err = perf_event_probe(&attr);
		if (err < 0) {
			snprintf(reason, reasonlen, "cannot open cpu-clock: %s", perf_open_reason(err, &attr));
			return err;
		}
	}
	struct event_spec *spec = event_list_add(events, name, "cpu");
	spec->attr = attr;
	if (split) {
		char copy_name[64];
		snprintf(copy_name, sizeof(copy_name), "%s#%s", name, RATE_BOUND_STACK_SUFFIX);
		spec = event_list_add(events, copy_name, "cpu");
		spec->attr = attr;
		spec->attr.sample_stack_user = CPU_LONG_STACK_USER_SIZE;
		spec->attr.sample_freq = CPU_STACK_COPY_HZ;
	}
	return 0;
}

static void *cpu_create(const struct profile *p, int self)
{
	(void)p;
	int *state = xmalloc(sizeof(*state));
	*state = self;
	return state;
}

static void cpu_destroy(void *state)
{
	free(state);
}

struct calltrace {
	char *key;
	uint64_t count;
};

static int compare_calltraces(const void *a, const void *b)
{
	return strcmp(((const struct calltrace *)a)->key, ((const struct calltrace *)b)->key);
}

/*
 * LKP's perf-profile figures, shares of the cpu samples in percent:
 * perf-profile.self.cycles-pp.FUNC (samples whose leaf is FUNC),
 * perf-profile.children.cycles-pp.FUNC (FUNC anywhere on the stack) and
 * perf-profile.calltrace.cycles-pp.A.B.C (the stacks, root first, that
 * end in C), each at or above PERF_PROFILE_FLOOR.  "cycles-pp" is LKP's
 * name whatever event sampled (cpu-clock in a VM).  The frames sigprof adds
 * ("[signal SIGUSR1] (stack from delivery)", "[unwind: ...]") are in no
 * perf callchain and hold blanks, which split LKP's lines: they are left
 * out of the keys.  A key names a function by its name only: the frames of
 * one name are merged (view_functions_by_name()), as the stacks of one calltrace
 * are.
 */
static void cpu_figures(void *state, const struct profile *p, struct figure_rows *rows)
{
	int self = *(int *)state;
	uint64_t samples = view_collector_samples(p, self);
	if (!samples)
		return;
	char label[256];
	uint32_t *ids;
	size_t nstacks = view_stacks(p, self, -1, &ids);
	struct named_function *functions;
	struct string_pool *pool;
	size_t n = view_functions_by_name(p, ids, nstacks, &functions, &pool);
	for (size_t i = 0; i < n; i++) {
		double share = 100.0 * (double)functions[i].self / (double)samples;
		if (share >= PERF_PROFILE_FLOOR)
			figure_rows_add(rows, share, "percent", false, "perf-profile.self.cycles-pp.%s", functions[i].name);
	}
	for (size_t i = 0; i < n; i++) {
		double share = 100.0 * (double)functions[i].children / (double)samples;
		if (share >= PERF_PROFILE_FLOOR)
			figure_rows_add(rows, share, "percent", false, "perf-profile.children.cycles-pp.%s",
					functions[i].name);
	}
	free(functions);
	string_pool_free(pool);
	struct calltrace *traces = xcalloc(nstacks + 1, sizeof(*traces));
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < nstacks; i++) {
		/* the CALLTRACE_MAX_FRAMES frames nearest the leaf that are functions, joined root first */
		uint32_t depth = view_stack_depth(p, ids[i]), kept[CALLTRACE_MAX_FRAMES], nkept = 0;
		for (uint32_t k = 0; k < depth && nkept < CALLTRACE_MAX_FRAMES; k++)
			if (!view_stack_frame(p, ids[i], k)->synthetic)
				kept[nkept++] = k;
		sb_reset(&sb);
		for (uint32_t k = nkept; k-- > 0;)
			sb_addf(&sb, "%s%s", frame_label(view_stack_frame(p, ids[i], kept[k]), label, sizeof(label)),
				k ? "." : "");
		traces[i] = (struct calltrace){ .key = xstrdup(sb.len ? sb.buf : "[unknown]"),
						.count = view_stack_count(p, ids[i]) };
	}
	sb_free(&sb);
	free(ids);
	sort_items(traces, nstacks, sizeof(*traces), compare_calltraces);
	for (size_t i = 0; i < nstacks;) {
		size_t j = i;
		uint64_t count = 0;
		for (; j < nstacks && strcmp(traces[j].key, traces[i].key) == 0; j++)
			count += traces[j].count;
		double share = 100.0 * (double)count / (double)samples;
		if (share >= PERF_PROFILE_FLOOR)
			figure_rows_add(rows, share, "percent", false, "perf-profile.calltrace.cycles-pp.%s", traces[i].key);
		i = j;
	}
	for (size_t i = 0; i < nstacks; i++)
		free(traces[i].key);
	free(traces);
}

/* ---- findings (view/findings.h): the report's first screen ---- */

/*
 * Kernel functions that re-enable interrupts.  Without a PMU the cpu-clock
 * timer's interrupt waits while they are off, so its samples pile up on
 * the instruction that turns them on again: a share that is the timer's,
 * not the code's cost.
 */
static bool enables_interrupts(const struct frame *f)
{
	static const char *const names[] = { "irq_enable", "unlock_irq", "finish_task_switch", "__local_bh_enable",
					     "local_irq_restore", "irqentry_exit" };
	if (!f->kernel || !f->sym)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strstr(f->sym, names[i]))
			return true;
	return false;
}

/* Whether the collector sampled the cpu-clock timer (no PMU): its first event with samples says. */
static bool samples_cpu_clock(const struct profile *p)
{
	for (size_t i = 0; i < view_event_count(p); i++) {
		const struct sp_event *ev = view_event(p, i);
		if (strcmp(ev->collector, "cpu") == 0 && ev->attr.type == PERF_TYPE_SOFTWARE &&
		    ev->attr.config == PERF_COUNT_SW_CPU_CLOCK)
			return true;
	}
	return false;
}

/*
 * The function with the most samples of its own that is the workload's
 * (the recorder's and the interrupt-enabling ones set apart), and the
 * caveat of the cpu-clock timer where those hold a share worth reading.
 */
static void cpu_findings(void *state, const struct profile *p, struct findings *out)
{
	int self = *(int *)state;
	uint64_t samples = view_collector_samples(p, self);
	uint64_t recorder = view_collector_path_samples(p, self, PATH_RECORDER);
	if (!samples || samples <= recorder)
		return;
	struct function_row *rows;
	size_t n = view_functions(p, self, SORT_SELF, &rows);
	char label[256], irq_label[256] = "";
	uint64_t irq_self = 0;
	const struct function_row *top = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct frame *f = view_frame(p, rows[i].frame);
		if (enables_interrupts(f)) {
			if (!irq_self)
				snprintf(irq_label, sizeof(irq_label), "%s", frame_label(f, label, sizeof(label)));
			irq_self += rows[i].self;
		} else if (!top && f->path != PATH_RECORDER && !f->synthetic) {
			top = &rows[i];
		}
	}
	double workload = (double)(samples - recorder);
	if (top) {
		const struct frame *f = view_frame(p, top->frame);
		findings_add(out, 0, (double)top->self / workload, "Top functions, cpu samples",
			     "cpu: the busiest function of the workload is %s (%s), %.0f%% self, %.0f%% with its callees",
			     frame_label(f, label, sizeof(label)), dso_short_name(f->dso),
			     100.0 * (double)top->self / (double)samples, 100.0 * (double)top->total / (double)samples);
	}
	if (irq_self && samples_cpu_clock(p) && (double)irq_self >= 0.05 * (double)samples)
		findings_caveat(out, "no PMU: cpu-clock samples land where interrupts are re-enabled (%s: %.0f%%), "
				     "the timer's wait, not that code's cost",
				irq_label, 100.0 * (double)irq_self / (double)samples);
	free(rows);
}

/*
 * The "#stack" event's samples are long copies beside the short ones
 * (short_copies()): counted nowhere, their stacks complete the short ones'
 * that their copy cut (completes_cut_stacks, stack_completion.h).
 */
static int cpu_path_of(void *state, const struct profile *p, const struct sp_sample *s)
{
	(void)state;
	(void)p;
	size_t base_len;
	return rate_bound_stack_copy_suffix(rate_bound_suffix(s->event->name, &base_len))
		       ? PATH_STACK_ONLY | PATH_COUNT /* its path by its frames */
		       : -1;
}

static const struct collector_analyzer cpu_analyzer = {
	.create = cpu_create,
	.path_of = cpu_path_of,
	.completes_cut_stacks = true,
	.destroy = cpu_destroy,
	.figures = cpu_figures,
	.findings = cpu_findings,
	.show_stacks = true,
};

const struct collector cpu_collector = {
	.name = "cpu",
	.description = "CPU samples: cycles where a PMU exists, else cpu-clock",
	.add_events = cpu_add_events,
	.unit = "samples",
	.analyzer = &cpu_analyzer,
	.on_cpu_time = true,
};
