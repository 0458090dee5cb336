/*
 * test_pprof.c: profile.proto as pprof.c writes it, read back through
 * protobuf-c's own unpacker (which walks the same hand-written
 * descriptors by field number: a wrong number, type or offset shows as a
 * wrong value), after gunzipping with zlib as pprof does; and the weight
 * table (weights.c) that the pprof writer and the folded stacks read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <criterion/criterion.h>

#include "sigprof/base/pprof.h"
#include "sigprof/model/weights.h"

/* The gzipped profile the builder writes, inflated and unpacked (free with protobuf_c_message_free_unpacked). */
static struct pprof_profile *round_trip(const struct pprof_builder *b)
{
	char *gz;
	size_t gzlen;
	FILE *f = open_memstream(&gz, &gzlen);
	cr_assert_not_null(f);
	cr_assert_eq(pprof_write_gzip(b, f), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_gt(gzlen, 18);
	cr_assert_eq((unsigned char)gz[0], 0x1f, "not a gzip stream");
	cr_assert_eq((unsigned char)gz[1], 0x8b, "not a gzip stream");
	size_t cap = 1 << 20;
	unsigned char *raw = malloc(cap);
	z_stream z = { .next_in = (unsigned char *)gz, .avail_in = (uInt)gzlen, .next_out = raw, .avail_out = (uInt)cap };
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	size_t len = z.total_out;
	inflateEnd(&z);
	free(gz);
	struct pprof_profile *p = (void *)protobuf_c_message_unpack(&pprof_profile_descriptor, NULL, len, raw);
	free(raw);
	cr_assert_not_null(p, "protobuf-c cannot unpack what we packed");
	return p;
}

static const char *str(const struct pprof_profile *p, int64_t i)
{
	cr_assert(i >= 0 && (size_t)i < p->n_string_table, "string index %lld out of the table", (long long)i);
	return p->string_table[i];
}

Test(pprof, every_message_reads_back_by_field_number)
{
	struct pprof_builder *b = pprof_builder_new();
	pprof_add_sample_type(b, "cpu_samples", "count");
	pprof_add_sample_type(b, "cpu_time", "nanoseconds");
	pprof_set_default_sample_type(b, "cpu_time");
	pprof_set_time(b, 1700000000000000000ll, 250000000);
	pprof_add_comment(b, "sigprof report of x.data");
	uint64_t exe = pprof_mapping(b, "/bin/work", "0123abcd");
	uint64_t kernel = pprof_mapping(b, "[kernel]", NULL);
	cr_assert_eq(pprof_mapping(b, "/bin/work", "0123abcd"), exe, "one mapping per file");
	uint64_t fmain = pprof_function(b, "main", "work.c");
	uint64_t fkill = pprof_function(b, "kill", NULL);
	cr_assert_eq(pprof_function(b, "main", "work.c"), fmain, "one function per name and file");
	uint64_t lmain = pprof_add_location(b, exe, 0x1139, fmain, 42);
	uint64_t lkill = pprof_add_location(b, kernel, 0xffffffff81000000ull, fkill, 0);
	uint64_t stack[] = { lkill, lmain };
	int64_t values[] = { 3, 750000 };
	struct pprof_sample *s = pprof_add_sample(b, stack, 2, values);
	pprof_label_string(b, s, "path", "sigreturn");
	pprof_label_number(b, s, "pid", 4242);

	struct pprof_profile *p = round_trip(b);
	cr_assert_str_eq(str(p, 0), "", "string 0 is the empty string");
	cr_assert_eq(p->n_sample_type, 2);
	cr_assert_str_eq(str(p, p->sample_type[1]->type), "cpu_time");
	cr_assert_str_eq(str(p, p->sample_type[1]->unit), "nanoseconds");
	cr_assert_str_eq(str(p, p->default_sample_type), "cpu_time");
	cr_assert_eq(p->time_nanos, 1700000000000000000ll);
	cr_assert_eq(p->duration_nanos, 250000000);
	cr_assert_eq(p->n_comment, 1);
	cr_assert_str_eq(str(p, p->comment[0]), "sigprof report of x.data");
	cr_assert_eq(p->n_mapping, 2);
	cr_assert_eq(p->mapping[0]->id, exe);
	cr_assert_str_eq(str(p, p->mapping[0]->filename), "/bin/work");
	cr_assert_str_eq(str(p, p->mapping[0]->build_id), "0123abcd");
	cr_assert(p->mapping[0]->has_functions && p->mapping[0]->has_inline_frames);
	cr_assert_eq(p->mapping[1]->build_id, 0, "no build-id: the empty string");
	cr_assert_eq(p->n_function, 2);
	cr_assert_str_eq(str(p, p->function[0]->name), "main");
	cr_assert_str_eq(str(p, p->function[0]->filename), "work.c");
	cr_assert_eq(p->n_location, 2);
	cr_assert_eq(p->location[1]->address, 0xffffffff81000000ull);
	cr_assert_eq(p->location[1]->mapping_id, kernel);
	cr_assert_eq(p->location[0]->n_line, 1);
	cr_assert_eq(p->location[0]->line[0]->function_id, fmain);
	cr_assert_eq(p->location[0]->line[0]->line, 42);
	cr_assert_eq(p->n_sample, 1);
	cr_assert_eq(p->sample[0]->n_location_id, 2);
	cr_assert_eq(p->sample[0]->location_id[0], lkill, "leaf first");
	cr_assert_eq(p->sample[0]->n_value, 2);
	cr_assert_eq(p->sample[0]->value[1], 750000);
	cr_assert_eq(p->sample[0]->n_label, 2);
	cr_assert_str_eq(str(p, p->sample[0]->label[0]->key), "path");
	cr_assert_str_eq(str(p, p->sample[0]->label[0]->str), "sigreturn");
	cr_assert_str_eq(str(p, p->sample[0]->label[1]->key), "pid");
	cr_assert_eq(p->sample[0]->label[1]->num, 4242);
	protobuf_c_message_free_unpacked(&p->base, NULL);
	pprof_builder_free(b);
}

Test(pprof, strings_are_interned_once)
{
	struct pprof_builder *b = pprof_builder_new();
	int64_t a = pprof_string(b, "main");
	cr_assert_eq(pprof_string(b, "main"), a);
	cr_assert_eq(pprof_string(b, NULL), 0);
	cr_assert_eq(pprof_string(b, ""), 0);
	cr_assert_neq(pprof_string(b, "kill"), a);
	cr_assert_eq(pprof_builder_profile(b)->n_string_table, 3);
	pprof_builder_free(b);
}

Test(weights, entries_split_by_thread_and_label_and_add_up_per_kind)
{
	struct weight_table t;
	weight_table_init(&t);
	char comm[] = "work";
	struct weight_key k = { .collector = 1, .stack = 7, .pid = 10, .tid = 11, .comm = comm };
	weight_table_add(&t, &k, WEIGHT_SAMPLES, 1);
	weight_table_add(&t, &k, WEIGHT_SAMPLES, 1);
	comm[0] = 'x'; /* the table keeps its own copy of the name */
	struct weight_key same = { .collector = 1, .stack = 7, .pid = 10, .tid = 11, .comm = "work" };
	weight_table_add(&t, &same, WEIGHT_OWN + 1, 500);
	struct weight_key other_thread = same;
	other_thread.tid = 12;
	weight_table_add(&t, &other_thread, WEIGHT_SAMPLES, 1);
	struct weight_key labelled = same;
	labelled.signal = 10;
	weight_table_add(&t, &labelled, WEIGHT_OWN, 1);
	weight_table_add(&t, &same, WEIGHT_MAX, 99); /* no such kind: ignored */
	cr_assert_eq(t.count, 3);
	cr_assert_str_eq(t.entries[0].key.comm, "work");
	cr_assert_eq(t.entries[0].values[WEIGHT_SAMPLES], 2);
	cr_assert_eq(t.entries[0].values[WEIGHT_OWN + 1], 500);
	cr_assert_eq(t.entries[1].key.tid, 12);
	cr_assert_eq(t.entries[2].key.signal, 10);
	/* past the first table size: every entry still found */
	for (uint32_t i = 0; i < 5000; i++) {
		struct weight_key many = { .collector = 2, .stack = i, .pid = 1, .tid = 1 };
		weight_table_add(&t, &many, WEIGHT_PERIOD, i);
		weight_table_add(&t, &many, WEIGHT_PERIOD, 1);
	}
	cr_assert_eq(t.count, 5003);
	cr_assert_eq(t.entries[3 + 4999].values[WEIGHT_PERIOD], 5000);
	weight_table_free(&t);
}

/* ---- the writer's pairs for pprof -diff_base (report_pprof.c), on profiles made by hand ---- */

#include "sigprof/model/profile.h"
#include "sigprof/collectors/registry.h"
#include "sigprof/commands/report.h"
#include "unit_helpers.h"

/* A profile of one stack "main <- f" with samples of the named collectors (registry.h's), each `count` times. */
static void hand_profile(struct profile *p, const char *const *collectors, size_t n, uint64_t count)
{
	memset(p, 0, sizeof(*p));
	p->file = "hand.data";
	p->procs = proc_table_new();
	stack_table_init(&p->stacks, NULL);
	p->weights = calloc(1, sizeof(*p->weights));
	weight_table_init(p->weights);
	uint32_t frames[2] = { frame_synthetic(&p->stacks, "f", "[test]"), frame_synthetic(&p->stacks, "main", "[test]") };
	for (size_t c = 0; c < n; c++) {
		struct collector_info *ci = &p->collectors[p->ncollectors];
		snprintf(ci->name, sizeof(ci->name), "%s", collectors[c]);
		ci->ok = true;
		ci->samples = count;
		ci->weight = count;
		for (size_t k = 0; k < collector_count; k++)
			if (strcmp(collector_table[k]->name, collectors[c]) == 0)
				ci->impl = collector_table[k];
		cr_assert_not_null(ci->impl, "no collector %s", collectors[c]);
		uint32_t stack = stack_add(&p->stacks, (uint32_t)p->ncollectors, frames, 2, count, count);
		struct weight_key key = { .collector = (uint32_t)p->ncollectors, .stack = stack, .pid = 7, .tid = 8 };
		weight_table_add(p->weights, &key, WEIGHT_SAMPLES, count);
		weight_table_add(p->weights, &key, WEIGHT_OWN, count); /* the first own kind, where there is one */
		p->ncollectors++;
	}
}

static void hand_free(struct profile *p)
{
	weight_table_free(p->weights);
	free(p->weights);
	stack_table_free(&p->stacks);
	proc_table_free(p->procs);
}

static struct pprof_profile *read_back(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	unsigned char gz[1 << 16];
	size_t len = fread(gz, 1, sizeof(gz), f);
	fclose(f);
	unsigned char raw[1 << 16];
	z_stream z = { .next_in = gz, .avail_in = (uInt)len, .next_out = raw, .avail_out = sizeof(raw) };
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	size_t n = z.total_out;
	inflateEnd(&z);
	struct pprof_profile *p = (void *)protobuf_c_message_unpack(&pprof_profile_descriptor, NULL, n, raw);
	cr_assert_not_null(p);
	return p;
}

Test(pprof, a_pair_has_the_sample_types_of_both_recordings_in_one_order)
{
	static const char *const base_collectors[] = { "cpu" };
	static const char *const new_collectors[] = { "cpu", "signal" };
	struct profile base, changed;
	hand_profile(&base, base_collectors, 1, 3);
	hand_profile(&changed, new_collectors, 2, 5);
	char *base_path = temp_template("/tmp/sigprof-pprof-base-");
	char *new_path = temp_template("/tmp/sigprof-pprof-new-");
	close(mkstemp(base_path));
	close(mkstemp(new_path));
	char err[256];
	cr_assert_eq(report_pprof_pair(&base, base_path, &changed, new_path, err, sizeof(err)), 0, "%s", err);
	struct pprof_profile *b = read_back(base_path), *n = read_back(new_path);
	cr_assert_eq(b->n_sample_type, n->n_sample_type);
	cr_assert_geq(b->n_sample_type, 3, "cpu_samples, signal_deliveries, signal_handler");
	for (size_t i = 0; i < b->n_sample_type; i++)
		cr_assert_str_eq(b->string_table[b->sample_type[i]->type], n->string_table[n->sample_type[i]->type]);
	cr_assert_str_eq(b->string_table[b->sample_type[0]->type], "cpu_samples");
	/* the base has its 3 cpu samples and no signal values; the new one both */
	cr_assert_eq(b->n_sample, 1);
	cr_assert_eq(b->sample[0]->value[0], 3);
	cr_assert_eq(n->n_sample, 2);
	cr_assert_eq(n->sample[0]->value[0], 5);
	cr_assert_eq(n->sample[1]->value[0], 0);
	cr_assert_eq(n->sample[1]->n_location_id, 2);
	protobuf_c_message_free_unpacked(&b->base, NULL);
	protobuf_c_message_free_unpacked(&n->base, NULL);
	unlink(base_path);
	unlink(new_path);
	free(base_path);
	free(new_path);
	hand_free(&base);
	hand_free(&changed);
}
