/*
 * json.c: the streaming JSON writer (json.h).  Strings are escaped per
 * RFC 8259; bytes that are not valid UTF-8 become U+FFFD so that a symbol
 * name with odd bytes never makes the document unparseable.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/json.h"
#include "sigprof/base/util.h"

void json_init(struct json_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

void json_init_compact(struct json_writer *w, FILE *out)
{
	json_init(w, out);
	w->compact = true;
}

static void indent(struct json_writer *w)
{
	if (w->compact)
		return;
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

/*
 * Valid UTF-8 (utf8_sequence_length(): RFC 3629, no overlong forms, no
 * surrogates, nothing past U+10FFFF, which strict parsers reject as
 * readily as stray bytes) is written as it is; any other byte as \ufffd.
 */
void json_quote(FILE *out, const char *s, bool script_safe)
{
	fputc('"', out);
	const unsigned char *run = (const unsigned char *)s; /* bytes written as they are, not yet written */
	const unsigned char *p = run;
	while (*p) {
		unsigned char c = *p;
		/* in a page's <script>, < > & are escaped whatever follows them: no "</script>", "<!--" or "]]>" */
		bool special = c == '"' || c == '\\' || (script_safe && (c == '<' || c == '>' || c == '&'));
		int n = c >= 0x20 && !special ? (int)utf8_sequence_length(p) : 0;
		if (n) {
			p += n;
			continue;
		}
		fwrite(run, 1, (size_t)(p - run), out);
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
		} else if (c == '\n') {
			fputs("\\n", out);
		} else if (c == '\t') {
			fputs("\\t", out);
		} else if (c < 0x20 || (script_safe && (c == '<' || c == '>' || c == '&'))) {
			fprintf(out, "\\u%04x", c);
		} else {
			fputs("\\ufffd", out); /* not valid UTF-8 */
		}
		run = ++p;
	}
	fwrite(run, 1, (size_t)(p - run), out);
	fputc('"', out);
}

#define JSON_QUOTE(w, s) json_quote((w)->out, (s), (w)->script_safe)

static void begin_value(struct json_writer *w, const char *key)
{
	if (w->depth > 0) {
		if (w->has_items[w->depth])
			fputc(',', w->out);
		indent(w);
	}
	w->has_items[w->depth] = true;
	if (key) {
		JSON_QUOTE(w, key);
		fputs(w->compact ? ":" : ": ", w->out);
	}
}

static void open_container(struct json_writer *w, const char *key, char opener, char closer)
{
	begin_value(w, key);
	fputc(opener, w->out);
	/* the report's shape is fixed and shallow: nesting this deep is a bug in the caller, not bad input */
	if (w->depth + 1 >= JSON_MAX_DEPTH)
		abort();
	w->depth++;
	w->has_items[w->depth] = false;
	w->closer[w->depth] = closer;
}

void json_object_begin(struct json_writer *w, const char *key)
{
	open_container(w, key, '{', '}');
}

void json_array_begin(struct json_writer *w, const char *key)
{
	open_container(w, key, '[', ']');
}

void json_end(struct json_writer *w)
{
	if (w->depth == 0)
		return;
	bool had = w->has_items[w->depth];
	char closer = w->closer[w->depth];
	w->depth--;
	if (had)
		indent(w);
	fputc(closer, w->out);
}

void json_string(struct json_writer *w, const char *key, const char *value)
{
	begin_value(w, key);
	if (value)
		JSON_QUOTE(w, value);
	else
		fputs("null", w->out);
}

void json_u64(struct json_writer *w, const char *key, uint64_t value)
{
	begin_value(w, key);
	fprintf(w->out, "%llu", (unsigned long long)value);
}

void json_hex(struct json_writer *w, const char *key, uint64_t value)
{
	begin_value(w, key);
	fprintf(w->out, "\"0x%llx\"", (unsigned long long)value);
}

void json_i64(struct json_writer *w, const char *key, int64_t value)
{
	begin_value(w, key);
	fprintf(w->out, "%lld", (long long)value);
}

void json_double(struct json_writer *w, const char *key, double value, int decimals)
{
	begin_value(w, key);
	if (isfinite(value))
		fprintf(w->out, "%.*f", decimals, value);
	else
		fputs("null", w->out);
}

void json_significant(struct json_writer *w, const char *key, double value, int digits)
{
	begin_value(w, key);
	if (isfinite(value))
		fprintf(w->out, "%.*g", digits, value);
	else
		fputs("null", w->out);
}

void json_bool(struct json_writer *w, const char *key, bool value)
{
	begin_value(w, key);
	fputs(value ? "true" : "false", w->out);
}

void json_null(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	fputs("null", w->out);
}

void json_finish(struct json_writer *w)
{
	while (w->depth > 0)
		json_end(w);
	fputc('\n', w->out);
}
