/*
 * workload_cgroup.c: the workload's own cgroup (workload_cgroup.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "sigprof/base/files.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/workload_cgroup.h"
#include "sigprof/kernel/perf.h"

int cgroup_mount_root(char *root, size_t len, bool *v1)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	if (!f)
		return -errno;
	char dev[256], dir[4096], type[64], opts[1024];
	int found = -ENOENT;
	*v1 = false;
	while (fscanf(f, "%255s %4095s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
		bool is_v1 = strcmp(type, "cgroup") == 0 && strstr(opts, "perf_event");
		if (strcmp(type, "cgroup2") == 0 || is_v1) {
			snprintf(root, len, "%s", dir);
			found = 0;
			*v1 = is_v1;
			if (is_v1)
				break; /* v1's perf_event controller wins: the kernel uses it when mounted */
		}
	}
	fclose(f);
	return found;
}

/* Whether the comma-separated list has name. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : p + len;
	}
	return false;
}

/*
 * sigprof's own cgroup on that hierarchy, from /proc/self/cgroup
 * ("0::/user.slice/..." for cgroup2, "5:perf_event:/..." for v1).
 */
static int own_cgroup(bool v1, char *path, size_t len)
{
	size_t text_len;
	char *text = read_whole_file("/proc/self/cgroup", &text_len);
	if (!text)
		return -errno;
	int found = -ENOENT;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *controllers = c1 + 1;
		bool match = v1 ? listed(controllers, "perf_event") : strncmp(line, "0:", 2) == 0 && !*controllers;
		if (match) {
			snprintf(path, len, "%s", c2 + 1);
			found = 0;
			break;
		}
	}
	free(text);
	return found;
}

/* Write pid into dir's cgroup.procs: 0 or -errno. */
static int move_task(const char *dir, pid_t pid)
{
	char file[4096 + 96];
	snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char text[32];
	int n = snprintf(text, sizeof(text), "%d\n", (int)pid);
	int err = write(fd, text, (size_t)n) == n ? 0 : -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

/* Whether an event of the cgroup opens: a kernel without CONFIG_CGROUP_PERF refuses them. */
static int probe_cgroup_event(int cgroup_fd)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
					.config = PERF_COUNT_SW_DUMMY, .disabled = 1 };
	int cpus[1];
	if (online_cpus(cpus, 1) < 1)
		return -ENODEV;
	int fd = sys_perf_event_open(&attr, cgroup_fd, cpus[0], -1, PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* rmdir, again for a while while it is busy: a cgroup whose last task just exited is not empty at once. */
static int remove_dir(const char *path)
{
	for (int tries = 0;; tries++) {
		if (rmdir(path) == 0)
			return 0;
		if (errno != EBUSY || tries == 50)
			return -errno;
		nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
	}
}

/* Whether pid is a sigprof that runs now (its comm starts "sigprof"): its cgroup is in use. */
static bool sigprof_runs(long pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	size_t len;
	char *comm = read_whole_file(path, &len);
	bool runs = comm && strncmp(comm, "sigprof", 7) == 0;
	free(comm);
	return runs;
}

/*
 * The cgroups of recorders that are gone (killed with SIGKILL, which
 * leaves theirs behind): the empty sigprof-PID[-N] beside ours whose PID
 * is no running sigprof.  rmdir removes only an empty cgroup: one that a
 * workload still runs in stays.
 */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "sigprof-", 8) != 0)
			continue;
		char *end;
		long pid = strtol(de->d_name + 8, &end, 10);
		if (end == de->d_name + 8 || (*end && *end != '-') || pid <= 0 || sigprof_runs(pid))
			continue;
		char path[4096 + 300];
		snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		rmdir(path);
	}
	closedir(d);
}

int workload_cgroup_enter(struct workload_cgroup *cg, pid_t pid, char *err, size_t errlen)
{
	cg->fd = -1;
	bool v1;
	char root[2048], own[2048];
	int ret = cgroup_mount_root(root, sizeof(root), &v1);
	if (ret < 0) {
		snprintf(err, errlen, "no cgroup file system holds perf_event");
		return ret;
	}
	if ((ret = own_cgroup(v1, own, sizeof(own))) < 0) {
		snprintf(err, errlen, "/proc/self/cgroup names no %s cgroup", v1 ? "perf_event" : "cgroup2");
		return ret;
	}
	size_t own_len = strlen(own);
	while (own_len && own[own_len - 1] == '/')
		own[--own_len] = '\0';
	snprintf(cg->parent, sizeof(cg->parent), "%s%s", root, own);
	cg->root_len = strlen(root);
	remove_stale(cg->parent);
	for (int n = 1;; n++) {
		if (n == 1)
			snprintf(cg->path, sizeof(cg->path), "%s/sigprof-%d", cg->parent, (int)getpid());
		else
			snprintf(cg->path, sizeof(cg->path), "%s/sigprof-%d-%d", cg->parent, (int)getpid(), n);
		if (mkdir(cg->path, 0755) == 0)
			break;
		ret = -errno;
		if (ret != -EEXIST || n == 100) {
			snprintf(err, errlen, "cannot make %s: %s", cg->path, strerror(-ret));
			return ret;
		}
	}
	cg->name = cg->path + cg->root_len;
	if ((ret = move_task(cg->path, pid)) < 0) {
		snprintf(err, errlen, "cannot move the workload into %s: %s", cg->path, strerror(-ret));
		rmdir(cg->path);
		return ret;
	}
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = cg->fd < 0 ? -errno : probe_cgroup_event(cg->fd);
	if (ret < 0) {
		snprintf(err, errlen, "the kernel opens no event on %s: %s", cg->path, strerror(-ret));
		if (cg->fd >= 0)
			close(cg->fd);
		cg->fd = -1;
		move_task(cg->parent, pid);
		remove_dir(cg->path);
		return ret;
	}
	return 0;
}

int workload_cgroup_remove(struct workload_cgroup *cg, char *err, size_t errlen)
{
	if (cg->fd < 0)
		return 0;
	close(cg->fd);
	cg->fd = -1;
	/* children that outlived the workload: back where the workload came from */
	char file[4096 + 96];
	size_t len;
	snprintf(file, sizeof(file), "%s/cgroup.procs", cg->path);
	char *text = read_whole_file(file, &len);
	if (text) {
		for (char *p = text; *p;) {
			char *end;
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			move_task(cg->parent, (pid_t)pid);
			p = end;
			while (*p == '\n')
				p++;
		}
		free(text);
	}
	int ret = remove_dir(cg->path);
	if (ret < 0)
		snprintf(err, errlen, "cannot remove %s: %s", cg->path, strerror(-ret));
	return ret;
}
