/*
 * test_workload.c: the recorder's signal handling (profiler/workload.c).
 * Each criterion test runs in a process of its own, so the handlers it
 * installs stay there.
 */
#include <signal.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/workload.h"

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
