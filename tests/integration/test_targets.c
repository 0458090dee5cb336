/*
 * test_targets.c: record and stat attached to what already runs (-p, -t,
 * -a, -C, -G), against ground truth.  Two sig_attach processes wait for a
 * trigger file; sigprof attaches to one (or to the machine, or to a
 * cgroup holding one), then both are triggered: each sends itself N
 * SIGUSR1 from its main thread and, from a thread created after the
 * attach, M SIGUSR2.  The report must count the attached process's N and
 * M exactly (the new thread followed) and none of the other's, unless -a.
 * Needs root (tracepoints); skipped, not passed, without.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* Run argv (through sh -c) in the background, stdout and stderr to log (or /dev/null); its pid. */
static pid_t spawn(const char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static pid_t spawn(const char *log, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* sig_attach waiting for trigger, exec'd (its pid is the process's, not a shell's); its child sends c SIGWINCH. */
static pid_t spawn_sig_attach_child(const char *trigger, long n, long m, long c)
{
	return spawn(NULL, "exec " W "sig_attach %s %ld %ld %ld", trigger, n, m, c);
}

static pid_t spawn_sig_attach(const char *trigger, long n, long m)
{
	return spawn_sig_attach_child(trigger, n, m, 0);
}

/* Wait for pid's exit within seconds; its exit code (128+N when killed); -1 on timeout (then it is killed). */
static int wait_exit(pid_t pid, int seconds)
{
	int status;
	for (int i = 0; i < seconds * 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Wait until file exists and is not empty: sigprof writes it once its events are open. */
static void wait_for_file(const char *file)
{
	struct stat st;
	for (int i = 0; i < 3000; i++) {
		if (stat(file, &st) == 0 && st.st_size > 0)
			return;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	cr_assert_fail("%s did not appear within 30 s", file);
}

static void touch(const char *file)
{
	int fd = open(file, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0, "cannot create %s: %s", file, strerror(errno));
	close(fd);
}

/* A field of one signal's object ("SIGUSR1"); -1 when the signal is absent. */
static double signal_field(const char *json, const char *name, const char *field)
{
	char filter[256];
	snprintf(filter, sizeof(filter), "[.signals[] | select(.name==\"%s\") | %s] | first", name, field);
	return jq_file(json, filter);
}

static void require_signal_collector(const char *json)
{
	require_collector(json, "signal");
}

/* The attached process's signals exactly: N SIGUSR1 from its main thread, M SIGUSR2 from its later thread. */
static void assert_own_signals(const char *json, long n, long m, const char *what)
{
	const char *fields[] = { ".generated", ".delivered", ".sigreturns" };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		double usr1 = signal_field(json, "SIGUSR1", fields[i]), usr2 = signal_field(json, "SIGUSR2", fields[i]);
		cr_assert_eq(usr1, n, "%s: SIGUSR1 %s is %.0f, the attached process sent %ld", what, fields[i], usr1, n);
		cr_assert_eq(usr2, m, "%s: SIGUSR2 %s is %.0f, the thread created after the attach sent %ld", what,
			     fields[i], usr2, m);
	}
}

Test(targets, pid_sees_its_signals_and_new_thread_not_another_process, .timeout = 120)
{
	require_tracing();
	const long na = 500, ma = 300, ca = 70, nb = 700, mb = 100;
	const char *trig_a = test_path("pid-trig-a"), *trig_b = test_path("pid-trig-b");
	char ta[512], tb[512];
	snprintf(ta, sizeof(ta), "%s", trig_a);
	snprintf(tb, sizeof(tb), "%s", trig_b);
	pid_t a = spawn_sig_attach_child(ta, na, ma, ca), b = spawn_sig_attach_child(tb, nb, mb, 40);
	char data[512], log[512];
	snprintf(data, sizeof(data), "%s", test_path("pid.data"));
	snprintf(log, sizeof(log), "%s", test_path("pid.log"));
	/* no command: sigprof stops by itself once every target exited */
	pid_t rec = spawn(log, "exec %s record -q -e signal,cpu,sched -p %d -o %s", sigprof_bin(), (int)a, data);
	wait_for_file(data);
	touch(ta);
	touch(tb);
	cr_assert_eq(wait_exit(a, 60), 0, "sig_attach A failed");
	cr_assert_eq(wait_exit(b, 60), 0, "sig_attach B failed");
	int st = wait_exit(rec, 30);
	cr_assert_eq(st, 0, "record -p did not stop by itself once its target exited (status %d)", st);
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	assert_own_signals(json, na, ma, "record -p");
	/* the child forked after the attach is followed too; B's child is not */
	cr_assert_eq(signal_field(json, "SIGWINCH", ".generated"), ca, "the child of the attached process");
	cr_assert_eq(signal_field(json, "SIGWINCH", ".delivered"), ca);
	cr_assert_eq(jq_file(json, ".meta.truncated | if . then 1 else 0 end"), 0);
	/* the sched collector saw the attached tasks switch (the join, the waits for the child) */
	double switches = jq_file(json, ".meta.collectors[] | select(.name==\"sched\" and .status==\"ok\") | .samples");
	cr_assert(switches != 0, "no sched samples of the attached tasks");
	char want[64];
	snprintf(want, sizeof(want), "-p %d", (int)a);
	char *target;
	run_cmd(&target, false, "jq -r .meta.target %s", json);
	cr_assert(strncmp(target, want, strlen(want)) == 0, "meta.target is %s, want %s", target, want);
	free(target);
	/* the maps synthesized at attach time name the user frames (libc's kill) of the sending stacks */
	cr_assert_gt(signal_field(json, "SIGUSR1", "[.senders[0].frames[] | select(.sym==\"kill\")] | length"), 0,
		     "the sending stack has no named user frame: were the process's maps synthesized? %s",
		     json);
	/* --comm names the attached process; another name keeps nothing */
	json = report_json_file(data, "--comm sig_attach");
	assert_own_signals(json, na, ma, "record -p, --comm sig_attach");
	json = report_json_file(data, "--comm sh");
	cr_assert_eq(jq_file(json, ".signals | length"), 0, "--comm sh kept sig_attach's signals");
	/* the text header says what was attached */
	char *text;
	run_cmd(&text, false, "%s report -i %s", sigprof_bin(), data);
	cr_assert(strstr(text, "# target:     -p "), "no target line in the header:\n%.2000s", text);
	/* no command: no exit status of sigprof's to show, the targets ended the recording */
	cr_assert(strstr(text, "until the targets exited") && !strstr(text, "exit status"), "%.2000s", text);
	free(text);
}

Test(targets, tid_follows_the_threads_it_creates, .timeout = 120)
{
	require_tracing();
	const long n = 400, m = 250;
	char trig[512], data[512];
	snprintf(trig, sizeof(trig), "%s", test_path("tid-trig"));
	snprintf(data, sizeof(data), "%s", test_path("tid.data"));
	pid_t a = spawn_sig_attach(trig, n, m);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL); /* exec'd: its main thread's id is its pid */
	pid_t rec = spawn(NULL, "exec %s record -q -e signal -t %d -o %s", sigprof_bin(), (int)a, data);
	wait_for_file(data);
	touch(trig);
	cr_assert_eq(wait_exit(a, 60), 0);
	cr_assert_eq(wait_exit(rec, 30), 0, "record -t did not stop once its thread exited");
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	assert_own_signals(json, n, m, "record -t");
}

Test(targets, command_is_the_window, .timeout = 120)
{
	require_tracing();
	const long n = 300, m = 200;
	char trig[512], data[512];
	snprintf(trig, sizeof(trig), "%s", test_path("win-trig"));
	snprintf(data, sizeof(data), "%s", test_path("win.data"));
	pid_t a = spawn_sig_attach(trig, n, m);
	/* the window command: waits until the target is done, then exits 3 (sigprof's exit status is its) */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "sh -c 'while kill -0 %d 2>/dev/null; do sleep 0.05; done; exit 3'", (int)a);
	pid_t rec = spawn(NULL, "exec %s record -q -e signal -p %d -o %s -- %s", sigprof_bin(), (int)a, data, cmd);
	wait_for_file(data);
	touch(trig);
	int a_status = wait_exit(a, 60);
	cr_assert_eq(a_status, 0);
	cr_assert_eq(wait_exit(rec, 30), 3, "record's exit status is not the window command's");
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	assert_own_signals(json, n, m, "record -p -- CMD");
	cr_assert_eq(jq_file(json, ".meta.command | length"), 3, "the window command is not in meta.command");
}

/*
 * Attached, sigprof raises its own open-file limit (an fd per event, CPU and
 * thread); the window command it runs gets the limit sigprof was started
 * with, not the raised one.
 */
Test(targets, the_window_command_keeps_the_open_file_limit, .timeout = 60)
{
	require_tracing();
	pid_t target = spawn(NULL, "exec sleep 30");
	char data[512], *out;
	snprintf(data, sizeof(data), "%s", test_path("limit.data"));
	int st = run_cmd(&out, false, "ulimit -Sn 1024 2>/dev/null || exit 77; "
				      "%s record -q -e signal -o %s -p %d -- sh -c 'ulimit -Sn'",
			 sigprof_bin(), data, (int)target);
	kill(target, SIGKILL);
	wait_exit(target, 10);
	if (st == 77) {
		free(out);
		skip_environment("the hard limit of open files is below 1024 here: no lower soft limit to start from");
	}
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_str_eq(out, "1024\n", "the window command's soft limit of open files");
	free(out);
}

Test(targets, all_cpus_sees_every_process_and_filters_split_them, .timeout = 180)
{
	require_tracing();
	const long na = 450, ma = 150, nb = 650, mb = 50;
	char ta[512], tb[512], data[512];
	snprintf(ta, sizeof(ta), "%s", test_path("all-trig-a"));
	snprintf(tb, sizeof(tb), "%s", test_path("all-trig-b"));
	snprintf(data, sizeof(data), "%s", test_path("all.data"));
	pid_t a = spawn_sig_attach(ta, na, ma), b = spawn_sig_attach(tb, nb, mb);
	/* -a without a command: until SIGINT */
	pid_t rec = spawn(NULL, "exec %s record -q -e signal -a -o %s", sigprof_bin(), data);
	wait_for_file(data);
	touch(ta);
	touch(tb);
	cr_assert_eq(wait_exit(a, 60), 0);
	cr_assert_eq(wait_exit(b, 60), 0);
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec, 30), 0, "record -a did not stop cleanly on SIGINT");
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	double usr1 = signal_field(json, "SIGUSR1", ".generated");
	cr_assert_geq(usr1, na + nb, "-a saw %.0f SIGUSR1, the two processes sent %ld", usr1, na + nb);
	char opts[128];
	snprintf(opts, sizeof(opts), "--pid %d", (int)a);
	json = report_json_file(data, opts);
	assert_own_signals(json, na, ma, "-a, --pid A");
	cr_assert_eq(jq_file(json, ".meta.filters.samples_dropped > 0 | if . then 1 else 0 end"), 1);
	snprintf(opts, sizeof(opts), "--pid %d", (int)b);
	json = report_json_file(data, opts);
	assert_own_signals(json, nb, mb, "-a, --pid B");
	/* --tid of A's main thread: its SIGUSR1, not the later thread's SIGUSR2 */
	snprintf(opts, sizeof(opts), "--tid %d", (int)a);
	json = report_json_file(data, opts);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), na);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".generated"), -1, "--tid kept another thread's signals");
	/* --comm and --pid together: both are sig_attach (other tests' may run meanwhile: -a sees them too) */
	snprintf(opts, sizeof(opts), "--comm sig_attach --pid %d,%d", (int)a, (int)b);
	json = report_json_file(data, opts);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), na + nb);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".generated"), ma + mb);
	snprintf(opts, sizeof(opts), "--comm no-such-comm --pid %d", (int)a);
	json = report_json_file(data, opts);
	cr_assert_eq(jq_file(json, ".signals | length"), 0, "--comm kept a process of another name");
	/* the text header names the filters */
	char *text;
	run_cmd(&text, false, "%s report -i %s --comm sig_attach --pid %d", sigprof_bin(), data, (int)a);
	cr_assert(strstr(text, "# filters:    --pid ") && strstr(text, "--comm sig_attach"), "header: %.1500s", text);
	free(text);
}

Test(targets, cpu_list_limits_the_cpus, .timeout = 60)
{
	require_tracing();
	const char *data = test_path("cpu0.data");
	record_workload(data, "-e cpu -a -C 0", "sleep 0.5");
	const char *json = report_json_file(data, "");
	double samples = jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples");
	double seconds = jq_file(json, ".meta.duration_s");
	/* system-wide cpu-clock ticks whether the CPU is busy or idle: 4000 Hz on one CPU, not on two */
	double cpus = samples / (4000 * seconds);
	cr_assert(cpus > 0.6 && cpus < 1.4, "-a -C 0: %.0f cpu samples in %.3f s: %.2f CPUs' worth", samples, seconds, cpus);
	cr_assert_eq(jq_file(json, "[.stacks[] | select(.collector==\"cpu\")] | length > 0 | if . then 1 else 0 end"), 1);
	char *out;
	int st = run_cmd(&out, true, "%s record -q -a -C 9999 -o %s -- true", sigprof_bin(), test_path("bad.data"));
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "-C '9999': CPU 9999 is not online") && count_lines(out) == 1, "%s", out);
	free(out);
}

/* The mount of the hierarchy perf_event uses (the v1 one holding it, else cgroup2), or "". */
static void perf_cgroup_mount(char *root, size_t len)
{
	root[0] = '\0';
	FILE *m = fopen("/proc/self/mounts", "r");
	char dev[256], dir[512], type[64], opts[1024];
	while (m && fscanf(m, "%255s %511s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
		bool v1 = strcmp(type, "cgroup") == 0 && strstr(opts, "perf_event");
		if (strcmp(type, "cgroup2") == 0 || v1)
			snprintf(root, len, "%s", dir);
		if (v1)
			break;
	}
	if (m)
		fclose(m);
}

Test(targets, cgroup_holds_one_process, .timeout = 120)
{
	require_tracing();
	char root[512];
	perf_cgroup_mount(root, sizeof(root));
	char cg[600];
	snprintf(cg, sizeof(cg), "%s/sigprof-test-%d", root, (int)getpid());
	if (!root[0] || mkdir(cg, 0755) < 0)
		skip_environment("no perf_event cgroup hierarchy to make a cgroup in (%s)",
				 root[0] ? strerror(errno) : "not mounted");
	const long na = 350, ma = 120, nb = 550, mb = 80;
	char ta[512], tb[512], data[512], procs[700];
	snprintf(ta, sizeof(ta), "%s", test_path("cg-trig-a"));
	snprintf(tb, sizeof(tb), "%s", test_path("cg-trig-b"));
	snprintf(data, sizeof(data), "%s", test_path("cg.data"));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	pid_t a = spawn(NULL, "echo $$ > %s && exec " W "sig_attach %s %ld %ld", procs, ta, na, ma);
	pid_t b = spawn_sig_attach(tb, nb, mb);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pid_t rec = spawn(NULL, "exec %s record -q -e signal -G %s -o %s", sigprof_bin(), strrchr(cg, '/') + 1, data);
	wait_for_file(data);
	touch(ta);
	touch(tb);
	int sa = wait_exit(a, 60), sb = wait_exit(b, 60);
	kill(rec, SIGINT);
	int sr = wait_exit(rec, 30);
	rmdir(cg);
	cr_assert_eq(sa, 0);
	cr_assert_eq(sb, 0);
	cr_assert_eq(sr, 0, "record -G did not stop on SIGINT");
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	assert_own_signals(json, na, ma, "record -G");
}

/* .meta.followed of a recording: "cgroup /sigprof-PID" or "inherit: WHY". */
static char *followed(const char *json)
{
	char *out;
	cr_assert_eq(run_cmd(&out, false, "jq -r '.meta.followed' '%s'", json), 0);
	out[strcspn(out, "\n")] = '\0';
	return out;
}

/* sig_thread_exit's ground truth (test_signal.c): each of its threads gets one SIGUSR1, then N SIGUSR2 return. */
static void assert_thread_exit_signals(const char *json, long threads, long returns, const char *what)
{
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), threads, "%s: SIGUSR1 delivered", what);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), threads, "%s: SIGUSR1 generated", what);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".delivered"), returns, "%s: SIGUSR2 delivered", what);
	cr_assert_eq(signal_field(json, "SIGUSR2", ".sigreturns"), returns, "%s: SIGUSR2 sigreturns", what);
}

/*
 * record -- CMD moves CMD into a cgroup of its own before its exec
 * (docs/targets.md): the workload sees itself there, its hundred threads
 * are followed with nothing inherited (every signal counted), and the
 * cgroup is gone afterwards.  --inherit follows it the old way, with the
 * same counts.
 */
Test(targets, a_command_runs_in_a_cgroup_of_its_own, .timeout = 120)
{
	require_tracing();
	char root[512];
	perf_cgroup_mount(root, sizeof(root));
	if (!root[0])
		skip_environment("no cgroup file system holds perf_event here");
	const long threads = 100, returns = 50;
	char data[512], seen[512], cmd[1200];
	snprintf(data, sizeof(data), "%s", test_path("own-cgroup.data"));
	snprintf(seen, sizeof(seen), "%s", test_path("own-cgroup.seen"));
	snprintf(cmd, sizeof(cmd), "sh -c 'cat /proc/self/cgroup > %s; exec " W "sig_thread_exit %ld %ld'", seen,
		 threads, returns);
	free(record_workload(data, "-e signal", cmd));
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	char *how = followed(json);
	if (strncmp(how, "inherit: ", 9) == 0)
		skip_environment("record could not make a cgroup here: %s", how + 9);
	cr_assert(strncmp(how, "cgroup /", 8) == 0 && strstr(how, "/sigprof-"), "followed: %s", how);
	char *saw;
	cr_assert_eq(run_cmd(&saw, false, "cat '%s'", seen), 0);
	cr_assert(strstr(saw, how + 7), "the workload ran in %s, its /proc/self/cgroup: %s", how + 7, saw);
	free(saw);
	char dir[1200];
	snprintf(dir, sizeof(dir), "%s%s", root, how + 7);
	struct stat st;
	cr_assert(stat(dir, &st) < 0 && errno == ENOENT, "%s is left after the recording", dir);
	assert_thread_exit_signals(json, threads, returns, "in its own cgroup");
	/* events that outlive a task's exit see cat's exit told to sh, but not the command's own told to sigprof */
	cr_assert_eq(signal_field(json, "SIGCHLD", ".generated"), 1, "SIGCHLD: cat's exit, to sh, once");
	free(how);

	free(record_workload(data, "-e signal --inherit", cmd));
	json = report_json_file(data, "");
	how = followed(json);
	cr_assert_str_eq(how, "inherit: --inherit");
	free(how);
	cr_assert_eq(run_cmd(&saw, false, "cat '%s'", seen), 0);
	cr_assert_null(strstr(saw, "/sigprof-"), "with --inherit the workload stays in sigprof's cgroup: %s", saw);
	free(saw);
	assert_thread_exit_signals(json, threads, returns, "--inherit");
}

/* A child that outlives the command goes back to sigprof's cgroup, and the command's cgroup is removed. */
Test(targets, a_child_that_outlives_the_command_leaves_its_cgroup, .timeout = 60)
{
	require_tracing();
	char data[512], pidfile[512], cmd[1200];
	snprintf(data, sizeof(data), "%s", test_path("outlive.data"));
	snprintf(pidfile, sizeof(pidfile), "%s", test_path("outlive.pid"));
	snprintf(cmd, sizeof(cmd), "sh -c 'sleep 60 </dev/null >/dev/null 2>&1 & echo $! > %s'", pidfile);
	free(record_workload(data, "-e signal", cmd));
	char *out;
	cr_assert_eq(run_cmd(&out, false, "cat '%s'", pidfile), 0);
	pid_t child = (pid_t)atoi(out);
	free(out);
	cr_assert_gt(child, 0);
	char *cgroup;
	int st = run_cmd(&cgroup, false, "cat /proc/%d/cgroup", (int)child);
	kill(child, SIGKILL);
	cr_assert_eq(st, 0, "the child is gone: %s", cgroup);
	char *how = followed(report_json_file(data, ""));
	if (strncmp(how, "inherit: ", 9) == 0)
		skip_environment("record could not make a cgroup here: %s", how + 9);
	cr_assert_null(strstr(cgroup, how + 7), "the child is still in %s: %s", how + 7, cgroup);
	char root[512], dir[1200];
	perf_cgroup_mount(root, sizeof(root));
	snprintf(dir, sizeof(dir), "%s%s", root, how + 7);
	struct stat sb;
	cr_assert(stat(dir, &sb) < 0 && errno == ENOENT, "%s is left after the recording", dir);
	free(how);
	free(cgroup);
}

/* The empty cgroup a recorder killed with SIGKILL left behind is removed by the next recording. */
Test(targets, a_killed_recorders_cgroup_is_removed_by_the_next, .timeout = 60)
{
	require_tracing();
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("stale.data"));
	free(record_workload(data, "-e signal", "true"));
	char *how = followed(report_json_file(data, ""));
	if (strncmp(how, "inherit: ", 9) == 0)
		skip_environment("record could not make a cgroup here: %s", how + 9);
	char root[512], stale[1400];
	perf_cgroup_mount(root, sizeof(root));
	*strrchr(how, '/') = '\0'; /* the directory sigprof makes its cgroups in */
	pid_t gone = fork();
	cr_assert(gone >= 0);
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(stale, sizeof(stale), "%s%s/sigprof-%d", root, how + 7, (int)gone);
	free(how);
	cr_assert_eq(mkdir(stale, 0755), 0, "mkdir %s: %s", stale, strerror(errno));
	free(record_workload(data, "-e signal", "true"));
	struct stat st;
	int left = stat(stale, &st);
	rmdir(stale);
	cr_assert(left < 0, "%s (pid %d exited) is left after the next recording", stale, (int)gone);
}

/* Where no cgroup can be made (a read-only cgroup file system, as in a container), record follows with inherit. */
Test(targets, a_read_only_cgroup_file_system_falls_back_to_inherit, .timeout = 120)
{
	require_tracing();
	char root[512];
	perf_cgroup_mount(root, sizeof(root));
	if (!root[0])
		skip_environment("no cgroup file system holds perf_event here");
	char *out;
	if (run_cmd(&out, true, "unshare -m --propagation private sh -c 'mount -o remount,bind,ro %s'", root) != 0)
		skip_environment("cannot remount %s read-only in a mount namespace of its own: %s", root, out);
	free(out);
	const long threads = 20, returns = 10;
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("ro-cgroup.data"));
	cr_assert_eq(run_cmd(&out, true,
			     "unshare -m --propagation private sh -c 'mount -o remount,bind,ro %s && exec %s record -q "
			     "-e signal -o %s -- " W "sig_thread_exit %ld %ld'",
			     root, sigprof_bin(), data, threads, returns),
		     0, "%s", out);
	free(out);
	const char *json = report_json_file(data, "");
	require_signal_collector(json);
	char *how = followed(json);
	cr_assert(strncmp(how, "inherit: cannot make ", 21) == 0 && strstr(how, "Read-only"), "followed: %s", how);
	free(how);
	assert_thread_exit_signals(json, threads, returns, "inherit on a read-only cgroup file system");
}

Test(targets, dead_pid_is_one_line_and_keeps_the_old_file, .timeout = 60)
{
	require_perf_events();
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	const char *data = test_path("dead.data");
	char keep[512];
	snprintf(keep, sizeof(keep), "%s", data);
	FILE *f = fopen(keep, "w");
	fputs("previous", f);
	fclose(f);
	char *out;
	int st = run_cmd(&out, true, "%s record -q -p %d -o %s", sigprof_bin(), (int)gone, keep);
	cr_assert_eq(st, 2, "record -p of a dead pid exited %d: %s", st, out);
	char want[64];
	snprintf(want, sizeof(want), "-p %d: no such process", (int)gone);
	cr_assert(strstr(out, want) && count_lines(out) == 1, "not one clear line: %s", out);
	free(out);
	char *content;
	run_cmd(&content, false, "cat %s", keep);
	cr_assert_str_eq(content, "previous", "the previous recording was touched");
	free(content);
	st = run_cmd(&out, true, "%s stat -p %d", sigprof_bin(), (int)gone);
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, want) && count_lines(out) == 1, "stat: not one clear line: %s", out);
	free(out);
	st = run_cmd(&out, true, "%s record -q -p 12x -o %s", sigprof_bin(), keep);
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "'12x' is not a process or thread id") && count_lines(out) == 1, "%s", out);
	free(out);
	st = run_cmd(&out, true, "%s record -q -p 1 -a -o %s", sigprof_bin(), keep);
	cr_assert_eq(st, 2);
	cr_assert(count_lines(out) == 1, "%s", out);
	free(out);
	/* a directory that is not a cgroup: the kernel would refuse every event with "Bad file descriptor" */
	st = run_cmd(&out, true, "%s record -q -G /etc -o %s -- true", sigprof_bin(), keep);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert(strstr(out, "-G '/etc': '/etc' is not a cgroup directory") && count_lines(out) == 1, "%s", out);
	free(out);
	st = run_cmd(&out, true, "%s stat -G /etc -- true", sigprof_bin());
	cr_assert_eq(st, 2, "stat -G of a plain directory counted nothing and exited %d: %s", st, out);
	cr_assert(strstr(out, "is not a cgroup directory") && count_lines(out) == 1, "%s", out);
	free(out);
	run_cmd(&content, false, "cat %s", keep);
	cr_assert_str_eq(content, "previous", "the previous recording was touched");
	free(content);
}

Test(targets, stat_counts_an_attached_process, .timeout = 120)
{
	require_tracing();
	const long n = 600, m = 200;
	char trig[512], out_file[512];
	snprintf(trig, sizeof(trig), "%s", test_path("stat-trig"));
	snprintf(out_file, sizeof(out_file), "%s", test_path("stat.json"));
	pid_t a = spawn_sig_attach(trig, n, m);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pid_t st = spawn(NULL, "exec %s stat --json -o %s -p %d", sigprof_bin(), out_file, (int)a);
	/* stat writes nothing before the end: give it time to open its counters */
	nanosleep(&(struct timespec){ 0, 700 * 1000 * 1000 }, NULL);
	touch(trig);
	cr_assert_eq(wait_exit(a, 60), 0);
	cr_assert_eq(wait_exit(st, 30), 0, "stat -p did not stop once its target exited");
	double generated = jq_file(out_file, ".figures[] | select(.name==\"signals-generated\") | .mean");
	if (generated < 0)
		collector_missing("signal", "stat could not count signals here");
	/* its handlers ran n + m times, nobody else's; what it generated includes what it sent */
	cr_assert_eq(jq_file(out_file, ".figures[] | select(.name==\"sigreturns\") | .mean"), n + m);
	cr_assert_eq(jq_file(out_file, ".figures[] | select(.name==\"signals-delivered\") | .mean"), n + m);
	cr_assert_geq(generated, n + m, "stat -p: %.0f signals generated, the process sent %ld", generated, n + m);
}

/*
 * Attached to processes already making futex calls as fast as they can
 * (stress-ng's two futex workers): the events are enabled as they open,
 * so what followed (the kernel symbols' copy took 0.1 to 0.2 s) filled the
 * rings before the drain and the rate bound started, and 32% to 73% of the
 * records were lost.  The copy is now read before the events open.
 */
Test(targets, attaching_to_fast_futex_callers_loses_nothing_at_the_start, .timeout = 120)
{
	require_tracing();
	if (system("command -v stress-ng >/dev/null 2>&1") != 0)
		skip_environment("stress-ng is not installed (apt-get install stress-ng)");
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("fast-attach.data"));
	pid_t parent = spawn(NULL, "exec stress-ng --futex 2 -t 20 -q");
	char *workers = NULL;
	for (int tries = 0; tries < 50; tries++) { /* its workers: forked once it has started */
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
		free(workers);
		run_cmd(&workers, false, "pgrep -d, -P %d", (int)parent);
		if (strchr(workers, ','))
			break;
	}
	workers[strcspn(workers, "\n")] = '\0';
	cr_assert(strchr(workers, ','), "stress-ng's two workers did not start: '%s'", workers);
	char *out;
	int st = run_cmd(&out, true, "%s record -q -e futex -o %s -p %s -- sleep 0.5", sigprof_bin(), data, workers);
	kill(parent, SIGINT);
	wait_exit(parent, 10);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	free(workers);
	const char *json = report_json_file(data, "");
	double calls = jq_file(json, ".futex_summary.syscalls.sys_enter_futex.total");
	cr_assert_gt(calls, 1000, "the attached workers made %.0f futex calls in the window", calls);
	/* a loaded machine may lose a few; the unbounded start lost a third to three quarters */
	double lost = jq_file(json, ".meta.lost_percent");
	cr_assert_lt(lost, 5, "%.2f%% of the records lost", lost);
}

/*
 * --time cuts the recording as if it had started at START and stopped at
 * END (docs/filters.md): sig_late generates a signal at the start, sleeps
 * a second and takes it at the end.
 */
Test(targets, time_window_edges, .timeout = 120)
{
	require_tracing();
	const char *data = test_path("late.data");
	char d[512];
	snprintf(d, sizeof(d), "%s", data);
	record_workload(d, "-e signal,sched", W "sig_late 1000");
	const char *json = report_json_file(d, "");
	require_signal_collector(json);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), 1);
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), 1);
	double full_wait = jq_file(json, ".sched.total.wait_time.max_ms");
	cr_assert_gt(full_wait, 900, "the whole recording holds the one-second sleep (%.1f ms)", full_wait);
	json = report_json_file(d, "--time ,50%");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".generated"), 1, "first half: the generation");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), 0, "first half: no delivery");
	cr_assert_lt(jq_file(json, ".sched.total.wait_time.max_ms"), 500, "the sleep ends after END: not counted");
	cr_assert_geq(jq_file(json, ".sched.total.open_at_end"), 1, "the sleep is open at END");
	double win = jq_file(json, ".meta.filters.window_end_s");
	double span = jq_file(json, ".meta.filters.recording_span_s");
	cr_assert(span > 0.9 && win > 0.45 * span && win < 0.55 * span, "window end %.3f of %.3f s", win, span);
	json = report_json_file(d, "--time 50%,");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".delivered"), 1, "second half: the delivery");
	cr_assert_eq(signal_field(json, "SIGUSR1", ".unmatched_deliveries"), 1, "its generation is before START");
	cr_assert_lt(jq_file(json, ".sched.total.wait_time.max_ms"), 500, "the sleep began before START: not counted");
	/* the two halves split the samples */
	double all = jq_file(report_json_file(d, "--time 0%,100%"), ".meta.filters.samples_kept");
	double first = jq_file(report_json_file(d, "--time ,50%"), ".meta.filters.samples_kept");
	double second = jq_file(report_json_file(d, "--time 50%,"), ".meta.filters.samples_kept");
	cr_assert_eq(first + second, all, "--time ,50%% and 50%%, keep %.0f + %.0f of %.0f", first, second, all);

	/* seconds too */
	json = report_json_file(d, "--time 0.5,");
	cr_assert_leq(signal_field(json, "SIGUSR1", ".generated"), 0, "nothing generated after 0.5 s");
	char *out;
	int st = run_cmd(&out, true, "%s report -i %s --time 2,1", sigprof_bin(), d);
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "--time 2,1") && count_lines(out) == 1, "%s", out);
	free(out);
}

/*
 * The futex collector's stack copies lend their stack to the calls they
 * belong to and count nowhere: the filters line names them, so what it
 * lists adds up to the header's samples.
 */
Test(targets, the_filters_line_counts_the_stack_copies, .timeout = 120)
{
	require_tracing();
	char d[512];
	snprintf(d, sizeof(d), "%s", test_path("copies.data"));
	record_workload(d, "-e futex", W "futex_wake_many 500");
	const char *json = report_json_file(d, "--comm futex_wake_many");
	double copies = jq_file(json, ".meta.filters.stack_copies");
	cr_assert_gt(copies, 0, "500 sparse futex calls made no stack copy");
	cr_assert_eq(jq_file(json, ".meta.samples - .meta.filters.samples_kept - .meta.filters.samples_dropped - "
				   ".meta.filters.stack_copies - .meta.unknown_event_samples - .meta.malformed_samples"),
		     0);
	char *text, want[96];
	run_cmd(&text, false, "%s report --comm futex_wake_many -i %s", sigprof_bin(), d);
	snprintf(want, sizeof(want), "(and %.0f stack copies", copies);
	cr_assert(strstr(text, want), "no '%s' in the filters line:\n%.1500s", want, text);
	free(text);
}

Test(targets, dso_and_percent_limit, .timeout = 120)
{
	require_tracing();
	const char *data = test_path("burn.data");
	char d[512];
	snprintf(d, sizeof(d), "%s", data);
	record_workload(d, "-e cpu", W "cpu_burner");
	const char *json = report_json_file(d, "--dso cpu_burner");
	double kept = jq_file(json, ".meta.filters.samples_kept");
	cr_assert_gt(kept, 0);
	/* every kept stack's leaf is in cpu_burner */
	cr_assert_eq(jq_file(json, "[.stacks[] | select(.frames[0].dso | test(\"cpu_burner$\") | not)] | length"), 0);
	json = report_json_file(d, "--dso [kernel]");
	cr_assert_eq(jq_file(json, "[.stacks[] | select(.frames[0].dso | test(\"kernel\") | not)] | length"), 0);
	/* --percent-limit: no listed stack or function below it; the totals are the same */
	json = report_json_file(d, "--percent-limit 10");
	double total = jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples");
	double smallest = jq_file(json, "[.stacks[] | select(.collector==\"cpu\") | .count] | min");
	cr_assert(smallest < 0 || smallest * 100 >= 10 * total, "a stack of %.0f of %.0f samples is listed", smallest,
		  total);
	double plain = jq_file(report_json_file(d, ""), ".meta.collectors[] | select(.name==\"cpu\") | .samples");
	cr_assert_eq(total, plain, "--percent-limit changed the totals");
}

/*
 * An attached sparse futex caller: its events open enabled (no exec), but
 * the rate bound's weighted side stays off while every call is recorded,
 * so the calls per op add up to the kernel's exact count, not twice it; and
 * a window command's rusage is not written as the target's.
 */
Test(targets, attached_futex_calls_are_counted_once, .timeout = 120)
{
	require_tracing();
	char data[512];
	snprintf(data, sizeof(data), "%s", test_path("att-futex.data"));
	pid_t waiter = spawn(NULL, "exec " W "futex_waiter 400 5");
	usleep(300 * 1000);
	char *out;
	int st = run_cmd(&out, true, "%s record -q -e futex -p %d -o '%s' -- sleep 1", sigprof_bin(), (int)waiter, data);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	kill(waiter, SIGKILL);
	wait_exit(waiter, 10);
	const char *json = report_json_file(data, "");
	double exact = jq_file(json, ".futex_summary.syscalls.sys_enter_futex.total");
	double ops = jq_file(json, "[.futex_ops | to_entries[] | select(.key | startswith(\"futex_\") | not) | .value] | add");
	cr_assert_gt(exact, 50, "the waiter made futex calls while attached");
	cr_assert(ops >= exact - 2 && ops <= exact + 2, "calls per op add up to %.0f for the kernel's %.0f", ops, exact);
	char *rows;
	run_cmd(&rows, false, "%s report --figures -i '%s' | grep -c '^time\\.' || true", sigprof_bin(), data);
	cr_assert_eq(atoi(rows), 0, "an attached run wrote a rusage: %s", rows);
	free(rows);
}
