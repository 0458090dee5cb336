/*
 * util.c: error lines, checked allocation, strbuf, quoting, clocks, sorting
 * and signal names.  Everything here is small and used by every other module.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sigprof/base/util.h"

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char line[4096];
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "sigprof: %s%s\n", prefix, line);
}

int sp_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
	return -1;
}

void sp_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

size_t utf8_sequence_length(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF (RFC 3629) */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/*
 * The one rule for a string from a recording or a user on a terminal: the
 * text of the character at s, and how many bytes of s it stands for.  \n,
 * \t, \xNN for C0 controls and DEL, for C1 controls however they come (the
 * raw byte 0x9b and its UTF-8 form c2 9b are both CSI to some terminal),
 * and for every byte that is not part of valid UTF-8.  With quoting
 * (quote_user), also \' and \\, and \xNN for every byte outside ASCII.
 * esc holds at least 17 bytes; returns the text's length.
 */
static size_t escape_character(const unsigned char *s, bool quoting, char esc[17], size_t *consumed)
{
	unsigned char c = s[0];
	size_t n = utf8_sequence_length(s);
	bool c1 = n == 2 && c == 0xc2 && s[1] <= 0x9f;
	*consumed = n > 1 ? n : 1;
	if (c == '\n')
		return (size_t)snprintf(esc, 17, "\\n");
	if (c == '\t')
		return (size_t)snprintf(esc, 17, "\\t");
	if (quoting && (c == '\'' || c == '\\'))
		return (size_t)snprintf(esc, 17, "\\%c", c);
	if (c < 0x20 || c == 0x7f || n == 0 || (quoting && c > 0x7f)) {
		*consumed = 1;
		return (size_t)snprintf(esc, 17, "\\x%02x", c);
	}
	if (c1)
		return (size_t)snprintf(esc, 17, "\\x%02x\\x%02x", c, s[1]);
	memcpy(esc, s, n);
	esc[n] = '\0';
	return n;
}

const char *quote_user(const char *s, char *buf, size_t buflen)
{
	static const char dots[] = "...'";
	if (buflen < sizeof(dots) + 1) {
		if (buflen)
			buf[0] = '\0';
		return buf;
	}
	size_t n = 0, room = buflen - sizeof(dots); /* what the quotes and "..." leave, NUL included */
	buf[n++] = '\'';
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c;) {
		char esc[17];
		size_t used;
		size_t k = escape_character(c, true, esc, &used);
		c += used;
		if (n + k > room) {
			memcpy(buf + n, dots, sizeof(dots)); /* "...'" and its NUL */
			return buf;
		}
		memcpy(buf + n, esc, k);
		n += k;
	}
	buf[n++] = '\'';
	buf[n] = '\0';
	return buf;
}

const char *format_share(double part, double whole, char *buf, size_t buflen)
{
	if (part <= 0) {
		snprintf(buf, buflen, "0.00%%");
		return buf;
	}
	if (whole <= 0) {
		snprintf(buf, buflen, "-");
		return buf;
	}
	snprintf(buf, buflen, "%.2f%%", 100.0 * part / whole);
	/* what the two decimals rounded to nothing, or to all */
	if (strcmp(buf, "0.00%") == 0)
		snprintf(buf, buflen, "<0.01%%");
	else if (part < whole && strcmp(buf, "100.00%") == 0)
		snprintf(buf, buflen, ">99.99%%");
	return buf;
}

static void out_of_memory(size_t n)
{
	fprintf(stderr, "sigprof: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		out_of_memory(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		out_of_memory(n);
	return q;
}

void *xmalloc_large(size_t n)
{
	const size_t huge = 2u << 20;
	void *p = NULL;
	if (n < huge)
		return xmalloc(n);
	if (posix_memalign(&p, huge, ALIGN_UP(n, huge)) != 0)
		out_of_memory(n);
	madvise(p, ALIGN_UP(n, huge), MADV_HUGEPAGE);
	return p;
}

void *xmap(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		out_of_memory(n);
	return p;
}

void xunmap(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void grow_array(void **array, size_t *cap, size_t need, size_t elem_size)
{
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	*array = xrealloc(*array, n * elem_size);
	*cap = n;
}

static void sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->cap)
		return;
	size_t n = sb->cap ? sb->cap : 64;
	while (n < need)
		n *= 2;
	sb->buf = xrealloc(sb->buf, n);
	sb->cap = n;
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	sb_reserve(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_addstr(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_add_printable(struct strbuf *sb, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		char esc[17];
		size_t used;
		sb_add(sb, esc, escape_character(c, false, esc, &used));
		c += used;
	}
}

bool is_printable(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			return false;
	return true;
}

const char *printable_text(const char *s, char *buf, size_t buflen)
{
	if (!s || is_printable(s))
		return s;
	static const char dots[] = "...";
	size_t n = 0;
	if (buflen < sizeof(dots) + 1)
		return buflen ? (buf[0] = '\0', buf) : buf;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		char esc[17];
		size_t used;
		size_t k = escape_character(c, false, esc, &used);
		c += used;
		if (n + k + sizeof(dots) > buflen) {
			memcpy(buf + n, dots, sizeof(dots));
			return buf;
		}
		memcpy(buf + n, esc, k);
		n += k;
	}
	buf[n] = '\0';
	return buf;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_reserve(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Insertion sort: linear for an array with a few elements out of place. */
static void insertion_sort(char *base, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	char *held = xmalloc(size);
	for (size_t i = 1; i < count; i++) {
		if (compare(base + (i - 1) * size, base + i * size) <= 0)
			continue;
		memcpy(held, base + i * size, size);
		size_t j = i;
		while (j > 0 && compare(base + (j - 1) * size, held) > 0)
			j--;
		memmove(base + (j + 1) * size, base + j * size, (i - j) * size);
		memcpy(base + j * size, held, size);
	}
	free(held);
}

void sort_unless_sorted(void *base, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	const char *p = base;
	size_t descents = 0;
	for (size_t i = 1; i < count; i++)
		descents += compare(p + (i - 1) * size, p + i * size) > 0;
	if (descents == 0)
		return;
	if (descents <= count / 64)
		insertion_sort(base, count, size, compare);
	else
		qsort(base, count, size, compare);
}

void sort_items(void *base, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	if (count > 1)
		qsort(base, count, size, compare);
}

/* The kernel's first real-time signal; glibc's SIGRTMIN is above it (it keeps 32 and 33 for its threads). */
#define KERNEL_SIGRTMIN 32

/* The standard signals by number (the spellings of kill -l, without aliases such as SIGIOT or SIGPOLL). */
static const char *const standard_signal_names[KERNEL_SIGRTMIN] = {
	[SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",       [SIGQUIT] = "SIGQUIT",     [SIGILL] = "SIGILL",
	[SIGTRAP] = "SIGTRAP",     [SIGABRT] = "SIGABRT",     [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",
	[SIGKILL] = "SIGKILL",     [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV",     [SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM",     [SIGTERM] = "SIGTERM",     [SIGSTKFLT] = "SIGSTKFLT",
	[SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT",     [SIGSTOP] = "SIGSTOP",     [SIGTSTP] = "SIGTSTP",
	[SIGTTIN] = "SIGTTIN",     [SIGTTOU] = "SIGTTOU",     [SIGURG] = "SIGURG",       [SIGXCPU] = "SIGXCPU",
	[SIGXFSZ] = "SIGXFSZ",     [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",     [SIGWINCH] = "SIGWINCH",
	[SIGIO] = "SIGIO",         [SIGPWR] = "SIGPWR",       [SIGSYS] = "SIGSYS",
};

const char *signal_name(int signo, char *buf, size_t buflen)
{
	int rtmin = SIGRTMIN, rtmax = SIGRTMAX; /* glibc's, asked at run time */
	if (signo > 0 && signo < KERNEL_SIGRTMIN && standard_signal_names[signo])
		snprintf(buf, buflen, "%s", standard_signal_names[signo]);
	else if (signo == rtmin)
		snprintf(buf, buflen, "SIGRTMIN");
	else if (signo == rtmax)
		snprintf(buf, buflen, "SIGRTMAX");
	else if (signo > rtmin && signo < rtmax)
		snprintf(buf, buflen, "SIGRTMIN+%d", signo - rtmin);
	else if (signo >= KERNEL_SIGRTMIN && signo < rtmin)
		snprintf(buf, buflen, "SIGRTMIN-%d", rtmin - signo);
	else
		snprintf(buf, buflen, "SIG%d", signo);
	return buf;
}

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* three rows of the (la+1) x (lb+1) table: two back for a swap */
	size_t *rows = xcalloc(3 * (lb + 1), sizeof(*rows));
	size_t *back2 = rows, *back1 = rows + lb + 1, *cur = rows + 2 * (lb + 1);
	for (size_t j = 0; j <= lb; j++)
		back1[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t d = back1[j - 1] + cost;
			if (back1[j] + 1 < d)
				d = back1[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && back2[j - 2] + 1 < d)
				d = back2[j - 2] + 1;
			cur[j] = d;
		}
		size_t *t = back2;
		back2 = back1;
		back1 = cur;
		cur = t;
	}
	size_t d = back1[lb];
	free(rows);
	return d;
}

void nearest_offer(struct nearest *n, const char *name)
{
	size_t len = strlen(n->word);
	if (!len || strcmp(n->word, name) == 0)
		return;
	size_t d = len >= 2 && strncmp(n->word, name, len) == 0 ? 0 : edit_distance(n->word, name);
	size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	if (d <= limit && (!n->best || d < n->distance)) {
		n->best = name;
		n->distance = d;
	}
}
