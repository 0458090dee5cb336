/*
 * commands.h: one entry point per sigprof command (profiler/<command>.c),
 * called by main.c's command table with the arguments after the command
 * name (argv[0] is the command name).  Each returns the process exit status.
 */
#ifndef SIGPROF_COMMANDS_H
#define SIGPROF_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_script(int argc, char **argv);

/*
 * Each command's options (options.h): its getopt_long arrays and its --help
 * are made from them, and tests hold them against docs/sigprof.1.
 */
struct option_table;
extern const struct option_table record_option_table;
extern const struct option_table report_option_table;
extern const struct option_table stat_option_table;
extern const struct option_table list_option_table;
extern const struct option_table archive_option_table;
extern const struct option_table diff_option_table;
extern const struct option_table script_option_table;

/* Exit statuses shared by the commands. */
#define EXIT_USAGE 2        /* bad option, bad input file */
/* An output that could not be created or written (the status usage errors have, which scripts test). */
#define EXIT_WRITE_FAILED 2
#define EXIT_CANNOT_RUN 127 /* the workload could not be found, like a shell */
#define EXIT_NOT_EXEC 126   /* found but not executable */

#endif
