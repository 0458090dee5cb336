/*
 * lock_words: THREADS threads making CALLS FUTEX_WAIT calls each, every
 * one with a wrong expected value (EAGAIN: only the word's hash bucket lock
 * is taken), round-robin over the first NWORDS of three words (word_a,
 * word_b, word_c), thread k starting at word k.  With SLOTS > 0 the process
 * first asks for a private futex hash of SLOTS buckets (PR_FUTEX_HASH,
 * Linux 6.16): with 2 buckets and 3 words, two of the words share a bucket
 * (pigeonhole), and the calls on them contend its lock.  Prints
 * "calls N eagain N slots S" (S: the buckets the kernel reports, -1 when it
 * has no PR_FUTEX_HASH, 0 the global hash); exits 3 when SLOTS was asked
 * for and the kernel refused it.  With BURST and PAUSE_US, each thread
 * sleeps PAUSE_US microseconds after every BURST calls: a sparse workload,
 * whose contentions stay far under any rate bound.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#define PR_FUTEX_HASH_SET_SLOTS 1
#define PR_FUTEX_HASH_GET_SLOTS 2
#endif

/* one cacheline each: the words contend only through the bucket locks they share */
_Alignas(64) atomic_int word_a = 1;
_Alignas(64) atomic_int word_b = 1;
_Alignas(64) atomic_int word_c = 1;

static atomic_int *const words[] = { &word_a, &word_b, &word_c };
static long calls_per_thread, burst, pause_us;
static int nwords;
static atomic_long eagain_total;

__attribute__((noinline)) static void *hammer_words(void *arg)
{
	long k = (long)arg, eagain = 0;
	for (long i = 0; i < calls_per_thread; i++) {
		if (syscall(SYS_futex, words[(i + k) % nwords], FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0) == -1 &&
		    errno == EAGAIN)
			eagain++;
		if (burst && (i + 1) % burst == 0)
			usleep((useconds_t)pause_us);
	}
	atomic_fetch_add(&eagain_total, eagain);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 7) {
		fprintf(stderr, "usage: lock_words THREADS CALLS NWORDS SLOTS [BURST PAUSE_US]\n");
		return 2;
	}
	if (argc == 7) {
		burst = atol(argv[5]);
		pause_us = atol(argv[6]);
	}
	int nthreads = atoi(argv[1]), slots = atoi(argv[4]);
	calls_per_thread = atol(argv[2]);
	nwords = atoi(argv[3]);
	if (nthreads < 1 || nthreads > 64 || calls_per_thread < 1 || nwords < 1 || nwords > 3 || slots < 0 ||
	    burst < 0 || pause_us < 0 || pause_us > 1000000) {
		fprintf(stderr, "lock_words: THREADS in 1..64, CALLS >= 1, NWORDS in 1..3, SLOTS >= 0, BURST >= 0, "
				"PAUSE_US in 0..1000000\n");
		return 2;
	}
	if (slots > 0 && prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0, 0) != 0) {
		perror("lock_words: prctl(PR_FUTEX_HASH_SET_SLOTS)");
		return 3;
	}
	pthread_t th[64];
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, hammer_words, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	long got = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);
	printf("calls %ld eagain %ld slots %ld\n", (long)nthreads * calls_per_thread, (long)atomic_load(&eagain_total),
	       got);
	return 0;
}
