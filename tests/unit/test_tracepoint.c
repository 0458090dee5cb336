/*
 * test_tracepoint.c: the report side of collectors/kernel/tracepoint.c, the
 * TRACEPOINT records of docs/data-format.md parsed with libtraceevent and
 * fields read from a sample's raw data.
 *
 * The records are laid out by hand per the specification.  A format text
 * comes from a file that may be damaged: whatever it holds, adding it is 0
 * or -EINVAL and reading a field is a value or false, never a crash (run
 * under ASan+UBSan by make asan-test).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/kernel/format.h"
#include "sigprof/kernel/sample.h"
#include "sigprof/kernel/tracepoint.h"
#include "unit_helpers.h"

#define SWITCH_ID 372

/* A sched_switch format as the kernel writes it; prev_state_line is its prev_state field line. */
static const char switch_head[] = "name: sched_switch\n"
				  "ID: 372\n"
				  "format:\n"
				  TRACEPOINT_COMMON_FIELDS
				  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
				  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
				  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n";
static const char prev_state_line[] = "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n";
static const char switch_tail[] =
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_state=%s next_pid=%d\", REC->prev_comm, REC->prev_pid, "
	"(REC->prev_state & 0xff) ? __print_flags(REC->prev_state & 0xff, \"|\", { 0x01, \"S\" }, { 0x02, \"D\" }) "
	": \"R\", REC->next_pid\n";

/* A TRACEPOINT record of the given format text, laid out per the specification; free with bb_free(). */
static struct byte_builder tracepoint_record(uint64_t id, const char *system, const char *text, size_t len)
{
	struct byte_builder b = { 0 };
	size_t at = bb_begin_record(&b, SP_REC_TRACEPOINT, 0);
	bb_u64(&b, id);
	char sys[32] = { 0 };
	snprintf(sys, sizeof(sys), "%s", system);
	bb_bytes(&b, sys, sizeof(sys));
	bb_u32(&b, (uint32_t)len);
	bb_u32(&b, 0);
	bb_bytes(&b, text, len);
	bb_pad8(&b);
	bb_end_record(&b, at);
	return b;
}

/* Add text as a sched TRACEPOINT record to set, from an exact-size copy so ASan sees any read past it. */
static int add_format(struct tracepoint_set *set, const char *text, size_t len)
{
	struct byte_builder b = tracepoint_record(SWITCH_ID, "sched", text, len);
	void *rec = exact_copy(b.buf, b.len);
	int ret = tracepoint_set_add(set, rec);
	free(rec);
	bb_free(&b);
	return ret;
}

static char *joined(const char *a, const char *b, const char *c)
{
	char *s = NULL;
	cr_assert_geq(asprintf(&s, "%s%s%s", a, b, c), 0);
	return s;
}

/* The raw data of a sched_switch: prev_pid 11, prev_state 1 (S), next_pid 22. */
static void switch_raw(unsigned char raw[64])
{
	memset(raw, 0, 64);
	uint16_t type = SWITCH_ID;
	int32_t prev_pid = 11, next_pid = 22;
	int64_t prev_state = 1;
	memcpy(raw, &type, 2);
	memcpy(raw + 8, "prev", 4);
	memcpy(raw + 24, &prev_pid, 4);
	memcpy(raw + 32, &prev_state, 8);
	memcpy(raw + 56, &next_pid, 4);
}

static const struct tep_event *switch_event(const struct tracepoint_set *set, struct sp_event *ev,
					    struct sp_sample *s, const unsigned char *raw, uint32_t raw_size)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = SWITCH_ID;
	memset(s, 0, sizeof(*s));
	s->event = ev;
	s->raw = raw;
	s->raw_size = raw_size;
	return tracepoint_of(set, s);
}

Test(tracepoint, fields_of_a_kernel_format)
{
	char *text = joined(switch_head, prev_state_line, switch_tail);
	struct tracepoint_set set = { 0 };
	cr_assert_eq(add_format(&set, text, strlen(text)), 0);
	cr_assert_eq(set.count, 1);
	unsigned char raw[64];
	switch_raw(raw);
	struct sp_event ev;
	struct sp_sample s;
	const struct tep_event *tev = switch_event(&set, &ev, &s, raw, sizeof(raw));
	cr_assert_not_null(tev);
	char name[96];
	cr_assert_str_eq(tracepoint_name(tev, name, sizeof(name)), "sched:sched_switch");
	int64_t v;
	cr_assert(tp_field_i64(tev, &s, "prev_pid", &v));
	cr_assert_eq(v, 11);
	cr_assert(tp_field_i64(tev, &s, "prev_state", &v));
	cr_assert_eq(v, 1);
	cr_assert(tp_field_i64(tev, &s, "next_pid", &v));
	cr_assert_eq(v, 22);
	char comm[16];
	cr_assert(tp_field_str(tev, &s, "prev_comm", comm, sizeof(comm)));
	cr_assert_str_eq(comm, "prev");
	/* raw data shorter than a field: the field is absent, not read past the data */
	tev = switch_event(&set, &ev, &s, raw, 40);
	cr_assert_not(tp_field_i64(tev, &s, "next_pid", &v));
	cr_assert(tp_field_i64(tev, &s, "prev_state", &v));
	tracepoint_set_free(&set);
	free(text);
}

/*
 * The print format is never used: one that names a field the format lacks
 * inside __print_flags() (libtraceevent dereferences NULL for it), or
 * divides by zero, does not keep the fields from being read.
 */
Test(tracepoint, a_print_format_that_libtraceevent_cannot_take_is_not_parsed)
{
	char *text = joined(switch_head, "", switch_tail); /* prev_state's line lost */
	struct tracepoint_set set = { 0 };
	cr_assert_eq(add_format(&set, text, strlen(text)), 0);
	unsigned char raw[64];
	switch_raw(raw);
	struct sp_event ev;
	struct sp_sample s;
	const struct tep_event *tev = switch_event(&set, &ev, &s, raw, sizeof(raw));
	cr_assert_not_null(tev);
	int64_t v;
	cr_assert_not(tp_field_i64(tev, &s, "prev_state", &v));
	cr_assert(tp_field_i64(tev, &s, "next_pid", &v));
	cr_assert_eq(v, 22);
	tracepoint_set_free(&set);
	free(text);

	static const char divides[] = "name: x\nID: 9\nformat:\n"
				      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
				      "\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n\n"
				      "print fmt: \"%d\", REC->v / (1 - 1)\n";
	static const char no_print[] = "name: y\nID: 10\nformat:\n"
				       "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
				       "\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n";
	cr_assert_eq(add_format(&set, divides, strlen(divides)), 0);
	cr_assert_eq(add_format(&set, no_print, strlen(no_print)), 0);
	cr_assert_eq(set.count, 2);
	tracepoint_set_free(&set);
}

/* Bytes no format file holds (libtraceevent's tokenizer gives them no token): the record is corrupt. */
Test(tracepoint, a_format_with_a_byte_that_is_not_text_is_corrupt)
{
	char *text = joined(switch_head, prev_state_line, switch_tail);
	static const char bad[] = { '\0', '\x01', '\x7f', '\xaa', '\xff' };
	char *at = strstr(text, "prev_comm[16]") + strlen("prev_comm[");
	for (size_t i = 0; i < sizeof(bad); i++) {
		*at = bad[i];
		struct tracepoint_set set = { 0 };
		cr_assert_eq(add_format(&set, text, strlen(text) + (bad[i] ? 0 : strlen(at + 1) + 1)), -EINVAL,
			     "byte 0x%02x", (unsigned char)bad[i]);
		cr_assert_eq(set.count, 0);
		tracepoint_set_free(&set);
	}
	free(text);
}

/*
 * A declaration with a character no kernel declaration has (a fuzzer's
 * "uns.init_arraycommon_preempt_count" made libtraceevent leak): corrupt.
 */
Test(tracepoint, a_declaration_no_kernel_writes_is_corrupt)
{
	static const char *const odd[] = { "pid_t prev.pid", "pid_t prev(pid)", "pid_t prev-pid", "pid_t \"p\"",
					   "pid_t prev:pid", "pid_t prev,pid" };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line), "\tfield:%s;\toffset:32;\tsize:8;\tsigned:1;\n", odd[i]);
		char *text = joined(switch_head, line, switch_tail);
		struct tracepoint_set set = { 0 };
		cr_assert_eq(add_format(&set, text, strlen(text)), -EINVAL, "%s", odd[i]);
		cr_assert_eq(set.count, 0);
		tracepoint_set_free(&set);
		free(text);
	}
	/* what kernels write still parses */
	char *text = joined(switch_head, "\tfield:__data_loc char[] prev_state;\toffset:32;\tsize:4;\tsigned:0;\n",
			    switch_tail);
	struct tracepoint_set set = { 0 };
	cr_assert_eq(add_format(&set, text, strlen(text)), 0);
	tracepoint_set_free(&set);
	free(text);
}

/*
 * A format_len past the record, and the text cut at every byte: -EINVAL or
 * a parse, no crash, and no leak (libtraceevent leaks the token it was
 * reading when a line breaks off: such a text must not reach it).
 */
Test(tracepoint, format_lengths_and_cut_texts)
{
	char *text = joined(switch_head, prev_state_line, switch_tail);
	size_t len = strlen(text);
	struct byte_builder b = tracepoint_record(SWITCH_ID, "sched", text, len);
	uint32_t too_long = (uint32_t)(b.len - 56 + 1);
	memcpy(b.buf + 48, &too_long, sizeof(too_long));
	struct tracepoint_set set = { 0 };
	void *rec = exact_copy(b.buf, b.len);
	cr_assert_eq(tracepoint_set_add(&set, rec), -EINVAL);
	free(rec);
	bb_free(&b);
	for (size_t cut = 0; cut <= len; cut++) {
		int ret = add_format(&set, text, cut);
		cr_assert(ret == 0 || ret == -EINVAL, "cut at %zu: %d", cut, ret);
	}
	tracepoint_set_free(&set);
	free(text);
}
