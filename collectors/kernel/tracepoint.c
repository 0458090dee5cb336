/*
 * tracepoint.c: tracefs on the record side, libtraceevent on the report
 * side (tracepoint.h).  Shared by every collector built on tracepoints
 * (sched, signal, futex).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "sigprof/kernel/format.h"
#include "sigprof/kernel/tracepoint.h"
#include "sigprof/base/util.h"

#define TRACEFS_MAGIC_NUMBER 0x74726163
#define TRACEFS_PATH "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"

static bool is_tracefs(const char *path)
{
	struct statfs st;
	return statfs(path, &st) == 0 && (unsigned long)st.f_type == TRACEFS_MAGIC_NUMBER;
}

int tracefs_find(char *buf, size_t buflen, char *err, size_t errlen)
{
	static const char *const candidates[] = { TRACEFS_PATH, DEBUGFS_TRACING };
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		if (is_tracefs(candidates[i])) {
			snprintf(buf, buflen, "%s", candidates[i]);
			return 0;
		}
	}
	if (geteuid() != 0) {
		snprintf(err, errlen, "tracefs is not mounted; as root run: mount -t tracefs nodev %s", TRACEFS_PATH);
		return -ENOENT;
	}
	if (mount("nodev", TRACEFS_PATH, "tracefs", 0, NULL) < 0 && !is_tracefs(TRACEFS_PATH)) {
		int e = errno;
		snprintf(err, errlen, "cannot mount tracefs at %s: %s", TRACEFS_PATH, strerror(e));
		return -e;
	}
	snprintf(buf, buflen, "%s", TRACEFS_PATH);
	return 0;
}

static char *read_small_file(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = xmalloc(max + 1);
	size_t len = 0;
	ssize_t n;
	while (len < max && (n = read(fd, buf + len, max - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

int tracepoint_id(const char *system, const char *name, uint64_t *id, char *reason, size_t reasonlen)
{
	char root[256], path[512];
	int err = tracefs_find(root, sizeof(root), reason, reasonlen);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, system, name);
	char *id_text = read_small_file(path, 64);
	/* system and name are the user's (-e SYSTEM:NAME): quoted, as any text a user typed in an error line */
	char tracepoint[256];
	snprintf(tracepoint, sizeof(tracepoint), "%s:%s", system, name);
	if (!id_text) {
		int e = errno;
		if (e == EACCES || e == EPERM)
			snprintf(reason, reasonlen,
				 "tracepoint %s: %s is readable by root only: run as root, or let a group read tracefs "
				 "(mount -o remount,mode=755,gid=GROUP %s)",
				 QUOTED(tracepoint), QUOTED(path), root);
		else
			snprintf(reason, reasonlen, "no tracepoint %s in this kernel (%s)", QUOTED(tracepoint), strerror(e));
		return e == ENOENT || e == ENOTDIR ? -ENOENT : -e;
	}
	char *end;
	errno = 0;
	*id = strtoull(id_text, &end, 10);
	bool bad = errno || end == id_text;
	free(id_text);
	if (bad) {
		snprintf(reason, reasonlen, "tracepoint %s: %s holds no id", QUOTED(tracepoint), QUOTED(path));
		return -EINVAL;
	}
	return 0;
}

bool tracepoint_system_exists(const char *system)
{
	char root[256], path[512], ignored[256];
	if (tracefs_find(root, sizeof(root), ignored, sizeof(ignored)) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s", root, system);
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tracepoint_add(struct event_list *events, const struct record_options *opts, const char *collector,
		   const char *system, const char *name, bool with_callchain, char *reason, size_t reasonlen)
{
	char root[256], path[512];
	uint64_t id;
	int err = tracepoint_id(system, name, &id, reason, reasonlen);
	if (err)
		return err;
	err = tracefs_find(root, sizeof(root), reason, reasonlen);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, system, name);
	char *format = read_small_file(path, 60000);
	if (!format) {
		int e = errno;
		snprintf(reason, reasonlen, "cannot read %s: %s", path, strerror(e));
		return -e;
	}
	char full[96];
	snprintf(full, sizeof(full), "%s:%s", system, name);
	struct event_spec *spec = event_list_add(events, full, collector);
	struct record_options every_hit = *opts;
	every_hit.period = 1;
	every_hit.call_graph = with_callchain ? opts->call_graph : CALL_GRAPH_NONE;
	sampling_attr_init(&spec->attr, &every_hit, PERF_TYPE_TRACEPOINT, id);
	spec->attr.sample_type |= PERF_SAMPLE_RAW;
	/*
	 * A system call's entry/exit tracepoint always sits under the same
	 * kernel frames (entry_SYSCALL_64, do_syscall_64): walking them tells
	 * nothing and costs as much as the user part.  Only the user stack is
	 * taken there.
	 */
	if (strcmp(system, "syscalls") == 0)
		spec->attr.exclude_callchain_kernel = 1;
	spec->tracepoint_format = format;
	snprintf(spec->tracepoint_system, sizeof(spec->tracepoint_system), "%s", system);
	return 0;
}

/* ---- report side ---- */

/* Whether text[0, n) starts with the literal lit; advances *at past it. */
static bool take(const char **at, const char *end, const char *lit)
{
	size_t len = strlen(lit);
	if ((size_t)(end - *at) < len || memcmp(*at, lit, len) != 0)
		return false;
	*at += len;
	return true;
}

/* One or more characters of set (digits, or a name's), then *at past them. */
static bool take_run(const char **at, const char *end, bool (*in_set)(char))
{
	const char *start = *at;
	while (*at < end && in_set(**at))
		(*at)++;
	return *at > start;
}

static bool is_digit_char(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * What a field's declaration is made of in a kernel format file ("unsigned
 * long", "const char * name", "char comm[16]", "__data_loc char[] comm"):
 * libtraceevent leaks the token it was reading on anything else (a fuzzed
 * "uns.init_array" in a declaration).
 */
static bool is_declaration_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == ' ' || c == '*' || c == '[' || c == ']';
}

/*
 * Whether the text before "print fmt:" is, line by line, what the kernel
 * writes: "name: NAME", "ID: N", "format:", then field lines
 * "\tfield:DECLARATION;\toffset:N;\tsize:N;\tsigned:N;" and blank ones.
 * libtraceevent leaks the token it was reading when a line breaks off
 * (a recording cut or damaged inside the format text), so such a text never
 * reaches it.
 */
static bool fields_well_formed(const char *text, size_t n)
{
	const char *at = text, *end = text + n;
	if (!take(&at, end, "name: ") || !take_run(&at, end, is_name_char) || !take(&at, end, "\n") ||
	    !take(&at, end, "ID: ") || !take_run(&at, end, is_digit_char) || !take(&at, end, "\n") ||
	    !take(&at, end, "format:\n"))
		return false;
	while (at < end) {
		if (take(&at, end, "\n"))
			continue;
		if (!take(&at, end, "\tfield:") || !take_run(&at, end, is_declaration_char) ||
		    !take(&at, end, ";\toffset:") || !take_run(&at, end, is_digit_char) ||
		    !take(&at, end, ";\tsize:") || !take_run(&at, end, is_digit_char) || !take(&at, end, ";"))
			return false;
		if (take(&at, end, "\tsigned:") && (!take_run(&at, end, is_digit_char) || !take(&at, end, ";")))
			return false;
		if (!take(&at, end, "\n"))
			return false;
	}
	return true;
}

/*
 * What libtraceevent is given of a format text: the text up to its "print
 * fmt:" line, then an empty print format (malloc'd, its length in *len); NULL
 * when the text holds a byte that is neither printable ASCII nor white space,
 * as no kernel's format file does, or lines that are not a format file's
 * (fields_well_formed()).  A report reads fields by name and never
 * prints an event, and libtraceevent's parser crashes on damaged texts: its
 * tokenizer returns no token for such a byte, which some of its callers hand
 * to strcmp(); its print format parser dereferences NULL for __print_flags()
 * of a name that is no field, and raises SIGFPE on a constant division by 0.
 */
static char *format_for_parser(const char *text, size_t n, size_t *len)
{
	static const char marker[] = "print fmt:", empty[] = "print fmt: \"\"\n";
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)text[i]) && !isspace((unsigned char)text[i]))
			return NULL;
	size_t keep = n;
	for (const char *p = text; (p = memmem(p, (size_t)(text + n - p), marker, sizeof(marker) - 1)); p++) {
		if (p == text || p[-1] == '\n') {
			keep = (size_t)(p - text);
			break;
		}
	}
	if (!fields_well_formed(text, keep))
		return NULL;
	char *out = xmalloc(keep + 1 + sizeof(empty));
	memcpy(out, text, keep);
	if (keep && out[keep - 1] != '\n')
		out[keep++] = '\n';
	memcpy(out + keep, empty, sizeof(empty));
	*len = keep + sizeof(empty) - 1;
	return out;
}

int tracepoint_set_add(struct tracepoint_set *set, const struct perf_event_header *rec)
{
	const struct sp_tracepoint_record *tp = (const void *)rec;
	if (rec->size < sizeof(*tp) || sizeof(*tp) + tp->format_len > rec->size)
		return -EINVAL;
	if (!set->tep) {
		set->tep = tep_alloc();
		if (!set->tep)
			return -ENOMEM;
		tep_set_flag(set->tep, TEP_NSEC_OUTPUT);
	}
	char system[sizeof(tp->system) + 1];
	memcpy(system, tp->system, sizeof(tp->system));
	system[sizeof(tp->system)] = '\0';
	size_t len;
	char *format = format_for_parser((const char *)(tp + 1), tp->format_len, &len);
	if (!format)
		return -EINVAL;
	struct tep_event *ev = NULL;
	int err = tep_parse_format(set->tep, &ev, format, len, system) != 0 || !ev ? -EINVAL : 0;
	free(format);
	if (!err)
		set->count++;
	return err;
}

void tracepoint_set_free(struct tracepoint_set *set)
{
	if (set->tep)
		tep_free(set->tep);
	memset(set, 0, sizeof(*set));
}

struct tep_event *tracepoint_of(const struct tracepoint_set *set, const struct sp_sample *s)
{
	if (!set->tep || !s->event || s->event->attr.type != PERF_TYPE_TRACEPOINT || !s->raw)
		return NULL;
	return tep_find_event(set->tep, (int)s->event->attr.config);
}

const char *tracepoint_name(const struct tep_event *ev, char *buf, size_t buflen)
{
	snprintf(buf, buflen, "%s:%s", ev->system, ev->name);
	return buf;
}

static struct tep_format_field *field_in_raw(const struct tep_event *ev, const struct sp_sample *s,
					     const char *name)
{
	struct tep_format_field *f = tep_find_field((struct tep_event *)ev, name);
	if (!f)
		f = tep_find_common_field((struct tep_event *)ev, name);
	if (!f || f->offset < 0 || f->size <= 0 || (uint64_t)f->offset + (uint64_t)f->size > s->raw_size)
		return NULL;
	return f;
}

bool tp_field_u64(const struct tep_event *ev, const struct sp_sample *s, const char *field, uint64_t *value)
{
	struct tep_format_field *f = field_in_raw(ev, s, field);
	if (!f || f->size > 8)
		return false;
	unsigned long long v = 0;
	if (tep_read_number_field(f, s->raw, &v) != 0)
		return false;
	*value = v;
	return true;
}

bool tp_field_i64(const struct tep_event *ev, const struct sp_sample *s, const char *field, int64_t *value)
{
	uint64_t v;
	struct tep_format_field *f = field_in_raw(ev, s, field);
	if (!f || !tp_field_u64(ev, s, field, &v))
		return false;
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
		unsigned shift = 64 - 8 * (unsigned)f->size;
		*value = (int64_t)(v << shift) >> shift;
	} else {
		*value = (int64_t)v;
	}
	return true;
}

/* Whether a field holds characters: a char array (comm) or a string of its own length (__data_loc char[]). */
static bool field_is_text(const struct tep_format_field *f)
{
	return (f->flags & TEP_FIELD_IS_STRING) ||
	       ((f->flags & TEP_FIELD_IS_ARRAY) && f->elementsize == 1 && !(f->flags & TEP_FIELD_IS_DYNAMIC));
}

bool tp_field_str(const struct tep_event *ev, const struct sp_sample *s, const char *field, char *buf,
		  size_t buflen)
{
	struct tep_format_field *f = field_in_raw(ev, s, field);
	if (!f || !buflen || !field_is_text(f))
		return false;
	uint64_t at = (uint64_t)f->offset, size = (uint64_t)f->size;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		/*
		 * __data_loc: a 32-bit word, the string's offset in the raw data
		 * (low 16 bits) and its length (high 16 bits); __rel_loc counts
		 * the offset from the end of that word.
		 */
		uint32_t loc;
		if (f->size != sizeof(loc))
			return false;
		memcpy(&loc, (const char *)s->raw + f->offset, sizeof(loc));
		at = (loc & 0xffff) + ((f->flags & TEP_FIELD_IS_RELATIVE) ? (uint64_t)f->offset + sizeof(loc) : 0);
		size = loc >> 16;
		if (at > s->raw_size || size > s->raw_size - at)
			return false;
	}
	size_t n = size < buflen - 1 ? (size_t)size : buflen - 1;
	memcpy(buf, (const char *)s->raw + at, n);
	buf[n] = '\0';
	buf[strnlen(buf, n)] = '\0';
	return true;
}

bool tp_print(const struct tracepoint_set *set, const struct sp_sample *s, char *buf, size_t buflen)
{
	const struct tep_event *ev = tracepoint_of(set, s);
	if (!buflen || !ev)
		return false;
	size_t used = 0;
	buf[0] = '\0';
	for (const struct tep_format_field *f = ev->format.fields; f && used < buflen; f = f->next) {
		char value[256];
		bool is_array = (f->flags & TEP_FIELD_IS_ARRAY) != 0;
		uint64_t u;
		if (field_is_text(f)) {
			if (!tp_field_str(ev, s, f->name, value, sizeof(value)))
				continue;
		} else if (is_array || !tp_field_u64(ev, s, f->name, &u)) {
			continue;
		} else if (f->flags & TEP_FIELD_IS_SIGNED) {
			int64_t v;
			tp_field_i64(ev, s, f->name, &v);
			snprintf(value, sizeof(value), "%lld", (long long)v);
		} else {
			/* unsigned: addresses, flags and masks read best in hex, as the kernel prints them */
			snprintf(value, sizeof(value), f->size == 8 ? "0x%llx" : "%llu", (unsigned long long)u);
		}
		int n = snprintf(buf + used, buflen - used, "%s%s=%s", used ? " " : "", f->name, value);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return true;
}

const char *tp_field_name(const struct tep_event *ev, size_t i, bool *is_string, bool *is_array)
{
	const struct tep_format_field *f = ev->format.fields;
	for (; f && i; i--)
		f = f->next;
	if (!f)
		return NULL;
	*is_array = (f->flags & TEP_FIELD_IS_ARRAY) != 0;
	*is_string = field_is_text(f);
	return f->name;
}
