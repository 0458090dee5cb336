/*
 * mutex_contend_nofp THREADS ITERATIONS: THREADS threads each take one
 * pthread mutex (contended_mutex) ITERATIONS times in contend_lock(),
 * holding it for a short spin (and now and then a sleep).  Built without frame pointers (the
 * GNUmakefile builds every *_nofp workload with -fomit-frame-pointer), like
 * Debian's glibc: a frame-pointer callchain from the futex wait inside
 * pthread_mutex_lock() cannot reach contend_lock(); a DWARF unwind must.
 *
 * Ground truth, printed as "acquisitions A contended C": A locks in all, C of
 * them found the mutex held (pthread_mutex_trylock failed first).  Only a
 * contended acquisition waits in the kernel (FUTEX_WAIT on contended_mutex,
 * possibly more than once: a woken waiter may find the mutex taken again).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t contended_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long contended;
static volatile unsigned long shared_counter;
static long iterations = 20000;

/* Work done with or without the mutex: long enough that other threads find it held. */
__attribute__((noinline)) static void spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

/*
 * The function every futex-wait stack of the workload must name.  Every
 * SLEEP_EVERY-th acquisition sleeps holding the mutex, so the other threads
 * block on it even where they never run in parallel (one CPU, or a busy
 * machine).
 */
#define SLEEP_EVERY 64
__attribute__((noinline)) static void contend_lock(long iteration)
{
	if (pthread_mutex_trylock(&contended_mutex) == EBUSY) {
		atomic_fetch_add_explicit(&contended, 1, memory_order_relaxed);
		pthread_mutex_lock(&contended_mutex);
	}
	shared_counter++;
	spin(400);
	if (iteration % SLEEP_EVERY == 0)
		usleep(100);
	pthread_mutex_unlock(&contended_mutex);
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++) {
		contend_lock(i);
		spin(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 4;
	if (argc > 2)
		iterations = atol(argv[2]);
	if (threads < 1 || threads > 256 || iterations < 1) {
		fprintf(stderr, "usage: mutex_contend_nofp [THREADS 1-256] [ITERATIONS >= 1]\n");
		return 2;
	}
	pthread_t tids[256];
	for (long t = 0; t < threads; t++) {
		int err = pthread_create(&tids[t], NULL, worker, NULL);
		if (err) {
			fprintf(stderr, "pthread_create: error %d\n", err);
			return 1;
		}
	}
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	long acquisitions = threads * iterations;
	printf("acquisitions %ld contended %ld\n", acquisitions, (long)contended);
	return shared_counter == (unsigned long)acquisitions ? 0 : 1;
}
