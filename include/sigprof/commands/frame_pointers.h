/*
 * frame_pointers.h: which files of a workload were built without frame
 * pointers, for record's warning when -g / --call-graph fp meets them.
 */
#ifndef SIGPROF_FRAME_POINTERS_H
#define SIGPROF_FRAME_POINTERS_H

#include <stdbool.h>

struct strbuf;

/*
 * Whether the ELF file at path sets up frame pointers in a quarter or more
 * of its functions (elf_frame_pointer_functions()); false for a file that
 * cannot be read or has no .eh_frame_hdr.
 */
bool file_has_frame_pointers(const char *path);
/*
 * The program at path and the libraries it names (DT_NEEDED, found in the
 * system's library directories) that have no frame pointers, by base name,
 * the program and libc first, the first three named ("stress-ng, libc.so.6,
 * libm.so.6 and 14 more"), added to names.  Returns how many.
 */
int files_without_frame_pointers(const char *program, struct strbuf *names);

#endif
