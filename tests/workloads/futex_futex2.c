/*
 * futex_futex2 N M: the futex2 system calls.  N futex_wake calls on the
 * global word futex2_word (nobody waits: each returns 0), then M
 * futex_waitv calls on a two-entry array on the stack whose expected
 * values never match (each fails at once with EAGAIN).  Ground truth for
 * the futex collector: futex_wake = N on futex2_word, futex_waitv = M with
 * M EAGAIN.  It prints "wake N waitv M eagain E"; on a kernel without these
 * calls it prints why and exits 77.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef SYS_futex_wake
#define SYS_futex_wake 454 /* Linux 6.7 */
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE 128
#endif

uint32_t futex2_word;
uint32_t futex2_other = 5;

__attribute__((noinline)) static long wake_all(long n)
{
	long failed = 0;
	for (long i = 0; i < n; i++)
		if (syscall(SYS_futex_wake, &futex2_word, 0xfffffffful, 1, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE) < 0)
			failed++;
	return failed;
}

__attribute__((noinline)) static long waitv_mismatched(long m)
{
	struct futex_waitv waiters[2] = {
		{ .val = 1, .uaddr = (uintptr_t)&futex2_word, .flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE },
		{ .val = 1, .uaddr = (uintptr_t)&futex2_other, .flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE },
	};
	long eagain = 0;
	for (long i = 0; i < m; i++)
		if (syscall(SYS_futex_waitv, waiters, 2, 0, NULL, 0) < 0 && errno == EAGAIN)
			eagain++;
	return eagain;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long m = argc > 2 ? atol(argv[2]) : 50;
	if (syscall(SYS_futex_wake, &futex2_word, 0xfffffffful, 1, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE) < 0 && errno == ENOSYS) {
		printf("no futex_wake system call in this kernel\n");
		return 77;
	}
	long failed = wake_all(n - 1) ; /* the probe above was the first */
	long eagain = waitv_mismatched(m);
	printf("wake %ld waitv %ld eagain %ld\n", n, m, eagain);
	return failed ? 1 : 0;
}
