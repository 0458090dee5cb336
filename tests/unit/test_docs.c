/*
 * test_docs.c: the documents that describe tables in the code list exactly
 * what the code holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/c2c.h"
#include "sigprof/paths.h"
#include "unit_helpers.h"


Test(docs, paths_md_lists_every_builtin_rule_under_its_path)
{
	char *doc = read_text_file("docs/paths.md");
	for (unsigned i = 0; i < builtin_path_rule_count; i++) {
		char heading[64], item[160];
		snprintf(heading, sizeof(heading), "\n### %s\n", path_name(builtin_path_rules[i].path));
		snprintf(item, sizeof(item), "\n- `%s`\n", builtin_path_rules[i].pattern);
		const char *section = strstr(doc, heading);
		cr_assert(section, "docs/paths.md has no section for %s", path_name(builtin_path_rules[i].path));
		const char *next = strstr(section + 1, "\n### ");
		const char *at = strstr(section, item);
		cr_assert(at && (!next || at < next), "docs/paths.md does not list %s under %s",
			  builtin_path_rules[i].pattern, path_name(builtin_path_rules[i].path));
	}
	/* and nothing the code does not hold */
	unsigned listed = 0;
	for (const char *p = strstr(doc, "## The built-in rules"); p && (p = strstr(p, "\n- `")); p++)
		listed++;
	cr_assert_eq(listed, builtin_path_rule_count, "docs/paths.md lists %u rules, the code has %u", listed,
		     builtin_path_rule_count);
	free(doc);
}

Test(docs, c2c_md_lists_every_classification_rule_in_order)
{
	char *doc = read_text_file("docs/c2c.md");
	const char *rules_section = strstr(doc, "### Rules, first match wins");
	cr_assert(rules_section, "docs/c2c.md has no rules section");
	size_t n;
	const struct c2c_rule *rules = c2c_rules(&n);
	const char *at = rules_section;
	for (size_t i = 0; i < n; i++) {
		char heading[64];
		snprintf(heading, sizeof(heading), "\n### %s\n", c2c_class_name(rules[i].cls));
		const char *found = strstr(at, heading);
		cr_assert(found, "docs/c2c.md does not document rule %zu (%s) after the previous one", i,
			  c2c_class_name(rules[i].cls));
		at = found + 1;
	}
	free(doc);
}
