/*
 * workload_cgroup.h: a cgroup of its own for the workload record runs.
 *
 * Followed with inherit, every event of the workload is copied into each
 * thread it creates: the kernel builds each inherited tracepoint event
 * under a global mutex (perf_trace_init), and every read of an inherited
 * counter (the rate bounds' meters, every window) walks the children under
 * the parent's child_mutex, which exiting threads wait for.  With a
 * hundred events that made thread creation 20 times slower
 * (docs/performance.md).  Events of a cgroup are one per event and CPU,
 * nothing inherited: the workload is moved into a new cgroup before it
 * execs, as `perf record -G` follows a cgroup.
 *
 * The cgroup is made inside sigprof's own (the one /proc/self/cgroup names
 * on the hierarchy perf_event uses), so the limits the workload would have
 * had still hold; it is named sigprof-PID (sigprof's pid).  When anything
 * of that fails (no cgroup file system, a read-only one in a container,
 * not allowed, a kernel without perf_event cgroups) the caller follows the
 * workload with inherit, as before, and says why in the file.
 *
 * Layer: commands.
 */
#ifndef SIGPROF_WORKLOAD_CGROUP_H
#define SIGPROF_WORKLOAD_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Where the perf_event cgroups live: the v1 hierarchy holding perf_event
 * when one is mounted (the kernel uses it then), else the cgroup2 mount.
 * 0 with the mount point in root (*v1 set), or -ENOENT.
 */
int cgroup_mount_root(char *root, size_t len, bool *v1);

struct workload_cgroup {
	int fd;              /* the cgroup's directory, the pid argument of its events; -1: none */
	char path[4096 + 64]; /* its directory */
	char parent[4096];   /* the directory it was made in, where tasks left in it go back */
	const char *name;    /* path below the mount ("/sigprof-4242"), for the file and the header */
	size_t root_len;     /* the mount point's length in path */
};

/*
 * Make a cgroup inside sigprof's own and move pid (the workload, blocked
 * before its exec) into it; check that an event opens on it.  0, or -errno
 * with why in err (nothing is left behind then).  The empty cgroups of
 * recorders that no longer run (killed with SIGKILL) are removed first.
 */
int workload_cgroup_enter(struct workload_cgroup *cg, pid_t pid, char *err, size_t errlen);

/*
 * Close it and remove it; tasks still in it (children that outlived the
 * workload) are moved back to the parent first.  0, or -errno with why in
 * err (the directory then stays).  Nothing when cg->fd < 0.
 */
int workload_cgroup_remove(struct workload_cgroup *cg, char *err, size_t errlen);

#endif
