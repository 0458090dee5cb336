/*
 * term.c: the terminal's width, cutting labels to a width, and colour
 * (term.h).  The text outputs lay themselves out with these; nothing here
 * prints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sigprof/base/term.h"

static const char ellipsis[] = "\xe2\x80\xa6"; /* U+2026, one column */

unsigned term_width(int fd, unsigned given)
{
	unsigned width = given;
	const char *columns = getenv("COLUMNS");
	if (!width && columns && *columns) {
		char *end;
		unsigned long v = strtoul(columns, &end, 10);
		if (*end == '\0' && v > 0 && v < 100000)
			width = (unsigned)v;
	}
	struct winsize ws;
	if (!width && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		width = ws.ws_col;
	if (width && width < TERM_MIN_WIDTH)
		width = TERM_MIN_WIDTH;
	return width;
}

unsigned term_rows(int fd)
{
	struct winsize ws;
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0)
		return ws.ws_row;
	return 0;
}

static bool continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t term_columns(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += !continuation((unsigned char)*s);
	return n;
}

/* The byte offset after the first n columns of s. */
static size_t head_bytes(const char *s, size_t n)
{
	size_t i = 0;
	for (size_t col = 0; s[i]; i++) {
		if (!continuation((unsigned char)s[i]) && col++ == n)
			break;
	}
	return i;
}

/* The byte offset where the last n columns of s (of len bytes) start. */
static size_t tail_start(const char *s, size_t len, size_t n)
{
	size_t i = len;
	for (size_t col = 0; i > 0 && col < n; col++) {
		i--;
		while (i > 0 && continuation((unsigned char)s[i]))
			i--;
	}
	return i;
}

/* head columns of s, the ellipsis, the last tail columns of s: into buf. */
static const char *join_cut(const char *s, size_t head, size_t tail, char *buf, size_t len)
{
	size_t slen = strlen(s);
	size_t hb = head_bytes(s, head), ts = tail_start(s, slen, tail);
	if (hb + strlen(ellipsis) + (slen - ts) + 1 > len)
		return s; /* buf too small to cut into: leave it whole rather than lose it */
	memcpy(buf, s, hb);
	memcpy(buf + hb, ellipsis, strlen(ellipsis));
	memcpy(buf + hb + strlen(ellipsis), s + ts, slen - ts + 1);
	return buf;
}

/*
 * Where the last component of a C++ name starts: its last "::" outside
 * template arguments and the parameter list ("a::b<c::d>::f(e::g)" -> "::f(e::g)"),
 * or NULL.
 */
static const char *last_component(const char *s)
{
	const char *last = NULL;
	int angle = 0, paren = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle > 0)
			angle--;
		else if (*p == '(')
			paren++;
		else if (*p == ')' && paren > 0)
			paren--;
		else if (p[0] == ':' && p[1] == ':' && !angle && !paren)
			last = p;
	}
	return last;
}

const char *term_cut(const char *s, size_t width, char *buf, size_t len)
{
	size_t cols = term_columns(s);
	if (!width || cols <= width)
		return s;
	if (width == 1)
		return join_cut(s, 0, 0, buf, len);
	if (strstr(s, "::")) {
		const char *last = last_component(s);
		size_t tail = last ? term_columns(last) : 0;
		/* keep the last component whole when a few columns of the qualifiers still fit before it */
		if (last && tail + 1 + 4 <= width)
			return join_cut(s, width - 1 - tail, tail, buf, len);
		size_t head = (width - 1) / 2;
		return join_cut(s, head, width - 1 - head, buf, len);
	}
	return join_cut(s, width - 1, 0, buf, len);
}

int term_color_parse(const char *s, enum term_color_mode *mode)
{
	if (strcmp(s, "auto") == 0)
		*mode = TERM_COLOR_AUTO;
	else if (strcmp(s, "always") == 0 || strcmp(s, "yes") == 0)
		*mode = TERM_COLOR_ALWAYS;
	else if (strcmp(s, "never") == 0 || strcmp(s, "no") == 0)
		*mode = TERM_COLOR_NEVER;
	else
		return -EINVAL;
	return 0;
}

bool term_color_enabled(enum term_color_mode mode, int fd)
{
	if (mode != TERM_COLOR_AUTO)
		return mode == TERM_COLOR_ALWAYS;
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
	if (no_color && *no_color)
		return false;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fd);
}

const char *term_on(bool color, enum term_paint paint)
{
	static const char *const sgr[] = {
		[PAINT_PATH] = "\033[1;36m",    /* bold cyan: a path's name */
		[PAINT_KERNEL] = "\033[33m",    /* yellow: kernel frames (flame graphs' orange) */
		[PAINT_USER] = "\033[32m",      /* green: user frames */
		[PAINT_HEADING] = "\033[1m",    /* bold: a section's heading */
		[PAINT_MARK] = "\033[35m",      /* magenta: [signal ...] and [unwind: ...] frames */
		[PAINT_DIM] = "\033[2m",        /* faint: dso names */
	};
	return color ? sgr[paint] : "";
}

const char *term_off(bool color)
{
	return color ? "\033[0m" : "";
}
