/*
 * paths.h: what the kernel was doing for the workload.
 *
 * A path is one of a fixed list (PATH_*).  A frame's symbol matches at most
 * one rule; a stack's path is the path of the matching frame nearest its
 * leaf, kernel and user frames alike, or "other" when none matches.  The
 * built-in rules are one table in profiler/model/paths.c, documented in
 * docs/paths.md; user rules are checked before them.
 */
#ifndef SIGPROF_PATHS_H
#define SIGPROF_PATHS_H

enum path_id {
	PATH_SIGRETURN,
	PATH_SIGNAL_DELIVER,
	PATH_SIGNAL_GENERATE,
	PATH_FUTEX_WAIT,
	PATH_FUTEX_WAKE,
	PATH_FUTEX_REQUEUE,
	PATH_FUTEX_OTHER,
	PATH_RECORDER, /* the kernel writing our own samples: perf_tp_event, perf_syscall_enter, ... */
	PATH_OTHER,
	PATH_COUNT,
};

const char *path_name(int path);
/* The path with this name, or -1. */
int path_from_name(const char *name);

struct path_rules;
struct path_rules *path_rules_new(void);
void path_rules_free(struct path_rules *rules);
/* Add a user rule "GLOB=PATH"; 0, or -EINVAL with the reason in err. */
int path_rules_add(struct path_rules *rules, const char *spec, char *err, unsigned errlen);
/* Add every "GLOB PATH" line of a file (# comments); 0 or -errno/-EINVAL with the reason in err. */
int path_rules_load(struct path_rules *rules, const char *file, char *err, unsigned errlen);
/* The path a symbol names, or -1 when no rule matches. */
int path_rules_match(const struct path_rules *rules, const char *symbol);

/* The built-in table, for docs and `sigprof report --list-paths`. */
struct path_rule {
	const char *pattern; /* fnmatch(3) glob on the symbol name */
	enum path_id path;
};
extern const struct path_rule builtin_path_rules[];
extern const unsigned builtin_path_rule_count;

#endif
