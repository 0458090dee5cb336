/*
 * util.c: error lines, checked allocation, strbuf, hashing and string
 * interning.  Everything here is small and used by every other module.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sigprof/util.h"

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

/*
 * The text a byte is shown as: \n, \t and \xNN for control characters; with
 * quoting (quote_user), also \' and \\, and \xNN for bytes outside ASCII.
 * Returns its length.
 */
static size_t escape_byte(unsigned char c, bool quoting, char esc[5])
{
	if (c == '\n')
		return (size_t)snprintf(esc, 5, "\\n");
	if (c == '\t')
		return (size_t)snprintf(esc, 5, "\\t");
	if (quoting && (c == '\'' || c == '\\'))
		return (size_t)snprintf(esc, 5, "\\%c", c);
	if (c < 0x20 || c == 0x7f || (quoting && c > 0x7f))
		return (size_t)snprintf(esc, 5, "\\x%02x", c);
	esc[0] = (char)c;
	esc[1] = '\0';
	return 1;
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
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
		char esc[5];
		size_t k = escape_byte(*c, true, esc);
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
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		char esc[5];
		sb_add(sb, esc, escape_byte(*c, false, esc));
	}
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

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	/* FNV-1a, finished with a mixer so that short keys spread well. */
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return hash_u64(h);
}

/*
 * The string pool is an open-addressing table of pointers into chunked
 * storage; strings are never freed one by one.
 */
struct string_pool {
	const char **slots;
	size_t nslots; /* a power of two */
	size_t count;
	char **chunks;
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
};

struct string_pool *string_pool_new(void)
{
	struct string_pool *pool = xcalloc(1, sizeof(*pool));
	pool->nslots = 1024;
	pool->slots = xcalloc(pool->nslots, sizeof(*pool->slots));
	return pool;
}

static char *pool_store(struct string_pool *pool, const char *s, size_t len)
{
	if (!pool->nchunks || pool->chunk_used + len + 1 > pool->chunk_size) {
		size_t size = len + 1 > 65536 ? len + 1 : 65536;
		GROW(pool->chunks, pool->chunks_cap, pool->nchunks + 1);
		pool->chunks[pool->nchunks++] = xmalloc(size);
		pool->chunk_size = size;
		pool->chunk_used = 0;
	}
	char *dst = pool->chunks[pool->nchunks - 1] + pool->chunk_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	pool->chunk_used += len + 1;
	return dst;
}

const char *string_store(struct string_pool *pool, const char *s, size_t len)
{
	return pool_store(pool, s, len);
}

static void pool_rehash(struct string_pool *pool)
{
	size_t n = pool->nslots * 2;
	const char **slots = xcalloc(n, sizeof(*slots));
	for (size_t i = 0; i < pool->nslots; i++) {
		const char *s = pool->slots[i];
		if (!s)
			continue;
		size_t j = hash_bytes(s, strlen(s), 0) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
	}
	free(pool->slots);
	pool->slots = slots;
	pool->nslots = n;
}

const char *string_intern(struct string_pool *pool, const char *s)
{
	size_t len = strlen(s);
	size_t i = hash_bytes(s, len, 0) & (pool->nslots - 1);
	while (pool->slots[i]) {
		if (strcmp(pool->slots[i], s) == 0)
			return pool->slots[i];
		i = (i + 1) & (pool->nslots - 1);
	}
	const char *stored = pool_store(pool, s, len);
	pool->slots[i] = stored;
	if (++pool->count * 2 > pool->nslots)
		pool_rehash(pool);
	return stored;
}

void string_pool_free(struct string_pool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->nchunks; i++)
		free(pool->chunks[i]);
	free(pool->chunks);
	free(pool->slots);
	free(pool);
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

int read_int_file(const char *path, int fallback)
{
	FILE *f = fopen(path, "re");
	int value = fallback;
	if (f) {
		if (fscanf(f, "%d", &value) != 1)
			value = fallback;
		fclose(f);
	}
	return value;
}

bool perf_privileged(void)
{
	if (geteuid() == 0)
		return true;
	size_t len;
	char *status = NULL;
	if (read_file_bounded("/proc/self/status", 1 << 16, &status, &len) < 0)
		return false;
	const char *eff = strstr(status, "\nCapEff:");
	unsigned long long caps = eff ? strtoull(eff + 8, NULL, 16) : 0;
	free(status);
	return caps & (1ull << 38 /* CAP_PERFMON */ | 1ull << 21 /* CAP_SYS_ADMIN */);
}

bool kernel_samples_allowed(void)
{
	return perf_privileged() || read_int_file("/proc/sys/kernel/perf_event_paranoid", 2) <= 1;
}

int read_file_bounded(const char *path, size_t max, char **text, size_t *len)
{
	*text = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = max < (1u << 20) ? max : (1u << 20), used = 0;
	char *buf = xmalloc(cap + 1);
	int err = 0;
	for (;;) {
		if (used == cap) {
			if (cap == max) {
				/* one byte more tells a file of exactly max bytes from a longer one */
				char probe;
				ssize_t n = read(fd, &probe, 1);
				if (n < 0 && errno == EINTR)
					continue;
				err = n < 0 ? -errno : n > 0 ? -EFBIG : 0;
				break;
			}
			cap = cap > max / 2 ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		used += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	return 0;
}

char *read_whole_file(const char *path, size_t *len)
{
	char *text;
	int err = read_file_bounded(path, SIZE_MAX - 1, &text, len);
	if (err)
		errno = -err;
	return text;
}

int read_boot_id(char *buf, size_t buflen)
{
	char *text;
	size_t len;
	int err = read_file_bounded("/proc/sys/kernel/random/boot_id", 64, &text, &len);
	if (err)
		return err;
	text[strcspn(text, "\n")] = '\0';
	if (!text[0] || strlen(text) >= buflen) {
		free(text);
		return -EINVAL;
	}
	snprintf(buf, buflen, "%s", text);
	free(text);
	return 0;
}

const char *file_type_name(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFLNK: return "a symbolic link";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	default: return "not a regular file";
	}
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

static size_t slot_of(const struct u64_map *m, uint64_t key)
{
	size_t mask = m->nslots - 1;
	size_t i = hash_u64(key) & mask;
	while (m->values[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

void *u64_map_get(const struct u64_map *m, uint64_t key)
{
	if (!m->nslots)
		return NULL;
	return m->values[slot_of(m, key)];
}

static void u64_map_grow(struct u64_map *m)
{
	struct u64_map bigger = { .nslots = m->nslots ? m->nslots * 2 : 64 };
	bigger.keys = xcalloc(bigger.nslots, sizeof(uint64_t));
	bigger.values = xcalloc(bigger.nslots, sizeof(void *));
	for (size_t i = 0; i < m->nslots; i++)
		if (m->values[i]) {
			size_t j = slot_of(&bigger, m->keys[i]);
			bigger.keys[j] = m->keys[i];
			bigger.values[j] = m->values[i];
			bigger.count++;
		}
	u64_map_free(m);
	*m = bigger;
}

void *u64_map_put(struct u64_map *m, uint64_t key, void *value)
{
	if ((m->count + 1) * 2 > m->nslots)
		u64_map_grow(m);
	size_t i = slot_of(m, key);
	void *old = m->values[i];
	if (!old)
		m->count++;
	m->keys[i] = key;
	m->values[i] = value;
	return old;
}

void *u64_map_remove(struct u64_map *m, uint64_t key)
{
	if (!m->nslots)
		return NULL;
	size_t mask = m->nslots - 1;
	size_t i = slot_of(m, key);
	void *old = m->values[i];
	if (!old)
		return NULL;
	m->values[i] = NULL;
	m->count--;
	/* re-insert the rest of the probe run so lookups past the hole still work */
	for (size_t j = (i + 1) & mask; m->values[j]; j = (j + 1) & mask) {
		uint64_t k = m->keys[j];
		void *v = m->values[j];
		m->values[j] = NULL;
		size_t t = slot_of(m, k);
		m->keys[t] = k;
		m->values[t] = v;
	}
	return old;
}

bool u64_map_next(const struct u64_map *m, size_t *pos, uint64_t *key, void **value)
{
	while (*pos < m->nslots) {
		size_t i = (*pos)++;
		if (m->values[i]) {
			*key = m->keys[i];
			*value = m->values[i];
			return true;
		}
	}
	return false;
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
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

int output_replaceable(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

/* The directory of path, opened (O_DIRECTORY), with *name at path's last component; -EISDIR when there is none. */
static int directory_of(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!*path)
		return -ENOENT; /* open("") says so too */
	if (!**name)
		return -EISDIR;
	char *dir = slash ? xstrndup(path, (size_t)(slash - path) + (slash == path)) : xstrdup(".");
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return dirfd < 0 ? -errno : dirfd;
}

int output_dir_open(const char *path, const char **name)
{
	int dirfd = directory_of(path, name);
	if (dirfd < 0)
		return dirfd;
	int err = output_replaceable(dirfd, *name);
	if (err) {
		close(dirfd);
		return err;
	}
	return dirfd;
}

int private_temp_create(int dirfd, const char *name, char **temp)
{
	for (int attempt = 0; attempt < 64; attempt++) {
		uint32_t r = 0;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint32_t)(now_monotonic_ns() ^ ((uint64_t)getpid() << 16)) + (uint32_t)attempt;
		struct strbuf sb = { 0 };
		/* the name cut so that the temporary one stays within NAME_MAX */
		sb_addf(&sb, ".%.200s.%08x", name, r);
		int fd = openat(dirfd, sb.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*temp = sb.buf;
			return fd;
		}
		int err = -errno;
		sb_free(&sb);
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

int safe_output_open(const char *path, unsigned mode, struct safe_output *out)
{
	memset(out, 0, sizeof(*out));
	out->dirfd = -1;
	const char *name;
	int dirfd = output_dir_open(path, &name);
	if (dirfd < 0)
		return dirfd;
	char *temp;
	int fd = private_temp_create(dirfd, name, &temp);
	if (fd < 0) {
		close(dirfd);
		return fd;
	}
	out->fp = fdopen(fd, "w");
	if (!out->fp) {
		int err = -errno;
		close(fd);
		unlinkat(dirfd, temp, 0);
		free(temp);
		close(dirfd);
		return err;
	}
	out->dirfd = dirfd;
	out->name = xstrdup(name);
	out->temp = temp;
	out->mode = mode;
	return 0;
}

static void safe_output_free(struct safe_output *out)
{
	if (out->dirfd >= 0)
		close(out->dirfd);
	free(out->name);
	free(out->temp);
	memset(out, 0, sizeof(*out));
	out->dirfd = -1;
}

int safe_output_commit(struct safe_output *out)
{
	int err = 0;
	errno = 0;
	if (fflush(out->fp) != 0)
		err = errno ? -errno : -EIO;
	else if (ferror(out->fp))
		err = -EIO; /* an earlier write failed: its errno is long gone */
	if (!err && fchmod(fileno(out->fp), out->mode) != 0)
		err = -errno;
	if (fclose(out->fp) != 0 && !err)
		err = -errno;
	out->fp = NULL;
	/* the name may have become a link or a device since the open: never replace one */
	if (!err)
		err = output_replaceable(out->dirfd, out->name);
	if (!err && renameat(out->dirfd, out->temp, out->dirfd, out->name) != 0)
		err = -errno;
	if (err)
		unlinkat(out->dirfd, out->temp, 0);
	safe_output_free(out);
	return err;
}

void safe_output_abort(struct safe_output *out)
{
	if (out->fp)
		fclose(out->fp);
	if (out->dirfd >= 0 && out->temp)
		unlinkat(out->dirfd, out->temp, 0);
	safe_output_free(out);
}

void u64_map_free_values(struct u64_map *m, void (*free_value)(void *value))
{
	for (size_t i = 0; i < m->nslots; i++)
		if (m->values[i])
			free_value(m->values[i]);
	u64_map_free(m);
}

static bool owned_by_root_or_caller(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/* Whether st is the file this process's standard input, output or error is (sudo sigprof -o /dev/stdout | less). */
static bool a_standard_stream(const struct stat *st)
{
	struct stat fd;
	for (int i = 0; i <= 2; i++)
		if (fstat(i, &fd) == 0 && fd.st_dev == st->st_dev && fd.st_ino == st->st_ino)
			return true;
	return false;
}

/* Whether only root or the caller can change the entries of a directory (sticky: each its own). */
static bool directory_fixed(const struct stat *dir)
{
	return owned_by_root_or_caller(dir) && (!(dir->st_mode & (S_IWGRP | S_IWOTH)) || (dir->st_mode & S_ISVTX));
}

int stream_output_open(const char *path, bool *created)
{
	*created = false;
	const char *name;
	int dirfd = directory_of(path, &name);
	if (dirfd < 0)
		return dirfd;
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd >= 0 || errno != EEXIST) {
		int err = fd >= 0 ? fd : -errno;
		*created = fd >= 0;
		close(dirfd);
		return err;
	}
	int flags = O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, err = 0;
	struct stat dir, entry, target;
	if (fstat(dirfd, &dir) < 0 || fstatat(dirfd, name, &entry, AT_SYMLINK_NOFOLLOW) < 0) {
		err = -errno;
	} else if (!S_ISLNK(entry.st_mode)) {
		flags |= O_NOFOLLOW;
	} else if (!owned_by_root_or_caller(&entry) || !directory_fixed(&dir)) {
		err = -EPERM;
	}
	if (!err) {
		fd = openat(dirfd, name, flags);
		if (fd < 0 && errno == ENOENT && !(flags & O_NOFOLLOW))
			fd = openat(dirfd, name, flags | O_CREAT, 0666); /* a link to a file yet to be made */
		/* ELOOP: a link put in place of the file since fstatat() */
		err = fd < 0 ? (errno == ELOOP ? -EPERM : -errno) : 0;
	}
	close(dirfd);
	if (err)
		return err;
	if (fstat(fd, &target) < 0)
		err = -errno;
	else if (S_ISREG(target.st_mode) && target.st_nlink > 1)
		err = -EMLINK;
	else if (!S_ISREG(target.st_mode) && !owned_by_root_or_caller(&target) && !a_standard_stream(&target))
		err = -EPERM;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static struct rlimit files_before;
static bool files_raised;

void open_files_limit_raise(void)
{
	struct rlimit files;
	if (files_raised || getrlimit(RLIMIT_NOFILE, &files) < 0)
		return;
	files_before = files;
	size_t len = 0;
	char *text = read_whole_file("/proc/sys/fs/nr_open", &len);
	unsigned long long nr_open = text ? strtoull(text, NULL, 10) : 0;
	free(text);
	struct rlimit raised = { (rlim_t)nr_open, (rlim_t)nr_open };
	if (nr_open <= files.rlim_max || setrlimit(RLIMIT_NOFILE, &raised) < 0) {
		files.rlim_cur = files.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &files) < 0)
			return;
	}
	files_raised = true;
}

void open_files_limit_restore(void)
{
	if (files_raised)
		setrlimit(RLIMIT_NOFILE, &files_before);
}
