/*
 * futex_hash_buckets T N SLOTS: the seed-002 report in miniature.  T threads
 * each make N non-blocking FUTEX_WAIT_PRIVATE calls, round robin over 256
 * futex words of their own, each with an expected value the word never
 * holds: every call takes its word's hash bucket lock and returns EAGAIN.
 * SLOTS 0 puts the process on the kernel's global futex hash
 * (prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 0)); SLOTS 2 gives it a
 * private hash of 2 buckets, so the 2 x 256 words share two bucket locks
 * and the threads contend on them (Linux 6.16+).  Prints "calls C eagain E
 * slots S"; exits 3 when the kernel has no PR_FUTEX_HASH.
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

#define WORDS 256
#define PR_FUTEX_HASH_ 78          /* linux/prctl.h of 6.16; older headers lack it */
#define PR_FUTEX_HASH_SET_SLOTS_ 1

static long calls_per_thread;
static atomic_long eagain_total;

__attribute__((noinline)) static void *wait_on_words(void *arg)
{
	(void)arg;
	static __thread int words[WORDS];
	long eagain = 0;
	for (long i = 0; i < calls_per_thread; i++)
		if (syscall(SYS_futex, &words[i % WORDS], FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0) < 0 && errno == EAGAIN)
			eagain++;
	atomic_fetch_add(&eagain_total, eagain);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: futex_hash_buckets THREADS CALLS SLOTS\n");
		return 2;
	}
	int nthreads = atoi(argv[1]), slots = atoi(argv[3]);
	calls_per_thread = atol(argv[2]);
	if (nthreads < 1 || nthreads > 64 || calls_per_thread < 1 || slots < 0) {
		fprintf(stderr, "futex_hash_buckets: THREADS in 1..64, CALLS >= 1, SLOTS >= 0 (0: the global hash)\n");
		return 2;
	}
	if (prctl(PR_FUTEX_HASH_, PR_FUTEX_HASH_SET_SLOTS_, slots, 0, 0) < 0) {
		fprintf(stderr, "futex_hash_buckets: prctl(PR_FUTEX_HASH, SET_SLOTS, %d): %m (Linux 6.16+)\n", slots);
		return 3;
	}
	pthread_t th[64];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, wait_on_words, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("calls %ld eagain %ld slots %d\n", (long)nthreads * calls_per_thread, (long)atomic_load(&eagain_total),
	       slots);
	return 0;
}
