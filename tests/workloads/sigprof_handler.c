/*
 * sigprof_handler SIGNALS SPIN [plain]: a process profiling itself the old way.
 * setitimer(ITIMER_PROF) sends it SIGPROF every millisecond of CPU time
 * (the kernel rounds that up to its tick, 4 ms at HZ=250);
 * the handler on_prof() spins SPIN loop iterations in handler_spin() while
 * the main code runs interrupted_loop(), a loop that makes no call, until
 * SIGNALS handlers have run.  So every SIGPROF interrupts interrupted_loop
 * itself (bar the first, which may land during set-up), and a whole stack of
 * a sample in the handler reads, leaf first:
 *   handler_spin <- on_prof <- [signal SIGPROF] <- interrupted_loop <- main
 * A frame-pointer walk cannot show interrupted_loop: the handler's frame
 * chain skips the interrupted function's return address.
 * The handler is installed with SA_SIGINFO, so the kernel writes the siginfo
 * (the signal's number) into the signal frame; "plain" installs it without,
 * as many programs do, and the frame then holds no number.
 *
 * Ground truth, printed as "handlers H handler_ms X cpu_ms Y": H handlers
 * ran, spending X ms of CPU time in handler_spin (measured around it) of
 * the process's Y ms.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t handled;
static volatile long handler_ns;
static long spin_iterations = 2000000;

static long cpu_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

__attribute__((noinline)) static void handler_spin(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void on_prof(int sig)
{
	(void)sig;
	long start = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	handler_spin(spin_iterations);
	handler_ns += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - start;
	handled++;
}

/* No call inside the loop: a signal always interrupts this function's own code. */
__attribute__((noinline)) static unsigned long interrupted_loop(long signals)
{
	volatile unsigned long spins = 0;
	while (handled < signals)
		spins++;
	return spins;
}

int main(int argc, char **argv)
{
	long signals = argc > 1 ? atol(argv[1]) : 250;
	if (argc > 2)
		spin_iterations = atol(argv[2]);
	bool plain = argc > 3 && strcmp(argv[3], "plain") == 0;
	if (signals < 1 || spin_iterations < 0 || (argc > 3 && !plain)) {
		fprintf(stderr, "usage: sigprof_handler [SIGNALS >= 1] [SPIN >= 0] [plain]\n");
		return 2;
	}
	struct sigaction sa = { 0 };
	/* With SA_SIGINFO the kernel passes two more arguments, which on_prof ignores (the same handler both ways). */
	sa.sa_handler = on_prof;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | (plain ? 0 : SA_SIGINFO);
	struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } };
	if (sigaction(SIGPROF, &sa, NULL) < 0 || setitimer(ITIMER_PROF, &every_ms, NULL) < 0) {
		perror("sigaction/setitimer");
		return 1;
	}
	interrupted_loop(signals);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	printf("handlers %ld handler_ms %.3f cpu_ms %.3f\n", (long)handled, handler_ns / 1e6,
	       cpu_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6);
	return 0;
}
