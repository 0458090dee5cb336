/*
 * test_workload.c: the recorder's signal handling (profiler/commands/workload.c).
 * Each criterion test runs in a process of its own, so the handlers it
 * installs stay there.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/commands/workload.h"

/*
 * An interrupt that comes while the drain loop has the signals blocked
 * reaches its handler at the next workload_take_pending_signals(), not only
 * when a ppoll() returns EINTR (which a ring that is never empty prevents).
 */
Test(workload, a_pending_interrupt_is_taken_without_a_wait)
{
	struct workload w;
	workload_none(&w);
	cr_assert_eq(workload_interrupt_signal(), 0);
	cr_assert_eq(kill(getpid(), SIGTERM), 0);
	sigset_t pending;
	cr_assert_eq(sigpending(&pending), 0);
	cr_assert(sigismember(&pending, SIGTERM), "SIGTERM should wait, blocked, for the drain loop");
	cr_assert_eq(workload_interrupt_signal(), 0, "no handler ran yet");
	workload_take_pending_signals(&w);
	cr_assert_eq(workload_interrupt_signal(), SIGTERM);
	cr_assert_eq(sigpending(&pending), 0);
	cr_assert_not(sigismember(&pending, SIGTERM));
	/* and the signals are blocked again for the rest of the loop */
	sigset_t now;
	cr_assert_eq(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	cr_assert(sigismember(&now, SIGINT) && sigismember(&now, SIGCHLD));
	/* nothing pending: nothing happens */
	workload_take_pending_signals(&w);
	cr_assert_eq(workload_interrupt_signal(), SIGTERM);
}

/*
 * The child drops its copies of sigprof's close-on-exec descriptors before
 * it waits for the release (the perf event probes sigprof keeps open must
 * not have their last reference released by the workload's exec), and keeps
 * the ones it inherits on purpose: with the parent's write end of a
 * close-on-exec pipe closed, the read end sees EOF while the child, not yet
 * released, still waits.
 */
Test(workload, the_child_drops_sigprofs_own_descriptors_before_the_release)
{
	int own[2];
	cr_assert_eq(pipe2(own, O_CLOEXEC | O_NONBLOCK), 0);
	char *argv[] = { "true", NULL };
	struct workload w;
	cr_assert_eq(workload_start(&w, argv), 0);
	close(own[1]);
	char c;
	ssize_t n = -1;
	for (int i = 0; i < 200 && n != 0; i++) {
		n = read(own[0], &c, 1);
		if (n < 0 && errno == EAGAIN)
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	cr_assert_eq(n, 0, "the waiting child still holds the write end of a close-on-exec pipe");
	workload_abort(&w);
	close(own[0]);
}
