/*
 * stat_document.c: a `sigprof stat --json` document (docs/stat-json.md) read
 * with json-c into keyed figures for `sigprof diff` (diff.h lists the
 * keys; LKP derives its perf-stat.* figures the same way, ../lkp.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "sigprof/commands/diff.h"
#include "sigprof/base/runstats.h"
#include "sigprof/base/util.h"

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

static bool is_number(json_object *v)
{
	return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int));
}

static bool number_at(json_object *array, size_t i, double *out)
{
	json_object *v = i < json_object_array_length(array) ? json_object_array_get_idx(array, i) : NULL;
	if (!is_number(v))
		return false;
	*out = json_object_get_double(v);
	return true;
}

/* -I with one run: LKP's perf-stat.i.X, the mean over the intervals of each interval's rate (value / length). */
static bool interval_rate(json_object *intervals, const char *name, double *rate)
{
	double previous = 0, sum = 0;
	size_t counted = 0;
	for (size_t k = 0; k < json_object_array_length(intervals); k++) {
		json_object *iv = json_object_array_get_idx(intervals, k), *t, *values, *v;
		if (!json_object_object_get_ex(iv, "time_s", &t) || !is_number(t) ||
		    !(values = member(iv, "values", json_type_object)))
			continue;
		double now = json_object_get_double(t), length = now - previous;
		previous = now;
		if (length <= 0 || !json_object_object_get_ex(values, name, &v) || !is_number(v))
			continue;
		sum += json_object_get_double(v) / length;
		counted++;
	}
	if (counted)
		*rate = sum / (double)counted;
	return counted > 0;
}

/*
 * LKP's own keys for stat's derived figures (lkp.md), beside sigprof's
 * perf-stat.overall.NAME: the miss rate with LKP's '%' (an absolute change
 * in points, as LKP prints it), IPC in LKP's lower case, and CPI, its
 * inverse (cycles / instructions).
 */
static const struct lkp_derived_name {
	const char *name;  /* stat's derived figure */
	const char *key;   /* LKP's key */
	bool inverse;      /* 1 / value */
} lkp_derived_names[] = {
	{ "cache-miss-rate", "perf-stat.overall.cache-miss-rate%", false },
	{ "IPC", "perf-stat.overall.ipc", false },
	{ "IPC", "perf-stat.overall.cpi", true },
};

static void figure_rows(json_object *f, size_t run, double seconds, json_object *intervals, bool derived,
			diff_figure_fn add, void *ctx)
{
	json_object *name = member(f, "name", json_type_string), *values = member(f, "values", json_type_array);
	json_object *unit_o = member(f, "unit", json_type_string), *event = member(f, "event", json_type_string);
	json_object *supported = member(f, "supported", json_type_boolean);
	double v;
	if (!name || !values || (supported && !json_object_get_boolean(supported)) || !number_at(values, run, &v))
		return; /* not counted: no row, never a 0 */
	const char *n = json_object_get_string(name), *unit = unit_o ? json_object_get_string(unit_o) : "";
	char key[320], rate_unit[64];
	if (derived) {
		snprintf(key, sizeof(key), "perf-stat.overall.%s", n);
		add(ctx, run, key, unit[0] ? unit : "ratio", false, v);
		for (size_t i = 0; i < ARRAY_SIZE(lkp_derived_names); i++) {
			const struct lkp_derived_name *l = &lkp_derived_names[i];
			if (strcmp(n, l->name) == 0 && (!l->inverse || v != 0))
				add(ctx, run, l->key, unit[0] && !l->inverse ? unit : "ratio", false, l->inverse ? 1 / v : v);
		}
		return;
	}
	const char *count_unit = unit[0] ? unit : "count";
	/* a tracepoint's count (signals, futex calls) is exact; timers and hardware counters are not */
	bool exact = event && strchr(json_object_get_string(event), ':') != NULL;
	snprintf(key, sizeof(key), "perf-stat.total.%s", n);
	add(ctx, run, key, count_unit, exact, v);
	if (seconds > 0) {
		snprintf(key, sizeof(key), "perf-stat.ps.%s", n);
		snprintf(rate_unit, sizeof(rate_unit), "%s/s", count_unit);
		add(ctx, run, key, rate_unit, false, v / seconds);
	}
	double rate;
	if (intervals && interval_rate(intervals, n, &rate)) {
		snprintf(key, sizeof(key), "perf-stat.i.%s", n);
		snprintf(rate_unit, sizeof(rate_unit), "%s/s", count_unit);
		add(ctx, run, key, rate_unit, false, rate);
	}
}

/* figure_rows() for each run of a figure that has a value: at most its values array's length. */
static void figure_runs(json_object *f, size_t runs, const double *seconds, json_object *intervals, bool derived,
			diff_figure_fn add, void *ctx)
{
	json_object *values = json_object_is_type(f, json_type_object) ? member(f, "values", json_type_array) : NULL;
	size_t n = values ? json_object_array_length(values) : 0;
	for (size_t run = 0; run < n && run < runs; run++)
		figure_rows(f, run, seconds[run], intervals, derived, add, ctx);
}

/* The longest "values" array among an array of figures, or at_least. */
static size_t longest_values(json_object *figures, size_t at_least)
{
	for (size_t i = 0; i < json_object_array_length(figures); i++) {
		json_object *f = json_object_array_get_idx(figures, i);
		json_object *values = json_object_is_type(f, json_type_object) ? member(f, "values", json_type_array) : NULL;
		if (values && json_object_array_length(values) > at_least)
			at_least = json_object_array_length(values);
	}
	return at_least;
}

int diff_stat_document(const char *text, size_t max_runs, diff_figure_fn add, void *ctx, size_t *runs, char *err,
		       size_t errlen)
{
	enum json_tokener_error jerr = json_tokener_success;
	json_object *doc = json_tokener_parse_verbose(text, &jerr);
	if (!doc) {
		snprintf(err, errlen, "not a JSON document: %s", json_tokener_error_desc(jerr));
		return -EINVAL;
	}
	json_object *figures = member(doc, "figures", json_type_array), *runs_o = member(doc, "runs", json_type_int);
	json_object *elapsed = member(doc, "elapsed_s", json_type_object);
	json_object *elapsed_values = elapsed ? member(elapsed, "values", json_type_array) : NULL;
	int ret = -EINVAL;
	if (!member(doc, "version", json_type_int) || !figures || !runs_o || !elapsed_values) {
		snprintf(err, errlen, "not a sigprof stat --json document (no version, runs, figures or elapsed_s)");
		goto out;
	}
	int64_t n = json_object_get_int64(runs_o);
	if (n < 1 || (uint64_t)n > max_runs) {
		snprintf(err, errlen, "%lld runs: nothing to compare, or more than %zu", (long long)n, max_runs);
		goto out;
	}
	json_object *derived = member(doc, "derived", json_type_array);
	json_object *intervals = n == 1 ? member(doc, "intervals", json_type_array) : NULL;
	json_object *rusage = member(doc, "rusage", json_type_array);
	json_object *results = member(doc, "results", json_type_array);
	/*
	 * The work follows the values present, not the "runs" claimed: a
	 * document of 2000 figures claiming 10000 runs with a value or two
	 * each costs what those values cost.  Runs past the last value of any
	 * figure do not exist.
	 */
	size_t present = json_object_array_length(elapsed_values);
	present = longest_values(figures, present);
	present = derived ? longest_values(derived, present) : present;
	if (rusage && json_object_array_length(rusage) > present)
		present = json_object_array_length(rusage);
	if (results && json_object_array_length(results) > present)
		present = json_object_array_length(results);
	if ((size_t)n > present)
		n = (int64_t)present;
	if (n < 1) {
		snprintf(err, errlen, "no figure has a value");
		goto out;
	}
	double *seconds = xcalloc((size_t)n, sizeof(*seconds));
	for (size_t run = 0; run < (size_t)n; run++)
		if (number_at(elapsed_values, run, &seconds[run]))
			add(ctx, run, "time.elapsed_time", "s", false, seconds[run]);
	for (size_t i = 0; i < json_object_array_length(figures); i++)
		figure_runs(json_object_array_get_idx(figures, i), (size_t)n, seconds, intervals, false, add, ctx);
	for (size_t i = 0; derived && i < json_object_array_length(derived); i++)
		figure_runs(json_object_array_get_idx(derived, i), (size_t)n, seconds, NULL, true, add, ctx);
	free(seconds);
	/* the workload's own result figures (stat --json's "results", one object per run), in the unit result */
	for (size_t run = 0; results && run < json_object_array_length(results) && run < (size_t)n; run++) {
		json_object *res = json_object_array_get_idx(results, run);
		if (!res || !json_object_is_type(res, json_type_object))
			continue;
		json_object_object_foreach(res, name, value) {
			if (is_number(value))
				add(ctx, run, name, "result", false, json_object_get_double(value));
		}
	}
	/* the workload's rusage (stat --json's "rusage", one object per run): time.user_time, ... */
	for (size_t run = 0; rusage && run < json_object_array_length(rusage) && run < (size_t)n; run++) {
		json_object *ru = json_object_array_get_idx(rusage, run);
		if (!ru || !json_object_is_type(ru, json_type_object))
			continue;
		json_object_object_foreach(ru, field, value) {
			if (!is_number(value) || strcmp(field, "elapsed_time") == 0) /* elapsed_s gave it */
				continue;
			char key[320];
			snprintf(key, sizeof(key), "time.%s", field);
			add(ctx, run, key, lkp_time_unit(field), false, json_object_get_double(value));
		}
	}
	*runs = (size_t)n;
	ret = 0;
out:
	json_object_put(doc);
	return ret;
}

void diff_stat_command(const char *text, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	json_object *doc = json_tokener_parse(text);
	json_object *command = doc ? member(doc, "command", json_type_array) : NULL;
	size_t used = 0;
	for (size_t i = 0; command && i < json_object_array_length(command) && used < len; i++) {
		json_object *word = json_object_array_get_idx(command, i);
		if (!json_object_is_type(word, json_type_string))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? " " : "", json_object_get_string(word));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	json_object_put(doc);
}

int diff_stat_exit_status(const char *text)
{
	json_object *doc = json_tokener_parse(text);
	json_object *status = doc ? member(doc, "exit_status", json_type_int) : NULL;
	int64_t v = status ? json_object_get_int64(status) : -1;
	json_object_put(doc);
	return v >= 0 && v <= 255 ? (int)v : -1;
}
