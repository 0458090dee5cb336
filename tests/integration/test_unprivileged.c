/*
 * test_unprivileged.c: what sigprof does for a user who is not root
 * (docs/unprivileged.md), run for real through setpriv as the user nobody.
 * Each test sets kernel.perf_event_paranoid (and the tracefs mount's
 * permissions) to the case it checks and puts back what it found, in its
 * .fini, whether it passed or not; the tests (criterion runs them in
 * parallel) take turns through a lock file, so one never saves another's
 * setting as the original.  Needs root to change those and to
 * become nobody; skipped, not passed, without.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define AS_NOBODY "setpriv --reuid=nobody --regid=nogroup --clear-groups "

static int saved_paranoid = 1000; /* 1000: not changed */
static char saved_tracefs[256];   /* the tracefs mount point whose options were changed, "" when none */
static char saved_tracefs_opts[128];
static int lock_fd = -1;          /* held from require_nobody() to restore() */

static void write_paranoid(int value)
{
	FILE *f = fopen(PARANOID, "w");
	cr_assert(f, "cannot write %s: %s", PARANOID, strerror(errno));
	fprintf(f, "%d\n", value);
	cr_assert_eq(fclose(f), 0, "cannot set kernel.perf_event_paranoid=%d", value);
}

static void set_paranoid(int value)
{
	if (saved_paranoid == 1000) {
		FILE *f = fopen(PARANOID, "r");
		cr_assert(f && fscanf(f, "%d", &saved_paranoid) == 1, "cannot read %s", PARANOID);
		fclose(f);
	}
	write_paranoid(value);
}

/* Every test's .fini: the sysctl and the tracefs mount as they were. */
static void restore(void)
{
	if (saved_paranoid != 1000) {
		write_paranoid(saved_paranoid);
		saved_paranoid = 1000;
	}
	if (saved_tracefs[0]) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "mount -o remount,%s %s", saved_tracefs_opts, saved_tracefs);
		if (system(cmd) != 0)
			fprintf(stderr, "could not restore the tracefs mount: %s\n", cmd);
		saved_tracefs[0] = '\0';
	}
	if (lock_fd >= 0) {
		close(lock_fd); /* releases the flock */
		lock_fd = -1;
	}
}

/* Skip unless root can become nobody and nobody can run ./sigprof and the workloads; the test dir writable. */
static void require_nobody(void)
{
	require_root();
	require_perf_events();
	char *out;
	if (run_cmd(&out, true, AS_NOBODY "%s --version", sigprof_bin()) != 0)
		skip_environment("cannot run %s as nobody through setpriv: %s", sigprof_bin(), out);
	free(out);
	if (run_cmd(&out, true, AS_NOBODY "test -x " W "cpu_burner") != 0)
		skip_environment("nobody cannot run the workloads in " W);
	free(out);
	cr_assert_eq(chmod(test_dir(), 0777), 0);
	lock_fd = open("/tmp/sigprof-test-sysctl.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert(lock_fd >= 0 && flock(lock_fd, LOCK_EX) == 0, "cannot take /tmp/sigprof-test-sysctl.lock: %s",
		  strerror(errno));
}

/* `sigprof ARGS` as nobody; stdout+stderr in *out; the exit status. */
static int as_nobody(char **out, const char *args)
{
	return run_cmd(out, true, AS_NOBODY "%s %s", sigprof_bin(), args);
}

Test(unprivileged, cpu_on_own_process_at_paranoid_1, .fini = restore, .timeout = 120)
{
	require_nobody();
	set_paranoid(1);
	const char *data = test_path("p1.data");
	char args[1024], *out;
	snprintf(args, sizeof(args), "record -e cpu -o %s -- " W "cpu_burner", data);
	int st = as_nobody(&out, args);
	cr_assert_eq(st, 0, "record as nobody at paranoid 1 exited %d: %s", st, out);
	free(out);
	const char *json = report_json_file(data, "");
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples"), 100);
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"kernel frames excluded\"))] | length"), 0,
		     "paranoid 1 allows kernel frames for one's own processes");
}

Test(unprivileged, paranoid_2_user_frames_and_one_reason_per_collector, .fini = restore, .timeout = 120)
{
	require_nobody();
	set_paranoid(2);
	const char *data = test_path("p2.data");
	char args[1024], *out;
	snprintf(args, sizeof(args), "record -o %s -- " W "cpu_burner", data);
	int st = as_nobody(&out, args);
	cr_assert_eq(st, 0, "record as nobody at paranoid 2 exited %d: %s", st, out);
	/* one closing line: the collectors by name and one pointer, not their reasons */
	cr_assert_eq(count_lines(out), 2, "workload line + closing line expected: %s", out);
	const char *closing = strstr(out, "sigprof: recorded");
	cr_assert(closing, "%s", out);
	cr_assert(strstr(closing, "unavailable: ") && strstr(closing, "signal") && strstr(closing, "(why: sigprof list)"),
		  "%s", closing);
	cr_assert_null(strstr(closing, "permission"), "the closing line repeats reasons: %s", closing);
	free(out);
	const char *json = report_json_file(data, "");
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples"), 0);
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"kernel frames excluded\"))] | length"), 1);
	/* the signal collector's reason says what to do */
	cr_assert_eq(jq_file(json, "[.meta.collectors[] | select(.name==\"signal\" and .status==\"unavailable\" and "
				   "(.reason | test(\"run as root\")))] | length"),
		     1, "the signal collector's reason does not say what to do");
	/* sigprof list says the same, once per collector */
	st = as_nobody(&out, "list");
	cr_assert_eq(st, 0);
	const char *line = strstr(out, "  signal   unavailable");
	cr_assert(line && strstr(line, "run as root"), "list: %s", out);
	cr_assert_null(strstr(line + 1, "  signal   "), "signal listed twice");
	free(out);
}

Test(unprivileged, cap_perfmon_gives_kernel_frames, .fini = restore, .timeout = 120)
{
	require_nobody();
	set_paranoid(2);
	char *out;
	if (run_cmd(&out, true, AS_NOBODY "--inh-caps=+perfmon --ambient-caps=+perfmon true") != 0)
		skip_environment("setpriv cannot give nobody CAP_PERFMON here: %s", out);
	free(out);
	const char *data = test_path("cap.data");
	int st = run_cmd(&out, true, AS_NOBODY "--inh-caps=+perfmon --ambient-caps=+perfmon %s record -e cpu -o %s -- "
				     W "cpu_burner", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"kernel frames excluded\"))] | length"), 0,
		     "CAP_PERFMON allows kernel frames whatever the paranoid level");
}

Test(unprivileged, another_users_process_is_refused_in_one_line, .fini = restore, .timeout = 60)
{
	require_nobody();
	set_paranoid(1);
	char *out;
	char args[512];
	snprintf(args, sizeof(args), "record -e cpu -p 1 -o %s", test_path("other.data"));
	int st = as_nobody(&out, args);
	cr_assert_eq(st, 2, "attaching to init as nobody exited %d: %s", st, out);
	/* the cause is the owner, not the paranoid setting (which is 1 here: one's own processes) */
	cr_assert(count_lines(out) == 1 && strstr(out, "-p 1: process 1 is not yours (it runs as root, uid 0") &&
			  strstr(out, "attaching needs ptrace access to it"),
		  "%s", out);
	cr_assert_null(strstr(out, "perf_event_paranoid=1"), "advises the setting in force: %s", out);
	free(out);
	st = as_nobody(&out, "stat -t 1 -o /dev/null");
	cr_assert_eq(st, 2, "%s", out);
	cr_assert(count_lines(out) == 1 && strstr(out, "stat: -t 1: process 1 is not yours"), "%s", out);
	free(out);
	st = run_cmd(&out, true, "test -e %s", test_path("other.data"));
	cr_assert_neq(st, 0, "a refused recording left a file");
	free(out);
}

/*
 * The advice for tracefs works: once the mount lets nobody's group read
 * it, the futex collector (syscalls tracepoints, which any user may open
 * on their own tasks) records nobody's workload; signal still needs
 * paranoid -1 or CAP_PERFMON, and says so.
 */
Test(unprivileged, tracefs_readable_by_group_opens_syscall_tracepoints, .fini = restore, .timeout = 120)
{
	require_nobody();
	char root[256] = "", opts[512] = "";
	FILE *m = fopen("/proc/self/mounts", "r");
	char dev[256], dir[256], type[64], o[512];
	while (m && fscanf(m, "%255s %255s %63s %511s %*d %*d", dev, dir, type, o) == 4)
		if (strcmp(type, "tracefs") == 0 && !root[0]) {
			snprintf(root, sizeof(root), "%s", dir);
			snprintf(opts, sizeof(opts), "%s", o);
		}
	if (m)
		fclose(m);
	if (!root[0])
		skip_environment("tracefs is not mounted");
	/* what to put back: its mode and gid as mounted (tracefs's defaults 700 and 0 when not shown) */
	const char *mode = strstr(opts, "mode="), *gid = strstr(opts, "gid=");
	snprintf(saved_tracefs_opts, sizeof(saved_tracefs_opts), "mode=%.*s,gid=%.*s",
		 mode ? (int)strcspn(mode + 5, ",") : 3, mode ? mode + 5 : "700",
		 gid ? (int)strcspn(gid + 4, ",") : 1, gid ? gid + 4 : "0");
	snprintf(saved_tracefs, sizeof(saved_tracefs), "%s", root);
	char *out;
	int st = run_cmd(&out, true, "mount -o remount,mode=755,gid=nogroup %s", root);
	if (st != 0) {
		saved_tracefs[0] = '\0';
		skip_environment("cannot remount tracefs: %s", out);
	}
	free(out);
	set_paranoid(1);
	const char *data = test_path("tracefs.data");
	char args[1024];
	snprintf(args, sizeof(args), "record -e futex,signal -o %s -- " W "futex_waiter", data);
	st = as_nobody(&out, args);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	const char *json = report_json_file(data, "");
	require_collector(json, "futex");
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"futex\") | .samples"), 0);
	cr_assert_eq(jq_file(json, "[.meta.collectors[] | select(.name==\"signal\" and .status==\"unavailable\" and "
				   "(.reason | test(\"perf_event_paranoid=-1\")))] | length"),
		     1, "the signal collector does not name paranoid -1 or CAP_PERFMON");
}
