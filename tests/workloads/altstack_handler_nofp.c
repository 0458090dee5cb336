/*
 * altstack_handler_nofp SIGNALS SPIN [noalt]: a SIGPROF handler that runs on an
 * alternate signal stack (sigaltstack, SA_ONSTACK), in a program built
 * without frame pointers, as stress-ng's timer handler is.
 * setitimer(ITIMER_PROF) sends SIGPROF every millisecond of CPU time; the
 * handler on_prof() spins SPIN iterations in handler_spin() while the main
 * code, main -> outer_work -> interrupted_loop, loops without a call until
 * SIGNALS handlers have run.  A whole stack of a sample in the handler reads,
 * leaf first:
 *   handler_spin <- on_prof <- [signal SIGPROF] <- interrupted_loop <- outer_work <- main <- ...
 * A copy of the handler's stack holds only the alternate stack: the frames
 * past the signal frame are on the thread's own stack, which the
 * signal_deliver sample that started the handler saw.
 *
 * "noalt" runs the handler on the thread's own stack instead: a handler
 * built without frame pointers, whose samples a DWARF unwind takes through
 * the signal frame by itself.
 *
 * Ground truth, printed as "handlers H on_altstack A": H handlers ran, A of
 * them with their frame on the alternate stack (all of them, or none with
 * noalt).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t handled, on_altstack;
static long spin_iterations = 2000000;
static char *altstack;
static size_t altstack_size;

__attribute__((noinline)) static void handler_spin(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void on_prof(int sig)
{
	(void)sig;
	char here;
	uintptr_t at = (uintptr_t)&here, base = (uintptr_t)altstack;
	if (at >= base && at < base + altstack_size)
		on_altstack++;
	handler_spin(spin_iterations);
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

__attribute__((noinline)) static unsigned long outer_work(long signals)
{
	volatile char frame[256]; /* a frame of its own size between the loop and main */
	frame[0] = 1;
	return interrupted_loop(signals) + frame[0];
}

int main(int argc, char **argv)
{
	long signals = argc > 1 ? atol(argv[1]) : 200;
	if (argc > 2)
		spin_iterations = atol(argv[2]);
	bool use_altstack = !(argc > 3 && strcmp(argv[3], "noalt") == 0);
	altstack_size = 64 * 1024;
	altstack = malloc(altstack_size);
	stack_t ss = { .ss_sp = altstack, .ss_size = altstack_size };
	if (!altstack || (use_altstack && sigaltstack(&ss, NULL) != 0)) {
		perror("sigaltstack");
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = (use_altstack ? SA_ONSTACK : 0) | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { .it_interval = { 0, 1000 }, .it_value = { 0, 1000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	unsigned long spins = outer_work(signals);
	struct itimerval off = { 0 };
	setitimer(ITIMER_PROF, &off, NULL);
	printf("handlers %d on_altstack %d spins %lu\n", (int)handled, (int)on_altstack, spins);
	return 0;
}
