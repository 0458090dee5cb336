/*
 * filter.c: the report filters (filter.h): parsing, matching, the header
 * line.  The loader (profile.c) decides where each applies.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/filter.h"
#include "sigprof/base/util.h"

int filter_add_pids(struct profile_filter *f, const char *text, bool threads, char *err, size_t errlen)
{
	uint32_t **list = threads ? &f->tids : &f->pids;
	size_t *n = threads ? &f->ntids : &f->npids;
	const char *p = text;
	do {
		size_t len = strcspn(p, ",");
		char item[24];
		uint64_t v;
		if (len == 0 || len >= sizeof(item)) {
			snprintf(err, errlen, "--%s %s: expected a list of %s ids such as 12,34", threads ? "tid" : "pid",
				 text, threads ? "thread" : "process");
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (parse_u64(item, 0, UINT32_MAX, &v) < 0) {
			snprintf(err, errlen, "--%s %s: %s is not a %s id", threads ? "tid" : "pid", text, item,
				 threads ? "thread" : "process");
			return -EINVAL;
		}
		*list = xrealloc(*list, (*n + 1) * sizeof(**list));
		(*list)[(*n)++] = (uint32_t)v;
		if (p[len] != ',')
			break;
		p += len + 1; /* a trailing comma leaves an empty item: an error */
	} while (1);
	return 0;
}

int filter_add_names(struct profile_filter *f, const char *text, bool dsos, char *err, size_t errlen)
{
	char ***list = dsos ? &f->dsos : &f->comms;
	size_t *n = dsos ? &f->ndsos : &f->ncomms;
	const char *p = text;
	do {
		size_t len = strcspn(p, ",");
		if (len == 0) {
			snprintf(err, errlen, "--%s %s: an empty name", dsos ? "dso" : "comm", text);
			return -EINVAL;
		}
		*list = xrealloc(*list, (*n + 1) * sizeof(**list));
		char *name = xmalloc(len + 1);
		memcpy(name, p, len);
		name[len] = '\0';
		(*list)[(*n)++] = name;
		if (p[len] != ',')
			break;
		p += len + 1; /* a trailing comma leaves an empty item: an error */
	} while (1);
	return 0;
}

/* The ns that the last digit of a number of seconds stands for: "1.5" 100000000, "1077.711787" 1000. */
static uint64_t last_digit_ns(const char *s)
{
	const char *dot = strchr(s, '.');
	uint64_t unit = 1000000000ull;
	for (const char *d = dot ? dot + 1 : s + strlen(s); *d >= '0' && *d <= '9' && unit > 1; d++)
		unit /= 10;
	return unit;
}

/* One bound of --time: "" (none), "1.5" seconds, "25%". */
static int parse_bound(const char *s, size_t len, double *v, bool *percent, bool *given)
{
	char buf[64];
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*given = len > 0;
	*percent = len && buf[len - 1] == '%';
	if (!len)
		return 0;
	if (*percent)
		buf[len - 1] = '\0';
	char *end;
	*v = strtod(buf, &end);
	if (end == buf || *end || !isfinite(*v) || *v < 0 || (*percent && *v > 100))
		return -EINVAL;
	return 0;
}

int filter_set_time(struct profile_filter *f, const char *text, char *err, size_t errlen)
{
	const char *comma = strchr(text, ',');
	bool start_given = false;
	int ret = comma ? 0 : -EINVAL;
	f->time_start = 0;
	f->time_end = 0;
	if (!ret)
		ret = parse_bound(text, (size_t)(comma - text), &f->time_start, &f->start_percent, &start_given);
	if (!ret)
		ret = parse_bound(comma + 1, strlen(comma + 1), &f->time_end, &f->end_percent, &f->has_end);
	f->end_digit_ns = !ret && f->has_end && !f->end_percent ? last_digit_ns(comma + 1) : 0;
	if (!ret && f->has_end && f->start_percent == f->end_percent && f->time_end < f->time_start)
		ret = -EINVAL;
	if (ret < 0 || (!start_given && !f->has_end)) {
		snprintf(err, errlen,
			 "--time %s: expected START,END, each seconds from the start of the recording (1.5), a time "
			 "as sigprof script prints it (1283.901234), or a percentage of the recording (25%%); either "
			 "may be empty, END not before START",
			 text);
		return -EINVAL;
	}
	f->has_time = true;
	return 0;
}

int filter_set_percent_limit(struct profile_filter *f, const char *text, char *err, size_t errlen)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || (*end && strcmp(end, "%") != 0) || !isfinite(v) || v < 0 || v > 100) {
		snprintf(err, errlen, "--percent-limit %s: expected a percentage from 0 to 100", text);
		return -EINVAL;
	}
	f->percent_limit = v;
	return 0;
}

bool filter_drops(const struct profile_filter *f)
{
	return f && (f->npids || f->ntids || f->ncomms || f->ndsos || f->has_time);
}

static void describe_ids(struct strbuf *sb, const char *opt, const uint32_t *ids, size_t n)
{
	if (!n)
		return;
	sb_addf(sb, "%s%s ", sb->len ? " " : "", opt);
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%u", i ? "," : "", ids[i]);
}

static void describe_names(struct strbuf *sb, const char *opt, char *const *names, size_t n)
{
	if (!n)
		return;
	sb_addf(sb, "%s%s ", sb->len ? " " : "", opt);
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%s", i ? "," : "", names[i]);
}

void filter_describe(const struct profile_filter *f, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	if (f) {
		describe_ids(&sb, "--pid", f->pids, f->npids);
		describe_ids(&sb, "--tid", f->tids, f->ntids);
		describe_names(&sb, "--comm", f->comms, f->ncomms);
		describe_names(&sb, "--dso", f->dsos, f->ndsos);
		if (f->has_time) {
			sb_addf(&sb, "%s--time ", sb.len ? " " : "");
			if (f->time_start > 0 || f->start_percent)
				sb_addf(&sb, "%.15g%s", f->time_start, f->start_percent ? "%" : "");
			sb_addf(&sb, ",");
			if (f->has_end)
				sb_addf(&sb, "%.15g%s", f->time_end, f->end_percent ? "%" : "");
		}
		if (f->percent_limit > 0)
			sb_addf(&sb, "%s--percent-limit %g", sb.len ? " " : "", f->percent_limit);
	}
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}

static bool has_id(const uint32_t *ids, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == v)
			return true;
	return false;
}

bool filter_task(const struct profile_filter *f, uint32_t pid, uint32_t tid, const char *comm,
		 const char *thread_comm)
{
	if (!f)
		return true;
	if (f->npids && !has_id(f->pids, f->npids, pid))
		return false;
	if (f->ntids && !has_id(f->tids, f->ntids, tid))
		return false;
	if (f->ncomms) {
		bool found = false;
		for (size_t i = 0; i < f->ncomms && !found; i++)
			found = (comm && strcmp(f->comms[i], comm) == 0) ||
				(thread_comm && strcmp(f->comms[i], thread_comm) == 0);
		if (!found)
			return false;
	}
	return true;
}

bool filter_dso(const struct profile_filter *f, const char *dso)
{
	if (!f || !f->ndsos)
		return true;
	if (!dso)
		return false;
	const char *base = strrchr(dso, '/');
	base = base ? base + 1 : dso;
	for (size_t i = 0; i < f->ndsos; i++) {
		const char *want = f->dsos[i];
		if (strcmp(want, dso) == 0 || strcmp(want, base) == 0)
			return true;
		/* [kernel] names the kernel whatever the loader calls it ([kernel.kallsyms]) */
		if (strcmp(want, "[kernel]") == 0 && strncmp(dso, "[kernel", 7) == 0)
			return true;
	}
	return false;
}

bool filter_time_is_clock(double seconds, uint64_t first, uint64_t last)
{
	double ns = seconds * 1e9;
	if (!first || ns < (double)first || ns >= 1.8e19)
		return false;
	/* an offset that falls inside the recording stays an offset (a recording longer than the uptime at its start) */
	return last == UINT64_MAX || last <= first || ns > (double)(last - first);
}

/*
 * A bound in the recording's clock: a percentage of its span, a time of
 * the clock itself (filter_time_is_clock()), or seconds from its first
 * record; digit_ns (an END of the clock: its last digit whole) is added.
 */
static uint64_t bound_ns(double v, bool percent, uint64_t digit_ns, uint64_t first, uint64_t last)
{
	if (!percent && filter_time_is_clock(v, first, last))
		return (uint64_t)llround(v * 1e9) + digit_ns;
	double span = last > first ? (double)(last - first) : 0;
	double off = percent ? span * v / 100.0 : v * 1e9;
	return off >= 1.8e19 ? UINT64_MAX : first + (uint64_t)llround(off);
}

void filter_window(const struct profile_filter *f, uint64_t first, uint64_t last, uint64_t *start,
		   uint64_t *end)
{
	*start = bound_ns(f->time_start, f->start_percent, 0, first, last);
	*end = f->has_end ? bound_ns(f->time_end, f->end_percent, f->end_digit_ns, first, last) : UINT64_MAX;
	/* half-open [start, end), so that ,50% and 50%, split a recording; an END at or past the last record keeps it */
	if (*end >= last)
		*end = UINT64_MAX;
}

void filter_free(struct profile_filter *f)
{
	for (size_t i = 0; i < f->ncomms; i++)
		free(f->comms[i]);
	for (size_t i = 0; i < f->ndsos; i++)
		free(f->dsos[i]);
	free(f->comms);
	free(f->dsos);
	free(f->pids);
	free(f->tids);
	memset(f, 0, sizeof(*f));
}
