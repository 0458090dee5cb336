/*
 * timeline_phases [LOOPS]: a thread whose timeline is known by construction,
 * the ground truth of the timeline and wall-clock profile (docs/timeline.md).
 * Its thread "phases" repeats LOOPS times (default 10):
 *   run_phase      runs 10 ms of its own CPU time (CLOCK_THREAD_CPUTIME_ID)
 *   sleep_phase    nanosleep()s 20 ms
 *   futex_phase    waits 30 ms on the futex word phase_word (FUTEX_WAIT with a
 *                  timeout; nobody wakes it: it returns ETIMEDOUT)
 *   signal_phase   sends itself SIGUSR1, whose handler runs 5 ms of CPU time
 * and prints what it did, measured by its clocks:
 *   "timeline_phases: tid T loops N run_ns R sleep_ns S futex_ns F handler_ns H"
 * run_ns and handler_ns are CPU time (what a running span holds), sleep_ns
 * and futex_ns the wall time of the calls (blocked, then runnable until it
 * runs again after the wake).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long loops = 10;
static uint32_t phase_word;
static uint64_t run_ns, sleep_ns, futex_ns, handler_ns;
static pid_t phases_tid;

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin until this thread has run ms of CPU time; returns the CPU time it took. */
__attribute__((noinline)) static uint64_t spin_cpu_ms(long ms)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID), now;
	volatile uint64_t sink = 0;
	do {
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (now - start < (uint64_t)ms * 1000000ull);
	return now - start;
}

__attribute__((noinline)) static void on_usr1(int sig)
{
	(void)sig;
	handler_ns += spin_cpu_ms(5);
}

__attribute__((noinline)) static void run_phase(void)
{
	run_ns += spin_cpu_ms(10);
}

__attribute__((noinline)) static void sleep_phase(void)
{
	struct timespec ts = { 0, 20 * 1000000L };
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	sleep_ns += clock_ns(CLOCK_MONOTONIC) - start;
}

__attribute__((noinline)) static void futex_phase(void)
{
	struct timespec ts = { 0, 30 * 1000000L };
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	syscall(SYS_futex, &phase_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	futex_ns += clock_ns(CLOCK_MONOTONIC) - start;
}

__attribute__((noinline)) static void signal_phase(void)
{
	syscall(SYS_tgkill, getpid(), phases_tid, SIGUSR1);
}

static void *phases(void *arg)
{
	(void)arg;
	phases_tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < loops; i++) {
		run_phase();
		sleep_phase();
		futex_phase();
		signal_phase();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		loops = atol(argv[1]);
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, phases, NULL) != 0)
		return 1;
	pthread_setname_np(t, "phases");
	pthread_join(t, NULL);
	printf("timeline_phases: tid %d loops %ld run_ns %llu sleep_ns %llu futex_ns %llu handler_ns %llu\n",
	       (int)phases_tid, loops, (unsigned long long)run_ns, (unsigned long long)sleep_ns,
	       (unsigned long long)futex_ns, (unsigned long long)handler_ns);
	return 0;
}
