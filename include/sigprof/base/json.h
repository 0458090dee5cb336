/*
 * json.h: a small streaming JSON writer for the report's --json output.
 *
 * Values are written as they are produced; the writer tracks nesting and
 * commas.  Every value function takes a key, which must be NULL inside
 * arrays and non-NULL inside objects.  Output is indented, two spaces per
 * level, so it reads well and diffs well.
 */
#ifndef SIGPROF_JSON_H
#define SIGPROF_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *out;
	int depth;
	bool has_items[JSON_MAX_DEPTH]; /* a value was written at this depth: the next needs a comma */
	char closer[JSON_MAX_DEPTH];     /* '}' or ']' */
	bool script_safe;                /* strings escape < > & (\u003c...): the document goes inside an HTML <script> */
	bool compact;                    /* no indentation: one document a line (JSON Lines) */
};

void json_init(struct json_writer *w, FILE *out);
/* A writer of compact documents, each on one line once json_finish() ends it (`sigprof script --json`). */
void json_init_compact(struct json_writer *w, FILE *out);
void json_object_begin(struct json_writer *w, const char *key);
void json_array_begin(struct json_writer *w, const char *key);
void json_end(struct json_writer *w); /* closes the innermost object or array */
void json_string(struct json_writer *w, const char *key, const char *value); /* NULL value: null */
void json_u64(struct json_writer *w, const char *key, uint64_t value);
/* An address or bit mask as a string "0x..." (JSON numbers lose the top bits of a kernel address). */
void json_hex(struct json_writer *w, const char *key, uint64_t value);
void json_i64(struct json_writer *w, const char *key, int64_t value);
void json_double(struct json_writer *w, const char *key, double value, int decimals);
/* A value with `digits` significant digits ("%.*g": 2.66548e-08 for a p-value); not finite: null. */
void json_significant(struct json_writer *w, const char *key, double value, int digits);
void json_bool(struct json_writer *w, const char *key, bool value);
void json_null(struct json_writer *w, const char *key);
/* s as a JSON string, quoted and escaped; script_safe: < > & escaped too. */
void json_quote(FILE *out, const char *s, bool script_safe);
/* Ends the document with a newline. */
void json_finish(struct json_writer *w);

#endif
