/*
 * debuginfo.c: finding the separate debug file of a stripped ELF file.
 *
 * Distributions strip their libraries (Debian's libc.so.6 keeps only
 * .dynsym) and ship the full symbol table and DWARF in a separate file,
 * which `objcopy --only-keep-debug` made from the unstripped build: same
 * section addresses, code sections turned to NOBITS.  Two things in the
 * stripped file point at it, and we follow them the way gdb does, in this
 * order, under each debug root ("/usr/lib/debug" unless set):
 *
 *   1. the GNU build-id:  ROOT/.build-id/ab/cdef....debug   (the first byte
 *      in hex names the directory, the rest the file)
 *   2. the .gnu_debuglink section: a file name and the CRC32 of the debug
 *      file, looked for in DIR/NAME, DIR/.debug/NAME and ROOT/DIR/NAME,
 *      where DIR is the directory of the (symlink-resolved) stripped file.
 *      A candidate whose CRC32 differs belongs to another build and is
 *      refused.
 *
 * The build-id path needs no check: the name is the identity.  Nothing here
 * is cached: elf.c asks once per file it loads, and the symtab keeps the
 * answer.
 *
 * When none is found and DEBUGINFOD_URLS is set, libdebuginfod asks those
 * servers for the debug file by build-id (it keeps what it fetched in its
 * own cache, ~/.cache/debuginfod_client unless DEBUGINFOD_CACHE_PATH).
 * libdebuginfod is loaded then, not linked: it brings libcurl and some 30
 * libraries (TLS, Kerberos, LDAP) whose loading was a tenth of a small
 * report's time, for a lookup most runs never make.
 *
 * Every path in symbolize/ is a path on the recording's machine.  With a
 * symfs root (report --symfs DIR), every file is opened as DIR/PATH
 * (symbolize_open()): the binaries, their debug files under DIR/ROOT, a
 * debuglink's candidates; only what debuginfod fetched is opened where its
 * cache put it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "sigprof/base/util.h"
#include "symtab_internal.h"

#define DEFAULT_DEBUG_DIRS "/usr/lib/debug"

static char *debug_dirs; /* colon-separated roots; NULL: DEFAULT_DEBUG_DIRS */

void symbolize_set_debug_dirs(const char *dirs)
{
	free(debug_dirs);
	debug_dirs = dirs ? xstrdup(dirs) : NULL;
}

const char *symbolize_debug_dirs(void)
{
	return debug_dirs ? debug_dirs : DEFAULT_DEBUG_DIRS;
}

static char *symfs;        /* NULL: files are where the recording names them */
static char *fetched_root; /* debuginfod's cache: opened as it is, even under a symfs root */

void symbolize_set_symfs(const char *dir)
{
	free(symfs);
	symfs = dir && *dir ? xstrdup(dir) : NULL;
	/* "DIR/" and "DIR" are the same root */
	if (symfs && strlen(symfs) > 1 && symfs[strlen(symfs) - 1] == '/')
		symfs[strlen(symfs) - 1] = '\0';
}

const char *symbolize_symfs(void)
{
	return symfs;
}

int symbolize_open(const char *path, int flags)
{
	if (!symfs || path[0] != '/' || (fetched_root && strncmp(path, fetched_root, strlen(fetched_root)) == 0))
		return open(path, flags);
	struct strbuf under = { 0 };
	sb_addf(&under, "%s%s", symfs, path);
	int fd = open(under.buf, flags);
	int err = errno;
	sb_free(&under);
	errno = err;
	return fd;
}

/*
 * The CRC-32 of .gnu_debuglink (binutils' bfd_calc_gnu_debuglink_crc32):
 * the reflected polynomial 0xedb88320, initial and final inversion, the
 * same checksum as zlib's crc32().  The table is built on first use.
 */
static uint32_t crc32_update(uint32_t crc, const unsigned char *data, size_t length)
{
	static uint32_t table[256];
	if (!table[1]) {
		for (uint32_t n = 0; n < 256; n++) {
			uint32_t c = n;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[n] = c;
		}
	}
	crc = ~crc;
	for (size_t i = 0; i < length; i++)
		crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static int debug_file_crc32(const char *path, uint32_t *crc)
{
	int fd = symbolize_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* checked on the descriptor: a name swapped for /dev/zero since is_regular_file() would never end */
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	unsigned char buf[65536];
	uint32_t sum = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sum = crc32_update(sum, buf, (size_t)n);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (!err)
		*crc = sum;
	return err;
}

static bool is_regular_file(const char *path)
{
	int fd = symbolize_open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	close(fd);
	return regular;
}

/* Calls visit(root, length, context) for each root of the colon-separated list until it returns true. */
static bool each_debug_root(bool (*visit)(const char *root, size_t length, void *context), void *context)
{
	const char *at = symbolize_debug_dirs();
	while (*at) {
		size_t length = strcspn(at, ":");
		if (length && visit(at, length, context))
			return true;
		at += length;
		at += *at == ':';
	}
	return false;
}

struct build_id_search {
	const char *build_id;
	struct strbuf *found;
};

static bool try_build_id_path(const char *root, size_t length, void *context)
{
	struct build_id_search *search = context;
	sb_reset(search->found);
	sb_addf(search->found, "%.*s/.build-id/%.2s/%s.debug", (int)length, root, search->build_id,
		search->build_id + 2);
	return is_regular_file(search->found->buf);
}

struct debuglink_search {
	const struct debug_link *link;
	const char *self;      /* the stripped file itself, never its own debug file */
	const char *directory; /* of the stripped file, without a trailing slash */
	struct strbuf *found;
};

static bool try_debuglink_candidate(struct debuglink_search *search)
{
	const char *candidate = search->found->buf;
	uint32_t crc;
	if (strcmp(candidate, search->self) == 0 || !is_regular_file(candidate))
		return false;
	return debug_file_crc32(candidate, &crc) == 0 && crc == search->link->crc;
}

static bool try_debuglink_under_root(const char *root, size_t length, void *context)
{
	struct debuglink_search *search = context;
	sb_reset(search->found);
	sb_addf(search->found, "%.*s%s/%s", (int)length, root, search->directory, search->link->name);
	return try_debuglink_candidate(search);
}

static bool find_by_debuglink(const char *path, const struct debug_link *link, struct strbuf *found)
{
	char resolved[PATH_MAX];
	/* under a symfs root the recording's machine's links are not here to resolve */
	const char *self = !symfs && realpath(path, resolved) ? resolved : path;
	const char *slash = strrchr(self, '/');
	char *directory = slash ? xstrndup(self, (size_t)(slash - self)) : xstrdup(".");
	struct debuglink_search search = { .link = link, .self = self, .directory = directory, .found = found };

	bool hit = false;
	sb_reset(found);
	sb_addf(found, "%s/%s", directory, link->name);
	hit = try_debuglink_candidate(&search);
	if (!hit) {
		sb_reset(found);
		sb_addf(found, "%s/.debug/%s", directory, link->name);
		hit = try_debuglink_candidate(&search);
	}
	if (!hit)
		hit = each_debug_root(try_debuglink_under_root, &search);
	free(directory);
	return hit;
}

/* libdebuginfod's client calls, from the library loaded on first use; NULL members: it cannot be loaded. */
static struct {
	bool tried;
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} debuginfod;

static bool debuginfod_load(void)
{
	if (debuginfod.tried)
		return debuginfod.end != NULL;
	debuginfod.tried = true;
	void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		sp_warn("DEBUGINFOD_URLS is set, but libdebuginfod.so.1 cannot be loaded (%s): no debug file is fetched "
			"(apt-get install libdebuginfod1)", dlerror());
		return false;
	}
	/* the library stays loaded for the process's life: its handle is not kept */
	debuginfod.begin = (debuginfod_client * (*)(void)) dlsym(lib, "debuginfod_begin");
	debuginfod.find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int, char **))dlsym(
		lib, "debuginfod_find_debuginfo");
	debuginfod.end = (void (*)(debuginfod_client *))dlsym(lib, "debuginfod_end");
	if (!debuginfod.begin || !debuginfod.find_debuginfo || !debuginfod.end) {
		sp_warn("libdebuginfod.so.1 lacks the client calls: no debug file is fetched");
		debuginfod.end = NULL;
		return false;
	}
	return true;
}

/*
 * The debug file of build_id from the servers of DEBUGINFOD_URLS, into
 * found (a file of debuginfod's cache).  false when the variable is unset
 * or empty, or no server has it.
 */
static bool fetch_by_build_id(const char *build_id, struct strbuf *found)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls || strspn(build_id, "0123456789abcdef") != strlen(build_id))
		return false;
	if (!debuginfod_load())
		return false;
	debuginfod_client *client = debuginfod.begin();
	if (!client)
		return false;
	char *path = NULL;
	/* a hex string: libdebuginfod takes the build-id as text when its length is 0 */
	int fd = debuginfod.find_debuginfo(client, (const unsigned char *)build_id, 0, &path);
	debuginfod.end(client);
	if (fd < 0) {
		free(path);
		return false;
	}
	close(fd);
	sb_reset(found);
	sb_addf(found, "%s", path);
	if (!fetched_root) {
		/* its cache directory: the path up to the build-id's own directory */
		const char *at = strstr(path, build_id);
		fetched_root = at ? xstrndup(path, (size_t)(at - path)) : xstrdup(path);
	}
	free(path);
	return true;
}

int debug_file_locate(const char *path, const char *build_id, const struct debug_link *link, struct strbuf *found)
{
	if (build_id && strlen(build_id) > 2) {
		struct build_id_search search = { .build_id = build_id, .found = found };
		if (each_debug_root(try_build_id_path, &search))
			return 0;
	}
	/* A link name with a slash could climb out of the directories searched. */
	if (link && link->name[0] && !strchr(link->name, '/') && find_by_debuglink(path, link, found))
		return 0;
	if (build_id && strlen(build_id) > 2 && fetch_by_build_id(build_id, found))
		return 0;
	sb_reset(found);
	return -ENOENT;
}

int debug_link_read(Elf *elf, struct debug_link *link)
{
	size_t strings;
	if (elf_getshdrstrndx(elf, &strings) != 0)
		return -ENOEXEC;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		const char *name = elf_strptr(elf, strings, shdr.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink") != 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			return -ENOEXEC;
		/* The name, NUL-terminated, padded to 4 bytes, then the CRC32 in the file's byte order. */
		const char *bytes = data->d_buf;
		size_t name_length = strnlen(bytes, data->d_size);
		size_t crc_offset = ALIGN_UP(name_length + 1, 4);
		if (name_length == 0 || name_length >= sizeof(link->name) || crc_offset + 4 > data->d_size)
			return -ENOEXEC;
		memcpy(link->name, bytes, name_length + 1);
		Elf_Data in = { .d_buf = (void *)(bytes + crc_offset), .d_type = ELF_T_WORD, .d_size = 4,
				.d_version = EV_CURRENT };
		Elf_Data out = { .d_buf = &link->crc, .d_type = ELF_T_WORD, .d_size = 4, .d_version = EV_CURRENT };
		GElf_Ehdr ehdr;
		if (!gelf_getehdr(elf, &ehdr) || !gelf_xlatetom(elf, &out, &in, ehdr.e_ident[EI_DATA]))
			return -ENOEXEC;
		return 0;
	}
	return -ENOENT;
}

int debug_file_find(const char *path, char *out, size_t len)
{
	int fd, err;
	Elf *elf = elf_open_path(path, &fd, &err);
	if (!elf)
		return err;
	struct strbuf found = { 0 };
	struct symtab *scratch = symtab_new(); /* owns the build-id string */
	const char *build_id = elf_build_id(elf, scratch);
	struct debug_link link;
	bool has_link = debug_link_read(elf, &link) == 0;
	err = debug_file_locate(path, build_id, has_link ? &link : NULL, &found);
	symtab_free(scratch);
	if (!err && found.len >= len)
		err = -ENAMETOOLONG;
	if (!err)
		memcpy(out, found.buf, found.len + 1);
	sb_free(&found);
	elf_close_path(elf, fd);
	return err;
}
