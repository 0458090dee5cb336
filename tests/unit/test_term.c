/*
 * test_term.c: fitting text to a width (term.h): where a label is cut, the
 * width's sources in order, the colour switch.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/term.h"
#include "sigprof/base/util.h"

Test(term, cut_keeps_the_last_component_of_a_cpp_name)
{
	char buf[256];
	const char *name = "std::__1::basic_string<char, std::__1::char_traits<char>>::append(char const*)";
	const char *cut = term_cut(name, 40, buf, sizeof(buf));
	cr_assert_eq(term_columns(cut), 40, "%s", cut);
	cr_assert_str_eq(cut, "std::__1::basic_st\xe2\x80\xa6::append(char const*)");
	/* a last component too long to keep: the middle goes, both ends stay */
	const char *long_last = "ns::a_function_with_a_name_far_longer_than_the_width_allows(int)";
	cut = term_cut(long_last, 21, buf, sizeof(buf));
	cr_assert_eq(term_columns(cut), 21, "%s", cut);
	cr_assert_str_eq(cut, "ns::a_func\xe2\x80\xa6llows(int)");
}

Test(term, cut_ends_a_c_name_and_leaves_what_fits)
{
	char buf[64];
	cr_assert_str_eq(term_cut("do_syscall_64", 40, buf, sizeof(buf)), "do_syscall_64");
	cr_assert_str_eq(term_cut("do_syscall_64", 13, buf, sizeof(buf)), "do_syscall_64");
	cr_assert_str_eq(term_cut("entry_SYSCALL_64_after_hwframe", 10, buf, sizeof(buf)), "entry_SYS\xe2\x80\xa6");
	cr_assert_str_eq(term_cut("abc", 0, buf, sizeof(buf)), "abc", "0: no limit");
	cr_assert_eq(term_columns("\xc2\xb5s"), 2, "UTF-8 characters take one column each");
}

Test(term, width_from_the_option_then_columns)
{
	setenv("COLUMNS", "132", 1);
	cr_assert_eq(term_width(-1, 90), 90, "--width wins");
	cr_assert_eq(term_width(-1, 0), 132, "then COLUMNS");
	cr_assert_eq(term_width(-1, 10), TERM_MIN_WIDTH, "raised to the narrowest");
	setenv("COLUMNS", "junk", 1);
	cr_assert_eq(term_width(-1, 0), 0, "not a terminal, no COLUMNS: no limit");
	unsetenv("COLUMNS");
	cr_assert_eq(term_width(-1, 0), 0);
}

Test(term, colour_follows_the_mode_and_no_color)
{
	enum term_color_mode m;
	cr_assert_eq(term_color_parse("always", &m), 0);
	cr_assert_eq(m, TERM_COLOR_ALWAYS);
	cr_assert_eq(term_color_parse("sometimes", &m), -22);
	cr_assert(term_color_enabled(TERM_COLOR_ALWAYS, -1));
	cr_assert(!term_color_enabled(TERM_COLOR_NEVER, -1));
	cr_assert(!term_color_enabled(TERM_COLOR_AUTO, -1), "not a terminal");
	setenv("NO_COLOR", "1", 1);
	cr_assert(term_color_enabled(TERM_COLOR_ALWAYS, -1), "--color=always beats NO_COLOR");
	unsetenv("NO_COLOR");
	cr_assert_str_eq(term_on(false, PAINT_KERNEL), "");
	cr_assert_str_eq(term_off(false), "");
	cr_assert_str_eq(term_off(true), "\033[0m");
}
