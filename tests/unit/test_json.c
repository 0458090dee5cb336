/*
 * test_json.c: the streaming JSON writer (profiler/base/json.c).
 *
 * Each test writes a small document into an open_memstream FILE and
 * compares the exact text with what json.h promises: two spaces of indent
 * per level, "key": value, a comma after every value but the last, empty
 * containers as {} and [], strings escaped per RFC 8259, bytes that are not
 * valid UTF-8 as \ufffd, non-finite numbers as null, and a final newline.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/base/json.h"

struct doc {
	FILE *out;
	char *text;
	size_t len;
	struct json_writer w;
};

static void doc_open(struct doc *d)
{
	memset(d, 0, sizeof(*d));
	d->out = open_memstream(&d->text, &d->len);
	cr_assert_not_null(d->out);
	json_init(&d->w, d->out);
}

/* Finish the document and compare it with want. */
static void doc_check(struct doc *d, const char *want)
{
	json_finish(&d->w);
	cr_assert_eq(fclose(d->out), 0);
	cr_assert_str_eq(d->text, want);
	cr_assert_eq(d->len, strlen(want));
	free(d->text);
}

/* A document that is one string value inside an array: ["..."] */
static void check_string(const char *value, const char *escaped)
{
	struct doc d;
	doc_open(&d);
	json_array_begin(&d.w, NULL);
	json_string(&d.w, NULL, value);
	char want[512];
	snprintf(want, sizeof(want), "[\n  \"%s\"\n]\n", escaped);
	doc_check(&d, want);
}

Test(json, empty_containers)
{
	struct doc d;
	doc_open(&d);
	json_object_begin(&d.w, NULL);
	doc_check(&d, "{}\n");

	doc_open(&d);
	json_array_begin(&d.w, NULL);
	json_end(&d.w);
	doc_check(&d, "[]\n");

	doc_open(&d);
	json_object_begin(&d.w, NULL);
	json_object_begin(&d.w, "o");
	json_end(&d.w);
	json_array_begin(&d.w, "a");
	json_end(&d.w);
	json_end(&d.w);
	doc_check(&d, "{\n"
		      "  \"o\": {},\n"
		      "  \"a\": []\n"
		      "}\n");
}

Test(json, nested_objects_and_arrays)
{
	struct doc d;
	doc_open(&d);
	json_object_begin(&d.w, NULL);
	json_u64(&d.w, "a", 1);
	json_array_begin(&d.w, "b");
	json_u64(&d.w, NULL, 1);
	json_u64(&d.w, NULL, 2);
	json_object_begin(&d.w, NULL);
	json_string(&d.w, "k", "v");
	json_array_begin(&d.w, "deep");
	json_array_begin(&d.w, NULL);
	json_bool(&d.w, NULL, true);
	json_end(&d.w);
	json_end(&d.w);
	json_end(&d.w);
	json_end(&d.w);
	json_object_begin(&d.w, "c");
	json_end(&d.w);
	json_null(&d.w, "last");
	doc_check(&d, "{\n"
		      "  \"a\": 1,\n"
		      "  \"b\": [\n"
		      "    1,\n"
		      "    2,\n"
		      "    {\n"
		      "      \"k\": \"v\",\n"
		      "      \"deep\": [\n"
		      "        [\n"
		      "          true\n"
		      "        ]\n"
		      "      ]\n"
		      "    }\n"
		      "  ],\n"
		      "  \"c\": {},\n"
		      "  \"last\": null\n"
		      "}\n");
}

Test(json, finish_closes_everything_still_open)
{
	struct doc d;
	doc_open(&d);
	json_array_begin(&d.w, NULL);
	json_object_begin(&d.w, NULL);
	json_array_begin(&d.w, "x");
	json_i64(&d.w, NULL, -1);
	doc_check(&d, "[\n"
		      "  {\n"
		      "    \"x\": [\n"
		      "      -1\n"
		      "    ]\n"
		      "  }\n"
		      "]\n");
}

Test(json, extra_end_at_the_top_is_ignored)
{
	struct doc d;
	doc_open(&d);
	json_object_begin(&d.w, NULL);
	json_end(&d.w);
	json_end(&d.w);
	doc_check(&d, "{}\n");
}

Test(json, numbers_booleans_and_null)
{
	struct doc d;
	doc_open(&d);
	json_object_begin(&d.w, NULL);
	json_u64(&d.w, "zero", 0);
	json_u64(&d.w, "u64max", UINT64_MAX);
	json_i64(&d.w, "i64min", INT64_MIN);
	json_i64(&d.w, "i64max", INT64_MAX);
	json_double(&d.w, "half", 1.5, 2);
	json_double(&d.w, "third", 1.0 / 3.0, 3);
	json_double(&d.w, "rounded", 3.7, 0);
	json_double(&d.w, "negative", -0.26, 1);
	json_double(&d.w, "nan", NAN, 2);
	json_double(&d.w, "inf", INFINITY, 2);
	json_double(&d.w, "minus_inf", -INFINITY, 2);
	json_bool(&d.w, "yes", true);
	json_bool(&d.w, "no", false);
	json_null(&d.w, "nothing");
	json_string(&d.w, "null_string", NULL);
	json_string(&d.w, "empty", "");
	doc_check(&d, "{\n"
		      "  \"zero\": 0,\n"
		      "  \"u64max\": 18446744073709551615,\n"
		      "  \"i64min\": -9223372036854775808,\n"
		      "  \"i64max\": 9223372036854775807,\n"
		      "  \"half\": 1.50,\n"
		      "  \"third\": 0.333,\n"
		      "  \"rounded\": 4,\n"
		      "  \"negative\": -0.3,\n"
		      "  \"nan\": null,\n"
		      "  \"inf\": null,\n"
		      "  \"minus_inf\": null,\n"
		      "  \"yes\": true,\n"
		      "  \"no\": false,\n"
		      "  \"nothing\": null,\n"
		      "  \"null_string\": null,\n"
		      "  \"empty\": \"\"\n"
		      "}\n");
}

Test(json, quotes_backslashes_and_control_characters_are_escaped)
{
	check_string("plain", "plain");
	check_string("say \"hi\"", "say \\\"hi\\\"");
	check_string("C:\\path\\", "C:\\\\path\\\\");
	check_string("line\nnext\ttab", "line\\nnext\\ttab");
	check_string("\r", "\\u000d");
	check_string("\b\f", "\\u0008\\u000c");
	check_string("\x01\x1f", "\\u0001\\u001f");
	check_string("\x7f", "\x7f"); /* DEL needs no escape */
	check_string("/", "/");
	check_string("operator<<(std::ostream&, int)", "operator<<(std::ostream&, int)");
}

Test(json, keys_are_escaped_too)
{
	struct doc d;
	doc_open(&d);
	json_object_begin(&d.w, NULL);
	json_u64(&d.w, "a\"b\\c\n", 1);
	json_u64(&d.w, "\xff", 2);
	doc_check(&d, "{\n"
		      "  \"a\\\"b\\\\c\\n\": 1,\n"
		      "  \"\\ufffd\": 2\n"
		      "}\n");
}

Test(json, valid_utf8_passes_through)
{
	check_string("caf\xc3\xa9", "caf\xc3\xa9");                  /* U+00E9 */
	check_string("\xe2\x82\xac 5", "\xe2\x82\xac 5");             /* U+20AC */
	check_string("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");         /* U+1F600 */
	check_string("\xc2\x80", "\xc2\x80");                         /* U+0080, the smallest 2-byte one */
	check_string("\xef\xbf\xbf", "\xef\xbf\xbf");                 /* U+FFFF */
	check_string("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");         /* U+10FFFF, the largest */
	check_string("\xed\x9f\xbf", "\xed\x9f\xbf");                 /* U+D7FF, just below the surrogates */
}

Test(json, invalid_utf8_becomes_replacement_characters)
{
	check_string("\x80", "\\ufffd");                        /* a lone continuation byte */
	check_string("a\xff" "b", "a\\ufffdb");
	check_string("\xc3x", "\\ufffdx");                      /* a lead byte without its continuation */
	check_string("\xe2\x82", "\\ufffd\\ufffd");             /* cut at the end of the string */
	check_string("\xf0\x9f\x98", "\\ufffd\\ufffd\\ufffd");
	check_string("\xf8\x88\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"); /* no 5-byte forms */
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 either (RFC 3629) */
	check_string("\xc0\xaf", "\\ufffd\\ufffd");             /* '/' in two bytes */
	check_string("\xc1\xbf", "\\ufffd\\ufffd");
	check_string("\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd");
	check_string("\xf0\x80\x80\xaf", "\\ufffd\\ufffd\\ufffd\\ufffd");
	check_string("\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"); /* U+D800 */
	check_string("\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"); /* U+110000 */
	check_string("\xf5\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd");
}

Test(json, document_of_several_top_level_keys_in_an_array_of_objects)
{
	struct doc d;
	doc_open(&d);
	json_array_begin(&d.w, NULL);
	for (int i = 0; i < 3; i++) {
		json_object_begin(&d.w, NULL);
		json_i64(&d.w, "i", i);
		json_double(&d.w, "pct", i * 12.5, 1);
		json_end(&d.w);
	}
	json_end(&d.w);
	doc_check(&d, "[\n"
		      "  {\n"
		      "    \"i\": 0,\n"
		      "    \"pct\": 0.0\n"
		      "  },\n"
		      "  {\n"
		      "    \"i\": 1,\n"
		      "    \"pct\": 12.5\n"
		      "  },\n"
		      "  {\n"
		      "    \"i\": 2,\n"
		      "    \"pct\": 25.0\n"
		      "  }\n"
		      "]\n");
}

/* A recording's strings inside an HTML page's <script type="application/json">: no way out of the element. */
Test(json, script_safe_strings_cannot_close_or_comment_the_script)
{
	struct doc d;
	doc_open(&d);
	d.w.script_safe = true;
	json_array_begin(&d.w, NULL);
	json_string(&d.w, NULL, "</script><script>alert(1)</script>");
	json_string(&d.w, NULL, "<!--<script>");
	json_string(&d.w, NULL, "a&b>c");
	doc_check(&d, "[\n"
		      "  \"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\",\n"
		      "  \"\\u003c!--\\u003cscript\\u003e\",\n"
		      "  \"a\\u0026b\\u003ec\"\n"
		      "]\n");
	/* the same bytes outside a page stay as they are */
	check_string("</script><!--", "</script><!--");
}
