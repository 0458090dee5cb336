/*
 * futex_op.c: the op decoder of the futex collector (include/sigprof/collectors/futex_op.h).
 *
 * It names the futex(2) operation word (WAIT_BITSET|PRIVATE) and the
 * operations of the futex2 system calls (futex_wait, futex_wake,
 * futex_requeue, futex_waitv), and says of each op the path its samples are
 * charged to, whether it blocks and whether its stack is a waiter's or a
 * waker's.  It knows nothing of perf records or of a recording, so the
 * tracker, the report and `sigprof stat` (its per-command tracepoint
 * filters) all build on it alone.
 */
#include <stdio.h>
#include <string.h>

#include "sigprof/collectors/futex_op.h"
#include "sigprof/model/paths.h"

#include "futex_internal.h"

/* ---- the op decoder ---- */

static const char *const op_names[FOP_COUNT] = {
	[FOP_WAIT] = "WAIT",
	[FOP_WAKE] = "WAKE",
	[FOP_FD] = "FD",
	[FOP_REQUEUE] = "REQUEUE",
	[FOP_CMP_REQUEUE] = "CMP_REQUEUE",
	[FOP_WAKE_OP] = "WAKE_OP",
	[FOP_LOCK_PI] = "LOCK_PI",
	[FOP_UNLOCK_PI] = "UNLOCK_PI",
	[FOP_TRYLOCK_PI] = "TRYLOCK_PI",
	[FOP_WAIT_BITSET] = "WAIT_BITSET",
	[FOP_WAKE_BITSET] = "WAKE_BITSET",
	[FOP_WAIT_REQUEUE_PI] = "WAIT_REQUEUE_PI",
	[FOP_CMP_REQUEUE_PI] = "CMP_REQUEUE_PI",
	[FOP_LOCK_PI2] = "LOCK_PI2",
	[FOP_SYS_WAIT] = "futex_wait",
	[FOP_SYS_WAKE] = "futex_wake",
	[FOP_SYS_REQUEUE] = "futex_requeue",
	[FOP_SYS_WAITV] = "futex_waitv",
	[FOP_UNKNOWN] = "UNKNOWN",
};

struct futex_op futex_op_decode(uint32_t op)
{
	uint32_t cmd = op & ~(FUTEX_OP_PRIVATE_FLAG | FUTEX_OP_CLOCK_REALTIME);
	return (struct futex_op){
		.id = cmd <= FOP_LOCK_PI2 ? (enum futex_op_id)cmd : FOP_UNKNOWN,
		.private_flag = op & FUTEX_OP_PRIVATE_FLAG,
		.clock_realtime = op & FUTEX_OP_CLOCK_REALTIME,
		.raw = op,
	};
}

const char *futex_op_name(enum futex_op_id id)
{
	return (unsigned)id < FOP_COUNT ? op_names[id] : "UNKNOWN";
}

const char *futex_op_format(const struct futex_op *op, char *buf, size_t len)
{
	uint32_t cmd = op->raw & ~(FUTEX_OP_PRIVATE_FLAG | FUTEX_OP_CLOCK_REALTIME);
	int n = op->id == FOP_UNKNOWN ? snprintf(buf, len, "OP_0x%x", cmd)
				      : snprintf(buf, len, "%s", futex_op_name(op->id));
	if (n >= 0 && (size_t)n < len && op->private_flag)
		n += snprintf(buf + n, len - (size_t)n, "|PRIVATE");
	if (n >= 0 && (size_t)n < len && op->clock_realtime)
		snprintf(buf + n, len - (size_t)n, "|CLOCK_REALTIME");
	return buf;
}

int futex_op_path(enum futex_op_id id)
{
	switch (id) {
	case FOP_WAIT:
	case FOP_WAIT_BITSET:
	case FOP_WAIT_REQUEUE_PI:
	case FOP_SYS_WAIT:
	case FOP_SYS_WAITV:
		return PATH_FUTEX_WAIT;
	case FOP_WAKE:
	case FOP_WAKE_BITSET:
	case FOP_WAKE_OP:
	case FOP_SYS_WAKE:
		return PATH_FUTEX_WAKE;
	case FOP_REQUEUE:
	case FOP_CMP_REQUEUE:
	case FOP_CMP_REQUEUE_PI:
	case FOP_SYS_REQUEUE:
		return PATH_FUTEX_REQUEUE;
	default:
		return PATH_FUTEX_OTHER;
	}
}

bool futex_op_blocks(enum futex_op_id id)
{
	switch (id) {
	case FOP_WAIT:
	case FOP_WAIT_BITSET:
	case FOP_WAIT_REQUEUE_PI:
	case FOP_LOCK_PI:
	case FOP_LOCK_PI2:
	case FOP_SYS_WAIT:
	case FOP_SYS_WAITV:
		return true;
	default:
		return false;
	}
}

enum futex_role futex_op_role(enum futex_op_id id)
{
	if (futex_op_blocks(id))
		return FUTEX_ROLE_WAITER;
	switch (id) {
	case FOP_WAKE:
	case FOP_WAKE_BITSET:
	case FOP_WAKE_OP:
	case FOP_REQUEUE:
	case FOP_CMP_REQUEUE:
	case FOP_CMP_REQUEUE_PI:
	case FOP_UNLOCK_PI:
	case FOP_SYS_WAKE:
	case FOP_SYS_REQUEUE:
		return FUTEX_ROLE_WAKER;
	default:
		return FUTEX_ROLE_NONE;
	}
}

const char *futex_errno_name(int err, char *buf, size_t len)
{
	/* The kernel's restart codes never reach user space but do reach sys_exit. */
	static const char *const restart[] = { "ERESTARTSYS", "ERESTARTNOINTR", "ERESTARTNOHAND", "ENOIOCTLCMD",
					       "ERESTART_RESTARTBLOCK" };
	const char *name = NULL;
	if (err >= 512 && err <= 516)
		name = restart[err - 512];
	else if (err > 0 && err < 512)
		name = strerrorname_np(err);
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "E%d", err);
	return buf;
}

/* The system call an op is made with: FOP_SYS_* for futex2, FOP_UNKNOWN for futex(2). */
enum futex_op_id futex_op_syscall(enum futex_op_id id)
{
	return id >= FOP_SYS_WAIT && id <= FOP_SYS_WAITV ? id : FOP_UNKNOWN;
}

void futex_op_filter(unsigned cmd, char *buf, size_t len)
{
	unsigned p = FUTEX_OP_PRIVATE_FLAG, r = FUTEX_OP_CLOCK_REALTIME;
	snprintf(buf, len, "op == %u || op == %u || op == %u || op == %u", cmd, cmd | p, cmd | r, cmd | p | r);
}
