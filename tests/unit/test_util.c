/*
 * test_util.c: the small shared helpers of profiler/util.c that the other
 * suites do not exercise on their own.
 */
#include <errno.h>
#include <signal.h>
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

static const char *name_of(int signo)
{
	static char buf[32];
	return signal_name(signo, buf, sizeof(buf));
}

/* One name per signal number, for the signal table and the [signal ...] frames alike. */
Test(util, signal_name_standard_signals)
{
	cr_assert_str_eq(name_of(SIGHUP), "SIGHUP");
	cr_assert_str_eq(name_of(SIGKILL), "SIGKILL");
	cr_assert_str_eq(name_of(SIGUSR1), "SIGUSR1");
	cr_assert_str_eq(name_of(SIGUSR2), "SIGUSR2");
	cr_assert_str_eq(name_of(SIGSTKFLT), "SIGSTKFLT");
	cr_assert_str_eq(name_of(SIGCHLD), "SIGCHLD");
	cr_assert_str_eq(name_of(SIGPROF), "SIGPROF");
	cr_assert_str_eq(name_of(SIGIO), "SIGIO"); /* not its alias SIGPOLL */
	cr_assert_str_eq(name_of(SIGABRT), "SIGABRT"); /* not SIGIOT */
	cr_assert_str_eq(name_of(SIGSYS), "SIGSYS");
	for (int signo = 1; signo < 32; signo++) /* every standard number has a name */
		cr_assert(strncmp(name_of(signo), "SIG", 3) == 0 && (name_of(signo)[3] < '0' || name_of(signo)[3] > '9'),
			  "%d: %s", signo, name_of(signo));
}

Test(util, signal_name_real_time_signals_count_from_the_c_library)
{
	cr_assert_eq(SIGRTMIN, 34);
	cr_assert_eq(SIGRTMAX, 64);
	cr_assert_str_eq(name_of(SIGRTMIN), "SIGRTMIN");
	cr_assert_str_eq(name_of(SIGRTMIN + 1), "SIGRTMIN+1");
	cr_assert_str_eq(name_of(SIGRTMIN + 3), "SIGRTMIN+3");
	cr_assert_str_eq(name_of(SIGRTMAX - 1), "SIGRTMIN+29");
	cr_assert_str_eq(name_of(SIGRTMAX), "SIGRTMAX");
	/* glibc keeps the kernel's first two real-time signals (32, 33) for itself: its 34..64 */
	cr_assert_str_eq(name_of(32), "SIGRTMIN-2");
	cr_assert_str_eq(name_of(33), "SIGRTMIN-1");
	cr_assert_str_eq(name_of(34), "SIGRTMIN");
	cr_assert_str_eq(name_of(64), "SIGRTMAX");
}

Test(util, signal_name_falls_back_to_the_number)
{
	cr_assert_str_eq(name_of(0), "SIG0");
	cr_assert_str_eq(name_of(-1), "SIG-1");
	cr_assert_str_eq(name_of(-34), "SIG-34");
	cr_assert_str_eq(name_of(SIGRTMAX + 1), "SIG65");
	cr_assert_str_eq(name_of(1000), "SIG1000");
	char small[6];
	cr_assert_str_eq(signal_name(SIGRTMIN + 3, small, sizeof(small)), "SIGRT"); /* cut, still terminated */
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
