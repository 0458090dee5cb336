/*
 * archive.h: `sigprof archive` and what report --symfs reads from its
 * archives.
 *
 * An archive is a POSIX ustar file holding the files a recording's
 * mappings name (each at its path, without the leading '/') and their
 * separate debug files (at theirs: usr/lib/debug/.build-id/ab/cdef.debug),
 * plus a manifest, sigprof-archive.txt: one line per file, "BUILD-ID PATH"
 * ("-" without a build-id).  Unpacked, it is a --symfs tree; `report
 * --symfs ARCHIVE` unpacks it itself into a private temporary directory.
 *
 * Layer: commands.  Nothing here prints: errors come back as -errno with
 * one line in err.
 */
#ifndef SIGPROF_ARCHIVE_H
#define SIGPROF_ARCHIVE_H

#include <stddef.h>

/*
 * Unpack the regular files of the archive at path into a new private
 * directory under $TMPDIR (or /tmp), whose name goes to *dir (malloc'd).
 * Entries that would leave it (an absolute name, a ".." component) are
 * refused, other kinds than regular files (links, devices) skipped.
 * 0, or -errno with the reason in err (nothing left behind).
 */
int archive_unpack(const char *path, char **dir, char *err, size_t errlen);
/* Remove what archive_unpack() made, and the directory; frees dir. */
void archive_remove(char *dir);

#endif
