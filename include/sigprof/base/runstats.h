/*
 * runstats.h: statistics over repeated runs, and the kernel test robot's
 * (LKP's) rules for when a figure changed between two sets of runs and how
 * the change is printed.
 *
 * Layer: base.  Pure functions of arrays of values; `sigprof stat` uses
 * the mean and %stddev, `sigprof diff` the whole comparison.  The rules
 * follow lkp-tests' lib/stats.rb, lib/changed_stat.rb and lib/compare.rb
 * (our own code; docs/diff.md states them):
 *
 *   value of a side   the mean of its runs
 *   %stddev           100 * population stddev / mean, shown when above 2
 *   %change           100 * (new - base) / base; for figures that are
 *                     themselves percentages (perf-profile.*, keys ending
 *                     in '%', rows in the unit percent or %, but not LKP's
 *                     time.percent_of_cpu_this_job_got) the absolute
 *                     difference
 *   significant       both sides have at least 3 runs, and
 *                     min(new) > median(base) && median(new) > max(base)
 *                     (or the mirror), and the ratio of the medians is above
 *                     1.01 for perf metrics (perf-stat.*, perf-profile.*,
 *                     perf-c2c.*), above 1.05 for the others;
 *                     perf-c2c.HITM.total also needs max >= 3000 and a
 *                     difference of the medians >= 1500.  The median is
 *                     LKP's: sorted[n / 2].
 *
 * A line of the table, as the robot prints it:
 *
 *          %stddev     %change         %stddev
 *              \          |                \
 *      67558 ± 56%     +66.3%     112351        perf-c2c.HITM.local
 *  1.674e+08 ± 20%     +19.0%  1.991e+08        perf-stat.i.cache-misses
 */
#ifndef SIGPROF_RUNSTATS_H
#define SIGPROF_RUNSTATS_H

#include <stdbool.h>
#include <stddef.h>

#include "sigprof/base/util.h"

/* ---- one set of runs ---- */

/* The mean of v[0..n); 0 for n == 0. */
double stat_mean(const double *v, size_t n);
/* The population standard deviation, sqrt(sum((v - mean)^2) / n); 0 for n < 2. */
double stat_stddev(const double *v, size_t n);
/* 100 * stddev / |mean|: LKP's %stddev; 0 when the mean is 0. */
double stat_stddev_percent(const double *v, size_t n);

/* What the comparison needs of one side's values. */
struct run_summary {
	size_t runs;
	double mean;
	double stddev_percent;
	double min, median, max;   /* median: LKP's, the sorted values' element runs / 2 */
};

/* Summarize v[0..n) (n may be 0: everything 0). */
void run_summarize(const double *v, size_t n, struct run_summary *s);

/* ---- two sets: LKP's rules ---- */

#define LKP_MIN_RUNS 3                 /* runs a side needs for a significance test */
#define LKP_PERF_RATIO 1.01            /* perf metrics: the medians must differ by more than 1% */
#define LKP_OTHER_RATIO 1.05           /* the others: by more than 5% */
#define LKP_HITM_TOTAL_MAX 3000        /* perf-c2c.HITM.total: the larger median at least this */
#define LKP_HITM_TOTAL_DELTA 1500      /* ... and the medians this far apart */
#define LKP_MAX_RATIO 5                /* LKP's cap of the ratio (a zero median gives it) */

/* LKP's perf metrics (perf-stat.*, perf-profile.*, perf-c2c.*): the 1% threshold. */
bool lkp_perf_metric(const char *key);
/*
 * Figures whose change is the absolute difference (compare.rb): perf-profile.*,
 * keys ending in '%'; and figures in the unit "percent" or "%" (unit may be
 * NULL), except time.percent_of_cpu_this_job_got, which LKP compares
 * relatively.
 */
bool lkp_absolute_change(const char *key, const char *unit);

/*
 * The unit of LKP's time.FIELD figure, the workload's rusage (workload.h):
 * "s" for the *_time fields, "percent" for percent_of_cpu_this_job_got, "KB"
 * for maximum_resident_set_size, "count" for the rest; one answer for a
 * recording's rows and a stat document's.
 */
const char *lkp_time_unit(const char *field);

/* What the rules say of one row. */
enum change_verdict {
	CHANGE_SIGNIFICANT,      /* listed */
	CHANGE_UNTESTED,         /* a side has fewer than LKP_MIN_RUNS runs: no test possible */
	CHANGE_EQUAL_EXACT,      /* an exact count that did not differ */
	CHANGE_OVERLAP,          /* the ranges overlap around the medians: noise */
	CHANGE_BELOW_THRESHOLD,  /* apart, but the medians' ratio is within the threshold */
	CHANGE_BELOW_FLOOR,      /* perf-c2c.HITM.total under LKP's floor */
	CHANGE_MISSING,          /* a side has no value at all */
	CHANGE_NOT_CONFIRMED,    /* LKP's rule passed, the per-row test over the runs did not (q above FDR_Q) */
};
/* "significant", "untested", "equal", "overlap", "below-threshold", "below-floor", "missing", "not-confirmed" */
const char *change_verdict_name(enum change_verdict v);

/*
 * The verdict of LKP's rules on one figure (key) with exact counts or not
 * (exact figures that do not differ are never significant).
 */
enum change_verdict lkp_verdict(const char *key, bool exact, const struct run_summary *base,
				const struct run_summary *new_side);

/*
 * %change of the means: 100 * (new - base) / base, or new - base for an
 * absolute-change figure (lkp_absolute_change(key, unit)).  A zero base is LKP's 1e-100 (a huge change, as its
 * reports print it); *defined is false then (NULL allowed).
 */
double lkp_change(const char *key, const char *unit, double base, double new_value, bool *defined);

/* ---- a test per row, and the false discovery rate over the rows ---- */

/*
 * LKP's rule lets about one figure in ten of an unchanged workload through
 * at 3 runs a side (docs/diff.md measures it): it asks only that the ranges
 * be apart, which three noisy values of each side often are by chance.
 * `sigprof diff` therefore also asks each row for Welch's t-test (it does
 * not assume the two sides have the same variance: a change often changes
 * the spread too; of the logarithms for a %change, ratio_welch_p_value())
 * and keeps the expected share of false discoveries among the rows it
 * lists at FDR_Q with Benjamini-Hochberg's step-up procedure over all the
 * rows that have a test.
 */
#define FDR_Q 0.05 /* the false discovery rate the rows are held to */

/*
 * The two-sided p-value of Welch's t-test of x[0..nx) against y[0..ny)
 * (each at least 2 values): t = (mean(y) - mean(x)) / sqrt(sx^2/nx + sy^2/ny)
 * with the sample variances, Welch-Satterthwaite's degrees of freedom.  Two
 * sides without any spread (but rounding's): 1 when their means are equal
 * within a billionth, else 0 (a deterministic count that moved).  1 when a side has fewer than 2 values.
 */
double welch_p_value(const double *x, size_t nx, const double *y, size_t ny);
/*
 * The same test of a change read as a ratio, as diff's %change is: of the
 * logarithms when every value of both sides is above 0 (a count or a time
 * whose noise grows with it: 10, 9, 8 contentions against 2384, 2187, 2069
 * give p = 0.0017 on the values, 2e-6 on their logarithms), else of the
 * values.
 */
double ratio_welch_p_value(const double *x, size_t nx, const double *y, size_t ny);

/* P(|T| > |t|) for Student's t with df degrees of freedom (df > 0, not necessarily whole). */
double student_t_two_sided(double t, double df);

/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0. */
double incomplete_beta(double x, double a, double b);

/*
 * Benjamini-Hochberg's adjusted p-values (q-values) of p[0..n) into q[0..n):
 * q_(i) = min over j >= i of p_(j) * n / j (ranks in increasing p), at most
 * 1.  A row is a discovery at level Q when its q is at most Q.
 */
void benjamini_hochberg(const double *p, size_t n, double *q);

/* ---- the robot's layout ---- */

#define LKP_VALUE_WIDTH 10   /* ABS_WIDTH */
#define LKP_CHANGE_WIDTH 10  /* REL_WIDTH */

/*
 * A mean as LKP prints it, without padding: "%.2f" below 1000, "%.4g"
 * above 1e8 ("1.674e+08"), else the integer part ("112351").
 */
void lkp_format_value(struct strbuf *sb, double v);
/* " ± 20%" (the %stddev's integer part) when above 2, else six blanks. */
void lkp_format_stddev(struct strbuf *sb, double stddev_percent);
/* "+66.3%" ("%+.2g%%" from 100000 on), or "+1.5" for an absolute change; no padding. */
void lkp_format_change(struct strbuf *sb, double change, bool absolute);

/* A share in whole percent, "58%" or "-4%": one that rounds to 0 is "0%", never "-0%". */
void format_whole_percent(struct strbuf *sb, double percent);

/* The column widths of a table: at least LKP's, wider when a value needs it. */
struct lkp_widths {
	int value, change;
};
/* The two header lines ("%stddev %change %stddev", "\ | \") for these widths. */
void lkp_format_header(struct strbuf *sb, const struct lkp_widths *w);
/*
 * One line: base value and %stddev, %change, new value and %stddev, key.
 * has_change false: the change column is blank (a side missing).  A
 * missing side (NULL) prints "-" in its value column.
 */
void lkp_format_line(struct strbuf *sb, const struct lkp_widths *w, const struct run_summary *base,
		     const struct run_summary *new_side, double change, bool absolute, bool has_change,
		     const char *key);

#endif
