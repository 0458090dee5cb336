/*
 * fuzz.c: the fuzzing targets over what sigprof reads from others (docs/security.md).
 *
 * One source, one target per build (-DFUZZ_TARGET_...):
 *   recording  the bytes as a recording: the container reader (datafile.c) and the profile loader
 *              (profile.c: META, EVENT, TRACEPOINT, KALLSYMS, kernel records, samples, symbolization);
 *   perfdata   the bytes as a perf.data file (perfdata.c, seeded with tests/fixtures/perfdata/): the
 *              reader's records, then the loader on them as report reads them;
 *   elf        the bytes as an ELF file: the symbol table reader (elf.c, symtab.c) from memory and
 *              from a file (which also looks for its debug file);
 *   event      the bytes as an -e argument: the event parser (pmu.c);
 *   tar        the bytes as an archive for `report --symfs ARCHIVE` (and what `sigprof archive` wrote): the tar
 *              reader and unpacker (archive.c: headers, checksums, member names, sizes, pax extended headers
 *              and GNU long names, seeded with tar(1)'s pax and gnu forms of a 300-character path), into a
 *              private directory removed after each input;
 *   statjson   the bytes as a `stat --json` document read by `sigprof diff` (stat_document.c: runs, figures, values,
 *              rusage, intervals, the command).
 * Built with clang -fsanitize=fuzzer it is a libFuzzer binary (make fuzz); built with -DFUZZ_STANDALONE
 * it runs each file named on its command line once, which is what AFL++ (afl-clang-fast) and a crash
 * replayed by hand need.  A crash found becomes a unit test of the module it is in.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sigprof/commands/archive.h"
#include "sigprof/commands/diff.h"
#include "sigprof/kernel/format.h"
#include "sigprof/kernel/pmu.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/profile.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"
#include "sigprof/base/files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a file that readers open by name: /proc/self/fd/N of a memfd.  -1 on failure. */
static int bytes_as_file(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
	int fd = memfd_create("sigprof-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

#if defined(FUZZ_TARGET_STATJSON)
static void ignore_figure(void *ctx, size_t run, const char *key, const char *unit, bool exact, double value)
{
	(void)ctx, (void)run, (void)key, (void)unit, (void)exact, (void)value;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if defined(FUZZ_TARGET_RECORDING)
	char path[64], err[512];
	int fd = bytes_as_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	struct profile p;
	profile_load(path, NULL, &p, err, sizeof(err));
	profile_free(&p);
	close(fd);
#elif defined(FUZZ_TARGET_PERFDATA)
	char path[64], err[512];
	int fd = bytes_as_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	struct sp_reader *r;
	if (sp_reader_open(path, &r, err, sizeof(err)) == 0) {
		const struct perf_event_header *rec;
		while (sp_reader_next(r, &rec) == 1)
			;
		sp_reader_close(r);
	}
	struct profile p;
	profile_load(path, NULL, &p, err, sizeof(err));
	profile_free(&p);
	close(fd);
#elif defined(FUZZ_TARGET_ELF)
	struct symtab *tab = NULL;
	if (symtab_from_elf_memory(data, size, &tab) == 0)
		symtab_free(tab);
	char path[64];
	int fd = bytes_as_file(data, size, path, sizeof(path));
	if (fd >= 0) {
		if (symtab_from_elf_file(path, &tab) == 0)
			symtab_free(tab);
		close(fd);
	}
#elif defined(FUZZ_TARGET_EVENT)
	char spec[512], err[512];
	size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	memcpy(spec, data, n);
	spec[n] = '\0';
	struct pmu_event ev;
	pmu_event_parse(spec, &ev, err, sizeof(err));
#elif defined(FUZZ_TARGET_TAR)
	char path[64], err[512];
	int fd = bytes_as_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	char *dir = NULL;
	if (archive_unpack(path, &dir, err, sizeof(err)) == 0)
		archive_remove(dir);
	close(fd);
#elif defined(FUZZ_TARGET_STATJSON)
	char *text = xstrndup((const char *)data, size);
	size_t runs = 0;
	char err[512], command[1024];
	diff_stat_document(text, 64, ignore_figure, NULL, &runs, err, sizeof(err));
	diff_stat_command(text, command, sizeof(command));
	free(text);
#else
#error "define FUZZ_TARGET_RECORDING, FUZZ_TARGET_PERFDATA, FUZZ_TARGET_ELF, FUZZ_TARGET_EVENT, FUZZ_TARGET_TAR or FUZZ_TARGET_STATJSON"
#endif
	return 0;
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		size_t len;
		char *bytes = read_whole_file(argv[i], &len);
		if (!bytes) {
			perror(argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)bytes, len);
		free(bytes);
	}
	return 0;
}
#endif
