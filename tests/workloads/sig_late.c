/*
 * sig_late MS: one signal generated long before it is delivered, and one
 * wait as long, for the report's --time window edges.  It blocks SIGUSR1,
 * sends it to itself (generated now), sleeps MS milliseconds (one
 * scheduler wait), unblocks it (delivered now, MS later), and exits.  In a
 * recording of it the generation is near the start, the delivery near the
 * end, and the sleep spans the middle.  Exits 0 when the handler ran once.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	kill(getpid(), SIGUSR1);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	printf("sig_late: handled %d\n", (int)handled);
	return handled == 1 ? 0 : 1;
}
