/*
 * srcline.c: source lines and inlined calls of code addresses, read from
 * DWARF with libdw (`sigprof report --srcline`).
 *
 * For an address the compilation unit that covers it (dwarf_addrdie) gives
 * the line table row (dwarf_getsrc_die) and the innermost scope
 * (dwarf_getscopes); that scope's lexical parents (dwarf_getscopes_die)
 * are the chain of DW_TAG_inlined_subroutine instances up to the
 * DW_TAG_subprogram that was compiled out of line.  Each inlined instance
 * carries where it was inlined: DW_AT_call_file and DW_AT_call_line, the
 * position shown for the level above it.  That is what `addr2line -i`
 * and `perf report --inline` print.
 *
 * One Dwarf handle per file, opened on first use and kept: dsos with the
 * same build-id (the same library reached by two paths, or mapped by
 * several processes) share it.  DWARF addresses are those of the file
 * (and of its debug file, which has the same layout), the space
 * mapping_to_dso_addr() converts into, so no bias is applied.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"
#include "symtab_internal.h"

/* One file's DWARF, or the memory that it has none. */
struct dwarf_file {
	const char *key;  /* build-id, else the path (in the pool) */
	int fd;           /* -1 when there is no DWARF */
	Dwarf *dwarf;     /* NULL when there is no DWARF */
};

/* Which dwarf_file a dso uses: the dso's pointer is the fast key. */
struct dso_binding {
	const struct dso *dso;
	struct dwarf_file *file;
};

struct source_lines {
	struct dwarf_file **files;
	size_t file_count, file_cap;
	struct dso_binding *bindings;
	size_t binding_count, binding_cap;
	struct string_pool *strings; /* keys and demangled names */
};

struct source_lines *source_lines_new(void)
{
	struct source_lines *sl = xcalloc(1, sizeof(*sl));
	sl->strings = string_pool_new();
	return sl;
}

void source_lines_free(struct source_lines *sl)
{
	if (!sl)
		return;
	for (size_t i = 0; i < sl->file_count; i++) {
		struct dwarf_file *f = sl->files[i];
		if (f->dwarf)
			dwarf_end(f->dwarf);
		if (f->fd >= 0)
			close(f->fd);
		free(f);
	}
	free(sl->files);
	free(sl->bindings);
	string_pool_free(sl->strings);
	free(sl);
}

static bool open_dwarf(const char *path, struct dwarf_file *f)
{
	if (!path)
		return false;
	int fd = symbolize_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	Dwarf *dwarf = dwarf_begin(fd, DWARF_C_READ);
	if (!dwarf) {
		close(fd);
		return false;
	}
	f->fd = fd;
	f->dwarf = dwarf;
	return true;
}

static bool dso_is_elf_file(const struct dso *dso)
{
	/* as dso_symtab() tells files from [vdso], [kernel], anonymous memory and memfds */
	return !dso->is_kernel && dso->name[0] && dso->name[0] != '[' && strncmp(dso->name, "//anon", 6) != 0 &&
	       strncmp(dso->name, "/memfd:", 7) != 0;
}

/* The debug file first (a stripped file has no DWARF of its own), then the file itself. */
static struct dwarf_file *open_dwarf_file(struct source_lines *sl, struct dso *dso)
{
	struct symtab *tab = dso_is_elf_file(dso) ? dso_symtab(dso) : NULL;
	const char *build_id = symtab_build_id(tab);
	const char *key = string_intern(sl->strings, build_id ? build_id : dso->name);
	for (size_t i = 0; i < sl->file_count; i++)
		if (sl->files[i]->key == key)
			return sl->files[i];

	struct dwarf_file *f = xcalloc(1, sizeof(*f));
	f->key = key;
	f->fd = -1;
	/* the file at the path is another build than the recording's: its lines are not the recording's */
	if (tab && !open_dwarf(symtab_debug_file(tab), f) && !dso->file_build_id[0])
		open_dwarf(dso->name, f);
	GROW(sl->files, sl->file_cap, sl->file_count + 1);
	sl->files[sl->file_count++] = f;
	return f;
}

static struct dwarf_file *dwarf_file_of(struct source_lines *sl, struct dso *dso)
{
	for (size_t i = 0; i < sl->binding_count; i++)
		if (sl->bindings[i].dso == dso)
			return sl->bindings[i].file;
	struct dwarf_file *f = open_dwarf_file(sl, dso);
	GROW(sl->bindings, sl->binding_cap, sl->binding_count + 1);
	sl->bindings[sl->binding_count++] = (struct dso_binding){ dso, f };
	return f;
}

/* The linkage name (demangled, as the symbol table shows names), else DW_AT_name, of a DIE or its origin. */
static const char *function_name(struct source_lines *sl, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (linkage) {
		char *demangled = symbol_demangle(linkage);
		const char *name = string_intern(sl->strings, demangled ? demangled : linkage);
		free(demangled);
		return name;
	}
	const char *name = dwarf_diename(die);
	return name ? string_intern(sl->strings, name) : NULL;
}

/*
 * DWARF 5 line tables name files relative to the compilation directory
 * (DW_AT_comp_dir) when the compiler was given a relative path; addr2line
 * and perf show them whole, and so do we.
 */
static const char *whole_path(struct source_lines *sl, Dwarf_Die *cu, const char *file)
{
	if (!file || file[0] == '/')
		return file;
	Dwarf_Attribute attr;
	const char *directory = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!directory || !directory[0])
		return file;
	struct strbuf joined = { 0 };
	sb_addf(&joined, "%s/%s", directory, file);
	const char *interned = string_intern(sl->strings, joined.buf);
	sb_free(&joined);
	return interned;
}

/* Where an inlined instance was inlined: its DW_AT_call_file and DW_AT_call_line. */
static void call_site(struct source_lines *sl, Dwarf_Die *inlined, const char **file, unsigned *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word index, number;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t count;
	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &number) == 0)
		*line = (unsigned)number;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &index) == 0 &&
	    dwarf_diecu(inlined, &cu, NULL, NULL) && dwarf_getsrcfiles(&cu, &files, &count) == 0 && index < count)
		*file = whole_path(sl, &cu, dwarf_filesrc(files, index, NULL, NULL));
}

static size_t function_levels(struct source_lines *sl, Dwarf_Die *innermost, const char *file, unsigned line,
			      struct source_frame *out, size_t max)
{
	Dwarf_Die *chain = NULL;
	int count = dwarf_getscopes_die(innermost, &chain);
	size_t n = 0;
	for (int i = 0; i < count && n < max; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		bool inlined = tag == DW_TAG_inlined_subroutine;
		out[n++] = (struct source_frame){ .function = function_name(sl, &chain[i]), .file = file,
						  .line = line, .inlined = inlined };
		if (!inlined)
			break;
		call_site(sl, &chain[i], &file, &line);
	}
	free(chain);
	return n;
}

size_t source_lines_lookup(struct source_lines *sl, struct dso *dso, uint64_t addr, struct source_frame *out,
			   size_t max)
{
	if (!sl || !dso || max == 0 || !dso_is_elf_file(dso))
		return 0;
	struct dwarf_file *f = dwarf_file_of(sl, dso);
	Dwarf_Die cu;
	if (!f->dwarf || !dwarf_addrdie(f->dwarf, addr, &cu))
		return 0;

	Dwarf_Line *row = dwarf_getsrc_die(&cu, addr);
	const char *file = row ? whole_path(sl, &cu, dwarf_linesrc(row, NULL, NULL)) : NULL;
	int line = 0;
	if (row)
		dwarf_lineno(row, &line);

	Dwarf_Die *scopes = NULL;
	size_t n = 0;
	if (dwarf_getscopes(&cu, addr, &scopes) > 0)
		n = function_levels(sl, &scopes[0], file, line > 0 ? (unsigned)line : 0, out, max);
	free(scopes);
	if (n == 0 && file)
		out[n++] = (struct source_frame){ .file = file, .line = line > 0 ? (unsigned)line : 0 };
	return n;
}
