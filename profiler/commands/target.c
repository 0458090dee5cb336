/*
 * target.c: the targets record and stat attach to (target.h).
 *
 * Resolving a target reads /proc once, at attach time: every thread of
 * each -p process (perf_event_open follows one task, and inherit only what
 * it creates later, so a process's existing threads each need their own
 * event), the process of each -t thread.  Synthesizing writes what the
 * kernel would have said had sigprof been there from the start: a COMM
 * record for each thread and an MMAP2 record for each mapping, from
 * /proc/PID/task/TID/comm and /proc/PID/maps (synthesize_process(), as
 * for a --switch-output piece).  Their sample_id time is 0: the loader
 * replays records in time order, so these come before every sample, and a
 * mapping the process makes after attach arrives as the kernel's own MMAP2
 * record, later.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sigprof/commands/synthesize.h"
#include "sigprof/commands/target.h"
#include "sigprof/commands/workload_cgroup.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

#define MAX_TARGET_CPUS 4096

bool target_given(const struct attach_target *t)
{
	return t->pid_list || t->tid_list || t->cpu_list || t->cgroup || t->all_cpus;
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* "1234,5678": each a positive pid.  -EINVAL with the item in err. */
/* Whether v is in list: a pid or tid named twice (-p X,X) is one target, its events opened once. */
static bool contains(const pid_t *list, size_t n, pid_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

static int parse_pid_list(const char *text, const char *opt, pid_t **out, size_t *n, char *err, size_t errlen)
{
	size_t cap = 0;
	const char *p = text;
	do {
		size_t len = strcspn(p, ",");
		char item[32];
		uint64_t v;
		snprintf(item, sizeof(item), "%.*s", (int)(len < sizeof(item) - 1 ? len : sizeof(item) - 1), p);
		if (len == 0) {
			snprintf(err, errlen, "%s %s: an empty item in the list", opt, QUOTED(text));
			return -EINVAL;
		}
		if (len >= sizeof(item) || parse_u64(item, 1, INT32_MAX, &v) < 0) {
			snprintf(err, errlen, "%s %s: %s is not a process or thread id", opt, QUOTED(text), QUOTED(item));
			return -EINVAL;
		}
		if (!contains(*out, *n, (pid_t)v)) {
			GROW(*out, cap, *n + 1);
			(*out)[(*n)++] = (pid_t)v;
		}
		if (p[len] != ',')
			break;
		p += len + 1; /* a trailing comma leaves an empty item: an error */
	} while (1);
	return 0;
}

int target_threads_of(pid_t pid, pid_t **tids, size_t *n, size_t *cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	struct dirent *de;
	size_t seen = 0;
	while ((de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		pid_t tid = (pid_t)atoi(de->d_name);
		seen++;
		if (contains(*tids, *n, tid))
			continue; /* a thread named twice opens its events once */
		GROW(*tids, *cap, *n + 1);
		(*tids)[(*n)++] = tid;
	}
	closedir(d);
	return seen ? 0 : -ESRCH;
}

/* The process (Tgid) of thread tid, from /proc/TID/status: -ESRCH when there is none. */
static pid_t process_of(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	size_t len;
	char *text = read_whole_file(path, &len);
	if (!text)
		return -ESRCH;
	const char *tgid = strstr(text, "\nTgid:");
	pid_t pid = tgid ? (pid_t)atoi(tgid + 6) : -ESRCH;
	free(text);
	return pid;
}

/* Where the perf_event cgroups live (workload_cgroup.h): the mount point, or -ENOENT. */
static int cgroup_root(char *root, size_t len)
{
	bool v1;
	return cgroup_mount_root(root, len, &v1);
}

static int open_cgroup(struct attach_target *t, char *err, size_t errlen)
{
	char root[4096] = "", path[sizeof(root) + 4096 + 2];
	if (t->cgroup[0] == '/' && access(t->cgroup, F_OK) == 0) {
		snprintf(path, sizeof(path), "%s", t->cgroup);
	} else if (cgroup_root(root, sizeof(root)) == 0) {
		/*
		 * an absolute path whose directory exists (-G /sys/fs/cgroup/nope) is a file system path: named as
		 * it is, not prefixed with the mount
		 */
		const char *slash = strrchr(t->cgroup, '/');
		char *parent = slash && slash > t->cgroup ? xstrndup(t->cgroup, (size_t)(slash - t->cgroup)) : NULL;
		bool file_system_path = parent && strcmp(parent, "/") && access(parent, F_OK) == 0;
		free(parent);
		if (file_system_path)
			snprintf(path, sizeof(path), "%s", t->cgroup);
		else
			snprintf(path, sizeof(path), "%s/%s", root, t->cgroup[0] == '/' ? t->cgroup + 1 : t->cgroup);
	} else {
		snprintf(err, errlen, "-G %s: no cgroup file system is mounted", QUOTED(t->cgroup));
		return -ENOENT;
	}
	t->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->cgroup_fd < 0) {
		int e = -errno;
		snprintf(err, errlen, "-G %s: cannot open %s: %s", QUOTED(t->cgroup), QUOTED(path), strerror(-e));
		return e;
	}
	/* any other directory opens too, and the kernel then refuses every event with EBADF */
	struct statfs fs;
	if (fstatfs(t->cgroup_fd, &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC && fs.f_type != CGROUP_SUPER_MAGIC) {
		snprintf(err, errlen, "-G %s: %s is not a cgroup directory (give a path under the cgroup file system, %s)",
			 QUOTED(t->cgroup), QUOTED(path), cgroup_root(root, sizeof(root)) == 0 ? root : "not mounted");
		close(t->cgroup_fd);
		t->cgroup_fd = -1;
		return -ENOTDIR;
	}
	return 0;
}

/* Whether this process has capability bit cap in its effective set (/proc/self/status's CapEff). */
static bool has_capability(int cap)
{
	char *status = NULL;
	size_t len;
	if (geteuid() == 0)
		return true;
	if (read_file_bounded("/proc/self/status", 1 << 16, &status, &len) < 0)
		return false;
	const char *eff = strstr(status, "\nCapEff:");
	unsigned long long caps = eff ? strtoull(eff + 8, NULL, 16) : 0;
	free(status);
	return caps & (1ull << cap);
}

/*
 * Whether this process may attach to task id (of process pid), named by
 * option (-p, -t): perf_event_open() of another's task needs ptrace read
 * access to it (the kernel's ptrace_may_access(): our real user is the
 * target's real, effective and saved user, or CAP_SYS_PTRACE), whatever
 * kernel.perf_event_paranoid allows.  0, or -EPERM with the cause in err.
 */
static int check_attach_allowed(const char *option, pid_t id, pid_t pid, char *err, size_t errlen)
{
	enum { CAP_SYS_PTRACE_BIT = 19 };
	if (has_capability(CAP_SYS_PTRACE_BIT))
		return 0;
	char path[64], *status = NULL;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file_bounded(path, 1 << 16, &status, &len) < 0)
		return 0; /* gone, or hidden: the open says why */
	const char *line = strstr(status, "\nUid:");
	unsigned ids[3] = { 0 };
	bool read = line && sscanf(line + 5, "%u %u %u", &ids[0], &ids[1], &ids[2]) == 3;
	free(status);
	uid_t me = getuid();
	if (!read || (ids[0] == me && ids[1] == me && ids[2] == me))
		return 0;
	unsigned owner = ids[0] != me ? ids[0] : ids[1] != me ? ids[1] : ids[2];
	struct passwd *pw = getpwuid(owner);
	snprintf(err, errlen, "%s %d: process %d is not yours (it runs as %s%s%u, you as uid %u): attaching needs "
		 "ptrace access to it, which kernel.perf_event_paranoid does not give; run sigprof as its owner or as "
		 "root (or with CAP_SYS_PTRACE)", option, (int)id, (int)pid, pw ? pw->pw_name : "uid ", pw ? ", uid " : "",
		 owner, (unsigned)me);
	return -EPERM;
}

static int resolve_tasks(struct attach_target *t, char *err, size_t errlen)
{
	size_t tid_cap = 0, pid_cap = 0;
	if (t->pid_list) {
		int ret = parse_pid_list(t->pid_list, "-p", &t->pids, &t->npids, err, errlen);
		if (ret < 0)
			return ret;
		pid_cap = t->npids;
		for (size_t i = 0; i < t->npids; i++) {
			ret = target_threads_of(t->pids[i], &t->tids, &t->ntids, &tid_cap);
			if (ret < 0) {
				snprintf(err, errlen, "-p %d: %s", (int)t->pids[i],
					 ret == -ESRCH ? "no such process" : strerror(-ret));
				return ret;
			}
			ret = check_attach_allowed("-p", t->pids[i], t->pids[i], err, errlen);
			if (ret < 0)
				return ret;
		}
	}
	if (t->tid_list) {
		pid_t *named = NULL;
		size_t nnamed = 0;
		int ret = parse_pid_list(t->tid_list, "-t", &named, &nnamed, err, errlen);
		for (size_t i = 0; i < nnamed && ret == 0; i++) {
			pid_t pid = process_of(named[i]);
			if (pid < 0) {
				snprintf(err, errlen, "-t %d: no such thread", (int)named[i]);
				ret = -ESRCH;
				break;
			}
			ret = check_attach_allowed("-t", named[i], pid, err, errlen);
			if (ret < 0)
				break;
			if (!contains(t->tids, t->ntids, named[i])) {
				GROW(t->tids, tid_cap, t->ntids + 1);
				t->tids[t->ntids++] = named[i];
			}
			if (!contains(t->pids, t->npids, pid)) {
				GROW(t->pids, pid_cap, t->npids + 1);
				t->pids[t->npids++] = pid;
			}
		}
		free(named);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int target_resolve(struct attach_target *t, char *err, size_t errlen)
{
	t->cgroup_fd = -1;
	bool tasks = t->pid_list || t->tid_list;
	if (tasks && (t->all_cpus || t->cgroup)) {
		snprintf(err, errlen, "-p and -t follow tasks; -a and -G watch CPUs: give one or the other");
		return -EINVAL;
	}
	if (t->cpu_list && tasks) {
		snprintf(err, errlen, "-C %s: a CPU list goes with -a or -G, not with -p or -t", QUOTED(t->cpu_list));
		return -EINVAL;
	}
	if (t->cpu_list) {
		t->cpus = xcalloc(MAX_TARGET_CPUS, sizeof(int));
		int n = cpu_list_parse(t->cpu_list, t->cpus, MAX_TARGET_CPUS);
		int online[MAX_TARGET_CPUS];
		int nonline = online_cpus(online, MAX_TARGET_CPUS);
		for (int i = 0; i < n; i++) {
			bool ok = false;
			for (int k = 0; k < nonline && !ok; k++)
				ok = online[k] == t->cpus[i];
			if (!ok) {
				snprintf(err, errlen, "-C %s: CPU %d is not online (online: CPUs 0-%d)", QUOTED(t->cpu_list),
					 t->cpus[i], nonline - 1);
				return -EINVAL;
			}
		}
		if (n == 0 || t->cpu_list[strspn(t->cpu_list, "0123456789,-")] != '\0') {
			snprintf(err, errlen, "-C %s: expected a CPU list such as 0,2-3", QUOTED(t->cpu_list));
			return -EINVAL;
		}
		t->ncpus = (size_t)n;
	}
	if (t->cgroup) {
		int ret = open_cgroup(t, err, errlen);
		if (ret < 0)
			return ret;
	}
	int ret = tasks ? resolve_tasks(t, err, errlen) : 0;
	/* one fd per (event, CPU, thread): a process of three hundred threads needs more than 20 000 */
	if (!ret)
		open_files_limit_raise();
	return ret;
}

void target_perf(const struct attach_target *t, struct perf_target *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = -1;
	out->tids = t->tids;
	out->ntids = t->ntids;
	out->inherit = t->ntids > 0;
	out->system_wide = !t->ntids && t->cgroup_fd < 0;
	out->cpus = t->cpus;
	out->ncpus = t->ncpus;
	out->cgroup_fd = t->cgroup_fd;
}

bool target_alive(const struct attach_target *t)
{
	if (!t->ntids)
		return true;
	/* a process whose main thread exited but whose other threads run is still alive: ask each thread */
	for (size_t i = 0; i < t->ntids; i++)
		if (kill(t->tids[i], 0) == 0 || errno == EPERM)
			return true;
	for (size_t i = 0; i < t->npids; i++)
		if (kill(t->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

void target_describe(const struct attach_target *t, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	if (t->pid_list)
		sb_addf(&sb, "-p %s", t->pid_list);
	if (t->tid_list)
		sb_addf(&sb, "%s-t %s", sb.len ? " " : "", t->tid_list);
	if (t->all_cpus)
		sb_addf(&sb, "%s-a", sb.len ? " " : "");
	if (t->cpu_list)
		sb_addf(&sb, "%s-C %s", sb.len ? " " : "", t->cpu_list);
	if (t->cgroup)
		sb_addf(&sb, "%s-G %s", sb.len ? " " : "", t->cgroup);
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}

void target_free(struct attach_target *t)
{
	free(t->pids);
	free(t->tids);
	free(t->cpus);
	if (t->cgroup_fd > 0)
		close(t->cgroup_fd);
	t->pids = t->tids = NULL;
	t->cpus = NULL;
	t->cgroup_fd = -1;
}

/* ---- synthesized records ---- */

int target_synthesize(const struct attach_target *t, struct strbuf *out, uint64_t sample_type, uint64_t id,
		      bool data_mmaps)
{
	if (t->ntids) {
		for (size_t i = 0; i < t->npids; i++)
			synthesize_process(t->pids[i], out, sample_type, id, data_mmaps);
	} else {
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (is_number(de->d_name))
				synthesize_process((pid_t)atoi(de->d_name), out, sample_type, id, data_mmaps);
		if (d)
			closedir(d);
	}
	return 0;
}
