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
