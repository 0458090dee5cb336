/*
 * pmu.c: event names to perf_event_attr (pmu.h), and what PMUs this machine
 * has.
 *
 * A spec is tried as each form in turn, the way perf's parse-events does it
 * but without its grammar: the sysfs form is recognised by its '/', the
 * rest by lookup (generic names from a table, tracepoints in tracefs, then
 * libpfm4).  Modifiers are split off first: after the closing '/' of the
 * sysfs form, else the last ':' segment when it is made of modifier letters
 * only.  A libpfm4 name whose last unit mask happens to look like modifiers
 * is tried whole as well, so "X:P" still reaches libpfm4 if "X" alone fails.
 *
 * The sysfs root is a variable so the tests can lay out a PMU of their own
 * (a Skylake-like `cpu` with `ldlat`, a hybrid `cpu_core`) and check the
 * bit placement of format/ fields without that hardware.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <perfmon/pfmlib.h>

#include "sigprof/kernel/perf.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

#define DEFAULT_SYSFS_ROOT "/sys/bus/event_source/devices"

static char sysfs_root[PATH_MAX] = DEFAULT_SYSFS_ROOT;

void pmu_set_sysfs_root(const char *dir)
{
	snprintf(sysfs_root, sizeof(sysfs_root), "%s", dir ? dir : DEFAULT_SYSFS_ROOT);
}

/* ---- perf's generic names (tools/perf/util/parse-events.c, evsel.c) ---- */

struct generic_name {
	const char *name;
	const char *alias; /* perf's other spelling, or NULL */
	uint32_t type;
	uint64_t config;
};

static const struct generic_name generic_names[] = {
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "bpf-output", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT },
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
};

/* Generic cache events: CACHE[-OP][-RESULT], config = cache | op << 8 | result << 16. */
struct cache_word {
	const char *names[5]; /* perf's spellings, the first is the canonical one */
	unsigned id;
};

static const struct cache_word cache_levels[] = {
	{ { "L1-dcache", "l1-d", "l1d", "L1-data" }, PERF_COUNT_HW_CACHE_L1D },
	{ { "L1-icache", "l1-i", "l1i", "L1-instruction" }, PERF_COUNT_HW_CACHE_L1I },
	{ { "LLC", "L2" }, PERF_COUNT_HW_CACHE_LL },
	{ { "dTLB", "d-tlb", "Data-TLB" }, PERF_COUNT_HW_CACHE_DTLB },
	{ { "iTLB", "i-tlb", "Instruction-TLB" }, PERF_COUNT_HW_CACHE_ITLB },
	{ { "branch", "branches", "bpu", "btb", "bpc" }, PERF_COUNT_HW_CACHE_BPU },
	{ { "node" }, PERF_COUNT_HW_CACHE_NODE },
};

static const struct cache_word cache_ops[] = {
	{ { "load", "loads", "read" }, PERF_COUNT_HW_CACHE_OP_READ },
	{ { "store", "stores", "write" }, PERF_COUNT_HW_CACHE_OP_WRITE },
	{ { "prefetch", "prefetches", "speculative-read", "speculative-load" }, PERF_COUNT_HW_CACHE_OP_PREFETCH },
};

static const struct cache_word cache_results[] = {
	{ { "refs", "Reference", "ops", "access" }, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ { "misses", "miss" }, PERF_COUNT_HW_CACHE_RESULT_MISS },
};

/* The entry of table whose spelling starts s and ends at a '-' or the end; its length in *len. */
static const struct cache_word *cache_word_at(const struct cache_word *table, size_t n, const char *s,
					      size_t *len)
{
	const struct cache_word *best = NULL;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(table[i].names) && table[i].names[k]; k++) {
			size_t l = strlen(table[i].names[k]);
			if (strncasecmp(s, table[i].names[k], l) == 0 && (s[l] == '\0' || s[l] == '-') &&
			    (!best || l > *len)) {
				best = &table[i];
				*len = l;
			}
		}
	}
	return best;
}

static bool parse_cache_name(const char *name, uint64_t *config)
{
	size_t len = 0;
	const struct cache_word *level = cache_word_at(cache_levels, ARRAY_SIZE(cache_levels), name, &len);
	if (!level)
		return false;
	const struct cache_word *op = NULL, *result = NULL;
	const char *p = name + len;
	while (*p == '-') {
		p++;
		const struct cache_word *w;
		if (!op && !result && (w = cache_word_at(cache_ops, ARRAY_SIZE(cache_ops), p, &len)))
			op = w;
		else if (!result && (w = cache_word_at(cache_results, ARRAY_SIZE(cache_results), p, &len)))
			result = w;
		else
			return false;
		p += len;
	}
	if (*p)
		return false;
	unsigned op_id = op ? op->id : PERF_COUNT_HW_CACHE_OP_READ;
	unsigned result_id = result ? result->id : PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	*config = level->id | (uint64_t)op_id << 8 | (uint64_t)result_id << 16;
	return true;
}

static bool parse_generic(const char *name, struct pmu_event *ev)
{
	for (size_t i = 0; i < ARRAY_SIZE(generic_names); i++) {
		const struct generic_name *g = &generic_names[i];
		if (strcmp(name, g->name) == 0 || (g->alias && strcmp(name, g->alias) == 0)) {
			ev->attr.type = g->type;
			ev->attr.config = g->config;
			snprintf(ev->pmu, sizeof(ev->pmu), "%s", g->type == PERF_TYPE_SOFTWARE ? "software" : "hardware");
			return true;
		}
	}
	uint64_t config;
	if (!parse_cache_name(name, &config))
		return false;
	ev->attr.type = PERF_TYPE_HW_CACHE;
	ev->attr.config = config;
	snprintf(ev->pmu, sizeof(ev->pmu), "hw_cache");
	return true;
}

const char *pmu_generic_name(size_t i, uint32_t *type)
{
	if (i >= ARRAY_SIZE(generic_names))
		return NULL;
	if (type)
		*type = generic_names[i].type;
	return generic_names[i].name;
}

/* ---- modifiers ---- */

static bool is_modifier_text(const char *s)
{
	return *s && strspn(s, "ukhHGpP") == strlen(s);
}

static int parse_modifiers(const char *mods, struct pmu_event *ev, char *err, size_t errlen)
{
	bool u = false, k = false, h = false, host = false, guest = false;
	unsigned p = 0;
	for (const char *c = mods; *c; c++) {
		switch (*c) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'H': host = true; break;
		case 'G': guest = true; break;
		case 'p': p++; break;
		case 'P': ev->max_precise = true; break;
		default: {
			const char modifier[2] = { *c, '\0' };
			snprintf(err, errlen, "event %s: unknown modifier %s (modifiers: u k h H G p pp ppp P)",
				 QUOTED(ev->name), QUOTED(modifier));
			return -EINVAL;
		}
		}
	}
	if (p > 3) {
		snprintf(err, errlen, "event %s: at most 3 p modifiers (precise_ip 0..3)", QUOTED(ev->name));
		return -EINVAL;
	}
	if (p && ev->max_precise) {
		snprintf(err, errlen, "event %s: p and P together (P already asks for the highest precision)",
			 QUOTED(ev->name));
		return -EINVAL;
	}
	ev->attr.precise_ip = p;
	if (u || k || h) {
		ev->privilege_modifier = true;
		ev->attr.exclude_user = !u;
		ev->attr.exclude_kernel = !k;
		ev->attr.exclude_hv = !h;
	}
	if (host || guest) {
		ev->host_guest_modifier = true;
		ev->attr.exclude_guest = !guest;
		ev->attr.exclude_host = !host;
	}
	return 0;
}

/* ---- sysfs PMUs ---- */

/* A sysfs file of PMU pmu (name relative to its directory), trimmed of trailing white space; free() it. */
static char *pmu_file(const char *pmu, const char *name)
{
	char path[PATH_MAX + 128];
	snprintf(path, sizeof(path), "%s/%s/%s", sysfs_root, pmu, name);
	size_t len;
	char *text = read_whole_file(path, &len);
	if (!text)
		return NULL;
	while (len && isspace((unsigned char)text[len - 1]))
		text[--len] = '\0';
	return text;
}

/* A PMU name, an alias or a term: no path separators, nothing empty. */
static bool is_plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int pmu_sysfs_type(const char *pmu, uint32_t *type)
{
	if (!is_plain_name(pmu))
		return -ENOENT;
	char *text = pmu_file(pmu, "type");
	if (!text)
		return -ENOENT;
	uint64_t v;
	int err = parse_u64(text, 0, UINT32_MAX, &v);
	free(text);
	if (err)
		return -ENOENT;
	*type = (uint32_t)v;
	return 0;
}

char *pmu_sysfs_cpus(const char *pmu)
{
	return is_plain_name(pmu) ? pmu_file(pmu, "cpus") : NULL;
}

bool pmu_sysfs_has_event(const char *pmu, const char *event)
{
	if (!is_plain_name(pmu) || !is_plain_name(event))
		return false;
	char path[PATH_MAX + 256];
	snprintf(path, sizeof(path), "%s/%s/events/%s", sysfs_root, pmu, event);
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void pmu_names_free(struct pmu_names *n)
{
	for (size_t i = 0; i < n->count; i++)
		free(n->names[i]);
	free(n->names);
	memset(n, 0, sizeof(*n));
}

/*
 * Every entry of a directory but dot files (and, with skip_dotted, any name
 * holding a dot), sorted by name: a server has hundreds of uncore PMUs and
 * a core PMU hundreds of aliases, so nothing is capped or taken in readdir
 * order.
 */
static void list_dir(const char *path, bool skip_dotted, struct pmu_names *out)
{
	memset(out, 0, sizeof(*out));
	DIR *d = opendir(path);
	if (!d)
		return;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (skip_dotted && strchr(de->d_name, '.')))
			continue;
		GROW(out->names, cap, out->count + 1);
		out->names[out->count++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (out->count)
		sort_items(out->names, out->count, sizeof(*out->names), compare_names);
}

void pmu_sysfs_names(struct pmu_names *out)
{
	list_dir(sysfs_root, false, out);
}

void pmu_sysfs_events(const char *pmu, struct pmu_names *out)
{
	memset(out, 0, sizeof(*out));
	if (!is_plain_name(pmu))
		return;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s/events", sysfs_root, pmu);
	/* NAME.scale, NAME.unit, NAME.per-pkg, NAME.snapshot describe NAME; they are no events */
	list_dir(path, true, out);
}

size_t pmu_hybrid_core_pmus(char (*names)[32], uint32_t *types, size_t max)
{
	struct pmu_names all;
	pmu_sysfs_names(&all);
	size_t found = 0;
	for (size_t i = 0; i < all.count && found < max; i++) {
		if (strncmp(all.names[i], "cpu_", 4) != 0 || strlen(all.names[i]) >= sizeof(names[0]) ||
		    pmu_sysfs_type(all.names[i], &types[found]) < 0)
			continue;
		snprintf(names[found++], sizeof(names[0]), "%s", all.names[i]);
	}
	pmu_names_free(&all);
	return found;
}

/* A format/ field: which config word, and the bit ranges, low bits of the value first. */
struct format_field {
	int word; /* 0 config, 1 config1, 2 config2 */
	unsigned nranges;
	struct {
		unsigned lo, hi;
	} ranges[8];
};

/* "config:0-7", "config1:0-15", "config:0-7,32-35", "config:21". */
static int parse_format(const char *text, struct format_field *f)
{
	const char *colon = strchr(text, ':');
	if (!colon)
		return -EINVAL;
	size_t wlen = (size_t)(colon - text);
	if (wlen == 6 && strncmp(text, "config", 6) == 0)
		f->word = 0;
	else if (wlen == 7 && strncmp(text, "config1", 7) == 0)
		f->word = 1;
	else if (wlen == 7 && strncmp(text, "config2", 7) == 0)
		f->word = 2;
	else
		return -EINVAL;
	f->nranges = 0;
	const char *p = colon + 1;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1)
				return -EINVAL;
			p = end;
		}
		if (lo > hi || hi > 63 || f->nranges == ARRAY_SIZE(f->ranges))
			return -EINVAL;
		f->ranges[f->nranges].lo = (unsigned)lo;
		f->ranges[f->nranges].hi = (unsigned)hi;
		f->nranges++;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return f->nranges ? 0 : -EINVAL;
}

static __u64 *config_word(struct perf_event_attr *attr, int word)
{
	return word == 0 ? &attr->config : word == 1 ? &attr->config1 : &attr->config2;
}

/* Put value into the field's bits (replacing what was there); -ERANGE when it has more bits than the field. */
static int place_bits(const struct format_field *f, uint64_t value, struct perf_event_attr *attr)
{
	unsigned width = 0;
	for (unsigned i = 0; i < f->nranges; i++)
		width += f->ranges[i].hi - f->ranges[i].lo + 1;
	if (width < 64 && value >> width)
		return -ERANGE;
	__u64 *w = config_word(attr, f->word);
	for (unsigned i = 0; i < f->nranges; i++) {
		unsigned bits = f->ranges[i].hi - f->ranges[i].lo + 1;
		uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
		*w = (*w & ~(mask << f->ranges[i].lo)) | (value & mask) << f->ranges[i].lo;
		value = bits == 64 ? 0 : value >> bits;
	}
	return 0;
}

static bool parse_number(const char *s, uint64_t *v)
{
	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && *end == '\0';
}

/* The names of a PMU's format/ fields, for an error line. */
static void format_names(const char *pmu, char *buf, size_t buflen)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s/format", sysfs_root, pmu);
	buf[0] = '\0';
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	size_t used = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int n = snprintf(buf + used, buflen - used, "%s%s", used ? ", " : "", de->d_name);
		if (n < 0 || (size_t)n >= buflen - used)
			break;
		used += (size_t)n;
	}
	closedir(d);
}

/*
 * One term NAME or NAME=VALUE of PMU pmu into attr: config/config1/config2,
 * a format/ field (a bare field name means 1, as perf's flag terms), or
 * (from_alias false only) an events/ alias, whose own terms are applied.
 */
static int apply_term(const char *pmu, const char *term, bool from_alias, struct pmu_event *ev, char *err,
		      size_t errlen)
{
	char name[128];
	const char *eq = strchr(term, '=');
	size_t nlen = eq ? (size_t)(eq - term) : strlen(term);
	if (nlen == 0 || nlen >= sizeof(name)) {
		snprintf(err, errlen, "event %s: empty or overlong term %s", QUOTED(ev->name), QUOTED(term));
		return -EINVAL;
	}
	memcpy(name, term, nlen);
	name[nlen] = '\0';
	const char *value_text = eq ? eq + 1 : NULL;
	uint64_t value = 1;
	if (value_text && strcmp(value_text, "?") == 0)
		return 0; /* an alias's parameter the user may set; perf leaves it 0 too */
	if (value_text && !parse_number(value_text, &value)) {
		snprintf(err, errlen, "event %s: term %s: %s is not a number", QUOTED(ev->name), QUOTED(name),
			 QUOTED(value_text));
		return -EINVAL;
	}
	int word = strcmp(name, "config") == 0 ? 0 : strcmp(name, "config1") == 0 ? 1
		 : strcmp(name, "config2") == 0 ? 2 : -1;
	if (word >= 0) {
		if (!value_text) {
			snprintf(err, errlen, "event %s: term %s needs a value (%s=0x...)", QUOTED(ev->name), QUOTED(name),
				 name);
			return -EINVAL;
		}
		*config_word(&ev->attr, word) = value;
		return 0;
	}
	char rel[192];
	snprintf(rel, sizeof(rel), "format/%s", name);
	char *format = is_plain_name(name) ? pmu_file(pmu, rel) : NULL;
	if (format) {
		struct format_field f;
		int perr = parse_format(format, &f);
		if (perr) {
			snprintf(err, errlen, "event %s: %s/%s/%s holds %s, not a config bit range", QUOTED(ev->name),
				 sysfs_root, pmu, rel, QUOTED(format));
			free(format);
			return -EINVAL;
		}
		free(format);
		if (place_bits(&f, value, &ev->attr) < 0) {
			snprintf(err, errlen, "event %s: term %s=%s does not fit its bits", QUOTED(ev->name), QUOTED(name),
				 value_text ? QUOTED(value_text) : "1");
			return -EINVAL;
		}
		return 0;
	}
	if (!from_alias && !value_text && pmu_sysfs_has_event(pmu, name)) {
		snprintf(rel, sizeof(rel), "events/%s", name);
		char *alias = pmu_file(pmu, rel);
		if (!alias) {
			snprintf(err, errlen, "event %s: cannot read %s/%s/%s", QUOTED(ev->name), sysfs_root, pmu, rel);
			return -EACCES;
		}
		int aerr = 0;
		char *save = NULL;
		for (char *t = strtok_r(alias, ",", &save); t && !aerr; t = strtok_r(NULL, ",", &save))
			aerr = apply_term(pmu, t, true, ev, err, errlen);
		free(alias);
		return aerr;
	}
	char known[256];
	format_names(pmu, known, sizeof(known));
	snprintf(err, errlen, "event %s: PMU %s has no term or event %s (terms: %s%sconfig, config1, config2)",
		 QUOTED(ev->name), pmu, QUOTED(name), known, known[0] ? ", " : "");
	return -EINVAL;
}

/* Whether a term (NAME or NAME=VALUE) names an events/ alias of pmu. */
static bool term_is_alias(const char *pmu, const char *term)
{
	return !strchr(term, '=') && pmu_sysfs_has_event(pmu, term);
}

/* PMU/TERMS/[MODIFIERS] or PMU/TERMS/:MODIFIERS */
static int parse_sysfs(const char *spec, struct pmu_event *ev, char *err, size_t errlen)
{
	const char *slash = strchr(spec, '/');
	const char *close = strrchr(spec, '/');
	if (slash == close) {
		snprintf(err, errlen, "event %s: PMU/TERMS/ lacks its closing '/'", QUOTED(spec));
		return -EINVAL;
	}
	size_t plen = (size_t)(slash - spec);
	if (plen == 0 || plen >= sizeof(ev->pmu)) {
		snprintf(err, errlen, "event %s: no PMU name before '/'", QUOTED(spec));
		return -EINVAL;
	}
	memcpy(ev->pmu, spec, plen);
	ev->pmu[plen] = '\0';
	uint32_t type;
	if (pmu_sysfs_type(ev->pmu, &type) < 0) {
		char type_file[sizeof(sysfs_root) + sizeof(ev->pmu) + 8];
		snprintf(type_file, sizeof(type_file), "%s/%s/type", sysfs_root, ev->pmu);
		snprintf(err, errlen, "event %s: no PMU %s on this machine (no %s)", QUOTED(spec), QUOTED(ev->pmu),
			 QUOTED(type_file));
		return -ENOENT;
	}
	ev->attr.type = type;
	char *terms = xstrndup(slash + 1, (size_t)(close - slash - 1));
	int ret = 0;
	/* Aliases first, then the user's terms, which override what an alias set (mem-loads,ldlat=30). */
	for (int pass = 0; pass < 2 && !ret; pass++) {
		for (const char *p = terms; *p && !ret;) {
			size_t n = strcspn(p, ",");
			char *term = xstrndup(p, n);
			if (n == 0) {
				snprintf(err, errlen, "event %s: empty term", QUOTED(spec));
				ret = -EINVAL;
			} else if (term_is_alias(ev->pmu, term) == (pass == 0)) {
				ret = apply_term(ev->pmu, term, false, ev, err, errlen);
			}
			free(term);
			p += n + (p[n] == ',');
		}
	}
	free(terms);
	if (ret)
		return ret;
	const char *mods = close + 1;
	if (*mods == ':')
		mods++;
	return parse_modifiers(mods, ev, err, errlen);
}

/* ---- libpfm4 ---- */

static int libpfm_init(void)
{
	static int state = 1; /* 1: not tried */
	if (state == 1)
		state = pfm_initialize() == PFM_SUCCESS ? 0 : -ENODEV;
	return state;
}

const char *pmu_core_model(void)
{
	if (libpfm_init() < 0)
		return NULL;
	static char model[32];
	for (int i = PFM_PMU_NONE + 1; i < PFM_PMU_MAX; i++) {
		pfm_pmu_info_t info;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info((pfm_pmu_t)i, &info) != PFM_SUCCESS || !info.is_present ||
		    info.type != PFM_PMU_TYPE_CORE || !info.name)
			continue;
		snprintf(model, sizeof(model), "%s", info.name);
		return model;
	}
	return NULL;
}

/*
 * pfm_perf_encode_arg_t of <perfmon/pfmlib_perf_event.h>, which cannot be
 * included beside <linux/perf_event.h> (it carries its own copy of the
 * kernel's structs).  The layout is libpfm4's ABI (PFM_PERF_ENCODE_ABI0,
 * 40 bytes on 64-bit); attr points at the kernel's perf_event_attr, of which
 * libpfm4's copy is a prefix.
 */
struct libpfm_encode_arg {
	struct perf_event_attr *attr;
	char **fstr;
	size_t size;
	int idx;
	int cpu;
	int flags;
	int pad0;
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct libpfm_encode_arg) == 40, "libpfm4 encode ABI");

/* 0, or libpfm4's error (negative PFM_ERR_*). */
static int encode_libpfm(const char *name, struct pmu_event *ev)
{
	if (libpfm_init() < 0)
		return PFM_ERR_NOINIT;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	char *fstr = NULL;
	struct libpfm_encode_arg arg;
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	int ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		free(fstr);
		return ret;
	}
	ev->attr.type = attr.type;
	ev->attr.config = attr.config;
	ev->attr.config1 = attr.config1;
	ev->attr.config2 = attr.config2;
	ev->attr.precise_ip = attr.precise_ip;
	/* The fully qualified name starts with the PMU that encoded it: "skl::INST_RETIRED:ANY_P:...". */
	const char *sep = fstr ? strstr(fstr, "::") : NULL;
	snprintf(ev->pmu, sizeof(ev->pmu), "%.*s", sep ? (int)(sep - fstr) : 0, sep ? fstr : "");
	free(fstr);
	return 0;
}

/* ---- the parser ---- */

/*
 * The sysfs PMU that has an event alias NAME: `cpu` first, then `cpu_core`
 * (a hybrid part's big cores, where perf would open both core types), then
 * the first in name order; NULL when none has it.
 */
static const char *pmu_with_alias(const char *name)
{
	static char found[32];
	if (!is_plain_name(name))
		return NULL;
	static const char *const preferred[] = { "cpu", "cpu_core" };
	for (size_t i = 0; i < ARRAY_SIZE(preferred); i++)
		if (pmu_sysfs_has_event(preferred[i], name))
			return preferred[i];
	struct pmu_names pmus;
	pmu_sysfs_names(&pmus);
	const char *with = NULL;
	for (size_t i = 0; i < pmus.count && !with; i++) {
		/* a PMU name that does not fit pmu_event.pmu cannot be parsed as PMU/ALIAS/ either */
		if (strlen(pmus.names[i]) < sizeof(found) && pmu_sysfs_has_event(pmus.names[i], name)) {
			snprintf(found, sizeof(found), "%s", pmus.names[i]);
			with = found;
		}
	}
	pmu_names_free(&pmus);
	return with;
}

/* SYSTEM:NAME with tracefs-safe names. */
static bool split_tracepoint(const char *s, char *system, size_t syslen, char *name, size_t namelen)
{
	const char *colon = strchr(s, ':');
	if (!colon || strchr(colon + 1, ':') || colon == s || !colon[1])
		return false;
	size_t slen = (size_t)(colon - s), nlen = strlen(colon + 1);
	const char *ok = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.";
	if (slen >= syslen || nlen >= namelen || strspn(s, ok) != slen || strspn(colon + 1, ok) != nlen ||
	    s[0] == '.' || colon[1] == '.')
		return false;
	memcpy(system, s, slen);
	system[slen] = '\0';
	memcpy(name, colon + 1, nlen + 1);
	return true;
}

static int parse_plain(const char *spec, const char *base, const char *mods, struct pmu_event *ev, char *err,
		       size_t errlen)
{
	if (parse_generic(base, ev)) {
		ev->source = PMU_SOURCE_GENERIC;
		return parse_modifiers(mods, ev, err, errlen);
	}
	const char *alias_pmu = strchr(base, ':') ? NULL : pmu_with_alias(base);
	if (alias_pmu) {
		/* a bare alias (mem-loads) is PMU/ALIAS/ of the PMU that has it, as perf takes it */
		char sysfs_spec[sizeof(ev->name) + 48];
		snprintf(sysfs_spec, sizeof(sysfs_spec), "%s/%s/%s", alias_pmu, base, mods);
		ev->source = PMU_SOURCE_SYSFS;
		return parse_sysfs(sysfs_spec, ev, err, errlen);
	}
	char tp_reason[256] = "", tracefs_dir[256];
	int tp_err = -ENOENT;
	bool no_tracefs = false;
	if (split_tracepoint(base, ev->tracepoint_system, sizeof(ev->tracepoint_system), ev->tracepoint_name,
			     sizeof(ev->tracepoint_name))) {
		uint64_t id;
		no_tracefs = tracefs_find(tracefs_dir, sizeof(tracefs_dir), tp_reason, sizeof(tp_reason)) < 0;
		if (!no_tracefs)
			tp_err = tracepoint_id(ev->tracepoint_system, ev->tracepoint_name, &id, tp_reason,
					       sizeof(tp_reason));
		if (!no_tracefs && tp_err == 0) {
			ev->source = PMU_SOURCE_TRACEPOINT;
			ev->attr.type = PERF_TYPE_TRACEPOINT;
			ev->attr.config = id;
			snprintf(ev->pmu, sizeof(ev->pmu), "tracepoint");
			return parse_modifiers(mods, ev, err, errlen);
		}
	}
	int pfm = encode_libpfm(base, ev);
	if (pfm != PFM_SUCCESS && *mods && encode_libpfm(spec, ev) == PFM_SUCCESS) {
		pfm = PFM_SUCCESS; /* its last unit mask only looked like modifiers */
		mods = "";
	}
	if (pfm == PFM_SUCCESS) {
		memset(ev->tracepoint_system, 0, sizeof(ev->tracepoint_system));
		memset(ev->tracepoint_name, 0, sizeof(ev->tracepoint_name));
		ev->source = PMU_SOURCE_LIBPFM;
		return parse_modifiers(mods, ev, err, errlen);
	}
	if (no_tracefs) {
		snprintf(err, errlen, "event %s: not a generic or libpfm4 name, and tracepoints cannot be looked up: %s",
			 QUOTED(spec), tp_reason);
		return -EACCES;
	}
	if (tp_reason[0] && (tp_err != -ENOENT || tracepoint_system_exists(ev->tracepoint_system))) {
		/* it looks like a tracepoint: say why that failed (no such tracepoint, no tracefs, root only) */
		snprintf(err, errlen, "event %s: %s", QUOTED(spec), tp_reason);
		return tp_err == -EACCES || tp_err == -EPERM ? -EACCES : tp_err == -ENOENT ? -ENOENT : tp_err;
	}
	if (pfm == PFM_ERR_NOTFOUND || pfm == PFM_ERR_NOINIT) {
		const char *model = pmu_core_model();
		snprintf(err, errlen,
			 "event %s: no such event: not a generic name, tracepoint, PMU/TERMS/ or libpfm4 name for %s%s "
			 "(see 'sigprof list')",
			 QUOTED(spec), model ? "PMU " : "this machine", model ? model : " (libpfm4 finds no core PMU: a VM?)");
		return -ENOENT;
	}
	snprintf(err, errlen, "event %s: libpfm4: %s", QUOTED(spec), pfm_strerror(pfm));
	return -EINVAL;
}

int pmu_event_parse(const char *spec, struct pmu_event *ev, char *err, size_t errlen)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	if (!spec || !*spec) {
		snprintf(err, errlen, "empty event name");
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(ev->name)) {
		snprintf(err, errlen, "event %s: name longer than %zu bytes", quote_user(spec, (char[48]){ 0 }, 48),
			 sizeof(ev->name) - 1);
		return -EINVAL;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", spec);
	if (strchr(spec, '/')) {
		ev->source = PMU_SOURCE_SYSFS;
		return parse_sysfs(spec, ev, err, errlen);
	}
	char base[sizeof(ev->name)];
	snprintf(base, sizeof(base), "%s", spec);
	const char *mods = "";
	char *colon = strrchr(base, ':');
	if (colon && (colon == base || colon[-1] != ':') && is_modifier_text(colon + 1)) {
		*colon = '\0';
		mods = spec + (colon - base) + 1;
	} else if (colon && colon[1] == '\0') {
		snprintf(err, errlen, "event %s: empty modifier after ':'", QUOTED(spec));
		return -EINVAL;
	} else if (colon) {
		/* a generic name cannot be a tracepoint or libpfm4 name with a unit mask: these are bad modifiers */
		*colon = '\0';
		struct pmu_event generic;
		memset(&generic, 0, sizeof(generic));
		snprintf(generic.name, sizeof(generic.name), "%s", spec);
		if (parse_generic(base, &generic))
			return parse_modifiers(colon + 1, &generic, err, errlen);
		*colon = ':';
	}
	return parse_plain(spec, base, mods, ev, err, errlen);
}

/* The end of the list's item that begins at p: the next comma not between the two slashes of PMU/terms/. */
static const char *item_end(const char *p)
{
	bool in_terms = false;
	for (; *p && (in_terms || *p != ','); p++)
		if (*p == '/')
			in_terms = !in_terms;
	return p;
}

bool pmu_event_list_has_empty_item(const char *list)
{
	for (const char *p = list;; p++) {
		const char *end = item_end(p);
		if (end == p)
			return true;
		if (!*end)
			return false;
		p = end;
	}
}

bool pmu_event_list_next(const char **list, char *buf, size_t buflen)
{
	const char *p = *list;
	while (*p == ',')
		p++;
	if (!*p) {
		*list = p;
		return false;
	}
	const char *q = item_end(p);
	size_t n = (size_t)(q - p);
	if (buflen) {
		size_t k = n < buflen - 1 ? n : buflen - 1;
		memcpy(buf, p, k);
		buf[k] = '\0';
	}
	*list = *q ? q + 1 : q;
	return true;
}

void pmu_event_apply(const struct pmu_event *ev, struct perf_event_attr *attr)
{
	attr->type = ev->attr.type;
	attr->config = ev->attr.config;
	attr->config1 = ev->attr.config1;
	attr->config2 = ev->attr.config2;
	attr->precise_ip = ev->attr.precise_ip;
	if (ev->privilege_modifier) {
		attr->exclude_user = ev->attr.exclude_user;
		attr->exclude_kernel = ev->attr.exclude_kernel;
		attr->exclude_hv = ev->attr.exclude_hv;
	}
	if (ev->host_guest_modifier) {
		attr->exclude_host = ev->attr.exclude_host;
		attr->exclude_guest = ev->attr.exclude_guest;
	}
}

int pmu_event_max_precise(struct perf_event_attr *attr)
{
	int err = -EINVAL;
	for (int precise = 3; precise >= 0; precise--) {
		attr->precise_ip = (unsigned)precise;
		err = perf_event_probe(attr);
		if (err == 0)
			return 0;
	}
	return err;
}

int event_list_add_parsed(struct event_list *list, const struct record_options *opts, const struct pmu_event *ev,
			  const char *collector, enum call_graph_mode default_call_graph, char *reason,
			  size_t reasonlen)
{
	struct record_options o = *opts;
	o.call_graph = call_graph_for(opts, default_call_graph);
	if (ev->source == PMU_SOURCE_TRACEPOINT) {
		int err = tracepoint_add(list, &o, collector, ev->tracepoint_system, ev->tracepoint_name, true, reason,
					 reasonlen);
		if (!err)
			pmu_event_apply(ev, &list->specs[list->count - 1].attr);
		return err;
	}
	/* a tracepoint named by its id (tracepoint/config=ID/) is sampled at every hit, as one named by its name */
	if (ev->attr.type == PERF_TYPE_TRACEPOINT)
		o.period = 1;
	struct perf_event_attr attr;
	sampling_attr_init(&attr, &o, ev->attr.type, ev->attr.config);
	pmu_event_apply(ev, &attr);
	if (ev->max_precise) {
		int err = pmu_event_max_precise(&attr);
		if (err < 0) {
			snprintf(reason, reasonlen, "cannot open %s at any precision: %s", ev->name,
				 perf_open_reason(err, &attr));
			return err;
		}
	}
	struct event_spec *spec = event_list_add(list, ev->name, collector);
	spec->attr = attr;
	return 0;
}
