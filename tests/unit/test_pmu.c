/*
 * test_pmu.c: the event parser of collectors/kernel/pmu.c against a sysfs tree the
 * tests lay out themselves (pmu_set_sysfs_root): a Skylake-like `cpu` PMU
 * (event, umask, inv, cmask, ldlat; mem-loads and mem-stores aliases), an
 * AMD-like PMU whose event field is split (config:0-7,32-35), a hybrid
 * `cpu_core`, and `ibs_op`.  The sysfs values are the kernel's for those
 * parts (arch/x86/events/intel/core.c: "event=0xcd,umask=0x1,ldlat=3" for
 * mem-loads; format/ldlat "config1:0-15").  Generic names are checked
 * against <linux/perf_event.h>'s enums, tracepoints against tracefs' id
 * file, and every bad input against the text of its error line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sigprof/model/collector.h"
#include "sigprof/commands/commands.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/kernel/tracepoint.h"
#include "unit_helpers.h"

static char *root;

static void put(const char *pmu, const char *rel, const char *text)
{
	sysfs_pmu_file(root, pmu, rel, text);
}

static void fake_sysfs(void)
{
	root = temp_dir_new();
	put("cpu", "type", "4\n");
	put("cpu", "format/event", "config:0-7\n");
	put("cpu", "format/umask", "config:8-15\n");
	put("cpu", "format/inv", "config:23\n");
	put("cpu", "format/cmask", "config:24-31\n");
	put("cpu", "format/ldlat", "config1:0-15\n");
	put("cpu", "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("cpu", "events/mem-stores", "event=0xd0,umask=0x82\n");
	put("amdcpu", "type", "4\n");
	put("amdcpu", "format/event", "config:0-7,32-35\n");
	put("amdcpu", "format/umask", "config:8-15\n");
	put("cpu_core", "type", "8\n");
	put("cpu_core", "format/event", "config:0-7\n");
	put("cpu_core", "format/umask", "config:8-15\n");
	put("cpu_core", "format/ldlat", "config1:0-15\n");
	put("cpu_core", "events/mem-loads-aux", "event=0x03,umask=0x82\n");
	put("cpu_core", "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("ibs_op", "type", "11\n");
	put("ibs_op", "format/cnt_ctl", "config:19\n");
	put("broken", "type", "12\n");
	put("broken", "format/event", "config3:0-7\n");
	pmu_set_sysfs_root(root);
}

static void remove_sysfs(void)
{
	pmu_set_sysfs_root(NULL);
	temp_dir_remove(root);
	root = NULL;
}

TestSuite(pmu, .init = fake_sysfs, .fini = remove_sysfs);

/* Parse spec, which must succeed. */
static struct pmu_event parse_ok(const char *spec)
{
	struct pmu_event ev;
	char err[256] = "";
	int ret = pmu_event_parse(spec, &ev, err, sizeof(err));
	cr_assert_eq(ret, 0, "%s: %d %s", spec, ret, err);
	cr_assert_str_eq(ev.name, spec);
	return ev;
}

/* Parse spec, which must fail with expect_err and an error line containing expect_text and the spec. */
static void parse_fails(const char *spec, int expect_err, const char *expect_text)
{
	struct pmu_event ev;
	char err[256] = "";
	int ret = pmu_event_parse(spec, &ev, err, sizeof(err));
	cr_assert_eq(ret, expect_err, "%s: got %d (%s), expected %d", spec, ret, err, expect_err);
	cr_assert(strstr(err, expect_text), "%s: error '%s' lacks '%s'", spec, err, expect_text);
	cr_assert(strstr(err, spec) || !*spec, "%s: error '%s' does not name the event", spec, err);
	cr_assert_null(strchr(err, '\n'), "one line: '%s'", err);
}

Test(pmu, sysfs_alias_with_override_and_max_precise)
{
	struct pmu_event ev = parse_ok("cpu/mem-loads,ldlat=30/P");
	cr_assert_eq(ev.source, PMU_SOURCE_SYSFS);
	cr_assert_str_eq(ev.pmu, "cpu");
	cr_assert_eq(ev.attr.type, 4);
	cr_assert_eq(ev.attr.config, 0x1cd);
	cr_assert_eq(ev.attr.config1, 30);
	cr_assert(ev.max_precise);
	cr_assert_eq(ev.attr.precise_ip, 0);
}

Test(pmu, sysfs_user_terms_override_the_alias_in_any_order)
{
	struct pmu_event ev = parse_ok("cpu/ldlat=50,mem-loads/");
	cr_assert_eq(ev.attr.config, 0x1cd);
	cr_assert_eq(ev.attr.config1, 50);
	ev = parse_ok("cpu/mem-loads/");
	cr_assert_eq(ev.attr.config1, 3);
	cr_assert(!ev.max_precise);
}

Test(pmu, sysfs_format_fields_and_flag_terms)
{
	struct pmu_event ev = parse_ok("cpu/event=0x3c,inv,cmask=1/");
	cr_assert_eq(ev.attr.config, 0x3cULL | 1ULL << 23 | 1ULL << 24);
	ev = parse_ok("cpu/event=0xc0,umask=0x1/u");
	cr_assert_eq(ev.attr.config, 0x1c0);
	cr_assert(ev.privilege_modifier);
	cr_assert_eq(ev.attr.exclude_user, 0);
	cr_assert_eq(ev.attr.exclude_kernel, 1);
	cr_assert_eq(ev.attr.exclude_hv, 1);
	ev = parse_ok("cpu/event=192,umask=1/:k");
	cr_assert_eq(ev.attr.config, 0x1c0);
	cr_assert_eq(ev.attr.exclude_user, 1);
	cr_assert_eq(ev.attr.exclude_kernel, 0);
}

Test(pmu, sysfs_split_field_takes_low_bits_first)
{
	/* AMD's 12-bit event select: bits 0-7 in config 0-7, bits 8-11 in config 32-35 */
	struct pmu_event ev = parse_ok("amdcpu/event=0x1c7,umask=0x4/");
	cr_assert_eq(ev.attr.config, 0xc7ULL | 0x4ULL << 8 | 0x1ULL << 32);
	parse_fails("amdcpu/event=0x1000/", -EINVAL, "does not fit");
	parse_fails("cpu/umask=0x100/", -EINVAL, "does not fit");
}

Test(pmu, sysfs_raw_config_words_and_empty_terms)
{
	struct pmu_event ev = parse_ok("cpu/config=0x1234,config1=5,config2=0xffffffffffffffff/");
	cr_assert_eq(ev.attr.config, 0x1234);
	cr_assert_eq(ev.attr.config1, 5);
	cr_assert_eq(ev.attr.config2, ~0ULL);
	ev = parse_ok("ibs_op//");
	cr_assert_eq(ev.attr.type, 11);
	cr_assert_eq(ev.attr.config, 0);
	cr_assert_str_eq(ev.pmu, "ibs_op");
	ev = parse_ok("ibs_op/cnt_ctl=1/");
	cr_assert_eq(ev.attr.config, 1ULL << 19);
}

Test(pmu, bare_alias_is_taken_from_the_pmu_that_has_it)
{
	struct pmu_event ev = parse_ok("mem-loads:P");
	cr_assert_eq(ev.source, PMU_SOURCE_SYSFS);
	cr_assert_str_eq(ev.pmu, "cpu", "cpu is preferred to cpu_core, which has it too");
	cr_assert_eq(ev.attr.config, 0x1cd);
	cr_assert_eq(ev.attr.config1, 3);
	cr_assert(ev.max_precise);
	ev = parse_ok("mem-loads-aux");
	cr_assert_str_eq(ev.pmu, "cpu_core");
	cr_assert_eq(ev.attr.type, 8);
	cr_assert_eq(ev.attr.config, 0x8203);
}

Test(pmu, sysfs_hybrid_core_pmu)
{
	struct pmu_event ev = parse_ok("cpu_core/mem-loads-aux/");
	cr_assert_eq(ev.attr.type, 8);
	cr_assert_eq(ev.attr.config, 0x8203);
	cr_assert_str_eq(ev.pmu, "cpu_core");
	ev = parse_ok("cpu_core/mem-loads,ldlat=30/pp");
	cr_assert_eq(ev.attr.type, 8);
	cr_assert_eq(ev.attr.config1, 30);
	cr_assert_eq(ev.attr.precise_ip, 2);
}

Test(pmu, sysfs_bad_input)
{
	parse_fails("nope/event=1/", -ENOENT, "no PMU 'nope'");
	parse_fails("cpu/bogus=1/", -EINVAL, "no term or event 'bogus'");
	parse_fails("cpu/bogus=1/", -EINVAL, "umask");
	parse_fails("cpu/event=zz/", -EINVAL, "'zz' is not a number");
	parse_fails("cpu/event=-1/", -EINVAL, "not a number");
	parse_fails("cpu/event=1", -EINVAL, "closing '/'");
	parse_fails("cpu/event=1/x", -EINVAL, "unknown modifier 'x'");
	parse_fails("cpu/event=1,,umask=1/", -EINVAL, "empty term");
	parse_fails("cpu/event=1/pppp", -EINVAL, "at most 3 p");
	parse_fails("cpu/config/", -EINVAL, "needs a value");
	parse_fails("cpu/mem-loads=1/", -EINVAL, "no term or event 'mem-loads'");
	parse_fails("/event=1/", -EINVAL, "no PMU name");
	parse_fails("../cpu/event=1/", -ENOENT, "no PMU '..'");
	parse_fails("broken/event=1/", -EINVAL, "not a config bit range");
}

Test(pmu, generic_hardware_and_software_names)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} cases[] = {
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmu_event ev = parse_ok(cases[i].name);
		cr_assert_eq(ev.source, PMU_SOURCE_GENERIC, "%s", cases[i].name);
		cr_assert_eq(ev.attr.type, cases[i].type, "%s", cases[i].name);
		cr_assert_eq(ev.attr.config, cases[i].config, "%s", cases[i].name);
		cr_assert(!ev.privilege_modifier && !ev.max_precise && ev.attr.precise_ip == 0);
	}
	uint32_t type;
	cr_assert_str_eq(pmu_generic_name(0, &type), "cpu-cycles");
	cr_assert_eq(type, PERF_TYPE_HARDWARE);
	size_t n = 0;
	while (pmu_generic_name(n, NULL))
		n++;
	cr_assert_gt(n, 15);
}

/* The generic cache config: cache id | op << 8 | result << 16 (perf_event_open(2)). */
static uint64_t cache_config(unsigned cache, unsigned op, unsigned result)
{
	return cache | (uint64_t)op << 8 | (uint64_t)result << 16;
}

Test(pmu, generic_cache_names)
{
	static const struct {
		const char *name;
		unsigned cache, op, result;
	} cases[] = {
		{ "L1-dcache-load-misses", PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
		  PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "L1-dcache-loads", PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
		  PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "L1-icache-load-misses", PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
		  PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "LLC-loads", PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "LLC-store-misses", PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_WRITE,
		  PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "LLC-misses", PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "dTLB-prefetches", PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_PREFETCH,
		  PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "iTLB-load-misses", PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ,
		  PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "branch-loads", PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ,
		  PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "node-load-misses", PERF_COUNT_HW_CACHE_NODE, PERF_COUNT_HW_CACHE_OP_READ,
		  PERF_COUNT_HW_CACHE_RESULT_MISS },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmu_event ev = parse_ok(cases[i].name);
		cr_assert_eq(ev.attr.type, PERF_TYPE_HW_CACHE, "%s", cases[i].name);
		cr_assert_eq(ev.attr.config, cache_config(cases[i].cache, cases[i].op, cases[i].result), "%s",
			     cases[i].name);
	}
	parse_fails("L1-dcache-load-misses-misses", -ENOENT, "no such event");
	parse_fails("L1-dcache-bogus", -ENOENT, "no such event");
}

Test(pmu, modifiers)
{
	struct pmu_event ev = parse_ok("cycles:u");
	cr_assert_eq(ev.attr.exclude_user, 0);
	cr_assert_eq(ev.attr.exclude_kernel, 1);
	cr_assert_eq(ev.attr.exclude_hv, 1);
	ev = parse_ok("cycles:k");
	cr_assert_eq(ev.attr.exclude_user, 1);
	cr_assert_eq(ev.attr.exclude_kernel, 0);
	ev = parse_ok("cycles:uk");
	cr_assert_eq(ev.attr.exclude_user, 0);
	cr_assert_eq(ev.attr.exclude_kernel, 0);
	cr_assert_eq(ev.attr.exclude_hv, 1);
	ev = parse_ok("cycles:h");
	cr_assert_eq(ev.attr.exclude_hv, 0);
	cr_assert_eq(ev.attr.exclude_user, 1);
	ev = parse_ok("cache-misses:pp");
	cr_assert_eq(ev.attr.precise_ip, 2);
	ev = parse_ok("cache-misses:ppp");
	cr_assert_eq(ev.attr.precise_ip, 3);
	ev = parse_ok("cycles:p");
	cr_assert_eq(ev.attr.precise_ip, 1);
	ev = parse_ok("cycles:P");
	cr_assert(ev.max_precise);
	ev = parse_ok("cycles:H");
	cr_assert(ev.host_guest_modifier);
	cr_assert_eq(ev.attr.exclude_guest, 1);
	cr_assert_eq(ev.attr.exclude_host, 0);
	ev = parse_ok("cycles:G");
	cr_assert_eq(ev.attr.exclude_guest, 0);
	cr_assert_eq(ev.attr.exclude_host, 1);
	ev = parse_ok("task-clock:uG");
	cr_assert_eq(ev.attr.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(ev.attr.exclude_kernel, 1);
	parse_fails("cycles:pP", -EINVAL, "p and P together");
	parse_fails("cycles:pppp", -EINVAL, "at most 3 p");
	parse_fails("cycles:", -EINVAL, "empty modifier");
	parse_fails("cycles:x", -EINVAL, "unknown modifier 'x'");
}

Test(pmu, apply_keeps_the_attrs_exclusions_unless_a_modifier_says)
{
	struct record_options opts = { .frequency = 1000, .call_graph = CALL_GRAPH_FP };
	struct perf_event_attr attr;
	sampling_attr_init(&attr, &opts, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	struct pmu_event ev = parse_ok("cpu/mem-loads,ldlat=30/pp");
	pmu_event_apply(&ev, &attr);
	cr_assert_eq(attr.type, 4);
	cr_assert_eq(attr.config, 0x1cd);
	cr_assert_eq(attr.config1, 30);
	cr_assert_eq(attr.precise_ip, 2);
	cr_assert_eq(attr.exclude_hv, 1, "sampling_attr_init's exclusions stay");
	cr_assert_eq(attr.exclude_guest, 1);
	cr_assert_eq(attr.freq, 1, "sampling fields are the caller's");
	cr_assert_eq(attr.sample_freq, 1000);
	ev = parse_ok("cycles:h");
	pmu_event_apply(&ev, &attr);
	cr_assert_eq(attr.exclude_hv, 0);
	cr_assert_eq(attr.exclude_user, 1);
	cr_assert_eq(attr.exclude_kernel, 1);
	cr_assert_eq(attr.precise_ip, 0);
}

Test(pmu, sysfs_queries)
{
	uint32_t type = 0;
	cr_assert_eq(pmu_sysfs_type("cpu_core", &type), 0);
	cr_assert_eq(type, 8);
	cr_assert_eq(pmu_sysfs_type("nope", &type), -ENOENT);
	cr_assert_eq(pmu_sysfs_type("..", &type), -ENOENT);
	cr_assert(pmu_sysfs_has_event("cpu", "mem-loads"));
	cr_assert(pmu_sysfs_has_event("cpu_core", "mem-loads-aux"));
	cr_assert(!pmu_sysfs_has_event("cpu", "mem-loads-aux"));
	cr_assert(!pmu_sysfs_has_event("cpu", "../cpu/type"));
	struct pmu_names names;
	pmu_sysfs_names(&names);
	cr_assert_eq(names.count, 5);
	cr_assert_str_eq(names.names[0], "amdcpu");
	cr_assert_str_eq(names.names[1], "broken");
	cr_assert_str_eq(names.names[2], "cpu");
	cr_assert_str_eq(names.names[3], "cpu_core");
	cr_assert_str_eq(names.names[4], "ibs_op");
	pmu_names_free(&names);
	cr_assert_null(pmu_sysfs_cpus("cpu"), "no cpus file: every CPU");
}

Test(pmu, hybrid_core_pmus)
{
	char names[4][32];
	uint32_t types[4];
	/* the fake tree has cpu_core only; a hybrid part has cpu_atom beside it */
	put("cpu_atom", "type", "10\n");
	size_t n = pmu_hybrid_core_pmus(names, types, 4);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(names[0], "cpu_atom");
	cr_assert_eq(types[0], 10);
	cr_assert_str_eq(names[1], "cpu_core");
	cr_assert_eq(types[1], 8);
	cr_assert_eq(pmu_hybrid_core_pmus(names, types, 1), 1, "max is honoured");
}

Test(pmu, one_core_pmu_is_not_hybrid)
{
	char *other = temp_dir_new();
	char *cpu = path_join(other, "cpu");
	mkdir(cpu, 0755);
	char *type = path_join(cpu, "type");
	write_file(type, "4\n", 2);
	pmu_set_sysfs_root(other);
	char names[4][32];
	uint32_t types[4];
	cr_assert_eq(pmu_hybrid_core_pmus(names, types, 4), 0);
	pmu_set_sysfs_root(root);
	free(type);
	free(cpu);
	temp_dir_remove(other);
}

Test(pmu, list_splitting_keeps_commas_inside_pmu_terms)
{
	const char *list = "cpu,cpu/event=1,umask=2/u,,sched:sched_switch,ibs_op//,";
	char buf[64];
	const char *expect[] = { "cpu", "cpu/event=1,umask=2/u", "sched:sched_switch", "ibs_op//" };
	size_t n = 0;
	while (pmu_event_list_next(&list, buf, sizeof(buf))) {
		cr_assert_lt(n, 4);
		cr_assert_str_eq(buf, expect[n]);
		n++;
	}
	cr_assert_eq(n, 4);
	const char *empty = "";
	cr_assert(!pmu_event_list_next(&empty, buf, sizeof(buf)));
}

/* An empty item, which the splitting skips, is told apart so that -e can refuse it; a comma in terms is no split. */
Test(pmu, empty_items_of_a_list)
{
	static const char *const with[] = { "", ",", "cpu,", ",cpu", "cpu,,signal", "cpu/event=1,umask=2/,", "a,b,," };
	static const char *const without[] = { "cpu", "cpu,signal", "cpu/event=1,umask=2/u,sched:sched_switch",
					       "ibs_op//", "cpu/event=1,,umask=2/" };
	for (size_t i = 0; i < ARRAY_SIZE(with); i++)
		cr_expect(pmu_event_list_has_empty_item(with[i]), "'%s' has an empty item", with[i]);
	for (size_t i = 0; i < ARRAY_SIZE(without); i++)
		cr_expect_not(pmu_event_list_has_empty_item(without[i]), "'%s' has none", without[i]);
}

Test(pmu, bad_names)
{
	parse_fails("", -EINVAL, "empty event name");
	parse_fails("no-such-event-anywhere", -ENOENT, "no such event");
	char longname[200];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	struct pmu_event ev;
	char err[256];
	cr_assert_eq(pmu_event_parse(longname, &ev, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "longer than"));
}

/* The tracefs id of system:name as the kernel writes it, or false when tracefs is not readable here. */
static bool tracefs_id(const char *system, const char *name, uint64_t *id)
{
	char dir[256], err[256];
	if (tracefs_find(dir, sizeof(dir), err, sizeof(err)) < 0)
		return false;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, system, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	unsigned long long v;
	bool ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	*id = v;
	return ok;
}

Test(pmu, tracepoints)
{
	uint64_t id;
	if (!tracefs_id("sched", "sched_switch", &id)) {
		fprintf(stderr, "pmu::tracepoints skipped: tracefs is not readable here (not root?)\n");
		return;
	}
	struct pmu_event ev = parse_ok("sched:sched_switch");
	cr_assert_eq(ev.source, PMU_SOURCE_TRACEPOINT);
	cr_assert_eq(ev.attr.type, PERF_TYPE_TRACEPOINT);
	cr_assert_eq(ev.attr.config, id);
	cr_assert_str_eq(ev.tracepoint_system, "sched");
	cr_assert_str_eq(ev.tracepoint_name, "sched_switch");
	cr_assert_str_eq(ev.pmu, "tracepoint");
	ev = parse_ok("sched:sched_switch:k");
	cr_assert_eq(ev.attr.config, id);
	cr_assert_eq(ev.attr.exclude_user, 1);
	parse_fails("sched:no_such_tracepoint", -ENOENT, "no tracepoint 'sched:no_such_tracepoint'");
}

Test(pmu, libpfm_generic_names_on_any_machine)
{
	/* libpfm4's perf:: PMU is there whatever the hardware: it names the kernel's generic events */
	struct pmu_event ev = parse_ok("perf::CACHE-MISSES");
	cr_assert_eq(ev.source, PMU_SOURCE_LIBPFM);
	cr_assert_eq(ev.attr.type, PERF_TYPE_HARDWARE);
	cr_assert_eq(ev.attr.config, PERF_COUNT_HW_CACHE_MISSES);
	cr_assert_str_eq(ev.pmu, "perf");
	ev = parse_ok("perf::INSTRUCTIONS:u");
	cr_assert_eq(ev.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	cr_assert_eq(ev.attr.exclude_kernel, 1);
}

/* Whatever the text, a parse is 0 or an error with one line naming the problem, never a crash (ASan build). */
Test(pmu, odd_input_is_an_error_line)
{
	static const char *const specs[] = {
		"/",          "//",          "cpu//:",     "cpu/,/",       "cpu/=/",        "cpu/event=/",
		"cpu/=1/",    ":",           "::",         ":u",           "a:b:c:d",       "cpu/event=0x1ffffffffffffffffff/",
		"cpu/ldlat=99999/", "cpu/event=1/::", "cycles::u", "perf::",  "sched:",  "sched:../../x",
		"cpu/mem-loads/P:u", "L1-dcache-", "-", "cpu/event=1,event=2/",
	};
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct pmu_event ev;
		char err[256] = "";
		int ret = pmu_event_parse(specs[i], &ev, err, sizeof(err));
		if (ret == 0)
			continue;
		cr_assert_lt(ret, 0);
		cr_assert(err[0] && !strchr(err, '\n'), "%s: '%s'", specs[i], err);
	}
	struct pmu_event ev;
	char err[256];
	/* the later of two values of one term wins, as in perf */
	cr_assert_eq(pmu_event_parse("cpu/event=1,event=2/", &ev, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ev.attr.config, 2);
	cr_assert_eq(pmu_event_parse("cpu/ldlat=99999/", &ev, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "does not fit"), "%s", err);
}

/*
 * A spec is echoed quoted, its control characters escaped, on every path
 * of the parser that names it: a newline or an escape in what the user
 * typed never makes a second line or reaches the terminal raw.
 */
Test(pmu, specs_with_control_characters_are_echoed_escaped)
{
	static const struct {
		const char *spec, *shown;
	} cases[] = {
		{ "cpu-clock\nfoo", "event 'cpu-clock\\nfoo'" },             /* no such event (libpfm4) */
		{ "cpu-clock:u\x1bk", "unknown modifier '\\x1b'" },          /* a generic name's modifiers */
		{ "page-faults:\n", "event 'page-faults:\\n'" },
		{ "nope\n/event=1/", "no PMU 'nope\\n'" },                  /* sysfs: no such PMU */
		{ "cpu/event=1,\tbad/", "no term or event '\\tbad'" },      /* sysfs: no such term */
		{ "cpu/event=1\r/", "'1\\x0d' is not a number" },
		{ "cpu/event=1/\n", "unknown modifier '\\n'" },
		{ "it's\a", "event 'it\\'s\\x07'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pmu_event ev;
		char err[256] = "";
		cr_assert_lt(pmu_event_parse(cases[i].spec, &ev, err, sizeof(err)), 0, "%s", cases[i].spec);
		cr_assert(strstr(err, cases[i].shown), "case %zu: '%s' lacks %s", i, err, cases[i].shown);
		for (const char *c = err; *c; c++)
			cr_assert_geq((unsigned char)*c, 0x20, "case %zu: a raw control character in '%s'", i, err);
	}
	/* an overlong spec is cut, inside its quotes */
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	longname[10] = '\n';
	struct pmu_event ev;
	char err[256];
	cr_assert_eq(pmu_event_parse(longname, &ev, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "event 'aaaaaaaaaa\\naaa") && strstr(err, "...': name longer than"), "%s", err);
}

/*
 * A server's sysfs: more PMUs than 64 (uncore boxes by the hundred), a
 * core PMU with more than 256 aliases (some longer than 31 characters) and
 * a hybrid core PMU whose CPU list is longer than 128 characters.  Every
 * one is found, sorted by name, and the CPU list is whole; `sigprof list
 * --names` shows them all.
 */
#define MANY_PMUS 150
#define MANY_ALIASES 400

/* Run cmd_list(argv) with its stdout into a string (malloc'd); its exit status in *status. */
static char *list_output(char **argv, int argc, int *status)
{
	char *dir = temp_dir_new();
	char *file = path_join(dir, "list.txt");
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	cr_assert_geq(dup2(fileno(f), STDOUT_FILENO), 0);
	*status = cmd_list(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	fclose(f);
	char *text = read_text_file(file);
	free(file);
	temp_dir_remove(dir);
	return text;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(pmu, many_pmus_aliases_and_a_long_cpu_list)
{
	char *big = temp_dir_new();
	char *expected[MANY_PMUS + 2];
	size_t nexpected = 0;
	/* made in an order that is neither sorted nor reverse sorted */
	for (int i = 0; i < MANY_PMUS; i++) {
		char name[48], type[16];
		snprintf(name, sizeof(name), "uncore_cha_%d", (i * 37) % MANY_PMUS);
		snprintf(type, sizeof(type), "%d\n", 100 + i);
		sysfs_pmu_file(big, name, "type", type);
		expected[nexpected++] = xstrdup(name);
	}
	sysfs_pmu_file(big, "cpu_core", "type", "8\n");
	sysfs_pmu_file(big, "cpu_atom", "type", "10\n");
	sysfs_pmu_file(big, "uncore_cha_99", "format/event", "config:0-7\n");
	sysfs_pmu_file(big, "uncore_cha_99", "events/late_event", "event=0x4\n"); /* the last by name */
	expected[nexpected++] = xstrdup("cpu_atom");
	expected[nexpected++] = xstrdup("cpu_core");
	qsort(expected, nexpected, sizeof(*expected), compare_strings);

	char *aliases[MANY_ALIASES + 1];
	for (int i = 0; i < MANY_ALIASES; i++) {
		char rel[96];
		snprintf(rel, sizeof(rel), "events/alias_%03d", (i * 7) % MANY_ALIASES);
		sysfs_pmu_file(big, "cpu_core", rel, "event=0x1\n");
		strcat(rel, ".scale");
		sysfs_pmu_file(big, "cpu_core", rel, "1\n");
		aliases[i] = xstrdup(rel + strlen("events/"));
		aliases[i][strlen(aliases[i]) - strlen(".scale")] = '\0';
	}
	const char *long_alias = "unc_cha_tor_inserts.ia_miss_drd_local_ddr"; /* a dotted name is a companion: skipped */
	const char *long_plain = "mem_load_l3_miss_retired_remote_hitm_any";
	char rel[128];
	snprintf(rel, sizeof(rel), "events/%s", long_alias);
	sysfs_pmu_file(big, "cpu_core", rel, "event=0x2\n");
	snprintf(rel, sizeof(rel), "events/%s", long_plain);
	sysfs_pmu_file(big, "cpu_core", rel, "event=0x3\n");
	aliases[MANY_ALIASES] = xstrdup(long_plain);
	qsort(aliases, MANY_ALIASES + 1, sizeof(*aliases), compare_strings);

	struct strbuf cpus = { 0 };
	for (int cpu = 0; cpu < 512; cpu += 3)
		sb_addf(&cpus, "%s%d", cpu ? "," : "", cpu);
	cr_assert_gt(cpus.len, 128);
	sb_addstr(&cpus, "\n");
	sysfs_pmu_file(big, "cpu_core", "cpus", cpus.buf);
	cpus.buf[--cpus.len] = '\0';
	pmu_set_sysfs_root(big);

	struct pmu_names names;
	pmu_sysfs_names(&names);
	cr_assert_eq(names.count, nexpected, "every PMU: %zu of %zu", names.count, nexpected);
	for (size_t i = 0; i < nexpected; i++)
		cr_assert_str_eq(names.names[i], expected[i], "sorted by name, at %zu", i);
	pmu_names_free(&names);

	struct pmu_names events;
	pmu_sysfs_events("cpu_core", &events);
	cr_assert_eq(events.count, MANY_ALIASES + 1, "every alias: %zu", events.count);
	for (size_t i = 0; i < events.count; i++)
		cr_assert_str_eq(events.names[i], aliases[i], "sorted by name, at %zu", i);
	pmu_names_free(&events);

	char *got = pmu_sysfs_cpus("cpu_core");
	cr_assert_not_null(got);
	cr_assert_str_eq(got, cpus.buf, "the whole list of %zu characters", cpus.len);
	free(got);

	/* past the first 64 PMUs in any order: the hybrid core PMUs are still found */
	char core[4][32];
	uint32_t types[4];
	cr_assert_eq(pmu_hybrid_core_pmus(core, types, 4), 2);
	cr_assert_str_eq(core[0], "cpu_atom");
	cr_assert_str_eq(core[1], "cpu_core");
	/* and a bare alias of the last of them all is found */
	struct pmu_event ev;
	char err[256];
	cr_assert_eq(pmu_event_parse("late_event", &ev, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(ev.pmu, expected[nexpected - 1]);

	/* sigprof list --names: every PMU in order, every alias */
	char *argv[] = { "list", "--names", NULL };
	int status;
	char *text = list_output(argv, 2, &status);
	cr_assert_eq(status, 0);
	const char *at = strstr(text, "sysfs PMUs and their event aliases");
	cr_assert_not_null(at, "%s", text);
	for (size_t i = 0; i < nexpected; i++) {
		char row[64];
		snprintf(row, sizeof(row), "\n  %-20s  ", expected[i]);
		const char *next = strstr(at, row);
		cr_assert_not_null(next, "%s is not listed after the PMU before it", expected[i]);
		at = next + 1;
	}
	const char *core_row = strstr(text, "\n  cpu_core  ");
	for (int i = 0; i <= MANY_ALIASES; i++) {
		char item[64];
		snprintf(item, sizeof(item), "%s,", aliases[i]);
		cr_assert(strstr(core_row, item) || strstr(core_row, aliases[i]), "alias %s is not listed", aliases[i]);
	}
	/* the summary line names every PMU too */
	const char *summary = strstr(text, "sysfs PMUs  ");
	cr_assert_not_null(summary, "%s", text);
	for (size_t i = 0; i < nexpected; i++)
		cr_assert(strstr(summary, expected[i]), "%s is not in the summary", expected[i]);
	free(text);

	for (size_t i = 0; i < nexpected; i++)
		free(expected[i]);
	for (int i = 0; i <= MANY_ALIASES; i++)
		free(aliases[i]);
	sb_free(&cpus);
	pmu_set_sysfs_root(root);
	temp_dir_remove(big);
}
