/*
 * term.h: what every text output needs to fit the terminal it is read on:
 * the width (--width, COLUMNS, the terminal's own), cutting a label to a
 * width (in the middle of a C++ name, so that both the namespace and the
 * function stay; at the end of anything else), colour (--color, NO_COLOR,
 * whether stdout is a terminal) and the SGR sequences of the few things
 * sigprof colours: path names, kernel frames, user frames, headings.
 *
 * Base layer: no other module's types; it prints nothing.  The report's
 * text writer and every collector's text section get the width and the
 * colour through struct view_options (view.h) and cut and colour with
 * these helpers, so that every table and stack fits the same way.
 *
 * Widths are in terminal columns: a UTF-8 sequence is one column (labels
 * are ASCII but for "µs" and the ellipsis "…" these helpers insert).
 */
#ifndef SIGPROF_TERM_H
#define SIGPROF_TERM_H

#include <stdbool.h>
#include <stddef.h>

/* The narrowest width a text output is laid out for: below it tables overflow rather than lose columns. */
#define TERM_MIN_WIDTH 40

/*
 * The width a text output fits: given (--width N, > 0), else $COLUMNS (a
 * number > 0), else the terminal's width when fd is a terminal, else 0: no
 * limit (a file or a pipe gets every column whole, as before).  A width
 * under TERM_MIN_WIDTH is raised to it.
 */
unsigned term_width(int fd, unsigned given);

/* The terminal's rows when fd is a terminal, else 0 (for "is the report longer than the screen"). */
unsigned term_rows(int fd);

/* Columns s takes: its UTF-8 characters (continuation bytes take none). */
size_t term_columns(const char *s);

/*
 * s cut to at most width columns into buf (of len bytes), with "…" where
 * text was left out: a C++ name (it has "::") loses the middle of its
 * qualifiers and template arguments and keeps its last component
 * ("std::__1::vector<…>::push_back(int const&)" -> "std::__1::ve…::push_back(int const&)"),
 * anything else its end ("very_long_c_function_n…").  s itself when it fits.
 * Returns buf (or s).
 */
const char *term_cut(const char *s, size_t width, char *buf, size_t len);

/* --color's value. */
enum term_color_mode { TERM_COLOR_AUTO, TERM_COLOR_ALWAYS, TERM_COLOR_NEVER };
/* "auto", "always", "never" (also "yes"/"no") to a mode; -EINVAL for anything else. */
int term_color_parse(const char *s, enum term_color_mode *mode);
/*
 * Whether to colour output to fd: always, never, or (auto) when fd is a
 * terminal, $NO_COLOR is unset or empty and $TERM is not "dumb".
 */
bool term_color_enabled(enum term_color_mode mode, int fd);

/* What sigprof colours, each one SGR sequence. */
enum term_paint { PAINT_PATH, PAINT_KERNEL, PAINT_USER, PAINT_HEADING, PAINT_MARK, PAINT_DIM };
/* The sequence that starts paint (when color), or "". */
const char *term_on(bool color, enum term_paint paint);
/* The sequence that ends it (when color), or "". */
const char *term_off(bool color);

#endif
