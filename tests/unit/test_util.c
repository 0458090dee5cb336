/*
 * test_util.c: the small shared helpers of profiler/util.c that the other
 * suites do not exercise on their own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/base/util.h"
#include "sigprof/base/files.h"
#include "sigprof/base/hashmap.h"
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

/* "Did you mean": near by a prefix or a few edits, never a far name. */
Test(util, nearest_name_by_prefix_and_edits)
{
	static const char *const names[] = { "cpu", "signal", "futex", "sched", "cache", "c2c", "lock" };
	static const struct {
		const char *typed, *want;
	} cases[] = {
		{ "sigal", "signal" }, { "singal", "signal" }, { "sig", "signal" }, { "futx", "futex" },
		{ "cpux", "cpu" }, { "shced", "sched" }, { "lck", "lock" }, { "network", NULL }, { "x", NULL },
		{ "signal", NULL }, /* itself: nothing to suggest */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct nearest n = { .word = cases[i].typed };
		for (size_t k = 0; k < ARRAY_SIZE(names); k++)
			nearest_offer(&n, names[k]);
		if (cases[i].want)
			cr_assert(n.best && strcmp(n.best, cases[i].want) == 0, "%s: %s", cases[i].typed,
				  n.best ? n.best : "(none)");
		else
			cr_assert_null(n.best, "%s: %s", cases[i].typed, n.best);
	}
	cr_assert_eq(edit_distance("report", "reprot"), 1);
	cr_assert_eq(edit_distance("", "abc"), 3);
	cr_assert_eq(edit_distance("kitten", "sitting"), 3);
}

/* A root command's output in a directory others can write: a new file renamed over the name, never a link followed. */
Test(util, safe_output_replaces_a_file_and_refuses_a_link)
{
	char *dir = temp_dir_new();
	char *path = path_join(dir, "page.html");
	write_file(path, "old", 3);
	struct safe_output out;
	cr_assert_eq(safe_output_open(path, 0644, &out), 0);
	fputs("new page", out.fp);
	cr_assert_eq(safe_output_commit(&out), 0);
	char *text = read_text_file(path);
	cr_assert_str_eq(text, "new page");
	free(text);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);

	/* aborted: the name keeps what it had, and no temporary file is left */
	cr_assert_eq(safe_output_open(path, 0644, &out), 0);
	fputs("half", out.fp);
	safe_output_abort(&out);
	text = read_text_file(path);
	cr_assert_str_eq(text, "new page");
	free(text);

	/* a link at the name is refused and its target untouched */
	char *target = path_join(dir, "target");
	write_file(target, "precious", 8);
	char *link = path_join(dir, "link.html");
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(safe_output_open(link, 0644, &out), -EEXIST);
	text = read_text_file(target);
	cr_assert_str_eq(text, "precious");
	free(text);
	cr_assert_eq(safe_output_open(dir, 0644, &out), -EEXIST, "a directory at the name");
	/* what is left in the directory: the page, the target, the link; no temporary file */
	int entries = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; (e = readdir(d));)
		entries += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	cr_assert_eq(entries, 3);
	free(link);
	free(target);
	free(path);
	temp_dir_remove(dir);
}

/* stat's -o: written as it goes, so opened in place, but never where another user can point it. */
Test(util, stream_output_opens_in_place_and_never_where_another_user_points)
{
	char *dir = temp_dir_new();
	char *path = path_join(dir, "figures.txt");
	bool created;
	int fd = stream_output_open(path, &created);
	cr_assert_geq(fd, 0);
	cr_assert(created);
	cr_assert_eq(write(fd, "first", 5), 5);
	close(fd);
	fd = stream_output_open(path, &created);
	cr_assert_geq(fd, 0, "an existing file of one link is opened in place");
	cr_assert_not(created);
	close(fd);

	/* a hard link would take the writes to the other name's file */
	char *other = path_join(dir, "other");
	cr_assert_eq(link(path, other), 0);
	cr_assert_eq(stream_output_open(path, &created), -EMLINK);
	cr_assert_eq(unlink(other), 0);

	/* a FIFO with no reader: refused at once, never a blocked open */
	char *fifo = path_join(dir, "fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(stream_output_open(fifo, &created), -ENXIO);

	/* the caller's own link in a directory only it can change is followed; a link to nothing yet makes the file */
	char *link_path = path_join(dir, "link");
	char *later = path_join(dir, "later.txt");
	cr_assert_eq(symlink(later, link_path), 0);
	fd = stream_output_open(link_path, &created);
	cr_assert_geq(fd, 0);
	cr_assert_not(created, "the link was there: the file made through it is not the name's to remove");
	close(fd);
	struct stat st;
	cr_assert_eq(stat(later, &st), 0);

	/* the same link in a directory others can write (not sticky) could be swapped: refused */
	cr_assert_eq(chmod(dir, 0777), 0);
	cr_assert_eq(stream_output_open(link_path, &created), -EPERM);
	cr_assert_eq(chmod(dir, 01777), 0);
	fd = stream_output_open(link_path, &created);
	cr_assert_geq(fd, 0, "sticky: no one else can remove the caller's link");
	close(fd);

	if (geteuid() == 0) {
		/* as root: another user's link, in the sticky directory too, and another user's FIFO */
		char *planted = path_join(dir, "planted");
		cr_assert_eq(symlink(path, planted), 0);
		cr_assert_eq(lchown(planted, 65534, 65534), 0);
		cr_assert_eq(stream_output_open(planted, &created), -EPERM);
		char *text = read_text_file(path);
		cr_assert_str_eq(text, "first", "the file it points at is untouched");
		free(text);
		cr_assert_eq(chown(fifo, 65534, 65534), 0);
		int reader = open(fifo, O_RDONLY | O_NONBLOCK);
		cr_assert_geq(reader, 0);
		cr_assert_eq(stream_output_open(fifo, &created), -EPERM, "another user's FIFO, read or not");
		/* another user's file planted in the root-owned directory: they could change it after; refused */
		char *theirs = path_join(dir, "theirs.txt");
		int planted_fd = open(theirs, O_WRONLY | O_CREAT | O_EXCL, 0666);
		cr_assert_geq(planted_fd, 0);
		close(planted_fd);
		cr_assert_eq(chown(theirs, 65534, 65534), 0);
		cr_assert_eq(stream_output_open(theirs, &created), -EEXIST);
		free(theirs);
		/* but the one this process writes its standard output to (sudo sigprof stat -o /dev/stdout | less) */
		int saved = dup(1), writer = open(fifo, O_WRONLY | O_NONBLOCK);
		cr_assert_geq(writer, 0);
		cr_assert_eq(dup2(writer, 1), 1);
		fd = stream_output_open("/dev/stdout", &created);
		dup2(saved, 1);
		close(saved);
		close(writer);
		cr_assert_geq(fd, 0, "-o /dev/stdout into another user's pipe: %s", strerror(-fd));
		close(fd);
		close(reader);
		free(planted);
	}
	free(later);
	free(link_path);
	free(fifo);
	free(other);
	free(path);
	temp_dir_remove(dir);
}

static int values_freed;

static void count_and_free(void *value)
{
	values_freed++;
	free(value);
}

Test(util, u64_map_free_values_frees_each_value_once)
{
	struct u64_map m = { 0 };
	for (uint64_t k = 1; k <= 100; k++) /* enough to grow the table twice */
		u64_map_put(&m, k * 4096, xcalloc(1, 16));
	free(u64_map_remove(&m, 4096));
	values_freed = 0;
	u64_map_free_values(&m, count_and_free);
	cr_assert_eq(values_freed, 99);
	cr_assert_eq(m.count, 0);
	cr_assert_null(m.values);
	u64_map_free_values(&m, count_and_free); /* an empty map: nothing */
	cr_assert_eq(values_freed, 99);
}

/* A command line shown on a terminal: control characters escaped, so nothing breaks the line or reaches the terminal. */
Test(util, printable_escapes_control_characters_and_keeps_utf8)
{
	struct strbuf sb = { 0 };
	sb_add_printable(&sb, "echo a\nb\t\x1b[31mred\x7f caf\xc3\xa9");
	cr_assert_str_eq(sb.buf, "echo a\\nb\\t\\x1b[31mred\\x7f caf\xc3\xa9");
	sb_free(&sb);
}

/* C1 controls (CSI 0x9b, raw or UTF-8 encoded) and bytes that are not UTF-8 reach no terminal either. */
Test(util, printable_escapes_c1_controls_and_invalid_utf8)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "ev\x1b[31m\xff", "ev\\x1b[31m\\xff" },
		{ "a\x9b" "31mb", "a\\x9b31mb" },                    /* raw C1 CSI */
		{ "a\xc2\x9b" "31mb", "a\\xc2\\x9b31mb" },            /* U+009B in UTF-8 */
		{ "\xc2\x80\xc2\x9f\xc2\xa0", "\\xc2\\x80\\xc2\\x9f\xc2\xa0" }, /* U+0080..9F escaped, U+00A0 kept */
		{ "\xc3x", "\\xc3x" },                                 /* a lead byte without its continuation */
		{ "\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },                 /* a UTF-16 surrogate */
		{ "\xc0\xaf", "\\xc0\\xaf" },                          /* overlong '/' */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = { 0 };
		sb_add_printable(&sb, cases[i].in);
		cr_assert_str_eq(sb.buf, cases[i].out, "case %zu", i);
		cr_assert_str_eq(PRINTABLE(cases[i].in), cases[i].out, "case %zu", i);
		sb_free(&sb);
	}
	const char *plain = "libc.so.6";
	cr_assert_eq(PRINTABLE(plain), plain, "printable text is not copied");
	cr_assert_null(PRINTABLE(NULL));
	cr_assert_str_eq(QUOTED("\xc2\x9b"), "'\\xc2\\x9b'");
	char small[12];
	cr_assert_str_eq(printable_text("\x1b\x1b\x1b\x1b", small, sizeof(small)), "\\x1b\\x1b...");
}
