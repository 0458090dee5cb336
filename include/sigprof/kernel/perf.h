/*
 * perf.h: perf_event_open, per-CPU ring buffers and counting reads.
 *
 * A perf_session opens a list of event specs for one target.  The target is
 * a task (the forked workload, followed into its threads and children with
 * inherit), the threads of processes that already run, a cgroup, or the
 * whole system; the opener loops over (event, cpu, thread) triples
 * whatever the target.  The first event opened on a CPU owns that CPU's ring
 * buffer; the other events' fds on that CPU are redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT, so records of one CPU stay in time order.
 *
 * ring_drain() is separate from the mmap so the tests can drive it over a
 * buffer of their own, wrap-around included.
 */
#ifndef SIGPROF_PERF_H
#define SIGPROF_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct event_spec {
	char name[64];              /* as the user knows it */
	char collector[32];         /* who asked for it */
	struct perf_event_attr attr;
	bool optional;              /* failing to open it disables its collector instead of failing the run */
	char *tracepoint_format;    /* a tracepoint's tracefs `format` text (owned by the event list), or NULL */
	char tracepoint_system[32]; /* and its system ("sched", "syscalls") */
	bool system_wide;           /* every task on every CPU (pid -1, no inherit) whatever the target; such a
				       spec must be enabled at open: enable_on_exec works only for task events */
	char *tracepoint_filter;    /* a tracepoint's filter (tracefs filter syntax, PERF_EVENT_IOC_SET_FILTER),
				       owned by the event list; NULL for none */
	bool group_with_previous;   /* opened in the group of the spec before it (whose leader is the nearest
				       earlier spec without this flag): mem-loads after its mem-loads-aux leader */
	char *cpus;                 /* the CPUs its PMU covers, as sysfs lists them ("0-7,16-23"), owned by the
				       event list; NULL or empty: every CPU.  A per-CPU session opens the event
				       on those only (hybrid parts) */
	/*
	 * The windowed rate bound (rate_bound.h).  rate_bound_hz > 0 makes this
	 * spec a gate: it records every hit while the hits of its CPU, counted by
	 * the counter spec rate_meter over a window, stay at or below
	 * rate_bound_hz per second; above, the recorder disables it on that CPU
	 * and enables rate_alternate (a spec index, or -1 for none) until a
	 * window is back under the bound.  Indices are into the same list.
	 */
	uint64_t rate_bound_hz;
	int rate_meter;
	int rate_alternate;
};

enum call_graph_mode {
	CALL_GRAPH_FP,    /* the kernel's callchain: kernel frames + frame-pointer user frames */
	CALL_GRAPH_NONE,  /* the sampled IP only */
	CALL_GRAPH_DWARF, /* the kernel's callchain for kernel frames; user registers and a copy of the user
			     stack, unwound with DWARF CFI at report time */
};

/* Bytes of user stack a DWARF sample copies under --call-graph dwarf without a SIZE (perf's default). */
#define DEFAULT_STACK_USER_SIZE 8192u
/*
 * Bytes of user stack the sched collector copies at every switch by
 * default (no --call-graph): perf's default.  2048 (the default until
 * 2026-12-02) stopped stress-ng's blocking stacks one frame short of
 * _start (--futex) or three (--sem-sysv: its main has large frames), and
 * 4096 still cut 99% of --sem-sysv's; perf record --call-graph dwarf takes
 * the same on the same events.  The records stay whole because the
 * recorder drains at a real-time priority (recorder_priority.h):
 * docs/performance.md, "Whole stacks on real programs", has the
 * measurements.
 */
#define WAIT_STACK_USER_SIZE 8192u
/*
 * Bytes of user stack the cpu and signal collectors copy by default (no
 * --call-graph), and the futex collector's rate-bounded copies: perf's own
 * default.  They default to DWARF stacks because Debian builds without
 * frame pointers, where the kernel's frame-pointer walk names nothing past
 * the leaf (issue 14).  3072 (until 2026-12-02) cut stress-ng --sem-sysv's
 * and --msg's stacks short; the cpu collector's rate is its frequency,
 * so the longer copy costs the workload little (docs/performance.md).
 */
#define CPU_SIGNAL_STACK_USER_SIZE 8192u
/*
 * The cpu collector's copy at every sample of a program without frame
 * pointers at the default frequency: most stacks fit in it, and one cut at
 * its end is completed at report time from a CPU_LONG_STACK_USER_SIZE
 * copy of a "#stack" sample at CPU_STACK_COPY_HZ that goes through the
 * same frames (collectors/cpu.c).  8192 bytes at 4000 samples a second per
 * CPU cost stress-ng --signal 12% of its throughput where 2048 cost what
 * perf's frame-pointer walk does (docs/performance.md).
 */
#define CPU_SHORT_STACK_USER_SIZE 2048u
/*
 * The cpu collector's long copies beside the short ones (the "#stack"
 * event): their size and frequency per CPU.  32 KiB at 125 a second is
 * what 8192 bytes at 500 was in bytes; stress-ng --msg's stacks need more
 * than 16 KiB (a message buffer in a frame), and the report completes
 * every collector's cut stacks from these (stack_completion.h).
 */
#define CPU_LONG_STACK_USER_SIZE 32768u
#define CPU_STACK_COPY_HZ 125u
/* The lowest sampling frequency at which the cpu collector takes short copies and long ones beside them. */
#define CPU_SHORT_COPIES_MIN_HZ 2000u
/*
 * The same for a program built with frame pointers: libc's frames near the
 * leaf and the first of the program's own, after which the report follows
 * the frame-pointer walk (stack_copy_default()).  512 (until 2026-12-02)
 * ended inside ld.so's lazy-binding frames (_dl_runtime_resolve_xsavec
 * saves the vector registers on the stack) and __fork's: perf bench
 * futex wake's cpu stacks were 73% whole, 90% at 4096.
 */
#define LEAF_STACK_USER_SIZE 4096u
/*
 * The key stack of an event that fires too often for a whole copy at
 * every hit, in a program without frame pointers (stack_key_options()):
 * enough for the libc wrapper's frame and two or three of its callers, the
 * key its call site's rate-bounded copies are lent to (stack_lender.h).
 * The futex entries and switch-outs: they block two or three frames deep
 * in libc (pthread_mutex_lock, __lll_lock_wait, the futex call), where 256
 * bytes left stress-ng --mutex's futex stacks 53% whole and 128 23%.
 */
#define KEY_STACK_USER_SIZE 512u
/*
 * A signal's generation and delivery: one libc wrapper (kill, sigqueue,
 * raise) and its caller.  sigqueue() keeps a 128-byte siginfo_t in its
 * frame, which a 128-byte key does not get past; with 256 bytes the stacks
 * of every signal stressor were as whole as with 512, and the records of
 * stress-ng --signal a third smaller (docs/performance.md, "Signal keys of
 * 256 bytes").
 */
#define SIGNAL_KEY_STACK_USER_SIZE 256u
/* The kernel's bound: a sample record's size is a u16, the stack size a multiple of 8 below it. */
#define MAX_STACK_USER_SIZE 65528u

enum futex_mode {
	FUTEX_SAMPLE, /* every call up to a rate bound, a bounded rate with weights above it */
	FUTEX_TRACE,  /* every call */
	FUTEX_COUNT,  /* exact totals per op only */
};

struct record_options {
	uint64_t frequency;         /* samples per second per CPU, when period is 0 */
	uint64_t period;            /* sample every period events; 0: use frequency */
	enum call_graph_mode call_graph; /* the user's --call-graph; meaningful when call_graph_chosen */
	bool call_graph_chosen;          /* false: each collector takes its own default (call_graph_for()) */
	uint32_t stack_user_size;        /* bytes of user stack per DWARF sample; with call_graph_chosen */
	bool program_frame_pointers;     /* the workload's program sets up frame pointers in most functions (record
					    looks at its code): its stacks need only a short copy (stack_copy_default()) */
	bool stack_key;                  /* DWARF: a key copy (stack_key_options()): SP_KEY_REGS_MASK's registers only */
	bool keep_user_chain;            /* DWARF: keep the kernel's frame-pointer walk of user code too, to go on
					    from where the copy ends (a collector's default, never --call-graph's) */
	bool exclude_kernel;        /* set when the kernel may not be sampled (not root, paranoid > 1) */
	enum futex_mode futex;      /* --futex */
	bool want_data_mmaps;       /* a collector names data addresses (futex words): record data mappings too */
};

/* A growable list of event specs that collectors append to. */
struct event_list {
	struct event_spec *specs;
	size_t count, cap;
};

/* The event list: what a recording opens, built by the collectors. */
struct event_spec *event_list_add(struct event_list *list, const char *name, const char *collector);
/* Drop the specs from index count on (what a collector added before it failed). */
void event_list_truncate(struct event_list *list, size_t count);
void event_list_free(struct event_list *list);
/*
 * Events of a run attached to tasks that already run (or to CPUs) start
 * counting when they open, there is no exec to wait for: the specs that
 * waited for it are enabled at open; those opened disabled on purpose (the
 * rate bound's weighted side) stay disabled.
 */
void event_list_enable_at_open(struct event_list *list);
/*
 * The call-graph mode a collector's events use: the user's --call-graph when
 * given, else the collector's own default.
 */
enum call_graph_mode call_graph_for(const struct record_options *opts, enum call_graph_mode collector_default);
/* Likewise the bytes of user stack its DWARF samples copy: the user's SIZE, else the collector's default. */
uint32_t stack_user_size_for(const struct record_options *opts, uint32_t collector_default);
/*
 * The stack options of an event that takes a key on every hit and whole
 * copies beside it while the rate allows (rate_bound_add_stack_copies()):
 * a DWARF unwind of key_size bytes (KEY_STACK_USER_SIZE,
 * SIGNAL_KEY_STACK_USER_SIZE) in a program without frame pointers (the
 * frame-pointer walk stops at the libc wrapper there, one key for every
 * call site), the frame-pointer chain in one with them; the user's
 * --call-graph (and SIZE, else size_default) when given, with no copies
 * beside it.  A key copies SP_KEY_REGS_MASK's registers only.
 */
struct record_options stack_key_options(const struct record_options *opts, uint32_t size_default,
					uint32_t key_size);
/* Whether stack_key_options() makes a key that copies complete (no --call-graph chosen). */
bool stack_keys_lent(const struct record_options *opts);
/*
 * The cpu and signal collectors' default copy (they keep the frame-pointer
 * walk beside it, keep_user_chain): LEAF_STACK_USER_SIZE when the program
 * has frame pointers (the copy need only unwind the frames near the leaf
 * that have none, libc's, up to the first return address the walk holds),
 * else without_frame_pointers; the user's --call-graph SIZE wins over both.
 */
uint32_t stack_copy_default(const struct record_options *opts, uint32_t without_frame_pointers);
/*
 * The attr every sampling event starts from: identifier, tid, time, cpu,
 * period, and the stack opts->call_graph asks for (callchain; with DWARF
 * the kernel part of the callchain plus user registers and stack, and the
 * user part of the callchain too with opts->keep_user_chain).
 */
void sampling_attr_init(struct perf_event_attr *attr, const struct record_options *opts, uint32_t type,
			uint64_t config);

/*
 * What a session's events are opened for (record and stat: -p, -t, -a, -C,
 * -G; docs/targets.md).  One fd per (event, CPU, thread); a system-wide or
 * cgroup event one per (event, CPU).
 */
struct perf_target {
	pid_t pid;          /* the task to follow (the forked workload), when tids is empty */
	const pid_t *tids;  /* tasks that already run (every thread of -p's processes, -t's threads), or NULL */
	size_t ntids;
	bool inherit;       /* follow their new threads and children */
	bool system_wide;   /* every task on every CPU (-a) */
	const int *cpus;    /* the CPUs to open on (-C), or NULL for every online CPU */
	size_t ncpus;
	int cgroup_fd;      /* > 0: an open fd of a perf_event cgroup directory (-G): its tasks on every CPU */
};

/* Counters of what a drain moved (record headers only are read). */
struct ring_stats {
	uint64_t records;      /* kernel records */
	uint64_t samples;      /* of which PERF_RECORD_SAMPLE */
	uint64_t lost;         /* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_samples; /* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t bytes;
};

/* A ring buffer: the kernel's control page and the data area after it. */
struct ring {
	struct perf_event_mmap_page *page;
	unsigned char *data;
	uint64_t size; /* bytes of data, a power of two */
};

/* Whole records are handed to sink in at most two contiguous chunks per wrap. */
typedef int (*ring_sink_fn)(void *ctx, const void *data, size_t len);
/*
 * Copy every complete record between data_tail and data_head to sink,
 * counting them into stats, then advance data_tail.  0, or the sink's error.
 */
int ring_drain(struct ring *ring, ring_sink_fn sink, void *ctx, struct ring_stats *stats);

struct perf_session;

struct opened_event {
	const struct event_spec *spec;
	uint64_t *ids;     /* one per CPU opened */
	uint32_t nr_ids;
	bool failed;       /* optional and could not open */
	int error;         /* -errno of the failure */
	uint32_t gone_threads; /* threads of the target that exited before this event opened on them */
};

/*
 * Open specs[0..n) for target on every online CPU and map the rings
 * (ring_pages data pages per CPU, a power of two; every thread's fd on a CPU
 * writes into that CPU's ring).  With ring_pages 0
 * the events are counters only, without rings, and a task target's are
 * opened once per thread (cpu -1), not per CPU.  A required event that
 * cannot open fails the whole session: -errno, with the event's name and
 * the reason in err.  An optional one is marked failed.
 */
int perf_session_open(const struct event_spec *specs, size_t n, const struct perf_target *target,
		      unsigned ring_pages, struct perf_session **out, char *err, size_t errlen);
size_t perf_session_events(const struct perf_session *s, const struct opened_event **events);
/* fds to poll, one per ring. */
size_t perf_session_poll_fds(const struct perf_session *s, int *fds, size_t max);
int perf_session_drain(struct perf_session *s, ring_sink_fn sink, void *ctx, struct ring_stats *stats);
int perf_session_disable(struct perf_session *s);
/* The event's counter summed over CPUs (value, time enabled, time running). */
int perf_session_read_total(struct perf_session *s, size_t event, uint64_t *value, uint64_t *enabled,
			    uint64_t *running);
void perf_session_close(struct perf_session *s);
/*
 * The same, returning before the kernel has released the events: a
 * detached process makes the closes, which wait about 50 ms for each
 * tracepoint the session used.  For a session whose events are disabled.
 */
void perf_session_close_detached(struct perf_session *s);
/* The CPUs the session opened events on (1 for a per-task counting session: cpu -1). */
size_t perf_session_cpu_count(const struct perf_session *s);
/* Event e's counter on the session's CPU number i (its inherited children summed); -EBADF when not open there. */
int perf_session_read_cpu(struct perf_session *s, size_t e, size_t i, uint64_t *value);
/* Enable or disable event e on the session's CPU number i, with its inherited children. */
int perf_session_enable_cpu(struct perf_session *s, size_t e, size_t i, bool enable);

/* A raw perf_event_open(2), -errno on failure. */
int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);
/* Whether the event can open at all on this machine (on the calling thread, disabled). 0 or -errno. */
int perf_event_probe(const struct perf_event_attr *attr);
/* The same with a tracepoint filter set on it (PERF_EVENT_IOC_SET_FILTER): -EINVAL when the kernel refuses it. */
int perf_event_probe_filter(const struct perf_event_attr *attr, const char *filter);
/* Whether the event can open for every task on cpu (CAP_PERFMON or perf_event_paranoid <= 0). 0 or -errno. */
int perf_event_probe_cpu(const struct perf_event_attr *attr, int cpu);
/* Online CPUs, from /sys/devices/system/cpu/online; fills up to max, returns the count. */
int online_cpus(int *cpus, int max);
/* The CPUs of a list as sysfs writes them ("0-3,8,10-11"); fills up to max, returns the count (0: malformed). */
int cpu_list_parse(const char *text, int *cpus, int max);
/* A one-line reason for a perf_event_open failure, naming what to do. */
const char *perf_open_reason(int err, const struct perf_event_attr *attr);

/* Whether perf_event_open treats this process as privileged: root, or CAP_PERFMON or CAP_SYS_ADMIN effective. */
bool perf_privileged(void);
/*
 * Whether events may sample the kernel (kernel frames, kernel addresses):
 * privileged, or kernel.perf_event_paranoid <= 1 (docs/unprivileged.md).
 */
bool kernel_samples_allowed(void);

#endif
