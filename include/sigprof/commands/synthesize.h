/*
 * synthesize.h: the records the kernel wrote when a task or mapping was
 * made, made again from /proc for tasks that already run, so that a
 * recording that starts late (a --switch-output piece after the first, an
 * attached target) names their frames.
 *
 * Layer: commands.  Nothing here prints.
 */
#ifndef SIGPROF_SYNTHESIZE_H
#define SIGPROF_SYNTHESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strbuf;

/*
 * Append to out a COMM record for every thread and an MMAP2 record for
 * every executable mapping (every mapping with data_mmaps) of process root
 * and of every process descended from it, as the kernel lays them out, each
 * with the sample_id trailer of an event of sample_type whose id is id, at
 * time 0 (a report replays them before any sample).  A process that exits
 * meanwhile is skipped.  The number of mappings written (0: the tree has
 * exited, a zombie's maps are empty), or -errno.
 */
int synthesize_process_tree(pid_t root, struct strbuf *out, uint64_t sample_type, uint64_t id, bool data_mmaps);
/* The same for process pid alone (attached targets: target_synthesize()); its number of mappings. */
size_t synthesize_process(pid_t pid, struct strbuf *out, uint64_t sample_type, uint64_t id, bool data_mmaps);
/*
 * The 24 bytes of an MMAP2 record between pgoff and prot, as the kernel
 * writes them with attr.build_id: the build-id of the ELF file name (NULL:
 * none read), with PERF_RECORD_MISC_MMAP_BUILD_ID added to *misc; else the
 * device and inode /proc/PID/maps gives.
 */
void synthesize_mmap2_identity(uint8_t identity[24], uint16_t *misc, const char *name, unsigned maj, unsigned min,
			       uint64_t ino);

#endif
