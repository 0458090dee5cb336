/*
 * named_thread N NAME: a thread named NAME (pthread_setname_np) sends
 * itself N SIGUSR1 signals with pthread_kill, each handled; the main
 * thread keeps the program's name and only waits.  Prints "handled N by
 * NAME" when the handler ran N times.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t handled;
static long count;
static const char *name;

static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

static void *worker(void *arg)
{
	(void)arg;
	if (pthread_setname_np(pthread_self(), name) != 0)
		return NULL;
	for (long i = 0; i < count; i++)
		pthread_kill(pthread_self(), SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: named_thread N NAME\n");
		return 2;
	}
	count = atol(argv[1]);
	name = argv[2];
	signal(SIGUSR1, on_signal);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	printf("handled %ld by %s\n", (long)handled, name);
	return handled == count ? 0 : 1;
}
