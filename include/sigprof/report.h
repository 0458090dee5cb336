/*
 * report.h: the views that every report output shares, and the outputs.
 *
 * report.c parses options, loads the profile and picks a writer; the
 * writers (report_text.c, report_json.c, and folded stacks in report.c)
 * use the same sorted views and stack writers (view.h) as the collectors'
 * sections, so the terminal and JSON never disagree.
 */
#ifndef SIGPROF_REPORT_H
#define SIGPROF_REPORT_H

#include <stdio.h>

#include "sigprof/profile.h"
#include "sigprof/view.h"

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_FOLDED, REPORT_FIGURES, REPORT_PPROF };

/* --folded-root: the frame folded stacks begin with. */
enum folded_root { ROOT_NONE, ROOT_COMM, ROOT_PID, ROOT_TID };

struct report_options {
	const char *input;
	enum report_format format;
	enum function_sort sort;
	const char *collector;      /* --collector for --folded; NULL: the first with samples */
	const char *pprof;          /* --pprof FILE */
	bool weight_ns;             /* --weight ns: folded stacks weighed by the collector's time */
	enum folded_root root;      /* --folded-root */
	bool no_demangle;           /* --no-demangle: C++ names raw */
	const char *debug_dirs;     /* --debug-dirs: roots of separate debug files; NULL: SIGPROF_DEBUG_DIRS or default */
	struct view_options view;   /* -n, --stacks, --max-frames, --sched-keys: what the collectors' sections follow */
};

void report_text(const struct profile *p, const struct report_options *o, FILE *out);
void report_json(const struct profile *p, const struct report_options *o, FILE *out);

/*
 * The weight kind (weights.h) that is collector c's time in ns, which
 * --weight ns reads from profile.weights: its own kind marked is_time,
 * else its periods when they are time (cpu-clock); -1 when it has none.
 */
int report_time_weight(const struct profile *p, int c);

/*
 * pprof (report_pprof.c): a profile loaded with profile_options.weights as
 * a gzipped profile.proto at path.  0, or -errno with the reason in err.
 */
int report_pprof(const struct profile *p, const char *path, char *err, size_t errlen);
/*
 * Two recordings (sigprof diff): both files get the sample types of both,
 * in one order, so that `pprof -diff_base=BASE_PATH CHANGED_PATH` compares them.
 */
int report_pprof_pair(const struct profile *base, const char *base_path, const struct profile *changed,
		      const char *changed_path, char *err, size_t errlen);

#endif
