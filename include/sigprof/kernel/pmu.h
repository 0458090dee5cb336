/*
 * pmu.h: event names to perf_event_attr, and what PMUs this machine has.
 *
 * One parser for every event a user names (-e of record and stat) or a
 * collector asks for.  It takes, in this order of trial:
 *   - tracepoints: SYSTEM:NAME (sched:sched_switch), resolved through tracefs;
 *   - sysfs PMU syntax: PMU/TERM,TERM=VALUE,.../ (cpu/mem-loads,ldlat=30/,
 *     ibs_op//, cpu/event=0xc0,umask=0x1/), with the terms and aliases read
 *     from /sys/bus/event_source/devices/PMU/{type,format/,events/};
 *   - perf's generic names: hardware (cycles, instructions, cache-misses,
 *     cache-references, branches, branch-misses, ...), software (cpu-clock,
 *     task-clock, page-faults, context-switches, cpu-migrations, ...) and
 *     generic cache events (L1-dcache-load-misses, LLC-loads, ...);
 *   - libpfm4 names (MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM, perf::CACHE-MISSES,
 *     skl::INST_RETIRED:ANY_P), encoded by pfm_get_os_event_encoding().
 * Each may end in perf's modifiers after a colon (or after the closing '/'
 * of the sysfs form): u, k, h, H, G, p (repeated: precise_ip 1..3), P
 * (the highest precision the PMU accepts, found at open time).
 *
 * The tests point the parser at a sysfs tree of their own
 * (pmu_set_sysfs_root) and at a PMU model of libpfm4's choosing
 * (LIBPFM_FORCE_PMU / LIBPFM_ENCODE_INACTIVE in the environment before the
 * first parse), so encodings for machines we do not have are checked here.
 */
#ifndef SIGPROF_PMU_H
#define SIGPROF_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/kernel/perf.h"

enum pmu_event_source {
	PMU_SOURCE_TRACEPOINT, /* SYSTEM:NAME */
	PMU_SOURCE_SYSFS,      /* PMU/terms/ */
	PMU_SOURCE_GENERIC,    /* perf's generic hardware, software and cache names */
	PMU_SOURCE_LIBPFM,     /* a libpfm4 name */
};

struct pmu_event {
	char name[128];                 /* the spec as written, modifiers included */
	enum pmu_event_source source;
	/*
	 * type, config, config1, config2, precise_ip and exclude_user/kernel/hv/
	 * host/guest as the name and its modifiers say; every sampling field
	 * (sample_type, period, flags such as disabled) is left zero for the
	 * caller (pmu_event_apply()).
	 */
	struct perf_event_attr attr;
	bool max_precise;               /* :P: try precise_ip 3, 2, 1, 0 at open time */
	char pmu[32];                   /* the PMU that encodes it: "cpu", "cpu_core", "ibs_op", "software",
					   "tracepoint", or libpfm4's PMU name ("skl", "spr", "amd64_fam19h_zen3") */
	char tracepoint_system[64];     /* SYSTEM and NAME of a tracepoint */
	char tracepoint_name[64];
	bool privilege_modifier;        /* u, k or h given: exclude_user/kernel/hv are the event's to set */
	bool host_guest_modifier;       /* H or G given: exclude_host/guest are the event's to set */
};

/*
 * Parse one event (the caller splits a list with pmu_event_list_next()).
 * 0, or a negative errno with one line in err naming the event and what is
 * wrong: -ENOENT (no such event, PMU or tracepoint here), -EINVAL (bad
 * syntax, unknown term or modifier), -EACCES (tracefs not readable).
 */
int pmu_event_parse(const char *spec, struct pmu_event *ev, char *err, size_t errlen);

/*
 * The next event of a comma-separated list into buf, honouring commas
 * inside a sysfs PMU/.../ term list; *list advances past it.  false at the
 * end of the list.
 */
bool pmu_event_list_next(const char **list, char *buf, size_t buflen);
/* Whether the list has an empty item (",a", "a,", "a,,b", ""), which pmu_event_list_next() would skip. */
bool pmu_event_list_has_empty_item(const char *list);

/*
 * Copy what the event names (type, config*, precise_ip, exclude_*) into an
 * attr built by sampling_attr_init().  The exclude_* bits are copied only
 * when a modifier set them (privilege_modifier, host_guest_modifier): an
 * event without modifiers keeps the attr's own (exclude_kernel when the
 * kernel may not be sampled, exclude_hv, exclude_guest).
 */
void pmu_event_apply(const struct pmu_event *ev, struct perf_event_attr *attr);

/*
 * For an event with max_precise (:P): set attr->precise_ip to the highest
 * of 3, 2, 1, 0 that opens here (perf_event_probe()).  0, or the error of
 * precise_ip 0.
 */
int pmu_event_max_precise(struct perf_event_attr *attr);

/* perf's generic hardware and software names, in table order (i from 0); NULL past the end.  Its type in *type. */
const char *pmu_generic_name(size_t i, uint32_t *type);

/* ---- this machine's PMUs ---- */

/* Read PMUs from DIR instead of /sys/bus/event_source/devices (tests); NULL restores the default. */
void pmu_set_sysfs_root(const char *dir);
/* Names a sysfs listing found, every one of them (grown as needed), sorted by name (strcmp). */
struct pmu_names {
	char **names;
	size_t count;
};
void pmu_names_free(struct pmu_names *names);
/* The sysfs PMUs present (directory names); out to free with pmu_names_free(). */
void pmu_sysfs_names(struct pmu_names *out);
/* A sysfs PMU's event aliases (events/ without the .scale/.unit companions); out to free with pmu_names_free(). */
void pmu_sysfs_events(const char *pmu, struct pmu_names *out);
/* The perf type of a sysfs PMU ("cpu", "cpu_core", "ibs_op"); 0 or -ENOENT. */
int pmu_sysfs_type(const char *pmu, uint32_t *type);
/*
 * The CPUs a sysfs PMU covers, as its `cpus` file lists them ("0-15"),
 * whole however long, malloc'd: a hybrid part's cpu_core and cpu_atom each
 * cover their own.  NULL when the PMU has no such file (it covers every
 * CPU).
 */
char *pmu_sysfs_cpus(const char *pmu);
/* Whether the sysfs PMU has the named event alias (events/NAME). */
bool pmu_sysfs_has_event(const char *pmu, const char *event);
/*
 * A hybrid part's core PMUs (sysfs PMUs named cpu_* with a type: cpu_core,
 * cpu_atom), found among every sysfs PMU, into names and types, sorted by
 * name, up to max; 0 where one
 * PMU (`cpu`) covers every core.  There a generic hardware event counts on
 * every core only when opened once per core PMU, with that PMU's type in
 * bits 32-63 of its config (PERF_PMU_TYPE_SHIFT), as perf opens `cycles`.
 */
size_t pmu_hybrid_core_pmus(char (*names)[32], uint32_t *types, size_t max);
#ifndef PERF_PMU_TYPE_SHIFT
#define PERF_PMU_TYPE_SHIFT 32
#endif

/*
 * libpfm4's name for this machine's core PMU (or the forced one): "skl",
 * "spr", "adl_glc", "amd64_fam19h_zen3", ...; NULL when it finds none (a VM
 * without a PMU) or libpfm4 does not initialize.
 */
const char *pmu_core_model(void);

/*
 * Append a parsed event  for collector, sampled as opts says (the
 * user's frequency or period and call graph; default call graph
 * default_call_graph), a tracepoint at every hit with its raw data.  With
 * :P the highest precise_ip that opens here is taken.  0, or -errno with
 * the reason in reason.
 */
int event_list_add_parsed(struct event_list *list, const struct record_options *opts, const struct pmu_event *ev,
			  const char *collector, enum call_graph_mode default_call_graph, char *reason,
			  size_t reasonlen);

#endif
