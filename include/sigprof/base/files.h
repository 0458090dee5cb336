/*
 * files.h: reading files sigprof may not trust (bounded), and writing outputs
 * where others can write (a new private file renamed into place, or a
 * stream checked before it is written); the open-file limit.
 */
#ifndef SIGPROF_FILES_H
#define SIGPROF_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The whole of a file (procfs too) in a malloc'd NUL-terminated buffer; NULL with errno set on failure. */
char *read_whole_file(const char *path, size_t *len);
/*
 * The same for a file sigprof does not trust (a user's kallsyms or rules
 * file, which may be /dev/zero or a FIFO that never ends): at most max
 * bytes; -EFBIG past them, without holding more than max + 1 in memory.
 * 0 with *text (free() it) and *len, or -errno.
 */
int read_file_bounded(const char *path, size_t max, char **text, size_t *len);
/* This boot's id (/proc/sys/kernel/random/boot_id, a UUID): 0, or -errno. */
int read_boot_id(char *buf, size_t buflen);
/* "a symbolic link", "a character device", "a FIFO"...: what an st_mode is, for an error line. */
const char *file_type_name(unsigned mode);

/* The integer at the start of a (proc/sys) file, or fallback when it cannot be read. */
int read_int_file(const char *path, int fallback);

/*
 * An output file a root command may write in a directory others can write
 * (/tmp): the data goes to a new file of its own next to PATH (O_EXCL |
 * O_NOFOLLOW, a random name, mode 0600 then chmod to mode), which
 * safe_output_commit() renames over PATH when it is whole.  An existing
 * PATH that is not a regular file (a symbolic link, device, FIFO,
 * directory) is refused (-EEXIST) and never opened; a failed or aborted
 * output leaves PATH as it was.
 */
/*
 * The two steps of such a file, shared with the recording's writer:
 * output_dir_open() opens the directory of path (O_DIRECTORY) and points
 * *name at path's last component: -EISDIR when there is none, -EEXIST when
 * an entry of that name is not a regular file (never followed), else the
 * directory's fd.  private_temp_create() makes the new file in it: ".NAME."
 * and 8 random hex digits (NAME cut to 200 bytes), O_EXCL | O_NOFOLLOW,
 * mode 0600; its fd, its name in *temp (the caller's to free), or -errno.
 */
int output_dir_open(const char *path, const char **name);
/* Whether name in dirfd may be replaced: 0 when nothing or a regular file is there, -EEXIST (anything else), -errno. */
int output_replaceable(int dirfd, const char *name);
int private_temp_create(int dirfd, const char *name, char **temp);

struct safe_output {
	FILE *fp;        /* write here */
	int dirfd;       /* PATH's directory */
	char *name;      /* PATH's last component */
	char *temp;      /* the new file's name in dirfd */
	unsigned mode;   /* the permissions PATH gets */
	struct output_stream *stream; /* fp's descriptor and its first write error, which stdio forgets */
};
int safe_output_open(const char *path, unsigned mode, struct safe_output *out);
/* Flush, close and rename into place; 0 or -errno (the new file removed). */
int safe_output_commit(struct safe_output *out);
/* Close and remove the new file; PATH is untouched. */
void safe_output_abort(struct safe_output *out);

/*
 * An output written as it goes (stat's figures and intervals) that a root
 * command opens where others can write: a new PATH is created O_EXCL |
 * O_NOFOLLOW (*created true); an existing one is opened O_NOFOLLOW and must
 * be a regular file of one link (-EMLINK: a hard link someone made would
 * take the writes to another file) that root, the caller or the
 * directory's owner owns (-EEXIST: another user's file planted in /tmp,
 * which they could hold open and change after), or a FIFO, terminal or device that root
 * or the caller owns or that this process already has open as its standard
 * input, output or error (-EPERM: another user's FIFO planted in /tmp).  A
 * symbolic link is followed (-o /dev/stderr) only when root or the caller
 * owns it in a directory no one else can change (-EPERM: one another user
 * planted, or could swap, in /tmp); where it leads is its owner's choice,
 * as any path they give, and only the file it ends at is held to the rules
 * above (a link to nothing yet creates that file).  Every open is
 * O_NONBLOCK (a FIFO without a reader: -ENXIO), cleared once open.  The fd,
 * or -errno.
 */
int stream_output_open(const char *path, bool *created);

/*
 * The open-file limit for the events of running targets: the hard limit, as
 * perf takes; root (who may raise it) takes the kernel's bound, fs.nr_open.
 * A command sigprof runs gets the limit it had back (restore, in the child
 * before exec): a program that closes every fd up to its limit would pay.
 */
void open_files_limit_raise(void);
void open_files_limit_restore(void);

#endif
