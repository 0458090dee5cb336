/*
 * many_stacks BITS: sends itself 2^BITS SIGUSR1 signals, each from a call
 * stack of its own: BITS nested calls, each through left() or right() as
 * the bits of the signal's number say, so that the recording holds 2^BITS
 * distinct sending stacks (for the HTML report's flame graphs at 100 000
 * stacks and more: BITS 17 gives 131072).  Ground truth: prints the number
 * sent and handled; exits 0 when they agree.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void descend(unsigned long n, int level);

__attribute__((noinline)) static void left(unsigned long n, int level)
{
	descend(n, level - 1);
	__asm__ volatile("" ::: "memory"); /* no tail call: this frame stays on the stack */
}

__attribute__((noinline)) static void right(unsigned long n, int level)
{
	descend(n, level - 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void descend(unsigned long n, int level)
{
	if (level == 0) {
		kill(getpid(), SIGUSR1);
		return;
	}
	if (n >> (level - 1) & 1)
		right(n, level);
	else
		left(n, level);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int bits = argc > 1 ? atoi(argv[1]) : 10;
	if (bits < 1 || bits > 24) {
		fprintf(stderr, "usage: many_stacks BITS (1 to 24)\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	unsigned long n = 1ul << bits;
	for (unsigned long i = 0; i < n; i++)
		descend(i, bits);
	printf("many_stacks: sent %lu, handled %lu\n", n, (unsigned long)handled);
	return handled == (sig_atomic_t)n ? 0 : 1;
}
