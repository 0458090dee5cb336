/*
 * futex_wake_many N [M]: makes exactly N FUTEX_WAKE_PRIVATE calls on the
 * global word wake_word (in .bss), through libc's syscall(), with nobody
 * waiting: each returns 0; then M FUTEX_CMP_REQUEUE_PRIVATE calls from
 * wake_word to requeue_word (default 0), nobody waiting and the value
 * expected: each returns 0.  Ground truth for the futex collector: the word
 * named wake_word, WAKE = N, CMP_REQUEUE = M.  It prints "woke N".
 */
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int wake_word, requeue_word;

__attribute__((noinline)) static long wake_many(long n)
{
	long woken = 0;
	for (long i = 0; i < n; i++)
		woken += syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return woken;
}

__attribute__((noinline)) static long requeue_many(long m)
{
	long moved = 0;
	for (long i = 0; i < m; i++)
		moved += syscall(SYS_futex, &wake_word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &requeue_word, 0);
	return moved;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, m = argc > 2 ? atol(argv[2]) : 0;
	long woken = wake_many(n) + requeue_many(m);
	printf("woke %ld (woken %ld)\n", n, woken);
	return woken == 0 ? 0 : 1;
}
