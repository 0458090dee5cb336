/*
 * test_archive.c: what report --symfs ARCHIVE unpacks (profiler/commands/archive.c).
 * Archives are written here by hand, header by header as POSIX ustar lays
 * them out, so the reader is checked against the format and not against
 * our own writer; the hostile ones try to leave the directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/commands/archive.h"
#include "unit_helpers.h"

TEMP_DIR_SUITE(archive);

/* One member: a 512-byte ustar header (checksum computed as the format says) and its data padded to 512. */
static void tar_member(struct byte_builder *b, const char *name, char type, const char *data)
{
	unsigned char h[512] = { 0 };
	size_t size = data ? strlen(data) : 0;
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 124, 12, "%011o", (unsigned)(size & 07777777));
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	bb_bytes(b, h, 512);
	if (size) {
		bb_bytes(b, data, size);
		bb_zeros(b, (512 - size % 512) % 512);
	}
}

static char *write_archive(const struct byte_builder *b, const char *name)
{
	char *path = path_join(dir, name);
	write_file(path, b->buf, b->len);
	return path;
}

static char *file_text(const char *root, const char *rel)
{
	char *path = path_join(root, rel);
	size_t n;
	unsigned char *data = read_file(path, &n);
	free(path);
	char *text = malloc(n + 1);
	memcpy(text, data, n);
	text[n] = '\0';
	free(data);
	return text;
}

Test(archive, regular_files_unpack_at_their_paths_and_are_removed_after)
{
	struct byte_builder b = { 0 };
	tar_member(&b, "usr/lib/libx.so", '0', "library bytes");
	tar_member(&b, "work/bin/prog", '0', "program");
	tar_member(&b, "work/bin/link", '2', NULL); /* a symbolic link: skipped */
	tar_member(&b, "sigprof-archive.txt", '0', "- /usr/lib/libx.so\n");
	bb_zeros(&b, 1024);
	char *path = write_archive(&b, "ok.tar");
	char *out = NULL, err[256] = "";
	setenv("TMPDIR", dir, 1);
	cr_assert_eq(archive_unpack(path, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(out);
	char *t = file_text(out, "usr/lib/libx.so");
	cr_assert_str_eq(t, "library bytes");
	free(t);
	t = file_text(out, "work/bin/prog");
	cr_assert_str_eq(t, "program");
	free(t);
	char *link = path_join(out, "work/bin/link");
	struct stat st;
	cr_assert_neq(lstat(link, &st), 0, "no link was made");
	free(link);
	char *kept = strdup(out);
	archive_remove(out);
	cr_assert_neq(access(kept, F_OK), 0, "the directory is gone");
	free(kept);
	unsetenv("TMPDIR");
	bb_free(&b);
	free(path);
}

/* tar -C DIR -cf x.tar . names every member "./..." (and the directory "./" itself): the same members */
Test(archive, members_named_with_a_leading_dot_slash_unpack_as_without)
{
	struct byte_builder b = { 0 };
	tar_member(&b, "./", '5', NULL);
	tar_member(&b, "./usr/lib/libx.so", '0', "library bytes");
	tar_member(&b, ".//sigprof-archive.txt", '0', "- /usr/lib/libx.so\n");
	bb_zeros(&b, 1024);
	char *path = write_archive(&b, "dot.tar");
	char *out = NULL, err[256] = "";
	setenv("TMPDIR", dir, 1);
	cr_assert_eq(archive_unpack(path, &out, err, sizeof(err)), 0, "%s", err);
	char *t = file_text(out, "usr/lib/libx.so");
	cr_assert_str_eq(t, "library bytes");
	free(t);
	t = file_text(out, "sigprof-archive.txt");
	cr_assert_str_eq(t, "- /usr/lib/libx.so\n");
	free(t);
	archive_remove(out);
	unsetenv("TMPDIR");
	bb_free(&b);
	free(path);
}

/* A member that would land outside, or a damaged archive: refused, and nothing is left behind. */
static void refused(const char *member, char type, bool damage, const char *want)
{
	struct byte_builder b = { 0 };
	tar_member(&b, "fine/file", '0', "x");
	tar_member(&b, member, type, "escape");
	if (damage)
		b.buf[512 + 512 + 150] ^= 1; /* the second header's checksum field */
	bb_zeros(&b, 1024);
	char *path = write_archive(&b, "bad.tar");
	char *tmp = path_join(dir, "unpack");
	mkdir(tmp, 0700);
	setenv("TMPDIR", tmp, 1);
	char *out = NULL, err[256] = "";
	cr_assert_lt(archive_unpack(path, &out, err, sizeof(err)), 0, "%s refused", member);
	cr_assert_null(out);
	cr_assert(strstr(err, want) != NULL, "%s: '%s'", member, err);
	cr_assert_eq(rmdir(tmp), 0, "nothing left in TMPDIR");
	char *outside = path_join(dir, "escaped");
	cr_assert_neq(access(outside, F_OK), 0);
	free(outside);
	unsetenv("TMPDIR");
	free(tmp);
	free(path);
	bb_free(&b);
}

Test(archive, members_that_would_leave_the_directory_are_refused)
{
	refused("../escaped", '0', false, "would be written outside the directory");
	refused("/tmp/escaped", '0', false, "would be written outside the directory");
	refused("fine/../../escaped", '0', false, "would be written outside the directory");
	refused("./../escaped", '0', false, "would be written outside the directory");
	refused("fine/./x", '0', false, "would be written outside the directory");
	refused("fine//double", '0', false, "would be written outside the directory");
}

Test(archive, damaged_or_foreign_files_are_refused)
{
	refused("second", '0', true, "not a sigprof archive (no tar header at offset 1024)");
	/* a recording is no archive */
	char *path = path_join(dir, "not.tar");
	write_file(path, "SIGPROF\0not a tar at all", 24);
	char *out = NULL, err[256] = "";
	cr_assert_eq(archive_unpack(path, &out, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "not a sigprof archive (no tar header at offset 0)");
	/* cut inside a member's data */
	struct byte_builder b = { 0 };
	tar_member(&b, "big", '0', "0123456789");
	write_file(path, b.buf, 512 + 5);
	cr_assert_lt(archive_unpack(path, &out, err, sizeof(err)), 0);
	cr_assert(strstr(err, "archive cut short in 'big'") || strstr(err, "archive cut short in big"), "%s", err);
	bb_free(&b);
	free(path);
}

/* A pax record, "LEN key=value\n", LEN its own length with its digits (POSIX.1-2001), appended to text. */
static void pax_record(char *text, size_t cap, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1, len = body + 1;
	while ((size_t)snprintf(NULL, 0, "%zu", len) + body != len)
		len++;
	snprintf(text + strlen(text), cap - strlen(text), "%zu %s=%s\n", len, key, value);
}

/* A path of 300 characters and more, past what ustar's name and prefix fields hold. */
static void long_path(char *buf, size_t cap)
{
	buf[0] = '\0';
	for (int i = 0; i < 4; i++)
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%080d", i ? "/" : "", i);
	snprintf(buf + strlen(buf), cap - strlen(buf), "/prog");
}

/* Unpack b (written as name); the unpacked directory, or a failure with the reason in err. */
static char *unpack_built(const struct byte_builder *b, const char *name, char *err, size_t errlen, int *ret)
{
	char *path = write_archive(b, name);
	char *out = NULL;
	setenv("TMPDIR", dir, 1);
	*ret = archive_unpack(path, &out, err, errlen);
	unsetenv("TMPDIR");
	free(path);
	return out;
}

/* A path longer than ustar holds: in a pax header ('x') before its member, as tar --format=pax writes it */
Test(archive, a_long_path_in_a_pax_header_names_the_next_member)
{
	char name[512], records[1024] = "";
	long_path(name, sizeof(name));
	cr_assert_gt(strlen(name), 255);
	pax_record(records, sizeof(records), "mtime", "1700000000.5");
	pax_record(records, sizeof(records), "path", name);
	struct byte_builder b = { 0 };
	tar_member(&b, "PaxHeaders/prog", 'x', records);
	tar_member(&b, "prog", '0', "long-named program");
	tar_member(&b, "after", '0', "its own name again");
	bb_zeros(&b, 1024);
	char err[256] = "";
	int ret;
	char *out = unpack_built(&b, "pax.tar", err, sizeof(err), &ret);
	cr_assert_eq(ret, 0, "%s", err);
	char *t = file_text(out, name);
	cr_assert_str_eq(t, "long-named program");
	free(t);
	t = file_text(out, "after");
	cr_assert_str_eq(t, "its own name again", "the pax path held for one member only");
	free(t);
	char *short_one = path_join(out, "prog");
	cr_assert_neq(access(short_one, F_OK), 0, "the name field's end is not the member's name");
	free(short_one);
	archive_remove(out);
	bb_free(&b);
}

/* GNU tar's long name (type 'L', the name and its NUL as data), as tar --format=gnu writes it */
Test(archive, a_gnu_long_name_names_the_next_member)
{
	char name[512];
	long_path(name, sizeof(name));
	struct byte_builder b = { 0 };
	tar_member(&b, "././@LongLink", 'L', name);
	tar_member(&b, "truncated-name", '0', "gnu program");
	bb_zeros(&b, 1024);
	char err[256] = "";
	int ret;
	char *out = unpack_built(&b, "gnu.tar", err, sizeof(err), &ret);
	cr_assert_eq(ret, 0, "%s", err);
	char *t = file_text(out, name);
	cr_assert_str_eq(t, "gnu program");
	free(t);
	archive_remove(out);
	bb_free(&b);
}

/* A pax size stands for the header's (it is how sizes of 8 GiB and more are written) */
Test(archive, a_pax_size_is_the_members_size)
{
	char records[256] = "";
	pax_record(records, sizeof(records), "size", "5");
	struct byte_builder b = { 0 };
	tar_member(&b, "PaxHeaders/five", 'x', records);
	unsigned char h[512] = { 0 };
	struct byte_builder one = { 0 };
	tar_member(&one, "five", '0', NULL); /* a header of size 0 ... */
	memcpy(h, one.buf, 512);
	bb_bytes(&b, h, 512);
	bb_bytes(&b, "12345", 5); /* ... followed by the 5 bytes the pax size gives */
	bb_zeros(&b, 507);
	bb_zeros(&b, 1024);
	char err[256] = "";
	int ret;
	char *out = unpack_built(&b, "size.tar", err, sizeof(err), &ret);
	cr_assert_eq(ret, 0, "%s", err);
	char *t = file_text(out, "five");
	cr_assert_str_eq(t, "12345");
	free(t);
	archive_remove(out);
	bb_free(&b);
	bb_free(&one);
}

/* The hostile forms: a pax path that leaves, a record that does not parse, sizes past what a member may hold */
Test(archive, hostile_extended_headers_are_refused)
{
	static const struct {
		const char *records;
		const char *want;
	} cases[] = {
		{ "22 path=../../escaped\n", "member '../../escaped' would be written outside the directory" },
		{ "20 path=/etc/passwd\n", "member '/etc/passwd' would be written outside the directory" },
		{ "99 path=short\n", "the extended header at offset 0 does not parse" },
		{ "8 path=x\n", "the extended header at offset 0 does not parse" },
		{ "11 pathx\n", "the extended header at offset 0 does not parse" },
		{ "11 size=-1\n", "the extended header at offset 0 does not parse" },
		{ "19 size=8589934592\n", "member 'm' at offset 1024 is 8589934592 bytes, more than the 4294967296" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct byte_builder b = { 0 };
		tar_member(&b, "PaxHeaders/m", 'x', cases[i].records);
		tar_member(&b, "m", '0', "data");
		bb_zeros(&b, 1024);
		char err[256] = "";
		int ret;
		char *out = unpack_built(&b, "hostile.tar", err, sizeof(err), &ret);
		cr_assert_lt(ret, 0, "%s accepted", cases[i].records);
		cr_assert_null(out);
		cr_assert(strstr(err, cases[i].want), "%s: '%s'", cases[i].records, err);
		bb_free(&b);
	}
}

/* A size in base-256 (GNU's form for 8 GiB and more) is read, and a member that large is refused by name */
Test(archive, a_base_256_size_is_read_and_refused_when_too_large)
{
	struct byte_builder b = { 0 };
	tar_member(&b, "huge", '0', NULL);
	unsigned char *h = (unsigned char *)b.buf;
	memset(h + 124, 0, 12);
	h[124] = 0x80;
	h[131] = 0x02; /* 2 << 32: 8 GiB */
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	bb_zeros(&b, 1024);
	char err[256] = "";
	int ret;
	char *out = unpack_built(&b, "huge.tar", err, sizeof(err), &ret);
	cr_assert_eq(ret, -EFBIG, "%s", err);
	cr_assert_null(out);
	cr_assert(strstr(err, "member 'huge' at offset 0 is 8589934592 bytes"), "%s", err);
	bb_free(&b);
}
