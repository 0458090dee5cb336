/*
 * test_c2c.c: the c2c collector on this machine.  Our VMs have no PMU that
 * samples memory accesses (no mem-loads alias in sysfs, no ibs_op): a
 * default recording must note c2c as unavailable, with the reason, and
 * record everything else.  On a machine that has one, the collector must
 * open or say why it did not; either way the recording succeeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* Whether sysfs shows a PMU the c2c collector asks for (docs/c2c.md). */
static bool machine_samples_memory(void)
{
	static const char *const paths[] = {
		"/sys/bus/event_source/devices/cpu/events/mem-loads",
		"/sys/bus/event_source/devices/cpu_core/events/mem-loads",
		"/sys/bus/event_source/devices/cpu_atom/events/mem-loads",
		"/sys/bus/event_source/devices/ibs_op/type",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], F_OK) == 0)
			return true;
	return false;
}

Test(c2c, default_recording_notes_c2c_and_succeeds)
{
	require_perf_events();
	const char *data = test_path("c2c.data");
	char *out;
	int st = run_cmd(&out, true, "%s record -o %s -- " W "cpu_burner 200", sigprof_bin(), data);
	cr_assert_eq(st, 0, "record exited %d:\n%s", st, out);
	const char *json = report_json_file(data, "");
	cr_assert_eq(jq_file(json, "[.meta.collectors[] | select(.name==\"c2c\")] | length"), 1,
		     "the c2c collector is not listed");
	cr_assert_gt(jq_file(json, ".meta.collectors[] | select(.name==\"cpu\") | .samples"), 0,
		     "the rest of the recording is missing");
	char *text;
	run_cmd(&text, false, "%s report --header -i %s", sigprof_bin(), data);
	if (!machine_samples_memory()) {
		/* the closing line names it and points to the reasons; the report header gives them */
		cr_expect(strstr(out, "unavailable: ") && strstr(out, "c2c") && strstr(out, "(why: sigprof list)"),
			  "the closing line does not name c2c as missing:\n%s", out);
		cr_expect_eq(jq_file(json, "[.meta.collectors[] | select(.name==\"c2c\" and .status==\"unavailable\" "
					   "and (.reason | test(\"mem-loads\")))] | length"),
			     1, "c2c is not noted unavailable with its reason");
		cr_expect(strstr(text, "c2c      unavailable: no PMU samples memory accesses here"),
			  "the text report does not note c2c:\n%s", text);
		cr_expect_null(strstr(text, "Cachelines ("), "an unavailable collector has no section");
		cr_expect_eq(jq_file(json, "[.paths[] | .c2c_hitm_total] | add"), 0);
	} else {
		fprintf(stderr, "note: this machine samples memory accesses; c2c status: %s\n",
			strstr(text, "c2c      unavailable") ? "unavailable (reason in the report)" : "opened");
		cr_expect(strstr(text, "c2c      "), "the text report does not list c2c:\n%s", text);
	}
	free(text);
	free(out);
}
