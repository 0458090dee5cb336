/*
 * wide_frames_nofp MS: spins for about MS milliseconds in spin(), built
 * without frame pointers, as Debian builds its programs, under frames of
 * 3 KiB, more than the cpu collector's 2048-byte short copy holds:
 *   main -> path_a -> wide_a -> spin          (two rounds in four)
 *   main -> path_b -> wide_b -> spin          (one)
 *   main -> path_a | path_b -> wide_shared -> spin   (one, each path in turn)
 * A short copy of spin's stack stops inside the wide frame: what it holds
 * past spin is that frame's function alone.  wide_a and wide_b have one
 * caller each; wide_shared has two, which its frame alone does not tell
 * apart.
 *
 * Ground truth, printed when done: "a A b B shared S" with the thread CPU
 * time in ms spent under wide_a, wide_b and wide_shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) static void spin(void)
{
	for (int i = 0; i < 2000000; i++)
		sink += (unsigned long)i;
}

#define WIDE(name)                                                   \
	__attribute__((noinline)) static double name(void)           \
	{                                                            \
		volatile char buf[3072];                             \
		memset((char *)buf, 1, sizeof(buf));                 \
		double start = cpu_ms();                             \
		spin();                                              \
		sink += buf[7];                                      \
		return cpu_ms() - start;                             \
	}

WIDE(wide_a)
WIDE(wide_b)
WIDE(wide_shared)

static double ms_a, ms_b, ms_shared;

__attribute__((noinline)) static void path_a(int shared)
{
	if (shared)
		ms_shared += wide_shared();
	else
		ms_a += wide_a();
	sink++; /* not a tail call */
}

__attribute__((noinline)) static void path_b(int shared)
{
	if (shared)
		ms_shared += wide_shared();
	else
		ms_b += wide_b();
	sink++;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: wide_frames_nofp MS\n");
		return 2;
	}
	double want = atof(argv[1]), start = cpu_ms();
	for (unsigned round = 0; cpu_ms() - start < want; round++) {
		switch (round % 4) {
		case 0:
		case 2:
			path_a(0);
			break;
		case 1:
			path_b(0);
			break;
		default:
			if (round % 8 == 3)
				path_a(1);
			else
				path_b(1);
		}
	}
	printf("a %.3f b %.3f shared %.3f\n", ms_a, ms_b, ms_shared);
	return 0;
}
