/*
 * frame_pointers.c: which files of a workload lack frame pointers
 * (include/sigprof/commands/frame_pointers.h).
 *
 * A frame-pointer walk (-g, --call-graph fp) through a function built
 * without them reads a register that holds something else and leaves the
 * code; Debian builds its programs and libc so.  record says so at the
 * start, naming the files, instead of letting the report find cut stacks.
 * Only the program and the libraries it names directly are looked at (libc
 * is one of them); a library is found in the usual system directories, as
 * the dynamic loader would without LD_LIBRARY_PATH or a RUNPATH.
 */
#include <string.h>
#include <unistd.h>

#include "sigprof/commands/frame_pointers.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"

static const char *const library_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

bool file_has_frame_pointers(const char *path)
{
	size_t with, functions;
	return elf_frame_pointer_functions(path, &with, &functions) == 0 && functions && with * 4 >= functions;
}

/* The first FILES_NAMED files are named, the rest counted ("and 14 more"). */
#define FILES_NAMED 3

static void add_name(struct strbuf *names, int *count, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (*count < FILES_NAMED)
		sb_addf(names, "%s%s", *count ? ", " : "", slash ? slash + 1 : path);
	(*count)++;
}

/* libc first: every program's stacks pass through it */
static bool is_libc(const char *name)
{
	return strncmp(name, "libc.so", 7) == 0;
}

/* Whether the library of that name, found in library_dirs (its path in path), lacks frame pointers. */
static bool library_without_frame_pointers(const char *name, char *path, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(library_dirs); i++) {
		snprintf(path, len, "%s/%s", library_dirs[i], name);
		if (access(path, R_OK) == 0)
			return !file_has_frame_pointers(path);
	}
	return false;
}

int files_without_frame_pointers(const char *program, struct strbuf *names)
{
	int count = 0;
	size_t with, functions;
	/* a script or unreadable file says nothing about the code that runs */
	if (elf_frame_pointer_functions(program, &with, &functions) < 0)
		return 0;
	if (functions && with * 4 < functions)
		add_name(names, &count, program);
	struct strbuf needed = { 0 };
	int n = elf_needed_libraries(program, &needed);
	const char *name;
	char path[4096];
	for (int pass = 0; pass < 2; pass++) {
		name = needed.buf;
		for (int i = 0; i < n; i++, name += strlen(name) + 1)
			if (is_libc(name) == (pass == 0) && library_without_frame_pointers(name, path, sizeof(path)))
				add_name(names, &count, name);
	}
	if (count > FILES_NAMED)
		sb_addf(names, " and %d more", count - FILES_NAMED);
	sb_free(&needed);
	return count;
}
