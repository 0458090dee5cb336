/*
 * signal_storm N: sends itself N SIGUSR1 signals with kill(2), one at a
 * time, each handled by on_signal() before the next is sent, so every
 * signal is generated, delivered and returned from (rt_sigreturn) exactly
 * once.  Prints how many the handler saw and exits 0 when that is N.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

__attribute__((noinline)) static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

__attribute__((noinline)) static void send_signals(long n)
{
	pid_t self = getpid();
	for (long i = 0; i < n; i++)
		kill(self, SIGUSR1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0) {
		perror("sigaction");
		return 1;
	}
	send_signals(n);
	printf("signal_storm: sent %ld, handled %ld\n", n, (long)handled);
	return handled == n ? 0 : 1;
}
