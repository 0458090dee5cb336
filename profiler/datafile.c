/*
 * datafile.c: the sigprof.data container (docs/data-format.md).
 *
 * The writer keeps a 1 MiB buffer in front of write(2) and only appends, so a
 * file cut short at any moment holds whole records up to some point, plus at
 * most one partial record that the reader ignores.  Started async
 * (sp_writer_start_async(), the recorder does), a filled buffer goes to a
 * writer thread and the caller carries on in a fresh one: a write(2) that
 * stalls for a moment (ext4 under load: 50-150 ms here) then stalls that
 * thread, not the drain loop whose ring buffers would overflow meanwhile.
 *
 * The file's life is written for root in a directory other users can
 * write (docs/security.md): nothing is ever opened by the output's name.
 * The writer creates a new file of its own next to it (O_EXCL|O_NOFOLLOW,
 * a random hidden name, through the directory's descriptor), and
 * sp_writer_publish() renames it into place, the previous file going to
 * NAME.old by rename too; a failure removes only that file.
 *
 * The reader streams: it keeps a buffer of at least two maximal records
 * (64 KiB each) and refills it as records are consumed, so a report reads a
 * file of any size in constant memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lz4.h>

#include "sigprof/format.h"
#include "sigprof/util.h"

#define WRITE_BUFFER_SIZE (1u << 20)
#define READ_BUFFER_SIZE (1u << 20)

/* A filled buffer on its way to the writer thread, or a spare one. */
struct wbuf {
	struct wbuf *next;
	size_t used;
	char data[];
};

struct sp_writer {
	int fd;
	/*
	 * A file's life: created under temp_name in dirfd, renamed to name by
	 * publish_output() (the previous name going to name.old).  A pipe
	 * (sp_writer_from_fd()) has dirfd -1 and is born published.
	 */
	int dirfd;
	char *name;
	char *temp_name;
	bool published;
	bool moved_old;   /* publishing renamed a previous recording to name.old */
	char *buf;
	size_t used;
	uint64_t bytes; /* written to the file or buffered */
	int error;      /* first write error, sticky */
	/* async mode: w->buf is the data of cur, full ones queue for the thread */
	bool async;
	struct wbuf *cur;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;           /* queue non-empty, a buffer freed, or stop */
	struct wbuf *head, *tail;      /* FIFO of filled buffers */
	struct wbuf *spare;            /* written buffers for reuse */
	size_t nbufs, max_bufs;        /* buffers allocated, and the bound */
	bool stop;
	int thread_error;              /* the thread's first write error */
};

/* An entry that may be replaced by a new recording: none, or a regular file (never followed if a link). */
static int check_replaceable(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

/*
 * A new file of our own next to name: O_EXCL|O_NOFOLLOW, so that nothing
 * another user placed there (a link, a FIFO, a device) is opened, and a
 * random suffix, so that a name cannot be prepared in advance.
 */
static int create_temp(struct sp_writer *w)
{
	for (int attempt = 0; attempt < 64; attempt++) {
		uint32_t r = 0;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint32_t)(now_monotonic_ns() ^ ((uint64_t)getpid() << 16)) + (uint32_t)attempt;
		struct strbuf temp = { 0 };
		/* cut the name so that the temporary one stays within NAME_MAX */
		sb_addf(&temp, ".%.200s.%08x", w->name, r);
		int fd = openat(w->dirfd, temp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			w->fd = fd;
			w->temp_name = temp.buf;
			return 0;
		}
		int err = -errno;
		sb_free(&temp);
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

static struct sp_writer *writer_new(int fd)
{
	struct sp_writer *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->dirfd = -1;
	w->buf = xmalloc(WRITE_BUFFER_SIZE);
	return w;
}

static int write_file_header(struct sp_writer *w)
{
	struct sp_file_header hdr = { .version = SP_VERSION,
				      .header_size = sizeof(hdr),
				      .byte_order = SP_BYTE_ORDER };
	memcpy(hdr.magic, SP_MAGIC, sizeof(SP_MAGIC));
	int err = sp_writer_raw(w, &hdr, sizeof(hdr));
	return err ? err : sp_writer_flush(w);
}

int sp_writer_create(const char *path, struct sp_writer **out)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EISDIR;
	char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = dirfd < 0 ? -errno : 0;
	free(dir);
	if (err)
		return err;
	err = check_replaceable(dirfd, base);
	if (err) {
		close(dirfd);
		return err;
	}
	struct sp_writer *w = writer_new(-1);
	w->dirfd = dirfd;
	w->name = xstrdup(base);
	err = create_temp(w);
	err = err ? err : write_file_header(w);
	if (err) {
		sp_writer_discard(w);
		return err;
	}
	*out = w;
	return 0;
}

int sp_writer_from_fd(int fd, struct sp_writer **out)
{
	struct sp_writer *w = writer_new(fd);
	w->published = true;
	int err = write_file_header(w);
	if (err) {
		sp_writer_discard(w);
		return err;
	}
	*out = w;
	return 0;
}

static char *old_name(const struct sp_writer *w)
{
	struct strbuf old = { 0 };
	sb_addf(&old, "%s.old", w->name);
	return old.buf;
}

int sp_writer_publish(struct sp_writer *w)
{
	if (w->published)
		return 0;
	if (w->error)
		return w->error;
	/* checked again: what is there now is what would be moved to .old */
	int err = check_replaceable(w->dirfd, w->name);
	if (err)
		return err;
	char *old = old_name(w);
	if (renameat(w->dirfd, w->name, w->dirfd, old) == 0)
		w->moved_old = true;
	else if (errno != ENOENT)
		err = -errno;
	if (!err && renameat(w->dirfd, w->temp_name, w->dirfd, w->name) < 0) {
		err = -errno;
		if (w->moved_old && renameat(w->dirfd, old, w->dirfd, w->name) == 0)
			w->moved_old = false;
	}
	free(old);
	if (!err)
		w->published = true;
	return err;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *writer_thread(void *arg)
{
	struct sp_writer *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		struct wbuf *b = w->head;
		if (!b)
			break; /* stopped, and the queue is empty */
		w->head = b->next;
		if (!w->head)
			w->tail = NULL;
		int err = w->thread_error;
		pthread_mutex_unlock(&w->lock);
		if (!err)
			err = write_all(w->fd, b->data, b->used);
		pthread_mutex_lock(&w->lock);
		if (err && !w->thread_error)
			w->thread_error = err;
		b->next = w->spare;
		w->spare = b;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Queue the current buffer for the thread and take a spare one; waits while max_bufs are in flight. */
static int hand_off(struct sp_writer *w)
{
	pthread_mutex_lock(&w->lock);
	struct wbuf *b = w->cur;
	b->used = w->used;
	b->next = NULL;
	if (w->tail)
		w->tail->next = b;
	else
		w->head = b;
	w->tail = b;
	pthread_cond_broadcast(&w->cond);
	while (!w->spare && w->nbufs >= w->max_bufs && !w->thread_error)
		pthread_cond_wait(&w->cond, &w->lock);
	struct wbuf *next = w->spare;
	if (next)
		w->spare = next->next;
	else if (!w->thread_error)
		w->nbufs++;
	int err = w->thread_error;
	pthread_mutex_unlock(&w->lock);
	if (!next && !err)
		next = xmalloc(sizeof(*next) + WRITE_BUFFER_SIZE);
	if (err) {
		/* b is the thread's now; keep writing into a buffer that is never written */
		if (!next)
			next = xmalloc(sizeof(*next) + WRITE_BUFFER_SIZE);
		w->error = err;
	}
	w->cur = next;
	w->buf = next->data;
	w->used = 0;
	return w->error;
}

int sp_writer_start_async(struct sp_writer *w, size_t max_queued)
{
	if (w->async)
		return 0;
	int err = sp_writer_flush(w);
	if (err)
		return err;
	w->max_bufs = max_queued / WRITE_BUFFER_SIZE;
	if (w->max_bufs < 2)
		w->max_bufs = 2;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->cur = xmalloc(sizeof(*w->cur) + WRITE_BUFFER_SIZE);
	w->nbufs = 1;
	err = -pthread_create(&w->thread, NULL, writer_thread, w);
	if (err) {
		free(w->cur);
		w->cur = NULL;
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		return err; /* stays synchronous */
	}
	free(w->buf);
	w->buf = w->cur->data;
	w->async = true;
	return 0;
}

int sp_writer_flush(struct sp_writer *w)
{
	if (w->error)
		return w->error;
	if (w->async)
		return w->used ? hand_off(w) : 0;
	if (w->used) {
		w->error = write_all(w->fd, w->buf, w->used);
		w->used = 0;
	}
	return w->error;
}

/* Stop the thread once it has written every queued buffer; its error, if any. */
static int stop_async(struct sp_writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	int err = w->thread_error;
	for (struct wbuf *b = w->spare, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(w->cur);
	w->buf = NULL;
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	return err;
}

int sp_writer_raw(struct sp_writer *w, const void *data, size_t len)
{
	if (w->error)
		return w->error;
	w->bytes += len;
	const char *p = data;
	while (w->used + len > WRITE_BUFFER_SIZE) {
		if (!w->async) {
			if (sp_writer_flush(w))
				return w->error;
			if (len >= WRITE_BUFFER_SIZE)
				return w->error = write_all(w->fd, data, len);
			break;
		}
		/* async: fill the buffer, hand it off, go on with the rest (the thread writes in order) */
		size_t n = WRITE_BUFFER_SIZE - w->used;
		memcpy(w->buf + w->used, p, n);
		w->used += n;
		p += n;
		len -= n;
		if (hand_off(w))
			return w->error;
	}
	memcpy(w->buf + w->used, p, len);
	w->used += len;
	return 0;
}

int sp_writer_record(struct sp_writer *w, const void *rec)
{
	const struct perf_event_header *h = rec;
	return sp_writer_raw(w, rec, h->size);
}

int sp_writer_meta(struct sp_writer *w, const char *key, const char *const *values, uint32_t nvalues)
{
	size_t len = sizeof(struct perf_event_header) + sizeof(uint32_t) + strlen(key) + 1;
	for (uint32_t i = 0; i < nvalues; i++)
		len += strlen(values[i]) + 1;
	len = ALIGN_UP(len, 8);
	if (len > UINT16_MAX)
		return -E2BIG;
	char *rec = xcalloc(1, len);
	struct perf_event_header *h = (void *)rec;
	h->type = SP_REC_META;
	h->size = (uint16_t)len;
	uint32_t count = nvalues + 1;
	memcpy(rec + sizeof(*h), &count, sizeof(count));
	char *p = rec + sizeof(*h) + sizeof(count);
	p = stpcpy(p, key) + 1;
	for (uint32_t i = 0; i < nvalues; i++)
		p = stpcpy(p, values[i]) + 1;
	int err = sp_writer_raw(w, rec, len);
	free(rec);
	return err;
}

int sp_writer_event(struct sp_writer *w, const char *name, const char *collector,
		    const struct perf_event_attr *attr, const uint64_t *ids, uint32_t nr_ids)
{
	size_t attr_bytes = ALIGN_UP(attr->size, 8);
	size_t len = sizeof(struct sp_event_record) + attr_bytes + nr_ids * sizeof(uint64_t);
	if (len > UINT16_MAX)
		return -E2BIG;
	char *rec = xcalloc(1, len);
	struct sp_event_record *ev = (void *)rec;
	ev->header.type = SP_REC_EVENT;
	ev->header.size = (uint16_t)len;
	ev->attr_size = attr->size;
	ev->nr_ids = nr_ids;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	snprintf(ev->collector, sizeof(ev->collector), "%s", collector);
	memcpy(rec + sizeof(*ev), attr, attr->size);
	memcpy(rec + sizeof(*ev) + attr_bytes, ids, nr_ids * sizeof(uint64_t));
	int err = sp_writer_raw(w, rec, len);
	free(rec);
	return err;
}

int sp_writer_tracepoint(struct sp_writer *w, uint64_t id, const char *system, const char *format)
{
	size_t flen = strlen(format);
	size_t len = ALIGN_UP(sizeof(struct sp_tracepoint_record) + flen, 8);
	if (len > UINT16_MAX)
		return -E2BIG;
	char *rec = xcalloc(1, len);
	struct sp_tracepoint_record *tp = (void *)rec;
	tp->header.type = SP_REC_TRACEPOINT;
	tp->header.size = (uint16_t)len;
	tp->id = id;
	snprintf(tp->system, sizeof(tp->system), "%s", system);
	tp->format_len = (uint32_t)flen;
	memcpy(rec + sizeof(*tp), format, flen);
	int err = sp_writer_raw(w, rec, len);
	free(rec);
	return err;
}

/*
 * The text is cut in blocks of SP_KALLSYMS_CHUNK bytes, each compressed as
 * one block of an LZ4 stream (each may refer back to the previous 64 KiB),
 * one record per block: a reader decompresses record by record straight
 * into one buffer.
 */
int sp_writer_kallsyms(struct sp_writer *w, const char *text, size_t len)
{
	if (len > (size_t)LZ4_MAX_INPUT_SIZE)
		return -E2BIG;
	LZ4_stream_t *stream = LZ4_createStream();
	if (!stream)
		return -ENOMEM;
	size_t cap = sizeof(struct sp_kallsyms_record) + (size_t)LZ4_compressBound(SP_KALLSYMS_CHUNK) + 8;
	char *rec = xmalloc(cap);
	int err = 0;
	uint32_t seq = 0;
	for (size_t done = 0; done < len && !err; seq++) {
		int n = (int)(len - done < SP_KALLSYMS_CHUNK ? len - done : SP_KALLSYMS_CHUNK);
		struct sp_kallsyms_record *k = (void *)rec;
		int z = LZ4_compress_fast_continue(stream, text + done, rec + sizeof(*k), n,
						   LZ4_compressBound(SP_KALLSYMS_CHUNK), 1);
		size_t size = ALIGN_UP(sizeof(*k) + (size_t)z, 8);
		if (z <= 0 || size > UINT16_MAX) {
			err = -ENOMEM;
			break;
		}
		memset(rec + sizeof(*k) + z, 0, size - sizeof(*k) - (size_t)z);
		*k = (struct sp_kallsyms_record){ .header = { .type = SP_REC_KALLSYMS, .size = (uint16_t)size },
						  .sequence = seq,
						  .flags = done + (size_t)n == len ? SP_KALLSYMS_LAST : 0,
						  .text_size = len,
						  .chunk_size = (uint32_t)z };
		err = sp_writer_raw(w, rec, size);
		done += (size_t)n;
	}
	free(rec);
	LZ4_freeStream(stream);
	return err;
}

uint64_t sp_writer_bytes(const struct sp_writer *w)
{
	return w->bytes;
}

/* Write what is buffered, stop the thread, close; the first error. */
static int finish_writing(struct sp_writer *w)
{
	int err = sp_writer_flush(w);
	if (w->async) {
		int thread_err = stop_async(w);
		err = err ? err : thread_err;
	}
	if (fsync(w->fd) < 0 && !err && errno != EINVAL)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	w->fd = -1;
	return err;
}

static void writer_free(struct sp_writer *w)
{
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->name);
	free(w->temp_name);
	free(w->buf);
	free(w);
}

int sp_writer_close(struct sp_writer *w)
{
	int err = finish_writing(w);
	if (!err)
		err = sp_writer_publish(w);
	if (err && !w->published)
		unlinkat(w->dirfd, w->temp_name, 0); /* a failed file never replaces the previous one */
	writer_free(w);
	return err;
}

void sp_writer_discard(struct sp_writer *w)
{
	if (w->fd >= 0) {
		struct stat ours, there;
		bool ours_known = fstat(w->fd, &ours) == 0;
		w->error = w->error ? w->error : -ECANCELED; /* nothing more reaches the file */
		finish_writing(w);
		if (w->dirfd >= 0 && !w->published) {
			unlinkat(w->dirfd, w->temp_name, 0);
		} else if (w->dirfd >= 0 && ours_known && fstatat(w->dirfd, w->name, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
			   there.st_dev == ours.st_dev && there.st_ino == ours.st_ino) {
			/* published, and the name is still our file (not one put there since): undo */
			unlinkat(w->dirfd, w->name, 0);
			if (w->moved_old) {
				char *old = old_name(w);
				renameat(w->dirfd, old, w->dirfd, w->name);
				free(old);
			}
		}
	}
	writer_free(w);
}

uint32_t sp_meta_strings(const struct perf_event_header *rec, const char **strings, uint32_t max)
{
	const char *p = (const char *)rec + sizeof(*rec);
	const char *end = (const char *)rec + rec->size;
	uint32_t count;
	if (rec->size < sizeof(*rec) + sizeof(count))
		return 0;
	memcpy(&count, p, sizeof(count));
	p += sizeof(count);
	uint32_t found = 0;
	while (found < count && p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul)
			break;
		if (found < max)
			strings[found] = p;
		found++;
		p = nul + 1;
	}
	return found;
}

/* ---- reader ---- */

struct sp_reader {
	int fd;
	char *buf;
	size_t start, end; /* unread bytes are buf[start, end) */
	uint64_t buf_offset; /* file offset of buf[0] */
	uint64_t record_offset;
	bool eof;
	char problem[160];
};

static int reader_fill(struct sp_reader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->buf_offset += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	while (!r->eof && r->end < READ_BUFFER_SIZE) {
		ssize_t n = read(r->fd, r->buf + r->end, READ_BUFFER_SIZE - r->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			r->eof = true;
		r->end += (size_t)n;
	}
	return 0;
}

static int check_header(const struct sp_file_header *hdr, char *err, size_t errlen)
{
	if (memcmp(hdr->magic, SP_MAGIC, sizeof(SP_MAGIC)) != 0) {
		if (memcmp(hdr->magic, "PERFILE2", 8) == 0)
			snprintf(err, errlen, "a perf.data file, not a sigprof recording (use perf report)");
		else
			snprintf(err, errlen, "not a sigprof data file (bad magic)");
		return -EINVAL;
	}
	if (hdr->byte_order != SP_BYTE_ORDER) {
		snprintf(err, errlen, "recorded on a machine of the other byte order");
		return -EINVAL;
	}
	if (hdr->version == 0) {
		snprintf(err, errlen, "corrupt file header (format version 0)");
		return -EINVAL;
	}
	if (hdr->version > SP_VERSION) {
		snprintf(err, errlen, "format version %u is newer than this sigprof reads (%u)", hdr->version,
			 SP_VERSION);
		return -EINVAL;
	}
	if (hdr->header_size < sizeof(*hdr) || hdr->header_size % 8 || hdr->header_size > 4096) {
		snprintf(err, errlen, "corrupt file header (header size %u)", hdr->header_size);
		return -EINVAL;
	}
	return 0;
}

int sp_reader_open(const char *path, struct sp_reader **out, char *err, size_t errlen)
{
	/* "-": standard input, a pipe from `sigprof record -o -` (the reader never seeks) */
	int fd = strcmp(path, "-") == 0 ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s", strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "is a directory, not a sigprof recording");
		close(fd);
		return -EISDIR;
	}
	struct sp_reader *r = xcalloc(1, sizeof(*r));
	r->fd = fd;
	r->buf = xmalloc(READ_BUFFER_SIZE);
	int ret = reader_fill(r);
	if (ret < 0) {
		snprintf(err, errlen, "%s", strerror(-ret));
	} else if (r->end == 0) {
		snprintf(err, errlen, "empty file, not a sigprof recording");
		ret = -EINVAL;
	} else if (r->end < sizeof(struct sp_file_header)) {
		snprintf(err, errlen, "too short for a sigprof file header (%zu bytes)", r->end);
		ret = -EINVAL;
	} else {
		struct sp_file_header hdr;
		memcpy(&hdr, r->buf, sizeof(hdr));
		ret = check_header(&hdr, err, errlen);
		if (!ret && hdr.header_size > r->end) {
			snprintf(err, errlen, "too short for its header");
			ret = -EINVAL;
		}
		if (!ret)
			r->start = hdr.header_size;
	}
	if (ret < 0) {
		sp_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

int sp_reader_next(struct sp_reader *r, const struct perf_event_header **rec)
{
	if (r->problem[0])
		return 0;
	if (!r->eof && r->end - r->start < UINT16_MAX + 1u) {
		int ret = reader_fill(r);
		if (ret < 0) {
			snprintf(r->problem, sizeof(r->problem), "read error at offset %llu: %s",
				 (unsigned long long)(r->buf_offset + r->end), strerror(-ret));
			return 0;
		}
	}
	size_t avail = r->end - r->start;
	uint64_t offset = r->buf_offset + r->start;
	if (avail == 0)
		return 0;
	if (avail < sizeof(struct perf_event_header)) {
		snprintf(r->problem, sizeof(r->problem), "partial record at offset %llu (file cut short)",
			 (unsigned long long)offset);
		return 0;
	}
	const struct perf_event_header *h = (const void *)(r->buf + r->start);
	if (h->size < sizeof(*h) || h->size % 8) {
		snprintf(r->problem, sizeof(r->problem), "corrupt record at offset %llu (size %u)",
			 (unsigned long long)offset, h->size);
		return 0;
	}
	if (h->size > avail) {
		snprintf(r->problem, sizeof(r->problem), "partial record at offset %llu (file cut short)",
			 (unsigned long long)offset);
		return 0;
	}
	r->record_offset = offset;
	r->start += h->size;
	*rec = h;
	return 1;
}

const char *sp_reader_problem(const struct sp_reader *r)
{
	return r->problem[0] ? r->problem : NULL;
}

uint64_t sp_reader_offset(const struct sp_reader *r)
{
	return r->record_offset;
}

void sp_reader_close(struct sp_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->buf);
	free(r);
}
