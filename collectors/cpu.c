/*
 * cpu.c: the cpu collector, where CPU time goes.
 *
 * It samples `cycles` where the machine has a hardware PMU and falls back to
 * the `cpu-clock` software timer where it does not (VMs without PMU
 * passthrough, such as our own), at the frequency or period the user chose.
 * On the report side its samples are counted per stack and path as they are.
 *
 * Its stacks are DWARF ones by default (a copy of CPU_SIGNAL_STACK_USER_SIZE
 * bytes of user stack, unwound by the report): Debian builds its programs and
 * libc without frame pointers, where the kernel's frame-pointer walk names
 * nothing past the leaf.  The frame-pointer walk is kept beside the copy:
 * where a deep stack outgrows the copy, the report goes on along it from the
 * last frame the copy reached (profile.c).  docs/performance.md has the cost
 * against `perf record -g`.
 */
#include <errno.h>
#include <stdio.h>

#include "sigprof/collector.h"

static int cpu_add_events(struct record_options *opts, struct event_list *events, char *reason,
			  size_t reasonlen)
{
	struct perf_event_attr attr;
	struct record_options o = *opts;
	o.call_graph = call_graph_for(opts, CALL_GRAPH_DWARF);
	o.stack_user_size = stack_copy_default(opts, CPU_SIGNAL_STACK_USER_SIZE);
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
	return 0;
}

const struct collector cpu_collector = {
	.name = "cpu",
	.description = "CPU samples: cycles where a PMU exists, else cpu-clock",
	.add_events = cpu_add_events,
	.unit = "samples",
};
