/*
 * nested_raise_nofp N: built without frame pointers, both handlers on an
 * alternate signal stack (SA_ONSTACK, no SA_SIGINFO), as stress-ng's are.
 * main -> send_outer raises SIGUSR1 N times; its handler on_outer() raises
 * SIGUSR2 four times, and each SIGUSR2 is delivered on the way out of that
 * raise() system call, to on_inner(), nested on the alternate stack.  A
 * cpu sample the kernel takes in get_signal, after SIGUSR2's signal_deliver
 * and before its signal frame is built, has on_outer's stack: one signal
 * frame, SIGUSR1's, while two handlers are running.  Such a stack reads,
 * leaf first (kernel frames, then glibc's raise()):
 *   __pthread_kill_implementation <- raise <- on_outer <- [signal SIGUSR1] (stack from delivery)
 *   <- __pthread_kill_implementation <- raise <- send_outer <- main <- ...
 * never with SIGUSR2 past on_outer.
 *
 * Ground truth, printed as "outer O inner I": O SIGUSR1 handlers ran, I
 * SIGUSR2 handlers.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INNER_PER_OUTER 4

static volatile sig_atomic_t outer, inner;

static void on_inner(int sig)
{
	(void)sig;
	inner++;
}

static void on_outer(int sig)
{
	(void)sig;
	for (int i = 0; i < INNER_PER_OUTER; i++)
		raise(SIGUSR2);
	outer++;
}

__attribute__((noinline)) static void send_outer(long n)
{
	for (long i = 0; i < n; i++)
		raise(SIGUSR1);
}

static void install(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0) {
		perror("sigaction");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: nested_raise_nofp N\n");
		return 2;
	}
	long n = atol(argv[1]);
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return 1;
	}
	install(SIGUSR1, on_outer);
	install(SIGUSR2, on_inner);
	send_outer(n);
	printf("outer %ld inner %ld\n", (long)outer, (long)inner);
	return 0;
}
