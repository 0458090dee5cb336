/*
 * itimer_neighbour US SECONDS: another process for the signal collector's
 * tests.  It arms ITIMER_REAL every US microseconds and sleeps in pause()
 * for SECONDS.  The kernel re-arms that timer in its hrtimer callback,
 * whether or not the last SIGALRM was delivered, so its expiries keep
 * firing on the CPU it runs on while other tasks (the recorded workload,
 * pinned to the same CPU) are current there: each one is a
 * signal_generate hit in an interrupt, in the other task's context, aimed
 * at this process.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: itimer_neighbour US SECONDS\n");
		return 2;
	}
	long us = atol(argv[1]), seconds = atol(argv[2]);
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { .it_interval = { us / 1000000, us % 1000000 }, .it_value = { us / 1000000, us % 1000000 } };
	if (setitimer(ITIMER_REAL, &it, NULL) != 0) {
		perror("setitimer");
		return 1;
	}
	time_t end = time(NULL) + seconds;
	while (time(NULL) < end)
		pause();
	printf("itimer_neighbour: %ld alarms\n", (long)alarms);
	return 0;
}
