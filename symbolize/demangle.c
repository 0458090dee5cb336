/*
 * demangle.c: C++ symbol names as people read them ("_ZN3foo3barEv" ->
 * "foo::bar()").
 *
 * The demangler is the C++ runtime's __cxa_demangle (libstdc++, linked
 * with -lstdc++) rather than libiberty's cplus_demangle: both are the same
 * code (GCC's cp-demangle.c, which c++filt runs too), but libstdc++ is
 * already on every machine that has a C++ compiler or runs C++ programs,
 * as a shared library, while libiberty is a static archive in a package of
 * its own (libiberty-dev) whose ABI is not promised to anyone.  The
 * Itanium C++ ABI declares __cxa_demangle; we declare it here rather than
 * include a C++ header.
 */
#include <stdlib.h>
#include <string.h>

#include "symtab_internal.h"

char *__cxa_demangle(const char *mangled_name, char *output_buffer, size_t *length, int *status);

static bool demangle_names = true;

void symbolize_set_demangle(bool demangle)
{
	demangle_names = demangle;
}

bool symbolize_demangles(void)
{
	return demangle_names;
}

/*
 * Only names of the Itanium ABI ("_Z", with the clone suffixes such as
 * ".constprop.0" that GCC appends) are given to the demangler: a C name
 * like "_Exit" must come back as it is, and __cxa_demangle would also read
 * a bare type name ("i" -> "int").
 */
char *symbol_demangle(const char *name)
{
	if (!demangle_names || !name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *demangled = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(demangled);
		return NULL;
	}
	return demangled;
}
