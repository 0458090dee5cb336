/*
 * test_findings.c: the findings list (profiler/view/findings.c) and the
 * report's first screen that ranks them (profiler/commands/report_summary.c),
 * on profiles built in memory: a cpu collector with samples per path and
 * collectors whose analyzers are test doubles with a findings hook.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/term.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/report.h"
#include "sigprof/model/collector.h"
#include "sigprof/model/profile.h"
#include "sigprof/view/findings.h"

Test(findings, counts_and_durations_read_as_people_read_them)
{
	char buf[32];
	cr_assert_str_eq(findings_count(847, buf, sizeof(buf)), "847");
	cr_assert_str_eq(findings_count(8860, buf, sizeof(buf)), "8 860");
	cr_assert_str_eq(findings_count(99331, buf, sizeof(buf)), "99 331");
	cr_assert_str_eq(findings_count(100005, buf, sizeof(buf)), "100 005");
	cr_assert_str_eq(findings_count(5100000, buf, sizeof(buf)), "5.1 M");
	cr_assert_str_eq(findings_duration(37000, buf, sizeof(buf)), "37 µs");
	cr_assert_str_eq(findings_duration(7500, buf, sizeof(buf)), "7.5 µs");
	cr_assert_str_eq(findings_duration(44000000, buf, sizeof(buf)), "44 ms");
	cr_assert_str_eq(findings_duration(7766000, buf, sizeof(buf)), "7.8 ms");
	cr_assert_str_eq(findings_duration(2300000000ull, buf, sizeof(buf)), "2.3 s");
	cr_assert_str_eq(findings_duration(12, buf, sizeof(buf)), "12 ns");
}

Test(findings, sorted_by_share_unknown_last_and_caveats_once)
{
	struct findings f = { 0 };
	findings_add(&f, 0, FINDING_SHARE_UNKNOWN, "x", "unknown %d", 1);
	findings_add(&f, 0, 0.2, "y", "small");
	findings_add(&f, 0, 0.7, "z", "large");
	findings_add(&f, 0, 0.2, "w", "small too");
	findings_caveat(&f, "stacks %s", "cut");
	findings_caveat(&f, "stacks cut");
	findings_sort(&f);
	cr_assert_eq(f.count, 4);
	cr_assert_str_eq(f.items[0].text, "large");
	cr_assert_str_eq(f.items[1].text, "small", "equal shares keep their order");
	cr_assert_str_eq(f.items[2].text, "small too");
	cr_assert_str_eq(f.items[3].text, "unknown 1");
	cr_assert_str_eq(f.items[3].next, "x");
	cr_assert_eq(f.ncaveats, 1, "a caveat is said once");
	findings_free(&f);
	cr_assert_eq(f.count, 0);
}

/* ---- the summary: ranking by the cpu share of a finding's paths ---- */

static void futexish_findings(void *state, const struct profile *p, struct findings *out)
{
	findings_add(out, FINDING_PATH(PATH_FUTEX_WAIT), 1, "Futex operations", "futex: many calls");
	findings_caveat(out, "futex figures are estimated");
}

static void signalish_findings(void *state, const struct profile *p, struct findings *out)
{
	/* two signals share the signal paths 3:1 */
	findings_add(out, FINDING_PATH(PATH_SIGNAL_DELIVER) | FINDING_PATH(PATH_SIGRETURN), 0.75, "Signals", "signals: A");
	findings_add(out, FINDING_PATH(PATH_SIGNAL_DELIVER) | FINDING_PATH(PATH_SIGRETURN), 0.25, "Signals", "signals: B");
}

static const struct collector_analyzer futexish_analyzer = { .findings = futexish_findings };
static const struct collector_analyzer signalish_analyzer = { .findings = signalish_findings };
static const struct collector futexish = { .name = "futexish", .analyzer = &futexish_analyzer };
static const struct collector signalish = { .name = "signalish", .analyzer = &signalish_analyzer };

static int state_token;

/*
 * cpu: 100 samples, 40 of them the recorder's, so the workload's are 60:
 * futex-wait 12 (20%), signal-deliver 24 + sigreturn 6 (50%), other 18.
 */
static struct profile *summary_profile(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	p->ncollectors = 3;
	snprintf(p->collectors[0].name, sizeof(p->collectors[0].name), "cpu");
	p->collectors[0].ok = true;
	p->collectors[0].samples = 100;
	p->collectors[0].path_samples[PATH_RECORDER] = 40;
	p->collectors[0].path_samples[PATH_FUTEX_WAIT] = 12;
	p->collectors[0].path_samples[PATH_SIGNAL_DELIVER] = 24;
	p->collectors[0].path_samples[PATH_SIGRETURN] = 6;
	p->collectors[0].path_samples[PATH_OTHER] = 18;
	const struct collector *impls[] = { &futexish, &signalish };
	for (int c = 1; c < 3; c++) {
		snprintf(p->collectors[c].name, sizeof(p->collectors[c].name), "%s", impls[c - 1]->name);
		p->collectors[c].ok = true;
		p->collectors[c].impl = impls[c - 1];
		p->collectors[c].state = &state_token;
	}
	return p;
}

Test(findings, summary_ranks_by_the_workloads_cpu_on_the_paths)
{
	struct profile *p = summary_profile();
	struct report_summary sum;
	report_summary_collect(p, &sum);
	cr_assert_eq(sum.findings.count, 3);
	cr_assert_str_eq(sum.findings.items[0].text, "signals: A");
	cr_assert_float_eq(sum.findings.items[0].share, 0.5 * 0.75, 1e-9, "the signal paths' 50%%, three quarters of it");
	cr_assert_str_eq(sum.findings.items[1].text, "futex: many calls");
	cr_assert_float_eq(sum.findings.items[1].share, 0.2, 1e-9, "12 of the workload's 60, the recorder's left out");
	cr_assert_str_eq(sum.findings.items[2].text, "signals: B");
	cr_assert_float_eq(sum.findings.items[2].share, 0.125, 1e-9);
	cr_assert_eq(sum.findings.ncaveats, 1);
	/* the sections follow the ranks: signal's first, then futex's, the cpu (no finding) last */
	cr_assert_gt(sum.section_rank[2], sum.section_rank[1]);
	cr_assert_gt(sum.section_rank[1], sum.section_rank[0]);
	report_summary_free(&sum);
	free(p);
}

Test(findings, first_screen_fits_and_warns_of_the_recorder)
{
	struct profile *p = summary_profile();
	p->file = "test.data";
	snprintf(p->hostname, sizeof(p->hostname), "host");
	snprintf(p->kernel, sizeof(p->kernel), "6.18.44-local");
	p->ncpus = 2;
	struct report_summary sum;
	report_summary_collect(p, &sum);
	struct report_options o = { .view = { .width = 80 } };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	report_summary_text(p, &sum, &o, out);
	fclose(out);
	int rows = 0;
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		cr_assert_not_null(end);
		char row[512];
		snprintf(row, sizeof(row), "%.*s", (int)(end - line), line);
		cr_assert_leq(term_columns(row), 80, "a row wider than 80: %s", row);
		rows++;
		line = end + 1;
	}
	cr_assert_leq(rows, 23, "%d rows:\n%s", rows, text);
	cr_assert_not_null(strstr(text, "holds 40% of the cpu samples"), "%s", text);
	cr_assert_not_null(strstr(text, "! that distorts the figures; record less: -e "), "%s", text);
	cr_assert_not_null(strstr(text, "Linux 6.18.44)"), "the kernel without its local suffix: %s", text);
	cr_assert_not_null(strstr(text, "  38%  signals: A -> Signals"), "%s", text);
	cr_assert_not_null(strstr(text, "  20%  futex: many calls -> Futex operations"), "%s", text);
	cr_assert_not_null(strstr(text, "  - futex figures are estimated"), "%s", text);
	free(text);
	report_summary_free(&sum);
	free(p);
}
