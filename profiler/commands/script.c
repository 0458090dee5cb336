/*
 * script.c: `sigprof script`, every sample of a recording in time order,
 * one event at a time, in the text form `perf script` prints (so the tools
 * that read perf script's output read ours: FlameGraph's
 * stackcollapse-perf.pl, speedscope, Firefox Profiler), or one JSON object
 * per line (--json).  docs/outputs.md describes both.
 *
 *   signal_storm 4242/4242 [001] 12345.678901: signal:signal_deliver: sig=10 errno=0 code=-6 sa_handler=... sa_flags=...
 *   \t    7f3a12c4e0b0 kill (/usr/lib/x86_64-linux-gnu/libc.so.6)
 *   \t        55d0c4a011c9 main (/work/build/workloads/signal_storm)
 *   (a blank line)
 *
 * The header is the command, pid/tid, [cpu], the time in seconds of the
 * perf clock (the times the report's sections print), the period for
 * events that are not tracepoints, the event, and for a tracepoint its
 * fields as the kernel's print format shows them.  Frames come leaf first
 * from the report's own stacks (kernel part, DWARF-unwound user part,
 * [signal SIG] and [unwind: ...] frames), one a line: the function's start
 * in its file (frames are interned per function, so not the sampled
 * instruction), the function ([unknown] when no symbol names it) and the
 * file ([kernel.kallsyms] for the kernel, as perf names it).
 *
 * The samples come from the profile loader's per-sample callback
 * (profile_options.on_sample): the same reading, ordering, decoding and
 * unwinding as `sigprof report`, printed as each is loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/base/json.h"
#include "sigprof/base/options.h"
#include "sigprof/model/profile.h"
#include "sigprof/model/datafile.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/base/util.h"
#include "sigprof/view/view.h"

struct script_filter {
	bool json;
	struct profile_filter time;        /* --time, which the loader applies as report's (filter.h) */
	uint64_t *pids, *tids;
	size_t npids, ntids;
	char **events;                     /* event or collector names */
	size_t nevents;
};

struct script {
	const char *input;                 /* -i FILE */
	struct profile_options po;
	struct script_filter f;
	FILE *out;
	struct json_writer json;
	uint64_t shown;
};

/* --pid, --tid (.value 1): the ids, comma-separated, added to the list. */
static int take_ids(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	struct script_filter *f = field;
	uint64_t **ids = s->value ? &f->tids : &f->pids;
	size_t *n = s->value ? &f->ntids : &f->npids;
	const char *p = arg;
	while (*p) {
		size_t len = strcspn(p, ",");
		char buf[32];
		uint64_t v;
		if (len == 0 || len >= sizeof(buf)) {
			snprintf(err, errlen, "--%s %s: expected numbers separated by commas", s->long_name, QUOTED(arg));
			return -1;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (parse_u64(buf, 0, UINT32_MAX, &v) < 0) {
			snprintf(err, errlen, "--%s %s: %s is not a process or thread id", s->long_name, QUOTED(arg),
				 QUOTED(buf));
			return -1;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = v;
		p += len + (p[len] == ',');
	}
	return 0;
}

static int take_names(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	struct script_filter *f = field;
	const char *p = arg;
	size_t before = f->nevents;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len) {
			f->events = xrealloc(f->events, (f->nevents + 1) * sizeof(*f->events));
			f->events[f->nevents++] = xstrndup(p, len);
		}
		p += len + (p[len] == ',');
	}
	/* an empty list would select every event, the opposite of what was asked */
	if (f->nevents == before) {
		snprintf(err, errlen, "--event %s: no event or collector named", QUOTED(arg));
		return -1;
	}
	return 0;
}

#define S struct script
static const struct option_spec script_specs[] = {
	{ .short_name = 'i', .long_name = "input", .arg = "FILE", .help = "the recording",
	  .default_value = "sigprof.data", OPTION_STRING(S, input) },
	{ .long_name = "json", .help = "one JSON object per event and line instead of perf script's text",
	  OPTION_TRUE(S, f.json) },
	{ .long_name = "time", .arg = "T", .values = "START,END",
	  .help = "only events from START to END, as report and diff read it: seconds as the events' times show them "
		  "(END's last digit whole), seconds from the start of the recording, or percentages of it; either may "
		  "be empty", OPTION_CALLBACK_FIELD(S, f.time, cli_filter_time_option) },
	{ .long_name = "pid", .arg = "PIDS", .help = "only events of these processes, comma-separated",
	  OPTION_CALLBACK_FIELD(S, f, take_ids) },
	{ .long_name = "tid", .arg = "TIDS", .help = "only events of these threads, comma-separated",
	  OPTION_CALLBACK_FIELD(S, f, take_ids), .value = 1 },
	{ .long_name = "event", .arg = "NAMES",
	  .help = "only these events (signal:signal_deliver, cpu-clock; a kernel event names the parts sigprof opened "
		  "it as too: signal:signal_generate#kernel) or the events of these collectors (signal), "
		  "comma-separated", OPTION_CALLBACK_FIELD(S, f, take_names) },
	CLI_INPUT_FORMAT_OPTION_SPEC(S, po.input_format),
	{ .long_name = "kallsyms", .arg = "FILE",
	  .help = "kernel symbols from FILE instead of the recording's copy or /proc/kallsyms",
	  OPTION_STRING(S, po.kallsyms) },
	{ .long_name = "srcline", .help = "file:line of each frame (DWARF), inlined calls as frames",
	  OPTION_TRUE(S, po.srcline) },
	OPTION_HELP_SPEC,
};
#undef S

const struct option_table script_option_table = {
	.command = "sigprof script",
	.description = "Print every sample of a recording in time order, each with its decoded fields and its stack, in "
		       "the text form of perf script (for stackcollapse-perf.pl, speedscope, Firefox Profiler) or as "
		       "one JSON object per line.",
	.specs = script_specs,
	.count = ARRAY_SIZE(script_specs),
};

/* The command line into sc: 0, 1 for --help (printed), or -1 (said). */
static int parse_script_args(int argc, char **argv, struct script *sc)
{
	struct options_parsed parsed;
	int ret = cli_parse_options(&script_option_table, argc, argv, sc, &parsed);
	if (ret)
		return ret;
	if (parsed.operand < argc)
		return sp_error("script: unexpected argument %s (the recording is named with -i FILE)",
				QUOTED(argv[parsed.operand]));
	if (options_given(&script_option_table, &parsed, "time", 0))
		sc->po.filter = &sc->f.time;
	return 0;
}

static bool listed(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * Whether --event's name names an event: its name, its collector, or the
 * kernel's event of which it is a part (signal:signal_generate names
 * signal:signal_generate#kernel too: sigprof opens one tracepoint as
 * several events, "NAME#PART", rate_bound.h).
 */
static bool event_named(const char *want, const struct sp_event *ev)
{
	size_t len = strlen(want);
	return strcmp(want, ev->name) == 0 || strcmp(want, ev->collector) == 0 ||
	       (strncmp(want, ev->name, len) == 0 && ev->name[len] == '#');
}

static bool wanted(const struct script_filter *f, const struct sp_sample *s)
{
	if (f->npids && !listed(f->pids, f->npids, s->pid))
		return false;
	if (f->ntids && !listed(f->tids, f->ntids, s->tid))
		return false;
	if (!f->nevents)
		return true;
	for (size_t i = 0; i < f->nevents; i++)
		if (event_named(f->events[i], s->event))
			return true;
	return false;
}

/* The thread's name as perf script prints it: its own, else its process's, "swapper" for the idle task, else ":PID". */
static const char *comm_of(const struct profile *p, uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	const char *comm = proc_table_thread_comm_of(p->procs, pid, tid);
	if (comm && comm[0])
		return comm;
	if (pid == 0)
		return "swapper";
	snprintf(buf, len, ":%u", pid);
	return buf;
}

static bool is_tracepoint(const struct sp_sample *s)
{
	return s->event->attr.type == PERF_TYPE_TRACEPOINT;
}

/*
 * The collector's own words for a sample (collector.h, describe), then what
 * the analyzers that observed it add (describe_observed: the waker of the
 * sleep a switch-in ended), joined by "; "; NULL when none has words.
 */
static const char *describe(const struct profile *p, const struct sp_sample *s, int collector, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int c = -1; c < p->ncollectors && used + 3 < len; c++) {
		const struct collector_info *ci = &p->collectors[c < 0 ? collector : c];
		const struct collector_analyzer *an = ci->impl ? ci->impl->analyzer : NULL;
		if (!ci->state || !an || (c >= 0 && c == collector))
			continue;
		bool (*words)(void *, const struct profile *, const struct sp_sample *, char *, size_t) =
			c < 0 ? an->describe : an->describe_observed;
		size_t at = used ? used + 2 : 0;
		if (words && words(ci->state, p, s, buf + at, len - at)) {
			if (used)
				memcpy(buf + used, "; ", 2);
			used = at + strlen(buf + at);
		} else if (used) {
			buf[used] = '\0';
		}
	}
	return used ? buf : NULL;
}

static void text_event(struct script *sc, const struct profile *p, const struct sp_sample *s, int collector,
		       uint32_t stack)
{
	FILE *out = sc->out;
	char comm[32], fields[4096];
	char when[32];
	fprintf(out, "%s %u/%u [%03u] %s: ", PRINTABLE(comm_of(p, s->pid, s->tid, comm, sizeof(comm))), s->pid, s->tid, s->cpu,
		view_time(s->time, when, sizeof(when)));
	if (!is_tracepoint(s))
		fprintf(out, "%10llu ", (unsigned long long)s->period);
	fprintf(out, "%s:", s->event->name);
	/* a tracepoint's fields and the collector's words hold comms and names from the recording */
	struct strbuf shown = { 0 };
	if (is_tracepoint(s) && tp_print(&p->tracepoints, s, fields, sizeof(fields))) {
		sb_addstr(&shown, " ");
		sb_add_printable(&shown, fields);
	}
	char words[512];
	if (describe(p, s, collector, words, sizeof(words))) {
		sb_addstr(&shown, " (");
		sb_add_printable(&shown, words);
		sb_addstr(&shown, ")");
	}
	if (shown.len)
		fputs(shown.buf, out);
	sb_free(&shown);
	fputc('\n', out);
	const struct stack *st = &p->stacks.stacks[stack];
	const uint32_t *frames = stack_frames(&p->stacks, st);
	char source[256];
	for (uint32_t i = 0; i < st->nframes; i++) {
		const struct frame *f = &p->stacks.frames[frames[i]];
		fprintf(out, "\t%16llx %s (%s)\n", (unsigned long long)f->addr, f->sym ? PRINTABLE(f->sym) : "[unknown]",
			f->kernel ? "[kernel.kallsyms]" : PRINTABLE(f->dso));
		if (frame_srcline(f, source, sizeof(source)))
			fprintf(out, "\t  %s%s\n", source, f->inlined ? " (inlined)" : "");
	}
	fputc('\n', out);
}

/* A tracepoint's fields as JSON members: numbers as numbers, character arrays as strings. */
static void json_fields(struct json_writer *w, const struct profile *p, const struct sp_sample *s)
{
	const struct tep_event *ev = view_tracepoint_of(p, s);
	if (!ev)
		return;
	json_object_begin(w, "fields");
	bool is_string, is_array;
	const char *name;
	for (size_t i = 0; (name = tp_field_name(ev, i, &is_string, &is_array)); i++) {
		char buf[256];
		int64_t v;
		if (is_string && tp_field_str(ev, s, name, buf, sizeof(buf)))
			json_string(w, name, buf);
		else if (!is_array && tp_field_i64(ev, s, name, &v))
			json_i64(w, name, v);
	}
	json_end(w);
}

static void json_event(struct script *sc, const struct profile *p, const struct sp_sample *s, int collector,
		       uint32_t stack)
{
	struct json_writer *w = &sc->json;
	char comm[32], fields[4096];
	json_object_begin(w, NULL);
	json_u64(w, "time_ns", s->time);
	json_u64(w, "cpu", s->cpu);
	json_u64(w, "pid", s->pid);
	json_u64(w, "tid", s->tid);
	json_string(w, "comm", comm_of(p, s->pid, s->tid, comm, sizeof(comm)));
	json_string(w, "event", s->event->name);
	json_string(w, "collector", p->collectors[collector].name);
	json_u64(w, "period", s->period);
	json_string(w, "path", path_name(p->stacks.stacks[stack].path));
	if (is_tracepoint(s) && tp_print(&p->tracepoints, s, fields, sizeof(fields)))
		json_string(w, "trace", fields);
	json_fields(w, p, s);
	char words[512];
	if (describe(p, s, collector, words, sizeof(words)))
		json_string(w, "decoded", words);
	view_json_stack(w, p, stack);
	json_finish(w);
}

static void on_sample(void *ctx, const struct profile *p, const struct sp_sample *s, int collector, uint32_t stack)
{
	struct script *sc = ctx;
	if (!wanted(&sc->f, s))
		return;
	sc->shown++;
	if (sc->f.json)
		json_event(sc, p, s, collector, stack);
	else
		text_event(sc, p, s, collector, stack);
}

static void script_filter_free(struct script_filter *f)
{
	filter_free(&f->time);
	free(f->pids);
	free(f->tids);
	for (size_t i = 0; i < f->nevents; i++)
		free(f->events[i]);
	free(f->events);
}

int cmd_script(int argc, char **argv)
{
	struct script sc = { .out = stdout, .input = "sigprof.data" };
	sc.po = (struct profile_options){ .collectors = collector_table, .ncollectors = collector_count,
					  .on_sample = on_sample, .ctx = &sc };
	int parsed = parse_script_args(argc, argv, &sc);
	if (parsed) {
		script_filter_free(&sc.f);
		return parsed > 0 ? 0 : EXIT_USAGE;
	}
	const char *input = sc.input;
	/* hundreds of thousands of events: write in large blocks, and take stdout's lock once */
	static char buffer[1 << 20];
	setvbuf(stdout, buffer, _IOFBF, sizeof(buffer));
	flockfile(stdout);
	json_init_compact(&sc.json, stdout);
	struct profile p;
	char err[512];
	int ret = profile_load(input, &sc.po, &p, err, sizeof(err));
	if (ret < 0)
		sp_error("script: %s: %s", input, err);
	else if (p.truncated)
		sp_warn("%s %s (%s); these are the %llu samples it holds", input, profile_end_verb(&p),
			p.problem[0] ? p.problem : "no closing section", (unsigned long long)p.samples);
	else if (p.problem[0])
		sp_warn("%s: %s; these are the events that came before", input, p.problem);
	bool failed = fflush(stdout) != 0 || ferror(stdout);
	funlockfile(stdout);
	if (failed) {
		sp_error("script: writing the events failed: %s", strerror(errno));
		ret = -EIO;
	}
	for (size_t i = 0; ret == 0 && i < sc.f.nevents; i++) {
		bool known = false;
		for (size_t e = 0; e < p.events.count && !known; e++)
			known = event_named(sc.f.events[i], &p.events.events[e]);
		if (!known)
			sp_warn("script: --event %s: %s has no such event or collector", QUOTED(sc.f.events[i]), input);
	}
	profile_free(&p);
	script_filter_free(&sc.f);
	return ret < 0 ? EXIT_USAGE : 0;
}
