/*
 * sched_pingpong N: two threads hand a token back and forth N times over
 * one futex word; each waits in FUTEX_WAIT until the word holds its turn
 * and wakes the other with FUTEX_WAKE.  Ground truth for the sched
 * collector: every blocking wait on the futex-wait path is ended by a
 * waking from the other thread (a workload task), so each has a known
 * scheduling delay, never longer than the wait.  It prints "rounds N,
 * woken W" where W counts the FUTEX_WAIT calls that returned 0 (woken:
 * an upper bound of the waits that blocked).
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic int turn; /* 0: ping's turn, 1: pong's */
static long rounds = 20000;
static _Atomic long woken;

__attribute__((noinline)) static void wait_for_turn(int mine)
{
	while (atomic_load(&turn) != mine)
		if (syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, !mine, NULL, NULL, 0) == 0)
			atomic_fetch_add(&woken, 1);
}

__attribute__((noinline)) static void pass_turn(int to)
{
	atomic_store(&turn, to);
	syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *player(void *arg)
{
	int mine = (int)(long)arg;
	for (long i = 0; i < rounds; i++) {
		wait_for_turn(mine);
		pass_turn(!mine);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	pthread_t pong;
	if (pthread_create(&pong, NULL, player, (void *)1L) != 0)
		return 1;
	player((void *)0L);
	pthread_join(pong, NULL);
	printf("rounds %ld, woken %ld\n", rounds, atomic_load(&woken));
	return 0;
}
