/*
 * archive.c: `sigprof archive [-o OUT] [FILE]`, the files a recording's
 * frames need, packed for another machine (archive.h), and the unpacking
 * that report --symfs ARCHIVE does.
 *
 * The files are those of the executable mappings in the recording's MMAP
 * and MMAP2 records (the workload's program and libraries), read where the
 * recording names them on this machine, and the separate debug file of
 * each, found as the report finds it (debug roots, build-id, debuglink,
 * debuginfod).  perf archive does the same from perf.data's build-id list.
 *
 * The tar is a plain POSIX ustar file (tar(1) reads it): a 512-byte header
 * per file (name, with the prefix field for a long path; octal mode, size
 * and mtime; the header's checksum), the data padded to 512 bytes, and two
 * zero blocks at the end.  A path that fits neither way (over 255
 * characters, or no '/' to split at) goes before its member in a pax
 * extended header (type 'x'): records "LEN path=PATH\n", LEN the record's
 * own length in decimal, as POSIX.1-2001 has them.  The reader takes those
 * (path and size, the form for 8 GiB or more), GNU tar's long names (type
 * 'L') and base-256 sizes too, so an archive repacked by tar(1) reads back.  It is written through the recording's writer
 * (format.h), so it gets its name the same safe way: a new private file
 * renamed into place, an existing one becoming OUT.old.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <time.h>

#include "sigprof/commands/archive.h"
#include "sigprof/commands/cli.h"
#include "sigprof/commands/commands.h"
#include "sigprof/model/decode.h"
#include "sigprof/kernel/format.h"
#include "sigprof/model/datafile.h"
#include "sigprof/base/options.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

#define TAR_BLOCK 512
#define MANIFEST "sigprof-archive.txt"
#define MAX_ARCHIVE_FILE (1ull << 32) /* a member larger than 4 GiB is no binary or debug file */
#define MAX_EXTENDED_HEADER (1u << 20) /* a pax or GNU long-name header's data: names and a few numbers */

struct tar_header {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8], typeflag, linkname[100];
	char magic[6], version[2], uname[32], gname[32], devmajor[8], devminor[8], prefix[155], pad[12];
};
_Static_assert(sizeof(struct tar_header) == TAR_BLOCK, "a ustar header is one block");

static unsigned header_sum(const struct tar_header *h)
{
	const unsigned char *p = (const void *)h;
	unsigned sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += i >= offsetof(struct tar_header, chksum) && i < offsetof(struct tar_header, typeflag) ? ' ' : p[i];
	return sum;
}

/* name (relative) into the header: in name, or split at a '/' into prefix and name.  -ENAMETOOLONG. */
static int tar_set_name(struct tar_header *h, const char *name)
{
	size_t len = strlen(name);
	if (len < sizeof(h->name)) {
		memcpy(h->name, name, len);
		return 0;
	}
	for (const char *slash = strchr(name, '/'); slash; slash = strchr(slash + 1, '/')) {
		size_t pre = (size_t)(slash - name), rest = len - pre - 1;
		if (pre < sizeof(h->prefix) && rest < sizeof(h->name) && rest > 0) {
			memcpy(h->prefix, name, pre);
			memcpy(h->name, slash + 1, rest);
			return 0;
		}
	}
	return -ENAMETOOLONG;
}

/* The fields after the name: mode, owner, size, mtime, type, magic; the checksum last, over all of them. */
static void tar_fill_header(struct tar_header *h, char type, size_t size, time_t mtime)
{
	snprintf(h->mode, sizeof(h->mode), "%07o", 0644);
	snprintf(h->uid, sizeof(h->uid), "%07o", 0);
	snprintf(h->gid, sizeof(h->gid), "%07o", 0);
	snprintf(h->size, sizeof(h->size), "%011llo", (unsigned long long)size);
	snprintf(h->mtime, sizeof(h->mtime), "%011llo", (unsigned long long)mtime);
	h->typeflag = type;
	memcpy(h->magic, "ustar", 6);
	memcpy(h->version, "00", 2);
	snprintf(h->chksum, sizeof(h->chksum), "%06o", header_sum(h));
	h->chksum[7] = ' ';
}

/* A header and its data, padded to a block. */
static int tar_write_member(struct sp_writer *w, const struct tar_header *h, const void *data, size_t size)
{
	static const char zeros[TAR_BLOCK];
	int err = sp_writer_raw(w, h, sizeof(*h));
	err = err ? err : sp_writer_raw(w, data, size);
	if (!err && size % TAR_BLOCK)
		err = sp_writer_raw(w, zeros, TAR_BLOCK - size % TAR_BLOCK);
	return err;
}

/* The end of name that fits a field of len characters (and a NUL): from a '/' on when one is there. */
static const char *name_tail(const char *name, size_t len)
{
	size_t n = strlen(name);
	if (n < len)
		return name;
	const char *tail = name + n - (len - 1);
	const char *slash = strchr(tail, '/');
	return slash && slash[1] ? slash + 1 : tail;
}

/* A pax record, "LEN key=value\n", LEN counting its own digits. */
static void pax_record(struct strbuf *sb, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1, len = body + 1;
	while (snprintf(NULL, 0, "%zu", len) + body != len)
		len++;
	sb_addf(sb, "%zu %s=%s\n", len, key, value);
}

static int tar_add(struct sp_writer *w, const char *name, const void *data, size_t size, time_t mtime)
{
	struct tar_header h;
	memset(&h, 0, sizeof(h));
	if (tar_set_name(&h, name) == -ENAMETOOLONG) {
		/* the whole path in a pax header before it; the member's own name field holds its end */
		struct strbuf records = { 0 };
		pax_record(&records, "path", name);
		struct tar_header x;
		memset(&x, 0, sizeof(x));
		snprintf(x.name, sizeof(x.name), "PaxHeaders/%s", name_tail(name, sizeof(x.name) - 11));
		tar_fill_header(&x, 'x', records.len, mtime);
		int err = tar_write_member(w, &x, records.buf, records.len);
		sb_free(&records);
		if (err)
			return err;
		memset(&h, 0, sizeof(h));
		const char *tail = name_tail(name, sizeof(h.name));
		memcpy(h.name, tail, strlen(tail));
	}
	tar_fill_header(&h, '0', size, mtime);
	return tar_write_member(w, &h, data, size);
}

/* The file at path into the archive at its own path; -errno when it cannot be read. */
static int tar_add_file(struct sp_writer *w, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	int err = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (!err && (uint64_t)st.st_size > MAX_ARCHIVE_FILE)
		err = -EFBIG;
	void *data = MAP_FAILED;
	if (!err && st.st_size > 0) {
		data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED)
			err = -errno;
	}
	if (!err)
		err = tar_add(w, path + strspn(path, "/"), st.st_size ? data : "", (size_t)st.st_size, st.st_mtime);
	if (data != MAP_FAILED)
		munmap(data, (size_t)st.st_size);
	close(fd);
	return err;
}

/* ---- which files ---- */

struct file_list {
	char **names;
	char **build_ids; /* the recording's build-id of each (hex), or NULL */
	size_t count, cap, ids_cap;
};

static void file_list_add(struct file_list *l, const char *name, size_t len, const char *build_id)
{
	for (size_t i = 0; i < l->count; i++)
		if (strlen(l->names[i]) == len && memcmp(l->names[i], name, len) == 0) {
			if (!l->build_ids[i] && build_id)
				l->build_ids[i] = xstrdup(build_id);
			return;
		}
	GROW(l->names, l->cap, l->count + 1);
	GROW(l->build_ids, l->ids_cap, l->count + 1);
	l->build_ids[l->count] = build_id ? xstrdup(build_id) : NULL;
	l->names[l->count++] = xstrndup(name, len);
}

static void file_list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->count; i++) {
		free(l->names[i]);
		free(l->build_ids[i]);
	}
	free(l->names);
	free(l->build_ids);
}

/* The file an executable MMAP or MMAP2 record maps, or NULL. */
static const char *mapped_file(const struct perf_event_header *rec, size_t *len)
{
	size_t at;
	if (rec->type == PERF_RECORD_MMAP2) {
		at = sizeof(*rec) + 8 + 24 + 24;
		uint32_t prot;
		if (rec->size < at + 8)
			return NULL;
		memcpy(&prot, (const char *)rec + at, 4);
		if (!(prot & PROT_EXEC))
			return NULL;
		at += 8;
	} else if (rec->type == PERF_RECORD_MMAP) {
		if (rec->misc & PERF_RECORD_MISC_MMAP_DATA)
			return NULL;
		at = sizeof(*rec) + 8 + 24;
	} else {
		return NULL;
	}
	if (rec->size <= at)
		return NULL;
	const char *name = (const char *)rec + at;
	*len = strnlen(name, rec->size - at);
	/* a file: a path, not [vdso], //anon or a memfd */
	if (*len < 2 || name[0] != '/' || name[1] == '/' || strncmp(name, "/memfd:", 7) == 0)
		return NULL;
	return name;
}

static int mapped_files(const char *recording, struct file_list *files, char *err, size_t errlen)
{
	struct sp_reader *r;
	int ret = sp_reader_open(recording, &r, err, errlen);
	if (ret < 0)
		return ret;
	const struct perf_event_header *rec;
	while (sp_reader_next(r, &rec) == 1) {
		size_t len;
		const char *name = mapped_file(rec, &len);
		char build_id[41];
		if (name)
			file_list_add(files, name, len, mmap2_build_id(rec, build_id) ? build_id : NULL);
	}
	sp_reader_close(r);
	return 0;
}

/* What `sigprof archive` was asked: the output (NULL: RECORDING.tar), the recording, whether quiet. */
struct archive_args {
	const char *out;
	const char *recording;
	bool quiet;
};

/* -o ARCHIVE: a file's name, not standard output (report --symfs reads the archive back). */
static int take_output(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	if (!*arg) {
		snprintf(err, errlen, "-o '': an empty file name");
		return -1;
	}
	if (strcmp(arg, "-") == 0) {
		snprintf(err, errlen, "-o -: an archive is a file (report --symfs reads it back): give its name");
		return -1;
	}
	*(const char **)field = arg;
	return 0;
}

static const struct option_spec archive_specs[] = {
	{ .short_name = 'o', .long_name = "output", .arg = "ARCHIVE", .default_value = "FILE.tar",
	  .help = "write the archive to ARCHIVE, a new file renamed into place (an existing one becomes ARCHIVE.old)",
	  OPTION_CALLBACK_FIELD(struct archive_args, out, take_output) },
	{ .short_name = 'q', .long_name = "quiet", .help = "no closing line", OPTION_TRUE(struct archive_args, quiet) },
	OPTION_HELP_SPEC,
};

const struct option_table archive_option_table = {
	.command = "sigprof archive",
	.operands = "[FILE]",
	.description = "Pack the program, libraries and debug files the recording FILE (sigprof.data) needs into a tar "
		       "file, for 'sigprof report -i FILE --symfs ARCHIVE' on another machine.",
	.specs = archive_specs,
	.count = ARRAY_SIZE(archive_specs),
};

/* The command line into *args: 0, 1 for --help (printed), or -1 (said). */
static int parse_archive_args(int argc, char **argv, struct archive_args *args)
{
	struct options_parsed parsed;
	int ret = cli_parse_options(&archive_option_table, argc, argv, args, &parsed);
	if (ret)
		return ret;
	int operand = parsed.operand;
	if (argc - operand > 1) {
		sp_error("archive: one recording at a time (got %s and %s)", QUOTED(argv[operand]), QUOTED(argv[operand + 1]));
		return -1;
	}
	args->recording = operand < argc ? argv[operand] : "sigprof.data";
	return 0;
}

/* What packing the mapped files made: the manifest's lines, the files left out (and why), the counts. */
struct archive_packing {
	struct strbuf manifest, missing;
	size_t packed, nmissing;
};

/*
 * Each file the recording maps (and its debug file) into the tar w, when it
 * is the build the recording saw; the others are listed as missing.  0, or
 * -errno when writing failed.
 */
static int pack_mapped_files(struct sp_writer *w, const struct file_list *files, struct archive_packing *pk)
{
	for (size_t i = 0; i < files->count; i++) {
		const char *path = files->names[i];
		struct symtab *tab = NULL;
		symtab_from_elf_file(path, &tab); /* for the build-id and the debug file; NULL when unreadable */
		const char *build_id = symtab_build_id(tab), *debug = symtab_debug_file(tab);
		const char *recorded = files->build_ids[i];
		if (recorded && build_id && strcmp(recorded, build_id) != 0) {
			/* rebuilt or upgraded since the recording: packing it would name every frame wrong */
			sb_addf(&pk->missing, "%s%s (another build than the recording's: build-id %s here, %s recorded)",
				pk->nmissing++ ? ", " : "", path, build_id, recorded);
			symtab_free(tab);
			continue;
		}
		int e = tar_add_file(w, path);
		if (e == -ENAMETOOLONG || e == -EINVAL || e == -EFBIG || e == -ENOENT || e == -EACCES || e == -ELOOP) {
			sb_addf(&pk->missing, "%s%s (%s)", pk->nmissing++ ? ", " : "", path, strerror(-e));
		} else if (e < 0) {
			symtab_free(tab);
			return e;
		} else {
			pk->packed++;
			sb_addf(&pk->manifest, "%s %s\n", build_id ? build_id : "-", path);
			if (debug && (e = tar_add_file(w, debug)) == 0) {
				pk->packed++;
				sb_addf(&pk->manifest, "%s %s\n", build_id ? build_id : "-", debug);
			} else if (debug && e < 0 && e != -ENAMETOOLONG) {
				sb_addf(&pk->missing, "%s%s (%s)", pk->nmissing++ ? ", " : "", debug, strerror(-e));
			}
		}
		symtab_free(tab);
	}
	return 0;
}

/*
 * `sigprof archive`, as steps: parse, list the files the recording maps,
 * create the tar, pack them, add the manifest and the end blocks, close.
 * Every failure goes to the one cleanup below.
 */
int cmd_archive(int argc, char **argv)
{
	struct archive_args args = { 0 };
	int parsed = parse_archive_args(argc, argv, &args);
	if (parsed)
		return parsed > 0 ? 0 : EXIT_USAGE;
	const char *out = args.out, *recording = args.recording;
	int status = EXIT_USAGE;
	struct strbuf default_out = { 0 };
	struct file_list files = { 0 };
	struct archive_packing pk = { 0 };
	if (!out) {
		sb_addf(&default_out, "%s.tar", recording);
		out = default_out.buf;
	}
	char err[512] = "";
	int ret = mapped_files(recording, &files, err, sizeof(err));
	if (ret < 0) {
		sp_error("archive: %s: %s", recording, err);
		goto cleanup;
	}
	struct sp_writer *w = NULL;
	ret = sp_writer_create_file(out, &w);
	struct stat st;
	if (ret < 0) {
		if (ret == -EEXIST && lstat(out, &st) == 0)
			sp_error("archive: cannot write to %s: it is %s; sigprof writes an archive only to a regular file",
				 QUOTED(out), file_type_name(st.st_mode));
		else
			sp_error("archive: cannot create %s: %s", QUOTED(out), strerror(-ret));
		status = EXIT_WRITE_FAILED;
		goto cleanup;
	}
	ret = pack_mapped_files(w, &files, &pk);
	if (ret >= 0)
		ret = tar_add(w, MANIFEST, pk.manifest.buf ? pk.manifest.buf : "", pk.manifest.len, time(NULL));
	static const char end[2 * TAR_BLOCK];
	if (ret >= 0)
		ret = sp_writer_raw(w, end, sizeof(end));
	uint64_t bytes = sp_writer_bytes(w);
	if (ret >= 0)
		ret = sp_writer_close(w);
	else
		sp_writer_discard(w);
	if (ret < 0) {
		sp_error("archive: writing %s failed: %s (nothing was written there)", QUOTED(out), strerror(-ret));
		status = EXIT_WRITE_FAILED;
		goto cleanup;
	}
	if (pk.nmissing)
		sp_warn("archive: %zu file%s the recording maps could not be packed: %s", pk.nmissing,
			pk.nmissing == 1 ? "" : "s", pk.missing.buf);
	if (!args.quiet)
		fprintf(stderr, "sigprof: archive: %zu files, %.1f MB written to %s; elsewhere: sigprof report -i %s "
				"--symfs %s\n", pk.packed, (double)bytes / 1e6, out, recording, out);
	status = 0;
cleanup:
	file_list_free(&files);
	sb_free(&pk.manifest);
	sb_free(&pk.missing);
	sb_free(&default_out);
	return status;
}

/* ---- unpacking, for report --symfs ARCHIVE ---- */

/* Whether a member's name stays inside the directory: relative, no "." or ".." component, no empty one. */
static bool safe_member_name(const char *name)
{
	if (!*name || name[0] == '/')
		return false;
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n + (p[n] == '/');
	}
	return true;
}

/* Make the directories of name under dirfd (each a new or existing real directory). */
static int make_parents(int dirfd, const char *name)
{
	char *copy = xstrdup(name);
	int err = 0;
	for (char *slash = strchr(copy, '/'); slash && !err; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdirat(dirfd, copy, 0700) < 0 && errno != EEXIST)
			err = -errno;
		struct stat st;
		if (!err && (fstatat(dirfd, copy, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
			err = -ENOTDIR;
		*slash = '/';
	}
	free(copy);
	return err;
}

static uint64_t octal_field(const char *f, size_t len, bool *ok)
{
	uint64_t v = 0;
	size_t i = 0;
	while (i < len && f[i] == ' ')
		i++;
	size_t digits = 0;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++, digits++)
		v = v * 8 + (uint64_t)(f[i] - '0');
	if (!digits || (i < len && f[i] != '\0' && f[i] != ' '))
		*ok = false;
	return v;
}

static ssize_t read_block(int fd, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* A header's size: octal, or base-256 (the first byte's high bit set) for 8 GiB or more. */
static uint64_t size_field(const struct tar_header *h, bool *ok)
{
	const unsigned char *f = (const unsigned char *)h->size;
	if (!(f[0] & 0x80))
		return octal_field(h->size, sizeof(h->size), ok);
	uint64_t v = f[0] & 0x7f;
	for (size_t i = 1; i < sizeof(h->size); i++) {
		if (v >> 56)
			*ok = false; /* more than 64 bits */
		v = v << 8 | f[i];
	}
	return v;
}

/* What an extended header (pax 'x', GNU 'L') says of the member after it. */
struct pending_member {
	char *path;     /* its name, or NULL: the header's */
	bool has_size;
	uint64_t size;  /* its size, when has_size */
};

/*
 * The records of a pax header, "LEN key=value\n" each, into *next (path
 * and size; other keys, such as mtime or uname, change nothing here).
 * -EINVAL for a record that does not parse.
 */
static int parse_pax(const char *data, size_t len, struct pending_member *next)
{
	for (size_t at = 0; at < len;) {
		if (data[at] == '\0')
			break; /* padding */
		size_t rec = 0, digits = 0;
		while (at + digits < len && data[at + digits] >= '0' && data[at + digits] <= '9' && digits < 8)
			rec = rec * 10 + (size_t)(data[at + digits++] - '0');
		if (!digits || rec <= digits + 1 || rec > len - at || data[at + digits] != ' ' || data[at + rec - 1] != '\n')
			return -EINVAL;
		const char *key = data + at + digits + 1, *end = data + at + rec - 1;
		const char *eq = memchr(key, '=', (size_t)(end - key));
		if (!eq || memchr(key, '\0', (size_t)(end - key)))
			return -EINVAL;
		size_t keylen = (size_t)(eq - key), vlen = (size_t)(end - eq - 1);
		if (keylen == 4 && memcmp(key, "path", 4) == 0) {
			free(next->path);
			next->path = xstrndup(eq + 1, vlen);
		} else if (keylen == 4 && memcmp(key, "size", 4) == 0) {
			char number[24];
			if (!vlen || vlen >= sizeof(number))
				return -EINVAL;
			memcpy(number, eq + 1, vlen);
			number[vlen] = '\0';
			if (parse_u64(number, 0, UINT64_MAX, &next->size) < 0)
				return -EINVAL;
			next->has_size = true;
		}
		at += rec;
	}
	return 0;
}

/* size bytes of member data (and the padding after them) into a new buffer, NUL-terminated. */
static int read_member_data(int fd, uint64_t size, char **out)
{
	size_t padded = (size_t)((size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK);
	char *buf = xmalloc(padded + 1);
	ssize_t n = read_block(fd, buf, padded);
	if (n != (ssize_t)padded) {
		free(buf);
		return n < 0 ? (int)n : -EINVAL;
	}
	buf[size] = '\0';
	*out = buf;
	return 0;
}

static int unpack_into(int fd, int dirfd, char *err, size_t errlen)
{
	struct tar_header h;
	char *buf = xmalloc(1 << 20);
	struct pending_member next = { 0 };
	int ret = 0;
	for (uint64_t offset = 0;; offset += TAR_BLOCK) {
		ssize_t n = read_block(fd, &h, sizeof(h));
		if (n < 0) {
			ret = (int)n;
			snprintf(err, errlen, "%s", strerror(-ret));
			break;
		}
		static const char zero[TAR_BLOCK];
		if (n == 0 || ((size_t)n == sizeof(h) && memcmp(&h, zero, sizeof(h)) == 0))
			break; /* the end */
		bool ok = (size_t)n == sizeof(h) && memcmp(h.magic, "ustar", 5) == 0;
		uint64_t size = ok ? size_field(&h, &ok) : 0;
		uint64_t sum = ok ? octal_field(h.chksum, sizeof(h.chksum), &ok) : 0;
		if (!ok || sum != header_sum(&h)) {
			snprintf(err, errlen, "not a sigprof archive (no tar header at offset %llu)", (unsigned long long)offset);
			ret = -EINVAL;
			break;
		}
		if (h.typeflag == 'x' || h.typeflag == 'g' || h.typeflag == 'L' || h.typeflag == 'K') {
			/* an extended header: pax records ('x' for the next member, 'g' for all), a GNU long name or link */
			char *data = NULL;
			if (size > MAX_EXTENDED_HEADER) {
				snprintf(err, errlen, "the extended header at offset %llu is %llu bytes, more than the %u one "
					 "may hold", (unsigned long long)offset, (unsigned long long)size, MAX_EXTENDED_HEADER);
				ret = -EFBIG;
				break;
			}
			ret = read_member_data(fd, size, &data);
			if (ret) {
				snprintf(err, errlen, "archive cut short in the extended header at offset %llu",
					 (unsigned long long)offset);
				break;
			}
			if (h.typeflag == 'x')
				ret = parse_pax(data, (size_t)size, &next);
			else if (h.typeflag == 'L' && size && memchr(data, '\0', (size_t)size - 1)) /* a NUL inside the name */
				ret = -EINVAL;
			else if (h.typeflag == 'L') {
				free(next.path);
				next.path = xstrndup(data, strnlen(data, (size_t)size));
			}
			free(data);
			if (ret) {
				snprintf(err, errlen, "the extended header at offset %llu does not parse", (unsigned long long)offset);
				break;
			}
			offset += (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
			continue;
		}
		if (next.has_size)
			size = next.size;
		char whole[sizeof(h.prefix) + 1 + sizeof(h.name) + 1];
		if (h.prefix[0])
			snprintf(whole, sizeof(whole), "%.*s/%.*s", (int)sizeof(h.prefix), h.prefix, (int)sizeof(h.name),
				 h.name);
		else
			snprintf(whole, sizeof(whole), "%.*s", (int)sizeof(h.name), h.name);
		/* "./usr/lib/x", as tar -C DIR -cf x.tar . writes it, is "usr/lib/x" */
		const char *name = next.path ? next.path : whole;
		while (name[0] == '.' && name[1] == '/')
			name += 2 + strspn(name + 2, "/");
		if (size > MAX_ARCHIVE_FILE) {
			snprintf(err, errlen, "member %s at offset %llu is %llu bytes, more than the %llu a member may hold",
				 QUOTED(name), (unsigned long long)offset, (unsigned long long)size,
				 (unsigned long long)MAX_ARCHIVE_FILE);
			ret = -EFBIG;
			break;
		}
		bool regular = h.typeflag == '0' || h.typeflag == '\0';
		if (regular && !safe_member_name(name)) {
			snprintf(err, errlen, "member %s would be written outside the directory", QUOTED(name));
			ret = -EINVAL;
			break;
		}
		int out = -1;
		if (regular) {
			ret = make_parents(dirfd, name);
			if (!ret) {
				out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
				if (out < 0)
					ret = -errno;
			}
			if (ret) {
				snprintf(err, errlen, "cannot unpack %s: %s", QUOTED(name), strerror(-ret));
				break;
			}
		}
		/* the data, padded to a block; written for a regular file, skipped for another kind */
		uint64_t left = (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK, data_left = size;
		while (left && !ret) {
			size_t want = left < (1 << 20) ? (size_t)left : (1 << 20);
			n = read_block(fd, buf, want);
			if (n < (ssize_t)want) {
				ret = n < 0 ? (int)n : -EINVAL;
				snprintf(err, errlen, "archive cut short in %s", QUOTED(name));
				break;
			}
			size_t keep = data_left < (uint64_t)n ? (size_t)data_left : (size_t)n;
			const char *p = buf;
			while (out >= 0 && keep) {
				ssize_t w = write(out, p, keep);
				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					ret = -errno;
					snprintf(err, errlen, "cannot unpack %s: %s", QUOTED(name), strerror(errno));
					break;
				}
				p += w;
				keep -= (size_t)w;
				data_left -= (uint64_t)w;
			}
			left -= (uint64_t)n;
			offset += (uint64_t)n;
		}
		if (out >= 0)
			close(out);
		free(next.path);
		next = (struct pending_member){ 0 };
		if (ret)
			break;
	}
	free(next.path);
	free(buf);
	return ret;
}

static void remove_tree(int dirfd)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0)
			continue;
		int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_tree(sub);
			unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

/* The process that removes the unpacked tree whatever ends the report (start_janitor(), below). */
static struct {
	int fd;    /* the write end, or -1 */
	pid_t pid; /* the janitor, or 0 */
} janitor = { -1, 0 };

/* A normal end: the janitor has nothing left to do; it is told so and reaped. */
static void stop_janitor(void)
{
	if (janitor.fd < 0)
		return;
	close(janitor.fd);
	while (waitpid(janitor.pid, NULL, 0) < 0 && errno == EINTR)
		;
	janitor.fd = -1;
	janitor.pid = 0;
}

void archive_remove(char *dir)
{
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		remove_tree(fd);
	rmdir(dir);
	free(dir);
	stop_janitor();
}

/*
 * The unpacked tree outlives no report, however the report ends: a small
 * process of its own (forked here, before anything is unpacked) waits on
 * a pipe whose other end only the report holds.  Any end of the report
 * (exit, SIGPIPE from `| head`, SIGINT, SIGTERM, SIGHUP, even SIGKILL)
 * closes it, and the process then removes the tree.  It ignores the
 * signals a terminal or a pipe sends the report's process group, and
 * holds none of the report's standard streams (a pager or a pipe reader
 * sees their end when the report ends).  After a normal end the tree is
 * gone already (archive_remove()) and it only exits.
 */
static void start_janitor(const char *dir)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid != 0) {
		close(pipefd[0]);
		if (pid < 0) {
			close(pipefd[1]);
			return;
		}
		/* the write end stays open in the report, closed in what it executes */
		janitor.fd = pipefd[1];
		janitor.pid = pid;
		return;
	}
	close(pipefd[1]);
	setsid();
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			signal(sig, SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	char c;
	while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
		;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		remove_tree(fd);
	rmdir(dir);
	_exit(0);
}

int archive_unpack(const char *path, char **dir, char *err, size_t errlen)
{
	*dir = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s", strerror(e));
		return -e;
	}
	const char *tmp = getenv("TMPDIR");
	struct strbuf name = { 0 };
	sb_addf(&name, "%s/sigprof-symfs.", tmp && *tmp ? tmp : "/tmp");
	for (int i = 0; i < 6; i++)
		sb_add(&name, "X", 1); /* mkdtemp's template: the six characters it replaces */
	if (!mkdtemp(name.buf)) {
		int e = errno;
		snprintf(err, errlen, "cannot make a directory to unpack it in: %s", strerror(e));
		sb_free(&name);
		close(fd);
		return -e;
	}
	start_janitor(name.buf);
	int dirfd = open(name.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = dirfd < 0 ? -errno : unpack_into(fd, dirfd, err, errlen);
	if (dirfd >= 0)
		close(dirfd);
	close(fd);
	if (ret < 0) {
		archive_remove(name.buf);
		return ret;
	}
	*dir = name.buf;
	return 0;
}
