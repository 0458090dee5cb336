/*
 * sig_attach TRIGGER N M [C]: a process to attach to.  It sets its
 * handlers, then waits (sleeping) until the file TRIGGER exists, so a test
 * can attach sigprof first; then it sends itself N SIGUSR1 with kill(2)
 * from its main thread, creates a thread (after the attach: the test checks
 * that sigprof follows it) that sends its own thread M SIGUSR2 with
 * tgkill(2), joins it, forks a child (followed too) that sends itself C
 * SIGWINCH (default 0), waits for it and exits.  Prints what its handlers
 * saw; exits 0 when that is N, M and C.
 * No second signal is sent before the first is handled, so each is
 * generated, delivered and returned from exactly once.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

static volatile sig_atomic_t usr1, usr2, winch;

static void on_winch(int sig)
{
	(void)sig;
	winch++;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

static long m;

static void *thread_main(void *arg)
{
	(void)arg;
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < m; i++)
		syscall(SYS_tgkill, pid, tid, SIGUSR2);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: sig_attach TRIGGER N M [C]\n");
		return 2;
	}
	long n = atol(argv[2]);
	m = atol(argv[3]);
	long c = argc > 4 ? atol(argv[4]) : 0;
	struct sigaction sa = { 0 };
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	struct timespec tick = { 0, 2 * 1000 * 1000 };
	for (int waited = 0; access(argv[1], F_OK) != 0; waited++) {
		if (waited > 60 * 500)
			return 3; /* a minute without a trigger: the test is gone */
		nanosleep(&tick, NULL);
	}
	pid_t self = getpid();
	for (long i = 0; i < n; i++)
		kill(self, SIGUSR1);
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 4;
	pthread_join(t, NULL);
	int child_ok = 1;
	if (c > 0) {
		pid_t child = fork();
		if (child == 0) {
			for (long i = 0; i < c; i++)
				kill(getpid(), SIGWINCH);
			_exit(winch == c ? 0 : 1);
		}
		int status;
		child_ok = child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
			   WEXITSTATUS(status) == 0;
	}
	printf("sig_attach: SIGUSR1 %ld of %ld, SIGUSR2 %ld of %ld, child's SIGWINCH %s\n", (long)usr1, n, (long)usr2,
	       m, child_ok ? "all" : "missing");
	return usr1 == n && usr2 == m && child_ok ? 0 : 1;
}
