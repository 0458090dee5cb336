/*
 * maps.c: the workload's processes and their executable mappings.
 *
 * The report replays COMM, MMAP2, FORK and EXIT records into a table of
 * processes, each with a sorted array of mappings.  A fork copies the
 * parent's mappings (the child starts as its copy); an exec (COMM with the
 * exec flag) clears them, since the MMAP2 records of the new image follow.
 * A new mapping replaces whatever part of older ones it overlaps, as mmap
 * does.  dsos are shared by every process that maps the same file, so each
 * file's symbols are loaded once.
 *
 * When a collector names data addresses (futex words), the recording also
 * holds the data mappings (heap, stacks, anonymous memory, a file's .data
 * and .bss).  Mappings never overlap, so code addresses still find the
 * executable mapping they did before; proc_table_data_name() names an
 * address by the data symbol that covers it, or by its mapping.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/hashmap.h"
#include "symtab_internal.h"

struct process {
	uint32_t pid;
	const char *comm;
	struct mapping *maps; /* sorted by start, non-overlapping */
	size_t nmaps, cap;
	bool used;            /* slot in use */
};

struct proc_table {
	struct process *procs; /* open addressing by pid */
	size_t nslots, count;
	struct dso **dsos;
	size_t ndsos, dsos_cap;
	struct u64_map dso_by_name;  /* interned name pointer -> its dso, so each MMAP2 finds it at once */
	struct u64_map thread_comm;  /* tid -> its own interned name (pthread_setname_np), inherited by new threads */
	struct dso *kernel;
	const char *kallsyms_path;   /* named by the user: wins over the recording's copy */
	struct string_pool *strings;
	uint64_t generation;         /* changes with every mapping added or dropped, and with a file's build-id */
};

struct proc_table *proc_table_new(void)
{
	struct proc_table *pt = xcalloc(1, sizeof(*pt));
	pt->nslots = 256;
	pt->procs = xcalloc(pt->nslots, sizeof(*pt->procs));
	pt->strings = string_pool_new();
	return pt;
}

static void dso_free(struct dso *dso)
{
	symtab_free(dso->symtab);
	free(dso);
}

void proc_table_free(struct proc_table *pt)
{
	if (!pt)
		return;
	for (size_t i = 0; i < pt->nslots; i++)
		free(pt->procs[i].maps);
	free(pt->procs);
	for (size_t i = 0; i < pt->ndsos; i++)
		dso_free(pt->dsos[i]);
	free(pt->dsos);
	u64_map_free(&pt->dso_by_name);
	u64_map_free(&pt->thread_comm);
	if (pt->kernel)
		dso_free(pt->kernel);
	string_pool_free(pt->strings);
	free(pt);
}

static struct process *slot_for(struct proc_table *pt, uint32_t pid)
{
	size_t mask = pt->nslots - 1;
	size_t i = hash_u64(pid) & mask;
	while (pt->procs[i].used && pt->procs[i].pid != pid)
		i = (i + 1) & mask;
	return &pt->procs[i];
}

static void grow_procs(struct proc_table *pt)
{
	struct process *old = pt->procs;
	size_t oldn = pt->nslots;
	pt->nslots *= 2;
	pt->procs = xcalloc(pt->nslots, sizeof(*pt->procs));
	for (size_t i = 0; i < oldn; i++)
		if (old[i].used)
			*slot_for(pt, old[i].pid) = old[i];
	free(old);
}

static struct process *find_process(struct proc_table *pt, uint32_t pid)
{
	struct process *p = slot_for(pt, pid);
	return p->used ? p : NULL;
}

static struct process *get_process(struct proc_table *pt, uint32_t pid)
{
	struct process *p = slot_for(pt, pid);
	if (p->used)
		return p;
	if ((pt->count + 1) * 2 > pt->nslots) {
		grow_procs(pt);
		p = slot_for(pt, pid);
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->used = true;
	pt->count++;
	return p;
}

static struct dso *get_dso(struct proc_table *pt, const char *name)
{
	const char *interned = string_intern(pt->strings, name);
	struct dso *dso = u64_map_get(&pt->dso_by_name, (uint64_t)(uintptr_t)interned);
	if (dso)
		return dso;
	GROW(pt->dsos, pt->dsos_cap, pt->ndsos + 1);
	dso = xcalloc(1, sizeof(*dso));
	dso->name = interned;
	pt->dsos[pt->ndsos++] = dso;
	u64_map_put(&pt->dso_by_name, (uint64_t)(uintptr_t)interned, dso);
	return dso;
}

void proc_table_set_build_id(struct proc_table *pt, const char *filename, const char *build_id)
{
	struct dso *dso = get_dso(pt, filename);
	if (!dso->build_id && build_id && *build_id) {
		dso->build_id = string_intern(pt->strings, build_id);
		pt->generation++;
	}
}

uint64_t proc_table_generation(const struct proc_table *pt)
{
	return pt->generation;
}

struct dso *proc_table_dso_named(struct proc_table *pt, const char *name)
{
	const char *interned = string_intern(pt->strings, name);
	return u64_map_get(&pt->dso_by_name, (uint64_t)(uintptr_t)interned);
}

void proc_table_comm(struct proc_table *pt, uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	struct process *p = get_process(pt, pid);
	const char *name = string_intern(pt->strings, comm);
	u64_map_put(&pt->thread_comm, tid, (void *)name);
	if (pid == tid || !p->comm)
		p->comm = name;
	if (exec) {
		p->comm = name;
		p->nmaps = 0;
		pt->generation++;
	}
}

void proc_table_thread_start(struct proc_table *pt, uint32_t tid, uint32_t ptid)
{
	/* a new task is named as the task that made it, until a COMM of its own; a tid used before loses its name */
	const char *inherited = tid != ptid ? u64_map_get(&pt->thread_comm, ptid) : NULL;
	if (inherited)
		u64_map_put(&pt->thread_comm, tid, (void *)inherited);
	else
		u64_map_remove(&pt->thread_comm, tid);
}

/* The first of p's mappings (sorted by start, disjoint, so sorted by end too) that ends above addr. */
static size_t first_ending_above(const struct process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Remove [start, end) from p's mappings, splitting those that straddle it,
 * in place: a recording holds tens of thousands of MMAP2 records when the
 * workload maps anonymous memory often, and each must cost a search and a
 * move, not a copy of the whole table.
 */
static void punch_hole(struct process *p, uint64_t start, uint64_t end)
{
	size_t lo = first_ending_above(p, start), hi = lo;
	while (hi < p->nmaps && p->maps[hi].start < end)
		hi++;
	if (lo == hi)
		return;
	struct mapping pieces[2];
	size_t n = 0;
	if (p->maps[lo].start < start) {
		pieces[n] = p->maps[lo];
		pieces[n++].end = start;
	}
	if (p->maps[hi - 1].end > end) {
		pieces[n] = p->maps[hi - 1];
		pieces[n].pgoff += end - pieces[n].start;
		pieces[n++].start = end;
	}
	size_t nmaps = p->nmaps - (hi - lo) + n;
	GROW(p->maps, p->cap, nmaps);
	memmove(&p->maps[lo + n], &p->maps[hi], (p->nmaps - hi) * sizeof(*p->maps));
	memcpy(&p->maps[lo], pieces, n * sizeof(*pieces));
	p->nmaps = nmaps;
}

void proc_table_mmap(struct proc_table *pt, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint32_t prot, uint32_t flags, const char *filename)
{
	if (!len || start + len < start)
		return;
	struct process *p = get_process(pt, pid);
	pt->generation++;
	punch_hole(p, start, start + len);
	GROW(p->maps, p->cap, p->nmaps + 1);
	size_t i = first_ending_above(p, start); /* the hole is punched: the first mapping after start */
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(*p->maps));
	p->maps[i] = (struct mapping){ .start = start, .end = start + len, .pgoff = pgoff, .prot = prot,
				       .flags = flags, .dso = get_dso(pt, filename) };
	p->nmaps++;
}

void proc_table_mmap_object(struct proc_table *pt, uint32_t pid, uint64_t start, uint32_t maj, uint32_t min,
			    uint64_t ino)
{
	struct process *p = find_process(pt, pid);
	if (!p)
		return;
	size_t i = first_ending_above(p, start);
	if (i < p->nmaps && p->maps[i].start == start) {
		p->maps[i].maj = maj;
		p->maps[i].min = min;
		p->maps[i].ino = ino;
	}
}

bool proc_table_shared_offset(struct proc_table *pt, uint32_t pid, uint64_t addr, uint64_t *object,
			      uint64_t *offset)
{
	const struct mapping *map = proc_table_find(pt, pid, addr);
	if (!map || !(map->flags & MAP_SHARED))
		return false;
	if (map->ino) {
		*object = hash_u64(map->ino ^ hash_u64(((uint64_t)map->maj << 32) | map->min));
	} else if (dso_is_file(map->dso) && !strstr(map->dso->name, " (deleted)")) {
		/* a file named by its build-id instead: its path names it (shared memory has no build-id) */
		*object = hash_u64((uint64_t)(uintptr_t)map->dso) | 1;
	} else {
		return false;
	}
	*offset = map->pgoff + (addr - map->start);
	return true;
}

void proc_table_fork(struct proc_table *pt, uint32_t ppid, uint32_t pid)
{
	if (ppid == pid)
		return; /* a new thread shares its process's mappings */
	struct process *parent = find_process(pt, ppid);
	struct process *child = get_process(pt, pid);
	parent = find_process(pt, ppid); /* the table may have grown */
	if (!parent)
		return;
	child->comm = parent->comm;
	child->nmaps = 0;
	pt->generation++;
	if (!parent->nmaps)
		return; /* a parent seen only by name (COMM): nothing to copy */
	GROW(child->maps, child->cap, parent->nmaps);
	memcpy(child->maps, parent->maps, parent->nmaps * sizeof(*child->maps));
	child->nmaps = parent->nmaps;
}

void proc_table_exit(struct proc_table *pt, uint32_t pid, uint32_t tid)
{
	/*
	 * Samples and records of an exited process may still follow (records
	 * from other CPUs' buffers are not time-sorted), so its mappings stay.
	 */
	(void)pt;
	(void)pid;
	(void)tid;
}

const char *proc_table_comm_of(struct proc_table *pt, uint32_t pid)
{
	struct process *p = find_process(pt, pid);
	return p ? p->comm : NULL;
}

const char *proc_table_thread_comm_of(struct proc_table *pt, uint32_t pid, uint32_t tid)
{
	const char *own = u64_map_get(&pt->thread_comm, tid);
	return own ? own : proc_table_comm_of(pt, pid);
}

const struct mapping *proc_table_find(struct proc_table *pt, uint32_t pid, uint64_t addr)
{
	struct process *p = find_process(pt, pid);
	if (!p || !p->nmaps)
		return NULL;
	size_t lo = 0, hi = p->nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nmaps && p->maps[lo].start <= addr)
		return &p->maps[lo];
	return NULL;
}

const struct mapping *proc_table_find_code(struct proc_table *pt, uint32_t pid, uint64_t addr)
{
	const struct mapping *map = proc_table_find(pt, pid, addr);
	return map && (map->prot & PROT_EXEC) ? map : NULL;
}

/* The vDSO is the same image in every process of this kernel: copy it from our own memory. */
static int load_vdso(struct dso *dso)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	char line[512];
	unsigned long long start = 0, end = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			break;
	fclose(f);
	if (end <= start)
		return -ENOENT;
	return symtab_from_elf_memory((const void *)(uintptr_t)start, end - start, &dso->symtab);
}

static bool dso_is_anonymous(const struct dso *dso);

bool dso_is_file(const struct dso *dso)
{
	return !dso->is_kernel && !dso_is_anonymous(dso) && dso->name[0] != '[';
}

size_t proc_table_dso_count(const struct proc_table *pt)
{
	return pt->ndsos;
}

struct dso *proc_table_dso(const struct proc_table *pt, size_t i)
{
	return i < pt->ndsos ? pt->dsos[i] : NULL;
}

/*
 * The file at the dso's path, checked against the build-id the recording
 * gives for it: another build (the program rebuilt, the library upgraded
 * since the recording) would name every frame wrong.  The debug file of
 * the recorded build (under the debug roots, or from debuginfod) then
 * stands in: the same symbols at the same addresses.
 */
static int load_file(struct dso *dso)
{
	int err = symtab_from_elf_file(dso->name, &dso->symtab);
	const char *found = err ? NULL : symtab_build_id(dso->symtab);
	if (err || !dso->build_id || !found || strcmp(found, dso->build_id) == 0)
		return err;
	snprintf(dso->file_build_id, sizeof(dso->file_build_id), "%s", found);
	symtab_free(dso->symtab);
	dso->symtab = NULL;
	struct strbuf debug = { 0 };
	err = -ESTALE;
	if (debug_file_locate(dso->name, dso->build_id, NULL, &debug) == 0 &&
	    symtab_from_elf_file(debug.buf, &dso->symtab) == 0) {
		found = symtab_build_id(dso->symtab);
		if (found && strcmp(found, dso->build_id) == 0) {
			err = 0;
		} else {
			symtab_free(dso->symtab);
			dso->symtab = NULL;
		}
	}
	sb_free(&debug);
	return err;
}

struct symtab *dso_symtab(struct dso *dso)
{
	if (dso->load_tried)
		return dso->symtab;
	dso->load_tried = true;
	int err;
	if (dso->is_kernel)
		err = dso->no_host_kallsyms ? -ESTALE : symtab_from_kallsyms("/proc/kallsyms", &dso->symtab);
	else if (strcmp(dso->name, "[vdso]") == 0)
		err = load_vdso(dso);
	else if (!dso_is_file(dso) || strncmp(dso->name, "/memfd:", 7) == 0)
		err = -ENOENT;
	else
		err = load_file(dso);
	dso->load_error = err;
	if (err)
		dso->symtab = NULL;
	return dso->symtab;
}

const char *dso_debug_file(struct dso *dso)
{
	return symtab_debug_file(dso_symtab(dso));
}

struct dso *proc_table_kernel(struct proc_table *pt)
{
	if (pt->kernel)
		return pt->kernel;
	struct dso *k = xcalloc(1, sizeof(*k));
	k->name = string_intern(pt->strings, "[kernel]");
	k->is_kernel = true;
	pt->kernel = k;
	return k;
}

void proc_table_set_kallsyms(struct proc_table *pt, const char *path)
{
	pt->kallsyms_path = string_intern(pt->strings, path);
	struct dso *k = proc_table_kernel(pt);
	k->load_tried = true;
	k->load_error = symtab_from_kallsyms(path, &k->symtab);
}

void proc_table_forbid_host_kallsyms(struct proc_table *pt)
{
	proc_table_kernel(pt)->no_host_kallsyms = true;
}

void proc_table_set_kernel_symbols(struct proc_table *pt, struct symtab *tab)
{
	struct dso *k = proc_table_kernel(pt);
	if (pt->kallsyms_path || k->load_tried) {
		symtab_free(tab);
		return;
	}
	k->symtab = tab;
	k->load_tried = true;
	k->load_error = 0;
}

bool mapping_to_dso_addr(const struct mapping *map, uint64_t addr, uint64_t *dso_addr)
{
	if (addr < map->start || addr >= map->end)
		return false;
	uint64_t file_offset = addr - map->start + map->pgoff;
	struct symtab *tab = dso_symtab(map->dso);
	if (tab && symtab_offset_to_vaddr(tab, file_offset, dso_addr) == 0)
		return true;
	*dso_addr = file_offset;
	return true;
}

static bool dso_is_anonymous(const struct dso *dso)
{
	return !dso->name[0] || strncmp(dso->name, "//anon", 6) == 0;
}


/*
 * The file mapping whose data holds addr: map itself, or, for an anonymous
 * mapping that starts where a file mapping ends, that file (the kernel maps
 * the .bss past the file's last page as anonymous memory).  NULL if none.
 */
static const struct mapping *file_owner(const struct process *p, const struct mapping *map)
{
	if (dso_is_file(map->dso))
		return map;
	if (dso_is_anonymous(map->dso) && map != p->maps && map[-1].end == map->start && dso_is_file(map[-1].dso))
		return &map[-1];
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Name addr by the file that holds it: its data symbol (0), else BASENAME+0xADDR (-ENOENT). */
static int file_data_name(const struct mapping *owner, const struct mapping *map, uint64_t addr, char *buf,
			  size_t len)
{
	uint64_t file_offset = addr - owner->start + owner->pgoff, vaddr;
	struct symtab *tab = dso_symtab(owner->dso);
	if (!tab || symtab_offset_to_vaddr(tab, file_offset, &vaddr) < 0) {
		if (owner != map)
			snprintf(buf, len, "[anon]+0x%llx", (unsigned long long)(addr - map->start));
		else
			snprintf(buf, len, "%s+0x%llx", base_name(owner->dso->name), (unsigned long long)file_offset);
		return -ENOENT;
	}
	const struct sym *sym = symtab_lookup(tab, SYM_DATA, vaddr);
	if (!sym) {
		snprintf(buf, len, "%s+0x%llx", base_name(owner->dso->name), (unsigned long long)vaddr);
		return -ENOENT;
	}
	const char *name = symtab_display_name(tab, SYM_DATA, sym);
	if (vaddr == sym->start)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s+0x%llx", name, (unsigned long long)(vaddr - sym->start));
	return 0;
}

static int data_name(struct proc_table *pt, uint32_t pid, uint64_t addr, char *buf, size_t len, const char **dso)
{
	const struct mapping *map = proc_table_find(pt, pid, addr);
	if (dso)
		*dso = map ? map->dso->name : NULL;
	if (!map) {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
		return -ENOENT;
	}
	const struct mapping *owner = file_owner(find_process(pt, pid), map);
	if (owner) {
		int ret = file_data_name(owner, map, addr, buf, len);
		if (dso && (ret == 0 || buf[0] != '['))
			*dso = owner->dso->name;
		return ret;
	}
	snprintf(buf, len, "%s+0x%llx", dso_is_anonymous(map->dso) ? "[anon]" : map->dso->name,
		 (unsigned long long)(addr - map->start));
	return -ENOENT;
}

int proc_table_data_name(struct proc_table *pt, uint32_t pid, uint64_t addr, char *buf, size_t len,
			 const char **dso)
{
	int ret = data_name(pt, pid, addr, buf, len, dso);
	/* a file's or a symbol's name from the recording: a label every output shows, escaped once here */
	char escaped[PRINTABLE_MAX];
	const char *shown = printable_text(buf, escaped, sizeof(escaped));
	if (shown != buf)
		snprintf(buf, len, "%s", shown);
	return ret;
}
