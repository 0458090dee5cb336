/*
 * harness.c: see harness.h.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

int run_cmd(char **out, bool merge_stderr, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (merge_stderr)
		strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	FILE *p = popen(cmd, "r");
	cr_assert(p, "popen(%s) failed", cmd);
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 1024) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	buf[len] = '\0';
	int status = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* What jq printed as a number: -1 for nothing or null. */
static double jq_output_number(char *out)
{
	double v = out[0] && strncmp(out, "null", 4) != 0 ? strtod(out, NULL) : -1;
	free(out);
	return v;
}

double json_number(const char *data_file, const char *filter)
{
	char *out;
	int st = run_cmd(&out, false, "%s report --json -i '%s' 2>/dev/null | jq -r '%s'", sigprof_bin(), data_file, filter);
	cr_assert_eq(st, 0, "jq '%s' over the report of %s failed", filter, data_file);
	return jq_output_number(out);
}

double jq_file(const char *json, const char *filter)
{
	char *out;
	int st = run_cmd(&out, false, "jq -r '%s' '%s'", filter, json);
	cr_assert_eq(st, 0, "jq '%s' failed on %s", filter, json);
	return jq_output_number(out);
}

static const char *rotating_path(const char *fmt, const char *a, const char *b)
{
	static char paths[4][512];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, sizeof(paths[0]), fmt, a, b);
	return p;
}

const char *test_path(const char *name)
{
	return rotating_path("%s/%s", test_dir(), name);
}

const char *report_json_file(const char *data, const char *options)
{
	const char *json = rotating_path("%s%s.json", data, options[0] ? "-options" : "");
	char *err;
	/* its warnings to err, never into the JSON */
	int st = run_cmd(&err, false, "%s report --json %s -i '%s' 2>&1 > '%s'", sigprof_bin(), options, data, json);
	cr_assert_eq(st, 0, "report --json %s of %s failed: %s", options, data, err);
	free(err);
	return json;
}

static char dir_template[64];

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir_template);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir_template);
}

const char *test_dir(void)
{
	if (!dir_template[0]) {
		/* mkdtemp's template: the prefix, then the six 'X' it replaces */
		int n = snprintf(dir_template, sizeof(dir_template) - 6, "/tmp/sigprof-test-");
		memset(dir_template + n, 'X', 6);
		dir_template[n + 6] = '\0';
		cr_assert(mkdtemp(dir_template), "mkdtemp: %s", strerror(errno));
		atexit(remove_dir);
	}
	return dir_template;
}

void require_perf_events(void)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CPU_CLOCK, .disabled = 1, .exclude_kernel = 1 };
	long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		skip_environment("perf_event_open(cpu-clock) is not available here (%s): "
				 "run as root or lower kernel.perf_event_paranoid", strerror(errno));
	}
	close((int)fd);
}

int probe_hardware_event(unsigned long long config)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_HARDWARE, .config = config,
					.disabled = 1, .exclude_kernel = 1, .exclude_hv = 1 };
	long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

void require_root(void)
{
	if (geteuid() != 0)
		skip_environment("needs root (kernel callchains and kernel symbols)");
}

void require_tracing(void)
{
	require_perf_events();
	require_root();
}

bool premise_skips_fail(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0 && geteuid() == 0;
}

/* Whether the running kernel is at least major.minor. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int have_major, have_minor;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &have_major, &have_minor) != 2)
		return false;
	return have_major > major || (have_major == major && have_minor >= minor);
}

bool collector_expected_here(const char *name)
{
	if (geteuid() != 0)
		return false;
	if (strcmp(name, "signal") == 0 || strcmp(name, "sched") == 0 || strcmp(name, "futex") == 0)
		return true;
	/* lock:contention_begin/end came with Linux 5.19 */
	return strcmp(name, "lock") == 0 && kernel_at_least(5, 19);
}

const char *sigprof_bin(void)
{
	const char *s = getenv("SIGPROF");
	return s && *s ? s : SIGPROF_BIN;
}

int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

size_t widest_line(const char *text)
{
	size_t widest = 0, col = 0;
	for (const char *p = text; *p; p++) {
		if (*p == '\033') {
			while (p[1] && *p != 'm')
				p++;
		} else if (*p == '\n' || *p == '\r') {
			widest = col > widest ? col : widest;
			col = 0;
		} else if ((*p & 0xc0) != 0x80) {
			col++;
		}
	}
	return col > widest ? col : widest;
}

char *record_workload(const char *data, const char *options, const char *cmd)
{
	char *out;
	int st = run_cmd(&out, false, "%s record -q %s -o '%s' -- %s", sigprof_bin(), options, data, cmd);
	cr_assert_eq(st, 0, "sigprof record %s -- %s exited %d: %s", options, cmd, st, out);
	return out;
}

void require_collector(const char *json, const char *name)
{
	char *out;
	run_cmd(&out, false, "jq -r '.meta.collectors[] | select(.name==\"%s\") | .status + \": \" + (.reason // \"\")' '%s'",
		name, json);
	if (strncmp(out, "ok", 2) != 0) {
		if (collector_expected_here(name))
			cr_assert_fail("the %s collector did not open (%s): every machine the tests run on as root has it",
				       name, out[0] ? out : "not recorded");
		skip_environment("the %s collector did not open here: %s", name, out[0] ? out : "not recorded");
	}
	free(out);
}

double stack_samples(const char *json, const char *collector, const char *path, const char *frames_test)
{
	char filter[1024], on_path[128] = "true", of_collector[128] = "true";
	if (path)
		snprintf(on_path, sizeof(on_path), ".path==\"%s\"", path);
	if (collector)
		snprintf(of_collector, sizeof(of_collector), ".collector==\"%s\"", collector);
	snprintf(filter, sizeof(filter), "[.stacks[] | select(%s and %s and (.frames | %s)) | .count] | add // 0",
		 of_collector, on_path, frames_test);
	return jq_file(json, filter);
}

const char *hostile_recording(void)
{
	static char data[512];
	require_perf_events();
	require_root();
	char dir[512], *out;
	snprintf(dir, sizeof(dir), "%s", test_path("hostile"));
	run_cmd(&out, true, "mkdir -p '%s' && cp " W "hostile_symbol '%s/" HOSTILE_FILE "'", dir, dir);
	free(out);
	snprintf(data, sizeof(data), "%s", test_path("hostile.data"));
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s/" HOSTILE_FILE "' 30000000 '" HOSTILE_ARG "'", dir);
	free(record_workload(data, "-e cpu", cmd));
	return data;
}

/* The time the hypervisor has stolen from all CPUs since boot (/proc/stat's steal column), in ns; 0 when unknown. */
static double steal_ns_since_boot(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal = 0;
	if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
			&softirq, &steal) != 8)
		steal = 0;
	if (f)
		fclose(f);
	return (double)steal * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

void record_phases(const char *data, struct phases_truth *t)
{
	require_perf_events();
	require_root();
	double steal_before = steal_ns_since_boot();
	char *out = record_workload(data, "", W "timeline_phases 10");
	t->steal_ns = steal_ns_since_boot() - steal_before;
	long loops = 0;
	int n = sscanf(out, "timeline_phases: tid %d loops %ld run_ns %lf sleep_ns %lf futex_ns %lf handler_ns %lf",
		       &t->tid, &loops, &t->run_ns, &t->sleep_ns, &t->futex_ns, &t->handler_ns);
	cr_assert_eq(n, 6, "timeline_phases printed: %s", out);
	cr_assert_eq(loops, PHASES_LOOPS);
	free(out);
}
