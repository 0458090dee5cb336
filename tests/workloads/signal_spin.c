/*
 * signal_spin N K: sends itself N SIGUSR1 signals with kill(2), one at a
 * time, and the handler spins K iterations of a loop before it returns.
 * K is the knob of `sigprof diff`'s ground truth: the same program with a
 * handler K times as long, so handler time per signal grows with K while
 * the exact counts (N generated, N delivered, N sigreturns) do not move.
 * Prints "signal_spin: N signals, K spins each" and exits 0 when the
 * handler ran N times.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static long spins;
static volatile unsigned long sink;

__attribute__((noinline)) static void on_signal(int sig)
{
	(void)sig;
	for (long i = 0; i < spins; i++)
		sink += (unsigned long)i;
	handled++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	spins = argc > 2 ? atol(argv[2]) : 1000;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	pid_t self = getpid();
	for (long i = 0; i < n; i++)
		kill(self, SIGUSR1);
	printf("signal_spin: %ld signals, %ld spins each\n", n, spins);
	return handled == n ? 0 : 1;
}
