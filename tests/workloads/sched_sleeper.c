/*
 * sched_sleeper K MS: sleeps K times for MS milliseconds each, every sleep
 * a nanosleep() called from sleep_once().  Ground truth for the sched
 * collector: K waits whose stack holds sleep_once, each about MS long.
 * It prints "slept K x MS ms" and the mean measured sleep in ms.
 *
 * On x86-64 sleep_once() makes the system call itself: glibc is built
 * without frame pointers, so a frame-pointer callchain through libc's
 * nanosleep() would lose the function that called it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void sleep_once(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	long ret;
	do {
#if defined(__x86_64__)
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(&ts)
				 : "rcx", "r11", "memory");
#else
		ret = nanosleep(&ts, &ts);
#endif
	} while (ret != 0);
}

int main(int argc, char **argv)
{
	long k = argc > 1 ? atol(argv[1]) : 20;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	double start = now_ms();
	for (long i = 0; i < k; i++)
		sleep_once(ms);
	double took = now_ms() - start;
	printf("slept %ld x %ld ms, mean %.3f ms\n", k, ms, k ? took / (double)k : 0.0);
	return 0;
}
