/*
 * test_safety.c: sigprof run as root where other users can write, on a full
 * disk, killed, and fed endless or corrupt inputs (docs/security.md, issue
 * 16).  The attacks that need another user run one: a helper user created
 * for the test and removed after it.  A sysctl or mount a test changes is
 * put back in its .fini.  What cannot run here is skipped with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"
#include "sigprof/kernel/format.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- a helper user, for the attacks another user makes ---- */

static char helper[32];

static void helper_create(void)
{
	snprintf(helper, sizeof(helper), "sp-test-%d", (int)getpid());
	if (run_cmd(NULL, true, "useradd -M -N -r -s /usr/sbin/nologin %s", helper) != 0) {
		helper[0] = '\0';
		return;
	}
}

/* userdel refuses a user with a running process: a racing helper may still be on its way out. */
static void helper_remove(void)
{
	if (!helper[0])
		return;
	int st = -1;
	for (int attempt = 0; attempt < 50 && st != 0; attempt++) {
		if (attempt)
			usleep(100 * 1000);
		run_cmd(NULL, true, "pkill -KILL -u %s", helper);
		st = run_cmd(NULL, true, "userdel %s", helper);
	}
	if (st != 0)
		fprintf(stderr, "could not remove the helper user %s\n", helper);
	helper[0] = '\0';
}

static void require_helper(void)
{
	require_root();
	if (!helper[0])
		skip_environment("cannot create a helper user (useradd failed): the attack needs another user");
}

/* Run a shell command as the helper user; its exit status. */
static int as_helper(const char *fmt, const char *a, const char *b)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return run_cmd(NULL, true, "setpriv --reuid=%s --regid=nogroup --clear-groups sh -c \"%s\"", helper, cmd);
}

/* A directory like /tmp (world-writable, sticky) under the test directory, which others may now enter. */
static const char *shared_dir(const char *name)
{
	cr_assert_eq(chmod(test_dir(), 0711), 0);
	const char *dir = test_path(name);
	mkdir(dir, 0777);
	cr_assert_eq(chmod(dir, 01777), 0, "chmod %s: %s", dir, strerror(errno));
	return dir;
}

/* fs.protected_symlinks as found, restored by the .fini; -1 when not changed. */
static int saved_protected_symlinks = -1;

/* The attacks below are those of a machine with fs.protected_symlinks=0: make it so for the test. */
static void unprotect_symlinks(void)
{
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "r");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	if (v > 0 && run_cmd(NULL, true, "sysctl -qw fs.protected_symlinks=0") == 0)
		saved_protected_symlinks = v;
}

static void restore_protected_symlinks(void)
{
	if (saved_protected_symlinks >= 0) {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "sysctl -qw fs.protected_symlinks=%d", saved_protected_symlinks);
		if (run_cmd(NULL, true, "%s", cmd) != 0)
			fprintf(stderr, "could not restore fs.protected_symlinks=%d\n", saved_protected_symlinks);
		saved_protected_symlinks = -1;
	}
}

static void attack_init(void)
{
	helper_create();
	unprotect_symlinks();
}

static void attack_fini(void)
{
	restore_protected_symlinks();
	helper_remove();
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f, "fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static char *read_text(const char *path)
{
	char *out;
	run_cmd(&out, false, "cat '%s'", path);
	return out;
}

/* The entries of dir, one per line, sorted (dot files too). */
static char *listing(const char *dir)
{
	char *out;
	run_cmd(&out, false, "ls -A '%s' | sort", dir);
	return out;
}

/* ---- 1. the output path ---- */

Test(safety, a_dangling_symlink_at_the_output_is_refused, .init = attack_init, .fini = attack_fini)
{
	require_helper();
	const char *dir = shared_dir("shared1");
	const char *victim = test_path("victim-new-file");
	cr_assert_eq(as_helper("ln -s %s %s/sigprof.data", victim, dir), 0, "the helper cannot make its link");
	char *out;
	char bin[4096];
	cr_assert(realpath(sigprof_bin(), bin));
	int st = run_cmd(&out, true, "cd %s && %s record -q -e cpu -- true", dir, bin);
	cr_assert_eq(st, 2, "record through a link exited %d: %s", st, out);
	cr_assert(strstr(out, "it is a symbolic link"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "not one error line: %s", out);
	cr_assert_not(exists(victim), "root created the link's target %s", victim);
	free(out);
	/* nothing of ours is left in the directory: the link, and no temporary file */
	char *ls = listing(dir);
	cr_assert_str_eq(ls, "sigprof.data\n");
	free(ls);
}

Test(safety, a_symlink_to_a_root_file_leaves_it_as_it_was, .init = attack_init, .fini = attack_fini)
{
	require_helper();
	const char *dir = shared_dir("shared2");
	const char *victim = test_path("victim-existing");
	write_text(victim, "root's file\n");
	cr_assert_eq(as_helper("ln -s %s %s/p.data", victim, dir), 0);
	char out_path[512];
	snprintf(out_path, sizeof(out_path), "%s/p.data", dir);
	int st = run_cmd(NULL, true, "%s record -q -e cpu -o %s -- true", sigprof_bin(), out_path);
	cr_assert_eq(st, 2);
	char *text = read_text(victim);
	cr_assert_str_eq(text, "root's file\n");
	free(text);
}

/* stat -o follows a link only when root or the caller owns it: not one the helper planted. */
Test(safety, stat_output_through_another_users_link_is_refused, .init = attack_init, .fini = attack_fini)
{
	require_helper();
	const char *dir = shared_dir("shared-stat");
	const char *victim = test_path("victim-stat");
	write_text(victim, "root's file\n");
	cr_assert_eq(as_helper("ln -s %s %s/counts.txt", victim, dir), 0);
	char *out;
	int st = run_cmd(&out, true, "%s stat -e cpu-clock -o %s/counts.txt -- true", sigprof_bin(), dir);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert_not_null(strstr(out, "symbolic link another user owns"), "%s", out);
	free(out);
	char *text = read_text(victim);
	cr_assert_str_eq(text, "root's file\n");
	free(text);
	/* root's own link (as /dev/stderr is) is followed */
	st = run_cmd(&out, true, "%s stat -e cpu-clock -o /dev/stderr -- true", sigprof_bin());
	cr_assert_eq(st, 0, "%s", out);
	free(out);
}

/*
 * A file the helper made in advance at the output's name, in a directory
 * like /tmp: stat, which writes as it goes, refuses it (its owner could
 * hold it open and change the figures after); record replaces it by
 * rename (it becomes .old, untouched) with a file of root's own.
 */
Test(safety, an_output_another_user_made_in_advance, .init = attack_init, .fini = attack_fini)
{
	require_perf_events();
	require_helper();
	const char *dir = shared_dir("shared-precreated");
	cr_assert_eq(as_helper("echo theirs > %s/counts.txt; echo theirs > %s/p.data", dir, dir), 0);
	char *out;
	int st = run_cmd(&out, true, "%s stat -e cpu-clock -o %s/counts.txt -- true", sigprof_bin(), dir);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert(strstr(out, "is another user's file in a directory that is not theirs: not written"), "%s", out);
	free(out);
	char path[700];
	snprintf(path, sizeof(path), "%s/counts.txt", dir);
	char *text = read_text(path);
	cr_assert_str_eq(text, "theirs\n", "their file is left as it was");
	free(text);
	snprintf(path, sizeof(path), "%s/p.data", dir);
	free(record_workload(path, "-e cpu", "true"));
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(sb.st_uid, 0, "the recording is root's own file");
	cr_assert_eq(sb.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/p.data.old", dir);
	text = read_text(path);
	cr_assert_str_eq(text, "theirs\n", "theirs became p.data.old, untouched");
	free(text);
}

/*
 * The race the issue describes: the helper swaps p.data between a file of
 * its own and a link to root's file as fast as it can while root records
 * again and again.  Root's file must never be written, and whatever root
 * records lands in a file root created.
 */
Test(safety, a_link_swapped_in_a_loop_never_makes_root_write_through_it, .init = attack_init, .fini = attack_fini)
{
	require_perf_events();
	require_helper();
	const char *dir = shared_dir("shared3");
	const char *victim = test_path("victim-raced");
	write_text(victim, "root's file\n");
	char swapper[1024];
	snprintf(swapper, sizeof(swapper),
		 "setpriv --reuid=%s --regid=nogroup --clear-groups sh -c "
		 "'cd %s; while :; do ln -sfn %s p.data; rm -f p.data; echo x > p.data; rm -f p.data; done' "
		 ">/dev/null 2>&1 & echo $!",
		 helper, dir, victim);
	char *pid_text;
	run_cmd(&pid_text, false, "%s", swapper);
	pid_t swapper_pid = (pid_t)atoi(pid_text);
	free(pid_text);
	cr_assert_gt(swapper_pid, 0);
	int recorded = 0, refused = 0;
	for (int i = 0; i < 20; i++) {
		char *out;
		int st = run_cmd(&out, true, "%s record -q -e cpu --no-kallsyms -o %s/p.data -- true", sigprof_bin(), dir);
		recorded += st == 0;
		refused += st == 2;
		cr_assert(st == 0 || st == 2, "record exited %d: %s", st, out);
		free(out);
	}
	run_cmd(NULL, true, "pkill -KILL -P %d; kill -KILL %d", (int)swapper_pid, (int)swapper_pid);
	char *text = read_text(victim);
	cr_assert_str_eq(text, "root's file\n", "root's file was written through the link");
	free(text);
	cr_log_info("20 runs against the swapping link: %d recorded, %d refused", recorded, refused);
}

Test(safety, a_device_a_fifo_and_a_directory_are_refused)
{
	require_root();
	const char *dev = test_path("mynull");
	cr_assert_eq(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0, "mknod: %s", strerror(errno));
	const char *fifo = test_path("fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	const char *targets[][2] = { { dev, "a character device" }, { fifo, "a FIFO" }, { test_dir(), "a directory" } };
	for (size_t i = 0; i < 3; i++) {
		char *out;
		time_t start = time(NULL);
		/* 7: a FIFO without a reader must not hang record, with or without a signal */
		int st = run_cmd(&out, true, "timeout -s KILL 20 %s record -e cpu -o %s -- true", sigprof_bin(),
				 targets[i][0]);
		cr_assert_eq(st, 2, "record -o %s exited %d: %s", targets[i][1], st, out);
		cr_assert(strstr(out, targets[i][1]), "%s", out);
		cr_assert_eq(count_lines(out), 1, "%s", out);
		cr_assert_lt(time(NULL) - start, 10);
		free(out);
		/* archive -o: the same, said the same way */
		st = run_cmd(&out, true, "timeout -s KILL 20 %s archive -o %s /nonexistent.data", sigprof_bin(),
			     targets[i][0]);
		cr_assert_eq(st, 2, "archive -o %s exited %d: %s", targets[i][1], st, out);
		cr_assert_eq(count_lines(out), 1, "%s", out);
		free(out);
	}
	/* stat -o a FIFO nobody reads: one line at once, not an open blocked for ever */
	char *out;
	int st_fifo = run_cmd(&out, true, "timeout -s KILL 20 %s stat -e task-clock -o %s -- true", sigprof_bin(), fifo);
	cr_assert_eq(st_fifo, 2, "stat -o a FIFO without a reader exited %d: %s", st_fifo, out);
	cr_assert(strstr(out, "FIFO that no process reads") && count_lines(out) == 1, "%s", out);
	free(out);
	/* an empty name, and an empty --event list (which read as "every event") */
	static const char *const empty[] = { "record -q -o '' -- true", "stat -o '' -- true",
					      "archive -o '' /nonexistent.data", "script --event '' -i /nonexistent.data" };
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		int st = run_cmd(&out, true, "%s %s", sigprof_bin(), empty[i]);
		cr_assert_eq(st, 2, "%s exited %d: %s", empty[i], st, out);
		cr_assert(count_lines(out) == 1 && (strstr(out, "an empty file name") || strstr(out, "no event or collector")),
			  "%s: %s", empty[i], out);
		free(out);
	}
	struct stat st;
	cr_assert_eq(stat(dev, &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
}

/* ---- 2. a failed run removes only what it created ---- */

Test(safety, a_failed_run_leaves_a_device_node_and_a_previous_recording)
{
	require_perf_events();
	require_root();
	const char *dir = test_path("failing");
	cr_assert_eq(mkdir(dir, 0700), 0);
	char script[512], dev[512], data[512];
	snprintf(script, sizeof(script), "%s/missing-interpreter", dir);
	write_text(script, "#!/nonexistent/interpreter\n");
	chmod(script, 0755);
	snprintf(dev, sizeof(dev), "%s/mynull", dir);
	cr_assert_eq(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0);
	int st = run_cmd(NULL, true, "%s record -o %s -- %s", sigprof_bin(), dev, script);
	cr_assert_neq(st, 0);
	struct stat sb;
	cr_assert_eq(lstat(dev, &sb), 0, "the device node was removed");
	cr_assert(S_ISCHR(sb.st_mode));
	/* a previous recording: put back as it was, no .old, no temporary file */
	snprintf(data, sizeof(data), "%s/p.data", dir);
	write_text(data, "previous\n");
	char *out;
	st = run_cmd(&out, true, "%s record -e cpu -o %s -- %s", sigprof_bin(), data, script);
	cr_assert_eq(st, 127, "exit %d: %s", st, out);
	free(out);
	char *text = read_text(data);
	cr_assert_str_eq(text, "previous\n");
	free(text);
	char *ls = listing(dir);
	cr_assert_str_eq(ls, "missing-interpreter\nmynull\np.data\n");
	free(ls);
}

/* ---- 3. a full disk keeps the previous recording ---- */

static char tmpfs_dir[512];

static void tmpfs_fini(void)
{
	if (tmpfs_dir[0] && umount2(tmpfs_dir, MNT_DETACH) != 0)
		fprintf(stderr, "could not unmount %s: %s\n", tmpfs_dir, strerror(errno));
	tmpfs_dir[0] = '\0';
}

Test(safety, a_full_disk_keeps_the_previous_recording, .fini = tmpfs_fini)
{
	require_perf_events();
	require_root();
	const char *dir = test_path("small-fs");
	cr_assert_eq(mkdir(dir, 0700), 0);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=16m") != 0)
		skip_environment("cannot mount a tmpfs here (%s): the full-disk case needs one", strerror(errno));
	snprintf(tmpfs_dir, sizeof(tmpfs_dir), "%s", dir);
	char data[600], copy[600];
	snprintf(data, sizeof(data), "%s/p.data", dir);
	snprintf(copy, sizeof(copy), "%s", test_path("p.data.copy"));
	record_workload(data, "-e cpu,signal", W "signal_storm 1000 2>/dev/null");
	cr_assert_eq(run_cmd(NULL, true, "cp %s %s", data, copy), 0);
	/* not a byte free: nothing is published, the previous recording stays as it was */
	run_cmd(NULL, true, "dd if=/dev/zero of=%s/filler bs=64k", dir);
	char *out;
	int st = run_cmd(&out, true, "%s record -q -e cpu,signal -o %s -- " W "signal_storm 1000", sigprof_bin(), data);
	cr_assert_eq(st, 2, "record on a full disk exited %d: %s", st, out);
	cr_assert(strstr(out, "No space left on device"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
	cr_assert_eq(run_cmd(NULL, true, "cmp %s %s", data, copy), 0, "the previous recording changed");
	/* the report's files say why too (not stdio's "Input/output error"), and leave nothing behind */
	st = run_cmd(&out, true, "%s report -i %s --html %s/p.html", sigprof_bin(), copy, dir);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert(strstr(out, "writing it failed: No space left on device"), "%s", out);
	free(out);
	char *ls = listing(dir);
	cr_assert_str_eq(ls, "filler\np.data\n");
	free(ls);
	/*
	 * room for the run's description but not for the run: the new file was published when the workload
	 * started, the previous one went to .old untouched; the new one reports what it holds, cut short
	 */
	cr_assert_eq(run_cmd(NULL, true, "truncate -s -128K %s/filler", dir), 0);
	st = run_cmd(&out, true, "%s record -q -e cpu,signal -o %s -- " W "signal_storm 200000", sigprof_bin(), data);
	cr_assert_eq(st, 2, "record on a disk that fills exited %d: %s", st, out);
	cr_assert(strstr(out, "No space left on device") && strstr(out, "holds what was written before"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
	cr_assert_eq(run_cmd(NULL, true, "cmp %s.old %s", data, copy), 0, "the previous recording changed");
	ls = listing(dir);
	cr_assert_str_eq(ls, "filler\np.data\np.data.old\n");
	free(ls);
	unlink(test_path("small-fs/filler")); /* room for the report's JSON */
	cr_assert_eq(json_number(data, ".meta.truncated | if . then 1 else 0 end"), 1);
	cr_assert_gt(json_number(data, ".meta.samples"), 0);
}

/* ---- 4. the workload dies with the recorder ---- */

/* The one child of pid, once it runs comm; 0 if none within 10 s. */
static pid_t child_running(pid_t pid, const char *comm)
{
	for (int i = 0; i < 1000; i++) {
		char *out;
		run_cmd(&out, false, "for c in $(cat /proc/%d/task/*/children 2>/dev/null); do "
				     "[ \"$(cat /proc/$c/comm 2>/dev/null)\" = %s ] && echo $c; done", (int)pid, comm);
		pid_t child = (pid_t)atoi(out);
		free(out);
		if (child > 0)
			return child;
		usleep(10000);
	}
	return 0;
}

/* Whether pid is gone (or a zombie waiting for init to reap it) within 5 s. */
static bool dies(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		char path[64], state = '?';
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (!f)
			return true;
		int got = fscanf(f, "%*d (%*[^)]) %c", &state);
		fclose(f);
		if (got == 1 && (state == 'Z' || state == 'X'))
			return true;
		usleep(10000);
	}
	return false;
}

static void kill_recorder_and_check(const char *workload, const char *comm, const char *data)
{
	pid_t rec = fork();
	cr_assert_geq(rec, 0);
	if (rec == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl("/bin/sh", "sh", "-c", "exec \"$0\" record -q -e cpu -o \"$1\" -- $2", sigprof_bin(), data, workload,
		      (char *)NULL);
		_exit(127);
	}
	pid_t child = child_running(rec, comm);
	if (!child) {
		kill(rec, SIGKILL);
		waitpid(rec, NULL, 0);
		cr_assert_fail("the workload %s never started under sigprof record", comm);
	}
	usleep(300000); /* let it record a little */
	kill(rec, SIGKILL);
	waitpid(rec, NULL, 0);
	bool gone = dies(child);
	if (!gone)
		kill(child, SIGKILL);
	cr_assert(gone, "the workload %s (pid %d) outlived the SIGKILLed recorder", comm, (int)child);
	/* what was recorded is under the final name and readable, cut short */
	char *out;
	int st = run_cmd(&out, true, "%s report -i %s -n 1", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, "cut short"), "%s", out);
	free(out);
}

Test(safety, a_sleeping_workload_dies_with_the_killed_recorder)
{
	require_perf_events();
	kill_recorder_and_check("sleep 60", "sleep", test_path("killed-sleep.data"));
}

Test(safety, a_spinning_workload_dies_with_the_killed_recorder)
{
	require_perf_events();
	kill_recorder_and_check(W "cpu_burner 60000", "cpu_burner", test_path("killed-spin.data"));
}

/* ---- pipe mode ---- */

Test(safety, record_to_a_pipe_and_report_from_one)
{
	require_perf_events();
	require_root();
	char *out;
	int st = run_cmd(&out, false,
			 "%s record -q -e signal -o - -- " W "signal_storm 1000 2>%s | %s report --json -i - "
			 "| jq -r '.signals[] | select(.name==\"SIGUSR1\") | .delivered'",
			 sigprof_bin(), test_path("pipe-stderr"), SIGPROF_ASAN_BIN);
	cr_assert_eq(st, 0);
	cr_assert_str_eq(out, "1000\n", "signals delivered through the pipe: %s", out);
	free(out);
	/* the workload's stdout went to stderr, not into the recording */
	char *err = read_text(test_path("pipe-stderr"));
	cr_assert(strstr(err, "handled 1000"), "workload output: %s", err);
	free(err);
	/* a terminal is no place for a recording */
	st = run_cmd(&out, true, "script -qec '%s record -e cpu -o - -- true' /dev/null", sigprof_bin());
	cr_assert(strstr(out, "stdout is a terminal"), "%s", out);
	free(out);
}

/* ---- 5. endless inputs ---- */

Test(safety, endless_inputs_are_one_error_line)
{
	require_perf_events();
	const char *data = test_path("inputs.data");
	record_workload(data, "-e cpu --no-kallsyms", "true");
	const char *cases[][2] = {
		{ "--kallsyms /dev/zero", "larger than" },
		{ "--path-rules /dev/zero", "larger than" },
		{ "--kallsyms /etc/hostname", "not a kallsyms file" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *out;
		time_t start = time(NULL);
		int st = run_cmd(&out, true, "timeout -s KILL 60 %s report -i %s %s", SIGPROF_ASAN_BIN, data, cases[i][0]);
		cr_assert_eq(st, 2, "report %s exited %d: %s", cases[i][0], st, out);
		cr_assert(strstr(out, cases[i][1]), "report %s: %s", cases[i][0], out);
		cr_assert_eq(count_lines(out), 1, "report %s: %s", cases[i][0], out);
		cr_assert_lt(time(NULL) - start, 30);
		free(out);
	}
	char *out;
	int st = run_cmd(&out, true, "timeout -s KILL 60 %s report -i /dev/zero", SIGPROF_ASAN_BIN);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
}

/* ---- 6. a corrupt kallsyms copy ---- */

/* Offsets of the recording's KALLSYMS records; and of its META boot_id value. */
static size_t find_records(const unsigned char *d, size_t n, size_t *kallsyms, size_t max, size_t *boot_id)
{
	size_t count = 0;
	*boot_id = 0;
	for (size_t off = sizeof(struct sp_file_header); off + 8 <= n;) {
		const struct perf_event_header *h = (const void *)(d + off);
		if (h->size < 8 || off + h->size > n)
			break;
		if (h->type == SP_REC_KALLSYMS && count < max)
			kallsyms[count++] = off;
		const unsigned char *key = memmem(d + off, h->size, "boot_id", 8);
		if (h->type == SP_REC_META && key)
			*boot_id = (size_t)(key - d) + 8;
		off += h->size;
	}
	return count;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	unsigned char *d = malloc(*n);
	cr_assert_eq(fread(d, 1, *n, f), *n);
	fclose(f);
	return d;
}

static void spit(const char *path, const unsigned char *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(d, 1, n, f), n);
	fclose(f);
}

/* Kernel frames named (a symbol) and unnamed (an address) on the signal stacks of a report. */
static void kernel_frames(const char *data, double *named, double *unnamed)
{
	const char *json = report_json_file(data, "");
	*named = jq_file(json, "[.stacks[].frames[] | select(.dso==\"[kernel]\" and .offset == null)] | length");
	*unnamed = jq_file(json, "[.stacks[].frames[] | select(.dso==\"[kernel]\" and .offset != null)] | length");
}

Test(safety, a_corrupt_kallsyms_copy_is_a_note_and_another_boots_table_is_not_used)
{
	require_perf_events();
	require_root();
	const char *data = test_path("ksyms.data");
	/* uncompressed (version 1): the test rewrites bytes of the KALLSYMS records in place */
	record_workload(data, "-e signal --no-compress", W "signal_storm 2000 2>/dev/null");
	size_t n, offs[4096], boot;
	unsigned char *d = slurp(data, &n);
	size_t nk = find_records(d, n, offs, ARRAY_SIZE(offs), &boot);
	cr_assert_gt(nk, 0, "the recording holds no kallsyms copy");
	cr_assert_gt(boot, 0, "the recording holds no boot_id");
	double named, unnamed;
	kernel_frames(data, &named, &unnamed);
	cr_assert_gt(named, 0, "no kernel frame is named in the intact recording");

	/*
	 * the compressed text overwritten (0xff: literal runs longer than the text, so the block cannot
	 * decompress; bytes in a literal run would only change the text): a note; this boot's table names the frames
	 */
	unsigned char *c = malloc(n);
	memcpy(c, d, n);
	const struct sp_kallsyms_record *k = (const void *)(d + offs[0]);
	memset(c + offs[0] + sizeof(*k), 0xff, k->chunk_size);
	const char *corrupt = test_path("ksyms-corrupt.data");
	spit(corrupt, c, n);
	const char *json = report_json_file(corrupt, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"copy of the kernel symbols .* is corrupt\"))] | length"),
		     1);
	kernel_frames(corrupt, &named, &unnamed);
	cr_assert_gt(named, 0, "same boot: the host's table should name the frames");

	/* the same from another boot: kernel frames stay addresses, and the report says why */
	memcpy(c + boot, "00000000", 8);
	const char *other = test_path("ksyms-corrupt-other-boot.data");
	spit(other, c, n);
	json = report_json_file(other, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"shown as addresses\"))] | length"), 2);
	kernel_frames(other, &named, &unnamed);
	cr_assert_eq(named, 0, "another boot's kernel frames were named from this machine's table");
	cr_assert_gt(unnamed, 0);

	/* the last-record flag cleared: the copy ends early, a note too */
	memcpy(c, d, n);
	struct sp_kallsyms_record *last = (void *)(c + offs[nk - 1]);
	last->flags = 0;
	const char *cut = test_path("ksyms-no-last.data");
	spit(cut, c, n);
	json = report_json_file(cut, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"ends before its last block\"))] | length"), 1);
	free(c);
	free(d);
}

/*
 * A compressed recording keeps its copy of the kernel symbols in a trailer
 * (zstd chunks with checksums, format.h): one damaged byte there, or a file
 * cut before it, is said as such, not as a recording made without a copy.
 */
Test(safety, a_damaged_or_missing_trailer_says_which)
{
	require_perf_events();
	require_root();
	const char *data = test_path("trailer.data");
	record_workload(data, "-e signal", W "signal_storm 2000 2>/dev/null");
	size_t n;
	unsigned char *d = slurp(data, &n);
	struct sp_file_trailer t;
	cr_assert_gt(n, sizeof(t));
	memcpy(&t, d + n - sizeof(t), sizeof(t));
	cr_assert_eq(t.magic, SP_TRAILER_MAGIC, "the recording has no trailer");
	cr_assert_gt(t.size, 64);
	double named, unnamed;
	kernel_frames(data, &named, &unnamed);
	cr_assert_gt(named, 0, "no kernel frame is named in the intact recording");
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"kernel symbols\"))] | length"), 0);

	d[t.offset + t.size / 2] ^= 0xff; /* inside the chunk's compressed data */
	const char *damaged = test_path("trailer-damaged.data");
	spit(damaged, d, n);
	json = report_json_file(damaged, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"copy of the kernel symbols .* is damaged\"))] | "
				   "length"), 1);
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"no-kallsyms\"))] | length"), 0);
	kernel_frames(damaged, &named, &unnamed);
	cr_assert_gt(named, 0, "same boot: the host's table should name the frames");
	d[t.offset + t.size / 2] ^= 0xff; /* whole again: the cuts below are of the intact file */

	char cut[512]; /* test_path() keeps only its last four results */
	snprintf(cut, sizeof(cut), "%s", test_path("trailer-cut.data"));
	spit(cut, d, (size_t)t.offset - 100); /* cut in the body: no FINISH, no trailer */
	json = report_json_file(cut, "");
	cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"cut short before or inside its copy of the kernel "
				   "symbols\"))] | length"), 1);
	/* one byte short: the report warns that the file was cut short, not that it is corrupt */
	spit(cut, d, n - 1);
	char *warning;
	run_cmd(&warning, false, "%s report -i '%s' 2>&1 >/dev/null", sigprof_bin(), cut);
	cr_assert(strstr(warning, "cut short") && !strstr(warning, "corrupt"), "one byte short: %s", warning);
	free(warning);
	/* cut in the trailer or its footer, after FINISH: where a killed recorder or a full disk leaves it */
	static const size_t short_by[] = { 1, 24, 25, 40 };
	for (size_t i = 0; i < sizeof(short_by) / sizeof(short_by[0]); i++) {
		spit(cut, d, n - short_by[i]);
		json = report_json_file(cut, "");
		cr_assert_eq(jq_file(json, "[.meta.notes[] | select(test(\"cut short before or inside its copy\"))] | "
					   "length"), 1, "%zu bytes short", short_by[i]);
	}
	free(d);
}

/* ---- 9. options ---- */

Test(safety, frequency_and_period_together_are_refused)
{
	char *out;
	int st = run_cmd(&out, true, "%s record -F 100 -c 1000 -- true", sigprof_bin());
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "-F and -c"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	free(out);
}
