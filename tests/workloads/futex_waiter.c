/*
 * futex_waiter K T: a waiter thread blocks K times on the global word gate,
 * which the main thread opens every T ms (stores 1, FUTEX_WAKE_PRIVATE) and
 * the waiter closes again (stores 0) after each wait.  The waits are
 * FUTEX_WAIT_PRIVATE calls made by wait_on_gate() itself: glibc is built
 * without frame pointers, so a callchain through libc's syscall() would
 * lose the function that called it.
 *
 * Ground truth for the futex collector: about K waits of about T ms each on
 * gate, on a futex-wait stack through wait_on_gate().  A wait can return
 * early (EAGAIN when the gate opened between the check and the call, or a
 * spurious wakeup), so the waiter counts what it did and prints
 * "waits W blocked B eagain E opened K" with W the FUTEX_WAIT calls made,
 * B those that returned 0 and E those that failed with EAGAIN.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

atomic_int gate;

static long raw_futex(atomic_int *word, int op, int val)
{
#if defined(__x86_64__)
	long ret;
	register void *timeout __asm__("r10") = NULL;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_futex), "D"(word), "S"((long)op), "d"((long)val), "r"(timeout)
			 : "rcx", "r11", "memory");
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
#else
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
#endif
}

struct tally {
	int calls, blocked, eagain;
};

__attribute__((noinline)) static void wait_on_gate(struct tally *t)
{
	while (atomic_load(&gate) == 0) {
		t->calls++;
		long ret = raw_futex(&gate, FUTEX_WAIT_PRIVATE, 0);
		if (ret == 0)
			t->blocked++;
		else if (errno == EAGAIN)
			t->eagain++;
	}
	atomic_store(&gate, 0);
}

static int rounds;

static void *waiter(void *arg)
{
	struct tally *t = arg;
	for (int i = 0; i < rounds; i++)
		wait_on_gate(t);
	return NULL;
}

__attribute__((noinline)) static void open_gate(void)
{
	atomic_store(&gate, 1);
	raw_futex(&gate, FUTEX_WAKE_PRIVATE, 1);
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 20;
	long period_ms = argc > 2 ? atol(argv[2]) : 10;
	struct tally t = { 0 };
	pthread_t th;
	if (pthread_create(&th, NULL, waiter, &t) != 0)
		return 1;
	struct timespec ts = { period_ms / 1000, (period_ms % 1000) * 1000000L };
	for (int i = 0; i < rounds; i++) {
		nanosleep(&ts, NULL);
		open_gate();
		while (atomic_load(&gate) != 0) /* the waiter closes it before the next round */
			sched_yield();
	}
	pthread_join(th, NULL);
	printf("waits %d blocked %d eagain %d opened %d\n", t.calls, t.blocked, t.eagain, rounds);
	return 0;
}
