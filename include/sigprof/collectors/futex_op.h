/*
 * futex_op.h: the futex collector's op decoder, for collectors/futex*.c,
 * `sigprof stat` and their tests.
 *
 * It names the futex(2) operation word (WAIT_BITSET|PRIVATE) and the
 * operations of the futex2 system calls (futex_wait, futex_wake,
 * futex_requeue, futex_waitv), says of each op its path, whether it blocks
 * and its stack's role, and builds the tracepoint filter that selects one
 * futex(2) command.  Nothing here knows a recording or a report.
 */
#ifndef SIGPROF_FUTEX_OP_H
#define SIGPROF_FUTEX_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* futex(2) commands keep their kernel values; the futex2 system calls follow. */
enum futex_op_id {
	FOP_WAIT = 0,
	FOP_WAKE = 1,
	FOP_FD = 2, /* removed in Linux 2.6.26; the kernel answers ENOSYS */
	FOP_REQUEUE = 3,
	FOP_CMP_REQUEUE = 4,
	FOP_WAKE_OP = 5,
	FOP_LOCK_PI = 6,
	FOP_UNLOCK_PI = 7,
	FOP_TRYLOCK_PI = 8,
	FOP_WAIT_BITSET = 9,
	FOP_WAKE_BITSET = 10,
	FOP_WAIT_REQUEUE_PI = 11,
	FOP_CMP_REQUEUE_PI = 12,
	FOP_LOCK_PI2 = 13,
	FOP_SYS_WAIT,    /* the futex_wait system call */
	FOP_SYS_WAKE,    /* futex_wake */
	FOP_SYS_REQUEUE, /* futex_requeue */
	FOP_SYS_WAITV,   /* futex_waitv */
	FOP_UNKNOWN,     /* a futex(2) command this decoder does not know */
	FOP_COUNT,
};

#define FUTEX_OP_PRIVATE_FLAG 128u
#define FUTEX_OP_CLOCK_REALTIME 256u

struct futex_op {
	enum futex_op_id id;
	bool private_flag;   /* FUTEX_PRIVATE_FLAG (futex2: FUTEX2_PRIVATE) */
	bool clock_realtime; /* FUTEX_CLOCK_REALTIME (futex2: a timeout on CLOCK_REALTIME) */
	uint32_t raw;        /* the op word as the program passed it */
};

/* Decode a futex(2) op word: command and flags apart. */
struct futex_op futex_op_decode(uint32_t op);
/* "WAIT", "CMP_REQUEUE_PI", "futex_waitv", "UNKNOWN". */
const char *futex_op_name(enum futex_op_id id);
/* The whole op: "WAIT_BITSET|PRIVATE|CLOCK_REALTIME", "OP_0x2a|PRIVATE" for an unknown command. */
const char *futex_op_format(const struct futex_op *op, char *buf, size_t len);
/* The path an op's samples are charged to (PATH_FUTEX_*; docs/paths.md). */
int futex_op_path(enum futex_op_id id);
/* Whether an op may block: its entry-to-exit time is blocking time. */
bool futex_op_blocks(enum futex_op_id id);

enum futex_role {
	FUTEX_ROLE_WAITER, /* its stack is a waiter's: waits, PI locks */
	FUTEX_ROLE_WAKER,  /* a waker's: wakes, requeues, PI unlock */
	FUTEX_ROLE_NONE,   /* TRYLOCK_PI, FD, unknown */
};
enum futex_role futex_op_role(enum futex_op_id id);

/* "EAGAIN", "ETIMEDOUT", "ERESTARTSYS" (kernel-internal 512..516), or "E<n>". */
const char *futex_errno_name(int err, char *buf, size_t len);

/*
 * The kernel's tracepoint filter that selects the futex(2) calls of
 * command cmd, whatever their PRIVATE and CLOCK_REALTIME flags (the kernel
 * decodes the command as op & ~(PRIVATE | CLOCK_REALTIME)).  Its grammar
 * has no arithmetic ("(op & 127) == 0" is refused as "Too many terms"), so
 * the four flag combinations are listed.
 */
void futex_op_filter(unsigned cmd, char *buf, size_t len);

#endif
