/*
 * files.c: bounded reads of untrusted files, safe outputs where others can
 * write, the open-file limit (files.h says the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sigprof/base/files.h"
#include "sigprof/base/util.h"

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

/*
 * A safe output's FILE writes through these, so that the errno of a write
 * that failed (ENOSPC on a full disk, EDQUOT) is kept for the one error
 * line: stdio only sets the stream's error flag, and the errno of the time
 * is gone by the flush ("Input/output error" for a full tmpfs).
 */
struct output_stream {
	int fd;
	int err; /* the first failed write's -errno, 0 when none */
};

static ssize_t output_stream_write(void *cookie, const char *buf, size_t len)
{
	struct output_stream *s = cookie;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(s->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!s->err)
				s->err = n < 0 ? -errno : -ENOSPC;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int output_stream_close(void *cookie)
{
	struct output_stream *s = cookie;
	int ret = close(s->fd);
	free(s);
	return ret;
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
	struct output_stream *stream = xcalloc(1, sizeof(*stream));
	stream->fd = fd;
	out->fp = fopencookie(stream, "w", (cookie_io_functions_t){ .write = output_stream_write,
								     .close = output_stream_close });
	if (!out->fp) {
		int err = -errno;
		free(stream);
		close(fd);
		unlinkat(dirfd, temp, 0);
		free(temp);
		close(dirfd);
		return err;
	}
	out->stream = stream;
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
	if (fflush(out->fp) != 0 || ferror(out->fp))
		err = out->stream->err ? out->stream->err : errno ? -errno : -EIO;
	if (!err && fchmod(out->stream->fd, out->mode) != 0)
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
	else if (S_ISREG(target.st_mode) && !owned_by_root_or_caller(&target) && target.st_uid != dir.st_uid &&
		 !a_standard_stream(&target))
		err = -EEXIST; /* planted by another user, who may hold it open to change what is written */
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
