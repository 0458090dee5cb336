/*
 * exit_with CODE | exit_with -SIGNAL: ends with exit status CODE, or is
 * killed by SIGNAL (with its default action), after a short busy loop so
 * that it is sampled.  Ground truth for exit status pass-through.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int v = argc > 1 ? atoi(argv[1]) : 0;
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000000; i++)
		x += i;
	if (v < 0) {
		signal(-v, SIG_DFL);
		raise(-v);
		pause();
	}
	return v;
}
