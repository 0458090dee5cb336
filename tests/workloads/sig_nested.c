/*
 * sig_nested N INNER_US OUTER_US: N rounds of a handler interrupted by
 * another.  main sends SIGUSR1 to the process with kill(2); its handler
 * sends SIGUSR2 to its own thread with tgkill(2), which is delivered at
 * once, on top of the running SIGUSR1 handler; the SIGUSR2 handler spins
 * INNER_US microseconds and returns, then the SIGUSR1 handler spins
 * OUTER_US and returns.  Ground truth per round: each signal generated,
 * delivered and returned from once; the SIGUSR2 handler lasts at least
 * INNER_US, the SIGUSR1 handler (which contains it) at least
 * INNER_US + OUTER_US.  Exits 0 when both handlers ran N times.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t outer_runs, inner_runs;
static long inner_us, outer_us;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void spin_us(long us)
{
	long long end = now_ns() + us * 1000LL;
	while (now_ns() < end)
		;
}

__attribute__((noinline)) static void on_usr2(int sig)
{
	(void)sig;
	inner_runs++;
	spin_us(inner_us);
}

__attribute__((noinline)) static void on_usr1(int sig)
{
	(void)sig;
	outer_runs++;
	syscall(SYS_tgkill, getpid(), gettid(), SIGUSR2);
	spin_us(outer_us);
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
	inner_us = argc > 2 ? atol(argv[2]) : 200;
	outer_us = argc > 3 ? atol(argv[3]) : 500;
	if (install(SIGUSR1, on_usr1) < 0 || install(SIGUSR2, on_usr2) < 0) {
		perror("sigaction");
		return 1;
	}
	for (long i = 0; i < n; i++)
		kill(getpid(), SIGUSR1);
	printf("sig_nested: sent %ld, outer %ld, inner %ld\n", n, (long)outer_runs, (long)inner_runs);
	return outer_runs == n && inner_runs == n ? 0 : 1;
}
