/*
 * test_util.c: the small shared helpers of profiler/util.c that the other
 * suites do not exercise on their own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/util.h"
#include "unit_helpers.h"

/* What a user typed, as an error line shows it: one line, quoted, escaped, cut with "...". */
Test(util, quote_user_escapes_and_cuts)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "cpu-clock", "'cpu-clock'" },
		{ "", "''" },
		{ "a\nb\tc", "'a\\nb\\tc'" },
		{ "\x1b[31mred", "'\\x1b[31mred'" },
		{ "it's a\\b", "'it\\'s a\\\\b'" },
		{ "\x7f\xc3\xa9", "'\\x7f\\xc3\\xa9'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		cr_assert_str_eq(QUOTED(cases[i].in), cases[i].out, "case %zu", i);
	cr_assert_str_eq(QUOTED(NULL), "''");

	char buf[12];
	cr_assert_str_eq(quote_user("abcdefghijklmnop", buf, sizeof(buf)), "'abcdef...'");
	cr_assert_str_eq(quote_user("abcdef", buf, sizeof(buf)), "'abcdef'");
	/* an escape is cut whole, never halfway */
	cr_assert_str_eq(quote_user("abcde\n\n", buf, sizeof(buf)), "'abcde...'");
	char tiny[3] = "xx";
	cr_assert_str_eq(quote_user("abc", tiny, sizeof(tiny)), "");
	/* two in one call each have their own buffer */
	char line[64];
	snprintf(line, sizeof(line), "%s %s", QUOTED("a\n"), QUOTED("b"));
	cr_assert_str_eq(line, "'a\\n' 'b'");
}

/* A share as the text tables print it: two decimals, but never 0.00% for a part, nor 100.00% short of the whole. */
Test(util, format_share_never_rounds_a_part_to_nothing_or_all)
{
	static const struct {
		double part, whole;
		const char *out;
	} cases[] = {
		{ 0, 0, "0.00%" },        { 0, 10, "0.00%" },        { 5, 0, "-" },
		{ 1, 4, "25.00%" },       { 4, 4, "100.00%" },       { 1, 1000000, "<0.01%" },
		{ 1, 20001, "<0.01%" },   { 1, 20000, "0.01%" },     { 20000, 20001, ">99.99%" },
		{ 9999, 10000, "99.99%" }, { 3, 7, "42.86%" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		cr_expect_str_eq(SHARE(cases[i].part, cases[i].whole), cases[i].out, "%g of %g", cases[i].part,
				 cases[i].whole);
}

/* An untrusted file is read up to a bound: exactly the bound is whole, one byte more or /dev/zero is -EFBIG. */
Test(util, read_file_bounded_stops_at_its_bound)
{
	char *path = temp_file_with("0123456789", 10);
	char *text;
	size_t len;
	cr_assert_eq(read_file_bounded(path, 10, &text, &len), 0);
	cr_assert_eq(len, 10);
	cr_assert_str_eq(text, "0123456789");
	free(text);
	cr_assert_eq(read_file_bounded(path, 9, &text, &len), -EFBIG);
	cr_assert_null(text);
	cr_assert_eq(read_file_bounded("/dev/zero", 1 << 20, &text, &len), -EFBIG);
	cr_assert_eq(read_file_bounded("/nonexistent/file", 10, &text, &len), -ENOENT);
	unlink(path);
	free(path);
}

Test(util, file_type_names)
{
	cr_assert_str_eq(file_type_name(S_IFLNK | 0777), "a symbolic link");
	cr_assert_str_eq(file_type_name(S_IFCHR), "a character device");
	cr_assert_str_eq(file_type_name(S_IFIFO), "a FIFO");
	cr_assert_str_eq(file_type_name(S_IFDIR | 0755), "a directory");
}
