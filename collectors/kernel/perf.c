/*
 * perf.c: opening events, their ring buffers and their counters (perf.h).
 *
 * For every (event, CPU) pair one fd.  On each CPU the first event that
 * opens gets the ring buffer (mmap of 1 + ring_pages pages); every other
 * event on that CPU is redirected into it.  The drain walks record headers
 * only: record does no per-sample work beyond copying.  A session of
 * counters only (stat: ring_pages 0) has no rings, and follows a task with
 * one fd per event on any CPU (cpu -1).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sigprof/kernel/perf.h"
#include "sigprof/kernel/sample.h"
#include "sigprof/base/files.h"
#include "sigprof/base/util.h"

#define MAX_CPUS 4096

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * Probes' fds, kept open until the session that follows has opened its
 * events: the last close of a tracepoint's events waits out an RCU grace
 * period in the kernel (perf_session_close_detached()), 30-50 ms each, and
 * a probe closed at once was that last close.  Closed after the session
 * opens (its events keep the tracepoints), they cost nothing.
 */
static int probe_fds[64];
static size_t nprobe_fds;

static void probe_done(int fd)
{
	if (nprobe_fds < ARRAY_SIZE(probe_fds))
		probe_fds[nprobe_fds++] = fd;
	else
		close(fd);
}

static void probes_close(void)
{
	for (size_t i = 0; i < nprobe_fds; i++)
		close(probe_fds[i]);
	nprobe_fds = 0;
}

static int probe_on(const struct perf_event_attr *attr, pid_t pid, int cpu, const char *filter)
{
	struct perf_event_attr probe = *attr;
	probe.disabled = 1;
	probe.inherit = 0;
	probe.enable_on_exec = 0;
	int fd = sys_perf_event_open(&probe, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fd;
	int err = filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0 ? -errno : 0;
	probe_done(fd);
	return err;
}

int perf_event_probe_filter(const struct perf_event_attr *attr, const char *filter)
{
	return probe_on(attr, 0, -1, filter);
}

int perf_event_probe_cpu(const struct perf_event_attr *attr, int cpu)
{
	return probe_on(attr, -1, cpu, NULL);
}

int perf_event_probe(const struct perf_event_attr *attr)
{
	return perf_event_probe_filter(attr, NULL);
}

int cpu_list_parse(const char *text, int *cpus, int max)
{
	int n = 0;
	const char *p = text;
	for (;;) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0)
			return 0;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return 0;
			p = end;
		}
		for (long c = a; c <= b && n < max; c++)
			cpus[n++] = (int)c;
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

int online_cpus(int *cpus, int max)
{
	size_t len;
	char *text = read_whole_file("/sys/devices/system/cpu/online", &len);
	int n = text ? cpu_list_parse(text, cpus, max) : 0;
	free(text);
	if (n == 0) {
		long conf = sysconf(_SC_NPROCESSORS_ONLN);
		for (int c = 0; c < conf && n < max; c++)
			cpus[n++] = c;
	}
	return n;
}

const char *perf_open_reason(int err, const struct perf_event_attr *attr)
{
	switch (-err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (attr->type == PERF_TYPE_HARDWARE || attr->type == PERF_TYPE_HW_CACHE || attr->type >= 6)
			return "no hardware PMU for it on this machine (a VM without PMU passthrough?)";
		return "this kernel does not support it";
	case EACCES:
	case EPERM:
		/* docs/unprivileged.md: what each setting allows */
		if (attr->type == PERF_TYPE_TRACEPOINT)
			return "permission denied: run as root, give sigprof CAP_PERFMON (setcap cap_perfmon=ep sigprof), "
			       "or allow tracepoints' raw data with sysctl kernel.perf_event_paranoid=-1";
		return "permission denied: run as root, give sigprof CAP_PERFMON (setcap cap_perfmon=ep sigprof), or "
		       "lower kernel.perf_event_paranoid (sysctl kernel.perf_event_paranoid=1: your own processes; 0: "
		       "-a and kernel frames)";
	case EINVAL:
		if (attr && !attr->sample_period) /* counting (stat): nothing about sampling applies */
			return "the kernel rejected its settings (a config, term or modifier its PMU does not take, or "
			       "no such event?)";
		return "the kernel rejected its settings (a frequency above kernel.perf_event_max_sample_rate, or a "
		       "PMU that cannot sample or has no such precision?)";
	case EMFILE:
		return "too many open files: raise the limit with ulimit -n";
	case EBUSY:
		return "the PMU is busy (another tool holds it exclusively)";
	default:
		return strerror(-err);
	}
}

struct cpu_fds {
	int cpu;
	int *fds;          /* one per (event, thread): fds[event * nthreads + thread], -1 when not open */
	int ring_fd;       /* the fd whose buffer this CPU writes into */
	struct ring ring;
	size_t map_len;
};

struct perf_session {
	struct opened_event *events;
	size_t nevents;
	struct cpu_fds *cpus;
	size_t ncpus;
	size_t nthreads;   /* tasks opened per (event, CPU): the target's thread list, else 1 */
};

/* The fd of event e for thread t on CPU c. */
static int *fd_slot(const struct perf_session *s, struct cpu_fds *c, size_t e, size_t t)
{
	return &c->fds[e * s->nthreads + t];
}

static int map_ring(struct cpu_fds *c, unsigned ring_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	for (unsigned pages = ring_pages; pages >= 8; pages /= 2) {
		size_t len = (size_t)page * (1 + pages);
		void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->ring_fd, 0);
		if (base == MAP_FAILED) {
			if (errno == EPERM || errno == ENOMEM)
				continue; /* over perf_event_mlock_kb: try a smaller ring */
			return -errno;
		}
		c->ring.page = base;
		c->ring.data = (unsigned char *)base + page;
		c->ring.size = (uint64_t)page * pages;
		c->map_len = len;
		return 0;
	}
	return -ENOMEM;
}

/* The pid argument of perf_event_open for thread t: the thread, the one task, -1 (every task), or the cgroup fd. */
static pid_t target_pid(const struct perf_target *t, size_t thread, bool system_wide)
{
	if (t->cgroup_fd > 0 && !system_wide)
		return t->cgroup_fd;
	if (system_wide)
		return -1;
	return t->ntids ? t->tids[thread] : t->pid;
}

static int open_one(struct perf_session *s, size_t e, struct cpu_fds *c, size_t thread,
		    const struct perf_target *t)
{
	struct perf_event_attr attr = s->events[e].spec->attr;
	/* a cgroup is a set of tasks on every CPU: the kernel wants pid = its fd and a CPU, no inherit */
	bool cgroup = t->cgroup_fd > 0;
	bool system_wide = t->system_wide || s->events[e].spec->system_wide;
	attr.size = sizeof(attr);
	attr.inherit = system_wide || cgroup ? 0 : t->inherit;
	attr.disabled = 1; /* enabled on exec (task events) or once every event is open (perf_session_open) */
	size_t leader = e;
	while (leader > 0 && s->events[leader].spec->group_with_previous)
		leader--;
	int group_fd = leader != e ? *fd_slot(s, c, leader, thread) : -1;
	if (leader != e && group_fd < 0)
		return -EBADF; /* the leader did not open here */
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (cgroup && !system_wide ? PERF_FLAG_PID_CGROUP : 0);
	int fd = sys_perf_event_open(&attr, target_pid(t, thread, system_wide), c->cpu, group_fd, flags);
	if (fd < 0)
		return fd;
	const char *filter = s->events[e].spec->tracepoint_filter;
	uint64_t id;
	if ((filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) || ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	*fd_slot(s, c, e, thread) = fd;
	struct opened_event *oe = &s->events[e];
	oe->ids[oe->nr_ids++] = id;
	return 0;
}

static int attach_to_ring(struct cpu_fds *c, int fd, unsigned ring_pages)
{
	if (ring_pages == 0)
		return 0; /* counters only */
	if (c->ring_fd < 0) {
		c->ring_fd = fd;
		return map_ring(c, ring_pages);
	}
	return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->ring_fd) < 0 ? -errno : 0;
}

/* Whether the spec's PMU covers cpu (every CPU when it names none; cpu -1: a per-task session). */
static bool spec_covers_cpu(const struct event_spec *spec, int cpu)
{
	static int cpus[MAX_CPUS];
	if (!spec->cpus || !spec->cpus[0] || cpu < 0)
		return true;
	int n = cpu_list_parse(spec->cpus, cpus, MAX_CPUS);
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return n == 0; /* a list that does not parse restricts nothing: the kernel will say */
}

/*
 * Open event e for one (CPU, thread) pair.  A thread of an attached
 * process that exited since the thread list was read (ESRCH) is skipped:
 * the others go on, and the caller says so when none is left.
 */
static int open_on(struct perf_session *s, size_t e, struct cpu_fds *c, size_t thread, const struct perf_target *t,
		   unsigned ring_pages, char *err, size_t errlen)
{
	const struct event_spec *spec = s->events[e].spec;
	bool system_wide = t->system_wide || spec->system_wide;
	if (system_wide && thread > 0)
		return 0; /* one fd per CPU covers every task */
	int ret = open_one(s, e, c, thread, t);
	if (ret == -ESRCH && t->ntids && !system_wide) {
		s->events[e].gone_threads++;
		return 0;
	}
	if (ret < 0) {
		snprintf(err, errlen, "cannot open event %s: %s", spec->name, perf_open_reason(ret, &spec->attr));
		return ret;
	}
	int fd = *fd_slot(s, c, e, thread);
	ret = attach_to_ring(c, fd, ring_pages);
	if (ret < 0)
		snprintf(err, errlen, "cannot map the ring buffer for %s on CPU %d: %s", spec->name, c->cpu,
			 strerror(-ret));
	return ret;
}

static int open_event_everywhere(struct perf_session *s, size_t e, const struct perf_target *t,
				 unsigned ring_pages, char *err, size_t errlen)
{
	struct opened_event *oe = &s->events[e];
	const struct event_spec *spec = oe->spec;
	int ret = 0;
	for (size_t i = 0; i < s->ncpus && !ret; i++) {
		struct cpu_fds *c = &s->cpus[i];
		if (!spec_covers_cpu(spec, c->cpu))
			continue;
		for (size_t th = 0; th < s->nthreads && !ret; th++)
			ret = open_on(s, e, c, th, t, ring_pages, err, errlen);
	}
	if (ret < 0 && spec->optional) {
		for (size_t i = 0; i < s->ncpus; i++) {
			struct cpu_fds *c = &s->cpus[i];
			for (size_t th = 0; th < s->nthreads; th++) {
				int *fd = fd_slot(s, c, e, th);
				if (*fd >= 0 && *fd != c->ring_fd)
					close(*fd);
				if (*fd != c->ring_fd)
					*fd = -1;
			}
		}
		oe->failed = true;
		oe->error = ret;
		oe->nr_ids = 0;
		err[0] = '\0';
		return 0;
	}
	return ret;
}

int perf_session_open(const struct event_spec *specs, size_t n, const struct perf_target *target,
		      unsigned ring_pages, struct perf_session **out, char *err, size_t errlen)
{
	static int cpu_list[MAX_CPUS];
	struct perf_session *s = xcalloc(1, sizeof(*s));
	/*
	 * Inherited events that write records need one ring per CPU, hence one
	 * event per CPU.  Counters alone (no rings) follow the task on any CPU
	 * with one event, as perf stat opens them: a per-CPU task counter is
	 * enabled wherever the task runs but runs only on its CPU, so its
	 * times would read as multiplexing that never happened.
	 */
	bool per_cpu = target->system_wide || target->cgroup_fd > 0 || target->ncpus ||
		       ((target->inherit || target->ntids) && ring_pages);
	for (size_t e = 0; e < n; e++)
		per_cpu = per_cpu || specs[e].system_wide;
	int ncpu = 1;
	if (per_cpu && target->ncpus) {
		ncpu = (int)(target->ncpus < MAX_CPUS ? target->ncpus : MAX_CPUS);
		memcpy(cpu_list, target->cpus, (size_t)ncpu * sizeof(int));
	} else if (per_cpu) {
		ncpu = online_cpus(cpu_list, MAX_CPUS);
	} else {
		cpu_list[0] = -1;
	}
	s->ncpus = (size_t)ncpu;
	s->nthreads = target->ntids ? target->ntids : 1;
	s->cpus = xcalloc(s->ncpus, sizeof(*s->cpus));
	s->nevents = n;
	s->events = xcalloc(n ? n : 1, sizeof(*s->events));
	for (size_t i = 0; i < s->ncpus; i++) {
		s->cpus[i].cpu = cpu_list[i];
		s->cpus[i].ring_fd = -1;
		s->cpus[i].fds = xmalloc((n ? n : 1) * s->nthreads * sizeof(int));
		for (size_t k = 0; k < n * s->nthreads; k++)
			s->cpus[i].fds[k] = -1;
	}
	int ret = 0;
	for (size_t e = 0; e < n && !ret; e++) {
		s->events[e].spec = &specs[e];
		s->events[e].ids = xcalloc(s->ncpus * s->nthreads, sizeof(uint64_t));
		ret = open_event_everywhere(s, e, target, ring_pages, err, errlen);
	}
	/*
	 * An event enabled from the start (system-wide, or attached to tasks
	 * that already run) was opened disabled: enabled before it had a ring,
	 * it would count hits whose samples had nowhere to go.  All of them are
	 * enabled here, once every event is open, in one quick pass: enabled
	 * one by one as they opened, the first events recorded calls for as
	 * long as the others took to open (tens of milliseconds on a loaded
	 * machine), calls that a rate bound's meter, opened later, never saw.
	 */
	for (size_t e = 0; e < n && !ret; e++) {
		if (s->events[e].failed || specs[e].attr.disabled)
			continue;
		for (size_t i = 0; i < s->ncpus && !ret; i++)
			for (size_t th = 0; th < s->nthreads && !ret; th++) {
				int fd = *fd_slot(s, &s->cpus[i], e, th);
				if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
					ret = -errno;
					snprintf(err, errlen, "cannot enable event %s on CPU %d: %s", specs[e].name,
						 s->cpus[i].cpu, strerror(-ret));
				}
			}
	}
	/* every thread of the target exited while we attached: nothing to record */
	for (size_t e = 0; e < n && !ret && target->ntids; e++)
		if (!s->events[e].failed && !specs[e].system_wide && s->events[e].nr_ids == 0 &&
		    s->events[e].gone_threads) {
			snprintf(err, errlen, "every task of the target exited while sigprof attached to it");
			ret = -ESRCH;
		}
	probes_close();
	if (ret < 0) {
		perf_session_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

size_t perf_session_events(const struct perf_session *s, const struct opened_event **events)
{
	*events = s->events;
	return s->nevents;
}

size_t perf_session_poll_fds(const struct perf_session *s, int *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < s->ncpus && n < max; i++)
		if (s->cpus[i].ring.page)
			fds[n++] = s->cpus[i].ring_fd;
	return n;
}

/* Copy len bytes at ring offset pos (modulo size) to dst. */
static void ring_copy(const struct ring *r, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = len < r->size - off ? len : (size_t)(r->size - off);
	memcpy(dst, r->data + off, first);
	memcpy((char *)dst + first, r->data, len - first);
}

static void count_record(const struct ring *r, uint64_t pos, const struct perf_event_header *h,
			 struct ring_stats *stats)
{
	stats->records++;
	stats->bytes += h->size;
	if (h->type == PERF_RECORD_SAMPLE) {
		stats->samples++;
	} else if (h->type == PERF_RECORD_LOST && h->size >= 24) {
		uint64_t lost;
		ring_copy(r, pos + 16, &lost, sizeof(lost));
		stats->lost += lost;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= 16) {
		uint64_t lost;
		ring_copy(r, pos + 8, &lost, sizeof(lost));
		stats->lost_samples += lost;
	}
}

int ring_drain(struct ring *r, ring_sink_fn sink, void *ctx, struct ring_stats *stats)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail;
	uint64_t pos = tail;
	/* Walk whole records; a record the kernel is still writing is not past head. */
	while (head - pos >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		ring_copy(r, pos, &h, sizeof(h));
		if (h.size < sizeof(h) || head - pos < h.size)
			break;
		count_record(r, pos, &h, stats);
		pos += h.size;
	}
	int ret = 0;
	uint64_t done = tail;
	while (done < pos && !ret) {
		uint64_t off = done & (r->size - 1);
		uint64_t len = pos - done;
		if (len > r->size - off)
			len = r->size - off;
		ret = sink(ctx, r->data + off, (size_t)len);
		if (!ret)
			done += len;
	}
	/* what the sink refused stays in the ring */
	__atomic_store_n(&r->page->data_tail, done, __ATOMIC_RELEASE);
	return ret;
}

int perf_session_drain(struct perf_session *s, ring_sink_fn sink, void *ctx, struct ring_stats *stats)
{
	for (size_t i = 0; i < s->ncpus; i++) {
		if (!s->cpus[i].ring.page)
			continue;
		int ret = ring_drain(&s->cpus[i].ring, sink, ctx, stats);
		if (ret)
			return ret;
	}
	return 0;
}

int perf_session_disable(struct perf_session *s)
{
	for (size_t i = 0; i < s->ncpus; i++)
		for (size_t k = 0; k < s->nevents * s->nthreads; k++)
			if (s->cpus[i].fds[k] >= 0)
				ioctl(s->cpus[i].fds[k], PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

/*
 * Event e's counts on CPU i summed over the session's threads (one fd each
 * when attached to threads) into sum (value, time enabled, time running);
 * 0, -EBADF when no fd of it is open there, or the read's error.
 */
static int read_on_cpu(struct perf_session *s, size_t e, size_t i, uint64_t sum[3])
{
	bool any = false;
	for (size_t t = 0; t < s->nthreads; t++) {
		int fd = *fd_slot(s, &s->cpus[i], e, t);
		if (fd < 0)
			continue;
		uint64_t v[3];
		ssize_t n = read(fd, v, sizeof(v));
		if (n < (ssize_t)sizeof(v))
			return n < 0 ? -errno : -EIO;
		for (int k = 0; k < 3; k++)
			sum[k] += v[k];
		any = true;
	}
	return any ? 0 : -EBADF;
}

int perf_session_read_total(struct perf_session *s, size_t e, uint64_t *value, uint64_t *enabled,
			    uint64_t *running)
{
	uint64_t sum[3] = { 0 };
	for (size_t i = 0; i < s->ncpus; i++) {
		int err = read_on_cpu(s, e, i, sum);
		if (err && err != -EBADF)
			return err;
	}
	*value = sum[0];
	*enabled = sum[1];
	*running = sum[2];
	return 0;
}

void perf_session_close(struct perf_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncpus; i++) {
		struct cpu_fds *c = &s->cpus[i];
		if (c->ring.page)
			munmap(c->ring.page, c->map_len);
		for (size_t k = 0; k < s->nevents * s->nthreads; k++)
			if (c->fds[k] >= 0)
				close(c->fds[k]);
		free(c->fds);
	}
	for (size_t e = 0; e < s->nevents; e++)
		free(s->events[e].ids);
	free(s->events);
	free(s->cpus);
	free(s);
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/*
 * The releaser: a detached grandchild holding a copy of every fd.  It
 * closes the fds that are not the session's at once (the terminal, a pipe
 * a reader waits on: they see their end now), waits for the recorder to
 * drop its copies (end of file on wait_fd), then closes the session's, the
 * slow part, and exits.  After fork in a process that may have had threads:
 * system calls only, no allocation (events is sorted in advance).
 */
static void release_in_child(const int *events, size_t nevents, int wait_fd)
{
	setsid();
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096] __attribute__((aligned(8)));
	long n;
	while (dir >= 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct dirent64 *d = (const void *)(buf + off);
			off += d->d_reclen;
			int fd = 0;
			const char *c = d->d_name;
			for (; *c >= '0' && *c <= '9' && fd < 100000000; c++)
				fd = fd * 10 + (*c - '0');
			if (*c || c == d->d_name || fd == dir || fd == wait_fd)
				continue;
			if (!bsearch(&fd, events, nevents, sizeof(*events), compare_ints))
				close(fd);
		}
	}
	if (dir >= 0)
		close(dir);
	char byte;
	while (read(wait_fd, &byte, 1) < 0 && errno == EINTR)
		;
	for (size_t i = 0; i < nevents; i++)
		close(events[i]);
	_exit(0);
}

/*
 * Closing a session's last event on a tracepoint makes the kernel wait out
 * an RCU grace period (tracepoint_synchronize_unregister(), under the
 * event mutex, one tracepoint after another): about 50 ms a tracepoint,
 * 1.2 s for the 24 of a default recording, after the recording is written.
 * Here a detached process takes those closes over, so the command returns
 * at once: it holds a copy of the fds until this process has dropped its
 * own, then closes them.  Without a process (fork failed) the closes are
 * made here.  The events should be disabled first (perf_session_disable).
 */
void perf_session_close_detached(struct perf_session *s)
{
	if (!s)
		return;
	size_t n = 0;
	int *events = xmalloc((s->ncpus * s->nevents * s->nthreads + 1) * sizeof(*events));
	for (size_t i = 0; i < s->ncpus; i++)
		for (size_t k = 0; k < s->nevents * s->nthreads; k++)
			if (s->cpus[i].fds[k] >= 0)
				events[n++] = s->cpus[i].fds[k];
	sort_items(events, n, sizeof(*events), compare_ints);
	int p[2] = { -1, -1 };
	if (n && pipe2(p, O_CLOEXEC) == 0) {
		pid_t child = fork();
		if (child == 0) {
			/* the releaser is a grandchild: this process is left no child to wait for */
			if (fork() == 0) {
				close(p[1]);
				release_in_child(events, n, p[0]);
			}
			_exit(0);
		}
		close(p[0]);
		if (child < 0) {
			close(p[1]);
			p[1] = -1;
		}
		while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	/* with a releaser these closes only drop this process's copies; without one they are the slow part */
	perf_session_close(s);
	if (p[1] >= 0)
		close(p[1]); /* the releaser's cue */
	free(events);
}

size_t perf_session_cpu_count(const struct perf_session *s)
{
	return s->ncpus;
}

/* Event e on CPU i: the sum over the session's threads. */
int perf_session_read_cpu(struct perf_session *s, size_t e, size_t i, uint64_t *value)
{
	if (i >= s->ncpus || e >= s->nevents)
		return -EBADF;
	uint64_t sum[3] = { 0 };
	int err = read_on_cpu(s, e, i, sum);
	if (!err)
		*value = sum[0];
	return err;
}

int perf_session_enable_cpu(struct perf_session *s, size_t e, size_t i, bool enable)
{
	if (i >= s->ncpus || e >= s->nevents)
		return -EBADF;
	bool any = false;
	for (size_t t = 0; t < s->nthreads; t++) {
		int fd = *fd_slot(s, &s->cpus[i], e, t);
		if (fd < 0)
			continue;
		/* without PERF_IOC_FLAG_GROUP the kernel applies it to the event and every inherited child */
		if (ioctl(fd, enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			return -errno;
		any = true;
	}
	return any ? 0 : -EBADF;
}

void event_list_enable_at_open(struct event_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		struct perf_event_attr *attr = &list->specs[i].attr;
		if (!attr->enable_on_exec)
			continue; /* opened disabled on purpose (a rate bound's weighted side): it stays so */
		attr->enable_on_exec = 0;
		attr->disabled = 0;
	}
}

struct event_spec *event_list_add(struct event_list *list, const char *name, const char *collector)
{
	GROW(list->specs, list->cap, list->count + 1);
	struct event_spec *spec = &list->specs[list->count++];
	memset(spec, 0, sizeof(*spec));
	snprintf(spec->name, sizeof(spec->name), "%s", name);
	snprintf(spec->collector, sizeof(spec->collector), "%s", collector);
	spec->rate_meter = spec->rate_alternate = -1;
	return spec;
}

void event_list_truncate(struct event_list *list, size_t count)
{
	for (size_t i = count; i < list->count; i++) {
		free(list->specs[i].tracepoint_format);
		free(list->specs[i].tracepoint_filter);
		free(list->specs[i].cpus);
	}
	if (count < list->count)
		list->count = count;
}

void event_list_free(struct event_list *list)
{
	event_list_truncate(list, 0);
	free(list->specs);
	memset(list, 0, sizeof(*list));
}

enum call_graph_mode call_graph_for(const struct record_options *opts, enum call_graph_mode collector_default)
{
	return opts->call_graph_chosen ? opts->call_graph : collector_default;
}

uint32_t stack_user_size_for(const struct record_options *opts, uint32_t collector_default)
{
	return opts->call_graph_chosen ? opts->stack_user_size : collector_default;
}

uint32_t stack_copy_default(const struct record_options *opts, uint32_t without_frame_pointers)
{
	return stack_user_size_for(opts, opts->program_frame_pointers ? LEAF_STACK_USER_SIZE : without_frame_pointers);
}

struct record_options stack_key_options(const struct record_options *opts, uint32_t size_default, uint32_t key_size)
{
	struct record_options o = *opts;
	bool short_copy = stack_keys_lent(opts) && !opts->program_frame_pointers;
	o.call_graph = short_copy ? CALL_GRAPH_DWARF : call_graph_for(opts, CALL_GRAPH_FP);
	o.stack_user_size = short_copy ? key_size : stack_user_size_for(opts, size_default);
	o.stack_key = short_copy;
	return o;
}

bool stack_keys_lent(const struct record_options *opts)
{
	return !opts->call_graph_chosen;
}

void sampling_attr_init(struct perf_event_attr *attr, const struct record_options *opts, uint32_t type,
			uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (opts->call_graph == CALL_GRAPH_FP)
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (opts->call_graph == CALL_GRAPH_DWARF) {
		/*
		 * The kernel walks its own frames; the user part of its chain
		 * would be the frame-pointer walk that DWARF replaces, so it is
		 * left out (as perf does) and the registers and stack copy
		 * stand in for it.
		 */
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->exclude_callchain_user = !opts->keep_user_chain;
		attr->sample_regs_user = opts->stack_key ? SP_KEY_REGS_MASK : SP_UNWIND_REGS_MASK;
		attr->sample_stack_user = opts->stack_user_size ? opts->stack_user_size : DEFAULT_STACK_USER_SIZE;
	}
	/*
	 * The kernel stores at most this many callchain entries; saying it
	 * (the most the sysctl allows) puts the limit in the recording, so the
	 * report can tell a chain the limit cut from one that ended.
	 */
	if (attr->sample_type & PERF_SAMPLE_CALLCHAIN) {
		int max_stack = read_int_file("/proc/sys/kernel/perf_event_max_stack", 0);
		attr->sample_max_stack = max_stack > 0 && max_stack <= UINT16_MAX ? (uint16_t)max_stack : 0;
	}
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (opts->period) {
		attr->sample_period = opts->period;
	} else {
		attr->freq = 1;
		attr->sample_freq = opts->frequency;
	}
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	attr->sample_id_all = 1;
	attr->exclude_kernel = opts->exclude_kernel;
	attr->exclude_hv = 1;
	attr->exclude_guest = 1;
}

bool perf_privileged(void)
{
	if (geteuid() == 0)
		return true;
	size_t len;
	char *status = NULL;
	if (read_file_bounded("/proc/self/status", 1 << 16, &status, &len) < 0)
		return false;
	const char *eff = strstr(status, "\nCapEff:");
	unsigned long long caps = eff ? strtoull(eff + 8, NULL, 16) : 0;
	free(status);
	return caps & (1ull << 38 /* CAP_PERFMON */ | 1ull << 21 /* CAP_SYS_ADMIN */);
}

bool kernel_samples_allowed(void)
{
	return perf_privileged() || read_int_file("/proc/sys/kernel/perf_event_paranoid", 2) <= 1;
}
