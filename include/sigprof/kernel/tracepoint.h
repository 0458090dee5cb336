/*
 * tracepoint.h: tracepoints, from tracefs at record time to decoded fields
 * at report time.
 *
 * Record side: tracefs is found (mounted at /sys/kernel/tracing when it is
 * not and we are root), a tracepoint's id and `format` file are read, and
 * an event spec is built that samples every hit with its raw data.  The
 * format text travels in the data file (a TRACEPOINT record), so a report
 * decodes fields without tracefs, on another machine.
 *
 * Report side: the formats are parsed with libtraceevent into one
 * tep_handle; tp_field_*() read named fields of a sample's raw data.
 */
#ifndef SIGPROF_TRACEPOINT_H
#define SIGPROF_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/kernel/perf.h"
#include "sigprof/kernel/sample.h"

/* The tracefs mount point into buf; mounts it when root.  0, or -errno with what to do in err. */
int tracefs_find(char *buf, size_t buflen, char *err, size_t errlen);

/*
 * The perf config (tracefs id) of SYSTEM:NAME.  0; -ENOENT (and the reason)
 * when this kernel has no such tracepoint; -EACCES when tracefs is root's.
 */
int tracepoint_id(const char *system, const char *name, uint64_t *id, char *reason, size_t reasonlen);

/* Whether tracefs (found or mounted) has the tracepoint system SYSTEM (a directory under events/). */
bool tracepoint_system_exists(const char *system);

/*
 * Append an event spec for SYSTEM:NAME that records every hit (period 1)
 * with its raw fields, and its callchain when with_callchain.  -ENOENT
 * (and the reason) when this kernel has no such tracepoint.
 */
int tracepoint_add(struct event_list *events, const struct record_options *opts, const char *collector,
		   const char *system, const char *name, bool with_callchain, char *reason, size_t reasonlen);

/* ---- report side ---- */
struct tep_handle;
struct tep_event;
struct tep_format_field;

struct tracepoint_set {
	struct tep_handle *tep;
	unsigned count;
};

/* Parse the format of a TRACEPOINT record; 0 or -EINVAL. */
int tracepoint_set_add(struct tracepoint_set *set, const struct perf_event_header *rec);
void tracepoint_set_free(struct tracepoint_set *set);
/* The tracepoint a sample's raw data belongs to (by its common_type), or NULL. */
struct tep_event *tracepoint_of(const struct tracepoint_set *set, const struct sp_sample *s);
/* "system:name" of a tep_event, into buf. */
const char *tracepoint_name(const struct tep_event *ev, char *buf, size_t buflen);
/* A field's value as an integer (sign-extended per its format); false when absent or out of the raw data. */
bool tp_field_i64(const struct tep_event *ev, const struct sp_sample *s, const char *field, int64_t *value);
bool tp_field_u64(const struct tep_event *ev, const struct sp_sample *s, const char *field, uint64_t *value);
/*
 * A sample's fields (not the common_ ones) as "name=value" separated by
 * spaces, into buf (cut to fit): signed numbers in decimal, unsigned ones
 * in decimal or, when 8 bytes wide (addresses, masks), in hex, character
 * arrays as text.  Not the event's print format: the report never gives
 * libtraceevent a print format to parse (tracepoint.c).  False when s is
 * no tracepoint sample.
 */
bool tp_print(const struct tracepoint_set *set, const struct sp_sample *s, char *buf, size_t buflen);
/*
 * The name of the i-th field of ev that is not a common_ field, or NULL
 * past the last; *is_string says whether it holds characters (read it with
 * tp_field_str()) rather than a number (tp_field_i64()); arrays of other
 * types are skipped (*is_array true).
 */
const char *tp_field_name(const struct tep_event *ev, size_t i, bool *is_string, bool *is_array);
/* A text field, a char array (comm) or a __data_loc string (filename), into buf, NUL-terminated. */
bool tp_field_str(const struct tep_event *ev, const struct sp_sample *s, const char *field, char *buf,
		  size_t buflen);

#endif
