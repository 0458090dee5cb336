/*
 * pprof.c: profile.proto's messages as protobuf-c descriptors, and a
 * builder that interns strings, mappings and functions (pprof.h).
 *
 * The descriptors are the tables protoc-c would generate from
 * google/pprof's proto/profile.proto (package perftools.profiles), written
 * out: one field descriptor per field, in field-number order, each naming
 * the C member that holds it.  protobuf-c's packer walks them; its unpacker
 * (used by the unit test) also needs each message's field ranges and init.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sigprof/base/pprof.h"
#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/hashmap.h"

/* ---- descriptors ---- */

#define FIELD(msg, member, num, label, ptype, quantifier, desc, flags)                                        \
	{ #member, num, label, ptype, quantifier, offsetof(struct msg, member), desc, NULL, flags, 0, NULL, NULL }
/* A proto3 scalar: written when not zero. */
#define SCALAR(msg, member, num, ptype) FIELD(msg, member, num, PROTOBUF_C_LABEL_NONE, ptype, 0, NULL, 0)
/* A repeated scalar, packed as proto3 packs them. */
#define PACKED(msg, member, num, ptype)                                                                       \
	FIELD(msg, member, num, PROTOBUF_C_LABEL_REPEATED, ptype, offsetof(struct msg, n_##member), NULL,        \
	      PROTOBUF_C_FIELD_FLAG_PACKED)
#define REPEATED(msg, member, num, ptype, desc)                                                               \
	FIELD(msg, member, num, PROTOBUF_C_LABEL_REPEATED, ptype, offsetof(struct msg, n_##member), desc, 0)

static const ProtobufCMessageDescriptor value_type_descriptor, label_descriptor, sample_descriptor,
	mapping_descriptor, line_descriptor, location_descriptor, function_descriptor;

/* Every message's fields are numbered 1..n: one range. */
#define RANGES(name, n) static const ProtobufCIntRange name[] = { { 1, 0 }, { 0, n } }

#define MESSAGE(storage, var, cname, msg, fields, ranges)                                                     \
	static void var##_init(ProtobufCMessage *m)                                                           \
	{                                                                                                     \
		memset(m, 0, sizeof(struct msg));                                                             \
		m->descriptor = &var;                                                                         \
	}                                                                                                     \
	storage const ProtobufCMessageDescriptor var = {                                                      \
		PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, "perftools.profiles." cname, cname,                    \
		"Perftools__Profiles__" cname, "perftools.profiles", sizeof(struct msg), ARRAY_SIZE(fields),   \
		fields, NULL, 1, ranges, var##_init, NULL, NULL, NULL                                          \
	}

static const ProtobufCFieldDescriptor value_type_fields[] = {
	SCALAR(pprof_value_type, type, 1, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_value_type, unit, 2, PROTOBUF_C_TYPE_INT64),
};
RANGES(value_type_ranges, 2);
MESSAGE(static, value_type_descriptor, "ValueType", pprof_value_type, value_type_fields, value_type_ranges);

static const ProtobufCFieldDescriptor label_fields[] = {
	SCALAR(pprof_label, key, 1, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_label, str, 2, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_label, num, 3, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_label, num_unit, 4, PROTOBUF_C_TYPE_INT64),
};
RANGES(label_ranges, 4);
MESSAGE(static, label_descriptor, "Label", pprof_label, label_fields, label_ranges);

static const ProtobufCFieldDescriptor sample_fields[] = {
	PACKED(pprof_sample, location_id, 1, PROTOBUF_C_TYPE_UINT64),
	PACKED(pprof_sample, value, 2, PROTOBUF_C_TYPE_INT64),
	REPEATED(pprof_sample, label, 3, PROTOBUF_C_TYPE_MESSAGE, &label_descriptor),
};
RANGES(sample_ranges, 3);
MESSAGE(static, sample_descriptor, "Sample", pprof_sample, sample_fields, sample_ranges);

static const ProtobufCFieldDescriptor mapping_fields[] = {
	SCALAR(pprof_mapping, id, 1, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_mapping, memory_start, 2, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_mapping, memory_limit, 3, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_mapping, file_offset, 4, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_mapping, filename, 5, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_mapping, build_id, 6, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_mapping, has_functions, 7, PROTOBUF_C_TYPE_BOOL),
	SCALAR(pprof_mapping, has_filenames, 8, PROTOBUF_C_TYPE_BOOL),
	SCALAR(pprof_mapping, has_line_numbers, 9, PROTOBUF_C_TYPE_BOOL),
	SCALAR(pprof_mapping, has_inline_frames, 10, PROTOBUF_C_TYPE_BOOL),
};
RANGES(mapping_ranges, 10);
MESSAGE(static, mapping_descriptor, "Mapping", pprof_mapping, mapping_fields, mapping_ranges);

static const ProtobufCFieldDescriptor line_fields[] = {
	SCALAR(pprof_line, function_id, 1, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_line, line, 2, PROTOBUF_C_TYPE_INT64),
};
RANGES(line_ranges, 2);
MESSAGE(static, line_descriptor, "Line", pprof_line, line_fields, line_ranges);

static const ProtobufCFieldDescriptor location_fields[] = {
	SCALAR(pprof_location, id, 1, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_location, mapping_id, 2, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_location, address, 3, PROTOBUF_C_TYPE_UINT64),
	REPEATED(pprof_location, line, 4, PROTOBUF_C_TYPE_MESSAGE, &line_descriptor),
	SCALAR(pprof_location, is_folded, 5, PROTOBUF_C_TYPE_BOOL),
};
RANGES(location_ranges, 5);
MESSAGE(static, location_descriptor, "Location", pprof_location, location_fields, location_ranges);

static const ProtobufCFieldDescriptor function_fields[] = {
	SCALAR(pprof_function, id, 1, PROTOBUF_C_TYPE_UINT64),
	SCALAR(pprof_function, name, 2, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_function, system_name, 3, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_function, filename, 4, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_function, start_line, 5, PROTOBUF_C_TYPE_INT64),
};
RANGES(function_ranges, 5);
MESSAGE(static, function_descriptor, "Function", pprof_function, function_fields, function_ranges);

static const ProtobufCFieldDescriptor profile_fields[] = {
	REPEATED(pprof_profile, sample_type, 1, PROTOBUF_C_TYPE_MESSAGE, &value_type_descriptor),
	REPEATED(pprof_profile, sample, 2, PROTOBUF_C_TYPE_MESSAGE, &sample_descriptor),
	REPEATED(pprof_profile, mapping, 3, PROTOBUF_C_TYPE_MESSAGE, &mapping_descriptor),
	REPEATED(pprof_profile, location, 4, PROTOBUF_C_TYPE_MESSAGE, &location_descriptor),
	REPEATED(pprof_profile, function, 5, PROTOBUF_C_TYPE_MESSAGE, &function_descriptor),
	REPEATED(pprof_profile, string_table, 6, PROTOBUF_C_TYPE_STRING, NULL),
	SCALAR(pprof_profile, drop_frames, 7, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_profile, keep_frames, 8, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_profile, time_nanos, 9, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_profile, duration_nanos, 10, PROTOBUF_C_TYPE_INT64),
	FIELD(pprof_profile, period_type, 11, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_MESSAGE, 0, &value_type_descriptor,
	      0),
	SCALAR(pprof_profile, period, 12, PROTOBUF_C_TYPE_INT64),
	PACKED(pprof_profile, comment, 13, PROTOBUF_C_TYPE_INT64),
	SCALAR(pprof_profile, default_sample_type, 14, PROTOBUF_C_TYPE_INT64),
};
RANGES(profile_ranges, 14);
MESSAGE(, pprof_profile_descriptor, "Profile", pprof_profile, profile_fields, profile_ranges);

/* ---- the builder ---- */

struct pprof_builder {
	struct pprof_profile profile;
	size_t sample_types_cap, samples_cap, mappings_cap, locations_cap, functions_cap, strings_cap, comments_cap;
	struct string_pool *pool;
	struct u64_map string_index;   /* interned pointer -> index + 1 */
	struct u64_map mapping_ids;    /* filename index -> mapping id */
	struct u64_map function_ids;   /* name index << 32 | filename index -> function id */
};

struct pprof_builder *pprof_builder_new(void)
{
	struct pprof_builder *b = xcalloc(1, sizeof(*b));
	pprof_profile_descriptor.message_init(&b->profile.base);
	b->pool = string_pool_new();
	pprof_string(b, ""); /* entry 0 */
	return b;
}

const struct pprof_profile *pprof_builder_profile(const struct pprof_builder *b)
{
	return &b->profile;
}

int64_t pprof_string(struct pprof_builder *b, const char *s)
{
	struct pprof_profile *p = &b->profile;
	if (!s)
		s = "";
	const char *interned = string_intern(b->pool, s);
	uintptr_t index = (uintptr_t)u64_map_get(&b->string_index, (uint64_t)(uintptr_t)interned);
	if (index)
		return (int64_t)index - 1;
	GROW(p->string_table, b->strings_cap, p->n_string_table + 1);
	p->string_table[p->n_string_table] = (char *)interned; /* the pool owns it; protobuf-c only reads it */
	u64_map_put(&b->string_index, (uint64_t)(uintptr_t)interned, (void *)(uintptr_t)(p->n_string_table + 1));
	return (int64_t)p->n_string_table++;
}

static struct pprof_value_type *value_type(struct pprof_builder *b, const char *type, const char *unit)
{
	struct pprof_value_type *v = xcalloc(1, sizeof(*v));
	value_type_descriptor.message_init(&v->base);
	v->type = pprof_string(b, type);
	v->unit = pprof_string(b, unit);
	return v;
}

void pprof_add_sample_type(struct pprof_builder *b, const char *type, const char *unit)
{
	struct pprof_profile *p = &b->profile;
	GROW(p->sample_type, b->sample_types_cap, p->n_sample_type + 1);
	p->sample_type[p->n_sample_type++] = value_type(b, type, unit);
}

void pprof_set_default_sample_type(struct pprof_builder *b, const char *type)
{
	b->profile.default_sample_type = pprof_string(b, type);
}

void pprof_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos)
{
	b->profile.time_nanos = time_nanos;
	b->profile.duration_nanos = duration_nanos;
}

void pprof_add_comment(struct pprof_builder *b, const char *comment)
{
	struct pprof_profile *p = &b->profile;
	int64_t s = pprof_string(b, comment);
	GROW(p->comment, b->comments_cap, p->n_comment + 1);
	p->comment[p->n_comment++] = s;
}

uint64_t pprof_mapping(struct pprof_builder *b, const char *filename, const char *build_id)
{
	struct pprof_profile *p = &b->profile;
	int64_t name = pprof_string(b, filename);
	uintptr_t id = (uintptr_t)u64_map_get(&b->mapping_ids, (uint64_t)name);
	if (id)
		return id;
	struct pprof_mapping *m = xcalloc(1, sizeof(*m));
	mapping_descriptor.message_init(&m->base);
	m->id = p->n_mapping + 1;
	m->filename = name;
	m->build_id = pprof_string(b, build_id);
	/* the report names every frame: pprof must not look for the files to symbolize them again */
	m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = 1;
	m->memory_limit = UINT64_MAX;
	GROW(p->mapping, b->mappings_cap, p->n_mapping + 1);
	p->mapping[p->n_mapping++] = m;
	u64_map_put(&b->mapping_ids, (uint64_t)name, (void *)(uintptr_t)m->id);
	return m->id;
}

uint64_t pprof_function(struct pprof_builder *b, const char *name, const char *filename)
{
	struct pprof_profile *p = &b->profile;
	int64_t n = pprof_string(b, name), f = pprof_string(b, filename);
	uint64_t key = (uint64_t)n << 32 | (uint64_t)f;
	uintptr_t id = (uintptr_t)u64_map_get(&b->function_ids, key);
	if (id)
		return id;
	struct pprof_function *fn = xcalloc(1, sizeof(*fn));
	function_descriptor.message_init(&fn->base);
	fn->id = p->n_function + 1;
	fn->name = fn->system_name = n;
	fn->filename = f;
	GROW(p->function, b->functions_cap, p->n_function + 1);
	p->function[p->n_function++] = fn;
	u64_map_put(&b->function_ids, key, (void *)(uintptr_t)fn->id);
	return fn->id;
}

uint64_t pprof_add_location(struct pprof_builder *b, uint64_t mapping_id, uint64_t address, uint64_t function_id,
			    int64_t line)
{
	struct pprof_profile *p = &b->profile;
	struct pprof_location *l = xcalloc(1, sizeof(*l));
	location_descriptor.message_init(&l->base);
	l->id = p->n_location + 1;
	l->mapping_id = mapping_id;
	l->address = address;
	l->n_line = 1;
	l->line = xcalloc(1, sizeof(*l->line));
	l->line[0] = xcalloc(1, sizeof(**l->line));
	line_descriptor.message_init(&l->line[0]->base);
	l->line[0]->function_id = function_id;
	l->line[0]->line = line;
	GROW(p->location, b->locations_cap, p->n_location + 1);
	p->location[p->n_location++] = l;
	return l->id;
}

struct pprof_sample *pprof_add_sample(struct pprof_builder *b, const uint64_t *locations, size_t nlocations,
				      const int64_t *values)
{
	struct pprof_profile *p = &b->profile;
	struct pprof_sample *s = xcalloc(1, sizeof(*s));
	sample_descriptor.message_init(&s->base);
	s->n_location_id = nlocations;
	s->location_id = xmalloc((nlocations + 1) * sizeof(*s->location_id));
	memcpy(s->location_id, locations, nlocations * sizeof(*locations));
	s->n_value = p->n_sample_type;
	s->value = xmalloc((s->n_value + 1) * sizeof(*s->value));
	memcpy(s->value, values, s->n_value * sizeof(*values));
	GROW(p->sample, b->samples_cap, p->n_sample + 1);
	p->sample[p->n_sample++] = s;
	return s;
}

static struct pprof_label *add_label(struct pprof_builder *b, struct pprof_sample *s, const char *key)
{
	struct pprof_label *l = xcalloc(1, sizeof(*l));
	label_descriptor.message_init(&l->base);
	l->key = pprof_string(b, key);
	s->label = xrealloc(s->label, (s->n_label + 1) * sizeof(*s->label));
	s->label[s->n_label++] = l;
	return l;
}

void pprof_label_string(struct pprof_builder *b, struct pprof_sample *s, const char *key, const char *value)
{
	add_label(b, s, key)->str = pprof_string(b, value);
}

void pprof_label_number(struct pprof_builder *b, struct pprof_sample *s, const char *key, int64_t value)
{
	add_label(b, s, key)->num = value;
}

void pprof_builder_free(struct pprof_builder *b)
{
	if (!b)
		return;
	struct pprof_profile *p = &b->profile;
	for (size_t i = 0; i < p->n_sample_type; i++)
		free(p->sample_type[i]);
	for (size_t i = 0; i < p->n_sample; i++) {
		for (size_t k = 0; k < p->sample[i]->n_label; k++)
			free(p->sample[i]->label[k]);
		free(p->sample[i]->label);
		free(p->sample[i]->location_id);
		free(p->sample[i]->value);
		free(p->sample[i]);
	}
	for (size_t i = 0; i < p->n_mapping; i++)
		free(p->mapping[i]);
	for (size_t i = 0; i < p->n_location; i++) {
		free(p->location[i]->line[0]);
		free(p->location[i]->line);
		free(p->location[i]);
	}
	for (size_t i = 0; i < p->n_function; i++)
		free(p->function[i]);
	free(p->sample_type);
	free(p->sample);
	free(p->mapping);
	free(p->location);
	free(p->function);
	free(p->string_table);
	free(p->comment);
	u64_map_free(&b->string_index);
	u64_map_free(&b->mapping_ids);
	u64_map_free(&b->function_ids);
	string_pool_free(b->pool);
	free(b);
}

/* ---- writing ---- */

int pprof_write_gzip(const struct pprof_builder *b, FILE *out)
{
	size_t size = protobuf_c_message_get_packed_size(&b->profile.base);
	uint8_t *packed = xmalloc_large(size + 1);
	protobuf_c_message_pack(&b->profile.base, packed);
	z_stream z = { 0 };
	/* windowBits 15 + 16: a gzip header and trailer, as pprof reads them */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(packed);
		return -ENOMEM;
	}
	uLong bound = deflateBound(&z, (uLong)size);
	uint8_t *gz = xmalloc_large(bound + 1);
	z.next_in = packed;
	z.avail_in = (uInt)size;
	z.next_out = gz;
	z.avail_out = (uInt)bound;
	int zret = deflate(&z, Z_FINISH);
	size_t written = z.total_out;
	deflateEnd(&z);
	free(packed);
	int ret = 0;
	if (zret != Z_STREAM_END)
		ret = -ENOMEM;
	else if (fwrite(gz, 1, written, out) != written)
		ret = -EIO;
	free(gz);
	return ret;
}
