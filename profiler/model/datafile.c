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
 * Concurrent runs to one name: the writer holds an exclusive flock() on
 * its file from its creation to its close, so a file that is still being
 * written is locked under its name; a later writer refuses to replace it
 * (-EBUSY: "record -o same.data" twice keeps the first run's data, the
 * second says why), the check and the rename made under a flock() of the
 * directory so two writers publishing at once cannot both pass the check.
 *
 * Compressed (version 2), what the writer has to write, a buffer or less,
 * becomes one chunk: a zstd frame of its own with a small header in front
 * (struct sp_chunk_header), made by the writer thread once async, so the
 * drain loop still only copies.  A chunk is independent of every other, so
 * a file cut short reads up to its last whole chunk; a record may straddle
 * two chunks, the reader decompresses into one stream of records.
 *
 * The reader streams: it keeps a buffer of at least two maximal records
 * (64 KiB each) and refills it as records are consumed, so a report reads a
 * file of any size in constant memory; compressed, the buffer also holds one
 * decompressed chunk (at most SP_CHUNK_MAX) and the frame it came from.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lz4.h>
#include <zstd.h>

#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/perfdata.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

#define WRITE_BUFFER_SIZE (1u << 20)
#define READ_BUFFER_SIZE (1u << 20)
/* What a chunk of at most one buffer compresses to, at worst, with its header and padding. */
#define CHUNK_CAPACITY(records) (sizeof(struct sp_chunk_header) + ZSTD_COMPRESSBOUND(records) + 8)

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
	ZSTD_CCtx *zstd;  /* version 2: each write becomes zstd chunks; NULL: version 1 */
	char *chunk;      /* the chunk being made: header, frame, padding (CHUNK_CAPACITY(WRITE_BUFFER_SIZE)) */
	uint64_t file_bytes; /* written to fd, chunks and all (atomic: the thread adds, others read) */
	bool finished;    /* finish_writing() ran: fd is closed */
	int finish_error;
	bool identity_known; /* dev and ino of the file, taken before closing it */
	dev_t dev;
	ino_t ino;
	/* async mode: w->buf is the data of cur, full ones queue for the thread */
	bool async;
	struct wbuf *cur;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;           /* queue non-empty, a buffer freed, or stop */
	struct wbuf *head, *tail;      /* FIFO of filled buffers */
	struct wbuf *spare;            /* written buffers for reuse */
	size_t nbufs, max_bufs;        /* buffers allocated, and the bound */
	size_t nspare;                 /* buffers on the spare list */
	bool stop;
	int thread_error;              /* the thread's first write error */
	/* sp_writer_watch(): every whole record emitted after it, in order, on the thread that emits */
	sp_record_fn watch;
	void *watch_ctx;
	char *carry;                   /* a record split between two emits: its first carry_len bytes */
	size_t carry_len;
	/* sp_writer_begin_trailer(): what is written from trailer_offset on is the trailer */
	bool trailer;
	uint64_t trailer_offset;
};

static struct sp_writer *writer_new(int fd)
{
	struct sp_writer *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->dirfd = -1;
	w->buf = xmalloc(WRITE_BUFFER_SIZE);
	return w;
}

/* The header goes out plain; what follows it is compressed when zstd_level is not 0. */
static int write_file_header(struct sp_writer *w, int zstd_level)
{
	struct sp_file_header hdr = { .version = zstd_level ? SP_VERSION : SP_VERSION_PLAIN,
				      .header_size = sizeof(hdr),
				      .byte_order = SP_BYTE_ORDER,
				      .flags = zstd_level ? SP_FILE_ZSTD : 0 };
	memcpy(hdr.magic, SP_MAGIC, sizeof(SP_MAGIC));
	int err = sp_writer_raw(w, &hdr, sizeof(hdr));
	err = err ? err : sp_writer_flush(w);
	if (err || !zstd_level)
		return err;
	w->zstd = ZSTD_createCCtx();
	if (!w->zstd)
		return -ENOMEM;
	/* the frame's checksum: a damaged chunk is refused rather than decoded into wrong records */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_compressionLevel, zstd_level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	w->chunk = xmalloc(CHUNK_CAPACITY(WRITE_BUFFER_SIZE));
	return 0;
}

int sp_zstd_max_level(void)
{
	return ZSTD_maxCLevel();
}

static bool valid_level(int zstd_level)
{
	return zstd_level >= 0 && zstd_level <= ZSTD_maxCLevel();
}

int sp_writer_create(const char *path, struct sp_writer **out)
{
	return sp_writer_create_compressed(path, 0, out);
}

/* zstd_level -1: no file header at all (sp_writer_create_file()). */
static int create_named(const char *path, int zstd_level, struct sp_writer **out);
static int name_being_written(int dirfd, const char *name);

int sp_writer_create_compressed(const char *path, int zstd_level, struct sp_writer **out)
{
	if (!valid_level(zstd_level))
		return -EINVAL;
	return create_named(path, zstd_level, out);
}

int sp_writer_create_file(const char *path, struct sp_writer **out)
{
	return create_named(path, -1, out);
}

static int create_named(const char *path, int zstd_level, struct sp_writer **out)
{
	/*
	 * nothing another user placed at the name (a link, a FIFO, a device) is
	 * opened, and the new file's random name cannot be prepared in advance
	 */
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EISDIR;
	int dirfd = output_dir_open(path, &base);
	if (dirfd < 0)
		return dirfd;
	struct sp_writer *w = writer_new(-1);
	w->dirfd = dirfd;
	w->name = xstrdup(base);
	w->fd = private_temp_create(dirfd, base, &w->temp_name);
	int err = w->fd < 0 ? w->fd : 0;
	/* ours until closed (a new file: nobody else can hold it); then, early, whether the name is another's */
	if (!err && flock(w->fd, LOCK_EX | LOCK_NB) < 0)
		err = -errno;
	if (!err)
		err = name_being_written(dirfd, base);
	if (!err && zstd_level >= 0)
		err = write_file_header(w, zstd_level);
	if (err) {
		sp_writer_discard(w);
		return err;
	}
	*out = w;
	return 0;
}

int sp_writer_from_fd(int fd, struct sp_writer **out)
{
	return sp_writer_from_fd_compressed(fd, 0, out);
}

int sp_writer_from_fd_compressed(int fd, int zstd_level, struct sp_writer **out)
{
	if (!valid_level(zstd_level)) {
		close(fd);
		return -EINVAL;
	}
	struct sp_writer *w = writer_new(fd);
	w->published = true;
	int err = write_file_header(w, zstd_level);
	if (err) {
		sp_writer_discard(w);
		return err;
	}
	*out = w;
	return 0;
}

/*
 * -EBUSY when name in dirfd is a file another writer still holds (its
 * flock()), else 0.  Opened without following a link or blocking, and
 * only when it is a regular file (output_replaceable() has said so; the
 * identity is checked again on the open descriptor).
 */
static int name_being_written(int dirfd, const char *name)
{
	struct stat before, st;
	if (fstatat(dirfd, name, &before, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(before.st_mode))
		return 0;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int err = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == before.st_dev && st.st_ino == before.st_ino &&
	    flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
		err = -EBUSY;
	close(fd);
	return err;
}

static char *old_name(const struct sp_writer *w)
{
	struct strbuf old = { 0 };
	sb_addf(&old, "%s.old", w->name);
	return old.buf;
}

static int publish_locked(struct sp_writer *w);

int sp_writer_publish(struct sp_writer *w)
{
	if (w->published)
		return 0;
	if (w->error)
		return w->error;
	/* the check and the renames as one step among sigprof's writers in this directory */
	while (flock(w->dirfd, LOCK_EX) < 0 && errno == EINTR)
		;
	int err = publish_locked(w);
	flock(w->dirfd, LOCK_UN);
	return err;
}

static int publish_locked(struct sp_writer *w)
{
	/* checked again: what is there now is what would be moved to .old, and no other run is writing it */
	int err = output_replaceable(w->dirfd, w->name);
	err = err ? err : name_being_written(w->dirfd, w->name);
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

/* One chunk of len <= WRITE_BUFFER_SIZE bytes of records. */
static int write_chunk(struct sp_writer *w, const void *data, size_t len)
{
	struct sp_chunk_header *h = (void *)w->chunk;
	char *frame = w->chunk + sizeof(*h);
	size_t z = ZSTD_compress2(w->zstd, frame, ZSTD_COMPRESSBOUND(WRITE_BUFFER_SIZE), data, len);
	if (ZSTD_isError(z))
		return -ENOMEM; /* the bound holds every input; only a failed allocation inside zstd is left */
	size_t total = ALIGN_UP(sizeof(*h) + z, 8);
	memset(frame + z, 0, total - sizeof(*h) - z);
	*h = (struct sp_chunk_header){ .magic = SP_CHUNK_MAGIC,
				       .compressed_size = (uint32_t)z,
				       .records_size = (uint32_t)len };
	int err = write_all(w->fd, w->chunk, total);
	if (!err)
		__atomic_fetch_add(&w->file_bytes, total, __ATOMIC_RELAXED);
	return err;
}

/*
 * Hand the watcher every whole record of data (a piece of the record
 * stream, which may begin or end inside a record: that part waits in
 * carry for the next piece).
 */
static void watch_records(struct sp_writer *w, const char *data, size_t len)
{
	while (len) {
		if (w->carry_len) {
			struct perf_event_header h = { 0 };
			size_t have = w->carry_len;
			if (have < sizeof(h)) {
				size_t n = sizeof(h) - have < len ? sizeof(h) - have : len;
				memcpy(w->carry + have, data, n);
				w->carry_len += n;
				data += n;
				len -= n;
				if (w->carry_len < sizeof(h))
					return;
			}
			memcpy(&h, w->carry, sizeof(h));
			if (h.size < sizeof(h)) {
				w->watch = NULL; /* not a record stream: the recorder's bug; watch no more */
				return;
			}
			size_t n = h.size - w->carry_len < len ? h.size - w->carry_len : len;
			memcpy(w->carry + w->carry_len, data, n);
			w->carry_len += n;
			data += n;
			len -= n;
			if (w->carry_len == h.size) {
				w->watch(w->watch_ctx, (const struct perf_event_header *)w->carry);
				w->carry_len = 0;
			}
			continue;
		}
		const struct perf_event_header *h = (const void *)data;
		if (len < sizeof(*h) || h->size > len) {
			memcpy(w->carry, data, len);
			w->carry_len = len;
			return;
		}
		if (h->size < sizeof(*h)) {
			w->watch = NULL;
			return;
		}
		w->watch(w->watch_ctx, h);
		data += h->size;
		len -= h->size;
	}
}

/* Write bytes of records to the file: as they are, or as chunks of at most a buffer each. */
static int emit(struct sp_writer *w, const void *data, size_t len)
{
	if (w->watch)
		watch_records(w, data, len);
	if (!w->zstd) {
		int err = write_all(w->fd, data, len);
		if (!err)
			__atomic_fetch_add(&w->file_bytes, len, __ATOMIC_RELAXED);
		return err;
	}
	const char *p = data;
	while (len) {
		size_t n = len < WRITE_BUFFER_SIZE ? len : WRITE_BUFFER_SIZE;
		int err = write_chunk(w, p, n);
		if (err)
			return err;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * The writer thread's buffers are mapped and unmapped whole, and it keeps
 * only SPARE_BUFFERS spares: the queue that grew while write(2) stalled
 * (up to max_queued) goes back to the system once drained, so a long run's
 * RSS comes back down instead of keeping its largest stall.
 */
#define SPARE_BUFFERS 2

static struct wbuf *wbuf_new(void)
{
	return xmap(sizeof(struct wbuf) + WRITE_BUFFER_SIZE);
}

static void wbuf_free(struct wbuf *b)
{
	xunmap(b, sizeof(struct wbuf) + WRITE_BUFFER_SIZE);
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
			err = emit(w, b->data, b->used);
		pthread_mutex_lock(&w->lock);
		if (err && !w->thread_error)
			w->thread_error = err;
		if (w->nspare >= SPARE_BUFFERS) {
			wbuf_free(b);
			w->nbufs--;
		} else {
			b->next = w->spare;
			w->spare = b;
			w->nspare++;
		}
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
	if (next) {
		w->spare = next->next;
		w->nspare--;
	}
	else if (!w->thread_error)
		w->nbufs++;
	int err = w->thread_error;
	pthread_mutex_unlock(&w->lock);
	if (!next && !err)
		next = wbuf_new();
	if (err) {
		/* b is the thread's now; keep writing into a buffer that is never written */
		if (!next)
			next = wbuf_new();
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
	w->cur = wbuf_new();
	w->nbufs = 1;
	err = -pthread_create(&w->thread, NULL, writer_thread, w);
	if (err) {
		wbuf_free(w->cur);
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
		w->error = emit(w, w->buf, w->used);
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
		wbuf_free(b);
	}
	wbuf_free(w->cur);
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
				return w->error = emit(w, data, len);
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

char *sp_meta_record(const char *key, const char *const *values, uint32_t nvalues, size_t *len_out)
{
	size_t len = sizeof(struct perf_event_header) + sizeof(uint32_t) + strlen(key) + 1;
	for (uint32_t i = 0; i < nvalues; i++)
		len += strlen(values[i]) + 1;
	len = ALIGN_UP(len, 8);
	if (len > UINT16_MAX)
		return NULL;
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
	*len_out = len;
	return rec;
}

int sp_writer_meta(struct sp_writer *w, const char *key, const char *const *values, uint32_t nvalues)
{
	size_t len;
	char *rec = sp_meta_record(key, values, nvalues, &len);
	if (!rec)
		return -E2BIG;
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
int sp_kallsyms_records(const char *text, size_t len, int (*emit_record)(void *ctx, const void *rec, size_t size),
			void *ctx)
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
		err = emit_record(ctx, rec, size);
		done += (size_t)n;
	}
	free(rec);
	LZ4_freeStream(stream);
	return err;
}

static int emit_to_writer(void *writer, const void *rec, size_t size)
{
	return sp_writer_raw(writer, rec, size);
}

int sp_writer_kallsyms(struct sp_writer *w, const char *text, size_t len)
{
	return sp_kallsyms_records(text, len, emit_to_writer, w);
}

uint64_t sp_writer_bytes(const struct sp_writer *w)
{
	return w->bytes;
}

uint64_t sp_writer_file_bytes(const struct sp_writer *w)
{
	return __atomic_load_n(&w->file_bytes, __ATOMIC_RELAXED);
}

/* Write what is buffered, stop the thread, close; the first error.  Once only: later calls return it again. */
static int finish_writing(struct sp_writer *w)
{
	if (w->finished)
		return w->finish_error;
	w->finished = true;
	if (w->fd < 0)
		return w->finish_error = w->error;
	int err = sp_writer_flush(w);
	if (w->async) {
		int thread_err = stop_async(w);
		err = err ? err : thread_err;
	}
	if (!err && w->trailer) {
		uint64_t end = __atomic_load_n(&w->file_bytes, __ATOMIC_RELAXED);
		struct sp_file_trailer t = { .offset = w->trailer_offset,
					     .size = end - w->trailer_offset,
					     .magic = SP_TRAILER_MAGIC };
		err = write_all(w->fd, &t, sizeof(t));
		if (!err)
			__atomic_fetch_add(&w->file_bytes, sizeof(t), __ATOMIC_RELAXED);
	}
	if (fsync(w->fd) < 0 && !err && errno != EINVAL)
		err = -errno;
	struct stat st;
	if (fstat(w->fd, &st) == 0) {
		w->identity_known = true;
		w->dev = st.st_dev;
		w->ino = st.st_ino;
	}
	if (close(w->fd) < 0 && !err)
		err = -errno;
	w->fd = -1;
	return w->finish_error = err;
}

void sp_writer_watch(struct sp_writer *w, sp_record_fn fn, void *ctx)
{
	if (!w->carry)
		w->carry = xmalloc(UINT16_MAX + 1);
	w->carry_len = 0;
	w->watch_ctx = ctx;
	w->watch = fn;
}

int sp_writer_begin_trailer(struct sp_writer *w)
{
	if (w->error)
		return w->error;
	if (w->dirfd < 0)
		return -ESPIPE; /* a pipe: its reader cannot read the end first */
	if (w->trailer)
		return -EALREADY;
	int err = sp_writer_flush(w);
	if (w->async) {
		/* the thread writes what is queued and ends: from here on this thread writes, synchronously */
		int thread_err = stop_async(w);
		err = err ? err : thread_err;
		w->async = false;
		w->buf = xmalloc(WRITE_BUFFER_SIZE);
		w->used = 0;
	}
	if (err)
		return w->error = err;
	w->watch = NULL;
	w->trailer = true;
	w->trailer_offset = __atomic_load_n(&w->file_bytes, __ATOMIC_RELAXED); /* the file header included */
	return 0;
}

int sp_writer_finish(struct sp_writer *w)
{
	return finish_writing(w);
}

static void writer_free(struct sp_writer *w)
{
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->name);
	free(w->temp_name);
	free(w->buf);
	free(w->chunk);
	free(w->carry);
	ZSTD_freeCCtx(w->zstd);
	free(w);
}

int sp_writer_close(struct sp_writer *w)
{
	int err = finish_writing(w);
	if (!err)
		err = sp_writer_publish(w);
	if (err && !w->published && w->temp_name)
		unlinkat(w->dirfd, w->temp_name, 0); /* a failed file never replaces the previous one */
	writer_free(w);
	return err;
}

void sp_writer_discard(struct sp_writer *w)
{
	if (!w->finished) {
		w->error = w->error ? w->error : -ECANCELED; /* nothing more reaches the file */
		finish_writing(w);
	}
	if (w->temp_name) {
		struct stat there;
		if (w->dirfd >= 0 && !w->published) {
			unlinkat(w->dirfd, w->temp_name, 0);
		} else if (w->dirfd >= 0 && w->identity_known &&
			   fstatat(w->dirfd, w->name, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
			   there.st_dev == w->dev && there.st_ino == w->ino) {
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
	char *buf;           /* READ_BUFFER_SIZE, plus SP_CHUNK_MAX when compressed */
	size_t start, end;   /* unread bytes are buf[start, end) */
	uint64_t buf_offset; /* offset of buf[0] in the records (the file's offset in version 1) */
	uint64_t record_offset;
	bool eof;
	char problem[160];
	/* version 2 */
	ZSTD_DCtx *zstd;       /* NULL: the records are the file's bytes */
	char *frame;           /* one chunk's zstd frame */
	uint64_t file_offset;  /* of the next chunk */
	char chunk_problem[160]; /* why the chunks stopped before the end of the file */
	char trailer_problem[160]; /* why a trailer the file ends with could not be read whole */
	bool footer_met;           /* read front to back, the records ended at a trailer's footer */
	bool chunk_damaged;        /* chunk_problem is damage (a corrupt chunk), not a cut */
	bool damaged;              /* problem is damage, not a cut */
	/* a file with a trailer (format.h): its records come first, then the body up to limit */
	uint64_t limit;        /* file offset where the body ends: the trailer's, else UINT64_MAX */
	char *trailer;         /* the trailer's records, decompressed */
	size_t trailer_len, trailer_pos;
	struct perfdata_reader *perf; /* a perf.data file: its records, as this format's (perfdata.h) */
};

/* Read up to len bytes, fewer only at the end of the file; the count or -errno. */
static ssize_t read_full(int fd, void *data, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = read(fd, (char *)data + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static void chunks_stop(struct sp_reader *r, const char *why, bool damaged)
{
	r->chunk_damaged = damaged;
	snprintf(r->chunk_problem, sizeof(r->chunk_problem), "%s chunk at file offset %llu", why,
		 (unsigned long long)r->file_offset);
	r->eof = true;
}

static bool chunk_header_valid(const struct sp_chunk_header *h)
{
	return h->magic == SP_CHUNK_MAGIC && h->records_size && h->records_size <= SP_CHUNK_MAX &&
	       h->compressed_size && h->compressed_size <= ZSTD_COMPRESSBOUND(SP_CHUNK_MAX);
}

/*
 * Read front to back (a pipe), a file's trailer footer comes where a chunk
 * header would: the 24 bytes of a footer, then the end, end the chunks.
 */
static bool footer_ends_chunks(struct sp_reader *r, const struct sp_chunk_header *h)
{
	struct sp_file_trailer t;
	char extra;
	memcpy(&t, h, sizeof(*h));
	ssize_t got = read_full(r->fd, (char *)&t + sizeof(*h), sizeof(t) - sizeof(*h));
	if (got >= 0 && got < (ssize_t)(sizeof(t) - sizeof(*h))) {
		/* fewer bytes than a footer, then the end: the file was cut there, not damaged */
		chunks_stop(r, "file cut short after the last whole", false);
		return true;
	}
	if (got < 0 || t.magic != SP_TRAILER_MAGIC || read_full(r->fd, &extra, 1) != 0)
		return false;
	r->eof = true;
	r->footer_met = true;
	return true;
}

/* Decompress whole chunks while one more surely fits; a cut or damaged one ends the records. */
static int fill_chunks(struct sp_reader *r)
{
	while (!r->eof && r->end <= READ_BUFFER_SIZE) {
		if (r->file_offset >= r->limit) {
			r->eof = true; /* the trailer's chunks: read first */
			break;
		}
		struct sp_chunk_header h;
		ssize_t got = read_full(r->fd, &h, sizeof(h));
		if (got < 0)
			return (int)got;
		if (got == 0) {
			r->eof = true;
			break;
		}
		if ((size_t)got < sizeof(h)) {
			chunks_stop(r, "file cut short in the header of the", false);
			break;
		}
		if (!chunk_header_valid(&h)) {
			if (footer_ends_chunks(r, &h))
				break;
			chunks_stop(r, "corrupt header of the", true);
			break;
		}
		size_t padded = ALIGN_UP((size_t)h.compressed_size, 8);
		got = read_full(r->fd, r->frame, padded);
		if (got < 0)
			return (int)got;
		if ((size_t)got < padded) {
			chunks_stop(r, "file cut short in the", false);
			break;
		}
		size_t n = ZSTD_decompressDCtx(r->zstd, r->buf + r->end, h.records_size, r->frame, h.compressed_size);
		if (ZSTD_isError(n) || n != h.records_size) {
			chunks_stop(r, "corrupt (it does not decompress to its size)", true);
			break;
		}
		r->end += n;
		r->file_offset += sizeof(h) + padded;
	}
	return 0;
}

static int reader_fill(struct sp_reader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->buf_offset += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	if (r->zstd)
		return fill_chunks(r);
	while (!r->eof && r->end < READ_BUFFER_SIZE) {
		uint64_t at = r->buf_offset + r->end; /* the file's offset in version 1 */
		size_t want = READ_BUFFER_SIZE - r->end;
		if (r->limit - at < want)
			want = (size_t)(r->limit - at);
		ssize_t n = want ? read(r->fd, r->buf + r->end, want) : 0;
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
	/* version 1 readers never looked at the flags: neither does this one in a version 1 file */
	if (hdr->version >= 2 && (hdr->flags & ~SP_FILE_ZSTD)) {
		snprintf(err, errlen, "corrupt file header (unknown flags %#x)", hdr->flags);
		return -EINVAL;
	}
	return 0;
}

/*
 * A trailer's records, read into r->trailer: from a seekable file that
 * ends in a valid struct sp_file_trailer.  A trailer that does not read
 * whole gives the records it holds up to the damage; the body ends at its
 * offset either way.
 */
static void read_trailer(struct sp_reader *r, uint64_t header_size)
{
	struct stat st;
	struct sp_file_trailer t;
	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < header_size + sizeof(t))
		return;
	uint64_t at = (uint64_t)st.st_size - sizeof(t);
	if (pread(r->fd, &t, sizeof(t), (off_t)at) != (ssize_t)sizeof(t) || t.magic != SP_TRAILER_MAGIC)
		return;
	if (t.offset < header_size || t.offset > at || t.size != at - t.offset || t.size > SP_TRAILER_MAX) {
		snprintf(r->trailer_problem, sizeof(r->trailer_problem),
			 "its footer gives a place (offset %llu, %llu bytes) the file does not have",
			 (unsigned long long)t.offset, (unsigned long long)t.size);
		return;
	}
	r->limit = t.offset;
	char *raw = xmalloc(t.size + 1);
	if (pread(r->fd, raw, t.size, (off_t)t.offset) != (ssize_t)t.size) {
		snprintf(r->trailer_problem, sizeof(r->trailer_problem), "it cannot be read: %s", strerror(errno));
		free(raw);
		return;
	}
	if (!r->zstd) {
		r->trailer = raw;
		r->trailer_len = t.size;
		return;
	}
	size_t cap = 0;
	for (size_t pos = 0; pos + sizeof(struct sp_chunk_header) <= t.size;) {
		struct sp_chunk_header h;
		memcpy(&h, raw + pos, sizeof(h));
		size_t padded = ALIGN_UP((size_t)h.compressed_size, 8);
		if (!chunk_header_valid(&h) || padded > t.size - pos - sizeof(h)) {
			snprintf(r->trailer_problem, sizeof(r->trailer_problem), "corrupt chunk header at offset %llu",
				 (unsigned long long)(t.offset + pos));
			break;
		}
		GROW(r->trailer, cap, r->trailer_len + h.records_size);
		size_t n = ZSTD_decompressDCtx(r->zstd, r->trailer + r->trailer_len, h.records_size,
					       raw + pos + sizeof(h), h.compressed_size);
		if (ZSTD_isError(n) || n != h.records_size) {
			snprintf(r->trailer_problem, sizeof(r->trailer_problem),
				 "the chunk at offset %llu does not decompress (%s)", (unsigned long long)(t.offset + pos),
				 ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
			break;
		}
		r->trailer_len += n;
		pos += sizeof(h) + padded;
	}
	free(raw);
}

/* The file header, checked, and the reader set up for what follows it. */
static int reader_start(struct sp_reader *r, enum sp_input_format format, char *err, size_t errlen)
{
	struct sp_file_header hdr;
	ssize_t got = read_full(r->fd, &hdr, sizeof(hdr));
	if (got < 0) {
		snprintf(err, errlen, "%s", strerror((int)-got));
		return (int)got;
	}
	if (got == 0) {
		snprintf(err, errlen, "empty file, not a sigprof recording");
		return -EINVAL;
	}
	bool perf = perfdata_magic(&hdr, (size_t)got);
	if (format == SP_INPUT_PERF && !perf) {
		snprintf(err, errlen, "not a perf.data file (bad magic), as --input-format perf expects");
		return -EINVAL;
	}
	if (format == SP_INPUT_SIGPROF && perf) {
		snprintf(err, errlen, "a perf.data file, not a sigprof recording as --input-format sigprof expects");
		return -EINVAL;
	}
	if (perf) {
		int fd = r->fd;
		r->fd = -1; /* the perf.data reader's now */
		return perfdata_reader_open(fd, &hdr, (size_t)got, &r->perf, err, errlen);
	}
	if ((size_t)got < sizeof(hdr)) {
		snprintf(err, errlen, "too short for a sigprof file header (%zd bytes)", got);
		return -EINVAL;
	}
	int ret = check_header(&hdr, err, errlen);
	if (ret)
		return ret;
	size_t rest = hdr.header_size - sizeof(hdr); /* at most 4096: the buffer holds it */
	got = read_full(r->fd, r->buf, rest);
	if (got < 0) {
		snprintf(err, errlen, "%s", strerror((int)-got));
		return (int)got;
	}
	if ((size_t)got < rest) {
		snprintf(err, errlen, "too short for its header");
		return -EINVAL;
	}
	r->buf_offset = r->file_offset = hdr.header_size;
	if (hdr.version >= 2 && (hdr.flags & SP_FILE_ZSTD)) {
		r->zstd = ZSTD_createDCtx();
		if (!r->zstd) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		free(r->buf);
		r->buf = xmalloc(READ_BUFFER_SIZE + SP_CHUNK_MAX);
		r->frame = xmalloc(ALIGN_UP(ZSTD_COMPRESSBOUND(SP_CHUNK_MAX), 8));
	}
	read_trailer(r, hdr.header_size);
	ret = reader_fill(r);
	if (ret < 0)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}

int sp_input_format_parse(const char *name, enum sp_input_format *format)
{
	static const char *const names[] = { [SP_INPUT_AUTO] = "auto", [SP_INPUT_SIGPROF] = "sigprof",
					     [SP_INPUT_PERF] = "perf" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(name, names[i]) == 0) {
			*format = (enum sp_input_format)i;
			return 0;
		}
	return -EINVAL;
}

int sp_reader_open(const char *path, struct sp_reader **out, char *err, size_t errlen)
{
	return sp_reader_open_format(path, SP_INPUT_AUTO, out, err, errlen);
}

int sp_reader_open_format(const char *path, enum sp_input_format format, struct sp_reader **out, char *err,
			  size_t errlen)
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
	r->limit = UINT64_MAX;
	r->buf = xmalloc(READ_BUFFER_SIZE);
	int ret = reader_start(r, format, err, errlen);
	if (ret < 0) {
		sp_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

/* Why the records end here: the chunks' reason when they stopped early, else what the records show. */
static int reader_stop(struct sp_reader *r, const char *fmt, uint64_t offset)
{
	if (r->chunk_problem[0])
		snprintf(r->problem, sizeof(r->problem), "%s", r->chunk_problem);
	else
		snprintf(r->problem, sizeof(r->problem), fmt, (unsigned long long)offset);
	r->damaged = r->chunk_problem[0] && r->chunk_damaged; /* else a partial record: the file was cut */
	return 0;
}

/* The trailer's next record; false once they are all read (or at one that is malformed: the rest is dropped). */
static bool next_in_trailer(struct sp_reader *r, const struct perf_event_header **rec)
{
	size_t avail = r->trailer_len - r->trailer_pos;
	const struct perf_event_header *h = (const void *)(r->trailer + r->trailer_pos);
	if (avail < sizeof(*h) || h->size < sizeof(*h) || h->size % 8 || h->size > avail) {
		r->trailer_pos = r->trailer_len;
		return false;
	}
	r->record_offset = r->limit + r->trailer_pos;
	r->trailer_pos += h->size;
	*rec = h;
	return true;
}

int sp_reader_next(struct sp_reader *r, const struct perf_event_header **rec)
{
	if (r->perf)
		return perfdata_reader_next(r->perf, rec);
	if (r->trailer_pos < r->trailer_len && next_in_trailer(r, rec))
		return 1;
	if (r->problem[0])
		return 0;
	if (!r->eof && r->end - r->start < UINT16_MAX + 1u) {
		int ret = reader_fill(r);
		if (ret < 0) {
			snprintf(r->problem, sizeof(r->problem), "read error at offset %llu: %s",
				 (unsigned long long)(r->zstd ? r->file_offset : r->buf_offset + r->end), strerror(-ret));
			return 0;
		}
	}
	size_t avail = r->end - r->start;
	uint64_t offset = r->buf_offset + r->start;
	if (avail == 0)
		return r->chunk_problem[0] ? reader_stop(r, "", 0) : 0;
	if (r->eof && avail == sizeof(struct sp_file_trailer) && !r->zstd) {
		/* read front to back (a pipe), a file's trailer footer ends its records */
		struct sp_file_trailer t;
		memcpy(&t, r->buf + r->start, sizeof(t));
		if (t.magic == SP_TRAILER_MAGIC) {
			r->start = r->end;
			r->footer_met = true;
			return 0;
		}
	}
	if (avail < sizeof(struct perf_event_header))
		return reader_stop(r, "partial record at offset %llu (file cut short)", offset);
	const struct perf_event_header *h = (const void *)(r->buf + r->start);
	if (r->eof && avail < sizeof(struct sp_file_trailer) && !r->zstd && (h->size < sizeof(*h) || h->size > avail))
		return reader_stop(r, "partial record at offset %llu (file cut short)", offset);
	if (h->size < sizeof(*h) || h->size % 8) {
		snprintf(r->problem, sizeof(r->problem), "corrupt record at offset %llu (size %u)",
			 (unsigned long long)offset, h->size);
		r->damaged = true;
		return 0;
	}
	if (h->size > avail)
		return reader_stop(r, "partial record at offset %llu (file cut short)", offset);
	r->record_offset = offset;
	r->start += h->size;
	*rec = h;
	return 1;
}

bool sp_reader_compressed(const struct sp_reader *r)
{
	return r->zstd != NULL;
}

const char *sp_reader_problem(const struct sp_reader *r)
{
	if (r->perf)
		return perfdata_reader_problem(r->perf);
	return r->problem[0] ? r->problem : NULL;
}

bool sp_reader_damaged(const struct sp_reader *r)
{
	if (r->perf)
		return perfdata_reader_damaged(r->perf);
	return r->damaged;
}

bool sp_reader_footer_met(const struct sp_reader *r)
{
	return r->footer_met;
}

const char *sp_reader_trailer_problem(const struct sp_reader *r)
{
	return r->trailer_problem[0] ? r->trailer_problem : NULL;
}

uint64_t sp_reader_offset(const struct sp_reader *r)
{
	if (r->perf)
		return perfdata_reader_offset(r->perf);
	return r->record_offset;
}

void sp_reader_close(struct sp_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	perfdata_reader_close(r->perf);
	free(r->buf);
	free(r->frame);
	free(r->trailer);
	ZSTD_freeDCtx(r->zstd);
	free(r);
}
