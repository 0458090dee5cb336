/*
 * cpu_burner: spends its CPU time in burn_cpu() for the given number of
 * milliseconds of wall time (default 1000).  Ground truth for the cpu
 * collector: most samples must land in burn_cpu.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long burn_cpu(double until_ms)
{
	volatile unsigned long x = 0;
	while (now_ms() < until_ms)
		for (int i = 0; i < 200000; i++)
			x += (unsigned long)i * 2654435761u;
	return x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	unsigned long x = burn_cpu(now_ms() + ms);
	printf("cpu_burner: done (%lu)\n", x & 0xff);
	return 0;
}
