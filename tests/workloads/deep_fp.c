/*
 * deep_fp MS DEPTH: spins for MS milliseconds in spin(), called from
 * wide_frame() (a 6 KiB local array: the stack below it is deeper than
 * record's 4096-byte copy for programs with frame pointers) under DEPTH
 * calls of descend() from main().  Built with frame pointers like every
 * bundled workload.  Prints "calls N depth D" when done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void tick(void)
{
	sink++;
}

/* Not a leaf (it calls tick), so it sets up a frame of its own: a leaf may go without one, even with frame pointers. */
__attribute__((noinline)) static void spin(void)
{
	for (int i = 0; i < 100000; i++) {
		sink += (unsigned long)i;
		if (i % 4096 == 0)
			tick();
	}
}

__attribute__((noinline)) static void wide_frame(void)
{
	volatile char buf[6144];
	memset((char *)buf, 1, sizeof(buf));
	spin();
	sink += buf[7];
}

__attribute__((noinline)) static void descend(int depth)
{
	if (depth > 0)
		descend(depth - 1);
	else
		wide_frame();
	sink++; /* not a tail call */
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: deep_fp MS DEPTH\n");
		return 2;
	}
	double end = now() + atof(argv[1]) / 1000.0;
	int depth = atoi(argv[2]);
	long calls = 0;
	while (now() < end) {
		descend(depth);
		calls++;
	}
	printf("calls %ld depth %d\n", calls, depth);
	return 0;
}
