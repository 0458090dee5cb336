/*
 * paths.c: the path rules (paths.h, docs/paths.md).
 *
 * The table names the kernel and libc functions that only run on one path.
 * Shared helpers (futex_hash, get_futex_key, _raw_spin_lock, ...) are left
 * out on purpose: a sample in them takes the path of the nearest named
 * caller, so a futex_hash under futex_wait is futex-wait.  Patterns are
 * globs, matched once per distinct frame (the report caches the result).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/paths.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

static const char *const path_names[PATH_COUNT] = {
	[PATH_SIGRETURN] = "sigreturn",
	[PATH_SIGNAL_DELIVER] = "signal-deliver",
	[PATH_SIGNAL_GENERATE] = "signal-generate",
	[PATH_FUTEX_WAIT] = "futex-wait",
	[PATH_FUTEX_WAKE] = "futex-wake",
	[PATH_FUTEX_REQUEUE] = "futex-requeue",
	[PATH_FUTEX_OTHER] = "futex-other",
	[PATH_RECORDER] = "recorder",
	[PATH_OTHER] = "other",
};

const struct path_rule builtin_path_rules[] = {
	/* sigreturn: the rt_sigreturn system call and what only it calls; libc's trampoline */
	{ "__restore_rt", PATH_SIGRETURN },
	{ "__x64_sys_rt_sigreturn", PATH_SIGRETURN },
	{ "__ia32_sys_rt_sigreturn", PATH_SIGRETURN },
	{ "__ia32_compat_sys_*sigreturn", PATH_SIGRETURN },
	{ "__x32_compat_sys_rt_sigreturn", PATH_SIGRETURN },
	{ "__arm64_sys_rt_sigreturn", PATH_SIGRETURN },
	{ "__do_sys_rt_sigreturn", PATH_SIGRETURN },
	{ "sys_rt_sigreturn", PATH_SIGRETURN },
	{ "restore_sigcontext", PATH_SIGRETURN },
	{ "restore_altstack", PATH_SIGRETURN },
	{ "fpu__restore_sig", PATH_SIGRETURN },
	{ "__fpu_restore_sig", PATH_SIGRETURN },
	/* signal-deliver: on the way back to user mode, a pending signal is dequeued and a frame built */
	{ "arch_do_signal_or_restart", PATH_SIGNAL_DELIVER },
	{ "do_signal", PATH_SIGNAL_DELIVER },
	{ "get_signal", PATH_SIGNAL_DELIVER },
	{ "dequeue_signal", PATH_SIGNAL_DELIVER },
	{ "handle_signal", PATH_SIGNAL_DELIVER },
	{ "setup_rt_frame", PATH_SIGNAL_DELIVER },
	{ "x64_setup_rt_frame", PATH_SIGNAL_DELIVER },
	{ "get_sigframe", PATH_SIGNAL_DELIVER },
	{ "copy_fpstate_to_sigframe", PATH_SIGNAL_DELIVER },
	{ "signal_setup_done", PATH_SIGNAL_DELIVER },
	/* signal-generate: kill/tgkill/sigqueue and timers queueing a signal */
	{ "__send_signal_locked", PATH_SIGNAL_GENERATE },
	{ "send_signal_locked", PATH_SIGNAL_GENERATE },
	{ "__send_signal", PATH_SIGNAL_GENERATE },
	{ "send_signal", PATH_SIGNAL_GENERATE },
	{ "send_sigqueue", PATH_SIGNAL_GENERATE },
	{ "posixtimer_send_sigqueue", PATH_SIGNAL_GENERATE },
	{ "posix_timer_event", PATH_SIGNAL_GENERATE },
	{ "do_send_sig_info", PATH_SIGNAL_GENERATE },
	{ "group_send_sig_info", PATH_SIGNAL_GENERATE },
	{ "kill_pid_info*", PATH_SIGNAL_GENERATE },
	{ "kill_something_info", PATH_SIGNAL_GENERATE },
	{ "do_send_specific", PATH_SIGNAL_GENERATE },
	{ "do_tkill", PATH_SIGNAL_GENERATE },
	{ "complete_signal", PATH_SIGNAL_GENERATE },
	{ "force_sig_info_to_task", PATH_SIGNAL_GENERATE },
	{ "__x64_sys_kill", PATH_SIGNAL_GENERATE },
	{ "__x64_sys_tkill", PATH_SIGNAL_GENERATE },
	{ "__x64_sys_tgkill", PATH_SIGNAL_GENERATE },
	{ "__x64_sys_rt_sigqueueinfo", PATH_SIGNAL_GENERATE },
	{ "__x64_sys_rt_tgsigqueueinfo", PATH_SIGNAL_GENERATE },
	{ "__x64_sys_pidfd_send_signal", PATH_SIGNAL_GENERATE },
	{ "kill", PATH_SIGNAL_GENERATE },
	{ "raise", PATH_SIGNAL_GENERATE },
	{ "tgkill", PATH_SIGNAL_GENERATE },
	{ "pthread_kill*", PATH_SIGNAL_GENERATE },
	{ "sigqueue", PATH_SIGNAL_GENERATE },
	/* futex-wait: the wait operations, kernel and libc */
	{ "futex_wait", PATH_FUTEX_WAIT },
	{ "__futex_wait", PATH_FUTEX_WAIT },
	{ "futex_wait_setup", PATH_FUTEX_WAIT },
	{ "futex_wait_queue", PATH_FUTEX_WAIT },
	{ "futex_wait_queue_me", PATH_FUTEX_WAIT },
	{ "futex_wait_multiple", PATH_FUTEX_WAIT },
	{ "futex_wait_multiple_setup", PATH_FUTEX_WAIT },
	{ "futex_wait_requeue_pi", PATH_FUTEX_WAIT },
	{ "__x64_sys_futex_wait", PATH_FUTEX_WAIT },
	{ "__x64_sys_futex_waitv", PATH_FUTEX_WAIT },
	{ "__lll_lock_wait", PATH_FUTEX_WAIT },
	{ "__lll_lock_wait_private", PATH_FUTEX_WAIT },
	{ "__futex_abstimed_wait*", PATH_FUTEX_WAIT },
	{ "__GI___futex_abstimed_wait*", PATH_FUTEX_WAIT },
	/* futex-wake */
	{ "futex_wake", PATH_FUTEX_WAKE },
	{ "futex_wake_op", PATH_FUTEX_WAKE },
	{ "__x64_sys_futex_wake", PATH_FUTEX_WAKE },
	{ "__lll_lock_wake", PATH_FUTEX_WAKE },
	{ "__lll_lock_wake_private", PATH_FUTEX_WAKE },
	/* futex-requeue */
	{ "futex_requeue", PATH_FUTEX_REQUEUE },
	{ "requeue_futex", PATH_FUTEX_REQUEUE },
	{ "requeue_pi_wake_futex", PATH_FUTEX_REQUEUE },
	{ "futex_proxy_trylock_atomic", PATH_FUTEX_REQUEUE },
	{ "__x64_sys_futex_requeue", PATH_FUTEX_REQUEUE },
	/* futex-other: PI locks, and the syscall entry when nothing nearer the leaf named the op */
	{ "futex_lock_pi", PATH_FUTEX_OTHER },
	{ "futex_lock_pi_atomic", PATH_FUTEX_OTHER },
	{ "futex_unlock_pi", PATH_FUTEX_OTHER },
	{ "do_futex", PATH_FUTEX_OTHER },
	{ "__x64_sys_futex", PATH_FUTEX_OTHER },
	{ "__ia32_sys_futex*", PATH_FUTEX_OTHER },
	{ "__arm64_sys_futex*", PATH_FUTEX_OTHER },
	/*
	 * recorder: the kernel taking the recording's own samples (a tracepoint
	 * or system call event firing, its callchain walk and stack copy, the
	 * ring buffer write): the workload pays it only because it is recorded
	 */
	{ "perf_tp_event*", PATH_RECORDER },
	{ "__perf_tp_event_target_task", PATH_RECORDER },
	{ "perf_trace_buf_*", PATH_RECORDER },
	{ "perf_trace_run_bpf_submit", PATH_RECORDER },
	{ "perf_syscall_enter", PATH_RECORDER },
	{ "perf_syscall_exit", PATH_RECORDER },
	{ "perf_swevent_*", PATH_RECORDER },
	{ "__perf_event_overflow", PATH_RECORDER },
	{ "perf_event_overflow", PATH_RECORDER },
	{ "perf_event_output*", PATH_RECORDER },
	{ "perf_output_*", PATH_RECORDER },
	{ "perf_prepare_sample", PATH_RECORDER },
	{ "perf_prepare_header", PATH_RECORDER },
	{ "get_perf_callchain", PATH_RECORDER },
	{ "perf_callchain*", PATH_RECORDER },
};
const unsigned builtin_path_rule_count = ARRAY_SIZE(builtin_path_rules);

struct user_rule {
	char *pattern;
	enum path_id path;
};

struct path_rules {
	struct user_rule *user; /* checked first, in the order given */
	size_t nuser, cap;
};

const char *path_name(int path)
{
	return path >= 0 && path < PATH_COUNT ? path_names[path] : "other";
}

int path_from_name(const char *name)
{
	for (int i = 0; i < PATH_COUNT; i++)
		if (strcmp(name, path_names[i]) == 0)
			return i;
	return -1;
}

struct path_rules *path_rules_new(void)
{
	return xcalloc(1, sizeof(struct path_rules));
}

void path_rules_free(struct path_rules *rules)
{
	if (!rules)
		return;
	for (size_t i = 0; i < rules->nuser; i++)
		free(rules->user[i].pattern);
	free(rules->user);
	free(rules);
}

static int add_rule(struct path_rules *rules, const char *pattern, size_t plen, const char *path, char *err,
		    unsigned errlen)
{
	int id = path_from_name(path);
	if (id < 0) {
		snprintf(err, errlen, "unknown path %s (one of sigreturn, signal-deliver, signal-generate, "
				      "futex-wait, futex-wake, futex-requeue, futex-other, recorder, other)", QUOTED(path));
		return -EINVAL;
	}
	if (plen == 0) {
		snprintf(err, errlen, "empty symbol pattern before %s", QUOTED(path));
		return -EINVAL;
	}
	GROW(rules->user, rules->cap, rules->nuser + 1);
	rules->user[rules->nuser++] = (struct user_rule){ xstrndup(pattern, plen), (enum path_id)id };
	return 0;
}

int path_rules_add(struct path_rules *rules, const char *spec, char *err, unsigned errlen)
{
	const char *eq = strrchr(spec, '=');
	if (!eq) {
		snprintf(err, errlen, "path rule %s is not GLOB=PATH", QUOTED(spec));
		return -EINVAL;
	}
	return add_rule(rules, spec, (size_t)(eq - spec), eq + 1, err, errlen);
}

/* A rules file is a few lines a user wrote: past these, it is not one (/dev/zero, a binary). */
#define RULES_FILE_MAX_BYTES (1u << 20)
#define RULES_LINE_MAX 1023

int path_rules_load(struct path_rules *rules, const char *file, char *err, unsigned errlen)
{
	char *text;
	size_t len;
	int ret = read_file_bounded(file, RULES_FILE_MAX_BYTES, &text, &len);
	if (ret == -EFBIG) {
		snprintf(err, errlen, "%s: larger than %u bytes: not a path rules file", file, RULES_FILE_MAX_BYTES);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "%s: %s", file, strerror(-ret));
		return ret;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: holds a NUL byte: not a text file of path rules", file);
		free(text);
		return -EINVAL;
	}
	char pattern[512], path[64], extra[8];
	int lineno = 0;
	for (char *line = text, *next; !ret && *line; line = next) {
		lineno++;
		size_t n = strcspn(line, "\n");
		next = line + n + (line[n] == '\n');
		if (n > RULES_LINE_MAX) {
			snprintf(err, errlen, "%s:%d: line longer than %d bytes", file, lineno, RULES_LINE_MAX);
			ret = -EINVAL;
			break;
		}
		line[n] = '\0';
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		int fields = sscanf(line, "%511s %63s %7s", pattern, path, extra);
		if (fields <= 0)
			continue;
		if (fields != 2) {
			snprintf(err, errlen, "%s:%d: expected 'GLOB PATH'", file, lineno);
			ret = -EINVAL;
			break;
		}
		char why[200];
		ret = add_rule(rules, pattern, strlen(pattern), path, why, sizeof(why));
		if (ret)
			snprintf(err, errlen, "%s:%d: %s", file, lineno, why);
	}
	free(text);
	return ret;
}

static int match_name(const struct path_rules *rules, const char *symbol)
{
	for (size_t i = 0; rules && i < rules->nuser; i++)
		if (fnmatch(rules->user[i].pattern, symbol, 0) == 0)
			return (int)rules->user[i].path;
	for (unsigned i = 0; i < builtin_path_rule_count; i++)
		if (fnmatch(builtin_path_rules[i].pattern, symbol, 0) == 0)
			return (int)builtin_path_rules[i].path;
	return -1;
}

/* Compiler clones (foo.isra.0, foo.constprop.0, foo.cold) are on the path of foo. */
int path_rules_match(const struct path_rules *rules, const char *symbol)
{
	if (!symbol)
		return -1;
	int path = match_name(rules, symbol);
	const char *dot = strchr(symbol, '.');
	if (path < 0 && dot && dot != symbol && dot - symbol < 256) {
		char base[256];
		memcpy(base, symbol, (size_t)(dot - symbol));
		base[dot - symbol] = '\0';
		path = match_name(rules, base);
	}
	return path;
}
