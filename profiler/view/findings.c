/*
 * findings.c: the list of findings and caveats that collectors fill
 * through their analyzer's `findings` hook and the report's first screen
 * ranks (findings.h, docs/report-summary.md).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/util.h"
#include "sigprof/view/findings.h"

static char *vformat(const char *fmt, va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	char *text = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	vsnprintf(text, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
	return text;
}

/* A new finding with its text and where to look next; the caller sets how it ranks. */
static struct finding *add_item(struct findings *f, const char *next, const char *fmt, va_list ap)
{
	GROW(f->items, f->cap, f->count + 1);
	struct finding *item = &f->items[f->count++];
	*item = (struct finding){ .text = vformat(fmt, ap), .next = xstrdup(next ? next : "") };
	return item;
}

void findings_add(struct findings *f, unsigned paths, double share, const char *next, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct finding *item = add_item(f, next, fmt, ap);
	va_end(ap);
	item->paths = paths;
	item->share = share;
}

void findings_add_path_time(struct findings *f, const uint64_t *ns, const char *next, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct finding *item = add_item(f, next, fmt, ap);
	va_end(ap);
	item->share = FINDING_SHARE_UNKNOWN;
	item->path_ns = xcalloc(PATH_COUNT, sizeof(*item->path_ns));
	memcpy(item->path_ns, ns, PATH_COUNT * sizeof(*item->path_ns));
}

void findings_caveat(struct findings *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = vformat(fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < f->ncaveats; i++)
		if (strcmp(f->caveats[i], text) == 0) {
			free(text);
			return;
		}
	GROW(f->caveats, f->caveats_cap, f->ncaveats + 1);
	f->caveats[f->ncaveats++] = text;
}

/* Largest share first, unknown last; a stable order among equals (insertion sort: a screenful of rows). */
void findings_sort(struct findings *f)
{
	for (size_t i = 1; i < f->count; i++) {
		struct finding x = f->items[i];
		size_t j = i;
		while (j > 0 && f->items[j - 1].share < x.share) {
			f->items[j] = f->items[j - 1];
			j--;
		}
		f->items[j] = x;
	}
}

void findings_free(struct findings *f)
{
	for (size_t i = 0; i < f->count; i++) {
		free(f->items[i].text);
		free(f->items[i].next);
		free(f->items[i].path_ns);
	}
	for (size_t i = 0; i < f->ncaveats; i++)
		free(f->caveats[i]);
	free(f->items);
	free(f->caveats);
	memset(f, 0, sizeof(*f));
}

const char *findings_count(unsigned long long n, char *buf, size_t len)
{
	if (n >= 1000000000ull)
		snprintf(buf, len, "%.1f G", (double)n / 1e9);
	else if (n >= 1000000ull)
		snprintf(buf, len, "%.1f M", (double)n / 1e6);
	else if (n >= 1000ull)
		snprintf(buf, len, "%llu %03llu", n / 1000, n % 1000);
	else
		snprintf(buf, len, "%llu", n);
	return buf;
}

const char *findings_duration(unsigned long long ns, char *buf, size_t len)
{
	if (ns >= 10000000000ull)
		snprintf(buf, len, "%.0f s", (double)ns / 1e9);
	else if (ns >= 1000000000ull)
		snprintf(buf, len, "%.1f s", (double)ns / 1e9);
	else if (ns >= 10000000ull)
		snprintf(buf, len, "%.0f ms", (double)ns / 1e6);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 10000ull)
		snprintf(buf, len, "%.0f µs", (double)ns / 1e3);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.1f µs", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", ns);
	return buf;
}
