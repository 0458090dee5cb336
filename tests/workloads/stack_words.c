/*
 * stack_words T N: T threads, all alive at once, each make N
 * FUTEX_WAKE_PRIVATE calls (nobody waits: each returns 0) on a word of its
 * own stack.  Each thread's stack is its own anonymous mapping and the word
 * sits at the same offset in each, so the report names every one of the T
 * words alike ("[anon]+0x7ffe4c"): ground truth for one key naming several
 * words, whose calls add up to T x N.  It prints "calls C" (C = T x N, the
 * calls that returned 0).
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls_per_thread;
static pthread_barrier_t all_alive; /* no thread ends (and lends its stack to the next) before all have called */

__attribute__((noinline)) static void *wake_own_word(void *arg)
{
	(void)arg;
	volatile int word = 0;
	long ok = 0;
	for (long i = 0; i < calls_per_thread; i++)
		ok += syscall(SYS_futex, (int *)&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == 0;
	pthread_barrier_wait(&all_alive);
	return (void *)ok;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 3;
	calls_per_thread = argc > 2 ? atol(argv[2]) : 100;
	if (threads < 1 || threads > 64 || pthread_barrier_init(&all_alive, NULL, (unsigned)threads) != 0)
		return 2;
	pthread_t th[64];
	long calls = 0;
	for (long t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, wake_own_word, NULL) != 0)
			return 2;
	for (long t = 0; t < threads; t++) {
		void *ok;
		if (pthread_join(th[t], &ok) != 0)
			return 2;
		calls += (long)ok;
	}
	printf("calls %ld\n", calls);
	return calls == threads * calls_per_thread ? 0 : 1;
}
