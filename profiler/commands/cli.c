/*
 * cli.c: the parsing of the commands' option tables with its error lines,
 * the options several commands share, and the pager (cli.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sigprof/commands/cli.h"
#include "sigprof/model/datafile.h"
#include "sigprof/model/filter.h"
#include "sigprof/model/paths.h"
#include "sigprof/base/options.h"
#include "sigprof/base/term.h"
#include "sigprof/base/util.h"

int cli_parse_options(const struct option_table *t, int argc, char **argv, void *args,
		      struct options_parsed *parsed)
{
	const char *name = t->command;
	if (strncmp(name, "sigprof ", 8) == 0)
		name += 8;
	switch (options_parse(t, argc, argv, args, parsed)) {
	case OPTIONS_PARSED:
		return 0;
	case OPTIONS_HELP_ASKED:
		options_usage(t, stdout);
		return 1;
	case OPTIONS_UNKNOWN:
		sp_error("%s: %s", name, parsed->why);
		fprintf(stderr, "Try '%s --help'.\n", t->command);
		return -1;
	case OPTIONS_BAD_VALUE:
		break;
	}
	return sp_error("%s: %s", name, parsed->why);
}

FILE *pager_begin(struct pager *pg, bool enabled)
{
	memset(pg, 0, sizeof(*pg));
	pg->out = stdout;
	if (!enabled || !isatty(STDOUT_FILENO))
		return pg->out;
	FILE *mem = open_memstream(&pg->buf, &pg->len);
	if (mem)
		pg->out = mem;
	return pg->out;
}

/* Rows the text takes on a screen width columns wide (a long line wraps). */
static size_t screen_rows(const char *text, size_t len, unsigned width)
{
	size_t rows = 0, col = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n') {
			rows += 1 + (width && col ? (col - 1) / width : 0);
			col = 0;
		} else if ((text[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	return rows + (col > 0);
}

static int write_all(FILE *out, const char *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, out) != len)
		return -EIO;
	return fflush(out) == 0 ? 0 : -errno;
}

int pager_end(struct pager *pg)
{
	if (pg->out == stdout)
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -EIO;
	if (fclose(pg->out) != 0) {
		free(pg->buf);
		return -EIO;
	}
	pg->out = NULL;
	const char *pager = getenv("PAGER");
	if (!pager)
		pager = "less -FRX";
	unsigned rows = term_rows(STDOUT_FILENO);
	int ret;
	if (!*pager || strcmp(pager, "cat") == 0 || !rows ||
	    screen_rows(pg->buf, pg->len, term_width(STDOUT_FILENO, 0)) < rows) {
		ret = write_all(stdout, pg->buf, pg->len);
	} else {
		setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRX", 1);
		fflush(stdout);
		FILE *p = popen(pager, "w");
		if (!p) {
			ret = write_all(stdout, pg->buf, pg->len);
		} else {
			/* quitting the pager early closes the pipe: that is no error of ours */
			void (*old)(int) = signal(SIGPIPE, SIG_IGN);
			write_all(p, pg->buf, pg->len);
			pclose(p);
			signal(SIGPIPE, old);
			ret = 0;
		}
	}
	free(pg->buf);
	pg->buf = NULL;
	return ret;
}

int cli_color_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	enum term_color_mode mode;
	if (term_color_parse(arg, &mode) < 0) {
		snprintf(err, errlen, "--color %s: expected auto, always or never", QUOTED(arg));
		return -1;
	}
	*(int *)field = (int)mode;
	return 0;
}

/* "--path-rule: WHY" from a loader's err. */
static int named_failure(const struct option_spec *s, const char *why, char *err, size_t errlen)
{
	char name[80];
	snprintf(err, errlen, "%s: %s", option_display_name(s, name, sizeof(name)), why);
	return -1;
}

int cli_path_rule_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	char why[512];
	if (path_rules_add(*(struct path_rules **)field, arg, why, sizeof(why)) < 0)
		return named_failure(s, why, err, errlen);
	return 0;
}

int cli_path_rules_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	char why[512];
	if (path_rules_load(*(struct path_rules **)field, arg, why, sizeof(why)) < 0)
		return named_failure(s, why, err, errlen);
	return 0;
}

int cli_filter_ids_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	return filter_add_pids(field, arg, s->value != 0, err, errlen) < 0 ? -1 : 0;
}

int cli_filter_names_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	return filter_add_names(field, arg, s->value != 0, err, errlen) < 0 ? -1 : 0;
}

int cli_filter_time_option(const struct option_spec *s, void *field, const char *arg, char *err, size_t errlen)
{
	(void)s;
	return filter_set_time(field, arg, err, errlen) < 0 ? -1 : 0;
}

bool cli_filter_given(const struct option_table *t, const struct options_parsed *parsed)
{
	for (size_t i = 0; i < t->count; i++) {
		option_parser p = t->specs[i].parse;
		if ((parsed->given >> i & 1) &&
		    (p == cli_filter_ids_option || p == cli_filter_names_option || p == cli_filter_time_option))
			return true;
	}
	return false;
}
