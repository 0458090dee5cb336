/*
 * demangle.c: C++ and Rust symbol names as people read them
 * ("_ZN3foo3barEv" -> "foo::bar()", "_RNvCs1234_5crate4main" ->
 * "crate::main").
 *
 * C++ names go through the C++ runtime's __cxa_demangle (libstdc++, linked
 * with -lstdc++) rather than libiberty's cplus_demangle: both are the same
 * code (GCC's cp-demangle.c, which c++filt runs too), and libstdc++ is
 * already on every machine that has a C++ compiler or runs C++ programs.
 * The Itanium C++ ABI declares __cxa_demangle; we declare it here rather
 * than include a C++ header.  Rust names (v0, and legacy ones whose hash
 * C++'s demangler would keep) need libiberty's rust_demangle, the one
 * c++filt runs: a static archive (libiberty-dev), whose demangle.h is not
 * included because it brings libiberty.h's ARRAY_SIZE and basename; the
 * function and its two option bits are declared here as binutils declares
 * them.
 */
#include <stdlib.h>
#include <string.h>

#include "symtab_internal.h"

char *__cxa_demangle(const char *mangled_name, char *output_buffer, size_t *length, int *status);
char *rust_demangle(const char *mangled, int options);
#define DMGL_PARAMS (1 << 0) /* demangle.h: function arguments */
#define DMGL_ANSI (1 << 1)   /* demangle.h: const, volatile */

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
	if (!demangle_names || !name)
		return NULL;
	/*
	 * Rust: v0 names (_R...) and legacy ones (_ZN...17h<hash>E, which
	 * __cxa_demangle would read as C++ and keep the hash of), as c++filt
	 * and perf print them; NULL from libiberty when the name is not Rust's.
	 */
	if (strncmp(name, "_R", 2) == 0 || strncmp(name, "_ZN", 3) == 0) {
		char *rust = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		if (rust)
			return rust;
	}
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *demangled = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(demangled);
		return NULL;
	}
	return demangled;
}
