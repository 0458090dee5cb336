/*
 * workload.c: forking, releasing, watching and reaping the measured
 * command (workload.h), shared by record and stat.
 *
 * The child is forked before the events are opened (they need its pid)
 * and waits on a pipe until sigprof has opened them: with enable_on_exec
 * nothing is counted before its exec.  sigprof keeps SIGCHLD and the
 * interrupt signals blocked except inside the caller's wait (ppoll with
 * waitmask), so a signal that arrives between two checks is not lost: the
 * wait returns at once with EINTR.
 *
 * The workload's rusage is its own: the kernel counts into a process's
 * maximum resident set the pages it had before its exec, and a child
 * forked from sigprof had sigprof's (stat -r 3 -- /bin/true read 2832 KB
 * where /usr/bin/time reads 1108; record -r 6 up to 10064).  So the
 * forked child only sets itself up and execs the spawner, a small static
 * program sigprof carries (workload_image.c, run from a memfd made once),
 * whose few pages are all the workload's fork copies; the spawner clones
 * the workload with CLONE_PARENT, so that it is sigprof's child (sigprof
 * waits for it, opens its events, and its death signal is tied to
 * sigprof), tells sigprof its pid on the exec-error pipe and exits.
 * Without the spawner (no memfd, an exec that failed, a build without the
 * image) the forked child is the workload and tells its own pid the same
 * way.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sigprof/commands/commands.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/workload.h"
#include "sigprof/commands/workload_exec.h"
#include "sigprof/base/files.h"

/* The spawner's image (workload_image.c) and the memfd it is run from (-1: none yet, or none possible). */
extern const unsigned char workload_spawner_image[], workload_spawner_image_end[];
static int spawner_fd = -1;
static bool spawner_tried;

static volatile sig_atomic_t child_exited;
static volatile sig_atomic_t interrupt_signal;

static void on_sigchld(int sig)
{
	(void)sig;
	child_exited = 1;
}

static void on_interrupt(int sig)
{
	interrupt_signal = sig;
}

int workload_find(const char *cmd)
{
	char file[4096];
	return workload_find_file(cmd, file, sizeof(file));
}

int workload_find_file(const char *cmd, char *found_file, size_t filelen)
{
	struct stat st;
	if (strchr(cmd, '/')) {
		if (stat(cmd, &st) < 0)
			return -errno;
		snprintf(found_file, filelen, "%s", cmd);
		return S_ISREG(st.st_mode) && access(cmd, X_OK) == 0 ? 0 : -EACCES;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int found = -ENOENT;
	while (*path) {
		size_t len = strcspn(path, ":");
		char file[4096];
		snprintf(file, sizeof(file), "%.*s/%s", (int)(len ? len : 1), len ? path : ".", cmd);
		if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(file, X_OK) == 0) {
				snprintf(found_file, filelen, "%s", file);
				return 0;
			}
			found = -EACCES;
		}
		path += len + (path[len] == ':');
	}
	return found;
}

const char *workload_find_error(const char *cmd, int err)
{
	if (err != -ENOENT)
		return strerror(-err);
	if (cmd[0] == '-')
		return "command not found (sigprof's options go before '--'; a program of that name in this "
		       "directory is run as ./NAME)";
	return "command not found";
}

int workload_cannot_run_exit(int err)
{
	return err == -ENOENT ? EXIT_CANNOT_RUN : EXIT_NOT_EXEC;
}

static const int caught_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };

/* SIGPIPE as sigprof found it: the workload gets it back. */
static struct sigaction inherited_sigpipe;

static void install_handlers(sigset_t *waitmask)
{
	/*
	 * A workload that dies before it is released closes the go pipe: the
	 * release must fail with EPIPE and take the error path (one line, the
	 * output discarded, the old file restored), not kill sigprof.
	 */
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ignore, &inherited_sigpipe);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_sigchld;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigset_t block;
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(caught_signals) / sizeof(caught_signals[0]); i++)
		sigaddset(&block, caught_signals[i]);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	for (size_t i = 0; i < sizeof(caught_signals) / sizeof(caught_signals[0]); i++)
		sigdelset(waitmask, caught_signals[i]);
}

/*
 * Close the child's copies of sigprof's own descriptors (FD_CLOEXEC: exec
 * would close them anyway) now, while sigprof still holds its copies.
 * Those that are perf events (the probes sigprof keeps open until its
 * session opens) would otherwise be released by the exec, the last
 * reference once sigprof closed its own: the workload then ran the
 * kernel's perf_event_release_kernel and perf_trace_destroy, which waits
 * for the global event_mutex (95 ms once here) and was charged to it.
 * Descriptors the workload inherits on purpose (no FD_CLOEXEC) stay.  Only
 * system calls, no allocation: the child of a threaded process.
 */
static void close_own_descriptors(int keep1, int keep2, int keep3)
{
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < n;) {
			const struct linux_dirent64 {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (const void *)(buf + at);
			at += d->reclen;
			char *end;
			long fd = strtol(d->name, &end, 10);
			if (*end || end == d->name || fd < 3 || fd == dir || fd == keep1 || fd == keep2 || fd == keep3)
				continue;
			int flags = fcntl((int)fd, F_GETFD);
			if (flags >= 0 && (flags & FD_CLOEXEC))
				close((int)fd);
		}
	}
	close(dir);
}

/*
 * The workload's side of the fork: tie its life to sigprof's, set itself
 * up, then become the spawner (spawner_argv, NULL: none) or, failing that,
 * say its own pid and wait for the go.  A recorder that is SIGKILLed cannot
 * kill its workload, so the kernel does: PR_SET_PDEATHSIG sends SIGKILL
 * when sigprof's main thread (the one that forked) exits.  It survives
 * exec, except of a set-user-ID program that changes the user.  A sigprof
 * that died before the prctl is seen in getppid(): the child was already
 * re-parented.
 */
static void __attribute__((noreturn)) run_child(char **argv, char **spawner_argv, pid_t parent, int go_fd,
						 int exec_err_fd, const int *output)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_CANNOT_RUN);
	/* results_capture.h's pipes become the workload's standard output and error */
	for (int i = 0; output && i < 2; i++)
		if (output[i] >= 0 && dup2(output[i], i + 1) < 0)
			_exit(EXIT_CANNOT_RUN);
	close_own_descriptors(go_fd, exec_err_fd, spawner_argv ? spawner_fd : -1);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	open_files_limit_restore();
	for (size_t i = 0; i < sizeof(caught_signals) / sizeof(caught_signals[0]); i++)
		signal(caught_signals[i], SIG_DFL);
	sigaction(SIGPIPE, &inherited_sigpipe, NULL);
	if (spawner_argv && fcntl(go_fd, F_SETFD, 0) == 0 && fcntl(exec_err_fd, F_SETFD, 0) == 0) {
		extern char **environ;
		syscall(SYS_execveat, spawner_fd, "", spawner_argv, environ, AT_EMPTY_PATH);
		fcntl(go_fd, F_SETFD, FD_CLOEXEC);
		fcntl(exec_err_fd, F_SETFD, FD_CLOEXEC);
	}
	int32_t self = (int32_t)getpid();
	if (write(exec_err_fd, &self, sizeof(self)) != sizeof(self))
		_exit(EXIT_CANNOT_RUN);
	workload_release_and_exec(argv, go_fd, exec_err_fd);
}

/*
 * The memfd the spawner runs from, made on the first workload (close-on-
 * exec: only execveat() uses it); -1 when it cannot be (no memfd_create,
 * a build without the image).
 */
static int spawner_image_fd(void)
{
	if (spawner_tried)
		return spawner_fd;
	spawner_tried = true;
	size_t size = (size_t)(workload_spawner_image_end - workload_spawner_image);
	if (!size)
		return -1;
	int fd = memfd_create("sigprof-workload-spawner", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, workload_spawner_image + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	/* sealed: nothing (a workload that inherited it, had it not been closed) can change what later runs exec */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	spawner_fd = fd;
	return fd;
}

/*
 * The spawner's command line (workload_spawner.c), made before the
 * fork (the child allocates nothing); its numbers are written in numbers.
 * Free the array only.
 */
static char **spawner_args(char **argv, pid_t parent, int go_fd, int exec_err_fd, char numbers[3][16])
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **args = xcalloc(n + 6, sizeof(*args));
	snprintf(numbers[0], 16, "%d", (int)parent);
	snprintf(numbers[1], 16, "%d", go_fd);
	snprintf(numbers[2], 16, "%d", exec_err_fd);
	args[0] = "sigprof-workload-spawner";
	args[1] = numbers[0];
	args[2] = numbers[1];
	args[3] = numbers[2];
	args[4] = "--";
	memcpy(args + 5, argv, n * sizeof(*argv));
	return args;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int start_child(struct workload *w, char **argv, const int *output);

int workload_start(struct workload *w, char **argv)
{
	return start_child(w, argv, NULL);
}

/*
 * The workload's output goes through results_capture.c's pipes: relayed
 * unchanged, its result lines read on the way.  A capture that cannot be
 * set up costs the result figures only: the workload then inherits the
 * descriptors.
 */
int workload_start_captured(struct workload *w, char **argv, struct result_parser *results)
{
	struct result_capture *capture = NULL;
	if (results && result_capture_open(&capture, results) < 0)
		capture = NULL;
	int err = start_child(w, argv, capture ? result_capture_child_fds(capture) : NULL);
	if (err < 0 || (capture && result_capture_start(capture) < 0)) {
		result_capture_finish(capture);
		return err;
	}
	w->capture = capture;
	w->results = capture ? results : NULL;
	return 0;
}

/* The workload was reaped: its last output relayed, its result lines read. */
static void finish_capture(struct workload *w)
{
	result_capture_finish(w->capture);
	w->capture = NULL;
}

static int start_child(struct workload *w, char **argv, const int *output)
{
	int go[2], exec_err[2];
	*w = (struct workload){ .pid = -1, .go_fd = -1, .exec_err_fd = -1 };
	child_exited = 0;
	install_handlers(&w->waitmask);
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(exec_err, O_CLOEXEC) < 0) {
		int err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid_t parent = getpid();
	char numbers[3][16];
	char **spawner = spawner_image_fd() >= 0 ? spawner_args(argv, parent, go[0], exec_err[1], numbers) : NULL;
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(go[0]);
		close(go[1]);
		close(exec_err[0]);
		close(exec_err[1]);
		free(spawner);
		return err;
	}
	if (pid == 0) {
		close(go[1]);
		close(exec_err[0]);
		run_child(argv, spawner, parent, go[0], exec_err[1], output);
	}
	free(spawner);
	close(go[0]);
	close(exec_err[1]);
	/*
	 * The workload's pid: the child's own, or the one its spawner cloned
	 * (the spawner then exits and is reaped here).  No pid: the child died;
	 * workload_release() finds that out (EPIPE) and reaps it.
	 */
	int32_t announced = 0;
	ssize_t n;
	while ((n = read(exec_err[0], &announced, sizeof(announced))) < 0 && errno == EINTR)
		;
	if (n == sizeof(announced) && announced > 0 && announced != pid) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		pid = (pid_t)announced;
	}
	w->pid = pid;
	w->go_fd = go[1];
	w->exec_err_fd = exec_err[0];
	return 0;
}

int workload_release(struct workload *w)
{
	char go = 'g';
	ssize_t n = write(w->go_fd, &go, 1);
	close_fd(&w->go_fd);
	int err = 0;
	if (n != 1) {
		err = -EPIPE;
	} else {
		n = read(w->exec_err_fd, &err, sizeof(err));
		err = n == sizeof(err) ? -err : 0;
	}
	close_fd(&w->exec_err_fd);
	if (err) {
		waitpid(w->pid, NULL, 0);
		w->pid = -1;
		finish_capture(w);
	}
	return err;
}

void workload_none(struct workload *w)
{
	*w = (struct workload){ .pid = -1, .go_fd = -1, .exec_err_fd = -1 };
	child_exited = 0;
	install_handlers(&w->waitmask);
}

void workload_take_pending_signals(const struct workload *w)
{
	sigset_t pending, blocked;
	if (sigpending(&pending) < 0)
		return;
	for (size_t i = 0; i < sizeof(caught_signals) / sizeof(caught_signals[0]); i++) {
		if (!sigismember(&pending, caught_signals[i]))
			continue;
		sigprocmask(SIG_SETMASK, &w->waitmask, &blocked); /* the handlers run as the mask opens */
		sigprocmask(SIG_SETMASK, &blocked, NULL);
		return;
	}
}

bool workload_check(struct workload *w, int *status)
{
	if (w->pid <= 0)
		return false; /* no command (workload_none): nothing to forward to or reap */
	if (interrupt_signal && interrupt_signal != w->forwarded) {
		w->forwarded = interrupt_signal;
		kill(w->pid, w->forwarded);
	}
	if (!child_exited)
		return false;
	child_exited = 0;
	if (wait4(w->pid, status, WNOHANG, &w->rusage) != w->pid)
		return false;
	w->pid = -1;
	finish_capture(w);
	return true;
}

size_t workload_time_figures(const struct rusage *ru, double elapsed_s, struct time_figure *out)
{
	double user = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
	double sys = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	const struct time_figure figures[WORKLOAD_TIME_FIGURES] = {
		{ "user_time", user },
		{ "system_time", sys },
		{ "elapsed_time", elapsed_s },
		{ "percent_of_cpu_this_job_got", elapsed_s > 0 ? 100 * (user + sys) / elapsed_s : 0 },
		{ "maximum_resident_set_size", (double)ru->ru_maxrss },
		{ "minor_page_faults", (double)ru->ru_minflt },
		{ "major_page_faults", (double)ru->ru_majflt },
		{ "voluntary_context_switches", (double)ru->ru_nvcsw },
		{ "involuntary_context_switches", (double)ru->ru_nivcsw },
		{ "file_system_inputs", (double)ru->ru_inblock },
		{ "file_system_outputs", (double)ru->ru_oublock },
	};
	memcpy(out, figures, sizeof(figures));
	return WORKLOAD_TIME_FIGURES;
}

void workload_abort(struct workload *w)
{
	close_fd(&w->go_fd);
	close_fd(&w->exec_err_fd);
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
	}
	w->pid = -1;
	finish_capture(w);
}

int workload_interrupt_signal(void)
{
	return interrupt_signal;
}

int workload_exit_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 1;
}

const char *workload_release_error(int err)
{
	if (err == -EPIPE)
		return "it died before it could start (killed while sigprof set up its events)";
	return strerror(-err);
}
