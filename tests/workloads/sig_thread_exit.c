/*
 * sig_thread_exit N M: N threads, one after another, each sends itself
 * SIGUSR1 with pthread_kill(3); the handler leaves with siglongjmp(3), so
 * no rt_sigreturn ever closes it, and the thread then exits: N deliveries
 * to a handler whose thread is gone before any sigreturn.  Then the main
 * thread sends itself M SIGUSR2, each handled and returned from normally.
 * Ground truth: SIGUSR1 delivered N, sigreturns 0; SIGUSR2 delivered M,
 * sigreturns M.  Exits 0 when the handlers ran N and M times.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __thread sigjmp_buf escape;
static volatile sig_atomic_t escapes, returns;

__attribute__((noinline)) static void on_usr1(int sig)
{
	(void)sig;
	escapes++;
	siglongjmp(escape, 1);
}

__attribute__((noinline)) static void on_usr2(int sig)
{
	(void)sig;
	returns++;
}

static void *thread_main(void *arg)
{
	(void)arg;
	if (sigsetjmp(escape, 1) == 0)
		pthread_kill(pthread_self(), SIGUSR1);
	return NULL;
}

static int install(int sig, void (*handler)(int))
{
	struct sigaction sa = { 0 };
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long m = argc > 2 ? atol(argv[2]) : 100;
	if (install(SIGUSR1, on_usr1) < 0 || install(SIGUSR2, on_usr2) < 0) {
		perror("sigaction");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
		pthread_join(t, NULL);
	}
	for (long i = 0; i < m; i++)
		kill(getpid(), SIGUSR2);
	printf("sig_thread_exit: threads %ld escaped %ld, sent %ld returned %ld\n", n, (long)escapes, m,
	       (long)returns);
	return escapes == n && returns == m ? 0 : 1;
}
