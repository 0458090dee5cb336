/*
 * test_target.c: the targets of record and stat (target.h), on this test
 * process itself: resolving lists against /proc, the one-line errors, and
 * the COMM and MMAP2 records synthesized from /proc at attach time, read
 * back field by field as the loader reads them.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/commands/synthesize.h"
#include "sigprof/commands/target.h"
#include "sigprof/base/util.h"

static char err[256];

Test(target, pid_of_self_has_every_thread)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	struct attach_target t = { .pid_list = pid };
	cr_assert(target_given(&t));
	cr_assert_eq(target_resolve(&t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.npids, 1);
	cr_assert_eq(t.pids[0], getpid());
	bool self = false;
	for (size_t i = 0; i < t.ntids; i++)
		self |= t.tids[i] == (pid_t)syscall(SYS_gettid);
	cr_assert(self, "the calling thread is not among the %zu threads", t.ntids);
	cr_assert(target_alive(&t));
	struct perf_target pt;
	target_perf(&t, &pt);
	cr_assert_eq(pt.ntids, t.ntids);
	cr_assert(pt.inherit);
	cr_assert_not(pt.system_wide);
	char text[64];
	target_describe(&t, text, sizeof(text));
	char want[64];
	snprintf(want, sizeof(want), "-p %s", pid);
	cr_assert_str_eq(text, want);
	target_free(&t);
}

/* -p X,X: one process, each thread once (its events opened twice doubled every count) */
Test(target, a_pid_named_twice_is_one_target)
{
	char pids[64];
	snprintf(pids, sizeof(pids), "%d,%d", (int)getpid(), (int)getpid());
	struct attach_target once = { .pid_list = pids + strcspn(pids, ",") + 1 }, twice = { .pid_list = pids };
	cr_assert_eq(target_resolve(&once, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(target_resolve(&twice, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(twice.npids, 1);
	cr_assert_eq(twice.ntids, once.ntids, "%zu threads for -p X,X, %zu for -p X", twice.ntids, once.ntids);
	target_free(&once);
	target_free(&twice);
}

Test(target, tid_names_its_process)
{
	char tid[32];
	snprintf(tid, sizeof(tid), "%d", (int)syscall(SYS_gettid));
	struct attach_target t = { .tid_list = tid };
	cr_assert_eq(target_resolve(&t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.ntids, 1);
	cr_assert_eq(t.npids, 1);
	cr_assert_eq(t.pids[0], getpid());
	target_free(&t);
}

Test(target, errors_are_one_line)
{
	struct {
		struct attach_target t;
		const char *want;
	} cases[] = {
		{ { .pid_list = "1,x" }, "-p '1,x': 'x' is not a process or thread id" },
		{ { .pid_list = "1," }, "-p '1,': an empty item in the list" },
		{ { .pid_list = "2147483647" }, "-p 2147483647: no such process" },
		{ { .tid_list = "2147483647" }, "-t 2147483647: no such thread" },
		{ { .pid_list = "1", .all_cpus = true }, "give one or the other" },
		{ { .tid_list = "1", .cgroup = "x" }, "give one or the other" },
		{ { .pid_list = "1", .cpu_list = "0" }, "-C '0': a CPU list goes with -a or -G" },
		{ { .all_cpus = true, .cpu_list = "0,x" }, "-C '0,x': expected a CPU list" },
		{ { .all_cpus = true, .cpu_list = "4095" }, "-C '4095': CPU 4095 is not online" },
		{ { .cgroup = "sigprof-no-such-cgroup" }, "-G 'sigprof-no-such-cgroup': " },
		{ { .pid_list = "1\n2" }, "-p '1\\n2': '1\\n2' is not a process or thread id" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct attach_target *t = &cases[i].t;
		err[0] = '\0';
		cr_assert_lt(target_resolve(t, err, sizeof(err)), 0, "case %zu accepted", i);
		cr_assert(strstr(err, cases[i].want), "case %zu: %s", i, err);
		cr_assert_null(strchr(err, '\n'));
		target_free(t);
	}
}

Test(target, cpus_for_all_cpus)
{
	struct attach_target t = { .all_cpus = true, .cpu_list = "0" };
	cr_assert_eq(target_resolve(&t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.ncpus, 1);
	struct perf_target pt;
	target_perf(&t, &pt);
	cr_assert(pt.system_wide);
	cr_assert_eq(pt.ncpus, 1);
	cr_assert_eq(pt.cpus[0], 0);
	cr_assert(target_alive(&t), "a CPU target lives until interrupted");
	target_free(&t);
}

Test(target, dead_tasks_are_not_alive)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)child);
	struct attach_target t = { .pid_list = pid };
	/* before it is reaped it exists (a zombie has no threads in /proc/PID/task) */
	int ret = target_resolve(&t, err, sizeof(err));
	int status;
	waitpid(child, &status, 0);
	if (ret == 0)
		cr_assert_not(target_alive(&t), "a reaped process is alive");
	target_free(&t);
}

/* The synthesized records of this process: a COMM per thread, an MMAP2 per executable mapping. */
Test(target, synthesized_records_describe_this_process)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	struct attach_target t = { .pid_list = pid };
	cr_assert_eq(target_resolve(&t, err, sizeof(err)), 0, "%s", err);
	struct strbuf out = { 0 };
	uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	cr_assert_eq(target_synthesize(&t, &out, type, 77, false), 0);
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	size_t comms = 0, exe_maps = 0, data_maps = 0;
	for (size_t off = 0; off < out.len;) {
		const struct perf_event_header *h = (const void *)(out.buf + off);
		cr_assert_geq(h->size, sizeof(*h) + 32);
		cr_assert_eq(h->size % 8, 0, "records are padded to 8 bytes");
		const uint32_t *u32 = (const void *)(h + 1);
		const uint64_t *u64 = (const void *)(h + 1);
		/* the sample_id trailer: pid/tid, time 0, cpu 0, then the id */
		const uint64_t *trailer = (const void *)((const char *)h + h->size - 32);
		cr_assert_eq(trailer[1], 0, "time 0: replayed before every sample");
		cr_assert_eq(trailer[3], 77, "the id of the event carrying task records");
		cr_assert_eq((uint32_t)trailer[0], (uint32_t)getpid());
		if (h->type == PERF_RECORD_COMM) {
			cr_assert_eq(u32[0], (uint32_t)getpid());
			comms++;
		} else {
			cr_assert_eq(h->type, PERF_RECORD_MMAP2);
			const char *name = (const char *)(h + 1) + 64;
			cr_assert(u64[2] > 0, "a mapping has a length");
			if (!(u32[14] & 4))
				data_maps++;
			if (strcmp(name, exe) == 0 && (u32[14] & 4))
				exe_maps++;
		}
		off += h->size;
	}
	cr_assert_eq(comms, t.ntids, "one COMM per thread");
	cr_assert_geq(exe_maps, 1, "the executable's code mapping (%s) is not described", exe);
	cr_assert_eq(data_maps, 0, "data mappings only when asked for");
	sb_free(&out);
	/* with data mappings: more records, the anonymous ones named //anon or [heap]/[stack] */
	cr_assert_eq(target_synthesize(&t, &out, type, 77, true), 0);
	cr_assert(memmem(out.buf, out.len, "[stack]", 7), "the stack mapping is not among the data mappings");
	sb_free(&out);
	target_free(&t);
}

/*
 * A synthesized MMAP2 record names an ELF file by its build-id, as the
 * kernel does with attr.build_id, checked against readelf(1); a mapping
 * without one keeps its device and inode.
 */
Test(target, synthesized_mappings_carry_the_files_build_id)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	uint8_t identity[24];
	uint16_t misc = PERF_RECORD_MISC_USER;
	synthesize_mmap2_identity(identity, &misc, exe, 8, 1, 1234);
	cr_assert(misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
	cr_assert(identity[0] > 0 && identity[0] <= 20);
	char hex[41] = "";
	for (unsigned i = 0; i < identity[0]; i++)
		snprintf(hex + 2 * i, 3, "%02x", identity[4 + i]);
	char cmd[4200], want[128] = "";
	snprintf(cmd, sizeof(cmd), "readelf -n %s | sed -n 's/.*Build ID: *//p'", exe);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (!fgets(want, sizeof(want), p))
		want[0] = '\0';
	pclose(p);
	want[strcspn(want, "\n")] = '\0';
	cr_assert_str_eq(hex, want);

	misc = PERF_RECORD_MISC_USER;
	synthesize_mmap2_identity(identity, &misc, NULL, 8, 1, 1234);
	cr_assert_eq(misc, PERF_RECORD_MISC_USER);
	uint32_t maj, min;
	uint64_t ino;
	memcpy(&maj, identity, 4);
	memcpy(&min, identity + 4, 4);
	memcpy(&ino, identity + 8, 8);
	cr_assert(maj == 8 && min == 1 && ino == 1234);
}
