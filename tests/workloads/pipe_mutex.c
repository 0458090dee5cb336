/*
 * pipe_mutex N: four threads each write N blocks of 64 bytes into one pipe
 * while the main thread reads them out.  Every write and read takes the
 * pipe's mutex (pipe->mutex, a kernel mutex), so on two CPUs the writers
 * and the reader meet on it: mutex contention (lock:contention_begin with
 * flags MUTEX, SPIN when the waiter spins on the owner) without spinlock
 * contention, which this kind of guest does not trace.  Ground truth is
 * perf lock contention's report of the same perf.data; the program prints
 * "bytes B" (B = 4 x N x 64, all read).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int fds[2];
static long rounds = 100000;
static void *writer(void *arg)
{
	(void)arg;
	char buf[64] = { 0 };
	for (long i = 0; i < rounds; i++)
		if (write(fds[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			exit(1);
	return NULL;
}
int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (pipe(fds) < 0)
		return 1;
	pthread_t w[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&w[i], NULL, writer, NULL);
	char buf[65536];
	long want = 4 * rounds * 64, got = 0;
	while (got < want) {
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n <= 0)
			return 1;
		got += n;
	}
	for (int i = 0; i < 4; i++)
		pthread_join(w[i], NULL);
	printf("bytes %ld\n", got);
	return 0;
}
