/*
 * results.c: the workload's result lines into figures under lkp-tests'
 * names (results.h lists them; docs/results.md explains them to users).
 *
 * Each built-in parser is a function of one line and the parser's state:
 * perf bench says which benchmark runs in its "# Running 'futex/hash'
 * benchmark:" line, stress-ng starts its table with a "(secs)" line,
 * hackbench says its tasks and messages before its "Time:" line.  Our own
 * code, written from the programs' output (tests/fixtures/results/) and
 * the keys lkp-tests' stats/stress-ng, stats/perf-bench-futex,
 * stats/perf-bench-sched-pipe and programs/hackbench/parse give.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/results.h"
#include "sigprof/base/util.h"

const struct result_parser_info result_parser_infos[] = {
	{ "stress-ng --metrics, --metrics-brief",
	  "the metrics table after its \"(secs)\" heading: STRESSOR OPS REAL USR SYS OPS/S(real) OPS/S(usr+sys) ...",
	  "stress-ng.STRESSOR.ops, stress-ng.STRESSOR.ops_per_sec (bogo ops/s of real time)" },
	{ "perf bench futex hash, lock-pi", "Averaged N operations/sec (+- X%), total secs = S",
	  "perf-bench-futex.ops/s" },
	{ "perf bench futex wake", "Wokeup N of M threads in X ms (+-Y%)", "perf-bench-futex.wakeup_ms" },
	{ "perf bench futex requeue", "Requeued N of M threads in X ms (+-Y%)", "perf-bench-futex.requeue_ms" },
	{ "perf bench futex wake-parallel", "Avg per-thread latency (waking N/M threads) in X ms (+-Y%)",
	  "perf-bench-futex.wakeup_latency_ms" },
	{ "perf bench sched pipe", "N usecs/op, N ops/sec",
	  "perf-bench-sched-pipe.ops_per_sec, perf-bench-sched-pipe.usecs_per_op" },
	{ "perf bench sched messaging", "Total time: X [sec]", "perf-bench-sched-messaging.total_time_s" },
	{ "hackbench", "Running in ... mode with G groups using F file descriptors each (== T tasks); Each sender "
		       "will pass M messages of B bytes; Time: S",
	  "hackbench.throughput (KB of messages per second of the best time), hackbench.time_s (the best time)" },
};
const size_t result_parser_info_count = ARRAY_SIZE(result_parser_infos);

struct user_metric {
	char name[RESULT_NAME_MAX];
	regex_t regex;
};

struct result_parser {
	struct result_figure figures[RESULT_MAX];
	size_t count;
	struct user_metric metrics[RESULT_METRICS_MAX];
	size_t nmetrics;
	char bench[64];          /* perf bench's "futex/hash" */
	bool stress_ng_table;    /* after stress-ng's "(secs)" heading */
	double hackbench_tasks, hackbench_messages, hackbench_bytes, hackbench_best;
};

struct result_parser *result_parser_new(void)
{
	return xcalloc(1, sizeof(struct result_parser));
}

void result_parser_free(struct result_parser *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmetrics; i++)
		regfree(&p->metrics[i].regex);
	free(p);
}

void result_parser_reset(struct result_parser *p)
{
	p->count = 0;
	p->bench[0] = '\0';
	p->stress_ng_table = false;
	p->hackbench_tasks = p->hackbench_messages = p->hackbench_bytes = p->hackbench_best = 0;
}

static void set_figure(struct result_parser *p, const char *name, const char *unit, double value)
{
	if (!isfinite(value))
		return;
	size_t i = 0;
	while (i < p->count && strcmp(p->figures[i].name, name) != 0)
		i++;
	if (i == p->count) {
		if (p->count == RESULT_MAX)
			return;
		p->count++;
		snprintf(p->figures[i].name, sizeof(p->figures[i].name), "%s", name);
	}
	snprintf(p->figures[i].unit, sizeof(p->figures[i].unit), "%s", unit);
	p->figures[i].value = value;
}

size_t result_parser_figures(const struct result_parser *p, const struct result_figure **out)
{
	*out = p->figures;
	return p->count;
}

static bool name_character(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._-/%", c);
}

int result_parser_add_metric(struct result_parser *p, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec) {
		snprintf(err, errlen, "expected NAME=REGEX (a regular expression with one group that captures a number)");
		return -EINVAL;
	}
	size_t len = (size_t)(eq - spec);
	for (size_t i = 0; i < len; i++)
		if (!name_character(spec[i])) {
			snprintf(err, errlen, "the name may hold letters, digits and ._-/%% only");
			return -EINVAL;
		}
	if (len >= RESULT_NAME_MAX) {
		snprintf(err, errlen, "the name is longer than %d bytes", RESULT_NAME_MAX - 1);
		return -EINVAL;
	}
	if (p->nmetrics == RESULT_METRICS_MAX) {
		snprintf(err, errlen, "more than %d metrics", RESULT_METRICS_MAX);
		return -EINVAL;
	}
	struct user_metric *m = &p->metrics[p->nmetrics];
	int ret = regcomp(&m->regex, eq + 1, REG_EXTENDED);
	if (ret) {
		char why[128];
		regerror(ret, &m->regex, why, sizeof(why));
		snprintf(err, errlen, "the regular expression does not compile: %s", why);
		return -EINVAL;
	}
	if (m->regex.re_nsub != 1) {
		snprintf(err, errlen, "the regular expression has %zu groups: give exactly one, around the number",
			 (size_t)m->regex.re_nsub);
		regfree(&m->regex);
		return -EINVAL;
	}
	snprintf(m->name, sizeof(m->name), "%.*s", (int)len, spec);
	p->nmetrics++;
	return 0;
}

/* The blank-separated words of a line (at most max; the rest ignored). */
static size_t split_words(char *line, char **words, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *w = strtok_r(line, " \t\r", &save); w && n < max; w = strtok_r(NULL, " \t\r", &save))
		words[n++] = w;
	return n;
}

/* A whole word that is a number (strtod's), into *v. */
static bool word_number(const char *w, double *v)
{
	char *end;
	*v = strtod(w, &end);
	return end != w && !*end && isfinite(*v);
}

/* The number after the first occurrence of prefix in line (strtod's), into *v. */
static bool number_after(const char *line, const char *prefix, double *v)
{
	const char *at = strstr(line, prefix);
	if (!at)
		return false;
	char *end;
	*v = strtod(at + strlen(prefix), &end);
	return end != at + strlen(prefix) && isfinite(*v);
}

/* The number before " suffix" in line: "15003 ops/sec" */
static bool number_before(const char *line, const char *suffix, double *v)
{
	const char *at = strstr(line, suffix);
	if (!at)
		return false;
	const char *start = at;
	while (start > line && start[-1] == ' ')
		start--;
	while (start > line && strchr("0123456789.+-eE", start[-1]))
		start--;
	char *end;
	*v = strtod(start, &end);
	return end != start && isfinite(*v);
}

/*
 * stress-ng: "stress-ng: metrc: [PID] timer 5440 1.02 0.04 0.18 5319.96
 * 25372.31 [20.97 2540]" after the "(secs)" heading (before 0.10 the same
 * under "info:"): the stressor, then at least six numbers.
 */
static void parse_stress_ng(struct result_parser *p, const char *line)
{
	if (strncmp(line, "stress-ng: ", 11) != 0)
		return;
	if (strstr(line, "(secs)")) {
		p->stress_ng_table = true;
		return;
	}
	if (!p->stress_ng_table)
		return;
	char copy[1024], *w[16];
	snprintf(copy, sizeof(copy), "%s", line);
	size_t n = split_words(copy, w, ARRAY_SIZE(w));
	double v[6];
	if (n < 10 || w[2][0] != '[')
		return;
	for (int i = 0; i < 6; i++)
		if (!word_number(w[4 + i], &v[i]))
			return;
	char name[RESULT_NAME_MAX];
	snprintf(name, sizeof(name), "stress-ng.%.60s.ops", w[3]);
	set_figure(p, name, "ops", v[0]);
	snprintf(name, sizeof(name), "stress-ng.%.60s.ops_per_sec", w[3]);
	set_figure(p, name, "ops/s", v[4]);
}

/* perf bench: "# Running 'futex/hash' benchmark:" names the benchmark of the lines that follow. */
static void parse_perf_bench(struct result_parser *p, const char *line)
{
	const char *running = strstr(line, "# Running '");
	if (running == line) {
		const char *name = line + 11, *quote = strchr(name, '\'');
		if (quote)
			snprintf(p->bench, sizeof(p->bench), "%.*s", (int)(quote - name), name);
		return;
	}
	double v;
	/* LKP's stats/perf-bench-futex reads this line whatever the benchmark (hash, lock-pi) */
	if (strncmp(line, "Averaged ", 9) == 0 && strstr(line, " operations/sec") && number_after(line, "Averaged ", &v)) {
		set_figure(p, "perf-bench-futex.ops/s", "ops/s", v);
		return;
	}
	/* the summary lines of wake, requeue, wake-parallel (not their "[Run N]: ..." lines) */
	static const struct { const char *starts, *key; } futex_latencies[] = {
		{ "Wokeup ", "perf-bench-futex.wakeup_ms" },
		{ "Requeued ", "perf-bench-futex.requeue_ms" },
		{ "Avg per-thread latency ", "perf-bench-futex.wakeup_latency_ms" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(futex_latencies); i++)
		if (strncmp(line, futex_latencies[i].starts, strlen(futex_latencies[i].starts)) == 0 &&
		    number_before(line, " ms", &v)) {
			set_figure(p, futex_latencies[i].key, "ms", v);
			return;
		}
	if (strcmp(p->bench, "sched/pipe") == 0) {
		if (strstr(line, " ops/sec") && number_before(line, "ops/sec", &v))
			set_figure(p, "perf-bench-sched-pipe.ops_per_sec", "ops/s", v);
		else if (strstr(line, " usecs/op") && number_before(line, "usecs/op", &v))
			set_figure(p, "perf-bench-sched-pipe.usecs_per_op", "us/op", v);
	} else if (strcmp(p->bench, "sched/messaging") == 0 && number_after(line, "Total time: ", &v)) {
		set_figure(p, "perf-bench-sched-messaging.total_time_s", "s", v);
	}
}

/* hackbench (rt-tests): tasks and messages first, then "Time: S"; LKP's throughput is KB of the best time. */
static void parse_hackbench(struct result_parser *p, const char *line)
{
	double v;
	if (strncmp(line, "Running in ", 11) == 0 && number_after(line, "(== ", &v))
		p->hackbench_tasks = v;
	else if (strncmp(line, "Each sender ", 12) == 0) {
		double bytes;
		const char *pass = strstr(line, " pass ") ? " pass " : " passed ";
		if (number_after(line, pass, &v) && number_after(line, " messages of ", &bytes)) {
			p->hackbench_messages = v;
			p->hackbench_bytes = bytes;
		}
	} else if (strncmp(line, "Time: ", 6) == 0 && number_after(line, "Time: ", &v) && v > 0 && p->hackbench_tasks) {
		if (!p->hackbench_best || v < p->hackbench_best)
			p->hackbench_best = v;
		/* (tasks * messages * bytes) >> 10, as programs/hackbench/parse computes it */
		double kb = floor(p->hackbench_tasks * p->hackbench_messages * p->hackbench_bytes / 1024);
		set_figure(p, "hackbench.throughput", "KB/s", kb / p->hackbench_best);
		set_figure(p, "hackbench.time_s", "s", p->hackbench_best);
	}
}

static void parse_user_metrics(struct result_parser *p, const char *line)
{
	for (size_t i = 0; i < p->nmetrics; i++) {
		regmatch_t m[2];
		if (regexec(&p->metrics[i].regex, line, 2, m, 0) != 0 || m[1].rm_so < 0)
			continue;
		char number[64], *end;
		snprintf(number, sizeof(number), "%.*s", (int)(m[1].rm_eo - m[1].rm_so), line + m[1].rm_so);
		double v = strtod(number, &end);
		if (end != number && !*end)
			set_figure(p, p->metrics[i].name, "", v);
	}
}

void result_parser_line(struct result_parser *p, const char *data, size_t len)
{
	char line[1024];
	if (len >= sizeof(line))
		len = sizeof(line) - 1; /* a result line is short: the start of a long one is enough */
	memcpy(line, data, len);
	line[len] = '\0';
	for (char *c = line; *c; c++)
		if (*c == '\r' || *c == '\n')
			*c = '\0';
	/* perf bench indents its figures: "     Total time: 1.332 [sec]" */
	const char *text = line;
	while (*text == ' ' || *text == '\t')
		text++;
	parse_stress_ng(p, text);
	parse_perf_bench(p, text);
	parse_hackbench(p, text);
	parse_user_metrics(p, line);
}

bool result_builtin_name(const char *name)
{
	static const char *const prefixes[] = { "stress-ng.", "perf-bench-", "hackbench." };
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}
