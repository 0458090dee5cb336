/*
 * cli.h: what the commands share in talking to the user at a terminal: the
 * option parser's error line (with the nearest valid option) and the pager.
 *
 * Commands layer: these print (to stderr, or through the pager to stdout).
 */
#ifndef SIGPROF_CLI_H
#define SIGPROF_CLI_H

#include <stdbool.h>
#include <stdio.h>

struct option_table;

/*
 * Call in the getopt_long loop's default case: one error line naming what
 * was wrong, "sigprof: report: unrecognized option '--jsn'; did you mean
 * '--json'?", then "Try 'sigprof report --help'.".  Returns -1.
 */
int cli_option_error(const struct option_table *t, int argc, char **argv);

/*
 * The pager.  pager_begin() returns where the command writes its output:
 * stdout itself, or (enabled and stdout a terminal) a buffer that
 * pager_end() shows through $PAGER (default "less -FRX"; LESS=FRX when
 * unset, as git does) when it is longer than the screen, and writes to
 * stdout as it is otherwise.  An empty $PAGER or "cat" means no pager.
 * pager_end() returns 0 or -errno (writing failed).
 */
struct pager {
	FILE *out;      /* what pager_begin() returned */
	char *buf;      /* the buffered output, or NULL */
	size_t len;
};
FILE *pager_begin(struct pager *pg, bool enabled);
int pager_end(struct pager *pg);

#endif
