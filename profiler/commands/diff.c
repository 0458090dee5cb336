/*
 * diff.c: `sigprof diff`, two sets of runs compared the way the kernel test
 * robot compares two kernels.
 *
 * Each input is a run (or, for a `sigprof stat --json` document, its -r
 * runs): a recording gives its keyed figures (view_figures(), the rows
 * `report --figures` prints), a stat document its figures under LKP's
 * perf-stat.* keys.  The rows of every run are gathered per key and side;
 * runstats.h says whether the two sides differ (LKP's rules) and prints
 * the robot's line.  A key one side lacks is shown as missing, never as a
 * 0 that was not measured (but perf-profile.* shares, which a recording
 * lists only above a floor, count as 0 in a run that has the family, as
 * LKP does).  docs/diff.md describes the command.
 *
 *   base  B1 B2 B3 --- rows: key -> value per run --+
 *                                                   +--> per key: run_summary x 2 -> verdict -> line
 *   new   N1 N2 N3 --- rows: key -> value per run --+
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/commands/diff.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/filter.h"
#include "sigprof/base/json.h"
#include "sigprof/base/options.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/commands/report.h"
#include "sigprof/base/runstats.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/term.h"

#define MAX_INPUT_BYTES (256u << 20) /* a stat document larger than this is not one */
#define MAX_RUNS_PER_SIDE 10000

enum side { BASE, NEW, SIDES };
static const char *const side_names[SIDES] = { "base", "new" };

enum diff_sort { SORT_BY_CHANGE, SORT_BY_KEY };
/* --rules: LKP's rule and a per-row test under a false discovery rate (the default), or LKP's alone */
enum diff_rules { RULES_LKP_FDR, RULES_LKP };
enum diff_format { DIFF_TEXT, DIFF_JSON, DIFF_FOLDED, DIFF_HTML, DIFF_PPROF };

struct diff_args {
	const char **files[SIDES];
	size_t nfiles[SIDES];
	bool all;
	enum diff_format format;
	enum diff_sort sort;
	enum diff_rules rules;
	const char *collector;
	const char *html;       /* --html FILE: the differential flame graphs of the first run of each side */
	const char *pprof;      /* --pprof PREFIX: PREFIX.base.pb.gz and PREFIX.new.pb.gz, of the first run of each side */
	double min_change;      /* --min-change: |%change| below it is not listed */
	unsigned limit;         /* -n: rows at most; 0: all */
	struct profile_options po;
	struct profile_filter filter; /* --pid, --tid, --comm, --dso, --time: every recording read through them */
	struct diff_run run;    /* --run: record both sides first (run.runs 0: compare the files given) */
	char **recorded;        /* --run's files, to free */
	bool no_pager;          /* --no-pager: never page (else the text goes through $PAGER when longer than the screen) */
	unsigned width;         /* --width N: the summary's lines at most N (and 80) columns */
	int color;              /* --color: enum term_color_mode */
	bool run_given;         /* --run by a prefix of its name, which getopt takes: it must be whole (see parse_diff_args) */
	struct path_rules *path_rules; /* --path-rule, --path-rules: added to the built-in ones */
	size_t formats;         /* output format options given */
	const char *format_given[2]; /* the long names of the first two, in the order given */
};

/* One value of one run: what the inputs give, before they are gathered by key. */
struct entry {
	const char *key;   /* in the pool */
	const char *unit;  /* in the pool */
	bool exact;
	uint8_t side;
	uint32_t run;      /* the run's index on its side */
	double value;
};

struct diff_data {
	struct string_pool *pool;
	struct entry *entries;
	size_t nentries, cap;
	size_t runs[SIDES];
	bool profile_family[SIDES][MAX_RUNS_PER_SIDE]; /* the run has perf-profile.* rows */
	size_t duplicates;     /* values of a run under a key the run had already (left out) */
	/* the collectors each recording of a side opened, to say when the runs of a side differ */
	struct recording_collectors {
		const char *file;
		uint64_t open;           /* bit i: collector_names[i] opened */
	} *recordings[SIDES];
	size_t nrecordings[SIDES], recordings_cap[SIDES];
	const char *collector_names[64];
	size_t ncollector_names;
	/* the commands and kernels of each side's runs, each once, in the order met (in the pool) */
	struct name_list {
		const char **names;
		size_t count, cap;
	} commands[SIDES], kernels[SIDES];
	/* the filters (--comm, --pid, ...): the recordings where they kept a sample, and those where none */
	size_t filter_kept;
	struct strbuf filter_missed;
	/* --folded: stack (root first) -> count, per side */
	struct entry *stacks;
	size_t nstacks, stacks_cap;
};

static void add_entry(struct diff_data *d, enum side side, const char *key, const char *unit, bool exact,
		      double value)
{
	GROW(d->entries, d->cap, d->nentries + 1);
	d->entries[d->nentries++] = (struct entry){ .key = string_intern(d->pool, key),
						    .unit = string_intern(d->pool, unit ? unit : ""), .exact = exact,
						    .side = (uint8_t)side, .run = (uint32_t)d->runs[side], .value = value };
	if (strncmp(key, "perf-profile.", 13) == 0)
		d->profile_family[side][d->runs[side]] = true;
}

/* ---- a recording ---- */

/* Add name (interned) to a list of distinct names; an empty name is left out (not known). */
static void name_list_add(struct diff_data *d, struct name_list *l, const char *name)
{
	if (!name || !name[0])
		return;
	name = string_intern(d->pool, name);
	for (size_t i = 0; i < l->count; i++)
		if (l->names[i] == name)
			return;
	GROW(l->names, l->cap, l->count + 1);
	l->names[l->count++] = name;
}

/* The command (argv joined by blanks, or what record attached to) and kernel of a recording. */
static void note_command(struct diff_data *d, enum side side, const struct profile *p)
{
	struct strbuf sb = { 0 };
	for (int i = 0; i < p->argc; i++)
		sb_addf(&sb, "%s%s", i ? " " : "", p->argv[i]);
	if (p->target[0])
		sb_addf(&sb, "%s%s", sb.len ? " " : "", p->target);
	name_list_add(d, &d->commands[side], sb.buf);
	sb_free(&sb);
	if (p->kernel[0]) {
		char kernel[300];
		snprintf(kernel, sizeof(kernel), "Linux %s", p->kernel);
		name_list_add(d, &d->kernels[side], kernel);
	}
}

/* The collectors that opened in recording file (those the machine could not open are no difference between runs). */
static void note_collectors(struct diff_data *d, enum side side, const char *file, const struct profile *p)
{
	uint64_t open = 0;
	for (int c = 0; c < p->ncollectors; c++) {
		if (!p->collectors[c].ok)
			continue;
		const char *name = string_intern(d->pool, p->collectors[c].name);
		size_t i = 0;
		while (i < d->ncollector_names && d->collector_names[i] != name)
			i++;
		if (i == d->ncollector_names) {
			if (i == ARRAY_SIZE(d->collector_names))
				continue;
			d->collector_names[d->ncollector_names++] = name;
		}
		open |= 1ull << i;
	}
	GROW(d->recordings[side], d->recordings_cap[side], d->nrecordings[side] + 1);
	d->recordings[side][d->nrecordings[side]++] = (struct recording_collectors){ file, open };
}

/*
 * One warning line per side whose recordings opened different collectors:
 * the figures of a collector one run lacks are compared over fewer runs
 * (and, with fewer than 3, untested and listed only with --all).
 */
static void warn_collector_differences(const struct diff_data *d)
{
	for (int s = 0; s < SIDES; s++) {
		uint64_t any = 0;
		for (size_t i = 0; i < d->nrecordings[s]; i++)
			any |= d->recordings[s][i].open;
		struct strbuf sb = { 0 };
		for (size_t i = 0; i < d->nrecordings[s]; i++) {
			uint64_t lacks = any & ~d->recordings[s][i].open;
			if (!lacks)
				continue;
			sb_addf(&sb, "%s%s lacks", sb.len ? "; " : "", d->recordings[s][i].file);
			for (size_t c = 0, named = 0; c < d->ncollector_names; c++)
				if (lacks & (1ull << c))
					sb_addf(&sb, "%s %s", named++ ? "," : "", d->collector_names[c]);
		}
		if (sb.len)
			sp_warn("diff: the %s side's runs were recorded with different collectors: %s (their figures are "
				"compared over the runs that have them)", side_names[s], sb.buf);
		sb_free(&sb);
	}
}

static int load_recording(struct diff_data *d, enum side side, const char *file, const struct diff_args *a)
{
	struct profile p;
	char err[512];
	if (profile_load(file, &a->po, &p, err, sizeof(err)) < 0) {
		profile_free(&p);
		return sp_error("diff: %s: %s", file, err);
	}
	if (p.truncated && !p.samples) {
		/* its figures would be zeros nothing measured, averaged in as if they were a run's */
		int ret = sp_error("diff: %s %s (%s) before its first sample: no run to compare; leave it out", file,
				   profile_end_verb(&p), p.problem[0] ? p.problem : "no closing section");
		profile_free(&p);
		return ret;
	}
	if (p.truncated)
		sp_warn("diff: %s %s (%s); comparing the %llu samples it holds", file, profile_end_verb(&p),
			p.problem[0] ? p.problem : "no closing section", (unsigned long long)p.samples);
	if (a->po.filter && filter_drops(a->po.filter) && p.samples) {
		if (profile_kept_samples(&p))
			d->filter_kept++;
		else
			sb_addf(&d->filter_missed, "%s%s", d->filter_missed.len ? ", " : "", QUOTED(file));
	}
	diff_warn_run_exit(file, profile_exit_status(&p));
	note_collectors(d, side, file, &p);
	note_command(d, side, &p);
	struct figure_rows rows = { 0 };
	view_figures(&p, &rows);
	if (rows.refused)
		sp_warn("diff: %s: %zu figures under a key listed already were left out (a collector's bug: please "
			"report it)", file, rows.refused);
	for (size_t i = 0; i < rows.count; i++)
		add_entry(d, side, rows.rows[i].key, rows.rows[i].unit, rows.rows[i].exact, rows.rows[i].value);
	figure_rows_free(&rows);
	if (a->format == DIFF_FOLDED) {
		int c = report_folded_collector(&p, a->collector);
		uint32_t *ids = NULL;
		size_t n = c >= 0 ? view_stacks(&p, c, -1, &ids) : 0;
		struct strbuf line = { 0 };
		for (size_t i = 0; i < n; i++) {
			sb_reset(&line);
			report_folded_stack(&p, ids[i], &line);
			GROW(d->stacks, d->stacks_cap, d->nstacks + 1);
			d->stacks[d->nstacks++] = (struct entry){ .key = string_intern(d->pool, line.len ? line.buf : ""),
								  .side = (uint8_t)side,
								  .value = (double)p.stacks.stacks[ids[i]].count };
		}
		sb_free(&line);
		free(ids);
	}
	profile_free(&p);
	d->runs[side]++;
	return 0;
}

/* ---- a `sigprof stat --json` document: stat_document.c reads it ---- */

struct stat_sink {
	struct diff_data *d;
	enum side side;
	size_t first_run;
};

static void add_stat_figure(void *ctx, size_t run, const char *key, const char *unit, bool exact, double value)
{
	struct stat_sink *sink = ctx;
	size_t saved = sink->d->runs[sink->side];
	sink->d->runs[sink->side] = sink->first_run + run;
	add_entry(sink->d, sink->side, key, unit, exact, value);
	sink->d->runs[sink->side] = saved;
}

static int load_stat_document(struct diff_data *d, enum side side, const char *file, const char *text)
{
	char err[256];
	size_t runs = 0;
	struct stat_sink sink = { d, side, d->runs[side] };
	if (diff_stat_document(text, MAX_RUNS_PER_SIDE - d->runs[side], add_stat_figure, &sink, &runs, err,
			       sizeof(err)) < 0)
		return sp_error("diff: %s: %s", QUOTED(file), err);
	d->runs[side] += runs;
	return 0;
}

/*
 * Whether file begins (after at most 4 KiB of white space) with '{': a
 * stat document, not a recording; -errno when unreadable.  diff reads an
 * input twice (this look, then the reader), so a pipe (/dev/stdin,
 * <(cat x.data)) would lose what this look consumed: it is refused
 * (-ESPIPE) with the way out, before anything is read from it.
 */
static int looks_like_json(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -errno;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		fclose(f);
		return -ESPIPE;
	}
	int c = EOF;
	for (int i = 0; i < 4096; i++)
		if ((c = fgetc(f)) != ' ' && c != '\n' && c != '\t' && c != '\r')
			break;
	fclose(f);
	return c == '{';
}

static int load_input(struct diff_data *d, enum side side, const char *file, const struct diff_args *a)
{
	if (d->runs[side] >= MAX_RUNS_PER_SIDE)
		return sp_error("diff: more than %d runs on the %s side", MAX_RUNS_PER_SIDE, side_names[side]);
	int json = looks_like_json(file);
	if (json == -ESPIPE)
		return sp_error("diff: %s is not a regular file (a pipe or a device): diff reads each input twice; "
				"save it to a file first", QUOTED(file));
	if (json < 0)
		return sp_error("diff: cannot read %s: %s", QUOTED(file), strerror(-json));
	if (a->po.input_format != SP_INPUT_AUTO)
		json = 0; /* --input-format sigprof|perf: every input is a recording of that format */
	if (!json)
		return load_recording(d, side, file, a); /* streamed: a recording is never read whole */
	if (a->format == DIFF_FOLDED)
		return sp_error("diff: %s: a stat document has no stacks for --folded", QUOTED(file));
	if (a->po.filter)
		sp_warn("diff: %s: the filters apply to recordings, not to a stat document", QUOTED(file));
	char *text;
	size_t len;
	int err = read_file_bounded(file, MAX_INPUT_BYTES, &text, &len);
	if (err == -EFBIG)
		return sp_error("diff: %s: larger than %u bytes: too large for a stat document", QUOTED(file),
				MAX_INPUT_BYTES);
	if (err < 0)
		return sp_error("diff: cannot read %s: %s", QUOTED(file), strerror(-err));
	int ret = load_stat_document(d, side, file, text);
	if (ret == 0) {
		char command[1024];
		diff_stat_command(text, command, sizeof(command));
		name_list_add(d, &d->commands[side], command);
		diff_warn_run_exit(file, diff_stat_exit_status(text));
	}
	free(text);
	return ret;
}

/* ---- the rows ---- */

/* The groups of the table, in order: a key's family decides (docs/diff.md). */
static const struct key_group {
	const char *name;
	const char *prefixes[6];
} key_groups[] = {
	{ "workload result", { NULL } }, /* the rows in the unit "result": the workload's own figures (results.h) */
	{ "workload and time", { "run.", "time.", NULL } },
	{ "stat", { "perf-stat.", "cache.", NULL } },
	{ "paths and costs", { "paths.", "cost.", NULL } },
	{ "signals", { "signal.", NULL } },
	{ "futex", { "futex.", "lock.", NULL } },
	{ "sched", { "sched.", "perf-sched.", NULL } },
	{ "c2c", { "perf-c2c.", "c2c.", NULL } },
	{ "profile", { "perf-profile.", NULL } },
	{ "other", { NULL } },
};

#define RESULT_GROUP 0
#define PATHS_GROUP 3

static size_t group_of(const char *key, const char *unit)
{
	if (strcmp(unit, "result") == 0)
		return RESULT_GROUP;
	for (size_t g = 0; g + 1 < ARRAY_SIZE(key_groups); g++)
		for (const char *const *p = key_groups[g].prefixes; *p; p++)
			if (strncmp(key, *p, strlen(*p)) == 0)
				return g;
	/* COLLECTOR.samples */
	const char *dot = strchr(key, '.');
	if (dot && strcmp(dot, ".samples") == 0)
		return PATHS_GROUP;
	return ARRAY_SIZE(key_groups) - 1;
}

/* Whether a key belongs to collector name (--collector): its family, its paths.NAME.*, LKP's names for it. */
static bool key_of_collector(const char *key, const char *name)
{
	static const struct { const char *collector, *prefix; } lkp_families[] = {
		{ "sched", "perf-sched." }, { "c2c", "perf-c2c." }, { "cpu", "perf-profile." }, { "cpu", "cost." },
	};
	size_t n = strlen(name);
	if (strncmp(key, name, n) == 0 && key[n] == '.')
		return true;
	if (strncmp(key, "paths.", 6) == 0 && strncmp(key + 6, name, n) == 0 && key[6 + n] == '.')
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(lkp_families); i++)
		if (strcmp(name, lkp_families[i].collector) == 0 &&
		    strncmp(key, lkp_families[i].prefix, strlen(lkp_families[i].prefix)) == 0)
			return true;
	return false;
}

/*
 * Whether an exact row counts the workload's events (signals generated,
 * delivered and returned from; futex calls; a stat document's tracepoint
 * counts), which a deterministic program repeats run after run: unlike
 * exact counts of what the machine did with it (samples, scheduler waits,
 * context switches), which vary from run to run.
 */
static bool event_count_key(const char *key, const char *unit)
{
	static const char *const event_counts[] = { ".generated", ".delivered", ".sigreturns", ".not_delivered",
						    ".calls", ".events" };
	if (strcmp(unit, "count") != 0)
		return false;
	if (strncmp(key, "perf-stat.total.", 16) == 0)
		return true; /* exact there means a tracepoint's count */
	size_t len = strlen(key);
	for (size_t i = 0; i < ARRAY_SIZE(event_counts); i++) {
		size_t n = strlen(event_counts[i]);
		if (len > n && strcmp(key + len - n, event_counts[i]) == 0)
			return strncmp(key, "signal.", 7) == 0 || strncmp(key, "futex.", 6) == 0 ||
			       strncmp(key, "cost.", 5) == 0;
	}
	return false;
}

struct diff_row {
	const char *key, *unit;
	bool exact;
	size_t group;
	double *values[SIDES];
	size_t nvalues[SIDES];
	struct run_summary sum[SIDES];
	enum change_verdict verdict;
	double change;
	bool exact_count;    /* exact and a count of the workload's events (event_count_key()): runstats.h's exact */
	bool change_defined, absolute, listed;
	bool tested;         /* both sides have LKP_MIN_RUNS values: p and q below are the row's */
	double p, q;         /* Welch's t-test, and its Benjamini-Hochberg q over the tested rows */
	enum change_verdict lkp_verdict; /* LKP's rule alone (verdict: with the --rules in force) */
};

static int compare_entries(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->side != y->side)
		return x->side - y->side;
	return x->run < y->run ? -1 : x->run > y->run;
}

/*
 * The default rules: LKP's rule, and Welch's t-test of each row whose sides
 * both have LKP_MIN_RUNS values, Benjamini-Hochberg over all those rows at
 * FDR_Q (runstats.h says why).  With apply (the default rules), a row
 * LKP's rule passes whose q is above FDR_Q is CHANGE_NOT_CONFIRMED.
 */
static void confirm_by_fdr(struct diff_row *rows, size_t n, bool apply)
{
	double *p = xcalloc(n + 1, sizeof(*p)), *q = xcalloc(n + 1, sizeof(*q));
	size_t *index = xcalloc(n + 1, sizeof(*index)), tested = 0;
	for (size_t i = 0; i < n; i++) {
		struct diff_row *r = &rows[i];
		r->tested = r->nvalues[BASE] >= LKP_MIN_RUNS && r->nvalues[NEW] >= LKP_MIN_RUNS;
		if (!r->tested)
			continue;
		/* a %change is a ratio, tested as one; an absolute change (a share, a percentage) on the values */
		r->p = r->absolute ? welch_p_value(r->values[BASE], r->nvalues[BASE], r->values[NEW], r->nvalues[NEW])
				   : ratio_welch_p_value(r->values[BASE], r->nvalues[BASE], r->values[NEW], r->nvalues[NEW]);
		p[tested] = r->p;
		index[tested++] = i;
	}
	benjamini_hochberg(p, tested, q);
	for (size_t k = 0; k < tested; k++) {
		struct diff_row *r = &rows[index[k]];
		r->q = q[k];
		if (apply && r->verdict == CHANGE_SIGNIFICANT && !(r->q <= FDR_Q))
			r->verdict = CHANGE_NOT_CONFIRMED;
	}
	free(p);
	free(q);
	free(index);
}

/*
 * Without a significance test (fewer than LKP_MIN_RUNS runs a side) every
 * figure is listed, the exact counts that did not differ too (a run's
 * ground truth).  With one, a figure is listed when it changed, or when
 * only one side has it and measured it in every run (a signal that stopped
 * occurring); one that came and went between runs (a sched key, a futex
 * word: too few values to test, or one side only) only with --all.
 */
static bool row_listed(const struct diff_data *d, const struct diff_args *a, const struct diff_row *r)
{
	bool consistent = r->verdict == CHANGE_MISSING &&
			  (r->nvalues[BASE] ? r->nvalues[BASE] == d->runs[BASE] : r->nvalues[NEW] == d->runs[NEW]);
	bool tested = d->runs[BASE] >= LKP_MIN_RUNS && d->runs[NEW] >= LKP_MIN_RUNS;
	bool shown = a->all || !tested || r->verdict == CHANGE_SIGNIFICANT || consistent;
	if (shown && a->min_change > 0 && r->verdict != CHANGE_MISSING && r->change_defined &&
	    fabs(r->change) < a->min_change)
		shown = false;
	if (a->collector && !key_of_collector(r->key, a->collector))
		shown = false;
	return shown;
}

static size_t build_rows(struct diff_data *d, const struct diff_args *a, struct diff_row **out)
{
	sort_items(d->entries, d->nentries, sizeof(*d->entries), compare_entries);
	struct diff_row *rows = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < d->nentries;) {
		size_t j = i;
		while (j < d->nentries && d->entries[j].key == d->entries[i].key)
			j++;
		GROW(rows, cap, n + 1);
		struct diff_row *r = &rows[n++];
		memset(r, 0, sizeof(*r));
		r->key = d->entries[i].key;
		r->unit = d->entries[i].unit;
		r->exact = true;
		r->group = group_of(r->key, r->unit);
		bool profile = strncmp(r->key, "perf-profile.", 13) == 0;
		for (int s = 0; s < SIDES; s++) {
			r->values[s] = xcalloc(d->runs[s] + 1, sizeof(double));
			for (size_t run = 0; run < d->runs[s]; run++) {
				bool found = false;
				for (size_t k = i; k < j; k++)
					if (d->entries[k].side == s && d->entries[k].run == run) {
						if (found) { /* a stat document's figure named twice: one key, one figure */
							d->duplicates++;
							continue;
						}
						r->values[s][r->nvalues[s]++] = d->entries[k].value;
						r->exact &= d->entries[k].exact;
						found = true;
					}
				/* perf-profile rows are listed above a floor: a run with the family and not the key had less */
				if (!found && profile && d->profile_family[s][run])
					r->values[s][r->nvalues[s]++] = 0;
			}
			run_summarize(r->values[s], r->nvalues[s], &r->sum[s]);
		}
		/* exact counts (signals, sigreturns, futex calls) that did not differ are never significant */
		r->exact_count = r->exact && event_count_key(r->key, r->unit);
		r->verdict = lkp_verdict(r->key, r->exact_count, &r->sum[BASE], &r->sum[NEW]);
		r->absolute = lkp_absolute_change(r->key, r->unit);
		if (r->nvalues[BASE] && r->nvalues[NEW]) {
			r->change = r->absolute ? r->sum[NEW].mean - r->sum[BASE].mean
						: lkp_change(r->key, r->unit, r->sum[BASE].mean, r->sum[NEW].mean, &r->change_defined);
			if (r->absolute)
				r->change_defined = true;
		}
		r->lkp_verdict = r->verdict;
		i = j;
	}
	/* p and q for every tested row (JSON); the verdicts under --rules lkp stay LKP's */
	confirm_by_fdr(rows, n, a->rules == RULES_LKP_FDR);
	for (size_t k = 0; k < n; k++)
		rows[k].listed = row_listed(d, a, &rows[k]);
	*out = rows;
	return n;
}

/*
 * The collectors that only one side recorded (in any of its runs): bit i of
 * only[s] is collector_names[i], opened on side s and in no run of the
 * other.  Both sides must be recordings (a stat document names none).
 */
static bool one_sided_collectors(const struct diff_data *d, uint64_t only[SIDES])
{
	uint64_t any[SIDES] = { 0 };
	for (int s = 0; s < SIDES; s++)
		for (size_t i = 0; i < d->nrecordings[s]; i++)
			any[s] |= d->recordings[s][i].open;
	only[BASE] = only[NEW] = 0;
	if (!d->nrecordings[BASE] || !d->nrecordings[NEW])
		return false;
	only[BASE] = any[BASE] & ~any[NEW];
	only[NEW] = any[NEW] & ~any[BASE];
	return only[BASE] || only[NEW];
}

/*
 * Rows of a collector only one side recorded are no change: the other side
 * did not measure them.  They are left out of the listing (as rows nobody
 * asked for), and one line says which collectors and how many rows.
 */
static void leave_out_one_sided_rows(const struct diff_data *d, struct diff_row *rows, size_t n)
{
	uint64_t only[SIDES];
	if (!one_sided_collectors(d, only))
		return;
	size_t left_out = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t c = 0; c < d->ncollector_names; c++)
			if (((only[BASE] | only[NEW]) & (1ull << c)) && key_of_collector(rows[k].key, d->collector_names[c])) {
				left_out += rows[k].listed;
				rows[k].listed = false;
				break;
			}
	struct strbuf sb = { 0 };
	for (int s = 0; s < SIDES; s++) {
		if (!only[s])
			continue;
		sb_addf(&sb, "%sonly the %s side recorded", sb.len ? "; " : "", side_names[s]);
		for (size_t c = 0, named = 0; c < d->ncollector_names; c++)
			if (only[s] & (1ull << c))
				sb_addf(&sb, "%s %s", named++ ? "," : "", d->collector_names[c]);
	}
	sp_warn("diff: the sides were recorded with different collectors: %s; their %zu rows are left out, not "
		"changes (and run.samples counts the samples of different collectors)", sb.buf, left_out);
	sb_free(&sb);
}

static enum diff_sort row_sort;

static int compare_rows(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (row_sort == SORT_BY_CHANGE) {
		double cx = x->change_defined ? fabs(x->change) : INFINITY, cy = y->change_defined ? fabs(y->change) : INFINITY;
		if (!x->nvalues[BASE] || !x->nvalues[NEW])
			cx = -1;
		if (!y->nvalues[BASE] || !y->nvalues[NEW])
			cy = -1;
		if (cx != cy)
			return cx > cy ? -1 : 1;
	}
	return strcmp(x->key, y->key);
}

/* ---- cost per event: which path explains the change ---- */

/*
 * The cost.PATH.* rows (docs/figures.md): ns of CPU per event on each path
 * with an exact event count, and the CPU time on the path.  A path's share
 * of the change is the change of its CPU time over the change of the CPU
 * time of all paths (cost.total.cpu_ms).
 */
static const struct diff_row *find_row(const struct diff_row *rows, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].key, key) == 0)
			return &rows[i];
	return NULL;
}

struct cost_line {
	const struct diff_row *row;
	char path[96];
	double share;      /* of the change of the CPU time on all paths, percent */
	bool has_share;
};

static int compare_cost_lines(const void *a, const void *b)
{
	const struct cost_line *x = a, *y = b;
	double sx = x->has_share ? fabs(x->share) : -1, sy = y->has_share ? fabs(y->share) : -1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The cost lines of the rows, ranked by the share of the change they explain; returns the count, *out to free. */
static size_t cost_lines(const struct diff_row *rows, size_t n, struct cost_line **out)
{
	struct cost_line *lines = xcalloc(n + 1, sizeof(*lines));
	size_t nlines = 0;
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		const char *last = strrchr(r->key, '.');
		if (strncmp(r->key, "cost.", 5) != 0 || !last || strlen(last) < 10 ||
		    strcmp(last + strlen(last) - 10, "_per_event") != 0 || !r->nvalues[BASE] || !r->nvalues[NEW])
			continue;
		struct cost_line *l = &lines[nlines++];
		l->row = r;
		snprintf(l->path, sizeof(l->path), "%.*s", (int)(last - r->key - 5), r->key + 5);
		bool ns = strcmp(r->unit, "ns") == 0;
		char key[160];
		snprintf(key, sizeof(key), "cost.%s.%s", l->path, ns ? "cpu_ms" : "cpu_cycles");
		const struct diff_row *cpu = find_row(rows, n, key);
		const struct diff_row *total = find_row(rows, n, ns ? "cost.total.cpu_ms" : "cost.total.cpu_cycles");
		if (cpu && total && cpu->nvalues[BASE] && cpu->nvalues[NEW] && total->nvalues[BASE] && total->nvalues[NEW]) {
			double dt = total->sum[NEW].mean - total->sum[BASE].mean, dp = cpu->sum[NEW].mean - cpu->sum[BASE].mean;
			if (dt != 0) {
				l->share = 100 * dp / dt;
				l->has_share = true;
			}
		}
	}
	sort_items(lines, nlines, sizeof(*lines), compare_cost_lines);
	*out = lines;
	return nlines;
}

/* "sigreturn: 412 -> 377 ns per event (-8.5%), 71% of the change", ranked by that share. */
static void text_costs(const struct diff_row *rows, size_t n, FILE *out)
{
	struct cost_line *lines;
	size_t nlines = cost_lines(rows, n, &lines);
	if (nlines)
		fprintf(out, "\ncost per event: CPU per event on each path with counted events, and the share of the change "
			     "of the CPU time on all paths that the path explains\n");
	for (size_t i = 0; i < nlines; i++) {
		const struct diff_row *r = lines[i].row;
		/* the values as the table above prints them */
		struct strbuf before = { 0 }, after = { 0 };
		lkp_format_value(&before, r->sum[BASE].mean);
		lkp_format_value(&after, r->sum[NEW].mean);
		fprintf(out, "  %-16s %s -> %s %s per event", lines[i].path, before.buf, after.buf, r->unit);
		sb_free(&before);
		sb_free(&after);
		if (r->change_defined)
			fprintf(out, " (%+.1f%%)", r->change);
		if (lines[i].has_share) {
			struct strbuf share = { 0 };
			format_whole_percent(&share, lines[i].share);
			fprintf(out, ", %s of the change", share.buf);
			sb_free(&share);
		}
		/* as the verdict of the table's rows: a cost with too few runs to test is not a change that passed */
		fprintf(out, "%s\n", r->verdict == CHANGE_SIGNIFICANT ? ""
				     : r->verdict == CHANGE_UNTESTED ? "  (untested: fewer than 3 runs)"
								    : "  (not significant)");
	}
	free(lines);
}

/* ---- outputs ---- */

/* "A | B": the names of a list, or "?" when none is known. */
static void name_list_line(const struct name_list *l, FILE *out)
{
	if (!l->count)
		fputs("?", out);
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < l->count; i++) {
		if (i)
			sb_addstr(&sb, " | ");
		sb_add_printable(&sb, l->names[i]); /* the recordings' words: control characters escaped */
	}
	if (sb.len)
		fputs(sb.buf, out);
	sb_free(&sb);
}

static void text_inputs(const struct diff_args *a, const struct diff_data *d, FILE *out)
{
	for (int s = 0; s < SIDES; s++) {
		fprintf(out, "# %-4s %zu run%s:", side_names[s], d->runs[s], d->runs[s] == 1 ? "" : "s");
		for (size_t i = 0; i < a->nfiles[s]; i++)
			fprintf(out, " %s", a->files[s][i]);
		fprintf(out, "\n#      command: ");
		name_list_line(&d->commands[s], out);
		if (d->kernels[s].count) { /* a stat document does not say its kernel */
			fprintf(out, "; kernel: ");
			name_list_line(&d->kernels[s], out);
		}
		fprintf(out, "\n");
	}
}

static bool same_names(const struct name_list *x, const struct name_list *y)
{
	if (x->count != y->count)
		return false;
	for (size_t i = 0; i < x->count; i++) {
		size_t j = 0;
		while (j < y->count && y->names[j] != x->names[i])
			j++;
		if (j == y->count)
			return false;
	}
	return true;
}

/*
 * The robot compares one command on two kernels: a warning line when the
 * two sides (or the runs of one side) ran different commands.  Different
 * kernels are what a comparison is for: the header shows them.
 */
static void warn_command_differences(const struct diff_data *d)
{
	for (int s = 0; s < SIDES; s++)
		if (d->commands[s].count > 1) {
			struct strbuf sb = { 0 };
			for (size_t i = 0; i < d->commands[s].count; i++)
				sb_addf(&sb, "%s%s", i ? ", " : "", QUOTED(d->commands[s].names[i]));
			sp_warn("diff: the %s side's runs ran different commands: %s", side_names[s], sb.buf);
			sb_free(&sb);
		}
	if (d->commands[BASE].count == 1 && d->commands[NEW].count == 1 &&
	    !same_names(&d->commands[BASE], &d->commands[NEW]))
		sp_warn("diff: the two sides ran different commands: base %s, new %s", QUOTED(d->commands[BASE].names[0]),
			QUOTED(d->commands[NEW].names[0]));
}

#define SUMMARY_WIDTH 80
#define SUMMARY_COSTS 3

static unsigned summary_width = SUMMARY_WIDTH; /* --width, at most SUMMARY_WIDTH */
static bool diff_color;                        /* --color */

static void summary_line(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The robot's subject line for each of the workload's own figures, above
 * the table: "perf-bench-futex.ops/s: +1.9% (2249734 -> 2291792,
 * significant)"; or one line saying none was recognized and how to add one.
 */
static void text_subject_lines(const struct diff_row *rows, size_t n, FILE *out)
{
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		if (r->group != RESULT_GROUP || !r->nvalues[BASE] || !r->nvalues[NEW])
			continue;
		struct strbuf before = { 0 }, after = { 0 }, change = { 0 };
		lkp_format_value(&before, r->sum[BASE].mean);
		lkp_format_value(&after, r->sum[NEW].mean);
		if (r->change_defined)
			lkp_format_change(&change, r->change, r->absolute);
		else
			sb_addstr(&change, "from 0");
		bool significant = r->verdict == CHANGE_SIGNIFICANT;
		/* painted around the line: a cut inside it would leave the colour on */
		fputs(term_on(diff_color && significant, PAINT_MARK), out);
		summary_line(out, "%s: %s (%s -> %s, %s)", r->key, change.buf, before.buf, after.buf,
			     significant ? "significant" : change_verdict_name(r->verdict));
		if (diff_color && significant) /* its off before the newline summary_line wrote: the next line */
			fputs(term_off(true), out);
		shown++;
		sb_free(&before);
		sb_free(&after);
		sb_free(&change);
	}
	if (!shown)
		fprintf(out, "no result line of the workload recognized: record --metric NAME=REGEX adds one\n");
}

/* ---- the first screen: what changed and why, in 80 columns and 24 lines ---- */


/* One line of the summary, cut to SUMMARY_WIDTH columns ("..." at the end when cut). */
static void summary_line(FILE *out, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (summary_width >= 4 && strlen(line) > summary_width)
		memcpy(line + summary_width - 3, "...", 4);
	fprintf(out, "%s\n", line);
}

/* "+12.6% (196.60 -> 221.30)" of a row with both sides. */
static void change_text(const struct diff_row *r, struct strbuf *sb)
{
	struct strbuf before = { 0 }, after = { 0 };
	lkp_format_value(&before, r->sum[BASE].mean);
	lkp_format_value(&after, r->sum[NEW].mean);
	if (r->change_defined)
		lkp_format_change(sb, r->change, r->absolute);
	else
		sb_addstr(sb, "from 0");
	sb_addf(sb, " (%s -> %s)", before.buf, after.buf);
	sb_free(&before);
	sb_free(&after);
}

/* Of the rows whose key starts with prefix and ends with suffix (NULL: any), the significant one that changed most, else any that changed most. */
static const struct diff_row *largest_change(const struct diff_row *rows, size_t n, const char *prefix,
					     const char *suffix)
{
	const struct diff_row *best = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		size_t len = strlen(r->key), sl = suffix ? strlen(suffix) : 0;
		if (strncmp(r->key, prefix, strlen(prefix)) != 0 || (suffix && (len < sl || strcmp(r->key + len - sl, suffix))) ||
		    !r->nvalues[BASE] || !r->nvalues[NEW] || !r->change_defined)
			continue;
		bool significant = r->verdict == CHANGE_SIGNIFICANT, best_significant = best && best->verdict == CHANGE_SIGNIFICANT;
		if (!best || (significant && !best_significant) ||
		    (significant == best_significant && fabs(r->change) > fabs(best->change)))
			best = r;
	}
	return best;
}

/* A side's mean of a row, 0 for a side that never measured it (a function below the floor of its runs). */
static double side_mean(const struct diff_row *r, int side)
{
	return r->nvalues[side] ? r->sum[side].mean : 0;
}

static int compare_self_moves(const void *a, const void *b)
{
	const struct diff_row *x = *(const struct diff_row *const *)a, *y = *(const struct diff_row *const *)b;
	bool sx = x->verdict == CHANGE_SIGNIFICANT, sy = y->verdict == CHANGE_SIGNIFICANT;
	if (sx != sy)
		return sx ? -1 : 1;
	double dx = fabs(side_mean(x, NEW) - side_mean(x, BASE)), dy = fabs(side_mean(y, NEW) - side_mean(y, BASE));
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->key, y->key);
}

/*
 * "own time per event: _raw_spin_lock +18 ns, pvm_irq_enable -5 ns (n.s.)":
 * the functions of the path whose own time per event
 * (cost.PATH.self_per_event.*) moved most in ns, significant ones first, at
 * most SUMMARY_SELF_MOVES.  Returns whether it printed a line.
 */
#define SUMMARY_SELF_MOVES 3
static bool summary_self_moves(const struct diff_row *rows, size_t n, const char *path, FILE *out)
{
	char prefix[160];
	snprintf(prefix, sizeof(prefix), "cost.%s.self_per_event.", path);
	size_t plen = strlen(prefix), count = 0;
	const struct diff_row **moved = xcalloc(n + 1, sizeof(*moved));
	for (size_t i = 0; i < n; i++)
		if (strncmp(rows[i].key, prefix, plen) == 0 && (rows[i].nvalues[BASE] || rows[i].nvalues[NEW]) &&
		    side_mean(&rows[i], NEW) != side_mean(&rows[i], BASE))
			moved[count++] = &rows[i];
	sort_items(moved, count, sizeof(*moved), compare_self_moves);
	struct strbuf sb = { 0 };
	bool any_significant = count && moved[0]->verdict == CHANGE_SIGNIFICANT;
	for (size_t i = 0; i < count && i < SUMMARY_SELF_MOVES; i++) {
		const struct diff_row *r = moved[i];
		sb_addf(&sb, "%s%s %+.0f %s%s", i ? ", " : "", r->key + plen, side_mean(r, NEW) - side_mean(r, BASE), r->unit,
			any_significant && r->verdict != CHANGE_SIGNIFICANT ? " (n.s.)" : "");
	}
	if (sb.len)
		summary_line(out, "    own time per event%s: %s", any_significant ? "" : " (not significant)", sb.buf);
	bool printed = sb.len > 0;
	sb_free(&sb);
	free(moved);
	return printed;
}

/*
 * What moved inside the path that explains most of the CPU change: its lock
 * wait per event (paths.lock.PATH.wait_ms over cost.PATH.events), the lock
 * whose contentions changed most, the functions whose own time per event on
 * the path changed most (else, from documents without them, the function
 * whose self share changed most).
 */
static void summary_inside(const struct diff_row *rows, size_t n, const char *path, FILE *out)
{
	char key[160];
	snprintf(key, sizeof(key), "paths.lock.%s.wait_ms", path);
	const struct diff_row *wait = find_row(rows, n, key);
	snprintf(key, sizeof(key), "cost.%s.events", path);
	const struct diff_row *events = find_row(rows, n, key);
	if (wait && events && wait->nvalues[BASE] && wait->nvalues[NEW] && events->sum[BASE].mean > 0 &&
	    events->sum[NEW].mean > 0) {
		double base = 1e6 * wait->sum[BASE].mean / events->sum[BASE].mean;
		double now = 1e6 * wait->sum[NEW].mean / events->sum[NEW].mean;
		/* "0.0 -> 0.0": a few contentions elsewhere in the run tell nothing of the path */
		if (base >= 0.05 || now >= 0.05)
			summary_line(out, "    lock wait on %s: %.1f -> %.1f ns per event", path, base, now);
	}
	static const char *const inside[][2] = {
		{ "lock.taken_in.", ".contentions" }, { "lock.symbol.", ".contentions" }, { "perf-profile.self.", NULL },
	};
	/* the last of inside[] (self shares) only when the path's own times per event are not there */
	bool self_moves = summary_self_moves(rows, n, path, out);
	for (size_t i = 0; i < ARRAY_SIZE(inside) - self_moves; i++) {
		const struct diff_row *r = largest_change(rows, n, inside[i][0], inside[i][1]);
		if (!r || r->change == 0)
			continue;
		struct strbuf sb = { 0 };
		change_text(r, &sb);
		summary_line(out, "    %s %s%s", r->key, sb.buf, r->verdict == CHANGE_SIGNIFICANT ? "" : " (not significant)");
		sb_free(&sb);
	}
}

/*
 * The summary that opens the text: the workload's result (the robot's
 * subject lines), the cost lines ranked by the share of the CPU change
 * they explain with what moved inside the first, then the largest
 * significant change of each group.  At most 24 lines of 80 columns.
 */
static void text_summary(const struct diff_row *rows, size_t n, FILE *out)
{
	fprintf(out, "\n%ssummary%s\n", term_on(diff_color, PAINT_HEADING), term_off(diff_color));
	text_subject_lines(rows, n, out);
	struct cost_line *lines;
	size_t nlines = cost_lines(rows, n, &lines);
	for (size_t i = 0; i < nlines && i < SUMMARY_COSTS; i++) {
		const struct diff_row *r = lines[i].row;
		struct strbuf share = { 0 }, before = { 0 }, after = { 0 };
		if (lines[i].has_share)
			format_whole_percent(&share, lines[i].share);
		lkp_format_value(&before, r->sum[BASE].mean);
		lkp_format_value(&after, r->sum[NEW].mean);
		char change[32] = "";
		if (r->change_defined)
			snprintf(change, sizeof(change), "%+.1f%%", r->change);
		summary_line(out, "  %s: %s -> %s %s per event (%s%s%s of the CPU change)%s", lines[i].path, before.buf,
			     after.buf, r->unit, change, share.len ? ", " : "", share.len ? share.buf : "no share",
			     r->verdict == CHANGE_SIGNIFICANT ? "" : ", not significant");
		sb_free(&share);
		sb_free(&before);
		sb_free(&after);
		if (i == 0)
			summary_inside(rows, n, lines[i].path, out);
	}
	free(lines);
	bool any = false;
	for (size_t g = RESULT_GROUP + 1; g < ARRAY_SIZE(key_groups); g++) {
		const struct diff_row *best = NULL;
		for (size_t i = 0; i < n; i++)
			if (rows[i].group == g && rows[i].verdict == CHANGE_SIGNIFICANT && rows[i].change_defined &&
			    (!best || fabs(rows[i].change) > fabs(best->change)))
				best = &rows[i];
		if (!best)
			continue;
		if (!any)
			fprintf(out, "  largest change of each group:\n");
		any = true;
		struct strbuf sb = { 0 };
		change_text(best, &sb);
		summary_line(out, "    %-17s %s %s", key_groups[g].name, sb.buf, best->key);
		sb_free(&sb);
	}
}

/*
 * Families of one figure per thing (futex words, locks, sched keys,
 * functions, call traces): without --all the table shows the first
 * FAMILY_TOP of each (the rows are ordered by their change) and counts the
 * rest, so that a futex hash change's hundreds of per-word rows do not
 * bury the rest.  --all and --json keep every row.
 */
#define FAMILY_TOP 5
static const struct row_family {
	const char *prefix, *things;
	const char *infix; /* also in the key, or NULL */
} row_families[] = {
	{ "cost.", "functions' own time per event", ".self_per_event." },
	{ "futex.word.", "futex words", NULL },
	{ "lock.futex_word.", "futex words' lock figures", NULL },
	{ "lock.taken_in.", "locks", NULL },
	{ "lock.symbol.", "locks", NULL },
	{ "perf-sched.", "sched keys", NULL },
	{ "perf-profile.self.", "functions", NULL },
	{ "perf-profile.children.", "functions (children)", NULL },
	{ "perf-profile.calltrace.", "call traces", NULL },
};

/* The family of a key (an index of row_families), or -1. */
static int row_family(const char *key)
{
	for (size_t f = 0; f < ARRAY_SIZE(row_families); f++)
		if (strncmp(key, row_families[f].prefix, strlen(row_families[f].prefix)) == 0 &&
		    (!row_families[f].infix || strstr(key, row_families[f].infix)))
			return (int)f;
	return -1;
}

/* "  and 37 more futex words: --all" for each family of the group that had rows left out. */
static void text_family_rest(size_t *left_out, FILE *out)
{
	for (size_t f = 0; f < ARRAY_SIZE(row_families); f++) {
		if (left_out[f])
			fprintf(out, "  and %zu more rows of %s: --all\n", left_out[f], row_families[f].things);
		left_out[f] = 0;
	}
}

static void diff_text(const struct diff_args *a, const struct diff_data *d, struct diff_row *rows, size_t n, FILE *out)
{
	bool tested = d->runs[BASE] >= LKP_MIN_RUNS && d->runs[NEW] >= LKP_MIN_RUNS;
	text_inputs(a, d, out);
	/* the figures --collector keeps, so that the header and the table count the same rows */
	size_t significant = 0, lkp_significant = 0, listed = 0, kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (a->collector && !key_of_collector(rows[i].key, a->collector))
			continue;
		kept++;
		significant += rows[i].verdict == CHANGE_SIGNIFICANT;
		lkp_significant += rows[i].lkp_verdict == CHANGE_SIGNIFICANT;
		listed += rows[i].listed;
	}
	if (tested && a->rules == RULES_LKP)
		fprintf(out, "# LKP's rules: %zu of %zu figures%s%s changed%s\n", significant, kept,
			a->collector ? " of collector " : "", a->collector ? a->collector : "",
			a->all ? "; --all: every figure listed" : "");
	else if (tested)
		fprintf(out, "# LKP's rules and FDR %.0f%%: %zu of %zu figures%s%s changed (LKP's rules alone: %zu)%s\n",
			100 * FDR_Q, significant, kept,
			a->collector ? " of collector " : "", a->collector ? a->collector : "", lkp_significant,
			a->all ? "; --all: every figure listed" : "");
	else
		fprintf(out, "# fewer than %d runs a side: no significance test was possible; every figure is listed\n",
			LKP_MIN_RUNS);
	text_summary(rows, n, out);
	struct lkp_widths w = { LKP_VALUE_WIDTH, LKP_CHANGE_WIDTH };
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].listed)
			continue;
		for (int s = 0; s < SIDES; s++) {
			sb_reset(&sb);
			lkp_format_value(&sb, rows[i].sum[s].mean);
			if ((int)sb.len > w.value)
				w.value = (int)sb.len;
		}
		sb_reset(&sb);
		lkp_format_change(&sb, rows[i].change, rows[i].absolute);
		if ((int)sb.len - 1 > w.change)
			w.change = (int)sb.len - 1;
	}
	size_t group = (size_t)-1, printed = 0;
	size_t shown[ARRAY_SIZE(row_families)] = { 0 }, left_out[ARRAY_SIZE(row_families)] = { 0 };
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		if (!r->listed || (a->limit && printed >= a->limit))
			continue;
		int family = a->all ? -1 : row_family(r->key);
		if (r->group != group) {
			text_family_rest(left_out, out);
			memset(shown, 0, sizeof(shown));
		}
		if (family >= 0 && shown[family]++ >= FAMILY_TOP) {
			left_out[family]++;
			group = r->group;
			continue;
		}
		if (r->group != group) {
			group = r->group;
			sb_reset(&sb);
			lkp_format_header(&sb, &w);
			fprintf(out, "\n%s%s%s\n%s", term_on(diff_color, PAINT_HEADING), key_groups[group].name,
				term_off(diff_color), sb.buf);
		}
		sb_reset(&sb);
		bool has_change = r->nvalues[BASE] && r->nvalues[NEW];
		lkp_format_line(&sb, &w, r->nvalues[BASE] ? &r->sum[BASE] : NULL, r->nvalues[NEW] ? &r->sum[NEW] : NULL,
				r->change, r->absolute, has_change, r->key);
		sb.buf[--sb.len] = '\0'; /* the line's newline: "KEY  (only in new)" may follow */
		fprintf(out, "%s%s\n", sb.buf,
			!has_change ? (r->nvalues[BASE] ? "  (only in base)" : "  (only in new)") : "");
		printed++;
	}
	text_family_rest(left_out, out);
	if (!listed)
		fprintf(out, "\nno figure changed by %s (--all lists every figure)\n",
			a->rules == RULES_LKP ? "LKP's rules" : "LKP's rules and the false discovery rate");
	text_costs(rows, n, out);
	sb_free(&sb);
}

static void json_number(struct json_writer *w, const char *key, double v)
{
	json_double(w, key, v, v == floor(v) && fabs(v) < 1e15 ? 0 : 6);
}

static void json_side(struct json_writer *w, const char *name, const struct diff_row *r, int s)
{
	if (!r->nvalues[s]) {
		json_null(w, name);
		return;
	}
	json_object_begin(w, name);
	json_number(w, "mean", r->sum[s].mean);
	json_double(w, "stddev_percent", r->sum[s].stddev_percent, 4);
	json_number(w, "min", r->sum[s].min);
	json_number(w, "median", r->sum[s].median);
	json_number(w, "max", r->sum[s].max);
	json_array_begin(w, "values");
	for (size_t i = 0; i < r->nvalues[s]; i++)
		json_number(w, NULL, r->values[s][i]);
	json_end(w);
	json_end(w);
}

static void diff_json(const struct diff_args *a, const struct diff_data *d, struct diff_row *rows, size_t n, FILE *out)
{
	struct json_writer w;
	json_init(&w, out);
	json_object_begin(&w, NULL);
	json_u64(&w, "version", 1);
	for (int s = 0; s < SIDES; s++) {
		json_object_begin(&w, side_names[s]);
		json_array_begin(&w, "files");
		for (size_t i = 0; i < a->nfiles[s]; i++)
			json_string(&w, NULL, a->files[s][i]);
		json_end(&w);
		json_u64(&w, "runs", d->runs[s]);
		json_array_begin(&w, "commands");
		for (size_t i = 0; i < d->commands[s].count; i++)
			json_string(&w, NULL, d->commands[s].names[i]);
		json_end(&w);
		json_array_begin(&w, "kernels");
		for (size_t i = 0; i < d->kernels[s].count; i++)
			json_string(&w, NULL, d->kernels[s].names[i]);
		json_end(&w);
		json_end(&w);
	}
	json_bool(&w, "significance", d->runs[BASE] >= LKP_MIN_RUNS && d->runs[NEW] >= LKP_MIN_RUNS);
	json_string(&w, "rules", a->rules == RULES_LKP ? "lkp" : "lkp+fdr");
	json_double(&w, "fdr_q", FDR_Q, 2);
	json_array_begin(&w, "rows");
	size_t printed = 0;
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		if (!r->listed || (a->limit && printed >= a->limit))
			continue;
		printed++;
		json_object_begin(&w, NULL);
		json_string(&w, "key", r->key);
		json_string(&w, "group", key_groups[r->group].name);
		json_string(&w, "unit", r->unit);
		json_bool(&w, "exact", r->exact);
		json_bool(&w, "exact_count", r->exact_count);
		json_side(&w, "base", r, BASE);
		json_side(&w, "new", r, NEW);
		if (r->nvalues[BASE] && r->nvalues[NEW] && r->change_defined)
			json_double(&w, "change_percent", r->change, 4);
		else
			json_null(&w, "change_percent");
		json_bool(&w, "change_absolute", r->absolute);
		json_bool(&w, "significant", r->verdict == CHANGE_SIGNIFICANT);
		json_string(&w, "verdict", change_verdict_name(r->verdict));
		json_string(&w, "lkp_verdict", change_verdict_name(r->lkp_verdict));
		if (r->tested) {
			json_significant(&w, "p", r->p, 6);
			json_significant(&w, "q", r->q, 6);
		} else {
			json_null(&w, "p");
			json_null(&w, "q");
		}
		json_end(&w);
	}
	json_end(&w);
	struct cost_line *lines;
	size_t nlines = cost_lines(rows, n, &lines);
	json_array_begin(&w, "costs");
	for (size_t i = 0; i < nlines; i++) {
		const struct diff_row *r = lines[i].row;
		json_object_begin(&w, NULL);
		json_string(&w, "path", lines[i].path);
		json_string(&w, "key", r->key);
		json_string(&w, "unit", r->unit);
		json_number(&w, "base", r->sum[BASE].mean);
		json_number(&w, "new", r->sum[NEW].mean);
		if (r->change_defined)
			json_double(&w, "change_percent", r->change, 4);
		else
			json_null(&w, "change_percent");
		if (lines[i].has_share)
			json_double(&w, "share_of_change_percent", lines[i].share, 2);
		else
			json_null(&w, "share_of_change_percent");
		json_bool(&w, "significant", r->verdict == CHANGE_SIGNIFICANT);
		json_string(&w, "verdict", change_verdict_name(r->verdict));
		json_end(&w);
	}
	json_end(&w);
	free(lines);
	json_finish(&w);
}

/* difffolded.pl's output: "stack base_count new_count", each stack once, counts summed over a side's runs. */
static void diff_folded(struct diff_data *d, FILE *out)
{
	sort_items(d->stacks, d->nstacks, sizeof(*d->stacks), compare_entries);
	for (size_t i = 0; i < d->nstacks;) {
		double count[SIDES] = { 0, 0 };
		size_t j = i;
		for (; j < d->nstacks && d->stacks[j].key == d->stacks[i].key; j++)
			count[d->stacks[j].side] += d->stacks[j].value;
		fprintf(out, "%s %.0f %.0f\n", d->stacks[i].key, count[BASE], count[NEW]);
		i = j;
	}
}

/* ---- options ---- */

/* --collector NAME: a collector sigprof has (a recording may lack it: said when read). */
static int take_collector(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	if (!collector_find(arg)) {
		struct strbuf known = { 0 };
		const char *near = collector_names(arg, &known);
		if (near)
			snprintf(err, errlen, "--collector %s: no such collector: did you mean '%s'?", QUOTED(arg), near);
		else
			snprintf(err, errlen, "--collector %s: no such collector (%s)", QUOTED(arg), known.buf);
		sb_free(&known);
		return -1;
	}
	*(const char **)field = arg;
	return 0;
}

static int take_min_change(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	double *min_change = field;
	char *end;
	errno = 0;
	*min_change = strtod(arg, &end);
	if (errno || end == arg || *end || !(*min_change >= 0) || isinf(*min_change)) {
		snprintf(err, errlen, "--min-change %s: expected a percentage, 0 or more", QUOTED(arg));
		return -1;
	}
	return 0;
}

/* --json, --folded, and --html FILE, --pprof PREFIX: the format .value (and where it goes); two are refused later. */
static int take_format(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	struct diff_args *a = field;
	if (s->value == DIFF_HTML)
		a->html = arg;
	if (s->value == DIFF_PPROF)
		a->pprof = arg;
	a->format = (enum diff_format)s->value;
	if (a->formats < ARRAY_SIZE(a->format_given))
		a->format_given[a->formats] = s->long_name;
	a->formats++;
	return 0;
}

static const int diff_rules_values[] = { RULES_LKP_FDR, RULES_LKP };
static const int diff_sort_values[] = { SORT_BY_CHANGE, SORT_BY_KEY };

#define A struct diff_args

static const struct option_spec diff_specs[] = {
	{ .short_name = 'a', .long_name = "all", .help = "every figure, not only those that changed by LKP's rules",
	  OPTION_TRUE(A, all) },
	{ .long_name = "json", .group = 1, .help = "one JSON object (docs/diff.md)", OPTION_CALLBACK(take_format), .value = DIFF_JSON },
	{ .long_name = "folded", .group = 1,
	  .help = "two-column folded stacks (stack, base count, new count) for differential flame graphs, as "
		  "difffolded.pl writes them", OPTION_CALLBACK(take_format), .value = DIFF_FOLDED },
	{ .long_name = "html", .arg = "FILE", .group = 1,
	  .help = "a page of differential flame graphs, one per collector: frames sized by the new side, coloured "
		  "by growth (red) and shrink (blue) of their share; of the first recording of each side "
		  "(docs/report-html.md)", OPTION_CALLBACK(take_format), .value = DIFF_HTML },
	{ .long_name = "pprof", .arg = "PREFIX", .group = 1,
	  .help = "PREFIX.base.pb.gz and PREFIX.new.pb.gz, pprof profiles of the first recording of each side with "
		  "one set of sample types, for go tool pprof -diff_base=PREFIX.base.pb.gz PREFIX.new.pb.gz "
		  "(docs/outputs.md)", OPTION_CALLBACK(take_format), .value = DIFF_PPROF },
	{ .long_name = "width", .arg = "N", .help = "fit the summary in N columns (at most 80)",
	  .default_value = "$COLUMNS, else the terminal's", OPTION_UINT(A, width, 1, 100000),
	  .what = "a number of columns" },
	{ .long_name = "color", .arg = "WHEN", .values = "auto|always|never",
	  .help = "colour the headings and the significant results; auto: when stdout is a terminal and NO_COLOR is "
		  "not set", .default_value = "auto", OPTION_CALLBACK_FIELD(A, color, cli_color_option) },
	{ .long_name = "no-pager",
	  .help = "never page; by default a text longer than the terminal goes through $PAGER (less -FRX)",
	  OPTION_TRUE(A, no_pager) },
	{ .long_name = "run",
	  .help = "the operands are two commands, BASECMD... -- NEWCMD...: record each -r times, alternately (base, "
		  "new, base, ...), keep base.N.data and new.N.data, and compare them", OPTION_TRUE(A, run_given) },
	{ .short_name = 'r', .long_name = "repeat", .arg = "N", .help = "with --run: the runs of each side",
	  .default_value = "3", OPTION_UINT(A, run.runs, 1, 1000), .what = "a number of runs" },
	{ .long_name = "run-dir", .arg = "DIR", .help = "with --run: where the recordings go",
	  .default_value = ".", OPTION_STRING(A, run.dir) },
	{ .long_name = "rules", .arg = "RULES", .values = "lkp+fdr|lkp",
	  .help = "when a figure changed: LKP's rule and Welch's t-test per figure with the false discovery rate over "
		  "all figures held at 5% (Benjamini-Hochberg), or LKP's rule alone, to line up with a robot's report "
		  "(docs/diff.md)",
	  .default_value = "lkp+fdr", OPTION_CHOICE(A, rules), .choices = diff_rules_values },
	{ .long_name = "sort", .arg = "KEY", .values = "change|key",
	  .help = "order the rows of each group by the size of their change or by key", .default_value = "change",
	  OPTION_CHOICE(A, sort), .choices = diff_sort_values },
	{ .long_name = "collector", .arg = "NAME",
	  .help = "only the figures of collector NAME; with --folded, the collector whose stacks are compared",
	  .default_value = "all; --folded: the first with samples", OPTION_CALLBACK_FIELD(A, collector, take_collector) },
	{ .long_name = "min-change", .arg = "PCT",
	  .help = "leave out rows whose %change is smaller than PCT (in absolute value)",
	  OPTION_CALLBACK_FIELD(A, min_change, take_min_change) },
	{ .short_name = 'n', .long_name = "limit", .arg = "N", .help = "at most N rows",
	  OPTION_UINT(A, limit, 1, 100000000) },
	{ .long_name = "path-rule", .arg = "R", .values = "GLOB=PATH", .flags = OPTION_REPEATABLE,
	  .help = "add a path rule GLOB=PATH to the recordings' paths, as report does",
	  OPTION_CALLBACK_FIELD(A, path_rules, cli_path_rule_option) },
	{ .long_name = "path-rules", .arg = "FILE", .help = "add the rules of FILE, one 'GLOB PATH' per line",
	  OPTION_CALLBACK_FIELD(A, path_rules, cli_path_rules_option) },
	{ .long_name = "kallsyms", .arg = "FILE", .help = "kernel symbols from FILE instead of /proc/kallsyms",
	  OPTION_STRING(A, po.kallsyms) },
	{ .long_name = "input-format", .arg = "FMT", .values = "auto|sigprof|perf",
	  .help = "what each input is: a sigprof recording or a perf.data file (auto: by its magic; a stat "
		  "document by its '{')",
	  .default_value = "auto", OPTION_CHOICE(A, po.input_format) },
	CLI_FILTER_OPTION_SPECS(A, filter),
	OPTION_HELP_SPEC,
};
#undef A

const struct option_table diff_option_table = {
	.command = "sigprof diff",
	.operands = "BASE NEW | BASE... -- NEW... | -r N --run BASECMD... -- NEWCMD...",
	.description = "Compare two sets of runs (recordings, or sigprof stat --json documents) the way the kernel test "
		       "robot compares two kernels: each figure's mean and %stddev a side, its %change, and only the "
		       "figures that changed by LKP's rules (at least 3 runs a side; ranges apart around the medians; "
		       "more than 1% for perf metrics, 5% for the others), confirmed by default by Welch's t-test per "
		       "figure with the false discovery rate over the figures held at 5%.",
	.specs = diff_specs,
	.count = ARRAY_SIZE(diff_specs),
};

/* The command line into a: 0, 1 for --help (printed), or -1 (said). */
static int parse_diff_args(int argc, char **argv, struct diff_args *a)
{
	/* "BASE... -- NEW...": the operands after the first "--" are the new side's */
	int dash = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dash = i;
			break;
		}
	/* --run: the options end there, the commands follow (their own options are theirs) */
	int run_at = 0;
	for (int i = 1; i < dash; i++)
		if (strcmp(argv[i], "--run") == 0) {
			run_at = i;
			break;
		}
	struct options_parsed parsed;
	int ret = cli_parse_options(&diff_option_table, run_at ? run_at : dash, argv, a, &parsed);
	if (ret)
		return ret;
	int operand = parsed.operand;
	if (a->run_given)
		return sp_error("diff: write --run whole: the commands follow it (--run BASECMD... -- NEWCMD...)");
	if (cli_filter_given(&diff_option_table, &parsed))
		a->po.filter = &a->filter;
	if (a->format == DIFF_PPROF)
		a->po.weights = true;
	if (a->formats > 1)
		return sp_error("diff: --%s and --%s are two output formats: give one of them", a->format_given[0],
				a->format_given[1]);
	if (a->format != DIFF_TEXT && a->format != DIFF_JSON && (a->all || a->min_change > 0 || a->limit))
		sp_warn("diff: --all, --min-change and -n shape the table, not --%s: ignored", a->format_given[0]);
	if (run_at) {
		if (operand < run_at)
			return sp_error("diff: %s before --run: the options come first, the commands after --run",
					QUOTED(argv[operand]));
		if (dash >= argc || dash == run_at + 1 || dash == argc - 1)
			return sp_error("diff: --run BASECMD... -- NEWCMD...: give a command on each side of --");
		if (a->po.input_format == SP_INPUT_PERF)
			return sp_error("diff: --input-format perf with --run: the runs are sigprof's own recordings");
		if (!a->run.runs)
			a->run.runs = 3;
		if (!a->run.dir)
			a->run.dir = ".";
		a->run.base_cmd = argv + run_at + 1;
		a->run.base_argc = dash - run_at - 1;
		a->run.new_cmd = argv + dash + 1;
		a->run.new_argc = argc - dash - 1;
		return 0;
	}
	if (a->run.runs || a->run.dir)
		return sp_error("diff: -r and --run-dir go with --run BASECMD... -- NEWCMD...");
	a->files[BASE] = (const char **)argv + operand;
	if (dash < argc) {
		a->nfiles[BASE] = (size_t)(dash - operand);
		a->files[NEW] = (const char **)argv + dash + 1;
		a->nfiles[NEW] = (size_t)(argc - dash - 1);
		if (!a->nfiles[BASE] || !a->nfiles[NEW])
			return sp_error("diff: BASE... -- NEW...: give at least one file on each side of --");
		for (size_t i = 0; i < a->nfiles[NEW]; i++) {
			char name[64];
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(a->files[NEW][i], "="), a->files[NEW][i]);
			if (options_find(&diff_option_table, name))
				return sp_error("diff: %s after --: the options go before the files (what follows -- is "
						"the new side's files)", QUOTED(a->files[NEW][i]));
		}
	} else {
		if (argc - operand != 2)
			return sp_error("diff: expected two files, BASE NEW (or several runs a side: BASE... -- NEW...), "
					"got %d", argc - operand);
		a->nfiles[BASE] = 1;
		a->files[NEW] = (const char **)argv + operand + 1;
		a->nfiles[NEW] = 1;
	}
	return 0;
}

/*
 * --html and --pprof: the first recording of each side, loaded whole: one
 * page of differential flame graphs (report_html_diff), or two pprof
 * profiles with one set of sample types (report_pprof_pair).  They need
 * stacks: a stat document is refused.
 */
static int diff_pair_output(const struct diff_args *a)
{
	const char *option = a->format == DIFF_HTML ? "--html" : "--pprof";
	struct profile p[SIDES];
	int loaded = 0, ret = 0;
	for (int s = 0; s < SIDES && ret == 0; s++) {
		const char *file = a->files[s][0];
		char err[512];
		if (a->po.input_format == SP_INPUT_AUTO && looks_like_json(file) > 0) {
			ret = sp_error("diff: %s: a stat document has no stacks for %s", QUOTED(file), option);
			break;
		}
		if (profile_load(file, &a->po, &p[s], err, sizeof(err)) < 0) {
			ret = sp_error("diff: %s: %s: %s (it compares recordings)", option, QUOTED(file), err);
			profile_free(&p[s]);
			break;
		}
		loaded++;
		if (a->nfiles[s] > 1)
			sp_warn("diff: %s takes the first recording of each side: %s", option, QUOTED(file));
	}
	/* as the other formats: filters that keep no sample of either side leave nothing to compare */
	if (ret == 0 && a->po.filter && filter_drops(a->po.filter) && !profile_kept_samples(&p[BASE]) &&
	    !profile_kept_samples(&p[NEW])) {
		char filters[256];
		filter_describe(a->po.filter, filters, sizeof(filters));
		ret = sp_error("diff: %s: the filters (%s) matched no sample in either recording: nothing to compare",
			       option, filters);
	}
	if (ret == 0 && a->format == DIFF_HTML) {
		struct report_options o = { .view = { .top = 15, .stacks_per_path = 3, .max_frames = 24 } };
		ret = report_html_file("diff", a->html, &p[BASE], &p[NEW], &o);
	} else if (ret == 0) {
		struct strbuf base = { 0 }, new = { 0 };
		sb_addf(&base, "%s.base.pb.gz", a->pprof);
		sb_addf(&new, "%s.new.pb.gz", a->pprof);
		char err[512];
		if (report_pprof_pair(&p[BASE], base.buf, &p[NEW], new.buf, err, sizeof(err)) < 0)
			ret = sp_error("diff: --pprof: %s", err);
		else
			printf("go tool pprof -diff_base=%s %s\n", base.buf, new.buf);
		sb_free(&base);
		sb_free(&new);
	}
	for (int s = 0; s < loaded; s++)
		profile_free(&p[s]);
	return ret;
}

/* --run's file names. */
static void free_recorded(struct diff_args *a)
{
	for (size_t i = 0; a->recorded && i < 2 * (size_t)a->run.runs; i++)
		free(a->recorded[i]);
	free(a->recorded);
	a->recorded = NULL;
}

int cmd_diff(int argc, char **argv)
{
	struct path_rules *rules = path_rules_new();
	struct diff_args a = { .sort = SORT_BY_CHANGE };
	a.po = (struct profile_options){ .rules = rules, .collectors = collector_table, .ncollectors = collector_count };
	a.path_rules = rules;
	int parsed = parse_diff_args(argc, argv, &a);
	if (parsed) {
		path_rules_free(rules);
		filter_free(&a.filter);
		return parsed > 0 ? 0 : EXIT_USAGE;
	}
	if (a.run.runs) {
		char err[512];
		if (diff_record_sides(&a.run, &a.recorded, err, sizeof(err)) < 0) {
			sp_error("diff: --run: %s", err);
			path_rules_free(rules);
			filter_free(&a.filter);
			return EXIT_USAGE;
		}
		for (int s = 0; s < SIDES; s++) {
			a.files[s] = (const char **)a.recorded + (size_t)s * a.run.runs;
			a.nfiles[s] = a.run.runs;
		}
	}
	if (a.format == DIFF_HTML || a.format == DIFF_PPROF) {
		int ret = diff_pair_output(&a);
		path_rules_free(rules);
		filter_free(&a.filter);
		free_recorded(&a);
		return ret < 0 ? EXIT_USAGE : 0;
	}
	for (int s = 0; s < SIDES && !a.run.runs; s++)
		a.nfiles[s] = diff_drop_repeated_inputs(a.files[s], a.nfiles[s], side_names[s]);
	struct diff_data *d = xcalloc(1, sizeof(*d));
	d->pool = string_pool_new();
	int ret = 0;
	for (int s = 0; s < SIDES && ret == 0; s++)
		for (size_t i = 0; i < a.nfiles[s] && ret == 0; i++)
			ret = load_input(d, (enum side)s, a.files[s][i], &a);
	struct diff_row *rows = NULL;
	size_t n = 0;
	if (ret == 0 && d->filter_missed.len) {
		char filters[256];
		filter_describe(&a.filter, filters, sizeof(filters));
		if (!d->filter_kept)
			ret = sp_error("diff: the filters (%s) matched no sample in any recording: nothing to compare",
				       filters);
		else
			sp_warn("diff: the filters (%s) matched no sample in %s: those runs are compared without their "
				"samples' figures", filters, d->filter_missed.buf);
	}
	if (ret == 0) {
		warn_command_differences(d);
		warn_collector_differences(d);
	}
	if (ret == 0) {
		if (a.format == DIFF_FOLDED) {
			if (!d->nstacks)
				ret = sp_error("diff: --folded: no samples from collector %s in any input",
					       a.collector ? QUOTED(a.collector) : "any");
			else
				diff_folded(d, stdout);
		} else {
			n = build_rows(d, &a, &rows);
			leave_out_one_sided_rows(d, rows, n);
			if (d->duplicates)
				sp_warn("diff: %zu figures of a run under a key the run had already were left out: a key names "
					"one figure", d->duplicates);
			row_sort = a.sort;
			sort_items(rows, n, sizeof(*rows), compare_rows);
			if (a.format == DIFF_JSON) {
				diff_json(&a, d, rows, n, stdout);
			} else {
				/* the terminal: the summary's width, colour, and the pager for a text longer than the screen */
				unsigned width = term_width(STDOUT_FILENO, a.width);
				summary_width = width && width < SUMMARY_WIDTH ? width : SUMMARY_WIDTH;
				diff_color = term_color_enabled((enum term_color_mode)a.color, STDOUT_FILENO);
				struct pager pg;
				FILE *out = pager_begin(&pg, !a.no_pager);
				diff_text(&a, d, rows, n, out);
				if (pager_end(&pg) < 0)
					ret = sp_error("diff: writing the comparison through the pager failed");
			}
		}
		if (ret == 0 && (fflush(stdout) != 0 || ferror(stdout)))
			ret = sp_error("diff: writing the comparison failed: %s", strerror(errno));
	}
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < SIDES; s++)
			free(rows[i].values[s]);
	free(rows);
	free(d->entries);
	free(d->stacks);
	for (int s = 0; s < SIDES; s++) {
		free(d->recordings[s]);
		free(d->commands[s].names);
		free(d->kernels[s].names);
	}
	string_pool_free(d->pool);
	sb_free(&d->filter_missed);
	free(d);
	path_rules_free(rules);
	filter_free(&a.filter);
	free_recorded(&a);
	return ret < 0 ? EXIT_USAGE : 0;
}
