/*
 * threads_fork MS: a thread and a forked child each spend MS milliseconds
 * in a named function (thread_spin, child_spin) while the main thread
 * waits.  Ground truth: record follows threads and children.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double ms_arg = 300;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void spin_until(double until)
{
	volatile unsigned long x = 0;
	while (now_ms() < until)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
}

__attribute__((noinline)) static void *thread_spin(void *arg)
{
	(void)arg;
	spin_until(now_ms() + ms_arg);
	return NULL;
}

__attribute__((noinline)) static void child_spin(void)
{
	spin_until(now_ms() + ms_arg);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		ms_arg = atof(argv[1]);
	pthread_t t;
	if (pthread_create(&t, NULL, thread_spin, NULL) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		child_spin();
		_exit(0);
	}
	pthread_join(t, NULL);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
