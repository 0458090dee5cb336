/*
 * sig_pending R: R rounds of "a standard signal sent while it is already
 * pending".  Each round blocks SIGUSR2, sends it to the process twice with
 * kill(2) (the second finds the first pending: the kernel merges it and
 * signal_generate reports "already pending"), then unblocks it, so the
 * handler runs once.  Ground truth per round: 2 generated, 1 already
 * pending, 1 delivered, 1 sigreturn.  Exits 0 when the handler ran R times.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

__attribute__((noinline)) static void on_usr2(int sig)
{
	(void)sig;
	handled++;
}

__attribute__((noinline)) static void send_twice_while_blocked(void)
{
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR2);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) < 0) {
		perror("sigaction");
		return 1;
	}
	for (long i = 0; i < rounds; i++)
		send_twice_while_blocked();
	printf("sig_pending: rounds %ld, handled %ld\n", rounds, (long)handled);
	return handled == rounds ? 0 : 1;
}
