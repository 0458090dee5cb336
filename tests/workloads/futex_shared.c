/*
 * futex_shared N [FILE]: two processes (a fork) take N turns each on one
 * futex word in a MAP_SHARED anonymous mapping (or of FILE, made a page
 * long), with the shared (not private)
 * futex commands: each waits (FUTEX_WAIT) while the word is not its turn
 * and, after its turn, advances the word and wakes the other
 * (FUTEX_WAKE).  The kernel keys the word by its mapping's object and
 * offset, so both processes' waiters and wakers are on one word.  Each
 * process counts its own calls; the parent prints the totals of both,
 * "waits W wakes K pids PARENT CHILD", for the futex collector's ground
 * truth: one word row with WAIT = W and WAKE = K, used by the two pids.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared_page {
	_Atomic uint32_t turn;     /* the futex word: even is the parent's turn, odd the child's */
	long child_waits, child_wakes;
};

static long futex_call(_Atomic uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, 0);
}

/* n turns of one side (first is 0 for the parent, 1 for the child); counts its calls */
__attribute__((noinline)) static void take_turns(struct shared_page *page, long n, uint32_t first, long *waits,
						 long *wakes)
{
	for (long i = 0; i < n; i++) {
		uint32_t mine = first + 2 * (uint32_t)i, now;
		while ((now = atomic_load(&page->turn)) != mine) {
			futex_call(&page->turn, FUTEX_WAIT, now);
			(*waits)++;
		}
		atomic_store(&page->turn, mine + 1);
		futex_call(&page->turn, FUTEX_WAKE, 1);
		(*wakes)++;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	/* FILE: the page is a shared mapping of that file (created, a page long), named by it in the report */
	int fd = -1;
	if (argc > 2 && ((fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 || ftruncate(fd, 4096) != 0)) {
		perror(argv[2]);
		return 1;
	}
	struct shared_page *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		long waits = 0, wakes = 0;
		take_turns(page, n, 1, &waits, &wakes);
		page->child_waits = waits;
		page->child_wakes = wakes;
		return 0;
	}
	long waits = 0, wakes = 0;
	take_turns(page, n, 0, &waits, &wakes);
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("waits %ld wakes %ld pids %d %d\n", waits + page->child_waits, wakes + page->child_wakes, (int)getpid(),
	       (int)child);
	return 0;
}
