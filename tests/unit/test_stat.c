/*
 * test_stat.c: the pure parts of `sigprof stat` (stat.h): statistics over
 * runs, multiplexing scale, derived figures, the futex op filters and the
 * text layout.  Expected values are computed here from the definitions
 * (LKP's %stddev: population standard deviation over the mean, x100;
 * perf's scaling: value * enabled / running), never copied from the code.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/futex_op.h"
#include "sigprof/commands/stat.h"
#include "unit_helpers.h"

/* The population standard deviation written out from its definition. */
static double reference_stddev(const double *v, size_t n)
{
	double sum = 0, squares = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	double mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		squares += (v[i] - mean) * (v[i] - mean);
	return sqrt(squares / (double)n);
}

Test(stat, mean_and_population_stddev)
{
	/* the textbook set whose population stddev is 2 (the sample stddev would be 2.138) */
	const double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	size_t n = sizeof(v) / sizeof(v[0]);
	cr_assert_float_eq(stat_mean(v, n), 5.0, 1e-12);
	cr_assert_float_eq(stat_stddev(v, n), 2.0, 1e-12);
	cr_assert_float_eq(stat_stddev(v, n), reference_stddev(v, n), 1e-12);
	cr_assert_float_eq(stat_stddev_percent(v, n), 100.0 * 2.0 / 5.0, 1e-9);
	const double runs[] = { 1184, 1160, 1210 };
	cr_assert_float_eq(stat_stddev_percent(runs, 3), 100 * reference_stddev(runs, 3) / stat_mean(runs, 3), 1e-9);
}

Test(stat, stddev_edges)
{
	const double same[] = { 1000, 1000, 1000 };
	cr_assert_eq(stat_stddev(same, 3), 0);
	cr_assert_eq(stat_stddev_percent(same, 3), 0);
	const double one[] = { 42 };
	cr_assert_eq(stat_stddev(one, 1), 0, "one run has no spread");
	cr_assert_eq(stat_mean(NULL, 0), 0);
	const double zero_mean[] = { -1, 1 };
	cr_assert_eq(stat_stddev_percent(zero_mean, 2), 0, "a zero mean gives no percentage, not inf");
	const double negative[] = { -10, -20 };
	cr_assert_gt(stat_stddev_percent(negative, 2), 0, "the percentage is of |mean|");
}

Test(stat, multiplexed_counts_are_scaled)
{
	double scaled, share;
	struct counter_reading full = { .value = 1234, .enabled = 5000, .running = 5000 };
	cr_assert(counter_scale(&full, &scaled, &share));
	cr_assert_eq(scaled, 1234);
	cr_assert_eq(share, 1);

	struct counter_reading part = { .value = 1000, .enabled = 8000, .running = 2000 };
	cr_assert(counter_scale(&part, &scaled, &share));
	cr_assert_float_eq(scaled, 1000.0 * 8000.0 / 2000.0, 1e-9);
	cr_assert_float_eq(share, 2000.0 / 8000.0, 1e-12);

	struct counter_reading never_ran = { .value = 0, .enabled = 8000, .running = 0 };
	cr_assert_not(counter_scale(&never_ran, &scaled, &share), "enabled but never on the PMU: no estimate");

	struct counter_reading never_enabled = { 0 };
	cr_assert(counter_scale(&never_enabled, &scaled, &share), "a workload that exited at once counted 0 exactly");
	cr_assert_eq(scaled, 0);
}

Test(stat, interval_deltas_add_up_to_the_total)
{
	struct counter_reading reads[] = { { 0, 0, 0 }, { 100, 10, 10 }, { 250, 25, 25 }, { 1000, 40, 40 } };
	struct counter_reading sum = { 0 };
	for (size_t i = 1; i < sizeof(reads) / sizeof(reads[0]); i++) {
		struct counter_reading d = counter_delta(&reads[i], &reads[i - 1]);
		sum.value += d.value;
		sum.enabled += d.enabled;
		sum.running += d.running;
	}
	cr_assert_eq(sum.value, reads[3].value);
	cr_assert_eq(sum.enabled, reads[3].enabled);
}

Test(stat, inputs_of_generic_events)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CACHE_MISSES };
	cr_assert_eq(stat_input_of(&attr), STAT_CACHE_MISSES);
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	cr_assert_eq(stat_input_of(&attr), STAT_INSTRUCTIONS);
	attr.config = PERF_COUNT_HW_BRANCH_MISSES;
	cr_assert_eq(stat_input_of(&attr), STAT_NO_INPUT);
	attr = (struct perf_event_attr){ .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK };
	cr_assert_eq(stat_input_of(&attr), STAT_TASK_CLOCK);
	attr = (struct perf_event_attr){ .type = PERF_TYPE_TRACEPOINT, .config = PERF_COUNT_HW_CPU_CYCLES };
	cr_assert_eq(stat_input_of(&attr), STAT_NO_INPUT, "a tracepoint whose id happens to be 0 is not cycles");
	cr_assert_str_eq(stat_input_name(STAT_CACHE_REFERENCES), "cache-references");
}

static const struct derived_figure *figure_named(const char *name)
{
	for (size_t i = 0; i < derived_figure_count; i++)
		if (strcmp(derived_figures[i].name, name) == 0)
			return &derived_figures[i];
	cr_assert_fail("no derived figure %s", name);
	return NULL;
}

Test(stat, derived_figures_from_their_inputs)
{
	struct stat_inputs in = { 0 };
	in.value[STAT_CYCLES] = 3127.0 * 1.674e8;
	in.value[STAT_CACHE_MISSES] = 1.674e8;
	in.value[STAT_CACHE_REFERENCES] = 4.096e8;
	in.value[STAT_INSTRUCTIONS] = 1.674e8 / 0.36 * 1000;
	in.counted[STAT_CYCLES] = in.counted[STAT_CACHE_MISSES] = in.counted[STAT_CACHE_REFERENCES] = true;
	in.counted[STAT_INSTRUCTIONS] = true;
	double v;
	cr_assert_eq(derived_value(figure_named("MPKI"), &in, &v), 0);
	cr_assert_float_eq(v, 1000 * in.value[STAT_CACHE_MISSES] / in.value[STAT_INSTRUCTIONS], 1e-9);
	cr_assert_float_eq(v, 0.36, 1e-9, "the seed report's MPKI");
	cr_assert_eq(derived_value(figure_named("cycles-between-cache-misses"), &in, &v), 0);
	cr_assert_float_eq(v, 3127, 1e-6);
	cr_assert_eq(derived_value(figure_named("cache-miss-rate"), &in, &v), 0);
	cr_assert_float_eq(v, 100 * in.value[STAT_CACHE_MISSES] / in.value[STAT_CACHE_REFERENCES], 1e-9);
	cr_assert_eq(derived_value(figure_named("IPC"), &in, &v), 0);
	cr_assert_float_eq(v, in.value[STAT_INSTRUCTIONS] / in.value[STAT_CYCLES], 1e-12);
}

Test(stat, derived_figures_with_missing_inputs_are_not_zero)
{
	struct stat_inputs in = { 0 };
	in.value[STAT_CACHE_MISSES] = 500;
	in.counted[STAT_CACHE_MISSES] = true;
	double v = -1;
	cr_assert_eq(derived_value(figure_named("MPKI"), &in, &v), -ENODATA, "instructions were not counted");
	cr_assert_eq(v, -1, "no value is made up");
	in.counted[STAT_INSTRUCTIONS] = true; /* counted, and 0 */
	cr_assert_eq(derived_value(figure_named("MPKI"), &in, &v), -EDOM);
	in.value[STAT_TASK_CLOCK] = 2e9;
	in.counted[STAT_TASK_CLOCK] = true;
	in.value[STAT_ELAPSED] = 1e9;
	in.counted[STAT_ELAPSED] = true;
	cr_assert_eq(derived_value(figure_named("CPUs-utilized"), &in, &v), 0);
	cr_assert_float_eq(v, 2.0, 1e-12);
}

Test(stat, futex_op_filters_select_the_command_with_any_flags)
{
	for (unsigned cmd = FOP_WAIT; cmd <= FOP_LOCK_PI2; cmd++) {
		char filter[128];
		futex_op_filter(cmd, filter, sizeof(filter));
		/* every value the filter names decodes to cmd, and there is one per flag combination */
		unsigned seen_flags = 0, terms = 0;
		for (const char *p = filter; (p = strstr(p, "op == ")); p += 6) {
			unsigned op = (unsigned)strtoul(p + 6, NULL, 10);
			struct futex_op decoded = futex_op_decode(op);
			cr_assert_eq(decoded.id, (enum futex_op_id)cmd, "'%s' selects op %u, not %s", filter, op,
				     futex_op_name((enum futex_op_id)cmd));
			seen_flags |= 1u << (decoded.private_flag + 2 * decoded.clock_realtime);
			terms++;
		}
		cr_assert_eq(terms, 4, "%s", filter);
		cr_assert_eq(seen_flags, 0xf, "'%s' misses a flag combination", filter);
		cr_assert_null(strchr(filter, '('), "the kernel's filter grammar has no arithmetic: %s", filter);
	}
}

/* Parse a figure line back: value text, unit, name, and what follows. */
static void split_line(const char *line, char *value, char *unit, char *name)
{
	cr_assert_eq(line[strlen(line) - 1], '\n');
	cr_assert_neq(line[strlen(line) - 2], ' ', "no trailing blanks: '%s'", line);
	/* the value is right-aligned in 18 columns, then the unit in 4, then the name */
	cr_assert_eq(sscanf(line, "%18[^\n]", value), 1);
	memmove(value, value + strspn(value, " "), strlen(value + strspn(value, " ")) + 1);
	if (sscanf(line + 19, "%4[^ ]", unit) != 1)
		unit[0] = '\0';
	cr_assert_eq(sscanf(line + 24, "%63s", name), 1, "'%s'", line);
}

Test(stat, line_of_one_run)
{
	struct strbuf sb = { 0 };
	const double runs[] = { 1000 };
	struct figure_line l = { .name = "signals-generated", .unit = "", .mean = stat_mean(runs, 1), .decimals = 0,
				 .running_percent = 100, .note = "signal:signal_generate" };
	stat_format_line(&sb, &l);
	char value[64], unit[8], name[64], expected[64];
	split_line(sb.buf, value, unit, name);
	snprintf(expected, sizeof(expected), "%.0f", stat_mean(runs, 1));
	cr_assert_str_eq(value, expected);
	cr_assert_str_eq(unit, "");
	cr_assert_str_eq(name, l.name);
	cr_assert_null(strstr(sb.buf, "\u00b1"), "one run shows no stddev: %s", sb.buf);
	cr_assert_null(strstr(sb.buf, "running"), "%s", sb.buf);
	cr_assert(strstr(sb.buf, "# signal:signal_generate\n"), "%s", sb.buf);
	sb_free(&sb);
}

Test(stat, line_of_many_runs_has_mean_and_stddev)
{
	const double runs[] = { 9031, 9207, 9120 };
	struct figure_line l = { .name = "task-clock", .unit = "ms", .mean = stat_mean(runs, 3), .decimals = 2,
				 .show_stddev = true, .stddev_percent = stat_stddev_percent(runs, 3),
				 .running_percent = 100 };
	struct strbuf sb = { 0 };
	stat_format_line(&sb, &l);
	char value[64], unit[8], name[64], expected[64];
	split_line(sb.buf, value, unit, name);
	snprintf(expected, sizeof(expected), "%.2f", stat_mean(runs, 3));
	cr_assert_str_eq(value, expected);
	cr_assert_str_eq(unit, "ms");
	const char *pm = strstr(sb.buf, "\u00b1");
	cr_assert(pm, "%s", sb.buf);
	double shown;
	cr_assert_eq(sscanf(pm + strlen("\u00b1"), " %lf%%", &shown), 1, "%s", sb.buf);
	cr_assert_float_eq(shown, 100 * reference_stddev(runs, 3) / stat_mean(runs, 3), 0.005);
	sb_free(&sb);
}

Test(stat, fractional_mean_of_a_count_keeps_two_decimals)
{
	const double runs[] = { 5, 6, 6 };
	struct figure_line l = { .name = "context-switches", .unit = "", .mean = stat_mean(runs, 3), .decimals = 0,
				 .show_stddev = true, .stddev_percent = stat_stddev_percent(runs, 3),
				 .running_percent = 100 };
	struct strbuf sb = { 0 };
	stat_format_line(&sb, &l);
	char value[64], unit[8], name[64], expected[64];
	split_line(sb.buf, value, unit, name);
	snprintf(expected, sizeof(expected), "%.2f", stat_mean(runs, 3));
	cr_assert_str_eq(value, expected, "a mean of 5.67 is not shown as 6");
	sb_free(&sb);
}

Test(stat, multiplexed_and_unsupported_lines)
{
	struct counter_reading r = { .value = 300, .enabled = 1000, .running = 400 };
	double scaled, share;
	cr_assert(counter_scale(&r, &scaled, &share));
	struct figure_line l = { .name = "cache-misses", .unit = "", .mean = scaled, .decimals = 0,
				 .running_percent = 100 * share };
	struct strbuf sb = { 0 };
	stat_format_line(&sb, &l);
	char value[64], unit[8], name[64], expected[64];
	split_line(sb.buf, value, unit, name);
	snprintf(expected, sizeof(expected), "%.0f", 300.0 * 1000 / 400);
	cr_assert_str_eq(value, expected);
	const char *running = strstr(sb.buf, "(running ");
	cr_assert(running, "%s", sb.buf);
	double percent;
	cr_assert_eq(sscanf(running, "(running %lf%%)", &percent), 1);
	cr_assert_float_eq(percent, 100.0 * 400 / 1000, 0.005);

	sb_reset(&sb);
	const char *why = "no hardware PMU for it on this machine";
	l = (struct figure_line){ .name = "cycles", .unit = "%", .mean = 0, .running_percent = 100, .not_counted = why };
	stat_format_line(&sb, &l);
	cr_assert(strstr(sb.buf, "<not supported>"), "%s", sb.buf);
	cr_assert(strstr(sb.buf, why), "the reason is printed: %s", sb.buf);
	cr_assert_null(strstr(sb.buf, " 0 "), "never a 0 for what was not counted: %s", sb.buf);
	cr_assert_null(strstr(sb.buf, "%"), "no unit after <not supported>: %s", sb.buf);
	sb_free(&sb);
}

Test(stat, interval_line_starts_with_the_time)
{
	struct figure_line l = { .name = "sigreturns", .unit = "", .mean = 12345, .running_percent = 100 };
	struct strbuf sb = { 0 };
	double t = 0.1 * 3;
	stat_format_interval(&sb, t, &l);
	double shown_t, shown_v;
	char name[64];
	cr_assert_eq(sscanf(sb.buf, "%lf %lf %63s", &shown_t, &shown_v, name), 3, "%s", sb.buf);
	cr_assert_float_eq(shown_t, t, 1e-6);
	cr_assert_eq(shown_v, l.mean);
	cr_assert_str_eq(name, l.name);
	sb_free(&sb);
}


/* name as groff writes it: every '-' escaped. */
static void groff_name(const char *name, char *buf, size_t len)
{
	size_t k = 0;
	for (const char *p = name; *p && k + 3 < len; p++) {
		if (*p == '-')
			buf[k++] = '\\';
		buf[k++] = *p;
	}
	buf[k] = '\0';
}

Test(stat, man_page_describes_every_figure)
{
	char *doc = read_text_file("docs/sigprof.1");
	char *section = strstr(doc, "\n.SS stat\n");
	cr_assert(section, "docs/sigprof.1 has no stat section");
	char *end = strstr(section + 1, "\n.S");
	if (end)
		*end = '\0';
	char name[128];
	for (size_t i = 0; i < stat_default_event_count; i++) {
		groff_name(stat_default_events[i].name, name, sizeof(name));
		cr_assert(strstr(section, name), "the stat section does not name %s", stat_default_events[i].name);
		cr_assert(strstr(section, stat_default_events[i].event) ||
				  (groff_name(stat_default_events[i].event, name, sizeof(name)), strstr(section, name)),
			  "the stat section does not say %s counts %s", stat_default_events[i].name,
			  stat_default_events[i].event);
	}
	for (size_t i = 0; i < derived_figure_count; i++) {
		groff_name(derived_figures[i].name, name, sizeof(name));
		cr_assert(strstr(section, name), "the stat section does not name %s", derived_figures[i].name);
		cr_assert(strstr(section, derived_figures[i].formula), "the stat section does not give %s = %s",
			  derived_figures[i].name, derived_figures[i].formula);
	}
	for (unsigned cmd = FOP_WAIT; cmd <= FOP_LOCK_PI2; cmd++)
		cr_assert(strstr(section, futex_op_name((enum futex_op_id)cmd)), "no futex op %s",
			  futex_op_name((enum futex_op_id)cmd));
	free(doc);
}
