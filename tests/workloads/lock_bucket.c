/*
 * lock_bucket T N: T threads each make N FUTEX_WAIT_PRIVATE calls on the
 * global word bucket_word with an expected value it never holds, so every
 * call takes the word's futex hash bucket lock, finds the value changed and
 * returns EAGAIN without blocking: T threads hammering one bucket lock.
 * The calls are made by hammer_bucket() itself (a raw syscall): glibc has
 * no frame pointers, and a callchain through syscall() would lose it.
 *
 * Ground truth for the lock collector: every contention of that bucket lock
 * happens inside a FUTEX_WAIT on bucket_word, on the futex-wait path; the
 * program prints "calls C eagain E" (C = T x N, E the calls that returned
 * EAGAIN) so a test can check that every call was one that took the lock.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

atomic_int bucket_word = 1;
static atomic_long eagain_total;
static long calls_per_thread;

static long raw_futex_wait(atomic_int *word, int val)
{
	long ret;
	register void *timeout __asm__("r10") = NULL;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_futex), "D"(word), "S"((long)FUTEX_WAIT_PRIVATE), "d"((long)val),
			   "r"(timeout)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static void *hammer_bucket(void *arg)
{
	(void)arg;
	long eagain = 0;
	for (long i = 0; i < calls_per_thread; i++)
		if (raw_futex_wait(&bucket_word, 0) == -EAGAIN)
			eagain++;
	atomic_fetch_add(&eagain_total, eagain);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lock_bucket THREADS CALLS\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	calls_per_thread = atol(argv[2]);
	if (nthreads < 1 || nthreads > 64 || calls_per_thread < 1) {
		fprintf(stderr, "lock_bucket: THREADS in 1..64, CALLS >= 1\n");
		return 2;
	}
	pthread_t th[64];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, hammer_bucket, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("calls %ld eagain %ld\n", (long)nthreads * calls_per_thread, (long)atomic_load(&eagain_total));
	return 0;
}
