/*
 * list.c: `sigprof list`, what this machine lets sigprof open.
 *
 * Every collector is asked for its events as record would ask (the same
 * defaults, the same exclusion of kernel frames when not root), so the
 * state printed is the state a recording would meet: available with the
 * events it would open, or unavailable with the reason its add_events()
 * gave (no PMU device, no tracefs, permission, a tracepoint this kernel
 * lacks).  Then each class of events the parser knows (pmu.h) is probed by
 * one representative event; --names adds the generic names and the sysfs
 * PMUs' event aliases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sigprof/collectors/registry.h"
#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/base/options.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/util.h"
#include "sigprof/kernel/perf.h"

#define LIST_FREQUENCY 4000 /* record's default: what a probe opens must be what record opens */
#define INDENT "                        "

/* What `sigprof list` was asked. */
struct list_args {
	bool names; /* --names */
};

static const struct option_spec list_specs[] = {
	{ .short_name = 'n', .long_name = "names", .flags = OPTION_SYNOPSIS_LONG,
	  .help = "also the generic event names and each sysfs PMU's event aliases",
	  OPTION_TRUE(struct list_args, names) },
	OPTION_HELP_SPEC,
};

const struct option_table list_option_table = {
	.command = "sigprof list",
	.description = "Every collector and event class, available here or not and why, with the events each "
		       "collector would open.",
	.specs = list_specs,
	.count = ARRAY_SIZE(list_specs),
};

/* items joined by ", ", wrapped under INDENT at about 100 columns. */
static void print_wrapped(FILE *out, const char *const *items, size_t n)
{
	size_t col = strlen(INDENT);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(items[i]) + 2;
		if (i && col + len > 100) {
			fprintf(out, ",\n%s", INDENT);
			col = strlen(INDENT);
		} else if (i) {
			fprintf(out, ", ");
		}
		fprintf(out, "%s", items[i]);
		col += len;
	}
	fprintf(out, "\n");
}

static void list_collectors(const struct record_options *defaults, FILE *out)
{
	fprintf(out, "Collectors (a recording without -e runs every available one but 'events')\n");
	for (size_t i = 0; i < collector_count; i++) {
		const struct collector *c = collector_table[i];
		struct record_options opts = *defaults;
		struct event_list events = { 0 };
		char reason[256] = "";
		int err = collector_add_events(c, &opts, &events, reason, sizeof(reason));
		const char *state = err == 0 ? "available" : c->on_request ? "on request" : "unavailable";
		fprintf(out, "  %-8s %-12s ", c->name, state);
		if (err == 0) {
			const char **names = xcalloc(events.count ? events.count : 1, sizeof(*names));
			for (size_t e = 0; e < events.count; e++)
				names[e] = events.specs[e].name;
			print_wrapped(out, names, events.count);
			free(names);
		} else {
			fprintf(out, "%s\n", c->on_request ? (c->events ? c->events : c->description) : reason);
			if (!c->on_request)
				fprintf(out, "%swould open: %s\n", INDENT, c->events ? c->events : c->description);
		}
		event_list_free(&events);
	}
}

/* One line for an event class: whether its representative opens here. */
static void list_probe(const char *class, const char *representative, FILE *out)
{
	struct pmu_event ev;
	char err[512];
	fprintf(out, "  %-20s  ", class);
	if (pmu_event_parse(representative, &ev, err, sizeof(err)) < 0) {
		fprintf(out, "unavailable: %s\n", err);
		return;
	}
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	pmu_event_apply(&ev, &attr);
	attr.exclude_kernel = !kernel_samples_allowed();
	int ret = perf_event_probe(&attr);
	if (ret < 0)
		fprintf(out, "unavailable: %s does not open: %s\n", representative, perf_open_reason(ret, &attr));
	else
		fprintf(out, "available (%s opens)\n", representative);
}

static void list_classes(FILE *out)
{
	fprintf(out, "\nEvent classes (-e of record)\n");
	list_probe("generic hardware", "cycles", out);
	list_probe("generic cache", "L1-dcache-load-misses", out);
	list_probe("generic software", "cpu-clock", out);
	char dir[256], err[256];
	if (tracefs_find(dir, sizeof(dir), err, sizeof(err)) < 0)
		fprintf(out, "  %-20s  unavailable: %s\n", "tracepoints", err);
	else
		fprintf(out, "  %-20s  available: tracefs at %s (SYSTEM:NAME)\n", "tracepoints", dir);
	const char *model = pmu_core_model();
	fprintf(out, "  %-20s  %s%s\n", "libpfm4 names", model ? "core PMU " : "",
		model ? model : "no core PMU found (a VM without PMU passthrough?): only perf:: names");
	struct pmu_names pmus;
	pmu_sysfs_names(&pmus);
	fprintf(out, "  %-20s  %s", "sysfs PMUs", pmus.count ? "" : "none found\n");
	char **labels = xcalloc(pmus.count ? pmus.count : 1, sizeof(*labels));
	for (size_t i = 0; i < pmus.count; i++) {
		uint32_t type = 0;
		struct strbuf label = { 0 };
		sb_addstr(&label, pmus.names[i]);
		if (pmu_sysfs_type(pmus.names[i], &type) == 0)
			sb_addf(&label, " (type %u)", type);
		labels[i] = label.buf;
	}
	if (pmus.count)
		print_wrapped(out, (const char *const *)labels, pmus.count);
	for (size_t i = 0; i < pmus.count; i++)
		free(labels[i]);
	free(labels);
	pmu_names_free(&pmus);
}

static void list_names(FILE *out)
{
	fprintf(out, "\nGeneric names\n");
	const char *hardware[64], *software[64];
	size_t nh = 0, ns = 0;
	uint32_t type;
	const char *name;
	for (size_t i = 0; (name = pmu_generic_name(i, &type)) && nh < 64 && ns < 64; i++) {
		if (type == PERF_TYPE_HARDWARE)
			hardware[nh++] = name;
		else
			software[ns++] = name;
	}
	fprintf(out, "  %-20s  ", "hardware");
	print_wrapped(out, hardware, nh);
	fprintf(out, "  %-20s  ", "software");
	print_wrapped(out, software, ns);
	fprintf(out, "  %-20s  L1-dcache, L1-icache, LLC, dTLB, iTLB, branch, node, each -loads, -load-misses,\n"
		     "%s-stores, -store-misses, -prefetches or -prefetch-misses\n", "cache", INDENT);
	struct pmu_names pmus;
	pmu_sysfs_names(&pmus);
	fprintf(out, "\nsysfs PMUs and their event aliases (PMU/ALIAS/)\n");
	for (size_t i = 0; i < pmus.count; i++) {
		struct pmu_names aliases;
		pmu_sysfs_events(pmus.names[i], &aliases);
		fprintf(out, "  %-20s  ", pmus.names[i]);
		if (aliases.count)
			print_wrapped(out, (const char *const *)aliases.names, aliases.count);
		else
			fprintf(out, "(no aliases: terms only)\n");
		pmu_names_free(&aliases);
	}
	pmu_names_free(&pmus);
}

int cmd_list(int argc, char **argv)
{
	struct list_args args = { 0 };
	struct options_parsed parsed;
	int ret = cli_parse_options(&list_option_table, argc, argv, &args, &parsed);
	if (ret)
		return ret > 0 ? 0 : EXIT_USAGE;
	if (parsed.operand < argc) {
		sp_error("list: unexpected argument %s", QUOTED(argv[parsed.operand]));
		return EXIT_USAGE;
	}
	struct record_options defaults = {
		.frequency = LIST_FREQUENCY,
		.call_graph = CALL_GRAPH_FP,
		.stack_user_size = DEFAULT_STACK_USER_SIZE,
		.exclude_kernel = !kernel_samples_allowed(),
	};
	list_collectors(&defaults, stdout);
	list_classes(stdout);
	if (args.names)
		list_names(stdout);
	return 0;
}
