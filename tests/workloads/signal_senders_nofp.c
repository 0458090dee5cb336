/*
 * signal_senders_nofp N: sends itself N SIGUSR1 through sigqueue() and N
 * through raise() from each of two call sites, in a program built without
 * frame pointers, as Debian builds its programs:
 *   main -> from_site_a -> send_by_sigqueue | send_by_raise
 *   main -> from_site_b -> send_by_sigqueue | send_by_raise
 * The senders are shared, so a stack key that ends inside them names one
 * call site for both: glibc's sigqueue() keeps a 128-byte siginfo_t in its
 * frame, which a 128-byte key does not get past.  The two sites' frames
 * differ in size, and they take turns, 10 rounds of N/10 each.
 *
 * Ground truth, printed as "sent S handled H": S signals sent (4N), H
 * handled.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void send_by_sigqueue(long n)
{
	for (long i = 0; i < n; i++)
		sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = (int)i });
}

static void send_by_raise(long n)
{
	for (long i = 0; i < n; i++)
		raise(SIGUSR1);
}

/* A frame of 400 bytes: past the end of a short key copy taken in the senders. */
static void from_site_a(long n)
{
	volatile char frame[400];
	memset((char *)frame, 1, sizeof(frame));
	send_by_sigqueue(n);
	send_by_raise(n);
	(void)frame[0];
}

static void from_site_b(long n)
{
	volatile char frame[24];
	memset((char *)frame, 2, sizeof(frame));
	send_by_sigqueue(n);
	send_by_raise(n);
	(void)frame[0];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	if (n <= 0 || n % 10) {
		fprintf(stderr, "usage: signal_senders_nofp N (a positive multiple of 10)\n");
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0) {
		perror("sigaction");
		return 1;
	}
	for (int round = 0; round < 10; round++) {
		from_site_a(n / 10);
		from_site_b(n / 10);
	}
	printf("sent %ld handled %ld\n", 4 * n, (long)handled);
	return handled == 4 * n ? 0 : 1;
}
