/*
 * report.c: `sigprof report`, the options, the shared sorted views
 * (report.h) and the folded-stacks writer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sigprof/commands/archive.h"
#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/base/options.h"
#include "sigprof/model/datafile.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/base/term.h"
#include "sigprof/commands/report.h"
#include "sigprof/model/timeline.h"
#include "sigprof/base/util.h"

/* What the command line sets: the report's options, the loader's, the filters and the path rules. */
struct report_args {
	struct report_options o;
	struct profile_options po;
	struct profile_filter filter;
	struct path_rules *rules;
	unsigned formats;  /* FORMAT_BIT()s of the format options given */
};

static int take_format(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
static int take_output_file(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
static int take_weight(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
static int take_sort(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
static int take_sched_keys(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);
static int take_percent_limit(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen);

/* --folded-root's values, in the order of the option's values */
static const int folded_roots[] = { ROOT_COMM, ROOT_PID, ROOT_TID, ROOT_NONE };

#define R struct report_args
static const struct option_spec report_specs[] = {
	{ .short_name = 'i', .long_name = "input", .arg = "FILE", .help = "the recording",
	  .default_value = "sigprof.data", OPTION_STRING(R, o.input) },
	{ .long_name = "json", .group = 1,
	  .help = "one JSON object (docs/report-json.md); one format only: not with --folded or --figures",
	  OPTION_CALLBACK(take_format), .value = REPORT_JSON },
	{ .long_name = "folded", .group = 1, .help = "folded stacks, root first, for flame graphs",
	  OPTION_CALLBACK(take_format), .value = REPORT_FOLDED },
	{ .long_name = "pprof", .arg = "FILE", .group = 1,
	  .help = "write a gzipped pprof profile.proto to FILE, for go tool pprof (docs/outputs.md)",
	  OPTION_CALLBACK(take_output_file), .value = REPORT_PPROF },
	{ .long_name = "figures", .group = 1,
	  .help = "every figure under its stable key, one a line: key, value, unit, exact or estimated, tab-separated "
		  "(docs/figures.md)", OPTION_CALLBACK(take_format), .value = REPORT_FIGURES },
	{ .long_name = "html", .arg = "FILE", .group = 1,
	  .help = "write one self-contained HTML page to FILE: the report's tables and an interactive flame graph per "
		  "collector (docs/report-html.md)", OPTION_CALLBACK(take_output_file), .value = REPORT_HTML },
	/* one of the output formats too, outside group 1 only to keep the synopsis's line within its width */
	{ .long_name = "trace-event", .arg = "FILE",
	  .help = "write each thread's states over time to FILE as Chrome trace events, for Perfetto, chrome://tracing "
		  "and speedscope; one format only, as --json (docs/timeline.md)",
	  OPTION_CALLBACK(take_output_file), .value = REPORT_TRACE_EVENT },
	{ .short_name = 'n', .long_name = "top", .arg = "N", .help = "functions to list", .default_value = "15",
	  OPTION_UINT(R, o.view.top, 0, 1000000) },
	{ .long_name = "stacks", .arg = "N", .help = "stacks per path", .default_value = "3 in text, all in JSON",
	  OPTION_UINT(R, o.view.stacks_per_path, 0, 1000000) },
	{ .long_name = "sort", .arg = "KEY", .values = "self|total|name|sym",
	  .help = "order functions by self, total or name; perf's sym is self (the functions are by symbol); perf's dso "
		  "and comm get a line saying what shows them", .default_value = "self",
	  OPTION_CALLBACK_FIELD(R, o.sort, take_sort) },
	{ .short_name = 'v', .long_name = "header",
	  .help = "the recording's metadata line by line: every event of each collector, why a collector is "
		  "unavailable, why stacks stopped (the text report gives them one line each)",
	  OPTION_TRUE(R, o.full_header) },
	{ .long_name = "all", .help = "keep the path table's rows and columns that are all zero",
	  OPTION_TRUE(R, o.view.all) },
	{ .long_name = "stdio", .help = "the text report, as perf report --stdio (text is the default)",
	  OPTION_CALLBACK(take_format), .value = REPORT_TEXT },
	{ .long_name = "max-frames", .arg = "N", .help = "frames printed per stack in text", .default_value = "24",
	  OPTION_UINT(R, o.view.max_frames, 0, 100000) },
	{ .long_name = "collector", .arg = "NAME", .help = "the collector whose stacks --folded prints",
	  .default_value = "the first with samples", OPTION_STRING(R, o.collector) },
	{ .long_name = "weight", .arg = "W", .values = "samples|ns|wake|wall",
	  .help = "what a folded stack weighs: its samples, or the collector's time in ns (cpu-clock, sched wait, "
		  "futex wait, signal handler); wake: each wait's stack joined to its waker's (waiter;--;waker) "
		  "weighed by the ns waited; wall: every thread's wall-clock time, its state as the root frame "
		  "([running], [runnable], [blocked: futex WORD], [signal handler: SIGNAL])", .default_value = "samples",
	  OPTION_CALLBACK(take_weight) },
	{ .long_name = "folded-root", .arg = "R", .values = "comm|pid|tid|none",
	  .help = "begin each folded stack with its command, comm-PID or comm-PID/TID", .default_value = "none",
	  OPTION_CHOICE(R, o.root), .choices = folded_roots },
	{ .long_name = "path-rule", .arg = "R", .values = "GLOB=PATH", .flags = OPTION_REPEATABLE,
	  .help = "add a path rule GLOB=PATH, checked before the built-in ones",
	  OPTION_CALLBACK_FIELD(R, rules, cli_path_rule_option) },
	{ .long_name = "path-rules", .arg = "FILE", .help = "add the rules of FILE, one 'GLOB PATH' per line",
	  OPTION_CALLBACK_FIELD(R, rules, cli_path_rules_option) },
	CLI_INPUT_FORMAT_OPTION_SPEC(R, po.input_format),
	{ .long_name = "kallsyms", .arg = "FILE", .help = "kernel symbols from FILE instead of /proc/kallsyms",
	  OPTION_STRING(R, po.kallsyms) },
	{ .long_name = "sched-keys", .arg = "KEYS", .values = "lkp|stack",
	  .help = "lkp: key sched stacks like LKP's perf-sched figures (leaf first, five frames); stack: by "
		  "their frames", .default_value = "stack", OPTION_CALLBACK(take_sched_keys) },
	{ .long_name = "srcline", .help = "add file:line to frames and show inlined calls as frames (DWARF)",
	  OPTION_TRUE(R, po.srcline) },
	{ .long_name = "no-demangle", .help = "show C++ names as the symbol table has them (_ZN3foo3barEv)",
	  OPTION_TRUE(R, o.no_demangle) },
	{ .long_name = "debug-dirs", .arg = "DIRS", .help = "roots of separate debug files, colon-separated",
	  .default_value = "$SIGPROF_DEBUG_DIRS, else /usr/lib/debug", OPTION_STRING(R, o.debug_dirs) },
	{ .long_name = "symfs", .arg = "DIR", .values = "DIR|ARCHIVE",
	  .help = "read every file the recording names under DIR (DIR/PATH; debug files under DIR/usr/lib/debug), "
		  "or from an archive made by 'sigprof archive'", OPTION_STRING(R, o.symfs) },
	{ .long_name = "width", .arg = "N", .help = "fit the text report in N columns",
	  .default_value = "$COLUMNS, else the terminal's; no limit in a pipe",
	  OPTION_UINT(R, o.width, 0, 100000) },
	{ .long_name = "color", .arg = "WHEN", .values = "auto|always|never",
	  .help = "colour paths and kernel, user and sigprof's own frames; auto: when stdout is a terminal and NO_COLOR "
		  "is not set", .default_value = "auto", OPTION_CALLBACK_FIELD(R, o.color, cli_color_option) },
	{ .long_name = "no-pager",
	  .help = "never page; by default a report longer than the terminal goes through $PAGER (less -FRX)",
	  OPTION_TRUE(R, o.no_pager) },
	CLI_FILTER_OPTION_SPECS(R, filter),
	{ .long_name = "percent-limit", .arg = "PCT",
	  .help = "hide the paths, functions and stacks below PCT percent of their collector's samples",
	  OPTION_CALLBACK_FIELD(R, filter, take_percent_limit) },
	OPTION_HELP_SPEC,
};
#undef R

const struct option_table report_option_table = {
	.command = "sigprof report",
	.description = "Show where the samples of a recording land: the share of each path (sigreturn, "
		       "signal-deliver, signal-generate, futex-wait, futex-wake, futex-requeue, futex-other, recorder, other), "
		       "the top functions and the top call stacks of each path.",
	.specs = report_specs,
	.count = ARRAY_SIZE(report_specs),
};

/*
 * The output formats are one choice: --json and --folded together are an
 * error, not "the last wins".  An option that shapes only other formats
 * than the chosen one is ignored with a warning line, not silently (and
 * not refused: scripts that pass it with another format keep working).
 */
#define FORMAT_BIT(f) (1u << (f))
static const char *const format_names[] = { [REPORT_TEXT] = "the text report", [REPORT_JSON] = "--json",
					    [REPORT_FOLDED] = "--folded", [REPORT_FIGURES] = "--figures",
					    [REPORT_HTML] = "--html", [REPORT_PPROF] = "--pprof",
					    [REPORT_TRACE_EVENT] = "--trace-event" };

static const struct shaping_option {
	const char *long_name; /* the option's, in the table */
	const char *name;
	unsigned formats;  /* FORMAT_BIT()s of the formats it shapes */
} shaping_options[] = {
	{ "top", "--top (-n)", FORMAT_BIT(REPORT_TEXT) | FORMAT_BIT(REPORT_JSON) | FORMAT_BIT(REPORT_HTML) },
	{ "stacks", "--stacks", FORMAT_BIT(REPORT_TEXT) | FORMAT_BIT(REPORT_JSON) | FORMAT_BIT(REPORT_HTML) },
	{ "sort", "--sort", FORMAT_BIT(REPORT_TEXT) | FORMAT_BIT(REPORT_JSON) | FORMAT_BIT(REPORT_HTML) },
	{ "sched-keys", "--sched-keys", FORMAT_BIT(REPORT_TEXT) | FORMAT_BIT(REPORT_JSON) | FORMAT_BIT(REPORT_HTML) },
	{ "width", "--width", FORMAT_BIT(REPORT_TEXT) },
	{ "color", "--color", FORMAT_BIT(REPORT_TEXT) },
	{ "max-frames", "--max-frames", FORMAT_BIT(REPORT_TEXT) },
	{ "collector", "--collector", FORMAT_BIT(REPORT_FOLDED) },
	{ "weight", "--weight", FORMAT_BIT(REPORT_FOLDED) },
	{ "folded-root", "--folded-root", FORMAT_BIT(REPORT_FOLDED) },
	/* the figures are the recording's whatever the display: perf-profile keeps LKP's 0.5% floor (docs/figures.md) */
	{ "percent-limit", "--percent-limit", FORMAT_BIT(REPORT_TEXT) | FORMAT_BIT(REPORT_JSON) | FORMAT_BIT(REPORT_FOLDED) },
};

/* One error line for two output formats; a warning line for each option that does nothing in the chosen format. */
static int check_output_options(unsigned formats, const struct options_parsed *parsed, enum report_format format)
{
	int first = -1;
	for (int f = 0; f < (int)ARRAY_SIZE(format_names); f++) {
		if (!(formats & FORMAT_BIT(f)))
			continue;
		if (first >= 0)
			return sp_error("report: %s and %s are two output formats: give one of them", format_names[first],
					format_names[f]);
		first = f;
	}
	for (size_t i = 0; i < ARRAY_SIZE(shaping_options); i++) {
		const struct shaping_option *so = &shaping_options[i];
		if (!options_given(&report_option_table, parsed, so->long_name, 0) || (so->formats & FORMAT_BIT(format)))
			continue;
		struct strbuf applies = { 0 };
		int named = 0, count = __builtin_popcount(so->formats);
		for (int f = 0; f < (int)ARRAY_SIZE(format_names); f++)
			if (so->formats & FORMAT_BIT(f))
				sb_addf(&applies, "%s%s", !named++ ? "" : named == count ? " and " : ", ", format_names[f]);
		sp_warn("report: %s applies to %s, not to %s: ignored", so->name, applies.buf, format_names[format]);
		sb_free(&applies);
	}
	return 0;
}

/* --json, --folded, --figures, --stdio: the format .value; two of them are refused after the parse. */
static int take_format(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	struct report_args *a = field;
	a->formats |= FORMAT_BIT(s->value);
	a->o.format = (enum report_format)s->value;
	return 0;
}

/*
 * --pprof and --html write a file, renamed into place when whole: "-" is
 * not standard output there, and an empty name is no file.
 */
static int take_output_file(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	struct report_args *a = field;
	bool html = s->value == REPORT_HTML;
	if (!*arg) {
		snprintf(err, errlen, "--%s '': the file's name is empty", s->long_name);
		return -1;
	}
	if (strcmp(arg, "-") == 0) {
		snprintf(err, errlen, "--%s -: %s is written to a file, not to standard output: give its name",
			 s->long_name, html ? "an HTML page" : s->value == REPORT_PPROF ? "a pprof profile" : "a trace-event file");
		return -1;
	}
	if (html)
		a->o.html = arg;
	else if (s->value == REPORT_PPROF)
		a->o.pprof = arg;
	else
		a->o.trace_event = arg;
	return take_format(s, field, arg, err, errlen);
}

static int take_weight(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	struct report_args *a = field;
	int k = option_choice(s, arg);
	if (k < 0) {
		snprintf(err, errlen, "--weight %s: expected samples, ns, wake or wall", QUOTED(arg));
		return -1;
	}
	a->o.weight_ns = k == 1;
	a->o.weight_wake = k == 2;
	a->o.weight_wall = k == 3;
	return 0;
}

static int take_sched_keys(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	struct report_args *a = field;
	int k = option_choice(s, arg);
	if (k < 0) {
		snprintf(err, errlen, "--sched-keys %s: expected lkp or stack", QUOTED(arg));
		return -1;
	}
	a->o.view.sched_keys_lkp = k == 0;
	return 0;
}

static int take_percent_limit(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	return filter_set_percent_limit(field, arg, err, errlen) < 0 ? -1 : 0;
}

/*
 * --sort: ours (self, total, name), or perf's keys, comma-separated as
 * perf takes them: sym is the function table's own order (by symbol,
 * self samples); dso, comm, pid and tid have no table of their own here,
 * and one line says what shows them instead.
 */
static int take_sort(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	enum function_sort *sort = field;
	static const struct {
		const char *key;
		int sort;            /* enum function_sort, or -1: a pointer line */
		const char *instead; /* what shows it, for -1 */
	} keys[] = {
		{ "self", SORT_SELF, NULL },
		{ "total", SORT_TOTAL, NULL },
		{ "name", SORT_NAME, NULL },
		{ "sym", SORT_SELF, NULL },
		{ "symbol", SORT_SELF, NULL },
		{ "overhead", SORT_SELF, NULL },
		{ "dso", -1, "the Top functions table names each function's dso; --dso NAME keeps one" },
		{ "comm", -1, "--folded --folded-root comm splits the stacks by command; --comm NAME keeps one" },
		{ "pid", -1, "--folded --folded-root pid splits the stacks by process; --pid PID keeps one" },
		{ "tid", -1, "--folded --folded-root tid splits the stacks by thread; --tid TID keeps one" },
	};
	char key[32];
	for (const char *k = arg; *k;) {
		size_t len = strcspn(k, ",");
		snprintf(key, sizeof(key), "%.*s", (int)(len < sizeof(key) ? len : sizeof(key) - 1), k);
		size_t i = 0;
		while (i < ARRAY_SIZE(keys) && strcmp(keys[i].key, key) != 0)
			i++;
		if (i == ARRAY_SIZE(keys)) {
			snprintf(err, errlen, "--sort %s: %s is no key: expected self, total, name, or perf's sym, dso, comm",
				 QUOTED(arg), QUOTED(key));
			return -1;
		}
		if (keys[i].sort >= 0)
			*sort = (enum function_sort)keys[i].sort;
		else
			sp_warn("report: --sort %s: no table here is by %s: %s", key, key, keys[i].instead);
		k += len + (k[len] == ',');
	}
	return 0;
}

/* The command line into a: 0, 1 for --help (printed), or -1 (said). */
static int parse_report_args(int argc, char **argv, struct report_args *a)
{
	struct options_parsed parsed;
	int ret = cli_parse_options(&report_option_table, argc, argv, a, &parsed);
	if (ret)
		return ret;
	if (parsed.operand < argc)
		return sp_error("report: unexpected argument %s (the recording is named with -i FILE)",
				QUOTED(argv[parsed.operand]));
	a->o.view.stacks_limit_given = options_given(&report_option_table, &parsed, "stacks", 0);
	/* pprof's samples, and folded stacks per thread or by time, need the weight table (weights.h) */
	if (a->o.format == REPORT_PPROF || (a->o.format == REPORT_FOLDED && (a->o.weight_ns || a->o.root != ROOT_NONE)))
		a->po.weights = true;
	/*
	 * The threads' states (docs/timeline.md); every span where an output
	 * lists them.  The --html page summarizes its spans itself (a column of
	 * its timeline is the recording's length / 4096): its report document
	 * has "timeline": null.
	 */
	a->po.timeline = true;
	a->po.timeline_spans = a->o.format == REPORT_JSON || a->o.format == REPORT_TRACE_EVENT || a->o.format == REPORT_HTML;
	if (a->o.format != REPORT_TEXT && a->o.format != REPORT_JSON && a->o.format != REPORT_FOLDED)
		a->filter.percent_limit = 0; /* ignored, with the warning line of check_output_options() */
	return check_output_options(a->formats, &parsed, a->o.format);
}

int report_folded_collector(const struct profile *p, const char *name)
{
	for (int c = 0; c < p->ncollectors; c++)
		if (name ? strcmp(p->collectors[c].name, name) == 0 : p->collectors[c].samples > 0)
			return c;
	return -1;
}

/*
 * Folded stacks, root first, one line per stack: "a;b;c 42".  Frames are
 * named as in the text report, except that a frame no symbol names is
 * "[dso]", without its address, so that they merge; a kernel frame ends in
 * _[k] and an inlined one in _[i] (flamegraph.pl colours by them).  With
 * --folded-root the first frame is the command, comm-PID or comm-PID/TID
 * (as perf script | stackcollapse-perf.pl --pid/--tid put them); with
 * --weight ns the value is the collector's time (weights.h).
 */

int report_time_weight(const struct profile *p, int c)
{
	const struct collector *impl = p->collectors[c].impl;
	for (size_t i = 0; impl && i < impl->nweights; i++)
		if (impl->weights[i].is_time)
			return WEIGHT_OWN + (int)i;
	if (impl && impl->nweights)
		return -1;
	return profile_period_is_time(p, c) ? WEIGHT_PERIOD : -1;
}

static int folded_collector(const struct profile *p, const struct report_options *o)
{
	if (o->collector) {
		int c = profile_collector(p, o->collector);
		if (c < 0)
			return sp_error("report: --collector %s: %s has no such collector", QUOTED(o->collector), p->file);
		if (!p->collectors[c].samples)
			return sp_error("report: %s: collector %s has no samples: nothing to fold", p->file,
					QUOTED(o->collector));
		if (o->weight_ns && report_time_weight(p, c) < 0)
			return sp_error("report: --weight ns: collector %s measures no time (cpu with cpu-clock, sched, "
					"futex and signal do)", QUOTED(o->collector));
		return c;
	}
	for (int c = 0; c < p->ncollectors; c++)
		if (p->collectors[c].samples && (!o->weight_ns || report_time_weight(p, c) >= 0))
			return c;
	return sp_error("report: %s: no collector has samples%s: nothing to fold", p->file,
			o->weight_ns ? " with a time weight" : "");
}

/* One folded line: its text (root frame and stack, root first) and weight. */
struct folded_row {
	char *text;
	uint64_t value;
};

static int compare_folded_texts(const void *a, const void *b)
{
	const struct folded_row *x = a, *y = b;
	return strcmp(x->text, y->text);
}

/* Heaviest first, as without --folded-root; then by text, so that the order is fixed. */
static int compare_folded_rows(const void *a, const void *b)
{
	const struct folded_row *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return strcmp(x->text, y->text);
}

/*
 * A frame's text in a folded line: ';' separates frames and a newline
 * ends the line, so a name that holds one (a command named "a;b") has it
 * replaced (':', ' ') rather than read as two frames.
 */
static void sb_add_folded(struct strbuf *sb, const char *text)
{
	for (;;) {
		size_t n = strcspn(text, ";\n\r");
		sb_add(sb, text, n);
		if (!text[n])
			return;
		sb_add(sb, text[n] == ';' ? ":" : " ", 1);
		text += n + 1;
	}
}

static char *root_frame(const struct weight_key *k, enum folded_root root)
{
	char buf[128];
	const char *comm = k->comm && k->comm[0] ? k->comm : "[unknown]";
	if (root == ROOT_COMM)
		snprintf(buf, sizeof(buf), "%s", comm);
	else if (root == ROOT_PID)
		snprintf(buf, sizeof(buf), "%s-%u", comm, k->pid);
	else
		snprintf(buf, sizeof(buf), "%s-%u/%u", comm, k->pid, k->tid);
	struct strbuf sb = { 0 };
	sb_add_folded(&sb, buf);
	return sb.buf ? sb.buf : xstrdup("");
}

void report_folded_stack(const struct profile *p, uint32_t stack, struct strbuf *sb)
{
	const struct stack *s = &p->stacks.stacks[stack];
	const uint32_t *frames = stack_frames(&p->stacks, s);
	char buf[256];
	for (uint32_t k = s->nframes; k-- > 0;) {
		const struct frame *f = &p->stacks.frames[frames[k]];
		sb_add_folded(sb, frame_merged_label(f, buf, sizeof(buf)));
		if (frame_srcline(f, buf, sizeof(buf))) {
			sb_addstr(sb, ":");
			sb_add_folded(sb, buf);
		}
		/* flamegraph.pl colours frames by these suffixes: kernel, inlined */
		sb_addf(sb, "%s%s%s", f->kernel ? "_[k]" : "", f->inlined ? "_[i]" : "", k ? ";" : "");
	}
}

/* A folded line's text: the root frame (NULL: none), then the stack's frames, root first. */
static char *folded_text(const struct profile *p, const char *root, uint32_t stack, struct strbuf *line)
{
	sb_reset(line);
	if (root)
		sb_addf(line, "%s;", root);
	report_folded_stack(p, stack, line);
	return xstrdup(line->len ? line->buf : "");
}

/*
 * --weight wake: a line per pair of stacks of the waits a task ended, as
 * bcc's offwaketime folds them: the waiter's frames root first, "--", the
 * waker's frames at the wake leaf first, weighed by the ns waited;
 * heaviest first.
 */
static int report_folded_wakes(const struct profile *p, FILE *out)
{
	struct strbuf line = { 0 }, waker = { 0 };
	struct folded_row *rows = NULL;
	size_t lines = 0, cap = 0;
	for (int c = 0; c < p->ncollectors; c++) {
		const struct collector_analyzer *an = p->collectors[c].impl ? p->collectors[c].impl->analyzer : NULL;
		const struct wake_pair *pairs;
		size_t n = p->collectors[c].state && an->wake_pairs ? an->wake_pairs(p->collectors[c].state, &pairs) : 0;
		for (size_t i = 0; i < n; i++) {
			sb_reset(&line);
			sb_reset(&waker);
			report_folded_stack(p, pairs[i].waiter_stack, &line);
			sb_addstr(&line, ";--");
			if (pairs[i].waker_stack == COLLECTOR_NO_STACK) {
				sb_addstr(&line, ";[waker stack not recorded]");
			} else {
				report_folded_stack(p, pairs[i].waker_stack, &waker);
				for (size_t end = waker.len; end > 0;) { /* its frames, leaf first */
					size_t start = end;
					while (start > 0 && waker.buf[start - 1] != ';')
						start--;
					sb_addf(&line, ";%.*s", (int)(end - start), waker.buf + start);
					end = start ? start - 1 : 0;
				}
			}
			GROW(rows, cap, lines + 1);
			rows[lines++] = (struct folded_row){ xstrdup(line.buf), pairs[i].ns };
		}
	}
	sb_free(&line);
	sb_free(&waker);
	sort_items(rows, lines, sizeof(*rows), compare_folded_rows);
	for (size_t i = 0; i < lines; i++) {
		fprintf(out, "%s %llu\n", rows[i].text, (unsigned long long)rows[i].value);
		free(rows[i].text);
	}
	free(rows);
	if (!lines)
		return sp_error("report: --weight wake: %s: no wait was linked to a waking task (docs/waits.md)", p->file);
	return 0;
}

/* Lines of the same text merge, then heaviest first; prints and frees the rows, returns how many lines. */
static size_t print_folded_rows(struct folded_row *rows, size_t n, FILE *out)
{
	sort_items(rows, n, sizeof(*rows), compare_folded_texts);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept && strcmp(rows[kept - 1].text, rows[i].text) == 0) {
			rows[kept - 1].value += rows[i].value;
			free(rows[i].text);
			continue;
		}
		rows[kept++] = rows[i];
	}
	sort_items(rows, kept, sizeof(*rows), compare_folded_rows);
	for (size_t i = 0; i < kept; i++) {
		fprintf(out, "%s %llu\n", rows[i].text, (unsigned long long)rows[i].value);
		free(rows[i].text);
	}
	free(rows);
	return kept;
}

/*
 * --weight wall: the wall-clock profile (docs/timeline.md), every thread's
 * life as stacks weighed by ns with its state as the root frame, under
 * --folded-root's frame when given; merged over threads without.
 */
static int report_folded_wall(const struct profile *p, const struct report_options *o, FILE *out)
{
	const struct timeline *t = p->timeline;
	struct folded_row *rows = NULL;
	size_t n = 0, cap = 0;
	struct strbuf line = { 0 };
	char state[200];
	for (size_t i = 0; i < timeline_wall_count(t); i++) {
		const struct timeline_wall *w = timeline_wall_entry(t, i);
		const struct timeline_thread *th = timeline_thread(t, w->thread);
		sb_reset(&line);
		if (o->root != ROOT_NONE) {
			struct weight_key k = { .pid = th->pid, .tid = th->tid,
						.comm = proc_table_thread_comm_of(p->procs, th->pid, th->tid) };
			char *root = root_frame(&k, o->root);
			sb_addf(&line, "%s;", root);
			free(root);
		}
		sb_add_folded(&line, report_wall_root(p, th->pid, w->state, w->cause, w->signal, w->detail, state,
						      sizeof(state)));
		if (w->stack != TIMELINE_NO_STACK) {
			sb_addstr(&line, ";");
			report_folded_stack(p, w->stack, &line);
		}
		GROW(rows, cap, n + 1);
		rows[n++] = (struct folded_row){ xstrdup(line.buf), w->ns };
	}
	sb_free(&line);
	if (!print_folded_rows(rows, n, out))
		return report_no_threads_followed(p, "--weight wall");
	return 0;
}

static int report_folded(const struct profile *p, const struct report_options *o, FILE *out)
{
	if (o->weight_wake)
		return report_folded_wakes(p, out);
	if (o->weight_wall)
		return report_folded_wall(p, o, out);
	int c = folded_collector(p, o);
	if (c < 0)
		return c;
	struct folded_row *rows = NULL;
	size_t n = 0, cap = 0;
	struct strbuf line = { 0 };
	if (!p->weights) { /* per stack, by samples: the stack table has it */
		uint32_t *ids;
		size_t nids = view_stacks(p, c, -1, &ids);
		for (size_t i = 0; i < nids; i++) {
			GROW(rows, cap, n + 1);
			rows[n++] = (struct folded_row){ folded_text(p, NULL, ids[i], &line), p->stacks.stacks[ids[i]].count };
		}
		free(ids);
	} else {
		int kind = o->weight_ns ? report_time_weight(p, c) : WEIGHT_SAMPLES;
		for (size_t e = 0; e < p->weights->count; e++) {
			const struct weight_entry *we = &p->weights->entries[e];
			if ((int)we->key.collector != c || !we->values[kind])
				continue;
			char *root = o->root != ROOT_NONE ? root_frame(&we->key, o->root) : NULL;
			GROW(rows, cap, n + 1);
			rows[n++] = (struct folded_row){ folded_text(p, root, we->key.stack, &line), we->values[kind] };
			free(root);
		}
	}
	/*
	 * Lines of the same text merge: entries that differ only in what a line
	 * does not show (a label, a thread), and stacks of the same frames on
	 * two paths (a lock's contention ends, charged to the path of the wait).
	 */
	sb_free(&line);
	if (!print_folded_rows(rows, n, out) && o->weight_ns)
		sp_warn("report: %s: collector %s measured no time on any stack", p->file, p->collectors[c].name);
	return 0;
}

/*
 * Every figure under its key (view_figures()): "KEY\tVALUE\tUNIT\texact" or
 * "estimated", for scripts and for a comparison of runs.  Values print with
 * up to 15 significant digits (what a double holds exactly), integers
 * without a fraction.
 */
static void report_figures(const struct profile *p, FILE *out)
{
	struct figure_rows rows = { 0 };
	view_figures(p, &rows);
	if (rows.refused)
		sp_warn("report: %s: %zu figures under a key listed already were left out (a collector's bug: please "
			"report it)", p->file, rows.refused);
	for (size_t i = 0; i < rows.count; i++)
		fprintf(out, "%s\t%.15g\t%s\t%s\n", rows.rows[i].key, rows.rows[i].value, rows.rows[i].unit,
			rows.rows[i].exact ? "exact" : "estimated");
	figure_rows_free(&rows);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .o = { .input = "sigprof.data",
					.view = { .top = 15, .stacks_per_path = 3, .max_frames = 24 } },
				 .rules = path_rules_new() };
	a.po = (struct profile_options){ .rules = a.rules, .collectors = collector_table,
					 .ncollectors = collector_count, .filter = &a.filter };
	int parsed = parse_report_args(argc, argv, &a);
	if (parsed) {
		path_rules_free(a.rules);
		filter_free(&a.filter);
		return parsed > 0 ? 0 : EXIT_USAGE;
	}
	/* Settings of the symbolizer, for every symbol this report names. */
	symbolize_set_demangle(!a.o.no_demangle);
	symbolize_set_debug_dirs(a.o.debug_dirs ? a.o.debug_dirs : getenv("SIGPROF_DEBUG_DIRS"));
	char err[512];
	char *unpacked = NULL; /* --symfs ARCHIVE: where it was unpacked, removed at the end */
	if (a.o.symfs) {
		struct stat st;
		if (stat(a.o.symfs, &st) < 0) {
			sp_error("report: --symfs %s: %s", QUOTED(a.o.symfs), strerror(errno));
			path_rules_free(a.rules);
			filter_free(&a.filter);
			return EXIT_USAGE;
		}
		if (!S_ISDIR(st.st_mode) && archive_unpack(a.o.symfs, &unpacked, err, sizeof(err)) < 0) {
			sp_error("report: --symfs %s: %s", QUOTED(a.o.symfs), err);
			path_rules_free(a.rules);
			filter_free(&a.filter);
			return EXIT_USAGE;
		}
		symbolize_set_symfs(unpacked ? unpacked : a.o.symfs);
	}
	struct profile p;
	int ret = profile_load(a.o.input, &a.po, &p, err, sizeof(err));
	if (ret < 0) {
		sp_error("report: %s: %s", a.o.input, err);
		profile_free(&p);
		path_rules_free(a.rules);
		archive_remove(unpacked);
		filter_free(&a.filter);
		return EXIT_USAGE;
	}
	if (p.truncated)
		sp_warn("%s %s (%s); reporting the %llu samples it holds", a.o.input, profile_end_verb(&p),
			p.problem[0] ? p.problem : "no closing section", (unsigned long long)p.samples);
	else if (p.problem[0])
		sp_warn("%s: %s; reporting what came before", a.o.input, p.problem);
	ret = 0;
	if (a.o.format == REPORT_JSON) {
		report_json(&p, &a.o, stdout);
	} else if (a.o.format == REPORT_FOLDED) {
		ret = report_folded(&p, &a.o, stdout);
	} else if (a.o.format == REPORT_FIGURES) {
		report_figures(&p, stdout);
	} else if (a.o.format == REPORT_PPROF) {
		if ((ret = report_pprof(&p, a.o.pprof, err, sizeof(err))) < 0)
			sp_error("report: --pprof: %s", err);
	} else if (a.o.format == REPORT_HTML) {
		ret = report_html_file("report", a.o.html, NULL, &p, &a.o);
	} else if (a.o.format == REPORT_TRACE_EVENT) {
		ret = report_trace_event_file(&p, a.o.trace_event);
	} else {
		/* the terminal: its width and colour, and the pager for a report longer than the screen */
		a.o.view.width = term_width(STDOUT_FILENO, a.o.width);
		a.o.view.color = term_color_enabled((enum term_color_mode)a.o.color, STDOUT_FILENO);
		struct pager pg;
		FILE *out = pager_begin(&pg, !a.o.no_pager);
		report_text(&p, &a.o, out);
		if (pager_end(&pg) < 0)
			ret = -EPIPE; /* the pager's writing failed: said below as stdout's */
	}
	if (fflush(stdout) != 0 || ferror(stdout) || ret == -EPIPE) {
		sp_error("report: writing the report failed: %s", strerror(errno ? errno : EIO));
		ret = -EIO;
	}
	profile_free(&p);
	path_rules_free(a.rules);
	archive_remove(unpacked);
	filter_free(&a.filter);
	return ret < 0 ? EXIT_USAGE : 0;
}
