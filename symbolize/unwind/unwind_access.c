/*
 * unwind_access.c: what a walk can read of the sampled thread, and the
 * callbacks through which libunwind reads it (unwind_internal.h).
 *
 * libunwind walks a stack through four callbacks, and this file answers
 * them from the recording alone:
 *   - find_proc_info: the IP's executable mapping names a file; that file's
 *     .eh_frame_hdr binary search table, described to libunwind as a
 *     UNW_INFO_FORMAT_REMOTE_TABLE at the address where the process had it,
 *     is searched by libunwind's own dwarf_search_unwind_table (as perf's
 *     util/unwind-libunwind-local.c does);
 *   - access_mem: from the stack copy when the address is in [sp, sp +
 *     copied bytes), else from the bytes of a mapped file (the table, the
 *     FDEs and CIEs, code), else a failure;
 *   - access_reg: the sample's registers, renumbered from perf's order to
 *     libunwind's;
 *   - everything else (fp registers, resume, names) is refused: sigprof
 *     names frames itself.
 *
 * An accessor that cannot answer during a step records why (walk_fail) and
 * the walker (unwind.c) stops there.
 */
#include <errno.h>
#include <libunwind.h>
#include <string.h>

#include "sigprof/base/util.h"
#include "unwind_internal.h"

/* libunwind exports its table search but does not declare it (perf declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi, int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/* Read process memory as the recording knows it; false (and, inside a step, a failure) when it does not. */
bool read_memory(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	if (addr >= w->stack_base && addr - w->stack_base <= w->stack_bytes &&
	    w->stack_bytes - (addr - w->stack_base) >= len) {
		memcpy(buf, w->stack + (addr - w->stack_base), len);
		if (w->log)
			memo_log_stack(w->log, addr - w->stack_base, buf, len);
		return true;
	}
	if (read_from_views(w, addr, buf, len))
		return true;
	const struct mapping *map = proc_table_find(w->u->procs, w->pid, addr);
	if (map && dso_has_file(map->dso) && module_view_of(w, map, addr))
		return read_from_views(w, addr, buf, len);
	if (addr >= w->stack_base && addr - w->stack_base < STACK_REACH)
		walk_fail(w, UNWIND_STACK_END, "stack copy ends at %llu bytes", (unsigned long long)w->stack_size);
	else if (w->other_stack && addr >= w->other_stack && addr - w->other_stack < STACK_REACH)
		walk_fail(w, UNWIND_SIGNAL_STACK,
			  "handler on an alternate signal stack: the interrupted code's stack is not in the copy");
	else
		walk_fail(w, UNWIND_BAD_MEMORY, "cannot read 0x%llx", (unsigned long long)addr);
	return false;
}

/* ---- libunwind's accessors ---- */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	struct walk *w = arg;
	const struct mapping *map = proc_table_find_code(w->u->procs, w->pid, ip);
	if (!map) {
		walk_fail(w, UNWIND_NO_MAPPING, "no mapping for 0x%llx", (unsigned long long)ip);
		return -UNW_ENOINFO;
	}
	struct module *m = module_of(w->u, map->dso);
	struct module_view *v = module_view_of(w, map, ip);
	if (!v) {
		if (m->error && m->error != -ENOEXEC && dso_has_file(map->dso))
			walk_fail(w, UNWIND_NO_FILE, "cannot read %s: %s", map->dso->name,
				  m->error == -ESTALE ? "another build than the recording's" : strerror(-m->error));
		else
			walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
		return -UNW_ENOINFO;
	}
	if (!m->has_table) {
		walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
		return -UNW_ENOINFO;
	}
	unw_dyn_info_t di;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = map->start;
	di.end_ip = map->end;
	di.u.rti.segbase = m->table_header + v->bias;
	di.u.rti.table_data = m->table + v->bias;
	di.u.rti.table_len = m->fde_count * 8 / sizeof(unw_word_t); /* in words; each entry is two int32 */
	/* the search reads memory, which may reuse v's slot for another module: keep the bias */
	uint64_t bias = v->bias;
	int ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, w);
	if (ret < 0 && w->failure == UNWIND_COMPLETE) {
		w->outermost = w->record_failures && stack_begins_at(w, m, ip - bias);
		walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
	}
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* libunwind frees the DWARF unwind info it allocated itself; nothing of ours to release. */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO; /* no JIT registrations: the recording has no copy of the process's heap */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	if (write)
		return -UNW_EREADONLYREG;
	return read_memory(arg, addr, valp, sizeof(*valp)) ? 0 : -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t regnum, unw_word_t *valp, int write, void *arg)
{
	struct walk *w = arg;
	if (write)
		return -UNW_EREADONLYREG;
	if (regnum < 0 || regnum >= UNW_REGISTER_COUNT || !w->have_reg[regnum])
		return -UNW_EBADREG;
	*valp = w->regs[regnum];
	if (w->log && w->regs_from_sample)
		w->log->regs_read |= 1u << regnum;
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t num, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *bufp, size_t buf_len, unw_word_t *offp,
			 void *arg)
{
	return -UNW_EINVAL;
}

const unw_accessors_t walk_accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};
