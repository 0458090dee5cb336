/*
 * sig_siglock N: two sender threads each send the process N SIGUSR1 with
 * kill(2) while the main thread, the only one with SIGUSR1 unblocked,
 * handles them.  Every send takes the process's sighand->siglock (signal
 * generation) and every delivery takes it again (get_signal), so the two
 * senders and the receiver contend for that one lock on the signal paths.
 * Prints "sent S handled H" (H <= S: standard signals merge while pending).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_long handled;
static atomic_int senders_done;
static long per_sender;

__attribute__((noinline)) static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

__attribute__((noinline)) static void *send_signals(void *arg)
{
	(void)arg;
	pid_t self = getpid();
	for (long i = 0; i < per_sender; i++)
		kill(self, SIGUSR1);
	atomic_fetch_add(&senders_done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	per_sender = argc > 1 ? atol(argv[1]) : 100000;
	if (per_sender < 1) {
		fprintf(stderr, "usage: sig_siglock N (N >= 1)\n");
		return 2;
	}
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* the senders inherit a blocked SIGUSR1: only the main thread takes deliveries */
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, send_signals, NULL)) {
			perror("pthread_create");
			return 1;
		}
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	while (atomic_load(&senders_done) < 2)
		; /* deliveries interrupt this loop on its way back to user mode */
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("sent %ld handled %ld\n", 2 * per_sender, (long)atomic_load(&handled));
	return 0;
}
