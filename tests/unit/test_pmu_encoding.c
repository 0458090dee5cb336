/*
 * test_pmu_encoding.c: the events sigprof asks for, encoded for machines we
 * do not have.  libpfm4 reads LIBPFM_FORCE_PMU (take this model as the
 * host's core PMU) and LIBPFM_ENCODE_INACTIVE (encode for it although it is
 * not detected) when it initializes; criterion runs each test in its own
 * process, so a suite's .init sets them before the first parse.
 *
 * Expected codes are the vendors', as libpfm4's event tables carry them
 * (lib/events/intel_skl_events.h, intel_spr_events.h, amd64_events_fam19h_zen3.h):
 *   Intel SDM vol. 3B, ch. 19 (Skylake; Sapphire Rapids):
 *     INST_RETIRED.ANY_P               event 0xC0 umask 0x00
 *     LONGEST_LAT_CACHE.REFERENCE      event 0x2E umask 0x4F (architectural "LLC reference";
 *                                      the kernel's cache-references on Intel)
 *     LONGEST_LAT_CACHE.MISS           event 0x2E umask 0x41 (architectural "LLC misses";
 *                                      the kernel's cache-misses on Intel)
 *     MEM_LOAD_L3_HIT_RETIRED.XSNP_HITM event 0xD2 umask 0x04 (Skylake); on Sapphire Rapids the
 *                                      same code is named XSNP_FWD
 *     MEM_TRANS_RETIRED.LOAD_LATENCY   event 0xCD umask 0x01, threshold in MSR_PEBS_LD_LAT (config1)
 *   AMD PPR for family 19h (Zen 3):
 *     RETIRED_INSTRUCTIONS             PMCx0C0
 *     CYCLES_NOT_IN_HALT               PMCx076
 *     Core to L2 cacheable request access status, LsRdBlkC (data cache miss in L2): PMCx064 umask 0x08
 * A core event encodes to PERF_TYPE_RAW with the event select in config
 * bits 0-7 and the unit mask in bits 8-15; the generic names stay generic
 * (PERF_TYPE_HARDWARE), the kernel mapping them per model.
 *
 * Debian 12's libpfm4 (4.13) knows no hybrid model (no adl_glc/adl_grt):
 * hybrid parts are covered through sysfs (cpu_core/cpu_atom) in test_pmu.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/pmu.h"

static void force(const char *model)
{
	setenv("LIBPFM_FORCE_PMU", model, 1);
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
}

static void force_skl(void)
{
	force("skl");
}

static void force_spr(void)
{
	force("spr");
}

static void force_zen3(void)
{
	force("amd64_fam19h_zen3");
}

TestSuite(encode_skl, .init = force_skl);
TestSuite(encode_spr, .init = force_spr);
TestSuite(encode_zen3, .init = force_zen3);

static void expect_encoding(const char *spec, uint32_t type, uint64_t config, uint64_t config1,
			    const char *pmu)
{
	struct pmu_event ev;
	char err[256] = "";
	int ret = pmu_event_parse(spec, &ev, err, sizeof(err));
	cr_assert_eq(ret, 0, "%s: %d %s", spec, ret, err);
	cr_assert_eq(ev.attr.type, type, "%s: type %u", spec, ev.attr.type);
	cr_assert_eq(ev.attr.config, config, "%s: config %#llx, expected %#llx", spec,
		     (unsigned long long)ev.attr.config, (unsigned long long)config);
	cr_assert_eq(ev.attr.config1, config1, "%s: config1 %#llx", spec, (unsigned long long)ev.attr.config1);
	cr_assert_str_eq(ev.pmu, pmu, "%s", spec);
}

/* What the cache collector opens: generic names whatever the model. */
static void expect_cache_collector_events(void)
{
	expect_encoding("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0, "hardware");
	expect_encoding("cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 0, "hardware");
	expect_encoding("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, "hardware");
	expect_encoding("perf::CACHE-MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0, "perf");
}

Test(encode_skl, core_model_is_forced)
{
	const char *model = pmu_core_model();
	cr_assert_not_null(model);
	cr_assert_str_eq(model, "skl");
}

Test(encode_skl, cache_collector_events)
{
	expect_cache_collector_events();
	expect_encoding("LONGEST_LAT_CACHE:MISS", PERF_TYPE_RAW, 0x412e, 0, "skl");
	expect_encoding("LONGEST_LAT_CACHE:REFERENCE", PERF_TYPE_RAW, 0x4f2e, 0, "skl");
	expect_encoding("INST_RETIRED:ANY_P", PERF_TYPE_RAW, 0xc0, 0, "skl");
}

Test(encode_skl, hitm_and_load_latency)
{
	expect_encoding("MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM", PERF_TYPE_RAW, 0x4d2, 0, "skl");
	expect_encoding("skl::MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM", PERF_TYPE_RAW, 0x4d2, 0, "skl");
	expect_encoding("MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", PERF_TYPE_RAW, 0x1cd, 30, "skl");
}

Test(encode_skl, perf_modifiers_on_libpfm_names)
{
	struct pmu_event ev;
	char err[256] = "";
	cr_assert_eq(pmu_event_parse("MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM:pp", &ev, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ev.attr.config, 0x4d2);
	cr_assert_eq(ev.attr.precise_ip, 2);
	cr_assert_eq(pmu_event_parse("INST_RETIRED:ANY_P:u", &ev, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ev.attr.config, 0xc0);
	cr_assert_eq(ev.attr.exclude_kernel, 1);
	cr_assert_eq(ev.attr.exclude_user, 0);
	cr_assert_eq(pmu_event_parse("MEM_LOAD_L3_HIT_RETIRED:NO_SUCH_UMASK", &ev, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "MEM_LOAD_L3_HIT_RETIRED:NO_SUCH_UMASK") && strstr(err, "libpfm4"), "%s", err);
}

Test(encode_spr, core_model_is_forced)
{
	const char *model = pmu_core_model();
	cr_assert_not_null(model);
	cr_assert_str_eq(model, "spr");
}

Test(encode_spr, cache_collector_events)
{
	expect_cache_collector_events();
	expect_encoding("LONGEST_LAT_CACHE:MISS", PERF_TYPE_RAW, 0x412e, 0, "spr");
	expect_encoding("LONGEST_LAT_CACHE:REFERENCE", PERF_TYPE_RAW, 0x4f2e, 0, "spr");
	expect_encoding("INST_RETIRED:ANY_P", PERF_TYPE_RAW, 0xc0, 0, "spr");
}

Test(encode_spr, hitm_is_named_xsnp_fwd)
{
	expect_encoding("MEM_LOAD_L3_HIT_RETIRED:XSNP_FWD", PERF_TYPE_RAW, 0x4d2, 0, "spr");
	expect_encoding("MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", PERF_TYPE_RAW, 0x1cd, 30, "spr");
}

Test(encode_zen3, core_model_is_forced)
{
	const char *model = pmu_core_model();
	cr_assert_not_null(model);
	cr_assert_str_eq(model, "amd64_fam19h_zen3");
}

Test(encode_zen3, cache_collector_events)
{
	expect_cache_collector_events();
	expect_encoding("RETIRED_INSTRUCTIONS", PERF_TYPE_RAW, 0xc0, 0, "amd64_fam19h_zen3");
	expect_encoding("CYCLES_NOT_IN_HALT", PERF_TYPE_RAW, 0x76, 0, "amd64_fam19h_zen3");
	expect_encoding("CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", PERF_TYPE_RAW, 0x864, 0,
			"amd64_fam19h_zen3");
}

Test(encode_zen3, intel_names_are_unknown)
{
	struct pmu_event ev;
	char err[256] = "";
	cr_assert_eq(pmu_event_parse("MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM", &ev, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "amd64_fam19h_zen3"), "%s", err);
}
