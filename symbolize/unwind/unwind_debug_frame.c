/*
 * unwind_debug_frame.c: stepping a frame with CFI that libdw reads
 * (unwind_internal.h): code whose CFI is only in .debug_frame, and every
 * frame of a file whose .eh_frame has no .eh_frame_hdr search table; the
 * check of that CFI before libdw runs it, and the evaluation of its rules.
 *
 * The libunwind that distributions build for x86-64 leaves out its
 * .debug_frame search (dwarf_find_debug_frame, CONFIG_DEBUG_FRAME), and its
 * table search parses every FDE as .eh_frame.  So code whose CFI
 * is only in .debug_frame (built with -fno-asynchronous-unwind-tables, or
 * stripped with the CFI left in its separate debug file) is stepped here:
 * libdw reads the CFI (dwarf_getcfi, dwarf_cfi_addrframe), its CFA and
 * register rules come as small DWARF expressions that libdw_step()
 * evaluates over the walk's registers and memory, and the walk then goes
 * on with libunwind from the caller's registers.  The CFI is checked before
 * libdw runs it (cfi_sane: a corrupt register number would have libdw
 * allocate gigabytes), and a step must move the CFA up and not return to the
 * same frame, so a lying CFI ends the walk rather than looping.  A
 * file that has both (a program whose crt files brought .eh_frame while its
 * own code has only .debug_frame) is searched in .eh_frame first.
 *
 * .eh_frame without .eh_frame_hdr: libunwind finds an FDE only through the
 * header's binary search table (UNW_INFO_FORMAT_REMOTE_TABLE), which
 * Debian's gcc -static does not write.  libdw reads such an .eh_frame
 * whole (dwarf_getcfi_elf indexes its FDEs on first use), so the same
 * step serves it: simpler and as right as building the table ourselves,
 * which libunwind could only read through the process's memory, where the
 * table never was.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/util.h"
#include "unwind_internal.h"

/*
 * Limits on what a .debug_frame's call frame instructions may ask of libdw.
 * libdw grows a frame's register array up to the highest register number an
 * instruction names (DW_CFA_same_value r155492561: gigabytes, copied again
 * at each DW_CFA_remember_state), and keeps one copy of it per remembered
 * state, so one corrupt entry could take the memory and the minutes of a
 * whole report.  x86-64 CFI names registers below 130 (the AVX-512 mask
 * registers are 118-125) and compilers nest remembered states a few deep.
 */
#define CFI_MAX_REGISTER 255
#define CFI_MAX_REMEMBERED 64

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *value)
{
	*value = 0;
	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t byte = *(*p)++;
		if (shift < 64)
			*value |= (uint64_t)(byte & 0x7f) << shift;
		else if (byte & 0x7f)
			*value = UINT64_MAX; /* past 64 bits: out of every limit */
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

/*
 * Whether the instructions in [p, end) stay within the limits above.  An
 * opcode libdw does not know, or an operand cut short, ends the scan: libdw
 * stops there too (an error for the rows after it).
 */
static bool cfi_instructions_sane(const uint8_t *p, const uint8_t *end)
{
	int remembered = 0;
	uint64_t reg, operand;
	while (p < end) {
		uint8_t op = *p++;
		if ((op & 0xc0) == DW_CFA_advance_loc || (op & 0xc0) == DW_CFA_restore)
			continue; /* a register in the low 6 bits, below 64 */
		if ((op & 0xc0) == DW_CFA_offset) {
			if (!read_uleb(&p, end, &operand))
				return true;
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			p += (size_t)(end - p) < 8 ? (size_t)(end - p) : 8;
			break;
		case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4:
		case DW_CFA_MIPS_advance_loc8: {
			size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 :
				   op == DW_CFA_advance_loc4 ? 4 : 8;
			p += (size_t)(end - p) < n ? (size_t)(end - p) : n;
			break;
		}
		case DW_CFA_remember_state:
			if (++remembered > CFI_MAX_REMEMBERED)
				return false;
			break;
		case DW_CFA_restore_state:
			remembered -= remembered > 0;
			break;
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
			if (!read_uleb(&p, end, &operand))
				return true;
			break;
		case DW_CFA_def_cfa_expression:
			if (!read_uleb(&p, end, &operand) || operand > (uint64_t)(end - p))
				return true;
			p += operand;
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
		case DW_CFA_offset_extended: case DW_CFA_register: case DW_CFA_def_cfa: case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_expression: case DW_CFA_val_expression:
			if (!read_uleb(&p, end, &reg))
				return true;
			if (reg > CFI_MAX_REGISTER)
				return false;
			if (op == DW_CFA_restore_extended || op == DW_CFA_undefined || op == DW_CFA_same_value ||
			    op == DW_CFA_def_cfa_register)
				break;
			if (!read_uleb(&p, end, &operand))
				return true;
			if (op == DW_CFA_register && operand > CFI_MAX_REGISTER)
				return false;
			if (op == DW_CFA_expression || op == DW_CFA_val_expression) {
				if (operand > (uint64_t)(end - p))
					return true;
				p += operand;
			}
			break;
		default:
			return true;
		}
	}
	return true;
}

/*
 * Where an .eh_frame FDE's call frame instructions begin: past its initial
 * location and address range, in the pointer encoding its CIE's 'R' names,
 * and past its augmentation data when the CIE's augmentation begins with
 * 'z'.  NULL when the CIE cannot be read or names what no compiler writes.
 */
static const uint8_t *eh_frame_fde_instructions(const unsigned char *ident, Elf_Data *data,
						const Dwarf_CFI_Entry *fde)
{
	Dwarf_Off next;
	Dwarf_CFI_Entry cie;
	if (dwarf_next_cfi(ident, data, true, fde->fde.CIE_pointer, &next, &cie) != 0 || !dwarf_cfi_cie_p(&cie))
		return NULL;
	const char *augmentation = cie.cie.augmentation;
	const uint8_t *aug = cie.cie.augmentation_data, *aug_end = aug + cie.cie.augmentation_data_size;
	unsigned char encoding = 0x00; /* DW_EH_PE_absptr */
	bool z = augmentation[0] == 'z';
	for (const char *a = augmentation + z; z && *a; a++) {
		if (*a == 'R' && aug < aug_end) {
			encoding = *aug++;
		} else if (*a == 'L' && aug < aug_end) {
			aug++;
		} else if (*a == 'P' && aug < aug_end) {
			size_t size = encoded_size(*aug);
			if (!size || (size_t)(aug_end - aug) < 1 + size)
				return NULL;
			aug += 1 + size;
		} else if (*a != 'S' && *a != 'B') {
			return NULL;
		}
	}
	if (!z && augmentation[0])
		return NULL;
	size_t size = encoded_size(encoding);
	const uint8_t *p = fde->fde.start;
	if (!size || (size_t)(fde->fde.end - p) < 2 * size)
		return NULL;
	p += 2 * size;
	uint64_t length = 0;
	if (z && (!read_uleb(&p, fde->fde.end, &length) || length > (uint64_t)(fde->fde.end - p)))
		return NULL;
	return p + length;
}

/*
 * Whether every CIE and FDE of the section (.debug_frame, as
 * dwarf_begin_elf() read it, decompressed; or .eh_frame) is sane.
 */
static bool cfi_sane(Elf *elf, bool eh_frame)
{
	Elf_Scn *scn = find_section_named(elf, eh_frame ? ".eh_frame" : ".debug_frame");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!data || !ident)
		return false;
	Dwarf_Off offset = 0, next;
	Dwarf_CFI_Entry entry;
	int ret;
	while ((ret = dwarf_next_cfi(ident, data, eh_frame, offset, &next, &entry)) == 0) {
		const uint8_t *p, *end;
		if (dwarf_cfi_cie_p(&entry)) {
			p = entry.cie.initial_instructions;
			end = entry.cie.initial_instructions_end;
		} else if (eh_frame) {
			end = entry.fde.end;
			if ((p = eh_frame_fde_instructions(ident, data, &entry)) == NULL)
				return false;
		} else {
			/* past the FDE's initial location and address range (8-byte addresses) */
			end = entry.fde.end;
			p = end - entry.fde.start > 16 ? entry.fde.start + 16 : end;
		}
		if (!cfi_instructions_sane(p, end))
			return false;
		if (next <= offset)
			break;
		offset = next;
	}
	return true;
}

/* The module's .debug_frame CFI, opened on first use; NULL when it has none or it cannot be read. */
static Dwarf_CFI *module_cfi(struct module *m)
{
	if (m->debug_frame_tried || !m->debug_frame_path)
		return m->cfi;
	m->debug_frame_tried = true;
	const unsigned char *image = m->image;
	size_t size = m->size;
	if (!m->debug_frame_own) {
		if (map_file(m->debug_frame_path, &m->debug_image, &m->debug_size) != 0)
			return NULL;
		image = m->debug_image;
		size = m->debug_size;
	}
	m->debug_elf = elf_memory((char *)image, size);
	if (m->debug_elf)
		m->debug_dwarf = dwarf_begin_elf(m->debug_elf, DWARF_C_READ, NULL);
	if (m->debug_dwarf)
		m->cfi = dwarf_getcfi(m->debug_dwarf);
	if (m->cfi && !cfi_sane(m->debug_elf, false)) {
		m->cfi = NULL; /* freed with the Dwarf */
		m->debug_frame_corrupt = true;
	}
	return m->cfi;
}

/* The module's .eh_frame CFI as libdw reads it, opened on first use; NULL when it has none or it cannot be read. */
static Dwarf_CFI *module_eh_frame_cfi(struct module *m)
{
	if (m->eh_frame_tried || !m->has_eh_frame || m->error)
		return m->eh_frame_cfi;
	m->eh_frame_tried = true;
	m->eh_frame_elf = elf_memory((char *)m->image, m->size);
	if (!m->eh_frame_elf)
		return NULL;
	if (!cfi_sane(m->eh_frame_elf, true)) {
		m->eh_frame_corrupt = true;
		return NULL;
	}
	m->eh_frame_cfi = dwarf_getcfi_elf(m->eh_frame_elf);
	return m->eh_frame_cfi;
}

bool eh_frame_covers(struct module *m, uint64_t vaddr)
{
	Dwarf_CFI *cfi = module_eh_frame_cfi(m);
	Dwarf_Frame *frame = NULL;
	bool covered = cfi && dwarf_cfi_addrframe(cfi, vaddr, &frame) == 0;
	free(frame);
	return covered;
}

void module_cfi_free(struct module *m)
{
	if (m->eh_frame_cfi)
		dwarf_cfi_end(m->eh_frame_cfi);
	if (m->eh_frame_elf)
		elf_end(m->eh_frame_elf);
	if (m->debug_dwarf)
		dwarf_end(m->debug_dwarf); /* frees the CFI */
	if (m->debug_elf)
		elf_end(m->debug_elf);
}

/*
 * Evaluate a CFA or register rule as libdw gives it: a DWARF expression
 * over the frame's registers (DW_OP_bregN, DW_OP_call_frame_cfa, ...).
 * *is_value: the result is the register's value (DW_OP_stack_value, a
 * DW_OP_regN location); otherwise it is the address the value is saved at.
 * The operations are those compilers and assemblers put in CFI; any other
 * gives false.
 */
static bool eval_cfi_expression(struct walk *w, const struct frame_registers *regs, uint64_t cfa,
				const Dwarf_Op *ops, size_t nops, uint64_t *result, bool *is_value)
{
	uint64_t stack[16];
	size_t depth = 0;
	*is_value = false;
#define PUSH(v)                                          \
	do {                                             \
		if (depth == ARRAY_SIZE(stack))          \
			return false;                    \
		stack[depth++] = (v);                    \
	} while (0)
#define NEED(n)                  \
	do {                     \
		if (depth < (n)) \
			return false; \
	} while (0)
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t atom = op->atom;
		unsigned reg;
		uint64_t a;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH(atom - DW_OP_lit0);
			continue;
		}
		/* a DW_OP_bregx or DW_OP_regx register number is a ULEB128: checked whole, not cut to unsigned */
		if ((atom >= DW_OP_breg0 && atom <= DW_OP_breg31) || atom == DW_OP_bregx) {
			if (atom == DW_OP_bregx && op->number >= UNW_REGISTER_COUNT)
				return false;
			reg = atom == DW_OP_bregx ? (unsigned)op->number : (unsigned)(atom - DW_OP_breg0);
			if (reg >= UNW_REGISTER_COUNT || !regs->have[reg])
				return false;
			PUSH(regs->value[reg] + (atom == DW_OP_bregx ? op->number2 : op->number));
			continue;
		}
		if ((atom >= DW_OP_reg0 && atom <= DW_OP_reg31) || atom == DW_OP_regx) {
			if (atom == DW_OP_regx && op->number >= UNW_REGISTER_COUNT)
				return false;
			reg = atom == DW_OP_regx ? (unsigned)op->number : (unsigned)(atom - DW_OP_reg0);
			if (reg >= UNW_REGISTER_COUNT || !regs->have[reg] || i + 1 != nops)
				return false;
			*result = regs->value[reg];
			*is_value = true;
			return true;
		}
		switch (atom) {
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_call_frame_cfa:
			PUSH(cfa);
			break;
		case DW_OP_dup:
			NEED(1);
			a = stack[depth - 1];
			PUSH(a);
			break;
		case DW_OP_over:
			NEED(2);
			a = stack[depth - 2];
			PUSH(a);
			break;
		case DW_OP_drop:
			NEED(1);
			depth--;
			break;
		case DW_OP_swap:
			NEED(2);
			a = stack[depth - 1];
			stack[depth - 1] = stack[depth - 2];
			stack[depth - 2] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			if (!read_memory(w, stack[depth - 1], &stack[depth - 1], sizeof(stack[0])))
				return false;
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			stack[depth - 1] += op->number;
			break;
		case DW_OP_neg:
			NEED(1);
			stack[depth - 1] = -stack[depth - 1];
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and:
		case DW_OP_or: case DW_OP_xor: case DW_OP_shl: case DW_OP_shr:
			NEED(2);
			a = stack[--depth];
			switch (atom) {
			case DW_OP_plus: stack[depth - 1] += a; break;
			case DW_OP_minus: stack[depth - 1] -= a; break;
			case DW_OP_mul: stack[depth - 1] *= a; break;
			case DW_OP_and: stack[depth - 1] &= a; break;
			case DW_OP_or: stack[depth - 1] |= a; break;
			case DW_OP_xor: stack[depth - 1] ^= a; break;
			case DW_OP_shl: stack[depth - 1] = a < 64 ? stack[depth - 1] << a : 0; break;
			default: stack[depth - 1] = a < 64 ? stack[depth - 1] >> a : 0; break;
			}
			break;
		case DW_OP_stack_value:
			if (i + 1 != nops)
				return false;
			*is_value = true;
			break;
		default:
			return false;
		}
	}
#undef PUSH
#undef NEED
	if (depth == 0)
		return false;
	*result = stack[depth - 1];
	return true;
}

/*
 * One step with the module's CFI as libdw reads it (.eh_frame when the
 * file has no search table, then .debug_frame): from the registers of the
 * frame at ip (exact: the IP itself is looked up, else the call before it)
 * to its caller's, written into the walk.  The caller's SP is the CFA, its
 * IP the return address column; registers whose rule is undefined are
 * unknown to the caller, those without a rule keep their value (libdw
 * applies the x86-64 ABI's same-value default to the callee-saved ones).
 */
enum cfi_step libdw_step(struct walk *w, struct module *m, uint64_t bias, uint64_t ip, bool exact,
			 const struct frame_registers *regs)
{
	Dwarf_CFI *eh_frame = m->has_table ? NULL : module_eh_frame_cfi(m), *debug_frame = NULL;
	Dwarf_Frame *frame = NULL;
	uint64_t vaddr = (exact ? ip : ip - 1) - bias;
	bool found = eh_frame && dwarf_cfi_addrframe(eh_frame, vaddr, &frame) == 0;
	if (!found) {
		free(frame);
		frame = NULL;
		debug_frame = module_cfi(m);
		found = debug_frame && dwarf_cfi_addrframe(debug_frame, vaddr, &frame) == 0;
	}
	if (!found) {
		free(frame);
		if (stack_begins_at(w, m, vaddr)) /* the address looked up, as libunwind's path checks it */
			return CFI_OUTERMOST;
		if (m->eh_frame_corrupt || m->debug_frame_corrupt)
			walk_fail(w, UNWIND_BAD_FRAME, "corrupt %s in %s", m->eh_frame_corrupt ? ".eh_frame" : ".debug_frame",
				  m->name);
		else
			walk_fail(w, UNWIND_NO_UNWIND_INFO, "no unwind info for %s", m->name);
		return CFI_FAILED;
	}
	const char *section = debug_frame ? ".debug_frame" : ".eh_frame"; /* for the reasons */
	enum cfi_step step = CFI_FAILED;
	struct frame_registers caller = { 0 };
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	uint64_t cfa, value;
	bool is_value, ra_from_stack = false;
	int ra = dwarf_frame_info(frame, NULL, NULL, NULL);
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 ||
	    !eval_cfi_expression(w, regs, 0, ops, nops, &cfa, &is_value) || ra < 0 || ra >= UNW_REGISTER_COUNT) {
		walk_fail(w, UNWIND_BAD_FRAME, "unsupported %s rule in %s", section, m->name);
		goto out;
	}
	for (int reg = 0; reg < UNW_REGISTER_COUNT; reg++) {
		if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops) != 0) {
			walk_fail(w, UNWIND_BAD_FRAME, "unsupported %s rule in %s", section, m->name);
			goto out;
		}
		if (nops == 0 && ops == NULL) { /* same value */
			caller.value[reg] = regs->value[reg];
			caller.have[reg] = regs->have[reg];
			continue;
		}
		if (nops == 0) /* undefined */
			continue;
		if (!eval_cfi_expression(w, regs, cfa, ops, nops, &value, &is_value)) {
			if (w->failure == UNWIND_COMPLETE)
				walk_fail(w, UNWIND_BAD_FRAME, "unsupported %s rule in %s", section, m->name);
			goto out;
		}
		if (!is_value && !read_memory(w, value, &value, sizeof(value)))
			goto out;
		if (reg == ra)
			ra_from_stack = !is_value;
		caller.value[reg] = value;
		caller.have[reg] = true;
	}
	if (!caller.have[ra] || caller.value[ra] == 0) {
		step = CFI_OUTERMOST; /* an undefined return address marks the outermost frame */
		goto out;
	}
	caller.value[UNW_X86_64_RIP] = caller.value[ra];
	caller.have[UNW_X86_64_RIP] = true;
	caller.value[UNW_X86_64_RSP] = cfa;
	caller.have[UNW_X86_64_RSP] = true;
	if (cfa <= regs->value[UNW_X86_64_RSP]) {
		walk_fail(w, UNWIND_BAD_FRAME, "the stack does not grow up through %s", m->name);
		goto out;
	}
	/*
	 * A return address that is the frame's own IP without coming from the
	 * stack (a same-value or register rule for it) would step to the same
	 * frame again, one CFA higher each time, until the walk is too deep.
	 * A recursive call's return address repeats too, but is read from the
	 * stack.
	 */
	if (caller.value[ra] == ip && !ra_from_stack) {
		walk_fail(w, UNWIND_BAD_FRAME, "a %s rule in %s returns to the same frame", section, m->name);
		goto out;
	}
	memcpy(w->regs, caller.value, sizeof(w->regs));
	memcpy(w->have_reg, caller.have, sizeof(w->have_reg));
	w->regs_from_sample = false;
	step = CFI_STEPPED;
out:
	free(frame);
	return step;
}
