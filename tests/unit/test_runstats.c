/*
 * test_runstats.c: LKP's comparison rules and number formats (runstats.h)
 * on hand-made values: the medians' overlap test, the 1% / 5% thresholds,
 * the HITM floor, fewer than 3 runs, equal medians, a zero base, exact
 * counts that did not move; and the seed reports' lines reproduced from
 * values that give their figures.
 */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/runstats.h"

static struct run_summary summary(const double *v, size_t n)
{
	struct run_summary s;
	run_summarize(v, n, &s);
	return s;
}

#define SUMMARY(...) summary((const double[]){ __VA_ARGS__ }, sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double))

Test(runstats, summary_median_is_lkps_upper_middle)
{
	struct run_summary s = SUMMARY(5, 1, 3, 2);
	cr_assert_eq(s.runs, 4);
	cr_assert_eq(s.min, 1);
	cr_assert_eq(s.max, 5);
	cr_assert_eq(s.median, 3, "LKP's median is sorted[n / 2]: [1 2 3 5] -> 3");
	cr_assert_float_eq(s.mean, 11.0 / 4, 1e-12);
	struct run_summary empty;
	run_summarize(NULL, 0, &empty);
	cr_assert_eq(empty.runs, 0);
	cr_assert_eq(empty.mean, 0);
}

Test(runstats, clear_change_is_significant)
{
	struct run_summary base = SUMMARY(100, 101, 99), up = SUMMARY(120, 121, 119);
	cr_assert_eq(lkp_verdict("signal.SIGUSR1.handler_us.p50", false, &base, &up), CHANGE_SIGNIFICANT);
	cr_assert_eq(lkp_verdict("signal.SIGUSR1.handler_us.p50", false, &up, &base), CHANGE_SIGNIFICANT,
		     "the mirror (a decrease) too");
}

Test(runstats, overlapping_ranges_are_noise)
{
	/* new's min (100) is not above base's median (100) */
	struct run_summary base = SUMMARY(90, 100, 110), new_side = SUMMARY(100, 150, 160);
	cr_assert_eq(lkp_verdict("futex.op.WAIT.wait_ns.total", false, &base, &new_side), CHANGE_OVERLAP);
	/* median(new) 105 is not above max(base) 110, though min(new) 101 > median(base) 100 */
	struct run_summary b2 = SUMMARY(90, 100, 110), n2 = SUMMARY(101, 105, 200);
	cr_assert_eq(lkp_verdict("x.y", false, &b2, &n2), CHANGE_OVERLAP);
}

Test(runstats, equal_medians_are_never_significant)
{
	struct run_summary base = SUMMARY(10, 20, 30), new_side = SUMMARY(5, 20, 40);
	cr_assert_eq(lkp_verdict("perf-stat.ps.cycles", false, &base, &new_side), CHANGE_OVERLAP);
}

Test(runstats, thresholds_perf_metrics_one_percent_others_five)
{
	/* apart, medians 1000 -> 1030: a 3% change */
	struct run_summary base = SUMMARY(999, 1000, 1001), new_side = SUMMARY(1029, 1030, 1031);
	cr_assert_eq(lkp_verdict("perf-stat.ps.instructions", false, &base, &new_side), CHANGE_SIGNIFICANT);
	cr_assert_eq(lkp_verdict("perf-profile.self.cycles-pp.foo", false, &base, &new_side), CHANGE_SIGNIFICANT);
	cr_assert_eq(lkp_verdict("signal.SIGUSR1.latency_us.p50", false, &base, &new_side), CHANGE_BELOW_THRESHOLD);
	/* 1000 -> 1008: apart but under 1% even for a perf metric */
	struct run_summary small = SUMMARY(1007.9, 1008, 1008.1);
	cr_assert_eq(lkp_verdict("perf-stat.ps.instructions", false, &base, &small), CHANGE_BELOW_THRESHOLD);
	/* 1000 -> 1060: above 5% */
	struct run_summary big = SUMMARY(1059, 1060, 1061);
	cr_assert_eq(lkp_verdict("signal.SIGUSR1.latency_us.p50", false, &base, &big), CHANGE_SIGNIFICANT);
}

Test(runstats, fewer_than_three_runs_untested)
{
	struct run_summary two = SUMMARY(100, 101), three = SUMMARY(500, 501, 502);
	cr_assert_eq(lkp_verdict("a.b", false, &two, &three), CHANGE_UNTESTED);
	cr_assert_eq(lkp_verdict("a.b", false, &three, &two), CHANGE_UNTESTED);
	struct run_summary one = SUMMARY(1), other = SUMMARY(2);
	cr_assert_eq(lkp_verdict("a.b", false, &one, &other), CHANGE_UNTESTED);
}

Test(runstats, exact_counts_that_did_not_differ)
{
	struct run_summary a = SUMMARY(20000, 20000, 20000), b = SUMMARY(20000, 20000, 20000);
	cr_assert_eq(lkp_verdict("signal.SIGUSR1.generated", true, &a, &b), CHANGE_EQUAL_EXACT);
	struct run_summary one = SUMMARY(7), other = SUMMARY(7);
	cr_assert_eq(lkp_verdict("futex.op.WAKE.calls", true, &one, &other), CHANGE_EQUAL_EXACT,
		     "even with one run a side: nothing to test");
	/* an exact count that doubled is significant */
	struct run_summary twice = SUMMARY(40000, 40000, 40000);
	cr_assert_eq(lkp_verdict("signal.SIGUSR1.generated", true, &a, &twice), CHANGE_SIGNIFICANT);
}

Test(runstats, zero_base)
{
	struct run_summary zero = SUMMARY(0, 0, 0), some = SUMMARY(10, 11, 12);
	cr_assert_eq(lkp_verdict("futex.word.gate.calls", false, &zero, &some), CHANGE_SIGNIFICANT,
		     "a zero median caps the ratio at LKP's 5");
	bool defined = true;
	double change = lkp_change("futex.word.gate.calls", "count", 0, 11, &defined);
	cr_assert_not(defined);
	cr_assert_gt(change, 1e100, "LKP divides by 1e-100: +1.1e+103%%");
	struct strbuf sb = { 0 };
	lkp_format_change(&sb, change, false);
	cr_assert_str_eq(sb.buf, "+1.1e+103%");
	sb_free(&sb);
	cr_assert_eq(lkp_change("a.b", NULL, 0, 0, &defined), 0);
	cr_assert(defined);
	cr_assert_eq(lkp_verdict("a.b", false, &zero, &zero), CHANGE_OVERLAP);
}

Test(runstats, hitm_total_floor)
{
	/* 1000 -> 2000: a 100% change, but under LKP's 3000 floor */
	struct run_summary base = SUMMARY(990, 1000, 1010), new_side = SUMMARY(1990, 2000, 2010);
	cr_assert_eq(lkp_verdict("perf-c2c.HITM.total", false, &base, &new_side), CHANGE_BELOW_FLOOR);
	cr_assert_eq(lkp_verdict("perf-c2c.HITM.local", false, &base, &new_side), CHANGE_SIGNIFICANT,
		     "the floor is HITM.total's only");
	/* above 3000 but the medians only 1000 apart */
	struct run_summary b2 = SUMMARY(2990, 3000, 3010), n2 = SUMMARY(3990, 4000, 4010);
	cr_assert_eq(lkp_verdict("perf-c2c.HITM.total", false, &b2, &n2), CHANGE_BELOW_FLOOR);
	struct run_summary n3 = SUMMARY(4590, 4600, 4610);
	cr_assert_eq(lkp_verdict("perf-c2c.HITM.total", false, &b2, &n3), CHANGE_SIGNIFICANT);
}

Test(runstats, missing_side)
{
	struct run_summary none = { 0 }, some = SUMMARY(1, 2, 3);
	cr_assert_eq(lkp_verdict("a.b", false, &none, &some), CHANGE_MISSING);
	cr_assert_eq(lkp_verdict("a.b", false, &some, &none), CHANGE_MISSING);
}

Test(runstats, change_relative_and_absolute)
{
	cr_assert_float_eq(lkp_change("perf-c2c.HITM.local", "samples", 67558, 112351, NULL), 100.0 * (112351 - 67558) / 67558,
			   1e-9);
	cr_assert_float_eq(lkp_change("perf-profile.self.cycles-pp.foo", "percent", 12.5, 10.0, NULL), -2.5, 1e-12,
			   "perf-profile shares change by their difference");
	cr_assert_float_eq(lkp_change("perf-stat.overall.cache-miss%", NULL, 30, 35, NULL), 5, 1e-12, "a key ending in %%");
	cr_assert_float_eq(lkp_change("paths.sched.sigreturn.wait_ms", "ms", 30, 36, NULL), 20, 1e-12);
	/* figures in percent change by their difference, but LKP's time.percent_of_cpu_this_job_got relatively */
	cr_assert_float_eq(lkp_change("perf-stat.overall.cache-miss-rate", "%", 20, 31, NULL), 11, 1e-12, "a %% unit");
	cr_assert_float_eq(lkp_change("paths.cpu.sigreturn", "percent", 20, 31, NULL), 11, 1e-12);
	cr_assert_float_eq(lkp_change("time.percent_of_cpu_this_job_got", "percent", 91, 83, NULL), 100.0 * -8 / 91, 1e-9,
			   "LKP: 91.00 -8.8%% 83.00 fsmark.time.percent_of_cpu_this_job_got");
	cr_assert(lkp_absolute_change("perf-stat.overall.cache-miss-rate", "%"));
	cr_assert_not(lkp_absolute_change("time.percent_of_cpu_this_job_got", "percent"));
	cr_assert_not(lkp_absolute_change("perf-stat.overall.IPC", "ratio"));
	cr_assert(lkp_perf_metric("perf-c2c.DRAM.local"));
	cr_assert_not(lkp_perf_metric("perf-sched.wait_time.avg.ms.x"), "perf-sched is not in LKP's perf metrics");
}

static void expect_value(double v, const char *text)
{
	struct strbuf sb = { 0 };
	lkp_format_value(&sb, v);
	cr_expect_str_eq(sb.buf, text, "%.17g", v);
	sb_free(&sb);
}

Test(runstats, value_formats)
{
	expect_value(1.674e8 + 12345, "1.674e+08");
	expect_value(0.36, "0.36");
	expect_value(115.833333, "115.83");
	expect_value(999.994, "999.99");
	expect_value(3127.9, "3127"); /* the integer part, as Ruby's %d of a Float */
	expect_value(100000000, "100000000");
	expect_value(100000001, "1e+08");
	expect_value(-4.5, "-4.50");
}

Test(runstats, stddev_and_change_formats)
{
	struct strbuf sb = { 0 };
	lkp_format_stddev(&sb, 20.7);
	cr_assert_str_eq(sb.buf, " \u00b1 20%");
	sb_reset(&sb);
	lkp_format_stddev(&sb, 2.0);
	cr_assert_str_eq(sb.buf, "      ", "2%% and below: blank");
	sb_reset(&sb);
	lkp_format_stddev(&sb, 343.2);
	cr_assert_str_eq(sb.buf, " \u00b1343%");
	sb_reset(&sb);
	lkp_format_change(&sb, 66.3, false);
	cr_assert_str_eq(sb.buf, "+66.3%");
	sb_reset(&sb);
	lkp_format_change(&sb, -1.04, false);
	cr_assert_str_eq(sb.buf, "-1.0%");
	sb_reset(&sb);
	lkp_format_change(&sb, 250000, false);
	cr_assert_str_eq(sb.buf, "+2.5e+05%");
	sb_reset(&sb);
	lkp_format_change(&sb, -2.5, true);
	cr_assert_str_eq(sb.buf, "-2.5");
	sb_free(&sb);
}

/* Runs whose mean and %stddev are the given ones: mean * (1 - k), mean, mean * (1 + k) has %stddev k * sqrt(2/3). */
static struct run_summary runs_for(double mean, double stddev_percent)
{
	double k = stddev_percent / 100 / sqrt(2.0 / 3.0);
	return SUMMARY(mean * (1 - k), mean, mean * (1 + k));
}

static void expect_line(struct run_summary base, struct run_summary new_side, const char *key, const char *line)
{
	struct lkp_widths w = { LKP_VALUE_WIDTH, LKP_CHANGE_WIDTH };
	struct strbuf sb = { 0 };
	bool absolute = lkp_absolute_change(key, NULL);
	lkp_format_line(&sb, &w, &base, &new_side, lkp_change(key, NULL, base.mean, new_side.mean, NULL), absolute, true,
			key);
	cr_expect_str_eq(sb.buf, line);
	sb_free(&sb);
}

Test(runstats, seed_lines_reproduced)
{
	/* lines of ../shared/seeds/002 (perf-bench-futex), from runs that give their means and %stddev */
	expect_line(runs_for(67558, 56.5), runs_for(112351, 0), "perf-c2c.HITM.local",
		    "     67558 \u00b1 56%     +66.3%     112351        perf-c2c.HITM.local\n");
	expect_line(runs_for(1.6738e8, 20.2), runs_for(1.9912e8, 1), "perf-stat.i.cache-misses",
		    " 1.674e+08 \u00b1 20%     +19.0%  1.991e+08        perf-stat.i.cache-misses\n");
	expect_line(runs_for(115.83, 12.1), runs_for(162.33, 18.4),
		    "perf-sched.wait_and_delay.count.irqentry_exit_to_user_mode",
		    "    115.83 \u00b1 12%     +40.1%     162.33 \u00b1 18%  "
		    "perf-sched.wait_and_delay.count.irqentry_exit_to_user_mode\n");
	expect_line(runs_for(2249734.4, 0.5), runs_for(2291792.4, 0.4), "perf-bench-futex.ops/s",
		    "   2249734            +1.9%    2291792        perf-bench-futex.ops/s\n");
	expect_line(runs_for(3127, 1), runs_for(3070.5, 1), "perf-stat.overall.cycles-between-cache-misses",
		    "      3127            -1.8%       3070        perf-stat.overall.cycles-between-cache-misses\n");
}

Test(runstats, header_is_the_robots)
{
	struct lkp_widths w = { LKP_VALUE_WIDTH, LKP_CHANGE_WIDTH };
	struct strbuf sb = { 0 };
	lkp_format_header(&sb, &w);
	cr_assert_str_eq(sb.buf, "         %stddev     %change         %stddev\n"
				 "             \\          |                \\\n");
	sb_free(&sb);
}

Test(runstats, whole_percent_has_no_negative_zero)
{
	static const struct { double v; const char *text; } cases[] = {
		{ -0.3, "0%" }, { 0.4, "0%" }, { -0.0, "0%" }, { 57.6, "58%" }, { -4.2, "-4%" }, { -0.6, "-1%" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = { 0 };
		format_whole_percent(&sb, cases[i].v);
		cr_expect_str_eq(sb.buf, cases[i].text, "%g", cases[i].v);
		sb_free(&sb);
	}
}

/*
 * Welch's t-test and Benjamini-Hochberg against values computed apart from
 * our code: closed forms of Student's t for 1 and 2 degrees of freedom, and
 * for the rest python3 with nothing but its math module, integrating the
 * density by Simpson's rule (200000 steps):
 *
 *   pdf = lambda x, df: exp(lgamma((df+1)/2) - lgamma(df/2)) / sqrt(df*pi) * (1 + x*x/df) ** (-(df+1)/2)
 *   two_sided(t, df) = 1 - 2 * integral of pdf from 0 to t
 *   welch(x, y): vx = sample variance of x / len(x), ...; t = (my - mx) / sqrt(vx + vy),
 *                df = (vx + vy)**2 / (vx*vx / (len(x)-1) + vy*vy / (len(y)-1))
 *
 *   two_sided(2.0, 10) = 0.07338803477      two_sided(3.5, 7.3) = 0.009343138528
 *   welch([1,2,3], [4,5,6])           t = 3.6742, df = 4.0,    p = 0.02131164113
 *   welch([10,11,12,13], [14,20,26])  t = 2.4122, df = 2.1396, p = 0.1291315650
 *   welch([2.19,2.21,2.17], [3.74,3.70,3.79])  t = 54.54, df = 2.758, p = 2.88988874e-05
 */
Test(runstats, student_t_closed_forms_and_table)
{
	/* df = 1 (Cauchy): P(|T| > t) = 1 - 2 atan(t) / pi; df = 2: 1 - t / sqrt(2 + t^2) */
	for (double t = 0.25; t < 20; t *= 1.7) {
		cr_assert_float_eq(student_t_two_sided(t, 1), 1 - 2 * atan(t) / M_PI, 1e-12, "df 1, t %g", t);
		cr_assert_float_eq(student_t_two_sided(t, 2), 1 - t / sqrt(2 + t * t), 1e-12, "df 2, t %g", t);
	}
	cr_assert_float_eq(student_t_two_sided(2.0, 10), 0.07338803477, 1e-9);
	cr_assert_float_eq(student_t_two_sided(-2.0, 10), 0.07338803477, 1e-9);
	cr_assert_float_eq(student_t_two_sided(3.5, 7.3), 0.009343138528, 1e-9);
	cr_assert_float_eq(student_t_two_sided(0, 5), 1.0, 1e-12);
	cr_assert_eq(student_t_two_sided(INFINITY, 5), 0.0);
}

Test(runstats, incomplete_beta_identities)
{
	for (double x = 0.05; x < 1; x += 0.1) {
		cr_assert_float_eq(incomplete_beta(x, 1, 1), x, 1e-12);
		cr_assert_float_eq(incomplete_beta(x, 3, 1), x * x * x, 1e-12);
		/* symmetry: I_x(a, b) = 1 - I_{1-x}(b, a) */
		cr_assert_float_eq(incomplete_beta(x, 2.5, 0.5), 1 - incomplete_beta(1 - x, 0.5, 2.5), 1e-12);
	}
	cr_assert_float_eq(incomplete_beta(0.5, 7, 7), 0.5, 1e-12);
	cr_assert_eq(incomplete_beta(0, 2, 3), 0.0);
	cr_assert_eq(incomplete_beta(1, 2, 3), 1.0);
}

Test(runstats, welch_against_independent_values)
{
	double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	cr_assert_float_eq(welch_p_value(a, 3, b, 3), 0.02131164113, 1e-9);
	cr_assert_float_eq(welch_p_value(b, 3, a, 3), 0.02131164113, 1e-9);
	double c[] = { 10, 11, 12, 13 }, d[] = { 14, 20, 26 };
	cr_assert_float_eq(welch_p_value(c, 4, d, 3), 0.1291315650, 1e-9);
	double e[] = { 2.19, 2.21, 2.17 }, f[] = { 3.74, 3.70, 3.79 };
	cr_assert_float_eq(welch_p_value(e, 3, f, 3), 2.88988874e-05, 1e-12);
}

/* References from mpmath's regularized incomplete beta (Python), the same Welch test of the logarithms. */
Test(runstats, welch_of_a_ratio)
{
	/* the seed-002 miniature's bucket lock contentions, 3 runs a side */
	double base[] = { 10, 9, 8 }, changed[] = { 2384, 2187, 2069 };
	cr_assert_float_eq(welch_p_value(base, 3, changed, 3), 0.00173224888165, 1e-12);
	cr_assert_float_eq(ratio_welch_p_value(base, 3, changed, 3), 1.54920545521e-06, 1e-15);
	double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	cr_assert_float_eq(ratio_welch_p_value(a, 3, b, 3), 0.0755973528171, 1e-12);
	/* a value of 0 (or below) has no logarithm: the values are tested */
	double zero[] = { 0, 2, 3 };
	cr_assert_eq(ratio_welch_p_value(zero, 3, b, 3), welch_p_value(zero, 3, b, 3));
	cr_assert_eq(ratio_welch_p_value(b, 3, zero, 3), welch_p_value(b, 3, zero, 3));
	/* constant sides: a deterministic count that moved, or did not */
	double thousand[] = { 1000, 1000, 1000 }, two_thousand[] = { 2000, 2000, 2000 };
	cr_assert_eq(ratio_welch_p_value(thousand, 3, two_thousand, 3), 0.0);
	cr_assert_eq(ratio_welch_p_value(thousand, 3, thousand, 3), 1.0);
}

Test(runstats, welch_without_spread)
{
	/* a deterministic count: 1000 calls every run against 2000 every run moved for sure; 2000 against 2000 did not */
	double thousand[] = { 1000, 1000, 1000 }, two_thousand[] = { 2000, 2000, 2000 };
	cr_assert_eq(welch_p_value(thousand, 3, two_thousand, 3), 0.0);
	cr_assert_eq(welch_p_value(two_thousand, 3, two_thousand, 3), 1.0);
	/* 0.1 summed three ways: a spread of rounding only is no spread */
	double tenth[] = { 0.1 + 0.2, 0.3, 0.3 }, also[] = { 0.3, 0.3, 0.3 };
	cr_assert_eq(welch_p_value(tenth, 3, also, 3), 1.0);
	/* too few values for a variance: no evidence */
	cr_assert_eq(welch_p_value(thousand, 1, two_thousand, 3), 1.0);
}

Test(runstats, benjamini_hochberg_step_up)
{
	/*
	 * By hand: sorted p 0.005 0.01 0.03 0.04 (ranks 1..4, n = 4) give
	 * p * 4 / rank = 0.02 0.02 0.04 0.04, then the running minimum from the
	 * largest rank down (the step-up: p2's 0.019 at rank 1 gets rank 2's 0.03).
	 */
	double p[] = { 0.01, 0.04, 0.03, 0.005 }, q[4];
	benjamini_hochberg(p, 4, q);
	double expected[] = { 0.02, 0.04, 0.04, 0.02 };
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(q[i], expected[i], 1e-12, "q[%d] = %g", i, q[i]);
	/* a large p early keeps the later smaller ones from rising: 0.9 * 3 / 3 is capped by nothing, 0.02 * 3 / 2 */
	double p2[] = { 0.9, 0.02, 0.019 }, q2[3];
	benjamini_hochberg(p2, 3, q2);
	cr_assert_float_eq(q2[0], 0.9, 1e-12);
	cr_assert_float_eq(q2[1], 0.03, 1e-12);
	cr_assert_float_eq(q2[2], 0.03, 1e-12);
	/* never above 1 */
	double p3[] = { 0.8, 0.9 }, q3[2];
	benjamini_hochberg(p3, 2, q3);
	cr_assert(q3[0] <= 1 && q3[1] <= 1);
	cr_assert_float_eq(q3[0], 0.9, 1e-12);
}

Test(runstats, not_confirmed_has_a_name)
{
	cr_assert_str_eq(change_verdict_name(CHANGE_NOT_CONFIRMED), "not-confirmed");
}
