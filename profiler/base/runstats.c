/*
 * runstats.c: mean and %stddev over runs, and LKP's rules for a change
 * between two sets of runs with the robot's number formats (runstats.h
 * states the rules; docs/diff.md explains them to users).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/runstats.h"

double stat_mean(const double *v, size_t n)
{
	if (!n)
		return 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

double stat_stddev(const double *v, size_t n)
{
	if (n < 2)
		return 0;
	double mean = stat_mean(v, n), sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (v[i] - mean) * (v[i] - mean);
	return sqrt(sum / (double)n);
}

double stat_stddev_percent(const double *v, size_t n)
{
	double mean = stat_mean(v, n);
	return mean == 0 ? 0 : 100.0 * stat_stddev(v, n) / fabs(mean);
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void run_summarize(const double *v, size_t n, struct run_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->runs = n;
	if (!n)
		return;
	double *sorted = xmalloc(n * sizeof(*sorted));
	memcpy(sorted, v, n * sizeof(*sorted));
	sort_items(sorted, n, sizeof(*sorted), compare_doubles);
	s->mean = stat_mean(v, n);
	s->stddev_percent = stat_stddev_percent(v, n);
	s->min = sorted[0];
	s->median = sorted[n / 2];
	s->max = sorted[n - 1];
	free(sorted);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool lkp_perf_metric(const char *key)
{
	return has_prefix(key, "perf-stat.") || has_prefix(key, "perf-profile.") || has_prefix(key, "perf-c2c.");
}

bool lkp_absolute_change(const char *key, const char *unit)
{
	size_t len = strlen(key);
	if (has_prefix(key, "perf-profile.") || (len && key[len - 1] == '%'))
		return true;
	/* LKP's own time.percent_of_cpu_this_job_got is a percentage LKP compares relatively ("91.00 -8.8% 83.00") */
	if (strcmp(key, "time.percent_of_cpu_this_job_got") == 0)
		return false;
	return unit && (strcmp(unit, "percent") == 0 || strcmp(unit, "%") == 0);
}

const char *lkp_time_unit(const char *field)
{
	size_t len = strlen(field);
	if (len > 5 && strcmp(field + len - 5, "_time") == 0)
		return "s";
	if (strcmp(field, "maximum_resident_set_size") == 0)
		return "KB";
	if (has_prefix(field, "percent"))
		return "percent";
	return "count";
}

const char *change_verdict_name(enum change_verdict v)
{
	static const char *const names[] = {
		[CHANGE_SIGNIFICANT] = "significant", [CHANGE_UNTESTED] = "untested",
		[CHANGE_EQUAL_EXACT] = "equal", [CHANGE_OVERLAP] = "overlap",
		[CHANGE_BELOW_THRESHOLD] = "below-threshold", [CHANGE_BELOW_FLOOR] = "below-floor",
		[CHANGE_MISSING] = "missing", [CHANGE_NOT_CONFIRMED] = "not-confirmed",
	};
	return (unsigned)v < ARRAY_SIZE(names) ? names[v] : "?";
}

enum change_verdict lkp_verdict(const char *key, bool exact, const struct run_summary *base,
				const struct run_summary *new_side)
{
	if (!base->runs || !new_side->runs)
		return CHANGE_MISSING;
	if (exact && base->mean == new_side->mean && base->min == new_side->min && base->max == new_side->max)
		return CHANGE_EQUAL_EXACT;
	if (base->runs < LKP_MIN_RUNS || new_side->runs < LKP_MIN_RUNS)
		return CHANGE_UNTESTED;
	/* changed_stat.rb: the ranges do not overlap around the medians */
	bool up = new_side->min > base->median && new_side->median > base->max;
	bool down = base->min > new_side->median && base->median > new_side->max;
	if (!up && !down)
		return CHANGE_OVERLAP;
	/* stats.rb: the larger median over the smaller, LKP_MAX_RATIO when the smaller is 0 */
	double hi = up ? new_side->median : base->median, lo = up ? base->median : new_side->median;
	double ratio = lo > 0 ? hi / lo : LKP_MAX_RATIO;
	if (ratio > LKP_MAX_RATIO)
		ratio = LKP_MAX_RATIO;
	if (!(ratio > LKP_PERF_RATIO) || !(ratio > LKP_OTHER_RATIO || lkp_perf_metric(key)))
		return CHANGE_BELOW_THRESHOLD;
	if (strcmp(key, "perf-c2c.HITM.total") == 0) {
		double max = fmax(base->max, new_side->max);
		if (max < LKP_HITM_TOTAL_MAX || hi - lo < LKP_HITM_TOTAL_DELTA)
			return CHANGE_BELOW_FLOOR;
	}
	return CHANGE_SIGNIFICANT;
}

double lkp_change(const char *key, const char *unit, double base, double new_value, bool *defined)
{
	if (defined)
		*defined = true;
	if (lkp_absolute_change(key, unit))
		return new_value - base;
	if (base == 0) {
		if (defined)
			*defined = new_value == 0;
		if (new_value == 0)
			return 0;
		base = 1e-100; /* compare.rb's guard against dividing by 0: "+5.7e+104%" */
	}
	return 100.0 * (new_value - base) / fabs(base);
}

void lkp_format_value(struct strbuf *sb, double v)
{
	if (fabs(v) < 1000)
		sb_addf(sb, "%.2f", v);
	else if (fabs(v) > 100000000)
		sb_addf(sb, "%.4g", v);
	else
		sb_addf(sb, "%lld", (long long)v); /* Ruby's %d of a Float: the integer part */
}

void lkp_format_stddev(struct strbuf *sb, double stddev_percent)
{
	if (stddev_percent > 2)
		sb_addf(sb, " \u00b1%3lld%%", (long long)stddev_percent);
	else
		sb_addstr(sb, "      ");
}

void lkp_format_change(struct strbuf *sb, double change, bool absolute)
{
	if (fabs(change) < 100000)
		sb_addf(sb, "%+.1f%s", change, absolute ? "" : "%");
	else
		sb_addf(sb, "%+.2g%s", change, absolute ? "" : "%");
}

void format_whole_percent(struct strbuf *sb, double percent)
{
	double whole = round(percent);
	sb_addf(sb, "%.0f%%", whole == 0 ? 0.0 : whole); /* -0.3 rounds to 0%, never "-0%" */
}

void lkp_format_header(struct strbuf *sb, const struct lkp_widths *w)
{
	/* compare.rb's show_perf_header, its columns widened with the values */
	sb_addf(sb, "%*s%*s%*s\n", w->value + 6, "%stddev", w->change + 2, "%change", w->value + 6, "%stddev");
	sb_addf(sb, "%*s%*s%*s\n", w->value + 4, "\\", w->change + 1, "|", w->value + 7, "\\");
}

static void add_padded(struct strbuf *sb, const char *s, int width)
{
	sb_addf(sb, "%*s", width, s);
}

void lkp_format_line(struct strbuf *sb, const struct lkp_widths *w, const struct run_summary *base,
		     const struct run_summary *new_side, double change, bool absolute, bool has_change,
		     const char *key)
{
	struct strbuf cell = { 0 };
	const struct run_summary *sides[2] = { base, new_side };
	for (int i = 0; i < 2; i++) {
		if (i == 1) {
			sb_reset(&cell);
			if (has_change)
				lkp_format_change(&cell, change, absolute);
			/* compare.rb: "%+10.1f%% ", and two blanks after an absolute change */
			if (has_change && absolute)
				sb_addstr(&cell, " ");
			add_padded(sb, cell.len ? cell.buf : "", w->change + 1);
			sb_addstr(sb, " ");
		}
		sb_reset(&cell);
		if (sides[i] && sides[i]->runs)
			lkp_format_value(&cell, sides[i]->mean);
		else
			sb_addstr(&cell, "-");
		add_padded(sb, cell.buf, w->value);
		sb_reset(&cell);
		lkp_format_stddev(&cell, sides[i] && sides[i]->runs ? sides[i]->stddev_percent : 0);
		sb_addstr(sb, cell.buf);
	}
	sb_addf(sb, "  %s\n", key);
	sb_free(&cell);
}

/* ---- Welch's t-test and Benjamini-Hochberg ---- */

/*
 * The continued fraction of the incomplete beta function (its even and odd
 * steps d_2m, d_2m+1), evaluated with the modified Lentz method; it
 * converges fast for x < (a + 1) / (a + b + 2), the caller uses the
 * symmetry I_x(a, b) = 1 - I_1-x(b, a) for the rest.
 */
static double beta_continued_fraction(double x, double a, double b)
{
	const double tiny = 1e-300, epsilon = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double result = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m;
		double even = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		double odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		for (int step = 0; step < 2; step++) {
			double coefficient = step ? odd : even;
			d = 1 + coefficient * d;
			c = 1 + coefficient / c;
			if (fabs(d) < tiny)
				d = tiny;
			if (fabs(c) < tiny)
				c = tiny;
			d = 1 / d;
			result *= c * d;
			if (step && fabs(c * d - 1) < epsilon)
				return result;
		}
	}
	return result;
}

double incomplete_beta(double x, double a, double b)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	/* x^a (1-x)^b / (a B(a, b)), in logarithms: the Gamma functions overflow early */
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_continued_fraction(x, a, b) / a;
	return 1 - front * beta_continued_fraction(1 - x, b, a) / b;
}

double student_t_two_sided(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return 1;
	if (isinf(t))
		return 0;
	/* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
	return incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

/* The sample variance (n - 1 in the denominator), n >= 2. */
static double sample_variance(const double *v, size_t n, double mean)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (v[i] - mean) * (v[i] - mean);
	return sum / (double)(n - 1);
}

double welch_p_value(const double *x, size_t nx, const double *y, size_t ny)
{
	if (nx < 2 || ny < 2)
		return 1;
	double mx = stat_mean(x, nx), my = stat_mean(y, ny);
	double vx = sample_variance(x, nx, mx) / (double)nx, vy = sample_variance(y, ny, my) / (double)ny;
	double spread = vx + vy;
	/* rounding leaves a spread of a few ulps on constant values: below that, no spread */
	double scale = fmax(fabs(mx), fabs(my));
	if (spread <= 1e-24 * scale * scale || spread == 0)
		return fabs(my - mx) <= 1e-9 * scale ? 1 : 0;
	double t = (my - mx) / sqrt(spread);
	double df = spread * spread / (vx * vx / (double)(nx - 1) + vy * vy / (double)(ny - 1));
	return student_t_two_sided(t, df);
}

double ratio_welch_p_value(const double *x, size_t nx, const double *y, size_t ny)
{
	for (size_t i = 0; i < nx; i++)
		if (!(x[i] > 0))
			return welch_p_value(x, nx, y, ny);
	for (size_t i = 0; i < ny; i++)
		if (!(y[i] > 0))
			return welch_p_value(x, nx, y, ny);
	double *lx = xmalloc((nx + ny + 1) * sizeof(*lx)), *ly = lx + nx;
	for (size_t i = 0; i < nx; i++)
		lx[i] = log(x[i]);
	for (size_t i = 0; i < ny; i++)
		ly[i] = log(y[i]);
	double p = welch_p_value(lx, nx, ly, ny);
	free(lx);
	return p;
}

static const double *bh_p; /* the p-values the ranks are sorted by (qsort has no context) */

static int compare_p_ranks(const void *a, const void *b)
{
	double x = bh_p[*(const size_t *)a], y = bh_p[*(const size_t *)b];
	if (x != y)
		return x < y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

void benjamini_hochberg(const double *p, size_t n, double *q)
{
	if (!n)
		return;
	size_t *order = xmalloc(n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	bh_p = p;
	sort_items(order, n, sizeof(*order), compare_p_ranks);
	double running = 1;
	for (size_t rank = n; rank > 0; rank--) {
		size_t i = order[rank - 1];
		double adjusted = p[i] * (double)n / (double)rank;
		if (adjusted < running)
			running = adjusted;
		q[i] = running;
	}
	free(order);
}
