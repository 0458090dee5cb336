/*
 * preinit_spin MS: spends MS milliseconds of CPU time (default 300) in
 * preinit_spin(), a function of the program's DT_PREINIT_ARRAY, before
 * main runs.  ld.so calls preinit functions from _dl_init, which its
 * start-up code (_dl_start_user, glibc's RTLD_START) calls before it jumps
 * to the program's entry: ground truth for the outermost frames of a
 * process's first moments, where a stack has no caller beyond ld.so's
 * start-up code.  Prints "spun_ms MS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double spun_ms;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* glibc passes preinit functions the arguments of main. */
__attribute__((noinline)) static void preinit_spin(int argc, char **argv, char **envp)
{
	double ms = argc > 1 ? atof(argv[1]) : 300, start = cpu_ms();
	volatile unsigned long x = 0;
	while (cpu_ms() - start < ms)
		for (int i = 0; i < 20000; i++)
			x += (unsigned long)i * 2654435761u;
	spun_ms = cpu_ms() - start;
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit[])(int, char **, char **) = {
	preinit_spin,
};

int main(void)
{
	printf("spun_ms %.0f\n", spun_ms);
	return 0;
}
