/*
 * test_paths.c: the path rules (profiler/model/paths.c).
 *
 * Representative kernel and libc function names of each path, as they
 * appear in /proc/kallsyms and in libc's symbol table, must land on their
 * path; shared helpers must land on none.  User rules, given on the command
 * line or in a file, come before the built-in table.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/model/paths.h"
#include "sigprof/base/util.h"
#include "unit_helpers.h"

struct case_ {
	const char *symbol;
	int path;
};

static void check_cases(const struct path_rules *rules, const struct case_ *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = path_rules_match(rules, cases[i].symbol);
		cr_assert_eq(got, cases[i].path, "%s: got %s (%d), want %s (%d)", cases[i].symbol, path_name(got), got,
			     path_name(cases[i].path), cases[i].path);
	}
}

Test(paths, names_round_trip)
{
	for (int p = 0; p < PATH_COUNT; p++) {
		const char *name = path_name(p);
		cr_assert_not_null(name);
		cr_assert_eq(path_from_name(name), p, "%s", name);
	}
	cr_assert_str_eq(path_name(PATH_FUTEX_WAIT), "futex-wait");
	cr_assert_str_eq(path_name(-1), "other");
	cr_assert_str_eq(path_name(PATH_COUNT), "other");
	cr_assert_eq(path_from_name("futex_wait"), -1);
	cr_assert_eq(path_from_name(""), -1);
}

Test(paths, builtin_rules_on_kernel_and_libc_names)
{
	const struct case_ cases[] = {
		/* sigreturn */
		{ "__restore_rt", PATH_SIGRETURN },
		{ "__x64_sys_rt_sigreturn", PATH_SIGRETURN },
		{ "__ia32_compat_sys_sigreturn", PATH_SIGRETURN },
		{ "__ia32_compat_sys_rt_sigreturn", PATH_SIGRETURN },
		{ "restore_sigcontext", PATH_SIGRETURN },
		{ "fpu__restore_sig", PATH_SIGRETURN },
		/* signal-deliver */
		{ "arch_do_signal_or_restart", PATH_SIGNAL_DELIVER },
		{ "get_signal", PATH_SIGNAL_DELIVER },
		{ "dequeue_signal", PATH_SIGNAL_DELIVER },
		{ "x64_setup_rt_frame", PATH_SIGNAL_DELIVER },
		{ "copy_fpstate_to_sigframe", PATH_SIGNAL_DELIVER },
		/* signal-generate, kernel and libc */
		{ "__send_signal_locked", PATH_SIGNAL_GENERATE },
		{ "complete_signal", PATH_SIGNAL_GENERATE },
		{ "kill_pid_info", PATH_SIGNAL_GENERATE },
		{ "kill_pid_info_type", PATH_SIGNAL_GENERATE },
		{ "__x64_sys_tgkill", PATH_SIGNAL_GENERATE },
		{ "do_tkill", PATH_SIGNAL_GENERATE },
		{ "raise", PATH_SIGNAL_GENERATE },
		{ "kill", PATH_SIGNAL_GENERATE },
		{ "pthread_kill", PATH_SIGNAL_GENERATE },
		{ "pthread_kill@@GLIBC_2.34", PATH_SIGNAL_GENERATE },
		{ "sigqueue", PATH_SIGNAL_GENERATE },
		/* futex-wait */
		{ "futex_wait", PATH_FUTEX_WAIT },
		{ "futex_wait_queue", PATH_FUTEX_WAIT },
		{ "futex_wait_setup", PATH_FUTEX_WAIT },
		{ "__futex_abstimed_wait_common", PATH_FUTEX_WAIT },
		{ "__futex_abstimed_wait_cancelable64", PATH_FUTEX_WAIT },
		{ "__GI___futex_abstimed_wait_cancelable64", PATH_FUTEX_WAIT },
		{ "__lll_lock_wait", PATH_FUTEX_WAIT },
		{ "__lll_lock_wait_private", PATH_FUTEX_WAIT },
		/* futex-wake */
		{ "futex_wake", PATH_FUTEX_WAKE },
		{ "futex_wake_op", PATH_FUTEX_WAKE },
		{ "__lll_lock_wake", PATH_FUTEX_WAKE },
		/* futex-requeue */
		{ "futex_requeue", PATH_FUTEX_REQUEUE },
		{ "requeue_pi_wake_futex", PATH_FUTEX_REQUEUE },
		/* futex-other */
		{ "futex_lock_pi", PATH_FUTEX_OTHER },
		{ "futex_unlock_pi", PATH_FUTEX_OTHER },
		{ "do_futex", PATH_FUTEX_OTHER },
		{ "__x64_sys_futex", PATH_FUTEX_OTHER },
		{ "__ia32_sys_futex_time32", PATH_FUTEX_OTHER },
		{ "__arm64_sys_futex", PATH_FUTEX_OTHER },
		/* recorder: the kernel taking the recording's samples */
		{ "perf_tp_event", PATH_RECORDER },
		{ "perf_syscall_enter", PATH_RECORDER },
		{ "perf_syscall_enter.cold", PATH_RECORDER },
		{ "perf_swevent_event", PATH_RECORDER },
		{ "perf_trace_buf_alloc", PATH_RECORDER },
		{ "perf_output_sample", PATH_RECORDER },
		{ "perf_callchain_user", PATH_RECORDER },
		{ "__perf_event_overflow", PATH_RECORDER },
		{ "perf_event_task_tick", -1 },
		{ "perf_bench", -1 },
		/* shared helpers and unrelated functions: no path of their own */
		{ "futex_hash", -1 },
		{ "get_futex_key", -1 },
		{ "_raw_spin_lock", -1 },
		{ "schedule", -1 },
		{ "main", -1 },
		{ "killer_app", -1 },
		{ "raise_priority", -1 },
		{ "futex_waiter", -1 },
		{ "", -1 },
	};
	check_cases(NULL, cases, ARRAY_SIZE(cases));
	struct path_rules *rules = path_rules_new();
	check_cases(rules, cases, ARRAY_SIZE(cases)); /* no user rules: the same */
	path_rules_free(rules);
}

Test(paths, compiler_clones_take_the_path_of_their_function)
{
	const struct case_ cases[] = {
		{ "futex_wait.isra.0", PATH_FUTEX_WAIT },
		{ "futex_wake.constprop.0", PATH_FUTEX_WAKE },
		{ "get_signal.cold", PATH_SIGNAL_DELIVER },
		{ "__send_signal_locked.part.0", PATH_SIGNAL_GENERATE },
		{ "futex_requeue.isra.0.cold", PATH_FUTEX_REQUEUE },
		{ "futex_hash.isra.0", -1 },
		{ ".futex_wait", -1 }, /* nothing before the dot: not a clone */
		{ "futex_wait.", PATH_FUTEX_WAIT },
	};
	check_cases(NULL, cases, ARRAY_SIZE(cases));
}

Test(paths, null_and_long_symbols)
{
	cr_assert_eq(path_rules_match(NULL, NULL), -1);
	struct path_rules *rules = path_rules_new();
	cr_assert_eq(path_rules_match(rules, NULL), -1);
	/* a base name too long for the clone buffer is not matched as a clone, and nothing overflows */
	char err[256];
	cr_assert_eq(path_rules_add(rules, "*a=futex-wake", err, sizeof(err)), 0, "%s", err);
	char name[1024];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	cr_assert_eq(path_rules_match(rules, name), PATH_FUTEX_WAKE);
	strcpy(name + 300, ".cold"); /* the whole name ends in 'd'; its 300-byte base would match */
	cr_assert_eq(path_rules_match(rules, name), -1);
	strcpy(name + 255, ".cold"); /* a 255-byte base still fits */
	cr_assert_eq(path_rules_match(rules, name), PATH_FUTEX_WAKE);
	path_rules_free(rules);
}

Test(paths, no_literal_builtin_rule_is_shadowed_by_an_earlier_one)
{
	cr_assert_gt(builtin_path_rule_count, 0);
	for (unsigned i = 0; i < builtin_path_rule_count; i++) {
		const struct path_rule *r = &builtin_path_rules[i];
		cr_assert(r->path >= 0 && r->path < PATH_OTHER, "%s", r->pattern);
		if (strpbrk(r->pattern, "*?["))
			continue;
		cr_assert_eq(path_rules_match(NULL, r->pattern), (int)r->path, "%s", r->pattern);
	}
}

Test(paths, user_rules_come_before_the_builtin_ones)
{
	struct path_rules *rules = path_rules_new();
	char err[256] = "";
	cr_assert_eq(path_rules_add(rules, "futex_wait=futex-other", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(path_rules_add(rules, "my_lock_*=futex-wait", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(path_rules_add(rules, "app_*=sigreturn", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(path_rules_add(rules, "app_special=futex-wake", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(path_rules_add(rules, "get_signal=other", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(path_rules_add(rules, "a=b=futex-requeue", err, sizeof(err)), 0, "%s", err);
	const struct case_ cases[] = {
		{ "futex_wait", PATH_FUTEX_OTHER },     /* overrides the built-in */
		{ "futex_wait.isra.0", PATH_FUTEX_OTHER },
		{ "futex_wake", PATH_FUTEX_WAKE },      /* built-ins still apply */
		{ "my_lock_slow", PATH_FUTEX_WAIT },
		{ "my_lock_slow.part.0", PATH_FUTEX_WAIT },
		{ "app_special", PATH_SIGRETURN },      /* the first user rule that matches wins */
		{ "get_signal", PATH_OTHER },           /* a rule may say "other" explicitly */
		{ "a=b", PATH_FUTEX_REQUEUE },          /* the path is after the last '=' */
		{ "my_lock", -1 },
	};
	check_cases(rules, cases, ARRAY_SIZE(cases));
	path_rules_free(rules);
}

static void expect_bad_rule(const char *spec, const char *want)
{
	struct path_rules *rules = path_rules_new();
	char err[256] = "";
	cr_assert_eq(path_rules_add(rules, spec, err, sizeof(err)), -EINVAL, "%s", spec);
	cr_assert(strstr(err, want) != NULL, "'%s': message '%s' should say '%s'", spec, err, want);
	cr_assert_eq(path_rules_match(rules, "futex_wait"), PATH_FUTEX_WAIT, "nothing was added");
	path_rules_free(rules);
}

Test(paths, bad_rule_specs_are_rejected_with_a_reason)
{
	expect_bad_rule("futex_wait", "is not GLOB=PATH");
	expect_bad_rule("", "is not GLOB=PATH");
	expect_bad_rule("futex_wait=bogus", "unknown path 'bogus'");
	expect_bad_rule("futex_wait=", "unknown path ''");
	expect_bad_rule("futex_wait=futex_wait", "unknown path 'futex_wait'");
	expect_bad_rule("=futex-wait", "empty symbol pattern");
	/* what the user typed is quoted with its control characters escaped: the error stays one line */
	expect_bad_rule("a\nb", "path rule 'a\\nb' is not GLOB=PATH");
	expect_bad_rule("futex_wait=futex\nwait", "unknown path 'futex\\nwait'");
	/* the message lists the valid paths */
	struct path_rules *rules = path_rules_new();
	char err[512] = "";
	cr_assert_eq(path_rules_add(rules, "x=nope", err, sizeof(err)), -EINVAL);
	for (int p = 0; p < PATH_COUNT; p++)
		cr_assert(strstr(err, path_name(p)) != NULL, "'%s' names %s", err, path_name(p));
	/* a short buffer is truncated, not overrun */
	char tiny[8];
	memset(tiny, 'z', sizeof(tiny));
	cr_assert_eq(path_rules_add(rules, "x=nope", tiny, sizeof(tiny)), -EINVAL);
	cr_assert_eq(strnlen(tiny, sizeof(tiny)), sizeof(tiny) - 1);
	path_rules_free(rules);
}

static char *write_rules(const char *dir, const char *text)
{
	char *path = path_join(dir, "rules.txt");
	write_file(path, text, strlen(text));
	return path;
}

Test(paths, rules_file_with_comments)
{
	char *dir = temp_dir_new();
	char *path = write_rules(dir, "# sigprof path rules\n"
				      "\n"
				      "my_lock_*   futex-wait   # the app's mutex\n"
				      "\tapp_signal_*\tsignal-deliver\n"
				      "   # an indented comment\n"
				      "futex_wake futex-other\n"
				      "last_line_without_newline sigreturn");
	struct path_rules *rules = path_rules_new();
	char err[256] = "";
	cr_assert_eq(path_rules_load(rules, path, err, sizeof(err)), 0, "%s", err);
	const struct case_ cases[] = {
		{ "my_lock_acquire", PATH_FUTEX_WAIT },
		{ "app_signal_handler", PATH_SIGNAL_DELIVER },
		{ "futex_wake", PATH_FUTEX_OTHER },
		{ "last_line_without_newline", PATH_SIGRETURN },
		{ "futex_wait", PATH_FUTEX_WAIT },
		{ "#", -1 },
	};
	check_cases(rules, cases, ARRAY_SIZE(cases));
	/* rules added later come after the file's */
	cr_assert_eq(path_rules_add(rules, "my_lock_acquire=futex-wake", err, sizeof(err)), 0);
	cr_assert_eq(path_rules_match(rules, "my_lock_acquire"), PATH_FUTEX_WAIT);
	path_rules_free(rules);
	free(path);
	temp_dir_remove(dir);
}

static void expect_bad_file(const char *text, int line, const char *want)
{
	char *dir = temp_dir_new();
	char *path = write_rules(dir, text);
	struct path_rules *rules = path_rules_new();
	char err[512] = "";
	cr_assert_eq(path_rules_load(rules, path, err, sizeof(err)), -EINVAL);
	char where[300];
	snprintf(where, sizeof(where), "%s:%d: ", path, line);
	cr_assert(strncmp(err, where, strlen(where)) == 0, "message '%s' should start with '%s'", err, where);
	cr_assert(strstr(err, want) != NULL, "message '%s' should say '%s'", err, want);
	path_rules_free(rules);
	free(path);
	temp_dir_remove(dir);
}

Test(paths, bad_lines_are_reported_with_their_number)
{
	expect_bad_file("# header\n\nfutex_wait\n", 3, "expected 'GLOB PATH'");
	expect_bad_file("a futex-wait\nb futex-wake\nc futex-other extra\n", 3, "expected 'GLOB PATH'");
	expect_bad_file("# one\n# two\n# three\n\n\nmy_fn nowhere # comment\n", 6, "unknown path 'nowhere'");
	expect_bad_file("ok_fn futex-wait\n  bad_fn futex_wait\n", 2, "unknown path 'futex_wait'");
}

Test(paths, missing_rules_file)
{
	char *dir = temp_dir_new();
	char *path = path_join(dir, "absent.txt");
	struct path_rules *rules = path_rules_new();
	char err[512] = "";
	cr_assert_eq(path_rules_load(rules, path, err, sizeof(err)), -ENOENT);
	char want[512];
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	cr_assert_str_eq(err, want);
	path_rules_free(rules);
	free(path);
	temp_dir_remove(dir);
}

/* A rules file that never ends (/dev/zero), holds a NUL or a line past the bound: one error, no hang. */
Test(paths, endless_binary_and_overlong_rules_files_are_errors)
{
	struct path_rules *rules = path_rules_new();
	char err[512] = "";
	cr_assert_eq(path_rules_load(rules, "/dev/zero", err, sizeof(err)), -EFBIG);
	cr_assert(strstr(err, "/dev/zero: larger than"), "%s", err);

	char *dir = temp_dir_new();
	char *path = path_join(dir, "nul.txt");
	write_file(path, "a futex-wait\n\0b futex-wake\n", 27);
	cr_assert_eq(path_rules_load(rules, path, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "NUL byte"), "%s", err);
	free(path);
	temp_dir_remove(dir);

	char *long_line = malloc(3000);
	memset(long_line, 'x', 2999);
	long_line[2999] = '\0';
	char *text = NULL;
	cr_assert_gt(asprintf(&text, "a futex-wait\n%s futex-wake\n", long_line), 0);
	expect_bad_file(text, 2, "longer than");
	free(text);
	free(long_line);
	path_rules_free(rules);
}
