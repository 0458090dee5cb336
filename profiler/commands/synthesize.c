/*
 * synthesize.c: COMM and MMAP2 records for tasks that already run, read
 * from /proc (synthesize.h).
 *
 * The process tree is found by parent pid in /proc/PID/stat (this kernel
 * has no /proc/PID/task/TID/children), walked breadth first from the root.
 * A record is laid out as the kernel lays it out (perf_event.h): the fixed
 * fields, the name NUL-padded to 8, then the sample_id trailer of the event
 * the report looks the record up by: TID, TIME, ID, STREAM_ID, CPU and
 * IDENTIFIER, each where sample_type asks for it.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <linux/perf_event.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/commands/synthesize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

static void add_u32(struct strbuf *sb, uint32_t v)
{
	sb_add(sb, (const char *)&v, sizeof(v));
}

static void add_u64(struct strbuf *sb, uint64_t v)
{
	sb_add(sb, (const char *)&v, sizeof(v));
}

/* The name NUL-terminated and padded to 8. */
static void add_name(struct strbuf *sb, const char *name)
{
	size_t len = strlen(name) + 1;
	sb_add(sb, name, len);
	static const char zeros[8];
	sb_add(sb, zeros, ALIGN_UP(len, 8) - len);
}

static void add_sample_id(struct strbuf *sb, uint64_t sample_type, uint64_t id, pid_t pid, pid_t tid)
{
	if (sample_type & PERF_SAMPLE_TID) {
		add_u32(sb, (uint32_t)pid);
		add_u32(sb, (uint32_t)tid);
	}
	if (sample_type & PERF_SAMPLE_TIME)
		add_u64(sb, 0);
	if (sample_type & PERF_SAMPLE_ID)
		add_u64(sb, id);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		add_u64(sb, id);
	if (sample_type & PERF_SAMPLE_CPU)
		add_u64(sb, 0);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		add_u64(sb, id);
}

/* Close the record begun at offset at: its size in the header (false: too large for one). */
static bool end_record(struct strbuf *sb, size_t at)
{
	size_t size = sb->len - at;
	if (size > UINT16_MAX) {
		sb->len = at;
		return false;
	}
	uint16_t s16 = (uint16_t)size;
	memcpy(sb->buf + at + 6, &s16, sizeof(s16));
	return true;
}

static size_t begin_record(struct strbuf *sb, uint32_t type, uint16_t misc)
{
	size_t at = sb->len;
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };
	sb_add(sb, (const char *)&h, sizeof(h));
	return at;
}

static void synthesize_comms(pid_t pid, struct strbuf *out, uint64_t sample_type, uint64_t id)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		char comm_path[96], comm[64] = "";
		snprintf(comm_path, sizeof(comm_path), "/proc/%d/task/%d/comm", (int)pid, tid);
		FILE *f = fopen(comm_path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		size_t at = begin_record(out, PERF_RECORD_COMM, 0);
		add_u32(out, (uint32_t)pid);
		add_u32(out, (uint32_t)tid);
		add_name(out, comm);
		add_sample_id(out, sample_type, id, pid, tid);
		end_record(out, at);
	}
	closedir(d);
}

/*
 * The build-ids read, by the file's device and inode: libc is mapped by
 * every process of a -a target, and its ELF file is read once.  Kept for
 * the recorder's life (a few dozen files).
 */
struct file_build_id {
	unsigned maj, min;
	uint64_t ino;
	int n; /* elf_file_build_id()'s answer */
	unsigned char id[20];
};
static struct u64_map build_ids;

static int cached_build_id(const char *name, unsigned maj, unsigned min, uint64_t ino, unsigned char id[20])
{
	uint64_t key = hash_u64(ino ^ ((uint64_t)maj << 52) ^ ((uint64_t)min << 32)) | 1;
	struct file_build_id *f = ino ? u64_map_get(&build_ids, key) : NULL;
	if (f && f->maj == maj && f->min == min && f->ino == ino) {
		memcpy(id, f->id, sizeof(f->id));
		return f->n;
	}
	int n = elf_file_build_id(name, id, 20);
	if (ino && !f) {
		f = xcalloc(1, sizeof(*f));
		*f = (struct file_build_id){ .maj = maj, .min = min, .ino = ino, .n = n };
		if (n > 0)
			memcpy(f->id, id, (size_t)n);
		u64_map_put(&build_ids, key, f);
	}
	return n;
}

void synthesize_mmap2_identity(uint8_t identity[24], uint16_t *misc, const char *name, unsigned maj, unsigned min,
			       uint64_t ino)
{
	memset(identity, 0, 24);
	unsigned char id[20];
	int n = name && name[0] == '/' ? cached_build_id(name, maj, min, ino, id) : 0;
	if (n > 0) {
		identity[0] = (uint8_t)n;
		memcpy(identity + 4, id, (size_t)n);
		*misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		return;
	}
	memcpy(identity, &maj, 4);
	memcpy(identity + 4, &min, 4);
	memcpy(identity + 8, &ino, 8); /* and ino_generation 0 */
}

/* The MMAP2 records of pid's mappings; their number (0: gone, or exited and its memory released). */
static size_t synthesize_maps(pid_t pid, struct strbuf *out, uint64_t sample_type, uint64_t id, bool data_mmaps)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t written = 0;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, &name_at) < 7)
			continue;
		bool exec = perms[2] == 'x';
		if (!exec && !data_mmaps)
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = '\0';
		if (!*name)
			name = "//anon";
		uint32_t prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) | (exec ? 4 : 0);
		uint32_t flags = perms[3] == 's' ? 1 /* MAP_SHARED */ : 2 /* MAP_PRIVATE */;
		uint16_t misc = PERF_RECORD_MISC_USER | (exec ? 0 : PERF_RECORD_MISC_MMAP_DATA);
		uint8_t identity[24];
		synthesize_mmap2_identity(identity, &misc, exec ? name : NULL, maj, min, ino);
		size_t at = begin_record(out, PERF_RECORD_MMAP2, misc);
		add_u32(out, (uint32_t)pid);
		add_u32(out, (uint32_t)pid);
		add_u64(out, start);
		add_u64(out, end - start);
		add_u64(out, pgoff);
		sb_add(out, (const char *)identity, sizeof(identity));
		add_u32(out, prot);
		add_u32(out, flags);
		add_name(out, name);
		add_sample_id(out, sample_type, id, pid, pid);
		end_record(out, at);
		written++;
	}
	free(line);
	fclose(f);
	return written;
}

size_t synthesize_process(pid_t pid, struct strbuf *out, uint64_t sample_type, uint64_t id, bool data_mmaps)
{
	synthesize_comms(pid, out, sample_type, id);
	return synthesize_maps(pid, out, sample_type, id, data_mmaps);
}

/* The parent pid of pid from /proc/PID/stat (after the comm's closing parenthesis), or -1. */
static pid_t parent_of(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	int ppid;
	char state;
	if (!paren || sscanf(paren + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	return ppid;
}

int synthesize_process_tree(pid_t root, struct strbuf *out, uint64_t sample_type, uint64_t id, bool data_mmaps)
{
	/* every process with its parent, once; then the tree from root */
	size_t n = 0, cap = 0;
	struct proc_pair { pid_t pid, ppid; } *all = NULL;
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		pid_t ppid = parent_of(pid);
		if (ppid < 0)
			continue;
		GROW(all, cap, n + 1);
		all[n++] = (struct proc_pair){ pid, ppid };
	}
	closedir(d);
	pid_t *tree = xmalloc((n + 1) * sizeof(*tree));
	size_t ntree = 0;
	tree[ntree++] = root;
	for (size_t i = 0; i < ntree; i++)
		for (size_t k = 0; k < n; k++)
			if (all[k].ppid == tree[i] && all[k].pid != root && ntree <= n)
				tree[ntree++] = all[k].pid;
	free(all);
	size_t mappings = 0;
	for (size_t i = 0; i < ntree; i++)
		mappings += synthesize_process(tree[i], out, sample_type, id, data_mmaps);
	free(tree);
	return mappings > INT_MAX ? INT_MAX : (int)mappings;
}
